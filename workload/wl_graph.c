/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wl_graph.h"

#define WL_MAX_RANKS (1u << 20)

static const char *const coll_names[WL_COLL_COUNT] = {
	"ALL_REDUCE", "REDUCE", "ALL_GATHER", "GATHER", "SCATTER",
	"BROADCAST", "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK",
	"BARRIER",
};

const char *wl_coll_name(enum wl_coll op)
{
	return (unsigned)op < WL_COLL_COUNT ? coll_names[op] : "?";
}

int wl_graph_init(struct wl_graph *g, uint32_t nranks, struct wl_err *err)
{
	memset(g, 0, sizeof(*g));
	if (nranks == 0 || nranks > WL_MAX_RANKS)
		return wl_err_set(err, "%u ranks: a job has 1 to %u", nranks, WL_MAX_RANKS);
	g->ranks = calloc(nranks, sizeof(*g->ranks));
	if (g->ranks == NULL)
		return wl_err_set(err, "out of memory for %u ranks", nranks);
	g->nranks = nranks;
	return 0;
}

static void node_free(struct wl_node *n)
{
	if (!n->ranks_shared)
		free(n->ranks);
	free(n->deps);
}

void wl_graph_free(struct wl_graph *g)
{
	for (uint32_t r = 0; g->ranks != NULL && r < g->nranks; r++) {
		struct wl_rank *rk = &g->ranks[r];

		for (uint32_t i = 0; i < rk->nnodes; i++)
			node_free(&rk->nodes[i]);
		free(rk->nodes);
		free(rk->file);
	}
	free(g->ranks);
	for (uint32_t i = 0; i < g->nshared; i++)
		free(g->shared[i]);
	free(g->shared);
	memset(g, 0, sizeof(*g));
}

int wl_graph_set_file(struct wl_graph *g, uint32_t rank, const char *file,
		      struct wl_err *err)
{
	char *copy;

	if (rank >= g->nranks)
		return wl_err_set(err, "rank %u: the job has %u ranks", rank, g->nranks);
	copy = strdup(file);
	if (copy == NULL)
		return wl_err_set(err, "%s: out of memory", file);
	free(g->ranks[rank].file);
	g->ranks[rank].file = copy;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static void *dup_array(const void *src, size_t n, size_t size)
{
	void *d;

	if (n == 0)
		return NULL;
	d = malloc(n * size);
	if (d != NULL)
		memcpy(d, src, n * size);
	return d;
}

static int grow(struct wl_rank *rk)
{
	uint32_t cap = rk->cap ? rk->cap * 2 : 16;
	struct wl_node *p;

	if (rk->cap >= UINT32_MAX / 2)
		return -1;
	p = realloc(rk->nodes, (size_t)cap * sizeof(*p));
	if (p == NULL)
		return -1;
	rk->nodes = p;
	rk->cap = cap;
	return 0;
}

int wl_graph_add(struct wl_graph *g, uint32_t rank, const struct wl_node *n,
		 struct wl_err *err)
{
	struct wl_rank *rk;
	struct wl_node c = *n;

	if (rank >= g->nranks)
		return wl_err_set(err, "rank %u: the job has %u ranks", rank, g->nranks);
	rk = &g->ranks[rank];
	if (rk->nnodes == rk->cap && grow(rk) != 0)
		return wl_err_set(err, "rank %u: out of memory", rank);
	c.ranks = n->ranks_shared ? n->ranks : dup_array(n->ranks, n->nranks, sizeof(*n->ranks));
	c.deps = dup_array(n->deps, n->ndeps, sizeof(*n->deps));
	if ((n->nranks && c.ranks == NULL) || (n->ndeps && c.deps == NULL)) {
		node_free(&c);
		return wl_err_set(err, "rank %u: node %llu: out of memory", rank,
				  (unsigned long long)n->id);
	}
	if (c.nranks > 1 && !c.ranks_shared) /* (shared ones were sorted once) */
		qsort(c.ranks, c.nranks, sizeof(*c.ranks), cmp_u32);
	rk->nodes[rk->nnodes++] = c;
	return 0;
}

uint32_t *wl_graph_share(struct wl_graph *g, const uint32_t *ranks, uint32_t n, struct wl_err *err)
{
	/* the list doubles when its count reaches a power of two (thousands of groups at scale) */
	bool full = (g->nshared & (g->nshared - 1)) == 0;
	uint32_t **list = full ? realloc(g->shared, (g->nshared ? 2 * (size_t)g->nshared : 1) * sizeof(*list))
			       : g->shared;
	uint32_t *c = dup_array(ranks, n, sizeof(*ranks));

	if (list != NULL)
		g->shared = list;
	if (list == NULL || c == NULL) {
		free(c);
		wl_err_set(err, "out of memory for a communicator of %u ranks", n);
		return NULL;
	}
	qsort(c, n, sizeof(*c), cmp_u32);
	g->shared[g->nshared++] = c;
	return c;
}

const struct wl_node *wl_graph_find(const struct wl_graph *g, uint32_t rank,
				    uint64_t id)
{
	if (rank >= g->nranks)
		return NULL;
	for (uint32_t i = 0; i < g->ranks[rank].nnodes; i++)
		if (g->ranks[rank].nodes[i].id == id)
			return &g->ranks[rank].nodes[i];
	return NULL;
}
