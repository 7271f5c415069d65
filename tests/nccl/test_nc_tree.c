/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NCCL's double binary tree for 2..9 nodes, and the chain inside a server.
 * The tables were worked out by hand from ncclGetBtree / ncclGetDtree
 * (NCCL 2.21.5 src/graph/trees.cc):
 *  - tree 0, node r > 0: b = lowest set bit of r; parent (r ^ b) | 2b, or
 *    r ^ b when that is >= n; child 0 = r - b/2, child 1 = r + b/2 halving
 *    b/2 until it is < n (none when it reaches 0). Node 0: child 1 is the
 *    largest power of two below n.
 *  - tree 1: n even, node i is tree 0's node n-1-i with every index x
 *    written n-1-x; n odd, node i is tree 0's node i-1 with x written x+1
 *    (mod n).
 * E.g. n = 9, node 4: b = 4, parent 0 | 8 = 8, children 4-2 = 2, 4+2 = 6.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "nc_tree.h"

/* {parent, child0, child1} per node; N = none */
#define N (-1)
struct row { int p, c0, c1; };

static const struct row t0_2[] = { { N, N, 1 }, { 0, N, N } };
static const struct row t1_2[] = { { 1, N, N }, { N, N, 0 } };
static const struct row t0_3[] = { { N, N, 2 }, { 2, N, N }, { 0, 1, N } };
static const struct row t1_3[] = { { 1, 2, N }, { N, N, 0 }, { 0, N, N } };
static const struct row t0_4[] = { { N, N, 2 }, { 2, N, N }, { 0, 1, 3 }, { 2, N, N } };
static const struct row t1_4[] = { { 1, N, N }, { 3, 2, 0 }, { 1, N, N }, { N, N, 1 } };
static const struct row t0_5[] = { { N, N, 4 }, { 2, N, N }, { 4, 1, 3 }, { 2, N, N },
				   { 0, 2, N } };
static const struct row t1_5[] = { { 1, 3, N }, { N, N, 0 }, { 3, N, N }, { 0, 2, 4 },
				   { 3, N, N } };
static const struct row t0_6[] = { { N, N, 4 }, { 2, N, N }, { 4, 1, 3 }, { 2, N, N },
				   { 0, 2, 5 }, { 4, N, N } };
static const struct row t1_6[] = { { 1, N, N }, { 5, 3, 0 }, { 3, N, N }, { 1, 4, 2 },
				   { 3, N, N }, { N, N, 1 } };
static const struct row t0_7[] = { { N, N, 4 }, { 2, N, N }, { 4, 1, 3 }, { 2, N, N },
				   { 0, 2, 6 }, { 6, N, N }, { 4, 5, N } };
static const struct row t1_7[] = { { 5, 6, N }, { N, N, 5 }, { 3, N, N }, { 5, 2, 4 },
				   { 3, N, N }, { 1, 3, 0 }, { 0, N, N } };
static const struct row t0_8[] = { { N, N, 4 }, { 2, N, N }, { 4, 1, 3 }, { 2, N, N },
				   { 0, 2, 6 }, { 6, N, N }, { 4, 5, 7 }, { 6, N, N } };
static const struct row t1_8[] = { { 1, N, N }, { 3, 2, 0 }, { 1, N, N }, { 7, 5, 1 },
				   { 5, N, N }, { 3, 6, 4 }, { 5, N, N }, { N, N, 3 } };
static const struct row t0_9[] = { { N, N, 8 }, { 2, N, N }, { 4, 1, 3 }, { 2, N, N },
				   { 8, 2, 6 }, { 6, N, N }, { 4, 5, 7 }, { 6, N, N },
				   { 0, 4, N } };
static const struct row t1_9[] = { { 1, 5, N }, { N, N, 0 }, { 3, N, N }, { 5, 2, 4 },
				   { 3, N, N }, { 0, 3, 7 }, { 7, N, N }, { 5, 6, 8 },
				   { 7, N, N } };

static const struct row *const t0[10] = { NULL, NULL, t0_2, t0_3, t0_4, t0_5, t0_6, t0_7,
					  t0_8, t0_9 };
static const struct row *const t1[10] = { NULL, NULL, t1_2, t1_3, t1_4, t1_5, t1_6, t1_7,
					  t1_8, t1_9 };

static void check(const struct nc_tree_node *got, const struct row *want, uint32_t n,
		  uint32_t node, int tree)
{
	if (got->parent != want->p || got->child[0] != want->c0 || got->child[1] != want->c1)
		fail_msg("n %u node %u tree %d: got %d/%d/%d want %d/%d/%d", n, node, tree,
			 got->parent, got->child[0], got->child[1], want->p, want->c0, want->c1);
}

static void test_dtree_2_to_9(void **state)
{
	(void)state;
	for (uint32_t n = 2; n <= 9; n++) {
		for (uint32_t i = 0; i < n; i++) {
			struct nc_tree_node a, b, c;
			assert_int_equal(nc_tree_dtree(n, i, &a, &b), 0);
			check(&a, &t0[n][i], n, i, 0);
			check(&b, &t1[n][i], n, i, 1);
			assert_int_equal(nc_tree_btree(n, i, &c), 0);
			check(&c, &t0[n][i], n, i, 0);
		}
	}
}

/* One node: a root with no children in both trees. */
static void test_dtree_one_node(void **state)
{
	(void)state;
	struct nc_tree_node a, b;

	assert_int_equal(nc_tree_dtree(1, 0, &a, &b), 0);
	assert_int_equal(a.parent, N);
	assert_int_equal(a.child[0], N);
	assert_int_equal(a.child[1], N);
	assert_int_equal(b.parent, N);
	assert_int_equal(b.child[1], N);
}

static void expect_rank(const struct nc_tree_cfg *cfg, uint32_t ch, uint32_t rank, int tree,
			int up, int d0, int d1, int d2)
{
	struct nc_tree_rank r;

	assert_int_equal(nc_tree_rank(cfg, ch, rank, &r), 0);
	assert_int_equal(r.tree, tree);
	assert_int_equal(r.up, up);
	assert_int_equal(r.down[0], d0);
	assert_int_equal(r.down[1], d1);
	assert_int_equal(r.down[2], d2);
}

/* 2 servers x 8 GPUs, 16 channels. Channel 0: tree 0, head GPU 0, chain
 * 0 1 .. 7; node 0 is the root with node 1 as child. Channel 9: tree 1
 * (9 >= 16/2), head GPU 9 mod 8 = 1, chain 1 2 .. 7 0; node 1 is the root. */
static void test_tree_ranks_two_servers(void **state)
{
	(void)state;
	const struct nc_tree_cfg cfg = { .servers = 2, .gpus = 8, .channels = 16 };

	expect_rank(&cfg, 0, 0, 0, N, 1, 8, N);  /* root head: chain, then node 1 */
	expect_rank(&cfg, 0, 8, 0, 0, 9, N, N);  /* node 1's head, under rank 0 */
	expect_rank(&cfg, 0, 3, 0, 2, 4, N, N);
	expect_rank(&cfg, 0, 7, 0, 6, N, N, N);  /* chain end */
	expect_rank(&cfg, 9, 1, 1, 9, 2, N, N);  /* node 0's head under node 1's */
	expect_rank(&cfg, 9, 9, 1, N, 10, 1, N); /* tree 1's root */
	expect_rank(&cfg, 9, 0, 1, 7, N, N, N);  /* chain end: 1 2 .. 7 0 */
	expect_rank(&cfg, 9, 8, 1, 15, N, N, N);
}

/* 4 servers x 2 GPUs, 4 channels. Channel 1: tree 0, head GPU 1, chain
 * 1 0. Node 2 has parent 0, children 1 and 3 (t0_4). Channel 2: tree 1,
 * head GPU 0; node 1 has parent 3, children 2 and 0 (t1_4). */
static void test_tree_ranks_four_servers(void **state)
{
	(void)state;
	const struct nc_tree_cfg cfg = { .servers = 4, .gpus = 2, .channels = 4 };

	expect_rank(&cfg, 1, 5, 0, 1, 4, 3, 7);  /* server 2, GPU 1: head */
	expect_rank(&cfg, 1, 4, 0, 5, N, N, N);  /* server 2, GPU 0: chain end */
	expect_rank(&cfg, 2, 2, 1, 6, 3, 4, 0);  /* server 1, GPU 0: head */
}

static void test_tree_bad_input(void **state)
{
	(void)state;
	const struct nc_tree_cfg odd = { .servers = 2, .gpus = 8, .channels = 3 };
	const struct nc_tree_cfg ok = { .servers = 2, .gpus = 8, .channels = 4 };
	struct nc_tree_node a, b;
	struct nc_tree_rank r;

	assert_int_equal(nc_tree_btree(0, 0, &a), -EINVAL);
	assert_int_equal(nc_tree_btree(4, 4, &a), -EINVAL);
	assert_int_equal(nc_tree_dtree(4, 0, &a, NULL), -EINVAL);
	assert_int_equal(nc_tree_dtree(0x80000000u, 0, &a, &b), -EINVAL);
	assert_int_equal(nc_tree_rank(&odd, 0, 0, &r), -EINVAL);
	assert_int_equal(nc_tree_rank(&ok, 4, 0, &r), -EINVAL);
	assert_int_equal(nc_tree_rank(&ok, 0, 16, &r), -EINVAL);
	assert_int_equal(nc_tree_rank(NULL, 0, 0, &r), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dtree_2_to_9),
		cmocka_unit_test(test_dtree_one_node),
		cmocka_unit_test(test_tree_ranks_two_servers),
		cmocka_unit_test(test_tree_ranks_four_servers),
		cmocka_unit_test(test_tree_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
