/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Responder (the role of rxe_resp.c): executes incoming requests in PSN
 * order and queues its answers (ACK, NAK, READ responses) in an ordered
 * per-QP output list that ne_resp_build() turns into packets.
 *
 * Order of checks, as rxe: PSN (gap -> one PSN sequence NAK then silent
 * drops until the expected PSN arrives; PSN before the expected one ->
 * duplicate: SEND/WRITE re-ACKed with the last accepted PSN, READ
 * re-executed from the retried PSN), opcode sequence, length, resources
 * (receive WQE, else RNR NAK; READ responder resources), rkey/bounds,
 * execute. Protocol errors (opcode sequence, length, access) NAK and move
 * the QP to ERROR (IBA class C, as rxe). ACKs are sent only for packets
 * with AckReq set; a newer ACK replaces an unsent older one (coalescing).
 */
#include <string.h>

#include "ne_priv.h"

static struct ne_rsp_item *rsp_at(const struct ne_qp *qp, uint32_t idx)
{
	return &qp->rsp[idx % qp->rsp_size];
}

bool ne_resp_has_work(const struct ne_qp *qp)
{
	return qp->rsp_head != qp->rsp_tail;
}

static void queue_ack(struct ne_nic *nic, struct ne_qp *qp, uint8_t syndrome, uint32_t psn)
{
	struct ne_rsp_item *it;

	if (qp->rsp_tail != qp->rsp_head && syndrome == NE_AETH_ACK_UNLIMITED) {
		it = rsp_at(qp, qp->rsp_tail - 1);
		if (it->kind == NE_RSP_ACK && it->syndrome == NE_AETH_ACK_UNLIMITED) {
			it->psn = psn;
			it->msn = qp->resp_msn;
			nic->cnt.ack_coalesced++;
			return;
		}
	}
	if (qp->rsp_tail - qp->rsp_head >= qp->rsp_size)
		return; /* cannot happen with the READ resource limit; the requester would retry */
	it = rsp_at(qp, qp->rsp_tail++);
	memset(it, 0, sizeof(*it));
	it->kind = NE_RSP_ACK;
	it->syndrome = syndrome;
	it->psn = psn;
	it->msn = qp->resp_msn;
}

static uint32_t reads_queued(const struct ne_qp *qp)
{
	uint32_t n = 0;

	for (uint32_t i = qp->rsp_head; i != qp->rsp_tail; i++)
		if (rsp_at(qp, i)->kind == NE_RSP_READ)
			n++;
	return n;
}

static void queue_read(struct ne_qp *qp, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len,
		       uint32_t msn)
{
	struct ne_rsp_item *it = rsp_at(qp, qp->rsp_tail++);

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
	if (qp->rq_head == qp->rq_tail)
		return false;
	*out = qp->rq[qp->rq_head % qp->rq_size];
	qp->rq_head++;
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
		queue_ack(nic, qp, NE_AETH_ACK_UNLIMITED, ne_psn_add(qp->resp_psn, NE_PSN_MASK));
		return NE_RX_OK;
	}
	for (uint32_t i = 0; i < qp->nres; i++) {
		struct ne_read_res *r = &qp->res[i];
		uint32_t j, k;

		if (!r->valid || ne_psn_cmp(psn, r->first_psn) < 0 || ne_psn_cmp(psn, r->last_psn) > 0)
			continue;
		if (pkt->bth.reth_dmalen &&
		    !ne_mr_ptr(nic, pkt->bth.reth_rkey, pkt->bth.reth_va, pkt->bth.reth_dmalen,
			       NE_ACCESS_REMOTE_READ))
			return NE_RX_OK; /* ignore a retried READ that no longer fits */
		/* drop READ replies in progress: the requester went back before them */
		for (j = k = qp->rsp_head; j != qp->rsp_tail; j++)
			if (rsp_at(qp, j)->kind != NE_RSP_READ)
				*rsp_at(qp, k++) = *rsp_at(qp, j);
		qp->rsp_tail = k;
		queue_read(qp, psn, pkt->bth.reth_va, pkt->bth.reth_rkey, pkt->bth.reth_dmalen, r->msn);
		return NE_RX_OK;
	}
	return NE_RX_OK; /* too old: no resource left, drop */
}

int ne_resp_rx(struct ne_nic *nic, struct ne_qp *qp, const uint8_t *frame,
	       const struct rl_pkt *pkt, uint64_t now_ns)
{
	uint8_t op = pkt->bth.opcode;
	uint32_t psn = pkt->bth.psn;
	uint32_t pl = pkt->payload_len;
	uint32_t mtu = qp->attr.path_mtu;
	const uint8_t *data = frame + pkt->payload_off;
	int d = ne_psn_cmp(psn, qp->resp_psn);
	bool in_send, in_write, ok, first, last, imm, send;
	struct ne_recv_wr rwqe;

	(void)now_ns;
	if (d > 0) {
		if (qp->sent_psn_nak)
			return NE_RX_PSN_DROP;
		qp->sent_psn_nak = true;
		nic->cnt.out_of_seq_request++;
		queue_ack(nic, qp, NE_AETH_NAK_PSN_SEQ, qp->resp_psn);
		return NE_RX_PSN_DROP;
	}
	if (d < 0)
		return duplicate(nic, qp, pkt);
	qp->sent_psn_nak = false;

	/* opcode sequence */
	in_send = qp->resp_opcode == RL_OP_SEND_FIRST || qp->resp_opcode == RL_OP_SEND_MIDDLE;
	in_write = qp->resp_opcode == RL_OP_WRITE_FIRST || qp->resp_opcode == RL_OP_WRITE_MIDDLE;
	switch (op) {
	case RL_OP_SEND_MIDDLE:
	case RL_OP_SEND_LAST:
	case RL_OP_SEND_LAST_IMM:
		ok = in_send;
		break;
	case RL_OP_WRITE_MIDDLE:
	case RL_OP_WRITE_LAST:
	case RL_OP_WRITE_LAST_IMM:
		ok = in_write;
		break;
	case RL_OP_SEND_FIRST:
	case RL_OP_SEND_ONLY:
	case RL_OP_SEND_ONLY_IMM:
	case RL_OP_WRITE_FIRST:
	case RL_OP_WRITE_ONLY:
	case RL_OP_WRITE_ONLY_IMM:
	case RL_OP_READ_REQUEST:
		ok = !in_send && !in_write;
		break;
	default:
		nic->cnt.rcv_bad_opcode++;
		return NE_RX_BAD_OPCODE;
	}
	if (!ok) {
		nic->cnt.rcv_opcode_seq_err++;
		return class_c(nic, qp, NE_AETH_NAK_INV_REQ, psn);
	}

	first = op == RL_OP_SEND_FIRST || op == RL_OP_SEND_ONLY || op == RL_OP_SEND_ONLY_IMM ||
		op == RL_OP_WRITE_FIRST || op == RL_OP_WRITE_ONLY || op == RL_OP_WRITE_ONLY_IMM;
	last = op == RL_OP_SEND_LAST || op == RL_OP_SEND_LAST_IMM || op == RL_OP_SEND_ONLY ||
	       op == RL_OP_SEND_ONLY_IMM || op == RL_OP_WRITE_LAST || op == RL_OP_WRITE_LAST_IMM ||
	       op == RL_OP_WRITE_ONLY || op == RL_OP_WRITE_ONLY_IMM;
	imm = op == RL_OP_SEND_LAST_IMM || op == RL_OP_SEND_ONLY_IMM ||
	      op == RL_OP_WRITE_LAST_IMM || op == RL_OP_WRITE_ONLY_IMM;
	send = op <= RL_OP_SEND_ONLY_IMM;

	/* length: FIRST and MIDDLE carry exactly one MTU, LAST and ONLY at most one */
	if (op == RL_OP_READ_REQUEST ? pl != 0 : (last ? pl > mtu : pl != mtu)) {
		nic->cnt.rcv_len_err++;
		return class_c(nic, qp, NE_AETH_NAK_INV_REQ, psn);
	}

	if (op == RL_OP_READ_REQUEST) {
		uint32_t len = pkt->bth.reth_dmalen, n = ne_num_pkts(len, mtu);
		struct ne_read_res *r;

		if (len && !ne_mr_ptr(nic, pkt->bth.reth_rkey, pkt->bth.reth_va, len,
				      NE_ACCESS_REMOTE_READ)) {
			nic->cnt.rcv_access_err++;
			return class_c(nic, qp, NE_AETH_NAK_REM_ACC, psn);
		}
		if (reads_queued(qp) >= qp->attr.max_dest_rd_atomic) {
			nic->cnt.rcv_opcode_seq_err++;
			return class_c(nic, qp, NE_AETH_NAK_INV_REQ, psn);
		}
		qp->resp_msn = (qp->resp_msn + 1) & 0xFFFFFFu;
		r = &qp->res[qp->res_next++ % qp->attr.max_dest_rd_atomic];
		r->valid = true;
		r->first_psn = psn;
		r->last_psn = ne_psn_add(psn, n - 1);
		r->msn = qp->resp_msn;
		queue_read(qp, psn, pkt->bth.reth_va, pkt->bth.reth_rkey, len, qp->resp_msn);
		qp->resp_psn = ne_psn_add(psn, n);
		qp->resp_opcode = op;
		return NE_RX_OK;
	}

	if (send) {
		if (first) {
			if (!rq_take(qp, &rwqe)) {
				nic->cnt.send_rnr_err++;
				queue_ack(nic, qp, (uint8_t)(NE_AETH_RNR_NAK | qp->attr.min_rnr_timer), psn);
				return NE_RX_RNR;
			}
			qp->resp_rwqe = rwqe;
			qp->resp_has_rwqe = true;
			qp->resp_rwqe_off = 0;
		}
		if (pl > qp->resp_rwqe.length - qp->resp_rwqe_off) {
			recv_cqe(nic, qp, qp->resp_rwqe.wr_id, NE_WC_LOC_LEN_ERR, NE_WC_RECV,
				 qp->resp_rwqe_off, false, 0);
			qp->resp_has_rwqe = false;
			nic->cnt.rcv_len_err++;
			return class_c(nic, qp, NE_AETH_NAK_INV_REQ, psn);
		}
		if (pl) {
			uint8_t *dst = ne_mr_ptr(nic, qp->resp_rwqe.lkey,
						 qp->resp_rwqe.addr + qp->resp_rwqe_off, pl,
						 NE_ACCESS_LOCAL_WRITE);

			if (!dst) {
				recv_cqe(nic, qp, qp->resp_rwqe.wr_id, NE_WC_LOC_PROT_ERR, NE_WC_RECV,
					 qp->resp_rwqe_off, false, 0);
				qp->resp_has_rwqe = false;
				return class_c(nic, qp, NE_AETH_NAK_REM_OP, psn);
			}
			ne_payload_in(nic, dst, data, pl);
		}
		qp->resp_rwqe_off += pl;
		if (last) {
			qp->resp_msn = (qp->resp_msn + 1) & 0xFFFFFFu;
			qp->resp_has_rwqe = false;
			recv_cqe(nic, qp, qp->resp_rwqe.wr_id, NE_WC_SUCCESS, NE_WC_RECV,
				 qp->resp_rwqe_off, imm, imm ? pkt->bth.immdt : 0);
		}
	} else {
		if (first) {
			uint32_t len = pkt->bth.reth_dmalen;

			if (pl > len) {
				nic->cnt.rcv_len_err++;
				return class_c(nic, qp, NE_AETH_NAK_INV_REQ, psn);
			}
			if (len && !ne_mr_ptr(nic, pkt->bth.reth_rkey, pkt->bth.reth_va, len,
					      NE_ACCESS_REMOTE_WRITE)) {
				nic->cnt.rcv_access_err++;
				return class_c(nic, qp, NE_AETH_NAK_REM_ACC, psn);
			}
			qp->resp_va = pkt->bth.reth_va;
			qp->resp_rkey = pkt->bth.reth_rkey;
			qp->resp_resid = len;
			qp->resp_wlen = len;
		}
		if (pl > qp->resp_resid || (last && pl != qp->resp_resid)) {
			nic->cnt.rcv_len_err++;
			return class_c(nic, qp, NE_AETH_NAK_INV_REQ, psn);
		}
		if (imm && qp->rq_head == qp->rq_tail) {
			nic->cnt.send_rnr_err++;
			queue_ack(nic, qp, (uint8_t)(NE_AETH_RNR_NAK | qp->attr.min_rnr_timer), psn);
			return NE_RX_RNR;
		}
		if (pl) {
			uint8_t *dst = ne_mr_ptr(nic, qp->resp_rkey, qp->resp_va, pl, NE_ACCESS_REMOTE_WRITE);

			if (!dst) {
				nic->cnt.rcv_access_err++;
				return class_c(nic, qp, NE_AETH_NAK_REM_ACC, psn);
			}
			ne_payload_in(nic, dst, data, pl);
		}
		qp->resp_va += pl;
		qp->resp_resid -= pl;
		if (last) {
			qp->resp_msn = (qp->resp_msn + 1) & 0xFFFFFFu;
			if (imm) {
				rq_take(qp, &rwqe);
				recv_cqe(nic, qp, rwqe.wr_id, NE_WC_SUCCESS, NE_WC_RECV_RDMA_WITH_IMM,
					 qp->resp_wlen, true, pkt->bth.immdt);
			}
		}
	}
	qp->resp_psn = ne_psn_add(psn, 1);
	qp->resp_opcode = op;
	if (pkt->bth.ackreq)
		queue_ack(nic, qp, NE_AETH_ACK_UNLIMITED, psn);
	return NE_RX_OK;
}

int ne_resp_build(struct ne_nic *nic, struct ne_qp *qp, uint8_t *buf, size_t *len)
{
	struct ne_rsp_item *it;
	struct ne_bth_fields bth;
	size_t pos;

	while (qp->rsp_head != qp->rsp_tail) {
		it = rsp_at(qp, qp->rsp_head);
		if (it->kind == NE_RSP_READ && qp->state == NE_QPS_ERROR) {
			qp->rsp_head++;
			continue;
		}
		memset(&bth, 0, sizeof(bth));
		bth.dqpn = qp->attr.dest_qpn;
		bth.psn = it->psn;
		if (it->kind == NE_RSP_ACK) {
			bth.opcode = RL_OP_ACK;
			pos = ne_build_hdrs(nic, qp, buf, ne_op_hdr_len(bth.opcode) + RL_ICRC_LEN, &bth) +
			      RL_BTH_LEN;
			ne_put_aeth(buf + pos, it->syndrome, it->msn);
			pos += RL_AETH_LEN;
			memset(buf + pos, 0, RL_ICRC_LEN);
			*len = pos + RL_ICRC_LEN;
			if ((it->syndrome & NE_AETH_TYPE_MASK) == NE_AETH_ACK)
				nic->cnt.acks_sent++;
			else
				nic->cnt.naks_sent++;
			qp->rsp_head++;
			return 1;
		} else {
			uint32_t mtu = qp->attr.path_mtu;
			uint32_t pl = it->resid < mtu ? it->resid : mtu;
			bool last = it->resid <= mtu;
			uint32_t pad = (4 - (pl & 3)) & 3;
			bool aeth;
			const uint8_t *src = NULL;

			if (!it->started)
				bth.opcode = last ? RL_OP_READ_RESP_ONLY : RL_OP_READ_RESP_FIRST;
			else
				bth.opcode = last ? RL_OP_READ_RESP_LAST : RL_OP_READ_RESP_MIDDLE;
			aeth = ne_op_any(bth.opcode, NE_OPM_AETH);
			bth.padcnt = (uint8_t)pad;
			pos = ne_build_hdrs(nic, qp, buf,
					    ne_op_hdr_len(bth.opcode) + pl + pad + RL_ICRC_LEN, &bth) +
			      RL_BTH_LEN;
			if (aeth) {
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
			*len = pos + pad + RL_ICRC_LEN;
			it->started = true;
			it->va += pl;
			it->resid -= pl;
			it->psn = ne_psn_add(it->psn, 1);
			if (last)
				qp->rsp_head++;
			return 1;
		}
	}
	return 0;
}
