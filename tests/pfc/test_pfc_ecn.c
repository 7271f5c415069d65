/* SPDX-License-Identifier: BSD-3-Clause */
/* ECN: RED-style marking probability grows from 0 at kmin to pmax below kmax, 1 above. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pfc_mmu.h"

#define KB    1000ull
#define FRAME 1024u
#define KMIN  (100 * KB)
#define KMAX  (200 * KB)
#define PMAX  0.2

static const struct pfc_ecn_config red = {
	.enabled = true, .kmin_bytes = KMIN, .kmax_bytes = KMAX, .pmax = PMAX,
};

static void test_probability(void **state)
{
	(void)state;
	assert_true(pfc_ecn_probability(&red, 0) == 0.0);
	assert_true(pfc_ecn_probability(&red, KMIN) == 0.0);
	assert_true(pfc_ecn_probability(&red, 150 * KB) > 0.0999);
	assert_true(pfc_ecn_probability(&red, 150 * KB) < 0.1001);
	assert_true(pfc_ecn_probability(&red, KMAX - 1) < PMAX);
	assert_true(pfc_ecn_probability(&red, KMAX - 1) > PMAX - 0.001);
	assert_true(pfc_ecn_probability(&red, KMAX) == 1.0);
	assert_true(pfc_ecn_probability(&red, 10 * KMAX) == 1.0);
	double last = 0;
	for (uint64_t q = KMIN; q < KMAX; q += 997) {
		double p = pfc_ecn_probability(&red, q);
		assert_true(p >= last);
		last = p;
	}
	struct pfc_ecn_config off = red;
	off.enabled = false;
	assert_true(pfc_ecn_probability(&off, 10 * KMAX) == 0.0);
	assert_true(pfc_ecn_probability(NULL, 10 * KMAX) == 0.0);
}

static struct pfc_mmu *make(uint64_t seed, uint32_t (*rnd)(void *), void *ctx)
{
	struct pfc_mmu_config cfg;
	pfc_mmu_config_init(&cfg, pfc_buffer_profile_find("shallow"), 2, NULL);
	cfg.lossless_mask = 0;
	cfg.seed = seed;
	cfg.rand32 = rnd;
	cfg.rand_ctx = ctx;
	char err[256];
	struct pfc_mmu *m = pfc_mmu_create(&cfg, err, sizeof(err));
	if (!m)
		fail_msg("%s", err);
	assert_int_equal(pfc_mmu_set_ecn(m, 1, 0, &red, err, sizeof(err)), 0);
	return m;
}

/* Hold the queue at level bytes, then admit+dequeue n ECT packets: the fraction marked. */
static double mark_fraction(struct pfc_mmu *m, uint64_t level, unsigned n, uint8_t *trace)
{
	struct pfc_mmu_pkt fill = { .len = FRAME, .in_port = 0, .out_port = 1, .prio = 0 };
	for (uint64_t b = 0; b < level; b += FRAME)
		assert_int_equal(pfc_mmu_admit(m, &fill, 0, NULL), PFC_MMU_ADMIT);
	assert_int_equal(pfc_mmu_queue(m, 1, 0)->bytes, level);
	struct pfc_mmu_pkt pk = fill;
	pk.ect = true;
	unsigned marked = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned fl;
		assert_int_equal(pfc_mmu_admit(m, &pk, 0, &fl), PFC_MMU_ADMIT);
		if (fl & PFC_MMU_F_ECN_CE)
			marked++;
		if (trace)
			trace[i] = (fl & PFC_MMU_F_ECN_CE) != 0;
		pfc_mmu_dequeue(m, &pk, 0);
	}
	for (uint64_t b = 0; b < level; b += FRAME)
		pfc_mmu_dequeue(m, &fill, 0);
	assert_int_equal(pfc_mmu_queue(m, 1, 0)->bytes, 0);
	return (double)marked / n;
}

static void test_marking_grows(void **state)
{
	(void)state;
	struct pfc_mmu *m = make(7, NULL, NULL);
	const unsigned n = 20000;
	/* levels in whole frames (bytes held = level) */
	const uint64_t levels[] = { 50 * FRAME, 98 * FRAME, 110 * FRAME, 130 * FRAME,
				    150 * FRAME, 170 * FRAME, 190 * FRAME, 196 * FRAME, 250 * FRAME };
	double last = -1;
	for (unsigned i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		double f = mark_fraction(m, levels[i], n, NULL);
		double want = pfc_ecn_probability(&red, levels[i]);
		print_message("  queue %6llu bytes: marked %.4f, expected %.4f\n",
			      (unsigned long long)levels[i], f, want);
		/* within 5 standard deviations of the binomial */
		assert_true(f >= want - 0.015 && f <= want + 0.015);
		if (levels[i] > KMIN && levels[i] < KMAX)
			assert_true(f > last); /* strictly grows between kmin and kmax */
		else
			assert_true(f >= last);
		last = f;
	}
	assert_true(mark_fraction(m, 50 * FRAME, n, NULL) == 0.0); /* below kmin: never */
	assert_true(mark_fraction(m, 250 * FRAME, n, NULL) == 1.0); /* above kmax: always */
	/* packets that are not ECN-capable are never marked */
	struct pfc_mmu_pkt fill = { .len = FRAME, .in_port = 0, .out_port = 1, .prio = 0 };
	for (unsigned i = 0; i < 300; i++) {
		unsigned fl;
		assert_int_equal(pfc_mmu_admit(m, &fill, 0, &fl), PFC_MMU_ADMIT);
		assert_int_equal(fl & PFC_MMU_F_ECN_CE, 0);
	}
	assert_int_equal(pfc_mmu_stats(m)->ecn_marked, pfc_mmu_queue(m, 1, 0)->ecn_marked);
	pfc_mmu_destroy(m);
}

static void test_deterministic(void **state)
{
	(void)state;
	static uint8_t a[5000], b[5000], c[5000];
	struct pfc_mmu *m1 = make(99, NULL, NULL), *m2 = make(99, NULL, NULL), *m3 = make(100, NULL, NULL);
	mark_fraction(m1, 150 * FRAME, 5000, a);
	mark_fraction(m2, 150 * FRAME, 5000, b);
	mark_fraction(m3, 150 * FRAME, 5000, c);
	assert_memory_equal(a, b, sizeof(a));        /* same seed, same marks */
	assert_memory_not_equal(a, c, sizeof(a));    /* another seed, other marks */
	pfc_mmu_destroy(m1);
	pfc_mmu_destroy(m2);
	pfc_mmu_destroy(m3);
}

static uint32_t fixed_rand(void *ctx)
{
	return *(uint32_t *)ctx;
}

static void test_caller_random_source(void **state)
{
	(void)state;
	/* p x 2^32 against the caller's number: 0 always marks, ~0 never (below kmax) */
	uint32_t r = 0;
	struct pfc_mmu *m = make(1, fixed_rand, &r);
	assert_true(mark_fraction(m, 101 * FRAME, 100, NULL) == 1.0);
	r = UINT32_MAX;
	assert_true(mark_fraction(m, 195 * FRAME, 100, NULL) == 0.0);
	assert_true(mark_fraction(m, 200 * FRAME, 100, NULL) == 1.0); /* >= kmax: always */
	/* numbers just below / above p x 2^32 mark / do not */
	uint64_t q = 150 * FRAME; /* 153600 bytes: p = 0.2 * 53600 / 100000 = 0.1072 */
	r = (uint32_t)(pfc_ecn_probability(&red, q) * 4294967296.0) - 16;
	assert_true(mark_fraction(m, q, 10, NULL) == 1.0);
	r += 32;
	assert_true(mark_fraction(m, q, 10, NULL) == 0.0);
	pfc_mmu_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probability),
		cmocka_unit_test(test_marking_grows),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_caller_random_source),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
