/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll lifecycle: create (plan, buffers, MRs, QPs, groups), destroy,
 * iteration state, connection descriptions. See ne_coll_priv.h for the map
 * of the files.
 */
#include "ne_coll_priv.h"
#include "ne_mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ne_coll_destroy(struct ne_coll *c)
{
	if (!c)
		return;
	if (c->conns) {
		for (uint32_t k = 0; k < c->nconns; k++) {
			struct coll_conn *cn = &c->conns[k];

			if (c->ranks) {
				for (uint32_t q = 0; q < c->nqps && cn->src_qpn && cn->dst_qpn; q++) {
					if (cn->src_qpn[q])
						ne_qp_destroy(c->ranks[cn->src_nic].nic, cn->src_qpn[q]);
					if (cn->dst_qpn[q])
						ne_qp_destroy(c->ranks[cn->dst].nic, cn->dst_qpn[q]);
				}
				/* nccl: the control QPNs name data QP 0 */
				if (cn->src_ctrl_qpn && !coll_nccl(c))
					ne_qp_destroy(c->ranks[cn->src_nic].nic, cn->src_ctrl_qpn);
				if (cn->dst_ctrl_qpn && !coll_nccl(c))
					ne_qp_destroy(c->ranks[cn->dst].nic, cn->dst_ctrl_qpn);
			}
			free(cn->xfers);
			free(cn->flags);
			free(cn->rflags);
			free(cn->recv_parts);
			free(cn->send_parts);
			free(cn->qp_outstanding);
			free(cn->sq_wqes);
			free(cn->lat_ready);
			free(cn->lat_post);
			free(cn->src_qpn);
			free(cn->dst_qpn);
		}
		free(c->conns);
	}
	if (c->groups) {
		for (uint32_t g = 0; g < c->ngroups; g++)
			free(c->groups[g].conns);
		free(c->groups);
	}
	ne_coll_lanes_free(c);
	ne_coll_proxy_free(c);
	ne_coll_series_free(c);
	ne_coll_nvl_free(c);
	ne_coll_chring_free(c);
	free(c->lat);
	free(c->wait);
	if (c->ranks) {
		for (uint32_t i = 0; i < c->nranks; i++) {
			struct coll_rank *r = &c->ranks[i];

			if (r->src_reg)
				ne_mr_dereg(r->nic, r->src_key);
			if (r->stage_reg)
				ne_mr_dereg(r->nic, r->stage_key);
			if (r->pxn_reg)
				ne_mr_dereg(r->nic, r->pxn_key);
			if (r->cq)
				ne_cq_destroy(r->nic, r->cq);
			if (r->src_owned)
				ne_lazy_free(r->src, r->src_len);
			free(r->in);
			free(r->work);
			ne_lazy_free(r->stage, r->stage_len);
		}
		free(c->ranks);
	}
	free(c->dirty_conns);
	free(c->dirty_groups);
	free(c->ready);
	free(c->iter_ns);
	free(c);
}

struct ne_coll *ne_coll_create(const struct ne_coll_config *cfg, struct ne_nic *const *nics,
			       int *err)
{
	struct ne_coll *c;
	int rc = ne_coll_config_check(cfg);

	if (!rc && !nics)
		rc = -EINVAL;
	for (uint32_t i = 0; !rc && i < cfg->nranks; i++)
		if (!nics[i])
			rc = -EINVAL;
	if (rc) {
		if (err)
			*err = rc;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		if (err)
			*err = -ENOMEM;
		return NULL;
	}
	c->cfg = *cfg;
	c->algo_asked = cfg->algo;
	rc = ne_coll_tree_tune(c);
	c->proto = ne_coll_proto_resolve(c);
	ne_coll_cap_resolve(c);
	c->launch_ns = ne_coll_launch_resolve(c);
	if (coll_nccl(c))
		c->cfg.cts = true; /* NCCL's sender always waits for the FIFO entry */
	c->nranks = cfg->nranks;
	c->nchannels = ne_coll_channels(cfg);
	c->nqps = cfg->qps_per_conn;
	/* nccl: NCCL_STEPS slots of which a message takes SLICESTEPS (LL and
	 * LL128: one step, src/enqueue.cc sliceSteps 1) */
	c->window = !coll_nccl(c)			? cfg->window
		    : c->proto == NC_PROTO_SIMPLE ? NE_COLL_NCCL_SLICES_IN_FLIGHT
						  : NE_COLL_NCCL_STEPS;
	c->rank_elems = cfg->bytes / 4;
	c->block_elems = cfg->bytes / 4 / cfg->nranks;
	c->iters_total = cfg->warmup_iters + cfg->iters;
	c->iter_ns = calloc(c->iters_total, sizeof(*c->iter_ns));
	c->ranks = calloc(c->nranks, sizeof(*c->ranks));
	c->ready = calloc(c->nranks, sizeof(*c->ready));
	if (!c->iter_ns || !c->ranks || !c->ready)
		rc = -ENOMEM;
	for (uint32_t i = 0; !rc && i < c->nranks; i++) {
		c->ranks[i].nic = nics[i];
		c->ranks[i].owner = c;
		c->ranks[i].idx = i;
	}
	if (!rc)
		rc = ne_coll_chring_setup(c);
	if (!rc)
		rc = ne_coll_plan_build(c);
	if (!rc)
		rc = ne_coll_chring_nics(c);
	if (!rc)
		rc = ne_coll_steps_resolve(c); /* (before the NVLink heap is sized) */
	if (!rc)
		rc = ne_coll_nvl_setup(c);
	c->send_total = c->recv_total = c->total_xfers;
	if (!rc)
		rc = ne_coll_buffers_alloc(c);
	if (!rc)
		rc = ne_coll_mrs_register(c);
	if (!rc)
		rc = ne_coll_chring_mrs(c);
	if (!rc)
		rc = ne_coll_qps_setup(c);
	if (!rc)
		rc = ne_coll_groups_setup(c);
	if (!rc)
		rc = ne_coll_proxy_setup(c);
	if (!rc)
		rc = ne_coll_lat_setup(c);
	if (rc) {
		ne_coll_destroy(c);
		if (err)
			*err = rc;
		return NULL;
	}
	if (err)
		*err = 0;
	return c;
}

bool ne_coll_done(const struct ne_coll *c)
{
	return c && c->done;
}

uint64_t ne_coll_done_at(const struct ne_coll *c)
{
	return c && c->done ? c->done_at : 0;
}

uint32_t ne_coll_iters_done(const struct ne_coll *c)
{
	return c ? c->iters_done : 0;
}

uint64_t ne_coll_iter_time_ns(const struct ne_coll *c, uint32_t i)
{
	return c && i < c->iters_done ? c->iter_ns[i] : 0;
}

uint32_t ne_coll_num_conns(const struct ne_coll *c)
{
	return c ? c->nconns : 0;
}

int ne_coll_conn_info(const struct ne_coll *c, uint32_t idx, struct ne_coll_conn_info *out)
{
	const struct coll_conn *cn;

	if (!c || !out || idx >= c->nconns)
		return -EINVAL;
	cn = &c->conns[idx];
	out->src = cn->src;
	out->dst = cn->dst;
	out->src_nic = cn->src_nic;
	out->channel = cn->channel;
	out->nqps = c->nqps;
	out->src_data_qpn = cn->src_qpn;
	out->dst_data_qpn = cn->dst_qpn;
	out->src_ctrl_qpn = cn->src_ctrl_qpn;
	out->dst_ctrl_qpn = cn->dst_ctrl_qpn;
	out->ntransfers = cn->nxfers;
	out->bytes = cn->bytes;
	return 0;
}
