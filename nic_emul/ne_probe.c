/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_probe: the headers a QP would put on its next frame, for a caller that
 * traces the frame's path through switches without sending it (the flow
 * engine's path choice, dataplane/hosts/dp_flowrun.c). The same builder as
 * the NIC's own frames (ne_build_hdrs), so every field a switch hashes on
 * (addresses, UDP source port, destination QP, DSCP) is the wire's.
 */
#include "ne_opcode.h"
#include "ne_priv.h"

#include <errno.h>
#include <string.h>

int ne_nic_probe_frame(struct ne_nic *nic, uint32_t qpn, uint8_t opcode, uint8_t *buf, size_t cap,
		       size_t *len)
{
	const struct ne_qp *qp = nic ? ne_qp_lookup(nic, qpn) : NULL;
	uint32_t roce = ne_op_hdr_len(opcode) + RL_ICRC_LEN;
	struct ne_bth_fields bth = {.opcode = opcode};
	uint16_t ip_id;

	if (!qp)
		return -ENOENT;
	if (roce == RL_ICRC_LEN || NE_L2L4_LEN + roce > cap)
		return -EINVAL;
	memset(buf, 0, NE_L2L4_LEN + roce);
	bth.dqpn = qp->attr.dest_qpn;
	bth.psn = qp->attr.sq_psn;
	ip_id = nic->ip_id; /* (a probe is not a frame sent: the NIC's next id stays) */
	ne_build_hdrs(nic, qp, buf, roce, &bth);
	nic->ip_id = ip_id;
	*len = NE_L2L4_LEN + roce;
	return 0;
}
