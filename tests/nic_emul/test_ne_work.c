/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NIC's cost per event does not grow with idle QPs (issue 13): the same
 * transfer, with 1 and with 1,000 idle QPs in RTS on each NIC, puts the same
 * frames on the wire at the same times and does the same amount of work, as
 * the NIC's work counters (ne_nic_get_work) count it: QPs the scheduler,
 * the timers and ne_nic_next_event_ns examine, heap moves, QP context cache
 * probes, counted from the end of the set-up. Work is counted, not timed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ne_sim.h"

#define G100 100000000000ull
#define WIRE_DELAY_NS 1000u
#define ACTIVE_QPS 3u          /* QP pairs that carry the transfer */
#define MANY_IDLE 1000u        /* idle QP pairs of the large case */
#define MAX_QPS 2048u          /* the same QP table in both cases */
#define QPC_ENTRIES 16u        /* the context cache model on: its probes are counted */
#define QPC_MISS_NS 500u
#define MSG_BYTES (64u * 1024u)
#define MSGS_PER_QP 8u
#define MTU 4096u
#define RUN_LIMIT_NS 1000000000ull

struct run {
	struct ne_work work[2];
	struct ne_counters cnt[2];
	size_t nframes;
	struct sim_rec *log;
	uint64_t done;
};

static void cfg_for(struct ne_nic_config *c, int i)
{
	sim_config(c, i, G100);
	c->max_qps = MAX_QPS;
	c->qpc_entries = QPC_ENTRIES;
	c->qpc_miss_ns = QPC_MISS_NS;
}

/* The transfer: WRITEs round-robin over ACTIVE_QPS QPs, then `idle` QP
 * pairs created after them (so the active QPNs do not change), in RTS with
 * nothing posted. */
static void transfer(uint32_t idle, struct run *out)
{
	struct ne_nic_config c0, c1;
	struct sim s;
	struct ne_cq *cq[2];
	uint32_t q0[ACTIVE_QPS], q1[ACTIVE_QPS], key[2];
	uint8_t *mem[2];
	struct sim_done d = {0};
	struct ne_work base[2];

	cfg_for(&c0, 0);
	cfg_for(&c1, 1);
	sim_init_cfg(&s, &c0, &c1, WIRE_DELAY_NS);
	assert_non_null(s.nic[0]);
	assert_non_null(s.nic[1]);
	for (int i = 0; i < 2; i++) {
		struct ne_mr_attr mr = {.len = MSG_BYTES,
					.access = NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE};

		cq[i] = ne_cq_create(s.nic[i], 4096);
		assert_non_null(cq[i]);
		mem[i] = calloc(1, MSG_BYTES);
		assert_non_null(mem[i]);
		sim_fill(mem[i], MSG_BYTES, (uint32_t)i + 7);
		mr.addr = mem[i];
		assert_int_equal(ne_mr_reg(s.nic[i], &mr, &key[i]), 0);
	}
	for (uint32_t q = 0; q < ACTIVE_QPS; q++)
		sim_connect(&s, &q0[q], &q1[q], cq[0], cq[1], MTU, 100 * q, 1000 * q, 14, 7, 7);
	for (uint32_t q = 0; q < idle; q++) {
		uint32_t a, b;

		sim_connect(&s, &a, &b, cq[0], cq[1], MTU, 0, 0, 14, 7, 7);
	}
	/* Setting up 1,000 QPs is work of its own (each enters and leaves the
	 * scheduler once): count from here, when the set-up is scheduled. */
	for (int i = 0; i < 2; i++) {
		(void)ne_nic_next_event_ns(s.nic[i]);
		ne_nic_get_work(s.nic[i], &base[i]);
	}
	for (uint32_t m = 0; m < MSGS_PER_QP; m++)
		for (uint32_t q = 0; q < ACTIVE_QPS; q++) {
			struct ne_send_wr wr = {
				.wr_id = m * ACTIVE_QPS + q,
				.opcode = NE_WR_RDMA_WRITE,
				.send_flags = NE_SEND_SIGNALED,
				.length = MSG_BYTES,
				.lkey = key[0],
				.rkey = key[1],
			};
			assert_int_equal(ne_post_send(s.nic[0], q0[q], &wr, 0), 0);
		}
	d.cq[0] = cq[0];
	d.want = (uint64_t)MSGS_PER_QP * ACTIVE_QPS;
	assert_true(sim_run(&s, RUN_LIMIT_NS, sim_all_done, &d));
	assert_int_equal(d.failed, 0);
	assert_int_equal(memcmp(mem[0], mem[1], MSG_BYTES), 0);
	assert_int_equal(s.bad_frames, 0);
	for (int i = 0; i < 2; i++) {
		ne_nic_get_work(s.nic[i], &out->work[i]);
		out->work[i].polls -= base[i].polls;
		out->work[i].qp_visits -= base[i].qp_visits;
		out->work[i].heap_moves -= base[i].heap_moves;
		out->work[i].qpc_probes -= base[i].qpc_probes;
		ne_nic_get_counters(s.nic[i], &out->cnt[i]);
	}
	out->done = d.got;
	out->nframes = s.nlog;
	out->log = malloc(s.nlog * sizeof(*s.log));
	assert_non_null(out->log);
	memcpy(out->log, s.log, s.nlog * sizeof(*s.log));
	sim_free(&s);
	free(mem[0]);
	free(mem[1]);
}

static void print_work(const char *what, const struct run *r)
{
	for (int i = 0; i < 2; i++)
		print_message("%s nic%d: frames %" PRIu64 " polls %" PRIu64 " qp_visits %" PRIu64
			      " heap_moves %" PRIu64 " qpc_probes %" PRIu64 "\n",
			      what, i, r->cnt[i].sent_pkts, r->work[i].polls, r->work[i].qp_visits,
			      r->work[i].heap_moves, r->work[i].qpc_probes);
}

static void test_idle_qps_cost_nothing(void **state)
{
	struct run one, many;

	(void)state;
	transfer(1, &one);
	transfer(MANY_IDLE, &many);
	print_work("1 idle QP    ", &one);
	print_work("1000 idle QPs", &many);

	/* the same transfer: same frames at the same times */
	assert_int_equal(one.nframes, many.nframes);
	for (size_t i = 0; i < one.nframes; i++) {
		assert_int_equal(one.log[i].t, many.log[i].t);
		assert_int_equal(one.log[i].from, many.log[i].from);
		assert_int_equal(one.log[i].opcode, many.log[i].opcode);
		assert_int_equal(one.log[i].psn, many.log[i].psn);
		assert_int_equal(one.log[i].len, many.log[i].len);
	}
	/* and the same work, counter by counter */
	for (int i = 0; i < 2; i++) {
		assert_true(one.work[i].polls > 0);
		assert_true(one.work[i].qp_visits > 0);
		assert_int_equal(one.work[i].polls, many.work[i].polls);
		assert_int_equal(one.work[i].qp_visits, many.work[i].qp_visits);
		assert_int_equal(one.work[i].heap_moves, many.work[i].heap_moves);
		assert_int_equal(one.work[i].qpc_probes, many.work[i].qpc_probes);
		assert_int_equal(one.cnt[i].qpc_misses, many.cnt[i].qpc_misses);
	}
	free(one.log);
	free(many.log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_qps_cost_nothing),
	};
	return cmocka_run_group_tests_name("ne_work", tests, NULL, NULL);
}
