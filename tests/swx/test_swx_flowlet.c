/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * p4/flowlet.spec and p4/letflow.spec on hand-made frames: rocelab's
 * metadata (swx/swx_meta.h) in front of each, with the virtual time and
 * the random number the test chooses. A flow keeps its member while the gaps
 * between its frames are within the flowlet timeout (now - last <= timeout,
 * as hashing/rl_nexthop.c's rl_flowlet_select) and changes only after a
 * longer gap: flowlet.spec to the next member, letflow.spec to rand mod n.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "swx_hash.h"
#include "swx_load.h"
#include "swx_meta.h"
#include "swx_spec.h"
#include "swx_test.h"

#define TIMEOUT_NS 100000u /* 100 us */
#define N_MEMBERS 4
#define PORT0 10 /* member k leaves on port PORT0 + k */
#define SEED 7u
#define DPORT 0x1234 /* UDP, not RoCEv2: the hash is the 5-tuple's */

static struct swx_pipe *build(const char *file)
{
	char err[SWX_ERR_MAX], entry[128];
	struct swx_spec s;
	struct swx_pipe *p = NULL;
	bool meta;

	if (swx_spec_parse_file(file, &s, err, sizeof(err)) != 0 ||
	    swx_meta_check(&s, &meta, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_true(meta);
	int rc = swx_load(&s, 16, &p, err, sizeof(err));

	swx_spec_free(&s);
	if (rc != 0)
		fail_msg("%s", err);
	/* 10.0.1.0/24: group 0 of N_MEMBERS members */
	snprintf(entry, sizeof(entry), "match 0x0a000100/0xffffff00 action route_ecmp group 0 n_members %d",
		 N_MEMBERS);
	if (swx_pipe_entry(p, "route", entry, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	for (int k = 0; k < N_MEMBERS; k++) {
		snprintf(entry, sizeof(entry), "match 0 %d action fwd port_out %d nexthop_mac 0x02000000000%d",
			 k, PORT0 + k, k);
		if (swx_pipe_entry(p, "member", entry, err, sizeof(err)) != 0)
			fail_msg("%s", err);
	}
	return p;
}

/* Sets the route's group size to n (the entry is replaced). */
static void set_members(struct swx_pipe *p, int n)
{
	char err[SWX_ERR_MAX], entry[128];

	snprintf(entry, sizeof(entry), "match 0x0a000100/0xffffff00 action route_ecmp group 0 n_members %d", n);
	if (swx_pipe_entry(p, "route", entry, err, sizeof(err)) != 0)
		fail_msg("%s", err);
}

/* The egress port of a UDP frame 10.0.0.1:sport -> 10.0.1.5:DPORT at now_ns with rand; -1: dropped. */
static int push(struct swx_pipe *p, uint16_t sport, uint64_t now_ns, uint32_t rand)
{
	static struct swx_result r;
	uint8_t f[SWX_META_LEN + 60];
	uint8_t *e = f + SWX_META_LEN;
	const struct swx_meta m = {.now_ns = now_ns, .flowlet_timeout_ns = TIMEOUT_NS, .port_in = 1,
				   .seed = SEED, .n_members = N_MEMBERS, .rand = rand, .algo = 1};
	static const uint8_t head[] = {
		0x02, 0, 0, 0, 0, 0x99,  0x02, 0, 0, 0, 0, 0x01,  0x08, 0x00,
		0x45, 0x00, 0x00, 0x2e, 0x12, 0x34, 0x40, 0x00, 64, 17, 0, 0,
		10, 0, 0, 1,  10, 0, 1, 5,
	};

	swx_meta_put(f, &m);
	memset(e, 0, 60);
	memcpy(e, head, sizeof(head));
	e[34] = (uint8_t)(sport >> 8);
	e[35] = (uint8_t)sport;
	e[36] = DPORT >> 8;
	e[37] = DPORT & 0xff;
	assert_int_equal(swx_pipe_push(p, f, sizeof(f), &r), 0);
	/* the frame leaves without rocelab's metadata */
	assert_true(!r.sent || (r.len == 60 && memcmp(r.frame + 12, e + 12, 10) == 0));
	return r.sent ? (int)r.port : -1;
}

/*
 * ECMP's member of the flow from sport: rl_hash over the key laid out by hand
 * as swx_hash.h says (algorithm 1, seed, source, destination, ports, protocol
 * 17) mod N_MEMBERS.
 */
static int ecmp_member(uint16_t sport)
{
	const uint8_t key[] = {1, 0, 0, 0, SEED, 10, 0, 0, 1, 10, 0, 1, 5,
			       (uint8_t)(sport >> 8), (uint8_t)sport, DPORT >> 8, DPORT & 0xff, 17};

	return (int)(swx_hash_rl(key, sizeof(key), 0) % N_MEMBERS);
}

static void test_flowlet_changes_after_gap(void **state)
{
	struct swx_pipe *p = build(SWX_P4_DIR "/flowlet.spec");
	int m0 = ecmp_member(1000);

	(void)state;
	assert_int_equal(push(p, 1000, 0, 0), PORT0 + m0);      /* first frame: ECMP's member */
	assert_int_equal(push(p, 1000, 50000, 0), PORT0 + m0);  /* gap 50 us: the same */
	assert_int_equal(push(p, 1000, 150000, 0), PORT0 + m0); /* gap 100 us = timeout: the same */
	/* gap 100.001 us: a new flowlet, the next member */
	assert_int_equal(push(p, 1000, 250001, 0), PORT0 + (m0 + 1) % N_MEMBERS);
	assert_int_equal(push(p, 1000, 260000, 0), PORT0 + (m0 + 1) % N_MEMBERS);
	assert_int_equal(push(p, 1000, 400000, 0), PORT0 + (m0 + 2) % N_MEMBERS);
	/* another flow, first seen now, takes its own ECMP member */
	int m1 = ecmp_member(2000);

	assert_int_equal(push(p, 2000, 400000, 0), PORT0 + m1);
	/* a smaller group: a member past it starts a new flowlet with no gap */
	set_members(p, 1);
	assert_int_equal(push(p, 1000, 400001, 0), PORT0);
	swx_pipe_free(p);
}

static void test_letflow_random_member_after_gap(void **state)
{
	struct swx_pipe *p = build(SWX_P4_DIR "/letflow.spec");

	(void)state;
	assert_int_equal(push(p, 1000, 0, 6), PORT0 + 2);       /* 6 mod 4 */
	assert_int_equal(push(p, 1000, 50000, 1), PORT0 + 2);   /* within the timeout: rand unused */
	assert_int_equal(push(p, 1000, 150000, 1), PORT0 + 2);  /* gap = timeout */
	assert_int_equal(push(p, 1000, 250001, 1), PORT0 + 1);  /* new flowlet: 1 mod 4 */
	assert_int_equal(push(p, 1000, 260000, 3), PORT0 + 1);
	assert_int_equal(push(p, 1000, 400000, 0xffffffffu), PORT0 + 3); /* 2^32 - 1 mod 4 */
	/* a random choice may repeat the member: still a new flowlet, same port */
	assert_int_equal(push(p, 1000, 600000, 7), PORT0 + 3);
	set_members(p, 2); /* member 3 is gone: a new flowlet at once, 5 mod 2 */
	assert_int_equal(push(p, 1000, 600001, 5), PORT0 + 1);
	swx_pipe_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flowlet_changes_after_gap),
		cmocka_unit_test(test_letflow_random_member_after_gap),
	};

	return cmocka_run_group_tests(tests, swx_test_eal_up, swx_test_eal_down);
}
