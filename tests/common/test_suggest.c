/* SPDX-License-Identifier: BSD-3-Clause */
/* common/rl_suggest.h: the nearest word for an error message, distances worked out by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rl_suggest.h"

static void test_distance(void **state)
{
	(void)state;
	assert_int_equal(rl_edit_distance("window", "window"), 0);
	assert_int_equal(rl_edit_distance("windw", "window"), 1);    /* one insertion */
	assert_int_equal(rl_edit_distance("all_reduce", "allreduce"), 0); /* '_' counts as nothing */
	assert_int_equal(rl_edit_distance("QPS", "qps"), 0);         /* case folded */
	assert_int_equal(rl_edit_distance("mode", "node"), 1);       /* one substitution */
	assert_int_equal(rl_edit_distance("", "abc"), 3);
}

static void test_suggest(void **state)
{
	static const char *const keys[] = {"op", "hosts", "sizes", "window", "chunk", "iters"};
	char longw[200];

	(void)state;
	assert_string_equal(rl_suggest("windw", keys, 6), "window");
	assert_string_equal(rl_suggest("size", keys, 6), "sizes");
	assert_null(rl_suggest("model", keys, 6)); /* 4 edits from the nearest: no guess */
	assert_null(rl_suggest("x", keys, 6));     /* one letter: 1 edit allowed, none is that near */
	memset(longw, 'a', sizeof(longw) - 1);
	longw[sizeof(longw) - 1] = '\0';
	assert_null(rl_suggest(longw, keys, 6)); /* too long to compare: never a guess */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_suggest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
