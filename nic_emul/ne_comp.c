/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completer (the role of rxe_comp.c): consumes ACK/NAK and READ response
 * packets, completes send WQEs in order, drives retries.
 *
 * Rules, as rxe applies them:
 * - a response with a PSN beyond the oldest WQE's last PSN completes that
 *   WQE if it is a SEND/WRITE (coalesced ACK), or means the READ's
 *   responses were lost, which starts a retry;
 * - READ responses must arrive in PSN order; one with a PSN beyond the
 *   expected one is ignored and the retransmit timer recovers;
 * - a PSN sequence NAK acknowledges everything before its PSN and restarts
 *   from it; while one retry is in progress a further NAK for the same PSN
 *   does not start another (a timeout or a NAK for a later PSN does);
 * - RNR NAK: wait the RNR timer the NAK carries, then resend from its PSN;
 *   rnr_retry 7 retries for ever;
 * - retries are limited by retry_cnt (timeouts and PSN sequence NAKs both
 *   count, as in rxe); when exhausted the WQE completes with
 *   NE_WC_RETRY_EXC_ERR and the QP moves to ERROR;
 * - a late response (sent before a go-back-N rewind) may acknowledge PSNs
 *   the requester is about to resend: the requester is moved up to
 *   comp.psn (ne_req_sync), so that its WQE, offset and PSN stay consistent.
 * Differences from rxe (rxe_comp.c resets the counters and started_retry on
 * positive ACKs, READ responses and coalesced completions only, and
 * decrements retry_cnt on every timeout and sequence NAK it does not ignore):
 * - retry_cnt 7 is 7 retries (IBA); rxe treats 7 as infinite;
 * - a sequence NAK that acknowledges new PSNs is forward progress too: it
 *   resets the counters and started_retry, so it starts a new retry even
 *   while an older one is in progress (rxe waits for the timeout);
 * - a timeout or NAK that finds nothing sent after comp.psn resends nothing
 *   and does not count as a retry (rxe decrements retry_cnt anyway).
 * Without the last two, heavy reordering (many NAKs, several for the PSN
 * the requester sends next) exhausted a finite retry_cnt, or waited for
 * timeouts, although nothing was lost.
 */
#include <string.h>

#include "ne_priv.h"

#define NE_AETH_VALUE_MASK    0x1Fu /* AETH syndrome low bits: RNR timer code or credits */
#define NE_RNR_RETRY_INFINITE 7     /* rnr_retry 7: retry for ever (IBA) */

static struct ne_swqe *head_wqe(const struct ne_qp *qp)
{
	if (qp->sq.head == qp->sq.tail)
		return NULL;
	return &qp->sq.wqe[qp->sq.head % qp->sq.size];
}

static enum ne_wc_opcode wc_opcode(enum ne_wr_opcode op)
{
	switch (op) {
	case NE_WR_SEND:
	case NE_WR_SEND_WITH_IMM:
		return NE_WC_SEND;
	case NE_WR_RDMA_WRITE:
	case NE_WR_RDMA_WRITE_WITH_IMM:
		return NE_WC_RDMA_WRITE;
	case NE_WR_RDMA_READ:
	default:
		return NE_WC_RDMA_READ;
	}
}

void ne_comp_wqe(struct ne_nic *nic, struct ne_qp *qp, enum ne_wc_status st)
{
	struct ne_swqe *w = head_wqe(qp);
	struct ne_wc wc;

	if (!w)
		return;
	if (st != NE_WC_SUCCESS || qp->sq_sig_all || (w->wr.send_flags & NE_SEND_SIGNALED)) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = w->wr.wr_id;
		wc.status = st;
		wc.opcode = wc_opcode(w->wr.opcode);
		wc.byte_len = w->wr.length;
		wc.qpn = qp->qpn;
		wc.src_qp = qp->attr.dest_qpn;
		ne_cq_push(nic, qp->scq, &wc);
	}
	if (st == NE_WC_SUCCESS && wc_opcode(w->wr.opcode) == NE_WC_SEND)
		nic->cnt.rdma_sends++;
	if (st == NE_WC_SUCCESS && ne_psn_cmp(w->last_psn, qp->comp.psn) >= 0)
		qp->comp.psn = ne_psn_add(w->last_psn, 1);
	qp->comp.opcode = NE_OP_NONE;
	qp->sq.head++;
	if ((int32_t)(qp->sq.next - qp->sq.head) < 0)
		qp->sq.next = qp->sq.head;
	if (st != NE_WC_SUCCESS)
		ne_qp_to_error(nic, qp);
}

static bool outstanding(const struct ne_qp *qp)
{
	const struct ne_swqe *w = head_wqe(qp);

	return w && w->state == NE_WQE_PENDING;
}

static void rearm(struct ne_qp *qp, uint64_t now_ns)
{
	if (qp->state == NE_QPS_RTS && outstanding(qp) && qp->attr.timeout &&
	    ne_psn_cmp(qp->req.psn, qp->comp.psn) > 0)
		qp->comp.rto_at = now_ns + ne_timeout_ns(qp->attr.timeout);
	else
		qp->comp.rto_at = NE_NO_TIME;
}

static void do_retry(struct ne_nic *nic, struct ne_qp *qp, bool timeout)
{
	struct ne_swqe *w = head_wqe(qp);

	if (!w || w->state != NE_WQE_PENDING)
		return;
	if (qp->comp.started_retry && !timeout)
		return;
	/* Nothing was sent after comp.psn (a NAK naming the very PSN the
	 * requester sends next, typically after a rewind with packets of the
	 * first transmission still in flight): nothing to resend, so this is
	 * not a retry and costs no retry_cnt (rxe decrements here too, but
	 * treats retry_cnt 7 as infinite). */
	if (ne_psn_cmp(qp->req.psn, qp->comp.psn) <= 0)
		return;
	if (qp->comp.retry_left > 0) {
		qp->comp.retry_left--;
		nic->cnt.completer_retry_err++;
		ne_req_retry(qp);
		qp->comp.started_retry = true;
		qp->comp.rto_at = NE_NO_TIME; /* re-armed by the retransmission */
		return;
	}
	nic->cnt.retry_exceeded_err++;
	ne_comp_wqe(nic, qp, NE_WC_RETRY_EXC_ERR);
}

void ne_comp_timer(struct ne_nic *nic, struct ne_qp *qp, uint64_t now_ns)
{
	qp->comp.rto_at = NE_NO_TIME;
	if (qp->state != NE_QPS_RTS || !outstanding(qp) || ne_psn_cmp(qp->req.psn, qp->comp.psn) <= 0)
		return;
	nic->cnt.timeouts++;
	do_retry(nic, qp, true);
	if (qp->state == NE_QPS_RTS && qp->comp.rto_at == NE_NO_TIME && outstanding(qp) &&
	    ne_psn_cmp(qp->req.psn, qp->comp.psn) > 0)
		rearm(qp, now_ns);
}

static bool is_read_resp(uint8_t op)
{
	uint32_t m = ne_op_mask(op);

	return (m & NE_OPM_RESP) && (m & NE_OPM_READ);
}

static void progress(struct ne_qp *qp)
{
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
	qp->comp.started_retry = false;
}

/* A READ response at the expected PSN for the READ WQE w. */
static int read_resp(struct ne_nic *nic, struct ne_qp *qp, struct ne_swqe *w,
		     const uint8_t *frame, const struct rl_pkt *pkt)
{
	uint8_t op = pkt->bth.opcode;
	uint32_t mtu = qp->attr.path_mtu;
	uint32_t off = (uint32_t)ne_psn_diff(pkt->bth.psn, w->first_psn) * mtu;
	uint32_t rem = w->wr.length > off ? w->wr.length - off : 0;
	/* comp.opcode is a READ response opcode or NE_OP_NONE (mask 0) */
	bool mid_msg = ne_op_any((uint8_t)qp->comp.opcode, NE_OPM_FIRST | NE_OPM_MIDDLE);
	bool want_last = rem <= mtu;
	uint32_t expect;
	uint8_t *dst;

	/* FIRST/ONLY start a message, MIDDLE/LAST continue one; LAST/ONLY
	 * must carry the rest, FIRST/MIDDLE exactly one MTU */
	if (!is_read_resp(op) || ne_op_any(op, NE_OPM_START) == mid_msg ||
	    ne_op_any(op, NE_OPM_END) != want_last)
		goto bad;
	expect = want_last ? rem : mtu;
	if (pkt->payload_len != expect)
		goto bad;
	if (expect) {
		dst = ne_mr_ptr(nic, w->wr.lkey, w->wr.local_addr + off, expect, NE_ACCESS_LOCAL_WRITE);
		if (!dst) {
			ne_comp_wqe(nic, qp, NE_WC_LOC_PROT_ERR);
			return NE_RX_OK;
		}
		ne_payload_in(nic, dst, frame + pkt->payload_off, expect);
	}
	qp->comp.psn = ne_psn_add(pkt->bth.psn, 1);
	qp->comp.opcode = op;
	progress(qp);
	if (want_last)
		ne_comp_wqe(nic, qp, NE_WC_SUCCESS);
	return NE_RX_OK;
bad:
	nic->cnt.rcv_stale_resp++;
	return NE_RX_STALE;
}

/*
 * ne_comp_rx() runs one response through a chain of named steps, as rxe's
 * completer does: each step checks one thing and names the next one.
 *   GET_WQE -> CHECK_PSN -> CHECK_ACK -> READ | ACK | RNR | NAK -> EXIT,
 * CHECK_PSN loops back to GET_WQE after completing a WQE that a later PSN
 * acknowledged (coalesced ACK); STALE counts and ignores the response.
 * EXIT restarts the retransmit timer after progress; DONE returns at once
 * (an RNR NAK: no timer while the RNR delay runs).
 */
enum comp_state {
	COMPST_GET_WQE,
	COMPST_CHECK_PSN,
	COMPST_CHECK_ACK,
	COMPST_READ,
	COMPST_ACK,
	COMPST_RNR,
	COMPST_NAK,
	COMPST_STALE,
	COMPST_EXIT,
	COMPST_DONE,
};

/* One response on its way through the chain. */
struct comp_ctx {
	struct ne_nic *nic;
	struct ne_qp *qp;
	const uint8_t *frame;
	const struct rl_pkt *pkt;
	uint64_t now_ns;
	uint8_t op;
	uint32_t psn;
	uint8_t syn;       /* AETH syndrome */
	struct ne_swqe *w; /* oldest WQE, set by get_wqe */
	int d;             /* psn against comp.psn, set by check_psn */
	int rc;            /* what ne_comp_rx returns */
};

/* The oldest WQE must be sent and not yet complete; else the response is
 * stale. */
static enum comp_state get_wqe(struct comp_ctx *c)
{
	c->w = head_wqe(c->qp);
	if (!c->w || c->w->state != NE_WQE_PENDING)
		return COMPST_STALE;
	return COMPST_CHECK_PSN;
}

static bool wqe_is_read(const struct ne_swqe *w)
{
	return w->wr.opcode == NE_WR_RDMA_READ;
}

/* PSN against the WQE and comp.psn. Beyond the WQE's last PSN: a SEND/WRITE
 * is complete (coalesced ACK, next WQE), a READ lost responses (retry).
 * Before comp.psn: only the ACK of a SEND/WRITE's last PSN completes it,
 * anything else is stale. A READ response beyond comp.psn is a gap: stale,
 * the retransmit timer recovers. */
static enum comp_state check_psn(struct comp_ctx *c)
{
	struct ne_qp *qp = c->qp;
	struct ne_swqe *w = c->w;

	if (ne_psn_cmp(c->psn, w->last_psn) > 0) {
		if (wqe_is_read(w)) {
			do_retry(c->nic, qp, false);
			return COMPST_EXIT;
		}
		progress(qp);
		ne_comp_wqe(c->nic, qp, NE_WC_SUCCESS);
		return COMPST_GET_WQE;
	}
	c->d = ne_psn_cmp(c->psn, qp->comp.psn);
	if (c->d < 0) {
		if (c->op == RL_OP_ACK && c->psn == w->last_psn &&
		    (c->syn & NE_AETH_TYPE_MASK) == NE_AETH_ACK && !wqe_is_read(w)) {
			progress(qp);
			ne_comp_wqe(c->nic, qp, NE_WC_SUCCESS);
			return COMPST_EXIT;
		}
		return COMPST_STALE;
	}
	if (c->d > 0 && wqe_is_read(w) && c->op != RL_OP_ACK)
		return COMPST_STALE;
	return COMPST_CHECK_ACK;
}

/* Kind of response: a READ response at comp.psn for a READ WQE, or an
 * ACK/RNR NAK/NAK by the AETH type; anything else is stale. */
static enum comp_state check_ack(struct comp_ctx *c)
{
	if (is_read_resp(c->op))
		return wqe_is_read(c->w) && c->d == 0 ? COMPST_READ : COMPST_STALE;
	if (!ne_op_any(c->op, NE_OPM_ACK))
		return COMPST_STALE;
	switch (c->syn & NE_AETH_TYPE_MASK) {
	case NE_AETH_ACK: return COMPST_ACK;
	case NE_AETH_RNR_NAK: return COMPST_RNR;
	case NE_AETH_NAK: return COMPST_NAK;
	default: return COMPST_STALE;
	}
}

/* A READ response in order: place it (read_resp checks its position and
 * length). */
static enum comp_state do_read(struct comp_ctx *c)
{
	c->rc = read_resp(c->nic, c->qp, c->w, c->frame, c->pkt);
	return COMPST_EXIT;
}

/* Positive ACK: completes a SEND/WRITE at its last PSN, else acknowledges up
 * to its PSN; a READ WQE is completed by its responses only (stale). */
static enum comp_state do_ack(struct comp_ctx *c)
{
	struct ne_qp *qp = c->qp;

	if (wqe_is_read(c->w))
		return COMPST_STALE;
	progress(qp);
	if (c->psn == c->w->last_psn)
		ne_comp_wqe(c->nic, qp, NE_WC_SUCCESS);
	else
		qp->comp.psn = ne_psn_add(c->psn, 1);
	return COMPST_EXIT;
}

/* RNR NAK: resend from its PSN after the RNR timer it carries, or complete
 * the WQE with RNR retry exceeded when rnr_retry is used up (7: for ever). */
static enum comp_state do_rnr(struct comp_ctx *c)
{
	struct ne_qp *qp = c->qp;

	c->nic->cnt.rcvd_rnr_err++;
	qp->comp.psn = c->psn;
	if (qp->comp.rnr_left == 0) {
		c->nic->cnt.retry_rnr_exceeded_err++;
		ne_comp_wqe(c->nic, qp, NE_WC_RNR_RETRY_EXC_ERR);
	} else {
		if (qp->comp.rnr_left != NE_RNR_RETRY_INFINITE)
			qp->comp.rnr_left--;
		qp->req.ready_ns = c->now_ns + ne_rnr_timer_ns(c->syn & NE_AETH_VALUE_MASK);
		ne_req_retry(qp);
		qp->comp.rto_at = NE_NO_TIME;
	}
	return COMPST_DONE;
}

/* NAK: a PSN sequence NAK acknowledges what lies before its PSN and starts
 * a retry; the other NAKs complete the WQE with their error (QP to ERROR). */
static enum comp_state do_nak(struct comp_ctx *c)
{
	struct ne_qp *qp = c->qp;

	switch (c->syn) {
	case NE_AETH_NAK_PSN_SEQ:
		if (ne_psn_cmp(c->psn, qp->comp.psn) > 0) {
			/* implicitly acknowledges everything before psn: forward
			 * progress, and a new sequence error that the retry in
			 * progress (if any) does not cover */
			c->nic->cnt.rcvd_seq_err++;
			qp->comp.psn = c->psn;
			progress(qp);
		}
		do_retry(c->nic, qp, false);
		break;
	case NE_AETH_NAK_INV_REQ: ne_comp_wqe(c->nic, qp, NE_WC_REM_INV_REQ_ERR); break;
	case NE_AETH_NAK_REM_ACC: ne_comp_wqe(c->nic, qp, NE_WC_REM_ACCESS_ERR); break;
	default: ne_comp_wqe(c->nic, qp, NE_WC_REM_OP_ERR); break;
	}
	return COMPST_EXIT;
}

/* A response that matches nothing outstanding: counted and ignored. */
static enum comp_state do_stale(struct comp_ctx *c)
{
	c->nic->cnt.rcv_stale_resp++;
	c->rc = NE_RX_STALE;
	return COMPST_EXIT;
}

/* One step of the chain; a switch so that the steps inline (as in ne_resp.c). */
static enum comp_state comp_step(struct comp_ctx *c, enum comp_state st)
{
	switch (st) {
	case COMPST_GET_WQE: return get_wqe(c);
	case COMPST_CHECK_PSN: return check_psn(c);
	case COMPST_CHECK_ACK: return check_ack(c);
	case COMPST_READ: return do_read(c);
	case COMPST_ACK: return do_ack(c);
	case COMPST_RNR: return do_rnr(c);
	case COMPST_NAK: return do_nak(c);
	case COMPST_STALE: return do_stale(c);
	case COMPST_EXIT:
	case COMPST_DONE: break;
	}
	return st;
}

int ne_comp_rx(struct ne_nic *nic, struct ne_qp *qp, const uint8_t *frame,
	       const struct rl_pkt *pkt, uint64_t now_ns)
{
	struct comp_ctx c = {
		.nic = nic,
		.qp = qp,
		.frame = frame,
		.pkt = pkt,
		.now_ns = now_ns,
		.op = pkt->bth.opcode,
		.psn = pkt->bth.psn,
		.syn = pkt->bth.aeth_syndrome,
		.rc = NE_RX_OK,
	};
	uint32_t old_head = qp->sq.head, old_comp = qp->comp.psn;
	enum comp_state st = COMPST_GET_WQE;

	if (c.op == RL_OP_ACK) {
		if ((c.syn & NE_AETH_TYPE_MASK) == NE_AETH_ACK)
			nic->cnt.acks_rcvd++;
		else
			nic->cnt.naks_rcvd++;
	}
	while (st != COMPST_EXIT && st != COMPST_DONE)
		st = comp_step(&c, st);
	if (st == COMPST_DONE)
		return c.rc;
	/* forward progress restarts the retransmit timer (or stops it); a late
	 * response from before a rewind may have acknowledged PSNs beyond the
	 * requester's position: move the requester up to comp.psn first */
	if (qp->sq.head != old_head || qp->comp.psn != old_comp) {
		if (qp->state == NE_QPS_RTS)
			ne_req_sync(qp);
		rearm(qp, now_ns);
	}
	return c.rc;
}
