/* SPDX-License-Identifier: BSD-3-Clause */
/* PFC frames: encode/decode round trip; malformed frames rejected with a reason and counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pfc_frame.h"
#include "pfc_pause.h"

static const uint8_t src_mac[6] = { 0x02, 0x00, 0x00, 0xaa, 0xbb, 0x01 };

static void test_round_trip(void **state)
{
	(void)state;
	/* every enable vector, with distinct times, so a swapped or dropped field shows */
	for (unsigned en = 0; en < 256; en++) {
		struct pfc_frame f, g;
		pfc_frame_init(&f, src_mac);
		for (unsigned p = 0; p < PFC_NUM_PRIO; p++)
			if (en & (1u << p))
				pfc_frame_set(&f, p, (uint16_t)(0x1111u * (p + 1) + en));
		uint8_t buf[128];
		memset(buf, 0xee, sizeof(buf));
		assert_int_equal(pfc_frame_encode(&f, buf, sizeof(buf)), PFC_FRAME_LEN);
		assert_int_equal(buf[PFC_FRAME_LEN], 0xee); /* wrote exactly 60 bytes */
		assert_int_equal(pfc_frame_decode(buf, PFC_FRAME_LEN, &g), PFC_FRAME_OK);
		assert_int_equal(g.enable, en);
		assert_memory_equal(g.src, src_mac, 6);
		assert_memory_equal(g.dst, pfc_dst_mac, 6);
		for (unsigned p = 0; p < PFC_NUM_PRIO; p++)
			assert_int_equal(g.time[p], f.time[p]);
	}
}

static void test_wire_layout(void **state)
{
	(void)state;
	struct pfc_frame f;
	pfc_frame_init(&f, src_mac);
	pfc_frame_set(&f, 3, 0xffff);
	pfc_frame_set(&f, 4, 0x0102);
	pfc_frame_set(&f, 9, 7); /* out of range: ignored */
	uint8_t buf[60];
	assert_int_equal(pfc_frame_encode(&f, buf, sizeof(buf)), 60);
	static const uint8_t want[34] = {
		0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0xaa, 0xbb, 0x01,
		0x88, 0x08, 0x01, 0x01, 0x00, 0x18,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x01, 0x02,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	assert_memory_equal(buf, want, sizeof(want));
	for (size_t i = sizeof(want); i < 60; i++)
		assert_int_equal(buf[i], 0);
	/* a buffer too small is refused and left alone */
	uint8_t small[59];
	memset(small, 0x5a, sizeof(small));
	assert_int_equal(pfc_frame_encode(&f, small, sizeof(small)), 0);
	assert_int_equal(small[0], 0x5a);
	/* 64 bytes with an FCS and the reserved high octet set: still accepted */
	uint8_t withfcs[64];
	memcpy(withfcs, buf, 60);
	memset(withfcs + 60, 0x99, 4);
	withfcs[16] = 0xff;
	struct pfc_frame g;
	assert_int_equal(pfc_frame_decode(withfcs, 64, &g), PFC_FRAME_OK);
	assert_int_equal(g.enable, 0x18);
}

static void good_frame(uint8_t *buf)
{
	struct pfc_frame f;
	pfc_frame_init(&f, src_mac);
	pfc_frame_set(&f, 3, 1000);
	pfc_frame_encode(&f, buf, 60);
}

static void test_malformed(void **state)
{
	(void)state;
	struct pfc_pause ps;
	assert_int_equal(pfc_pause_init(&ps, 100000000000ull, NULL, 0), 0);
	uint8_t buf[60];
	struct { const char *what; size_t len; int off; uint8_t val; enum pfc_frame_err want; } cases[] = {
		{ "short (59 bytes)", 59, -1, 0, PFC_FRAME_ERR_SHORT },
		{ "short (14 bytes)", 14, -1, 0, PFC_FRAME_ERR_SHORT },
		{ "802.3x PAUSE opcode", 60, 14, 0x00 /* 0x0101 -> 0x0001 */, PFC_FRAME_ERR_OPCODE },
		{ "IPv4 EtherType", 60, 12, 0x08 /* 0x8808 -> 0x0808 */, PFC_FRAME_ERR_ETHERTYPE },
		{ "unicast destination", 60, 5, 0x02, PFC_FRAME_ERR_DST },
		{ "broadcast-ish destination", 60, 0, 0xff, PFC_FRAME_ERR_DST },
	};
	uint64_t want_count[PFC_FRAME_ERR_COUNT] = { 0 };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		good_frame(buf);
		if (cases[i].off >= 0)
			buf[cases[i].off] = cases[i].val;
		struct pfc_frame out;
		memset(&out, 0x77, sizeof(out));
		enum pfc_frame_err e = pfc_frame_decode(buf, cases[i].len, &out);
		if (e != cases[i].want)
			fail_msg("%s: got %d (%s), want %d", cases[i].what, e, pfc_frame_err_str(e),
				 cases[i].want);
		assert_int_equal(out.enable, 0x77); /* untouched on error */
		/* through the pause state: rejected, counted, no pause applied */
		assert_int_equal(pfc_pause_rx(&ps, buf, cases[i].len, 1000), cases[i].want);
		want_count[cases[i].want]++;
		assert_true(pfc_pause_may_send(&ps, 3, 1000));
	}
	for (unsigned r = 1; r < PFC_FRAME_ERR_COUNT; r++)
		assert_int_equal(ps.rx.err[r], want_count[r]);
	assert_int_equal(ps.rx.ok, 0);
	assert_int_equal(ps.xoff_rx[3], 0);
	/* each reason has its own text */
	for (unsigned r = 0; r < PFC_FRAME_ERR_COUNT; r++)
		for (unsigned s = r + 1; s < PFC_FRAME_ERR_COUNT; s++)
			assert_string_not_equal(pfc_frame_err_str(r), pfc_frame_err_str(s));
	assert_string_equal(pfc_frame_err_str(PFC_FRAME_ERR_COUNT), "unknown");
	assert_int_equal(pfc_frame_decode(NULL, 60, NULL), PFC_FRAME_ERR_SHORT);
	/* and a good one is accepted and applied */
	good_frame(buf);
	assert_int_equal(pfc_pause_rx(&ps, buf, 60, 1000), PFC_FRAME_OK);
	assert_int_equal(ps.rx.ok, 1);
	assert_false(pfc_pause_may_send(&ps, 3, 1000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_wire_layout),
		cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
