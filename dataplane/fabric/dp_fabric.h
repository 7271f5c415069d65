/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_fabric: a whole topology's switches and links, running on one engine.
 *
 * Every link has two channels (one per direction). A channel is the
 * transmitter at its sending end (eight egress queues plus a control queue for
 * PFC and ARP, strict priority for the control class, DWRR for the rest,
 * 802.1Qbb pause state per priority), the wire (serialization at the link
 * rate, then propagation delay, optional loss), and the delivery at the other
 * end: a switch's ingress pipeline, or a host.
 *
 * A switch: parse (hashing/), PFC frames update the pause state of the channel
 * the port sends on, ARP and IPv6 neighbour solicitations for its hosts'
 * subnets are answered (proxy ARP / ND, so hosts on one leaf reach each other
 * through it), IPv4 and IPv6 are routed: TTL / hop limit decrement (IPv4 with
 * an incremental checksum update), priority from DSCP, route lookup (IPv4:
 * rte_lpm, destination -> host; IPv6: the address names leaf and host
 * directly), next hop from the (switch, leaf)
 * group with the switch's load-balancing mode, admission through its MMU
 * (pfc/: may drop, may send XOFF/XON upstream, may mark ECN), MAC rewrite,
 * egress queue.
 *
 * Hosts sit at the edges: the data plane gives the fabric packets a host sent
 * (dp_fabric_host_send) and receives what reaches a host through a callback.
 * A host's own transmitter is its NIC: same queues and pause state, no MMU,
 * a byte limit per queue.
 *
 * Packets are rte_mbufs from a pool whose private area holds
 * struct dp_mbuf_priv; no packet is copied inside the fabric.
 *
 * Files: dp_types.h (the state), dp_fabric_build.c (building it, no DPDK),
 * dp_chan.c (a link direction: queues, scheduler, pause, wire, delivery),
 * dp_switch.c (a switch's ingress on mbufs, PFC frames it sends),
 * dp_pipeline.c (the switch's forwarding decision as named stages, no
 * DPDK), this file's dp_fabric.c (construction on DPDK, host sends,
 * failures).
 */
#ifndef DP_FABRIC_H
#define DP_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "dp_fabric_build.h"
#include "dp_count.h"
#include "dp_types.h"

/* Per-packet state carried in the mbuf's private area. */
struct dp_mbuf_priv {
	uint64_t queued_ns; /* in an egress queue: when it entered (a live transmitter starts it no earlier) */
	uint32_t len;       /* bytes the MMU charged */
	uint16_t in_port;   /* switch ingress port (MMU PG) */
	uint16_t out_port;
	uint32_t flow_slot; /* dp_flows slot + 1 (the flow is the same at every hop); 0: not looked up yet */
	uint8_t prio;
	uint8_t admitted;   /* 1 when a switch MMU holds its bytes */
	uint8_t ect;
	/* 1: its payload bytes stand for zeros but were never written (an
	 * emulated NIC with data off or a UDP generator sent it; a RoCE
	 * frame's ICRC is that of zeros).
	 * Nothing in the fabric reads them; whoever does calls
	 * dp_frame_write_zeros() first. */
	uint8_t payload_unwritten;
	/*
	 * The frame parsed once, where it enters the fabric: switches change
	 * only TTL / hop limit, ECN and MACs, and keep pkt in step, so the next
	 * hop needs no parse of its own. parsed = 0: not yet (pkt is garbage).
	 */
	uint8_t parsed;
	int8_t parse_st;    /* rl_parse's status */
	/*
	 * Header rewrites a switch owes the frame's bytes: it forwarded the
	 * frame with TTL / hop limit ttl_owed lower and the MACs of channel
	 * mac_chan - 1 (0: nothing owed), kept in pkt but not written, so that
	 * a hop touches no line of the frame itself. Whoever reads the bytes
	 * settles them first (dp_frame_settle()).
	 */
	uint8_t ttl_owed;
	uint32_t mac_chan;
	struct rl_pkt pkt;  /* last: DP_PRIV_HEAD_LEN bytes before it are reset per frame */
};

/* The part of struct dp_mbuf_priv before pkt (what a new frame resets). */
#define DP_PRIV_HEAD_LEN offsetof(struct dp_mbuf_priv, pkt)

static inline struct dp_mbuf_priv *dp_priv(struct rte_mbuf *m)
{
	return (struct dp_mbuf_priv *)rte_mbuf_to_priv(m);
}

/*
 * Build the runtime fabric for t (which must outlive it) on engine e, taking
 * mbufs for replies and PFC frames from mp (its private area must hold
 * struct dp_mbuf_priv). Scheduled events of the topology are armed on e.
 * Returns NULL with a message in err on failure.
 */
struct dp_fabric *dp_fabric_create(const struct topo *t, struct dp_engine *e,
				   struct rte_mempool *mp, const struct dp_fabric_opts *opt,
				   char *err, size_t errlen);
/* Free f and everything it built (NULL: nothing). */
void dp_fabric_destroy(struct dp_fabric *f);
/*
 * dp_fabric_destroy() for a process about to stop its EAL (rte_eal_cleanup
 * releases DPDK's heap): the tables on DPDK's heap (the hosts' LPM, the
 * flow hash) are left to it. DPDK zeroes an object it frees, and the LPM's
 * 16M-entry table is 64 MiB, most of it never touched until then: freeing
 * it took a short run's exit 0.3 s and 16,000 page faults.
 */
void dp_fabric_destroy_at_exit(struct dp_fabric *f);

/*
 * Write what m's bytes are owed: the header rewrites of the switches it
 * crossed (dp_mbuf_priv.ttl_owed, mac_chan: clears them; byte for byte what
 * the switches would have written, IPv4 checksum adjusted hop by hop) and,
 * when its sender left them unwritten, the zeros of its payload
 * (dp_frame_write_zeros). Call before m leaves for a port or another
 * process, is captured, or reaches a NIC. Does nothing for other frames.
 */
void dp_frame_settle(const struct dp_fabric *f, struct rte_mbuf *m);

/* The header part of dp_frame_settle() alone. */
void dp_frame_write_headers(const struct dp_fabric *f, struct rte_mbuf *m);

/*
 * Write the zeros m's payload stands for when its sender left them unwritten
 * (dp_mbuf_priv.payload_unwritten; clears it), so that its bytes are the
 * frame's and its ICRC holds: before m leaves for a port or another
 * process, is captured, or reaches a NIC that reads payloads. The payload is
 * a RoCE frame's (between its headers and its ICRC) or a UDP datagram's
 * (after the UDP header). Does nothing for other frames.
 */
void dp_frame_write_zeros(struct rte_mbuf *m);

/*
 * The bytes of m that stand for zeros because its sender left them
 * unwritten, as [*off, *off + *n): what dp_frame_write_zeros() would write.
 * False when there are none (m is not flagged, or has no payload it knows).
 */
bool dp_frame_unwritten_span(struct rte_mbuf *m, uint32_t *off, uint32_t *n);

/*
 * A frame host h sent at now_ns: into its NIC's queue (the fabric owns m).
 * payload_unwritten: its sender left the payload's bytes unwritten, and they
 * stand for zeros (a RoCE frame's ICRC is that of zeros): see
 * dp_frame_write_zeros().
 */
void dp_fabric_host_send(struct dp_fabric *f, uint32_t host, struct rte_mbuf *m,
			 bool payload_unwritten, uint64_t now_ns);

/* Take a link or a switch down or up at now_ns; routes and groups follow. Returns 0, -EINVAL bad index. */
int dp_fabric_set_link(struct dp_fabric *f, uint32_t link, bool up, uint64_t now_ns);
int dp_fabric_set_switch(struct dp_fabric *f, uint32_t sw, bool up, uint64_t now_ns);


#endif /* DP_FABRIC_H */
