/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PFC frames checked against Wireshark's dissector: encode frames, write them
 * to a pcap (libpcap, EN10MB), read them back with tshark -T fields and
 * compare every field. Usage: test_pfc_tshark PATH_TO_TSHARK. Without tshark
 * the test FAILS (meson passes no path when find_program found none).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#ifdef PFC_HAVE_PCAP
#include <pcap/pcap.h>
#endif

#include "pfc_frame.h"
#include "pfc_mmu.h" /* pfc_rng */

static const char *tshark_path;

#define N_FRAMES 40

static void make_frames(struct pfc_frame *fr)
{
	struct pfc_rng rng;
	pfc_rng_seed(&rng, 42);
	for (unsigned i = 0; i < N_FRAMES; i++) {
		uint8_t src[6] = { 0x02, 0x00, 0x5e, 0x10, (uint8_t)(i >> 8), (uint8_t)i };
		pfc_frame_init(&fr[i], src);
		uint8_t en = (uint8_t)pfc_rng_next(&rng);
		if (i == 0)
			en = 0xff; /* all XOFF, maximum time */
		if (i == 1)
			en = 0xff; /* all XON */
		if (i == 2)
			en = 1u << 3; /* the usual RoCE priority alone */
		for (unsigned p = 0; p < PFC_NUM_PRIO; p++) {
			if (!(en & (1u << p)))
				continue;
			uint16_t t = (uint16_t)pfc_rng_next(&rng);
			if (i == 0)
				t = 0xffff;
			if (i == 1)
				t = 0;
			pfc_frame_set(&fr[i], p, t);
		}
	}
}

static void test_tshark(void **state)
{
	(void)state;
	if (!tshark_path || !*tshark_path)
		fail_msg("tshark not found: install it (Debian: apt-get install tshark) and "
			 "reconfigure; this test checks PFC frames against Wireshark's dissector");
	struct pfc_frame fr[N_FRAMES];
	make_frames(fr);
#ifndef PFC_HAVE_PCAP
	fail_msg("built without libpcap (apt-get install libpcap-dev): cannot write the pcap");
#else
	if (access(tshark_path, X_OK) != 0)
		fail_msg("tshark at %s is not executable", tshark_path);

	char path[] = "/tmp/rocelab-pfc-tshark-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	assert_non_null(p);
	pcap_dumper_t *d = pcap_dump_open(p, path);
	if (!d)
		fail_msg("pcap_dump_open(%s): %s", path, pcap_geterr(p));
	for (unsigned i = 0; i < N_FRAMES; i++) {
		uint8_t buf[PFC_FRAME_LEN];
		assert_int_equal(pfc_frame_encode(&fr[i], buf, sizeof(buf)), PFC_FRAME_LEN);
		struct pcap_pkthdr h = { .ts = { .tv_sec = 1, .tv_usec = (int)i },
					 .caplen = PFC_FRAME_LEN, .len = PFC_FRAME_LEN };
		pcap_dump((u_char *)d, &h, buf);
	}
	pcap_dump_close(d);
	pcap_close(p);

	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "'%s' -r '%s' -T fields -E separator=, -e eth.dst -e eth.type -e macc.opcode "
		 "-e macc.cbfc.enbv -e macc.cbfc.pause_time.c0 -e macc.cbfc.pause_time.c1 "
		 "-e macc.cbfc.pause_time.c2 -e macc.cbfc.pause_time.c3 "
		 "-e macc.cbfc.pause_time.c4 -e macc.cbfc.pause_time.c5 "
		 "-e macc.cbfc.pause_time.c6 -e macc.cbfc.pause_time.c7 -e _ws.expert 2>/dev/null",
		 tshark_path, path);
	FILE *out = popen(cmd, "r");
	assert_non_null(out);
	char line[512];
	unsigned n = 0;
	while (fgets(line, sizeof(line), out)) {
		line[strcspn(line, "\r\n")] = 0;
		if (n >= N_FRAMES)
			fail_msg("tshark printed more lines than frames: %s", line);
		const struct pfc_frame *f = &fr[n];
		char *fields[13] = { 0 };
		unsigned nf = 0;
		char *s = line;
		for (; nf < 13; nf++) {
			fields[nf] = s;
			char *comma = strchr(s, ',');
			if (!comma) {
				nf++;
				break;
			}
			*comma = 0;
			s = comma + 1;
		}
		if (nf < 12)
			fail_msg("frame %u: tshark gave %u fields", n, nf);
		assert_string_equal(fields[0], "01:80:c2:00:00:01");
		assert_int_equal(strtoul(fields[1], NULL, 0), PFC_ETHERTYPE);
		assert_int_equal(strtoul(fields[2], NULL, 0), PFC_OPCODE);
		if (strtoul(fields[3], NULL, 0) != f->enable)
			fail_msg("frame %u: Wireshark enable vector %s, encoded 0x%02x", n, fields[3],
				 f->enable);
		for (unsigned pr = 0; pr < PFC_NUM_PRIO; pr++)
			if (strtoul(fields[4 + pr], NULL, 0) != f->time[pr])
				fail_msg("frame %u priority %u: Wireshark time %s, encoded %u", n, pr,
					 fields[4 + pr], f->time[pr]);
		/* no expert info (bad destination, reserved bits set, ...) */
		if (nf > 12 && fields[12] && *fields[12])
			fail_msg("frame %u: Wireshark expert info: %s", n, fields[12]);
		n++;
	}
	int rc = pclose(out);
	unlink(path);
	if (rc != 0)
		fail_msg("tshark exited with status %d", rc);
	assert_int_equal(n, N_FRAMES);
#endif
}

int main(int argc, char **argv)
{
	tshark_path = argc > 1 ? argv[1] : NULL;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tshark),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
