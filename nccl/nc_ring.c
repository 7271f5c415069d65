/* SPDX-License-Identifier: BSD-3-Clause */
/* nc_ring: NCCL's ring order through rail-matched NVSwitch servers (see nc_ring.h). */
#include "nc_ring.h"

#include <errno.h>
#include <stddef.h>

int nc_ring_check(const struct nc_ring_cfg *cfg)
{
	if (cfg == NULL || cfg->servers == 0 || cfg->gpus == 0 ||
	    cfg->gpus > NC_RING_MAX_GPUS || cfg->channels == 0 ||
	    cfg->channels > NC_RING_MAX_CHANNELS)
		return -EINVAL;
	/* ranks are returned as int */
	if ((uint64_t)cfg->servers * cfg->gpus > (uint64_t)INT32_MAX)
		return -EINVAL;
	return 0;
}

static int chan_ok(const struct nc_ring_cfg *cfg, uint32_t channel)
{
	return nc_ring_check(cfg) == 0 && channel < cfg->channels;
}

int nc_ring_nic(const struct nc_ring_cfg *cfg, uint32_t channel)
{
	if (!chan_ok(cfg, channel))
		return -EINVAL;
	/* runtime channel c is search channel c mod G, started at NIC k */
	return (int)(channel % cfg->gpus);
}

/* Position of gpu in the order k, k-1, ..., k+1 (mod G). */
static uint32_t pos_of(const struct nc_ring_cfg *cfg, uint32_t k, uint32_t gpu)
{
	return (k + cfg->gpus - gpu) % cfg->gpus;
}

int nc_ring_gpu_at(const struct nc_ring_cfg *cfg, uint32_t channel, uint32_t pos)
{
	if (!chan_ok(cfg, channel) || pos >= cfg->gpus)
		return -EINVAL;
	uint32_t k = channel % cfg->gpus;
	return (int)((k + cfg->gpus - pos) % cfg->gpus);
}

int nc_ring_next(const struct nc_ring_cfg *cfg, uint32_t channel, uint32_t rank)
{
	if (!chan_ok(cfg, channel) || rank >= cfg->servers * cfg->gpus)
		return -EINVAL;
	uint32_t g = cfg->gpus, s = rank / g, gpu = rank % g, k = channel % g;
	if (pos_of(cfg, k, gpu) + 1 < g)	/* inside the server: one GPU down */
		return (int)(s * g + (gpu + g - 1) % g);
	/* last of the server: the next server's first GPU, k */
	return (int)(((s + 1) % cfg->servers) * g + k);
}

int nc_ring_prev(const struct nc_ring_cfg *cfg, uint32_t channel, uint32_t rank)
{
	if (!chan_ok(cfg, channel) || rank >= cfg->servers * cfg->gpus)
		return -EINVAL;
	uint32_t g = cfg->gpus, s = rank / g, gpu = rank % g, k = channel % g;
	if (pos_of(cfg, k, gpu) > 0)	/* inside the server: one GPU up */
		return (int)(s * g + (gpu + 1) % g);
	/* first of the server: the previous server's last GPU, k + 1 */
	return (int)(((s + cfg->servers - 1) % cfg->servers) * g + (k + 1) % g);
}

int nc_ring_net_hop(const struct nc_ring_cfg *cfg, uint32_t channel, uint32_t server,
		    struct nc_ring_hop *hop)
{
	if (!chan_ok(cfg, channel) || hop == NULL || server >= cfg->servers ||
	    cfg->servers < 2)
		return -EINVAL;
	uint32_t k = channel % cfg->gpus;
	hop->src_server = server;
	hop->src_gpu = (k + 1) % cfg->gpus;
	hop->out_nic_gpu = k;
	hop->dst_server = (server + 1) % cfg->servers;
	hop->dst_gpu = k;
	hop->in_nic_gpu = k;
	return 0;
}
