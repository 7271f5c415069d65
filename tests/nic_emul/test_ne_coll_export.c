/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll_export (the plan read from outside, for rocelab-dp --fabric flow)
 * and ne_nic_probe_frame. The expectations are worked out by hand from the
 * ring's definition (ne_coll.h), not read from the library.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "coll_test_util.h"
#include "nc_tune.h"
#include "ne_nic.h"

static void ring4(struct ne_coll_config *cfg, enum ne_coll_qp_mode mode)
{
	ne_coll_config_default(cfg);
	cfg->nranks = 4;
	cfg->bytes = 1u << 20;      /* 262,144 floats per rank: 4 segments of 256 KiB */
	cfg->chunk_bytes = 128u << 10; /* each segment in 2 chunks */
	cfg->qps_per_conn = 3;
	cfg->qp_mode = mode;
	cfg->window = 2;
	cfg->data = false;
}

/*
 * AllReduce over 4 ranks: 4 connections s -> s+1; per connection 2 chunk
 * rounds x 2(n-1) = 6 hops = 12 transfers of 131,072 B. A transfer's first
 * hop waits for nothing; the others wait for the previous rank's connection
 * (s-1 -> s), whose downstream is this one.
 */
static void test_ring_plan(void **state)
{
	struct ne_coll_config cfg;
	struct ne_coll_rules ru;
	struct fab f;
	(void)state;

	ring4(&cfg, NE_COLL_QP_SPLIT);
	fab_init(&f, &cfg, RATE, DELAY);
	assert_non_null(fab_coll(&f, &cfg));
	assert_int_equal(ne_coll_num_conns(f.coll), 4);
	for (uint32_t k = 0; k < 4; k++) {
		struct ne_coll_conn_info ci;
		struct ne_coll_conn_plan cp;
		uint32_t free_start = 0;

		assert_int_equal(ne_coll_conn_info(f.coll, k, &ci), 0);
		assert_int_equal(ne_coll_conn_plan(f.coll, k, &cp), 0);
		assert_int_equal(ci.ntransfers, 12);
		assert_int_equal(ci.src, k);
		assert_int_equal(ci.dst, (k + 1) % 4);
		assert_int_equal(cp.downstream[0], (int32_t)((k + 1) % 4));
		assert_int_equal(cp.downstream[1], -1);
		assert_false(cp.nvl);
		for (uint32_t s = 0; s < 12; s++) {
			struct ne_coll_xfer_info x;

			assert_int_equal(ne_coll_xfer_get(f.coll, k, s, &x), 0);
			assert_int_equal(x.len, 131072);
			if (x.dep_conn[0] < 0)
				free_start++;
			else
				assert_int_equal(x.dep_conn[0], (int32_t)((k + 3) % 4));
			assert_int_equal(x.dep_conn[1], -1); /* a ring hop waits for one transfer */
		}
		assert_int_equal(free_start, 2);
	}
	struct ne_coll_xfer_info x;
	assert_int_equal(ne_coll_xfer_get(f.coll, 0, 12, &x), -EINVAL);
	assert_int_equal(ne_coll_xfer_get(f.coll, 4, 0, &x), -EINVAL);
	ne_coll_rules(f.coll, &ru);
	assert_int_equal(ru.window, 2);
	assert_int_equal(ru.ngroups, 4);   /* one CTS budget per receiver and channel */
	assert_true(ru.cts);
	assert_false(ru.slot_needs_ack);   /* rocelab with CTS: the grant is the slot */
	assert_int_equal(ru.iters, 1);
	/* split over 3 QPs: [0, 43690), [43690, 87381), [87381, 131072) */
	assert_int_equal(ne_coll_xfer_qp_bytes(f.coll, 131072, 5, 0), 43690);
	assert_int_equal(ne_coll_xfer_qp_bytes(f.coll, 131072, 5, 1), 43691);
	assert_int_equal(ne_coll_xfer_qp_bytes(f.coll, 131072, 5, 2), 43691);
	assert_int_equal(ne_coll_xfer_qp_bytes(f.coll, 131072, 5, 3), 0);
	fab_free(&f);
}

/* rr: transfer s all on QP s mod 3. */
static void test_rr_bytes(void **state)
{
	struct ne_coll_config cfg;
	struct fab f;
	(void)state;

	ring4(&cfg, NE_COLL_QP_RR);
	fab_init(&f, &cfg, RATE, DELAY);
	assert_non_null(fab_coll(&f, &cfg));
	assert_int_equal(ne_coll_xfer_qp_bytes(f.coll, 1000, 7, 1), 1000);
	assert_int_equal(ne_coll_xfer_qp_bytes(f.coll, 1000, 7, 0), 0);
	assert_int_equal(ne_coll_xfer_qp_bytes(f.coll, 1000, 7, 2), 0);
	fab_free(&f);
}

/*
 * Times from elsewhere: 2 iterations of 1 ms and 3 ms give the mean 2 ms;
 * algbw 1,048,576 B / 2 ms = 0.524288 GB/s, busbw x 2(4-1)/4 = 0.786432.
 * A wrong count, or a collective that runs, is refused.
 */
static void test_external_times(void **state)
{
	static const uint64_t t[2] = {1000000, 3000000};
	struct ne_coll_config cfg;
	struct ne_coll_result res;
	struct fab f;
	(void)state;

	ring4(&cfg, NE_COLL_QP_SPLIT);
	cfg.iters = 2;
	fab_init(&f, &cfg, RATE, DELAY);
	assert_non_null(fab_coll(&f, &cfg));
	assert_int_equal(ne_coll_set_external_times(f.coll, 500, t, 1), -EINVAL);
	assert_int_equal(ne_coll_set_external_times(f.coll, 500, t, 2), 0);
	assert_true(ne_coll_done(f.coll));
	assert_int_equal(ne_coll_done_at(f.coll), 500 + 4000000);
	assert_int_equal(ne_coll_get_result(f.coll, &res), 0);
	assert_int_equal(res.time_ns, 2000000);
	assert_int_equal(res.min_time_ns, 1000000);
	assert_int_equal(res.max_time_ns, 3000000);
	assert_float_equal(res.algbw, 0.524288, 1e-9);
	assert_float_equal(res.busbw, 0.786432, 1e-9);
	fab_free(&f);

	fab_init(&f, &cfg, RATE, DELAY);
	assert_non_null(fab_coll(&f, &cfg));
	assert_int_equal(ne_coll_start(f.coll, 0), 0);
	assert_int_equal(ne_coll_set_external_times(f.coll, 0, t, 2), -EINVAL);
	fab_free(&f);
}

/*
 * The getters --fabric flow times NCCL's model by. rocelab: the data bytes,
 * nvlink_latency and no network wait, no cap. nccl with NCCL_PROTO=LL and
 * launch=nccl on 4 ranks (each its own server): 16 wire bytes per 8 of data,
 * ring LL's hwLat (nccl/nc_tune.c, NCCL's tuning.cc): network 2.7 us, NVLink
 * 0.6 us raised to the 1 us of getNetOverhead (Intel) on a ring across
 * servers; a cap of some GB/s (its figures are ne_coll_nvlink's tests').
 * release=2.23 (NCCL 2.23.4 on): with one rank per server the network step
 * is the Tree's LL hwLat, 5.0 us; with two servers of 2 the ring's 2.7.
 */
static void test_nccl_getters(void **state)
{
	struct ne_coll_config cfg;
	struct fab f;
	uint64_t nvl, net;
	(void)state;

	ring4(&cfg, NE_COLL_QP_SPLIT);
	fab_init(&f, &cfg, RATE, DELAY);
	assert_non_null(fab_coll(&f, &cfg));
	assert_int_equal(ne_coll_wire_bytes(f.coll, 1000), 1000);
	ne_coll_step_lat(f.coll, &nvl, &net);
	assert_int_equal(nvl, cfg.nvlink_lat_ns);
	assert_int_equal(net, 0);
	assert_int_equal(ne_coll_proto_cap_Bps(f.coll), 0);
	fab_free(&f);

	ring4(&cfg, NE_COLL_QP_SPLIT);
	cfg.model = NE_COLL_MODEL_NCCL;
	cfg.nccl_proto_off = 1u << NC_PROTO_SIMPLE | 1u << NC_PROTO_LL128;
	cfg.launch_ns = NE_COLL_LAUNCH_NCCL;
	fab_init(&f, &cfg, RATE, DELAY);
	assert_non_null(fab_coll(&f, &cfg));
	assert_int_equal(ne_coll_wire_bytes(f.coll, 8192), 16384);
	ne_coll_step_lat(f.coll, &nvl, &net);
	assert_int_equal(nvl, 1000);
	assert_int_equal(net, 2700);
	assert_true(ne_coll_proto_cap_Bps(f.coll) > 1000000000ull);
	fab_free(&f);

	/* release=2.23: one GPU per server (NCCL's ppn 1) takes the Tree's
	 * network hwLat for LL, 5.0 us; two servers of 2 keep the ring's 2.7 */
	static const uint32_t two_by_two[4] = {0, 0, 1, 1};
	for (int shared = 0; shared < 2; shared++) {
		ring4(&cfg, NE_COLL_QP_SPLIT);
		assert_int_equal(ne_coll_config_set(&cfg, "model", "nccl"), 0);
		assert_int_equal(ne_coll_config_set(&cfg, "NCCL_PROTO", "LL"), 0);
		assert_int_equal(ne_coll_config_set(&cfg, "launch", "nccl"), 0);
		assert_int_equal(ne_coll_config_set(&cfg, "release", "2.23"), 0);
		cfg.server_of = shared ? two_by_two : NULL;
		fab_init(&f, &cfg, RATE, DELAY);
		assert_non_null(fab_coll(&f, &cfg));
		ne_coll_step_lat(f.coll, &nvl, &net);
		assert_int_equal(nvl, 1000);
		assert_int_equal(net, shared ? 2700 : 5000);
		fab_free(&f);
	}
	assert_int_equal(ne_coll_config_set(&cfg, "release", "2.22"), -EINVAL);
}

/* The probe's UDP source port and destination QP are the QP's own. */
static void test_probe(void **state)
{
	struct ne_coll_config cfg;
	struct ne_coll_conn_info ci;
	struct ne_qp_attr a;
	uint8_t buf[128];
	size_t len = 0;
	struct fab f;
	(void)state;

	ring4(&cfg, NE_COLL_QP_SPLIT);
	fab_init(&f, &cfg, RATE, DELAY);
	assert_non_null(fab_coll(&f, &cfg));
	assert_int_equal(ne_coll_conn_info(f.coll, 1, &ci), 0);
	assert_int_equal(ne_qp_query(f.nic[ci.src], ci.src_data_qpn[2], &a), 0);
	assert_int_equal(ne_nic_probe_frame(f.nic[ci.src], ci.src_data_qpn[2], 0x0B, buf, sizeof(buf), &len), 0);
	/* Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + RETH 16 + ImmDt 4 + ICRC 4 */
	assert_int_equal(len, 78);
	assert_int_equal(buf[34] << 8 | buf[35], a.udp_sport);        /* UDP source port */
	assert_int_equal(buf[36] << 8 | buf[37], 4791);               /* RoCEv2 */
	assert_int_equal(buf[42], 0x0B);                               /* BTH opcode */
	assert_int_equal((uint32_t)buf[47] << 16 | buf[48] << 8 | buf[49], ci.dst_data_qpn[2]);
	assert_int_equal(ne_nic_probe_frame(f.nic[ci.src], 999999, 0x0B, buf, sizeof(buf), &len), -ENOENT);
	assert_int_equal(ne_nic_probe_frame(f.nic[ci.src], ci.src_data_qpn[2], 0xFF, buf, sizeof(buf), &len),
			 -EINVAL);
	assert_int_equal(ne_nic_probe_frame(f.nic[ci.src], ci.src_data_qpn[2], 0x0B, buf, 40, &len), -EINVAL);
	fab_free(&f);
}

/*
 * A process that runs ranks 0 and 1 of the ring alone (here_lane_of, lane 0):
 * every connection keeps the whole collective's counts and QP numbers; the
 * one with neither rank here (2 -> 3) has no transfers to read, the others
 * the whole one's. A held QPN (MR key) is the one ne_qp_create (ne_mr_reg)
 * would give, and only ne_qp_destroy (ne_mr_dereg) takes it back.
 */
static void test_here_lanes(void **state)
{
	static const uint32_t lane_of[4] = {0, 0, 1, 1};
	struct ne_coll_config cfg, part;
	struct fab whole, here;
	uint32_t q[3];
	(void)state;

	ring4(&cfg, NE_COLL_QP_SPLIT);
	part = cfg;
	part.here_lane_of = lane_of;
	part.here_lane = 0;
	fab_init(&whole, &cfg, RATE, DELAY);
	fab_init(&here, &part, RATE, DELAY);
	assert_non_null(fab_coll(&whole, &cfg));
	assert_non_null(fab_coll(&here, &part));
	for (uint32_t k = 0; k < 4; k++) {
		struct ne_coll_conn_info a, b;

		assert_int_equal(ne_coll_conn_info(whole.coll, k, &a), 0);
		assert_int_equal(ne_coll_conn_info(here.coll, k, &b), 0);
		assert_int_equal(b.ntransfers, a.ntransfers);
		assert_int_equal(b.bytes, a.bytes);
		assert_memory_equal(b.src_data_qpn, a.src_data_qpn, 3 * sizeof(*a.src_data_qpn));
		assert_memory_equal(b.dst_data_qpn, a.dst_data_qpn, 3 * sizeof(*a.dst_data_qpn));
		assert_int_equal(b.src_ctrl_qpn, a.src_ctrl_qpn);
		assert_int_equal(b.dst_ctrl_qpn, a.dst_ctrl_qpn);
		for (uint32_t s = 0; s < a.ntransfers; s++) {
			struct ne_coll_xfer_info x, y;

			assert_int_equal(ne_coll_xfer_get(whole.coll, k, s, &x), 0);
			assert_int_equal(ne_coll_xfer_get(here.coll, k, s, &y), k == 2 ? -EINVAL : 0);
			if (k != 2)
				assert_memory_equal(&y, &x, sizeof(x));
		}
	}
	assert_int_equal(ne_qp_hold(here.nic[2], &q[0]), 0);
	assert_int_equal(ne_qp_hold(whole.nic[2], &q[1]), 0);
	assert_int_equal(q[0], q[1]);
	assert_int_equal(ne_qp_destroy(here.nic[2], q[0]), 0);
	assert_int_equal(ne_qp_destroy(here.nic[2], q[0]), -ENOENT);
	assert_int_equal(ne_qp_hold(NULL, &q[2]), -EINVAL);
	assert_int_equal(ne_mr_hold(here.nic[3], &q[0]), 0); /* (its MRs' keys: held too) */
	assert_int_equal(ne_mr_hold(whole.nic[3], &q[1]), 0);
	assert_int_equal(q[0], q[1]);
	assert_int_equal(ne_mr_dereg(here.nic[3], q[0]), 0);
	assert_int_equal(ne_mr_dereg(here.nic[3], q[0]), -ENOENT);
	fab_free(&whole);
	fab_free(&here);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_plan),
		cmocka_unit_test(test_rr_bytes),
		cmocka_unit_test(test_external_times),
		cmocka_unit_test(test_nccl_getters),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_here_lanes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
