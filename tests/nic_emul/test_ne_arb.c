/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transmit arbitration among ready QPs (tx_quantum, issue 15). Two QPs of
 * one NIC each WRITE 256 KiB at once. Round robin (tx_quantum 0, the
 * default) alternates them frame by frame; deficit round robin with a
 * 16 KiB quantum sends them in runs that fill the quantum: 4 frames of
 * 4,154 bytes (16,616 > 16,384 ends the turn; the 232-byte overdraft
 * carries over, so now and then a turn ends after 3).
 * The message-rate ceiling (msg_rate): first packets of messages leave at
 * least 1 s / msg_rate apart over all QPs; the other packets of a message
 * are not held.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ne_sim.h"

#define G100 100000000000ull
#define MTU 4096u
#define MSG_BYTES (256u * 1024u)
#define QUANTUM (16u * 1024u)
#define PSN_GAP 100000u /* the QPs' PSN ranges never meet: a frame's PSN names its QP */
#define RUN_LIMIT_NS 100000000ull
#define MAX_RUNS 1024u

/* Two NICs (NIC 0 configured by c0), a CQ and a zeroed MR of mem_len bytes
 * on each, 2 connected QP pairs whose PSN ranges tell them apart. */
struct pair {
	struct sim s;
	struct ne_cq *cq[2];
	uint8_t *mem[2];
	uint32_t key[2], q0[2], q1[2];
};

static void pair_open(struct pair *p, const struct ne_nic_config *c0, uint32_t cq_depth,
		      uint32_t mem_len)
{
	struct ne_nic_config c1;

	sim_config(&c1, 1, G100);
	sim_init_cfg(&p->s, c0, &c1, 1000);
	for (int i = 0; i < 2; i++) {
		p->cq[i] = ne_cq_create(p->s.nic[i], cq_depth);
		p->mem[i] = calloc(1, mem_len);
		assert_non_null(p->mem[i]);
		struct ne_mr_attr mr = {.addr = p->mem[i], .len = mem_len,
					.access = NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE};
		assert_int_equal(ne_mr_reg(p->s.nic[i], &mr, &p->key[i]), 0);
	}
	for (uint32_t k = 0; k < 2; k++)
		sim_connect(&p->s, &p->q0[k], &p->q1[k], p->cq[0], p->cq[1], MTU, k * PSN_GAP, 0, 14,
			    7, 7);
}

/* NIC 0 WRITEs `bytes` on QP k. */
static void pair_write(struct pair *p, uint32_t k, uint32_t bytes)
{
	struct ne_send_wr wr = {.wr_id = k, .opcode = NE_WR_RDMA_WRITE,
				.send_flags = NE_SEND_SIGNALED, .length = bytes,
				.lkey = p->key[0], .rkey = p->key[1]};

	assert_int_equal(ne_post_send(p->s.nic[0], p->q0[k], &wr, 0), 0);
}

/* Run until NIC 0 has `want` successful completions. */
static void pair_run(struct pair *p, uint64_t want)
{
	struct sim_done d = {0};

	d.cq[0] = p->cq[0];
	d.want = want;
	assert_true(sim_run(&p->s, RUN_LIMIT_NS, sim_all_done, &d));
	assert_int_equal(d.failed, 0);
}

static void pair_close(struct pair *p)
{
	sim_free(&p->s);
	free(p->mem[0]);
	free(p->mem[1]);
}

/* Lengths of the runs of consecutive WRITE frames of the same QP from NIC 0. */
static size_t write_runs(uint32_t quantum, uint32_t *runs)
{
	struct ne_nic_config c0;
	struct pair p;
	size_t n = 0;
	int last = -1;

	sim_config(&c0, 0, G100);
	c0.tx_quantum = quantum;
	pair_open(&p, &c0, 16, MSG_BYTES);
	for (uint32_t k = 0; k < 2; k++)
		pair_write(&p, k, MSG_BYTES);
	pair_run(&p, 2);
	for (size_t i = 0; i < p.s.nlog; i++) {
		const struct sim_rec *r = &p.s.log[i];
		int qp;

		if (r->from != 0 || r->payload_len == 0)
			continue;
		qp = r->psn >= PSN_GAP;
		if (qp != last) {
			assert_true(n < MAX_RUNS);
			runs[n++] = 0;
			last = qp;
		}
		runs[n - 1]++;
	}
	pair_close(&p);
	return n;
}

static void test_round_robin_alternates(void **state)
{
	uint32_t runs[MAX_RUNS];
	size_t n;

	(void)state;
	n = write_runs(0, runs);
	assert_int_equal(n, 2 * MSG_BYTES / MTU);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(runs[i], 1);
}

static void test_deficit_round_robin_runs(void **state)
{
	uint32_t runs[MAX_RUNS], frames = 0, fours = 0;
	size_t n;

	(void)state;
	n = write_runs(QUANTUM, runs);
	for (size_t i = 0; i < n; i++) {
		frames += runs[i];
		if (i + 2 < n) { /* the last turns end with the messages */
			assert_true(runs[i] == 3 || runs[i] == 4);
			fours += runs[i] == 4;
		}
	}
	assert_int_equal(frames, 2 * MSG_BYTES / MTU);
	assert_true(fours * 2 > n); /* mostly full quanta of 4 frames */
}

#define RATE_MSGS_PER_QP 32u
#define SMALL_MSG 256u
#define BIG_MSG (16u * 1024u) /* 4 packets */
#define MSG_RATE 10000000ull  /* 10 M messages/s: 100 ns apart */
#define MSG_GAP_NS 100u
/* for 4-packet messages: a gap longer than a 4 KiB frame's 334 ns at 100G,
 * shorter than a whole message */
#define MSG_RATE_BIG 1000000ull
#define MSG_GAP_BIG_NS 1000u

/* Departure times of NIC 0's request packets (first packets flagged) for
 * 2 QPs x RATE_MSGS_PER_QP WRITEs of `bytes` each. */
static size_t request_times(uint64_t msg_rate, uint32_t bytes, uint64_t *t, bool *first, size_t max)
{
	struct ne_nic_config c0;
	struct pair p;
	size_t n = 0;

	sim_config(&c0, 0, G100);
	c0.msg_rate = msg_rate;
	pair_open(&p, &c0, 2 * RATE_MSGS_PER_QP + 8, BIG_MSG);
	for (uint32_t m = 0; m < RATE_MSGS_PER_QP; m++)
		for (uint32_t k = 0; k < 2; k++)
			pair_write(&p, k, bytes);
	pair_run(&p, 2 * RATE_MSGS_PER_QP);
	for (size_t i = 0; i < p.s.nlog; i++) {
		const struct sim_rec *r = &p.s.log[i];

		if (r->from != 0 || r->payload_len == 0)
			continue;
		assert_true(n < max);
		t[n] = r->t;
		first[n] = r->reth_len != 0; /* the RETH rides on a WRITE's first packet */
		n++;
	}
	pair_close(&p);
	return n;
}

#define MAX_PKTS 1024u

static void test_message_rate_ceiling(void **state)
{
	uint64_t t[MAX_PKTS], prev_first = 0, min_free = UINT64_MAX;
	bool first[MAX_PKTS], seen = false;
	size_t n;

	(void)state;
	/* without a ceiling, one-packet messages leave closer than the gap */
	n = request_times(0, SMALL_MSG, t, first, MAX_PKTS);
	assert_int_equal(n, 2 * RATE_MSGS_PER_QP);
	for (size_t i = 1; i < n; i++)
		if (t[i] - t[i - 1] < min_free)
			min_free = t[i] - t[i - 1];
	assert_true(min_free < MSG_GAP_NS);

	/* with it, every message start is at least the gap after the previous one */
	n = request_times(MSG_RATE, SMALL_MSG, t, first, MAX_PKTS);
	assert_int_equal(n, 2 * RATE_MSGS_PER_QP);
	for (size_t i = 1; i < n; i++)
		assert_true(t[i] - t[i - 1] >= MSG_GAP_NS);

	/* multi-packet messages: starts spaced, the rest of a message not held */
	n = request_times(MSG_RATE_BIG, BIG_MSG, t, first, MAX_PKTS);
	assert_int_equal(n, 2 * RATE_MSGS_PER_QP * (BIG_MSG / MTU));
	min_free = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		if (first[i]) {
			if (seen)
				assert_true(t[i] - prev_first >= MSG_GAP_BIG_NS);
			prev_first = t[i];
			seen = true;
		} else if (i > 0 && t[i] - t[i - 1] < min_free) {
			min_free = t[i] - t[i - 1];
		}
	}
	assert_true(min_free < MSG_GAP_BIG_NS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_robin_alternates),
		cmocka_unit_test(test_deficit_round_robin_runs),
		cmocka_unit_test(test_message_rate_ceiling),
	};
	return cmocka_run_group_tests_name("ne_arb", tests, NULL, NULL);
}
