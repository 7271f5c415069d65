/* SPDX-License-Identifier: BSD-3-Clause */
#include "ne_sim.h"

#include <stdlib.h>
#include <string.h>

#include "rl_icrc.h"

void sim_config(struct ne_nic_config *c, int i, uint64_t rate)
{
	ne_nic_config_default(c);
	c->mac[0] = 0x02;
	c->mac[5] = (uint8_t)(i + 1);
	c->ipv4 = 0x0A000001u + (uint32_t)i;
	c->line_rate_bps = rate;
	c->ip_id = (uint16_t)(0x1000 * (i + 1));
}

void sim_init_cfg(struct sim *s, const struct ne_nic_config *c0, const struct ne_nic_config *c1,
		  uint64_t delay_ns)
{
	memset(s, 0, sizeof(*s));
	s->nic[0] = ne_nic_create(c0);
	s->nic[1] = ne_nic_create(c1);
	s->delay_ns = delay_ns;
	s->dup_gap_ns = 1000;
}

void sim_init(struct sim *s, uint64_t rate_bps, uint64_t delay_ns)
{
	struct ne_nic_config c0, c1;

	sim_config(&c0, 0, rate_bps);
	sim_config(&c1, 1, rate_bps);
	sim_init_cfg(s, &c0, &c1, delay_ns);
}

uint32_t sim_reap(struct ne_cq *cq, uint64_t *ok)
{
	struct ne_wc wc[16];
	uint32_t failed = 0;
	int n;

	while ((n = ne_cq_poll(cq, wc, 16)) > 0)
		for (int k = 0; k < n; k++) {
			if (wc[k].status == NE_WC_SUCCESS)
				(*ok)++;
			else
				failed++;
		}
	return failed;
}

bool sim_all_done(struct sim *s, void *arg)
{
	struct sim_done *d = arg;

	(void)s;
	for (int i = 0; i < 2; i++)
		if (d->cq[i])
			d->failed += sim_reap(d->cq[i], &d->got);
	return d->got == d->want;
}

void sim_free(struct sim *s)
{
	for (size_t i = 0; i < s->nq; i++)
		free(s->q[i].data);
	for (int i = 0; i < 2; i++)
		if (s->has_held[i])
			free(s->held[i].data);
	free(s->q);
	free(s->log);
	ne_nic_destroy(s->nic[0]);
	ne_nic_destroy(s->nic[1]);
}

void sim_fill(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 12345u;

	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

bool sim_decode(const uint8_t *frame, size_t len, struct sim_rec *r)
{
	struct rl_pkt p;

	memset(r, 0, sizeof(*r));
	if (rl_parse(frame, len, &p) != RL_PARSE_OK || !p.is_roce)
		return false;
	r->opcode = p.bth.opcode;
	r->psn = p.bth.psn;
	r->ackreq = p.bth.ackreq;
	r->syndrome = (p.bth.ext & RL_EXT_AETH) ? p.bth.aeth_syndrome : 0;
	r->msn = p.bth.aeth_msn;
	r->reth_va = p.bth.reth_va;
	r->reth_len = p.bth.reth_dmalen;
	r->payload_len = p.payload_len;
	r->len = (uint32_t)len;
	return rl_icrc_verify(frame, &p);
}

static void push(struct sim *s, int to, uint64_t at, const uint8_t *data, uint32_t len)
{
	struct sim_msg *m;

	if (s->nq == s->capq) {
		s->capq = s->capq ? 2 * s->capq : 256;
		s->q = realloc(s->q, s->capq * sizeof(*s->q));
	}
	m = &s->q[s->nq++];
	m->at = at;
	m->seq = s->seq++;
	m->to = to;
	m->len = len;
	m->data = malloc(len);
	memcpy(m->data, data, len);
}

static void log_rec(struct sim *s, const struct sim_rec *r)
{
	if (s->nlog == s->caplog) {
		s->caplog = s->caplog ? 2 * s->caplog : 1024;
		s->log = realloc(s->log, s->caplog * sizeof(*s->log));
	}
	s->log[s->nlog++] = *r;
}

/* index of the earliest message (by time, then sequence), or -1 */
static long first_msg(const struct sim *s)
{
	long best = -1;

	for (size_t i = 0; i < s->nq; i++)
		if (best < 0 || s->q[i].at < s->q[best].at ||
		    (s->q[i].at == s->q[best].at && s->q[i].seq < s->q[best].seq))
			best = (long)i;
	return best;
}

/* delay of the next delivered frame: delay_ns plus the seeded jitter */
static uint64_t wire_delay(struct sim *s)
{
	uint64_t x;

	if (!s->jitter_ns)
		return s->delay_ns;
	/* splitmix64 */
	x = (s->jitter_seed += 0x9E3779B97F4A7C15ull);
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	x ^= x >> 31;
	return s->delay_ns + x % (s->jitter_ns + 1);
}

static void emit(struct sim *s, int from)
{
	static uint8_t buf[NE_MAX_FRAME];
	size_t len;

	while (ne_nic_poll_tx(s->nic[from], s->now, buf, sizeof(buf), &len) == 1) {
		struct sim_rec r;
		enum sim_action a = SIM_DELIVER;
		int to = 1 - from;

		if (!sim_decode(buf, len, &r))
			s->bad_frames++;
		r.t = s->now;
		r.from = from;
		if (s->hook)
			a = s->hook(s, &r, s->hook_arg);
		r.action = a;
		log_rec(s, &r);
		switch (a) {
		case SIM_DROP:
			break;
		case SIM_HOLD:
			if (s->has_held[from]) {
				push(s, to, s->now + s->delay_ns, s->held[from].data, s->held[from].len);
				free(s->held[from].data);
			}
			s->held[from].data = malloc(len);
			memcpy(s->held[from].data, buf, len);
			s->held[from].len = (uint32_t)len;
			s->has_held[from] = true;
			break;
		case SIM_DUP:
			push(s, to, s->now + s->delay_ns, buf, (uint32_t)len);
			push(s, to, s->now + s->delay_ns + s->dup_gap_ns, buf, (uint32_t)len);
			break;
		case SIM_DELIVER:
		default:
			push(s, to, s->now + wire_delay(s), buf, (uint32_t)len);
			if (s->has_held[from]) {
				push(s, to, s->now + s->delay_ns, s->held[from].data, s->held[from].len);
				free(s->held[from].data);
				s->has_held[from] = false;
			}
			break;
		}
	}
}

bool sim_run(struct sim *s, uint64_t until, bool (*pred)(struct sim *s, void *arg), void *arg)
{
	for (long iter = 0; iter < 50000000; iter++) {
		uint64_t t = UINT64_MAX, e;
		long m = first_msg(s);

		if (pred && pred(s, arg))
			return true;
		if (m >= 0)
			t = s->q[m].at;
		for (int i = 0; i < 2; i++) {
			e = ne_nic_next_event_ns(s->nic[i]);
			if (e < t)
				t = e;
		}
		if (t == UINT64_MAX || t > until)
			return pred ? pred(s, arg) : false;
		if (t > s->now)
			s->now = t;
		while ((m = first_msg(s)) >= 0 && s->q[m].at <= s->now) {
			struct sim_msg msg = s->q[m];
			int st;

			s->q[m] = s->q[--s->nq];
			st = ne_nic_rx(s->nic[msg.to], msg.data, msg.len, s->now);
			if (st <= 0 && st > -16)
				s->rx_status_count[-st]++;
			free(msg.data);
		}
		emit(s, 0);
		emit(s, 1);
	}
	return false; /* livelock: the caller's assertion fails */
}

void sim_connect(struct sim *s, uint32_t *q0, uint32_t *q1, struct ne_cq *cq0, struct ne_cq *cq1,
		 uint32_t mtu, uint32_t psn0, uint32_t psn1, uint8_t timeout, uint8_t retry,
		 uint8_t rnr_retry)
{
	struct ne_qp_init_attr ia;
	struct ne_qp_attr a;
	uint32_t qpn[2];
	struct ne_cq *cq[2] = {cq0, cq1};
	uint32_t psn[2] = {psn0, psn1};

	for (int i = 0; i < 2; i++) {
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = ia.recv_cq = cq[i];
		ia.max_send_wr = 64;
		ia.max_recv_wr = 64;
		ne_qp_create(s->nic[i], &ia, &qpn[i]);
	}
	for (int i = 0; i < 2; i++) {
		int j = 1 - i;

		memset(&a, 0, sizeof(a));
		a.state = NE_QPS_INIT;
		ne_qp_modify(s->nic[i], qpn[i], &a, NE_QP_STATE);
		a.state = NE_QPS_RTR;
		a.dest_qpn = qpn[j];
		a.rq_psn = psn[j];
		a.path_mtu = mtu;
		a.dest_ipv4 = 0x0A000001u + (uint32_t)j;
		a.dest_mac[0] = 0x02;
		a.dest_mac[5] = (uint8_t)(j + 1);
		a.min_rnr_timer = 1;
		ne_qp_modify(s->nic[i], qpn[i], &a,
			     NE_QP_STATE | NE_QP_AV | NE_QP_PATH_MTU | NE_QP_DEST_QPN | NE_QP_RQ_PSN |
				     NE_QP_MIN_RNR_TIMER);
		a.state = NE_QPS_RTS;
		a.sq_psn = psn[i];
		a.timeout = timeout;
		a.retry_cnt = retry;
		a.rnr_retry = rnr_retry;
		ne_qp_modify(s->nic[i], qpn[i], &a,
			     NE_QP_STATE | NE_QP_SQ_PSN | NE_QP_TIMEOUT | NE_QP_RETRY_CNT | NE_QP_RNR_RETRY);
	}
	*q0 = qpn[0];
	*q1 = qpn[1];
}
