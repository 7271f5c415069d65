/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fl_rate: max-min fair rates by progressive filling, recomputed only over
 * the component of the links whose flows changed.
 *
 * Progressive filling: every link offers its remaining capacity evenly to the
 * flows on it not yet fixed (share = floor(rem / n)); the link with the
 * smallest share (ties: the lowest link id) is a bottleneck, its flows are
 * fixed at that share and it is taken off their other links; repeat. The
 * smallest share never decreases from one step to the next (a link giving
 * x <= rem/n to k of its flows keeps (rem - kx)/(n - k) >= rem/n), so the
 * links sit in an indexed heap keyed by share.
 *
 * Components: two flows interact only through a link they share, so the
 * rates of a component (flows and links connected through shared links)
 * depend on nothing outside it; the sequence of bottlenecks it sees is the
 * same whether the fabric is filled whole or one component at a time, and
 * the incremental rates equal a full recomputation bit for bit.
 *
 * Refill period (fl_config.refill_ns): between refills an instant's changes
 * fill only the flows on the links that changed, in what those flows had plus
 * what the links had left; every other flow keeps its rate, so no link goes
 * over capacity. The changed links wait in a pending set, and refill_ns
 * after the first change their components get exact rates.
 */
#include "fl_internal.h"

uint64_t fl_sent_at(const struct fl_flow *f, uint64_t t)
{
	fl_u128 rem = f->rem;

	if (f->state == FL_SENDING && t > f->last_ns && f->rate) {
		fl_u128 d = (fl_u128)f->rate * (t - f->last_ns);

		rem = d >= rem ? 0 : rem - d;
	}
	/* sent = floor((bytes x 8e9 - rem) / 8e9) = bytes - ceil(rem / 8e9) */
	return f->bytes - (uint64_t)((rem + FL_NBITS_PER_BYTE - 1) / FL_NBITS_PER_BYTE);
}

void fl_settle(struct fl_fabric *fab, uint32_t id)
{
	struct fl_flow *f = &fab->flows[id];
	uint64_t now = fab->now, sent = fl_sent_at(f, now), d = sent - f->sent;

	if (f->state == FL_SENDING && now > f->last_ns && f->rate) {
		fl_u128 x = (fl_u128)f->rate * (now - f->last_ns);

		f->rem = x >= f->rem ? 0 : f->rem - x;
	}
	f->last_ns = now;
	if (!d)
		return;
	f->sent = sent;
	fab->sent_total += d;
	for (unsigned h = 0; h < f->n_hops; h++)
		fab->links[fl_hop_of(fab, id, h)->link].sent += d;
}

uint64_t fl_send_end(const struct fl_flow *f)
{
	if (!f->rate)
		return FL_TIME_INF;
	/* ceil: the last bit is out at the first whole ns after it is sent */
	fl_u128 dt = (f->rem + f->rate - 1) / f->rate;

	if (dt >= FL_TIME_INF - f->last_ns)
		return FL_TIME_INF;
	return f->last_ns + (uint64_t)dt;
}

void fl_seed(struct fl_fabric *fab, uint32_t l)
{
	if (fab->links[l].seeded)
		return;
	fab->links[l].seeded = 1;
	fab->seeds[fab->n_seeds++] = l;
}

static void visit_link(struct fl_fabric *fab, uint32_t l)
{
	if (fab->links[l].mark == fab->epoch)
		return;
	fab->links[l].mark = fab->epoch;
	fab->clinks[fab->n_clinks++] = l;
}

/* The links and flows reachable from the seeds (breadth first: clinks is the
 * queue); local: only the flows on the seeds, and their links. */
static void walk(struct fl_fabric *fab, bool local)
{
	fab->n_clinks = fab->n_cflows = 0;
	if (fab->cfg.full && !local) {
		for (uint32_t l = 0; l < fab->n_links; l++)
			visit_link(fab, l);
	} else {
		for (uint32_t i = 0; i < fab->n_seeds; i++)
			visit_link(fab, fab->seeds[i]);
	}
	uint32_t end = local ? fab->n_clinks : UINT32_MAX;

	for (uint32_t i = 0; i < fab->n_clinks && i < end; i++) {
		for (uint32_t n = fab->links[fab->clinks[i]].head; n != FL_NIL; n = fab->hops[n].next) {
			uint32_t f = n / FL_MAX_HOPS;
			struct fl_flow *fl = &fab->flows[f];

			if (fl->mark == fab->epoch)
				continue;
			fl->mark = fab->epoch;
			fab->cflows[fab->n_cflows++] = f;
			for (unsigned h = 0; h < fl->n_hops; h++)
				visit_link(fab, fl_hop_of(fab, f, h)->link);
		}
	}
}

/* Flow f is fixed at share (per unit of weight): every link of its path gives it
 * that. A link's key in the heap is left as it was: it is fixed when the link
 * comes to the top (water_fill). */
static void freeze(struct fl_fabric *fab, uint32_t f, uint64_t share)
{
	struct fl_flow *fl = &fab->flows[f];

	fl->frozen = fab->epoch;
	fl->new_rate = share * fl->weight; /* what its weight flows apart would get together */
	for (unsigned h = 0; h < fl->n_hops; h++) {
		struct fl_link *lk = &fab->links[fl_hop_of(fab, f, h)->link];

		lk->wf_rem -= fl->new_rate;
		lk->wf_n -= fl->weight;
	}
}

/*
 * Progressive filling with lazy keys: a link's key is its share when last
 * set, and a share never decreases while filling goes on (the header), so a
 * key is a lower bound of its link's share. The top is taken only when its
 * key is its share; else it goes back with its share. Then no link has a
 * smaller (share, id) than it: another's key is at least the top's, and its
 * share at least its key, equal only with a higher id. So the bottlenecks
 * are those of keys kept exact at every freeze, in the same order, with one
 * heap update per link that came up stale instead of one per flow and hop.
 */
static void water_fill(struct fl_fabric *fab, bool local)
{
	for (uint32_t i = 0; i < fab->n_clinks; i++) {
		struct fl_link *lk = &fab->links[fab->clinks[i]];

		lk->wf_rem = local ? lk->resid : lk->bps;
		lk->wf_n = local ? 0 : lk->n;
	}
	if (local) /* what the flows filled had stays theirs to share; the others keep theirs */
		for (uint32_t i = 0; i < fab->n_cflows; i++) {
			const struct fl_flow *fl = &fab->flows[fab->cflows[i]];

			for (unsigned h = 0; h < fl->n_hops; h++) {
				struct fl_link *lk = &fab->links[fl_hop_of(fab, fab->cflows[i], h)->link];

				lk->wf_rem += fl->rate;
				lk->wf_n += fl->weight;
			}
		}
	for (uint32_t i = 0; i < fab->n_clinks; i++) {
		struct fl_link *lk = &fab->links[fab->clinks[i]];

		if (lk->wf_n)
			(void)fl_heap_set(&fab->wf, fab->clinks[i], lk->wf_rem / lk->wf_n);
	}
	while (!fl_heap_empty(&fab->wf)) {
		struct fl_hent top = fl_heap_top(&fab->wf);
		struct fl_link *lk = &fab->links[top.id];

		if (lk->wf_n == 0) { /* its flows were all fixed elsewhere */
			fl_heap_del(&fab->wf, top.id);
			continue;
		}
		uint64_t share = lk->wf_rem / lk->wf_n;

		if (share != top.key) { /* stale: back with its share (l < ids: cannot fail) */
			(void)fl_heap_set(&fab->wf, top.id, share);
			continue;
		}
		for (uint32_t n = lk->head; n != FL_NIL; n = fab->hops[n].next) {
			const struct fl_flow *fl = &fab->flows[n / FL_MAX_HOPS];

			/* (local: a flow not being filled keeps its rate) */
			if (fl->frozen != fab->epoch && fl->mark == fab->epoch)
				freeze(fab, n / FL_MAX_HOPS, share);
		}
		fl_heap_del(&fab->wf, top.id);
	}
}

void fl_recompute(struct fl_fabric *fab, bool local)
{
	if (!fab->n_seeds) /* no flow started or ended */
		return;
	if (++fab->epoch == 0) { /* wrapped: forget every old mark */
		for (uint32_t l = 0; l < fab->n_links; l++)
			fab->links[l].mark = 0;
		for (uint32_t f = 0; f < fab->cap_flows; f++)
			fab->flows[f].mark = fab->flows[f].frozen = 0;
		fab->epoch = 1;
	}
	walk(fab, local);
	for (uint32_t i = 0; i < fab->n_cflows; i++)
		fl_settle(fab, fab->cflows[i]);
	water_fill(fab, local);
	if (fab->cfg.refill_ns) /* what the component's rates leave: water_fill's remainder */
		for (uint32_t i = 0; i < fab->n_clinks; i++)
			fab->links[fab->clinks[i]].resid = fab->links[fab->clinks[i]].wf_rem;
	for (uint32_t i = 0; i < fab->n_cflows; i++) {
		uint32_t f = fab->cflows[i];
		struct fl_flow *fl = &fab->flows[f];

		if (fl->new_rate == fl->rate && fl_heap_has(&fab->events, f))
			continue;
		fl->rate = fl->new_rate;
		fab->stats.rate_changes++;
		(void)fl_heap_set(&fab->events, f, fl_send_end(fl)); /* f < ids */
	}
	for (uint32_t i = 0; i < fab->n_seeds; i++)
		fab->links[fab->seeds[i]].seeded = 0;
	fab->n_seeds = 0;
	if (local)
		fab->stats.local_fills++;
	else
		fab->stats.recomputes++;
	fab->stats.flows_touched += fab->n_cflows;
	fab->stats.links_touched += fab->n_clinks;
}

