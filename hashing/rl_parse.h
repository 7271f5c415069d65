/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rl_parse: bounds-checked parsing of the frames a RoCE fabric carries.
 *
 * Ethernet II, up to two 802.1Q/802.1ad tags, IPv4 or IPv6, then TCP or UDP
 * ports, and for UDP destination port 4791 (RoCEv2) the Base Transport Header
 * and the extended headers its opcode implies (RETH, AETH, DETH, ImmDt, IETH,
 * AtomicETH, AtomicAckETH). The parser only reads: it never writes the frame
 * and never reads at or past frame[len].
 *
 * Pure C, libc only (see docs/explanation/DESIGN.md).
 */
#ifndef RL_PARSE_H
#define RL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rl_opcode.h" /* opcodes, extended headers and their lengths */

#define RL_ETHERTYPE_IPV4 0x0800
#define RL_ETHERTYPE_IPV6 0x86DD
#define RL_ETHERTYPE_ARP 0x0806
#define RL_ETHERTYPE_VLAN 0x8100
#define RL_ETHERTYPE_QINQ 0x88A8
#define RL_ETHERTYPE_PAUSE 0x8808 /* MAC control: 802.3x pause and 802.1Qbb PFC */

/* Ethernet II: destination, source, EtherType (after any tags). */
#define RL_ETH_ADDR_LEN 6
#define RL_ETH_TYPE_OFF 12 /* the EtherType (or first tag's TPID) */
#define RL_ETH_HDR_LEN 14
#define RL_VLAN_TAG_LEN 4  /* TPID + TCI */

#define RL_IPV4_HDR_LEN 20 /* without options (IHL 5) */
#define RL_IPV4_HDR_MAX 60 /* with the most options (IHL 15) */
#define RL_IPV4_FRAG_OFF_MASK 0x1FFF /* fragment offset bits of the flags/offset word */
#define RL_IPV4_DF 0x4000            /* don't fragment, in the same word */
#define RL_IPV6_HDR_LEN 40
#define RL_ECN_CE 3 /* ECN field: congestion experienced */

#define RL_IPPROTO_TCP 6
#define RL_IPPROTO_UDP 17
#define RL_UDP_HDR_LEN 8
#define RL_L4_PORTS_LEN 4 /* source and destination port, TCP or UDP */
#define RL_ROCEV2_PORT 4791

/* Results of rl_parse(): 0 is success, each failure has its own code. */
enum rl_parse_status {
	RL_PARSE_OK = 0,
	RL_PARSE_ETH_TRUNC = -1,     /* shorter than an Ethernet header */
	RL_PARSE_VLAN_TRUNC = -2,    /* a VLAN tag cut short */
	RL_PARSE_VLAN_TOO_MANY = -3, /* more than two VLAN tags */
	RL_PARSE_NOT_IP = -4,        /* EtherType is neither IPv4 nor IPv6 (ARP, PFC, ...) */
	RL_PARSE_IPV4_TRUNC = -5,    /* shorter than the IPv4 header or its IHL */
	RL_PARSE_IPV4_BAD_VERSION = -6,
	RL_PARSE_IPV4_BAD_IHL = -7,    /* IHL below 5 */
	RL_PARSE_IPV4_BAD_TOTLEN = -8, /* total length below IHL or beyond the frame */
	RL_PARSE_IPV6_TRUNC = -9,
	RL_PARSE_IPV6_BAD_VERSION = -10,
	RL_PARSE_IPV6_BAD_PAYLEN = -11, /* payload length beyond the frame */
	RL_PARSE_L4_TRUNC = -12,        /* TCP/UDP ports or UDP header cut short */
	RL_PARSE_UDP_BAD_LEN = -13,     /* UDP length below 8 or beyond the IP payload */
	RL_PARSE_BTH_TRUNC = -14,       /* RoCEv2 port but no room for BTH + ICRC */
	RL_PARSE_EXT_TRUNC = -15,       /* an extended header the opcode needs is cut short */
	RL_PARSE_BAD_PAD = -16,         /* pad count larger than the payload */
	RL_PARSE_BAD_ARG = -17,         /* NULL frame or result pointer */
};

/* Return a short constant English description of a status ("ok", "truncated IPv4 header", ...). */
const char *rl_parse_strerror(int status);

struct rl_bth_info {
	uint8_t opcode;
	uint8_t se;     /* solicited event */
	uint8_t migreq; /* M bit */
	uint8_t padcnt;
	uint8_t tver;
	uint16_t pkey;
	uint8_t fecn, becn;
	uint32_t dqpn; /* 24 bits */
	uint8_t ackreq;
	uint32_t psn; /* 24 bits */

	uint32_t ext; /* enum rl_ext bits */
	/* RETH */
	uint64_t reth_va;
	uint32_t reth_rkey;
	uint32_t reth_dmalen;
	/* AETH */
	uint8_t aeth_syndrome;
	uint32_t aeth_msn; /* 24 bits */
	/* DETH */
	uint32_t deth_qkey;
	uint32_t deth_srcqp; /* 24 bits */
	/* ImmDt / IETH (host order of the 32-bit big-endian field) */
	uint32_t immdt;
	uint32_t ieth_rkey;
};

struct rl_pkt {
	uint32_t frame_len;

	/* Layer 2 */
	uint8_t dmac[6], smac[6];
	uint8_t n_vlans;
	uint16_t vlan_tci[2];
	uint16_t ethertype; /* the one after the tags */
	uint16_t l3_off;

	/* Layer 3 */
	uint8_t ip_version; /* 4 or 6 */
	uint8_t dscp, ecn;
	uint8_t ttl; /* or IPv6 hop limit */
	uint8_t proto; /* or IPv6 next header */
	uint8_t src[16], dst[16]; /* IPv4 addresses use the first 4 bytes, the rest zero */
	uint32_t flow_label;      /* IPv6 only */
	uint16_t l3_len;          /* IPv4 IHL*4 or 40 */
	uint16_t ip_total_len;    /* IPv4 total length, or 40 + IPv6 payload length */
	uint16_t l4_off;

	/* Layer 4 (TCP or UDP; zero for other protocols) */
	uint16_t sport, dport;

	/* RoCEv2 */
	bool is_roce;
	uint16_t bth_off;
	uint16_t payload_off; /* first byte after the extended headers */
	uint32_t payload_len; /* up to the pad, without pad or ICRC */
	uint16_t icrc_off;  /* the ICRC's offset (read it with rl_pkt_icrc_wire()) */
	struct rl_bth_info bth;
};

/*
 * The ICRC of a RoCEv2 frame parsed into p, as stored (little-endian on the
 * wire, read as such). Only for p->is_roce.
 */
static inline uint32_t rl_pkt_icrc_wire(const uint8_t *frame, const struct rl_pkt *p)
{
	const uint8_t *c = frame + p->icrc_off;

	return ((uint32_t)c[3] << 24) | ((uint32_t)c[2] << 16) | ((uint32_t)c[1] << 8) | c[0];
}

/*
 * Parse one frame of len bytes into *out.
 * Returns RL_PARSE_OK, or a negative enum rl_parse_status naming the first
 * problem found. On RL_PARSE_NOT_IP the L2 fields (MACs, tags, ethertype,
 * l3_off) are valid. Non-TCP/UDP IP packets parse OK with zero ports; UDP
 * packets not to port 4791 parse OK with is_roce false.
 */
int rl_parse(const uint8_t *frame, size_t len, struct rl_pkt *out);

/*
 * The checksum to store in the 20-byte IPv4 header at h (no options), whose
 * checksum field is zero: the one's complement of the one's-complement sum
 * of its 16-bit words.
 */
uint16_t rl_ipv4_hdr_csum(const uint8_t *h);

#endif /* RL_PARSE_H */
