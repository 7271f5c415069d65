/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * swx_hash: rocelab's seeded switch hash (hashing/rl_hash.h) as a DPDK SWX
 * hash function, so that a .spec's "hash rl_hash DST FIRST LAST" computes
 * bit for bit what the C pipeline's rl_flow_hash computes.
 *
 * DPDK 22.11 passes a hash function only the bytes from FIRST to LAST of one
 * struct and a seed of 0 (rte_swx_pipeline_internal.h, __instr_hash_func_exec),
 * so the switch's algorithm and seed travel in front of the flow key:
 *
 *   byte 0      the algorithm (enum rl_hash_algo: 0 crc16, 1 crc32, 2 crc32c,
 *               3 xor, 4 toeplitz)
 *   bytes 1..4  the seed, big-endian
 *   bytes 5..   the flow key as rl_flow_key lays it out (IPv4: source,
 *               destination, source port, destination port, protocol, and
 *               for the E-ECMP profile the 24-bit BTH destination QP)
 *
 * A .spec keeps this key in a header it never emits (header fields are in
 * network byte order; metadata fields are in the CPU's, which would reverse
 * each field's bytes).
 */
#ifndef SWX_HASH_H
#define SWX_HASH_H

#include <stdint.h>

#define SWX_HASH_NAME "rl_hash" /* the name a .spec's hash instruction uses */
#define SWX_HASH_PARAMS_LEN 5   /* algorithm byte + 32-bit seed before the flow key */

/*
 * The hash of key (length bytes laid out as above): rl_hash(algorithm,
 * key's seed ^ seed, flow key). A key shorter than SWX_HASH_PARAMS_LEN or an
 * algorithm out of range hashes to 0 (rl_hash's own answer to a bad
 * algorithm), so a wrong program gives a fixed member, never a crash.
 */
uint32_t swx_hash_rl(const void *key, uint32_t length, uint32_t seed);

struct rte_swx_pipeline;

/* Registers swx_hash_rl as SWX_HASH_NAME in p. Returns 0 or DPDK's negative errno. */
int swx_hash_register(struct rte_swx_pipeline *p);

#endif /* SWX_HASH_H */
