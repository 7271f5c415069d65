/* SPDX-License-Identifier: BSD-3-Clause */
/* Routes: ECMP groups from BFS, failures, address -> host lookup. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo_route.h"
#include "topo.h"

#define IPV4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

static struct topo *load_shipped(const char *file)
{
	char path[512], err[512];
	snprintf(path, sizeof(path), "%s/%s", RL_TOPO_DIR, file);
	struct topo *t = NULL;
	if (topo_load(path, &t, err, sizeof(err)))
		fail_msg("%s", err);
	return t;
}

static uint32_t S(const struct topo *t, const char *name)
{
	int i = topo_switch_by_name(t, name);
	if (i < 0)
		fail_msg("no switch %s", name);
	return (uint32_t)i;
}

static uint32_t H(const struct topo *t, const char *name)
{
	int i = topo_host_by_name(t, name);
	if (i < 0)
		fail_msg("no host %s", name);
	return (uint32_t)i;
}

static uint32_t LK(const struct topo *t, const char *name)
{
	int i = topo_link_by_name(t, name);
	if (i < 0)
		fail_msg("no link %s", name);
	return (uint32_t)i;
}

/* The group of sw toward host, as "p4,p5" (or "" when empty) for readable asserts. */
static const char *group_str(const struct topo_routes *r, const char *sw, const char *host)
{
	static char buf[256];
	unsigned n = 99;
	const uint16_t *p = topo_route_ports(r, S(r->topo, sw), H(r->topo, host), &n);
	assert_true(n == 0 || p != NULL);
	size_t off = 0;
	buf[0] = '\0';
	for (unsigned k = 0; k < n; k++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%sp%u", k ? "," : "", p[k]);
	return buf;
}

/* Name of the peer behind port p of sw. */
static const char *peer(const struct topo *t, const char *sw, unsigned p)
{
	const struct topo_switch *s = &t->switches[S(t, sw)];
	assert_true(p < s->n_ports);
	return topo_node_name(t, s->ports[p].peer);
}

static void test_default_groups(void **state)
{
	(void)state;
	struct topo *t = load_shipped("default.yaml");
	struct topo_routes *r = topo_route_create(t);
	assert_non_null(r);
	/* a leaf: 2-port ECMP group to the other leaf's hosts, 1 port to its own */
	for (int h = 4; h < 8; h++) {
		char name[8];
		snprintf(name, sizeof(name), "h%d", h);
		assert_string_equal(group_str(r, "leaf0", name), "p4,p5");
		assert_int_equal(topo_route_dist(r, S(t, "leaf0"), H(t, name)), 3);
	}
	assert_string_equal(peer(t, "leaf0", 4), "spine0");
	assert_string_equal(peer(t, "leaf0", 5), "spine1");
	assert_string_equal(group_str(r, "leaf0", "h0"), "p0");
	assert_string_equal(group_str(r, "leaf0", "h3"), "p3");
	assert_string_equal(group_str(r, "leaf1", "h6"), "p2");
	assert_string_equal(peer(t, "leaf1", 2), "h6");
	assert_int_equal(topo_route_dist(r, S(t, "leaf0"), H(t, "h0")), 1);
	assert_string_equal(group_str(r, "leaf1", "h1"), "p4,p5");
	/* spines: one port down to each leaf */
	assert_string_equal(group_str(r, "spine0", "h0"), "p0");
	assert_string_equal(group_str(r, "spine0", "h5"), "p1");
	assert_string_equal(group_str(r, "spine1", "h7"), "p1");
	assert_string_equal(peer(t, "spine1", 1), "leaf1");
	assert_int_equal(topo_route_dist(r, S(t, "spine1"), H(t, "h7")), 2);
	/* per-leaf group == per-host group for every host of that leaf */
	unsigned n;
	const uint16_t *g = topo_route_group(r, S(t, "leaf0"), 1, &n);
	assert_int_equal(n, 2);
	assert_int_equal(g[0], 4);
	assert_int_equal(g[1], 5);
	topo_route_group(r, S(t, "leaf0"), 0, &n);
	assert_int_equal(n, 0); /* the leaf itself */
	/* bad indexes */
	n = 7;
	assert_null(topo_route_ports(r, 99, 0, &n));
	assert_int_equal(n, 0);
	assert_null(topo_route_ports(r, 0, 99, &n));
	assert_null(topo_route_group(r, 0, 2, &n));
	assert_int_equal(topo_route_set_link(r, 12, false), -1);
	assert_int_equal(topo_route_set_switch(r, 4, false), -1);
	assert_int_equal(topo_route_dist(r, 0, 99), TOPO_ROUTE_UNREACHABLE);
	topo_route_free(r);
	topo_free(t);
}

static void test_link_down_shrinks_group(void **state)
{
	(void)state;
	struct topo *t = load_shipped("default.yaml");
	struct topo_routes *r = topo_route_create(t);
	assert_non_null(r);
	uint32_t l0 = S(t, "leaf0"), l1 = S(t, "leaf1"), s0 = S(t, "spine0");

	int changed = topo_route_set_link(r, LK(t, "leaf0-spine0"), false);
	/* leaf0->leaf1 and leaf1->leaf0 lose spine0, spine0->leaf0 detours */
	assert_int_equal(changed, 3);
	assert_true(r->changed[l0 * r->n_leaves + 1]);
	assert_true(r->changed[l1 * r->n_leaves + 0]);
	assert_true(r->changed[s0 * r->n_leaves + 0]);
	assert_false(r->changed[s0 * r->n_leaves + 1]);
	assert_string_equal(group_str(r, "leaf0", "h4"), "p5");
	assert_string_equal(group_str(r, "leaf1", "h0"), "p5");
	assert_string_equal(group_str(r, "leaf0", "h0"), "p0"); /* local unchanged */
	/* spine0 reaches leaf0 only through leaf1 and spine1 now (not valley-free) */
	assert_string_equal(group_str(r, "spine0", "h0"), "p1");
	assert_int_equal(topo_route_dist(r, s0, H(t, "h0")), 4);
	assert_string_equal(group_str(r, "spine0", "h4"), "p1");
	/* setting the same state again changes nothing */
	assert_int_equal(topo_route_set_link(r, LK(t, "leaf0-spine0"), false), 0);

	/* back up: the 2-port group returns */
	assert_int_equal(topo_route_set_link(r, LK(t, "leaf0-spine0"), true), 3);
	assert_string_equal(group_str(r, "leaf0", "h4"), "p4,p5");
	assert_string_equal(group_str(r, "spine0", "h0"), "p0");

	/* a whole spine down */
	assert_true(topo_route_set_switch(r, S(t, "spine1"), false) > 0);
	assert_string_equal(group_str(r, "leaf0", "h4"), "p4");
	assert_string_equal(group_str(r, "leaf1", "h2"), "p4");
	assert_string_equal(group_str(r, "spine1", "h2"), ""); /* a down switch forwards nothing */
	/* and then the other spine's link: leaves are cut off from each other */
	topo_route_set_link(r, LK(t, "leaf1-spine0"), false);
	assert_string_equal(group_str(r, "leaf0", "h4"), "");
	assert_int_equal(topo_route_dist(r, l0, H(t, "h4")), TOPO_ROUTE_UNREACHABLE);
	assert_string_equal(group_str(r, "leaf0", "h1"), "p1");
	topo_route_set_switch(r, S(t, "spine1"), true);
	assert_string_equal(group_str(r, "leaf0", "h4"), "p5");

	/* a host link down: that host is unreachable everywhere, its neighbours are not */
	topo_route_set_link(r, LK(t, "leaf1-spine0"), true);
	topo_route_set_link(r, LK(t, "h5-leaf1"), false);
	assert_string_equal(group_str(r, "leaf1", "h5"), "");
	assert_string_equal(group_str(r, "leaf0", "h5"), "");
	assert_string_equal(group_str(r, "spine0", "h5"), "");
	assert_string_equal(group_str(r, "leaf0", "h6"), "p4,p5");
	/* the leaf down: all its hosts */
	topo_route_set_link(r, LK(t, "h5-leaf1"), true);
	topo_route_set_switch(r, l1, false);
	assert_string_equal(group_str(r, "leaf0", "h6"), "");
	assert_string_equal(group_str(r, "spine0", "h4"), "");
	assert_string_equal(group_str(r, "leaf0", "h2"), "p2");
	topo_route_free(r);
	topo_free(t);
}

static void test_clos_4x4x4_groups(void **state)
{
	(void)state;
	char err[256];
	struct topo *t = topo_clos(4, 4, 4, err, sizeof(err));
	assert_non_null(t);
	struct topo_routes *r = topo_route_create(t);
	assert_non_null(r);
	assert_string_equal(group_str(r, "leaf2", "h0"), "p4,p5,p6,p7");
	assert_string_equal(group_str(r, "leaf2", "h9"), "p1");
	assert_string_equal(group_str(r, "spine3", "h9"), "p2");
	topo_route_set_switch(r, S(t, "spine1"), false);
	assert_string_equal(group_str(r, "leaf2", "h0"), "p4,p6,p7");
	topo_route_free(r);
	topo_free(t);
}

static void test_3tier_groups_and_events(void **state)
{
	(void)state;
	struct topo *t = load_shipped("3tier-2zones.yaml");
	struct topo_routes *r = topo_route_create(t);
	assert_non_null(r);
	/* cross-zone: leaf -> spine -> agg -> spine -> leaf -> host */
	assert_string_equal(group_str(r, "z0-leaf0", "z1-h0"), "p4,p5");
	assert_int_equal(topo_route_dist(r, S(t, "z0-leaf0"), H(t, "z1-h0")), 5);
	assert_string_equal(group_str(r, "z0-spine0", "z1-h0"), "p2,p3");
	assert_string_equal(peer(t, "z0-spine0", 2), "agg0");
	assert_string_equal(peer(t, "z0-spine0", 3), "agg1");
	assert_string_equal(group_str(r, "z0-spine0", "z0-h5"), "p1"); /* same zone: no agg */
	assert_string_equal(group_str(r, "agg0", "z1-h5"), "p2,p3");
	assert_string_equal(peer(t, "agg0", 2), "z1-spine0");
	/* the file's first event takes z0-spine0-agg0 down */
	assert_true(topo_route_apply_event(r, &t->events[0]) > 0);
	assert_string_equal(group_str(r, "z0-spine0", "z1-h0"), "p3");
	assert_string_equal(group_str(r, "z0-leaf0", "z1-h0"), "p4,p5"); /* still 5 links via both */
	/* agg0 reaches zone 0's leaves only via z0-spine1 now */
	assert_string_equal(group_str(r, "agg0", "z0-h0"), "p1");
	assert_true(topo_route_apply_event(r, &t->events[1]) > 0);
	assert_string_equal(group_str(r, "z0-spine0", "z1-h0"), "p2,p3");
	topo_route_free(r);
	topo_free(t);
}

static void test_host_lookup(void **state)
{
	(void)state;
	struct topo *t = load_shipped("default.yaml");
	struct topo_routes *r = topo_route_create(t);
	assert_non_null(r);
	for (uint32_t h = 0; h < t->n_hosts; h++) {
		assert_int_equal(topo_route_host_by_ipv4(r, t->hosts[h].ipv4), (int)h);
		assert_int_equal(topo_route_host_by_ipv6(r, t->hosts[h].ipv6), (int)h);
	}
	assert_int_equal(topo_route_host_by_ipv4(r, IPV4(10, 0, 1, 2)), (int)H(t, "h5"));
	assert_int_equal(topo_route_host_by_ipv4(r, IPV4(10, 0, 1, 5)), -1);   /* no 5th host */
	assert_int_equal(topo_route_host_by_ipv4(r, IPV4(10, 0, 1, 0)), -1);
	assert_int_equal(topo_route_host_by_ipv4(r, IPV4(10, 0, 1, 254)), -1); /* the gateway */
	assert_int_equal(topo_route_host_by_ipv4(r, IPV4(10, 0, 2, 1)), -1);   /* no 3rd leaf */
	assert_int_equal(topo_route_host_by_ipv4(r, IPV4(11, 0, 0, 1)), -1);
	assert_int_equal(topo_route_host_by_ipv4(r, IPV4(10, 1, 0, 1)), -1);   /* leaf 256 */
	uint8_t a[16];
	memcpy(a, t->hosts[0].ipv6, 16);
	a[3] = 1;
	assert_int_equal(topo_route_host_by_ipv6(r, a), -1);
	memcpy(a, t->hosts[0].gw_ipv6, 16);
	assert_int_equal(topo_route_host_by_ipv6(r, a), -1);
	topo_route_free(r);
	topo_free(t);
}

static void test_print(void **state)
{
	(void)state;
	struct topo *t = load_shipped("default.yaml");
	struct topo_routes *r = topo_route_create(t);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	topo_route_print(r, f);
	fclose(f);
	assert_non_null(strstr(text, "leaf0 (rtsw, 6 ports)"));
	assert_non_null(strstr(text, "p4->spine0 p5->spine1"));
	assert_non_null(strstr(text, "10.0.1.0/24"));
	assert_non_null(strstr(text, "p0->h0"));
	free(text);
	topo_route_set_switch(r, S(t, "spine0"), false);
	f = open_memstream(&text, &len);
	topo_route_print(r, f);
	fclose(f);
	assert_non_null(strstr(text, "spine0 (ctsw, 2 ports, DOWN)"));
	assert_null(strstr(text, "p4->spine0 p5->spine1"));
	assert_non_null(strstr(text, "unreachable"));
	free(text);
	topo_route_free(r);
	topo_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_groups),
		cmocka_unit_test(test_link_down_shrinks_group),
		cmocka_unit_test(test_clos_4x4x4_groups),
		cmocka_unit_test(test_3tier_groups_and_events),
		cmocka_unit_test(test_host_lookup),
		cmocka_unit_test(test_print),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
