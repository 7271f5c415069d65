/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll: how one message (a transfer of a connection) becomes send WQEs,
 * and how a receiver grants one (CTS).
 *   rocelab split: len divided evenly over the QPs, empty parts skipped;
 *   rocelab rr: the whole message on the connection's next QP;
 *   nccl split: NCCL's pieces (ne_coll_split_piece), zero-length past the end;
 *   nccl rr: message s on QP s mod nqps, at both ends;
 *   nccl ctran: WQEs of ctran_wqe_bytes on the QPs in turn, capped per QP.
 * Every data WQE is a signaled RDMA WRITE WITH IMM whose immediate is s.
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <string.h>

uint32_t ne_coll_msg_wqes(const struct ne_coll *c, uint32_t len)
{
	switch (c->cfg.qp_mode) {
	case NE_COLL_QP_RR:
		return 1;
	case NE_COLL_QP_CTRAN:
		return ne_coll_ctran_wqes(len, c->cfg.ctran_wqe_bytes, c->nqps);
	case NE_COLL_QP_SPLIT:
	default:
		if (coll_nccl(c))
			return c->nqps;
		return len < c->nqps ? len : c->nqps;
	}
}

/* Address of transfer s's staging slot at the receiver. */
static uint64_t slot_addr(const struct ne_coll *c, const struct coll_conn *cn, uint32_t s)
{
	return ne_coll_stage_iova(cn->dst) + cn->stage_off +
	       (uint64_t)(s % c->window) * c->slot_bytes;
}

static int post_one(struct ne_coll *c, struct coll_conn *cn, uint32_t q, struct ne_send_wr *wr,
		    uint64_t now)
{
	int rc = ne_coll_proxy_post(c, cn->src_nic, cn->src_qpn[q], wr, now);

	if (rc)
		return rc;
	c->stats.data_wrs++;
	c->stats.data_bytes += wr->length;
	if (wr->length == 0)
		c->stats.zero_len_wrs++;
	return 0;
}

/* rocelab and nccl split: one WQE per QP from send_part on. */
static int post_split(struct ne_coll *c, struct coll_conn *cn, const struct coll_xfer *x,
		      struct ne_send_wr *wr, uint64_t now)
{
	uint64_t src = wr->local_addr, dst = wr->remote_addr;
	uint32_t wire = coll_wire_len(c, x->len);

	for (uint32_t q = cn->send_part; q < c->nqps; q++) {
		uint64_t lo, len;
		int rc;

		if (coll_nccl(c)) {
			uint32_t off;

			len = ne_coll_split_piece(wire, c->nqps, q, &off);
			lo = off;
		} else {
			lo = part_start(wire, c->nqps, q);
			len = part_start(wire, c->nqps, q + 1) - lo;
			if (len == 0)
				continue;
		}
		wr->local_addr = src + lo;
		wr->remote_addr = dst + lo;
		wr->length = (uint32_t)len;
		rc = post_one(c, cn, q, wr, now);
		if (rc) {
			cn->send_part = q;
			return rc;
		}
	}
	cn->send_part = 0;
	return 0;
}

/* CTRAN: the next QP in turn that has fewer than ctran_max_msgs outstanding;
 * nqps when every QP is at its cap. */
static uint32_t ctran_pick(struct ne_coll *c, struct coll_conn *cn)
{
	for (uint32_t i = 0; i < c->nqps; i++) {
		uint32_t q = (cn->rr_next + i) % c->nqps;

		if (cn->qp_outstanding[q] < c->cfg.ctran_max_msgs)
			return q;
		c->stats.ctran_qp_full++;
	}
	return c->nqps;
}

static int post_ctran(struct ne_coll *c, struct coll_conn *cn, uint32_t s,
		      const struct coll_xfer *x, struct ne_send_wr *wr, uint64_t now)
{
	uint64_t src = wr->local_addr, dst = wr->remote_addr;
	uint32_t wqe = c->cfg.ctran_wqe_bytes, wire = coll_wire_len(c, x->len);
	uint32_t n = ne_coll_msg_wqes(c, wire);

	for (uint32_t p = cn->send_part; p < n; p++) {
		uint32_t off, len, q = ctran_pick(c, cn);
		int rc;

		if (q == c->nqps) {
			cn->send_part = p;
			return -EAGAIN;
		}
		if (wqe == 0) {
			len = ne_coll_split_piece(wire, c->nqps, p, &off);
		} else {
			off = p * wqe;
			len = wire - off < wqe ? wire - off : wqe;
		}
		wr->local_addr = src + off;
		wr->remote_addr = dst + off;
		wr->length = len;
		wr->wr_id = wr_id_make(WR_DATA_SEND, (uint32_t)(cn - c->conns),
				       s | q << WR_QP_SHIFT);
		rc = post_one(c, cn, q, wr, now);
		if (rc) {
			cn->send_part = p;
			return rc;
		}
		cn->qp_outstanding[q]++;
		if (cn->qp_outstanding[q] > c->stats.ctran_max_outstanding)
			c->stats.ctran_max_outstanding = cn->qp_outstanding[q];
		cn->rr_next = (q + 1) % c->nqps;
	}
	cn->send_part = 0;
	return 0;
}

int ne_coll_post_msg(struct ne_coll *c, uint32_t k, uint32_t s, uint64_t now)
{
	struct coll_conn *cn = &c->conns[k];
	const struct coll_xfer *x = &cn->xfers[s];
	const struct coll_rank *rs = &c->ranks[cn->src], *rd = &c->ranks[cn->dst];
	struct ne_send_wr wr;
	uint32_t q;
	int rc;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = NE_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = NE_SEND_SIGNALED;
	/* (PXN: the NIC of another GPU reads the sender's buffer) */
	wr.lkey = cn->pxn ? c->ranks[cn->src_nic].pxn_key : rs->src_key;
	wr.rkey = rd->stage_key;
	wr.imm_data = s;
	wr.wr_id = wr_id_make(WR_DATA_SEND, k, s);
	wr.local_addr = ne_coll_src_iova(rs->idx) + (c->cfg.data ? x->src_off : 0);
	wr.remote_addr = slot_addr(c, cn, s);
	switch (c->cfg.qp_mode) {
	case NE_COLL_QP_RR:
		/* nccl: both ends name the QP from the message's seq */
		q = coll_nccl(c) ? s % c->nqps : cn->rr_next % c->nqps;
		wr.length = coll_wire_len(c, x->len);
		rc = post_one(c, cn, q, &wr, now);
		if (!rc)
			cn->rr_next++;
		return rc;
	case NE_COLL_QP_CTRAN:
		return post_ctran(c, cn, s, x, &wr, now);
	case NE_COLL_QP_SPLIT:
	default:
		return post_split(c, cn, x, &wr, now);
	}
}

int ne_coll_post_cts(struct ne_coll *c, uint32_t k, uint32_t s, uint64_t now)
{
	struct coll_conn *cn = &c->conns[k];
	const struct coll_rank *rd = &c->ranks[cn->dst], *rs = &c->ranks[cn->src_nic];
	struct ne_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.imm_data = s;
	wr.wr_id = wr_id_make(WR_CTS_SEND, k, s);
	if (!coll_nccl(c)) {
		wr.opcode = NE_WR_SEND_WITH_IMM;
		wr.send_flags = NE_SEND_SIGNALED;
		return ne_coll_proxy_post(c, cn->dst, cn->dst_ctrl_qpn, &wr, now);
	}
	/* NCCL's FIFO entry: written into the sender's FIFO slot, unsignaled;
	 * its bytes are not interpreted here (the immediate names s) */
	wr.opcode = NE_WR_RDMA_WRITE_WITH_IMM;
	wr.length = NE_COLL_NCCL_FIFO_ENTRY;
	wr.local_addr = ne_coll_stage_iova(rd->idx);
	wr.lkey = rd->stage_key;
	wr.remote_addr = ne_coll_stage_iova(rs->idx) + cn->fifo_off +
			 (uint64_t)(s % c->window) * NE_COLL_NCCL_FIFO_ENTRY;
	wr.rkey = rs->stage_key;
	return ne_coll_proxy_post(c, cn->dst, cn->dst_ctrl_qpn, &wr, now);
}

void ne_coll_data_sent(struct ne_coll *c, struct coll_conn *cn, uint64_t wr_id)
{
	if (c->cfg.qp_mode == NE_COLL_QP_CTRAN) {
		uint32_t q = (uint32_t)(wr_id >> WR_QP_SHIFT) & 0xFFu;

		if (q < c->nqps && cn->qp_outstanding[q])
			cn->qp_outstanding[q]--;
	}
}
