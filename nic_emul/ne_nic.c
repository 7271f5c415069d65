/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NIC: configuration, the QP context cache model, the receive dispatch
 * (rxe_recv.c's role) and the transmit scheduler with line-rate pacing.
 * Memory regions are in ne_mr.c, completion queues in ne_cq.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ne_mem.h"
#include "ne_priv.h"
#include "rl_bytes.h"
#include "rl_icrc.h"

const char *const ne_counter_names[] = {
	"sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request",
	"rcvd_rnr_err", "send_rnr_err", "rcvd_seq_err", "ack_deferred",
	"retry_exceeded_err", "retry_rnr_exceeded_err", "completer_retry_err",
	"send_err", "link_downed", "rdma_sends", "rdma_recvs",
	"sent_bytes", "rcvd_bytes", "retrans_pkts", "naks_sent", "naks_rcvd",
	"acks_sent", "acks_rcvd", "ack_coalesced", "timeouts", "icrc_err",
	"rcv_malformed", "rcv_not_roce", "rcv_wrong_dst", "rcv_unknown_qpn",
	"rcv_bad_state", "rcv_bad_opcode", "rcv_opcode_seq_err", "rcv_len_err",
	"rcv_access_err", "rcv_stale_resp", "cnp_rcvd", "qpc_hits", "qpc_misses",
	"cq_overflow", "ecn_ce_rcvd", "cnp_sent", "cnp_rate_cuts", NULL,
};

_Static_assert(sizeof(struct ne_counters) == 42 * sizeof(uint64_t),
	       "ne_counter_names must list every counter");

void ne_nic_config_default(struct ne_nic_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ttl = 64;
	cfg->sport_policy = NE_SPORT_RXE;
	cfg->sport_fixed = NE_SPORT_BASE;
	cfg->max_qps = 256;
	cfg->max_mrs = 256;
	cfg->first_qpn = NE_FIRST_QPN_DEFAULT;
	ne_dcqcn_config_default(&cfg->dcqcn);
}

/* The bytes of a NIC's QP and MR slots, one mapping whose pages are
 * resident once written (most slots never are; a NIC another process runs
 * writes none: ne_qp_hold). */
static size_t slots_len(const struct ne_nic *nic)
{
	return nic->nqps * sizeof(*nic->qps) + nic->cfg.max_mrs * sizeof(*nic->mrs);
}

struct ne_nic *ne_nic_create(const struct ne_nic_config *cfg)
{
	struct ne_nic *nic;

	if (!cfg || cfg->max_qps == 0 || cfg->max_mrs == 0)
		return NULL;
	nic = calloc(1, sizeof(*nic));
	if (!nic)
		return NULL;
	nic->cfg = *cfg;
	ne_dcqcn_resolve(&nic->cfg);
	if (nic->cfg.first_qpn == 0 || nic->cfg.first_qpn > NE_QPN_MAX)
		nic->cfg.first_qpn = NE_FIRST_QPN_DEFAULT;
	nic->link_up = true;
	nic->ip_id = cfg->ip_id;
	nic->nqps = cfg->max_qps;
	nic->next_qpn = nic->cfg.first_qpn;
	nic->next_key = NE_FIRST_KEY;
	_Static_assert(sizeof(struct ne_qp) % _Alignof(struct ne_mr) == 0, "the MRs follow the QPs");
	nic->qps = ne_lazy_zalloc(slots_len(nic));
	nic->mrs = nic->qps ? (struct ne_mr *)(nic->qps + nic->nqps) : NULL;
	nic->qpc_head = nic->qpc_tail = NE_QPC_NIL;
	nic->turn = NE_HEAP_NONE;
	if (cfg->qpc_entries)
		nic->qpc = calloc(nic->nqps, sizeof(*nic->qpc));
	if (!nic->qps || !nic->mrs || (cfg->qpc_entries && !nic->qpc)) { /* (the scheduler: with the first QP) */
		ne_nic_destroy(nic);
		return NULL;
	}
	return nic;
}

static void qp_free(struct ne_qp *qp)
{
	free(qp->sq.wqe);
	free(qp->rq.wqe);
	free(qp->resp.res);
	free(qp->resp.rsp);
	memset(qp, 0, sizeof(*qp));
}

void ne_nic_destroy(struct ne_nic *nic)
{
	if (!nic)
		return;
	if (nic->qps)
		for (uint32_t i = 0; i < nic->nqps; i++)
			if (nic->qps[i].used)
				qp_free(&nic->qps[i]);
	while (nic->cqs) {
		struct ne_cq *cq = nic->cqs;

		nic->cqs = cq->next;
		free(cq->ring);
		free(cq);
	}
	ne_lazy_free(nic->qps, slots_len(nic));
	free(nic->held);
	free(nic->held_keys);
	free(nic->qpc);
	ne_sched_free(nic);
	free(nic);
}

void ne_nic_set_link(struct ne_nic *nic, bool up)
{
	ne_nic_touch(nic);
	if (nic->link_up && !up)
		nic->cnt.link_downed++;
	nic->link_up = up;
}

void ne_nic_set_zero_payload(struct ne_nic *nic, bool on, bool unwritten)
{
	nic->cfg.zero_payload = on;
	nic->cfg.payload_unwritten = on && unwritten;
}

int ne_nic_set_wake_notify(struct ne_nic *nic, ne_nic_wake_fn fn, void *ctx)
{
	if (!nic)
		return -EINVAL;
	nic->wake = fn;
	nic->wake_ctx = ctx;
	return 0;
}

void ne_nic_set_ip_id(struct ne_nic *nic, uint16_t ip_id)
{
	nic->ip_id = ip_id;
}

uint32_t ne_nic_next_qpn(const struct ne_nic *nic)
{
	return nic->next_qpn;
}

int ne_nic_set_next_qpn(struct ne_nic *nic, uint32_t qpn)
{
	if (!nic || qpn < NE_QPN_MIN || qpn > NE_QPN_MAX)
		return -EINVAL;
	nic->next_qpn = qpn;
	return 0;
}

void ne_nic_get_counters(const struct ne_nic *nic, struct ne_counters *out)
{
	*out = nic->cnt;
}

void ne_nic_add_counters(struct ne_nic *nic, const struct ne_counters *add)
{
	uint64_t to[sizeof(*add) / sizeof(uint64_t)], from[sizeof(*add) / sizeof(uint64_t)];

	/* (every field a uint64_t count: the size's assertion in this file) */
	memcpy(to, &nic->cnt, sizeof(to));
	memcpy(from, add, sizeof(from));
	for (size_t i = 0; i < sizeof(to) / sizeof(to[0]); i++)
		to[i] += from[i];
	memcpy(&nic->cnt, to, sizeof(to));
}

void ne_nic_get_work(const struct ne_nic *nic, struct ne_work *out)
{
	*out = nic->work;
}

void ne_nic_get_config(const struct ne_nic *nic, struct ne_nic_config *out)
{
	*out = nic->cfg;
}

int ne_nic_set_sport_policy(struct ne_nic *nic, enum ne_sport_policy policy, uint16_t fixed,
			    uint32_t seed)
{
	if (!nic || (policy != NE_SPORT_RXE && policy != NE_SPORT_FIXED && policy != NE_SPORT_HASH))
		return -EINVAL;
	nic->cfg.sport_policy = policy;
	nic->cfg.sport_fixed = fixed;
	nic->cfg.sport_seed = seed;
	return 0;
}

uint64_t ne_nic_link_free_ns(const struct ne_nic *nic)
{
	return nic->link_free_ns;
}

/* ------------------------------------------------------------------ */
/* QP context cache: qpc_entries resident contexts, least recently used
 * evicted. An entry lives at its QP's slot (qpn % nqps), so finding it is one
 * probe; a most-recently-used-first list gives the victim. */

static void qpc_unlink(struct ne_nic *nic, uint32_t slot)
{
	struct ne_qpc_entry *e = &nic->qpc[slot];

	if (e->prev != NE_QPC_NIL)
		nic->qpc[e->prev].next = e->next;
	else
		nic->qpc_head = e->next;
	if (e->next != NE_QPC_NIL)
		nic->qpc[e->next].prev = e->prev;
	else
		nic->qpc_tail = e->prev;
	e->valid = false;
	nic->qpc_count--;
}

static void qpc_push_front(struct ne_nic *nic, uint32_t slot, uint32_t qpn)
{
	struct ne_qpc_entry *e = &nic->qpc[slot];

	e->qpn = qpn;
	e->valid = true;
	e->prev = NE_QPC_NIL;
	e->next = nic->qpc_head;
	if (nic->qpc_head != NE_QPC_NIL)
		nic->qpc[nic->qpc_head].prev = slot;
	else
		nic->qpc_tail = slot;
	nic->qpc_head = slot;
	nic->qpc_count++;
}

/* Drop the resident context at slot (held or on the list). */
static void qpc_drop(struct ne_nic *nic, uint32_t slot)
{
	struct ne_qpc_entry *e = &nic->qpc[slot];

	if (e->held) {
		e->held = false;
		e->valid = false;
		nic->qpc_held--;
	} else {
		qpc_unlink(nic, slot);
	}
}

bool ne_qpc_touch(struct ne_nic *nic, uint32_t qpn)
{
	uint32_t slot;
	struct ne_qpc_entry *e;

	if (!nic->qpc)
		return true;
	slot = qpn % nic->nqps;
	e = &nic->qpc[slot];
	nic->work.qpc_probes++;
	if (e->valid && e->qpn == qpn) {
		nic->cnt.qpc_hits++;
		if (!e->held) {
			qpc_unlink(nic, slot);
			qpc_push_front(nic, slot, qpn);
		}
		return true;
	}
	nic->cnt.qpc_misses++;
	/* a context left by a destroyed QP of the same slot goes first */
	if (e->valid)
		qpc_drop(nic, slot);
	else if (nic->qpc_count + nic->qpc_held >= nic->cfg.qpc_entries &&
		 nic->qpc_tail != NE_QPC_NIL)
		qpc_unlink(nic, nic->qpc_tail); /* the least recently used one not held */
	/* Forward progress, as an RNIC uses a context it fetched: the context
	 * is held (off the list, not evictable) until its QP sends a frame.
	 * Evictable at once, QPs waiting out their misses evicted each other's
	 * contexts before any was used and no frame left (livelock). */
	e->qpn = qpn;
	e->valid = true;
	e->held = true;
	nic->qpc_held++;
	return false;
}

void ne_qpc_sent(struct ne_nic *nic, uint32_t qpn)
{
	uint32_t slot;
	struct ne_qpc_entry *e;

	if (!nic->qpc)
		return;
	slot = qpn % nic->nqps;
	e = &nic->qpc[slot];
	if (!e->valid || e->qpn != qpn || !e->held)
		return;
	e->held = false;
	nic->qpc_held--;
	qpc_push_front(nic, slot, qpn);
	/* back to capacity after an overflow of held contexts */
	while (nic->qpc_count + nic->qpc_held > nic->cfg.qpc_entries && nic->qpc_count > 1)
		qpc_unlink(nic, nic->qpc_tail);
}

/* ------------------------------------------------------------------ */
/* Receive */

struct ne_qp *ne_qp_lookup(const struct ne_nic *nic, uint32_t qpn)
{
	/* QPs live in a table indexed by QPN modulo its size (see ne_qp_create). */
	struct ne_qp *qp = &nic->qps[qpn % nic->nqps];

	if (qp->used && qp->qpn == qpn)
		return qp;
	return NULL;
}

/* The received ICRC is right (payload taken as zeros in the zero_payload model). */
static bool icrc_ok(const struct ne_nic *nic, const uint8_t *frame, const struct rl_pkt *pkt)
{
	uint32_t crc;

	if (!nic->cfg.zero_payload)
		return rl_icrc_verify(frame, pkt);
	return rl_icrc_compute_zeros(frame, pkt, pkt->payload_off, &crc) == 0 &&
	       crc == rl_pkt_icrc_wire(frame, pkt);
}

int ne_nic_rx(struct ne_nic *nic, const uint8_t *frame, size_t len, uint64_t now_ns)
{
	struct rl_pkt pkt;
	struct ne_qp *qp;
	uint8_t op;

	if (!nic || !frame)
		return NE_RX_INVAL;
	ne_nic_touch(nic);
	if (!nic->link_up)
		return NE_RX_LINK_DOWN;
	if (rl_parse(frame, len, &pkt) != RL_PARSE_OK) {
		nic->cnt.rcv_malformed++;
		return NE_RX_MALFORMED;
	}
	if (!pkt.is_roce || pkt.ip_version != 4) {
		nic->cnt.rcv_not_roce++;
		return NE_RX_NOT_ROCE;
	}
	if (memcmp(pkt.dmac, nic->cfg.mac, RL_ETH_ADDR_LEN) != 0 ||
	    rl_get_be32(pkt.dst) != nic->cfg.ipv4) {
		nic->cnt.rcv_wrong_dst++;
		return NE_RX_WRONG_DST;
	}
	if (!nic->cfg.icrc_off && !icrc_ok(nic, frame, &pkt)) {
		nic->cnt.icrc_err++;
		return NE_RX_BAD_ICRC;
	}
	nic->cnt.rcvd_pkts++;
	nic->cnt.rcvd_bytes += len;

	op = pkt.bth.opcode;
	if (op == RL_OP_CNP) {
		nic->cnt.cnp_rcvd++;
		if (nic->cfg.dcqcn.rp_enable) {
			qp = ne_qp_lookup(nic, pkt.bth.dqpn);
			if (qp && qp->state == NE_QPS_RTS)
				ne_dcqcn_cnp(nic, qp, now_ns);
		}
		return NE_RX_CNP;
	}
	qp = ne_qp_lookup(nic, pkt.bth.dqpn);
	if (!qp) {
		nic->cnt.rcv_unknown_qpn++;
		return NE_RX_UNKNOWN_QPN;
	}
	ne_qp_touch(nic, qp); /* what follows may change its work and timers */
	if (!ne_op_is_request(op) && !ne_op_is_response(op)) {
		nic->cnt.rcv_bad_opcode++;
		return NE_RX_BAD_OPCODE;
	}
	if (ne_op_is_request(op)) {
		if (qp->state != NE_QPS_RTR && qp->state != NE_QPS_RTS) {
			nic->cnt.rcv_bad_state++;
			return NE_RX_BAD_STATE;
		}
	} else if (qp->state != NE_QPS_RTS) {
		nic->cnt.rcv_bad_state++;
		return NE_RX_BAD_STATE;
	}
	if (rl_get_be32(pkt.src) != qp->attr.dest_ipv4) {
		nic->cnt.rcv_wrong_dst++;
		return NE_RX_WRONG_DST;
	}
	/* DCQCN notification point: congestion seen on the way to us */
	if (nic->cfg.dcqcn.np_enable && pkt.ecn == RL_ECN_CE && ne_op_is_request(op))
		ne_dcqcn_np_ce(nic, qp, now_ns);
	if (!ne_qpc_touch(nic, qp->qpn)) {
		uint64_t t = now_ns + nic->cfg.qpc_miss_ns;

		if (qp->resp.ready_ns < t)
			qp->resp.ready_ns = t;
		if (qp->req.ready_ns < t)
			qp->req.ready_ns = t;
	}
	if (ne_op_is_request(op))
		return ne_resp_rx(nic, qp, frame, &pkt, now_ns);
	return ne_comp_rx(nic, qp, frame, &pkt, now_ns);
}
