/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topo_part: the default cut (leaves in balanced contiguous groups with their
 * hosts, spines round robin, emulated NICs in partition 0), the topology
 * file's cut, and the checks on both.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo.h"
#include "topo_gen.h"
#include "topo_part.h"

static struct topo *gen(const char *spec)
{
	struct topo_gen_params p;
	char err[256];

	topo_gen_init(&p);
	assert_int_equal(topo_gen_parse(&p, spec, err, sizeof(err)), 0);
	struct topo *t = topo_gen(&p, err, sizeof(err));
	assert_non_null(t);
	return t;
}

/* 8 leaves x 4 spines x 2 hosts into 4: leaves 0-1, 2-3, 4-5, 6-7; spine i in i mod 4; hosts with their leaf. */
static void test_default_cut(void **state)
{
	(void)state;
	struct topo *t = gen("spines=4,leaves=8,hosts=2");
	uint32_t sw[64], ho[64], leaves_in[4] = {0}, spines_in[4] = {0};
	char err[256];

	assert_int_equal(topo_partition(t, 4, false, sw, ho, err, sizeof(err)), 0);
	uint32_t leaf = 0, spine = 0;
	for (uint32_t i = 0; i < t->n_switches; i++) {
		if (t->switches[i].role == TOPO_ROLE_RTSW) {
			assert_int_equal(sw[i], leaf++ / 2);
			leaves_in[sw[i]]++;
		} else {
			assert_int_equal(sw[i], spine++ % 4);
			spines_in[sw[i]]++;
		}
	}
	for (int p = 0; p < 4; p++) {
		assert_int_equal(leaves_in[p], 2);
		assert_int_equal(spines_in[p], 1);
	}
	for (uint32_t h = 0; h < t->n_hosts; h++)
		assert_int_equal(ho[h], sw[t->hosts[h].leaf]);
	topo_free(t);
}

/* Emulated NICs: all in partition 0, which holds no switch; the switches share 1..n-1. */
static void test_emulated_cut(void **state)
{
	(void)state;
	struct topo *t = gen("spines=2,leaves=4,hosts=4,attach=emulated");
	uint32_t sw[16], ho[32];
	char err[256];

	assert_int_equal(topo_partition(t, 3, false, sw, ho, err, sizeof(err)), 0);
	for (uint32_t h = 0; h < t->n_hosts; h++)
		assert_int_equal(ho[h], 0);
	for (uint32_t i = 0; i < t->n_switches; i++)
		assert_true(sw[i] == 1 || sw[i] == 2);
	/* one partition: everything in 0 */
	assert_int_equal(topo_partition(t, 1, false, sw, ho, err, sizeof(err)), 0);
	for (uint32_t i = 0; i < t->n_switches; i++)
		assert_int_equal(sw[i], 0);
	/* NICs with their leaf (a collective split into lanes): the default cut
	 * of switches, every partition holding leaves, each NIC with its leaf */
	uint32_t leaves_in[2] = {0};
	assert_int_equal(topo_partition(t, 2, true, sw, ho, err, sizeof(err)), 0);
	for (uint32_t i = 0; i < t->n_switches; i++)
		if (t->switches[i].role == TOPO_ROLE_RTSW)
			leaves_in[sw[i]]++;
	assert_int_equal(leaves_in[0], 2);
	assert_int_equal(leaves_in[1], 2);
	for (uint32_t h = 0; h < t->n_hosts; h++)
		assert_int_equal(ho[h], sw[t->hosts[h].leaf]);
	topo_free(t);
}

static const char *const file_cut =
	"name: cut\n"
	"switches:\n"
	"  - {name: leaf0, role: rtsw, partition: 1}\n"
	"  - {name: leaf1, role: rtsw, partition: 0}\n"
	"  - {name: spine0, role: ctsw, partition: 0}\n"
	"  - {name: spine1, role: ctsw%s}\n"
	"hosts:\n"
	"  - {name: h0, leaf: leaf0}\n"
	"  - {name: h1, leaf: leaf1}\n"
	"links:\n"
	"  - [leaf0, spine0]\n  - [leaf0, spine1]\n  - [leaf1, spine0]\n  - [leaf1, spine1]\n";

static struct topo *load_cut(const char *spine1_extra)
{
	char yaml[1024], err[256];
	struct topo *t = NULL;
	int n = snprintf(yaml, sizeof(yaml), file_cut, spine1_extra);

	assert_int_equal(topo_load_string(yaml, (size_t)n, "cut.yaml", &t, err, sizeof(err)), 0);
	return t;
}

/* The file's cut is taken as it is; hosts follow their leaf. */
static void test_file_cut(void **state)
{
	(void)state;
	struct topo *t = load_cut(", partition: 1");
	uint32_t sw[4], ho[2];
	char err[256];

	assert_int_equal(topo_partition(t, 2, false, sw, ho, err, sizeof(err)), 0);
	uint32_t want[] = {1, 0, 0, 1};
	for (int i = 0; i < 4; i++)
		assert_int_equal(sw[i], want[i]);
	assert_int_equal(ho[0], 1);
	assert_int_equal(ho[1], 0);
	topo_free(t);
}

/* Bad cuts: -EINVAL and a message naming the file, line and switch. */
static void test_bad_cuts(void **state)
{
	(void)state;
	uint32_t sw[4], ho[2];
	char err[256];
	struct topo *t = load_cut("");

	assert_int_equal(topo_partition(t, 2, false, sw, ho, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cut.yaml:6: switch 'spine1' has no partition"));
	topo_free(t);
	t = load_cut(", partition: 2");
	assert_int_equal(topo_partition(t, 2, false, sw, ho, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "switch 'spine1' is in partition 2, but there are 2"));
	assert_int_equal(topo_partition(t, 4, false, sw, ho, err, sizeof(err)), -EINVAL); /* none in 3 */
	assert_non_null(strstr(err, "no switch is in partition 3 of 4"));
	assert_int_equal(topo_partition(t, 0, false, sw, ho, err, sizeof(err)), -EINVAL);
	assert_int_equal(topo_partition(t, 5, false, sw, ho, err, sizeof(err)), -EINVAL); /* 4 switches */
	assert_non_null(strstr(err, "want 1..4"));
	topo_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_cut),
		cmocka_unit_test(test_emulated_cut),
		cmocka_unit_test(test_file_cut),
		cmocka_unit_test(test_bad_cuts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
