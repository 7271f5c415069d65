/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topo_part: how a fabric is cut into partitions (rocelab-dp --workers N runs
 * one per thread, dataplane/parallel/dp_part.h). DPDK-free: rocelab-topo --partitions
 * shows the cut before a run.
 *
 * The topology file's cut when its switches say `partition: K` (every switch,
 * K < n, no partition empty). Otherwise: with emulated NICs that must run
 * together (a collective whose progress cannot be split: dataplane/hosts/dp_coll.h), partition
 * 0 holds all of them and the switches go to the others; else the leaves are
 * split into balanced contiguous groups (a rack stays whole) and spines and
 * aggregation switches are dealt round robin. A host runs with its leaf; an
 * emulated one in partition 0, unless nics_with_leaf.
 */
#ifndef TOPO_PART_H
#define TOPO_PART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topo.h"

/*
 * Cut t into n partitions: part_sw[switch] and part_host[host] get each
 * node's partition; nics_with_leaf puts emulated hosts with their leaf too. Returns 0, or -EINVAL with a message in err (n is 0 or
 * above the number of switches; the file's cut is incomplete, beyond n or
 * leaves a partition empty).
 */
int topo_partition(const struct topo *t, uint32_t n, bool nics_with_leaf, uint32_t *part_sw,
		   uint32_t *part_host, char *err, size_t errlen);

/*
 * The smallest delay of a link between two partitions of the cut (part_sw,
 * part_host from topo_partition): the virtual clock's lookahead, its
 * windows' length. UINT64_MAX when no link crosses.
 */
uint64_t topo_partition_lookahead(const struct topo *t, const uint32_t *part_sw,
				  const uint32_t *part_host);

/* The partition of a link's end. */
static inline uint32_t topo_part_of(const uint32_t *part_sw, const uint32_t *part_host,
				    struct topo_node_ref r)
{
	return r.kind == TOPO_NODE_SWITCH ? part_sw[r.index] : part_host[r.index];
}

#endif /* TOPO_PART_H */
