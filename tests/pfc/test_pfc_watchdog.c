/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PFC watchdog, simulated time: a partner keeps priority 3 paused (XOFF every
 * 100 us) from S to E while the queue holds packets and sends nothing. The
 * storm must be declared inside [S + detect, S + detect + poll] and restored
 * inside [end of the last pause + restore, ... + poll]; not before.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pfc_frame.h"
#include "pfc_pause.h"
#include "pfc_watchdog.h"

#define US   1000ull
#define MS   1000000ull
#define RATE 100000000000ull
#define PRIO 3

struct result {
	uint64_t storm_at, restore_at; /* 0: never */
	uint64_t last_pause_end;
	bool stayed_in_storm;          /* in storm at every poll between the two */
	uint64_t drops_seen;
};

/*
 * Run 0 .. end_ns in 100 us steps. The partner sends XOFF (0xffff quanta)
 * every 100 us in [s, e). progress: the queue sends a packet at every step
 * (the pause is not really blocking it).
 */
static struct result run(const struct pfc_watchdog_config *cfg, uint64_t s, uint64_t e,
			 uint64_t end_ns, bool progress)
{
	struct result r = { 0 };
	struct pfc_pause ps;
	struct pfc_watchdog wd;
	char err[128];
	assert_int_equal(pfc_pause_init(&ps, RATE, NULL, 0), 0);
	if (pfc_watchdog_init(&wd, cfg, 0, err, sizeof(err)))
		fail_msg("%s", err);
	uint8_t frame[PFC_FRAME_LEN];
	struct pfc_frame f;
	pfc_frame_init(&f, NULL);
	pfc_frame_set(&f, PRIO, 0xffff);
	pfc_frame_encode(&f, frame, sizeof(frame));
	uint64_t tx[PFC_NUM_PRIO] = { 0 };
	r.stayed_in_storm = true;
	for (uint64_t t = 0; t <= end_ns; t += 100 * US) {
		if (t >= s && t < e) {
			assert_int_equal(pfc_pause_rx(&ps, frame, sizeof(frame), t), PFC_FRAME_OK);
			r.last_pause_end = pfc_pause_expiry_ns(&ps, PRIO);
		}
		if (progress)
			tx[PRIO]++;
		if (t >= pfc_watchdog_next_poll_ns(&wd)) {
			uint8_t ch = pfc_watchdog_poll(&wd, &ps, 1u << PRIO, tx, t);
			bool storm = pfc_watchdog_in_storm(&wd, PRIO);
			if ((ch & (1u << PRIO)) && storm)
				r.storm_at = t;
			if ((ch & (1u << PRIO)) && !storm)
				r.restore_at = t;
			if (r.storm_at && !r.restore_at && !storm)
				r.stayed_in_storm = false;
			assert_int_equal(ch & ~(1u << PRIO), 0); /* only the watched, stalled queue */
		}
		if (pfc_watchdog_drops(&wd, PRIO)) {
			pfc_watchdog_count_drop(&wd, PRIO, 1);
			r.drops_seen++;
		}
		/* mitigation: with the drop action the queue never "may send" while in storm */
		if (pfc_watchdog_in_storm(&wd, PRIO)) {
			bool fwd = cfg && cfg->action == PFC_WD_FORWARD;
			assert_int_equal(pfc_watchdog_may_send(&wd, &ps, PRIO, t), fwd);
			assert_int_equal(pfc_watchdog_drops(&wd, PRIO), !fwd);
		} else {
			assert_int_equal(pfc_watchdog_may_send(&wd, &ps, PRIO, t),
					 pfc_pause_may_send(&ps, PRIO, t));
		}
	}
	if (r.storm_at) {
		assert_int_equal(wd.q[PRIO].storms, 1);
		assert_int_equal(wd.q[PRIO].restores, r.restore_at ? 1 : 0);
		assert_int_equal(wd.q[PRIO].dropped_pkts, r.drops_seen);
		if (r.restore_at)
			assert_int_equal(pfc_watchdog_storm_ns(&wd, PRIO, end_ns),
					 r.restore_at - r.storm_at);
	}
	return r;
}

static void check_windows(const struct pfc_watchdog_config *cfg, uint64_t s, uint64_t e)
{
	struct result r = run(cfg, s, e, e + cfg->restore_ns + 3 * cfg->poll_ns, false);
	print_message("  poll %llu ms: storm %llu ms .. %llu ms -> declared at %llu ms, restored "
		      "at %llu ms (last pause ended %.3f ms)\n",
		      (unsigned long long)(cfg->poll_ns / MS), (unsigned long long)(s / MS),
		      (unsigned long long)(e / MS), (unsigned long long)(r.storm_at / MS),
		      (unsigned long long)(r.restore_at / MS), (double)r.last_pause_end / MS);
	assert_true(r.storm_at != 0);
	assert_true(r.storm_at >= s + cfg->detect_ns);
	assert_true(r.storm_at <= s + cfg->detect_ns + cfg->poll_ns);
	assert_true(r.restore_at != 0);
	assert_true(r.stayed_in_storm); /* no restore while the partner keeps pausing */
	assert_true(r.restore_at >= r.last_pause_end + cfg->restore_ns);
	assert_true(r.restore_at <= r.last_pause_end + cfg->restore_ns + cfg->poll_ns);
	if (cfg->action == PFC_WD_DROP)
		assert_true(r.drops_seen > 0);
}

static void test_defaults(void **state)
{
	(void)state;
	struct pfc_watchdog_config cfg;
	pfc_watchdog_config_default(&cfg);
	/* SONiC's defaults: 200 ms detection and restoration, 100 ms polling, drop */
	assert_int_equal(cfg.detect_ns, 200 * MS);
	assert_int_equal(cfg.restore_ns, 200 * MS);
	assert_int_equal(cfg.poll_ns, 100 * MS);
	assert_int_equal(cfg.action, PFC_WD_DROP);
	check_windows(&cfg, 50 * MS, 1050 * MS);
	check_windows(&cfg, 130 * MS, 777 * MS);
}

static void test_fast_poll_forward(void **state)
{
	(void)state;
	struct pfc_watchdog_config cfg;
	pfc_watchdog_config_default(&cfg);
	cfg.poll_ns = 10 * MS;
	cfg.detect_ns = 100 * MS;
	cfg.restore_ns = 150 * MS;
	cfg.action = PFC_WD_FORWARD;
	check_windows(&cfg, 55 * MS, 600 * MS);
	check_windows(&cfg, 3 * MS, 250 * MS);
}

static void test_no_false_alarm(void **state)
{
	(void)state;
	struct pfc_watchdog_config cfg;
	pfc_watchdog_config_default(&cfg);
	/* a pause shorter than detect - poll is never a storm */
	struct result r = run(&cfg, 50 * MS, 50 * MS + cfg.detect_ns - cfg.poll_ns - 1 * MS,
			      1000 * MS, false);
	assert_int_equal(r.storm_at, 0);
	/* a long pause while the queue keeps sending is not a stall */
	r = run(&cfg, 50 * MS, 900 * MS, 1000 * MS, true);
	assert_int_equal(r.storm_at, 0);
	/* a queue not watched (priority 3 removed from the mask) never storms */
	cfg.prio_mask = 1u << 4;
	r = run(&cfg, 50 * MS, 900 * MS, 1000 * MS, false);
	assert_int_equal(r.storm_at, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_fast_poll_forward),
		cmocka_unit_test(test_no_false_alarm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
