/* SPDX-License-Identifier: BSD-3-Clause */
/* The bytes and numbers the processes of one fabric exchange (dp_gather.h). */
#include "dp_gather.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "dp_audit.h"
#include "dp_chan.h"
#include "dp_fabric.h"

void dp_bytes_free(struct dp_bytes *x)
{
	free(x->b);
	memset(x, 0, sizeof(*x));
}

/* Room for n more bytes. Returns 0 or -ENOMEM. */
static int bytes_room(struct dp_bytes *x, size_t n)
{
	if (x->len + n <= x->cap)
		return 0;
	size_t cap = x->cap ? x->cap : 4096;
	while (cap < x->len + n)
		cap *= 2;
	uint8_t *b = realloc(x->b, cap);
	if (b == NULL)
		return -ENOMEM;
	x->b = b;
	x->cap = cap;
	return 0;
}

/*
 * One frame of a cut link, as sent between processes; its bytes follow,
 * padded to 8, but for those that stand for zeros (a payload its sender left
 * unwritten: dp_frame_unwritten_span), which stay unwritten on the other
 * side too (the flag is in head): a 4 KiB frame of a collective with
 * data=off crosses as its headers and ICRC.
 */
struct frame_rec {
	uint32_t chan;
	uint32_t data_len;              /* the frame's length */
	uint32_t gap_off, gap_len;      /* bytes [gap_off, gap_off + gap_len) not sent */
	uint64_t at;
	uint8_t head[DP_PRIV_HEAD_LEN]; /* struct dp_mbuf_priv up to pkt (same binary on every rank) */
};

#define REC_SIZE RTE_ALIGN_CEIL(sizeof(struct frame_rec), 8)

int dp_gather_pack_outbox(struct dp_chan *c, unsigned parity, struct dp_bytes *x)
{
	uint32_t chan = (uint32_t)(c - c->fab->chans);
	struct rte_mbuf *m;
	uint64_t at;
	int n = 0;

	while (c->out[parity].n) {
		uint32_t gap_off = 0, gap_len = 0;
		m = c->out[parity].slot[c->out[parity].head].m;
		if (!dp_frame_unwritten_span(m, &gap_off, &gap_len))
			gap_off = gap_len = 0;
		uint32_t len = rte_pktmbuf_pkt_len(m), sent = len - gap_len;
		size_t data = RTE_ALIGN_CEIL((size_t)sent, 8);
		if (bytes_room(x, REC_SIZE + data) < 0)
			return -ENOMEM;
		dp_chan_outbox_pop(c, parity, &m, &at);
		dp_frame_write_headers(c->fab, m); /* (the other rank parses the bytes again) */
		struct frame_rec *r = (struct frame_rec *)(x->b + x->len);
		memset(r, 0, REC_SIZE);
		r->chan = chan;
		r->data_len = len;
		r->gap_off = gap_off;
		r->gap_len = gap_len;
		r->at = at;
		memcpy(r->head, dp_priv(m), DP_PRIV_HEAD_LEN);
		uint8_t *d = x->b + x->len + REC_SIZE;
		/* the bytes before the gap, then those after it */
		const void *src = rte_pktmbuf_read(m, 0, gap_off, d);
		if (src != d)
			memcpy(d, src, gap_off);
		uint32_t tail = len - gap_off - gap_len;
		src = rte_pktmbuf_read(m, gap_off + gap_len, tail, d + gap_off);
		if (src != d + gap_off)
			memcpy(d + gap_off, src, tail);
		memset(d + sent, 0, data - sent);
		x->len += REC_SIZE + data;
		rte_pktmbuf_free(m);
		n++;
	}
	return n;
}

int dp_gather_unpack_frames(struct dp_fabric *f, unsigned parity, const uint8_t *b, size_t len,
			    struct rte_mempool *mp)
{
	size_t off = 0;
	int n = 0, rc = 0;

	while (off < len) {
		struct frame_rec r;
		if (len - off < REC_SIZE)
			return -EINVAL;
		memcpy(&r, b + off, sizeof(r));
		if (r.gap_len > r.data_len || r.gap_off > r.data_len - r.gap_len)
			return -EINVAL;
		uint32_t sent = r.data_len - r.gap_len;
		size_t data = RTE_ALIGN_CEIL((size_t)sent, 8);
		if (r.chan >= f->n_chans || len - off - REC_SIZE < data || r.data_len > UINT16_MAX)
			return -EINVAL;
		struct dp_chan *c = &f->chans[r.chan];
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		char *d = m ? rte_pktmbuf_append(m, (uint16_t)r.data_len) : NULL;
		if (d == NULL) {
			rte_pktmbuf_free(m);
			c->drops[DP_DROP_NO_MBUF]++;
			c->drops_arrived++;
			rc = -ENOBUFS;
		} else {
			/* (the gap stays unwritten: head carries payload_unwritten) */
			const uint8_t *src = b + off + REC_SIZE;
			memcpy(d, src, r.gap_off);
			memcpy(d + r.gap_off + r.gap_len, src + r.gap_off, sent - r.gap_off);
			struct dp_mbuf_priv *pv = dp_priv(m);
			memcpy(pv, r.head, DP_PRIV_HEAD_LEN);
			pv->flow_slot = 0; /* a slot of the sender's flow table */
			pv->parsed = 0;    /* the parse points into the sender's copy */
			if (dp_chan_outbox_push(c, parity, m, r.at) < 0) {
				rte_pktmbuf_free(m);
				c->drops[DP_DROP_NO_MBUF]++;
				c->drops_arrived++;
				rc = -ENOBUFS;
			} else {
				n++;
			}
		}
		off += REC_SIZE + data;
	}
	return rc < 0 ? rc : n;
}

/*
 * One listing of the counters for both ways: SUM(x) / MAX(x) put x into the
 * vector (pack) or take it back (unpack). Everything a report prints from a
 * node is here; what every rank computes alike (link state, route changes,
 * TE placements) is not.
 */
struct walk {
	uint64_t *sum, *max;
	size_t ns, nm;
	bool pack;
};

#define SUM(x) do { if (w->pack) { if (w->sum) w->sum[w->ns] = (x); } else (x) = w->sum[w->ns]; w->ns++; } while (0)
#define MAX(x) do { if (w->pack) { if (w->max) w->max[w->nm] = (x); } else (x) = w->max[w->nm]; w->nm++; } while (0)
#define SUM_ARRAY(a, n) do { for (size_t i_ = 0; i_ < (n); i_++) SUM((a)[i_]); } while (0)

static void walk_chan(struct walk *w, struct dp_chan *c, uint64_t now)
{
	SUM(c->busy_ns);
	for (unsigned p = 0; p < DP_NUM_PRIO; p++)
		SUM(c->q[p].tx_pkts);
	for (unsigned p = 0; p < DP_NUM_PRIO; p++)
		SUM(c->q[p].tx_bytes);
	SUM(c->ctrl_tx);
	SUM(c->ctrl_tx_bytes);
	SUM(c->pfc_tx);
	SUM_ARRAY(c->drops, DP_DROP_COUNT);
	SUM(c->drops_sent);
	SUM(c->drops_arrived);
	SUM(c->flow_pkts);
	SUM(c->rx_pkts);
	if (w->pack) { /* (the frames this rank holds, for the audit: dp_audit.h) */
		uint64_t q = dp_audit_chan_queued(c), fl = dp_audit_chan_flight(c);
		SUM(q);
		SUM(fl);
	} else {
		SUM(c->audit_queued);
		SUM(c->audit_flight);
	}
	for (unsigned p = 0; p < DP_NUM_PRIO; p++)
		MAX(c->q[p].peak_bytes);
	SUM_ARRAY(c->pause.xoff_rx, PFC_NUM_PRIO);
	SUM_ARRAY(c->pause.xon_rx, PFC_NUM_PRIO);
	SUM(c->pause.rx.ok);
	SUM_ARRAY(c->pause.rx.err, PFC_FRAME_ERR_COUNT);
	for (unsigned p = 0; p < PFC_NUM_PRIO; p++) {
		/* paused time up to now, as one closed interval */
		if (w->pack) {
			uint64_t ns = pfc_pause_paused_ns(&c->pause, p, now);
			SUM(ns);
		} else {
			SUM(c->pause.paused_ns[p]);
			c->pause.start_ns[p] = c->pause.until_ns[p] = 0;
		}
	}
	if (!w->pack)
		c->pause.any_until_ns = 0;
}

static void walk_switch(struct walk *w, struct dp_switch *s)
{
	SUM(s->rx_pkts);
	SUM(s->rx_bytes);
	SUM(s->fwd_pkts);
	SUM(s->arp_replies);
	SUM(s->nd_replies);
	SUM(s->echo_replies);
	SUM(s->pfc_rx);
	SUM(s->ecn_marked);
	SUM_ARRAY(s->drops, DP_DROP_COUNT);
	SUM(s->pfc_no_mbuf);
	SUM_ARRAY(s->parse_err, DP_PARSE_ERR_SLOTS);
	SUM_ARRAY(s->port_tx_pkts, s->cfg->n_ports);
}

static void walk_host(struct walk *w, struct dp_host *h)
{
	SUM(h->tx_pkts);
	SUM(h->tx_bytes);
	SUM(h->rx_pkts);
	SUM(h->rx_bytes);
	SUM(h->pfc_rx);
}

static void walk_fabric(struct walk *w, struct dp_fabric *f, uint64_t now)
{
	for (uint32_t i = 0; i < f->n_chans; i++)
		walk_chan(w, &f->chans[i], now);
	for (uint32_t s = 0; s < f->topo->n_switches; s++)
		walk_switch(w, &f->sw[s]);
	for (uint32_t h = 0; h < f->topo->n_hosts; h++)
		walk_host(w, &f->host[h]);
	if (!w->pack)
		f->audit_gathered = true;
	uint64_t hits = f->te ? f->te->hits : 0;
	SUM(hits);
	if (!w->pack && f->te)
		f->te->hits = hits;
}

#undef SUM
#undef MAX
#undef SUM_ARRAY

void dp_gather_counters_len(const struct dp_fabric *f, size_t *n_sum, size_t *n_max)
{
	struct walk w = {.pack = true};

	walk_fabric(&w, (struct dp_fabric *)(uintptr_t)f, 0);
	*n_sum = w.ns;
	*n_max = w.nm;
}

void dp_gather_counters_pack(const struct dp_fabric *f, uint64_t now, uint64_t *sum, uint64_t *max)
{
	struct walk w = {.sum = sum, .max = max, .pack = true};

	walk_fabric(&w, (struct dp_fabric *)(uintptr_t)f, now);
}

void dp_gather_counters_unpack(struct dp_fabric *f, const uint64_t *sum, const uint64_t *max)
{
	struct walk w = {.sum = (uint64_t *)(uintptr_t)sum, .max = (uint64_t *)(uintptr_t)max};

	walk_fabric(&w, f, 0);
}
