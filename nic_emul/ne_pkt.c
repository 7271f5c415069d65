/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet building: Ethernet II, IPv4 (DF, TTL 64, no options), UDP with
 * checksum 0, BTH, extended headers; ICRC (hashing/rl_icrc). The
 * layout and field values are those Linux rxe puts on the wire.
 */
#include <errno.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ne_opcode.h"
#include "ne_priv.h"
#include "rl_bytes.h"
#include "rl_icrc.h"

#define IPV4_VERSION_IHL5 0x45 /* version 4, a 20-byte header (no options) */

void ne_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void ne_put_reth(uint8_t *p, uint64_t va, uint32_t rkey, uint32_t len)
{
	ne_put_be32(p, (uint32_t)(va >> 32));
	ne_put_be32(p + 4, (uint32_t)va);
	ne_put_be32(p + 8, rkey);
	ne_put_be32(p + 12, len);
}

void ne_put_aeth(uint8_t *p, uint8_t syndrome, uint32_t msn)
{
	ne_put_be32(p, ((uint32_t)syndrome << 24) | (msn & RL_24BIT_MASK));
}

size_t ne_build_hdrs(struct ne_nic *nic, const struct ne_qp *qp, uint8_t *buf,
		     size_t roce_len, const struct ne_bth_fields *bth)
{
	uint8_t *ip = buf + RL_ETH_HDR_LEN, *udp = ip + RL_IPV4_HDR_LEN, *b = udp + RL_UDP_HDR_LEN;
	uint16_t udp_len = (uint16_t)(RL_UDP_HDR_LEN + roce_len);

	memcpy(buf, qp->attr.dest_mac, RL_ETH_ADDR_LEN);
	memcpy(buf + RL_ETH_ADDR_LEN, nic->cfg.mac, RL_ETH_ADDR_LEN);
	put_be16(buf + RL_ETH_TYPE_OFF, RL_ETHERTYPE_IPV4);

	ip[0] = IPV4_VERSION_IHL5;
	ip[1] = (uint8_t)(qp->attr.dscp << 2); /* ECN not-ECT, as rxe */
	put_be16(ip + 2, (uint16_t)(RL_IPV4_HDR_LEN + udp_len));
	put_be16(ip + 4, nic->ip_id++);
	put_be16(ip + 6, RL_IPV4_DF);
	ip[8] = nic->cfg.ttl;
	ip[9] = RL_IPPROTO_UDP;
	ip[10] = ip[11] = 0;
	ne_put_be32(ip + 12, nic->cfg.ipv4);
	ne_put_be32(ip + 16, qp->attr.dest_ipv4);
	put_be16(ip + 10, rl_ipv4_hdr_csum(ip));

	put_be16(udp, qp->sport);
	put_be16(udp + 2, RL_ROCEV2_PORT);
	put_be16(udp + 4, udp_len);
	put_be16(udp + 6, 0); /* rxe sends UDP checksum 0 */

	b[0] = bth->opcode;
	b[RL_BTH_FLAGS_OFF] = (uint8_t)((bth->se ? RL_BTH_SE : 0) |
					((bth->padcnt & RL_BTH_PAD_MASK) << RL_BTH_PAD_SHIFT)); /* M 0, TVer 0 */
	put_be16(b + RL_BTH_PKEY_OFF, qp->attr.pkey);
	ne_put_be32(b + RL_BTH_QPN_OFF, bth->dqpn & RL_24BIT_MASK); /* FECN, BECN, reserved 0 */
	ne_put_be32(b + RL_BTH_PSN_OFF, (bth->ackreq ? RL_BTH_ACKREQ : 0) | (bth->psn & NE_PSN_MASK));
	return NE_L2L4_LEN;
}

/*
 * The offsets rl_parse() would find in a frame ne_build_hdrs() laid out
 * (Ethernet, IPv4 without options, UDP, BTH, then op's extended headers),
 * without parsing it. False for an opcode outside the RC table (CNP) or a
 * length that does not fit: then parse it.
 */
static bool own_layout(const uint8_t *frame, size_t len, struct rl_pkt *pkt)
{
	const uint32_t l4 = RL_ETH_HDR_LEN + RL_IPV4_HDR_LEN;

	if (len < NE_HDR_LEN || rl_get_be16(frame + RL_ETH_TYPE_OFF) != RL_ETHERTYPE_IPV4 ||
	    frame[RL_ETH_HDR_LEN] != IPV4_VERSION_IHL5 || rl_get_be16(frame + l4 + 2) != RL_ROCEV2_PORT)
		return false;
	uint32_t hl = ne_op_hdr_len(frame[NE_L2L4_LEN]);
	uint32_t end = l4 + rl_get_be16(frame + l4 + 4); /* the UDP length */
	if (hl == 0 || end > len || end < NE_L2L4_LEN + hl + RL_ICRC_LEN)
		return false;
	*pkt = (struct rl_pkt){.is_roce = true, .ip_version = 4, .l3_off = RL_ETH_HDR_LEN,
			       .l3_len = RL_IPV4_HDR_LEN, .l4_off = (uint16_t)l4,
			       .bth_off = NE_L2L4_LEN, .payload_off = (uint16_t)(NE_L2L4_LEN + hl),
			       .icrc_off = (uint16_t)(end - RL_ICRC_LEN)};
	return true;
}

int ne_finish_icrc(uint8_t *frame, size_t len, bool zero_payload)
{
	struct rl_pkt pkt;
	uint32_t crc;
	int rc;

	/* (every frame the NIC sends: its own layout needs no parse) */
	if (!own_layout(frame, len, &pkt) &&
	    (rl_parse(frame, len, &pkt) != RL_PARSE_OK || !pkt.is_roce))
		return -EINVAL;
	if (!zero_payload)
		return rl_icrc_store(frame, &pkt);
	rc = rl_icrc_compute_zeros(frame, &pkt, pkt.payload_off, &crc);
	if (rc < 0)
		return rc;
	rl_put_le32(frame + pkt.icrc_off, crc);
	return 0;
}

uint16_t ne_rxe_udp_sport(uint32_t lqpn, uint32_t rqpn)
{
	/* rdma_calc_flow_label(): 20-bit fold of the 48-bit product */
	uint64_t v = (uint64_t)(lqpn & RL_24BIT_MASK) * (rqpn & RL_24BIT_MASK);
	uint32_t fl, lo, hi;

	v ^= v >> 20;
	v ^= v >> 40;
	fl = (uint32_t)(v & 0xFFFFFu);
	/* rdma_flow_label_to_udp_sport(): fold 20 bits to 14 */
	lo = fl & NE_SPORT_MASK;
	hi = fl & ~NE_SPORT_MASK;
	lo ^= hi >> 14;
	return (uint16_t)(lo | NE_SPORT_BASE);
}

uint64_t ne_timeout_ns(uint8_t timeout)
{
	if (timeout == 0)
		return 0;
	if (timeout > NE_TIMER_CODE_MAX)
		timeout = NE_TIMER_CODE_MAX;
	return NE_TIMEOUT_UNIT_NS << timeout;
}

uint64_t ne_rnr_timer_ns(uint8_t code)
{
	/* IBA table 45 in microseconds x 100 */
	static const uint32_t t_10us[32] = {
		65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
		256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
		12288, 16384, 24576, 32768, 49152,
	};

	return (uint64_t)t_10us[code & 31] * 10000ull;
}

uint32_t ne_num_pkts(uint32_t len, uint32_t mtu)
{
	if (len == 0 || mtu == 0)
		return 1;
	return (uint32_t)(((uint64_t)len + mtu - 1) / mtu);
}

#define NT_MIN 256 /* below this, a plain memset (the fence costs more than it saves) */

void ne_zero_nt(uint8_t *dst, size_t n)
{
#ifdef __SSE2__
	if (n < NT_MIN) {
		memset(dst, 0, n);
		return;
	}
	/* whole cache lines only: a partly written line would cost a read of it */
	size_t head = (size_t)(-(uintptr_t)dst & 63);
	__m128i z = _mm_setzero_si128();

	memset(dst, 0, head);
	dst += head;
	n -= head;
	for (; n >= 64; dst += 64, n -= 64) {
		_mm_stream_si128((__m128i *)(void *)dst, z);
		_mm_stream_si128((__m128i *)(void *)(dst + 16), z);
		_mm_stream_si128((__m128i *)(void *)(dst + 32), z);
		_mm_stream_si128((__m128i *)(void *)(dst + 48), z);
	}
	memset(dst, 0, n);
	_mm_sfence();
#else
	memset(dst, 0, n);
#endif
}
