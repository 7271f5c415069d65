/* SPDX-License-Identifier: BSD-3-Clause */
#include "rl_parse.h"

#include <string.h>

#include "rl_bytes.h"

const char *rl_parse_strerror(int status)
{
	switch (status) {
	case RL_PARSE_OK: return "ok";
	case RL_PARSE_ETH_TRUNC: return "truncated Ethernet header";
	case RL_PARSE_VLAN_TRUNC: return "truncated VLAN tag";
	case RL_PARSE_VLAN_TOO_MANY: return "more than two VLAN tags";
	case RL_PARSE_NOT_IP: return "not IPv4 or IPv6";
	case RL_PARSE_IPV4_TRUNC: return "truncated IPv4 header";
	case RL_PARSE_IPV4_BAD_VERSION: return "IPv4 EtherType but IP version is not 4";
	case RL_PARSE_IPV4_BAD_IHL: return "IPv4 IHL below 5";
	case RL_PARSE_IPV4_BAD_TOTLEN: return "IPv4 total length inconsistent with IHL or frame";
	case RL_PARSE_IPV6_TRUNC: return "truncated IPv6 header";
	case RL_PARSE_IPV6_BAD_VERSION: return "IPv6 EtherType but IP version is not 6";
	case RL_PARSE_IPV6_BAD_PAYLEN: return "IPv6 payload length beyond the frame";
	case RL_PARSE_L4_TRUNC: return "truncated TCP/UDP header";
	case RL_PARSE_UDP_BAD_LEN: return "UDP length inconsistent with IP payload";
	case RL_PARSE_BTH_TRUNC: return "truncated RoCEv2 BTH or missing ICRC";
	case RL_PARSE_EXT_TRUNC: return "truncated RoCEv2 extended header";
	case RL_PARSE_BAD_PAD: return "BTH pad count larger than the payload";
	case RL_PARSE_BAD_ARG: return "bad argument";
	default: return "unknown parse status";
	}
}

/* Parse the BTH and extended headers at off; end is where the ICRC begins + 4. */
static int parse_roce(const uint8_t *f, uint32_t off, uint32_t end, struct rl_pkt *p)
{
	struct rl_bth_info *b = &p->bth;

	if (end < off || end - off < RL_BTH_LEN + RL_ICRC_LEN)
		return RL_PARSE_BTH_TRUNC;
	const uint8_t *h = f + off;
	const uint8_t flags = h[RL_BTH_FLAGS_OFF];
	const uint32_t qpn_word = rl_get_be32(h + RL_BTH_QPN_OFF);
	const uint32_t psn_word = rl_get_be32(h + RL_BTH_PSN_OFF);

	b->opcode = h[0];
	b->se = (flags & RL_BTH_SE) != 0;
	b->migreq = (flags & RL_BTH_MIGREQ) != 0;
	b->padcnt = (flags >> RL_BTH_PAD_SHIFT) & RL_BTH_PAD_MASK;
	b->tver = flags & RL_BTH_TVER_MASK;
	b->pkey = rl_get_be16(h + RL_BTH_PKEY_OFF);
	b->fecn = (h[RL_BTH_QPN_OFF] & RL_BTH_FECN) != 0;
	b->becn = (h[RL_BTH_QPN_OFF] & RL_BTH_BECN) != 0;
	b->dqpn = qpn_word & RL_24BIT_MASK;
	b->ackreq = (psn_word & RL_BTH_ACKREQ) != 0;
	b->psn = psn_word & RL_24BIT_MASK;

	p->is_roce = true;
	p->bth_off = (uint16_t)off;
	p->icrc_off = (uint16_t)(end - RL_ICRC_LEN);
	/* (the ICRC itself is not read here: it is the frame's last cache line, which a
	 * switch forwarding the frame never needs; rl_pkt_icrc_wire() reads it) */

	int ext = rl_opcode_ext(b->opcode);
	uint32_t x = off + RL_BTH_LEN;
	uint32_t lim = p->icrc_off;

	if (ext < 0)
		ext = 0; /* unknown opcode: BTH only, the rest is payload */
	b->ext = (uint32_t)ext;

	/* The order of extended headers is fixed by the IBA spec (9.2). */
	if (ext & RL_EXT_CNP_PAD) {
		if (lim - x < RL_CNP_PAD_LEN)
			return RL_PARSE_EXT_TRUNC;
		x += RL_CNP_PAD_LEN;
	}
	if (ext & RL_EXT_DETH) {
		if (lim - x < RL_DETH_LEN)
			return RL_PARSE_EXT_TRUNC;
		b->deth_qkey = rl_get_be32(f + x);
		b->deth_srcqp = rl_get_be32(f + x + 4) & RL_24BIT_MASK;
		x += RL_DETH_LEN;
	}
	if (ext & RL_EXT_RETH) {
		if (lim - x < RL_RETH_LEN)
			return RL_PARSE_EXT_TRUNC;
		b->reth_va = rl_get_be64(f + x);
		b->reth_rkey = rl_get_be32(f + x + 8);
		b->reth_dmalen = rl_get_be32(f + x + 12);
		x += RL_RETH_LEN;
	}
	if (ext & RL_EXT_ATOMICETH) {
		if (lim - x < RL_ATOMICETH_LEN)
			return RL_PARSE_EXT_TRUNC;
		b->reth_va = rl_get_be64(f + x);
		b->reth_rkey = rl_get_be32(f + x + 8);
		x += RL_ATOMICETH_LEN;
	}
	if (ext & RL_EXT_AETH) {
		if (lim - x < RL_AETH_LEN)
			return RL_PARSE_EXT_TRUNC;
		b->aeth_syndrome = f[x];
		b->aeth_msn = rl_get_be32(f + x) & RL_24BIT_MASK;
		x += RL_AETH_LEN;
	}
	if (ext & RL_EXT_ATOMICACKETH) {
		if (lim - x < RL_ATOMICACKETH_LEN)
			return RL_PARSE_EXT_TRUNC;
		x += RL_ATOMICACKETH_LEN;
	}
	if (ext & RL_EXT_IMMDT) {
		if (lim - x < RL_IMMDT_LEN)
			return RL_PARSE_EXT_TRUNC;
		b->immdt = rl_get_be32(f + x);
		x += RL_IMMDT_LEN;
	}
	if (ext & RL_EXT_IETH) {
		if (lim - x < RL_IETH_LEN)
			return RL_PARSE_EXT_TRUNC;
		b->ieth_rkey = rl_get_be32(f + x);
		x += RL_IETH_LEN;
	}
	if (lim - x < b->padcnt)
		return RL_PARSE_BAD_PAD;
	p->payload_off = (uint16_t)x;
	p->payload_len = lim - x - b->padcnt;
	return RL_PARSE_OK;
}

/* Ports (TCP or UDP) and, for UDP to 4791, RoCEv2. end: the end of the IP packet. */
static int parse_l4(const uint8_t *f, uint32_t off, uint32_t end, struct rl_pkt *p)
{
	p->l4_off = (uint16_t)off;
	if (p->proto != RL_IPPROTO_TCP && p->proto != RL_IPPROTO_UDP)
		return RL_PARSE_OK;
	if (end - off < (uint32_t)(p->proto == RL_IPPROTO_UDP ? RL_UDP_HDR_LEN : RL_L4_PORTS_LEN))
		return RL_PARSE_L4_TRUNC;
	p->sport = rl_get_be16(f + off);
	p->dport = rl_get_be16(f + off + 2);
	if (p->proto != RL_IPPROTO_UDP)
		return RL_PARSE_OK;
	uint16_t ulen = rl_get_be16(f + off + 4);
	if (ulen < RL_UDP_HDR_LEN || ulen > end - off)
		return RL_PARSE_UDP_BAD_LEN;
	if (p->dport != RL_ROCEV2_PORT)
		return RL_PARSE_OK;
	return parse_roce(f, off + RL_UDP_HDR_LEN, off + ulen, p);
}

static int parse_ipv4(const uint8_t *f, uint32_t off, uint32_t len, struct rl_pkt *p)
{
	if (len - off < RL_IPV4_HDR_LEN)
		return RL_PARSE_IPV4_TRUNC;
	const uint8_t *h = f + off;
	if (h[0] >> 4 != 4)
		return RL_PARSE_IPV4_BAD_VERSION;
	uint32_t ihl = (h[0] & 0xfu) * 4;
	if (ihl < RL_IPV4_HDR_LEN)
		return RL_PARSE_IPV4_BAD_IHL;
	if (len - off < ihl)
		return RL_PARSE_IPV4_TRUNC;
	uint16_t tot = rl_get_be16(h + 2);
	if (tot < ihl || tot > len - off)
		return RL_PARSE_IPV4_BAD_TOTLEN;
	p->ip_version = 4;
	p->dscp = h[1] >> 2;
	p->ecn = h[1] & 3;
	p->ttl = h[8];
	p->proto = h[9];
	memcpy(p->src, h + 12, 4);
	memcpy(p->dst, h + 16, 4);
	p->l3_len = (uint16_t)ihl;
	p->ip_total_len = tot;
	/* Only the first fragment carries ports; later ones hash on addresses. */
	uint16_t frag = rl_get_be16(h + 6);
	if (frag & RL_IPV4_FRAG_OFF_MASK)
		return RL_PARSE_OK;
	return parse_l4(f, off + ihl, off + tot, p);
}

static int parse_ipv6(const uint8_t *f, uint32_t off, uint32_t len, struct rl_pkt *p)
{
	if (len - off < RL_IPV6_HDR_LEN)
		return RL_PARSE_IPV6_TRUNC;
	const uint8_t *h = f + off;
	if (h[0] >> 4 != 6)
		return RL_PARSE_IPV6_BAD_VERSION;
	uint16_t plen = rl_get_be16(h + 4);
	if (plen > len - off - RL_IPV6_HDR_LEN)
		return RL_PARSE_IPV6_BAD_PAYLEN;
	uint8_t tc = (uint8_t)((h[0] << 4) | (h[1] >> 4));
	p->ip_version = 6;
	p->dscp = tc >> 2;
	p->ecn = tc & 3;
	p->flow_label = rl_get_be32(h) & 0xfffff;
	p->proto = h[6];
	p->ttl = h[7];
	memcpy(p->src, h + 8, 16);
	memcpy(p->dst, h + 24, 16);
	p->l3_len = RL_IPV6_HDR_LEN;
	p->ip_total_len = (uint16_t)(RL_IPV6_HDR_LEN + plen);
	/* Extension headers are not followed: the fabric sees none from RoCE or rxe. */
	return parse_l4(f, off + RL_IPV6_HDR_LEN, off + RL_IPV6_HDR_LEN + plen, p);
}

int rl_parse(const uint8_t *frame, size_t len, struct rl_pkt *out)
{
	if (frame == NULL || out == NULL)
		return RL_PARSE_BAD_ARG;
	memset(out, 0, sizeof(*out));
	if (len > UINT16_MAX)
		len = UINT16_MAX; /* offsets are 16-bit; nothing in the fabric is larger */
	out->frame_len = (uint32_t)len;
	if (len < RL_ETH_HDR_LEN)
		return RL_PARSE_ETH_TRUNC;
	memcpy(out->dmac, frame, RL_ETH_ADDR_LEN);
	memcpy(out->smac, frame + RL_ETH_ADDR_LEN, RL_ETH_ADDR_LEN);

	uint32_t off = RL_ETH_TYPE_OFF;
	uint16_t et = rl_get_be16(frame + off);
	while (et == RL_ETHERTYPE_VLAN || et == RL_ETHERTYPE_QINQ) {
		if (out->n_vlans == 2)
			return RL_PARSE_VLAN_TOO_MANY;
		if (len - off < RL_VLAN_TAG_LEN + 2) /* the tag and the next EtherType */
			return RL_PARSE_VLAN_TRUNC;
		out->vlan_tci[out->n_vlans++] = rl_get_be16(frame + off + 2);
		off += RL_VLAN_TAG_LEN;
		et = rl_get_be16(frame + off);
	}
	off += 2; /* the EtherType */
	out->ethertype = et;
	out->l3_off = (uint16_t)off;

	switch (et) {
	case RL_ETHERTYPE_IPV4: return parse_ipv4(frame, off, (uint32_t)len, out);
	case RL_ETHERTYPE_IPV6: return parse_ipv6(frame, off, (uint32_t)len, out);
	default: return RL_PARSE_NOT_IP;
	}
}

uint16_t rl_ipv4_hdr_csum(const uint8_t *h)
{
	uint32_t s = 0;

	for (int i = 0; i < RL_IPV4_HDR_LEN; i += 2)
		s += rl_get_be16(h + i);
	while (s >> 16)
		s = (s & 0xFFFF) + (s >> 16);
	return (uint16_t)~s;
}
