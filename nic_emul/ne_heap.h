/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_heap: an indexed binary min-heap of QP slots (0..cap-1) keyed by a time.
 * Each slot is in the heap at most once; its key can be changed or the slot
 * removed in O(log n) through a per-slot position index. Ties are broken by
 * the slot number, so the order never depends on insertion history.
 * Internal to nic_emul (the NIC's transmit scheduler).
 */
#ifndef NE_HEAP_H
#define NE_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#define NE_HEAP_NONE UINT32_MAX

struct ne_heap {
	uint32_t *slot;  /* heap order: slot at each position */
	uint64_t *key;   /* key at each position */
	uint32_t *pos;   /* per slot: its position, NE_HEAP_NONE when absent */
	uint32_t n, cap;
	uint64_t *moves; /* work counter: insertions, removals and sift steps (may be NULL) */
};

/* Room for slots 0..cap-1. Returns 0 or -ENOMEM. */
int ne_heap_init(struct ne_heap *h, uint32_t cap, uint64_t *moves);
void ne_heap_free(struct ne_heap *h);

/* Insert slot with key, or change its key when present. */
void ne_heap_set(struct ne_heap *h, uint32_t slot, uint64_t key);
/* Remove slot (nothing when absent). */
void ne_heap_remove(struct ne_heap *h, uint32_t slot);

static inline bool ne_heap_has(const struct ne_heap *h, uint32_t slot)
{
	return h->pos[slot] != NE_HEAP_NONE;
}

/* Smallest key, UINT64_MAX when empty. */
static inline uint64_t ne_heap_top_key(const struct ne_heap *h)
{
	return h->n ? h->key[0] : UINT64_MAX;
}

/* Slot with the smallest key, NE_HEAP_NONE when empty. */
static inline uint32_t ne_heap_top(const struct ne_heap *h)
{
	return h->n ? h->slot[0] : NE_HEAP_NONE;
}

#endif /* NE_HEAP_H */
