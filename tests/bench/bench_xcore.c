/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_xcore: how long one cache line takes to go from one core to another
 * and back, on this machine, now.
 *
 * Why: a frame that crosses partitions on threads (rocelab-dp --workers N)
 * moves its lines to the other core, and on the shared VMs these figures
 * come from that cost is not a constant of the design: the same two vCPUs
 * measured 93 ns a round trip in one minute and 508 ns in the next (the
 * host moves them between cores and sockets). The partition benchmarks
 * print this figure beside their speed-ups, so that a speed-up is read
 * with the machine it was measured on.
 *
 * Two threads, each pinned to one of the first two CPUs the process may
 * use, pass a counter back and forth through one line (a release store,
 * the other side spinning on an acquire load). A sample is the mean round
 * trip over --trips passes; the figure is the median of --samples samples,
 * with their minimum and maximum.
 *
 * The two CPUs are the first two the process may use: on a machine with
 * SMT they may be two threads of one core (lscpu says; on the VMs here there
 * is one thread per core). While a third process runs on one of them a round
 * trip includes its time slices: that is the figure a partition pays then.
 *
 * usage: bench_xcore [--samples K] [--trips N]
 * Prints "cross-core round trip: median M ns (min A, max B, K samples of N
 * trips, CPUs X and Y)"; the median of an even number of samples is the
 * upper of the middle two.
 * Exit 0; 1 when fewer than two CPUs are allowed or a thread cannot start;
 * 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SAMPLES 100

/* The line the two threads pass between them, alone on its line. */
static struct {
	_Alignas(64) _Atomic unsigned long v;
	char pad[64 - sizeof(unsigned long)];
} token;
static unsigned long trips;

/* A spinning wait's step: tell the core (its sibling thread, if any, gets the pipeline). */
static inline void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* The peer: answer each odd value with the next even one, samples x trips times. */
static void *peer(void *arg)
{
	unsigned long total = *(const unsigned long *)arg;

	for (unsigned long i = 1; i <= total; i++) {
		while (atomic_load_explicit(&token.v, memory_order_acquire) != 2 * i - 1)
			spin_pause();
		atomic_store_explicit(&token.v, 2 * i, memory_order_release);
	}
	return NULL;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A whole number in [lo, hi] from s, or 0 when s is not one. */
static unsigned long parse_count(const char *s, unsigned long lo, unsigned long hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi)
		return 0;
	return v;
}

static int usage(FILE *f, int rc)
{
	fprintf(f, "usage: bench_xcore [--samples K] [--trips N]\n"
		   "  --samples K  samples, 1..%d (default 5)\n"
		   "  --trips N    round trips per sample, 1000..100000000 (default 1000000)\n"
		   "Prints the round trip of one cache line between the first two CPUs this\n"
		   "process may use: median, min and max over the samples.\n",
		MAX_SAMPLES);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned long samples = 5;
	double ns[MAX_SAMPLES];
	cpu_set_t allowed;
	int cpus[2], n = 0;
	pthread_t t;

	trips = 1000000;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return usage(stdout, 0);
		if (i + 1 < argc && !strcmp(argv[i], "--samples"))
			samples = parse_count(argv[++i], 1, MAX_SAMPLES);
		else if (i + 1 < argc && !strcmp(argv[i], "--trips"))
			trips = parse_count(argv[++i], 1000, 100000000);
		else {
			fprintf(stderr, "bench_xcore: unknown or incomplete argument '%s'\n", argv[i]);
			return usage(stderr, 2);
		}
		if (!samples || !trips) {
			fprintf(stderr, "bench_xcore: bad %s '%s'\n", argv[i - 1], argv[i]);
			return usage(stderr, 2);
		}
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
		perror("bench_xcore: sched_getaffinity");
		return 1;
	}
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[n++] = c;
	if (n < 2) {
		fprintf(stderr, "bench_xcore: needs two CPUs, this process may use %d\n", n);
		return 1;
	}
	/* each thread on its own CPU from its start (the peer through its attributes) */
	unsigned long total = samples * trips;
	cpu_set_t one, other;
	pthread_attr_t attr;
	CPU_ZERO(&one);
	CPU_SET(cpus[0], &one);
	CPU_ZERO(&other);
	CPU_SET(cpus[1], &other);
	int rc = pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	if (rc == 0)
		rc = pthread_attr_init(&attr);
	if (rc == 0) {
		rc = pthread_attr_setaffinity_np(&attr, sizeof(other), &other);
		if (rc == 0)
			rc = pthread_create(&t, &attr, peer, &total);
		pthread_attr_destroy(&attr);
	}
	if (rc != 0) {
		fprintf(stderr, "bench_xcore: cannot start the two threads on CPUs %d and %d\n", cpus[0],
			cpus[1]);
		return 1;
	}
	unsigned long v = 0;
	for (unsigned long s = 0; s < samples; s++) {
		double t0 = now_ns();

		for (unsigned long i = 0; i < trips; i++) {
			v++;
			atomic_store_explicit(&token.v, 2 * v - 1, memory_order_release);
			while (atomic_load_explicit(&token.v, memory_order_acquire) != 2 * v)
				spin_pause();
		}
		ns[s] = (now_ns() - t0) / (double)trips;
	}
	pthread_join(t, NULL);
	qsort(ns, samples, sizeof(ns[0]), cmp_double);
	printf("cross-core round trip: median %.0f ns (min %.0f, max %.0f, %lu samples of %lu trips, CPUs %d and %d)\n",
	       ns[samples / 2], ns[0], ns[samples - 1], samples, trips, cpus[0], cpus[1]);
	return 0;
}
