/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the telemetry commands' parameters (dp_ctl_parse):
 * the input is what a client sends after a command name, "NAME,up|down" or a
 * row prefix, checked against the built-in 2x2x4 Clos. An accepted set
 * command names a link or switch that exists and says up or down; keys come
 * out with only letters, digits and '_'.
 * Built with -Dfuzz=true under clang; run by scripts/fuzz.sh.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "dp_ctl_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct topo *topo(void)
{
	static struct topo *t;
	char err[256];

	if (t == NULL && (t = topo_clos(2, 2, 4, err, sizeof(err))) == NULL)
		abort();
	return t;
}

static void check_set(const struct topo *t, const char *params, bool is_switch)
{
	struct dp_ctl_set c;

	if (dp_ctl_parse_set(t, params, is_switch, &c) != 0)
		return;
	const char *comma = strchr(params, ',');
	if (c.is_switch != is_switch || c.index >= (is_switch ? t->n_switches : t->n_links) ||
	    comma == NULL || strcmp(comma + 1, c.up ? "up" : "down") != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct topo *t = topo();
	char *p = malloc(size + 1); /* telemetry hands commands over as C strings */

	memcpy(p, data, size);
	p[size] = '\0';
	check_set(t, p, false);
	check_set(t, p, true);
	for (uint32_t i = 0; i < t->n_switches; i++)
		(void)dp_ctl_selected(p, t->switches[i].name);
	dp_ctl_key_clean(p);
	for (const char *k = p; *k; k++)
		if (!isalnum((unsigned char)*k) && *k != '_')
			abort();
	free(p);
	return 0;
}
