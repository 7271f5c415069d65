/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	e->xfer_min_ns = UINT64_MAX;
	e->heap = malloc(e->cap * sizeof(*e->heap));
	e->cbs = malloc(e->cap * sizeof(*e->cbs));
	e->cb_free = malloc(e->cap * sizeof(*e->cb_free));
	if (e->heap == NULL || e->cbs == NULL || e->cb_free == NULL) {
		dp_engine_free(e);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < e->cap; i++) /* (popped from the end: index 0 first) */
		e->cb_free[i] = e->cap - 1 - i;
	e->n_free = e->cap;
	return 0;
}

void dp_engine_free(struct dp_engine *e)
{
	free(e->heap);
	free(e->cbs);
	free(e->cb_free);
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
 * Whether a comes before b: by time, then by key. As one 128-bit compare
 * (cmp, sbb: no branch), because the heap's walk down picks the earlier of
 * two children that are in no predictable order, and a mispredicted branch
 * per level was the largest cost of a pop.
 */
static inline bool earlier(const struct dp_timer *a, const struct dp_timer *b)
{
	unsigned __int128 x = (unsigned __int128)a->at_ns << 64 | a->key;
	unsigned __int128 y = (unsigned __int128)b->at_ns << 64 | b->key;

	return x < y;
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
		struct dp_timer *h = realloc(e->heap, cap * sizeof(*h));
		if (h == NULL)
			return -ENOMEM;
		e->heap = h;
		struct dp_timer_cb *cbs = realloc(e->cbs, cap * sizeof(*cbs));
		if (cbs == NULL)
			return -ENOMEM;
		e->cbs = cbs;
		uint32_t *fr = realloc(e->cb_free, cap * sizeof(*fr));
		if (fr == NULL)
			return -ENOMEM;
		e->cb_free = fr;
		/* all of cbs[0, cap) is in use (n == cap): the new half is free */
		for (uint32_t i = cap; i > e->cap; i--)
			e->cb_free[e->n_free++] = i - 1;
		e->cap = cap;
	}
	dp_engine_set_limit(e, e->limit);
	return 0;
}

/*
 * Put t at heap index i and, when the engine has slots (track), tell t's slot
 * where it is. The sifts take track as a constant so that an engine without
 * slots (a fabric without emulated NICs) does not pay for the bookkeeping.
 */
static inline __attribute__((always_inline)) void place(struct dp_engine *e, uint32_t i,
							const struct dp_timer *t, bool track)
{
	e->heap[i] = *t;
	if (track) /* (slot 0, a plain timer's, is a slot no one asks about) */
		e->slot_pos[t->slot] = i + 1;
}

/* Fill the hole at i with t, moving it up past later parents. */
static inline __attribute__((always_inline)) void sift_up(struct dp_engine *e, uint32_t i,
							  const struct dp_timer *t, bool track)
{
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!earlier(t, &e->heap[parent]))
			break;
		place(e, i, &e->heap[parent], track);
		i = parent;
	}
	place(e, i, t, track);
}

/* Fill the hole at i with t, moving it down past earlier children. */
static void sift_down(struct dp_engine *e, uint32_t i, const struct dp_timer *t)
{
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= e->n)
			break;
		c = earlier_child(e, c, e->n);
		if (!earlier(&e->heap[c], t))
			break;
		place(e, i, &e->heap[c], true);
		i = c;
	}
	place(e, i, t, true);
}

/*
 * Put a timer at (at_ns, key) in slot (0: none) with callback cb in the
 * heap. Returns 0, -ENOMEM or -ENOSPC (counted in timer_fail).
 */
static int heap_push(struct dp_engine *e, uint64_t at_ns, uint64_t key, uint32_t slot,
		     const struct dp_timer_cb *cb)
{
	if (e->n >= e->room && grow(e) < 0) {
		e->timer_fail++;
		return e->limit && e->n >= e->limit ? -ENOSPC : -ENOMEM;
	}
	struct dp_timer t = {.at_ns = at_ns, .key = key, .cb = e->cb_free[--e->n_free], .slot = slot};

	e->cbs[t.cb] = *cb;
	if (e->n_slots)
		sift_up(e, e->n++, &t, true);
	else
		sift_up(e, e->n++, &t, false);
	return 0;
}

/* Take the timer at heap index i out (the last one fills its place). */
static void heap_remove(struct dp_engine *e, uint32_t i)
{
	struct dp_timer last = e->heap[--e->n];

	e->cb_free[e->n_free++] = e->heap[i].cb;
	if (i == e->n)
		return;
	if (i > 0 && earlier(&last, &e->heap[(i - 1) / 2]))
		sift_up(e, i, &last, true);
	else
		sift_down(e, i, &last);
}

/* Add a timer keyed by the running LP's next sequence, in slot (0: none). */
static int add_lp(struct dp_engine *e, uint32_t lp, uint64_t at_ns, dp_timer_fn fn, void *obj,
		  uint64_t arg, uint32_t slot)
{
	uint64_t *seq = &e->lp_seq[(size_t)e->cur_lp * DP_LP_STRIDE];
	struct dp_timer_cb cb = {.fn = fn, .obj = obj, .arg = arg, .lp = lp};

	/* (2^40 timers of one LP: days of a run at any rate this engine reaches) */
	int rc = heap_push(e, at_ns, (uint64_t)e->cur_lp << DP_LP_SEQ_BITS | *seq, slot, &cb);
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
		uint32_t *p = realloc(e->slot_pos, cap * sizeof(*p));
		if (p == NULL)
			return -ENOMEM;
		memset(p + e->slot_cap, 0, (cap - e->slot_cap) * sizeof(*p));
		e->slot_pos = p;
		e->slot_cap = cap;
	}
	return (int)++e->n_slots;
}

int dp_timer_slot_arm(struct dp_engine *e, uint32_t slot, uint32_t lp, uint64_t at_ns,
		      dp_timer_fn fn, void *obj, uint64_t arg)
{
	uint32_t pos = e->slot_pos[slot];

	if (pos) {
		e->slot_pos[slot] = 0;
		heap_remove(e, pos - 1);
	}
	return add_lp(e, lp, at_ns, fn, obj, arg, slot);
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
	struct dp_timer_cb cb = {.fn = fn, .obj = obj, .arg = arg, .lp = lp};

	return heap_push(e, at_ns, (uint64_t)key_lp << DP_LP_SEQ_BITS, 0, &cb);
}

bool dp_engine_peek(const struct dp_engine *e, uint64_t *at_ns, uint64_t *key)
{
	if (e->n == 0)
		return false;
	*at_ns = e->heap[0].at_ns;
	*key = e->heap[0].key;
	return true;
}

/*
 * Run t (popped: its callback's index is free again, so the callback is
 * copied out first) as its LP.
 */
static inline void dispatch(struct dp_engine *e, const struct dp_timer *t)
{
	uint32_t was = e->cur_lp;
	struct dp_timer_cb cb = e->cbs[t->cb];

	e->cb_free[e->n_free++] = t->cb;
	e->cur_lp = cb.lp;
	e->dispatching = true;
	e->cur_key = t->key;
	e->cur_sub = 0;
	cb.fn(cb.obj, cb.arg, dp_engine_mono(e, t->at_ns));
	e->dispatching = false;
	e->cur_lp = was;
}

uint64_t dp_engine_next_ns(const struct dp_engine *e)
{
	return e->n ? e->heap[0].at_ns : UINT64_MAX;
}

/*
 * Take the earliest timer out. The hole at the root goes down to a leaf along
 * the earlier children (one comparison per level), then the last timer fills
 * it from there up: it belongs near the bottom, so that is a level or two,
 * where sifting it down from the root compares twice per level.
 */
static inline __attribute__((always_inline)) struct dp_timer pop_track(struct dp_engine *e,
								       bool track)
{
	struct dp_timer top = e->heap[0];
	uint32_t n = --e->n, i = 0;

	if (track && top.slot)
		e->slot_pos[top.slot] = 0;
	if (n == 0)
		return top;
	for (uint32_t c = 1; c < n; c = 2 * i + 1) {
		c = earlier_child(e, c, n);
		place(e, i, &e->heap[c], track);
		i = c;
	}
	struct dp_timer last = e->heap[n];
	sift_up(e, i, &last, track);
	return top;
}

static struct dp_timer pop(struct dp_engine *e)
{
	return e->n_slots ? pop_track(e, true) : pop_track(e, false);
}

uint32_t dp_engine_run_budget(struct dp_engine *e, uint64_t now_ns, uint32_t max)
{
	uint32_t ran = 0;

	while (ran < max && e->n && e->heap[0].at_ns <= now_ns) {
		struct dp_timer t = pop(e);
		dispatch(e, &t);
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
	uint32_t ran = 0;

	if (e->n == 0)
		return false;
	uint64_t t = e->heap[0].at_ns;
	if (t > end_at || (t == end_at && e->heap[0].key >= end_key))
		return false;
	if (t > e->now_ns)
		e->now_ns = t;
	while (e->n && e->heap[0].at_ns == t && (t < end_at || e->heap[0].key < end_key)) {
		struct dp_timer x = pop(e);
		dispatch(e, &x);
		ran++;
	}
	e->fired += ran;
	return true;
}
