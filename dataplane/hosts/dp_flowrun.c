/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_flowrun: a collective's plan on the flow engine (dp_flowrun.h), one
 * size's replay on the shared flow fabric (dp_flowrun_priv.h). The grant and
 * send steps follow nic_emul/ne_coll_run.c's rules (grant_step, sender_step)
 * on the driver's own per-transfer flags; flows replace the NICs' WQEs.
 * NCCL's model as ne_coll's: the protocol's wire bytes, hwLat per step and
 * LL's and LL128's cap (ne_coll.h's getters; docs/reference/rocelab-dp.md).
 */
#include "dp_flowrun_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_coll.h"
#include "dp_fabric.h"
#include "dp_trace.h"
#include "fl_fabric.h"
#include "fl_heap.h"
#include "nc_nvlink.h"
#include "ne_coll.h"
#include "ne_nic.h"

/* Per-transfer flags (as ne_coll's XFER_*). */
#define FR_RECV_DONE 1u
#define FR_SEND_DONE 2u
#define FR_CTS 4u
#define FR_WRITE_SENT 8u /* PXN's copy or LL's / LL128's write at the cap started (ne_coll's XFER_PXN_SENT) */
#define FR_WRITTEN 16u   /* ... and ended: the transfer may be posted (XFER_PXN_IN) */

/* A flow's cookie: kind, connection, QP, transfer. */
/* FR_PARTS: the parts of one transfer on every QP of a class (QPs whose data
 * take one path), as one weighted flow; its QP is the class's lowest. */
enum { FR_DATA = 0, FR_ACK = 1, FR_CTS_FLOW = 2, FR_PARTS = 3 };
/* A timer's FR_CTS_FLOW cookie with this QP: a network step's hwLat over
 * (a grant's QP is 0), so the 2-bit kind keeps its 4 values. */
#define FR_STEP_QP 1u
#define FR_SEQ_BITS 24
#define FR_MAX_SEQ (1u << FR_SEQ_BITS)

/* RC opcodes of the probe frames (IBTA Vol. 1, 9.2: RC WRITE ONLY WITH
 * IMMEDIATE, SEND ONLY WITH IMMEDIATE, ACKNOWLEDGE). */
#define OP_WRITE_ONLY_IMM 0x0Bu
#define OP_SEND_ONLY_IMM 0x05u
#define OP_ACK 0x11u

struct fr_path {
	uint32_t hop[FL_MAX_HOPS];
	uint32_t loc[FL_MAX_HOPS]; /* each hop's slot in the replay's own counters (chans_setup) */
	unsigned n;
};

/*
 * A data QP's send queue: a NIC sends one QP's messages in order, one at a
 * time (its WQEs), so a part starts when the QP's part before it has sent
 * its last byte; the QPs of a NIC share its link as flows do.
 */
struct fr_sq {
	uint32_t *seq;      /* ring of transfers waiting, oldest first */
	uint32_t head, n, cap;
	bool busy;          /* a part of it is sending */
};

struct fr_conn {
	struct ne_coll_conn_info info;
	struct ne_coll_conn_plan plan;
	struct ne_coll_xfer_info *x;  /* [nxfers] */
	uint8_t *flags;               /* [nxfers] FR_* */
	uint16_t *parts, *acks;       /* [nxfers] data parts / ACKs still to arrive */
	struct fr_path *data, *ack;   /* [nqps] forward / reverse of each data QP */
	struct fr_sq *sq;             /* [nqps] */
	uint8_t *lead;                /* [nqps] the lowest QP whose data path is this QP's */
	struct fr_path cts;           /* the grant's path, receiver -> sender */
	uint64_t *ack_lat, cts_lat;   /* [nqps] / the grant's: a header-only packet's latency */
	uint32_t send_next, grant_next;
	bool dirty;
};

struct fr_group {
	uint32_t *conns, n, rr_next, granted;
	bool dirty;
};

struct fr {
	struct dp_fabric *f;
	struct fs_shared *sh;         /* the flow fabric it shares (sh->fl) */
	struct ne_coll *run;
	const struct ne_coll_config *cfg;
	struct ne_coll_rules rules;
	struct fr_conn *c;
	uint32_t nconns, nqps;
	struct fr_group *g;
	uint32_t *dirty_c, n_dirty_c, *dirty_g, n_dirty_g;
	uint64_t recv_left, send_left;
	struct fl_heap nvl;           /* NVLink ends by time (id: nvl_id) */
	uint32_t *nvl_seq;            /* [nconns x window] the transfer of each id */
	uint64_t *nvl_free;           /* [nranks] each GPU's NVLink egress free from then */
	/* NCCL's model (ne_coll.h's getters): hwLat of an NVLink and of a network
	 * step (launch=nccl; else nvlink_lat_ns and 0), LL's and LL128's cap */
	uint64_t step_nvl, step_net, cap_Bps;
	/* the link table's counters, for the channels its paths cross only: a
	 * replay per collective instance at once, and 100K channels at 24K GPUs */
	uint32_t *chans, n_chans;     /* [n_chans] the fabric's channel of each slot */
	uint64_t *chan_bytes;         /* [n_chans] payload that crossed each */
	uint64_t *chan_pkts;          /* [n_chans] packets that crossed each (flows in path_mtu packets) */
	/* Header-only packets (ACKs, rocelab's grants) as timers, not flows: a
	 * 0-byte flow takes no bandwidth and only waits its latency (flow/README.md),
	 * so a timer at the same time gives the same result without the engine's
	 * event heap holding it. id = slot of tmr_ck, key = delivery time. */
	struct fl_heap tmr;
	uint64_t *tmr_ck;             /* [cap_tmr] the cookie of each timer id */
	uint32_t *tmr_free, n_tmr_free, cap_tmr;
	uint64_t *sent;               /* cookies of parts whose last byte went (fl_config.sent) */
	uint32_t n_sent, cap_sent;
	struct dp_flowrun_stats *st, st_own;
	uint64_t now;                 /* the run's time at the size's start (the switches' decisions) */
	/* iterations: each starts launch after the one before ended, on the fabric as it is */
	uint64_t launch;              /* ne_coll_launch_ns */
	uint64_t next_start;          /* when the next iteration's flows start; FL_TIME_INF: none pending */
	uint64_t t0;                  /* when the current one's flows started */
	uint64_t *iter_ns;            /* [rules.iters] the times of those that ended */
	uint32_t iter;                /* iterations ended */
	bool in_iter;                 /* an iteration runs */
	bool over;                    /* the last one ended */
	uint32_t hid;                 /* its id in the shared fabric's due heap */
	int err;
};

static uint64_t cookie(unsigned kind, uint32_t k, uint32_t q, uint32_t s)
{
	return (uint64_t)kind << 62 | (uint64_t)k << 32 | (uint64_t)q << FR_SEQ_BITS | s;
}

static void mark_conn(struct fr *r, uint32_t k)
{
	if (!r->c[k].dirty) {
		r->c[k].dirty = true;
		r->dirty_c[r->n_dirty_c++] = k;
	}
}

static void mark_group(struct fr *r, uint32_t g)
{
	if (!r->g[g].dirty) {
		r->g[g].dirty = true;
		r->dirty_g[r->n_dirty_g++] = g;
	}
}

/* The link table: w messages' packets of path_mtu (a header-only one: 1) and payload. */
static void count_path(struct fr *r, const struct fr_path *p, uint64_t bytes, uint32_t w)
{
	for (unsigned h = 0; h < p->n; h++) {
		r->chan_pkts[p->loc[h]] += w * (bytes ? (bytes + r->cfg->path_mtu - 1) / r->cfg->path_mtu : 1);
		r->chan_bytes[p->loc[h]] += w * bytes;
	}
}

/* w messages of bytes each on path p from now, as one flow of weight w. */
static void start_flow(struct fr *r, const struct fr_path *p, uint64_t bytes, uint32_t w, uint64_t ck)
{
	int e = fs_flow_start(r->sh, r, p->hop, p->n, bytes, w, ck);

	if (e < 0 && !r->err)
		r->err = e;
	r->st->flows++;
	count_path(r, p, bytes, w);
}

/* Room for twice the timer ids; 0 or -ENOMEM. */
static int timers_grow(struct fr *r)
{
	uint32_t cap = r->cap_tmr ? 2 * r->cap_tmr : 256;
	uint64_t *ck = realloc(r->tmr_ck, cap * sizeof(*ck));
	uint32_t *fr = ck ? realloc(r->tmr_free, cap * sizeof(*fr)) : NULL;

	if (ck)
		r->tmr_ck = ck;
	if (fr)
		r->tmr_free = fr; /* (kept before any return: realloc may have moved it) */
	if (!fr || fl_heap_grow(&r->tmr, cap))
		return -ENOMEM;
	for (uint32_t id = cap; id-- > r->cap_tmr;) /* lowest id on top */
		r->tmr_free[r->n_tmr_free++] = id;
	r->cap_tmr = cap;
	return 0;
}

/* A header-only packet on path p, delivered lat ns from now (start_flow of 0
 * bytes, as a timer); p NULL: a wait that sends nothing (a step's hwLat). */
static void start_timer(struct fr *r, const struct fr_path *p, uint64_t lat, uint64_t ck)
{
	uint32_t id;

	if (!r->n_tmr_free && timers_grow(r)) {
		r->err = -ENOMEM;
		return;
	}
	id = r->tmr_free[--r->n_tmr_free];
	r->tmr_ck[id] = ck;
	if (fl_heap_set(&r->tmr, id, fl_now(r->sh->fl) + lat) < 0 && !r->err)
		r->err = -ENOMEM;
	if (p) {
		r->st->timers++;
		count_path(r, p, 0, 1);
	}
}

/* The wire bytes of transfer s of connection k (LL, LL128: more than its data). */
static uint32_t wire_len(const struct fr *r, uint32_t k, uint32_t s)
{
	return ne_coll_wire_bytes(r->run, r->c[k].x[s].len);
}

/* ------------------------------------------------------------------ */
/* Paths */

/* The path of the frame QP qpn of rank's NIC would send with opcode op. */
static int trace_qp(struct fr *r, struct ne_nic *nic, uint32_t host, uint32_t qpn, uint8_t op,
		    struct fr_path *p, char *why, size_t cap)
{
	uint8_t frame[256];
	uint32_t chans[DP_TRACE_MAX_HOPS];
	size_t len = 0;
	unsigned n = 0;
	int e = ne_nic_probe_frame(nic, qpn, op, frame, sizeof(frame), &len);

	if (e < 0) {
		snprintf(why, cap, "QP %u of host %u: no probe frame (%s)", qpn, host, strerror(-e));
		return e;
	}
	e = dp_trace_path(r->f, host, frame, (uint32_t)len, sizeof(frame), r->now, chans, DP_TRACE_MAX_HOPS,
			  &n, why, cap);
	if (e < 0)
		return e;
	if (n > FL_MAX_HOPS) {
		snprintf(why, cap, "QP %u of host %u: %u hops, the flow engine takes %u", qpn, host, n,
			 FL_MAX_HOPS);
		return -ELOOP;
	}
	memcpy(p->hop, chans, n * sizeof(*chans));
	p->n = n;
	return 0;
}

static int conn_paths(struct fr *r, struct fr_conn *cn, struct ne_nic *const *nics,
		      const uint32_t *host_of, char *why, size_t cap)
{
	/* (channel rings: the sender's QPs are on its channel's NIC, src_nic, reached by PXN) */
	uint32_t s = cn->info.src_nic, d = cn->info.dst;
	bool nccl = r->cfg->model == NE_COLL_MODEL_NCCL;
	int e = 0;

	for (uint32_t q = 0; q < r->nqps && !e; q++) {
		e = trace_qp(r, nics[s], host_of[s], cn->info.src_data_qpn[q], OP_WRITE_ONLY_IMM,
			     &cn->data[q], why, cap);
		if (!e)
			e = trace_qp(r, nics[d], host_of[d], cn->info.dst_data_qpn[q], OP_ACK, &cn->ack[q],
				     why, cap);
	}
	/* the grant: rocelab's control QP; nccl's FIFO write on the reverse of data QP 0 */
	if (!e)
		e = trace_qp(r, nics[d], host_of[d], nccl ? cn->info.dst_data_qpn[0] : cn->info.dst_ctrl_qpn,
			     nccl ? OP_WRITE_ONLY_IMM : OP_SEND_ONLY_IMM, &cn->cts, why, cap);
	/* what a header-only packet's flow would take (the timers') */
	for (uint32_t q = 0; q < r->nqps && !e; q++)
		e = fl_path_latency(r->sh->fl, cn->ack[q].hop, cn->ack[q].n, 0, &cn->ack_lat[q]);
	if (!e)
		e = fl_path_latency(r->sh->fl, cn->cts.hop, cn->cts.n, 0, &cn->cts_lat);
	for (uint32_t q = 0; q < r->nqps; q++) { /* the QPs' classes by data path */
		cn->lead[q] = (uint8_t)q;
		for (uint32_t l = 0; l < q && cn->lead[q] == q; l++)
			if (cn->lead[l] == l && cn->data[l].n == cn->data[q].n &&
			    !memcmp(cn->data[l].hop, cn->data[q].hop, cn->data[q].n * sizeof(*cn->data[q].hop)))
				cn->lead[q] = (uint8_t)l;
	}
	return e;
}

/* ------------------------------------------------------------------ */
/* Set-up */

static int conn_setup(struct fr *r, struct ne_coll *run, uint32_t k)
{
	struct fr_conn *cn = &r->c[k];
	uint32_t n;

	if (ne_coll_conn_info(run, k, &cn->info) || ne_coll_conn_plan(run, k, &cn->plan))
		return -EINVAL;
	n = cn->info.ntransfers;
	r->nqps = cn->info.nqps; /* (the same on every connection) */
	if (n >= FR_MAX_SEQ || r->nqps > 255)
		return -E2BIG;
	cn->x = calloc(n + 1, sizeof(*cn->x));
	cn->flags = calloc(n + 1, 1);
	cn->parts = calloc(n + 1, sizeof(*cn->parts));
	cn->acks = calloc(n + 1, sizeof(*cn->acks));
	cn->data = calloc(r->nqps, sizeof(*cn->data));
	cn->ack = calloc(r->nqps, sizeof(*cn->ack));
	cn->ack_lat = calloc(r->nqps, sizeof(*cn->ack_lat));
	cn->lead = calloc(r->nqps, sizeof(*cn->lead));
	cn->sq = calloc(r->nqps, sizeof(*cn->sq));
	if (!cn->x || !cn->flags || !cn->parts || !cn->acks || !cn->data || !cn->ack || !cn->ack_lat || !cn->lead || !cn->sq)
		return -ENOMEM;
	for (uint32_t s = 0; s < n; s++)
		ne_coll_xfer_get(run, k, s, &cn->x[s]);
	r->recv_left += n;
	r->send_left += n;
	return 0;
}

static int groups_setup(struct fr *r)
{
	r->g = calloc(r->rules.ngroups + 1, sizeof(*r->g));
	if (!r->g)
		return -ENOMEM;
	for (uint32_t k = 0; k < r->nconns; k++) {
		struct fr_group *g = &r->g[r->c[k].plan.group];
		uint32_t *p = realloc(g->conns, (g->n + 1) * sizeof(*p));

		if (!p)
			return -ENOMEM;
		g->conns = p;
		g->conns[g->n++] = k;
	}
	return 0;
}

void fr_sent(struct fr *r, uint64_t ck)
{
	if (ck >> 62 != FR_DATA && ck >> 62 != FR_PARTS)
		return;
	if (r->n_sent == r->cap_sent) {
		uint32_t cap = r->cap_sent ? 2 * r->cap_sent : 64;
		uint64_t *p = realloc(r->sent, cap * sizeof(*p));

		if (!p) {
			r->err = -ENOMEM;
			return;
		}
		r->sent = p;
		r->cap_sent = cap;
	}
	r->sent[r->n_sent++] = ck;
}

/* Path p's hops get their counter slots; slot_of (the shared fabric's
 * [f->n_chans] scratch, 0 where unused) holds slot + 1 of each channel seen. */
static int path_slots(struct fr *r, struct fr_path *p, uint32_t *slot_of, uint32_t *cap)
{
	for (unsigned h = 0; h < p->n; h++) {
		uint32_t ch = p->hop[h];

		if (slot_of[ch] == 0) {
			if (r->n_chans == *cap) {
				uint32_t *c = realloc(r->chans, 2 * (*cap + 8) * sizeof(*c));

				if (c == NULL)
					return -ENOMEM;
				r->chans = c;
				*cap = 2 * (*cap + 8);
			}
			r->chans[r->n_chans++] = ch;
			slot_of[ch] = r->n_chans;
		}
		p->loc[h] = slot_of[ch] - 1;
	}
	return 0;
}

/* The link table's counters of this replay (added to the fabric's at its
 * end): a slot per channel its traced paths cross, in the order first met. */
static int chans_setup(struct fr *r)
{
	uint32_t *slot_of = r->sh->chan_slot, cap = 0;
	int e = 0;

	for (uint32_t k = 0; k < r->nconns && !e; k++) {
		struct fr_conn *cn = &r->c[k];

		if (cn->plan.nvl)
			continue;
		for (uint32_t q = 0; q < r->nqps && !e; q++) {
			e = path_slots(r, &cn->data[q], slot_of, &cap);
			if (!e)
				e = path_slots(r, &cn->ack[q], slot_of, &cap);
		}
		if (!e)
			e = path_slots(r, &cn->cts, slot_of, &cap);
	}
	for (uint32_t i = 0; i < r->n_chans; i++) /* (the scratch back to all 0) */
		slot_of[r->chans[i]] = 0;
	r->chan_bytes = e ? NULL : calloc(r->n_chans + 1, sizeof(*r->chan_bytes));
	r->chan_pkts = e ? NULL : calloc(r->n_chans + 1, sizeof(*r->chan_pkts));
	return r->chan_bytes && r->chan_pkts ? 0 : -ENOMEM;
}

static void fr_free(struct fr *r)
{
	for (uint32_t k = 0; r->c && k < r->nconns; k++) {
		free(r->c[k].x);
		free(r->c[k].flags);
		free(r->c[k].parts);
		free(r->c[k].acks);
		free(r->c[k].data);
		free(r->c[k].ack);
		free(r->c[k].ack_lat);
		free(r->c[k].lead);
		for (uint32_t q = 0; r->c[k].sq && q < r->nqps; q++)
			free(r->c[k].sq[q].seq);
		free(r->c[k].sq);
	}
	free(r->sent);
	fl_heap_free(&r->tmr);
	free(r->tmr_ck);
	free(r->tmr_free);
	for (uint32_t g = 0; r->g && g < r->rules.ngroups; g++)
		free(r->g[g].conns);
	free(r->c);
	free(r->g);
	free(r->dirty_c);
	free(r->dirty_g);
	fl_heap_free(&r->nvl);
	free(r->nvl_seq);
	free(r->nvl_free);
	free(r->chans);
	free(r->chan_bytes);
	free(r->chan_pkts);
	free(r->iter_ns);
}

/* ------------------------------------------------------------------ */
/* NVLink: transfers timed by nc_nvlink, their ends on flow/'s indexed heap */

/* A connection has at most window NVLink transfers in flight (sender_step):
 * transfer s of connection k has the heap id k x window + s mod window. */
static uint32_t nvl_id(const struct fr *r, uint32_t k, uint32_t s)
{
	return k * r->rules.window + s % r->rules.window;
}

/* What a GPU's egress carries (ne_coll_nvlink.c's egress kinds). */
enum fr_egress {
	FR_EG_HOP,   /* an NVLink step */
	FR_EG_PXN,   /* PXN's NVLink copy to the GPU of the channel's NIC */
	FR_EG_WRITE, /* a network transfer's lines written at LL's or LL128's cap */
};

/*
 * As ne_coll's egress_push: the GPU's egress carries one transfer at a time,
 * for the longer of its wire bytes at the NVLink rate (a step or PXN's copy)
 * and its data bytes at LL's or LL128's cap; an NVLink step ends step_nvl
 * later, PXN's copy nvlink_lat_ns later, a write at once; then a network
 * transfer may be posted.
 */
static void egress_post(struct fr *r, uint32_t k, uint32_t s, uint64_t now, enum fr_egress kind)
{
	struct fr_conn *cn = &r->c[k];
	struct nc_nvlink_params wire = {.nvlink_Bps = r->cfg->nvlink_Bps}, cap = {.nvlink_Bps = r->cap_Bps};
	uint64_t bytes_ns = 0, cap_ns = 0, *free_at = &r->nvl_free[cn->info.src];
	uint64_t start = *free_at > now ? *free_at : now;
	uint64_t lat = kind == FR_EG_HOP ? r->step_nvl : kind == FR_EG_PXN ? r->cfg->nvlink_lat_ns : 0;

	if (kind != FR_EG_WRITE)
		(void)nc_nvlink_xfer_ns(&wire, wire_len(r, k, s), &bytes_ns);
	if (r->cap_Bps)
		(void)nc_nvlink_xfer_ns(&cap, cn->x[s].len, &cap_ns);
	*free_at = start + (cap_ns > bytes_ns ? cap_ns : bytes_ns);
	r->nvl_seq[nvl_id(r, k, s)] = s;
	if (fl_heap_set(&r->nvl, nvl_id(r, k, s), *free_at + lat) < 0 && !r->err)
		r->err = -ENOMEM;
	r->st->nvlink_xfers += kind == FR_EG_HOP;
	r->st->pxn_copies += kind == FR_EG_PXN;
}

/* ------------------------------------------------------------------ */
/* The steps (ne_coll_run.c's grant_step and sender_step) */

static void grant_step(struct fr *r, uint32_t gi)
{
	struct fr_group *g = &r->g[gi];
	uint32_t w = r->rules.window;
	uint64_t fifo = r->cfg->model == NE_COLL_MODEL_NCCL ? NE_COLL_NCCL_FIFO_ENTRY : 0;

	if (!r->rules.cts)
		return;
	while (g->granted < w) {
		bool found = false;

		for (uint32_t i = 0; i < g->n && !found; i++) {
			uint32_t pos = (g->rr_next + i) % g->n, k = g->conns[pos];
			struct fr_conn *cn = &r->c[k];
			uint32_t s = cn->grant_next;

			if (s >= cn->info.ntransfers || cn->plan.nvl)
				continue;
			if (s >= w && !(cn->flags[s - w] & FR_RECV_DONE))
				continue;
			if (fifo) /* nccl's 64 B FIFO entry takes bandwidth: a flow */
				start_flow(r, &cn->cts, fifo, 1, cookie(FR_CTS_FLOW, k, 0, s));
			else
				start_timer(r, &cn->cts, cn->cts_lat, cookie(FR_CTS_FLOW, k, 0, s));
			cn->grant_next++;
			g->granted++;
			g->rr_next = (pos + 1) % g->n;
			found = true;
		}
		if (!found)
			return;
	}
}

/* Part q of transfer s of connection k, b bytes, starts now (a 0-byte one leaves the QP free). */
static void part_start(struct fr *r, uint32_t k, uint32_t q, uint32_t s, uint32_t b)
{
	start_flow(r, &r->c[k].data[q], b, 1, cookie(FR_DATA, k, q, s));
	if (b) /* (a zero-length WRITE leaves a QP's busy state as it is: it ends without a last byte) */
		r->c[k].sq[q].busy = true;
	r->st->data_flows++;
	r->st->parts++;
}

/*
 * The QPs of q's class (one data path), if every one is free and sends
 * transfer s's part next (queued: at its queue's head; else: its queue
 * empty), each of b > 0 bytes: their parts would be flows on one path from
 * the same instant with the same bytes, so the same rates and ends. Returns
 * how many (the weight of their flow), or 0 when they cannot go as one.
 */
static uint32_t class_ready(const struct fr *r, uint32_t k, uint32_t q, uint32_t s, uint32_t b,
			    bool queued)
{
	const struct fr_conn *cn = &r->c[k];
	uint32_t w = 0;

	for (uint32_t m = cn->lead[q]; m < r->nqps && b; m++) {
		const struct fr_sq *sq = &cn->sq[m];

		if (cn->lead[m] != cn->lead[q])
			continue;
		if (sq->busy || (queued ? !sq->n || sq->seq[sq->head] != s : sq->n != 0) ||
		    ne_coll_xfer_qp_bytes(r->run, wire_len(r, k, s), s, m) != b)
			return 0;
		w++;
	}
	return w > 1 ? w : 0;
}

/* The parts of transfer s on q's class (class_ready said w) as one flow of weight w. */
static void class_start(struct fr *r, uint32_t k, uint32_t q, uint32_t s, uint32_t b, uint32_t w,
			bool queued)
{
	struct fr_conn *cn = &r->c[k];
	uint32_t l = cn->lead[q];

	for (uint32_t m = l; m < r->nqps; m++) {
		struct fr_sq *sq = &cn->sq[m];

		if (cn->lead[m] != l)
			continue;
		if (queued) {
			sq->head = (sq->head + 1) % sq->cap;
			sq->n--;
		}
		sq->busy = true;
	}
	start_flow(r, &cn->data[l], b, w, cookie(FR_PARTS, k, l, s));
	r->st->data_flows++;
	r->st->parts += w;
}

static void sq_push(struct fr *r, struct fr_sq *sq, uint32_t s)
{
	if (sq->n == sq->cap) {
		uint32_t cap = sq->cap ? 2 * sq->cap : 8;
		uint32_t *p = malloc(cap * sizeof(*p));

		if (!p) {
			r->err = -ENOMEM;
			return;
		}
		for (uint32_t i = 0; i < sq->n; i++)
			p[i] = sq->seq[(sq->head + i) % sq->cap];
		free(sq->seq);
		sq->seq = p;
		sq->head = 0;
		sq->cap = cap;
	}
	sq->seq[(sq->head + sq->n++) % sq->cap] = s;
}

/* QP q of connection k is free: it starts its waiting parts (with its class where it can). */
static void sq_run(struct fr *r, uint32_t k, uint32_t q)
{
	struct fr_sq *sq = &r->c[k].sq[q];

	while (!sq->busy && sq->n) {
		uint32_t s = sq->seq[sq->head], b = ne_coll_xfer_qp_bytes(r->run, wire_len(r, k, s), s, q);
		uint32_t w = class_ready(r, k, q, s, b, true);

		if (w) {
			class_start(r, k, q, s, b, w, true);
			continue;
		}
		sq->head = (sq->head + 1) % sq->cap;
		sq->n--;
		part_start(r, k, q, s, b);
	}
}

/* The QPs a data flow's cookie names into qs[]: its QP alone, or (FR_PARTS) its class. Returns how many. */
static uint32_t flow_qps(const struct fr *r, uint64_t ck, uint8_t *qs)
{
	uint32_t k = (uint32_t)(ck >> 32) & 0x3FFFFFFFu, q = (uint32_t)(ck >> FR_SEQ_BITS) & 0xFFu, n = 0;

	if (ck >> 62 != FR_PARTS) {
		qs[0] = (uint8_t)q;
		return 1;
	}
	for (uint32_t m = q; m < r->nqps; m++)
		if (r->c[k].lead[m] == q)
			qs[n++] = (uint8_t)m;
	return n;
}

/* The parts whose last byte went: their QPs are free (all of them first, so a
 * class whose parts ended together goes on as one), then start their next. */
static void sq_next(struct fr *r)
{
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < r->n_sent; i++) {
			uint64_t ck = r->sent[i];
			uint32_t k = (uint32_t)(ck >> 32) & 0x3FFFFFFFu;
			uint8_t qs[256];

			for (uint32_t j = 0, n = flow_qps(r, ck, qs); j < n; j++) {
				if (pass == 0)
					r->c[k].sq[qs[j]].busy = false;
				else
					sq_run(r, k, qs[j]);
			}
		}
	r->n_sent = 0;
}

/* Transfer s of connection k as flows, one per QP that carries a part. */
static void post_msg(struct fr *r, uint32_t k, uint32_t s)
{
	struct fr_conn *cn = &r->c[k];
	/* nccl's split posts a zero-length WRITE on every QP past the end; rocelab skips them */
	bool all = r->cfg->model == NE_COLL_MODEL_NCCL && r->cfg->qp_mode != NE_COLL_QP_RR;
	uint16_t n = 0;
	bool started[256] = {false}; /* by its class's flow */

	for (uint32_t q = 0; q < r->nqps; q++) {
		uint32_t b = ne_coll_xfer_qp_bytes(r->run, wire_len(r, k, s), s, q), w;

		if (b == 0 && !all)
			continue;
		n++;
		if (started[q])
			continue;
		if (b && (cn->sq[q].busy || cn->sq[q].n)) {
			sq_push(r, &cn->sq[q], s);
		} else if ((w = class_ready(r, k, q, s, b, false)) != 0) {
			class_start(r, k, q, s, b, w, false);
			for (uint32_t m = q; m < r->nqps; m++)
				if (cn->lead[m] == cn->lead[q])
					started[m] = true;
		} else {
			part_start(r, k, q, s, b);
		}
	}
	cn->parts[s] = cn->acks[s] = n;
}

/* Whether every transfer x sends the data of has arrived (a tree node: each child's). */
static bool deps_in(const struct fr *r, const struct ne_coll_xfer_info *x)
{
	for (uint32_t i = 0; i < NE_COLL_MAX_DEPS; i++)
		if (x->dep_conn[i] >= 0 && !(r->c[x->dep_conn[i]].flags[x->dep_seq[i]] & FR_RECV_DONE))
			return false;
	return true;
}

static void sender_step(struct fr *r, uint32_t k, uint64_t now)
{
	struct fr_conn *cn = &r->c[k];
	uint32_t w = r->rules.window;

	while (cn->send_next < cn->info.ntransfers) {
		uint32_t s = cn->send_next;
		const struct ne_coll_xfer_info *x = &cn->x[s];
		bool data_in = deps_in(r, x);
		bool cts_in = !r->rules.cts || cn->plan.nvl || (cn->flags[s] & FR_CTS);
		/* (PXN's copy and LL's or LL128's write at the cap need no grant: they
		 * overlap the wait) */
		bool pxn = cn->info.src_nic != cn->info.src;
		bool staged = (r->cap_Bps || pxn) && !cn->plan.nvl;

		if (!cts_in && !staged)
			return;
		if ((r->rules.slot_needs_ack || cn->plan.nvl) && s >= w &&
		    !(cn->flags[s - w] & FR_SEND_DONE))
			return;
		if (!data_in)
			return;
		if (staged && !(cn->flags[s] & FR_WRITTEN)) {
			if (!(cn->flags[s] & FR_WRITE_SENT))
				egress_post(r, k, s, now, pxn ? FR_EG_PXN : FR_EG_WRITE);
			cn->flags[s] |= FR_WRITE_SENT;
			return;
		}
		if (!cts_in)
			return;
		if (cn->plan.nvl)
			egress_post(r, k, s, now, FR_EG_HOP);
		else
			post_msg(r, k, s);
		cn->send_next++;
	}
}

static void run_marked(struct fr *r, uint64_t now)
{
	while (r->n_dirty_g || r->n_dirty_c) {
		while (r->n_dirty_g) {
			uint32_t g = r->dirty_g[--r->n_dirty_g];

			r->g[g].dirty = false;
			grant_step(r, g);
		}
		while (r->n_dirty_c) {
			uint32_t k = r->dirty_c[--r->n_dirty_c];

			r->c[k].dirty = false;
			sender_step(r, k, now);
		}
	}
}

/* Transfer s of connection k arrived whole (ne_coll_consume). */
static void consume(struct fr *r, uint32_t k, uint32_t s)
{
	struct fr_conn *cn = &r->c[k];

	cn->flags[s] |= FR_RECV_DONE;
	r->recv_left--;
	if (r->rules.cts && !cn->plan.nvl)
		r->g[cn->plan.group].granted--;
	if (cn->plan.nvl)
		mark_conn(r, k);
	mark_group(r, cn->plan.group);
	for (uint32_t i = 0; i < NE_COLL_MAX_DEPS; i++)
		if (cn->plan.downstream[i] >= 0)
			mark_conn(r, (uint32_t)cn->plan.downstream[i]);
}

static void send_done(struct fr *r, uint32_t k, uint32_t s)
{
	r->c[k].flags[s] |= FR_SEND_DONE;
	r->send_left--;
	mark_conn(r, k);
}

/* (fr_delivered: dp_flowrun_priv.h) */
void fr_delivered(struct fr *r, uint64_t ck)
{
	unsigned kind = (unsigned)(ck >> 62);
	uint32_t k = (uint32_t)(ck >> 32) & 0x3FFFFFFFu;
	uint32_t s = (uint32_t)ck & (FR_MAX_SEQ - 1);
	struct fr_conn *cn = &r->c[k];
	uint8_t qs[256];

	switch (kind) {
	case FR_DATA: /* the receiver's NIC ACKs each WQE's last packet */
	case FR_PARTS:
		for (uint32_t j = 0, n = flow_qps(r, ck, qs); j < n; j++) {
			start_timer(r, &cn->ack[qs[j]], cn->ack_lat[qs[j]], cookie(FR_ACK, k, qs[j], s));
			if (--cn->parts[s] != 0)
				continue;
			if (r->step_net) /* (ne_coll_net_received) */
				start_timer(r, NULL, r->step_net, cookie(FR_CTS_FLOW, k, FR_STEP_QP, s));
			else
				consume(r, k, s);
		}
		break;
	case FR_ACK:
		if (--cn->acks[s] == 0)
			send_done(r, k, s);
		break;
	default: /* a grant, or a network step's hwLat over */
		if ((uint32_t)(ck >> FR_SEQ_BITS & 0xFFu) == FR_STEP_QP) {
			consume(r, k, s);
			break;
		}
		cn->flags[s] |= FR_CTS;
		mark_conn(r, k);
		break;
	}
}

/* An iteration's state back to its start: the transfers' flags, the
 * counters and the round-robin places (each iteration runs the same plan). */
static void iter_reset(struct fr *r)
{
	for (uint32_t k = 0; k < r->nconns; k++) {
		struct fr_conn *cn = &r->c[k];
		uint32_t n = cn->info.ntransfers;

		memset(cn->flags, 0, n);
		cn->send_next = cn->grant_next = 0;
		r->recv_left += n;
		r->send_left += n;
	}
	for (uint32_t g = 0; g < r->rules.ngroups; g++)
		r->g[g].rr_next = r->g[g].granted = 0;
}

/* The current iteration ended at t: its time; then the next one's start, or the end. */
static void iter_end(struct fr *r, uint64_t t)
{
	/* (launch=: the packet engine's ranks wait it out before each iteration) */
	r->iter_ns[r->iter++] = r->launch + (t - r->t0);
	r->in_iter = false;
	if (r->iter == r->rules.iters) {
		r->over = true;
		return;
	}
	iter_reset(r);
	r->next_start = t + r->launch;
}

void fr_at(struct fr *r, uint64_t t)
{
	if (r->over || r->err)
		return;
	/* (after the flows of the same instant: their order only orders marks) */
	while (!fl_heap_empty(&r->tmr) && fl_heap_top(&r->tmr).key <= t) {
		uint32_t id = fl_heap_top(&r->tmr).id;

		fl_heap_del(&r->tmr, id);
		r->tmr_free[r->n_tmr_free++] = id;
		fr_delivered(r, r->tmr_ck[id]);
	}
	sq_next(r);
	while (!fl_heap_empty(&r->nvl) && fl_heap_top(&r->nvl).key <= t) {
		uint32_t id = fl_heap_top(&r->nvl).id, k = id / r->rules.window;

		fl_heap_del(&r->nvl, id);
		if (!r->c[k].plan.nvl) { /* a network transfer written at the cap: it may be posted */
			r->c[k].flags[r->nvl_seq[id]] |= FR_WRITTEN;
			mark_conn(r, k);
			continue;
		}
		send_done(r, k, r->nvl_seq[id]);
		consume(r, k, r->nvl_seq[id]);
	}
	if (r->next_start <= t) { /* an iteration starts: every connection and group may go */
		r->next_start = FL_TIME_INF;
		r->t0 = t;
		r->in_iter = true;
		for (uint32_t k = 0; k < r->nconns; k++)
			mark_conn(r, k);
		for (uint32_t g = 0; g < r->rules.ngroups; g++)
			mark_group(r, g);
	}
	run_marked(r, t);
	if (!r->err && r->in_iter && !r->recv_left && !r->send_left)
		iter_end(r, t);
}

uint64_t fr_next_ns(const struct fr *r)
{
	uint64_t t = r->next_start;

	if (r->over || r->err)
		return FL_TIME_INF;
	if (!fl_heap_empty(&r->nvl) && fl_heap_top(&r->nvl).key < t)
		t = fl_heap_top(&r->nvl).key;
	if (!fl_heap_empty(&r->tmr) && fl_heap_top(&r->tmr).key < t)
		t = fl_heap_top(&r->tmr).key;
	return t;
}

void fr_set_hid(struct fr *r, uint32_t hid)
{
	r->hid = hid;
}

uint32_t fr_hid(const struct fr *r)
{
	return r->hid;
}

int fr_state(const struct fr *r)
{
	return r->err ? r->err : r->over ? 1 : 0;
}

static int fr_setup(struct fr *r, struct ne_coll *run, struct ne_nic *const *nics,
		    const uint32_t *host_of, char *why, size_t cap)
{
	int e;

	ne_coll_rules(run, &r->rules);
	r->nconns = ne_coll_num_conns(run);
	r->c = calloc(r->nconns + 1, sizeof(*r->c));
	r->dirty_c = calloc(r->nconns + 1, sizeof(*r->dirty_c));
	r->dirty_g = calloc(r->rules.ngroups + 1, sizeof(*r->dirty_g));
	r->nvl_seq = calloc((size_t)r->nconns * r->rules.window + 1, sizeof(*r->nvl_seq));
	r->nvl_free = calloc(r->cfg->nranks, sizeof(*r->nvl_free));
	if (!r->c || !r->dirty_c || !r->dirty_g || !r->nvl_seq || !r->nvl_free ||
	    fl_heap_init(&r->nvl, r->nconns * r->rules.window + 1))
		return -ENOMEM;
	e = 0;
	for (uint32_t k = 0; k < r->nconns && !e; k++) {
		e = conn_setup(r, run, k);
		if (!e && !r->c[k].plan.nvl)
			e = conn_paths(r, &r->c[k], nics, host_of, why, cap);
	}
	if (!e)
		e = chans_setup(r);
	if (!e)
		e = groups_setup(r);
	return e;
}

void fr_result(struct fr *r, struct fr_out *out)
{
	*out = (struct fr_out){.iter_ns = r->iter_ns, .iters = r->rules.iters, .start_ns = r->now,
			       .chans = r->chans, .n_chans = r->n_chans, .chan_bytes = r->chan_bytes,
			       .chan_pkts = r->chan_pkts, .st = r->st};
}

struct ne_coll *fr_run(const struct fr *r)
{
	return r->run;
}

void fr_destroy(struct fr *r)
{
	if (r) {
		fr_free(r);
		free(r);
	}
}

struct fr *fr_create(struct fs_shared *sh, struct ne_coll *run, const struct ne_coll_config *cfg,
		     struct ne_nic *const *nics, const uint32_t *host_of, uint64_t now_ns, int *err,
		     char *why, size_t cap)
{
	struct fr *r = calloc(1, sizeof(*r));
	int e;

	if (cap)
		why[0] = '\0';
	if (!r) {
		*err = -ENOMEM;
		snprintf(why, cap, "out of memory");
		return NULL;
	}
	*r = (struct fr){.f = sh->f, .sh = sh, .run = run, .cfg = cfg, .now = now_ns,
			 .launch = ne_coll_launch_ns(run), .next_start = now_ns};
	r->st = &r->st_own;
	r->next_start += r->launch;
	ne_coll_step_lat(run, &r->step_nvl, &r->step_net);
	r->cap_Bps = ne_coll_proto_cap_Bps(run);
	e = fr_setup(r, run, nics, host_of, why, cap);
	if (!e) {
		r->iter_ns = calloc(r->rules.iters + 1, sizeof(*r->iter_ns));
		e = r->iter_ns ? 0 : -ENOMEM;
	}
	if (!e && r->rules.iters == 0)
		e = -EINVAL;
	if (e) {
		fr_why(e, why, cap);
		fr_destroy(r);
		*err = e;
		return NULL;
	}
	return r;
}

void fr_why(int e, char *why, size_t cap)
{
	if (e == -EDEADLK)
		snprintf(why, cap, "no flow can progress");
	else if (e == -E2BIG)
		snprintf(why, cap, "a connection has more than %u transfers, or more than 255 QPs", FR_MAX_SEQ - 1);
	else if (e < 0 && cap && why[0] == '\0') /* (a path's own reason stays) */
		snprintf(why, cap, "%s", e == -ENOMEM ? "out of memory" : strerror(-e));
}
