/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the emulated NIC's receive path (ne_nic_rx), through
 * the public API only, on a connected pair (tests/nic_emul/ne_sim: NIC 0
 * 10.0.0.1 and NIC 1 10.0.0.2, one RC QP each, receives posted, as
 * sim_init() makes them but with room for 4 QPs). The input
 * is a list of records [op][len][bytes]:
 *   op & 1  the bytes are a whole frame for NIC 1, as they come;
 *   else    they follow the Ethernet/IPv4/UDP headers of a real frame from
 *           NIC 0 to NIC 1 (BTH onwards; op & 2 sets the BTH destination QP
 *           to NIC 1's QP), with lengths and ICRC made right, so the frame
 *           reaches the transport's checks instead of failing the first one;
 *   op >> 2 microseconds pass first.
 * Whatever NIC 1 answers goes to NIC 0 and back, a bounded number of frames,
 * and completions are polled. Any status ne_nic_rx() documents is fine; a
 * crash, a sanitizer report or an undocumented status is a finding.
 * Built with -Dfuzz=true under clang; run by scripts/fuzz.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "ne_nic.h"
#include "ne_sim.h"
#include "rl_bytes.h"
#include "rl_icrc.h"
#include "rl_parse.h"

#define RATE_BPS 100000000000ull
#define DELAY_NS 1000
#define MTU 1024
#define BUF_LEN 65536u
#define RECVS 16
#define HDR_LEN 42 /* Ethernet 14 + IPv4 20 + UDP 8 */
#define BOUNCE_MAX 64
#define NICS_QPS 4
#define NS_PER_US 1000
#define RX_STATUS_MIN NE_RX_CNP /* the last documented enum ne_rx_status */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct pair {
	struct sim s;
	struct ne_cq *cq[2];
	uint32_t qp[2], key[2];
	uint8_t *mem[2];
	uint8_t tmpl[NE_MAX_FRAME]; /* a real frame NIC 0 -> NIC 1 */
	size_t tmpl_len;
};

static void pair_init(struct pair *p)
{
	struct ne_nic_config c[2];

	memset(p, 0, sizeof(*p));
	for (int i = 0; i < 2; i++) { /* sim_init()'s NICs, with room for a few QPs only: */
		ne_nic_config_default(&c[i]); /* poll_tx scans them all, per frame */
		c[i].mac[0] = 0x02;
		c[i].mac[5] = (uint8_t)(i + 1);
		c[i].ipv4 = 0x0A000001u + (uint32_t)i;
		c[i].line_rate_bps = RATE_BPS;
		c[i].max_qps = NICS_QPS;
		c[i].max_mrs = NICS_QPS;
	}
	sim_init_cfg(&p->s, &c[0], &c[1], DELAY_NS);
	if (p->s.nic[0] == NULL || p->s.nic[1] == NULL)
		abort();
	for (int i = 0; i < 2; i++) {
		struct ne_mr_attr ma = {0};
		p->cq[i] = ne_cq_create(p->s.nic[i], 256);
		p->mem[i] = calloc(1, BUF_LEN);
		ma.addr = p->mem[i];
		ma.len = BUF_LEN;
		ma.iova = 0x10000;
		ma.access = NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE | NE_ACCESS_REMOTE_READ;
		if (p->cq[i] == NULL || ne_mr_reg(p->s.nic[i], &ma, &p->key[i]) != 0)
			abort();
	}
	sim_connect(&p->s, &p->qp[0], &p->qp[1], p->cq[0], p->cq[1], MTU, 100, 200, 14, 7, 7);
	for (int i = 0; i < RECVS; i++) {
		struct ne_recv_wr rw = {.wr_id = (uint64_t)i, .addr = 0x10000, .length = BUF_LEN,
					.lkey = p->key[1]};
		if (ne_post_recv(p->s.nic[1], p->qp[1], &rw) != 0)
			abort();
	}
	/* the template: NIC 0's first SEND */
	struct ne_send_wr wr = {.opcode = NE_WR_SEND, .send_flags = NE_SEND_SIGNALED,
				.local_addr = 0x10000, .length = 64, .lkey = p->key[0]};
	if (ne_post_send(p->s.nic[0], p->qp[0], &wr, 0) != 0 ||
	    ne_nic_poll_tx(p->s.nic[0], 0, p->tmpl, sizeof(p->tmpl), &p->tmpl_len) != 1 ||
	    p->tmpl_len < HDR_LEN)
		abort();
}

static void pair_free(struct pair *p)
{
	sim_free(&p->s);
	free(p->mem[0]);
	free(p->mem[1]);
}

/* Feed a frame to NIC i in an exact-size buffer; check the status is a documented one. */
static void rx(struct pair *p, int i, const uint8_t *f, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);

	memcpy(copy, f, len);
	int rc = ne_nic_rx(p->s.nic[i], copy, len, p->s.now);
	free(copy);
	if (rc > 0 || rc < RX_STATUS_MIN)
		abort();
}

/* The IPv4 header checksum of the 20-byte header at ip. */
static void ipv4_csum(uint8_t *ip)
{
	uint32_t sum = 0;

	rl_put_be16(ip + 10, 0);
	for (int i = 0; i < 20; i += 2)
		sum += rl_get_be16(ip + i);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	rl_put_be16(ip + 10, (uint16_t)~sum);
}

/* The template's headers, then body as BTH onwards; lengths, checksum and ICRC fixed. */
static void rx_templated(struct pair *p, const uint8_t *body, size_t n, bool to_qp)
{
	uint8_t f[NE_MAX_FRAME + HDR_LEN];
	struct rl_pkt pk;

	if (n > sizeof(f) - HDR_LEN)
		n = sizeof(f) - HDR_LEN;
	memcpy(f, p->tmpl, HDR_LEN);
	memcpy(f + HDR_LEN, body, n);
	rl_put_be16(f + 14 + 2, (uint16_t)(20 + 8 + n));
	rl_put_be16(f + 14 + 20 + 4, (uint16_t)(8 + n));
	ipv4_csum(f + 14);
	if (to_qp && n >= 8)
		rl_put_be32(f + HDR_LEN + 4, (rl_get_be32(f + HDR_LEN + 4) & 0xff000000u) | p->qp[1]);
	if (rl_parse(f, HDR_LEN + n, &pk) == RL_PARSE_OK && pk.is_roce)
		rl_icrc_store(f, &pk);
	rx(p, 1, f, HDR_LEN + n);
}

/* Let the two NICs answer each other for a while; poll completions. */
static void bounce(struct pair *p)
{
	uint8_t f[NE_MAX_FRAME];
	size_t len;
	struct ne_wc wc[8];

	for (int k = 0, idle = 0; k < BOUNCE_MAX && idle < 2; k++) {
		int from = k & 1;
		if (ne_nic_poll_tx(p->s.nic[from], p->s.now, f, sizeof(f), &len) == 1) {
			rx(p, 1 - from, f, len);
			idle = 0;
		} else {
			idle++; /* neither NIC has a frame ready: done */
		}
		p->s.now += DELAY_NS;
	}
	for (int i = 0; i < 2; i++)
		while (ne_cq_poll(p->cq[i], wc, 8) > 0)
			;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pair p;
	size_t i = 0;

	pair_init(&p);
	while (i + 3 <= size) {
		uint8_t op = data[i];
		size_t n = rl_get_be16(data + i + 1);
		i += 3;
		if (n > size - i)
			n = size - i;
		p.s.now += (uint64_t)(op >> 2) * NS_PER_US;
		if (op & 1)
			rx(&p, 1, data + i, n);
		else
			rx_templated(&p, data + i, n, op & 2);
		i += n;
		bounce(&p);
	}
	pair_free(&p);
	return 0;
}
