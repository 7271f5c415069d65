/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for job files (workload/wl_jobs) and the scheduler
 * (wl_sched): the input is the file. Refused: a message that starts with the
 * file's name, nothing kept. Accepted: every job named, with GPUs and a
 * workload; then placed on a 4-leaf Clos of 3 hosts each (1-GPU servers) by
 * the file's policies: each placed job has its GPUs and owns its servers
 * alone, each refused one a message.
 * Built with -Dfuzz=true under clang; run by scripts/fuzz.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "topo.h"
#include "wl_jobs.h"
#include "wl_sched.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void place_all(const struct wl_jobs *js)
{
	static struct topo *t;
	static struct wl_cluster c;
	struct wl_schedule s;
	struct wl_err err;

	if (!t) { /* once: kept for the whole run */
		char msg[512];
		t = topo_clos(2, 4, 3, msg, sizeof(msg));
		if (!t || wl_cluster_init(&c, t, &err))
			abort();
	}
	int rc = wl_sched_place(&c, js, -1, 7, &s, &err);
	if (rc < 0)
		abort();
	uint32_t given = 0, owned = 0;
	for (uint32_t i = 0; i < s.n; i++) {
		const struct wl_place *p = &s.places[i];
		if (!p->placed) {
			if (p->msg[0] == '\0')
				abort(); /* refused without a word */
			continue;
		}
		if (p->n != p->job->gpus)
			abort();
		for (uint32_t k = 0; k < p->n; k++)
			if (s.owner[p->servers[k]] != i)
				abort(); /* a server given twice */
		given += p->n;
	}
	for (uint32_t v = 0; v < c.n_servers; v++)
		owned += s.owner[v] != UINT32_MAX;
	if (given != owned || (rc == 1) != (s.refused > 0))
		abort();
	wl_schedule_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wl_jobs js;
	struct wl_err err;

	err.msg[0] = '\0';
	if (wl_jobs_parse((const char *)data, size, "fuzz.yaml", &js, &err) != 0) {
		if (strncmp(err.msg, "fuzz.yaml", 9) != 0 || js.jobs != NULL)
			abort();
		return 0;
	}
	for (uint32_t i = 0; i < js.n; i++)
		if (js.jobs[i].name[0] == '\0' || js.jobs[i].gpus == 0 ||
		    strchr(js.jobs[i].workload, ':') == NULL)
			abort();
	place_all(&js);
	wl_jobs_free(&js);
	return 0;
}
