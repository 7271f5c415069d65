/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fl_event: the virtual clock. Every live flow has exactly one pending event
 * in one heap keyed by time (ties: lowest flow id): its start (PENDING), its
 * last byte sent (SENDING), its delivery (DRAINING). A flow that starts at
 * the current instant starts at once (fl_start) and has none until its rate
 * is set; the links it joined make the next batch due now. All events of one
 * instant are handled together, then the rates of the flows connected to the
 * links they changed are recomputed once (with a refill period: those of the
 * flows on the changed links, and the connected ones at the refill, an
 * instant of its own when no event falls on it).
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>

#include "fl_internal.h"

/* fl_test_steal's link, FL_LINK_ALL when none (a test hook: one load per hop delivered otherwise). */
static _Atomic uint32_t steal_link = FL_LINK_ALL;

void fl_test_steal(uint32_t link)
{
	atomic_store(&steal_link, link);
}

/* Whether the bytes delivered over link vanish this once (fl_test_steal): the first caller takes it. */
static bool stolen(uint32_t link)
{
	uint32_t armed = link;

	return atomic_load_explicit(&steal_link, memory_order_relaxed) == link &&
	       atomic_compare_exchange_strong(&steal_link, &armed, FL_LINK_ALL);
}

/* saturating a + b for times: FL_TIME_INF stays "never" */
static uint64_t t_add(uint64_t a, uint64_t b)
{
	return b >= FL_TIME_INF - a ? FL_TIME_INF : a + b;
}

static void link_insert(struct fl_fabric *fab, uint32_t f, unsigned h)
{
	uint32_t node = f * FL_MAX_HOPS + h;
	struct fl_hop *hp = &fab->hops[node];
	struct fl_link *lk = &fab->links[hp->link];

	hp->prev = FL_NIL;
	hp->next = lk->head;
	if (lk->head != FL_NIL)
		fab->hops[lk->head].prev = node;
	lk->head = node;
	lk->n += fab->flows[f].weight;
	fl_seed(fab, hp->link);
}

static void link_remove(struct fl_fabric *fab, uint32_t f, unsigned h)
{
	struct fl_hop *hp = fl_hop_of(fab, f, h);
	struct fl_link *lk = &fab->links[hp->link];

	if (hp->prev != FL_NIL)
		fab->hops[hp->prev].next = hp->next;
	else
		lk->head = hp->next;
	if (hp->next != FL_NIL)
		fab->hops[hp->next].prev = hp->prev;
	hp->prev = hp->next = FL_NIL;
	lk->n -= fab->flows[f].weight;
	fl_seed(fab, hp->link);
}

void fl_start(struct fl_fabric *fab, uint32_t f)
{
	struct fl_flow *fl = &fab->flows[f];

	fl->last_ns = fab->now;
	if (fl->bytes == 0) { /* one header-only packet: no bandwidth taken */
		fl->state = FL_DRAINING;
		(void)fl_heap_set(&fab->events, f, t_add(fab->now, fl->lat_ns));
		return;
	}
	fl_heap_del(&fab->events, f);
	fl->state = FL_SENDING;
	fl->rate = 0;
	/* (counted by the batch that rates it, as when every start was an event
	 * of the heap: a driver reading the counts between batches sees the same) */
	fab->starts_unbatched++;
	for (unsigned h = 0; h < fl->n_hops; h++)
		link_insert(fab, f, h);
	/* its event time comes from fl_recompute() */
}

static void send_end(struct fl_fabric *fab, uint32_t f)
{
	struct fl_flow *fl = &fab->flows[f];

	fl_settle(fab, f); /* rem reaches 0: its ceil'd end is at or after the last bit */
	if (fab->cfg.refill_ns) /* its rate goes back to its links (fl_link.resid) */
		for (unsigned h = 0; h < fl->n_hops; h++)
			fab->links[fl_hop_of(fab, f, h)->link].resid += fl->rate;
	fl->state = FL_DRAINING;
	fl->rate = 0;
	fab->stats.events++;
	for (unsigned h = 0; h < fl->n_hops; h++)
		link_remove(fab, f, h);
	(void)fl_heap_set(&fab->events, f, t_add(fab->now, fl->lat_ns));
	if (fab->cfg.sent)
		fab->cfg.sent(fab->cfg.sent_ctx, fl->cookie);
}

static void deliver(struct fl_fabric *fab, uint32_t f)
{
	struct fl_flow *fl = &fab->flows[f];
	size_t slot = (fab->done_head + fab->n_done) % fab->cap_done; /* room kept at its start */

	fab->done[slot] = (struct fl_done){ .cookie = fl->cookie, .start_ns = fl->start_ns,
		.finish_ns = fab->now, .bytes = fl->bytes, .flow = f };
	fab->n_done++;
	fab->delivered_total += fl->bytes;
	for (unsigned h = 0; h < fl->n_hops; h++) {
		uint32_t l = fl_hop_of(fab, f, h)->link;
		if (!stolen(l))
			fab->links[l].delivered += fl->bytes;
	}
	fl_heap_del(&fab->events, f);
	fl->state = FL_FREE;
	fl->next_free = fab->free_head;
	fab->free_head = f;
	fab->n_live--;
	fab->stats.delivered++;
}

/* refill_ns: at a refill (or with no flow left) the components of every link
 * changed since the last one get exact rates; else a local fill of this
 * instant's changed links, which join the pending set, and the first change
 * since the last refill sets the next one. */
static void refill_or_local(struct fl_fabric *fab)
{
	if (fab->now >= fab->refill_at || fab->n_live == 0) {
		for (uint32_t i = 0; i < fab->n_pend; i++) {
			fab->links[fab->pend[i]].pending = 0;
			fl_seed(fab, fab->pend[i]);
		}
		fab->n_pend = 0;
		fl_recompute(fab, false);
		fab->refill_at = FL_TIME_INF;
		return;
	}
	for (uint32_t i = 0; i < fab->n_seeds; i++) {
		struct fl_link *lk = &fab->links[fab->seeds[i]];

		if (!lk->pending) {
			lk->pending = 1;
			fab->pend[fab->n_pend++] = fab->seeds[i];
		}
	}
	if (fab->n_seeds && fab->refill_at == FL_TIME_INF)
		fab->refill_at = t_add(fab->now, fab->cfg.refill_ns);
	fl_recompute(fab, true);
}

/* Handles every event at the earliest event time (with refill_ns, a refill
 * due then too); returns the flows delivered. */
static int batch(struct fl_fabric *fab)
{
	uint64_t t = fl_next_event_ns(fab);
	int delivered = 0;

	fab->now = t;
	while (!fl_heap_empty(&fab->events) && fl_heap_top(&fab->events).key == t) {
		uint32_t f = fl_heap_top(&fab->events).id;

		/* each handler moves f's event or takes it out: one sift, not two */
		switch (fab->flows[f].state) {
		case FL_PENDING:
			fl_start(fab, f);
			break;
		case FL_SENDING:
			send_end(fab, f);
			break;
		default:
			deliver(fab, f);
			delivered++;
			break;
		}
	}
	fab->stats.batches++;
	fab->stats.events += fab->starts_unbatched;
	fab->starts_unbatched = 0;
	if (fab->cfg.refill_ns)
		refill_or_local(fab);
	else
		fl_recompute(fab, false);
	return delivered;
}

uint64_t fl_next_event_ns(const struct fl_fabric *fab)
{
	if (fab->n_seeds) /* flows started now (fl_start) wait for their rates */
		return fab->now;
	uint64_t t = fl_heap_empty(&fab->events) ? FL_TIME_INF : fl_heap_top(&fab->events).key;

	return fab->refill_at < t ? fab->refill_at : t;
}

int fl_advance(struct fl_fabric *fab, uint64_t *now_ns)
{
	int n = 0;

	while (n == 0) {
		if (fl_heap_empty(&fab->events) && !fab->n_seeds)
			break;
		if (fl_next_event_ns(fab) == FL_TIME_INF) /* (a refill due is not a deadlock) */
			return -EDEADLK;
		n = batch(fab);
	}
	if (now_ns)
		*now_ns = fab->now;
	return n;
}

int fl_run_until(struct fl_fabric *fab, uint64_t t_ns)
{
	int n = 0;

	if (t_ns < fab->now)
		return -EINVAL;
	while (fl_next_event_ns(fab) <= t_ns && fl_next_event_ns(fab) != FL_TIME_INF) {
		int d = batch(fab);

		n = d > INT_MAX - n ? INT_MAX : n + d;
	}
	fab->now = t_ns;
	return n;
}
