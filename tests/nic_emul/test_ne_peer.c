/* SPDX-License-Identifier: BSD-3-Clause */
/* ne_peer: ibv_rc_pingpong's address message, formatted and parsed; bad messages refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ne_peer.h"

static void test_round_trip(void **state)
{
	struct ne_peer_dest d = {.lid = 0, .qpn = 0x11, .psn = 0xa1b2c3}, back;
	char msg[NE_PEER_MSG_LEN];

	(void)state;
	d.gid[10] = d.gid[11] = 0xff;
	d.gid[12] = 10;
	d.gid[15] = 1;
	ne_peer_format(&d, msg);
	assert_string_equal(msg, "0000:000011:a1b2c3:00000000000000000000ffff0a000001");
	assert_int_equal(ne_peer_parse(msg, sizeof(msg), &back), 0);
	assert_memory_equal(&d, &back, sizeof(d));
	/* no NUL inside len: still parsed (the wire gives bytes) */
	assert_int_equal(ne_peer_parse(msg, strlen(msg), &back), 0);
	assert_memory_equal(&d, &back, sizeof(d));
}

static void test_refused(void **state)
{
	static const char *bad[] = {
		"",
		"0000:000011:a1b2c3",                                      /* no GID */
		"00000:000011:a1b2c3:00000000000000000000ffff0a000001",    /* LID wider than 16 bits */
		"0000:1000000:a1b2c3:00000000000000000000ffff0a000001",    /* QPN wider than 24 bits */
		"0000:000011:a1b2c3:00000000000000000000ffff0a00000",      /* GID one digit short */
		"0000:000011:a1b2c3:00000000000000000000ffff0a00000g",     /* not hex */
		"0000:-00011:a1b2c3:00000000000000000000ffff0a000001",     /* a sign */
		" 000:000011:a1b2c3:00000000000000000000ffff0a000001",     /* a space */
	};
	struct ne_peer_dest d;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ne_peer_parse(bad[i], strlen(bad[i]) + 1, &d), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
