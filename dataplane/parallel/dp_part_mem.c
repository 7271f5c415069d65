/* SPDX-License-Identifier: BSD-3-Clause */
/* What one MPI rank holds of the fabric's memory (dp_part.h): its share of the packet pool, its peak. */
#include "dp_part.h"

#include <stdlib.h>
#include <sys/resource.h>

#include "topo_part.h"

/*
 * The fewest frames a rank's pool gets (n when that is fewer): a partition of
 * the default cut may hold no switch's channel (3 ranks on 3 switches: 2
 * leaves and a spine leave one empty), and DPDK refuses a pool of fewer than
 * 1.5 times its per-core cache (rte_mempool_create_empty: 256 here, dp_pool.c).
 */
#define POOL_SHARE_MIN 1023u

uint32_t dp_parts_pool_share(const struct topo *t, uint32_t parts, bool nics_with_leaf,
			     uint32_t part, uint32_t n)
{
	if (parts <= 1 || t->n_links == 0)
		return n;
	uint32_t *part_sw = calloc(t->n_switches + 1, sizeof(*part_sw));
	uint32_t *part_host = calloc(t->n_hosts + 1, sizeof(*part_host));
	char err[256];
	uint64_t mine = 0, all = 2 * (uint64_t)t->n_links;

	if (part_sw == NULL || part_host == NULL ||
	    topo_partition(t, parts, nics_with_leaf, part_sw, part_host, err, sizeof(err)) < 0) {
		mine = all; /* (dp_parts_create says what is wrong with the cut) */
	} else {
		/* a frame is held where it waits: the queue or wire of the channel
		 * it is sent on, whose transmitter runs in the sending end's
		 * partition (a cut link's wire hands it to the receiver, which
		 * sends it on from its own channels) */
		for (uint32_t l = 0; l < t->n_links; l++)
			for (int d = 0; d < 2; d++)
				mine += topo_part_of(part_sw, part_host, t->links[l].end[d]) == part;
	}
	free(part_sw);
	free(part_host);
	uint64_t share = ((uint64_t)n * mine + all - 1) / all;
	return (uint32_t)(share < POOL_SHARE_MIN ? (n < POOL_SHARE_MIN ? n : POOL_SHARE_MIN) : share);
}

uint64_t dp_parts_peak_rss_kib(void)
{
	struct rusage u;

	return getrusage(RUSAGE_SELF, &u) == 0 ? (uint64_t)u.ru_maxrss : 0; /* (Linux: KiB) */
}
