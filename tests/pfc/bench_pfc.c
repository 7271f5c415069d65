/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Micro-benchmark: nanoseconds per MMU admit/dequeue pair and per PFC frame
 * decode (and encode, and pause-state receive), on this machine, one thread.
 * Usage: bench_pfc [iterations] (default 20,000,000). The only clock read in
 * the pfc/ tree is here.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pfc_frame.h"
#include "pfc_mmu.h"
#include "pfc_pause.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile uint64_t sink;

static double bench_mmu(const char *profile, uint64_t iters)
{
	struct pfc_mmu_config cfg;
	pfc_mmu_config_init(&cfg, pfc_buffer_profile_find(profile), 64, NULL);
	char err[256];
	struct pfc_mmu *m = pfc_mmu_create(&cfg, err, sizeof(err));
	if (!m) {
		fprintf(stderr, "bench_pfc: %s\n", err);
		exit(1);
	}
	/* keep a standing queue so ECN and thresholds are exercised, not an empty buffer */
	enum { DEPTH = 256 };
	struct pfc_mmu_pkt ring[DEPTH];
	bool held[DEPTH];
	uint64_t x = 0x12345678;
	for (unsigned i = 0; i < DEPTH; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		ring[i] = (struct pfc_mmu_pkt){ .len = 64 + (uint32_t)(x >> 33) % 1451,
						.in_port = (uint16_t)((x >> 20) % 64),
						.out_port = (uint16_t)((x >> 40) % 64),
						.prio = (uint8_t)((x >> 50) % 8), .ect = true };
		held[i] = pfc_mmu_admit(m, &ring[i], 0, NULL) == PFC_MMU_ADMIT;
	}
	uint64_t acc = 0;
	double t0 = now_s();
	for (uint64_t i = 0; i < iters; i++) {
		unsigned k = (unsigned)(i % DEPTH);
		if (held[k])
			acc += pfc_mmu_dequeue(m, &ring[k], i);
		unsigned fl;
		enum pfc_mmu_verdict v = pfc_mmu_admit(m, &ring[k], i, &fl);
		held[k] = v == PFC_MMU_ADMIT;
		acc += v + fl;
	}
	double dt = now_s() - t0;
	const struct pfc_mmu_stats *st = pfc_mmu_stats(m);
	if (st->underflows) {
		fprintf(stderr, "bench_pfc: %llu accounting underflows\n",
			(unsigned long long)st->underflows);
		exit(1);
	}
	sink = acc;
	pfc_mmu_destroy(m);
	return dt * 1e9 / (double)iters;
}

int main(int argc, char **argv)
{
	uint64_t iters = argc > 1 ? strtoull(argv[1], NULL, 0) : 20000000ull;
	if (iters == 0)
		iters = 1;

	double shallow = bench_mmu("shallow", iters);
	double deep = bench_mmu("deep", iters);

	/* PFC frame decode */
	uint8_t frames[16][PFC_FRAME_LEN];
	for (unsigned i = 0; i < 16; i++) {
		struct pfc_frame f;
		pfc_frame_init(&f, NULL);
		pfc_frame_set(&f, i % 8, (uint16_t)(i * 1000));
		pfc_frame_set(&f, 3, 0xffff);
		pfc_frame_encode(&f, frames[i], PFC_FRAME_LEN);
	}
	uint64_t acc = 0;
	double t0 = now_s();
	for (uint64_t i = 0; i < iters; i++) {
		struct pfc_frame f;
		acc += pfc_frame_decode(frames[i & 15], PFC_FRAME_LEN, &f);
		acc += f.time[i & 7];
	}
	double decode = (now_s() - t0) * 1e9 / (double)iters;

	t0 = now_s();
	for (uint64_t i = 0; i < iters; i++) {
		struct pfc_frame f;
		pfc_frame_init(&f, NULL);
		pfc_frame_set(&f, i & 7, (uint16_t)i);
		uint8_t buf[PFC_FRAME_LEN];
		acc += pfc_frame_encode(&f, buf, sizeof(buf)) + buf[19];
	}
	double encode = (now_s() - t0) * 1e9 / (double)iters;

	struct pfc_pause ps;
	pfc_pause_init(&ps, 100000000000ull, NULL, 0);
	t0 = now_s();
	for (uint64_t i = 0; i < iters; i++)
		acc += pfc_pause_rx(&ps, frames[i & 15], PFC_FRAME_LEN, i * 100);
	double rx = (now_s() - t0) * 1e9 / (double)iters;
	sink = acc;

	printf("bench_pfc: %llu iterations each\n", (unsigned long long)iters);
	printf("  admit+dequeue pair, shallow (shared, 64 ports): %6.2f ns\n", shallow);
	printf("  admit+dequeue pair, deep (static, 64 ports):    %6.2f ns\n", deep);
	printf("  PFC frame decode:                               %6.2f ns\n", decode);
	printf("  PFC frame encode:                               %6.2f ns\n", encode);
	printf("  PFC frame receive (decode + pause update):      %6.2f ns\n", rx);
	return 0;
}
