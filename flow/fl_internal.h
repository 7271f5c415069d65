/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fl_internal: the flow engine's state, shared by its files (not part of the
 * API). Per link and per flow only; a flow's hops are intrusive list nodes of
 * its links' lists, so a flow leaves its links in O(hops).
 */
#ifndef FL_INTERNAL_H
#define FL_INTERNAL_H

#include "fl_fabric.h"
#include "fl_heap.h"

#define FL_NIL UINT32_MAX
/* A flow's bits are counted in nano-bits (bits x 1e9): a rate in bit/s times
 * a time in ns is then exact, with no rounding while a flow is sent. */
#define FL_NBITS_PER_BYTE UINT64_C(8000000000)
#define FL_NS_PER_S UINT64_C(1000000000)

typedef unsigned __int128 fl_u128;

enum fl_state {
	FL_FREE,     /* on the free list */
	FL_PENDING,  /* event: its start */
	FL_SENDING,  /* on its links; event: its last byte sent (FL_TIME_INF at rate 0) */
	FL_DRAINING, /* off its links; event: its delivery */
};

struct fl_link {
	uint64_t bps, prop_ns;
	uint64_t wire_bps;  /* its packets' rate on the wire (path_latency): bps unless paced (fl_link_pace) */
	uint64_t sent;      /* bytes sent over it, as of each flow's last settle */
	uint64_t delivered; /* bytes of delivered flows that crossed it */
	uint32_t head;      /* first hop node of its SENDING flows, FL_NIL */
	uint32_t n;         /* SENDING flows on it, by weight (a flow of weight w counts w) */
	uint32_t mark;      /* fabric epoch of the last component walk that reached it */
	uint32_t wf_n;      /* water-filling: flows not yet frozen */
	uint32_t seeded;    /* in fab->seeds */
	uint32_t pending;   /* in fab->pend */
	uint64_t wf_rem;    /* water-filling: capacity not yet given */
	uint64_t resid;     /* refill_ns only: capacity its SENDING flows' rates leave */
};

/* Hop h of flow f is node f * FL_MAX_HOPS + h of its link's list. */
struct fl_hop {
	uint32_t link, prev, next;
};

struct fl_flow {
	fl_u128 rem;        /* nano-bits left to send, as of last_ns */
	uint64_t bytes, cookie;
	uint64_t start_ns, last_ns;
	uint64_t rate, new_rate; /* bit/s; new_rate: water-filling result */
	uint64_t lat_ns;
	uint64_t sent;      /* bytes sent as of last_ns (rounded down) */
	uint32_t mark;      /* epoch: in the component being recomputed */
	uint32_t frozen;    /* epoch: its rate is fixed in this pass */
	uint32_t next_free;
	uint32_t weight;    /* flows it stands for (fl_flow_start_weighted), 1 */
	uint8_t state, n_hops;
};

struct fl_fabric {
	struct fl_config cfg;
	uint64_t now;
	struct fl_link *links;
	uint32_t n_links, cap_links;
	struct fl_flow *flows;
	struct fl_hop *hops;     /* cap_flows x FL_MAX_HOPS */
	uint32_t cap_flows, free_head, n_live;
	struct fl_heap events;   /* id = flow, key = its next event time */
	struct fl_heap wf;       /* id = link, key = its fair share */
	uint32_t epoch;
	uint32_t *seeds, n_seeds;               /* links whose flows changed (cap_links) */
	uint32_t *clinks, n_clinks;             /* component's links (cap_links) */
	uint32_t *cflows, n_cflows;             /* component's flows (cap_flows) */
	uint32_t *pend, n_pend;                 /* refill_ns: links changed since the last refill (cap_links) */
	uint64_t refill_at;                     /* refill_ns: when pend is refilled; FL_TIME_INF */
	struct fl_done *done;    /* ring of delivered flows */
	size_t done_head, n_done, cap_done;
	uint64_t sent_total, delivered_total;
	struct fl_stats stats;
	uint64_t starts_unbatched; /* data flows started (fl_start) since the last batch: its events */
};

static inline struct fl_hop *fl_hop_of(const struct fl_fabric *fab, uint32_t f, unsigned h)
{
	return &fab->hops[(size_t)f * FL_MAX_HOPS + h];
}

/* Whole bytes sent by flow f if settled at t (no change to f). */
uint64_t fl_sent_at(const struct fl_flow *f, uint64_t t);
/* Brings f's rem and sent to fab->now, crediting the bytes to its links. */
void fl_settle(struct fl_fabric *fab, uint32_t f);
/* Time f's last byte is sent at its current rate: FL_TIME_INF at rate 0. */
uint64_t fl_send_end(const struct fl_flow *f);
/* Flow f (FL_PENDING) starts at fab->now: a header-only one waits its
 * latency; one with bytes joins its links at rate 0, and the next batch, at
 * fab->now, gives it its rate (fl_event.c). */
void fl_start(struct fl_fabric *fab, uint32_t f);
/* Records that the flows on link l changed (its component must be recomputed). */
void fl_seed(struct fl_fabric *fab, uint32_t l);
/* When links were seeded: new rates for every flow connected to them (every
 * flow with cfg.full), new event times for those whose rate changed; clears
 * the seeds. local (refill_ns): new rates for the flows on the seeded links
 * only, the others' rates kept (fl_rate.c). */
void fl_recompute(struct fl_fabric *fab, bool local);

#endif /* FL_INTERNAL_H */
