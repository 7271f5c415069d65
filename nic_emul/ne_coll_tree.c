/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll tree AllReduce (cfg.algo = NE_COLL_ALGO_TREE): NCCL's double
 * binary tree across servers and a chain inside each, the links of every
 * rank on every channel from nccl/nc_tree (ncclGetDtree; connect.cc).
 *
 * NCCL v2.21.5-1, src/device/all_reduce.h, runTreeSplit with the Simple
 * protocol (the path sm90 builds take): for each chunk, a leaf sends its
 * input to its parent; an inner rank receives from each of its children
 * (up to NCCL_MAX_TREE_ARITY = 3: its chain neighbour and two child
 * servers' heads), adds them to its input and sends the sum up; the root
 * adds its children's sums to its input and sends the result down; every
 * other rank receives the result from its parent, keeps it and sends it to
 * its children. The reduce-up and broadcast-down halves run at once, so
 * chunks pipeline through both. Chunks and channel parts are those of
 * Broadcast and Reduce (enqueue.cc: one step per chunk for every algorithm
 * but Ring, one message each; ne_coll_root.c).
 *
 * Ranks and servers: cfg.server_of groups the ranks (servers in order of
 * their first rank, GPU g of a server its g-th rank); all servers must have
 * the same GPU count. Without servers every rank is a server of one GPU.
 * nc_tree needs an even channel count (NCCL's runtime channels are the
 * search channels twice); an odd count is rounded up for it, so with one
 * channel only tree 0 runs.
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <stdlib.h>

#include "nc_tree.h"
#include "nc_tune.h"

/* Where each rank sits: tree rank (server x gpus + gpu) <-> collective rank. */
struct tree_map {
	struct nc_tree_cfg tc;
	uint32_t *rank_of; /* [tree rank] -> rank */
	uint32_t *tr_of;   /* [rank] -> tree rank */
};

static void map_free(struct tree_map *m)
{
	free(m->rank_of);
	free(m->tr_of);
}

/* 0, -ENOMEM, or -EINVAL when servers differ in size. */
static int map_build(const struct ne_coll_config *cfg, uint32_t nch, struct tree_map *m)
{
	uint32_t n = cfg->nranks, ns = 0, g = 0;
	uint32_t *sidx = calloc(n, sizeof(*sidx)), *fill = calloc(n, sizeof(*fill));
	int rc = 0;

	m->rank_of = calloc(n, sizeof(*m->rank_of));
	m->tr_of = calloc(n, sizeof(*m->tr_of));
	if (!sidx || !fill || !m->rank_of || !m->tr_of) {
		rc = -ENOMEM;
		goto out;
	}
	/* server index of each rank, by first appearance; GPU = order within it */
	for (uint32_t r = 0; r < n; r++) {
		uint32_t s = r;

		for (uint32_t q = 0; cfg->server_of && q < r; q++)
			if (cfg->server_of[q] == cfg->server_of[r]) {
				s = sidx[q];
				break;
			}
		if (s == r)
			s = ns++;
		sidx[r] = s;
		fill[s]++;
	}
	g = fill[0];
	for (uint32_t s = 0; s < ns; s++)
		if (fill[s] != g)
			rc = -EINVAL;
	m->tc.servers = ns;
	m->tc.gpus = g;
	m->tc.channels = nch + nch % 2;
	for (uint32_t s = 0; s < ns; s++)
		fill[s] = 0;
	for (uint32_t r = 0; !rc && r < n; r++) {
		uint32_t tr = sidx[r] * g + fill[sidx[r]]++;

		m->rank_of[tr] = r;
		m->tr_of[r] = tr;
	}
out:
	free(sidx);
	free(fill);
	return rc;
}

int ne_coll_tree_check(const struct ne_coll_config *cfg)
{
	struct tree_map m = {0};
	int rc = map_build(cfg, 2, &m);

	map_free(&m);
	return rc;
}

/* Rank r's links on channel ch as collective ranks (-1 for none). */
static void links(const struct tree_map *m, uint32_t ch, uint32_t r, int *up, int down[3])
{
	struct nc_tree_rank tr;

	(void)nc_tree_rank(&m->tc, ch, m->tr_of[r], &tr);
	*up = tr.up < 0 ? -1 : (int)m->rank_of[tr.up];
	for (uint32_t i = 0; i < COLL_MAX_DEPS; i++)
		down[i] = tr.down[i] < 0 ? -1 : (int)m->rank_of[tr.down[i]];
}

/* Connections: per channel, each rank to its parent (up) and to each child
 * (down), in that order. up_k[ch x n + r], down_k[(ch x n + r) x 3 + i]. */
static int tree_conns(struct ne_coll *c, const struct tree_map *m, int32_t *up_k, int32_t *down_k)
{
	uint32_t n = c->nranks, i = 0;

	c->nconns = 2 * (n - 1) * c->nchannels; /* each tree edge both ways */
	c->conns = calloc(c->nconns, sizeof(*c->conns));
	if (!c->conns)
		return -ENOMEM;
	for (uint32_t ch = 0; ch < c->nchannels; ch++)
		for (uint32_t r = 0; r < n; r++) {
			int up, down[3];

			links(m, ch, r, &up, down);
			up_k[ch * n + r] = -1;
			for (uint32_t d = 0; d < 3; d++)
				down_k[(ch * n + r) * 3 + d] = -1;
			for (int e = -1; e < 3; e++) {
				int dst = e < 0 ? up : down[e];
				struct coll_conn *k;

				if (dst < 0)
					continue;
				if (i >= c->nconns)
					return -EINVAL; /* (not a tree) */
				k = &c->conns[i];
				k->src = r;
				k->dst = (uint32_t)dst;
				k->channel = ch;
				for (uint32_t d = 0; d < COLL_MAX_DEPS; d++)
					k->downstream[d] = -1;
				/* a CTS budget per connection in both models: one shared
				 * by a receiver's children (up) and parent (down) could
				 * be spent on the parent's result, which waits for the
				 * children's sums, and deadlock */
				k->group = i;
				if (e < 0)
					up_k[ch * n + r] = (int32_t)i;
				else
					down_k[(ch * n + r) * 3 + (uint32_t)e] = (int32_t)i;
				i++;
			}
		}
	return i == c->nconns ? 0 : -EINVAL;
}

/* Chunk seq of channel ch at [off, off + len) bytes: the reduce up and the
 * broadcast down, each transfer depending on what its rank must have
 * received first. */
static int tree_chunk(struct ne_coll *c, const struct tree_map *m, const int32_t *up_k,
		      const int32_t *down_k, uint32_t ch, uint32_t seq, uint64_t off, uint32_t len)
{
	uint32_t n = c->nranks;

	for (uint32_t r = 0; r < n; r++) {
		int up, down[3];
		int32_t from_kids[3], nk = 0;

		links(m, ch, r, &up, down);
		for (uint32_t d = 0; d < 3; d++)
			if (down[d] >= 0)
				from_kids[nk++] = up_k[ch * n + (uint32_t)down[d]];
		for (int e = -1; e < 3; e++) {
			int32_t k = e < 0 ? up_k[ch * n + r] : down_k[(ch * n + r) * 3 + (uint32_t)e];
			struct coll_xfer x;
			uint32_t nd = 0;
			int rc;

			if (k < 0)
				continue;
			ne_coll_xfer_init(&x);
			x.src_off = x.dst_off = off;
			x.len = len;
			x.kind = e < 0 ? XFER_REDUCE : XFER_COPY;
			if (e < 0 || up < 0) {
				/* up, or down from the root: the children's sums */
				for (int32_t j = 0; j < nk; j++) {
					x.dep_conn[nd] = from_kids[j];
					x.dep_seq[nd++] = seq;
				}
			} else {
				/* down: the result from the parent (its connection to r) */
				for (uint32_t d = 0; d < 3; d++) {
					int32_t pk = down_k[(ch * n + (uint32_t)up) * 3 + d];

					if (pk >= 0 && c->conns[pk].dst == r)
						x.dep_conn[nd] = pk;
				}
				x.dep_seq[nd++] = seq;
			}
			for (uint32_t d = 0; d < nd; d++)
				ne_coll_plan_link(c, (uint32_t)x.dep_conn[d], (uint32_t)k);
			rc = ne_coll_plan_add_xfer(&c->conns[k], &x);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int ne_coll_plan_tree(struct ne_coll *c)
{
	uint32_t n = c->nranks, nch = c->nchannels;
	uint64_t ce = ne_coll_root_chunk_elems(c);
	struct tree_map m = {0};
	int32_t *up_k = calloc((size_t)nch * n, sizeof(*up_k));
	int32_t *down_k = calloc((size_t)nch * n * 3, sizeof(*down_k));
	int rc = !up_k || !down_k ? -ENOMEM : map_build(&c->cfg, nch, &m);

	if (!rc)
		rc = tree_conns(c, &m, up_k, down_k);
	for (uint32_t ch = 0; ch < nch && !rc; ch++) {
		uint64_t lo, len;
		uint32_t seq = 0;

		ne_coll_root_channel_part(c, ch, &lo, &len);
		for (uint64_t o = 0; o < len && !rc; o += ce, seq++)
			rc = tree_chunk(c, &m, up_k, down_k, ch, seq, (lo + o) * sizeof(float),
					(uint32_t)((len - o < ce ? len - o : ce) * sizeof(float)));
	}
	map_free(&m);
	free(up_k);
	free(down_k);
	return rc;
}

/* NCCL's collective of c's op in the tuning; 0 for one it does not tune. */
static int tune_coll(enum ne_coll_op op, enum nc_coll *coll)
{
	*coll = op == NE_COLL_ALLGATHER	    ? NC_COLL_ALLGATHER
		: op == NE_COLL_REDUCESCATTER ? NC_COLL_REDUCESCATTER
					      : NC_COLL_ALLREDUCE;
	return op == NE_COLL_ALLREDUCE || op == NE_COLL_ALLGATHER || op == NE_COLL_REDUCESCATTER;
}

/*
 * nc_tune's inputs for c's shape: its servers and GPUs per server, with
 * NCCL's H100 graph across servers, or its NVLink-only graph on one server
 * (nc_tune_params_h100). Servers of different sizes cannot run the tree:
 * every rank is then a node (the ring's time does not depend on the split)
 * and *uneven is set (with release 2.23 such a shape reads as one GPU per
 * server: an approximation, as its node count is). The release is the
 * key's. *servers: the servers counted. 0, or -ENOMEM.
 */
static int shape_params(const struct ne_coll *c, struct nc_tune_params *p, bool *uneven,
			uint32_t *servers)
{
	struct tree_map m = {0};
	int rc = map_build(&c->cfg, 2, &m);

	map_free(&m);
	if (rc == -ENOMEM)
		return rc;
	*uneven = rc != 0;
	*servers = m.tc.servers;
	nc_tune_params_h100(p, rc ? c->cfg.nranks : m.tc.servers, rc ? 1 : m.tc.gpus);
	p->release = (enum nc_release)c->cfg.nccl_release;
	(void)tune_coll(c->cfg.op, &p->coll);
	return 0;
}

/*
 * NCCL's choice (src/graph/tuning.cc, nccl/nc_tune.h) for an AllReduce,
 * AllGather or ReduceScatter of cfg.bytes (the total, as NCCL's nBytes) on
 * c's shape (shape_params) and the NCCL_ALGO / NCCL_PROTO masks.
 * AllGather and ReduceScatter have the ring alone. With NCCL_ALGO naming
 * one algorithm (model nccl), the pick is among that algorithm's protocols.
 */
int ne_coll_tree_tune(struct ne_coll *c)
{
	struct nc_tune_params p;
	struct nc_tune_table t;
	struct nc_tune_choice pick;
	enum ne_coll_algo forced = c->cfg.algo;
	uint32_t servers;
	bool uneven;
	int rc;

	/* NCCL_ALGO naming one algorithm (model nccl): NCCL's tuning still
	 * picks the protocol for it; algo=ring / tree alone run Simple */
	if (forced != NE_COLL_ALGO_AUTO &&
	    (c->cfg.model != NE_COLL_MODEL_NCCL || !c->cfg.nccl_algo_off))
		return 0;
	if (forced == NE_COLL_ALGO_AUTO)
		c->cfg.algo = NE_COLL_ALGO_RING;
	if (!tune_coll(c->cfg.op, &p.coll))
		return 0;
	rc = shape_params(c, &p, &uneven, &servers);
	if (rc)
		return rc;
	for (uint32_t a = 0; a < NC_ALGO_COUNT; a++)
		p.algo_on[a] = !(c->cfg.nccl_algo_off & (1u << a)) && (a == NC_ALGO_RING || !uneven) &&
			       (forced == NE_COLL_ALGO_AUTO ||
				(a == NC_ALGO_TREE) == (forced == NE_COLL_ALGO_TREE));
	for (uint32_t pr = 0; pr < NC_PROTO_COUNT; pr++)
		p.proto_on[pr] = !(c->cfg.nccl_proto_off & (1u << pr));
	if (nc_tune_model(&p, &t) || nc_tune_pick(&p, &t, c->cfg.bytes, &pick))
		return -EINVAL;
	c->tuned = true;
	c->tune_algo = (uint8_t)pick.algo;
	c->tune_proto = (uint8_t)pick.proto;
	c->tune_us = pick.time_us;
	c->cfg.algo = pick.algo == NC_ALGO_TREE ? NE_COLL_ALGO_TREE : NE_COLL_ALGO_RING;
	return 0;
}

/* launch=nccl for an op NCCL's tuning tables have: its latency model is charged. */
static bool nccl_latency(const struct ne_coll *c)
{
	/* (NCCL's p2p: alltoall, incast and sendrecv have no entry in its tables) */
	return c->cfg.launch_ns == NE_COLL_LAUNCH_NCCL && c->cfg.op != NE_COLL_ALLTOALL &&
	       c->cfg.op != NE_COLL_INCAST && c->cfg.op != NE_COLL_SENDRECV;
}

static enum nc_algo nccl_algo(const struct ne_coll *c)
{
	return c->cfg.algo == NE_COLL_ALGO_TREE ? NC_ALGO_TREE : NC_ALGO_RING;
}

static uint64_t us_to_ns(double us)
{
	return (uint64_t)(us * 1000.0 + 0.5);
}

uint8_t ne_coll_proto_resolve(const struct ne_coll *c)
{
	/* LL and LL128 run in the nccl model's ring and tree of AllReduce,
	 * AllGather and ReduceScatter; elsewhere Simple */
	if (c->cfg.model != NE_COLL_MODEL_NCCL ||
	    (c->cfg.op != NE_COLL_ALLREDUCE && c->cfg.op != NE_COLL_ALLGATHER &&
	     c->cfg.op != NE_COLL_REDUCESCATTER))
		return NC_PROTO_SIMPLE;
	if (c->tuned)
		return c->tune_proto;
	/* no tuning (an op or algorithm given): Simple when NCCL_PROTO allows
	 * it, else the first it allows in NCCL's order (LL, LL128) */
	if (!(c->cfg.nccl_proto_off & (1u << NC_PROTO_SIMPLE)))
		return NC_PROTO_SIMPLE;
	return (c->cfg.nccl_proto_off & (1u << NC_PROTO_LL)) ? NC_PROTO_LL128 : NC_PROTO_LL;
}

uint64_t ne_coll_launch_resolve(const struct ne_coll *c)
{
	if (c->cfg.launch_ns != NE_COLL_LAUNCH_NCCL)
		return c->cfg.launch_ns;
	if (!nccl_latency(c))
		return 0;
	return us_to_ns(nc_tune_base_lat_us((enum nc_release)c->cfg.nccl_release, nccl_algo(c),
					    (enum nc_proto)c->proto));
}

int ne_coll_steps_resolve(struct ne_coll *c)
{
	struct nc_tune_params p;
	uint32_t servers;
	bool uneven;
	int rc;

	c->step_nvl_ns = c->cfg.nvlink_lat_ns;
	c->step_net_ns = 0;
	/* NCCL's Broadcast and Reduce charge hwLat once or as a tree's per
	 * step (tuning.cc), not per ring step taken: not modelled */
	if (!nccl_latency(c) || c->cfg.op == NE_COLL_BROADCAST || c->cfg.op == NE_COLL_REDUCE)
		return 0;
	/* the shape the tuning reads (shape_params), so a step costs what the
	 * tuning charged it: nc_tune_step_lat_us reads nodes > 1 (a ring across
	 * servers) and gpus == 1 (NCCL's ppn == 1: from release 2.23 the
	 * network step takes the Tree's hwLat) */
	rc = shape_params(c, &p, &uneven, &servers);
	if (rc)
		return rc;
	c->step_nvl_ns = us_to_ns(nc_tune_step_lat_us(&p, nccl_algo(c), (enum nc_proto)c->proto, false));
	c->step_net_ns = us_to_ns(nc_tune_step_lat_us(&p, nccl_algo(c), (enum nc_proto)c->proto, true));
	return 0;
}

/*
 * The cap of NCCL's tuning on the bus bandwidth of c's algorithm and
 * protocol (nc_tune_bus_cap_gbs: LL llMaxBws, LL128 per channel) becomes a
 * rate on each GPU's sends. A ring's bus bandwidth is the data one rank
 * sends per second (nccl-tests' busbw: every rank sends that much at once);
 * NCCL's LL line is 8 data bytes in 16 (x .5 of the link's rate), and
 * llMaxBw caps the result, a GPU-side limit of LL's flag-per-word stores.
 * So a GPU sends a transfer's data bytes no faster than the cap, whatever
 * the link carries its wire bytes at. The tree's bus bandwidth is the same
 * per GPU (each rank sends its data up and down: x .5 to algorithm
 * bandwidth). Simple: none. The shape is shape_params's, with NCCL's
 * count of nodes (the servers) where they differ in size.
 */
void ne_coll_cap_resolve(struct ne_coll *c)
{
	struct nc_tune_params p;
	uint32_t servers;
	bool uneven;
	double gbs;

	c->proto_cap_Bps = 0;
	if (!coll_nccl(c) || c->proto == NC_PROTO_SIMPLE || c->cfg.nranks < 2 ||
	    shape_params(c, &p, &uneven, &servers))
		return;
	if (uneven) /* (llMaxBws's index is NCCL's nNodes) */
		p.nodes = servers;
	gbs = nc_tune_bus_cap_gbs(&p, nccl_algo(c), (enum nc_proto)c->proto);
	if (gbs > 0.0)
		c->proto_cap_Bps = (uint64_t)(gbs * 1e9 + 0.5);
}

uint64_t ne_coll_launch_ns(const struct ne_coll *c)
{
	return c ? c->launch_ns : 0;
}
