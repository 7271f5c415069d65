/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rl_crc: CRC engines shared by the ECMP hashes and the ICRC.
 * These work on the raw register: the caller applies the initial value and
 * the final inversion of the CRC variant it wants (see rl_hash.c, rl_icrc.c).
 *
 * CRC-32 (the ICRC's and the CRC32 hash's polynomial) runs through ISA-L
 * (crc32_gzip_refl: carry-less multiply where the CPU has it) but for short
 * inputs; the portable slice-by-8 table engine, rl_crc32_update_sw, takes
 * those and is the reference the tests compare the library with.
 */
#ifndef RL_CRC_H
#define RL_CRC_H

#include <stddef.h>
#include <stdint.h>

/*
 * CRC-32, reflected polynomial 0xEDB88320 (IEEE 802.3, zlib): through ISA-L,
 * inputs shorter than RL_CRC32_SHORT bytes through the tables (faster there).
 */
uint32_t rl_crc32_update(uint32_t crc, const void *data, size_t len);
#define RL_CRC32_SHORT 32u
/* The same, always through ISA-L (what the tests compare with the tables). */
uint32_t rl_crc32_update_isal(uint32_t crc, const void *data, size_t len);
/* The same CRC-32 by slice-by-8 tables (no library): the independent reference. */
uint32_t rl_crc32_update_sw(uint32_t crc, const void *data, size_t len);
/*
 * The CRC-32 register after n zero bytes, without reading any: crc times
 * x^(8n) modulo the polynomial. O(1) for n <= RL_CRC32_ZEROS_TABLE (one
 * precomputed power per length; four table lookups for a length the calling
 * thread keeps asking for), O(log n) above. Equal to
 * rl_crc32_update(crc, zeros, n).
 */
uint32_t rl_crc32_zeros(uint32_t crc, size_t n);
/* Lengths up to which rl_crc32_zeros uses one precomputed power per length. */
#define RL_CRC32_ZEROS_TABLE 9216u
/* CRC-32C, reflected polynomial 0x82F63B78 (Castagnoli). */
uint32_t rl_crc32c_update(uint32_t crc, const void *data, size_t len);
/*
 * The priority of the constructor that fills the tables; a constructor that
 * computes a CRC must run after it (a higher number).
 */
#define RL_CRC_CTOR_PRIO 101
/* CRC-16/CCITT, polynomial 0x1021, not reflected. */
uint16_t rl_crc16_ccitt_update(uint16_t crc, const void *data, size_t len);

#endif /* RL_CRC_H */
