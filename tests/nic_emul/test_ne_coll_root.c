/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Broadcast and Reduce (ne_coll_root.c): NCCL's ring pipeline from / to the
 * root. Outputs are checked against coll_val() (coll_test_util.c), the
 * message counts and byte totals are computed here by hand from NCCL's rules
 * (chunk = NCCL_BUFFSIZE / 8, channel parts rounded up to 4,096 bytes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "coll_test_util.h"

#define KIB 1024u
#define MIB (1u << 20)

static void cfg_root(struct ne_coll_config *cfg, enum ne_coll_op op, uint32_t n, uint32_t root,
		     bool nccl)
{
	ne_coll_config_default(cfg);
	if (nccl)
		assert_int_equal(ne_coll_config_set(cfg, "model", "nccl"), 0);
	cfg->op = op;
	cfg->nranks = n;
	cfg->root = root;
	cfg->bytes = MIB + 12; /* not a multiple of any chunk or alignment */
	cfg->chunk_bytes = 128 * KIB;
	cfg->channels = 2;
}

/* Plain hosts, both ops, both models, several roots: every output right, and
 * the wire carries (n - 1) x the buffer (each hop once; model nccl: and a
 * 64-byte FIFO entry per message). */
static void test_hosts(void **state)
{
	static const enum ne_coll_op ops[] = {NE_COLL_BROADCAST, NE_COLL_REDUCE};
	static const uint32_t roots[] = {0, 2, 4};

	(void)state;
	for (int nccl = 0; nccl < 2; nccl++)
		for (size_t i = 0; i < 2; i++)
			for (size_t r = 0; r < 3; r++) {
				struct ne_coll_config cfg;
				struct ne_coll_result res;
				struct ne_coll_stats st;
				struct fab f;

				cfg_root(&cfg, ops[i], 5, roots[r], nccl);
				coll_run(&f, &cfg);
				assert_int_equal(coll_verify(f.coll, &cfg), 0);
				assert_int_equal(ne_coll_check(f.coll), 0);
				ne_coll_get_stats(f.coll, &st);
				/* model nccl: each message's 64-byte FIFO entry is a
				 * WRITE in the data class too */
				assert_int_equal(coll_wire_data_bytes(&f),
						 4 * (uint64_t)(cfg.bytes / 4) * 4 +
							 (nccl ? 64 * st.transfers_done : 0));
				assert_int_equal(ne_coll_get_result(f.coll, &res), 0);
				assert_int_equal(res.root, (int)roots[r]);
				assert_int_equal(res.size, cfg.bytes / 4 * 4);
				assert_true(res.busbw == res.algbw); /* factor 1 */
				assert_string_equal(res.redop, i ? "sum" : "none");
				fab_free(&f);
			}
}

/*
 * Model nccl, 4 ranks, root 1, 2 channels, 3 MiB + 4 KiB = 787,456 floats.
 * countPerChannels = roundup(ceil(787456 / 2) = 393728, 1024) = 394240:
 * channel 0 has 394,240 floats = 3 chunks of 131,072 (512 KiB) + 1,024;
 * channel 1 has 393,216 = 3 chunks. Broadcast: connections 1->2, 2->3,
 * 3->0 carry 4 messages on channel 0 and 3 on channel 1, 0->1 none.
 * Reduce: 2->3, 3->0, 0->1 carry them, 1->2 none.
 */
static void test_nccl_plan(void **state)
{
	static const uint32_t want_ch[2] = {4, 3};

	(void)state;
	for (int red = 0; red < 2; red++) {
		struct ne_coll_config cfg;
		struct fab f;

		cfg_root(&cfg, red ? NE_COLL_REDUCE : NE_COLL_BROADCAST, 4, 1, true);
		cfg.bytes = 3 * MIB + 4 * KIB;
		coll_run(&f, &cfg);
		assert_int_equal(coll_verify(f.coll, &cfg), 0);
		assert_int_equal(ne_coll_num_conns(f.coll), 8);
		for (uint32_t k = 0; k < 8; k++) {
			struct ne_coll_conn_info ci;
			uint32_t unused = red ? 1 : 0; /* the sender of no hop */

			assert_int_equal(ne_coll_conn_info(f.coll, k, &ci), 0);
			assert_int_equal(ci.dst, (ci.src + 1) % 4);
			if (ci.src == unused) {
				assert_int_equal(ci.ntransfers, 0);
				continue;
			}
			assert_int_equal(ci.ntransfers, want_ch[ci.channel]);
			assert_int_equal(ci.bytes, ci.channel ? 393216u * 4 : 394240u * 4);
		}
		fab_free(&f);
	}
}

/*
 * Servers of 4 GPUs (2 and 4 of them), ring in rank order: the hops between
 * two GPUs of one server go over NVLink, the others over the NICs (model
 * nccl: with a 64-byte FIFO entry per network message). A
 * Broadcast or Reduce makes n - 1 hops; of those, the ones that cross a
 * server boundary (s -> s + 1 with s + 1 a multiple of 4) go on the wire.
 */
static void test_servers(void **state)
{
	static const uint32_t servers[] = {2, 4};
	static uint32_t server_of[16];

	(void)state;
	for (uint32_t i = 0; i < 16; i++)
		server_of[i] = i / 4;
	for (size_t si = 0; si < 2; si++)
		for (int red = 0; red < 2; red++)
			for (int nccl = 0; nccl < 2; nccl++) {
				uint32_t n = servers[si] * 4;
				uint64_t buf;
				struct ne_coll_config cfg;
				struct ne_coll_stats st;
				struct fab f;

				cfg_root(&cfg, red ? NE_COLL_REDUCE : NE_COLL_BROADCAST, n, 0, nccl);
				cfg.server_of = server_of;
				buf = cfg.bytes / 4 * 4;
				coll_run(&f, &cfg);
				assert_int_equal(coll_verify(f.coll, &cfg), 0);
				ne_coll_get_stats(f.coll, &st);
				/* the ring's edges that cross servers: 3 -> 4, ...,
				 * n-1 -> 0. Broadcast from 0 skips n-1 -> 0 (servers - 1
				 * network hops); Reduce to 0 skips 0 -> 1 (servers) */
				uint64_t net = red ? servers[si] : servers[si] - 1;

				assert_int_equal(coll_wire_data_bytes(&f),
						 net * buf +
							 (nccl ? 64 * (st.transfers_done - st.nvlink_xfers) : 0));
				assert_int_equal(st.nvlink_bytes, (n - 1 - net) * buf);
				fab_free(&f);
			}
}

/* A root outside the ranks is refused by the config check. */
static void test_bad_root(void **state)
{
	struct ne_coll_config cfg;

	(void)state;
	cfg_root(&cfg, NE_COLL_BROADCAST, 4, 4, false);
	assert_int_equal(ne_coll_config_check(&cfg), -22);
	cfg.root = 3;
	assert_int_equal(ne_coll_config_check(&cfg), 0);
	cfg.op = NE_COLL_REDUCE;
	cfg.root = 7;
	assert_int_equal(ne_coll_config_check(&cfg), -22);
	assert_true(ne_coll_busbw_factor(NE_COLL_BROADCAST, 8) == 1.0);
	assert_true(ne_coll_busbw_factor(NE_COLL_REDUCE, 8) == 1.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hosts),
		cmocka_unit_test(test_nccl_plan),
		cmocka_unit_test(test_servers),
		cmocka_unit_test(test_bad_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
