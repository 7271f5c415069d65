/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fl_heap.h"

static bool less(struct fl_hent x, struct fl_hent y)
{
	return (x.key < y.key) | ((x.key == y.key) & (x.id < y.id));
}

static void put(struct fl_heap *h, uint32_t i, struct fl_hent e)
{
	h->a[i] = e;
	h->pos[e.id] = i;
}

static void sift_up(struct fl_heap *h, uint32_t i)
{
	struct fl_hent e = h->a[i];

	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (!less(e, h->a[p]))
			break;
		put(h, i, h->a[p]);
		i = p;
	}
	put(h, i, e);
}

static void sift_down(struct fl_heap *h, uint32_t i)
{
	struct fl_hent e = h->a[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		/* (no branch: which child is less is a coin toss the predictor loses) */
		c += c + 1 < h->n && less(h->a[c + 1], h->a[c]);
		if (!less(h->a[c], e))
			break;
		put(h, i, h->a[c]);
		i = c;
	}
	put(h, i, e);
}

int fl_heap_init(struct fl_heap *h, uint32_t ids)
{
	memset(h, 0, sizeof(*h));
	return fl_heap_grow(h, ids ? ids : 1);
}

void fl_heap_free(struct fl_heap *h)
{
	free(h->a);
	free(h->pos);
	memset(h, 0, sizeof(*h));
}

int fl_heap_grow(struct fl_heap *h, uint32_t ids)
{
	if (ids <= h->ids)
		return 0;
	/* an id is in at most once, so ids entries always suffice */
	struct fl_hent *a = realloc(h->a, (size_t)ids * sizeof(*a));
	uint32_t *pos;

	if (!a)
		return -ENOMEM;
	h->a = a;
	pos = realloc(h->pos, (size_t)ids * sizeof(*pos));
	if (!pos)
		return -ENOMEM; /* ids unchanged: the next call grows pos again */
	h->pos = pos;
	for (uint32_t i = h->ids; i < ids; i++)
		pos[i] = FL_HEAP_NONE;
	h->ids = ids;
	return 0;
}

int fl_heap_set(struct fl_heap *h, uint32_t id, uint64_t key)
{
	struct fl_hent e = { .key = key, .id = id };

	if (id >= h->ids)
		return -ERANGE;
	uint32_t i = h->pos[id];

	if (i == FL_HEAP_NONE) {
		i = h->n++;
		put(h, i, e);
		sift_up(h, i);
		return 0;
	}
	uint64_t old = h->a[i].key;

	h->a[i].key = key;
	if (key < old)
		sift_up(h, i);
	else
		sift_down(h, i);
	return 0;
}

void fl_heap_del(struct fl_heap *h, uint32_t id)
{
	if (!fl_heap_has(h, id))
		return;
	uint32_t i = h->pos[id];
	struct fl_hent last = h->a[--h->n];

	h->pos[id] = FL_HEAP_NONE;
	if (i == h->n)
		return;
	put(h, i, last);
	sift_up(h, i);
	sift_down(h, h->pos[last.id]);
}

void fl_heap_clear(struct fl_heap *h)
{
	for (uint32_t i = 0; i < h->n; i++)
		h->pos[h->a[i].id] = FL_HEAP_NONE;
	h->n = 0;
}
