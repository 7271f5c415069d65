/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tree AllReduce (cfg.algo = NE_COLL_ALGO_TREE, ne_coll_tree.c): the
 * connections follow NCCL's double binary tree, worked out here by hand
 * from ncclGetBtree's rule (src/graph/trees.cc: a node's parent and
 * children from its lowest set bit; tree 1 is tree 0 mirrored for an even
 * node count, shifted by one for an odd one), and the sums are right.
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

#include "coll_test_util.h"
#include "nc_tune.h"

#define KIB 1024u
#define MIB (1u << 20)

static void cfg_tree(struct ne_coll_config *cfg, uint32_t n, bool nccl)
{
	ne_coll_config_default(cfg);
	if (nccl)
		assert_int_equal(ne_coll_config_set(cfg, "model", "nccl"), 0);
	cfg->op = NE_COLL_ALLREDUCE;
	cfg->algo = NE_COLL_ALGO_TREE;
	cfg->nranks = n;
	cfg->bytes = MIB + 12;
	cfg->chunk_bytes = 256 * KIB;
	cfg->channels = 2;
}

/* Is there a connection src -> dst on channel ch? */
static bool has_conn(struct ne_coll *c, uint32_t src, uint32_t dst, uint32_t ch)
{
	for (uint32_t k = 0; k < ne_coll_num_conns(c); k++) {
		struct ne_coll_conn_info ci;

		assert_int_equal(ne_coll_conn_info(c, k, &ci), 0);
		if (ci.src == src && ci.dst == dst && ci.channel == ch)
			return true;
	}
	return false;
}

/*
 * One GPU per host, so the tree's nodes are the ranks. Parent of each node
 * (-1: root), tree 0 on channel 0, tree 1 on channel 1:
 * 4 nodes, tree 0: 0 <- 2 <- {1, 3} (2 has bit 2: parent (2^2)|4 = 4 >= 4,
 *   so 0; 1 and 3 have bit 1: parent (r^1)|2 = 2); tree 1 mirrors it
 *   (node i -> 3 - i): 3 <- 1 <- {2, 0}.
 * 3 nodes, tree 0: 0 <- 2 <- 1 (3 is out of range); tree 1 shifts it by
 *   one (node i -> i + 1 mod 3): 1 <- 0 <- 2.
 * Each tree edge is a connection both ways; nothing else is.
 */
static void test_parents(void **state)
{
	static const int parent4[2][4] = {{-1, 2, 0, 2}, {1, 3, 1, -1}};
	static const int parent3[2][3] = {{-1, 2, 0}, {1, -1, 0}};

	(void)state;
	for (uint32_t n = 3; n <= 4; n++)
		for (int nccl = 0; nccl < 2; nccl++) {
			struct ne_coll_config cfg;
			struct fab f;

			cfg_tree(&cfg, n, nccl);
			coll_run(&f, &cfg);
			assert_int_equal(coll_verify(f.coll, &cfg), 0);
			assert_int_equal(ne_coll_num_conns(f.coll), 2 * (n - 1) * 2);
			for (uint32_t ch = 0; ch < 2; ch++)
				for (uint32_t r = 0; r < n; r++) {
					int p = n == 4 ? parent4[ch][r] : parent3[ch][r];

					if (p < 0)
						continue;
					assert_true(has_conn(f.coll, r, (uint32_t)p, ch));
					assert_true(has_conn(f.coll, (uint32_t)p, r, ch));
				}
			fab_free(&f);
		}
}

/*
 * Bytes: each of the 2(n-1) connections per channel carries its channel's
 * part once, so all of them carry 2(n-1) x the buffer, as the ring does.
 * Model nccl, 4 hosts, 3 MiB + 4 KiB over 2 channels: channel 0 has
 * 394,240 floats (4 chunks of at most 131,072), channel 1 393,216 (3).
 */
static void test_nccl_chunks(void **state)
{
	struct ne_coll_config cfg;
	struct ne_coll_stats st;
	struct fab f;

	(void)state;
	cfg_tree(&cfg, 4, true);
	cfg.bytes = 3 * MIB + 4 * KIB;
	coll_run(&f, &cfg);
	assert_int_equal(coll_verify(f.coll, &cfg), 0);
	for (uint32_t k = 0; k < ne_coll_num_conns(f.coll); k++) {
		struct ne_coll_conn_info ci;

		assert_int_equal(ne_coll_conn_info(f.coll, k, &ci), 0);
		assert_int_equal(ci.ntransfers, ci.channel ? 3 : 4);
		assert_int_equal(ci.bytes, ci.channel ? 393216u * 4 : 394240u * 4);
	}
	ne_coll_get_stats(f.coll, &st);
	assert_int_equal(st.data_bytes, 2 * 3 * (uint64_t)cfg.bytes);
	fab_free(&f);
}

/*
 * 2 and 4 servers of 4 GPUs, both models: the sums are right, the chain
 * inside a server goes over NVLink and only the heads' links between
 * servers use the network: per channel, servers - 1 tree edges both ways.
 */
static void test_servers(void **state)
{
	static uint32_t server_of[16];

	(void)state;
	for (uint32_t i = 0; i < 16; i++)
		server_of[i] = i / 4;
	for (uint32_t ns = 2; ns <= 4; ns += 2)
		for (int nccl = 0; nccl < 2; nccl++) {
			struct ne_coll_config cfg;
			struct ne_coll_stats st;
			struct fab f;
			uint64_t buf;

			cfg_tree(&cfg, ns * 4, nccl);
			cfg.server_of = server_of;
			buf = cfg.bytes / 4 * 4;
			coll_run(&f, &cfg);
			assert_int_equal(coll_verify(f.coll, &cfg), 0);
			ne_coll_get_stats(f.coll, &st);
			/* each channel's part is half the buffer: per channel,
			 * 2 (ns - 1) network connections and 2 x 3 x ns NVLink ones,
			 * each carrying that half: over both, the buffer each */
			assert_int_equal(st.data_bytes, 2 * (ns - 1) * buf);
			assert_int_equal(st.nvlink_bytes, 2 * 3 * ns * buf);
			fab_free(&f);
		}
}

/*
 * algo=auto on 4 servers of 4 GPUs: the collective runs what nc_tune_pick
 * says for the size on NCCL's H100 graph of that shape (the tuning's own
 * numbers are hand-checked in tests/nccl), and the plan follows: a tree has
 * 2(n-1) connections per channel, a ring n. The # algo line names the
 * pick. NCCL_PROTO=Simple leaves the tuning Simple alone.
 */
static void test_auto(void **state)
{
	static const uint64_t sizes[] = {64 * KIB, MIB, 64 * MIB};
	static uint32_t server_of[16];
	struct nc_tune_params p;
	struct nc_tune_table t;
	uint32_t trees = 0;

	(void)state;
	for (uint32_t i = 0; i < 16; i++)
		server_of[i] = i / 4;
	nc_tune_params_h100(&p, 4, 4);
	assert_int_equal(nc_tune_model(&p, &t), 0);
	for (int simple = 0; simple < 2; simple++)
		for (size_t i = 0; i < 3; i++) {
			struct ne_coll_config cfg;
			struct nc_tune_choice want;
			struct nc_tune_params ps = p;
			struct nc_tune_table ts;
			char line[256], expect[256];
			struct fab f;

			cfg_tree(&cfg, 16, true);
			cfg.server_of = server_of;
			cfg.bytes = sizes[i];
			cfg.data = false;
			assert_int_equal(ne_coll_config_set(&cfg, "algo", "auto"), 0);
			if (simple) {
				assert_int_equal(ne_coll_config_set(&cfg, "NCCL_PROTO", "Simple"), 0);
				ps.proto_on[NC_PROTO_LL] = ps.proto_on[NC_PROTO_LL128] = false;
			}
			assert_int_equal(nc_tune_model(&ps, &ts), 0);
			assert_int_equal(nc_tune_pick(&ps, &ts, sizes[i], &want), 0);
			fab_init(&f, &cfg, RATE, DELAY);
			assert_non_null(fab_coll(&f, &cfg));
			assert_int_equal(ne_coll_num_conns(f.coll),
					 want.algo == NC_ALGO_TREE ? 2 * 15 * 2 : 16 * 2);
			ne_coll_format_algo(f.coll, line, sizeof(line));
			snprintf(expect, sizeof(expect), "# algo: %s (NCCL's tuning picks %s/%s for %llu B",
				 want.algo == NC_ALGO_TREE ? "tree" : "ring", nc_tune_algo_name(want.algo),
				 nc_tune_proto_name(want.proto), (unsigned long long)sizes[i]);
			assert_memory_equal(line, expect, strlen(expect));
			assert_true(!simple || want.proto == NC_PROTO_SIMPLE);
			trees += want.algo == NC_ALGO_TREE;
			fab_free(&f);
		}
	/* the sizes see both picks (tree at the small ones, ring at 64 MiB) */
	assert_true(trees > 0 && trees < 6);
}

/* NCCL_ALGO and NCCL_PROTO: NCCL's names, what is not modelled refused
 * (LL and LL128 outside the nccl model). */
static void test_nccl_names(void **state)
{
	struct ne_coll_config cfg;
	char msg[256];

	(void)state;
	cfg_tree(&cfg, 4, true);
	assert_int_equal(ne_coll_config_set(&cfg, "NCCL_ALGO", "Ring"), 0);
	assert_int_equal(cfg.algo, NE_COLL_ALGO_RING);
	assert_int_equal(ne_coll_config_set(&cfg, "NCCL_ALGO", "tree"), 0);
	assert_int_equal(cfg.algo, NE_COLL_ALGO_TREE);
	assert_int_equal(ne_coll_config_set(&cfg, "NCCL_ALGO", "Tree,Ring"), 0);
	assert_int_equal(cfg.algo, NE_COLL_ALGO_AUTO);
	assert_int_equal(ne_coll_config_set(&cfg, "NCCL_ALGO", "^Tree"), 0);
	assert_int_equal(cfg.algo, NE_COLL_ALGO_RING);
	assert_int_equal(ne_coll_config_set_msg(&cfg, "NCCL_ALGO", "NVLS", msg, sizeof(msg)),
			 -EINVAL);
	assert_non_null(strstr(msg, "NCCL_ALGO=NVLS: "));
	assert_int_equal(ne_coll_config_set_msg(&cfg, "NCCL_PROTO", "LL256", msg, sizeof(msg)),
			 -EINVAL);
	assert_non_null(strstr(msg, "unknown name 'LL256'"));
	assert_int_equal(ne_coll_config_set(&cfg, "NCCL_PROTO", "LL128"), 0);
	assert_int_equal(cfg.nccl_proto_off, (1u << NC_PROTO_LL) | (1u << NC_PROTO_SIMPLE));
	assert_int_equal(ne_coll_config_set(&cfg, "NCCL_PROTO", "^LL"), 0);
	assert_int_equal(cfg.nccl_proto_off, 1u << NC_PROTO_LL);
	/* the rocelab model runs Simple only */
	cfg_tree(&cfg, 4, false);
	assert_int_equal(ne_coll_config_set_msg(&cfg, "NCCL_PROTO", "LL128", msg, sizeof(msg)),
			 -EINVAL);
	assert_non_null(strstr(msg, "modelled with model=nccl only"));
}

/* Tree is AllReduce's only; servers of different sizes are refused. */
static void test_refused(void **state)
{
	static const uint32_t uneven[6] = {0, 0, 0, 0, 1, 1};
	struct ne_coll_config cfg;

	(void)state;
	cfg_tree(&cfg, 6, false);
	assert_int_equal(ne_coll_config_check(&cfg), 0);
	cfg.server_of = uneven;
	assert_int_equal(ne_coll_config_check(&cfg), -EINVAL);
	cfg.server_of = NULL;
	cfg.op = NE_COLL_ALLGATHER;
	assert_int_equal(ne_coll_config_check(&cfg), -EINVAL);
	assert_int_equal(ne_coll_config_set(&cfg, "algo", "ring"), 0);
	assert_int_equal(cfg.algo, NE_COLL_ALGO_RING);
	assert_int_equal(ne_coll_config_set(&cfg, "algo", "tree"), 0);
	assert_int_equal(cfg.algo, NE_COLL_ALGO_TREE);
	assert_int_equal(ne_coll_config_set(&cfg, "algo", "star"), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parents),
		cmocka_unit_test(test_nccl_chunks),
		cmocka_unit_test(test_servers),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_auto),
		cmocka_unit_test(test_nccl_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
