/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hash algorithms (known-answer vectors), hash-field profiles, and how they
 * spread flows over uplinks.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rl_hash.h"
#include "rl_nexthop.h"

static const char check_input[] = "123456789";

/* The standard check values of each CRC over "123456789". */
static void test_crc_check_values(void **state)
{
	(void)state;
	assert_int_equal(rl_crc16_ccitt(0, check_input, 9), 0x29B1);
	assert_int_equal(rl_crc32(0, check_input, 9), 0xCBF43926u);
	assert_int_equal(rl_crc32c(0, check_input, 9), 0xE3069283u);
	/* the same through the generic entry */
	assert_int_equal(rl_hash(RL_HASH_CRC16_CCITT, 0, check_input, 9), 0x29B1);
	assert_int_equal(rl_hash(RL_HASH_CRC32, 0, check_input, 9), 0xCBF43926u);
	assert_int_equal(rl_hash(RL_HASH_CRC32C, 0, check_input, 9), 0xE3069283u);
	/* empty input: the CRC is the initial value through the final xor */
	assert_int_equal(rl_crc32(0, "", 0), 0);
	assert_int_equal(rl_crc16_ccitt(0, "", 0), 0xFFFF);
}

/* XOR fold: big-endian words, last one zero-padded; "1234"^"5678"^"9\0\0\0". */
static void test_xor_fold(void **state)
{
	(void)state;
	assert_int_equal(rl_xor_fold(0, check_input, 9), 0x31323334u ^ 0x35363738u ^ 0x39000000u);
	assert_int_equal(rl_xor_fold(0xdeadbeef, check_input, 9),
			 0x31323334u ^ 0x35363738u ^ 0x39000000u ^ 0xdeadbeefu);
}

/* A non-zero seed changes every algorithm's answer; the same seed gives the same answer. */
static void test_seeds(void **state)
{
	(void)state;
	for (int a = 0; a < RL_HASH_ALGO_COUNT; a++) {
		uint32_t h0 = rl_hash((enum rl_hash_algo)a, 0, check_input, 9);
		uint32_t h1 = rl_hash((enum rl_hash_algo)a, 0x1234, check_input, 9);
		uint32_t h2 = rl_hash((enum rl_hash_algo)a, 0x1234, check_input, 9);
		if (h0 == h1)
			fail_msg("%s: seed had no effect", rl_hash_algo_name((enum rl_hash_algo)a));
		assert_int_equal(h1, h2);
	}
	assert_int_equal(rl_hash(RL_HASH_ALGO_COUNT, 0, check_input, 9), 0);
}

struct rss_vec {
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint32_t ip_only, with_ports;
};

/* Microsoft's RSS verification suite ("Verifying the RSS Hash Calculation"). */
static const struct rss_vec rss_v4[] = {
	{{66, 9, 149, 187}, {161, 142, 100, 80}, 2794, 1766, 0x323e8fc2, 0x51ccc178},
	{{199, 92, 111, 2}, {65, 69, 140, 83}, 14230, 4739, 0xd718262a, 0xc626b0ea},
	{{24, 19, 198, 95}, {12, 22, 207, 184}, 12898, 38024, 0xd2d0a5de, 0x5c2b394a},
	{{38, 27, 205, 30}, {209, 142, 163, 6}, 48228, 2217, 0x82989176, 0xafc7327f},
	{{153, 39, 163, 191}, {202, 188, 127, 2}, 44251, 1303, 0x5d1809c5, 0x10e828a2},
};

static const struct rss_vec rss_v6[] = {
	{{0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 7},
	 {0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 1},
	 2794, 1766, 0x2cc18cd5, 0x40207d3d},
	{{0x3f, 0xfe, 0x05, 0x01, 0x00, 0x08, 0, 0, 0x02, 0x60, 0x97, 0xff, 0xfe, 0x40, 0xef, 0xab},
	 {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
	 14230, 4739, 0x0f0c461c, 0xdde51bbf},
	{{0x3f, 0xfe, 0x19, 0x00, 0x45, 0x45, 0x00, 0x03, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67, 0xcf},
	 {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67, 0xcf},
	 44251, 38024, 0x4b61e985, 0x02d1feef},
};

static void check_rss(const struct rss_vec *v, size_t alen)
{
	uint8_t in[36];

	memcpy(in, v->src, alen);
	memcpy(in + alen, v->dst, alen);
	assert_int_equal(rl_toeplitz(rl_rss_default_key, 40, in, 2 * alen), v->ip_only);
	in[2 * alen] = (uint8_t)(v->sport >> 8);
	in[2 * alen + 1] = (uint8_t)v->sport;
	in[2 * alen + 2] = (uint8_t)(v->dport >> 8);
	in[2 * alen + 3] = (uint8_t)v->dport;
	assert_int_equal(rl_toeplitz(rl_rss_default_key, 40, in, 2 * alen + 4), v->with_ports);
	/* seed 0 through the generic entry is the same Toeplitz */
	assert_int_equal(rl_hash(RL_HASH_TOEPLITZ, 0, in, 2 * alen + 4), v->with_ports);
}

static void test_toeplitz_rss_vectors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rss_v4) / sizeof(rss_v4[0]); i++)
		check_rss(&rss_v4[i], 4);
	for (size_t i = 0; i < sizeof(rss_v6) / sizeof(rss_v6[0]); i++)
		check_rss(&rss_v6[i], 16);
}

static void test_names(void **state)
{
	(void)state;
	for (int a = 0; a < RL_HASH_ALGO_COUNT; a++)
		assert_int_equal(rl_hash_algo_from_name(rl_hash_algo_name((enum rl_hash_algo)a)), a);
	for (int p = 0; p < RL_PROFILE_COUNT; p++)
		assert_int_equal(rl_profile_from_name(rl_profile_name((enum rl_hash_profile)p)), p);
	assert_int_equal(rl_hash_algo_from_name("md5"), -ENOENT);
	assert_int_equal(rl_profile_from_name("7tuple"), -ENOENT);
	assert_int_equal(rl_profile_from_name(NULL), -EINVAL);
	assert_null(rl_profile_name(RL_PROFILE_COUNT));
}

/* A RoCE packet of host pair (10.0.0.1 -> 10.1.0.1), source port sport, to QP dqpn. */
static struct rl_pkt roce_pkt(uint16_t sport, uint32_t dqpn)
{
	struct rl_pkt p;

	memset(&p, 0, sizeof(p));
	p.ip_version = 4;
	p.src[0] = 10, p.src[3] = 1;
	p.dst[0] = 10, p.dst[1] = 1, p.dst[3] = 1;
	p.proto = 17;
	p.sport = sport;
	p.dport = 4791;
	p.is_roce = true;
	p.bth.dqpn = dqpn;
	return p;
}

/* Which fields each profile takes. */
static void test_profile_keys(void **state)
{
	(void)state;
	struct rl_pkt a = roce_pkt(0xc000, 0x11), b = roce_pkt(0xc000, 0x12);
	uint8_t ka[RL_FLOW_KEY_MAX], kb[RL_FLOW_KEY_MAX];

	assert_int_equal(rl_flow_key(RL_PROFILE_5TUPLE, &a, ka), 13);
	assert_int_equal(rl_flow_key(RL_PROFILE_EECMP, &a, ka), 16);
	assert_int_equal(rl_flow_key(RL_PROFILE_3TUPLE, &a, ka), 9);
	assert_int_equal(rl_flow_key(RL_PROFILE_DQPN, &a, ka), 4);
	/* the QP changes only the profiles that include it */
	for (int pr = 0; pr < RL_PROFILE_COUNT; pr++) {
		size_t na = rl_flow_key((enum rl_hash_profile)pr, &a, ka);
		size_t nb = rl_flow_key((enum rl_hash_profile)pr, &b, kb);
		bool differ = na != nb || memcmp(ka, kb, na) != 0;
		assert_int_equal(differ, pr == RL_PROFILE_EECMP || pr == RL_PROFILE_DQPN);
	}
	/* a non-RoCE packet under eecmp/dqpn hashes as the 5-tuple */
	a.is_roce = false;
	assert_int_equal(rl_flow_key(RL_PROFILE_EECMP, &a, ka), 13);
	assert_int_equal(rl_flow_key(RL_PROFILE_DQPN, &a, kb), 13);
	assert_memory_equal(ka, kb, 13);
	/* IPv6 addresses take 16 bytes each */
	a.ip_version = 6;
	a.is_roce = true;
	assert_int_equal(rl_flow_key(RL_PROFILE_EECMP, &a, ka), RL_FLOW_KEY_MAX);
}

/*
 * 16 RC QPs between one host pair with one fixed UDP source port, over 4
 * uplinks: the 5-tuple cannot tell them apart, E-ECMP spreads them.
 * rxe numbers QPs consecutively, so only the QPN's low 4 bits differ. CRCs
 * are affine over GF(2): the two selection bits are then an affine function
 * of those 4 bits, and reach 2^rank uplinks. For CRC-32C that rank is 1 on
 * these inputs (a real polarization that a seed cannot fix, see the next
 * test); every other algorithm reaches all 4.
 */
static void test_sixteen_qps(void **state)
{
	(void)state;
	const uint32_t seed = 0x5eed;

	for (int algo = 0; algo < RL_HASH_ALGO_COUNT; algo++) {
		unsigned used5 = 0, usedE = 0;
		for (uint32_t q = 0; q < 16; q++) {
			struct rl_pkt p = roce_pkt(0xc0a5, 0x100 + q);
			int u5 = rl_ecmp_modulo(rl_flow_hash(RL_PROFILE_5TUPLE, (enum rl_hash_algo)algo,
							     seed, &p), 4);
			int uE = rl_ecmp_modulo(rl_flow_hash(RL_PROFILE_EECMP, (enum rl_hash_algo)algo,
							     seed, &p), 4);
			used5 |= 1u << u5;
			usedE |= 1u << uE;
		}
		if (__builtin_popcount(used5) != 1)
			fail_msg("%s: 5tuple used %d uplinks", rl_hash_algo_name((enum rl_hash_algo)algo),
				 __builtin_popcount(used5));
		if (algo != RL_HASH_CRC32C && usedE != 0xf)
			fail_msg("%s: eecmp used uplinks 0x%x", rl_hash_algo_name((enum rl_hash_algo)algo),
				 usedE);
	}
}

/*
 * CRC ECMP is affine: over QPNs that differ in low bits only, the uplink
 * differences {(h(q) ^ h(q0)) mod 4} form a subspace closed under XOR, the
 * number of uplinks reached is its size, and a seed does not change it.
 */
static void test_crc_affine_polarization(void **state)
{
	(void)state;
	const enum rl_hash_algo crcs[] = {RL_HASH_CRC16_CCITT, RL_HASH_CRC32, RL_HASH_CRC32C};

	for (size_t a = 0; a < 3; a++) {
		unsigned reached_by_seed[2] = {0, 0};
		for (int si = 0; si < 2; si++) {
			uint32_t seed = si ? 0xabcdef : 1;
			struct rl_pkt p0 = roce_pkt(0xc0a5, 0x100);
			uint32_t h0 = rl_flow_hash(RL_PROFILE_EECMP, crcs[a], seed, &p0);
			unsigned diffs = 0, used = 0;
			for (uint32_t q = 0; q < 16; q++) {
				struct rl_pkt p = roce_pkt(0xc0a5, 0x100 + q);
				uint32_t h = rl_flow_hash(RL_PROFILE_EECMP, crcs[a], seed, &p);
				diffs |= 1u << ((h ^ h0) & 3);
				used |= 1u << (h & 3);
			}
			/* closed under XOR */
			for (unsigned x = 0; x < 4; x++)
				for (unsigned y = 0; y < 4; y++)
					if ((diffs >> x & 1) && (diffs >> y & 1))
						assert_true(diffs >> (x ^ y) & 1);
			assert_int_equal(__builtin_popcount(used), __builtin_popcount(diffs));
			reached_by_seed[si] = (unsigned)__builtin_popcount(used);
		}
		assert_int_equal(reached_by_seed[0], reached_by_seed[1]);
	}
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* 10,000 random flows: every profile x algorithm within 10% of uniform over 4 uplinks. */
static void test_uniform(void **state)
{
	(void)state;
	for (int pr = 0; pr < RL_PROFILE_COUNT; pr++) {
		for (int algo = 0; algo < RL_HASH_ALGO_COUNT; algo++) {
			uint64_t s = 0x1234567ull + (uint64_t)(pr * 10 + algo);
			unsigned count[4] = {0};
			for (int i = 0; i < 10000; i++) {
				uint64_t r1 = rng_next(&s), r2 = rng_next(&s);
				struct rl_pkt p = roce_pkt((uint16_t)(0xc000 | (r1 & 0x3fff)),
							   (uint32_t)(r1 >> 40) & 0xffffff);
				memcpy(p.src, &r2, 4);
				memcpy(p.dst, (uint8_t *)&r2 + 4, 4);
				count[rl_ecmp_modulo(rl_flow_hash((enum rl_hash_profile)pr,
								  (enum rl_hash_algo)algo, 7, &p), 4)]++;
			}
			for (int u = 0; u < 4; u++)
				if (count[u] < 2250 || count[u] > 2750)
					fail_msg("%s/%s: uplink %d got %u of 10000",
						 rl_profile_name((enum rl_hash_profile)pr),
						 rl_hash_algo_name((enum rl_hash_algo)algo), u, count[u]);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc_check_values),
		cmocka_unit_test(test_xor_fold),
		cmocka_unit_test(test_seeds),
		cmocka_unit_test(test_toeplitz_rss_vectors),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_profile_keys),
		cmocka_unit_test(test_sixteen_qps),
		cmocka_unit_test(test_crc_affine_polarization),
		cmocka_unit_test(test_uniform),
	};
	return cmocka_run_group_tests_name("hash", tests, NULL, NULL);
}
