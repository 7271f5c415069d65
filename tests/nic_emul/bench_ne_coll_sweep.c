/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where round-robin and split each win: busbw of split, rr and CTRAN for a
 * list of sizes and proxy costs, on the test switch (ne_fab), simulated
 * time (deterministic: the figures do not depend on the machine).
 * Usage: bench_ne_coll_sweep [sizes=1M:4M] [costs=0/0:200ns/100ns]
 *                            [rate=400] [key=value ...]
 * Other keys go to ne_coll_config_set() (model=nccl is applied first).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ne_coll.h"
#include "ne_fab.h"

#define EXIT_USAGE 2
#define MAX_LIST 16
#define GBIT 1000000000ull
#define DELAY_NS 1000u
#define UNTIL_NS 100000000000ull /* 100 s simulated */

struct sweep {
	struct ne_coll_config base;
	const char *sizes[MAX_LIST];
	char posts[MAX_LIST][32], polls[MAX_LIST][32];
	int nsizes, ncosts;
	uint64_t rate_bps;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bench_ne_coll_sweep [sizes=S1:S2..] [costs=POST/POLL:..] [rate=GBPS]\n"
		"                           [key=value ...]\n"
		"busbw (GB/s) of an nccl-model collective with split, rr and ctran, and\n"
		"rr/split, per size and proxy cost, on a single switch. Keys: ne_coll.h\n"
		"(ne_coll_config_set), e.g. nranks=8 NCCL_IB_QPS_PER_CONNECTION=16.\n");
}

/* Split a:b:c in place into list; returns the count or -1. */
static int split_list(char *s, const char **list)
{
	int n = 0;

	for (char *tok = strtok(s, ":"); tok; tok = strtok(NULL, ":")) {
		if (n == MAX_LIST)
			return -1;
		list[n++] = tok;
	}
	return n;
}

static int parse_costs(struct sweep *sw, char *v)
{
	const char *items[MAX_LIST];
	int n = split_list(v, items);

	for (int i = 0; i < n; i++) {
		const char *slash = strchr(items[i], '/');

		if (!slash || (size_t)(slash - items[i]) >= sizeof(sw->posts[i]) ||
		    strlen(slash + 1) >= sizeof(sw->polls[i]))
			return -1;
		snprintf(sw->posts[i], sizeof(sw->posts[i]), "%.*s", (int)(slash - items[i]), items[i]);
		snprintf(sw->polls[i], sizeof(sw->polls[i]), "%s", slash + 1);
	}
	sw->ncosts = n;
	return n > 0 ? 0 : -1;
}

/* Every size and cost must be accepted before the first run. */
static int check_lists(const struct sweep *sw)
{
	struct ne_coll_config c = sw->base;
	char msg[256];

	for (int i = 0; i < sw->nsizes; i++)
		if (ne_coll_config_set_msg(&c, "bytes", sw->sizes[i], msg, sizeof(msg)))
			goto bad;
	for (int i = 0; i < sw->ncosts; i++)
		if (ne_coll_config_set_msg(&c, "proxy_post_wqe", sw->posts[i], msg, sizeof(msg)) ||
		    ne_coll_config_set_msg(&c, "proxy_poll_cqe", sw->polls[i], msg, sizeof(msg)))
			goto bad;
	return 0;
bad:
	fprintf(stderr, "bench_ne_coll_sweep: %s\n", msg);
	return -1;
}

static int parse_args(struct sweep *sw, int argc, char **argv)
{
	static char def_sizes[] = "1M:4M:16M", def_costs[] = "0/0:200ns/100ns:1us/300ns";
	char msg[256];

	ne_coll_config_default(&sw->base);
	ne_coll_config_set(&sw->base, "model", "nccl");
	sw->base.nranks = 8;
	sw->base.data = false;
	ne_coll_config_set(&sw->base, "NCCL_IB_QPS_PER_CONNECTION", "16");
	ne_coll_config_set(&sw->base, "NCCL_MIN_NCHANNELS", "2");
	sw->rate_bps = 400 * GBIT;
	sw->nsizes = split_list(def_sizes, sw->sizes);
	parse_costs(sw, def_costs);
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			exit(0);
		}
		if (!eq) {
			fprintf(stderr, "bench_ne_coll_sweep: '%s': expected key=value\n", argv[i]);
			return -1;
		}
		*eq = '\0';
		if (!strcmp(argv[i], "sizes")) {
			sw->nsizes = split_list(eq + 1, sw->sizes);
			if (sw->nsizes <= 0) {
				fprintf(stderr, "bench_ne_coll_sweep: sizes=%s: 1 to %d sizes\n", eq + 1, MAX_LIST);
				return -1;
			}
		} else if (!strcmp(argv[i], "costs")) {
			if (parse_costs(sw, eq + 1)) {
				fprintf(stderr, "bench_ne_coll_sweep: costs=%s: POST/POLL:...\n", eq + 1);
				return -1;
			}
		} else if (!strcmp(argv[i], "rate")) {
			char *end;
			unsigned long g = strtoul(eq + 1, &end, 10);

			if (*end || g == 0 || g > 1600) {
				fprintf(stderr, "bench_ne_coll_sweep: rate=%s: Gbit/s, 1..1600\n", eq + 1);
				return -1;
			}
			sw->rate_bps = g * GBIT;
		} else if (ne_coll_config_set_msg(&sw->base, argv[i], eq + 1, msg, sizeof(msg))) {
			fprintf(stderr, "bench_ne_coll_sweep: %s\n", msg);
			return -1;
		}
	}
	return check_lists(sw);
}

/* busbw of one run; negative on failure. */
static double run(const struct sweep *sw, const char *size, const char *mode, int cost)
{
	struct ne_coll_config c = sw->base;
	struct ne_coll_result r;
	struct fab f;
	double bw = -1.0;
	char msg[256];

	/* checked by check_lists() */
	ne_coll_config_set_msg(&c, "bytes", size, msg, sizeof(msg));
	ne_coll_config_set(&c, "qp_mode", mode);
	ne_coll_config_set_msg(&c, "proxy_post_wqe", sw->posts[cost], msg, sizeof(msg));
	ne_coll_config_set_msg(&c, "proxy_poll_cqe", sw->polls[cost], msg, sizeof(msg));
	fab_init(&f, &c, sw->rate_bps, DELAY_NS);
	f.keep_log = false;
	f.verify_icrc = false;
	if (fab_coll(&f, &c) && ne_coll_start(f.coll, 0) == 0 && fab_run(&f, UNTIL_NS) &&
	    ne_coll_get_result(f.coll, &r) == 0)
		bw = r.busbw;
	fab_free(&f);
	return bw;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = {"split", "rr", "ctran"};
	struct sweep sw;

	memset(&sw, 0, sizeof(sw));
	if (parse_args(&sw, argc, argv)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (ne_coll_config_check(&sw.base)) {
		fprintf(stderr, "bench_ne_coll_sweep: the keys give an invalid config\n");
		return EXIT_USAGE;
	}
	printf("# %s, %u ranks, %u channels, %u QPs/conn, %llu Gbit/s, nccl model, busbw GB/s\n",
	       ne_coll_op_name(sw.base.op), sw.base.nranks, ne_coll_channels(&sw.base),
	       sw.base.qps_per_conn, (unsigned long long)(sw.rate_bps / GBIT));
	printf("# the post and poll costs are assumptions (no public figure): the rows show how\n"
	       "# the result moves with them\n");
	printf("%10s %10s %10s %8s %8s %8s %9s\n", "size", "post", "poll", "split", "rr", "ctran",
	       "rr/split");
	for (int s = 0; s < sw.nsizes; s++)
		for (int k = 0; k < sw.ncosts; k++) {
			double bw[3];

			for (int m = 0; m < 3; m++) {
				bw[m] = run(&sw, sw.sizes[s], modes[m], k);
				if (bw[m] < 0) {
					fprintf(stderr, "bench_ne_coll_sweep: %s %s run failed\n",
						sw.sizes[s], modes[m]);
					return 1;
				}
			}
			printf("%10s %10s %10s %8.1f %8.1f %8.1f %9.2f\n", sw.sizes[s], sw.posts[k],
			       sw.polls[k], bw[0], bw[1], bw[2], bw[1] / bw[0]);
			fflush(stdout);
		}
	return 0;
}
