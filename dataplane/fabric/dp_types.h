/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_types: the fabric's state (dp_fabric.h describes the model): channels,
 * switches, hosts, the fabric. No mbuf is touched through these types, so
 * the switch's forwarding decision (dp_pipeline.h) and the construction of
 * this state (dp_fabric_build.h) compile without DPDK's mbuf headers; the one
 * DPDK type inside is the reciprocal a channel divides by.
 */
#ifndef DP_TYPES_H
#define DP_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_reciprocal.h>

#include "dp_engine.h"
#include "dp_flows.h"
#include "dp_te.h"
#include "pfc_mmu.h"
#include "pfc_pause.h"
#include "pfc_watchdog.h"
#include "rl_mem.h"
#include "rl_nexthop.h"
#include "rl_parse.h"
#include "topo_route.h"
#include "topo.h"

/* rl_zalloc_lines() aligns to RL_LINE: the line-aligned structs below need DPDK's line to be no longer */
_Static_assert(RTE_CACHE_LINE_SIZE <= RL_LINE, "a cache line longer than rl_mem.h's RL_LINE");

struct rte_lpm;
struct rte_mbuf;
struct rte_mempool;
struct rte_ring;

#define DP_NUM_PRIO 8

/* parse_err[] slots: one per negative rl_parse status, RL_PARSE_BAD_ARG the last; slot 0 counts unknown ones. */
#define DP_PARSE_ERR_SLOTS (1 - RL_PARSE_BAD_ARG)

/* A growable FIFO of mbufs. */
struct dp_fifo {
	struct rte_mbuf **slot;
	uint32_t head, n, cap; /* cap: a power of two */
	uint64_t bytes;
};

/*
 * The frames on a wire, in sending order, each with its arrival time beside
 * its pointer: the next arrival is known without touching the mbuf (a cache
 * miss per frame when thousands are in flight), and a frame's arrival reads
 * one line of the wire, not one of pointers and one of times.
 */
struct dp_wire_slot {
	struct rte_mbuf *m;
	uint64_t at; /* when m's last bit reaches the far end */
};

struct dp_wire {
	struct dp_wire_slot *slot;
	uint32_t head, n, cap; /* cap: a power of two */
};

/* Why a packet was dropped; counted per switch (and per channel for link drops). */
enum dp_drop {
	DP_DROP_PARSE,     /* malformed frame (rl_parse error) */
	DP_DROP_NOT_IP,    /* neither IPv4, ARP nor PFC */
	DP_DROP_IPV6_CTL,  /* ND/MLD/RS the leaf does not answer (only NS for its /64 is) */
	DP_DROP_TTL,       /* TTL 0 or 1 */
	DP_DROP_NO_ROUTE,  /* destination not in the fabric or unreachable */
	DP_DROP_MMU,       /* refused by the buffer (reason in the MMU's counters) */
	DP_DROP_LINK_DOWN, /* sent to or arriving over a link that is down */
	DP_DROP_LOSS,      /* the link's configured random loss */
	DP_DROP_QUEUE,     /* host NIC queue full */
	DP_DROP_NO_MBUF,   /* could not allocate a reply / PFC frame */
	DP_DROP_SEGMENTED, /* multi-segment mbuf that could not be linearized */
	DP_DROP_PFC_BAD,   /* malformed MAC control frame */
	DP_DROP_PFC_STORM, /* PFC watchdog: a queue paused too long was drained */
	DP_DROP_PROG,      /* the switch's .spec program dropped it (dp_swx.h) */
	DP_DROP_COUNT,
};


struct dp_fabric;

/*
 * Logical processes (dp_engine.h): DP_LP_GLOBAL, then the emulated NICs'
 * shared work (collectives, --rdma transfers), then every switch, every
 * host, and one key per channel for its wire's arrivals.
 */
#define DP_LP_NICS 1u
#define DP_LP_FIRST_NODE 2u

#define DP_XPEND 16 /* frames a cut link's sender gathers before it puts them on the ring */

/*
 * One priority's egress queue, with what sending from it reads and counts:
 * one cache line, so a frame touches one line of its priority's state.
 */
struct dp_prio_q {
	struct dp_fifo f;       /* the frames */
	int64_t deficit;        /* DWRR: credit in bytes */
	uint32_t quantum;       /* DWRR: credit per round */
	uint32_t peak_bytes;    /* the most f held (saturates at UINT32_MAX) */
	uint64_t tx_pkts, tx_bytes;
} __rte_cache_aligned;

/*
 * A link direction, in three groups that each start a cache line: what
 * both ends only read while the fabric runs; what the receiving end writes
 * (the wire, on_arrive); what the sending end writes (queues, pause state,
 * counters). On a link cut between threads (live, --workers) the two ends
 * run on two cores, and a line written by one and read by the other moves
 * between their caches on every frame: the sender's xring and ctrl.n shared
 * lines with the receiver's wire and tx_busy with rx_eng, and those loads
 * were a third of chan_kick's samples in the sending partition (perf, the
 * live workload of scripts/bench-parts.sh). The fields a frame's send and
 * delivery touch come first in each group, then one line per priority queue
 * (a fabric of thousands of channels does not stay in cache; a frame per hop
 * touches about 6 lines); what only failures, partitions, PFC and the
 * tables use comes last.
 */
struct dp_chan {
	/* ---- read by both ends, written only while the fabric is stopped ---- */
	struct dp_fabric *fab;
	/* where it runs: the transmitter in the sending node's partition, the
	 * wire's deliveries in the receiving node's (the same engine unless the
	 * link is cut between partitions, dp_part.h) */
	struct dp_engine *eng, *rx_eng;
	uint32_t lp, rx_lp, arr_key; /* LPs of the two ends; the key of its arrivals */
	struct topo_node_ref from, to;
	uint16_t from_port, to_port; /* switch ports (0 for a host end) */
	bool up;
	bool cross;                  /* cut between partitions: frames go through out[] */
	bool wd_on;                  /* the PFC watchdog (wd) runs on it */
	bool steal;                  /* test only (dp_audit.h): the next frame delivered vanishes uncounted */
	uint64_t rate_bps, delay_ns;
	struct rte_reciprocal_u64 rate_rcp; /* x / rate_bps without a division (exact) */
	double loss;
	struct rte_ring *xring;      /* cross, live: frames on their way to the receiving thread */
	struct rte_ring *xret;       /* cross, live: xring's mbufs back to the sending thread (see dp_chan_take_ring) */
	/* capture: called for every frame as its transmission starts */
	void (*capture)(void *ctx, struct dp_chan *c, struct rte_mbuf *m, uint64_t now_ns);
	void *capture_ctx;
	uint8_t dst_mac[6];          /* rewrite: the receiving port's or host's MAC */
	uint8_t src_mac[6];
	uint32_t link;
	uint8_t dir;                 /* 0: end[0] -> end[1] */
	uint64_t q_limit_bytes;      /* host NIC only (switch queues are the MMU's) */

	/* ---- the receiving end's: the wire's deliveries ---- */
	struct dp_wire wire __rte_cache_aligned; /* serialized, propagating */
	bool arrive_lost;            /* the wire's arrival timer could not be added: the next frame sent arms it */
	uint64_t rx_pkts;            /* frames the wire delivered to the far end's switch or host */

	/* ---- the sending end's: every frame, one line (packets and bytes sent
	 * are counted per queue: dp_count_chan_tx_pkts) ---- */
	bool tx_busy __rte_cache_aligned; /* a timer at free_at_ns will choose the next frame */
	uint8_t nonempty;            /* bit p: q[p].f holds packets */
	uint8_t rr;                  /* DWRR: the queue it visits next */
	uint64_t free_at_ns;         /* the end of the last frame sent */
	uint64_t ser_rem;            /* serialization remainder (bit-ns mod rate) carried between frames */
	uint64_t busy_ns;            /* time spent sending */
	struct dp_fifo ctrl;         /* PFC and ARP: sent first, never paused */
	struct dp_prio_q q[DP_NUM_PRIO];
	struct pfc_pause pause;

	/* ---- the sending end's: partitions, PFC's watchdog, the tables ---- */
	uint64_t kick_at_ns;         /* pending wake-up for a pause expiry; 0: none */
	struct dp_wire out[2];       /* cross, virtual: frames sent in windows of parity 0 / 1, not yet handed over */
	uint64_t xring_full;         /* cross, live: kicks that found xring full (the sender waited) */
	struct rte_mbuf *xpend[DP_XPEND]; /* cross, live: sent, for xring in one burst (dp_chan_flush_ring) */
	uint32_t n_xpend;
	struct pfc_watchdog wd;      /* switch egress only, when the fabric's watchdog is on */
	uint64_t wd_armed_at;        /* pending watchdog poll; 0: none */
	uint64_t rng;                /* loss */
	uint64_t ctrl_tx, ctrl_tx_bytes, pfc_tx; /* control frames sent (PFC and ARP), PFC frames sent */
	/* (both ends count here: drops are rare, so sharing their lines costs nothing) */
	uint64_t drops[DP_DROP_COUNT];
	/* of drops[]: frames lost after their transmission, counted by the sending end
	 * (loss, hand-over) and by the receiving end (wire, link down on arrival): two
	 * words, so that two workers never add to one */
	uint64_t drops_sent, drops_arrived;
	uint64_t flow_pkts;          /* of the tx counters: the flow engine's packets (--fabric flow), not frames */
	uint64_t audit_queued, audit_flight; /* MPI: the frames held in queues / in flight, summed over the ranks (dp_audit.h) */
} __rte_cache_aligned; /* (dp_fabric_build allocates them aligned) */

/*
 * A program that makes a switch's IPv4 forwarding decision in place of the
 * TTL, route and next-hop stages (dp_pipeline.c): dp_swx.h runs a DPDK SWX
 * .spec. decide gets the frame (d, len, its bytes owed by earlier hops
 * already applied to the TTL it reads; dp_pipeline.c's struct dp_frame), its
 * parse p, the port it arrived on and the virtual time now_ns; it returns the egress port, or -1 when the program dropped
 * the frame. One program belongs to one switch, and a switch runs on one
 * worker: decide is never called from two threads at once.
 */
struct dp_prog {
	/*
	 * The egress port of frame d (parsed as p), or -1: drop. *dscp holds
	 * the frame's DSCP on entry and the program's on return (the same
	 * when it writes none): the caller rewrites the frame and takes the
	 * egress queue from it.
	 */
	int (*decide)(struct dp_prog *pg, const uint8_t *d, uint32_t len, const struct rl_pkt *p,
		      uint16_t in_port, uint64_t now_ns, uint8_t *dscp);
};

struct dp_group {
	uint16_t n;                          /* members ever seen; index into port[] */
	uint16_t port[RL_NH_MAX_MEMBERS];
	uint64_t up_mask;                    /* members in the group now */
	struct rl_resilient rs;              /* TOPO_LB_RESILIENT only */
};

struct dp_switch {
	uint32_t idx;
	struct dp_engine *eng;       /* its partition's engine */
	uint32_t lp;
	const struct topo_switch *cfg;
	struct pfc_mmu *mmu;
	struct dp_chan **out;        /* [port] the channel this port sends on */
	uint64_t *pfc_timer_at;      /* [port] pending PFC refresh timer; 0: none */
	struct dp_group *group;      /* [leaf index] */
	struct rl_flowlet flowlet;   /* TOPO_LB_FLOWLET only */
	struct dp_prog *prog;        /* its .spec program (dp_swx.h), or NULL: the C stages decide */
	bool up;

	uint64_t rx_pkts, rx_bytes, fwd_pkts;
	uint64_t arp_replies, nd_replies, echo_replies, pfc_rx, ecn_marked;
	uint64_t drops[DP_DROP_COUNT];
	uint64_t pfc_no_mbuf;        /* of drops[DP_DROP_NO_MBUF]: PFC frames it could not make (it received none of them) */
	uint64_t parse_err[DP_PARSE_ERR_SLOTS]; /* by -rl_parse status */
	uint64_t *port_tx_pkts;      /* [port] forwarded out of it (flows per port) */
} __rte_cache_aligned; /* (its counters: switches of two partitions never share a line) */

struct dp_host {
	uint32_t idx;
	struct dp_engine *eng;       /* its partition's engine */
	uint32_t lp;
	const struct topo_host *cfg;
	struct dp_chan *tx, *rx;     /* host -> leaf, leaf -> host */
	uint64_t tx_pkts, tx_bytes, rx_pkts, rx_bytes;
	uint64_t pfc_rx;             /* PFC frames its NIC obeyed */
	int port_id;                 /* DPDK port, -1 when none */
} __rte_cache_aligned; /* (as dp_switch's) */

/* What reaches a host; the callee owns m. */
typedef void (*dp_host_rx_fn)(void *ctx, struct dp_host *h, struct rte_mbuf *m, uint64_t now_ns);

struct dp_fabric_opts {
	dp_host_rx_fn host_rx;
	void *host_rx_ctx;
	uint64_t host_queue_bytes;   /* per priority of a host NIC; 0 = 512 KiB */
	uint32_t flow_capacity;      /* flows whose path is recorded; 0: none */
	const struct pfc_watchdog_config *watchdog; /* PFC watchdog on switch egress; NULL: off */
	uint64_t seed;               /* link loss and flowlet choices */
};

struct dp_fabric {
	const struct topo *topo;
	struct dp_engine *eng;       /* the global events' engine (and every node's, unless partitioned) */
	struct rte_mempool *mp;
	struct topo_routes *routes;
	struct rte_lpm *lpm;         /* IPv4 destination -> host index */
	/* IPv4 destination (host order) -> host index, or -1: rte_lpm in the
	 * running fabric, the address scheme (topo_route.h) by default */
	int (*host_of_ipv4)(const struct dp_fabric *f, uint32_t addr);
	struct dp_fabric_opts opt;
	uint32_t n_chans;
	struct dp_chan *chans;       /* [2 * n_links], link l: 2l (end0->end1), 2l+1 */
	struct dp_switch *sw;
	struct dp_host *host;
	struct dp_flows flows;
	struct dp_te *te;            /* traffic engineering, or NULL (set by the owner) */
	uint64_t route_changes;
	uint64_t events_applied;
	uint32_t n_lp;               /* logical processes, including the arrival keys */
	uint64_t *lp_seq;            /* the LPs' sequence counters (dp_engine_set_lps) */
	uint32_t audit_flow_bad;     /* --fabric flow: collective sizes whose bytes did not balance (dp_audit.h) */
	bool audit_gathered;         /* the chans' audit_queued / audit_flight hold every rank's (dp_gather.h) */
};

/* The LP of a switch, a host, a channel's arrivals. */
static inline uint32_t dp_lp_switch(uint32_t s) { return DP_LP_FIRST_NODE + s; }
static inline uint32_t dp_lp_host(const struct dp_fabric *f, uint32_t h)
{
	return DP_LP_FIRST_NODE + f->topo->n_switches + h;
}
static inline uint32_t dp_lp_arrival(const struct dp_fabric *f, uint32_t chan)
{
	return DP_LP_FIRST_NODE + f->topo->n_switches + f->topo->n_hosts + chan;
}
static inline uint32_t dp_lp_node(const struct dp_fabric *f, struct topo_node_ref n)
{
	return n.kind == TOPO_NODE_SWITCH ? dp_lp_switch(n.index) : dp_lp_host(f, n.index);
}

#endif /* DP_TYPES_H */
