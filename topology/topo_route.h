/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topo_route: shortest-path routes over a topology, as ECMP groups.
 *
 * For every switch and every destination host: the egress ports on shortest
 * paths (hop count over live links and live switches; BFS from each leaf).
 * A destination's leaf has a single port, the one facing the host. Any other
 * switch's group depends only on the destination's leaf, so groups are kept
 * per (switch, leaf): the data plane can key one resilient-hash table on
 * that pair and keep it across failures (only its member set changes).
 * Ports in a group are in ascending order.
 *
 * Paths are plain shortest paths, not valley-free: after leaf0-spine0 fails,
 * spine0 reaches leaf0 through another leaf and spine (only packets already
 * at spine0 take that way; every leaf stops choosing spine0 for leaf0).
 * A host whose link or leaf is down is unreachable from every switch.
 *
 * Plain arrays; nothing is allocated after topo_route_create(), so a recompute
 * can run from the data plane's control path. Not thread-safe. Memory is
 * O(switches x leaves x switch-facing ports per switch) and a recompute is one
 * BFS per leaf. Measured with the topology included: 64 spines x 512 leaves x
 * 64 hosts, 160 MB and 0.3 s per recompute; 16 x 4096 x 16 (the leaf limit),
 * 1 GB and 6 s.
 */
#ifndef TOPO_ROUTE_H
#define TOPO_ROUTE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "topo.h"

#define TOPO_ROUTE_UNREACHABLE UINT32_MAX

struct topo_routes {
	const struct topo *topo; /* must outlive the routes */
	uint32_t n_switches, n_leaves, n_links;
	bool *link_up;      /* [n_links] */
	bool *switch_up;    /* [n_switches] */
	/* per (switch sw, leaf index L), at [sw * n_leaves + L]: */
	uint32_t *dist;     /* links from sw to that leaf switch, or TOPO_ROUTE_UNREACHABLE */
	uint32_t *grp_off;  /* the group's first port in ports[] */
	uint16_t *grp_n;    /* its size (0 at the leaf itself and when unreachable) */
	uint8_t *changed;   /* 1 when the last recompute changed the group */
	uint16_t *ports;    /* pool; each group has room for its switch's switch-facing ports */
	/* hosts by (leaf, index under leaf): leaf_host[leaf_first[L] + i] */
	uint32_t *leaf_first;
	uint32_t *leaf_host;
	/* scratch for the BFS */
	uint32_t *queue;
	uint32_t *bfs_dist;
};

/*
 * Routes for t with everything up, computed. Returns NULL when t is NULL or
 * memory runs out. t must stay alive and unchanged while the routes exist.
 */
struct topo_routes *topo_route_create(const struct topo *t);

/* Free; NULL is fine. */
void topo_route_free(struct topo_routes *r);

/* Recompute every group from the current up/down state. Returns the number of groups that changed. */
int topo_route_compute(struct topo_routes *r);

/*
 * Take a link / a switch down (up = false) or bring it back, then recompute.
 * Returns the number of (switch, leaf) groups that changed (their `changed`
 * flag is set), 0 when the state was already so, or -1 for a bad index.
 */
int topo_route_set_link(struct topo_routes *r, uint32_t link, bool up);
int topo_route_set_switch(struct topo_routes *r, uint32_t sw, bool up);

/* Apply a scheduled event of the topology; as topo_route_set_link/switch. */
int topo_route_apply_event(struct topo_routes *r, const struct topo_event *ev);

/*
 * Egress ports of switch sw toward host: *n ports (0: no route: the host is
 * unreachable, or sw is down). Returns a pointer to the ports (valid until
 * the next recompute), or NULL with *n = 0 for a bad index.
 */
const uint16_t *topo_route_ports(const struct topo_routes *r, uint32_t sw, uint32_t host, unsigned *n);

/*
 * The group of switch sw toward leaf index `leaf` (the switch
 * topo->leaves[leaf]): what topo_route_ports() returns for the hosts of that
 * leaf from any other switch. Empty at the leaf itself. NULL with *n = 0 for
 * a bad index.
 */
const uint16_t *topo_route_group(const struct topo_routes *r, uint32_t sw, uint32_t leaf, unsigned *n);

/* Links from switch sw to host (1 at its leaf), or TOPO_ROUTE_UNREACHABLE. */
uint32_t topo_route_dist(const struct topo_routes *r, uint32_t sw, uint32_t host);

/* Host with this IPv4 address (host byte order) under the address scheme, or -1. */
int topo_route_host_by_ipv4(const struct topo_routes *r, uint32_t ipv4);
/* Host with this IPv6 address, or -1. */
int topo_route_host_by_ipv6(const struct topo_routes *r, const uint8_t ipv6[16]);

/* A readable table of every switch's groups (what `rocelab-topo --routes` prints). */
void topo_route_print(const struct topo_routes *r, FILE *out);

#endif /* TOPO_ROUTE_H */
