/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_te: traffic engineering, a central controller that places each flow of a
 * known traffic matrix on an explicit path and installs it in the source leaf.
 *
 * The traffic matrix is a list of host pairs, each wanting its NIC's line rate
 * (a collective's connections: a ring, a mesh, an incast) or a demand of its
 * own (dp_te_create_demand). The controller runs a greedy constrained
 * shortest path first: flows by demand, largest first (equal demands in list
 * order), each on the
 * shortest path (leaf -> spine -> leaf) with the most residual capacity left
 * on its two links, ties to the lowest spine; the flow's demand is then taken
 * off both links. A leaf forwarding a packet from a placed pair sends it on
 * the pair's uplink; every other packet falls back to the switch's own load
 * balancing (ECMP). After a link or switch failure the placement is computed
 * again over what is left (dp_fabric calls dp_te_compute()).
 *
 * Paths of two tiers (leaf-spine-leaf) are placed; pairs under one leaf need
 * no choice, and pairs whose leaves are further apart (3-tier) fall back to
 * ECMP (counted in `unplaced`).
 */
#ifndef DP_TE_H
#define DP_TE_H

#include <stdint.h>
#include <stdio.h>

struct dp_fabric;

struct dp_te_pair {
	uint32_t src, dst;   /* host indices */
	int32_t uplink;      /* port of the source leaf, -1 when not placed */
	int32_t spine;       /* switch index of the chosen spine, -1 */
	double demand_bps;   /* what placing it takes off each link of its path */
};

struct dp_te {
	struct dp_fabric *fab;
	uint32_t n_pairs;
	struct dp_te_pair *pair;
	int32_t *port_of;    /* [src * n_hosts + dst]: installed uplink, or -1 */
	uint32_t n_hosts;
	uint64_t computes;   /* placements computed (1 + one per failure) */
	uint32_t unplaced;   /* pairs left to ECMP in the last placement */
	uint64_t hits;       /* packets forwarded on an installed path */
};

/*
 * A controller for the pairs (copied) of fabric f, with a first placement.
 * Returns 0, or with a message -ENOMEM, or -EINVAL (a host index out of range).
 */
int dp_te_create(struct dp_te *te, struct dp_fabric *f, const uint32_t (*pairs)[2], uint32_t n,
		 char *err, size_t errlen);
/*
 * The same with each pair's demand (bit/s, demand[i] for pairs[i]; NULL:
 * each its source NIC's line rate, as dp_te_create). Pairs are placed
 * largest demand first, equal demands in the order given. Returns 0, or
 * with a message -ENOMEM, or -EINVAL (a host index out of range, a demand
 * not above 0).
 */
int dp_te_create_demand(struct dp_te *te, struct dp_fabric *f, const uint32_t (*pairs)[2],
			const double *demand, uint32_t n, char *err, size_t errlen);
void dp_te_free(struct dp_te *te);

/* Place every pair again over the links and switches that are up now. */
void dp_te_compute(struct dp_te *te);

/* Installed uplink of (src, dst) at its source leaf, or -1 (use ECMP). */
static inline int dp_te_lookup(const struct dp_te *te, uint32_t src, uint32_t dst)
{
	return te->port_of[(uint64_t)src * te->n_hosts + dst];
}

/* One line per pair, in placement order: "te: h0 > h4 via spine2 (leaf0 port 6)". */
void dp_te_print(const struct dp_te *te, FILE *out);

#endif /* DP_TE_H */
