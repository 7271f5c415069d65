/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NCCL 2.21.5's AllReduce choice for 2 servers x 8 H100 (16 ranks),
 * Intel hosts, graphs of 8 channels x 48 GB/s, 16 runtime channels.
 * Worked out by hand from src/graph/tuning.cc:
 *
 * Bandwidth (GB/s): busBw = 8 x 48 = 384 (2 nodes: bwIntra).
 *  Ring  LL     min(llMaxBw 39.0, 384 x .5) = 39.0,   x 16/30 = 20.8
 *  Ring  LL128  min(384 x .92, 8 x 36.7 = 293.6),     x 16/30 = 156.58667
 *  Ring  Simple 384                                   x 16/30 = 204.8
 *  Tree  all:   min(384 x .92 = 353.28, 8 x 41.4 = 331.2) = 331.2
 *  Tree  LL     min(331.2 / 3.8, 39.0) = 39.0, x .85 (pattern TREE), x .5 = 16.575
 *  Tree  LL128  min(331.2 x 120/128 = 310.5, 8 x 36.7 = 293.6) x .85 x .5 = 124.78
 *  Tree  Simple 331.2 x .85 x .5 = 140.76
 * Latency (us): ring nsteps 2 x 15 = 30, of which 2 x 2 = 4 network steps;
 * intra hop max(NVLink hwLat, net overhead 1 us, x3 for Simple).
 *  Ring  LL     6.6 + 26 x max(.6, 1) + 4 x 2.7   = 43.4
 *  Ring  LL128  14  + 26 x max(1.9, 1) + 4 x 4.0  = 79.4
 *  Ring  Simple 8.4 + 26 x max(3.4, 3) + 4 x 14   = 152.8 (x 1.4 plateau
 *               when bytes / (16 ch x 16 ranks) >= 64: 213.92)
 *  Tree  LL     6.8 + 2 x (7 x .6 + log2(2) x 5.0)   = 25.2
 *  Tree  LL128  14  + 2 x (7 x 1.25 + 8.5)           = 48.5
 *  Tree  Simple 0   + 2 x (7 x 28 + 28)              = 448
 * Time = lat + bytes / (1000 x bw); Tree's bw x treeCorrectionFactor at
 * log2(bytes / 64).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "nc_tune.h"

#define EPS 1e-6

static void setup(struct nc_tune_params *p, struct nc_tune_table *t, uint32_t nodes)
{
	nc_tune_params_h100(p, nodes, 8);
	assert_int_equal(nc_tune_model(p, t), 0);
}

/* The table of nodes x 8 GPUs equals bw / lat (worked out by hand). */
static void expect_table(struct nc_tune_params *p, struct nc_tune_table *t, uint32_t nodes,
			 const double bw[2][3], const double lat[2][3])
{
	setup(p, t, nodes);
	for (int a = 0; a < NC_ALGO_COUNT; a++) {
		for (int pr = 0; pr < NC_PROTO_COUNT; pr++) {
			assert_float_equal(t->bw_gbs[a][pr], bw[a][pr], EPS);
			assert_float_equal(t->lat_us[a][pr], lat[a][pr], EPS);
		}
	}
}

static void test_tune_table(void **state)
{
	(void)state;
	struct nc_tune_params p;
	struct nc_tune_table t;
	static const double bw[2][3] = { { 16.575, 124.78, 140.76 },
					 { 20.8, 156.5866666667, 204.8 } };
	static const double lat[2][3] = { { 25.2, 48.5, 448.0 }, { 43.4, 79.4, 152.8 } };

	expect_table(&p, &t, 2, bw, lat);
}

/* baseLat alone, as NCCL 2.21.5's table gives it (src/graph/tuning.cc):
 * Tree {6.8, 14.0, 0}, Ring {6.6, 14.0, 8.4}; out of range -1. It is the
 * part of a table latency the hops do not give: Ring Simple on 2 servers
 * of 8 is 152.8 us = 8.4 + 26 NVLink steps x 3.4 + 4 network steps x 14. */
static void test_tune_base_lat(void **state)
{
	static const double want[2][3] = { { 6.8, 14.0, 0.0 }, { 6.6, 14.0, 8.4 } };

	(void)state;
	for (int a = 0; a < NC_ALGO_COUNT; a++)
		for (int pr = 0; pr < NC_PROTO_COUNT; pr++)
			assert_float_equal(nc_tune_base_lat_us(NC_REL_2_21, (enum nc_algo)a, (enum nc_proto)pr),
					   want[a][pr], 1e-12);
	assert_float_equal(nc_tune_base_lat_us(NC_REL_2_21, NC_ALGO_COUNT, NC_PROTO_SIMPLE), -1.0, 0);
	assert_float_equal(nc_tune_base_lat_us(NC_REL_2_21, NC_ALGO_RING, NC_PROTO_COUNT), -1.0, 0);
	assert_float_equal(nc_tune_base_lat_us(NC_REL_2_21, NC_ALGO_RING, NC_PROTO_SIMPLE) +
				   26 * 3.4 + 4 * 14.0,
			   152.8, 1e-9);
	/* 2.23.4 on: Tree Simple 8.4, the rest as 2.21 */
	assert_float_equal(nc_tune_base_lat_us(NC_REL_2_23, NC_ALGO_TREE, NC_PROTO_SIMPLE), 8.4, 1e-12);
	assert_float_equal(nc_tune_base_lat_us(NC_REL_2_23, NC_ALGO_RING, NC_PROTO_LL), 6.6, 1e-12);
	assert_float_equal(nc_tune_base_lat_us(NC_REL_COUNT, NC_ALGO_RING, NC_PROTO_LL), -1.0, 0);
}

/* hwLat per step (NCCL 2.21.5 tuning.cc): NVLink Ring {0.6, 1.9, 3.4}, Tree
 * {0.6, 1.25, 28}; network Ring {2.7, 4.0, 14}, Tree {5, 8.5, 28}. A ring
 * across servers raises an NVLink step to getNetOverhead (1 us Intel, 2 us
 * AMD; x3 Simple): Ring LL 0.6 -> 1 (Intel) or 2 (AMD), Ring Simple stays
 * 3.4 (> 3) on Intel and is 6 on AMD; Tree is not raised. latencyInter
 * adds once to a network step, twice for Simple. The table's Ring Simple on
 * 2 x 8 is baseLat + 26 NVLink steps + 4 network steps of these. */
static void test_tune_step_lat(void **state)
{
	static const double nvl[2][3] = { { 0.6, 1.25, 28.0 }, { 0.6, 1.9, 3.4 } };
	static const double net[2][3] = { { 5.0, 8.5, 28.0 }, { 2.7, 4.0, 14.0 } };
	struct nc_tune_params p;
	struct nc_tune_table t;

	(void)state;
	nc_tune_params_h100(&p, 1, 8);
	for (int a = 0; a < NC_ALGO_COUNT; a++)
		for (int pr = 0; pr < NC_PROTO_COUNT; pr++) {
			assert_float_equal(nc_tune_step_lat_us(&p, a, pr, false), nvl[a][pr], 1e-12);
			assert_float_equal(nc_tune_step_lat_us(&p, a, pr, true), net[a][pr], 1e-12);
		}
	nc_tune_params_h100(&p, 2, 8);
	assert_float_equal(nc_tune_step_lat_us(&p, NC_ALGO_RING, NC_PROTO_LL, false), 1.0, 1e-12);
	assert_float_equal(nc_tune_step_lat_us(&p, NC_ALGO_RING, NC_PROTO_SIMPLE, false), 3.4, 1e-12);
	assert_float_equal(nc_tune_step_lat_us(&p, NC_ALGO_TREE, NC_PROTO_LL, false), 0.6, 1e-12);
	assert_int_equal(nc_tune_model(&p, &t), 0);
	assert_float_equal(t.lat_us[NC_ALGO_RING][NC_PROTO_SIMPLE],
			   nc_tune_base_lat_us(NC_REL_2_21, NC_ALGO_RING, NC_PROTO_SIMPLE) +
				   26 * nc_tune_step_lat_us(&p, NC_ALGO_RING, NC_PROTO_SIMPLE, false) +
				   4 * nc_tune_step_lat_us(&p, NC_ALGO_RING, NC_PROTO_SIMPLE, true),
			   1e-9);
	p.cpu_amd = true;
	assert_float_equal(nc_tune_step_lat_us(&p, NC_ALGO_RING, NC_PROTO_LL, false), 2.0, 1e-12);
	assert_float_equal(nc_tune_step_lat_us(&p, NC_ALGO_RING, NC_PROTO_SIMPLE, false), 6.0, 1e-12);
	p.latency_inter_us = 1.5;
	assert_float_equal(nc_tune_step_lat_us(&p, NC_ALGO_RING, NC_PROTO_LL, true), 4.2, 1e-12);
	assert_float_equal(nc_tune_step_lat_us(&p, NC_ALGO_RING, NC_PROTO_SIMPLE, true), 17.0, 1e-12);
	assert_float_equal(nc_tune_step_lat_us(NULL, NC_ALGO_RING, NC_PROTO_LL, true), -1.0, 0);
	assert_float_equal(nc_tune_step_lat_us(&p, NC_ALGO_COUNT, NC_PROTO_LL, true), -1.0, 0);
	assert_float_equal(nc_tune_step_lat_us(&p, NC_ALGO_RING, NC_PROTO_COUNT, false), -1.0, 0);
}

/*
 * What LL and LL128 put on the wire (src/include/device.h): LL 16-byte lines
 * of 8 data bytes, LL128 128-byte lines of 120, whole lines. 8192 data bytes:
 * LL 1024 lines = 16384; LL128 ceil(8192 / 120) = 69 lines = 8832. And their
 * step's data (src/init.cc buffers / NCCL_STEPS 8): LL 8 x 512 x 8 x 16 / 8
 * / 2 = 32768; LL128 120 x 640 x 8 x 8 / 8 x 15/16 = 576000; Simple 4 MiB / 8.
 */
static void test_wire_bytes(void **state)
{
	(void)state;
	assert_int_equal(nc_tune_wire_bytes(NC_PROTO_LL, 8192), 16384);
	assert_int_equal(nc_tune_wire_bytes(NC_PROTO_LL, 4), 16);
	assert_int_equal(nc_tune_wire_bytes(NC_PROTO_LL128, 8192), 8832);
	assert_int_equal(nc_tune_wire_bytes(NC_PROTO_LL128, 120), 128);
	assert_int_equal(nc_tune_wire_bytes(NC_PROTO_SIMPLE, 8192), 8192);
	assert_int_equal(nc_tune_wire_bytes(NC_PROTO_LL, 0), 0);
	assert_int_equal(nc_tune_step_data_bytes(NC_PROTO_LL, 4u << 20), 32768);
	assert_int_equal(nc_tune_step_data_bytes(NC_PROTO_LL128, 4u << 20), 576000);
	assert_int_equal(nc_tune_step_data_bytes(NC_PROTO_SIMPLE, 4u << 20), 524288);
	assert_int_equal(nc_tune_step_data_bytes(NC_PROTO_SIMPLE, 1u << 20), 131072);
}

static void expect_pick(const struct nc_tune_params *p, const struct nc_tune_table *t,
			uint64_t bytes, enum nc_algo a, enum nc_proto pr, double us)
{
	struct nc_tune_choice c;

	assert_int_equal(nc_tune_pick(p, t, bytes, &c), 0);
	assert_string_equal(nc_tune_algo_name(c.algo), nc_tune_algo_name(a));
	assert_string_equal(nc_tune_proto_name(c.proto), nc_tune_proto_name(pr));
	assert_float_equal(c.time_us, us, 1e-4);
}

/*
 * 4 KiB: log2(4096 / 64) = 6, factors LL .7, LL128 .8, Simple .9.
 *  Tree LL    25.2 + 4096 / (1000 x 16.575 x .7 = 11602.5) = 25.553027  <- picked
 *  Tree LL128 48.5 + 4096 / 99824                          = 48.541032
 *  Ring LL    43.4 + 4096 / 20800                          = 43.596923
 *  Ring Simple: 4096 / 256 = 16 < 64, no plateau: 152.82
 * 1 MiB: log2(16384) = 14, factors LL .5, LL128 .6, Simple .5.
 *  Tree LL128 48.5 + 1048576 / 74868  = 62.505663                   <- picked
 *  Ring LL128 79.4 + 1048576 / 156586.667 = 86.096477
 *  Ring LL    43.4 + 1048576 / 20800 = 93.812308
 *  Ring Simple 213.92 + 5.12 = 219.04; Tree LL 151.73; Tree Simple 462.90
 * 256 MiB: log2(4194304) = 22, factors LL 1, LL128 1, Simple .9.
 *  Ring Simple 213.92 + 268435456 / 204800 = 1524.64                <- picked
 *  Ring LL128  79.4 + 268435456 / 156586.667 = 1793.69
 *  Tree LL128  48.5 + 268435456 / 124780 = 2199.77
 *  Tree Simple 448 + 268435456 / 126684 = 2566.96
 */
static void test_tune_pick_by_size(void **state)
{
	(void)state;
	struct nc_tune_params p;
	struct nc_tune_table t;

	setup(&p, &t, 2);
	expect_pick(&p, &t, 4096, NC_ALGO_TREE, NC_PROTO_LL, 25.553027);
	expect_pick(&p, &t, 1u << 20, NC_ALGO_TREE, NC_PROTO_LL128, 62.505663);
	expect_pick(&p, &t, 256u << 20, NC_ALGO_RING, NC_PROTO_SIMPLE, 1524.64);
	assert_float_equal(nc_tune_time_us(&p, &t, NC_ALGO_RING, NC_PROTO_SIMPLE, 4096),
			   152.82, 1e-6);
	assert_float_equal(nc_tune_time_us(&p, &t, NC_ALGO_TREE, NC_PROTO_SIMPLE, 256u << 20),
			   448.0 + 268435456.0 / 126684.0, 1e-6);
}

/*
 * 16 servers x 8 (128 ranks): more than 2 nodes, so bwInter, llMaxBw 20.4,
 * perChMaxTreeBw 36.0, perChMaxTreeLL128Bw 29.0; log2(16) = 4 tree levels;
 * ring nsteps 254, 32 of them network steps.
 *  Ring  LL     min(20.4, 192) x 128/254 = 10.280315;  6.6 + 222 x 1 + 32 x 2.7 = 315.0
 *  Ring  LL128  293.6 x 128/254 = 147.955906;  14 + 222 x 1.9 + 32 x 4 = 563.8
 *  Ring  Simple 384 x 128/254 = 193.511811;  8.4 + 222 x 3.4 + 32 x 14 = 1211.2
 *  Tree  busBw min(353.28, 8 x 36.0) = 288
 *  Tree  LL     min(288 / 3.8, 20.4) x .85 x .5 = 8.67;  6.8 + 2 x (4.2 + 4 x 5) = 55.2
 *  Tree  LL128  min(270, 8 x 29.0) x .85 x .5 = 98.6;  14 + 2 x (8.75 + 4 x 8.5) = 99.5
 *  Tree  Simple 288 x .85 x .5 = 122.4;  2 x (7 x 28 + 4 x 28) = 616
 * 64 KiB (log 10: LL .6): Tree LL 55.2 + 65536 / 5202 = 67.798231 (Tree LL128 100.61,
 *   Ring LL 321.37)
 * 16 MiB (log 18: LL128 .9): Tree LL128 99.5 + 16777216 / 88740 = 288.560356
 *   (Ring LL128 677.19, Ring Simple 1211.2 x 1.4 + 86.70 = 1782.38)
 * 1 GiB (log 24: no correction): Ring Simple 1695.68 + 5548.714667 = 7244.394667
 *   (Ring LL128 7820.97, Tree Simple 9388.40, Tree LL128 10989.38)
 */
static void test_tune_sixteen_servers(void **state)
{
	(void)state;
	struct nc_tune_params p;
	struct nc_tune_table t;
	static const double bw[2][3] = { { 8.67, 98.6, 122.4 },
					 { 10.2803149606, 147.9559055118, 193.5118110236 } };
	static const double lat[2][3] = { { 55.2, 99.5, 616.0 }, { 315.0, 563.8, 1211.2 } };

	expect_table(&p, &t, 16, bw, lat);
	expect_pick(&p, &t, 65536, NC_ALGO_TREE, NC_PROTO_LL, 67.798231);
	expect_pick(&p, &t, 16u << 20, NC_ALGO_TREE, NC_PROTO_LL128, 288.560356);
	expect_pick(&p, &t, 1u << 30, NC_ALGO_RING, NC_PROTO_SIMPLE, 7244.394667);
}

/*
 * One server of 8 (8 ranks), NCCL's NVLink-only graph: 12 channels of 30
 * GB/s (busBw 360), a balanced tree (no x .85). No network: ring nsteps
 * 14, all NVLink hops, no net overhead; llMaxBw Hopper-N1 141.0;
 * perChMaxTreeBw 38.7; Tree LL128 x 7/9.
 *  Ring  LL     min(141, 180) x 8/14 = 80.571429;       6.6 + 14 x .6  = 15.0
 *  Ring  LL128  min(331.2, 12 x 36.7) x 8/14 = 189.257143; 14 + 14 x 1.9 = 40.6
 *  Ring  Simple 360 x 8/14 = 205.714286;                8.4 + 14 x 3.4 = 56.0
 *  Tree  busBw min(360 x .92 = 331.2, 12 x 38.7 = 464.4) = 331.2
 *  Tree  LL     min(331.2 / 3.8, 141) x .5 = 43.578947;  6.8 + 2 x 7 x .6 = 15.2
 *  Tree  LL128  min(331.2 x 7/9 = 257.6, 440.4) x .5 = 128.8;  14 + 2 x 7 x 1.25 = 31.5
 *  Tree  Simple 331.2 x .5 = 165.6;  2 x 7 x 28 = 392
 * 4 KiB: Ring LL 15.0 + 4096 / 80571.43 = 15.050837 beats Tree LL
 *   15.2 + 4096 / (43578.9 x .7) = 15.334272.
 * 1 MiB: Ring LL 15.0 + 13.014241 = 28.014241 (Tree LL128 31.5 + 1048576 /
 *   (128800 x .6) = 45.07, Ring LL128 46.14, Ring Simple 61.10).
 * 16 MiB: Ring LL128 40.6 + 88.647729 = 129.247729 (Ring Simple 137.56).
 * 64 MiB (log 20: LL128 .9, Simple .8): Ring Simple 56 + 326.223644 =
 *   382.223644 (Ring LL128 395.19, Tree LL128 610.42).
 */
static void test_tune_one_server(void **state)
{
	(void)state;
	struct nc_tune_params p;
	struct nc_tune_table t;
	static const double bw[2][3] = { { 43.5789473684, 128.8, 165.6 },
					 { 80.5714285714, 189.2571428571, 205.7142857143 } };
	static const double lat[2][3] = { { 15.2, 31.5, 392.0 }, { 15.0, 40.6, 56.0 } };

	expect_table(&p, &t, 1, bw, lat);
	assert_int_equal(p.graph_channels[NC_ALGO_RING], 12);
	assert_int_equal(p.channels, 24);
	expect_pick(&p, &t, 4096, NC_ALGO_RING, NC_PROTO_LL, 15.050837);
	expect_pick(&p, &t, 1u << 20, NC_ALGO_RING, NC_PROTO_LL, 28.014241);
	expect_pick(&p, &t, 16u << 20, NC_ALGO_RING, NC_PROTO_LL128, 129.247729);
	expect_pick(&p, &t, 64u << 20, NC_ALGO_RING, NC_PROTO_SIMPLE, 382.223644);
}

/*
 * AllGather and ReduceScatter: Ring only, nsteps n - 1, nodes - 1 network
 * steps, no plateau; bytes are the total (NCCL's nBytes x nRanks).
 * One server of 8 (busBw as test_tune_one_server), nsteps 7:
 *  Ring LL     141 x 8/7 = 161.142857;    6.6 + 7 x .6  = 10.8
 *  Ring LL128  331.2 x 8/7 = 378.514286;  14 + 7 x 1.9  = 27.3
 *  Ring Simple 360 x 8/7 = 411.428571;    8.4 + 7 x 3.4 = 32.2
 *  1 MiB: LL 10.8 + 6.507120 = 17.307120; 16 MiB: LL128 27.3 + 44.323865 =
 *  71.623865 (Simple 72.98); 64 MiB: Simple 32.2 + 163.111822 = 195.311822
 *  (LL128 204.60).
 * 2 servers x 8 (16 ranks), nsteps 15, 1 network step, NVLink steps at
 * least the 1 us net overhead (x3 Simple):
 *  Ring LL     min(39, 192) x 16/15 = 41.6;  6.6 + 14 x 1 + 2.7 = 23.3
 *  Ring Simple 384 x 16/15 = 409.6;          8.4 + 14 x 3.4 + 14 = 70.0
 *  64 KiB: LL 23.3 + 65536 / 41600 = 24.875385; Simple at 256 MiB:
 *  70.0 + 655.36 = 725.36 (no x 1.4: AllReduce only).
 */
static void test_tune_allgather(void **state)
{
	(void)state;
	struct nc_tune_params p;
	struct nc_tune_table t;

	for (int c = NC_COLL_ALLGATHER; c <= NC_COLL_REDUCESCATTER; c++) {
		nc_tune_params_h100(&p, 1, 8);
		p.coll = (enum nc_coll)c;
		assert_int_equal(nc_tune_model(&p, &t), 0);
		for (int pr = 0; pr < NC_PROTO_COUNT; pr++)
			assert_float_equal(t.bw_gbs[NC_ALGO_TREE][pr], 0.0, 0);
		assert_float_equal(t.bw_gbs[NC_ALGO_RING][NC_PROTO_LL], 161.1428571429, EPS);
		assert_float_equal(t.bw_gbs[NC_ALGO_RING][NC_PROTO_LL128], 378.5142857143, EPS);
		assert_float_equal(t.bw_gbs[NC_ALGO_RING][NC_PROTO_SIMPLE], 411.4285714286, EPS);
		assert_float_equal(t.lat_us[NC_ALGO_RING][NC_PROTO_LL], 10.8, EPS);
		assert_float_equal(t.lat_us[NC_ALGO_RING][NC_PROTO_LL128], 27.3, EPS);
		assert_float_equal(t.lat_us[NC_ALGO_RING][NC_PROTO_SIMPLE], 32.2, EPS);
		expect_pick(&p, &t, 1u << 20, NC_ALGO_RING, NC_PROTO_LL, 17.307120);
		expect_pick(&p, &t, 16u << 20, NC_ALGO_RING, NC_PROTO_LL128, 71.623865);
		expect_pick(&p, &t, 64u << 20, NC_ALGO_RING, NC_PROTO_SIMPLE, 195.311822);

		nc_tune_params_h100(&p, 2, 8);
		p.coll = (enum nc_coll)c;
		assert_int_equal(nc_tune_model(&p, &t), 0);
		assert_float_equal(t.lat_us[NC_ALGO_RING][NC_PROTO_LL], 23.3, EPS);
		assert_float_equal(t.lat_us[NC_ALGO_RING][NC_PROTO_SIMPLE], 70.0, EPS);
		expect_pick(&p, &t, 65536, NC_ALGO_RING, NC_PROTO_LL, 24.875385);
		assert_float_equal(nc_tune_time_us(&p, &t, NC_ALGO_RING, NC_PROTO_SIMPLE, 256u << 20),
				   725.36, 1e-6);
		/* Tree alone leaves them nothing (NCCL would fall back to the ring) */
		p.algo_on[NC_ALGO_RING] = false;
		assert_int_equal(nc_tune_model(&p, &t), -EINVAL);
	}
}

/*
 * The caps on bus bandwidth (tuning.cc llMaxBws, perChMaxRingLL128Bws,
 * perChMaxTreeLL128Bws): LL on one Hopper server 141, on 2 Intel servers
 * 39.0, on 3 or more 20.4, AMD 22.5 and 19.0; LL128 Ring 8 channels x 36.7
 * = 293.6 across servers, 12 x 36.7 = 440.4 on one; LL128 Tree on 16
 * servers 8 x 29.0 = 232; Simple none (0); out of range -1.
 */
static void test_bus_cap(void **state)
{
	(void)state;
	struct nc_tune_params p;

	nc_tune_params_h100(&p, 1, 8);
	assert_float_equal(nc_tune_bus_cap_gbs(&p, NC_ALGO_RING, NC_PROTO_LL), 141.0, EPS);
	assert_float_equal(nc_tune_bus_cap_gbs(&p, NC_ALGO_TREE, NC_PROTO_LL), 141.0, EPS);
	assert_float_equal(nc_tune_bus_cap_gbs(&p, NC_ALGO_RING, NC_PROTO_LL128), 440.4, EPS);
	assert_float_equal(nc_tune_bus_cap_gbs(&p, NC_ALGO_RING, NC_PROTO_SIMPLE), 0.0, 0);
	nc_tune_params_h100(&p, 2, 1);
	assert_float_equal(nc_tune_bus_cap_gbs(&p, NC_ALGO_RING, NC_PROTO_LL), 39.0, EPS);
	assert_float_equal(nc_tune_bus_cap_gbs(&p, NC_ALGO_RING, NC_PROTO_LL128), 293.6, EPS);
	p.cpu_amd = true;
	assert_float_equal(nc_tune_bus_cap_gbs(&p, NC_ALGO_RING, NC_PROTO_LL), 22.5, EPS);
	nc_tune_params_h100(&p, 16, 8);
	assert_float_equal(nc_tune_bus_cap_gbs(&p, NC_ALGO_RING, NC_PROTO_LL), 20.4, EPS);
	assert_float_equal(nc_tune_bus_cap_gbs(&p, NC_ALGO_TREE, NC_PROTO_LL128), 232.0, EPS);
	p.cpu_amd = true;
	assert_float_equal(nc_tune_bus_cap_gbs(&p, NC_ALGO_RING, NC_PROTO_LL), 19.0, EPS);
	assert_float_equal(nc_tune_bus_cap_gbs(&p, NC_ALGO_COUNT, NC_PROTO_LL), -1.0, 0);
	assert_float_equal(nc_tune_bus_cap_gbs(&p, NC_ALGO_RING, NC_PROTO_COUNT), -1.0, 0);
	assert_float_equal(nc_tune_bus_cap_gbs(NULL, NC_ALGO_RING, NC_PROTO_LL), -1.0, 0);
}

/* NCCL_ALGO=ring (any case): at 4 KiB Ring LL (43.596923). NCCL_PROTO=^LL:
 * Tree LL128 (48.541032). NCCL_PROTO=Simple: Ring Simple 152.82 beats Tree
 * Simple 448 + 4096 / 126684. */
static void test_tune_forced(void **state)
{
	(void)state;
	struct nc_tune_params p;
	struct nc_tune_table t;
	char err[256];

	nc_tune_params_h100(&p, 2, 8);
	assert_int_equal(nc_tune_set_algo(&p, "ring", err, sizeof(err)), 0);
	assert_int_equal(nc_tune_model(&p, &t), 0);
	expect_pick(&p, &t, 4096, NC_ALGO_RING, NC_PROTO_LL, 43.596923);
	assert_true(nc_tune_time_us(&p, &t, NC_ALGO_TREE, NC_PROTO_LL, 4096) < 0);

	nc_tune_params_h100(&p, 2, 8);
	assert_int_equal(nc_tune_set_proto(&p, "^LL", err, sizeof(err)), 0);
	assert_int_equal(nc_tune_model(&p, &t), 0);
	expect_pick(&p, &t, 4096, NC_ALGO_TREE, NC_PROTO_LL128, 48.541032);

	nc_tune_params_h100(&p, 2, 8);
	assert_int_equal(nc_tune_set_proto(&p, "Simple", err, sizeof(err)), 0);
	assert_int_equal(nc_tune_model(&p, &t), 0);
	expect_pick(&p, &t, 4096, NC_ALGO_RING, NC_PROTO_SIMPLE, 152.82);

	nc_tune_params_h100(&p, 2, 8);
	assert_int_equal(nc_tune_set_algo(&p, "Tree,Ring", err, sizeof(err)), 0);
	assert_int_equal(nc_tune_set_proto(&p, "LL128,simple", err, sizeof(err)), 0);
	assert_int_equal(nc_tune_model(&p, &t), 0);
	expect_pick(&p, &t, 4096, NC_ALGO_TREE, NC_PROTO_LL128, 48.541032);
}

static void expect_refused(int rc, const char *err, const char *what, const char *valid)
{
	assert_int_equal(rc, -EINVAL);
	if (strstr(err, what) == NULL || strstr(err, valid) == NULL)
		fail_msg("message '%s' lacks '%s' or '%s'", err, what, valid);
}

static void test_tune_refused(void **state)
{
	(void)state;
	struct nc_tune_params p;
	char err[256];
	const char *va = "valid: Tree, Ring";
	const char *vp = "valid: LL, LL128, Simple";

	nc_tune_params_h100(&p, 2, 8);
	expect_refused(nc_tune_set_algo(&p, "Rign", err, sizeof(err)), err,
		       "unknown name 'Rign'", va);
	expect_refused(nc_tune_set_algo(&p, "Ring,NVLS", err, sizeof(err)), err,
		       "not modelled 'NVLS'", va);
	expect_refused(nc_tune_set_algo(&p, "^Tree,Ring", err, sizeof(err)), err,
		       "leaves nothing enabled", va);
	expect_refused(nc_tune_set_algo(&p, "", err, sizeof(err)), err, "empty name", va);
	expect_refused(nc_tune_set_proto(&p, "LL256", err, sizeof(err)), err,
		       "unknown name 'LL256'", vp);
	expect_refused(nc_tune_set_proto(&p, "Simple,", err, sizeof(err)), err,
		       "empty name", vp);
	expect_refused(nc_tune_set_proto(&p, NULL, err, sizeof(err)), err, "NCCL_PROTO", vp);
	/* a refused list changes nothing */
	for (int a = 0; a < NC_ALGO_COUNT; a++)
		assert_true(p.algo_on[a]);
	for (int pr = 0; pr < NC_PROTO_COUNT; pr++)
		assert_true(p.proto_on[pr]);
}

/*
 * Release 2.23 (v2.23.4-1 to v2.30.7-1, src/graph/tuning.cc) against 2.21
 * (v2.21.5-1) on 2 servers x 1 GPU (2 ranks, NCCL's ppn 1), AllReduce,
 * Intel. Ring nsteps 2 x (2 - 1) = 2; an NVLink step is raised to the net
 * overhead (1 us; 3 us Simple).
 *  2.21: nInterSteps 2 x nNodes = 4, so 2 - 4 = -2 NVLink steps, and the
 *        ring's own network hwLat {2.7, 4.0, 14}:
 *   Ring LL     6.6 + (-2) x 1.0 + 4 x 2.7   = 15.4
 *   Ring LL128  14  + (-2) x 1.9 + 4 x 4.0   = 26.2
 *   Ring Simple 8.4 + (-2) x 3.4 + 4 x 14    = 57.6
 *   Tree LL 6.8 + 2 x (0 + 1 x 5.0) = 16.8; LL128 14 + 2 x 8.5 = 31;
 *   Tree Simple 0 + 2 x 28 = 56
 *  2.23: nInterSteps 2 x (2 - 1) = 2, no NVLink step; ppn 1, so every
 *        network step takes the Tree's network hwLat {5.0, 8.5, 14}:
 *   Ring LL     6.6 + 2 x 5.0 = 16.6
 *   Ring LL128  14  + 2 x 8.5 = 31.0
 *   Ring Simple 8.4 + 2 x 14  = 36.4
 *   Tree LL 16.8, LL128 31 (unchanged); Tree Simple 8.4 + 2 x 14 = 36.4
 *  With latencyInter 1.5 (added once, twice for Simple: the flush):
 *   2.21 Ring LL 6.6 - 2 + 4 x (2.7 + 1.5) = 21.4
 *   2.23 Ring LL 6.6 + 2 x (5.0 + 1.5) = 19.6; Ring Simple 8.4 + 2 x 17 = 42.4
 *  Ring LL128's bus bandwidth, 8 channels x 48 = 384 GB/s: 2.21 x .7 for
 *  ppn < 2 = 268.8 (under the cap 8 x 36.7 = 293.6); 2.23 x .92 = 353.28,
 *  capped at 293.6; algorithm bandwidth x nRanks / nsteps = 2 / 2.
 *  AllGather (nsteps 1, 1 network step): 2.21 Ring LL 6.6 + 2.7 = 9.3;
 *  2.23 6.6 + 5.0 = 11.6.
 */
static void test_tune_release_one_gpu(void **state)
{
	static const double lat21[2][3] = { { 16.8, 31.0, 56.0 }, { 15.4, 26.2, 57.6 } };
	static const double lat23[2][3] = { { 16.8, 31.0, 36.4 }, { 16.6, 31.0, 36.4 } };
	struct nc_tune_params p;
	struct nc_tune_table t;

	(void)state;
	for (int rel = 0; rel < NC_REL_COUNT; rel++) {
		nc_tune_params_h100(&p, 2, 1);
		p.release = (enum nc_release)rel;
		assert_int_equal(nc_tune_model(&p, &t), 0);
		for (int a = 0; a < NC_ALGO_COUNT; a++)
			for (int pr = 0; pr < NC_PROTO_COUNT; pr++)
				assert_float_equal(t.lat_us[a][pr],
						   (rel == NC_REL_2_21 ? lat21 : lat23)[a][pr], EPS);
		assert_float_equal(t.bw_gbs[NC_ALGO_RING][NC_PROTO_LL128],
				   rel == NC_REL_2_21 ? 268.8 : 293.6, EPS);
		/* the step latencies launch=nccl charges agree with the table */
		assert_float_equal(nc_tune_step_lat_us(&p, NC_ALGO_RING, NC_PROTO_LL, true),
				   rel == NC_REL_2_21 ? 2.7 : 5.0, 1e-12);
		assert_float_equal(nc_tune_step_lat_us(&p, NC_ALGO_RING, NC_PROTO_SIMPLE, true),
				   14.0, 1e-12);
		p.latency_inter_us = 1.5;
		assert_int_equal(nc_tune_model(&p, &t), 0);
		assert_float_equal(t.lat_us[NC_ALGO_RING][NC_PROTO_LL],
				   rel == NC_REL_2_21 ? 21.4 : 19.6, EPS);
		if (rel == NC_REL_2_23)
			assert_float_equal(t.lat_us[NC_ALGO_RING][NC_PROTO_SIMPLE], 42.4, EPS);
		p.latency_inter_us = 0.0;
		p.coll = NC_COLL_ALLGATHER;
		assert_int_equal(nc_tune_model(&p, &t), 0);
		assert_float_equal(t.lat_us[NC_ALGO_RING][NC_PROTO_LL],
				   rel == NC_REL_2_21 ? 9.3 : 11.6, EPS);
	}
}

/*
 * 2 servers x 8 GPUs (ppn 8: the ring keeps its own network hwLat), as
 * test_tune_table, under 2.23: only nInterSteps moves for the ring,
 * 2 x (2 - 1) = 2 network steps of 30 (2.21: 4):
 *  Ring LL     6.6 + 28 x 1.0 + 2 x 2.7  = 40.0   (2.21 43.4)
 *  Ring LL128  14  + 28 x 1.9 + 2 x 4.0  = 75.2   (2.21 79.4)
 *  Ring Simple 8.4 + 28 x 3.4 + 2 x 14   = 131.6  (2.21 152.8)
 * The tree's Simple row has 2.23's tables: 8.4 + 2 x (7 x 4.0 + 14) =
 * 92.4 (2.21: 448); Tree LL 25.2 and LL128 48.5 as 2.21. Bandwidths as
 * test_tune_table (ppn >= 2: LL128 x .92 in both).
 */
static void test_tune_release_servers(void **state)
{
	static const double bw[2][3] = { { 16.575, 124.78, 140.76 },
					 { 20.8, 156.5866666667, 204.8 } };
	static const double lat[2][3] = { { 25.2, 48.5, 92.4 }, { 40.0, 75.2, 131.6 } };
	struct nc_tune_params p;
	struct nc_tune_table t;

	(void)state;
	nc_tune_params_h100(&p, 2, 8);
	p.release = NC_REL_2_23;
	assert_int_equal(nc_tune_model(&p, &t), 0);
	for (int a = 0; a < NC_ALGO_COUNT; a++)
		for (int pr = 0; pr < NC_PROTO_COUNT; pr++) {
			assert_float_equal(t.bw_gbs[a][pr], bw[a][pr], EPS);
			assert_float_equal(t.lat_us[a][pr], lat[a][pr], EPS);
		}
	assert_float_equal(nc_tune_step_lat_us(&p, NC_ALGO_RING, NC_PROTO_LL, true), 2.7, 1e-12);
	assert_float_equal(nc_tune_step_lat_us(&p, NC_ALGO_TREE, NC_PROTO_SIMPLE, false), 4.0, 1e-12);
	assert_float_equal(nc_tune_step_lat_us(&p, NC_ALGO_TREE, NC_PROTO_SIMPLE, true), 14.0, 1e-12);
	p.release = NC_REL_COUNT;
	assert_int_equal(nc_tune_model(&p, &t), -EINVAL);
	assert_float_equal(nc_tune_step_lat_us(&p, NC_ALGO_RING, NC_PROTO_LL, true), -1.0, 0);
}

/* The key's names: "2.21", "2.23"; anything else refused with the value
 * and the valid names with their tags; *r unchanged then. */
static void test_tune_release_names(void **state)
{
	enum nc_release r = NC_REL_2_23;
	char err[256];

	(void)state;
	assert_int_equal(nc_tune_set_release(&r, "2.21", err, sizeof(err)), 0);
	assert_int_equal(r, NC_REL_2_21);
	assert_int_equal(nc_tune_set_release(&r, "2.23", err, sizeof(err)), 0);
	assert_int_equal(r, NC_REL_2_23);
	expect_refused(nc_tune_set_release(&r, "2.28", err, sizeof(err)), err,
		       "unknown release '2.28'", "2.23 for v2.23.4-1 to v2.30.7-1");
	expect_refused(nc_tune_set_release(&r, NULL, err, sizeof(err)), err, "unknown release",
		       "2.21 for NCCL v2.21.5-1");
	assert_int_equal(r, NC_REL_2_23);
	assert_string_equal(nc_tune_release_name(NC_REL_2_21), "2.21");
	assert_string_equal(nc_tune_release_name(NC_REL_COUNT), "?");
}

static void test_tune_bad_params(void **state)
{
	(void)state;
	struct nc_tune_params p;
	struct nc_tune_table t;
	struct nc_tune_choice c;

	nc_tune_params_h100(&p, 0, 8);
	assert_int_equal(nc_tune_model(&p, &t), -EINVAL);
	nc_tune_params_h100(&p, 1, 1); /* one rank: NCCL tunes nothing */
	assert_int_equal(nc_tune_model(&p, &t), -EINVAL);
	nc_tune_params_h100(&p, 1, 2); /* two ranks in one server: tuned */
	assert_int_equal(nc_tune_model(&p, &t), 0);
	nc_tune_params_h100(&p, 2, 8);
	p.bw_inter[NC_ALGO_RING] = 0.0;
	assert_int_equal(nc_tune_model(&p, &t), -EINVAL);
	nc_tune_params_h100(&p, 2, 8);
	assert_int_equal(nc_tune_model(NULL, &t), -EINVAL);
	assert_int_equal(nc_tune_pick(&p, NULL, 4096, &c), -EINVAL);
	assert_string_equal(nc_tune_algo_name(NC_ALGO_COUNT), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tune_table),
		cmocka_unit_test(test_tune_base_lat),
		cmocka_unit_test(test_tune_pick_by_size),
		cmocka_unit_test(test_tune_sixteen_servers),
		cmocka_unit_test(test_tune_one_server),
		cmocka_unit_test(test_tune_allgather),
		cmocka_unit_test(test_bus_cap),
		cmocka_unit_test(test_tune_forced),
		cmocka_unit_test(test_tune_refused),
		cmocka_unit_test(test_tune_step_lat),
		cmocka_unit_test(test_wire_bytes),
		cmocka_unit_test(test_tune_bad_params),
		cmocka_unit_test(test_tune_release_one_gpu),
		cmocka_unit_test(test_tune_release_servers),
		cmocka_unit_test(test_tune_release_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
