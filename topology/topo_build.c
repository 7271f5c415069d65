/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Topology loader, part 4: the spec into a validated topology, in phases:
 * names resolved, ports numbered, the graph checked, addresses derived.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfc_mmu.h"
#include "topo_priv.h"

/* ------------------------------------------------------------- name maps */

struct nment {
	const char *name;
	uint32_t id;
};

struct nmap {
	uint32_t cap; /* power of two */
	struct nment *e;
};

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 16777619u;
	}
	return h;
}

static int nmap_init(struct nmap *m, uint32_t n)
{
	m->cap = 16;
	while (m->cap < 2 * n + 2)
		m->cap *= 2;
	m->e = calloc(m->cap, sizeof(*m->e));
	return m->e ? 0 : -1;
}

static void nmap_free(struct nmap *m)
{
	free(m->e);
	m->e = NULL;
}

/* Id of name, or -1. */
static long nmap_get(const struct nmap *m, const char *name)
{
	for (uint32_t i = fnv1a(name) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].name)
			return -1;
		if (strcmp(m->e[i].name, name) == 0)
			return m->e[i].id;
	}
}

/* Insert name -> id unless present; returns the existing id, or -1 when inserted. */
static long nmap_put(struct nmap *m, const char *name, uint32_t id)
{
	for (uint32_t i = fnv1a(name) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].name) {
			m->e[i].name = name;
			m->e[i].id = id;
			return -1;
		}
		if (strcmp(m->e[i].name, name) == 0)
			return m->e[i].id;
	}
}

/* ------------------------------------------------------------- building */

static void set_mac(uint8_t m[6], uint8_t a, uint8_t b, uint8_t c2, uint8_t d, uint8_t e,
		    uint8_t f)
{
	m[0] = a;
	m[1] = b;
	m[2] = c2;
	m[3] = d;
	m[4] = e;
	m[5] = f;
}

static void leaf_ipv6(uint8_t a[16], uint32_t leaf, uint16_t last)
{
	memset(a, 0, 16);
	a[0] = 0xfd;
	a[6] = (uint8_t)(leaf >> 8);
	a[7] = (uint8_t)leaf;
	a[14] = (uint8_t)(last >> 8);
	a[15] = (uint8_t)last;
}

static int role_rank(const struct topo *t, struct topo_node_ref r)
{
	/* host 0, rtsw 1, ctsw 2, atsw 3: a link must join adjacent tiers */
	return r.kind == TOPO_NODE_HOST ? 0 : 1 + (int)t->switches[r.index].role;
}

static const char *node_kind_word(const struct topo *t, struct topo_node_ref r)
{
	return r.kind == TOPO_NODE_HOST ? "host" : topo_role_name(t->switches[r.index].role);
}

static int event_cmp(const void *a, const void *b)
{
	const struct topo_event *x = a, *y = b;
	if (x->at_ns != y->at_ns)
		return x->at_ns < y->at_ns ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line; /* stable: file order */
}

/*
 * topo_build(): from the parsed spec to the topology, in phases. Each phase
 * validates what it builds and returns 0, or -1 after topo_yaml_fail() recorded the
 * first error with its line. Later phases rely on what earlier ones set.
 */
struct builder {
	struct topo_yaml_ctx *c;
	struct spec *s;
	struct topo *t;
	struct nmap nodes;  /* switch and host names -> switch index, or ns + host index */
	struct nmap lnames; /* link names -> link index */
	struct nmap uniq;   /* "n:netns", "i:ifname", "s:socket", "p:pci" -> host; owns its keys */
	uint32_t *hlinks;   /* [host] links attached to it */
};

/* Phase 1: a fabric needs switches and hosts; the QoS settings agree with each other. */
static int build_qos(struct builder *b)
{
	struct topo_yaml_ctx *c = b->c;
	struct spec *s = b->s;
	struct topo *t = b->t;

	if (s->n_sw == 0)
		return topo_yaml_fail(c, s->root_line,
				      "the topology has no switches ('switches:' list)");
	if (s->n_ho == 0)
		return topo_yaml_fail(c, s->root_line, "the topology has no hosts ('hosts:' list)");
	t->qos = s->qos;
	if (!s->dwrr_set) {
		for (int p = 0; p < TOPO_NUM_PRIO; p++)
			t->qos.dwrr_weight[p] = p == t->qos.control_prio ? 0 : 1;
		return 0;
	}
	for (int p = 0; p < TOPO_NUM_PRIO; p++) {
		if (p == t->qos.control_prio && t->qos.dwrr_weight[p] != 0)
			return topo_yaml_fail(c, s->dwrr_line,
					      "dwrr: weight of priority %d must be 0: it is the "
					      "strict-priority control class",
					      p);
		if (p != t->qos.control_prio && t->qos.dwrr_weight[p] == 0)
			return topo_yaml_fail(c, s->dwrr_line,
					      "dwrr: weight of priority %d must be 1..1000", p);
	}
	return 0;
}

/* Phase 2: the arrays and name maps, sized from the spec. */
static int build_alloc(struct builder *b)
{
	struct spec *s = b->s;
	struct topo *t = b->t;
	uint32_t ns = s->n_sw, nh = s->n_ho;
	uint32_t nl = s->n_li + nh; /* upper bound: every host's shorthand link */

	t->switches = calloc(ns, sizeof(*t->switches));
	t->hosts = calloc(nh, sizeof(*t->hosts));
	t->links = calloc(nl, sizeof(*t->links));
	t->events = calloc(s->n_ev ? s->n_ev : 1, sizeof(*t->events));
	b->hlinks = calloc(nh, sizeof(*b->hlinks));
	if (!t->switches || !t->hosts || !t->links || !t->events || !b->hlinks ||
	    nmap_init(&b->nodes, ns + nh) || nmap_init(&b->lnames, nl) ||
	    nmap_init(&b->uniq, 4 * nh))
		return topo_yaml_fail(b->c, 0, "out of memory");
	t->n_switches = ns;
	t->n_hosts = nh;
	return 0;
}

/* Phase 3: switches: unique names, settings merged (built-in < defaults < role < own). */
static int build_switches(struct builder *b)
{
	struct topo_yaml_ctx *c = b->c;
	struct spec *s = b->s;

	for (uint32_t i = 0; i < s->n_sw; i++) {
		struct sw_spec *w = &s->sw[i];
		struct topo_switch *sw = &b->t->switches[i];
		long prev = nmap_put(&b->nodes, w->name, i);
		if (prev >= 0)
			return topo_yaml_fail(c, w->name_line,
					      "duplicate name '%s' (first defined on line %d)",
					      w->name, s->sw[prev].name_line);
		struct sw_vals v;
		topo_builtin_switch(&v, w->role);
		topo_sw_merge(&v, &s->d_switch);
		topo_sw_merge(&v, &s->d_role[w->role]);
		topo_sw_merge(&v, &w->v);
		memcpy(sw->name, w->name, sizeof(sw->name));
		sw->role = (enum topo_role)w->role;
		sw->partition = w->partition;
		memcpy(sw->buffer, v.buffer, sizeof(sw->buffer));
		sw->buffer_profile = HAS(&v, SW_BUFFER) ? v.buffer_profile
							: pfc_buffer_profile_find(v.buffer);
		if (!sw->buffer_profile)
			return topo_yaml_fail(
				c, w->line,
				"switch '%s': built-in buffer profile '%s' is unknown to pfc/",
				w->name, v.buffer);
		sw->profile = (enum rl_hash_profile)v.profile;
		sw->algo = (enum rl_hash_algo)v.algo;
		/* a per-switch seed by default, so that tiers do not polarize */
		sw->seed = HAS(&v, SW_SEED) ? v.seed : fnv1a(w->name);
		sw->lb = (enum topo_lb)v.lb;
		sw->flowlet_timeout_ns = v.flowlet_ns;
		sw->resilient_buckets = v.buckets;
		memcpy(sw->pipeline, v.pipeline, sizeof(sw->pipeline));
		sw->leaf_index = -1;
		sw->loopback4 = 0xAC100000u | i;
		set_mac(sw->mac, 0x02, 0x01, (uint8_t)(i >> 8), (uint8_t)i, 0xff, 0xff);
		sw->line = w->line;
	}
	return 0;
}

/* Phase 4: host names, unique among switches and hosts. */
static int build_host_names(struct builder *b)
{
	struct spec *s = b->s;
	uint32_t ns = s->n_sw;

	for (uint32_t i = 0; i < s->n_ho; i++) {
		struct host_spec *h = &s->ho[i];
		long prev = nmap_put(&b->nodes, h->name, ns + i);
		if (prev >= 0) {
			int pl = prev < (long)ns ? s->sw[prev].name_line : s->ho[prev - ns].name_line;
			return topo_yaml_fail(b->c, h->name_line,
					      "duplicate name '%s' (first defined on line %d)",
					      h->name, pl);
		}
	}
	return 0;
}

/* Both ends of link spec l resolved to nodes of lk. */
static int link_ends(struct builder *b, const struct link_spec *l, struct topo_link *lk)
{
	uint32_t ns = b->s->n_sw;

	for (int e = 0; e < 2; e++) {
		long id = nmap_get(&b->nodes, l->end[e]);
		if (id < 0) {
			if (l->host >= 0)
				return topo_yaml_fail(
					b->c, l->line,
					"host '%s': leaf '%s' is not a switch in this topology",
					l->end[0], l->end[1]);
			return topo_yaml_fail(b->c, l->line,
					      "link: unknown node '%s' (not a switch or host)",
					      l->end[e]);
		}
		lk->end[e].kind = id < (long)ns ? TOPO_NODE_SWITCH : TOPO_NODE_HOST;
		lk->end[e].index = id < (long)ns ? (uint32_t)id : (uint32_t)(id - ns);
	}
	if (!strcmp(l->end[0], l->end[1]))
		return topo_yaml_fail(b->c, l->line, "link: '%s' is linked to itself", l->end[0]);
	return 0;
}

/* The link joins adjacent tiers: host-rtsw, rtsw-ctsw or ctsw-atsw. */
static int link_tiers(struct builder *b, const struct link_spec *l, const struct topo_link *lk)
{
	const struct topo *t = b->t;
	int ra = role_rank(t, lk->end[0]), rb = role_rank(t, lk->end[1]);

	if (ra == 0 && rb == 0)
		return topo_yaml_fail(
			b->c, l->line,
			"link: joins two hosts ('%s', '%s'); a host attaches to an rtsw", l->end[0],
			l->end[1]);
	if (ra == 0 || rb == 0) {
		int he = ra == 0 ? 0 : 1;
		struct topo_node_ref sref = lk->end[1 - he];
		if (t->switches[sref.index].role != TOPO_ROLE_RTSW)
			return topo_yaml_fail(
				b->c, l->line,
				"host '%s' is attached to %s '%s': hosts attach to an rtsw (leaf)",
				l->end[he], node_kind_word(t, sref), l->end[1 - he]);
	} else if (ra - rb != 1 && rb - ra != 1) {
		return topo_yaml_fail(
			b->c, l->line,
			"link: %s '%s' cannot connect to %s '%s' (allowed: host-rtsw, rtsw-ctsw, "
			"ctsw-atsw)",
			node_kind_word(t, lk->end[0]), l->end[0], node_kind_word(t, lk->end[1]),
			l->end[1]);
	}
	return 0;
}

/* Link k's port number at each end; a host end records the link (once only). */
static int link_ports(struct builder *b, const struct link_spec *l, uint32_t k)
{
	struct topo *t = b->t;
	struct topo_link *lk = &t->links[k];

	for (int e = 0; e < 2; e++) {
		if (lk->end[e].kind == TOPO_NODE_SWITCH) {
			struct topo_switch *sw = &t->switches[lk->end[e].index];
			if (sw->n_ports == TOPO_MAX_PORTS)
				return topo_yaml_fail(b->c, l->line,
						      "switch '%s' has too many ports (at most %d)",
						      sw->name, TOPO_MAX_PORTS);
			lk->port[e] = sw->n_ports++;
			continue;
		}
		uint32_t hi = lk->end[e].index;
		if (b->hlinks[hi]++) {
			struct topo_link *first = &t->links[t->hosts[hi].link];
			return topo_yaml_fail(
				b->c, l->line,
				"host '%s' is attached twice: to '%s' (line %d) and to '%s'",
				b->s->ho[hi].name,
				topo_node_name(t, first->end[first->end[0].kind == TOPO_NODE_HOST]),
				first->line, l->end[1 - e]);
		}
		t->hosts[hi].link = k;
		lk->port[e] = 0;
	}
	return 0;
}

/* Link spec l becomes link k: ends, tiers, a unique name, settings, ports. */
static int build_link(struct builder *b, const struct link_spec *l, uint32_t k)
{
	struct topo_link *lk = &b->t->links[k];

	if (link_ends(b, l, lk) || link_tiers(b, l, lk))
		return -1;
	if (l->named)
		memcpy(lk->name, l->name, sizeof(lk->name));
	else
		snprintf(lk->name, sizeof(lk->name), "%s-%s", l->end[0], l->end[1]);
	long prev = nmap_put(&b->lnames, lk->name, k);
	if (prev >= 0)
		return topo_yaml_fail(b->c, l->named ? l->name_line : l->line,
				      "duplicate link name '%s' (first used on line %d)%s",
				      lk->name, b->t->links[prev].line,
				      l->named ? "" : "; give parallel links a 'name'");
	bool has_host = lk->end[0].kind == TOPO_NODE_HOST || lk->end[1].kind == TOPO_NODE_HOST;
	struct link_vals v;
	topo_builtin_link(&v);
	topo_link_merge(&v, &b->s->d_link);
	if (has_host)
		topo_link_merge(&v, &b->s->d_host_link);
	topo_link_merge(&v, &l->v);
	lk->rate_bps = v.rate;
	lk->delay_ns = v.delay;
	lk->mtu = v.mtu;
	lk->loss = v.loss;
	lk->line = l->line;
	return link_ports(b, l, k);
}

/* Phase 5: links: hosts' `leaf:` shorthand first (host order), then `links:`. */
static int build_links(struct builder *b)
{
	struct spec *s = b->s;
	uint32_t nh = s->n_ho, n_links = 0;

	for (uint32_t k = 0; k < nh + s->n_li; k++) {
		struct link_spec *l;
		if (k < nh) {
			if (!s->ho[k].has_leaf)
				continue;
			l = &s->ho[k].link;
			memcpy(l->end[0], s->ho[k].name, TOPO_NAME_MAX);
			l->line = s->ho[k].leaf_line;
			l->host = k;
		} else {
			l = &s->li[k - nh];
		}
		if (build_link(b, l, n_links))
			return -1;
		n_links++;
	}
	b->t->n_links = n_links;
	return 0;
}

/* Phase 6: every switch's port table (peer, peer port, MAC) from the links. */
static int build_ports(struct builder *b)
{
	struct topo *t = b->t;

	for (uint32_t i = 0; i < t->n_switches; i++) {
		struct topo_switch *sw = &t->switches[i];
		sw->ports = calloc(sw->n_ports ? sw->n_ports : 1, sizeof(*sw->ports));
		if (!sw->ports)
			return topo_yaml_fail(b->c, 0, "out of memory");
	}
	for (uint32_t k = 0; k < t->n_links; k++) {
		struct topo_link *lk = &t->links[k];
		for (int e = 0; e < 2; e++) {
			if (lk->end[e].kind != TOPO_NODE_SWITCH)
				continue;
			uint32_t si = lk->end[e].index;
			struct topo_port *p = &t->switches[si].ports[lk->port[e]];
			p->link = k;
			p->peer = lk->end[1 - e];
			p->peer_port = lk->port[1 - e];
			set_mac(p->mac, 0x02, 0x01, (uint8_t)(si >> 8), (uint8_t)si,
				(uint8_t)(lk->port[e] >> 8), (uint8_t)lk->port[e]);
		}
	}
	return 0;
}

/* Phase 7: role sanity beyond single links: a linked ctsw reaches at least one rtsw. */
static int check_spines(struct builder *b)
{
	const struct topo *t = b->t;

	for (uint32_t i = 0; i < t->n_switches; i++) {
		const struct topo_switch *sw = &t->switches[i];
		if (sw->role != TOPO_ROLE_CTSW)
			continue;
		bool has_leaf = false;
		for (uint16_t p = 0; p < sw->n_ports; p++)
			if (sw->ports[p].peer.kind == TOPO_NODE_SWITCH &&
			    t->switches[sw->ports[p].peer.index].role == TOPO_ROLE_RTSW)
				has_leaf = true;
		if (!has_leaf && sw->n_ports)
			return topo_yaml_fail(
				b->c, sw->line,
				"ctsw '%s' has no link to an rtsw: a spine connects leaves",
				sw->name);
	}
	return 0;
}

/* Phase 8: leaves numbered in switch order; their subnets and gateways. */
static int build_leaves(struct builder *b)
{
	struct topo *t = b->t;
	uint32_t ns = t->n_switches;

	for (uint32_t i = 0; i < ns; i++)
		if (t->switches[i].role == TOPO_ROLE_RTSW)
			t->n_leaves++;
	if (t->n_leaves == 0)
		return topo_yaml_fail(b->c, b->s->root_line,
				      "the topology has no rtsw (leaf) switch");
	if (t->n_leaves > TOPO_MAX_LEAVES)
		return topo_yaml_fail(b->c, b->s->root_line,
				      "too many rtsw switches (%" PRIu32 ", at most %d)",
				      t->n_leaves, TOPO_MAX_LEAVES);
	t->leaves = calloc(t->n_leaves, sizeof(*t->leaves));
	if (!t->leaves)
		return topo_yaml_fail(b->c, 0, "out of memory");
	for (uint32_t i = 0, L = 0; i < ns; i++) {
		struct topo_switch *sw = &t->switches[i];
		if (sw->role != TOPO_ROLE_RTSW)
			continue;
		sw->leaf_index = (int)L;
		t->leaves[L] = i;
		sw->subnet4 = (10u << 24) | (L << 8);
		sw->gw_ipv4 = sw->subnet4 | 254;
		leaf_ipv6(sw->gw_ipv6, L, 0xfe);
		L++;
	}
	return 0;
}

/* Phase 9: every host on exactly one leaf; its index under the leaf by port order. */
static int build_host_leaves(struct builder *b)
{
	struct spec *s = b->s;
	struct topo *t = b->t;

	for (uint32_t i = 0; i < t->n_hosts; i++)
		if (b->hlinks[i] == 0)
			return topo_yaml_fail(
				b->c, s->ho[i].line,
				"host '%s' is not attached to any leaf (give it 'leaf:' or a link)",
				s->ho[i].name);
	for (uint32_t i = 0; i < t->n_switches; i++) {
		struct topo_switch *sw = &t->switches[i];
		for (uint16_t p = 0; p < sw->n_ports; p++) {
			if (sw->ports[p].peer.kind != TOPO_NODE_HOST)
				continue;
			uint32_t hi = sw->ports[p].peer.index;
			struct topo_host *h = &t->hosts[hi];
			if (sw->n_hosts == TOPO_MAX_HOSTS_PER_LEAF)
				return topo_yaml_fail(
					b->c, s->ho[hi].line,
					"leaf '%s' has more than %d hosts (the address scheme's limit)",
					sw->name, TOPO_MAX_HOSTS_PER_LEAF);
			h->leaf = i;
			h->leaf_port = p;
			h->index = sw->n_hosts++;
		}
	}
	return 0;
}

/*
 * Claim an attach-specific name ("n:netns", "i:ifname", ...) for host i;
 * on a clash, name the host that has it. uniq owns the copies.
 */
static int claim_unique(struct builder *b, uint32_t i, int line, const char *key_name,
			char tag, const char *val)
{
	char key[TOPO_PATH_MAX + 8];
	snprintf(key, sizeof(key), "%c:%s", tag, val);
	char *dup = strdup(key);
	if (!dup)
		return topo_yaml_fail(b->c, 0, "out of memory");
	long prev = nmap_put(&b->uniq, dup, i);
	if (prev < 0)
		return 0;
	free(dup);
	return topo_yaml_fail(b->c, line, "host '%s': %s '%s' is already used by host '%s'",
			      b->t->hosts[i].name, key_name, val, b->t->hosts[prev].name);
}

/* Keys that apply to one attach kind only are not set on another. */
static int host_attach_keys(struct builder *b, const struct topo_host *h,
			    const struct host_vals *v)
{
	static const struct {
		int field, attach;
		const char *key;
	} only[] = {
		{HO_NETNS, TOPO_ATTACH_VETH, "netns"},
		{HO_IFNAME, TOPO_ATTACH_VETH, "ifname"},
		{HO_SOCKET, TOPO_ATTACH_VHOST, "socket"},
		{HO_PCI, TOPO_ATTACH_PCI, "pci"},
		{HO_DEVARGS, TOPO_ATTACH_DPDK, "devargs"},
	};
	for (size_t k = 0; k < sizeof(only) / sizeof(only[0]); k++)
		if (HAS(v, only[k].field) && v->attach != only[k].attach)
			return topo_yaml_fail(
				b->c, v->line[only[k].field],
				"host '%s': '%s' applies only to attach: %s (this host is %s)",
				h->name, only[k].key, topo_attach_names[only[k].attach],
				topo_attach_names[v->attach]);
	return 0;
}

/* Attach-specific names (netns/ifname, socket, pci), defaulted, unique across hosts. */
static int host_attach_names(struct builder *b, uint32_t i, const struct host_vals *v)
{
	struct topo_host *h = &b->t->hosts[i];
	int line = b->s->ho[i].line;

	switch (h->attach) {
	case TOPO_ATTACH_VETH:
		snprintf(h->netns, sizeof(h->netns), "%s", HAS(v, HO_NETNS) ? v->netns : h->name);
		if (HAS(v, HO_IFNAME))
			snprintf(h->ifname, sizeof(h->ifname), "%s", v->ifname);
		else if (strlen(h->name) <= TOPO_IFNAME_MAX - 1 - 3)
			snprintf(h->ifname, sizeof(h->ifname), "rl-%.*s", TOPO_IFNAME_MAX - 1 - 3, h->name);
		else
			snprintf(h->ifname, sizeof(h->ifname), "rlh%" PRIu32, i);
		/* one interface per namespace: netns names are unique too */
		if (claim_unique(b, i, HAS(v, HO_NETNS) ? v->line[HO_NETNS] : line, "netns", 'n',
				 h->netns))
			return -1;
		return claim_unique(b, i, HAS(v, HO_IFNAME) ? v->line[HO_IFNAME] : line, "ifname",
				    'i', h->ifname);
	case TOPO_ATTACH_VHOST:
		if (HAS(v, HO_SOCKET))
			snprintf(h->socket, sizeof(h->socket), "%s", v->socket);
		else
			snprintf(h->socket, sizeof(h->socket), "/tmp/rocelab-%s.sock", h->name);
		return claim_unique(b, i, HAS(v, HO_SOCKET) ? v->line[HO_SOCKET] : line, "socket",
				    's', h->socket);
	case TOPO_ATTACH_PCI:
		if (!HAS(v, HO_PCI))
			return topo_yaml_fail(b->c, line,
					      "host '%s': attach: pci needs a 'pci' address",
					      h->name);
		snprintf(h->pci, sizeof(h->pci), "%s", v->pci);
		return claim_unique(b, i, v->line[HO_PCI], "pci", 'p', h->pci);
	case TOPO_ATTACH_DPDK: {
		char dev[TOPO_DEVNAME_MAX];
		if (!HAS(v, HO_DEVARGS))
			return topo_yaml_fail(b->c, line,
					      "host '%s': attach: dpdk needs 'devargs' (e.g. "
					      "net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap)",
					      h->name);
		snprintf(h->devargs, sizeof(h->devargs), "%s", v->devargs);
		/* EAL refuses a second device of one name: say so here, with the line */
		return claim_unique(b, i, v->line[HO_DEVARGS], "DPDK device", 'd',
				    topo_devargs_name(h->devargs, dev, sizeof(dev)));
	}
	default:
		return 0;
	}
}

/* Host i's addresses and gateway, derived from its leaf and index (see topo.h). */
static void host_addresses(struct topo *t, uint32_t i)
{
	struct topo_host *h = &t->hosts[i];
	const struct topo_switch *leaf = &t->switches[h->leaf];
	uint32_t L = (uint32_t)leaf->leaf_index;

	h->ipv4 = leaf->subnet4 | (uint32_t)(h->index + 1);
	leaf_ipv6(h->ipv6, L, (uint16_t)(h->index + 1));
	set_mac(h->mac, 0x02, 0x00, 0x0a, (uint8_t)(L >> 8), (uint8_t)L, (uint8_t)(h->index + 1));
	h->gw_ipv4 = leaf->gw_ipv4;
	memcpy(h->gw_ipv6, leaf->gw_ipv6, 16);
	memcpy(h->gw_mac, leaf->ports[h->leaf_port].mac, 6);
}

/*
 * A host's own ipv4:/mac: (a capture replayed through a dpdk host carries
 * the addresses of the machines it was taken on). The fabric routes by /32
 * and rewrites the MAC towards the host, so only uniqueness matters, checked
 * over all hosts by claim_addresses(). Returns whether the host has one.
 */
static bool host_own_addresses(struct topo_host *h, const struct host_vals *v)
{
	if (HAS(v, HO_IPV4))
		h->ipv4 = v->ipv4;
	if (HAS(v, HO_MAC))
		memcpy(h->mac, v->mac, sizeof(h->mac));
	return HAS(v, HO_IPV4) || HAS(v, HO_MAC);
}

/* Every host's IPv4 address and MAC differ from every other's. */
static int claim_addresses(struct builder *b)
{
	for (uint32_t i = 0; i < b->t->n_hosts; i++) {
		const struct topo_host *h = &b->t->hosts[i];
		char a[INET_ADDRSTRLEN], m[sizeof("xx:xx:xx:xx:xx:xx")];
		snprintf(m, sizeof(m), "%02x:%02x:%02x:%02x:%02x:%02x", h->mac[0], h->mac[1],
			 h->mac[2], h->mac[3], h->mac[4], h->mac[5]);
		if (claim_unique(b, i, h->line, "ipv4", '4', topo_ipv4_str(h->ipv4, a, sizeof(a))) ||
		    claim_unique(b, i, h->line, "mac", 'm', m))
			return -1;
	}
	return 0;
}

/* Phase 10: host settings (built-in < defaults < own), attach names, addresses. */
static int build_hosts(struct builder *b)
{
	struct topo *t = b->t;
	bool own = false;

	for (uint32_t i = 0; i < t->n_hosts; i++) {
		struct host_spec *hs = &b->s->ho[i];
		struct topo_host *h = &t->hosts[i];
		struct host_vals v;
		topo_builtin_host(&v);
		topo_host_merge(&v, &b->s->d_host);
		topo_host_merge(&v, &hs->v);
		memcpy(h->name, hs->name, sizeof(h->name));
		h->attach = (enum topo_attach)v.attach;
		h->mtu = v.mtu;
		h->line = hs->line;
		if (host_attach_keys(b, h, &v))
			return -1;
		const struct topo_link *lk = &t->links[h->link];
		if (h->mtu > lk->mtu)
			return topo_yaml_fail(b->c, HAS(&v, HO_MTU) ? v.line[HO_MTU] : hs->line,
					      "host '%s': mtu %" PRIu32
					      " is larger than its link's mtu %" PRIu32,
					      h->name, h->mtu, lk->mtu);
		if (host_attach_names(b, i, &v))
			return -1;
		host_addresses(t, i);
		own |= host_own_addresses(h, &v);
	}
	/* derived addresses are unique by construction: check only when a host has its own */
	return own ? claim_addresses(b) : 0;
}

/* Phase 10b: servers of GPUs (topo_server.c): needs the hosts' attach kinds. */
static int build_servers(struct builder *b)
{
	return topo_build_servers(b->c, b->s, b->t);
}

/* Phase 11: every switch reachable from switch 0 (BFS over switch-switch links). */
static int check_connected(struct builder *b)
{
	const struct topo *t = b->t;
	uint32_t ns = t->n_switches;
	uint32_t *queue = calloc(ns, sizeof(*queue));
	uint8_t *seen = calloc(ns, 1);
	int rc = 0;

	if (!queue || !seen) {
		rc = topo_yaml_fail(b->c, 0, "out of memory");
		goto out;
	}
	uint32_t head = 0, tail = 0;
	queue[tail++] = 0;
	seen[0] = 1;
	while (head < tail) {
		const struct topo_switch *sw = &t->switches[queue[head++]];
		for (uint16_t p = 0; p < sw->n_ports; p++) {
			struct topo_node_ref r = sw->ports[p].peer;
			if (r.kind == TOPO_NODE_SWITCH && !seen[r.index]) {
				seen[r.index] = 1;
				queue[tail++] = r.index;
			}
		}
	}
	for (uint32_t i = 0; i < ns && rc == 0; i++)
		if (!seen[i])
			rc = topo_yaml_fail(
				b->c, t->switches[i].line,
				"switch '%s' is not connected to the rest of the fabric (no path from '%s')",
				t->switches[i].name, t->switches[0].name);
out:
	free(seen);
	free(queue);
	return rc;
}

/* Phase 12: scheduled events resolved to links or switches, sorted by time. */
static int build_events(struct builder *b)
{
	struct spec *s = b->s;
	struct topo *t = b->t;
	uint32_t ns = s->n_sw;

	for (uint32_t i = 0; i < s->n_ev; i++) {
		struct ev_spec *e = &s->ev[i];
		struct topo_event *ev = &t->events[i];
		ev->at_ns = e->at;
		ev->target = (enum topo_event_target)e->target;
		ev->up = e->action == 1;
		ev->line = e->line;
		long id = e->target == TOPO_EVENT_LINK ? nmap_get(&b->lnames, e->name)
						       : nmap_get(&b->nodes, e->name);
		if (e->target == TOPO_EVENT_SWITCH && id >= (long)ns)
			return topo_yaml_fail(b->c, e->name_line,
					      "switch: '%s' is a host, not a switch", e->name);
		if (id < 0) {
			if (e->target == TOPO_EVENT_LINK)
				return topo_yaml_fail(
					b->c, e->name_line,
					"link: unknown link '%s' (links are named 'a-b' after their "
					"ends unless given a 'name')",
					e->name);
			return topo_yaml_fail(b->c, e->name_line, "switch: unknown switch '%s'",
					      e->name);
		}
		ev->index = (uint32_t)id;
	}
	t->n_events = s->n_ev;
	qsort(t->events, t->n_events, sizeof(*t->events), event_cmp);
	return 0;
}

/* The spec as a validated topology in t; 0, or -1 with the error recorded in c. */
int topo_build(struct topo_yaml_ctx *c, struct spec *s, struct topo *t)
{
	typedef int (*phase_fn)(struct builder *b);
	static const phase_fn phases[] = {
		build_qos,         build_alloc, build_switches, build_host_names,
		build_links,       build_ports, check_spines,   build_leaves,
		build_host_leaves, build_hosts, build_servers, check_connected, build_events,
	};
	struct builder b = {.c = c, .s = s, .t = t};
	int rc = 0;

	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]) && rc == 0; i++)
		rc = phases[i](&b);
	if (b.uniq.e)
		for (uint32_t i = 0; i < b.uniq.cap; i++)
			free((char *)(uintptr_t)b.uniq.e[i].name);
	nmap_free(&b.nodes);
	nmap_free(&b.lnames);
	nmap_free(&b.uniq);
	free(b.hlinks);
	return rc;
}
