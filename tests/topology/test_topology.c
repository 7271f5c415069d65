/* SPDX-License-Identifier: BSD-3-Clause */
/* Topology loader: the shipped files, defaults, derived addresses, topo_clos(), bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pfc_mmu.h"
#include "topo.h"

#ifndef RL_TOPO_DIR
#error "RL_TOPO_DIR must name the topologies/ folder"
#endif

#define IPV4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

static struct topo *load_shipped(const char *file)
{
	char path[512], err[512];
	snprintf(path, sizeof(path), "%s/%s", RL_TOPO_DIR, file);
	struct topo *t = NULL;
	int rc = topo_load(path, &t, err, sizeof(err));
	if (rc != 0)
		fail_msg("%s", err);
	assert_non_null(t);
	return t;
}

static const struct topo_switch *sw_named(const struct topo *t, const char *name)
{
	int i = topo_switch_by_name(t, name);
	assert_true(i >= 0);
	return &t->switches[i];
}

static const struct topo_host *host_named(const struct topo *t, const char *name)
{
	int i = topo_host_by_name(t, name);
	assert_true(i >= 0);
	return &t->hosts[i];
}

static const struct topo_link *link_named(const struct topo *t, const char *name)
{
	int i = topo_link_by_name(t, name);
	if (i < 0)
		fail_msg("no link %s", name);
	return &t->links[i];
}

static void test_default_file(void **state)
{
	(void)state;
	struct topo *t = load_shipped("default.yaml");
	assert_string_equal(t->name, "default");
	assert_int_equal(t->n_switches, 4);
	assert_int_equal(t->n_hosts, 8);
	assert_int_equal(t->n_links, 12);
	assert_int_equal(t->n_events, 0);
	assert_int_equal(t->n_leaves, 2);

	const struct topo_switch *l0 = sw_named(t, "leaf0"), *l1 = sw_named(t, "leaf1");
	const struct topo_switch *s0 = sw_named(t, "spine0"), *s1 = sw_named(t, "spine1");
	assert_int_equal(l0->role, TOPO_ROLE_RTSW);
	assert_int_equal(s1->role, TOPO_ROLE_CTSW);
	assert_int_equal(l0->leaf_index, 0);
	assert_int_equal(l1->leaf_index, 1);
	assert_int_equal(s0->leaf_index, -1);
	assert_int_equal(l0->n_ports, 6);
	assert_int_equal(s0->n_ports, 2);
	assert_int_equal(l0->n_hosts, 4);

	/* defaults */
	assert_string_equal(l0->buffer, "shallow");
	assert_string_equal(s0->buffer, "deep");
	assert_ptr_equal(l0->buffer_profile, pfc_buffer_profile_find("shallow"));
	assert_ptr_equal(s0->buffer_profile, pfc_buffer_profile_find("deep"));
	assert_int_equal(l0->profile, RL_PROFILE_5TUPLE);
	assert_int_equal(l0->algo, RL_HASH_CRC32);
	assert_int_equal(l0->lb, TOPO_LB_ECMP);
	assert_int_equal(l0->flowlet_timeout_ns, 100000);
	assert_int_equal(l0->resilient_buckets, 256);
	/* per-switch seeds differ (no polarization) and are stable */
	assert_int_not_equal(l0->seed, l1->seed);
	assert_int_not_equal(s0->seed, s1->seed);
	assert_int_not_equal(l0->seed, 0);

	for (uint32_t i = 0; i < t->n_links; i++) {
		assert_int_equal(t->links[i].rate_bps, 100000000000ull);
		assert_int_equal(t->links[i].delay_ns, 1000);
		assert_int_equal(t->links[i].mtu, 9000);
		assert_true(t->links[i].loss == 0.0);
	}

	/* ports: hosts first (host order), then uplinks in spine order */
	for (int p = 0; p < 4; p++) {
		assert_int_equal(l0->ports[p].peer.kind, TOPO_NODE_HOST);
		assert_string_equal(topo_node_name(t, l0->ports[p].peer), t->hosts[p].name);
	}
	assert_int_equal(l0->ports[4].peer.kind, TOPO_NODE_SWITCH);
	assert_string_equal(topo_node_name(t, l0->ports[4].peer), "spine0");
	assert_string_equal(topo_node_name(t, l0->ports[5].peer), "spine1");
	/* the peer port is consistent both ways */
	const struct topo_port *up = &l1->ports[5]; /* leaf1 -> spine1 */
	assert_string_equal(topo_node_name(t, up->peer), "spine1");
	assert_int_equal(up->peer_port, 1);
	const struct topo_port *down = &s1->ports[up->peer_port];
	assert_string_equal(topo_node_name(t, down->peer), "leaf1");
	assert_int_equal(down->peer_port, 5);
	assert_int_equal(down->link, up->link);
	assert_string_equal(t->links[up->link].name, "leaf1-spine1");

	/* hosts and derived addresses */
	const struct topo_host *h0 = host_named(t, "h0"), *h5 = host_named(t, "h5");
	assert_int_equal(h0->attach, TOPO_ATTACH_VETH);
	assert_int_equal(h0->mtu, 1500);
	assert_string_equal(h0->netns, "h0");
	assert_string_equal(h0->ifname, "rl-h0");
	assert_string_equal(t->switches[h5->leaf].name, "leaf1");
	assert_int_equal(h5->leaf_port, 1);
	assert_int_equal(h5->index, 1);
	assert_int_equal(h0->ipv4, IPV4(10, 0, 0, 1));
	assert_int_equal(h5->ipv4, IPV4(10, 0, 1, 2));
	assert_int_equal(h5->gw_ipv4, IPV4(10, 0, 1, 254));
	assert_int_equal(l1->subnet4, IPV4(10, 0, 1, 0));
	char buf[64];
	assert_string_equal(topo_ipv6_str(h5->ipv6, buf, sizeof(buf)), "fd00:0:0:1::2");
	assert_string_equal(topo_ipv6_str(h5->gw_ipv6, buf, sizeof(buf)), "fd00:0:0:1::fe");
	assert_string_equal(topo_ipv6_str(h0->ipv6, buf, sizeof(buf)), "fd00::1");
	assert_string_equal(topo_mac_str(h5->mac, buf, sizeof(buf)), "02:00:0a:00:01:02");
	/* gateway MAC: leaf1 (switch 1) port 1 */
	assert_string_equal(topo_mac_str(h5->gw_mac, buf, sizeof(buf)), "02:01:00:01:00:01");
	assert_memory_equal(h5->gw_mac, l1->ports[h5->leaf_port].mac, 6);
	assert_string_equal(topo_ipv4_str(h5->ipv4, buf, sizeof(buf)), "10.0.1.2");
	/* all host MACs and IPs distinct */
	for (uint32_t i = 0; i < t->n_hosts; i++)
		for (uint32_t j = i + 1; j < t->n_hosts; j++) {
			assert_int_not_equal(t->hosts[i].ipv4, t->hosts[j].ipv4);
			assert_memory_not_equal(t->hosts[i].mac, t->hosts[j].mac, 6);
		}

	/* QoS defaults */
	assert_int_equal(t->qos.dscp_prio[0], 0);
	assert_int_equal(t->qos.dscp_prio[7], 0);
	assert_int_equal(t->qos.dscp_prio[8], 1);
	assert_int_equal(t->qos.dscp_prio[26], 3);
	assert_int_equal(t->qos.dscp_prio[46], 5);
	assert_int_equal(t->qos.dscp_prio[48], 6);
	assert_int_equal(t->qos.dscp_prio[63], 7);
	assert_int_equal(t->qos.lossless_mask, 0x08);
	assert_int_equal(t->qos.control_prio, 6);
	assert_int_equal(t->qos.dwrr_weight[6], 0);
	assert_int_equal(t->qos.dwrr_weight[3], 1);
	assert_true(t->qos.ecn);
	assert_int_equal(t->qos.ecn_kmin, 5000);
	assert_int_equal(t->qos.ecn_kmax, 200000);
	topo_free(t);
}

static void test_clos_4x4x16_file(void **state)
{
	(void)state;
	struct topo *t = load_shipped("clos-4x4x16.yaml");
	assert_int_equal(t->n_switches, 8);
	assert_int_equal(t->n_hosts, 64);
	assert_int_equal(t->n_links, 64 + 16);
	assert_int_equal(t->n_leaves, 4);
	for (uint32_t i = 0; i < t->n_hosts; i++) {
		assert_int_equal(t->hosts[i].attach, TOPO_ATTACH_EMULATED);
		assert_int_equal(t->hosts[i].mtu, 4200);
		assert_string_equal(t->hosts[i].netns, ""); /* veth only */
	}
	const struct topo_switch *l3 = sw_named(t, "leaf3"), *s2 = sw_named(t, "spine2");
	assert_int_equal(l3->n_ports, 20);
	assert_int_equal(l3->n_hosts, 16);
	assert_int_equal(s2->n_ports, 4);
	assert_int_equal(l3->profile, RL_PROFILE_EECMP);
	assert_int_equal(l3->lb, TOPO_LB_RESILIENT);
	assert_int_equal(s2->profile, RL_PROFILE_EECMP);
	assert_int_equal(s2->lb, TOPO_LB_ECMP);
	const struct topo_host *h63 = host_named(t, "h63");
	assert_int_equal(h63->ipv4, IPV4(10, 0, 3, 16));
	assert_int_equal(h63->index, 15);
	assert_int_equal(link_named(t, "leaf2-spine3")->rate_bps, 400000000000ull);
	assert_int_equal(link_named(t, "h0-leaf0")->delay_ns, 500);
	assert_int_equal(t->qos.dwrr_weight[3], 4);
	assert_int_equal(t->qos.dscp_prio[26], 3);
	assert_int_equal(t->qos.dscp_prio[48], 6);
	topo_free(t);
}

/* The benchmark fabric: the default Clos with every host on a net_null port. */
static void test_net_null_bench_file(void **state)
{
	(void)state;
	struct topo *t = load_shipped("../tests/bench/null-2x2.yaml");
	assert_int_equal(t->n_switches, 4);
	assert_int_equal(t->n_hosts, 8);
	for (uint32_t i = 0; i < t->n_hosts; i++) {
		assert_int_equal(t->hosts[i].attach, TOPO_ATTACH_NET_NULL);
		assert_string_equal(t->hosts[i].netns, ""); /* veth only */
	}
	assert_string_equal(topo_attach_name(TOPO_ATTACH_NET_NULL), "net_null");
	assert_int_equal(topo_attach_from_name("net_null"), TOPO_ATTACH_NET_NULL);
	assert_int_equal(host_named(t, "h4")->ipv4, IPV4(10, 0, 1, 1));
	topo_free(t);
}

static void test_3tier_file(void **state)
{
	(void)state;
	struct topo *t = load_shipped("3tier-2zones.yaml");
	assert_int_equal(t->n_switches, 10);
	assert_int_equal(t->n_hosts, 16);
	assert_int_equal(t->n_links, 16 + 8 + 8);
	assert_int_equal(t->n_leaves, 4);
	unsigned roles[TOPO_ROLE_COUNT] = {0};
	for (uint32_t i = 0; i < t->n_switches; i++) {
		roles[t->switches[i].role]++;
		assert_int_equal(t->switches[i].algo, RL_HASH_CRC32C); /* defaults.switch */
	}
	assert_int_equal(roles[TOPO_ROLE_RTSW], 4);
	assert_int_equal(roles[TOPO_ROLE_CTSW], 4);
	assert_int_equal(roles[TOPO_ROLE_ATSW], 2);
	const struct topo_switch *agg0 = sw_named(t, "agg0");
	assert_int_equal(agg0->role, TOPO_ROLE_ATSW);
	assert_int_equal(agg0->lb, TOPO_LB_RESILIENT);
	assert_string_equal(agg0->buffer, "deep");
	assert_int_equal(agg0->n_ports, 4);
	const struct topo_link *up = link_named(t, "z0-spine0-agg0");
	assert_int_equal(up->rate_bps, 50000000000ull);
	assert_int_equal(up->delay_ns, 10000);
	/* the second zone's leaves are leaf index 2 and 3 */
	assert_int_equal(host_named(t, "z1-h5")->ipv4, IPV4(10, 0, 3, 2));
	/* events, sorted */
	assert_int_equal(t->n_events, 2);
	assert_int_equal(t->events[0].at_ns, 2000000000ull);
	assert_false(t->events[0].up);
	assert_int_equal(t->events[0].target, TOPO_EVENT_LINK);
	assert_int_equal(t->events[0].index, (uint32_t)topo_link_by_name(t, "z0-spine0-agg0"));
	assert_int_equal(t->events[1].at_ns, 4000000000ull);
	assert_true(t->events[1].up);
	topo_free(t);
}

/* default.yaml is the 2,2,4 Clos: same nodes, ports, addresses and settings. */
static void test_default_equals_clos(void **state)
{
	(void)state;
	struct topo *f = load_shipped("default.yaml");
	char err[256];
	struct topo *c = topo_clos(2, 2, 4, err, sizeof(err));
	assert_non_null(c);
	assert_string_equal(c->name, "clos-2x2x4");
	assert_int_equal(f->n_switches, c->n_switches);
	assert_int_equal(f->n_hosts, c->n_hosts);
	assert_int_equal(f->n_links, c->n_links);
	for (uint32_t i = 0; i < f->n_switches; i++) {
		const struct topo_switch *a = &f->switches[i], *b = &c->switches[i];
		assert_string_equal(a->name, b->name);
		assert_int_equal(a->role, b->role);
		assert_string_equal(a->buffer, b->buffer);
		assert_int_equal(a->seed, b->seed);
		assert_int_equal(a->profile, b->profile);
		assert_int_equal(a->lb, b->lb);
		assert_int_equal(a->n_ports, b->n_ports);
		for (uint16_t p = 0; p < a->n_ports; p++) {
			assert_int_equal(a->ports[p].peer.kind, b->ports[p].peer.kind);
			assert_int_equal(a->ports[p].peer.index, b->ports[p].peer.index);
			assert_int_equal(a->ports[p].peer_port, b->ports[p].peer_port);
			assert_memory_equal(a->ports[p].mac, b->ports[p].mac, 6);
		}
	}
	for (uint32_t i = 0; i < f->n_hosts; i++) {
		const struct topo_host *a = &f->hosts[i], *b = &c->hosts[i];
		assert_string_equal(a->name, b->name);
		assert_int_equal(a->ipv4, b->ipv4);
		assert_memory_equal(a->mac, b->mac, 6);
		assert_memory_equal(a->gw_mac, b->gw_mac, 6);
		assert_int_equal(a->attach, b->attach);
		assert_int_equal(a->mtu, b->mtu);
	}
	for (uint32_t i = 0; i < f->n_links; i++) {
		assert_string_equal(f->links[i].name, c->links[i].name);
		assert_int_equal(f->links[i].rate_bps, c->links[i].rate_bps);
		assert_int_equal(f->links[i].delay_ns, c->links[i].delay_ns);
	}
	assert_memory_equal(&f->qos, &c->qos, sizeof(f->qos));
	topo_free(f);
	topo_free(c);
}

static void test_clos_builder(void **state)
{
	(void)state;
	char err[256];
	struct topo *t = topo_clos(4, 4, 4, err, sizeof(err));
	if (!t)
		fail_msg("%s", err);
	assert_int_equal(t->n_switches, 8);
	assert_int_equal(t->n_hosts, 16);
	assert_int_equal(t->n_links, 16 + 16);
	assert_int_equal(t->n_leaves, 4);
	for (unsigned l = 0; l < 4; l++) {
		char name[16];
		snprintf(name, sizeof(name), "leaf%u", l);
		const struct topo_switch *sw = sw_named(t, name);
		assert_int_equal(sw->role, TOPO_ROLE_RTSW);
		assert_int_equal(sw->n_ports, 8);
		assert_int_equal(sw->leaf_index, (int)l);
		/* uplink k goes to spine k */
		for (unsigned k = 0; k < 4; k++) {
			snprintf(name, sizeof(name), "spine%u", k);
			assert_string_equal(topo_node_name(t, sw->ports[4 + k].peer), name);
		}
	}
	for (unsigned s = 0; s < 4; s++) {
		char name[16];
		snprintf(name, sizeof(name), "spine%u", s);
		const struct topo_switch *sw = sw_named(t, name);
		assert_int_equal(sw->role, TOPO_ROLE_CTSW);
		assert_int_equal(sw->n_ports, 4);
		assert_string_equal(sw->buffer, "deep");
	}
	const struct topo_host *h13 = host_named(t, "h13"); /* leaf3, index 1 */
	assert_string_equal(t->switches[h13->leaf].name, "leaf3");
	assert_int_equal(h13->index, 1);
	assert_int_equal(h13->leaf_port, 1);
	assert_int_equal(h13->ipv4, IPV4(10, 0, 3, 2));
	assert_int_equal(h13->attach, TOPO_ATTACH_VETH);
	topo_free(t);

	/* out of range sizes */
	assert_null(topo_clos(0, 2, 2, err, sizeof(err)));
	assert_non_null(strstr(err, "bad Clos size"));
	assert_null(topo_clos(2, 2, 254, err, sizeof(err)));
	assert_null(topo_clos(2, 0, 2, err, sizeof(err)));
	t = topo_clos(1, 1, 253, err, sizeof(err));
	assert_non_null(t);
	assert_int_equal(t->hosts[252].ipv4, IPV4(10, 0, 0, 253));
	topo_free(t);
}

/* ------------------------------------------------------- malformed input */

static char *write_temp(const char *text, size_t len)
{
	char *path = strdup("/tmp/rl-topo-test-XXXXXX.yaml");
	assert_non_null(path);
	int fd = mkstemps(path, 5);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

/* The minimal valid fabric the cases below start from (10 lines). */
#define L_SW "switches:\n"                      /* 1 */ \
	     "  - {name: leaf0, role: rtsw}\n"  /* 2 */ \
	     "  - {name: leaf1, role: rtsw}\n"  /* 3 */ \
	     "  - {name: spine0, role: ctsw}\n" /* 4 */
#define L_HO "hosts:\n"                         /* 5 */ \
	     "  - {name: h0, leaf: leaf0}\n"    /* 6 */ \
	     "  - {name: h1, leaf: leaf1}\n"    /* 7 */
#define L_LI "links:\n"                         /* 8 */ \
	     "  - [leaf0, spine0]\n"            /* 9 */ \
	     "  - [leaf1, spine0]\n"            /* 10 */
#define BASE L_SW L_HO L_LI

struct bad_case {
	const char *what;
	const char *yaml;
	int line;            /* expected line; 0: no line in the message */
	const char *expect;  /* substring of the message */
};

static const struct bad_case bad_cases[] = {
	{"unknown top-level key", BASE "colour: red\n", 11, "unknown key 'colour' in the topology"},
	{"unknown key in a switch",
	 "switches:\n  - {name: leaf0, role: rtsw, colour: red}\n  - {name: leaf1, role: rtsw}\n"
	 "  - {name: spine0, role: ctsw}\n" L_HO L_LI,
	 2, "unknown key 'colour' in switch"},
	{"switches is not a list", "switches: leaf0\n" L_HO L_LI, 1,
	 "switches: expected a list, got a scalar"},
	{"bad role", "switches:\n  - {name: leaf0, role: rtsw}\n  - {name: leaf1, role: rtsw}\n"
		     "  - {name: spine0, role: spine}\n" L_HO L_LI,
	 4, "role: unknown value 'spine'"},
	{"missing role", "switches:\n  - {name: leaf0}\n" L_HO L_LI, 2,
	 "missing required key 'role'"},
	{"bad rate unit", L_SW L_HO "links:\n  - [leaf0, spine0]\n  - {ends: [leaf1, spine0], rate: 100Q}\n",
	 10, "rate: '100Q' has a bad or missing unit"},
	{"rate zero", L_SW L_HO "links:\n  - [leaf0, spine0]\n  - {ends: [leaf1, spine0], rate: 0G}\n", 10,
	 "rate: must not be zero"},
	{"rate not a number", L_SW L_HO "links:\n  - [leaf0, spine0]\n  - {ends: [leaf1, spine0], rate: fast}\n",
	 10, "'fast' is not a valid rate"},
	{"delay without unit", L_SW L_HO "links:\n  - [leaf0, spine0]\n  - {ends: [leaf1, spine0], delay: 5}\n",
	 10, "delay: '5' has a bad or missing unit"},
	{"loss out of range", L_SW L_HO "links:\n  - [leaf0, spine0]\n  - {ends: [leaf1, spine0], loss: 1.5}\n",
	 10, "loss: 1.5 is out of range"},
	{"mtu out of range", L_SW L_HO "links:\n  - {ends: [leaf0, spine0], mtu: 10000}\n  - [leaf1, spine0]\n",
	 9, "mtu: 10000 is out of range"},
	{"duplicate name", "switches:\n  - {name: leaf0, role: rtsw}\n  - {name: leaf0, role: rtsw}\n"
			   "  - {name: spine0, role: ctsw}\n" L_HO L_LI,
	 3, "duplicate name 'leaf0' (first defined on line 2)"},
	{"host and switch with one name", L_SW "hosts:\n  - {name: spine0, leaf: leaf0}\n" L_LI, 6,
	 "duplicate name 'spine0' (first defined on line 4)"},
	{"link to a missing node", L_SW L_HO "links:\n  - [leaf0, spine0]\n  - [leaf1, spine9]\n", 10,
	 "unknown node 'spine9'"},
	{"host leaf is missing", L_SW "hosts:\n  - {name: h0, leaf: leaf0}\n  - {name: h1, leaf: leaf7}\n" L_LI,
	 7, "leaf 'leaf7' is not a switch"},
	{"host with no leaf", L_SW "hosts:\n  - {name: h0, leaf: leaf0}\n  - {name: h1}\n" L_LI, 7,
	 "host 'h1' is not attached to any leaf"},
	{"host with two leaves", BASE "  - [h0, leaf1]\n", 11,
	 "host 'h0' is attached twice: to 'leaf0' (line 6) and to 'leaf1'"},
	{"disconnected fabric", L_SW L_HO "links:\n  - [leaf0, spine0]\n", 3,
	 "switch 'leaf1' is not connected to the rest of the fabric"},
	{"host attached to a spine", L_SW "hosts:\n  - {name: h0, leaf: leaf0}\n  - {name: h1, leaf: spine0}\n" L_LI,
	 7, "host 'h1' is attached to ctsw 'spine0': hosts attach to an rtsw"},
	{"leaf linked to a leaf", BASE "  - [leaf0, leaf1]\n", 11,
	 "rtsw 'leaf0' cannot connect to rtsw 'leaf1'"},
	{"two hosts linked", BASE "  - [h0, h1]\n", 11, "joins two hosts"},
	{"link to itself", BASE "  - [spine0, spine0]\n", 11, "'spine0' is linked to itself"},
	{"spine without leaves",
	 L_SW "  - {name: spine1, role: ctsw}\n  - {name: agg0, role: atsw}\n"
	      "hosts:\n  - {name: h0, leaf: leaf0}\n  - {name: h1, leaf: leaf1}\n" /* 9 */
	      "links:\n  - [leaf0, spine0]\n  - [leaf1, spine0]\n  - [spine0, agg0]\n  - [spine1, agg0]\n",
	 5, "ctsw 'spine1' has no link to an rtsw"},
	{"parallel links without names", BASE "  - [leaf0, spine0]\n", 11,
	 "duplicate link name 'leaf0-spine0' (first used on line 9)"},
	{"bad buffer profile", "switches:\n  - {name: leaf0, role: rtsw}\n  - {name: leaf1, role: rtsw}\n"
			       "  - {name: spine0, role: ctsw, buffer: medium}\n" L_HO L_LI,
	 4, "unknown buffer profile 'medium' (known: "},
	{"bad hash profile", "switches:\n  - {name: leaf0, role: rtsw, profile: 7tuple}\n"
			     "  - {name: leaf1, role: rtsw}\n  - {name: spine0, role: ctsw}\n" L_HO L_LI,
	 2, "profile: unknown value '7tuple'"},
	{"bad hash algo", "switches:\n  - {name: leaf0, role: rtsw, algo: md5}\n"
			  "  - {name: leaf1, role: rtsw}\n  - {name: spine0, role: ctsw}\n" L_HO L_LI,
	 2, "algo: unknown value 'md5'"},
	{"resilient buckets not a power of two",
	 "switches:\n  - {name: leaf0, role: rtsw, lb: resilient, resilient_buckets: 100}\n"
	 "  - {name: leaf1, role: rtsw}\n  - {name: spine0, role: ctsw}\n" L_HO L_LI,
	 2, "resilient_buckets: 100 is not a power of two"},
	{"negative seed (block style)",
	 "switches:\n  - name: leaf0\n    role: rtsw\n    seed: -1\n"
	 "  - {name: leaf1, role: rtsw}\n  - {name: spine0, role: ctsw}\n" L_HO L_LI,
	 4, "seed: expected a non-negative integer, got '-1'"},
	{"invalid name", "switches:\n  - {name: 'leaf 0', role: rtsw}\n" L_HO L_LI, 2,
	 "invalid name 'leaf 0'"},
	{"unknown attach", L_SW "hosts:\n  - {name: h0, leaf: leaf0, attach: xdp}\n  - {name: h1, leaf: leaf1}\n" L_LI,
	 6, "attach: unknown value 'xdp'"},
	{"netns on an emulated host",
	 L_SW "hosts:\n  - {name: h0, leaf: leaf0, attach: emulated, netns: x}\n  - {name: h1, leaf: leaf1}\n" L_LI,
	 6, "'netns' applies only to attach: veth"},
	{"bad pci address",
	 L_SW "hosts:\n  - {name: h0, leaf: leaf0, attach: pci, pci: '3b:00'}\n  - {name: h1, leaf: leaf1}\n" L_LI,
	 6, "pci: '3b:00' is not a PCI address"},
	{"pci host without an address",
	 L_SW "hosts:\n  - {name: h0, leaf: leaf0, attach: pci}\n  - {name: h1, leaf: leaf1}\n" L_LI,
	 6, "attach: pci needs a 'pci' address"},
	{"dpdk host without devargs",
	 L_SW "hosts:\n  - {name: h0, leaf: leaf0, attach: dpdk}\n  - {name: h1, leaf: leaf1}\n" L_LI,
	 6, "host 'h0': attach: dpdk needs 'devargs'"},
	{"empty devargs",
	 L_SW "hosts:\n  - {name: h0, leaf: leaf0, attach: dpdk, devargs: ''}\n  - {name: h1, leaf: leaf1}\n" L_LI,
	 6, "devargs: empty"},
	{"devargs without a device name",
	 L_SW "hosts:\n  - {name: h0, leaf: leaf0, attach: dpdk, devargs: ',iface=x'}\n  - {name: h1, leaf: leaf1}\n" L_LI,
	 6, "the device name before the first ',' must be"},
	{"devargs with an empty pair",
	 L_SW "hosts:\n  - {name: h0, leaf: leaf0, attach: dpdk, devargs: 'net_tap0,,iface=x'}\n  - {name: h1, leaf: leaf1}\n" L_LI,
	 6, "has an empty key=value pair"},
	{"devargs on a veth host",
	 L_SW "hosts:\n  - {name: h0, leaf: leaf0, devargs: net_tap0}\n  - {name: h1, leaf: leaf1}\n" L_LI,
	 6, "'devargs' applies only to attach: dpdk (this host is veth)"},
	{"two dpdk hosts with one device name",
	 L_SW "hosts:\n  - {name: h0, leaf: leaf0, attach: dpdk, devargs: 'net_tap0,iface=a'}\n"
	 "  - {name: h1, leaf: leaf1, attach: dpdk, devargs: 'net_tap0,iface=b'}\n" L_LI,
	 7, "host 'h1': DPDK device 'net_tap0' is already used by host 'h0'"},
	{"bad host ipv4",
	 L_SW "hosts:\n  - {name: h0, leaf: leaf0, ipv4: 10.0.0.256}\n  - {name: h1, leaf: leaf1}\n" L_LI,
	 6, "ipv4: '10.0.0.256' is not an IPv4 address"},
	{"multicast host mac",
	 L_SW "hosts:\n  - {name: h0, leaf: leaf0, mac: '01:00:5e:00:00:01'}\n  - {name: h1, leaf: leaf1}\n" L_LI,
	 6, "mac: '01:00:5e:00:00:01' is not a unicast address"},
	{"a host's own ipv4 is another's derived one",
	 L_SW "hosts:\n  - {name: h0, leaf: leaf0}\n  - {name: h1, leaf: leaf1, ipv4: 10.0.0.1}\n" L_LI,
	 7, "host 'h1': ipv4 '10.0.0.1' is already used by host 'h0'"},
	{"host mtu above link mtu",
	 L_SW "hosts:\n  - {name: h0, leaf: leaf0, mtu: 9000, link: {mtu: 1500}}\n  - {name: h1, leaf: leaf1}\n" L_LI,
	 6, "mtu 9000 is larger than its link's mtu 1500"},
	{"two hosts in one netns",
	 L_SW "hosts:\n  - {name: h0, leaf: leaf0, netns: ns}\n  - {name: h1, leaf: leaf1, netns: ns}\n" L_LI,
	 7, "netns 'ns' is already used by host 'h0'"},
	{"YAML alias", L_SW "hosts:\n  - {name: &n h0, leaf: leaf0}\n  - {name: *n, leaf: leaf1}\n" L_LI, 7,
	 "aliases are not supported"},
	{"unknown key in defaults", "defaults:\n  rtsw: {lb: ecmp, colour: red}\n" BASE, 2,
	 "unknown key 'colour' in defaults.rtsw"},
	{"defaults.link bad loss", "defaults:\n  link:\n    loss: 2%x\n" BASE, 3,
	 "loss: expected a number between 0 and 1"},
	{"event on an unknown link", BASE "events:\n  - {at: 1s, link: leaf0-spine9, action: down}\n", 12,
	 "unknown link 'leaf0-spine9'"},
	{"event on a host as a switch", BASE "events:\n  - {at: 1s, switch: h0, action: down}\n", 12,
	 "'h0' is a host, not a switch"},
	{"event without action", BASE "events:\n  - {at: 1s, link: leaf0-spine0}\n", 12,
	 "missing required key 'action'"},
	{"event bad time", BASE "events:\n  - {at: soon, link: leaf0-spine0, action: down}\n", 12,
	 "'soon' is not a valid time"},
	{"event with link and switch", BASE "events:\n  - {at: 1s, link: leaf0-spine0, switch: spine0, action: up}\n",
	 12, "either 'link' or 'switch', not both"},
	{"DSCP mapped twice",
	 BASE "qos:\n  dscp_map:\n    - {dscp: 24-31, prio: 3}\n    - {dscp: 26, prio: 5}\n", 14,
	 "DSCP 26 is mapped twice (also on line 13)"},
	{"DSCP list too short", BASE "qos:\n  dscp_map: [0, 1, 2]\n", 12,
	 "needs 64 entries (one per DSCP), got 3"},
	{"DSCP out of range", BASE "qos:\n  dscp_map:\n    - {dscp: 60-70, prio: 7}\n", 13,
	 "dscp: '60-70' is out of range"},
	{"priority out of range", BASE "qos:\n  control: 8\n", 12, "control: 8 is out of range (0..7)"},
	{"lossless listed twice", BASE "qos:\n  lossless: [3, 3]\n", 12, "priority 3 listed twice"},
	{"dwrr weight on the control class", BASE "qos:\n  dwrr: [1, 1, 1, 1, 1, 1, 1, 1]\n", 12,
	 "weight of priority 6 must be 0: it is the strict-priority control class"},
	{"ecn kmin above kmax", BASE "qos:\n  ecn:\n    kmin: 300KB\n    kmax: 200KB\n", 14,
	 "kmax (200000 bytes) is below kmin (300000 bytes)"},
	{"no hosts", L_SW L_LI, 1, "has no hosts"},
	{"root is a list", "- a\n- b\n", 1, "the topology: expected a mapping"},
	/* YAML syntax errors, from libfyaml, with its line */
	{"YAML duplicate key", BASE "switches: []\n", 11, "YAML syntax error: duplicate key"},
	{"YAML tab indentation", L_SW "hosts:\n\t- {name: h0, leaf: leaf0}\n", 6, "YAML syntax error"},
	{"YAML unclosed quote", L_SW "hosts:\n  - {name: \"h0, leaf: leaf0}\n", 6, "YAML syntax error"},
	{"YAML bad indentation", "switches:\n  - {name: leaf0, role: rtsw}\n    - x\n", 3, "YAML syntax error"},
	{"empty file", "", 1, "empty topology"},
	{"comments only", "# nothing\n\n", 1, "empty topology"},
	{"two documents", BASE "---\nfoo: 1\n", 12, "only one YAML document"},
};

static void check_bad(const struct bad_case *bc)
{
	char *path = write_temp(bc->yaml, strlen(bc->yaml));
	char err[512], prefix[600];
	struct topo *t = (struct topo *)0x1;
	int rc = topo_load(path, &t, err, sizeof(err));
	if (rc != -1 || t != NULL)
		fail_msg("case '%s': loaded although invalid", bc->what);
	if (bc->line > 0)
		snprintf(prefix, sizeof(prefix), "%s:%d: ", path, bc->line);
	else
		snprintf(prefix, sizeof(prefix), "%s: ", path);
	if (strncmp(err, prefix, strlen(prefix)) != 0)
		fail_msg("case '%s': message '%s' does not start with '%s'", bc->what, err, prefix);
	if (!strstr(err, bc->expect))
		fail_msg("case '%s': message '%s' lacks '%s'", bc->what, err, bc->expect);
	if (getenv("RL_TEST_VERBOSE"))
		print_message("%-36s %s\n", bc->what, strrchr(err, '/') + 1);
	if (strchr(err, '\n'))
		fail_msg("case '%s': message spans lines: '%s'", bc->what, err);
	/* rocelab-topo --check: exit 2 and the same message */
	char out[1024] = "", eout[1024] = "";
	FILE *fo = fmemopen(out, sizeof(out), "w"), *fe = fmemopen(eout, sizeof(eout), "w");
	assert_int_equal(topo_check_file(path, fo, fe), 2);
	fclose(fo);
	fclose(fe);
	assert_string_equal(out, "");
	assert_non_null(strstr(eout, bc->expect));
	unlink(path);
	free(path);
}

static void test_bad_cases(void **state)
{
	(void)state;
	size_t n = sizeof(bad_cases) / sizeof(bad_cases[0]);
	assert_true(n >= 12);
	for (size_t i = 0; i < n; i++)
		check_bad(&bad_cases[i]);
}

/* The fabric every bad case starts from is itself valid, so each case fails for its own reason. */
static void test_base_is_valid(void **state)
{
	(void)state;
	static const char base[] = BASE;
	char *path = write_temp(base, strlen(base));
	char err[512];
	struct topo *t = NULL;
	int rc = topo_load(path, &t, err, sizeof(err));
	if (rc)
		fail_msg("%s", err);
	assert_int_equal(t->n_switches, 3);
	/* the name defaults to the file name */
	char expect[64];
	const char *base_name = strrchr(path, '/') + 1;
	snprintf(expect, sizeof(expect), "%.*s", (int)strcspn(base_name, "."), base_name);
	assert_string_equal(t->name, expect);
	topo_free(t);
	char out[512] = "";
	FILE *fo = fmemopen(out, sizeof(out), "w");
	assert_int_equal(topo_check_file(path, fo, stderr), 0);
	fclose(fo);
	assert_non_null(strstr(out, "3 switches (2 rtsw, 1 ctsw, 0 atsw), 2 hosts, 4 links, 0 events"));
	unlink(path);
	free(path);
}

static void test_missing_file(void **state)
{
	(void)state;
	char err[512];
	struct topo *t = (struct topo *)0x1;
	assert_int_equal(topo_load("/nonexistent/rl-topo.yaml", &t, err, sizeof(err)), -1);
	assert_null(t);
	assert_string_equal(err, "/nonexistent/rl-topo.yaml: cannot read: No such file or directory");
	assert_int_equal(topo_load("/tmp", &t, err, sizeof(err)), -1); /* a directory */
	assert_non_null(strstr(err, "/tmp: cannot read"));
	/* a tiny err buffer is truncated, not overrun */
	char small[8];
	assert_int_equal(topo_load("/nonexistent/rl-topo.yaml", &t, small, sizeof(small)), -1);
	assert_int_equal(strlen(small), 7);
	assert_int_equal(topo_load("/nonexistent/x", &t, NULL, 0), -1);
}

/* Values in units, and settings that override defaults, land where they should. */
static void test_units_and_overrides(void **state)
{
	(void)state;
	static const char y[] =
		"name: units\n"
		"defaults:\n"
		"  switch: {lb: flowlet, flowlet_timeout_us: 12.5}\n"
		"  rtsw: {algo: toeplitz}\n"
		"  host_link: {rate: 25Gbps}\n"
		"switches:\n"
		"  - {name: leaf0, role: rtsw, seed: 0x10, algo: xor}\n"
		"  - {name: leaf1, role: rtsw}\n"
		"  - {name: spine0, role: ctsw, buffer: shallow, lb: pinning}\n"
		"hosts:\n"
		"  - {name: h0, leaf: leaf0, link: {rate: 100M, delay: 2ms, loss: 0.5%, name: slow}}\n"
		"  - {name: vm1, leaf: leaf1, attach: vhost}\n"
		"  - {name: nic2, leaf: leaf1, attach: pci, pci: 3B:00.1}\n"
		"  - {name: a-very-long-host, leaf: leaf1, mtu: '9000'}\n"
		"links:\n"
		"  - {ends: [spine0, leaf0], rate: 2.5G, delay: 0, mtu: 1500, loss: 0.001}\n"
		"  - {ends: [leaf1, spine0], delay: 1.5us}\n"
		"qos:\n"
		"  dscp_map: [7, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 6, 0, 0, 0, 0, 0, 0, 0, 0,\n"
		"             0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n"
		"             0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]\n"
		"  lossless: []\n"
		"  control: 7\n"
		"  ecn: {enabled: false, kmin: 1KiB, kmax: 1MiB, pmax: 50%}\n"
		"events:\n"
		"  - {at: 3s, switch: spine0, action: up}\n"
		"  - {at: 1500ms, link: slow, action: down}\n"
		"  - {at: 0, link: leaf1-spine0, action: down}\n";
	char err[512];
	struct topo *t = NULL;
	if (topo_load_string(y, strlen(y), "units.yaml", &t, err, sizeof(err)))
		fail_msg("%s", err);
	const struct topo_switch *l0 = sw_named(t, "leaf0"), *l1 = sw_named(t, "leaf1"),
			       *s0 = sw_named(t, "spine0");
	assert_int_equal(l0->seed, 16);
	assert_int_equal(l0->algo, RL_HASH_XOR);      /* own key beats defaults.rtsw */
	assert_int_equal(l1->algo, RL_HASH_TOEPLITZ); /* defaults.rtsw */
	assert_int_equal(s0->algo, RL_HASH_CRC32);    /* built-in */
	assert_int_equal(l1->lb, TOPO_LB_FLOWLET);
	assert_int_equal(l1->flowlet_timeout_ns, 12500);
	assert_int_equal(s0->lb, TOPO_LB_PINNING);
	assert_string_equal(s0->buffer, "shallow");
	/* spine0 is listed first in its link: port numbering still per switch */
	assert_int_equal(l0->n_ports, 2);
	assert_string_equal(topo_node_name(t, l0->ports[1].peer), "spine0");

	const struct topo_link *slow = link_named(t, "slow");
	assert_int_equal(slow->rate_bps, 100000000ull);
	assert_int_equal(slow->delay_ns, 2000000ull);
	assert_true(slow->loss > 0.00499 && slow->loss < 0.00501);
	assert_int_equal(link_named(t, "vm1-leaf1")->rate_bps, 25000000000ull); /* host_link */
	const struct topo_link *sl = link_named(t, "spine0-leaf0");
	assert_int_equal(sl->rate_bps, 2500000000ull);
	assert_int_equal(sl->delay_ns, 0);
	assert_int_equal(sl->mtu, 1500);
	assert_int_equal(link_named(t, "leaf1-spine0")->delay_ns, 1500);
	assert_int_equal(link_named(t, "leaf1-spine0")->rate_bps, 100000000000ull);

	const struct topo_host *vm = host_named(t, "vm1"), *nic = host_named(t, "nic2"),
			     *lh = host_named(t, "a-very-long-host");
	assert_int_equal(vm->attach, TOPO_ATTACH_VHOST);
	assert_string_equal(vm->socket, "/tmp/rocelab-vm1.sock");
	assert_string_equal(nic->pci, "0000:3b:00.1");
	assert_int_equal(lh->mtu, 9000);
	assert_string_equal(lh->ifname, "rlh3"); /* "rl-a-very-long-host" is over 15 */
	assert_int_equal(lh->index, 2);
	assert_int_equal(lh->ipv4, IPV4(10, 0, 1, 3));

	assert_int_equal(t->qos.dscp_prio[0], 7);
	assert_int_equal(t->qos.dscp_prio[8], 6);
	assert_int_equal(t->qos.dscp_prio[63], 1);
	assert_int_equal(t->qos.lossless_mask, 0);
	assert_int_equal(t->qos.control_prio, 7);
	assert_int_equal(t->qos.dwrr_weight[7], 0);
	assert_int_equal(t->qos.dwrr_weight[6], 1);
	assert_false(t->qos.ecn);
	assert_int_equal(t->qos.ecn_kmin, 1024);
	assert_int_equal(t->qos.ecn_kmax, 1048576);
	assert_true(t->qos.ecn_pmax == 0.5);

	assert_int_equal(t->n_events, 3);
	assert_int_equal(t->events[0].at_ns, 0);
	assert_int_equal(t->events[1].at_ns, 1500000000ull);
	assert_int_equal(t->events[1].index, (uint32_t)topo_link_by_name(t, "slow"));
	assert_int_equal(t->events[2].target, TOPO_EVENT_SWITCH);
	assert_int_equal(t->events[2].index, (uint32_t)topo_switch_by_name(t, "spine0"));
	assert_true(t->events[2].up);
	topo_free(t);
}

static void test_unit_parsers(void **state)
{
	(void)state;
	uint64_t v = 77;
	assert_int_equal(topo_parse_rate("100G", &v), 0);
	assert_int_equal(v, 100000000000ull);
	assert_int_equal(topo_parse_rate("25Gbps", &v), 0);
	assert_int_equal(v, 25000000000ull);
	assert_int_equal(topo_parse_rate("100M", &v), 0);
	assert_int_equal(v, 100000000ull);
	assert_int_equal(topo_parse_rate("2.5G", &v), 0);
	assert_int_equal(v, 2500000000ull);
	assert_int_equal(topo_parse_rate("1500", &v), 0);
	assert_int_equal(v, 1500);
	assert_int_equal(topo_parse_rate("10 kbps", &v), 0);
	assert_int_equal(v, 10000);
	v = 77;
	static const char *const bad_rates[] = {
		"0", "0G", "-1G", "G", "100Q", "100g", "1.5", "1.0000000001G", "11T", "", "1e9",
		"99999999999999999999999", "1..5G", ".5G",
	};
	for (size_t i = 0; i < sizeof(bad_rates) / sizeof(bad_rates[0]); i++)
		if (topo_parse_rate(bad_rates[i], &v) != -1)
			fail_msg("rate '%s' accepted", bad_rates[i]);
	assert_int_equal(v, 77);
	assert_int_equal(topo_parse_rate(NULL, &v), -1);

	assert_int_equal(topo_parse_duration("2ms", &v), 0);
	assert_int_equal(v, 2000000ull);
	assert_int_equal(topo_parse_duration("1us", &v), 0);
	assert_int_equal(v, 1000);
	assert_int_equal(topo_parse_duration("1.5s", &v), 0);
	assert_int_equal(v, 1500000000ull);
	assert_int_equal(topo_parse_duration("250ns", &v), 0);
	assert_int_equal(v, 250);
	assert_int_equal(topo_parse_duration("0", &v), 0);
	assert_int_equal(v, 0);
	v = 77;
	static const char *const bad_times[] = {"5", "1.5ns", "2 min", "ms", "-1s", "2d", "86401s"};
	for (size_t i = 0; i < sizeof(bad_times) / sizeof(bad_times[0]); i++)
		if (topo_parse_duration(bad_times[i], &v) != -1)
			fail_msg("duration '%s' accepted", bad_times[i]);
	assert_int_equal(v, 77);
}

/* attach: dpdk keeps its devargs as written; ipv4:/mac: replace the derived addresses only. */
static void test_dpdk_host_and_own_addresses(void **state)
{
	(void)state;
	static const char y[] =
		L_SW "hosts:\n"
		"  - {name: h0, leaf: leaf0, attach: dpdk, devargs: 'net_pcap_a,rx_pcap=in.pcap',\n"
		"     ipv4: 10.99.0.1, mac: '52:54:00:99:00:01'}\n"
		"  - {name: h1, leaf: leaf1}\n" L_LI;
	char err[512], dev[TOPO_DEVNAME_MAX], a[16];
	struct topo *t = NULL;
	if (topo_load_string(y, strlen(y), "dpdk.yaml", &t, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(t->hosts[0].attach, TOPO_ATTACH_DPDK);
	assert_string_equal(t->hosts[0].devargs, "net_pcap_a,rx_pcap=in.pcap");
	assert_string_equal(topo_devargs_name(t->hosts[0].devargs, dev, sizeof(dev)), "net_pcap_a");
	assert_string_equal(topo_ipv4_str(t->hosts[0].ipv4, a, sizeof(a)), "10.99.0.1");
	static const uint8_t mac0[6] = {0x52, 0x54, 0x00, 0x99, 0x00, 0x01};
	assert_memory_equal(t->hosts[0].mac, mac0, 6);
	/* the gateway stays the leaf's; h1 keeps its derived addresses */
	assert_string_equal(topo_ipv4_str(t->hosts[0].gw_ipv4, a, sizeof(a)), "10.0.0.254");
	assert_string_equal(topo_ipv4_str(t->hosts[1].ipv4, a, sizeof(a)), "10.0.1.1");
	static const uint8_t mac1[6] = {0x02, 0x00, 0x0a, 0x00, 0x01, 0x01};
	assert_memory_equal(t->hosts[1].mac, mac1, 6);
	assert_string_equal(t->hosts[1].devargs, "");
	topo_free(t);
}

/* The annotated example of topologies/README.md is valid. */
static void test_readme_example(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof(path), "%s/README.md", RL_TOPO_DIR);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	char line[1024];
	int in = 0, blocks = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "```yaml", 7)) {
			in = 1;
			blocks++;
			continue;
		}
		if (in && !strncmp(line, "```", 3))
			in = 0;
		if (in && blocks == 1)
			fputs(line, m);
	}
	fclose(f);
	fclose(m);
	char err[512];
	struct topo *t = NULL;
	if (topo_load_string(text, len, "README.md example", &t, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(t->name, "lab1");
	assert_int_equal(t->n_hosts, 4);
	assert_int_equal(t->n_events, 3);
	topo_free(t);
	free(text);
}

/* Mutated and truncated versions of a valid file: never crash, always FILE:LINE on error. */
static void test_mutations_never_crash(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof(path), "%s/3tier-2zones.yaml", RL_TOPO_DIR);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char orig[16384];
	size_t n = fread(orig, 1, sizeof(orig) - 1, f);
	fclose(f);
	assert_true(n > 100);
	static const char alphabet[] = "{}[]:,-#&*!|>'\"%@` \t\n\r0123456789aGx.\\~?";
	static char buf[16384 + 64];
	uint64_t rng = 0x9E3779B97F4A7C15ull;
	unsigned loaded = 0, rejected = 0;
	for (int iter = 0; iter < 3000; iter++) {
		size_t len = n;
		memcpy(buf, orig, n);
		if (iter < 400) {
			/* truncations */
			len = (size_t)iter * n / 400;
		} else {
			int edits = 1 + (int)(rng % 4);
			for (int e = 0; e < edits; e++) {
				rng ^= rng << 13;
				rng ^= rng >> 7;
				rng ^= rng << 17;
				size_t pos = (size_t)(rng % len);
				if ((rng >> 40) % 5 == 0 && len > 10) {
					size_t cut = 1 + (size_t)((rng >> 20) % 8);
					if (pos + cut > len)
						cut = len - pos;
					memmove(buf + pos, buf + pos + cut, len - pos - cut);
					len -= cut;
				} else {
					buf[pos] = alphabet[(rng >> 32) % (sizeof(alphabet) - 1)];
				}
			}
		}
		char err[512];
		struct topo *t = NULL;
		int rc = topo_load_string(buf, len, "m.yaml", &t, err, sizeof(err));
		if (rc == 0) {
			assert_non_null(t);
			loaded++;
			topo_free(t);
		} else {
			assert_null(t);
			rejected++;
			int line = 0;
			if (sscanf(err, "m.yaml:%d: ", &line) != 1 || line < 1)
				fail_msg("message without FILE:LINE: '%s'", err);
		}
	}
	assert_true(rejected > 500);
	assert_true(loaded > 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_file),
		cmocka_unit_test(test_clos_4x4x16_file),
		cmocka_unit_test(test_3tier_file),
		cmocka_unit_test(test_net_null_bench_file),
		cmocka_unit_test(test_default_equals_clos),
		cmocka_unit_test(test_clos_builder),
		cmocka_unit_test(test_base_is_valid),
		cmocka_unit_test(test_bad_cases),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_units_and_overrides),
		cmocka_unit_test(test_unit_parsers),
		cmocka_unit_test(test_dpdk_host_and_own_addresses),
		cmocka_unit_test(test_readme_example),
		cmocka_unit_test(test_mutations_never_crash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
