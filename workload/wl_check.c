/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_graph_check(): per rank, every node well formed, ids unique, every
 * dependency present and no cycle (Kahn's algorithm); across ranks, every
 * member of a communicator runs as many collectives over it as the others
 * (otherwise some member would wait for ever).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wl_graph.h"

struct where {
	char s[160];
};

/* "FILE" or "rank N", the prefix of every message */
static const char *where(const struct wl_graph *g, uint32_t rank, struct where *w)
{
	if (g->ranks[rank].file != NULL)
		snprintf(w->s, sizeof(w->s), "%s", g->ranks[rank].file);
	else
		snprintf(w->s, sizeof(w->s), "rank %u", rank);
	return w->s;
}

static int check_coll(const struct wl_graph *g, uint32_t rank,
		      const struct wl_node *n, struct wl_err *err)
{
	struct where w;
	unsigned long long id = (unsigned long long)n->id;
	bool self = false;

	if ((unsigned)n->op >= WL_COLL_COUNT)
		return wl_err_set(err, "%s: node %llu: collective type %d is not one of Chakra's 0..%d",
				  where(g, rank, &w), id, (int)n->op, WL_COLL_COUNT - 1);
	if (n->nranks == 0)
		return wl_err_set(err, "%s: node %llu: %s over an empty communicator",
				  where(g, rank, &w), id, wl_coll_name(n->op));
	for (uint32_t i = 0; i < n->nranks; i++) {
		if (n->ranks[i] >= g->nranks)
			return wl_err_set(err, "%s: node %llu: the communicator of %u ranks names rank %u, but the job has %u ranks (0..%u)",
					  where(g, rank, &w), id, n->nranks, n->ranks[i],
					  g->nranks, g->nranks - 1);
		if (i > 0 && n->ranks[i] == n->ranks[i - 1])
			return wl_err_set(err, "%s: node %llu: the communicator names rank %u twice",
					  where(g, rank, &w), id, n->ranks[i]);
		self |= n->ranks[i] == rank;
	}
	if (!self)
		return wl_err_set(err, "%s: node %llu: rank %u runs a %s over a communicator of %u ranks that leaves it out",
				  where(g, rank, &w), id, rank, wl_coll_name(n->op), n->nranks);
	return 0;
}

static int check_node(const struct wl_graph *g, uint32_t rank,
		      const struct wl_node *n, struct wl_err *err)
{
	struct where w;
	unsigned long long id = (unsigned long long)n->id;

	switch (n->kind) {
	case WL_COMPUTE:
		return 0;
	case WL_COLL:
		return check_coll(g, rank, n, err);
	case WL_SEND:
	case WL_RECV:
		if (n->peer >= g->nranks)
			return wl_err_set(err, "%s: node %llu: peer rank %u, but the job has %u ranks (0..%u)",
					  where(g, rank, &w), id, n->peer, g->nranks, g->nranks - 1);
		if (n->peer == rank)
			return wl_err_set(err, "%s: node %llu: rank %u %s itself",
					  where(g, rank, &w), id, rank,
					  n->kind == WL_SEND ? "sends to" : "receives from");
		return 0;
	}
	return wl_err_set(err, "%s: node %llu: unknown node kind %d", where(g, rank, &w),
			  id, (int)n->kind);
}

struct idx {
	uint64_t id;
	uint32_t i;
};

static int cmp_idx(const void *a, const void *b)
{
	const struct idx *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* position of the node with this id, or -1 */
static int64_t lookup(const struct idx *ix, uint32_t n, uint64_t id)
{
	struct idx key = { .id = id };
	const struct idx *p = bsearch(&key, ix, n, sizeof(*ix), cmp_idx);

	return p ? (int64_t)p->i : -1;
}

/* Sorted ids, then every dependency resolved to a position in deppos
 * (node i's deps at deppos[first[i] ..]). */
static int resolve(const struct wl_graph *g, uint32_t rank, struct idx *ix,
		   uint32_t *first, uint32_t *deppos, struct wl_err *err)
{
	const struct wl_rank *rk = &g->ranks[rank];
	struct where w;
	uint32_t k = 0;

	for (uint32_t i = 0; i < rk->nnodes; i++)
		ix[i] = (struct idx){ rk->nodes[i].id, i };
	qsort(ix, rk->nnodes, sizeof(*ix), cmp_idx);
	for (uint32_t i = 1; i < rk->nnodes; i++)
		if (ix[i].id == ix[i - 1].id)
			return wl_err_set(err, "%s: node %llu: two nodes have this id",
					  where(g, rank, &w), (unsigned long long)ix[i].id);
	for (uint32_t i = 0; i < rk->nnodes; i++) {
		const struct wl_node *n = &rk->nodes[i];

		first[i] = k;
		for (uint32_t d = 0; d < n->ndeps; d++) {
			int64_t p = lookup(ix, rk->nnodes, n->deps[d].id);

			if (p < 0)
				return wl_err_set(err, "%s: node %llu: depends on node %llu (%s), which is not there",
						  where(g, rank, &w), (unsigned long long)n->id,
						  (unsigned long long)n->deps[d].id,
						  n->deps[d].ctrl ? "control" : "data");
			deppos[k++] = (uint32_t)p;
		}
	}
	first[rk->nnodes] = k;
	return 0;
}

/* the first dependency of u that has not finished (there is one: u has not) */
static uint32_t next_left(uint32_t u, const uint32_t *left, const uint32_t *first,
			  const uint32_t *deppos)
{
	for (uint32_t k = first[u]; k < first[u + 1]; k++)
		if (left[deppos[k]] != 0)
			return deppos[k];
	return u;
}

/* After Kahn's algorithm left nodes unfinished (left[i] != 0): walk from one
 * of them along unfinished dependencies until a node repeats; the walk from
 * that node on is a cycle. */
static int report_cycle(const struct wl_graph *g, uint32_t rank, const uint32_t *left,
			const uint32_t *first, const uint32_t *deppos,
			uint32_t *seen, struct wl_err *err)
{
	const struct wl_rank *rk = &g->ranks[rank];
	struct where w;
	char path[200] = "";
	uint32_t u = 0, step = 1;
	size_t len = 0;

	while (left[u] == 0)
		u++;
	memset(seen, 0, rk->nnodes * sizeof(*seen));
	while (seen[u] == 0) {
		seen[u] = step++;
		u = next_left(u, left, first, deppos);
	}
	/* u is on the cycle: name its members, following the same choices */
	for (uint32_t v = u, hops = 0; hops < 8; hops++) {
		len += (size_t)snprintf(path + len, sizeof(path) - len, "%llu -> ",
					(unsigned long long)rk->nodes[v].id);
		v = next_left(v, left, first, deppos);
		if (v == u || len >= sizeof(path) - 24)
			break;
	}
	return wl_err_set(err, "%s: node %llu: dependency cycle: %s%llu (each depends on the next)",
			  where(g, rank, &w), (unsigned long long)rk->nodes[u].id, path,
			  (unsigned long long)rk->nodes[u].id);
}

/* Kahn's algorithm: left[i] counts node i's unfinished dependencies; a node
 * whose count reaches 0 finishes and releases the nodes depending on it
 * (child[cfirst[i] ..]). Returns how many nodes finish. */
static uint32_t kahn(uint32_t n, uint32_t *left, const uint32_t *first,
		     const uint32_t *deppos, uint32_t *cfirst, uint32_t *child,
		     uint32_t *queue)
{
	uint32_t head = 0, tail = 0;

	memset(cfirst, 0, ((size_t)n + 1) * sizeof(*cfirst));
	for (uint32_t k = 0; k < first[n]; k++)
		cfirst[deppos[k] + 1]++;
	for (uint32_t i = 0; i < n; i++)
		cfirst[i + 1] += cfirst[i];
	memcpy(queue, cfirst, (size_t)n * sizeof(*queue)); /* fill cursors, for now */
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t k = first[i]; k < first[i + 1]; k++)
			child[queue[deppos[k]]++] = i;
	for (uint32_t i = 0; i < n; i++) {
		left[i] = first[i + 1] - first[i];
		if (left[i] == 0)
			queue[tail++] = i;
	}
	while (head < tail) {
		uint32_t u = queue[head++];

		for (uint32_t k = cfirst[u]; k < cfirst[u + 1]; k++)
			if (--left[child[k]] == 0)
				queue[tail++] = child[k];
	}
	return tail;
}

/* One rank's ids, dependencies and cycles. */
static int check_deps(const struct wl_graph *g, uint32_t rank, struct wl_err *err)
{
	const struct wl_rank *rk = &g->ranks[rank];
	size_t n = rk->nnodes, ndeps = 0;
	struct idx *ix;
	uint32_t *first, *deppos, *left, *cfirst, *queue;
	int rc = -1;

	for (uint32_t i = 0; i < n; i++)
		ndeps += rk->nodes[i].ndeps;
	ix = malloc((n + 1) * sizeof(*ix));
	first = malloc((n + 1) * 4 * sizeof(*first));
	deppos = malloc((ndeps + 1) * 2 * sizeof(*deppos));
	if (ix == NULL || first == NULL || deppos == NULL) {
		wl_err_set(err, "rank %u: out of memory checking %zu nodes", rank, n);
		goto out;
	}
	cfirst = first + n + 1;
	left = cfirst + n + 1;
	queue = left + n + 1;
	if (resolve(g, rank, ix, first, deppos, err) != 0)
		goto out;
	if (kahn((uint32_t)n, left, first, deppos, cfirst, deppos + ndeps + 1, queue) < n)
		report_cycle(g, rank, left, first, deppos, queue, err);
	else
		rc = 0;
out:
	free(ix);
	free(first);
	free(deppos);
	return rc;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* A communicator the collectives use, with how many collectives each member
 * runs over it (count[k] for member ranks[k]). */
struct comm {
	const uint32_t *ranks;
	uint32_t n;
	uint32_t *count;
};

struct comms {
	struct comm *c;
	uint32_t n, cap;
};

static void comms_free(struct comms *cs)
{
	for (uint32_t i = 0; i < cs->n; i++)
		free(cs->c[i].count);
	free(cs->c);
}

/* The entry for node n's communicator, added when new; NULL when out of memory. */
static struct comm *comm_of(struct comms *cs, const struct wl_node *n)
{
	struct comm *c;

	for (uint32_t i = 0; i < cs->n; i++)
		if (cs->c[i].n == n->nranks &&
		    memcmp(cs->c[i].ranks, n->ranks, n->nranks * sizeof(*n->ranks)) == 0)
			return &cs->c[i];
	if (cs->n == cs->cap) {
		uint32_t cap = cs->cap ? cs->cap * 2 : 8;
		struct comm *p = realloc(cs->c, cap * sizeof(*p));

		if (p == NULL)
			return NULL;
		cs->c = p;
		cs->cap = cap;
	}
	c = &cs->c[cs->n];
	*c = (struct comm){ n->ranks, n->nranks, calloc(n->nranks, sizeof(uint32_t)) };
	if (c->count == NULL)
		return NULL;
	cs->n++;
	return c;
}

static uint32_t member(const struct comm *c, uint32_t rank)
{
	const uint32_t *p = bsearch(&rank, c->ranks, c->n, sizeof(rank), cmp_u32);

	return (uint32_t)(p - c->ranks); /* check_node() made sure rank is there */
}

/* The last collective rank runs over c (it has one: its count is the larger). */
static uint64_t last_coll(const struct wl_graph *g, uint32_t rank, const struct comm *c)
{
	const struct wl_rank *rk = &g->ranks[rank];
	uint64_t id = 0;

	for (uint32_t i = 0; i < rk->nnodes; i++)
		if (rk->nodes[i].kind == WL_COLL && rk->nodes[i].nranks == c->n &&
		    memcmp(rk->nodes[i].ranks, c->ranks, c->n * sizeof(*c->ranks)) == 0)
			id = rk->nodes[i].id;
	return id;
}

static int comm_counts(const struct wl_graph *g, const struct comm *c, struct wl_err *err)
{
	uint32_t lo = 0, hi = 0;
	struct where w, w2;

	for (uint32_t k = 1; k < c->n; k++) {
		if (c->count[k] < c->count[lo])
			lo = k;
		if (c->count[k] > c->count[hi])
			hi = k;
	}
	if (c->count[lo] == c->count[hi])
		return 0;
	return wl_err_set(err, "%s: node %llu: rank %u runs %u collectives over its communicator of %u ranks (%u..%u), but rank %u (%s) runs %u",
			  where(g, c->ranks[hi], &w),
			  (unsigned long long)last_coll(g, c->ranks[hi], c), c->ranks[hi],
			  c->count[hi], c->n, c->ranks[0], c->ranks[c->n - 1], c->ranks[lo],
			  where(g, c->ranks[lo], &w2), c->count[lo]);
}

static int check_comms(const struct wl_graph *g, struct wl_err *err)
{
	struct comms cs = { 0 };
	int rc = 0;

	for (uint32_t r = 0; r < g->nranks && rc == 0; r++)
		for (uint32_t i = 0; i < g->ranks[r].nnodes && rc == 0; i++) {
			const struct wl_node *n = &g->ranks[r].nodes[i];
			struct comm *c;

			if (n->kind != WL_COLL)
				continue;
			c = comm_of(&cs, n);
			if (c == NULL)
				rc = wl_err_set(err, "out of memory checking the communicators");
			else
				c->count[member(c, r)]++;
		}
	for (uint32_t i = 0; i < cs.n && rc == 0; i++)
		rc = comm_counts(g, &cs.c[i], err);
	comms_free(&cs);
	return rc;
}

int wl_graph_check(const struct wl_graph *g, struct wl_err *err)
{
	for (uint32_t r = 0; r < g->nranks; r++) {
		for (uint32_t i = 0; i < g->ranks[r].nnodes; i++)
			if (check_node(g, r, &g->ranks[r].nodes[i], err) != 0)
				return -1;
		if (check_deps(g, r, err) != 0)
			return -1;
	}
	return check_comms(g, err);
}
