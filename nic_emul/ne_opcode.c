/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RC opcode table (IBTA vol. 1 table 39 and the extended headers of
 * section 9.3; the same facts as rxe_opcode.c). Header lengths follow from
 * the extended-header bits (HDR_LEN), so they are not written twice.
 */
#include <stddef.h>

#include "ne_opcode.h"
#include "rl_parse.h"

_Static_assert(NE_OP_TABLE_SIZE == RL_OP_ACK + 1, "the table ends at RC ACKNOWLEDGE");

/* BTH plus the extended headers the mask names. */
#define HDR_LEN(m)                                                                                 \
	(RL_BTH_LEN + (((m)&NE_OPM_RETH) ? RL_RETH_LEN : 0) +                                      \
	 (((m)&NE_OPM_AETH) ? RL_AETH_LEN : 0) + (((m)&NE_OPM_IMMDT) ? RL_IMMDT_LEN : 0))
#define OP(name, m)                                                                                \
	{                                                                                          \
		name, (m), HDR_LEN(m)                                                              \
	}

#define SEND_REQ  (NE_OPM_REQ | NE_OPM_SEND | NE_OPM_PAYLOAD)
#define WRITE_REQ (NE_OPM_REQ | NE_OPM_WRITE | NE_OPM_PAYLOAD)
#define READ_RESP (NE_OPM_RESP | NE_OPM_READ | NE_OPM_PAYLOAD)

/* Indexed by opcode. */
const struct ne_op_info ne_op_table[NE_OP_TABLE_SIZE] = {
	[RL_OP_SEND_FIRST] = OP("RC_SEND_FIRST", SEND_REQ | NE_OPM_FIRST),
	[RL_OP_SEND_MIDDLE] = OP("RC_SEND_MIDDLE", SEND_REQ | NE_OPM_MIDDLE),
	[RL_OP_SEND_LAST] = OP("RC_SEND_LAST", SEND_REQ | NE_OPM_LAST),
	[RL_OP_SEND_LAST_IMM] =
		OP("RC_SEND_LAST_WITH_IMMEDIATE", SEND_REQ | NE_OPM_LAST | NE_OPM_IMMDT),
	[RL_OP_SEND_ONLY] = OP("RC_SEND_ONLY", SEND_REQ | NE_OPM_ONLY),
	[RL_OP_SEND_ONLY_IMM] =
		OP("RC_SEND_ONLY_WITH_IMMEDIATE", SEND_REQ | NE_OPM_ONLY | NE_OPM_IMMDT),
	[RL_OP_WRITE_FIRST] = OP("RC_RDMA_WRITE_FIRST", WRITE_REQ | NE_OPM_FIRST | NE_OPM_RETH),
	[RL_OP_WRITE_MIDDLE] = OP("RC_RDMA_WRITE_MIDDLE", WRITE_REQ | NE_OPM_MIDDLE),
	[RL_OP_WRITE_LAST] = OP("RC_RDMA_WRITE_LAST", WRITE_REQ | NE_OPM_LAST),
	[RL_OP_WRITE_LAST_IMM] =
		OP("RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", WRITE_REQ | NE_OPM_LAST | NE_OPM_IMMDT),
	[RL_OP_WRITE_ONLY] = OP("RC_RDMA_WRITE_ONLY", WRITE_REQ | NE_OPM_ONLY | NE_OPM_RETH),
	[RL_OP_WRITE_ONLY_IMM] = OP("RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
				    WRITE_REQ | NE_OPM_ONLY | NE_OPM_RETH | NE_OPM_IMMDT),
	/* a READ request carries no payload; it starts and ends its message */
	[RL_OP_READ_REQUEST] =
		OP("RC_RDMA_READ_REQUEST", NE_OPM_REQ | NE_OPM_READ | NE_OPM_ONLY | NE_OPM_RETH),
	[RL_OP_READ_RESP_FIRST] =
		OP("RC_RDMA_READ_RESPONSE_FIRST", READ_RESP | NE_OPM_FIRST | NE_OPM_AETH),
	[RL_OP_READ_RESP_MIDDLE] = OP("RC_RDMA_READ_RESPONSE_MIDDLE", READ_RESP | NE_OPM_MIDDLE),
	[RL_OP_READ_RESP_LAST] =
		OP("RC_RDMA_READ_RESPONSE_LAST", READ_RESP | NE_OPM_LAST | NE_OPM_AETH),
	[RL_OP_READ_RESP_ONLY] =
		OP("RC_RDMA_READ_RESPONSE_ONLY", READ_RESP | NE_OPM_ONLY | NE_OPM_AETH),
	[RL_OP_ACK] = OP("RC_ACKNOWLEDGE", NE_OPM_RESP | NE_OPM_ACK | NE_OPM_ONLY | NE_OPM_AETH),
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
