/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --jobs: each job's time alone on its placement, from a rocelab-dp of its
 * own per job: this program again with the same options and --jobs-alone K
 * (dp_mix.h). A run of its own starts from fresh NICs and an idle fabric,
 * as a plain --workload run of the job on the same hosts does, so the two
 * agree; the run after another on the same fabric would not (the NICs' QP
 * numbers, and with them the UDP source ports, have moved on).
 */
#include "app.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Why job k's child failed, into err: fork, waitpid, its status, or no report line. */
static void alone_why(uint32_t k, pid_t pid, int waited, int st, char *err, size_t errlen)
{
	char why[64];

	if (pid < 0 || waited < 0)
		snprintf(why, sizeof(why), "%s: %s", pid < 0 ? "fork" : "waitpid", strerror(errno));
	else if (!WIFEXITED(st))
		snprintf(why, sizeof(why), "signal %d", WTERMSIG(st));
	else if (WEXITSTATUS(st) != 0)
		snprintf(why, sizeof(why), "exit %d", WEXITSTATUS(st));
	else
		snprintf(why, sizeof(why), "exit 0 without its '# job: iteration 1' line");
	snprintf(err, errlen, "--jobs: job %u alone (rocelab-dp ... --jobs-alone %u) failed: %s", k, k, why);
}

/*
 * Job k's run: the child's iteration 1 time (ns) from its report, or -1 with
 * err; *exposed_ns its exposed communication.
 */
static int64_t alone_run(const struct opts *o, uint32_t k, uint64_t *exposed_ns, char *err, size_t errlen)
{
	char kbuf[16], name[128];
	char **argv = calloc((size_t)o->argc + 5, sizeof(*argv));
	int fd[2] = {-1, -1};

	if (argv == NULL || pipe(fd) < 0) {
		free(argv);
		return snprintf(err, errlen, "out of memory, or no pipe"), -1;
	}
	snprintf(kbuf, sizeof(kbuf), "%u", k);
	/* (a DPDK file prefix of its own: the last --name wins; without --name,
	 * this process's default rocelab-PID, so that two runs at once differ) */
	if (o->name)
		snprintf(name, sizeof(name), "%.100s-alone%u", o->name, k);
	else
		snprintf(name, sizeof(name), "rocelab-%ld-alone%u", (long)getpid(), k);
	memcpy(argv, o->argv, (size_t)o->argc * sizeof(*argv));
	argv[o->argc] = "--jobs-alone";
	argv[o->argc + 1] = kbuf;
	argv[o->argc + 2] = "--name";
	argv[o->argc + 3] = name;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	free(argv);
	close(fd[1]);
	FILE *f = pid > 0 ? fdopen(fd[0], "r") : NULL;
	char line[512];
	double us = -1, exp_us = 0;
	while (f && fgets(line, sizeof(line), f))
		if (us < 0 && sscanf(line, "# job: iteration 1: time %lf us, compute critical path %*f us, "
					   "exposed communication %lf us", &us, &exp_us) != 2)
			us = -1;
	if (f)
		fclose(f);
	else
		close(fd[0]);
	int st = 0, waited = pid < 0 ? -1 : (int)waitpid(pid, &st, 0);
	if (waited < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || us < 0) {
		alone_why(k, pid, waited, st, err, errlen);
		return -1;
	}
	*exposed_ns = (uint64_t)llround(exp_us * 1e3);
	return (int64_t)llround(us * 1e3);
}

int jobs_alone(struct run *r, char *err, size_t errlen)
{
	for (uint32_t k = 0; k < dp_mix_jobs(r->mix); k++) {
		uint64_t exposed = 0;
		int64_t ns = alone_run(r->o, k, &exposed, err, errlen);
		if (ns < 0)
			return -1;
		dp_mix_set_alone(r->mix, k, (uint64_t)ns, exposed);
	}
	return 0;
}
