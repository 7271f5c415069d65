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
 * Pure C, libc only (see docs/DESIGN.md).
 */
#ifndef RL_PARSE_H
#define RL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RL_ETHERTYPE_IPV4 0x0800
#define RL_ETHERTYPE_IPV6 0x86DD
#define RL_ETHERTYPE_ARP 0x0806
#define RL_ETHERTYPE_VLAN 0x8100
#define RL_ETHERTYPE_QINQ 0x88A8
#define RL_ETHERTYPE_PAUSE 0x8808 /* MAC control: 802.3x pause and 802.1Qbb PFC */

#define RL_IPPROTO_TCP 6
#define RL_IPPROTO_UDP 17
#define RL_ROCEV2_PORT 4791

#define RL_BTH_LEN 12
#define RL_RETH_LEN 16
#define RL_AETH_LEN 4
#define RL_DETH_LEN 8
#define RL_IMMDT_LEN 4
#define RL_IETH_LEN 4
#define RL_ATOMICETH_LEN 28
#define RL_ATOMICACKETH_LEN 8
#define RL_ICRC_LEN 4

/* BTH opcodes: the top 3 bits name the transport, the low 5 the operation. */
enum rl_transport {
	RL_TRANSPORT_RC = 0x00,
	RL_TRANSPORT_UC = 0x20,
	RL_TRANSPORT_RD = 0x40,
	RL_TRANSPORT_UD = 0x60,
	RL_TRANSPORT_CNP = 0x80,
};

enum rl_opcode {
	RL_OP_SEND_FIRST = 0,
	RL_OP_SEND_MIDDLE = 1,
	RL_OP_SEND_LAST = 2,
	RL_OP_SEND_LAST_IMM = 3,
	RL_OP_SEND_ONLY = 4,
	RL_OP_SEND_ONLY_IMM = 5,
	RL_OP_WRITE_FIRST = 6,
	RL_OP_WRITE_MIDDLE = 7,
	RL_OP_WRITE_LAST = 8,
	RL_OP_WRITE_LAST_IMM = 9,
	RL_OP_WRITE_ONLY = 10,
	RL_OP_WRITE_ONLY_IMM = 11,
	RL_OP_READ_REQUEST = 12,
	RL_OP_READ_RESP_FIRST = 13,
	RL_OP_READ_RESP_MIDDLE = 14,
	RL_OP_READ_RESP_LAST = 15,
	RL_OP_READ_RESP_ONLY = 16,
	RL_OP_ACK = 17,
	RL_OP_ATOMIC_ACK = 18,
	RL_OP_CMP_SWAP = 19,
	RL_OP_FETCH_ADD = 20,
	RL_OP_SEND_LAST_INV = 22,
	RL_OP_SEND_ONLY_INV = 23,
	RL_OP_UD_SEND_ONLY = RL_TRANSPORT_UD | RL_OP_SEND_ONLY,         /* 100 */
	RL_OP_UD_SEND_ONLY_IMM = RL_TRANSPORT_UD | RL_OP_SEND_ONLY_IMM, /* 101 */
	RL_OP_CNP = 0x81,
};

/* Extended-header bits, set in rl_bth_info.ext for the headers present. */
enum rl_ext {
	RL_EXT_RETH = 1u << 0,
	RL_EXT_AETH = 1u << 1,
	RL_EXT_DETH = 1u << 2,
	RL_EXT_IMMDT = 1u << 3,
	RL_EXT_IETH = 1u << 4,
	RL_EXT_ATOMICETH = 1u << 5,
	RL_EXT_ATOMICACKETH = 1u << 6,
	RL_EXT_CNP_PAD = 1u << 7, /* the 16 reserved bytes after a CNP's BTH */
};

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
	uint16_t icrc_off;
	uint32_t icrc_wire; /* the ICRC as stored (little-endian on the wire, read as such) */
	struct rl_bth_info bth;
};

/*
 * Parse one frame of len bytes into *out.
 * Returns RL_PARSE_OK, or a negative enum rl_parse_status naming the first
 * problem found. On RL_PARSE_NOT_IP the L2 fields (MACs, tags, ethertype,
 * l3_off) are valid. Non-TCP/UDP IP packets parse OK with zero ports; UDP
 * packets not to port 4791 parse OK with is_roce false.
 */
int rl_parse(const uint8_t *frame, size_t len, struct rl_pkt *out);

/* Name of a BTH opcode ("RC SEND_ONLY", "UD SEND_ONLY", "CNP", ...), or "unknown". */
const char *rl_opcode_name(uint8_t opcode);

/*
 * Extended headers (enum rl_ext bits) that follow the BTH for this opcode,
 * or -1 for an opcode the parser does not know (those parse with ext = 0).
 */
int rl_opcode_ext(uint8_t opcode);

#endif /* RL_PARSE_H */
