/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_flow: the flow engine at 24K-GPU scale, incremental against full
 * recomputation in the same run (not a test: it prints figures).
 *
 *   bench_flow [GPUS [MSGS [WINDOW_US [REFILL_NS]]]]
 *                         defaults 24576 GPUs, 2 messages per GPU, a 20 us
 *                         window, no refill engine
 *
 * Full recomputation visits every link at every event, so it runs only over
 * the first WINDOW_US of simulated time, both engines from the same state;
 * the wall-time ratio is over that window. The incremental engine then runs
 * the rest alone.
 *
 * Fabric (illustrative, two tiers): each GPU has a 400 Gbit/s NIC (an up and
 * a down link, 100 ns), 32 GPUs a leaf, every leaf one 400 Gbit/s link (500
 * ns) up to and down from each of 16 spines; a cross-leaf path picks its
 * spine by a hash of its ends (ECMP). Two workloads:
 *   ring      every GPU sends MSGS messages to the next GPU (a ring over all
 *             GPUs): neighbours share a leaf except at its edge, so flows
 *             meet in small components (the incremental case)
 *   alltoall  every GPU sends MSGS messages to random GPUs of its group of
 *             1024: flows meet on spine links in large components
 * Messages are 64 KiB .. 4 MiB, starting at random over 1 ms (fixed seed).
 * Both engines must deliver the window's flows at the same instants (exit 1
 * otherwise); bad arguments exit 2.
 *
 * With REFILL_NS a third engine (fl_config.refill_ns) runs the same flows to
 * the end: its wall time against the incremental one's, its passes, and how
 * far its delivery times are from the exact ones (mean and largest).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fl_fabric.h"

#define G 1000000000ull
#define PER_LEAF 32
#define SPINES 16
#define GROUP 1024

struct bench {
	uint32_t gpus, msgs, leaves;
	uint64_t window_ns; /* both engines run this long; then the incremental one alone */
	uint64_t refill_ns; /* a third engine's refill period; 0: none */
	uint64_t rng;
};

static uint32_t rnd(struct bench *b, uint32_t n)
{
	b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull; /* Knuth's MMIX LCG */
	return (uint32_t)((b->rng >> 33) % n);
}

static double secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Link ids: GPU g's up 2g and down 2g + 1, then leaf-spine up and spine-leaf down. */
static uint32_t nic_up(uint32_t g) { return 2 * g; }
static uint32_t nic_down(uint32_t g) { return 2 * g + 1; }
static uint32_t leaf_up(const struct bench *b, uint32_t leaf, uint32_t s)
{
	return 2 * b->gpus + 2 * (leaf * SPINES + s);
}
static uint32_t leaf_down(const struct bench *b, uint32_t leaf, uint32_t s)
{
	return leaf_up(b, leaf, s) + 1;
}

static int build(const struct bench *b, struct fl_fabric *fab)
{
	uint32_t id, n = 2 * b->gpus + 2 * b->leaves * SPINES;

	for (uint32_t l = 0; l < n; l++)
		if (fl_link_add(fab, 400 * G, l < 2 * b->gpus ? 100 : 500, &id))
			return -ENOMEM;
	return 0;
}

static unsigned path(const struct bench *b, uint32_t src, uint32_t dst, uint32_t *p)
{
	uint32_t ls = src / PER_LEAF, ld = dst / PER_LEAF, s = (src * 2654435761u ^ dst) % SPINES;

	if (ls == ld) {
		p[0] = nic_up(src);
		p[1] = nic_down(dst);
		return 2;
	}
	p[0] = nic_up(src);
	p[1] = leaf_up(b, ls, s);
	p[2] = leaf_down(b, ld, s);
	p[3] = nic_down(dst);
	return 4;
}

/* The same flows, in the same order, into the n_eng engines. */
static int load(struct bench *b, struct fl_fabric **fab, int n_eng, int alltoall)
{
	uint32_t p[4], id;

	b->rng = 7;
	for (uint32_t g = 0; g < b->gpus; g++)
		for (uint32_t m = 0; m < b->msgs; m++) {
			uint32_t base = g / GROUP * GROUP, size = b->gpus - base < GROUP ? b->gpus - base : GROUP;
			uint32_t dst = alltoall ? base + rnd(b, size) : (g + 1) % b->gpus;
			uint64_t bytes = 65536 + rnd(b, 4 * 1048576 - 65536);
			uint64_t start = rnd(b, 1000000);
			unsigned n;

			if (dst == g)
				dst = (g + 1) % b->gpus;
			n = path(b, g, dst, p);
			for (int e = 0; e < n_eng; e++)
				if (fl_flow_start(fab[e], p, n, bytes, start, (uint64_t)g * b->msgs + m, &id))
					return -ENOMEM;
		}
	return 0;
}

/*
 * Runs one engine up to t_stop (FL_TIME_INF: to the end); finish[cookie]
 * gets each delivered flow's time. Its wall time in s, < 0 on failure.
 */
static double run(struct fl_fabric *fab, uint64_t *finish, uint64_t t_stop)
{
	struct fl_done d[256];
	double t0 = secs();
	int rc = 0;
	size_t n;

	if (t_stop != FL_TIME_INF)
		rc = fl_run_until(fab, t_stop);
	else
		while ((rc = fl_advance(fab, NULL)) > 0)
			;
	while ((n = fl_done_pop(fab, d, 256)) > 0)
		for (size_t k = 0; k < n; k++)
			finish[d[k].cookie] = d[k].finish_ns;
	return rc < 0 ? -1.0 : secs() - t0;
}

static double per(uint64_t x, uint64_t events)
{
	return events ? (double)x / (double)events : 0.0;
}

/* st: the two engines at the window's end; whole: the incremental one at the end */
static void report(const char *name, const struct bench *b, const struct fl_stats *st,
		   const double *wall, const struct fl_stats *whole, double whole_wall, uint64_t end)
{
	printf("%-8s first %" PRIu64 " us: %" PRIu64 " events, per event incremental %.1f flows"
	       " %.1f links, full %.1f flows %.1f links; wall incremental %.3f s, full %.3f s:"
	       " full/incremental %.1fx\n", name, b->window_ns / 1000, st[0].events,
	       per(st[0].flows_touched, st[0].events), per(st[0].links_touched, st[0].events),
	       per(st[1].flows_touched, st[1].events), per(st[1].links_touched, st[1].events),
	       wall[0], wall[1], wall[0] > 0 ? wall[1] / wall[0] : 0.0);
	printf("%-8s whole run (incremental): %" PRIu32 " GPUs, %" PRIu64 " flows, %" PRIu64
	       " events, %" PRIu64 " passes, %.1f flows %.1f links per event, %.3f s wall,"
	       " %.3f ms simulated\n", name, b->gpus, whole->delivered, whole->events,
	       whole->recomputes, per(whole->flows_touched, whole->events),
	       per(whole->links_touched, whole->events), whole_wall, (double)end / 1e6);
}

/* The refill engine to the end, against the incremental one's finish times fin0 and wall time. */
static int refill_report(const struct bench *b, const char *name, struct fl_fabric *fab, uint64_t *fin,
			 const uint64_t *fin0, size_t n, double wall0)
{
	struct fl_stats st;
	double wall = run(fab, fin, FL_TIME_INF), sum = 0;
	uint64_t worst = 0;

	if (wall < 0) {
		fprintf(stderr, "bench_flow: %s: the refill engine stalled\n", name);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t d = fin[i] > fin0[i] ? fin[i] - fin0[i] : fin0[i] - fin[i];

		sum += (double)d;
		worst = d > worst ? d : worst;
	}
	fl_stats_get(fab, &st);
	printf("%-8s refill %" PRIu64 " ns (whole run): %" PRIu64 " exact passes, %" PRIu64
	       " local fills, %.1f flows per event, %.3f s wall: incremental/refill %.1fx;"
	       " delivery vs exact: mean %.3f us, largest %.3f us\n", name, b->refill_ns,
	       st.recomputes, st.local_fills, per(st.flows_touched, st.events), wall,
	       wall > 0 ? wall0 / wall : 0.0, sum / (double)n / 1000.0, (double)worst / 1000.0);
	return 0;
}

/* Both engines over the window (they must agree), then the incremental one to the end. */
static int compare(const struct bench *b, const char *name, struct fl_fabric **fab, uint64_t **fin,
		   size_t n)
{
	struct fl_stats st[2], whole;
	double wall[2], rest;

	for (int e = 0; e < 2; e++) {
		wall[e] = run(fab[e], fin[e], b->window_ns);
		fl_stats_get(fab[e], &st[e]);
	}
	if (wall[0] < 0 || wall[1] < 0 || memcmp(fin[0], fin[1], n * sizeof(uint64_t))) {
		fprintf(stderr, "bench_flow: %s: the engines disagree or stalled\n", name);
		return 1;
	}
	rest = run(fab[0], fin[0], FL_TIME_INF);
	if (rest < 0) {
		fprintf(stderr, "bench_flow: %s: stalled\n", name);
		return 1;
	}
	fl_stats_get(fab[0], &whole);
	report(name, b, st, wall, &whole, wall[0] + rest, fl_now(fab[0]));
	return b->refill_ns ? refill_report(b, name, fab[2], fin[2], fin[0], n, wall[0] + rest) : 0;
}

static int workload(struct bench *b, int alltoall)
{
	struct fl_config cfg[3] = { { .full = false }, { .full = true }, { .refill_ns = b->refill_ns } };
	int n_eng = b->refill_ns ? 3 : 2, bad = 0;
	struct fl_fabric *fab[3] = { NULL, NULL, NULL };
	size_t n = (size_t)b->gpus * b->msgs;
	uint64_t *fin[3] = { NULL, NULL, NULL };
	int rc = 1;

	for (int e = 0; e < n_eng; e++) {
		fab[e] = fl_create(&cfg[e]);
		fin[e] = calloc(n, sizeof(uint64_t));
		bad |= !fab[e] || !fin[e] || build(b, fab[e]);
	}
	if (bad || load(b, fab, n_eng, alltoall))
		fprintf(stderr, "bench_flow: out of memory\n");
	else
		rc = compare(b, alltoall ? "alltoall" : "ring", fab, fin, n);
	for (int e = 0; e < n_eng; e++) {
		fl_destroy(fab[e]);
		free(fin[e]);
	}
	return rc;
}

/* argv[i] as a number in 1 .. max, or 0 */
static uint32_t arg(const char *s, uint32_t max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || end == s || v == 0 || v > max)
		return 0;
	return (uint32_t)v;
}

int main(int argc, char **argv)
{
	struct bench b = { .gpus = 24576, .msgs = 2, .window_ns = 20000 };
	uint32_t us = 20, refill = 0;

	if (argc > 5 || (argc > 1 && !(b.gpus = arg(argv[1], 1u << 20))) ||
	    (argc > 2 && !(b.msgs = arg(argv[2], 64))) || (argc > 3 && !(us = arg(argv[3], 1000000))) ||
	    (argc > 4 && !(refill = arg(argv[4], (uint32_t)FL_REFILL_MAX_NS))) || b.gpus < 2) {
		fprintf(stderr, "usage: bench_flow [GPUS (2 .. 1048576) [MSGS per GPU (1 .. 64)"
			" [WINDOW_US (1 .. 1000000) [REFILL_NS (1 .. 1000000000)]]]]\n");
		return 2;
	}
	b.refill_ns = refill;
	b.window_ns = (uint64_t)us * 1000;
	b.leaves = (b.gpus + PER_LEAF - 1) / PER_LEAF;
	return workload(&b, 0) || workload(&b, 1) ? 1 : 0;
}
