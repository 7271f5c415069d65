/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_psn: 24-bit Packet Sequence Number arithmetic (InfiniBand BTH PSN).
 *
 * PSNs wrap at 2^24. Two PSNs are compared by the sign of their difference
 * taken as a 24-bit two's complement number, as Linux rxe's psn_compare()
 * does: a is "after" b when (a - b) mod 2^24 lies in [1, 2^23).
 */
#ifndef NE_PSN_H
#define NE_PSN_H

#include <stdint.h>

#define NE_PSN_MASK 0xFFFFFFu

/* (psn + n) mod 2^24. */
static inline uint32_t ne_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & NE_PSN_MASK;
}

/* Signed distance a - b in [-2^23, 2^23): > 0 when a is after b. */
static inline int32_t ne_psn_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & NE_PSN_MASK;

	return (int32_t)(d << 8) >> 8;
}

/* Same sign convention as rxe's psn_compare(). */
static inline int ne_psn_cmp(uint32_t a, uint32_t b)
{
	int32_t d = ne_psn_diff(a, b);

	return d < 0 ? -1 : (d > 0 ? 1 : 0);
}

#endif /* NE_PSN_H */
