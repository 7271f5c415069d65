/* SPDX-License-Identifier: BSD-3-Clause */
/* What one MPI rank holds of the fabric's memory (dp_part.h): its share of the packet pool, its peak. */
#include "dp_part.h"

#include <stdlib.h>
#include <sys/resource.h>

#include "topo_part.h"

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
	return share == 0 ? 1 : (uint32_t)share;
}

uint64_t dp_parts_peak_rss_kib(void)
{
	struct rusage u;

	return getrusage(RUSAGE_SELF, &u) == 0 ? (uint64_t)u.ru_maxrss : 0; /* (Linux: KiB) */
}
