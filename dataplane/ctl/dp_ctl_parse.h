/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_ctl_parse: the parameters of the telemetry commands (dp_ctl.h), read
 * without DPDK, so they can be tested and fuzzed on their own. A parameter
 * string comes from whoever connects to the telemetry socket: anything.
 */
#ifndef DP_CTL_PARSE_H
#define DP_CTL_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "topo.h"

/* Longest switch or link name a set command takes. */
#define DP_CTL_NAME_MAX 95

/* A link_set / switch_set command: which one, and up or down. */
struct dp_ctl_set {
	bool is_switch;
	bool up;
	uint32_t index; /* link or switch index in the topology */
};

/*
 * "NAME,up" or "NAME,down" for a link (is_switch false) or a switch of t.
 * Returns 0 and fills *out, or -EINVAL (no comma, unknown or too long a
 * name, a state other than up/down; params may be NULL).
 */
int dp_ctl_parse_set(const struct topo *t, const char *params, bool is_switch,
		     struct dp_ctl_set *out);

/* A table's row selector: true when params is NULL or empty, or name starts with it. */
bool dp_ctl_selected(const char *params, const char *name);

/* DPDK 22.11 accepts only letters, digits and '_' in dict keys: map the rest of k to '_'. */
void dp_ctl_key_clean(char *k);

#endif /* DP_CTL_PARSE_H */
