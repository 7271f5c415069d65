/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The switch's forwarding decision as named stages (dp_pipeline.h). Each
 * stage returns true when it has decided the frame's fate (the verdict is
 * set), false to pass it on to the next stage.
 */
#include "dp_pipeline.h"

#include <string.h>

#include "pfc_frame.h"
#include "rl_bytes.h"
#include "rl_hash.h"

/* Ethernet */
#define ETH_HDR_LEN 14
#define ETH_DST_OFF 0
#define ETH_SRC_OFF 6
#define ETH_TYPE_OFF 12
#define MAC_LEN 6

/* ARP for IPv4 over Ethernet (RFC 826), right after the Ethernet header */
#define ARP_LEN 28
#define ARP_OP_OFF 6
#define ARP_SHA_OFF 8
#define ARP_SIP_OFF 14
#define ARP_THA_OFF 18
#define ARP_TIP_OFF 24
#define ARP_OP_REQUEST 1
#define ARP_OP_REPLY 2
#define IPV4_SUBNET24_MASK 0xffffff00u /* a leaf's hosts share one /24 */

/* IPv4 and IPv6 headers */
#define IPV4_TTL_OFF 8
#define IPV4_CSUM_OFF 10
#define IPV4_SRC_OFF 12
#define IPV4_ADDR_LEN 4
#define ECN_CE 3               /* the ECN codepoint CE (RFC 3168), the low 2 bits of IPv4's TOS byte */
#define IPV6_HDR_LEN 40
#define IPV6_VTC_FIRST 0x60    /* version 6, traffic class 0 (high nibble) */
#define IPV6_PAYLEN_OFF 4
#define IPV6_NEXT_OFF 6
#define IPV6_HOPS_OFF 7
#define IPV6_SRC_OFF 8
#define IPV6_DST_OFF 24
#define IPV6_ADDR_LEN 16
#define IPV6_ECN_CE (ECN_CE << 4) /* ECN: the low 2 bits of the traffic class, in byte 1 */
#define ECHO_REPLY_TTL 64      /* a fresh TTL / hop limit for an echo reply */

/* ICMP, ICMPv6 and neighbour discovery (RFC 4861) */
#define IPPROTO_ICMP_ 1
#define IPPROTO_ICMPV6_ 58
#define ICMP_HDR_LEN 8
#define ICMP_CSUM_OFF 2
#define ICMP_ECHO_REPLY 0
#define ICMP_ECHO_REQUEST 8
#define ICMPV6_ECHO_REQUEST 128
#define ICMPV6_ECHO_REPLY 129
#define ICMPV6_CTL_FIRST 130   /* MLD, router/neighbour discovery, redirect: 130..143 end at the leaf */
#define ICMPV6_CTL_LAST 143
#define ND_NEIGHBOR_SOLICIT 135
#define ND_NEIGHBOR_ADVERT 136
#define ND_TARGET_OFF 8        /* in the NS / NA message */
#define ND_NS_MIN_LEN 24       /* NS header up to the end of its target */
#define ND_NA_LEN 32           /* NA with one target link-layer address option */
#define ND_NA_FLAGS_OFF 4
#define ND_NA_F_ROUTER 0x80
#define ND_NA_F_SOLICITED 0x40
#define ND_NA_F_OVERRIDE 0x20
#define ND_HOP_LIMIT 255       /* RFC 4861: ND messages must carry 255 */
#define ND_OPT_OFF 24          /* the option after the NA's target */
#define ND_OPT_TARGET_LLADDR 2
#define ND_OPT_LEN_8B 1        /* option length in units of 8 bytes */
#define ND_NA_FRAME_LEN (ETH_HDR_LEN + IPV6_HDR_LEN + ND_NA_LEN)
#define GW_PREFIX_LEN 8        /* the /64 a leaf's hosts share, in bytes */

/* One packet's way through the stages: what they read and what they leave for the next. */
struct pipe {
	struct dp_switch *s;
	struct dp_fabric *f;
	uint16_t in_port;
	struct dp_frame *fr;
	struct rl_pkt *p;
	uint64_t now;
	int host;            /* route lookup: the destination host */
	int out_port;        /* next hop: the egress port */
	struct dp_chan *oc;  /* link state: the channel out_port sends on */
	uint8_t prio;        /* PFC watchdog: the egress queue */
	struct dp_verdict *v;
};

static bool verdict_drop(struct pipe *x, enum dp_drop why)
{
	x->s->drops[why]++;
	x->v->kind = DP_VERDICT_DROP;
	x->v->drop = why;
	return true;
}

static bool verdict_reply(struct pipe *x, uint32_t len)
{
	x->v->kind = DP_VERDICT_REPLY;
	x->v->len = len;
	return true;
}

static void pipe_settle(struct pipe *x);

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

/* One's complement sum of len bytes (big-endian 16-bit words), not folded. */
static uint32_t sum16(const uint8_t *b, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	return sum;
}

/* ---- not IP: PFC and ARP ---- */

/*
 * PFC frame. Reads: the frame (MAC control, 802.1Qbb). Sets: the pause state
 * of the channel in_port sends on (the peer asks this switch to stop), pfc_rx.
 * Next: consume (the caller kicks that channel), or drop pfc_bad.
 */
static bool stage_pfc_frame(struct pipe *x)
{
	struct dp_chan *c = x->s->out[x->in_port];

	if (pfc_pause_rx(&c->pause, x->fr->d, x->fr->len, x->now) != PFC_FRAME_OK)
		return verdict_drop(x, DP_DROP_PFC_BAD);
	x->s->pfc_rx++;
	x->v->kind = DP_VERDICT_CONSUME;
	return true;
}

/*
 * Proxy ARP: a leaf answers requests for its gateway and for any address in
 * its subnet. Reads: the ARP request, the leaf's subnet. Sets: the frame
 * becomes the reply (in_port's MAC as the answer), arp_replies. Next: reply,
 * or drop not_ip (not a leaf, not a request for its subnet, gratuitous).
 */
static bool stage_arp(struct pipe *x)
{
	const struct topo_switch *cfg = x->s->cfg;
	const uint8_t *mac = x->s->out[x->in_port]->src_mac;
	uint8_t *d = x->fr->d, *a = d + ETH_HDR_LEN;

	if (cfg->role != TOPO_ROLE_RTSW || x->fr->len < ETH_HDR_LEN + ARP_LEN)
		return verdict_drop(x, DP_DROP_NOT_IP);
	uint32_t tip = rl_get_be32(a + ARP_TIP_OFF);
	uint32_t sip = rl_get_be32(a + ARP_SIP_OFF);
	if (rl_get_be16(a + ARP_OP_OFF) != ARP_OP_REQUEST || (tip & IPV4_SUBNET24_MASK) != cfg->subnet4 ||
	    tip == sip)
		return verdict_drop(x, DP_DROP_NOT_IP);
	rl_put_be16(a + ARP_OP_OFF, ARP_OP_REPLY);
	memcpy(a + ARP_THA_OFF, a + ARP_SHA_OFF, MAC_LEN);
	memcpy(a + ARP_TIP_OFF, a + ARP_SIP_OFF, IPV4_ADDR_LEN);
	memcpy(a + ARP_SHA_OFF, mac, MAC_LEN);
	rl_put_be32(a + ARP_SIP_OFF, tip);
	memcpy(d + ETH_DST_OFF, d + ETH_SRC_OFF, MAC_LEN);
	memcpy(d + ETH_SRC_OFF, mac, MAC_LEN);
	x->s->arp_replies++;
	return verdict_reply(x, x->fr->len);
}

/*
 * Not IP. Reads: the EtherType. Next: PFC frame, ARP, or drop not_ip.
 */
static bool stage_not_ip(struct pipe *x)
{
	if (x->p->ethertype == RL_ETHERTYPE_PAUSE)
		return stage_pfc_frame(x);
	if (x->p->ethertype == RL_ETHERTYPE_ARP)
		return stage_arp(x);
	return verdict_drop(x, DP_DROP_NOT_IP);
}

/*
 * Parse error. Reads: the parser's status. Sets: parse_err[-status]. Next:
 * drop parse.
 */
static bool stage_parse_error(struct pipe *x, int st)
{
	x->s->parse_err[-st < DP_PARSE_ERR_SLOTS ? -st : 0]++;
	return verdict_drop(x, DP_DROP_PARSE);
}

/* ---- IPv6 control and the gateway's own addresses ---- */

/* Write the neighbour advertisement of target to asker (at asker_mac) over d, from mac. */
static void build_na(uint8_t *d, const uint8_t *mac, const uint8_t *asker_mac, const uint8_t *asker,
		     const uint8_t *target, bool router)
{
	uint8_t *ip = d + ETH_HDR_LEN, *icmp = ip + IPV6_HDR_LEN;

	memset(d, 0, ND_NA_FRAME_LEN);
	memcpy(d + ETH_DST_OFF, asker_mac, MAC_LEN);
	memcpy(d + ETH_SRC_OFF, mac, MAC_LEN);
	rl_put_be16(d + ETH_TYPE_OFF, RL_ETHERTYPE_IPV6);
	ip[0] = IPV6_VTC_FIRST;
	rl_put_be16(ip + IPV6_PAYLEN_OFF, ND_NA_LEN);
	ip[IPV6_NEXT_OFF] = IPPROTO_ICMPV6_;
	ip[IPV6_HOPS_OFF] = ND_HOP_LIMIT;
	memcpy(ip + IPV6_SRC_OFF, target, IPV6_ADDR_LEN);
	memcpy(ip + IPV6_DST_OFF, asker, IPV6_ADDR_LEN);
	icmp[0] = ND_NEIGHBOR_ADVERT;
	icmp[ND_NA_FLAGS_OFF] = (uint8_t)((router ? ND_NA_F_ROUTER : 0) | ND_NA_F_SOLICITED | ND_NA_F_OVERRIDE);
	memcpy(icmp + ND_TARGET_OFF, target, IPV6_ADDR_LEN);
	icmp[ND_OPT_OFF] = ND_OPT_TARGET_LLADDR;
	icmp[ND_OPT_OFF + 1] = ND_OPT_LEN_8B;
	memcpy(icmp + ND_OPT_OFF + 2, mac, MAC_LEN);
	/* pseudo-header: addresses, upper-layer length, next header */
	uint32_t sum = sum16(ip + IPV6_SRC_OFF, 2 * IPV6_ADDR_LEN, 0) + ND_NA_LEN + IPPROTO_ICMPV6_;
	sum = sum16(icmp, ND_NA_LEN, sum);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	rl_put_be16(icmp + ICMP_CSUM_OFF, (uint16_t)~sum);
}

/*
 * Proxy neighbour discovery: a leaf answers a neighbour solicitation for its
 * gateway fd00:0:0:L::fe or any address of its /64 with a neighbour
 * advertisement carrying the port's MAC (the IPv6 twin of stage_arp).
 * Duplicate address detection (source ::) gets no answer, so hosts keep
 * their addresses. Reads: the NS, the leaf's /64. Sets: the frame becomes
 * the NA (ND_NA_FRAME_LEN bytes), nd_replies. Next: reply, drop ipv6_ctl,
 * or drop no_mbuf (the buffer cannot hold the NA).
 */
static bool stage_nd(struct pipe *x)
{
	static const uint8_t unspec[IPV6_ADDR_LEN];
	const struct topo_switch *cfg = x->s->cfg;
	const struct rl_pkt *p = x->p;
	uint8_t *d = x->fr->d;

	if (cfg->role != TOPO_ROLE_RTSW || x->fr->len < p->l4_off + (uint32_t)ND_NS_MIN_LEN ||
	    memcmp(p->src, unspec, IPV6_ADDR_LEN) == 0 ||
	    memcmp(d + p->l4_off + ND_TARGET_OFF, cfg->gw_ipv6, GW_PREFIX_LEN) != 0)
		return verdict_drop(x, DP_DROP_IPV6_CTL);
	pipe_settle(x); /* (the asker's MAC, as the last hop wrote it) */
	uint8_t target[IPV6_ADDR_LEN], asker[IPV6_ADDR_LEN], asker_mac[MAC_LEN];
	memcpy(target, d + p->l4_off + ND_TARGET_OFF, IPV6_ADDR_LEN);
	memcpy(asker, p->src, IPV6_ADDR_LEN);
	memcpy(asker_mac, d + ETH_SRC_OFF, MAC_LEN);
	if (memcmp(target, asker, IPV6_ADDR_LEN) == 0)
		return verdict_drop(x, DP_DROP_IPV6_CTL);
	if (x->fr->room < ND_NA_FRAME_LEN)
		return verdict_drop(x, DP_DROP_NO_MBUF);
	build_na(d, x->s->out[x->in_port]->src_mac, asker_mac, asker, target,
		 memcmp(target, cfg->gw_ipv6, IPV6_ADDR_LEN) == 0);
	x->s->nd_replies++;
	return verdict_reply(x, ND_NA_FRAME_LEN);
}

/*
 * IPv6 control. Reads: ICMPv6 type. Neighbour discovery and multicast
 * listener messages end at the leaf. Next: ND (a solicitation), drop
 * ipv6_ctl (the others), or echo (anything else).
 */
static bool stage_ipv6_ctl(struct pipe *x)
{
	const struct rl_pkt *p = x->p;
	const uint8_t *d = x->fr->d;

	if (p->ip_version != 6 || p->proto != IPPROTO_ICMPV6_ || (uint32_t)p->l4_off >= x->fr->len ||
	    d[p->l4_off] < ICMPV6_CTL_FIRST || d[p->l4_off] > ICMPV6_CTL_LAST)
		return false;
	if (d[p->l4_off] == ND_NEIGHBOR_SOLICIT)
		return stage_nd(x);
	return verdict_drop(x, DP_DROP_IPV6_CTL);
}

/* An ICMP (v4 or v6) echo request addressed to this leaf's gateway address. */
static bool is_echo_to_gateway(const struct dp_switch *s, const struct rl_pkt *p, const uint8_t *d,
			       uint32_t len)
{
	if ((uint32_t)p->l4_off + ICMP_HDR_LEN > len)
		return false;
	if (p->ip_version == 4)
		return p->proto == IPPROTO_ICMP_ && d[p->l4_off] == ICMP_ECHO_REQUEST &&
		       rl_get_be32(p->dst) == s->cfg->gw_ipv4;
	return p->proto == IPPROTO_ICMPV6_ && d[p->l4_off] == ICMPV6_ECHO_REQUEST &&
	       memcmp(p->dst, s->cfg->gw_ipv6, IPV6_ADDR_LEN) == 0;
}

/*
 * Echo to the gateway: the leaf answers pings to its gateway address, in
 * place: addresses and MACs swapped, echo request -> reply with the ICMP
 * checksum adjusted for the type change only (RFC 1624), a fresh TTL / hop
 * limit. Reads: the echo request. Sets: the frame becomes the reply,
 * echo_replies. Next: reply, or TTL (not an echo to this leaf's gateway).
 */
static bool stage_echo(struct pipe *x)
{
	const struct rl_pkt *p = x->p;
	uint8_t *d = x->fr->d, *ip = d + p->l3_off, *icmp = d + p->l4_off;

	if (x->s->cfg->role != TOPO_ROLE_RTSW || !is_echo_to_gateway(x->s, p, d, x->fr->len))
		return false;
	pipe_settle(x); /* the reply goes back to the MAC the last hop wrote */
	bool v4 = p->ip_version == 4;
	size_t alen = v4 ? IPV4_ADDR_LEN : IPV6_ADDR_LEN;
	size_t src = v4 ? IPV4_SRC_OFF : IPV6_SRC_OFF;
	uint8_t tmp[IPV6_ADDR_LEN];

	memcpy(d + ETH_DST_OFF, d + ETH_SRC_OFF, MAC_LEN);
	memcpy(d + ETH_SRC_OFF, x->s->out[x->in_port]->src_mac, MAC_LEN);
	memcpy(tmp, ip + src, alen);
	memcpy(ip + src, ip + src + alen, alen);
	memcpy(ip + src + alen, tmp, alen);
	uint8_t old_type = icmp[0];
	icmp[0] = v4 ? ICMP_ECHO_REPLY : ICMPV6_ECHO_REPLY;
	csum_replace16(icmp + ICMP_CSUM_OFF, (uint16_t)(old_type << 8 | icmp[1]),
		       (uint16_t)(icmp[0] << 8 | icmp[1]));
	if (v4) {
		uint16_t old = rl_get_be16(ip + IPV4_TTL_OFF);
		ip[IPV4_TTL_OFF] = ECHO_REPLY_TTL;
		csum_replace16(ip + IPV4_CSUM_OFF, old, rl_get_be16(ip + IPV4_TTL_OFF));
	} else {
		ip[IPV6_HOPS_OFF] = ECHO_REPLY_TTL;
	}
	x->s->echo_replies++;
	return verdict_reply(x, x->fr->len);
}

/* ---- routing ---- */

/* TTL. Reads: TTL / hop limit. Next: route lookup, or drop ttl (0 or 1: it would expire here). */
static bool stage_ttl(struct pipe *x)
{
	if (x->p->ttl <= 1)
		return verdict_drop(x, DP_DROP_TTL);
	return false;
}

/*
 * The host an address belongs to, or -1. IPv4: the fabric's table (rte_lpm,
 * one /32 per host); IPv6: fd00:0:0:L::(i+1) names leaf and host directly.
 */
static int host_of(const struct dp_fabric *f, uint8_t ip_version, const uint8_t *addr)
{
	if (ip_version == 6)
		return topo_route_host_by_ipv6(f->routes, addr);
	return f->host_of_ipv4(f, rl_get_be32(addr));
}

/* Route lookup. Reads: the destination address. Sets: host. Next: next hop, or drop no_route. */
static bool stage_route(struct pipe *x)
{
	x->host = host_of(x->f, x->p->ip_version, x->p->dst);
	if (x->host < 0)
		return verdict_drop(x, DP_DROP_NO_ROUTE);
	return false;
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
	__atomic_fetch_add(&f->te->hits, 1, __ATOMIC_RELAXED); /* switches of several partitions */
	return port;
}

/* The member of group g the switch's load balancing picks for p, or -1 when none is up. */
static int choose_member(struct dp_switch *s, struct dp_group *g, const struct rl_pkt *p,
			 const struct topo_host *dst, uint64_t now)
{
	const struct topo_switch *cfg = s->cfg;
	unsigned n_up = (unsigned)__builtin_popcountll(g->up_mask);

	if (n_up == 0)
		return -1;
	if (cfg->lb == TOPO_LB_PINNING)
		return rl_pin_select(dst->index, g->n, g->up_mask);
	if (cfg->lb == TOPO_LB_ECMP && n_up == 1)
		return __builtin_ctzll(g->up_mask); /* (a spine's way down: no hash to compute) */
	uint32_t h = rl_flow_hash(cfg->profile, cfg->algo, cfg->seed, p);
	switch (cfg->lb) {
	case TOPO_LB_RESILIENT:
		return rl_resilient_select(&g->rs, h);
	case TOPO_LB_FLOWLET:
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
 * Next hop. Reads: host, the (switch, destination leaf) group, the switch's
 * load-balancing mode, traffic engineering (leaves). Sets: out_port: the
 * host's port at its own leaf, else TE's uplink for the host pair, else the
 * group member ECMP / resilient / flowlet / pinning picks. Next: link state,
 * or drop no_route (no member up).
 */
static bool stage_nexthop(struct pipe *x)
{
	struct dp_switch *s = x->s;
	struct dp_fabric *f = x->f;
	const struct topo_host *h = &f->topo->hosts[x->host];

	if (h->leaf == s->idx) {
		x->out_port = h->leaf_port;
		return false;
	}
	int te_port = f->te && s->cfg->role == TOPO_ROLE_RTSW ? te_uplink(f, s, x->p, (uint32_t)x->host) : -1;
	if (te_port >= 0) {
		x->out_port = te_port;
		return false;
	}
	struct dp_group *g = &s->group[f->sw[h->leaf].cfg->leaf_index];
	int mbr = choose_member(s, g, x->p, h, x->now);
	if (mbr < 0)
		return verdict_drop(x, DP_DROP_NO_ROUTE);
	x->out_port = g->port[mbr];
	return false;
}

/*
 * The switch's program (an IPv4 frame, on a switch with a .spec: dp_swx.h):
 * in place of TTL, route lookup and next hop. Reads: the frame, whatever
 * the program reads. Sets: out_port. Next: link state, or drop p4 (the
 * program dropped it, or named a port the switch does not have).
 */
static bool stage_prog(struct pipe *x)
{
	uint8_t dscp = x->p->dscp;
	int port = x->s->prog->decide(x->s->prog, x->fr->d, x->fr->len, x->p, x->in_port, x->now, &dscp);

	if (port < 0 || port >= x->s->cfg->n_ports)
		return verdict_drop(x, DP_DROP_PROG);
	x->out_port = port;
	if (dscp != x->p->dscp) { /* the program's DSCP: in the frame, and the queue follows it */
		uint8_t *ip = x->fr->d + x->p->l3_off;
		uint16_t old = rl_get_be16(ip);

		ip[1] = (uint8_t)(dscp << 2 | (ip[1] & 3)); /* (the ECN bits stay the MMU's) */
		csum_replace16(ip + IPV4_CSUM_OFF, old, rl_get_be16(ip));
		x->p->dscp = dscp;
	}
	return false;
}

/* The forwarding decision proper: the program's, or TTL, route lookup and next hop. */
static bool stage_decide(struct pipe *x)
{
	if (x->s->prog && x->p->ip_version == 4) /* (IPv6 stays C's: DPDK 22.11 has no movh) */
		return stage_prog(x);
	return stage_ttl(x) || stage_route(x) || stage_nexthop(x);
}

/* Link state. Reads: the egress link. Sets: oc. Next: PFC watchdog, or drop link_down. */
static bool stage_link(struct pipe *x)
{
	x->oc = x->s->out[x->out_port];
	if (!x->oc->up)
		return verdict_drop(x, DP_DROP_LINK_DOWN);
	return false;
}

/*
 * PFC watchdog. Reads: DSCP, the egress queue's storm state. Sets: prio
 * (the egress queue). Next: admission, or drop pfc_storm (the queue is in a
 * storm with the drop action; counted by the watchdog too).
 */
static bool stage_watchdog(struct pipe *x)
{
	x->prio = x->f->topo->qos.dscp_prio[x->p->dscp];
	if (x->oc->wd_on && pfc_watchdog_drops(&x->oc->wd, x->prio)) {
		pfc_watchdog_count_drop(&x->oc->wd, x->prio, 1);
		return verdict_drop(x, DP_DROP_PFC_STORM);
	}
	return false;
}

/*
 * Admission. Reads: length, ports, priority, ECN capability. Sets: the MMU
 * charges the frame (or refuses it); mmu_flags: XOFF owed upstream on
 * in_port (the caller sends it, forwarded or dropped), ECN CE to mark.
 * Next: rewrite, or drop buffer.
 */
static bool stage_admit(struct pipe *x)
{
	struct pfc_mmu_pkt mp = {.len = x->fr->len, .in_port = x->in_port,
				 .out_port = (uint16_t)x->out_port, .prio = x->prio, .ect = x->p->ecn != 0};
	unsigned flags = 0;
	enum pfc_mmu_verdict v = pfc_mmu_admit(x->s->mmu, &mp, x->now, &flags);

	x->v->mmu_flags = flags;
	x->v->ect = mp.ect;
	if (v != PFC_MMU_ADMIT)
		return verdict_drop(x, DP_DROP_MMU);
	return false;
}

/*
 * Decrement TTL / hop limit and maybe mark CE. IPv4 keeps its header checksum
 * right incrementally; IPv6 has none. (The RoCE ICRC masks all of these.)
 */
static void rewrite_ttl_ecn(uint8_t *ip, uint8_t version, bool ce)
{
	if (version == 6) {
		ip[IPV6_HOPS_OFF]--;
		if (ce)
			ip[1] |= IPV6_ECN_CE;
		return;
	}
	uint16_t old = rl_get_be16(ip + IPV4_TTL_OFF); /* TTL and protocol */
	ip[IPV4_TTL_OFF]--;
	csum_replace16(ip + IPV4_CSUM_OFF, old, rl_get_be16(ip + IPV4_TTL_OFF));
	if (ce) {
		old = rl_get_be16(ip);
		ip[1] |= ECN_CE;
		csum_replace16(ip + IPV4_CSUM_OFF, old, rl_get_be16(ip));
	}
}

void dp_frame_pay_owed(uint8_t *d, const struct rl_pkt *p, unsigned ttl_owed, const struct dp_chan *c)
{
	for (unsigned i = 0; i < ttl_owed; i++)
		rewrite_ttl_ecn(d + p->l3_off, p->ip_version, false);
	if (c) {
		memcpy(d + ETH_DST_OFF, c->dst_mac, MAC_LEN);
		memcpy(d + ETH_SRC_OFF, c->src_mac, MAC_LEN);
	}
}

void dp_frame_settle_owed(const struct dp_fabric *f, uint8_t *d, const struct rl_pkt *p,
			  uint8_t *ttl_owed, uint32_t *mac_chan)
{
	if (*mac_chan == 0)
		return;
	dp_frame_pay_owed(d, p, *ttl_owed, &f->chans[*mac_chan - 1]);
	*ttl_owed = 0;
	*mac_chan = 0;
}

/*
 * Write into the frame what earlier hops owed it (fr->ttl_owed: their TTL /
 * hop limit decrements and the last one's MACs), for a stage that reads
 * those bytes or writes over them: a reply built in place, a CE mark.
 */
static void pipe_settle(struct pipe *x)
{
	if (x->fr->ttl_owed)
		dp_frame_settle_owed(x->f, x->fr->d, x->p, x->fr->ttl_owed, x->fr->mac_chan_owed);
}

/*
 * Rewrite. Reads: the admission's ECN mark, the egress channel's MACs.
 * Sets: TTL / hop limit - 1, CE when marked (the parse p follows, so the
 * next hop needs none), ecn_marked, destination and source MAC: in the
 * frame, or without a mark as owed (fr->ttl_owed: the frame's lines stay
 * untouched; a mark first pays what earlier hops owed). Next: forward (the
 * caller records the flow and queues the frame).
 */
static bool stage_rewrite(struct pipe *x)
{
	bool ce = x->v->mmu_flags & PFC_MMU_F_ECN_CE;
	struct dp_frame *fr = x->fr;

	if (fr->ttl_owed && !ce && *fr->ttl_owed < UINT8_MAX) {
		(*fr->ttl_owed)++;
		*fr->mac_chan_owed = (uint32_t)(x->oc - x->f->chans) + 1;
	} else {
		pipe_settle(x);
		rewrite_ttl_ecn(fr->d + x->p->l3_off, x->p->ip_version, ce);
		dp_frame_pay_owed(fr->d, x->p, 0, x->oc);
	}
	x->p->ttl--;
	if (ce)
		x->p->ecn = ECN_CE;
	x->s->ecn_marked += ce;
	x->v->kind = DP_VERDICT_FORWARD;
	x->v->out_port = (uint16_t)x->out_port;
	x->v->prio = x->prio;
	x->v->len = x->fr->len;
	return true;
}

/* The chain (static: dp_switch.c, which includes this file, inlines it). */
static enum dp_verdict_kind pipeline_decide(struct dp_switch *s, uint16_t in_port, struct dp_frame *fr,
					    struct rl_pkt *p, int parse_st, uint64_t now_ns,
					    struct dp_verdict *v)
{
	struct pipe x = {.s = s, .f = s->out[in_port]->fab, .in_port = in_port, .fr = fr, .p = p,
			 .now = now_ns, .v = v};

	v->mmu_flags = 0;
	/* parse check: not IP -> the L2 stages; an error -> drop; IP -> on */
	if (parse_st == RL_PARSE_NOT_IP)
		stage_not_ip(&x);
	else if (parse_st != RL_PARSE_OK)
		stage_parse_error(&x, parse_st);
	else if (!stage_ipv6_ctl(&x) && !stage_echo(&x) && !stage_decide(&x) && !stage_link(&x) &&
		 !stage_watchdog(&x) && !stage_admit(&x))
		stage_rewrite(&x);
	return v->kind;
}

enum dp_verdict_kind dp_pipeline_decide(struct dp_switch *s, uint16_t in_port, struct dp_frame *fr,
					struct rl_pkt *p, int parse_st, uint64_t now_ns,
					struct dp_verdict *v)
{
	return pipeline_decide(s, in_port, fr, p, parse_st, now_ns, v);
}
