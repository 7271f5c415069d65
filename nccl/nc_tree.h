/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nc_tree: NCCL's double binary tree over servers (nodes) and the chain
 * inside a server (NCCL 2.21.5, read from src/graph/trees.cc and
 * connect.cc; nothing copied).
 *
 * Tree 0 (ncclGetBtree) is a binary tree rooted at node 0 whose inner
 * nodes are the even indices: a node's parent and children come from its
 * lowest set bit. Tree 1 (ncclGetDtree) is tree 0 mirrored (node n-1-i)
 * when the node count is even and shifted by one (node i+1 mod n) when it
 * is odd, so that a node that is a leaf in one tree is an inner node in
 * the other. NCCL keeps the two children slots as it computes them: the
 * root has only child slot 1 (child[0] == -1).
 *
 * Inside a server a tree channel is a chain (the NCCL_TOPO_PATTERN_TREE
 * that ncclTopoCompute falls back to on sm90: ncclTopoSearchNextGpuSort
 * offers an NVSwitch GPU only its next neighbour), head GPU k, then k+1,
 * ..., k+G-1 (mod G); the head is the server's link to its parent and to
 * its children, on NIC k (search.cc: "Trees are symmetric"). Of C runtime
 * channels (C even: ncclTopoPreset duplicates the search channels), the
 * first C/2 follow tree 0 and the last C/2 tree 1 (connectTrees);
 * channel c has head GPU (c mod C/2) mod G.
 */
#ifndef NC_TREE_H
#define NC_TREE_H

#include <stdint.h>

#define NC_TREE_MAX_ARITY 3  /* NCCL_MAX_TREE_ARITY: chain + two child nodes */

/* A node's links in one tree: indices, -1 for none. */
struct nc_tree_node {
	int parent;
	int child[2];
};

/* A rank's links on one channel: ranks (server * gpus + gpu), -1 for none;
 * down[] filled in NCCL's order: the chain's next GPU, then child 0's
 * head, then child 1's head. */
struct nc_tree_rank {
	int tree; /* 0 or 1 */
	int up;
	int down[NC_TREE_MAX_ARITY];
};

struct nc_tree_cfg {
	uint32_t servers;  /* >= 1 */
	uint32_t gpus;     /* GPUs per server, >= 1 */
	uint32_t channels; /* runtime channels, even, >= 2 */
};

/* Tree 0 for node of nnodes into *t; 0, or -EINVAL (nnodes == 0,
 * nnodes > INT32_MAX, node >= nnodes, t NULL). */
int nc_tree_btree(uint32_t nnodes, uint32_t node, struct nc_tree_node *t);

/* Trees 0 and 1 for node of nnodes; 0, or -EINVAL as nc_tree_btree. */
int nc_tree_dtree(uint32_t nnodes, uint32_t node, struct nc_tree_node *t0,
		  struct nc_tree_node *t1);

/* The links of rank on channel; 0, or -EINVAL for a bad cfg (channels odd
 * or 0, servers * gpus > INT32_MAX), channel or rank. */
int nc_tree_rank(const struct nc_tree_cfg *cfg, uint32_t channel, uint32_t rank,
		 struct nc_tree_rank *out);

#endif /* NC_TREE_H */
