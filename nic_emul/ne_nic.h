/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_nic: a software RoCEv2 NIC (Reliable Connected transport), built to be
 * byte-compatible on the wire with Linux soft-RoCE (rxe).
 *
 * The NIC is a discrete-event component. It never reads a clock: every call
 * that can change state takes the current time `now_ns`, and times only move
 * forward. The host drives it with three calls:
 *   ne_nic_rx()            hand it a received Ethernet frame (no FCS);
 *   ne_nic_poll_tx()       take the next frame it wants to put on the wire;
 *   ne_nic_next_event_ns() when to call ne_nic_poll_tx() again (a frame
 *                          becomes ready, the link frees up, a timer fires).
 * Verbs-like calls create memory regions, completion queues and QPs, post
 * work requests and poll completions.
 *
 * Model (after drivers/infiniband/sw/rxe): a requester builds request
 * packets from the send queue (ne_req.c), a responder executes incoming
 * requests and produces ACK/NAK and READ responses (ne_resp.c), a completer
 * consumes responses and completes send WQEs (ne_comp.c). Go-back-N: the
 * responder NAKs the first PSN gap once and drops until the expected PSN
 * arrives; the requester restarts from the NAKed PSN or, after the retransmit
 * timeout (4.096 us x 2^timeout), from the oldest unacknowledged PSN.
 *
 * Conventions: errors are negative errno values (<errno.h>) unless stated;
 * all multi-byte addresses are given in network byte order arrays, IPv4
 * addresses as uint32_t in host order (10.0.0.1 = 0x0A000001).
 * Pure C, libc only, no globals: several NICs live side by side.
 */
#ifndef NE_NIC_H
#define NE_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ne_psn.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ne_nic;
struct ne_cq;

/* Completion notification callback (ne_cq_set_notify). */
typedef void (*ne_cq_notify_fn)(void *ctx, struct ne_cq *cq);
/* Wake notification callback (ne_nic_set_wake_notify). */
typedef void (*ne_nic_wake_fn)(void *ctx, struct ne_nic *nic);

/* ------------------------------------------------------------------ */
/* NIC configuration                                                   */

/* How the UDP source port of an RC QP is chosen. */
enum ne_sport_policy {
	NE_SPORT_RXE = 0, /* 0xC000 | fold(lqpn x rqpn): Linux rxe (rdma_get_udp_sport) */
	NE_SPORT_FIXED,   /* cfg.sport_fixed for every QP */
	NE_SPORT_HASH,    /* 0xC000 | (hash(seed, lqpn, rqpn) & 0x3FFF) */
	/* mlx5 (ConnectX) computes an RC QP's port the same way as rxe (kernel
	 * "RDMA/mlx5: Define RoCEv2 udp source port when set path", 2020; see
	 * docs/explanation/FACTS-NCCL-RNIC.md), so its policy is rxe's. */
	NE_SPORT_MLX5 = NE_SPORT_RXE,
};

/* Ethernet overhead not in the frame buffer: FCS 4 + preamble/SFD 8 + IFG 12. */
#define NE_WIRE_OVERHEAD 24u
/* Largest frame the NIC builds: Eth 14 + IPv4 20 + UDP 8 + BTH 12 + RETH 16 +
 * ImmDt 4 + 4096 payload + 3 pad + ICRC 4 (rounded up). */
#define NE_MAX_FRAME 4184u
/* IB transport defaults. */
#define NE_DEFAULT_PKEY 0xFFFFu
/* rxe asks for an ACK at least every RXE_MAX_PKT_PER_ACK (64) packets. */
#define NE_MAX_PKT_PER_ACK 64u

/* DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
 * SIGCOMM 2015), both ends off by default (the baseline Meta turned off).
 * Reaction point (RP), per QP: a CNP for the QP sets the target rate RT to
 * the current rate RC, cuts RC to RC x (1 - alpha/2) (not below rate_min),
 * then alpha = (1 - g) alpha + g; alpha starts at 1 and decays as
 * alpha = (1 - g) alpha every alpha_timer_ns without a CNP. While RC is
 * below rate_max the QP's request packets are paced at RC (ACKs, READ
 * responses and CNPs are not). Rate increase events come from a timer
 * (every rate_timer_ns since the last cut) and a byte counter (every
 * byte_counter bytes sent); with T and BC the numbers of timer and byte
 * events since the last cut, each event does:
 *   both T and BC <= F  fast recovery    RT unchanged
 *   one of them > F     additive         RT += ai_rate
 *   both > F            hyper            RT += (min(T, BC) - F) x hai_rate
 * then RT = min(RT, rate_max) and RC = ceil((RT + RC) / 2); when RC reaches
 * rate_max the QP is no longer paced. Timers are evaluated lazily in event
 * order, so results do not depend on how often the NIC is polled.
 * Notification point (NP): a request packet arriving CE-marked (ECN 11)
 * for a QP in RTR/RTS makes the NIC send a CNP (BTH opcode 0x81, BECN set,
 * dest QP = the sender's QP, PSN 0, 16 reserved bytes, ICRC; DSCP cnp_dscp)
 * to the sender, at most one per QP per cnp_interval_ns.
 * Zero fields of an enabled config take the defaults of
 * ne_dcqcn_config_default(). */
struct ne_dcqcn_config {
	bool rp_enable;           /* reaction point; default false */
	bool np_enable;           /* notification point; default false */
	uint64_t rate_max_bps;    /* unthrottled rate; 0 = line_rate_bps, or 100 Gbit/s if unlimited */
	uint64_t rate_min_bps;    /* floor of a cut; default 1 Mbit/s */
	uint32_t g_inv;           /* alpha gain g = 1/g_inv; default 256 */
	uint64_t alpha_timer_ns;  /* K; default 55 us */
	uint64_t rate_timer_ns;   /* rate increase timer T; default 55 us */
	uint64_t byte_counter;    /* B; default 10 MB (10^7 bytes) */
	uint32_t fast_recovery;   /* F; default 5 */
	uint64_t ai_rate_bps;     /* R_AI; default 40 Mbit/s */
	uint64_t hai_rate_bps;    /* R_HAI; default 400 Mbit/s (10 x R_AI) */
	uint64_t cnp_interval_ns; /* NP: at most one CNP per QP per interval; default 50 us */
	uint8_t cnp_dscp;         /* NP: DSCP of CNPs; default 48 */
};

struct ne_nic_config {
	uint8_t mac[6];
	uint32_t ipv4;            /* host order */
	uint64_t line_rate_bps;   /* 0 = unlimited */
	uint8_t ttl;              /* default 64, like rxe */
	uint16_t ip_id;           /* first IPv4 identification; +1 per frame sent */

	enum ne_sport_policy sport_policy;
	uint16_t sport_fixed;     /* for NE_SPORT_FIXED */
	uint32_t sport_seed;      /* for NE_SPORT_HASH */

	uint32_t max_qps;         /* default 256 */
	uint32_t max_mrs;         /* default 256 */
	uint32_t first_qpn;       /* first QPN handed out, default 0x11 (rxe's) */

	/* QP context cache: qpc_entries contexts are resident (LRU); touching a
	 * QP that is not resident costs qpc_miss_ns before its packet leaves
	 * (transmit) or before the responses it causes are ready (receive).
	 * 0 entries disables the model (every access hits).
	 * Forward progress: a context fetched on a miss is held (not evictable)
	 * until its QP has sent a frame, as an RNIC uses a context it fetched;
	 * then it is the most recently used. So QPs waiting out their misses
	 * cannot evict each other's contexts (before this rule, 64 QPs per
	 * connection against 64 entries livelocked), and each QP misses at most
	 * once per frame it sends plus once: qpc_misses <= sent_pkts + QPs.
	 * When every resident context is held, a miss fetches one more (the
	 * cache overflows by the held ones until they are sent). */
	uint32_t qpc_entries;
	uint64_t qpc_miss_ns;
	/* Ignored, kept so that configurations setting it (rocelab-dp --nic
	 * hold=on|off) still work: holding a fetched context until its QP has
	 * sent was this option and is now the rule above, whatever it says. */
	bool qpc_hold;

	/* Skip the ICRC: transmit frames carry 0 and received frames are not
	 * checked. Only for simulations where every endpoint is an ne_nic with
	 * this set (halves the cost per data packet); default false. */
	bool icrc_off;

	/* Payload bytes are not modelled: request and READ response payloads
	 * go out as zeros without reading the MR, received payloads are not
	 * stored, and the ICRC takes the payload as zeros without reading it
	 * (rl_icrc_compute_zeros, O(1) in its length), on transmit and receive.
	 * MR keys, bounds and access are still checked. The only cost left that
	 * grows with the payload is zero-filling it in the frame buffer. For
	 * simulations whose buffers hold only zeros (ne_coll with data off): the
	 * wire is then the same byte for byte. Default false. */
	bool zero_payload;

	/* With zero_payload: the payload bytes of the frames sent are not
	 * written at all; the frame buffer keeps whatever it held there. The
	 * headers and the ICRC are those of a zero payload, so the frame is
	 * the zero_payload model's once its payload is zeroed. For a caller
	 * that knows nobody reads those bytes and zeroes them where someone
	 * does (rocelab-dp: a capture, a port, a NIC that reads payloads):
	 * a 4 KiB frame then costs what a header-only one does. A receiving
	 * NIC with zero_payload never reads them. Default false. */
	bool payload_unwritten;

	/* Transmit arbitration among QPs with a frame ready. 0 (default): round
	 * robin, one frame per QP per turn (the wire of rxe-like NICs). Else
	 * deficit round robin as a ConnectX TX arbiter: a QP's turn adds
	 * tx_quantum bytes to its deficit and it keeps sending while the
	 * deficit stays positive, each frame charged its length (at least one
	 * frame per turn; an overdraft carries over, a credit is dropped when
	 * the turn ends). */
	uint32_t tx_quantum;

	/* Message-rate ceiling of the NIC (messages per second; 0, the default,
	 * none): the first packet of a work request (a message; again when
	 * go-back-N resends it) leaves at least 1 s / msg_rate after the
	 * previous one, whichever QP it is on (ConnectX-6 is rated at 215 M
	 * messages/s, docs/explanation/FACTS-NCCL-RNIC.md). Responses and later packets of
	 * a message are not limited. */
	uint64_t msg_rate;

	/* DCQCN reaction and notification points; both off by default. */
	struct ne_dcqcn_config dcqcn;
};

/* ------------------------------------------------------------------ */
/* Counters. Names of the first group are rxe's (rdma statistic).      */

struct ne_counters {
	/* rxe names (drivers/infiniband/sw/rxe/rxe_hw_counters.c) */
	uint64_t sent_pkts;              /* frames handed out by ne_nic_poll_tx */
	uint64_t rcvd_pkts;              /* RoCE frames that passed ICRC and header checks */
	uint64_t duplicate_request;      /* responder: request PSN before the expected one */
	uint64_t out_of_seq_request;     /* responder: PSN gap, NAK sent */
	uint64_t rcvd_rnr_err;           /* requester: RNR NAKs received */
	uint64_t send_rnr_err;           /* responder: RNR NAKs sent */
	uint64_t rcvd_seq_err;           /* requester: PSN sequence NAKs that acked new PSNs */
	uint64_t ack_deferred;           /* kept for name parity with rxe; never incremented */
	uint64_t retry_exceeded_err;     /* transport retries exhausted */
	uint64_t retry_rnr_exceeded_err; /* RNR retries exhausted */
	uint64_t completer_retry_err;    /* retries (go-back-N restarts) started */
	uint64_t send_err;               /* frames not sent (buffer too small) */
	uint64_t link_downed;            /* link up -> down transitions */
	uint64_t rdma_sends;             /* SEND WQEs completed by the requester */
	uint64_t rdma_recvs;             /* receive WQEs completed by the responder */
	/* ours */
	uint64_t sent_bytes;
	uint64_t rcvd_bytes;
	uint64_t retrans_pkts;           /* request packets sent again (PSN already sent) */
	uint64_t naks_sent;              /* all NAKs sent (sequence, RNR, invalid, access) */
	uint64_t naks_rcvd;
	uint64_t acks_sent;
	uint64_t acks_rcvd;
	uint64_t ack_coalesced;          /* an unsent ACK replaced by a newer one */
	uint64_t timeouts;               /* retransmit timer expiries with work outstanding */
	uint64_t icrc_err;               /* dropped: bad ICRC */
	uint64_t rcv_malformed;          /* dropped: rl_parse failed (truncated, bad lengths) */
	uint64_t rcv_not_roce;           /* dropped: not UDP 4791 */
	uint64_t rcv_wrong_dst;          /* dropped: destination IP/MAC not ours */
	uint64_t rcv_unknown_qpn;        /* dropped: no such QP */
	uint64_t rcv_bad_state;          /* dropped: QP state does not accept the packet */
	uint64_t rcv_bad_opcode;         /* dropped: not an RC opcode we implement */
	uint64_t rcv_opcode_seq_err;     /* responder: opcode out of sequence (NAK invalid request) */
	uint64_t rcv_len_err;            /* responder: payload length invalid (NAK invalid request) */
	uint64_t rcv_access_err;         /* responder: rkey/bounds/permission (NAK remote access) */
	uint64_t rcv_stale_resp;         /* requester: response matching nothing outstanding */
	uint64_t cnp_rcvd;               /* CNPs received (they cut a rate only with dcqcn.rp_enable) */
	uint64_t qpc_hits;
	uint64_t qpc_misses;
	uint64_t cq_overflow;            /* completions lost because a CQ was full */
	/* DCQCN (counted only with the point enabled) */
	uint64_t ecn_ce_rcvd;            /* NP: CE-marked request packets received */
	uint64_t cnp_sent;               /* NP: CNPs sent */
	uint64_t cnp_rate_cuts;          /* RP: CNPs that cut a QP's rate */
};

/* Work the NIC did to schedule, for tests and benchmarks that count work
 * instead of timing it (a shared machine makes times noisy). */
struct ne_work {
	uint64_t polls;      /* ne_nic_poll_tx calls that looked for a frame (not cut
			      * short by the cached next event time) */
	uint64_t qp_visits;  /* QPs examined: transmit candidates, QPs whose timers
			      * ran, QPs whose scheduling keys were recomputed */
	uint64_t heap_moves; /* insertions, removals and sift steps in the
			      * scheduler's heaps */
	uint64_t qpc_probes; /* QP context cache entries examined */
};

/* Names of the fields of struct ne_counters in order; NULL-terminated. */
extern const char *const ne_counter_names[];

/* ------------------------------------------------------------------ */
/* Memory regions                                                      */

enum ne_access {
	NE_ACCESS_LOCAL_WRITE = 1u << 0,
	NE_ACCESS_REMOTE_WRITE = 1u << 1,
	NE_ACCESS_REMOTE_READ = 1u << 2,
};

struct ne_mr_attr {
	void *addr;      /* the bytes; owned by the caller, must outlive the MR */
	size_t len;
	uint64_t iova;   /* address the MR answers to (in SGEs and RETH) */
	uint32_t access; /* enum ne_access bits */
	uint32_t key;    /* lkey = rkey; 0 = let the NIC choose */
};

/* ------------------------------------------------------------------ */
/* Completion queues                                                   */

struct ne_cq;

enum ne_wc_status {
	NE_WC_SUCCESS = 0,
	NE_WC_LOC_LEN_ERR,
	NE_WC_LOC_PROT_ERR,
	NE_WC_WR_FLUSH_ERR,
	NE_WC_REM_INV_REQ_ERR,
	NE_WC_REM_ACCESS_ERR,
	NE_WC_REM_OP_ERR,
	NE_WC_RETRY_EXC_ERR,
	NE_WC_RNR_RETRY_EXC_ERR,
};

enum ne_wc_opcode {
	NE_WC_SEND,
	NE_WC_RDMA_WRITE,
	NE_WC_RDMA_READ,
	NE_WC_RECV,
	NE_WC_RECV_RDMA_WITH_IMM,
};

struct ne_wc {
	uint64_t wr_id;
	enum ne_wc_status status;
	enum ne_wc_opcode opcode;
	uint32_t byte_len; /* receive: bytes placed (SEND) or written (WRITE with imm) */
	uint32_t imm_data; /* host order of the wire's ImmDt */
	bool has_imm;
	uint32_t qpn;
	uint32_t src_qp;
};

/* ------------------------------------------------------------------ */
/* Queue pairs                                                         */

enum ne_qp_state {
	NE_QPS_RESET = 0,
	NE_QPS_INIT,
	NE_QPS_RTR,
	NE_QPS_RTS,
	NE_QPS_ERROR,
};

struct ne_qp_init_attr {
	struct ne_cq *send_cq;
	struct ne_cq *recv_cq;
	uint32_t max_send_wr;  /* send queue depth (>= 1) */
	uint32_t max_recv_wr;  /* receive queue depth (>= 1) */
	bool sq_sig_all;       /* every send WQE completes with a CQE */
	uint32_t qpn;          /* 0 = next free QPN; else this exact QPN (1..2^24-1) */
};

/* Bits of the mask passed to ne_qp_modify(): which fields of ne_qp_attr to apply. */
enum ne_qp_attr_mask {
	NE_QP_STATE = 1u << 0,
	NE_QP_AV = 1u << 1,         /* dest_ipv4, dest_mac, dscp */
	NE_QP_PATH_MTU = 1u << 2,
	NE_QP_DEST_QPN = 1u << 3,
	NE_QP_RQ_PSN = 1u << 4,
	NE_QP_SQ_PSN = 1u << 5,
	NE_QP_TIMEOUT = 1u << 6,
	NE_QP_RETRY_CNT = 1u << 7,
	NE_QP_RNR_RETRY = 1u << 8,
	NE_QP_MIN_RNR_TIMER = 1u << 9,
	NE_QP_MAX_QP_RD_ATOMIC = 1u << 10,
	NE_QP_MAX_DEST_RD_ATOMIC = 1u << 11,
	NE_QP_PKEY = 1u << 12,
};

struct ne_qp_attr {
	enum ne_qp_state state;
	uint32_t dest_qpn;
	uint32_t rq_psn;          /* first PSN expected from the peer */
	uint32_t sq_psn;          /* first PSN we send */
	uint32_t path_mtu;        /* 256, 512, 1024, 2048 or 4096 */
	uint32_t dest_ipv4;       /* host order */
	uint8_t dest_mac[6];
	uint8_t dscp;             /* 0..63, IPv4 DSCP of every packet of this QP */
	uint8_t timeout;          /* 0..31: 4.096 us x 2^timeout; 0 = no timer */
	uint8_t retry_cnt;        /* 0..7 */
	uint8_t rnr_retry;        /* 0..7, 7 = infinite */
	uint8_t min_rnr_timer;    /* 0..31, IB RNR timer code sent in RNR NAKs */
	uint8_t max_rd_atomic;    /* outstanding READs this QP may have (1..16) */
	uint8_t max_dest_rd_atomic; /* READ responder resources (1..16) */
	uint16_t pkey;
	/* read-only, filled by ne_qp_query() */
	uint16_t udp_sport;
	uint32_t qpn;
};

enum ne_wr_opcode {
	NE_WR_SEND = 0,
	NE_WR_SEND_WITH_IMM,
	NE_WR_RDMA_WRITE,
	NE_WR_RDMA_WRITE_WITH_IMM,
	NE_WR_RDMA_READ,
};

enum ne_send_flags {
	NE_SEND_SIGNALED = 1u << 0,
	NE_SEND_SOLICITED = 1u << 1,
};

/* One work request, one scatter/gather element. */
struct ne_send_wr {
	uint64_t wr_id;
	enum ne_wr_opcode opcode;
	uint32_t send_flags;    /* enum ne_send_flags */
	uint64_t local_addr;    /* iova within the MR of lkey */
	uint32_t length;        /* bytes; 0 allowed except for READ */
	uint32_t lkey;
	uint64_t remote_addr;   /* WRITE/READ */
	uint32_t rkey;          /* WRITE/READ */
	uint32_t imm_data;      /* *_WITH_IMM, host order */
};

struct ne_recv_wr {
	uint64_t wr_id;
	uint64_t addr;          /* iova within the MR of lkey */
	uint32_t length;
	uint32_t lkey;
};

/* ------------------------------------------------------------------ */
/* Status of a frame given to ne_nic_rx(): 0 accepted, else dropped.   */

enum ne_rx_status {
	NE_RX_OK = 0,
	NE_RX_MALFORMED = -1,   /* rl_parse failed: truncated or inconsistent headers */
	NE_RX_NOT_ROCE = -2,    /* not IPv4 UDP to port 4791 */
	NE_RX_WRONG_DST = -3,   /* destination MAC or IPv4 is not this NIC's */
	NE_RX_BAD_ICRC = -4,
	NE_RX_UNKNOWN_QPN = -5,
	NE_RX_BAD_STATE = -6,   /* QP not in a state that accepts it */
	NE_RX_BAD_OPCODE = -7,  /* not an RC opcode this NIC implements */
	NE_RX_PSN_DROP = -8,    /* out-of-sequence request dropped (NAK sent at most once) */
	NE_RX_PROTOCOL = -9,    /* opcode sequence, length, access error (NAK sent) */
	NE_RX_RNR = -10,        /* no receive WQE: RNR NAK sent, packet dropped */
	NE_RX_STALE = -11,      /* response that matches nothing outstanding */
	NE_RX_LINK_DOWN = -12,
	NE_RX_INVAL = -13,      /* NULL arguments */
	NE_RX_CNP = -14,        /* a CNP: counted; with dcqcn.rp_enable it cuts its QP's rate */
};

/* ------------------------------------------------------------------ */
/* NIC                                                                 */

/* Fill *cfg with defaults (no addresses, unlimited rate, rxe source ports,
 * TTL 64, 256 QPs, 256 MRs, first QPN 0x11, no QPC cache model, DCQCN
 * off with the default constants). */
void ne_nic_config_default(struct ne_nic_config *cfg);

/* Create a NIC. Returns NULL on a bad config (max_qps or max_mrs 0) or when
 * memory runs out. */
struct ne_nic *ne_nic_create(const struct ne_nic_config *cfg);

/* Free the NIC with its QPs and CQs (not the caller's MR memory). NULL is fine. */
void ne_nic_destroy(struct ne_nic *nic);

/* Consume one received Ethernet frame (without FCS). Returns NE_RX_OK or a
 * negative enum ne_rx_status; every drop is counted. Never reads beyond
 * frame[len - 1], never writes the frame. */
int ne_nic_rx(struct ne_nic *nic, const uint8_t *frame, size_t len, uint64_t now_ns);

/* Emit the next frame that may leave at now_ns into buf. Returns 1 with
 * *len set when a frame was written, 0 when none is ready (link busy,
 * nothing to send, waiting for a timer), -EINVAL on NULL arguments,
 * -ENOSPC when cap is smaller than the frame (the frame stays queued and
 * send_err counts it). Also runs due timers (retransmit, RNR wait). */
int ne_nic_poll_tx(struct ne_nic *nic, uint64_t now_ns, uint8_t *buf, size_t cap, size_t *len);

/* Earliest time at which ne_nic_poll_tx() may have something to do: a
 * frame ready (bounded below by the link being free), or a timer. UINT64_MAX
 * when idle. May be earlier than necessary, never later. */
uint64_t ne_nic_next_event_ns(const struct ne_nic *nic);

/* Wake notification: fn(ctx, nic) is called when the NIC's state changes
 * (work posted, a QP modified, a frame received, a poll) while the time last
 * returned by ne_nic_next_event_ns() is still cached, so at most once per
 * read of it: the owner of many NICs re-reads the next event time only of
 * the NICs that called, instead of all of them after every event. Called
 * from inside the NIC call that made the change; fn must not call into this
 * NIC. fn NULL turns it off. Returns 0 or -EINVAL (nic NULL). */
int ne_nic_set_wake_notify(struct ne_nic *nic, ne_nic_wake_fn fn, void *ctx);

/* Earliest time the link is free for the next frame (line-rate pacing). */
uint64_t ne_nic_link_free_ns(const struct ne_nic *nic);

/* Link state. Down: ne_nic_poll_tx emits nothing, ne_nic_rx drops; the
 * up->down transition counts link_downed. */
void ne_nic_set_link(struct ne_nic *nic, bool up);

/* Set the IPv4 identification of the next frame (it increments per frame). */
void ne_nic_set_ip_id(struct ne_nic *nic, uint16_t ip_id);

/* The QPN the next QP created without a wanted one tries first (a taken one
 * is skipped), and setting it: a caller that destroys its QPs and creates
 * them again gets the same numbers, as an application keeps its QPs. Set
 * returns 0, or -EINVAL for NULL or a QPN outside 2..2^24 - 1. */
uint32_t ne_nic_next_qpn(const struct ne_nic *nic);
int ne_nic_set_next_qpn(struct ne_nic *nic, uint32_t qpn);

/* Copy the counters. */
void ne_nic_get_counters(const struct ne_nic *nic, struct ne_counters *out);

/* Add add's counts to the NIC's, field by field: the counts of another copy
 * of the same NIC that ran elsewhere (another process of one run). */
void ne_nic_add_counters(struct ne_nic *nic, const struct ne_counters *add);

/* Copy the work counters (struct ne_work). */
void ne_nic_get_work(const struct ne_nic *nic, struct ne_work *out);

/* Copy the configuration the NIC was created with (addresses, rate, source
 * port policy as currently set). */
void ne_nic_get_config(const struct ne_nic *nic, struct ne_nic_config *out);

/* Turn the zero_payload model (see struct ne_nic_config) on or off, and
 * with it on, payload_unwritten (leave the payload bytes of sent frames
 * unwritten). */
void ne_nic_set_zero_payload(struct ne_nic *nic, bool on, bool unwritten);

/* Change the UDP source port policy. It applies to QPs whose address vector
 * or destination QPN is set (ne_qp_modify with NE_QP_AV or NE_QP_DEST_QPN)
 * afterwards; existing QPs keep their port. Returns 0 or -EINVAL. */
int ne_nic_set_sport_policy(struct ne_nic *nic, enum ne_sport_policy policy, uint16_t fixed,
			    uint32_t seed);

/* Completions waiting in a CQ (0 for NULL). */
uint32_t ne_cq_count(const struct ne_cq *cq);

/* ------------------------------------------------------------------ */
/* Memory regions                                                      */

/* Register attr->len bytes at attr->addr, addressed as [iova, iova+len).
 * Returns 0 and the key in *key. -EINVAL: NULL/zero-length/bad access bits;
 * -EEXIST: attr->key already used; -ENOMEM: table full. */
int ne_mr_reg(struct ne_nic *nic, const struct ne_mr_attr *attr, uint32_t *key);

/* Deregister. Returns 0 or -ENOENT. */
int ne_mr_dereg(struct ne_nic *nic, uint32_t key);

/* Take the key ne_mr_reg would give next, with no MR behind it (and no
 * slot taken): for a NIC another process runs, whose MRs this one only
 * names (see ne_qp_hold). ne_mr_dereg frees it. Returns 0 and the key in
 * *key, -EINVAL (nic or key NULL) or -ENOMEM. */
int ne_mr_hold(struct ne_nic *nic, uint32_t *key);

/* ------------------------------------------------------------------ */
/* Completion queues                                                   */

/* Create a CQ of `depth` entries (>= 1). NULL on bad depth or no memory.
 * Completions that find it full are lost and counted in cq_overflow. */
struct ne_cq *ne_cq_create(struct ne_nic *nic, uint32_t depth);

/* Destroy a CQ no QP uses any more. Returns 0, -EBUSY (a QP still uses it)
 * or -EINVAL. */
int ne_cq_destroy(struct ne_nic *nic, struct ne_cq *cq);

/* Take up to n completions, oldest first. Returns how many were taken. */
int ne_cq_poll(struct ne_cq *cq, struct ne_wc *wc, int n);

/* Completion notification, as a verbs completion channel with the CQ always
 * armed: `fn(ctx, cq)` is called after every completion the NIC queues on `cq`
 * (not for one lost to overflow), from inside the NIC call that produced it
 * (ne_nic_rx, ne_nic_poll_tx, ne_post_send on an errored QP, ...). It lets the
 * owner of many CQs poll only those with work instead of scanning all of them.
 * fn must not destroy the CQ or its QPs; it may poll the CQ and post work
 * requests. fn NULL turns notification off. Returns 0 or -EINVAL (cq NULL). */
int ne_cq_set_notify(struct ne_cq *cq, ne_cq_notify_fn fn, void *ctx);

/* ------------------------------------------------------------------ */
/* Queue pairs                                                         */

/* Create an RC QP in RESET. Returns 0 and its QPN in *qpn. -EINVAL: bad
 * attributes (missing CQ, zero depth, QPN out of range); -EEXIST: requested
 * QPN in use; -ENOMEM: no room. */
int ne_qp_create(struct ne_nic *nic, const struct ne_qp_init_attr *attr, uint32_t *qpn);

/* Take the QPN ne_qp_create would give next, with no QP behind it: for a
 * NIC another process runs (the dataplane's MPI ranks), whose QPs this one
 * only names. Nothing but ne_qp_destroy may be called on it. Returns 0 and
 * the QPN in *qpn, -EINVAL (nic or qpn NULL) or -ENOMEM (no room). */
int ne_qp_hold(struct ne_nic *nic, uint32_t *qpn);

/* Destroy a QP (its pending work is discarded without completions), or a
 * held QPN. Returns 0 or -ENOENT. */
int ne_qp_destroy(struct ne_nic *nic, uint32_t qpn);

/* Apply the fields named by mask; with NE_QP_STATE, move to attr->state.
 * Transitions as in verbs: RESET->INIT, INIT->INIT, INIT->RTR (needs AV,
 * PATH_MTU, DEST_QPN, RQ_PSN), RTR->RTS (needs SQ_PSN; TIMEOUT, RETRY_CNT,
 * RNR_RETRY optional), RTS->RTS, any->ERROR (flushes every WQE with
 * NE_WC_WR_FLUSH_ERR), any->RESET (discards everything). Returns 0,
 * -ENOENT (no QP), -EINVAL (bad transition, bad value, missing attribute). */
int ne_qp_modify(struct ne_nic *nic, uint32_t qpn, const struct ne_qp_attr *attr, uint32_t mask);

/* Current attributes and state. Returns 0 or -ENOENT. */
int ne_qp_query(const struct ne_nic *nic, uint32_t qpn, struct ne_qp_attr *out);

/* Post one send work request. The local buffer is checked now against its MR
 * (lkey, bounds, LOCAL_WRITE for READ). Returns 0; -ENOENT (no QP); -EINVAL
 * (bad opcode/length, QP not in RTS; -EINVAL also in ERROR); -EFAULT (lkey or
 * bounds); -ENOMEM (send queue full). Work starts at the next poll_tx. */
int ne_post_send(struct ne_nic *nic, uint32_t qpn, const struct ne_send_wr *wr, uint64_t now_ns);

/* Post one receive work request (QP in INIT, RTR or RTS). Returns 0,
 * -ENOENT, -EINVAL (state), -EFAULT (lkey, bounds, LOCAL_WRITE), -ENOMEM (full). */
int ne_post_recv(struct ne_nic *nic, uint32_t qpn, const struct ne_recv_wr *wr);

/* ------------------------------------------------------------------ */
/* DCQCN (ne_dcqcn.c)                                                  */

/* Fill *cfg with the defaults listed at struct ne_dcqcn_config, both points off. */
void ne_dcqcn_config_default(struct ne_dcqcn_config *cfg);

/* Reaction point state of one QP. */
struct ne_dcqcn_state {
	bool limited;          /* RC below rate_max: request packets are paced at RC */
	uint64_t rate_bps;     /* RC (rate_max when not limited) */
	uint64_t target_bps;   /* RT */
	double alpha;          /* 0..1 */
	uint32_t timer_events; /* T: rate timer events since the last cut */
	uint32_t byte_events;  /* BC: byte counter events since the last cut */
	uint64_t cuts;         /* CNPs that cut this QP's rate */
};

/* Bring the QP's DCQCN timers up to now_ns (times only move forward) and
 * copy its state. Returns 0, -ENOENT (no QP) or -EINVAL. */
int ne_qp_dcqcn_query(struct ne_nic *nic, uint32_t qpn, uint64_t now_ns, struct ne_dcqcn_state *out);

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

/* Linux's RoCEv2 source port of an RC QP: rdma_get_udp_sport(0, lqpn, rqpn),
 * 0xC000 | fold of the 20-bit flow label of lqpn x rqpn. Symmetric. */
uint16_t ne_rxe_udp_sport(uint32_t lqpn, uint32_t rqpn);

/* Retransmit timeout of an IB timeout code in ns (4096 x 2^timeout); 0 for 0. */
uint64_t ne_timeout_ns(uint8_t timeout);

/* RNR NAK timer of an IB 5-bit code in ns (IBA table 9.7.5.2.8; 0 = 655.36 ms). */
uint64_t ne_rnr_timer_ns(uint8_t code);

/* Frames per payload: number of packets a message of len bytes needs at mtu (>= 1). */
uint32_t ne_num_pkts(uint32_t len, uint32_t mtu);

const char *ne_wc_status_str(enum ne_wc_status status);

/*
 * The headers QP qpn of nic would put on a frame of RC opcode opcode (no
 * payload; extended headers and ICRC zero), for tracing its path through
 * switches without sending it: addresses, DSCP, UDP source port and
 * destination QP are the wire's. Nothing of the NIC changes. Writes *len
 * bytes into buf. Returns 0, -ENOENT (no such QP), -EINVAL (an opcode the
 * NIC does not use, or cap too small).
 */
int ne_nic_probe_frame(struct ne_nic *nic, uint32_t qpn, uint8_t opcode, uint8_t *buf, size_t cap,
		       size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* NE_NIC_H */
