/* SPDX-License-Identifier: BSD-3-Clause */
#include "rl_hash.h"

#include <errno.h>
#include <string.h>

#include "rl_bytes.h"
#include "rl_crc.h"

static const char *const algo_names[RL_HASH_ALGO_COUNT] = {
	[RL_HASH_CRC16_CCITT] = "crc16",
	[RL_HASH_CRC32] = "crc32",
	[RL_HASH_CRC32C] = "crc32c",
	[RL_HASH_XOR] = "xor",
	[RL_HASH_TOEPLITZ] = "toeplitz",
};

static const char *const profile_names[RL_PROFILE_COUNT] = {
	[RL_PROFILE_5TUPLE] = "5tuple",
	[RL_PROFILE_EECMP] = "eecmp",
	[RL_PROFILE_DQPN] = "dqpn",
	[RL_PROFILE_3TUPLE] = "3tuple",
};

static int index_of(const char *const *names, int n, const char *name)
{
	if (name == NULL)
		return -EINVAL;
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -ENOENT;
}

const char *rl_hash_algo_name(enum rl_hash_algo algo)
{
	return (unsigned)algo < RL_HASH_ALGO_COUNT ? algo_names[algo] : NULL;
}

int rl_hash_algo_from_name(const char *name)
{
	return index_of(algo_names, RL_HASH_ALGO_COUNT, name);
}

const char *rl_profile_name(enum rl_hash_profile profile)
{
	return (unsigned)profile < RL_PROFILE_COUNT ? profile_names[profile] : NULL;
}

int rl_profile_from_name(const char *name)
{
	return index_of(profile_names, RL_PROFILE_COUNT, name);
}

const uint8_t rl_rss_default_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

uint16_t rl_crc16_ccitt(uint32_t seed, const void *data, size_t len)
{
	return rl_crc16_ccitt_update((uint16_t)(0xffffu ^ seed), data, len);
}

uint32_t rl_crc32(uint32_t seed, const void *data, size_t len)
{
	return ~rl_crc32_update(0xffffffffu ^ seed, data, len);
}

uint32_t rl_crc32c(uint32_t seed, const void *data, size_t len)
{
	return ~rl_crc32c_update(0xffffffffu ^ seed, data, len);
}

uint32_t rl_xor_fold(uint32_t seed, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t acc = seed;
	size_t i = 0;

	for (; i + 4 <= len; i += 4)
		acc ^= rl_get_be32(p + i);
	if (i < len) {
		uint8_t tail[4] = {0};
		memcpy(tail, p + i, len - i);
		acc ^= rl_get_be32(tail);
	}
	return acc;
}

uint32_t rl_toeplitz(const uint8_t *key, size_t key_len, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t result = 0;

	if (key_len < 4)
		return 0;
	/* window = the 32 key bits starting at the current input bit */
	uint32_t window = rl_get_be32(key);
	size_t next_key_byte = 4;

	for (size_t i = 0; i < len; i++) {
		uint8_t kb = next_key_byte < key_len ? key[next_key_byte] : 0;
		next_key_byte++;
		for (int b = 7; b >= 0; b--) {
			if (p[i] & (1u << b))
				result ^= window;
			window = (window << 1) | ((kb >> b) & 1u);
		}
	}
	return result;
}

static uint32_t toeplitz_seeded(uint32_t seed, const void *data, size_t len)
{
	uint8_t key[sizeof(rl_rss_default_key)];

	memcpy(key, rl_rss_default_key, sizeof(key));
	for (size_t i = 0; i < sizeof(key); i++)
		key[i] ^= (uint8_t)(seed >> (8 * (3 - i % 4)));
	return rl_toeplitz(key, sizeof(key), data, len);
}

uint32_t rl_hash(enum rl_hash_algo algo, uint32_t seed, const void *data, size_t len)
{
	switch (algo) {
	case RL_HASH_CRC16_CCITT: return rl_crc16_ccitt(seed, data, len);
	case RL_HASH_CRC32: return rl_crc32(seed, data, len);
	case RL_HASH_CRC32C: return rl_crc32c(seed, data, len);
	case RL_HASH_XOR: return rl_xor_fold(seed, data, len);
	case RL_HASH_TOEPLITZ: return toeplitz_seeded(seed, data, len);
	default: return 0;
	}
}

size_t rl_flow_key(enum rl_hash_profile profile, const struct rl_pkt *pkt, uint8_t *key)
{
	size_t alen = pkt->ip_version == 6 ? 16 : 4;
	size_t n = 0;

	if (profile == RL_PROFILE_DQPN && pkt->is_roce) {
		rl_put_be32(key, pkt->bth.dqpn);
		return 4;
	}
	memcpy(key + n, pkt->src, alen);
	n += alen;
	memcpy(key + n, pkt->dst, alen);
	n += alen;
	if (profile != RL_PROFILE_3TUPLE) {
		rl_put_be16(key + n, pkt->sport);
		rl_put_be16(key + n + 2, pkt->dport);
		n += 4;
	}
	key[n++] = pkt->proto;
	if (profile == RL_PROFILE_EECMP && pkt->is_roce) {
		/* 24-bit QPN, as a UDF match on BTH bytes 5..7 would extract it */
		key[n++] = (uint8_t)(pkt->bth.dqpn >> 16);
		key[n++] = (uint8_t)(pkt->bth.dqpn >> 8);
		key[n++] = (uint8_t)pkt->bth.dqpn;
	}
	return n;
}

uint32_t rl_flow_hash(enum rl_hash_profile profile, enum rl_hash_algo algo, uint32_t seed,
		      const struct rl_pkt *pkt)
{
	uint8_t key[RL_FLOW_KEY_MAX];
	size_t n = rl_flow_key(profile, pkt, key);

	return rl_hash(algo, seed, key, n);
}
