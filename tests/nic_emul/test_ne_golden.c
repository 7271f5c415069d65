/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wire test against Linux rxe: rxe-rc-ud.pcap holds traffic of two rxe VMs
 * (10.99.0.1 and 10.99.0.2, path MTU 1024). Each test configures emulated
 * QPs like the capture's (QPNs, PSNs, addresses, MTU, rkeys, VAs), performs
 * the same operation with the same payload, and requires the frames our NIC
 * builds to be byte-identical to rxe's: Ethernet, IPv4 (DF, TTL 64, DSCP 0,
 * checksum), UDP (source port, checksum 0), BTH (opcode, flags, pad, P_Key,
 * QPN, AckReq, PSN), RETH/AETH, payload, pad and ICRC.
 *
 * The only input taken from the capture that our NIC does not derive is
 * the IPv4 identification: Linux draws it from a per-destination generator
 * shared with other traffic, so the test sets it (ne_nic_set_ip_id) to the
 * captured value where the sequence jumps; within a burst it increments
 * by one per frame on both sides.
 *
 * Captured frames are also fed into our responder and requester, which must
 * accept them, deliver the data and answer exactly as rxe did.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pcap/pcap.h>

#include "ne_nic.h"
#include "ne_sim.h"
#include "rl_icrc.h"
#include "rl_parse.h"

#ifndef NE_TESTDATA_DIR
#define NE_TESTDATA_DIR "tests/testdata"
#endif

#define MAXF 200

static uint8_t *gold[MAXF + 1];
static uint32_t gold_len[MAXF + 1];
static int ngold;

static int load_pcap(void **state)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc;
	struct pcap_pkthdr *h;
	const u_char *d;

	(void)state;
	pc = pcap_open_offline(NE_TESTDATA_DIR "/rxe-rc-ud.pcap", err);
	if (!pc) {
		fprintf(stderr, "pcap: %s\n", err);
		return -1;
	}
	while (ngold < MAXF && pcap_next_ex(pc, &h, &d) == 1) {
		ngold++;
		gold[ngold] = malloc(h->caplen);
		memcpy(gold[ngold], d, h->caplen);
		gold_len[ngold] = h->caplen;
	}
	pcap_close(pc);
	return ngold == 145 ? 0 : -1;
}

static int free_pcap(void **state)
{
	(void)state;
	for (int i = 1; i <= ngold; i++)
		free(gold[i]);
	return 0;
}

static const uint8_t mac1[6] = {0x52, 0x54, 0x00, 0x99, 0x00, 0x01};
static const uint8_t mac2[6] = {0x52, 0x54, 0x00, 0x99, 0x00, 0x02};
#define IP1 0x0A630001u /* 10.99.0.1 */
#define IP2 0x0A630002u /* 10.99.0.2 */

struct side {
	struct ne_nic *nic;
	struct ne_cq *cq;
	uint32_t qpn;
};

static void side_init(struct side *s, int host, uint32_t qpn, uint32_t dqpn, uint32_t sq_psn,
		      uint32_t rq_psn)
{
	struct ne_nic_config c;
	struct ne_qp_init_attr ia;
	struct ne_qp_attr a;
	const uint32_t m = NE_QP_STATE | NE_QP_AV | NE_QP_PATH_MTU | NE_QP_DEST_QPN | NE_QP_RQ_PSN;

	ne_nic_config_default(&c);
	memcpy(c.mac, host == 1 ? mac1 : mac2, 6);
	c.ipv4 = host == 1 ? IP1 : IP2;
	s->nic = ne_nic_create(&c);
	assert_non_null(s->nic);
	s->cq = ne_cq_create(s->nic, 256);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = s->cq;
	ia.max_send_wr = ia.max_recv_wr = 64;
	ia.qpn = qpn;
	ia.sq_sig_all = true;
	assert_int_equal(ne_qp_create(s->nic, &ia, &s->qpn), 0);
	memset(&a, 0, sizeof(a));
	a.state = NE_QPS_INIT;
	assert_int_equal(ne_qp_modify(s->nic, qpn, &a, NE_QP_STATE), 0);
	a.state = NE_QPS_RTR;
	a.dest_qpn = dqpn;
	a.rq_psn = rq_psn;
	a.path_mtu = 1024;
	a.dest_ipv4 = host == 1 ? IP2 : IP1;
	memcpy(a.dest_mac, host == 1 ? mac2 : mac1, 6);
	assert_int_equal(ne_qp_modify(s->nic, qpn, &a, m), 0);
	a.state = NE_QPS_RTS;
	a.sq_psn = sq_psn;
	assert_int_equal(ne_qp_modify(s->nic, qpn, &a, NE_QP_STATE | NE_QP_SQ_PSN), 0);
}

static uint32_t reg(struct side *s, void *p, size_t len, uint64_t iova, uint32_t key)
{
	struct ne_mr_attr ma = {.addr = p, .len = len, .iova = iova, .key = key,
				.access = NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE |
					  NE_ACCESS_REMOTE_READ};
	uint32_t k;

	assert_int_equal(ne_mr_reg(s->nic, &ma, &k), 0);
	return k;
}

static uint16_t gold_ip_id(int f)
{
	return (uint16_t)(gold[f][18] << 8 | gold[f][19]);
}

static void gold_pkt(int f, struct rl_pkt *p)
{
	assert_int_equal(rl_parse(gold[f], gold_len[f], p), RL_PARSE_OK);
	assert_true(p->is_roce);
	assert_true(rl_icrc_verify(gold[f], p));
}

/* Our next frame must equal captured frame f byte for byte. */
static void expect_frame(struct side *s, int f, uint64_t now)
{
	uint8_t buf[NE_MAX_FRAME];
	size_t len = 0;
	struct rl_pkt p;

	assert_int_equal(ne_nic_poll_tx(s->nic, now, buf, sizeof(buf), &len), 1);
	assert_int_equal(rl_parse(buf, len, &p), RL_PARSE_OK);
	assert_true(rl_icrc_verify(buf, &p));
	if (len != gold_len[f] || memcmp(buf, gold[f], len) != 0) {
		size_t i = 0;

		while (i < len && i < gold_len[f] && buf[i] == gold[f][i])
			i++;
		print_error("frame %d: length %zu (rxe %u), first difference at byte %zu: "
			    "ours 0x%02x rxe 0x%02x\n",
			    f, len, gold_len[f], i, i < len ? buf[i] : 0,
			    i < gold_len[f] ? gold[f][i] : 0);
	}
	assert_int_equal(len, gold_len[f]);
	assert_memory_equal(buf, gold[f], len);
}

static void expect_idle(struct side *s, uint64_t now)
{
	uint8_t buf[NE_MAX_FRAME];
	size_t len;

	assert_int_equal(ne_nic_poll_tx(s->nic, now, buf, sizeof(buf), &len), 0);
}

/* ibv_rc_pingpong -s 64: frames 1..20, QP 0x12 (10.99.0.2) <-> QP 0x11 (10.99.0.1). */
static void test_rc_pingpong(void **state)
{
	struct side a, b; /* a = 10.99.0.1 QP 0x11, b = 10.99.0.2 QP 0x12 */
	uint8_t bufa[64 * 8], bufb[64 * 8];
	uint32_t ka, kb;
	struct ne_wc wc;
	uint64_t now = 1000;

	(void)state;
	side_init(&a, 1, 0x11, 0x12, 13380830, 8612450);
	side_init(&b, 2, 0x12, 0x11, 8612450, 13380830);
	memset(bufa, 0x7b, sizeof(bufa));
	memset(bufb, 0x7b, sizeof(bufb));
	ka = reg(&a, bufa, sizeof(bufa), 0x10000, 0);
	kb = reg(&b, bufb, sizeof(bufb), 0x20000, 0);
	for (int i = 0; i < 8; i++) {
		struct ne_recv_wr rw = {.wr_id = 100 + (uint64_t)i, .length = 64};

		rw.addr = 0x10000 + 64 * (uint64_t)i;
		rw.lkey = ka;
		assert_int_equal(ne_post_recv(a.nic, a.qpn, &rw), 0);
		rw.addr = 0x20000 + 64 * (uint64_t)i;
		rw.lkey = kb;
		assert_int_equal(ne_post_recv(b.nic, b.qpn, &rw), 0);
	}
	memset(bufa, 0, sizeof(bufa));
	memset(bufb, 0, sizeof(bufb));

	for (int f = 1; f <= 20; f++, now += 1000) {
		struct rl_pkt p;
		struct side *snd, *rcv;

		gold_pkt(f, &p);
		snd = p.src[3] == 1 ? &a : &b;
		rcv = snd == &a ? &b : &a;
		if (p.bth.opcode == RL_OP_SEND_ONLY) {
			struct ne_send_wr wr;
			uint8_t *mem = snd == &a ? bufa : bufb;

			memset(mem + 448, 0x7b, 64); /* the pingpong buffer */
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = (uint64_t)f;
			wr.opcode = NE_WR_SEND;
			wr.length = 64;
			wr.local_addr = (snd == &a ? 0x10000 : 0x20000) + 448;
			wr.lkey = snd == &a ? ka : kb;
			assert_int_equal(ne_post_send(snd->nic, snd->qpn, &wr, now), 0);
		}
		/* rxe's IPv4 ID generator is shared with other traffic: take it */
		ne_nic_set_ip_id(snd->nic, gold_ip_id(f));
		expect_frame(snd, f, now);
		expect_idle(snd, now);
		/* the captured frame into the peer */
		assert_int_equal(ne_nic_rx(rcv->nic, gold[f], gold_len[f], now + 500), NE_RX_OK);
		if (p.bth.opcode == RL_OP_SEND_ONLY) {
			assert_int_equal(ne_cq_poll(rcv->cq, &wc, 1), 1);
			assert_int_equal(wc.status, NE_WC_SUCCESS);
			assert_int_equal(wc.byte_len, 64);
			assert_int_equal(wc.opcode, NE_WC_RECV);
		} else {
			assert_int_equal(ne_cq_poll(rcv->cq, &wc, 1), 1);
			assert_int_equal(wc.status, NE_WC_SUCCESS);
			assert_int_equal(wc.opcode, NE_WC_SEND);
			assert_int_equal(wc.wr_id, (uint64_t)f - 1);
		}
	}
	for (int i = 0; i < 5 * 64; i++) {
		assert_int_equal(bufa[i], 0x7b);
		assert_int_equal(bufb[i], 0x7b);
	}
	ne_nic_destroy(a.nic);
	ne_nic_destroy(b.nic);
}

/* ib_write_bw -s 4096: frames 31..50 are five WRITEs of 4096 bytes on QP 0x14 -> 0x13,
 * PSNs 8042426.., IP IDs consecutive from 0xf615. */
static void test_write_bw(void **state)
{
	struct side a, b; /* b = requester 10.99.0.2 QP 0x14, a = responder QP 0x13 */
	uint8_t *src = calloc(1, 5 * 4096), *dst = calloc(1, 4096);
	uint32_t kb, off = 0;
	struct ne_wc wc;
	int msg = 0, acks = 0;
	uint64_t now = 1000;

	(void)state;
	side_init(&b, 2, 0x14, 0x13, 8042426, 1);
	side_init(&a, 1, 0x13, 0x14, 1, 8042426);
	/* the payload each message carried */
	for (int f = 31; f <= 50; f++) {
		struct rl_pkt p;

		gold_pkt(f, &p);
		if (p.bth.opcode == RL_OP_WRITE_FIRST) {
			off = (uint32_t)msg++ * 4096;
			assert_int_equal(p.bth.reth_dmalen, 4096);
		}
		memcpy(src + off, gold[f] + p.payload_off, p.payload_len);
		off += p.payload_len;
	}
	assert_int_equal(msg, 5);
	kb = reg(&b, src, 5 * 4096, 0x7f0000000000ull, 0);
	reg(&a, dst, 4096, 0x00005598e5b2a000ull, 0x491);
	for (int m = 0; m < 5; m++) {
		struct ne_send_wr wr;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uint64_t)m;
		wr.opcode = NE_WR_RDMA_WRITE;
		wr.length = 4096;
		wr.local_addr = 0x7f0000000000ull + (uint64_t)m * 4096;
		wr.lkey = kb;
		wr.remote_addr = 0x00005598e5b2a000ull;
		wr.rkey = 0x491;
		assert_int_equal(ne_post_send(b.nic, b.qpn, &wr, 0), 0);
	}
	ne_nic_set_ip_id(b.nic, gold_ip_id(31));
	for (int f = 31; f <= 50; f++, now += 100) {
		uint8_t buf[NE_MAX_FRAME];
		size_t len;
		struct rl_pkt p;

		expect_frame(&b, f, now);
		/* into the responder */
		assert_int_equal(ne_nic_rx(a.nic, gold[f], gold_len[f], now + 50), NE_RX_OK);
		gold_pkt(f, &p);
		if (p.bth.ackreq) {
			/* rxe answers an AckReq with ACK, PSN of the request, MSN = messages */
			assert_int_equal(ne_nic_poll_tx(a.nic, now + 60, buf, sizeof(buf), &len), 1);
			assert_int_equal(len, 62);
			assert_int_equal(rl_parse(buf, len, &p), RL_PARSE_OK);
			assert_true(rl_icrc_verify(buf, &p));
			assert_int_equal(p.bth.opcode, RL_OP_ACK);
			assert_int_equal(p.bth.dqpn, 0x14);
			assert_int_equal(p.sport, 49532);
			assert_int_equal(p.bth.aeth_syndrome, 0x1F);
			assert_int_equal(p.bth.aeth_msn, (uint32_t)++acks);
			assert_int_equal(p.bth.psn, 8042426 + 4 * acks - 1);
			assert_int_equal(p.bth.ackreq, 0);
			assert_int_equal(ne_nic_rx(b.nic, buf, len, now + 70), NE_RX_OK);
			assert_int_equal(ne_cq_poll(b.cq, &wc, 1), 1);
			assert_int_equal(wc.status, NE_WC_SUCCESS);
			assert_int_equal(wc.wr_id, (uint64_t)acks - 1);
			assert_memory_equal(dst, src + (acks - 1) * 4096, 4096);
		} else {
			expect_idle(&a, now + 60);
		}
	}
	assert_int_equal(acks, 5);
	ne_nic_destroy(a.nic);
	ne_nic_destroy(b.nic);
	free(src);
	free(dst);
}

/* ib_read_bw -s 8192: frames 61..70 are ten READ requests of QP 0x19 -> 0x18,
 * frames 71..100 part of the responses (the capture kept a subset). */
static void test_read_bw(void **state)
{
	struct side a, b; /* b = requester 10.99.0.2 QP 0x19, a = responder QP 0x18 */
	uint8_t *srv = calloc(1, 8192), *cli = calloc(1, 10 * 8192);
	uint32_t kb;
	uint32_t first_psn = 4002240;
	uint8_t (*resp)[1200] = calloc(80, 1200);
	uint32_t resp_len[80];
	struct ne_wc wc;
	int compared = 0;

	(void)state;
	side_init(&b, 2, 0x19, 0x18, first_psn, 1);
	side_init(&a, 1, 0x18, 0x19, 1, first_psn);
	/* the server buffer: the eight responses of the first READ */
	for (int f = 71; f <= 78; f++) {
		struct rl_pkt p;

		gold_pkt(f, &p);
		memcpy(srv + (p.bth.psn - first_psn) * 1024, gold[f] + p.payload_off, p.payload_len);
	}
	reg(&a, srv, 8192, 0x00005565b20b5000ull, 0x613);
	kb = reg(&b, cli, 10 * 8192, 0x10000000ull, 0);
	for (int m = 0; m < 10; m++) {
		struct ne_send_wr wr;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uint64_t)m;
		wr.opcode = NE_WR_RDMA_READ;
		wr.length = 8192;
		wr.local_addr = 0x10000000ull + (uint64_t)m * 8192;
		wr.lkey = kb;
		wr.remote_addr = 0x00005565b20b5000ull;
		wr.rkey = 0x613;
		assert_int_equal(ne_post_send(b.nic, b.qpn, &wr, 0), 0);
	}
	ne_nic_set_ip_id(b.nic, gold_ip_id(61));
	for (int f = 61; f <= 70; f++) {
		expect_frame(&b, f, 1000);
		assert_int_equal(ne_nic_rx(a.nic, gold[f], gold_len[f], 2000), NE_RX_OK);
	}
	expect_idle(&b, 1000);
	/* the responder answers 80 responses, in PSN order */
	ne_nic_set_ip_id(a.nic, gold_ip_id(71));
	for (int i = 0; i < 80; i++) {
		size_t len;

		assert_int_equal(ne_nic_poll_tx(a.nic, 3000, resp[i], 1200, &len), 1);
		resp_len[i] = (uint32_t)len;
	}
	expect_idle(&a, 3000);
	/* every captured response equals ours with the same PSN */
	for (int f = 71; f <= 100; f++) {
		struct rl_pkt p;
		uint32_t i;

		gold_pkt(f, &p);
		i = p.bth.psn - first_psn;
		assert_true(i < 80);
		assert_int_equal(resp_len[i], gold_len[f]);
		assert_memory_equal(resp[i], gold[f], gold_len[f]);
		compared++;
	}
	assert_int_equal(compared, 30);
	/* and the requester completes the ten READs with the data */
	for (int i = 0; i < 80; i++)
		assert_int_equal(ne_nic_rx(b.nic, resp[i], resp_len[i], 4000), NE_RX_OK);
	for (int m = 0; m < 10; m++) {
		assert_int_equal(ne_cq_poll(b.cq, &wc, 1), 1);
		assert_int_equal(wc.status, NE_WC_SUCCESS);
		assert_int_equal(wc.wr_id, (uint64_t)m);
		assert_int_equal(wc.opcode, NE_WC_RDMA_READ);
		assert_memory_equal(cli + m * 8192, srv, 8192);
	}
	ne_nic_destroy(a.nic);
	ne_nic_destroy(b.nic);
	free(srv);
	free(cli);
	free(resp);
}

/* ib_send_bw -s 3000: frames 101..130 are ten SENDs (first/middle/last) of QP 0x1a -> 0x19. */
static void test_send_bw(void **state)
{
	struct side a, b; /* b = requester 10.99.0.2 QP 0x1a, a = responder QP 0x19 */
	uint8_t *src = calloc(1, 10 * 3000), *dst = calloc(1, 10 * 3000);
	uint32_t kb, ka, off = 0;
	int msg = -1;
	struct ne_wc wc;

	(void)state;
	side_init(&b, 2, 0x1a, 0x19, 13255257, 1);
	side_init(&a, 1, 0x19, 0x1a, 1, 13255257);
	for (int f = 101; f <= 130; f++) {
		struct rl_pkt p;

		gold_pkt(f, &p);
		if (p.bth.opcode == RL_OP_SEND_FIRST)
			off = (uint32_t)++msg * 3000;
		memcpy(src + off, gold[f] + p.payload_off, p.payload_len);
		off += p.payload_len;
	}
	assert_int_equal(msg, 9);
	kb = reg(&b, src, 10 * 3000, 0x40000000ull, 0);
	ka = reg(&a, dst, 10 * 3000, 0x50000000ull, 0);
	for (int m = 0; m < 10; m++) {
		struct ne_send_wr wr;
		struct ne_recv_wr rw;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uint64_t)m;
		wr.opcode = NE_WR_SEND;
		wr.length = 3000;
		wr.local_addr = 0x40000000ull + (uint64_t)m * 3000;
		wr.lkey = kb;
		assert_int_equal(ne_post_send(b.nic, b.qpn, &wr, 0), 0);
		rw.wr_id = (uint64_t)m;
		rw.addr = 0x50000000ull + (uint64_t)m * 3000;
		rw.length = 3000;
		rw.lkey = ka;
		assert_int_equal(ne_post_recv(a.nic, a.qpn, &rw), 0);
	}
	ne_nic_set_ip_id(b.nic, gold_ip_id(101));
	for (int f = 101; f <= 130; f++) {
		expect_frame(&b, f, 1000);
		assert_int_equal(ne_nic_rx(a.nic, gold[f], gold_len[f], 2000), NE_RX_OK);
	}
	for (int m = 0; m < 10; m++) {
		assert_int_equal(ne_cq_poll(a.cq, &wc, 1), 1);
		assert_int_equal(wc.status, NE_WC_SUCCESS);
		assert_int_equal(wc.byte_len, 3000);
		assert_int_equal(wc.wr_id, (uint64_t)m);
	}
	assert_memory_equal(src, dst, 10 * 3000);
	ne_nic_destroy(a.nic);
	ne_nic_destroy(b.nic);
	free(src);
	free(dst);
}

/* Damaged copies of captured frames are dropped and counted. */
static void test_damaged_gold(void **state)
{
	struct side a;
	uint8_t buf[2048];
	struct ne_counters c;
	struct ne_recv_wr rw;
	uint8_t mem[64];
	struct ne_wc wc;

	(void)state;
	side_init(&a, 1, 0x11, 0x12, 13380830, 8612450);
	rw.wr_id = 1;
	rw.addr = 0x1000;
	rw.length = 64;
	rw.lkey = reg(&a, mem, sizeof(mem), 0x1000, 0);
	ne_post_recv(a.nic, a.qpn, &rw);
	memcpy(buf, gold[1], gold_len[1]);
	buf[60] ^= 0x10; /* payload */
	assert_int_equal(ne_nic_rx(a.nic, buf, gold_len[1], 1), NE_RX_BAD_ICRC);
	assert_int_equal(ne_nic_rx(a.nic, gold[1], 50, 1), NE_RX_MALFORMED);
	assert_int_equal(ne_nic_rx(a.nic, gold[21], gold_len[21], 1), NE_RX_UNKNOWN_QPN); /* UD QP 0x12 */
	/* a TTL/DSCP rewrite by a switch keeps the ICRC valid (masked fields) */
	memcpy(buf, gold[1], gold_len[1]);
	buf[14 + 1] = 0x68; /* DSCP 26 */
	buf[14 + 8] = 60;   /* TTL */
	assert_int_equal(ne_nic_rx(a.nic, buf, gold_len[1], 2), NE_RX_OK);
	assert_int_equal(ne_cq_poll(a.cq, &wc, 1), 1);
	assert_int_equal(wc.byte_len, 64);
	ne_nic_get_counters(a.nic, &c);
	assert_int_equal(c.icrc_err, 1);
	assert_int_equal(c.rcv_malformed, 1);
	assert_int_equal(c.rcv_unknown_qpn, 1);
	ne_nic_destroy(a.nic);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rc_pingpong),
		cmocka_unit_test(test_write_bw),
		cmocka_unit_test(test_read_bw),
		cmocka_unit_test(test_send_bw),
		cmocka_unit_test(test_damaged_gold),
	};

	return cmocka_run_group_tests(tests, load_pcap, free_pcap);
}
