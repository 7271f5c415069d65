/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The QP context cache with qpc_hold (issue 15): 64 QPs per connection and a
 * 64-entry cache. As in a ring collective, each NIC has a connection of 64
 * QPs on which it sends WRITEs and one of 64 QPs on which it receives them
 * (and sends ACKs): 128 contexts in use, twice what the cache holds. With a
 * fetched context held until its QP has sent, the transfer completes and
 * each NIC misses at most once per frame it sent plus once per QP:
 *     qpc_misses <= sent_pkts + QPs on the NIC
 * Without it the same transfer thrashes: QPs evict each other's contexts
 * while they wait out their misses (checked too, so the bound is not
 * trivially met).
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
#define QPS 64u                 /* per connection */
#define NIC_QPS (2u * QPS)      /* a sending and a receiving connection per NIC */
#define QPC_ENTRIES 64u
#define QPC_MISS_NS 2000u
#define MSG_BYTES (16u * 1024u)
#define MSGS_PER_QP 4u
#define MTU 4096u
#define WIRE_DELAY_NS 1000u
#define RUN_LIMIT_NS 50000000ull /* 50 ms: the transfer needs well under 1 ms at line rate */

struct outcome {
	bool completed;
	struct ne_counters cnt[2];
};

static void transfer(bool hold, struct outcome *out)
{
	struct ne_nic_config c[2];
	struct sim s;
	struct ne_cq *cq[2];
	uint8_t *mem[2];
	uint32_t key[2], q[2][NIC_QPS];
	struct sim_done d = {0};

	for (int i = 0; i < 2; i++) {
		sim_config(&c[i], i, G100);
		c[i].qpc_entries = QPC_ENTRIES;
		c[i].qpc_miss_ns = QPC_MISS_NS;
		c[i].qpc_hold = hold;
	}
	sim_init_cfg(&s, &c[0], &c[1], WIRE_DELAY_NS);
	assert_non_null(s.nic[0]);
	for (int i = 0; i < 2; i++) {
		cq[i] = ne_cq_create(s.nic[i], QPS * MSGS_PER_QP + 16);
		mem[i] = calloc(1, MSG_BYTES);
		assert_non_null(mem[i]);
		struct ne_mr_attr mr = {.addr = mem[i], .len = MSG_BYTES,
					.access = NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE};
		assert_int_equal(ne_mr_reg(s.nic[i], &mr, &key[i]), 0);
	}
	for (uint32_t k = 0; k < NIC_QPS; k++)
		sim_connect(&s, &q[0][k], &q[1][k], cq[0], cq[1], MTU, k, 1000 + k, 14, 7, 7);
	/* NIC 0 sends on QP pairs 0..63, NIC 1 on 64..127 */
	for (uint32_t m = 0; m < MSGS_PER_QP; m++)
		for (uint32_t k = 0; k < QPS; k++)
			for (int i = 0; i < 2; i++) {
				struct ne_send_wr wr = {.wr_id = k, .opcode = NE_WR_RDMA_WRITE,
							.send_flags = NE_SEND_SIGNALED, .length = MSG_BYTES,
							.lkey = key[i], .rkey = key[1 - i]};
				assert_int_equal(ne_post_send(s.nic[i], q[i][k + (uint32_t)i * QPS], &wr, 0),
						 0);
			}
	d.cq[0] = cq[0];
	d.cq[1] = cq[1];
	d.want = 2ull * QPS * MSGS_PER_QP;
	out->completed = sim_run(&s, RUN_LIMIT_NS, sim_all_done, &d);
	assert_int_equal(d.failed, 0);
	for (int i = 0; i < 2; i++)
		ne_nic_get_counters(s.nic[i], &out->cnt[i]);
	sim_free(&s);
	free(mem[0]);
	free(mem[1]);
}

static void test_qpc_hold_bounds_misses(void **state)
{
	struct outcome held, plain;

	(void)state;
	transfer(true, &held);
	transfer(false, &plain);
	for (int i = 0; i < 2; i++)
		print_message("nic%d: hold on: %s, sent %" PRIu64 ", misses %" PRIu64
			      " (bound %" PRIu64 "); hold off: %s, sent %" PRIu64 ", misses %" PRIu64 "\n",
			      i, held.completed ? "completed" : "NOT completed", held.cnt[i].sent_pkts,
			      held.cnt[i].qpc_misses, held.cnt[i].sent_pkts + NIC_QPS,
			      plain.completed ? "completed" : "not completed", plain.cnt[i].sent_pkts,
			      plain.cnt[i].qpc_misses);
	assert_true(held.completed);
	for (int i = 0; i < 2; i++) {
		assert_true(held.cnt[i].qpc_misses > 0); /* the cache is too small: it does miss */
		assert_true(held.cnt[i].qpc_misses <= held.cnt[i].sent_pkts + NIC_QPS);
		assert_int_equal(held.cnt[i].retrans_pkts, 0);
	}
	/* without holding, the same transfer thrashes past that bound */
	assert_true(plain.cnt[0].qpc_misses + plain.cnt[1].qpc_misses >
		    plain.cnt[0].sent_pkts + plain.cnt[1].sent_pkts + 2 * NIC_QPS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qpc_hold_bounds_misses),
	};
	return cmocka_run_group_tests_name("ne_qpc", tests, NULL, NULL);
}
