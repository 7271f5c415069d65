/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Send/Recv (ne_coll_p2p.c): nccl-tests' sendrecv_perf pattern (rank r to
 * r + shift) and explicit pairs. Outputs are checked against coll_val()
 * (coll_test_util.c); the connections, their messages and bytes are
 * computed here by hand from the channel split (part_start: floor(total x
 * i / channels)) and the message size (chunk, or NCCL_P2P_NET_CHUNKSIZE).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coll_test_util.h"

#define KIB 1024u
#define MIB (1u << 20)

static void cfg_p2p(struct ne_coll_config *cfg, uint32_t n, uint32_t shift, bool nccl)
{
	ne_coll_config_default(cfg);
	if (nccl)
		assert_int_equal(ne_coll_config_set(cfg, "model", "nccl"), 0);
	cfg->op = NE_COLL_SENDRECV;
	cfg->nranks = n;
	cfg->shift = shift;
	cfg->bytes = MIB + 12; /* 262,147 floats: not a multiple of any message */
	cfg->chunk_bytes = 64 * KIB;
	cfg->channels = 2;
}

/*
 * 4 ranks, shift 1 and 3, 2 channels, 262,147 floats: channel 0 carries
 * floor(262147 / 2) = 131,073 floats, channel 1 the other 131,074. In
 * messages of 64 KiB (16,384 floats, model rocelab) that is 8 full ones and
 * a short one on each; of 128 KiB (32,768 floats, NCCL_P2P_NET_CHUNKSIZE's
 * default, model nccl) 4 and a short one. Connection ch x 4 + p is rank p to
 * rank (p + shift) mod 4. The wire carries the buffer once per rank (model
 * nccl: and a 64-byte FIFO entry per message).
 */
static void test_shift(void **state)
{
	static const uint32_t shifts[] = {1, 3};

	(void)state;
	for (int nccl = 0; nccl < 2; nccl++)
		for (size_t i = 0; i < 2; i++) {
			struct ne_coll_config cfg;
			struct ne_coll_result res;
			struct fab f;
			uint32_t msgs = nccl ? 5 : 9;

			cfg_p2p(&cfg, 4, shifts[i], nccl);
			coll_run(&f, &cfg);
			assert_int_equal(coll_verify(f.coll, &cfg), 0);
			assert_int_equal(ne_coll_check(f.coll), 0);
			assert_int_equal(ne_coll_num_conns(f.coll), 8);
			for (uint32_t k = 0; k < 8; k++) {
				struct ne_coll_conn_info ci;

				assert_int_equal(ne_coll_conn_info(f.coll, k, &ci), 0);
				assert_int_equal(ci.channel, k / 4);
				assert_int_equal(ci.src, k % 4);
				assert_int_equal(ci.dst, (k % 4 + shifts[i]) % 4);
				assert_int_equal(ci.ntransfers, msgs);
				assert_int_equal(ci.bytes, ci.channel ? 131074u * 4 : 131073u * 4);
			}
			assert_int_equal(coll_wire_data_bytes(&f),
					 4 * 262147ull * 4 + (nccl ? 64ull * 8 * msgs : 0));
			assert_int_equal(ne_coll_get_result(f.coll, &res), 0);
			assert_int_equal(res.size, 262147u * 4);
			assert_int_equal(res.count, 262147u);
			assert_int_equal(res.root, -1);
			assert_string_equal(res.redop, "none");
			assert_true(res.busbw == res.algbw); /* nccl-tests' factor 1 */
			fab_free(&f);
		}
}

/*
 * Explicit pairs 0>2, 1>2, 3>0 on 4 ranks: rank 2 holds 0's block then 1's,
 * rank 0 holds 3's, ranks 1 and 3 receive nothing (no output). 3 pairs x 2
 * channels = 6 connections, the buffer 3 times on the wire.
 */
static void test_pairs(void **state)
{
	struct ne_coll_config cfg;
	struct fab f;
	size_t nf;

	(void)state;
	cfg_p2p(&cfg, 4, 1, false);
	assert_int_equal(ne_coll_config_set(&cfg, "pairs", "0>2+1>2+3>0"), 0);
	assert_int_equal(cfg.npairs, 3);
	coll_run(&f, &cfg);
	assert_int_equal(coll_verify(f.coll, &cfg), 0);
	assert_int_equal(ne_coll_check(f.coll), 0);
	assert_int_equal(ne_coll_num_conns(f.coll), 6);
	assert_non_null(ne_coll_output(f.coll, 2, &nf));
	assert_int_equal(nf, 2 * 262147u);
	assert_null(ne_coll_output(f.coll, 1, &nf));
	assert_int_equal(coll_wire_data_bytes(&f), 3 * 262147ull * 4);
	fab_free(&f);
}

/*
 * The NIC room of a spec is the busiest rank's: in pairs 1>2+1>3+1>0, rank 1
 * holds 3 connections of 1 data and 1 control QP (model rocelab), 6 QPs;
 * rank 0 only 2. The room is twice that and 16 spare: 2 x 6 + 16 = 28.
 */
static void test_qps_room(void **state)
{
	struct ne_coll_spec sp;
	char msg[200];

	(void)state;
	ne_coll_spec_default(&sp);
	assert_int_equal(ne_coll_spec_parse(&sp, "op=sendrecv,pairs=1>2+1>3+1>0", msg, sizeof(msg)), 0);
	assert_int_equal(ne_coll_spec_qps_room(&sp, 4), 28);
	ne_coll_spec_free(&sp);
}

/*
 * 2 servers of 4 GPUs (ranks 0-3, 4-7). Shift 1: 3>4 and 7>0 cross servers,
 * the other 6 pairs are NVLink ones. Shift 2: 2>4, 3>5, 6>0, 7>1 cross, 4 stay
 * inside. Shift 4: every pair crosses. Each NVLink pair is one NVLink
 * connection per channel and its bytes never reach the wire.
 */
static void test_servers(void **state)
{
	static const uint32_t shifts[] = {1, 2, 4}, net[] = {2, 4, 8};
	static uint32_t server_of[8];

	(void)state;
	for (uint32_t i = 0; i < 8; i++)
		server_of[i] = i / 4;
	for (int nccl = 0; nccl < 2; nccl++)
		for (size_t i = 0; i < 3; i++) {
			struct ne_coll_config cfg;
			struct ne_coll_stats st;
			struct fab f;
			uint64_t buf = 262147ull * 4;

			cfg_p2p(&cfg, 8, shifts[i], nccl);
			cfg.server_of = server_of;
			coll_run(&f, &cfg);
			assert_int_equal(coll_verify(f.coll, &cfg), 0);
			ne_coll_get_stats(f.coll, &st);
			assert_int_equal(ne_coll_nvlink_conns(f.coll), 2 * (8 - net[i]));
			assert_int_equal(st.nvlink_bytes, (8 - net[i]) * buf);
			assert_int_equal(coll_wire_data_bytes(&f),
					 net[i] * buf +
						 (nccl ? 64 * (st.transfers_done - st.nvlink_xfers) : 0));
			fab_free(&f);
		}
}

/* Refusals: a rank outside the communicator, a rank sending to itself, a
 * shift that wraps to the sender, a malformed list. */
static void test_refusals(void **state)
{
	struct ne_coll_config cfg;
	char msg[200];

	(void)state;
	cfg_p2p(&cfg, 8, 1, false);
	assert_int_equal(ne_coll_config_check(&cfg), 0);
	assert_int_equal(ne_coll_config_set(&cfg, "pairs", "0>1+3>9"), 0);
	assert_int_equal(ne_coll_p2p_check(&cfg, msg, sizeof(msg)), -22);
	assert_string_equal(msg, "pairs=3>9: rank 9 is outside the 8 ranks (0..7)");
	assert_int_equal(ne_coll_config_check(&cfg), -22);

	cfg_p2p(&cfg, 8, 8, false);
	assert_int_equal(ne_coll_p2p_check(&cfg, msg, sizeof(msg)), -22);
	assert_string_equal(msg, "shift=8: must be 1..7 with 8 ranks");
	assert_int_equal(ne_coll_config_check(&cfg), -22);

	assert_int_equal(ne_coll_config_set_msg(&cfg, "pairs", "2>2", msg, sizeof(msg)), -22);
	assert_string_equal(msg, "pairs=2>2: rank 2 sends to itself");
	assert_int_equal(ne_coll_config_set_msg(&cfg, "pairs", "1>2+", msg, sizeof(msg)), -22);
	assert_non_null(strstr(msg, "want SENDER>RECEIVER"));
	assert_int_equal(ne_coll_config_set_msg(&cfg, "pairs", "1>2+1>2", msg, sizeof(msg)), -22);
	assert_string_equal(msg, "pairs=1>2+1>2: 1>2 given twice");
	assert_true(ne_coll_busbw_factor(NE_COLL_SENDRECV, 8) == 1.0);

	/* the keys belong to op=sendrecv, and pairs replace the shift */
	struct ne_coll_spec sp;

	ne_coll_spec_default(&sp);
	assert_int_equal(ne_coll_spec_parse(&sp, "op=allreduce,shift=2", msg, sizeof(msg)), -22);
	assert_string_equal(msg, "shift: only op=sendrecv takes it (op=allreduce)");
	ne_coll_spec_free(&sp);
	ne_coll_spec_default(&sp);
	assert_int_equal(ne_coll_spec_parse(&sp, "op=sendrecv,shift=2,pairs=0>1", msg, sizeof(msg)), -22);
	assert_string_equal(msg, "shift=2: pairs= gives the transfers, not the shift");
	ne_coll_spec_free(&sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shift),
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_qps_room),
		cmocka_unit_test(test_servers),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
