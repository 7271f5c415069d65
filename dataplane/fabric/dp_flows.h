/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_flows: which path each flow took through the fabric.
 *
 * A flow is (source, destination, protocol, ports, RoCEv2 destination QP):
 * the finest key any hash profile uses, so every QP of a connection is its
 * own flow. Each switch that forwards a packet of a flow records itself and
 * the port it chose; a later packet that leaves the same switch by another
 * port (flowlet switching, failover, TE) counts a path change. The table is
 * an rte_hash of bounded size: flows beyond it are counted, not tracked.
 * A direct-mapped memo of recent flows' slots sits in front of it (as many
 * entries as the table has flows, up to DP_FLOWS_MEMO_MAX): a flow's first
 * hop finds its slot there with one compare of the key, not a jhash and a
 * bucket probe per packet.
 */
#ifndef DP_FLOWS_H
#define DP_FLOWS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_spinlock.h>

#include "rl_parse.h"
#include "topo.h"

#define DP_FLOW_MAX_HOPS 8
#define DP_FLOWS_MEMO_MAX 65536 /* entries of the memo of recent flows, at most (a power of two) */

struct dp_flow_key {
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint32_t dqpn;  /* 0 for non-RoCE */
	uint8_t proto;
	uint8_t ip_version;
	uint8_t pad[2]; /* zero: the key is hashed as bytes */
};

struct dp_flow {
	struct dp_flow_key key;
	uint64_t pkts, bytes;   /* as seen by the first switch */
	uint64_t path_changes;
	uint8_t n_hops;
	uint32_t hop_switch[DP_FLOW_MAX_HOPS];
	uint16_t hop_port[DP_FLOW_MAX_HOPS];
	/* when each hop was first recorded, as the engine's (time, event key):
	 * the order of hops recorded in several processes (dp_flows_merge) */
	uint64_t hop_at[DP_FLOW_MAX_HOPS], hop_key[DP_FLOW_MAX_HOPS];
};

struct dp_flows {
	struct rte_hash *h;
	bool shared;            /* recorded from several partitions' threads: adding takes lock */
	rte_spinlock_t lock;
	struct dp_flow *flow;   /* [capacity], indexed by the hash's key position */
	/* [memo_mask + 1]: a recent flow's slot + 1 (0: none) in the low half,
	 * the high half of the mix of its key in the high, by the mix's low
	 * bits; a hint, checked against flow[slot].key before use */
	uint64_t *memo;
	uint32_t memo_mask;
	uint64_t memo_misses;   /* lookups the memo did not answer (they went to the hash) */
	uint32_t capacity;
	uint64_t untracked;     /* packets of flows that did not fit */
};

/* A table of capacity flows (0: disabled, every call is a no-op). Returns 0 or -ENOMEM with a message. */
int dp_flows_init(struct dp_flows *fl, uint32_t capacity, char *err, size_t errlen);
/* Free fl's table (its rte_hash too); fl is left disabled. */
void dp_flows_free(struct dp_flows *fl);
/* dp_flows_free() before rte_eal_cleanup: the rte_hash, on DPDK's heap, is left to it
 * (DPDK zeroes what it frees; dp_fabric_destroy_at_exit). */
void dp_flows_free_at_exit(struct dp_flows *fl);

/*
 * From now on switches of several threads record into fl (dp_part.h): adding
 * a flow or a hop takes a lock; the common case (a hop already recorded) only
 * reads, so threads do not fight over a lock per packet. The content does not depend on the threads' timing: a
 * flow's hops are added in time order, and hops in different partitions are
 * at least a window apart. (Which flows fit a full table does depend on it.)
 */
void dp_flows_share(struct dp_flows *fl);

/* When a hop is recorded: the engine's time and the key of the event that runs. */
struct dp_flow_when {
	uint64_t at, key;
};

/*
 * Switch sw forwarded packet p (len bytes) out of port at when; first_hop
 * when it came from a host. Returns the flow's slot, which stays the flow's for the
 * table's life (a later hop passes it to dp_flows_record_slot() and saves the
 * lookup), or -1 when the table is off or full (counted in untracked).
 */
int32_t dp_flows_record(struct dp_flows *fl, const struct rl_pkt *p, uint32_t len, uint32_t sw,
			uint16_t port, int first_hop, struct dp_flow_when when);

/*
 * Ask for the line of slot's flow that dp_flows_record_slot() reads and
 * writes (its hops), ahead of it: a switch does it as the frame comes in, so
 * the line (of tens of thousands of flows' at scale) comes while the switch
 * decides. slot as dp_flows_record() returned it (>= 0).
 */
static inline void dp_flows_prefetch_slot(const struct dp_flows *fl, int32_t slot)
{
	__builtin_prefetch(&fl->flow[slot].n_hops, 1);
}

/* dp_flows_record() for a packet whose slot an earlier hop returned (slot >= 0). */
void dp_flows_record_slot(struct dp_flows *fl, int32_t slot, uint32_t len, uint32_t sw,
			  uint16_t port, int first_hop, struct dp_flow_when when);

/* Flows tracked now. */
uint32_t dp_flows_count(const struct dp_flows *fl);

/* Fill out[] with up to max flows, most bytes first. Returns how many. */
uint32_t dp_flows_top(const struct dp_flows *fl, const struct dp_flow **out, uint32_t max);

/* "10.0.0.1:49458 > 10.0.1.1:4791 udp qp 17" */
void dp_flow_name(const struct dp_flow *f, char *buf, size_t len);
/* "leaf0:p5 > spine1:p1 > leaf1:p0" */
void dp_flow_path(const struct dp_flow *f, const struct topo *t, char *buf, size_t len);

/*
 * The tracked flows as an array of n struct dp_flow (malloc'ed, *out; free
 * it): what a rank sends for dp_flows_merge(). Returns 0 or -ENOMEM.
 */
int dp_flows_export(const struct dp_flows *fl, struct dp_flow **out, uint32_t *n);

/*
 * Add flows another table recorded (switches of other processes) into fl:
 * packets, bytes and path changes add up, the hops of both are merged in
 * the order they were first recorded, as one table recording all of them
 * would have them. Flows that do not fit are counted in untracked.
 */
void dp_flows_merge(struct dp_flows *fl, const struct dp_flow *in, uint32_t n, uint64_t untracked);

/* Print the top n flows with their paths. */
void dp_flows_print(const struct dp_flows *fl, const struct topo *t, uint32_t n, FILE *out);

#endif /* DP_FLOWS_H */
