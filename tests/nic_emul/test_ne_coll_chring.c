/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Channel rings (ne_coll_chring.c): with cfg.gpu_of every channel takes
 * NCCL's ring of its own through servers of 4 GPUs, and its network hops
 * leave through the NIC of GPU k = channel mod 4 (PXN).
 *
 * The ranks are dealt as rocelab-dp's order=nccl deals them: server-major,
 * and inside a server in channel 0's order GPU 0, 3, 2, 1, so rank
 * 4s + p is GPU (4 - p) mod 4 of server s.
 *
 * NCCL's rule (nccl/nc_ring.h), written out here: channel c's ring (k = c
 * mod 4) runs through each server as GPUs k, k-1, ..., k+1 (mod 4), the last
 * one (k+1) sends to GPU k of the next server, and that network hop leaves
 * through the NIC of GPU k of the sending server.
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
#define G 4u
#define NCH 4u

static uint32_t server_of[16], gpu_of[16];

static void deal(void)
{
	for (uint32_t r = 0; r < 16; r++) {
		server_of[r] = r / G;
		gpu_of[r] = (G - r % G) % G;
	}
}

static void cfg_ring(struct ne_coll_config *cfg, enum ne_coll_op op, uint32_t servers, bool nccl)
{
	deal();
	ne_coll_config_default(cfg);
	if (nccl)
		assert_int_equal(ne_coll_config_set(cfg, "model", "nccl"), 0);
	cfg->op = op;
	cfg->nranks = servers * G;
	cfg->bytes = MIB;
	cfg->chunk_bytes = 64 * KIB;
	cfg->channels = NCH;
	if (nccl) {
		assert_int_equal(ne_coll_config_set(cfg, "NCCL_MIN_NCHANNELS", "4"), 0);
		assert_int_equal(ne_coll_config_set(cfg, "NCCL_MAX_NCHANNELS", "4"), 0);
	}
	cfg->server_of = server_of;
	cfg->gpu_of = gpu_of;
}

/* The rank of GPU g of server s under the dealing above. */
static uint32_t rank_of(uint32_t s, uint32_t g)
{
	return s * G + (G - g) % G;
}

/* 2 servers, by hand from the rule: the ring of each channel in ranks, and
 * the NIC (a rank) that each rank's connection sends on. */
static const uint32_t next2[NCH][8] = {
	{1, 2, 3, 4, 5, 6, 7, 0}, /* GPUs 0,3,2,1 = ranks 0,1,2,3 | 4,5,6,7 */
	{1, 2, 7, 0, 5, 6, 3, 4}, /* GPUs 1,0,3,2 = ranks 3,0,1,2 | 7,4,5,6 */
	{1, 6, 3, 0, 5, 2, 7, 4}, /* GPUs 2,1,0,3 = ranks 2,3,0,1 | 6,7,4,5 */
	{5, 2, 3, 0, 1, 6, 7, 4}, /* GPUs 3,2,1,0 = ranks 1,2,3,0 | 5,6,7,4 */
};
static const uint32_t nic2[NCH][8] = {
	{0, 1, 2, 0, 4, 5, 6, 4}, /* 3 -> 4 on rank 0's NIC (GPU 0), 7 -> 0 on rank 4's */
	{0, 1, 3, 3, 4, 5, 7, 7}, /* 2 -> 7 on rank 3's (GPU 1), 6 -> 3 on rank 7's */
	{0, 2, 2, 3, 4, 6, 6, 7}, /* 1 -> 6 on rank 2's (GPU 2), 5 -> 2 on rank 6's */
	{1, 1, 2, 3, 5, 5, 6, 7}, /* 0 -> 5 on rank 1's (GPU 3), 4 -> 1 on rank 5's */
};

static void check_conns(struct ne_coll *c, uint32_t servers)
{
	uint32_t n = servers * G;

	assert_true(ne_coll_chan_rings(c));
	assert_int_equal(ne_coll_num_conns(c), NCH * n);
	for (uint32_t i = 0; i < NCH * n; i++) {
		struct ne_coll_conn_info ci;
		uint32_t ch, s, g, k, want_dst, want_nic;

		assert_int_equal(ne_coll_conn_info(c, i, &ci), 0);
		ch = ci.channel;
		k = ch % G;
		s = ci.src / G;
		g = gpu_of[ci.src];
		if (g == (k + 1) % G) { /* last of the server: network hop */
			want_dst = rank_of((s + 1) % servers, k);
			want_nic = rank_of(s, k);
		} else { /* one GPU down, over NVLink */
			want_dst = rank_of(s, (g + G - 1) % G);
			want_nic = ci.src;
		}
		if (servers == 2) { /* the table agrees with the rule */
			assert_int_equal(want_dst, next2[ch][ci.src]);
			assert_int_equal(want_nic, nic2[ch][ci.src]);
		}
		assert_int_equal(ci.dst, want_dst);
		assert_int_equal(ci.src_nic, want_nic);
		assert_int_equal(ne_coll_ring_next(c, ch, ci.src), (int)want_dst);
	}
}

/* The rings and NICs of every channel on 2 and 4 servers, for the ring ops. */
static void test_rings(void **state)
{
	static const enum ne_coll_op ops[] = {NE_COLL_ALLREDUCE, NE_COLL_ALLGATHER,
					      NE_COLL_REDUCESCATTER, NE_COLL_BROADCAST};

	(void)state;
	for (uint32_t servers = 2; servers <= 4; servers += 2)
		for (size_t o = 0; o < 4; o++) {
			struct ne_coll_config cfg;
			struct fab f;

			cfg_ring(&cfg, ops[o], servers, true);
			fab_init(&f, &cfg, RATE, DELAY);
			assert_non_null(fab_coll(&f, &cfg));
			check_conns(f.coll, servers);
			fab_free(&f);
		}
}

/* data=on: every ring op, both models, 2 and 4 servers: outputs right; the
 * PXN copies are the network messages of the PXN connections. */
static void test_data(void **state)
{
	static const enum ne_coll_op ops[] = {NE_COLL_ALLREDUCE, NE_COLL_ALLGATHER,
					      NE_COLL_REDUCESCATTER, NE_COLL_BROADCAST,
					      NE_COLL_REDUCE};

	(void)state;
	for (uint32_t servers = 2; servers <= 4; servers += 2)
		for (size_t o = 0; o < 5; o++)
			for (int nccl = 0; nccl < 2; nccl++) {
				struct ne_coll_config cfg;
				struct ne_coll_stats st;
				uint64_t pxn = 0;
				struct fab f;

				cfg_ring(&cfg, ops[o], servers, nccl);
				cfg.root = 5; /* GPU 3 of server 1 (rooted ops) */
				coll_run(&f, &cfg);
				assert_int_equal(coll_verify(f.coll, &cfg), 0);
				assert_int_equal(ne_coll_check(f.coll), 0);
				for (uint32_t i = 0; i < ne_coll_num_conns(f.coll); i++) {
					struct ne_coll_conn_info ci;

					assert_int_equal(ne_coll_conn_info(f.coll, i, &ci), 0);
					pxn += ci.src_nic != ci.src ? ci.ntransfers : 0;
				}
				ne_coll_get_stats(f.coll, &st);
				assert_true(pxn > 0);
				assert_int_equal(st.pxn_xfers, pxn * cfg.iters);
				fab_free(&f);
			}
}

/* Data payload bytes each NIC sent (the fabric's log: frames by sender). */
static void nic_tx(const struct fab *f, uint64_t *tx)
{
	for (uint32_t i = 0; i < f->n; i++)
		tx[i] = 0;
	for (size_t i = 0; i < f->nlog; i++)
		if (coll_is_data(f, &f->log[i]))
			tx[f->log[i].src] += f->log[i].payload_len;
}

/*
 * 2 servers x 4 GPUs, AllReduce of 1 MiB, 4 channels (model rocelab: no
 * FIFO writes in the data class). A channel's part is 256 KiB and each of
 * its connections carries 2 (n - 1) / n of it: 448 KiB. With channel rings
 * each NIC sends one channel's network hop; without them (rank order) the
 * NICs of ranks 3 and 7 send all four channels' hops and the others none.
 */
static void test_nic_spread(void **state)
{
	const uint64_t per_conn = 14u * 256 * KIB / 8;

	(void)state;
	for (int rings = 0; rings < 2; rings++) {
		struct ne_coll_config cfg;
		uint64_t tx[8];
		struct fab f;

		cfg_ring(&cfg, NE_COLL_ALLREDUCE, 2, false);
		if (!rings)
			cfg.gpu_of = NULL;
		coll_run(&f, &cfg);
		assert_int_equal(coll_verify(f.coll, &cfg), 0);
		nic_tx(&f, tx);
		for (uint32_t r = 0; r < 8; r++) {
			uint64_t want = rings ? per_conn : (r % G == 3 ? NCH * per_conn : 0);

			assert_int_equal(tx[r], want);
		}
		fab_free(&f);
	}
}

/*
 * The PXN copy's time, by hand: 2 servers x 2 GPUs, one channel (k = 0),
 * ring ranks 0 -> 1 -> 2 -> 3 (GPUs 0, 1 of each server); a Broadcast of one
 * 64 KiB message from rank 0. The hop 1 -> 2 leaves GPU 1; with channel
 * rings it first crosses NVLink to GPU 0 (rank 0), whose NIC sends it, the
 * same fabric path on the test's star switch. Without CTS the post waits
 * for nothing else, so the iteration is longer by one NVLink transfer:
 * ceil(65,536 B / 450 GB/s) = 146 ns, plus 600 ns. With CTS the copy
 * overlaps the CTS's way from rank 2 (two 1 us links, longer than the
 * 746 ns copy): no difference.
 */
static void test_pxn_time(void **state)
{
	static const uint32_t srv[4] = {0, 0, 1, 1}, gpu[4] = {0, 1, 0, 1};
	uint64_t t[2][2];

	(void)state;
	for (int cts = 0; cts < 2; cts++)
		for (int rings = 0; rings < 2; rings++) {
			struct ne_coll_config cfg;
			struct ne_coll_result res;
			struct fab f;

			cfg_ring(&cfg, NE_COLL_BROADCAST, 2, false);
			cfg.nranks = 4;
			cfg.channels = 1;
			cfg.bytes = 64 * KIB;
			cfg.server_of = srv;
			cfg.gpu_of = rings ? gpu : NULL;
			cfg.nvlink_Bps = 450000000000ull;
			cfg.nvlink_lat_ns = 600;
			cfg.cts = cts;
			coll_run(&f, &cfg);
			assert_int_equal(coll_verify(f.coll, &cfg), 0);
			assert_int_equal(ne_coll_get_result(f.coll, &res), 0);
			t[cts][rings] = res.time_ns;
			fab_free(&f);
		}
	assert_int_equal(t[0][1] - t[0][0], 146 + 600);
	assert_int_equal(t[1][1], t[1][0]);
}

/* Partial servers (3 GPUs of server 0): no channel rings, the rank order. */
static void test_partial(void **state)
{
	static const uint32_t srv[7] = {0, 0, 0, 1, 1, 1, 1};
	static const uint32_t gpu[7] = {0, 3, 2, 0, 3, 2, 1};
	struct ne_coll_config cfg;
	struct fab f;

	(void)state;
	cfg_ring(&cfg, NE_COLL_ALLREDUCE, 2, false);
	cfg.nranks = 7;
	cfg.server_of = srv;
	cfg.gpu_of = gpu;
	coll_run(&f, &cfg);
	assert_false(ne_coll_chan_rings(f.coll));
	assert_int_equal(coll_verify(f.coll, &cfg), 0);
	for (uint32_t r = 0; r < 7; r++)
		assert_int_equal(ne_coll_ring_next(f.coll, 3, r), (int)((r + 1) % 7));
	fab_free(&f);
	/* gpu_of without server_of is refused */
	cfg.server_of = NULL;
	assert_int_equal(ne_coll_config_check(&cfg), -22);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rings),
		cmocka_unit_test(test_data),
		cmocka_unit_test(test_nic_spread),
		cmocka_unit_test(test_pxn_time),
		cmocka_unit_test(test_partial),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
