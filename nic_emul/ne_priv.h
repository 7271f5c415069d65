/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal structures of the NIC emulator; not installed, not stable. */
#ifndef NE_PRIV_H
#define NE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ne_bits.h"
#include "ne_heap.h"
#include "ne_nic.h"
#include "ne_opcode.h"
#include "rl_parse.h"

#define NE_NO_TIME UINT64_MAX

/* QP numbers are 24-bit; 0 and 1 are the special QPs (SMI, GSI). */
#define NE_QPN_MIN 2u
#define NE_QPN_MAX RL_24BIT_MASK
#define NE_FIRST_QPN_DEFAULT 0x11u /* rxe's first QPN */
/* RoCEv2 UDP source ports: 0xC000 | 14 bits (rdma_flow_label_to_udp_sport). */
#define NE_SPORT_BASE 0xC000u
#define NE_SPORT_MASK 0x3FFFu
/* timeout and min_rnr_timer are 5-bit codes; the local ACK timeout is
 * 4.096 us << timeout (IBA 11.2.4.2). */
#define NE_TIMER_CODE_MAX 31
#define NE_TIMEOUT_UNIT_NS 4096ull
#define NE_NS_PER_S 1000000000ull
#define NE_DSCP_MAX 63
#define NE_FIRST_KEY 0x100u /* first MR key handed out */

/* RoCE payloads are padded to a multiple of 4 bytes (BTH PadCnt 0..3). */
#define NE_PAD_MAX 3u
static inline uint32_t ne_pad_len(uint32_t payload)
{
	return (4 - (payload & 3)) & 3;
}

/* Nanoseconds a frame of flen bytes (wire overhead added) takes at rate_bps,
 * rounded up; rate_bps > 0. */
static inline uint64_t ne_wire_ns(size_t flen, uint64_t rate_bps)
{
	uint64_t bits = (uint64_t)(flen + NE_WIRE_OVERHEAD) * 8ull;

	return (bits * NE_NS_PER_S + rate_bps - 1) / rate_bps;
}

/* No opcode (comp.opcode, resp.opcode before the first packet): as a uint8_t
 * it is 255, outside the opcode table, so ne_op_mask() gives 0. */
#define NE_OP_NONE (-1)
/* MSNs count modulo 2^24. */
#define NE_MSN_NEXT(msn) (((msn) + 1) & RL_24BIT_MASK)

/* AETH syndromes (IBA 9.3.5, rxe's AETH_* values). */
#define NE_AETH_TYPE_MASK 0xE0u
#define NE_AETH_ACK 0x00u
#define NE_AETH_RNR_NAK 0x20u
#define NE_AETH_NAK 0x60u
#define NE_AETH_ACK_UNLIMITED 0x1Fu
#define NE_AETH_NAK_PSN_SEQ 0x60u
#define NE_AETH_NAK_INV_REQ 0x61u
#define NE_AETH_NAK_REM_ACC 0x62u
#define NE_AETH_NAK_REM_OP 0x63u

/* Every frame the NIC builds: Ethernet II (no tag), IPv4 without options, UDP. */
#define NE_L2L4_LEN (RL_ETH_HDR_LEN + RL_IPV4_HDR_LEN + RL_UDP_HDR_LEN)
#define NE_HDR_LEN (NE_L2L4_LEN + RL_BTH_LEN) /* Eth + IPv4 + UDP + BTH */

struct ne_mr {
	bool used;
	uint32_t key;
	uint8_t *addr;
	size_t len;
	uint64_t iova;
	uint32_t access;
};

struct ne_cq {
	struct ne_nic *nic;
	struct ne_wc *ring;
	uint32_t depth, head, count;
	uint32_t users; /* QPs referencing it */
	struct ne_cq *next; /* NIC's list */
	ne_cq_notify_fn notify; /* called after each completion is queued, or NULL */
	void *notify_ctx;
};

enum ne_wqe_state {
	NE_WQE_POSTED = 0, /* not started */
	NE_WQE_PENDING,    /* some packets sent, not complete */
};

struct ne_swqe {
	struct ne_send_wr wr;
	uint8_t state;
	uint32_t first_psn, last_psn, npkts;
};

/* A READ the responder accepted: kept for duplicate (retried) reads. */
struct ne_read_res {
	bool valid;
	uint32_t first_psn, last_psn;
	uint32_t msn;
};

enum ne_rsp_kind {
	NE_RSP_ACK = 0, /* ACK or NAK: syndrome, psn, msn */
	NE_RSP_READ,    /* stream of READ responses */
};

/* One item of the responder's output, sent in order. */
struct ne_rsp_item {
	uint8_t kind;
	uint8_t syndrome;
	bool started;   /* READ: first response already built */
	uint32_t psn;   /* ACK: psn; READ: next response PSN */
	uint32_t msn;
	uint64_t va;    /* READ: next byte to send */
	uint32_t rkey;
	uint32_t resid; /* READ: bytes left */
};

/* DCQCN per-QP state (ne_dcqcn.c). Rates in bit/s, alpha in 1/2^20. */
#define NE_DCQCN_ALPHA_SHIFT 20
#define NE_DCQCN_ALPHA_ONE (1u << NE_DCQCN_ALPHA_SHIFT)
struct ne_dcqcn_qp {
	bool active;            /* got a CNP once: alpha timer runs */
	bool limited;           /* rc < rate_max: paced, rate timer and byte counter run */
	uint64_t rc, rt;
	uint32_t alpha;
	uint64_t next_alpha_ns, next_rate_ns;
	uint32_t t_cnt, bc_cnt;
	uint64_t bytes;         /* sent since the last byte counter event */
	uint64_t next_tx_ns;    /* pacing: next request packet not before */
	uint64_t cuts;
	/* notification point */
	bool np_pending;        /* a CNP to send */
	bool np_sent;           /* np_last_ns valid */
	uint64_t np_last_ns;
};

/*
 * A QP's state, grouped by role as rxe splits the roles over files: each
 * role's sub-struct is written by the file named in its comment; other files
 * only read it, except where the comment names them. ne_qp.c (the verbs:
 * create, modify, reset, flush to ERROR) initialises, resets and flushes
 * every part.
 */

/* Send queue. Indices grow without bound, slot = idx % size. tail: ne_qp.c
 * (ne_post_send); next: ne_req.c (the WQE the requester builds from; moved
 * back by a retry, forward by ne_req_sync; ne_comp.c keeps it >= head);
 * head: ne_comp.c (the oldest WQE not completed). */
struct ne_sq {
	struct ne_swqe *wqe;
	uint32_t size;
	uint32_t head; /* oldest not completed (completer) */
	uint32_t next; /* next WQE the requester builds from */
	uint32_t tail; /* next free */
};

/* Requester (ne_req.c): packet building position over the send queue. */
struct ne_qp_req {
	uint32_t psn;        /* PSN of the next request packet */
	uint32_t off;        /* bytes of sq.wqe[sq.next] already covered */
	uint32_t max_psn;    /* highest PSN ever sent + 1 (for retransmit counting) */
	bool max_valid;
	uint32_t noack_pkts; /* packets sent since the last AckReq */
	/* not before: written by ne_comp.c (RNR NAK wait), ne_nic.c and
	 * ne_sched.c (QP context miss); read by the scheduler */
	uint64_t ready_ns;
};

/* Completer (ne_comp.c): acknowledgement position and retries. */
struct ne_qp_comp {
	uint32_t psn;        /* oldest PSN not yet acknowledged */
	int opcode;          /* last READ response opcode, NE_OP_NONE none (ne_req_retry clears it) */
	uint8_t retry_left, rnr_left;
	bool started_retry;
	uint64_t rto_at;     /* retransmit timer deadline or NE_NO_TIME (armed by ne_req.c) */
};

/* Receive queue. tail: ne_qp.c (ne_post_recv); head: ne_resp.c (a SEND or
 * a WRITE with immediate takes a WQE). Indices grow, slot = idx % size. */
struct ne_rq {
	struct ne_recv_wr *wqe;
	uint32_t size, head, tail;
};

/* Responder (ne_resp.c): the expected request, the message in progress,
 * READ resources and the ordered output ring that ne_resp_build() sends. */
struct ne_qp_resp {
	uint32_t psn;        /* expected PSN */
	uint32_t msn;
	int opcode;          /* last accepted request opcode, NE_OP_NONE none */
	bool sent_psn_nak;
	uint64_t va;         /* WRITE in progress */
	uint32_t rkey;
	uint32_t resid;
	uint32_t wlen;       /* total length of the WRITE in progress */
	bool has_rwqe;       /* SEND in progress holds a receive WQE */
	struct ne_recv_wr rwqe;
	uint32_t rwqe_off;
	struct ne_read_res *res; /* accepted READs, kept for duplicates */
	uint32_t nres, res_next;
	struct ne_rsp_item *rsp;
	uint32_t rsp_size, rsp_head, rsp_tail; /* ring, indices grow */
	/* not before: QP context miss (ne_nic.c, ne_sched.c) */
	uint64_t ready_ns;
};

struct ne_qp {
	/* identity and verbs attributes: ne_qp.c */
	bool used;
	uint32_t qpn;
	enum ne_qp_state state;
	struct ne_qp_attr attr;
	struct ne_cq *scq, *rcq;
	bool sq_sig_all;
	uint16_t sport;

	struct ne_sq sq;
	struct ne_qp_req req;
	struct ne_qp_comp comp;
	struct ne_rq rq;
	struct ne_qp_resp resp;

	struct ne_dcqcn_qp dc; /* ne_dcqcn.c */
	int64_t deficit; /* ne_sched.c, tx_quantum arbitration: bytes it may still send this turn */
};

/* One resident QP context of the cache model, at the slot of its QP
 * (qpn % nqps), on a most-recently-used-first list. */
struct ne_qpc_entry {
	uint32_t qpn;
	bool valid;
	bool held;           /* fetched, its QP has not sent since; not on the list */
	uint32_t prev, next; /* slots; NE_QPC_NIL ends the list */
};
#define NE_QPC_NIL UINT32_MAX

/*
 * The transmit scheduler (ne_sched.c). A QP's "due" time is when it next has
 * a frame it may send (a CNP, a response whose QP context is ready, a
 * request not held by an RNR wait, a context miss or DCQCN pacing); it is a
 * function of the QP's state only, recomputed when the QP is marked dirty.
 * QPs with nothing to send are in no structure, so they cost nothing.
 *   wait   QPs due after the latest poll's time, by due time;
 *   ready  QPs due at or before it, by due time, and ready_set, the same QPs
 *          by slot: the round-robin walk visits only them;
 *   rto    armed retransmit timers; dc: DCQCN alpha/rate timers.
 */
struct ne_sched {
	struct ne_heap wait, ready, rto, dc;
	struct ne_bits ready_set;
	uint32_t *dirty;  /* slots whose keys must be recomputed */
	uint32_t ndirty;
	uint8_t *is_dirty; /* per slot */
	uint32_t *due;    /* scratch: slots whose timers are due */
	uint64_t now;     /* time of the latest poll */
};

struct ne_nic {
	struct ne_nic_config cfg;
	struct ne_counters cnt;
	struct ne_work work;
	bool link_up;
	uint16_t ip_id;
	uint64_t link_free_ns;

	struct ne_qp *qps;
	uint32_t nqps;
	uint32_t next_qpn;
	/* QPNs held with no QP (ne_qp_hold): their slots are taken, and the
	 * slots' pages of qps stay untouched */
	uint32_t *held, nheld, held_cap;
	uint32_t *held_keys, nheld_keys, held_keys_cap; /* MR keys held with no MR (ne_mr_hold) */
	uint32_t rr; /* round-robin position for transmit */
	uint32_t turn; /* tx_quantum: slot whose turn it is, NE_HEAP_NONE none */
	uint64_t msg_free_ns; /* msg_rate: the next message may not start before */

	struct ne_mr *mrs;
	uint32_t next_key;

	struct ne_cq *cqs;

	struct ne_qpc_entry *qpc; /* [nqps] when the cache model is on */
	uint32_t qpc_head, qpc_tail, qpc_count; /* the LRU list, most recent first */
	uint32_t qpc_held;                       /* resident contexts off the list */

	struct ne_sched sched;

	/* ne_nic_next_event_ns() cached until the next state change: any call
	 * that can change transmit work or timers clears ev_valid. While valid,
	 * ne_nic_poll_tx() before ev_cache returns 0 without scanning. */
	uint64_t ev_cache;
	bool ev_valid;

	ne_nic_wake_fn wake; /* ne_nic_set_wake_notify */
	void *wake_ctx;
};

/* The NIC's state changed: the cached next event is stale; tell the owner
 * once per read of it. */
static inline void ne_nic_touch(struct ne_nic *nic)
{
	if (!nic->ev_valid)
		return;
	nic->ev_valid = false;
	if (nic->wake)
		nic->wake(nic->wake_ctx, nic);
}

/* ne_sched.c. ne_sched_init: the scheduler's arrays, made with the NIC's
 * first QP (ne_qp_create): a NIC without one, e.g. one whose QPs are only
 * numbers (ne_qp_hold), holds none; its empty scheduler reads as idle. 0
 * (also when made already) or -ENOMEM. */
int ne_sched_init(struct ne_nic *nic);
void ne_sched_free(struct ne_nic *nic);
/* qp's state changed: invalidate the cached next event and recompute the
 * QP's scheduling keys before the next poll or next-event query. Every
 * change to a QP's transmit work, ready times or timers must call this. */
void ne_qp_touch(struct ne_nic *nic, struct ne_qp *qp);
/* As ne_qp_touch, but keeps the cached next event (for state changes that
 * the cache may ignore, as DCQCN's lazy timers replayed by a query). */
void ne_sched_mark(struct ne_nic *nic, struct ne_qp *qp);

/* ne_nic.c */
struct ne_qp *ne_qp_lookup(const struct ne_nic *nic, uint32_t qpn);
/* Access the QP's context: true when resident (a hit); on a miss the context
 * is fetched and held until the QP sends a frame, and false is returned. */
bool ne_qpc_touch(struct ne_nic *nic, uint32_t qpn);
/* The QP sent a frame: the context held for it since its miss becomes evictable. */
void ne_qpc_sent(struct ne_nic *nic, uint32_t qpn);

/* ne_mr.c */
struct ne_mr *ne_mr_lookup(struct ne_nic *nic, uint32_t key);
/* Resolve [iova, iova+len) of an MR with the given access; NULL if out of bounds. */
uint8_t *ne_mr_ptr(struct ne_nic *nic, uint32_t key, uint64_t iova, uint32_t len, uint32_t access);

/* ne_cq.c */
void ne_cq_push(struct ne_nic *nic, struct ne_cq *cq, const struct ne_wc *wc);

/* ne_qp.c */
void ne_qp_to_error(struct ne_nic *nic, struct ne_qp *qp);
void ne_qp_reset(struct ne_qp *qp);

/* ne_pkt.c: header building. Writes Eth/IPv4/UDP/BTH for a packet whose
 * BTH+ext+payload+pad+ICRC is `roce_len` bytes; returns the BTH offset. */
struct ne_bth_fields {
	uint8_t opcode;
	bool se, ackreq;
	uint8_t padcnt;
	uint32_t dqpn, psn;
};
size_t ne_build_hdrs(struct ne_nic *nic, const struct ne_qp *qp, uint8_t *buf,
		     size_t roce_len, const struct ne_bth_fields *bth);
void ne_put_reth(uint8_t *p, uint64_t va, uint32_t rkey, uint32_t len);
void ne_put_aeth(uint8_t *p, uint8_t syndrome, uint32_t msn);
void ne_put_be32(uint8_t *p, uint32_t v);
/* Compute and store the ICRC of a complete frame (payload taken as zeros,
 * not read, with zero_payload). Returns 0, or -EINVAL when the frame does
 * not parse as RoCEv2. */
int ne_finish_icrc(uint8_t *frame, size_t len, bool zero_payload);
/*
 * Zero n bytes at dst with stores that bypass the caches (nobody reads a
 * zero payload back: the receiver takes it as zeros, the ICRC is computed
 * without it), so that a 4 KiB frame does not push 64 lines of the fabric's
 * working set out of the caches. Fenced: the frame may go to another thread.
 */
void ne_zero_nt(uint8_t *dst, size_t n);

/* Copy n payload bytes from src, or zeros under the zero_payload model
 * (nothing at all with payload_unwritten). */
static inline void ne_payload_out(const struct ne_nic *nic, uint8_t *dst, const uint8_t *src, size_t n)
{
	if (!nic->cfg.zero_payload)
		memcpy(dst, src, n);
	else if (!nic->cfg.payload_unwritten)
		ne_zero_nt(dst, n);
}
/* Store n received payload bytes at dst (nothing under the zero_payload model). */
static inline void ne_payload_in(const struct ne_nic *nic, uint8_t *dst, const uint8_t *src, size_t n)
{
	if (!nic->cfg.zero_payload)
		memcpy(dst, src, n);
}

/* ne_req.c: build the next request packet of qp (0 none, 1 built). */
int ne_req_build(struct ne_nic *nic, struct ne_qp *qp, uint64_t now_ns, uint8_t *buf, size_t *len);
bool ne_req_has_work(const struct ne_qp *qp);
void ne_req_retry(struct ne_qp *qp);
/* The completer moved past the requester (a response to a packet sent before a
 * go-back-N rewind acknowledged PSNs the requester is about to resend): move
 * the requester forward to comp.psn so that its WQE, offset and PSN agree. */
void ne_req_sync(struct ne_qp *qp);

/* ne_resp.c */
int ne_resp_rx(struct ne_nic *nic, struct ne_qp *qp, const uint8_t *frame,
	       const struct rl_pkt *pkt, uint64_t now_ns);
int ne_resp_build(struct ne_nic *nic, struct ne_qp *qp, uint8_t *buf, size_t *len);
bool ne_resp_has_work(const struct ne_qp *qp);

/* ne_comp.c */
int ne_comp_rx(struct ne_nic *nic, struct ne_qp *qp, const uint8_t *frame,
	       const struct rl_pkt *pkt, uint64_t now_ns);
void ne_comp_timer(struct ne_nic *nic, struct ne_qp *qp, uint64_t now_ns);
/* Complete the WQE at sq.head with a status (error moves the QP to ERROR). */
void ne_comp_wqe(struct ne_nic *nic, struct ne_qp *qp, enum ne_wc_status st);

/* ne_dcqcn.c */
/* Effective DCQCN constants (zero fields replaced by defaults, rate_max resolved). */
void ne_dcqcn_resolve(struct ne_nic_config *cfg);
/* RP: a CNP for qp arrived. */
void ne_dcqcn_cnp(struct ne_nic *nic, struct ne_qp *qp, uint64_t now_ns);
/* RP: run timer events up to now_ns. */
void ne_dcqcn_advance(struct ne_nic *nic, struct ne_qp *qp, uint64_t now_ns);
/* RP: a request packet of flen bytes left at now_ns (byte counter, pacing). */
void ne_dcqcn_sent(struct ne_nic *nic, struct ne_qp *qp, uint64_t now_ns, size_t flen);
/* RP: earliest time qp may send its next request packet (0: not paced). */
static inline uint64_t ne_dcqcn_tx_at(const struct ne_qp *qp)
{
	return qp->dc.limited ? qp->dc.next_tx_ns : 0;
}
/* NP: a request packet for qp arrived with ECN CE. */
void ne_dcqcn_np_ce(struct ne_nic *nic, struct ne_qp *qp, uint64_t now_ns);
/* RP: time of the QP's next alpha or rate timer event that changes its
 * state, NE_NO_TIME when none will (inactive, or alpha settled and not paced). */
uint64_t ne_dcqcn_next_timer_ns(const struct ne_nic *nic, const struct ne_qp *qp);
/* NP: build the pending CNP of qp (returns 1 with *len set, or 0). */
int ne_dcqcn_build_cnp(struct ne_nic *nic, struct ne_qp *qp, uint8_t *buf, size_t *len);

#endif /* NE_PRIV_H */
