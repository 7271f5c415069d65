/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_job: a training job's graph (workload/wl_graph.h) run on the emulated
 * NICs, rocelab-dp --workload (issue 41, items 1-3).
 *
 * Two parts. The core (dp_job_core.c, no DPDK, no fabric) walks the graph on
 * a virtual clock and asks a driver to run what takes time:
 *   - a compute node occupies its rank's compute stream for duration_ns; a
 *     rank runs one compute node at a time, the ready ones in the order they
 *     became ready (ties: graph order);
 *   - a collective is an instance: the k-th collective over one
 *     communicator on every member (graph order on each rank). It starts
 *     when every member reached it (its dependencies done) and every
 *     member's NIC is free: a NIC runs one collective or transfer at a time,
 *     so two collectives over overlapping ranks are serialised, the first
 *     to be complete first (ne_coll gives a NIC to one collective at a
 *     time); over disjoint ranks they run at once;
 *   - a Send matches the Recv of its peer with the same tag, the k-th with
 *     the k-th; the pair is an instance of two members, run as a 2-rank
 *     incast (the receiver its root: the sender's bytes to it).
 * An iteration ends when every node of every rank has ended; the next one
 * starts then, on every rank at once (the optimizer step as a barrier).
 * A communicator of one rank ends at once.
 *
 * The driver (dp_job.c) runs instances as ne_coll collectives on the
 * emulated NICs (dp_coll's sizes, one size each) and computes on engine
 * timers; a core run with no driver (dp_job_core_compute_only) takes every
 * communication as instant: the compute-only critical path, from which the
 * exposed communication is the iteration time minus it.
 */
#ifndef DP_JOB_H
#define DP_JOB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ne_coll.h"
#include "wl_graph.h"

struct dp_nics;
struct topo;
struct dp_coll;

/* One communication instance: a collective, or a Send/Recv pair. */
struct dp_job_inst {
	bool p2p;               /* a Send/Recv pair: members [sender, receiver] */
	enum ne_coll_op op;     /* what ne_coll runs (p2p: incast, root the receiver) */
	enum wl_coll wl_op;     /* the graph's op (collectives) */
	uint64_t bytes;         /* nccl-tests size */
	uint32_t nmem;
	uint32_t *rank;         /* [nmem] the job ranks, ascending for a collective */
	uint32_t *node;         /* [nmem] each member's node (global index) */
	/* per iteration */
	uint32_t arrived;
	uint64_t start_ns, end_ns;
	double busbw;           /* GB/s, from ne_coll's result; 0 for one rank */
	uint32_t qps_max;       /* most active QPs on one member NIC at once (ne_coll's result) */
	struct dp_coll *coll;   /* the driver's, while it runs */
};

struct dp_job_node {
	uint32_t rank;
	const struct wl_node *w;
	uint32_t ndeps;         /* dependencies (on its rank) */
	uint32_t *succ;         /* nodes that depend on it */
	uint32_t nsucc;
	uint32_t inst;          /* its instance, UINT32_MAX for compute */
	uint32_t deps_left;     /* per iteration */
};

struct dp_job_core;
/* What the core asks of its driver: run compute node n until end_ns (call
 * dp_job_core_compute_end then); start instance i at now (call
 * dp_job_core_inst_end when it ended). Each returns 0 or -1 (the job fails). */
struct dp_job_driver {
	int (*compute)(void *ctx, uint32_t n, uint64_t end_ns);
	int (*start)(void *ctx, uint32_t i, uint64_t now);
	void *ctx;
};

struct dp_job_core {
	const struct wl_graph *g;
	uint32_t nnodes;
	struct dp_job_node *n;
	uint32_t *first;        /* [nranks + 1]: rank r's nodes are first[r] .. first[r+1]-1 */
	struct dp_job_inst *inst;
	uint32_t ninst;
	struct dp_job_driver drv;
	/* per iteration */
	uint32_t left;          /* nodes not ended */
	uint64_t iter_start_ns, iter_end_ns;
	bool *compute_busy;     /* [nranks] */
	bool *nic_busy;         /* [nranks] */
	uint32_t *queue;        /* [nnodes] ready compute nodes, a FIFO per rank (ring at first[r]) */
	uint32_t *q_head, *q_len; /* [nranks] */
	uint32_t *pending;      /* [ninst] complete instances waiting for a NIC, in order */
	uint32_t npending;
	bool failed;
};

/*
 * Index g (checked by wl_graph_check) for runs: successors, instances. file
 * names the workload in messages. Refused, with "FILE: node ID: why" (a
 * node's rank file when the graph has one): an op ne_coll cannot run
 * (Reduce, Gather, Scatter, Broadcast, ReduceScatter block, Barrier), a
 * size ne_coll cannot run (under 4 bytes, or a float per rank), members of
 * one instance disagreeing on op or size, a Send without its Recv (or the
 * reverse). Returns 0, or -1 with err (core freed).
 */
int dp_job_core_init(struct dp_job_core *c, const struct wl_graph *g, const char *file, char *err,
		     size_t errlen);
void dp_job_core_free(struct dp_job_core *c);

/* Start an iteration at now: every node with no dependency becomes ready.
 * Returns 0, or -1 when the driver failed. */
int dp_job_core_begin(struct dp_job_core *c, uint64_t now);
/* The driver's reports. Return 0, or -1 when the driver failed. */
int dp_job_core_compute_end(struct dp_job_core *c, uint32_t n, uint64_t now);
int dp_job_core_inst_end(struct dp_job_core *c, uint32_t i, uint64_t now);
/* The iteration ended (every node ended). */
bool dp_job_core_done(const struct dp_job_core *c);

/*
 * One iteration with every communication instant: its length (the
 * compute-only critical path) into *ns. Returns 0, or -1 with err "FILE:
 * node ID: never starts (...)" when the graph cannot finish (members
 * reaching collectives of one communicator in different orders).
 */
int dp_job_core_compute_only(struct dp_job_core *c, const char *file, uint64_t *ns, char *err,
			     size_t errlen);

/* "FILE: node ID" (or "rank R: node ID") of node n, for messages. */
void dp_job_node_where(const struct dp_job_core *c, uint32_t n, const char *file, char *out,
		       size_t cap);

/*
 * --workload KIND:SOURCE[,key=value...]: chakra:PREFIX, astra:FILE or
 * llm:SPEC (rocelab-llm's spec: the keys after llm: that are not this
 * option's own). Keys: iters=N (iterations, default 1), hosts=A+B+...
 * (rank i on the i-th; default the topology's emulated hosts in order),
 * cycle_ps=N (astra: one cycle of the file's compute times, default 1000),
 * group=NAME:R+R+... (chakra, repeatable: the ranks of the process group a
 * collective's pg_name names; without one a collective spans every rank).
 */
#define DP_JOB_GROUPS 64
struct dp_job_spec {
	char kind[8];
	char *source;           /* the path or the llm spec (malloc'ed) */
	uint32_t iters;
	char *hosts;            /* NULL: topology order */
	uint64_t cycle_ps;
	struct dp_job_group {
		char *name;
		uint32_t *ranks;
		uint32_t nranks;
	} group[DP_JOB_GROUPS];
	uint32_t ngroups;
	const char *coll;       /* --job-coll's spec for its collectives, or NULL (not owned) */
};

/* Parse arg into s. Returns 0, or -1 with "--workload: why" in err. */
int dp_job_spec_parse(const char *arg, struct dp_job_spec *s, char *err, size_t errlen);
void dp_job_spec_free(struct dp_job_spec *s);

/*
 * --job-coll SPEC: the settings of a job's collectives, a --coll spec
 * fragment (model=nccl,qps=4,mode=split,...) read by ne_coll_spec_parse
 * after ne_coll_spec_default. The keys the job decides are refused by name:
 * op, root, nranks, bytes (the graph's), hosts (the job's ranks), sizes and
 * size (the node's bytes), iters, warmup, warmup_iters (the job's
 * iterations), series and data (a job runs data=off, no series). Returns 0
 * (s set: free it with ne_coll_spec_free), or -1 with "--job-coll: why" in err.
 */
int dp_job_coll_parse(const char *text, struct ne_coll_spec *s, char *err, size_t errlen);

struct dp_job;

/*
 * Load the workload of s, check it (the readers' FILE and node or line
 * messages passed through), place its ranks on t's emulated hosts, index it
 * and find its compute-only critical path. Returns the job, or NULL with
 * "--workload: why" in err (a bad input: rocelab-dp exits 2).
 */
struct dp_job *dp_job_load(const struct dp_job_spec *s, const struct topo *t, char *err,
			   size_t errlen);

/* QPs each NIC needs for the job's largest instance (0 for NULL). */
uint32_t dp_job_qps(const struct dp_job *j);

/*
 * Run j on ns from start_ns: its instances' collectives print nothing on
 * the run's output (the job's report says what they did). Returns 0, or -1
 * with err (a job rank's host is no emulated NIC of ns; out of memory).
 */
int dp_job_start(struct dp_job *j, struct dp_nics *ns, uint64_t start_ns, char *err, size_t errlen);

/*
 * --te's traffic matrix: host pairs (src, dst), in order, each with its
 * demand (bit/s), with room cap; free pair and demand with free().
 */
struct dp_job_pairs {
	uint32_t (*pair)[2];
	double *demand;
	uint32_t n, cap;
};

/*
 * The network connections of started job j's instances appended to p, each
 * instance's as --coll's are (dp_nics_coll_pairs: a ring's, AllToAll's
 * every ordered pair, a Send/Recv's sender to its receiver), on the hosts
 * its collective will run on; a pair of one server's GPUs (NVLink) is left
 * out. A pair's demand is its source NIC's line rate shared by the
 * source's network connections in the instance (a ring's: all of it; an
 * AllToAll of n ranks on n servers: 1/(n-1)). Repeats stay
 * (dp_job_pairs_unique). j passed dp_job_te_check.
 * Returns 0 (nothing for NULL or a job not started), or -1 with err (out of
 * memory; an instance's hosts that order=nccl cannot order).
 */
int dp_job_te_pairs(const struct dp_job *j, struct dp_job_pairs *p, char *err, size_t errlen);

/*
 * Whether --te can place j's connections, before it runs: 0 (also for
 * NULL), or -1 with "--te places a ring's connections; --job-coll
 * algo=tree ..." when an AllReduce of two or more ranks may run NCCL's tree
 * (--job-coll algo=tree or algo=auto), whose connections are not the ring's.
 */
int dp_job_te_check(const struct dp_job *j, char *err, size_t errlen);

/* Each pair of p once, where it came first, with the largest of its demands. Returns 0, or -1
 * (out of memory: p as it was). */
int dp_job_pairs_unique(struct dp_job_pairs *p);

/* True while j has work left (NULL: false). */
bool dp_job_active(const struct dp_job *j);
/* True when j did not finish every iteration, or a collective failed. */
bool dp_job_failed(const struct dp_job *j);

/*
 * The report to out: per iteration, "# job: iteration K: time T us, compute
 * critical path C us, exposed communication E us (P %)", then a line per
 * instance (rank 0's node id, op, ranks, bytes, start, time, busbw, the
 * most active QPs on one of its NICs).
 */
void dp_job_report(const struct dp_job *j, FILE *out);

/* One iteration's numbers: 0, or -1 when iteration i (from 0) did not end. */
struct dp_job_iter {
	uint64_t time_ns, compute_ns, exposed_ns;
};
int dp_job_iter_get(const struct dp_job *j, uint32_t i, struct dp_job_iter *out);

/* What communication instance k did in iteration i, as the report's line says. */
struct dp_job_row {
	uint64_t node;          /* its node id on its first member */
	const char *op;         /* Chakra's name of the collective, or "SEND_RECV" */
	uint32_t ranks;
	uint64_t bytes;
	uint64_t start_ns;      /* from the iteration's start */
	uint64_t time_ns;
	double busbw;           /* GB/s, nccl-tests' (ne_coll's result); 0 for one rank */
	uint32_t qps_max;       /* most active QPs on one member NIC at once; 0 for one rank */
};
/* The topology host of rank r (r < dp_job_ranks(j)). */
uint32_t dp_job_host(const struct dp_job *j, uint32_t r);
/* The job's source as named, its ranks and its instances (0 for NULL). */
const char *dp_job_source(const struct dp_job *j);
uint32_t dp_job_ranks(const struct dp_job *j);
uint32_t dp_job_instances(const struct dp_job *j);
/* Row of instance k in iteration i: 0, or -1 (no such iteration ended, or no instance k). */
int dp_job_row_get(const struct dp_job *j, uint32_t i, uint32_t k, struct dp_job_row *out);

void dp_job_free(struct dp_job *j);

#endif /* DP_JOB_H */
