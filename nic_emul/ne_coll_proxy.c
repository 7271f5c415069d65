/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll: who takes completions from the CQs, who posts, and when.
 *
 * Costs off (default): a CQ notification puts the rank on the ready heap;
 * a poll drains those CQs completely, in ascending rank order, and posts go
 * to the NIC at once.
 *
 * Costs on: each rank has one proxy thread, as NCCL's proxy progress
 * thread, that does one thing at a time: post the oldest queued WQE (the
 * NIC sees it proxy_post_ns after the thread started it) or, with no post
 * queued, take one CQE (acted on proxy_poll_ns after it was taken).
 * A thread busy until t sits on the timer heap at t; ranks whose thread may
 * act now sit on the due heap. Nothing is scanned: the work of a poll
 * follows notifications, queued posts and timers.
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PROXY_QUEUE_MIN 16u

static bool proxy_costs(const struct ne_coll_config *cfg)
{
	return cfg->proxy_post_ns || cfg->proxy_poll_ns;
}

int ne_coll_proxy_setup(struct ne_coll *c)
{
	if (!proxy_costs(&c->cfg))
		return 0;
	c->proxy_on = true;
	c->due = calloc(c->nranks, sizeof(*c->due));
	if (!c->due)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->nranks; i++) {
		struct coll_proxy *p = calloc(1, sizeof(*p));

		if (!p)
			return -ENOMEM;
		p->timer_at = UINT64_MAX;
		c->ranks[i].proxy = p;
	}
	return 0;
}

void ne_coll_proxy_free(struct ne_coll *c)
{
	for (uint32_t i = 0; c->ranks && i < c->nranks; i++) {
		if (c->ranks[i].proxy)
			free(c->ranks[i].proxy->q);
		free(c->ranks[i].proxy);
	}
	free(c->due);
	free(c->timers);
}

static void mark_due(struct ne_coll *c, uint32_t rank)
{
	struct coll_proxy *p = c->ranks[rank].proxy;

	if (!p->due) {
		p->due = true;
		ne_coll_rank_heap_push(c->due, &c->ndue, rank);
	}
}

static int queue_push(struct coll_rank *r, uint32_t qpn, const struct ne_send_wr *wr)
{
	struct coll_proxy *p = r->proxy;

	if (p->n == p->cap) {
		uint32_t nc = p->cap ? 2 * p->cap : PROXY_QUEUE_MIN;
		struct coll_post *q = malloc(nc * sizeof(*q));

		if (!q)
			return -ENOMEM;
		for (uint32_t i = 0; i < p->n; i++)
			q[i] = p->q[(p->head + i) % p->cap];
		free(p->q);
		p->q = q;
		p->head = 0;
		p->cap = nc;
	}
	p->q[(p->head + p->n) % p->cap].qpn = qpn;
	p->q[(p->head + p->n) % p->cap].wr = *wr;
	p->n++;
	if (p->n > r->pst.max_queue)
		r->pst.max_queue = p->n;
	return 0;
}

int ne_coll_proxy_post(struct ne_coll *c, uint32_t rank, uint32_t qpn,
		       const struct ne_send_wr *wr, uint64_t now)
{
	struct coll_rank *r = &c->ranks[rank];
	int rc;

	if (!r->proxy) {
		rc = ne_post_send(r->nic, qpn, wr, now);
		if (!rc) {
			c->stats.wqes_posted++;
			r->pst.wqes_posted++;
			ne_coll_active_posted(c, rank, qpn, wr->wr_id, now);
		}
		return rc;
	}
	rc = queue_push(r, qpn, wr);
	if (!rc)
		mark_due(c, rank);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Timer heap of busy threads: (time, rank), lazy deletion via timer_at. */

static bool timer_less(const struct coll_timer *a, const struct coll_timer *b)
{
	return a->t < b->t || (a->t == b->t && a->rank < b->rank);
}

static int timer_push(struct ne_coll *c, uint64_t t, uint32_t rank)
{
	uint32_t i;

	if (c->ntimers == c->timers_cap) {
		uint32_t nc = c->timers_cap ? 2 * c->timers_cap : PROXY_QUEUE_MIN;
		struct coll_timer *h = realloc(c->timers, nc * sizeof(*h));

		if (!h)
			return -ENOMEM;
		c->timers = h;
		c->timers_cap = nc;
	}
	i = c->ntimers++;
	c->timers[i].t = t;
	c->timers[i].rank = rank;
	while (i > 0 && timer_less(&c->timers[i], &c->timers[(i - 1) / 2])) {
		struct coll_timer tmp = c->timers[i];

		c->timers[i] = c->timers[(i - 1) / 2];
		c->timers[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
	return 0;
}

static struct coll_timer timer_pop(struct ne_coll *c)
{
	struct coll_timer top = c->timers[0];
	uint32_t i = 0;

	c->timers[0] = c->timers[--c->ntimers];
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		struct coll_timer tmp;

		if (l < c->ntimers && timer_less(&c->timers[l], &c->timers[m]))
			m = l;
		if (l + 1 < c->ntimers && timer_less(&c->timers[l + 1], &c->timers[m]))
			m = l + 1;
		if (m == i)
			break;
		tmp = c->timers[i];
		c->timers[i] = c->timers[m];
		c->timers[m] = tmp;
		i = m;
	}
	return top;
}

/* The thread of rank is busy until p->busy_until: wake it then. */
static void sleep_until_free(struct ne_coll *c, uint32_t rank)
{
	struct coll_proxy *p = c->ranks[rank].proxy;

	if (p->timer_at == p->busy_until)
		return;
	p->timer_at = p->busy_until;
	if (timer_push(c, p->busy_until, rank))
		c->failed = true; /* out of memory: stop rather than stall silently */
}

uint64_t ne_coll_proxy_next_ns(const struct ne_coll *c)
{
	/* stale entries only make the answer early, never late */
	return c->ntimers ? c->timers[0].t : UINT64_MAX;
}

/* ------------------------------------------------------------------ */
/* Draining */

/* A FIFO (CTS) arrival of the nccl model: NCCL's proxy reads it from
 * memory, so it costs no CQE poll. */
static bool is_fifo_read(const struct ne_coll *c, const struct ne_wc *wc)
{
	return coll_nccl(c) && wc->status == NE_WC_SUCCESS &&
	       (uint32_t)(wc->wr_id >> WR_KIND_SHIFT) == WR_CTS_RECV;
}

/* Costs off: every notified CQ, completely, ascending rank order. */
static int drain_ready(struct ne_coll *c, uint64_t now)
{
	struct ne_wc wc[COLL_POLL_BATCH];
	int handled = 0;

	while (c->nready) {
		uint32_t i = ne_coll_rank_heap_pop(c->ready, &c->nready);
		int got;

		c->ranks[i].cq_ready = false;
		c->stats.rank_visits++;
		do {
			got = ne_cq_poll(c->ranks[i].cq, wc, COLL_POLL_BATCH);
			c->stats.cq_polls++;
			for (int j = 0; j < got; j++) {
				if (!is_fifo_read(c, &wc[j])) {
					c->stats.cqes_polled++;
					c->ranks[i].pst.cqes_polled++;
				}
				ne_coll_handle_wc(c, i, &wc[j], now);
			}
			handled += got;
		} while (got > 0);
	}
	return handled;
}

/* Ring the doorbell of the post whose time has come. */
static void finish_post(struct ne_coll *c, uint32_t rank, uint64_t now)
{
	struct coll_rank *r = &c->ranks[rank];
	struct coll_proxy *p = r->proxy;
	struct coll_post *head = &p->q[p->head];
	int rc = ne_post_send(r->nic, head->qpn, &head->wr, now);

	if (rc) {
		/* send queue full (or the QP failed, which its flushed completions
		 * report): as without costs, try again later, here after another
		 * post time */
		c->stats.post_busy++;
		p->busy_until = now + (c->cfg.proxy_post_ns ? c->cfg.proxy_post_ns : 1);
		return;
	}
	ne_coll_active_posted(c, rank, head->qpn, head->wr.wr_id, now);
	p->post_started = false;
	p->head = (p->head + 1) % p->cap;
	p->n--;
	c->stats.wqes_posted++;
	r->pst.wqes_posted++;
}

/* Let rank's thread work until it is busy past now or has nothing to do.
 * Returns completions handled. */
static int proxy_run(struct ne_coll *c, uint32_t rank, uint64_t now)
{
	struct coll_rank *r = &c->ranks[rank];
	struct coll_proxy *p = r->proxy;
	int handled = 0;

	while (p->busy_until <= now && !c->failed) {
		struct ne_wc wc;

		if (p->post_started) {
			finish_post(c, rank, now);
			continue;
		}
		if (p->wc_taken) {
			p->wc_taken = false;
			ne_coll_handle_wc(c, rank, &p->wc, now);
			continue;
		}
		if (p->n) {
			p->post_started = true;
			p->busy_until = now + c->cfg.proxy_post_ns;
			r->pst.busy_ns += c->cfg.proxy_post_ns;
			c->stats.proxy_busy_ns += c->cfg.proxy_post_ns;
			continue;
		}
		c->stats.cq_polls++;
		if (ne_cq_poll(r->cq, &wc, 1) != 1)
			break;
		handled++;
		if (is_fifo_read(c, &wc)) {
			ne_coll_handle_wc(c, rank, &wc, now);
			continue;
		}
		p->busy_until = now + c->cfg.proxy_poll_ns;
		p->wc = wc;
		p->wc_taken = true;
		r->pst.busy_ns += c->cfg.proxy_poll_ns;
		r->pst.cqes_polled++;
		c->stats.proxy_busy_ns += c->cfg.proxy_poll_ns;
		c->stats.cqes_polled++;
	}
	if (p->busy_until > now)
		sleep_until_free(c, rank);
	return handled;
}

/* Costs on: wake the threads whose time came, the notified ones and those
 * with queued posts; run each (ascending rank) and the marked connections,
 * until nothing more can happen at now. */
static int drain_proxies(struct ne_coll *c, uint64_t now)
{
	int handled = 0;

	while (c->ntimers && c->timers[0].t <= now) {
		struct coll_timer t = timer_pop(c);
		struct coll_proxy *p = c->ranks[t.rank].proxy;

		if (p->timer_at != t.t)
			continue; /* stale */
		p->timer_at = UINT64_MAX;
		mark_due(c, t.rank);
	}
	for (;;) {
		while (c->nready) {
			uint32_t i = ne_coll_rank_heap_pop(c->ready, &c->nready);

			c->ranks[i].cq_ready = false;
			mark_due(c, i);
		}
		if (!c->ndue)
			break;
		while (c->ndue) {
			uint32_t i = ne_coll_rank_heap_pop(c->due, &c->ndue);

			c->ranks[i].proxy->due = false;
			c->stats.rank_visits++;
			handled += proxy_run(c, i, now);
		}
		if (c->running && !c->failed)
			ne_coll_run_marked(c, now);
	}
	return handled;
}

int ne_coll_proxy_poll(struct ne_coll *c, uint64_t now)
{
	return c->proxy_on ? drain_proxies(c, now) : drain_ready(c, now);
}
