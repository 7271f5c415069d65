/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_pipeline: a switch's forwarding decision for one frame, as a chain of
 * named stages (dp_pipeline.c says what each reads, sets and where the frame
 * goes next):
 *
 *   parse check -> (not IP: PFC frame | ARP) | IPv6 control (ND) -> echo to
 *   the gateway -> TTL -> route lookup -> next hop (local port, TE, ECMP /
 *   flowlet / resilient / pinning) -> link state -> PFC watchdog ->
 *   admission (MMU) -> rewrite (TTL, ECN, MACs)
 *
 * It works on the frame's bytes, its parse (hashing/rl_parse.h) and the
 * switch's state, and ends in a verdict: drop (with the reason), reply (the
 * frame was turned into an answer in place), consume (a PFC frame applied
 * to the port's transmitter) or forward (port, priority, rewrite done). What
 * happens to the buffer afterwards (freeing it, queueing it, the PFC frames
 * the MMU owes, the flow table) is the caller's: dp_switch.c on mbufs, a
 * unit test on plain arrays. No DPDK call is made here.
 */
#ifndef DP_PIPELINE_H
#define DP_PIPELINE_H

#include <stdint.h>

#include "dp_types.h"

enum dp_verdict_kind {
	DP_VERDICT_FORWARD, /* queue on out_port at prio; TTL, ECN and MACs rewritten */
	DP_VERDICT_DROP,    /* drop for `drop` (already counted in the switch) */
	DP_VERDICT_REPLY,   /* the frame is now an answer (ARP, NA, echo) of `len` bytes for in_port's control queue */
	DP_VERDICT_CONSUME, /* a PFC frame, applied to in_port's transmitter: free it, kick that channel */
};

struct dp_verdict {
	enum dp_verdict_kind kind;
	enum dp_drop drop;  /* DROP: the reason */
	uint16_t out_port;  /* FORWARD: the egress port */
	uint8_t prio;       /* FORWARD: the egress queue (from DSCP) */
	uint8_t ect;        /* FORWARD: ECN-capable as it arrived */
	uint32_t len;       /* FORWARD: bytes the MMU charged; REPLY: the answer's length */
	unsigned mmu_flags; /* PFC_MMU_F_*: XOFF owed upstream on in_port (forward or drop), ECN CE marked */
};

/*
 * A frame's bytes: len of them, in a buffer of room bytes (an answer may
 * grow up to room). With ttl_owed and mac_chan_owed (the frame's
 * dp_mbuf_priv fields), a forward without an ECN mark records its TTL / hop
 * limit decrement and MACs there instead of writing them
 * (dp_frame_pay_owed writes them); NULL: written at once. The stages that
 * read or overwrite those bytes (an echo or neighbour advertisement built in
 * place, a CE mark) write what is owed first and clear it.
 */
struct dp_frame {
	uint8_t *d;
	uint32_t len;
	uint32_t room;
	uint8_t *ttl_owed;
	uint32_t *mac_chan_owed;
};

/*
 * Write into frame d (parsed as p, IPv4 or IPv6) ttl_owed TTL / hop limit
 * decrements, each as a hop writes it (IPv4: the checksum adjusted each
 * time, RFC 1624), then MACs from channel c (NULL: leave them).
 */
void dp_frame_pay_owed(uint8_t *d, const struct rl_pkt *p, unsigned ttl_owed, const struct dp_chan *c);

/*
 * Pay what frame d (parsed as p) is owed, *ttl_owed decrements and the MACs
 * of f's channel *mac_chan - 1 (0: nothing owed), and clear both.
 */
void dp_frame_settle_owed(const struct dp_fabric *f, uint8_t *d, const struct rl_pkt *p,
			  uint8_t *ttl_owed, uint32_t *mac_chan);

/*
 * Decide what switch s does with frame fr that arrived on in_port at now_ns.
 * p and parse_st are rl_parse()'s result for fr (p is kept in step with the
 * rewrite: TTL, ECN). Counters of s (drops by reason, parse errors, replies,
 * PFC frames, ECN marks) and the MMU's occupancy (an admitted frame is
 * charged) are updated; the verdict goes to v. Returns v->kind.
 */
enum dp_verdict_kind dp_pipeline_decide(struct dp_switch *s, uint16_t in_port, struct dp_frame *fr,
					struct rl_pkt *p, int parse_st, uint64_t now_ns,
					struct dp_verdict *v);

#endif /* DP_PIPELINE_H */
