/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * swx_load on DPDK 22.11 (EAL without hugepages): p4/default.spec builds; a
 * hand-made frame leaves on the port its route entry names, TTL one less and
 * the IPv4 checksum mended; a miss and an expiring TTL are dropped; what only
 * DPDK refuses is reported at the construct's FILE:LINE.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "swx_load.h"
#include "swx_spec.h"
#include "swx_test.h"

/*
 * Ethernet (14) + IPv4 (20) + UDP (8) + 18 bytes of payload: 60 bytes.
 * IPv4: 45 00 002e 1234 4000 40(TTL 64) 11(UDP) csum 0a000001 0a000105.
 * RFC 1071 checksum by hand: 4500 + 002e + 1234 + 4000 + 4011 + 0a00 + 0001 +
 * 0a00 + 0105 = ec79, complement 1386. With TTL 63 the word 4011 becomes 3f11:
 * the sum is eb79, the checksum 1486.
 */
static void make_frame(uint8_t f[60], uint8_t ttl, const uint8_t dst[4], uint16_t csum)
{
	static const uint8_t head[] = {
		0x02, 0, 0, 0, 0, 0x99,  0x02, 0, 0, 0, 0, 0x01,  0x08, 0x00, /* Ethernet, IPv4 */
		0x45, 0x00, 0x00, 0x2e, 0x12, 0x34, 0x40, 0x00,
	};

	memset(f, 0xab, 60);
	memcpy(f, head, sizeof(head));
	f[22] = ttl;
	f[23] = 17;
	f[24] = (uint8_t)(csum >> 8);
	f[25] = (uint8_t)csum;
	memcpy(f + 26, (const uint8_t[]){10, 0, 0, 1}, 4);
	memcpy(f + 30, dst, 4);
	memcpy(f + 34, (const uint8_t[]){0xc0, 0x00, 0x12, 0xb7, 0x00, 0x1a, 0x00, 0x00}, 8);
}

static void add_route(struct swx_pipe *p, const char *entry)
{
	char err[SWX_ERR_MAX];

	if (swx_pipe_entry(p, "route", entry, err, sizeof(err)) != 0)
		fail_msg("%s", err);
}

static struct swx_pipe *build_default(void)
{
	char err[SWX_ERR_MAX];
	struct swx_spec s;
	struct swx_pipe *p = NULL;

	if (swx_spec_parse_file(SWX_P4_DIR "/default.spec", &s, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	int rc = swx_load(&s, 8, &p, err, sizeof(err));

	swx_spec_free(&s);
	if (rc != 0)
		fail_msg("%s", err);
	/* 10.0.1.0/24 -> port 3, next hop 02:00:00:00:03:03 */
	add_route(p, "match 0x0a000100/0xffffff00 action route_fwd port_out 3 "
		  "nexthop_mac 0x020000000303");
	return p;
}

/* text parsed (it must parse) and loaded with n_ports: swx_load's return, err its message. */
static int load_text(const char *text, uint32_t n_ports, struct swx_pipe **p, char *err)
{
	struct swx_spec s;

	*p = NULL;
	assert_int_equal(swx_spec_parse(text, strlen(text), "t.spec", &s, err, SWX_ERR_MAX), 0);
	int rc = swx_load(&s, n_ports, p, err, SWX_ERR_MAX);

	swx_spec_free(&s);
	return rc;
}

static void test_default_builds(void **state)
{
	(void)state;
	swx_pipe_free(build_default());
}

static void test_routed_frame(void **state)
{
	static struct swx_result r;
	uint8_t f[60], want[60];
	struct swx_pipe *p = build_default();

	(void)state;
	make_frame(f, 64, (const uint8_t[]){10, 0, 1, 5}, 0x1386);
	assert_int_equal(swx_pipe_push(p, f, sizeof(f), &r), 0);
	assert_int_equal(r.sent, 1);
	assert_int_equal(r.port, 3);
	assert_int_equal(r.len, 60);
	/* what leaves: the next hop's MAC, TTL 63, checksum 1486, the rest unchanged */
	make_frame(want, 63, (const uint8_t[]){10, 0, 1, 5}, 0x1486);
	memcpy(want, (const uint8_t[]){0x02, 0, 0, 0, 0x03, 0x03}, 6);
	assert_memory_equal(r.frame, want, 60);
	swx_pipe_free(p);
}

static void test_dropped_frames(void **state)
{
	static struct swx_result r;
	uint8_t f[60];
	struct swx_pipe *p = build_default();

	(void)state;
	/* no route for 10.0.2.5: route_drop */
	make_frame(f, 64, (const uint8_t[]){10, 0, 2, 5}, 0);
	assert_int_equal(swx_pipe_push(p, f, sizeof(f), &r), 0);
	assert_int_equal(r.sent, 0);
	/* TTL 1 would expire */
	make_frame(f, 1, (const uint8_t[]){10, 0, 1, 5}, 0);
	assert_int_equal(swx_pipe_push(p, f, sizeof(f), &r), 0);
	assert_int_equal(r.sent, 0);
	/* not IPv4 (ARP's ethertype 0806) */
	make_frame(f, 64, (const uint8_t[]){10, 0, 1, 5}, 0x1386);
	f[13] = 0x06;
	assert_int_equal(swx_pipe_push(p, f, sizeof(f), &r), 0);
	assert_int_equal(r.sent, 0);
	/* and the pipeline still routes after drops */
	make_frame(f, 64, (const uint8_t[]){10, 0, 1, 5}, 0x1386);
	assert_int_equal(swx_pipe_push(p, f, sizeof(f), &r), 0);
	assert_int_equal(r.sent, 1);
	assert_int_equal(r.port, 3);
	swx_pipe_free(p);
}

static void test_dpdk_refusal_has_line(void **state)
{
	/* the parser knows no headers' names in instructions: DPDK refuses h.nope */
	static const char text[] =
		"struct m_t {\n"          /* 1 */
		" bit<32> port\n"         /* 2 */
		"}\n"                     /* 3 */
		"metadata instanceof m_t\n" /* 4 */
		"apply {\n"               /* 5 */
		" rx m.port\n"
		" extract h.nope\n"
		" tx m.port\n"
		"}\n";
	char err[SWX_ERR_MAX];
	struct swx_pipe *p;

	(void)state;
	assert_int_equal(load_text(text, 4, &p, err), -EINVAL);
	assert_null(p);
	if (strncmp(err, "t.spec:5: DPDK refused the apply block", 38) != 0)
		fail_msg("message '%s'", err);
}

static void test_port_past_the_last(void **state)
{
	static struct swx_result r;
	uint8_t f[60];
	struct swx_pipe *p = build_default(); /* 8 ports: 0 to 7 */

	(void)state;
	/* a route to port 100 of 8: dropped (unguarded, DPDK would read past its 9 ports) */
	add_route(p, "match 0x0a000200/0xffffff00 action route_fwd port_out 100 "
		  "nexthop_mac 0x020000000808");
	make_frame(f, 64, (const uint8_t[]){10, 0, 2, 5}, 0);
	assert_int_equal(swx_pipe_push(p, f, sizeof(f), &r), 0);
	assert_int_equal(r.sent, 0);
	/* port 7, the last, still leaves */
	add_route(p, "match 0x0a000300/0xffffff00 action route_fwd port_out 7 "
		  "nexthop_mac 0x020000000707");
	make_frame(f, 64, (const uint8_t[]){10, 0, 3, 5}, 0);
	assert_int_equal(swx_pipe_push(p, f, sizeof(f), &r), 0);
	assert_int_equal(r.sent, 1);
	assert_int_equal(r.port, 7);
	swx_pipe_free(p);
}

static void test_tx_immediate_past_the_ports(void **state)
{
	static const char text[] = "struct m_t {\n bit<32> port\n}\nmetadata instanceof m_t\n"
				   "apply {\n rx m.port\n tx 4\n}\n";
	char err[SWX_ERR_MAX];
	struct swx_pipe *p;

	(void)state;
	/* ports 0 to 3: tx 4 (line 7) is refused */
	assert_int_equal(load_text(text, 4, &p, err), -EINVAL);
	assert_string_equal(err, "t.spec:7: tx to port 4: the pipeline has ports 0 to 3");
}

static void test_endless_program(void **state)
{
	/* after rx the program loops (DPDK refuses a jump to itself): the frame never leaves */
	static const char text[] = "struct m_t {\n bit<32> port\n}\nmetadata instanceof m_t\n"
				   "apply {\n rx m.port\n L : mov m.port 0x1\n jmp L\n tx m.port\n}\n";
	static struct swx_result r;
	char err[SWX_ERR_MAX];
	uint8_t f[60] = {0};
	struct swx_pipe *p;

	(void)state;
	assert_int_equal(load_text(text, 4, &p, err), 0);
	assert_int_equal(swx_pipe_push(p, f, sizeof(f), &r), -ELOOP);
	assert_int_equal(r.sent, 0);
	swx_pipe_free(p);
}

static void test_bad_entry(void **state)
{
	char err[SWX_ERR_MAX];
	struct swx_pipe *p = build_default();

	(void)state;
	assert_int_equal(swx_pipe_entry(p, "route", "match 0x0a000100/0xffffff00 action nope",
					err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "table route: DPDK cannot read the entry"));
	swx_pipe_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_builds),
		cmocka_unit_test(test_routed_frame),
		cmocka_unit_test(test_dropped_frames),
		cmocka_unit_test(test_dpdk_refusal_has_line),
		cmocka_unit_test(test_port_past_the_last),
		cmocka_unit_test(test_tx_immediate_past_the_ports),
		cmocka_unit_test(test_endless_program),
		cmocka_unit_test(test_bad_entry),
	};

	return cmocka_run_group_tests(tests, swx_test_eal_up, swx_test_eal_down);
}
