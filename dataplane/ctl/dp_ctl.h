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
 *   /rocelab/info                      topology, clock, time (now_ns), the run's start_ns and
 *                                      elapsed_ns (live: real time since the start), events,
 *                                      lag (live: now and max, ns), mbufs in use and in all
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
 *
 * Under mpirun every rank holds the counters of its own nodes only. Rank 0
 * registers the commands, deferred: a read command then waits for the next
 * poll point between windows (at most about 50 ms of wall time), where
 * every rank packs its rows (dp_ctl_view_pack), the rows are summed into
 * rank 0 and dp_ctl_serve() answers from the sum; /rocelab/flows is refused
 * (the flow tables are merged at the end of the run). Once the run is over
 * and rank 0 holds every rank's counters (dp_ctl_gathered), the commands
 * waiting then and every later one, /rocelab/flows included, are answered
 * at once from its fabric: the run's final tables. Link and switch changes
 * are taken on rank 0 (dp_ctl_take) and applied on every rank at the same
 * virtual time (dp_ctl_apply).
 */
#ifndef DP_CTL_H
#define DP_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp_ctl_parse.h"
#include "dp_fabric.h"

struct dp_ctl;
struct dp_nics;

/*
 * Register the commands for fabric f and its emulated NICs (nics may be NULL:
 * /rocelab/nics then answers an empty table). Deferred: read commands wait
 * for dp_ctl_serve() (mpirun's rank 0). DPDK telemetry has no per-command
 * context, so one dp_ctl per process is the limit. Destroy it before f and
 * nics: its commands read them. Returns NULL with a message.
 */
struct dp_ctl *dp_ctl_create(struct dp_fabric *f, const struct dp_nics *nics, bool deferred,
			     char *err, size_t errlen);
/* Commands queued for dp_ctl_poll() (0 for c NULL). */
unsigned dp_ctl_pending(const struct dp_ctl *c);
/* Apply queued commands at now_ns. Returns how many were applied. */
uint32_t dp_ctl_poll(struct dp_ctl *c, uint64_t now_ns);
/* Take up to max queued commands into out, unapplied (they count as applied). Returns how many. */
uint32_t dp_ctl_take(struct dp_ctl *c, struct dp_ctl_set *out, uint32_t max);
/* Apply n commands to f at now_ns (every rank the same, in the same order). */
void dp_ctl_apply(struct dp_fabric *f, const struct dp_ctl_set *cmds, uint32_t n, uint64_t now_ns);

/*
 * The run's time starts at start_ns on the fabric's clock: /rocelab/info's
 * elapsed_ns counts from there (0 until then). c may be NULL (no telemetry).
 */
void dp_ctl_start(struct dp_ctl *c, uint64_t start_ns);

/*
 * Partitions (--workers): the fabric's time and the events of every engine,
 * from the engine's thread between windows; /rocelab/info and the pause
 * states report these from then on (f->eng runs only the global events).
 */
void dp_ctl_note(struct dp_ctl *c, uint64_t now_ns, uint64_t events);

/* Deferred: read commands waiting for dp_ctl_serve(). */
unsigned dp_ctl_waiting(struct dp_ctl *c);
/* Entries of a view of f and the emulated NICs ns (NULL: none): every table's rows. */
size_t dp_ctl_view_len(const struct dp_fabric *f, const struct dp_nics *ns);
/*
 * f's and ns's rows at now into v[dp_ctl_view_len(f, ns)]. A rank's rows of
 * nodes and NICs it does not run are zero but for the up columns, which
 * dp_ctl_serve() takes from its own f: so the ranks' views summed are the
 * whole fabric's.
 */
void dp_ctl_view_pack(const struct dp_fabric *f, const struct dp_nics *ns, uint64_t now,
		      uint64_t *v);
/* Answer every waiting read command from view (summed over the ranks), at now_ns, events in all. */
void dp_ctl_serve(struct dp_ctl *c, const uint64_t *view, uint64_t now_ns, uint64_t events);
/*
 * Deferred (mpirun's rank 0), after the run: c's fabric now holds every
 * rank's counters and flows, and no longer changes. Answers the read
 * commands waiting from it, at now_ns with events in all, and every later
 * one at once (no more deferring). c may be NULL.
 */
void dp_ctl_gathered(struct dp_ctl *c, uint64_t now_ns, uint64_t events);
/* Waiting commands get -ENODEV; then nothing reads f. c may be NULL. */
void dp_ctl_destroy(struct dp_ctl *c);

#endif /* DP_CTL_H */
