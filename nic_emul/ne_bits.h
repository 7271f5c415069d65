/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_bits: a set of small integers (QP slots) as a hierarchy of 64-bit
 * words: level 0 has one bit per member, each higher level one bit per
 * non-empty word below. Insert, remove and "next member at or after i" cost
 * O(levels) (levels = log64 of the size: 2 up to 4,096 slots), whatever the
 * number of members. Internal to nic_emul: the set of QPs with a frame
 * ready, walked in round-robin order by the transmit scheduler.
 */
#ifndef NE_BITS_H
#define NE_BITS_H

#include <stdbool.h>
#include <stdint.h>

#define NE_BITS_LEVELS_MAX 4 /* up to 64^4 = 16,777,216 members */
#define NE_BITS_NONE UINT32_MAX

struct ne_bits {
	uint64_t *lvl[NE_BITS_LEVELS_MAX];
	uint32_t words[NE_BITS_LEVELS_MAX]; /* words per level */
	uint32_t nlevels;
	uint32_t nbits;
};

/* An empty set for members 0..nbits-1. Returns 0, -EINVAL (nbits 0 or above
 * 64^NE_BITS_LEVELS_MAX) or -ENOMEM. */
int ne_bits_init(struct ne_bits *b, uint32_t nbits);
void ne_bits_free(struct ne_bits *b);

void ne_bits_set(struct ne_bits *b, uint32_t i);
void ne_bits_clear(struct ne_bits *b, uint32_t i);

static inline bool ne_bits_test(const struct ne_bits *b, uint32_t i)
{
	return (b->lvl[0][i >> 6] >> (i & 63)) & 1;
}

/* The smallest member >= from, or NE_BITS_NONE. */
uint32_t ne_bits_next(const struct ne_bits *b, uint32_t from);

#endif /* NE_BITS_H */
