/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * static vs shared partitioning of the same buffer (4 ports, 4 MiB, lossy
 * priority 0, no draining):
 *  - a 1.5 MiB burst from one port to one egress fits in shared mode and
 *    overflows the 1 MiB static share;
 *  - isolation: in static mode a hot port that fills its share cannot take
 *    anything from the others (a second port still gets its whole share),
 *    whereas in shared mode with a large alpha the hot port leaves the
 *    second port less than a static share.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pfc_mmu.h"

#define MIB   (1ull << 20)
#define FRAME 1024u /* 4 cells of 256: bytes held = bytes sent */

static struct pfc_mmu *make(enum pfc_mmu_mode mode, double alpha)
{
	struct pfc_mmu_config cfg;
	pfc_mmu_config_init(&cfg, pfc_buffer_profile_find(mode == PFC_MMU_STATIC ? "deep" : "shallow"),
			    4, NULL);
	cfg.buffer_bytes = 4 * MIB;
	cfg.lossless_mask = 0;
	cfg.reserve_bytes = 0;
	cfg.alpha = alpha;
	char err[256] = "";
	struct pfc_mmu *m = pfc_mmu_create(&cfg, err, sizeof(err));
	if (!m)
		fail_msg("pfc_mmu_create: %s", err);
	return m;
}

/* Offer bytes from in_port to out_port; return the bytes admitted. */
static uint64_t burst(struct pfc_mmu *m, unsigned in_port, unsigned out_port, uint64_t bytes)
{
	uint64_t ok = 0;
	for (uint64_t b = 0; b < bytes; b += FRAME) {
		struct pfc_mmu_pkt pk = { .len = FRAME, .in_port = (uint16_t)in_port,
					  .out_port = (uint16_t)out_port, .prio = 0 };
		if (pfc_mmu_admit(m, &pk, b, NULL) == PFC_MMU_ADMIT)
			ok += FRAME;
	}
	return ok;
}

static void test_burst_fits_shared_not_static(void **state)
{
	(void)state;
	const uint64_t b = 3 * MIB / 2;
	struct pfc_mmu *sh = make(PFC_MMU_SHARED, 1.0);
	struct pfc_mmu *st = make(PFC_MMU_STATIC, 0);
	assert_int_equal(burst(sh, 0, 1, b), b);              /* fits: no drop */
	assert_int_equal(pfc_mmu_stats(sh)->bytes_dropped, 0);
	uint64_t got = burst(st, 0, 1, b);
	assert_true(got < b);                                 /* overflows the share */
	assert_int_equal(got, pfc_mmu_port(st, 0)->share_bytes); /* exactly the 1 MiB share */
	assert_int_equal(got, MIB);
	assert_int_equal(pfc_mmu_stats(st)->bytes_dropped, b - got);
	/* the static drops are counted under a reason */
	const struct pfc_mmu_stats *s = pfc_mmu_stats(st);
	assert_int_equal(s->drops[PFC_MMU_DROP_EGRESS] + s->drops[PFC_MMU_DROP_INGRESS],
			 (b - got) / FRAME);
	pfc_mmu_destroy(sh);
	pfc_mmu_destroy(st);
}

static void test_isolation(void **state)
{
	(void)state;
	const uint64_t want = 900 * 1024; /* a bit less than a 1 MiB share */
	/* static: port 0 floods (to two egresses, so that its ingress share is the limit) */
	struct pfc_mmu *st = make(PFC_MMU_STATIC, 0);
	uint64_t hot = burst(st, 0, 1, 4 * MIB) + burst(st, 0, 2, 4 * MIB);
	assert_int_equal(hot, MIB);                       /* capped at its share */
	assert_true(pfc_mmu_pg(st, 0, 0)->drops[PFC_MMU_DROP_INGRESS] > 0);
	assert_int_equal(burst(st, 3, 2, want), want);    /* the cold port is untouched */
	assert_int_equal(pfc_mmu_pg(st, 3, 0)->bytes_dropped, 0);
	/* the share is per port, not per priority: port 1 on two priorities gets one share */
	uint64_t two = 0;
	for (unsigned prio = 0; prio < 2; prio++)
		for (uint64_t b = 0; b < MIB; b += FRAME) {
			struct pfc_mmu_pkt pk = { .len = FRAME, .in_port = 1, .out_port = 3,
						  .prio = (uint8_t)prio };
			if (pfc_mmu_admit(st, &pk, 0, NULL) == PFC_MMU_ADMIT)
				two += FRAME;
		}
	assert_int_equal(two, MIB);
	assert_int_equal(pfc_mmu_port(st, 1)->in_bytes, MIB);
	assert_true(pfc_mmu_pg(st, 1, 1)->drops[PFC_MMU_DROP_INGRESS] > 0);
	/* shared, alpha 8: the hot port takes 8/9 of the buffer and starves the cold one */
	struct pfc_mmu *sh = make(PFC_MMU_SHARED, 8.0);
	uint64_t hot_sh = burst(sh, 0, 1, 4 * MIB) + burst(sh, 0, 2, 4 * MIB);
	assert_true(hot_sh > 3 * MIB);
	uint64_t cold_sh = burst(sh, 3, 2, want);
	assert_true(cold_sh < want);
	assert_true(pfc_mmu_pg(sh, 3, 0)->bytes_dropped > 0);
	print_message("  static: hot %llu, cold %llu of %llu; shared alpha 8: hot %llu, cold %llu\n",
		      (unsigned long long)hot, (unsigned long long)want, (unsigned long long)want,
		      (unsigned long long)hot_sh, (unsigned long long)cold_sh);
	pfc_mmu_destroy(st);
	pfc_mmu_destroy(sh);
}

static void test_dynamic_threshold(void **state)
{
	(void)state;
	/* alone, a PG gets alpha / (1 + alpha) of the pool: 1/2 with alpha 1, 8/9 with 8 */
	const double alphas[] = { 0.5, 1.0, 2.0, 8.0 };
	for (unsigned i = 0; i < 4; i++) {
		struct pfc_mmu *m = make(PFC_MMU_SHARED, alphas[i]);
		uint64_t pool = pfc_mmu_stats(m)->shared_pool;
		uint64_t got = burst(m, 0, 0, 8 * MIB);
		double want = alphas[i] / (1 + alphas[i]) * (double)pool;
		assert_true((double)got <= want + FRAME);
		assert_true((double)got >= want - 2 * FRAME);
		/* after the drain the whole pool is free again */
		struct pfc_mmu_pkt pk = { .len = FRAME, .in_port = 0, .out_port = 0, .prio = 0 };
		for (uint64_t b = 0; b < got; b += FRAME)
			pfc_mmu_dequeue(m, &pk, 0);
		assert_int_equal(pfc_mmu_stats(m)->shared_used, 0);
		assert_int_equal(pfc_mmu_stats(m)->bytes, 0);
		pfc_mmu_destroy(m);
	}
}

static void test_lossless_static_isolation(void **state)
{
	(void)state;
	/* lossless priority 3: a hot port is paused (XOFF) at its share, never dropped
	 * while the in-flight data fits its headroom; the others are unaffected */
	struct pfc_mmu_config cfg;
	pfc_mmu_config_init(&cfg, pfc_buffer_profile_find("deep"), 4, NULL);
	cfg.buffer_bytes = 4 * MIB;
	char err[256];
	struct pfc_mmu *m = pfc_mmu_create(&cfg, err, sizeof(err));
	assert_non_null(m);
	uint64_t t = pfc_mmu_xoff_threshold(m, 0, 3), h = pfc_mmu_headroom(m, 0);
	assert_int_equal(t, pfc_mmu_port(m, 0)->pool_bytes);
	unsigned xoff_at = 0, n = 0, fl;
	struct pfc_mmu_pkt pk = { .len = FRAME, .in_port = 0, .out_port = 1, .prio = 3 };
	while (pfc_mmu_admit(m, &pk, 0, &fl) == PFC_MMU_ADMIT) {
		n++;
		if (fl & PFC_MMU_F_XOFF)
			xoff_at = n;
	}
	assert_int_equal(xoff_at, t / FRAME + 1);      /* first packet above T */
	assert_int_equal(n, (t + h) / FRAME);          /* then the headroom, then drop */
	assert_int_equal(pfc_mmu_pg(m, 0, 3)->drops[PFC_MMU_DROP_HEADROOM], 1);
	assert_true(pfc_mmu_pg(m, 0, 3)->in_xoff);
	pk.in_port = 2;
	for (unsigned i = 0; i < t / FRAME; i++) {
		assert_int_equal(pfc_mmu_admit(m, &pk, 0, &fl), PFC_MMU_ADMIT);
		assert_int_equal(fl & PFC_MMU_F_XOFF, 0);
	}
	/* XON for port 0 only once it is resume_offset below T and the headroom is empty */
	pk.in_port = 0;
	unsigned deq = 0;
	while (!(pfc_mmu_dequeue(m, &pk, 0) & PFC_MMU_F_XON))
		deq++;
	const struct pfc_mmu_pg *pg = pfc_mmu_pg(m, 0, 3);
	assert_int_equal(pg->headroom, 0);
	assert_true(pg->bytes + cfg.resume_offset_bytes <= t);
	assert_true(pg->bytes + cfg.resume_offset_bytes + FRAME > t);
	assert_false(pg->in_xoff);
	pfc_mmu_destroy(m);
}

static void test_shared_lossless_dynamic_threshold(void **state)
{
	(void)state;
	/* shared, alpha 1, no reserve: a lone lossless PG goes XOFF at half the shared pool
	 * (alpha / (1 + alpha)), spills into its headroom, and resumes (XON) only once it
	 * is resume_offset below the threshold of that moment */
	struct pfc_mmu_config cfg;
	pfc_mmu_config_init(&cfg, pfc_buffer_profile_find("shallow"), 4, NULL);
	cfg.buffer_bytes = 4 * MIB;
	cfg.reserve_bytes = 0;
	cfg.alpha = 1.0;
	cfg.resume_offset_bytes = 8 * FRAME;
	char err[256];
	struct pfc_mmu *m = pfc_mmu_create(&cfg, err, sizeof(err));
	assert_non_null(m);
	const uint64_t pool = pfc_mmu_stats(m)->shared_pool;
	struct pfc_mmu_pkt pk = { .len = FRAME, .in_port = 0, .out_port = 1, .prio = 3 };
	unsigned fl = 0;
	uint64_t n = 0;
	while (!(fl & PFC_MMU_F_XOFF)) {
		assert_int_equal(pfc_mmu_admit(m, &pk, 0, &fl), PFC_MMU_ADMIT);
		n++;
	}
	const struct pfc_mmu_pg *pg = pfc_mmu_pg(m, 0, 3);
	uint64_t below = pg->bytes - pg->headroom; /* what fitted under the threshold */
	assert_int_equal(pg->headroom, FRAME);     /* the crossing packet is in headroom */
	assert_true(below <= pool / 2 && below + FRAME > pool / 2 - FRAME);
	assert_int_equal(pfc_mmu_stats(m)->shared_used, below);
	/* further packets go to the headroom while in XOFF */
	assert_int_equal(pfc_mmu_admit(m, &pk, 0, &fl), PFC_MMU_ADMIT);
	assert_int_equal(pg->headroom, 2 * FRAME);
	assert_int_equal(fl & PFC_MMU_F_XOFF, 0); /* no second transition */
	/* drain: XON exactly when bytes + resume <= threshold(now), headroom empty */
	for (;;) {
		unsigned f2 = pfc_mmu_dequeue(m, &pk, 0);
		uint64_t thr = pfc_mmu_xoff_threshold(m, 0, 3);
		if (f2 & PFC_MMU_F_XON) {
			assert_int_equal(pg->headroom, 0);
			assert_true(pg->bytes + cfg.resume_offset_bytes <= thr);
			break;
		}
		assert_true(pg->headroom > 0 || pg->bytes + cfg.resume_offset_bytes > thr);
	}
	assert_false(pg->in_xoff);
	pfc_mmu_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_fits_shared_not_static),
		cmocka_unit_test(test_isolation),
		cmocka_unit_test(test_dynamic_threshold),
		cmocka_unit_test(test_lossless_static_isolation),
		cmocka_unit_test(test_shared_lossless_dynamic_threshold),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
