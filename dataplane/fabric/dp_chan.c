/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_chan: one direction of a link. The transmitter at its sending end
 * (FIFOs, eight egress queues and a control queue, strict priority + DWRR,
 * 802.1Qbb pause, the PFC watchdog of switch egress), the wire
 * (serialization, propagation, loss) and the delivery at the far end (a
 * switch's pipeline, dp_switch.h, or a host).
 */
#include "dp_chan.h"

#include <errno.h>

#include <rte_ring.h>

#include <stdlib.h>
#include <string.h>

#include "dp_switch.h"
#include "dp_units.h"
#include "pfc_frame.h"
#include "rl_bytes.h"
#include "rl_hash.h"
#include "rl_mem.h"
#include "rl_parse.h"

#define XRING_RETRY_NS 1000   /* live, cut link with a full ring: try again after this */
#define FIFO_FIRST_SLOTS 64  /* a FIFO's first allocation (a power of two) */
#define ETH_HDR_LEN 14
#define ETH_TYPE_OFF 12
#define ETH_MIN_FRAME 60     /* shortest frame without FCS: shorter ones are padded on the wire */
#define BITS_PER_BYTE 8     /* (NS_PER_S: DPDK's rte_cycles.h) */
/* A uniform double in [0, 1) from the 53 top bits of a 64-bit random number. */
#define RNG_UNIT(r) ((double)((r) >> 11) * 0x1.0p-53)

static void switch_rx(struct dp_switch *s, uint16_t in_port, struct rte_mbuf *m, uint64_t now);

/* ---- FIFO ---- */

/* Double a full FIFO's capacity (the rare path, kept out of line). Returns 0, -1 out of memory. */
static __rte_noinline int fifo_grow(struct dp_fifo *q)
{
	uint32_t cap = q->cap ? q->cap * 2 : FIFO_FIRST_SLOTS;
	struct rte_mbuf **s = rl_zalloc_lines(cap, sizeof(*s)); /* (rl_mem.h: no line shared with another partition's) */

	if (s == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < q->n; i++)
		s[i] = q->slot[(q->head + i) & (q->cap - 1)];
	free(q->slot);
	q->slot = s;
	q->head = 0;
	q->cap = cap;
	return 0;
}

static inline int fifo_push(struct dp_fifo *q, struct rte_mbuf *m)
{
	if (unlikely(q->n == q->cap) && fifo_grow(q) < 0)
		return -ENOMEM;
	q->slot[(q->head + q->n) & (q->cap - 1)] = m;
	q->n++;
	q->bytes += rte_pktmbuf_pkt_len(m);
	return 0;
}

static struct rte_mbuf *fifo_peek(const struct dp_fifo *q)
{
	return q->n ? q->slot[q->head] : NULL;
}

static struct rte_mbuf *fifo_pop(struct dp_fifo *q)
{
	if (q->n == 0)
		return NULL;
	struct rte_mbuf *m = q->slot[q->head];
	q->n--;
	q->head = q->n ? (q->head + 1) & (q->cap - 1) : 0; /* (emptied: slot 0 again, see wire_pop) */
	q->bytes -= rte_pktmbuf_pkt_len(m);
	return m;
}

static void fifo_free(struct dp_fifo *q)
{
	struct rte_mbuf *m;

	while ((m = fifo_pop(q)) != NULL)
		rte_pktmbuf_free(m);
	free(q->slot);
	memset(q, 0, sizeof(*q));
}

/* ---- wire: frames in flight and their arrival times, side by side ---- */

/* Double a full wire's capacity (the rare path). Returns 0, -1 out of memory. */
static __rte_noinline int wire_grow(struct dp_wire *w)
{
	uint32_t cap = w->cap ? w->cap * 2 : FIFO_FIRST_SLOTS;
	struct dp_wire_slot *s = rl_zalloc_lines(cap, sizeof(*s)); /* (as fifo_grow's) */

	if (s == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < w->n; i++)
		s[i] = w->slot[(w->head + i) & (w->cap - 1)];
	free(w->slot);
	w->slot = s;
	w->head = 0;
	w->cap = cap;
	return 0;
}

/* Append m, arriving at at_ns (not earlier than the frames before it). Returns 0, -1 out of memory. */
static inline int wire_push(struct dp_wire *w, struct rte_mbuf *m, uint64_t at_ns)
{
	if (unlikely(w->n == w->cap) && wire_grow(w) < 0)
		return -ENOMEM;
	w->slot[(w->head + w->n) & (w->cap - 1)] = (struct dp_wire_slot){m, at_ns};
	w->n++;
	return 0;
}

/* The head frame's arrival time; UINT64_MAX when the wire is empty. */
static inline uint64_t wire_head_ns(const struct dp_wire *w)
{
	return w->n ? w->slot[w->head].at : UINT64_MAX;
}

/* The last frame's arrival time (the wire must not be empty). */
static inline uint64_t wire_tail_ns(const struct dp_wire *w)
{
	return w->slot[(w->head + w->n - 1) & (w->cap - 1)].at;
}

/*
 * Take the head frame (the wire must not be empty). An emptied wire starts
 * again at slot 0, so a link with a frame or two in flight at a time keeps
 * using one cache line of slots instead of walking through all of them (64
 * slots, 16 lines: with thousands of links, lines that had left the caches
 * by the time the ring came round to them).
 */
static inline struct rte_mbuf *wire_pop(struct dp_wire *w)
{
	struct rte_mbuf *m = w->slot[w->head].m;

	w->n--;
	w->head = w->n ? (w->head + 1) & (w->cap - 1) : 0;
	return m;
}

static void wire_free(struct dp_wire *w)
{
	while (w->n)
		rte_pktmbuf_free(wire_pop(w));
	free(w->slot);
	memset(w, 0, sizeof(*w));
}

/* ---- transmitter ---- */

static void chan_kick(struct dp_chan *c, uint64_t now);
static bool chan_send_one(struct dp_chan *c, uint64_t now, bool live);
static void deliver(struct dp_chan *c, struct rte_mbuf *m, uint64_t now);
static void send_pfc(struct dp_switch *s, uint16_t port, uint64_t now);

static void on_tx_done(void *obj, uint64_t arg, uint64_t now);
static void on_arrive(void *obj, uint64_t arg, uint64_t now);
static void prefetch_arrival(const void *obj, uint64_t arg);
static void prefetch_tx_done(const void *obj, uint64_t arg);

int dp_chan_engine_prefetch(struct dp_engine *e)
{
	int rc = dp_engine_set_prefetch(e, on_arrive, prefetch_arrival);

	return rc < 0 ? rc : dp_engine_set_prefetch(e, on_tx_done, prefetch_tx_done);
}

static void on_tx_done(void *obj, uint64_t arg, uint64_t now)
{
	struct dp_chan *c = obj;

	(void)arg;
	c->tx_busy = false;
	chan_kick(c, now);
}

static void on_kick(void *obj, uint64_t arg, uint64_t now)
{
	struct dp_chan *c = obj;

	if (c->kick_at_ns != arg)
		return; /* superseded */
	c->kick_at_ns = 0;
	chan_kick(c, now);
}

/*
 * The wire's next arrival, at the receiving end's engine. Keyed by the
 * channel, not by who arms it: the sender (a frame on an empty wire), the
 * receiver (the next frame) or the hand-over between partitions, so an
 * arrival has one place among the events of its nanosecond.
 */
static int arm_arrival(struct dp_chan *c)
{
	/* (arg: the head frame, for the look-ahead's prefetch_arrival only; on_arrive reads the wire) */
	return dp_timer_add_keyed(c->rx_eng, c->rx_lp, c->arr_key, wire_head_ns(&c->wire), on_arrive,
				  c, (uintptr_t)c->wire.slot[c->wire.head].m);
}

/*
 * The engine's look-ahead for an arrival (dp_engine_set_prefetch): the
 * channel's first line and its wire's, the head frame's mbuf and private
 * area (arg, as armed).
 */
static void prefetch_arrival(const void *obj, uint64_t arg)
{
	const struct dp_chan *c = obj;
	const char *m = (const char *)(uintptr_t)arg;

	rte_prefetch0(c);
	rte_prefetch0(&c->wire);
	rte_prefetch0(m);
	rte_prefetch0(m + sizeof(struct rte_mbuf));
	rte_prefetch0(m + sizeof(struct rte_mbuf) + RTE_CACHE_LINE_SIZE);
}

/* The look-ahead for a transmission's end: the channel's first line and its sender's. */
static void prefetch_tx_done(const void *obj, uint64_t arg)
{
	const struct dp_chan *c = obj;

	(void)arg;
	rte_prefetch0(c);
	rte_prefetch0(&c->tx_busy);
}

/* Put m on the wire, arriving at at; false (dropped and counted as no_mbuf) when the wire cannot grow. */
static bool onto_wire(struct dp_chan *c, struct rte_mbuf *m, uint64_t at)
{
	if (wire_push(&c->wire, m, at) == 0)
		return true;
	c->drops[DP_DROP_NO_MBUF]++;
	c->drops_arrived++;
	rte_pktmbuf_free(m);
	return false;
}

/*
 * After frames went onto a wire that was empty (was_empty) or whose arrival
 * timer could not be added before (arrive_lost): arm the next arrival.
 * (A failure is counted in timer_fail; the next frame tries again.)
 */
static void arm_if_started(struct dp_chan *c, bool was_empty)
{
	if (was_empty || unlikely(c->arrive_lost))
		c->arrive_lost = arm_arrival(c) < 0;
}

/*
 * Ask for the cache lines the delivery of m reads, all at once: the mbuf's
 * first line (lengths, data offset), the two lines of its private area the
 * switch reads (the parse) and, for a host, at its usual place, the frame's
 * header (a switch reads the parse instead, and owes its rewrite: see
 * dp_mbuf_priv.ttl_owed). A frame that waited in queues and on wires has
 * left the caches, and the delivery would otherwise miss on them one after
 * the other (the data's address comes from the first line).
 */
static inline void prefetch_frame(const struct dp_chan *c, struct rte_mbuf *m)
{
	char *pv = (char *)dp_priv(m);

	rte_prefetch0(m);
	rte_prefetch0(pv);
	rte_prefetch0(pv + RTE_CACHE_LINE_SIZE);
	if (c->to.kind != TOPO_NODE_SWITCH)
		rte_prefetch0(pv + rte_pktmbuf_priv_size(c->fab->mp) + RTE_PKTMBUF_HEADROOM);
}

/*
 * Ask for the lines of m that the sending of it reads (the mbuf's first line:
 * its length; the private area's first: MMU and pause fields), when m has
 * become the head of its queue: it goes when the link next frees, hundreds of
 * events later, by when the lines are in the second-level cache instead of
 * memory (a frame that waited in a queue has left the caches, and the
 * queue's pick missed on its length).
 */
static inline void prefetch_queued(struct rte_mbuf *m)
{
	rte_prefetch0(m);
	rte_prefetch0(dp_priv(m));
}

static void on_arrive(void *obj, uint64_t arg, uint64_t now)
{
	struct dp_chan *c = obj;
	struct rte_mbuf *m;

	struct dp_engine *e = c->rx_eng;
	/* live: also what has arrived by the clock's reading, in one go, as long as
	 * no other event comes first (a PFC frame on its way must still win) */
	uint64_t by = e->mode == DP_CLOCK_LIVE && e->now_ns > now ? e->now_ns : now;

	(void)arg;
	while (c->wire.n) {
		uint64_t t = wire_head_ns(&c->wire);
		if (t > now && (t > by || t >= dp_engine_next_ns(e)))
			break;
		m = wire_pop(&c->wire);
		prefetch_frame(c, m);
		/* the next frame's lines, while this one is delivered, when this call
		 * delivers it too (live bursts; a later arrival's are asked for by the
		 * engine's look-ahead, prefetch_arrival: asked for now, they would
		 * leave the caches again before it) */
		if (c->wire.n && wire_head_ns(&c->wire) <= by)
			prefetch_frame(c, c->wire.slot[c->wire.head].m);
		deliver(c, m, dp_engine_mono(e, t));
	}
	if (c->wire.n && arm_arrival(c) < 0)
		c->arrive_lost = true; /* counted in timer_fail; the next frame sent arms it */
}

/* DWRR's visit of an ineligible queue p: an empty one keeps no credit. */
static inline void dwrr_pass(struct dp_chan *c, unsigned p)
{
	if (!(c->nonempty >> p & 1))
		c->q[p].deficit = 0;
}

/*
 * DWRR with one eligible queue q (not the strict class), in closed form: the
 * state (deficits, rr) the round-robin loop of pick_queue() leaves, without
 * going round the eight queues once per quantum (a 4 KiB frame took three
 * rounds, 24 visits, of a 1-queue fabric: a tenth of the NIC path's
 * instructions per forward). The loop visits the queues from rr up to q, then,
 * while q's deficit is short of the head frame, adds a quantum and goes round
 * all the others once more.
 */
static int dwrr_single(struct dp_chan *c, unsigned q, uint32_t len)
{
	for (unsigned p = c->rr; p != q; p = (p + 1) % DP_NUM_PRIO)
		dwrr_pass(c, p);
	struct dp_prio_q *pq = &c->q[q];
	if (pq->deficit < (int64_t)len) {
		int64_t k = ((int64_t)len - pq->deficit + pq->quantum - 1) / pq->quantum;
		pq->deficit += k * pq->quantum;
		for (unsigned p = 0; p < DP_NUM_PRIO; p++)
			if (p != q)
				dwrr_pass(c, p);
	}
	c->rr = (uint8_t)q;
	pq->deficit -= len;
	return (int)q;
}

/* The queue to send from next, or -1: control first, the strict class, then DWRR. */
static int pick_queue(struct dp_chan *c, uint64_t now)
{
	const struct topo_qos *qos = &c->fab->topo->qos;
	unsigned cp = qos->control_prio;

	if (c->ctrl.n)
		return DP_NUM_PRIO; /* the control queue */
	if (c->nonempty == 0)
		return -1;
	uint8_t paused = pfc_pause_mask(&c->pause, now);
	if (c->wd_on && paused) /* a queue in storm with the forward action ignores pause */
		for (unsigned p = 0; p < DP_NUM_PRIO; p++)
			if ((paused >> p & 1) && pfc_watchdog_may_send(&c->wd, &c->pause, p, now))
				paused &= (uint8_t)~(1u << p);
	uint8_t eligible = c->nonempty & (uint8_t)~paused;
	if (eligible == 0)
		return -1;
	if (eligible >> cp & 1)
		return (int)cp;
	if ((eligible & (eligible - 1)) == 0) {
		unsigned q = (unsigned)__builtin_ctz(eligible);
		return dwrr_single(c, q, rte_pktmbuf_pkt_len(fifo_peek(&c->q[q].f)));
	}
	/* DWRR: each visit adds a quantum; a queue sends while its deficit covers the head. */
	for (;;) {
		unsigned p = c->rr;
		if (p != cp && (eligible >> p & 1)) {
			struct dp_prio_q *pq = &c->q[p];
			uint32_t len = rte_pktmbuf_pkt_len(fifo_peek(&pq->f));
			if (pq->deficit >= (int64_t)len) {
				pq->deficit -= len;
				return (int)p;
			}
			pq->deficit += pq->quantum;
		} else if (!(c->nonempty >> p & 1)) {
			c->q[p].deficit = 0; /* an idle queue keeps no credit */
		}
		c->rr = (uint8_t)((c->rr + 1) % DP_NUM_PRIO);
	}
}

static bool chan_has_work(const struct dp_chan *c)
{
	return c->ctrl.n || c->nonempty;
}

/*
 * Send the next frame if the link is free. A timer at the end of a frame
 * chooses the next one only when frames wait (scheduling happens when the
 * link frees, so a later frame of a higher priority still goes first); a
 * frame that finds the link free and nothing waiting starts at once. Virtual
 * clock: one frame per call. Live clock: frame after frame, back to back, as
 * long as the link would have finished the previous one by the clock's
 * reading and no other event is due before (one timer per burst, not per
 * frame, and events still happen in time order).
 */
/*
 * Live, cut link: the ring to the receiving thread has no room for the frames
 * gathered for it and one more (dp_chan_flush_ring puts them all on it).
 */
static inline bool xring_no_room(const struct dp_chan *c)
{
	return unlikely(c->xring != NULL) && rte_ring_free_count(c->xring) <= c->n_xpend;
}

static void chan_kick(struct dp_chan *c, uint64_t now)
{
	struct dp_engine *e = c->eng;
	bool live = e->mode == DP_CLOCK_LIVE;

	if (c->tx_busy || !c->up)
		return;
	if (xring_no_room(c)) {
		/* live, cut link: the receiving thread is behind; wait for it (its
		 * frames back up into this queue: buffer, PFC, senders' queues)
		 * instead of piling frames up where nobody takes them */
		c->xring_full++;
		if (c->kick_at_ns == 0) {
			c->kick_at_ns = now + XRING_RETRY_NS;
			if (dp_timer_add_lp(e, c->lp, c->kick_at_ns, on_kick, c, c->kick_at_ns) < 0)
				c->kick_at_ns = 0;
		}
		return;
	}
	if (c->free_at_ns <= now) {
		for (;;) {
			if (!chan_send_one(c, now, live))
				return;
			/* live: the next frame too if the clock has passed its start and
			 * no other event (a pause arriving, a frame of higher priority) is due first */
			if (!live || c->free_at_ns > e->now_ns || c->free_at_ns >= dp_engine_next_ns(e))
				break;
			if (xring_no_room(c))
				break; /* (the check above, after the tx timer) */
			now = dp_engine_mono(e, c->free_at_ns);
		}
	}
	if (chan_has_work(c) && dp_timer_add_lp(e, c->lp, c->free_at_ns, on_tx_done, c, 0) == 0)
		c->tx_busy = true; /* (no timer, counted in timer_fail: not busy, the next kick tries again) */
}

/*
 * A frame on a link cut between partitions: into the outbox of this window
 * (the sender's engine knows its parity); the receiving partition takes it
 * onto the wire at the start of the next window (dp_chan_take_cross). The
 * lookahead guarantees it arrives no earlier than that window starts.
 */
static void send_cross(struct dp_chan *c, struct rte_mbuf *m, uint64_t arrive)
{
	struct dp_engine *e = c->eng;

	if (c->xring) { /* live: the receiving thread takes it from the ring (dp_chan_take_ring) */
		dp_priv(m)->queued_ns = arrive; /* (off every queue now: the field carries the arrival) */
		/* gathered: one ring operation (a line the receiver reads) per burst, not per frame */
		c->xpend[c->n_xpend++] = m;
		if (c->n_xpend == DP_XPEND)
			dp_chan_flush_ring(c);
		return;
	}
	if (wire_push(&c->out[e->xfer_parity], m, arrive) < 0) {
		c->drops[DP_DROP_NO_MBUF]++;
		c->drops_sent++;
		rte_pktmbuf_free(m);
		return;
	}
	if (arrive < e->xfer_min_ns)
		e->xfer_min_ns = arrive;
}

/* Put the next frame on the wire; false when there is none to send (then maybe arm a pause wake-up). */
static bool chan_send_one(struct dp_chan *c, uint64_t now, bool live)
{
	int qi = pick_queue(c, now);
	if (qi < 0) {
		/* paused queues with packets: wake up when the first pause ends */
		if (c->nonempty == 0)
			return false;
		uint64_t t = pfc_pause_next_expiry_ns(&c->pause, now);
		if (t != UINT64_MAX && (c->kick_at_ns == 0 || t < c->kick_at_ns)) {
			c->kick_at_ns = t;
			if (dp_timer_add_lp(c->eng, c->lp, t, on_kick, c, t) < 0)
				c->kick_at_ns = 0; /* counted in timer_fail; the next kick tries again */
		}
		return false;
	}
	struct dp_fifo *f = qi == DP_NUM_PRIO ? &c->ctrl : &c->q[qi].f;
	struct rte_mbuf *m = fifo_pop(f);
	if (f->n)
		prefetch_queued(fifo_peek(f));
	else if (qi < DP_NUM_PRIO)
		c->nonempty &= (uint8_t)~(1u << qi);
	struct dp_mbuf_priv *pv = dp_priv(m);
	uint32_t len = rte_pktmbuf_pkt_len(m);
	/* virtual: decisions happen exactly when the link frees, a frame comes or a
	 * pause ends; live: the loop notices late, so a frame starts when it could
	 * have: queued, and its priority's last pause over (XON or expiry) */
	uint64_t ready = now;
	if (live) {
		ready = pv->queued_ns;
		uint64_t resumed = qi < DP_NUM_PRIO ? pfc_pause_expiry_ns(&c->pause, (unsigned)qi) : 0;
		if (resumed > ready && resumed <= now) /* (> now: the watchdog forwards through a pause) */
			ready = resumed;
	}
	uint64_t start = c->free_at_ns > ready ? c->free_at_ns : ready;
	/* exact wire time: carry the fraction of a nanosecond to the next frame */
	uint64_t num = (uint64_t)((len < ETH_MIN_FRAME ? ETH_MIN_FRAME : len) + PFC_WIRE_OVERHEAD) * BITS_PER_BYTE * (uint64_t)NS_PER_S +
		       c->ser_rem;
	uint64_t ser = rte_reciprocal_divide_u64(num, &c->rate_rcp);
	c->ser_rem = num - ser * c->rate_bps;

	if (c->capture)
		c->capture(c->capture_ctx, c, m, start);
	c->free_at_ns = start + ser;
	c->busy_ns += ser;
	if (qi == DP_NUM_PRIO) {
		c->ctrl_tx++;
		c->ctrl_tx_bytes += len;
	} else {
		c->q[qi].tx_pkts++;
		c->q[qi].tx_bytes += len;
	}
	if (pv->admitted) {
		struct dp_switch *s = &c->fab->sw[c->from.index];
		struct pfc_mmu_pkt mp = {.len = pv->len, .in_port = pv->in_port,
					 .out_port = pv->out_port, .prio = pv->prio, .ect = pv->ect};
		pv->admitted = 0;
		uint64_t t = live ? now : start; /* live: never ahead of the switch's clock */
		if (pfc_mmu_dequeue(s->mmu, &mp, t) & PFC_MMU_F_XON)
			send_pfc(s, mp.in_port, t);
	}
	if (c->loss > 0 && RNG_UNIT(rl_xorshift64(&c->rng)) < c->loss) {
		c->drops[DP_DROP_LOSS]++;
		c->drops_sent++;
		rte_pktmbuf_free(m);
	} else if (unlikely(c->cross)) {
		send_cross(c, m, c->free_at_ns + c->delay_ns);
	} else {
		bool was_empty = c->wire.n == 0;
		if (onto_wire(c, m, c->free_at_ns + c->delay_ns))
			arm_if_started(c, was_empty);
	}
	return true;
}

/* Queue m on channel c at priority prio (DP_NUM_PRIO: control) and start sending. */
static void chan_enqueue(struct dp_chan *c, struct rte_mbuf *m, int prio, uint64_t now)
{
	struct dp_fifo *q = prio == DP_NUM_PRIO ? &c->ctrl : &c->q[prio].f;

	if (fifo_push(q, m) < 0) {
		struct dp_mbuf_priv *pv = dp_priv(m);
		if (pv->admitted) { /* give its bytes back to the buffer */
			struct pfc_mmu_pkt mp = {.len = pv->len, .in_port = pv->in_port,
						 .out_port = pv->out_port, .prio = pv->prio, .ect = pv->ect};
			pfc_mmu_discard(c->fab->sw[c->from.index].mmu, &mp, now);
		}
		c->drops[DP_DROP_NO_MBUF]++;
		rte_pktmbuf_free(m);
		return;
	}
	if (prio < DP_NUM_PRIO) {
		c->nonempty |= (uint8_t)(1u << prio);
		if (q->bytes > c->q[prio].peak_bytes)
			c->q[prio].peak_bytes = q->bytes < UINT32_MAX ? (uint32_t)q->bytes : UINT32_MAX;
	}
	dp_priv(m)->queued_ns = now;
	chan_kick(c, now);
}

static void deliver(struct dp_chan *c, struct rte_mbuf *m, uint64_t now)
{
	struct dp_fabric *f = c->fab;

	if (!c->up || unlikely(c->steal)) {
		if (c->up) { /* test only (dp_audit.h): the frame vanishes, counted nowhere */
			c->steal = false;
		} else {
			c->drops[DP_DROP_LINK_DOWN]++;
			c->drops_arrived++;
		}
		rte_pktmbuf_free(m);
		return;
	}
	c->rx_pkts++;
	if (c->to.kind == TOPO_NODE_SWITCH) {
		switch_rx(&f->sw[c->to.index], c->to_port, m, now);
		return;
	}
	struct dp_host *h = &f->host[c->to.index];
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	if (rte_pktmbuf_data_len(m) >= ETH_HDR_LEN && rl_get_be16(d + ETH_TYPE_OFF) == RL_ETHERTYPE_PAUSE) {
		/* PFC for the host's NIC: pause its transmitter. The frame still goes
		 * up to the host, as it would on a wire (a capture there shows it). */
		if (pfc_pause_rx(&h->tx->pause, d, rte_pktmbuf_data_len(m), now) == PFC_FRAME_OK)
			h->pfc_rx++;
		chan_kick(h->tx, now);
	}
	h->rx_pkts++;
	h->rx_bytes += rte_pktmbuf_pkt_len(m);
	if (f->opt.host_rx)
		f->opt.host_rx(f->opt.host_rx_ctx, h, m, now);
	else
		rte_pktmbuf_free(m);
}

/*
 * A link that goes down loses what waits in its queues: each packet is
 * released from its switch's MMU (which may end an XOFF upstream) and counted.
 */
static void chan_flush_queue(struct dp_chan *c, int p, enum dp_drop why, uint64_t now)
{
	struct dp_fifo *q = p == DP_NUM_PRIO ? &c->ctrl : &c->q[p].f;
	struct rte_mbuf *m;

	while ((m = fifo_pop(q)) != NULL) {
		struct dp_mbuf_priv *pv = dp_priv(m);
		if (pv->admitted) {
			struct dp_switch *s = &c->fab->sw[c->from.index];
			struct pfc_mmu_pkt mp = {.len = pv->len, .in_port = pv->in_port,
						 .out_port = pv->out_port, .prio = pv->prio, .ect = pv->ect};
			if (pfc_mmu_discard(s->mmu, &mp, now) & PFC_MMU_F_XON)
				send_pfc(s, mp.in_port, now);
		}
		c->drops[why]++;
		rte_pktmbuf_free(m);
	}
	if (p < DP_NUM_PRIO)
		c->nonempty &= (uint8_t)~(1u << p);
}

static void chan_flush(struct dp_chan *c, uint64_t now)
{
	for (int p = 0; p <= DP_NUM_PRIO; p++)
		chan_flush_queue(c, p, DP_DROP_LINK_DOWN, now);
}

/*
 * PFC watchdog poll of one switch egress channel: declares and restores
 * storms (pfc/pfc_watchdog.h); a queue in storm with the drop action is
 * drained. Polls continue while a priority is paused or in storm.
 */
static void on_wd_poll(void *obj, uint64_t at, uint64_t now)
{
	struct dp_chan *c = obj;
	uint8_t nonempty = c->nonempty, watching = 0; /* (exact: dp_count_chan_queued) */

	if (c->wd_armed_at != at)
		return;
	c->wd_armed_at = 0;
	uint64_t tx[DP_NUM_PRIO];
	dp_count_chan_q_tx_pkts(c, tx);
	pfc_watchdog_poll(&c->wd, &c->pause, nonempty, tx, now);
	for (unsigned p = 0; p < DP_NUM_PRIO; p++) {
		if (pfc_watchdog_drops(&c->wd, p) && c->q[p].f.n) {
			uint64_t before = c->drops[DP_DROP_PFC_STORM];
			chan_flush_queue(c, (int)p, DP_DROP_PFC_STORM, now);
			pfc_watchdog_count_drop(&c->wd, p, c->drops[DP_DROP_PFC_STORM] - before);
		}
		watching |= (uint8_t)((pfc_watchdog_in_storm(&c->wd, p) ||
				       !pfc_pause_may_send(&c->pause, p, now)) << p);
	}
	chan_kick(c, now);
	if (watching)
		dp_chan_watchdog_arm(c, now);
}

void dp_chan_watchdog_arm(struct dp_chan *c, uint64_t now)
{
	uint64_t t = pfc_watchdog_next_poll_ns(&c->wd);

	if (!c->wd_on || c->wd_armed_at)
		return;
	if (t <= now)
		t = now + 1;
	c->wd_armed_at = t;
	if (dp_timer_add_lp(c->eng, c->lp, t, on_wd_poll, c, t) < 0)
		c->wd_armed_at = 0; /* counted in timer_fail; the next PFC frame or poll arms it again */
}

/* The switch side of the calls above (dp_switch.c). */
static void switch_rx(struct dp_switch *s, uint16_t in_port, struct rte_mbuf *m, uint64_t now)
{
	dp_switch_rx(s, in_port, m, now);
}

static void send_pfc(struct dp_switch *s, uint16_t port, uint64_t now)
{
	dp_switch_send_pfc(s, port, now);
}

void dp_chan_kick(struct dp_chan *c, uint64_t now_ns)
{
	chan_kick(c, now_ns);
}

void dp_chan_enqueue(struct dp_chan *c, struct rte_mbuf *m, int prio, uint64_t now_ns)
{
	chan_enqueue(c, m, prio, now_ns);
}

void dp_chan_flush(struct dp_chan *c, uint64_t now_ns)
{
	chan_flush(c, now_ns);
}

uint32_t dp_chan_take_cross(struct dp_chan *c, unsigned parity, uint64_t mark_ns, uint32_t *n_mark)
{
	bool was_empty = c->wire.n == 0;
	uint32_t n = 0;
	struct rte_mbuf *m;
	uint64_t at;

	while (dp_chan_outbox_pop(c, parity, &m, &at)) {
		*n_mark += at == mark_ns;
		n += onto_wire(c, m, at);
	}
	if (n)
		arm_if_started(c, was_empty);
	return n;
}

/*
 * Live, cut link: a copy of m (data, metadata, private area) from this
 * thread's mbuf cache, or NULL (pool dry, or no return ring: m itself goes
 * on). Why copy: the sending thread allocates m and would never see it again
 * (this thread's ports free it into this thread's cache, and the pool's
 * shared ring hands it back to the sender) with its lines dirty in this
 * core's cache: every new frame there would miss on them. Read here, they
 * stay in the sender's cache for the sender to reuse (dp_chan_return_ring).
 */
static struct rte_mbuf *own_copy(struct dp_chan *c, struct rte_mbuf *m)
{
	if (c->xret == NULL)
		return NULL;
	struct rte_mbuf *o = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
	if (o != NULL)
		memcpy(rte_mbuf_to_priv(o), rte_mbuf_to_priv(m), rte_pktmbuf_priv_size(m->pool));
	return o;
}

/* m can go back into the fabric's pool as it is (rte_mbuf_raw_free()'s conditions). */
static bool raw_mbuf(const struct dp_chan *c, const struct rte_mbuf *m)
{
	return m->pool == c->fab->mp && RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1 &&
	       m->next == NULL && m->nb_segs == 1;
}

uint32_t dp_chan_take_ring(struct dp_chan *c)
{
	struct rte_mbuf *m[DP_XRING_BURST], *back[DP_XRING_BURST];
	bool was_empty = c->wire.n == 0;
	uint32_t n = rte_ring_sc_dequeue_burst(c->xring, (void **)m, DP_XRING_BURST, NULL), n_back = 0;

	bool moved = false;

	/* the lines the copy reads are in the sender's core: ask for all of them
	 * at once (the mbuf's second line: its pool, next segment) */
	size_t priv = rte_pktmbuf_priv_size(c->fab->mp);
	for (uint32_t i = 0; i < n; i++) {
		rte_prefetch0(m[i]);
		rte_prefetch0((char *)m[i] + RTE_CACHE_LINE_SIZE);
		for (size_t o = 0; o < priv; o += RTE_CACHE_LINE_SIZE) /* (all of it: own_copy copies it whole) */
			rte_prefetch0((char *)rte_mbuf_to_priv(m[i]) + o);
		rte_prefetch0(rte_pktmbuf_mtod(m[i], void *));
	}

	for (uint32_t i = 0; i < n; i++) {
		struct rte_mbuf *own = own_copy(c, m[i]);
		if (own != NULL) {
			/* back as a raw mbuf (the sender puts it in the pool without reading
			 * it) when it is one: else freed here, as rte_pktmbuf_free() does */
			if (raw_mbuf(c, m[i]))
				back[n_back++] = m[i];
			else
				rte_pktmbuf_free(m[i]);
			m[i] = own;
		}
		moved |= onto_wire(c, m[i], dp_priv(m[i])->queued_ns);
	}
	if (moved)
		arm_if_started(c, was_empty);
	uint32_t k = n_back ? rte_ring_sp_enqueue_burst(c->xret, (void **)back, n_back, NULL) : 0;
	if (k < n_back) /* (the sender is behind on its returns: into the pool here) */
		rte_pktmbuf_free_bulk(back + k, n_back - k);
	return n;
}

void dp_chan_flush_ring(struct dp_chan *c)
{
	uint32_t k = c->n_xpend ? rte_ring_sp_enqueue_burst(c->xring, (void **)c->xpend, c->n_xpend, NULL) : 0;

	/* (chan_kick sends only while the ring has room for what is gathered: never) */
	c->drops[DP_DROP_NO_MBUF] += c->n_xpend - k;
	c->drops_sent += c->n_xpend - k;
	rte_pktmbuf_free_bulk(c->xpend + k, c->n_xpend - k);
	c->n_xpend = 0;
}

uint32_t dp_chan_return_ring(struct dp_chan *c)
{
	struct rte_mbuf *m[DP_XRING_BURST];
	uint32_t n = c->xret ? rte_ring_sc_dequeue_burst(c->xret, (void **)m, DP_XRING_BURST, NULL) : 0;

	if (n) /* (raw mbufs, dp_chan_take_ring: not read here, their lines stay where they are) */
		rte_mempool_put_bulk(c->fab->mp, (void **)m, n);
	return n;
}

bool dp_chan_arrive(struct dp_chan *c, struct rte_mbuf *m, uint64_t at_ns)
{
	bool was_empty = c->wire.n == 0;

	if (!was_empty) {
		uint64_t tail = wire_tail_ns(&c->wire);
		if (at_ns < tail)
			at_ns = tail;
	}
	if (!onto_wire(c, m, at_ns))
		return false;
	arm_if_started(c, was_empty);
	return true;
}

void dp_chan_free(struct dp_chan *c)
{
	rte_pktmbuf_free_bulk(c->xpend, c->n_xpend);
	c->n_xpend = 0;
	if (c->xring) {
		struct rte_mbuf *m;
		while (rte_ring_sc_dequeue(c->xring, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(c->xring);
		c->xring = NULL;
	}
	if (c->xret) {
		while (dp_chan_return_ring(c))
			;
		rte_ring_free(c->xret);
		c->xret = NULL;
	}
	wire_free(&c->out[0]);
	wire_free(&c->out[1]);
	for (int p = 0; p < DP_NUM_PRIO; p++)
		fifo_free(&c->q[p].f);
	fifo_free(&c->ctrl);
	wire_free(&c->wire);
}

bool dp_chan_outbox_pop(struct dp_chan *c, unsigned parity, struct rte_mbuf **m, uint64_t *at)
{
	struct dp_wire *o = &c->out[parity];

	if (o->n == 0)
		return false;
	*at = wire_head_ns(o);
	*m = wire_pop(o);
	return true;
}

int dp_chan_outbox_push(struct dp_chan *c, unsigned parity, struct rte_mbuf *m, uint64_t at)
{
	return wire_push(&c->out[parity], m, at);
}
