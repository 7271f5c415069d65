/* SPDX-License-Identifier: BSD-3-Clause */
#include "ne_fab.h"

#include <stdint.h>

#include <stdlib.h>
#include <string.h>

#include "rl_icrc.h"
#include "rl_parse.h"

enum { EV_AT_SWITCH = 0, EV_PORT_FREE, EV_AT_NIC };

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n);

	if (!q)
		abort();
	return q;
}

void fab_init(struct fab *f, const struct ne_coll_config *cfg, uint64_t rate_bps, uint64_t delay_ns)
{
	memset(f, 0, sizeof(*f));
	f->n = cfg->nranks;
	f->rate_bps = rate_bps;
	f->delay_ns = delay_ns;
	f->hi_dscp = cfg->ctrl_dscp;
	f->data_dscp = cfg->data_dscp;
	f->keep_log = true;
	f->verify_icrc = true;
	f->nic = calloc(f->n, sizeof(*f->nic));
	f->port = calloc(f->n, sizeof(*f->port));
	f->inflight = calloc(f->n, sizeof(*f->inflight));
	f->max_inflight = calloc(f->n, sizeof(*f->max_inflight));
	if (!f->nic || !f->port || !f->inflight || !f->max_inflight)
		abort();
	for (uint32_t i = 0; i < f->n; i++) {
		struct ne_nic_config nc;

		ne_coll_nic_config(cfg, i, rate_bps, &nc);
		f->nic[i] = ne_nic_create(&nc);
		if (!f->nic[i])
			abort();
	}
}

void fab_free(struct fab *f)
{
	ne_coll_destroy(f->coll);
	for (uint32_t i = 0; i < f->n; i++) {
		ne_nic_destroy(f->nic[i]);
		free(f->port[i].q[0].v);
		free(f->port[i].q[1].v);
	}
	for (size_t i = 0; i < f->nfr; i++)
		free(f->fr[i].data);
	free(f->fr);
	free(f->free_fr);
	free(f->heap);
	free(f->log);
	free(f->nic);
	free(f->port);
	free(f->inflight);
	free(f->max_inflight);
	memset(f, 0, sizeof(*f));
}

struct ne_coll *fab_coll(struct fab *f, const struct ne_coll_config *cfg)
{
	int err = 0;

	f->coll = ne_coll_create(cfg, f->nic, &err);
	return f->coll;
}

/* ---- event heap ---- */
static bool ev_less(const struct fab_ev *a, const struct fab_ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void ev_push(struct fab *f, uint64_t t, uint32_t type, uint32_t id)
{
	size_t i;

	if (f->nheap == f->capheap) {
		f->capheap = f->capheap ? 2 * f->capheap : 1024;
		f->heap = xrealloc(f->heap, f->capheap * sizeof(*f->heap));
	}
	i = f->nheap++;
	f->heap[i] = (struct fab_ev){t, f->seq++, type, id};
	while (i && ev_less(&f->heap[i], &f->heap[(i - 1) / 2])) {
		struct fab_ev tmp = f->heap[i];

		f->heap[i] = f->heap[(i - 1) / 2];
		f->heap[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

static struct fab_ev ev_pop(struct fab *f)
{
	struct fab_ev top = f->heap[0];
	size_t i = 0;

	f->heap[0] = f->heap[--f->nheap];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < f->nheap && ev_less(&f->heap[l], &f->heap[m]))
			m = l;
		if (r < f->nheap && ev_less(&f->heap[r], &f->heap[m]))
			m = r;
		if (m == i)
			break;
		struct fab_ev tmp = f->heap[i];

		f->heap[i] = f->heap[m];
		f->heap[m] = tmp;
		i = m;
	}
	return top;
}

/* ---- fifos ---- */
static void fifo_push(struct fab_fifo *q, uint32_t v)
{
	if (q->n == q->cap) {
		size_t nc = q->cap ? 2 * q->cap : 64;
		uint32_t *nv = malloc(nc * sizeof(*nv));

		if (!nv)
			abort();
		for (size_t i = 0; i < q->n; i++)
			nv[i] = q->v[(q->head + i) % q->cap];
		free(q->v);
		q->v = nv;
		q->cap = nc;
		q->head = 0;
	}
	q->v[(q->head + q->n) % q->cap] = v;
	q->n++;
}

static uint32_t fifo_pop(struct fab_fifo *q)
{
	uint32_t v = q->v[q->head];

	q->head = (q->head + 1) % q->cap;
	q->n--;
	return v;
}

static uint64_t ser_ns(const struct fab *f, uint32_t len)
{
	uint64_t bits = (uint64_t)(len + NE_WIRE_OVERHEAD) * 8;

	if (!f->rate_bps)
		return 0;
	return (bits * 1000000000ull + f->rate_bps - 1) / f->rate_bps;
}

static uint32_t frame_alloc(struct fab *f, const uint8_t *buf, uint32_t len)
{
	uint32_t id;

	if (f->nfree) {
		id = f->free_fr[--f->nfree];
	} else {
		if (f->nfr == f->capfr) {
			f->capfr = f->capfr ? 2 * f->capfr : 256;
			f->fr = xrealloc(f->fr, f->capfr * sizeof(*f->fr));
			f->free_fr = xrealloc(f->free_fr, f->capfr * sizeof(*f->free_fr));
		}
		id = (uint32_t)f->nfr++;
		f->fr[id].data = malloc(NE_MAX_FRAME);
		if (!f->fr[id].data)
			abort();
	}
	memcpy(f->fr[id].data, buf, len);
	f->fr[id].len = len;
	return id;
}

static void port_start(struct fab *f, uint32_t p)
{
	struct fab_port *pt = &f->port[p];
	struct fab_fifo *q = pt->q[0].n ? &pt->q[0] : &pt->q[1];
	uint32_t id;
	uint64_t s;

	if (pt->busy || !q->n)
		return;
	id = fifo_pop(q);
	s = ser_ns(f, f->fr[id].len);
	pt->busy = true;
	ev_push(f, f->now + s, EV_PORT_FREE, p);
	ev_push(f, f->now + s + f->delay_ns, EV_AT_NIC, id);
}

static uint32_t rank_of_mac(const uint8_t *mac)
{
	return ((uint32_t)mac[4] << 8 | mac[5]) - 1;
}

static void rec_add(struct fab *f, const struct fab_rec *r)
{
	if (f->nlog == f->caplog) {
		f->caplog = f->caplog ? 2 * f->caplog : 4096;
		f->log = xrealloc(f->log, f->caplog * sizeof(*f->log));
	}
	f->log[f->nlog++] = *r;
}

static void emit(struct fab *f, uint32_t from)
{
	uint8_t buf[NE_MAX_FRAME];
	size_t len;

	while (ne_nic_poll_tx(f->nic[from], f->now, buf, sizeof(buf), &len) == 1) {
		struct rl_pkt p;
		struct fab_rec r;
		uint32_t id;
		bool drop = false;

		memset(&r, 0, sizeof(r));
		f->frames++;
		if (rl_parse(buf, len, &p) != RL_PARSE_OK || !p.is_roce ||
		    (f->verify_icrc && !rl_icrc_verify(buf, &p))) {
			f->bad_frames++;
			continue;
		}
		r.t_tx = f->now;
		r.src = from;
		r.dst = rank_of_mac(p.dmac);
		r.opcode = p.bth.opcode;
		r.dscp = p.dscp;
		r.sport = p.sport;
		r.dqpn = p.bth.dqpn;
		r.psn = p.bth.psn;
		r.has_imm = (p.bth.ext & RL_EXT_IMMDT) != 0;
		r.imm = p.bth.immdt;
		r.payload_len = p.payload_len;
		r.len = (uint32_t)len;
		if (r.dst >= f->n) {
			f->bad_frames++;
			continue;
		}
		rec_add(f, &r);
		if (f->drop && f->drop(f, f->nlog - 1, f->drop_arg))
			drop = true;
		if (r.dscp == f->data_dscp && r.payload_len && r.opcode <= RL_OP_WRITE_ONLY_IMM) {
			f->inflight[r.dst] += r.payload_len;
			if (f->inflight[r.dst] > f->max_inflight[r.dst])
				f->max_inflight[r.dst] = f->inflight[r.dst];
		}
		if (drop) {
			f->log[f->nlog - 1].dropped = true;
			if (r.dscp == f->data_dscp && r.payload_len && r.opcode <= RL_OP_WRITE_ONLY_IMM)
				f->inflight[r.dst] -= r.payload_len;
			if (!f->keep_log)
				f->nlog--;
			continue;
		}
		id = frame_alloc(f, buf, (uint32_t)len);
		f->fr[id].dst = r.dst;
		f->fr[id].rec = f->keep_log ? f->nlog - 1 : SIZE_MAX;
		f->fr[id].data_payload =
			(r.dscp == f->data_dscp && r.opcode <= RL_OP_WRITE_ONLY_IMM) ? r.payload_len : 0;
		if (!f->keep_log)
			f->nlog--;
		ev_push(f, f->now + ser_ns(f, (uint32_t)len) + f->delay_ns, EV_AT_SWITCH, id);
	}
}

static void handle(struct fab *f, const struct fab_ev *e)
{
	struct fab_frame *fr;

	switch (e->type) {
	case EV_AT_SWITCH:
		fr = &f->fr[e->id];
		{
			uint8_t dscp = (uint8_t)(fr->data[15] >> 2);

			fifo_push(&f->port[fr->dst].q[dscp == f->hi_dscp ? 0 : 1], e->id);
		}
		port_start(f, fr->dst);
		break;
	case EV_PORT_FREE:
		f->port[e->id].busy = false;
		port_start(f, e->id);
		break;
	case EV_AT_NIC:
		fr = &f->fr[e->id];
		{
			int st = ne_nic_rx(f->nic[fr->dst], fr->data, fr->len, f->now);

			f->inflight[fr->dst] -= fr->data_payload;
			if (fr->rec != SIZE_MAX) {
				f->log[fr->rec].t_rx = f->now;
				f->log[fr->rec].rx_status = st;
			}
		}
		f->free_fr[f->nfree++] = e->id;
		break;
	}
}

/* The counters a poll that does anything moves. */
static uint64_t coll_work(const struct ne_coll *c)
{
	struct ne_coll_stats st;

	ne_coll_get_stats(c, &st);
	return st.cqes_polled + st.cq_polls + st.rank_visits + st.conn_steps + st.group_steps +
	       st.data_wrs + st.cts_sent + st.wqes_posted + st.transfers_done + ne_coll_iters_done(c);
}

/* ne_coll_poll at f->now, counting the polls ne_coll_quiet() called idle and
 * whether they were. */
static int poll_one(struct fab *f, struct ne_coll *c)
{
	bool quiet = ne_coll_quiet(c);
	uint64_t before = quiet ? coll_work(c) : 0;
	int rc = ne_coll_poll(c, f->now);

	if (quiet) {
		f->quiet_polls++;
		if (rc != 0 || coll_work(c) != before)
			f->quiet_busy++;
	}
	return rc;
}

/* The collective, or with lanes each lane in turn. */
static int poll_coll(struct fab *f)
{
	int rc = 0;

	for (uint32_t l = 0; l < f->nlanes && rc >= 0; l++)
		rc = poll_one(f, ne_coll_lane(f->coll, l));
	return f->nlanes ? rc : poll_one(f, f->coll);
}

/* With lanes: the collective ends once every lane is done (ne_coll_lanes_end). */
static bool coll_done(struct fab *f)
{
	for (uint32_t l = 0; l < f->nlanes && !ne_coll_done(f->coll); l++)
		if (!ne_coll_done(ne_coll_lane(f->coll, l)))
			return false;
	if (f->nlanes && !ne_coll_done(f->coll))
		return ne_coll_lanes_end(f->coll) == 0;
	return ne_coll_done(f->coll);
}

static uint64_t coll_next_ns(const struct fab *f)
{
	uint64_t t = f->nlanes ? UINT64_MAX : ne_coll_next_event_ns(f->coll);

	for (uint32_t l = 0; l < f->nlanes; l++) {
		uint64_t e = ne_coll_next_event_ns(ne_coll_lane(f->coll, l));
		t = e < t ? e : t;
	}
	return t;
}

bool fab_run(struct fab *f, uint64_t until)
{
	while (!coll_done(f)) {
		uint64_t t = f->nheap ? f->heap[0].t : UINT64_MAX, e;

		for (uint32_t i = 0; i < f->n; i++) {
			e = ne_nic_next_event_ns(f->nic[i]);
			if (e < t)
				t = e;
		}
		e = coll_next_ns(f);
		if (e < t)
			t = e;
		if (t == UINT64_MAX || (t > until && t > f->now))
			return false;
		if (t > f->now)
			f->now = t;
		if (++f->loops > 200000000ull)
			return false;
		while (f->nheap && f->heap[0].t <= f->now) {
			struct fab_ev ev = ev_pop(f);

			handle(f, &ev);
		}
		if (poll_coll(f) < 0)
			return false;
		for (uint32_t i = 0; i < f->n; i++)
			emit(f, i);
	}
	return true;
}
