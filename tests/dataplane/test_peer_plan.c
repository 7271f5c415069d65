/* SPDX-License-Identifier: BSD-3-Clause */
/* dp_peer_plan: --process/--peer options, the cut and its VLAN ids (no DPDK call). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dp_peer.h"

static void test_parse_process(void **state)
{
	struct dp_peers p;
	static const char *const bad[] = {"2/2", "0/1", "0/17", "1/2x", "a/2", "1", "-1/2", ""};

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(dp_peers_parse_process(&p, "1/2"), 0);
	assert_int_equal(p.self, 1);
	assert_int_equal(p.n, 2);
	assert_true(dp_peers_on(&p));
	assert_int_equal(dp_peers_parse_process(&p, "15/16"), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(dp_peers_parse_process(&p, bad[i]), -EINVAL);
	/* at most one --peer per other process of the largest fabric */
	memset(&p, 0, sizeof(p));
	for (int i = 0; i < DP_PEERS_MAX - 1; i++)
		assert_int_equal(dp_peers_add(&p, "x"), 0);
	assert_int_equal(dp_peers_add(&p, "x"), -E2BIG);
}

/* Plan t for process self of n with the given --peer devargs. */
static int plan(struct dp_peers *p, const struct topo *t, const char *proc, const char **peer,
		int n_peer, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	if (proc)
		assert_int_equal(dp_peers_parse_process(p, proc), 0);
	for (int i = 0; i < n_peer; i++)
		assert_int_equal(dp_peers_add(p, peer[i]), 0);
	return dp_peers_plan(p, t, err, errlen);
}

static void test_options(void **state)
{
	char err[512];
	struct topo *t = topo_clos(2, 2, 2, err, sizeof(err));
	struct dp_peers p;
	const char *peers[] = {"a", "b"};

	(void)state;
	assert_non_null(t);
	/* one process: nothing to do, no hosts elsewhere */
	assert_int_equal(plan(&p, t, NULL, NULL, 0, err, sizeof(err)), 0);
	assert_null(dp_peers_remote_hosts(&p));
	/* --peer without --process, too few and too many --peer */
	assert_int_equal(plan(&p, t, NULL, peers, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--peer needs --process"));
	assert_int_equal(plan(&p, t, "0/2", peers, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "needs 1 --peer"));
	dp_peers_plan_free(&p);
	assert_int_equal(plan(&p, t, "0/2", peers, 2, err, sizeof(err)), -EINVAL);
	/* more processes than switches (a spine and a leaf) */
	struct topo *small = topo_clos(1, 1, 1, err, sizeof(err));
	assert_non_null(small);
	assert_int_equal(plan(&p, small, "0/3", peers, 2, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "each process runs at least one"));
	topo_free(small);
	/* process 1 of 3: the --peer options land in the slots of processes 0 and 2 */
	assert_int_equal(plan(&p, t, "1/3", peers, 2, err, sizeof(err)), 0);
	assert_string_equal(p.peer[0].devargs, "a");
	assert_null(p.peer[1].devargs);
	assert_string_equal(p.peer[2].devargs, "b");
	char *argv[4] = {NULL};
	int argc = 0;
	assert_int_equal(dp_peers_eal_args(&p, argv, &argc, 4), 0);
	assert_int_equal(argc, 2);
	assert_string_equal(argv[0], "--vdev=a");
	assert_string_equal(argv[1], "--vdev=b");
	free(argv[0]);
	free(argv[1]);
	dp_peers_plan_free(&p);
	topo_free(t);
}

/* A 2x2x2 Clos planned for process 1 of 2 with one --peer. */
static struct topo *clos222_process1(struct dp_peers *p, const char *peer)
{
	char err[512];
	struct topo *t = topo_clos(2, 2, 2, err, sizeof(err));

	assert_non_null(t);
	assert_int_equal(plan(p, t, "1/2", &peer, 1, err, sizeof(err)), 0);
	return t;
}

/* The default cut of a 2x2x2 Clos over two processes: each runs one leaf and its hosts. */
static void test_cut(void **state)
{
	struct dp_peers p;
	struct topo *t = clos222_process1(&p, "a");

	(void)state;
	const bool *remote = dp_peers_remote_hosts(&p);
	assert_non_null(remote);
	for (uint32_t h = 0; h < t->n_hosts; h++) {
		uint32_t part = dp_peers_part_of_host(&p, h);
		assert_int_equal(part, h < 2 ? 0 : 1); /* hosts 0, 1 on leaf0; 2, 3 on leaf1 */
		assert_int_equal(remote[h], part != 1);
	}
	/* every channel is cut or not the same way seen from either end */
	uint32_t cut = 0;
	for (uint32_t i = 0; i < 2 * t->n_links; i++) {
		uint32_t from = dp_peers_chan_part(&p, t, i, false), to = dp_peers_chan_part(&p, t, i, true);
		uint32_t back_from = dp_peers_chan_part(&p, t, i ^ 1u, false);
		assert_int_equal(from, dp_peers_chan_part(&p, t, i ^ 1u, true));
		assert_int_equal(to, back_from);
		cut += from != to;
	}
	assert_int_equal(cut, 4); /* leaf0-spine1 and leaf1-spine0, both ways (spines dealt 0, 1) */
	dp_peers_plan_free(&p);
	topo_free(t);
}

/* A cut channel whose index + 1 is above 4094 has no VLAN id: refused with the link named. */
static void test_vid_overflow(void **state)
{
	char err[512];
	const char *peers[] = {"a"};
	struct dp_peers p;
	/* 2,400 host links come first: the leaf-spine links are channels 4,800 and up */
	struct topo *big = topo_clos(2, 10, 240, err, sizeof(err));
	/* 1,000 host links: every channel fits */
	struct topo *fits = topo_clos(2, 10, 100, err, sizeof(err));

	(void)state;
	assert_non_null(big);
	assert_non_null(fits);
	assert_int_equal(plan(&p, big, "0/2", peers, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "would need VLAN id"));
	assert_non_null(strstr(err, "spine"));
	dp_peers_plan_free(&p);
	assert_int_equal(plan(&p, fits, "0/2", peers, 1, err, sizeof(err)), 0);
	dp_peers_plan_free(&p);
	topo_free(big);
	topo_free(fits);
}

/* EAL's ENODEV names the --peer devargs (bad input); other failures are left as they were. */
static void test_eal_failed(void **state)
{
	char err[512];
	struct dp_peers p;
	struct topo *t = clos222_process1(&p, "net_bogus0");

	(void)state;
	snprintf(err, sizeof(err), "EAL said so");
	assert_int_equal(dp_peers_eal_failed(&p, ENODEV, -1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no driver for --peer 'net_bogus0'"));
	snprintf(err, sizeof(err), "EAL said so");
	assert_int_equal(dp_peers_eal_failed(&p, ENOMEM, -EIO, err, sizeof(err)), -EIO);
	assert_string_equal(err, "EAL said so");
	/* a host's devargs already blamed: kept */
	snprintf(err, sizeof(err), "host h0's devargs");
	assert_int_equal(dp_peers_eal_failed(&p, ENODEV, -EINVAL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "host h0's devargs");
	dp_peers_plan_free(&p);
	topo_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_process),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_vid_overflow),
		cmocka_unit_test(test_eal_failed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
