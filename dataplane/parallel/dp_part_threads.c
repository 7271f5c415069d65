/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_part_threads: the partitions' threads (pinned where the cores allow) and
 * the live clock's loop across them: stopping the world for global events,
 * naps when idle, the per-partition sums after the run.
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

/* ---- the live clock ---- */

/* Partition 0: stop every other partition at the top of its loop. */
static void stop_world(struct dp_parts *ps)
{
	atomic_fetch_add_explicit(&ps->epoch, 1, memory_order_acq_rel);
	for (unsigned spins = 0;
	     atomic_load_explicit(&ps->paused, memory_order_acquire) +
		     atomic_load_explicit(&ps->exited, memory_order_acquire) < ps->n - 1;)
		if (++spins < SPINS_BEFORE_YIELD)
			rte_pause();
		else
			sched_yield();
}

static void resume_world(struct dp_parts *ps)
{
	atomic_store_explicit(&ps->paused, 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&ps->epoch, 1, memory_order_acq_rel);
}

/* The partition that runs the fabric engine's timers and between(): 0, or the only one run here. */
static bool live_leader(const struct dp_part *p)
{
	return p->idx == part_self(p->ps);
}

/* Other partitions run on threads of this process (they are stopped for global work). */
static bool live_threads(const struct dp_parts *ps)
{
	return ps->only == UINT32_MAX && ps->n > 1;
}

/* Events every engine has run (the others' read racily when they are not stopped: a display). */
static uint64_t live_events(const struct dp_parts *ps)
{
	uint64_t events = ps->f->eng->fired;

	for (uint32_t i = 0; i < ps->n; i++)
		events += ps->p[i].eng.fired;
	return events;
}

/* The leader, the world stopped: the fabric engine's due timers, then between(). */
static void live_global(struct dp_parts *ps, uint64_t now)
{
	dp_engine_run_due(ps->f->eng, now);
	if (!ps->live->between(ps->live->ctx, now, live_events(ps)))
		atomic_store(&ps->live_stop, true);
}

/* One turn's nap when it found nothing to do: until the next timer, at most nap_ns. */
static void live_nap(struct dp_part *p, uint64_t now)
{
	uint64_t next = dp_engine_next_ns(&p->eng), nap = next > now ? next - now : 0;

	if (nap > p->ps->live->nap_ns)
		nap = p->ps->live->nap_ns;
	if (nap > 2000) {
		struct timespec ts = {0, (long)nap};
		nanosleep(&ts, NULL);
	}
}

static void live_partition(struct dp_part *p)
{
	struct dp_parts *ps = p->ps;
	const struct dp_part_live *run = ps->live;
	struct dp_fabric *f = ps->f;
	unsigned seen = 0;
	uint64_t last_between = dp_engine_now(&p->eng);
	uint64_t tsc;

	for (;;) {
		unsigned ep = atomic_load_explicit(&ps->epoch, memory_order_acquire);
		if ((ep & 1) && ep != seen) { /* (only other partitions see an odd epoch here) */
			seen = ep;
			atomic_fetch_add_explicit(&ps->paused, 1, memory_order_acq_rel);
			for (unsigned spins = 0; atomic_load_explicit(&ps->epoch, memory_order_acquire) == ep;)
				if (++spins < SPINS_BEFORE_YIELD)
					rte_pause();
				else
					sched_yield();
			/* then at least one turn of its own before the next stop */
		}
		tsc = rte_rdtsc(); /* (a turn's busy time starts here: not the nap or the pause before it) */
		if (atomic_load_explicit(&ps->live_stop, memory_order_acquire))
			break;
		uint64_t now = dp_engine_now(&p->eng);
		if (now >= run->end_ns) {
			atomic_store(&ps->live_stop, true);
			break;
		}
		uint32_t work = 0;
		/* (one process of several: what crosses into it comes through run->poll, dp_peer.h) */
		for (uint32_t i = 0; live_threads(ps) && i < p->n_in_cross; i++) {
			uint32_t n = dp_chan_take_ring(&f->chans[p->in_cross[i]]);
			p->crossed += n;
			work += n;
		}
		for (uint32_t i = 0; live_threads(ps) && i < p->n_out_cross; i++)
			dp_chan_return_ring(&f->chans[p->out_cross[i]]);
		work += dp_engine_run_budget(&p->eng, now, run->budget);
		/* behind: what the ports bring enters at the oldest timer left (as one engine's loop) */
		uint64_t lag = dp_engine_note_lag(&p->eng, now);
		uint64_t t = dp_engine_mono(&p->eng, now - lag);
		work += run->poll(run->ctx, p->idx, t);
		for (uint32_t i = 0; i < p->n_out_cross; i++)
			dp_chan_flush_ring(&f->chans[p->out_cross[i]]);
		run->flush(run->ctx, p->idx);
		bool due = live_leader(p) && dp_engine_next_ns(f->eng) <= now;
		if (due || (live_leader(p) && now - last_between >= run->between_ns)) {
			if (due || run->needs_world == NULL || run->needs_world(run->ctx)) {
				if (live_threads(ps)) {
					stop_world(ps);
					ps->stops++;
				}
				live_global(ps, now);
				if (live_threads(ps))
					resume_world(ps);
			} else if (run->tick && !run->tick(run->ctx, now, live_events(ps))) {
				atomic_store(&ps->live_stop, true);
			}
			last_between = dp_engine_now(&p->eng); /* (the stop may have taken a while) */
			work++;
		}
		p->turns++;
		p->idle_turns += work == 0;
		p->busy_tsc += work ? rte_rdtsc() - tsc : 0;
		if (work == 0 && run->nap_ns)
			live_nap(p, now);
	}
	atomic_fetch_add_explicit(&ps->exited, 1, memory_order_acq_rel);
}

/* Partition p's loop, for either clock, with its CPU time and its loop's TSC cycles (balance). */
static void run_one(struct dp_part *p)
{
	double t0 = part_thread_cpu_s();
	uint64_t tsc0 = rte_rdtsc();

	p->busy_tsc = 0;
	if (p->ps->live)
		live_partition(p);
	else
		part_run_partition(p);
	p->loop_tsc = rte_rdtsc() - tsc0;
	p->cpu_s = part_thread_cpu_s() - t0;
}

static void *thread_main(void *arg)
{
	struct dp_part *p = arg;
	int go;

	while ((go = atomic_load_explicit(&p->ps->go, memory_order_acquire)) == 0)
		sched_yield();
	if (go <= 0)
		return NULL;
	/* an lcore id gives the thread its own mempool cache: without one every
	 * frame allocated or freed goes through the pool's shared stack (or ring) */
	bool registered = rte_thread_register() == 0;
	run_one(p);
	if (registered)
		rte_thread_unregister();
	return NULL;
}

/* Every online CPU. EAL pins the main thread to its one lcore (-l0), and
 * threads inherit that: a partition's thread may run anywhere instead. */
static void all_cpus(cpu_set_t *all)
{
	CPU_ZERO(all);
	for (long c = 0, n = sysconf(_SC_NPROCESSORS_ONLN); c < n && c < CPU_SETSIZE; c++)
		CPU_SET((int)c, all);
}

/*
 * Partition p on the calling (main) thread, free to run on every CPU: the
 * processes of one fabric each have EAL's main lcore 0, and pinned there
 * they would share one core (each waiting a time slice for the other's
 * frames); so would partition 0 of a live run with every other DPDK process
 * on the machine (all have lcore 0), while the other partitions' threads run
 * anywhere. The thread's own affinity is restored afterwards.
 */
static void run_unpinned(struct dp_part *p)
{
	cpu_set_t was, all;
	bool saved = pthread_getaffinity_np(pthread_self(), sizeof(was), &was) == 0;

	all_cpus(&all);
	pthread_setaffinity_np(pthread_self(), sizeof(all), &all); /* (if refused: pinned, slower) */
	run_one(p);
	if (saved)
		pthread_setaffinity_np(pthread_self(), sizeof(was), &was);
}

/*
 * Start partitions 1..n-1 on threads, run partition 0 here, join. The
 * threads meet at barriers that count on all of them: unless every thread
 * started, none runs. Returns 0 or -errno.
 */
static int run_threads(struct dp_parts *ps)
{
	uint32_t started = 1;
	int rc = 0;

	pthread_attr_t attr;
	cpu_set_t all;

	all_cpus(&all);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(all), &all);
	atomic_store(&ps->go, 0);
	for (; started < ps->n; started++) {
		rc = -pthread_create(&ps->p[started].th, &attr, thread_main, &ps->p[started]);
		if (rc < 0)
			break;
	}
	pthread_attr_destroy(&attr);
	atomic_store_explicit(&ps->go, rc < 0 ? -1 : 1, memory_order_release);
	if (rc == 0 && ps->live)
		run_unpinned(&ps->p[0]);
	else if (rc == 0)
		run_one(&ps->p[0]);
	for (uint32_t i = 1; i < started; i++)
		pthread_join(ps->p[i].th, NULL);
	if (rc < 0)
		fprintf(stderr, "rocelab-dp: cannot start worker thread %u: %s\n", started, strerror(-rc));
	return rc;
}

/* After a run: the partitions' events, failed timers and lag into the fabric engine. */
static void sum_into(struct dp_parts *ps, struct dp_engine *g)
{
	for (uint32_t i = 0; i < ps->n; i++) {
		struct dp_engine *e = &ps->p[i].eng;
		g->fired += e->fired;
		g->timer_fail += e->timer_fail;
		g->lag_max_ns = RTE_MAX(g->lag_max_ns, e->lag_max_ns);
		g->lag_ns = RTE_MAX(g->lag_ns, e->lag_ns);
	}
}

int dp_parts_run(struct dp_parts *ps, const struct dp_part_run *run)
{
	ps->run = run;
	ps->live = NULL;
	ps->stop_when_idle = run->until_ns == UINT64_MAX;
	ps->stop_flag = false;
	atomic_store(&ps->bar_count, 0);
	atomic_store(&ps->bar_sense, 0);
	if (ps->mpi) { /* one partition per rank, on this thread */
		run_one(&ps->p[part_self(ps)]);
		ps->f->eng->now_ns = ps->end_ns;
		sum_into(ps, ps->f->eng);
		return 0;
	}
	int rc = run_threads(ps);
	if (rc < 0)
		return rc;
	ps->f->eng->now_ns = ps->end_ns;
	sum_into(ps, ps->f->eng);
	return 0;
}

int dp_parts_run_live(struct dp_parts *ps, const struct dp_part_live *run)
{
	ps->live = run;
	atomic_store(&ps->epoch, 0);
	atomic_store(&ps->paused, 0);
	atomic_store(&ps->exited, 0);
	atomic_store(&ps->live_stop, false);
	ps->stops = 0;
	for (uint32_t i = 0; i < ps->n; i++)
		ps->p[i].turns = ps->p[i].idle_turns = 0;
	int rc = 0;
	if (ps->only != UINT32_MAX) /* one process of several: its one partition, here */
		run_unpinned(&ps->p[ps->only]);
	else
		rc = run_threads(ps);
	ps->live = NULL;
	if (rc < 0)
		return rc;
	sum_into(ps, ps->f->eng);
	return 0;
}
