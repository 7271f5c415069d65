/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_ctl: the running fabric seen and steered through DPDK telemetry.
 *
 * Read-only commands answer from the telemetry thread (counters are plain
 * 64-bit words, read racily but never torn on x86-64). Commands that change
 * the fabric (link or switch down/up) are queued on an rte_ring and applied by
 * the engine thread in dp_ctl_poll(), so the fabric has one writer.
 *
 * Tables come as {"columns": [names], ROW: [numbers], ...} (DPDK 22.11
 * telemetry nests only arrays); [,PREFIX] keeps the rows whose name starts
 * with PREFIX, for fabrics with more rows than a reply holds (256). Keys
 * keep only letters, digits and '_' (a DPDK 22.11 rule): other characters
 * of node names become '_'.
 *
 *   /rocelab/info                      topology, clock, time, events, lag (live: now and max, ns),
 *                                      mbufs in use and in all
 *   /rocelab/links[,PREFIX]            per link direction FROM_to_TO: up, packets, bytes, busy, queue, pfc, drops
 *   /rocelab/queues,LINK               per priority of both directions of LINK
 *   /rocelab/switches[,PREFIX]         per switch: rx, forwarded, drops, arp, pfc, ecn, buffer
 *   /rocelab/drops[,PREFIX]            per switch by reason (and the MMU's), and "links" summed
 *   /rocelab/pfc[,PREFIX]              per link direction: PFC sent, XOFF/XON received, time paused
 *   /rocelab/flows                     the 200 largest flows and the path each took (switch:port)
 *   /rocelab/nics[,PREFIX]             per emulated host: its NIC's counters (ne_counter_names' columns)
 *   /rocelab/ports,SWITCH              packets forwarded out of each port (where flows went)
 *   /rocelab/link_set,LINK,up|down     take a link down or up
 *   /rocelab/switch_set,SWITCH,up|down take a switch down or up
 */
#ifndef DP_CTL_H
#define DP_CTL_H

#include <stddef.h>
#include <stdint.h>

#include "dp_fabric.h"

struct dp_ctl;
struct dp_nics;

/*
 * Register the commands for fabric f and its emulated NICs (nics may be NULL:
 * /rocelab/nics then answers an empty table). DPDK telemetry has no
 * per-command context, so one dp_ctl per process is the limit. Destroy it
 * before f and nics: its commands read them. Returns NULL with a message.
 */
struct dp_ctl *dp_ctl_create(struct dp_fabric *f, const struct dp_nics *nics, char *err,
			     size_t errlen);
/* Commands queued for dp_ctl_poll() (0 for c NULL). */
unsigned dp_ctl_pending(const struct dp_ctl *c);
/* Apply queued commands at now_ns. Returns how many were applied. */
uint32_t dp_ctl_poll(struct dp_ctl *c, uint64_t now_ns);
void dp_ctl_destroy(struct dp_ctl *c);

#endif /* DP_CTL_H */
