/* SPDX-License-Identifier: BSD-3-Clause */
/* dp_ctl_parse: telemetry set commands, row prefixes, key cleaning (no DPDK). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dp_ctl_parse.h"

static void test_set(void **state)
{
	char err[256];
	struct topo *t = topo_clos(2, 2, 4, err, sizeof(err));
	struct dp_ctl_set c;
	int l = topo_link_by_name(t, t->links[3].name);
	char cmd[128];

	(void)state;
	assert_non_null(t);
	snprintf(cmd, sizeof(cmd), "%s,down", t->links[3].name);
	assert_int_equal(dp_ctl_parse_set(t, cmd, false, &c), 0);
	assert_false(c.is_switch);
	assert_false(c.up);
	assert_int_equal(c.index, (uint32_t)l);
	assert_int_equal(dp_ctl_parse_set(t, "spine1,up", true, &c), 0);
	assert_true(c.is_switch && c.up);
	assert_int_equal(c.index, (uint32_t)topo_switch_by_name(t, "spine1"));
	/* refused: no state, a bad state, unknown names, a switch as a link, NULL, too long */
	assert_int_equal(dp_ctl_parse_set(t, "spine1", true, &c), -EINVAL);
	assert_int_equal(dp_ctl_parse_set(t, "spine1,sideways", true, &c), -EINVAL);
	assert_int_equal(dp_ctl_parse_set(t, "spine9,up", true, &c), -EINVAL);
	assert_int_equal(dp_ctl_parse_set(t, "spine1,up", false, &c), -EINVAL);
	assert_int_equal(dp_ctl_parse_set(t, NULL, false, &c), -EINVAL);
	memset(cmd, 'a', sizeof(cmd));
	strcpy(cmd + DP_CTL_NAME_MAX + 1, ",up");
	assert_int_equal(dp_ctl_parse_set(t, cmd, true, &c), -EINVAL);
	topo_free(t);
}

static void test_selected_and_keys(void **state)
{
	char k[] = "leaf0-spine1.x";

	(void)state;
	assert_true(dp_ctl_selected(NULL, "leaf0"));
	assert_true(dp_ctl_selected("", "leaf0"));
	assert_true(dp_ctl_selected("lea", "leaf0"));
	assert_false(dp_ctl_selected("spine", "leaf0"));
	dp_ctl_key_clean(k);
	assert_string_equal(k, "leaf0_spine1_x");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_selected_and_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
