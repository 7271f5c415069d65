/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll's mechanism counters added for issue 15: the active-QP time series
 * (ne_coll_set_series) and the per-message latency (ne_coll_get_latency),
 * on the small deterministic fabric of ne_fab (n NICs on one switch).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coll_test_util.h"

#define SERIES_NS 2000u
#define MAX_ROWS 100000u

struct rows {
	struct ne_coll_series_row *v;
	size_t n;
};

static void keep_row(void *ctx, const struct ne_coll_series_row *row)
{
	struct rows *r = ctx;

	assert_true(r->n < MAX_ROWS);
	r->v[r->n++] = *row;
}

/* Run cfg on a fresh fabric with the series on; rows into *out. */
static void run_series(struct fab *f, const struct ne_coll_config *cfg, struct rows *out)
{
	out->v = calloc(MAX_ROWS, sizeof(*out->v));
	out->n = 0;
	assert_non_null(out->v);
	fab_init(f, cfg, RATE, DELAY);
	assert_non_null(fab_coll(f, cfg));
	assert_int_equal(ne_coll_set_series(f->coll, keep_row, out), 0);
	coll_fill_inputs(f->coll, cfg->nranks);
	assert_int_equal(ne_coll_start(f->coll, 0), 0);
	assert_true(fab_run(f, UNTIL));
	assert_true(ne_coll_done(f->coll));
}

/*
 * The rows against ne_coll's own integrals: rows at exactly the interval,
 * covering the run; their QP x ns add up to the run's integral; the
 * time-weighted mean of their means is the result's mean; the max of their
 * maxes is the result's max; a row with active QPs has a NIC with them.
 */
static void check_series(const struct ne_coll_config *cfg)
{
	struct fab f;
	struct rows rows;
	struct ne_coll_stats st;
	struct ne_coll_result res;
	uint64_t total = 0, qp_ns = 0, iter_ns = 0;
	double weighted = 0;
	uint32_t max = 0;

	run_series(&f, cfg, &rows);
	ne_coll_get_stats(f.coll, &st);
	assert_int_equal(ne_coll_get_result(f.coll, &res), 0);
	for (uint32_t i = 0; i < cfg->iters + cfg->warmup_iters; i++)
		iter_ns += ne_coll_iter_time_ns(f.coll, i);
	assert_true(rows.n >= 3);
	for (size_t i = 0; i < rows.n; i++) {
		const struct ne_coll_series_row *r = &rows.v[i];

		assert_int_equal(r->t_ns, (uint64_t)i * SERIES_NS);
		if (i + 1 < rows.n)
			assert_int_equal(r->dt_ns, SERIES_NS);
		else
			assert_true(r->dt_ns > 0 && r->dt_ns <= SERIES_NS);
		assert_true(r->nics <= cfg->nranks);
		assert_true(r->max <= st.active_qps_max);
		if (r->qp_ns > 0)
			assert_true(r->nics > 0 && r->max > 0);
		assert_true(r->mean <= (double)r->max + 1e-12);
		assert_true(fabs(r->mean - (double)r->qp_ns / ((double)r->dt_ns * cfg->nranks)) < 1e-12);
		total += r->dt_ns;
		qp_ns += r->qp_ns;
		weighted += r->mean * (double)r->dt_ns;
		max = r->max > max ? r->max : max;
	}
	assert_int_equal(total, iter_ns);
	assert_int_equal(qp_ns, st.active_qp_ns);
	assert_true(fabs(weighted / (double)total - res.active_qps_mean) < 1e-9 * (1 + res.active_qps_mean));
	assert_int_equal(max, res.active_qps_max);
	assert_true(res.active_qps_max >= 1);
	free(rows.v);
	fab_free(&f);
}

/*
 * Lanes (ne_coll_set_lanes): each lane's rows over its own ranks, merged at
 * the collective's end, are the whole collective's rows, row for row, for a
 * ring with the proxy threads' costs and for an AllToAll, however the ranks
 * are dealt (halves, odd and even, a lane without a rank).
 */
static void series_lanes_same(const struct ne_coll_config *cfg)
{
	static const uint32_t halves[4] = {0, 0, 1, 1}, odd[4] = {0, 1, 0, 1}, gap[4] = {0, 2, 0, 2};
	static const uint32_t *deal[] = {halves, odd, gap};
	static const uint32_t lanes[] = {2, 2, 3};
	struct fab whole;
	struct rows w;

	run_series(&whole, cfg, &w);
	assert_true(w.n >= 3);
	for (int d = 0; d < 3; d++) {
		struct fab f;
		struct rows r = {.v = calloc(MAX_ROWS, sizeof(*r.v)), .n = 0};

		assert_non_null(r.v);
		fab_init(&f, cfg, RATE, DELAY);
		assert_non_null(fab_coll(&f, cfg));
		assert_int_equal(ne_coll_set_series(f.coll, keep_row, &r), 0);
		coll_fill_inputs(f.coll, cfg->nranks);
		assert_int_equal(ne_coll_set_lanes(f.coll, lanes[d], deal[d]), 0);
		f.nlanes = lanes[d];
		for (uint32_t l = 0; l < lanes[d]; l++)
			if (!ne_coll_done(ne_coll_lane(f.coll, l)))
				assert_int_equal(ne_coll_lane_start(ne_coll_lane(f.coll, l), 0), 0);
		assert_true(fab_run(&f, UNTIL));
		assert_true(ne_coll_done(f.coll));
		assert_int_equal(r.n, w.n); /* (rows come at the end, all of them) */
		for (size_t i = 0; i < w.n; i++) {
			assert_int_equal(r.v[i].t_ns, w.v[i].t_ns);
			assert_int_equal(r.v[i].dt_ns, w.v[i].dt_ns);
			assert_int_equal(r.v[i].qp_ns, w.v[i].qp_ns);
			assert_int_equal(r.v[i].max, w.v[i].max);
			assert_int_equal(r.v[i].nics, w.v[i].nics);
			assert_true(r.v[i].mean == w.v[i].mean);
		}
		free(r.v);
		fab_free(&f);
	}
	free(w.v);
	fab_free(&whole);
}

static void base_ring(struct ne_coll_config *c)
{
	ne_coll_config_default(c);
	c->op = NE_COLL_ALLREDUCE;
	c->nranks = 4;
	c->bytes = 256u << 10;
	c->chunk_bytes = 16u << 10;
	c->qps_per_conn = 2;
	c->window = 2;
	c->series_ns = SERIES_NS;
}

static void test_series_ring(void **state)
{
	struct ne_coll_config c;

	(void)state;
	base_ring(&c);
	check_series(&c);
}

static void test_series_lanes(void **state)
{
	struct ne_coll_config c;

	(void)state;
	base_ring(&c);
	c.proxy_post_ns = 200;
	c.proxy_poll_ns = 100;
	series_lanes_same(&c);
	base_ring(&c);
	c.op = NE_COLL_ALLTOALL;
	series_lanes_same(&c);
}

/* The nccl model with proxy costs and two iterations: the same identities. */
static void test_series_nccl_proxy(void **state)
{
	struct ne_coll_config c;

	static const char *const keys[][2] = {
		{"model", "nccl"},             {"NCCL_IB_QPS_PER_CONNECTION", "2"},
		{"proxy_post_wqe", "200ns"},   {"proxy_poll_cqe", "100ns"},
	};

	(void)state;
	base_ring(&c);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		assert_int_equal(ne_coll_config_set(&c, keys[i][0], keys[i][1]), 0);
	c.iters = 2;
	check_series(&c);
}

/* The key: a time of 100 ns .. 1 s or 0; a bad value names the pair. */
static void test_series_key(void **state)
{
	struct ne_coll_config c;
	char msg[200];

	(void)state;
	ne_coll_config_default(&c);
	assert_int_equal(c.series_ns, 0);
	assert_int_equal(ne_coll_config_set(&c, "series", "10us"), 0);
	assert_int_equal(c.series_ns, 10000);
	assert_int_equal(ne_coll_config_set_msg(&c, "series", "50ns", msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "series=50ns"));
	assert_int_equal(ne_coll_config_set_msg(&c, "series", "ten", msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "series=ten"));
	assert_int_equal(ne_coll_config_set_msg(&c, "series", "2s", msg, sizeof(msg)), -EINVAL);
	assert_int_equal(c.series_ns, 10000); /* unchanged on error */
	assert_int_equal(ne_coll_config_set(&c, "series", "0"), 0);
	assert_int_equal(c.series_ns, 0);
}

/* Without the key there is no series to ask for. */
static void test_series_off(void **state)
{
	struct ne_coll_config c;
	struct fab f;

	(void)state;
	base_ring(&c);
	c.series_ns = 0;
	fab_init(&f, &c, RATE, DELAY);
	assert_non_null(fab_coll(&f, &c));
	assert_int_equal(ne_coll_set_series(f.coll, keep_row, NULL), -EINVAL);
	fab_free(&f);
}

/* The histogram: exact below 32 ns, bins 1/16 of an octave wide above. */
static void test_hist(void **state)
{
	struct ne_coll_hist *h = calloc(1, sizeof(*h));

	(void)state;
	assert_non_null(h);
	assert_int_equal(ne_coll_hist_quantile(h, 0.5), 0);
	for (uint64_t v = 1; v <= 20; v++)
		ne_coll_hist_add(h, v);
	assert_int_equal(ne_coll_hist_quantile(h, 0.5), 10); /* exact bins */
	assert_int_equal(ne_coll_hist_quantile(h, 1.0), 20);
	memset(h, 0, sizeof(*h));
	for (uint64_t i = 0; i < 99; i++)
		ne_coll_hist_add(h, 1000);
	ne_coll_hist_add(h, 1000000);
	assert_true(fabs((double)ne_coll_hist_quantile(h, 0.5) - 1000) <= 1000 / 32.0);
	assert_true(fabs((double)ne_coll_hist_quantile(h, 0.99) - 1000) <= 1000 / 32.0);
	assert_int_equal(ne_coll_hist_quantile(h, 1.0), 1000000); /* capped at the exact max */
	assert_true(fabs(ne_coll_hist_mean(h) - (99 * 1000 + 1000000) / 100.0) < 1e-9);
	free(h);
}

/* Wire time of a frame of len bytes, as the emulator counts it: the frame
 * plus FCS, preamble and gap (NE_WIRE_OVERHEAD, 24 B), rounded up to 1 ns. */
static uint64_t wire_ns(uint64_t len)
{
	return ((len + NE_WIRE_OVERHEAD) * 8 * 1000000000ull + RATE - 1) / RATE;
}

/*
 * One message by hand. Incast of 2 ranks: rank 1 sends 64 KiB to rank 0
 * (one transfer, chunk 128 KiB), path MTU 4096, links of RATE (100 Gbit/s)
 * and DELAY (1 us) through one store-and-forward switch, no other traffic.
 * Frames (bytes): Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 = 58, plus
 * RETH 16 on WRITE FIRST (F0 = 4096 + 74), nothing on the 14 MIDDLE ones
 * (4096 + 58), the immediate 4 on WRITE LAST WITH IMM (4096 + 62); the ACK
 * and the CTS (a 0-byte SEND WITH IMM) are 62 (AETH / immediate 4).
 *   wait = the CTS's trip from the root: w(CTS) at its NIC + DELAY + w(CTS)
 *          at the switch + DELAY.
 *   lat  = w(ACK): the sender's NIC first ACKs the CTS that just arrived,
 *          then sends the 16 frames back to back (sum of w); at the switch
 *          every frame waits for the one before, so the last leaves it one
 *          w(F0) after it arrived (F0 is the longest); 2 x DELAY to the
 *          receiver, which ACKs the last packet at once: 2 x w(ACK) +
 *          2 x DELAY back. The completion is handled on arrival (no proxy
 *          costs). Tolerance 1 ns (the emulator's integer rounding).
 */
static void test_latency_by_hand(void **state)
{
	const uint64_t f0 = wire_ns(4096 + 74), mid = wire_ns(4096 + 58), last = wire_ns(4096 + 62);
	const uint64_t ack = wire_ns(62), cts = wire_ns(62);
	const uint64_t want_lat = ack + (f0 + 14 * mid + last) + f0 + 2 * DELAY + 2 * ack + 2 * DELAY;
	const uint64_t want_wait = 2 * cts + 2 * DELAY;
	struct ne_coll_config c;
	struct ne_coll_hist *lat = calloc(1, sizeof(*lat)), *wait = calloc(1, sizeof(*wait));
	struct ne_coll_stats st;
	struct fab f;

	(void)state;
	assert_non_null(lat);
	assert_non_null(wait);
	ne_coll_config_default(&c);
	c.op = NE_COLL_INCAST;
	c.nranks = 2;
	c.root = 0;
	c.bytes = 64u << 10;
	c.chunk_bytes = 128u << 10;
	c.qps_per_conn = 1;
	c.path_mtu = 4096;
	coll_run(&f, &c);
	assert_int_equal(ne_coll_get_latency(f.coll, lat, wait), 0);
	ne_coll_get_stats(f.coll, &st);
	assert_int_equal(lat->n, 1);
	assert_int_equal(st.transfers_done, 1);
	print_message("latency %.1f ns (by hand %llu), wait %.1f ns (by hand %llu)\n",
		      ne_coll_hist_mean(lat), (unsigned long long)want_lat, ne_coll_hist_mean(wait),
		      (unsigned long long)want_wait);
	assert_true(llabs((long long)lat->sum_ns - (long long)want_lat) <= 1);
	assert_true(llabs((long long)wait->sum_ns - (long long)want_wait) <= 1);
	/* one value: the max is it, a lower quantile its bin's middle (within 1/32) */
	assert_int_equal(lat->max_ns, lat->sum_ns);
	assert_int_equal(ne_coll_hist_quantile(lat, 1.0), lat->max_ns);
	assert_true(fabs((double)ne_coll_hist_quantile(lat, 0.5) - (double)lat->max_ns) <=
		    (double)lat->max_ns / 32);
	free(lat);
	free(wait);
	fab_free(&f);
}

/* Every data message is measured once: as many as the messages counted. */
static void check_count(struct ne_coll_config *c)
{
	struct ne_coll_hist *lat = calloc(1, sizeof(*lat)), *wait = calloc(1, sizeof(*wait));
	struct ne_coll_stats st;
	struct fab f;

	assert_non_null(lat);
	assert_non_null(wait);
	coll_run(&f, c);
	assert_int_equal(ne_coll_get_latency(f.coll, lat, wait), 0);
	ne_coll_get_stats(f.coll, &st);
	assert_true(st.transfers_done > c->nranks);
	assert_int_equal(lat->n, st.transfers_done);
	assert_int_equal(wait->n, st.transfers_done);
	/* a message takes at least two link delays and its ACK's two */
	assert_true(ne_coll_hist_quantile(lat, 0.01) >= 4 * DELAY - 4 * DELAY / 32);
	assert_true(lat->max_ns >= ne_coll_hist_quantile(lat, 0.99));
	free(lat);
	free(wait);
	fab_free(&f);
}

static void test_latency_count(void **state)
{
	struct ne_coll_config c;

	(void)state;
	base_ring(&c);
	c.series_ns = 0;
	c.iters = 2;
	c.warmup_iters = 1;
	check_count(&c);
	assert_int_equal(ne_coll_config_set(&c, "model", "nccl"), 0);
	assert_int_equal(ne_coll_config_set(&c, "NCCL_BUFFSIZE", "64K"), 0);
	check_count(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_series_ring),   cmocka_unit_test(test_series_lanes),
		cmocka_unit_test(test_series_nccl_proxy),
		cmocka_unit_test(test_series_key),    cmocka_unit_test(test_series_off),
		cmocka_unit_test(test_hist),          cmocka_unit_test(test_latency_by_hand),
		cmocka_unit_test(test_latency_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
