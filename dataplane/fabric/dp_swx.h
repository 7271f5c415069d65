/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_swx: a switch whose IPv4 forwarding decision is a DPDK SWX .spec
 * program (swx/, issue 43): rocelab-dp --pipeline FILE.spec, or a switch's
 * pipeline: key in the topology (per switch, per role, or for all).
 *
 * The switch hands the program each IPv4 frame (struct dp_prog in
 * dp_types.h); the program's egress port, or its drop, replaces the C
 * stages TTL, route lookup and next hop (dp_pipeline.c). rocelab's link
 * state, PFC watchdog, MMU, rewrite (TTL, ECN, MACs) and queues act on that
 * port as on the C stages' one. Of the frame the program emits, rocelab
 * takes the IPv4 DSCP when the program writes it (8-bit diffserv or 6-bit
 * dscp): the frame leaves with it and its egress queue is the DSCP's
 * priority, as for a sender's DSCP; the ECN bits stay the MMU's. A program
 * that writes any other field of a header it emits is refused
 * (dp_swx_check, FILE:LINE), unless the field is one rocelab rewrites
 * itself (ttl, hdr_checksum, 48-bit dst_addr and src_addr). Frames that are not IPv4
 * (PFC, ARP, IPv6) stay on the C stages.
 *
 * A program that declares header rl_meta gets rocelab's metadata in front of
 * each frame (swx/swx_meta.h: the virtual time, the ingress port, the
 * switch's hash settings, the destination's group size, the flowlet timeout,
 * a seeded random number); p4/flowlet.spec and p4/letflow.spec read it.
 *
 * rocelab fills the program's tables from the topology's routes, by name,
 * in one rte_swx_ctl transaction per switch (the contract of p4/ecmp.spec):
 *
 *   hash_cfg  (if present) default action set_hash algo A seed S eecmp E:
 *             the switch's hash algorithm (enum rl_hash_algo), its seed, and
 *             1 for the E-ECMP profile (5-tuple + BTH destination QP);
 *   route     (required) match DST/32 per host, DST the host's IPv4 address:
 *             a host of this leaf: action fwd port_out P nexthop_mac MAC;
 *             another leaf's host: action route_ecmp group L n_members N
 *             (L: the destination leaf's index, N: the switch's uplinks
 *             towards it that are up), or, if the program has no
 *             route_ecmp, action fwd on the first of them;
 *   member    (with route_ecmp) match L K action fwd port_out P
 *             nexthop_mac MAC: the K-th of those uplinks, in port order.
 *
 * "fwd" may be called "route_fwd" (p4/default.spec). The program's input
 * and output ports are the switch's ports ("rx m.port_in": the port a
 * frame arrived on). When a link goes down or up (the fabric's
 * route_changes moves), the switch fills route and member again before its
 * next frame. A destination with no uplink up keeps its last entry: its
 * frames drop as link_down where the C stages say no_route.
 */
#ifndef DP_SWX_H
#define DP_SWX_H

#include <stddef.h>
#include <stdio.h>

#include "dp_types.h"

/*
 * Reads and checks (libc only: before DPDK starts) the program each switch
 * of t runs: path for every switch (--pipeline), else the switch's pipeline
 * key (topology), else none. Returns 0, or -EINVAL with "FILE:LINE: what" in err (the program is refused, lacks
 * the table route, has an rl_meta of another layout, or writes a field rocelab ignores), -EIO when it cannot
 * be read.
 */
int dp_swx_check(const struct topo *t, const char *path, char *err, size_t errlen);

/*
 * dp_swx_check, then builds each program (DPDK's checks: swx_load) with the
 * ports of the switches that run it, and frees it; t NULL: path alone, with
 * SWX_PORTS_OUT_MAX ports. Starts EAL (swx_eal_init) and stops it before it
 * returns: for rocelab-dp --check, not beside a running fabric. Prints
 * "FILE: OK" to out for each program that builds. Returns 0, -EINVAL with
 * "FILE:LINE: what" in err, -EIO (unreadable, or EAL did not start), or
 * -ENOMEM.
 */
int dp_swx_check_build(const struct topo *t, const char *path, FILE *out, char *err, size_t errlen);

/*
 * Builds the program of every switch of f that runs one (as dp_swx_check
 * chooses it; on f's EAL), fills its tables as above and hooks it into the
 * switch (s->prog). Returns 0; -EINVAL with "FILE:LINE: what" or the entry DPDK refused in err
 * (bad input); -ENOMEM.
 */
int dp_swx_attach(struct dp_fabric *f, const char *path, char *err, size_t errlen);

/* Unhooks and frees every switch's program (those of dp_swx_attach; none is fine). */
void dp_swx_detach(struct dp_fabric *f);

#endif /* DP_SWX_H */
