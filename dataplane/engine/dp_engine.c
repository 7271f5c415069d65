/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rl_mem.h"

#define WHEEL_MASK (DP_WHEEL_SLOTS - 1)
#define WHEEL_WORDS (DP_WHEEL_SLOTS / 64)
#define NONE UINT32_MAX

int dp_engine_init(struct dp_engine *e, enum dp_clock_mode mode, uint64_t (*live_now)(void *),
		   void *live_ctx)
{
	memset(e, 0, sizeof(*e));
	if (mode == DP_CLOCK_LIVE && live_now == NULL)
		return -EINVAL;
	e->mode = mode;
	e->live_now = live_now;
	e->live_ctx = live_ctx;
	e->cap = 1024;
	e->room = e->cap;
	e->lp_seq = e->own_seq;
	e->n_lp = 1;
	e->copy_lp = UINT32_MAX;
	e->xfer_min_ns = UINT64_MAX;
	/* (on lines of their own: one partition's engine shares none with another's, rl_mem.h) */
	e->heap = rl_zalloc_lines(e->cap, sizeof(*e->heap));
	e->nodes = rl_zalloc_lines(e->cap, sizeof(*e->nodes));
	e->node_free = rl_zalloc_lines(e->cap, sizeof(*e->node_free));
	e->wheel = rl_zalloc_lines(DP_WHEEL_SLOTS, sizeof(*e->wheel));
	e->wheel_in = rl_zalloc_lines(DP_WHEEL_SLOTS, sizeof(*e->wheel_in));
	e->wheel_tail = rl_zalloc_lines(DP_WHEEL_SLOTS, sizeof(*e->wheel_tail));
	e->wheel_tail_key = rl_zalloc_lines(DP_WHEEL_SLOTS, sizeof(*e->wheel_tail_key));
	e->wheel_bits = rl_zalloc_lines(WHEEL_WORDS, sizeof(*e->wheel_bits));
	if (e->heap == NULL || e->nodes == NULL || e->node_free == NULL || e->wheel == NULL ||
	    e->wheel_in == NULL || e->wheel_tail == NULL || e->wheel_tail_key == NULL ||
	    e->wheel_bits == NULL) {
		dp_engine_free(e);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < e->cap; i++) /* (popped from the end: index 0 first) */
		e->node_free[i] = e->cap - 1 - i;
	e->n_free = e->cap;
	return 0;
}

void dp_engine_free(struct dp_engine *e)
{
	free(e->heap);
	free(e->nodes);
	free(e->node_free);
	free(e->wheel);
	free(e->wheel_in);
	free(e->wheel_tail);
	free(e->wheel_tail_key);
	free(e->wheel_bits);
	free(e->slot_pos);
	memset(e, 0, sizeof(*e));
}

uint64_t dp_engine_now(struct dp_engine *e)
{
	if (e->mode == DP_CLOCK_LIVE)
		e->now_ns = e->live_now(e->live_ctx);
	return e->now_ns;
}

/*
 * Whether (at_a, key_a) comes before (at_b, key_b). As one 128-bit compare
 * (cmp, sbb: no branch), because the heap's walk down picks the earlier of
 * two children that are in no predictable order.
 */
static inline bool before(uint64_t at_a, uint64_t key_a, uint64_t at_b, uint64_t key_b)
{
	return ((unsigned __int128)at_a << 64 | key_a) < ((unsigned __int128)at_b << 64 | key_b);
}

static inline bool earlier(const struct dp_timer *a, const struct dp_timer *b)
{
	return before(a->at_ns, a->key, b->at_ns, b->key);
}

/*
 * The earlier of the children c and c + 1 of a heap of n timers (c < n), as
 * an index, without a branch. (heap[c + 1] is read even when it is past the
 * end: the array has room there, and the comparison is then discarded.)
 */
static inline uint32_t earlier_child(const struct dp_engine *e, uint32_t c, uint32_t n)
{
	return c + ((c + 1 < n) & earlier(&e->heap[c + 1], &e->heap[c]));
}

void dp_engine_set_lps(struct dp_engine *e, uint64_t *seq, uint32_t n_lp)
{
	e->lp_seq = seq;
	e->n_lp = n_lp;
	e->cur_lp = DP_LP_GLOBAL;
}

void dp_engine_copy_lp(struct dp_engine *e, uint32_t lp)
{
	e->copy_lp = lp;
	e->copy_seq = e->lp_seq[(size_t)lp * DP_LP_STRIDE];
}

void dp_engine_set_limit(struct dp_engine *e, uint32_t limit)
{
	e->limit = limit;
	e->room = limit && limit < e->cap ? limit : e->cap;
}

/* Make room for one more timer (the rare path). Returns 0, -1 at the limit or out of memory. */
static int grow(struct dp_engine *e)
{
	if (e->limit && e->n >= e->limit)
		return -ENOSPC;
	if (e->n == e->cap) {
		uint32_t cap = 2 * e->cap;
		struct dp_timer *h = rl_grow_lines(e->heap, e->cap, cap, sizeof(*h));
		if (h == NULL)
			return -ENOMEM;
		e->heap = h;
		struct dp_timer_node *nodes = rl_grow_lines(e->nodes, e->cap, cap, sizeof(*nodes));
		if (nodes == NULL)
			return -ENOMEM;
		e->nodes = nodes;
		uint32_t *fr = rl_grow_lines(e->node_free, e->cap, cap, sizeof(*fr));
		if (fr == NULL)
			return -ENOMEM;
		e->node_free = fr;
		/* all of nodes[0, cap) is in use (n == cap): the new half is free */
		for (uint32_t i = cap; i > e->cap; i--)
			e->node_free[e->n_free++] = i - 1;
		e->cap = cap;
	}
	dp_engine_set_limit(e, e->limit);
	return 0;
}

/* ---- the overflow heap ---- */

/* Put t at heap index i and tell its node where it is. */
static inline void place(struct dp_engine *e, uint32_t i, const struct dp_timer *t)
{
	e->heap[i] = *t;
	e->nodes[t->node].hpos = i + 1;
}

/* Fill the hole at i with t, moving it up past later parents. */
static void sift_up(struct dp_engine *e, uint32_t i, const struct dp_timer *t)
{
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!earlier(t, &e->heap[parent]))
			break;
		place(e, i, &e->heap[parent]);
		i = parent;
	}
	place(e, i, t);
}

/* Fill the hole at i with t, moving it down past earlier children. */
static void sift_down(struct dp_engine *e, uint32_t i, const struct dp_timer *t)
{
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= e->hn)
			break;
		c = earlier_child(e, c, e->hn);
		if (!earlier(&e->heap[c], t))
			break;
		place(e, i, &e->heap[c]);
		i = c;
	}
	place(e, i, t);
}

static void heap_insert(struct dp_engine *e, uint32_t id)
{
	const struct dp_timer_node *x = &e->nodes[id];
	struct dp_timer t = {.at_ns = x->at_ns, .key = x->key, .node = id};

	sift_up(e, e->hn++, &t);
}

/* Take the timer at heap index i out (the last one fills its place). */
static void heap_remove(struct dp_engine *e, uint32_t i)
{
	struct dp_timer last = e->heap[--e->hn];

	e->nodes[e->heap[i].node].hpos = 0;
	if (i == e->hn)
		return;
	if (i > 0 && earlier(&last, &e->heap[(i - 1) / 2]))
		sift_up(e, i, &last);
	else
		sift_down(e, i, &last);
}

/* ---- the wheel ---- */

static inline bool in_wheel_span(const struct dp_engine *e, uint64_t at_ns)
{
	return at_ns >= e->wheel_lo && at_ns - e->wheel_lo < DP_WHEEL_SLOTS;
}

/*
 * A bucket holds one nanosecond's timers in two lists: the sorted list
 * (wheel[b]: circular, its first node's prev is its last; in key order) and
 * the inbox (wheel_in[b]: a plain doubly linked list, newest first, nodes
 * marked IN_INBOX in hpos) where a timer goes whose place is not near the
 * list's end, without reading more nodes. The inbox is sorted into the list when the
 * bucket comes first or next (settle), in one pass. Adding in key order walked the list from its end
 * over nodes long out of cache: at 1,024 ranks a bucket holds tens of timers
 * added in no key order (arrivals of many channels), about 10 nodes read per
 * timer added.
 */
#define IN_INBOX UINT32_MAX

static inline void bucket_mark(struct dp_engine *e, uint32_t b)
{
	e->wheel_bits[b / 64] |= 1ull << (b % 64);
	e->wheel_sum |= 1ull << (b / 64);
}

static inline void bucket_clear_if_empty(struct dp_engine *e, uint32_t b)
{
	if (e->wheel[b] || e->wheel_in[b])
		return;
	e->wheel_bits[b / 64] &= ~(1ull << (b % 64));
	if (e->wheel_bits[b / 64] == 0)
		e->wheel_sum &= ~(1ull << (b / 64));
}

/* Put node id at the end of bucket b's list (writes only: the old last's next, the first's prev). */
static inline void list_append(struct dp_engine *e, uint32_t b, uint32_t id)
{
	struct dp_timer_node *x = &e->nodes[id];

	x->hpos = 0;
	if (e->wheel[b] == 0) {
		x->next = x->prev = id + 1;
		e->wheel[b] = id + 1;
	} else {
		x->prev = e->wheel_tail[b];
		x->next = e->wheel[b];
		e->nodes[x->prev - 1].next = id + 1;
		e->nodes[x->next - 1].prev = id + 1;
	}
	e->wheel_tail[b] = id + 1;
	e->wheel_tail_key[b] = x->key;
}

static void link_before(struct dp_engine *e, uint32_t b, uint32_t id, uint32_t at);

#define TAIL_STEPS 2 /* list nodes read from the end to place a timer before it goes to the inbox */

/*
 * Add node id to its nanosecond's bucket: at the end of the list when its key
 * is the greatest there (the timers of one nanosecond are mostly added in key
 * order: the callbacks of an earlier nanosecond, run in key order, schedule
 * them; 128 generators in step put 128 in one bucket); else in the list when
 * its place is within TAIL_STEPS nodes of the end (read while they are likely
 * in cache); else into the inbox.
 */
static inline void wheel_insert(struct dp_engine *e, uint32_t id)
{
	struct dp_timer_node *x = &e->nodes[id];
	uint32_t b = (uint32_t)(x->at_ns & WHEEL_MASK);

	e->wheel_n++;
	bucket_mark(e, b);
	if (e->wheel[b] == 0 || x->key >= e->wheel_tail_key[b]) {
		list_append(e, b, id);
		return;
	}
	uint32_t p = e->wheel_tail[b] - 1; /* (its key is greater) */
	for (int step = 0; step < TAIL_STEPS; step++) {
		uint32_t q = e->nodes[p].prev - 1;
		if (p + 1 == e->wheel[b] || e->nodes[q].key <= x->key) {
			link_before(e, b, id, p); /* (p the first: x the new first) */
			return;
		}
		p = q;
	}
	x->hpos = IN_INBOX;
	x->prev = 0;
	x->next = e->wheel_in[b];
	if (x->next)
		e->nodes[x->next - 1].prev = id + 1;
	e->wheel_in[b] = id + 1;
}

/* Take node id out of its bucket (its list or its inbox). */
static void wheel_unlink(struct dp_engine *e, uint32_t id)
{
	struct dp_timer_node *x = &e->nodes[id];
	uint32_t b = (uint32_t)(x->at_ns & WHEEL_MASK);

	e->wheel_n--;
	if (x->hpos == IN_INBOX) {
		if (x->prev)
			e->nodes[x->prev - 1].next = x->next;
		else
			e->wheel_in[b] = x->next;
		if (x->next)
			e->nodes[x->next - 1].prev = x->prev;
	} else if (x->next == id + 1) { /* the list's only one */
		e->wheel[b] = 0;
	} else {
		e->nodes[x->prev - 1].next = x->next;
		e->nodes[x->next - 1].prev = x->prev;
		if (e->wheel[b] == id + 1)
			e->wheel[b] = x->next;
		if (e->wheel_tail[b] == id + 1) {
			e->wheel_tail[b] = x->prev;
			e->wheel_tail_key[b] = e->nodes[x->prev - 1].key;
		}
	}
	bucket_clear_if_empty(e, b);
}

#define SETTLE_CHUNK 64

struct keyed {
	uint64_t key;
	uint32_t id;
};

/* Sort a[0, n) by key (insertion sort: an inbox is short, mostly tens). */
static void sort_by_key(struct keyed *a, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		struct keyed v = a[i];
		uint32_t j = i;
		while (j > 0 && a[j - 1].key > v.key) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = v;
	}
}

/* Put node id into bucket b's list before node at (NONE: as its last). */
static void link_before(struct dp_engine *e, uint32_t b, uint32_t id, uint32_t at)
{
	struct dp_timer_node *x = &e->nodes[id];

	if (at == NONE) {
		list_append(e, b, id);
		return;
	}
	x->hpos = 0;
	x->next = at + 1;
	x->prev = e->nodes[at].prev;
	e->nodes[x->prev - 1].next = id + 1;
	e->nodes[at].prev = id + 1;
	if (e->wheel[b] == at + 1)
		e->wheel[b] = id + 1;
}

/*
 * Sort bucket b's inbox into its list (keys are unique: dp_engine.h), in
 * chunks: each taken off the inbox, sorted and merged in one walk.
 */
static void settle(struct dp_engine *e, uint32_t b)
{
	struct keyed a[SETTLE_CHUNK];

	while (e->wheel_in[b]) {
		uint32_t n = 0, id = e->wheel_in[b];
		for (; id && n < SETTLE_CHUNK; id = e->nodes[id - 1].next, n++)
			a[n] = (struct keyed){e->nodes[id - 1].key, id - 1};
		e->wheel_in[b] = id;
		if (id)
			e->nodes[id - 1].prev = 0;
		sort_by_key(a, n);
		/* merge in one walk from the first: each goes before the first list
		 * node with a greater key (at a bucket's time the list holds mostly
		 * arrivals, keyed by their channels, above the nodes' own LPs) */
		uint32_t p = e->wheel[b] ? e->wheel[b] - 1 : NONE;
		for (uint32_t i = 0; i < n; i++) {
			while (p != NONE && e->nodes[p].key < a[i].key) {
				p = e->nodes[p].next - 1;
				if (p + 1 == e->wheel[b])
					p = NONE; /* (round to the first: past the last) */
			}
			link_before(e, b, a[i].id, p);
		}
	}
}

/*
 * The first bucket in use from bucket i on, wrapping round to the lowest
 * (maybe i's own word's low bits); some bucket is in use.
 */
static inline uint32_t bucket_from(const struct dp_engine *e, uint32_t i)
{
	uint32_t w = i / 64;
	uint64_t m = e->wheel_bits[w] & (~0ull << (i % 64));
	if (m == 0) {
		uint64_t later = w + 1 < WHEEL_WORDS ? e->wheel_sum & (~0ull << (w + 1)) : 0;
		w = (uint32_t)__builtin_ctzll(later ? later : e->wheel_sum);
		m = e->wheel_bits[w];
	}
	return w * 64 + (uint32_t)__builtin_ctzll(m);
}

/*
 * The first bucket in use from wheel_lo's on (a bucket before wheel_lo's
 * holds a time a whole turn later); the wheel is not empty.
 */
static inline uint32_t wheel_first_bucket(const struct dp_engine *e)
{
	return bucket_from(e, (uint32_t)(e->wheel_lo & WHEEL_MASK));
}

/* A node of bucket b (in use), from its list or else its inbox: they share its nanosecond. */
static inline uint32_t bucket_any(const struct dp_engine *e, uint32_t b)
{
	return (e->wheel[b] ? e->wheel[b] : e->wheel_in[b]) - 1;
}

/* The wheel's earliest node, its bucket settled first; NONE when the wheel is empty. */
static inline uint32_t wheel_first(struct dp_engine *e)
{
	if (e->wheel_n == 0)
		return NONE;
	uint32_t b = wheel_first_bucket(e);
	if (e->wheel_in[b])
		settle(e, b);
	return e->wheel[b] - 1;
}

/*
 * A node of the wheel's earliest nanosecond and the least key there (read
 * only: the inbox is searched, not sorted), false when the wheel is empty.
 */
static bool wheel_first_peek(const struct dp_engine *e, uint64_t *at_ns, uint64_t *key)
{
	if (e->wheel_n == 0)
		return false;
	uint32_t b = wheel_first_bucket(e);
	uint64_t k = e->wheel[b] ? e->nodes[e->wheel[b] - 1].key : UINT64_MAX;
	for (uint32_t id = e->wheel_in[b]; id; id = e->nodes[id - 1].next)
		if (e->nodes[id - 1].key < k)
			k = e->nodes[id - 1].key;
	*at_ns = e->nodes[bucket_any(e, b)].at_ns;
	*key = k;
	return true;
}

/* ---- both ---- */

/*
 * Put a timer at (at_ns, key) in slot (0: none) running fn(obj, arg) as lp.
 * Returns 0, -ENOMEM or -ENOSPC (counted in timer_fail).
 */
static int timer_push(struct dp_engine *e, uint64_t at_ns, uint64_t key, uint32_t slot,
		      dp_timer_fn fn, void *obj, uint64_t arg, uint32_t lp)
{
	if (e->n >= e->room && grow(e) < 0) {
		e->timer_fail++;
		return e->limit && e->n >= e->limit ? -ENOSPC : -ENOMEM;
	}
	uint32_t id = e->node_free[--e->n_free];
	struct dp_timer_node *x = &e->nodes[id];

	*x = (struct dp_timer_node){.at_ns = at_ns, .key = key, .fn = fn, .obj = obj, .arg = arg,
				    .lp = lp, .slot = slot};
	e->n++;
	if (slot)
		e->slot_pos[slot] = id + 1;
	/* an empty wheel moves on to now: what a callback schedules soon goes in it */
	if (e->wheel_n == 0 && e->now_ns > e->wheel_lo)
		e->wheel_lo = e->now_ns;
	if (in_wheel_span(e, at_ns))
		wheel_insert(e, id);
	else
		heap_insert(e, id);
	return 0;
}

/* The earliest pending timer's node (its bucket settled), NONE when there is none. */
static inline uint32_t first(struct dp_engine *e)
{
	uint32_t w = wheel_first(e);

	if (e->hn == 0)
		return w;
	const struct dp_timer *h = &e->heap[0];
	if (w == NONE || before(h->at_ns, h->key, e->nodes[w].at_ns, e->nodes[w].key))
		return h->node;
	return w;
}

/* Take pending timer id out (from where it is) and free its node. */
static void timer_take(struct dp_engine *e, uint32_t id)
{
	struct dp_timer_node *x = &e->nodes[id];

	if (x->hpos && x->hpos != IN_INBOX)
		heap_remove(e, x->hpos - 1);
	else
		wheel_unlink(e, id);
	if (x->slot)
		e->slot_pos[x->slot] = 0;
	e->n--;
	e->node_free[e->n_free++] = id;
}

/* Add a timer keyed by the running LP's next sequence, in slot (0: none). */
static int add_lp(struct dp_engine *e, uint32_t lp, uint64_t at_ns, dp_timer_fn fn, void *obj,
		  uint64_t arg, uint32_t slot)
{
	uint64_t *seq = e->cur_lp == e->copy_lp ? &e->copy_seq
						 : &e->lp_seq[(size_t)e->cur_lp * DP_LP_STRIDE];

	/* (2^40 timers of one LP: days of a run at any rate this engine reaches) */
	int rc = timer_push(e, at_ns, (uint64_t)e->cur_lp << DP_LP_SEQ_BITS | *seq, slot, fn, obj, arg,
			    lp);
	if (rc == 0)
		++*seq;
	return rc;
}

int dp_timer_add_lp(struct dp_engine *e, uint32_t lp, uint64_t at_ns, dp_timer_fn fn, void *obj,
		    uint64_t arg)
{
	return add_lp(e, lp, at_ns, fn, obj, arg, 0);
}

int dp_timer_slot_new(struct dp_engine *e)
{
	if (e->n_slots + 1 >= e->slot_cap) {
		uint32_t cap = e->slot_cap ? 2 * e->slot_cap : 64;
		uint32_t *p = rl_grow_lines(e->slot_pos, e->slot_cap, cap, sizeof(*p));
		if (p == NULL)
			return -ENOMEM;
		e->slot_pos = p;
		e->slot_cap = cap;
	}
	return (int)++e->n_slots;
}

int dp_timer_slot_arm(struct dp_engine *e, uint32_t slot, uint32_t lp, uint64_t at_ns,
		      dp_timer_fn fn, void *obj, uint64_t arg)
{
	uint32_t pos = e->slot_pos[slot];

	if (pos)
		timer_take(e, pos - 1);
	return add_lp(e, lp, at_ns, fn, obj, arg, slot);
}

void dp_timer_slot_cancel(struct dp_engine *e, uint32_t slot)
{
	uint32_t pos = e->slot_pos[slot];

	if (pos)
		timer_take(e, pos - 1);
}

bool dp_timer_slot_pending(const struct dp_engine *e, uint32_t slot)
{
	return e->slot_pos[slot] != 0;
}

int dp_timer_add(struct dp_engine *e, uint64_t at_ns, dp_timer_fn fn, void *obj, uint64_t arg)
{
	return dp_timer_add_lp(e, e->cur_lp, at_ns, fn, obj, arg);
}

int dp_timer_add_keyed(struct dp_engine *e, uint32_t lp, uint32_t key_lp, uint64_t at_ns,
		       dp_timer_fn fn, void *obj, uint64_t arg)
{
	return timer_push(e, at_ns, (uint64_t)key_lp << DP_LP_SEQ_BITS, 0, fn, obj, arg, lp);
}

bool dp_engine_peek(const struct dp_engine *e, uint64_t *at_ns, uint64_t *key)
{
	bool in_wheel = wheel_first_peek(e, at_ns, key);

	if (e->hn == 0)
		return in_wheel;
	const struct dp_timer *h = &e->heap[0];
	if (!in_wheel || before(h->at_ns, h->key, *at_ns, *key)) {
		*at_ns = h->at_ns;
		*key = h->key;
	}
	return true;
}

int dp_engine_set_prefetch(struct dp_engine *e, dp_timer_fn fn, dp_timer_prefetch_fn pf)
{
	for (uint32_t i = 0; i < e->n_pf; i++)
		if (e->pf[i].fn == fn) {
			e->pf[i].pf = pf;
			return 0;
		}
	if (e->n_pf == DP_PREFETCHERS)
		return -ENOSPC;
	e->pf[e->n_pf].fn = fn;
	e->pf[e->n_pf++].pf = pf;
	return 0;
}

/*
 * The wheel timer after node id in time order (id in the wheel), NONE when
 * there is none: the next of its bucket, else the first of the next bucket in
 * use (buckets are in time order from wheel_lo's round to id's and on). The
 * heap's timers are not looked at (retransmissions, far deadlines: rare).
 */
static inline uint32_t wheel_after(struct dp_engine *e, uint32_t id)
{
	const struct dp_timer_node *x = &e->nodes[id];
	uint32_t b = (uint32_t)(x->at_ns & WHEEL_MASK);

	if (x->next != e->wheel[b])
		return x->next - 1;
	uint32_t nb = bucket_from(e, (b + 1) & WHEEL_MASK);
	if (nb == b)
		return NONE;
	if (e->wheel_in[nb]) /* (it comes next: sorted now rather than when it is first) */
		settle(e, nb);
	return e->wheel[nb] - 1;
}

/*
 * Before timer id runs: ask for what the next timer's callback reads (its
 * prefetcher, else its obj's first line). Only hints: a timer added or taken
 * out meanwhile makes one wrong, never the run. (Asking for the node of the
 * one after too cost a second search of the wheel per dispatch and gained
 * nothing measurable: 0.98x at 1,024 ranks, 3 pairs.)
 */
static inline void look_ahead(struct dp_engine *e, uint32_t id)
{
	if (e->nodes[id].hpos)
		return;
	uint32_t nx = wheel_after(e, id);
	if (nx == NONE)
		return;
	const struct dp_timer_node *y = &e->nodes[nx];
	uint32_t k = 0;
	while (k < e->n_pf && e->pf[k].fn != y->fn)
		k++;
	if (k < e->n_pf)
		e->pf[k].pf(y->obj, y->arg);
	else
		__builtin_prefetch(y->obj);
}

/*
 * Take timer id (the earliest) out and run it as its LP. Its callback is
 * copied out first: the node is free again before it runs. The wheel moves on
 * to its time (never back: a late live timer runs after the wheel's span).
 */
static inline __attribute__((always_inline)) void dispatch(struct dp_engine *e, uint32_t id)
{
	uint32_t was = e->cur_lp;
	struct dp_timer_node x = e->nodes[id];

	look_ahead(e, id);
	timer_take(e, id);
	if (x.at_ns > e->wheel_lo)
		e->wheel_lo = x.at_ns;
	e->cur_lp = x.lp;
	e->dispatching = true;
	e->cur_key = x.key;
	e->cur_sub = 0;
	x.fn(x.obj, x.arg, dp_engine_mono(e, x.at_ns));
	e->dispatching = false;
	e->cur_lp = was;
}

uint64_t dp_engine_next_ns(const struct dp_engine *e)
{
	uint64_t t = UINT64_MAX;

	if (e->wheel_n)
		t = e->nodes[bucket_any(e, wheel_first_bucket(e))].at_ns;
	if (e->hn && e->heap[0].at_ns < t)
		t = e->heap[0].at_ns;
	return t;
}

uint32_t dp_engine_run_budget(struct dp_engine *e, uint64_t now_ns, uint32_t max)
{
	uint32_t ran = 0, id;

	while (ran < max && (id = first(e)) != NONE && e->nodes[id].at_ns <= now_ns) {
		dispatch(e, id);
		ran++;
	}
	e->fired += ran;
	return ran;
}

uint32_t dp_engine_run_due(struct dp_engine *e, uint64_t now_ns)
{
	return dp_engine_run_budget(e, now_ns, UINT32_MAX);
}

uint64_t dp_engine_note_lag(struct dp_engine *e, uint64_t now_ns)
{
	uint64_t next = dp_engine_next_ns(e);

	e->lag_ns = next < now_ns ? now_ns - next : 0;
	if (e->lag_ns > e->lag_max_ns)
		e->lag_max_ns = e->lag_ns;
	return e->lag_ns;
}

bool dp_engine_step_virtual(struct dp_engine *e, uint64_t until_ns)
{
	uint64_t next = dp_engine_next_ns(e);

	if (next == UINT64_MAX || next > until_ns) { /* no timer at all, or none due by then */
		if (until_ns != UINT64_MAX && until_ns > e->now_ns)
			e->now_ns = until_ns; /* a bounded run ends at its bound */
		return false;
	}
	if (next > e->now_ns)
		e->now_ns = next;
	dp_engine_run_due(e, e->now_ns);
	return true;
}

bool dp_engine_step_below(struct dp_engine *e, uint64_t end_at, uint64_t end_key)
{
	uint32_t ran = 0, id = first(e);

	if (id == NONE || !before(e->nodes[id].at_ns, e->nodes[id].key, end_at, end_key))
		return false;
	uint64_t t = e->nodes[id].at_ns;
	if (t > e->now_ns)
		e->now_ns = t;
	do {
		dispatch(e, id);
		ran++;
		id = first(e);
	} while (id != NONE && e->nodes[id].at_ns == t &&
		 before(t, e->nodes[id].key, end_at, end_key));
	e->fired += ran;
	return true;
}
