/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fl_heap: an indexed binary min-heap of (key, id) pairs, ordered by key and
 * then by id (so ties always break the same way). Each id is in the heap at
 * most once; its position is kept in an array indexed by id, so updating or
 * removing an id is O(log n) with no search. The flow engine uses one for its
 * events (id = flow, key = next event time) and one for water-filling
 * (id = link, key = the link's fair share). libc only.
 */
#ifndef FL_HEAP_H
#define FL_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#define FL_HEAP_NONE UINT32_MAX /* pos[] of an id that is not in the heap */

struct fl_hent {
	uint64_t key;
	uint32_t id;
};

struct fl_heap {
	struct fl_hent *a; /* a[0] is the minimum */
	uint32_t n;        /* entries; a[] has room for ids of them */
	uint32_t *pos;     /* pos[id]: index in a[], or FL_HEAP_NONE */
	uint32_t ids;      /* pos[] holds ids 0 .. ids - 1 */
};

/* An empty heap for ids 0 .. ids - 1. Returns 0, or -ENOMEM. */
int fl_heap_init(struct fl_heap *h, uint32_t ids);
/* Frees the arrays; the heap is then empty and must be initialised again. */
void fl_heap_free(struct fl_heap *h);
/* Makes room for ids 0 .. ids - 1 (never shrinks). Returns 0, or -ENOMEM. */
int fl_heap_grow(struct fl_heap *h, uint32_t ids);
/* Inserts id with key, or moves it to key if already in. 0, or -ENOMEM / -ERANGE (id too big). */
int fl_heap_set(struct fl_heap *h, uint32_t id, uint64_t key);
/* Removes id if it is in the heap (no effect otherwise). */
void fl_heap_del(struct fl_heap *h, uint32_t id);
/* Empties the heap (O(n)). */
void fl_heap_clear(struct fl_heap *h);

static inline bool fl_heap_empty(const struct fl_heap *h)
{
	return h->n == 0;
}

/* The minimum entry; only when the heap is not empty. */
static inline struct fl_hent fl_heap_top(const struct fl_heap *h)
{
	return h->a[0];
}

static inline bool fl_heap_has(const struct fl_heap *h, uint32_t id)
{
	return id < h->ids && h->pos[id] != FL_HEAP_NONE;
}

#endif /* FL_HEAP_H */
