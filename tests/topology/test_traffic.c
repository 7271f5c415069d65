/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Traffic files (topo_traffic): entries become the shorthand specs of
 * --gen/--rdma/--coll with their FILE:LINE; bad files give FILE:LINE and
 * what is wrong (table-driven, as the bad-topology tests).
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
#include "topo_traffic.h"

/* Two veth hosts under leaf0, four emulated NICs under leaf1. */
static const char fabric[] = "name: mixed\n"
			     "switches: [{name: leaf0, role: rtsw}, {name: leaf1, role: rtsw},\n"
			     "           {name: spine0, role: ctsw}]\n"
			     "hosts:\n"
			     "  - {name: h0, leaf: leaf0}\n"
			     "  - {name: h1, leaf: leaf0}\n"
			     "  - {name: e0, leaf: leaf1, attach: emulated}\n"
			     "  - {name: e1, leaf: leaf1, attach: emulated}\n"
			     "  - {name: e2, leaf: leaf1, attach: emulated}\n"
			     "  - {name: e3, leaf: leaf1, attach: emulated}\n"
			     "links: [[leaf0, spine0], [leaf1, spine0]]\n";

static int setup(void **state)
{
	char err[512];
	struct topo *t = NULL;
	if (topo_load_string(fabric, strlen(fabric), "mixed.yaml", &t, err, sizeof(err)))
		fail_msg("%s", err);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	topo_free(*state);
	return 0;
}

static struct topo_traffic *load_ok(const struct topo *t, const char *yaml)
{
	char err[512];
	struct topo_traffic *tr = NULL;
	if (topo_traffic_load_string(yaml, strlen(yaml), "t.yaml", t, &tr, err, sizeof(err)))
		fail_msg("%s", err);
	return tr;
}

static void test_specs_and_lines(void **state)
{
	const struct topo *t = *state;
	struct topo_traffic *tr = load_ok(
		t, "# a workload\n"
		   "generators:\n"
		   "  - {src: h0, dst: e1, proto: roce, rate: 10G, size: 1078, count: 5}\n"
		   "  - src: h1\n"
		   "    dst: h0\n"
		   "    start: 2ms\n"
		   "rdma:\n"
		   "  - {src: e0, dst: e1, qps: 4}\n"
		   "  - {dst: e3, src: e2}\n"
		   "collectives:\n"
		   "  - {op: allreduce, hosts: [e0, e1, e2], sizes: 1M:8M, chunk: 64K}\n"
		   "  - {op: allgather}\n"
		   "  - {hosts: all, data: off}\n");
	static const struct {
		enum topo_traffic_kind kind;
		const char *where, *spec;
	} want[] = {
		{TOPO_TRAFFIC_GEN, "t.yaml:3", "h0>e1:proto=roce,rate=10G,size=1078,count=5"},
		{TOPO_TRAFFIC_GEN, "t.yaml:4", "h1>h0:start=2ms"},
		{TOPO_TRAFFIC_RDMA, "t.yaml:8", "e0>e1:qps=4"},
		{TOPO_TRAFFIC_RDMA, "t.yaml:9", "e2>e3"},
		{TOPO_TRAFFIC_COLL, "t.yaml:11", "op=allreduce,hosts=e0+e1+e2,sizes=1M:8M,chunk=64K"},
		{TOPO_TRAFFIC_COLL, "t.yaml:12", "op=allgather,hosts=all"},
		{TOPO_TRAFFIC_COLL, "t.yaml:13", "hosts=all,data=off"},
	};
	assert_int_equal(tr->n, sizeof(want) / sizeof(want[0]));
	for (uint32_t i = 0; i < tr->n; i++) {
		assert_int_equal(tr->e[i].kind, want[i].kind);
		assert_string_equal(tr->e[i].where, want[i].where);
		assert_string_equal(tr->e[i].spec, want[i].spec);
	}
	assert_int_equal(tr->count[TOPO_TRAFFIC_GEN], 2);
	assert_int_equal(tr->count[TOPO_TRAFFIC_RDMA], 2);
	assert_int_equal(tr->count[TOPO_TRAFFIC_COLL], 3);
	topo_traffic_free(tr);
}

/* No fixed limit: 5,000 generators in one file, each with its own line. */
static void test_many_generators(void **state)
{
	const struct topo *t = *state;
	enum { N = 5000 };
	char *yaml = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&yaml, &len);
	assert_non_null(f);
	fprintf(f, "generators:\n");
	for (int i = 0; i < N; i++)
		fprintf(f, "  - {src: e%d, dst: e%d, count: %d}\n", i % 4, (i + 1) % 4, i + 1);
	fclose(f);
	struct topo_traffic *tr = load_ok(t, yaml);
	assert_int_equal(tr->n, N);
	assert_int_equal(tr->count[TOPO_TRAFFIC_GEN], N);
	assert_string_equal(tr->e[N - 1].where, "t.yaml:5001");
	assert_string_equal(tr->e[N - 1].spec, "e3>e0:count=5000");
	topo_traffic_free(tr);
	free(yaml);
}

static void test_bad_files(void **state)
{
	const struct topo *t = *state;
	static const struct {
		const char *name, *yaml;
		int line;
		const char *msg;
	} bad[] = {
		/* (a key's value is its owner's to check: test_spec_keys.sh, test_coll_keys.sh) */
		{"unknown section", "generators: []\nflows: []\n", 2,
		 "unknown key 'flows' in the traffic file"},
		{"unknown host", "generators:\n  - {src: h0,\n     dst: h9}\n", 3,
		 "dst: unknown host 'h9'"},
		{"missing dst", "generators:\n  - {src: h0}\n", 2, "generator: needs 'src' and 'dst'"},
		{"same host", "rdma:\n  - {src: e1, dst: e1}\n", 2,
		 "rdma transfer: src and dst are the same host 'e1'"},
		{"rdma on veth", "rdma:\n  - {src: e0, dst: h1}\n", 2,
		 "dst: host 'h1' is attach: veth; rdma run between emulated NICs"},
		{"collective over one host", "collectives:\n  - op: allreduce\n    hosts: [e2]\n", 3,
		 "hosts: a collective over 1 host: needs at least 2"},
		{"collective host twice", "collectives:\n  - hosts:\n    - e0\n    - e1\n    - e0\n", 5,
		 "hosts: 'e0' is listed twice"},
		{"collective on veth", "collectives:\n  - {hosts: [e0, h0]}\n", 2,
		 "hosts: host 'h0' is attach: veth"},
		{"collective hosts word", "collectives:\n  - {hosts: some}\n", 2,
		 "hosts: expected a list of hosts or all, got 'some'"},
		{"collective value with a comma", "collectives:\n  - {sizes: \"1M,op=x\"}\n", 2,
		 "sizes: '1M,op=x' is not a word"},
		{"value with a comma", "generators:\n  - {src: h0, dst: h1, proto: \"udp,rate=1\"}\n", 2,
		 "proto: 'udp,rate=1' is not a word"},
		{"section not a list", "generators:\n  src: h0\n", 2, "generators: expected a list"},
		{"entry not a mapping", "generators:\n  - h0>h1\n", 2,
		 "generator: expected a mapping"},
		{"YAML syntax", "generators:\n  - {src: h0, dst: h1\n", 3, "YAML syntax error"},
		{"empty", "# nothing\n", 1, "empty traffic file"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[512], want[64];
		struct topo_traffic *tr = (struct topo_traffic *)&err; /* must become NULL */
		int rc = topo_traffic_load_string(bad[i].yaml, strlen(bad[i].yaml), "t.yaml", t, &tr,
						  err, sizeof(err));
		snprintf(want, sizeof(want), "t.yaml:%d: ", bad[i].line);
		if (rc != -EINVAL || tr != NULL || strncmp(err, want, strlen(want)) ||
		    !strstr(err, bad[i].msg))
			fail_msg("%s: rc %d, '%s' (expected '%s...%s')", bad[i].name, rc, err, want,
				 bad[i].msg);
	}
}

static void test_missing_file(void **state)
{
	char err[512];
	struct topo_traffic *tr = NULL;
	assert_int_equal(topo_traffic_load("/nonexistent/t.yaml", *state, &tr, err, sizeof(err)),
			 -EIO);
	assert_null(tr);
	assert_non_null(strstr(err, "/nonexistent/t.yaml: cannot read"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_specs_and_lines),
		cmocka_unit_test(test_many_generators),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_missing_file),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
