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
		return -1;
	e->mode = mode;
	e->live_now = live_now;
	e->live_ctx = live_ctx;
	e->cap = 1024;
	e->room = e->cap;
	e->heap = malloc(e->cap * sizeof(*e->heap));
	return e->heap ? 0 : -1;
}

void dp_engine_free(struct dp_engine *e)
{
	free(e->heap);
	memset(e, 0, sizeof(*e));
}

uint64_t dp_engine_now(struct dp_engine *e)
{
	if (e->mode == DP_CLOCK_LIVE)
		e->now_ns = e->live_now(e->live_ctx);
	return e->now_ns;
}

static bool earlier(const struct dp_timer *a, const struct dp_timer *b)
{
	return a->at_ns < b->at_ns || (a->at_ns == b->at_ns && a->seq < b->seq);
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
		return -1;
	if (e->n == e->cap) {
		struct dp_timer *h = realloc(e->heap, 2 * e->cap * sizeof(*h));
		if (h == NULL)
			return -1;
		e->heap = h;
		e->cap *= 2;
	}
	dp_engine_set_limit(e, e->limit);
	return 0;
}

int dp_timer_add(struct dp_engine *e, uint64_t at_ns, dp_timer_fn fn, void *obj, uint64_t arg)
{
	if (e->n >= e->room && grow(e) < 0) {
		e->timer_fail++;
		return e->limit && e->n >= e->limit ? -ENOSPC : -ENOMEM;
	}
	struct dp_timer t = {.at_ns = at_ns, .seq = e->seq++, .fn = fn, .obj = obj, .arg = arg};
	uint32_t i = e->n++;

	while (i > 0) { /* sift up */
		uint32_t parent = (i - 1) / 2;
		if (!earlier(&t, &e->heap[parent]))
			break;
		e->heap[i] = e->heap[parent];
		i = parent;
	}
	e->heap[i] = t;
	return 0;
}

uint64_t dp_engine_next_ns(const struct dp_engine *e)
{
	return e->n ? e->heap[0].at_ns : UINT64_MAX;
}

static struct dp_timer pop(struct dp_engine *e)
{
	struct dp_timer top = e->heap[0];
	struct dp_timer last = e->heap[--e->n];
	uint32_t i = 0;

	for (;;) { /* sift down */
		uint32_t c = 2 * i + 1;
		if (c >= e->n)
			break;
		if (c + 1 < e->n && earlier(&e->heap[c + 1], &e->heap[c]))
			c++;
		if (!earlier(&e->heap[c], &last))
			break;
		e->heap[i] = e->heap[c];
		i = c;
	}
	if (e->n)
		e->heap[i] = last;
	return top;
}

uint32_t dp_engine_run_budget(struct dp_engine *e, uint64_t now_ns, uint32_t max)
{
	uint32_t ran = 0;

	while (ran < max && e->n && e->heap[0].at_ns <= now_ns) {
		struct dp_timer t = pop(e);
		t.fn(t.obj, t.arg, dp_engine_mono(e, t.at_ns));
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
