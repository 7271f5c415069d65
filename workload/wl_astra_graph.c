/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_astra_to_graph(): an ASTRA-sim DATA workload as a job graph, following
 * the order of ASTRA-sim 1.0's Workload::iterate_data_parallel.
 */
#include <stdlib.h>
#include <string.h>

#include "wl_astra.h"
#include "wl_graph.h"

/* What is being built: the same nodes on every rank. */
struct build {
	const struct wl_astra *w;
	const char *file;
	struct wl_graph *g;
	uint32_t *world;
	uint64_t cycle_ps;
	uint64_t next_id;
	uint64_t prev;          /* the node before, in the rank's program order */
	struct wl_err *err;
};

static int put(struct build *b, struct wl_node *n)
{
	n->id = b->next_id++;
	for (uint32_t r = 0; r < b->g->nranks; r++)
		if (wl_graph_add(b->g, r, n, b->err) != 0)
			return -1;
	return 0;
}

/* A compute node of cycles after the nodes deps[0..ndeps) (ids; 0: none). */
static int compute(struct build *b, const struct wl_astra_layer *l, uint64_t cycles,
		   const uint64_t *ids, uint32_t nids)
{
	struct wl_dep deps[2];
	struct wl_node n = { .kind = WL_COMPUTE, .deps = deps };

	if (b->cycle_ps != 0 && cycles > UINT64_MAX / b->cycle_ps)
		return wl_err_set(b->err, "%s:%u: layer '%s': %llu cycles overflow at %llu ps each",
				  b->file, l->line, l->name, (unsigned long long)cycles,
				  (unsigned long long)b->cycle_ps);
	n.duration_ns = cycles * b->cycle_ps / 1000;
	for (uint32_t i = 0; i < nids; i++)
		if (ids[i] != 0)
			deps[n.ndeps++] = (struct wl_dep){ ids[i], false };
	return put(b, &n);
}

static int collective(struct build *b, const struct wl_astra_layer *l, uint64_t after)
{
	static const enum wl_coll ops[WL_AC_COUNT] = {
		[WL_AC_ALLREDUCE] = WL_ALLREDUCE, [WL_AC_ALLGATHER] = WL_ALLGATHER,
		[WL_AC_ALLTOALL] = WL_ALLTOALL, [WL_AC_REDUCESCATTER] = WL_REDUCESCATTER,
	};
	struct wl_dep dep = { after, false };
	struct wl_node n = { .kind = WL_COLL, .bytes = l->wg.comm_bytes, .ranks = b->world,
			     .nranks = b->g->nranks, .deps = &dep, .ndeps = 1 };

	if (l->wg.comm == WL_AC_ALLREDUCE_ALLTOALL)
		return wl_err_set(b->err, "%s:%u: layer '%s': weight gradient ALLREDUCEALLTOALL is two collectives over groups the file does not give",
				  b->file, l->line, l->name);
	n.op = ops[l->wg.comm];
	return put(b, &n);
}

/* One pass; wg[i]: the id of layer i's weight-gradient collective (0: none),
 * read for the forward, written in the backward. */
static int one_pass(struct build *b, uint64_t *wg)
{
	const struct wl_astra *w = b->w;
	uint64_t prev = b->prev;

	for (uint32_t i = 0; i < w->nlayers; i++) {
		uint64_t ids[2] = { prev, wg[i] };

		if (compute(b, &w->layers[i], w->layers[i].fwd.compute_cycles, ids, 2) != 0)
			return -1;
		prev = b->next_id - 1;
	}
	for (uint32_t i = w->nlayers; i-- > 0;) {
		const struct wl_astra_layer *l = &w->layers[i];
		uint64_t wgc;

		if (compute(b, l, l->wg.compute_cycles, &prev, 1) != 0)
			return -1;
		prev = wgc = b->next_id - 1;
		wg[i] = 0;
		if (l->wg.comm != WL_AC_NONE) {
			if (collective(b, l, wgc) != 0)
				return -1;
			wg[i] = b->next_id - 1;
		}
		if (i > 0) {
			if (compute(b, l, l->ig.compute_cycles, &wgc, 1) != 0)
				return -1;
			prev = b->next_id - 1;
		}
	}
	b->prev = prev;
	return 0;
}

int wl_astra_to_graph(const struct wl_astra *w, const char *file, uint32_t nranks,
		      uint32_t passes, uint64_t cycle_ps, struct wl_graph *g,
		      struct wl_err *err)
{
	struct build b = { w, file, g, NULL, cycle_ps, 1, 0, err };
	uint64_t *wg = NULL;
	int rc = -1;

	memset(g, 0, sizeof(*g));
	if (w->par != WL_PAR_DATA)
		return wl_err_set(err, "%s:1: %s: DATA is the one parallelism turned into a job graph so far",
				  file, wl_astra_par_name(w->par));
	if (wl_graph_init(g, nranks, err) != 0)
		return -1;
	b.world = malloc((size_t)nranks * sizeof(*b.world));
	wg = calloc((size_t)w->nlayers + 1, sizeof(*wg));
	if (b.world == NULL || wg == NULL) {
		wl_err_set(err, "%s: out of memory", file);
		goto out;
	}
	for (uint32_t r = 0; r < nranks; r++)
		b.world[r] = r;
	rc = 0;
	for (uint32_t p = 0; p < passes && rc == 0; p++)
		rc = one_pass(&b, wg);
out:
	free(b.world);
	free(wg);
	if (rc != 0)
		wl_graph_free(g);
	return rc;
}
