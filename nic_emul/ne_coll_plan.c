/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll schedule: the connections of an operation and, on each, the
 * ordered chunk transfers (offsets, lengths, reduce or copy, dependencies).
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Plan */

void ne_coll_xfer_init(struct coll_xfer *x)
{
	memset(x, 0, sizeof(*x));
	for (uint32_t d = 0; d < COLL_MAX_DEPS; d++)
		x->dep_conn[d] = -1;
}

void ne_coll_plan_link(struct ne_coll *c, uint32_t from, uint32_t to)
{
	int32_t *ds = c->conns[from].downstream;

	for (uint32_t d = 0; d < COLL_MAX_DEPS; d++) {
		if (ds[d] == (int32_t)to)
			return;
		if (ds[d] < 0) {
			ds[d] = (int32_t)to;
			return;
		}
	}
}

/* Connection k is counts only here: neither of its ranks runs here (cfg.here_lane_of). */
static void conn_mark_away(const struct ne_coll *c, struct coll_conn *k)
{
	k->away = !coll_here(c, k->src) && !coll_here(c, k->dst);
}

int ne_coll_plan_add_xfer(struct coll_conn *k, const struct coll_xfer *x)
{
	if (x->len > k->max_len)
		k->max_len = x->len;
	if (k->away) {
		k->nxfers++;
		k->bytes += x->len;
		return 0;
	}
	if (k->nxfers == k->xfers_cap) {
		uint32_t nc = k->xfers_cap ? 2 * k->xfers_cap : 16;
		struct coll_xfer *p = realloc(k->xfers, nc * sizeof(*p));

		if (!p)
			return -ENOMEM;
		k->xfers = p;
		k->xfers_cap = nc;
	}
	k->xfers[k->nxfers++] = *x;
	k->bytes += x->len;
	return 0;
}

static uint32_t ring_conn(const struct ne_coll *c, uint32_t sender, uint32_t ch)
{
	return ch * c->nranks + sender;
}

/* Where the ring's segments lie: rocelab model (and nccl AllGather /
 * ReduceScatter): segment j of a channel is elements [lo[j], lo[j] + len[j])
 * cut in chunks of chunk_el; nccl AllReduce: NCCL's loop, chunks from
 * ne_coll_nccl_chunk_elems(). */
struct ring_layout {
	uint64_t *lo, *len; /* per segment j, for the current channel */
	uint64_t chunk_el;  /* chunk cap, elements */
	uint64_t rounds;    /* chunk rounds of the current channel */
	bool nccl_loop;     /* NCCL's AllReduce loop instead of lo/len */
	bool slices;        /* cut each chunk into NCCL's slices */
};

static bool nccl_model(const struct ne_coll *c)
{
	return c->cfg.model == NE_COLL_MODEL_NCCL;
}

static void layout_channel(const struct ne_coll *c, struct ring_layout *lay, uint32_t ch)
{
	uint32_t n = c->nranks, nch = c->nchannels;

	lay->rounds = 0;
	if (lay->nccl_loop) {
		uint64_t loop = (uint64_t)nch * n * lay->chunk_el;

		lay->rounds = (c->rank_elems + loop - 1) / loop;
		return;
	}
	for (uint32_t j = 0; j < n; j++) {
		uint64_t ce = lay->chunk_el;

		if (c->cfg.op == NE_COLL_ALLREDUCE) {
			uint64_t a = part_start(c->rank_elems, nch, ch);
			uint64_t b = part_start(c->rank_elems, nch, ch + 1);

			lay->lo[j] = a + part_start(b - a, n, j);
			lay->len[j] = a + part_start(b - a, n, j + 1) - lay->lo[j];
		} else {
			uint64_t a = part_start(c->block_elems, nch, ch);

			/* the block of the rank at position j of the channel's
			 * ring: where an AllGather segment starts, where a
			 * ReduceScatter one ends */
			lay->lo[j] = coll_ring_rank(c, ch, j) * c->block_elems + a;
			lay->len[j] = part_start(c->block_elems, nch, ch + 1) - a;
		}
		if ((lay->len[j] + ce - 1) / ce > lay->rounds)
			lay->rounds = (lay->len[j] + ce - 1) / ce;
	}
}

/* The messages of segment j of channel ch in chunk round r: up to two
 * (start, length) pairs in elements. Returns how many. */
static uint32_t ring_pieces(const struct ne_coll *c, const struct ring_layout *lay, uint32_t ch,
			    uint64_t r, uint32_t j, uint64_t start[2], uint64_t len[2])
{
	uint64_t off, nelem, slice[2];
	uint32_t ns;

	if (lay->nccl_loop) {
		uint64_t grid = r * c->nchannels * c->nranks * lay->chunk_el;
		uint64_t real = ne_coll_nccl_chunk_elems(c->rank_elems, grid, c->nchannels, c->nranks,
							 lay->chunk_el);

		off = grid + ((uint64_t)ch * c->nranks + j) * real;
		if (off >= c->rank_elems)
			return 0;
		nelem = c->rank_elems - off < real ? c->rank_elems - off : real;
	} else {
		if (r * lay->chunk_el >= lay->len[j])
			return 0;
		off = lay->lo[j] + r * lay->chunk_el;
		nelem = lay->len[j] - r * lay->chunk_el;
		if (nelem > lay->chunk_el)
			nelem = lay->chunk_el;
	}
	if (!lay->slices) {
		start[0] = off;
		len[0] = nelem;
		return 1;
	}
	ns = ne_coll_nccl_slices(nelem, c->cfg.nccl_buffsize, sizeof(float), slice);
	for (uint32_t i = 0; i < ns; i++) {
		start[i] = off;
		len[i] = slice[i];
		off += slice[i];
	}
	return ns;
}

/* Ring chains: segment j of channel ch (same offsets at every rank) starts
 * at position (j + start) of the channel's ring (coll_ring_rank) and makes
 * `hops` hops; hop h reduces when h < nreduce, else copies. Each message
 * depends on the same message's previous hop. */
static int build_ring(struct ne_coll *c, uint32_t start, uint32_t hops, uint32_t nreduce)
{
	uint32_t n = c->nranks;
	struct ring_layout lay;
	/* last connection and seq that carried each (segment, slice) */
	int32_t *lconn = calloc(2 * (size_t)n, sizeof(*lconn));
	uint32_t *lseq = calloc(2 * (size_t)n, sizeof(*lseq));
	int rc = 0;

	memset(&lay, 0, sizeof(lay));
	lay.lo = calloc(n, sizeof(*lay.lo));
	lay.len = calloc(n, sizeof(*lay.len));
	lay.chunk_el = c->cfg.chunk_bytes / sizeof(float);
	if (nccl_model(c)) {
		lay.chunk_el = ne_coll_proto_chunk_elems(c);
		lay.nccl_loop = c->cfg.op == NE_COLL_ALLREDUCE;
		lay.slices = c->proto == NC_PROTO_SIMPLE; /* (LL, LL128: a step a chunk) */
	}
	if (!lay.lo || !lay.len || !lconn || !lseq) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t ch = 0; ch < c->nchannels && !rc; ch++) {
		layout_channel(c, &lay, ch);
		for (uint64_t ci = 0; ci < lay.rounds && !rc; ci++)
			for (uint32_t h = 0; h < hops && !rc; h++)
				for (uint32_t s = 0; s < n && !rc; s++) {
					uint32_t pos = coll_ring_pos(c, ch, s);
					uint32_t j = (uint32_t)((pos + 2ull * n - start - h % n) % n);
					uint32_t k = ring_conn(c, s, ch);
					uint64_t pst[2], plen[2];
					uint32_t np = ring_pieces(c, &lay, ch, ci, j, pst, plen);

					for (uint32_t p = 0; p < np && !rc; p++) {
						uint32_t m = 2 * j + p;
						struct coll_xfer x;

						ne_coll_xfer_init(&x);
						x.src_off = x.dst_off = pst[p] * sizeof(float);
						x.len = (uint32_t)(plen[p] * sizeof(float));
						x.kind = h < nreduce ? XFER_REDUCE : XFER_COPY;
						x.dep_conn[0] = h ? lconn[m] : -1;
						x.dep_seq[0] = h ? lseq[m] : 0;
						if (h)
							ne_coll_plan_link(c, (uint32_t)lconn[m], k);
						rc = ne_coll_plan_add_xfer(&c->conns[k], &x);
						lconn[m] = (int32_t)k;
						lseq[m] = c->conns[k].nxfers - 1;
					}
				}
	}
out:
	free(lay.lo);
	free(lay.len);
	free(lconn);
	free(lseq);
	return rc;
}

int ne_coll_plan_block(struct ne_coll *c, uint32_t first_conn_of_ch0, uint32_t conns_per_ch,
		       uint64_t src_el, uint64_t dst_el, uint64_t nel)
{
	uint64_t ce = (nccl_model(c) ? c->cfg.nccl_p2p_chunk : c->cfg.chunk_bytes) / sizeof(float);

	for (uint32_t ch = 0; ch < c->nchannels; ch++) {
		uint64_t a = part_start(nel, c->nchannels, ch), b = part_start(nel, c->nchannels, ch + 1);
		struct coll_conn *k = &c->conns[ch * conns_per_ch + first_conn_of_ch0];

		conn_mark_away(c, k);
		for (uint64_t o = a; o < b; o += ce) {
			struct coll_xfer x;
			int rc;

			ne_coll_xfer_init(&x);
			x.src_off = (src_el + o) * 4;
			x.dst_off = (dst_el + o) * 4;
			x.len = (uint32_t)((b - o < ce ? b - o : ce) * 4);
			x.kind = XFER_COPY;
			rc = ne_coll_plan_add_xfer(k, &x);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Limits of the bookkeeping: WQEs per message fit the per-seq counters;
 * CTRAN's seq shares its wr_id field with the QP index. */
static int check_counts(const struct ne_coll *c)
{
	if (ne_coll_msg_wqes(c, c->slot_bytes) > UINT16_MAX)
		return -EINVAL;
	for (uint32_t k = 0; c->cfg.qp_mode == NE_COLL_QP_CTRAN && k < c->nconns; k++)
		if (c->conns[k].nxfers > COLL_MAX_SEQ_CTRAN)
			return -EINVAL;
	return 0;
}

/* Each connection's per-transfer and per-QP state (an away one's per-QP
 * only); total_xfers and the largest message counted. 0 or -ENOMEM. */
static int conns_alloc(struct ne_coll *c)
{
	for (uint32_t i = 0; i < c->nconns; i++) {
		struct coll_conn *k = &c->conns[i];

		c->total_xfers += k->nxfers;
		if (coll_wire_len(c, k->max_len) > c->slot_bytes)
			c->slot_bytes = coll_wire_len(c, k->max_len);
		k->qp_outstanding = calloc(c->nqps, sizeof(*k->qp_outstanding));
		k->sq_wqes = calloc(c->nqps, sizeof(*k->sq_wqes));
		k->src_qpn = calloc(c->nqps, sizeof(*k->src_qpn));
		k->dst_qpn = calloc(c->nqps, sizeof(*k->dst_qpn));
		if (!k->src_qpn || !k->dst_qpn || !k->qp_outstanding || !k->sq_wqes)
			return -ENOMEM;
		if (k->away)
			continue;
		k->flags = calloc(k->nxfers + 1, 1);
		k->rflags = calloc(k->nxfers + 1, 1);
		k->recv_parts = calloc(k->nxfers + 1, sizeof(*k->recv_parts));
		k->send_parts = calloc(k->nxfers + 1, sizeof(*k->send_parts));
		if (!k->flags || !k->rflags || !k->recv_parts || !k->send_parts)
			return -ENOMEM;
	}
	return 0;
}

int ne_coll_plan_build(struct ne_coll *c)
{
	uint32_t n = c->nranks, nch = c->nchannels, i = 0;
	int rc = 0;

	if (c->cfg.op == NE_COLL_ALLREDUCE && c->cfg.algo == NE_COLL_ALGO_TREE) {
		rc = ne_coll_plan_tree(c);
		goto planned;
	}
	if (c->cfg.op == NE_COLL_SENDRECV) {
		rc = ne_coll_plan_p2p(c);
		goto planned;
	}
	switch (c->cfg.op) {
	case NE_COLL_ALLTOALL:
		c->nconns = nch * n * (n - 1);
		break;
	case NE_COLL_INCAST:
		c->nconns = nch * (n - 1);
		break;
	default:
		c->nconns = nch * n;
		break;
	}
	c->conns = calloc(c->nconns, sizeof(*c->conns));
	if (!c->conns)
		return -ENOMEM;
	for (uint32_t ch = 0; ch < nch; ch++)
		for (uint32_t s = 0; s < n; s++)
			for (uint32_t d = 0; d < n; d++) {
				bool want;

				if (c->cfg.op == NE_COLL_ALLTOALL)
					want = s != d;
				else if (c->cfg.op == NE_COLL_INCAST)
					want = d == c->cfg.root && s != d;
				else /* the next rank of the channel's ring */
					want = d == coll_ring_rank(c, ch, (coll_ring_pos(c, ch, s) + 1) % n);
				if (!want)
					continue;
				c->conns[i].src = s;
				c->conns[i].dst = d;
				c->conns[i].channel = ch;
				conn_mark_away(c, &c->conns[i]);
				for (uint32_t j = 0; j < COLL_MAX_DEPS; j++)
					c->conns[i].downstream[j] = -1;
				/* rocelab: one CTS budget per receiver and channel;
				 * nccl: per connection (its own FIFO, 4 slots) */
				c->conns[i].group = nccl_model(c) ? i : d * nch + ch;
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

			rc = ne_coll_plan_block(c, k, n * (n - 1), (uint64_t)d * c->block_elems, (uint64_t)s * c->block_elems, c->block_elems);
		}
		break;
	case NE_COLL_INCAST:
		for (uint32_t k = 0; k < n - 1 && !rc; k++)
			rc = ne_coll_plan_block(c, k, n - 1, 0, (uint64_t)c->conns[k].src * c->rank_elems, c->rank_elems);
		break;
	case NE_COLL_BROADCAST:
	case NE_COLL_REDUCE:
		rc = ne_coll_plan_root(c);
		break;
	case NE_COLL_SENDRECV: /* (planned above) */
		break;
	}
planned:
	if (rc)
		return rc;
	rc = conns_alloc(c);
	if (rc)
		return rc;
	/* staging slot: a chunk (rocelab, as before), the largest message (nccl) */
	if (!nccl_model(c))
		c->slot_bytes = c->cfg.chunk_bytes;
	else
		c->slot_bytes = (c->slot_bytes + NE_COLL_NCCL_ALIGN - 1) / NE_COLL_NCCL_ALIGN *
				NE_COLL_NCCL_ALIGN;
	return check_counts(c);
}
