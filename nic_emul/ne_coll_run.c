/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll progress engine: CQ notifications put ranks on a heap, their
 * completions mark connections (sender steps) and receiver groups (CTS
 * grants); a poll runs only what was marked.
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <string.h>

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
void ne_coll_cq_notify(void *ctx, struct ne_cq *cq)
{
	struct coll_rank *r = ctx;

	(void)cq;
	if (!r->cq_ready) {
		r->cq_ready = true;
		ready_push(r->owner, r->idx);
	}
}

/* ------------------------------------------------------------------ */
/* Running */

static void mark_conn(struct ne_coll *c, uint32_t k)
{
	if (!c->conns[k].dirty) {
		c->conns[k].dirty = true;
		c->dirty_conns[c->ndirty_conns++] = k;
	}
}

static void mark_group(struct ne_coll *c, uint32_t g)
{
	if (!c->groups[g].dirty) {
		c->groups[g].dirty = true;
		c->dirty_groups[c->ndirty_groups++] = g;
	}
}

static uint32_t nparts(const struct ne_coll *c, uint32_t len)
{
	if (c->cfg.qp_mode == NE_COLL_QP_RR)
		return 1;
	return len < c->nqps ? len : c->nqps;
}

static void init_data(struct ne_coll *c)
{
	uint32_t n = c->nranks;

	if (!c->cfg.data)
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct coll_rank *r = &c->ranks[i];

		switch (c->cfg.op) {
		case NE_COLL_ALLREDUCE:
		case NE_COLL_REDUCESCATTER:
			memcpy(r->work, r->in, r->nin * sizeof(float));
			break;
		case NE_COLL_ALLGATHER:
			memset(r->work, 0, r->nwork * sizeof(float));
			memcpy(r->work + (size_t)i * c->block_elems, r->in, c->block_elems * sizeof(float));
			break;
		case NE_COLL_ALLTOALL:
			memset(r->work, 0, r->nwork * sizeof(float));
			memcpy(r->work + (size_t)i * c->block_elems, r->in + (size_t)i * c->block_elems,
			       c->block_elems * sizeof(float));
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
		struct coll_conn *cn = &c->conns[k];

		memset(cn->flags, 0, cn->nxfers);
		memset(cn->recv_parts, 0, cn->nxfers);
		memset(cn->send_parts, 0, cn->nxfers);
		cn->send_next = cn->send_part = 0;
		cn->grant_next = 0;
		mark_conn(c, k);
	}
	for (uint32_t g = 0; g < c->nranks * c->nchannels; g++) {
		c->groups[g].granted = 0;
		mark_group(c, g);
	}
	for (uint32_t i = 0; i < c->nranks; i++)
		c->ranks[i].granted_bytes = 0;
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
	struct coll_conn *cn = &c->conns[k];
	const struct coll_xfer *x = &cn->xfers[s];
	struct coll_rank *rs = &c->ranks[cn->src], *rd = &c->ranks[cn->dst];
	uint64_t src = (uint64_t)(uintptr_t)rs->src + (c->cfg.data ? x->src_off : 0);
	uint64_t dst = (uint64_t)(uintptr_t)rd->stage + cn->stage_off +
		       (uint64_t)(s % c->window) * c->cfg.chunk_bytes;
	struct ne_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = NE_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = NE_SEND_SIGNALED;
	wr.lkey = rs->src_key;
	wr.rkey = rd->stage_key;
	wr.imm_data = s;
	wr.wr_id = wr_id_make(WR_DATA_SEND, k, s);
	if (c->cfg.qp_mode == NE_COLL_QP_RR) {
		int rc;

		wr.local_addr = src;
		wr.remote_addr = dst;
		wr.length = x->len;
		rc = ne_post_send(rs->nic, cn->src_qpn[cn->rr_next % c->nqps], &wr, now);
		if (rc)
			return rc;
		cn->rr_next++;
		c->stats.data_wrs++;
		c->stats.data_bytes += x->len;
		return 0;
	}
	for (uint32_t q = cn->send_part; q < c->nqps; q++) {
		uint64_t lo = part_start(x->len, c->nqps, q), hi = part_start(x->len, c->nqps, q + 1);
		int rc;

		if (hi == lo)
			continue;
		wr.local_addr = src + lo;
		wr.remote_addr = dst + lo;
		wr.length = (uint32_t)(hi - lo);
		rc = ne_post_send(rs->nic, cn->src_qpn[q], &wr, now);
		if (rc) {
			cn->send_part = q;
			return rc;
		}
		c->stats.data_wrs++;
		c->stats.data_bytes += hi - lo;
	}
	cn->send_part = 0;
	return 0;
}

static void sender_step(struct ne_coll *c, uint32_t k, uint64_t now)
{
	struct coll_conn *cn = &c->conns[k];

	while (cn->send_next < cn->nxfers) {
		uint32_t s = cn->send_next;
		const struct coll_xfer *x = &cn->xfers[s];
		int rc;

		if (c->cfg.cts) {
			if (!(cn->flags[s] & XFER_CTS_RCVD))
				return;
		} else if (s >= c->window && !(cn->flags[s - c->window] & XFER_SEND_DONE)) {
			return;
		}
		if (x->dep_conn >= 0 && !(c->conns[x->dep_conn].flags[x->dep_seq] & XFER_RECV_DONE))
			return;
		rc = post_parts(c, k, s, now);
		if (rc) {
			c->stats.post_busy++;
			return;
		}
		cn->send_next++;
	}
}

static void grant_step(struct ne_coll *c, uint32_t gi, uint64_t now)
{
	struct coll_group *g = &c->groups[gi];

	if (!c->cfg.cts)
		return;
	while (g->granted < c->window) {
		bool found = false;

		for (uint32_t i = 0; i < g->nconns && !found; i++) {
			uint32_t pos = (g->rr_next + i) % g->nconns, k = g->conns[pos];
			struct coll_conn *cn = &c->conns[k];
			uint32_t s = cn->grant_next;
			struct coll_rank *rd = &c->ranks[cn->dst];
			struct ne_send_wr wr;

			if (s >= cn->nxfers)
				continue;
			if (s >= c->window && !(cn->flags[s - c->window] & XFER_RECV_DONE))
				continue;
			memset(&wr, 0, sizeof(wr));
			wr.opcode = NE_WR_SEND_WITH_IMM;
			wr.send_flags = NE_SEND_SIGNALED;
			wr.imm_data = s;
			wr.wr_id = wr_id_make(WR_CTS_SEND, k, s);
			if (ne_post_send(rd->nic, cn->dst_ctrl_qpn, &wr, now)) {
				c->stats.post_busy++;
				return;
			}
			c->stats.cts_sent++;
			cn->grant_next++;
			c->cts_outstanding++;
			g->granted++;
			rd->granted_bytes += cn->xfers[s].len;
			if (rd->granted_bytes > c->stats.max_granted_bytes)
				c->stats.max_granted_bytes = rd->granted_bytes;
			g->rr_next = (pos + 1) % g->nconns;
			found = true;
		}
		if (!found)
			return;
	}
}

static void consume(struct ne_coll *c, uint32_t k, uint32_t s)
{
	struct coll_conn *cn = &c->conns[k];
	const struct coll_xfer *x = &cn->xfers[s];
	struct coll_rank *rd = &c->ranks[cn->dst];

	if (c->cfg.data) {
		const uint8_t *slot = rd->stage + cn->stage_off + (size_t)(s % c->window) * c->cfg.chunk_bytes;
		uint8_t *dst = (uint8_t *)rd->work + x->dst_off;

		if (x->kind == XFER_REDUCE) {
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
	cn->flags[s] |= XFER_RECV_DONE;
	c->recv_done++;
	c->stats.transfers_done++;
	if (c->cfg.cts) {
		c->groups[cn->group].granted--;
		rd->granted_bytes -= x->len;
	}
	mark_group(c, cn->group);
	if (cn->downstream >= 0)
		mark_conn(c, (uint32_t)cn->downstream);
}

static void handle_wc(struct ne_coll *c, uint32_t rank, const struct ne_wc *wc)
{
	uint32_t kind = (uint32_t)(wc->wr_id >> 62);
	uint32_t k = (uint32_t)(wc->wr_id >> 32) & 0x3FFFFFFFu;
	uint32_t s;
	struct coll_conn *cn;

	if (wc->status != NE_WC_SUCCESS) {
		if (!c->stats.errors)
			c->stats.first_error_status = wc->status;
		c->stats.errors++;
		c->failed = true;
		return;
	}
	if (k >= c->nconns)
		return;
	cn = &c->conns[k];
	switch (kind) {
	case WR_DATA_SEND:
		s = (uint32_t)wc->wr_id;
		if (s >= cn->nxfers)
			return;
		if (++cn->send_parts[s] == nparts(c, cn->xfers[s].len)) {
			cn->flags[s] |= XFER_SEND_DONE;
			c->send_done++;
		}
		mark_conn(c, k);
		break;
	case WR_CTS_SEND:
		c->cts_outstanding--;
		mark_group(c, cn->group);
		break;
	case WR_DATA_RECV:
		if (ne_coll_post_recv(c, rank, wc->qpn, wc->wr_id))
			c->stats.post_busy++;
		s = wc->imm_data;
		if (s >= cn->nxfers || (cn->flags[s] & XFER_RECV_DONE))
			return;
		if (++cn->recv_parts[s] == nparts(c, cn->xfers[s].len))
			consume(c, k, s);
		break;
	case WR_CTS_RECV:
		if (ne_coll_post_recv(c, rank, wc->qpn, wc->wr_id))
			c->stats.post_busy++;
		s = wc->imm_data;
		if (s < cn->nxfers)
			cn->flags[s] |= XFER_CTS_RCVD;
		mark_conn(c, k);
		break;
	}
}

static void run_dirty(struct ne_coll *c, uint64_t now)
{
	while (c->ndirty_groups || c->ndirty_conns) {
		while (c->ndirty_groups) {
			uint32_t g = c->dirty_groups[--c->ndirty_groups];

			c->groups[g].dirty = false;
			c->stats.group_steps++;
			grant_step(c, g, now);
		}
		while (c->ndirty_conns) {
			uint32_t k = c->dirty_conns[--c->ndirty_conns];

			c->conns[k].dirty = false;
			c->stats.conn_steps++;
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

		c->ranks[i].cq_ready = false;
		c->stats.rank_visits++;
		do {
			got = ne_cq_poll(c->ranks[i].cq, wc, 64);
			c->stats.cq_polls++;
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
	while (c->running && c->recv_done == c->total_xfers && c->send_done == c->total_xfers &&
	       c->cts_outstanding == 0) {
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
	if (c->ndirty_conns || c->ndirty_groups || c->nready)
		return 0;
	return UINT64_MAX;
}
