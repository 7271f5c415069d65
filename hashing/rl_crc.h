/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rl_crc: table-driven CRC engines shared by the ECMP hashes and the ICRC.
 * These work on the raw register: the caller applies the initial value and
 * the final inversion of the CRC variant it wants (see rl_hash.c, rl_icrc.c).
 */
#ifndef RL_CRC_H
#define RL_CRC_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32, reflected polynomial 0xEDB88320 (IEEE 802.3, zlib). */
uint32_t rl_crc32_update(uint32_t crc, const void *data, size_t len);
/* CRC-32C, reflected polynomial 0x82F63B78 (Castagnoli). */
uint32_t rl_crc32c_update(uint32_t crc, const void *data, size_t len);
/* CRC-16/CCITT, polynomial 0x1021, not reflected. */
uint16_t rl_crc16_ccitt_update(uint16_t crc, const void *data, size_t len);

#endif /* RL_CRC_H */
