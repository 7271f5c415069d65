/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SWX programs against rocelab's C switch, frame by frame:
 *
 *  - rl_hash, the hash function swx/ registers: check values by hand;
 *  - p4/ecmp.spec against dataplane/fabric/dp_pipeline.c (dp_pipeline_decide
 *    of a leaf, its fabric built from a topology written here): the same
 *    egress port for hand-made RoCEv2, UDP, TCP and other IPv4 frames, for
 *    every hash algorithm, three seeds, the 5-tuple and E-ECMP profiles and
 *    groups of 2, 3, 4 and 7 uplinks;
 *  - p4/ecmp.spec against hashing/ itself (rl_flow_hash, rl_ecmp_modulo) on
 *    the 145 frames of the golden rxe capture;
 *  - p4/pinning.spec on hand-made frames (ports worked out by hand) and
 *    against dp_pipeline_decide with lb: pinning.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dp_fabric_build.h"
#include "dp_pipeline.h"
#include "rl_bytes.h"
#include "rl_hash.h"
#include "rl_nexthop.h"
#include "rl_parse.h"
#include "swx_hash.h"
#include "swx_load.h"
#include "swx_spec.h"
#include "swx_test.h"

#define N_PORTS 64        /* the SWX pipeline's output ports: more than any switch here has */
#define NOW 1000000u      /* ns: the C decision only compares times */
#define FRAME_ROOM 2048
#define PCAP_MAX (1u << 20)

/* ---- the SWX side ---- */

static struct swx_pipe *build(const char *spec)
{
	char err[SWX_ERR_MAX];
	struct swx_spec s;
	struct swx_pipe *p = NULL;

	if (swx_spec_parse_file(spec, &s, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	int rc = swx_load(&s, N_PORTS, &p, err, sizeof(err));

	swx_spec_free(&s);
	if (rc != 0)
		fail_msg("%s", err);
	return p;
}

__attribute__((format(printf, 3, 4)))
static void entry(struct swx_pipe *p, const char *table, const char *fmt, ...)
{
	char text[512], err[SWX_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (swx_pipe_entry(p, table, text, err, sizeof(err)) != 0)
		fail_msg("%s", err);
}

/* The port the program sends f on, or -1 for a drop. */
static int swx_port(struct swx_pipe *p, const uint8_t *f, uint32_t len)
{
	static struct swx_result r;

	assert_int_equal(swx_pipe_push(p, f, len, &r), 0);
	return r.sent ? (int)r.port : -1;
}

/* ---- hand-made frames ---- */

enum kind { K_ROCE, K_UDP, K_TCP, K_OTHER };

struct flow {
	enum kind kind;
	uint32_t src, dst;
	uint16_t sport;
	uint32_t dqpn;
};

/*
 * Ethernet + IPv4 (TTL 64, checksum 0: no stage reads it) + the flow's L4:
 * RoCEv2 (UDP to 4791, BTH SEND only to dqpn, 16 bytes payload, ICRC),
 * UDP to 5000, TCP to 80, or 8 bytes of protocol 47. Returns the length.
 */
static uint32_t make(uint8_t *f, const struct flow *fl)
{
	static const uint8_t l2[14] = {2, 0, 0, 0, 0, 0xfe, 2, 0, 0, 0, 0, 1, 0x08, 0x00};
	uint8_t *ip = f + 14, *l4 = ip + 20;
	uint32_t l4_len = fl->kind == K_ROCE ? 8 + 12 + 16 + 4 : fl->kind == K_TCP ? 20 : 8;

	memset(f, 0, FRAME_ROOM);
	memcpy(f, l2, sizeof(l2));
	ip[0] = 0x45;
	rl_put_be16(ip + 2, (uint16_t)(20 + l4_len));
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = fl->kind == K_TCP ? 6 : fl->kind == K_OTHER ? 47 : 17;
	rl_put_be32(ip + 12, fl->src);
	rl_put_be32(ip + 16, fl->dst);
	if (fl->kind != K_OTHER) {
		rl_put_be16(l4, fl->sport);
		rl_put_be16(l4 + 2, fl->kind == K_ROCE ? 4791 : fl->kind == K_TCP ? 80 : 5000);
	}
	if (fl->kind == K_TCP)
		l4[12] = 0x50; /* data offset 5 */
	else if (fl->kind != K_OTHER)
		rl_put_be16(l4 + 4, (uint16_t)l4_len);
	if (fl->kind == K_ROCE) {
		uint8_t *bth = l4 + 8;

		bth[0] = 0x04; /* RC SEND only */
		rl_put_be16(bth + 2, 0xffff);
		rl_put_be32(bth + 4, fl->dqpn & 0xffffff);
		rl_put_be32(bth + 8, 0x80000123); /* ack request, PSN 0x123 */
	}
	return 14 + 20 + l4_len;
}

/* ---- the C side: a leaf of a fabric built from a topology ---- */

struct fab {
	struct topo *t;
	struct dp_fabric f;
	struct dp_switch *leaf0;
	const struct dp_group *g; /* leaf0's group towards leaf1 */
	uint16_t in_port;         /* leaf0's port to h0 */
};

/* 2 leaves, n_spines spines, 4 hosts a leaf (10.0.L.1 to 10.0.L.4); every switch as sw says. */
static void fab_up(struct fab *x, unsigned n_spines, const char *sw)
{
	char yaml[4096], err[256];
	int n = snprintf(yaml, sizeof(yaml), "name: diff\ndefaults:\n  switch: {%s}\nswitches:\n"
			 "  - {name: leaf0, role: rtsw}\n  - {name: leaf1, role: rtsw}\n", sw);

	for (unsigned i = 0; i < n_spines; i++)
		n += snprintf(yaml + n, sizeof(yaml) - (size_t)n, "  - {name: s%u, role: ctsw}\n", i);
	n += snprintf(yaml + n, sizeof(yaml) - (size_t)n, "hosts:\n");
	for (unsigned i = 0; i < 8; i++)
		n += snprintf(yaml + n, sizeof(yaml) - (size_t)n, "  - {name: h%u, leaf: leaf%u}\n", i,
			      i / 4);
	n += snprintf(yaml + n, sizeof(yaml) - (size_t)n, "links:\n");
	for (unsigned i = 0; i < n_spines; i++)
		n += snprintf(yaml + n, sizeof(yaml) - (size_t)n, "  - [leaf0, s%u]\n  - [leaf1, s%u]\n",
			      i, i);
	assert_true(n > 0 && (size_t)n < sizeof(yaml));
	memset(x, 0, sizeof(*x));
	if (topo_load_string(yaml, (size_t)n, "diff.yaml", &x->t, err, sizeof(err)) != 0)
		fail_msg("topology: %s", err);
	x->f.topo = x->t;
	if (dp_fabric_build(&x->f, err, sizeof(err)) != 0)
		fail_msg("build: %s", err);
	x->leaf0 = &x->f.sw[topo_switch_by_name(x->t, "leaf0")];
	x->g = &x->leaf0->group[x->f.sw[topo_switch_by_name(x->t, "leaf1")].cfg->leaf_index];
	x->in_port = x->t->hosts[topo_host_by_name(x->t, "h0")].leaf_port;
	/* every uplink up, in port order: SWX member i is the C path's i-th up member */
	assert_int_equal(x->g->n, n_spines);
	assert_int_equal(__builtin_popcountll(x->g->up_mask), n_spines);
}

static void fab_down(struct fab *x)
{
	dp_fabric_build_free(&x->f);
	topo_free(x->t);
}

/* The port leaf0 forwards f on (it must forward). */
static int c_port(struct fab *x, uint8_t *f, uint32_t len)
{
	struct rl_pkt p;
	struct dp_verdict v;
	struct dp_frame df = {.d = f, .len = len, .room = FRAME_ROOM};
	int st = rl_parse(f, len, &p);

	assert_int_equal(st, RL_PARSE_OK);
	assert_int_equal(dp_pipeline_decide(x->leaf0, x->in_port, &df, &p, st, NOW, &v),
			 DP_VERDICT_FORWARD);
	return v.out_port;
}

/* leaf0's group towards leaf1 as SWX entries: group gid, member i -> the C group's port i. */
static void swx_group(struct swx_pipe *p, const char *table, const struct fab *x, uint32_t gid)
{
	for (unsigned i = 0; i < x->g->n; i++)
		entry(p, table, "match %u %u action fwd port_out %u nexthop_mac 0x02000000%04x", gid, i,
		      x->g->port[i], i);
}

/* ---- rl_hash, the registered function ---- */

static void test_hash_function(void **state)
{
	/* algorithm 1 (CRC-32), seed 0, "123456789": the CRC-32 check value */
	uint8_t k[5 + 9] = {1, 0, 0, 0, 0, '1', '2', '3', '4', '5', '6', '7', '8', '9'};

	(void)state;
	assert_int_equal(swx_hash_rl(k, sizeof(k), 0), 0xCBF43926);
	k[0] = 2; /* CRC-32C's check value */
	assert_int_equal(swx_hash_rl(k, sizeof(k), 0), 0xE3069283);
	/* XOR fold, seed 01020304 from the key: 01020304 ^ 10203040 = 11223344 */
	uint8_t x[9] = {3, 0x01, 0x02, 0x03, 0x04, 0x10, 0x20, 0x30, 0x40};
	assert_int_equal(swx_hash_rl(x, sizeof(x), 0), 0x11223344);
	/* DPDK's own seed (0 in 22.11) is XORed into the key's: 11223344 ^ 01000000 */
	assert_int_equal(swx_hash_rl(x, sizeof(x), 0x01000000), 0x10223344);
	/* an algorithm out of range, a key without its parameters: 0 */
	x[0] = RL_HASH_ALGO_COUNT;
	assert_int_equal(swx_hash_rl(x, sizeof(x), 0), 0);
	x[0] = 3;
	assert_int_equal(swx_hash_rl(x, 4, 0), 0);
}

/* ---- ECMP: p4/ecmp.spec against dp_pipeline_decide ---- */

#define H(L, I) (0x0a000000u | (L) << 8 | (I)) /* host I of leaf L: 10.0.L.I */

/* Frames from leaf0's hosts to leaf1's: RoCEv2 on several QPs, and the other kinds. */
static const struct flow flows[] = {
	{K_ROCE, H(0, 1), H(1, 1), 0xc000, 0x000011}, {K_ROCE, H(0, 1), H(1, 1), 0xc000, 0x000012},
	{K_ROCE, H(0, 1), H(1, 1), 0xc000, 0x000013}, {K_ROCE, H(0, 1), H(1, 1), 0xc000, 0xabcdef},
	{K_ROCE, H(0, 2), H(1, 3), 0xc123, 0x000011}, {K_ROCE, H(0, 3), H(1, 2), 0xd00d, 0x000100},
	{K_ROCE, H(0, 4), H(1, 4), 0xffff, 0x000001}, {K_ROCE, H(0, 1), H(1, 2), 0xc001, 0x000011},
	{K_UDP, H(0, 1), H(1, 1), 5000, 0}, {K_UDP, H(0, 2), H(1, 4), 6000, 0},
	{K_TCP, H(0, 1), H(1, 1), 40000, 0}, {K_TCP, H(0, 3), H(1, 3), 40001, 0},
	{K_OTHER, H(0, 1), H(1, 1), 0, 0}, {K_OTHER, H(0, 4), H(1, 2), 0, 0},
};

/*
 * One switch setting: every flow leaves on the C path's port. Returns how
 * many of flows 1 to 3 (flow 0 on other QPs) left on another port than flow 0.
 */
static unsigned ecmp_case(struct swx_pipe *p, unsigned n_spines, unsigned algo, uint32_t seed,
			  unsigned profile, uint32_t gid)
{
	char sw[160];
	struct fab x;
	uint8_t f[FRAME_ROOM], g[FRAME_ROOM];
	unsigned moved = 0;
	int first = -1;

	snprintf(sw, sizeof(sw), "lb: ecmp, algo: %s, seed: %u, profile: %s", rl_hash_algo_name(algo),
		 seed, rl_profile_name(profile));
	fab_up(&x, n_spines, sw);
	assert_int_equal(x.leaf0->cfg->seed, seed);
	entry(p, "hash_cfg", "default action set_hash algo %u seed %u eecmp %u", algo, seed,
	      profile == RL_PROFILE_EECMP);
	entry(p, "route", "match 0x0a000100/0xffffff00 action route_ecmp group %u n_members %u", gid,
	      n_spines);
	swx_group(p, "member", &x, gid);
	for (size_t i = 0; i < sizeof(flows) / sizeof(flows[0]); i++) {
		uint32_t len = make(f, &flows[i]);

		memcpy(g, f, len); /* the C path rewrites its copy */
		int want = c_port(&x, g, len), got = swx_port(p, f, len);

		if (got != want)
			fail_msg("%u uplinks, %s seed %u, %s: flow %zu on port %d, the C switch's %d",
				 n_spines, rl_hash_algo_name(algo), seed, rl_profile_name(profile), i,
				 got, want);
		if (i == 0)
			first = got;
		else if (i < 4) /* flows 1 to 3: flow 0 on another QP */
			moved += got != first;
	}
	fab_down(&x);
	return moved;
}

static void test_ecmp_matches_c_switch(void **state)
{
	static const unsigned sizes[] = {2, 3, 4, 7};
	static const uint32_t seeds[] = {0, 0x5eed, 0xdeadbeef};
	struct swx_pipe *p = build(SWX_P4_DIR "/ecmp.spec");
	unsigned moved[RL_PROFILE_COUNT] = {0};
	uint32_t gid = 0;

	(void)state;
	for (size_t n = 0; n < sizeof(sizes) / sizeof(sizes[0]); n++)
		for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++)
			for (unsigned a = 0; a < RL_HASH_ALGO_COUNT; a++) {
				moved[RL_PROFILE_5TUPLE] += ecmp_case(p, sizes[n], a, seeds[s],
								      RL_PROFILE_5TUPLE, ++gid);
				moved[RL_PROFILE_EECMP] += ecmp_case(p, sizes[n], a, seeds[s],
								     RL_PROFILE_EECMP, ++gid);
			}
	/* the 5-tuple ignores the QP; E-ECMP spreads one 5-tuple's QPs (the QP is hashed) */
	assert_int_equal(moved[RL_PROFILE_5TUPLE], 0);
	assert_true(moved[RL_PROFILE_EECMP] > 0);
	swx_pipe_free(p);
}

/* The 60-byte frame of test_swx_load.c: checksum 1386 at TTL 64, 1486 at 63 (worked there). */
static void test_ecmp_rewrite(void **state)
{
	static const uint8_t ip[20] = {0x45, 0, 0, 0x2e, 0x12, 0x34, 0x40, 0, 64, 17, 0x13, 0x86,
				       10, 0, 0, 1, 10, 0, 1, 5};
	uint8_t f[60] = {2, 0, 0, 0, 0, 0x99, 2, 0, 0, 0, 0, 1, 8, 0};
	static struct swx_result r;
	struct swx_pipe *p = build(SWX_P4_DIR "/ecmp.spec");

	(void)state;
	memcpy(f + 14, ip, sizeof(ip));
	memcpy(f + 34, (const uint8_t[]){0x13, 0x88, 0x13, 0x88, 0, 26, 0, 0}, 8); /* UDP 5000 */
	/* one member: whatever the hash, member 0 (port 9) */
	entry(p, "route", "match 0x0a000100/0xffffff00 action route_ecmp group 1 n_members 1");
	entry(p, "member", "match 1 0 action fwd port_out 9 nexthop_mac 0x020000000909");
	assert_int_equal(swx_pipe_push(p, f, sizeof(f), &r), 0);
	assert_int_equal(r.sent, 1);
	assert_int_equal(r.port, 9);
	static const uint8_t mac[6] = {2, 0, 0, 0, 9, 9};
	assert_memory_equal(r.frame, mac, 6);
	assert_int_equal(r.frame[22], 63);
	assert_int_equal(r.frame[24] << 8 | r.frame[25], 0x1486);
	assert_memory_equal(r.frame + 26, f + 26, sizeof(f) - 26);
	/* no route (10.0.2.5), TTL 1, a group without that member: dropped */
	f[32] = 2;
	assert_int_equal(swx_port(p, f, sizeof(f)), -1);
	f[32] = 1;
	f[22] = 1;
	assert_int_equal(swx_port(p, f, sizeof(f)), -1);
	f[22] = 64;
	entry(p, "route", "match 0x0a000100/0xffffff00 action route_ecmp group 2 n_members 1");
	assert_int_equal(swx_port(p, f, sizeof(f)), -1);
	swx_pipe_free(p);
}

/* ---- ECMP on the golden rxe capture, against hashing/ ---- */

/* The capture's frames: a classic little-endian pcap (tests/testdata/README.md). */
static uint8_t *read_pcap(size_t *len)
{
	FILE *fp = fopen(SWX_TESTDATA_DIR "/rxe-rc-ud.pcap", "rb");
	uint8_t *b = malloc(PCAP_MAX);

	assert_non_null(fp);
	assert_non_null(b);
	*len = fread(b, 1, PCAP_MAX, fp);
	fclose(fp);
	assert_true(*len > 24 && *len < PCAP_MAX);
	assert_int_equal(rl_get_le32(b), 0xa1b2c3d4);
	return b;
}

static void test_ecmp_rxe_capture(void **state)
{
	static const unsigned ports[5] = {11, 3, 7, 20, 5};
	size_t len, n_frames = 0;
	uint8_t *pc = read_pcap(&len);
	struct swx_pipe *p = build(SWX_P4_DIR "/ecmp.spec");

	(void)state;
	entry(p, "route", "match 0x0a630000/0xffff0000 action route_ecmp group 1 n_members 5");
	for (unsigned i = 0; i < 5; i++)
		entry(p, "member", "match 1 %u action fwd port_out %u nexthop_mac 0x020000000001", i,
		      ports[i]);
	for (unsigned prof = RL_PROFILE_5TUPLE; prof <= RL_PROFILE_EECMP; prof++)
		for (unsigned a = 0; a < RL_HASH_ALGO_COUNT; a++) {
			uint32_t seed = 0x1000193u * (a + 1);

			entry(p, "hash_cfg", "default action set_hash algo %u seed %u eecmp %u", a, seed,
			      prof == RL_PROFILE_EECMP);
			for (size_t off = 24; off + 16 <= len;) {
				uint32_t cap = rl_get_le32(pc + off + 8);
				const uint8_t *f = pc + off + 16;
				struct rl_pkt pkt;

				assert_true(off + 16 + cap <= len);
				assert_int_equal(rl_parse(f, cap, &pkt), RL_PARSE_OK);
				uint32_t h = rl_flow_hash(prof, a, seed, &pkt);
				assert_int_equal(swx_port(p, f, cap), ports[rl_ecmp_modulo(h, 5)]);
				off += 16 + cap;
				n_frames++;
			}
		}
	assert_int_equal(n_frames, 2 * RL_HASH_ALGO_COUNT * 145);
	swx_pipe_free(p);
	free(pc);
}

/* ---- path pinning: p4/pinning.spec ---- */

static void test_pinning_by_hand(void **state)
{
	struct swx_pipe *p = build(SWX_P4_DIR "/pinning.spec");
	uint8_t f[FRAME_ROOM];
	struct flow fl = {K_ROCE, H(0, 1), 0, 0xc000, 0x11};

	(void)state;
	entry(p, "route", "match 0x0a000001/0xffffffff action fwd port_out 0 nexthop_mac 0x02");
	entry(p, "route", "match 0x0a000100/0xffffff00 action route_pin group 1 n_uplinks 3");
	for (unsigned i = 0; i < 3; i++)
		entry(p, "uplink", "match 1 %u action fwd port_out %u nexthop_mac 0x02", i, 4 + i);
	/* 10.0.1.X: slot X - 1, uplink (X - 1) mod 3 on port 4 + that */
	static const unsigned host[] = {1, 2, 3, 4, 7, 8, 9, 254};
	/* slots 0 1 2 3 6 7 8 253 (= 3 * 84 + 1) */
	static const int want[] = {4, 5, 6, 4, 4, 5, 6, 5};
	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++) {
		fl.dst = H(1, host[i]);
		for (uint16_t sport = 0xc000; sport < 0xc004; sport++) { /* whatever the flow */
			fl.sport = sport;
			fl.dqpn = sport;
			assert_int_equal(swx_port(p, f, make(f, &fl)), want[i]);
		}
	}
	fl.dst = H(0, 1); /* a host of this leaf */
	assert_int_equal(swx_port(p, f, make(f, &fl)), 0);
	fl.dst = 0xc0a80001; /* 192.168.0.1: no route */
	assert_int_equal(swx_port(p, f, make(f, &fl)), -1);
	/* uplink 1 fails: its slots go to the next one up (uplink 2, port 6), the others stay */
	entry(p, "uplink", "match 1 1 action fwd port_out 6 nexthop_mac 0x02");
	fl.dst = H(1, 2);
	assert_int_equal(swx_port(p, f, make(f, &fl)), 6);
	fl.dst = H(1, 1);
	assert_int_equal(swx_port(p, f, make(f, &fl)), 4);
	swx_pipe_free(p);
}

static void test_pinning_matches_c_switch(void **state)
{
	struct swx_pipe *p = build(SWX_P4_DIR "/pinning.spec");
	uint8_t f[FRAME_ROOM], g[FRAME_ROOM];
	struct fab x;

	(void)state;
	for (unsigned n_spines = 2; n_spines <= 3; n_spines++) {
		fab_up(&x, n_spines, "lb: pinning");
		entry(p, "route", "match 0x0a000100/0xffffff00 action route_pin group %u n_uplinks %u",
		      n_spines, n_spines);
		swx_group(p, "uplink", &x, n_spines);
		for (size_t i = 0; i < sizeof(flows) / sizeof(flows[0]); i++) {
			uint32_t len = make(f, &flows[i]);

			memcpy(g, f, len);
			assert_int_equal(swx_port(p, f, len), c_port(&x, g, len));
		}
		fab_down(&x);
	}
	swx_pipe_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_function),
		cmocka_unit_test(test_ecmp_matches_c_switch),
		cmocka_unit_test(test_ecmp_rewrite),
		cmocka_unit_test(test_ecmp_rxe_capture),
		cmocka_unit_test(test_pinning_by_hand),
		cmocka_unit_test(test_pinning_matches_c_switch),
	};

	return cmocka_run_group_tests(tests, swx_test_eal_up, swx_test_eal_down);
}
