/* SPDX-License-Identifier: BSD-3-Clause */
/* One fabric over several rocelab-dp processes: the peer ports (dp_peer.h). */
#include "dp_peer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dp_chan.h"
#include "dp_fabric.h"
#include "dp_port.h"
#include "dp_units.h"

#define LINK_POLL_NS 10000000L /* dp_peers_start: look at the links every 10 ms */
/* Bursts a flush sends, and a poll takes, at most per peer and turn: a whole
 * memif ring's worth (1024), since the loop runs its timers' budget between
 * two turns and the rings must not fill meanwhile; the loop comes back soon. */
#define PORT_ROUNDS 32
#define VID_MASK 0x0fffu

/* Peer k's port: found by its device name, started. Returns 0, -EINVAL, -EIO (message in err). */
static int start_port(struct dp_peer *pp, uint32_t k, struct rte_mempool *mp, char *err, size_t errlen)
{
	char name[TOPO_DEVNAME_MAX], why[200];

	topo_devargs_name(pp->devargs, name, sizeof(name));
	if (rte_eth_dev_get_port_by_name(name, &pp->port_id) != 0) {
		snprintf(err, errlen, "--peer '%s' (process %u): DPDK made no port %s of it (EAL's reason "
			 "is above)", pp->devargs, k, name);
		return -EINVAL;
	}
	if (dp_port_start(pp->port_id, mp, 0, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "--peer '%s' (process %u): %s", pp->devargs, k, why);
		return -EIO;
	}
	pp->started = true;
	return 0;
}

/* The cut channels from this process to process k. Returns 0, -ENOMEM. */
static int collect_chans(struct dp_peers *p, uint32_t k)
{
	const struct topo *t = p->f->topo;
	struct dp_peer *pp = &p->peer[k];

	pp->chan = calloc(p->f->n_chans + 1, sizeof(*pp->chan));
	if (pp->chan == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->f->n_chans; i++)
		if (dp_peers_chan_part(p, t, i, false) == p->self && dp_peers_chan_part(p, t, i, true) == k &&
		    p->f->chans[i].xring)
			pp->chan[pp->n_chan++] = i;
	return 0;
}

/* Wait up to wait_s for every peer port's link. Returns 0, -ETIMEDOUT with a message. */
static int wait_links(struct dp_peers *p, unsigned wait_s, char *err, size_t errlen)
{
	for (uint64_t waited = 0;; waited += LINK_POLL_NS) {
		uint32_t down = UINT32_MAX;
		for (uint32_t k = 0; k < p->n && down == UINT32_MAX; k++) {
			struct rte_eth_link link;
			if (k != p->self && (rte_eth_link_get_nowait(p->peer[k].port_id, &link) != 0 ||
					     link.link_status != RTE_ETH_LINK_UP))
				down = k;
		}
		if (down == UINT32_MAX)
			return 0;
		if (waited >= (uint64_t)wait_s * NS_PER_S) {
			snprintf(err, errlen, "--peer '%s': no link to process %u after %u s (is it "
				 "running, with the other end of this port?)", p->peer[down].devargs, down,
				 wait_s);
			return -ETIMEDOUT;
		}
		struct timespec ts = {0, LINK_POLL_NS};
		nanosleep(&ts, NULL);
	}
}

int dp_peers_start(struct dp_peers *p, struct dp_fabric *f, struct rte_mempool *mp,
		   unsigned wait_s, char *err, size_t errlen)
{
	p->f = f;
	for (uint32_t k = 0; k < p->n; k++) {
		if (k == p->self)
			continue;
		int rc = start_port(&p->peer[k], k, mp, err, errlen);
		if (rc < 0)
			return rc;
		if (collect_chans(p, k) < 0) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	return wait_links(p, wait_s, err, errlen);
}

/* The channel a frame tagged vid from process k is on, or NULL when no such channel is cut from k to here. */
static struct dp_chan *chan_of_vid(const struct dp_peers *p, uint32_t k, uint16_t vid)
{
	const struct topo *t = p->f->topo;

	if (vid == 0 || vid > p->f->n_chans)
		return NULL;
	uint32_t i = vid - 1u;
	if (dp_peers_chan_part(p, t, i, false) != k || dp_peers_chan_part(p, t, i, true) != p->self)
		return NULL;
	return &p->f->chans[i];
}

/* Take the outer 802.1Q tag off m (or the one the PMD took off). Returns its VID, -1 untagged. */
static int untag(struct rte_mbuf *m)
{
	uint16_t tci;

	if (m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED)
		tci = m->vlan_tci;
	else if (rte_vlan_strip(m) == 0)
		tci = m->vlan_tci;
	else
		return -1;
	m->ol_flags &= ~(RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED);
	m->vlan_tci = 0;
	return tci & VID_MASK;
}

static void rx_one(struct dp_peers *p, uint32_t k, struct rte_mbuf *m, uint64_t now)
{
	struct dp_peer *pp = &p->peer[k];

	if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) < 0) {
		pp->segmented++;
		rte_pktmbuf_free(m);
		return;
	}
	int vid = untag(m);
	struct dp_chan *c = vid < 0 ? NULL : chan_of_vid(p, k, (uint16_t)vid);
	if (c == NULL) {
		if (vid < 0)
			pp->untagged++;
		else
			pp->unknown_vid++;
		rte_pktmbuf_free(m);
		return;
	}
	pp->rx++;
	memset(dp_priv(m), 0, DP_PRIV_HEAD_LEN); /* a new frame here: parsed again, in no buffer */
	dp_chan_arrive(c, m, now + c->delay_ns);
}

uint32_t dp_peers_poll(struct dp_peers *p, uint64_t now_ns)
{
	uint32_t total = 0;

	for (uint32_t k = 0; k < p->n; k++) {
		struct rte_mbuf *m[DP_PEER_BURST];
		if (k == p->self)
			continue;
		for (unsigned r = 0; r < PORT_ROUNDS; r++) {
			uint16_t n = rte_eth_rx_burst(p->peer[k].port_id, 0, m, DP_PEER_BURST);
			for (uint16_t i = 0; i < n; i++)
				rx_one(p, k, m[i], now_ns);
			total += n;
			if (n < DP_PEER_BURST)
				break;
		}
	}
	return total;
}

/* Offer the held frames to the port. Returns the number it took. */
static uint32_t send_held(struct dp_peer *pp)
{
	uint16_t sent = pp->n_held ? rte_eth_tx_burst(pp->port_id, 0, pp->held + pp->held_off,
						       (uint16_t)pp->n_held) : 0;

	pp->tx_full += sent < pp->n_held;
	pp->held_off += sent;
	pp->n_held -= sent;
	if (pp->n_held == 0)
		pp->held_off = 0;
	pp->tx += sent;
	return sent;
}

/* Fill the (empty) held burst from the channels' rings, round robin, each frame tagged with its channel's VID. */
static void take_rings(struct dp_peers *p, struct dp_peer *pp)
{
	for (uint32_t j = 0; j < pp->n_chan && pp->n_held < DP_PEER_BURST; j++) {
		uint32_t ci = pp->chan[(pp->rr + j) % pp->n_chan];
		struct rte_mbuf **slot = pp->held + pp->n_held;
		uint32_t n = rte_ring_sc_dequeue_burst(p->f->chans[ci].xring, (void **)slot,
						       DP_PEER_BURST - pp->n_held, NULL);
		for (uint32_t i = 0; i < n; i++) {
			struct rte_mbuf *m = slot[i];
			dp_frame_settle(p->f, m); /* (the other process's captures read it) */
			m->vlan_tci = (uint16_t)(ci + 1);
			if (rte_vlan_insert(&m) != 0) { /* (a shared or indirect mbuf) */
				pp->tag_failed++;
				rte_pktmbuf_free(m);
				continue;
			}
			pp->held[pp->n_held++] = m;
		}
	}
	pp->rr = pp->n_chan ? (pp->rr + 1) % pp->n_chan : 0;
}

uint32_t dp_peers_flush(struct dp_peers *p)
{
	uint32_t total = 0;

	for (uint32_t k = 0; k < p->n; k++) {
		struct dp_peer *pp = &p->peer[k];
		if (k == p->self || !pp->started)
			continue;
		for (unsigned r = 0; r < PORT_ROUNDS; r++) {
			total += send_held(pp);
			if (pp->n_held) /* the port is full: the rings fill and hold the senders back */
				break;
			take_rings(p, pp);
			if (pp->n_held == 0)
				break;
		}
		total += send_held(pp);
	}
	return total;
}

uint64_t dp_peers_drops(const struct dp_peers *p)
{
	uint64_t n = 0;

	for (uint32_t k = 0; k < p->n; k++) {
		const struct dp_peer *pp = &p->peer[k];
		n += pp->untagged + pp->unknown_vid + pp->segmented + pp->tag_failed;
	}
	return n;
}

int dp_peer_row(const struct dp_peers *p, uint32_t k, struct dp_peer_row *row)
{
	if (k >= p->n)
		return -1;
	if (k == p->self)
		return 1;
	const struct dp_peer *pp = &p->peer[k];
	row->process = k;
	topo_devargs_name(pp->devargs, row->name, sizeof(row->name));
	row->rx = pp->rx;
	row->tx = pp->tx;
	row->held = pp->n_held;
	row->port_full = pp->tx_full;
	row->untagged = pp->untagged;
	row->unknown_vid = pp->unknown_vid;
	row->segmented = pp->segmented;
	row->tag_failed = pp->tag_failed;
	return 0;
}

void dp_peers_print(const struct dp_peers *p, FILE *out)
{
	struct dp_peer_row r;
	int rc;

	if (p->n == 0)
		return;
	fprintf(out, "\n%-8s %-24s %12s %12s %6s %10s %9s %11s %9s %10s\n", "process", "peer port", "rx",
		"tx", "held", "port_full", "untagged", "unknown_vid", "segmented", "tag_failed");
	for (uint32_t k = 0; (rc = dp_peer_row(p, k, &r)) >= 0; k++)
		if (rc == 0)
			fprintf(out, "%-8u %-24s %12" PRIu64 " %12" PRIu64 " %6u %10" PRIu64 " %9" PRIu64
				" %11" PRIu64 " %9" PRIu64 " %10" PRIu64 "\n", r.process, r.name, r.rx, r.tx,
				r.held, r.port_full, r.untagged, r.unknown_vid, r.segmented, r.tag_failed);
}

void dp_peers_close(struct dp_peers *p)
{
	for (uint32_t k = 0; k < p->n; k++) {
		struct dp_peer *pp = &p->peer[k];
		for (uint32_t i = 0; i < pp->n_held; i++)
			rte_pktmbuf_free(pp->held[pp->held_off + i]);
		pp->n_held = 0;
		if (pp->started) {
			rte_eth_dev_stop(pp->port_id);
			rte_eth_dev_close(pp->port_id);
			pp->started = false;
		}
		free(pp->chan);
		pp->chan = NULL;
	}
	dp_peers_plan_free(p);
}
