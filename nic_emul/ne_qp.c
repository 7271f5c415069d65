/* SPDX-License-Identifier: BSD-3-Clause */
/* QP objects: creation, the verbs state machine, posting work requests. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ne_mem.h"
#include "ne_priv.h"

#define NE_MAX_RD_ATOMIC 16u
#define NE_MAX_WR (1u << 20)           /* send or receive queue depth */
#define NE_MAX_MSG_LEN 0x80000000u     /* 2 GiB, IBA's largest message */
#define NE_RETRY_MAX 7                 /* retry_cnt, rnr_retry: 3 bits */
/* Attributes of a new QP (rxe's defaults). */
#define NE_DEFAULT_PATH_MTU 1024
#define NE_DEFAULT_TIMEOUT 14          /* 4.096 us << 14: 67 ms */
#define NE_DEFAULT_MIN_RNR_TIMER 12    /* 0.64 ms */

void ne_qp_reset(struct ne_qp *qp)
{
	qp->sq.head = qp->sq.next = qp->sq.tail = 0;
	qp->rq.head = qp->rq.tail = 0;
	qp->resp.rsp_head = qp->resp.rsp_tail = 0;
	qp->req.psn = qp->comp.psn = qp->attr.sq_psn;
	qp->req.off = 0;
	qp->req.max_valid = false;
	qp->req.noack_pkts = 0;
	qp->req.ready_ns = 0;
	qp->comp.opcode = NE_OP_NONE;
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
	qp->comp.started_retry = false;
	qp->comp.rto_at = NE_NO_TIME;
	qp->resp.psn = qp->attr.rq_psn;
	qp->resp.msn = 0;
	qp->resp.opcode = NE_OP_NONE;
	qp->resp.sent_psn_nak = false;
	qp->resp.resid = 0;
	qp->resp.has_rwqe = false;
	qp->resp.ready_ns = 0;
	qp->resp.res_next = 0;
	if (qp->resp.res)
		memset(qp->resp.res, 0, qp->resp.nres * sizeof(*qp->resp.res));
	memset(&qp->dc, 0, sizeof(qp->dc));
	qp->deficit = 0;
}

static uint16_t sport_of(const struct ne_nic *nic, uint32_t lqpn, uint32_t rqpn)
{
	switch (nic->cfg.sport_policy) {
	case NE_SPORT_FIXED:
		return nic->cfg.sport_fixed;
	case NE_SPORT_HASH: {
		/* symmetric in (lqpn, rqpn) so both ends pick the same port */
		uint32_t a = lqpn < rqpn ? lqpn : rqpn, b = lqpn < rqpn ? rqpn : lqpn;
		uint32_t h = nic->cfg.sport_seed ^ (a * 0x9E3779B1u) ^ (b * 0x85EBCA77u);

		/* an integer mixer (xorshift-multiply rounds) */
		h ^= h >> 16;
		h *= 0x7FEB352Du;
		h ^= h >> 15;
		h *= 0x846CA68Bu;
		h ^= h >> 16;
		return (uint16_t)(NE_SPORT_BASE | (h & NE_SPORT_MASK));
	}
	case NE_SPORT_RXE:
	default:
		return ne_rxe_udp_sport(lqpn, rqpn);
	}
}

/* Index into nic->held of a held QPN in qpn's slot, or nheld when none. */
static uint32_t held_at(const struct ne_nic *nic, uint32_t qpn)
{
	uint32_t i = 0;

	while (i < nic->nheld && nic->held[i] % nic->nqps != qpn % nic->nqps)
		i++;
	return i;
}

/* QPN n's slot is taken: by a QP, or a held number. */
static bool slot_taken(const struct ne_nic *nic, uint32_t n)
{
	return nic->qps[n % nic->nqps].used || held_at(nic, n) < nic->nheld;
}

/* The slot and number (*n) of a new QP: want's, or with want 0 the next free
 * QPN. Returns it, or NULL with *rc -EINVAL, -EEXIST or -ENOMEM. */
static struct ne_qp *qp_take(struct ne_nic *nic, uint32_t want, uint32_t *n, int *rc)
{
	if (want) {
		*n = want;
		*rc = want < NE_QPN_MIN || want > NE_QPN_MAX ? -EINVAL : slot_taken(nic, want) ? -EEXIST : 0;
		return *rc ? NULL : &nic->qps[want % nic->nqps];
	}
	for (uint32_t tries = 0; tries < nic->nqps; tries++) {
		*n = nic->next_qpn;
		nic->next_qpn = nic->next_qpn >= NE_QPN_MAX ? NE_QPN_MIN : nic->next_qpn + 1;
		if (*n >= NE_QPN_MIN && !slot_taken(nic, *n))
			return &nic->qps[*n % nic->nqps];
	}
	*rc = -ENOMEM;
	return NULL;
}

int ne_qp_hold(struct ne_nic *nic, uint32_t *qpn)
{
	int rc = 0;
	uint32_t n;

	if (!nic || !qpn)
		return -EINVAL;
	if (!qp_take(nic, 0, &n, &rc)) /* (its slot's page is read, not written) */
		return rc;
	if (ne_u32_push(&nic->held, &nic->nheld, &nic->held_cap, n))
		return -ENOMEM; /* (n is not taken: next_qpn moved on, as a failed create's may) */
	*qpn = n;
	return 0;
}

int ne_qp_create(struct ne_nic *nic, const struct ne_qp_init_attr *attr, uint32_t *qpn)
{
	struct ne_qp *qp = NULL;
	uint32_t n;
	int rc = 0;

	if (nic)
		ne_nic_touch(nic);

	if (!nic || !attr || !qpn || !attr->send_cq || !attr->recv_cq ||
	    attr->send_cq->nic != nic || attr->recv_cq->nic != nic ||
	    attr->max_send_wr == 0 || attr->max_recv_wr == 0 ||
	    attr->max_send_wr > NE_MAX_WR || attr->max_recv_wr > NE_MAX_WR)
		return -EINVAL;
	rc = ne_sched_init(nic);
	qp = rc ? NULL : qp_take(nic, attr->qpn, &n, &rc);
	if (!qp)
		return rc;
	memset(qp, 0, sizeof(*qp));
	qp->sq.wqe = calloc(attr->max_send_wr, sizeof(*qp->sq.wqe));
	qp->rq.wqe = calloc(attr->max_recv_wr, sizeof(*qp->rq.wqe));
	qp->resp.nres = NE_MAX_RD_ATOMIC;
	qp->resp.res = calloc(qp->resp.nres, sizeof(*qp->resp.res));
	qp->resp.rsp_size = 2 * NE_MAX_RD_ATOMIC + 4;
	qp->resp.rsp = calloc(qp->resp.rsp_size, sizeof(*qp->resp.rsp));
	if (!qp->sq.wqe || !qp->rq.wqe || !qp->resp.res || !qp->resp.rsp) {
		free(qp->sq.wqe);
		free(qp->rq.wqe);
		free(qp->resp.res);
		free(qp->resp.rsp);
		memset(qp, 0, sizeof(*qp));
		return -ENOMEM;
	}
	qp->used = true;
	qp->qpn = n;
	qp->state = NE_QPS_RESET;
	qp->sq.size = attr->max_send_wr;
	qp->rq.size = attr->max_recv_wr;
	qp->scq = attr->send_cq;
	qp->rcq = attr->recv_cq;
	qp->scq->users++;
	qp->rcq->users++;
	qp->sq_sig_all = attr->sq_sig_all;
	qp->attr.path_mtu = NE_DEFAULT_PATH_MTU;
	qp->attr.pkey = NE_DEFAULT_PKEY;
	qp->attr.timeout = NE_DEFAULT_TIMEOUT;
	qp->attr.retry_cnt = NE_RETRY_MAX;
	qp->attr.rnr_retry = NE_RETRY_MAX;
	qp->attr.min_rnr_timer = NE_DEFAULT_MIN_RNR_TIMER;
	qp->attr.max_rd_atomic = NE_MAX_RD_ATOMIC;
	qp->attr.max_dest_rd_atomic = NE_MAX_RD_ATOMIC;
	ne_qp_reset(qp);
	ne_qp_touch(nic, qp);
	*qpn = n;
	return 0;
}

int ne_qp_destroy(struct ne_nic *nic, uint32_t qpn)
{
	struct ne_qp *qp = nic ? ne_qp_lookup(nic, qpn) : NULL;

	if (nic)
		ne_nic_touch(nic);

	if (!qp) {
		uint32_t h = nic ? held_at(nic, qpn) : 0;

		if (!nic || h == nic->nheld || nic->held[h] != qpn)
			return -ENOENT;
		nic->held[h] = nic->held[--nic->nheld]; /* (a held number: ne_qp_hold) */
		return 0;
	}
	qp->scq->users--;
	qp->rcq->users--;
	free(qp->sq.wqe);
	free(qp->rq.wqe);
	free(qp->resp.res);
	free(qp->resp.rsp);
	memset(qp, 0, sizeof(*qp));
	ne_qp_touch(nic, qp); /* leaves the scheduler's structures */
	return 0;
}

static bool valid_mtu(uint32_t m)
{
	return m == 256 || m == 512 || m == 1024 || m == 2048 || m == 4096;
}

void ne_qp_to_error(struct ne_nic *nic, struct ne_qp *qp)
{
	struct ne_wc wc;

	qp->state = NE_QPS_ERROR;
	qp->comp.rto_at = NE_NO_TIME;
	while (qp->sq.head != qp->sq.tail) {
		struct ne_swqe *w = &qp->sq.wqe[qp->sq.head % qp->sq.size];

		memset(&wc, 0, sizeof(wc));
		wc.wr_id = w->wr.wr_id;
		wc.status = NE_WC_WR_FLUSH_ERR;
		wc.qpn = qp->qpn;
		ne_cq_push(nic, qp->scq, &wc);
		qp->sq.head++;
	}
	qp->sq.next = qp->sq.tail;
	if (qp->resp.has_rwqe) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = qp->resp.rwqe.wr_id;
		wc.status = NE_WC_WR_FLUSH_ERR;
		wc.opcode = NE_WC_RECV;
		wc.qpn = qp->qpn;
		ne_cq_push(nic, qp->rcq, &wc);
		qp->resp.has_rwqe = false;
	}
	while (qp->rq.head != qp->rq.tail) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = qp->rq.wqe[qp->rq.head % qp->rq.size].wr_id;
		wc.status = NE_WC_WR_FLUSH_ERR;
		wc.opcode = NE_WC_RECV;
		wc.qpn = qp->qpn;
		ne_cq_push(nic, qp->rcq, &wc);
		qp->rq.head++;
	}
	/* Responses already queued (e.g. the NAK that caused the error) still go out. */
}

/* ne_qp_modify's steps, as rxe_qp_chk_attr and rxe_qp_from_attr: check the
 * values, check the state transition, apply the attributes, enter the state.
 * Nothing is applied unless both checks pass. */

/* The values of the attributes in mask: 0, or -EINVAL when one is out of range. */
static int qp_check_attr(const struct ne_qp_attr *attr, uint32_t mask)
{
	if ((mask & NE_QP_PATH_MTU) && !valid_mtu(attr->path_mtu))
		return -EINVAL;
	if ((mask & NE_QP_AV) && attr->dscp > NE_DSCP_MAX)
		return -EINVAL;
	if ((mask & NE_QP_TIMEOUT) && attr->timeout > NE_TIMER_CODE_MAX)
		return -EINVAL;
	if ((mask & NE_QP_RETRY_CNT) && attr->retry_cnt > NE_RETRY_MAX)
		return -EINVAL;
	if ((mask & NE_QP_RNR_RETRY) && attr->rnr_retry > NE_RETRY_MAX)
		return -EINVAL;
	if ((mask & NE_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > NE_TIMER_CODE_MAX)
		return -EINVAL;
	if ((mask & NE_QP_MAX_QP_RD_ATOMIC) &&
	    (attr->max_rd_atomic == 0 || attr->max_rd_atomic > NE_MAX_RD_ATOMIC))
		return -EINVAL;
	if ((mask & NE_QP_MAX_DEST_RD_ATOMIC) &&
	    (attr->max_dest_rd_atomic == 0 || attr->max_dest_rd_atomic > NE_MAX_RD_ATOMIC))
		return -EINVAL;
	if ((mask & NE_QP_DEST_QPN) && (attr->dest_qpn == 0 || attr->dest_qpn > NE_QPN_MAX))
		return -EINVAL;
	return 0;
}

/* The verbs state machine: may a QP in cur go to next with the attributes in
 * mask (RTR needs the path, RTS the send PSN)? Without NE_QP_STATE, a QP in
 * RESET or ERROR takes no attribute. 0, or -EINVAL. */
static int qp_check_state(enum ne_qp_state cur, enum ne_qp_state next, uint32_t mask)
{
	if (mask & NE_QP_STATE) {
		bool ok;

		switch (next) {
		case NE_QPS_RESET:
		case NE_QPS_ERROR:
			ok = true;
			break;
		case NE_QPS_INIT:
			ok = cur == NE_QPS_RESET || cur == NE_QPS_INIT;
			break;
		case NE_QPS_RTR:
			ok = (cur == NE_QPS_INIT &&
			      (mask & (NE_QP_AV | NE_QP_PATH_MTU | NE_QP_DEST_QPN | NE_QP_RQ_PSN)) ==
				      (NE_QP_AV | NE_QP_PATH_MTU | NE_QP_DEST_QPN | NE_QP_RQ_PSN)) ||
			     cur == NE_QPS_RTR;
			break;
		case NE_QPS_RTS:
			ok = (cur == NE_QPS_RTR && (mask & NE_QP_SQ_PSN)) || cur == NE_QPS_RTS;
			break;
		default:
			ok = false;
		}
		if (!ok)
			return -EINVAL;
	} else if (cur == NE_QPS_RESET || cur == NE_QPS_ERROR) {
		return -EINVAL;
	}
	return 0;
}

/* Copy the checked attributes in mask into the QP; a new path or peer QPN
 * gives a new UDP source port. */
static void qp_apply_attr(struct ne_nic *nic, struct ne_qp *qp, const struct ne_qp_attr *attr,
			  uint32_t mask)
{
	if (mask & NE_QP_AV) {
		qp->attr.dest_ipv4 = attr->dest_ipv4;
		memcpy(qp->attr.dest_mac, attr->dest_mac, 6);
		qp->attr.dscp = attr->dscp;
	}
	if (mask & NE_QP_PATH_MTU)
		qp->attr.path_mtu = attr->path_mtu;
	if (mask & NE_QP_DEST_QPN)
		qp->attr.dest_qpn = attr->dest_qpn;
	if (mask & NE_QP_RQ_PSN)
		qp->attr.rq_psn = attr->rq_psn & NE_PSN_MASK;
	if (mask & NE_QP_SQ_PSN)
		qp->attr.sq_psn = attr->sq_psn & NE_PSN_MASK;
	if (mask & NE_QP_TIMEOUT)
		qp->attr.timeout = attr->timeout;
	if (mask & NE_QP_RETRY_CNT)
		qp->attr.retry_cnt = attr->retry_cnt;
	if (mask & NE_QP_RNR_RETRY)
		qp->attr.rnr_retry = attr->rnr_retry;
	if (mask & NE_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = attr->min_rnr_timer;
	if (mask & NE_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = attr->max_rd_atomic;
	if (mask & NE_QP_MAX_DEST_RD_ATOMIC)
		qp->attr.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & NE_QP_PKEY)
		qp->attr.pkey = attr->pkey;
	if (mask & (NE_QP_AV | NE_QP_DEST_QPN))
		qp->sport = sport_of(nic, qp->qpn, qp->attr.dest_qpn);
}

/* Enter next (a checked transition to another state): RESET clears the
 * queues, RTR starts the responder at the receive PSN, RTS the requester and
 * completer at the send PSN, ERROR flushes. */
static void qp_enter_state(struct ne_nic *nic, struct ne_qp *qp, enum ne_qp_state next)
{
	switch (next) {
	case NE_QPS_RESET:
		qp->state = NE_QPS_RESET;
		ne_qp_reset(qp);
		break;
	case NE_QPS_INIT:
		qp->state = NE_QPS_INIT;
		break;
	case NE_QPS_RTR:
		qp->state = NE_QPS_RTR;
		qp->resp.psn = qp->attr.rq_psn;
		qp->resp.msn = 0;
		qp->resp.opcode = NE_OP_NONE;
		qp->resp.sent_psn_nak = false;
		break;
	case NE_QPS_RTS:
		qp->state = NE_QPS_RTS;
		qp->req.psn = qp->comp.psn = qp->attr.sq_psn;
		qp->req.off = 0;
		qp->req.max_valid = false;
		qp->comp.opcode = NE_OP_NONE;
		qp->comp.retry_left = qp->attr.retry_cnt;
		qp->comp.rnr_left = qp->attr.rnr_retry;
		qp->comp.started_retry = false;
		qp->comp.rto_at = NE_NO_TIME;
		break;
	case NE_QPS_ERROR:
		ne_qp_to_error(nic, qp);
		break;
	}
}

int ne_qp_modify(struct ne_nic *nic, uint32_t qpn, const struct ne_qp_attr *attr, uint32_t mask)
{
	struct ne_qp *qp = nic ? ne_qp_lookup(nic, qpn) : NULL;
	enum ne_qp_state cur, next;
	int rc;

	if (nic)
		ne_nic_touch(nic);

	if (!qp)
		return -ENOENT;
	ne_qp_touch(nic, qp);
	if (!attr)
		return -EINVAL;
	cur = qp->state;
	next = (mask & NE_QP_STATE) ? attr->state : cur;

	rc = qp_check_attr(attr, mask);
	if (!rc)
		rc = qp_check_state(cur, next, mask);
	if (rc)
		return rc;
	qp_apply_attr(nic, qp, attr, mask);

	if (!(mask & NE_QP_STATE) || next == cur) {
		if (cur == NE_QPS_RTS && (mask & (NE_QP_RETRY_CNT | NE_QP_RNR_RETRY))) {
			qp->comp.retry_left = qp->attr.retry_cnt;
			qp->comp.rnr_left = qp->attr.rnr_retry;
		}
		return 0;
	}
	qp_enter_state(nic, qp, next);
	return 0;
}

int ne_qp_query(const struct ne_nic *nic, uint32_t qpn, struct ne_qp_attr *out)
{
	const struct ne_qp *qp = nic ? ne_qp_lookup(nic, qpn) : NULL;

	if (!qp)
		return -ENOENT;
	if (!out)
		return -EINVAL;
	*out = qp->attr;
	out->state = qp->state;
	out->udp_sport = qp->sport;
	out->qpn = qp->qpn;
	return 0;
}

int ne_post_send(struct ne_nic *nic, uint32_t qpn, const struct ne_send_wr *wr, uint64_t now_ns)
{
	struct ne_qp *qp = nic ? ne_qp_lookup(nic, qpn) : NULL;
	struct ne_swqe *w;

	if (nic)
		ne_nic_touch(nic);

	(void)now_ns;
	if (!qp)
		return -ENOENT;
	ne_qp_touch(nic, qp);
	if (!wr || qp->state != NE_QPS_RTS || wr->opcode > NE_WR_RDMA_READ ||
	    wr->length > NE_MAX_MSG_LEN || (wr->opcode == NE_WR_RDMA_READ && wr->length == 0))
		return -EINVAL;
	if (wr->length &&
	    !ne_mr_ptr(nic, wr->lkey, wr->local_addr, wr->length,
		       wr->opcode == NE_WR_RDMA_READ ? NE_ACCESS_LOCAL_WRITE : 0))
		return -EFAULT;
	if (qp->sq.tail - qp->sq.head >= qp->sq.size)
		return -ENOMEM;
	w = &qp->sq.wqe[qp->sq.tail % qp->sq.size];
	memset(w, 0, sizeof(*w));
	w->wr = *wr;
	w->state = NE_WQE_POSTED;
	qp->sq.tail++;
	return 0;
}

int ne_post_recv(struct ne_nic *nic, uint32_t qpn, const struct ne_recv_wr *wr)
{
	struct ne_qp *qp = nic ? ne_qp_lookup(nic, qpn) : NULL;

	if (nic)
		ne_nic_touch(nic);

	if (!qp)
		return -ENOENT;
	ne_qp_touch(nic, qp);
	if (!wr || (qp->state != NE_QPS_INIT && qp->state != NE_QPS_RTR && qp->state != NE_QPS_RTS))
		return -EINVAL;
	if (wr->length && !ne_mr_ptr(nic, wr->lkey, wr->addr, wr->length, NE_ACCESS_LOCAL_WRITE))
		return -EFAULT;
	if (qp->rq.tail - qp->rq.head >= qp->rq.size)
		return -ENOMEM;
	qp->rq.wqe[qp->rq.tail % qp->rq.size] = *wr;
	qp->rq.tail++;
	return 0;
}

const char *ne_wc_status_str(enum ne_wc_status status)
{
	switch (status) {
	case NE_WC_SUCCESS: return "success";
	case NE_WC_LOC_LEN_ERR: return "local length error";
	case NE_WC_LOC_PROT_ERR: return "local protection error";
	case NE_WC_WR_FLUSH_ERR: return "work request flushed";
	case NE_WC_REM_INV_REQ_ERR: return "remote invalid request";
	case NE_WC_REM_ACCESS_ERR: return "remote access error";
	case NE_WC_REM_OP_ERR: return "remote operation error";
	case NE_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
	case NE_WC_RNR_RETRY_EXC_ERR: return "RNR retry counter exceeded";
	}
	return "unknown";
}
