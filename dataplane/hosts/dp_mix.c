/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_mix: rocelab-dp --jobs FILE (dp_mix.h). The job file and the placement
 * are workload/'s (wl_jobs, wl_sched, wl_svg); each placed job is a
 * --workload job (dp_job) whose hosts= are its servers' GPUs in ring order.
 */
#include "dp_mix.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp_job.h"
#include "wl_sched.h"

struct dp_mix {
	struct wl_jobs js;
	struct wl_cluster cl;
	struct wl_schedule s;
	uint32_t n;
	struct dp_job **job;   /* [n], in the schedule's (arrival) order; NULL: not loaded (only) */
	uint64_t *alone_ns;    /* [n] each job's time alone (dp_mix_set_alone), 0: not known */
	uint64_t *alone_exp;   /* [n] its exposed communication alone */
	char **hosts;          /* [n] each job's hosts, A+B+... */
	int only;              /* -1, or the one job loaded */
};

/* The placement drawn into svg. 0, or -1 with err. */
static int mix_svg(const struct dp_mix *m, const char *svg, char *err, size_t errlen)
{
	FILE *f = fopen(svg, "w");
	int rc = f ? wl_sched_svg(&m->cl, &m->s, f) : -1;

	if (f && fclose(f) != 0)
		rc = -1;
	if (rc < 0)
		snprintf(err, errlen, "--jobs-svg %s: cannot write it", svg);
	return rc;
}

/* Place k's job as a --workload job on its hosts. 0, or -1 with "FILE:LINE: job NAME: why". */
static int mix_job(struct dp_mix *m, uint32_t k, const struct topo *t, const char *coll, char *err,
		   size_t errlen)
{
	const struct wl_place *p = &m->s.places[k];
	size_t need = wl_place_hosts(&m->cl, p, NULL, 0);
	char *hosts = malloc(need + 1), *text = malloc(need + WL_JOB_WORKLOAD_MAX + 16);
	char why[768];
	struct dp_job_spec spec;

	m->hosts[k] = hosts;
	if (!hosts || !text) {
		free(text);
		return snprintf(err, errlen, "out of memory"), -1;
	}
	wl_place_hosts(&m->cl, p, hosts, need + 1);
	for (char *c = hosts; *c; c++) /* (wl_place_hosts joins with ',', hosts= with '+') */
		if (*c == ',')
			*c = '+';
	snprintf(text, need + WL_JOB_WORKLOAD_MAX + 16, "%s,hosts=%s", p->job->workload, hosts);
	int rc = dp_job_spec_parse(text, &spec, why, sizeof(why));
	free(text);
	if (rc == 0) {
		spec.coll = coll;
		m->job[k] = dp_job_load(&spec, t, why, sizeof(why));
		dp_job_spec_free(&spec);
		rc = m->job[k] ? 0 : -1;
	}
	if (rc < 0)
		snprintf(err, errlen, "%s%s:%d: job %s: %s", strstr(why, "out of memory") ? "out of memory: " : "",
			 m->js.file, p->job->line, p->job->name, why);
	return rc;
}

struct dp_mix *dp_mix_load(const char *file, const struct topo *t, const char *coll,
			   const char *svg, int only, char *err, size_t errlen)
{
	struct dp_mix *m = calloc(1, sizeof(*m));
	struct wl_err we = {{0}};
	int rc = m ? 0 : -1;

	if (!m)
		return snprintf(err, errlen, "out of memory"), NULL;
	if (wl_jobs_load(file, &m->js, &we) < 0 || wl_cluster_init(&m->cl, t, &we) < 0) {
		snprintf(err, errlen, "--jobs: %s", we.msg);
		dp_mix_free(m);
		return NULL;
	}
	/* (the policy: each job's, else the file's, else topology-aware; the seed the file's, else 1
	 * as rocelab-place's) */
	rc = wl_sched_place(&m->cl, &m->js, -1, m->js.has_seed ? m->js.seed : 1, &m->s, &we);
	if (rc < 0)
		snprintf(err, errlen, "out of memory");
	for (uint32_t k = 0; rc > 0 && k < m->s.n; k++)
		if (!m->s.places[k].placed) { /* (a mix that does not fit: the first job refused) */
			snprintf(err, errlen, "--jobs: %s", m->s.places[k].msg);
			break;
		}
	m->n = rc == 0 ? m->s.n : 0;
	m->job = calloc(m->n + 1, sizeof(*m->job));
	m->alone_ns = calloc(m->n + 1, sizeof(*m->alone_ns));
	m->alone_exp = calloc(m->n + 1, sizeof(*m->alone_exp));
	m->hosts = calloc(m->n + 1, sizeof(*m->hosts));
	m->only = only;
	if (rc == 0 && only >= 0 && (uint32_t)only >= m->n) {
		snprintf(err, errlen, "--jobs-alone %d: the mix has %u jobs", only, m->n);
		rc = -1;
	}
	if (rc == 0 && (!m->job || !m->alone_ns || !m->alone_exp || !m->hosts)) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	for (uint32_t k = 0; rc == 0 && k < m->n; k++)
		if (only < 0 || (uint32_t)only == k)
			rc = mix_job(m, k, t, coll, err, errlen);
	if (rc == 0 && svg)
		rc = mix_svg(m, svg, err, errlen);
	if (rc != 0) {
		dp_mix_free(m);
		return NULL;
	}
	return m;
}

uint32_t dp_mix_qps(const struct dp_mix *m)
{
	uint32_t most = 0;

	for (uint32_t k = 0; m && k < m->n; k++)
		if (dp_job_qps(m->job[k]) > most)
			most = dp_job_qps(m->job[k]);
	return most;
}

uint32_t dp_mix_jobs(const struct dp_mix *m)
{
	return m ? m->n : 0;
}

const char *dp_mix_name(const struct dp_mix *m, uint32_t k)
{
	return m->s.places[k].job->name;
}

const struct dp_job *dp_mix_job(const struct dp_mix *m, uint32_t k)
{
	return m->job[k];
}

void dp_mix_set_alone(struct dp_mix *m, uint32_t k, uint64_t ns, uint64_t exposed_ns)
{
	if (m && k < m->n) {
		m->alone_ns[k] = ns;
		m->alone_exp[k] = exposed_ns;
	}
}

int dp_mix_row_get(const struct dp_mix *m, uint32_t k, struct dp_mix_row *out)
{
	struct dp_job_iter mix = {0};

	if (m == NULL || m->only >= 0 || k >= m->n)
		return -1;
	const struct wl_place *p = &m->s.places[k];
	bool ended = dp_job_iter_get(m->job[k], 0, &mix) == 0;
	*out = (struct dp_mix_row){
		.name = p->job->name, .policy = wl_policy_name(p->policy), .hosts = m->hosts[k],
		.gpus = p->job->gpus, .servers = p->n, .arrival_ns = p->job->arrival_ns,
		.alone_ns = m->alone_ns[k], .alone_exposed_ns = m->alone_exp[k],
		.mix_ns = ended ? mix.time_ns : 0, .mix_exposed_ns = ended ? mix.exposed_ns : 0,
		.slowdown_pct = NAN,
	};
	if (ended && out->alone_ns > 0)
		out->slowdown_pct = 100.0 * ((double)mix.time_ns - (double)out->alone_ns) / (double)out->alone_ns;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int dp_mix_summary_get(const struct dp_mix *m, struct dp_mix_summary *out)
{
	struct dp_mix_row row;
	double *v = calloc(dp_mix_jobs(m) + 1, sizeof(*v)), sum = 0;

	*out = (struct dp_mix_summary){.jobs = dp_mix_jobs(m), .mean_pct = NAN, .p99_pct = NAN,
				       .max_pct = NAN};
	for (uint32_t k = 0; v && dp_mix_row_get(m, k, &row) == 0; k++)
		if (!isnan(row.slowdown_pct))
			sum += v[out->measured++] = row.slowdown_pct;
	if (out->measured > 0) {
		qsort(v, out->measured, sizeof(*v), cmp_double);
		out->mean_pct = sum / out->measured;
		out->p99_pct = v[(uint32_t)ceil(0.99 * out->measured) - 1];
		out->max_pct = v[out->measured - 1];
	}
	free(v);
	return out->measured > 0 ? 0 : -1;
}

int dp_mix_start(struct dp_mix *m, struct dp_nics *ns, uint64_t start_ns, char *err, size_t errlen)
{
	for (uint32_t k = 0; m && k < m->n; k++)
		if (m->job[k] && dp_job_start(m->job[k], ns, start_ns + (m->only < 0 ?
				 m->s.places[k].job->arrival_ns : 0), err, errlen) < 0)
			return -1;
	return 0;
}

int dp_mix_te_check(const struct dp_mix *m, char *err, size_t errlen)
{
	for (uint32_t k = 0; m && k < m->n; k++)
		if (dp_job_te_check(m->job[k], err, errlen) < 0)
			return -1;
	return 0;
}

int dp_mix_te_pairs(const struct dp_mix *m, struct dp_job_pairs *p, char *err, size_t errlen)
{
	for (uint32_t k = 0; m && k < m->n; k++)
		if (dp_job_te_pairs(m->job[k], p, err, errlen) < 0)
			return -1;
	return 0;
}

bool dp_mix_active(const struct dp_mix *m)
{
	for (uint32_t k = 0; m && k < m->n; k++)
		if (dp_job_active(m->job[k]))
			return true;
	return false;
}

bool dp_mix_failed(const struct dp_mix *m)
{
	for (uint32_t k = 0; m && k < m->n; k++)
		if (m->job[k] && dp_job_failed(m->job[k]))
			return true;
	return false;
}

/* "# jobs: the mix's iteration 1: E of N jobs ended, mean X us, max Y us": with or without runs alone. */
static void mix_iter_line(const struct dp_mix *m, FILE *out)
{
	struct dp_mix_row row;
	uint32_t ended = 0, k;
	double sum = 0, most = 0;

	for (k = 0; dp_mix_row_get(m, k, &row) == 0; k++)
		if (row.mix_ns > 0) {
			double us = (double)row.mix_ns / 1e3;

			ended++;
			sum += us;
			most = us > most ? us : most;
		}
	if (k > 0 && ended > 0)
		fprintf(out, "# jobs: the mix's iteration 1: %u of %u jobs ended, mean %.3f us, max %.3f us\n",
			ended, k, sum / ended, most);
}

void dp_mix_report(const struct dp_mix *m, FILE *out)
{
	struct dp_mix_row row;
	struct dp_mix_summary sum;

	if (m && m->only >= 0) {
		dp_job_report(m->job[m->only], out);
		return;
	}
	for (uint32_t k = 0; dp_mix_row_get(m, k, &row) == 0; k++) {
		fprintf(out, "# jobs: %s: %u GPUs on %u servers by %s (%s), arrival %.3f us: iteration 1 ",
			row.name, row.gpus, row.servers, row.policy, row.hosts, (double)row.arrival_ns / 1e3);
		if (!isnan(row.slowdown_pct))
			fprintf(out, "alone %.3f us, in the mix %.3f us, slowdown %.2f %%\n",
				(double)row.alone_ns / 1e3, (double)row.mix_ns / 1e3, row.slowdown_pct);
		else if (row.mix_ns > 0) /* (--jobs-mix-only: no run alone) */
			fprintf(out, "alone not run, in the mix %.3f us\n", (double)row.mix_ns / 1e3);
		else
			fprintf(out, "NOT FINISHED\n");
	}
	if (m && dp_mix_summary_get(m, &sum) == 0)
		fprintf(out, "# jobs: the mix: %u jobs, slowdown mean %.2f %%, p99 %.2f %%, max %.2f %%\n",
			sum.jobs, sum.mean_pct, sum.p99_pct, sum.max_pct);
	mix_iter_line(m, out);
	for (uint32_t k = 0; m && k < m->n; k++) {
		fprintf(out, "\n# jobs: %s in the mix\n", m->s.places[k].job->name);
		dp_job_report(m->job[k], out);
	}
}

void dp_mix_free(struct dp_mix *m)
{
	if (m == NULL)
		return;
	for (uint32_t k = 0; k < m->n; k++) {
		dp_job_free(m->job ? m->job[k] : NULL);
		free(m->hosts ? m->hosts[k] : NULL);
	}
	free(m->job);
	free(m->alone_ns);
	free(m->alone_exp);
	free(m->hosts);
	wl_schedule_free(&m->s);
	wl_cluster_free(&m->cl);
	wl_jobs_free(&m->js);
	free(m);
}
