/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transmit scheduler: which QP sends next, when the NIC next has
 * something to do, and the per-QP timers (retransmit, DCQCN), without
 * looking at QPs that have nothing to do.
 *
 * The wire is the one of the scanning scheduler it replaces: a poll runs the
 * due timers in slot order, then walks the slots round-robin from the one
 * after the last sender and sends from the first QP with a frame ready (CNP
 * first, then a response, then a request); a QP whose context misses the
 * cache model is delayed and the walk goes on. Here the walk visits only the
 * members of ready_set (QPs due at or before now) in the same slot order,
 * the timers come from heaps, and ne_nic_next_event_ns() is the minimum of
 * three heap tops. QPs enter the structures when ne_qp_touch() marks them
 * dirty; their keys are recomputed before the next poll or query.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ne_priv.h"

int ne_sched_init(struct ne_nic *nic)
{
	struct ne_sched *s = &nic->sched;
	uint64_t *moves = &nic->work.heap_moves;

	if (s->due) /* (made already) */
		return 0;
	s->dirty = calloc(nic->nqps, sizeof(*s->dirty));
	s->is_dirty = calloc(nic->nqps, sizeof(*s->is_dirty));
	if (!s->dirty || !s->is_dirty || ne_heap_init(&s->wait, nic->nqps, moves) ||
	    ne_heap_init(&s->ready, nic->nqps, moves) || ne_heap_init(&s->rto, nic->nqps, moves) ||
	    ne_heap_init(&s->dc, nic->nqps, moves) || ne_bits_init(&s->ready_set, nic->nqps) ||
	    (s->due = calloc(2 * (size_t)nic->nqps, sizeof(*s->due))) == NULL) {
		ne_sched_free(nic);
		return -ENOMEM;
	}
	return 0;
}

void ne_sched_free(struct ne_nic *nic)
{
	struct ne_sched *s = &nic->sched;

	ne_heap_free(&s->wait);
	ne_heap_free(&s->ready);
	ne_heap_free(&s->rto);
	ne_heap_free(&s->dc);
	ne_bits_free(&s->ready_set);
	free(s->dirty);
	free(s->is_dirty);
	free(s->due);
	memset(s, 0, sizeof(*s));
}

static uint32_t slot_of(const struct ne_nic *nic, const struct ne_qp *qp)
{
	return (uint32_t)(qp - nic->qps);
}

void ne_sched_mark(struct ne_nic *nic, struct ne_qp *qp)
{
	struct ne_sched *s = &nic->sched;
	uint32_t slot = slot_of(nic, qp);

	if (s->is_dirty[slot])
		return;
	s->is_dirty[slot] = 1;
	s->dirty[s->ndirty++] = slot;
}

void ne_qp_touch(struct ne_nic *nic, struct ne_qp *qp)
{
	ne_nic_touch(nic);
	ne_sched_mark(nic, qp);
}

static uint64_t tmax(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static bool req_ready(const struct ne_qp *qp)
{
	return qp->state == NE_QPS_RTS && ne_req_has_work(qp);
}

/* Earliest time qp's next request packet may leave under the message-rate
 * ceiling: msg_free_ns when it starts a work request, else 0. The NIC-wide
 * time moves with every message start; QPs keyed before that are visited
 * once, refused and keyed again (work follows the QPs with messages, not
 * the idle ones). */
static uint64_t msg_at(const struct ne_nic *nic, const struct ne_qp *qp)
{
	return nic->cfg.msg_rate && qp->req.off == 0 ? nic->msg_free_ns : 0;
}

/* A request packet of qp left at now: a message start moves the ceiling. */
static void msg_sent(struct ne_nic *nic, bool started, uint64_t now_ns)
{
	if (nic->cfg.msg_rate && started)
		nic->msg_free_ns = now_ns + (NE_NS_PER_S + nic->cfg.msg_rate - 1) / nic->cfg.msg_rate;
}

/* When qp next has a frame it may send (the link aside), NE_NO_TIME if none. */
static uint64_t due_ns(const struct ne_nic *nic, const struct ne_qp *qp)
{
	uint64_t t = NE_NO_TIME;

	if (!qp->used)
		return NE_NO_TIME;
	if (qp->dc.np_pending)
		t = 0;
	if (ne_resp_has_work(qp) && qp->resp.ready_ns < t)
		t = qp->resp.ready_ns;
	if (req_ready(qp)) {
		uint64_t r = tmax(tmax(qp->req.ready_ns, ne_dcqcn_tx_at(qp)), msg_at(nic, qp));

		if (r < t)
			t = r;
	}
	return t;
}

static void heap_put(struct ne_heap *h, uint32_t slot, uint64_t key)
{
	if (key == NE_NO_TIME)
		ne_heap_remove(h, slot);
	else
		ne_heap_set(h, slot, key);
}

/* Recompute the keys of one QP. */
static void rekey(struct ne_nic *nic, uint32_t slot)
{
	struct ne_sched *s = &nic->sched;
	const struct ne_qp *qp = &nic->qps[slot];
	uint64_t due = due_ns(nic, qp);

	nic->work.qp_visits++;
	heap_put(&s->rto, slot, qp->used ? qp->comp.rto_at : NE_NO_TIME);
	heap_put(&s->dc, slot, qp->used ? ne_dcqcn_next_timer_ns(nic, qp) : NE_NO_TIME);
	if (due != NE_NO_TIME && due <= s->now) {
		ne_heap_remove(&s->wait, slot);
		ne_heap_set(&s->ready, slot, due);
		ne_bits_set(&s->ready_set, slot);
		return;
	}
	ne_heap_remove(&s->ready, slot);
	ne_bits_clear(&s->ready_set, slot);
	heap_put(&s->wait, slot, due);
}

static void flush(struct ne_nic *nic)
{
	struct ne_sched *s = &nic->sched;

	/* rekey() does not mark, so the list only shrinks here */
	while (s->ndirty) {
		uint32_t slot = s->dirty[--s->ndirty];

		s->is_dirty[slot] = 0;
		rekey(nic, slot);
	}
}

/* Time moves to now: QPs due by now join the ready set. */
static void promote(struct ne_nic *nic, uint64_t now_ns)
{
	struct ne_sched *s = &nic->sched;

	if (now_ns > s->now)
		s->now = now_ns;
	while (ne_heap_top_key(&s->wait) <= s->now) {
		uint32_t slot = ne_heap_top(&s->wait);
		uint64_t due = ne_heap_top_key(&s->wait);

		ne_heap_remove(&s->wait, slot);
		ne_heap_set(&s->ready, slot, due);
		ne_bits_set(&s->ready_set, slot);
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Pop the slots of a timer heap due by now into due[]; returns the new count. */
static uint32_t take_due(struct ne_heap *h, uint64_t now_ns, uint32_t *due, uint32_t n)
{
	while (ne_heap_top_key(h) <= now_ns) {
		uint32_t slot = ne_heap_top(h);

		ne_heap_remove(h, slot);
		due[n++] = slot;
	}
	return n;
}

/*
 * Due retransmit and DCQCN timers, in slot order as the scanning scheduler
 * ran them (a timer can complete work requests, and completions reach the
 * owner through CQ notification in this order). Per QP the same calls: the
 * retransmit timer when due, then DCQCN's lazy timer replay.
 */
static void run_timers(struct ne_nic *nic, uint64_t now_ns)
{
	struct ne_sched *s = &nic->sched;
	uint32_t n = take_due(&s->rto, now_ns, s->due, 0);

	n = take_due(&s->dc, now_ns, s->due, n);
	if (n == 0)
		return;
	qsort(s->due, n, sizeof(*s->due), cmp_u32);
	for (uint32_t i = 0; i < n; i++) {
		struct ne_qp *qp;

		if (i > 0 && s->due[i] == s->due[i - 1])
			continue;
		qp = &nic->qps[s->due[i]];
		nic->work.qp_visits++;
		if (qp->used && qp->comp.rto_at != NE_NO_TIME && qp->comp.rto_at <= now_ns)
			ne_comp_timer(nic, qp, now_ns);
		if (qp->used && qp->dc.active)
			ne_dcqcn_advance(nic, qp, now_ns);
		ne_qp_touch(nic, qp);
	}
}

static uint32_t qp_max_frame(const struct ne_qp *qp)
{
	return NE_HDR_LEN + RL_RETH_LEN + RL_IMMDT_LEN + qp->attr.path_mtu + NE_PAD_MAX + RL_ICRC_LEN;
}

#define VISIT_STOP 2 /* a pending CNP ended the walk (sent or not) */

/*
 * One ready QP's turn: its CNP, else its response when its context is
 * resident (a miss delays the response and lets the request try), else its
 * request. Returns 1 with *flen when a frame was built, 0 when the walk goes
 * on, VISIT_STOP, or -ENOSPC.
 */
static int visit(struct ne_nic *nic, struct ne_qp *qp, uint64_t now_ns, uint8_t *buf, size_t cap,
		 size_t *flen)
{
	int got = 0;

	if (qp->dc.np_pending)
		return ne_dcqcn_build_cnp(nic, qp, buf, flen) ? 1 : VISIT_STOP;
	if (ne_resp_has_work(qp) && now_ns >= qp->resp.ready_ns) {
		if (cap < qp_max_frame(qp)) {
			nic->cnt.send_err++;
			return -ENOSPC;
		}
		if (!ne_qpc_touch(nic, qp->qpn)) {
			qp->resp.ready_ns = now_ns + nic->cfg.qpc_miss_ns;
		} else {
			got = ne_resp_build(nic, qp, buf, flen);
			if (got) {
				ne_qpc_sent(nic, qp->qpn);
				return got;
			}
		}
	}
	if (req_ready(qp) && now_ns >= qp->req.ready_ns && now_ns >= ne_dcqcn_tx_at(qp) &&
	    now_ns >= msg_at(nic, qp)) {
		bool starts = qp->req.off == 0;

		if (cap < qp_max_frame(qp)) {
			nic->cnt.send_err++;
			return -ENOSPC;
		}
		if (!ne_qpc_touch(nic, qp->qpn)) {
			qp->req.ready_ns = now_ns + nic->cfg.qpc_miss_ns;
			return 0;
		}
		got = ne_req_build(nic, qp, now_ns, buf, flen);
		if (got) {
			ne_qpc_sent(nic, qp->qpn);
			msg_sent(nic, starts, now_ns);
		}
		if (got && qp->dc.limited)
			ne_dcqcn_sent(nic, qp, now_ns, *flen);
	}
	return got;
}

/* The next member of the ready set in round-robin order from `from`
 * (inclusive) that comes before `end` once wrapped; NE_BITS_NONE when the
 * walk is over. */
static uint32_t walk_next(const struct ne_nic *nic, uint32_t from, uint32_t end, bool *wrapped)
{
	const struct ne_bits *b = &nic->sched.ready_set;
	uint32_t idx;

	if (!*wrapped) {
		idx = ne_bits_next(b, from);
		if (idx != NE_BITS_NONE)
			return idx;
		*wrapped = true;
		from = 0;
	}
	idx = ne_bits_next(b, from);
	return idx < end ? idx : NE_BITS_NONE;
}

/* Walk the ready QPs from nic->rr; returns visit()'s result and the winner in *win. */
static int pick(struct ne_nic *nic, uint64_t now_ns, uint8_t *buf, size_t cap, size_t *flen,
		uint32_t *win)
{
	bool wrapped = false;
	uint32_t idx = walk_next(nic, nic->rr, nic->rr, &wrapped);

	while (idx != NE_BITS_NONE) {
		struct ne_qp *qp = &nic->qps[idx];
		int rc;

		nic->work.qp_visits++;
		rc = visit(nic, qp, now_ns, buf, cap, flen);
		ne_qp_touch(nic, qp);
		if (rc != 0) {
			*win = idx;
			return rc;
		}
		/* completions of this turn may have given other QPs work */
		flush(nic);
		if (idx + 1 >= nic->nqps) {
			if (wrapped)
				break;
			wrapped = true;
			idx = walk_next(nic, 0, nic->rr, &wrapped);
		} else {
			idx = walk_next(nic, idx + 1, nic->rr, &wrapped);
		}
	}
	return 0;
}

/* The QP whose turn it is ends it: a credit is dropped, an overdraft kept. */
static void end_turn(struct ne_nic *nic)
{
	if (nic->turn != NE_HEAP_NONE && nic->qps[nic->turn].deficit > 0)
		nic->qps[nic->turn].deficit = 0;
	nic->turn = NE_HEAP_NONE;
}

/* Where the next walk starts after win sent flen bytes: the next slot, or
 * win again while its tx_quantum turn lasts. */
static uint32_t next_rr(struct ne_nic *nic, uint32_t win, size_t flen)
{
	struct ne_qp *qp = &nic->qps[win];

	if (!nic->cfg.tx_quantum)
		return (win + 1) % nic->nqps;
	if (nic->turn != win) {
		end_turn(nic);
		nic->turn = win;
		qp->deficit += nic->cfg.tx_quantum;
	}
	qp->deficit -= (int64_t)flen;
	if (qp->deficit > 0)
		return win;
	end_turn(nic);
	return (win + 1) % nic->nqps;
}

int ne_nic_poll_tx(struct ne_nic *nic, uint64_t now_ns, uint8_t *buf, size_t cap, size_t *len)
{
	size_t flen = 0;
	uint32_t win = 0;
	int rc;

	if (!nic || !buf || !len)
		return -EINVAL;
	if (nic->ev_valid && now_ns < nic->ev_cache)
		return 0; /* nothing can be due before the next event */
	ne_nic_touch(nic);
	nic->work.polls++;
	flush(nic);
	run_timers(nic, now_ns);
	flush(nic);
	promote(nic, now_ns);
	if (!nic->link_up || now_ns < nic->link_free_ns)
		return 0;

	rc = pick(nic, now_ns, buf, cap, &flen, &win);
	if (rc != 1)
		return rc == VISIT_STOP ? 0 : rc;
	nic->rr = next_rr(nic, win, flen);
	if (!nic->cfg.icrc_off)
		ne_finish_icrc(buf, flen, nic->cfg.zero_payload);
	nic->cnt.sent_pkts++;
	nic->cnt.sent_bytes += flen;
	if (nic->cfg.line_rate_bps)
		nic->link_free_ns = now_ns + ne_wire_ns(flen, nic->cfg.line_rate_bps);
	*len = flen;
	return 1;
}

uint64_t ne_nic_next_event_ns(const struct ne_nic *cnic)
{
	/* the heaps and the cache are not part of the NIC's observable state */
	struct ne_nic *nic = (struct ne_nic *)(uintptr_t)cnic;
	struct ne_sched *s = &nic->sched;
	uint64_t t, work;

	if (nic->ev_valid)
		return nic->ev_cache;
	flush(nic);
	t = ne_heap_top_key(&s->rto);
	if (nic->link_up) {
		work = ne_heap_top_key(&s->ready);
		if (ne_heap_top_key(&s->wait) < work)
			work = ne_heap_top_key(&s->wait);
		if (work != NE_NO_TIME && tmax(work, nic->link_free_ns) < t)
			t = tmax(work, nic->link_free_ns);
	}
	nic->ev_cache = t;
	nic->ev_valid = true;
	return t;
}
