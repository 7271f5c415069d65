/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll configuration: defaults, checks, what a rank's NIC needs.
 */
#include "ne_coll_priv.h"

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
}

int ne_coll_config_check(const struct ne_coll_config *cfg)
{
	if (!cfg || cfg->op > NE_COLL_INCAST || cfg->nranks < 2 || cfg->nranks > NE_COLL_MAX_RANKS ||
	    cfg->bytes == 0 || cfg->channels == 0 || cfg->channels > NE_COLL_MAX_CHANNELS ||
	    cfg->qps_per_conn == 0 || cfg->qps_per_conn > NE_COLL_MAX_QPS ||
	    cfg->qp_mode > NE_COLL_QP_RR || cfg->chunk_bytes < 4 || cfg->chunk_bytes % 4 ||
	    cfg->chunk_bytes > (1u << 30) || cfg->window == 0 || cfg->window > 1024 ||
	    cfg->data_dscp > 63 || cfg->ctrl_dscp > 63 || cfg->timeout > 31 || cfg->retry_cnt > 7 ||
	    cfg->iters == 0 || cfg->sport > NE_COLL_SPORT_HASH)
		return -EINVAL;
	if (cfg->path_mtu != 256 && cfg->path_mtu != 512 && cfg->path_mtu != 1024 &&
	    cfg->path_mtu != 2048 && cfg->path_mtu != 4096)
		return -EINVAL;
	if (cfg->op == NE_COLL_INCAST && cfg->root >= cfg->nranks)
		return -EINVAL;
	if (cfg->bytes / 4 == 0)
		return -EINVAL;
	if ((cfg->op == NE_COLL_ALLGATHER || cfg->op == NE_COLL_REDUCESCATTER ||
	     cfg->op == NE_COLL_ALLTOALL) &&
	    cfg->bytes / 4 / cfg->nranks == 0)
		return -EINVAL;
	return 0;
}

uint32_t ne_coll_qps_needed(const struct ne_coll_config *cfg, uint32_t rank)
{
	uint32_t per = cfg->channels * (cfg->qps_per_conn + 1);

	switch (cfg->op) {
	case NE_COLL_ALLTOALL:
		return 2 * (cfg->nranks - 1) * per;
	case NE_COLL_INCAST:
		return rank == cfg->root ? (cfg->nranks - 1) * per : per;
	default:
		return 2 * per;
	}
}

uint32_t ne_coll_mrs_needed(const struct ne_coll_config *cfg, uint32_t rank)
{
	(void)cfg;
	(void)rank;
	return 2;
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
