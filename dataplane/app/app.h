/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * app.h: what the files of the program rocelab-dp share (app/ exports
 * nothing): its options, its run state, and the functions one file calls in
 * another.
 *   main.c    main: options, MPI ranks, set-up, run, report, teardown
 *   opts.c    usage and the command line
 *   setup.c   EAL, topology, pool, fabric, NICs, lanes, captures, traffic
 *   run.c     the virtual and live loops, partitions, gathers, progress, CSV
 *   report.c  the end-of-run report and the teardown
 *   json.c    --json FILE: the report's tables as one JSON document
 */
#ifndef DP_APP_H
#define DP_APP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "dp_capture.h"
#include "dp_part.h"
#include "dp_peer.h"
#include "dp_ctl.h"
#include "dp_eal.h"
#include "dp_engine.h"
#include "dp_fabric.h"
#include "dp_gen.h"
#include "dp_job.h"
#include "dp_mix.h"
#include "dp_mpi.h"
#include "dp_nic.h"
#include "dp_pool.h"
#include "dp_port.h"
#include "dp_stats.h"
#include "dp_units.h"
#include "topo.h"

#define EXIT_BAD_INPUT 2

#define MAX_CAPTURES 16

#define MAX_WORKERS 256 /* --workers: partitions (threads) */

#define MAX_MBUFS 16777215u /* --mbufs */
#define REPORT_TOP_FLOWS 20 /* the flow table (and --json's flows): the flows with most bytes */

#define PEER_WAIT_S 30 /* --process: how long set-up waits for the other processes' ports */

#define LIVE_BETWEEN_NS 1000000ull /* live partitions: telemetry and global events at least every 1 ms */

/*
 * Longest spec of each kind the data plane's parsers read whole: they copy
 * it into fixed buffers (dp_gen.c 512, dp_nic.c 160 for --rdma; --coll has
 * no limit: its host list may name a thousand hosts) and would parse a
 * longer one cut short. A traffic file can hold longer entries, so they are
 * refused at their line instead.
 */
#define GEN_SPEC_MAX 511

#define RDMA_SPEC_MAX 159

#define COLL_SPEC_MAX SIZE_MAX

#define IDLE_SLEEP_MAX_NS 20000 /* live mode: default longest nap when idle (--idle-nap) */

#define IDLE_NAP_LIMIT_NS 10000000ull /* --idle-nap at most 10 ms */

/*
 * live mode: timers run per loop turn at most, before the loop looks at its
 * clock, signals, ports and telemetry again. A timer moves at most a burst
 * of frames (dp_gen, dp_fabric), well under 1 us each, so a turn lasts
 * milliseconds at most: --duration and signals are honoured to within that.
 */
#define LIVE_TURN_BUDGET 512

#define LAG_LIMIT_DEFAULT_NS 100000000ull /* --lag-policy stop: 100 ms, as ns-3's hard limit */

#define NS_PER_MS 1e6

#define LAG_REPORT_NS 1000000ull /* a lag from 1 ms on is reported as falling behind */

/* Traffic specs in the --gen/--rdma language; no fixed limit. */
struct spec_list {
	const char **spec;
	const char **where; /* NULL: from a flag; else FILE:LINE in the traffic file */
	unsigned n, cap;
};

struct opts {
	const char *topology;
	unsigned clos[3];
	bool check;
	bool list_hosts;
	enum dp_clock_mode clock;
	uint64_t duration_ns;
	struct spec_list gen;   /* --gen and the traffic file's generators */
	struct spec_list rdma;  /* --rdma and the traffic file's rdma transfers */
	struct spec_list coll;  /* --coll and the traffic file's collectives (disjoint hosts) */
	const char *traffic;    /* --traffic FILE */
	const char *coll_series; /* --coll-series FILE */
	const char *workload;   /* --workload KIND:SOURCE[,key=value...] (dp_job.h) */
	const char *job_coll;   /* --job-coll SPEC: the job's collectives' settings (dp_job.h) */
	const char *jobs;       /* --jobs FILE: many jobs at once (dp_mix.h) */
	const char *jobs_svg;   /* --jobs-svg FILE: their placement drawn */
	bool jobs_mix_only;     /* --jobs-mix-only: no job alone (jobs_alone.c not run) */
	int jobs_alone;         /* --jobs-alone K (jobs_alone.c's own runs): job K alone; -1 */
	int argc;               /* the command line, for jobs_alone.c to run it again */
	char **argv;
	struct dp_nic_opts nic;
	bool te;
	bool fabric_flow;       /* --fabric flow: collectives on the flow engine (fabric_flow.c) */
	uint64_t flow_refill_ns; /* --fabric flow,refill=TIME: its refill period (fl_config.refill_ns) */
	const char *pipeline;   /* --pipeline FILE.spec: every switch's program (dp_swx.h) */
	bool watchdog;
	struct pfc_watchdog_config wd;
	const char *capture[MAX_CAPTURES];
	unsigned n_capture;
	enum dp_veth_driver veth;
	const char *csv;
	const char *json;       /* --json FILE */
	uint64_t csv_interval_ns;
	bool busy_poll;
	uint64_t idle_nap_ns; /* live mode: longest nap when idle */
	bool quiet;
	uint32_t flows;
	uint64_t seed;
	const char *name;
	unsigned mem_mb;
	uint32_t mbufs;         /* --mbufs: frames the pool holds; 0: by the MTU (65535 or 16383) */
	uint32_t workers;       /* --workers: partitions on threads (virtual clock) */
	bool nics_together;     /* --nics-together: emulated NICs all in partition 0 */
	bool lag_stop;          /* --lag-policy stop: falling behind by lag_limit_ns ends the run */
	uint64_t lag_limit_ns;
	struct dp_peers peers;  /* --process K/N, --peer DEVARGS (dp_peer.h) */
};

struct run {
	struct opts *o;
	struct topo *topo;
	struct dp_engine eng;
	struct rte_mempool *mp;
	struct dp_fabric *fab;
	struct dp_ports ports;
	struct dp_gen *gens;             /* [o->gen.n] */
	struct topo_traffic *traffic;    /* --traffic: owns the file's specs */
	struct dp_capture *cap[MAX_CAPTURES];
	struct dp_csv csv;
	FILE *json;                      /* --json: open from before the run to the report */
	struct dp_ctl *ctl;
	struct dp_nics nics;
	struct dp_job *job;              /* --workload, or NULL */
	struct dp_mix *mix;              /* --jobs, or NULL */
	struct dp_parts *parts;          /* --workers */
	char lanes_why[192];             /* why the emulated NICs do not run in lanes (nics_in_lanes) */
	struct dp_mpi mpi;               /* under mpirun: this rank; else rank 0 of 1 */
	struct dp_te te;
	uint64_t start_ns;
	struct dp_eal eal;
	uint16_t frame_room;    /* bytes an mbuf holds for a frame */
	uint32_t pool_frames;   /* the packet pool's frames, all ranks' together (--mbufs, or its default) */
	int run_rc;             /* 0, or 1 when --lag-policy stop ended the run */
	bool gathered;          /* MPI: rank 0 holds every rank's counters (the audit needs them) */
	double wall_s;          /* wall time of the run loop */
	double after_signal_s;  /* from a stop signal to the loop's end */
	double progress_at;     /* virtual: monotonic seconds of the run's start or last progress line */
	bool quiet_progress;    /* no progress line (live partitions) */
	struct jobs_top *jobs_top; /* --jobs: each job's busiest links over jobs_top_ns, or NULL (jobs_links_top) */
	uint64_t jobs_top_ns;
};

extern volatile sig_atomic_t stop_requested;
extern struct timespec stop_signal_ts;

/* main.c */

/* opts.c */
int bad(const char *what, const char *arg);
int spec_push(struct spec_list *l, const char *spec, const char *where);
void spec_list_free(struct spec_list *l);
int parse_opts(int argc, char **argv, struct opts *o);

/* run.c */
uint64_t tsc_ns(void *ctx);
void host_rx(void *ctx, struct dp_host *h, struct rte_mbuf *m, uint64_t now_ns);
void on_csv(void *obj, uint64_t arg, uint64_t now);
void part_collect(void *ctx, uint64_t now);
int gather_lanes(struct run *r);
void run(struct run *r);

/* setup.c */
int load_topology(struct run *r);
void list_hosts(const struct topo *t);
/* Every --coll spec's keys, parsed: 0, or EXIT_BAD_INPUT after saying which on stderr. */
int coll_specs_check(const struct opts *o);
/* The same, then "--coll: N specs OK (keys only: no topology)" on stdout. */
int check_coll_keys(const struct opts *o);
int check_programs(const struct opts *o);
int parse_gens(struct run *r);
/* jobs_alone.c: --jobs: each job's time alone, from a rocelab-dp of its own per job (this
 * program again, its options and --jobs-alone K), into r->mix. 0, or -1 with err. */
int jobs_alone(struct run *r, char *err, size_t errlen);
/* jobs_links.c: --jobs: per job, a line naming the 3 busiest links its traffic crossed in the
 * mix (the flows the fabric tracked), utilisation and pause over elapsed_ns. */
void jobs_links_print(struct run *r, uint64_t elapsed_ns, FILE *out);
/* Job k's JOBS_TOP_LINKS busiest links, as its line names them, into top: their count, or -1
 * (out of memory). */
#define JOBS_TOP_LINKS 3
int jobs_links_top(struct run *r, uint32_t k, uint64_t elapsed_ns, struct dp_stats_link *top);
/* One job's row of them (jobs_links.c makes every job's at once, r->jobs_top). */
struct jobs_top {
	int n;
	struct dp_stats_link top[JOBS_TOP_LINKS];
};
int plan_process(struct run *r);
int setup(struct run *r, char *err, size_t errlen);
int start_traffic(struct run *r, char *err, size_t errlen);
/* --fabric flow (fabric_flow.c): refuse what flows do not model, else run the
 * collectives on the flow engine. 0, or EXIT_BAD_INPUT with err. */
int fabric_flow_start(struct run *r, char *err, size_t errlen);

/* json.c */
/* Open --json's file for writing (before the run: a bad path is bad input).
 * Returns 0, or EXIT_BAD_INPUT after a message naming it. */
int json_open(struct run *r);
/* Write the report's tables and result lines to --json's file as one JSON
 * document (docs/reference/rocelab-dp.schema.json), rc the run's exit status,
 * and close it. Returns 0, or -ENOMEM / -EIO after a message. */
int json_write(struct run *r, uint64_t elapsed, uint64_t fabric_ns, int rc);

/* report.c */
/* The audit's environment (dp_audit.h): ROCELAB_AUDIT's mode, ROCELAB_AUDIT_STEAL's link, ROCELAB_AUDIT_LEAK's
 * count (test only hooks). 0, or EXIT_BAD_INPUT with err. */
int audit_setup(struct run *r, char *err, size_t errlen);
int report(struct run *r);
void free_early(struct run *r);
/* Free everything; removes the DPDK runtime directory. Returns 0, -EIO when a --capture file could not be
 * written, or -EPROTO when the packet pool's audit failed under ROCELAB_AUDIT=fatal (dp_audit_pool). */
int teardown(struct run *r);

#endif /* DP_APP_H */
