/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_fabric.h"

#include "dp_chan.h"
#include "dp_switch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_arp.h>
#include <rte_ether.h>
#include <rte_lpm.h>

#include "dp_units.h"
#include "pfc_frame.h"
#include "rl_bytes.h"
#include "rl_hash.h"
#include "rl_parse.h"

#define DWRR_QUANTUM 2048u /* bytes per unit of weight and round */
#define IPPROTO_ICMPV6_ 58
#define ND_NEIGHBOR_SOLICIT_ 135
#define ND_NEIGHBOR_ADVERT_ 136
#define HOST_QUEUE_DEFAULT (512u * 1024)

static const char *const drop_names[DP_DROP_COUNT] = {
	[DP_DROP_PARSE] = "parse",         [DP_DROP_NOT_IP] = "not_ip",
	[DP_DROP_IPV6_CTL] = "ipv6_ctl",           [DP_DROP_TTL] = "ttl",
	[DP_DROP_NO_ROUTE] = "no_route",   [DP_DROP_MMU] = "buffer",
	[DP_DROP_LINK_DOWN] = "link_down", [DP_DROP_LOSS] = "loss",
	[DP_DROP_QUEUE] = "host_queue",    [DP_DROP_NO_MBUF] = "no_mbuf",
	[DP_DROP_SEGMENTED] = "segmented", [DP_DROP_PFC_BAD] = "pfc_bad",
	[DP_DROP_PFC_STORM] = "pfc_storm",
};

const char *dp_drop_name(enum dp_drop d)
{
	return (unsigned)d < DP_DROP_COUNT ? drop_names[d] : "unknown";
}

uint64_t dp_switch_drops(const struct dp_switch *s)
{
	uint64_t n = 0;

	for (int d = 0; d < DP_DROP_COUNT; d++)
		n += s->drops[d];
	return n;
}

/* ---- switch pipeline ---- */

static void sw_drop(struct dp_switch *s, struct rte_mbuf *m, enum dp_drop why)
{
	s->drops[why]++;
	rte_pktmbuf_free(m);
}

static void on_pfc_refresh(void *obj, uint64_t port, uint64_t now)
{
	struct dp_switch *s = obj;

	uint64_t at = s->pfc_timer_at[port];

	if (at == 0 || at > now)
		return; /* superseded (live mode hands out late times, so no equality test) */
	s->pfc_timer_at[port] = 0;
	dp_switch_send_pfc(s, (uint16_t)port, now);
}

/* Send the PFC frame the MMU owes on port (if any), and arm its next refresh. */
void dp_switch_send_pfc(struct dp_switch *s, uint16_t port, uint64_t now)
{
	struct dp_chan *c = s->out[port];
	struct pfc_frame fr;

	if (!c->up)
		return; /* nobody to pause on a dead link */
	if (pfc_mmu_pfc_frame(s->mmu, port, now, &fr) > 0) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(c->fab->mp);
		if (m == NULL) {
			s->drops[DP_DROP_NO_MBUF]++;
		} else {
			memcpy(fr.src, c->src_mac, 6);
			uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, PFC_FRAME_LEN);
			pfc_frame_encode(&fr, d, PFC_FRAME_LEN);
			memset(dp_priv(m), 0, DP_PRIV_HEAD_LEN);
			c->pfc_tx++;
			dp_chan_enqueue(c, m, DP_NUM_PRIO, now);
		}
	}
	uint64_t next = pfc_mmu_pfc_next_ns(s->mmu, port);
	if (next != UINT64_MAX && (s->pfc_timer_at[port] == 0 || next < s->pfc_timer_at[port])) {
		if (next <= now)
			next = now + 1;
		s->pfc_timer_at[port] = next;
		dp_timer_add(c->fab->eng, next, on_pfc_refresh, s, port);
	}
}

/* Proxy ARP: a leaf answers requests for its gateway and for any address in its subnet. */
static void handle_arp(struct dp_switch *s, uint16_t port, struct rte_mbuf *m, uint64_t now)
{
	struct dp_chan *c = s->out[port];
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);

	if (s->cfg->role != RL_ROLE_RTSW || rte_pktmbuf_data_len(m) < sizeof(*eh) + sizeof(struct rte_arp_hdr)) {
		sw_drop(s, m, DP_DROP_NOT_IP);
		return;
	}
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)(eh + 1);
	uint32_t tip = rte_be_to_cpu_32(a->arp_data.arp_tip);
	uint32_t sip = rte_be_to_cpu_32(a->arp_data.arp_sip);
	if (a->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) ||
	    (tip & 0xffffff00u) != s->cfg->subnet4 || tip == sip) {
		sw_drop(s, m, DP_DROP_NOT_IP);
		return;
	}
	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	a->arp_data.arp_tha = a->arp_data.arp_sha;
	a->arp_data.arp_tip = a->arp_data.arp_sip;
	memcpy(&a->arp_data.arp_sha, c->src_mac, 6);
	a->arp_data.arp_sip = rte_cpu_to_be_32(tip);
	eh->dst_addr = eh->src_addr;
	memcpy(&eh->src_addr, c->src_mac, 6);
	memset(dp_priv(m), 0, DP_PRIV_HEAD_LEN);
	s->arp_replies++;
	dp_chan_enqueue(c, m, DP_NUM_PRIO, now);
}

/*
 * RFC 1624 incremental update of the big-endian one's complement checksum at
 * csum, for a 16-bit word of the header changing from old to new (host order).
 */
static void csum_replace16(uint8_t *csum, uint16_t old, uint16_t new)
{
	uint32_t sum = (uint16_t)~((csum[0] << 8) | csum[1]);

	sum += (uint16_t)~old;
	sum += new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	csum[0] = (uint8_t)(~sum >> 8);
	csum[1] = (uint8_t)~sum;
}

/*
 * Decrement TTL / hop limit and maybe mark CE. IPv4 keeps its header checksum
 * right incrementally; IPv6 has none. (The RoCE ICRC masks all of these.)
 */
static void rewrite_ttl_ecn(uint8_t *ip, uint8_t version, bool ce)
{
	if (version == 6) {
		ip[7]--;            /* hop limit */
		if (ce)
			ip[1] |= 0x30; /* ECN: the low 2 bits of the traffic class */
		return;
	}
	uint16_t old = (uint16_t)(ip[8] << 8 | ip[9]); /* byte 8 TTL, 10-11 checksum */
	ip[8]--;
	csum_replace16(ip + 10, old, (uint16_t)(ip[8] << 8 | ip[9]));
	if (ce) {
		old = (uint16_t)(ip[0] << 8 | ip[1]);
		ip[1] |= 3;
		csum_replace16(ip + 10, old, (uint16_t)(ip[0] << 8 | ip[1]));
	}
}

/* One's complement sum of len bytes (big-endian 16-bit words), folded. */
static uint32_t sum16(const uint8_t *b, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	return sum;
}

/*
 * Proxy neighbour discovery: a leaf answers a neighbour solicitation for its
 * gateway fd00:0:0:L::fe or any address of its /64 with a neighbour
 * advertisement carrying the port's MAC (the IPv6 twin of handle_arp).
 * Duplicate address detection (source ::) gets no answer, so hosts keep
 * their addresses.
 */
static void handle_ns(struct dp_switch *s, uint16_t port, struct rte_mbuf *m,
		      const struct rl_pkt *p, uint64_t now)
{
	struct dp_chan *c = s->out[port];
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	static const uint8_t unspec[16];
	const size_t na_len = 14 + 40 + 32;

	if (s->cfg->role != RL_ROLE_RTSW || rte_pktmbuf_data_len(m) < p->l4_off + 24u ||
	    memcmp(p->src, unspec, 16) == 0 || memcmp(d + p->l4_off + 8, s->cfg->gw_ipv6, 8) != 0) {
		sw_drop(s, m, DP_DROP_IPV6_CTL);
		return;
	}
	uint8_t target[16], asker[16], asker_mac[6];
	memcpy(target, d + p->l4_off + 8, 16);
	memcpy(asker, p->src, 16);
	memcpy(asker_mac, d + 6, 6);
	if (memcmp(target, asker, 16) == 0) {
		sw_drop(s, m, DP_DROP_IPV6_CTL);
		return;
	}
	/* rebuild the frame in place as the advertisement */
	if (rte_pktmbuf_data_len(m) > na_len)
		rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_data_len(m) - na_len));
	else if (rte_pktmbuf_append(m, (uint16_t)(na_len - rte_pktmbuf_data_len(m))) == NULL) {
		sw_drop(s, m, DP_DROP_NO_MBUF);
		return;
	}
	d = rte_pktmbuf_mtod(m, uint8_t *);
	memset(d, 0, na_len);
	memcpy(d, asker_mac, 6);
	memcpy(d + 6, c->src_mac, 6);
	d[12] = 0x86, d[13] = 0xdd;
	uint8_t *ip = d + 14, *icmp = ip + 40;
	ip[0] = 0x60;
	ip[5] = 32;        /* payload length */
	ip[6] = IPPROTO_ICMPV6_;
	ip[7] = 255;       /* hop limit, as ND requires */
	memcpy(ip + 8, target, 16);
	memcpy(ip + 24, asker, 16);
	icmp[0] = ND_NEIGHBOR_ADVERT_;
	bool gw = memcmp(target, s->cfg->gw_ipv6, 16) == 0;
	icmp[4] = (uint8_t)((gw ? 0x80 : 0) | 0x40 | 0x20); /* router (gateway), solicited, override */
	memcpy(icmp + 8, target, 16);
	icmp[24] = 2;      /* option: target link-layer address */
	icmp[25] = 1;      /* length in units of 8 bytes */
	memcpy(icmp + 26, c->src_mac, 6);
	uint32_t sum = sum16(ip + 8, 32, 0) + 32 + IPPROTO_ICMPV6_; /* pseudo-header */
	sum = sum16(icmp, 32, sum);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	icmp[2] = (uint8_t)(~sum >> 8);
	icmp[3] = (uint8_t)~sum;
	memset(dp_priv(m), 0, DP_PRIV_HEAD_LEN);
	s->nd_replies++;
	dp_chan_enqueue(c, m, DP_NUM_PRIO, now);
}

/* An ICMP (v4 type 8, v6 type 128) echo request addressed to this leaf's gateway address. */
static bool is_echo_to_gateway(const struct dp_switch *s, const struct rl_pkt *p, const uint8_t *d,
			       uint32_t len)
{
	if ((uint32_t)p->l4_off + 8 > len)
		return false;
	if (p->ip_version == 4)
		return p->proto == 1 && d[p->l4_off] == 8 && rl_get_be32(p->dst) == s->cfg->gw_ipv4;
	return p->proto == IPPROTO_ICMPV6_ && d[p->l4_off] == 128 &&
	       memcmp(p->dst, s->cfg->gw_ipv6, 16) == 0;
}

/*
 * The leaf answers pings to its gateway address, in place: addresses and MACs
 * swapped, echo request -> reply with the ICMP checksum adjusted for the type
 * change only (RFC 1624), a fresh TTL / hop limit.
 */
static void answer_echo(struct dp_switch *s, uint16_t port, struct rte_mbuf *m,
			const struct rl_pkt *p, uint64_t now)
{
	struct dp_chan *c = s->out[port];
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *), *ip = d + p->l3_off, *icmp = d + p->l4_off;
	uint8_t tmp[16];
	size_t alen = p->ip_version == 4 ? 4 : 16;
	size_t src = p->ip_version == 4 ? 12 : 8;

	memcpy(d, d + 6, 6);
	memcpy(d + 6, c->src_mac, 6);
	memcpy(tmp, ip + src, alen);
	memcpy(ip + src, ip + src + alen, alen);
	memcpy(ip + src + alen, tmp, alen);
	uint8_t old_type = icmp[0];
	icmp[0] = p->ip_version == 4 ? 0 : 129;
	csum_replace16(icmp + 2, (uint16_t)(old_type << 8 | icmp[1]), (uint16_t)(icmp[0] << 8 | icmp[1]));
	if (p->ip_version == 4) {
		uint16_t old = (uint16_t)(ip[8] << 8 | ip[9]);
		ip[8] = 64;
		csum_replace16(ip + 10, old, (uint16_t)(ip[8] << 8 | ip[9]));
	} else {
		ip[7] = 64;
	}
	memset(dp_priv(m), 0, DP_PRIV_HEAD_LEN);
	s->echo_replies++;
	dp_chan_enqueue(c, m, DP_NUM_PRIO, now);
}

static int choose_member(struct dp_switch *s, struct dp_group *g, const struct rl_pkt *p,
			 const struct rl_host *dst, uint64_t now)
{
	const struct rl_switch *cfg = s->cfg;
	unsigned n_up = (unsigned)__builtin_popcountll(g->up_mask);

	if (n_up == 0)
		return -1;
	if (cfg->lb == RL_LB_PINNING)
		return rl_pin_select(dst->index, g->n, g->up_mask);
	uint32_t h = rl_flow_hash(cfg->profile, cfg->algo, cfg->seed, p);
	switch (cfg->lb) {
	case RL_LB_RESILIENT:
		return rl_resilient_select(&g->rs, h);
	case RL_LB_FLOWLET:
		return rl_flowlet_select(&s->flowlet, h, now, g->n, g->up_mask);
	default: { /* modulo over the members that are up */
		unsigned k = (unsigned)rl_ecmp_modulo(h, n_up);
		uint64_t m = g->up_mask;
		while (k--)
			m &= m - 1;
		return __builtin_ctzll(m);
	}
	}
}

/*
 * The host an address belongs to, or -1. IPv4: rte_lpm (one /32 per host);
 * IPv6: fd00:0:0:L::(i+1) names leaf and host directly, no table needed.
 */
static int host_of(const struct dp_fabric *f, uint8_t ip_version, const uint8_t *addr)
{
	uint32_t nh;

	if (ip_version == 6)
		return rl_route_host_by_ipv6(f->routes, addr);
	return rte_lpm_lookup(f->lpm, rl_get_be32(addr), &nh) == 0 ? (int)nh : -1;
}

/* The uplink traffic engineering installed for this packet's host pair at leaf s, or -1. */
static int te_uplink(struct dp_fabric *f, const struct dp_switch *s, const struct rl_pkt *p,
		     uint32_t dst_host)
{
	int src = host_of(f, p->ip_version, p->src);

	if (src < 0 || f->topo->hosts[src].leaf != s->idx)
		return -1;
	int port = dp_te_lookup(f->te, (uint32_t)src, dst_host);
	if (port < 0 || !s->out[port]->up)
		return -1;
	f->te->hits++;
	return port;
}

void dp_switch_rx(struct dp_switch *s, uint16_t in_port, struct rte_mbuf *m, uint64_t now)
{
	struct dp_fabric *f = s->out[in_port]->fab;
	struct dp_mbuf_priv *pv = dp_priv(m);
	struct rl_pkt *p = &pv->pkt;

	s->rx_pkts++;
	s->rx_bytes += rte_pktmbuf_pkt_len(m);
	if (!s->up) {
		sw_drop(s, m, DP_DROP_LINK_DOWN);
		return;
	}
	if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) < 0) {
		sw_drop(s, m, DP_DROP_SEGMENTED);
		return;
	}
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);
	if (!pv->parsed) { /* a frame the fabric made (PFC) or one that came in segments */
		pv->parse_st = (int8_t)rl_parse(d, len, p);
		pv->parsed = 1;
	}
	int st = pv->parse_st;

	if (st == RL_PARSE_NOT_IP) {
		if (p->ethertype == RL_ETHERTYPE_PAUSE) {
			/* PFC from the peer pauses the channel this port sends on */
			struct dp_chan *c = s->out[in_port];
			if (pfc_pause_rx(&c->pause, d, len, now) != PFC_FRAME_OK) {
				sw_drop(s, m, DP_DROP_PFC_BAD);
				return;
			}
			s->pfc_rx++;
			rte_pktmbuf_free(m);
			dp_watchdog_arm(c, now);
			dp_chan_kick(c, now);
			return;
		}
		if (p->ethertype == RL_ETHERTYPE_ARP) {
			handle_arp(s, in_port, m, now);
			return;
		}
		sw_drop(s, m, DP_DROP_NOT_IP);
		return;
	}
	if (st != RL_PARSE_OK) {
		s->parse_err[-st < 18 ? -st : 0]++;
		sw_drop(s, m, DP_DROP_PARSE);
		return;
	}
	if (p->ip_version == 6 && p->proto == IPPROTO_ICMPV6_ && (uint32_t)p->l4_off < len &&
	    d[p->l4_off] >= 130 && d[p->l4_off] <= 143) {
		/* neighbour discovery and multicast listener messages end at the leaf */
		if (d[p->l4_off] == ND_NEIGHBOR_SOLICIT_)
			handle_ns(s, in_port, m, p, now);
		else
			sw_drop(s, m, DP_DROP_IPV6_CTL);
		return;
	}
	if (s->cfg->role == RL_ROLE_RTSW && is_echo_to_gateway(s, p, d, len)) {
		answer_echo(s, in_port, m, p, now);
		return;
	}
	if (p->ttl <= 1) {
		sw_drop(s, m, DP_DROP_TTL);
		return;
	}
	int hidx = host_of(f, p->ip_version, p->dst);
	if (hidx < 0) {
		sw_drop(s, m, DP_DROP_NO_ROUTE);
		return;
	}
	const struct rl_host *h = &f->topo->hosts[hidx];
	int out_port;
	if (h->leaf == s->idx) {
		out_port = h->leaf_port;
	} else {
		struct dp_switch *leaf = &f->sw[h->leaf];
		struct dp_group *g = &s->group[leaf->cfg->leaf_index];
		int te_port = f->te && s->cfg->role == RL_ROLE_RTSW ? te_uplink(f, s, p, (uint32_t)hidx) : -1;
		if (te_port >= 0) {
			out_port = te_port;
		} else {
			int mbr = choose_member(s, g, p, h, now);
			if (mbr < 0) {
				sw_drop(s, m, DP_DROP_NO_ROUTE);
				return;
			}
			out_port = g->port[mbr];
		}
	}
	struct dp_chan *oc = s->out[out_port];
	if (!oc->up) {
		sw_drop(s, m, DP_DROP_LINK_DOWN);
		return;
	}

	uint8_t prio = f->topo->qos.dscp_prio[p->dscp];
	if (oc->wd_on && pfc_watchdog_drops(&oc->wd, prio)) {
		pfc_watchdog_count_drop(&oc->wd, prio, 1);
		sw_drop(s, m, DP_DROP_PFC_STORM);
		return;
	}
	struct pfc_mmu_pkt mp = {.len = len, .in_port = in_port, .out_port = (uint16_t)out_port,
				 .prio = prio, .ect = p->ecn != 0};
	unsigned flags = 0;
	enum pfc_mmu_verdict v = pfc_mmu_admit(s->mmu, &mp, now, &flags);
	if (flags & PFC_MMU_F_XOFF)
		dp_switch_send_pfc(s, in_port, now);
	if (v != PFC_MMU_ADMIT) {
		sw_drop(s, m, DP_DROP_MMU);
		return;
	}

	rewrite_ttl_ecn(d + p->l3_off, p->ip_version, flags & PFC_MMU_F_ECN_CE);
	p->ttl--; /* the parse the next hop reuses follows the frame */
	if (flags & PFC_MMU_F_ECN_CE)
		p->ecn = 3;
	s->ecn_marked += !!(flags & PFC_MMU_F_ECN_CE);
	memcpy(d, oc->dst_mac, 6);
	memcpy(d + 6, oc->src_mac, 6);

	int first_hop = s->out[in_port]->to.kind == RL_NODE_HOST;
	if (pv->flow_slot)
		dp_flows_record_slot(&f->flows, (int32_t)pv->flow_slot - 1, len, s->idx,
				     (uint16_t)out_port, first_hop);
	else if (f->flows.h)
		pv->flow_slot = (uint32_t)(dp_flows_record(&f->flows, p, len, s->idx,
							   (uint16_t)out_port, first_hop) + 1);
	pv->len = len;
	pv->in_port = in_port;
	pv->out_port = (uint16_t)out_port;
	pv->prio = prio;
	pv->ect = mp.ect;
	pv->admitted = 1;
	s->fwd_pkts++;
	s->port_tx_pkts[out_port]++;
	dp_chan_enqueue(oc, m, prio, now);
}

void dp_fabric_host_send(struct dp_fabric *f, uint32_t host, struct rte_mbuf *m, uint64_t now)
{
	struct dp_host *h = &f->host[host];
	struct dp_chan *c = h->tx;
	uint8_t prio = 0;
	struct dp_mbuf_priv *pv = dp_priv(m);
	struct rl_pkt *p = &pv->pkt;

	h->tx_pkts++;
	h->tx_bytes += rte_pktmbuf_pkt_len(m);
	memset(pv, 0, DP_PRIV_HEAD_LEN);
	if (!c->up) {
		c->drops[DP_DROP_LINK_DOWN]++;
		rte_pktmbuf_free(m);
		return;
	}
	/* The NIC queues by the priority its DSCP maps to, so PFC can pause it;
	 * its own MAC control (PFC) frames go first and are never paused. The
	 * parse travels with the frame (the leaf does not parse again). */
	int st = RL_PARSE_BAD_ARG;
	if (m->nb_segs == 1) {
		st = rl_parse(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m), p);
		pv->parse_st = (int8_t)st;
		pv->parsed = 1;
	}
	if (st == RL_PARSE_OK)
		prio = f->topo->qos.dscp_prio[p->dscp];
	else if (st == RL_PARSE_NOT_IP && p->ethertype == RL_ETHERTYPE_PAUSE) {
		dp_chan_enqueue(c, m, DP_NUM_PRIO, now);
		return;
	}
	if (c->q[prio].bytes + rte_pktmbuf_pkt_len(m) > c->q_limit_bytes) {
		c->drops[DP_DROP_QUEUE]++;
		rte_pktmbuf_free(m);
		return;
	}
	dp_chan_enqueue(c, m, prio, now);
}

/* ---- routes and groups ---- */

/* Make each (switch, leaf) group's members what the routes say, moving as few flows as possible. */
static void sync_groups(struct dp_fabric *f, bool first)
{
	const struct rl_topo *t = f->topo;

	for (uint32_t si = 0; si < t->n_switches; si++) {
		struct dp_switch *s = &f->sw[si];
		for (uint32_t L = 0; L < t->n_leaves; L++) {
			struct dp_group *g = &s->group[L];
			unsigned n;
			const uint16_t *ports = rl_route_group(f->routes, si, L, &n);
			uint64_t want = 0;

			for (unsigned i = 0; i < n; i++) {
				int k = -1;
				for (unsigned j = 0; j < g->n; j++)
					if (g->port[j] == ports[i])
						k = (int)j;
				if (k < 0 && g->n < RL_NH_MAX_MEMBERS) {
					k = g->n;
					g->port[g->n++] = ports[i];
				}
				if (k >= 0)
					want |= 1ull << k;
			}
			if (s->cfg->lb == RL_LB_RESILIENT && g->n > 0) {
				if (first || g->rs.bucket == NULL) {
					rl_resilient_free(&g->rs);
					rl_resilient_init(&g->rs, s->cfg->resilient_buckets, g->n);
					for (unsigned j = 0; j < g->n; j++)
						if (!(want >> j & 1))
							rl_resilient_remove(&g->rs, j);
				} else {
					for (unsigned j = 0; j < g->n; j++) {
						bool was = g->rs.members >> j & 1, is = want >> j & 1;
						if (was && !is)
							rl_resilient_remove(&g->rs, j);
						else if (!was && is)
							rl_resilient_add(&g->rs, j);
					}
				}
			}
			if (!first && g->up_mask != want)
				f->route_changes++;
			g->up_mask = want;
		}
	}
}

static void reroute(struct dp_fabric *f, uint64_t now)
{
	rl_route_compute(f->routes);
	sync_groups(f, false);
	if (f->te)
		dp_te_compute(f->te); /* the controller places the flows again */
	/* channels that came back up may hold queued packets */
	for (uint32_t i = 0; i < f->n_chans; i++)
		dp_chan_kick(&f->chans[i], now);
}

int dp_fabric_set_link(struct dp_fabric *f, uint32_t link, bool up, uint64_t now)
{
	if (link >= f->topo->n_links)
		return -1;
	f->chans[2 * link].up = up;
	f->chans[2 * link + 1].up = up;
	if (!up) {
		dp_chan_flush(&f->chans[2 * link], now);
		dp_chan_flush(&f->chans[2 * link + 1], now);
	}
	rl_route_set_link(f->routes, link, up);
	reroute(f, now);
	return 0;
}

int dp_fabric_set_switch(struct dp_fabric *f, uint32_t sw, bool up, uint64_t now)
{
	if (sw >= f->topo->n_switches)
		return -1;
	f->sw[sw].up = up;
	rl_route_set_switch(f->routes, sw, up);
	reroute(f, now);
	return 0;
}

static void on_topo_event(void *obj, uint64_t i, uint64_t now)
{
	struct dp_fabric *f = obj;
	const struct rl_event *ev = &f->topo->events[i];

	if (ev->target == RL_EVENT_LINK)
		dp_fabric_set_link(f, ev->index, ev->up, now);
	else
		dp_fabric_set_switch(f, ev->index, ev->up, now);
	f->events_applied++;
}

struct dp_chan *dp_fabric_chan_from(struct dp_fabric *f, uint32_t link, struct rl_node_ref from)
{
	if (link >= f->topo->n_links)
		return NULL;
	for (int d = 0; d < 2; d++) {
		struct dp_chan *c = &f->chans[2 * link + d];
		if (c->from.kind == from.kind && c->from.index == from.index)
			return c;
	}
	return NULL;
}

/* ---- construction ---- */

static const uint8_t *node_port_mac(const struct rl_topo *t, struct rl_node_ref n, uint16_t port)
{
	if (n.kind == RL_NODE_HOST)
		return t->hosts[n.index].mac;
	return t->switches[n.index].ports[port].mac;
}

static int init_chan(struct dp_fabric *f, struct dp_chan *c, uint32_t l, int dir, char *err,
		     size_t errlen)
{
	const struct rl_topo *t = f->topo;
	const struct rl_link *lk = &t->links[l];

	c->fab = f;
	c->link = l;
	c->dir = (uint8_t)dir;
	c->from = lk->end[dir];
	c->to = lk->end[!dir];
	c->from_port = lk->port[dir];
	c->to_port = lk->port[!dir];
	memcpy(c->src_mac, node_port_mac(t, c->from, c->from_port), 6);
	memcpy(c->dst_mac, node_port_mac(t, c->to, c->to_port), 6);
	c->rate_bps = lk->rate_bps;
	c->rate_rcp = rte_reciprocal_value_u64(lk->rate_bps);
	c->delay_ns = lk->delay_ns;
	c->loss = lk->loss;
	c->up = true;
	c->q_limit_bytes = f->opt.host_queue_bytes ? f->opt.host_queue_bytes : HOST_QUEUE_DEFAULT;
	c->rng = (f->opt.seed ? f->opt.seed : 1) * 0x9e3779b97f4a7c15ull + 2 * l + (uint64_t)dir + 1;
	for (int p = 0; p < DP_NUM_PRIO; p++)
		c->quantum[p] = DWRR_QUANTUM * (t->qos.dwrr_weight[p] ? t->qos.dwrr_weight[p] : 1);
	if (f->opt.watchdog && c->from.kind == RL_NODE_SWITCH) {
		struct pfc_watchdog_config wc = *f->opt.watchdog;
		wc.prio_mask = t->qos.lossless_mask;
		if (pfc_watchdog_init(&c->wd, &wc, 0, err, errlen) < 0)
			return -1;
		c->wd_on = true;
	}
	return pfc_pause_init(&c->pause, lk->rate_bps, err, errlen);
}

static int init_switch(struct dp_fabric *f, uint32_t si, char *err, size_t errlen)
{
	const struct rl_topo *t = f->topo;
	const struct rl_switch *cfg = &t->switches[si];
	struct dp_switch *s = &f->sw[si];
	struct pfc_mmu_config mc;
	struct pfc_mmu_port_config *pc = calloc(cfg->n_ports ? cfg->n_ports : 1, sizeof(*pc));

	s->idx = si;
	s->cfg = cfg;
	s->up = true;
	s->out = calloc(cfg->n_ports, sizeof(*s->out));
	s->pfc_timer_at = calloc(cfg->n_ports, sizeof(*s->pfc_timer_at));
	s->port_tx_pkts = calloc(cfg->n_ports, sizeof(*s->port_tx_pkts));
	s->group = calloc(t->n_leaves, sizeof(*s->group));
	if (!pc || !s->out || !s->pfc_timer_at || !s->port_tx_pkts || !s->group) {
		free(pc);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint16_t p = 0; p < cfg->n_ports; p++) {
		const struct rl_link *lk = &t->links[cfg->ports[p].link];
		struct rl_node_ref me = {RL_NODE_SWITCH, si};
		s->out[p] = dp_fabric_chan_from(f, cfg->ports[p].link, me);
		/* largest frame: IP MTU + Ethernet header + one 802.1Q tag */
		pfc_mmu_port_config_init(&pc[p], lk->rate_bps, lk->delay_ns, lk->mtu + 18);
	}
	pfc_mmu_config_init(&mc, cfg->buffer_profile, cfg->n_ports, &pc[0]);
	mc.ports = pc;
	mc.lossless_mask = t->qos.lossless_mask;
	mc.seed = (f->opt.seed ? f->opt.seed : 1) + si;
	for (int p = 0; p < DP_NUM_PRIO; p++) {
		mc.ecn[p].enabled = t->qos.ecn;
		mc.ecn[p].kmin_bytes = t->qos.ecn_kmin;
		mc.ecn[p].kmax_bytes = t->qos.ecn_kmax;
		mc.ecn[p].pmax = t->qos.ecn_pmax;
	}
	char merr[200];
	s->mmu = pfc_mmu_create(&mc, merr, sizeof(merr));
	free(pc);
	if (s->mmu == NULL) {
		snprintf(err, errlen, "switch %s: buffer: %s", cfg->name, merr);
		return -1;
	}
	if (cfg->lb == RL_LB_FLOWLET &&
	    rl_flowlet_init(&s->flowlet, 4096, cfg->flowlet_timeout_ns, mc.seed) < 0) {
		snprintf(err, errlen, "switch %s: flowlet table: out of memory", cfg->name);
		return -1;
	}
	return 0;
}

struct dp_fabric *dp_fabric_create(const struct rl_topo *t, struct dp_engine *e,
				   struct rte_mempool *mp, const struct dp_fabric_opts *opt,
				   char *err, size_t errlen)
{
	struct dp_fabric *f = calloc(1, sizeof(*f));

	if (f == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	f->topo = t;
	f->eng = e;
	f->mp = mp;
	if (opt)
		f->opt = *opt;
	if (rte_pktmbuf_priv_size(mp) < sizeof(struct dp_mbuf_priv)) {
		snprintf(err, errlen, "mbuf pool private area too small (%u < %zu)",
			 rte_pktmbuf_priv_size(mp), sizeof(struct dp_mbuf_priv));
		goto fail;
	}
	f->n_chans = 2 * t->n_links;
	f->chans = calloc(f->n_chans ? f->n_chans : 1, sizeof(*f->chans));
	f->sw = calloc(t->n_switches, sizeof(*f->sw));
	f->host = calloc(t->n_hosts ? t->n_hosts : 1, sizeof(*f->host));
	f->routes = rl_route_create(t);
	if (!f->chans || !f->sw || !f->host || !f->routes) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (uint32_t l = 0; l < t->n_links; l++)
		for (int d = 0; d < 2; d++)
			if (init_chan(f, &f->chans[2 * l + d], l, d, err, errlen) < 0)
				goto fail;
	for (uint32_t si = 0; si < t->n_switches; si++)
		if (init_switch(f, si, err, errlen) < 0)
			goto fail;
	for (uint32_t hi = 0; hi < t->n_hosts; hi++) {
		struct dp_host *h = &f->host[hi];
		struct rl_node_ref me = {RL_NODE_HOST, hi};
		h->idx = hi;
		h->cfg = &t->hosts[hi];
		h->port_id = -1;
		h->tx = dp_fabric_chan_from(f, t->hosts[hi].link, me);
		h->rx = &f->chans[(h->tx - f->chans) ^ 1];
	}

	/* IPv4 destination -> host: one /32 per host */
	char name[RTE_LPM_NAMESIZE];
	snprintf(name, sizeof(name), "rl_lpm_%p", (void *)f); /* unique per process */
	struct rte_lpm_config lc = {.max_rules = t->n_hosts + 16, .number_tbl8s = 256};
	f->lpm = rte_lpm_create(name, SOCKET_ID_ANY, &lc);
	if (f->lpm == NULL) {
		snprintf(err, errlen, "rte_lpm_create: %s", rte_strerror(rte_errno));
		goto fail;
	}
	for (uint32_t hi = 0; hi < t->n_hosts; hi++)
		if (rte_lpm_add(f->lpm, t->hosts[hi].ipv4, 32, hi) < 0) {
			snprintf(err, errlen, "rte_lpm_add: host %s", t->hosts[hi].name);
			goto fail;
		}

	if (dp_flows_init(&f->flows, f->opt.flow_capacity, err, errlen) < 0)
		goto fail;
	if (rl_route_compute(f->routes) < 0) {
		snprintf(err, errlen, "route computation failed");
		goto fail;
	}
	sync_groups(f, true);
	for (uint32_t i = 0; i < t->n_events; i++)
		dp_timer_add(e, t->events[i].at_ns, on_topo_event, f, i);
	return f;
fail:
	dp_fabric_destroy(f);
	return NULL;
}

void dp_fabric_destroy(struct dp_fabric *f)
{
	if (f == NULL)
		return;
	for (uint32_t i = 0; f->chans && i < f->n_chans; i++)
		dp_chan_free(&f->chans[i]);
	for (uint32_t si = 0; f->sw && si < f->topo->n_switches; si++) {
		struct dp_switch *s = &f->sw[si];
		pfc_mmu_destroy(s->mmu);
		for (uint32_t L = 0; s->group && L < f->topo->n_leaves; L++)
			rl_resilient_free(&s->group[L].rs);
		rl_flowlet_free(&s->flowlet);
		free(s->out);
		free(s->pfc_timer_at);
		free(s->port_tx_pkts);
		free(s->group);
	}
	if (f->lpm)
		rte_lpm_free(f->lpm);
	dp_flows_free(&f->flows);
	rl_route_free(f->routes);
	free(f->chans);
	free(f->sw);
	free(f->host);
	free(f);
}
