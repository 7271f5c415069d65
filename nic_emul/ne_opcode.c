/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RC opcode table (IBTA vol. 1 table 39; the same facts as rxe_opcode.c).
 * A row says what the NIC does with the opcode (side, family, position in
 * the message, payload); which extended headers follow the BTH comes from
 * hashing's one table (RL_RC_OPCODES in rl_opcode.h, which the frame parser
 * reads too): the RETH/AETH/IMMDT bits of the mask and the header length are
 * derived from it here, not written a second time.
 */
#include <stddef.h>

#include "ne_opcode.h"
#include "rl_opcode.h"

_Static_assert(NE_OP_TABLE_SIZE == RL_OP_ACK + 1, "the table ends at RC ACKNOWLEDGE");

/* The mask bits of the extended headers the NIC reads and writes. */
#define EXT_BITS(ext)                                                                              \
	((((ext) & RL_EXT_RETH) ? NE_OPM_RETH : 0) | (((ext) & RL_EXT_AETH) ? NE_OPM_AETH : 0) |   \
	 (((ext) & RL_EXT_IMMDT) ? NE_OPM_IMMDT : 0))
/* Only those: an opcode with another extended header has no row here. */
#define NE_EXT_KNOWN (RL_EXT_RETH | RL_EXT_AETH | RL_EXT_IMMDT)

/* Row of RL_OP_<op>: its name, its role bits m plus the header bits and the
 * header length of hashing's table. */
#define OP(op, name, m)                                                                            \
	[RL_OP_##op] = { (name), (m) | EXT_BITS(RL_EXT_OF_##op),                                  \
			 RL_BTH_LEN + RL_EXT_HDR_LEN(RL_EXT_OF_##op) }

#define SEND_REQ  (NE_OPM_REQ | NE_OPM_SEND | NE_OPM_PAYLOAD)
#define WRITE_REQ (NE_OPM_REQ | NE_OPM_WRITE | NE_OPM_PAYLOAD)
#define READ_RESP (NE_OPM_RESP | NE_OPM_READ | NE_OPM_PAYLOAD)

/* Every opcode of the table has only headers the NIC handles. */
#define KNOWN_ONLY(op, ext) _Static_assert(RL_OP_##op > RL_OP_ACK || ((ext) & ~NE_EXT_KNOWN) == 0, \
					   "RC " #op ": an extended header the NIC does not build");
RL_RC_OPCODES(KNOWN_ONLY)
#undef KNOWN_ONLY

/* Indexed by opcode. */
const struct ne_op_info ne_op_table[NE_OP_TABLE_SIZE] = {
	OP(SEND_FIRST, "RC_SEND_FIRST", SEND_REQ | NE_OPM_FIRST),
	OP(SEND_MIDDLE, "RC_SEND_MIDDLE", SEND_REQ | NE_OPM_MIDDLE),
	OP(SEND_LAST, "RC_SEND_LAST", SEND_REQ | NE_OPM_LAST),
	OP(SEND_LAST_IMM, "RC_SEND_LAST_WITH_IMMEDIATE", SEND_REQ | NE_OPM_LAST),
	OP(SEND_ONLY, "RC_SEND_ONLY", SEND_REQ | NE_OPM_ONLY),
	OP(SEND_ONLY_IMM, "RC_SEND_ONLY_WITH_IMMEDIATE", SEND_REQ | NE_OPM_ONLY),
	OP(WRITE_FIRST, "RC_RDMA_WRITE_FIRST", WRITE_REQ | NE_OPM_FIRST),
	OP(WRITE_MIDDLE, "RC_RDMA_WRITE_MIDDLE", WRITE_REQ | NE_OPM_MIDDLE),
	OP(WRITE_LAST, "RC_RDMA_WRITE_LAST", WRITE_REQ | NE_OPM_LAST),
	OP(WRITE_LAST_IMM, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", WRITE_REQ | NE_OPM_LAST),
	OP(WRITE_ONLY, "RC_RDMA_WRITE_ONLY", WRITE_REQ | NE_OPM_ONLY),
	OP(WRITE_ONLY_IMM, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", WRITE_REQ | NE_OPM_ONLY),
	/* a READ request carries no payload; it starts and ends its message */
	OP(READ_REQUEST, "RC_RDMA_READ_REQUEST", NE_OPM_REQ | NE_OPM_READ | NE_OPM_ONLY),
	OP(READ_RESP_FIRST, "RC_RDMA_READ_RESPONSE_FIRST", READ_RESP | NE_OPM_FIRST),
	OP(READ_RESP_MIDDLE, "RC_RDMA_READ_RESPONSE_MIDDLE", READ_RESP | NE_OPM_MIDDLE),
	OP(READ_RESP_LAST, "RC_RDMA_READ_RESPONSE_LAST", READ_RESP | NE_OPM_LAST),
	OP(READ_RESP_ONLY, "RC_RDMA_READ_RESPONSE_ONLY", READ_RESP | NE_OPM_ONLY),
	OP(ACK, "RC_ACKNOWLEDGE", NE_OPM_RESP | NE_OPM_ACK | NE_OPM_ONLY),
};

const char *ne_op_name(uint8_t op)
{
	return ne_op_mask(op) ? ne_op_table[op].name : "UNKNOWN";
}

bool ne_op_is_request(uint8_t op)
{
	return ne_op_any(op, NE_OPM_REQ);
}

bool ne_op_is_response(uint8_t op)
{
	return ne_op_any(op, NE_OPM_RESP);
}
