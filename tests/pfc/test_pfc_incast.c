/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * 4:1 incast for 1 ms into one egress at line rate, as a tiny discrete-event
 * simulation (picosecond clock, deterministic):
 *
 *   4 senders (ports 0..3) --100G, 100 ns cable--> switch --100G--> port 4
 *
 * Each sender starts a 1514-byte frame back to back while its pause state
 * allows (a frame already started is finished). A frame is admitted into the
 * MMU when its last bit arrives; the egress sends one frame at a time and
 * releases it from the MMU when its last bit has left. A PFC frame built by
 * the MMU takes 84 bytes of wire time and the cable delay to reach its sender,
 * which acts on it after its response time.
 *
 * PFC on (priority 3 lossless): no drop, XOFF reaches every sender, each PG
 * stays within threshold + headroom, the egress stays busy.
 * PFC off (no lossless priority): drops are counted (egress tail drop) and
 * sent = admitted + dropped, admitted = dequeued, nothing left held.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pfc_mmu.h"
#include "pfc_pause.h"

#define N_SEND    4
#define EGRESS    4
#define PRIO      3
#define RATE      100000000000ull  /* 100 Gbit/s */
#define CABLE_NS  100
#define FRAME     1514u
#define WINDOW_PS 1000000000ull    /* 1 ms of sending */
#define RESP_BITS 30720u           /* sender reacts 307.2 ns after receiving PFC */
#define INF       UINT64_MAX
#define RING      (1u << 16)

/* picoseconds to put bits on a 100G link */
static uint64_t wire_ps(uint64_t bytes)
{
	return bytes * 8 * 1000000000000ull / RATE;
}

struct pfc_msg {
	uint64_t t_ps; /* when the sender acts on it */
	struct pfc_frame f;
};

struct sender {
	struct pfc_pause ps;
	uint64_t busy_until;           /* ps */
	uint64_t sent;
	uint64_t arr[RING];            /* arrival (last bit at the switch) of frames in flight */
	unsigned arr_head, arr_tail;
	struct pfc_msg msg[64];        /* PFC frames on the way back */
	unsigned msg_head, msg_tail;
	uint64_t rev_free;             /* switch -> sender link free at */
};

struct sim {
	struct pfc_mmu *mmu;
	struct sender s[N_SEND];
	uint8_t q[RING];               /* egress FIFO: ingress port of each frame */
	unsigned q_head, q_tail;
	uint64_t tx_end;               /* INF when the egress is idle */
	uint8_t tx_port;
	uint64_t sent, dropped, dequeued;
	uint64_t max_over;             /* worst PG bytes above threshold + headroom */
	uint64_t xoff_flags[N_SEND];   /* PFC_MMU_F_XOFF seen on admissions, per port */
	uint64_t xon_flags[N_SEND];    /* PFC_MMU_F_XON seen on dequeues */
};

static void send_pfc(struct sim *sm, unsigned port, uint64_t t)
{
	struct pfc_frame f;
	if (pfc_mmu_pfc_frame(sm->mmu, port, t / 1000, &f) == 0)
		return;
	struct sender *s = &sm->s[port];
	uint64_t start = s->rev_free > t ? s->rev_free : t;
	s->rev_free = start + wire_ps(PFC_FRAME_WIRE_LEN);
	uint64_t act = s->rev_free + CABLE_NS * 1000ull + RESP_BITS * 10ull; /* 10 ps per bit */
	assert_true(s->msg_tail - s->msg_head < 64);
	s->msg[s->msg_tail % 64] = (struct pfc_msg){ act, f };
	s->msg_tail++;
}

static void check_pg(struct sim *sm, unsigned port)
{
	const struct pfc_mmu_pg *pg = pfc_mmu_pg(sm->mmu, port, PRIO);
	uint64_t lim = pfc_mmu_xoff_threshold(sm->mmu, port, PRIO) + pfc_mmu_headroom(sm->mmu, port);
	if (pg->bytes > lim && pg->bytes - lim > sm->max_over)
		sm->max_over = pg->bytes - lim;
}

static void run(struct sim *sm, const struct pfc_mmu_config *cfg)
{
	char err[256] = "";
	memset(sm, 0, sizeof(*sm));
	sm->mmu = pfc_mmu_create(cfg, err, sizeof(err));
	if (!sm->mmu)
		fail_msg("pfc_mmu_create: %s", err);
	for (unsigned i = 0; i < N_SEND; i++)
		assert_int_equal(pfc_pause_init(&sm->s[i].ps, RATE, NULL, 0), 0);
	sm->tx_end = INF;
	const uint64_t ser = wire_ps(FRAME + PFC_WIRE_OVERHEAD);
	const bool static_mode = cfg->mode == PFC_MMU_STATIC;

	for (uint64_t iter = 0;; iter++) {
		assert_true(iter < 10000000); /* a stuck loop fails instead of hanging */
		/* next event time */
		uint64_t t = INF;
		for (unsigned i = 0; i < N_SEND; i++) {
			struct sender *s = &sm->s[i];
			if (s->msg_head != s->msg_tail && s->msg[s->msg_head % 64].t_ps < t)
				t = s->msg[s->msg_head % 64].t_ps;
			if (s->arr_head != s->arr_tail && s->arr[s->arr_head % RING] < t)
				t = s->arr[s->arr_head % RING];
			uint64_t can = s->busy_until;
			uint64_t exp = pfc_pause_next_expiry_ns(&s->ps, can / 1000);
			if (exp != INF && exp * 1000 > can)
				can = exp * 1000;
			if (can < WINDOW_PS && can < t)
				t = can;
			uint64_t r = pfc_mmu_pfc_next_ns(sm->mmu, i);
			if (r != INF && r * 1000 < t)
				t = r * 1000;
		}
		if (sm->tx_end < t)
			t = sm->tx_end;
		if (t == INF)
			break;
		uint64_t now = t;

		/* 1. PFC frames reaching senders */
		for (unsigned i = 0; i < N_SEND; i++) {
			struct sender *s = &sm->s[i];
			while (s->msg_head != s->msg_tail && s->msg[s->msg_head % 64].t_ps <= now) {
				pfc_pause_apply(&s->ps, &s->msg[s->msg_head % 64].f,
						s->msg[s->msg_head % 64].t_ps / 1000);
				s->msg_head++;
			}
		}
		/* 2. egress: a frame has left */
		if (sm->tx_end != INF && sm->tx_end <= now) {
			struct pfc_mmu_pkt pk = { .len = FRAME, .in_port = sm->tx_port,
						  .out_port = EGRESS, .prio = PRIO };
			unsigned fl = pfc_mmu_dequeue(sm->mmu, &pk, sm->tx_end / 1000);
			sm->dequeued++;
			if (fl & PFC_MMU_F_XON) {
				sm->xon_flags[sm->tx_port]++;
				send_pfc(sm, sm->tx_port, sm->tx_end);
			}
			sm->tx_end = INF;
		}
		/* 3. arrivals at the switch */
		for (unsigned i = 0; i < N_SEND; i++) {
			struct sender *s = &sm->s[i];
			while (s->arr_head != s->arr_tail && s->arr[s->arr_head % RING] <= now) {
				uint64_t ta = s->arr[s->arr_head % RING];
				s->arr_head++;
				struct pfc_mmu_pkt pk = { .len = FRAME, .in_port = (uint16_t)i,
							  .out_port = EGRESS, .prio = PRIO };
				unsigned fl;
				if (pfc_mmu_admit(sm->mmu, &pk, ta / 1000, &fl) == PFC_MMU_ADMIT) {
					assert_true(sm->q_tail - sm->q_head < RING);
					sm->q[sm->q_tail % RING] = (uint8_t)i;
					sm->q_tail++;
				} else {
					sm->dropped++;
				}
				if (fl & PFC_MMU_F_XOFF) {
					sm->xoff_flags[i]++;
					send_pfc(sm, i, ta);
				}
				if (static_mode)
					check_pg(sm, i);
			}
		}
		/* 4. an idle egress starts the next frame at once */
		if (sm->tx_end == INF && sm->q_head != sm->q_tail) {
			sm->tx_port = sm->q[sm->q_head % RING];
			sm->q_head++;
			sm->tx_end = now + ser;
		}
		/* 5. XOFF refreshes */
		for (unsigned i = 0; i < N_SEND; i++)
			if (pfc_mmu_pfc_next_ns(sm->mmu, i) <= now / 1000)
				send_pfc(sm, i, now);
		/* 6. senders start frames */
		for (unsigned i = 0; i < N_SEND; i++) {
			struct sender *s = &sm->s[i];
			if (s->busy_until > now || now >= WINDOW_PS)
				continue;
			if (!pfc_pause_may_send(&s->ps, PRIO, now / 1000))
				continue;
			s->busy_until = now + ser;
			assert_true(s->arr_tail - s->arr_head < RING);
			s->arr[s->arr_tail % RING] = now + ser + CABLE_NS * 1000ull;
			s->arr_tail++;
			s->sent++;
			sm->sent++;
		}
	}
}

static void base_config(struct pfc_mmu_config *cfg, enum pfc_mmu_mode mode, bool pfc)
{
	struct pfc_mmu_port_config pc;
	pfc_mmu_port_config_init(&pc, RATE, CABLE_NS, FRAME);
	pc.response_bits = RESP_BITS;
	pfc_mmu_config_init(cfg, pfc_buffer_profile_find(mode == PFC_MMU_STATIC ? "deep" : "shallow"),
			    N_SEND + 1, &pc);
	cfg->buffer_bytes = 5u << 20; /* 1 MiB per port in static mode */
	cfg->lossless_mask = pfc ? 1u << PRIO : 0;
	for (unsigned p = 0; p < PFC_NUM_PRIO; p++)
		cfg->ecn[p].enabled = false;
}

static void check_common(struct sim *sm)
{
	const struct pfc_mmu_stats *st = pfc_mmu_stats(sm->mmu);
	uint64_t drops = 0;
	for (unsigned v = 1; v < PFC_MMU_VERDICT_COUNT; v++)
		drops += st->drops[v];
	/* nothing lost track of */
	assert_int_equal(drops, sm->dropped);
	assert_int_equal(st->pkts_admitted + drops, sm->sent);
	assert_int_equal(st->pkts_dequeued, st->pkts_admitted);
	assert_int_equal(st->pkts_dequeued, sm->dequeued);
	assert_int_equal(st->bytes_dequeued, st->bytes_admitted);
	assert_int_equal(st->bytes_admitted, st->pkts_admitted * FRAME);
	assert_int_equal(st->bytes, 0);
	assert_int_equal(st->shared_used, 0);
	assert_int_equal(st->underflows, 0);
	for (unsigned i = 0; i <= N_SEND; i++) {
		assert_int_equal(pfc_mmu_port(sm->mmu, i)->in_bytes, 0);
		assert_int_equal(pfc_mmu_port(sm->mmu, i)->out_bytes, 0);
		assert_int_equal(pfc_mmu_pg(sm->mmu, i, PRIO)->bytes, 0);
	}
	/* the senders offered at least line rate into the egress for the whole window */
	uint64_t line_pkts = WINDOW_PS / wire_ps(FRAME + PFC_WIRE_OVERHEAD);
	assert_true(sm->sent >= line_pkts);
}

static void check_pfc_on(struct sim *sm, const char *name)
{
	const struct pfc_mmu_stats *st = pfc_mmu_stats(sm->mmu);
	check_common(sm);
	assert_int_equal(sm->dropped, 0);
	for (unsigned i = 0; i < N_SEND; i++) {
		const struct pfc_mmu_pg *pg = pfc_mmu_pg(sm->mmu, i, PRIO);
		assert_true(pg->xoff >= 1);          /* XOFF generated for every sender */
		assert_true(pg->xoff_tx >= 1);
		assert_int_equal(pg->xon, pg->xoff); /* and released at the end */
		/* every transition was reported to the caller by a flag */
		assert_int_equal(sm->xoff_flags[i], pg->xoff);
		assert_int_equal(sm->xon_flags[i], pg->xon);
		/* and every transition went out as a frame: XOFF frames >= XOFF transitions */
		assert_true(pg->xoff_tx >= pg->xoff);
		assert_int_equal(pg->xon_tx, pg->xon);
		assert_true(sm->s[i].ps.xoff_rx[PRIO] >= 1); /* and received by it */
		assert_true(pfc_pause_paused_ns(&sm->s[i].ps, PRIO, 2 * WINDOW_PS / 1000) > 0);
		assert_true(pfc_mmu_pause_ns(sm->mmu, i, PRIO, 2 * WINDOW_PS / 1000) > 0);
		assert_true(pg->peak_headroom > 0);  /* the headroom took the in-flight data */
		assert_true(pg->peak_headroom <= pfc_mmu_headroom(sm->mmu, i));
		assert_int_equal(pg->drops[PFC_MMU_DROP_HEADROOM], 0);
	}
	assert_true(st->pfc_frames_tx >= N_SEND);
	/* the egress was never starved: it sent at line rate during the window */
	uint64_t line_pkts = WINDOW_PS / wire_ps(FRAME + PFC_WIRE_OVERHEAD);
	assert_true(sm->dequeued >= line_pkts);
	const struct pfc_mmu_pg *pg0 = pfc_mmu_pg(sm->mmu, 0, PRIO);
	print_message("  %s PFC on: sent %llu, XOFF %llu, PFC frames %llu, PG0 peak %llu bytes "
		      "(headroom peak %llu of %llu), switch peak %llu\n", name,
		      (unsigned long long)sm->sent, (unsigned long long)st->xoff,
		      (unsigned long long)st->pfc_frames_tx, (unsigned long long)pg0->peak_bytes,
		      (unsigned long long)pg0->peak_headroom,
		      (unsigned long long)pfc_mmu_headroom(sm->mmu, 0),
		      (unsigned long long)st->peak_bytes);
}

static void test_incast_pfc_on_static(void **state)
{
	(void)state;
	struct pfc_mmu_config cfg;
	base_config(&cfg, PFC_MMU_STATIC, true);
	static struct sim sm;
	run(&sm, &cfg);
	check_pfc_on(&sm, "static");
	/* occupancy never above threshold + headroom */
	assert_int_equal(sm.max_over, 0);
	for (unsigned i = 0; i < N_SEND; i++) {
		const struct pfc_mmu_pg *pg = pfc_mmu_pg(sm.mmu, i, PRIO);
		uint64_t t = pfc_mmu_xoff_threshold(sm.mmu, i, PRIO);
		assert_true(pg->peak_bytes <= t + pfc_mmu_headroom(sm.mmu, i));
		assert_true(pg->peak_bytes > t); /* and the threshold really was reached */
	}
	pfc_mmu_destroy(sm.mmu);
}

static void test_incast_pfc_on_shared(void **state)
{
	(void)state;
	struct pfc_mmu_config cfg;
	base_config(&cfg, PFC_MMU_SHARED, true);
	static struct sim sm;
	run(&sm, &cfg);
	check_pfc_on(&sm, "shared");
	const struct pfc_mmu_stats *st = pfc_mmu_stats(sm.mmu);
	/* 4 PGs under a dynamic threshold with alpha 1 use at most 4a/(1+4a) = 80% of the
	 * shared pool (plus one packet each of overshoot): the threshold, not the pool, stopped them */
	assert_true(cfg.alpha == 1.0);
	assert_true(st->shared_peak <= st->shared_pool * 4 / 5 + N_SEND * 1536);
	assert_true(st->shared_peak >= st->shared_pool * 3 / 4);
	assert_true(st->peak_bytes <= cfg.buffer_bytes);
	pfc_mmu_destroy(sm.mmu);
}

static void test_incast_pfc_off(void **state)
{
	(void)state;
	struct pfc_mmu_config cfg;
	base_config(&cfg, PFC_MMU_STATIC, false);
	static struct sim sm;
	run(&sm, &cfg);
	check_common(&sm);
	const struct pfc_mmu_stats *st = pfc_mmu_stats(sm.mmu);
	assert_true(sm.dropped > 0);
	assert_int_equal(st->drops[PFC_MMU_DROP_EGRESS], sm.dropped); /* tail drop */
	assert_int_equal(st->xoff, 0);
	assert_int_equal(st->pfc_frames_tx, 0);
	for (unsigned i = 0; i < N_SEND; i++)
		assert_int_equal(sm.s[i].ps.xoff_rx[PRIO], 0);
	/* the queue sat at its limit: the port share */
	const struct pfc_mmu_queue *q = pfc_mmu_queue(sm.mmu, EGRESS, PRIO);
	assert_true(q->peak_bytes <= pfc_mmu_port(sm.mmu, EGRESS)->share_bytes);
	assert_int_equal(q->drops[PFC_MMU_DROP_EGRESS], sm.dropped);
	print_message("  PFC off: sent %llu, admitted %llu, dropped %llu, queue peak %llu\n",
		      (unsigned long long)sm.sent, (unsigned long long)st->pkts_admitted,
		      (unsigned long long)sm.dropped, (unsigned long long)q->peak_bytes);
	pfc_mmu_destroy(sm.mmu);
}

static void test_xoff_refresh(void **state)
{
	(void)state;
	/* a PG that stays in XOFF re-sends XOFF every half pause time, so the sender
	 * never resumes while the switch is still congested; XON is one frame */
	struct pfc_mmu_config cfg;
	base_config(&cfg, PFC_MMU_STATIC, true);
	char err[256];
	struct pfc_mmu *m = pfc_mmu_create(&cfg, err, sizeof(err));
	assert_non_null(m);
	const uint64_t refresh = pfc_quanta_to_ns(cfg.pause_quanta, RATE) / 2;
	assert_int_equal(pfc_mmu_port(m, 0)->refresh_ns, refresh);
	assert_int_equal(pfc_mmu_pfc_next_ns(m, 0), UINT64_MAX); /* nothing to say yet */
	struct pfc_mmu_pkt pk = { .len = FRAME, .in_port = 0, .out_port = EGRESS, .prio = PRIO };
	unsigned fl = 0, n = 0;
	while (!(fl & PFC_MMU_F_XOFF)) {
		assert_int_equal(pfc_mmu_admit(m, &pk, 1000, &fl), PFC_MMU_ADMIT);
		n++;
	}
	assert_int_equal(pfc_mmu_pfc_next_ns(m, 0), 0); /* owed now */
	struct pfc_frame f;
	assert_int_equal(pfc_mmu_pfc_frame(m, 0, 1000, &f), 1);
	assert_int_equal(f.enable, 1u << PRIO);
	assert_int_equal(f.time[PRIO], cfg.pause_quanta);
	assert_int_equal(pfc_mmu_pfc_next_ns(m, 0), 1000 + refresh);
	assert_int_equal(pfc_mmu_pfc_frame(m, 0, 1000 + refresh - 1, &f), 0); /* not yet */
	assert_int_equal(f.enable, 0);
	assert_int_equal(pfc_mmu_pfc_frame(m, 0, 1000 + refresh, &f), 1);  /* refresh */
	assert_int_equal(f.time[PRIO], cfg.pause_quanta);
	assert_int_equal(pfc_mmu_pfc_frame(m, 0, 1000 + 2 * refresh, &f), 1);
	const struct pfc_mmu_pg *pg = pfc_mmu_pg(m, 0, PRIO);
	assert_int_equal(pg->xoff, 1);
	assert_int_equal(pg->xoff_tx, 3);
	assert_int_equal(pfc_mmu_port(m, 0)->pfc_frames_tx, 3);
	/* other ports have nothing to send */
	assert_int_equal(pfc_mmu_pfc_frame(m, 1, 1000 + 2 * refresh, &f), 0);
	/* drain: one XON frame with time 0, then silence */
	const uint64_t t_xon = 1000 + 2 * refresh + 5;
	unsigned xon = 0;
	for (unsigned i = 0; i < n; i++)
		xon += (pfc_mmu_dequeue(m, &pk, t_xon) & PFC_MMU_F_XON) != 0;
	assert_int_equal(xon, 1);
	assert_int_equal(pfc_mmu_pfc_frame(m, 0, t_xon, &f), 1);
	assert_int_equal(f.enable, 1u << PRIO);
	assert_int_equal(f.time[PRIO], 0);
	assert_int_equal(pfc_mmu_pfc_next_ns(m, 0), UINT64_MAX);
	assert_int_equal(pfc_mmu_pfc_frame(m, 0, t_xon + 10 * refresh, &f), 0);
	assert_int_equal(pg->xon_tx, 1);
	/* pause time: the PG was in XOFF from 1000 to t_xon */
	assert_int_equal(pfc_mmu_pause_ns(m, 0, PRIO, t_xon + 12345), t_xon - 1000);
	pfc_mmu_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_incast_pfc_on_static),
		cmocka_unit_test(test_incast_pfc_on_shared),
		cmocka_unit_test(test_incast_pfc_off),
		cmocka_unit_test(test_xoff_refresh),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
