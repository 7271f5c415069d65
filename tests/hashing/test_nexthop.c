/* SPDX-License-Identifier: BSD-3-Clause */
/* Next-hop choice: modulo and resilient ECMP, flowlet switching, path pinning. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rl_hash.h"
#include "rl_nexthop.h"

#define NFLOWS 20000

static uint32_t flow_hash(uint32_t i)
{
	return rl_crc32(0, &i, sizeof(i));
}

static void test_modulo(void **state)
{
	(void)state;
	assert_int_equal(rl_ecmp_modulo(10, 4), 2);
	assert_int_equal(rl_ecmp_modulo(10, 0), -EINVAL);
}

/* Removing one of 8 members moves exactly the flows that were on it; adding it back moves only flows onto it. */
static void test_resilient_remove_add(void **state)
{
	(void)state;
	struct rl_resilient rs;
	int *before = malloc(NFLOWS * sizeof(int)), *after = malloc(NFLOWS * sizeof(int));

	assert_int_equal(rl_resilient_init(&rs, 256, 8), 0);
	for (int m = 0; m < 8; m++)
		assert_int_equal(rs.load[m], 32);
	for (uint32_t i = 0; i < NFLOWS; i++)
		before[i] = rl_resilient_select(&rs, flow_hash(i));

	assert_int_equal(rl_resilient_remove(&rs, 3), 32);
	assert_int_equal(rl_resilient_remove(&rs, 3), -ENOENT);
	unsigned moved = 0, on3 = 0;
	for (uint32_t i = 0; i < NFLOWS; i++) {
		after[i] = rl_resilient_select(&rs, flow_hash(i));
		assert_int_not_equal(after[i], 3);
		if (before[i] == 3)
			on3++;
		else
			assert_int_equal(after[i], before[i]); /* nobody else moved */
		moved += after[i] != before[i];
	}
	assert_int_equal(moved, on3);
	assert_true(on3 > 0);
	/* remaining loads balanced within one bucket: 256/7 = 36.57 */
	for (int m = 0; m < 8; m++)
		if (m != 3)
			assert_in_range(rs.load[m], 36, 37);

	/* add it back: flows move only onto member 3, loads balanced again */
	assert_int_equal(rl_resilient_add(&rs, 3), 32);
	assert_int_equal(rl_resilient_add(&rs, 3), -EEXIST);
	for (uint32_t i = 0; i < NFLOWS; i++) {
		int now = rl_resilient_select(&rs, flow_hash(i));
		if (now != after[i])
			assert_int_equal(now, 3);
	}
	for (int m = 0; m < 8; m++)
		assert_int_equal(rs.load[m], 32);

	/* emptying the group: select says no member */
	for (unsigned m = 0; m < 8; m++)
		assert_true(rl_resilient_remove(&rs, m) >= 0);
	assert_int_equal(rl_resilient_select(&rs, 1), -ENOENT);
	assert_int_equal(rl_resilient_add(&rs, 5), 256);
	assert_int_equal(rl_resilient_select(&rs, 1), 5);

	rl_resilient_free(&rs);
	free(before);
	free(after);
}

static void test_resilient_bad_args(void **state)
{
	(void)state;
	struct rl_resilient rs;

	assert_int_equal(rl_resilient_init(&rs, 100, 4), -EINVAL); /* not a power of two */
	assert_int_equal(rl_resilient_init(&rs, 256, 0), -EINVAL);
	assert_int_equal(rl_resilient_init(&rs, 256, RL_NH_MAX_MEMBERS + 1), -EINVAL);
	rl_resilient_free(&rs); /* safe on a failed init */
	assert_int_equal(rl_resilient_init(&rs, 64, 4), 0);
	assert_int_equal(rl_resilient_remove(&rs, 64), -EINVAL);
	assert_int_equal(rl_resilient_add(&rs, 99), -EINVAL);
	rl_resilient_free(&rs);
}

/* Packets closer than the timeout keep their member; after a longer gap flows re-pick. */
static void test_flowlet_gap(void **state)
{
	(void)state;
	struct rl_flowlet fl;
	const uint64_t us = 1000, timeout = 100 * us;
	int first[256];

	assert_int_equal(rl_flowlet_init(&fl, 1024, timeout, 42), 0);
	for (uint32_t f = 0; f < 256; f++)
		first[f] = rl_flowlet_select(&fl, f, 0, 4, 0xf);
	assert_int_equal(fl.flowlets, 256);
	assert_int_equal(fl.switches, 0);

	/* a train of packets 50 us apart, up to 1 ms: never a new flowlet */
	for (uint64_t t = 50 * us; t <= 1000 * us; t += 50 * us)
		for (uint32_t f = 0; f < 256; f++)
			assert_int_equal(rl_flowlet_select(&fl, f, t, 4, 0xf), first[f]);
	assert_int_equal(fl.flowlets, 256);

	/* then a 200 us gap: every flow starts a new flowlet, about 3/4 change member */
	unsigned changed = 0;
	for (uint32_t f = 0; f < 256; f++)
		changed += rl_flowlet_select(&fl, f, 1200 * us, 4, 0xf) != first[f];
	assert_int_equal(fl.flowlets, 512);
	assert_int_equal(fl.switches, changed);
	assert_in_range(changed, 150, 230);
	assert_int_equal(fl.packets, 256 * 22);

	rl_flowlet_free(&fl);
}

/* A flow whose member goes down moves at once, whatever the gap; none usable gives -1. */
static void test_flowlet_member_down(void **state)
{
	(void)state;
	struct rl_flowlet fl;

	assert_int_equal(rl_flowlet_init(&fl, 16, 1000, 7), 0);
	int m = rl_flowlet_select(&fl, 5, 0, 4, 0xf);
	int m2 = rl_flowlet_select(&fl, 5, 10, 4, 0xf & ~(1u << m));
	assert_int_not_equal(m2, m);
	assert_int_equal(fl.switches, 1);
	assert_int_equal(rl_flowlet_select(&fl, 5, 20, 4, 0), -ENOENT);
	/* members beyond n_members are never chosen */
	for (int i = 0; i < 100; i++)
		assert_in_range(rl_flowlet_select(&fl, (uint32_t)i, 1000000u * (uint64_t)i, 2, ~0ull), 0, 1);
	rl_flowlet_free(&fl);
	assert_int_equal(rl_flowlet_init(&fl, 1000, 1, 1), -EINVAL); /* not a power of two */
}

static void test_pinning(void **state)
{
	(void)state;
	/* each destination slot under a leaf has its own uplink */
	for (uint32_t h = 0; h < 16; h++)
		assert_int_equal(rl_pin_select(h, 4, 0xf), (int)(h % 4));
	/* uplink 2 down: its destinations take the next one, others stay */
	assert_int_equal(rl_pin_select(2, 4, 0xb), 3);
	assert_int_equal(rl_pin_select(6, 4, 0xb), 3);
	assert_int_equal(rl_pin_select(1, 4, 0xb), 1);
	assert_int_equal(rl_pin_select(3, 4, 0x3), 0); /* wraps around */
	assert_int_equal(rl_pin_select(3, 4, 0), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modulo),
		cmocka_unit_test(test_resilient_remove_add),
		cmocka_unit_test(test_resilient_bad_args),
		cmocka_unit_test(test_flowlet_gap),
		cmocka_unit_test(test_flowlet_member_down),
		cmocka_unit_test(test_pinning),
	};
	return cmocka_run_group_tests_name("nexthop", tests, NULL, NULL);
}
