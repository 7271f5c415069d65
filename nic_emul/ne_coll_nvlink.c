/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll NVLink: the transfers of a connection whose two ranks are GPUs of
 * one server never reach a NIC. Each is timed by nccl/nc_nvlink (bytes at the
 * GPU's NVLink rate, plus one hop's latency) and ends as an event of the
 * collective: a min-heap of end times per view (the collective, or each of
 * its lanes), read by ne_coll_next_event_ns so that the driver's clock wakes
 * for it. ne_coll.h ("NVLink") says what is modelled and what is not.
 * PXN (channel rings, ne_coll_chring.c): a network message whose NIC is
 * another GPU's first crosses NVLink to that GPU, timed the same way on the
 * sender's egress; its end lets the RDMA be posted.
 * NCCL's per-step latency (launch=nccl, ne_coll_steps_resolve): an NVLink
 * step's hop takes step_nvl_ns in place of nvlink_lat_ns, and a network
 * step waits step_net_ns on this heap after its last byte came in.
 * NCCL's cap on LL's and LL128's bus bandwidth (ne_coll_cap_resolve): the
 * GPU's egress sends a transfer's data bytes no faster than proto_cap_Bps;
 * a network step is first written at that rate (as PXN's copy, on this
 * heap: NCCL's proxy posts a step once the GPU wrote all of it).
 */
#include "ne_coll_priv.h"
#include "nc_nvlink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int ne_coll_nvl_setup(struct ne_coll *c)
{
	if (!c->cfg.server_of)
		return ne_coll_nvl_lane_init(c); /* (network steps' waits only) */
	if (c->cfg.nvlink_Bps == 0)
		return -EINVAL;
	c->server_of = malloc(c->nranks * sizeof(*c->server_of));
	if (!c->server_of)
		return -ENOMEM;
	memcpy(c->server_of, c->cfg.server_of, c->nranks * sizeof(*c->server_of));
	c->cfg.server_of = NULL; /* (the caller's memory: not kept) */
	for (uint32_t k = 0; k < c->nconns; k++) {
		struct coll_conn *cn = &c->conns[k];

		cn->nvl = c->server_of[cn->src] == c->server_of[cn->dst];
		c->nvl_conns += cn->nvl;
	}
	return ne_coll_nvl_lane_init(c);
}

int ne_coll_nvl_lane_init(struct ne_coll *ln)
{
	/* a connection has at most window transfers in flight (the receiver's
	 * slots; PXN: the send slots), so the heap never outgrows this (a
	 * network step's wait: every connection may have one; heap_push grows
	 * it should the bound not hold) */
	ln->nvl_cap = (ln->nvl_conns + ln->pxn_conns) * ln->window;
	if (ln->step_net_ns || ln->proto_cap_Bps)
		ln->nvl_cap = ln->nconns * ln->window;
	ln->nnvl = 0;
	ln->nvl_heap = NULL;
	if (ln->nvl_cap == 0)
		return 0;
	ln->nvl_heap = calloc(ln->nvl_cap, sizeof(*ln->nvl_heap));
	return ln->nvl_heap ? 0 : -ENOMEM;
}

void ne_coll_nvl_free(struct ne_coll *c)
{
	free(c->nvl_heap);
	c->nvl_heap = NULL;
	if (!c->main) /* (the lanes share the collective's map) */
		free(c->server_of);
	c->server_of = NULL;
}

int ne_coll_nvl_lanes_check(const struct ne_coll *c, const uint32_t *lane_of)
{
	for (uint32_t k = 0; k < c->nconns; k++)
		if ((c->conns[k].nvl && lane_of[c->conns[k].src] != lane_of[c->conns[k].dst]) ||
		    lane_of[c->conns[k].src] != lane_of[c->conns[k].src_nic])
			return -EINVAL;
	return 0;
}

uint32_t ne_coll_nvlink_conns(const struct ne_coll *c)
{
	return c ? c->nvl_conns : 0;
}

/* Heap order: end time, then connection and seq, so that transfers ending
 * at one instant are consumed in the same order on every run. */
static bool ev_before(const struct coll_nvl_ev *a, const struct coll_nvl_ev *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	return a->conn != b->conn ? a->conn < b->conn : a->seq < b->seq;
}

/* Pushes ev; a full heap doubles (out of memory: the collective fails). */
static void heap_push(struct ne_coll *c, struct coll_nvl_ev ev)
{
	if (c->nnvl == c->nvl_cap) {
		uint32_t cap = c->nvl_cap ? 2 * c->nvl_cap : 16;
		struct coll_nvl_ev *h = realloc(c->nvl_heap, cap * sizeof(*h));

		if (!h) {
			c->failed = true;
			c->stats.errors++;
			return;
		}
		c->nvl_heap = h;
		c->nvl_cap = cap;
	}
	uint32_t i = c->nnvl++;

	while (i > 0 && ev_before(&ev, &c->nvl_heap[(i - 1) / 2])) {
		c->nvl_heap[i] = c->nvl_heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	c->nvl_heap[i] = ev;
}

static struct coll_nvl_ev heap_pop(struct ne_coll *c)
{
	struct coll_nvl_ev top = c->nvl_heap[0], last = c->nvl_heap[--c->nnvl];
	uint32_t i = 0;

	for (;;) {
		uint32_t l = 2 * i + 1, m = l;

		if (l >= c->nnvl)
			break;
		if (l + 1 < c->nnvl && ev_before(&c->nvl_heap[l + 1], &c->nvl_heap[l]))
			m = l + 1;
		if (!ev_before(&c->nvl_heap[m], &last))
			break;
		c->nvl_heap[i] = c->nvl_heap[m];
		i = m;
	}
	if (c->nnvl)
		c->nvl_heap[i] = last;
	return top;
}

/* What a GPU's egress carries (egress_push). */
enum egress_kind {
	EGRESS_HOP,   /* a step over NVLink */
	EGRESS_PXN,   /* PXN's NVLink copy to the NIC's GPU */
	EGRESS_WRITE, /* a network step's lines written at the protocol's cap */
};

/* Transfer s of connection k leaves its sender's GPU at now or when the
 * GPU's egress frees; its end goes on the heap: a step's hop after
 * step_nvl_ns, PXN's copy (no step of its own) after nvlink_lat_ns, a
 * network step's write with no hop. The egress takes the longer of the
 * wire bytes at the NVLink rate (a write: none) and the data bytes at
 * proto_cap_Bps (ne_coll_cap_resolve). */
static void egress_push(struct ne_coll *c, uint32_t k, uint32_t s, enum egress_kind kind,
			uint64_t now)
{
	struct coll_conn *cn = &c->conns[k];
	struct coll_rank *rs = &c->ranks[cn->src];
	struct nc_nvlink_params wire = {.nvlink_Bps = c->cfg.nvlink_Bps};
	struct nc_nvlink_params cap = {.nvlink_Bps = c->proto_cap_Bps};
	uint64_t bytes_ns = 0, cap_ns = 0, start = rs->nvl_free > now ? rs->nvl_free : now;
	uint32_t len = cn->xfers[s].len;

	/* the GPU's egress carries one transfer's bytes at a time; the hop's
	 * latency overlaps the next one's bytes. (Rates checked at setup, and
	 * 2^32 bytes at 1 B/s fit 64 bits of ns: no error to handle.) */
	if (kind != EGRESS_WRITE)
		(void)nc_nvlink_xfer_ns(&wire, coll_wire_len(c, len), &bytes_ns);
	if (c->proto_cap_Bps)
		(void)nc_nvlink_xfer_ns(&cap, len, &cap_ns);
	rs->nvl_free = start + (cap_ns > bytes_ns ? cap_ns : bytes_ns);
	uint64_t lat = kind == EGRESS_HOP ? c->step_nvl_ns :
		       kind == EGRESS_PXN ? c->cfg.nvlink_lat_ns : 0;
	heap_push(c, (struct coll_nvl_ev){.t = rs->nvl_free + lat, .conn = k, .seq = s,
					  .kind = kind == EGRESS_HOP ? COLL_EV_HOP : COLL_EV_PXN});
}

bool ne_coll_pxn_staged(struct ne_coll *c, uint32_t k, uint32_t s, uint64_t now)
{
	struct coll_conn *cn = &c->conns[k];

	if (!(cn->flags[s] & XFER_PXN_SENT)) {
		/* (the bytes stay in the sender's buffer: the NIC reads them there
		 * through the MR ne_coll_chring_mrs registered) */
		egress_push(c, k, s, cn->pxn ? EGRESS_PXN : EGRESS_WRITE, now);
		cn->flags[s] |= XFER_PXN_SENT;
		c->stats.pxn_xfers += cn->pxn;
	}
	return (cn->flags[s] & XFER_PXN_IN) != 0;
}

void ne_coll_nvl_post(struct ne_coll *c, uint32_t k, uint32_t s, uint64_t now)
{
	struct coll_conn *cn = &c->conns[k];
	const struct coll_xfer *x = &cn->xfers[s];
	struct coll_rank *rs = &c->ranks[cn->src], *rd = &c->ranks[cn->dst];

	if (c->cfg.data) /* the receiver's slot is free: the sender waited for it */
		memcpy(rd->stage + cn->stage_off + (size_t)(s % c->window) * c->slot_bytes,
		       rs->src + x->src_off, x->len);
	egress_push(c, k, s, EGRESS_HOP, now);
	c->stats.nvlink_xfers++;
	c->stats.nvlink_bytes += coll_wire_len(c, x->len);
	ne_coll_lat_post(c, cn, s, now);
}

int ne_coll_nvl_poll(struct ne_coll *c, uint64_t now)
{
	int n = 0;

	while (c->nnvl && c->nvl_heap[0].t <= now) {
		struct coll_nvl_ev ev = heap_pop(c);
		struct coll_conn *cn = &c->conns[ev.conn];

		if (ev.kind == COLL_EV_PXN) { /* at the NIC's GPU: the RDMA may go */
			cn->flags[ev.seq] |= XFER_PXN_IN;
			ne_coll_mark_conn(c, ev.conn);
			n++;
			continue;
		}
		if (ev.kind == COLL_EV_NET) { /* the network step's latency is over */
			ne_coll_consume(c, ev.conn, ev.seq);
			n++;
			continue;
		}
		cn->flags[ev.seq] |= XFER_SEND_DONE;
		c->send_done++;
		ne_coll_lat_done(c, cn, ev.seq, now);
		ne_coll_consume(c, ev.conn, ev.seq);
		n++;
	}
	return n;
}

void ne_coll_net_received(struct ne_coll *c, uint32_t k, uint32_t s, uint64_t now)
{
	if (!c->step_net_ns) {
		ne_coll_consume(c, k, s);
		return;
	}
	heap_push(c, (struct coll_nvl_ev){.t = now + c->step_net_ns, .conn = k, .seq = s,
					  .kind = COLL_EV_NET});
}

uint64_t ne_coll_nvl_next_ns(const struct ne_coll *c)
{
	return c->nnvl ? c->nvl_heap[0].t : UINT64_MAX;
}
