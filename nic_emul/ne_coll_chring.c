/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll channel rings: NCCL's ring of each channel through servers of G
 * GPUs with one NIC each (nccl/nc_ring.h has the rule and its sources in
 * NCCL 2.21.5: search.cc, paths.cc, connect.cc). Channel c's ring visits
 * the servers in the order of their first rank and, inside each, GPUs
 * k, k-1, ..., k+1 with k = c mod G; its network hops leave every server
 * through NIC k (PXN when the last GPU, k+1, is not GPU k) and enter the
 * next one at GPU k. Without them (no cfg.gpu_of, an op that is not a ring,
 * servers not all whole and of one size) every channel follows the rank
 * order and every connection sends on its sender's own NIC.
 */
#include "ne_coll_priv.h"
#include "nc_ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * The rank of GPU g of the s-th server (servers in the order of their first
 * rank) into slot[s x G + g], and G into *gpus. 1 when the ranks are whole
 * servers of one size, 0 otherwise (or out of memory: *oom set).
 */
static int whole_servers(const struct ne_coll *c, uint32_t *slot, uint32_t *gpus, bool *oom)
{
	uint32_t n = c->nranks, g = 0, ns = 0;
	uint32_t *ids = calloc(n, sizeof(*ids)); /* server id of each ordinal */
	int ok = ids != NULL;

	*oom = ids == NULL;
	for (uint32_t r = 0; ok && r < n; r++)
		g += c->cfg.server_of[r] == c->cfg.server_of[0];
	ok = ok && g > 0 && n % g == 0 && g <= NC_RING_MAX_GPUS;
	for (uint32_t i = 0; ok && i < n; i++)
		slot[i] = UINT32_MAX;
	for (uint32_t r = 0; ok && r < n; r++) {
		uint32_t s = 0, gpu = c->cfg.gpu_of[r];

		while (s < ns && ids[s] != c->cfg.server_of[r])
			s++;
		if (s == ns) {
			if (ns == n / g) {
				ok = 0; /* more servers than whole ones would make */
				break;
			}
			ids[ns++] = c->cfg.server_of[r];
		}
		if (gpu >= g || slot[s * g + gpu] != UINT32_MAX)
			ok = 0; /* a GPU outside 0..G-1, or twice */
		else
			slot[s * g + gpu] = r;
	}
	free(ids);
	*gpus = g;
	return ok;
}

int ne_coll_chring_setup(struct ne_coll *c)
{
	uint32_t n = c->nranks, g = 0, nch = c->nchannels;
	uint32_t *slot;
	bool oom = false;
	int rc = 0;

	if (!c->cfg.gpu_of || !c->cfg.server_of || !coll_op_is_ring(c->cfg.op))
		return 0;
	slot = malloc(n * sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	if (whole_servers(c, slot, &g, &oom)) {
		struct nc_ring_cfg ring = {.servers = n / g, .gpus = g, .channels = nch};

		c->ring_rank = malloc((size_t)nch * n * sizeof(*c->ring_rank));
		c->ring_pos = malloc((size_t)nch * n * sizeof(*c->ring_pos));
		if (!c->ring_rank || !c->ring_pos || nc_ring_check(&ring))
			rc = -ENOMEM;
		for (uint32_t ch = 0; !rc && ch < nch; ch++)
			for (uint32_t p = 0; p < n; p++) {
				uint32_t s = p / g;
				uint32_t r = slot[s * g + (uint32_t)nc_ring_gpu_at(&ring, ch, p % g)];

				c->ring_rank[(size_t)ch * n + p] = r;
				c->ring_pos[(size_t)ch * n + r] = p;
			}
	}
	free(slot);
	if (oom)
		rc = -ENOMEM;
	if (rc)
		ne_coll_chring_free(c);
	return rc;
}

/*
 * The sending NIC of every connection: its sender's, but for a channel
 * ring's network hop the NIC of GPU k (k = channel mod G) of the sender's
 * server, which is the rank of that server at position 0 of the ring (the
 * ring enters the server at GPU k).
 */
int ne_coll_chring_nics(struct ne_coll *c)
{
	uint32_t n = c->nranks;

	for (uint32_t k = 0; k < c->nconns; k++) {
		struct coll_conn *cn = &c->conns[k];
		uint32_t p, g;

		cn->src_nic = cn->src;
		/* (cfg.server_of: ne_coll_nvl_setup, which copies it, comes after) */
		if (!c->ring_rank || c->cfg.server_of[cn->src] == c->cfg.server_of[cn->dst])
			continue;
		/* G: the ring's positions of one server are consecutive */
		for (g = 1; g < n && c->cfg.server_of[coll_ring_rank(c, cn->channel, g)] ==
					     c->cfg.server_of[coll_ring_rank(c, cn->channel, 0)]; g++)
			;
		p = coll_ring_pos(c, cn->channel, cn->src) / g * g;
		cn->src_nic = coll_ring_rank(c, cn->channel, p);
		cn->pxn = cn->src_nic != cn->src;
		c->pxn_conns += cn->pxn;
	}
	return 0;
}

int ne_coll_chring_mrs(struct ne_coll *c)
{
	for (uint32_t k = 0; c->pxn_conns && k < c->nconns; k++) {
		const struct coll_conn *cn = &c->conns[k];
		struct coll_rank *px = &c->ranks[cn->src_nic];
		const struct coll_rank *rs = &c->ranks[cn->src];
		struct ne_mr_attr a;
		int rc;

		if (!cn->pxn || (px->pxn_reg && px->pxn_src == cn->src))
			continue;
		if (px->pxn_reg) /* (nc_ring: NIC k sends for GPU k+1 alone) */
			return -EINVAL;
		memset(&a, 0, sizeof(a));
		a.addr = rs->src;
		a.len = rs->src_len;
		a.iova = ne_coll_src_iova(cn->src); /* (each rank's range: no overlap) */
		a.access = NE_ACCESS_LOCAL_WRITE;
		rc = ne_mr_reg(px->nic, &a, &px->pxn_key);
		if (rc)
			return rc;
		px->pxn_reg = true;
		px->pxn_src = cn->src;
	}
	return 0;
}

void ne_coll_chring_free(struct ne_coll *c)
{
	free(c->ring_rank);
	free(c->ring_pos);
	c->ring_rank = c->ring_pos = NULL;
}

bool ne_coll_chan_rings(const struct ne_coll *c)
{
	return c && c->ring_rank;
}

int ne_coll_ring_next(const struct ne_coll *c, uint32_t ch, uint32_t rank)
{
	if (!c || ch >= c->nchannels || rank >= c->nranks)
		return -EINVAL;
	return (int)coll_ring_rank(c, ch, (coll_ring_pos(c, ch, rank) + 1) % c->nranks);
}
