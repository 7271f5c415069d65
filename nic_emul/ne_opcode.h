/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One table of the RC opcodes the emulated NIC sends and executes (the role
 * of rxe_opcode.c): per opcode its name, a mask of properties and the length
 * of its headers (BTH and extended headers, without payload, pad and ICRC).
 * Requester, responder, completer and packet builder ask this table instead
 * of deciding opcode facts with their own switch or if chains. Which
 * extended headers an opcode carries (the RETH/AETH/IMMDT bits, hdr_len)
 * is not written here: ne_opcode.c derives it from hashing's one opcode
 * table (RL_RC_OPCODES in hashing/rl_opcode.h), the one the parser reads.
 * Opcodes outside the table (atomics, SEND with invalidate, UC, UD, CNP)
 * have mask 0: neither request nor response, so the NIC drops them.
 */
#ifndef NE_OPCODE_H
#define NE_OPCODE_H

#include <stdbool.h>
#include <stdint.h>

/* Properties of an opcode (bits of ne_op_mask()). */
enum ne_op_bits {
	NE_OPM_REQ = 1u << 0,      /* sent by the requester, executed by the responder */
	NE_OPM_RESP = 1u << 1,     /* sent by the responder, consumed by the completer */
	NE_OPM_SEND = 1u << 2,     /* SEND family */
	NE_OPM_WRITE = 1u << 3,    /* RDMA WRITE family */
	NE_OPM_READ = 1u << 4,     /* RDMA READ request or READ response */
	NE_OPM_ACK = 1u << 5,      /* ACK/NAK (AETH only) */
	NE_OPM_FIRST = 1u << 6,    /* first packet of a multi-packet message */
	NE_OPM_MIDDLE = 1u << 7,   /* middle packet */
	NE_OPM_LAST = 1u << 8,     /* last packet of a multi-packet message */
	NE_OPM_ONLY = 1u << 9,     /* the message's only packet */
	NE_OPM_RETH = 1u << 10,    /* carries a RETH (va, rkey, dma length) */
	NE_OPM_AETH = 1u << 11,    /* carries an AETH (syndrome, MSN) */
	NE_OPM_IMMDT = 1u << 12,   /* carries immediate data */
	NE_OPM_PAYLOAD = 1u << 13, /* may carry payload */
};

/* A message starts (FIRST or ONLY) or ends (LAST or ONLY) with the packet. */
#define NE_OPM_START (NE_OPM_FIRST | NE_OPM_ONLY)
#define NE_OPM_END   (NE_OPM_LAST | NE_OPM_ONLY)

/* RC opcodes 0 (SEND_FIRST) .. 17 (ACKNOWLEDGE): the table's size. */
#define NE_OP_TABLE_SIZE 18

/* One row of the table (ne_opcode.c). Read it through the functions below;
 * it is in the header only so that they inline on the per-packet path. */
struct ne_op_info {
	const char *name;
	uint32_t mask;    /* enum ne_op_bits */
	uint32_t hdr_len; /* BTH + extended headers */
};

extern const struct ne_op_info ne_op_table[NE_OP_TABLE_SIZE];

/* Property mask of opcode op; 0 for an opcode the NIC does not use. */
static inline uint32_t ne_op_mask(uint8_t op)
{
	return op < NE_OP_TABLE_SIZE ? ne_op_table[op].mask : 0;
}

/* True when op has at least one of the properties in bits. */
static inline bool ne_op_any(uint8_t op, uint32_t bits)
{
	return (ne_op_mask(op) & bits) != 0;
}

/* Bytes of BTH plus extended headers of op (payload, pad and ICRC not
 * included); 0 for an opcode the NIC does not use. */
static inline uint32_t ne_op_hdr_len(uint8_t op)
{
	return op < NE_OP_TABLE_SIZE ? ne_op_table[op].hdr_len : 0;
}

/* Name of op as rxe prints it ("RC_SEND_FIRST"), "UNKNOWN" outside the table. */
const char *ne_op_name(uint8_t op);

/* Requests and responses the NIC handles (ne_op_mask has REQ / RESP). */
bool ne_op_is_request(uint8_t op);
bool ne_op_is_response(uint8_t op);

#endif
