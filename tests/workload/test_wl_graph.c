/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_graph: graphs built by hand, each bad one refused with the message a
 * reader needs (rank or file, node id, what is wrong), written out here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "wl_graph.h"

static void add_compute(struct wl_graph *g, uint32_t rank, uint64_t id, uint64_t ns,
			const struct wl_dep *deps, uint32_t ndeps)
{
	struct wl_node n = { .id = id, .kind = WL_COMPUTE, .duration_ns = ns,
			     .deps = (struct wl_dep *)(uintptr_t)deps, .ndeps = ndeps };
	struct wl_err err;

	assert_int_equal(wl_graph_add(g, rank, &n, &err), 0);
}

static void add_coll(struct wl_graph *g, uint32_t rank, uint64_t id, enum wl_coll op,
		     uint64_t bytes, const uint32_t *ranks, uint32_t nranks,
		     const struct wl_dep *dep)
{
	struct wl_node n = { .id = id, .kind = WL_COLL, .op = op, .bytes = bytes,
			     .ranks = (uint32_t *)(uintptr_t)ranks, .nranks = nranks,
			     .deps = (struct wl_dep *)(uintptr_t)dep, .ndeps = dep != NULL };
	struct wl_err err;

	assert_int_equal(wl_graph_add(g, rank, &n, &err), 0);
}

static void expect_refused(const struct wl_graph *g, const char *msg)
{
	struct wl_err err = { "" };

	assert_int_equal(wl_graph_check(g, &err), -1);
	assert_string_equal(err.msg, msg);
}

/* Two ranks: compute, then an all-reduce over both (given out of order),
 * then a send 0 -> 1 matched by a receive; the check accepts it and the
 * nodes read back as given, the communicator sorted. */
static void test_good_graph(void **state)
{
	static const uint32_t both[] = { 1, 0 };
	static const struct wl_dep after1 = { 1, false }, after2 = { 2, true };
	struct wl_graph g;
	struct wl_err err;
	struct wl_node send = { .id = 3, .kind = WL_SEND, .bytes = 4096, .peer = 1,
				.tag = 7, .deps = (struct wl_dep *)(uintptr_t)&after2, .ndeps = 1 };
	struct wl_node recv = send;
	const struct wl_node *n;

	(void)state;
	assert_int_equal(wl_graph_init(&g, 2, &err), 0);
	for (uint32_t r = 0; r < 2; r++) {
		add_compute(&g, r, 1, 1500, NULL, 0);
		add_coll(&g, r, 2, WL_ALLREDUCE, 1 << 20, both, 2, &after1);
	}
	recv.kind = WL_RECV;
	recv.peer = 0;
	assert_int_equal(wl_graph_add(&g, 0, &send, &err), 0);
	assert_int_equal(wl_graph_add(&g, 1, &recv, &err), 0);
	assert_int_equal(wl_graph_check(&g, &err), 0);
	n = wl_graph_find(&g, 1, 2);
	assert_non_null(n);
	assert_int_equal(n->kind, WL_COLL);
	assert_int_equal(n->bytes, 1 << 20);
	assert_int_equal(n->nranks, 2);
	assert_int_equal(n->ranks[0], 0);
	assert_int_equal(n->ranks[1], 1);
	n = wl_graph_find(&g, 1, 3);
	assert_non_null(n);
	assert_int_equal(n->kind, WL_RECV);
	assert_int_equal(n->peer, 0);
	assert_int_equal(n->tag, 7);
	assert_int_equal(n->ndeps, 1);
	assert_int_equal(n->deps[0].id, 2);
	assert_true(n->deps[0].ctrl);
	assert_null(wl_graph_find(&g, 0, 9));
	n = wl_graph_find(&g, 0, 2);
	assert_non_null(n);
	assert_int_equal(n->ndeps, 1);
	assert_int_equal(n->deps[0].id, 1);
	assert_false(n->deps[0].ctrl);
	wl_graph_free(&g);
}

static void test_missing_dep(void **state)
{
	static const struct wl_dep deps[] = { { 1, false }, { 9, true } };
	struct wl_graph g;
	struct wl_err err;

	(void)state;
	assert_int_equal(wl_graph_init(&g, 1, &err), 0);
	add_compute(&g, 0, 1, 10, NULL, 0);
	add_compute(&g, 0, 2, 10, deps, 2);
	expect_refused(&g, "rank 0: node 2: depends on node 9 (control), which is not there");
	wl_graph_free(&g);
}

/* 0 free; 1 waits for 3, 3 for 2, 2 for 1: the walk from 1 (the first node
 * left unfinished) meets 1 again after 3 and 2. */
static void test_cycle(void **state)
{
	static const struct wl_dep on1 = { 1, false }, on2 = { 2, false }, on3 = { 3, true };
	struct wl_graph g;
	struct wl_err err;

	(void)state;
	assert_int_equal(wl_graph_init(&g, 1, &err), 0);
	assert_int_equal(wl_graph_set_file(&g, 0, "job.0.et", &err), 0);
	add_compute(&g, 0, 0, 10, NULL, 0);
	add_compute(&g, 0, 1, 10, &on3, 1);
	add_compute(&g, 0, 2, 10, &on1, 1);
	add_compute(&g, 0, 3, 10, &on2, 1);
	expect_refused(&g, "job.0.et: node 1: dependency cycle: 1 -> 3 -> 2 -> 1 (each depends on the next)");
	wl_graph_free(&g);
}

static void test_self_dep_is_a_cycle(void **state)
{
	static const struct wl_dep on4 = { 4, false };
	struct wl_graph g;
	struct wl_err err;

	(void)state;
	assert_int_equal(wl_graph_init(&g, 1, &err), 0);
	add_compute(&g, 0, 4, 10, &on4, 1);
	expect_refused(&g, "rank 0: node 4: dependency cycle: 4 -> 4 (each depends on the next)");
	wl_graph_free(&g);
}

static void test_duplicate_id(void **state)
{
	struct wl_graph g;
	struct wl_err err;

	(void)state;
	assert_int_equal(wl_graph_init(&g, 1, &err), 0);
	add_compute(&g, 0, 5, 10, NULL, 0);
	add_compute(&g, 0, 5, 20, NULL, 0);
	expect_refused(&g, "rank 0: node 5: two nodes have this id");
	wl_graph_free(&g);
}

/* A communicator of ranks 0 and 8 in a job of 8 ranks (0..7). */
static void test_comm_rank_out_of_job(void **state)
{
	static const uint32_t ranks[] = { 0, 8 };
	struct wl_graph g;
	struct wl_err err;

	(void)state;
	assert_int_equal(wl_graph_init(&g, 8, &err), 0);
	add_coll(&g, 0, 5, WL_ALLGATHER, 64, ranks, 2, NULL);
	expect_refused(&g, "rank 0: node 5: the communicator of 2 ranks names rank 8, but the job has 8 ranks (0..7)");
	wl_graph_free(&g);
}

static void test_comm_leaves_out_runner(void **state)
{
	static const uint32_t ranks[] = { 0, 1 };
	struct wl_graph g;
	struct wl_err err;

	(void)state;
	assert_int_equal(wl_graph_init(&g, 4, &err), 0);
	add_coll(&g, 3, 6, WL_BROADCAST, 64, ranks, 2, NULL);
	expect_refused(&g, "rank 3: node 6: rank 3 runs a BROADCAST over a communicator of 2 ranks that leaves it out");
	wl_graph_free(&g);
}

/* Rank 0 runs two all-reduces over {0, 1}, rank 1 only one: rank 0 would
 * wait for ever in its second. */
static void test_comm_count_mismatch(void **state)
{
	static const uint32_t ranks[] = { 0, 1 };
	struct wl_graph g;
	struct wl_err err;

	(void)state;
	assert_int_equal(wl_graph_init(&g, 2, &err), 0);
	assert_int_equal(wl_graph_set_file(&g, 0, "a.et", &err), 0);
	assert_int_equal(wl_graph_set_file(&g, 1, "b.et", &err), 0);
	add_coll(&g, 0, 1, WL_ALLREDUCE, 64, ranks, 2, NULL);
	add_coll(&g, 0, 2, WL_ALLREDUCE, 64, ranks, 2, NULL);
	add_coll(&g, 1, 1, WL_ALLREDUCE, 64, ranks, 2, NULL);
	expect_refused(&g, "a.et: node 2: rank 0 runs 2 collectives over its communicator of 2 ranks (0..1), but rank 1 (b.et) runs 1");
	wl_graph_free(&g);
}

static void test_send_to_self(void **state)
{
	struct wl_graph g;
	struct wl_err err;
	struct wl_node n = { .id = 3, .kind = WL_SEND, .bytes = 1, .peer = 1 };

	(void)state;
	assert_int_equal(wl_graph_init(&g, 2, &err), 0);
	assert_int_equal(wl_graph_add(&g, 1, &n, &err), 0);
	expect_refused(&g, "rank 1: node 3: rank 1 sends to itself");
	wl_graph_free(&g);
}

static void test_bad_rank_counts(void **state)
{
	struct wl_graph g;
	struct wl_err err;
	struct wl_node n = { .id = 1 };

	(void)state;
	assert_int_equal(wl_graph_init(&g, 0, &err), -1);
	assert_string_equal(err.msg, "0 ranks: a job has 1 to 1048576");
	assert_int_equal(wl_graph_init(&g, 2, &err), 0);
	assert_int_equal(wl_graph_add(&g, 2, &n, &err), -1);
	assert_string_equal(err.msg, "rank 2: the job has 2 ranks");
	wl_graph_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_graph),
		cmocka_unit_test(test_missing_dep),
		cmocka_unit_test(test_cycle),
		cmocka_unit_test(test_self_dep_is_a_cycle),
		cmocka_unit_test(test_duplicate_id),
		cmocka_unit_test(test_comm_rank_out_of_job),
		cmocka_unit_test(test_comm_leaves_out_runner),
		cmocka_unit_test(test_comm_count_mismatch),
		cmocka_unit_test(test_send_to_self),
		cmocka_unit_test(test_bad_rank_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
