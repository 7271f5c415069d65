/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nic_emul transport tests: two emulated NICs back to back on a simulated
 * wire (ne_sim.c). Data is verified byte for byte; loss, reordering and
 * duplication are injected on chosen frames and the PSNs on the wire are
 * compared with what go-back-N must produce.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ne_nic.h"
#include "ne_sim.h"
#include "rl_icrc.h"
#include "rl_parse.h"

#define RATE 100000000000ull /* 100 Gbit/s */
#define MIB (1024u * 1024u)

/* ------------------------------------------------------------------ */
/* fixture: two NICs, one QP each, one MR of 2 MiB each */

struct fx {
	struct sim s;
	struct ne_cq *cq[2];
	uint32_t qp[2];
	uint8_t *mem[2];
	uint32_t key[2];
	uint32_t psn[2];
};

#define BUF_LEN (2u * MIB)
#define IOVA0 0x100000000ull
#define IOVA1 0x7f0000000000ull

static void fx_init(struct fx *f, uint64_t delay, uint32_t mtu, uint32_t psn0, uint32_t psn1,
		    uint8_t timeout, uint8_t retry, uint8_t rnr_retry)
{
	struct ne_mr_attr ma;

	memset(f, 0, sizeof(*f));
	sim_init(&f->s, RATE, delay);
	assert_non_null(f->s.nic[0]);
	assert_non_null(f->s.nic[1]);
	for (int i = 0; i < 2; i++) {
		f->cq[i] = ne_cq_create(f->s.nic[i], 4096);
		assert_non_null(f->cq[i]);
		f->mem[i] = calloc(1, BUF_LEN);
		memset(&ma, 0, sizeof(ma));
		ma.addr = f->mem[i];
		ma.len = BUF_LEN;
		ma.iova = i ? IOVA1 : IOVA0;
		ma.access = NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE | NE_ACCESS_REMOTE_READ;
		assert_int_equal(ne_mr_reg(f->s.nic[i], &ma, &f->key[i]), 0);
	}
	f->psn[0] = psn0;
	f->psn[1] = psn1;
	sim_connect(&f->s, &f->qp[0], &f->qp[1], f->cq[0], f->cq[1], mtu, psn0, psn1, timeout, retry,
		    rnr_retry);
}

static void fx_free(struct fx *f)
{
	sim_free(&f->s);
	free(f->mem[0]);
	free(f->mem[1]);
}

static uint64_t iova(int i, uint32_t off)
{
	return (i ? IOVA1 : IOVA0) + off;
}

/* completions gathered per NIC */
struct done {
	struct fx *f;
	struct ne_wc wc[2][64];
	int n[2];
	int want[2];
};

static bool got_all(struct sim *s, void *arg)
{
	struct done *d = arg;

	(void)s;
	for (int i = 0; i < 2; i++)
		while (d->n[i] < 64 && ne_cq_poll(d->f->cq[i], &d->wc[i][d->n[i]], 1) == 1)
			d->n[i]++;
	return d->n[0] >= d->want[0] && d->n[1] >= d->want[1];
}

static void post_recv(struct fx *f, int i, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ne_recv_wr rw = {.wr_id = wr_id, .addr = iova(i, off), .length = len, .lkey = f->key[i]};

	assert_int_equal(ne_post_recv(f->s.nic[i], f->qp[i], &rw), 0);
}

static void post(struct fx *f, int i, enum ne_wr_opcode op, uint64_t wr_id, uint32_t loff,
		 uint32_t len, uint32_t roff, uint32_t imm)
{
	struct ne_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.send_flags = NE_SEND_SIGNALED;
	wr.local_addr = iova(i, loff);
	wr.length = len;
	wr.lkey = f->key[i];
	wr.remote_addr = iova(1 - i, roff);
	wr.rkey = f->key[1 - i];
	wr.imm_data = imm;
	assert_int_equal(ne_post_send(f->s.nic[i], f->qp[i], &wr, f->s.now), 0);
}

/* PSNs of request packets (or responses) sent by `from` with an opcode in [lo, hi] */
static size_t psns(const struct sim *s, int from, uint8_t lo, uint8_t hi, uint32_t *out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nlog; i++)
		if (s->log[i].from == from && s->log[i].opcode >= lo && s->log[i].opcode <= hi &&
		    n < cap)
			out[n++] = s->log[i].psn;
	return n;
}

static void assert_psn_seq(const uint32_t *got, size_t n, const uint32_t *want, size_t wn)
{
	if (n != wn) {
		print_error("PSN sequence length %zu, expected %zu\n", n, wn);
		for (size_t i = 0; i < n; i++)
			print_error(" %u", got[i]);
		print_error("\n");
	}
	assert_int_equal(n, wn);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(got[i], want[i]);
}

/* ------------------------------------------------------------------ */

static void test_psn_math(void **state)
{
	(void)state;
	assert_int_equal(ne_psn_add(0xFFFFFF, 1), 0);
	assert_int_equal(ne_psn_add(0xFFFFFE, 5), 3);
	assert_int_equal(ne_psn_diff(2, 0xFFFFFE), 4);
	assert_int_equal(ne_psn_diff(0xFFFFFE, 2), -4);
	assert_int_equal(ne_psn_cmp(0, 0xFFFFFF), 1);
	assert_int_equal(ne_psn_cmp(0xFFFFFF, 0), -1);
	assert_int_equal(ne_psn_cmp(0x123456, 0x123456), 0);
	assert_int_equal(ne_psn_cmp(0x7FFFFF, 0), 1);  /* 2^23 - 1 ahead: after */
	assert_int_equal(ne_psn_cmp(0x800000, 0), -1); /* 2^23 ahead: before */
	assert_int_equal(ne_num_pkts(0, 1024), 1);
	assert_int_equal(ne_num_pkts(1024, 1024), 1);
	assert_int_equal(ne_num_pkts(1025, 1024), 2);
	assert_int_equal(ne_timeout_ns(14), 4096ull << 14);
	assert_int_equal(ne_timeout_ns(0), 0);
	assert_int_equal(ne_rnr_timer_ns(1), 10000);
	assert_int_equal(ne_rnr_timer_ns(0), 655360000ull);
	assert_int_equal(ne_rnr_timer_ns(31), 491520000ull);
}

static void test_sport(void **state)
{
	(void)state;
	/* UDP source ports of the RC connections in rxe-rc-ud.pcap */
	assert_int_equal(ne_rxe_udp_sport(0x11, 0x12), 49458);
	assert_int_equal(ne_rxe_udp_sport(0x12, 0x11), 49458);
	assert_int_equal(ne_rxe_udp_sport(0x14, 0x13), 49532);
	assert_int_equal(ne_rxe_udp_sport(0x19, 0x18), 49752);
	assert_int_equal(ne_rxe_udp_sport(0x1a, 0x19), 49802);
	/* the fold matters for large QPNs: product 0xFFFFFE000001 */
	{
		uint64_t v = 0xFFFFFFull * 0xFFFFFFull;
		uint32_t fl, lo;

		v ^= v >> 20;
		v ^= v >> 40;
		fl = (uint32_t)(v & 0xFFFFF);
		lo = (fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14);
		assert_int_equal(ne_rxe_udp_sport(0xFFFFFF, 0xFFFFFF), 0xC000 | lo);
		assert_int_not_equal(ne_rxe_udp_sport(0xFFFFFF, 0xFFFFFF),
				     0xC000 | ((0xFFFFFFull * 0xFFFFFFull) & 0x3FFF));
	}
}

static void test_sport_policies(void **state)
{
	struct ne_nic_config c;
	struct ne_nic *nic;
	struct ne_cq *cq;
	struct ne_qp_init_attr ia;
	struct ne_qp_attr a;
	uint32_t q1, q2;
	uint16_t p1, p2;

	(void)state;
	for (int pol = 0; pol < 3; pol++) {
		ne_nic_config_default(&c);
		c.sport_policy = (enum ne_sport_policy)pol;
		c.sport_fixed = 0xD00D;
		c.sport_seed = 7;
		nic = ne_nic_create(&c);
		cq = ne_cq_create(nic, 8);
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = ia.recv_cq = cq;
		ia.max_send_wr = ia.max_recv_wr = 4;
		assert_int_equal(ne_qp_create(nic, &ia, &q1), 0);
		assert_int_equal(ne_qp_create(nic, &ia, &q2), 0);
		memset(&a, 0, sizeof(a));
		a.dest_qpn = 0x4242;
		a.state = NE_QPS_INIT;
		assert_int_equal(ne_qp_modify(nic, q1, &a, NE_QP_STATE | NE_QP_DEST_QPN), 0);
		assert_int_equal(ne_qp_modify(nic, q2, &a, NE_QP_STATE | NE_QP_DEST_QPN), 0);
		ne_qp_query(nic, q1, &a);
		p1 = a.udp_sport;
		ne_qp_query(nic, q2, &a);
		p2 = a.udp_sport;
		if (pol == NE_SPORT_RXE) {
			assert_int_equal(p1, ne_rxe_udp_sport(q1, 0x4242));
			assert_int_equal(p2, ne_rxe_udp_sport(q2, 0x4242));
		} else if (pol == NE_SPORT_FIXED) {
			assert_int_equal(p1, 0xD00D);
			assert_int_equal(p2, 0xD00D);
		} else {
			assert_int_equal(p1 & 0xC000, 0xC000);
			assert_int_not_equal(p1, p2);
			assert_int_not_equal(p1, ne_rxe_udp_sport(q1, 0x4242));
		}
		ne_nic_destroy(nic);
	}
}

static void test_state_machine(void **state)
{
	struct ne_nic_config c;
	struct ne_nic *nic;
	struct ne_cq *cq;
	struct ne_qp_init_attr ia;
	struct ne_qp_attr a;
	struct ne_send_wr wr;
	uint32_t q;
	uint8_t mem[64];
	struct ne_mr_attr ma = {.addr = mem, .len = sizeof(mem), .iova = 0x1000,
				.access = NE_ACCESS_LOCAL_WRITE};
	uint32_t key;

	(void)state;
	ne_nic_config_default(&c);
	nic = ne_nic_create(&c);
	cq = ne_cq_create(nic, 8);
	assert_int_equal(ne_mr_reg(nic, &ma, &key), 0);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.max_send_wr = ia.max_recv_wr = 2;
	ia.qpn = 0x12;
	assert_int_equal(ne_qp_create(nic, &ia, &q), 0);
	assert_int_equal(q, 0x12);
	assert_int_equal(ne_qp_create(nic, &ia, &q), -EEXIST);
	ia.qpn = 0;
	assert_int_equal(ne_qp_create(nic, &ia, &q), 0);
	assert_int_equal(q, 0x11); /* first free QPN, like rxe's first user QP */
	q = 0x12;

	memset(&a, 0, sizeof(a));
	memset(&wr, 0, sizeof(wr));
	wr.opcode = NE_WR_SEND;
	wr.length = 8;
	wr.lkey = key;
	wr.local_addr = 0x1000;
	a.state = NE_QPS_RTR;
	assert_int_equal(ne_qp_modify(nic, q, &a, NE_QP_STATE), -EINVAL); /* RESET->RTR */
	a.state = NE_QPS_INIT;
	assert_int_equal(ne_qp_modify(nic, q, &a, NE_QP_STATE), 0);
	assert_int_equal(ne_post_send(nic, q, &wr, 0), -EINVAL); /* not RTS */
	a.state = NE_QPS_RTR;
	assert_int_equal(ne_qp_modify(nic, q, &a, NE_QP_STATE | NE_QP_AV), -EINVAL); /* missing */
	a.path_mtu = 1000;
	a.dest_qpn = 0x11;
	assert_int_equal(ne_qp_modify(nic, q, &a,
				      NE_QP_STATE | NE_QP_AV | NE_QP_PATH_MTU | NE_QP_DEST_QPN |
					      NE_QP_RQ_PSN),
			 -EINVAL); /* bad MTU */
	a.path_mtu = 4096;
	assert_int_equal(ne_qp_modify(nic, q, &a,
				      NE_QP_STATE | NE_QP_AV | NE_QP_PATH_MTU | NE_QP_DEST_QPN |
					      NE_QP_RQ_PSN),
			 0);
	a.state = NE_QPS_RTS;
	assert_int_equal(ne_qp_modify(nic, q, &a, NE_QP_STATE), -EINVAL); /* no SQ_PSN */
	a.sq_psn = 0x1234567; /* masked to 24 bits */
	a.timeout = 40;
	assert_int_equal(ne_qp_modify(nic, q, &a, NE_QP_STATE | NE_QP_SQ_PSN | NE_QP_TIMEOUT),
			 -EINVAL);
	assert_int_equal(ne_qp_modify(nic, q, &a, NE_QP_STATE | NE_QP_SQ_PSN), 0);
	ne_qp_query(nic, q, &a);
	assert_int_equal(a.state, NE_QPS_RTS);
	assert_int_equal(a.sq_psn, 0x234567);
	assert_int_equal(a.path_mtu, 4096);

	wr.lkey = key + 1;
	assert_int_equal(ne_post_send(nic, q, &wr, 0), -EFAULT);
	wr.lkey = key;
	wr.length = 65; /* beyond the MR */
	assert_int_equal(ne_post_send(nic, q, &wr, 0), -EFAULT);
	wr.length = 8;
	wr.wr_id = 1;
	assert_int_equal(ne_post_send(nic, q, &wr, 0), 0);
	wr.wr_id = 2;
	assert_int_equal(ne_post_send(nic, q, &wr, 0), 0);
	assert_int_equal(ne_post_send(nic, q, &wr, 0), -ENOMEM);

	/* ERROR flushes both WQEs */
	a.state = NE_QPS_ERROR;
	assert_int_equal(ne_qp_modify(nic, q, &a, NE_QP_STATE), 0);
	{
		struct ne_wc wc[4];

		assert_int_equal(ne_cq_poll(cq, wc, 4), 2);
		assert_int_equal(wc[0].wr_id, 1);
		assert_int_equal(wc[0].status, NE_WC_WR_FLUSH_ERR);
		assert_int_equal(wc[1].wr_id, 2);
	}
	assert_int_equal(ne_cq_destroy(nic, cq), -EBUSY);
	assert_int_equal(ne_qp_destroy(nic, 0x12), 0);
	assert_int_equal(ne_qp_destroy(nic, 0x12), -ENOENT);
	ne_nic_destroy(nic);
}

/* ------------------------------------------------------------------ */
/* transfers */

static void one_transfer(enum ne_wr_opcode op, uint32_t len, uint32_t mtu)
{
	struct fx f;
	struct done d;
	struct ne_counters c0, c1;
	uint32_t roff = 4096 + 3, loff = 8;
	uint32_t p[4096];
	size_t n;
	int src = op == NE_WR_RDMA_READ ? 1 : 0;
	uint32_t soff = op == NE_WR_RDMA_READ ? roff : loff;
	uint32_t doff = op == NE_WR_RDMA_READ ? loff : roff;
	uint32_t npk = ne_num_pkts(len, mtu);

	fx_init(&f, 2000, mtu, 0xFFFFFF - 3, 100, 14, 7, 7); /* PSNs wrap mid-message */
	sim_fill(f.mem[src] + soff, len, len ^ op);
	memset(&d, 0, sizeof(d));
	d.f = &f;
	d.want[0] = 1;
	if (op == NE_WR_SEND || op == NE_WR_SEND_WITH_IMM || op == NE_WR_RDMA_WRITE_WITH_IMM) {
		post_recv(&f, 1, 77, roff, op == NE_WR_RDMA_WRITE_WITH_IMM ? 0 : len + 100);
		d.want[1] = 1;
	}
	post(&f, 0, op, 5, loff, len, roff, 0xCAFEBABE);
	assert_true(sim_run(&f.s, 10000000000ull, got_all, &d));
	assert_int_equal(f.s.bad_frames, 0);
	assert_int_equal(d.wc[0][0].status, NE_WC_SUCCESS);
	assert_int_equal(d.wc[0][0].wr_id, 5);
	assert_memory_equal(f.mem[src] + soff, f.mem[1 - src] + doff, len);
	/* bytes around the target untouched */
	assert_int_equal(f.mem[1 - src][doff - 1], 0);
	assert_int_equal(f.mem[1 - src][doff + len], 0);
	if (d.want[1]) {
		assert_int_equal(d.wc[1][0].status, NE_WC_SUCCESS);
		assert_int_equal(d.wc[1][0].wr_id, 77);
		assert_int_equal(d.wc[1][0].byte_len, len);
		assert_int_equal(d.wc[1][0].has_imm, op != NE_WR_SEND);
		if (op != NE_WR_SEND)
			assert_int_equal(d.wc[1][0].imm_data, 0xCAFEBABE);
		assert_int_equal(d.wc[1][0].opcode,
				 op == NE_WR_RDMA_WRITE_WITH_IMM ? NE_WC_RECV_RDMA_WITH_IMM : NE_WC_RECV);
	}
	ne_nic_get_counters(f.s.nic[0], &c0);
	ne_nic_get_counters(f.s.nic[1], &c1);
	assert_int_equal(c0.retrans_pkts, 0);
	assert_int_equal(c1.duplicate_request, 0);
	assert_int_equal(c1.out_of_seq_request, 0);
	/* the packets on the wire: consecutive PSNs from the initial PSN, wrapping */
	if (op == NE_WR_RDMA_READ) {
		n = psns(&f.s, 0, RL_OP_READ_REQUEST, RL_OP_READ_REQUEST, p, 4096);
		assert_int_equal(n, 1);
		n = psns(&f.s, 1, RL_OP_READ_RESP_FIRST, RL_OP_READ_RESP_ONLY, p, 4096);
	} else {
		n = psns(&f.s, 0, RL_OP_SEND_FIRST, RL_OP_WRITE_ONLY_IMM, p, 4096);
	}
	assert_int_equal(n, npk);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(p[i], ne_psn_add(0xFFFFFF - 3, (uint32_t)i));
	/* AckReq: every 65 packets without and on the last one (rxe) */
	if (op != NE_WR_RDMA_READ) {
		size_t k = 0, since = 0;

		for (size_t i = 0; i < f.s.nlog; i++) {
			const struct sim_rec *r = &f.s.log[i];

			if (r->from != 0 || r->opcode > RL_OP_WRITE_ONLY_IMM)
				continue;
			if (k == npk - 1)
				assert_true(r->ackreq);
			else
				assert_int_equal(r->ackreq, since > NE_MAX_PKT_PER_ACK);
			since = r->ackreq ? 0 : since + 1;
			k++;
		}
	}
	if (op == NE_WR_SEND)
		assert_int_equal(c0.rdma_sends, 1);
	fx_free(&f);
}

static const uint32_t sizes[] = {1, 1024, 4097, 65536, MIB};

static void test_write_sizes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		one_transfer(NE_WR_RDMA_WRITE, sizes[i], 1024);
	one_transfer(NE_WR_RDMA_WRITE, 4097, 4096);
	one_transfer(NE_WR_RDMA_WRITE, 1000, 256);
}

static void test_send_sizes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		one_transfer(NE_WR_SEND, sizes[i], 1024);
	one_transfer(NE_WR_SEND, 0, 1024);
	one_transfer(NE_WR_SEND, 4096 * 3, 4096);
}

static void test_read_sizes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		one_transfer(NE_WR_RDMA_READ, sizes[i], 1024);
	one_transfer(NE_WR_RDMA_READ, 9000, 2048);
}

static void test_imm(void **state)
{
	(void)state;
	one_transfer(NE_WR_SEND_WITH_IMM, 3000, 1024);
	one_transfer(NE_WR_SEND_WITH_IMM, 10, 1024);
	one_transfer(NE_WR_RDMA_WRITE_WITH_IMM, 5000, 1024);
	one_transfer(NE_WR_RDMA_WRITE_WITH_IMM, 0, 1024);
}

/* ------------------------------------------------------------------ */
/* loss: drop one frame and check go-back-N */

struct drop_arg {
	int from;
	uint8_t lo, hi; /* opcode range that counts */
	int k;          /* drop the k-th matching frame (0-based) */
	int seen;
	enum sim_action act;
};

static enum sim_action drop_hook(struct sim *s, const struct sim_rec *r, void *arg)
{
	struct drop_arg *a = arg;

	(void)s;
	if (r->from != a->from || r->opcode < a->lo || r->opcode > a->hi)
		return SIM_DELIVER;
	return a->seen++ == a->k ? a->act : SIM_DELIVER;
}

static void drop_one(enum ne_wr_opcode op, uint32_t len, int k, uint32_t psn0)
{
	struct fx f;
	struct done d;
	struct drop_arg da;
	struct ne_counters c0, c1;
	uint32_t npk = ne_num_pkts(len, 1024), want[4096], got[4096];
	size_t wn = 0, n;
	bool read = op == NE_WR_RDMA_READ;

	/* 1 ms each way: a whole message leaves before any NAK comes back */
	fx_init(&f, 1000000, 1024, psn0, 5000, 12, 7, 7);
	sim_fill(f.mem[read ? 1 : 0] + 64, len, (uint32_t)k * 31 + len);
	memset(&d, 0, sizeof(d));
	d.f = &f;
	d.want[0] = 1;
	if (op == NE_WR_SEND) {
		post_recv(&f, 1, 9, 64, len);
		d.want[1] = 1;
	}
	memset(&da, 0, sizeof(da));
	da.from = read ? 1 : 0;
	da.lo = read ? RL_OP_READ_RESP_FIRST : RL_OP_SEND_FIRST;
	da.hi = read ? RL_OP_READ_RESP_ONLY : RL_OP_WRITE_ONLY_IMM;
	da.k = k;
	da.act = SIM_DROP;
	f.s.hook = drop_hook;
	f.s.hook_arg = &da;
	post(&f, 0, op, 1, 64, len, 64, 0);
	assert_true(sim_run(&f.s, 60000000000ull, got_all, &d));
	assert_int_equal(f.s.bad_frames, 0);
	assert_int_equal(d.wc[0][0].status, NE_WC_SUCCESS);
	assert_memory_equal(f.mem[0] + 64, f.mem[1] + 64, len);
	if (d.want[1])
		assert_int_equal(d.n[1], 1); /* delivered once */

	/* expected PSNs of the data packets: all, then from the lost one on */
	for (uint32_t i = 0; i < npk; i++)
		want[wn++] = ne_psn_add(psn0, i);
	if (read || (uint32_t)k < npk - 1) {
		for (uint32_t i = (uint32_t)k; i < npk; i++)
			want[wn++] = ne_psn_add(psn0, i);
	} else {
		/* last packet lost: no NAK, nothing acknowledged: timeout resends all */
		for (uint32_t i = 0; i < npk; i++)
			want[wn++] = ne_psn_add(psn0, i);
	}
	n = psns(&f.s, read ? 1 : 0, da.lo, da.hi, got, 4096);
	assert_psn_seq(got, n, want, wn);
	ne_nic_get_counters(f.s.nic[0], &c0);
	ne_nic_get_counters(f.s.nic[1], &c1);
	if (read) {
		/* the READ is asked again from the lost PSN for the rest of the data */
		uint32_t rq[4];

		n = psns(&f.s, 0, RL_OP_READ_REQUEST, RL_OP_READ_REQUEST, rq, 4);
		assert_int_equal(n, 2);
		assert_int_equal(rq[0], psn0);
		assert_int_equal(rq[1], ne_psn_add(psn0, (uint32_t)k));
		for (size_t i = 0, m = 0; i < f.s.nlog; i++)
			if (f.s.log[i].opcode == RL_OP_READ_REQUEST && m++ == 1) {
				assert_int_equal(f.s.log[i].reth_va, IOVA1 + 64 + (uint64_t)k * 1024);
				assert_int_equal(f.s.log[i].reth_len, len - (uint32_t)k * 1024);
			}
		assert_int_equal(c0.timeouts, 1);
		assert_int_equal(c1.duplicate_request, 1);
	} else if ((uint32_t)k < npk - 1) {
		/* one NAK (PSN sequence error) naming the lost PSN */
		size_t naks = 0;

		for (size_t i = 0; i < f.s.nlog; i++)
			if (f.s.log[i].from == 1 && f.s.log[i].opcode == RL_OP_ACK &&
			    f.s.log[i].syndrome == 0x60) {
				assert_int_equal(f.s.log[i].psn, ne_psn_add(psn0, (uint32_t)k));
				naks++;
			}
		assert_int_equal(naks, 1);
		assert_int_equal(c1.out_of_seq_request, 1);
		assert_int_equal(c0.rcvd_seq_err, k > 0 ? 1 : 0);
		assert_int_equal(c0.timeouts, 0);
		assert_int_equal(c0.retrans_pkts, npk - (uint32_t)k);
	} else {
		assert_int_equal(c0.timeouts, 1);
		assert_int_equal(c1.duplicate_request, npk - 1);
		assert_int_equal(c0.retrans_pkts, npk);
	}
	assert_int_equal(c0.completer_retry_err, 1);
	fx_free(&f);
}

static void test_drop_write(void **state)
{
	(void)state;
	for (int k = 0; k < 5; k++)
		drop_one(NE_WR_RDMA_WRITE, 4097, k, 77);
	/* 64 packets with the PSN wrapping inside the message */
	drop_one(NE_WR_RDMA_WRITE, 65536, 0, 0xFFFFF0);
	drop_one(NE_WR_RDMA_WRITE, 65536, 15, 0xFFFFF0);
	drop_one(NE_WR_RDMA_WRITE, 65536, 16, 0xFFFFF0);
	drop_one(NE_WR_RDMA_WRITE, 65536, 62, 0xFFFFF0);
	drop_one(NE_WR_RDMA_WRITE, 65536, 63, 0xFFFFF0);
}

static void test_drop_send(void **state)
{
	(void)state;
	for (int k = 0; k < 5; k++)
		drop_one(NE_WR_SEND, 4097, k, 1234);
	drop_one(NE_WR_SEND, 65536, 40, 0xFFFFFF);
}

static void test_drop_read_response(void **state)
{
	(void)state;
	for (int k = 0; k < 5; k++)
		drop_one(NE_WR_RDMA_READ, 4097, k, 900);
	drop_one(NE_WR_RDMA_READ, 65536, 33, 0xFFFFFA);
}

/* A lost READ request: timeout, the same request again. */
static void test_drop_read_request(void **state)
{
	struct fx f;
	struct done d;
	struct drop_arg da = {.from = 0, .lo = RL_OP_READ_REQUEST, .hi = RL_OP_READ_REQUEST,
			      .k = 0, .act = SIM_DROP};
	uint32_t got[8];
	size_t n;

	(void)state;
	fx_init(&f, 5000, 1024, 10, 20, 10, 7, 7);
	sim_fill(f.mem[1], 3000, 3);
	memset(&d, 0, sizeof(d));
	d.f = &f;
	d.want[0] = 1;
	f.s.hook = drop_hook;
	f.s.hook_arg = &da;
	post(&f, 0, NE_WR_RDMA_READ, 1, 0, 3000, 0, 0);
	assert_true(sim_run(&f.s, 10000000000ull, got_all, &d));
	assert_int_equal(d.wc[0][0].status, NE_WC_SUCCESS);
	assert_memory_equal(f.mem[0], f.mem[1], 3000);
	n = psns(&f.s, 0, RL_OP_READ_REQUEST, RL_OP_READ_REQUEST, got, 8);
	assert_int_equal(n, 2);
	assert_int_equal(got[0], 10);
	assert_int_equal(got[1], 10);
	/* the retry left one retransmit timeout after the first request */
	for (size_t i = 0, m = 0; i < f.s.nlog; i++)
		if (f.s.log[i].opcode == RL_OP_READ_REQUEST && m++ == 1)
			assert_true(f.s.log[i].t >= ne_timeout_ns(10));
	fx_free(&f);
}

/* A lost ACK: the timeout resends everything, the duplicates are re-ACKed. */
static void test_drop_ack(void **state)
{
	struct fx f;
	struct done d;
	struct drop_arg da = {.from = 1, .lo = RL_OP_ACK, .hi = RL_OP_ACK, .k = 0, .act = SIM_DROP};
	struct ne_counters c1;
	uint32_t got[16];
	size_t n;

	(void)state;
	fx_init(&f, 5000, 1024, 500, 20, 10, 7, 7);
	sim_fill(f.mem[0], 2048, 3);
	memset(&d, 0, sizeof(d));
	d.f = &f;
	d.want[0] = 1;
	f.s.hook = drop_hook;
	f.s.hook_arg = &da;
	post(&f, 0, NE_WR_RDMA_WRITE, 1, 0, 2048, 0, 0);
	assert_true(sim_run(&f.s, 10000000000ull, got_all, &d));
	assert_int_equal(d.wc[0][0].status, NE_WC_SUCCESS);
	n = psns(&f.s, 0, RL_OP_WRITE_FIRST, RL_OP_WRITE_ONLY, got, 16);
	assert_int_equal(n, 4);
	assert_int_equal(got[0], 500);
	assert_int_equal(got[1], 501);
	assert_int_equal(got[2], 500);
	assert_int_equal(got[3], 501);
	ne_nic_get_counters(f.s.nic[1], &c1);
	assert_int_equal(c1.duplicate_request, 2);
	/* the ACK of the duplicate names the last PSN accepted */
	for (size_t i = 0; i < f.s.nlog; i++)
		if (f.s.log[i].from == 1 && f.s.log[i].opcode == RL_OP_ACK)
			assert_int_equal(f.s.log[i].psn, 501);
	fx_free(&f);
}

/* ------------------------------------------------------------------ */
/* reordering and duplicates */

static void test_reorder_nak(void **state)
{
	struct fx f;
	struct done d;
	struct drop_arg da;
	struct ne_counters c1;
	uint32_t psn0 = 4000;
	int first_nak = -1;

	(void)state;
	for (int k = 0; k < 3; k++) {
		fx_init(&f, 10000, 1024, psn0, 20, 12, 7, 7);
		sim_fill(f.mem[0], 4096, (uint32_t)k);
		memset(&d, 0, sizeof(d));
		d.f = &f;
		d.want[0] = 1;
		memset(&da, 0, sizeof(da));
		da.from = 0;
		da.lo = RL_OP_WRITE_FIRST;
		da.hi = RL_OP_WRITE_ONLY;
		da.k = k; /* packet k is held and arrives after packet k+1 */
		da.act = SIM_HOLD;
		f.s.hook = drop_hook;
		f.s.hook_arg = &da;
		post(&f, 0, NE_WR_RDMA_WRITE, 1, 0, 4096, 0, 0);
		assert_true(sim_run(&f.s, 10000000000ull, got_all, &d));
		assert_int_equal(d.wc[0][0].status, NE_WC_SUCCESS);
		assert_memory_equal(f.mem[0], f.mem[1], 4096);
		first_nak = -1;
		for (size_t i = 0; i < f.s.nlog; i++)
			if (f.s.log[i].from == 1 && f.s.log[i].opcode == RL_OP_ACK) {
				first_nak = (int)i;
				break;
			}
		assert_true(first_nak >= 0);
		/* the first answer is a NAK, PSN sequence error, naming the missing PSN */
		assert_int_equal(f.s.log[first_nak].syndrome, 0x60);
		assert_int_equal(f.s.log[first_nak].psn, psn0 + (uint32_t)k);
		ne_nic_get_counters(f.s.nic[1], &c1);
		assert_true(c1.out_of_seq_request >= 1);
		fx_free(&f);
	}
}

static void test_duplicate_send(void **state)
{
	struct fx f;
	struct done d;
	struct drop_arg da = {.from = 0, .lo = RL_OP_SEND_ONLY, .hi = RL_OP_SEND_ONLY, .k = 0,
			      .act = SIM_DUP};
	struct ne_counters c1;
	struct ne_wc wc;
	size_t acks = 0;

	(void)state;
	fx_init(&f, 5000, 1024, 50, 60, 12, 7, 7);
	sim_fill(f.mem[0], 100, 1);
	memset(&d, 0, sizeof(d));
	d.f = &f;
	d.want[0] = 1;
	d.want[1] = 1;
	post_recv(&f, 1, 1, 0, 200);
	post_recv(&f, 1, 2, 1000, 200);
	f.s.hook = drop_hook;
	f.s.hook_arg = &da;
	post(&f, 0, NE_WR_SEND, 1, 0, 100, 0, 0);
	assert_true(sim_run(&f.s, 10000000000ull, got_all, &d));
	sim_run(&f.s, f.s.now + 1000000000ull, NULL, NULL); /* let the copy arrive */
	assert_int_equal(d.wc[1][0].wr_id, 1);
	assert_int_equal(ne_cq_poll(f.cq[1], &wc, 1), 0); /* not delivered twice */
	assert_int_equal(ne_cq_poll(f.cq[0], &wc, 1), 0);
	ne_nic_get_counters(f.s.nic[1], &c1);
	assert_int_equal(c1.duplicate_request, 1);
	for (size_t i = 0; i < f.s.nlog; i++)
		if (f.s.log[i].from == 1 && f.s.log[i].opcode == RL_OP_ACK) {
			assert_int_equal(f.s.log[i].syndrome, 0x1F);
			assert_int_equal(f.s.log[i].psn, 50);
			assert_int_equal(f.s.log[i].msn, 1);
			acks++;
		}
	assert_int_equal(acks, 2); /* the original and the duplicate are both ACKed */
	for (int i = 0; i < 100; i++)
		assert_int_equal(f.mem[1][1000 + i], 0);
	fx_free(&f);
}

static void test_duplicate_read(void **state)
{
	struct fx f;
	struct done d;
	struct drop_arg da = {.from = 0, .lo = RL_OP_READ_REQUEST, .hi = RL_OP_READ_REQUEST,
			      .k = 0, .act = SIM_DUP};
	struct ne_counters c1;
	uint32_t got[16];
	size_t n;

	(void)state;
	fx_init(&f, 5000, 1024, 70, 60, 12, 7, 7);
	sim_fill(f.mem[1], 2500, 9);
	memset(&d, 0, sizeof(d));
	d.f = &f;
	d.want[0] = 1;
	f.s.hook = drop_hook;
	f.s.hook_arg = &da;
	post(&f, 0, NE_WR_RDMA_READ, 1, 0, 2500, 0, 0);
	assert_true(sim_run(&f.s, 10000000000ull, got_all, &d));
	sim_run(&f.s, f.s.now + 1000000000ull, NULL, NULL);
	assert_memory_equal(f.mem[0], f.mem[1], 2500);
	ne_nic_get_counters(f.s.nic[1], &c1);
	assert_int_equal(c1.duplicate_request, 1);
	/* the duplicate READ is executed again: responses 70..72 twice */
	n = psns(&f.s, 1, RL_OP_READ_RESP_FIRST, RL_OP_READ_RESP_ONLY, got, 16);
	assert_int_equal(n, 6);
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(got[i], 70 + i % 3);
	assert_int_equal(d.n[0], 1);
	{
		struct ne_wc wc;

		assert_int_equal(ne_cq_poll(f.cq[0], &wc, 1), 0); /* completed once */
	}
	fx_free(&f);
}

/* ------------------------------------------------------------------ */
/* errors */

static enum sim_action drop_all(struct sim *s, const struct sim_rec *r, void *arg)
{
	(void)s;
	(void)arg;
	return r->from == 0 ? SIM_DROP : SIM_DELIVER;
}

static void test_retry_exceeded(void **state)
{
	struct fx f;
	struct done d;
	struct ne_counters c0;
	struct ne_qp_attr a;
	uint32_t got[16];
	size_t n;

	(void)state;
	fx_init(&f, 5000, 1024, 300, 60, 8, 3, 7);
	memset(&d, 0, sizeof(d));
	d.f = &f;
	d.want[0] = 2;
	f.s.hook = drop_all;
	post(&f, 0, NE_WR_RDMA_WRITE, 1, 0, 1500, 0, 0);
	post(&f, 0, NE_WR_RDMA_WRITE, 2, 0, 10, 0, 0);
	assert_true(sim_run(&f.s, 10000000000ull, got_all, &d));
	assert_int_equal(d.wc[0][0].wr_id, 1);
	assert_int_equal(d.wc[0][0].status, NE_WC_RETRY_EXC_ERR);
	assert_int_equal(d.wc[0][1].wr_id, 2);
	assert_int_equal(d.wc[0][1].status, NE_WC_WR_FLUSH_ERR);
	ne_qp_query(f.s.nic[0], f.qp[0], &a);
	assert_int_equal(a.state, NE_QPS_ERROR);
	ne_nic_get_counters(f.s.nic[0], &c0);
	assert_int_equal(c0.retry_exceeded_err, 1);
	assert_int_equal(c0.timeouts, 4);
	assert_int_equal(c0.completer_retry_err, 3);
	/* original + 3 retries of the whole go-back-N window (3 packets) */
	n = psns(&f.s, 0, RL_OP_WRITE_FIRST, RL_OP_WRITE_ONLY, got, 16);
	assert_int_equal(n, 12);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(got[i], 300 + i % 3);
	/* the retries are one timeout apart */
	{
		uint64_t t_prev = 0;
		size_t m = 0;

		for (size_t i = 0; i < f.s.nlog; i++)
			if (f.s.log[i].from == 0 && f.s.log[i].psn == 300) {
				if (m++)
					assert_true(f.s.log[i].t - t_prev >= ne_timeout_ns(8));
				t_prev = f.s.log[i].t;
			}
	}
	/* nothing more is sent from an ERROR QP */
	assert_int_equal(ne_nic_next_event_ns(f.s.nic[0]), UINT64_MAX);
	fx_free(&f);
}

static bool post_late(struct sim *s, void *arg)
{
	struct fx *f = arg;

	return s->now >= 3000000 && f != NULL;
}

static void test_rnr(void **state)
{
	struct fx f;
	struct done d;
	struct ne_counters c0, c1;
	size_t rnr = 0;

	(void)state;
	/* the receiver posts its WQE only after 3 ms: RNR NAKs until then */
	fx_init(&f, 5000, 1024, 10, 20, 12, 7, 7);
	sim_fill(f.mem[0], 64, 5);
	memset(&d, 0, sizeof(d));
	d.f = &f;
	d.want[0] = 1;
	d.want[1] = 1;
	post(&f, 0, NE_WR_SEND, 1, 0, 64, 0, 0);
	sim_run(&f.s, 100000000ull, post_late, &f);
	ne_nic_get_counters(f.s.nic[1], &c1);
	assert_true(c1.send_rnr_err >= 2);
	post_recv(&f, 1, 3, 0, 64);
	assert_true(sim_run(&f.s, 10000000000ull, got_all, &d));
	assert_int_equal(d.wc[0][0].status, NE_WC_SUCCESS);
	assert_memory_equal(f.mem[0], f.mem[1], 64);
	ne_nic_get_counters(f.s.nic[0], &c0);
	assert_int_equal(c0.rcvd_rnr_err, c1.send_rnr_err);
	for (size_t i = 0; i < f.s.nlog; i++)
		if (f.s.log[i].from == 1 && f.s.log[i].opcode == RL_OP_ACK &&
		    (f.s.log[i].syndrome & 0xE0) == 0x20) {
			assert_int_equal(f.s.log[i].syndrome, 0x20 | 1); /* min_rnr_timer 1 */
			assert_int_equal(f.s.log[i].psn, 10);
			rnr++;
		}
	assert_int_equal(rnr, c1.send_rnr_err);
	fx_free(&f);

	/* rnr_retry 2: three RNR NAKs, then RNR retry exceeded */
	fx_init(&f, 5000, 1024, 10, 20, 12, 7, 2);
	memset(&d, 0, sizeof(d));
	d.f = &f;
	d.want[0] = 1;
	post(&f, 0, NE_WR_SEND, 1, 0, 64, 0, 0);
	assert_true(sim_run(&f.s, 10000000000ull, got_all, &d));
	assert_int_equal(d.wc[0][0].status, NE_WC_RNR_RETRY_EXC_ERR);
	ne_nic_get_counters(f.s.nic[0], &c0);
	assert_int_equal(c0.rcvd_rnr_err, 3);
	assert_int_equal(c0.retry_rnr_exceeded_err, 1);
	fx_free(&f);
}

static void test_remote_access_error(void **state)
{
	struct fx f;
	struct done d;
	struct ne_send_wr wr;
	struct ne_counters c1;

	(void)state;
	fx_init(&f, 5000, 1024, 10, 20, 12, 7, 7);
	memset(&d, 0, sizeof(d));
	d.f = &f;
	d.want[0] = 1;
	memset(&wr, 0, sizeof(wr));
	wr.opcode = NE_WR_RDMA_WRITE;
	wr.length = 100;
	wr.lkey = f.key[0];
	wr.local_addr = IOVA0;
	wr.remote_addr = IOVA1 + BUF_LEN - 50; /* runs past the end of the MR */
	wr.rkey = f.key[1];
	wr.send_flags = NE_SEND_SIGNALED;
	assert_int_equal(ne_post_send(f.s.nic[0], f.qp[0], &wr, 0), 0);
	assert_true(sim_run(&f.s, 10000000000ull, got_all, &d));
	assert_int_equal(d.wc[0][0].status, NE_WC_REM_ACCESS_ERR);
	ne_nic_get_counters(f.s.nic[1], &c1);
	assert_int_equal(c1.rcv_access_err, 1);
	fx_free(&f);

	/* READ with a bad rkey */
	fx_init(&f, 5000, 1024, 10, 20, 12, 7, 7);
	memset(&d, 0, sizeof(d));
	d.f = &f;
	d.want[0] = 1;
	wr.opcode = NE_WR_RDMA_READ;
	wr.lkey = f.key[0];
	wr.remote_addr = IOVA1;
	wr.rkey = f.key[1] ^ 0x5555;
	assert_int_equal(ne_post_send(f.s.nic[0], f.qp[0], &wr, 0), 0);
	assert_true(sim_run(&f.s, 10000000000ull, got_all, &d));
	assert_int_equal(d.wc[0][0].status, NE_WC_REM_ACCESS_ERR);
	fx_free(&f);
}

/* Build a frame with A's NIC (a SEND_ONLY to B) and corrupt it in various ways. */
static void test_bad_frames(void **state)
{
	struct fx f;
	uint8_t fr[NE_MAX_FRAME], bad[NE_MAX_FRAME];
	size_t len;
	struct rl_pkt p;
	struct ne_counters c;
	struct ne_wc wc;
	struct ne_qp_attr a;

	(void)state;
	fx_init(&f, 5000, 1024, 10, 20, 12, 7, 7);
	post_recv(&f, 1, 1, 0, 4096);
	sim_fill(f.mem[0], 2048, 1);
	post(&f, 0, NE_WR_SEND, 1, 0, 2048, 0, 0);
	assert_int_equal(ne_nic_poll_tx(f.s.nic[0], 0, fr, sizeof(fr), &len), 1);
	assert_int_equal(rl_parse(fr, len, &p), RL_PARSE_OK);
	assert_true(rl_icrc_verify(fr, &p));
	assert_int_equal(p.bth.opcode, RL_OP_SEND_FIRST);

	/* bad ICRC: one payload bit */
	memcpy(bad, fr, len);
	bad[p.payload_off + 5] ^= 1;
	assert_int_equal(ne_nic_rx(f.s.nic[1], bad, len, 10), NE_RX_BAD_ICRC);
	/* bad ICRC: the ICRC itself */
	memcpy(bad, fr, len);
	bad[len - 1] ^= 0x80;
	assert_int_equal(ne_nic_rx(f.s.nic[1], bad, len, 10), NE_RX_BAD_ICRC);
	/* truncated at every length short of the BTH + ICRC */
	for (size_t l = 0; l < 14 + 20 + 8 + 12 + 4; l++)
		assert_int_equal(ne_nic_rx(f.s.nic[1], fr, l, 10), NE_RX_MALFORMED);
	/* unknown QPN, with a valid ICRC */
	memcpy(bad, fr, len);
	bad[p.bth_off + 7] ^= 0x40;
	rl_parse(bad, len, &p);
	rl_icrc_store(bad, &p);
	assert_int_equal(ne_nic_rx(f.s.nic[1], bad, len, 10), NE_RX_UNKNOWN_QPN);
	/* not for us */
	memcpy(bad, fr, len);
	bad[0] ^= 1;
	assert_int_equal(ne_nic_rx(f.s.nic[1], bad, len, 10), NE_RX_WRONG_DST);
	ne_nic_get_counters(f.s.nic[1], &c);
	assert_int_equal(c.icrc_err, 2);
	assert_int_equal(c.rcv_malformed, 14 + 20 + 8 + 12 + 4);
	assert_int_equal(c.rcv_unknown_qpn, 1);
	assert_int_equal(c.rcv_wrong_dst, 1);
	assert_int_equal(c.rcvd_pkts, 1); /* only the unknown-QPN one passed the ICRC */
	assert_int_equal(ne_cq_poll(f.cq[1], &wc, 1), 0);
	assert_int_equal(f.mem[1][0], 0);

	/* wrong opcode sequence: SEND_MIDDLE at the expected PSN with no FIRST */
	rl_parse(fr, len, &p);
	memcpy(bad, fr, len);
	bad[p.bth_off] = RL_OP_SEND_MIDDLE;
	rl_parse(bad, len, &p);
	rl_icrc_store(bad, &p);
	assert_int_equal(ne_nic_rx(f.s.nic[1], bad, len, 10), NE_RX_PROTOCOL);
	ne_nic_get_counters(f.s.nic[1], &c);
	assert_int_equal(c.rcv_opcode_seq_err, 1);
	assert_int_equal(f.mem[1][0], 0); /* nothing written */
	/* rxe: class C error, NAK invalid request, QP to ERROR, receive WQE flushed */
	assert_int_equal(ne_nic_poll_tx(f.s.nic[1], 20, bad, sizeof(bad), &len), 1);
	rl_parse(bad, len, &p);
	assert_int_equal(p.bth.opcode, RL_OP_ACK);
	assert_int_equal(p.bth.aeth_syndrome, 0x61);
	assert_int_equal(p.bth.psn, 10);
	ne_qp_query(f.s.nic[1], f.qp[1], &a);
	assert_int_equal(a.state, NE_QPS_ERROR);
	assert_int_equal(ne_cq_poll(f.cq[1], &wc, 1), 1);
	assert_int_equal(wc.status, NE_WC_WR_FLUSH_ERR);
	fx_free(&f);
}

/* ------------------------------------------------------------------ */
/* NIC model */

static void test_line_rate(void **state)
{
	struct sim s;
	struct ne_cq *cq[2];
	uint32_t q0, q1, key[2];
	uint8_t *mem[2];
	struct ne_mr_attr ma;
	struct ne_send_wr wr;
	uint64_t rate = 10000000000ull;
	uint64_t prev_t = 0;
	uint32_t prev_len = 0;
	size_t data = 0;

	(void)state;
	sim_init(&s, rate, 1000);
	for (int i = 0; i < 2; i++) {
		cq[i] = ne_cq_create(s.nic[i], 16);
		mem[i] = calloc(1, 65536);
		memset(&ma, 0, sizeof(ma));
		ma.addr = mem[i];
		ma.len = 65536;
		ma.access = NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE;
		ne_mr_reg(s.nic[i], &ma, &key[i]);
	}
	sim_connect(&s, &q0, &q1, cq[0], cq[1], 4096, 1, 2, 14, 7, 7);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = NE_WR_RDMA_WRITE;
	wr.length = 65536;
	wr.lkey = key[0];
	wr.rkey = key[1];
	ne_post_send(s.nic[0], q0, &wr, 0);
	assert_int_equal(ne_nic_next_event_ns(s.nic[0]), 0);
	sim_run(&s, 1000000000ull, NULL, NULL);
	for (size_t i = 0; i < s.nlog; i++) {
		if (s.log[i].from != 0)
			continue;
		if (data) {
			uint64_t want = ((uint64_t)(prev_len + NE_WIRE_OVERHEAD) * 8 * 1000000000ull +
					 rate - 1) / rate;

			assert_int_equal(s.log[i].t - prev_t, want);
		}
		prev_t = s.log[i].t;
		prev_len = s.log[i].len;
		data++;
	}
	assert_int_equal(data, 16);
	assert_int_equal(s.log[0].len, 14 + 20 + 8 + 12 + 16 + 4096 + 4);
	assert_memory_equal(mem[0], mem[1], 65536);
	sim_free(&s);
	free(mem[0]);
	free(mem[1]);
}

static void test_qpc_cache(void **state)
{
	struct ne_nic_config c0, c1;
	struct sim s;
	struct ne_cq *cq[2];
	uint32_t qa[3], qb[3], key[2];
	uint8_t *mem[2];
	struct ne_mr_attr ma;
	struct ne_send_wr wr;
	struct ne_counters c;

	(void)state;
	for (int i = 0; i < 2; i++) {
		ne_nic_config_default(i ? &c1 : &c0);
		(i ? &c1 : &c0)->mac[0] = 2;
		(i ? &c1 : &c0)->mac[5] = (uint8_t)(i + 1);
		(i ? &c1 : &c0)->ipv4 = 0x0A000001u + (uint32_t)i;
	}
	c0.qpc_entries = 2;
	c0.qpc_miss_ns = 700;
	sim_init_cfg(&s, &c0, &c1, 100);
	for (int i = 0; i < 2; i++) {
		cq[i] = ne_cq_create(s.nic[i], 64);
		mem[i] = calloc(1, 4096);
		memset(&ma, 0, sizeof(ma));
		ma.addr = mem[i];
		ma.len = 4096;
		ma.access = NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE;
		ne_mr_reg(s.nic[i], &ma, &key[i]);
	}
	for (int k = 0; k < 3; k++)
		sim_connect(&s, &qa[k], &qb[k], cq[0], cq[1], 1024, 1, 2, 14, 7, 7);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = NE_WR_RDMA_WRITE;
	wr.length = 8;
	wr.lkey = key[0];
	wr.rkey = key[1];
	ne_post_send(s.nic[0], qa[0], &wr, 0);
	/* the first packet waits for its context: leaves at t = 700 */
	sim_run(&s, 1000000, NULL, NULL);
	assert_int_equal(s.log[0].t, 700);
	ne_nic_get_counters(s.nic[0], &c);
	assert_int_equal(c.qpc_misses, 1);
	/* three QPs round-robin through a 2-entry cache: every access misses */
	s.nlog = 0;
	for (int r = 0; r < 2; r++)
		for (int k = 0; k < 3; k++)
			ne_post_send(s.nic[0], qa[k], &wr, s.now);
	sim_run(&s, s.now + 1000000, NULL, NULL);
	ne_nic_get_counters(s.nic[0], &c);
	assert_true(c.qpc_misses >= 6);
	assert_true(c.qpc_hits >= 1);
	sim_free(&s);
	free(mem[0]);
	free(mem[1]);
}

static void test_link_down(void **state)
{
	struct fx f;
	uint8_t fr[NE_MAX_FRAME];
	size_t len;
	struct ne_counters c;

	(void)state;
	fx_init(&f, 5000, 1024, 10, 20, 12, 7, 7);
	post(&f, 0, NE_WR_RDMA_WRITE, 1, 0, 8, 0, 0);
	ne_nic_set_link(f.s.nic[0], false);
	assert_int_equal(ne_nic_poll_tx(f.s.nic[0], 0, fr, sizeof(fr), &len), 0);
	assert_int_equal(ne_nic_rx(f.s.nic[0], fr, 100, 0), NE_RX_LINK_DOWN);
	ne_nic_set_link(f.s.nic[0], true);
	assert_int_equal(ne_nic_poll_tx(f.s.nic[0], 0, fr, 100, &len), -ENOSPC);
	assert_int_equal(ne_nic_poll_tx(f.s.nic[0], 0, fr, sizeof(fr), &len), 1);
	ne_nic_get_counters(f.s.nic[0], &c);
	assert_int_equal(c.link_downed, 1);
	assert_int_equal(c.send_err, 1);
	fx_free(&f);
}

/* Several messages in flight and a mix of operations on one QP. */
static void test_pipeline_mix(void **state)
{
	struct fx f;
	struct done d;

	(void)state;
	fx_init(&f, 20000, 1024, 0xFFFF00, 0x10, 12, 7, 7);
	sim_fill(f.mem[0], 65536, 1);
	sim_fill(f.mem[1] + 100000, 65536, 2);
	memset(&d, 0, sizeof(d));
	d.f = &f;
	d.want[0] = 6;
	d.want[1] = 2;
	post_recv(&f, 1, 11, 300000, 20000);
	post_recv(&f, 1, 12, 400000, 20000);
	post(&f, 0, NE_WR_RDMA_WRITE, 1, 0, 10000, 0, 0);
	post(&f, 0, NE_WR_RDMA_READ, 2, 200000, 30000, 100000, 0);
	post(&f, 0, NE_WR_SEND, 3, 10000, 15000, 0, 0);
	post(&f, 0, NE_WR_RDMA_READ, 4, 240000, 1, 130000, 0);
	post(&f, 0, NE_WR_RDMA_WRITE_WITH_IMM, 5, 30000, 5000, 50000, 42);
	post(&f, 0, NE_WR_RDMA_WRITE, 6, 40000, 3, 60000, 0);
	assert_true(sim_run(&f.s, 10000000000ull, got_all, &d));
	for (int i = 0; i < 6; i++) {
		assert_int_equal(d.wc[0][i].wr_id, (uint64_t)i + 1); /* in order */
		assert_int_equal(d.wc[0][i].status, NE_WC_SUCCESS);
	}
	assert_memory_equal(f.mem[0], f.mem[1], 10000);
	assert_memory_equal(f.mem[0] + 200000, f.mem[1] + 100000, 30000);
	assert_memory_equal(f.mem[1] + 300000, f.mem[0] + 10000, 15000);
	assert_int_equal(f.mem[0][240000], f.mem[1][130000]);
	assert_memory_equal(f.mem[1] + 50000, f.mem[0] + 30000, 5000);
	assert_memory_equal(f.mem[1] + 60000, f.mem[0] + 40000, 3);
	assert_int_equal(d.wc[1][0].wr_id, 11);
	assert_int_equal(d.wc[1][1].opcode, NE_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(d.wc[1][1].imm_data, 42);
	fx_free(&f);
}


/* Two AckReq packets executed before the responder transmits: one ACK, for the later PSN. */
static void test_ack_coalescing(void **state)
{
	struct fx f;
	uint8_t fr[2][NE_MAX_FRAME], out[NE_MAX_FRAME];
	size_t len[2], olen;
	struct rl_pkt p;
	struct ne_counters c;

	(void)state;
	fx_init(&f, 5000, 1024, 10, 20, 12, 7, 7);
	post(&f, 0, NE_WR_RDMA_WRITE, 1, 0, 8, 0, 0);
	post(&f, 0, NE_WR_RDMA_WRITE, 2, 0, 8, 64, 0);
	assert_int_equal(ne_nic_poll_tx(f.s.nic[0], 0, fr[0], sizeof(fr[0]), &len[0]), 1);
	assert_int_equal(ne_nic_poll_tx(f.s.nic[0], 100, fr[1], sizeof(fr[1]), &len[1]), 1);
	assert_int_equal(ne_nic_rx(f.s.nic[1], fr[0], len[0], 200), NE_RX_OK);
	assert_int_equal(ne_nic_rx(f.s.nic[1], fr[1], len[1], 200), NE_RX_OK);
	assert_int_equal(ne_nic_poll_tx(f.s.nic[1], 200, out, sizeof(out), &olen), 1);
	assert_int_equal(rl_parse(out, olen, &p), RL_PARSE_OK);
	assert_int_equal(p.bth.opcode, RL_OP_ACK);
	assert_int_equal(p.bth.psn, 11);
	assert_int_equal(p.bth.aeth_msn, 2);
	assert_int_equal(ne_nic_poll_tx(f.s.nic[1], 300, out, sizeof(out), &olen), 0);
	ne_nic_get_counters(f.s.nic[1], &c);
	assert_int_equal(c.ack_coalesced, 1);
	assert_int_equal(c.acks_sent, 1);
	/* the one ACK completes both WRITEs (coalesced ACK at the requester) */
	{
		struct ne_wc wc[2];

		assert_int_equal(ne_nic_rx(f.s.nic[0], out, olen, 400), NE_RX_OK);
		assert_int_equal(ne_cq_poll(f.cq[0], wc, 2), 2);
		assert_int_equal(wc[0].wr_id, 1);
		assert_int_equal(wc[1].wr_id, 2);
	}
	fx_free(&f);
}


/* Random damage to valid frames, with the ICRC recomputed half of the time so
 * the transport code sees the damage: nothing may crash (run under ASan/UBSan),
 * every call returns a documented status, and the NICs keep draining. */
static void test_fuzz_rx(void **state)
{
	struct fx f;
	static uint8_t frames[64][NE_MAX_FRAME];
	size_t flen[64], nf = 0, len;
	uint32_t x = 12345;
	uint8_t bad[NE_MAX_FRAME], out[NE_MAX_FRAME];

	(void)state;
	fx_init(&f, 5000, 1024, 0xFFFFFE, 20, 6, 7, 7);
	sim_fill(f.mem[0], 8192, 4);
	for (int i = 0; i < 4; i++)
		post_recv(&f, 1, (uint64_t)i, (uint32_t)i * 4096, 4096);
	post(&f, 0, NE_WR_SEND_WITH_IMM, 1, 0, 2500, 0, 7);
	post(&f, 0, NE_WR_RDMA_WRITE, 2, 0, 3000, 9000, 0);
	post(&f, 0, NE_WR_RDMA_READ, 3, 20000, 2100, 100, 0);
	post(&f, 0, NE_WR_RDMA_WRITE_WITH_IMM, 4, 0, 10, 30000, 9);
	/* requests from NIC 0, then the answers of NIC 1 */
	while (nf < 32 && ne_nic_poll_tx(f.s.nic[0], nf * 1000, frames[nf], NE_MAX_FRAME, &flen[nf]) == 1)
		nf++;
	for (size_t i = 0, n = nf; i < n; i++)
		ne_nic_rx(f.s.nic[1], frames[i], flen[i], 100000);
	while (nf < 64 &&
	       ne_nic_poll_tx(f.s.nic[1], 100000 + nf * 1000, frames[nf], NE_MAX_FRAME, &flen[nf]) == 1)
		nf++;
	assert_true(nf > 12);
	fx_free(&f);

	for (int round = 0; round < 8; round++) {
		fx_init(&f, 5000, 1024, 0xFFFFFE, 20, 6, 7, 7);
		for (int i = 0; i < 4; i++)
			post_recv(&f, 1, (uint64_t)i, (uint32_t)i * 4096, 4096);
		for (int it = 0; it < 3000; it++) {
			size_t k, l;
			int nmut, st, to;
			struct rl_pkt p;

			x = x * 1103515245u + 12345u;
			k = (x >> 8) % nf;
			l = flen[k];
			memcpy(bad, frames[k], l);
			x = x * 1103515245u + 12345u;
			nmut = 1 + (int)((x >> 10) % 4);
			for (int m = 0; m < nmut; m++) {
				x = x * 1103515245u + 12345u;
				/* mostly the headers (IPv4 .. extended headers) */
				size_t pos = (x >> 4) % 8 ? 14 + (x >> 12) % 60 : (x >> 12) % l;

				if (pos < l)
					bad[pos] ^= (uint8_t)(1u << ((x >> 20) % 8));
			}
			x = x * 1103515245u + 12345u;
			if ((x >> 16) % 8 == 0)
				l = (x >> 3) % (l + 1);
			if ((x >> 9) & 1 && rl_parse(bad, l, &p) == RL_PARSE_OK && p.is_roce)
				rl_icrc_store(bad, &p);
			to = rl_parse(bad, l, &p) == RL_PARSE_OK && p.ip_version == 4 && p.dst[3] == 1 ? 0 : 1;
			st = ne_nic_rx(f.s.nic[to], bad, l, (uint64_t)it * 1000);
			assert_true(st <= 0 && st >= NE_RX_CNP);
			for (int i = 0; i < 2; i++)
				while (ne_nic_poll_tx(f.s.nic[i], (uint64_t)it * 1000, out, sizeof(out), &len) == 1) {
					assert_int_equal(rl_parse(out, len, &p), RL_PARSE_OK);
					assert_true(rl_icrc_verify(out, &p));
				}
		}
		fx_free(&f);
	}
}

/* ------------------------------------------------------------------ */
/* completion notification: called once per queued completion, on the CQ that
 * got it, and never for a CQ with notification turned off */

struct notify_count {
	struct ne_cq *cq;
	int calls;
	uint32_t seen_count; /* ne_cq_count at the last call */
};

static void count_notify(void *ctx, struct ne_cq *cq)
{
	struct notify_count *nc = ctx;

	assert_ptr_equal(cq, nc->cq);
	nc->calls++;
	nc->seen_count = ne_cq_count(cq);
}

static void test_cq_notify(void **state)
{
	struct fx f;
	struct done d = {0};
	struct notify_count nc[2] = {{0}};

	(void)state;
	fx_init(&f, 1000, 1024, 100, 200, 14, 7, 7);
	for (int i = 0; i < 2; i++) {
		nc[i].cq = f.cq[i];
		assert_int_equal(ne_cq_set_notify(f.cq[i], count_notify, &nc[i]), 0);
	}
	assert_int_equal(ne_cq_set_notify(NULL, count_notify, NULL), -EINVAL);
	/* three signaled WRITE WITH IMM from 0 to 1: three send completions on
	 * cq[0], three receive completions on cq[1] */
	for (int k = 0; k < 3; k++) {
		post_recv(&f, 1, 10 + k, 0, 0);
		post(&f, 0, NE_WR_RDMA_WRITE_WITH_IMM, k, 0, 4000, 0, k);
	}
	/* count before polling: each call saw one more completion queued */
	d.f = &f;
	d.want[0] = 3;
	d.want[1] = 3;
	assert_true(sim_run(&f.s, 10000000, got_all, &d));
	assert_int_equal(nc[0].calls, 3);
	assert_int_equal(nc[1].calls, 3);
	/* turned off: no more calls */
	assert_int_equal(ne_cq_set_notify(f.cq[0], NULL, NULL), 0);
	post_recv(&f, 1, 20, 0, 0);
	post(&f, 0, NE_WR_RDMA_WRITE_WITH_IMM, 9, 0, 100, 0, 9);
	d.want[0] = 4;
	d.want[1] = 4;
	assert_true(sim_run(&f.s, 10000000, got_all, &d));
	assert_int_equal(nc[0].calls, 3);
	assert_int_equal(nc[1].calls, 4);
	fx_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_psn_math),
		cmocka_unit_test(test_cq_notify),
		cmocka_unit_test(test_sport),
		cmocka_unit_test(test_sport_policies),
		cmocka_unit_test(test_state_machine),
		cmocka_unit_test(test_write_sizes),
		cmocka_unit_test(test_send_sizes),
		cmocka_unit_test(test_read_sizes),
		cmocka_unit_test(test_imm),
		cmocka_unit_test(test_drop_write),
		cmocka_unit_test(test_drop_send),
		cmocka_unit_test(test_drop_read_response),
		cmocka_unit_test(test_drop_read_request),
		cmocka_unit_test(test_drop_ack),
		cmocka_unit_test(test_reorder_nak),
		cmocka_unit_test(test_duplicate_send),
		cmocka_unit_test(test_duplicate_read),
		cmocka_unit_test(test_retry_exceeded),
		cmocka_unit_test(test_rnr),
		cmocka_unit_test(test_remote_access_error),
		cmocka_unit_test(test_bad_frames),
		cmocka_unit_test(test_line_rate),
		cmocka_unit_test(test_qpc_cache),
		cmocka_unit_test(test_link_down),
		cmocka_unit_test(test_pipeline_mix),
		cmocka_unit_test(test_ack_coalescing),
		cmocka_unit_test(test_fuzz_rx),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
