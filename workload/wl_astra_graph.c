/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_astra_to_graph(): an ASTRA-sim workload as a job graph, following the
 * order of ASTRA-sim 1.0's Workload::iterate_data_parallel (DATA) and
 * Workload::iterate_hybrid_parallel_data_model (MODEL and the HYBRID_*
 * below), and the groups of Workload::decode_involved_dimensions
 * (astra-sim/workload/Workload.cc, astra-sim/astra-sim, read at the commit
 * the library holds: see wl_astra.h).
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
	uint64_t cycle_ps;
	uint64_t next_id;
	uint64_t prev;          /* the node before, in the rank's program order */
	struct wl_err *err;
	/* each kind of group's members, made once and shared by the nodes
	 * (wl_graph_share): [G_WORLD] one group of every rank, [G_MODEL] and
	 * [G_DATA] the groups in their index order (group_index), each of size[] */
	uint32_t **grp[3];
	uint32_t size[3];
	bool consecutive[3];    /* groups of consecutive ranks, else of ranks n / size apart */
};

/* Who takes part in a pass's collective: everyone, the rank's model group or its data group. */
enum group { G_WORLD, G_MODEL, G_DATA, G_NONE };

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
	struct wl_dep deps[3];
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

/* Group g of the kind in `which` (members ascending): share it with the graph. 0, or -1 with err set. */
static int group_put(struct build *b, enum group which, uint32_t g, const uint32_t *m)
{
	b->grp[which][g] = wl_graph_share(b->g, m, b->size[which], b->err);
	return b->grp[which][g] ? 0 : -1;
}

/* Room for the n groups of size members of kind which (consecutive ranks or ranks apart). 0 or -1. */
static int group_kind(struct build *b, enum group which, uint32_t n, uint32_t size, bool consecutive)
{
	b->size[which] = size;
	b->consecutive[which] = consecutive;
	b->grp[which] = calloc(n, sizeof(*b->grp[which]));
	return b->grp[which] ? 0 : wl_err_set(b->err, "%s: out of memory", b->file);
}

/*
 * The groups, once: model groups are blocks of G consecutive ranks (the
 * logical topology's first dimensions), data groups the ranks G apart, for
 * HYBRID_DATA_MODEL and HYBRID_TRANSFORMER; HYBRID_MODEL_DATA has the data
 * dimension first, so its data groups are the blocks, of nranks / G. Each
 * group's members are the graph's, shared by every node over it: a copy per
 * rank per collective was nranks^2 members for the world (2.4 GB of 4-byte
 * ranks at 24,576 ranks, each collective). Returns 0, or -1 with err set.
 */
static int groups_make(struct build *b)
{
	uint32_t n = b->g->nranks, block = b->w->mp_group, *m = malloc((size_t)n * sizeof(*m));
	bool swap = b->w->par == WL_PAR_HYBRID_MODEL_DATA;
	enum group blocks = swap ? G_DATA : G_MODEL, apart = swap ? G_MODEL : G_DATA;
	int rc;

	if (m == NULL)
		return wl_err_set(b->err, "%s: out of memory", b->file);
	for (uint32_t r = 0; r < n; r++)
		m[r] = r;
	rc = group_kind(b, G_WORLD, 1, n, true);
	rc = rc ? rc : group_put(b, G_WORLD, 0, m);
	if (block != 0) { /* (the hybrids: DATA and MODEL have the world alone) */
		block = swap ? n / block : block;
		rc = rc ? rc : group_kind(b, blocks, n / block, block, true);
		rc = rc ? rc : group_kind(b, apart, block, n / block, false);
	}
	for (uint32_t k = 0; block && rc == 0 && k < n / block; k++)
		rc = group_put(b, blocks, k, m + (size_t)k * block);
	for (uint32_t k = 0; block && rc == 0 && k < block; k++) {
		for (uint32_t i = 0; i < n / block; i++)
			m[i] = k + i * block;
		rc = group_put(b, apart, k, m);
	}
	free(m);
	return rc;
}

/* Rank r's group of kind which, members ascending (b->size[which] of them). */
static uint32_t *group_of(const struct build *b, enum group which, uint32_t r)
{
	uint32_t size = b->size[which];

	return b->grp[which][b->consecutive[which] ? r / size : r % (b->g->nranks / size)];
}

/* Pass p's collective of layer l after node `after`, over each rank's group; *id its id, or 0
 * when there is none (no comm, or a group of one rank: nothing to do). */
static int collective(struct build *b, const struct wl_astra_layer *l, const struct wl_astra_pass *p,
		      enum group which, uint64_t after, uint64_t *id)
{
	static const enum wl_coll ops[WL_AC_COUNT] = {
		[WL_AC_ALLREDUCE] = WL_ALLREDUCE, [WL_AC_ALLGATHER] = WL_ALLGATHER,
		[WL_AC_ALLTOALL] = WL_ALLTOALL, [WL_AC_REDUCESCATTER] = WL_REDUCESCATTER,
	};
	struct wl_dep dep = { after, false };
	struct wl_node n = { .kind = WL_COLL, .bytes = p->comm_bytes, .deps = &dep, .ndeps = 1,
			     .id = b->next_id, .ranks_shared = true };

	*id = 0;
	if (p->comm == WL_AC_NONE || which == G_NONE || b->size[which] < 2)
		return 0;
	if (p->comm == WL_AC_ALLREDUCE_ALLTOALL)
		return wl_err_set(b->err, "%s:%u: layer '%s': %s ALLREDUCEALLTOALL is two collectives over groups the file does not give",
				  b->file, l->line, l->name, p == &l->wg ? "weight gradient" : p == &l->fwd ? "forward" : "input gradient");
	n.op = ops[p->comm];
	n.nranks = b->size[which];
	for (uint32_t r = 0; r < b->g->nranks; r++) {
		n.ranks = group_of(b, which, r);
		if (wl_graph_add(b->g, r, &n, b->err) != 0)
			return -1;
	}
	*id = b->next_id++;
	return 0;
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
		if (collective(b, l, &l->wg, G_WORLD, wgc, &wg[i]) != 0)
			return -1;
		if (i > 0) {
			if (compute(b, l, l->ig.compute_cycles, &wgc, 1) != 0)
				return -1;
			prev = b->next_id - 1;
		}
	}
	b->prev = prev;
	return 0;
}

/* The groups of each pass's collectives (Workload::decode_involved_dimensions): fwd, ig, wg. */
static void pass_groups(enum wl_astra_par par, enum group *fwd, enum group *ig, enum group *wg)
{
	*fwd = *ig = par == WL_PAR_MODEL ? G_WORLD : G_MODEL;
	*wg = par == WL_PAR_MODEL ? G_NONE : G_DATA;
}

/*
 * One pass of MODEL or a HYBRID_* (Workload::iterate_hybrid_parallel_data_model,
 * _model_data, iterate_model_parallel): forward, layer by layer, the compute
 * (after the layer's weight-gradient collective of the pass before), then its
 * forward collective, waited for; then from the last layer back: the
 * input-gradient compute, its collective (none for the first layer; not
 * waited for yet), the weight-gradient compute, its collective (not waited
 * for); the next layer's input gradient waits for this layer's
 * input-gradient collective. HYBRID_TRANSFORMER
 * (iterate_hybrid_parallel_Transformer) waits for each input-gradient
 * collective at once, the first layer's included, before the
 * weight-gradient compute. wg[i] as in one_pass; ig holds the open
 * input-gradient collective (0: none).
 */
static int hybrid_pass(struct build *b, uint64_t *wg, uint64_t *ig)
{
	const struct wl_astra *w = b->w;
	bool blocking = w->par == WL_PAR_HYBRID_TRANSFORMER;
	enum group gf, gi, gw;
	uint64_t c;

	pass_groups(w->par, &gf, &gi, &gw);
	for (uint32_t i = 0; i < w->nlayers; i++) {
		const struct wl_astra_layer *l = &w->layers[i];
		uint64_t ids[3] = { b->prev, *ig, wg[i] };
		if (compute(b, l, l->fwd.compute_cycles, ids, 3) != 0 ||
		    collective(b, l, &l->fwd, gf, b->next_id - 1, &c) != 0)
			return -1;
		*ig = 0;
		b->prev = c ? c : b->next_id - 1;
	}
	for (uint32_t i = w->nlayers; i-- > 0;) {
		const struct wl_astra_layer *l = &w->layers[i];
		uint64_t ids[2] = { b->prev, *ig }, igc = 0;
		if (compute(b, l, l->ig.compute_cycles, ids, 2) != 0)
			return -1;
		uint64_t igd = b->next_id - 1;
		if ((i > 0 || blocking) && collective(b, l, &l->ig, gi, igd, &igc) != 0)
			return -1;
		if (blocking && igc) /* (waited for: the weight gradient starts after it) */
			igd = igc;
		if (compute(b, l, l->wg.compute_cycles, &igd, 1) != 0)
			return -1;
		b->prev = b->next_id - 1;
		if (collective(b, l, &l->wg, gw, b->prev, &wg[i]) != 0)
			return -1;
		*ig = blocking ? 0 : igc;
	}
	return 0;
}

/* The model group size the hybrids need: model_parallel_NPU_group, dividing nranks. 0 or -1. */
static int check_group(const struct wl_astra *w, const char *file, uint32_t nranks, struct wl_err *err)
{
	if (w->par == WL_PAR_DATA || w->par == WL_PAR_MODEL)
		return 0;
	if (w->par != WL_PAR_HYBRID_DATA_MODEL && w->par != WL_PAR_HYBRID_MODEL_DATA &&
	    w->par != WL_PAR_HYBRID_TRANSFORMER)
		return wl_err_set(err, "%s:1: %s: not turned into a job graph yet (DATA, MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA and HYBRID_TRANSFORMER are)",
				  file, wl_astra_par_name(w->par));
	if (w->mp_group == 0 || nranks % w->mp_group != 0)
		return wl_err_set(err, "%s:1: %s wants \"model_parallel_NPU_group: G\" after it, G dividing the job's %u ranks (%s): the model groups are blocks of G ranks, as ASTRA-sim's first logical dimensions",
				  file, wl_astra_par_name(w->par), nranks,
				  w->mp_group ? "it does not" : "none given");
	return 0;
}

int wl_astra_to_graph(const struct wl_astra *w, const char *file, uint32_t nranks,
		      uint32_t passes, uint64_t cycle_ps, struct wl_graph *g,
		      struct wl_err *err)
{
	struct build b = { .w = w, .file = file, .g = g, .cycle_ps = cycle_ps, .next_id = 1, .err = err };
	uint64_t *wg = NULL, ig = 0;
	int rc = -1;

	memset(g, 0, sizeof(*g));
	if (check_group(w, file, nranks, err) != 0 || wl_graph_init(g, nranks, err) != 0)
		return -1;
	wg = calloc((size_t)w->nlayers + 1, sizeof(*wg));
	if (wg == NULL) {
		wl_err_set(err, "%s: out of memory", file);
		goto out;
	}
	rc = groups_make(&b);
	for (uint32_t p = 0; p < passes && rc == 0; p++)
		rc = w->par == WL_PAR_DATA ? one_pass(&b, wg) : hybrid_pass(&b, wg, &ig);
out:
	for (int k = 0; k < 3; k++)
		free(b.grp[k]); /* (the members are the graph's) */
	free(wg);
	if (rc != 0)
		wl_graph_free(g);
	return rc;
}
