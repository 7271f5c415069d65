/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_fabric_build: the fabric's state built from its topology, without
 * DPDK: channels (link side: ends, MACs, rate, delay, loss, DWRR quanta,
 * pause and watchdog state), switches (buffer, groups, flowlet table),
 * hosts, routes. dp_fabric_create() builds on it (mbuf pool, rte_lpm, flow
 * table, the channels' reciprocals, events); a unit test can use it alone.
 */
#ifndef DP_FABRIC_BUILD_H
#define DP_FABRIC_BUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "dp_types.h"

/*
 * Build the state of fabric f, zeroed but for f->topo, f->opt (and f->eng,
 * f->mp, which this does not use). IPv4 lookups use the address scheme
 * (f->host_of_ipv4, which the caller may replace). Returns 0, or a negative
 * errno (-ENOMEM, -EINVAL: a bad buffer or watchdog configuration, routes
 * that cannot be computed) with a message in err; then free with
 * dp_fabric_build_free().
 */
int dp_fabric_build(struct dp_fabric *f, char *err, size_t errlen);

/* Free what dp_fabric_build() allocated (not packets in channels: dp_chan_free() those first). */
void dp_fabric_build_free(struct dp_fabric *f);

/*
 * Make each (switch, leaf) group's members what the routes say, moving as
 * few flows as possible; first: the initial set-up (no route change counted).
 */
void dp_fabric_sync_groups(struct dp_fabric *f, bool first);

/* The channel of link l in the direction leaving node `from` (NULL if not an end). */
struct dp_chan *dp_fabric_chan_from(struct dp_fabric *f, uint32_t link, struct topo_node_ref from);

#endif /* DP_FABRIC_BUILD_H */
