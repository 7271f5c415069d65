/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pfc_mmu: the switch memory (MMU) model: how many bytes each (ingress port,
 * priority) and each (egress port, priority) queue holds, when a packet is
 * admitted or dropped, when the switch sends XOFF / XON upstream, and when a
 * packet is ECN-marked. It accounts; it does not store packets (the caller
 * keeps them in its own queues and reports each dequeue).
 *
 * Vocabulary
 *   PG       (ingress port, priority): the unit of PFC. Bytes are charged to
 *            the PG of the port the packet came in on.
 *   queue    (egress port, priority): the unit of tail drop and ECN marking.
 *   cell     the allocation unit: a packet of len bytes holds
 *            ceil(len / cell_bytes) cells; every byte count below is whole
 *            cells times cell_bytes unless it says "as given".
 *   lossless a priority in lossless_mask: never dropped for lack of buffer
 *            unless its headroom overflows; the switch pauses the upstream.
 *   lossy    any other priority: tail-dropped.
 *
 * Partitioning
 *   static   (deep-buffer spine, as Meta divides its CTSW buffers) the buffer
 *            is divided evenly over the ports: share = buffer / n_ports
 *            (rounded down to cells). Each port's share holds its headroom
 *            (n_lossless x headroom) and a pool = share - headroom that the
 *            port's priorities share. A PG may hold up to
 *            T = xoff_bytes (if set) or the pool, and the port's pool must
 *            have room. A hot port can never take another port's share.
 *   shared   (shallow-buffer leaf) reserved = n_ports x 8 x reserve_bytes,
 *            headroom = sum over ports of n_lossless x headroom, and
 *            shared pool = buffer - reserved - headroom. A PG first fills its
 *            reserve, then takes from the shared pool while its shared bytes
 *            stay <= T = alpha x (shared pool - shared bytes in use) (the
 *            Choudhury-Hahne dynamic threshold; xoff_bytes, if set, caps T).
 *            A burst can use most of the buffer when it is alone; many
 *            congested queues converge to alpha / (1 + n x alpha) each.
 *
 * Admission of a packet (in_port, out_port, prio, len)
 *   lossy:    dropped (PFC_MMU_DROP_EGRESS) when the egress queue would go
 *             above its limit (egress_limit_bytes; default: the port share in
 *             static mode, alpha x free shared in shared mode), else dropped
 *             (DROP_INGRESS / DROP_POOL) when its PG does not fit (above);
 *             otherwise admitted.
 *   lossless: admitted below the PG threshold. The first packet that does not
 *             fit puts the PG into XOFF (flag PFC_MMU_F_XOFF: the caller sends
 *             a PFC frame on in_port, see pfc_mmu_pfc_frame()) and, like every
 *             packet while the PG is in XOFF, goes into the PG's headroom.
 *             A packet that does not fit in the headroom is dropped
 *             (PFC_MMU_DROP_HEADROOM): with a correct headroom, never.
 *   Dequeue releases headroom bytes first, then shared, then reserve. The PG
 *   leaves XOFF (flag PFC_MMU_F_XON) when its headroom is empty and it is at
 *   least resume_offset_bytes below its (current) threshold.
 *
 * Headroom (per lossless PG; computed per port from its link)
 *   After the threshold is crossed, the upstream keeps sending at line rate
 *   until it has seen the XOFF and stopped. With R = link rate (bit/s),
 *   D = one-way cable delay, M = largest frame (bytes, no FCS), L = frame
 *   size the headroom is sized for (default M), 24 = FCS + preamble + IFG,
 *   84 = a PFC frame on the wire, Tresp = partner's response time (bits):
 *
 *     in-flight bits W = 8(M+24)   our XOFF waits behind a frame leaving us
 *                      + 8*84       the PFC frame itself
 *                      + 2 D R      data on the cable while XOFF travels up,
 *                                   and the last bits travelling back down
 *                      + Tresp      partner's MAC reacting (802.1Qbb bound)
 *                      + 8(M+24)    partner finishes the frame it started
 *     headroom = cells(M) x cell        the packet that crossed the threshold
 *              + ceil(W / 8(L+24)) x cells(L) x cell
 *
 *   The second term counts packets, not bytes, because each packet holds
 *   whole cells: with L = 64 and 256-byte cells a 88-byte wire slot costs 256
 *   bytes of buffer. Size for L = 64 when small lossless packets matter.
 *   Example: 100G, D = 100 ns (20 m), M = 1514, 802.1Qbb Tresp = 447488 bits,
 *   256-byte cells -> 64,512 bytes per lossless PG.
 *
 * PFC frames: pfc_mmu_pfc_frame() builds the frame a port must send now:
 * XOFF (pause_quanta) for each of its PGs in XOFF that is new or due for a
 * refresh (every half pause time), XON (0) for each PG that just left XOFF.
 * pfc_mmu_pfc_next_ns() tells when to call it next (a timer for refreshes).
 *
 * ECN: on admission of an ECN-capable packet into a queue whose marking is
 * enabled, with q the queue's bytes before the packet,
 *   p = 0 for q <= kmin, pmax (q - kmin) / (kmax - kmin) between, 1 for q >= kmax
 * and the packet is marked when rand32() < p x 2^32 (rand32 from the config,
 * or a splitmix64 seeded with cfg->seed inside the MMU), so runs repeat.
 *
 * All state lives in the struct pfc_mmu returned by pfc_mmu_create(), owned by
 * the caller; nothing reads a clock (now_ns is only used for pause timing and
 * PFC refresh). Not thread-safe: one MMU per switch, one thread.
 */
#ifndef PFC_MMU_H
#define PFC_MMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pfc_frame.h"

#define PFC_MMU_MAX_PORTS   4096
#define PFC_WIRE_OVERHEAD   24u  /* FCS 4 + preamble/SFD 8 + inter-frame gap 12 */

enum pfc_mmu_mode {
	PFC_MMU_STATIC, /* buffer divided evenly over the ports (deep-buffer spine) */
	PFC_MMU_SHARED, /* shared pool, dynamic threshold alpha, per-PG reserve (leaf) */
};

/* RED-style ECN marking on one egress queue. */
struct pfc_ecn_config {
	bool enabled;
	uint64_t kmin_bytes; /* no marking at or below this occupancy */
	uint64_t kmax_bytes; /* marking with probability 1 at or above (>= kmin) */
	double pmax;         /* probability reached just below kmax, in (0, 1] */
};

/*
 * A named buffer profile that a topology can refer to.
 *
 * "deep" (spine / CTSW, Jericho-class HBM): 8 GiB, static division over the
 *   ports, 256-byte cells, resume offset 2 x 1536, XOFF with 0xFFFF quanta,
 *   lossless priorities 3 and 4, ECN off (Meta runs PFC without DCQCN).
 * "shallow" (leaf / RTSW, Tomahawk-class on-chip SRAM): 32 MiB shared,
 *   256-byte cells, alpha 1 (SONiC dynamic_th 0), reserve 1536 bytes per PG,
 *   resume offset 2 x 1536, XOFF 0xFFFF quanta, lossless priorities 3 and 4,
 *   ECN on: kmin 250000, kmax 2097152, pmax 0.05 (SONiC's AZURE_LOSSLESS WRED).
 */
struct pfc_buffer_profile {
	const char *name;
	const char *description;
	enum pfc_mmu_mode mode;
	uint64_t buffer_bytes;        /* total packet buffer */
	uint32_t cell_bytes;          /* allocation unit: a packet holds whole cells */
	double alpha;                 /* shared: dynamic threshold factor (0 in static) */
	uint64_t reserve_bytes;       /* shared: guaranteed per PG (0 in static) */
	uint64_t resume_offset_bytes; /* XON when this far below the XOFF threshold */
	uint16_t pause_quanta;        /* pause time put in generated XOFF frames */
	uint8_t lossless_mask;        /* priorities with PFC */
	struct pfc_ecn_config ecn;    /* default marking for every egress queue */
};

/* The built-in profile called name ("deep" or "shallow"); NULL for an unknown name or NULL. */
const struct pfc_buffer_profile *pfc_buffer_profile_find(const char *name);

/* The i-th built-in profile (to list them); NULL when i is past the last. */
const struct pfc_buffer_profile *pfc_buffer_profile_at(size_t i);

/* One port's link, from which its headroom is computed. */
struct pfc_mmu_port_config {
	uint64_t rate_bps;           /* link rate; must be > 0 */
	uint64_t cable_delay_ns;     /* one-way propagation delay (about 5 ns per metre) */
	uint32_t mtu_bytes;          /* largest frame, L2 header to payload, no FCS (>= 60) */
	uint32_t response_bits;      /* partner's PFC response time in bit times */
	uint32_t headroom_pkt_bytes; /* frame size the headroom is sized for; 0 = mtu_bytes */
	uint64_t headroom_bytes;     /* 0 = use the formula; else this (rounded up to cells) */
};

/*
 * 802.1Qbb / 802.3 upper bound on the time a MAC takes to act on a PFC frame,
 * plus twice the PHY interface delay, in bit times, for the rate's class:
 * <= 10G 47104, <= 25G 53248, <= 40G 109568, <= 100G 447488, above 709120
 * (200/400G reuse the 100G interface delay: an assumption). 0 for rate 0.
 */
uint32_t pfc_response_bits_default(uint64_t rate_bps);

/* Fill pc for a link: response_bits from pfc_response_bits_default(), the rest 0. */
void pfc_mmu_port_config_init(struct pfc_mmu_port_config *pc, uint64_t rate_bps,
			      uint64_t cable_delay_ns, uint32_t mtu_bytes);

/*
 * The headroom formula above for one lossless PG on a port, in bytes (whole
 * cells). Returns pc->headroom_bytes rounded up to cells when that is set;
 * 0 when pc->rate_bps, pc->mtu_bytes or cell_bytes is 0.
 */
uint64_t pfc_mmu_headroom_bytes(const struct pfc_mmu_port_config *pc, uint32_t cell_bytes);

struct pfc_mmu_config {
	uint32_t n_ports;             /* 1 .. PFC_MMU_MAX_PORTS */
	enum pfc_mmu_mode mode;
	uint64_t buffer_bytes;        /* > 0 */
	uint32_t cell_bytes;          /* > 0, <= buffer_bytes */
	double alpha;                 /* shared mode: > 0 */
	uint64_t reserve_bytes;       /* shared mode: guaranteed per PG */
	uint8_t lossless_mask;        /* bit n: priority n is lossless (PFC on); 0 = PFC off */
	uint64_t xoff_bytes;          /* 0 = mode default (see above); else a fixed PG threshold */
	uint64_t resume_offset_bytes; /* XON hysteresis */
	uint64_t egress_limit_bytes;  /* lossy egress queue limit; 0 = mode default */
	uint16_t pause_quanta;        /* XOFF time sent; > 0 when lossless_mask != 0 */
	struct pfc_ecn_config ecn[PFC_NUM_PRIO]; /* marking per priority, every port */
	struct pfc_mmu_port_config port;         /* every port's link ... */
	const struct pfc_mmu_port_config *ports; /* ... unless this (n_ports entries) is set; copied */
	uint32_t (*rand32)(void *ctx);           /* random source for ECN; NULL = internal */
	void *rand_ctx;
	uint64_t seed;                           /* seed of the internal source */
};

/*
 * Fill cfg from a profile (NULL = "shallow") for n_ports ports, each with
 * link *port (NULL: 100 Gbit/s, 100 ns cable, 1514-byte frames). ECN applies
 * to every priority; seed 1.
 */
void pfc_mmu_config_init(struct pfc_mmu_config *cfg, const struct pfc_buffer_profile *prof,
			 uint32_t n_ports, const struct pfc_mmu_port_config *port);

/*
 * Validate cfg without allocating. Returns 0, or -EINVAL with a human
 * message in err (when err is non-NULL and errlen > 0). Errors include: no ports or too
 * many, zero buffer or cell size, a zero link rate, a frame size below 60,
 * alpha <= 0 in shared mode, headroom (plus reserves) not fitting in the
 * buffer / the port share, xoff_bytes or egress_limit_bytes above the buffer
 * (or above the pool a PG can use), resume offset above the threshold,
 * pause_quanta 0 with lossless priorities, kmin > kmax, pmax outside (0, 1].
 */
int pfc_mmu_check_config(const struct pfc_mmu_config *cfg, char *err, size_t errlen);

struct pfc_mmu;

/*
 * Create an MMU from cfg (validated as by pfc_mmu_check_config()). Returns
 * NULL with a message in err on a configuration error or when out of memory.
 * Free with pfc_mmu_destroy().
 */
struct pfc_mmu *pfc_mmu_create(const struct pfc_mmu_config *cfg, char *err, size_t errlen);

/* Free an MMU (NULL is fine). */
void pfc_mmu_destroy(struct pfc_mmu *mmu);

/* What became of a packet. 0 is admitted; the rest are drop reasons. */
enum pfc_mmu_verdict {
	PFC_MMU_ADMIT = 0,
	PFC_MMU_DROP_HEADROOM, /* lossless: its PG's headroom is full */
	PFC_MMU_DROP_INGRESS,  /* lossy: its PG is at its ingress limit */
	PFC_MMU_DROP_EGRESS,   /* lossy: tail drop, egress queue at its limit */
	PFC_MMU_DROP_POOL,     /* lossy: the shared pool has no room */
	PFC_MMU_DROP_INVALID,  /* port or priority out of range, or len 0 */
	PFC_MMU_VERDICT_COUNT,
};

/* "admit", "headroom", "ingress", "egress", "pool", "invalid"; "unknown" out of range. */
const char *pfc_mmu_verdict_str(enum pfc_mmu_verdict v);

/* Flags returned with a verdict. */
#define PFC_MMU_F_ECN_CE 0x1u /* mark the packet Congestion Experienced */
#define PFC_MMU_F_XOFF   0x2u /* its PG entered XOFF: send pfc_mmu_pfc_frame(in_port) */
#define PFC_MMU_F_XON    0x4u /* its PG left XOFF: send pfc_mmu_pfc_frame(in_port) */

/* A packet as the MMU sees it. Dequeue / discard must pass the same values. */
struct pfc_mmu_pkt {
	uint32_t len;      /* bytes as given (frame without FCS) */
	uint16_t in_port;  /* ingress port: its PG is charged */
	uint16_t out_port; /* egress port: its queue is charged */
	uint8_t prio;      /* 0..7 */
	bool ect;          /* ECN-capable transport (ECT(0)/ECT(1)): may be marked */
};

/*
 * Try to admit pkt at now_ns. Returns PFC_MMU_ADMIT or the drop reason (each
 * counted, see the stats). *flags (if flags is non-NULL) receives
 * PFC_MMU_F_ECN_CE and/or PFC_MMU_F_XOFF, 0 when dropped except XOFF.
 */
enum pfc_mmu_verdict pfc_mmu_admit(struct pfc_mmu *mmu, const struct pfc_mmu_pkt *pkt,
				   uint64_t now_ns, unsigned *flags);

/*
 * An admitted packet left through its egress at now_ns: release its bytes.
 * Returns PFC_MMU_F_XON when its PG left XOFF, else 0. Releasing more than
 * is held (a caller bug) clamps at 0 and counts stats.underflows.
 */
unsigned pfc_mmu_dequeue(struct pfc_mmu *mmu, const struct pfc_mmu_pkt *pkt, uint64_t now_ns);

/* An admitted packet was thrown away (e.g. by the PFC watchdog): as dequeue, counted as discarded. */
unsigned pfc_mmu_discard(struct pfc_mmu *mmu, const struct pfc_mmu_pkt *pkt, uint64_t now_ns);

/*
 * The PFC frame port must send at now_ns, if any: XOFF (pause_quanta) for its
 * PGs in XOFF that are new or due for a refresh, XON for those that just left
 * XOFF. Fills *f (source MAC left zero: the caller sets it) and returns the
 * number of priorities in it; 0 means nothing to send (f zeroed). Marks them
 * sent and counts them. Returns 0 for a port out of range.
 */
unsigned pfc_mmu_pfc_frame(struct pfc_mmu *mmu, unsigned port, uint64_t now_ns,
			   struct pfc_frame *f);

/* When pfc_mmu_pfc_frame(port) next has something to send (<= now: now); UINT64_MAX: nothing. */
uint64_t pfc_mmu_pfc_next_ns(const struct pfc_mmu *mmu, unsigned port);

/*
 * Per PG (ingress port, priority): state and counters. Read-only for callers.
 * What admission and release read and write for every packet comes first,
 * in the PG's first cache line (the PGs are line-aligned).
 */
struct pfc_mmu_pg {
	_Alignas(64) uint64_t bytes; /* held now, headroom included */
	uint64_t headroom;           /* part of bytes in the headroom */
	bool in_xoff;
	bool pfc_pending;            /* a frame is owed now (new XOFF, or XON) */
	uint64_t peak_bytes;         /* highest bytes seen */
	uint64_t pkts_admitted, bytes_admitted; /* bytes as given */
	uint64_t pkts_dequeued, bytes_dequeued;
	uint64_t peak_headroom;
	uint64_t pkts_discarded;
	uint64_t drops[PFC_MMU_VERDICT_COUNT];  /* packets dropped at admission, by reason */
	uint64_t bytes_dropped;
	uint64_t xoff, xon;          /* transitions into / out of XOFF */
	uint64_t xoff_tx, xon_tx;    /* PFC frames sent carrying XOFF (refreshes too) / XON */
	uint64_t pause_ns;           /* time spent in XOFF, closed intervals (see pfc_mmu_pause_ns) */
	uint64_t xoff_since_ns;      /* start of the current XOFF */
	uint64_t last_tx_ns;         /* last XOFF frame for this PG */
};

/*
 * Per egress queue (egress port, priority). Read-only for callers. The
 * per-packet fields first, in the queue's first line (line-aligned).
 */
struct pfc_mmu_queue {
	_Alignas(64) uint64_t bytes; /* held now */
	uint64_t pkts;               /* held now */
	uint64_t peak_bytes;
	uint64_t pkts_admitted, bytes_admitted;
	uint64_t pkts_dequeued, bytes_dequeued;
	uint64_t pkts_discarded;
	uint64_t drops[PFC_MMU_VERDICT_COUNT];
	uint64_t ecn_marked;
	struct pfc_ecn_config ecn;
};

/* Per port. Read-only for callers. */
struct pfc_mmu_port {
	struct pfc_mmu_port_config link;
	uint64_t headroom_bytes;     /* per lossless PG */
	uint64_t share_bytes;        /* static: the port's share of the buffer */
	uint64_t pool_bytes;         /* static: share minus headroom */
	uint64_t refresh_ns;         /* XOFF refresh period: half the pause time */
	uint64_t in_bytes, in_peak;  /* held, charged to this ingress port */
	uint64_t in_pool;            /* static: bytes of its pool in use */
	uint64_t out_bytes, out_peak;/* held, queued for this egress port */
	uint64_t pfc_frames_tx;
};

/* Whole switch. */
struct pfc_mmu_stats {
	uint64_t bytes, peak_bytes;  /* held */
	uint64_t shared_pool, shared_used, shared_peak; /* shared mode */
	uint64_t reserved_total, headroom_total;
	uint64_t pkts_admitted, bytes_admitted;
	uint64_t pkts_dequeued, bytes_dequeued;
	uint64_t pkts_discarded;
	uint64_t drops[PFC_MMU_VERDICT_COUNT];
	uint64_t bytes_dropped;
	uint64_t ecn_marked;
	uint64_t xoff, xon, pfc_frames_tx;
	uint64_t underflows;         /* releases of more than was held (caller bugs) */
};

/* Accessors; NULL when port or prio is out of range. */
const struct pfc_mmu_pg *pfc_mmu_pg(const struct pfc_mmu *mmu, unsigned port, unsigned prio);
const struct pfc_mmu_queue *pfc_mmu_queue(const struct pfc_mmu *mmu, unsigned port, unsigned prio);
const struct pfc_mmu_port *pfc_mmu_port(const struct pfc_mmu *mmu, unsigned port);
const struct pfc_mmu_stats *pfc_mmu_stats(const struct pfc_mmu *mmu);
const struct pfc_mmu_config *pfc_mmu_config(const struct pfc_mmu *mmu);

/*
 * The PG's XOFF threshold now, in bytes of non-headroom buffer (reserve
 * included): fixed in static mode, moving with the free shared pool in
 * shared mode. 0 for a port or priority out of range.
 */
uint64_t pfc_mmu_xoff_threshold(const struct pfc_mmu *mmu, unsigned port, unsigned prio);

/* Headroom of one lossless PG of port (bytes); 0 out of range. */
uint64_t pfc_mmu_headroom(const struct pfc_mmu *mmu, unsigned port);

/* Time the PG has spent in XOFF up to now_ns, the current XOFF included. */
uint64_t pfc_mmu_pause_ns(const struct pfc_mmu *mmu, unsigned port, unsigned prio,
			  uint64_t now_ns);

/*
 * Replace the ECN marking of one egress queue. Returns 0, or -EINVAL with a
 * message in err (bad port / priority, kmin > kmax, pmax outside (0, 1]).
 */
int pfc_mmu_set_ecn(struct pfc_mmu *mmu, unsigned port, unsigned prio,
		    const struct pfc_ecn_config *ecn, char *err, size_t errlen);

/* The marking probability of the formula above for a queue of q_bytes (0 when disabled). */
double pfc_ecn_probability(const struct pfc_ecn_config *ecn, uint64_t q_bytes);

/* A small deterministic random source (splitmix64), usable as cfg->rand32 with &rng as ctx. */
struct pfc_rng {
	uint64_t state;
};
void pfc_rng_seed(struct pfc_rng *rng, uint64_t seed);
uint32_t pfc_rng_next(void *rng);

#endif /* PFC_MMU_H */
