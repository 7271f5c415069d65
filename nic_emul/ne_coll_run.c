/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll progress engine: CQ notifications put ranks on a heap, their
 * completions mark connections (sender steps) and receiver groups (CTS
 * grants); a poll runs only what was marked.
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <string.h>

void ne_coll_rank_heap_push(uint32_t *heap, uint32_t *n, uint32_t rank)
{
	uint32_t i = (*n)++;

	while (i > 0 && heap[(i - 1) / 2] > rank) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = rank;
}

uint32_t ne_coll_rank_heap_pop(uint32_t *heap, uint32_t *n)
{
	uint32_t top = heap[0], last = heap[--(*n)], i = 0;

	for (;;) {
		uint32_t l = 2 * i + 1, m = l;

		if (l >= *n)
			break;
		if (l + 1 < *n && heap[l + 1] < heap[l])
			m = l + 1;
		if (heap[m] >= last)
			break;
		heap[i] = heap[m];
		i = m;
	}
	if (*n)
		heap[i] = last;
	return top;
}

/* CQ notification: the NIC queued a completion on this rank's CQ. */
void ne_coll_cq_notify(void *ctx, struct ne_cq *cq)
{
	struct coll_rank *r = ctx;

	(void)cq;
	if (!r->cq_ready) {
		r->cq_ready = true;
		ne_coll_rank_heap_push(r->owner->ready, &r->owner->nready, r->idx);
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

void ne_coll_mark_conn(struct ne_coll *c, uint32_t k)
{
	mark_conn(c, k);
}

static void mark_group(struct ne_coll *c, uint32_t g)
{
	if (!c->groups[g].dirty) {
		c->groups[g].dirty = true;
		c->dirty_groups[c->ndirty_groups++] = g;
	}
}

static void init_data(struct ne_coll *c)
{
	uint32_t n = c->nranks;

	if (!c->cfg.data)
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct coll_rank *r = &c->ranks[i];

		if (!coll_mine(c, i))
			continue;
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
		case NE_COLL_SENDRECV:
			if (r->work)
				memset(r->work, 0, r->nwork * sizeof(float));
			break;
		case NE_COLL_BROADCAST:
			/* the root sends its input; the others' outputs start empty */
			if (i == c->cfg.root)
				memcpy(r->work, r->in, r->nin * sizeof(float));
			else
				memset(r->work, 0, r->nwork * sizeof(float));
			break;
		case NE_COLL_REDUCE:
			memcpy(r->work, r->in, r->nin * sizeof(float));
			break;
		}
	}
}

void ne_coll_begin_iter(struct ne_coll *c, uint64_t now)
{
	for (uint32_t k = 0; k < c->nconns; k++) {
		struct coll_conn *cn = &c->conns[k];

		if (coll_mine(c, cn->dst)) {
			memset(cn->rflags, 0, cn->nxfers);
			memset(cn->recv_parts, 0, cn->nxfers * sizeof(*cn->recv_parts));
			cn->grant_next = 0;
		}
		if (!coll_mine(c, cn->src))
			continue;
		memset(cn->flags, 0, cn->nxfers);
		memset(cn->send_parts, 0, cn->nxfers * sizeof(*cn->send_parts));
		cn->send_next = cn->send_part = 0;
		cn->gate = NE_COLL_GATE_DATA;
		mark_conn(c, k);
	}
	for (uint32_t g = 0; g < c->ngroups; g++) {
		if (!coll_mine(c, c->groups[g].rank))
			continue;
		c->groups[g].granted = 0;
		mark_group(c, g);
	}
	for (uint32_t i = 0; i < c->nranks; i++)
		if (coll_mine(c, i))
			c->ranks[i].granted_bytes = 0;
	c->recv_done = c->send_done = 0;
	init_data(c);
	c->iter_start = now;
	c->launching = c->launch_ns > 0;
	c->launch_until = now + c->launch_ns;
	ne_coll_active_iter_start(c);
	ne_coll_lat_iter_start(c);
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
	ne_coll_series_start(c, now_ns);
	ne_coll_begin_iter(c, now_ns);
	return 0;
}

/* Each condition that holds a message back is noted when it does: every
 * change that lifts one marks the connection, so the note left when the
 * message goes is the condition met last. */
static void gate_passed(struct ne_coll *c, struct coll_conn *cn)
{
	uint64_t *gates = cn->nvl ? c->stats.gate_nvl : c->stats.gate_net;

	gates[cn->gate]++;
	cn->gate = NE_COLL_GATE_DATA;
	cn->send_next++;
}

static void sender_step(struct ne_coll *c, uint32_t k, uint64_t now)
{
	struct coll_conn *cn = &c->conns[k];

	while (cn->send_next < cn->nxfers) {
		uint32_t s = cn->send_next;
		const struct coll_xfer *x = &cn->xfers[s];
		bool data_in = true;
		int rc;

		for (uint32_t d = 0; d < COLL_MAX_DEPS && x->dep_conn[d] >= 0; d++)
			data_in = data_in &&
				  (c->conns[x->dep_conn[d]].rflags[x->dep_seq[d]] & XFER_RECV_DONE);

		/* ready: the connection's next message, its data there (latency's wait) */
		if (data_in)
			ne_coll_lat_ready(c, cn, s, now);
		bool cts_in = !c->cfg.cts || cn->nvl || (cn->flags[s] & XFER_CTS_RCVD);

		/* (PXN's NVLink copy to the NIC's GPU, and a capped protocol's
		 * write into its own buffer, need no CTS: they overlap its wait) */
		bool staged = !cn->nvl && (cn->pxn || c->proto_cap_Bps);

		if (!cts_in && !staged) {
			cn->gate = NE_COLL_GATE_CTS;
			return;
		}
		/* a send slot is reused once its previous message is ACKed (nccl;
		 * rocelab without CTS; NVLink: once it was consumed, which is
		 * when it ended) */
		if ((coll_nccl(c) || !c->cfg.cts || cn->nvl) && s >= c->window &&
		    !(cn->flags[s - c->window] & XFER_SEND_DONE)) {
			cn->gate = NE_COLL_GATE_SLOT;
			return;
		}
		if (!data_in) {
			cn->gate = NE_COLL_GATE_DATA;
			return;
		}
		/* (PXN's copy, or a capped protocol's write, before the RDMA) */
		if (staged && !ne_coll_pxn_staged(c, k, s, now)) {
			cn->gate = cn->pxn ? NE_COLL_GATE_PXN : NE_COLL_GATE_WRITE;
			return;
		}
		if (!cts_in) {
			cn->gate = NE_COLL_GATE_CTS;
			return;
		}
		if (cn->nvl) {
			ne_coll_nvl_post(c, k, s, now);
			gate_passed(c, cn);
			continue;
		}
		/* the latency starts at the first WQE the proxy or NIC accepted: a
		 * refused try (queue full, CTRAN's QPs at their cap) is still wait */
		uint64_t accepted = c->stats.data_wrs;
		rc = ne_coll_post_msg(c, k, s, now);
		if (c->stats.data_wrs != accepted)
			ne_coll_lat_post(c, cn, s, now);
		if (rc) {
			if (rc != -EAGAIN)
				c->stats.post_busy++;
			cn->gate = NE_COLL_GATE_QUEUE;
			return;
		}
		gate_passed(c, cn);
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

			if (s >= cn->nxfers || cn->nvl) /* (NVLink: no grant) */
				continue;
			if (s >= c->window && !(cn->rflags[s - c->window] & XFER_RECV_DONE))
				continue;
			if (ne_coll_post_cts(c, k, s, now)) {
				c->stats.post_busy++;
				return;
			}
			c->stats.cts_sent++;
			cn->grant_next++;
			if (!coll_nccl(c))
				c->cts_outstanding++; /* nccl's FIFO writes are unsignaled */
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

void ne_coll_consume(struct ne_coll *c, uint32_t k, uint32_t s)
{
	struct coll_conn *cn = &c->conns[k];
	const struct coll_xfer *x = &cn->xfers[s];
	struct coll_rank *rd = &c->ranks[cn->dst];

	if (c->cfg.data) {
		const uint8_t *slot = rd->stage + cn->stage_off + (size_t)(s % c->window) * c->slot_bytes;
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
	cn->rflags[s] |= XFER_RECV_DONE;
	c->recv_done++;
	c->stats.transfers_done++;
	if (c->cfg.cts && !cn->nvl) {
		c->groups[cn->group].granted--;
		rd->granted_bytes -= x->len;
	}
	if (cn->nvl) /* its sender may wait for the slot */
		mark_conn(c, k);
	mark_group(c, cn->group);
	for (uint32_t d = 0; d < COLL_MAX_DEPS && cn->downstream[d] >= 0; d++)
		mark_conn(c, (uint32_t)cn->downstream[d]);
}

/* The receiver of rr in the nccl model expects message s on QP s mod nqps. */
static void check_rr_step(struct ne_coll *c, const struct coll_conn *cn, uint32_t s,
			  const struct ne_wc *wc)
{
	if (coll_nccl(c) && c->cfg.qp_mode == NE_COLL_QP_RR && wc->qpn != cn->dst_qpn[s % c->nqps])
		c->stats.rr_mismatch++;
}

void ne_coll_handle_wc(struct ne_coll *c, uint32_t rank, const struct ne_wc *wc, uint64_t now)
{
	uint32_t kind = (uint32_t)(wc->wr_id >> WR_KIND_SHIFT);
	uint32_t k = (uint32_t)(wc->wr_id >> WR_CONN_SHIFT) & WR_CONN_MASK;
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
		ne_coll_active_completed(c, rank, wc, now);
		s = (uint32_t)wc->wr_id;
		if (c->cfg.qp_mode == NE_COLL_QP_CTRAN) {
			ne_coll_data_sent(c, cn, wc->wr_id);
			s &= WR_SEQ_MASK;
		}
		if (s >= cn->nxfers)
			return;
		if (++cn->send_parts[s] == ne_coll_msg_wqes(c, coll_wire_len(c, cn->xfers[s].len))) {
			cn->flags[s] |= XFER_SEND_DONE;
			c->send_done++;
			ne_coll_lat_done(c, cn, s, now);
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
		if (s >= cn->nxfers || (cn->rflags[s] & XFER_RECV_DONE))
			return;
		check_rr_step(c, cn, s, wc);
		if (++cn->recv_parts[s] == ne_coll_msg_wqes(c, coll_wire_len(c, cn->xfers[s].len)))
			ne_coll_net_received(c, k, s, now);
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

void ne_coll_run_marked(struct ne_coll *c, uint64_t now)
{
	if (c->launching) { /* (the marks wait for the launch's end) */
		if (now < c->launch_until)
			return;
		c->launching = false;
	}
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

/* Every transfer polled through c was sent and received, every CTS completed. */
static bool iter_complete(const struct ne_coll *c)
{
	return c->recv_done == c->recv_total && c->send_done == c->send_total &&
	       c->cts_outstanding == 0;
}

int ne_coll_poll(struct ne_coll *c, uint64_t now_ns)
{
	int handled;

	if (!c)
		return -EINVAL;
	handled = ne_coll_proxy_poll(c, now_ns);
	if (c->failed)
		return -EIO;
	if (!c->running)
		return handled;
	handled += ne_coll_nvl_poll(c, now_ns);
	ne_coll_run_marked(c, now_ns);
	while (c->running && iter_complete(c)) {
		c->running = false;
		c->done_at = now_ns;
		if (c->main) { /* a lane: ne_coll_lanes_end ends the collective */
			c->done = true;
			ne_coll_series_end(c, now_ns); /* (its last row: merged at the end) */
			break;
		}
		c->iter_ns[c->iters_done++] = now_ns - c->iter_start;
		c->stats.nic_ns += (now_ns - c->iter_start) * c->nranks;
		if (c->iters_done < c->iters_total) {
			ne_coll_begin_iter(c, now_ns);
			ne_coll_run_marked(c, now_ns);
		} else {
			c->done = true;
			ne_coll_series_end(c, now_ns);
		}
	}
	return handled;
}

bool ne_coll_quiet(const struct ne_coll *c)
{
	return c && !c->proxy_on && !c->failed && !c->launching && !c->ndirty_conns && !c->ndirty_groups &&
	       !c->nready && !c->ndue && !c->nnvl && !(c->running && iter_complete(c));
}

uint64_t ne_coll_next_event_ns(const struct ne_coll *c)
{
	uint64_t proxy, nvl;

	if (!c)
		return UINT64_MAX;
	if (c->launching) { /* (the marks wait: no earlier than the launch's end) */
		proxy = ne_coll_proxy_next_ns(c);
		nvl = ne_coll_nvl_next_ns(c);
		proxy = proxy < nvl ? proxy : nvl;
		return c->launch_until < proxy ? c->launch_until : proxy;
	}
	if (c->ndirty_conns || c->ndirty_groups || c->nready || c->ndue)
		return 0;
	proxy = ne_coll_proxy_next_ns(c);
	nvl = ne_coll_nvl_next_ns(c);
	return proxy < nvl ? proxy : nvl;
}
