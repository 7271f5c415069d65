/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocelab-place: place the jobs of a job file on a topology's servers
 * (wl_sched.h) and show where they went: a table, the hosts= lists, an SVG.
 * Nothing runs: this is the scheduler alone, before rocelab-dp runs jobs.
 * Exit 0 when every job is placed; 2 on bad input or a refused job; 1 when
 * the output cannot be written.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_version.h"
#include "topo.h"
#include "wl_jobs.h"
#include "wl_sched.h"

#define DEFAULT_SEED 1

static void usage(FILE *f)
{
	fputs("usage: rocelab-place JOBS.yaml TOPO.yaml [--policy P] [--seed N] [--svg FILE] [--list]\n"
	      "       rocelab-place --check JOBS.yaml   validate the job file; exit 0 or 2\n"
	      "       rocelab-place --version\n"
	      "       rocelab-place --help\n"
	      "Places the jobs of JOBS.yaml on the free servers of TOPO.yaml in arrival order\n"
	      "and prints a table: per job its GPUs, policy, servers, racks and zones used, and\n"
	      "the ring hops that cross a rack or a zone. Nothing is run.\n"
	      "  --policy P   for jobs that name none: packed, spread, random, topology-aware\n"
	      "               (default: the file's policy:, else topology-aware)\n"
	      "  --seed N     the random policy's seed (default: the file's seed:, else 1)\n"
	      "  --svg FILE   write a picture: servers grouped by rack and zone, coloured by job\n"
	      "  --list       print each job's servers and its hosts= list, in ring order\n"
	      "A topology without servers counts each host as a server of 1 GPU.\n"
	      "Exit: 0 every job placed; 2 bad input or a job refused (the message names\n"
	      "it, its GPUs and the free GPUs); 1 the output could not be written.\n"
	      "Job file format: docs/reference/rocelab-place.md\n",
	      f);
}

struct opts {
	const char *jobs, *topo, *svg;
	int policy;
	int has_seed;
	uint64_t seed;
	int list;
};

/* One line on stderr saying what is wrong with the command line; returns 2. */
static int bad_args(const char *what, const char *arg)
{
	fprintf(stderr, "rocelab-place: %s%s%s; see --help\n", what, arg ? " " : "", arg ? arg : "");
	return 2;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{"policy", required_argument, NULL, 'p'}, {"seed", required_argument, NULL, 's'},
		{"svg", required_argument, NULL, 'g'},    {"list", no_argument, NULL, 'l'},
		{NULL, 0, NULL, 0},
	};
	int ch;
	char *end;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (ch) {
		case 'p':
			o->policy = wl_policy_from_name(optarg);
			if (o->policy < 0)
				return bad_args("--policy: unknown policy (packed, spread, random, "
						"topology-aware):", optarg);
			break;
		case 's':
			errno = 0;
			o->seed = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end || optarg[0] == '-')
				return bad_args("--seed takes a whole number, not", optarg);
			o->has_seed = 1;
			break;
		case 'g':
			o->svg = optarg;
			break;
		case 'l':
			o->list = 1;
			break;
		default:
			return bad_args(optopt ? "option needs a value:" : "unknown option",
					argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return bad_args(argc - optind < 2 ? "takes JOBS.yaml TOPO.yaml" : "extra argument",
				argc - optind < 2 ? NULL : argv[optind + 2]);
	o->jobs = argv[optind];
	o->topo = argv[optind + 1];
	return 0;
}

static void print_table(const struct wl_cluster *c, const struct wl_schedule *s, FILE *f)
{
	fprintf(f, "%-20s %10s %6s %-15s %7s %5s %5s %9s %9s\n", "job", "arrival_ms", "GPUs",
		"policy", "servers", "racks", "zones", "rack_hops", "zone_hops");
	for (uint32_t i = 0; i < s->n; i++) {
		const struct wl_place *p = &s->places[i];
		fprintf(f, "%-20s %10.3f %6u %-15s ", p->job->name, p->job->arrival_ns / 1e6,
			p->job->gpus, wl_policy_name(p->policy));
		if (p->placed)
			fprintf(f, "%7u %5u %5u %9u %9u\n", p->n, p->racks, p->zones, p->rack_hops,
				p->zone_hops);
		else
			fprintf(f, "%7s\n", "refused");
	}
	uint32_t used = 0;
	for (uint32_t v = 0; v < c->n_servers; v++)
		used += s->owner[v] != UINT32_MAX;
	fprintf(f, "# %u of %u servers given (%u of %u GPUs), %u job(s) refused\n", used,
		c->n_servers, used * c->gpus_per_server, c->n_servers * c->gpus_per_server,
		s->refused);
}

/* --list: per job "NAME servers: a b c" and "NAME hosts=h,h,h". Returns -1 on OOM. */
static int print_lists(const struct wl_cluster *c, const struct wl_schedule *s, FILE *f)
{
	for (uint32_t i = 0; i < s->n; i++) {
		const struct wl_place *p = &s->places[i];
		if (!p->placed)
			continue;
		fprintf(f, "%s servers:", p->job->name);
		for (uint32_t k = 0; k < p->n; k++)
			fprintf(f, " %s", c->servers[p->servers[k]].name);
		size_t len = wl_place_hosts(c, p, NULL, 0) + 1;
		char *buf = malloc(len);
		if (!buf)
			return -1;
		wl_place_hosts(c, p, buf, len);
		fprintf(f, "\n%s hosts=%s\n", p->job->name, buf);
		free(buf);
	}
	return 0;
}

static int write_svg(const struct wl_cluster *c, const struct wl_schedule *s, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "rocelab-place: %s: cannot write: %s\n", path, strerror(errno));
		return 1;
	}
	int bad = wl_sched_svg(c, s, f);
	if (fclose(f) || bad) {
		fprintf(stderr, "rocelab-place: %s: cannot write the picture\n", path);
		return 1;
	}
	return 0;
}

/* Load, place, print; the exit code. */
static int place(const struct opts *o)
{
	struct wl_jobs js;
	struct wl_err err;
	char msg[512];
	struct topo *t = NULL;
	struct wl_cluster c;
	struct wl_schedule s;

	if (wl_jobs_load(o->jobs, &js, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	if (topo_load(o->topo, &t, msg, sizeof(msg))) {
		fprintf(stderr, "%s\n", msg);
		wl_jobs_free(&js);
		return 2;
	}
	int rc = wl_cluster_init(&c, t, &err) ? -1 : 0;
	if (rc == 0) {
		uint64_t seed = o->has_seed ? o->seed : js.has_seed ? js.seed : DEFAULT_SEED;
		rc = wl_sched_place(&c, &js, o->policy, seed, &s, &err);
		if (rc >= 0) {
			print_table(&c, &s, stdout);
			for (uint32_t i = 0; i < s.n; i++)
				if (!s.places[i].placed)
					fprintf(stderr, "%s\n", s.places[i].msg);
			if (o->list && print_lists(&c, &s, stdout))
				rc = -1;
			if (rc >= 0 && o->svg && write_svg(&c, &s, o->svg))
				rc = -2;
		}
		wl_schedule_free(&s);
		wl_cluster_free(&c);
	}
	if (rc == -1)
		fprintf(stderr, "%s\n", err.msg[0] ? err.msg : "rocelab-place: out of memory");
	topo_free(t);
	wl_jobs_free(&js);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "rocelab-place: cannot write the output\n");
		return 1;
	}
	return rc == 1 ? 2 : rc < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct opts o = {.policy = -1};

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("rocelab-place %s (commit %s)\n", RL_VERSION, RL_COMMIT);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "--check")) {
		struct wl_jobs js;
		struct wl_err err;
		if (argc != 3)
			return bad_args("--check takes one JOBS.yaml", NULL);
		if (wl_jobs_load(argv[2], &js, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 2;
		}
		printf("%s: %u jobs\n", argv[2], js.n);
		wl_jobs_free(&js);
		return 0;
	}
	if (parse_args(argc, argv, &o))
		return 2;
	return place(&o);
}
