/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective engine (ne_coll) over emulated NICs on a switch model (ne_fab),
 * deterministic simulated time. Expected results are computed here from the
 * inputs the test writes, not by the library.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ne_coll.h"
#include "ne_fab.h"
#include "rl_parse.h"

#include "coll_test_util.h"

static void base_cfg(struct ne_coll_config *c, enum ne_coll_op op, uint32_t n, uint64_t bytes)
{
	ne_coll_config_default(c);
	c->op = op;
	c->nranks = n;
	c->bytes = bytes;
	c->chunk_bytes = 16384;
	c->path_mtu = 1024;
	c->timeout = 8; /* 1 ms: short simulated runs when a tail packet is lost */
}

static void check_run(const struct ne_coll_config *cfg)
{
	struct fab f;

	coll_run(&f, cfg);
	assert_int_equal(coll_verify(f.coll, cfg), 0);
	assert_int_equal(ne_coll_check(f.coll), 0);
	/* no loss: the wire carries exactly what the algorithm implies */
	assert_int_equal(coll_wire_data_bytes(&f), coll_implied_bytes(cfg));
	fab_free(&f);
}

/* ------------------------------------------------------------------ */

static void test_busbw_arith(void **state)
{
	struct ne_coll_result r;
	char line[256];

	(void)state;
	assert_true(ne_coll_busbw_factor(NE_COLL_ALLREDUCE, 8) == 1.75);
	assert_true(ne_coll_busbw_factor(NE_COLL_ALLREDUCE, 2) == 1.0);
	assert_true(ne_coll_busbw_factor(NE_COLL_ALLGATHER, 4) == 0.75);
	assert_true(ne_coll_busbw_factor(NE_COLL_REDUCESCATTER, 8) == 0.875);
	assert_true(ne_coll_busbw_factor(NE_COLL_ALLTOALL, 2) == 0.5);
	assert_true(ne_coll_busbw_factor(NE_COLL_INCAST, 8) == 7.0);
	memset(&r, 0, sizeof(r));
	r.op = NE_COLL_ALLREDUCE;
	r.nranks = 8;
	r.size = 1000000000; /* 1 GB in 100 ms: 10 GB/s, busbw 17.5 */
	r.count = 250000000;
	r.time_ns = 100000000;
	r.type = "float";
	r.redop = "sum";
	r.root = -1;
	r.wrong = 0;
	ne_coll_result_compute(&r);
	assert_true(r.time_us == 100000.0);
	assert_true(r.algbw > 9.999999 && r.algbw < 10.000001);
	assert_true(r.busbw > 17.499999 && r.busbw < 17.500001);
	ne_coll_format_result(&r, NULL, line, sizeof(line));
	/* nccl-tests' 13 columns; the in-place half not run: N/A */
	assert_string_equal(line, "  1000000000     250000000     float     sum      -1   100000   10.00   17.50       0"
				  "      N/A     N/A     N/A     N/A\n");
	/* the in-place half run: 1 GB in 50 ms, 20 GB/s, busbw 35; #wrong N/A when not checked */
	struct ne_coll_result ip = r;
	ip.time_ns = 50000000;
	ne_coll_result_compute(&ip);
	ne_coll_format_result(&r, &ip, line, sizeof(line));
	assert_string_equal(line, "  1000000000     250000000     float     sum      -1   100000   10.00   17.50       0"
				  "    50000   20.00   35.00       0\n");
	ip.wrong = -1;
	ne_coll_format_result(&r, &ip, line, sizeof(line));
	assert_non_null(strstr(line, "   20.00   35.00     N/A\n"));
	struct ne_coll_result two[2] = {r, r}, two_ip[2] = {ip, ip};
	struct ne_coll_sweep_sum t;
	two[1].busbw = 2.5;
	two[1].wrong = 3;
	t = (struct ne_coll_sweep_sum){0}; /* no size yet */
	ne_coll_format_footer(&t, line, sizeof(line));
	assert_non_null(strstr(line, "Out of bounds values : N/A (no size measured)"));
	ne_coll_sweep_add(&t, &two[0], NULL);
	ne_coll_format_footer(&t, line, sizeof(line));
	assert_string_equal(line, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 17.5 \n#\n");
	ne_coll_sweep_add(&t, &two[1], NULL);
	ne_coll_format_footer(&t, line, sizeof(line)); /* wrong elements summed; mean of 17.5 and 2.5 */
	assert_string_equal(line, "# Out of bounds values : 3 FAILED\n# Avg bus bandwidth    : 10 \n#\n");
	/* with the in-place halves: the mean of all four (17.5, 2.5, 35, 5); their
	 * wrong elements added where checked (-1: not, as nccl-tests' N/A) */
	two_ip[1].busbw = 5;
	two_ip[1].wrong = 2;
	t = (struct ne_coll_sweep_sum){0};
	ne_coll_sweep_add(&t, &two[0], &two_ip[0]);
	ne_coll_sweep_add(&t, &two[1], &two_ip[1]);
	ne_coll_format_footer(&t, line, sizeof(line));
	assert_string_equal(line, "# Out of bounds values : 5 FAILED\n# Avg bus bandwidth    : 15 \n#\n");
	/* a size whose in-place half did not run: the three halves run, (17.5 + 2.5 + 35) / 3 */
	t = (struct ne_coll_sweep_sum){0};
	ne_coll_sweep_add(&t, &two[0], &two_ip[0]);
	ne_coll_sweep_add(&t, &two[1], NULL);
	ne_coll_format_footer(&t, line, sizeof(line));
	assert_string_equal(line, "# Out of bounds values : 3 FAILED\n# Avg bus bandwidth    : 18.3333 \n#\n");
	assert_true(ne_coll_in_place_checked(NE_COLL_ALLREDUCE));
	assert_true(ne_coll_in_place_checked(NE_COLL_BROADCAST));
	assert_false(ne_coll_in_place_checked(NE_COLL_ALLTOALL));
	assert_false(ne_coll_in_place_checked(NE_COLL_SENDRECV));
	two[1].wrong = -1; /* a size not checked (data=off): no count printed */
	t = (struct ne_coll_sweep_sum){0};
	ne_coll_sweep_add(&t, &two[0], NULL);
	ne_coll_sweep_add(&t, &two[1], NULL);
	ne_coll_format_footer(&t, line, sizeof(line));
	assert_non_null(strstr(line, "Out of bounds values : N/A (data=off"));
	assert_null(strstr(line, " OK"));
	r.op = NE_COLL_ALLGATHER;
	r.nranks = 4;
	r.size = 1048576;
	r.time_ns = 104858; /* 1 MiB in 104.858 us: 10.00 GB/s, busbw 7.50 */
	ne_coll_result_compute(&r);
	assert_true(r.algbw > 9.99996 && r.algbw < 10.00001);
	assert_true(r.busbw > 7.49997 && r.busbw < 7.50001);
	ne_coll_format_header(line, sizeof(line));
	assert_non_null(strstr(line, "out-of-place"));
	assert_non_null(strstr(line, "in-place"));
	assert_non_null(strstr(line, "busbw  #wrong     time   algbw   busbw  #wrong\n"));
}

static void test_allreduce_sizes(void **state)
{
	static const uint32_t ns[] = {2, 4, 8};
	/* floats: 1, 3, 250 (not a multiple of n), 4097 (chunk + 1), 20000
	 * (several chunks, uneven segments); one size per 4-byte remainder */
	static const uint64_t sizes[] = {4, 13, 1000, 16388, 80002};

	(void)state;
	for (size_t i = 0; i < 3; i++)
		for (size_t j = 0; j < 5; j++) {
			struct ne_coll_config c;

			base_cfg(&c, NE_COLL_ALLREDUCE, ns[i], sizes[j]);
			c.channels = j % 2 ? 2 : 1;
			check_run(&c);
		}
}

static void test_other_ops(void **state)
{
	static const enum ne_coll_op ops[] = {NE_COLL_ALLGATHER, NE_COLL_REDUCESCATTER,
					      NE_COLL_ALLTOALL, NE_COLL_INCAST};
	static const uint32_t ns[] = {2, 4, 8};
	static const uint64_t sizes[] = {64, 4 * 1001, 200000};

	(void)state;
	for (size_t o = 0; o < 4; o++)
		for (size_t i = 0; i < 3; i++)
			for (size_t j = 0; j < 3; j++) {
				struct ne_coll_config c;

				base_cfg(&c, ops[o], ns[i], sizes[j]);
				c.channels = (uint32_t)(j + 1);
				c.root = ns[i] - 1;
				check_run(&c);
			}
}

/* Distinct destination QPNs of data packets per connection, and that they are
 * the connection's receiver-side data QPs. */
static void check_qpns(const struct fab *f, uint32_t want)
{
	uint32_t nc = ne_coll_num_conns(f->coll);

	for (uint32_t k = 0; k < nc; k++) {
		struct ne_coll_conn_info ci;
		uint32_t seen[NE_COLL_MAX_QPS], nseen = 0;

		assert_int_equal(ne_coll_conn_info(f->coll, k, &ci), 0);
		for (size_t i = 0; i < f->nlog; i++) {
			const struct fab_rec *r = &f->log[i];
			bool mine = false, dup = false;

			if (!coll_is_data(f, r) || r->src != ci.src || r->dst != ci.dst)
				continue;
			for (uint32_t q = 0; q < ci.nqps; q++)
				mine |= ci.dst_data_qpn[q] == r->dqpn;
			if (!mine)
				continue;
			for (uint32_t q = 0; q < nseen; q++)
				dup |= seen[q] == r->dqpn;
			if (!dup)
				seen[nseen++] = r->dqpn;
		}
		assert_int_equal(nseen, want);
	}
}

static void test_split_rr(void **state)
{
	(void)state;
	for (int mode = 0; mode < 2; mode++) {
		struct ne_coll_config c;
		struct fab f;
		size_t ctl = 0, data = 0;

		base_cfg(&c, NE_COLL_ALLREDUCE, 4, 4 * 30011);
		c.qps_per_conn = 4;
		c.qp_mode = mode ? NE_COLL_QP_RR : NE_COLL_QP_SPLIT;
		c.channels = 2;
		coll_run(&f, &c);
		assert_int_equal(coll_verify(f.coll, &c), 0);
		assert_int_equal(coll_wire_data_bytes(&f), coll_implied_bytes(&c));
		check_qpns(&f, 4);
		/* data on DSCP 26, CTS on DSCP 48 */
		for (size_t i = 0; i < f.nlog; i++) {
			const struct fab_rec *r = &f.log[i];

			if (r->opcode == RL_OP_SEND_ONLY_IMM) {
				assert_int_equal(r->dscp, 48);
				assert_int_equal(r->payload_len, 0);
				ctl++;
			}
			if (r->opcode >= RL_OP_WRITE_FIRST && r->opcode <= RL_OP_WRITE_ONLY_IMM) {
				assert_int_equal(r->dscp, 26);
				data++;
			}
		}
		assert_true(ctl > 0 && data > ctl);
		{
			struct ne_coll_stats st;
			uint64_t nx = 0;

			ne_coll_get_stats(f.coll, &st);
			for (uint32_t k = 0; k < ne_coll_num_conns(f.coll); k++) {
				struct ne_coll_conn_info ci;

				ne_coll_conn_info(f.coll, k, &ci);
				nx += ci.ntransfers;
			}
			assert_int_equal(st.cts_sent, nx);
			assert_int_equal(ctl, nx);
			/* split: 4 WRITEs per chunk (chunks are >= 4 bytes); rr: 1 */
			assert_int_equal(st.data_wrs, mode ? nx : 4 * nx);
		}
		fab_free(&f);
	}
	/* one QP: one destination QPN per connection */
	{
		struct ne_coll_config c;
		struct fab f;

		base_cfg(&c, NE_COLL_ALLREDUCE, 4, 4 * 30011);
		coll_run(&f, &c);
		check_qpns(&f, 1);
		fab_free(&f);
	}
}

static void test_sport_policy(void **state)
{
	(void)state;
	for (int pol = 0; pol < 2; pol++) {
		struct ne_coll_config c;
		struct fab f;
		uint16_t first = 0;
		bool varied = false;

		base_cfg(&c, NE_COLL_ALLREDUCE, 4, 4 * 20000);
		c.qps_per_conn = 8;
		c.qp_mode = NE_COLL_QP_RR;
		c.sport = pol ? NE_COLL_SPORT_FIXED : NE_COLL_SPORT_RXE;
		c.sport_fixed = 0xD00D;
		coll_run(&f, &c);
		for (size_t i = 0; i < f.nlog; i++) {
			const struct fab_rec *r = &f.log[i];

			if (!coll_is_data(&f, r))
				continue;
			if (pol)
				assert_int_equal(r->sport, 0xD00D);
			else if (!first)
				first = r->sport;
			else if (r->sport != first)
				varied = true;
		}
		if (!pol)
			assert_true(varied);
		/* rxe policy: the port is rxe's fold of the QPN pair */
		if (!pol) {
			struct ne_coll_conn_info ci;
			struct ne_qp_attr a;

			ne_coll_conn_info(f.coll, 0, &ci);
			assert_int_equal(ne_qp_query(f.nic[ci.src], ci.src_data_qpn[3], &a), 0);
			assert_int_equal(a.udp_sport,
					 ne_rxe_udp_sport(ci.src_data_qpn[3], ci.dst_data_qpn[3]));
		}
		fab_free(&f);
	}
}

/* CTS: every data message of transfer s on a connection leaves the sender no
 * earlier than CTS(s) arrived there. Returns the number of data messages. */
static size_t check_cts_order(const struct fab *f)
{
	uint32_t nc = ne_coll_num_conns(f->coll);
	size_t msgs = 0;

	for (uint32_t k = 0; k < nc; k++) {
		struct ne_coll_conn_info ci;
		uint64_t *cts_at, start[NE_COLL_MAX_QPS];
		bool open[NE_COLL_MAX_QPS];

		ne_coll_conn_info(f->coll, k, &ci);
		cts_at = calloc(ci.ntransfers, sizeof(*cts_at));
		assert_non_null(cts_at);
		memset(open, 0, sizeof(open));
		for (size_t i = 0; i < f->nlog; i++) {
			const struct fab_rec *r = &f->log[i];
			int q = -1;

			if (r->opcode == RL_OP_SEND_ONLY_IMM && r->src == ci.dst && r->dst == ci.src &&
			    r->dqpn == ci.src_ctrl_qpn) {
				assert_true(r->imm < ci.ntransfers);
				assert_true(r->t_rx > 0);
				assert_int_equal(cts_at[r->imm], 0); /* one CTS per transfer */
				cts_at[r->imm] = r->t_rx;
				continue;
			}
			if (!coll_is_data(f, r) || r->src != ci.src || r->dst != ci.dst)
				continue;
			for (uint32_t j = 0; j < ci.nqps; j++)
				if (ci.dst_data_qpn[j] == r->dqpn)
					q = (int)j;
			if (q < 0)
				continue;
			if (r->opcode == RL_OP_WRITE_FIRST || r->opcode == RL_OP_WRITE_ONLY_IMM) {
				assert_false(open[q]);
				open[q] = true;
				start[q] = r->t_tx;
			}
			if (r->opcode == RL_OP_WRITE_LAST_IMM || r->opcode == RL_OP_WRITE_ONLY_IMM) {
				assert_true(open[q]);
				assert_true(r->imm < ci.ntransfers);
				/* the CTS arrived (t_rx > 0) no later than the first packet left */
				assert_true(cts_at[r->imm] > 0);
				assert_true(start[q] >= cts_at[r->imm]);
				open[q] = false;
				msgs++;
			}
		}
		free(cts_at);
	}
	return msgs;
}

static void test_cts_order(void **state)
{
	(void)state;
	for (int v = 0; v < 4; v++) {
		struct ne_coll_config c;
		struct fab f;
		size_t msgs;

		base_cfg(&c, v < 2 ? NE_COLL_ALLREDUCE : NE_COLL_ALLTOALL, 4, 4 * 50021);
		c.qps_per_conn = 2;
		c.qp_mode = v % 2 ? NE_COLL_QP_RR : NE_COLL_QP_SPLIT;
		c.window = (uint32_t)(1 + v % 2);
		c.channels = 2;
		coll_run(&f, &c);
		assert_int_equal(coll_verify(f.coll, &c), 0);
		msgs = check_cts_order(&f);
		assert_true(msgs > 20);
		fab_free(&f);
	}
}

/* With CTS on, data in flight towards a receiver never exceeds channels x
 * window x chunk; incast without CTS exceeds it (the check can fail). */
static void test_inflight(void **state)
{
	(void)state;
	for (int v = 0; v < 4; v++) {
		struct ne_coll_config c;
		struct fab f;
		struct ne_coll_stats st;
		int64_t bound, mx = 0;

		base_cfg(&c, v < 2 ? NE_COLL_INCAST : NE_COLL_ALLREDUCE, 8, 262144);
		c.channels = 2;
		c.window = v == 3 ? 2 : 1;
		c.qps_per_conn = 4;
		c.qp_mode = NE_COLL_QP_RR;
		c.chunk_bytes = 8192;
		c.cts = v != 1;
		bound = (int64_t)c.channels * c.window * c.chunk_bytes;
		coll_run(&f, &c);
		assert_int_equal(coll_verify(f.coll, &c), 0);
		for (uint32_t r = 0; r < 8; r++) {
			assert_int_equal(f.inflight[r], 0);
			if (f.max_inflight[r] > mx)
				mx = f.max_inflight[r];
		}
		ne_coll_get_stats(f.coll, &st);
		if (c.cts) {
			assert_true(mx <= bound);
			assert_true(mx >= (int64_t)c.chunk_bytes); /* the check saw traffic */
			assert_true(st.max_granted_bytes <= (uint64_t)bound);
		} else {
			/* 7 senders x 2 channels x 8 KiB can be in flight at once */
			assert_true(mx > bound);
			assert_int_equal(st.cts_sent, 0);
		}
		fab_free(&f);
	}
}

static void test_busbw_time(void **state)
{
	(void)state;
	for (int v = 0; v < 2; v++) {
		struct ne_coll_config c;
		struct fab f;
		struct ne_coll_result r;
		double line_gbs = RATE / 8e9;

		base_cfg(&c, NE_COLL_ALLREDUCE, 4, 1 << 20);
		c.channels = 2;
		c.window = 4;
		c.path_mtu = 4096;
		c.chunk_bytes = 65536;
		c.iters = v ? 3 : 1;
		c.warmup_iters = v ? 1 : 0;
		coll_run(&f, &c);
		assert_int_equal(ne_coll_get_result(f.coll, &r), 0);
		assert_int_equal(r.size, 1 << 20);
		assert_int_equal(r.count, 1 << 18);
		if (!v) {
			/* one iteration from t = 0: its time is when the run ended */
			assert_int_equal(r.iters, 1);
			assert_int_equal(r.time_ns, f.now);
		} else {
			uint64_t t1 = ne_coll_iter_time_ns(f.coll, 1), t2 = ne_coll_iter_time_ns(f.coll, 2),
				 t3 = ne_coll_iter_time_ns(f.coll, 3);

			assert_int_equal(ne_coll_iters_done(f.coll), 4);
			assert_int_equal(r.iters, 3);
			assert_true(t1 && t2 && t3);
			assert_int_equal(r.time_ns, (t1 + t2 + t3 + 1) / 3);
			assert_int_equal(ne_coll_iter_time_ns(f.coll, 0) + t1 + t2 + t3, f.now);
			assert_int_equal(coll_wire_data_bytes(&f), 4 * coll_implied_bytes(&c));
		}
		assert_true(r.algbw * r.time_ns > r.size - 1.0 && r.algbw * r.time_ns < r.size + 1.0);
		assert_true(r.busbw > r.algbw * 1.5 - 1e-9 && r.busbw < r.algbw * 1.5 + 1e-9);
		/* busbw is bounded by the line rate (payload only) and, with 2 channels x 4
		 * chunks in flight, not far from it */
		assert_true(r.busbw < line_gbs);
		assert_true(r.busbw > 0.6 * line_gbs);
		assert_int_equal(coll_verify(f.coll, &c), 0);
		fab_free(&f);
	}
}

struct drop_plan {
	uint64_t nth[4];  /* drop the nth (1-based) matching frame */
	int kind;         /* 0: data packets, 1: CTS packets, 2: data LAST/ONLY (tail) */
	uint64_t seen;
	int dropped;
};

static bool drop_some(struct fab *f, size_t i, void *arg)
{
	struct drop_plan *d = arg;
	const struct fab_rec *r = &f->log[i];
	bool match;

	if (d->kind == 1)
		match = r->opcode == RL_OP_SEND_ONLY_IMM;
	else if (d->kind == 2)
		match = r->opcode == RL_OP_WRITE_LAST_IMM || r->opcode == RL_OP_WRITE_ONLY_IMM;
	else
		match = r->dscp == f->data_dscp && r->opcode <= RL_OP_WRITE_ONLY_IMM;
	if (!match)
		return false;
	d->seen++;
	for (int k = 0; k < 4; k++)
		if (d->nth[k] == d->seen) {
			d->dropped++;
			return true;
		}
	return false;
}

static void test_loss(void **state)
{
	(void)state;
	for (int kind = 0; kind < 3; kind++) {
		struct ne_coll_config c;
		struct fab f;
		struct drop_plan d = {{5, 40, 41, 60}, kind, 0, 0};
		uint64_t retrans = 0, naks = 0, timeouts = 0;

		base_cfg(&c, NE_COLL_ALLREDUCE, 4, 4 * 40009);
		c.qps_per_conn = 2;
		c.qp_mode = kind == 1 ? NE_COLL_QP_RR : NE_COLL_QP_SPLIT;
		fab_init(&f, &c, RATE, DELAY);
		f.drop = drop_some;
		f.drop_arg = &d;
		assert_non_null(fab_coll(&f, &c));
		coll_fill_inputs(f.coll, 4);
		assert_int_equal(ne_coll_start(f.coll, 0), 0);
		assert_true(fab_run(&f, UNTIL));
		assert_int_equal(d.dropped, 4);
		assert_int_equal(coll_verify(f.coll, &c), 0);
		for (uint32_t r = 0; r < 4; r++) {
			struct ne_counters k;

			ne_nic_get_counters(f.nic[r], &k);
			retrans += k.retrans_pkts;
			naks += k.naks_sent;
			timeouts += k.timeouts;
		}
		assert_true(retrans >= 4);
		if (kind == 0)
			assert_true(naks >= 1); /* a gap in a multi-packet message: NAK */
		if (kind == 2)
			assert_true(timeouts >= 1); /* lost tail: only the timer recovers */
		/* data retransmissions add to the implied bytes; a lost CTS is resent on
		 * the control QP and costs no data */
		if (kind == 1)
			assert_int_equal(coll_wire_data_bytes(&f), coll_implied_bytes(&c));
		else
			assert_true(coll_wire_data_bytes(&f) > coll_implied_bytes(&c));
		fab_free(&f);
	}
}

static uint64_t log_hash(const struct fab *f)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < f->nlog; i++) {
		const struct fab_rec *r = &f->log[i];
		uint64_t v[6] = {r->t_tx, r->t_rx, r->dqpn, r->psn, r->opcode, r->payload_len};

		for (int k = 0; k < 6; k++)
			h = (h ^ v[k]) * 1099511628211ull;
	}
	return h;
}

static void test_determinism_and_nodata(void **state)
{
	uint64_t h[3], t[3];

	(void)state;
	for (int v = 0; v < 3; v++) {
		struct ne_coll_config c;
		struct fab f;

		base_cfg(&c, NE_COLL_ALLTOALL, 8, 8 * 4 * 9001);
		c.qps_per_conn = 4;
		c.qp_mode = NE_COLL_QP_RR;
		c.window = 2;
		c.data = v < 2;
		fab_init(&f, &c, RATE, DELAY);
		assert_non_null(fab_coll(&f, &c));
		if (c.data)
			coll_fill_inputs(f.coll, 8);
		else
			assert_null(ne_coll_input(f.coll, 0, NULL));
		assert_int_equal(ne_coll_start(f.coll, 0), 0);
		assert_true(fab_run(&f, UNTIL));
		h[v] = log_hash(&f);
		t[v] = f.now;
		if (c.data)
			assert_int_equal(coll_verify(f.coll, &c), 0);
		else
			assert_int_equal(ne_coll_check(f.coll), -22);
		fab_free(&f);
	}
	/* same wire, same timing, twice; without data buffers too */
	assert_true(h[0] == h[1]);
	assert_true(h[0] == h[2]);
	assert_true(t[0] == t[1] && t[0] == t[2]);
}

/* One run of cfg, whole (nlanes 0) or split into lanes by lane_of; its time,
 * statistics, latency histogram, wire hash and busiest proxy thread (from the
 * ranks, or from the lanes' records) into the outputs. */
static void lanes_run(const struct ne_coll_config *cfg, uint32_t nlanes, const uint32_t *lane_of,
		      uint64_t *time_ns, struct ne_coll_stats *st, struct ne_coll_hist *lat,
		      uint64_t *wire, uint64_t *proxy_max)
{
	struct fab f;
	struct ne_coll_lane_rec *rec = calloc(1, sizeof(*rec));
	struct ne_coll_proxy_stats ps;

	assert_non_null(rec);

	fab_init(&f, cfg, RATE, DELAY);
	assert_non_null(fab_coll(&f, cfg));
	coll_fill_inputs(f.coll, cfg->nranks);
	if (nlanes) {
		assert_int_equal(ne_coll_set_lanes(f.coll, nlanes, lane_of), 0);
		f.nlanes = nlanes;
		assert_int_equal(ne_coll_lanes_end(f.coll), -EBUSY); /* not started */
		for (uint32_t l = 0; l < nlanes; l++)
			if (!ne_coll_done(ne_coll_lane(f.coll, l))) /* (a lane without a rank is) */
				assert_int_equal(ne_coll_lane_start(ne_coll_lane(f.coll, l), 0), 0);
		assert_int_equal(ne_coll_lane_start(ne_coll_lane(f.coll, 0), 0), -EBUSY);
	} else {
		assert_int_equal(ne_coll_start(f.coll, 0), 0);
	}
	assert_true(fab_run(&f, UNTIL));
	assert_true(ne_coll_done(f.coll));
	assert_int_equal(coll_verify(f.coll, cfg), 0);
	assert_int_equal(ne_coll_check(f.coll), 0);
	*time_ns = ne_coll_iter_time_ns(f.coll, 0);
	ne_coll_get_stats(f.coll, st);
	assert_int_equal(ne_coll_get_latency(f.coll, lat, NULL), 0);
	*wire = log_hash(&f);
	*proxy_max = 0;
	for (uint32_t l = 0; l < nlanes; l++) {
		assert_int_equal(ne_coll_lane_save(ne_coll_lane(f.coll, l), rec), 0);
		*proxy_max = rec->proxy_busy_max_ns > *proxy_max ? rec->proxy_busy_max_ns : *proxy_max;
	}
	for (uint32_t r = 0; !nlanes && r < cfg->nranks; r++)
		if (ne_coll_rank_proxy(f.coll, r, &ps) == 0 && ps.busy_ns > *proxy_max)
			*proxy_max = ps.busy_ns;
	if (nlanes)
		assert_int_equal(ne_coll_lanes_end(f.coll), -EINVAL); /* ended once */
	free(rec);
	fab_free(&f);
}

/*
 * Lanes (ne_coll_set_lanes): the progress split by rank, each lane polled on
 * its own, gives the whole collective's run: the same wire, time, data,
 * statistics and latencies, however the ranks are dealt (halves, odd and
 * even, a lane without a rank); with proxy costs too (each lane keeps its
 * ranks' threads), the busiest thread's time the same from the lanes'
 * records.
 */
static void test_lanes(void **state)
{
	static const uint32_t halves[8] = {0, 0, 0, 0, 1, 1, 1, 1}, odd[8] = {0, 1, 0, 1, 0, 1, 0, 1},
			      gap[8] = {0, 0, 2, 2, 0, 2, 0, 2};
	static const uint32_t *deal[] = {halves, odd, gap};
	static const uint32_t lanes[] = {2, 2, 3};
	enum ne_coll_op ops[] = {NE_COLL_ALLREDUCE, NE_COLL_ALLTOALL, NE_COLL_INCAST};

	(void)state;
	for (int o = 0; o < 6; o++) {
		struct ne_coll_config c;
		struct ne_coll_stats s0, s1;
		struct ne_coll_hist *l0 = malloc(sizeof(*l0)), *l1 = malloc(sizeof(*l1));
		uint64_t t0, t1, w0, w1, p0, p1;

		assert_non_null(l0);
		assert_non_null(l1);
		base_cfg(&c, ops[o % 3], 8, 8 * 4 * 4096);
		c.qps_per_conn = 2;
		if (o >= 3) { /* each rank's proxy thread */
			c.proxy_post_ns = 200;
			c.proxy_poll_ns = 100;
		}
		lanes_run(&c, 0, NULL, &t0, &s0, l0, &w0, &p0);
		assert_true(o < 3 ? p0 == 0 : p0 > 0);
		for (int d = 0; d < 3; d++) {
			lanes_run(&c, lanes[d], deal[d], &t1, &s1, l1, &w1, &p1);
			assert_true(t1 == t0 && t0 > 0);
			assert_true(w1 == w0);
			assert_true(p1 == p0);
			assert_int_equal(s1.proxy_busy_ns, s0.proxy_busy_ns);
			assert_int_equal(s1.rank_visits, s0.rank_visits);
			assert_int_equal(s1.data_wrs, s0.data_wrs);
			assert_int_equal(s1.cts_sent, s0.cts_sent);
			assert_int_equal(s1.transfers_done, s0.transfers_done);
			assert_int_equal(s1.wqes_posted, s0.wqes_posted);
			assert_int_equal(s1.cqes_polled, s0.cqes_polled);
			assert_int_equal(s1.max_granted_bytes, s0.max_granted_bytes);
			assert_int_equal(s1.active_qp_ns, s0.active_qp_ns);
			assert_int_equal(s1.nic_ns, s0.nic_ns);
			assert_int_equal(s1.active_qps_max, s0.active_qps_max);
			assert_int_equal(l1->n, l0->n);
			assert_int_equal(l1->sum_ns, l0->sum_ns);
			assert_memory_equal(l1->bin, l0->bin, sizeof(l0->bin));
		}
		free(l0);
		free(l1);
	}
}

/*
 * Lanes that ran in other copies of the collective (MPI ranks): each lane's
 * record (ne_coll_lane_save) ends a copy where nothing ran
 * (ne_coll_lanes_end_recs) with the same time, statistics and latencies as
 * where the lanes ran. A lane's data check covers its own ranks (the two
 * lanes' counts add up to the whole's). A failed lane ends the collective
 * even while another still waits, from the records, not the lanes as they
 * are now.
 */
static void test_lane_records(void **state)
{
	static const uint32_t halves[8] = {0, 0, 0, 0, 1, 1, 1, 1};
	struct ne_coll_lane_rec *rec = calloc(2, sizeof(*rec));
	struct ne_coll_hist *l0 = malloc(sizeof(*l0)), *l1 = malloc(sizeof(*l1));
	struct ne_coll_config c;
	struct ne_coll_stats s0, s1;
	struct fab ran, copy;

	(void)state;
	assert_non_null(rec);
	assert_non_null(l0);
	assert_non_null(l1);
	base_cfg(&c, NE_COLL_ALLREDUCE, 8, 8 * 4 * 4096);
	c.qps_per_conn = 2;
	fab_init(&ran, &c, RATE, DELAY);
	assert_non_null(fab_coll(&ran, &c));
	coll_fill_inputs(ran.coll, 8);
	assert_int_equal(ne_coll_set_lanes(ran.coll, 2, halves), 0);
	ran.nlanes = 2;
	for (uint32_t l = 0; l < 2; l++)
		assert_int_equal(ne_coll_lane_start(ne_coll_lane(ran.coll, l), 0), 0);
	assert_true(fab_run(&ran, UNTIL));
	assert_true(ne_coll_done(ran.coll));
	for (uint32_t l = 0; l < 2; l++) {
		assert_int_equal(ne_coll_lane_save(ne_coll_lane(ran.coll, l), &rec[l]), 0);
		assert_int_equal(ne_coll_check(ne_coll_lane(ran.coll, l)), 0);
	}
	assert_int_equal(ne_coll_lane_save(ran.coll, &rec[0]), -EINVAL); /* not a lane */
	ne_coll_get_stats(ran.coll, &s0);
	assert_int_equal(ne_coll_get_latency(ran.coll, l0, NULL), 0);

	/* a copy in which nothing ran: every output wrong, counted per lane */
	fab_init(&copy, &c, RATE, DELAY);
	assert_non_null(fab_coll(&copy, &c));
	coll_fill_inputs(copy.coll, 8);
	long whole = ne_coll_check(copy.coll);
	assert_int_equal(ne_coll_set_lanes(copy.coll, 2, halves), 0);
	long w0 = ne_coll_check(ne_coll_lane(copy.coll, 0)), w1 = ne_coll_check(ne_coll_lane(copy.coll, 1));
	assert_true(w0 > 0 && w1 > 0);
	assert_int_equal(w0 + w1, whole);
	assert_int_equal(ne_coll_lanes_end(copy.coll), -EBUSY);
	const struct ne_coll_lane_rec *both[2] = {&rec[0], &rec[1]}, *missing[2] = {&rec[0], NULL};
	assert_int_equal(ne_coll_lanes_end_recs(copy.coll, missing), -EINVAL); /* lane 1 has ranks */
	assert_int_equal(ne_coll_lanes_end_recs(copy.coll, both), 0);
	assert_int_equal(ne_coll_lanes_end_recs(copy.coll, both), -EINVAL); /* ended once */
	assert_true(ne_coll_done(copy.coll));
	assert_true(ne_coll_iter_time_ns(copy.coll, 0) == ne_coll_iter_time_ns(ran.coll, 0));
	ne_coll_get_stats(copy.coll, &s1);
	assert_memory_equal(&s1, &s0, sizeof(s0));
	assert_int_equal(ne_coll_get_latency(copy.coll, l1, NULL), 0);
	assert_memory_equal(l1, l0, sizeof(*l0));
	fab_free(&copy);

	/* lane 1 failed while lane 0 still waits (a record of a lane not ended):
	 * the end says so, with the records' statistics */
	memset(&rec[0], 0, sizeof(rec[0]));
	rec[0].stats.data_wrs = 5;
	rec[1].failed = 1;
	rec[1].done = 0;
	rec[1].stats.errors = 1;
	rec[1].stats.first_error_status = NE_WC_RETRY_EXC_ERR;
	fab_init(&copy, &c, RATE, DELAY);
	assert_non_null(fab_coll(&copy, &c));
	assert_int_equal(ne_coll_set_lanes(copy.coll, 2, halves), 0);
	assert_int_equal(ne_coll_lanes_end_recs(copy.coll, both), -EIO);
	assert_false(ne_coll_done(copy.coll));
	ne_coll_get_stats(copy.coll, &s1);
	assert_int_equal(s1.errors, 1);
	assert_int_equal(s1.data_wrs, 5 + rec[1].stats.data_wrs);
	assert_int_equal(s1.first_error_status, NE_WC_RETRY_EXC_ERR);
	fab_free(&copy);
	fab_free(&ran);
	free(rec);
	free(l0);
	free(l1);
}

/* What lanes cannot take: a global moment between completions, a bad split. */
static void test_lanes_refused(void **state)
{
	static const uint32_t lane_of[4] = {0, 1, 0, 1}, bad[4] = {0, 1, 2, 1};
	struct ne_coll_config c;
	struct fab f;

	(void)state;
	base_cfg(&c, NE_COLL_ALLREDUCE, 4, 4 * 4 * 1024);
	c.iters = 2; /* the next iteration starts when every rank is done */
	fab_init(&f, &c, RATE, DELAY);
	assert_non_null(fab_coll(&f, &c));
	assert_int_equal(ne_coll_set_lanes(f.coll, 2, lane_of), -EINVAL);
	assert_int_equal(ne_coll_lanes_end(f.coll), -EINVAL); /* no lanes */
	assert_ptr_equal(ne_coll_lane(f.coll, 0), f.coll);    /* its own lane 0 */
	assert_null(ne_coll_lane(f.coll, 1));
	assert_int_equal(ne_coll_lane_start(f.coll, 0), -EINVAL); /* not a lane */
	fab_free(&f);
	c.iters = 1;
	c.warmup_iters = 1; /* as much a second iteration */
	fab_init(&f, &c, RATE, DELAY);
	assert_non_null(fab_coll(&f, &c));
	assert_int_equal(ne_coll_set_lanes(f.coll, 2, lane_of), -EINVAL);
	fab_free(&f);
	c.warmup_iters = 0;
	fab_init(&f, &c, RATE, DELAY);
	assert_non_null(fab_coll(&f, &c));
	assert_int_equal(ne_coll_set_lanes(f.coll, 2, bad), -EINVAL); /* lane 2 of 2 */
	assert_int_equal(ne_coll_start(f.coll, 0), 0);
	assert_int_equal(ne_coll_set_lanes(f.coll, 2, lane_of), -EINVAL); /* started */
	fab_free(&f);
}

/* ne_coll_poll() follows CQ notifications: the ranks it visits and the CQ
 * polls it makes are bounded by the completions it handles, whatever the
 * number of ranks; a poll with nothing queued does no work at all, and
 * ne_coll_quiet() says so beforehand. A scan
 * over every rank on each poll (n visits per call) fails the bounds. */
static void test_poll_work(void **state)
{
	static const uint32_t ranks[2] = {4, 32};

	(void)state;
	for (int v = 0; v < 4; v++) {
		struct ne_coll_config c;
		struct ne_coll_stats st, st2;
		struct fab f;
		uint64_t completions;

		base_cfg(&c, NE_COLL_ALLREDUCE, ranks[v % 2], 4ull * 4096 * ranks[v % 2]);
		c.qps_per_conn = 2;
		c.data = false;
		/* v 2, 3: with proxy costs a thread also wakes to start and finish
		 * each post and after each costed poll */
		c.proxy_post_ns = v >= 2 ? 200 : 0;
		c.proxy_poll_ns = v >= 2 ? 100 : 0;
		coll_run(&f, &c);
		ne_coll_get_stats(f.coll, &st);
		/* every WRITE and every CTS completes once at each end */
		completions = 2 * (st.data_wrs + st.cts_sent);
		assert_int_equal(st.cqes_polled, completions);
		assert_int_equal(st.wqes_posted, st.data_wrs + st.cts_sent);
		assert_true(st.rank_visits > 0);
		if (v < 2) {
			assert_true(st.rank_visits <= completions);
			assert_true(st.cq_polls <= st.rank_visits + completions);
		} else {
			assert_true(st.rank_visits <= 2 * completions + 2 * st.wqes_posted);
			assert_true(st.cq_polls <= st.rank_visits + completions);
		}
		/* far below one visit per rank per poll call */
		assert_true(st.rank_visits * 4 < f.loops * ranks[v % 2]);
		/* ne_coll_quiet(): without proxy costs most polls of the loop find
		 * nothing to do, and every one it calls quiet did nothing; with
		 * proxy costs (timed work) it never says quiet */
		assert_int_equal(f.quiet_busy, 0);
		if (v < 2)
			assert_true(f.quiet_polls > 0 && f.quiet_polls < f.loops);
		else
			assert_int_equal(f.quiet_polls, 0);
		/* idle: nothing queued, nothing marked (a proxy thread may still
		 * be busy with its last poll: let it finish) */
		if (ne_coll_next_event_ns(f.coll) != UINT64_MAX) {
			assert_true(v >= 2);
			f.now = ne_coll_next_event_ns(f.coll);
			assert_int_equal(ne_coll_poll(f.coll, f.now), 0);
			ne_coll_get_stats(f.coll, &st);
		}
		assert_int_equal(ne_coll_next_event_ns(f.coll), UINT64_MAX);
		for (int k = 0; k < 100; k++)
			assert_int_equal(ne_coll_poll(f.coll, f.now), 0);
		ne_coll_get_stats(f.coll, &st2);
		assert_int_equal(st2.rank_visits, st.rank_visits);
		assert_int_equal(st2.cq_polls, st.cq_polls);
		assert_int_equal(st2.conn_steps, st.conn_steps);
		assert_int_equal(st2.group_steps, st.group_steps);
		fab_free(&f);
	}
}

static void test_bad_config(void **state)
{
	struct ne_coll_config c;
	struct ne_nic *nics[2] = {NULL, NULL};
	int err = 0;

	(void)state;
	ne_coll_config_default(&c);
	assert_int_equal(ne_coll_config_check(&c), 0);
	c.bytes = 0;
	assert_int_equal(ne_coll_config_check(&c), -22);
	ne_coll_config_default(&c);
	c.qps_per_conn = 65;
	assert_int_equal(ne_coll_config_check(&c), -22);
	ne_coll_config_default(&c);
	c.chunk_bytes = 6;
	assert_int_equal(ne_coll_config_check(&c), -22);
	ne_coll_config_default(&c);
	c.op = NE_COLL_INCAST;
	c.root = 2;
	assert_int_equal(ne_coll_config_check(&c), -22);
	ne_coll_config_default(&c);
	c.op = NE_COLL_ALLGATHER;
	c.nranks = 4;
	c.bytes = 12; /* 3 floats over 4 ranks: nothing per rank */
	assert_int_equal(ne_coll_config_check(&c), -22);
	ne_coll_config_default(&c);
	assert_null(ne_coll_create(&c, nics, &err));
	assert_int_equal(err, -22);
	/* NICs too small for the QPs */
	{
		struct ne_nic_config nc;

		ne_coll_config_default(&c);
		c.qps_per_conn = 64;
		for (int i = 0; i < 2; i++) {
			ne_coll_nic_config(&c, (uint32_t)i, RATE, &nc);
			nc.max_qps = 16;
			nics[i] = ne_nic_create(&nc);
		}
		assert_null(ne_coll_create(&c, nics, &err));
		assert_true(err < 0);
		ne_nic_destroy(nics[0]);
		ne_nic_destroy(nics[1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busbw_arith),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_allreduce_sizes),
		cmocka_unit_test(test_other_ops),
		cmocka_unit_test(test_split_rr),
		cmocka_unit_test(test_sport_policy),
		cmocka_unit_test(test_cts_order),
		cmocka_unit_test(test_inflight),
		cmocka_unit_test(test_busbw_time),
		cmocka_unit_test(test_loss),
		cmocka_unit_test(test_determinism_and_nodata),
		cmocka_unit_test(test_poll_work),
		cmocka_unit_test(test_lanes),
		cmocka_unit_test(test_lanes_refused),
		cmocka_unit_test(test_lane_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
