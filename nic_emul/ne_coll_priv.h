/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll internals shared by its files (not a public API):
 *   ne_coll.c         create, destroy, iteration state queries, connection info
 *   ne_coll_config.c  configuration: defaults, checks, NIC sizing
 *   ne_coll_plan.c    the schedule: every connection's ordered chunk transfers
 *   ne_coll_p2p.c     Send/Recv: the shift or explicit pairs, their blocks
 *   ne_coll_conn.c    buffers, memory regions, CQs, QPs and their connection
 *   ne_coll_run.c     the progress engine: CQ notifications, CTS grants, posts
 *   ne_coll_lanes.c   the progress split by rank for several threads (lanes)
 *   ne_coll_post.c    how a message becomes WQEs: split, round-robin, CTRAN
 *   ne_coll_proxy.c   each rank's proxy thread: post and poll costs, in order
 *   ne_coll_nccl.c    NCCL's arithmetic: ring chunk, slices, split pieces
 *   ne_coll_keys.c    the --coll key table and its value readers (NCCL's names)
 *   ne_coll_spec.c    a --coll spec: defaults, the whole text, rules between keys
 *   ne_coll_result.c  nccl-tests numbers and output lines, active QPs per NIC
 *   ne_coll_series.c  the active-QP time series, rows completed lazily at events
 *   ne_coll_lat.c     per-message latency and wait: histograms and their hooks
 *   ne_coll_check.c   buffers seen by the caller, result check, statistics
 *   ne_coll_nvlink.c  transfers inside a server: timed by nc_nvlink, no NIC
 *   ne_coll_chring.c  NCCL's per-channel rings through servers, PXN's NIC
 *
 * A plan is built once at create: every connection gets its ordered list of
 * chunk transfers (source offset, destination offset, length, reduce or copy,
 * and the transfer it depends on: for ring operations, the previous hop of
 * the same chunk arriving at the sender). Each iteration then replays the
 * plan: receivers grant (CTS), senders post WRITE WITH IMM parts when
 * granted and their data is ready, receivers consume complete transfers.
 * All progress is triggered by work completions; ranks with completions,
 * connections and receiver groups that may progress are kept on lists so a
 * poll does work proportional to what changed.
 */
#ifndef NE_COLL_PRIV_H
#define NE_COLL_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "nc_tune.h"
#include "ne_coll.h"

/* Kind of a work request, in the top two bits of its wr_id. */
#define WR_DATA_SEND 0u
#define WR_CTS_SEND 1u
#define WR_DATA_RECV 2u
#define WR_CTS_RECV 3u
#define WR_KIND_SHIFT 62
#define WR_CONN_SHIFT 32
#define WR_CONN_MASK 0x3FFFFFFFu
/* CTRAN: the QP index rides in the top bits of the seq field of a data WQE. */
#define WR_QP_SHIFT 24
#define WR_SEQ_MASK 0xFFFFFFu
#define COLL_MAX_SEQ_CTRAN WR_SEQ_MASK

/* What the receiver does with a transfer's bytes. */
#define XFER_COPY 0u
#define XFER_REDUCE 1u

/*
 * State bits of one transfer: the receiver's in coll_conn.rflags[seq], the
 * sender's in coll_conn.flags[seq] (two bytes: with lanes, two threads).
 */
#define XFER_RECV_DONE 1u /* rflags: all parts arrived, consumed by the receiver */
#define XFER_SEND_DONE 2u /* flags: all parts completed (ACKed) at the sender */
#define XFER_CTS_RCVD 4u  /* flags: CTS arrived at the sender */
#define XFER_PXN_SENT 8u  /* flags: PXN's NVLink copy to the NIC's GPU (or LL's
			   * capped write, ne_coll_pxn_staged) started */
#define XFER_PXN_IN 16u   /* flags: ... and arrived: the RDMA may be posted */

/* Completions taken from a CQ per ne_cq_poll() call. */
#define COLL_POLL_BATCH 64

/* Dependencies of a transfer, and connections fed by one: a tree rank's
 * chain neighbour and two child servers' heads (NCCL_MAX_TREE_ARITY). */
#define COLL_MAX_DEPS 3u

/* One chunk transfer on a connection (one message). */
struct coll_xfer {
	uint64_t src_off; /* bytes into the sender's source buffer */
	uint64_t dst_off; /* bytes into the receiver's result buffer */
	uint32_t len;     /* bytes, 1..chunk_bytes, multiple of 4 */
	uint8_t kind;     /* XFER_COPY / XFER_REDUCE */
	/* The received transfers whose data this one sends: (conn, seq) each,
	 * conn -1 for none. A ring or pipeline hop has one; a tree node sums
	 * up to COLL_MAX_DEPS children before it sends (ne_coll_tree.c). */
	int32_t dep_conn[COLL_MAX_DEPS];
	uint32_t dep_seq[COLL_MAX_DEPS];
};

/* A connection: sender rank -> receiver rank on one channel. */
struct coll_conn {
	uint32_t src, dst, channel;
	uint32_t *src_qpn; /* nqps data QPNs on the sender's NIC */
	uint32_t *dst_qpn; /* nqps data QPNs on the receiver's NIC */
	uint32_t src_ctrl_qpn, dst_ctrl_qpn;
	struct coll_xfer *xfers;           /* NULL when away */
	uint32_t nxfers, xfers_cap;
	uint64_t bytes;
	uint32_t max_len;                 /* the largest transfer's len */
	bool away;                        /* counts only: no rank of it runs here (cfg.here_lane_of) */
	uint8_t *flags;                   /* per seq: the sender's XFER_* bits */
	uint8_t *rflags;                  /* per seq: the receiver's XFER_* bits */
	uint16_t *recv_parts, *send_parts; /* per seq: WQEs completed at each end */
	uint16_t *qp_outstanding;         /* CTRAN: send WQEs not completed, per QP */
	uint32_t *sq_wqes;                /* data WQEs on the sender's NIC, per QP (active QPs) */
	uint64_t *lat_ready, *lat_post;   /* per seq: ready / first post time (ne_coll_lat.c) */
	uint64_t fifo_off;                /* nccl: FIFO slots in the sender's stage buffer */
	uint64_t stage_off;               /* in the receiver's staging buffer */
	int32_t downstream[COLL_MAX_DEPS]; /* connections whose transfers depend on ours, -1 */
	uint32_t group;
	bool nvl;                         /* both ranks on one server: NVLink, no NIC */
	uint32_t src_nic;                 /* rank whose NIC holds the sender's QPs */
	bool pxn;                         /* src_nic != src: each message crosses NVLink first */
	/* sender */
	uint32_t send_next, send_part, rr_next;
	uint8_t gate;                     /* enum ne_coll_gate the next message last waited for */
	/* receiver */
	uint32_t grant_next;
	bool dirty;
};

/* A receiver's incoming connections of one channel: CTS budget of window. */
struct coll_group {
	uint32_t rank; /* the receiver */
	uint32_t *conns;
	uint32_t nconns, conns_cap, rr_next, granted;
	bool dirty;
};

/*
 * The addresses a rank's two buffers answer to (their MRs' iova, in WQEs and
 * on the wire in RETH): fixed per rank instead of the heap's, which move with
 * ASLR from run to run, so that the same run gives the same capture bytes.
 * Each buffer has 1 TiB of room (ne_coll_mrs_register refuses a larger one):
 * an incast root's staging area at 1,024 ranks, 32 slots of 512 KiB per
 * sender, is 16 GiB (with data=off, an address range, not memory).
 */
#define NE_COLL_IOVA_BASE (1ull << 44)
#define NE_COLL_IOVA_ROOM (1ull << 40)
static inline uint64_t ne_coll_src_iova(uint32_t rank)
{
	return NE_COLL_IOVA_BASE + (uint64_t)rank * 2 * NE_COLL_IOVA_ROOM;
}
static inline uint64_t ne_coll_stage_iova(uint32_t rank)
{
	return ne_coll_src_iova(rank) + NE_COLL_IOVA_ROOM;
}

struct coll_rank {
	struct ne_coll *owner; /* for the CQ notification callback */
	uint32_t idx;
	bool cq_ready;         /* on the ready heap: completions queued */
	struct ne_nic *nic;
	struct ne_cq *cq;
	float *in, *work;
	size_t nin, nwork;
	uint8_t *src;   /* registered source buffer (work, in or scratch) */
	size_t src_len;
	bool src_owned; /* src is a separate allocation */
	uint8_t *stage;
	size_t stage_len;
	uint32_t src_key, stage_key;
	bool src_reg, stage_reg;
	uint64_t granted_bytes;
	struct coll_proxy *proxy; /* NULL when the proxy costs are off */
	struct ne_coll_proxy_stats pst; /* posts and polls of this rank (costs on or off) */
	uint32_t active_qps;   /* data QPs with a send WQE on the NIC (ne_coll_result.c) */
	uint64_t active_since; /* time of the last change of active_qps */
	uint64_t series_off;   /* last time active_qps fell to 0 (series; UINT64_MAX: never) */
	uint64_t nvl_free;     /* its GPU's NVLink egress is free from then (ne_coll_nvlink.c) */
	bool pxn_reg;          /* PXN: the source buffer of rank pxn_src registered on this */
	uint32_t pxn_src, pxn_key; /* NIC (ne_coll_chring.c), with this key */
};

/* A post waiting for the rank's proxy thread. */
struct coll_post {
	uint32_t qpn;
	struct ne_send_wr wr;
};

/* One rank's proxy thread (ne_coll_proxy.c). */
struct coll_proxy {
	uint64_t busy_until;     /* the thread is free from then */
	uint64_t timer_at;       /* scheduled on the proxy timer heap (UINT64_MAX: not) */
	bool post_started;       /* the head post's doorbell rings at busy_until */
	bool wc_taken;           /* wc was taken; it is acted on at busy_until */
	struct ne_wc wc;
	bool due;                /* on the due heap */
	struct coll_post *q;     /* FIFO ring of posts */
	uint32_t head, n, cap;
};

struct coll_timer {
	uint64_t t;
	uint32_t rank;
};

/* What ends at an event of the NVLink heap. */
enum coll_ev_kind {
	COLL_EV_HOP, /* an NVLink transfer of a step: sent and received */
	COLL_EV_PXN, /* PXN's copy to the NIC's GPU, or a capped write (then the RDMA) */
	COLL_EV_NET, /* a network step's hwLat after its last byte came in: consumed */
};

/* An event in flight: transfer seq of connection conn ends at t. */
struct coll_nvl_ev {
	uint64_t t;
	uint32_t conn, seq;
	uint8_t kind; /* enum coll_ev_kind */
};

struct ne_coll {
	struct ne_coll_config cfg; /* algo auto: resolved at create (ring or tree) */
	/* algo auto: NCCL's tuning's pick (enum nc_algo, nc_proto) and its
	 * predicted time; tuned false otherwise */
	bool tuned;
	uint8_t tune_algo, tune_proto;
	/* the protocol run (enum nc_proto, ne_coll_proto_resolve): its wire
	 * bytes (coll_wire_len), step size, steps in flight and latencies */
	uint8_t proto;
	double tune_us;
	/* NCCL's cap on the bus bandwidth of that protocol, as a rate of each
	 * GPU's sends in data bytes/s (ne_coll_cap_resolve); 0 for none */
	uint64_t proto_cap_Bps;
	enum ne_coll_algo algo_asked; /* cfg.algo as given */
	uint32_t nranks, nchannels, nqps, window;
	uint32_t slot_bytes;   /* one staging slot (rocelab: chunk_bytes; nccl: largest message) */
	uint32_t ngroups;      /* CTS budgets: nranks x nchannels (rocelab), nconns (nccl) */
	uint64_t rank_elems;  /* AllReduce / incast: elements per rank */
	uint64_t block_elems; /* AllGather/ReduceScatter/AllToAll: elements per block */
	struct coll_rank *ranks;
	struct coll_conn *conns;
	uint32_t nconns;
	struct coll_group *groups; /* ngroups */
	uint64_t total_xfers;

	uint32_t *dirty_conns, ndirty_conns; /* stacks of marked connections, groups */
	uint32_t *dirty_groups, ndirty_groups;
	/* ranks whose CQ has completions (min-heap of rank indices, filled by the
	 * CQ notification): polled in ascending rank order, as a scan would */
	uint32_t *ready, nready;
	/* proxy costs on: ranks whose thread may act now (min-heap of ranks) and
	 * when busy threads become free (min-heap of times, lazy deletion) */
	bool proxy_on;
	uint32_t *due, ndue;
	struct coll_timer *timers;
	uint32_t ntimers, timers_cap;

	bool running, done, failed;
	/* transfers whose sender / receiver is polled here: every one, or a lane's */
	uint64_t send_total, recv_total;
	uint64_t done_at;     /* when the last iteration ended here */
	/*
	 * Lanes (ne_coll_set_lanes): the collective's progress split by rank
	 * into nlanes views that share its plan, ranks, connections and groups
	 * and keep their own lists, heaps, counters, statistics and histograms,
	 * each polled by one thread. A lane's main is the collective (NULL in
	 * the collective itself); lane_of gives each rank's lane (the main's).
	 */
	struct ne_coll *lanes;
	uint32_t nlanes, lane;
	bool empty;            /* a lane without a rank */
	struct ne_coll *main;
	uint32_t *lane_of;
	uint64_t iter_start;
	/* launch cost (cfg.launch_ns resolved at create): nothing is sent or
	 * granted before launch_until while launching */
	uint64_t launch_ns, launch_until;
	bool launching;
	/* one step's latency (ne_coll_steps_resolve): an NVLink hop's, and what
	 * a network step waits after its last byte came in before it is
	 * consumed (0: none) */
	uint64_t step_nvl_ns, step_net_ns;
	uint32_t iters_done, iters_total;
	uint64_t *iter_ns;
	uint64_t recv_done, send_done, cts_outstanding;
	struct ne_coll_stats stats;
	/* active QPs at the start of the first measured iteration (ne_coll_result.c) */
	uint64_t meas_qp_ns, meas_busy_ns, meas_nic_ns;
	uint32_t meas_max;  /* most active QPs on one NIC since then */
	struct ne_coll_hist *lat, *wait;  /* per-message latency (ne_coll_lat.c) */
	struct coll_series *series;       /* NULL: no active-QP series */
	/* NVLink (ne_coll_nvlink.c): each rank's server (NULL: none, shared by
	 * the lanes), the connections inside a server, and this view's
	 * transfers in flight (min-heap by end time; each lane its own) */
	uint32_t *server_of;
	uint32_t nvl_conns, pxn_conns;
	struct coll_nvl_ev *nvl_heap;
	uint32_t nnvl, nvl_cap;
	/* Channel rings (ne_coll_chring.c; NULL: the rank order): the rank at
	 * position p of channel ch's ring, ring_rank[ch x nranks + p], and the
	 * inverse, ring_pos[ch x nranks + rank] (shared by the lanes) */
	uint32_t *ring_rank, *ring_pos;
};

static inline uint64_t wr_id_make(uint32_t kind, uint32_t conn, uint32_t seq)
{
	return (uint64_t)kind << WR_KIND_SHIFT | (uint64_t)conn << WR_CONN_SHIFT | seq;
}

/* Start of part i of k equal parts of total (parts differ by at most 1). */
static inline uint64_t part_start(uint64_t total, uint64_t k, uint64_t i)
{
	return total * i / k;
}

/* The rank at position pos of channel ch's ring, and rank's position there. */
static inline uint32_t coll_ring_rank(const struct ne_coll *c, uint32_t ch, uint32_t pos)
{
	return c->ring_rank ? c->ring_rank[(size_t)ch * c->nranks + pos] : pos;
}
static inline uint32_t coll_ring_pos(const struct ne_coll *c, uint32_t ch, uint32_t rank)
{
	return c->ring_pos ? c->ring_pos[(size_t)ch * c->nranks + rank] : rank;
}

/* Rank's NIC runs in this process: every one, but with cfg.here_lane_of
 * only lane here_lane's (the others' QPs are numbers only: ne_qp_hold). */
static inline bool coll_here(const struct ne_coll *c, uint32_t rank)
{
	return !c->cfg.here_lane_of || c->cfg.here_lane_of[rank] == c->cfg.here_lane;
}

/* Rank's work is polled through c: always, but in a lane only its own ranks'. */
static inline bool coll_mine(const struct ne_coll *c, uint32_t rank)
{
	return !c->main || c->main->lane_of[rank] == c->lane;
}

static inline bool coll_nccl(const struct ne_coll *c)
{
	return c->cfg.model == NE_COLL_MODEL_NCCL;
}

/* Bytes a transfer of len data bytes puts on the wire, NIC and NVLink
 * alike, in c's protocol (LL x 16/8, LL128 x 128/120, Simple len). */
static inline uint32_t coll_wire_len(const struct ne_coll *c, uint32_t len)
{
	return (uint32_t)nc_tune_wire_bytes((enum nc_proto)c->proto, len);
}

/* Ops whose transfers read the sender's work buffer (what it received):
 * the ring ops and the rooted ring pipelines. */
static inline bool coll_op_is_ring(enum ne_coll_op op)
{
	return op == NE_COLL_ALLREDUCE || op == NE_COLL_ALLGATHER || op == NE_COLL_REDUCESCATTER ||
	       op == NE_COLL_BROADCAST || op == NE_COLL_REDUCE;
}

/* AllReduce over NCCL's double binary tree (ne_coll_tree.c). */
static inline bool coll_tree(const struct ne_coll *c)
{
	return c->cfg.op == NE_COLL_ALLREDUCE && c->cfg.algo == NE_COLL_ALGO_TREE;
}

/* Ops with a root rank (cfg.root). */
static inline bool coll_op_rooted(enum ne_coll_op op)
{
	return op == NE_COLL_INCAST || op == NE_COLL_BROADCAST || op == NE_COLL_REDUCE;
}

/* ne_coll_plan.c: connections and their transfers. 0 or -ENOMEM. */
int ne_coll_plan_build(struct ne_coll *c);
/* Append transfer x to connection k (its bytes counted; an away one counts
 * it and keeps nothing). 0 or -ENOMEM. */
int ne_coll_plan_add_xfer(struct coll_conn *k, const struct coll_xfer *x);
/* A transfer with no dependency (dep_conn[] all -1). */
void ne_coll_xfer_init(struct coll_xfer *x);
/* Connection `to` sends what `from` receives: `from`'s consumed transfers
 * wake `to` (kept once; at most COLL_MAX_DEPS). */
void ne_coll_plan_link(struct ne_coll *c, uint32_t from, uint32_t to);
/* One block of nel elements from a sender's src_el to a receiver's dst_el
 * on connection first_conn_of_ch0 + ch x conns_per_ch of each channel ch:
 * the block cut over the channels, each part in p2p messages
 * (NCCL_P2P_NET_CHUNKSIZE, model rocelab: chunk). 0 or -ENOMEM. */
int ne_coll_plan_block(struct ne_coll *c, uint32_t first_conn_of_ch0, uint32_t conns_per_ch,
		       uint64_t src_el, uint64_t dst_el, uint64_t nel);

/* ne_coll_p2p.c: Send/Recv (ne_coll_p2p_npairs and ne_coll_p2p_pair: ne_coll.h).
 * ne_coll_p2p_degree: how many a rank sends and receives.
 * ne_coll_plan_p2p: the connections (pair p of channel ch at
 * ch x npairs + p) and their transfers (0 or -ENOMEM). ne_coll_p2p_wrong:
 * elements of rank's received blocks that are not their sender's input. */
void ne_coll_p2p_degree(const struct ne_coll_config *cfg, uint32_t rank, uint32_t *out, uint32_t *in);
int ne_coll_plan_p2p(struct ne_coll *c);
long ne_coll_p2p_wrong(const struct ne_coll *c, uint32_t rank);

/* ne_coll_root.c: Broadcast and Reduce, NCCL's ring pipeline from / to the
 * root. ne_coll_plan_root: every chunk's n - 1 hops on the ring's
 * connections (0 or -ENOMEM). ne_coll_root_channel_part: channel ch's
 * contiguous part of the rank_elems elements ([*lo, *lo + *len)).
 * ne_coll_root_chunk_elems: the chunk, in elements (one message). */
int ne_coll_plan_root(struct ne_coll *c);

/* ne_coll_tree.c: AllReduce over NCCL's double binary tree (algo tree).
 * ne_coll_plan_tree: the connections (each tree edge both ways, per
 * channel) and their transfers; 0, -ENOMEM, -EINVAL (servers of different
 * sizes). ne_coll_tree_check: 0, or -EINVAL when cfg's servers differ in
 * size, -ENOMEM. */
int ne_coll_plan_tree(struct ne_coll *c);
int ne_coll_tree_check(const struct ne_coll_config *cfg);
/* algo auto: NCCL's pick for c's size into c->cfg.algo (ring or tree) and
 * c->tune_*; other ops and algos untouched. 0, or -EINVAL (the tuning
 * refused its inputs, e.g. nothing enabled), -ENOMEM. */
int ne_coll_tree_tune(struct ne_coll *c);
/* cfg.launch_ns in ns with NE_COLL_LAUNCH_NCCL resolved: NCCL's baseLat of
 * c's algorithm (after ne_coll_tree_tune) and protocol (c->proto); 0 for ops NCCL's
 * tuning does not model (alltoall, incast, sendrecv). */
uint64_t ne_coll_launch_resolve(const struct ne_coll *c);
/* The protocol c runs (enum nc_proto), after ne_coll_tree_tune: the nccl
 * model's AllReduce, AllGather and ReduceScatter take the tuning's pick, or
 * without one Simple when NCCL_PROTO allows it, else the first it allows
 * (LL, LL128); everything else Simple. */
uint8_t ne_coll_proto_resolve(const struct ne_coll *c);
/* c->step_nvl_ns and c->step_net_ns (before ne_coll_nvl_setup, which sizes
 * its heap by them): with launch=nccl and an op NCCL tunes, NCCL's hwLat per
 * step of c's algorithm and protocol (nc_tune_step_lat_us) for AllReduce, AllGather and
 * ReduceScatter; otherwise cfg.nvlink_lat_ns and 0. The shape is the
 * tuning's (servers of different sizes read as one GPU per server). 0, or
 * -ENOMEM. */
int ne_coll_steps_resolve(struct ne_coll *c);
/* c->proto_cap_Bps (after ne_coll_proto_resolve and ne_coll_tree_tune):
 * the nccl model's LL and LL128 take nc_tune_bus_cap_gbs of c's shape,
 * algorithm and protocol; Simple, other models and a failed shape 0. */
void ne_coll_cap_resolve(struct ne_coll *c);
/* A network transfer s of connection k fully received at now: consumed
 * step_net_ns later (an event), or now without one. */
void ne_coll_net_received(struct ne_coll *c, uint32_t k, uint32_t s, uint64_t now);
void ne_coll_root_channel_part(const struct ne_coll *c, uint32_t ch, uint64_t *lo, uint64_t *len);
uint64_t ne_coll_root_chunk_elems(const struct ne_coll *c);
/* The nccl model's ring chunk in elements for c's protocol: 4 Simple steps
 * (NCCL_CHUNKSTEPS) or one LL / LL128 step's data (nc_tune_step_data_bytes). */
uint64_t ne_coll_proto_chunk_elems(const struct ne_coll *c);

/* ne_coll_conn.c: each 0 or a negative errno (-ENOMEM, or the NIC's error). */
int ne_coll_buffers_alloc(struct ne_coll *c);
int ne_coll_mrs_register(struct ne_coll *c);
int ne_coll_qps_setup(struct ne_coll *c);
int ne_coll_groups_setup(struct ne_coll *c);
/* Post one zero-length receive WQE on qpn of rank; ne_post_recv's result. */
int ne_coll_post_recv(struct ne_coll *c, uint32_t rank, uint32_t qpn, uint64_t wr_id);

/* ne_coll_lanes.c: free the lanes (ne_coll_set_lanes). */
void ne_coll_lanes_free(struct ne_coll *c);
/* ne_coll_run.c: an iteration starts at now: each connection's sender and
 * receiver side, each group and rank reset and marked (a lane: its ranks'). */
void ne_coll_begin_iter(struct ne_coll *c, uint64_t now);
/* ne_coll_run.c: the CQ notification callback (ctx: the struct coll_rank). */
void ne_coll_cq_notify(void *ctx, struct ne_cq *cq);
/* Act on one completion of rank at now (marks connections and groups). */
void ne_coll_handle_wc(struct ne_coll *c, uint32_t rank, const struct ne_wc *wc, uint64_t now);
/* Run the marked connections and groups until none is left. */
void ne_coll_run_marked(struct ne_coll *c, uint64_t now);
/* Min-heap of rank indices (ready and due heaps). */
void ne_coll_rank_heap_push(uint32_t *heap, uint32_t *n, uint32_t rank);
uint32_t ne_coll_rank_heap_pop(uint32_t *heap, uint32_t *n);

/* ne_coll_result.c: active QPs. A send WQE (any kind; only data WQEs count)
 * reached rank's NIC on qpn at now; a data WQE's completion was handled at now.
 * A data QP is active from its first WQE on the NIC to the handling of its
 * last one's completion. */
void ne_coll_active_posted(struct ne_coll *c, uint32_t rank, uint32_t qpn, uint64_t wr_id,
			   uint64_t now);
void ne_coll_active_completed(struct ne_coll *c, uint32_t rank, const struct ne_wc *wc,
			      uint64_t now);
/* An iteration starts at now: the measured ones take their baseline. */
void ne_coll_active_iter_start(struct ne_coll *c);

/* ne_coll_series.c: rank's active QPs move from old to new at now (called
 * before any other change at now is applied); the last iteration ended at
 * now (emits the last row); free. All no-ops without a series. */
void ne_coll_series_move(struct ne_coll *c, uint32_t rank, uint32_t old, uint32_t new_qps,
			 uint64_t now);
void ne_coll_series_start(struct ne_coll *c, uint64_t now);
void ne_coll_series_end(struct ne_coll *c, uint64_t now);
void ne_coll_series_free(struct ne_coll *c);
/* Lanes: lane ln's own series over its ranks, its rows kept (none when c has
 * no series); 0 or -ENOMEM. c's rows from its lanes' (c split into lanes,
 * each ended), [start, end) cut in rows, through c's row function; 0, or
 * -ENOMEM when a lane could not keep a row. */
int ne_coll_series_lane_init(struct ne_coll *ln, const struct ne_coll *c);
int ne_coll_series_lanes_emit(struct ne_coll *c, uint64_t start, uint64_t end);
/* c's lanes stopped before c ended (a bounded run, a failed lane): the rows
 * one engine would have written by then, those that ended by the lanes'
 * last change; once. 0, or -ENOMEM. */
int ne_coll_series_lanes_cut(struct ne_coll *c);

/* ne_coll_lat.c: the per-seq times and histograms (0 or -ENOMEM); reset at
 * an iteration's start; transfer s of connection k is ready / about to be
 * posted / done at the sender at now. */
int ne_coll_lat_setup(struct ne_coll *c);
void ne_coll_lat_iter_start(struct ne_coll *c);
void ne_coll_lat_ready(struct ne_coll *c, struct coll_conn *cn, uint32_t s, uint64_t now);
void ne_coll_lat_post(struct ne_coll *c, struct coll_conn *cn, uint32_t s, uint64_t now);
void ne_coll_lat_done(struct ne_coll *c, const struct coll_conn *cn, uint32_t s, uint64_t now);

/* ne_coll_nvlink.c. Setup at create (after the plan): server_of copied,
 * connections inside a server flagged, the heap; 0, -EINVAL (a bad
 * NVLink rate) or -ENOMEM. A lane's own heap; 0 or -ENOMEM. Free (a lane:
 * its heap only). */
int ne_coll_nvl_setup(struct ne_coll *c);
int ne_coll_nvl_lane_init(struct ne_coll *ln);
void ne_coll_nvl_free(struct ne_coll *c);
/* 0 when no NVLink connection joins two lanes of lane_of, else -EINVAL. */
int ne_coll_nvl_lanes_check(const struct ne_coll *c, const uint32_t *lane_of);
/* Send transfer s of NVLink connection k at now: its bytes into the
 * receiver's slot (data on), its end on the heap. */
void ne_coll_nvl_post(struct ne_coll *c, uint32_t k, uint32_t s, uint64_t now);
/* The transfers that ended by now: sent and consumed. Returns how many. */
int ne_coll_nvl_poll(struct ne_coll *c, uint64_t now);
/* When the next NVLink transfer ends; UINT64_MAX when none is in flight. */
uint64_t ne_coll_nvl_next_ns(const struct ne_coll *c);
/* Whether network transfer s of connection k is staged for its RDMA: PXN
 * (cn->pxn) crossed NVLink to the NIC's GPU; with proto_cap_Bps, its data
 * written at that rate (PXN: both at once). The first call starts it at
 * now (an event on the NVLink heap). */
bool ne_coll_pxn_staged(struct ne_coll *c, uint32_t k, uint32_t s, uint64_t now);

/* ne_coll_chring.c. Setup before the plan: the channels' ring orders (none
 * without cfg.gpu_of, for other ops or partial servers); 0 or -ENOMEM.
 * After the plan: each connection's sending NIC (PXN); 0 or -ENOMEM.
 * After the MRs: each PXN NIC's MR over its sender's source buffer; 0 or
 * the NIC's error. Free: the orders (not a lane's). */
int ne_coll_chring_setup(struct ne_coll *c);
int ne_coll_chring_nics(struct ne_coll *c);
int ne_coll_chring_mrs(struct ne_coll *c);
void ne_coll_chring_free(struct ne_coll *c);

/* ne_coll_run.c: connection k may progress: on the list of marked ones. */
void ne_coll_mark_conn(struct ne_coll *c, uint32_t k);
/* ne_coll_run.c: transfer s of connection k has arrived whole at its
 * receiver: reduce or copy it, mark who waits for it. */
void ne_coll_consume(struct ne_coll *c, uint32_t k, uint32_t s);

/* ne_coll_post.c: WQEs a message of len bytes takes at each end. */
uint32_t ne_coll_msg_wqes(const struct ne_coll *c, uint32_t len);
/* Post the remaining WQEs of transfer s of connection k; 0, or the post's
 * negative errno (-ENOMEM: queue full; -EAGAIN: CTRAN, every QP at its cap),
 * after which a later call resumes where this one stopped. */
int ne_coll_post_msg(struct ne_coll *c, uint32_t k, uint32_t s, uint64_t now);
/* Post the CTS of transfer s of connection k (rocelab: SEND WITH IMM on the
 * control QP; nccl: the FIFO entry on the reverse of data QP 0). */
int ne_coll_post_cts(struct ne_coll *c, uint32_t k, uint32_t s, uint64_t now);
/* Send completion of a data WQE (CTRAN: frees its QP's slot). */
void ne_coll_data_sent(struct ne_coll *c, struct coll_conn *cn, uint64_t wr_id);

/* ne_coll_proxy.c. Post through rank's proxy: direct when the costs are off
 * (ne_post_send's result), else queued (0). */
int ne_coll_proxy_post(struct ne_coll *c, uint32_t rank, uint32_t qpn,
		       const struct ne_send_wr *wr, uint64_t now);
/* Create the proxies when a cost is set; 0 or -ENOMEM. */
int ne_coll_proxy_setup(struct ne_coll *c);
void ne_coll_proxy_free(struct ne_coll *c);
/* Drain CQs: without costs every notified CQ at once; with costs one CQE or
 * post per free thread at a time. Returns completions handled. */
int ne_coll_proxy_poll(struct ne_coll *c, uint64_t now);
/* Earliest time a busy proxy thread frees (UINT64_MAX: none). */
uint64_t ne_coll_proxy_next_ns(const struct ne_coll *c);

/* ne_coll_keys.c: one key into cfg, or with spec (not NULL) a --coll spec's
 * (its spec-only keys allowed, library-only keys refused). 0 or -EINVAL with msg. */
int ne_coll_key_set(struct ne_coll_config *cfg, struct ne_coll_spec *spec, const char *key,
		    const char *value, char *msg, size_t cap);

#endif /* NE_COLL_PRIV_H */
