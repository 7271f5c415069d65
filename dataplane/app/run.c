/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * run.c: the run loops: virtual and live, one engine or partitions on threads
 * and MPI ranks, with their callbacks, gathers, progress lines and CSV.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include "app.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "rl_mem.h"
#include "topo_part.h"
#include "topo_traffic.h"

/* b - a in seconds */
static double ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

uint64_t tsc_ns(void *ctx)
{
	static __thread uint64_t hz;

	(void)ctx;
	if (hz == 0)
		hz = rte_get_tsc_hz();
	uint64_t c = rte_rdtsc();
	return (uint64_t)((__uint128_t)c * 1000000000u / hz);
}

/*
 * What reaches a host: an emulated NIC takes it, a DPDK port sends it, and
 * otherwise (virtual clock) it was counted by the fabric and is dropped here.
 */
void host_rx(void *ctx, struct dp_host *h, struct rte_mbuf *m, uint64_t now_ns)
{
	struct run *r = ctx;

	if (dp_nics_owns(&r->nics, h->idx))
		dp_nics_rx(&r->nics, h, m, now_ns);
	else if (r->o->clock == DP_CLOCK_LIVE)
		dp_port_host_rx(&r->ports, h, m, now_ns);
	else
		rte_pktmbuf_free(m);
}

void on_csv(void *obj, uint64_t arg, uint64_t now)
{
	struct run *r = obj;

	(void)arg;
	if (r->mpi.size > 1) { /* a global event: every rank is here; rank 0 writes the sum */
		size_t n = (size_t)r->fab->n_chans * DP_CSV_FIELDS;
		dp_csv_take(r->fab, now, r->csv.v);
		if (dp_mpi_reduce_u64(&r->mpi, r->csv.v, n, false) < 0) {
			fprintf(stderr, "rocelab-dp: rank %d: --csv: gathering a sample failed\n", r->mpi.rank);
			dp_mpi_abort(&r->mpi, 1);
		}
		if (r->mpi.rank == 0)
			dp_csv_write(&r->csv, r->fab, r->csv.v, now);
	} else {
		dp_csv_sample(&r->csv, r->fab, now);
	}
	dp_timer_add(&r->eng, now + r->o->csv_interval_ns, on_csv, r, 0);
}

static bool gens_active(const struct run *r)
{
	for (unsigned i = 0; i < r->o->gen.n; i++)
		if (!dp_gen_done(&r->gens[i]))
			return true;
	return false;
}

/* dp_part: partition part's generators, and the NICs if it holds them, have work left. */
static bool part_traffic_left(void *ctx, uint32_t part)
{
	struct run *r = ctx;

	for (unsigned i = 0; i < r->o->gen.n; i++)
		if (dp_parts_of_host(r->parts, r->gens[i].src) == part && !dp_gen_done(&r->gens[i]))
			return true;
	if (r->nics.n_lanes > 1) /* (a lane that waits on a failed one waits for nothing) */
		return dp_nics_lane_active(&r->nics, part) && !dp_parts_failure_seen(r->parts, part);
	return r->nics.n && dp_parts_of_host(r->parts, r->nics.h[0].host) == part &&
	       dp_nics_active(&r->nics);
}

/* dp_part: partition part's lane ended a size of a sweep (dp_nics_serial_due). */
static bool part_serial_due(void *ctx, uint32_t part)
{
	const struct run *r = ctx;

	return r->nics.n_lanes > 1 && dp_nics_serial_due(&r->nics, part);
}

/*
 * dp_part, every partition stopped, every lane done with a size of a sweep:
 * under MPI every rank gets every rank's lane record first (each has only
 * its own); then the next size (dp_nics_sizes_next).
 */
static void part_serial(void *ctx, uint64_t now)
{
	struct run *r = ctx;
	size_t len = dp_nics_lane_rec_len(&r->nics);

	if (r->mpi.size > 1) {
		uint8_t *mine = malloc(len + 1), *all = malloc(len * (size_t)r->mpi.size + 1);
		int rc = mine && all ? 0 : -ENOMEM;
		if (rc == 0) {
			dp_nics_lane_save(&r->nics, (uint32_t)r->mpi.rank, mine);
			rc = dp_mpi_allgather(&r->mpi, mine, all, len);
		}
		for (int k = 0; rc == 0 && k < r->mpi.size; k++)
			if (k != r->mpi.rank)
				rc = dp_nics_lane_load(&r->nics, (uint32_t)k, all + len * (size_t)k, len);
		free(mine);
		free(all);
		if (rc < 0) {
			fprintf(stderr, "rocelab-dp: rank %d: lanes of a sweep: %s\n", r->mpi.rank, strerror(-rc));
			dp_mpi_abort(&r->mpi, 1);
		}
	}
	dp_nics_sizes_next(&r->nics, now); /* (-ENOMEM: the collective failed and says so) */
}

/* dp_part: partition part's lane of a collective failed (the others stop waiting for it). */
static bool part_failed(void *ctx, uint32_t part)
{
	const struct run *r = ctx;

	return r->nics.n_lanes > 1 && dp_nics_lane_failed(&r->nics, part);
}

/* Monotonic seconds, coarse (a few ms): read on every virtual step, as cheap as time(). */
static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Virtual clock: a progress line on stderr once a second of wall time, from
 * the first second on (a short run prints none: a line at a wall-clock second's
 * turn landed in tests' combined output). stdout is flushed first so that a
 * log of both keeps the tables' lines whole; "\r" on a terminal, else lines.
 */
static void progress(struct run *r, uint64_t now_ns, uint64_t events)
{
	double t = mono_s();

	if (r->o->quiet || t - r->progress_at < 1.0)
		return;
	r->progress_at = t;
	fflush(stdout);
	fprintf(stderr, "rocelab-dp: virtual time %.6f s, %" PRIu64 " events%s", (double)now_ns / 1e9,
		events, isatty(STDERR_FILENO) ? "\r" : "\n");
}

/* dp_part, between windows (every partition stopped): telemetry, progress, signals. */
static bool part_between(void *ctx, uint64_t now, uint64_t events)
{
	struct run *r = ctx;
	if (r->ctl && r->mpi.size <= 1) { /* (ranks: every rank applies them, part_collect) */
		dp_ctl_note(r->ctl, now, events);
		dp_ctl_poll(r->ctl, now);
	}
	for (unsigned i = 0; i < r->o->n_capture; i++)
		dp_capture_flush(r->cap[i]);
	if (!r->quiet_progress)
		progress(r, now, events);
	return !stop_requested;
}

/*
 * MPI ranks, every rank at once: the records the ranks' captures hold go to
 * rank 0, which writes them merged. Returns 0 or -errno.
 */
static int gather_captures(struct run *r)
{
	struct dp_bytes x = {0};
	size_t *off = calloc((size_t)r->mpi.size * 2, sizeof(*off));
	int rc = off ? 0 : -ENOMEM;

	for (unsigned i = 0; rc == 0 && i < r->o->n_capture; i++) {
		uint8_t *all = NULL;
		x.len = 0;
		if (r->mpi.rank != 0) /* (rank 0's own stay where they are) */
			rc = dp_capture_export(r->cap[i], &x);
		if (rc == 0)
			rc = dp_mpi_gather_bytes(&r->mpi, x.b, x.len, &all, off, off + r->mpi.size);
		for (int k = 1; rc == 0 && r->mpi.rank == 0 && k < r->mpi.size; k++)
			rc = dp_capture_import(r->cap[i], all + off[k], off[r->mpi.size + k]);
		free(all);
	}
	free(off);
	dp_bytes_free(&x);
	return rc;
}

#define CTL_SETS_MAX 64u /* telemetry link / switch changes applied per poll point at most */

/*
 * MPI ranks, every rank at a poll point: rank 0 says what its telemetry
 * holds (changes to apply, read commands waiting); every rank applies the
 * changes at now; when a command waits, the ranks' views are summed into
 * rank 0 (with the events each rank's engines ran), which answers it.
 * Returns 0 or -errno.
 */
static int ranks_telemetry(struct run *r, uint64_t now)
{
	struct {
		uint32_t n_set, n_ask;
		struct dp_ctl_set set[CTL_SETS_MAX];
	} m = {0};

	if (r->mpi.rank == 0 && r->ctl) {
		m.n_set = dp_ctl_take(r->ctl, m.set, CTL_SETS_MAX);
		m.n_ask = dp_ctl_waiting(r->ctl);
	}
	int rc = dp_mpi_bcast(&r->mpi, &m, sizeof(m), 0);
	if (rc < 0)
		return rc;
	dp_ctl_apply(r->fab, m.set, m.n_set, now);
	if (m.n_ask == 0)
		return 0;
	size_t n = dp_ctl_view_len(r->fab, &r->nics);
	uint64_t *v = malloc((n + 1) * sizeof(*v)), events;
	double cpu;
	if (v == NULL)
		return -ENOMEM;
	dp_ctl_view_pack(r->fab, &r->nics, now, v);
	dp_parts_load(r->parts, (uint32_t)r->mpi.rank, &cpu, &events);
	v[n] = events + (r->mpi.rank == 0 ? r->eng.fired : 0); /* (global events: rank 0 counts them) */
	rc = dp_mpi_reduce_u64(&r->mpi, v, n + 1, false);
	if (rc == 0 && r->mpi.rank == 0)
		dp_ctl_serve(r->ctl, v, now, v[n]);
	free(v);
	return rc;
}

/*
 * dp_part, every rank at a poll point: held captures to rank 0 (part_between
 * writes them), telemetry.
 */
void part_collect(void *ctx, uint64_t now)
{
	struct run *r = ctx;

	if (gather_captures(r) < 0) {
		fprintf(stderr, "rocelab-dp: rank %d: --capture: gathering records failed\n", r->mpi.rank);
		dp_mpi_abort(&r->mpi, 1);
	}
	if (ranks_telemetry(r, now) < 0) {
		fprintf(stderr, "rocelab-dp: rank %d: telemetry: exchange between ranks failed\n", r->mpi.rank);
		dp_mpi_abort(&r->mpi, 1);
	}
}

/*
 * MPI ranks with the emulated NICs in lanes (each rank runs its partition's):
 * rank 0 gets every NIC's counters (summed: a NIC counts only where it ran)
 * and every rank's lane of the collective, which it then ends
 * (dp_nics_lanes_finish). Every rank calls it. Returns 0 or -errno.
 */
int gather_lanes(struct run *r)
{
	size_t n = dp_nics_counters_len(&r->nics), len = dp_nics_lane_rec_len(&r->nics);
	uint64_t *v = calloc(n + 1, sizeof(*v));
	uint8_t *mine = malloc(len + 1), *all = NULL;
	size_t *off = calloc((size_t)r->mpi.size * 2, sizeof(*off));
	int rc = v && mine && off ? 0 : -ENOMEM;

	if (rc == 0 && r->mpi.rank != 0) /* (rank 0's own stay where they are) */
		dp_nics_counters_pack(&r->nics, v);
	if (rc == 0)
		rc = dp_mpi_reduce_u64(&r->mpi, v, n, false);
	if (rc == 0 && r->mpi.rank == 0)
		dp_nics_counters_add(&r->nics, v);
	if (rc == 0) {
		dp_nics_lane_save(&r->nics, (uint32_t)r->mpi.rank, mine);
		rc = dp_mpi_gather_bytes(&r->mpi, mine, len, &all, off, off + r->mpi.size);
	}
	for (int k = 1; rc == 0 && r->mpi.rank == 0 && k < r->mpi.size; k++)
		rc = dp_nics_lane_load(&r->nics, (uint32_t)k, all + off[k], off[r->mpi.size + k]);
	free(all);
	free(off);
	free(mine);
	free(v);
	return rc;
}

/*
 * MPI ranks: rank 0 gets the whole run's counters, the fabric's (dp_parts_gather)
 * and the generators'. Every rank calls it. Returns 0 or -errno.
 */
static int gather_ranks(struct run *r)
{
	unsigned n = r->o->gen.n;
	uint64_t *sum = calloc((size_t)n * 4 + 1, sizeof(*sum)), *max = sum + 3 * n;

	if (r->mpi.size <= 1 || sum == NULL) {
		free(sum);
		return r->mpi.size <= 1 ? 0 : -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++) {
		sum[3 * i] = r->gens[i].sent;
		sum[3 * i + 1] = r->gens[i].blocked;
		sum[3 * i + 2] = r->gens[i].no_mbuf;
		max[i] = r->gens[i].done_ns;
	}
	int rc = gather_captures(r);
	if (rc == 0)
		rc = dp_parts_gather(r->parts, r->eng.now_ns, sum, 3 * (size_t)n, max, n);
	if (rc == 0 && r->nics.n_lanes > 1)
		rc = gather_lanes(r);
	for (unsigned i = 0; rc == 0 && r->mpi.rank == 0 && i < n; i++) {
		r->gens[i].sent = sum[3 * i];
		r->gens[i].blocked = sum[3 * i + 1];
		r->gens[i].no_mbuf = sum[3 * i + 2];
		r->gens[i].done_ns = max[i];
	}
	free(sum);
	return rc;
}

/*
 * MPI ranks: rank 0 prints each rank's peak resident memory so far and its
 * packet pool (stderr: stdout stays one process's). Every rank calls it.
 * Returns 0 or -errno.
 */
static int print_rank_memory(struct run *r)
{
	uint64_t mine[2] = {dp_parts_peak_rss_kib(), r->mp->size};
	uint64_t *all = calloc(2 * (size_t)r->mpi.size, sizeof(*all));
	int rc = all ? dp_mpi_allgather(&r->mpi, mine, all, sizeof(mine)) : -ENOMEM;

	for (int k = 0; rc == 0 && r->mpi.rank == 0 && !r->o->quiet && k < r->mpi.size; k++)
		fprintf(stderr, "rocelab-dp: rank %d: peak memory %.1f MiB (resident), a packet pool of %"
			PRIu64 " frames\n", k, (double)all[2 * k] / 1024, all[2 * k + 1]);
	free(all);
	return rc;
}

/* The virtual clock on --workers threads: the same run as run_virtual's, in windows. */
static void run_virtual_parts(struct run *r)
{
	struct dp_part_run pr = {.until_ns = r->o->duration_ns ? r->o->duration_ns : UINT64_MAX,
				 .traffic_left = part_traffic_left, .failed = part_failed,
				 .between = part_between,
				 .collect = r->mpi.size > 1 ? part_collect : NULL,
				 .serial_due = part_serial_due, .serial = part_serial, .ctx = r};

	r->progress_at = mono_s();
	if (dp_parts_run(r->parts, &pr) < 0) {
		r->run_rc = 1;
		return;
	}
	if (gather_ranks(r) < 0 || (r->mpi.size > 1 && print_rank_memory(r) < 0)) {
		fprintf(stderr, "rocelab-dp: rank %d: gathering the counters failed\n", r->mpi.rank);
		dp_mpi_abort(&r->mpi, 1);
		r->run_rc = 1;
		return;
	}
	r->gathered = true;
	if (r->mpi.rank != 0)
		return; /* (rank 0 reports the run) */
	if (r->nics.n_lanes > 1)
		dp_nics_lanes_finish(&r->nics); /* (lanes of other ranks; one that waited on a failed one) */
	dp_nics_colls_release(&r->nics); /* (a collective stopped between its passes: its lines) */
	/* (no more poll points: what waits, and what comes, is answered from the whole run) */
	if (r->mpi.size > 1)
		dp_ctl_gathered(r->ctl, r->eng.now_ns, r->eng.fired);
	if (!r->o->quiet)
		fprintf(stderr, "rocelab-dp: %u partitions, lookahead %" PRIu64 " ns, %" PRIu64
			" windows, %" PRIu64 " frames crossed partitions (%" PRIu64 " at a window's end)\n",
			dp_parts_count(r->parts), dp_parts_lookahead_ns(r->parts), dp_parts_windows(r->parts),
			dp_parts_crossed(r->parts), dp_parts_crossed_at_end(r->parts));
	if (!r->o->quiet && r->nics.n && r->nics.n_lanes > 1)
		fprintf(stderr, "rocelab-dp: emulated NICs run with their leaves: the collective in %u lanes\n",
			r->nics.n_lanes);
	else if (!r->o->quiet && r->nics.n)
		fprintf(stderr, "rocelab-dp: emulated NICs all in partition 0 (%s)\n",
			r->lanes_why);
	for (uint32_t i = 0; i < dp_parts_count(r->parts) && !r->o->quiet; i++) {
		double cpu;
		uint64_t ev;
		dp_parts_load(r->parts, i, &cpu, &ev);
		fprintf(stderr, "rocelab-dp: partition %u: %" PRIu64 " events, %.3f s CPU, busy %.0f%% of "
			"the loop (running windows, not waiting at barriers)\n", i, ev, cpu,
			100 * dp_parts_busy(r->parts, i));
	}
	if (!stop_requested && dp_parts_next_ns(r->parts) == UINT64_MAX && dp_nics_active(&r->nics))
		printf("# stalled at %.6f s: RDMA work is unfinished and no NIC has anything scheduled\n",
		       (double)r->eng.now_ns / 1e9);
}

static void run_virtual(struct run *r)
{
	if (dp_parts_count(r->parts) > 1) {
		run_virtual_parts(r);
		return;
	}
	/* returns when the duration is reached, traffic is done, or nothing is scheduled */
	uint64_t until = r->o->duration_ns ? r->o->duration_ns : UINT64_MAX;
	r->progress_at = mono_s();
	while (!stop_requested && dp_engine_step_virtual(&r->eng, until)) {
		if (r->ctl)
			dp_ctl_poll(r->ctl, r->eng.now_ns); /* telemetry link_set/switch_set */
		/* without --duration, stop when traffic is done and the fabric drained */
		if (!r->o->duration_ns && !gens_active(r) && !dp_nics_active(&r->nics) &&
		    !dp_job_active(r->job) && !dp_mix_active(r->mix)) {
			bool busy = false;
			for (uint32_t i = 0; i < r->fab->n_chans && !busy; i++)
				busy = r->fab->chans[i].tx_busy || r->fab->chans[i].wire.n ||
				       dp_count_chan_queued(&r->fab->chans[i]);
			if (!busy)
				break;
		}
		progress(r, r->eng.now_ns, r->eng.fired);
	}
	dp_nics_colls_release(&r->nics); /* (a collective stopped between its passes: its lines) */
	if (!stop_requested && dp_engine_next_ns(&r->eng) == UINT64_MAX && dp_nics_active(&r->nics))
		printf("# stalled at %.6f s: RDMA work is unfinished and no NIC has anything scheduled\n",
		       (double)r->eng.now_ns / 1e9);
}

/* Live: nap until the next timer when a turn found nothing to do (unless --busy-poll). */
static void live_idle(struct run *r, uint64_t now)
{
	uint64_t next = dp_engine_next_ns(&r->eng);
	uint64_t nap = next > now ? next - now : 0;

	if (nap > r->o->idle_nap_ns)
		nap = r->o->idle_nap_ns;
	if (nap > 2000) {
		struct timespec ts = {0, (long)nap};
		nanosleep(&ts, NULL);
	}
}

/*
 * The live loop. Each turn: at most LIVE_TURN_BUDGET timers of what fell due,
 * in time order; then what the ports received and telemetry commands, at
 * this reading or, when behind, at the oldest timer left (time never runs
 * backwards). Returns 0, or 1 when
 * --lag-policy stop ended the run.
 */
/* dp_part, live: partition part's ports (those of its hosts) receive at now. */
static uint32_t part_poll(void *ctx, uint32_t part, uint64_t now)
{
	struct run *r = ctx;

	return dp_port_poll_part(&r->ports, r->fab, part, now) +
	       dp_peers_poll(&r->o->peers, now); /* (--process: the one partition run here) */
}

static void part_flush(void *ctx, uint32_t part)
{
	struct run *r = ctx;

	dp_port_flush_part(&r->ports, part);
	dp_peers_flush(&r->o->peers);
}

/* dp_part, live: what part_between() would change with partitions running. */
static bool part_needs_world(void *ctx)
{
	struct run *r = ctx;

	return dp_ctl_pending(r->ctl) || r->o->n_capture;
}

static bool part_tick(void *ctx, uint64_t now, uint64_t events)
{
	struct run *r = ctx;

	if (r->ctl)
		dp_ctl_note(r->ctl, now, events);
	return !stop_requested;
}

static uint32_t host_part(const void *parts, uint32_t host)
{
	return dp_parts_of_host(parts, host);
}

/* The live clock on --workers threads: each polls its hosts' ports (dp_parts_run_live). */
static int run_live_parts(struct run *r)
{
	struct dp_part_live pl = {
		.end_ns = r->o->duration_ns ? r->start_ns + r->o->duration_ns : UINT64_MAX,
		.budget = LIVE_TURN_BUDGET, .nap_ns = r->o->busy_poll ? 0 : r->o->idle_nap_ns,
		.poll = part_poll, .flush = part_flush, .between = part_between,
		.between_ns = LIVE_BETWEEN_NS, .needs_world = part_needs_world, .tick = part_tick, .ctx = r};

	r->quiet_progress = true; /* (live: no virtual-time progress line) */
	int prc = dp_port_by_part(&r->ports, dp_parts_count(r->parts), host_part, r->parts);
	if (prc < 0) {
		fprintf(stderr, "rocelab-dp: grouping the ports by partition: %s\n", strerror(-prc));
		return 1;
	}
	if (dp_parts_run_live(r->parts, &pl) < 0)
		return 1;
	if (!r->o->quiet && dp_peers_on(&r->o->peers))
		fprintf(stderr, "rocelab-dp: process %u of %u (live); what crossed to the others is in the "
			"peer table\n", r->o->peers.self, r->o->peers.n);
	else if (!r->o->quiet)
		fprintf(stderr, "rocelab-dp: %u partitions (live), %" PRIu64 " frames crossed partitions, "
			"%" PRIu64 " world stops\n", dp_parts_count(r->parts), dp_parts_crossed(r->parts),
			dp_parts_stops(r->parts));
	for (uint32_t i = 0; i < dp_parts_count(r->parts) && !r->o->quiet && !dp_peers_on(&r->o->peers); i++) {
		double cpu;
		uint64_t ev, turns, idle, full;
		double busy;
		dp_parts_load(r->parts, i, &cpu, &ev);
		dp_parts_live_load(r->parts, i, &turns, &idle, &busy, &full);
		fprintf(stderr, "rocelab-dp: partition %u: %" PRIu64 " events, %.3f s CPU, %" PRIu64
			" turns (%" PRIu64 " idle), busy %.0f%% of the time, %" PRIu64 " waits on a full ring\n",
			i, ev, cpu, turns, idle, 100 * busy, full);
	}
	return 0;
}

static int run_live(struct run *r)
{
	uint64_t end = r->o->duration_ns ? r->start_ns + r->o->duration_ns : UINT64_MAX;

	prctl(PR_SET_TIMERSLACK, 1000UL); /* naps of microseconds, not the default 50 us */
	if (dp_parts_count(r->parts) > 1)
		return run_live_parts(r);
	while (!stop_requested) {
		uint64_t now = dp_engine_now(&r->eng);
		if (now >= end)
			break;
		uint32_t work = dp_engine_run_budget(&r->eng, now, LIVE_TURN_BUDGET);
		/* behind (due timers left): the fabric's present is its oldest due timer,
		 * not the clock; what the ports bring enters there, or the time order
		 * breaks (a late PFC pause would act after frames it should have held) */
		uint64_t lag = dp_engine_note_lag(&r->eng, now);
		uint64_t t = dp_engine_mono(&r->eng, now - lag);
		work += dp_port_poll(&r->ports, r->fab, t);
		dp_port_flush(&r->ports);
		if (r->ctl)
			work += dp_ctl_poll(r->ctl, t);
		if (r->o->lag_stop && lag > r->o->lag_limit_ns) {
			fprintf(stderr, "rocelab-dp: %.1f ms behind real time, over the limit of %.1f ms "
				"(--lag-policy stop): stopping\n", (double)lag / NS_PER_MS,
				(double)r->o->lag_limit_ns / NS_PER_MS);
			return 1;
		}
		if (!work && !r->o->busy_poll)
			live_idle(r, now);
	}
	return 0;
}

/* The run loop of the chosen clock, timed. */
void run(struct run *r)
{
	struct timespec w0, w1;
	char summary[256];

	topo_summary(r->topo, summary, sizeof(summary));
	if (!r->o->quiet)
		printf("rocelab-dp: %s; %s clock; %u host ports; packet pool %u frames of %u B; "
		       "telemetry /rocelab/*\n",
		       summary, r->o->clock == DP_CLOCK_LIVE ? "live" : "virtual", r->ports.n,
		       r->pool_frames, (unsigned)r->frame_room);
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &w0);
	if (r->o->clock == DP_CLOCK_VIRTUAL)
		run_virtual(r);
	else
		r->run_rc = run_live(r);
	if (r->mpi.rank == 0) /* (the virtual runs did already, before their last lines) */
		dp_nics_colls_release(&r->nics);
	clock_gettime(CLOCK_MONOTONIC, &w1);
	r->wall_s = ts_diff(&w0, &w1);
	r->after_signal_s = stop_requested ? ts_diff(&stop_signal_ts, &w1) : 0;
}
