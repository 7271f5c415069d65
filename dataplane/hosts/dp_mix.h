/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_mix: many training jobs at once, rocelab-dp --jobs FILE (issue 41,
 * item 4). A job file (workload/wl_jobs.h) lists jobs: each a workload as
 * --workload names it, its GPUs and its arrival time. The scheduler
 * (wl_sched.h) places them on the topology's servers by each job's policy,
 * else the file's, else topology-aware; each job then runs as a --workload
 * job (dp_job.h) on the hosts of its servers in ring order, all on one
 * fabric at once, each from the run's start plus its arrival time.
 *
 * Each job's time alone on its placement comes from a run of its own (the
 * caller's: rocelab-dp runs itself again per job, --jobs-alone K, which
 * loads the mix with only job K, started at once); dp_mix_set_alone hands
 * it in for the report's slowdown.
 */
#ifndef DP_MIX_H
#define DP_MIX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct dp_nics;
struct topo;
struct dp_mix;

/*
 * Read the job file, place its jobs on t and load each one's workload
 * (coll: --job-coll's spec or NULL; svg: where to draw the placement
 * (wl_sched_svg), or NULL; only: -1 for every job, or K for job K alone,
 * in the schedule's order, started at once whatever its arrival). Refused
 * with "FILE:LINE: why" (the job file's, or the job's line before a
 * workload's own message): a bad file, a job the free servers cannot hold
 * (a mix that does not fit), a workload that --workload refuses (more ranks
 * than the job's GPUs among them). Returns the mix, or NULL with err
 * (beginning "out of memory" when it was).
 */
struct dp_mix *dp_mix_load(const char *file, const struct topo *t, const char *coll,
			   const char *svg, int only, char *err, size_t errlen);

/* Jobs placed (0 for NULL). */
uint32_t dp_mix_jobs(const struct dp_mix *m);
/* Job k's name and its --workload job (NULL: not loaded, --jobs-alone of another). */
const char *dp_mix_name(const struct dp_mix *m, uint32_t k);
const struct dp_job *dp_mix_job(const struct dp_mix *m, uint32_t k);

/* Job k's iteration 1 alone (ns): its time and its exposed communication, for the report. */
void dp_mix_set_alone(struct dp_mix *m, uint32_t k, uint64_t ns, uint64_t exposed_ns);

/* Job k of the mix, as its "# jobs: NAME: ..." line says it. */
struct dp_mix_row {
	const char *name, *policy; /* the policy that placed it (wl_policy_name) */
	const char *hosts;         /* its hosts in ring order, "h0+h1+..." */
	uint32_t gpus, servers;
	uint64_t arrival_ns;
	uint64_t alone_ns, alone_exposed_ns; /* iteration 1 alone; alone_ns 0: not known */
	uint64_t mix_ns, mix_exposed_ns;     /* iteration 1 in the mix; mix_ns 0: it did not end */
	double slowdown_pct;       /* 100 (mix - alone) / alone; NAN when either is missing */
};
/* Row of job k: 0, or -1 (no job k, NULL, or a --jobs-alone run). */
int dp_mix_row_get(const struct dp_mix *m, uint32_t k, struct dp_mix_row *out);

/*
 * The slowdowns of the jobs that have one (measured of jobs): their mean,
 * their p99 by nearest rank (the ceil(0.99 n)-th smallest: the largest
 * below 100 jobs) and their largest. 0, or -1 when no job has one (the
 * three NAN).
 */
struct dp_mix_summary {
	uint32_t jobs, measured;
	double mean_pct, p99_pct, max_pct;
};
int dp_mix_summary_get(const struct dp_mix *m, struct dp_mix_summary *out);

/* QPs each NIC needs for the mix's largest instance (0 for NULL). */
uint32_t dp_mix_qps(const struct dp_mix *m);

/* Start the jobs on ns, each at start_ns plus its arrival time. 0, or -1 with err. */
int dp_mix_start(struct dp_mix *m, struct dp_nics *ns, uint64_t start_ns, char *err, size_t errlen);

/*
 * --te's traffic matrix: every started job's network connections appended
 * to p (dp_job_te_pairs, in the schedule's order; repeats stay). Returns 0,
 * or -1 with err (dp_job_te_pairs's).
 */
struct dp_job_pairs;
int dp_mix_te_pairs(const struct dp_mix *m, struct dp_job_pairs *p, char *err, size_t errlen);
/* dp_job_te_check of each loaded job: 0, or -1 with the first one's err. */
int dp_mix_te_check(const struct dp_mix *m, char *err, size_t errlen);

/* True while a job has work left (NULL: false). */
bool dp_mix_active(const struct dp_mix *m);
/* True when a job did not finish (NULL: false). */
bool dp_mix_failed(const struct dp_mix *m);

/*
 * The report to out. With every job: a line per job, "# jobs: NAME: G GPUs
 * on N servers by POLICY (HOST+HOST+...), arrival A us: iteration 1 alone
 * T us, in the mix M us, slowdown S %" (S = 100 (M - T) / T), then
 * "# jobs: the mix: N jobs, slowdown mean X %, p99 Y %, max Z %"
 * (dp_mix_summary_get), then each job's own report (dp_job_report). With
 * one (only): its own report.
 */
void dp_mix_report(const struct dp_mix *m, FILE *out);

void dp_mix_free(struct dp_mix *m);

#endif /* DP_MIX_H */
