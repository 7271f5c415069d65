/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flow/: max-min fair shares, exact completion times, byte conservation and
 * refused input, on small fabrics whose answers are worked out by hand below.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fl_fabric.h"
#include "fl_internal.h" /* only to spoil a counter in test_check_finds_mismatch */

#define G 1000000000ull
#define BIG 1000000000000ull /* bytes: a flow that outlasts the test */

static struct fl_fabric *fabric(void)
{
	struct fl_fabric *fab = fl_create(NULL);

	assert_non_null(fab);
	return fab;
}

static uint32_t add_link(struct fl_fabric *fab, uint64_t bps, uint64_t prop_ns)
{
	uint32_t id;

	assert_int_equal(fl_link_add(fab, bps, prop_ns, &id), 0);
	return id;
}

static uint32_t add_flow(struct fl_fabric *fab, const uint32_t *path, unsigned n, uint64_t bytes,
		     uint64_t start, uint64_t cookie)
{
	uint32_t id;

	assert_int_equal(fl_flow_start(fab, path, n, bytes, start, cookie, &id), 0);
	return id;
}

static uint64_t rate(const struct fl_fabric *fab, uint32_t f)
{
	uint64_t r;

	assert_int_equal(fl_flow_rate(fab, f, &r), 0);
	return r;
}

static void test_two_flows_half_each(void **state)
{
	struct fl_fabric *fab = fabric();
	uint32_t l = add_link(fab, 100 * G, 0);
	uint32_t a = add_flow(fab, &l, 1, BIG, 0, 1), b = add_flow(fab, &l, 1, BIG, 0, 2);

	(void)state;
	assert_int_equal(rate(fab, a), 0); /* not started before the clock handles t = 0 */
	assert_int_equal(fl_run_until(fab, 0), 0);
	assert_int_equal(rate(fab, a), 50 * G);
	assert_int_equal(rate(fab, b), 50 * G);
	fl_destroy(fab);
}

/*
 * The classic example: L0 (12 Gbit/s) carries f0, f1, f2; L1 (4 Gbit/s)
 * carries f2 and f3. L1's share 4/2 = 2 is below L0's 12/3 = 4, so f2 and f3
 * get 2; L0 gives the 12 - 2 = 10 left to f0 and f1: 5 each.
 * f3 has 250,000 B = 2,000,000 bits: at 2 Gbit/s it ends at 1 ms. Then L1 has
 * only f2 (share 4) and L0 three flows (share 12/3 = 4): all three get 4.
 */
static void test_bottleneck_elsewhere_and_end_frees(void **state)
{
	struct fl_fabric *fab = fabric();
	uint32_t l0 = add_link(fab, 12 * G, 0), l1 = add_link(fab, 4 * G, 0);
	uint32_t p01[2] = { l0, l1 };
	uint32_t f0 = add_flow(fab, &l0, 1, BIG, 0, 0), f1 = add_flow(fab, &l0, 1, BIG, 0, 1);
	uint32_t f2 = add_flow(fab, p01, 2, BIG, 0, 2), f3 = add_flow(fab, &l1, 1, 250000, 0, 3);
	uint64_t sent;
	uint32_t over;

	(void)state;
	assert_int_equal(fl_run_until(fab, 0), 0);
	assert_int_equal(rate(fab, f0), 5 * G);
	assert_int_equal(rate(fab, f1), 5 * G);
	assert_int_equal(rate(fab, f2), 2 * G);
	assert_int_equal(rate(fab, f3), 2 * G);
	assert_int_equal(fl_check_rates(fab, &over), 0);

	assert_int_equal(fl_next_event_ns(fab), 1000000); /* f3's last byte */
	assert_int_equal(fl_run_until(fab, 999999), 0);
	assert_int_equal(rate(fab, f3), 2 * G);
	assert_int_equal(fl_run_until(fab, 1000000), 0);
	assert_int_equal(rate(fab, f3), 0);
	assert_int_equal(fl_flow_sent(fab, f3, &sent), 0);
	assert_int_equal(sent, 250000);
	assert_int_equal(rate(fab, f0), 4 * G);
	assert_int_equal(rate(fab, f1), 4 * G);
	assert_int_equal(rate(fab, f2), 4 * G);
	fl_destroy(fab);
}

/*
 * 100 Gbit/s, 500 ns. A = 1,000,000 B and B = 3,000,000 B from t = 0 at
 * 50 Gbit/s each: A's 8,000,000 bits are out at 160,000 ns. B has sent
 * 1,000,000 B by then; its other 2,000,000 B (16,000,000 bits) take 160,000 ns
 * at 100 Gbit/s: out at 320,000 ns. Latency: 500 + one 4096 B packet with
 * 82 B of headers, 4178 x 8 = 33,424 bits at 100 Gbit/s = 334.24 -> 335 ns;
 * 835 ns. Delivered at 160,835 and 320,835 ns.
 */
static void test_exact_completion_times(void **state)
{
	struct fl_fabric *fab = fabric();
	uint32_t l = add_link(fab, 100 * G, 500);
	uint32_t a = add_flow(fab, &l, 1, 1000000, 0, 0xa), b = add_flow(fab, &l, 1, 3000000, 0, 0xb);
	struct fl_done d[2];
	uint64_t t, lat;

	(void)state;
	assert_int_equal(fl_flow_latency(fab, a, &lat), 0);
	assert_int_equal(lat, 835);
	assert_int_equal(fl_advance(fab, &t), 1);
	assert_int_equal(t, 160835);
	assert_int_equal(fl_done_pop(fab, d, 2), 1);
	assert_int_equal(d[0].cookie, 0xa);
	assert_int_equal(d[0].finish_ns, 160835);
	assert_int_equal(d[0].bytes, 1000000);
	assert_int_equal(rate(fab, b), 100 * G);
	assert_int_equal(fl_advance(fab, &t), 1);
	assert_int_equal(t, 320835);
	assert_int_equal(fl_done_pop(fab, d, 2), 1);
	assert_int_equal(d[0].cookie, 0xb);
	assert_int_equal(d[0].start_ns, 0);
	assert_int_equal(fl_advance(fab, &t), 0); /* nothing left */
	assert_int_equal(fl_live_flows(fab), 0);
	fl_destroy(fab);
}

/*
 * A weighted flow: W = 3 flows of 1,000,000 B and B = one of 3,000,000 B on
 * the link above (100 Gbit/s, 500 ns) from t = 0. W counts as 3 of the 4
 * flows: 3 x floor(100e9 / 4) = 75 Gbit/s, B 25 Gbit/s, as 4 separate flows
 * would get 25 each. W's 24,000,000 bits are out at 320,000 ns, the time
 * each of its parts alone would take (8,000,000 bits at 25 Gbit/s), and it
 * is delivered one 4096 B packet's latency later (835 ns, not the sum's):
 * 320,835 ns, with its 3,000,000 B. Weight 0 is refused.
 */
static void test_weighted_flow(void **state)
{
	struct fl_fabric *fab = fabric();
	uint32_t l = add_link(fab, 100 * G, 500), w, b = add_flow(fab, &l, 1, 3000000, 0, 0xb);
	struct fl_done d[2];
	uint64_t t, lat;

	(void)state;
	assert_int_equal(fl_flow_start_weighted(fab, &l, 1, 1000000, 0, 0, 0xa, &w), -EINVAL);
	assert_int_equal(fl_flow_start_weighted(fab, &l, 1, 1000000, 3, 0, 0xa, &w), 0);
	assert_int_equal(fl_flow_latency(fab, w, &lat), 0);
	assert_int_equal(lat, 835);
	assert_int_equal(fl_run_until(fab, 0), 0);
	assert_int_equal(rate(fab, w), 75 * G);
	assert_int_equal(rate(fab, b), 25 * G);
	assert_int_equal(fl_advance(fab, &t), 1);
	assert_int_equal(t, 320835);
	assert_int_equal(fl_done_pop(fab, d, 2), 1);
	assert_int_equal(d[0].cookie, 0xa);
	assert_int_equal(d[0].bytes, 3000000);
	fl_destroy(fab);
}

/*
 * Rounding up: 1001 B alone on 3 Gbit/s, no delay, starting at 7 ns: 8008
 * bits take 2669.33 ns -> out at 7 + 2670; its only packet is 1001 + 82 =
 * 1083 B = 8664 bits: 2888 ns. Delivered at 7 + 2670 + 2888 = 5565 ns.
 * Two hops, 100 Gbit/s + 500 ns then 400 Gbit/s + 100 ns: 335 (above) +
 * 33,424 / 400 = 83.56 -> 84 ns: 500 + 335 + 100 + 84 = 1019 ns.
 * fl_path_latency on those 2 hops without a flow: the same 1019 ns for a
 * large message; a header-only one (0 B) is 82 x 8 = 656 bits: 6.56 -> 7 ns
 * and 1.64 -> 2 ns, so 500 + 7 + 100 + 2 = 609 ns; a link twice or an
 * unknown link is refused.
 */
static void test_ceil_and_two_hop_latency(void **state)
{
	struct fl_fabric *fab = fabric();
	uint32_t l = add_link(fab, 3 * G, 0), p[2] = { add_link(fab, 100 * G, 500), add_link(fab, 400 * G, 100) };
	uint32_t f = add_flow(fab, &l, 1, 1001, 7, 0), g = add_flow(fab, p, 2, BIG, 0, 1);
	uint64_t t, lat;

	(void)state;
	assert_int_equal(fl_flow_latency(fab, g, &lat), 0);
	assert_int_equal(lat, 1019);
	assert_int_equal(fl_flow_latency(fab, f, &lat), 0);
	assert_int_equal(lat, 2888);
	assert_int_equal(fl_path_latency(fab, p, 2, BIG, &lat), 0);
	assert_int_equal(lat, 1019);
	assert_int_equal(fl_path_latency(fab, p, 2, 0, &lat), 0);
	assert_int_equal(lat, 609);
	assert_int_equal(fl_path_latency(fab, (uint32_t[]){ p[0], p[0] }, 2, 0, &lat), -EINVAL);
	assert_int_equal(fl_path_latency(fab, (uint32_t[]){ 99 }, 1, 0, &lat), -ENOENT);
	assert_int_equal(fl_advance(fab, &t), 1);
	assert_int_equal(t, 5565);
	fl_destroy(fab);
}

/*
 * A sender paced below its link (a GPU's PCIe under its NIC's rate): the link
 * of 100 Gbit/s and 500 ns paced at 25 Gbit/s. A flow of 1,000,000 B takes
 * 8,000,000 bits / 25 Gbit/s = 320,000 ns, and its first packet still takes
 * the link's rate on the wire: 500 + ceil(4,178 x 8 / 100) = 835 ns, so it is
 * delivered at 320,835 ns (not 500 + 1,337 = 321,837 at the paced rate). A
 * pace above the link's rate, on a link in use or on no link is refused.
 */
static void test_paced_link(void **state)
{
	struct fl_fabric *fab = fabric();
	uint32_t l = add_link(fab, 100 * G, 500), f;
	uint64_t t, lat;

	(void)state;
	assert_int_equal(fl_link_pace(fab, l, 101 * G), -EINVAL);
	assert_int_equal(fl_link_pace(fab, l + 1, 25 * G), -EINVAL);
	assert_int_equal(fl_link_pace(fab, l, 25 * G), 0);
	f = add_flow(fab, &l, 1, 1000000, 0, 1);
	assert_int_equal(fl_flow_latency(fab, f, &lat), 0);
	assert_int_equal(lat, 835);
	assert_int_equal(fl_link_pace(fab, l, 20 * G), -EINVAL); /* in use */
	assert_int_equal(fl_run_until(fab, 0), 0);
	assert_int_equal(rate(fab, f), 25 * G);
	assert_int_equal(fl_advance(fab, &t), 1);
	assert_int_equal(t, 320835);
	fl_destroy(fab);
}

/*
 * Bytes on the link of test_exact_completion_times: at 80,000 ns each flow
 * has sent 50 Gbit/s x 80 us = 500,000 B: 1,000,000 B over the link, none
 * delivered. At 160,835 ns A (1,000,000 B) is delivered and B has sent
 * 1,000,000 B + 835 ns at 12.5 B/ns = 10,437.5 -> 10,437 B: 2,010,437 B sent.
 */
/* Flow f has sent f_sent bytes; link l has carried l_sent and delivered l_deliv; all balance. */
static void expect_bytes(const struct fl_fabric *fab, uint32_t f, uint64_t f_sent, uint32_t l,
			 uint64_t l_sent, uint64_t l_deliv)
{
	uint64_t sent, delivered;
	struct fl_mismatch m;

	assert_int_equal(fl_flow_sent(fab, f, &sent), 0);
	assert_int_equal(sent, f_sent);
	assert_int_equal(fl_link_bytes(fab, l, &sent, &delivered), 0);
	assert_int_equal(sent, l_sent);
	assert_int_equal(delivered, l_deliv);
	assert_int_equal(fl_check_bytes(fab, &m), 0);
}

static void test_bytes_conserved(void **state)
{
	struct fl_fabric *fab = fabric();
	uint32_t l = add_link(fab, 100 * G, 500);
	uint32_t a = add_flow(fab, &l, 1, 1000000, 0, 0), b = add_flow(fab, &l, 1, 3000000, 0, 1);

	(void)state;
	assert_int_equal(fl_run_until(fab, 80000), 0);
	expect_bytes(fab, a, 500000, l, 1000000, 0);
	assert_int_equal(fl_run_until(fab, 160835), 1);
	expect_bytes(fab, b, 1010437, l, 2010437, 1000000);
	fl_destroy(fab);
}

/* The check is not blind: one byte too many on link 1's counter is reported there. */
static void test_check_finds_mismatch(void **state)
{
	struct fl_fabric *fab = fabric();
	uint32_t p[2] = { add_link(fab, 100 * G, 0), add_link(fab, 100 * G, 0) };
	struct fl_mismatch m;

	(void)state;
	add_flow(fab, p, 2, 1000000, 0, 0);
	assert_int_equal(fl_run_until(fab, 40000), 0); /* 40 us at 100 Gbit/s: 500,000 B */
	fl_settle(fab, 0);
	assert_int_equal(fl_check_bytes(fab, &m), 0);
	fab->links[1].sent++;
	assert_int_equal(fl_check_bytes(fab, &m), 1);
	assert_int_equal(m.link, 1);
	assert_int_equal(m.sent, 500001);
	assert_int_equal(m.delivered, 0);
	assert_int_equal(m.in_flight, 500000);
	fl_destroy(fab);
}

static void test_bad_input_refused(void **state)
{
	struct fl_fabric *fab = fabric();
	uint32_t l = add_link(fab, 100 * G, 0), id = 77;
	uint32_t unknown = 5, twice[2] = { l, l }, nine[9] = { 0 };
	uint64_t r, d;

	(void)state;
	assert_null(fl_create(&(struct fl_config){ .mtu_bytes = (1u << 30) + 1 }));
	assert_null(fl_create(&(struct fl_config){ .refill_ns = FL_REFILL_MAX_NS + 1 }));
	assert_int_equal(fl_link_add(fab, 0, 0, &id), -EINVAL);
	assert_int_equal(fl_link_add(fab, FL_BPS_MIN - 1, 0, &id), -EINVAL);
	assert_int_equal(fl_link_add(fab, FL_BPS_MAX + 1, 0, &id), -EINVAL);
	assert_int_equal(fl_link_add(fab, 100 * G, FL_PROP_MAX_NS + 1, &id), -EINVAL);
	assert_int_equal(fl_flow_start(fab, &unknown, 1, 10, 0, 0, &id), -ENOENT);
	assert_int_equal(fl_flow_start(fab, &l, 0, 10, 0, 0, &id), -EINVAL);
	assert_int_equal(fl_flow_start(fab, NULL, 1, 10, 0, 0, &id), -EINVAL);
	assert_int_equal(fl_flow_start(fab, twice, 2, 10, 0, 0, &id), -EINVAL);
	assert_int_equal(fl_flow_start(fab, nine, 9, 10, 0, 0, &id), -EINVAL);
	assert_int_equal(fl_flow_start(fab, &l, 1, 10, FL_TIME_MAX + 1, 0, &id), -EINVAL);
	assert_int_equal(id, 77); /* untouched */
	assert_int_equal(fl_live_flows(fab), 0);
	assert_int_equal(fl_run_until(fab, 100), 0);
	assert_int_equal(fl_flow_start(fab, &l, 1, 10, 99, 0, &id), -EINVAL); /* in the past */
	assert_int_equal(fl_run_until(fab, 99), -EINVAL);
	assert_int_equal(fl_flow_rate(fab, 0, &r), -ENOENT); /* no flow was made */
	assert_int_equal(fl_link_bytes(fab, 1, &r, &d), -ENOENT);
	assert_int_equal(fl_live_flows(fab), 0);
	fl_destroy(fab);
}

/* A 0-byte message is one header-only packet: 82 B = 656 bits at 100 Gbit/s
 * = 6.56 -> 7 ns, plus 10 ns: delivered at 3 + 17 = 20 ns, taking no rate. */
static void test_zero_bytes(void **state)
{
	struct fl_fabric *fab = fabric();
	uint32_t l = add_link(fab, 100 * G, 10);
	uint64_t t;

	(void)state;
	add_flow(fab, &l, 1, 0, 3, 9);
	assert_int_equal(fl_advance(fab, &t), 1);
	assert_int_equal(t, 20);
	fl_destroy(fab);
}

/*
 * Only the changed component is recomputed. L0 and L1 share no flow. At
 * t = 0 f0 (L0) and f1 (L1) start: one pass over both links and both flows.
 * At t = 10 f2 joins L0: the pass covers L0 and its flows f0, f2 only
 * (f1 keeps its 100 Gbit/s untouched): 2 passes, 4 flows, 3 links in all.
 * Recomputing everything would have touched 2 + 3 flows and 2 + 2 links.
 */
static void test_incremental_touches_component(void **state)
{
	struct fl_config full = { .full = true };
	struct fl_fabric *fab[2] = { fabric(), fl_create(&full) };
	struct fl_stats st;

	(void)state;
	assert_non_null(fab[1]);
	for (int e = 0; e < 2; e++) {
		uint32_t l0 = add_link(fab[e], 100 * G, 0), l1 = add_link(fab[e], 100 * G, 0);
		uint32_t f0 = add_flow(fab[e], &l0, 1, BIG, 0, 0), f1 = add_flow(fab[e], &l1, 1, BIG, 0, 1);
		uint32_t f2 = add_flow(fab[e], &l0, 1, BIG, 10, 2);

		assert_int_equal(fl_run_until(fab[e], 10), 0);
		assert_int_equal(rate(fab[e], f0), 50 * G);
		assert_int_equal(rate(fab[e], f1), 100 * G);
		assert_int_equal(rate(fab[e], f2), 50 * G);
		fl_stats_get(fab[e], &st);
		assert_int_equal(st.events, 3);
		assert_int_equal(st.batches, 2);
		assert_int_equal(st.recomputes, 2);
		assert_int_equal(st.flows_touched, e == 0 ? 4 : 5);
		assert_int_equal(st.links_touched, e == 0 ? 3 : 4);
		assert_int_equal(st.rate_changes, 4); /* f0, f1 new; f0 halved, f2 new */
		fl_destroy(fab[e]);
	}
}

/* What the sent callback saw: cookies and the clock at each call. */
struct sent_log {
	struct fl_fabric *fab;
	uint64_t cookie[4], at[4];
	unsigned n;
};

static void log_sent(void *ctx, uint64_t cookie)
{
	struct sent_log *lg = ctx;

	if (lg->n < 4) {
		lg->cookie[lg->n] = cookie;
		lg->at[lg->n] = fl_now(lg->fab);
	}
	lg->n++;
}

/*
 * The sent callback: the two flows of test_exact_completion_times send
 * their last bytes at 1e6 x 8 / 50e9 = 160,000 ns (a, at half the link) and
 * 160,000 + 2e6 x 8 / 100e9 = 320,000 ns (b, alone after): one call each,
 * a latency (835 ns) before its delivery; none for a 0-byte flow.
 */
static void test_sent_callback(void **state)
{
	struct sent_log lg = {0};
	struct fl_config cfg = {.sent = log_sent, .sent_ctx = &lg};
	struct fl_fabric *fab = fl_create(&cfg);
	uint32_t l;

	(void)state;
	assert_non_null(fab);
	lg.fab = fab;
	l = add_link(fab, 100 * G, 500);
	add_flow(fab, &l, 1, 1000000, 0, 0xa);
	add_flow(fab, &l, 1, 3000000, 0, 0xb);
	add_flow(fab, &l, 1, 0, 0, 0xc);
	assert_int_equal(fl_run_until(fab, 400000), 3);
	assert_int_equal(lg.n, 2);
	assert_int_equal(lg.cookie[0], 0xa);
	assert_int_equal(lg.at[0], 160000);
	assert_int_equal(lg.cookie[1], 0xb);
	assert_int_equal(lg.at[1], 320000);
	fl_destroy(fab);
}

/*
 * The test-only hook fl_test_steal: the next flow delivered over link 1 leaves
 * its bytes out of link 1's count, once, and fl_check_bytes names link 1;
 * FL_LINK_ALL disarms it.
 */
static void test_steal_hook_is_found(void **state)
{
	struct fl_fabric *fab = fabric();
	uint32_t p[2] = { add_link(fab, 100 * G, 0), add_link(fab, 100 * G, 0) };
	struct fl_mismatch m;
	uint64_t sent, delivered;

	(void)state;
	fl_test_steal(p[1]);
	add_flow(fab, p, 2, 1000000, 0, 0);
	assert_int_equal(fl_run_until(fab, 1000000), 1);
	assert_int_equal(fl_check_bytes(fab, &m), 1);
	assert_int_equal(m.link, p[1]);
	assert_int_equal(m.sent, 1000000);
	assert_int_equal(m.delivered, 0);
	assert_int_equal(m.in_flight, 0);
	/* once: the next flow's bytes count on link 1 (the stolen ones stay missing) */
	add_flow(fab, p, 2, 1000000, fl_now(fab), 0);
	assert_int_equal(fl_run_until(fab, 2000000), 1);
	assert_int_equal(fl_link_bytes(fab, p[1], &sent, &delivered), 0);
	assert_int_equal(sent - delivered, 1000000);
	/* armed then disarmed: link 0 stays balanced */
	fl_test_steal(p[0]);
	fl_test_steal(FL_LINK_ALL);
	add_flow(fab, p, 2, 1000000, fl_now(fab), 0);
	assert_int_equal(fl_run_until(fab, 3000000), 1);
	assert_int_equal(fl_link_bytes(fab, p[0], &sent, &delivered), 0);
	assert_int_equal(sent, 3000000);
	assert_int_equal(delivered, 3000000);
	fl_destroy(fab);
}

/*
 * A refill period of 1,000 ns on the classic example above (L0 12 Gbit/s:
 * f0, f1, f2; L1 4 Gbit/s: f2, f3 of 2,000,000 bits), all from t = 0:
 * - t = 0: the changed links are L0 and L1, so the local fill is the exact
 *   one: f2 and f3 2, f0 and f1 5 Gbit/s. The refill at 1,000 keeps them.
 * - f3 ends at 2,000,000 bits / 2 Gbit/s = 1 ms. Only L1 changed: its one
 *   flow f2 is filled in what it had (2) plus what the links have left
 *   (L1: 2, L0: 0), so L0 holds it at 2 and f0, f1 keep 5.
 * - The refill at 1,001,000 ns gives all three of L0 12 / 3 = 4 Gbit/s.
 */
static void test_refill_period_by_hand(void **state)
{
	struct fl_fabric *fab = fl_create(&(struct fl_config){ .refill_ns = 1000 });
	uint32_t l0, l1, p01[2], f0, f1, f2, f3;
	struct fl_stats st;

	(void)state;
	assert_non_null(fab);
	l0 = add_link(fab, 12 * G, 0);
	l1 = add_link(fab, 4 * G, 0);
	p01[0] = l0;
	p01[1] = l1;
	f0 = add_flow(fab, &l0, 1, BIG, 0, 0);
	f1 = add_flow(fab, &l0, 1, BIG, 0, 1);
	f2 = add_flow(fab, p01, 2, BIG, 0, 2);
	f3 = add_flow(fab, &l1, 1, 250000, 0, 3);
	assert_int_equal(fl_run_until(fab, 0), 0);
	assert_int_equal(rate(fab, f0), 5 * G);
	assert_int_equal(rate(fab, f2), 2 * G);
	assert_int_equal(rate(fab, f3), 2 * G);
	assert_int_equal(fl_next_event_ns(fab), 1000); /* the refill */
	assert_int_equal(fl_run_until(fab, 1000500), 0);
	assert_int_equal(rate(fab, f3), 0);          /* its last byte sent at 1 ms */
	assert_int_equal(rate(fab, f0), 5 * G);
	assert_int_equal(rate(fab, f1), 5 * G);
	assert_int_equal(rate(fab, f2), 2 * G);
	assert_int_equal(fl_run_until(fab, 1000999), 0);
	assert_int_equal(rate(fab, f2), 2 * G);
	assert_int_equal(fl_run_until(fab, 1001000), 0);
	assert_int_equal(rate(fab, f0), 4 * G);
	assert_int_equal(rate(fab, f1), 4 * G);
	assert_int_equal(rate(fab, f2), 4 * G);
	fl_stats_get(fab, &st);
	assert_int_equal(st.local_fills, 2);  /* at 0 and at 1 ms */
	assert_int_equal(st.recomputes, 2);   /* at 1,000 and 1,001,000 */
	fl_destroy(fab);
}

/*
 * A refill period of 1 ms, two flows on one 100 Gbit/s link from t = 0: 50
 * Gbit/s each. b's 100,000 bits end at 2,000 ns; its link changed, so the
 * local fill gives a what it had plus what b left: the whole link at once,
 * with no refill yet.
 */
static void test_refill_end_frees_locally(void **state)
{
	struct fl_fabric *fab = fl_create(&(struct fl_config){ .refill_ns = 1000000 });
	uint32_t l, a, b;
	struct fl_stats st;

	(void)state;
	assert_non_null(fab);
	l = add_link(fab, 100 * G, 0);
	a = add_flow(fab, &l, 1, BIG, 0, 1);
	b = add_flow(fab, &l, 1, 12500, 0, 2);
	assert_int_equal(fl_run_until(fab, 1999), 0);
	assert_int_equal(rate(fab, a), 50 * G);
	assert_int_equal(rate(fab, b), 50 * G);
	assert_int_equal(fl_run_until(fab, 2000), 0);
	assert_int_equal(rate(fab, a), 100 * G);
	fl_stats_get(fab, &st);
	assert_int_equal(st.recomputes, 0);
	assert_int_equal(st.local_fills, 2); /* at 0 and 2,000 */
	fl_destroy(fab);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_flows_half_each),
		cmocka_unit_test(test_bottleneck_elsewhere_and_end_frees),
		cmocka_unit_test(test_exact_completion_times),
		cmocka_unit_test(test_weighted_flow),
		cmocka_unit_test(test_ceil_and_two_hop_latency),
		cmocka_unit_test(test_paced_link),
		cmocka_unit_test(test_bytes_conserved),
		cmocka_unit_test(test_check_finds_mismatch),
		cmocka_unit_test(test_steal_hook_is_found),
		cmocka_unit_test(test_bad_input_refused),
		cmocka_unit_test(test_zero_bytes),
		cmocka_unit_test(test_incremental_touches_component),
		cmocka_unit_test(test_sent_callback),
		cmocka_unit_test(test_refill_period_by_hand),
		cmocka_unit_test(test_refill_end_frees_locally),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
