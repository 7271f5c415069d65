/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The nccl model of ne_coll: NCCL's arithmetic against hand-computed cases
 * (docs/explanation/FACTS-NCCL-RNIC.md), then runs on the test fabric that check the
 * wire: split pieces and zero-length writes, round-robin in step at both
 * ends, the FIFO on the reverse of data QP 0 and the 4-message pipeline,
 * CTRAN's fixed-size WQEs, the key=value parser, and the active QPs per NIC
 * (QPs with a send WQE on the NIC) against a sampled count.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coll_test_util.h"
#include "rl_parse.h"

#define KiB 1024ull
#define MiB (1024ull * 1024ull)
#define FLOAT 4u
/* Simple's ring chunk at NCCL_BUFFSIZE 4 MiB: 4 steps of 512 KiB, in floats */
#define SIMPLE_CHUNK (2 * MiB / FLOAT)

/* ------------------------------------------------------------------ */
/* Arithmetic */

static void test_ring_chunk(void **state)
{
	uint64_t sl[2];

	(void)state;
	/* FACTS worked example: 256 MiB AllReduce, 128 ranks, 16 channels:
	 * 256 MiB / (16 x 128) = 128 KiB chunks (below the 4-step 2 MiB cap) */
	assert_int_equal(ne_coll_nccl_chunk_elems(256 * MiB / FLOAT, 0, 16, 128, SIMPLE_CHUNK),
			 128 * KiB / FLOAT);
	/* two 64 KiB messages: max(ceil(32768 / 32) x 16, 131072 x 2 / 32) = 16384 floats */
	assert_int_equal(ne_coll_nccl_slices(128 * KiB / FLOAT, 4 * MiB, FLOAT, sl), 2);
	assert_int_equal(sl[0], 64 * KiB / FLOAT);
	assert_int_equal(sl[1], 64 * KiB / FLOAT);
	/* a large message hits the cap: 4 steps of 512 KiB = 2 MiB, 2 x 1 MiB slices */
	assert_int_equal(ne_coll_nccl_chunk_elems(8192 * MiB / FLOAT, 0, 1, 2, SIMPLE_CHUNK),
			 2 * MiB / FLOAT);
	assert_int_equal(ne_coll_nccl_slices(2 * MiB / FLOAT, 4 * MiB, FLOAT, sl), 2);
	assert_int_equal(sl[0], 1 * MiB / FLOAT);
	/* last loop of a size that is not a multiple: 3 full loops of 2 x 2 MiB
	 * then 100 floats left over 2 ranks: ceil(100 / 2) = 50 */
	assert_int_equal(ne_coll_nccl_chunk_elems(3 * 2 * (2 * MiB / FLOAT) + 100, 3 * 2 * (2 * MiB / FLOAT),
						  1, 2, SIMPLE_CHUNK),
			 50);
	/* 40 KiB chunk: slice floor 32 KiB (a 32nd of 2 steps) -> 32 KiB + 8 KiB */
	assert_int_equal(ne_coll_nccl_slices(40 * KiB / FLOAT, 4 * MiB, FLOAT, sl), 2);
	assert_int_equal(sl[0], 32 * KiB / FLOAT);
	assert_int_equal(sl[1], 8 * KiB / FLOAT);
	/* 16 KiB chunk: one message */
	assert_int_equal(ne_coll_nccl_slices(16 * KiB / FLOAT, 4 * MiB, FLOAT, sl), 1);
	assert_int_equal(sl[0], 16 * KiB / FLOAT);
	/* 1000 floats: ceil(1000 / 32) x 16 = 512 < floor 8192: one slice */
	assert_int_equal(ne_coll_nccl_slices(1000, 4 * MiB, FLOAT, sl), 1);
	/* degenerate input */
	assert_int_equal(ne_coll_nccl_chunk_elems(100, 100, 1, 2, SIMPLE_CHUNK), 0);
	assert_int_equal(ne_coll_nccl_slices(0, 4 * MiB, FLOAT, sl), 0);
}

static void test_split_pieces(void **state)
{
	uint32_t off, total = 0, zero = 0;

	(void)state;
	/* worked example: a 64 KiB message over 16 QPs: 4 KiB single-packet writes */
	for (uint32_t q = 0; q < 16; q++) {
		assert_int_equal(ne_coll_split_piece(64 * KiB, 16, q, &off), 4 * KiB);
		assert_int_equal(off, q * 4 * KiB);
	}
	/* 1000 bytes over 16: roundup(ceil(1000 / 16) = 63, 128) = 128; QPs 0-6
	 * 128 bytes, QP 7 the last 104, QPs 8-15 zero-length */
	for (uint32_t q = 0; q < 16; q++) {
		uint32_t len = ne_coll_split_piece(1000, 16, q, &off);

		assert_int_equal(len, q < 7 ? 128 : q == 7 ? 104 : 0);
		if (len)
			assert_int_equal(off, q * 128);
		total += len;
		zero += len == 0;
	}
	assert_int_equal(total, 1000);
	assert_int_equal(zero, 8);
	/* one float over 4 QPs: all on QP 0 */
	assert_int_equal(ne_coll_split_piece(4, 4, 0, &off), 4);
	assert_int_equal(ne_coll_split_piece(4, 4, 3, &off), 0);
	/* CTRAN: WQEs of min(threshold, remaining) */
	assert_int_equal(ne_coll_ctran_wqes(1 * MiB, 512 * KiB, 16), 2);
	assert_int_equal(ne_coll_ctran_wqes(1 * MiB + 4, 512 * KiB, 16), 3);
	assert_int_equal(ne_coll_ctran_wqes(100, 512 * KiB, 16), 1);
	assert_int_equal(ne_coll_ctran_wqes(1 * MiB, 0, 16), 16); /* 0: split equally */
}

/* ------------------------------------------------------------------ */
/* Runs */

static void nccl_cfg(struct ne_coll_config *c, enum ne_coll_op op, uint32_t n, uint64_t bytes)
{
	ne_coll_config_default(c);
	assert_int_equal(ne_coll_config_set(c, "model", "nccl"), 0);
	c->op = op;
	c->nranks = n;
	c->bytes = bytes;
	c->timeout = 8;
}

/* Which connection and role a frame belongs to, from the QPNs. */
enum frame_role { FR_OTHER, FR_DATA, FR_FIFO };

static enum frame_role classify(struct ne_coll *coll, const struct fab_rec *r, uint32_t *conn,
				uint32_t *qp)
{
	uint32_t nc = ne_coll_num_conns(coll);

	if (r->opcode != RL_OP_WRITE_ONLY_IMM && r->opcode != RL_OP_WRITE_LAST_IMM &&
	    r->opcode != RL_OP_WRITE_FIRST && r->opcode != RL_OP_WRITE_MIDDLE)
		return FR_OTHER;
	for (uint32_t k = 0; k < nc; k++) {
		struct ne_coll_conn_info ci;

		ne_coll_conn_info(coll, k, &ci);
		*conn = k;
		if (r->src == ci.dst && r->dst == ci.src && r->dqpn == ci.src_data_qpn[0])
			return FR_FIFO;
		if (r->src != ci.src || r->dst != ci.dst)
			continue;
		for (uint32_t q = 0; q < ci.nqps; q++)
			if (r->dqpn == ci.dst_data_qpn[q]) {
				*qp = q;
				return FR_DATA;
			}
	}
	return FR_OTHER;
}

/* AllReduce with a small NCCL_BUFFSIZE so that chunks hit the cap: 256 KiB
 * buffer = 32 KiB steps, chunk cap 128 KiB; 2 MiB over 2 channels x 4 ranks
 * is 2 loops of 128 KiB chunks, each 2 messages of 64 KiB; a connection
 * carries 2 loops x 6 hops x 2 = 24 messages. */
static void test_nccl_allreduce(void **state)
{
	(void)state;
	for (int mode = 0; mode < 3; mode++) {
		struct ne_coll_config c;
		struct ne_coll_stats st;
		struct fab f;
		uint32_t nc, wqes_per_msg;

		nccl_cfg(&c, NE_COLL_ALLREDUCE, 4, 2 * MiB);
		assert_int_equal(ne_coll_config_set(&c, "NCCL_BUFFSIZE", "256K"), 0);
		assert_int_equal(ne_coll_config_set(&c, "NCCL_MIN_NCHANNELS", "2"), 0);
		assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_QPS_PER_CONNECTION", "4"), 0);
		if (mode == 0)
			assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_SPLIT_DATA_ON_QPS", "1"), 0);
		if (mode == 2) {
			assert_int_equal(ne_coll_config_set(&c, "NCCL_CTRAN_IB_MAX_QPS", "4"), 0);
			assert_int_equal(ne_coll_config_set(&c, "NCCL_CTRAN_IB_QP_SCALING_THRESHOLD", "8K"), 0);
			assert_int_equal(ne_coll_config_set(&c, "NCCL_CTRAN_IB_QP_MAX_MSGS", "2"), 0);
		}
		wqes_per_msg = mode == 0 ? 4 : mode == 1 ? 1 : 8;
		coll_run(&f, &c);
		assert_int_equal(coll_verify(f.coll, &c), 0);
		nc = ne_coll_num_conns(f.coll);
		assert_int_equal(nc, 2 * 4); /* a connection per channel per ring hop */
		for (uint32_t k = 0; k < nc; k++) {
			struct ne_coll_conn_info ci;

			ne_coll_conn_info(f.coll, k, &ci);
			assert_int_equal(ci.ntransfers, 24);
			assert_int_equal(ci.bytes, 24 * 64 * KiB);
			/* no control QP: the FIFO rides on data QP 0 */
			assert_int_equal(ci.src_ctrl_qpn, ci.src_data_qpn[0]);
			assert_int_equal(ci.dst_ctrl_qpn, ci.dst_data_qpn[0]);
		}
		ne_coll_get_stats(f.coll, &st);
		assert_int_equal(st.data_wrs, (uint64_t)nc * 24 * wqes_per_msg);
		assert_int_equal(st.cts_sent, (uint64_t)nc * 24);
		assert_int_equal(st.rr_mismatch, 0);
		assert_int_equal(st.zero_len_wrs, 0);
		if (mode == 2) { /* 4 messages x 8 WQEs in flight against 4 QPs x 2 */
			assert_true(st.ctran_qp_full > 0);
			assert_int_equal(st.ctran_max_outstanding, 2); /* the cap, reached */
		}
		fab_free(&f);
	}
}

/* Split of a 1000-byte message over 16 QPs, on the wire: 7 x 128 + 104
 * bytes and 8 zero-length WRITE WITH IMM, each on its own QP. */
static void test_nccl_split_wire(void **state)
{
	struct ne_coll_config c;
	struct ne_coll_stats st;
	struct fab f;
	uint32_t seen[16], conn = 0, qp = 0;

	(void)state;
	nccl_cfg(&c, NE_COLL_INCAST, 2, 1000);
	c.root = 0;
	assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_QPS_PER_CONNECTION", "16"), 0);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_SPLIT_DATA_ON_QPS", "1"), 0);
	coll_run(&f, &c);
	assert_int_equal(coll_verify(f.coll, &c), 0);
	memset(seen, 0, sizeof(seen));
	for (size_t i = 0; i < f.nlog; i++)
		if (classify(f.coll, &f.log[i], &conn, &qp) == FR_DATA) {
			assert_int_equal(f.log[i].opcode, RL_OP_WRITE_ONLY_IMM);
			assert_int_equal(f.log[i].imm, 0);
			assert_int_equal(f.log[i].payload_len, qp < 7 ? 128 : qp == 7 ? 104 : 0);
			seen[qp]++;
		}
	for (uint32_t q = 0; q < 16; q++)
		assert_int_equal(seen[q], 1);
	ne_coll_get_stats(f.coll, &st);
	assert_int_equal(st.data_wrs, 16);
	assert_int_equal(st.zero_len_wrs, 8);
	assert_int_equal(st.data_bytes, 1000);
	fab_free(&f);
}

/* Round-robin: message s of a connection travels on QP s mod nqps (the
 * receiver's QP in the frame names the pair), at both ends; and the
 * pipeline: the FIFO entry that grants message s leaves the receiver only
 * after message s - 4 has fully arrived there, and message s finishes
 * arriving after its entry arrived at the sender. */
static void test_nccl_rr_fifo(void **state)
{
	(void)state;
	for (int tc = 0; tc < 2; tc++) {
		struct ne_coll_config c;
		struct ne_coll_stats st;
		struct fab f;
		uint32_t nc, conn = 0, qp = 0;
		uint64_t **done_at, **fifo_tx, **fifo_rx;
		uint64_t fifos = 0;

		nccl_cfg(&c, NE_COLL_ALLGATHER, 3, 3 * 40 * 16 * KiB);
		c.path_mtu = 1024;
		assert_int_equal(ne_coll_config_set(&c, "NCCL_BUFFSIZE", "128K"), 0);
		assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_QPS_PER_CONNECTION", "3"), 0);
		if (tc) /* the FIFO in the strict-priority class (DSCP 48) */
			assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_FIFO_TC", "192"), 0);
		coll_run(&f, &c);
		assert_int_equal(coll_verify(f.coll, &c), 0);
		nc = ne_coll_num_conns(f.coll);
		done_at = calloc(nc, sizeof(*done_at));
		fifo_tx = calloc(nc, sizeof(*fifo_tx));
		fifo_rx = calloc(nc, sizeof(*fifo_rx));
		for (uint32_t k = 0; k < nc; k++) {
			struct ne_coll_conn_info ci;

			ne_coll_conn_info(f.coll, k, &ci);
			assert_true(ci.ntransfers > 8);
			done_at[k] = calloc(ci.ntransfers, sizeof(uint64_t));
			fifo_tx[k] = calloc(ci.ntransfers, sizeof(uint64_t));
			fifo_rx[k] = calloc(ci.ntransfers, sizeof(uint64_t));
		}
		for (size_t i = 0; i < f.nlog; i++) {
			const struct fab_rec *r = &f.log[i];
			enum frame_role role = classify(f.coll, r, &conn, &qp);

			if (role == FR_FIFO) {
				assert_int_equal(r->opcode, RL_OP_WRITE_ONLY_IMM);
				assert_int_equal(r->payload_len, NE_COLL_NCCL_FIFO_ENTRY);
				assert_int_equal(r->dscp, tc ? 48 : c.data_dscp);
				fifo_tx[conn][r->imm] = r->t_tx;
				fifo_rx[conn][r->imm] = r->t_rx;
				fifos++;
			} else if (role == FR_DATA) {
				assert_int_equal(r->dscp, c.data_dscp);
				/* in step: message s on the pair s mod 3 */
				if (r->opcode == RL_OP_WRITE_LAST_IMM || r->opcode == RL_OP_WRITE_ONLY_IMM) {
					assert_int_equal(qp, r->imm % 3);
					done_at[conn][r->imm] = r->t_rx;
				}
			}
		}
		ne_coll_get_stats(f.coll, &st);
		assert_int_equal(st.rr_mismatch, 0);
		assert_int_equal(fifos, st.cts_sent);
		for (uint32_t k = 0; k < nc; k++) {
			struct ne_coll_conn_info ci;

			ne_coll_conn_info(f.coll, k, &ci);
			for (uint32_t s = 0; s < ci.ntransfers; s++) {
				assert_true(fifo_rx[k][s] > 0 && done_at[k][s] > 0);
				/* the data finished arriving after its grant arrived */
				assert_true(done_at[k][s] > fifo_rx[k][s]);
				if (s >= NE_COLL_NCCL_SLICES_IN_FLIGHT)
					assert_true(fifo_tx[k][s] >=
						    done_at[k][s - NE_COLL_NCCL_SLICES_IN_FLIGHT]);
			}
			free(done_at[k]);
			free(fifo_tx[k]);
			free(fifo_rx[k]);
		}
		free(done_at);
		free(fifo_tx);
		free(fifo_rx);
		fab_free(&f);
	}
}

/* ------------------------------------------------------------------ */
/* Active QPs per NIC */

#define SAMPLE_NS 20u

/* Incast of 2 MiB from rank 1 to rank 0: 16 messages of NCCL_P2P_NET_CHUNKSIZE
 * (128 KiB), at most 4 in flight. Runs in steps of SAMPLE_NS, sampling
 * ne_coll_active_qps() of both ranks after each step, and returns the result
 * and the sampled integral of rank 1 (QP x ns) and its sampled busy time. */
static void active_run(uint32_t nqps, int split, bool costs, struct ne_coll_result *res,
		       uint64_t *sampled_qp_ns, uint64_t *sampled_busy_ns, uint32_t *sampled_max)
{
	struct ne_coll_config c;
	struct fab f;
	char q[8];

	nccl_cfg(&c, NE_COLL_INCAST, 2, 2 * MiB);
	snprintf(q, sizeof(q), "%u", nqps);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_QPS_PER_CONNECTION", q), 0);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_SPLIT_DATA_ON_QPS", split ? "1" : "0"), 0);
	if (costs) {
		assert_int_equal(ne_coll_config_set(&c, "proxy_post_wqe", "200ns"), 0);
		assert_int_equal(ne_coll_config_set(&c, "proxy_poll_cqe", "100ns"), 0);
	}
	fab_init(&f, &c, RATE, DELAY);
	assert_non_null(fab_coll(&f, &c));
	coll_fill_inputs(f.coll, c.nranks);
	assert_int_equal(ne_coll_start(f.coll, 0), 0);
	*sampled_qp_ns = *sampled_busy_ns = 0;
	*sampled_max = 0;
	for (uint64_t t = SAMPLE_NS; !fab_run(&f, t); t += SAMPLE_NS) {
		uint32_t a = ne_coll_active_qps(f.coll, 1);

		assert_true(t < UNTIL);
		/* the receiver's FIFO writes are not data QPs */
		assert_int_equal(ne_coll_active_qps(f.coll, 0), 0);
		*sampled_qp_ns += (uint64_t)a * SAMPLE_NS;
		*sampled_busy_ns += a ? SAMPLE_NS : 0;
		*sampled_max = a > *sampled_max ? a : *sampled_max;
	}
	assert_true(ne_coll_done(f.coll));
	assert_int_equal(coll_verify(f.coll, &c), 0);
	assert_int_equal(ne_coll_get_result(f.coll, res), 0);
	assert_int_equal(ne_coll_active_qps(f.coll, 1), 0); /* all completed */
	fab_free(&f);
}

/* The count is of QPs, not WQEs: rr puts each of the 4 messages in flight on
 * its own QP (4 of 16 active), split puts every message on all 16 QPs (16
 * active, though up to 64 WQEs are outstanding), and rr over 2 QPs has 2
 * active with 4 messages in flight. Costs on or off. The time-weighted mean
 * equals the sampled one (within the sampling step's error), counted over
 * both ranks (the receiver has none: mean = rank 1's integral / (2 x time)). */
static void test_active_qps(void **state)
{
	static const struct {
		uint32_t nqps;
		int split;
		bool costs;
		uint32_t max;
	} cases[] = {
		{16, 0, false, 4}, {16, 1, false, 16}, {2, 0, false, 2},
		{1, 0, false, 1},  {16, 0, true, 4},   {16, 1, true, 16},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ne_coll_result r;
		uint64_t qp_ns, busy_ns;
		uint32_t smax;
		char line[256];

		active_run(cases[i].nqps, cases[i].split, cases[i].costs, &r, &qp_ns, &busy_ns, &smax);
		assert_int_equal(r.active_qps_max, cases[i].max);
		assert_int_equal(smax, cases[i].max);
		double t = (double)r.time_ns, sampled_mean = (double)qp_ns / (2 * t);
		assert_true(fabs(r.active_qps_mean - sampled_mean) <= 0.02 * r.active_qps_mean + 0.01);
		double sampled_busy = (double)qp_ns / (double)busy_ns;
		assert_true(fabs(r.active_qps_busy_mean - sampled_busy) <= 0.02 * sampled_busy);
		/* one sender of two NICs: the mean is at most half the max */
		assert_true(r.active_qps_mean <= cases[i].max / 2.0 + 1e-9);
		if (cases[i].nqps == 1) /* while it sends, exactly its one QP */
			assert_true(r.active_qps_busy_mean == 1.0);
		ne_coll_format_active(&r, line, sizeof(line));
		assert_non_null(strstr(line, "# active QPs per NIC: mean "));
		assert_true(line[strlen(line) - 1] == '\n');
	}
}

/* AllToAll: messages of NCCL_P2P_NET_CHUNKSIZE; data checked. */
static void test_nccl_alltoall(void **state)
{
	struct ne_coll_config c;
	struct fab f;

	(void)state;
	nccl_cfg(&c, NE_COLL_ALLTOALL, 4, 4 * 100 * KiB);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_P2P_NET_CHUNKSIZE", "32K"), 0);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_QPS_PER_CONNECTION", "2"), 0);
	coll_run(&f, &c);
	assert_int_equal(coll_verify(f.coll, &c), 0);
	for (uint32_t k = 0; k < ne_coll_num_conns(f.coll); k++) {
		struct ne_coll_conn_info ci;

		ne_coll_conn_info(f.coll, k, &ci);
		assert_int_equal(ci.ntransfers, 4); /* 100 KiB = 3 x 32 KiB + 4 KiB */
	}
	fab_free(&f);
}

/* The default is untouched by the new fields: model rocelab. */
static void test_default_model(void **state)
{
	struct ne_coll_config c;

	(void)state;
	ne_coll_config_default(&c);
	assert_int_equal(c.model, NE_COLL_MODEL_ROCELAB);
	assert_int_equal(c.qp_mode, NE_COLL_QP_SPLIT);
	assert_int_equal(c.proxy_post_ns, 0);
	assert_int_equal(c.proxy_poll_ns, 0);
	/* ctran needs the nccl model; 65 QPs only in the nccl model */
	c.qp_mode = NE_COLL_QP_CTRAN;
	assert_int_equal(ne_coll_config_check(&c), -22);
	ne_coll_config_default(&c);
	c.qps_per_conn = 128;
	assert_int_equal(ne_coll_config_check(&c), -22);
	c.model = NE_COLL_MODEL_NCCL;
	assert_int_equal(ne_coll_config_check(&c), 0);
	c.qps_per_conn = 129;
	assert_int_equal(ne_coll_config_check(&c), -22);
}

/* ------------------------------------------------------------------ */
/* Keys */

static void expect_bad(const char *key, const char *val, const char *why)
{
	struct ne_coll_config c, before;
	char msg[256];

	ne_coll_config_default(&c);
	before = c;
	assert_int_equal(ne_coll_config_set_msg(&c, key, val, msg, sizeof(msg)), -22);
	/* the message names the pair and says what is wrong; nothing changed */
	assert_non_null(strstr(msg, key));
	assert_non_null(strstr(msg, val));
	assert_non_null(strstr(msg, why));
	assert_memory_equal(&c, &before, sizeof(c));
}

static void test_keys(void **state)
{
	struct ne_coll_config c;

	(void)state;
	ne_coll_config_default(&c);
	assert_int_equal(ne_coll_config_set(&c, "model", "nccl"), 0);
	assert_int_equal(c.model, NE_COLL_MODEL_NCCL);
	assert_int_equal(c.qp_mode, NE_COLL_QP_RR); /* NCCL >= 2.20.3 */
	assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_QPS_PER_CONNECTION", "16"), 0);
	assert_int_equal(c.qps_per_conn, 16);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_QPS_PER_CONNECTION", "128"), 0);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_BUFFSIZE", "4MiB"), 0);
	assert_int_equal(c.nccl_buffsize, 4 * MiB);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_BUFFSIZE", "8388608"), 0);
	assert_int_equal(c.nccl_buffsize, 8 * MiB);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_CTRAN_IB_QP_SCALING_THRESHOLD", "512K"), 0);
	assert_int_equal(c.ctran_wqe_bytes, 512 * KiB);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_FIFO_TC", "224"), 0);
	assert_int_equal(c.nccl_fifo_tc, 224);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_TC", "104"), 0);
	assert_int_equal(c.data_dscp, 26);
	assert_false(c.timeout_given);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_TIMEOUT", "18"), 0);
	assert_int_equal(c.timeout, 18);
	assert_true(c.timeout_given);
	assert_int_equal(ne_coll_config_set(&c, "proxy_post_wqe", "250ns"), 0);
	assert_int_equal(c.proxy_post_ns, 250);
	assert_int_equal(ne_coll_config_set(&c, "proxy_poll_cqe", "1.5us"), 0);
	assert_int_equal(c.proxy_poll_ns, 1500);
	assert_int_equal(ne_coll_config_set(&c, "proxy_poll_cqe", "0"), 0);
	assert_int_equal(c.proxy_poll_ns, 0);
	assert_int_equal(ne_coll_config_set(&c, "qp_mode", "ctran"), 0);
	assert_int_equal(c.qp_mode, NE_COLL_QP_CTRAN);
	assert_int_equal(ne_coll_config_check(&c), 0);

	expect_bad("NCCL_IB_QPS_PR_CONNECTION", "16", "unknown key");
	expect_bad("NCCL_IB_QPS_PER_CONNECTION", "129", "1..128");
	expect_bad("NCCL_IB_QPS_PER_CONNECTION", "0", "1..128");
	expect_bad("NCCL_IB_QPS_PER_CONNECTION", "16x", "not an unsigned integer");
	expect_bad("chunk", "1002", "multiple of 4");
	expect_bad("NCCL_IB_TIMEOUT", "32", "0..31");
	expect_bad("NCCL_CTRAN_IB_QP_SCALING_THRESHOLD", "1000", "multiple of 128");
	expect_bad("NCCL_BUFFSIZE", "4MB", "multiple of 1024"); /* 4,000,000: SI */
	expect_bad("NCCL_BUFFSIZE", "4XB", "bad or missing unit");
	expect_bad("op", "all_reduce", "did you mean allreduce?");
	expect_bad("sizes", "1M", "only in a --coll spec");
	expect_bad("NCCL_BUFFSIZE", "128", "multiple of 1024");
	expect_bad("proxy_post_wqe", "250", "missing unit");
	expect_bad("proxy_post_wqe", "250xs", "bad or missing unit");
	expect_bad("proxy_post_wqe", "2s", "at most 1 s");
	expect_bad("proxy_poll_cqe", "0.5ns", "whole number");
	expect_bad("NCCL_IB_SPLIT_DATA_ON_QPS", "2", "0 or 1");
	expect_bad("model", "mpi", "rocelab or nccl");
	expect_bad("NCCL_IB_FIFO_TC", "256", "0..255");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_chunk),
		cmocka_unit_test(test_split_pieces),
		cmocka_unit_test(test_default_model),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_nccl_allreduce),
		cmocka_unit_test(test_nccl_split_wire),
		cmocka_unit_test(test_nccl_rr_fifo),
		cmocka_unit_test(test_nccl_alltoall),
		cmocka_unit_test(test_active_qps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
