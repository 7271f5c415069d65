/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_hashing: nanoseconds per packet for parse + flow hash + next-hop
 * choice, per hash profile and algorithm, next to DPDK's rte_hash_crc and
 * rte_jhash over the same keys, measured in one run.
 *
 * A benchmark, not a test: it prints figures and asserts nothing about time.
 * usage: bench_hashing [PACKETS_PER_ROUND] [ROUNDS]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_hash_crc.h>
#include <rte_jhash.h>

#include "rl_hash.h"
#include "rl_nexthop.h"
#include "rl_parse.h"

#define FRAME_LEN 1078 /* 1024-byte RDMA WRITE_MIDDLE: Eth + IPv4 + UDP + BTH + payload + ICRC */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Fill n frames of random RoCEv2 flows (random hosts, rxe-style source ports, QPNs). */
static uint8_t *make_frames(size_t n)
{
	uint8_t *buf = calloc(n, FRAME_LEN);
	uint64_t s = 0x1234abcd;

	for (size_t i = 0; i < n; i++) {
		uint8_t *f = buf + i * FRAME_LEN;
		uint64_t r = xorshift(&s);
		f[12] = 0x08;
		uint8_t *ip = f + 14;
		ip[0] = 0x45;
		ip[2] = (FRAME_LEN - 14) >> 8, ip[3] = (FRAME_LEN - 14) & 0xff;
		ip[8] = 64, ip[9] = 17;
		ip[12] = 10, ip[13] = (uint8_t)(r >> 8), ip[14] = (uint8_t)(r >> 16), ip[15] = 1;
		ip[16] = 10, ip[17] = (uint8_t)(r >> 24), ip[18] = (uint8_t)(r >> 32), ip[19] = 2;
		uint8_t *udp = ip + 20;
		udp[0] = 0xc0 | ((r >> 40) & 0x3f), udp[1] = (uint8_t)(r >> 46);
		udp[2] = 0x12, udp[3] = 0xb7;
		udp[4] = (FRAME_LEN - 34) >> 8, udp[5] = (FRAME_LEN - 34) & 0xff;
		uint8_t *bth = udp + 8;
		bth[0] = RL_OP_WRITE_MIDDLE;
		bth[2] = bth[3] = 0xff;
		bth[6] = (uint8_t)(r >> 54), bth[7] = (uint8_t)(r >> 60 | 0x10);
		bth[11] = (uint8_t)i;
	}
	return buf;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 4096;
	unsigned rounds = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 200;
	uint8_t *frames = make_frames(n);
	volatile uint64_t sink = 0;
	double base_parse;

	if (n == 0 || rounds == 0) {
		fprintf(stderr, "usage: bench_hashing [PACKETS_PER_ROUND>0] [ROUNDS>0]\n");
		return 2;
	}
	printf("bench_hashing: %zu packets x %u rounds, 4 uplinks; ns per packet (lower is better)\n\n",
	       n, rounds);

	/* parse alone */
	uint64_t t0 = now_ns();
	for (unsigned r = 0; r < rounds; r++)
		for (size_t i = 0; i < n; i++) {
			struct rl_pkt p;
			sink += (uint64_t)rl_parse(frames + i * FRAME_LEN, FRAME_LEN, &p) + p.bth.dqpn;
		}
	base_parse = (double)(now_ns() - t0) / ((double)n * rounds);
	printf("%-28s %8.1f\n", "parse only", base_parse);

	/* keys for the reference hashes: the eecmp key of each packet */
	uint8_t (*keys)[RL_FLOW_KEY_MAX] = malloc(n * RL_FLOW_KEY_MAX);
	size_t *klen = malloc(n * sizeof(*klen));
	for (size_t i = 0; i < n; i++) {
		struct rl_pkt p;
		rl_parse(frames + i * FRAME_LEN, FRAME_LEN, &p);
		klen[i] = rl_flow_key(RL_PROFILE_EECMP, &p, keys[i]);
	}

	printf("\n%-10s %-10s %14s %14s %14s\n", "profile", "algo", "parse+hash+nh", "hash only",
	       "resilient nh");
	for (int pr = 0; pr < RL_PROFILE_COUNT; pr++) {
		for (int a = 0; a < RL_HASH_ALGO_COUNT; a++) {
			struct rl_resilient rs;
			rl_resilient_init(&rs, 4096, 4);
			t0 = now_ns();
			for (unsigned r = 0; r < rounds; r++)
				for (size_t i = 0; i < n; i++) {
					struct rl_pkt p;
					rl_parse(frames + i * FRAME_LEN, FRAME_LEN, &p);
					uint32_t h = rl_flow_hash((enum rl_hash_profile)pr,
								  (enum rl_hash_algo)a, 0x5eed, &p);
					sink += (uint64_t)rl_ecmp_modulo(h, 4);
				}
			double full = (double)(now_ns() - t0) / ((double)n * rounds);
			t0 = now_ns();
			for (unsigned r = 0; r < rounds; r++)
				for (size_t i = 0; i < n; i++)
					sink += rl_hash((enum rl_hash_algo)a, 0x5eed, keys[i], klen[i]);
			double hash_only = (double)(now_ns() - t0) / ((double)n * rounds);
			t0 = now_ns();
			for (unsigned r = 0; r < rounds; r++)
				for (size_t i = 0; i < n; i++) {
					struct rl_pkt p;
					rl_parse(frames + i * FRAME_LEN, FRAME_LEN, &p);
					uint32_t h = rl_flow_hash((enum rl_hash_profile)pr,
								  (enum rl_hash_algo)a, 0x5eed, &p);
					sink += (uint64_t)rl_resilient_select(&rs, h);
				}
			double resil = (double)(now_ns() - t0) / ((double)n * rounds);
			rl_resilient_free(&rs);
			printf("%-10s %-10s %14.1f %14.1f %14.1f\n",
			       rl_profile_name((enum rl_hash_profile)pr),
			       rl_hash_algo_name((enum rl_hash_algo)a), full, hash_only, resil);
		}
	}

	printf("\nreference hashes on the same eecmp keys (hash only):\n");
	t0 = now_ns();
	for (unsigned r = 0; r < rounds; r++)
		for (size_t i = 0; i < n; i++)
			sink += rte_hash_crc(keys[i], (uint32_t)klen[i], 0x5eed);
	double crc_ref = (double)(now_ns() - t0) / ((double)n * rounds);
	t0 = now_ns();
	for (unsigned r = 0; r < rounds; r++)
		for (size_t i = 0; i < n; i++)
			sink += rte_jhash(keys[i], (uint32_t)klen[i], 0x5eed);
	double jhash_ref = (double)(now_ns() - t0) / ((double)n * rounds);
	t0 = now_ns();
	for (unsigned r = 0; r < rounds; r++)
		for (size_t i = 0; i < n; i++)
			sink += rl_crc32c(0x5eed, keys[i], klen[i]);
	double ours_crc32c = (double)(now_ns() - t0) / ((double)n * rounds);
	printf("%-28s %8.1f\n", "DPDK rte_hash_crc (CRC32C)", crc_ref);
	printf("%-28s %8.1f\n", "DPDK rte_jhash", jhash_ref);
	printf("%-28s %8.1f  (ratio to rte_hash_crc: %.2f)\n", "rocelab crc32c (table)", ours_crc32c,
	       ours_crc32c / crc_ref);
	printf("(checksum %" PRIu64 ")\n", (uint64_t)sink);
	free(keys);
	free(klen);
	free(frames);
	return 0;
}
