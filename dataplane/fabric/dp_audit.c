/* SPDX-License-Identifier: BSD-3-Clause */
/* Frame conservation at exit (dp_audit.h). */
#include "dp_audit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "dp_count.h"
#include "fl_fabric.h"
#include "topo.h"

uint64_t dp_audit_chan_queued(const struct dp_chan *c)
{
	uint64_t n = c->ctrl.n;

	for (int p = 0; p < DP_NUM_PRIO; p++)
		n += c->q[p].f.n;
	return n;
}

uint64_t dp_audit_chan_flight(const struct dp_chan *c)
{
	uint64_t n = (uint64_t)c->wire.n + c->out[0].n + c->out[1].n + c->n_xpend;

	return n + (c->xring ? rte_ring_count(c->xring) : 0);
}

/* What a balance prints about itself: where, and its two sides' terms. */
struct side {
	const char *what[4];
	uint64_t n[4];
};

static uint64_t side_sum(const struct side *s)
{
	return s->n[0] + s->n[1] + s->n[2] + s->n[3];
}

static void side_print(const struct side *s, FILE *out)
{
	const char *sep = "";

	for (int i = 0; i < 4 && s->what[i]; i++, sep = " + ")
		fprintf(out, "%s%s %" PRIu64, sep, s->what[i], s->n[i]);
}

/* One balance: 0 when in equals out, else 1 after a line on out. */
static unsigned balance(const char *kind, const char *place, const struct side *in, const struct side *o,
			FILE *out)
{
	int64_t gap = (int64_t)(side_sum(in) - side_sum(o));

	if (gap == 0)
		return 0;
	fprintf(out, "rocelab-dp: AUDIT: %s %s: %" PRId64 " frame(s) unaccounted (", kind, place, gap);
	side_print(in, out);
	fprintf(out, " = ");
	side_print(o, out);
	fprintf(out, ")\n");
	return 1;
}

/* Held in queues and in flight: this process's, or every rank's after the gather. */
static uint64_t queued(const struct dp_fabric *f, const struct dp_chan *c)
{
	return f->audit_gathered ? c->audit_queued : dp_audit_chan_queued(c);
}

static uint64_t flight(const struct dp_fabric *f, const struct dp_chan *c)
{
	return f->audit_gathered ? c->audit_flight : dp_audit_chan_flight(c);
}

/* Frames c sent: its tx counters less the flow engine's packets (checked as bytes, dp_flowrun.c). */
static uint64_t frames_sent(const struct dp_chan *c)
{
	return dp_count_chan_tx_pkts(c) - c->flow_pkts;
}

/* Dropped before c sent them (its queues' drops, link down, host queue): all its drops but those after sending. */
static uint64_t drops_before(const struct dp_chan *c)
{
	return dp_count_chan_drops(c) - c->drops_sent - c->drops_arrived;
}

/* A link direction's name as the link table gives it: FROM>TO. */
static void chan_name(const struct dp_fabric *f, const struct dp_chan *c, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s>%s", topo_node_name(f->topo, c->from), topo_node_name(f->topo, c->to));
}

static unsigned audit_link(const struct dp_fabric *f, const struct dp_chan *c, FILE *out)
{
	char place[128];
	struct side in = {{"sent"}, {frames_sent(c)}};
	struct side o = {{"delivered", "in flight", "dropped after sending"},
			 {c->rx_pkts, flight(f, c), c->drops_sent + c->drops_arrived}};

	chan_name(f, c, place, sizeof(place));
	return balance("link", place, &in, &o, out);
}

/* What c's sender handed it: sent, queued, or dropped before sending. */
static void chan_taken(const struct dp_fabric *f, const struct dp_chan *c, uint64_t *n)
{
	n[0] += frames_sent(c);
	n[1] += queued(f, c);
	n[2] += drops_before(c);
}

static const char *const taken_what[4] = {"sent", "queued", "dropped before sending"};

static unsigned audit_host(const struct dp_fabric *f, const struct dp_host *h, FILE *out)
{
	struct side in = {{"sent by the host"}, {h->tx_pkts}};
	struct side o = {{taken_what[0], taken_what[1], taken_what[2]}, {0}};

	chan_taken(f, h->tx, o.n);
	return balance("host", topo_node_name(f->topo, h->tx->from), &in, &o, out);
}

static unsigned audit_switch(const struct dp_fabric *f, const struct dp_switch *s, FILE *out)
{
	const char *name = s->cfg->name;
	uint64_t replies = s->arp_replies + s->nd_replies + s->echo_replies, pfc_made = 0;
	struct side rx = {{"received"}, {s->rx_pkts}};
	struct side fate = {{"forwarded", "replies", "PFC consumed", "dropped"},
			    {s->fwd_pkts, replies, s->pfc_rx, dp_count_switch_drops(s) - s->pfc_no_mbuf}};
	struct side o = {{taken_what[0], taken_what[1], taken_what[2]}, {0}};

	for (uint16_t p = 0; p < s->cfg->n_ports; p++) {
		if (s->out[p] == NULL)
			continue;
		pfc_made += s->out[p]->pfc_tx;
		chan_taken(f, s->out[p], o.n);
	}
	struct side made = {{"forwarded", "replies", "PFC made"}, {s->fwd_pkts, replies, pfc_made}};
	char place[96];
	snprintf(place, sizeof(place), "%s (in)", name);
	unsigned bad = balance("switch", place, &rx, &fate, out);
	snprintf(place, sizeof(place), "%s (out)", name);
	return bad + balance("switch", place, &made, &o, out);
}

unsigned dp_audit_fabric(const struct dp_fabric *f, dp_audit_skip_fn skip, void *ctx, FILE *out)
{
	unsigned bad = 0;

	for (uint32_t i = 0; i < f->n_chans; i++)
		if (skip == NULL || !skip(ctx, &f->chans[i]))
			bad += audit_link(f, &f->chans[i], out);
	for (uint32_t h = 0; h < f->topo->n_hosts; h++)
		bad += audit_host(f, &f->host[h], out);
	for (uint32_t s = 0; s < f->topo->n_switches; s++)
		bad += audit_switch(f, &f->sw[s], out);
	if (f->audit_flow_bad)
		fprintf(out, "rocelab-dp: AUDIT: flow engine: %" PRIu32 " byte check(s) of the flow fabric found bytes lost or made (their lines are above)\n",
			f->audit_flow_bad);
	return bad + f->audit_flow_bad;
}

int dp_audit_steal(struct dp_fabric *f, const char *name, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < f->n_chans; i++) {
		struct dp_chan *c = &f->chans[i];
		char n[128];
		chan_name(f, c, n, sizeof(n));
		if (strcmp(n, name) == 0) {
			c->steal = true;
			fl_test_steal(i); /* (--fabric flow: its links are the chans, in their order: dp_flowrun.c) */
			return 0;
		}
	}
	snprintf(err, errlen, "ROCELAB_AUDIT_STEAL=%s: no link direction of that name (FROM>TO, as the link table "
		 "names it)", name);
	return -EINVAL;
}

unsigned dp_audit_pool(const struct dp_fabric *f, const char *who, FILE *out)
{
	uint64_t held = 0, in_use = rte_mempool_in_use_count(f->mp);

	for (uint32_t i = 0; i < f->n_chans; i++) {
		const struct dp_chan *c = &f->chans[i];
		held += dp_audit_chan_queued(c) + dp_audit_chan_flight(c) + (c->xret ? rte_ring_count(c->xret) : 0);
	}
	if (in_use == held)
		return 0;
	fprintf(out, "rocelab-dp: AUDIT: packet pool%s: %" PRId64 " mbuf(s) unaccounted (in use %" PRIu64
		" = held in the fabric %" PRIu64 ")\n", who, (int64_t)(in_use - held), in_use, held);
	return 1;
}

int dp_audit_leak(struct dp_fabric *f, const char *s, char *err, size_t errlen)
{
	char *end;
	long n = strtol(s, &end, 10);

	if (end == s || *end != '\0' || n < 1 || n > 1000) {
		snprintf(err, errlen, "ROCELAB_AUDIT_LEAK=%s: not a count of mbufs from 1 to 1000", s);
		return -EINVAL;
	}
	for (long i = 0; i < n; i++)
		if (rte_pktmbuf_alloc(f->mp) == NULL) { /* (taken and forgotten: the leak) */
			snprintf(err, errlen, "ROCELAB_AUDIT_LEAK=%s: the packet pool has fewer free mbufs", s);
			return -EINVAL;
		}
	return 0;
}

int dp_audit_mode_parse(const char *s)
{
	if (s == NULL || strcmp(s, "warn") == 0 || s[0] == '\0')
		return DP_AUDIT_WARN;
	if (strcmp(s, "fatal") == 0)
		return DP_AUDIT_FATAL;
	if (strcmp(s, "off") == 0)
		return DP_AUDIT_OFF;
	return -EINVAL;
}
