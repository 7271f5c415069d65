/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocelab-dp: a whole Clos fabric (switches, links, buffers, PFC, ECMP) in
 * one DPDK process, with real hosts on DPDK ports and in-process packet
 * sources, on a live or a virtual clock.
 *
 * main.c: the program's order: options, MPI ranks, set-up, run, report,
 * teardown (app.h lists the files of app/).
 */
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
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "rl_mem.h"
#include "topo_part.h"
#include "topo_traffic.h"

volatile sig_atomic_t stop_requested;

/* when the first stop signal came (CLOCK_MONOTONIC, read in the handler: async-signal-safe) */
struct timespec stop_signal_ts;

static void on_signal(int sig)
{
	if (!stop_requested)
		clock_gettime(CLOCK_MONOTONIC, &stop_signal_ts);
	stop_requested = sig;
}

/* rc, or 1 if the tables could not be written to stdout (EPIPE, a full disk): never exit 0 on lost output. */
static int report_written(int rc)
{
	errno = 0;
	bool flushed = fflush(stdout) == 0;
	if (flushed && !ferror(stdout))
		return rc;
	/* (an earlier write's errno is gone: say the flush's, or only that one failed) */
	fprintf(stderr, "rocelab-dp: writing the report to stdout failed: %s\n",
		!flushed && errno ? strerror(errno) : "write error");
	return rc ? rc : 1;
}

/*
 * Under mpirun: what a run of several ranks cannot do yet, and the
 * partitions (one per rank). Rank 0 alone writes stdout. Returns 0 or
 * EXIT_BAD_INPUT (every rank says so: they all have the same options).
 */
static int mpi_opts(struct run *r)
{
	struct opts *o = r->o;
	char np[32];

	if (r->mpi.size <= 1)
		return 0;
	snprintf(np, sizeof(np), "-np %d", r->mpi.size);
	if (o->clock != DP_CLOCK_VIRTUAL)
		return bad("under mpirun the virtual clock only (--clock virtual):", np);
	if (o->workers != 1 && o->workers != (uint32_t)r->mpi.size)
		return bad("under mpirun the partitions are the ranks: --workers 1 or as many as", np);
	o->workers = (uint32_t)r->mpi.size;
	if (r->mpi.rank != 0) {
		r->quiet_progress = true;
		if (freopen("/dev/null", "w", stdout) == NULL)
			return 1;
	}
	return 0;
}

/*
 * Under mpirun, whether every rank set up and started (rc of each): the
 * largest of their statuses, so that all of them stop together, each taking
 * down what it set up (its DPDK runtime directory), when one of them could
 * not start; nothing in set-up waits on another rank, so none is left waiting.
 * (One rank: rc.)
 */
static int ranks_started(struct run *r, int rc)
{
	if (r->mpi.size <= 1)
		return rc;
	int *all = calloc((size_t)r->mpi.size, sizeof(*all));
	if (all == NULL || dp_mpi_allgather(&r->mpi, &rc, all, sizeof(rc)) < 0) {
		free(all);
		dp_mpi_abort(&r->mpi, 1); /* (nothing else tells the others) */
		return 1;
	}
	int worst = 0;
	for (int i = 0; i < r->mpi.size; i++)
		worst = all[i] > worst ? all[i] : worst;
	free(all);
	return worst;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct run r;
	char err[512] = "";

	memset(&r, 0, sizeof(r));
	int rc = dp_mpi_start(&r.mpi, &argc, &argv);
	if (rc < 0) {
		fprintf(stderr, "rocelab-dp: %s\n", rc == -ENOTSUP ? "started by mpirun, but built "
			"without MPI (install libopenmpi-dev and rebuild)" : "MPI did not start");
		return rc == -ENOTSUP ? EXIT_BAD_INPUT : 1;
	}
	/* every rank finds the same fault in the options: rank 0 alone says it */
	int saved_err = r.mpi.rank != 0 ? dup(STDERR_FILENO) : -1;
	if (saved_err >= 0 && freopen("/dev/null", "w", stderr) == NULL)
		return 1;
	rc = parse_opts(argc, argv, &o);
	r.o = &o;
	if (rc == 0)
		rc = mpi_opts(&r);
	if (saved_err >= 0) {
		fflush(stderr);
		dup2(saved_err, STDERR_FILENO);
		close(saved_err);
	}
	/* --check: the topology; with traffic, the specs too, as a run would read
	 * them; --coll without a topology: its keys alone (what a host needs aside) */
	bool specs = o.gen.n || o.rdma.n || o.coll.n || o.traffic || o.workload || o.jobs;
	bool keys_only = o.check && o.coll.n && !o.topology && !o.clos[0] && !o.gen.n && !o.rdma.n &&
			 !o.traffic && !o.list_hosts;
	if (rc == 0 && keys_only)
		rc = check_coll_keys(&o);
	else if (rc == 0 && o.check)
		rc = o.topology ? topo_check_file(o.topology, stdout, stderr)
		     : o.pipeline && !o.clos[0] ? 0 : bad("--check needs --topology FILE", NULL);
	if (rc == 0 && o.check && !keys_only && o.coll.n) /* (with a topology: the specs' keys too) */
		rc = coll_specs_check(&o);
	if (rc == 0 && o.check && !keys_only) /* the switches' programs, built (DPDK's checks too) */
		rc = check_programs(&o);
	if (rc == 0 && (!o.check || (specs && o.topology)) && (rc = load_topology(&r)) == 0) {
		if (o.list_hosts)
			list_hosts(r.topo);
		else if ((rc = parse_gens(&r)) == 0)
			rc = plan_process(&r);
	}
	if (rc == 0 && !o.check && !o.list_hosts && o.json && r.mpi.rank == 0)
		rc = json_open(&r); /* (rank 0 alone reports) */
	if (rc || o.check || o.list_hosts) {
		free_early(&r);
		dp_mpi_finish(&r.mpi);
		return rc;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* a reader that went away (a pipe closed by a killed parent) must not kill
	 * the process before teardown removes its DPDK runtime directory: the
	 * write fails instead, and the exit status says so (report_written) */
	signal(SIGPIPE, SIG_IGN);
	rc = setup(&r, err, sizeof(err));
	if (rc == 0)
		rc = start_traffic(&r, err, sizeof(err));
	int any_rc = ranks_started(&r, rc);
	if (any_rc == 0) {
		run(&r);
		rc = r.mpi.rank == 0 ? report(&r) : r.run_rc;
		rc = report_written(rc);
	} else if (rc == EXIT_BAD_INPUT) { /* (every rank finds it: rank 0 says it) */
		if (r.mpi.rank == 0)
			fprintf(stderr, "rocelab-dp: %s\n", err);
	} else if (rc) {
		fprintf(stderr, "rocelab-dp: %s\n", err);
	} else {
		rc = any_rc; /* (another rank said why) */
	}
	if (teardown(&r) < 0 && rc == 0)
		rc = 1; /* (a capture file cut short is a failed run) */
	dp_mpi_finish(&r.mpi);
	return rc;
}
