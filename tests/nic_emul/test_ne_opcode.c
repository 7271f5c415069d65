/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The opcode table (ne_opcode.c) against expectations written out by hand
 * from IBTA vol. 1 (table 39, section 9.3 extended headers) and rxe's
 * rxe_opcode.c: per RC opcode the NIC uses, its request/response side, its
 * family, its position in the message, its extended headers and its header
 * length. Every other opcode value must be unknown (mask 0). The extended
 * header bits and lengths are derived from hashing's opcode table
 * (rl_opcode.h), the one the frame parser reads; test_matches_parser checks
 * the derived values against it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ne_opcode.h"
#include "rl_opcode.h"

struct expect {
	uint8_t op;
	const char *name;
	char side;   /* 'q' request, 's' response */
	char family; /* 'S' send, 'W' write, 'R' read, 'A' ack */
	char pos;    /* 'F' first, 'M' middle, 'L' last, 'O' only */
	bool reth, aeth, immdt, payload;
	uint32_t hdr_len; /* BTH + extended headers, by hand */
};

static const struct expect rc[] = {
	{0, "RC_SEND_FIRST", 'q', 'S', 'F', false, false, false, true, 12},
	{1, "RC_SEND_MIDDLE", 'q', 'S', 'M', false, false, false, true, 12},
	{2, "RC_SEND_LAST", 'q', 'S', 'L', false, false, false, true, 12},
	{3, "RC_SEND_LAST_WITH_IMMEDIATE", 'q', 'S', 'L', false, false, true, true, 16},
	{4, "RC_SEND_ONLY", 'q', 'S', 'O', false, false, false, true, 12},
	{5, "RC_SEND_ONLY_WITH_IMMEDIATE", 'q', 'S', 'O', false, false, true, true, 16},
	{6, "RC_RDMA_WRITE_FIRST", 'q', 'W', 'F', true, false, false, true, 28},
	{7, "RC_RDMA_WRITE_MIDDLE", 'q', 'W', 'M', false, false, false, true, 12},
	{8, "RC_RDMA_WRITE_LAST", 'q', 'W', 'L', false, false, false, true, 12},
	{9, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", 'q', 'W', 'L', false, false, true, true, 16},
	{10, "RC_RDMA_WRITE_ONLY", 'q', 'W', 'O', true, false, false, true, 28},
	{11, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", 'q', 'W', 'O', true, false, true, true, 32},
	{12, "RC_RDMA_READ_REQUEST", 'q', 'R', 'O', true, false, false, false, 28},
	{13, "RC_RDMA_READ_RESPONSE_FIRST", 's', 'R', 'F', false, true, false, true, 16},
	{14, "RC_RDMA_READ_RESPONSE_MIDDLE", 's', 'R', 'M', false, false, false, true, 12},
	{15, "RC_RDMA_READ_RESPONSE_LAST", 's', 'R', 'L', false, true, false, true, 16},
	{16, "RC_RDMA_READ_RESPONSE_ONLY", 's', 'R', 'O', false, true, false, true, 16},
	{17, "RC_ACKNOWLEDGE", 's', 'A', 'O', false, true, false, false, 16},
};

static uint32_t family_bit(char f)
{
	switch (f) {
	case 'S': return NE_OPM_SEND;
	case 'W': return NE_OPM_WRITE;
	case 'R': return NE_OPM_READ;
	default: return NE_OPM_ACK;
	}
}

static uint32_t pos_bit(char p)
{
	switch (p) {
	case 'F': return NE_OPM_FIRST;
	case 'M': return NE_OPM_MIDDLE;
	case 'L': return NE_OPM_LAST;
	default: return NE_OPM_ONLY;
	}
}

/* The whole mask, rebuilt from the hand-written columns. */
static uint32_t expected_mask(const struct expect *e)
{
	return (e->side == 'q' ? NE_OPM_REQ : NE_OPM_RESP) | family_bit(e->family) |
	       pos_bit(e->pos) | (e->reth ? NE_OPM_RETH : 0) | (e->aeth ? NE_OPM_AETH : 0) |
	       (e->immdt ? NE_OPM_IMMDT : 0) | (e->payload ? NE_OPM_PAYLOAD : 0);
}

static void test_rc_opcodes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rc) / sizeof(rc[0]); i++) {
		const struct expect *e = &rc[i];

		print_message("opcode %u %s\n", e->op, e->name);
		assert_int_equal(ne_op_mask(e->op), expected_mask(e));
		assert_string_equal(ne_op_name(e->op), e->name);
		assert_int_equal(ne_op_hdr_len(e->op), e->hdr_len);
		assert_int_equal(ne_op_is_request(e->op), e->side == 'q');
		assert_int_equal(ne_op_is_response(e->op), e->side == 's');
		assert_int_equal(ne_op_any(e->op, NE_OPM_START), e->pos == 'F' || e->pos == 'O');
		assert_int_equal(ne_op_any(e->op, NE_OPM_END), e->pos == 'L' || e->pos == 'O');
	}
}

/* The table's header facts are hashing's (rl_opcode.h, which the frame
 * parser reads): the RETH/AETH/IMMDT bits and the header length that
 * ne_opcode.c derives agree with rl_opcode_ext() and rl_opcode_hdr_len(),
 * and with the hand-written columns above (test_rc_opcodes). */
static void test_matches_parser(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rc) / sizeof(rc[0]); i++) {
		int ext = rl_opcode_ext(rc[i].op);

		print_message("opcode %u %s\n", rc[i].op, rc[i].name);
		assert_true(ext >= 0);
		assert_int_equal(ext & ~(RL_EXT_RETH | RL_EXT_AETH | RL_EXT_IMMDT), 0);
		assert_int_equal(!!(ext & RL_EXT_RETH), ne_op_any(rc[i].op, NE_OPM_RETH));
		assert_int_equal(!!(ext & RL_EXT_AETH), ne_op_any(rc[i].op, NE_OPM_AETH));
		assert_int_equal(!!(ext & RL_EXT_IMMDT), ne_op_any(rc[i].op, NE_OPM_IMMDT));
		assert_int_equal(ne_op_hdr_len(rc[i].op), rl_opcode_hdr_len(rc[i].op));
	}
}

/* Atomics, SEND with invalidate, UC, UD, CNP and undefined values: unknown. */
static void test_others_unknown(void **state)
{
	(void)state;
	for (unsigned op = RL_OP_ACK + 1; op <= UINT8_MAX; op++) {
		assert_int_equal(ne_op_mask((uint8_t)op), 0);
		assert_int_equal(ne_op_hdr_len((uint8_t)op), 0);
		assert_string_equal(ne_op_name((uint8_t)op), "UNKNOWN");
		assert_false(ne_op_is_request((uint8_t)op));
		assert_false(ne_op_is_response((uint8_t)op));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rc_opcodes),
		cmocka_unit_test(test_matches_parser),
		cmocka_unit_test(test_others_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
