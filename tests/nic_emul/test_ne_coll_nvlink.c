/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVLink hops (ne_coll.h, "NVLink"): a transfer between two ranks of one
 * server is timed by nc_nvlink and never reaches a NIC. The times here are
 * computed by hand from the H100 defaults (450e9 B/s, 600 ns), not by the
 * library.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coll_test_util.h"

#define MIB (1u << 20)

static void cfg_servers(struct ne_coll_config *cfg, uint32_t n, const uint32_t *server_of)
{
	ne_coll_config_default(cfg);
	cfg->nranks = n;
	cfg->bytes = MIB;
	cfg->chunk_bytes = MIB / 2; /* every ring segment is one transfer */
	cfg->server_of = server_of;
}

/*
 * One server of 2 GPUs, a 1 MiB AllReduce: two ring steps (reduce-scatter,
 * all-gather) of 512 KiB each, one after the other. A step takes
 * ceil(524288 x 1e9 / 450e9) = ceil(1165.08) = 1166 ns of bytes + 600 ns:
 * 1766 ns, so the collective takes 3532 ns. No frame leaves a NIC.
 */
static void test_two_gpus_exact(void **state)
{
	static const uint32_t server_of[2] = {0, 0};
	struct ne_coll_config cfg;
	struct ne_coll_stats st;
	struct fab f;

	(void)state;
	cfg_servers(&cfg, 2, server_of);
	coll_run(&f, &cfg);
	assert_int_equal(ne_coll_iter_time_ns(f.coll, 0), 2 * (1166 + 600));
	assert_int_equal(f.nlog, 0);
	assert_int_equal(coll_verify(f.coll, &cfg), 0);
	ne_coll_get_stats(f.coll, &st);
	assert_int_equal(st.nvlink_xfers, 4); /* 2 ranks x 2 steps */
	assert_int_equal(st.nvlink_bytes, 4 * 524288);
	assert_int_equal(st.data_wrs, 0);
	assert_int_equal(st.cts_sent, 0);
	assert_int_equal(ne_coll_nvlink_conns(f.coll), 2);
	fab_free(&f);
}

/*
 * launch=nccl charges NCCL 2.21.5's latency model (src/graph/tuning.cc):
 * baseLat of Ring Simple, 8.4 us, once, and hwLat[NVLINK] of Ring Simple,
 * 3.4 us, on each NVLink step in place of the 600 ns hop. Two GPUs, 1 MiB:
 * 8400 + 2 x (1166 + 3400) = 17532 ns. Four GPUs: 6 steps of 256 KiB,
 * ceil(262144 x 1e9 / 450e9) = 583 ns each: 8400 + 6 x (583 + 3400) =
 * 32298 ns. AllGather on four: 3 steps of 256 KiB, 8400 + 3 x 3983 =
 * 20349 ns. Sendrecv is no op of NCCL's tables: it takes what it takes
 * with launch=off (600 ns hops, no launch).
 */
static void test_nccl_step_latency(void **state)
{
	static const uint32_t server_of[4] = {0, 0, 0, 0};
	static const struct {
		uint32_t n;
		const char *op;
		uint64_t ns;
	} want[] = {
		{2, "allreduce", 8400 + 2 * (1166 + 3400)},
		{4, "allreduce", 8400 + 6 * (583 + 3400)},
		{4, "allgather", 8400 + 3 * (583 + 3400)},
		{2, "sendrecv", 0},
	};
	struct ne_coll_config cfg;
	struct fab f;

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		cfg_servers(&cfg, want[i].n, server_of);
		assert_int_equal(ne_coll_config_set(&cfg, "op", want[i].op), 0);
		assert_int_equal(ne_coll_config_set(&cfg, "launch", "nccl"), 0);
		coll_run(&f, &cfg);
		uint64_t ns = ne_coll_iter_time_ns(f.coll, 0);
		assert_int_equal(f.nlog, 0);
		assert_int_equal(coll_verify(f.coll, &cfg), 0);
		fab_free(&f);
		if (want[i].ns == 0) { /* the same run without NCCL's latency */
			assert_int_equal(ne_coll_config_set(&cfg, "launch", "off"), 0);
			coll_run(&f, &cfg);
			assert_int_equal(ns, ne_coll_iter_time_ns(f.coll, 0));
			fab_free(&f);
			continue;
		}
		assert_int_equal(ns, want[i].ns);
	}
}

/*
 * NCCL_PROTO=LL / LL128 on two GPUs of one server, model nccl, launch=nccl,
 * a 16 KiB AllReduce: one round, each rank's step message is min(LL chunk
 * 8192 floats, 4096 / 2) = 2048 floats = 8192 data bytes. LL sends 16384
 * bytes: ceil(16384 x 1e9 / 450e9) = 37 ns, but NCCL's cap on LL's bus
 * bandwidth on one Hopper server (llMaxBws 141 GB/s) lets the GPU send
 * its 8192 data bytes in no less than ceil(8192 x 1e9 / 141e9) = 59 ns;
 * Ring LL baseLat 6.6 us, hwLat[NVLINK] 0.6 us (src/graph/tuning.cc):
 * 6600 + 2 x (59 + 600) = 7918 ns. 64 KiB: 32768 data bytes a step, 146 ns
 * of wire, 233 ns at the cap: 6600 + 2 x (233 + 600) = 8266 ns.
 * LL128 sends 69 lines of 128 = 8832 bytes: 20 ns (its cap, 12 channels x
 * 36.7 = 440.4 GB/s, gives 19); baseLat 14, hwLat 1.9:
 * 14000 + 2 x (20 + 1900) = 17840 ns. Simple (the old run of every
 * protocol): 8400 + 2 x (19 + 3400) = 15238. 256 KiB with LL: steps of one
 * LL chunk, 32 KiB of data, 4 rounds: 2 ranks x 4 x 2 = 16 NVLink transfers
 * of 65536 bytes (Simple: 8 of 65536 data bytes, two slices a step).
 */
static void test_nccl_proto_ll(void **state)
{
	static const uint32_t server_of[2] = {0, 0};
	static const struct {
		const char *proto;
		uint64_t bytes, ns, xfers, nvl_bytes;
	} want[] = {
		{"LL", 16384, 6600 + 2 * (59 + 600), 4, 4 * 16384},
		{"LL", 65536, 6600 + 2 * (233 + 600), 4, 4 * 65536},
		{"LL128", 16384, 14000 + 2 * (20 + 1900), 4, 4 * 8832},
		{"Simple", 16384, 8400 + 2 * (19 + 3400), 4, 4 * 8192},
		{"LL", 262144, 0, 16, 16 * 65536},
		{"Simple", 262144, 0, 8, 8 * 65536},
	};
	struct ne_coll_config cfg;
	struct ne_coll_stats st;
	struct fab f;

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		cfg_servers(&cfg, 2, server_of);
		assert_int_equal(ne_coll_config_set(&cfg, "model", "nccl"), 0);
		assert_int_equal(ne_coll_config_set(&cfg, "launch", "nccl"), 0);
		assert_int_equal(ne_coll_config_set(&cfg, "NCCL_PROTO", want[i].proto), 0);
		cfg.bytes = want[i].bytes;
		coll_run(&f, &cfg);
		assert_int_equal(f.nlog, 0);
		assert_int_equal(coll_verify(f.coll, &cfg), 0); /* (data on: flags read past) */
		if (want[i].ns)
			assert_int_equal(ne_coll_iter_time_ns(f.coll, 0), want[i].ns);
		ne_coll_get_stats(f.coll, &st);
		assert_int_equal(st.nvlink_xfers, want[i].xfers);
		assert_int_equal(st.nvlink_bytes, want[i].nvl_bytes);
		fab_free(&f);
	}
}

/*
 * algo=auto on one server of 8 GPUs: NCCL's tuning (nc_tune, the NVLink-only
 * graph of one server) picks Ring/LL at 1 MiB, Ring/LL128 at 4 and 16 MiB,
 * Ring/Simple at 64 MiB, and the run sends that protocol's bytes over 14
 * ring steps of 8 ranks (one channel).
 * 1 MiB: 4 LL rounds of 32 KiB messages, 14 x 1 MiB of data, doubled:
 * 29360128. 4 MiB: one round, a message min(144000, 1048576 / 8) = 131072
 * floats = 524288 bytes = ceil(524288 / 120) = 4370 lines of 128 = 559360
 * wire bytes; 8 x 14 x 559360 = 62648320. 16 MiB (4194304 floats): 3
 * rounds of 144000-float messages (576000 bytes, 4800 lines, 614400 wire
 * bytes), then ceil(738304 / 8) = 92288 floats (369152 bytes, 3077 lines,
 * 393856): 8 x 14 x (3 x 614400 + 393856) = 250550272. 64 MiB: the data,
 * 14 x 64 MiB. NCCL_ALGO=Ring the same: NCCL tunes the protocol of a
 * forced algorithm.
 */
static void test_nccl_proto_auto(void **state)
{
	static const uint32_t server_of[8] = {0, 0, 0, 0, 0, 0, 0, 0};
	static const struct {
		uint64_t bytes, nvl_bytes;
		const char *line;
	} want[] = {
		{MIB, 29360128, "# algo: ring (NCCL's tuning picks Ring/LL for 1048576 B, "},
		{4 * MIB, 62648320, "# algo: ring (NCCL's tuning picks Ring/LL128 for 4194304 B, "},
		{16 * MIB, 250550272, "# algo: ring (NCCL's tuning picks Ring/LL128 for 16777216 B, "},
		{64 * MIB, 14ull * 64 * MIB,
		 "# algo: ring (NCCL's tuning picks Ring/Simple for 67108864 B, "},
	};
	struct ne_coll_config cfg;
	struct ne_coll_stats st;
	struct fab f;
	char line[256];

	(void)state;
	for (size_t i = 0; i < 2 * sizeof(want) / sizeof(want[0]); i++) {
		size_t w = i % (sizeof(want) / sizeof(want[0]));

		cfg_servers(&cfg, 8, server_of);
		assert_int_equal(ne_coll_config_set(&cfg, "model", "nccl"), 0);
		if (i == w)
			assert_int_equal(ne_coll_config_set(&cfg, "algo", "auto"), 0);
		else /* NCCL_ALGO=Ring: the protocol is still NCCL's pick */
			assert_int_equal(ne_coll_config_set(&cfg, "NCCL_ALGO", "Ring"), 0);
		cfg.bytes = want[w].bytes;
		cfg.data = false;
		coll_run(&f, &cfg);
		assert_int_equal(f.nlog, 0);
		ne_coll_get_stats(f.coll, &st);
		assert_int_equal(st.nvlink_bytes, want[w].nvl_bytes);
		ne_coll_format_algo(f.coll, line, sizeof(line));
		assert_memory_equal(line, want[w].line, strlen(want[w].line));
		assert_null(strstr(line, "runs as"));
		fab_free(&f);
	}
}

/*
 * AllGather and ReduceScatter are tuned too (Ring only): on one server of 8,
 * 1 MiB in all (NCCL's nBytes), Ring/LL (nc_tune: 17.31 us against LL128
 * 30.07 and Simple 34.75). 7 steps of 8 ranks, each a rank's 131072-byte
 * block in 4 LL messages of 32 KiB: 8 x 7 x 131072 = 7340032 data bytes,
 * doubled: 14680064.
 */
static void test_nccl_proto_allgather(void **state)
{
	static const uint32_t server_of[8] = {0, 0, 0, 0, 0, 0, 0, 0};
	static const enum ne_coll_op ops[] = {NE_COLL_ALLGATHER, NE_COLL_REDUCESCATTER};
	const char *want = "# algo: ring (NCCL's tuning picks Ring/LL for 1048576 B, ";
	char line[256];

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct ne_coll_config cfg;
		struct ne_coll_stats st;
		struct fab f;

		cfg_servers(&cfg, 8, server_of);
		assert_int_equal(ne_coll_config_set(&cfg, "model", "nccl"), 0);
		assert_int_equal(ne_coll_config_set(&cfg, "NCCL_ALGO", "Ring"), 0);
		cfg.op = ops[i];
		cfg.bytes = MIB;
		coll_run(&f, &cfg);
		assert_int_equal(coll_verify(f.coll, &cfg), 0);
		ne_coll_get_stats(f.coll, &st);
		assert_int_equal(st.nvlink_bytes, 14680064);
		ne_coll_format_algo(f.coll, line, sizeof(line));
		assert_memory_equal(line, want, strlen(want));
		fab_free(&f);
	}
}

/*
 * LL across servers (2 hosts, one GPU each, NCCL_PROTO=LL, a 16 KiB
 * AllReduce): NCCL's cap on LL's bus bandwidth (llMaxBws, 2 nodes, Intel:
 * 39 GB/s) makes each GPU write a step's 8192 data bytes in 211 ns before
 * the proxy posts it. The write needs no FIFO entry (CTS): it overlaps
 * that wait, as PXN's copy does. Of the 4 network messages (2 ranks x 2
 * steps), step 0's wait last for their FIFO entries (a network crossing,
 * more than 211 ns), step 1's for the write (their entries came at the
 * start, 8 per connection; their data with step 0's message). None waits
 * for PXN; no NVLink.
 */
static void test_ll_cap_network(void **state)
{
	struct ne_coll_config cfg;
	struct ne_coll_stats st;
	struct fab f;

	(void)state;
	cfg_servers(&cfg, 2, NULL);
	assert_int_equal(ne_coll_config_set(&cfg, "model", "nccl"), 0);
	assert_int_equal(ne_coll_config_set(&cfg, "NCCL_PROTO", "LL"), 0);
	cfg.bytes = 16384;
	coll_run(&f, &cfg);
	assert_int_equal(coll_verify(f.coll, &cfg), 0);
	ne_coll_get_stats(f.coll, &st);
	assert_int_equal(st.gate_net[NE_COLL_GATE_WRITE], 2);
	assert_int_equal(st.gate_net[NE_COLL_GATE_CTS], 2);
	assert_int_equal(st.gate_net[NE_COLL_GATE_PXN], 0);
	assert_int_equal(st.pxn_xfers, 0);
	assert_int_equal(st.nvlink_xfers, 0);
	assert_int_equal(st.data_bytes, 4 * 16384);
	fab_free(&f);
}

/*
 * Two channels: each rank sends two 256 KiB transfers per step, and its GPU's
 * egress carries one at a time. 262144 B take ceil(582.54) = 583 ns.
 * Reduce-scatter: the first ends at 583 + 600 = 1183, the second's bytes
 * follow (583 .. 1166) and it ends at 1766. All-gather: channel A's step is
 * ready at 1183 (egress free since 1166): bytes 1183 .. 1766, ends 2366;
 * channel B's is ready at 1766: bytes 1766 .. 2349, ends 2949.
 */
static void test_egress_shared(void **state)
{
	static const uint32_t server_of[2] = {7, 7};
	struct ne_coll_config cfg;
	struct fab f;

	(void)state;
	cfg_servers(&cfg, 2, server_of);
	cfg.channels = 2;
	coll_run(&f, &cfg);
	assert_int_equal(ne_coll_iter_time_ns(f.coll, 0), 2949);
	assert_int_equal(coll_verify(f.coll, &cfg), 0);
	fab_free(&f);
}

/* A slower NVLink from the config: 1e9 B/s and 1 us, the same 2-GPU case:
 * 2 x (524288 + 1000) ns. */
static void test_rate_from_config(void **state)
{
	static const uint32_t server_of[2] = {0, 0};
	struct ne_coll_config cfg;
	struct fab f;

	(void)state;
	cfg_servers(&cfg, 2, server_of);
	cfg.nvlink_Bps = 1000000000ull;
	cfg.nvlink_lat_ns = 1000;
	coll_run(&f, &cfg);
	assert_int_equal(ne_coll_iter_time_ns(f.coll, 0), 2 * (524288 + 1000));
	fab_free(&f);
}

/* 2 servers x 4 GPUs in server order: of the ring's 8 connections, 3->4 and
 * 7->0 cross the network; the 6 others carry 2 x 7 = 14 segments of
 * 1 MiB / 8 = 131072 B each over NVLink. */
static const uint32_t two_servers[8] = {0, 0, 0, 0, 1, 1, 1, 1};

static void check_two_servers(const struct fab *f)
{
	struct ne_coll_stats st;

	ne_coll_get_stats(f->coll, &st);
	assert_int_equal(st.nvlink_xfers, 6 * 14);
	assert_int_equal(st.nvlink_bytes, 6 * 14 * 131072ull);
	assert_int_equal(ne_coll_nvlink_conns(f->coll), 6);
	assert_true(f->nlog > 0);
	for (size_t i = 0; i < f->nlog; i++) {
		const struct fab_rec *r = &f->log[i];
		bool net = (r->src == 3 && r->dst == 4) || (r->src == 4 && r->dst == 3) ||
			   (r->src == 7 && r->dst == 0) || (r->src == 0 && r->dst == 7);

		assert_true(net); /* data one way, CTS and ACKs the other */
	}
	assert_int_equal(coll_wire_data_bytes(f), 2 * 14 * 131072ull);
}

static void test_two_servers(void **state)
{
	struct ne_coll_config cfg;
	struct fab f;

	(void)state;
	cfg_servers(&cfg, 8, two_servers);
	coll_run(&f, &cfg);
	assert_int_equal(coll_verify(f.coll, &cfg), 0);
	assert_int_equal(ne_coll_check(f.coll), 0);
	check_two_servers(&f);
	fab_free(&f);
}

/* The nccl model's ring over the same servers: data right, NVLink counted. */
static void test_two_servers_nccl(void **state)
{
	struct ne_coll_config cfg;
	struct fab f;

	(void)state;
	cfg_servers(&cfg, 8, two_servers);
	assert_int_equal(ne_coll_config_set(&cfg, "model", "nccl"), 0);
	coll_run(&f, &cfg);
	assert_int_equal(coll_verify(f.coll, &cfg), 0);
	struct ne_coll_stats st;
	ne_coll_get_stats(f.coll, &st);
	assert_true(st.nvlink_xfers > 0);
	/* the NICs carry 2 of the ring's 8 hops, NVLink the 6 others: every
	 * hop carries the same bytes */
	assert_int_equal(st.data_bytes * 3, st.nvlink_bytes);
	fab_free(&f);
}

/* Every other operation over the same servers, both models: each output right,
 * some hops over NVLink and none of them on the wire. */
static void test_other_ops(void **state)
{
	static const enum ne_coll_op ops[] = {NE_COLL_ALLGATHER, NE_COLL_REDUCESCATTER,
					      NE_COLL_ALLTOALL, NE_COLL_INCAST};

	(void)state;
	for (int nccl = 0; nccl < 2; nccl++)
		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
			struct ne_coll_config cfg;
			struct ne_coll_stats st;
			struct fab f;

			cfg_servers(&cfg, 8, two_servers);
			if (nccl)
				assert_int_equal(ne_coll_config_set(&cfg, "model", "nccl"), 0);
			cfg.op = ops[i];
			coll_run(&f, &cfg);
			assert_int_equal(coll_verify(f.coll, &cfg), 0);
			ne_coll_get_stats(f.coll, &st);
			assert_true(st.nvlink_xfers > 0);
			for (size_t r = 0; r < f.nlog; r++) /* no frame between two GPUs of a server */
				assert_true(two_servers[f.log[r].src] != two_servers[f.log[r].dst]);
			fab_free(&f);
		}
}

/* Lanes: one per server runs as the whole; a lane that splits a server is refused. */
static void test_lanes(void **state)
{
	static const uint32_t by_server[8] = {0, 0, 0, 0, 1, 1, 1, 1};
	static const uint32_t halves_off[8] = {0, 0, 0, 1, 1, 1, 1, 0};
	struct ne_coll_config cfg;
	uint64_t whole;
	struct fab f;

	(void)state;
	cfg_servers(&cfg, 8, two_servers);
	coll_run(&f, &cfg);
	whole = ne_coll_iter_time_ns(f.coll, 0);
	fab_free(&f);

	fab_init(&f, &cfg, RATE, DELAY);
	assert_non_null(fab_coll(&f, &cfg));
	coll_fill_inputs(f.coll, cfg.nranks);
	assert_int_equal(ne_coll_set_lanes(f.coll, 2, halves_off), -EINVAL);
	assert_int_equal(ne_coll_set_lanes(f.coll, 2, by_server), 0);
	f.nlanes = 2;
	for (uint32_t l = 0; l < 2; l++)
		assert_int_equal(ne_coll_lane_start(ne_coll_lane(f.coll, l), 0), 0);
	assert_true(fab_run(&f, UNTIL));
	assert_true(ne_coll_done(f.coll));
	assert_int_equal(coll_verify(f.coll, &cfg), 0);
	assert_int_equal(ne_coll_iter_time_ns(f.coll, 0), whole);
	check_two_servers(&f);
	fab_free(&f);
}

/* Without server_of nothing is NVLink: every hop is on the wire. */
static void test_no_servers(void **state)
{
	struct ne_coll_config cfg;
	struct ne_coll_stats st;
	struct fab f;

	(void)state;
	cfg_servers(&cfg, 8, NULL);
	coll_run(&f, &cfg);
	ne_coll_get_stats(f.coll, &st);
	assert_int_equal(st.nvlink_xfers, 0);
	assert_int_equal(ne_coll_nvlink_conns(f.coll), 0);
	assert_int_equal(coll_wire_data_bytes(&f), 8 * 14 * 131072ull);
	fab_free(&f);
}

/*
 * What each message waited for last (ne_coll_stats.gate_nvl / gate_net): a
 * 4 MiB Broadcast of model nccl from rank 0 of 2 is 8 one-step messages of
 * 512 KiB on one connection, all of whose data is the root's input, there
 * at the start; a connection has 4 slots.
 * - Over NVLink (one server): messages 0-3 go at the start (data), and
 *   message s of 4-7 when message s - 4 ended and freed its slot (slot).
 * - Over the network (two hosts): every message waits for its FIFO entry.
 *   Entries 0-3 leave the receiver at the start. Entry s of 4-7 leaves when
 *   message s - 4 was received, after the ACK that frees its slot (the
 *   responder ACKs as the packet arrives; the entry waits for the
 *   completion and its post, and goes behind that ACK on the same link).
 */
static void test_gates(void **state)
{
	static const uint32_t one_server[2] = {0, 0};
	struct ne_coll_stats st;

	(void)state;
	for (int nvl = 0; nvl < 2; nvl++) {
		struct ne_coll_config cfg;
		struct fab f;

		cfg_servers(&cfg, 2, nvl ? one_server : NULL);
		assert_int_equal(ne_coll_config_set(&cfg, "model", "nccl"), 0);
		cfg.op = NE_COLL_BROADCAST;
		cfg.bytes = 4 * MIB;
		coll_run(&f, &cfg);
		assert_int_equal(coll_verify(f.coll, &cfg), 0);
		ne_coll_get_stats(f.coll, &st);
		const uint64_t *gates = nvl ? st.gate_nvl : st.gate_net, *none = nvl ? st.gate_net : st.gate_nvl;

		assert_int_equal(gates[NE_COLL_GATE_DATA], nvl ? 4 : 0);
		assert_int_equal(gates[NE_COLL_GATE_SLOT], nvl ? 4 : 0);
		assert_int_equal(gates[NE_COLL_GATE_CTS], nvl ? 0 : 8);
		assert_int_equal(gates[NE_COLL_GATE_PXN] + gates[NE_COLL_GATE_QUEUE], 0);
		for (int g = 0; g < NE_COLL_GATES; g++)
			assert_int_equal(none[g], 0);
		fab_free(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_gpus_exact),
		cmocka_unit_test(test_egress_shared),
		cmocka_unit_test(test_nccl_step_latency),
		cmocka_unit_test(test_rate_from_config),
		cmocka_unit_test(test_two_servers),
		cmocka_unit_test(test_two_servers_nccl),
		cmocka_unit_test(test_other_ops),
		cmocka_unit_test(test_lanes),
		cmocka_unit_test(test_nccl_proto_allgather),
		cmocka_unit_test(test_ll_cap_network),
		cmocka_unit_test(test_no_servers),
		cmocka_unit_test(test_gates),
		cmocka_unit_test(test_nccl_proto_ll),
		cmocka_unit_test(test_nccl_proto_auto),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
