/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rl_hash: the hash functions switch ASICs offer for ECMP, and the hash-field
 * profiles that choose which header fields feed them.
 *
 * Every algorithm takes a per-switch seed. Seed 0 gives the standard
 * algorithm (so the published check values hold); a non-zero seed is XORed
 * into the CRC's initial value, into the XOR fold's accumulator, or byte-wise
 * into the Toeplitz key, as ASICs do to decorrelate tiers (without it, every
 * tier makes the same choice and ECMP polarizes).
 */
#ifndef RL_HASH_H
#define RL_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "rl_parse.h"

enum rl_hash_algo {
	RL_HASH_CRC16_CCITT, /* CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, check 0x29B1 */
	RL_HASH_CRC32,       /* CRC-32 (IEEE 802.3, zlib): check 0xCBF43926 */
	RL_HASH_CRC32C,      /* CRC-32C (Castagnoli): check 0xE3069283 */
	RL_HASH_XOR,         /* XOR fold of the key's 32-bit big-endian words */
	RL_HASH_TOEPLITZ,    /* Toeplitz with the Microsoft RSS key */
	RL_HASH_ALGO_COUNT,
};

/* Name ("crc16", "crc32", "crc32c", "xor", "toeplitz") of an algorithm; NULL when out of range. */
const char *rl_hash_algo_name(enum rl_hash_algo algo);
/* Algorithm by name; returns -ENOENT for an unknown name, -EINVAL for NULL. */
int rl_hash_algo_from_name(const char *name);

/* Hash len bytes with algo and seed. An out-of-range algo returns 0. */
uint32_t rl_hash(enum rl_hash_algo algo, uint32_t seed, const void *data, size_t len);

/* The raw algorithms, with the standard parameters and an explicit seed. */
uint16_t rl_crc16_ccitt(uint32_t seed, const void *data, size_t len);
uint32_t rl_crc32(uint32_t seed, const void *data, size_t len);
uint32_t rl_crc32c(uint32_t seed, const void *data, size_t len);
uint32_t rl_xor_fold(uint32_t seed, const void *data, size_t len);
/* Toeplitz over data with a key of at least len + 4 bytes (the RSS key is 40). */
uint32_t rl_toeplitz(const uint8_t *key, size_t key_len, const void *data, size_t len);
/* The 40-byte key of the Microsoft RSS verification suite. */
extern const uint8_t rl_rss_default_key[40];

/* Hash-field profiles: which fields of the flow feed the hash. */
enum rl_hash_profile {
	RL_PROFILE_5TUPLE, /* src, dst, sport, dport, proto */
	RL_PROFILE_EECMP,  /* 5-tuple + RoCEv2 BTH destination QP (Meta's E-ECMP, UDF hashing) */
	RL_PROFILE_DQPN,   /* destination QP only (non-RoCE packets fall back to 5-tuple) */
	RL_PROFILE_3TUPLE, /* src, dst, proto */
	RL_PROFILE_COUNT,
};

/* Name ("5tuple", "eecmp", "dqpn", "3tuple") of a profile; NULL when out of range. */
const char *rl_profile_name(enum rl_hash_profile profile);
/* Profile by name; returns -ENOENT for an unknown name, -EINVAL for NULL. */
int rl_profile_from_name(const char *name);

/* Largest key a profile produces: two IPv6 addresses, ports, proto, QPN. */
#define RL_FLOW_KEY_MAX 40

/*
 * Serialize the fields of pkt that profile selects into key (at least
 * RL_FLOW_KEY_MAX bytes), in the order src, dst, sport, dport, proto, dqpn
 * (network byte order; IPv4 addresses take 4 bytes, IPv6 16).
 * Returns the key length in bytes.
 */
size_t rl_flow_key(enum rl_hash_profile profile, const struct rl_pkt *pkt, uint8_t *key);

/* rl_flow_key() then rl_hash(): the hash a switch computes for this packet. */
uint32_t rl_flow_hash(enum rl_hash_profile profile, enum rl_hash_algo algo, uint32_t seed,
		      const struct rl_pkt *pkt);

#endif /* RL_HASH_H */
