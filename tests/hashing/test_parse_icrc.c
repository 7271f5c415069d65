/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parser and ICRC against real soft-RoCE packets (tests/testdata), and the
 * parser's error paths on crafted and truncated frames.
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

#include "golden.h"
#include "rl_bytes.h"
#include "rl_crc.h"
#include "rl_icrc.h"
#include "rl_parse.h"

static struct golden G;

static int setup(void **state)
{
	(void)state;
	return golden_load(&G);
}

static int teardown(void **state)
{
	(void)state;
	golden_free(&G);
	return 0;
}

/* Parse a CSV number ("0x..." hex or decimal); empty means absent (-1). */
static long long num(size_t row, const char *col)
{
	const char *s = golden_cell(&G, row, col);

	assert_non_null(s);
	if (*s == '\0')
		return -1;
	return strtoll(s, NULL, 0);
}

static void ip4_str(const uint8_t *a, char *buf, size_t n)
{
	snprintf(buf, n, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
}

/* Every frame parses to exactly what Wireshark read from it. */
static void test_golden_fields(void **state)
{
	(void)state;
	assert_int_equal(G.n_frames, 145);
	assert_int_equal(G.n_rows, G.n_frames);

	for (size_t i = 0; i < G.n_frames; i++) {
		struct rl_pkt p;
		char ip[32];
		int rc = rl_parse(G.frame[i].data, G.frame[i].len, &p);

		if (rc != RL_PARSE_OK)
			fail_msg("frame %zu: %s", i + 1, rl_parse_strerror(rc));
		assert_int_equal(num(i, "frame.number"), (long long)i + 1);
		assert_int_equal(num(i, "frame.len"), (long long)G.frame[i].len);
		ip4_str(p.src, ip, sizeof(ip));
		assert_string_equal(ip, golden_cell(&G, i, "ip.src"));
		ip4_str(p.dst, ip, sizeof(ip));
		assert_string_equal(ip, golden_cell(&G, i, "ip.dst"));
		assert_int_equal(num(i, "ip.dsfield"), (p.dscp << 2) | p.ecn);
		assert_int_equal(num(i, "ip.ttl"), p.ttl);
		assert_int_equal(num(i, "udp.srcport"), p.sport);
		assert_int_equal(num(i, "udp.dstport"), p.dport);
		assert_true(p.is_roce);
		assert_int_equal(num(i, "infiniband.bth.opcode"), p.bth.opcode);
		assert_int_equal(num(i, "infiniband.bth.se"), p.bth.se);
		assert_int_equal(num(i, "infiniband.bth.m"), p.bth.migreq);
		assert_int_equal(num(i, "infiniband.bth.padcnt"), p.bth.padcnt);
		assert_int_equal(num(i, "infiniband.bth.p_key"), p.bth.pkey);
		assert_int_equal(num(i, "infiniband.bth.destqp"), p.bth.dqpn);
		assert_int_equal(num(i, "infiniband.bth.a"), p.bth.ackreq);
		assert_int_equal(num(i, "infiniband.bth.psn"), p.bth.psn);
		/* Wireshark shows the four ICRC bytes as a big-endian number; rxe stores it little-endian */
		assert_int_equal(num(i, "infiniband.invariant.crc"),
				 __builtin_bswap32(rl_pkt_icrc_wire(G.frame[i].data, &p)));

		/* extended headers: present exactly when Wireshark shows them */
		long long va = num(i, "infiniband.reth.va");
		assert_int_equal(va >= 0, !!(p.bth.ext & RL_EXT_RETH));
		if (va >= 0) {
			assert_int_equal((unsigned long long)va, p.bth.reth_va);
			assert_int_equal(num(i, "infiniband.reth.r_key"), p.bth.reth_rkey);
			assert_int_equal(num(i, "infiniband.reth.dmalen"), p.bth.reth_dmalen);
		}
		long long syn = num(i, "infiniband.aeth.syndrome");
		assert_int_equal(syn >= 0, !!(p.bth.ext & RL_EXT_AETH));
		if (syn >= 0) {
			assert_int_equal(syn, p.bth.aeth_syndrome);
			assert_int_equal(num(i, "infiniband.aeth.msn"), p.bth.aeth_msn);
		}
		long long qkey = num(i, "infiniband.deth.q_key");
		assert_int_equal(qkey >= 0, !!(p.bth.ext & RL_EXT_DETH));
		if (qkey >= 0) {
			assert_int_equal(qkey, p.bth.deth_qkey);
			assert_int_equal(num(i, "infiniband.deth.srcqp"), p.bth.deth_srcqp);
		}
		/* lengths add up: headers + payload + pad + ICRC = UDP payload */
		assert_int_equal(p.payload_off + p.payload_len + p.bth.padcnt + 4,
				 p.l4_off + (G.frame[i].data[p.l4_off + 4] << 8 |
					     G.frame[i].data[p.l4_off + 5]));
	}
}

/* Every golden ICRC verifies. */
static void test_golden_icrc(void **state)
{
	(void)state;
	for (size_t i = 0; i < G.n_frames; i++) {
		struct rl_pkt p;

		assert_int_equal(rl_parse(G.frame[i].data, G.frame[i].len, &p), RL_PARSE_OK);
		if (!rl_icrc_verify(G.frame[i].data, &p))
			fail_msg("frame %zu: ICRC 0x%08x, computed 0x%08x", i + 1,
				 rl_pkt_icrc_wire(G.frame[i].data, &p),
				 rl_icrc_compute(G.frame[i].data, &p, NULL));
	}
}

/* True when byte off of an IPv4 RoCE frame is one the ICRC masks. */
static bool masked_v4(const struct rl_pkt *p, size_t off)
{
	size_t ip = p->l3_off, udp = p->l4_off, bth = p->bth_off;

	return off == ip + 1 || off == ip + 8 || off == ip + 10 || off == ip + 11 ||
	       off == udp + 6 || off == udp + 7 || off == bth + 4;
}

/*
 * Flipping any covered byte from the IP header to the ICRC breaks the ICRC
 * (offsets stay those of the original parse);
 * changing a masked one (TOS/DSCP/ECN, TTL, IP and UDP checksums, BTH byte 4)
 * does not.
 */
static void test_icrc_flip_every_byte(void **state)
{
	(void)state;
	for (size_t i = 0; i < G.n_frames; i++) {
		uint8_t *f = G.frame[i].data;
		struct rl_pkt p;

		assert_int_equal(rl_parse(f, G.frame[i].len, &p), RL_PARSE_OK);
		for (size_t off = p.l3_off; off < p.icrc_off; off++) {
			f[off] ^= 0x5a;
			if (rl_icrc_verify(f, &p) == !masked_v4(&p, off))
				fail_msg("frame %zu byte %zu: ICRC %s after the change", i + 1, off,
					 masked_v4(&p, off) ? "failed" : "still valid");
			f[off] ^= 0x5a;
		}
		assert_true(rl_icrc_verify(f, &p));
	}
}

/* A switch rewriting TTL and DSCP (the parse sees the new values) keeps the ICRC valid. */
static void test_icrc_ttl_dscp_rewrite(void **state)
{
	(void)state;
	for (size_t i = 0; i < G.n_frames; i++) {
		uint8_t *f = G.frame[i].data;
		uint8_t ttl, tos;
		struct rl_pkt p;

		assert_int_equal(rl_parse(f, G.frame[i].len, &p), RL_PARSE_OK);
		ttl = f[p.l3_off + 8];
		tos = f[p.l3_off + 1];
		f[p.l3_off + 8] = (uint8_t)(ttl - 1);
		f[p.l3_off + 1] = (26 << 2) | 3; /* DSCP 26, CE */
		assert_int_equal(rl_parse(f, G.frame[i].len, &p), RL_PARSE_OK);
		assert_int_equal(p.ttl, ttl - 1);
		assert_int_equal(p.dscp, 26);
		assert_int_equal(p.ecn, 3);
		assert_true(rl_icrc_verify(f, &p));
		f[p.l3_off + 8] = ttl;
		f[p.l3_off + 1] = tos;
	}
}

/* The bytes the ICRC covers, as the spec words them: 8 x 0xFF, then the frame
 * from the IP header up to the ICRC with the variant fields set to ones.
 * Returns a malloc'd copy of *n bytes. */
static uint8_t *spec_masked(const uint8_t *f, const struct rl_pkt *p, size_t *n)
{
	size_t len = p->icrc_off - p->l3_off;
	uint8_t *b = malloc(8 + len);

	memset(b, 0xff, 8);
	memcpy(b + 8, f + p->l3_off, len);
	uint8_t *ip = b + 8, *udp = ip + p->l3_len, *bth = udp + 8;
	if (p->ip_version == 4) {
		ip[1] = ip[8] = ip[10] = ip[11] = 0xff;
	} else {
		ip[0] |= 0x0f;
		ip[1] = ip[2] = ip[3] = ip[7] = 0xff;
	}
	udp[6] = udp[7] = 0xff;
	bth[4] = 0xff;
	*n = 8 + len;
	return b;
}

/* The ICRC as the spec words it, written independently: bitwise CRC-32 over a masked copy. */
static uint32_t spec_icrc(const uint8_t *f, const struct rl_pkt *p)
{
	size_t n;
	uint8_t *b = spec_masked(f, p, &n);
	uint32_t crc = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		crc ^= b[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & -(crc & 1));
	}
	free(b);
	return ~crc;
}

/* The ICRC through the slice-by-8 table engine (the implementation before ISA-L). */
static uint32_t table_icrc(const uint8_t *f, const struct rl_pkt *p)
{
	size_t n;
	uint8_t *b = spec_masked(f, p, &n);
	uint32_t crc = ~rl_crc32_update_sw(0xffffffffu, b, n);

	free(b);
	return crc;
}

/* Build an IPv6 RoCEv2 frame carrying the UDP datagram of golden frame i. */
static size_t to_ipv6(const uint8_t *f4, const struct rl_pkt *p4, uint8_t *out)
{
	size_t udp_len = p4->ip_total_len - p4->l3_len;

	memcpy(out, f4, 12);
	out[12] = 0x86;
	out[13] = 0xdd;
	uint8_t *ip = out + 14;
	ip[0] = 0x60 | (5 << 0); /* version 6, traffic class high nibble 0 */
	ip[1] = 0xa0;            /* traffic class low nibble, flow label */
	ip[2] = 0x12;
	ip[3] = 0x34;
	ip[4] = (uint8_t)(udp_len >> 8);
	ip[5] = (uint8_t)udp_len;
	ip[6] = 17;
	ip[7] = 64;
	for (int k = 0; k < 16; k++) {
		ip[8 + k] = (uint8_t)(0x20 + k);
		ip[24 + k] = (uint8_t)(0x40 + k);
	}
	memcpy(ip + 40, f4 + p4->l4_off, udp_len);
	return 14 + 40 + udp_len;
}

/* IPv6: our ICRC equals the independent spec version, and masking holds. */
static void test_icrc_ipv6(void **state)
{
	(void)state;
	uint8_t f6[9000];

	for (size_t i = 0; i < G.n_frames; i++) {
		struct rl_pkt p4, p6;

		assert_int_equal(rl_parse(G.frame[i].data, G.frame[i].len, &p4), RL_PARSE_OK);
		/* the spec version agrees with rxe's packets too */
		assert_int_equal(spec_icrc(G.frame[i].data, &p4), rl_pkt_icrc_wire(G.frame[i].data, &p4));

		size_t n = to_ipv6(G.frame[i].data, &p4, f6);
		assert_int_equal(rl_parse(f6, n, &p6), RL_PARSE_OK);
		assert_int_equal(p6.ip_version, 6);
		assert_int_equal(p6.bth.psn, p4.bth.psn);
		assert_int_equal(p6.flow_label, 0x01234);
		assert_int_equal(rl_icrc_store(f6, &p6), 0);
		assert_int_equal(rl_parse(f6, n, &p6), RL_PARSE_OK);
		assert_int_equal(rl_pkt_icrc_wire(f6, &p6), spec_icrc(f6, &p6));
		assert_true(rl_icrc_verify(f6, &p6));
		/* hop limit, traffic class and flow label are masked */
		f6[14 + 7] = 3;
		f6[14 + 1] = 0x5f;
		f6[14 + 3] = 0x99;
		assert_true(rl_icrc_verify(f6, &p6));
		/* addresses are not */
		f6[14 + 8] ^= 1;
		assert_false(rl_icrc_verify(f6, &p6));
	}
}

/* Every truncation of every golden frame is an error, and never reads out of bounds (ASan). */
static void test_truncations(void **state)
{
	(void)state;
	for (size_t i = 0; i < G.n_frames; i++) {
		for (size_t len = 0; len < G.frame[i].len; len++) {
			uint8_t *copy = malloc(len ? len : 1); /* exact size: ASan sees any overread */
			struct rl_pkt p;

			memcpy(copy, G.frame[i].data, len);
			int rc = rl_parse(copy, len, &p);
			if (rc == RL_PARSE_OK)
				fail_msg("frame %zu cut to %zu bytes parsed OK", i + 1, len);
			free(copy);
		}
	}
}

/* A minimal IPv4/UDP RoCE SEND_ONLY frame to mutate in the error tests. */
static size_t craft(uint8_t *f)
{
	static const uint8_t tmpl[] = {
		/* Ethernet */
		0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00,
		/* IPv4: ihl 5, total 20+8+12+4+4 = 48 */
		0x45, 0x00, 0x00, 48, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
		/* UDP: 0xc000 -> 4791, len 28 */
		0xc0, 0x00, 0x12, 0xb7, 0x00, 28, 0, 0,
		/* BTH: SEND_ONLY, pkey ffff, dqpn 0x11, psn 5 */
		0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x05,
		/* payload, ICRC */
		1, 2, 3, 4, 0, 0, 0, 0,
	};
	memcpy(f, tmpl, sizeof(tmpl));
	return sizeof(tmpl);
}

static int parse_len(const uint8_t *f, size_t len)
{
	struct rl_pkt p;
	uint8_t *copy = malloc(len ? len : 1);

	memcpy(copy, f, len);
	int rc = rl_parse(copy, len, &p);
	free(copy);
	return rc;
}

/* Each malformation returns its own error code. */
static void test_distinct_errors(void **state)
{
	(void)state;
	uint8_t f[128], g[128];
	size_t n = craft(f);
	struct rl_pkt p;

	assert_int_equal(parse_len(f, n), RL_PARSE_OK);
	assert_int_equal(rl_parse(NULL, n, &p), RL_PARSE_BAD_ARG);
	assert_int_equal(rl_parse(f, n, NULL), RL_PARSE_BAD_ARG);
	assert_int_equal(parse_len(f, 13), RL_PARSE_ETH_TRUNC);

	/* ARP and PFC frames are not IP */
	memcpy(g, f, n);
	g[12] = 0x08, g[13] = 0x06;
	assert_int_equal(parse_len(g, n), RL_PARSE_NOT_IP);
	g[12] = 0x88, g[13] = 0x08;
	assert_int_equal(parse_len(g, n), RL_PARSE_NOT_IP);

	/* VLAN tags: one, two parse; three are too many; a cut tag is truncated */
	for (int tags = 1; tags <= 3; tags++) {
		memcpy(g, f, 12);
		size_t o = 12;
		for (int t = 0; t < tags; t++) {
			g[o] = t == 0 && tags > 1 ? 0x88 : 0x81;
			g[o + 1] = t == 0 && tags > 1 ? 0xa8 : 0x00;
			g[o + 2] = 0;
			g[o + 3] = (uint8_t)(100 + t);
			o += 4;
		}
		memcpy(g + o, f + 12, n - 12);
		int rc = parse_len(g, n + 4 * (size_t)tags);
		assert_int_equal(rc, tags <= 2 ? RL_PARSE_OK : RL_PARSE_VLAN_TOO_MANY);
		if (tags <= 2) {
			assert_int_equal(rl_parse(g, n + 4 * (size_t)tags, &p), RL_PARSE_OK);
			assert_int_equal(p.n_vlans, tags);
			assert_int_equal(p.vlan_tci[tags - 1], 100 + tags - 1);
			assert_int_equal(p.bth.dqpn, 0x11);
		}
	}
	memcpy(g, f, 12);
	g[12] = 0x81, g[13] = 0x00, g[14] = 0;
	assert_int_equal(parse_len(g, 15), RL_PARSE_VLAN_TRUNC);

	/* IPv4 */
	assert_int_equal(parse_len(f, 14 + 19), RL_PARSE_IPV4_TRUNC);
	memcpy(g, f, n);
	g[14] = 0x65;
	assert_int_equal(parse_len(g, n), RL_PARSE_IPV4_BAD_VERSION);
	g[14] = 0x44;
	assert_int_equal(parse_len(g, n), RL_PARSE_IPV4_BAD_IHL);
	g[14] = 0x4f; /* 60-byte header in a 34-byte-long... frame of n */
	assert_int_equal(parse_len(g, 14 + 40), RL_PARSE_IPV4_TRUNC);
	g[14] = 0x45;
	g[17] = 200; /* total length beyond the frame */
	assert_int_equal(parse_len(g, n), RL_PARSE_IPV4_BAD_TOTLEN);
	g[17] = 10; /* below the header length */
	assert_int_equal(parse_len(g, n), RL_PARSE_IPV4_BAD_TOTLEN);

	/* UDP */
	memcpy(g, f, n);
	g[17] = 20 + 6; /* IP payload too short for a UDP header */
	assert_int_equal(parse_len(g, n), RL_PARSE_L4_TRUNC);
	memcpy(g, f, n);
	g[39] = 7;
	assert_int_equal(parse_len(g, n), RL_PARSE_UDP_BAD_LEN);
	g[39] = 40;
	assert_int_equal(parse_len(g, n), RL_PARSE_UDP_BAD_LEN);

	/* RoCE: room for BTH but not the ICRC; a WRITE_ONLY without room for RETH; pad */
	memcpy(g, f, n);
	g[17] = 20 + 8 + 12, g[39] = 8 + 12;
	assert_int_equal(parse_len(g, n), RL_PARSE_BTH_TRUNC);
	memcpy(g, f, n);
	g[42] = RL_OP_WRITE_ONLY;
	assert_int_equal(parse_len(g, n), RL_PARSE_EXT_TRUNC);
	memcpy(g, f, n);
	g[42] = RL_OP_ACK; /* AETH fits exactly: 4 payload bytes become the AETH */
	assert_int_equal(parse_len(g, n), RL_PARSE_OK);
	memcpy(g, f, n);
	g[17] = 20 + 8 + 12 + 4, g[39] = 8 + 12 + 4; /* no payload */
	g[43] = 0x30;                               /* pad 3 */
	assert_int_equal(parse_len(g, n), RL_PARSE_BAD_PAD);

	/* not RoCE: UDP to another port, TCP */
	memcpy(g, f, n);
	g[36] = 0x13;
	assert_int_equal(rl_parse(g, n, &p), RL_PARSE_OK);
	assert_false(p.is_roce);
	assert_int_equal(p.dport, 0x13b7);
	g[23] = 6;
	assert_int_equal(rl_parse(g, n, &p), RL_PARSE_OK);
	assert_int_equal(p.proto, 6);
	assert_int_equal(p.sport, 0xc000);

	/* IPv6 */
	memcpy(g, f, 12);
	g[12] = 0x86, g[13] = 0xdd;
	memset(g + 14, 0, 40);
	g[14] = 0x60;
	assert_int_equal(parse_len(g, 14 + 39), RL_PARSE_IPV6_TRUNC);
	assert_int_equal(parse_len(g, 14 + 40), RL_PARSE_OK);
	g[14] = 0x40;
	assert_int_equal(parse_len(g, 14 + 40), RL_PARSE_IPV6_BAD_VERSION);
	g[14] = 0x60, g[19] = 1; /* payload length 1 beyond the frame */
	assert_int_equal(parse_len(g, 14 + 40), RL_PARSE_IPV6_BAD_PAYLEN);

	/* every status has its own message */
	for (int a = RL_PARSE_BAD_ARG; a <= 0; a++)
		for (int b = a + 1; b <= 0; b++)
			assert_string_not_equal(rl_parse_strerror(a), rl_parse_strerror(b));
}

/* The opcode table knows what rxe sends, and UD/CNP headers parse. */
static void test_opcodes(void **state)
{
	(void)state;
	assert_int_equal(rl_opcode_ext(RL_OP_WRITE_ONLY_IMM), RL_EXT_RETH | RL_EXT_IMMDT);
	assert_int_equal(rl_opcode_ext(RL_OP_READ_RESP_MIDDLE), 0);
	assert_int_equal(rl_opcode_ext(RL_OP_UD_SEND_ONLY), RL_EXT_DETH);
	assert_int_equal(rl_opcode_ext(0x20 | RL_OP_READ_REQUEST), -ENOENT); /* no READ on UC */
	assert_int_equal(rl_opcode_ext(21), -ENOENT);
	assert_int_equal(rl_opcode_ext(RL_TRANSPORT_RD | RL_OP_SEND_ONLY), -ENOENT);
	assert_int_equal(rl_opcode_ext(RL_TRANSPORT_UD | RL_OP_SEND_FIRST), -ENOENT);
	/* header lengths (BTH + extended headers), by hand from IBTA 9.2-9.3 */
	assert_int_equal(rl_opcode_hdr_len(RL_OP_SEND_MIDDLE), 12);
	assert_int_equal(rl_opcode_hdr_len(RL_OP_WRITE_ONLY_IMM), 12 + 16 + 4);
	assert_int_equal(rl_opcode_hdr_len(RL_OP_READ_REQUEST), 12 + 16);
	assert_int_equal(rl_opcode_hdr_len(RL_OP_ACK), 12 + 4);
	assert_int_equal(rl_opcode_hdr_len(RL_OP_ATOMIC_ACK), 12 + 4 + 8);
	assert_int_equal(rl_opcode_hdr_len(RL_OP_FETCH_ADD), 12 + 28);
	assert_int_equal(rl_opcode_hdr_len(RL_OP_SEND_ONLY_INV), 12 + 4);
	assert_int_equal(rl_opcode_hdr_len(RL_TRANSPORT_UC | RL_OP_WRITE_FIRST), 12 + 16);
	assert_int_equal(rl_opcode_hdr_len(RL_OP_UD_SEND_ONLY_IMM), 12 + 8 + 4);
	assert_int_equal(rl_opcode_hdr_len(RL_OP_CNP), 12 + 16);
	assert_int_equal(rl_opcode_hdr_len(21), -ENOENT);
	assert_string_equal(rl_opcode_name(RL_OP_ACK), "RC ACK");
	assert_string_equal(rl_opcode_name(RL_OP_READ_RESP_FIRST), "RC READ_RESP_FIRST");
	assert_string_equal(rl_opcode_name(RL_OP_SEND_ONLY_INV), "RC SEND_ONLY_INV");
	assert_string_equal(rl_opcode_name(RL_TRANSPORT_UC | RL_OP_WRITE_ONLY_IMM), "UC WRITE_ONLY_IMM");
	assert_string_equal(rl_opcode_name(RL_TRANSPORT_UC | RL_OP_READ_REQUEST), "unknown");
	assert_string_equal(rl_opcode_name(RL_OP_UD_SEND_ONLY), "UD SEND_ONLY");
	assert_string_equal(rl_opcode_name(RL_OP_CNP), "CNP");
	assert_string_equal(rl_opcode_name(0x7f), "unknown");

	uint8_t f[128];
	size_t n = craft(f);
	struct rl_pkt p;
	/* a CNP: BTH + 16 reserved bytes, no payload */
	f[17] = 20 + 8 + 12 + 16 + 4, f[39] = 8 + 12 + 16 + 4;
	f[42] = RL_OP_CNP;
	memset(f + 54, 0, 20);
	n = 14 + 20 + 8 + 12 + 16 + 4;
	assert_int_equal(rl_parse(f, n, &p), RL_PARSE_OK);
	assert_int_equal(p.bth.ext, RL_EXT_CNP_PAD);
	assert_int_equal(p.payload_len, 0);
	assert_int_equal(rl_icrc_store(f, &p), 0);
	assert_int_equal(rl_parse(f, n, &p), RL_PARSE_OK);
	assert_true(rl_icrc_verify(f, &p));
}

/* A deterministic xorshift64 stream for the random frames. */
static uint64_t rnd_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define RND_SEED 0x9e3779b97f4a7c15ull
#define MAX_TEST_LEN 9000u

/* ISA-L's CRC-32 equals the table engine on random bytes of every length
 * 1..9000, at every alignment modulo 8, from a random register. */
static void test_crc32_isal_every_length(void **state)
{
	(void)state;
	uint64_t s = RND_SEED;
	uint8_t *buf = malloc(MAX_TEST_LEN + 8);

	assert_non_null(buf);
	for (size_t i = 0; i < MAX_TEST_LEN + 8; i++)
		buf[i] = (uint8_t)rnd_next(&s);
	for (size_t len = 1; len <= MAX_TEST_LEN; len++) {
		uint32_t init = (uint32_t)rnd_next(&s);
		size_t off = len % 8;

		uint32_t want = rl_crc32_update_sw(init, buf + off, len);

		if (rl_crc32_update_isal(init, buf + off, len) != want)
			fail_msg("length %zu offset %zu: ISA-L 0x%08x, table 0x%08x", len, off,
				 rl_crc32_update_isal(init, buf + off, len), want);
		if (rl_crc32_update(init, buf + off, len) != want) /* (the short-input split) */
			fail_msg("length %zu offset %zu: rl_crc32_update 0x%08x, table 0x%08x", len, off,
				 rl_crc32_update(init, buf + off, len), want);
	}
	free(buf);
}

/* Every golden frame: the library ICRC equals the table engine's and the wire's. */
static void test_icrc_isal_golden(void **state)
{
	(void)state;
	for (size_t i = 0; i < G.n_frames; i++) {
		struct rl_pkt p;

		assert_int_equal(rl_parse(G.frame[i].data, G.frame[i].len, &p), RL_PARSE_OK);
		assert_int_equal(rl_icrc_compute(G.frame[i].data, &p, NULL), table_icrc(G.frame[i].data, &p));
		assert_int_equal(table_icrc(G.frame[i].data, &p), rl_pkt_icrc_wire(G.frame[i].data, &p));
	}
}

/* A RoCEv2 SEND_ONLY frame of exactly len bytes (len >= 58) with random payload. */
static void random_roce_frame(uint8_t *f, size_t len, uint64_t *s)
{
	size_t hdr = 14 + 20 + 8 + RL_BTH_LEN;

	craft(f);
	rl_put_be16(f + 14 + 2, (uint16_t)(len - 14));
	rl_put_be16(f + 14 + 20 + 4, (uint16_t)(len - 14 - 20));
	for (size_t i = hdr; i < len; i++)
		f[i] = (uint8_t)rnd_next(s);
}

/* Random RoCEv2 frames of every length up to 9000 bytes: library ICRC = table ICRC,
 * and the zero-payload ICRC = the ICRC of the same frame with its payload zeroed. */
static void test_icrc_isal_random_frames(void **state)
{
	(void)state;
	uint64_t s = RND_SEED;
	uint8_t *f = malloc(MAX_TEST_LEN);
	size_t min = 14 + 20 + 8 + RL_BTH_LEN + RL_ICRC_LEN;

	assert_non_null(f);
	for (size_t len = min; len <= MAX_TEST_LEN; len++) {
		struct rl_pkt p;
		uint32_t z;

		random_roce_frame(f, len, &s);
		assert_int_equal(rl_parse(f, len, &p), RL_PARSE_OK);
		assert_int_equal(p.icrc_off, len - RL_ICRC_LEN);
		if (rl_icrc_compute(f, &p, NULL) != table_icrc(f, &p))
			fail_msg("frame of %zu bytes: ISA-L ICRC differs from the table's", len);
		assert_int_equal(rl_icrc_compute_zeros(f, &p, p.payload_off, &z), 0);
		memset(f + p.payload_off, 0, p.icrc_off - p.payload_off);
		assert_int_equal(z, table_icrc(f, &p));
	}
	free(f);
}

/* CRC of n zero bytes by the power table, by repeated squaring (n beyond the
 * table) and by the byte tables of a repeated length equals the table engine
 * over real zeros. */
static void test_crc32_zeros(void **state)
{
	(void)state;
	static const size_t big[] = {RL_CRC32_ZEROS_TABLE + 1, 65536, 1000003, 1u << 20};
	size_t max = 1u << 20;
	uint8_t *z = calloc(1, max);
	uint64_t s = RND_SEED;

	assert_non_null(z);
	for (size_t n = 0; n <= RL_CRC32_ZEROS_TABLE + 64; n++) {
		uint32_t init = (uint32_t)rnd_next(&s);

		if (rl_crc32_zeros(init, n) != rl_crc32_update_sw(init, z, n))
			fail_msg("%zu zero bytes: 0x%08x, table 0x%08x", n, rl_crc32_zeros(init, n),
				 rl_crc32_update_sw(init, z, n));
	}
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		assert_int_equal(rl_crc32_zeros(0x12345678u, big[i]),
				 rl_crc32_update_sw(0x12345678u, z, big[i]));
	/* one length asked for again and again (the byte tables of that length),
	 * then another, then the first again, alternating with a third */
	static const size_t runs[] = {4096, 4096, 1, 4096, 77};
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++)
		for (uint32_t k = 0; k < 300; k++) {
			size_t n = r == 4 && (k & 1) ? 4096 : runs[r];
			uint32_t init = (uint32_t)rnd_next(&s);
			if (rl_crc32_zeros(init, n) != rl_crc32_update_sw(init, z, n))
				fail_msg("run %zu, call %u: %zu zero bytes: 0x%08x, table 0x%08x", r, k, n,
					 rl_crc32_zeros(init, n), rl_crc32_update_sw(init, z, n));
		}
	free(z);
}

/* rl_icrc_compute_zeros refuses what is not RoCE and ranges outside the payload;
 * rl_icrc_store refuses what is not RoCE. */
static void test_icrc_zeros_errors(void **state)
{
	(void)state;
	uint8_t f[128];
	size_t n = craft(f);
	struct rl_pkt p;
	uint32_t z;

	assert_int_equal(rl_parse(f, n, &p), RL_PARSE_OK);
	assert_int_equal(rl_icrc_compute_zeros(f, &p, p.bth_off, &z), -ERANGE);
	assert_int_equal(rl_icrc_compute_zeros(f, &p, p.icrc_off + 1, &z), -ERANGE);
	assert_int_equal(rl_icrc_compute_zeros(f, &p, p.icrc_off, &z), 0);
	assert_int_equal(z, rl_icrc_compute(f, &p, NULL));
	p.is_roce = false;
	assert_int_equal(rl_icrc_compute_zeros(f, &p, p.payload_off, &z), -EINVAL);
	/* rl_icrc_store refuses it too, and leaves the frame alone */
	uint8_t before[128];
	memcpy(before, f, n);
	assert_int_equal(rl_icrc_store(f, &p), -EINVAL);
	assert_memory_equal(f, before, n);
}

/* An IPv4 header with options (IHL 15, the largest): the ICRC covers the
 * whole header, options included, and computing it stays inside its buffer
 * (a 60-byte IPv4 header is longer than IPv6's 40; under ASan this test
 * caught a stack overflow when the buffer was sized for IPv6). */
static void test_icrc_ipv4_options(void **state)
{
	(void)state;
	uint8_t base[128], f[160];
	size_t n = craft(base);
	const size_t opt = 40, ip = 14; /* option bytes; the IPv4 header's offset */
	struct rl_pkt p;

	memcpy(f, base, ip + 20);
	memset(f + ip + 20, 0x01, opt); /* NOP options */
	memcpy(f + ip + 20 + opt, base + ip + 20, n - ip - 20);
	n += opt;
	f[ip] = 0x4F;                          /* version 4, IHL 15 */
	f[ip + 3] = (uint8_t)(48 + opt);       /* total length */
	assert_int_equal(rl_parse(f, n, &p), RL_PARSE_OK);
	assert_true(p.is_roce);
	assert_int_equal(p.l3_len, 60);
	assert_int_equal(rl_icrc_store(f, &p), 0);
	assert_int_equal(rl_parse(f, n, &p), RL_PARSE_OK); /* reads the stored ICRC */
	assert_true(rl_icrc_verify(f, &p));
	f[ip + 20 + 7] = 0x00; /* an option byte changes: the ICRC no longer matches */
	assert_false(rl_icrc_verify(f, &p));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_fields),
		cmocka_unit_test(test_icrc_ipv4_options),
		cmocka_unit_test(test_golden_icrc),
		cmocka_unit_test(test_icrc_flip_every_byte),
		cmocka_unit_test(test_icrc_ttl_dscp_rewrite),
		cmocka_unit_test(test_icrc_ipv6),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_distinct_errors),
		cmocka_unit_test(test_opcodes),
		cmocka_unit_test(test_crc32_isal_every_length),
		cmocka_unit_test(test_icrc_isal_golden),
		cmocka_unit_test(test_icrc_isal_random_frames),
		cmocka_unit_test(test_crc32_zeros),
		cmocka_unit_test(test_icrc_zeros_errors),
	};
	return cmocka_run_group_tests_name("parse_icrc", tests, setup, teardown);
}
