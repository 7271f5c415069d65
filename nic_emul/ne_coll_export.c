/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll export: the plan read from outside (a driver that runs the
 * collective on another fabric model: the flow engine, dataplane/hosts/
 * dp_flowrun.c), and the iteration times such a run hands back, so that
 * ne_coll_get_result and the printing functions serve both engines.
 * Read-only on the plan: nothing here changes a connection or a transfer.
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <string.h>

int ne_coll_xfer_get(const struct ne_coll *c, uint32_t k, uint32_t s, struct ne_coll_xfer_info *out)
{
	if (!c || !out || k >= c->nconns || s >= c->conns[k].nxfers || c->conns[k].away)
		return -EINVAL;
	_Static_assert(NE_COLL_MAX_DEPS == COLL_MAX_DEPS, "the export's dependencies are the plan's");
	out->len = c->conns[k].xfers[s].len;
	memcpy(out->dep_conn, c->conns[k].xfers[s].dep_conn, sizeof(out->dep_conn));
	memcpy(out->dep_seq, c->conns[k].xfers[s].dep_seq, sizeof(out->dep_seq));
	return 0;
}

int ne_coll_conn_plan(const struct ne_coll *c, uint32_t k, struct ne_coll_conn_plan *out)
{
	if (!c || !out || k >= c->nconns)
		return -EINVAL;
	out->group = c->conns[k].group;
	memcpy(out->downstream, c->conns[k].downstream, sizeof(out->downstream));
	out->nvl = c->conns[k].nvl;
	return 0;
}

void ne_coll_rules(const struct ne_coll *c, struct ne_coll_rules *out)
{
	memset(out, 0, sizeof(*out));
	if (!c)
		return;
	out->window = c->window;
	out->ngroups = c->ngroups;
	out->cts = c->cfg.cts;
	/* sender_step: a slot is reused once its previous message was ACKed in
	 * model nccl and in model rocelab without CTS */
	out->slot_needs_ack = coll_nccl(c) || !c->cfg.cts;
	out->iters = c->iters_total;
}

uint32_t ne_coll_xfer_qp_bytes(const struct ne_coll *c, uint32_t len, uint32_t s, uint32_t q)
{
	uint32_t off;

	if (!c || q >= c->nqps)
		return 0;
	switch (c->cfg.qp_mode) {
	case NE_COLL_QP_RR: /* ne_coll_post_msg: message s on QP s mod nqps (first iteration) */
		return q == s % c->nqps ? len : 0;
	case NE_COLL_QP_SPLIT:
		if (!coll_nccl(c))
			return (uint32_t)(part_start(len, c->nqps, q + 1) - part_start(len, c->nqps, q));
		return ne_coll_split_piece(len, c->nqps, q, &off);
	default: /* ctran (which --fabric flow refuses): one piece per QP */
		return ne_coll_split_piece(len, c->nqps, q, &off);
	}
}

uint32_t ne_coll_wire_bytes(const struct ne_coll *c, uint32_t len)
{
	return c ? coll_wire_len(c, len) : len;
}

void ne_coll_step_lat(const struct ne_coll *c, uint64_t *nvl_ns, uint64_t *net_ns)
{
	*nvl_ns = c ? c->step_nvl_ns : 0;
	*net_ns = c ? c->step_net_ns : 0;
}

uint64_t ne_coll_proto_cap_Bps(const struct ne_coll *c)
{
	return c ? c->proto_cap_Bps : 0;
}

/* The wire bytes of cn's transfers (coll_wire_len each, as ne_coll_nvl_post counts them). */
static uint64_t conn_wire_bytes(const struct ne_coll *c, const struct coll_conn *cn)
{
	uint64_t b = 0;

	if (c->proto == NC_PROTO_SIMPLE || cn->away)
		return cn->bytes;
	for (uint32_t s = 0; s < cn->nxfers; s++)
		b += coll_wire_len(c, cn->xfers[s].len);
	return b;
}

int ne_coll_set_external_times(struct ne_coll *c, uint64_t start_ns, const uint64_t *iter_ns,
			       uint32_t n)
{
	uint64_t t = start_ns;

	if (!c || c->running || n != c->iters_total || c->main || c->nlanes)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		c->iter_ns[i] = iter_ns[i];
		c->stats.nic_ns += iter_ns[i] * c->nranks;
		t += iter_ns[i];
	}
	c->iters_done = n;
	c->stats.transfers_done = c->total_xfers * n;
	/* (the NVLink model's counters follow from the plan: every transfer of a
	 * connection inside a server, every iteration) */
	for (uint32_t k = 0; k < c->nconns; k++)
		if (c->conns[k].nvl) {
			c->stats.nvlink_xfers += (uint64_t)c->conns[k].nxfers * n;
			c->stats.nvlink_bytes += conn_wire_bytes(c, &c->conns[k]) * n;
		}
	c->iter_start = start_ns;
	c->done_at = t;
	c->done = true;
	return 0;
}
