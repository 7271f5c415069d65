/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll schedule: the connections of an operation and, on each, the
 * ordered chunk transfers (offsets, lengths, reduce or copy, dependencies).
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* Plan */

static int conn_add_xfer(struct coll_conn *k, const struct coll_xfer *x)
{
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

/* Ring chains: segment j of channel ch is elements [lo, lo + len) (same
 * offsets at every rank); its chain starts at rank (j + start) and makes `hops`
 * hops; hop h reduces when h < nreduce, else copies. */
static int build_ring(struct ne_coll *c, uint32_t start, uint32_t hops, uint32_t nreduce)
{
	uint32_t n = c->nranks;
	uint64_t ce = c->cfg.chunk_bytes / 4;
	uint64_t *lo = calloc(n, sizeof(*lo)), *len = calloc(n, sizeof(*len));
	int32_t *lconn = calloc(n, sizeof(*lconn));
	uint32_t *lseq = calloc(n, sizeof(*lseq));
	int rc = 0;

	if (!lo || !len || !lconn || !lseq) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t ch = 0; ch < c->nchannels && !rc; ch++) {
		uint64_t maxc = 0;

		for (uint32_t j = 0; j < n; j++) {
			if (c->cfg.op == NE_COLL_ALLREDUCE) {
				uint64_t a = part_start(c->rank_elems, c->nchannels, ch), b = part_start(c->rank_elems, c->nchannels, ch + 1);

				lo[j] = a + part_start(b - a, n, j);
				len[j] = a + part_start(b - a, n, j + 1) - lo[j];
			} else {
				lo[j] = j * c->block_elems + part_start(c->block_elems, c->nchannels, ch);
				len[j] = part_start(c->block_elems, c->nchannels, ch + 1) - part_start(c->block_elems, c->nchannels, ch);
			}
			if ((len[j] + ce - 1) / ce > maxc)
				maxc = (len[j] + ce - 1) / ce;
		}
		for (uint64_t ci = 0; ci < maxc && !rc; ci++)
			for (uint32_t h = 0; h < hops && !rc; h++)
				for (uint32_t s = 0; s < n && !rc; s++) {
					uint32_t j = (uint32_t)((s + 2ull * n - start - h % n) % n);
					uint32_t k = ring_conn(c, s, ch);
					struct coll_xfer x;

					if (ci * ce >= len[j])
						continue;
					x.src_off = x.dst_off = (lo[j] + ci * ce) * 4;
					x.len = (uint32_t)((len[j] - ci * ce < ce ? len[j] - ci * ce : ce) * 4);
					x.kind = h < nreduce ? XFER_REDUCE : XFER_COPY;
					x.dep_conn = h ? lconn[j] : -1;
					x.dep_seq = h ? lseq[j] : 0;
					if (h)
						c->conns[lconn[j]].downstream = (int32_t)k;
					rc = conn_add_xfer(&c->conns[k], &x);
					lconn[j] = (int32_t)k;
					lseq[j] = c->conns[k].nxfers - 1;
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

	for (uint32_t ch = 0; ch < c->nchannels; ch++) {
		uint64_t a = part_start(nel, c->nchannels, ch), b = part_start(nel, c->nchannels, ch + 1);
		struct coll_conn *k = &c->conns[ch * conns_per_ch + first_conn_of_ch0];

		for (uint64_t o = a; o < b; o += ce) {
			struct coll_xfer x;
			int rc;

			x.src_off = (src_el + o) * 4;
			x.dst_off = (dst_el + o) * 4;
			x.len = (uint32_t)((b - o < ce ? b - o : ce) * 4);
			x.kind = XFER_COPY;
			x.dep_conn = -1;
			x.dep_seq = 0;
			rc = conn_add_xfer(k, &x);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int ne_coll_plan_build(struct ne_coll *c)
{
	uint32_t n = c->nranks, nch = c->nchannels, i = 0;
	int rc = 0;

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
				else
					want = d == (s + 1) % n;
				if (!want)
					continue;
				c->conns[i].src = s;
				c->conns[i].dst = d;
				c->conns[i].channel = ch;
				c->conns[i].downstream = -1;
				c->conns[i].group = d * nch + ch;
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

			rc = build_block(c, k, n * (n - 1), (uint64_t)d * c->block_elems, (uint64_t)s * c->block_elems, c->block_elems);
		}
		break;
	case NE_COLL_INCAST:
		for (uint32_t k = 0; k < n - 1 && !rc; k++)
			rc = build_block(c, k, n - 1, 0, (uint64_t)c->conns[k].src * c->rank_elems, c->rank_elems);
		break;
	}
	if (rc)
		return rc;
	for (i = 0; i < c->nconns; i++) {
		struct coll_conn *k = &c->conns[i];

		c->total_xfers += k->nxfers;
		k->flags = calloc(k->nxfers + 1, 1);
		k->recv_parts = calloc(k->nxfers + 1, 1);
		k->send_parts = calloc(k->nxfers + 1, 1);
		k->src_qpn = calloc(c->nqps, sizeof(*k->src_qpn));
		k->dst_qpn = calloc(c->nqps, sizeof(*k->dst_qpn));
		if (!k->flags || !k->recv_parts || !k->send_parts || !k->src_qpn || !k->dst_qpn)
			return -ENOMEM;
	}
	return 0;
}
