/* SPDX-License-Identifier: BSD-3-Clause */
/* nc_tree: NCCL's double binary tree and the intra-server chain (see nc_tree.h). */
#include "nc_tree.h"

#include <errno.h>
#include <stddef.h>

/* Tree 0 with n >= 1, r < n checked by the caller. */
static void btree(uint32_t n, uint32_t r, struct nc_tree_node *t)
{
	uint32_t bit;

	/* r's lowest set bit; for the root, the first power of two >= n */
	for (bit = 1; bit < n; bit <<= 1)
		if (bit & r)
			break;
	if (r == 0) {
		t->parent = -1;
		t->child[0] = -1;
		t->child[1] = n > 1 ? (int)(bit >> 1) : -1;
		return;
	}
	/* parent: clear the bit and set the next one up, or just clear it when
	 * that is past the end */
	uint64_t up = (uint64_t)(r ^ bit) | ((uint64_t)bit << 1);
	if (up >= n)
		up = r ^ bit;
	t->parent = (int)up;
	uint32_t low = bit >> 1;
	t->child[0] = low == 0 ? -1 : (int)(r - low);
	/* child 1: r + low, halving low until it is inside */
	t->child[1] = -1;
	for (; low != 0; low >>= 1) {
		if ((uint64_t)r + low < n) {
			t->child[1] = (int)(r + low);
			break;
		}
	}
}

static int nodes_ok(uint32_t nnodes, uint32_t node)
{
	return nnodes != 0 && nnodes <= (uint32_t)INT32_MAX && node < nnodes;
}

int nc_tree_btree(uint32_t nnodes, uint32_t node, struct nc_tree_node *t)
{
	if (!nodes_ok(nnodes, node) || t == NULL)
		return -EINVAL;
	btree(nnodes, node, t);
	return 0;
}

/* Maps a tree-0 index of the mirrored / shifted tree back to a node. */
static int remap(int x, uint32_t n)
{
	if (x < 0)
		return -1;
	if (n % 2 == 1)
		return (int)(((uint32_t)x + 1) % n);
	return (int)(n - 1 - (uint32_t)x);
}

int nc_tree_dtree(uint32_t nnodes, uint32_t node, struct nc_tree_node *t0,
		  struct nc_tree_node *t1)
{
	if (!nodes_ok(nnodes, node) || t0 == NULL || t1 == NULL)
		return -EINVAL;
	btree(nnodes, node, t0);
	/* odd: shift by one; even: mirror */
	uint32_t other = nnodes % 2 == 1 ? (node + nnodes - 1) % nnodes : nnodes - 1 - node;
	struct nc_tree_node m;
	btree(nnodes, other, &m);
	t1->parent = remap(m.parent, nnodes);
	t1->child[0] = remap(m.child[0], nnodes);
	t1->child[1] = remap(m.child[1], nnodes);
	return 0;
}

/* Appends r to the first free down slot (connect.cc setTreeDown). */
static void add_down(struct nc_tree_rank *out, int r)
{
	if (r < 0)
		return;
	for (unsigned int i = 0; i < NC_TREE_MAX_ARITY; i++) {
		if (out->down[i] < 0) {
			out->down[i] = r;
			return;
		}
	}
}

int nc_tree_rank(const struct nc_tree_cfg *cfg, uint32_t channel, uint32_t rank,
		 struct nc_tree_rank *out)
{
	if (cfg == NULL || out == NULL || cfg->servers == 0 || cfg->gpus == 0 ||
	    cfg->channels == 0 || cfg->channels % 2 != 0 || channel >= cfg->channels ||
	    (uint64_t)cfg->servers * cfg->gpus > (uint64_t)INT32_MAX ||
	    rank >= cfg->servers * cfg->gpus)
		return -EINVAL;
	uint32_t g = cfg->gpus, half = cfg->channels / 2;
	uint32_t s = rank / g, gpu = rank % g, k = (channel % half) % g;
	uint32_t pos = (gpu + g - k) % g; /* chain k, k+1, ..., k+G-1 */
	struct nc_tree_node t[2];

	(void)nc_tree_dtree(cfg->servers, s, &t[0], &t[1]);
	out->tree = channel < half ? 0 : 1;
	out->up = pos == 0 ? -1 : (int)(s * g + (gpu + g - 1) % g);
	for (unsigned int i = 0; i < NC_TREE_MAX_ARITY; i++)
		out->down[i] = -1;
	if (pos + 1 < g)
		add_down(out, (int)(s * g + (gpu + 1) % g));
	if (pos != 0)
		return 0;
	/* the head links its server to the parent's and children's heads */
	const struct nc_tree_node *tn = &t[out->tree];
	if (tn->parent >= 0)
		out->up = (int)((uint32_t)tn->parent * g + k);
	for (unsigned int i = 0; i < 2; i++)
		if (tn->child[i] >= 0)
			add_down(out, (int)((uint32_t)tn->child[i] * g + k));
	return 0;
}
