/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Responder (the role of rxe_resp.c): executes incoming requests in PSN
 * order and queues its answers (ACK, NAK, READ responses) in an ordered
 * per-QP output list that ne_resp_build() turns into packets.
 *
 * ne_resp_rx() is a chain of named checks, as rxe_resp.c (see the steps
 * below): PSN (gap -> one PSN sequence NAK then silent drops until the
 * expected PSN arrives; PSN before the expected one -> duplicate:
 * SEND/WRITE re-ACKed with the last accepted PSN, READ re-executed from the
 * retried PSN), opcode valid, opcode sequence, packet length, RETH (DMA
 * length, rkey/bounds), resources (READ responder resources; receive WQE,
 * else RNR NAK), message length, receive WQE of a WRITE with immediate,
 * execute, acknowledge. Opcode facts come from the table (ne_opcode.h).
 * Protocol errors (opcode sequence, length, access) NAK and move the QP to
 * ERROR (IBA class C, as rxe). ACKs are sent only for packets with AckReq
 * set; a newer ACK replaces an unsent older one (coalescing).
 */
#include <string.h>

#include "ne_priv.h"

static struct ne_rsp_item *rsp_at(const struct ne_qp *qp, uint32_t idx)
{
	return &qp->resp.rsp[idx % qp->resp.rsp_size];
}

bool ne_resp_has_work(const struct ne_qp *qp)
{
	return qp->resp.rsp_head != qp->resp.rsp_tail;
}

static void queue_ack(struct ne_nic *nic, struct ne_qp *qp, uint8_t syndrome, uint32_t psn)
{
	struct ne_rsp_item *it;

	if (qp->resp.rsp_tail != qp->resp.rsp_head && syndrome == NE_AETH_ACK_UNLIMITED) {
		it = rsp_at(qp, qp->resp.rsp_tail - 1);
		if (it->kind == NE_RSP_ACK && it->syndrome == NE_AETH_ACK_UNLIMITED) {
			it->psn = psn;
			it->msn = qp->resp.msn;
			nic->cnt.ack_coalesced++;
			return;
		}
	}
	if (qp->resp.rsp_tail - qp->resp.rsp_head >= qp->resp.rsp_size)
		return; /* cannot happen with the READ resource limit; the requester would retry */
	it = rsp_at(qp, qp->resp.rsp_tail++);
	memset(it, 0, sizeof(*it));
	it->kind = NE_RSP_ACK;
	it->syndrome = syndrome;
	it->psn = psn;
	it->msn = qp->resp.msn;
}

static uint32_t reads_queued(const struct ne_qp *qp)
{
	uint32_t n = 0;

	for (uint32_t i = qp->resp.rsp_head; i != qp->resp.rsp_tail; i++)
		if (rsp_at(qp, i)->kind == NE_RSP_READ)
			n++;
	return n;
}

static void queue_read(struct ne_qp *qp, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len,
		       uint32_t msn)
{
	struct ne_rsp_item *it = rsp_at(qp, qp->resp.rsp_tail++);

	memset(it, 0, sizeof(*it));
	it->kind = NE_RSP_READ;
	it->psn = psn;
	it->va = va;
	it->rkey = rkey;
	it->resid = len;
	it->msn = msn;
}

/* IBA class C error: NAK and move the QP to ERROR. */
static int class_c(struct ne_nic *nic, struct ne_qp *qp, uint8_t syndrome, uint32_t psn)
{
	queue_ack(nic, qp, syndrome, psn);
	ne_qp_to_error(nic, qp);
	return NE_RX_PROTOCOL;
}

static bool rq_take(struct ne_qp *qp, struct ne_recv_wr *out)
{
	if (qp->rq.head == qp->rq.tail)
		return false;
	*out = qp->rq.wqe[qp->rq.head % qp->rq.size];
	qp->rq.head++;
	return true;
}

static void recv_cqe(struct ne_nic *nic, struct ne_qp *qp, uint64_t wr_id, enum ne_wc_status st,
		     enum ne_wc_opcode opc, uint32_t byte_len, bool has_imm, uint32_t imm)
{
	struct ne_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wr_id;
	wc.status = st;
	wc.opcode = opc;
	wc.byte_len = byte_len;
	wc.has_imm = has_imm;
	wc.imm_data = imm;
	wc.qpn = qp->qpn;
	wc.src_qp = qp->attr.dest_qpn;
	ne_cq_push(nic, qp->rcq, &wc);
	if (st == NE_WC_SUCCESS)
		nic->cnt.rdma_recvs++;
}

static int duplicate(struct ne_nic *nic, struct ne_qp *qp, const struct rl_pkt *pkt)
{
	uint32_t psn = pkt->bth.psn;

	nic->cnt.duplicate_request++;
	if (pkt->bth.opcode != RL_OP_READ_REQUEST) {
		/* SEND/WRITE: acknowledge again what we have (C9-105) */
		queue_ack(nic, qp, NE_AETH_ACK_UNLIMITED, ne_psn_add(qp->resp.psn, NE_PSN_MASK));
		return NE_RX_OK;
	}
	for (uint32_t i = 0; i < qp->resp.nres; i++) {
		struct ne_read_res *r = &qp->resp.res[i];
		uint32_t j, k;

		if (!r->valid || ne_psn_cmp(psn, r->first_psn) < 0 || ne_psn_cmp(psn, r->last_psn) > 0)
			continue;
		if (pkt->bth.reth_dmalen &&
		    !ne_mr_ptr(nic, pkt->bth.reth_rkey, pkt->bth.reth_va, pkt->bth.reth_dmalen,
			       NE_ACCESS_REMOTE_READ))
			return NE_RX_OK; /* ignore a retried READ that no longer fits */
		/* drop READ replies in progress: the requester went back before them */
		for (j = k = qp->resp.rsp_head; j != qp->resp.rsp_tail; j++)
			if (rsp_at(qp, j)->kind != NE_RSP_READ)
				*rsp_at(qp, k++) = *rsp_at(qp, j);
		qp->resp.rsp_tail = k;
		queue_read(qp, psn, pkt->bth.reth_va, pkt->bth.reth_rkey, pkt->bth.reth_dmalen, r->msn);
		return NE_RX_OK;
	}
	return NE_RX_OK; /* too old: no resource left, drop */
}

/*
 * ne_resp_rx() runs one request through a chain of named steps, as rxe's
 * responder does: each step checks one thing and names the next step, or a
 * terminal one (RESPST_DONE, with the value ne_resp_rx returns in rc). The
 * order matters and is that of the previous single function, which the
 * golden frames and transport tests pin down:
 *   CHK_PSN -> CHK_OP_VALID -> CHK_OP_SEQ -> CHK_PKT_LEN -> CHK_RETH ->
 *   CHK_RESOURCE -> CHK_MSG_LEN -> CHK_IMM_WQE -> EXECUTE -> ACKNOWLEDGE,
 * with DUPLICATE, ERR_PSN, ERR_RNR and ERR_CLASS_C as the exits of checks.
 */
enum resp_state {
	RESPST_CHK_PSN,
	RESPST_CHK_OP_VALID,
	RESPST_CHK_OP_SEQ,
	RESPST_CHK_PKT_LEN,
	RESPST_CHK_RETH,
	RESPST_CHK_RESOURCE,
	RESPST_CHK_MSG_LEN,
	RESPST_CHK_IMM_WQE,
	RESPST_EXECUTE,
	RESPST_ACKNOWLEDGE,
	RESPST_DUPLICATE,
	RESPST_ERR_PSN,
	RESPST_ERR_RNR,
	RESPST_ERR_CLASS_C,
	RESPST_DONE,
};

/* One request on its way through the chain. */
struct resp_ctx {
	struct ne_nic *nic;
	struct ne_qp *qp;
	const struct rl_pkt *pkt;
	const uint8_t *data; /* payload */
	uint8_t op;
	uint32_t mask; /* ne_op_mask(op) */
	uint32_t psn;
	uint32_t pl; /* payload length */
	uint32_t mtu;
	uint8_t nak; /* syndrome for RESPST_ERR_CLASS_C */
	int rc;      /* what ne_resp_rx returns, set by the terminal steps */
};

/* Leave through a class C NAK with syndrome nak, counting it in *counter
 * (NULL: not counted). */
static enum resp_state to_class_c(struct resp_ctx *c, uint8_t nak, uint64_t *counter)
{
	if (counter)
		(*counter)++;
	c->nak = nak;
	return RESPST_ERR_CLASS_C;
}

/* PSN: the expected one goes on (and re-arms the sequence NAK); an earlier
 * one is a duplicate; a later one is a gap (ERR_PSN). */
static enum resp_state check_psn(struct resp_ctx *c)
{
	int d = ne_psn_cmp(c->psn, c->qp->resp.psn);

	if (d > 0)
		return RESPST_ERR_PSN;
	if (d < 0)
		return RESPST_DUPLICATE;
	c->qp->resp.sent_psn_nak = false;
	return RESPST_CHK_OP_VALID;
}

/* Opcode: a request of the table; anything else is counted and dropped
 * without NAK. */
static enum resp_state check_op_valid(struct resp_ctx *c)
{
	if (c->mask & NE_OPM_REQ)
		return RESPST_CHK_OP_SEQ;
	c->nic->cnt.rcv_bad_opcode++;
	c->rc = NE_RX_BAD_OPCODE;
	return RESPST_DONE;
}

/* Opcode sequence: MIDDLE/LAST continue a SEND or WRITE of their own family
 * in progress; FIRST/ONLY and READ need none in progress. Else NAK invalid
 * request, class C. */
static enum resp_state check_op_seq(struct resp_ctx *c)
{
	/* resp.opcode NE_OP_NONE maps to an unknown opcode: mask 0 */
	uint32_t prev = ne_op_mask((uint8_t)c->qp->resp.opcode);
	uint32_t open =
		(prev & (NE_OPM_FIRST | NE_OPM_MIDDLE)) ? prev & (NE_OPM_SEND | NE_OPM_WRITE) : 0;
	bool ok;

	if (c->mask & (NE_OPM_MIDDLE | NE_OPM_LAST))
		ok = (c->mask & open) != 0;
	else
		ok = open == 0;
	if (ok)
		return RESPST_CHK_PKT_LEN;
	return to_class_c(c, NE_AETH_NAK_INV_REQ, &c->nic->cnt.rcv_opcode_seq_err);
}

/* Packet length: a READ request carries no payload, FIRST and MIDDLE exactly
 * one MTU, LAST and ONLY at most one. Else NAK invalid request, class C. */
static enum resp_state check_pkt_len(struct resp_ctx *c)
{
	bool bad;

	if (!(c->mask & NE_OPM_PAYLOAD))
		bad = c->pl != 0;
	else if (c->mask & NE_OPM_END)
		bad = c->pl > c->mtu;
	else
		bad = c->pl != c->mtu;
	if (!bad)
		return RESPST_CHK_RETH;
	return to_class_c(c, NE_AETH_NAK_INV_REQ, &c->nic->cnt.rcv_len_err);
}

/* RETH of a READ or of a WRITE's first packet: a WRITE's DMA length covers
 * its first payload (else NAK invalid request), the rkey grants access to
 * the whole range (else NAK remote access error), both class C. A WRITE
 * then remembers where the rest of the message goes. */
static enum resp_state check_reth(struct resp_ctx *c)
{
	const struct rl_bth_info *b = &c->pkt->bth;
	struct ne_qp *qp = c->qp;
	bool read = c->mask & NE_OPM_READ;

	if (!(c->mask & NE_OPM_RETH))
		return RESPST_CHK_RESOURCE;
	if (!read && c->pl > b->reth_dmalen)
		return to_class_c(c, NE_AETH_NAK_INV_REQ, &c->nic->cnt.rcv_len_err);
	if (b->reth_dmalen && !ne_mr_ptr(c->nic, b->reth_rkey, b->reth_va, b->reth_dmalen,
					 read ? NE_ACCESS_REMOTE_READ : NE_ACCESS_REMOTE_WRITE))
		return to_class_c(c, NE_AETH_NAK_REM_ACC, &c->nic->cnt.rcv_access_err);
	if (!read) {
		qp->resp.va = b->reth_va;
		qp->resp.rkey = b->reth_rkey;
		qp->resp.resid = b->reth_dmalen;
		qp->resp.wlen = b->reth_dmalen;
	}
	return RESPST_CHK_RESOURCE;
}

/* Resources: a READ needs a free READ responder resource (max_dest_rd_atomic;
 * else NAK invalid request, class C, as rxe); the first packet of a SEND
 * takes a receive WQE (none: RNR NAK, the requester retries). */
static enum resp_state check_resource(struct resp_ctx *c)
{
	struct ne_qp *qp = c->qp;
	struct ne_recv_wr rwqe;

	if (c->mask & NE_OPM_READ) {
		if (reads_queued(qp) >= qp->attr.max_dest_rd_atomic)
			return to_class_c(c, NE_AETH_NAK_INV_REQ, &c->nic->cnt.rcv_opcode_seq_err);
	} else if ((c->mask & NE_OPM_SEND) && (c->mask & NE_OPM_START)) {
		if (!rq_take(qp, &rwqe))
			return RESPST_ERR_RNR;
		qp->resp.rwqe = rwqe;
		qp->resp.has_rwqe = true;
		qp->resp.rwqe_off = 0;
	}
	return RESPST_CHK_MSG_LEN;
}

/* Message length: a SEND's payload fits the rest of its receive WQE (else
 * the WQE completes with a local length error); a WRITE's payload fits the
 * rest of its DMA length and its last packet ends it exactly. Both NAK
 * invalid request, class C. */
static enum resp_state check_msg_len(struct resp_ctx *c)
{
	struct ne_qp *qp = c->qp;

	if (c->mask & NE_OPM_SEND) {
		if (c->pl <= qp->resp.rwqe.length - qp->resp.rwqe_off)
			return RESPST_CHK_IMM_WQE;
		recv_cqe(c->nic, qp, qp->resp.rwqe.wr_id, NE_WC_LOC_LEN_ERR, NE_WC_RECV,
			 qp->resp.rwqe_off, false, 0);
		qp->resp.has_rwqe = false;
		return to_class_c(c, NE_AETH_NAK_INV_REQ, &c->nic->cnt.rcv_len_err);
	}
	if (c->mask & NE_OPM_WRITE) {
		if (c->pl > qp->resp.resid || ((c->mask & NE_OPM_END) && c->pl != qp->resp.resid))
			return to_class_c(c, NE_AETH_NAK_INV_REQ, &c->nic->cnt.rcv_len_err);
	}
	return RESPST_CHK_IMM_WQE;
}

/* A WRITE with immediate consumes a receive WQE at its last packet: none
 * posted means RNR NAK (the WRITE's data is not placed). */
static enum resp_state check_imm_wqe(struct resp_ctx *c)
{
	if ((c->mask & NE_OPM_WRITE) && (c->mask & NE_OPM_IMMDT) &&
	    c->qp->rq.head == c->qp->rq.tail)
		return RESPST_ERR_RNR;
	return RESPST_EXECUTE;
}

/* READ: take a responder resource (kept for duplicate READs), queue the
 * response packets and advance the PSN over all of them. No ACK. */
static enum resp_state execute_read(struct resp_ctx *c)
{
	const struct rl_bth_info *b = &c->pkt->bth;
	struct ne_qp *qp = c->qp;
	uint32_t n = ne_num_pkts(b->reth_dmalen, c->mtu);
	struct ne_read_res *r;

	qp->resp.msn = NE_MSN_NEXT(qp->resp.msn);
	r = &qp->resp.res[qp->resp.res_next++ % qp->attr.max_dest_rd_atomic];
	r->valid = true;
	r->first_psn = c->psn;
	r->last_psn = ne_psn_add(c->psn, n - 1);
	r->msn = qp->resp.msn;
	queue_read(qp, c->psn, b->reth_va, b->reth_rkey, b->reth_dmalen, qp->resp.msn);
	qp->resp.psn = ne_psn_add(c->psn, n);
	qp->resp.opcode = c->op;
	c->rc = NE_RX_OK;
	return RESPST_DONE;
}

/* SEND: place the payload into the receive WQE (its lkey must allow local
 * write: else the WQE completes with a protection error and NAK remote
 * operational error, class C); the last packet completes the WQE. */
static enum resp_state execute_send(struct resp_ctx *c)
{
	struct ne_qp *qp = c->qp;
	bool imm = c->mask & NE_OPM_IMMDT;

	if (c->pl) {
		uint8_t *dst = ne_mr_ptr(c->nic, qp->resp.rwqe.lkey,
					 qp->resp.rwqe.addr + qp->resp.rwqe_off, c->pl,
					 NE_ACCESS_LOCAL_WRITE);

		if (!dst) {
			recv_cqe(c->nic, qp, qp->resp.rwqe.wr_id, NE_WC_LOC_PROT_ERR, NE_WC_RECV,
				 qp->resp.rwqe_off, false, 0);
			qp->resp.has_rwqe = false;
			return to_class_c(c, NE_AETH_NAK_REM_OP, NULL);
		}
		ne_payload_in(c->nic, dst, c->data, c->pl);
	}
	qp->resp.rwqe_off += c->pl;
	if (c->mask & NE_OPM_END) {
		qp->resp.msn = NE_MSN_NEXT(qp->resp.msn);
		qp->resp.has_rwqe = false;
		recv_cqe(c->nic, qp, qp->resp.rwqe.wr_id, NE_WC_SUCCESS, NE_WC_RECV,
			 qp->resp.rwqe_off, imm, imm ? c->pkt->bth.immdt : 0);
	}
	return RESPST_ACKNOWLEDGE;
}

/* WRITE: place the payload at the remembered va (the MR can be gone since
 * the first packet: NAK remote access error, class C); the last packet of a
 * WRITE with immediate completes a receive WQE. */
static enum resp_state execute_write(struct resp_ctx *c)
{
	struct ne_qp *qp = c->qp;
	struct ne_recv_wr rwqe;

	if (c->pl) {
		uint8_t *dst = ne_mr_ptr(c->nic, qp->resp.rkey, qp->resp.va, c->pl,
					 NE_ACCESS_REMOTE_WRITE);

		if (!dst)
			return to_class_c(c, NE_AETH_NAK_REM_ACC, &c->nic->cnt.rcv_access_err);
		ne_payload_in(c->nic, dst, c->data, c->pl);
	}
	qp->resp.va += c->pl;
	qp->resp.resid -= c->pl;
	if (c->mask & NE_OPM_END) {
		qp->resp.msn = NE_MSN_NEXT(qp->resp.msn);
		if (c->mask & NE_OPM_IMMDT) {
			memset(&rwqe, 0, sizeof(rwqe));
			rq_take(qp, &rwqe); /* check_imm_wqe saw one */
			recv_cqe(c->nic, qp, rwqe.wr_id, NE_WC_SUCCESS, NE_WC_RECV_RDMA_WITH_IMM,
				 qp->resp.wlen, true, c->pkt->bth.immdt);
		}
	}
	return RESPST_ACKNOWLEDGE;
}

/* Execute the request by family (check_op_valid let only these through). */
static enum resp_state execute(struct resp_ctx *c)
{
	if (c->mask & NE_OPM_READ)
		return execute_read(c);
	if (c->mask & NE_OPM_SEND)
		return execute_send(c);
	return execute_write(c);
}

/* Accept the PSN; ACK it when the requester asked (AckReq). */
static enum resp_state acknowledge(struct resp_ctx *c)
{
	struct ne_qp *qp = c->qp;

	qp->resp.psn = ne_psn_add(c->psn, 1);
	qp->resp.opcode = c->op;
	if (c->pkt->bth.ackreq)
		queue_ack(c->nic, qp, NE_AETH_ACK_UNLIMITED, c->psn);
	c->rc = NE_RX_OK;
	return RESPST_DONE;
}

/* A request already executed (see duplicate()). */
static enum resp_state do_duplicate(struct resp_ctx *c)
{
	c->rc = duplicate(c->nic, c->qp, c->pkt);
	return RESPST_DONE;
}

/* A PSN gap: one PSN sequence NAK naming the expected PSN, then silent drops
 * until the expected PSN arrives (check_psn re-arms the NAK). */
static enum resp_state err_psn(struct resp_ctx *c)
{
	struct ne_qp *qp = c->qp;

	c->rc = NE_RX_PSN_DROP;
	if (qp->resp.sent_psn_nak)
		return RESPST_DONE;
	qp->resp.sent_psn_nak = true;
	c->nic->cnt.out_of_seq_request++;
	queue_ack(c->nic, qp, NE_AETH_NAK_PSN_SEQ, qp->resp.psn);
	return RESPST_DONE;
}

/* No receive WQE: RNR NAK with our min_rnr_timer, packet dropped. */
static enum resp_state err_rnr(struct resp_ctx *c)
{
	c->nic->cnt.send_rnr_err++;
	queue_ack(c->nic, c->qp, (uint8_t)(NE_AETH_RNR_NAK | c->qp->attr.min_rnr_timer), c->psn);
	c->rc = NE_RX_RNR;
	return RESPST_DONE;
}

/* Protocol error: NAK c->nak and move the QP to ERROR. */
static enum resp_state err_class_c(struct resp_ctx *c)
{
	c->rc = class_c(c->nic, c->qp, c->nak, c->psn);
	return RESPST_DONE;
}

/* One step of the chain. A switch rather than a table of function
 * pointers: the compiler inlines each step into ne_resp_rx (a table cost
 * about 140 instructions per request in indirect calls). */
static enum resp_state resp_step(struct resp_ctx *c, enum resp_state st)
{
	switch (st) {
	case RESPST_CHK_PSN: return check_psn(c);
	case RESPST_CHK_OP_VALID: return check_op_valid(c);
	case RESPST_CHK_OP_SEQ: return check_op_seq(c);
	case RESPST_CHK_PKT_LEN: return check_pkt_len(c);
	case RESPST_CHK_RETH: return check_reth(c);
	case RESPST_CHK_RESOURCE: return check_resource(c);
	case RESPST_CHK_MSG_LEN: return check_msg_len(c);
	case RESPST_CHK_IMM_WQE: return check_imm_wqe(c);
	case RESPST_EXECUTE: return execute(c);
	case RESPST_ACKNOWLEDGE: return acknowledge(c);
	case RESPST_DUPLICATE: return do_duplicate(c);
	case RESPST_ERR_PSN: return err_psn(c);
	case RESPST_ERR_RNR: return err_rnr(c);
	case RESPST_ERR_CLASS_C: return err_class_c(c);
	case RESPST_DONE: break;
	}
	return RESPST_DONE;
}

int ne_resp_rx(struct ne_nic *nic, struct ne_qp *qp, const uint8_t *frame, const struct rl_pkt *pkt,
	       uint64_t now_ns)
{
	struct resp_ctx c = {
		.nic = nic,
		.qp = qp,
		.pkt = pkt,
		.data = frame + pkt->payload_off,
		.op = pkt->bth.opcode,
		.mask = ne_op_mask(pkt->bth.opcode),
		.psn = pkt->bth.psn,
		.pl = pkt->payload_len,
		.mtu = qp->attr.path_mtu,
		.rc = NE_RX_OK,
	};
	enum resp_state st = RESPST_CHK_PSN;

	(void)now_ns;
	while (st != RESPST_DONE)
		st = resp_step(&c, st);
	return c.rc;
}

/* Build the ACK/NAK item it into buf; returns the frame length. */
static size_t build_ack(struct ne_nic *nic, struct ne_qp *qp, const struct ne_rsp_item *it,
			uint8_t *buf)
{
	struct ne_bth_fields bth;
	size_t pos;

	memset(&bth, 0, sizeof(bth));
	bth.dqpn = qp->attr.dest_qpn;
	bth.psn = it->psn;
	bth.opcode = RL_OP_ACK;
	pos = ne_build_hdrs(nic, qp, buf, ne_op_hdr_len(bth.opcode) + RL_ICRC_LEN, &bth) +
	      RL_BTH_LEN;
	ne_put_aeth(buf + pos, it->syndrome, it->msn);
	pos += RL_AETH_LEN;
	memset(buf + pos, 0, RL_ICRC_LEN);
	if ((it->syndrome & NE_AETH_TYPE_MASK) == NE_AETH_ACK)
		nic->cnt.acks_sent++;
	else
		nic->cnt.naks_sent++;
	return pos + RL_ICRC_LEN;
}

/* Build the next READ response packet of item it into buf (FIRST, MIDDLE,
 * LAST or ONLY by what is left) and advance it; returns the frame length.
 * *done tells whether that was the item's last packet. */
static size_t build_read_resp(struct ne_nic *nic, struct ne_qp *qp, struct ne_rsp_item *it,
			      uint8_t *buf, bool *done)
{
	uint32_t mtu = qp->attr.path_mtu;
	uint32_t pl = it->resid < mtu ? it->resid : mtu;
	bool last = it->resid <= mtu;
	uint32_t pad = ne_pad_len(pl);
	const uint8_t *src = NULL;
	struct ne_bth_fields bth;
	size_t pos;

	memset(&bth, 0, sizeof(bth));
	bth.dqpn = qp->attr.dest_qpn;
	bth.psn = it->psn;
	if (!it->started)
		bth.opcode = last ? RL_OP_READ_RESP_ONLY : RL_OP_READ_RESP_FIRST;
	else
		bth.opcode = last ? RL_OP_READ_RESP_LAST : RL_OP_READ_RESP_MIDDLE;
	bth.padcnt = (uint8_t)pad;
	pos = ne_build_hdrs(nic, qp, buf, ne_op_hdr_len(bth.opcode) + pl + pad + RL_ICRC_LEN,
			    &bth) +
	      RL_BTH_LEN;
	if (ne_op_any(bth.opcode, NE_OPM_AETH)) {
		ne_put_aeth(buf + pos, NE_AETH_ACK_UNLIMITED, it->msn);
		pos += RL_AETH_LEN;
	}
	if (pl)
		src = ne_mr_ptr(nic, it->rkey, it->va, pl, NE_ACCESS_REMOTE_READ);
	if (src)
		ne_payload_out(nic, buf + pos, src, pl);
	else if (pl)
		memset(buf + pos, 0, pl); /* MR gone since the request was checked */
	pos += pl;
	memset(buf + pos, 0, pad + RL_ICRC_LEN);
	it->started = true;
	it->va += pl;
	it->resid -= pl;
	it->psn = ne_psn_add(it->psn, 1);
	*done = last;
	return pos + pad + RL_ICRC_LEN;
}

int ne_resp_build(struct ne_nic *nic, struct ne_qp *qp, uint8_t *buf, size_t *len)
{
	struct ne_rsp_item *it;
	bool done = true;

	while (qp->resp.rsp_head != qp->resp.rsp_tail) {
		it = rsp_at(qp, qp->resp.rsp_head);
		if (it->kind == NE_RSP_READ && qp->state == NE_QPS_ERROR) {
			qp->resp.rsp_head++; /* no READ responses from a QP in ERROR */
			continue;
		}
		if (it->kind == NE_RSP_ACK)
			*len = build_ack(nic, qp, it, buf);
		else
			*len = build_read_resp(nic, qp, it, buf, &done);
		if (done)
			qp->resp.rsp_head++;
		return 1;
	}
	return 0;
}
