/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN in nic_emul (ne_dcqcn.c), deterministic simulated time:
 * - notification point: CE-marked requests produce CNPs (format, ICRC, at
 *   most one per QP per 50 us);
 * - reaction point: a CNP cuts the rate by (1 - alpha/2), alpha follows
 *   g = 1/256, the rate recovers with fast recovery then additive increase
 *   on the 55 us timer, the byte counter drives increases, packets are paced;
 * - off (the default): CE marks and CNPs change nothing on the wire.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ne_sim.h"
#include "rl_icrc.h"
#include "rl_parse.h"

#define G100 100000000000ull
#define US 1000ull
#define XFER (1u << 20)

/* A tiny wire: two NICs (set up with ne_sim), frames in flight for a fixed
 * delay, optional CE marking of NIC 0's requests, a log of NIC 0's request
 * departures and an FNV-1a hash of every frame (bytes and times). */
struct fr {
	uint64_t at;
	int to;
	uint32_t len;
	uint8_t d[NE_MAX_FRAME];
};

struct wire {
	struct sim s;
	uint32_t q[2];
	struct ne_cq *cq[2];
	uint8_t *mem[2];
	uint32_t key[2];
	struct fr *fl;
	size_t nfl;
	uint64_t now, delay;
	bool mark_ce;
	uint64_t hash;
	size_t ndep;
	uint64_t dep_t[1024];
	uint32_t dep_len[1024];
	int cnps_from[2];
};

static void cfg_for(struct ne_nic_config *c, int i)
{
	ne_nic_config_default(c);
	c->mac[0] = 0x02;
	c->mac[5] = (uint8_t)(i + 1);
	c->ipv4 = 0x0A000001u + (uint32_t)i;
	c->line_rate_bps = G100;
}

static void wire_init(struct wire *w, const struct ne_nic_config *c0, const struct ne_nic_config *c1)
{
	struct ne_mr_attr mr;

	memset(w, 0, sizeof(*w));
	sim_init_cfg(&w->s, c0, c1, 0);
	assert_non_null(w->s.nic[0]);
	assert_non_null(w->s.nic[1]);
	w->delay = 1 * US;
	w->hash = 1469598103934665603ull;
	w->fl = calloc(256, sizeof(*w->fl));
	assert_non_null(w->fl);
	for (int i = 0; i < 2; i++) {
		w->cq[i] = ne_cq_create(w->s.nic[i], 256);
		w->mem[i] = calloc(1, XFER);
		assert_non_null(w->mem[i]);
		memset(&mr, 0, sizeof(mr));
		mr.addr = w->mem[i];
		mr.len = XFER;
		mr.iova = 0x1000;
		mr.access = NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE;
		assert_int_equal(ne_mr_reg(w->s.nic[i], &mr, &w->key[i]), 0);
	}
	sim_fill(w->mem[0], XFER, 7);
	sim_connect(&w->s, &w->q[0], &w->q[1], w->cq[0], w->cq[1], 4096, 100, 200, 14, 7, 7);
}

static void wire_free(struct wire *w)
{
	sim_free(&w->s);
	free(w->mem[0]);
	free(w->mem[1]);
	free(w->fl);
}

static void hash_bytes(uint64_t *h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++) {
		*h ^= b[i];
		*h *= 1099511628211ull;
	}
}

static void fix_ip_csum(uint8_t *f)
{
	uint8_t *ip = f + 14;
	uint32_t s = 0;

	ip[10] = ip[11] = 0;
	for (int i = 0; i < 20; i += 2)
		s += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (s >> 16)
		s = (s & 0xFFFF) + (s >> 16);
	ip[10] = (uint8_t)(~s >> 8);
	ip[11] = (uint8_t)~s;
}

static void mark_ce(uint8_t *f)
{
	f[15] |= 3; /* ECN CE; the ICRC masks the TOS byte */
	fix_ip_csum(f);
}

static void post_write(struct wire *w, uint32_t len)
{
	struct ne_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = NE_WR_RDMA_WRITE;
	wr.send_flags = NE_SEND_SIGNALED;
	wr.local_addr = 0x1000;
	wr.length = len;
	wr.lkey = w->key[0];
	wr.remote_addr = 0x1000;
	wr.rkey = w->key[1];
	assert_int_equal(ne_post_send(w->s.nic[0], w->q[0], &wr, w->now), 0);
}

/* Run until `until` or until nothing is left to do. */
static void wire_run(struct wire *w, uint64_t until)
{
	for (int guard = 0; guard < 1000000; guard++) {
		bool did = false;
		uint64_t next = UINT64_MAX;

		for (int i = 0; i < 2; i++) {
			struct fr f;
			size_t len;

			while (ne_nic_poll_tx(w->s.nic[i], w->now, f.d, sizeof(f.d), &len) == 1) {
				struct rl_pkt p;

				assert_int_equal(rl_parse(f.d, len, &p), RL_PARSE_OK);
				hash_bytes(&w->hash, &w->now, sizeof(w->now));
				hash_bytes(&w->hash, f.d, len);
				if (p.bth.opcode == RL_OP_CNP)
					w->cnps_from[i]++;
				if (i == 0 && p.bth.opcode <= RL_OP_READ_REQUEST) {
					if (w->ndep < 1024) {
						w->dep_t[w->ndep] = w->now;
						w->dep_len[w->ndep] = (uint32_t)len;
					}
					w->ndep++;
					if (w->mark_ce)
						mark_ce(f.d);
				}
				assert_true(w->nfl < 256);
				f.at = w->now + w->delay;
				f.to = 1 - i;
				f.len = (uint32_t)len;
				w->fl[w->nfl++] = f;
				did = true;
			}
		}
		/* deliver what is due, oldest first (the list is in departure order) */
		for (size_t k = 0; k < w->nfl;) {
			if (w->fl[k].at <= w->now) {
				ne_nic_rx(w->s.nic[w->fl[k].to], w->fl[k].d, w->fl[k].len, w->now);
				memmove(&w->fl[k], &w->fl[k + 1], (w->nfl - k - 1) * sizeof(*w->fl));
				w->nfl--;
				did = true;
			} else {
				if (w->fl[k].at < next)
					next = w->fl[k].at;
				k++;
			}
		}
		if (did)
			continue;
		for (int i = 0; i < 2; i++) {
			uint64_t t = ne_nic_next_event_ns(w->s.nic[i]);

			if (t < next)
				next = t;
		}
		if (next == UINT64_MAX || next > until) {
			if (until != UINT64_MAX && until > w->now)
				w->now = until;
			return;
		}
		w->now = next > w->now ? next : w->now + 1;
	}
	fail_msg("wire_run did not settle");
}

/* A genuine CNP from a NIC whose NP is on: NIC 1 answers a CE-marked request. */
static size_t make_cnp(uint8_t *out)
{
	struct ne_nic_config c0, c1;
	struct wire *w = calloc(1, sizeof(*w));
	size_t len = 0;
	uint8_t f[NE_MAX_FRAME];

	assert_non_null(w);
	cfg_for(&c0, 0);
	cfg_for(&c1, 1);
	c1.dcqcn.np_enable = true;
	wire_init(w, &c0, &c1);
	post_write(w, 64);
	assert_int_equal(ne_nic_poll_tx(w->s.nic[0], 0, f, sizeof(f), &len), 1);
	mark_ce(f);
	ne_nic_rx(w->s.nic[1], f, len, 1000);
	for (;;) {
		struct rl_pkt p;

		assert_int_equal(ne_nic_poll_tx(w->s.nic[1], 1000, out, NE_MAX_FRAME, &len), 1);
		assert_int_equal(rl_parse(out, len, &p), RL_PARSE_OK);
		if (p.bth.opcode == RL_OP_CNP)
			break;
	}
	wire_free(w);
	free(w);
	return len;
}

/* ------------------------------------------------------------------ */

static void test_np_cnp_format_and_rate_limit(void **state)
{
	struct ne_nic_config c0, c1;
	struct wire *w = calloc(1, sizeof(*w));
	uint8_t f[NE_MAX_FRAME], out[NE_MAX_FRAME];
	size_t len, olen;
	/* CE-marked arrivals (us x 1000); CNPs expected at 0, 50, 100.5, 200 */
	static const uint64_t at[] = {0, 10000, 20000, 49900, 50000, 60000, 99900, 100500, 200000};
	static const bool want[] = {true, false, false, false, true, false, false, true, true};
	struct ne_counters c;
	struct ne_dcqcn_state st;
	int cnps = 0;

	(void)state;
	assert_non_null(w);
	cfg_for(&c0, 0);
	cfg_for(&c1, 1);
	c1.dcqcn.np_enable = true;
	wire_init(w, &c0, &c1);
	post_write(w, 64);
	assert_int_equal(ne_nic_poll_tx(w->s.nic[0], 0, f, sizeof(f), &len), 1);
	mark_ce(f);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		int got = 0;
		uint64_t t = 1000000 + at[i];

		ne_nic_rx(w->s.nic[1], f, len, t);
		/* take what NIC 1 sends within 50 ns (the link is busy ~7 ns per ACK) */
		for (uint64_t tt = t; tt <= t + 50;) {
			struct rl_pkt p;

			uint64_t nx;

			if (ne_nic_poll_tx(w->s.nic[1], tt, out, sizeof(out), &olen) != 1) {
				nx = ne_nic_next_event_ns(w->s.nic[1]);
				tt = nx > tt ? nx : tt + 1;
				continue;
			}
			assert_int_equal(rl_parse(out, olen, &p), RL_PARSE_OK);
			if (p.bth.opcode != RL_OP_CNP)
				continue;
			got++;
			/* RoCEv2 CNP: BTH opcode 0x81 to the sender's QP, PSN 0, BECN,
			 * 16 reserved bytes, a valid ICRC, DSCP 48, not ECN-capable */
			assert_int_equal(olen, 14 + 20 + 8 + 12 + 16 + 4);
			assert_int_equal(p.bth.dqpn, w->q[0]);
			assert_int_equal(p.bth.psn, 0);
			assert_int_equal(p.bth.becn, 1);
			assert_int_equal(p.dscp, 48);
			assert_int_equal(p.ecn, 0);
			assert_int_equal(p.dport, 4791);
			assert_memory_equal(p.dmac, c0.mac, 6);
			assert_int_equal(p.dst[3], 1);
			assert_int_equal(p.src[3], 2);
			assert_true(rl_icrc_verify(out, &p));
			for (int k = 0; k < 16; k++)
				assert_int_equal(out[14 + 20 + 8 + 12 + k], 0);
		}
		if (got != (want[i] ? 1 : 0))
			fail_msg("arrival %zu at %llu ns: %d CNPs", i, (unsigned long long)at[i], got);
		cnps += got;
	}
	/* an unmarked packet never makes a CNP */
	{
		uint8_t g[NE_MAX_FRAME];

		memcpy(g, f, len);
		g[15] &= (uint8_t)~3u;
		fix_ip_csum(g);
		ne_nic_rx(w->s.nic[1], g, len, 2000000);
		while (ne_nic_poll_tx(w->s.nic[1], 2000000, out, sizeof(out), &olen) == 1) {
			struct rl_pkt p;

			assert_int_equal(rl_parse(out, olen, &p), RL_PARSE_OK);
			assert_int_not_equal(p.bth.opcode, RL_OP_CNP);
		}
	}
	assert_int_equal(cnps, 4);
	ne_nic_get_counters(w->s.nic[1], &c);
	assert_int_equal(c.ecn_ce_rcvd, 9);
	assert_int_equal(c.cnp_sent, 4);
	/* NIC 0 has no reaction point: a CNP is counted and changes nothing */
	olen = make_cnp(out);
	assert_int_equal(ne_nic_rx(w->s.nic[0], out, olen, 3000000), NE_RX_CNP);
	ne_nic_get_counters(w->s.nic[0], &c);
	assert_int_equal(c.cnp_rcvd, 1);
	assert_int_equal(c.cnp_rate_cuts, 0);
	assert_int_equal(ne_qp_dcqcn_query(w->s.nic[0], w->q[0], 3000000, &st), 0);
	assert_false(st.limited);
	assert_int_equal(st.cuts, 0);
	wire_free(w);
	free(w);
}

/* a NIC 0 with the reaction point on, a CNP for its QP, helpers */
struct rp {
	struct wire *w;
	uint8_t cnp[NE_MAX_FRAME];
	size_t cnp_len;
};

static void rp_init(struct rp *r, uint64_t byte_counter, uint64_t rate_timer_ns)
{
	struct ne_nic_config c0, c1;
	struct rl_pkt p;

	r->cnp_len = make_cnp(r->cnp);
	r->w = calloc(1, sizeof(*r->w));
	assert_non_null(r->w);
	cfg_for(&c0, 0);
	cfg_for(&c1, 1);
	c0.dcqcn.rp_enable = true;
	c0.dcqcn.byte_counter = byte_counter;
	c0.dcqcn.rate_timer_ns = rate_timer_ns;
	wire_init(r->w, &c0, &c1);
	/* the CNP must name our QP (make_cnp's NIC pair has the same QPNs) */
	assert_int_equal(rl_parse(r->cnp, r->cnp_len, &p), RL_PARSE_OK);
	assert_int_equal(p.bth.dqpn, r->w->q[0]);
}

static void rp_free(struct rp *r)
{
	wire_free(r->w);
	free(r->w);
}

static void cnp_at(struct rp *r, uint64_t t)
{
	assert_int_equal(ne_nic_rx(r->w->s.nic[0], r->cnp, r->cnp_len, t), NE_RX_CNP);
}

static struct ne_dcqcn_state q_at(struct rp *r, uint64_t t)
{
	struct ne_dcqcn_state st;

	assert_int_equal(ne_qp_dcqcn_query(r->w->s.nic[0], r->w->q[0], t, &st), 0);
	return st;
}

static void test_rp_cut_factor(void **state)
{
	struct rp r;
	struct ne_dcqcn_state st;
	struct ne_counters c;
	const uint64_t t0 = 1000000;
	double a2, want;

	(void)state;
	rp_init(&r, 0, 0);
	st = q_at(&r, t0 - 1);
	assert_false(st.limited);
	assert_int_equal(st.rate_bps, G100);
	/* first CNP: alpha starts at 1, the rate halves, alpha stays 1 */
	cnp_at(&r, t0);
	st = q_at(&r, t0);
	assert_true(st.limited);
	assert_int_equal(st.rate_bps, G100 / 2);
	assert_int_equal(st.target_bps, G100);
	assert_true(st.alpha == 1.0);
	/* second at the same time: halves again, target = the rate before */
	cnp_at(&r, t0);
	st = q_at(&r, t0);
	assert_int_equal(st.rate_bps, G100 / 4);
	assert_int_equal(st.target_bps, G100 / 2);
	/* 110 us later: two fast recovery steps (37.5, 43.75 G), alpha x (1-1/256)^2 */
	st = q_at(&r, t0 + 110 * US);
	assert_int_equal(st.timer_events, 2);
	assert_int_equal(st.rate_bps, 43750000000ull);
	a2 = (255.0 / 256.0) * (255.0 / 256.0);
	assert_true(st.alpha > a2 - 1e-5 && st.alpha < a2 + 1e-5);
	/* a cut with that alpha: RC x (1 - alpha/2) */
	cnp_at(&r, t0 + 110 * US);
	st = q_at(&r, t0 + 110 * US);
	want = 43.75e9 * (1.0 - a2 / 2.0);
	assert_true((double)st.rate_bps > want * (1 - 1e-5) && (double)st.rate_bps < want * (1 + 1e-5));
	assert_int_equal(st.target_bps, 43750000000ull);
	assert_int_equal(st.timer_events, 0);
	assert_int_equal(st.cuts, 3);
	/* many CNPs: never below the 1 Mbit/s floor */
	for (int i = 0; i < 60; i++)
		cnp_at(&r, t0 + 111 * US);
	st = q_at(&r, t0 + 111 * US);
	assert_int_equal(st.rate_bps, 1000000);
	ne_nic_get_counters(r.w->s.nic[0], &c);
	assert_int_equal(c.cnp_rcvd, 63);
	assert_int_equal(c.cnp_rate_cuts, 63);
	rp_free(&r);
}

static void test_rp_recovery(void **state)
{
	struct rp r;
	struct ne_dcqcn_state st;
	const uint64_t t0 = 1000000;
	static const uint64_t fr[5] = {75000000000ull, 87500000000ull, 93750000000ull,
				       96875000000ull, 98437500000ull};

	(void)state;
	rp_init(&r, 0, 0);
	cnp_at(&r, t0);
	assert_int_equal(q_at(&r, t0 + 55 * US - 1).rate_bps, G100 / 2); /* timer not yet due */
	/* F = 5 fast recovery steps: RC = (RT + RC) / 2 with RT = 100 G */
	for (int k = 1; k <= 5; k++) {
		st = q_at(&r, t0 + (uint64_t)k * 55 * US);
		assert_int_equal(st.timer_events, k);
		assert_int_equal(st.rate_bps, fr[k - 1]);
		assert_int_equal(st.target_bps, G100);
	}
	/* 6th: additive increase; RT + 40 M is clamped to 100 G */
	st = q_at(&r, t0 + 6 * 55 * US);
	assert_int_equal(st.rate_bps, 99218750000ull);
	/* back at line rate: no longer limited */
	st = q_at(&r, t0 + 5000 * US);
	assert_false(st.limited);
	assert_int_equal(st.rate_bps, G100);
	/* alpha kept decaying every 55 us without CNP: (1 - 1/256)^90 at 4950 us */
	{
		double a = 1.0;

		for (int k = 0; k < 90; k++)
			a *= 255.0 / 256.0;
		assert_true(st.alpha > a - 1e-4 && st.alpha < a + 1e-4);
		/* so the next cut is milder than a halving */
		cnp_at(&r, t0 + 5000 * US);
		st = q_at(&r, t0 + 5000 * US);
		assert_true(st.rate_bps > (uint64_t)(1e11 * (1 - a / 2) * (1 - 1e-4)) &&
			    st.rate_bps < (uint64_t)(1e11 * (1 - a / 2) * (1 + 1e-4)));
	}
	rp_free(&r);

	/* additive increase below the line rate: two cuts (RT 50 G, RC 25 G) */
	rp_init(&r, 0, 0);
	cnp_at(&r, t0);
	cnp_at(&r, t0);
	st = q_at(&r, t0 + 5 * 55 * US);
	assert_int_equal(st.target_bps, 50000000000ull);
	assert_int_equal(st.rate_bps, 49218750000ull); /* 50 - 25/32 G */
	st = q_at(&r, t0 + 6 * 55 * US);
	assert_int_equal(st.target_bps, 50040000000ull);      /* + R_AI 40 Mbit/s */
	assert_int_equal(st.rate_bps, 49629375000ull);        /* ceil((50.04 + 49.21875) / 2) G */
	st = q_at(&r, t0 + 7 * 55 * US);
	assert_int_equal(st.target_bps, 50080000000ull);
	assert_int_equal(st.rate_bps, 49854687500ull);
	rp_free(&r);
}

static void test_rp_pacing_and_byte_counter(void **state)
{
	struct rp r;
	struct ne_dcqcn_state st;
	struct wire *w;
	size_t i;

	(void)state;
	/* only the byte counter (B = 100 kB) raises the rate: the timer is 1 s */
	rp_init(&r, 100000, 1000000000ull);
	w = r.w;
	cnp_at(&r, 0);
	post_write(w, XFER);
	wire_run(w, UINT64_MAX);
	assert_int_equal(memcmp(w->mem[0], w->mem[1], XFER), 0);
	assert_int_equal(w->ndep, XFER / 4096);
	/* 4170 B + 24 B overhead at 50 G: 671.04 ns -> 672 (line rate: 336) */
	assert_int_equal(w->dep_len[0], 4170);
	assert_int_equal(w->dep_t[1] - w->dep_t[0], 672);
	/* the 25th frame crosses B: fast recovery to 75 G, (4154 + 24) B -> 446 ns */
	assert_int_equal(w->dep_t[24] - w->dep_t[23], 669); /* (4154 + 24) B at 50 G */
	assert_int_equal(w->dep_t[25] - w->dep_t[24], 446);
	st = q_at(&r, w->now);
	/* 4170 + 255 x 4154 = 1063440 B: 10 byte counter events, still limited */
	assert_int_equal(st.byte_events, 10);
	assert_int_equal(st.timer_events, 0);
	assert_true(st.limited);
	/* the gap never undercuts the rate in force */
	for (i = 1; i < w->ndep; i++)
		assert_true(w->dep_t[i] - w->dep_t[i - 1] >= 335); /* 4154 B at 100 G */
	rp_free(&r);

	/* the same transfer with the reaction point on and no CNP: line rate */
	rp_init(&r, 100000, 1000000000ull);
	w = r.w;
	post_write(w, XFER);
	wire_run(w, UINT64_MAX);
	assert_int_equal(w->dep_t[1] - w->dep_t[0], 336);
	assert_false(q_at(&r, w->now).limited);
	rp_free(&r);
}

/* One WRITE 0 -> 1; returns the wire's hash and the counters. */
static uint64_t run_once(bool rp, bool np, bool marks, bool inject_cnp, struct ne_counters *c0,
			 struct ne_counters *c1, int *cnps1)
{
	struct ne_nic_config a, b;
	struct wire *w = calloc(1, sizeof(*w));
	uint8_t cnp[NE_MAX_FRAME];
	size_t clen = make_cnp(cnp);
	uint64_t h;

	assert_non_null(w);
	cfg_for(&a, 0);
	cfg_for(&b, 1);
	a.dcqcn.rp_enable = b.dcqcn.rp_enable = rp;
	a.dcqcn.np_enable = b.dcqcn.np_enable = np;
	wire_init(w, &a, &b);
	w->mark_ce = marks;
	post_write(w, 256 * 1024);
	wire_run(w, 2 * US);
	if (inject_cnp)
		ne_nic_rx(w->s.nic[0], cnp, clen, w->now);
	wire_run(w, UINT64_MAX);
	assert_int_equal(memcmp(w->mem[0], w->mem[1], 256 * 1024), 0);
	ne_nic_get_counters(w->s.nic[0], c0);
	ne_nic_get_counters(w->s.nic[1], c1);
	*cnps1 = w->cnps_from[1];
	h = w->hash;
	wire_free(w);
	free(w);
	return h;
}

static void test_dcqcn_off_changes_nothing(void **state)
{
	struct ne_nic_config d;
	struct ne_counters a0, a1, b0, b1;
	uint64_t base, h;
	int cnps;

	(void)state;
	ne_nic_config_default(&d);
	assert_false(d.dcqcn.rp_enable);
	assert_false(d.dcqcn.np_enable);
	base = run_once(false, false, false, false, &a0, &a1, &cnps);
	/* off: CE marks and a CNP leave every frame and every time unchanged */
	h = run_once(false, false, true, true, &b0, &b1, &cnps);
	assert_true(h == base);
	assert_int_equal(cnps, 0);
	assert_int_equal(b1.cnp_sent + b1.ecn_ce_rcvd + b0.cnp_rate_cuts, 0);
	assert_int_equal(b0.cnp_rcvd, 1);
	assert_int_equal(b0.sent_pkts, a0.sent_pkts);
	/* on but never triggered: the same */
	h = run_once(true, true, false, false, &b0, &b1, &cnps);
	assert_true(h == base);
	/* on and triggered: the wire differs (the comparison can fail) */
	h = run_once(true, true, true, false, &b0, &b1, &cnps);
	assert_true(h != base);
	assert_true(cnps > 0);
	assert_true(b0.cnp_rate_cuts > 0);
	assert_int_equal(b1.cnp_sent, (uint64_t)cnps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_np_cnp_format_and_rate_limit),
		cmocka_unit_test(test_rp_cut_factor),
		cmocka_unit_test(test_rp_recovery),
		cmocka_unit_test(test_rp_pacing_and_byte_counter),
		cmocka_unit_test(test_dcqcn_off_changes_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
