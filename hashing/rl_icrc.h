/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rl_icrc: the RoCEv2 invariant CRC, computed as Linux rxe computes it.
 *
 * CRC-32 (zlib's) over: 8 bytes of 0xFF (standing in for the InfiniBand LRH),
 * the IP header with its variant fields set to all ones (IPv4: TOS, TTL,
 * header checksum; IPv6: traffic class, flow label, hop limit), the UDP
 * header with checksum 0xFFFF, the BTH with its reserved byte 4 set to 0xFF,
 * and the rest of the packet up to (not including) the ICRC. The result is
 * stored little-endian after the payload and pad. Since the variant fields
 * are masked, a switch may rewrite TTL, DSCP and ECN without breaking it.
 */
#ifndef RL_ICRC_H
#define RL_ICRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rl_parse.h"

/*
 * Compute the ICRC of a parsed RoCEv2 frame (pkt from rl_parse() on the same
 * bytes, pkt->is_roce true). Returns the CRC in host order, comparable with
 * rl_pkt_icrc_wire(). Returns 0 and sets *ok false (if ok is non-NULL) when pkt is
 * not RoCEv2; sets *ok true otherwise.
 */
uint32_t rl_icrc_compute(const uint8_t *frame, const struct rl_pkt *pkt, bool *ok);

/*
 * The ICRC of a frame whose bytes [zero_off, pkt->icrc_off) are taken as
 * zeros and not read (payloads a simulation does not model): the headers
 * through the CRC engine, the zero run in O(1) (rl_crc32_zeros), so the cost
 * does not grow with the payload. Equal to rl_icrc_compute() on the frame
 * with those bytes zeroed. Returns 0 with *crc_out set, -EINVAL when pkt is
 * not RoCEv2, -ERANGE when zero_off is before the end of the BTH or after
 * the ICRC's offset.
 */
int rl_icrc_compute_zeros(const uint8_t *frame, const struct rl_pkt *pkt, size_t zero_off,
			  uint32_t *crc_out);

/* True when the frame is RoCEv2 and its stored ICRC equals the computed one. */
bool rl_icrc_verify(const uint8_t *frame, const struct rl_pkt *pkt);

/*
 * Recompute and store the ICRC in place (after building or editing a
 * RoCEv2 packet). Returns 0, or -EINVAL when pkt is not RoCEv2.
 */
int rl_icrc_store(uint8_t *frame, const struct rl_pkt *pkt);

#endif /* RL_ICRC_H */
