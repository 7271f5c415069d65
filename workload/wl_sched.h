/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_sched: a scheduler that places the jobs of a job file (wl_jobs.h) on the
 * free servers of a topology (topology/topo.h), by a named policy.
 *
 * The cluster: a topology's servers (`server:`/`gpu:` keys); a topology
 * without servers counts each host as a server of 1 GPU. A server's rack is
 * the leaf (RTSW) of its GPU 0. A zone is a set of racks joined by their
 * CTSWs without an ATSW: the AI zones of `rocelab-topo --generate zones=Z`
 * (a 2-tier Clos is one zone). Racks and zones are numbered in leaf order.
 *
 * Jobs are placed in arrival order (file order among equal arrivals). A job
 * keeps its servers: nothing here runs a job, so none ends. A job needs
 * gpus / gpus_per_server whole servers. The policies:
 *   packed:         whole racks inside one zone, the fewest racks (the racks
 *                   with the most free servers first); refused when no one
 *                   zone holds the job;
 *   spread:         round-robin over all racks, one free server of each in
 *                   turn, starting from rack 0;
 *   random:         free servers drawn uniformly (fragmented), in the order
 *                   drawn, with splitmix64 (wl_sched_rand()) seeded once per
 *                   placement, so a seed gives the same result everywhere;
 *   topology-aware: Meta's (see wl_sched.c): the zone that holds the whole
 *                   job with the fewest free servers left over, its racks
 *                   filled in order; a job no zone holds takes the zones
 *                   with the most free servers, each filled in rack order.
 * A job's servers are kept in ring order: the order its policy picked them,
 * each server's GPUs in GPU order. No server is given twice.
 */
#ifndef WL_SCHED_H
#define WL_SCHED_H

#include <stdint.h>
#include <stdio.h>

#include "wl_err.h"
#include "wl_jobs.h"

struct topo;

struct wl_cserver {
	const char *name;     /* the topology's server (or host) name */
	uint32_t rack, zone;  /* indexes into wl_cluster.racks / zones */
	const uint32_t *hosts; /* [gpu] -> topology host index, gpus_per_server of them */
};

struct wl_rack {
	const char *name;  /* its leaf's name */
	uint32_t zone;
	uint32_t n;        /* servers in it */
	uint32_t *servers; /* their indexes, ascending */
};

struct wl_cluster {
	const struct topo *topo; /* borrowed: it must outlive the cluster */
	uint32_t gpus_per_server;
	uint32_t n_servers, n_racks, n_zones;
	struct wl_cserver *servers;
	struct wl_rack *racks;
	uint32_t *host_index; /* 1-GPU servers: the host of server i (backs hosts) */
};

/* Where one job went. */
struct wl_place {
	const struct wl_job *job;
	enum wl_policy policy;  /* the one that placed it */
	int placed;             /* 1: placed; 0: refused (msg says why) */
	uint32_t n;             /* servers given */
	uint32_t *servers;      /* ring order */
	uint32_t racks, zones;  /* distinct racks and zones among them */
	uint32_t rack_hops;     /* ring hops (server to next, last to first) between racks */
	uint32_t zone_hops;     /* ... between zones */
	char msg[WL_ERR_LEN];   /* refused: "FILE:LINE: job NAME: ..." */
};

struct wl_schedule {
	uint32_t n;              /* as many as jobs */
	struct wl_place *places; /* in arrival order */
	uint32_t refused;
	uint32_t *owner;         /* [server] -> index into places, or UINT32_MAX: free */
};

/*
 * The cluster of a topology. Returns 0, or -1 with err set when it has no
 * hosts or is out of memory. Free with wl_cluster_free().
 */
int wl_cluster_init(struct wl_cluster *c, const struct topo *t, struct wl_err *err);
void wl_cluster_free(struct wl_cluster *c);

/*
 * Place every job of js on c. policy: the policy of a job that names none,
 * or -1 for the file's (topology-aware when the file has none either); seed:
 * the random policy's. Returns 0 when every job was placed, 1 when some were
 * refused (each place's msg says why: the job's name, its GPUs and the free
 * GPUs; a GPU count that is not a multiple of the servers' GPUs), -1 on
 * out of memory (err set). Free s with wl_schedule_free() whatever the result.
 */
int wl_sched_place(const struct wl_cluster *c, const struct wl_jobs *js, int policy,
		   uint64_t seed, struct wl_schedule *s, struct wl_err *err);
void wl_schedule_free(struct wl_schedule *s);

/* splitmix64 (Steele, Lea, Flood 2014): the next number of *state. */
uint64_t wl_sched_rand(uint64_t *state);

/*
 * The hosts of a place in ring order as `hosts=` takes them, "a,b,c", into
 * buf. Returns the length it needs (excluding the NUL), like snprintf.
 */
size_t wl_place_hosts(const struct wl_cluster *c, const struct wl_place *p, char *buf,
		      size_t len);

/*
 * Write an SVG picture of s: every server a cell, grouped by rack and zone,
 * coloured by its job, with a legend (wl_svg.c). Returns 0, or -1 when out
 * of memory or when writing fails (ferror).
 */
int wl_sched_svg(const struct wl_cluster *c, const struct wl_schedule *s, FILE *f);

#endif /* WL_SCHED_H */
