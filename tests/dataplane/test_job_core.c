/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_job_core: job graphs built by hand, walked with a stand-in driver whose
 * collectives take a fixed time each (no fabric): dependencies, the
 * rendezvous of a communicator, overlap on disjoint ranks, serialisation on
 * a shared NIC, Send/Recv matching, the compute-only critical path, and the
 * refusals with the node named. Every expected time is worked out by hand
 * in the test's comment.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dp_job.h"

#define US 1000ull

/* The stand-in driver: events (time, node or instance) run in time order. */
struct ev {
	uint64_t at;
	uint32_t what;
	bool inst;
};
struct fake {
	struct ev ev[256];
	uint32_t n;
	uint64_t inst_ns[16]; /* how long each instance takes */
};

static int fake_compute(void *ctx, uint32_t n, uint64_t end_ns)
{
	struct fake *f = ctx;

	f->ev[f->n++] = (struct ev){end_ns, n, false};
	return 0;
}

static int fake_start(void *ctx, uint32_t i, uint64_t now)
{
	struct fake *f = ctx;

	f->ev[f->n++] = (struct ev){now + f->inst_ns[i], i, true};
	return 0;
}

/* Run one iteration from 0; returns its length. */
static uint64_t run(struct dp_job_core *c, struct fake *f)
{
	c->drv = (struct dp_job_driver){fake_compute, fake_start, f};
	assert_int_equal(dp_job_core_begin(c, 0), 0);
	while (f->n) {
		uint32_t m = 0;
		for (uint32_t k = 1; k < f->n; k++)
			if (f->ev[k].at < f->ev[m].at)
				m = k;
		struct ev e = f->ev[m];
		f->ev[m] = f->ev[--f->n];
		int rc = e.inst ? dp_job_core_inst_end(c, e.what, e.at) : dp_job_core_compute_end(c, e.what, e.at);
		assert_int_equal(rc, 0);
	}
	assert_true(dp_job_core_done(c));
	return c->iter_end_ns - c->iter_start_ns;
}

static void add_compute(struct wl_graph *g, uint32_t r, uint64_t id, uint64_t ns, int64_t dep)
{
	struct wl_dep d = {(uint64_t)dep, false};
	struct wl_node n = {.id = id, .kind = WL_COMPUTE, .duration_ns = ns, .deps = dep >= 0 ? &d : NULL,
			    .ndeps = dep >= 0};

	assert_int_equal(wl_graph_add(g, r, &n, NULL), 0);
}

static void add_coll(struct wl_graph *g, uint32_t r, uint64_t id, enum wl_coll op, uint64_t bytes,
		     const uint32_t *ranks, uint32_t nranks, int64_t dep)
{
	struct wl_dep d = {(uint64_t)dep, false};
	struct wl_node n = {.id = id, .kind = WL_COLL, .op = op, .bytes = bytes, .ranks = (uint32_t *)ranks,
			    .nranks = nranks, .deps = dep >= 0 ? &d : NULL, .ndeps = dep >= 0};

	assert_int_equal(wl_graph_add(g, r, &n, NULL), 0);
}

static void add_p2p(struct wl_graph *g, uint32_t r, uint64_t id, enum wl_kind kind, uint32_t peer,
		    uint64_t bytes, int64_t dep)
{
	struct wl_dep d = {(uint64_t)dep, false};
	struct wl_node n = {.id = id, .kind = kind, .peer = peer, .bytes = bytes,
			    .deps = dep >= 0 ? &d : NULL, .ndeps = dep >= 0};

	assert_int_equal(wl_graph_add(g, r, &n, NULL), 0);
}

static void init(struct dp_job_core *c, struct wl_graph *g)
{
	char err[512];
	struct wl_err we;

	assert_int_equal(wl_graph_check(g, &we), 0);
	int rc = dp_job_core_init(c, g, "job", err, sizeof(err));
	if (rc)
		fail_msg("%s", err);
}

/* compute 100 us, AllReduce (taking 37 us), compute 100 us on 2 ranks:
 * exactly 100 + 37 + 100 = 237 us; compute alone 200 us. */
static void test_compute_coll_compute(void **state)
{
	static const uint32_t both[] = {0, 1};
	struct wl_graph g;
	struct dp_job_core c;
	struct fake f = {.inst_ns = {37 * US}};
	uint64_t alone = 0;
	char err[256];

	(void)state;
	assert_int_equal(wl_graph_init(&g, 2, NULL), 0);
	for (uint32_t r = 0; r < 2; r++) {
		add_compute(&g, r, 1, 100 * US, -1);
		add_coll(&g, r, 2, WL_ALLREDUCE, 1 << 20, both, 2, 1);
		add_compute(&g, r, 3, 100 * US, 2);
	}
	init(&c, &g);
	assert_int_equal(c.ninst, 1);
	assert_int_equal(run(&c, &f), 237 * US);
	assert_int_equal(c.inst[0].start_ns, 100 * US);
	assert_int_equal(dp_job_core_compute_only(&c, "job", &alone, err, sizeof(err)), 0);
	assert_int_equal(alone, 200 * US);
	dp_job_core_free(&c);
	wl_graph_free(&g);
}

/* A collective waits for its last member: rank 0 computes 10 us, rank 1
 * 30 us; the AllReduce (5 us) starts at 30 us, the iteration is 35 us. */
static void test_rendezvous(void **state)
{
	static const uint32_t both[] = {0, 1};
	struct wl_graph g;
	struct dp_job_core c;
	struct fake f = {.inst_ns = {5 * US}};

	(void)state;
	assert_int_equal(wl_graph_init(&g, 2, NULL), 0);
	add_compute(&g, 0, 1, 10 * US, -1);
	add_compute(&g, 1, 1, 30 * US, -1);
	for (uint32_t r = 0; r < 2; r++)
		add_coll(&g, r, 2, WL_ALLREDUCE, 4096, both, 2, 1);
	init(&c, &g);
	assert_int_equal(run(&c, &f), 35 * US);
	assert_int_equal(c.inst[0].start_ns, 30 * US);
	dp_job_core_free(&c);
	wl_graph_free(&g);
}

/* Two independent collectives on disjoint ranks overlap: both start at 0,
 * the iteration is the longer (40 us), not the sum (60 us). Over a shared
 * rank they are serialised: {0,1} then {1,2}, 20 + 40 = 60 us. */
static void test_overlap_and_serialise(void **state)
{
	static const uint32_t a[] = {0, 1}, b[] = {2, 3}, b2[] = {1, 2};
	struct wl_graph g;
	struct dp_job_core c;
	struct fake f = {0};

	(void)state;
	assert_int_equal(wl_graph_init(&g, 4, NULL), 0);
	for (uint32_t r = 0; r < 4; r++)
		add_coll(&g, r, 1, WL_ALLREDUCE, 4096, r < 2 ? a : b, 2, -1);
	init(&c, &g);
	f.inst_ns[c.inst[0].rank[0] == 0 ? 0 : 1] = 20 * US;
	f.inst_ns[c.inst[0].rank[0] == 0 ? 1 : 0] = 40 * US;
	assert_int_equal(run(&c, &f), 40 * US);
	assert_int_equal(c.inst[0].start_ns, 0);
	assert_int_equal(c.inst[1].start_ns, 0);
	dp_job_core_free(&c);
	wl_graph_free(&g);

	assert_int_equal(wl_graph_init(&g, 3, NULL), 0);
	add_coll(&g, 0, 1, WL_ALLREDUCE, 4096, a, 2, -1);
	add_coll(&g, 1, 1, WL_ALLREDUCE, 4096, a, 2, -1);
	add_coll(&g, 1, 2, WL_ALLGATHER, 4096, b2, 2, -1);
	add_coll(&g, 2, 2, WL_ALLGATHER, 4096, b2, 2, -1);
	init(&c, &g);
	for (uint32_t i = 0; i < 2; i++)
		f.inst_ns[i] = c.inst[i].rank[0] == 0 ? 20 * US : 40 * US;
	assert_int_equal(run(&c, &f), 60 * US);
	dp_job_core_free(&c);
	wl_graph_free(&g);
}

/* Send/Recv: the k-th send from 0 to 1 meets the k-th receive; members
 * [sender, receiver], an incast. Sender computes 10 us, receiver 3 us, the
 * transfer takes 7 us: 17 us. */
static void test_send_recv(void **state)
{
	struct wl_graph g;
	struct dp_job_core c;
	struct fake f = {.inst_ns = {7 * US}};

	(void)state;
	assert_int_equal(wl_graph_init(&g, 2, NULL), 0);
	add_compute(&g, 1, 1, 3 * US, -1);
	add_p2p(&g, 1, 2, WL_RECV, 0, 4096, 1);
	add_compute(&g, 0, 1, 10 * US, -1);
	add_p2p(&g, 0, 2, WL_SEND, 1, 4096, 1);
	init(&c, &g);
	assert_int_equal(c.ninst, 1);
	assert_true(c.inst[0].p2p);
	assert_int_equal(c.inst[0].op, NE_COLL_INCAST);
	assert_int_equal(c.inst[0].rank[0], 0);
	assert_int_equal(c.inst[0].rank[1], 1);
	assert_int_equal(run(&c, &f), 17 * US);
	dp_job_core_free(&c);
	wl_graph_free(&g);
}

/* Refusals name the node: an op ne_coll has not, a Send without its Recv,
 * members disagreeing on the size, collectives reached in two orders. */
static void test_refused(void **state)
{
	static const uint32_t both[] = {0, 1}, three[] = {0, 1, 2};
	struct wl_graph g;
	struct dp_job_core c;
	char err[512];
	uint64_t ns;

	(void)state;
	assert_int_equal(wl_graph_init(&g, 2, NULL), 0);
	add_coll(&g, 0, 7, WL_BROADCAST, 4096, both, 2, -1);
	add_coll(&g, 1, 7, WL_BROADCAST, 4096, both, 2, -1);
	assert_int_equal(dp_job_core_init(&c, &g, "bc.txt", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "bc.txt: rank 0: node 7: BROADCAST: ne_coll cannot run it yet"));
	wl_graph_free(&g);

	assert_int_equal(wl_graph_init(&g, 2, NULL), 0);
	add_p2p(&g, 0, 4, WL_SEND, 1, 4096, -1);
	assert_int_equal(dp_job_core_init(&c, &g, "un.txt", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "un.txt: rank 0: node 4: Send to rank 1 (tag 0) has no matching Recv"));
	wl_graph_free(&g);

	assert_int_equal(wl_graph_init(&g, 2, NULL), 0);
	add_coll(&g, 0, 1, WL_ALLREDUCE, 4096, both, 2, -1);
	add_coll(&g, 1, 1, WL_ALLREDUCE, 8192, both, 2, -1);
	assert_int_equal(dp_job_core_init(&c, &g, "sz.txt", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "ALL_REDUCE of 4096 bytes, but its match sz.txt: rank 1: node 1"));
	wl_graph_free(&g);

	/* rank 0: A{0,1} then B{0,1,2}; rank 1: B then A; rank 2: B: neither can start */
	assert_int_equal(wl_graph_init(&g, 3, NULL), 0);
	add_coll(&g, 0, 1, WL_ALLREDUCE, 4096, both, 2, -1);
	add_coll(&g, 0, 2, WL_ALLREDUCE, 4096, three, 3, 1);
	add_coll(&g, 1, 1, WL_ALLREDUCE, 4096, three, 3, -1);
	add_coll(&g, 1, 2, WL_ALLREDUCE, 4096, both, 2, 1);
	add_coll(&g, 2, 1, WL_ALLREDUCE, 4096, three, 3, -1);
	init(&c, &g);
	assert_int_equal(dp_job_core_compute_only(&c, "dl.txt", &ns, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "the job cannot finish"));
	assert_non_null(strstr(err, "dl.txt: rank "));
	dp_job_core_free(&c);
	wl_graph_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compute_coll_compute),
		cmocka_unit_test(test_rendezvous),
		cmocka_unit_test(test_overlap_and_serialise),
		cmocka_unit_test(test_send_recv),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
