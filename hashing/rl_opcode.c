/* SPDX-License-Identifier: BSD-3-Clause */
/* The opcode facts of rl_opcode.h, all read from RL_RC_OPCODES. */
#include "rl_opcode.h"

#include <errno.h>
#include <stddef.h>

/* Extended headers per RC/UC operation (low 5 bits of the opcode). */
#define EXT_ROW(op, ext) [RL_OP_##op] = (ext),
static const uint8_t rc_ext[RL_OPERATION_MASK + 1] = {RL_RC_OPCODES(EXT_ROW)};
#undef EXT_ROW

/* Which RC operations exist (bit per low-5-bit opcode). */
#define OP_BIT(op, ext) | (1u << RL_OP_##op)
#define RC_OPS          (0u RL_RC_OPCODES(OP_BIT))
/* UC: the SEND and WRITE families only (0..11). */
#define UC_OPS ((1u << (RL_OP_WRITE_ONLY_IMM + 1)) - 1)

/* Names per RC and UC operation: "RC SEND_FIRST", ... (UC only for UC_OPS). */
#define RC_NAME(op, ext) [RL_OP_##op] = "RC " #op,
#define UC_NAME(op, ext) [RL_OP_##op] = "UC " #op,
static const char *const rc_names[RL_OPERATION_MASK + 1] = {RL_RC_OPCODES(RC_NAME)};
static const char *const uc_names[RL_OPERATION_MASK + 1] = {RL_RC_OPCODES(UC_NAME)};
#undef RC_NAME
#undef UC_NAME

int rl_opcode_ext(uint8_t opcode)
{
	unsigned op = opcode & RL_OPERATION_MASK;

	switch (opcode & RL_TRANSPORT_MASK) {
	case RL_TRANSPORT_RC: return (RC_OPS >> op) & 1 ? rc_ext[op] : -ENOENT;
	case RL_TRANSPORT_UC: return (UC_OPS >> op) & 1 ? rc_ext[op] : -ENOENT;
	case RL_TRANSPORT_UD:
		if (op == RL_OP_SEND_ONLY)
			return RL_EXT_DETH;
		if (op == RL_OP_SEND_ONLY_IMM)
			return RL_EXT_DETH | RL_EXT_IMMDT;
		return -ENOENT;
	case RL_TRANSPORT_CNP: return opcode == RL_OP_CNP ? RL_EXT_CNP_PAD : -ENOENT;
	default: return -ENOENT; /* RD is not used by RoCEv2 endpoints we know */
	}
}

int rl_opcode_hdr_len(uint8_t opcode)
{
	int ext = rl_opcode_ext(opcode);

	return ext < 0 ? ext : RL_BTH_LEN + RL_EXT_HDR_LEN((unsigned)ext);
}

const char *rl_opcode_name(uint8_t opcode)
{
	if (rl_opcode_ext(opcode) < 0)
		return "unknown";
	switch (opcode & RL_TRANSPORT_MASK) {
	case RL_TRANSPORT_RC: return rc_names[opcode & RL_OPERATION_MASK];
	case RL_TRANSPORT_UC: return uc_names[opcode & RL_OPERATION_MASK];
	case RL_TRANSPORT_UD:
		return opcode == RL_OP_UD_SEND_ONLY ? "UD SEND_ONLY" : "UD SEND_ONLY_IMM";
	default: return "CNP";
	}
}
