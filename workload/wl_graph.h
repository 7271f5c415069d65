/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_graph: a training job as a graph per rank.
 *
 * Each rank runs its own list of nodes: compute (a duration), a collective
 * over a sub-communicator (op, bytes, the ranks taking part), or a
 * point-to-point send or receive (peer, bytes, tag). A node may start when
 * every node it depends on, data or control, has finished on the same rank;
 * the nodes of different ranks meet only through their communication.
 * Node ids are unique within a rank, not across ranks (as in Chakra: one
 * trace per rank, each with its own ids).
 *
 * wl_graph_check() refuses a graph a run could not finish or would run
 * wrongly: a dependency on a node that is not there, a dependency cycle,
 * a communicator naming a rank the job does not have or leaving out the rank
 * that runs the collective, a send to itself, and members of one
 * communicator that do not run the same number of collectives over it.
 * libc only.
 */
#ifndef WL_GRAPH_H
#define WL_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "wl_err.h"

enum wl_kind {
	WL_COMPUTE,
	WL_COLL,
	WL_SEND,
	WL_RECV,
};

/* The collectives of Chakra's CollectiveCommType, same order. */
enum wl_coll {
	WL_ALLREDUCE,
	WL_REDUCE,
	WL_ALLGATHER,
	WL_GATHER,
	WL_SCATTER,
	WL_BROADCAST,
	WL_ALLTOALL,
	WL_REDUCESCATTER,
	WL_REDUCESCATTER_BLOCK,
	WL_BARRIER,
	WL_COLL_COUNT,
};

struct wl_dep {
	uint64_t id;
	bool ctrl; /* control dependency (ordering only), else data */
};

struct wl_node {
	uint64_t id;
	enum wl_kind kind;
	uint64_t duration_ns;  /* WL_COMPUTE */
	enum wl_coll op;       /* WL_COLL */
	uint64_t bytes;        /* WL_COLL, WL_SEND, WL_RECV */
	uint32_t *ranks;       /* WL_COLL: the communicator, ascending */
	uint32_t nranks;
	bool ranks_shared;     /* ranks is the graph's (wl_graph_share): not copied, not freed with the node */
	uint32_t peer;         /* WL_SEND: destination, WL_RECV: source */
	uint64_t tag;          /* WL_SEND, WL_RECV */
	struct wl_dep *deps;
	uint32_t ndeps;
};

struct wl_rank {
	char *file;            /* where its nodes came from, for errors; may be NULL */
	struct wl_node *nodes;
	uint32_t nnodes, cap;
};

struct wl_graph {
	uint32_t nranks;
	struct wl_rank *ranks;
	uint32_t **shared;     /* the communicators nodes share (wl_graph_share) */
	uint32_t nshared;
};

/* Name of a collective ("ALL_REDUCE", Chakra's spelling); "?" when out of range. */
const char *wl_coll_name(enum wl_coll op);

/* An empty graph of nranks ranks (1 .. 1<<20). Returns 0, or -1 with err set
 * (bad count, out of memory). */
int wl_graph_init(struct wl_graph *g, uint32_t nranks, struct wl_err *err);

/* Frees everything the graph holds; g may be zeroed or half built. */
void wl_graph_free(struct wl_graph *g);

/* Records the file rank's nodes come from (copied). Returns 0 or -1. */
int wl_graph_set_file(struct wl_graph *g, uint32_t rank, const char *file,
		      struct wl_err *err);

/* Appends a copy of n (its ranks and deps arrays copied too, the ranks
 * sorted; ranks not copied when ranks_shared: see wl_graph_share) to rank's
 * nodes. Returns 0, or -1 with err set (rank out of range, out of memory).
 * Nothing is checked here: see wl_graph_check(). */
int wl_graph_add(struct wl_graph *g, uint32_t rank, const struct wl_node *n,
		 struct wl_err *err);

/*
 * A sorted copy of ranks[0 .. n) that g keeps until wl_graph_free(), for
 * many nodes to share: a node given it as its ranks, with ranks_shared set,
 * is added by wl_graph_add() without a copy of its own (a communicator of
 * all N ranks on each of N ranks would be N^2 members otherwise). Returns
 * the copy, or NULL with err set (out of memory, n 0).
 */
uint32_t *wl_graph_share(struct wl_graph *g, const uint32_t *ranks, uint32_t n, struct wl_err *err);

/* The node of rank with this id, or NULL. */
const struct wl_node *wl_graph_find(const struct wl_graph *g, uint32_t rank,
				    uint64_t id);

/* The checks described above. Returns 0, or -1 with err naming the rank's
 * file (or "rank N") and the node id. */
int wl_graph_check(const struct wl_graph *g, struct wl_err *err);

#endif
