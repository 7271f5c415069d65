/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Generated fabrics (topo_gen): the counts and rates asked for, and routes
 * that take every host to every other host, walked hop by hop through the
 * ECMP groups (every path of a small instance, sampled paths of a 1,024-host one).
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

#include "topo.h"
#include "topo_gen.h"
#include "topo_route.h"

/* Longest host-to-host path in switches: leaf, spine, ATSW, spine, leaf. */
#define MAX_SWITCH_HOPS 5

static struct topo *gen(const char *spec)
{
	struct topo_gen_params p;
	char err[512];
	topo_gen_init(&p);
	if (topo_gen_parse(&p, spec, err, sizeof(err)))
		fail_msg("%s: %s", spec, err);
	struct topo *t = topo_gen(&p, err, sizeof(err));
	if (!t)
		fail_msg("%s: %s", spec, err);
	return t;
}

static unsigned count_role(const struct topo *t, enum topo_role role)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < t->n_switches; i++)
		n += t->switches[i].role == role;
	return n;
}

/* Zone of a generated node from its name ("z1-leaf0", "z1-h3"); -1 for agg and Clos nodes. */
static int zone_of(const char *name)
{
	unsigned z;
	return sscanf(name, "z%u-", &z) == 1 ? (int)z : -1;
}

static uint64_t rate_of(const struct topo *t, const char *link)
{
	int i = topo_link_by_name(t, link);
	if (i < 0)
		fail_msg("no link %s", link);
	return t->links[i].rate_bps;
}

static void test_clos_counts_rates_attach(void **state)
{
	(void)state;
	struct topo *t = gen("spines=3,leaves=4,hosts=5,host-rate=25G,leaf-rate=100G,"
			     "host-delay=2us,attach=emulated,host-mtu=4200,profile=eecmp");
	assert_string_equal(t->name, "clos-3x4x5");
	assert_int_equal(t->n_switches, 7);
	assert_int_equal(count_role(t, TOPO_ROLE_RTSW), 4);
	assert_int_equal(count_role(t, TOPO_ROLE_CTSW), 3);
	assert_int_equal(t->n_hosts, 20);
	assert_int_equal(t->n_links, 20 + 4 * 3);
	assert_int_equal(rate_of(t, "h0-leaf0"), 25000000000ull);
	assert_int_equal(t->links[topo_link_by_name(t, "h0-leaf0")].delay_ns, 2000);
	assert_int_equal(rate_of(t, "leaf3-spine2"), 100000000000ull);
	for (uint32_t i = 0; i < t->n_hosts; i++) {
		assert_int_equal(t->hosts[i].attach, TOPO_ATTACH_EMULATED);
		assert_int_equal(t->hosts[i].mtu, 4200);
	}
	for (uint32_t i = 0; i < t->n_switches; i++)
		assert_int_equal(t->switches[i].profile, RL_PROFILE_EECMP);
	topo_free(t);
}

/* 16 hosts x 100G over 4 uplinks at 4:1 oversubscription: 100G uplinks. */
static void test_clos_oversub_sets_rate(void **state)
{
	(void)state;
	struct topo *t = gen("spines=4,leaves=2,hosts=16,leaf-oversub=4:1");
	assert_int_equal(rate_of(t, "leaf0-spine0"), 100000000000ull);
	topo_free(t);
	t = gen("spines=4,leaves=2,hosts=16,host-rate=400G,leaf-oversub=1:2");
	assert_int_equal(rate_of(t, "leaf1-spine3"), 800000000000ull);
	topo_free(t);
}

/* leaf-links=2: two links per leaf-spine pair, both members of the leaf's
 * ECMP group (2 x spines uplinks), counted in the oversubscription's rate. */
static void test_leaf_links_parallel(void **state)
{
	(void)state;
	struct topo *t = gen("zones=1,leaves=3,spines=4,atsw=1,hosts=16,host-rate=400G,"
			     "leaf-links=2,leaf-oversub=1.125");
	assert_string_equal(t->name, "ai-z1-l3-s4-a1-h16-k2");
	assert_int_equal(t->n_links, 48 + 3 * 4 * 2 + 4 * 1);
	assert_true(topo_link_by_name(t, "z0-leaf2-z0-spine3") >= 0);
	assert_true(topo_link_by_name(t, "z0-leaf2-z0-spine3-b1") >= 0);
	assert_true(topo_link_by_name(t, "z0-leaf2-z0-spine3-b2") < 0);
	/* 16 x 400G / (4 spines x 2 links x 1.125) = 711.11 G */
	assert_int_equal(rate_of(t, "z0-leaf0-z0-spine0-b1"), 711111111111ull);
	assert_int_equal(rate_of(t, "z0-leaf0-z0-spine0"), 711111111111ull);
	struct topo_routes *r = topo_route_create(t);
	assert_non_null(r);
	int leaf0 = topo_switch_by_name(t, "z0-leaf0"), spine0 = topo_switch_by_name(t, "z0-spine0");
	assert_true(leaf0 >= 0 && spine0 >= 0);
	unsigned n = 0;
	/* towards leaf index 1 (z0-leaf1) */
	assert_non_null(topo_route_group(r, (uint32_t)leaf0, 1, &n));
	assert_int_equal(n, 8);
	assert_non_null(topo_route_group(r, (uint32_t)spine0, 1, &n));
	assert_int_equal(n, 2);
	topo_route_free(r);
	topo_free(t);
	/* without the key: one link per pair, the name without -k */
	t = gen("spines=2,leaves=2,hosts=2,leaf-links=1");
	assert_string_equal(t->name, "clos-2x2x2");
	assert_int_equal(t->n_links, 4 + 4);
	topo_free(t);
}

/* With nothing but the counts the generator gives topo_clos()'s fabric. */
static void test_clos_plain_equals_topo_clos(void **state)
{
	(void)state;
	char err[512];
	struct topo *a = gen("spines=2,leaves=3,hosts=2");
	struct topo *b = topo_clos(2, 3, 2, err, sizeof(err));
	assert_non_null(b);
	assert_string_equal(a->name, b->name);
	assert_int_equal(a->n_links, b->n_links);
	for (uint32_t i = 0; i < a->n_links; i++) {
		assert_string_equal(a->links[i].name, b->links[i].name);
		assert_int_equal(a->links[i].rate_bps, b->links[i].rate_bps);
	}
	for (uint32_t i = 0; i < a->n_hosts; i++)
		assert_int_equal(a->hosts[i].ipv4, b->hosts[i].ipv4);
	topo_free(a);
	topo_free(b);
}

/* Meta's 1:7 between zones: 4 leaves x 400G below a spine, 2 ATSW uplinks above. */
static void test_zones_counts_rates(void **state)
{
	(void)state;
	struct topo *t = gen("zones=3,leaves=4,spines=2,atsw=2,hosts=3,host-rate=400G,"
			     "leaf-rate=400G,spine-oversub=1:7,spine-delay=10us");
	assert_string_equal(t->name, "ai-z3-l4-s2-a2-h3");
	assert_int_equal(count_role(t, TOPO_ROLE_RTSW), 12);
	assert_int_equal(count_role(t, TOPO_ROLE_CTSW), 6);
	assert_int_equal(count_role(t, TOPO_ROLE_ATSW), 2);
	assert_int_equal(t->n_hosts, 36);
	assert_int_equal(t->n_links, 36 + 3 * 4 * 2 + 3 * 2 * 2);
	/* 4 x 400G / (2 x 7) = 114.285714285... G, to the nearest bit/s */
	assert_int_equal(rate_of(t, "z2-spine1-agg1"), 114285714286ull);
	assert_int_equal(t->links[topo_link_by_name(t, "z0-spine0-agg0")].delay_ns, 10000);
	assert_int_equal(rate_of(t, "z1-leaf3-z1-spine0"), 400000000000ull);
	assert_int_equal(rate_of(t, "z1-h11-z1-leaf3"), 400000000000ull);
	topo_free(t);
}

struct walk {
	const struct topo_routes *r;
	uint32_t dst;
	unsigned zones, spines, atsw;
	unsigned long paths;  /* paths that reached dst */
	unsigned min_hops, max_hops;
};

/*
 * The group a switch should have toward dst: 1 at dst's leaf (the host
 * port) and at a spine of dst's zone (down to the leaf); `spines` at any
 * other leaf (up) and at an ATSW (down into dst's zone); `atsw` at a spine
 * of another zone (up). In a Clos (zones 0) a spine has 1, a leaf `spines`.
 */
static unsigned expected_group(const struct walk *w, uint32_t sw)
{
	const struct topo *t = w->r->topo;
	const struct topo_switch *s = &t->switches[sw];
	const struct topo_host *d = &t->hosts[w->dst];
	switch (s->role) {
	case TOPO_ROLE_RTSW:
		return d->leaf == sw ? 1 : w->spines;
	case TOPO_ROLE_CTSW:
		return w->zones && zone_of(s->name) != zone_of(d->name) ? w->atsw : 1;
	default:
		return w->spines;
	}
}

/* Follow every port of every group from sw on; hops = switches so far. */
static void walk_all(struct walk *w, uint32_t sw, unsigned hops)
{
	const struct topo *t = w->r->topo;
	unsigned n = 0;
	const uint16_t *ports = topo_route_ports(w->r, sw, w->dst, &n);
	assert_true(hops <= MAX_SWITCH_HOPS);
	if (n != expected_group(w, sw))
		fail_msg("%s toward %s: group of %u, expected %u", t->switches[sw].name,
			 t->hosts[w->dst].name, n, expected_group(w, sw));
	for (unsigned i = 0; i < n; i++) {
		struct topo_node_ref peer = t->switches[sw].ports[ports[i]].peer;
		if (peer.kind == TOPO_NODE_HOST) {
			assert_int_equal(peer.index, w->dst);
			w->paths++;
			w->min_hops = hops < w->min_hops ? hops : w->min_hops;
			w->max_hops = hops > w->max_hops ? hops : w->max_hops;
			continue;
		}
		walk_all(w, peer.index, hops + 1);
	}
}

/* Every path between every pair of hosts; returns the paths walked. */
static unsigned long walk_every_pair(const struct topo_routes *r, unsigned zones,
				     unsigned spines, unsigned atsw)
{
	const struct topo *t = r->topo;
	unsigned long total = 0;
	for (uint32_t src = 0; src < t->n_hosts; src++) {
		for (uint32_t dst = 0; dst < t->n_hosts; dst++) {
			if (src == dst)
				continue;
			struct walk w = {.r = r, .dst = dst, .zones = zones, .spines = spines,
					 .atsw = atsw, .min_hops = 99};
			walk_all(&w, t->hosts[src].leaf, 1);
			const struct topo_host *a = &t->hosts[src], *b = &t->hosts[dst];
			unsigned want = a->leaf == b->leaf ? 1
					: zone_of(a->name) == zone_of(b->name) ? 3
									      : 5;
			unsigned long want_paths = want == 1 ? 1
						   : want == 3 ? spines
							       : (unsigned long)spines * atsw * spines;
			assert_int_equal(w.min_hops, want);
			assert_int_equal(w.max_hops, want);
			assert_int_equal(w.paths, want_paths);
			total += w.paths;
		}
	}
	return total;
}

static void test_clos_routes_every_pair(void **state)
{
	(void)state;
	struct topo *t = gen("spines=3,leaves=4,hosts=3");
	struct topo_routes *r = topo_route_create(t);
	assert_non_null(r);
	/* 12 hosts: 12 x 2 pairs on the same leaf (1 path), the rest 3 paths */
	assert_int_equal(walk_every_pair(r, 0, 3, 0), 12 * 2 + (12 * 11 - 12 * 2) * 3);
	topo_route_free(r);
	topo_free(t);
}

static void test_zones_routes_every_pair(void **state)
{
	(void)state;
	struct topo *t = gen("zones=2,leaves=3,spines=2,atsw=3,hosts=2");
	struct topo_routes *r = topo_route_create(t);
	assert_non_null(r);
	/* 12 hosts; per host: 1 on its leaf, 4 in its zone (2 paths), 6 in the other (12) */
	assert_int_equal(walk_every_pair(r, 2, 2, 3), 12 * (1 * 1 + 4 * 2 + 6 * 12));
	topo_route_free(r);
	topo_free(t);
}

/* A deterministic pseudo-random sequence (LCG), so the samples are the same every run. */
static uint32_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

/* The scale: 2 zones x 32 leaves x 16 hosts; one sampled path per pair. */
static void test_zones_1024_hosts_sampled(void **state)
{
	(void)state;
	enum { SAMPLES = 20000 };
	struct topo *t = gen("zones=2,leaves=32,spines=8,atsw=4,hosts=16,host-rate=400G,"
			     "leaf-rate=400G,spine-oversub=7,attach=emulated");
	assert_int_equal(t->n_hosts, 1024);
	assert_int_equal(t->n_switches, 2 * (32 + 8) + 4);
	assert_int_equal(t->n_links, 1024 + 2 * 32 * 8 + 2 * 8 * 4);
	struct topo_routes *r = topo_route_create(t);
	assert_non_null(r);
	uint64_t seed = 1;
	unsigned cross = 0;
	for (int k = 0; k < SAMPLES; k++) {
		uint32_t src = lcg(&seed) % t->n_hosts, dst = lcg(&seed) % t->n_hosts;
		if (src == dst)
			continue;
		struct walk w = {.r = r, .dst = dst, .zones = 2, .spines = 8, .atsw = 4};
		uint32_t sw = t->hosts[src].leaf;
		unsigned hops = 1;
		for (;; hops++) {
			unsigned n = 0;
			const uint16_t *ports = topo_route_ports(r, sw, dst, &n);
			assert_int_equal(n, expected_group(&w, sw));
			struct topo_node_ref peer = t->switches[sw].ports[ports[lcg(&seed) % n]].peer;
			if (peer.kind == TOPO_NODE_HOST) {
				assert_int_equal(peer.index, dst);
				break;
			}
			sw = peer.index;
			assert_true(hops < MAX_SWITCH_HOPS);
		}
		bool other = zone_of(t->hosts[src].name) != zone_of(t->hosts[dst].name);
		if (other)
			assert_int_equal(hops, 5);
		cross += other;
	}
	assert_true(cross > SAMPLES / 4); /* the sample crossed zones often */
	topo_route_free(r);
	topo_free(t);
}

static void test_bad_specs(void **state)
{
	(void)state;
	static const struct {
		const char *spec;
		const char *msg;
	} bad[] = {
		{"spines=2,leaves=2", "hosts (per leaf) are required"},
		{"spines=0,leaves=2,hosts=2", "bad key=value 'spines=0'"},
		{"spines=2,leaves=2,hosts=254", "bad key=value 'hosts=254'"},
		{"spines=2,leaves=2,hosts=-1", "bad key=value 'hosts=-1'"},
		{"spines=2,leaves=2,hosts=2,colour=blue", "'colour=blue': unknown key"},
		{"spines=2,leaves=2,hosts=2,host-rate=0", "'host-rate=0': expected a rate"},
		{"spines=2,leaves=2,hosts=2,host-rate=-5G", "'host-rate=-5G'"},
		{"spines=2,leaves=2,hosts=2,leaf-delay=3", "'leaf-delay=3': expected a duration"},
		{"spines=2,leaves=2,hosts=2,leaf-oversub=0", "'leaf-oversub=0': expected a ratio"},
		{"spines=2,leaves=2,hosts=2,leaf-links=0", "'leaf-links=0': expected 1..16"},
		{"spines=2,leaves=2,hosts=2,leaf-links=17", "'leaf-links=17': expected 1..16"},
		{"zones=1,leaves=4096,spines=1,atsw=1,hosts=1,leaf-links=16", "more than 65535 ports"},
		{"spines=2,leaves=2,hosts=2,host-oversub=2", "'host-oversub=2': unknown key"},
		{"spines=2,leaves=2,hosts=2,attach=pci", "'attach=pci': expected veth"},
		{"spines=2,leaves=2,hosts=2,profile=md5", "'profile=md5'"},
		{"spines=2,leaves=2,hosts=2,name=a b", "'name=a b'"},
		{"spines=2,leaves=2,hosts=2,leaves", "'leaves': expected key=value"},
		{"spines=2,leaves=2,hosts=2,leaf-rate=100G,leaf-oversub=2", "not both"},
		{"spines=2,leaves=2,hosts=2,atsw=2", "atsw=2 needs zones"},
		{"zones=2,spines=2,leaves=2,hosts=2", "needs atsw"},
		{"spines=2,leaves=2,hosts=2,spine-rate=100G", "need zones"},
		{"zones=2,spines=2,leaves=2049,hosts=1,atsw=1", "4098 leaves in all: at most 4096"},
		{"zones=2,spines=2,leaves=2048,hosts=1,atsw=1", ""},
		{"zones=2,spines=1024,leaves=64,hosts=1,atsw=1", ""},
		{"zones=65,spines=1024,leaves=1,hosts=1,atsw=1", "more than 65535 ports"},
		/* servers of GPUs (issue 40) */
		{"servers=254,layout=rail,spines=1",
		 "layout=rail puts 254 GPUs on a leaf (one per server): more than a leaf's 253 host "
		 "ports"},
		{"servers=2,gpus=127,spines=1",
		 "layout=meta puts 254 GPUs on a leaf (2 servers per leaf): more than"},
		{"servers=1,gpus=127,spines=1", ""}, /* one server of 127 GPUs fits */
		{"servers=253,layout=rail,gpus=1,spines=1", ""},
		{"servers=2,spines=1,leaves=3", "makes 1 leaf/leaves of 16 hosts: leave out leaves="},
		{"servers=2,spines=1,leaves=1,hosts=16", ""}, /* what the layout gives anyway */
		{"servers=2,spines=1,attach=veth", "attach=veth: a server's GPUs are emulated hosts"},
		{"gpus=8,spines=1,leaves=1,hosts=1", "gpus= and layout= describe servers"},
		{"layout=rail,spines=1,leaves=1,hosts=1", "gpus= and layout= describe servers"},
		{"servers=2,spines=1,layout=ring", "'layout=ring': expected meta"},
		{"servers=0,spines=1", "'servers=0': expected 1..8192"},
		{"servers=2,spines=1,gpus=254", "'gpus=254': expected 1..253"},
		{"servers=8193,spines=1", "'servers=8193'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct topo_gen_params p;
		char err[512] = "";
		topo_gen_init(&p);
		int rc = topo_gen_parse(&p, bad[i].spec, err, sizeof(err));
		if (rc == 0)
			rc = topo_gen_resolve(&p, err, sizeof(err));
		if (!bad[i].msg[0]) { /* a control: near the limits but valid */
			assert_int_equal(rc, 0);
			continue;
		}
		if (rc != -EINVAL || !strstr(err, bad[i].msg))
			fail_msg("%s: rc %d, '%s' (expected '%s')", bad[i].spec, rc, err, bad[i].msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clos_counts_rates_attach),
		cmocka_unit_test(test_clos_oversub_sets_rate),
		cmocka_unit_test(test_clos_plain_equals_topo_clos),
		cmocka_unit_test(test_leaf_links_parallel),
		cmocka_unit_test(test_zones_counts_rates),
		cmocka_unit_test(test_clos_routes_every_pair),
		cmocka_unit_test(test_zones_routes_every_pair),
		cmocka_unit_test(test_zones_1024_hosts_sampled),
		cmocka_unit_test(test_bad_specs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
