/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_part_window: the virtual clock's conservative windows (dp_part.h): the
 * barrier, what each partition publishes at a window's end, decide() (the next
 * step for every partition), a window's run, the global events between them.
 */
#define _GNU_SOURCE /* pthread_attr_setaffinity_np */
#include "dp_part_priv.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_ring.h>
#include <rte_pause.h>

#include "dp_chan.h"
#include "dp_gather.h"
#include "dp_mpi.h"
#include "rl_mem.h"
#include "topo_part.h"

/* ---- the threads' meeting point ---- */

/*
 * Sense-reversing barrier: the last to arrive flips the sense. Waiters spin
 * (windows are microseconds of work), then yield the core, which is what
 * keeps more workers than cores (oversubscribed) moving.
 */
static void barrier(struct dp_parts *ps, unsigned *sense)
{
	unsigned s = !*sense;

	*sense = s;
	if (atomic_fetch_add_explicit(&ps->bar_count, 1, memory_order_acq_rel) + 1 == ps->n) {
		atomic_store_explicit(&ps->bar_count, 0, memory_order_relaxed);
		atomic_store_explicit(&ps->bar_sense, s, memory_order_release);
		return;
	}
	for (unsigned spins = 0; atomic_load_explicit(&ps->bar_sense, memory_order_acquire) != s;)
		if (++spins < SPINS_BEFORE_YIELD)
			rte_pause();
		else
			sched_yield();
}

static void rank_failed(struct dp_parts *ps, const char *what, int rc)
{
	fprintf(stderr, "rocelab-dp: rank %u: %s: %s\n", part_self(ps), what, strerror(-rc));
	dp_mpi_abort(ps->mpi, 1); /* (the others would wait for this rank forever) */
	exit(1);
}

/*
 * Ranks, after window w: the frames this rank's partition put in the
 * outboxes of links into other ranks' are packed for them (sent at the
 * next meeting).
 */
static void pack_frames(struct dp_parts *ps, struct dp_part *p, uint64_t w)
{
	unsigned parity = (unsigned)(w & 1);

	ps->xparity = parity;
	for (uint32_t i = 0; i < p->n_out_cross; i++) { /* (in receiver order: sort_by_receiver) */
		struct dp_chan *c = &ps->f->chans[p->out_cross[i]];
		size_t before = ps->xsend.len;
		int rc = dp_gather_pack_outbox(c, parity, &ps->xsend);
		if (rc < 0)
			rank_failed(ps, "frames between ranks", rc);
		ps->xlen[part_of_node(ps, c->to)] += ps->xsend.len - before;
	}
}

/*
 * Ranks: the meeting is one Allgather of every rank's publication of this
 * round and how many frame bytes it has for each other rank; when any has
 * some, one Alltoallv moves them, into this rank's copy of the same
 * outboxes, for the next window's start.
 */
static void rank_meet(struct dp_parts *ps, struct dp_part *p, unsigned slot)
{
	size_t note = part_rank_note_size(ps), total = 0;
	uint8_t *buf = ps->xnote;
	struct rank_note *mine = (struct rank_note *)(buf + note * ps->n);

	mine->pub = p->pub[slot];
	for (uint32_t i = 0; i < ps->n; i++)
		mine->bytes_to[i] = ps->xlen[i];
	int rc = dp_mpi_allgather(ps->mpi, mine, buf, note);
	if (rc < 0)
		rank_failed(ps, "meeting", rc);
	size_t *roff = ps->xlen + ps->n, *rlen = ps->xlen + 2 * ps->n;
	for (uint32_t i = 0; i < ps->n; i++) {
		const struct rank_note *ni = (const struct rank_note *)(buf + note * i);
		ps->p[i].pub[slot] = ni->pub;
		for (uint32_t j = 0; j < ps->n; j++)
			total += ni->bytes_to[j];
		rlen[i] = ni->bytes_to[part_self(ps)];
	}
	if (total == 0) /* (every rank saw the same total: all call the Alltoallv, or none) */
		return;
	rc = dp_mpi_alltoallv(ps->mpi, ps->xsend.b, ps->xlen, &ps->xrecv, &ps->xrecv_cap, roff, rlen);
	for (uint32_t i = 0; rc >= 0 && i < ps->n; i++)
		if (rlen[i]) {
			int n = dp_gather_unpack_frames(ps->f, ps->xparity, ps->xrecv + roff[i], rlen[i],
							ps->f->mp);
			rc = n == -ENOBUFS ? 0 : n; /* (a dry pool is counted as drops, as anywhere) */
		}
	if (rc < 0)
		rank_failed(ps, "frames between ranks", rc);
	ps->xsend.len = 0;
	memset(ps->xlen, 0, ps->n * sizeof(*ps->xlen));
}

/* Every partition has published this round: threads meet at the barrier, ranks exchange. */
void part_meet(struct dp_parts *ps, struct dp_part *p, unsigned *sense, unsigned slot)
{
	if (ps->mpi)
		rank_meet(ps, p, slot);
	else
		barrier(ps, sense);
}

/* ---- one partition's side ---- */

/* Its traffic is done and its channels hold nothing: nothing queued or sending, nothing on a wire into it. */
static bool local_idle(struct dp_part *p)
{
	const struct dp_part_run *run = p->ps->run;
	struct dp_fabric *f = p->ps->f;

	if (run->traffic_left && run->traffic_left(run->ctx, p->idx))
		return false;
	for (uint32_t i = 0; i < p->n_tx; i++) {
		const struct dp_chan *c = &f->chans[p->tx[i]];
		if (c->tx_busy || dp_count_chan_queued(c))
			return false;
	}
	for (uint32_t i = 0; i < p->n_rx; i++)
		if (f->chans[p->rx[i]].wire.n)
			return false;
	return true;
}

/* After a step at now: note a change of idleness. Returns the idleness. */
static bool note_idle(struct dp_part *p, uint64_t now)
{
	bool idle = local_idle(p);

	if (idle && !p->idle)
		p->idle_at = now;
	p->idle = idle;
	return idle;
}

static void publish(struct dp_part *p, unsigned slot)
{
	struct dp_part_pub *pub = &p->pub[slot];

	if (!dp_engine_peek(&p->eng, &pub->next_at, &pub->next_key))
		pub->next_at = pub->next_key = UINT64_MAX;
	pub->sent_min = p->eng.xfer_min_ns;
	pub->idle = p->idle;
	pub->idle_at = p->idle_at;
	pub->failed = p->ps->run->failed && p->ps->run->failed(p->ps->run->ctx, p->idx);
	pub->serial_due = p->ps->run->serial_due && p->ps->run->serial_due(p->ps->run->ctx, p->idx);
	pub->now = p->eng.now_ns;
	if (p->idx == 0) { /* (a wall-clock reading, published: every thread agrees on it) */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
		uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		pub->want_poll = t - p->ps->last_poll_wall >= POLL_WALL_NS;
	}
}

/* Window number w: take what the last window sent here, then run the events below the end. */
static void run_window(struct dp_part *p, const struct step *st, uint64_t w)
{
	bool track = p->ps->stop_when_idle;

	p->eng.xfer_parity = (unsigned)(w & 1);
	p->eng.xfer_min_ns = UINT64_MAX;
	if (w > 0) {
		uint32_t at_end = 0;
		for (uint32_t i = 0; i < p->n_in_cross; i++) {
			struct dp_chan *c = &p->ps->f->chans[p->in_cross[i]];
			uint32_t n = dp_chan_take_cross(c, (unsigned)((w - 1) & 1),
							st->end_key ? UINT64_MAX : st->end_at, &at_end);
			p->crossed += n;
			if (n)
				p->idle = false;
		}
		p->at_end += at_end;
	}
	while (dp_engine_step_below(&p->eng, st->end_at, st->end_key))
		if (track && note_idle(p, p->eng.now_ns) && st->early_stop)
			break;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static bool key_below(uint64_t at, uint64_t key, uint64_t end_at, uint64_t end_key)
{
	return at < end_at || (at == end_at && key < end_key);
}

static void decide(struct dp_parts *ps, unsigned slot, uint64_t w, struct agree *ag, struct step *st)
{
	uint64_t min_at = UINT64_MAX, min_key = UINT64_MAX, sent_min = UINT64_MAX, idle_at = 0, now = 0;
	uint64_t g_at = UINT64_MAX, g_key = UINT64_MAX, until = ps->run->until_ns;
	bool all_idle = true, all_serial = ps->run->serial != NULL;

	for (uint32_t i = 0; i < ps->n; i++) {
		const struct dp_part_pub *pub = &ps->p[i].pub[slot];
		if (key_below(pub->next_at, pub->next_key, min_at, min_key)) {
			min_at = pub->next_at;
			min_key = pub->next_key;
		}
		sent_min = RTE_MIN(sent_min, pub->sent_min);
		all_idle &= pub->idle;
		all_serial &= pub->serial_due;
		idle_at = RTE_MAX(idle_at, pub->idle_at);
		now = RTE_MAX(now, pub->now);
	}
	bool has_g = dp_engine_peek(ps->f->eng, &g_at, &g_key);
	uint64_t first = RTE_MIN(RTE_MIN(min_at, sent_min), g_at);
	if (!ag->first_known) {
		ag->first_known = true;
		ag->first_ns = first;
	}
	memset(st, 0, sizeof(*st));
	for (uint32_t i = 0; i < ps->n && !ag->failure_seen; i++)
		if (ps->p[i].pub[slot].failed) {
			ag->failure_seen = true;
			st->kind = STEP_FAILURE;
			return;
		}
	if (all_serial) { /* (before anything runs on: what it adds is at or after the windows' end) */
		st->kind = STEP_SERIAL;
		st->poll_ns = RTE_MAX(now, ps->f->eng->now_ns);
		return;
	}
	if ((w - ag->last_poll_w >= POLL_WINDOWS || ps->p[0].pub[slot].want_poll) && ps->run->between) {
		ag->last_poll_w = w;
		st->kind = STEP_GLOBAL;
		st->poll_ns = RTE_MAX(now, ps->f->eng->now_ns);
		return;
	}
	if (first == UINT64_MAX || (until != UINT64_MAX && first > until)) {
		st->kind = STEP_STOP; /* nothing left, or nothing left by the bound */
		if (ps->mpi)
			ps->next_after = first;
		st->end_ns = until != UINT64_MAX ? until : RTE_MAX(now, ps->f->eng->now_ns);
		return;
	}
	if (ps->stop_when_idle && all_idle && sent_min == UINT64_MAX) {
		/* the single engine ends after the first instant all is idle: the
		 * last partition's idle instant (not before the run's first step);
		 * what the others still have up to it runs first */
		uint64_t end = RTE_MAX(idle_at, ag->first_ns);
		if (has_g && g_at <= end) {
			st->kind = STEP_GLOBAL;
			st->run_timer = true;
		} else if (min_at <= end) {
			st->kind = STEP_WINDOW;
			st->end_at = end + 1;
		} else {
			st->kind = STEP_STOP;
			st->end_ns = end;
			if (ps->mpi)
				ps->next_after = first;
		}
		return;
	}
	if (has_g && key_below(g_at, g_key, min_at, min_key) && g_at <= sent_min) {
		st->kind = STEP_GLOBAL; /* (an arrival at g_at is keyed after every global event) */
		st->run_timer = true;
		return;
	}
	st->kind = STEP_WINDOW;
	st->early_stop = ps->stop_when_idle;
	st->end_at = add_sat(RTE_MIN(min_at, sent_min), ps->lookahead);
	if (has_g && key_below(g_at, g_key, st->end_at, st->end_key)) {
		st->end_at = g_at;
		st->end_key = g_key;
	}
	if (until != UINT64_MAX && !key_below(st->end_at, st->end_key, until + 1, 0)) {
		st->end_at = until + 1;
		st->end_key = 0;
	}
}

/*
 * Thread 0, every partition stopped: the earliest global event, or telemetry
 * and progress. Ranks: every rank runs the global event on its copy of the
 * fabric; rank 0 alone polls, and tells the others whether to stop.
 */
static void run_global(struct dp_parts *ps, const struct step *st)
{
	struct dp_engine *g = ps->f->eng;
	uint64_t at, key;

	if (st->run_timer && dp_engine_peek(g, &at, &key)) {
		dp_engine_step_below(g, at, key + 1);
		return;
	}
	if (ps->mpi && ps->run->collect)
		ps->run->collect(ps->run->ctx, st->poll_ns);
	if (ps->mpi && part_self(ps) != 0)
		goto tell;
	uint64_t events = g->fired, now = g->now_ns;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	ps->last_poll_wall = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	for (uint32_t i = 0; i < ps->n; i++) {
		events += ps->p[i].eng.fired;
		now = RTE_MAX(now, ps->p[i].eng.now_ns);
	}
	if (!ps->run->between(ps->run->ctx, now, events))
		ps->stop_flag = true;
tell:
	if (ps->mpi && dp_mpi_bcast(ps->mpi, &ps->stop_flag, sizeof(ps->stop_flag), 0) < 0)
		ps->stop_flag = true;
}

double part_thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void part_run_partition(struct dp_part *p)
{
	struct dp_parts *ps = p->ps;
	struct agree ag = {0};
	unsigned sense = 0;
	uint64_t round = 0, w = 0;
	struct step st;

	bool lead = p->idx == part_self(ps); /* the thread that writes the run's totals */

	p->failure_seen = false;
	p->idle = ps->stop_when_idle && local_idle(p);
	p->idle_at = 0;
	publish(p, 0);
	for (;;) {
		part_meet(ps, p, &sense, (unsigned)(round & 1));
		decide(ps, (unsigned)(round & 1), w, &ag, &st);
		if (st.kind == STEP_STOP) {
			if (lead)
				ps->end_ns = st.end_ns;
			return;
		}
		if (st.kind == STEP_GLOBAL) {
			if (ps->mpi == NULL)
				barrier(ps, &sense); /* everyone has read the fabric engine in decide() */
			if (p->idx == 0 || ps->mpi)
				run_global(ps, &st);
			if (ps->mpi == NULL)
				barrier(ps, &sense);
			if (ps->stop_flag) {
				if (lead)
					ps->end_ns = RTE_MAX(ps->f->eng->now_ns, p->eng.now_ns);
				return;
			}
			if (ps->stop_when_idle && st.run_timer)
				note_idle(p, ps->f->eng->now_ns); /* a topology change may have emptied queues */
		} else if (st.kind == STEP_SERIAL) {
			if (ps->mpi == NULL)
				barrier(ps, &sense); /* everyone has read the fabric engine in decide() */
			if (p->idx == 0 || ps->mpi)
				ps->run->serial(ps->run->ctx, st.poll_ns);
			if (ps->mpi == NULL)
				barrier(ps, &sense);
		} else if (st.kind == STEP_FAILURE) {
			/* (its traffic may be waiting on the failed one: idle from now on,
			 * at the same round on every partition) */
			p->failure_seen = true;
			if (ps->stop_when_idle)
				note_idle(p, p->eng.now_ns);
		} else {
			uint64_t tsc = rte_rdtsc();
			run_window(p, &st, w);
			p->busy_tsc += rte_rdtsc() - tsc;
			if (ps->mpi)
				pack_frames(ps, p, w);
			w++;
			if (lead)
				ps->windows = w;
		}
		round++;
		publish(p, (unsigned)(round & 1));
	}
}
