/* SPDX-License-Identifier: BSD-3-Clause */
#include "ne_heap.h"

#include <errno.h>
#include <stdlib.h>

int ne_heap_init(struct ne_heap *h, uint32_t cap, uint64_t *moves)
{
	h->slot = calloc(cap ? cap : 1, sizeof(*h->slot));
	h->key = calloc(cap ? cap : 1, sizeof(*h->key));
	h->pos = malloc((cap ? cap : 1) * sizeof(*h->pos));
	h->n = 0;
	h->cap = cap;
	h->moves = moves;
	if (!h->slot || !h->key || !h->pos) {
		ne_heap_free(h);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < cap; i++)
		h->pos[i] = NE_HEAP_NONE;
	return 0;
}

void ne_heap_free(struct ne_heap *h)
{
	free(h->slot);
	free(h->key);
	free(h->pos);
	h->slot = h->pos = NULL;
	h->key = NULL;
	h->n = h->cap = 0;
}

static void count(struct ne_heap *h)
{
	if (h->moves)
		(*h->moves)++;
}

/* (key, slot) order */
static bool less(const struct ne_heap *h, uint32_t a, uint32_t b)
{
	return h->key[a] < h->key[b] || (h->key[a] == h->key[b] && h->slot[a] < h->slot[b]);
}

static void put(struct ne_heap *h, uint32_t i, uint32_t slot, uint64_t key)
{
	h->slot[i] = slot;
	h->key[i] = key;
	h->pos[slot] = i;
}

static void swap(struct ne_heap *h, uint32_t a, uint32_t b)
{
	uint32_t sa = h->slot[a], sb = h->slot[b];
	uint64_t ka = h->key[a], kb = h->key[b];

	put(h, a, sb, kb);
	put(h, b, sa, ka);
	count(h);
}

static void sift_up(struct ne_heap *h, uint32_t i)
{
	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (!less(h, i, p))
			break;
		swap(h, i, p);
		i = p;
	}
}

static void sift_down(struct ne_heap *h, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && less(h, l, m))
			m = l;
		if (r < h->n && less(h, r, m))
			m = r;
		if (m == i)
			break;
		swap(h, i, m);
		i = m;
	}
}

void ne_heap_set(struct ne_heap *h, uint32_t slot, uint64_t key)
{
	uint32_t i = h->pos[slot];

	if (i == NE_HEAP_NONE) {
		i = h->n++;
		put(h, i, slot, key);
		count(h);
		sift_up(h, i);
		return;
	}
	if (h->key[i] == key)
		return;
	h->key[i] = key;
	sift_up(h, i);
	sift_down(h, h->pos[slot]);
}

void ne_heap_remove(struct ne_heap *h, uint32_t slot)
{
	uint32_t i = h->pos[slot], last;

	if (i == NE_HEAP_NONE)
		return;
	count(h);
	h->pos[slot] = NE_HEAP_NONE;
	last = --h->n;
	if (i == last)
		return;
	uint32_t moved = h->slot[last];

	put(h, i, moved, h->key[last]);
	sift_up(h, i);
	sift_down(h, h->pos[moved]);
}
