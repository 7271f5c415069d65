/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_job_core: a job graph walked on a virtual clock (dp_job.h): the
 * successors of each node, the communication instances, the ready nodes
 * per rank, and the compute-only critical path. No DPDK: its driver runs
 * what takes time.
 */
#include "dp_job.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

void dp_job_node_where(const struct dp_job_core *c, uint32_t n, const char *file, char *out,
		       size_t cap)
{
	const struct dp_job_node *x = &c->n[n];
	const char *f = c->g->ranks[x->rank].file;

	if (f)
		snprintf(out, cap, "%s: node %" PRIu64, f, x->w->id);
	else if (file)
		snprintf(out, cap, "%s: rank %u: node %" PRIu64, file, x->rank, x->w->id);
	else
		snprintf(out, cap, "rank %u: node %" PRIu64, x->rank, x->w->id);
}

/* A node's id and its global index, sorted by id within its rank (lookups). */
struct id_ix {
	uint64_t id;
	uint32_t ix;
};

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = ((const struct id_ix *)a)->id, y = ((const struct id_ix *)b)->id;

	return (x > y) - (x < y);
}

/* Nodes, their rank ranges and successors. 0, or -1 (out of memory). */
static int core_nodes(struct dp_job_core *c)
{
	const struct wl_graph *g = c->g;
	struct id_ix *ids;
	uint32_t nsucc_all = 0;

	c->first = calloc(g->nranks + 1, sizeof(*c->first));
	for (uint32_t r = 0; c->first && r < g->nranks; r++)
		c->first[r + 1] = c->first[r] + g->ranks[r].nnodes;
	c->nnodes = c->first ? c->first[g->nranks] : 0;
	c->n = calloc(c->nnodes + 1, sizeof(*c->n));
	ids = calloc(c->nnodes + 1, sizeof(*ids));
	if (!c->first || !c->n || !ids) {
		free(ids);
		return -1;
	}
	for (uint32_t r = 0; r < g->nranks; r++)
		for (uint32_t k = 0; k < g->ranks[r].nnodes; k++) {
			uint32_t i = c->first[r] + k;
			c->n[i] = (struct dp_job_node){.rank = r, .w = &g->ranks[r].nodes[k], .inst = NONE};
			c->n[i].ndeps = c->n[i].w->ndeps;
			ids[i] = (struct id_ix){c->n[i].w->id, i};
			nsucc_all += c->n[i].ndeps;
		}
	for (uint32_t r = 0; r < g->nranks; r++)
		qsort(ids + c->first[r], g->ranks[r].nnodes, sizeof(*ids), cmp_id);
	uint32_t *to = calloc(nsucc_all + 1, sizeof(*to)), *dep_ix = calloc(nsucc_all + 1, sizeof(*to));
	int rc = to && dep_ix ? 0 : -1;
	uint32_t k = 0;
	for (uint32_t i = 0; rc == 0 && i < c->nnodes; i++) /* (checked: every dependency exists) */
		for (uint32_t d = 0; d < c->n[i].ndeps; d++) {
			uint32_t r = c->n[i].rank;
			struct id_ix key = {c->n[i].w->deps[d].id, 0};
			const struct id_ix *hit = bsearch(&key, ids + c->first[r], c->first[r + 1] - c->first[r],
							  sizeof(*ids), cmp_id);
			dep_ix[k++] = hit ? hit->ix : i;
			c->n[hit ? hit->ix : i].nsucc++;
		}
	uint32_t off = 0;
	for (uint32_t i = 0; rc == 0 && i < c->nnodes; i++) {
		c->n[i].succ = to + off;
		off += c->n[i].nsucc;
		c->n[i].nsucc = 0;
	}
	k = 0;
	for (uint32_t i = 0; rc == 0 && i < c->nnodes; i++)
		for (uint32_t d = 0; d < c->n[i].ndeps; d++) {
			struct dp_job_node *p = &c->n[dep_ix[k++]];
			p->succ[p->nsucc++] = i;
		}
	if (rc < 0)
		free(to);
	free(dep_ix);
	free(ids);
	return rc;
}

/* One communication node as the matching sees it. */
struct comm_rec {
	uint32_t p2p, a, b; /* collective: a its communicator; p2p: a sender, b receiver */
	uint64_t tag;
	uint32_t rank, seq, node;
};

/* Records in the order of their key, then their rank and node (by_seq false: to number
 * each rank's records of one key) or their sequence number and rank (true: instances). */
static int cmp_rec(const struct comm_rec *p, const struct comm_rec *q, bool by_seq)
{
	uint64_t k1[] = {p->p2p, p->a, p->b, p->tag, by_seq ? p->seq : p->rank, by_seq ? p->rank : p->node};
	uint64_t k2[] = {q->p2p, q->a, q->b, q->tag, by_seq ? q->seq : q->rank, by_seq ? q->rank : q->node};

	for (int i = 0; i < 6; i++)
		if (k1[i] != k2[i])
			return k1[i] < k2[i] ? -1 : 1;
	return 0;
}

static int cmp_rec_rank(const void *x, const void *y)
{
	return cmp_rec(x, y, false);
}

static int cmp_rec_seq(const void *x, const void *y)
{
	return cmp_rec(x, y, true);
}

static bool same_instance(const struct comm_rec *p, const struct comm_rec *q)
{
	return p->p2p == q->p2p && p->a == q->a && p->b == q->b && p->tag == q->tag && p->seq == q->seq;
}

/* The communicator of collective node w: an index into comms (added when new). */
static uint32_t comm_id(const struct wl_node **comms, uint32_t *ncomms, const struct wl_node *w)
{
	for (uint32_t i = 0; i < *ncomms; i++)
		if (comms[i]->nranks == w->nranks &&
		    memcmp(comms[i]->ranks, w->ranks, w->nranks * sizeof(*w->ranks)) == 0)
			return i;
	comms[*ncomms] = w;
	return (*ncomms)++;
}

/* The communication nodes as records, their sequence numbers set. Returns the
 * count, or -1 (out of memory). */
static long core_records(struct dp_job_core *c, struct comm_rec **out)
{
	struct comm_rec *rec = calloc(c->nnodes + 1, sizeof(*rec));
	const struct wl_node **comms = calloc(c->nnodes + 1, sizeof(*comms));
	uint32_t n = 0, ncomms = 0;

	if (!rec || !comms) {
		free(rec);
		free(comms);
		return -1;
	}
	for (uint32_t i = 0; i < c->nnodes; i++) {
		const struct wl_node *w = c->n[i].w;
		uint32_t r = c->n[i].rank;
		if (w->kind == WL_COMPUTE)
			continue;
		rec[n] = (struct comm_rec){.rank = r, .node = i, .tag = w->tag};
		if (w->kind == WL_COLL) {
			rec[n].a = comm_id(comms, &ncomms, w);
			rec[n].tag = 0;
		} else {
			rec[n].p2p = 1;
			rec[n].a = w->kind == WL_SEND ? r : w->peer;
			rec[n].b = w->kind == WL_SEND ? w->peer : r;
		}
		n++;
	}
	free(comms);
	qsort(rec, n, sizeof(*rec), cmp_rec_rank);
	for (uint32_t i = 1; i < n; i++) {
		struct comm_rec *p = &rec[i - 1], *q = &rec[i];
		bool same = p->p2p == q->p2p && p->a == q->a && p->b == q->b && p->tag == q->tag &&
			    p->rank == q->rank;
		q->seq = same ? p->seq + 1 : 0;
	}
	qsort(rec, n, sizeof(*rec), cmp_rec_seq);
	*out = rec;
	return n;
}

/* ne_coll's op for a graph collective, or -1 when it has none yet. */
static int coll_op(enum wl_coll op)
{
	switch (op) {
	case WL_ALLREDUCE: return NE_COLL_ALLREDUCE;
	case WL_ALLGATHER: return NE_COLL_ALLGATHER;
	case WL_REDUCESCATTER: return NE_COLL_REDUCESCATTER;
	case WL_ALLTOALL: return NE_COLL_ALLTOALL;
	default: return -1;
	}
}

/* Instance i from records rec[0..m-1]: its members, op and size, checked. */
static int core_instance(struct dp_job_core *c, uint32_t i, const struct comm_rec *rec, uint32_t m,
			 const char *file, char *err, size_t errlen)
{
	struct dp_job_inst *in = &c->inst[i];
	const struct wl_node *w0 = c->n[rec[0].node].w;
	char where[300];

	dp_job_node_where(c, rec[0].node, file, where, sizeof(where));
	in->p2p = rec[0].p2p;
	in->bytes = w0->bytes;
	in->wl_op = w0->op;
	in->nmem = m;
	in->rank = calloc(m, sizeof(*in->rank));
	in->node = calloc(m, sizeof(*in->node));
	if (!in->rank || !in->node)
		return snprintf(err, errlen, "--workload: out of memory"), -1;
	if (in->p2p && m != 2) {
		snprintf(err, errlen, "--workload: %s: %s rank %u (tag %" PRIu64 ") has no matching %s", where,
			 w0->kind == WL_SEND ? "Send to" : "Recv from", w0->peer, w0->tag,
			 w0->kind == WL_SEND ? "Recv" : "Send");
		return -1;
	}
	int op = in->p2p ? NE_COLL_INCAST : coll_op(w0->op);
	if (op < 0) {
		snprintf(err, errlen, "--workload: %s: %s: ne_coll cannot run it yet (AllReduce, AllGather, "
			 "ReduceScatter, AllToAll, Send/Recv)", where, wl_coll_name(w0->op));
		return -1;
	}
	in->op = (enum ne_coll_op)op;
	for (uint32_t k = 0; k < m; k++) {
		const struct wl_node *w = c->n[rec[k].node].w;
		in->rank[k] = rec[k].rank;
		in->node[k] = rec[k].node;
		c->n[rec[k].node].inst = i;
		if (w->bytes != in->bytes || (!in->p2p && w->op != in->wl_op)) {
			char other[300];
			dp_job_node_where(c, rec[k].node, file, other, sizeof(other));
			snprintf(err, errlen, "--workload: %s: %s of %" PRIu64 " bytes, but its match %s: %s of %" PRIu64
				 " bytes", where, in->p2p ? "transfer" : wl_coll_name(in->wl_op), in->bytes,
				 other, in->p2p ? "transfer" : wl_coll_name(w->op), w->bytes);
			return -1;
		}
	}
	uint64_t per = in->op == NE_COLL_ALLGATHER || in->op == NE_COLL_REDUCESCATTER ||
				       in->op == NE_COLL_ALLTOALL ? 4ull * m : 4;
	if (m > 1 && in->bytes < per) {
		snprintf(err, errlen, "--workload: %s: %" PRIu64 " bytes: ne_coll needs at least %" PRIu64
			 " (a float%s)", where, in->bytes, per, per > 4 ? " per rank" : "");
		return -1;
	}
	if (in->p2p && c->n[rec[0].node].w->kind != WL_SEND) { /* members [sender, receiver] */
		uint32_t t = in->rank[0];
		in->rank[0] = in->rank[1], in->rank[1] = t;
		t = in->node[0];
		in->node[0] = in->node[1], in->node[1] = t;
	}
	return 0;
}

/* The communication instances. 0, or -1 with err. */
static int core_instances(struct dp_job_core *c, const char *file, char *err, size_t errlen)
{
	struct comm_rec *rec = NULL;
	long n = core_records(c, &rec);
	uint32_t ninst = 0;

	if (n < 0)
		return snprintf(err, errlen, "--workload: out of memory"), -1;
	for (long i = 0; i < n; i++)
		ninst += i == 0 || !same_instance(&rec[i - 1], &rec[i]);
	c->inst = calloc(ninst + 1, sizeof(*c->inst));
	c->pending = calloc(ninst + 1, sizeof(*c->pending));
	int rc = c->inst && c->pending ? 0 : -1;
	if (rc)
		snprintf(err, errlen, "--workload: out of memory");
	for (long i = 0; rc == 0 && i < n;) {
		long j = i + 1;
		while (j < n && same_instance(&rec[i], &rec[j]))
			j++;
		rc = core_instance(c, c->ninst++, rec + i, (uint32_t)(j - i), file, err, errlen);
		i = j;
	}
	free(rec);
	return rc;
}

int dp_job_core_init(struct dp_job_core *c, const struct wl_graph *g, const char *file, char *err,
		     size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->g = g;
	if (core_nodes(c) < 0) {
		dp_job_core_free(c);
		return snprintf(err, errlen, "--workload: out of memory"), -1;
	}
	c->compute_busy = calloc(g->nranks, sizeof(*c->compute_busy));
	c->nic_busy = calloc(g->nranks, sizeof(*c->nic_busy));
	c->queue = calloc(c->nnodes + 1, sizeof(*c->queue));
	c->q_head = calloc(g->nranks, sizeof(*c->q_head));
	c->q_len = calloc(g->nranks, sizeof(*c->q_len));
	if (!c->compute_busy || !c->nic_busy || !c->queue || !c->q_head || !c->q_len) {
		dp_job_core_free(c);
		return snprintf(err, errlen, "--workload: out of memory"), -1;
	}
	if (core_instances(c, file, err, errlen) < 0) {
		dp_job_core_free(c);
		return -1;
	}
	return 0;
}

void dp_job_core_free(struct dp_job_core *c)
{
	if (c->n && c->nnodes)
		free(c->n[0].succ); /* (one array for every node's) */
	for (uint32_t i = 0; c->inst && i < c->ninst; i++) {
		free(c->inst[i].rank);
		free(c->inst[i].node);
	}
	free(c->inst);
	free(c->pending);
	free(c->n);
	free(c->first);
	free(c->compute_busy);
	free(c->nic_busy);
	free(c->queue);
	free(c->q_head);
	free(c->q_len);
	memset(c, 0, sizeof(*c));
}

/* Start rank r's next ready compute node, if its stream is free. */
static int compute_next(struct dp_job_core *c, uint32_t r, uint64_t now)
{
	if (c->compute_busy[r] || c->q_len[r] == 0)
		return 0;
	uint32_t size = c->first[r + 1] - c->first[r];
	uint32_t n = c->queue[c->first[r] + c->q_head[r]];
	c->q_head[r] = (c->q_head[r] + 1) % size;
	c->q_len[r]--;
	c->compute_busy[r] = true;
	return c->drv.compute(c->drv.ctx, n, now + c->n[n].w->duration_ns);
}

/* Start the complete instances whose members' NICs are all free, in the order they completed. */
static int start_pending(struct dp_job_core *c, uint64_t now)
{
	uint32_t kept = 0;
	int rc = 0;

	for (uint32_t k = 0; k < c->npending; k++) {
		struct dp_job_inst *in = &c->inst[c->pending[k]];
		bool free_all = true;
		for (uint32_t m = 0; m < in->nmem && free_all; m++)
			free_all = !c->nic_busy[in->rank[m]];
		if (!free_all || rc < 0) {
			c->pending[kept++] = c->pending[k];
			continue;
		}
		for (uint32_t m = 0; m < in->nmem; m++)
			c->nic_busy[in->rank[m]] = true;
		in->start_ns = now;
		rc = c->drv.start(c->drv.ctx, c->pending[k], now);
	}
	c->npending = kept;
	return rc;
}

/* Node n's dependencies have ended at now. */
static int node_ready(struct dp_job_core *c, uint32_t n, uint64_t now)
{
	struct dp_job_node *x = &c->n[n];

	if (x->inst == NONE) {
		uint32_t r = x->rank, size = c->first[r + 1] - c->first[r];
		c->queue[c->first[r] + (c->q_head[r] + c->q_len[r]) % size] = n;
		c->q_len[r]++;
		return compute_next(c, r, now);
	}
	struct dp_job_inst *in = &c->inst[x->inst];
	if (++in->arrived < in->nmem)
		return 0;
	if (in->nmem == 1) { /* (a communicator of one: nothing to send) */
		in->start_ns = now;
		for (uint32_t m = 0; m < in->nmem; m++)
			c->nic_busy[in->rank[m]] = true;
		return dp_job_core_inst_end(c, x->inst, now);
	}
	c->pending[c->npending++] = x->inst;
	return start_pending(c, now);
}

/* Node n ended at now: its successors whose dependencies all ended are ready. */
static int node_end(struct dp_job_core *c, uint32_t n, uint64_t now)
{
	struct dp_job_node *x = &c->n[n];
	int rc = 0;

	c->left--;
	if (c->left == 0)
		c->iter_end_ns = now;
	for (uint32_t s = 0; s < x->nsucc && rc == 0; s++)
		if (--c->n[x->succ[s]].deps_left == 0)
			rc = node_ready(c, x->succ[s], now);
	return rc;
}

int dp_job_core_begin(struct dp_job_core *c, uint64_t now)
{
	int rc = 0;

	c->left = c->nnodes;
	c->iter_start_ns = now;
	c->npending = 0;
	for (uint32_t r = 0; r < c->g->nranks; r++) {
		c->compute_busy[r] = c->nic_busy[r] = false;
		c->q_head[r] = c->q_len[r] = 0;
	}
	for (uint32_t i = 0; i < c->ninst; i++)
		c->inst[i].arrived = 0;
	for (uint32_t i = 0; i < c->nnodes; i++)
		c->n[i].deps_left = c->n[i].ndeps;
	if (c->nnodes == 0)
		c->iter_end_ns = now;
	for (uint32_t i = 0; i < c->nnodes && rc == 0; i++)
		if (c->n[i].ndeps == 0)
			rc = node_ready(c, i, now);
	return rc;
}

int dp_job_core_compute_end(struct dp_job_core *c, uint32_t n, uint64_t now)
{
	uint32_t r = c->n[n].rank;

	c->compute_busy[r] = false;
	int rc = node_end(c, n, now);
	return rc < 0 ? rc : compute_next(c, r, now);
}

int dp_job_core_inst_end(struct dp_job_core *c, uint32_t i, uint64_t now)
{
	struct dp_job_inst *in = &c->inst[i];
	int rc = 0;

	in->end_ns = now;
	for (uint32_t m = 0; m < in->nmem; m++)
		c->nic_busy[in->rank[m]] = false;
	for (uint32_t m = 0; m < in->nmem && rc == 0; m++)
		rc = node_end(c, in->node[m], now);
	return rc < 0 ? rc : start_pending(c, now);
}

bool dp_job_core_done(const struct dp_job_core *c)
{
	return c->left == 0;
}

/* The compute-only run's events: a min-heap of (time, order, what). */
struct co_ev {
	uint64_t at, seq;
	uint32_t what;          /* node index, or instance index | 1u << 31 */
};
struct co_run {
	struct co_ev *h;
	uint32_t n, cap;
	uint64_t seq;
};

static bool ev_less(const struct co_ev *a, const struct co_ev *b)
{
	return a->at != b->at ? a->at < b->at : a->seq < b->seq;
}

static int co_push(struct co_run *q, uint64_t at, uint32_t what)
{
	if (q->n == q->cap) {
		uint32_t cap = q->cap ? 2 * q->cap : 64;
		struct co_ev *h = realloc(q->h, cap * sizeof(*h));
		if (h == NULL)
			return -1;
		q->h = h;
		q->cap = cap;
	}
	uint32_t i = q->n++;
	q->h[i] = (struct co_ev){at, q->seq++, what};
	while (i > 0 && ev_less(&q->h[i], &q->h[(i - 1) / 2])) {
		struct co_ev t = q->h[i];
		q->h[i] = q->h[(i - 1) / 2];
		q->h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
	return 0;
}

static struct co_ev co_pop(struct co_run *q)
{
	struct co_ev top = q->h[0];

	q->h[0] = q->h[--q->n];
	for (uint32_t i = 0;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < q->n && ev_less(&q->h[l], &q->h[m]))
			m = l;
		if (r < q->n && ev_less(&q->h[r], &q->h[m]))
			m = r;
		if (m == i)
			break;
		struct co_ev t = q->h[i];
		q->h[i] = q->h[m];
		q->h[m] = t;
		i = m;
	}
	return top;
}

static int co_compute(void *ctx, uint32_t n, uint64_t end_ns)
{
	return co_push(ctx, end_ns, n);
}

static int co_start(void *ctx, uint32_t i, uint64_t now)
{
	return co_push(ctx, now, i | 1u << 31); /* (instant: ends as the next event) */
}

int dp_job_core_compute_only(struct dp_job_core *c, const char *file, uint64_t *ns, char *err,
			     size_t errlen)
{
	struct co_run q = {0};
	struct dp_job_driver saved = c->drv;
	int rc;

	c->drv = (struct dp_job_driver){co_compute, co_start, &q};
	rc = dp_job_core_begin(c, 0);
	while (rc == 0 && q.n) {
		struct co_ev e = co_pop(&q);
		rc = e.what >> 31 ? dp_job_core_inst_end(c, e.what & ~(1u << 31), e.at)
				  : dp_job_core_compute_end(c, e.what, e.at);
	}
	free(q.h);
	c->drv = saved;
	if (rc < 0)
		return snprintf(err, errlen, "--workload: out of memory"), -1;
	if (c->left) { /* (every node of a checked graph can start: only a match can block) */
		uint32_t stuck = 0;
		while (stuck < c->nnodes && c->n[stuck].deps_left)
			stuck++;
		for (uint32_t i = 0; i < c->nnodes; i++)
			if (c->n[i].inst != NONE && c->n[i].deps_left == 0 &&
			    c->inst[c->n[i].inst].arrived < c->inst[c->n[i].inst].nmem) {
				stuck = i;
				break;
			}
		char where[300];
		dp_job_node_where(c, stuck < c->nnodes ? stuck : 0, file, where, sizeof(where));
		snprintf(err, errlen, "--workload: %s: the job cannot finish: %u nodes never start (this one waits "
			 "for its communicator; do its members reach their collectives in one order?)",
			 where, c->left);
		return -1;
	}
	*ns = c->iter_end_ns - c->iter_start_ns;
	return 0;
}
