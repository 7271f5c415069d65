/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_chan: one direction of a link (struct dp_chan, dp_fabric.h): its
 * transmitter, wire and delivery. Only the fabric calls these; a channel is
 * set up by dp_fabric_create().
 */
#ifndef DP_CHAN_H
#define DP_CHAN_H

#include <stdbool.h>
#include <stdint.h>

#include "dp_fabric.h"

/* Start sending if the link is free and a frame waits (else nothing; a timer will). */
void dp_chan_kick(struct dp_chan *c, uint64_t now_ns);

/*
 * Have engine e ask ahead for the lines of the channels' arrivals and
 * transmission ends (dp_engine_set_prefetch). Returns 0, -ENOSPC.
 */
int dp_chan_engine_prefetch(struct dp_engine *e);

/*
 * Queue m on c at priority prio (DP_NUM_PRIO: the control queue) and start
 * sending. The channel owns m; if the queue cannot grow, m is dropped
 * (DP_DROP_NO_MBUF) and its bytes are given back to the switch's buffer.
 */
void dp_chan_enqueue(struct dp_chan *c, struct rte_mbuf *m, int prio, uint64_t now_ns);

/* Drop everything queued on c (DP_DROP_LINK_DOWN), releasing it from the sending switch's buffer. */
void dp_chan_flush(struct dp_chan *c, uint64_t now_ns);

/* Free the packets c holds (queues and wire) and its queues' memory. */
void dp_chan_free(struct dp_chan *c);

/*
 * A link cut between partitions: move the frames the sender put in outbox
 * parity onto the wire, in sending order, and arm the next arrival if the
 * wire was empty. Run by the receiving partition between windows, when the
 * sender no longer writes that outbox. Adds to *n_mark the frames arriving
 * exactly at mark_ns (a window's end: they wait for the next one). Returns
 * the number moved.
 */
uint32_t dp_chan_take_cross(struct dp_chan *c, unsigned parity, uint64_t mark_ns, uint32_t *n_mark);

/*
 * Links cut between processes (dp_gather.h): take the head of c's outbox of
 * parity (false when it is empty), or put a frame that arrives at at into it
 * (0, or -ENOMEM: the caller still owns m).
 */
bool dp_chan_outbox_pop(struct dp_chan *c, unsigned parity, struct rte_mbuf **m, uint64_t *at);
int dp_chan_outbox_push(struct dp_chan *c, unsigned parity, struct rte_mbuf *m, uint64_t at);

#define DP_XRING_BURST 64

/*
 * Live clock: move up to DP_XRING_BURST frames the sending thread put in
 * c->xring onto the wire (each with its arrival time) and arm the next
 * arrival. Run by the receiving partition's thread. With c->xret, each goes
 * on as a copy from this thread's mbufs and the original goes back to the
 * sender through c->xret as a raw mbuf of the fabric's pool (freed here when
 * it is not one, or that ring is full; it goes on itself when no mbuf is
 * left for a copy). Returns the number moved.
 */
uint32_t dp_chan_take_ring(struct dp_chan *c);

/*
 * Live clock, the sending thread: put the frames sent on cut link c since the
 * last call (c->xpend, at most DP_XPEND) on c->xring. Call at the end of every
 * turn of the loop. (A frame that does not fit is a drop, counted; the
 * transmitter waits for room for what it gathered, so there is none.)
 */
void dp_chan_flush_ring(struct dp_chan *c);

/* Live clock, the sending thread: free the mbufs c->xret brought back (up to DP_XRING_BURST). Returns how many. */
uint32_t dp_chan_return_ring(struct dp_chan *c);

/*
 * Live clock, a link cut between processes (dp_peer.h): put m, received from
 * the process that sends on c, on c's wire arriving at at_ns (not before the
 * frame ahead of it: the order of a wire is kept) and arm the arrival if the
 * wire was empty. Run by the receiving partition's thread; c owns m. Returns
 * true, or false when the wire could not grow (m dropped, counted as no_mbuf).
 */
bool dp_chan_arrive(struct dp_chan *c, struct rte_mbuf *m, uint64_t at_ns);

/* Arm c's PFC watchdog poll (when the watchdog is on and none is pending). */
void dp_chan_watchdog_arm(struct dp_chan *c, uint64_t now_ns);

#endif /* DP_CHAN_H */
