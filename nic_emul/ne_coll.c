/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll: collectives over ne_nic (see ne_coll.h for the model).
 *
 * A plan is built once at create: every connection gets its ordered list of
 * chunk transfers (source offset, destination offset, length, reduce or copy,
 * and the transfer it depends on: for ring operations, the previous hop of
 * the same chunk arriving at the sender). Each iteration then replays the
 * plan: receivers grant (CTS), senders post WRITE WITH IMM parts when
 * granted and their data is ready, receivers consume complete transfers.
 * All progress is triggered by work completions; connections and receiver
 * groups that may progress are kept on dirty lists so a poll does work
 * proportional to what changed.
 */
#include "ne_coll.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K_DATA_SEND 0u
#define K_CTS_SEND 1u
#define K_DATA_RECV 2u
#define K_CTS_RECV 3u

#define X_COPY 0u
#define X_REDUCE 1u

#define F_RECV_DONE 1u /* all parts arrived, consumed by the receiver */
#define F_SEND_DONE 2u /* all parts completed (ACKed) at the sender */
#define F_CTS_RCVD 4u  /* CTS arrived at the sender */

struct xfer {
	uint64_t src_off; /* bytes into the sender's source buffer */
	uint64_t dst_off; /* bytes into the receiver's result buffer */
	uint32_t len;     /* bytes, 1..chunk_bytes, multiple of 4 */
	uint8_t kind;     /* X_COPY / X_REDUCE */
	int32_t dep_conn; /* -1: no dependency */
	uint32_t dep_seq;
};

struct conn {
	uint32_t src, dst, ch;
	uint32_t *sq; /* data QPNs on the sender's NIC */
	uint32_t *dq; /* data QPNs on the receiver's NIC */
	uint32_t sctl, dctl;
	struct xfer *x;
	uint32_t nx, capx;
	uint64_t bytes;
	uint8_t *flags, *rparts, *sparts; /* per seq */
	uint64_t stage_off;               /* in the receiver's staging buffer */
	int32_t down;                     /* connection whose transfers depend on ours */
	uint32_t group;
	/* sender */
	uint32_t snd_next, snd_part, rr_next;
	/* receiver */
	uint32_t rcv_grant;
	bool dirty;
};

/* A receiver's incoming connections of one channel: CTS budget of window. */
struct group {
	uint32_t *conns;
	uint32_t n, cap, rr, used;
	bool dirty;
};

struct rank {
	struct ne_coll *owner; /* for the CQ notification callback */
	uint32_t idx;
	bool cq_ready;         /* on the ready heap: completions queued */
	struct ne_nic *nic;
	struct ne_cq *cq;
	float *in, *work;
	size_t nin, nwork;
	uint8_t *src;   /* registered source buffer (work, in or scratch) */
	size_t src_len;
	bool src_owned; /* src is a separate allocation */
	uint8_t *stage;
	size_t stage_len;
	uint32_t src_key, stage_key;
	bool src_reg, stage_reg;
	uint64_t granted_bytes;
};

struct ne_coll {
	struct ne_coll_config cfg;
	uint32_t n, C, Q, W;
	uint64_t count;  /* AllReduce / incast: elements per rank */
	uint64_t pc;     /* AllGather/ReduceScatter/AllToAll: elements per block */
	struct rank *r;
	struct conn *conns;
	uint32_t nconns;
	struct group *groups; /* n x C: index dst * C + ch */
	uint64_t total_x;

	uint32_t *dconn, ndconn; /* dirty stacks */
	uint32_t *dgrp, ndgrp;
	/* ranks whose CQ has completions (min-heap of rank indices, filled by the
	 * CQ notification): polled in ascending rank order, as a scan would */
	uint32_t *ready, nready;

	bool running, done, failed;
	uint64_t iter_start;
	uint32_t iters_done, iters_total;
	uint64_t *iter_ns;
	uint64_t recv_done, send_done, ctl_out;
	struct ne_coll_stats st;
};

static inline uint64_t mkid(uint32_t kind, uint32_t conn, uint32_t seq)
{
	return (uint64_t)kind << 62 | (uint64_t)conn << 32 | seq;
}

static inline uint64_t part_lo(uint64_t total, uint64_t k, uint64_t i)
{
	return total * i / k;
}

static bool is_ring(enum ne_coll_op op)
{
	return op == NE_COLL_ALLREDUCE || op == NE_COLL_ALLGATHER || op == NE_COLL_REDUCESCATTER;
}

/* ------------------------------------------------------------------ */
/* Configuration */

void ne_coll_config_default(struct ne_coll_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->op = NE_COLL_ALLREDUCE;
	cfg->nranks = 2;
	cfg->bytes = 1u << 20;
	cfg->channels = 1;
	cfg->qps_per_conn = 1;
	cfg->qp_mode = NE_COLL_QP_SPLIT;
	cfg->chunk_bytes = 128u << 10;
	cfg->window = 1;
	cfg->cts = true;
	cfg->data_dscp = 26;
	cfg->ctrl_dscp = 48;
	cfg->path_mtu = 4096;
	cfg->timeout = 14;
	cfg->retry_cnt = 7;
	cfg->root = 0;
	cfg->data = true;
	cfg->warmup_iters = 0;
	cfg->iters = 1;
	cfg->sport = NE_COLL_SPORT_NIC;
	cfg->sport_fixed = 0xC000;
}

int ne_coll_config_check(const struct ne_coll_config *cfg)
{
	if (!cfg || cfg->op > NE_COLL_INCAST || cfg->nranks < 2 || cfg->nranks > NE_COLL_MAX_RANKS ||
	    cfg->bytes == 0 || cfg->channels == 0 || cfg->channels > NE_COLL_MAX_CHANNELS ||
	    cfg->qps_per_conn == 0 || cfg->qps_per_conn > NE_COLL_MAX_QPS ||
	    cfg->qp_mode > NE_COLL_QP_RR || cfg->chunk_bytes < 4 || cfg->chunk_bytes % 4 ||
	    cfg->chunk_bytes > (1u << 30) || cfg->window == 0 || cfg->window > 1024 ||
	    cfg->data_dscp > 63 || cfg->ctrl_dscp > 63 || cfg->timeout > 31 || cfg->retry_cnt > 7 ||
	    cfg->iters == 0 || cfg->sport > NE_COLL_SPORT_HASH)
		return -EINVAL;
	if (cfg->path_mtu != 256 && cfg->path_mtu != 512 && cfg->path_mtu != 1024 &&
	    cfg->path_mtu != 2048 && cfg->path_mtu != 4096)
		return -EINVAL;
	if (cfg->op == NE_COLL_INCAST && cfg->root >= cfg->nranks)
		return -EINVAL;
	if (cfg->bytes / 4 == 0)
		return -EINVAL;
	if ((cfg->op == NE_COLL_ALLGATHER || cfg->op == NE_COLL_REDUCESCATTER ||
	     cfg->op == NE_COLL_ALLTOALL) &&
	    cfg->bytes / 4 / cfg->nranks == 0)
		return -EINVAL;
	return 0;
}

uint32_t ne_coll_qps_needed(const struct ne_coll_config *cfg, uint32_t rank)
{
	uint32_t per = cfg->channels * (cfg->qps_per_conn + 1);

	switch (cfg->op) {
	case NE_COLL_ALLTOALL:
		return 2 * (cfg->nranks - 1) * per;
	case NE_COLL_INCAST:
		return rank == cfg->root ? (cfg->nranks - 1) * per : per;
	default:
		return 2 * per;
	}
}

uint32_t ne_coll_mrs_needed(const struct ne_coll_config *cfg, uint32_t rank)
{
	(void)cfg;
	(void)rank;
	return 2;
}

void ne_coll_nic_config(const struct ne_coll_config *cfg, uint32_t rank, uint64_t line_rate_bps,
			struct ne_nic_config *out)
{
	uint32_t v = rank + 1;

	ne_nic_config_default(out);
	out->mac[0] = 0x02;
	out->mac[4] = (uint8_t)(v >> 8);
	out->mac[5] = (uint8_t)v;
	out->ipv4 = 0x0A000000u | (v & 0xFFFFu);
	out->line_rate_bps = line_rate_bps;
	out->ip_id = (uint16_t)(v << 8);
	out->max_qps = ne_coll_qps_needed(cfg, rank) + 16;
	out->max_mrs = ne_coll_mrs_needed(cfg, rank) + 8;
	switch (cfg->sport) {
	case NE_COLL_SPORT_RXE:
		out->sport_policy = NE_SPORT_RXE;
		break;
	case NE_COLL_SPORT_FIXED:
		out->sport_policy = NE_SPORT_FIXED;
		out->sport_fixed = cfg->sport_fixed;
		break;
	case NE_COLL_SPORT_HASH:
		out->sport_policy = NE_SPORT_HASH;
		out->sport_seed = cfg->sport_seed;
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Plan */

static int conn_add_x(struct conn *k, const struct xfer *x)
{
	if (k->nx == k->capx) {
		uint32_t nc = k->capx ? 2 * k->capx : 16;
		struct xfer *p = realloc(k->x, nc * sizeof(*p));

		if (!p)
			return -ENOMEM;
		k->x = p;
		k->capx = nc;
	}
	k->x[k->nx++] = *x;
	k->bytes += x->len;
	return 0;
}

static uint32_t ring_conn(const struct ne_coll *c, uint32_t sender, uint32_t ch)
{
	return ch * c->n + sender;
}

/* Ring chains: segment j of channel ch is elements [lo, lo + len) (same
 * offsets at every rank); its chain starts at rank (j + start) and makes H
 * hops; hop h reduces when h < nreduce, else copies. */
static int build_ring(struct ne_coll *c, uint32_t start, uint32_t H, uint32_t nreduce)
{
	uint32_t n = c->n;
	uint64_t ce = c->cfg.chunk_bytes / 4;
	uint64_t *lo = calloc(n, sizeof(*lo)), *len = calloc(n, sizeof(*len));
	int32_t *lconn = calloc(n, sizeof(*lconn));
	uint32_t *lseq = calloc(n, sizeof(*lseq));
	int rc = 0;

	if (!lo || !len || !lconn || !lseq) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t ch = 0; ch < c->C && !rc; ch++) {
		uint64_t maxc = 0;

		for (uint32_t j = 0; j < n; j++) {
			if (c->cfg.op == NE_COLL_ALLREDUCE) {
				uint64_t a = part_lo(c->count, c->C, ch), b = part_lo(c->count, c->C, ch + 1);

				lo[j] = a + part_lo(b - a, n, j);
				len[j] = a + part_lo(b - a, n, j + 1) - lo[j];
			} else {
				lo[j] = j * c->pc + part_lo(c->pc, c->C, ch);
				len[j] = part_lo(c->pc, c->C, ch + 1) - part_lo(c->pc, c->C, ch);
			}
			if ((len[j] + ce - 1) / ce > maxc)
				maxc = (len[j] + ce - 1) / ce;
		}
		for (uint64_t ci = 0; ci < maxc && !rc; ci++)
			for (uint32_t h = 0; h < H && !rc; h++)
				for (uint32_t s = 0; s < n && !rc; s++) {
					uint32_t j = (uint32_t)((s + 2ull * n - start - h % n) % n);
					uint32_t k = ring_conn(c, s, ch);
					struct xfer x;

					if (ci * ce >= len[j])
						continue;
					x.src_off = x.dst_off = (lo[j] + ci * ce) * 4;
					x.len = (uint32_t)((len[j] - ci * ce < ce ? len[j] - ci * ce : ce) * 4);
					x.kind = h < nreduce ? X_REDUCE : X_COPY;
					x.dep_conn = h ? lconn[j] : -1;
					x.dep_seq = h ? lseq[j] : 0;
					if (h)
						c->conns[lconn[j]].down = (int32_t)k;
					rc = conn_add_x(&c->conns[k], &x);
					lconn[j] = (int32_t)k;
					lseq[j] = c->conns[k].nx - 1;
				}
	}
out:
	free(lo);
	free(len);
	free(lconn);
	free(lseq);
	return rc;
}

/* One block from sender to receiver, over the channels, in chunks. */
static int build_block(struct ne_coll *c, uint32_t first_conn_of_ch0, uint32_t conns_per_ch,
		       uint64_t src_el, uint64_t dst_el, uint64_t nel)
{
	uint64_t ce = c->cfg.chunk_bytes / 4;

	for (uint32_t ch = 0; ch < c->C; ch++) {
		uint64_t a = part_lo(nel, c->C, ch), b = part_lo(nel, c->C, ch + 1);
		struct conn *k = &c->conns[ch * conns_per_ch + first_conn_of_ch0];

		for (uint64_t o = a; o < b; o += ce) {
			struct xfer x;
			int rc;

			x.src_off = (src_el + o) * 4;
			x.dst_off = (dst_el + o) * 4;
			x.len = (uint32_t)((b - o < ce ? b - o : ce) * 4);
			x.kind = X_COPY;
			x.dep_conn = -1;
			x.dep_seq = 0;
			rc = conn_add_x(k, &x);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int build_plan(struct ne_coll *c)
{
	uint32_t n = c->n, C = c->C, i = 0;
	int rc = 0;

	switch (c->cfg.op) {
	case NE_COLL_ALLTOALL:
		c->nconns = C * n * (n - 1);
		break;
	case NE_COLL_INCAST:
		c->nconns = C * (n - 1);
		break;
	default:
		c->nconns = C * n;
		break;
	}
	c->conns = calloc(c->nconns, sizeof(*c->conns));
	if (!c->conns)
		return -ENOMEM;
	for (uint32_t ch = 0; ch < C; ch++)
		for (uint32_t s = 0; s < n; s++)
			for (uint32_t d = 0; d < n; d++) {
				bool want;

				if (c->cfg.op == NE_COLL_ALLTOALL)
					want = s != d;
				else if (c->cfg.op == NE_COLL_INCAST)
					want = d == c->cfg.root && s != d;
				else
					want = d == (s + 1) % n;
				if (!want)
					continue;
				c->conns[i].src = s;
				c->conns[i].dst = d;
				c->conns[i].ch = ch;
				c->conns[i].down = -1;
				c->conns[i].group = d * C + ch;
				i++;
			}
	switch (c->cfg.op) {
	case NE_COLL_ALLREDUCE:
		rc = build_ring(c, 0, 2 * (n - 1), n - 1);
		break;
	case NE_COLL_ALLGATHER:
		rc = build_ring(c, 0, n - 1, 0);
		break;
	case NE_COLL_REDUCESCATTER:
		rc = build_ring(c, 1, n - 1, n - 1);
		break;
	case NE_COLL_ALLTOALL:
		for (uint32_t k = 0; k < n * (n - 1) && !rc; k++) {
			uint32_t s = c->conns[k].src, d = c->conns[k].dst;

			rc = build_block(c, k, n * (n - 1), (uint64_t)d * c->pc, (uint64_t)s * c->pc, c->pc);
		}
		break;
	case NE_COLL_INCAST:
		for (uint32_t k = 0; k < n - 1 && !rc; k++)
			rc = build_block(c, k, n - 1, 0, (uint64_t)c->conns[k].src * c->count, c->count);
		break;
	}
	if (rc)
		return rc;
	for (i = 0; i < c->nconns; i++) {
		struct conn *k = &c->conns[i];

		c->total_x += k->nx;
		k->flags = calloc(k->nx + 1, 1);
		k->rparts = calloc(k->nx + 1, 1);
		k->sparts = calloc(k->nx + 1, 1);
		k->sq = calloc(c->Q, sizeof(*k->sq));
		k->dq = calloc(c->Q, sizeof(*k->dq));
		if (!k->flags || !k->rparts || !k->sparts || !k->sq || !k->dq)
			return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Buffers, QPs */

static int alloc_buffers(struct ne_coll *c)
{
	uint32_t n = c->n;
	size_t chunk = c->cfg.chunk_bytes;

	for (uint32_t i = 0; i < n; i++) {
		struct rank *r = &c->r[i];

		if (c->cfg.data) {
			switch (c->cfg.op) {
			case NE_COLL_ALLREDUCE:
				r->nin = r->nwork = c->count;
				break;
			case NE_COLL_ALLGATHER:
				r->nin = c->pc;
				r->nwork = n * c->pc;
				break;
			case NE_COLL_REDUCESCATTER:
			case NE_COLL_ALLTOALL:
				r->nin = r->nwork = n * c->pc;
				break;
			case NE_COLL_INCAST:
				r->nin = i == c->cfg.root ? 0 : c->count;
				r->nwork = i == c->cfg.root ? n * c->count : 0;
				break;
			}
			if (r->nin && !(r->in = calloc(r->nin, sizeof(float))))
				return -ENOMEM;
			if (r->nwork && !(r->work = calloc(r->nwork, sizeof(float))))
				return -ENOMEM;
			for (size_t e = 0; e < r->nin; e++)
				r->in[e] = (float)((i * 7u + e * 3u) % 17u + 1u);
		}
		if (c->cfg.data && is_ring(c->cfg.op)) {
			r->src = (uint8_t *)r->work;
			r->src_len = r->nwork * sizeof(float);
		} else if (c->cfg.data && r->nin) {
			r->src = (uint8_t *)r->in;
			r->src_len = r->nin * sizeof(float);
		} else {
			r->src_len = c->cfg.data ? 64 : chunk;
			r->src = calloc(1, r->src_len);
			if (!r->src)
				return -ENOMEM;
			r->src_owned = true;
		}
	}
	/* staging: window slots of chunk bytes per incoming connection */
	for (uint32_t k = 0; k < c->nconns; k++) {
		struct conn *cn = &c->conns[k];

		cn->stage_off = c->r[cn->dst].stage_len;
		c->r[cn->dst].stage_len += (size_t)c->W * chunk;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct rank *r = &c->r[i];

		if (r->stage_len == 0)
			r->stage_len = 64;
		r->stage = calloc(1, r->stage_len);
		if (!r->stage)
			return -ENOMEM;
	}
	return 0;
}

static int reg_mrs(struct ne_coll *c)
{
	for (uint32_t i = 0; i < c->n; i++) {
		struct rank *r = &c->r[i];
		struct ne_mr_attr a;
		int rc;

		memset(&a, 0, sizeof(a));
		a.addr = r->src;
		a.len = r->src_len;
		a.iova = (uint64_t)(uintptr_t)r->src;
		a.access = NE_ACCESS_LOCAL_WRITE;
		rc = ne_mr_reg(r->nic, &a, &r->src_key);
		if (rc)
			return rc;
		r->src_reg = true;
		a.addr = r->stage;
		a.len = r->stage_len;
		a.iova = (uint64_t)(uintptr_t)r->stage;
		a.access = NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE;
		rc = ne_mr_reg(r->nic, &a, &r->stage_key);
		if (rc)
			return rc;
		r->stage_reg = true;
	}
	return 0;
}

static uint32_t sq_depth(const struct ne_coll *c)
{
	return 4 * c->W + 8;
}

static uint32_t rq_depth(const struct ne_coll *c)
{
	return 2 * c->W + 4;
}

static int mkqp(struct ne_coll *c, uint32_t rank, uint32_t sqd, uint32_t rqd, uint32_t *qpn)
{
	struct ne_qp_init_attr ia;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = c->r[rank].cq;
	ia.max_send_wr = sqd;
	ia.max_recv_wr = rqd;
	return ne_qp_create(c->r[rank].nic, &ia, qpn);
}

static uint32_t psn_of(uint32_t qpn)
{
	return (qpn * 2654435761u) & NE_PSN_MASK;
}

/* Bring the pair (rank a qpn qa) <-> (rank b qpn qb) to RTS. */
static int connect_pair(struct ne_coll *c, uint32_t a, uint32_t qa, uint32_t b, uint32_t qb,
			uint8_t dscp)
{
	uint32_t rk[2] = {a, b}, q[2] = {qa, qb};

	for (int i = 0; i < 2; i++) {
		struct ne_nic_config peer;
		struct ne_qp_attr at;
		int j = 1 - i, rc;

		ne_nic_get_config(c->r[rk[j]].nic, &peer);
		memset(&at, 0, sizeof(at));
		at.state = NE_QPS_INIT;
		rc = ne_qp_modify(c->r[rk[i]].nic, q[i], &at, NE_QP_STATE);
		if (rc)
			return rc;
		at.state = NE_QPS_RTR;
		at.dest_qpn = q[j];
		at.rq_psn = psn_of(q[j]);
		at.path_mtu = c->cfg.path_mtu;
		at.dest_ipv4 = peer.ipv4;
		memcpy(at.dest_mac, peer.mac, 6);
		at.dscp = dscp;
		at.min_rnr_timer = 1;
		rc = ne_qp_modify(c->r[rk[i]].nic, q[i], &at,
				  NE_QP_STATE | NE_QP_AV | NE_QP_PATH_MTU | NE_QP_DEST_QPN |
					  NE_QP_RQ_PSN | NE_QP_MIN_RNR_TIMER);
		if (rc)
			return rc;
		at.state = NE_QPS_RTS;
		at.sq_psn = psn_of(q[i]);
		at.timeout = c->cfg.timeout;
		at.retry_cnt = c->cfg.retry_cnt;
		at.rnr_retry = 7;
		rc = ne_qp_modify(c->r[rk[i]].nic, q[i], &at,
				  NE_QP_STATE | NE_QP_SQ_PSN | NE_QP_TIMEOUT | NE_QP_RETRY_CNT |
					  NE_QP_RNR_RETRY);
		if (rc)
			return rc;
	}
	return 0;
}

static int post_rwqe(struct ne_coll *c, uint32_t rank, uint32_t qpn, uint64_t wr_id)
{
	struct ne_recv_wr rw;

	memset(&rw, 0, sizeof(rw));
	rw.wr_id = wr_id;
	rw.lkey = c->r[rank].stage_key;
	rw.addr = (uint64_t)(uintptr_t)c->r[rank].stage;
	rw.length = 0;
	return ne_post_recv(c->r[rank].nic, qpn, &rw);
}

static void ready_push(struct ne_coll *c, uint32_t rank)
{
	uint32_t i = c->nready++;

	while (i > 0 && c->ready[(i - 1) / 2] > rank) {
		c->ready[i] = c->ready[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	c->ready[i] = rank;
}

static uint32_t ready_pop(struct ne_coll *c)
{
	uint32_t top = c->ready[0], last = c->ready[--c->nready], i = 0;

	for (;;) {
		uint32_t l = 2 * i + 1, m = l;

		if (l >= c->nready)
			break;
		if (l + 1 < c->nready && c->ready[l + 1] < c->ready[l])
			m = l + 1;
		if (c->ready[m] >= last)
			break;
		c->ready[i] = c->ready[m];
		i = m;
	}
	if (c->nready)
		c->ready[i] = last;
	return top;
}

/* CQ notification: the NIC queued a completion on this rank's CQ. */
static void on_cq_notify(void *ctx, struct ne_cq *cq)
{
	struct rank *r = ctx;

	(void)cq;
	if (!r->cq_ready) {
		r->cq_ready = true;
		ready_push(r->owner, r->idx);
	}
}

static int setup_qps(struct ne_coll *c)
{
	uint32_t sqd = sq_depth(c), rqd = rq_depth(c);

	for (uint32_t i = 0; i < c->n; i++) {
		uint64_t nq = ne_coll_qps_needed(&c->cfg, i);
		uint64_t depth = nq * (sqd + rqd) + 64;

		if (depth > 0x7FFFFFFF)
			return -EINVAL;
		if (c->cfg.sport != NE_COLL_SPORT_NIC) {
			struct ne_nic_config tmp;

			ne_coll_nic_config(&c->cfg, i, 0, &tmp);
			ne_nic_set_sport_policy(c->r[i].nic, tmp.sport_policy, tmp.sport_fixed,
						tmp.sport_seed);
		}
		c->r[i].cq = ne_cq_create(c->r[i].nic, (uint32_t)depth);
		if (!c->r[i].cq)
			return -ENOMEM;
		ne_cq_set_notify(c->r[i].cq, on_cq_notify, &c->r[i]);
	}
	for (uint32_t k = 0; k < c->nconns; k++) {
		struct conn *cn = &c->conns[k];
		int rc;

		for (uint32_t q = 0; q < c->Q; q++) {
			rc = mkqp(c, cn->src, sqd, 1, &cn->sq[q]);
			if (!rc)
				rc = mkqp(c, cn->dst, 1, rqd, &cn->dq[q]);
			if (!rc)
				rc = connect_pair(c, cn->src, cn->sq[q], cn->dst, cn->dq[q], c->cfg.data_dscp);
			for (uint32_t w = 0; w < rqd && !rc; w++)
				rc = post_rwqe(c, cn->dst, cn->dq[q], mkid(K_DATA_RECV, k, 0));
			if (rc)
				return rc;
		}
		rc = mkqp(c, cn->src, 1, rqd, &cn->sctl);
		if (!rc)
			rc = mkqp(c, cn->dst, sqd, 1, &cn->dctl);
		if (!rc)
			rc = connect_pair(c, cn->src, cn->sctl, cn->dst, cn->dctl, c->cfg.ctrl_dscp);
		for (uint32_t w = 0; w < rqd && !rc; w++)
			rc = post_rwqe(c, cn->src, cn->sctl, mkid(K_CTS_RECV, k, 0));
		if (rc)
			return rc;
	}
	return 0;
}

static int setup_groups(struct ne_coll *c)
{
	c->groups = calloc((size_t)c->n * c->C, sizeof(*c->groups));
	if (!c->groups)
		return -ENOMEM;
	for (uint32_t k = 0; k < c->nconns; k++) {
		struct group *g = &c->groups[c->conns[k].group];

		if (g->n == g->cap) {
			uint32_t nc = g->cap ? 2 * g->cap : 4;
			uint32_t *p = realloc(g->conns, nc * sizeof(*p));

			if (!p)
				return -ENOMEM;
			g->conns = p;
			g->cap = nc;
		}
		g->conns[g->n++] = k;
	}
	c->dconn = calloc(c->nconns + 1, sizeof(*c->dconn));
	c->dgrp = calloc((size_t)c->n * c->C + 1, sizeof(*c->dgrp));
	return c->dconn && c->dgrp ? 0 : -ENOMEM;
}

void ne_coll_destroy(struct ne_coll *c)
{
	if (!c)
		return;
	if (c->conns) {
		for (uint32_t k = 0; k < c->nconns; k++) {
			struct conn *cn = &c->conns[k];

			if (c->r) {
				for (uint32_t q = 0; q < c->Q && cn->sq && cn->dq; q++) {
					if (cn->sq[q])
						ne_qp_destroy(c->r[cn->src].nic, cn->sq[q]);
					if (cn->dq[q])
						ne_qp_destroy(c->r[cn->dst].nic, cn->dq[q]);
				}
				if (cn->sctl)
					ne_qp_destroy(c->r[cn->src].nic, cn->sctl);
				if (cn->dctl)
					ne_qp_destroy(c->r[cn->dst].nic, cn->dctl);
			}
			free(cn->x);
			free(cn->flags);
			free(cn->rparts);
			free(cn->sparts);
			free(cn->sq);
			free(cn->dq);
		}
		free(c->conns);
	}
	if (c->groups) {
		for (uint32_t g = 0; g < c->n * c->C; g++)
			free(c->groups[g].conns);
		free(c->groups);
	}
	if (c->r) {
		for (uint32_t i = 0; i < c->n; i++) {
			struct rank *r = &c->r[i];

			if (r->src_reg)
				ne_mr_dereg(r->nic, r->src_key);
			if (r->stage_reg)
				ne_mr_dereg(r->nic, r->stage_key);
			if (r->cq)
				ne_cq_destroy(r->nic, r->cq);
			if (r->src_owned)
				free(r->src);
			free(r->in);
			free(r->work);
			free(r->stage);
		}
		free(c->r);
	}
	free(c->dconn);
	free(c->dgrp);
	free(c->ready);
	free(c->iter_ns);
	free(c);
}

struct ne_coll *ne_coll_create(const struct ne_coll_config *cfg, struct ne_nic *const *nics,
			       int *err)
{
	struct ne_coll *c;
	int rc = ne_coll_config_check(cfg);

	if (!rc && !nics)
		rc = -EINVAL;
	for (uint32_t i = 0; !rc && i < cfg->nranks; i++)
		if (!nics[i])
			rc = -EINVAL;
	if (rc) {
		if (err)
			*err = rc;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		if (err)
			*err = -ENOMEM;
		return NULL;
	}
	c->cfg = *cfg;
	c->n = cfg->nranks;
	c->C = cfg->channels;
	c->Q = cfg->qps_per_conn;
	c->W = cfg->window;
	c->count = cfg->bytes / 4;
	c->pc = cfg->bytes / 4 / cfg->nranks;
	c->iters_total = cfg->warmup_iters + cfg->iters;
	c->iter_ns = calloc(c->iters_total, sizeof(*c->iter_ns));
	c->r = calloc(c->n, sizeof(*c->r));
	c->ready = calloc(c->n, sizeof(*c->ready));
	if (!c->iter_ns || !c->r || !c->ready)
		rc = -ENOMEM;
	for (uint32_t i = 0; !rc && i < c->n; i++) {
		c->r[i].nic = nics[i];
		c->r[i].owner = c;
		c->r[i].idx = i;
	}
	if (!rc)
		rc = build_plan(c);
	if (!rc)
		rc = alloc_buffers(c);
	if (!rc)
		rc = reg_mrs(c);
	if (!rc)
		rc = setup_qps(c);
	if (!rc)
		rc = setup_groups(c);
	if (rc) {
		ne_coll_destroy(c);
		if (err)
			*err = rc;
		return NULL;
	}
	if (err)
		*err = 0;
	return c;
}

/* ------------------------------------------------------------------ */
/* Running */

static void mark_conn(struct ne_coll *c, uint32_t k)
{
	if (!c->conns[k].dirty) {
		c->conns[k].dirty = true;
		c->dconn[c->ndconn++] = k;
	}
}

static void mark_group(struct ne_coll *c, uint32_t g)
{
	if (!c->groups[g].dirty) {
		c->groups[g].dirty = true;
		c->dgrp[c->ndgrp++] = g;
	}
}

static uint32_t nparts(const struct ne_coll *c, uint32_t len)
{
	if (c->cfg.qp_mode == NE_COLL_QP_RR)
		return 1;
	return len < c->Q ? len : c->Q;
}

static void init_data(struct ne_coll *c)
{
	uint32_t n = c->n;

	if (!c->cfg.data)
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct rank *r = &c->r[i];

		switch (c->cfg.op) {
		case NE_COLL_ALLREDUCE:
		case NE_COLL_REDUCESCATTER:
			memcpy(r->work, r->in, r->nin * sizeof(float));
			break;
		case NE_COLL_ALLGATHER:
			memset(r->work, 0, r->nwork * sizeof(float));
			memcpy(r->work + (size_t)i * c->pc, r->in, c->pc * sizeof(float));
			break;
		case NE_COLL_ALLTOALL:
			memset(r->work, 0, r->nwork * sizeof(float));
			memcpy(r->work + (size_t)i * c->pc, r->in + (size_t)i * c->pc,
			       c->pc * sizeof(float));
			break;
		case NE_COLL_INCAST:
			if (r->work)
				memset(r->work, 0, r->nwork * sizeof(float));
			break;
		}
	}
}

static void begin_iter(struct ne_coll *c, uint64_t now)
{
	for (uint32_t k = 0; k < c->nconns; k++) {
		struct conn *cn = &c->conns[k];

		memset(cn->flags, 0, cn->nx);
		memset(cn->rparts, 0, cn->nx);
		memset(cn->sparts, 0, cn->nx);
		cn->snd_next = cn->snd_part = 0;
		cn->rcv_grant = 0;
		mark_conn(c, k);
	}
	for (uint32_t g = 0; g < c->n * c->C; g++) {
		c->groups[g].used = 0;
		mark_group(c, g);
	}
	for (uint32_t i = 0; i < c->n; i++)
		c->r[i].granted_bytes = 0;
	c->recv_done = c->send_done = 0;
	init_data(c);
	c->iter_start = now;
	c->running = true;
}

int ne_coll_start(struct ne_coll *c, uint64_t now_ns)
{
	if (!c)
		return -EINVAL;
	if (c->running)
		return -EBUSY;
	if (c->failed)
		return -EIO;
	c->iters_done = 0;
	c->done = false;
	memset(c->iter_ns, 0, c->iters_total * sizeof(*c->iter_ns));
	begin_iter(c, now_ns);
	return 0;
}

/* Post the remaining parts of transfer s of connection k. */
static int post_parts(struct ne_coll *c, uint32_t k, uint32_t s, uint64_t now)
{
	struct conn *cn = &c->conns[k];
	const struct xfer *x = &cn->x[s];
	struct rank *rs = &c->r[cn->src], *rd = &c->r[cn->dst];
	uint64_t src = (uint64_t)(uintptr_t)rs->src + (c->cfg.data ? x->src_off : 0);
	uint64_t dst = (uint64_t)(uintptr_t)rd->stage + cn->stage_off +
		       (uint64_t)(s % c->W) * c->cfg.chunk_bytes;
	struct ne_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = NE_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = NE_SEND_SIGNALED;
	wr.lkey = rs->src_key;
	wr.rkey = rd->stage_key;
	wr.imm_data = s;
	wr.wr_id = mkid(K_DATA_SEND, k, s);
	if (c->cfg.qp_mode == NE_COLL_QP_RR) {
		int rc;

		wr.local_addr = src;
		wr.remote_addr = dst;
		wr.length = x->len;
		rc = ne_post_send(rs->nic, cn->sq[cn->rr_next % c->Q], &wr, now);
		if (rc)
			return rc;
		cn->rr_next++;
		c->st.data_wrs++;
		c->st.data_bytes += x->len;
		return 0;
	}
	for (uint32_t q = cn->snd_part; q < c->Q; q++) {
		uint64_t lo = part_lo(x->len, c->Q, q), hi = part_lo(x->len, c->Q, q + 1);
		int rc;

		if (hi == lo)
			continue;
		wr.local_addr = src + lo;
		wr.remote_addr = dst + lo;
		wr.length = (uint32_t)(hi - lo);
		rc = ne_post_send(rs->nic, cn->sq[q], &wr, now);
		if (rc) {
			cn->snd_part = q;
			return rc;
		}
		c->st.data_wrs++;
		c->st.data_bytes += hi - lo;
	}
	cn->snd_part = 0;
	return 0;
}

static void sender_step(struct ne_coll *c, uint32_t k, uint64_t now)
{
	struct conn *cn = &c->conns[k];

	while (cn->snd_next < cn->nx) {
		uint32_t s = cn->snd_next;
		const struct xfer *x = &cn->x[s];
		int rc;

		if (c->cfg.cts) {
			if (!(cn->flags[s] & F_CTS_RCVD))
				return;
		} else if (s >= c->W && !(cn->flags[s - c->W] & F_SEND_DONE)) {
			return;
		}
		if (x->dep_conn >= 0 && !(c->conns[x->dep_conn].flags[x->dep_seq] & F_RECV_DONE))
			return;
		rc = post_parts(c, k, s, now);
		if (rc) {
			c->st.post_busy++;
			return;
		}
		cn->snd_next++;
	}
}

static void grant_step(struct ne_coll *c, uint32_t gi, uint64_t now)
{
	struct group *g = &c->groups[gi];

	if (!c->cfg.cts)
		return;
	while (g->used < c->W) {
		bool found = false;

		for (uint32_t i = 0; i < g->n && !found; i++) {
			uint32_t pos = (g->rr + i) % g->n, k = g->conns[pos];
			struct conn *cn = &c->conns[k];
			uint32_t s = cn->rcv_grant;
			struct rank *rd = &c->r[cn->dst];
			struct ne_send_wr wr;

			if (s >= cn->nx)
				continue;
			if (s >= c->W && !(cn->flags[s - c->W] & F_RECV_DONE))
				continue;
			memset(&wr, 0, sizeof(wr));
			wr.opcode = NE_WR_SEND_WITH_IMM;
			wr.send_flags = NE_SEND_SIGNALED;
			wr.imm_data = s;
			wr.wr_id = mkid(K_CTS_SEND, k, s);
			if (ne_post_send(rd->nic, cn->dctl, &wr, now)) {
				c->st.post_busy++;
				return;
			}
			c->st.cts_sent++;
			cn->rcv_grant++;
			c->ctl_out++;
			g->used++;
			rd->granted_bytes += cn->x[s].len;
			if (rd->granted_bytes > c->st.max_granted_bytes)
				c->st.max_granted_bytes = rd->granted_bytes;
			g->rr = (pos + 1) % g->n;
			found = true;
		}
		if (!found)
			return;
	}
}

static void consume(struct ne_coll *c, uint32_t k, uint32_t s)
{
	struct conn *cn = &c->conns[k];
	const struct xfer *x = &cn->x[s];
	struct rank *rd = &c->r[cn->dst];

	if (c->cfg.data) {
		const uint8_t *slot = rd->stage + cn->stage_off + (size_t)(s % c->W) * c->cfg.chunk_bytes;
		uint8_t *dst = (uint8_t *)rd->work + x->dst_off;

		if (x->kind == X_REDUCE) {
			float *d = (float *)(void *)dst;
			uint32_t nf = x->len / 4;

			for (uint32_t e = 0; e < nf; e++) {
				float v;

				memcpy(&v, slot + 4 * e, 4);
				d[e] += v;
			}
		} else {
			memcpy(dst, slot, x->len);
		}
	}
	cn->flags[s] |= F_RECV_DONE;
	c->recv_done++;
	c->st.transfers_done++;
	if (c->cfg.cts) {
		c->groups[cn->group].used--;
		rd->granted_bytes -= x->len;
	}
	mark_group(c, cn->group);
	if (cn->down >= 0)
		mark_conn(c, (uint32_t)cn->down);
}

static void handle_wc(struct ne_coll *c, uint32_t rank, const struct ne_wc *wc)
{
	uint32_t kind = (uint32_t)(wc->wr_id >> 62);
	uint32_t k = (uint32_t)(wc->wr_id >> 32) & 0x3FFFFFFFu;
	uint32_t s;
	struct conn *cn;

	if (wc->status != NE_WC_SUCCESS) {
		if (!c->st.errors)
			c->st.first_error_status = wc->status;
		c->st.errors++;
		c->failed = true;
		return;
	}
	if (k >= c->nconns)
		return;
	cn = &c->conns[k];
	switch (kind) {
	case K_DATA_SEND:
		s = (uint32_t)wc->wr_id;
		if (s >= cn->nx)
			return;
		if (++cn->sparts[s] == nparts(c, cn->x[s].len)) {
			cn->flags[s] |= F_SEND_DONE;
			c->send_done++;
		}
		mark_conn(c, k);
		break;
	case K_CTS_SEND:
		c->ctl_out--;
		mark_group(c, cn->group);
		break;
	case K_DATA_RECV:
		if (post_rwqe(c, rank, wc->qpn, wc->wr_id))
			c->st.post_busy++;
		s = wc->imm_data;
		if (s >= cn->nx || (cn->flags[s] & F_RECV_DONE))
			return;
		if (++cn->rparts[s] == nparts(c, cn->x[s].len))
			consume(c, k, s);
		break;
	case K_CTS_RECV:
		if (post_rwqe(c, rank, wc->qpn, wc->wr_id))
			c->st.post_busy++;
		s = wc->imm_data;
		if (s < cn->nx)
			cn->flags[s] |= F_CTS_RCVD;
		mark_conn(c, k);
		break;
	}
}

static void run_dirty(struct ne_coll *c, uint64_t now)
{
	while (c->ndgrp || c->ndconn) {
		while (c->ndgrp) {
			uint32_t g = c->dgrp[--c->ndgrp];

			c->groups[g].dirty = false;
			c->st.group_steps++;
			grant_step(c, g, now);
		}
		while (c->ndconn) {
			uint32_t k = c->dconn[--c->ndconn];

			c->conns[k].dirty = false;
			c->st.conn_steps++;
			sender_step(c, k, now);
		}
	}
}

int ne_coll_poll(struct ne_coll *c, uint64_t now_ns)
{
	struct ne_wc wc[64];
	int handled = 0;

	if (!c)
		return -EINVAL;
	while (c->nready) {
		uint32_t i = ready_pop(c);
		int got;

		c->r[i].cq_ready = false;
		c->st.rank_visits++;
		do {
			got = ne_cq_poll(c->r[i].cq, wc, 64);
			c->st.cq_polls++;
			for (int j = 0; j < got; j++)
				handle_wc(c, i, &wc[j]);
			handled += got;
		} while (got > 0);
	}
	if (c->failed)
		return -EIO;
	if (!c->running)
		return handled;
	run_dirty(c, now_ns);
	while (c->running && c->recv_done == c->total_x && c->send_done == c->total_x &&
	       c->ctl_out == 0) {
		c->iter_ns[c->iters_done++] = now_ns - c->iter_start;
		c->running = false;
		if (c->iters_done < c->iters_total) {
			begin_iter(c, now_ns);
			run_dirty(c, now_ns);
		} else {
			c->done = true;
		}
	}
	return handled;
}

uint64_t ne_coll_next_event_ns(const struct ne_coll *c)
{
	if (!c)
		return UINT64_MAX;
	if (c->ndconn || c->ndgrp || c->nready)
		return 0;
	return UINT64_MAX;
}

bool ne_coll_done(const struct ne_coll *c)
{
	return c && c->done;
}

uint32_t ne_coll_iters_done(const struct ne_coll *c)
{
	return c ? c->iters_done : 0;
}

uint64_t ne_coll_iter_time_ns(const struct ne_coll *c, uint32_t i)
{
	return c && i < c->iters_done ? c->iter_ns[i] : 0;
}

/* ------------------------------------------------------------------ */
/* Results */

double ne_coll_busbw_factor(enum ne_coll_op op, uint32_t n)
{
	if (n == 0)
		return 0;
	switch (op) {
	case NE_COLL_ALLREDUCE:
		return 2.0 * (n - 1) / n;
	case NE_COLL_ALLGATHER:
	case NE_COLL_REDUCESCATTER:
	case NE_COLL_ALLTOALL:
		return (double)(n - 1) / n;
	case NE_COLL_INCAST:
		return (double)(n - 1);
	}
	return 0;
}

void ne_coll_result_compute(struct ne_coll_result *r)
{
	r->time_us = (double)r->time_ns / 1000.0;
	r->algbw = r->time_ns ? (double)r->size / (double)r->time_ns : 0.0; /* B/ns = GB/s */
	r->busbw = r->algbw * ne_coll_busbw_factor(r->op, r->nranks);
}

int ne_coll_get_result(const struct ne_coll *c, struct ne_coll_result *r)
{
	uint64_t sum = 0, mn = UINT64_MAX, mx = 0;
	uint32_t cnt = 0;

	if (!c || !r)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	for (uint32_t i = c->cfg.warmup_iters; i < c->iters_done; i++) {
		sum += c->iter_ns[i];
		mn = c->iter_ns[i] < mn ? c->iter_ns[i] : mn;
		mx = c->iter_ns[i] > mx ? c->iter_ns[i] : mx;
		cnt++;
	}
	r->op = c->cfg.op;
	r->nranks = c->n;
	r->type = "float";
	r->redop = (c->cfg.op == NE_COLL_ALLREDUCE || c->cfg.op == NE_COLL_REDUCESCATTER) ? "sum"
											   : "none";
	r->root = c->cfg.op == NE_COLL_INCAST ? (int)c->cfg.root : -1;
	if (c->cfg.op == NE_COLL_ALLREDUCE || c->cfg.op == NE_COLL_INCAST) {
		r->count = c->count;
		r->size = c->count * 4;
	} else {
		r->count = c->pc;
		r->size = c->pc * c->n * 4;
	}
	r->wrong = -1;
	if (!cnt)
		return -EAGAIN;
	r->iters = cnt;
	r->time_ns = (sum + cnt / 2) / cnt;
	r->min_time_ns = mn;
	r->max_time_ns = mx;
	ne_coll_result_compute(r);
	return 0;
}

void ne_coll_get_stats(const struct ne_coll *c, struct ne_coll_stats *out)
{
	*out = c->st;
}

float *ne_coll_input(struct ne_coll *c, uint32_t rank, size_t *nfloats)
{
	if (!c || rank >= c->n || !c->r[rank].in) {
		if (nfloats)
			*nfloats = 0;
		return NULL;
	}
	if (nfloats)
		*nfloats = c->r[rank].nin;
	return c->r[rank].in;
}

const float *ne_coll_output(const struct ne_coll *c, uint32_t rank, size_t *nfloats)
{
	const struct rank *r;

	if (!c || rank >= c->n || !c->r[rank].work) {
		if (nfloats)
			*nfloats = 0;
		return NULL;
	}
	r = &c->r[rank];
	if (c->cfg.op == NE_COLL_REDUCESCATTER) {
		if (nfloats)
			*nfloats = c->pc;
		return r->work + (size_t)rank * c->pc;
	}
	if (nfloats)
		*nfloats = r->nwork;
	return r->work;
}

static bool close_enough(float got, double want)
{
	double d = fabs((double)got - want);

	return d <= 1e-5 * (fabs(want) > 1.0 ? fabs(want) : 1.0);
}

long ne_coll_check(const struct ne_coll *c)
{
	uint32_t n;
	long wrong = 0;

	if (!c || !c->cfg.data)
		return -EINVAL;
	n = c->n;
	for (uint32_t i = 0; i < n; i++) {
		const struct rank *r = &c->r[i];

		switch (c->cfg.op) {
		case NE_COLL_ALLREDUCE:
			for (uint64_t e = 0; e < c->count; e++) {
				double want = 0;

				for (uint32_t s = 0; s < n; s++)
					want += c->r[s].in[e];
				wrong += !close_enough(r->work[e], want);
			}
			break;
		case NE_COLL_ALLGATHER:
			for (uint32_t s = 0; s < n; s++)
				for (uint64_t e = 0; e < c->pc; e++)
					wrong += !close_enough(r->work[s * c->pc + e], c->r[s].in[e]);
			break;
		case NE_COLL_REDUCESCATTER:
			for (uint64_t e = 0; e < c->pc; e++) {
				double want = 0;

				for (uint32_t s = 0; s < n; s++)
					want += c->r[s].in[i * c->pc + e];
				wrong += !close_enough(r->work[i * c->pc + e], want);
			}
			break;
		case NE_COLL_ALLTOALL:
			for (uint32_t s = 0; s < n; s++)
				for (uint64_t e = 0; e < c->pc; e++)
					wrong += !close_enough(r->work[s * c->pc + e],
							       c->r[s].in[i * c->pc + e]);
			break;
		case NE_COLL_INCAST:
			if (i != c->cfg.root)
				break;
			for (uint32_t s = 0; s < n; s++)
				for (uint64_t e = 0; e < c->count; e++)
					wrong += !close_enough(r->work[s * c->count + e],
							       s == i ? 0.0 : c->r[s].in[e]);
			break;
		}
	}
	return wrong;
}

uint32_t ne_coll_num_conns(const struct ne_coll *c)
{
	return c ? c->nconns : 0;
}

int ne_coll_conn_info(const struct ne_coll *c, uint32_t idx, struct ne_coll_conn_info *out)
{
	const struct conn *cn;

	if (!c || !out || idx >= c->nconns)
		return -EINVAL;
	cn = &c->conns[idx];
	out->src = cn->src;
	out->dst = cn->dst;
	out->channel = cn->ch;
	out->nqps = c->Q;
	out->src_data_qpn = cn->sq;
	out->dst_data_qpn = cn->dq;
	out->src_ctrl_qpn = cn->sctl;
	out->dst_ctrl_qpn = cn->dctl;
	out->ntransfers = cn->nx;
	out->bytes = cn->bytes;
	return 0;
}

const char *ne_coll_op_name(enum ne_coll_op op)
{
	switch (op) {
	case NE_COLL_ALLREDUCE: return "allreduce";
	case NE_COLL_ALLGATHER: return "allgather";
	case NE_COLL_REDUCESCATTER: return "reducescatter";
	case NE_COLL_ALLTOALL: return "alltoall";
	case NE_COLL_INCAST: return "incast";
	}
	return "?";
}

const char *ne_coll_qp_mode_name(enum ne_coll_qp_mode mode)
{
	return mode == NE_COLL_QP_RR ? "rr" : "split";
}

int ne_coll_format_header(char *buf, size_t cap)
{
	return snprintf(buf, cap, "%s\n%s\n",
			"#       size         count      type   redop    root     time   algbw   busbw  #wrong",
			"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)        ");
}

int ne_coll_format_result(const struct ne_coll_result *r, char *buf, size_t cap)
{
	char t[32], w[24];

	if (r->time_us >= 10000.0)
		snprintf(t, sizeof(t), "%7.0f", r->time_us);
	else if (r->time_us >= 100.0)
		snprintf(t, sizeof(t), "%7.1f", r->time_us);
	else
		snprintf(t, sizeof(t), "%7.2f", r->time_us);
	if (r->wrong < 0)
		snprintf(w, sizeof(w), "%6s", "N/A");
	else
		snprintf(w, sizeof(w), "%6ld", r->wrong);
	return snprintf(buf, cap, "%12llu  %12llu  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %6s\n",
			(unsigned long long)r->size, (unsigned long long)r->count,
			r->type ? r->type : "float", r->redop ? r->redop : "none", r->root, t,
			r->algbw, r->busbw, w);
}
