/* SPDX-License-Identifier: BSD-3-Clause */
/* The job file (wl_jobs.h): YAML through topology's libfyaml helpers. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_suggest.h"
#include "topo.h"
#include "topo_yaml.h"
#include "wl_jobs.h"

static const char *const policy_names[WL_POLICY_COUNT + 1] = { /* NULL-ended */
	[WL_POLICY_PACKED] = "packed",
	[WL_POLICY_SPREAD] = "spread",
	[WL_POLICY_RANDOM] = "random",
	[WL_POLICY_TOPO_AWARE] = "topology-aware",
};

static const char *const top_keys[] = {"jobs", "policy", "seed", NULL};
static const char *const job_keys[] = {"name", "workload", "gpus", "arrival", "policy", NULL};
/* The workload kinds a reference may name; what each means is rocelab-dp's. */
static const char *const workload_kinds[] = {"chakra", "astra", "llm", "coll", NULL};

const char *wl_policy_name(enum wl_policy p)
{
	return (unsigned)p < WL_POLICY_COUNT ? policy_names[p] : NULL;
}

int wl_policy_from_name(const char *name)
{
	for (int i = 0; i < WL_POLICY_COUNT; i++)
		if (!strcmp(name, policy_names[i]))
			return i;
	return -1;
}

static size_t count_words(const char *const *w)
{
	size_t n = 0;
	while (w[n])
		n++;
	return n;
}

/* "unknown key 'K' in WHAT (did you mean X?; keys: a, b, c)" */
static int unknown_word(struct topo_yaml_ctx *c, int line, const char *what, const char *word,
			const char *const *cands)
{
	char list[256];
	size_t off = 0;
	const char *near = rl_suggest(word, cands, count_words(cands));

	list[0] = '\0';
	for (const char *const *q = cands; *q && off < sizeof(list); q++) {
		int n = snprintf(list + off, sizeof(list) - off, "%s%s", q == cands ? "" : ", ", *q);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (near)
		return topo_yaml_fail(c, line, "unknown %s '%s' (did you mean %s?; expected: %s)",
				      what, word, near, list);
	return topo_yaml_fail(c, line, "unknown %s '%s' (expected: %s)", what, word, list);
}

static bool known(const char *word, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(word, *list))
			return true;
	return false;
}

static int get_policy(struct topo_yaml_ctx *c, struct fy_node *v, int kl, int *out)
{
	char buf[64];
	if (topo_yaml_scalar(c, v, "policy", kl, buf, sizeof(buf)))
		return -1;
	*out = wl_policy_from_name(buf);
	if (*out >= 0)
		return 0;
	return unknown_word(c, topo_yaml_line(v, kl), "policy", buf, policy_names);
}

/* A whole number 0..max; a leading '-' is named as negative. */
static int get_count(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int kl,
		     uint64_t max, uint64_t *out)
{
	char buf[64];
	if (topo_yaml_scalar(c, v, key, kl, buf, sizeof(buf)))
		return -1;
	int line = topo_yaml_line(v, kl);
	if (buf[0] == '-')
		return topo_yaml_fail(c, line, "%s: %s is negative (takes 1..%" PRIu64 ")", key,
				      buf, max);
	bool digits = buf[0] != '\0';
	for (const char *p = buf; *p; p++)
		digits = digits && isdigit((unsigned char)*p);
	errno = 0;
	unsigned long long x = digits ? strtoull(buf, NULL, 10) : 0;
	if (!digits || errno || x > max)
		return topo_yaml_fail(c, line, "%s: bad value '%s' (takes a whole number 0..%" PRIu64 ")",
				      key, buf, max);
	*out = x;
	return 0;
}

static int get_name(struct topo_yaml_ctx *c, struct fy_node *v, int kl, char *buf)
{
	if (topo_yaml_scalar(c, v, "name", kl, buf, WL_JOB_NAME_MAX))
		return -1;
	bool ok = buf[0] != '\0' && isalnum((unsigned char)buf[0]);
	for (const char *p = buf; *p; p++)
		ok = ok && (isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.');
	if (!ok)
		return topo_yaml_fail(c, topo_yaml_line(v, kl),
				      "name: bad job name '%s' (letters, digits, '_', '-', '.', "
				      "first a letter or digit)", buf);
	return 0;
}

static int get_workload(struct topo_yaml_ctx *c, struct fy_node *v, int kl, char *buf)
{
	if (topo_yaml_scalar(c, v, "workload", kl, buf, WL_JOB_WORKLOAD_MAX))
		return -1;
	int line = topo_yaml_line(v, kl);
	char *colon = strchr(buf, ':');
	if (!colon || colon[1] == '\0')
		return topo_yaml_fail(c, line,
				      "workload: '%s' is not KIND:WHAT (chakra:PREFIX, astra:FILE, "
				      "llm:PRESET or coll:SPEC)", buf);
	*colon = '\0';
	int rc = known(buf, workload_kinds) ? 0
					     : unknown_word(c, line, "workload kind", buf, workload_kinds);
	*colon = ':';
	return rc;
}

/* One pair of a job's mapping (topo_yaml_pair_fn). */
static int job_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
		    int kl)
{
	struct wl_job *j = obj;
	uint64_t x;

	if (!known(key, job_keys))
		return unknown_word(c, kl, "job key", key, job_keys);
	if (!strcmp(key, "name"))
		return get_name(c, v, kl, j->name);
	if (!strcmp(key, "workload"))
		return get_workload(c, v, kl, j->workload);
	if (!strcmp(key, "policy"))
		return get_policy(c, v, kl, &j->policy);
	if (!strcmp(key, "gpus")) {
		if (get_count(c, v, key, kl, UINT32_MAX, &x))
			return -1;
		if (x == 0)
			return topo_yaml_fail(c, topo_yaml_line(v, kl), "gpus: 0: a job needs 1 GPU or more");
		j->gpus = (uint32_t)x;
		return 0;
	}
	char buf[64]; /* arrival */
	if (topo_yaml_scalar(c, v, key, kl, buf, sizeof(buf)))
		return -1;
	if (topo_parse_duration(buf, &j->arrival_ns))
		return topo_yaml_fail(c, topo_yaml_line(v, kl),
				      "arrival: bad time '%s' (e.g. 0, 250us, 10ms, 1.5s; at most a day)",
				      buf);
	return 0;
}

/* One entry of `jobs:`: its keys, the required ones, a name not seen before. */
static int read_job(struct topo_yaml_ctx *c, struct wl_jobs *js, struct fy_node *item, int kl)
{
	struct wl_job *j = &js->jobs[js->n];
	int line = topo_yaml_line(item, kl);

	memset(j, 0, sizeof(*j));
	j->policy = -1;
	j->line = line;
	if (topo_yaml_walk_map(c, item, line, "a job", NULL, job_pair, j))
		return -1;
	static const char *const need[] = {"name", "workload", "gpus"};
	for (size_t k = 0; k < 3; k++)
		if (!topo_yaml_map_get(item, need[k]))
			return topo_yaml_fail(c, line, "job%s%s: missing key '%s'",
					      j->name[0] ? " " : "", j->name, need[k]);
	for (uint32_t i = 0; i < js->n; i++)
		if (!strcmp(js->jobs[i].name, j->name))
			return topo_yaml_fail(c, line, "job %s: duplicate name (first on line %d)",
					      j->name, js->jobs[i].line);
	js->n++;
	return 0;
}

static int read_jobs(struct topo_yaml_ctx *c, struct wl_jobs *js, struct fy_node *v, int kl)
{
	if (topo_yaml_check_list(c, v, "jobs", kl))
		return -1;
	int n = fy_node_sequence_item_count(v);
	if (n <= 0)
		return topo_yaml_fail(c, kl, "jobs: the list is empty");
	if (n > WL_JOBS_MAX)
		return topo_yaml_fail(c, kl, "jobs: %d jobs, at most %d", n, WL_JOBS_MAX);
	js->jobs = calloc((size_t)n, sizeof(*js->jobs));
	if (!js->jobs)
		return topo_yaml_fail(c, kl, "jobs: out of memory");
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(v, &it)))
		if (read_job(c, js, item, kl))
			return -1;
	return 0;
}

static int top_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
		    int kl)
{
	struct wl_jobs *js = obj;

	if (!known(key, top_keys))
		return unknown_word(c, kl, "key", key, top_keys);
	if (!strcmp(key, "jobs"))
		return read_jobs(c, js, v, kl);
	if (!strcmp(key, "policy"))
		return get_policy(c, v, kl, &js->policy);
	js->has_seed = true;
	return get_count(c, v, key, kl, UINT64_MAX, &js->seed);
}

int wl_jobs_parse(const char *text, size_t len, const char *file, struct wl_jobs *out,
		  struct wl_err *err)
{
	char msg[WL_ERR_LEN] = "";
	struct topo_yaml_ctx c = {.file = file, .err = msg, .errlen = sizeof(msg)};
	struct topo_yaml_doc d;

	memset(out, 0, sizeof(*out));
	out->policy = -1;
	snprintf(out->file, sizeof(out->file), "%s", file);
	int rc = topo_yaml_open(&c, text, len, "job file", &d);
	if (rc == 0)
		rc = topo_yaml_walk_map(&c, d.root, 1, "the job file", NULL, top_pair, out);
	if (rc == 0 && out->n == 0)
		rc = topo_yaml_fail(&c, 1, "no jobs: the file needs a `jobs:` list");
	topo_yaml_close(&d);
	if (rc) {
		wl_jobs_free(out);
		return wl_err_set(err, "%s", msg);
	}
	return 0;
}

int wl_jobs_load(const char *path, struct wl_jobs *out, struct wl_err *err)
{
	char msg[WL_ERR_LEN] = "";
	struct topo_yaml_ctx c = {.file = path, .err = msg, .errlen = sizeof(msg)};
	char *buf = NULL;
	size_t len = 0;

	memset(out, 0, sizeof(*out));
	out->policy = -1;
	if (topo_yaml_read_file(&c, &buf, &len))
		return wl_err_set(err, "%s", msg);
	int rc = wl_jobs_parse(buf, len, path, out, err);
	free(buf);
	return rc;
}

void wl_jobs_free(struct wl_jobs *jobs)
{
	free(jobs->jobs);
	jobs->jobs = NULL;
	jobs->n = 0;
}
