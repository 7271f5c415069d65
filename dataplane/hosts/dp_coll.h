/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_coll.h: the collective driver (dp_coll.c, dp_coll_lanes.c,
 * dp_coll_spec.c) and the emulated NICs as it sees them, without DPDK: the
 * NICs' state (struct dp_nics), their engines and topology; what needs the
 * fabric (frames, mbufs, channels, switches) is dp_nic.h's. Unit tests
 * run the driver on a stub of the NICs (tests/dataplane/test_coll_driver.c).
 *
 * Collectives over emulated hosts (--coll, nic_emul/ne_coll): key=value,...
 * in the one --coll language, whose table is nic_emul/ne_coll_keys.c
 * (`rocelab-dp --coll help` prints it): op, hosts, sizes, model, qps, mode,
 * channels, chunk, window, cts, sport, iters, warmup, data, proxy costs,
 * series and NCCL's own names. ne_coll_spec_parse reads a spec; this layer
 * turns hosts= into NICs and runs sizes= as a sweep.
 * A bad pair: the error names it and what is wrong (rocelab-dp exits 2).
 * Each size prints an nccl-tests line (time, algbw, busbw, #wrong); sizes
 * run one after the other on the same fabric, each DP_COLL_SIZE_GAP_NS
 * after the one before ended. The totals line
 * (dp_nics_print_totals) adds the collective's counters summed over sizes.
 *
 * Several collectives run at once on disjoint sets of hosts (two jobs on one
 * fabric), each with its own sweep: when a run has more than one
 * (dp_nics_tag_colls), each collective's lines start "[cK] " ("# [cK]" for
 * comment lines), K its place in the order they were added, from 1.
 *
 * Partitions (rocelab-dp --workers N, dp_part.h): without lanes every NIC,
 * the collectives and the --rdma transfers run in one partition. With lanes
 * (dp_nic_opts.lanes, for a run dp_nics_coll_splits accepts), each NIC runs
 * in its leaf's partition and the collective's progress is split by rank
 * (ne_coll_set_lanes): a NIC's event polls its own rank's lane, what NICs of
 * a partition share is that partition's (struct dp_nics_lane), each lane
 * starts on its own engine and the last lane to finish ends the collective
 * and prints its lines (dp_coll_lanes.c: coll_lane_check). The next size of a
 * sweep is scheduled once every lane ended the size, every partition
 * stopped (dp_nics_sizes_next), and starts as a global event, which the
 * gap between sizes leaves room for. The output is the one engine's.
 */
#ifndef DP_COLL_H
#define DP_COLL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dp_engine.h"
#include "ne_coll.h"
#include "ne_nic.h"
#include "rl_mem.h"
#include "topo.h"

struct dp_fabric;
struct rte_mbuf;
struct dp_rdma;
struct dp_coll;

/* rx_refused slots: one per negative ne_nic_rx status, NE_RX_CNP the last. */
#define DP_NIC_RX_SLOTS (1 - NE_RX_CNP)

struct dp_nic_host {
	struct dp_nics *owner;
	uint32_t host;
	struct ne_nic *nic;
	uint64_t armed_at;          /* pending wake-up; 0: none */
	uint32_t wake_slot;         /* its engine timer slot (dp_timer_slot_new), 0: none yet */
	uint64_t tx_frames, rx_frames;
	uint64_t rx_rejected;       /* frames ne_nic_rx() refused, or that could not be linearized */
	uint64_t rx_refused[DP_NIC_RX_SLOTS]; /* of those, by -status of ne_nic_rx (slot 0: linearize) */
	uint64_t tx_waits;          /* times it waited for room in the host queue */
	uint64_t stalls;            /* wake-ups where the NIC was due but had nothing to send */
	uint64_t idle_wakes;        /* wake-ups where it was not yet due (armed too early: work for nothing) */
	uint64_t no_mbuf;
	int32_t coll_rank;          /* its rank in its collective, -1 none */
	struct dp_coll *coll;       /* the collective it is a rank of, or NULL */
	struct dp_rdma *rdma_src;   /* first --rdma transfer it sends, in order of the flags */
	struct dp_rdma *rdma_src_tail;
	bool rdma_end;              /* an end of some --rdma transfer */
	bool zero_payload;          /* its NIC runs ne_nic's zero_payload model (reads no payload byte) */
	bool waiting;               /* armed later than its next event (queue full, stall) */
	bool listed;                /* in its lane's wake list */
	uint32_t lane;              /* its lane (struct dp_nics_lane): its partition's, or 0 */
	/* in service() before it sends: the service arms it at its end, so a
	 * collective's poll meanwhile leaves it unarmed (dp_nic.c: service) */
	bool arm_deferred;
};

/*
 * What the NICs of one partition share with each other and no other thread:
 * with a collective split into lanes (dp_nics_coll_splits), one per
 * partition, its NICs' events on that partition's engine; else one.
 */
/*
 * A size of a collective run elsewhere than on the NICs (--fabric flow): run
 * (created, never started) over nics[rank] on fabric hosts host_of[rank]
 * from now_ns, on the run's clock. At its end it hands its times to run
 * (ne_coll_set_external_times) and calls done(obj, 0, a comment line of its
 * own counters, now), or done(obj, -errno, why, now) when it failed. Returns
 * 0 when it started, or a negative errno with why (done is not called).
 */
struct dp_nics;
typedef void (*dp_coll_flow_done_fn)(void *obj, int err, const char *text, uint64_t now_ns);
typedef int (*dp_coll_flow_fn)(struct dp_nics *ns, struct ne_coll *run,
			       const struct ne_coll_config *cfg, struct ne_nic *const *nics,
			       const uint32_t *host_of, uint64_t now_ns, dp_coll_flow_done_fn done,
			       void *obj, char *why, size_t why_cap);

struct dp_nics_lane {
	/* NICs whose wake-up time a collective's poll must look at again:
	 * their state changed since their next event was read (ne_nic wake
	 * notification), they are not armed, or they wait (indices into h) */
	uint32_t *wake;
	uint32_t n_wake;
	struct rte_mbuf *spare;     /* an empty mbuf the next frame a NIC sends goes into, or NULL */
	struct dp_engine *eng;      /* the engine of its NICs (NULL: it has none) */
} __attribute__((aligned(RL_LINE))); /* its own cache line, as __rte_cache_aligned (rl_mem.h) */

struct dp_nics {
	struct dp_fabric *fab;      /* (dp_nic.c's and dp_rdma.c's: the collective driver reads none of it) */
	uint32_t n;
	struct dp_nic_host *h;      /* [n] */
	int32_t *by_host;           /* [n_hosts]: index into h, or -1 */
	struct dp_rdma **rdma;      /* [n_rdma] */
	uint32_t n_rdma;
	struct dp_coll **colls;     /* the run's collectives, in the order added [n_colls] */
	uint32_t n_colls;
	bool coll_tags;             /* several collectives: each one's lines start "[cK] " */
	FILE *coll_out;             /* where result lines go */
	struct dp_nics_lane *lane;  /* [n_lanes] */
	uint32_t n_lanes;
	bool lane_alone;            /* this process runs lane lane_self alone (dp_nic_opts) */
	uint32_t lane_self;
	/* set by dp_nics_create from the fabric (the driver reads only these) */
	const struct topo *topo;    /* the fabric's topology */
	struct dp_engine *fab_eng;  /* the fabric's engine: global events (a sweep's next size in lanes) */
	/* without lanes, the engine of the NICs' shared work (collectives,
	 * --rdma transfers): their partition's, where every emulated host is
	 * (dp_part.h); the fabric's when there is no NIC */
	struct dp_engine *eng;
	/* --fabric flow: each size runs on another fabric model (dp_flowrun_nics),
	 * not the NICs; NULL: the NICs. Set before dp_nics_add_coll. */
	dp_coll_flow_fn flow_run;
	void *flow_ctx;             /* flow_run's own: the flow fabric the running collectives share */
	uint32_t flow_slot;         /* flow_run's engine timer slot, kept for the run; 0: none yet */
	uint64_t flow_refill_ns;    /* flow_run's fl_config.refill_ns (--fabric flow,refill=); 0: exact */
};
/*
 * Check a --coll SPEC against topology t before anything runs: its keys, its
 * hosts (emulated, each once, at least 2), its settings together. Returns 0,
 * or -1 with "--coll: KEY=VALUE: why" in err.
 */
int dp_coll_spec_check(const struct topo *t, const char *spec, char *err, size_t errlen);

/*
 * Parse a --coll SPEC and arm its first size at start_ns. Its hosts must not
 * be ranks of a collective added before. Returns 0, or -1 with a message
 * (nothing of it stays).
 */
int dp_nics_add_coll(struct dp_nics *ns, const char *spec, uint64_t start_ns, FILE *out, char *err,
		     size_t errlen);

/* Before the first dp_nics_add_coll: on, when the run will have several (their lines tagged). */
void dp_nics_tag_colls(struct dp_nics *ns, bool on);

/* A measured size of a collective: its nccl-tests result (wrong set) and its
 * "# latency:" line as printed ("" when none was). */
struct dp_coll_size {
	struct ne_coll_result res;
	struct ne_coll_result in_place; /* its in-place pass's (inplace=on) */
	bool has_in_place;
	char latency[320];
};
/* n kept sizes' closing numbers, as the "# Out of bounds values" and "# Avg
 * bus bandwidth" lines print them (ne_coll_sweep_add over each size). */
void dp_coll_sizes_sum(const struct dp_coll_size *z, uint32_t n, struct ne_coll_sweep_sum *t);
/* What a collective printed, for other writers of the same numbers (rocelab-dp --json). */
struct dp_coll_view {
	uint32_t id;                        /* its "[cK]" K, from 1 */
	const char *spec;                   /* the --coll spec as given */
	const struct ne_coll_config *cfg;
	const struct dp_coll_size *sizes;   /* [n_sizes], in the order they ran */
	uint32_t n_sizes;
	bool finished, failed;
};
/* The run's collective i (0-based, in the order added) into out, valid until
 * dp_nics_destroy. Returns 0, or -ENOENT when there is no collective i. */
int dp_nics_coll_view(const struct dp_nics *ns, uint32_t i, struct dp_coll_view *out);

/*
 * The collectives' traffic matrix as host pairs (src, dst), each
 * collective's in turn: a ring for AllReduce/AllGather/ReduceScatter, every
 * ordered pair for AllToAll, every rank to the root for incast, Send/Recv's
 * pairs. Returns the number written (at most max); with out NULL, how many
 * there are (max ignored).
 */
uint32_t dp_nics_coll_pairs(const struct dp_nics *ns, uint32_t (*out)[2], uint32_t max);

/* True when an AllReduce may run NCCL's tree (algo=tree, or algo=auto, which
 * picks per size): dp_nics_coll_pairs gives only the ring's pairs, so --te
 * refuses it. */
bool dp_nics_coll_tree(const struct dp_nics *ns);

/*
 * QPs each NIC needs for a --coll SPEC (an upper bound read from it), 0 for
 * NULL. n_emulated: the topology's emulated hosts (the ranks of hosts=all):
 * in an AllToAll or an incast a NIC may connect to every other rank.
 */
uint32_t dp_nics_coll_qps(const char *spec, uint32_t n_emulated);

/*
 * --coll-series: write the collective's active QPs per NIC over virtual time
 * (ne_coll_set_series) to path as CSV, one row per interval of the --coll key
 * series (default DP_COLL_SERIES_NS), every size of the sweep, header
 * size,t_us,dt_us,qp_ns,qps_mean,qps_max,nics_active (t_us from the size's
 * start). Rows are streamed (memory bounded). Call after dp_nics_add_coll;
 * path NULL only checks that the key series was not given without a file.
 * 0 without a --coll; -1 with err (the file cannot be opened, series=
 * without a file, or a file for a run of several collectives). A failed
 * write makes the run fail at its end.
 */
#define DP_COLL_SERIES_NS 10000u
int dp_nics_coll_series(struct dp_nics *ns, const char *path, char *err, size_t errlen);

/*
 * After the collectives are added and their series set (dp_nics_add_coll,
 * dp_nics_coll_series): the first size of each collective split into lanes
 * is made and split, its lanes' starts armed (a collective not split starts
 * by the timer dp_nics_add_coll armed). 0, or -1 with a message (out of
 * memory); a size that cannot start says so on the collective's lines.
 */
int dp_nics_colls_begin(struct dp_nics *ns, char *err, size_t errlen);

/*
 * With lanes: true while lane's part of a collective is not finished: a
 * size of its runs, or one is to come (a lane with no rank: until the last
 * size begins). Read by lane's own thread only. (A lane that waits on one that failed waits for
 * nothing: the caller stops waiting once any partition said
 * dp_nics_lane_failed, at a window's end.)
 */
bool dp_nics_lane_active(const struct dp_nics *ns, uint32_t lane);

/* With lanes: lane's part of a collective ended with a failure. Read by lane's own thread. */
bool dp_nics_lane_failed(const struct dp_nics *ns, uint32_t lane);

/*
 * What nccl-tests does between two sizes of a sweep on the host (a stream
 * synchronisation, a barrier, the timing and the line): the next size
 * starts this long after the last one ended. With the collective in lanes
 * the next size starts as a global event, after every partition's window
 * has ended: so lanes take a sweep only where the cut's lookahead is
 * shorter than this (rocelab-dp checks).
 */
#define DP_COLL_SIZE_GAP_NS 10000ull

/*
 * True when a run of this one --coll SPEC can split the collective's
 * progress into lanes, one per partition, with each NIC in its leaf's
 * partition: one iteration without warm-up (the next iteration needs a
 * moment global to every rank between completions: dp_nic.c). Proxy costs
 * and an active-QP series split: each lane keeps its ranks' proxy threads
 * (its wake-up first at its instant) and series rows (merged at the end,
 * so only where the lanes share memory). The caller adds the run's own
 * conditions (virtual clock,
 * partitions, no --rdma, one collective, no --coll-series; a sweep of
 * sizes: a lookahead shorter than DP_COLL_SIZE_GAP_NS).
 */
bool dp_nics_coll_splits(const char *spec);
/* True when this --coll SPEC sweeps sizes (sizes=A:B with A < B). */
bool dp_nics_coll_sweeps(const char *spec);
/*
 * A sweep in lanes (dp_part_run.serial_due, serial): true when lane's part
 * of a collective's size is over (or has no rank) and a next size is to
 * come, not yet scheduled. Once every lane says so, with every partition
 * stopped (under MPI ranks after every rank's lane record was loaded here,
 * dp_nics_lane_save / dp_nics_lane_load), dp_nics_sizes_next ends the size
 * where no lane has (its lines) and puts the next one's start on the
 * fabric's engine, DP_COLL_SIZE_GAP_NS after the latest lane's end.
 * Returns 0, or -ENOMEM (the collective failed, saying so).
 */
bool dp_nics_serial_due(const struct dp_nics *ns, uint32_t lane);
int dp_nics_sizes_next(struct dp_nics *ns, uint64_t now);

/*
 * With lanes, after the run (its threads stopped): end every collective
 * split into lanes whose lanes all ended, or one failed, and that has not
 * ended yet (its lines, as at its end; a lane that did not end counts as it
 * is now). Needed where no lane's thread could end it: the lanes ran in
 * other processes (dp_nics_lane_load brought them), or a lane failed and
 * the others stopped waiting.
 */
void dp_nics_lanes_finish(struct dp_nics *ns);

/*
 * After the run: the lines each unfinished collective held (inplace=on holds
 * a size's lines until its in-place pass ends), out now, its result line
 * first when its out-of-place pass ended (the in-place half N/A). A second
 * call writes nothing.
 */
void dp_nics_colls_release(struct dp_nics *ns);

/*
 * MPI ranks, each running one partition and so one lane: what lane's part of
 * each collective split into lanes left (frozen at its end, or as it is now
 * if it did not end: statistics, histograms, its ranks' data check) as
 * dp_nics_lane_rec_len() bytes, for the other ranks' copies: after the run
 * for rank 0's (dp_nics_lane_load, then dp_nics_lanes_finish), and at each
 * size of a sweep for every rank's (then dp_nics_sizes_next). Load returns
 * 0, or -EINVAL (a record of another length, or no such lane).
 */
size_t dp_nics_lane_rec_len(const struct dp_nics *ns);
void dp_nics_lane_save(struct dp_nics *ns, uint32_t lane, void *rec);
int dp_nics_lane_load(struct dp_nics *ns, uint32_t lane, const void *rec, size_t len);
#endif /* DP_COLL_H */
