/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_part: the fabric cut into partitions that run in parallel on the
 * virtual clock (rocelab-dp --workers N).
 *
 * Each partition has its own engine and owns its nodes: their timers run
 * there, their channels' transmitters run there, and the wires of the links
 * into them deliver there. A link whose ends are in two partitions is cut:
 * its sender puts frames in an outbox (dp_chan_take_cross); the receiving
 * partition moves them onto the wire between windows.
 *
 * Conservative windows: the lookahead L is the smallest delay of a cut
 * link. A frame that starts at t arrives at t + serialization + delay >= t +
 * L, so in a window [T, T + L) no partition can receive anything from
 * another that it has not been handed at the window's start. The threads
 * run a window each, meet at a barrier, and agree (each computing the same
 * function of what the others published) on the next window: from the
 * earliest pending event anywhere, so idle stretches cost nothing.
 *
 * Same output for any number of partitions: events at the same nanosecond
 * are ordered by their (LP, sequence) keys (dp_engine.h), which do not
 * depend on the cut; a cut link's arrival is keyed by its channel, not by
 * when it was handed over. Global events (topology changes, CSV samples,
 * telemetry) run on the fabric's engine between windows, with every
 * partition stopped, in their place in that order.
 *
 * Ending: with a bound, the run ends there. Without one, the single engine
 * ends after the first instant at which all traffic is done and the fabric
 * has drained (rocelab-dp's run_virtual); a partition therefore stops its
 * window early at the instant it becomes idle, and when every partition is
 * idle with nothing in flight, the instant the last became idle is the end,
 * after the others have run what they still had up to it.
 *
 * Live clock (dp_parts_run_live): no windows. A cut link hands frames over
 * through a ring; the receiving thread puts them on the wire with their
 * arrival time, late if it is behind, as any live work can be, as copies
 * from its own mbufs, the originals going back (dp_chan_take_ring).
 *
 * The cut (dp_parts_create): the topology file's, when its switches say
 * `partition: K` (every switch, K < workers, no partition empty); else with
 * emulated NICs that must run together, partition 0 holds all of them and
 * the collective or transfers that drive them, and the switches are spread
 * over the other partitions; otherwise the leaves are split into balanced
 * contiguous groups and the spines and aggregation switches are dealt round
 * robin. A host runs with its leaf, an emulated one in partition 0 unless
 * nics_with_leaf (a collective whose progress runs in lanes: dp_coll.h,
 * dp_nics_coll_splits).
 */
#ifndef DP_PART_H
#define DP_PART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp_engine.h"
#include "dp_types.h"

struct dp_parts;

/* What the run asks of the fabric's owner. */
struct dp_part_run {
	uint64_t until_ns;   /* run events at or before this time; UINT64_MAX: no bound */
	/* no bound: true while partition part's traffic sources (generators,
	 * emulated NICs) have work left */
	bool (*traffic_left)(void *ctx, uint32_t part);
	/* optional: true once partition part's traffic failed in a way that
	 * leaves the others' waiting for nothing (a lane of a collective);
	 * read whenever the partition publishes (after each step) and
	 * published with it, so that every partition learns it at the same
	 * round (dp_parts_failure_seen) */
	bool (*failed)(void *ctx, uint32_t part);
	/* between windows, every partition stopped, about every few thousand
	 * windows: telemetry, progress. Returns false to stop the run (a signal). */
	bool (*between)(void *ctx, uint64_t now_ns, uint64_t events);
	/* MPI ranks: every rank, at each of those points before between() runs on
	 * rank 0 (a collective point: what rank 0 must have, e.g. held captures,
	 * telemetry), at now_ns, the same on every rank */
	void (*collect)(void *ctx, uint64_t now_ns);
	/* optional: true when partition part waits for a moment with every
	 * partition stopped (its lane of a collective ended a size that has a
	 * next one); read when it publishes. Once every partition says so,
	 * serial() runs (thread 0, or every rank), every partition stopped,
	 * before any step but a failure's: it may add events to f's own engine at or
	 * after the windows' end, and must make serial_due false. */
	bool (*serial_due)(void *ctx, uint32_t part);
	void (*serial)(void *ctx, uint64_t now_ns);
	void *ctx;
};

/*
 * Cut f into workers partitions (each with an engine of its own) and move
 * every node onto its partition's engine; *out gets them. Call after
 * dp_fabric_create() and before anything but the fabric's own events is
 * scheduled. workers 1 keeps every node on f->eng. Returns 0, or with a
 * message in err: -EINVAL for workers 0 or more than the switches, or (virtual
 * clock) a cut link with no delay (no lookahead); -ENOMEM. Live clock
 * (mode, live_now as dp_engine_init's): a cut link gets a ring.
 */
int dp_parts_create(struct dp_parts **out, struct dp_fabric *f, uint32_t workers,
		    bool nics_with_leaf, enum dp_clock_mode mode, uint64_t (*live_now)(void *),
		    char *err, size_t errlen);

struct dp_mpi;

/*
 * Run the partitions as MPI ranks (mpirun): this process runs partition
 * mpi->rank alone; frames of cut links and the windows' publications go
 * between processes. Call after dp_parts_create() with as many partitions as
 * ranks. A no-op with one rank. Returns 0, or -EINVAL (partitions and ranks
 * differ, or the live clock) with a message, -ENOMEM.
 */
int dp_parts_use_mpi(struct dp_parts *ps, const struct dp_mpi *mpi, char *err, size_t errlen);

/*
 * After dp_parts_run() on MPI ranks, every rank calls this: rank 0's fabric
 * gets the whole run's counters (at now), events, failed timers and flows;
 * the caller's own counters are reduced too, extra_sum[] summed and
 * extra_max[] by maximum, into rank 0's arrays. A no-op in one process.
 * Returns 0 or -errno (then the caller aborts every rank).
 */
int dp_parts_gather(struct dp_parts *ps, uint64_t now, uint64_t *extra_sum, size_t n_extra_sum,
		    uint64_t *extra_max, size_t n_extra_max);

void dp_parts_destroy(struct dp_parts *ps);

/* Partitions; the partition of a host; of a node (switch or host). */
uint32_t dp_parts_count(const struct dp_parts *ps);
uint32_t dp_parts_of_host(const struct dp_parts *ps, uint32_t host);
uint32_t dp_parts_of_node(const struct dp_parts *ps, struct topo_node_ref n);

/* The lookahead: the smallest delay of a cut link; UINT64_MAX when nothing is cut. */
uint64_t dp_parts_lookahead_ns(const struct dp_parts *ps);

/*
 * Run the virtual clock on one thread per partition (the caller's thread is
 * partition 0's) until the bound, the end of the traffic, or between()
 * says stop. Afterwards f->eng holds the run's time (the last instant run,
 * or the bound) and the sums of the partitions' events and failed timers.
 * Returns 0, or -errno when a thread cannot be started.
 */
int dp_parts_run(struct dp_parts *ps, const struct dp_part_run *run);

/* What a live run asks of the fabric's owner. */
struct dp_part_live {
	uint64_t end_ns;          /* stop at this time of the clock; UINT64_MAX: when between() says */
	uint32_t budget;          /* timers a partition runs per turn at most (dp_engine_run_budget) */
	uint64_t nap_ns;          /* longest nap after a turn with nothing to do; 0: busy poll */
	/* partition part's ports: receive into the fabric at now (returns frames), send what waits */
	uint32_t (*poll)(void *ctx, uint32_t part, uint64_t now_ns);
	void (*flush)(void *ctx, uint32_t part);
	/* every between_ns, every partition stopped: telemetry commands, progress; false: stop */
	bool (*between)(void *ctx, uint64_t now_ns, uint64_t events);
	uint64_t between_ns;
	/* between_ns passed and no fabric timer is due: does between() have shared
	 * state to change (a queued command, held captures)? If not, tick() runs
	 * instead, with nobody stopped (signals, the time and events for telemetry,
	 * the others' read racily; false: stop; NULL: nothing). needs_world
	 * NULL: always between(). */
	bool (*needs_world)(void *ctx);
	bool (*tick)(void *ctx, uint64_t now_ns, uint64_t events);
	void *ctx;
};

/*
 * The live clock on one thread per partition (the caller's is partition
 * 0's). Each runs its own loop: frames from other partitions (rings), its
 * due timers, its ports. Partition 0 also runs the fabric engine's timers
 * (topology events, CSV) and between(), with every other partition stopped
 * at the top of its loop; only then (needs_world): stopping the others costs
 * the leader a wait for each to finish its turn, on a loaded machine for a
 * thread that has lost its core. Afterwards f->eng holds the sums of events and
 * failed timers and the largest lag. Returns 0 or -errno (a thread).
 */
int dp_parts_run_live(struct dp_parts *ps, const struct dp_part_live *run);

/*
 * Live clock, one process of several (rocelab-dp --process K/N, dp_peer.h):
 * dp_parts_run_live() runs partition self alone, on the caller's thread, as
 * the leader (the fabric engine's timers, between()); the nodes of the other
 * partitions stay in memory and never run. Frames on links cut from other
 * processes come in through run->poll (the peer ports), not rings; frames
 * into them still go into the cut channels' rings, which the peer ports
 * drain. Returns 0, or -EINVAL (virtual clock, fewer than 2 partitions,
 * self out of range).
 */
int dp_parts_set_process(struct dp_parts *ps, uint32_t self);

/* The earliest pending timer of any engine of the run; UINT64_MAX: none. */
uint64_t dp_parts_next_ns(const struct dp_parts *ps);

/* Windows run by the last dp_parts_run(), and how many frames crossed a cut. */
uint64_t dp_parts_windows(const struct dp_parts *ps);
uint64_t dp_parts_crossed(const struct dp_parts *ps);
/* Partition i's thread: CPU seconds in the last run, events it ran (balance of the cut). */
void dp_parts_load(const struct dp_parts *ps, uint32_t i, double *cpu_s, uint64_t *events);
/*
 * Partition i's share of its loop's wall time spent on work in the last run,
 * 0..1: on the virtual clock, running its windows' events (the rest waits at
 * barriers for the others: the partition with the larger share holds the
 * others back); on the live clock, in turns that had work. 0 before a run.
 */
double dp_parts_busy(const struct dp_parts *ps, uint32_t i);

/*
 * Virtual clock: true once some partition's failed() said so at the end of
 * an earlier window (from the next window on, on every partition, threads
 * or MPI ranks). Read by partition part's own thread, in its traffic_left().
 */
bool dp_parts_failure_seen(const struct dp_parts *ps, uint32_t part);

/*
 * After dp_parts_run_live(), partition i: its loop's turns, those that found
 * nothing to do, the share of the loop's wall time spent in turns that had
 * work (*busy, 0..1: the partition with the larger share is the bottleneck),
 * and how often its senders on cut links found the ring to the receiving
 * partition full (and waited).
 */
void dp_parts_live_load(const struct dp_parts *ps, uint32_t i, uint64_t *turns, uint64_t *idle_turns,
			double *busy, uint64_t *ring_full);
/* After dp_parts_run_live(): how often partition 0 stopped the others for global work. */
uint64_t dp_parts_stops(const struct dp_parts *ps);

/* Of those, the frames that arrived exactly at the end of the window they were handed into. */
uint64_t dp_parts_crossed_at_end(const struct dp_parts *ps);

/*
 * MPI ranks (dp_part_mem.c): the frames of a packet pool of n that partition
 * part of the cut into parts (topo_part.h, nics_with_leaf as for
 * dp_parts_create) holds, n times its share of the channels it sends on,
 * rounded up (at least 1,023, or n when fewer). Each rank's pool holds the frames waiting on its
 * own channels: with the pool that one process would have, the whole
 * fabric's, a rank held frames that never come to it. n when parts <= 1,
 * or when the cut fails (dp_parts_create then says why).
 */
uint32_t dp_parts_pool_share(const struct topo *t, uint32_t parts, bool nics_with_leaf,
			     uint32_t part, uint32_t n);

/* This process's peak resident memory so far, in KiB (getrusage's ru_maxrss; 0 if it fails). */
uint64_t dp_parts_peak_rss_kib(void);

#endif /* DP_PART_H */
