/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_flowrun: one size of a collective on the flow engine (flow/, rocelab-dp
 * --fabric flow) instead of the emulated NICs. The collective's own plan
 * (ne_coll's connections, transfers, dependencies, window and CTS rules,
 * read through ne_coll_export) is replayed: a transfer becomes one flow per
 * QP that carries a part of it (split / rr as the QP mode posts it), and the
 * parts on QPs with one data path, free together, one flow of that weight; a flow
 * follows the path the QP's first frame takes through the switches'
 * decisions (dp_trace_path: same routes, hash, seeds, pinning, TE); ACKs
 * and rocelab's CTS grants are header-only packets on the reverse paths:
 * timers of the latency a 0-byte flow would take (no bandwidth, never in the
 * engine's events); nccl's grants carry its 64 B FIFO entry, so they stay
 * flows; NVLink transfers take nc_nvlink's time and never
 * enter the fabric. One flow fabric serves the whole run: collectives that
 * run at once share its links by max-min fairness, and each iteration runs
 * on the fabric as it is then. What it leaves out: flow/README.md and
 * docs/reference/rocelab-dp.md (--fabric).
 */
#ifndef DP_FLOWRUN_H
#define DP_FLOWRUN_H

#include <stddef.h>
#include <stdint.h>

struct dp_fabric;
struct ne_coll;
struct ne_coll_config;
struct ne_nic;

/* What one size cost the flow engine, every iteration: the driver's counters
 * are its own; events, recomputes, flows_touched and links_touched are the
 * shared fabric's while it ran (every collective's flows then). */
struct dp_flowrun_stats {
	uint64_t flows;          /* flows started: data parts, nccl's CTS grants (64 B) */
	uint64_t timers;         /* header-only packets timed without a flow: ACKs, rocelab's grants */
	uint64_t data_flows;     /* of those, data flows: a part, or the parts of a QP class as one */
	uint64_t parts;          /* data parts (a transfer's part on one QP) */
	uint64_t events;         /* flow starts and ends (fl_stats.events) */
	uint64_t recomputes;     /* water-filling passes */
	uint64_t flows_touched;  /* flows whose rate a pass recomputed, summed */
	uint64_t links_touched;  /* links a pass visited, summed */
	uint32_t links_crossed;  /* distinct fabric link directions any flow crossed */
	uint64_t nvlink_xfers;   /* transfers timed by the NVLink model */
	uint64_t pxn_copies;     /* PXN's NVLink copies to the GPU of a channel's NIC */
	uint64_t iter_ns;        /* the first iteration's time */
	uint64_t refill_ns;      /* the fabric's refill period (--fabric flow,refill=); 0: exact rates */
	uint64_t local_fills;    /* fills of only the changed links' flows (fl_stats.local_fills) */
};

/*
 * Called once per size handed to dp_flowrun_nics, at the run's time now_ns
 * when it ended: err 0 and text the counters line (dp_flowrun_format), its
 * times already handed to the collective (ne_coll_set_external_times); or a
 * negative errno (the errors below, and -EDEADLK: nothing can progress) and
 * text the reason. It may arm timers; it must not add a collective.
 */
typedef void (*dp_flowrun_done_fn)(void *obj, int err, const char *text, uint64_t now_ns);

/*
 * dp_coll_flow_fn for rocelab-dp --fabric flow: collective run (created by
 * ne_coll_create over nics[rank] on fabric hosts host_of[rank], never
 * started; cfg its config; both kept until done is called) joins the one
 * flow fabric of the run (ns->flow_ctx: made by the first, gone when none
 * runs) from now_ns, sharing its links with every collective on it. Paths
 * are traced at now_ns. Its iterations follow one another on the run's
 * virtual clock (ns's engine), launch= before each. At its end each data
 * flow's payload is added to the counters of the fabric channels it crossed
 * (the link table) and done is called. Returns 0; or, nothing started,
 * -EHOSTUNREACH or -ELOOP (a path the switches do not give, or longer than
 * the flow engine takes), -E2BIG (a connection with more transfers than a
 * flow's cookie holds), -EINVAL (a link rate or delay, or a plan, the flow
 * engine does not take; a path MTU other than the running collectives'),
 * -ENOMEM; why says which.
 */
struct dp_nics;
int dp_flowrun_nics(struct dp_nics *ns, struct ne_coll *run, const struct ne_coll_config *cfg,
		    struct ne_nic *const *nics, const uint32_t *host_of, uint64_t now_ns,
		    dp_flowrun_done_fn done, void *obj, char *why, size_t why_cap);

/* The flow engine's byte check (dp_audit.h) of a run stopped with collectives
 * still on the flow fabric (--duration, a signal): a mismatch is a line on
 * stderr, counted in the fabric's audit_flow_bad. Nothing when no collective
 * is on it (the last one's end was checked). Call before the fabric's audit. */
void dp_flowrun_audit(struct dp_nics *ns);

/* Frees the run's flow fabric (ns->flow_ctx) and the collectives' replays still
 * on it, where the run stopped before they ended (--duration, a signal); nothing
 * when there is none. Call before the collectives and the engine are freed. */
void dp_flowrun_free(struct dp_nics *ns);

/* The stats as one comment line ending in '\n' ("# flow engine: ..."). Returns what snprintf returns. */
int dp_flowrun_format(const struct dp_flowrun_stats *st, char *buf, size_t cap);

#endif /* DP_FLOWRUN_H */
