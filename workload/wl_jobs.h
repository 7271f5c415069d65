/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_jobs: a job file (issue 41, item 4), the training jobs a scheduler
 * places on a topology's servers (wl_sched.h). YAML, read with libfyaml
 * through topology/topo_yaml.h:
 *
 *   policy: topology-aware   # optional: the file's default policy
 *   seed: 7                  # optional: the random policy's seed
 *   jobs:
 *     - name: llama8b        # unique; letters, digits, '.', '_', '-'
 *       workload: llm:llama3-8b   # chakra:PREFIX, astra:FILE, llm:PRESET, coll:SPEC
 *       gpus: 64             # > 0; a multiple of the GPUs of a server (checked at placement)
 *       arrival: 10ms        # optional, default 0: a duration (topo_parse_duration)
 *       policy: random       # optional: this job's policy, over every other
 *
 * The workload is kept as text: nothing here reads or runs it.
 * Every error is one message "FILE:LINE: what is wrong" in a struct wl_err.
 */
#ifndef WL_JOBS_H
#define WL_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wl_err.h"

#define WL_JOB_NAME_MAX 32      /* a job's name, with its NUL */
#define WL_JOB_WORKLOAD_MAX 256 /* a workload reference, with its NUL */
#define WL_JOBS_MAX 4096        /* jobs in one file */
#define WL_JOBS_FILE_MAX 256    /* the file name kept for messages */

/* The scheduler's placement policies (wl_sched.h says what each does). */
enum wl_policy {
	WL_POLICY_PACKED,
	WL_POLICY_SPREAD,
	WL_POLICY_RANDOM,
	WL_POLICY_TOPO_AWARE,
	WL_POLICY_COUNT,
};

struct wl_job {
	char name[WL_JOB_NAME_MAX];
	char workload[WL_JOB_WORKLOAD_MAX]; /* "KIND:REST", KIND one of chakra astra llm coll */
	uint32_t gpus;
	uint64_t arrival_ns;
	int policy; /* an enum wl_policy, or -1: none given */
	int line;   /* line of the job's entry (1-based) */
};

struct wl_jobs {
	char file[WL_JOBS_FILE_MAX];
	uint32_t n;
	struct wl_job *jobs; /* in file order */
	int policy;          /* the file's `policy:`, or -1 */
	bool has_seed;
	uint64_t seed;
};

/*
 * Read the job file at path. Returns 0 with *out filled (free it with
 * wl_jobs_free()), or -1 with *out empty and err holding "FILE:LINE: ..."
 * ("FILE: cannot read: ..." when it cannot be read).
 */
int wl_jobs_load(const char *path, struct wl_jobs *out, struct wl_err *err);

/* wl_jobs_load() on text in memory; file names it in messages. */
int wl_jobs_parse(const char *text, size_t len, const char *file, struct wl_jobs *out,
		  struct wl_err *err);

/* Free what a load filled; an emptied struct, or one never filled, is fine. */
void wl_jobs_free(struct wl_jobs *jobs);

/* A policy's name in job files and on command lines ("packed", "spread",
 * "random", "topology-aware"); NULL when out of range. */
const char *wl_policy_name(enum wl_policy p);

/* The policy with that name, or -1. */
int wl_policy_from_name(const char *name);

#endif /* WL_JOBS_H */
