/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Servers of GPUs (issue 40): where the generated layouts put each GPU of
 * each server (Meta's 2 servers per RTSW and the rail-optimised one, 4
 * servers x 8 GPUs, leaves and ports worked out by hand below), the query
 * API, the server parameters and their defaults, and every refusal of a
 * file with its FILE:LINE (the generator's refusals: test_gen.c).
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

static struct topo *load(const char *yaml)
{
	char err[512];
	struct topo *t = NULL;
	if (topo_load_string(yaml, strlen(yaml), "s.yaml", &t, err, sizeof(err)))
		fail_msg("%s", err);
	return t;
}

/* Host `name` sits on switch `leaf`, port `port`, as GPU `gpu` of server `server`. */
static void expect_gpu(const struct topo *t, const char *name, const char *leaf, unsigned port,
		       const char *server, int gpu)
{
	int h = topo_host_by_name(t, name);
	if (h < 0)
		fail_msg("no host %s", name);
	const struct topo_host *ho = &t->hosts[h];
	if (strcmp(t->switches[ho->leaf].name, leaf) || ho->leaf_port != port)
		fail_msg("%s on %s port %u, expected %s port %u", name, t->switches[ho->leaf].name,
			 ho->leaf_port, leaf, port);
	assert_int_equal(topo_host_server(t, (uint32_t)h), topo_server_by_name(t, server));
	assert_int_equal(topo_host_gpu(t, (uint32_t)h), gpu);
	assert_int_equal(ho->attach, TOPO_ATTACH_EMULATED);
}

/* Where GPU g of server k should be: its leaf's name and port. */
typedef void (*place_fn)(unsigned k, unsigned g, char leaf[16], unsigned *port);

/* Every GPU of 4 servers x 8 where place says, as GPU g of server sK. */
static void expect_4x8(const struct topo *t, place_fn place)
{
	for (unsigned k = 0; k < 4; k++)
		for (unsigned g = 0; g < 8; g++) {
			char name[16], leaf[16], server[8];
			unsigned port;
			snprintf(name, sizeof(name), "s%u-g%u", k, g);
			snprintf(server, sizeof(server), "s%u", k);
			place(k, g, leaf, &port);
			expect_gpu(t, name, leaf, port, server, (int)g);
		}
}

/* Meta, by hand: server 0 leaf0 ports 0-7, 1 leaf0 8-15, 2 leaf1 0-7, 3 leaf1 8-15. */
static void meta_place(unsigned k, unsigned g, char leaf[16], unsigned *port)
{
	static const struct {
		const char *leaf;
		unsigned first_port;
	} where[4] = {{"leaf0", 0}, {"leaf0", 8}, {"leaf1", 0}, {"leaf1", 8}};
	snprintf(leaf, 16, "%s", where[k].leaf);
	*port = where[k].first_port + g;
}

/* Rail: GPU g on leaf g, server k on port k. */
static void rail_place(unsigned k, unsigned g, char leaf[16], unsigned *port)
{
	snprintf(leaf, 16, "leaf%u", g);
	*port = k;
}

/*
 * Meta: 4 servers, 2 per RTSW: leaf0 holds s0 (ports 0-7) and s1 (8-15),
 * leaf1 s2 (0-7) and s3 (8-15); each leaf's 2 uplinks are ports 16, 17.
 */
static void test_meta_layout_4x8(void **state)
{
	(void)state;
	struct topo *t = gen("servers=4,gpus=8,layout=meta,spines=2");
	assert_string_equal(t->name, "meta-4x8-s2");
	assert_int_equal(t->n_hosts, 32);
	assert_int_equal(t->n_leaves, 2);
	assert_int_equal(topo_servers(t), 4);
	expect_4x8(t, meta_place);
	expect_gpu(t, "s3-g7", "leaf1", 15, "s3", 7);
	expect_gpu(t, "s1-g0", "leaf0", 8, "s1", 0);
	const struct topo_switch *l1 = &t->switches[topo_switch_by_name(t, "leaf1")];
	assert_int_equal(l1->n_ports, 18);
	assert_int_equal(l1->n_hosts, 16);
	assert_string_equal(topo_node_name(t, l1->ports[16].peer), "spine0");
	assert_string_equal(topo_node_name(t, l1->ports[17].peer), "spine1");
	topo_free(t);
}

/* Rail: GPU i of every server on leaf i (8 leaves), server k on port k (4 per leaf). */
static void test_rail_layout_4x8(void **state)
{
	(void)state;
	struct topo *t = gen("servers=4,gpus=8,layout=rail,spines=4,host-rate=400G,leaf-rate=400G");
	assert_string_equal(t->name, "rail-4x8-s4");
	assert_int_equal(t->n_hosts, 32);
	assert_int_equal(t->n_leaves, 8);
	assert_int_equal(topo_servers(t), 4);
	expect_4x8(t, rail_place);
	expect_gpu(t, "s0-g0", "leaf0", 0, "s0", 0);
	expect_gpu(t, "s3-g0", "leaf0", 3, "s3", 0);
	expect_gpu(t, "s2-g5", "leaf5", 2, "s2", 5);
	expect_gpu(t, "s3-g7", "leaf7", 3, "s3", 7);
	for (uint32_t L = 0; L < t->n_leaves; L++) {
		assert_int_equal(t->switches[t->leaves[L]].n_hosts, 4);
		assert_int_equal(t->switches[t->leaves[L]].n_ports, 4 + 4);
	}
	topo_free(t);
}

/* Meta with 3 servers: the last leaf holds one server; zones name their servers apart. */
static void test_odd_servers_and_zones(void **state)
{
	(void)state;
	struct topo *t = gen("servers=3,gpus=4,spines=1");
	assert_int_equal(t->n_leaves, 2);
	assert_int_equal(t->n_hosts, 12);
	expect_gpu(t, "s2-g3", "leaf1", 3, "s2", 3);
	assert_int_equal(t->switches[t->leaves[1]].n_hosts, 4);
	topo_free(t);

	t = gen("zones=2,servers=2,gpus=2,layout=rail,spines=1,atsw=1");
	assert_int_equal(topo_servers(t), 4);
	assert_int_equal(t->n_leaves, 4);
	expect_gpu(t, "z1-s1-g1", "z1-leaf1", 1, "z1-s1", 1);
	expect_gpu(t, "z0-s1-g0", "z0-leaf0", 1, "z0-s1", 0);
	topo_free(t);
}

static const char mixed[] = "servers: {gpus_per_server: 2, nvlink_rate: 1800G,\n"  /* 1 */
			    "          nvlink_latency: 1us, pcie_rate: 400G,\n"       /* 2 */
			    "          pcie_latency: 500ns}\n"                        /* 3 */
			    "switches: [{name: leaf0, role: rtsw}]\n"                 /* 4 */
			    "hosts:\n"                                                /* 5 */
			    "  - {name: v0, leaf: leaf0}\n"                           /* 6 */
			    "  - {name: b1, leaf: leaf0, attach: emulated, server: b, gpu: 1}\n"
			    "  - {name: a0, leaf: leaf0, attach: emulated, server: a, gpu: 0}\n"
			    "  - {name: b0, leaf: leaf0, attach: emulated, server: b, gpu: 0}\n"
			    "  - {name: a1, leaf: leaf0, attach: emulated, server: a, gpu: 1}\n";

/* Servers in the order of their first GPU in the file; GPUs in index order. */
static void test_query_api(void **state)
{
	(void)state;
	struct topo *t = load(mixed);
	assert_int_equal(topo_servers(t), 2);
	assert_int_equal(topo_server_by_name(t, "b"), 0); /* b1 comes before a0 */
	assert_int_equal(topo_server_by_name(t, "a"), 1);
	assert_int_equal(topo_server_by_name(t, "c"), -1);
	assert_int_equal(topo_server_by_name(t, NULL), -1);
	uint32_t n = 99;
	const uint32_t *h = topo_server_hosts(t, 0, &n);
	assert_non_null(h);
	assert_int_equal(n, 2);
	assert_int_equal(h[0], 3); /* b0: host 3 in the file */
	assert_int_equal(h[1], 1); /* b1 */
	h = topo_server_hosts(t, 1, &n);
	assert_int_equal(h[0], 2); /* a0 */
	assert_int_equal(h[1], 4); /* a1 */
	assert_null(topo_server_hosts(t, 2, &n));
	assert_int_equal(n, 0);
	assert_int_equal(topo_host_server(t, 0), -1); /* v0: a plain veth host */
	assert_int_equal(topo_host_gpu(t, 0), -1);
	assert_int_equal(topo_host_server(t, 4), 1);
	assert_int_equal(topo_host_gpu(t, 4), 1);
	assert_int_equal(topo_host_server(t, 5), -1); /* out of range */
	assert_int_equal(topo_host_gpu(t, 5), -1);
	char sum[256];
	topo_summary(t, sum, sizeof(sum));
	assert_string_equal(sum, "s: 1 switches (1 rtsw, 0 ctsw, 0 atsw), 5 hosts, 5 links, "
				 "0 events, 2 servers x 2 GPUs");
	topo_free(t);
	assert_int_equal(topo_servers(NULL), 0);
	assert_int_equal(topo_host_server(NULL, 0), -1);
}

static void test_parameters(void **state)
{
	(void)state;
	struct topo *t = load(mixed);
	const struct topo_server_params *p = &t->server_params;
	assert_int_equal(p->gpus_per_server, 2);
	assert_int_equal(p->nvlink_bps, 1800000000000ull);
	assert_int_equal(p->nvlink_lat_ns, 1000);
	assert_int_equal(p->pcie_bps, 400000000000ull);
	assert_int_equal(p->pcie_lat_ns, 500);
	topo_free(t);
	/* H100 defaults: NVLink 4 450 GB/s = 3.6 Tbit/s, 600 ns; PCIe Gen5 x16
	   63,015,384,615 B/s x 8 = 504,123,076,920 bit/s, 0 ns */
	t = gen("servers=1,gpus=8,spines=1");
	p = &t->server_params;
	assert_int_equal(p->gpus_per_server, 8);
	assert_int_equal(p->nvlink_bps, 3600000000000ull);
	assert_int_equal(p->nvlink_lat_ns, 600);
	assert_int_equal(p->pcie_bps, 504123076920ull);
	assert_int_equal(p->pcie_lat_ns, 0);
	topo_free(t);
}

/* A GPU's NIC sends at min(link, servers.pcie_rate); a host that is no GPU
 * at its link's rate. mixed: 400G PCIe above its 100G links; the same file
 * with pcie_rate: 50G binds its GPUs (not v0). */
static void test_nic_rate(void **state)
{
	(void)state;
	struct topo *t = load(mixed);
	uint64_t link = t->links[t->hosts[0].link].rate_bps;
	assert_true(link < 400000000000ull);
	for (uint32_t h = 0; h < 5; h++)
		assert_int_equal(topo_host_nic_rate_bps(t, h), link);
	assert_int_equal(topo_host_nic_rate_bps(t, 5), 0);
	assert_int_equal(topo_host_nic_rate_bps(NULL, 0), 0);
	topo_free(t);
	char yaml[sizeof(mixed) + 16], *at;
	snprintf(yaml, sizeof(yaml), "%s", mixed);
	at = strstr(yaml, "pcie_rate: 400G");
	assert_non_null(at);
	memcpy(at, "pcie_rate:  50G", 15);
	char err[512] = "";
	assert_int_equal(topo_load_string(yaml, strlen(yaml), "s.yaml", &t, err, sizeof(err)), 0);
	assert_true(link > 50000000000ull);
	assert_int_equal(topo_host_nic_rate_bps(t, 0), link); /* v0: no GPU */
	for (uint32_t h = 1; h < 5; h++)
		assert_int_equal(topo_host_nic_rate_bps(t, h), 50000000000ull);
	topo_free(t);
}

/* Each bad file is refused with exactly this message (FILE:LINE first). */
static void test_refusals(void **state)
{
	(void)state;
	static const char head[] = "switches: [{name: leaf0, role: rtsw}]\n" /* line 1 */
				   "defaults: {host: {attach: emulated}}\n"  /* line 2 */
				   "hosts:\n"                                /* line 3 */
				   "  - {name: a0, leaf: leaf0, server: a, gpu: 0}\n"; /* line 4 */
	static const struct {
		const char *tail;
		const char *msg;
	} bad[] = {
		{"  - {name: a1, leaf: leaf0, server: a, gpu: 0}\n",
		 "s.yaml:5: host 'a1': server 'a' has GPU 0 twice (also host 'a0', line 4)"},
		{"  - {name: a1, leaf: leaf0, server: a, gpu: 1, attach: veth}\n",
		 "s.yaml:5: host 'a1': GPU 1 of server 'a' is attach: veth; a server's GPUs are "
		 "emulated hosts (attach: emulated, each its own NIC)"},
		{"servers: {gpus_per_server: 254}\n",
		 "s.yaml:5: gpus_per_server: a server of 254 GPUs is larger than a leaf's 253 host "
		 "ports"},
		{"servers: {gpus_per_server: 0}\n", "s.yaml:5: gpus_per_server: 0 is out of range"},
		{"  - {name: a1, leaf: leaf0, server: a, gpu: 8}\n",
		 "s.yaml:5: host 'a1': gpu 8 is out of range: a server has 8 GPUs (0..7, "
		 "gpus_per_server under servers:)"},
		{"  - {name: a1, leaf: leaf0, server: a, gpu: 253}\n",
		 "s.yaml:5: gpu: 253 is out of range (0..252)"},
		{"  - {name: a1, leaf: leaf0, server: a}\n",
		 "s.yaml:5: host 'a1': 'server' needs 'gpu' (its GPU index, 0..7)"},
		{"  - {name: a1, leaf: leaf0, gpu: 1}\n",
		 "s.yaml:5: host 'a1': 'gpu' needs 'server' (the server it is a GPU of)"},
		{"  - {name: a1, leaf: leaf0, server: a, gpu: 1}\n",
		 "s.yaml:4: server 'a' has 2 of its 8 GPUs: no host is its gpu 2 (every GPU of a "
		 "server is a host)"},
		{"servers: {nvlink_rate: 3Q}\n", "s.yaml:5: nvlink_rate: '3Q' has a bad or missing unit"},
		{"servers: {pcie_latency: 5}\n", "s.yaml:5: pcie_latency: '5'"},
		{"servers: {pcie_rate: 0}\n", "s.yaml:5: pcie_rate: must not be zero"},
		{"servers: {pcie_rate: -5G}\n", "s.yaml:5: pcie_rate: '-5G' is not a valid rate"},
		{"servers: {gpus: 8}\n", "s.yaml:5: unknown key 'gpus' in servers"},
		{"  - {name: a1, leaf: leaf0, server: 'a b', gpu: 1}\n", "s.yaml:5: server: "},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char yaml[1024], err[512] = "";
		struct topo *t = NULL;
		snprintf(yaml, sizeof(yaml), "%s%s", head, bad[i].tail);
		int rc = topo_load_string(yaml, strlen(yaml), "s.yaml", &t, err, sizeof(err));
		if (rc != -1 || t || strncmp(err, bad[i].msg, strlen(bad[i].msg)))
			fail_msg("case %zu: rc %d, '%s' (expected '%s...')", i, rc, err, bad[i].msg);
	}
}

/* topo_gen_resolve() twice (topo_gen() resolves what the tool resolved) gives the same. */
static void test_generator_resolve_twice(void **state)
{
	(void)state;
	struct topo_gen_params p;
	char err[512] = "";
	topo_gen_init(&p);
	assert_int_equal(topo_gen_parse(&p, "servers=3,gpus=4,spines=1", err, sizeof(err)), 0);
	assert_int_equal(topo_gen_resolve(&p, err, sizeof(err)), 0);
	assert_int_equal(p.leaves, 2); /* ceil(3 / 2) */
	assert_int_equal(p.hosts, 8);  /* 2 servers x 4 GPUs on a full leaf */
	assert_int_equal(p.attach, TOPO_ATTACH_EMULATED);
	assert_int_equal(topo_gen_resolve(&p, err, sizeof(err)), 0);
	assert_int_equal(p.leaves, 2);
	assert_int_equal(p.hosts, 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_meta_layout_4x8),
		cmocka_unit_test(test_rail_layout_4x8),
		cmocka_unit_test(test_odd_servers_and_zones),
		cmocka_unit_test(test_query_api),
		cmocka_unit_test(test_nic_rate),
		cmocka_unit_test(test_parameters),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_generator_resolve_twice),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
