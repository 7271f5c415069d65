/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_chakra: Chakra traces written here through protobuf-c, in Chakra's
 * framing (each message after its length as a varint), read back into the
 * job graph; bad traces refused with the file and the node.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "wl_chakra.h"
#include "wl_chakra.pb-c.h"

typedef RocelabWl__WlNode pb_node;
typedef RocelabWl__WlAttr pb_attr;

static char dir[64], prefix[96];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/wl-chakra-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(prefix, sizeof(prefix), "%s/job", dir);
	return 0;
}

static void rank_path(char *p, size_t n, uint32_t rank)
{
	snprintf(p, n, "%s.%u.et", prefix, rank);
}

static int teardown(void **state)
{
	char p[128];

	(void)state;
	for (uint32_t r = 0; r < 16; r++) {
		rank_path(p, sizeof(p), r);
		unlink(p);
	}
	return rmdir(dir);
}

/* One message as Chakra's protolib writes it: length varint, then bytes. */
static void write_msg(FILE *f, const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(len + 1);
	size_t v = len;

	assert_non_null(buf);
	protobuf_c_message_pack(m, buf);
	do {
		fputc((int)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)), f);
		v >>= 7;
	} while (v != 0);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	free(buf);
}

/* rank's trace: GlobalMetadata, then the nodes. */
static void write_trace(uint32_t rank, pb_node *const *nodes, size_t n)
{
	RocelabWl__WlGlobalMetadata md = ROCELAB_WL__WL_GLOBAL_METADATA__INIT;
	char p[128];
	FILE *f;

	rank_path(p, sizeof(p), rank);
	f = fopen(p, "wb");
	assert_non_null(f);
	md.version = (char *)"0.0.4";
	write_msg(f, &md.base);
	for (size_t i = 0; i < n; i++)
		write_msg(f, &nodes[i]->base);
	assert_int_equal(fclose(f), 0);
}

static pb_attr int_attr(const char *name, int64_t v)
{
	pb_attr a = ROCELAB_WL__WL_ATTR__INIT;

	a.name = (char *)(uintptr_t)name;
	a.value_case = ROCELAB_WL__WL_ATTR__VALUE_INT64_VAL;
	a.int64_val = v;
	return a;
}

static pb_node node(uint64_t id, int32_t type)
{
	pb_node n = ROCELAB_WL__WL_NODE__INIT;

	n.id = id;
	n.type = type;
	return n;
}

/* "PREFIX.R.et: " followed by what */
static void expect_load_refused(uint32_t nranks, const struct wl_group *groups,
				uint32_t ngroups, uint32_t rank, const char *what)
{
	struct wl_graph g;
	struct wl_err err = { "" };
	char want[WL_ERR_LEN];

	assert_int_equal(wl_chakra_load(&g, prefix, nranks, groups, ngroups, &err), -1);
	snprintf(want, sizeof(want), "%s.%u.et: %s", prefix, rank, what);
	assert_string_equal(err.msg, want);
}

/* Each of 8 ranks: compute 5 us, then (data dependency) an all-reduce of
 * 1 MiB with no pg_name, so over all 8 ranks. Found by counting files. */
static void test_allreduce_8_ranks(void **state)
{
	pb_node comp = node(1, ROCELAB_WL__WL_NODE_TYPE__COMP_NODE);
	pb_node coll = node(2, ROCELAB_WL__WL_NODE_TYPE__COMM_COLL_NODE);
	pb_attr a[2] = { int_attr("comm_type", 0), int_attr("comm_size", 1 << 20) };
	pb_attr *ap[2] = { &a[0], &a[1] };
	uint64_t dep = 1;
	pb_node *nodes[2] = { &comp, &coll };
	struct wl_graph g;
	struct wl_err err;

	(void)state;
	comp.duration_micros = 5;
	coll.n_attr = 2;
	coll.attr = ap;
	coll.n_data_deps = 1;
	coll.data_deps = &dep;
	for (uint32_t r = 0; r < 8; r++)
		write_trace(r, nodes, 2);
	assert_int_equal(wl_chakra_load(&g, prefix, 0, NULL, 0, &err), 0);
	assert_int_equal(g.nranks, 8);
	for (uint32_t r = 0; r < 8; r++) {
		const struct wl_node *c = wl_graph_find(&g, r, 1);
		const struct wl_node *n = wl_graph_find(&g, r, 2);

		assert_non_null(c);
		assert_int_equal(c->kind, WL_COMPUTE);
		assert_int_equal(c->duration_ns, 5000);
		assert_non_null(n);
		assert_int_equal(n->kind, WL_COLL);
		assert_int_equal(n->op, WL_ALLREDUCE);
		assert_int_equal(n->bytes, 1048576);
		assert_int_equal(n->nranks, 8);
		for (uint32_t k = 0; k < 8; k++)
			assert_int_equal(n->ranks[k], k);
		assert_int_equal(n->ndeps, 1);
		assert_int_equal(n->deps[0].id, 1);
		assert_false(n->deps[0].ctrl);
	}
	wl_graph_free(&g);
}

/* Rank 0 sends 100 bytes with tag 5 to rank 1, which receives them; a
 * REDUCE_SCATTER (7) over process group "pair" = {0, 1} after. */
static void test_send_recv_and_group(void **state)
{
	static const uint32_t pair[] = { 0, 1 };
	const struct wl_group groups[] = { { "pair", pair, 2 } };
	pb_node s = node(1, ROCELAB_WL__WL_NODE_TYPE__COMM_SEND_NODE);
	pb_node r = node(1, ROCELAB_WL__WL_NODE_TYPE__COMM_RECV_NODE);
	pb_node c = node(2, ROCELAB_WL__WL_NODE_TYPE__COMM_COLL_NODE);
	pb_attr sa[3] = { int_attr("comm_dst", 1), int_attr("comm_size", 100), int_attr("comm_tag", 5) };
	pb_attr ra[3] = { int_attr("comm_src", 0), int_attr("comm_size", 100), int_attr("comm_tag", 5) };
	pb_attr ca[3] = { int_attr("comm_type", 7), int_attr("comm_size", 4096), ROCELAB_WL__WL_ATTR__INIT };
	pb_attr *sp[3] = { &sa[0], &sa[1], &sa[2] }, *rp[3] = { &ra[0], &ra[1], &ra[2] };
	pb_attr *cp[3] = { &ca[0], &ca[1], &ca[2] };
	uint64_t dep = 1;
	pb_node *n0[2] = { &s, &c }, *n1[2] = { &r, &c };
	struct wl_graph g;
	struct wl_err err;
	const struct wl_node *n;

	(void)state;
	ca[2].name = (char *)"pg_name";
	ca[2].value_case = ROCELAB_WL__WL_ATTR__VALUE_STRING_VAL;
	ca[2].string_val = (char *)"pair";
	s.n_attr = r.n_attr = c.n_attr = 3;
	s.attr = sp;
	r.attr = rp;
	c.attr = cp;
	c.n_ctrl_deps = 1;
	c.ctrl_deps = &dep;
	write_trace(0, n0, 2);
	write_trace(1, n1, 2);
	assert_int_equal(wl_chakra_load(&g, prefix, 2, groups, 1, &err), 0);
	n = wl_graph_find(&g, 0, 1);
	assert_int_equal(n->kind, WL_SEND);
	assert_int_equal(n->peer, 1);
	assert_int_equal(n->bytes, 100);
	assert_int_equal(n->tag, 5);
	n = wl_graph_find(&g, 1, 1);
	assert_int_equal(n->kind, WL_RECV);
	assert_int_equal(n->peer, 0);
	n = wl_graph_find(&g, 1, 2);
	assert_int_equal(n->op, WL_REDUCESCATTER);
	assert_int_equal(n->bytes, 4096);
	assert_int_equal(n->nranks, 2);
	assert_true(n->deps[0].ctrl);
	wl_graph_free(&g);
}

/* GlobalMetadata {version "0.0.4"} packs to 0a 05 "0.0.4" (7 bytes), Node
 * {id 1, type 4, duration_micros 5} to 08 01 18 04 38 05 (6 bytes): with
 * their length bytes the file is 15 bytes, the node's length at byte 8.
 * Cut by 3, the node wants 6 bytes and 3 are left. */
static void test_truncated(void **state)
{
	pb_node comp = node(1, ROCELAB_WL__WL_NODE_TYPE__COMP_NODE);
	pb_node *nodes[1] = { &comp };
	char p[128];

	(void)state;
	comp.duration_micros = 5;
	write_trace(0, nodes, 1);
	rank_path(p, sizeof(p), 0);
	FILE *f = fopen(p, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	assert_int_equal(ftell(f), 15);
	fclose(f);
	assert_int_equal(truncate(p, 12), 0);
	expect_load_refused(1, NULL, 0, 0, "truncated: message 1 at byte 8 is 6 bytes long, the file has 3 more");
	/* cut inside the metadata: its length says 7, 4 bytes follow */
	assert_int_equal(truncate(p, 5), 0);
	expect_load_refused(1, NULL, 0, 0, "truncated: message 0 at byte 0 is 7 bytes long, the file has 4 more");
}

static void test_unknown_node_type(void **state)
{
	pb_node mem = node(3, ROCELAB_WL__WL_NODE_TYPE__MEM_LOAD_NODE);
	pb_node odd = node(4, 42);
	pb_node *nodes[1] = { &mem };

	(void)state;
	write_trace(0, nodes, 1);
	expect_load_refused(1, NULL, 0, 0, "node 3: node type MEM_LOAD_NODE (2) is not supported (supported: COMP_NODE, COMM_SEND_NODE, COMM_RECV_NODE, COMM_COLL_NODE)");
	nodes[0] = &odd;
	write_trace(0, nodes, 1);
	expect_load_refused(1, NULL, 0, 0, "node 4: node type unknown (42) is not supported (supported: COMP_NODE, COMM_SEND_NODE, COMM_RECV_NODE, COMM_COLL_NODE)");
}

/* 1 waits for 2 (data), 2 for 1 (control) */
static void test_cycle(void **state)
{
	pb_node a = node(1, ROCELAB_WL__WL_NODE_TYPE__COMP_NODE);
	pb_node b = node(2, ROCELAB_WL__WL_NODE_TYPE__COMP_NODE);
	uint64_t on1 = 1, on2 = 2;
	pb_node *nodes[2] = { &a, &b };

	(void)state;
	a.n_data_deps = 1;
	a.data_deps = &on2;
	b.n_ctrl_deps = 1;
	b.ctrl_deps = &on1;
	write_trace(0, nodes, 2);
	expect_load_refused(1, NULL, 0, 0, "node 1: dependency cycle: 1 -> 2 -> 1 (each depends on the next)");
}

static void test_missing_dep(void **state)
{
	pb_node a = node(1, ROCELAB_WL__WL_NODE_TYPE__COMP_NODE);
	uint64_t on77 = 77;
	pb_node *nodes[1] = { &a };

	(void)state;
	a.n_ctrl_deps = 1;
	a.ctrl_deps = &on77;
	write_trace(0, nodes, 1);
	expect_load_refused(1, NULL, 0, 0, "node 1: depends on node 77 (control), which is not there");
}

/* Process group "dp" is ranks 0..7, but only 4 traces are given. */
static void test_rank_count_mismatch(void **state)
{
	static const uint32_t dp[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	const struct wl_group groups[] = { { "dp", dp, 8 } };
	pb_node c = node(2, ROCELAB_WL__WL_NODE_TYPE__COMM_COLL_NODE);
	pb_attr a[3] = { int_attr("comm_type", 0), int_attr("comm_size", 1 << 20), ROCELAB_WL__WL_ATTR__INIT };
	pb_attr *ap[3] = { &a[0], &a[1], &a[2] };
	pb_node *nodes[1] = { &c };
	char what[WL_ERR_LEN];

	(void)state;
	a[2].name = (char *)"pg_name";
	a[2].value_case = ROCELAB_WL__WL_ATTR__VALUE_STRING_VAL;
	a[2].string_val = (char *)"dp";
	c.n_attr = 3;
	c.attr = ap;
	for (uint32_t r = 0; r < 4; r++)
		write_trace(r, nodes, 1);
	expect_load_refused(4, groups, 1, 0, "node 2: the communicator of 8 ranks names rank 4, but the job has 4 ranks (0..3)");
	/* a process group the caller does not know */
	expect_load_refused(4, NULL, 0, 0, "node 2: pg_name 'dp' names no process group given (0 known)");
	/* no pg_name: the world, but rank 3 leaves its all-reduce out */
	c.n_attr = 2;
	for (uint32_t r = 0; r < 3; r++)
		write_trace(r, nodes, 1);
	write_trace(3, NULL, 0);
	snprintf(what, sizeof(what), "node 2: rank 0 runs 1 collectives over its communicator of 4 ranks (0..3), but rank 3 (%s.3.et) runs 0",
		 prefix);
	expect_load_refused(4, NULL, 0, 0, what);
}

static void test_missing_attribute_and_gzip(void **state)
{
	pb_node c = node(2, ROCELAB_WL__WL_NODE_TYPE__COMM_COLL_NODE);
	pb_attr a = int_attr("comm_type", 0);
	pb_attr *ap[1] = { &a };
	pb_node *nodes[1] = { &c };
	char p[128];
	FILE *f;

	(void)state;
	c.n_attr = 1;
	c.attr = ap;
	write_trace(0, nodes, 1);
	expect_load_refused(1, NULL, 0, 0, "node 2: COMM_COLL_NODE without the attribute comm_size");
	rank_path(p, sizeof(p), 0);
	f = fopen(p, "wb");
	assert_non_null(f);
	fputs("\x1f\x8b\x08", f);
	fclose(f);
	expect_load_refused(1, NULL, 0, 0, "gzip-compressed: gunzip it first");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_allreduce_8_ranks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_recv_and_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_node_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_dep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rank_count_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_attribute_and_gzip, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
