/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_te.h"

#include <errno.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp_fabric.h"

int dp_te_create(struct dp_te *te, struct dp_fabric *f, const uint32_t (*pairs)[2], uint32_t n,
		 char *err, size_t errlen)
{
	return dp_te_create_demand(te, f, pairs, NULL, n, err, errlen);
}

/* Largest demand first, then list order (a stable sort of the pairs). */
static int pair_cmp(const void *a, const void *b)
{
	const struct dp_te_pair *x = a, *y = b;

	if (x->demand_bps != y->demand_bps)
		return x->demand_bps > y->demand_bps ? -1 : 1;
	return x->uplink < y->uplink ? -1 : x->uplink > y->uplink; /* (the list index, until placed) */
}

int dp_te_create_demand(struct dp_te *te, struct dp_fabric *f, const uint32_t (*pairs)[2],
			const double *demand, uint32_t n, char *err, size_t errlen)
{
	const struct topo *t = f->topo;

	memset(te, 0, sizeof(*te));
	te->fab = f;
	te->n_hosts = t->n_hosts;
	te->pair = calloc(n ? n : 1, sizeof(*te->pair));
	te->port_of = malloc((uint64_t)t->n_hosts * t->n_hosts * sizeof(*te->port_of));
	if (te->pair == NULL || te->port_of == NULL) {
		snprintf(err, errlen, "traffic engineering: out of memory");
		dp_te_free(te);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (pairs[i][0] >= t->n_hosts || pairs[i][1] >= t->n_hosts || (demand && !(demand[i] > 0))) {
			snprintf(err, errlen, "traffic engineering: %s", pairs[i][0] >= t->n_hosts ||
				 pairs[i][1] >= t->n_hosts ? "host index out of range" : "a demand not above 0");
			dp_te_free(te);
			return -EINVAL;
		}
		te->pair[i].src = pairs[i][0];
		te->pair[i].dst = pairs[i][1];
		te->pair[i].demand_bps = demand ? demand[i] : (double)t->links[t->hosts[pairs[i][0]].link].rate_bps;
		te->pair[i].uplink = (int32_t)i; /* (the sort's tie-break; placement sets it) */
	}
	te->n_pairs = n;
	qsort(te->pair, n, sizeof(*te->pair), pair_cmp);
	for (uint64_t i = 0; i < (uint64_t)t->n_hosts * t->n_hosts; i++)
		te->port_of[i] = -1; /* nothing installed until a placement succeeds */
	dp_te_compute(te);
	return 0;
}

void dp_te_free(struct dp_te *te)
{
	free(te->pair);
	free(te->port_of);
	memset(te, 0, sizeof(*te));
}

void dp_te_compute(struct dp_te *te)
{
	struct dp_fabric *f = te->fab;
	const struct topo *t = f->topo;
	/* residual capacity (bit/s) of each link direction, as channels are numbered */
	double *resid = malloc(f->n_chans * sizeof(*resid));

	if (resid == NULL)
		return; /* keep the previous placement */
	for (uint32_t c = 0; c < f->n_chans; c++)
		resid[c] = f->chans[c].up ? (double)f->chans[c].rate_bps : 0;
	for (uint64_t i = 0; i < (uint64_t)t->n_hosts * t->n_hosts; i++)
		te->port_of[i] = -1;
	te->unplaced = 0;

	for (uint32_t i = 0; i < te->n_pairs; i++) {
		struct dp_te_pair *p = &te->pair[i];
		const struct topo_host *hs = &t->hosts[p->src], *hd = &t->hosts[p->dst];
		uint32_t src_leaf = hs->leaf, dst_leaf_index = (uint32_t)t->switches[hd->leaf].leaf_index;
		double demand = p->demand_bps, best = -INFINITY;
		unsigned n_up;
		const uint16_t *ups = topo_route_group(f->routes, src_leaf, dst_leaf_index, &n_up);

		p->uplink = p->spine = -1;
		if (hs->leaf == hd->leaf)
			continue; /* one path: nothing to engineer */
		struct dp_chan *best_up = NULL, *best_down = NULL;
		for (unsigned k = 0; k < n_up; k++) {
			struct dp_chan *up = f->sw[src_leaf].out[ups[k]];
			if (up->to.kind != TOPO_NODE_SWITCH)
				continue;
			uint32_t spine = up->to.index;
			unsigned n_down;
			const uint16_t *downs = topo_route_group(f->routes, spine, dst_leaf_index, &n_down);
			/* a 2-tier path: the spine reaches the destination leaf directly */
			if (n_down == 0 || f->sw[spine].out[downs[0]]->to.kind != TOPO_NODE_SWITCH ||
			    f->sw[spine].out[downs[0]]->to.index != hd->leaf)
				continue;
			struct dp_chan *down = f->sw[spine].out[downs[0]];
			double cap = resid[up - f->chans] < resid[down - f->chans] ? resid[up - f->chans]
										      : resid[down - f->chans];
			if (cap > best) {
				best = cap;
				best_up = up;
				best_down = down;
				p->uplink = ups[k];
				p->spine = (int32_t)spine;
			}
		}
		if (best_up == NULL) {
			te->unplaced++;
			continue;
		}
		resid[best_up - f->chans] -= demand;
		resid[best_down - f->chans] -= demand;
		te->port_of[(uint64_t)p->src * t->n_hosts + p->dst] = p->uplink;
	}
	te->computes++;
	free(resid);
}

void dp_te_print(const struct dp_te *te, FILE *out)
{
	const struct topo *t = te->fab->topo;

	for (uint32_t i = 0; i < te->n_pairs; i++) {
		const struct dp_te_pair *p = &te->pair[i];
		if (p->spine < 0)
			fprintf(out, "te: %s > %s: %s\n", t->hosts[p->src].name, t->hosts[p->dst].name,
				t->hosts[p->src].leaf == t->hosts[p->dst].leaf ? "same leaf" : "ECMP (not placed)");
		else
			fprintf(out, "te: %s > %s via %s (%s port %d)\n", t->hosts[p->src].name,
				t->hosts[p->dst].name, t->switches[p->spine].name,
				t->switches[t->hosts[p->src].leaf].name, p->uplink);
	}
}
