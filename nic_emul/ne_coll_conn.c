/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll resources: buffers, memory regions, the CQ of each rank (with
 * completion notification) and the QPs of each connection, brought to RTS.
 */
#include "ne_coll_priv.h"
#include "ne_mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Buffers, QPs */

int ne_coll_buffers_alloc(struct ne_coll *c)
{
	uint32_t n = c->nranks;
	size_t chunk = c->slot_bytes; /* rocelab: chunk_bytes */

	for (uint32_t i = 0; i < n; i++) {
		struct coll_rank *r = &c->ranks[i];
		size_t pad = 0;

		if (c->cfg.data) {
			switch (c->cfg.op) {
			case NE_COLL_ALLREDUCE:
			case NE_COLL_BROADCAST:
			case NE_COLL_REDUCE:
				r->nin = r->nwork = c->rank_elems;
				break;
			case NE_COLL_ALLGATHER:
				r->nin = c->block_elems;
				r->nwork = n * c->block_elems;
				break;
			case NE_COLL_REDUCESCATTER:
			case NE_COLL_ALLTOALL:
				r->nin = r->nwork = n * c->block_elems;
				break;
			case NE_COLL_INCAST:
				r->nin = i == c->cfg.root ? 0 : c->rank_elems;
				r->nwork = i == c->cfg.root ? n * c->rank_elems : 0;
				break;
			case NE_COLL_SENDRECV: {
				uint32_t out, in;

				/* its input once, a block per pair it receives */
				ne_coll_p2p_degree(&c->cfg, i, &out, &in);
				r->nin = out ? c->rank_elems : 0;
				r->nwork = in * c->rank_elems;
				break;
			}
			}
			if (r->nin && !(r->in = calloc(r->nin, sizeof(float))))
				return -ENOMEM;
			/* LL / LL128 send more than the data (coll_wire_len): the
			 * NIC reads up to a slot past a transfer's start */
			pad = c->proto == NC_PROTO_SIMPLE ? 0 : chunk / sizeof(float);
			if (r->nwork && !(r->work = calloc(r->nwork + pad, sizeof(float))))
				return -ENOMEM;
			for (size_t e = 0; e < r->nin; e++)
				r->in[e] = (float)((i * 7u + e * 3u) % 17u + 1u);
		}
		if (c->cfg.data && coll_op_is_ring(c->cfg.op)) {
			r->src = (uint8_t *)r->work;
			r->src_len = (r->nwork + pad) * sizeof(float);
		} else if (c->cfg.data && r->nin) {
			r->src = (uint8_t *)r->in;
			r->src_len = r->nin * sizeof(float);
		} else {
			r->src_len = c->cfg.data ? 64 : chunk;
			/* (data=off: a chunk per rank that nothing writes; on pages
			 * mapped when first touched, 1,024 ranks' 512 KiB chunks
			 * held 139 MB resident from the heap's calloc) */
			r->src = ne_lazy_zalloc(r->src_len);
			if (!r->src)
				return -ENOMEM;
			r->src_owned = true;
		}
	}
	/* staging: window slots per incoming connection (rocelab: of chunk
	 * bytes; nccl: of the largest message) */
	for (uint32_t k = 0; k < c->nconns; k++) {
		struct coll_conn *cn = &c->conns[k];

		cn->stage_off = c->ranks[cn->dst].stage_len;
		c->ranks[cn->dst].stage_len += (size_t)c->window * c->slot_bytes;
	}
	/* nccl: the FIFO of each outgoing connection, after the staging slots */
	for (uint32_t k = 0; coll_nccl(c) && k < c->nconns; k++) {
		struct coll_conn *cn = &c->conns[k];

		cn->fifo_off = c->ranks[cn->src_nic].stage_len;
		c->ranks[cn->src_nic].stage_len += (size_t)c->window * NE_COLL_NCCL_FIFO_ENTRY;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct coll_rank *r = &c->ranks[i];

		/* room for a FIFO entry's source (nccl), never empty */
		if (r->stage_len < NE_COLL_NCCL_FIFO_ENTRY)
			r->stage_len = NE_COLL_NCCL_FIFO_ENTRY;
		r->stage = ne_lazy_zalloc(r->stage_len); /* (an incast root's: 16 GiB of addresses) */
		if (!r->stage)
			return -ENOMEM;
	}
	return 0;
}

/* Rank's MR of a: registered on its NIC, or where another process runs the
 * NIC (coll_here) only its key, the one that process's NIC gives it. */
static int mr_reg(const struct ne_coll *c, uint32_t rank, const struct ne_mr_attr *a, uint32_t *key)
{
	struct ne_nic *nic = c->ranks[rank].nic;

	return coll_here(c, rank) ? ne_mr_reg(nic, a, key) : ne_mr_hold(nic, key);
}

int ne_coll_mrs_register(struct ne_coll *c)
{
	for (uint32_t i = 0; i < c->nranks; i++) {
		struct coll_rank *r = &c->ranks[i];
		struct ne_mr_attr a;
		int rc;

		if (r->src_len > NE_COLL_IOVA_ROOM || r->stage_len > NE_COLL_IOVA_ROOM)
			return -E2BIG;
		memset(&a, 0, sizeof(a));
		a.addr = r->src;
		a.len = r->src_len;
		a.iova = ne_coll_src_iova(i);
		a.access = NE_ACCESS_LOCAL_WRITE;
		rc = mr_reg(c, i, &a, &r->src_key);
		if (rc)
			return rc;
		r->src_reg = true;
		a.addr = r->stage;
		a.len = r->stage_len;
		a.iova = ne_coll_stage_iova(i);
		a.access = NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE;
		rc = mr_reg(c, i, &a, &r->stage_key);
		if (rc)
			return rc;
		r->stage_reg = true;
	}
	return 0;
}

/* Queue depths: a QP carries at most one WQE per message in flight (split,
 * rr) plus the CTS; CTRAN up to ctran_max_msgs WQEs per QP. */
static uint32_t sq_depth(const struct ne_coll *c)
{
	uint32_t d = 4 * c->window + 8;

	return c->cfg.qp_mode == NE_COLL_QP_CTRAN ? d + c->cfg.ctran_max_msgs : d;
}

static uint32_t rq_depth(const struct ne_coll *c)
{
	uint32_t d = 2 * c->window + 4;

	return c->cfg.qp_mode == NE_COLL_QP_CTRAN ? d + c->cfg.ctran_max_msgs : d;
}

static int mkqp(struct ne_coll *c, uint32_t rank, uint32_t sqd, uint32_t rqd, uint32_t *qpn)
{
	struct ne_qp_init_attr ia;

	if (!coll_here(c, rank)) /* (its process makes the QP: only its number here) */
		return ne_qp_hold(c->ranks[rank].nic, qpn);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = c->ranks[rank].cq;
	ia.max_send_wr = sqd;
	ia.max_recv_wr = rqd;
	return ne_qp_create(c->ranks[rank].nic, &ia, qpn);
}

static uint32_t psn_of(const struct ne_coll *c, uint32_t qpn)
{
	return (qpn * 2654435761u + c->cfg.psn_offset) & NE_PSN_MASK;
}

/* Bring the pair (rank a qpn qa) <-> (rank b qpn qb) to RTS. */
static int connect_pair(struct ne_coll *c, uint32_t a, uint32_t qa, uint32_t b, uint32_t qb,
			uint8_t dscp_a, uint8_t dscp_b)
{
	uint32_t rk[2] = {a, b}, q[2] = {qa, qb};
	uint8_t dscp[2] = {dscp_a, dscp_b};

	for (int i = 0; i < 2; i++) {
		struct ne_nic_config peer;
		struct ne_qp_attr at;
		int j = 1 - i, rc;

		if (!coll_here(c, rk[i])) /* (its process connects it) */
			continue;
		ne_nic_get_config(c->ranks[rk[j]].nic, &peer);
		memset(&at, 0, sizeof(at));
		at.state = NE_QPS_INIT;
		rc = ne_qp_modify(c->ranks[rk[i]].nic, q[i], &at, NE_QP_STATE);
		if (rc)
			return rc;
		at.state = NE_QPS_RTR;
		at.dest_qpn = q[j];
		at.rq_psn = psn_of(c, q[j]);
		at.path_mtu = c->cfg.path_mtu;
		at.dest_ipv4 = peer.ipv4;
		memcpy(at.dest_mac, peer.mac, 6);
		at.dscp = dscp[i];
		at.min_rnr_timer = 1;
		rc = ne_qp_modify(c->ranks[rk[i]].nic, q[i], &at,
				  NE_QP_STATE | NE_QP_AV | NE_QP_PATH_MTU | NE_QP_DEST_QPN |
					  NE_QP_RQ_PSN | NE_QP_MIN_RNR_TIMER);
		if (rc)
			return rc;
		at.state = NE_QPS_RTS;
		at.sq_psn = psn_of(c, q[i]);
		at.timeout = c->cfg.timeout;
		at.retry_cnt = c->cfg.retry_cnt;
		at.rnr_retry = 7;
		rc = ne_qp_modify(c->ranks[rk[i]].nic, q[i], &at,
				  NE_QP_STATE | NE_QP_SQ_PSN | NE_QP_TIMEOUT | NE_QP_RETRY_CNT |
					  NE_QP_RNR_RETRY);
		if (rc)
			return rc;
	}
	return 0;
}

int ne_coll_post_recv(struct ne_coll *c, uint32_t rank, uint32_t qpn, uint64_t wr_id)
{
	struct ne_recv_wr rw;

	if (!coll_here(c, rank)) /* (its process posts it) */
		return 0;
	memset(&rw, 0, sizeof(rw));
	rw.wr_id = wr_id;
	rw.lkey = c->ranks[rank].stage_key;
	rw.addr = ne_coll_stage_iova(rank);
	rw.length = 0;
	return ne_post_recv(c->ranks[rank].nic, qpn, &rw);
}

/* Data QP q of connection k, both ends, to RTS, receive WQEs posted. In the
 * nccl model QP 0 also carries the FIFO back: deeper queues the other way,
 * and the receiver's end in NCCL_IB_FIFO_TC's class when set. */
static int data_qp_setup(struct ne_coll *c, uint32_t k, uint32_t q, uint32_t sqd, uint32_t rqd)
{
	struct coll_conn *cn = &c->conns[k];
	bool fifo = coll_nccl(c) && q == 0;
	uint8_t back_dscp = c->cfg.data_dscp;
	int rc;

	if (fifo && c->cfg.nccl_fifo_tc != NE_COLL_FIFO_TC_NONE)
		back_dscp = (uint8_t)((unsigned)c->cfg.nccl_fifo_tc >> 2);
	rc = mkqp(c, cn->src_nic, sqd, fifo ? rqd : 1, &cn->src_qpn[q]);
	if (!rc)
		rc = mkqp(c, cn->dst, fifo ? sqd : 1, rqd, &cn->dst_qpn[q]);
	if (!rc)
		rc = connect_pair(c, cn->src_nic, cn->src_qpn[q], cn->dst, cn->dst_qpn[q],
				  c->cfg.data_dscp, back_dscp);
	for (uint32_t w = 0; w < rqd && !rc; w++)
		rc = ne_coll_post_recv(c, cn->dst, cn->dst_qpn[q], wr_id_make(WR_DATA_RECV, k, 0));
	for (uint32_t w = 0; fifo && w < rqd && !rc; w++)
		rc = ne_coll_post_recv(c, cn->src_nic, cn->src_qpn[q], wr_id_make(WR_CTS_RECV, k, 0));
	return rc;
}

int ne_coll_qps_setup(struct ne_coll *c)
{
	uint32_t sqd = sq_depth(c), rqd = rq_depth(c);

	for (uint32_t i = 0; i < c->nranks; i++) {
		uint64_t nq = ne_coll_qps_needed(&c->cfg, i);
		uint64_t depth = nq * (sqd + rqd) + 64;

		if (depth > 0x7FFFFFFF)
			return -EINVAL;
		if (c->cfg.sport != NE_COLL_SPORT_NIC) {
			struct ne_nic_config tmp;

			ne_coll_nic_config(&c->cfg, i, 0, &tmp);
			ne_nic_set_sport_policy(c->ranks[i].nic, tmp.sport_policy, tmp.sport_fixed,
						tmp.sport_seed);
		}
		if (!coll_here(c, i)) /* (its process polls it) */
			continue;
		c->ranks[i].cq = ne_cq_create(c->ranks[i].nic, (uint32_t)depth);
		if (!c->ranks[i].cq)
			return -ENOMEM;
		ne_cq_set_notify(c->ranks[i].cq, ne_coll_cq_notify, &c->ranks[i]);
	}
	for (uint32_t k = 0; k < c->nconns; k++) {
		struct coll_conn *cn = &c->conns[k];
		int rc;

		for (uint32_t q = 0; q < c->nqps; q++) {
			rc = data_qp_setup(c, k, q, sqd, rqd);
			if (rc)
				return rc;
		}
		if (coll_nccl(c)) {
			/* no control QP: the FIFO goes the other way on data QP 0 */
			cn->src_ctrl_qpn = cn->src_qpn[0];
			cn->dst_ctrl_qpn = cn->dst_qpn[0];
			continue;
		}
		rc = mkqp(c, cn->src_nic, 1, rqd, &cn->src_ctrl_qpn);
		if (!rc)
			rc = mkqp(c, cn->dst, sqd, 1, &cn->dst_ctrl_qpn);
		if (!rc)
			rc = connect_pair(c, cn->src_nic, cn->src_ctrl_qpn, cn->dst, cn->dst_ctrl_qpn,
					  c->cfg.ctrl_dscp, c->cfg.ctrl_dscp);
		for (uint32_t w = 0; w < rqd && !rc; w++)
			rc = ne_coll_post_recv(c, cn->src_nic, cn->src_ctrl_qpn, wr_id_make(WR_CTS_RECV, k, 0));
		if (rc)
			return rc;
	}
	return 0;
}

int ne_coll_groups_setup(struct ne_coll *c)
{
	bool per_conn = coll_nccl(c) || coll_tree(c);

	c->ngroups = per_conn ? c->nconns : c->nranks * c->nchannels;
	c->groups = calloc(c->ngroups, sizeof(*c->groups));
	if (!c->groups)
		return -ENOMEM;
	for (uint32_t g = 0; !per_conn && g < c->ngroups; g++)
		c->groups[g].rank = g / c->nchannels; /* (also a group with no connection) */
	for (uint32_t k = 0; k < c->nconns; k++) {
		struct coll_group *g = &c->groups[c->conns[k].group];

		g->rank = c->conns[k].dst;
		if (ne_u32_push(&g->conns, &g->nconns, &g->conns_cap, k))
			return -ENOMEM;
	}
	c->dirty_conns = calloc(c->nconns + 1, sizeof(*c->dirty_conns));
	c->dirty_groups = calloc((size_t)c->ngroups + 1, sizeof(*c->dirty_groups));
	return c->dirty_conns && c->dirty_groups ? 0 : -ENOMEM;
}
