/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The QP context cache makes forward progress (issues 15 and 40): a context
 * fetched on a miss is held until its QP has sent a frame. As in a ring
 * collective, each NIC has a connection of QPS QPs on which it sends WRITEs
 * and one of QPS QPs on which it receives them (and sends ACKs): 2 x QPS
 * contexts in use, more than the cache holds.
 *
 * The bound, derived from the rule: a held context is resident, so a QP's
 * access hits from its miss until its next frame leaves; it can miss again
 * only after sending. Each QP misses at most once per frame it sends plus
 * once (its last fetch), so per NIC
 *     qpc_misses <= sent_pkts + QPs on the NIC.
 * And every QP on a NIC is used (it sends WRITEs or receives them) starting
 * from an empty cache, so each context is fetched at least once:
 *     qpc_misses >= QPs on the NIC.
 * Before the rule the 64-QP case livelocked: QPs waiting out their misses
 * evicted each other's contexts before any sent, and no WRITE completed.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ne_sim.h"

#define G100 100000000000ull
#define QPC_MISS_NS 2000u
#define MSG_BYTES (16u * 1024u)
#define MSGS_PER_QP 4u
#define MTU 4096u
#define WIRE_DELAY_NS 1000u
#define RUN_LIMIT_NS 50000000ull /* 50 ms: each transfer needs well under 1 ms at line rate */
#define MAX_QPS 64u              /* per connection, the most a case uses */

struct outcome {
	bool completed;
	struct ne_counters cnt[2];
};

static void make_nic_mem(struct sim *s, int i, struct ne_cq **cq, uint32_t qps, uint8_t **mem,
			 uint32_t *key)
{
	*cq = ne_cq_create(s->nic[i], qps * MSGS_PER_QP + 16);
	assert_non_null(*cq);
	*mem = calloc(1, MSG_BYTES);
	assert_non_null(*mem);
	struct ne_mr_attr mr = {.addr = *mem, .len = MSG_BYTES,
				.access = NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE};
	assert_int_equal(ne_mr_reg(s->nic[i], &mr, key), 0);
}

/* qps QPs per connection, a cache of `entries` contexts on each NIC; NIC 0
 * sends on QP pairs 0..qps-1, NIC 1 on qps..2*qps-1. */
static void transfer(uint32_t qps, uint32_t entries, bool hold, struct outcome *out)
{
	struct ne_nic_config c[2];
	struct sim s;
	struct ne_cq *cq[2];
	uint8_t *mem[2];
	uint32_t key[2], q[2][2 * MAX_QPS];
	struct sim_done d = {0};

	assert_true(qps <= MAX_QPS);
	for (int i = 0; i < 2; i++) {
		sim_config(&c[i], i, G100);
		c[i].qpc_entries = entries;
		c[i].qpc_miss_ns = QPC_MISS_NS;
		c[i].qpc_hold = hold;
	}
	sim_init_cfg(&s, &c[0], &c[1], WIRE_DELAY_NS);
	assert_non_null(s.nic[0]);
	for (int i = 0; i < 2; i++)
		make_nic_mem(&s, i, &cq[i], qps, &mem[i], &key[i]);
	for (uint32_t k = 0; k < 2 * qps; k++)
		sim_connect(&s, &q[0][k], &q[1][k], cq[0], cq[1], MTU, k, 1000 + k, 14, 7, 7);
	for (uint32_t m = 0; m < MSGS_PER_QP; m++)
		for (uint32_t k = 0; k < qps; k++)
			for (int i = 0; i < 2; i++) {
				struct ne_send_wr wr = {.wr_id = k, .opcode = NE_WR_RDMA_WRITE,
							.send_flags = NE_SEND_SIGNALED, .length = MSG_BYTES,
							.lkey = key[i], .rkey = key[1 - i]};
				assert_int_equal(ne_post_send(s.nic[i], q[i][k + (uint32_t)i * qps], &wr, 0),
						 0);
			}
	d.cq[0] = cq[0];
	d.cq[1] = cq[1];
	d.want = 2ull * qps * MSGS_PER_QP;
	out->completed = sim_run(&s, RUN_LIMIT_NS, sim_all_done, &d);
	assert_int_equal(d.failed, 0);
	for (int i = 0; i < 2; i++)
		ne_nic_get_counters(s.nic[i], &out->cnt[i]);
	sim_free(&s);
	free(mem[0]);
	free(mem[1]);
}

/* The transfer completes without a retransmission and each NIC's misses lie
 * between the bounds of the header. */
static void check_progress(uint32_t qps, uint32_t entries)
{
	struct outcome o;
	uint64_t nic_qps = 2ull * qps;

	transfer(qps, entries, false, &o);
	for (int i = 0; i < 2; i++)
		print_message("%u QPs per connection, %u entries: nic%d %s, sent %" PRIu64
			      ", misses %" PRIu64 " (bounds %" PRIu64 "..%" PRIu64 ")\n",
			      qps, entries, i, o.completed ? "completed" : "NOT completed",
			      o.cnt[i].sent_pkts, o.cnt[i].qpc_misses, nic_qps,
			      o.cnt[i].sent_pkts + nic_qps);
	assert_true(o.completed);
	for (int i = 0; i < 2; i++) {
		assert_true(o.cnt[i].qpc_misses >= nic_qps);
		assert_true(o.cnt[i].qpc_misses <= o.cnt[i].sent_pkts + nic_qps);
		assert_int_equal(o.cnt[i].retrans_pkts, 0);
	}
}

/* 64 QPs per connection, 64 entries: the case that livelocked (128 contexts
 * in use per NIC, twice the cache). */
static void test_qpc_64_qps_progress(void **state)
{
	(void)state;
	check_progress(64, 64);
}

/* Many contexts competing for very few entries: 32 QPs per connection, 64
 * contexts in use per NIC, 2 entries. */
static void test_qpc_tiny_cache_progress(void **state)
{
	(void)state;
	check_progress(32, 2);
}

/* hold=on|off is accepted and changes nothing: the same counters. */
static void test_qpc_hold_ignored(void **state)
{
	struct outcome on, off;

	(void)state;
	transfer(16, 8, true, &on);
	transfer(16, 8, false, &off);
	assert_true(on.completed);
	assert_true(off.completed);
	for (int i = 0; i < 2; i++) {
		assert_true(off.cnt[i].qpc_misses > 0);
		assert_int_equal(on.cnt[i].qpc_misses, off.cnt[i].qpc_misses);
		assert_int_equal(on.cnt[i].qpc_hits, off.cnt[i].qpc_hits);
		assert_int_equal(on.cnt[i].sent_pkts, off.cnt[i].sent_pkts);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qpc_64_qps_progress),
		cmocka_unit_test(test_qpc_tiny_cache_progress),
		cmocka_unit_test(test_qpc_hold_ignored),
	};
	return cmocka_run_group_tests_name("ne_qpc", tests, NULL, NULL);
}
