/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rl_opcode: the RoCEv2 Base Transport Header (layout, opcodes) and the one
 * table of which extended headers follow the BTH for each opcode (IBTA
 * vol. 1 table 39 and section 9.3; the same facts as Linux rxe_opcode.c).
 *
 * This is the lowest layer that knows opcodes: the frame parser
 * (rl_parse.c) reads headers by it, and the emulated NIC (nic_emul/
 * ne_opcode.c) derives its header lengths and header bits from it, so
 * parser and sender cannot disagree. libc only.
 */
#ifndef RL_OPCODE_H
#define RL_OPCODE_H

#include <stdint.h>

/* Header lengths in bytes. */
#define RL_BTH_LEN          12
#define RL_RETH_LEN         16
#define RL_AETH_LEN         4
#define RL_DETH_LEN         8
#define RL_IMMDT_LEN        4
#define RL_IETH_LEN         4
#define RL_ATOMICETH_LEN    28
#define RL_ATOMICACKETH_LEN 8
#define RL_CNP_PAD_LEN      16 /* the reserved bytes after a CNP's BTH */
#define RL_ICRC_LEN         4

/* Base Transport Header fields: byte offsets and bits (IBTA 9.2). */
#define RL_BTH_FLAGS_OFF 1 /* SE, M, PadCnt, TVer */
#define RL_BTH_SE        0x80u
#define RL_BTH_MIGREQ    0x40u
#define RL_BTH_PAD_SHIFT 4
#define RL_BTH_PAD_MASK  3u /* after the shift */
#define RL_BTH_TVER_MASK 0x0Fu
#define RL_BTH_PKEY_OFF  2
#define RL_BTH_QPN_OFF   4     /* a 32-bit word: FECN, BECN, reserved, then the QPN */
#define RL_BTH_FECN      0x80u /* in the first byte of that word */
#define RL_BTH_BECN      0x40u
#define RL_BTH_PSN_OFF   8 /* a 32-bit word: AckReq, reserved, then the PSN */
#define RL_BTH_ACKREQ    0x80000000u
#define RL_24BIT_MASK    0xFFFFFFu /* QPNs, PSNs and MSNs are 24-bit */

/* BTH opcodes: the top 3 bits name the transport, the low 5 the operation. */
#define RL_TRANSPORT_MASK 0xE0u
#define RL_OPERATION_MASK 0x1Fu
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

/*
 * THE table: every RC operation (low 5 bits of the opcode; UC has the first
 * twelve, SEND and WRITE) with the extended headers that follow its BTH.
 * X(op, ext): op names RL_OP_<op>. Everything else derives from these rows:
 * rl_opcode_ext(), the enum RL_EXT_OF_<op> below (constants, for tables that
 * are built at compile time, as nic_emul's) and the set of RC opcodes.
 */
#define RL_RC_OPCODES(X)                                                                           \
	X(SEND_FIRST, 0)                                                                           \
	X(SEND_MIDDLE, 0)                                                                          \
	X(SEND_LAST, 0)                                                                            \
	X(SEND_LAST_IMM, RL_EXT_IMMDT)                                                             \
	X(SEND_ONLY, 0)                                                                            \
	X(SEND_ONLY_IMM, RL_EXT_IMMDT)                                                             \
	X(WRITE_FIRST, RL_EXT_RETH)                                                                \
	X(WRITE_MIDDLE, 0)                                                                         \
	X(WRITE_LAST, 0)                                                                           \
	X(WRITE_LAST_IMM, RL_EXT_IMMDT)                                                            \
	X(WRITE_ONLY, RL_EXT_RETH)                                                                 \
	X(WRITE_ONLY_IMM, RL_EXT_RETH | RL_EXT_IMMDT)                                              \
	X(READ_REQUEST, RL_EXT_RETH)                                                               \
	X(READ_RESP_FIRST, RL_EXT_AETH)                                                            \
	X(READ_RESP_MIDDLE, 0)                                                                     \
	X(READ_RESP_LAST, RL_EXT_AETH)                                                             \
	X(READ_RESP_ONLY, RL_EXT_AETH)                                                             \
	X(ACK, RL_EXT_AETH)                                                                        \
	X(ATOMIC_ACK, RL_EXT_AETH | RL_EXT_ATOMICACKETH)                                           \
	X(CMP_SWAP, RL_EXT_ATOMICETH)                                                              \
	X(FETCH_ADD, RL_EXT_ATOMICETH)                                                             \
	X(SEND_LAST_INV, RL_EXT_IETH)                                                              \
	X(SEND_ONLY_INV, RL_EXT_IETH)

/* RL_EXT_OF_<op>: the extended headers of RC operation <op>, from the table. */
#define RL_EXT_OF_ROW(op, ext) RL_EXT_OF_##op = (ext),
enum rl_ext_of { RL_RC_OPCODES(RL_EXT_OF_ROW) };
#undef RL_EXT_OF_ROW

/* Bytes of the extended headers named by ext (enum rl_ext bits); a constant
 * expression when ext is one. */
#define RL_EXT_HDR_LEN(ext)                                                                        \
	((((ext)&RL_EXT_RETH) ? RL_RETH_LEN : 0) + (((ext)&RL_EXT_AETH) ? RL_AETH_LEN : 0) +       \
	 (((ext)&RL_EXT_DETH) ? RL_DETH_LEN : 0) + (((ext)&RL_EXT_IMMDT) ? RL_IMMDT_LEN : 0) +     \
	 (((ext)&RL_EXT_IETH) ? RL_IETH_LEN : 0) +                                                 \
	 (((ext)&RL_EXT_ATOMICETH) ? RL_ATOMICETH_LEN : 0) +                                       \
	 (((ext)&RL_EXT_ATOMICACKETH) ? RL_ATOMICACKETH_LEN : 0) +                                 \
	 (((ext)&RL_EXT_CNP_PAD) ? RL_CNP_PAD_LEN : 0))

/*
 * Extended headers (enum rl_ext bits) that follow the BTH for this opcode
 * (RC and UC from the table above, UD SEND_ONLY[_IMM], CNP), or -ENOENT for
 * an opcode that is not defined (RD, reserved values; those parse with
 * ext = 0).
 */
int rl_opcode_ext(uint8_t opcode);

/*
 * Bytes of BTH plus extended headers of a packet with this opcode (payload,
 * pad and ICRC not included), or -ENOENT for an opcode rl_opcode_ext() does
 * not know.
 */
int rl_opcode_hdr_len(uint8_t opcode);

/* Name of a BTH opcode ("RC SEND_ONLY", "UD SEND_ONLY", "CNP", ...), or "unknown". */
const char *rl_opcode_name(uint8_t opcode);

#endif /* RL_OPCODE_H */
