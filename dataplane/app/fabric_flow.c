/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_flow.c: rocelab-dp --fabric flow. What the flow engine cannot run
 * is refused before anything starts (exit 2, saying why); the rest runs each
 * collective size on it (hosts/dp_flowrun.h) instead of the NICs.
 */
#include "app.h"

#include <stdio.h>
#include <string.h>

#include "dp_flowrun.h"
#include "ne_coll.h"

/* What the flow engine does not model, as the option that needs it. NULL: none. */
static const char *needs_packets(const struct opts *o)
{
	if (o->clock != DP_CLOCK_VIRTUAL)
		return "--clock live (real frames)";
	if (o->gen.n || o->rdma.n)
		return "--gen / --rdma traffic (packets beside the collectives)";
	if (o->n_capture)
		return "--capture (no frame is sent)";
	if (o->watchdog)
		return "--pfc-watchdog (no PFC pause is modelled)";
	if (o->workers > 1 || dp_peers_on(&o->peers))
		return "--workers / --process (the flow engine runs in one partition)";
	if (o->coll_series)
		return "--coll-series (no QP is active on a NIC)";
	if (!o->coll.n && !o->workload && !o->jobs)
		return "no --coll, --workload or --jobs (the flow engine runs collectives only)";
	return NULL;
}

/* A collective the flow engine refuses: why, or NULL. */
static const char *coll_refused(const char *spec, char *why, size_t cap)
{
	struct ne_coll_spec s;
	const char *no = NULL;

	ne_coll_spec_default(&s);
	if (ne_coll_spec_parse(&s, spec, why, cap) == 0) {
		if (s.cfg.op == NE_COLL_INCAST)
			no = "op=incast: an incast is decided by PFC pauses, switch buffers and drops (E4), "
			     "which flows do not model";
		else if (s.cfg.qp_mode == NE_COLL_QP_CTRAN)
			no = "mode=ctran: CTRAN picks a QP per WQE by its outstanding messages";
		else if (s.cfg.proxy_post_ns || s.cfg.proxy_poll_ns)
			no = "proxy costs: the flow engine has no proxy thread";
		else if (s.cfg.data)
			no = "data=on (the default): flows move no bytes, so none could be checked; "
			     "add data=off";
	}
	ne_coll_spec_free(&s);
	return no;
}

int fabric_flow_start(struct run *r, char *err, size_t errlen)
{
	const struct opts *o = r->o;
	const char *no = needs_packets(o);
	char why[256];

	if (!no && r->mpi.size > 1)
		no = "mpirun (the flow engine runs in one process)";
	if (no) {
		snprintf(err, errlen, "--fabric flow: not with %s", no);
		return EXIT_BAD_INPUT;
	}
	for (uint32_t i = 0; i < r->topo->n_switches; i++)
		if (r->topo->switches[i].lb == TOPO_LB_FLOWLET) {
			snprintf(err, errlen,
				 "--fabric flow: switch %s balances by flowlets, which choose a path per "
				 "burst of packets; a flow keeps one path",
				 r->topo->switches[i].name);
			return EXIT_BAD_INPUT;
		}
	for (unsigned i = 0; i < o->coll.n; i++)
		if ((no = coll_refused(o->coll.spec[i], why, sizeof(why))) != NULL) {
			snprintf(err, errlen, "--fabric flow: --coll %s: %s", o->coll.spec[i], no);
			return EXIT_BAD_INPUT;
		}
	/* (the jobs' collectives run data=off whatever the spec says: dp_job.c) */
	if (o->job_coll && (no = coll_refused(o->job_coll, why, sizeof(why))) != NULL &&
	    strncmp(no, "data=on", 7) != 0) {
		snprintf(err, errlen, "--fabric flow: --job-coll %s: %s", o->job_coll, no);
		return EXIT_BAD_INPUT;
	}
	r->nics.flow_run = dp_flowrun_nics;
	r->nics.flow_refill_ns = o->flow_refill_ns;
	return 0;
}
