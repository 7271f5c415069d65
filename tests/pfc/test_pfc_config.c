/* SPDX-License-Identifier: BSD-3-Clause */
/* Configuration: profiles by name, and every configuration error returns -1 with a message. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pfc_mmu.h"
#include "pfc_watchdog.h"

static void test_profiles(void **state)
{
	(void)state;
	const struct pfc_buffer_profile *deep = pfc_buffer_profile_find("deep");
	const struct pfc_buffer_profile *shallow = pfc_buffer_profile_find("shallow");
	assert_non_null(deep);
	assert_non_null(shallow);
	assert_null(pfc_buffer_profile_find("medium"));
	assert_null(pfc_buffer_profile_find(""));
	assert_null(pfc_buffer_profile_find(NULL));
	assert_string_equal(deep->name, "deep");
	assert_int_equal(deep->mode, PFC_MMU_STATIC);
	assert_true(deep->buffer_bytes >= (1ull << 30));     /* several GB */
	assert_int_equal(shallow->mode, PFC_MMU_SHARED);
	assert_true(shallow->buffer_bytes >= (10ull << 20)); /* tens of MB */
	assert_true(shallow->buffer_bytes < (100ull << 20));
	assert_true(shallow->alpha > 0);
	assert_ptr_equal(pfc_buffer_profile_at(0), deep);
	assert_ptr_equal(pfc_buffer_profile_at(1), shallow);
	assert_null(pfc_buffer_profile_at(2));
	/* both profiles build an MMU for a 64-port, 100G switch, and a 32-port 400G spine */
	struct pfc_mmu_config cfg;
	char err[256] = "";
	for (size_t i = 0; pfc_buffer_profile_at(i); i++) {
		pfc_mmu_config_init(&cfg, pfc_buffer_profile_at(i), 64, NULL);
		struct pfc_mmu *m = pfc_mmu_create(&cfg, err, sizeof(err));
		if (!m)
			fail_msg("profile %s: %s", pfc_buffer_profile_at(i)->name, err);
		pfc_mmu_destroy(m);
	}
	struct pfc_mmu_port_config pc;
	pfc_mmu_port_config_init(&pc, 400000000000ull, 500, 9014);
	pfc_mmu_config_init(&cfg, deep, 32, &pc);
	struct pfc_mmu *m = pfc_mmu_create(&cfg, err, sizeof(err));
	assert_non_null(m);
	assert_int_equal(pfc_mmu_port(m, 0)->share_bytes, (8ull << 30) / 32);
	pfc_mmu_destroy(m);
}

/* Expect a configuration error whose message contains word. */
static void expect_err(const struct pfc_mmu_config *cfg, const char *word)
{
	char err[256] = "";
	assert_int_equal(pfc_mmu_check_config(cfg, err, sizeof(err)), -EINVAL);
	if (!strstr(err, word))
		fail_msg("message \"%s\" does not mention \"%s\"", err, word);
	err[0] = 0;
	assert_null(pfc_mmu_create(cfg, err, sizeof(err)));
	assert_non_null(strstr(err, word));
	/* no buffer for the message: still an error, no crash */
	assert_int_equal(pfc_mmu_check_config(cfg, NULL, 0), -EINVAL);
}

static void test_errors(void **state)
{
	(void)state;
	const struct pfc_buffer_profile *shallow = pfc_buffer_profile_find("shallow");
	const struct pfc_buffer_profile *deep = pfc_buffer_profile_find("deep");
	struct pfc_mmu_config cfg;
	char err[256];

	/* threshold above buffer size, both modes */
	pfc_mmu_config_init(&cfg, shallow, 8, NULL);
	assert_int_equal(pfc_mmu_check_config(&cfg, err, sizeof(err)), 0);
	cfg.xoff_bytes = cfg.buffer_bytes + 1;
	expect_err(&cfg, "threshold");
	pfc_mmu_config_init(&cfg, deep, 8, NULL);
	cfg.xoff_bytes = cfg.buffer_bytes / 8; /* the whole share: no room for headroom */
	expect_err(&cfg, "threshold");
	/* egress limit above the buffer */
	pfc_mmu_config_init(&cfg, shallow, 8, NULL);
	cfg.egress_limit_bytes = cfg.buffer_bytes * 2;
	expect_err(&cfg, "egress limit");
	/* zero rate: default port, and one port of a per-port table */
	pfc_mmu_config_init(&cfg, shallow, 8, NULL);
	cfg.port.rate_bps = 0;
	expect_err(&cfg, "rate");
	struct pfc_mmu_port_config ports[4];
	for (int i = 0; i < 4; i++)
		pfc_mmu_port_config_init(&ports[i], 100000000000ull, 100, 1514);
	ports[2].rate_bps = 0;
	pfc_mmu_config_init(&cfg, shallow, 4, NULL);
	cfg.ports = ports;
	expect_err(&cfg, "port 2");
	/* sizes */
	pfc_mmu_config_init(&cfg, shallow, 0, NULL);
	expect_err(&cfg, "ports");
	pfc_mmu_config_init(&cfg, shallow, 8, NULL);
	cfg.buffer_bytes = 0;
	expect_err(&cfg, "buffer size");
	pfc_mmu_config_init(&cfg, shallow, 8, NULL);
	cfg.cell_bytes = 0;
	expect_err(&cfg, "cell size");
	pfc_mmu_config_init(&cfg, shallow, 8, NULL);
	cfg.port.mtu_bytes = 20;
	expect_err(&cfg, "frame size");
	pfc_mmu_config_init(&cfg, shallow, 8, NULL);
	cfg.alpha = 0;
	expect_err(&cfg, "alpha");
	/* headroom that does not fit: 64 ports x 2 lossless PGs x 64512 bytes in 1 MB */
	pfc_mmu_config_init(&cfg, shallow, 64, NULL);
	cfg.buffer_bytes = 1 << 20;
	expect_err(&cfg, "headroom");
	pfc_mmu_config_init(&cfg, deep, 64, NULL);
	cfg.buffer_bytes = 1 << 20;
	expect_err(&cfg, "headroom");
	pfc_mmu_config_init(&cfg, shallow, 8, NULL);
	cfg.pause_quanta = 0;
	expect_err(&cfg, "pause_quanta");
	pfc_mmu_config_init(&cfg, deep, 8, NULL);
	cfg.resume_offset_bytes = cfg.buffer_bytes / 8;
	expect_err(&cfg, "resume offset");
	/* ECN */
	pfc_mmu_config_init(&cfg, shallow, 8, NULL);
	cfg.ecn[3].kmin_bytes = cfg.ecn[3].kmax_bytes + 1;
	expect_err(&cfg, "kmin");
	pfc_mmu_config_init(&cfg, shallow, 8, NULL);
	cfg.ecn[5].pmax = 1.5;
	expect_err(&cfg, "pmax");
	pfc_mmu_config_init(&cfg, shallow, 8, NULL);
	struct pfc_mmu *m = pfc_mmu_create(&cfg, err, sizeof(err));
	assert_non_null(m);
	struct pfc_ecn_config bad = { .enabled = true, .kmin_bytes = 10, .kmax_bytes = 5, .pmax = 0.1 };
	assert_int_equal(pfc_mmu_set_ecn(m, 0, 0, &bad, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "kmin"));
	assert_int_equal(pfc_mmu_set_ecn(m, 8, 0, &cfg.ecn[0], err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "does not exist"));
	pfc_mmu_destroy(m);
	/* watchdog */
	struct pfc_watchdog wd;
	struct pfc_watchdog_config wc;
	pfc_watchdog_config_default(&wc);
	wc.detect_ns = 0;
	assert_int_equal(pfc_watchdog_init(&wd, &wc, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "> 0"));
	pfc_watchdog_config_default(&wc);
	wc.detect_ns = wc.poll_ns / 2;
	assert_int_equal(pfc_watchdog_init(&wd, &wc, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "polling"));
	assert_int_equal(pfc_watchdog_init(&wd, NULL, 0, err, sizeof(err)), 0);
}

static void test_headroom_formula(void **state)
{
	(void)state;
	/* 100G, 100 ns cable, 1514-byte frames, 802.1Qbb response bound, 256-byte cells:
	 * W = 8*1538 + 8*84 + 2*100*100 + 447488 + 8*1538 = 492768 bits
	 * slot = 8*1538 = 12304 bits -> ceil = 41 packets of 6 cells (1536 bytes)
	 * headroom = 1536 (crossing packet) + 41 * 1536 = 64512 */
	struct pfc_mmu_port_config pc;
	pfc_mmu_port_config_init(&pc, 100000000000ull, 100, 1514);
	assert_int_equal(pc.response_bits, 447488);
	assert_int_equal(pfc_mmu_headroom_bytes(&pc, 256), 64512);
	/* longer cable, more headroom: +1000 ns round trip each way adds 200000 bits */
	pc.cable_delay_ns = 1100;
	assert_int_equal(pfc_mmu_headroom_bytes(&pc, 256), 1536 + 57 * 1536);
	/* sized for 64-byte packets: 88-byte slots each holding one 256-byte cell */
	pfc_mmu_port_config_init(&pc, 100000000000ull, 100, 1514);
	pc.headroom_pkt_bytes = 64;
	assert_int_equal(pfc_mmu_headroom_bytes(&pc, 256), 1536 + 700 * 256);
	/* explicit value wins, rounded up to cells; degenerate inputs give 0 */
	pc.headroom_bytes = 1000;
	assert_int_equal(pfc_mmu_headroom_bytes(&pc, 256), 1024);
	pc.headroom_bytes = 0;
	pc.rate_bps = 0;
	assert_int_equal(pfc_mmu_headroom_bytes(&pc, 256), 0);
	assert_int_equal(pfc_mmu_headroom_bytes(NULL, 256), 0);
	/* rates scale it: 10G < 100G < 400G */
	struct pfc_mmu_port_config a, b, c;
	pfc_mmu_port_config_init(&a, 10000000000ull, 100, 1514);
	pfc_mmu_port_config_init(&b, 100000000000ull, 100, 1514);
	pfc_mmu_port_config_init(&c, 400000000000ull, 100, 1514);
	assert_true(pfc_mmu_headroom_bytes(&a, 256) < pfc_mmu_headroom_bytes(&b, 256));
	assert_true(pfc_mmu_headroom_bytes(&b, 256) < pfc_mmu_headroom_bytes(&c, 256));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_headroom_formula),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
