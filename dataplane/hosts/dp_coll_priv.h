/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_coll_priv.h: what the collective driver's files (dp_coll.c,
 * dp_coll_lanes.c, dp_coll_spec.c) share with each other and with dp_nic.c,
 * as rxe_loc.h is rxe's: the collective's state, the functions one file
 * calls in another. No DPDK: the driver's unit tests include it
 * (tests/dataplane/test_coll_driver.c, which stands in for dp_nic.c's
 * dp_nic_arm). Not for use outside hosts/.
 */
#ifndef DP_COLL_PRIV_H
#define DP_COLL_PRIV_H

#include <stdio.h>

#include "dp_coll.h"

/*
 * The NICs' logical process, whose events key the collectives' timers:
 * fabric/dp_types.h's DP_LP_NICS (dp_nic.c checks they are equal; the
 * driver does not include the fabric's headers).
 */
#define DP_COLL_LP 1u

/*
 * One lane's part of a collective split into lanes, frozen when it ended
 * (its thread may poll the lane again: after a failure, say), or taken at the
 * run's end; plain data: under MPI ranks it travels as it is (to every rank
 * at each size of a sweep, dp_nics_sizes_next; to rank 0 at the run's end).
 * Written by the lane's thread, read by the one that ends the collective
 * after the lanes' count says every lane wrote its own.
 */
struct coll_lane {
	struct ne_coll_lane_rec rec;
	int64_t wrong;              /* data=on: wrong elements of its ranks' outputs */
	uint8_t ended;              /* rec is the lane at its end (done or failed) */
	uint8_t taken;              /* rec holds the lane (ended, or taken at the run's end) */
};

struct dp_coll;

/*
 * A lane's proxy-thread wake-up (proxy costs on): its ranks' threads busy
 * until at, on the lane's engine (without lanes: lane 0, the NICs'
 * partition's).
 */
struct coll_proxy_wake {
	struct dp_coll *c;
	uint32_t lane;
	uint64_t at;                /* pending; 0: none */
};

struct dp_coll {
	struct dp_nics *ns;
	uint32_t id;               /* its place among the run's collectives, from 1 */
	char spec[256];
	struct ne_coll_config cfg;
	uint32_t *rank_nic;        /* [nranks] index into ns->h */
	uint32_t *server_of;       /* [nranks] each rank's server (cfg.server_of); NULL: no servers */
	uint32_t *gpu_of;          /* [nranks] each rank's GPU (cfg.gpu_of); only with order=nccl */
	struct ne_nic **nics;      /* [nranks] */
	uint64_t size_min, size_max, size;
	/* inplace=on: each size runs twice, out-of-place then in-place, as
	 * nccl-tests does; the lines both passes print are held until the
	 * size's result line, which needs both (coll_put) */
	bool in_place;
	bool in_place_pass;        /* the run in progress is its size's in-place pass */
	bool holding;              /* coll_put holds (from a size's first run to its line) */
	char *held;                /* the held lines (malloc'ed; NULL: none) */
	uint32_t *first_qpn;       /* [nranks]: each NIC's next QPN as the out-of-place pass began */
	size_t held_len;
	struct ne_coll *run;       /* the size in progress */
	bool run_ended;            /* not split: run's size ended (its lines out), kept until the next starts */
	bool finished, failed;
	uint32_t sizes_done;
	struct dp_coll_size *done;  /* [n_done]: each measured size's result, for dp_nics_coll_view */
	uint32_t n_done;
	int32_t cur;                /* done[cur] is the size in progress's; -1: none kept yet */
	/* summed over the sizes run, for the totals line */
	struct ne_coll_stats sum;
	uint64_t proxy_busy_max_ns; /* per size, the busiest rank's proxy time */
	struct coll_proxy_wake *pwake; /* [ns->n_lanes] */
	struct ne_coll_hist lat, wait; /* per-message latency, summed over the sizes */
	FILE *series;               /* --coll-series: active-QP rows, CSV; NULL: off */
	const char *series_path;
	/* split into lanes (ns->n_lanes > 1): each size's run is created and
	 * split at its start (the first at set-up, the next ones as global
	 * events) and kept until the next one's; each lane counts itself once
	 * when its part ended (lane[l], its thread's), the last to count ends
	 * the size */
	bool split;
	uint64_t split_start_ns;    /* when its first size starts */
	uint32_t first_lane;        /* the lane whose start counts as the one engine's event; UINT32_MAX none */
	uint32_t *lane_of;          /* [nranks]: each rank's lane */
	uint32_t *lane_left;        /* [n_lanes]: sizes the lane has still to end (its thread's, and
				     * between windows; a lane without a rank ends each as it starts):
				     * while above 0 its partition is not idle */
	bool next_scheduled;        /* the next size's start is on the fabric engine (dp_nics_sizes_next) */
	struct coll_lane *lane;     /* [n_lanes] */
	struct ne_coll **lane_run;  /* [n_lanes]: ne_coll_lane(run, l), looked up once */
	uint32_t lanes_ended;       /* atomic */
	/* rocelab-dp --workload (dp_job.c): called once, at now, when the
	 * collective finished its last size or failed (NULL: nothing) */
	void (*on_end)(void *ctx, struct dp_coll *c, uint64_t now);
	void *on_end_ctx;
	uint32_t on_end_arg;
};

/*
 * dp_nic.c: wake nh at t unless it is woken earlier (a direct call: the
 * collective's poll, twice per NIC event, arms the NICs it gave work).
 */
void dp_nic_arm(struct dp_nic_host *nh, uint64_t t, uint64_t now);

/*
 * The RC transport's timeout (IB's exponent: 4.096 us x 2^t). Virtual clock:
 * 10, 4.2 ms, far above fabric RTTs, as on real clusters. Live clock: 14, 67
 * ms: the fabric's threads share the machine's cores and can be off the CPU
 * for milliseconds; a timeout that fires on such a delay spends the 7 retries
 * on frames that are only late, and a live collective on a loaded machine
 * failed with "transport retry counter exceeded" (seen under valgrind every
 * time, and beside a busy loop about one run in five).
 */
static inline uint8_t dp_nics_rc_timeout(const struct dp_nics *ns)
{
	return ns->fab_eng->mode == DP_CLOCK_LIVE ? 14 : 10;
}

/* dp_coll.c */
void coll_cannot_start(struct dp_coll *c, int e);
int coll_create_run(struct dp_coll *c);
void coll_failed(struct dp_coll *c);
int coll_next_size(struct dp_coll *c, uint64_t end_ns);
/* The runs of c's sweep: its sizes, times 2 with inplace=on. */
uint32_t coll_nruns(const struct dp_coll *c);
void coll_poll(struct dp_coll *c, uint32_t lane, uint64_t now);
/* c's counters summed over its sizes, " messages=... msg_wait_p99_us=..." (the totals line's end) */
void coll_print_totals(const struct dp_coll *c, FILE *out);
void coll_size_done(struct dp_coll *c, uint64_t now);
/* The lines c holds (inplace=on) out now: the size's result line first when
 * its out-of-place pass ended (its in-place half N/A). For a failure, a run
 * that stopped. */
void coll_release_held(struct dp_coll *c);
void coll_start_failed(struct dp_coll *c, const char *why);
void coll_start_size(void *obj, uint64_t arg, uint64_t now);

/* dp_coll_lanes.c */
void coll_lane_check(struct dp_coll *c, uint32_t lane, const struct ne_coll *run,
			    bool failed, uint64_t now);
int coll_lanes_begin(struct dp_coll *c, uint64_t start_ns, bool first);
void coll_lanes_next_size(void *obj, uint64_t arg, uint64_t now);
int coll_split(struct dp_coll *c, uint64_t start_ns, char *err, size_t errlen);
long coll_lanes_wrong(const struct dp_coll *c);

/* dp_coll_spec.c */
void coll_free(struct dp_coll *c);
int coll_parse_spec(struct dp_nics *ns, struct dp_coll *c, const char *spec, char *err,
			   size_t errlen);
int coll_take_ranks(struct dp_nics *ns, struct dp_coll *c, char *err, size_t errlen);
/* The servers of c's ranks (hosts host[0..nranks-1]) into c->cfg when t has
 * servers (NVLink between GPUs of one); with order_nccl each rank's GPU too
 * (channel rings). 0, or -1 (out of memory). */
int coll_servers(const struct topo *t, struct dp_coll *c, const uint32_t *host, bool order_nccl);
/* order=nccl: the n ranks' hosts host[] (in hosts= order) dealt again in NCCL's
 * ring order through each server (dp_coll_spec.c). 0, or -1 with "order=nccl:
 * why" in msg (a host that is no server's GPU; out of memory). */
int coll_order_nccl(const struct topo *t, uint32_t *host, uint32_t n, char *msg, size_t cap);
/* With lanes: 0 when each server's ranks of c are in one lane, else -1 with
 * "--coll: server S spans partitions ..." in err. */
int coll_servers_split_check(const struct dp_coll *c, char *err, size_t errlen);

/*
 * After a NIC's event: its collective's poll; for a NIC in none (an --rdma
 * end), every collective's, which arms the NICs listed meanwhile. (Twice per
 * NIC event: inlined, as before lanes.)
 */
static inline __attribute__((always_inline)) void poll_colls(struct dp_nic_host *nh, uint64_t now)
{
	struct dp_nics *ns = nh->owner;

	if (nh->coll) {
		coll_poll(nh->coll, nh->lane, now);
		return;
	}
	for (uint32_t i = 0; i < ns->n_colls; i++)
		coll_poll(ns->colls[i], nh->lane, now);
}

/* Put nh on the list of NICs whose wake-up the next coll_poll looks at. */
static inline __attribute__((always_inline)) void wake_list_add(struct dp_nic_host *nh)
{
	struct dp_nics *ns = nh->owner;
	struct dp_nics_lane *ln = &ns->lane[nh->lane];

	if (nh->listed)
		return;
	nh->listed = true;
	ln->wake[ln->n_wake++] = (uint32_t)(nh - ns->h);
}

/*
 * The engine the NICs' shared work (collective, --rdma transfers) runs on
 * without lanes: their partition's, where every emulated host is (dp_part.h),
 * which dp_nics_create noted.
 */
static inline struct dp_engine *nics_eng(const struct dp_nics *ns)
{
	return ns->eng;
}

#endif /* DP_COLL_PRIV_H */
