/* SPDX-License-Identifier: BSD-3-Clause */
/* dp_engine: timer order, same-time FIFO order, same-time order by (LP, sequence) keys, key-bounded steps, timer slots (same events as stale timers left to fire, cancelled ones as stale ones), virtual clock jumps, live clock source, live monotone time, timers that cannot be added, the wheel and the heap against a reference order, the look-ahead's prefetch calls, a nanosecond's timers added in no key order. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dp_engine.h"

struct log {
	uint64_t at[4096];
	uint64_t arg[4096];
	int n;
	struct dp_engine *e;
};

static void record(void *obj, uint64_t arg, uint64_t now)
{
	struct log *l = obj;

	l->at[l->n] = now;
	l->arg[l->n++] = arg;
}

/* A timer that schedules another at the same time: it runs in the same dispatch. */
static void chain(void *obj, uint64_t arg, uint64_t now)
{
	struct log *l = obj;

	record(obj, arg, now);
	if (arg < 3)
		dp_timer_add(l->e, now, chain, l, arg + 1);
}

static void test_order(void **state)
{
	(void)state;
	struct dp_engine e;
	struct log *l = calloc(1, sizeof(*l));
	uint64_t s = 12345;

	assert_int_equal(dp_engine_init(&e, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	/* 3000 timers at random times (many equal): they must come out sorted by
	 * time, and in insertion order among equal times */
	for (int i = 0; i < 3000; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		assert_int_equal(dp_timer_add(&e, s % 500, record, l, (uint64_t)i), 0);
	}
	assert_int_equal(dp_engine_run_due(&e, 1000), 3000);
	for (int i = 1; i < l->n; i++) {
		assert_true(l->at[i] >= l->at[i - 1]);
		if (l->at[i] == l->at[i - 1])
			assert_true(l->arg[i] > l->arg[i - 1]);
	}
	assert_int_equal(dp_engine_next_ns(&e), UINT64_MAX);
	dp_engine_free(&e);
	free(l);
}

static void test_virtual_steps(void **state)
{
	(void)state;
	struct dp_engine e;
	struct log *l = calloc(1, sizeof(*l));

	assert_int_equal(dp_engine_init(&e, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	l->e = &e;
	dp_timer_add(&e, 500, record, l, 1);
	dp_timer_add(&e, 200, chain, l, 0);
	/* the clock jumps to 200 and runs the whole same-time chain there */
	assert_true(dp_engine_step_virtual(&e, 10000));
	assert_int_equal(e.now_ns, 200);
	assert_int_equal(l->n, 4);
	/* not due before 400: the clock stops at 400 */
	assert_false(dp_engine_step_virtual(&e, 400));
	assert_int_equal(e.now_ns, 400);
	assert_true(dp_engine_step_virtual(&e, 10000));
	assert_int_equal(e.now_ns, 500);
	assert_int_equal(l->n, 5);
	assert_false(dp_engine_step_virtual(&e, 10000));
	assert_int_equal(e.fired, 5);
	/* with no timer left, stepping without a limit reports idle and keeps the clock */
	assert_false(dp_engine_step_virtual(&e, UINT64_MAX));
	assert_int_equal(e.now_ns, 10000);
	dp_engine_free(&e);
	free(l);
}

static uint64_t fake_now(void *ctx)
{
	return *(uint64_t *)ctx;
}

static void test_live_clock(void **state)
{
	(void)state;
	struct dp_engine e;
	uint64_t t = 777;

	assert_int_equal(dp_engine_init(&e, DP_CLOCK_LIVE, NULL, NULL), -EINVAL); /* live mode without a clock source */
	assert_int_equal(dp_engine_init(&e, DP_CLOCK_LIVE, fake_now, &t), 0);
	assert_int_equal(dp_engine_now(&e), 777);
	t = 900;
	assert_int_equal(dp_engine_now(&e), 900);
	dp_engine_free(&e);
}

/*
 * Live mode hands callbacks a time that never goes back: work done late in a
 * batch (a wire delivering up to the clock's reading) moves it forward, and a
 * timer due earlier then runs at that time, not its deadline. The virtual
 * clock keeps deadlines exactly.
 */
static void test_live_monotone(void **state)
{
	(void)state;
	struct dp_engine e;
	struct log *l = calloc(1, sizeof(*l));
	uint64_t t = 1000;

	assert_int_equal(dp_engine_init(&e, DP_CLOCK_LIVE, fake_now, &t), 0);
	dp_timer_add(&e, 400, record, l, 1);
	dp_timer_add(&e, 700, record, l, 2);
	dp_timer_add(&e, 1500, record, l, 3);
	assert_int_equal(dp_engine_mono(&e, 600), 600);  /* batch work at 600 */
	assert_int_equal(dp_engine_mono(&e, 500), 600);  /* never earlier */
	assert_int_equal(dp_engine_run_due(&e, dp_engine_now(&e)), 2);
	assert_int_equal(l->at[0], 600);                 /* due at 400, runs at 600 */
	assert_int_equal(l->at[1], 700);                 /* its own deadline: later than 600 */
	t = 2000;
	assert_int_equal(dp_engine_run_due(&e, dp_engine_now(&e)), 1);
	assert_int_equal(l->at[2], 1500);
	assert_int_equal(dp_engine_mono(&e, 1200), 1500);
	dp_engine_free(&e);

	assert_int_equal(dp_engine_init(&e, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	assert_int_equal(dp_engine_mono(&e, 600), 600);
	assert_int_equal(dp_engine_mono(&e, 500), 500);  /* virtual: untouched */
	dp_engine_free(&e);
	free(l);
}

/*
 * A timer that cannot be added is refused with a negative errno and counted
 * in timer_fail (what the fabric's tables report), never dropped silently;
 * once timers have run, adding works again.
 */
static void test_timer_limit(void **state)
{
	(void)state;
	struct dp_engine e;
	struct log *l = calloc(1, sizeof(*l));

	assert_int_equal(dp_engine_init(&e, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	dp_engine_set_limit(&e, 2);
	assert_int_equal(dp_timer_add(&e, 100, record, l, 1), 0);
	assert_int_equal(dp_timer_add(&e, 200, record, l, 2), 0);
	assert_int_equal(dp_timer_add(&e, 300, record, l, 3), -ENOSPC);
	assert_int_equal(dp_timer_add(&e, 50, record, l, 4), -ENOSPC);
	assert_int_equal(e.timer_fail, 2);
	assert_int_equal(dp_engine_next_ns(&e), 100); /* the refused 50 is not there */
	assert_true(dp_engine_step_virtual(&e, 1000));
	assert_int_equal(dp_timer_add(&e, 300, record, l, 3), 0);
	while (dp_engine_step_virtual(&e, 1000))
		;
	assert_int_equal(l->n, 3);
	assert_int_equal(l->arg[0], 1);
	assert_int_equal(l->arg[1], 2);
	assert_int_equal(l->arg[2], 3);
	assert_int_equal(e.timer_fail, 2);
	dp_engine_free(&e);
	free(l);
}

/* A source that is always behind: each run schedules its next one a little later but still due. */
static void behind(void *obj, uint64_t arg, uint64_t now)
{
	struct log *l = obj;

	l->n++;
	dp_timer_add(l->e, now + 1, behind, l, arg);
}

/* Overload: a budget bounds a turn's work; the lag is how late the oldest timer is. */
static void test_budget_and_lag(void **state)
{
	struct dp_engine e;
	struct log *l = calloc(1, sizeof(*l));
	uint64_t t = 1000;

	(void)state;
	assert_int_equal(dp_engine_init(&e, DP_CLOCK_LIVE, fake_now, &t), 0);
	l->e = &e;
	assert_int_equal(dp_timer_add(&e, 100, behind, l, 0), 0);
	/* everything from 100 to 1000 is due: a budget of 64 runs exactly 64 */
	assert_int_equal(dp_engine_run_budget(&e, dp_engine_now(&e), 64), 64);
	assert_int_equal(l->n, 64);
	assert_int_equal(dp_engine_next_ns(&e), 164);
	assert_int_equal(dp_engine_note_lag(&e, 1000), 1000 - 164);
	assert_int_equal(e.lag_max_ns, 836);
	/* caught up (next timer in the future): lag 0, the maximum stays */
	t = 100;
	assert_int_equal(dp_engine_note_lag(&e, dp_engine_now(&e)), 0);
	assert_int_equal(e.lag_ns, 0);
	assert_int_equal(e.lag_max_ns, 836);
	/* a budget larger than what is due runs only what is due */
	assert_int_equal(dp_engine_run_budget(&e, 170, 1000), 7); /* 164..170 */
	dp_engine_free(&e);
	free(l);
}

/* Schedules, as the LP it runs as, a timer at the same time for LP arg >> 8 (if any). */
static void schedule_from_lp(void *obj, uint64_t arg, uint64_t now)
{
	struct log *l = obj;

	record(obj, arg, now);
	if (arg >> 8)
		dp_timer_add_lp(l->e, (uint32_t)(arg >> 8), now, record, l, arg & 0xff);
}

/*
 * Same-time order by key: what LP 2 schedules runs before what LP 3
 * schedules, whatever the insertion order; within an LP, in its order; a
 * keyed timer (an arrival) sits at its key_lp's place.
 */
static void test_lp_keys(void **state)
{
	(void)state;
	struct dp_engine e;
	uint64_t seq[8 * DP_LP_STRIDE] = {0};
	struct log *l = calloc(1, sizeof(*l));

	assert_int_equal(dp_engine_init(&e, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	dp_engine_set_lps(&e, seq, 8);
	l->e = &e;
	/* set-up (LP 0): at 10, a callback running as LP 3 and one running as LP 2;
	 * each schedules a timer at 20 (args 31, 21) */
	dp_timer_add_lp(&e, 3, 10, schedule_from_lp, l, (3u << 8) | 31);
	dp_timer_add_lp(&e, 2, 10, schedule_from_lp, l, (2u << 8) | 21);
	/* an arrival keyed by LP 2.5 (key_lp 5 > 3 > 2), armed first, at 20 */
	assert_int_equal(dp_timer_add_keyed(&e, 4, 5, 20, record, l, 50), 0);
	assert_int_equal(dp_engine_run_due(&e, 100), 5);
	/* at 10: set-up order (both keyed by LP 0); at 20: LP 2's, LP 3's, then the keyed one */
	uint64_t want[] = {(3u << 8) | 31, (2u << 8) | 21, 21, 31, 50};
	for (int i = 0; i < 5; i++)
		assert_int_equal(l->arg[i], want[i]);
	dp_engine_free(&e);
	free(l);
}

/*
 * dp_engine_copy_lp: two engines share the LP counters; LP 3 has a copy on
 * the second. What LP 3's callback schedules there is keyed by that engine's
 * own counter (from the shared value at the copy), the shared one untouched;
 * order by key is kept.
 */
static void test_lp_copy(void **state)
{
	(void)state;
	struct dp_engine a, b;
	uint64_t seq[8 * DP_LP_STRIDE] = {0};
	struct log *l = calloc(1, sizeof(*l));

	assert_int_equal(dp_engine_init(&a, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	assert_int_equal(dp_engine_init(&b, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	dp_engine_set_lps(&a, seq, 8);
	dp_engine_set_lps(&b, seq, 8);
	seq[3 * DP_LP_STRIDE] = 7;
	dp_engine_copy_lp(&b, 3);
	l->e = &b;
	/* on b, as LP 3 at 10: schedules arg 31 at 20; as LP 2: arg 21 at 20 */
	dp_timer_add_lp(&b, 3, 10, schedule_from_lp, l, (3u << 8) | 31);
	dp_timer_add_lp(&b, 2, 10, schedule_from_lp, l, (2u << 8) | 21);
	assert_int_equal(dp_engine_run_due(&b, 100), 4);
	assert_int_equal(seq[3 * DP_LP_STRIDE], 7); /* the shared counter: not written */
	assert_int_equal(b.copy_seq, 8);            /* b's copy: one timer from 7 */
	assert_int_equal(seq[2 * DP_LP_STRIDE], 1); /* LP 2 keeps the shared one */
	assert_int_equal(l->arg[2], 21);           /* at 20: LP 2's key, then LP 3's */
	assert_int_equal(l->arg[3], 31);
	dp_engine_free(&a);
	dp_engine_free(&b);
	free(l);
}

/* dp_engine_step_below(): runs the timers of the next instant below (time, key), no further. */
static void test_step_below(void **state)
{
	(void)state;
	struct dp_engine e;
	struct log *l = calloc(1, sizeof(*l));
	uint64_t at, key;

	assert_int_equal(dp_engine_init(&e, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	for (uint64_t i = 0; i < 4; i++)
		dp_timer_add(&e, 100, record, l, i); /* keys 0..3 (LP 0) */
	dp_timer_add(&e, 200, record, l, 9);
	assert_false(dp_engine_step_below(&e, 100, 0)); /* nothing below (100, 0) */
	assert_int_equal(e.now_ns, 0);
	assert_true(dp_engine_step_below(&e, 100, 2)); /* keys 0 and 1 at 100 */
	assert_int_equal(l->n, 2);
	assert_int_equal(e.now_ns, 100);
	assert_true(dp_engine_peek(&e, &at, &key));
	assert_int_equal(at, 100);
	assert_int_equal(key, 2);
	assert_true(dp_engine_step_below(&e, 150, 0)); /* the rest of 100, not 200 */
	assert_int_equal(l->n, 4);
	assert_false(dp_engine_step_below(&e, 200, 0));
	assert_true(dp_engine_step_below(&e, 201, 0));
	assert_int_equal(l->n, 5);
	assert_int_equal(e.fired, 5);
	dp_engine_free(&e);
	free(l);
}

/*
 * Timer slots: one engine re-arms a slot per owner (dp_timer_slot_arm) and
 * cancels it (dp_timer_slot_cancel), the other adds a timer per wake-up and
 * ignores the stale and the cancelled ones (what dp_nic did before slots).
 * Plain timers interleave, callbacks re-arm other owners at their instant.
 * The events that run must be the same, in the same order, and the slot
 * engine must hold no stale timer.
 */
#define SLOT_OWNERS 50

struct slot_world {
	struct dp_engine e;
	bool slots;                       /* slot engine, else stale timers */
	uint32_t slot[SLOT_OWNERS];       /* slot engine: each owner's slot */
	uint64_t token[SLOT_OWNERS];      /* stale engine: the wake-up that counts */
	struct slot_owner {
		struct slot_world *w;
		uint32_t k;
	} owner[SLOT_OWNERS];
	uint64_t next_arg;                /* args handed out by callbacks */
	uint32_t max_n;                   /* the most timers pending at once */
	struct log *l;
};

static void slot_fire(void *obj, uint64_t arg, uint64_t now);

static void slot_arm(struct slot_world *w, uint32_t k, uint64_t at, uint64_t arg)
{
	if (w->slots) {
		assert_int_equal(dp_timer_slot_arm(&w->e, w->slot[k], 0, at, slot_fire, &w->owner[k], arg),
				 0);
		assert_true(dp_timer_slot_pending(&w->e, w->slot[k]));
	} else {
		w->token[k] = arg;
		assert_int_equal(dp_timer_add(&w->e, at, slot_fire, &w->owner[k], arg), 0);
	}
	if (w->e.n > w->max_n)
		w->max_n = w->e.n;
}

/* Owner k's pending wake-up goes (the stale engine: no wake-up it holds counts). */
static void slot_cancel(struct slot_world *w, uint32_t k)
{
	if (w->slots) {
		dp_timer_slot_cancel(&w->e, w->slot[k]);
		assert_false(dp_timer_slot_pending(&w->e, w->slot[k]));
	} else {
		w->token[k] = UINT64_MAX;
	}
}

static void slot_fire(void *obj, uint64_t arg, uint64_t now)
{
	struct slot_owner *o = obj;
	struct slot_world *w = o->w;

	if (!w->slots && w->token[o->k] != arg)
		return; /* stale */
	if (w->slots)
		assert_false(dp_timer_slot_pending(&w->e, w->slot[o->k]));
	record(w->l, arg, now);
	if (arg % 3 == 0 && w->next_arg < 1000000 + 3000) /* re-arm another owner, maybe earlier */
		slot_arm(w, (o->k * 7 + 1) % SLOT_OWNERS, now + arg % 40, w->next_arg++);
	else if (arg % 7 == 1) /* or take another's wake-up away (pending or not) */
		slot_cancel(w, (o->k * 11 + 3) % SLOT_OWNERS);
}

static void slot_world_run(struct slot_world *w, bool slots)
{
	uint64_t s = 777;

	memset(w, 0, sizeof(*w));
	w->slots = slots;
	w->next_arg = 1000000;
	w->l = calloc(1, sizeof(*w->l));
	assert_non_null(w->l);
	assert_int_equal(dp_engine_init(&w->e, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	for (uint32_t k = 0; k < SLOT_OWNERS; k++) {
		w->owner[k] = (struct slot_owner){w, k};
		if (slots) {
			int id = dp_timer_slot_new(&w->e);
			assert_true(id > 0);
			w->slot[k] = (uint32_t)id;
			assert_false(dp_timer_slot_pending(&w->e, w->slot[k]));
		}
	}
	for (uint64_t i = 0; i < 3000; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		if (s % 10 < 3)
			assert_int_equal(dp_timer_add(&w->e, s % 2000, record, w->l, i), 0);
		else if (s % 10 == 3)
			slot_cancel(w, (uint32_t)(s >> 8) % SLOT_OWNERS);
		else
			slot_arm(w, (uint32_t)(s >> 8) % SLOT_OWNERS, (s >> 20) % 2000, i);
		if (i % 500 == 499) /* some run before the rest is armed */
			dp_engine_run_due(&w->e, (i / 500) * 300);
	}
	dp_engine_run_due(&w->e, UINT64_MAX);
}

static void test_slots(void **state)
{
	(void)state;
	struct slot_world *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));

	assert_non_null(a);
	assert_non_null(b);
	slot_world_run(a, true);
	slot_world_run(b, false);
	assert_true(a->l->n > 1000);
	assert_int_equal(a->l->n, b->l->n);
	for (int i = 0; i < a->l->n; i++) {
		assert_int_equal(a->l->at[i], b->l->at[i]);
		assert_int_equal(a->l->arg[i], b->l->arg[i]);
	}
	assert_true(a->next_arg > 1000000); /* callbacks did re-arm */
	assert_int_equal(a->next_arg, b->next_arg);
	assert_true(b->e.fired > a->e.fired); /* the stale ones ran there, not here */
	/* plain timers pend until their time; slots at most one each */
	assert_true(a->max_n < b->max_n);
	for (uint32_t k = 0; k < SLOT_OWNERS; k++)
		assert_false(dp_timer_slot_pending(&a->e, a->slot[k]));
	assert_int_equal(a->e.n, 0);
	for (struct slot_world *w = a; w; w = w == a ? b : NULL) {
		dp_engine_free(&w->e);
		free(w->l);
	}
	free(a);
	free(b);
}

/* A callback that checks it runs with its own object and argument: arg is its deadline. */
static void own_cb(void *obj, uint64_t arg, uint64_t now)
{
	assert_int_equal(arg, now);
	record(obj, arg, now);
}

/*
 * The engine keeps each pending timer's callback in a node (nodes of run
 * timers reused, the table grown when full): 3,000 timers, past the first
 * allocation of 1,024, added in a scrambled order and half of them run before
 * 1,000 more come, each with the right object and argument, in time order.
 */
static void test_many_callbacks(void **state)
{
	struct dp_engine e;
	struct log *l = calloc(1, sizeof(*l)), *other = calloc(1, sizeof(*other));

	(void)state;
	assert_non_null(l);
	assert_non_null(other);
	assert_int_equal(dp_engine_init(&e, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	for (uint64_t i = 0; i < 3000; i++) { /* 7919 is prime to 3001: distinct times */
		uint64_t t = 1 + (i * 7919) % 3001;
		assert_int_equal(dp_timer_add(&e, t, own_cb, t & 1 ? l : other, t), 0);
	}
	while (dp_engine_step_virtual(&e, 1500))
		;
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(dp_timer_add(&e, 5000 + (i * 13) % 1000, own_cb, l, 5000 + (i * 13) % 1000), 0);
	while (dp_engine_step_virtual(&e, UINT64_MAX))
		;
	assert_int_equal(l->n + other->n, 4000);
	for (int i = 1; i < l->n; i++)
		assert_true(l->at[i - 1] < l->at[i]);
	for (int i = 0; i < other->n; i++)
		assert_int_equal(other->at[i] & 1, 0);
	assert_int_equal(e.n, 0);
	dp_engine_free(&e);
	free(l);
	free(other);
}

/*
 * The wheel and the heap together give the one order (time, key): a random
 * world of 8 LPs whose callbacks schedule timers at the same nanosecond, a few
 * ns on, in the wheel's far half (where buckets wrap round) and past it, and re-arm slots, is run
 * beside a reference (every pending timer in an array, the earliest by a
 * scan); each timer that runs must be the reference's earliest. Live, some
 * deadlines are in the past (a late loop).
 */
#define REF_MAX 8192
#define REF_LPS 8
#define REF_SLOTS 4

struct ref_world {
	struct dp_engine e;
	uint64_t lp_seq[REF_LPS * DP_LP_STRIDE];
	uint64_t at[REF_MAX], key[REF_MAX];
	int tag[REF_MAX];              /* a pending timer's arg, -1: a free entry */
	int n;                         /* entries in use (pending ones first... any order) */
	int slot_tag[REF_SLOTS + 1];   /* the slot's pending timer's tag, -1: none */
	uint32_t slot[REF_SLOTS + 1];
	uint64_t rng, added, ran, clock;
	bool live;
};

static uint64_t ref_rand(struct ref_world *w)
{
	w->rng ^= w->rng << 13, w->rng ^= w->rng >> 7, w->rng ^= w->rng << 17;
	return w->rng;
}

static void ref_cb(void *obj, uint64_t arg, uint64_t now);

/* Add a timer at at running as lp (in slot k when k > 0), to the engine and the reference. */
static void ref_add(struct ref_world *w, uint64_t at, uint32_t lp, int k)
{
	uint64_t key = (uint64_t)w->e.cur_lp << DP_LP_SEQ_BITS | w->lp_seq[w->e.cur_lp * DP_LP_STRIDE];
	int tag = (int)w->added++, i;

	if (k > 0) {
		if (w->slot_tag[k] >= 0) { /* the superseded one leaves the reference */
			for (i = 0; i < w->n && w->tag[i] != w->slot_tag[k]; i++)
				;
			assert_true(i < w->n);
			w->tag[i] = w->tag[--w->n], w->at[i] = w->at[w->n], w->key[i] = w->key[w->n];
		}
		assert_int_equal(dp_timer_slot_arm(&w->e, w->slot[k], lp, at, ref_cb, w, (uint64_t)tag), 0);
		w->slot_tag[k] = tag;
	} else {
		assert_int_equal(dp_timer_add_lp(&w->e, lp, at, ref_cb, w, (uint64_t)tag), 0);
	}
	assert_true(w->n < REF_MAX);
	w->at[w->n] = at, w->key[w->n] = key, w->tag[w->n++] = tag;
}

/* A deadline from now: same ns, a few ns, around the wheel's span, far past it, or (live) past. */
static uint64_t ref_deadline(struct ref_world *w, uint64_t now)
{
	uint64_t r = ref_rand(w);

	switch (r % 8) {
	case 0: return now;
	case 1: case 2: case 3: return now + 1 + (r >> 8) % 64;
	case 4: return now + DP_WHEEL_SLOTS / 2 + (r >> 8) % (DP_WHEEL_SLOTS / 2 + 16);
	case 5: return now + 5000 + (r >> 8) % 20000;
	case 6: return now + 1000000 + (r >> 8) % 1000;
	default: return w->live && now > 100 ? now - (r >> 8) % 100 : now + 3;
	}
}

static void ref_cb(void *obj, uint64_t arg, uint64_t now)
{
	struct ref_world *w = obj;
	int best = 0;

	(void)now;
	assert_true(w->n > 0);
	for (int i = 1; i < w->n; i++)
		if (w->at[i] < w->at[best] || (w->at[i] == w->at[best] && w->key[i] < w->key[best]))
			best = i;
	assert_int_equal((uint64_t)w->tag[best], arg); /* the reference's earliest */
	assert_int_equal(w->key[best], w->e.cur_key);
	uint64_t at = w->at[best];
	w->tag[best] = w->tag[--w->n], w->at[best] = w->at[w->n], w->key[best] = w->key[w->n];
	for (int k = 1; k <= REF_SLOTS; k++)
		if (w->slot_tag[k] == (int)arg)
			w->slot_tag[k] = -1;
	w->ran++;
	if (w->added > 200000 || w->n > 2000) /* (a random walk: bounded) */
		return;
	for (uint64_t more = ref_rand(w) % 3; more > 0; more--) /* 1 on average: the world lives on */
		ref_add(w, ref_deadline(w, at), (uint32_t)(ref_rand(w) % REF_LPS), 0);
	if (ref_rand(w) % 4 == 0)
		ref_add(w, ref_deadline(w, at), (uint32_t)(ref_rand(w) % REF_LPS),
			(int)(1 + ref_rand(w) % REF_SLOTS));
}

static uint64_t ref_clock(void *ctx)
{
	return ((struct ref_world *)ctx)->clock;
}

static void ref_world_run(bool live)
{
	struct ref_world *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	w->live = live;
	w->rng = live ? 99 : 4242;
	w->clock = 1000000000; /* live: a monotonic clock far from 0 */
	assert_int_equal(dp_engine_init(&w->e, live ? DP_CLOCK_LIVE : DP_CLOCK_VIRTUAL, ref_clock, w), 0);
	dp_engine_set_lps(&w->e, w->lp_seq, REF_LPS);
	for (int k = 1; k <= REF_SLOTS; k++) {
		w->slot[k] = (uint32_t)dp_timer_slot_new(&w->e);
		w->slot_tag[k] = -1;
	}
	uint64_t t0 = live ? w->clock : 0;
	for (int i = 0; i < 300; i++)
		ref_add(w, t0 + ref_rand(w) % 20000, (uint32_t)(ref_rand(w) % REF_LPS), 0);
	if (live) {
		while (w->e.n > 0) { /* a loop that reads the clock, runs what is due, moves on */
			dp_engine_now(&w->e);
			dp_engine_run_budget(&w->e, w->clock, 1 + ref_rand(w) % 200);
			w->clock += ref_rand(w) % 3000;
		}
	} else {
		while (dp_engine_step_virtual(&w->e, UINT64_MAX))
			;
	}
	assert_int_equal(w->n, 0);
	assert_true(w->ran > 150000);
	assert_int_equal(w->e.n, 0);
	assert_int_equal(w->e.wheel_n + w->e.hn, 0);
	dp_engine_free(&w->e);
	free(w);
}

static void test_wheel_heap_order(void **state)
{
	(void)state;
	ref_world_run(false);
	ref_world_run(true);
}

/*
 * A nanosecond's timers added in no key order (more than one settle chunk),
 * some cancelled from the inbox and some from the sorted list, others added
 * while the bucket runs: they run in key order, the cancelled ones never.
 */
struct keyed_log {
	uint64_t key[512];
	int n;
	uint32_t pf_calls;
	struct dp_engine *e;
};

static void keyed_pf(const void *obj, uint64_t arg)
{
	struct keyed_log *l = (struct keyed_log *)(uintptr_t)obj;

	(void)arg;
	l->pf_calls++;
}

static void keyed_run(void *obj, uint64_t arg, uint64_t now)
{
	struct keyed_log *l = obj;

	(void)now;
	l->key[l->n++] = l->e->cur_key;
	if (arg == 1) /* one more at this nanosecond, keyed below every other: it still runs next */
		assert_int_equal(dp_timer_add_keyed(l->e, 1, 0, now, keyed_run, l, 0), 0);
}

static void test_bucket_order(void **state)
{
	(void)state;
	struct dp_engine e;
	static struct keyed_log l;
	enum { N_LP = 300 };
	static uint64_t lp_seq[N_LP * DP_LP_STRIDE];
	uint32_t perm[N_LP], slots[N_LP];
	uint64_t rng = 7;

	memset(&l, 0, sizeof(l));
	memset(lp_seq, 0, sizeof(lp_seq));
	l.e = &e;
	assert_int_equal(dp_engine_init(&e, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	dp_engine_set_lps(&e, lp_seq, N_LP);
	for (uint32_t i = 0; i < N_LP; i++)
		perm[i] = i;
	for (uint32_t i = N_LP - 1; i > 0; i--) { /* a shuffle (xorshift) */
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		uint32_t j = (uint32_t)(rng % (i + 1)), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	/* 150 keyed timers at ns 50 (keys 1..150 in shuffled order; the one keyed 75 adds another) */
	for (uint32_t i = 0, k = 0; k < 150; i++)
		if (perm[i] >= 1 && perm[i] <= 150) {
			assert_int_equal(dp_timer_add_keyed(&e, 1, perm[i], 50, keyed_run, &l,
							    perm[i] == 75), 0);
			k++;
		}
	/* 100 slot timers at ns 50 armed as LPs 151..250 in shuffled order; a third cancelled */
	for (uint32_t i = 0, k = 0; k < 100; i++)
		if (perm[i] > 150 && perm[i] <= 250) {
			slots[perm[i]] = (uint32_t)dp_timer_slot_new(&e);
			e.cur_lp = perm[i];
			assert_int_equal(dp_timer_slot_arm(&e, slots[perm[i]], perm[i], 50, keyed_run, &l, 0), 0);
			k++;
		}
	e.cur_lp = DP_LP_GLOBAL;
	int cancelled = 0;
	for (uint32_t lp = 151; lp <= 250; lp += 3, cancelled++)
		dp_timer_slot_cancel(&e, slots[lp]);
	/* peek sees the least key, in the inbox or the list, without sorting */
	uint64_t at, key;
	assert_true(dp_engine_peek(&e, &at, &key));
	assert_int_equal(at, 50);
	assert_int_equal(key, 1ull << DP_LP_SEQ_BITS);
	assert_int_equal(dp_engine_next_ns(&e), 50);
	/* ns 51, out of order too: sorted when the look-ahead reaches it from ns 50 */
	for (uint32_t i = 0, k = 0; k < 40; i++)
		if (perm[i] >= 1 && perm[i] <= 40) {
			assert_int_equal(dp_timer_add_keyed(&e, 1, 260 + perm[i], 51, keyed_run, &l, 0), 0);
			k++;
		}
	assert_int_equal(dp_engine_set_prefetch(&e, keyed_run, keyed_pf), 0);
	while (dp_engine_step_virtual(&e, UINT64_MAX))
		;
	assert_int_equal(l.n, 150 + 100 - cancelled + 1 + 40);
	assert_true(l.pf_calls > 0);
	for (int i = 150 + 100 - cancelled + 1 + 1; i < l.n; i++)
		assert_true(l.key[i - 1] < l.key[i]);
	l.n -= 40;
	assert_int_equal(l.key[0], 1ull << DP_LP_SEQ_BITS);
	for (int i = 1; i < l.n; i++) {
		if (l.key[i] == 0) { /* the one added by key 75's timer, keyed 0: it runs right after */
			assert_int_equal(l.key[i - 1], 75ull << DP_LP_SEQ_BITS);
			continue;
		}
		uint64_t prev = l.key[i - 1] ? l.key[i - 1] : l.key[i - 2];
		assert_true(prev < l.key[i]);
		uint32_t lp = (uint32_t)(l.key[i] >> DP_LP_SEQ_BITS);
		assert_true(lp > 250 || lp < 151 || (lp - 151) % 3 != 0);
	}
	assert_int_equal(e.n, 0);
	dp_engine_free(&e);
}

static void test_look_ahead_dummy(void *obj, uint64_t arg, uint64_t now)
{
	(void)obj;
	(void)arg;
	(void)now;
}

struct ahead {
	struct log run;              /* what ran, in order (record's) */
	uint64_t seen_before[4096];  /* [k]: the arg the prefetcher was last given before run k */
	uint64_t last_pf;            /* the arg of the latest prefetch call; 0: none */
	uint32_t calls;
};

static void ahead_pf(const void *obj, uint64_t arg)
{
	struct ahead *a = (struct ahead *)(uintptr_t)obj;

	a->last_pf = arg;
	a->calls++;
}

static void ahead_run(void *obj, uint64_t arg, uint64_t now)
{
	struct ahead *a = obj;

	a->seen_before[a->run.n] = a->last_pf;
	record(&a->run, arg, now);
}

static void other_run(void *obj, uint64_t arg, uint64_t now)
{
	ahead_run(obj, arg, now);
}

/*
 * The look-ahead (dp_engine_set_prefetch): before each timer runs, the
 * prefetcher of the next one in time order is called with its obj and arg:
 * the next of the same nanosecond (keys out of insertion order), the first
 * of a later bucket, one past the wheel's wrap. A timer of another callback
 * gets none. The order of the run is the order without prefetchers.
 */
static void test_look_ahead(void **state)
{
	(void)state;
	struct dp_engine e;
	static struct ahead a;
	uint64_t lp_seq[4 * DP_LP_STRIDE] = {0};

	memset(&a, 0, sizeof(a));
	assert_int_equal(dp_engine_init(&e, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	dp_engine_set_lps(&e, lp_seq, 4);
	assert_int_equal(dp_engine_set_prefetch(&e, ahead_run, ahead_pf), 0);
	assert_int_equal(dp_engine_set_prefetch(&e, ahead_run, ahead_pf), 0); /* (again: the same entry) */
	/* args are 100 + their place in time order; keys out of insertion order in ns 10 */
	assert_int_equal(dp_timer_add_keyed(&e, 1, 3, 10, ahead_run, &a, 103), 0);
	assert_int_equal(dp_timer_add_keyed(&e, 1, 1, 10, ahead_run, &a, 101), 0);
	assert_int_equal(dp_timer_add_keyed(&e, 1, 2, 10, ahead_run, &a, 102), 0);
	assert_int_equal(dp_timer_add_keyed(&e, 1, 1, 11, ahead_run, &a, 104), 0);
	assert_int_equal(dp_timer_add_keyed(&e, 1, 1, 700, other_run, &a, 105), 0);
	assert_int_equal(dp_timer_add_keyed(&e, 1, 1, 4000, ahead_run, &a, 106), 0);
	/* past the wheel's span from 10: in the heap, never looked ahead to */
	assert_int_equal(dp_timer_add_keyed(&e, 1, 1, 5000, ahead_run, &a, 107), 0);
	while (dp_engine_step_virtual(&e, UINT64_MAX))
		;
	assert_int_equal(a.run.n, 7);
	for (int k = 0; k < 7; k++)
		assert_int_equal(a.run.arg[k], 101 + k);
	/* just before run k the prefetch for run k + 1: never for the other
	 * callback's (105: the latest stays 104) nor the heap's (107) */
	assert_int_equal(a.seen_before[0], 102);
	assert_int_equal(a.seen_before[1], 103);
	assert_int_equal(a.seen_before[2], 104);
	assert_int_equal(a.seen_before[3], 104);
	assert_int_equal(a.seen_before[4], 106);
	assert_int_equal(a.seen_before[5], 106);
	assert_int_equal(a.seen_before[6], 106);
	assert_int_equal(a.calls, 4);
	dp_engine_free(&e);

	/* the wheel's wrap: a bucket below the start's is a turn later */
	memset(&a, 0, sizeof(a));
	assert_int_equal(dp_engine_init(&e, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	assert_int_equal(dp_engine_set_prefetch(&e, ahead_run, ahead_pf), 0);
	e.now_ns = DP_WHEEL_SLOTS - 2;
	assert_int_equal(dp_timer_add(&e, DP_WHEEL_SLOTS - 2, ahead_run, &a, 1), 0);
	assert_int_equal(dp_timer_add(&e, DP_WHEEL_SLOTS + 5, ahead_run, &a, 2), 0); /* bucket 5 */
	while (dp_engine_step_virtual(&e, UINT64_MAX))
		;
	assert_int_equal(a.run.n, 2);
	assert_int_equal(a.seen_before[0], 2);
	assert_int_equal(a.calls, 1);
	dp_engine_free(&e);

	/* a full table refuses a fifth callback */
	assert_int_equal(dp_engine_init(&e, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	dp_timer_fn fns[] = {ahead_run, other_run, record, chain};
	for (int k = 0; k < DP_PREFETCHERS; k++)
		assert_int_equal(dp_engine_set_prefetch(&e, fns[k], ahead_pf), 0);
	assert_int_equal(dp_engine_set_prefetch(&e, test_look_ahead_dummy, ahead_pf), -ENOSPC);
	dp_engine_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_virtual_steps),
		cmocka_unit_test(test_live_clock),
		cmocka_unit_test(test_live_monotone),
		cmocka_unit_test(test_timer_limit),
		cmocka_unit_test(test_budget_and_lag),
		cmocka_unit_test(test_lp_keys),
		cmocka_unit_test(test_lp_copy),
		cmocka_unit_test(test_step_below),
		cmocka_unit_test(test_slots),
		cmocka_unit_test(test_many_callbacks),
		cmocka_unit_test(test_wheel_heap_order),
		cmocka_unit_test(test_look_ahead),
		cmocka_unit_test(test_bucket_order),
	};
	return cmocka_run_group_tests_name("engine", tests, NULL, NULL);
}
