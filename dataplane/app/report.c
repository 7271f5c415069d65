/* SPDX-License-Identifier: BSD-3-Clause */
/* report.c: the end-of-run report and the teardown. */
#define _GNU_SOURCE /* sched_getaffinity */
#include "app.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "dp_audit.h"
#include "dp_flowrun.h"
#include "rl_mem.h"
#include "topo_part.h"
#include "topo_traffic.h"

/* Times the packet pool had no frame to give: senders that waited, frames dropped as no_mbuf. */
static uint64_t pool_ran_dry(const struct run *r)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < r->o->gen.n; i++)
		n += r->gens[i].no_mbuf;
	for (uint32_t s = 0; s < r->topo->n_switches; s++)
		n += r->fab->sw[s].drops[DP_DROP_NO_MBUF];
	for (uint32_t c = 0; c < r->fab->n_chans; c++)
		n += r->fab->chans[c].drops[DP_DROP_NO_MBUF];
	for (uint32_t i = 0; i < r->nics.n; i++)
		n += r->nics.h[i].no_mbuf;
	return n;
}

/* --process: a link cut between processes has its ends' counts in two processes (the audit leaves it out). */
static bool audit_skip(void *ctx, const struct dp_chan *c)
{
	const struct run *r = ctx;

	return dp_peers_on(&r->o->peers) && dp_parts_of_node(r->parts, c->from) != dp_parts_of_node(r->parts, c->to);
}

int audit_setup(struct run *r, char *err, size_t errlen)
{
	const char *mode = getenv("ROCELAB_AUDIT"), *steal = getenv("ROCELAB_AUDIT_STEAL");
	const char *leak = getenv("ROCELAB_AUDIT_LEAK");

	if (dp_audit_mode_parse(mode) < 0) {
		snprintf(err, errlen, "ROCELAB_AUDIT=%s: not warn, fatal or off", mode);
		return EXIT_BAD_INPUT;
	}
	if (steal && *steal && dp_audit_steal(r->fab, steal, err, errlen) < 0)
		return EXIT_BAD_INPUT;
	if (leak && *leak && dp_audit_leak(r->fab, leak, err, errlen) < 0)
		return EXIT_BAD_INPUT;
	return 0;
}

/* ROCELAB_AUDIT's mode (dp_audit_mode_parse; audit_setup refused a bad one). */
static int audit_mode(void)
{
	return dp_audit_mode_parse(getenv("ROCELAB_AUDIT"));
}

/* ROCELAB_AUDIT_LOG, the tests' record of every mismatch, open to append; NULL when unset. */
static FILE *audit_log(void)
{
	const char *log = getenv("ROCELAB_AUDIT_LOG");

	return log && *log ? fopen(log, "a") : NULL;
}

/* Frame conservation (dp_audit.h): each place that does not balance, loudly. Returns rc, or 1 in fatal mode. */
static int audit(struct run *r, int rc)
{
	int mode = audit_mode();
	/* (under MPI a run that failed before the gather has only this rank's counters) */
	bool whole = r->mpi.size <= 1 || r->gathered;

	dp_flowrun_audit(&r->nics); /* (the flow fabric's bytes, if a run stopped with collectives on it) */
	unsigned bad = mode == DP_AUDIT_OFF || !whole ? 0 : dp_audit_fabric(r->fab, audit_skip, r, stderr);

	if (bad == 0)
		return rc;
	FILE *lf = audit_log();
	if (lf) {
		dp_audit_fabric(r->fab, audit_skip, r, lf);
		fclose(lf);
	}
	fprintf(stderr, "rocelab-dp: AUDIT: WARNING: %u place(s) in the fabric lost or made frames without a count: "
		"the tables above do not add up (a bug of rocelab-dp: please report it with the command)\n", bad);
	return mode == DP_AUDIT_FATAL ? 1 : rc;
}

/* How the run ended: its time, events, forwards, a stop signal, the lag. */
static void report_run(const struct run *r, uint64_t elapsed)
{
	uint64_t fwd = 0;

	for (uint32_t s = 0; s < r->topo->n_switches; s++)
		fwd += r->fab->sw[s].fwd_pkts;
	if (r->o->clock == DP_CLOCK_VIRTUAL)
		fprintf(stderr, "\n");
	printf("\nrocelab-dp: ran %.6f s (%s) in %.3f s of wall time, %" PRIu64 " events, %" PRIu64
	       " switch forwards (%.3f M per wall second)\n\n",
	       (double)elapsed / 1e9, r->o->clock == DP_CLOCK_LIVE ? "live" : "virtual", r->wall_s,
	       r->eng.fired, fwd, r->wall_s > 0 ? (double)fwd / r->wall_s / 1e6 : 0.0);
	if (stop_requested)
		printf("rocelab-dp: stopped by %s, %.3f ms after the signal\n",
		       stop_requested == SIGINT ? "SIGINT" : "SIGTERM", r->after_signal_s * 1e3);
	if (r->o->clock == DP_CLOCK_LIVE)
		printf("rocelab-dp: lag behind real time: max %.3f ms, at the end %.3f ms (%s)\n\n",
		       (double)r->eng.lag_max_ns / NS_PER_MS, (double)r->eng.lag_ns / NS_PER_MS,
		       r->eng.lag_max_ns >= LAG_REPORT_NS
			       ? "it fell behind: link tables cover the fabric's time up to the lag at the "
				 "end, generators' rates are against real time"
			       : "kept up");
}

/* The tables at exit. Returns the exit status: 1 when RDMA failed or the lag policy stopped the run. */
int report(struct run *r)
{
	uint64_t elapsed = dp_engine_now(&r->eng) - r->start_ns;
	/* live and behind: the fabric has done its work up to `lag` ago; utilisation
	 * and pause shares are of the links over that time, not over work not done */
	uint64_t fabric_ns = elapsed > r->eng.lag_ns ? elapsed - r->eng.lag_ns : 0;

	uint64_t dry = pool_ran_dry(r); /* (said even with --quiet: the figures are not the model's) */
	if (dry)
		fprintf(stderr, "rocelab-dp: the packet pool ran dry %" PRIu64 " times: senders waited and "
			"switches dropped for want of a frame, an emulator limit (give --mbufs%s more)%s\n",
			dry, r->o->clock == DP_CLOCK_LIVE ? " and --mem" : "",
			dp_parts_count(r->parts) > 1 ? "; with --workers above 1 what followed also "
			"depended on the threads' timing: not reproducible" : "");
	if (!r->o->quiet) {
		report_run(r, elapsed);
		dp_stats_print(r->fab, fabric_ns, stdout);
		dp_flows_print(&r->fab->flows, r->topo, REPORT_TOP_FLOWS, stdout);
		dp_port_print(&r->ports, r->topo, stdout);
		dp_peers_print(&r->o->peers, stdout);
		for (unsigned i = 0; i < r->o->gen.n; i++)
			dp_gen_print(&r->gens[i], r->o->gen.spec[i], r->start_ns + elapsed, i == 0, stdout);
		if (r->nics.n) {
			printf("\n");
			dp_nics_report(&r->nics, stdout);
		}
	}
	if (r->o->coll.n)
		dp_nics_print_totals(&r->nics, stdout);
	dp_job_report(r->job, stdout);
	dp_mix_report(r->mix, stdout);
	if (r->mix && r->o->jobs_alone < 0)
		jobs_links_print(r, fabric_ns, stdout);
	int rc = r->run_rc;
	if (dp_mix_failed(r->mix)) {
		fprintf(stderr, "rocelab-dp: --jobs: a job did not finish\n");
		rc = 1;
	}
	if (dp_job_failed(r->job)) {
		fprintf(stderr, "rocelab-dp: --workload: the job did not finish\n");
		rc = 1;
	}
	if (dp_nics_failures(&r->nics)) {
		fprintf(stderr, "rocelab-dp: %u RDMA transfer(s) failed or did not finish\n",
			dp_nics_failures(&r->nics));
		rc = 1;
	} else if (r->eng.timer_fail) { /* events were lost (the tables say so): not a sound run */
		fprintf(stderr, "rocelab-dp: %" PRIu64 " timers could not be added (out of memory): "
			"events were lost, the figures may be wrong\n", r->eng.timer_fail);
		rc = 1;
	}
	rc = audit(r, rc);
	if (r->json && json_write(r, elapsed, fabric_ns, rc) < 0)
		rc = 1;
	return rc;
}

/* Free what is held before DPDK starts: the topology, traffic specs, generators. */
void free_early(struct run *r)
{
	free(r->gens);
	topo_traffic_free(r->traffic);
	topo_free(r->topo);
	spec_list_free(&r->o->gen);
	spec_list_free(&r->o->rdma);
	spec_list_free(&r->o->coll);
	dp_job_free(r->job); /* (its collectives are the NICs': dp_nics_destroy frees them) */
	r->job = NULL;
	dp_mix_free(r->mix);
	r->mix = NULL;
	free(r->jobs_top);
	r->jobs_top = NULL;
	dp_peers_close(&r->o->peers);
	r->gens = NULL;
	r->traffic = NULL;
	r->topo = NULL;
}

/*
 * Every port's driver gives its mbufs back to the pool when the port closes,
 * or a line on stderr names the first that may not. The drivers the tests
 * run saw give them back: net_null, net_memif, net_pcap, net_af_packet.
 * net_af_xdp does not: its fill ring's mbufs stay taken after
 * rte_eth_dev_close (test_fabric_live.sh, 16,386 in use with none held).
 */
static bool ports_give_back(void)
{
	static const char *const back[] = {"net_null", "net_memif", "net_pcap", "net_af_packet"};
	int mode = audit_mode();
	uint16_t pid;

	if (mode < 0 || mode == DP_AUDIT_OFF)
		return false; /* (no audit: nothing to say) */
	RTE_ETH_FOREACH_DEV(pid) {
		struct rte_eth_dev_info info;
		const char *drv = rte_eth_dev_info_get(pid, &info) == 0 ? info.driver_name : NULL;
		bool known = false;
		for (size_t i = 0; drv && i < RTE_DIM(back) && !known; i++)
			known = strcmp(drv, back[i]) == 0;
		if (!known) {
			fprintf(stderr, "rocelab-dp: the packet pool is not audited: port %u's driver %s may keep "
				"mbufs after it closes\n", pid, drv ? drv : "(unknown)");
			return false;
		}
	}
	return true;
}

/*
 * The packet pool's audit (dp_audit_pool), in the teardown once nothing but
 * the fabric holds mbufs; every process checks its own pool. Returns 0, or
 * -EPROTO on a mismatch in fatal mode.
 */
static int audit_pool(const struct run *r, bool ports_give_back)
{
	int mode = audit_mode();
	char who[32] = "";

	if (mode < 0 || mode == DP_AUDIT_OFF || r->fab == NULL || r->mp == NULL || !ports_give_back)
		return 0;
	if (r->mpi.size > 1)
		snprintf(who, sizeof(who), " (rank %d)", r->mpi.rank);
	if (dp_audit_pool(r->fab, who, stderr) == 0)
		return 0;
	FILE *lf = audit_log();
	if (lf) {
		dp_audit_pool(r->fab, who, lf);
		fclose(lf);
	}
	fprintf(stderr, "rocelab-dp: AUDIT: WARNING: the packet pool%s lost or kept mbufs without a count "
		"(a bug of rocelab-dp: please report it with the command)\n", who);
	return mode == DP_AUDIT_FATAL ? -EPROTO : 0;
}

/* Free everything, in the reverse order of set-up; removes the DPDK runtime directory. */
int teardown(struct run *r)
{
	int rc = 0;

	if (r->fab)
		r->fab->te = NULL;
	dp_te_free(&r->te);
	dp_ctl_destroy(r->ctl); /* first: its telemetry commands read the NICs */
	dp_nics_destroy(&r->nics);
	for (unsigned i = 0; i < MAX_CAPTURES; i++) {
		if (dp_capture_close(r->cap[i]) < 0) { /* (a full disk: the file is cut short) */
			fprintf(stderr, "rocelab-dp: --capture %s: write failed\n", r->o->capture[i]);
			rc = -EIO;
		}
		r->cap[i] = NULL;
	}
	dp_csv_close(&r->csv);
	if (r->json) /* (a run that did not reach the report: the file stays empty) */
		fclose(r->json);
	r->json = NULL;
	bool give_back = ports_give_back(); /* (asked while the ports are open) */
	dp_port_close(&r->ports);
	dp_peers_close(&r->o->peers); /* (before the pool: its ports hold mbufs) */
	for (unsigned i = 0; r->gens && r->fab && i < r->o->gen.n; i++)
		dp_gen_stop(&r->gens[i]);
	if (audit_pool(r, give_back) < 0) /* (the ports, peers, generators and NICs gave their mbufs back) */
		rc = -EPROTO;
	dp_fabric_destroy_at_exit(r->fab); /* (then dp_eal_stop: rte_eal_cleanup) */
	dp_parts_destroy(r->parts);
	dp_engine_free(&r->eng);
	rte_mempool_free(r->mp);
	free_early(r);
	dp_eal_stop(&r->eal); /* also removes the runtime directory */
	return rc;
}
