/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requester (the role of rxe_req.c): turns send WQEs into request packets,
 * one packet per ne_req_build() call, segmenting at the path MTU, assigning
 * PSNs, setting the AckReq bit on the last packet of a message and at least
 * every NE_MAX_PKT_PER_ACK packets, and arming the retransmit timer. A
 * retry (ne_req_retry) rewinds to the completer's oldest unacknowledged PSN:
 * go-back-N, resuming in the middle of a message with MIDDLE/LAST packets,
 * or with a READ request for the part of a READ not yet answered. After a
 * rewind, responses to the first transmission can still arrive and move the
 * completer past the requester; ne_req_sync then moves the requester up to
 * the completer (without it, the requester kept the offset of a WQE that had
 * just completed, rebuilt the next WQE from that stale offset and shifted the
 * PSNs of every later WQE: WRITEs completed at the sender that the responder
 * never executed, or were executed at the wrong offset).
 */
#include <string.h>

#include "ne_priv.h"

static struct ne_swqe *wqe_at(const struct ne_qp *qp, uint32_t idx)
{
	return &qp->sq.wqe[idx % qp->sq.size];
}

static uint32_t reads_outstanding(const struct ne_qp *qp)
{
	uint32_t n = 0;

	for (uint32_t i = qp->sq.head; i != qp->sq.next; i++)
		if (wqe_at(qp, i)->wr.opcode == NE_WR_RDMA_READ)
			n++;
	return n;
}

bool ne_req_has_work(const struct ne_qp *qp)
{
	const struct ne_swqe *w;

	if (qp->sq.next == qp->sq.tail)
		return false;
	w = wqe_at(qp, qp->sq.next);
	if (w->wr.opcode == NE_WR_RDMA_READ && reads_outstanding(qp) >= qp->attr.max_rd_atomic)
		return false;
	return true;
}

static uint8_t pick_opcode(enum ne_wr_opcode wr, bool first, bool last)
{
	bool send = wr == NE_WR_SEND || wr == NE_WR_SEND_WITH_IMM;
	bool imm = wr == NE_WR_SEND_WITH_IMM || wr == NE_WR_RDMA_WRITE_WITH_IMM;

	if (first && last)
		return send ? (imm ? RL_OP_SEND_ONLY_IMM : RL_OP_SEND_ONLY)
			    : (imm ? RL_OP_WRITE_ONLY_IMM : RL_OP_WRITE_ONLY);
	if (first)
		return send ? RL_OP_SEND_FIRST : RL_OP_WRITE_FIRST;
	if (!last)
		return send ? RL_OP_SEND_MIDDLE : RL_OP_WRITE_MIDDLE;
	return send ? (imm ? RL_OP_SEND_LAST_IMM : RL_OP_SEND_LAST)
		    : (imm ? RL_OP_WRITE_LAST_IMM : RL_OP_WRITE_LAST);
}

/* Count a packet as a retransmission when its PSN was sent before. */
static void note_psn(struct ne_nic *nic, struct ne_qp *qp, uint32_t psn, uint32_t span)
{
	uint32_t end = ne_psn_add(psn, span);

	if (qp->req.max_valid && ne_psn_cmp(psn, qp->req.max_psn) < 0)
		nic->cnt.retrans_pkts++;
	if (!qp->req.max_valid || ne_psn_cmp(end, qp->req.max_psn) > 0) {
		qp->req.max_psn = end;
		qp->req.max_valid = true;
	}
}

int ne_req_build(struct ne_nic *nic, struct ne_qp *qp, uint64_t now_ns, uint8_t *buf, size_t *len)
{
	struct ne_swqe *w;
	struct ne_bth_fields bth;
	uint32_t mtu = qp->attr.path_mtu;
	uint32_t off, rem;
	size_t pos;

	if (!ne_req_has_work(qp))
		return 0;
	w = wqe_at(qp, qp->sq.next);
	if (qp->req.off == 0) {
		w->first_psn = qp->req.psn;
		w->npkts = ne_num_pkts(w->wr.length, mtu);
		w->last_psn = ne_psn_add(w->first_psn, w->npkts - 1);
		w->state = NE_WQE_PENDING;
	}
	off = qp->req.off;
	rem = w->wr.length - off;
	memset(&bth, 0, sizeof(bth));
	bth.dqpn = qp->attr.dest_qpn;
	bth.psn = qp->req.psn;

	if (w->wr.opcode == NE_WR_RDMA_READ) {
		uint32_t n = ne_num_pkts(rem, mtu);

		bth.opcode = RL_OP_READ_REQUEST;
		bth.ackreq = true;
		pos = ne_build_hdrs(nic, qp, buf, ne_op_hdr_len(bth.opcode) + RL_ICRC_LEN, &bth);
		ne_put_reth(buf + pos + RL_BTH_LEN, w->wr.remote_addr + off, w->wr.rkey, rem);
		pos += ne_op_hdr_len(bth.opcode);
		memset(buf + pos, 0, RL_ICRC_LEN);
		*len = pos + RL_ICRC_LEN;
		note_psn(nic, qp, qp->req.psn, n);
		qp->req.psn = ne_psn_add(qp->req.psn, n);
		qp->req.off = 0;
		qp->sq.next++;
		qp->req.noack_pkts = 0;
	} else {
		uint32_t pl = rem < mtu ? rem : mtu;
		bool first = off == 0, last = off + pl >= w->wr.length;
		uint8_t op = pick_opcode(w->wr.opcode, first, last);
		uint32_t pad = ne_pad_len(pl);
		size_t roce = ne_op_hdr_len(op) + pl + pad + RL_ICRC_LEN;
		const uint8_t *src = NULL;

		bth.opcode = op;
		bth.padcnt = (uint8_t)pad;
		/* Solicited Event on the last packet of a SEND or WRITE with immediate */
		bth.se = last && (w->wr.send_flags & NE_SEND_SOLICITED) &&
			 ne_op_any(op, NE_OPM_SEND | NE_OPM_IMMDT);
		bth.ackreq = last || (qp->req.noack_pkts++ > NE_MAX_PKT_PER_ACK);
		if (bth.ackreq)
			qp->req.noack_pkts = 0;
		pos = ne_build_hdrs(nic, qp, buf, roce, &bth) + RL_BTH_LEN;
		if (ne_op_any(op, NE_OPM_RETH)) {
			ne_put_reth(buf + pos, w->wr.remote_addr, w->wr.rkey, w->wr.length);
			pos += RL_RETH_LEN;
		}
		if (ne_op_any(op, NE_OPM_IMMDT)) {
			ne_put_be32(buf + pos, w->wr.imm_data);
			pos += RL_IMMDT_LEN;
		}
		if (pl)
			src = ne_mr_ptr(nic, w->wr.lkey, w->wr.local_addr + off, pl, 0);
		if (src) {
			ne_payload_out(nic, buf + pos, src, pl);
		} else if (pl) {
			memset(buf + pos, 0, pl); /* MR deregistered under a posted WQE */
			nic->cnt.send_err++;
		}
		pos += pl;
		memset(buf + pos, 0, pad + RL_ICRC_LEN);
		*len = pos + pad + RL_ICRC_LEN;
		note_psn(nic, qp, qp->req.psn, 1);
		qp->req.psn = ne_psn_add(qp->req.psn, 1);
		if (last) {
			qp->req.off = 0;
			qp->sq.next++;
		} else {
			qp->req.off = off + pl;
		}
	}
	if (qp->comp.rto_at == NE_NO_TIME && qp->attr.timeout)
		qp->comp.rto_at = now_ns + ne_timeout_ns(qp->attr.timeout);
	return 1;
}

/* Point the requester at the completer's oldest unacknowledged PSN: the WQE
 * holding comp.psn (sent WQEs keep their PSN range, so rebuilding them
 * assigns the same PSNs again), at the offset of that PSN. */
static void req_goto_comp(struct ne_qp *qp)
{
	uint32_t i;

	for (i = qp->sq.head; i != qp->sq.tail; i++) {
		struct ne_swqe *w = wqe_at(qp, i);

		if (w->state != NE_WQE_PENDING)
			break;
		if (ne_psn_cmp(qp->comp.psn, w->first_psn) >= 0 &&
		    ne_psn_cmp(qp->comp.psn, w->last_psn) <= 0) {
			qp->sq.next = i;
			qp->req.psn = qp->comp.psn;
			qp->req.off = (uint32_t)ne_psn_diff(qp->comp.psn, w->first_psn) * qp->attr.path_mtu;
			qp->req.noack_pkts = 0;
			return;
		}
	}
	/* everything up to comp.psn is acknowledged: resume after it */
	qp->sq.next = i;
	qp->req.psn = qp->comp.psn;
	qp->req.off = 0;
	qp->req.noack_pkts = 0;
}

void ne_req_retry(struct ne_qp *qp)
{
	req_goto_comp(qp);
	qp->comp.opcode = NE_OP_NONE;
}

void ne_req_sync(struct ne_qp *qp)
{
	if (ne_psn_cmp(qp->comp.psn, qp->req.psn) > 0 || (int32_t)(qp->sq.next - qp->sq.head) < 0)
		req_goto_comp(qp);
}
