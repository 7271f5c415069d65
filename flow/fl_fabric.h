/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fl_fabric: a flow-level fabric engine. Messages are fluid flows over paths
 * of links; the flows crossing a link share it by max-min fairness
 * (progressive filling), on a virtual clock in integer nanoseconds. Built for
 * tens of thousands of endpoints: state per link and per flow only, nothing
 * per packet, and when a flow starts or ends only the flows connected to it
 * through shared links (its component) get new rates. libc only: no DPDK, no
 * wall clock. See flow/README.md for the model and what it leaves out.
 *
 * Units: capacity in bit/s, times in ns, sizes in bytes. A flow's rate is a
 * whole number of bit/s (fair shares are rounded down, so the rates on a link
 * never add up to more than its capacity).
 *
 * Errors: functions returning int return 0 (or a count) on success and a
 * negative errno on failure: -EINVAL bad argument, -ENOENT unknown link or
 * flow id, -ENOMEM out of memory, -EDEADLK nothing can progress. On error
 * nothing changes.
 */
#ifndef FL_FABRIC_H
#define FL_FABRIC_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define FL_MAX_HOPS 8 /* links in a path: a 3-tier Clos host-to-host path has 6 */
#define FL_TIME_INF UINT64_MAX /* "never" */
#define FL_TIME_MAX (UINT64_C(1) << 62) /* latest start time accepted (~146 years) */
#define FL_BPS_MIN UINT64_C(1000000) /* 1 Mbit/s: keeps shares >= 1 bit/s up to 1e6 flows a link */
#define FL_BPS_MAX UINT64_C(10000000000000) /* 10 Tbit/s */
#define FL_PROP_MAX_NS UINT64_C(1000000000000) /* 1000 s */
#define FL_REFILL_MAX_NS UINT64_C(1000000000) /* 1 s: fl_config.refill_ns */
#define FL_LINK_ALL UINT32_MAX /* fl_mismatch.link for the fabric's totals */

/*
 * Default first-packet payload: 4096 B, the largest InfiniBand path MTU
 * (IBTA Architecture Specification Vol. 1: MTUs 256 .. 4096; rdma-core's
 * enum ibv_mtu, IBV_MTU_4096), the active MTU of RoCE NICs on a 9000 B
 * Ethernet MTU.
 */
#define FL_MTU_DEFAULT 4096u
/*
 * Bytes a RoCEv2 packet takes on the wire besides its payload:
 *   Ethernet header 14 + FCS 4 (IEEE 802.3-2018, 3.1.1)
 *   preamble + SFD 8 and the minimum inter-packet gap 12 (96 bit times;
 *     IEEE 802.3-2018, 4.4.2)
 *   IPv4 header 20 (RFC 791, no options) + UDP header 8 (RFC 768)
 *   BTH 12 (IBTA Vol. 1, 9.2) + ICRC 4 (IBTA Vol. 1 Annex A17, RoCEv2)
 * = 82. No VLAN tag and no RETH/AETH extension header.
 */
#define FL_PKT_OVERHEAD 82u

struct fl_fabric;

struct fl_config {
	uint32_t mtu_bytes; /* first packet's payload; 0: FL_MTU_DEFAULT */
	bool full;          /* recompute every flow's rate at every event (reference, benchmark; a
			     * refill_ns local fill still fills the changed links' flows only) */
	/*
	 * 0 (the default): exact max-min rates after every instant with a flow
	 * start or end. Else an approximation that bounds the refilling work:
	 * at such an instant only the flows on the links that changed get new
	 * rates, max-min fair within what they had plus what those links had
	 * left; every other flow keeps its rate. refill_ns after the first such
	 * change, the components of every link changed since get exact max-min
	 * rates. Rates never exceed a link's capacity; between refills a flow
	 * can be off its max-min share (flow/README.md, "Refill period").
	 * At most FL_REFILL_MAX_NS.
	 */
	uint64_t refill_ns;
	/*
	 * Optional: called with a flow's cookie when its last byte is sent (not
	 * for a 0-byte flow), from inside fl_advance / fl_run_until at that
	 * instant, before the rates are recomputed. It must not call into the
	 * fabric: a driver records the cookie and acts after the call returns
	 * (a NIC's queue pair starts its next message then: dataplane/hosts/
	 * dp_flowrun.c). NULL: none.
	 */
	void (*sent)(void *ctx, uint64_t cookie);
	void *sent_ctx;
};

/* A delivered flow: its last byte reached the end of its path at finish_ns. */
struct fl_done {
	uint64_t cookie;    /* as given to fl_flow_start() */
	uint64_t start_ns;
	uint64_t finish_ns;
	uint64_t bytes;
	uint32_t flow;      /* its id (free for reuse from now on) */
};

/* Work counters, cumulative since fl_create(). */
struct fl_stats {
	uint64_t events;        /* flow starts and flow ends (last byte sent) */
	uint64_t batches;       /* instants at which events were handled (or, with refill_ns, a refill was due) */
	uint64_t recomputes;    /* water-filling passes (at most one per batch) */
	uint64_t flows_touched; /* flows whose rates a pass recomputed, summed */
	uint64_t links_touched; /* links a pass visited, summed */
	uint64_t rate_changes;  /* flows whose rate a pass changed */
	uint64_t delivered;     /* flows delivered */
	uint64_t local_fills;   /* refill_ns: fills of only the changed links' flows (not in recomputes) */
};

/* Where fl_check_bytes() found sent != delivered + in_flight. */
struct fl_mismatch {
	uint32_t link;      /* link id, or FL_LINK_ALL for the fabric's totals */
	uint64_t sent;      /* bytes counted as sent (on this link) */
	uint64_t delivered; /* bytes of delivered flows (that crossed this link) */
	uint64_t in_flight; /* bytes sent by flows not yet delivered */
};

/* A fabric with no link and no flow at time 0 (cfg NULL: defaults). NULL when out of memory,
 * cfg->mtu_bytes > 1 GiB or cfg->refill_ns > FL_REFILL_MAX_NS. */
struct fl_fabric *fl_create(const struct fl_config *cfg);
/* Frees the fabric and everything in it. NULL is allowed. */
void fl_destroy(struct fl_fabric *fab);

/*
 * Adds a link of bps bit/s (FL_BPS_MIN .. FL_BPS_MAX) and propagation delay
 * prop_ns (<= FL_PROP_MAX_NS); *id gets its id (0, 1, 2, ... in order).
 * Returns 0, -EINVAL for a capacity or delay out of range, -ENOMEM.
 */
int fl_link_add(struct fl_fabric *fab, uint64_t bps, uint64_t prop_ns, uint32_t *id);

/*
 * Paces link's sender at bps, below the link's rate: its flows share bps,
 * and each packet still takes the link's rate on the wire (a flow's latency).
 * Before any flow crosses it. Returns 0, or -EINVAL for an unknown link, a
 * rate out of FL_BPS_MIN .. the link's rate, or a link already in use.
 */
int fl_link_pace(struct fl_fabric *fab, uint32_t link, uint64_t bps);

/*
 * Starts a flow of bytes over path[0 .. n_hops - 1] (1 .. FL_MAX_HOPS link
 * ids, each at most once) at start_ns (>= fl_now()); *id gets its id, which is
 * reused once the flow is delivered. From start_ns it shares each link of its
 * path; when its last byte is sent it leaves them, and it is delivered
 * fl_flow_latency() ns later. A flow of 0 bytes is delivered at start_ns plus
 * its latency (one header-only packet) and takes no bandwidth.
 * Returns 0, -EINVAL (no path, too long, a link twice, start in the past or
 * after FL_TIME_MAX), -ENOENT (unknown link id), -ENOMEM.
 */
int fl_flow_start(struct fl_fabric *fab, const uint32_t *path, unsigned n_hops,
		  uint64_t bytes, uint64_t start_ns, uint64_t cookie, uint32_t *id);
/*
 * fl_flow_start for weight (1 .. FL_MAX_WEIGHT) flows of bytes each on the
 * same path from the same instant, as one flow: it counts as weight flows on
 * each of its links (weight max-min shares, so its rate is weight times what
 * each would get and it ends when each would), carries weight x bytes, and
 * has the latency of one of them (a packet of min(bytes, mtu)). Same errors,
 * and -EINVAL for a weight out of range.
 */
#define FL_MAX_WEIGHT 65535u
int fl_flow_start_weighted(struct fl_fabric *fab, const uint32_t *path, unsigned n_hops,
			   uint64_t bytes, uint32_t weight, uint64_t start_ns, uint64_t cookie,
			   uint32_t *id);

/*
 * Moves the clock to the next instant at which a flow is delivered, handling
 * every flow start and end up to it; *now_ns (may be NULL) gets that time.
 * Returns the number of flows delivered at it (> 0; read them with
 * fl_done_pop()), 0 when no flow is left, -EDEADLK when flows are left but
 * none can progress (all at rate 0: more than 1e6 flows on a slow link).
 */
int fl_advance(struct fl_fabric *fab, uint64_t *now_ns);

/*
 * Handles every event up to and including t_ns and sets the clock to t_ns.
 * Returns the number of flows delivered (at most INT_MAX), or -EINVAL when
 * t_ns < fl_now().
 */
int fl_run_until(struct fl_fabric *fab, uint64_t t_ns);

/* The clock (ns). */
uint64_t fl_now(const struct fl_fabric *fab);
/* Time of the next event (start, end, delivery, or a refill due: refill_ns), FL_TIME_INF if none;
 * the clock itself while flows started now wait for their rates. */
uint64_t fl_next_event_ns(const struct fl_fabric *fab);
/* Flows started and not yet delivered. */
uint32_t fl_live_flows(const struct fl_fabric *fab);
/* Copies up to max delivered flows, oldest first, and forgets them. Returns how many. */
size_t fl_done_pop(struct fl_fabric *fab, struct fl_done *out, size_t max);

/* A live flow's current rate in bit/s (0 before its start and once its last byte is sent). 0 or -ENOENT. */
int fl_flow_rate(const struct fl_fabric *fab, uint32_t flow, uint64_t *bps);
/* Bytes a live flow has sent by fl_now() (whole bytes, rounded down). 0 or -ENOENT. */
int fl_flow_sent(const struct fl_fabric *fab, uint32_t flow, uint64_t *bytes);
/*
 * A live flow's latency: the sum over its path of the propagation delay and
 * of one packet's serialization, ceil((min(bytes, mtu) + FL_PKT_OVERHEAD) x
 * 8e9 / bps) ns per link. 0 or -ENOENT.
 */
int fl_flow_latency(const struct fl_fabric *fab, uint32_t flow, uint64_t *ns);
/*
 * The latency a flow of bytes over path[0 .. n_hops - 1] would have
 * (fl_flow_latency's sum), without starting one: a driver times a
 * header-only packet (bytes 0) itself instead of making it a flow.
 * 0, -EINVAL (no ns, n_hops 0 or over FL_MAX_HOPS, a link twice), -ENOENT
 * (an unknown link).
 */
int fl_path_latency(const struct fl_fabric *fab, const uint32_t *path, unsigned n_hops,
		    uint64_t bytes, uint64_t *ns);
/* Bytes sent over a link by fl_now() and bytes of delivered flows that crossed it. 0 or -ENOENT. */
int fl_link_bytes(const struct fl_fabric *fab, uint32_t link, uint64_t *sent, uint64_t *delivered);

/* Copies the work counters into *st. */
void fl_stats_get(const struct fl_fabric *fab, struct fl_stats *st);

/*
 * Test only (rocelab-dp's ROCELAB_AUDIT_STEAL, dataplane/fabric/dp_audit.h):
 * the next flow delivered over link id link, in any fabric of this process,
 * leaves its bytes out of that link's delivered count, a loss
 * fl_check_bytes() must find and name. Once: the link is disarmed then.
 * FL_LINK_ALL disarms. Safe from any thread.
 */
void fl_test_steal(uint32_t link);

/*
 * Byte conservation: the bytes sent equal the bytes delivered plus those in
 * flight (sent by flows not yet delivered), for the fabric and for each link.
 * Returns 0 when they balance, 1 at the first mismatch (described in *m; the
 * fabric's totals first, then links in id order), -ENOMEM.
 */
int fl_check_bytes(const struct fl_fabric *fab, struct fl_mismatch *m);
/*
 * Capacity: the rates of the flows crossing each link add up to at most its
 * capacity (and, with refill_ns, the capacity it keeps as left over is the
 * rest). Returns 0, or 1 with *link set to the first link that fails.
 */
int fl_check_rates(const struct fl_fabric *fab, uint32_t *link);

#endif /* FL_FABRIC_H */
