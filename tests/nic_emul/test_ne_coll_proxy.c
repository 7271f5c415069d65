/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host-side costs of ne_coll: each rank's single proxy thread posts WQEs and
 * polls CQEs one at a time, each taking the configured time. Counted in
 * ne_coll_rank_proxy(); the doorbells are visible on the wire.
 */
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

#define POST_NS 1000u /* longer than a 4 KiB frame at 100G (~330 ns): posts pace the wire */
#define POLL_NS 300u
#define NQPS 16u

/* One 64 KiB message from rank 1 to rank 0, split over 16 QPs (nccl model):
 * the sender posts 16 WQEs and polls 16 CQEs, the receiver posts 1 FIFO
 * entry and polls 16 CQEs; busy time = posts x post + polls x poll. The
 * k-th piece leaves the sender no earlier than k post times after the FIFO
 * entry arrived there: one thread, one post at a time. */
static void test_split16_costs(void **state)
{
	struct ne_coll_config c;
	struct ne_coll_proxy_stats snd, rcv;
	struct ne_coll_stats st;
	struct ne_coll_conn_info ci;
	struct fab f;
	uint64_t fifo_rx = 0;
	uint32_t pieces = 0;

	(void)state;
	ne_coll_config_default(&c);
	assert_int_equal(ne_coll_config_set(&c, "model", "nccl"), 0);
	assert_int_equal(ne_coll_config_set(&c, "op", "incast"), 0);
	assert_int_equal(ne_coll_config_set(&c, "bytes", "64K"), 0);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_QPS_PER_CONNECTION", "16"), 0);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_SPLIT_DATA_ON_QPS", "1"), 0);
	assert_int_equal(ne_coll_config_set(&c, "proxy_post_wqe", "1us"), 0);
	assert_int_equal(ne_coll_config_set(&c, "proxy_poll_cqe", "300ns"), 0);
	coll_run(&f, &c);
	assert_int_equal(coll_verify(f.coll, &c), 0);
	assert_int_equal(ne_coll_rank_proxy(f.coll, 1, &snd), 0);
	assert_int_equal(ne_coll_rank_proxy(f.coll, 0, &rcv), 0);
	assert_int_equal(snd.wqes_posted, NQPS);
	assert_int_equal(snd.cqes_polled, NQPS);
	assert_int_equal(snd.busy_ns, NQPS * POST_NS + NQPS * POLL_NS);
	assert_int_equal(rcv.wqes_posted, 1);
	assert_int_equal(rcv.cqes_polled, NQPS);
	assert_int_equal(rcv.busy_ns, POST_NS + NQPS * POLL_NS);
	ne_coll_get_stats(f.coll, &st);
	assert_int_equal(st.wqes_posted, NQPS + 1);
	assert_int_equal(st.cqes_polled, 2 * NQPS);
	assert_int_equal(st.proxy_busy_ns, snd.busy_ns + rcv.busy_ns);
	assert_int_equal(ne_coll_rank_proxy(f.coll, 2, &snd), -22);
	{ /* the costs are printed as assumptions; nothing without costs */
		char line[256];
		struct ne_coll_config off;

		ne_coll_format_costs(&c, line, sizeof(line));
		assert_string_equal(line, "# host costs: proxy_post_wqe=1000ns proxy_poll_cqe=300ns "
					  "per WQE post / CQE poll on each rank's proxy thread: "
					  "assumptions, not measurements (no public figure)\n");
		ne_coll_config_default(&off);
		assert_int_equal(ne_coll_format_costs(&off, line, sizeof(line)), 0);
		assert_string_equal(line, "");
	}

	ne_coll_conn_info(f.coll, 0, &ci);
	for (size_t i = 0; i < f.nlog; i++) {
		const struct fab_rec *r = &f.log[i];

		if (r->src == 0 && r->dqpn == ci.src_data_qpn[0] && r->opcode == RL_OP_WRITE_ONLY_IMM)
			fifo_rx = r->t_rx;
	}
	assert_true(fifo_rx > 0);
	for (size_t i = 0; i < f.nlog; i++) {
		const struct fab_rec *r = &f.log[i];

		for (uint32_t q = 0; r->src == 1 && r->opcode == RL_OP_WRITE_ONLY_IMM && q < NQPS; q++)
			if (r->dqpn == ci.dst_data_qpn[q]) {
				/* doorbell q rings (q + 1) post times after the FIFO came */
				assert_true(r->t_tx >= fifo_rx + (q + 1) * POST_NS);
				assert_true(r->t_tx < fifo_rx + (q + 2) * POST_NS);
				pieces++;
			}
	}
	assert_int_equal(pieces, NQPS); /* 4 KiB each: one packet per piece */
	fab_free(&f);
}

struct frame_key {
	uint32_t src, dst, dqpn, psn, opcode, len;
};

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct frame_key));
}

/* The request frames of a run (ACKs left out: their coalescing follows
 * timing), in a time-independent order; their number in *n. */
static struct frame_key *requests(const struct fab *f, size_t *n)
{
	struct frame_key *k = calloc(f->nlog, sizeof(*k));

	assert_non_null(k);
	*n = 0;
	for (size_t i = 0; i < f->nlog; i++) {
		const struct fab_rec *r = &f->log[i];

		if (r->opcode == RL_OP_ACK)
			continue;
		k[(*n)++] = (struct frame_key){r->src, r->dst, r->dqpn, r->psn, r->opcode,
					       r->payload_len};
	}
	qsort(k, *n, sizeof(*k), key_cmp);
	return k;
}

/* Costs change when things happen, not what: the same request frames (QP,
 * PSN, opcode, length) with and without costs, for both models, later with
 * costs; costs set to zero through the keys give the very same wire,
 * timing included, as the default; the counters are the same either way. */
static void test_costs_change_time_only(void **state)
{
	(void)state;
	for (int model = 0; model < 2; model++) {
		struct fab f[3];
		struct ne_coll_stats st[3];
		uint64_t hash[3];
		struct frame_key *k0, *k1;
		size_t n0, n1;

		for (int v = 0; v < 3; v++) {
			struct ne_coll_config c;

			ne_coll_config_default(&c);
			if (model)
				assert_int_equal(ne_coll_config_set(&c, "model", "nccl"), 0);
			c.op = NE_COLL_ALLREDUCE;
			c.nranks = 4;
			c.bytes = 4 * 50021;
			c.path_mtu = 1024;
			c.chunk_bytes = 16384;
			assert_int_equal(ne_coll_config_set(&c, "qps", "4"), 0);
			assert_int_equal(ne_coll_config_set(&c, "proxy_post_wqe", v == 2 ? "400ns" : "0"), 0);
			assert_int_equal(ne_coll_config_set(&c, "proxy_poll_cqe", v == 2 ? "150ns" : "0"), 0);
			if (v == 0) { /* untouched defaults */
				c.proxy_post_ns = 0;
				c.proxy_poll_ns = 0;
			}
			coll_run(&f[v], &c);
			assert_int_equal(coll_verify(f[v].coll, &c), 0);
			ne_coll_get_stats(f[v].coll, &st[v]);
			hash[v] = 0;
			for (size_t i = 0; i < f[v].nlog; i++)
				hash[v] = hash[v] * 1099511628211ull ^ f[v].log[i].t_tx ^
					  (uint64_t)f[v].log[i].dqpn << 32 ^ f[v].log[i].psn;
		}
		assert_true(hash[0] == hash[1]);
		assert_int_equal(f[0].now, f[1].now);
		assert_int_equal(st[0].proxy_busy_ns, 0);
		/* costs on: same requests, later end, counted busy time */
		k0 = requests(&f[0], &n0);
		k1 = requests(&f[2], &n1);
		assert_int_equal(n0, n1);
		assert_true(n0 > 100);
		assert_memory_equal(k0, k1, n0 * sizeof(*k0));
		assert_true(f[2].now > f[0].now);
		assert_int_equal(st[2].wqes_posted, st[0].wqes_posted);
		assert_int_equal(st[2].cqes_polled, st[0].cqes_polled);
		assert_int_equal(st[2].proxy_busy_ns, st[2].wqes_posted * 400 + st[2].cqes_polled * 150);
		free(k0);
		free(k1);
		for (int v = 0; v < 3; v++)
			fab_free(&f[v]);
	}
}

/* busbw of a nccl-model AllReduce on the test switch, 400G, no data. */
static double busbw(uint32_t nranks, const char *bytes, const char *split, const char *post,
		    const char *poll)
{
	struct ne_coll_config c;
	struct ne_coll_result r;
	struct fab f;

	ne_coll_config_default(&c);
	assert_int_equal(ne_coll_config_set(&c, "model", "nccl"), 0);
	c.nranks = nranks;
	c.data = false;
	assert_int_equal(ne_coll_config_set(&c, "bytes", bytes), 0);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_MIN_NCHANNELS", "2"), 0);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_QPS_PER_CONNECTION", "16"), 0);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_IB_SPLIT_DATA_ON_QPS", split), 0);
	assert_int_equal(ne_coll_config_set(&c, "proxy_post_wqe", post), 0);
	assert_int_equal(ne_coll_config_set(&c, "proxy_poll_cqe", poll), 0);
	fab_init(&f, &c, 4 * RATE, DELAY);
	f.keep_log = false;
	assert_non_null(fab_coll(&f, &c));
	assert_int_equal(ne_coll_start(f.coll, 0), 0);
	assert_true(fab_run(&f, UNTIL));
	assert_int_equal(ne_coll_get_result(f.coll, &r), 0);
	fab_free(&f);
	return r.busbw;
}

/* The direction of Meta's finding on a small topology (8 ranks, one
 * switch, 400G, 2 channels, 16 QPs, 4 MiB: NCCL makes 128 KiB messages,
 * split cuts them in 8 KiB WQEs). With no host cost, split is not worse
 * than round-robin (within 5%); with a proxy cost per WQE and CQE (200 ns
 * and 100 ns here, assumed values, not measured ones) split's 16 posts and
 * 32 polls per message make it lose: round-robin is at least 1.5x faster. */
static void test_rr_vs_split_direction(void **state)
{
	double split0, rr0, split1, rr1;

	(void)state;
	split0 = busbw(8, "4M", "1", "0", "0");
	rr0 = busbw(8, "4M", "0", "0", "0");
	split1 = busbw(8, "4M", "1", "200ns", "100ns");
	rr1 = busbw(8, "4M", "0", "200ns", "100ns");
	print_message("busbw GB/s: no cost split %.1f rr %.1f; 200/100 ns split %.1f rr %.1f\n",
		      split0, rr0, split1, rr1);
	assert_true(split0 >= 0.95 * rr0);
	assert_true(rr1 >= 1.5 * split1);
	/* the cost slows split down, it does not speed it up */
	assert_true(split1 < split0);
}

/* A 4 KiB AllReduce of 2 ranks in the nccl model with launch=nccl, run in f. */
static void run_two_nccl(struct ne_coll_config *c, struct fab *f)
{
	ne_coll_config_default(c);
	assert_int_equal(ne_coll_config_set(c, "model", "nccl"), 0);
	c->nranks = 2;
	c->bytes = 4096;
	assert_int_equal(ne_coll_config_set(c, "launch", "nccl"), 0);
	coll_run(f, c);
}

/* A launch cost shifts each iteration, it changes nothing else: with
 * launch=5us every frame of an AllReduce (data checked, 2 iterations, both
 * models) leaves exactly 5 us later per iteration begun, each iteration
 * takes 5 us more, and nothing leaves before the first 5 us. launch=nccl is
 * NCCL 2.21.5's Ring/Simple baseLat, 8.4 us, for the ring and 0 for
 * sendrecv (no tuning entry); bad values are refused. */
static void test_launch_cost(void **state)
{
	(void)state;
	for (int model = 0; model < 2; model++) {
		struct fab f[2];

		for (int v = 0; v < 2; v++) {
			struct ne_coll_config c;

			ne_coll_config_default(&c);
			if (model)
				assert_int_equal(ne_coll_config_set(&c, "model", "nccl"), 0);
			c.nranks = 4;
			c.bytes = 4 * 50021;
			c.chunk_bytes = 16384;
			c.iters = 2;
			assert_int_equal(ne_coll_config_set(&c, "launch", v ? "5us" : "off"), 0);
			coll_run(&f[v], &c);
			assert_int_equal(coll_verify(f[v].coll, &c), 0);
			assert_int_equal(ne_coll_launch_ns(f[v].coll), v ? 5000 : 0);
		}
		for (uint32_t i = 0; i < 2; i++)
			assert_int_equal(ne_coll_iter_time_ns(f[1].coll, i),
					 ne_coll_iter_time_ns(f[0].coll, i) + 5000);
		assert_int_equal(f[0].nlog, f[1].nlog);
		uint64_t end0 = ne_coll_iter_time_ns(f[0].coll, 0);
		for (size_t i = 0; i < f[0].nlog; i++) {
			const struct fab_rec *r0 = &f[0].log[i], *r1 = &f[1].log[i];
			/* (a frame of iteration 2 left after iteration 1 ended) */
			uint64_t shift = r0->t_tx >= end0 ? 10000 : 5000;

			assert_int_equal(r1->t_tx, r0->t_tx + shift);
			assert_int_equal(r1->psn, r0->psn);
			assert_int_equal(r1->dqpn, r0->dqpn);
			assert_true(r1->t_tx >= 5000);
		}
		fab_free(&f[0]);
		fab_free(&f[1]);
	}
	{
		struct ne_coll_config c;
		struct fab f;
		char line[256];

		run_two_nccl(&c, &f);
		assert_int_equal(ne_coll_launch_ns(f.coll), 8400);
		assert_true(ne_coll_iter_time_ns(f.coll, 0) > 8400);
		fab_free(&f);
		ne_coll_format_costs(&c, line, sizeof(line));
		assert_string_equal(line, "# launch: NCCL 2.21.5's latency model of the algorithm and "
					  "protocol run (src/graph/tuning.cc): baseLat once, hwLat per "
					  "step (Ring Simple: 8.4, NVLink 3.4, network 14 us; Ring LL: "
					  "6.6, 0.6, 2.7 us)\n");
		assert_int_equal(ne_coll_config_set(&c, "release", "2.23"), 0);
		ne_coll_format_costs(&c, line, sizeof(line));
		assert_non_null(strstr(line, "# launch: NCCL 2.23.4's latency model (release=2.23"));
		assert_int_equal(ne_coll_config_set(&c, "release", "2.21"), 0);
		c.op = NE_COLL_SENDRECV;
		coll_run(&f, &c);
		assert_int_equal(ne_coll_launch_ns(f.coll), 0);
		fab_free(&f);
		assert_int_equal(ne_coll_config_set(&c, "launch", "250ns"), 0);
		ne_coll_format_costs(&c, line, sizeof(line));
		assert_string_equal(line, "# launch: 250ns before each collective on every rank\n");
		assert_int_not_equal(ne_coll_config_set(&c, "launch", "fast"), 0);
		assert_int_not_equal(ne_coll_config_set(&c, "launch", "2s"), 0);
		assert_int_equal(c.launch_ns, 250); /* (a refused value changes nothing) */
	}
}

/* launch=nccl charges NCCL 2.21.5's hwLat per step too (src/graph/tuning.cc):
 * a network step of Ring Simple is consumed 14 us after its last byte came
 * in. Two ranks, each its own server, a 4 KiB AllReduce (nccl model): 2
 * ring steps of one 2 KiB data frame per rank. Each rank's step-2 frame
 * leaves no earlier than 14 us after its step-1 frame came in, and the run
 * ends exactly 14 us after the last step-2 frame came in (its ACK is back
 * long before). With launch=off the step-2 frames leave sooner.
 * NCCL_PROTO=LL: each step's frame carries 2048 data bytes as 4096 (16-byte
 * lines of 8 data bytes), and the wait is Ring LL's hwLat[NET], 2.7 us. */
static void net_steps(const char *proto, uint32_t payload, uint64_t hw_ns, uint64_t base_ns)
{
	uint64_t rx1[2] = {0, 0}, tx2[2] = {0, 0}, last_rx = 0;
	struct ne_coll_config c;
	struct fab f;
	int seen[2] = {0, 0};

	ne_coll_config_default(&c);
	assert_int_equal(ne_coll_config_set(&c, "model", "nccl"), 0);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_PROTO", proto), 0);
	c.nranks = 2;
	c.bytes = 4096;
	assert_int_equal(ne_coll_config_set(&c, "launch", "nccl"), 0);
	coll_run(&f, &c);
	assert_int_equal(coll_verify(f.coll, &c), 0);
	assert_int_equal(ne_coll_launch_ns(f.coll), base_ns);
	for (size_t i = 0; i < f.nlog; i++) {
		const struct fab_rec *r = &f.log[i];

		if (r->payload_len != payload)
			continue; /* (FIFO entries and ACKs) */
		if (seen[r->src]++ == 0) {
			rx1[r->dst] = r->t_rx; /* step 1, into the other rank */
		} else {
			tx2[r->src] = r->t_tx;
			last_rx = r->t_rx > last_rx ? r->t_rx : last_rx;
		}
	}
	assert_int_equal(seen[0], 2);
	assert_int_equal(seen[1], 2);
	for (int r = 0; r < 2; r++)
		assert_true(tx2[r] >= rx1[r] + hw_ns);
	assert_int_equal(ne_coll_iter_time_ns(f.coll, 0), last_rx + hw_ns);
	fab_free(&f);
	assert_int_equal(ne_coll_config_set(&c, "launch", "off"), 0);
	coll_run(&f, &c);
	assert_true(ne_coll_iter_time_ns(f.coll, 0) + base_ns + hw_ns < last_rx + hw_ns);
	fab_free(&f);
}

static void test_nccl_net_steps(void **state)
{
	(void)state;
	net_steps("Simple", 2048, 14000, 8400);
	net_steps("LL", 4096, 2700, 6600);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split16_costs),
		cmocka_unit_test(test_costs_change_time_only),
		cmocka_unit_test(test_rr_vs_split_direction),
		cmocka_unit_test(test_launch_cost),
		cmocka_unit_test(test_nccl_net_steps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
