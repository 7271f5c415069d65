/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_jobs and wl_sched: job files written here, placed on a generated
 * topology of 2 AI zones x 3 racks x 2 servers of 2 GPUs
 * (`rocelab-topo --generate zones=2,atsw=1,spines=1,servers=6,gpus=2`):
 *   zone 0: rack z0-leaf0 {z0-s0, z0-s1}, z0-leaf1 {z0-s2, z0-s3}, z0-leaf2 {z0-s4, z0-s5}
 *   zone 1: rack z1-leaf0 {z1-s0, z1-s1}, z1-leaf1 {z1-s2, z1-s3}, z1-leaf2 {z1-s4, z1-s5}
 * Each policy's placement is worked out by hand in its test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo.h"
#include "topo_gen.h"
#include "wl_jobs.h"
#include "wl_sched.h"

/* A (1 server), then B (3 servers), then C (2 servers), listed out of order. */
static const char three_jobs[] =
	"jobs:\n"
	"  - {name: C, workload: astra:c.txt, gpus: 4, arrival: 2ms}\n"
	"  - {name: A, workload: llm:llama3-8b, gpus: 2}\n"
	"  - {name: B, workload: 'coll:op=allreduce,size=1M', gpus: 6, arrival: 1ms}\n";

struct fixture {
	struct topo *t;
	struct wl_cluster c;
	struct wl_jobs js;
	struct wl_schedule s;
};

static struct topo *gen(const char *spec)
{
	struct topo_gen_params p;
	char err[512];
	struct topo *t;

	topo_gen_init(&p);
	if (topo_gen_parse(&p, spec, err, sizeof(err)))
		fail_msg("%s", err);
	t = topo_gen(&p, err, sizeof(err));
	if (!t)
		fail_msg("%s", err);
	return t;
}

static void jobs_ok(struct wl_jobs *js, const char *text)
{
	struct wl_err err = { "" };

	if (wl_jobs_parse(text, strlen(text), "j.yaml", js, &err))
		fail_msg("refused: %s", err.msg);
}

/* Load text, place it by policy (seed 7); returns wl_sched_place()'s result. */
static int place(struct fixture *f, const char *text, int policy)
{
	struct wl_err err = { "" };

	f->t = gen("zones=2,atsw=1,spines=1,servers=6,gpus=2");
	assert_int_equal(wl_cluster_init(&f->c, f->t, &err), 0);
	jobs_ok(&f->js, text);
	return wl_sched_place(&f->c, &f->js, policy, 7, &f->s, &err);
}

static void done(struct fixture *f)
{
	wl_schedule_free(&f->s);
	wl_cluster_free(&f->c);
	wl_jobs_free(&f->js);
	topo_free(f->t);
}

/* Job i of the schedule is `name` on exactly these servers, in this order ("a b c"). */
static void expect(const struct fixture *f, uint32_t i, const char *name, const char *servers)
{
	char got[256] = "";
	const struct wl_place *p = &f->s.places[i];

	assert_string_equal(p->job->name, name);
	assert_true(p->placed);
	for (uint32_t k = 0; k < p->n; k++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", k ? " " : "",
			 f->c.servers[p->servers[k]].name);
	assert_string_equal(got, servers);
}

static void test_cluster(void **state)
{
	struct fixture f = {0};
	(void)state;

	assert_int_equal(place(&f, three_jobs, WL_POLICY_PACKED), 0);
	assert_int_equal(f.c.n_servers, 12);
	assert_int_equal(f.c.gpus_per_server, 2);
	assert_int_equal(f.c.n_racks, 6);
	assert_int_equal(f.c.n_zones, 2);
	assert_string_equal(f.c.racks[4].name, "z1-leaf1");
	assert_int_equal(f.c.racks[4].zone, 1);
	assert_int_equal(f.c.servers[9].rack, 4); /* z1-s3 */
	done(&f);
}

/*
 * packed: A takes z0-leaf0 (all racks tie at 2 free: the first); B needs 3:
 * zone 0's freest racks are z0-leaf1 and z0-leaf2 (2 each), zone 1 also needs
 * 2 racks, the first zone wins; C needs 2: zone 0 has 1+1 free in two racks,
 * zone 1 a whole rack, so z1-leaf0.
 */
static void test_packed(void **state)
{
	struct fixture f = {0};
	char hosts[128];
	(void)state;

	assert_int_equal(place(&f, three_jobs, WL_POLICY_PACKED), 0);
	expect(&f, 0, "A", "z0-s0");
	expect(&f, 1, "B", "z0-s2 z0-s3 z0-s4");
	expect(&f, 2, "C", "z1-s0 z1-s1");
	/* B's ring: s2 -> s3 (one rack), s3 -> s4 and s4 -> s2 leave it */
	assert_int_equal(f.s.places[1].racks, 2);
	assert_int_equal(f.s.places[1].rack_hops, 2);
	assert_int_equal(f.s.places[1].zone_hops, 0);
	assert_int_equal(wl_place_hosts(&f.c, &f.s.places[2], hosts, sizeof(hosts)),
			 strlen("z1-s0-g0,z1-s0-g1,z1-s1-g0,z1-s1-g1"));
	assert_string_equal(hosts, "z1-s0-g0,z1-s0-g1,z1-s1-g0,z1-s1-g1");
	done(&f);
}

/* spread: one server of each rack in turn from z0-leaf0, the lowest free in each. */
static void test_spread(void **state)
{
	struct fixture f = {0};
	(void)state;

	assert_int_equal(place(&f, three_jobs, WL_POLICY_SPREAD), 0);
	expect(&f, 0, "A", "z0-s0");
	expect(&f, 1, "B", "z0-s1 z0-s2 z0-s4");
	expect(&f, 2, "C", "z0-s3 z0-s5"); /* z0-leaf0 is full: from z0-leaf1 */
	assert_int_equal(f.s.places[1].rack_hops, 3);
	done(&f);
}

/*
 * topology-aware: the zone that holds the job with the least room left
 * (zone 0 each time: 6, then 5, then 2 free, against 6), racks in order.
 */
static void test_topo_aware(void **state)
{
	struct fixture f = {0};
	(void)state;

	assert_int_equal(place(&f, three_jobs, -1), 0); /* the default policy */
	assert_int_equal(f.s.places[0].policy, WL_POLICY_TOPO_AWARE);
	expect(&f, 0, "A", "z0-s0");
	expect(&f, 1, "B", "z0-s1 z0-s2 z0-s3");
	expect(&f, 2, "C", "z0-s4 z0-s5");
	done(&f);
}

/* A job no zone holds: the freest zone whole (the first of two ties), then the next. */
static void test_topo_aware_spans(void **state)
{
	struct fixture f = {0};
	(void)state;

	assert_int_equal(place(&f, "jobs: [{name: big, workload: llm:x, gpus: 14}]\n",
			       WL_POLICY_TOPO_AWARE), 0);
	expect(&f, 0, "big", "z0-s0 z0-s1 z0-s2 z0-s3 z0-s4 z0-s5 z1-s0");
	assert_int_equal(f.s.places[0].zones, 2);
	assert_int_equal(f.s.places[0].zone_hops, 2); /* z0-s5 -> z1-s0 and back */
	assert_int_equal(f.s.places[0].rack_hops, 4);
	done(&f);
}

/* splitmix64 from 0: the reference's first outputs (Vigna's splitmix64.c). */
static void test_rand_reference(void **state)
{
	uint64_t st = 0;
	(void)state;

	assert_true(wl_sched_rand(&st) == 0xe220a8397b1dcdafull);
	assert_true(wl_sched_rand(&st) == 0x6e789e6aa1b965f4ull);
	assert_true(wl_sched_rand(&st) == 0x06c45d188009454full);
	assert_true(wl_sched_rand(&st) == 0xf88bb8a8724c81ecull);
}

/*
 * random, seed 7: draws r from splitmix64, index i + (r * span) >> 64 into the
 * free servers (ascending; server k is z0-sk for k < 6, z1-s(k-6) after):
 *   A: r = 0x63cbe1e459320dd7, span 12 -> 4: z0-s4
 *   B: free 0 1 2 3 5 6 .. 11: 0x044c3cd7f43c661c, span 11 -> 0: z0-s0;
 *      0xe6984080bab12a02, span 10 -> 1 + 9 = 10: 11 (z1-s5), swapped with 1;
 *      0x953aeb70673e29cb, span 9 -> 2 + 5 = 7: 8 (z1-s2)
 *   C: free 1 2 3 5 7 9 10 ... -> 0x73d33b666a1e21da, span 8 -> 3: 5 (z0-s5);
 *      0x3fdabe86cbbeaa11, span 7 -> 1 + 1 = 2: 3 (z0-s3)
 */
static void test_random(void **state)
{
	struct fixture f = {0};
	(void)state;

	assert_int_equal(place(&f, three_jobs, WL_POLICY_RANDOM), 0);
	expect(&f, 0, "A", "z0-s4");
	expect(&f, 1, "B", "z0-s0 z1-s5 z1-s2");
	expect(&f, 2, "C", "z0-s5 z0-s3");
	assert_int_equal(f.s.places[1].zone_hops, 2);
	done(&f);
}

/* A job's own policy wins over the command line's. */
static void test_job_policy(void **state)
{
	struct fixture f = {0};
	(void)state;

	assert_int_equal(place(&f,
			       "jobs:\n"
			       "  - {name: a, workload: llm:x, gpus: 2}\n"
			       "  - {name: b, workload: llm:x, gpus: 4, policy: spread}\n",
			       WL_POLICY_PACKED), 0);
	assert_int_equal(f.s.places[1].policy, WL_POLICY_SPREAD);
	expect(&f, 1, "b", "z0-s1 z0-s2");
	done(&f);
}

/* Refused, never dropped: the job, its GPUs and the free GPUs; the next job still placed. */
static void test_refused(void **state)
{
	struct fixture f = {0};
	(void)state;

	assert_int_equal(place(&f,
			       "jobs:\n"
			       "  - {name: a, workload: llm:x, gpus: 20}\n"
			       "  - {name: b, workload: llm:x, gpus: 6}\n"
			       "  - {name: odd, workload: llm:x, gpus: 3}\n"
			       "  - {name: c, workload: llm:x, gpus: 4}\n",
			       WL_POLICY_TOPO_AWARE), 1);
	assert_int_equal(f.s.refused, 2);
	assert_string_equal(f.s.places[1].msg,
			    "j.yaml:3: job b does not fit: it needs 6 GPUs, 4 are free");
	assert_false(f.s.places[1].placed);
	assert_string_equal(f.s.places[2].msg,
			    "j.yaml:4: job odd: gpus: 3 is not a multiple of a server's 2 GPUs");
	expect(&f, 3, "c", "z1-s4 z1-s5"); /* after a took zone 0 and 4 of zone 1 */
	done(&f);
}

/* packed keeps a job inside one zone: 14 GPUs fit the cluster but no zone. */
static void test_packed_one_zone(void **state)
{
	struct fixture f = {0};
	(void)state;

	assert_int_equal(place(&f, "jobs: [{name: big, workload: llm:x, gpus: 14}]\n",
			       WL_POLICY_PACKED), 1);
	assert_string_equal(f.s.places[0].msg,
			    "j.yaml:1: job big does not fit in one zone (packed): it needs 14 GPUs, "
			    "12 are free in the freest zone (24 in all)");
	done(&f);
}

/*
 * No server given twice, whatever the policy and seed: 300 seeds, each with
 * 10 jobs of 1..4 servers and policies drawn from the seed; every server a
 * placed job lists is owned by it alone, and it has the servers it needs.
 */
static void test_never_twice(void **state)
{
	struct topo *t = gen("zones=2,atsw=1,spines=1,servers=6,gpus=2");
	struct wl_cluster c;
	struct wl_err err;
	(void)state;

	assert_int_equal(wl_cluster_init(&c, t, &err), 0);
	for (uint64_t seed = 1; seed <= 300; seed++) {
		char text[2048] = "jobs:\n";
		uint64_t st = seed * 1000003;
		for (int j = 0; j < 10; j++)
			snprintf(text + strlen(text), sizeof(text) - strlen(text),
				 "  - {name: j%d, workload: llm:x, gpus: %u, policy: %s}\n", j,
				 (unsigned)(2 + 2 * (wl_sched_rand(&st) % 4)),
				 wl_policy_name((enum wl_policy)(wl_sched_rand(&st) % WL_POLICY_COUNT)));
		struct wl_jobs js;
		struct wl_schedule s;
		jobs_ok(&js, text);
		assert_true(wl_sched_place(&c, &js, -1, seed, &s, &err) >= 0);
		uint32_t given = 0, owned = 0;
		for (uint32_t i = 0; i < s.n; i++) {
			if (!s.places[i].placed)
				continue;
			assert_int_equal(s.places[i].n, s.places[i].job->gpus / 2);
			for (uint32_t k = 0; k < s.places[i].n; k++)
				assert_int_equal(s.owner[s.places[i].servers[k]], i);
			given += s.places[i].n;
		}
		for (uint32_t v = 0; v < c.n_servers; v++)
			owned += s.owner[v] != UINT32_MAX;
		assert_int_equal(given, owned); /* with the check above: no server twice */
		wl_schedule_free(&s);
		wl_jobs_free(&js);
	}
	wl_cluster_free(&c);
	topo_free(t);
}

/* A topology without servers: each host is a server of 1 GPU. */
static void test_plain_hosts(void **state)
{
	struct fixture f = {0};
	struct wl_err err;
	(void)state;

	f.t = gen("spines=2,leaves=2,hosts=3");
	assert_int_equal(wl_cluster_init(&f.c, f.t, &err), 0);
	assert_int_equal(f.c.gpus_per_server, 1);
	assert_int_equal(f.c.n_racks, 2);
	assert_int_equal(f.c.n_zones, 1);
	jobs_ok(&f.js, "jobs: [{name: a, workload: llm:x, gpus: 2}, "
		       "{name: b, workload: llm:x, gpus: 3}]\n");
	assert_int_equal(wl_sched_place(&f.c, &f.js, WL_POLICY_PACKED, 1, &f.s, &err), 0);
	expect(&f, 0, "a", "h0 h1");
	expect(&f, 1, "b", "h3 h4 h5"); /* leaf1's 3 free before leaf0's 1 */
	done(&f);
}

static void test_jobs_fields(void **state)
{
	struct wl_jobs js;
	(void)state;

	jobs_ok(&js, "policy: random\nseed: 42\njobs:\n"
		     "  - name: a\n    workload: chakra:/tmp/t\n    gpus: 16\n"
		     "    arrival: 1.5s\n    policy: packed\n");
	assert_int_equal(js.n, 1);
	assert_int_equal(js.policy, WL_POLICY_RANDOM);
	assert_true(js.has_seed && js.seed == 42);
	assert_string_equal(js.jobs[0].workload, "chakra:/tmp/t");
	assert_int_equal(js.jobs[0].gpus, 16);
	assert_true(js.jobs[0].arrival_ns == 1500000000ull);
	assert_int_equal(js.jobs[0].policy, WL_POLICY_PACKED);
	assert_int_equal(js.jobs[0].line, 4);
	wl_jobs_free(&js);
}

static void expect_bad(const char *text, const char *msg)
{
	struct wl_jobs js;
	struct wl_err err = { "" };

	assert_int_equal(wl_jobs_parse(text, strlen(text), "j.yaml", &js, &err), -1);
	assert_string_equal(err.msg, msg);
	assert_null(js.jobs);
}

static void test_jobs_bad(void **state)
{
	(void)state;
	expect_bad("jobs:\n  - name: a\n    workload: llm:x\n    gpu: 8\n",
		   "j.yaml:4: unknown job key 'gpu' (did you mean gpus?; expected: name, "
		   "workload, gpus, arrival, policy)");
	expect_bad("jobs:\n  - {name: a, workload: llm:x, gpus: -8}\n",
		   "j.yaml:2: gpus: -8 is negative (takes 1..4294967295)");
	expect_bad("jobs:\n  - {name: a, workload: llm:x, gpus: 0}\n",
		   "j.yaml:2: gpus: 0: a job needs 1 GPU or more");
	expect_bad("jobs:\n  - {name: a, workload: llm:x, gpus: 8}\n"
		   "  - {name: a, workload: llm:y, gpus: 8}\n",
		   "j.yaml:3: job a: duplicate name (first on line 2)");
	expect_bad("jobs:\n  - {name: a, workload: chakar:p, gpus: 8}\n",
		   "j.yaml:2: unknown workload kind 'chakar' (did you mean chakra?; expected: "
		   "chakra, astra, llm, coll)");
	expect_bad("jobs:\n  - {name: a, workload: llm:x, gpus: 8, policy: packd}\n",
		   "j.yaml:2: unknown policy 'packd' (did you mean packed?; expected: packed, "
		   "spread, random, topology-aware)");
	expect_bad("jobs:\n  - {name: a, workload: llm:x}\n", "j.yaml:2: job a: missing key 'gpus'");
	expect_bad("jobz: []\n", "j.yaml:1: unknown key 'jobz' (did you mean jobs?; expected: "
				 "jobs, policy, seed)");
	expect_bad("jobs:\n  - {name: a, workload: llm:x, gpus: 8, arrival: soon}\n",
		   "j.yaml:2: arrival: bad time 'soon' (e.g. 0, 250us, 10ms, 1.5s; at most a day)");
	expect_bad("policy: packed\n", "j.yaml:1: no jobs: the file needs a `jobs:` list");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cluster),
		cmocka_unit_test(test_packed),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_topo_aware),
		cmocka_unit_test(test_topo_aware_spans),
		cmocka_unit_test(test_rand_reference),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_job_policy),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_packed_one_zone),
		cmocka_unit_test(test_never_twice),
		cmocka_unit_test(test_plain_hosts),
		cmocka_unit_test(test_jobs_fields),
		cmocka_unit_test(test_jobs_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
