/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_llm_graph: one rank's nodes of a Megatron-LM iteration (wl_llm.h).
 *
 * A rank's nodes form one chain, each depending on the one before, with two
 * exceptions:
 * - consecutive computes of one forward or backward are merged into one node
 *   (each forward and each backward of the schedule ends its own);
 * - nothing depends on a Send: the next node follows the compute that
 *   produced what was sent. Megatron posts a stage's send-forward with its
 *   receive-backward as one batch (send_forward_recv_backward); a Send on
 *   the chain would deadlock 1F1B with two neighbours each sending first.
 */
#include <stdlib.h>
#include <string.h>

#include "wl_llm.h"

enum { TAG_FWD = 0, TAG_BWD = 1 };

struct builder {
	const struct wl_llm *p;
	struct wl_graph *g;
	struct wl_err *err;
	uint32_t rank, stage, tp_r, dp_r;
	uint64_t next_id, tail; /* tail 0: nothing yet */
	uint64_t pending_ns;
	uint32_t *tp_g, *dp_g, *ep_g, *edp_g; /* the communicators, ascending */
	uint32_t edp;                        /* dp / ep */
};

/* Appends n depending on the tail; on the chain unless it is a Send. */
static int add(struct builder *b, struct wl_node *n)
{
	struct wl_dep dep = {.id = b->tail, .ctrl = false};

	n->id = b->next_id++;
	n->deps = b->tail ? &dep : NULL;
	n->ndeps = b->tail ? 1 : 0;
	if (wl_graph_add(b->g, b->rank, n, b->err) != 0)
		return -1;
	if (n->kind != WL_SEND)
		b->tail = n->id;
	return 0;
}

static int flush(struct builder *b)
{
	struct wl_node n = {.kind = WL_COMPUTE, .duration_ns = b->pending_ns};

	if (b->pending_ns == 0)
		return 0;
	b->pending_ns = 0;
	return add(b, &n);
}

static int coll(struct builder *b, enum wl_coll op, uint64_t bytes, uint32_t *grp, uint32_t n)
{
	struct wl_node node = {.kind = WL_COLL, .op = op, .bytes = bytes, .ranks = grp,
			       .nranks = n};

	if (n <= 1)
		return 0; /* a group of one has nothing to exchange */
	return flush(b) || add(b, &node);
}

static int p2p(struct builder *b, enum wl_kind kind, uint32_t peer, uint32_t micro, int dir)
{
	struct wl_node n = {.kind = kind, .peer = peer, .bytes = wl_llm_pp_bytes(b->p),
			    .tag = (uint64_t)micro * 2 + (uint64_t)dir};

	return flush(b) || add(b, &n);
}

/* One layer's forward ([M1] Fig. 3: AllReduce g after attention and after
 * the MLP; [G]: an MoE MLP between its dispatch and combine AllToAlls). */
static int layer_fwd(struct builder *b)
{
	const struct wl_llm *p = b->p;
	uint64_t tpb = wl_llm_tp_bytes(p), epb = wl_llm_ep_bytes(p);

	b->pending_ns += wl_llm_ns(p, wl_llm_attn_flops(p));
	if (coll(b, WL_ALLREDUCE, tpb, b->tp_g, p->tp) != 0)
		return -1;
	if (p->experts > 0 && coll(b, WL_ALLTOALL, epb, b->ep_g, p->ep) != 0)
		return -1;
	b->pending_ns += wl_llm_ns(p, wl_llm_mlp_flops(p));
	if (p->experts > 0 && coll(b, WL_ALLTOALL, epb, b->ep_g, p->ep) != 0)
		return -1;
	return coll(b, WL_ALLREDUCE, tpb, b->tp_g, p->tp);
}

/* One layer's backward, at twice the forward's FLOPs ([M2]); the f operators
 * of [M1] AllReduce the input gradients of the MLP and of the attention. */
static int layer_bwd(struct builder *b)
{
	const struct wl_llm *p = b->p;
	uint64_t tpb = wl_llm_tp_bytes(p), epb = wl_llm_ep_bytes(p);

	if (p->experts > 0 && coll(b, WL_ALLTOALL, epb, b->ep_g, p->ep) != 0)
		return -1;
	b->pending_ns += 2 * wl_llm_ns(p, wl_llm_mlp_flops(p));
	if (p->experts > 0 && coll(b, WL_ALLTOALL, epb, b->ep_g, p->ep) != 0)
		return -1;
	if (coll(b, WL_ALLREDUCE, tpb, b->tp_g, p->tp) != 0)
		return -1;
	b->pending_ns += 2 * wl_llm_ns(p, wl_llm_attn_flops(p));
	return coll(b, WL_ALLREDUCE, tpb, b->tp_g, p->tp);
}

/* One step of the 1F1B schedule: receive, compute the stage's layers, send. */
static int step(struct builder *b, const struct wl_llm_step *st)
{
	const struct wl_llm *p = b->p;
	uint32_t nl = p->layers / p->pp, span = p->tp * p->dp;
	bool first = b->stage == 0, last = b->stage == p->pp - 1;
	uint64_t logit = last ? wl_llm_ns(p, wl_llm_logit_flops(p)) : 0;

	if (!st->backward) {
		if (!first && p2p(b, WL_RECV, b->rank - span, st->micro, TAG_FWD) != 0)
			return -1;
		for (uint32_t l = 0; l < nl; l++)
			if (layer_fwd(b) != 0)
				return -1;
		b->pending_ns += logit;
		return last ? flush(b) : p2p(b, WL_SEND, b->rank + span, st->micro, TAG_FWD);
	}
	if (!last && p2p(b, WL_RECV, b->rank + span, st->micro, TAG_BWD) != 0)
		return -1;
	b->pending_ns += 2 * logit;
	for (uint32_t l = 0; l < nl; l++)
		if (layer_bwd(b) != 0)
			return -1;
	return first ? flush(b) : p2p(b, WL_SEND, b->rank - span, st->micro, TAG_BWD);
}

/* The gradients of grp's members, bytes each: ReduceScatter then AllGather
 * (distributed optimizer [MC]) or one AllReduce. */
static int grads(struct builder *b, uint64_t bytes, uint32_t *grp, uint32_t n)
{
	if (b->p->dpcoll == WL_LLM_DP_ALLREDUCE)
		return coll(b, WL_ALLREDUCE, bytes, grp, n);
	return coll(b, WL_REDUCESCATTER, bytes, grp, n) || coll(b, WL_ALLGATHER, bytes, grp, n);
}

/* The communicators of the rank, in Megatron's order (wl_llm.h). */
static void groups(struct builder *b)
{
	const struct wl_llm *p = b->p;
	uint32_t base = b->stage * p->tp * p->dp, ep_r = b->dp_r % p->ep, e0 = b->dp_r - ep_r;

	for (uint32_t i = 0; i < p->tp; i++)
		b->tp_g[i] = b->rank - b->tp_r + i;
	for (uint32_t d = 0; d < p->dp; d++)
		b->dp_g[d] = base + b->tp_r + p->tp * d;
	for (uint32_t e = 0; e < p->ep; e++)
		b->ep_g[e] = base + b->tp_r + p->tp * (e0 + e);
	for (uint32_t e = 0; e < b->edp; e++)
		b->edp_g[e] = base + b->tp_r + p->tp * (ep_r + p->ep * e);
}

static int build(struct builder *b)
{
	const struct wl_llm *p = b->p;
	uint32_t m = wl_llm_micro(p);
	struct wl_llm_step *steps = calloc(2 * (size_t)m, sizeof(*steps));
	int rc = 0;

	if (steps == NULL)
		return wl_err_set(b->err, "rank %u: out of memory", b->rank);
	wl_llm_schedule(p->pp, m, b->stage, steps);
	for (uint32_t i = 0; rc == 0 && i < 2 * m; i++)
		rc = step(b, &steps[i]);
	free(steps);
	if (rc == 0)
		rc = grads(b, wl_llm_params_dense(p, b->stage) * 2, b->dp_g, p->dp);
	if (rc == 0 && p->experts > 0)
		rc = grads(b, wl_llm_params_expert(p) * 2, b->edp_g, b->edp);
	return rc;
}

int wl_llm_rank_graph(const struct wl_llm *p, uint32_t rank, struct wl_graph *g,
		      struct wl_err *err)
{
	struct builder b = {.p = p, .g = g, .err = err, .rank = rank, .next_id = 1,
			    .edp = p->dp / p->ep};
	int rc;

	if (rank >= wl_llm_nranks(p) || g->nranks != wl_llm_nranks(p))
		return wl_err_set(err, "rank %u: the job has %u ranks (graph of %u)", rank,
				  wl_llm_nranks(p), g->nranks);
	b.tp_r = rank % p->tp;
	b.dp_r = rank / p->tp % p->dp;
	b.stage = rank / (p->tp * p->dp);
	b.tp_g = calloc(p->tp, sizeof(uint32_t));
	b.dp_g = calloc(p->dp, sizeof(uint32_t));
	b.ep_g = calloc(p->ep, sizeof(uint32_t));
	b.edp_g = calloc(b.edp, sizeof(uint32_t));
	if (!b.tp_g || !b.dp_g || !b.ep_g || !b.edp_g) {
		rc = wl_err_set(err, "rank %u: out of memory", rank);
	} else {
		groups(&b);
		rc = build(&b);
	}
	free(b.tp_g);
	free(b.dp_g);
	free(b.ep_g);
	free(b.edp_g);
	return rc;
}

int wl_llm_graph(const struct wl_llm *p, struct wl_graph *g, struct wl_err *err)
{
	if (wl_graph_init(g, wl_llm_nranks(p), err) != 0)
		return -1;
	for (uint32_t r = 0; r < g->nranks; r++)
		if (wl_llm_rank_graph(p, r, g, err) != 0) {
			wl_graph_free(g);
			return -1;
		}
	return 0;
}
