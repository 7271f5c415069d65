/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_nic_priv.h: what the files of hosts/ that serve the emulated NICs share
 * (dp_nic.c, dp_rdma.c, dp_coll.c, dp_coll_lanes.c, dp_coll_spec.c), as
 * rxe_loc.h is rxe's: the transfer and collective state, and the functions
 * one file calls in another. Not for use outside hosts/.
 */
#ifndef DP_NIC_PRIV_H
#define DP_NIC_PRIV_H

#include <stdio.h>

#include "dp_nic.h"


struct dp_rdma {
	char spec[160];
	struct dp_nics *ns;
	uint32_t src, dst;          /* indices into ns->h */
	uint32_t qps, size, count, depth, mtu;
	uint8_t dscp;
	enum ne_sport_policy sport;
	uint64_t start_ns;

	uint8_t *sbuf, *dbuf;
	uint32_t skey, dkey;
	struct ne_cq *scq, *dcq;
	uint32_t *sqpn, *dqpn;
	uint32_t *outstanding;
	uint32_t next_qp;
	struct dp_rdma *next_src;   /* the source NIC's next transfer */
	uint64_t posted, completed, errors;
	uint64_t first_post_ns, done_ns;
	bool started, finished, data_ok;
};

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
	struct ne_nic **nics;      /* [nranks] */
	uint64_t size_min, size_max, size;
	struct ne_coll *run;       /* the size in progress */
	bool run_ended;            /* not split: run's size ended (its lines out), kept until the next starts */
	bool finished, failed;
	uint32_t sizes_done;
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
};

/* dp_nic.c */
void dp_nic_arm(struct dp_nic_host *nh, uint64_t t, uint64_t now);
void dp_nic_service(struct dp_nic_host *nh, uint64_t now);

/* dp_rdma.c */
uint8_t dp_nics_rc_timeout(const struct dp_nics *ns);
void dp_rdma_progress(struct dp_rdma *r, uint64_t now);

/* dp_coll.c */
void coll_cannot_start(struct dp_coll *c, int e);
int coll_create_run(struct dp_coll *c);
void coll_failed(struct dp_coll *c);
int coll_next_size(struct dp_coll *c, uint64_t end_ns);
uint32_t coll_nsizes(const struct dp_coll *c);
void coll_poll(struct dp_coll *c, uint32_t lane, uint64_t now);
void coll_size_done(struct dp_coll *c, uint64_t now);
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
 * without lanes: their partition's, where every emulated host is (dp_part.h).
 */
static inline struct dp_engine *nics_eng(const struct dp_nics *ns)
{
	return ns->n ? ns->fab->host[ns->h[0].host].eng : ns->fab->eng;
}

#endif /* DP_NIC_PRIV_H */
