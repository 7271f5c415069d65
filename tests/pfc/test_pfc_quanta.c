/* SPDX-License-Identifier: BSD-3-Clause */
/* Quanta arithmetic at 10, 100 and 400 Gbit/s, and the egress pause state driven by it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pfc_frame.h"
#include "pfc_pause.h"

#define G 1000000000ull

static void test_quanta_to_ns(void **state)
{
	(void)state;
	/* one quantum = 512 bit times: 51.2 ns at 10G, 5.12 ns at 100G, 1.28 ns at 400G,
	 * rounded up to whole ns */
	assert_int_equal(pfc_quanta_to_ns(1, 10 * G), 52);
	assert_int_equal(pfc_quanta_to_ns(1, 100 * G), 6);
	assert_int_equal(pfc_quanta_to_ns(1, 400 * G), 2);
	/* exact multiples */
	assert_int_equal(pfc_quanta_to_ns(5, 10 * G), 256);
	assert_int_equal(pfc_quanta_to_ns(25, 100 * G), 128);
	assert_int_equal(pfc_quanta_to_ns(100, 400 * G), 128);
	/* the maximum pause: 65535 x 512 bits */
	assert_int_equal(pfc_quanta_to_ns(0xffff, 10 * G), 3355392);  /* exact */
	assert_int_equal(pfc_quanta_to_ns(0xffff, 100 * G), 335540);  /* 335539.2 */
	assert_int_equal(pfc_quanta_to_ns(0xffff, 400 * G), 83885);   /* 83884.8 */
	/* 25G and 1G for good measure; 0 rate and 0 quanta */
	assert_int_equal(pfc_quanta_to_ns(0xffff, 25 * G), 1342157);  /* 1342156.8 */
	assert_int_equal(pfc_quanta_to_ns(1, 1 * G), 512);
	assert_int_equal(pfc_quanta_to_ns(1, 0), 0);
	assert_int_equal(pfc_quanta_to_ns(0, 100 * G), 0);
}

static void test_ns_to_quanta(void **state)
{
	(void)state;
	assert_int_equal(pfc_ns_to_quanta(1000, 10 * G), 20);   /* 19.53 -> 20 */
	assert_int_equal(pfc_ns_to_quanta(1000, 100 * G), 196); /* 195.3 -> 196 */
	assert_int_equal(pfc_ns_to_quanta(1000, 400 * G), 782); /* 781.25 -> 782 */
	assert_int_equal(pfc_ns_to_quanta(256, 10 * G), 5);     /* exact */
	assert_int_equal(pfc_ns_to_quanta(1, 100 * G), 1);
	assert_int_equal(pfc_ns_to_quanta(0, 100 * G), 0);
	assert_int_equal(pfc_ns_to_quanta(1000000000, 10 * G), 0xffff); /* 1 s saturates */
	assert_int_equal(pfc_ns_to_quanta(1000000000000ull, 400 * G), 0xffff);
	/* round trip covers the asked duration and is the smallest that does */
	const uint64_t rates[] = { 10 * G, 100 * G, 400 * G };
	for (unsigned r = 0; r < 3; r++)
		for (uint64_t ns = 1; ns < 10000000; ns = ns * 3 + 1) {
			uint16_t q = pfc_ns_to_quanta(ns, rates[r]);
			if (ns > pfc_quanta_to_ns(0xffff, rates[r])) {
				assert_int_equal(q, 0xffff); /* beyond the longest pause: saturated */
				continue;
			}
			assert_true(pfc_quanta_to_ns(q, rates[r]) >= ns);
			assert_true(q == 1 || pfc_quanta_to_ns(q - 1, rates[r]) <= ns);
		}
}

static void xoff(struct pfc_pause *ps, unsigned prio, uint16_t quanta, uint64_t now)
{
	struct pfc_frame f;
	pfc_frame_init(&f, NULL);
	pfc_frame_set(&f, prio, quanta);
	uint8_t buf[60];
	pfc_frame_encode(&f, buf, sizeof(buf));
	assert_int_equal(pfc_pause_rx(ps, buf, sizeof(buf), now), PFC_FRAME_OK);
}

static void test_pause_state(void **state)
{
	(void)state;
	const uint64_t rates[] = { 10 * G, 100 * G, 400 * G };
	for (unsigned r = 0; r < 3; r++) {
		struct pfc_pause ps;
		assert_int_equal(pfc_pause_init(&ps, rates[r], NULL, 0), 0);
		const uint64_t t0 = 1000000;
		const uint64_t d = pfc_quanta_to_ns(1000, rates[r]);
		xoff(&ps, 3, 1000, t0);
		/* paused exactly [t0, t0 + d) for priority 3 only */
		assert_false(pfc_pause_may_send(&ps, 3, t0));
		assert_false(pfc_pause_may_send(&ps, 3, t0 + d - 1));
		assert_true(pfc_pause_may_send(&ps, 3, t0 + d));
		assert_true(pfc_pause_may_send(&ps, 2, t0));
		assert_int_equal(pfc_pause_expiry_ns(&ps, 3), t0 + d);
		assert_int_equal(pfc_pause_mask(&ps, t0), 1u << 3);
		assert_int_equal(pfc_pause_next_expiry_ns(&ps, t0), t0 + d);
		/* a refresh at half time extends the pause to refresh + d */
		xoff(&ps, 3, 1000, t0 + d / 2);
		assert_false(pfc_pause_may_send(&ps, 3, t0 + d));
		assert_int_equal(pfc_pause_expiry_ns(&ps, 3), t0 + d / 2 + d);
		/* XON ends it at once */
		xoff(&ps, 3, 0, t0 + d);
		assert_true(pfc_pause_may_send(&ps, 3, t0 + d));
		assert_int_equal(pfc_pause_mask(&ps, t0 + d), 0);
		assert_int_equal(pfc_pause_next_expiry_ns(&ps, t0 + d), UINT64_MAX);
		assert_int_equal(pfc_pause_paused_ns(&ps, 3, t0 + 10 * d), d);
		/* a new pause later adds its time */
		xoff(&ps, 3, 1000, t0 + 5 * d);
		assert_int_equal(pfc_pause_paused_ns(&ps, 3, t0 + 5 * d + d / 4), d + d / 4);
		assert_int_equal(pfc_pause_paused_ns(&ps, 3, t0 + 20 * d), 2 * d);
		assert_int_equal(ps.xoff_rx[3], 3);
		assert_int_equal(ps.xon_rx[3], 1);
	}
	struct pfc_pause ps;
	char err[128] = "";
	assert_int_equal(pfc_pause_init(&ps, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "rate"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quanta_to_ns),
		cmocka_unit_test(test_ns_to_quanta),
		cmocka_unit_test(test_pause_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
