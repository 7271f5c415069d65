/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_flows shared by two threads (dp_flows_share: partitions' switches), the
 * way the live clock's partitions record: the table's counts must be those of
 * one thread doing all of it. EAL in memory, no hugepages, nothing on disk.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_hash.h>

#include "dp_eal.h"
#include "dp_flows.h"

#define FLOWS 2
#define ROUNDS 1000000

static struct dp_flows fl;
static int32_t slot[FLOWS];
static pthread_barrier_t start; /* the threads begin together: their records overlap */

static void pkt_of(struct rl_pkt *p, uint32_t flow)
{
	memset(p, 0, sizeof(*p));
	p->ip_version = 4;
	p->proto = 17;
	p->src[0] = 10;
	p->dst[0] = 11;
	p->sport = (uint16_t)(1000 + flow);
	p->dport = 9;
}

/* Switch sw's thread: each round, every flow leaves sw by port round % 2 (a path change each round). */
struct hop_thread {
	uint32_t sw;
	int first_hop;
};

static void *record_hops(void *arg)
{
	const struct hop_thread *h = arg;

	pthread_barrier_wait(&start);
	for (uint32_t r = 0; r < ROUNDS; r++)
		for (uint32_t f = 0; f < FLOWS; f++)
			dp_flows_record_slot(&fl, slot[f], 100, h->sw, (uint16_t)(r % 2), h->first_hop,
					     (struct dp_flow_when){.at = 1000 + h->sw, .key = h->sw});
	return NULL;
}

static void test_one_thread(void **state)
{
	struct rl_pkt p;
	char err[128];

	(void)state;
	assert_int_equal(dp_flows_init(&fl, 64, err, sizeof(err)), 0);
	pkt_of(&p, 0);
	int32_t s = dp_flows_record(&fl, &p, 100, 0, 1, 1, (struct dp_flow_when){10, 1});
	assert_true(s >= 0);
	assert_int_equal(dp_flows_record(&fl, &p, 100, 0, 1, 1, (struct dp_flow_when){20, 2}), s);
	dp_flows_record_slot(&fl, s, 100, 3, 5, 0, (struct dp_flow_when){30, 3});
	dp_flows_record_slot(&fl, s, 100, 3, 5, 0, (struct dp_flow_when){40, 4}); /* same port: no change */
	dp_flows_record_slot(&fl, s, 100, 3, 6, 0, (struct dp_flow_when){50, 5}); /* another port: a change */
	const struct dp_flow *f = &fl.flow[s];
	assert_int_equal(f->pkts, 2);
	assert_int_equal(f->bytes, 200);
	assert_int_equal(f->n_hops, 2);
	assert_int_equal(f->hop_switch[0], 0);
	assert_int_equal(f->hop_switch[1], 3);
	assert_int_equal(f->hop_port[1], 6);
	assert_int_equal(f->hop_at[1], 30); /* when the hop was first recorded */
	assert_int_equal(f->path_changes, 1);
	assert_int_equal(f->key.sport, 1000);
	dp_flows_free(&fl);
}

/*
 * Three switches, one thread each (as in three partitions): the first hop
 * (sw 0, which counts packets) and two more, every flow's port changing at
 * each of them every round at once: the path changes of all threads add up
 * on one counter, and each switch is one hop whichever thread came first.
 */
static void test_two_threads(void **state)
{
	struct rl_pkt p;
	char err[128];
	pthread_t th[3];
	struct hop_thread h[3] = {{0, 1}, {1, 0}, {2, 0}};

	(void)state;
	assert_int_equal(dp_flows_init(&fl, 64, err, sizeof(err)), 0);
	dp_flows_share(&fl);
	for (uint32_t f = 0; f < FLOWS; f++) {
		pkt_of(&p, f);
		slot[f] = dp_flows_record(&fl, &p, 100, 0, 0, 0, (struct dp_flow_when){1, 0});
		assert_true(slot[f] >= 0);
	}
	pthread_barrier_init(&start, NULL, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, record_hops, &h[i]), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&start);
	for (uint32_t f = 0; f < FLOWS; f++) {
		const struct dp_flow *x = &fl.flow[slot[f]];
		assert_int_equal(x->pkts, ROUNDS);
		assert_int_equal(x->bytes, (uint64_t)ROUNDS * 100);
		assert_int_equal(x->n_hops, 3); /* each switch once, whichever thread appended first */
		bool seen[3] = {false, false, false};
		for (int i = 0; i < 3; i++) {
			assert_true(x->hop_switch[i] < 3);
			assert_false(seen[x->hop_switch[i]]);
			seen[x->hop_switch[i]] = true;
		}
		/* sw 0: port 0 then 1, 0, ...: ROUNDS - 1 changes (its first round matches
		 * the hop recorded at set-up); sw 1 and sw 2: ROUNDS - 1 each */
		assert_int_equal(x->path_changes, 3 * ((uint64_t)ROUNDS - 1));
	}
	dp_flows_free(&fl);
}

/* Flow f of MEMO_FLOWS: addresses and ports all vary (so memo entries collide), RoCE every third. */
#define MEMO_FLOWS 12288
static void memo_pkt(struct rl_pkt *p, uint32_t f)
{
	pkt_of(p, f % 50);
	p->src[3] = (uint8_t)(f / 50);
	p->dst[2] = (uint8_t)(f % 7);
	p->is_roce = f % 3 == 0;
	p->bth.dqpn = p->is_roce ? 0x100 + f % 11 : 0x55; /* (not part of a non-RoCE flow's key) */
}

static int32_t memo_slot[MEMO_FLOWS];

/*
 * Each thread records every flow twice over, in its own order, as switch t;
 * thread 0 as the flows' first hop (the one that counts packets: a flow has
 * one first hop, in one partition, and its count is not atomic).
 */
static void *record_memo(void *arg)
{
	uintptr_t t = (uintptr_t)arg;
	struct rl_pkt p;

	pthread_barrier_wait(&start);
	for (uint32_t r = 0; r < 2; r++)
		for (uint32_t i = 0; i < MEMO_FLOWS; i++) {
			uint32_t f = t ? MEMO_FLOWS - 1 - i : i;
			memo_pkt(&p, f);
			int32_t s = dp_flows_record(&fl, &p, 10, (uint32_t)t, 1, t == 0, (struct dp_flow_when){r, t});
			if (s != __atomic_load_n(&memo_slot[f], __ATOMIC_RELAXED) && r == 1)
				return (void *)1; /* (the first round's slots are all known by now) */
			__atomic_store_n(&memo_slot[f], s, __ATOMIC_RELAXED);
		}
	return NULL;
}

/*
 * The memo of recent flows in front of the hash: 12,288 flows in a memo of
 * 32,768 entries (about 1,800 entries shared by two flows or more, for a
 * uniform mix), recorded by two threads at once, each twice. Every record
 * of a flow gets the same slot as the table's own lookup, no two flows
 * share a slot, and each flow has its first hop's packets and both threads' hops.
 */
static void test_memo(void **state)
{
	struct rl_pkt p;
	char err[128];
	pthread_t th[2];
	void *bad[2];

	(void)state;
	/* a table of 2 x MEMO_FLOWS: a memo of 32,768 entries */
	assert_int_equal(dp_flows_init(&fl, 2 * MEMO_FLOWS, err, sizeof(err)), 0);
	dp_flows_share(&fl);
	pthread_barrier_init(&start, NULL, 2);
	for (uintptr_t i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, record_memo, (void *)i), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], &bad[i]);
	pthread_barrier_destroy(&start);
	assert_null(bad[0]);
	assert_null(bad[1]);
	assert_int_equal(dp_flows_count(&fl), MEMO_FLOWS);
	for (uint32_t f = 0; f < MEMO_FLOWS; f++) {
		struct dp_flow_key k;
		memo_pkt(&p, f);
		const struct dp_flow *x = &fl.flow[memo_slot[f]];
		assert_int_equal(x->pkts, 2); /* thread 0's 2 rounds */
		assert_int_equal(x->n_hops, 2); /* switch 0's and switch 1's */
		assert_int_not_equal(x->hop_switch[0], x->hop_switch[1]);
		assert_int_equal(x->key.sport, p.sport);
		assert_memory_equal(x->key.src, p.src, 16);
		assert_memory_equal(x->key.dst, p.dst, 16);
		assert_int_equal(x->key.dqpn, p.is_roce ? p.bth.dqpn : 0);
		k = x->key;
		assert_int_equal(rte_hash_lookup(fl.h, &k), memo_slot[f]);
	}
	assert_int_equal(fl.untracked, 0);
	dp_flows_free(&fl);
}

/* Record each of n flows (memo_pkt) once; every record must get the flow's slot in want[] (-1: learn it). */
static void record_all(uint32_t n, int32_t *want)
{
	struct rl_pkt p;

	for (uint32_t f = 0; f < n; f++) {
		memo_pkt(&p, f);
		int32_t s = dp_flows_record(&fl, &p, 10, 0, 1, 1, (struct dp_flow_when){1, 0});
		assert_true(s >= 0);
		if (want[f] < 0)
			want[f] = s;
		assert_int_equal(s, want[f]);
	}
}

/*
 * The memo is used, and only a hint: 64 flows recorded 10 times go to the
 * hash once each. Then every memo entry is made to point at another flow's
 * slot (its signature kept): each flow must still get its own slot (the
 * key is compared), going to the hash once more, which mends the memo.
 */
static void test_memo_hint(void **state)
{
	char err[128];
	int32_t want[64];

	(void)state;
	memset(want, 0xff, sizeof(want));
	assert_int_equal(dp_flows_init(&fl, 65536, err, sizeof(err)), 0);
	for (int r = 0; r < 10; r++)
		record_all(64, want);
	assert_int_equal(fl.memo_misses, 64);
	uint32_t planted = 0;
	for (uint32_t i = 0; i <= fl.memo_mask; i++) {
		uint64_t e = fl.memo[i];
		if ((uint32_t)e == 0)
			continue;
		int32_t held = (int32_t)(uint32_t)e - 1, other = -1;
		for (uint32_t f = 0; f < 64 && other < 0; f++)
			if (want[f] != held)
				other = want[f];
		fl.memo[i] = (e & 0xffffffff00000000ull) | (uint32_t)(other + 1);
		planted++;
	}
	assert_int_equal(planted, 64); /* (no two of these flows share an entry) */
	record_all(64, want);
	assert_int_equal(fl.memo_misses, 128);
	record_all(64, want);
	assert_int_equal(fl.memo_misses, 128);
	assert_int_equal(dp_flows_count(&fl), 64);
	assert_int_equal(fl.flow[want[0]].pkts, 12);
	dp_flows_free(&fl);
}

int main(void)
{
	static const char *const args[] = {"test_flows_shared", "-l0", "--no-huge", "-m64", "--no-pci",
					   "--no-telemetry", "--log-level=*:warning"};
	struct dp_eal e = {0};
	char prefix[64], err[256];
	int rc = 1;

	snprintf(prefix, sizeof(prefix), "rl-tflows-%d", (int)getpid());
	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
		dp_eal_add(&e, args[i]);
	if (dp_eal_set_prefix(&e, prefix) < 0 || dp_eal_start(&e, err, sizeof(err)) < 0) {
		fprintf(stderr, "test_flows_shared: EAL: %s\n", err);
	} else {
		const struct CMUnitTest tests[] = {
			cmocka_unit_test(test_one_thread),
			cmocka_unit_test(test_two_threads),
			cmocka_unit_test(test_memo),
			cmocka_unit_test(test_memo_hint),
		};
		rc = cmocka_run_group_tests(tests, NULL, NULL);
	}
	dp_eal_stop(&e); /* (removes the runtime directory) */
	return rc;
}
