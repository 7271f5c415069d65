/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common/rl_units.h: the one grammar of sizes, rates and times. Every value
 * below is worked out by hand: K, M, G binary and KB, MB, GB decimal for
 * sizes; rates always decimal; times whole nanoseconds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "rl_units.h"

struct want {
	const char *text;
	enum rl_units_err err;
	uint64_t value;
};

static void expect(const struct rl_unit *units, bool zero, const struct want *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v = 12345;
		enum rl_units_err e = rl_units_parse(w[i].text, units, zero, &v);
		if (e != w[i].err || (e == RL_UNITS_OK && v != w[i].value) ||
		    (e != RL_UNITS_OK && v != 12345))
			fail_msg("'%s': got %d, %llu; want %d, %llu", w[i].text, e,
				 (unsigned long long)v, w[i].err, (unsigned long long)w[i].value);
	}
}

static void test_sizes(void **state)
{
	static const struct want w[] = {
		{"4096", RL_UNITS_OK, 4096},       {"4096B", RL_UNITS_OK, 4096},
		{"64K", RL_UNITS_OK, 65536},       {"64KiB", RL_UNITS_OK, 65536},
		{"64KB", RL_UNITS_OK, 64000},      {"1M", RL_UNITS_OK, 1048576},
		{"1MB", RL_UNITS_OK, 1000000},     {"1.5M", RL_UNITS_OK, 1572864},
		{"2G", RL_UNITS_OK, 2147483648ull}, {"2GB", RL_UNITS_OK, 2000000000ull},
		{"1T", RL_UNITS_OK, 1099511627776ull},
		{"64k", RL_UNITS_UNIT, 0},         {"64 KB", RL_UNITS_OK, 64000},
		{"1.0001K", RL_UNITS_FRACTION, 0}, {"K", RL_UNITS_SYNTAX, 0},
		{"-1", RL_UNITS_SYNTAX, 0},        {"1.", RL_UNITS_SYNTAX, 0},
		{"99999999999999999999", RL_UNITS_RANGE, 0}, {"17179869184G", RL_UNITS_RANGE, 0},
	};
	(void)state;
	expect(rl_size_units(), false, w, sizeof(w) / sizeof(w[0]));
}

static void test_rates(void **state)
{
	static const struct want w[] = {
		{"100G", RL_UNITS_OK, 100000000000ull}, {"25Gbps", RL_UNITS_OK, 25000000000ull},
		{"2.5G", RL_UNITS_OK, 2500000000ull},   {"100k", RL_UNITS_OK, 100000},
		{"1000000", RL_UNITS_OK, 1000000},      {"10 Mbps", RL_UNITS_OK, 10000000},
		{"1Gb", RL_UNITS_UNIT, 0},              {"0.5", RL_UNITS_FRACTION, 0},
	};
	(void)state;
	expect(rl_rate_units(), false, w, sizeof(w) / sizeof(w[0]));
}

static void test_times(void **state)
{
	static const struct want w[] = {
		{"0", RL_UNITS_OK, 0},          {"500ns", RL_UNITS_OK, 500},
		{"1.5us", RL_UNITS_OK, 1500},   {"2ms", RL_UNITS_OK, 2000000},
		{"1s", RL_UNITS_OK, 1000000000}, {"0.5ns", RL_UNITS_FRACTION, 0},
		{"250", RL_UNITS_UNIT, 0},      {"1min", RL_UNITS_UNIT, 0},
	};
	(void)state;
	expect(rl_time_units(), true, w, sizeof(w) / sizeof(w[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_times),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
