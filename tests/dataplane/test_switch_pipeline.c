/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The switch's forwarding decision (dataplane/fabric/dp_pipeline.h), stage by
 * stage, on frames built here in plain arrays and a fabric state built from
 * a topology (dp_fabric_build.h): no EAL, no mbufs. Parse errors, PFC
 * frames, proxy ARP and ND, echo to the gateway, TTL, routing, ECMP /
 * pinning / TE choice, link state, the PFC watchdog, admission (a full buffer refuses with
 * DP_DROP_MMU after asking for XOFF), ECN marking and the rewrite. And the
 * tables report timers the engine could not add.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dp_engine.h"
#include "dp_fabric_build.h"
#include "dp_pipeline.h"
#include "dp_stats.h"
#include "pfc_frame.h"
#include "rl_bytes.h"
#include "rl_parse.h"

#define ROOM 2048          /* bytes a test frame's buffer holds */
#define NOW 1000000u       /* ns: any time; the decision only compares times */
#define UDP_DPORT 5000     /* not RoCEv2's 4791: a plain UDP payload */
#define DSCP_LOSSY 0       /* priority 0 */
#define DSCP_LOSSLESS 26   /* priority 3, lossless below */
#define NA_FRAME_LEN 86    /* Ethernet + IPv6 + NA with its link-layer option */
#define MAX_FRAMES 100000  /* bound on the loops that fill a buffer */

/* 2 leaves x 2 spines, 2 hosts per leaf; priority 3 lossless; lb set by the test. */
#define TOPO_YAML(LB, ECN)                                                                 \
	"name: pipe\n"                                                                     \
	"defaults:\n"                                                                      \
	"  switch: {lb: " LB "}\n"                                                         \
	"switches:\n"                                                                      \
	"  - {name: leaf0, role: rtsw}\n"                                                  \
	"  - {name: leaf1, role: rtsw}\n"                                                  \
	"  - {name: spine0, role: ctsw}\n"                                                 \
	"  - {name: spine1, role: ctsw}\n"                                                 \
	"hosts:\n"                                                                         \
	"  - {name: h0, leaf: leaf0}\n"                                                    \
	"  - {name: h1, leaf: leaf0}\n"                                                    \
	"  - {name: h2, leaf: leaf1}\n"                                                    \
	"  - {name: h3, leaf: leaf1}\n"                                                    \
	"links:\n"                                                                         \
	"  - [leaf0, spine0]\n"                                                            \
	"  - [leaf0, spine1]\n"                                                            \
	"  - [leaf1, spine0]\n"                                                            \
	"  - [leaf1, spine1]\n"                                                            \
	"qos:\n"                                                                           \
	"  lossless: [3]\n"                                                                \
	"  ecn: " ECN "\n"

static const char yaml_ecmp[] = TOPO_YAML("ecmp", "{enabled: false}");
static const char yaml_pinning[] = TOPO_YAML("pinning", "{enabled: false}");
static const char yaml_ecn[] = TOPO_YAML("ecmp", "{enabled: true, kmin: 1KB, kmax: 2KB, pmax: 1.0}");

struct fix {
	struct topo *t;
	struct dp_fabric f;
	struct dp_te te;
	bool te_on;
};

struct frame {
	uint8_t b[ROOM];
	uint32_t len;
	uint32_t room;
};

static int setup_yaml_wd(void **state, const char *yaml, const struct pfc_watchdog_config *wd)
{
	struct fix *x = calloc(1, sizeof(*x));
	char err[256];

	assert_non_null(x);
	if (topo_load_string(yaml, strlen(yaml), "pipe.yaml", &x->t, err, sizeof(err)) != 0)
		fail_msg("topology: %s", err);
	x->f.topo = x->t;
	x->f.opt.watchdog = wd;
	if (dp_fabric_build(&x->f, err, sizeof(err)) != 0)
		fail_msg("build: %s", err);
	*state = x;
	return 0;
}

static int setup_yaml(void **state, const char *yaml)
{
	return setup_yaml_wd(state, yaml, NULL);
}

/* PFC watchdog on switch egress: storm after 1 ms paused with packets waiting, then drop. */
static int setup_watchdog(void **state)
{
	static struct pfc_watchdog_config wd = {.detect_ns = 1000000, .restore_ns = 1000000,
						.poll_ns = 100000, .action = PFC_WD_DROP};
	return setup_yaml_wd(state, yaml_ecmp, &wd);
}

static int setup_ecmp(void **state)
{
	return setup_yaml(state, yaml_ecmp);
}

static int setup_pinning(void **state)
{
	return setup_yaml(state, yaml_pinning);
}

static int setup_ecn(void **state)
{
	return setup_yaml(state, yaml_ecn);
}

static int teardown(void **state)
{
	struct fix *x = *state;

	if (x->te_on)
		dp_te_free(&x->te);
	dp_fabric_build_free(&x->f);
	topo_free(x->t);
	free(x);
	return 0;
}

static struct dp_switch *SW(struct fix *x, const char *name)
{
	int i = topo_switch_by_name(x->t, name);

	if (i < 0)
		fail_msg("no switch %s", name);
	return &x->f.sw[i];
}

static const struct topo_host *HOST(struct fix *x, const char *name)
{
	int i = topo_host_by_name(x->t, name);

	if (i < 0)
		fail_msg("no host %s", name);
	return &x->t->hosts[i];
}

/* The port of s facing node `peer` (a host or a switch name). */
static uint16_t PORT(struct fix *x, struct dp_switch *s, const char *peer)
{
	for (uint16_t p = 0; p < s->cfg->n_ports; p++)
		if (strcmp(topo_node_name(x->t, s->out[p]->to), peer) == 0)
			return p;
	fail_msg("%s has no port to %s", s->cfg->name, peer);
	return 0;
}

/* Parse fr and run the decision of s for it, arriving on in_port. */
static enum dp_verdict_kind decide(struct dp_switch *s, uint16_t in_port, struct frame *fr,
				   struct rl_pkt *p, struct dp_verdict *v)
{
	int st = rl_parse(fr->b, fr->len, p);
	struct dp_frame df = {.d = fr->b, .len = fr->len, .room = fr->room ? fr->room : ROOM};
	enum dp_verdict_kind k = dp_pipeline_decide(s, in_port, &df, p, st, NOW, v);

	if (k == DP_VERDICT_REPLY)
		fr->len = v->len;
	return k;
}

/* ---- frames ---- */

/* One's complement sum of b, folded, not inverted. */
static uint16_t ones_sum(const uint8_t *b, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static void eth(struct frame *fr, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
	memset(fr, 0, sizeof(*fr));
	memcpy(fr->b, dst, 6);
	memcpy(fr->b + 6, src, 6);
	rl_put_be16(fr->b + 12, type);
	fr->len = 14;
}

/* IPv4 from host `from` to dst with a UDP (proto 17) or ICMP (1) payload of plen bytes. */
static uint8_t *ipv4(struct frame *fr, const struct topo_host *from, uint32_t dst, uint8_t proto,
		     uint8_t ttl, uint8_t tos, uint32_t plen)
{
	eth(fr, from->gw_mac, from->mac, RL_ETHERTYPE_IPV4);
	uint8_t *ip = fr->b + 14;
	ip[0] = 0x45;
	ip[1] = tos;
	rl_put_be16(ip + 2, (uint16_t)(20 + plen));
	ip[8] = ttl;
	ip[9] = proto;
	rl_put_be32(ip + 12, from->ipv4);
	rl_put_be32(ip + 16, dst);
	rl_put_be16(ip + 10, (uint16_t)~ones_sum(ip, 20, 0));
	fr->len = 14 + 20 + plen;
	return ip + 20;
}

static void udp4(struct fix *x, struct frame *fr, const char *from, const char *to, uint16_t sport,
		 uint8_t ttl, uint8_t tos)
{
	uint8_t *u = ipv4(fr, HOST(x, from), HOST(x, to)->ipv4, 17, ttl, tos, 64);
	rl_put_be16(u, sport);
	rl_put_be16(u + 2, UDP_DPORT);
	rl_put_be16(u + 4, 64);
}

static uint8_t *ipv6(struct frame *fr, const struct topo_host *from, const uint8_t *src,
		     const uint8_t *dst, uint8_t next, uint8_t hops, uint32_t plen)
{
	eth(fr, from->gw_mac, from->mac, RL_ETHERTYPE_IPV6);
	uint8_t *ip = fr->b + 14;
	ip[0] = 0x60;
	rl_put_be16(ip + 4, (uint16_t)plen);
	ip[6] = next;
	ip[7] = hops;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	fr->len = 14 + 40 + plen;
	return ip + 40;
}

/* ICMPv6 checksum over the pseudo-header and the message: 0xffff when right. */
static uint16_t icmp6_check(const uint8_t *ip)
{
	uint32_t plen = rl_get_be16(ip + 4);
	return ones_sum(ip + 40, plen, ones_sum(ip + 8, 32, 0) + plen + 58);
}

static void arp_request(struct fix *x, struct frame *fr, const char *from, uint32_t target)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	const struct topo_host *h = HOST(x, from);

	eth(fr, bcast, h->mac, RL_ETHERTYPE_ARP);
	uint8_t *a = fr->b + 14;
	rl_put_be16(a, 1);          /* Ethernet */
	rl_put_be16(a + 2, 0x0800); /* IPv4 */
	a[4] = 6;
	a[5] = 4;
	rl_put_be16(a + 6, 1);      /* request */
	memcpy(a + 8, h->mac, 6);
	rl_put_be32(a + 14, h->ipv4);
	rl_put_be32(a + 24, target);
	fr->len = 14 + 28;
}

static void neighbour_solicit(struct fix *x, struct frame *fr, const char *from, const uint8_t *src,
			      const uint8_t *target)
{
	uint8_t snm[16] = {0xff, 0x02, [11] = 1, [12] = 0xff};

	memcpy(snm + 13, target + 13, 3);
	uint8_t *icmp = ipv6(fr, HOST(x, from), src, snm, 58, 255, 24);
	icmp[0] = 135;
	memcpy(icmp + 8, target, 16);
	rl_put_be16(icmp + 2, (uint16_t)~icmp6_check(fr->b + 14));
}

/* ---- parse check and the L2 stages ---- */

static void test_parse_errors(void **state)
{
	struct fix *x = *state;
	struct dp_switch *leaf0 = SW(x, "leaf0");
	uint16_t in = PORT(x, leaf0, "h0");
	struct frame fr;
	struct rl_pkt p;
	struct dp_verdict v;

	udp4(x, &fr, "h0", "h1", 1000, 64, 0);
	fr.len = 10; /* shorter than an Ethernet header */
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_DROP);
	assert_int_equal(v.drop, DP_DROP_PARSE);
	assert_int_equal(leaf0->parse_err[-RL_PARSE_ETH_TRUNC], 1);

	udp4(x, &fr, "h0", "h1", 1000, 64, 0);
	fr.b[14] = 0x55; /* IPv4 with version 5 */
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_DROP);
	assert_int_equal(v.drop, DP_DROP_PARSE);
	assert_int_equal(leaf0->parse_err[-RL_PARSE_IPV4_BAD_VERSION], 1);
	assert_int_equal(leaf0->drops[DP_DROP_PARSE], 2);

	/* a status beyond the parser's enum is counted in slot 0, not out of bounds */
	struct dp_frame df = {.d = fr.b, .len = fr.len, .room = ROOM};
	assert_int_equal(dp_pipeline_decide(leaf0, in, &df, &p, -(DP_PARSE_ERR_SLOTS + 5), NOW, &v),
			 DP_VERDICT_DROP);
	assert_int_equal(leaf0->parse_err[0], 1);

	eth(&fr, HOST(x, "h0")->gw_mac, HOST(x, "h0")->mac, 0x88cc); /* LLDP: not IP, not ours */
	fr.len = 60;
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_DROP);
	assert_int_equal(v.drop, DP_DROP_NOT_IP);
	assert_int_equal(leaf0->drops[DP_DROP_NOT_IP], 1);
}

static void test_pfc_frame(void **state)
{
	struct fix *x = *state;
	struct dp_switch *leaf0 = SW(x, "leaf0");
	uint16_t in = PORT(x, leaf0, "h0");
	struct pfc_frame pf;
	struct frame fr = {.len = PFC_FRAME_LEN};
	struct rl_pkt p;
	struct dp_verdict v;

	pfc_frame_init(&pf, HOST(x, "h0")->mac);
	pfc_frame_set(&pf, 3, 0xffff);
	assert_int_equal(pfc_frame_encode(&pf, fr.b, sizeof(fr.b)), PFC_FRAME_LEN);
	assert_int_equal(pfc_pause_mask(&leaf0->out[in]->pause, NOW), 0);
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_CONSUME);
	assert_int_equal(leaf0->pfc_rx, 1);
	/* the port toward h0 is paused on priority 3 only; other ports are not */
	assert_int_equal(pfc_pause_mask(&leaf0->out[in]->pause, NOW), 1u << 3);
	assert_int_equal(pfc_pause_mask(&leaf0->out[PORT(x, leaf0, "h1")]->pause, NOW), 0);

	fr.b[15] = 0x02; /* MAC control, but not the PFC opcode */
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_DROP);
	assert_int_equal(v.drop, DP_DROP_PFC_BAD);
	assert_int_equal(leaf0->pfc_rx, 1);
}

static void test_arp(void **state)
{
	struct fix *x = *state;
	struct dp_switch *leaf0 = SW(x, "leaf0");
	uint16_t in = PORT(x, leaf0, "h0");
	const uint8_t *port_mac = leaf0->out[in]->src_mac;
	const struct topo_host *h0 = HOST(x, "h0"), *h1 = HOST(x, "h1");
	struct frame fr;
	struct rl_pkt p;
	struct dp_verdict v;

	arp_request(x, &fr, "h0", h1->ipv4); /* proxy ARP: a neighbour answered by the leaf */
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_REPLY);
	assert_int_equal(v.len, 42);
	const uint8_t *a = fr.b + 14;
	assert_memory_equal(fr.b, h0->mac, 6);
	assert_memory_equal(fr.b + 6, port_mac, 6);
	assert_int_equal(rl_get_be16(a + 6), 2);
	assert_memory_equal(a + 8, port_mac, 6);
	assert_int_equal(rl_get_be32(a + 14), h1->ipv4);
	assert_memory_equal(a + 18, h0->mac, 6);
	assert_int_equal(rl_get_be32(a + 24), h0->ipv4);
	assert_int_equal(leaf0->arp_replies, 1);

	arp_request(x, &fr, "h0", leaf0->cfg->gw_ipv4); /* the gateway */
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_REPLY);
	assert_int_equal(rl_get_be32(fr.b + 14 + 14), leaf0->cfg->gw_ipv4);

	arp_request(x, &fr, "h0", HOST(x, "h2")->ipv4); /* another leaf's subnet */
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_DROP);
	assert_int_equal(v.drop, DP_DROP_NOT_IP);
	arp_request(x, &fr, "h0", h0->ipv4); /* gratuitous */
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_DROP);
	arp_request(x, &fr, "h0", h1->ipv4); /* a spine answers no ARP */
	assert_int_equal(decide(SW(x, "spine0"), 0, &fr, &p, &v), DP_VERDICT_DROP);
	assert_int_equal(v.drop, DP_DROP_NOT_IP);
	assert_int_equal(leaf0->arp_replies, 2);
}

/* ---- IPv6 control, echo ---- */

static void test_neighbour_discovery(void **state)
{
	struct fix *x = *state;
	struct dp_switch *leaf0 = SW(x, "leaf0");
	uint16_t in = PORT(x, leaf0, "h0");
	const uint8_t *port_mac = leaf0->out[in]->src_mac;
	const struct topo_host *h0 = HOST(x, "h0"), *h1 = HOST(x, "h1");
	static const uint8_t unspec[16];
	struct frame fr;
	struct rl_pkt p;
	struct dp_verdict v;

	neighbour_solicit(x, &fr, "h0", h0->ipv6, h1->ipv6);
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_REPLY);
	assert_int_equal(v.len, NA_FRAME_LEN);
	const uint8_t *ip = fr.b + 14, *na = ip + 40;
	assert_memory_equal(fr.b, h0->mac, 6);
	assert_memory_equal(fr.b + 6, port_mac, 6);
	assert_int_equal(ip[7], 255);
	assert_memory_equal(ip + 8, h1->ipv6, 16);
	assert_memory_equal(ip + 24, h0->ipv6, 16);
	assert_int_equal(na[0], 136);
	assert_int_equal(na[4], 0x60); /* solicited, override; not a router */
	assert_memory_equal(na + 8, h1->ipv6, 16);
	assert_int_equal(na[24], 2);
	assert_memory_equal(na + 26, port_mac, 6);
	assert_int_equal(icmp6_check(ip), 0xffff);
	assert_int_equal(leaf0->nd_replies, 1);

	neighbour_solicit(x, &fr, "h0", h0->ipv6, leaf0->cfg->gw_ipv6);
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_REPLY);
	assert_int_equal(fr.b[14 + 40 + 4], 0xe0); /* the gateway is a router */

	neighbour_solicit(x, &fr, "h0", unspec, h1->ipv6); /* duplicate address detection */
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_DROP);
	assert_int_equal(v.drop, DP_DROP_IPV6_CTL);

	neighbour_solicit(x, &fr, "h0", h0->ipv6, h0->ipv6); /* its own address: no answer */
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_DROP);
	assert_int_equal(v.drop, DP_DROP_IPV6_CTL);

	neighbour_solicit(x, &fr, "h0", h0->ipv6, h1->ipv6);
	fr.room = fr.len; /* no room for the longer advertisement */
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_DROP);
	assert_int_equal(v.drop, DP_DROP_NO_MBUF);

	neighbour_solicit(x, &fr, "h0", h0->ipv6, h1->ipv6);
	fr.b[14 + 40] = 133; /* a router solicitation ends at the leaf unanswered */
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_DROP);
	assert_int_equal(v.drop, DP_DROP_IPV6_CTL);
	assert_int_equal(leaf0->nd_replies, 2);
	assert_int_equal(leaf0->drops[DP_DROP_IPV6_CTL], 3);
}

static void test_echo_to_gateway(void **state)
{
	struct fix *x = *state;
	struct dp_switch *leaf0 = SW(x, "leaf0");
	uint16_t in = PORT(x, leaf0, "h0");
	const struct topo_host *h0 = HOST(x, "h0");
	struct frame fr;
	struct rl_pkt p;
	struct dp_verdict v;

	uint8_t *icmp = ipv4(&fr, h0, leaf0->cfg->gw_ipv4, 1, 7, 0, 16);
	icmp[0] = 8;
	rl_put_be16(icmp + 4, 0x1234);
	rl_put_be16(icmp + 2, (uint16_t)~ones_sum(icmp, 16, 0));
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_REPLY);
	const uint8_t *ip = fr.b + 14;
	assert_memory_equal(fr.b, h0->mac, 6);
	assert_int_equal(icmp[0], 0);
	assert_int_equal(ones_sum(icmp, 16, 0), 0xffff);
	assert_int_equal(ip[8], 64); /* a fresh TTL */
	assert_int_equal(ones_sum(ip, 20, 0), 0xffff);
	assert_int_equal(rl_get_be32(ip + 12), leaf0->cfg->gw_ipv4);
	assert_int_equal(rl_get_be32(ip + 16), h0->ipv4);

	icmp = ipv6(&fr, h0, h0->ipv6, leaf0->cfg->gw_ipv6, 58, 9, 16);
	icmp[0] = 128;
	rl_put_be16(icmp + 2, (uint16_t)~icmp6_check(fr.b + 14));
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_REPLY);
	assert_int_equal(icmp[0], 129);
	assert_int_equal(icmp6_check(fr.b + 14), 0xffff);
	assert_int_equal(fr.b[14 + 7], 64);
	assert_int_equal(leaf0->echo_replies, 2);

	/* an echo request to another host is routed, not answered */
	ipv4(&fr, h0, HOST(x, "h2")->ipv4, 1, 7, 0, 16)[0] = 8;
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_FORWARD);
}

/* ---- routing ---- */

static void test_ttl(void **state)
{
	struct fix *x = *state;
	struct dp_switch *leaf0 = SW(x, "leaf0");
	uint16_t in = PORT(x, leaf0, "h0");
	struct frame fr;
	struct rl_pkt p;
	struct dp_verdict v;

	udp4(x, &fr, "h0", "h1", 1000, 1, 0);
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_DROP);
	assert_int_equal(v.drop, DP_DROP_TTL);
	udp4(x, &fr, "h0", "h1", 1000, 2, 0);
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_FORWARD);
	assert_int_equal(fr.b[14 + 8], 1);
	assert_int_equal(p.ttl, 1);
	assert_int_equal(leaf0->drops[DP_DROP_TTL], 1);
}

static void test_route_lookup_and_rewrite(void **state)
{
	struct fix *x = *state;
	struct dp_switch *leaf0 = SW(x, "leaf0");
	uint16_t in = PORT(x, leaf0, "h0"), out = PORT(x, leaf0, "h1");
	struct frame fr;
	struct rl_pkt p;
	struct dp_verdict v;

	udp4(x, &fr, "h0", "h1", 1000, 64, DSCP_LOSSLESS << 2 | 1);
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_FORWARD);
	assert_int_equal(v.out_port, out); /* a host under this leaf: its own port */
	assert_int_equal(v.prio, 3);
	assert_int_equal(v.ect, 1);
	assert_int_equal(v.len, fr.len);
	/* rewrite: MACs of the egress link, TTL - 1 with the checksum still right */
	assert_memory_equal(fr.b, leaf0->out[out]->dst_mac, 6);
	assert_memory_equal(fr.b + 6, leaf0->out[out]->src_mac, 6);
	assert_memory_equal(fr.b, HOST(x, "h1")->mac, 6);
	assert_int_equal(fr.b[14 + 8], 63);
	assert_int_equal(ones_sum(fr.b + 14, 20, 0), 0xffff);
	assert_int_equal(p.ttl, 63);

	/* IPv6: the hop limit */
	uint8_t *u = ipv6(&fr, HOST(x, "h0"), HOST(x, "h0")->ipv6, HOST(x, "h1")->ipv6, 17, 5, 16);
	rl_put_be16(u + 2, UDP_DPORT);
	rl_put_be16(u + 4, 16);
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_FORWARD);
	assert_int_equal(v.out_port, out);
	assert_int_equal(fr.b[14 + 7], 4);

	/* an address no host has */
	rl_put_be16(ipv4(&fr, HOST(x, "h0"), 0x0a090909, 17, 64, 0, 8) + 4, 8); /* 10.9.9.9, UDP */
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_DROP);
	assert_int_equal(v.drop, DP_DROP_NO_ROUTE);

	/* link state: the host's link is down */
	leaf0->out[out]->up = false;
	udp4(x, &fr, "h0", "h1", 1000, 64, 0);
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_DROP);
	assert_int_equal(v.drop, DP_DROP_LINK_DOWN);
	assert_int_equal(leaf0->drops[DP_DROP_LINK_DOWN], 1);
	leaf0->out[out]->up = true;
}

/* A stand-in switch program: port 'port', and DSCP 'dscp' (or the frame's when negative). */
struct fake_prog {
	struct dp_prog pg;
	int port, dscp;
	uint8_t seen_dscp;
};

static int fake_decide(struct dp_prog *pg, const uint8_t *d, uint32_t len, const struct rl_pkt *p,
		       uint16_t in_port, uint64_t now_ns, uint8_t *dscp)
{
	struct fake_prog *f = (struct fake_prog *)pg;

	(void)d, (void)len, (void)p, (void)in_port, (void)now_ns;
	f->seen_dscp = *dscp;
	if (f->dscp >= 0)
		*dscp = (uint8_t)f->dscp;
	return f->port;
}

/* A program's DSCP: written into the frame (ECN kept, checksum mended), and the queue follows it. */
static void test_program_dscp(void **state)
{
	struct fix *x = *state;
	struct dp_switch *leaf0 = SW(x, "leaf0");
	uint16_t in = PORT(x, leaf0, "h0"), out = PORT(x, leaf0, "h1");
	struct fake_prog f = {.pg = {.decide = fake_decide}, .port = out, .dscp = DSCP_LOSSLESS};
	struct frame fr;
	struct rl_pkt p;
	struct dp_verdict v;

	leaf0->prog = &f.pg;
	udp4(x, &fr, "h0", "h1", 1000, 64, 0 << 2 | 1); /* DSCP 0 (priority 0), ECT(1) */
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_FORWARD);
	assert_int_equal(f.seen_dscp, 0);          /* the program is handed the frame's DSCP */
	assert_int_equal(v.out_port, out);
	assert_int_equal(v.prio, 3);               /* qos: DSCP 26 -> priority 3 */
	assert_int_equal(fr.b[14 + 1], 26 << 2 | 1); /* the DSCP rewritten, the ECN bits kept */
	assert_int_equal(ones_sum(fr.b + 14, 20, 0), 0xffff);
	assert_int_equal(p.dscp, 26);

	/* a program that leaves the DSCP: the frame's own priority */
	f.dscp = -1;
	udp4(x, &fr, "h0", "h1", 1000, 64, DSCP_LOSSLESS << 2);
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_FORWARD);
	assert_int_equal(v.prio, 3);
	assert_int_equal(fr.b[14 + 1], 26 << 2);
	f.dscp = 0;
	udp4(x, &fr, "h0", "h1", 1000, 64, DSCP_LOSSLESS << 2);
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_FORWARD);
	assert_int_equal(v.prio, 0);
	assert_int_equal(ones_sum(fr.b + 14, 20, 0), 0xffff);
	leaf0->prog = NULL;
}

/* Ports leaf0 sends flows h0 -> h2 on, for n source ports: a bit per port. */
static uint64_t ports_used(struct fix *x, unsigned n)
{
	struct dp_switch *leaf0 = SW(x, "leaf0");
	uint16_t in = PORT(x, leaf0, "h0");
	uint64_t used = 0;
	struct frame fr;
	struct rl_pkt p;
	struct dp_verdict v;

	for (unsigned i = 0; i < n; i++) {
		udp4(x, &fr, "h0", "h2", (uint16_t)(1000 + i), 64, 0);
		assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_FORWARD);
		used |= 1ull << v.out_port;
		/* the same flow again takes the same port */
		udp4(x, &fr, "h0", "h2", (uint16_t)(1000 + i), 64, 0);
		uint16_t first = v.out_port;
		assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_FORWARD);
		assert_int_equal(v.out_port, first);
	}
	return used;
}

static void test_ecmp_choice(void **state)
{
	struct fix *x = *state;
	struct dp_switch *leaf0 = SW(x, "leaf0");
	uint64_t up0 = 1ull << PORT(x, leaf0, "spine0"), up1 = 1ull << PORT(x, leaf0, "spine1");

	/* 32 flows spread over both uplinks, and nowhere else */
	assert_int_equal(ports_used(x, 32), up0 | up1);

	/* leaf0-spine0 fails: the group shrinks to spine1 */
	uint32_t l = leaf0->cfg->ports[PORT(x, leaf0, "spine0")].link;
	x->f.chans[2 * l].up = x->f.chans[2 * l + 1].up = false;
	topo_route_set_link(x->f.routes, l, false);
	assert_int_equal(topo_route_compute(x->f.routes), 0);
	dp_fabric_sync_groups(&x->f, false);
	assert_int_equal(ports_used(x, 32), up1);
	assert_true(x->f.route_changes > 0);

	/* no uplink left: no route */
	uint32_t l1 = leaf0->cfg->ports[PORT(x, leaf0, "spine1")].link;
	x->f.chans[2 * l1].up = x->f.chans[2 * l1 + 1].up = false;
	topo_route_set_link(x->f.routes, l1, false);
	assert_int_equal(topo_route_compute(x->f.routes), 0);
	dp_fabric_sync_groups(&x->f, false);
	struct frame fr;
	struct rl_pkt p;
	struct dp_verdict v;
	udp4(x, &fr, "h0", "h2", 1000, 64, 0);
	assert_int_equal(decide(leaf0, PORT(x, leaf0, "h0"), &fr, &p, &v), DP_VERDICT_DROP);
	assert_int_equal(v.drop, DP_DROP_NO_ROUTE);
}

static void test_pinning_choice(void **state)
{
	struct fix *x = *state;

	/* path pinning: every flow to one host takes one uplink, whatever its ports */
	uint64_t used = ports_used(x, 32);
	assert_int_equal(__builtin_popcountll(used), 1);
}

static void test_te_choice(void **state)
{
	struct fix *x = *state;
	struct dp_switch *leaf0 = SW(x, "leaf0");
	const uint32_t pairs[2][2] = {{0, 2}, {1, 3}}; /* h0 > h2, h1 > h3 */
	char err[128];
	struct frame fr;
	struct rl_pkt p;
	struct dp_verdict v;

	x->f.te = &x->te;
	assert_int_equal(dp_te_create(&x->te, &x->f, pairs, 2, err, sizeof(err)), 0);
	x->te_on = true;
	int up0 = dp_te_lookup(&x->te, 0, 2), up1 = dp_te_lookup(&x->te, 1, 3);
	assert_true(up0 >= 0 && up1 >= 0);
	assert_int_not_equal(up0, up1); /* two line-rate flows on the two spines */
	for (uint16_t sport = 1000; sport < 1016; sport++) {
		udp4(x, &fr, "h0", "h2", sport, 64, 0);
		assert_int_equal(decide(leaf0, PORT(x, leaf0, "h0"), &fr, &p, &v), DP_VERDICT_FORWARD);
		assert_int_equal(v.out_port, up0);
		udp4(x, &fr, "h1", "h3", sport, 64, 0);
		assert_int_equal(decide(leaf0, PORT(x, leaf0, "h1"), &fr, &p, &v), DP_VERDICT_FORWARD);
		assert_int_equal(v.out_port, up1);
	}
	assert_int_equal(x->te.hits, 32);
	/* a pair TE did not place falls back to ECMP (no hit counted) */
	udp4(x, &fr, "h0", "h3", 1000, 64, 0);
	assert_int_equal(decide(leaf0, PORT(x, leaf0, "h0"), &fr, &p, &v), DP_VERDICT_FORWARD);
	assert_int_equal(x->te.hits, 32);
	dp_te_free(&x->te); /* dp_te_create_demand: largest demand first, ties in list order */
	const uint32_t four[4][2] = {{0, 2}, {1, 3}, {0, 3}, {1, 2}}, want[4] = {2, 3, 0, 1};
	const double demand[4] = {1e9, 1e9, 100e9, 50e9}, bad[4] = {1e9, 0, 1e9, 1e9};
	assert_int_equal(dp_te_create_demand(&x->te, &x->f, four, demand, 4, err, sizeof(err)), 0);
	for (int i = 0; i < 4; i++) /* (the two large ones leave leaf0 on different uplinks) */
		assert_true(x->te.pair[i].src == four[want[i]][0] && x->te.pair[i].dst == four[want[i]][1]);
	assert_int_not_equal(dp_te_lookup(&x->te, 0, 3), dp_te_lookup(&x->te, 1, 2));
	dp_te_free(&x->te);
	assert_int_equal(dp_te_create_demand(&x->te, &x->f, four, bad, 4, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a demand not above 0")); /* (teardown's free: of a zeroed one) */
}

/* ---- PFC watchdog ---- */

static void test_watchdog_storm_drops(void **state)
{
	struct fix *x = *state;
	struct dp_switch *leaf0 = SW(x, "leaf0");
	uint16_t in = PORT(x, leaf0, "h0"), out = PORT(x, leaf0, "h1");
	struct dp_chan *oc = leaf0->out[out];
	struct pfc_frame pf;
	uint8_t xoff[PFC_FRAME_LEN];
	struct frame fr;
	struct rl_pkt p;
	struct dp_verdict v;

	assert_true(oc->wd_on);
	/* h1 pauses priority 3 for good (re-sent before each expiry, as a storm does) */
	pfc_frame_init(&pf, HOST(x, "h1")->mac);
	pfc_frame_set(&pf, 3, 0xffff);
	pfc_frame_encode(&pf, xoff, sizeof(xoff));
	for (uint64_t t = 0; t <= 2000000; t += 100000) {
		assert_int_equal(pfc_pause_rx(&oc->pause, xoff, sizeof(xoff), t), PFC_FRAME_OK);
		uint64_t tx[DP_NUM_PRIO];
		dp_count_chan_q_tx_pkts(oc, tx);
		pfc_watchdog_poll(&oc->wd, &oc->pause, 1u << 3, tx, t);
	}
	assert_true(pfc_watchdog_in_storm(&oc->wd, 3));
	/* lossless frames toward h1 are dropped on arrival; other priorities still pass */
	udp4(x, &fr, "h0", "h1", 1000, 64, DSCP_LOSSLESS << 2);
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_DROP);
	assert_int_equal(v.drop, DP_DROP_PFC_STORM);
	assert_int_equal(leaf0->drops[DP_DROP_PFC_STORM], 1);
	udp4(x, &fr, "h0", "h1", 1000, 64, DSCP_LOSSY << 2);
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_FORWARD);
	/* and toward h0 (no storm) priority 3 passes */
	udp4(x, &fr, "h1", "h0", 1000, 64, DSCP_LOSSLESS << 2);
	assert_int_equal(decide(leaf0, out, &fr, &p, &v), DP_VERDICT_FORWARD);
}

/* ---- admission ---- */

static void test_full_buffer_drops_and_sends_xoff(void **state)
{
	struct fix *x = *state;
	struct dp_switch *leaf0 = SW(x, "leaf0");
	uint16_t in = PORT(x, leaf0, "h0");
	struct frame fr;
	struct rl_pkt p;
	struct dp_verdict v;
	int xoff_at = -1, drop_at = -1;

	/* lossless frames h0 -> h1 that never leave: the buffer fills */
	for (int i = 0; i < MAX_FRAMES && drop_at < 0; i++) {
		udp4(x, &fr, "h0", "h1", 1000, 64, DSCP_LOSSLESS << 2);
		enum dp_verdict_kind k = decide(leaf0, in, &fr, &p, &v);
		if ((v.mmu_flags & PFC_MMU_F_XOFF) && xoff_at < 0)
			xoff_at = i;
		if (k == DP_VERDICT_DROP) {
			assert_int_equal(v.drop, DP_DROP_MMU);
			drop_at = i;
		} else {
			assert_int_equal(k, DP_VERDICT_FORWARD);
		}
	}
	assert_true(xoff_at >= 0);
	assert_true(drop_at > xoff_at); /* XOFF first, then (headroom gone) drops */
	assert_int_equal(leaf0->drops[DP_DROP_MMU], 1);
	/* the XOFF the caller is to send: priority 3 paused on the port toward h0 */
	struct pfc_frame pf;
	assert_true(pfc_mmu_pfc_frame(leaf0->mmu, in, NOW, &pf) > 0);
	assert_true(pf.enable >> 3 & 1);
	assert_int_not_equal(pf.time[3], 0);
	/* lossy traffic to another port is refused by the full buffer too, without XOFF */
	udp4(x, &fr, "h1", "h0", 1000, 64, DSCP_LOSSY);
	decide(leaf0, PORT(x, leaf0, "h1"), &fr, &p, &v);
	assert_false(v.mmu_flags & PFC_MMU_F_XOFF);
}

static void test_ecn_mark_rewrite(void **state)
{
	struct fix *x = *state;
	struct dp_switch *leaf0 = SW(x, "leaf0");
	uint16_t in = PORT(x, leaf0, "h0");
	struct frame fr;
	struct rl_pkt p;
	struct dp_verdict v;
	int marked = -1;

	/* ECT(1) frames queue up past kmax (2 KB): from there every one is marked CE */
	for (int i = 0; i < 64 && marked < 0; i++) {
		udp4(x, &fr, "h0", "h1", 1000, 64, DSCP_LOSSY << 2 | 1);
		assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_FORWARD);
		if (v.mmu_flags & PFC_MMU_F_ECN_CE)
			marked = i;
		else
			assert_int_equal(fr.b[15] & 3, 1);
	}
	assert_true(marked > 0);
	assert_int_equal(fr.b[15] & 3, 3);             /* CE in the frame */
	assert_int_equal(p.ecn, 3);                    /* and in the parse the next hop uses */
	assert_int_equal(ones_sum(fr.b + 14, 20, 0), 0xffff);
	assert_int_equal(leaf0->ecn_marked, 1);
	/* a frame that is not ECN-capable is never marked */
	udp4(x, &fr, "h0", "h1", 1000, 64, DSCP_LOSSY << 2);
	assert_int_equal(decide(leaf0, in, &fr, &p, &v), DP_VERDICT_FORWARD);
	assert_false(v.mmu_flags & PFC_MMU_F_ECN_CE);
	assert_int_equal(fr.b[15] & 3, 0);
}

/*
 * One frame along h0 -> leaf0 -> a spine -> leaf1 -> h2 on fabric f: eager
 * (the bytes rewritten at each hop) or owed (the hops record the rewrite,
 * dp_frame_pay_owed writes it at the end). Returns the hops where it was
 * marked CE as bits (1: leaf0, 2: the spine, 4: leaf1), -1 if not forwarded.
 */
static int walk_path(struct fix *x, struct dp_fabric *f, struct frame *fr, bool owed)
{
	struct dp_switch *s = &f->sw[topo_switch_by_name(x->t, "leaf0")];
	uint16_t in = PORT(x, s, "h0");
	struct rl_pkt p;
	uint8_t ttl_owed = 0;
	uint32_t mac_chan = 0;
	int st = rl_parse(fr->b, fr->len, &p), ce = 0;

	for (int hop = 0; hop < 3; hop++) {
		struct dp_frame df = {.d = fr->b, .len = fr->len, .room = ROOM,
				      .ttl_owed = owed ? &ttl_owed : NULL,
				      .mac_chan_owed = owed ? &mac_chan : NULL};
		struct dp_verdict v;
		if (dp_pipeline_decide(s, in, &df, &p, st, NOW, &v) != DP_VERDICT_FORWARD)
			return -1;
		ce |= v.mmu_flags & PFC_MMU_F_ECN_CE ? 1 << hop : 0;
		const struct dp_chan *c = s->out[v.out_port];
		if (c->to.kind != TOPO_NODE_SWITCH)
			break;
		s = &f->sw[c->to.index];
		in = c->to_port;
	}
	if (owed)
		dp_frame_pay_owed(fr->b, &p, ttl_owed, mac_chan ? &f->chans[mac_chan - 1] : NULL);
	return ce;
}

/*
 * Header rewrites owed along a path and written once at the end give the
 * bytes of hop-by-hop rewriting (MACs, TTL / hop limit, the IPv4 checksum
 * adjusted each time), also where a later hop marks CE and pays what the
 * earlier ones owed first: two fabrics built alike see the same frames, one
 * eager, one owed, and their queues (so their ECN marks) stay in step.
 */
static void test_owed_rewrite(void **state)
{
	struct fix *x = *state, *y;
	int later_ce = 0, sent = 0;

	setup_ecn((void **)&y);
	for (int i = 0; i < 400; i++) {
		struct frame a, b;
		if (i % 2 == 0) {
			udp4(x, &a, "h0", "h2", (uint16_t)(1000 + i), 64, DSCP_LOSSY << 2 | (i % 3 ? 1 : 0));
		} else { /* IPv6, ECT(1) in the traffic class */
			uint8_t *u = ipv6(&a, HOST(x, "h0"), HOST(x, "h0")->ipv6, HOST(x, "h2")->ipv6, 17, 64, 64);
			a.b[15] |= 0x10;
			rl_put_be16(u, (uint16_t)(1000 + i));
			rl_put_be16(u + 2, UDP_DPORT);
			rl_put_be16(u + 4, 64);
		}
		b = a;
		int ce_a = walk_path(x, &x->f, &a, false), ce_b = walk_path(x, &y->f, &b, true);
		assert_int_equal(ce_a, ce_b);
		if (ce_a < 0)
			continue;
		sent++;
		later_ce += (ce_a & 6) && !(ce_a & 1);
		assert_int_equal(a.len, b.len);
		assert_memory_equal(a.b, b.b, a.len);
	}
	assert_true(sent > 100);
	assert_true(later_ce > 0); /* the pay-then-mark order was exercised */
	teardown((void **)&y);
}

/*
 * The stages that answer in place (echo, neighbour advertisement) read the
 * asker's MAC, so they write what earlier hops owed first. A far leaf's
 * gateway is not routed (only hosts are), so no path brings such a frame
 * with something owed: here leaf0 gets an echo and a solicitation as if
 * over a spine's link, owed (one hop, that link's MACs), and answers them
 * byte for byte as it answers the same frame written at once, owing nothing
 * after.
 */
static void test_owed_reply(void **state)
{
	struct fix *x = *state;
	struct dp_switch *leaf0 = SW(x, "leaf0");
	const struct topo_host *h0 = HOST(x, "h0");
	uint16_t in = PORT(x, leaf0, "h0");
	uint32_t via = UINT32_MAX; /* a spine -> leaf0 link */

	for (uint32_t i = 0; i < x->f.n_chans && via == UINT32_MAX; i++)
		if (x->f.chans[i].from.kind == TOPO_NODE_SWITCH &&
		    &x->f.sw[x->f.chans[i].to.index] == leaf0)
			via = i;
	assert_int_not_equal(via, UINT32_MAX);
	for (int kind = 0; kind < 3; kind++) {
		struct frame a, b;
		uint8_t *icmp;
		if (kind == 0) {
			icmp = ipv4(&a, h0, leaf0->cfg->gw_ipv4, 1, 9, 0, 16);
			icmp[0] = 8;
			rl_put_be16(icmp + 2, (uint16_t)~ones_sum(icmp, 16, 0));
		} else if (kind == 1) {
			icmp = ipv6(&a, h0, h0->ipv6, leaf0->cfg->gw_ipv6, 58, 9, 16);
			icmp[0] = 128;
			rl_put_be16(icmp + 2, (uint16_t)~icmp6_check(a.b + 14));
		} else {
			neighbour_solicit(x, &a, "h0", h0->ipv6, leaf0->cfg->gw_ipv6);
		}
		b = a;
		struct rl_pkt pa, pb;
		assert_int_equal(rl_parse(a.b, a.len, &pa), RL_PARSE_OK);
		assert_int_equal(rl_parse(b.b, b.len, &pb), RL_PARSE_OK);
		dp_frame_pay_owed(a.b, &pa, 1, &x->f.chans[via]); /* written at once */
		pa.ttl--;
		pb.ttl--;
		uint8_t ttl_owed = 1;
		uint32_t mac_chan = via + 1;
		struct dp_frame fa = {.d = a.b, .len = a.len, .room = ROOM};
		struct dp_frame fb = {.d = b.b, .len = b.len, .room = ROOM, .ttl_owed = &ttl_owed,
				      .mac_chan_owed = &mac_chan};
		struct dp_verdict va, vb;
		assert_int_equal(dp_pipeline_decide(leaf0, in, &fa, &pa, RL_PARSE_OK, NOW, &va), DP_VERDICT_REPLY);
		assert_int_equal(dp_pipeline_decide(leaf0, in, &fb, &pb, RL_PARSE_OK, NOW, &vb), DP_VERDICT_REPLY);
		assert_int_equal(va.len, vb.len);
		assert_memory_equal(a.b, b.b, va.len);
		assert_memory_equal(b.b, x->f.chans[via].src_mac, 6); /* back to the spine */
		assert_int_equal(ttl_owed, 0);
		assert_int_equal(mac_chan, 0);
	}
	assert_int_equal(leaf0->echo_replies, 4);
	assert_int_equal(leaf0->nd_replies, 2);
}

/* ---- timers that cannot be added ---- */

/* Print f's tables into buf (NUL-terminated). */
static void print_tables(struct dp_fabric *f, char *buf, size_t len)
{
	FILE *fp = fmemopen(buf, len, "w");

	assert_non_null(fp);
	dp_stats_print(f, NOW, fp);
	fclose(fp);
}

static void test_timer_failure_reported(void **state)
{
	struct fix *x = *state;
	struct dp_engine e;
	static char out[1 << 14];

	assert_int_equal(dp_engine_init(&e, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	x->f.eng = &e;
	print_tables(&x->f, out, sizeof(out));
	assert_non_null(strstr(out, "leaf0"));
	assert_null(strstr(out, "timer_fail")); /* a sound run's tables are as they were */

	dp_engine_set_limit(&e, 1);
	assert_int_equal(dp_timer_add(&e, 10, NULL, NULL, 0), 0);
	assert_int_equal(dp_timer_add(&e, 20, NULL, NULL, 0), -ENOSPC);
	assert_int_equal(dp_timer_add(&e, 30, NULL, NULL, 0), -ENOSPC);
	print_tables(&x->f, out, sizeof(out));
	assert_non_null(strstr(out, "\ntimer_fail 2: "));
	dp_engine_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_parse_errors, setup_ecmp, teardown),
		cmocka_unit_test_setup_teardown(test_pfc_frame, setup_ecmp, teardown),
		cmocka_unit_test_setup_teardown(test_arp, setup_ecmp, teardown),
		cmocka_unit_test_setup_teardown(test_neighbour_discovery, setup_ecmp, teardown),
		cmocka_unit_test_setup_teardown(test_echo_to_gateway, setup_ecmp, teardown),
		cmocka_unit_test_setup_teardown(test_ttl, setup_ecmp, teardown),
		cmocka_unit_test_setup_teardown(test_route_lookup_and_rewrite, setup_ecmp, teardown),
		cmocka_unit_test_setup_teardown(test_ecmp_choice, setup_ecmp, teardown),
		cmocka_unit_test_setup_teardown(test_program_dscp, setup_ecmp, teardown),
		cmocka_unit_test_setup_teardown(test_pinning_choice, setup_pinning, teardown),
		cmocka_unit_test_setup_teardown(test_te_choice, setup_ecmp, teardown),
		cmocka_unit_test_setup_teardown(test_watchdog_storm_drops, setup_watchdog, teardown),
		cmocka_unit_test_setup_teardown(test_full_buffer_drops_and_sends_xoff, setup_ecmp, teardown),
		cmocka_unit_test_setup_teardown(test_ecn_mark_rewrite, setup_ecn, teardown),
		cmocka_unit_test_setup_teardown(test_owed_rewrite, setup_ecn, teardown),
		cmocka_unit_test_setup_teardown(test_owed_reply, setup_ecmp, teardown),
		cmocka_unit_test_setup_teardown(test_timer_failure_reported, setup_ecmp, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
