/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_ctl_parse.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

int dp_ctl_parse_set(const struct topo *t, const char *params, bool is_switch,
		     struct dp_ctl_set *out)
{
	char name[DP_CTL_NAME_MAX + 1];
	const char *comma = params ? strchr(params, ',') : NULL;

	if (comma == NULL || (size_t)(comma - params) >= sizeof(name))
		return -EINVAL;
	memcpy(name, params, (size_t)(comma - params));
	name[comma - params] = '\0';
	int idx = is_switch ? topo_switch_by_name(t, name) : topo_link_by_name(t, name);
	if (idx < 0 || (strcmp(comma + 1, "up") && strcmp(comma + 1, "down")))
		return -EINVAL;
	out->is_switch = is_switch;
	out->up = strcmp(comma + 1, "up") == 0;
	out->index = (uint32_t)idx;
	return 0;
}

bool dp_ctl_selected(const char *params, const char *name)
{
	return params == NULL || params[0] == '\0' || strncmp(name, params, strlen(params)) == 0;
}

void dp_ctl_key_clean(char *k)
{
	for (; *k; k++)
		if (!isalnum((unsigned char)*k) && *k != '_')
			*k = '_';
}
