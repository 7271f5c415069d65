/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll: NCCL-like collectives over emulated RoCEv2 NICs (ne_nic), driven
 * from outside on simulated time. Pure C, no clock, no globals.
 *
 * Operations: ring AllReduce (reduce-scatter then all-gather, 2(n-1) hops per
 * chunk), ring AllGather, ring ReduceScatter, AllToAll (full mesh), an N:1
 * incast, and Broadcast and Reduce as NCCL's ring pipeline from / to the root
 * (n-1 hops per chunk; ne_coll_root.c), and Send/Recv (each rank to rank +
 * shift, or explicit pairs; ne_coll_p2p.c). Data are float32; the reduction is a sum, computed for real.
 *
 * Transport. Each connection (sender rank, receiver rank, channel) has
 * qps_per_conn data QPs (sender -> receiver, RDMA WRITE WITH IMMEDIATE,
 * DSCP data_dscp) and one control QP (receiver -> sender, SEND WITH
 * IMMEDIATE of 0 bytes carrying clear-to-send, DSCP ctrl_dscp). Every QP has
 * its own QPN, so E-ECMP on the BTH destination QP can spread them; their
 * UDP source ports follow the NIC's policy (config field `sport`).
 * A connection carries an ordered sequence of chunk transfers (seq 0, 1, ...).
 * The immediate of every WRITE is the transfer's seq; the receiver writes
 * arrive in a per-connection staging area of `window` slots of chunk_bytes,
 * and when all parts of a transfer have arrived the receiver reduces (sum)
 * or copies the slot into its result buffer. Why WRITE WITH IMM and not
 * WRITE + SEND: one message per part, the receiver learns the seq from the
 * immediate, and go-back-N covers data and notification together.
 *
 * QP strategies (Meta, SIGCOMM'24): NE_COLL_QP_SPLIT divides every chunk
 * evenly over the connection's QPs (one WRITE per QP); NE_COLL_QP_RR puts
 * each whole chunk on the next QP in turn.
 *
 * Admission. cts = true (receiver-driven): the receiver grants transfers with
 * CTS; a sender writes transfer s only after CTS(s) arrived. A receiver keeps
 * at most `window` granted-but-not-received transfers per channel, over all
 * its incoming connections of that channel (round-robin among them), so the
 * bytes in flight towards a receiver never exceed channels x window x
 * chunk_bytes (window 1: channels x chunk, Meta's bound). cts = false: a
 * sender writes transfer s as soon as its data is ready and transfer
 * s - window of the same connection has completed (all parts ACKed), so each
 * connection has at most window chunks in flight (no receiver-wide bound).
 *
 * Models. NE_COLL_MODEL_ROCELAB (default) is the above. NE_COLL_MODEL_NCCL
 * follows NCCL's structure (docs/explanation/FACTS-NCCL-RNIC.md): every channel is its
 * own connection with its own QP set; a ring chunk is min(NCCL_CHUNKSTEPS
 * steps, ceil(size / (channels x ranks))) and goes as at most two slices,
 * one network message each (ne_coll_nccl_chunk_elems, ne_coll_nccl_slices;
 * AllGather/ReduceScatter apply the same chunk cap to each channel's share
 * of a block, AllToAll/incast send messages of NCCL_P2P_NET_CHUNKSIZE); a
 * connection has at most 4 messages in flight (NCCL_STEPS / SLICESTEPS), a
 * sender reuses a slot only when its previous message is ACKed; the receiver
 * grants each message with NCCL's FIFO entry: a 64-byte WRITE on the reverse
 * direction of data QP 0 (no control QP), in the class of NCCL_IB_FIFO_TC
 * when set (that QP's DSCP), unsignaled. It is a WRITE WITH IMM (the
 * immediate names the message) so the emulated sender learns of it from a
 * receive completion, where NCCL's proxy reads its FIFO memory: that
 * completion is not charged a poll. QP strategies: split as NCCL's
 * ncclIbMultiSend (pieces of roundup(ceil(S / nqps), 128) bytes, a zero-length
 * WRITE WITH IMM on every QP past the end, the message done when all nqps
 * completions are in); rr with message s of a connection on QP s mod nqps at
 * both ends (the receiver counts a completion on another QP in rr_mismatch);
 * ctran (Meta's CTRAN): WQEs of min(ctran_wqe_bytes, remaining) bytes on the
 * QPs in turn, a QP with ctran_max_msgs outstanding skipped. cfg.window,
 * cfg.chunk_bytes, cfg.cts (always on) and cfg.ctrl_dscp (no control QP)
 * are not used in this model.
 *
 * Proxy thread (both models): with proxy_post_ns or proxy_poll_ns set, each
 * rank has one proxy thread that posts WQEs and polls CQEs one at a time: a
 * post reaches the NIC proxy_post_ns after the thread started it, a CQE is
 * acted on proxy_poll_ns after the thread took it, and work waits while the
 * thread is busy. ne_coll_next_event_ns() then names the time the thread is
 * next free. With both 0 (default) posts and polls take no time.
 *
 * Launch cost (both models): with cfg.launch_ns set, each iteration's ranks
 * post and grant nothing until launch_ns after it began (launch=nccl: NCCL's
 * baseLat of the algorithm run, ne_coll_launch_ns); the time counts in the
 * iteration's. ne_coll_next_event_ns() names its end.
 * launch=nccl also charges NCCL's hwLat of the algorithm and protocol run on
 * each step of AllReduce, AllGather and ReduceScatter (nc_tune_step_lat_us):
 * an NVLink step's hop takes it in place of nvlink_lat_ns; a network step's
 * transfer is consumed that long after its last byte came in (the wire's
 * own time stays emulated, so a network step pays both).
 *
 * Protocol caps (model nccl, LL and LL128): NCCL's tuning caps their bus
 * bandwidth (nc_tune_bus_cap_gbs, llMaxBws); a run sends each GPU's data no
 * faster than that. An NVLink transfer takes the longer of its wire bytes at
 * nvlink_Bps and its data bytes at the cap; a network transfer is first
 * written at the cap (on the GPU's NVLink egress clock, an event, while it
 * waits for its CTS), then posted (gate NE_COLL_GATE_WRITE). docs/reference/coll.md, "Protocols".
 *
 * NVLink. With cfg.server_of, a connection between two ranks of one server
 * (GPUs joined by NVLink through an NVSwitch) posts nothing on the NICs:
 * each of its transfers leaves when it is ready and the receiver's slot is
 * free (no CTS), takes nc_nvlink_xfer_ns(len) with nvlink_Bps and
 * nvlink_lat_ns (nccl/nc_nvlink.h), and is then sent and received at once,
 * an event of the collective (ne_coll_next_event_ns names it). The sender
 * GPU's NVLink bandwidth is shared first come first served: a transfer
 * starts when the GPU's previous one has left it (its bytes, not its
 * latency). What is not modelled: the receiver's ingress, NVSwitch
 * contention between GPUs, the GPU-to-NIC PCIe path's time (its rate is a
 * limit: rocelab-dp gives a GPU's NIC min(link, PCIe) as its line rate,
 * topo_host_nic_rate_bps). Its QPs exist and stay idle. With data on, the bytes are copied into the receiver's
 * staging slot at the post and consumed at the end, as a WRITE's would be.
 *
 * Channel rings (NCCL's per-channel rings, nccl/nc_ring.h). With cfg.gpu_of
 * and the ring ops (AllReduce, AllGather, ReduceScatter, Broadcast, Reduce),
 * when every server's ranks are its GPUs 0..G-1 (the same G everywhere):
 * channel c's ring visits the servers in the order of their first rank and,
 * inside each, GPUs k, k-1, ..., k+1 (k = c mod G); channel c's connection
 * of rank r goes to the next rank of that ring, and a ring's segment j
 * starts at its position j (AllGather: the block of the rank there). A
 * network hop of channel c leaves through NIC k of the sending server: its
 * QPs are on the NIC of that server's GPU k (PXN when the sender is GPU
 * k+1), and each message first crosses NVLink to GPU k (timed as an NVLink
 * transfer on the sender's egress) while its CTS may still be on the way.
 * Otherwise (no gpu_of, partial servers, other ops) every channel follows
 * the rank order and a connection's QPs are its sender's.
 *
 * Sizes follow nccl-tests: `bytes` is the "size" column. AllReduce: bytes
 * per rank; AllGather: output per rank (each rank contributes bytes/n);
 * ReduceScatter: input per rank (output bytes/n); AllToAll: send buffer per
 * rank (bytes/n to each peer); incast: bytes sent by each non-root rank to
 * the root; Broadcast, Reduce and Send/Recv: the buffer's bytes. Counts are rounded
 * down like nccl-tests (to whole floats, and to
 * a multiple of n floats for AllGather/ReduceScatter/AllToAll).
 * busbw = algbw x 2(n-1)/n (AllReduce), x (n-1)/n (AllGather, ReduceScatter,
 * AllToAll), x (n-1) for incast (the root's ingress), x 1 for Broadcast and
 * Reduce (nccl-tests doc/PERFORMANCE.md) and Send/Recv (src/sendrecv.cu); algbw = size / time.
 *
 * Driving it (one call sequence per simulated instant `now`):
 *   ne_nic_rx() every frame that arrived by now;
 *   ne_coll_poll(coll, now)  -- drains the CQs that have completions (the
 *                               collective registers ne_cq_set_notify on each
 *                               CQ it creates), grants CTS, posts WRs;
 *   ne_nic_poll_tx() each NIC until it returns 0, forward the frames;
 *   sleep until min(ne_nic_next_event_ns(each NIC), ne_coll_next_event_ns(),
 *   the fabric's next delivery).
 * Iterations (warmup_iters + iters) run back to back from ne_coll_start();
 * ne_coll_done() becomes true after the last one.
 */
#ifndef NE_COLL_H
#define NE_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ne_nic.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ne_coll;

enum ne_coll_op {
	NE_COLL_ALLREDUCE = 0,
	NE_COLL_ALLGATHER,
	NE_COLL_REDUCESCATTER,
	NE_COLL_ALLTOALL,
	NE_COLL_INCAST,
	NE_COLL_BROADCAST,     /* ring pipeline from cfg.root (ne_coll_root.c) */
	NE_COLL_REDUCE,        /* ring pipeline to cfg.root, summed on the way */
	NE_COLL_SENDRECV,      /* one-way p2p transfers: the shift, or cfg.pairs (ne_coll_p2p.c) */
};

enum ne_coll_qp_mode {
	NE_COLL_QP_SPLIT = 0, /* each chunk divided evenly over the QPs */
	NE_COLL_QP_RR,        /* each whole chunk on the next QP in turn */
	NE_COLL_QP_CTRAN,     /* model nccl only: Meta's CTRAN, WQEs of ctran_wqe_bytes
			       * round-robin over the QPs, at most ctran_max_msgs per QP */
};

/* How the collective is structured (see "Models" above). */
enum ne_coll_model {
	NE_COLL_MODEL_ROCELAB = 0, /* default: chunk_bytes transfers, window per receiver */
	NE_COLL_MODEL_NCCL,        /* NCCL's ring formula, pipeline and FIFO (CTS) */
};

/* AllReduce's algorithm (cfg.algo). */
enum ne_coll_algo {
	NE_COLL_ALGO_RING = 0, /* the ring (default) */
	NE_COLL_ALGO_TREE,     /* NCCL's double binary tree: reduce up, broadcast down */
	NE_COLL_ALGO_AUTO,     /* NCCL's tuning (nccl/nc_tune) picks ring or tree per size */
};

/* UDP source-port policy applied to the NICs before the QPs are connected. */
enum ne_coll_sport {
	NE_COLL_SPORT_NIC = 0, /* leave the NICs' own policy */
	NE_COLL_SPORT_RXE,     /* 0xC000 | fold(lqpn x rqpn) (Linux rxe) */
	NE_COLL_SPORT_FIXED,   /* sport_fixed on every QP: 5-tuple ECMP polarizes */
	NE_COLL_SPORT_HASH,    /* 0xC000 | hash(sport_seed, lqpn, rqpn) */
};

#define NE_COLL_MAX_QPS 64u        /* model rocelab */
#define NE_COLL_NCCL_MAX_QPS 128u  /* model nccl: NCCL_IB_QPS_PER_CONNECTION's limit */
#define NE_COLL_MAX_CHANNELS 64u
#define NE_COLL_MAX_RANKS 1024u
#define NE_COLL_MAX_PAIRS 256u     /* op sendrecv: explicit pairs (cfg.pairs) */
#define NE_COLL_LAUNCH_NCCL UINT32_MAX /* cfg.launch_ns: NCCL's baseLat, resolved at create */

/* NCCL's constants (src/include/device.h, collectives.h, Simple protocol;
 * LL's and LL128's are nc_tune's). */
#define NE_COLL_NCCL_STEPS 8u            /* NCCL_STEPS: buffer slots per connection */
#define NE_COLL_NCCL_CHUNKSTEPS 4u       /* ring chunk = NCCL_STEPS / 2 steps */
#define NE_COLL_NCCL_SLICESTEPS 2u       /* slice (one network message) = NCCL_STEPS / 4 steps */
#define NE_COLL_NCCL_SLICES_IN_FLIGHT 4u /* NCCL_STEPS / SLICESTEPS per connection */
#define NE_COLL_NCCL_ALIGN 128u          /* split piece rounding, size key unit */
#define NE_COLL_NCCL_FIFO_ENTRY 64u      /* bytes of one FIFO (CTS) entry, NCCL >= 2.20 */
#define NE_COLL_NCCL_BUFFSIZE_DEFAULT (4u << 20)       /* NCCL_BUFFSIZE */
#define NE_COLL_NCCL_P2P_CHUNK_DEFAULT (128u << 10)    /* NCCL_P2P_NET_CHUNKSIZE */
#define NE_COLL_CTRAN_WQE_DEFAULT (512u << 10)  /* NCCL_CTRAN_IB_QP_SCALING_THRESHOLD */
#define NE_COLL_CTRAN_MAX_MSGS_DEFAULT 128u     /* NCCL_CTRAN_IB_QP_MAX_MSGS */
#define NE_COLL_CTRAN_MAX_QPS_DEFAULT 16u       /* NCCL_CTRAN_IB_MAX_QPS */
#define NE_COLL_FIFO_TC_NONE (-1)               /* FIFO in the data QP's class */

struct ne_coll_config {
	enum ne_coll_op op;
	uint32_t nranks;        /* 2..NE_COLL_MAX_RANKS */
	uint64_t bytes;         /* nccl-tests size (see above); > 0 */
	uint32_t channels;      /* parallel rings / connections per peer, default 1 */
	uint32_t qps_per_conn;  /* data QPs per connection, 1..64, default 1 */
	enum ne_coll_qp_mode qp_mode; /* default NE_COLL_QP_SPLIT */
	uint32_t chunk_bytes;   /* multiple of 4, >= 4, default 128 KiB */
	uint32_t window;        /* chunks in flight per channel (see Admission), default 1 */
	bool cts;               /* receiver-driven clear-to-send, default true */
	uint8_t data_dscp;      /* default 26 (priority 3, lossless) */
	uint8_t ctrl_dscp;      /* default 48 (priority 6, strict priority) */
	uint32_t path_mtu;      /* 256..4096, default 4096 */
	uint8_t timeout;        /* IB timeout code of every QP, default 14 (67 ms) */
	bool timeout_given;     /* NCCL_IB_TIMEOUT was given: a driver keeps timeout */
	uint32_t psn_offset;    /* added to every QP's first PSN, default 0: a driver that
				 * creates QPs again with the numbers of QPs just destroyed
				 * (rocelab-dp's in-place pass) moves their sequence away, so
				 * that a frame of the old ones still on the wire cannot match */
	uint8_t retry_cnt;      /* default 7 */
	uint32_t root;          /* incast, broadcast and reduce root rank, default 0 */
	bool data;              /* true (default): real buffers, reduction computed;
				 * false: only the wire behaviour (payload bytes are
				 * whatever the staging holds), memory O(chunk) */
	uint32_t warmup_iters;  /* default 0 */
	uint32_t iters;         /* measured iterations, default 1 */
	enum ne_coll_sport sport;
	uint16_t sport_fixed;   /* for NE_COLL_SPORT_FIXED, default 0xC000 */
	uint32_t sport_seed;    /* for NE_COLL_SPORT_HASH */

	/* Model (default NE_COLL_MODEL_ROCELAB: everything above as it was). */
	enum ne_coll_model model;
	/* model nccl (key names in ne_coll_config_set): */
	uint32_t nccl_buffsize;    /* NCCL_BUFFSIZE, default 4 MiB; a step is 1/8 */
	uint32_t nccl_p2p_chunk;   /* NCCL_P2P_NET_CHUNKSIZE: AllToAll/incast/sendrecv messages, 128 KiB */
	uint32_t nccl_min_channels; /* NCCL_MIN_NCHANNELS, default 1: channels at least this */
	uint32_t nccl_max_channels; /* NCCL_MAX_NCHANNELS, default 64: channels at most this */
	int16_t nccl_fifo_tc;      /* NCCL_IB_FIFO_TC: traffic class of the FIFO (CTS)
				    * writes (DSCP = tc >> 2), default NE_COLL_FIFO_TC_NONE */
	uint32_t ctran_wqe_bytes;  /* NCCL_CTRAN_IB_QP_SCALING_THRESHOLD, 512 KiB; 0 = split */
	uint32_t ctran_max_msgs;   /* NCCL_CTRAN_IB_QP_MAX_MSGS, 128 outstanding WQEs per QP */

	/* Host cost on each rank's single proxy thread (both models), 0 = off
	 * (default): every post of a send WQE and every poll of a CQE occupies the
	 * thread this long; they are served one at a time, in order. */
	uint32_t proxy_post_ns;    /* key proxy_post_wqe, e.g. "250ns" */
	uint32_t proxy_poll_ns;    /* key proxy_poll_cqe, e.g. "100ns" */

	/* Fixed cost of each collective launch (key launch), 0 = off (default):
	 * every rank starts each iteration this long after it began, before it
	 * sends or grants anything; the time is part of the iteration's.
	 * NE_COLL_LAUNCH_NCCL: NCCL 2.21.5's baseLat (src/graph/tuning.cc) of
	 * the algorithm and protocol run (ne_coll_proto_resolve): Ring Simple
	 * 8.4 us, LL 6.6, LL128 14; Tree 0, 6.8, 14; ops NCCL does not tune (alltoall, incast, sendrecv) 0; and
	 * its hwLat per step (see "Launch cost" above). */
	uint32_t launch_ns;

	/* Active-QP time series (ne_coll_set_series): row interval, key series,
	 * e.g. "10us" (100 ns .. 1 s); 0 = off (default, no cost). */
	uint32_t series_ns;

	/* Servers (see "NVLink" above): server_of[rank] names each rank's
	 * server (nranks entries, the caller's memory, copied at create);
	 * NULL (default): every rank is its own server, no NVLink hop. */
	const uint32_t *server_of;
	uint64_t nvlink_Bps;    /* per GPU per direction, bytes/s, > 0; H100: 450e9 */
	uint64_t nvlink_lat_ns; /* one NVLink hop; H100 (NCCL's figure): 600 */

	/* AllReduce's algorithm (key algo, or NCCL_ALGO): NE_COLL_ALGO_RING
	 * (default), NE_COLL_ALGO_TREE (NCCL's double binary tree across
	 * servers, a chain inside each; ne_coll_tree.c), NE_COLL_ALGO_AUTO
	 * (at create, NCCL's tuning model, 2.21.5's or key release's, for
	 * H100 servers of this shape picks one for cfg.bytes; other ops run
	 * the ring). */
	enum ne_coll_algo algo;
	/* NCCL_ALGO / NCCL_PROTO: bits (1 << enum nc_algo / nc_proto) the
	 * tuning may not pick; 0 (default): all allowed. Without a pick, the
	 * nccl model runs Simple when allowed, else the first allowed (LL,
	 * LL128); the rocelab model needs Simple allowed (it runs Simple). */
	uint8_t nccl_algo_off, nccl_proto_off;
	/* Key release: the NCCL release (enum nc_release) whose tuning.cc
	 * latency and bandwidth formulas algo=auto's tuning and launch=nccl
	 * follow; 0 (default): 2.21.5. */
	uint8_t nccl_release;
	/* Channel rings (see "Channel rings" above): gpu_of[rank] names each
	 * rank's GPU in its server (nranks entries, the caller's memory, copied
	 * at create; needs server_of). NULL (default): every channel's ring
	 * follows the rank order. */
	const uint32_t *gpu_of;
	/* Send/Recv (op sendrecv, ne_coll_p2p.c): with npairs 0, every rank r
	 * sends bytes to (r + shift) mod nranks (nccl-tests' sendrecv_perf:
	 * shift 1, the default); else the pairs[0..npairs) one-way transfers
	 * {sender, receiver}, each of bytes (key pairs=S>D+S>D...). */
	uint32_t shift;
	uint32_t npairs;
	uint16_t pairs[NE_COLL_MAX_PAIRS][2];
	/* A process that runs only some ranks (the dataplane's MPI ranks, each
	 * one partition's): with here_lane_of set, the ranks with
	 * here_lane_of[rank] == here_lane are here. A connection with neither
	 * rank here keeps its counts (transfers, bytes, largest message) but not
	 * its transfers, their state nor their latency records. The QPs and MRs
	 * of a rank not here are numbers and keys only (ne_qp_hold, ne_mr_hold:
	 * the same ones, its own process makes them), and it gets no CQ.
	 * nranks entries, the caller's memory, read at create only. Such a
	 * collective runs in lanes (ne_coll_set_lanes) with the same lanes, and
	 * only lane here_lane is started and polled here. NULL (default): every
	 * rank here. The tree (ne_coll_tree.c) keeps its whole plan. */
	const uint32_t *here_lane_of;
	uint32_t here_lane;
};

/* One result, the numbers of one nccl-tests line. */
struct ne_coll_result {
	enum ne_coll_op op;
	uint32_t nranks;
	uint64_t size;          /* bytes, nccl-tests "size" */
	uint64_t count;         /* elements, nccl-tests "count" */
	const char *type;       /* "float" */
	const char *redop;      /* "sum" or "none" */
	int root;               /* incast root, else -1 */
	uint32_t iters;         /* measured iterations averaged */
	uint64_t time_ns;       /* mean iteration time (integer ns) */
	uint64_t min_time_ns, max_time_ns;
	double time_us;         /* time_ns / 1000 */
	double algbw;           /* GB/s (1e9 bytes/s): size / time */
	double busbw;           /* GB/s: algbw x ne_coll_busbw_factor() */
	long wrong;             /* wrong elements from ne_coll_check(), -1 not checked */
	/* Active QPs per NIC over the measured iterations (see ne_coll_active_qps):
	 * time-weighted mean over the iterations' time and all ranks, the same
	 * over the time a NIC had at least one active QP, and the most on one NIC. */
	double active_qps_mean;
	double active_qps_busy_mean;
	uint32_t active_qps_max;
};

/* The condition a message waited for last before it was posted, in the
 * order the sender checks them (ne_coll_stats.gate_nvl / gate_net). */
enum ne_coll_gate {
	NE_COLL_GATE_DATA,  /* its data (the previous hop's) or its turn on the connection */
	NE_COLL_GATE_CTS,   /* its CTS (nccl: its FIFO entry) */
	NE_COLL_GATE_SLOT,  /* a send slot: the message window back completed */
	NE_COLL_GATE_PXN,   /* its PXN copy to the NIC's GPU */
	NE_COLL_GATE_WRITE, /* LL / LL128: its lines written at NCCL's cap (network) */
	NE_COLL_GATE_QUEUE, /* room to post: the NIC's queue, the proxy's, CTRAN's cap */
	NE_COLL_GATES
};

struct ne_coll_stats {
	uint64_t data_wrs;        /* WRITE WITH IMM work requests posted */
	uint64_t data_bytes;      /* payload bytes of those */
	uint64_t cts_sent;        /* CTS messages posted */
	uint64_t transfers_done;  /* chunk transfers received and consumed */
	uint64_t max_granted_bytes; /* largest granted-not-received bytes towards one rank */
	uint64_t post_busy;       /* posts refused with -ENOMEM (queue full), retried later */
	uint64_t errors;          /* completions with an error status */
	uint32_t first_error_status; /* enum ne_wc_status of the first error */
	/* Work of ne_coll_poll(), counted (not timed): it follows the CQ
	 * notifications, so it grows with completions, not with idle ranks. */
	uint64_t rank_visits;     /* ranks whose CQ a poll drained (one per notification burst) */
	uint64_t cq_polls;        /* ne_cq_poll() calls */
	uint64_t conn_steps;      /* sender steps run on connections marked by an event */
	uint64_t group_steps;     /* grant steps run on receiver groups marked by an event */
	/* model nccl */
	uint64_t zero_len_wrs;    /* split: zero-length WRITEs for QPs past the message end */
	uint64_t rr_mismatch;     /* rr: a message completed at the receiver on another QP
				   * than the one both sides' counters name (0 when in step) */
	uint64_t ctran_qp_full;   /* CTRAN: a QP skipped because ctran_max_msgs were outstanding */
	uint64_t ctran_max_outstanding; /* CTRAN: most WQEs outstanding on one QP */
	/* proxy thread, summed over ranks (see ne_coll_rank_proxy) */
	uint64_t wqes_posted;     /* send WQEs posted (data and CTS/FIFO) */
	uint64_t cqes_polled;     /* CQEs taken from the CQs */
	uint64_t proxy_busy_ns;   /* proxy time spent on them (posts x post + polls x poll) */
	/* active QPs (ne_coll_active_qps), every iteration, summed over ranks:
	 * active_qp_ns / nic_ns is the time-weighted mean per NIC */
	uint64_t active_qp_ns;    /* integral of active QPs over time (QP x ns) */
	uint64_t active_busy_ns;  /* time a NIC had at least one active QP */
	uint64_t nic_ns;          /* finished iterations' time x ranks */
	uint32_t active_qps_max;  /* most active QPs on one NIC at once */
	/* NVLink (cfg.server_of): transfers between two ranks of one server */
	uint64_t nvlink_xfers;    /* transfers timed by the NVLink model */
	uint64_t nvlink_bytes;    /* their payload bytes */
	uint64_t pxn_xfers;       /* network messages first copied over NVLink to the
				   * NIC's GPU (channel rings' PXN hops), counted once */
	/* per message, every iteration, at its post: the condition it waited
	 * for last (enum ne_coll_gate; DATA when it went as soon as it was the
	 * connection's next with its data in). NVLink transfers and network
	 * messages apart; each array sums to their messages. */
	uint64_t gate_nvl[NE_COLL_GATES];
	uint64_t gate_net[NE_COLL_GATES];
};

/* One rank's proxy thread. */
struct ne_coll_proxy_stats {
	uint64_t wqes_posted;
	uint64_t cqes_polled;
	uint64_t busy_ns;
	uint64_t max_queue;       /* most posts waiting for the thread at once */
};

/* Description of one connection, for telemetry and tests. */
struct ne_coll_conn_info {
	uint32_t src, dst, channel;
	uint32_t src_nic;             /* rank whose NIC holds the sender's QPs (PXN: not src) */
	uint32_t nqps;
	const uint32_t *src_data_qpn; /* nqps entries: QPNs on the sender's NIC */
	const uint32_t *dst_data_qpn; /* nqps entries: QPNs on the receiver's NIC */
	uint32_t src_ctrl_qpn, dst_ctrl_qpn;
	uint32_t ntransfers;          /* chunk transfers per iteration */
	uint64_t bytes;               /* payload bytes per iteration */
};

/* Defaults (see the field comments); op AllReduce, nranks 2, bytes 1 MiB. */
void ne_coll_config_default(struct ne_coll_config *cfg);

/* Check a config; 0 or -EINVAL. */
int ne_coll_config_check(const struct ne_coll_config *cfg);

/* Op sendrecv against cfg->nranks: shift in 1..nranks-1, every pair's ranks
 * below nranks. 0, or -EINVAL with "pairs=3>9: rank 9 is outside the 8 ranks
 * (0..7)" (or the shift's) in msg (NULL: no message). Other ops: 0. */
int ne_coll_p2p_check(const struct ne_coll_config *cfg, char *msg, size_t cap);

/* Op sendrecv: its one-way transfers (the shift: one per rank; else cfg->npairs). */
uint32_t ne_coll_p2p_npairs(const struct ne_coll_config *cfg);
/* Op sendrecv: transfer p's (below ne_coll_p2p_npairs) sender *s and receiver *d. */
void ne_coll_p2p_pair(const struct ne_coll_config *cfg, uint32_t p, uint32_t *s, uint32_t *d);

/* Set one parameter from text, as NCCL's environment does. Keys:
 *   model=rocelab|nccl (nccl also applies NCCL's defaults: 1 QP, round-robin,
 *     NCCL_BUFFSIZE 4 MiB; set it first)
 *   NCCL_IB_QPS_PER_CONNECTION=1..128, NCCL_IB_SPLIT_DATA_ON_QPS=0|1,
 *   NCCL_BUFFSIZE, NCCL_P2P_NET_CHUNKSIZE (bytes: 4194304, 4M, 4MiB, 512K,
 *     multiples of 128), NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS (1..64),
 *   NCCL_IB_TC, NCCL_IB_FIFO_TC (0..255, DSCP = tc >> 2), NCCL_IB_TIMEOUT (0..31),
 *   NCCL_CTRAN_IB_MAX_QPS (QPs, selects qp_mode ctran),
 *   NCCL_CTRAN_IB_QP_SCALING_THRESHOLD (bytes, multiple of 128, 0 = split),
 *   NCCL_CTRAN_IB_QP_MAX_MSGS (1..65535),
 *   proxy_post_wqe, proxy_poll_cqe (time: 0, 250ns, 1us, 1.5us; at most 1 s),
 *   series (time, 0 or 100ns .. 1s: interval of the active-QP series),
 *   and the plain fields: op, nranks, bytes, channels, qps, qp_mode
 *   (split|rr|ctran), chunk (multiple of 4), window, cts (0|1), iters,
 *   warmup_iters, data (0|1).
 * Returns 0, or -EINVAL for an unknown key or a bad value, with a message
 * naming the pair and what is wrong in msg (if not NULL, cap bytes). The
 * config is unchanged on error. */
int ne_coll_config_set_msg(struct ne_coll_config *cfg, const char *key, const char *value,
			   char *msg, size_t cap);
/* Same, without the message. */
int ne_coll_config_set(struct ne_coll_config *cfg, const char *key, const char *value);

/*
 * A --coll spec: "key=value,..." in the one --coll language (the key table of
 * ne_coll_keys.c; `rocelab-dp --coll help` prints it). The command line,
 * traffic files, experiment files and library callers read specs through
 * these functions alone. What needs the fabric stays text for the caller:
 * hosts=, and sizes= as the sweep's bounds.
 */
struct ne_coll_spec {
	struct ne_coll_config cfg;
	uint64_t size_min, size_max; /* sizes=MIN[:MAX]: the sweep's bounds (one size: equal) */
	char *hosts;                 /* hosts=: names joined by '+'; NULL: all (malloc'ed) */
	bool order_nccl;             /* order=nccl: the caller deals the ranks in NCCL's ring
				      * order through each server (nccl/nc_ring.h, channel 0) */
	bool in_place;               /* inplace=on: each size's in-place pass too (the caller runs it) */
};

/* The --coll defaults (the table's): ne_coll_config_default's, with round-robin
 * QPs, 512 KiB chunks, a window of 4, rxe's source ports, 1 MiB; every host. */
void ne_coll_spec_default(struct ne_coll_spec *s);

/*
 * Read "key=value,..." into s (after ne_coll_spec_default): model= first
 * wherever it stands (it applies NCCL's defaults), then the other keys in
 * order; then check the keys together. Returns 0, -ENOMEM, or -EINVAL with
 * "KEY=VALUE: why" (or the rule two keys break) in msg; s may be partly set
 * then (free it with ne_coll_spec_free).
 */
int ne_coll_spec_parse(struct ne_coll_spec *s, const char *text, char *msg, size_t cap);

/* One key of a spec, as ne_coll_spec_parse reads it. Returns 0 or -EINVAL with msg. */
int ne_coll_spec_set(struct ne_coll_spec *s, const char *key, const char *value, char *msg,
		     size_t cap);

/* The rules between keys (a QP count or mode the model cannot take). 0, or -EINVAL with msg. */
int ne_coll_spec_check(const struct ne_coll_spec *s, char *msg, size_t cap);

/* Frees what s holds (its hosts text). */
void ne_coll_spec_free(struct ne_coll_spec *s);

/*
 * QPs a NIC needs for spec s with nranks ranks, whatever its rank (the
 * incast root's or an AllToAll rank's at most, ne_coll_qps_needed), with
 * room beside the collective for --rdma transfers: as many again for a ring,
 * 64 peers for an AllToAll or incast, and 16 QPs more.
 */
uint32_t ne_coll_spec_qps_room(const struct ne_coll_spec *s, uint32_t nranks);

/* Print the --coll keys: values, the default, what each means. */
void ne_coll_keys_help(FILE *out);

/* Effective channel count: cfg->channels, raised to NCCL_MIN_NCHANNELS and
 * capped at NCCL_MAX_NCHANNELS in model nccl; cfg->channels otherwise. */
uint32_t ne_coll_channels(const struct ne_coll_config *cfg);

/* NCCL's arithmetic (model nccl), sizes in elements of elem_bytes.
 * Ring chunk used by the loop that starts at element `offset` of a `count`
 * element AllReduce: min(chunk, ceil((count - offset) / (nchannels x
 * nranks))), chunk the protocol's (Simple: NCCL_CHUNKSTEPS steps of
 * buffsize / NCCL_STEPS bytes; LL, LL128: one step's data, nc_tune.h).
 * 0 when an argument is 0 or offset >= count. */
uint64_t ne_coll_nccl_chunk_elems(uint64_t count, uint64_t offset, uint32_t nchannels,
				  uint32_t nranks, uint64_t chunk);
/* Slices (network messages) of a chunk of nelem elements: slice =
 * max(ceil(nelem / 32) x 16, step x SLICESTEPS / 32) elements; at most
 * CHUNKSTEPS / SLICESTEPS (2) of them. Writes their sizes to slice[0..]
 * and returns how many (0 for nelem 0). */
uint32_t ne_coll_nccl_slices(uint64_t nelem, uint32_t buffsize, uint32_t elem_bytes,
			     uint64_t slice[2]);
/* NCCL's split of a message of len bytes over nqps QPs: piece =
 * roundup(ceil(len / nqps), 128); QP q carries [q x piece, min(len, (q+1) x
 * piece)), zero bytes past the end. Returns QP q's length, its offset in *off. */
uint32_t ne_coll_split_piece(uint32_t len, uint32_t nqps, uint32_t q, uint32_t *off);
/* CTRAN: WQEs a message of len bytes takes with WQEs of wqe_bytes
 * (min(wqe_bytes, remaining) each; wqe_bytes 0: one per QP, split equally). */
uint32_t ne_coll_ctran_wqes(uint32_t len, uint32_t wqe_bytes, uint32_t nqps);

/* QPs and MRs a rank's NIC needs for this config. */
uint32_t ne_coll_qps_needed(const struct ne_coll_config *cfg, uint32_t rank);
uint32_t ne_coll_mrs_needed(const struct ne_coll_config *cfg, uint32_t rank);

/* Fill a NIC config for rank: defaults, MAC 02:00:00:00:hi:lo with hi.lo =
 * rank + 1, IPv4 10.0.hi.lo, line rate, max_qps/max_mrs large enough, the
 * sport policy of cfg (unless NE_COLL_SPORT_NIC). Callers with their own
 * addressing just raise max_qps/max_mrs with ne_coll_qps_needed(). */
void ne_coll_nic_config(const struct ne_coll_config *cfg, uint32_t rank, uint64_t line_rate_bps,
			struct ne_nic_config *out);

/* Create the collective over nics[0..nranks-1] (created by the caller, with
 * addresses, enough QPs and MRs). Creates CQs, QPs (connected directly to
 * RTS, as after an out-of-band exchange), MRs and buffers, posts receive
 * WQEs. Inputs are filled with a deterministic pattern (small integers).
 * On failure returns NULL and sets *err (if not NULL) to a negative errno. */
struct ne_coll *ne_coll_create(const struct ne_coll_config *cfg, struct ne_nic *const *nics,
			       int *err);

/* Destroy QPs, CQs, MRs and buffers (not the NICs). NULL is fine. */
void ne_coll_destroy(struct ne_coll *coll);

/* Start iteration 0 at now_ns. 0, or -EBUSY while a run is in progress. */
int ne_coll_start(struct ne_coll *coll, uint64_t now_ns);

/* Do everything due at now_ns: drain the CQs that were notified, consume received
 * chunks (reduce/copy), grant CTS, post WRITEs, finish and start iterations.
 * Returns the number of completions handled (>= 0), or -EIO once a work
 * completion failed (the run is stuck; see ne_coll_get_stats). */
int ne_coll_poll(struct ne_coll *coll, uint64_t now_ns);

/* When ne_coll_poll() next has something to do without any NIC activity:
 * 0 (now) when completions wait in a CQ or work is marked; with proxy costs,
 * else the earlier of the time a busy proxy thread frees and the end of the
 * next NVLink transfer; else UINT64_MAX. O(1): read from the ready/marked
 * lists and the proxy and NVLink heaps, no scan over ranks. Beside those,
 * NIC activity (rx, poll_tx) is what creates work. While an iteration's
 * launch cost runs (cfg.launch_ns): no earlier than its end. */
uint64_t ne_coll_next_event_ns(const struct ne_coll *coll);

/* The launch cost coll charges each iteration (cfg.launch_ns resolved:
 * launch=nccl gives NCCL's baseLat for the algorithm run), in ns; 0 for
 * NULL or none. */
uint64_t ne_coll_launch_ns(const struct ne_coll *coll);

/*
 * True when ne_coll_poll() at any time now would do nothing at all: no CQ
 * notified, no work marked, no iteration to finish, no failure to report,
 * no NVLink transfer in flight, and no proxy costs (their drain is timed:
 * never quiet). A driver that polls
 * after every NIC event may skip those polls. O(1).
 */
bool ne_coll_quiet(const struct ne_coll *coll);

/*
 * Lanes: the collective's progress split by rank, for a driver that runs its
 * NICs on several threads (a partition each). A completion is handled where
 * its NIC's event is, and what it changes belongs to the same rank (a
 * sender's connection, a receiver's group and its next hop, which that rank
 * sends), so each lane runs alone: its own lists, heaps, counters, statistics
 * and histograms over the shared plan. Between ranks everything goes as
 * frames. Only the start and the end are global; hence one iteration (no
 * warm-up). Proxy costs run in lanes: a rank's proxy thread is its own, and
 * each lane keeps the heaps of its ranks' threads. So does an active-QP
 * series: each lane keeps its ranks' rows, merged (QP-time and NICs added,
 * the max the largest) at the collective's end, when they go to the
 * series' function; a lane of another process (ne_coll_lanes_end_recs)
 * brings none, so a driver splits a collective with a series only where
 * the lanes share its memory.
 *
 * ne_coll_set_lanes: rank i goes to lane lane_of[i] (< nlanes), before any
 * start. 0, -EINVAL (started, already split, a bad lane, or a setting that
 * needs a global moment: more than one iteration) or
 * -ENOMEM.
 * ne_coll_lane: lane l (a collective without lanes is its own lane 0); NULL
 * when there is no such lane. A lane takes ne_coll_poll, ne_coll_quiet,
 * ne_coll_next_event_ns and ne_coll_done (its ranks' part ended; a lane
 * without a rank is done from the start), each from its own thread only.
 * ne_coll_lane_start: start the lane's ranks at now_ns (each lane with a rank
 * once; all at the same time). 0, -EINVAL (not a lane), -EBUSY (started).
 * ne_coll_lanes_end: once every lane is done, or one failed, the
 * collective's iteration: its time from the start to the last lane's end,
 * statistics and histograms summed; then ne_coll_done, ne_coll_get_result
 * and the rest read it. 0, -EBUSY (no lane failed and one still runs), -EIO
 * (a lane failed, whether or not the others ended: the statistics are
 * summed and say why), -ENOMEM, -EINVAL (no lanes, or ended already).
 * It reads the lanes as they are now; a caller whose lanes' threads may
 * still poll them ends from records instead (ne_coll_lanes_end_recs).
 */
int ne_coll_set_lanes(struct ne_coll *coll, uint32_t nlanes, const uint32_t *lane_of);
struct ne_coll *ne_coll_lane(struct ne_coll *coll, uint32_t l);
int ne_coll_lane_start(struct ne_coll *lane, uint64_t now_ns);
int ne_coll_lanes_end(struct ne_coll *coll);

/* All iterations finished. */
bool ne_coll_done(const struct ne_coll *coll);
/* When the last iteration finished (with lanes: the latest lane's end, after ne_coll_lanes_end); 0 before. */
uint64_t ne_coll_done_at(const struct ne_coll *coll);
/* Iterations finished so far (warm-up included). */
uint32_t ne_coll_iters_done(const struct ne_coll *coll);
/* Duration of iteration i (warm-up included, 0-based), ns; 0 if not done. */
uint64_t ne_coll_iter_time_ns(const struct ne_coll *coll, uint32_t i);

/* Numbers of the measured iterations (mean, min, max); wrong = -1.
 * Returns 0 or -EAGAIN when no measured iteration finished yet. */
int ne_coll_get_result(const struct ne_coll *coll, struct ne_coll_result *out);

void ne_coll_get_stats(const struct ne_coll *coll, struct ne_coll_stats *out);
/*
 * Add s to sum: every counter summed, the peaks (max_granted_bytes,
 * ctran_max_outstanding, active_qps_max) the larger, first_error_status the
 * first one with errors (several sizes of a sweep, or the lanes of one run).
 */
void ne_coll_stats_add(struct ne_coll_stats *sum, const struct ne_coll_stats *s);

/* Active QPs of rank now: its data QPs (sender side) with at least one send
 * WQE on the NIC, i.e. posted to the NIC (through the proxy thread when its
 * costs are on) and whose completion the collective has not handled yet.
 * The FIFO/CTS writes do not count. 0 for a bad rank or NULL. */
uint32_t ne_coll_active_qps(const struct ne_coll *coll, uint32_t rank);

/*
 * Log-scale histogram of times in ns (message latencies). Values below 32 ns
 * have a bin each; above, every power of two is cut into 16 bins, so a bin is
 * at most 1/16 of its lower edge wide and a quantile read as the bin's middle
 * is within 1/32 (3.2 %) of the true value. n, sum and max are exact.
 */
#define NE_COLL_HIST_SUB 16u
#define NE_COLL_HIST_BINS (2u * NE_COLL_HIST_SUB + 59u * NE_COLL_HIST_SUB)
struct ne_coll_hist {
	uint64_t n, sum_ns, max_ns;
	uint64_t bin[NE_COLL_HIST_BINS];
};

/* Count one value v (ns). */
void ne_coll_hist_add(struct ne_coll_hist *h, uint64_t v);
/* Add every count of src to dst. */
void ne_coll_hist_merge(struct ne_coll_hist *dst, const struct ne_coll_hist *src);
/* The q-quantile (0 < q <= 1, nearest rank: the smallest value with at least
 * ceil(q x n) values at or below it) as its bin's middle, capped at max_ns;
 * max_ns itself when that rank is n; 0 for an empty histogram. */
uint64_t ne_coll_hist_quantile(const struct ne_coll_hist *h, double q);
/* Mean in ns; 0 for an empty histogram. */
double ne_coll_hist_mean(const struct ne_coll_hist *h);

/*
 * Per-message latency of the data messages (the chunk transfers; model
 * nccl: NCCL's per-step messages), every iteration (warm-up included), so
 * lat->n equals ne_coll_stats.transfers_done once the run is done:
 *   lat: from the post of the message's first WQE (handed to the rank's
 *        proxy thread when its costs are on) to the handling of the sender's
 *        completion of its last WQE (the ACK arrived; with costs, after the
 *        CQE was polled);
 *   wait: from the time the message was ready (the connection's next
 *        message, and the data it forwards arrived: the previous hop of a
 *        ring) to that post: the wait for its CTS / NCCL FIFO entry and for
 *        a free send slot (window; nccl: the slot's previous message ACKed).
 * Either pointer may be NULL. 0, or -EINVAL for NULL coll.
 */
int ne_coll_get_latency(const struct ne_coll *coll, struct ne_coll_hist *lat,
			struct ne_coll_hist *wait);
/* "# latency: msgs=N lat_mean_us=... lat_p50_us lat_p99_us lat_max_us
 * wait_mean_us wait_p50_us wait_p99_us wait_max_us\n" (us, 3 decimals).
 * Returns what snprintf returns. */
int ne_coll_format_latency(const struct ne_coll_hist *lat, const struct ne_coll_hist *wait,
			   char *buf, size_t cap);

/*
 * Active QPs per NIC over time (ne_coll_active_qps), one row per interval
 * [t, t + cfg.series_ns) from the start of ne_coll_start(), the last row cut
 * at the end of the last iteration. The rows are exact, not samples: the
 * active-QP counts only change at events, so a row is completed, when the
 * first event at or after its end arrives, from the state between events
 * (no timer; nothing done when the series is off).
 */
struct ne_coll_series_row {
	uint64_t t_ns;     /* start of the interval, from ne_coll_start() */
	uint64_t dt_ns;    /* its length: series_ns, less for the last row */
	uint64_t qp_ns;    /* integral of the active QPs of all NICs over it (QP x ns) */
	double mean;       /* qp_ns / (dt_ns x nranks): mean active QPs per NIC */
	uint32_t max;      /* most active QPs on one NIC at any instant of it (the
			    * state it entered the interval with included) */
	uint32_t nics;     /* NICs with at least one active QP at some instant of it */
};
typedef void (*ne_coll_series_fn)(void *ctx, const struct ne_coll_series_row *row);
/* Send the rows to fn (in time order) from the next ne_coll_start() on.
 * 0; -EINVAL when coll or fn is NULL or cfg.series_ns is 0; -EBUSY while
 * running; -ENOMEM. */
int ne_coll_set_series(struct ne_coll *coll, ne_coll_series_fn fn, void *ctx);

/* NVLink connections of the collective (0 without cfg.server_of): those
 * whose two ranks share a server. 0 for NULL. */
uint32_t ne_coll_nvlink_conns(const struct ne_coll *coll);

/* The algorithm the collective runs, as a comment line ending in '\n':
 * "# algo: tree (algo=tree)" when forced, or with algo=auto (or NCCL_ALGO
 * naming one, model nccl) "# algo: tree (NCCL's tuning picks Tree/LL128 for
 * 1048576 B, 73.2 us predicted)", the rocelab model adding "; runs as
 * Simple, not LL128".
 * "" (returns 0) for the ring when algo=ring, so ring outputs are unchanged.
 * Returns what snprintf returns. */
int ne_coll_format_algo(const struct ne_coll *coll, char *buf, size_t cap);
/* Channel rings (cfg.gpu_of): whether they drive this collective, and the
 * rank after `rank` on channel ch's ring (every ring op, with or without
 * channel rings); -EINVAL for NULL, a bad channel or rank. */
bool ne_coll_chan_rings(const struct ne_coll *coll);
int ne_coll_ring_next(const struct ne_coll *coll, uint32_t ch, uint32_t rank);

/* One rank's proxy-thread counters. 0, or -EINVAL (bad rank, NULL). */
int ne_coll_rank_proxy(const struct ne_coll *coll, uint32_t rank, struct ne_coll_proxy_stats *out);

/* Buffers of a rank (NULL, *nfloats = 0 when the rank has none, or when
 * cfg.data is false). Input: what the rank contributes (write it before
 * ne_coll_start). Output: its result after ne_coll_done (AllReduce: the sum;
 * AllGather: n blocks; ReduceScatter: its reduced block; AllToAll: n blocks,
 * block s from rank s; incast root: n blocks, block s from rank s (its own
 * block is zero); Broadcast: every rank holds the root's input; Reduce: the
 * root holds the sum, the others partial sums; Send/Recv: a block per pair
 * the rank receives, in the pairs' order). */
float *ne_coll_input(struct ne_coll *coll, uint32_t rank, size_t *nfloats);
const float *ne_coll_output(const struct ne_coll *coll, uint32_t rank, size_t *nfloats);

/*
 * What a lane brings to the collective's end, as plain data: a lane frozen
 * at the moment it ended (its thread may poll it again afterwards, e.g. once
 * it failed), or one run in another process (an MPI rank with its own copy
 * of the collective, in which only its lane ran; same binary).
 * ne_coll_lane_save: lane's record into rec; 0, or -EINVAL (not a lane).
 * ne_coll_lanes_end_recs: ne_coll_lanes_end from rec[l] for lane l (NULL
 * allowed for a lane without a rank); the same returns.
 */
struct ne_coll_lane_rec {
	uint8_t done, failed;
	uint32_t meas_max;
	uint64_t iter_start, done_at;
	uint64_t proxy_busy_max_ns;   /* the busiest of its ranks' proxy threads (ne_coll_rank_proxy's busy_ns) */
	struct ne_coll_stats stats;
	struct ne_coll_hist lat, wait;
};
int ne_coll_lane_save(const struct ne_coll *lane, struct ne_coll_lane_rec *rec);
int ne_coll_lanes_end_recs(struct ne_coll *coll, const struct ne_coll_lane_rec *const *rec);

/* Compare every output with the result computed from the inputs (serial
 * sum; relative tolerance 1e-5); on a lane (ne_coll_lane), its ranks'
 * outputs only, which are final once the lane is done. Returns the number
 * of wrong elements, -EINVAL when cfg.data is false. */
long ne_coll_check(const struct ne_coll *coll);

/* Connections: how many, and one's description. */
uint32_t ne_coll_num_conns(const struct ne_coll *coll);
int ne_coll_conn_info(const struct ne_coll *coll, uint32_t idx, struct ne_coll_conn_info *out);

/* nccl-tests bus bandwidth factor: 2(n-1)/n, (n-1)/n, n-1 (incast) or 1
 * (Broadcast, Reduce, Send/Recv). */
double ne_coll_busbw_factor(enum ne_coll_op op, uint32_t nranks);
/* Fill algbw/busbw/time_us of r from r->size, r->time_ns, r->op, r->nranks. */
void ne_coll_result_compute(struct ne_coll_result *r);

const char *ne_coll_op_name(enum ne_coll_op op);
const char *ne_coll_qp_mode_name(enum ne_coll_qp_mode mode);
const char *ne_coll_model_name(enum ne_coll_model model);

/* nccl-tests' output. Both return what snprintf returns. The header is
 * three lines ending in '\n' (the out-of-place / in-place groups, the names,
 * the units); the line ends in '\n'. Its 13 columns: size count type redop
 * root, then out-of-place time(us) algbw(GB/s) busbw(GB/s) #wrong, then the
 * same four of in_place, or "N/A" four times when in_place is NULL (the
 * in-place pass not run, rocelab-dp's inplace=off). #wrong is "N/A" for a
 * result whose wrong is -1 (not checked). */
int ne_coll_format_header(char *buf, size_t cap);
int ne_coll_format_result(const struct ne_coll_result *r, const struct ne_coll_result *in_place,
			  char *buf, size_t cap);
/* Whether nccl-tests checks op's in-place pass: not AllToAll's nor
 * Send/Recv's, whose in-place forms it does not support (its #wrong "N/A");
 * incast is no nccl-tests operation. */
bool ne_coll_in_place_checked(enum ne_coll_op op);
/*
 * A sweep's closing numbers as nccl-tests counts them (common.cu), added up
 * a size at a time from a zeroed struct (ne_coll_sweep_add: r, the size's
 * out-of-place result, and in_place, its in-place pass's, NULL when that
 * did not run): the mean busbw over every line half run, the wrong elements
 * summed over the halves checked; checked is false until a size is added,
 * and once an out-of-place result was not checked (data=off).
 */
struct ne_coll_sweep_sum {
	double avg_busbw;
	long wrong;
	bool checked;
	uint32_t sizes, halves, unchecked; /* (what the three above are made of) */
	double busbw_sum;
};
void ne_coll_sweep_add(struct ne_coll_sweep_sum *t, const struct ne_coll_result *r,
		       const struct ne_coll_result *in_place);
/* nccl-tests' closing lines for a sweep's sum t, each ending in '\n':
 * "# Out of bounds values : W OK" (W the wrong elements summed; FAILED when
 * above 0; "N/A (data=off: not checked)" when a size was not checked; "N/A
 * (no size measured)" without a size), "# Avg bus bandwidth    : X" and "#".
 * Returns what snprintf returns. */
int ne_coll_format_footer(const struct ne_coll_sweep_sum *t, char *buf, size_t cap);
/* The proxy-thread costs of cfg as one comment line ending in '\n' that says
 * they are assumptions ("# host costs: proxy_post_wqe=200ns ..."), then the
 * launch cost as one line ("# launch: ..." with its source), or "" when all
 * are 0. Returns what snprintf returns (0 for ""). */
int ne_coll_format_costs(const struct ne_coll_config *cfg, char *buf, size_t cap);
/* The active QPs of a result as one comment line ending in '\n':
 * "# active QPs per NIC: mean M, while sending B, max X (...)". Returns what
 * snprintf returns. */
int ne_coll_format_active(const struct ne_coll_result *r, char *buf, size_t cap);

/*
 * The plan read from outside (ne_coll_export.c), for a driver that runs the
 * collective on another fabric model (rocelab-dp --fabric flow): per
 * connection its ordered transfers (ne_coll_num_conns, ne_coll_conn_info
 * give the rest), the rules of when a transfer may start, and the bytes each
 * QP carries. ne_coll_set_external_times hands the iteration times back.
 */
#define NE_COLL_MAX_DEPS 3u /* a tree node sums up to 3 children's transfers before it sends */
struct ne_coll_xfer_info {
	uint32_t len;                         /* bytes */
	int32_t dep_conn[NE_COLL_MAX_DEPS];   /* the transfers it waits for (their data arriving), -1: none */
	uint32_t dep_seq[NE_COLL_MAX_DEPS];
};
struct ne_coll_conn_plan {
	uint32_t group;                       /* its receiver's CTS budget (ne_coll_rules.ngroups of them) */
	int32_t downstream[NE_COLL_MAX_DEPS]; /* connections whose transfers depend on this one's, -1: none */
	bool nvl;                             /* inside a server: NVLink, no NIC, no CTS */
};
struct ne_coll_rules {
	uint32_t window;      /* per group granted-not-received (CTS), or per connection in flight */
	uint32_t ngroups;
	bool cts;             /* receiver-driven grants (model nccl: always) */
	bool slot_needs_ack;  /* transfer s waits until s - window was ACKed at the sender */
	uint32_t iters;       /* warm-up and measured iterations */
};
/* Transfer s of connection k. 0, or -EINVAL (no such transfer, or k is kept
 * as counts only: cfg.here_lane_of). */
int ne_coll_xfer_get(const struct ne_coll *coll, uint32_t k, uint32_t s, struct ne_coll_xfer_info *out);
/* Connection k's place in the plan. 0, or -EINVAL. */
int ne_coll_conn_plan(const struct ne_coll *coll, uint32_t k, struct ne_coll_conn_plan *out);
/* The collective's admission rules (see "Admission" above); zeros for NULL. */
void ne_coll_rules(const struct ne_coll *coll, struct ne_coll_rules *out);
/* Bytes data QP q carries of transfer s of len bytes, as the QP mode posts
 * it in the first iteration (split: its piece; rr: all or nothing; ctran:
 * as split with one WQE per QP). 0 for a bad q. */
uint32_t ne_coll_xfer_qp_bytes(const struct ne_coll *coll, uint32_t len, uint32_t s, uint32_t q);
/* The bytes a transfer of len data bytes puts on the wire (NIC and NVLink)
 * in the protocol coll runs: model nccl's LL x 16/8, LL128 x 128/120, else
 * len (nc_tune_wire_bytes). Split over the QPs as the data: pass it to
 * ne_coll_xfer_qp_bytes. len for NULL. */
uint32_t ne_coll_wire_bytes(const struct ne_coll *coll, uint32_t len);
/* NCCL's hwLat per step (launch=nccl, ne_coll_steps_resolve), in ns: an
 * NVLink step's hop takes *nvl_ns (otherwise cfg.nvlink_lat_ns); a network
 * transfer is consumed *net_ns after its last byte came in (otherwise 0).
 * Zeros for NULL. */
void ne_coll_step_lat(const struct ne_coll *coll, uint64_t *nvl_ns, uint64_t *net_ns);
/* NCCL's cap on LL's and LL128's bus bandwidth as a rate of each GPU's
 * sends, in bytes/s (ne_coll_cap_resolve): a GPU's egress writes a
 * transfer's data bytes no faster, a network transfer's before it is posted
 * (the "write" gate) and an NVLink one's beside its wire bytes. 0: none
 * (Simple, model rocelab, NULL). */
uint64_t ne_coll_proto_cap_Bps(const struct ne_coll *coll);
/* A collective that was created and never started was run elsewhere from
 * start_ns: its n iteration times (n = ne_coll_rules.iters). It is then done
 * and ne_coll_get_result and the rest read those times; its statistics count
 * every transfer done and the NVLink ones (transfers_done, nvlink_*). 0, or -EINVAL
 * (started, split into lanes, or n wrong). */
int ne_coll_set_external_times(struct ne_coll *coll, uint64_t start_ns, const uint64_t *iter_ns,
			       uint32_t n);

#ifdef __cplusplus
}
#endif

#endif /* NE_COLL_H */
