/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fl_fabric: the fabric's links and flows (creation, growth, O(1) flow
 * removal through a free list) and the read-only getters. Events are in
 * fl_event.c, rates in fl_rate.c, the checks in fl_check.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fl_internal.h"

#define FL_MTU_MAX (UINT32_C(1) << 30)

struct fl_fabric *fl_create(const struct fl_config *cfg)
{
	struct fl_fabric *fab = calloc(1, sizeof(*fab));

	if (!fab)
		return NULL;
	if (cfg)
		fab->cfg = *cfg;
	if (fab->cfg.mtu_bytes == 0)
		fab->cfg.mtu_bytes = FL_MTU_DEFAULT;
	fab->free_head = FL_NIL;
	fab->refill_at = FL_TIME_INF;
	if (fab->cfg.mtu_bytes > FL_MTU_MAX || fab->cfg.refill_ns > FL_REFILL_MAX_NS ||
	    fl_heap_init(&fab->events, 1) ||
	    fl_heap_init(&fab->wf, 1)) {
		fl_destroy(fab);
		return NULL;
	}
	return fab;
}

void fl_destroy(struct fl_fabric *fab)
{
	if (!fab)
		return;
	fl_heap_free(&fab->events);
	fl_heap_free(&fab->wf);
	free(fab->links);
	free(fab->flows);
	free(fab->hops);
	free(fab->seeds);
	free(fab->clinks);
	free(fab->cflows);
	free(fab->pend);
	free(fab->done);
	free(fab);
}

/* realloc of *p from n to 2n (at least 16) elements of size; 0 or -ENOMEM */
static int grow(void **p, uint32_t n, size_t size)
{
	size_t m = n < 8 ? 16 : (size_t)n * 2;
	void *q;

	if (m > UINT32_MAX / 2)
		return -ENOMEM;
	q = realloc(*p, m * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	return 0;
}

static int grow_links(struct fl_fabric *fab)
{
	uint32_t m = fab->cap_links < 8 ? 16 : fab->cap_links * 2;

	if (grow((void **)&fab->links, fab->cap_links, sizeof(*fab->links)) ||
	    grow((void **)&fab->seeds, fab->cap_links, sizeof(*fab->seeds)) ||
	    grow((void **)&fab->clinks, fab->cap_links, sizeof(*fab->clinks)) ||
	    grow((void **)&fab->pend, fab->cap_links, sizeof(*fab->pend)) ||
	    fl_heap_grow(&fab->wf, m))
		return -ENOMEM;
	fab->cap_links = m;
	return 0;
}

int fl_link_add(struct fl_fabric *fab, uint64_t bps, uint64_t prop_ns, uint32_t *id)
{
	if (!fab || !id || bps < FL_BPS_MIN || bps > FL_BPS_MAX || prop_ns > FL_PROP_MAX_NS)
		return -EINVAL;
	if (fab->n_links == fab->cap_links && grow_links(fab))
		return -ENOMEM;
	struct fl_link *lk = &fab->links[fab->n_links];

	memset(lk, 0, sizeof(*lk));
	lk->bps = lk->resid = lk->wire_bps = bps;
	lk->prop_ns = prop_ns;
	lk->head = FL_NIL;
	*id = fab->n_links++;
	return 0;
}

int fl_link_pace(struct fl_fabric *fab, uint32_t link, uint64_t bps)
{
	if (!fab || link >= fab->n_links || bps < FL_BPS_MIN || bps > fab->links[link].wire_bps ||
	    fab->links[link].head != FL_NIL)
		return -EINVAL;
	fab->links[link].bps = fab->links[link].resid = bps;
	return 0;
}

/* Doubles the flow arrays; the new flows go on the free list. */
static int grow_flows(struct fl_fabric *fab)
{
	uint32_t old = fab->cap_flows, m = old < 8 ? 16 : old * 2;

	if (grow((void **)&fab->flows, old, sizeof(*fab->flows)) ||
	    grow((void **)&fab->cflows, old, sizeof(*fab->cflows)) ||
	    grow((void **)&fab->hops, old, sizeof(*fab->hops) * FL_MAX_HOPS) ||
	    fl_heap_grow(&fab->events, m))
		return -ENOMEM;
	memset(&fab->flows[old], 0, (size_t)(m - old) * sizeof(*fab->flows));
	for (uint32_t f = m; f-- > old;) {
		fab->flows[f].next_free = fab->free_head;
		fab->free_head = f;
	}
	fab->cap_flows = m;
	return 0;
}

/* Room in the ring of delivered flows for every live flow plus one, so a delivery never fails. */
static int reserve_done(struct fl_fabric *fab)
{
	size_t need = fab->n_done + fab->n_live + 1, m;
	struct fl_done *d;

	if (need <= fab->cap_done)
		return 0;
	m = fab->cap_done < 8 ? 16 : fab->cap_done * 2;
	d = malloc(m * sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < fab->n_done; i++) /* unwrap the ring */
		d[i] = fab->done[(fab->done_head + i) % fab->cap_done];
	free(fab->done);
	fab->done = d;
	fab->done_head = 0;
	fab->cap_done = m;
	return 0;
}

/* -EINVAL / -ENOENT for a bad path, else 0 */
static int check_path(const struct fl_fabric *fab, const uint32_t *path, unsigned n_hops)
{
	if (!path || n_hops == 0 || n_hops > FL_MAX_HOPS)
		return -EINVAL;
	for (unsigned h = 0; h < n_hops; h++) {
		if (path[h] >= fab->n_links)
			return -ENOENT;
		for (unsigned k = 0; k < h; k++)
			if (path[k] == path[h])
				return -EINVAL;
	}
	return 0;
}

/* Propagation plus one packet's serialization on every link of the path (ceil
 * per link, at the wire's rate: a paced sender's packets still take the link's). */
static uint64_t path_latency(const struct fl_fabric *fab, const uint32_t *path, unsigned n_hops,
			     uint64_t bytes)
{
	uint64_t pkt = bytes < fab->cfg.mtu_bytes ? bytes : fab->cfg.mtu_bytes;
	uint64_t bits_ns = (pkt + FL_PKT_OVERHEAD) * 8 * FL_NS_PER_S, lat = 0;

	for (unsigned h = 0; h < n_hops; h++) {
		const struct fl_link *lk = &fab->links[path[h]];

		lat += lk->prop_ns + (bits_ns + lk->wire_bps - 1) / lk->wire_bps;
	}
	return lat;
}

int fl_flow_start(struct fl_fabric *fab, const uint32_t *path, unsigned n_hops,
		  uint64_t bytes, uint64_t start_ns, uint64_t cookie, uint32_t *id)
{
	return fl_flow_start_weighted(fab, path, n_hops, bytes, 1, start_ns, cookie, id);
}

int fl_flow_start_weighted(struct fl_fabric *fab, const uint32_t *path, unsigned n_hops,
			   uint64_t bytes, uint32_t weight, uint64_t start_ns, uint64_t cookie,
			   uint32_t *id)
{
	int rc;

	if (!fab || !id || start_ns < fab->now || start_ns > FL_TIME_MAX || weight == 0 ||
	    weight > FL_MAX_WEIGHT || bytes > UINT64_MAX / weight)
		return -EINVAL;
	rc = check_path(fab, path, n_hops);
	if (rc)
		return rc;
	if ((fab->free_head == FL_NIL && grow_flows(fab)) || reserve_done(fab))
		return -ENOMEM;
	uint32_t f = fab->free_head;
	struct fl_flow *fl = &fab->flows[f];

	fab->free_head = fl->next_free;
	memset(fl, 0, sizeof(*fl));
	fl->state = FL_PENDING;
	fl->n_hops = (uint8_t)n_hops;
	fl->bytes = bytes * weight;
	fl->weight = weight;
	fl->cookie = cookie;
	fl->start_ns = fl->last_ns = start_ns;
	fl->rem = (fl_u128)fl->bytes * FL_NBITS_PER_BYTE;
	fl->lat_ns = path_latency(fab, path, n_hops, bytes);
	for (unsigned h = 0; h < n_hops; h++)
		*fl_hop_of(fab, f, h) = (struct fl_hop){ .link = path[h], .prev = FL_NIL, .next = FL_NIL };
	fab->n_live++;
	/* one that starts now starts at once: no event to push up the heap and pop */
	if (start_ns == fab->now)
		fl_start(fab, f);
	else
		(void)fl_heap_set(&fab->events, f, start_ns); /* f < ids: cannot fail */
	*id = f;
	return 0;
}

static const struct fl_flow *live(const struct fl_fabric *fab, uint32_t f)
{
	if (!fab || f >= fab->cap_flows || fab->flows[f].state == FL_FREE)
		return NULL;
	return &fab->flows[f];
}

int fl_flow_rate(const struct fl_fabric *fab, uint32_t flow, uint64_t *bps)
{
	const struct fl_flow *f = live(fab, flow);

	if (!f || !bps)
		return -ENOENT;
	*bps = f->state == FL_SENDING ? f->rate : 0;
	return 0;
}

int fl_flow_sent(const struct fl_fabric *fab, uint32_t flow, uint64_t *bytes)
{
	const struct fl_flow *f = live(fab, flow);

	if (!f || !bytes)
		return -ENOENT;
	*bytes = fl_sent_at(f, fab->now);
	return 0;
}

int fl_flow_latency(const struct fl_fabric *fab, uint32_t flow, uint64_t *ns)
{
	const struct fl_flow *f = live(fab, flow);

	if (!f || !ns)
		return -ENOENT;
	*ns = f->lat_ns;
	return 0;
}

int fl_path_latency(const struct fl_fabric *fab, const uint32_t *path, unsigned n_hops,
		    uint64_t bytes, uint64_t *ns)
{
	int rc;

	if (!fab || !ns)
		return -EINVAL;
	rc = check_path(fab, path, n_hops);
	if (rc)
		return rc;
	*ns = path_latency(fab, path, n_hops, bytes);
	return 0;
}

int fl_link_bytes(const struct fl_fabric *fab, uint32_t link, uint64_t *sent, uint64_t *delivered)
{
	if (!fab || link >= fab->n_links || !sent || !delivered)
		return -ENOENT;
	const struct fl_link *lk = &fab->links[link];
	uint64_t s = lk->sent;

	/* the link's counter is as of each flow's last settle: add what they sent since */
	for (uint32_t n = lk->head; n != FL_NIL; n = fab->hops[n].next) {
		const struct fl_flow *f = &fab->flows[n / FL_MAX_HOPS];

		s += fl_sent_at(f, fab->now) - f->sent;
	}
	*sent = s;
	*delivered = lk->delivered;
	return 0;
}

uint64_t fl_now(const struct fl_fabric *fab)
{
	return fab->now;
}

uint32_t fl_live_flows(const struct fl_fabric *fab)
{
	return fab->n_live;
}

void fl_stats_get(const struct fl_fabric *fab, struct fl_stats *st)
{
	*st = fab->stats;
}

size_t fl_done_pop(struct fl_fabric *fab, struct fl_done *out, size_t max)
{
	size_t n = fab->n_done < max ? fab->n_done : max;

	for (size_t i = 0; i < n; i++)
		out[i] = fab->done[(fab->done_head + i) % fab->cap_done];
	fab->done_head = n ? (fab->done_head + n) % fab->cap_done : fab->done_head;
	fab->n_done -= n;
	return n;
}
