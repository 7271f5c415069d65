/* SPDX-License-Identifier: BSD-3-Clause */
#include "ne_bits.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define WORD_BITS 64u
#define WORD_SHIFT 6u
#define WORD_MASK 63u

int ne_bits_init(struct ne_bits *b, uint32_t nbits)
{
	uint32_t n = nbits;

	memset(b, 0, sizeof(*b));
	if (nbits == 0)
		return -EINVAL;
	b->nbits = nbits;
	do {
		if (b->nlevels == NE_BITS_LEVELS_MAX) {
			ne_bits_free(b);
			return -EINVAL;
		}
		n = (n + WORD_MASK) / WORD_BITS;
		b->words[b->nlevels] = n;
		b->lvl[b->nlevels] = calloc(n, sizeof(uint64_t));
		if (!b->lvl[b->nlevels]) {
			ne_bits_free(b);
			return -ENOMEM;
		}
		b->nlevels++;
	} while (n > 1);
	return 0;
}

void ne_bits_free(struct ne_bits *b)
{
	for (uint32_t k = 0; k < NE_BITS_LEVELS_MAX; k++)
		free(b->lvl[k]);
	memset(b, 0, sizeof(*b));
}

void ne_bits_set(struct ne_bits *b, uint32_t i)
{
	for (uint32_t k = 0; k < b->nlevels; k++) {
		uint64_t *w = &b->lvl[k][i >> WORD_SHIFT];
		bool was_empty = *w == 0;

		*w |= 1ull << (i & WORD_MASK);
		if (!was_empty)
			return; /* the levels above already know this word */
		i >>= WORD_SHIFT;
	}
}

void ne_bits_clear(struct ne_bits *b, uint32_t i)
{
	for (uint32_t k = 0; k < b->nlevels; k++) {
		uint64_t *w = &b->lvl[k][i >> WORD_SHIFT];

		*w &= ~(1ull << (i & WORD_MASK));
		if (*w != 0)
			return; /* the word stays non-empty: nothing changes above */
		i >>= WORD_SHIFT;
	}
}

uint32_t ne_bits_next(const struct ne_bits *b, uint32_t from)
{
	uint32_t i = from;

	if (from >= b->nbits)
		return NE_BITS_NONE;
	/* climb until a word holds a member at or after i */
	for (uint32_t k = 0; k < b->nlevels; k++) {
		uint32_t w = i >> WORD_SHIFT;

		if (w < b->words[k]) {
			uint64_t bits = b->lvl[k][w] & (~0ull << (i & WORD_MASK));

			if (bits) {
				uint32_t idx = (w << WORD_SHIFT) + (uint32_t)__builtin_ctzll(bits);

				/* descend to the first member under that bit */
				while (k-- > 0)
					idx = (idx << WORD_SHIFT) +
					      (uint32_t)__builtin_ctzll(b->lvl[k][idx]);
				return idx;
			}
		}
		i = w + 1; /* the next word, as a bit of the level above */
	}
	return NE_BITS_NONE;
}
