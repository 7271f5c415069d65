/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll configuration: defaults, checks, what a rank's NIC needs.
 */
#include "ne_coll_priv.h"
#include "nc_nvlink.h"
#include "nc_tree.h"

#include <errno.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Configuration */

void ne_coll_config_default(struct ne_coll_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->op = NE_COLL_ALLREDUCE;
	cfg->nranks = 2;
	cfg->bytes = 1u << 20;
	cfg->channels = 1;
	cfg->qps_per_conn = 1;
	cfg->qp_mode = NE_COLL_QP_SPLIT;
	cfg->chunk_bytes = 128u << 10;
	cfg->window = 1;
	cfg->cts = true;
	cfg->data_dscp = 26;
	cfg->ctrl_dscp = 48;
	cfg->path_mtu = 4096;
	cfg->timeout = 14;
	cfg->retry_cnt = 7;
	cfg->root = 0;
	cfg->data = true;
	cfg->warmup_iters = 0;
	cfg->iters = 1;
	cfg->sport = NE_COLL_SPORT_NIC;
	cfg->sport_fixed = 0xC000;
	cfg->model = NE_COLL_MODEL_ROCELAB;
	cfg->nccl_buffsize = NE_COLL_NCCL_BUFFSIZE_DEFAULT;
	cfg->nccl_p2p_chunk = NE_COLL_NCCL_P2P_CHUNK_DEFAULT;
	cfg->nccl_min_channels = 1;
	cfg->nccl_max_channels = NE_COLL_MAX_CHANNELS;
	cfg->nccl_fifo_tc = NE_COLL_FIFO_TC_NONE;
	cfg->ctran_wqe_bytes = NE_COLL_CTRAN_WQE_DEFAULT;
	cfg->ctran_max_msgs = NE_COLL_CTRAN_MAX_MSGS_DEFAULT;
	cfg->proxy_post_ns = 0;
	cfg->proxy_poll_ns = 0;
	cfg->server_of = NULL;
	cfg->gpu_of = NULL;
	cfg->nvlink_Bps = NC_NVLINK_H100_BPS;
	cfg->nvlink_lat_ns = NC_NVLINK_H100_LAT_NS;
	cfg->shift = 1;
}

/* Proxy costs above this are a unit mistake, not a host. */
#define PROXY_COST_MAX_NS 1000000000u
/* Largest NCCL_BUFFSIZE accepted (a step must fit a 32-bit length). */
#define NCCL_BUFFSIZE_MAX (1u << 30)
#define NCCL_FIFO_TC_MAX 255

static int check_nccl(const struct ne_coll_config *cfg)
{
	const uint32_t buff_unit = NE_COLL_NCCL_STEPS * NE_COLL_NCCL_ALIGN;

	if (cfg->qps_per_conn > NE_COLL_NCCL_MAX_QPS || cfg->nccl_buffsize == 0 ||
	    cfg->nccl_buffsize % buff_unit || cfg->nccl_buffsize > NCCL_BUFFSIZE_MAX ||
	    cfg->nccl_p2p_chunk == 0 || cfg->nccl_p2p_chunk % NE_COLL_NCCL_ALIGN ||
	    cfg->nccl_p2p_chunk > NCCL_BUFFSIZE_MAX || cfg->nccl_min_channels == 0 ||
	    cfg->nccl_max_channels > NE_COLL_MAX_CHANNELS ||
	    cfg->nccl_min_channels > cfg->nccl_max_channels ||
	    cfg->nccl_fifo_tc < NE_COLL_FIFO_TC_NONE || cfg->nccl_fifo_tc > NCCL_FIFO_TC_MAX ||
	    cfg->ctran_wqe_bytes % NE_COLL_NCCL_ALIGN || cfg->ctran_max_msgs == 0 ||
	    cfg->ctran_max_msgs > UINT16_MAX)
		return -EINVAL;
	return 0;
}

int ne_coll_config_check(const struct ne_coll_config *cfg)
{
	if (!cfg || cfg->op > NE_COLL_SENDRECV || cfg->nranks < 2 || cfg->nranks > NE_COLL_MAX_RANKS ||
	    cfg->bytes == 0 || cfg->channels == 0 || cfg->channels > NE_COLL_MAX_CHANNELS ||
	    cfg->qps_per_conn == 0 || cfg->model > NE_COLL_MODEL_NCCL ||
	    (cfg->model == NE_COLL_MODEL_ROCELAB &&
	     (cfg->qps_per_conn > NE_COLL_MAX_QPS || cfg->qp_mode > NE_COLL_QP_RR)) ||
	    cfg->qp_mode > NE_COLL_QP_CTRAN || cfg->chunk_bytes < 4 || cfg->chunk_bytes % 4 ||
	    cfg->chunk_bytes > (1u << 30) || cfg->window == 0 || cfg->window > 1024 ||
	    cfg->data_dscp > 63 || cfg->ctrl_dscp > 63 || cfg->timeout > 31 || cfg->retry_cnt > 7 ||
	    cfg->iters == 0 || cfg->sport > NE_COLL_SPORT_HASH ||
	    cfg->proxy_post_ns > PROXY_COST_MAX_NS || cfg->proxy_poll_ns > PROXY_COST_MAX_NS ||
	    (cfg->launch_ns > PROXY_COST_MAX_NS && cfg->launch_ns != NE_COLL_LAUNCH_NCCL) ||
	    (cfg->gpu_of && !cfg->server_of))
		return -EINVAL;
	if (cfg->model == NE_COLL_MODEL_NCCL && check_nccl(cfg))
		return -EINVAL;
	if (cfg->path_mtu != 256 && cfg->path_mtu != 512 && cfg->path_mtu != 1024 &&
	    cfg->path_mtu != 2048 && cfg->path_mtu != 4096)
		return -EINVAL;
	if (cfg->algo > NE_COLL_ALGO_AUTO ||
	    (cfg->algo == NE_COLL_ALGO_TREE &&
	     (cfg->op != NE_COLL_ALLREDUCE || ne_coll_tree_check(cfg))))
		return -EINVAL;
	if (coll_op_rooted(cfg->op) && cfg->root >= cfg->nranks)
		return -EINVAL;
	if (ne_coll_p2p_check(cfg, NULL, 0))
		return -EINVAL;
	if (cfg->bytes / 4 == 0)
		return -EINVAL;
	if ((cfg->op == NE_COLL_ALLGATHER || cfg->op == NE_COLL_REDUCESCATTER ||
	     cfg->op == NE_COLL_ALLTOALL) &&
	    cfg->bytes / 4 / cfg->nranks == 0)
		return -EINVAL;
	return 0;
}

uint32_t ne_coll_channels(const struct ne_coll_config *cfg)
{
	uint32_t ch = cfg->channels;

	if (cfg->model != NE_COLL_MODEL_NCCL)
		return ch;
	if (ch < cfg->nccl_min_channels)
		ch = cfg->nccl_min_channels;
	if (ch > cfg->nccl_max_channels)
		ch = cfg->nccl_max_channels;
	return ch;
}

uint32_t ne_coll_qps_needed(const struct ne_coll_config *cfg, uint32_t rank)
{
	/* rocelab: data QPs and a control QP per connection; nccl: data QPs */
	uint32_t ctrl = cfg->model == NE_COLL_MODEL_NCCL ? 0 : 1;
	uint32_t per = ne_coll_channels(cfg) * (cfg->qps_per_conn + ctrl);

	/* tree: a server's head sends to and receives from its parent, its
	 * chain neighbour and two child servers on a channel */
	if (cfg->op == NE_COLL_ALLREDUCE && cfg->algo != NE_COLL_ALGO_RING)
		return 2 * (NC_TREE_MAX_ARITY + 1) * per;
	switch (cfg->op) {
	case NE_COLL_ALLTOALL:
		return 2 * (cfg->nranks - 1) * per;
	case NE_COLL_INCAST:
		return rank == cfg->root ? (cfg->nranks - 1) * per : per;
	case NE_COLL_SENDRECV: {
		uint32_t out, in;

		ne_coll_p2p_degree(cfg, rank, &out, &in);
		return (out + in) * per;
	}
	default:
		/* channel rings: beside its own two, a NIC may hold a PXN
		 * sender's connection on each channel (ne_coll_chring.c) */
		return (cfg->gpu_of ? 3 : 2) * per;
	}
}

uint32_t ne_coll_mrs_needed(const struct ne_coll_config *cfg, uint32_t rank)
{
	(void)rank;
	/* source and staging; channel rings: one PXN sender's source */
	return cfg->gpu_of ? 3 : 2;
}

void ne_coll_nic_config(const struct ne_coll_config *cfg, uint32_t rank, uint64_t line_rate_bps,
			struct ne_nic_config *out)
{
	uint32_t v = rank + 1;

	ne_nic_config_default(out);
	out->mac[0] = 0x02;
	out->mac[4] = (uint8_t)(v >> 8);
	out->mac[5] = (uint8_t)v;
	out->ipv4 = 0x0A000000u | (v & 0xFFFFu);
	out->line_rate_bps = line_rate_bps;
	out->ip_id = (uint16_t)(v << 8);
	out->max_qps = ne_coll_qps_needed(cfg, rank) + 16;
	out->max_mrs = ne_coll_mrs_needed(cfg, rank) + 8;
	switch (cfg->sport) {
	case NE_COLL_SPORT_RXE:
		out->sport_policy = NE_SPORT_RXE;
		break;
	case NE_COLL_SPORT_FIXED:
		out->sport_policy = NE_SPORT_FIXED;
		out->sport_fixed = cfg->sport_fixed;
		break;
	case NE_COLL_SPORT_HASH:
		out->sport_policy = NE_SPORT_HASH;
		out->sport_seed = cfg->sport_seed;
		break;
	default:
		break;
	}
}
