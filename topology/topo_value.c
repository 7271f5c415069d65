/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Topology loader, part 1: the names of roles, load balancers and attach
 * kinds, and the scalar values of a topology file (names, integers, enums,
 * booleans, fractions, numbers with units), each read with FILE:LINE errors.
 * See topo.c for how loading is organised.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_priv.h"

/* ------------------------------------------------------------------ names */

static const char *const role_names[TOPO_ROLE_COUNT] = {"rtsw", "ctsw", "atsw"};
static const char *const lb_names[TOPO_LB_COUNT] = {"ecmp", "resilient", "flowlet", "pinning"};
const char *const topo_attach_names[TOPO_ATTACH_COUNT] = {
	"veth", "vhost", "pci", "emulated", "net_null", "dpdk",
};

static int name_index(const char *const *names, int n, const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

const char *topo_role_name(enum topo_role role)
{
	return (unsigned)role < TOPO_ROLE_COUNT ? role_names[role] : NULL;
}

const char *topo_lb_name(enum topo_lb lb)
{
	return (unsigned)lb < TOPO_LB_COUNT ? lb_names[lb] : NULL;
}

const char *topo_attach_name(enum topo_attach attach)
{
	return (unsigned)attach < TOPO_ATTACH_COUNT ? topo_attach_names[attach] : NULL;
}

int topo_role_from_name(const char *name)
{
	return name_index(role_names, TOPO_ROLE_COUNT, name);
}

int topo_lb_from_name(const char *name)
{
	return name_index(lb_names, TOPO_LB_COUNT, name);
}

int topo_attach_from_name(const char *name)
{
	return name_index(topo_attach_names, TOPO_ATTACH_COUNT, name);
}

char *topo_devargs_name(const char *devargs, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", (int)strcspn(devargs, ","), devargs);
	return buf;
}

bool topo_valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= TOPO_NAME_MAX)
		return false;
	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
	      (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.'))
			return false;
	}
	return true;
}

int topo_get_name(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		  char buf[TOPO_NAME_MAX])
{
	char tmp[256];
	if (topo_yaml_scalar(c, v, key, key_line, tmp, sizeof(tmp)))
		return -1;
	if (!topo_valid_name(tmp))
		return topo_yaml_fail(
			c, topo_yaml_line(v, key_line),
			"%s: invalid name '%s' (1-%d characters: letters, digits, '_', '-', "
			"'.'; starting with a letter or digit)",
			key, tmp, TOPO_NAME_MAX - 1);
	memcpy(buf, tmp, strlen(tmp) + 1);
	return 0;
}

int topo_get_uint(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		  uint64_t min, uint64_t max, uint64_t *out)
{
	char tmp[64];
	if (topo_yaml_scalar(c, v, key, key_line, tmp, sizeof(tmp)))
		return -1;
	int line = topo_yaml_line(v, key_line);
	const char *p = tmp;
	int base = 10;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	bool ok = *p != '\0';
	for (const char *q = p; *q; q++)
		if (!(base == 16 ? ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f') ||
				    (*q >= 'A' && *q <= 'F'))
				 : (*q >= '0' && *q <= '9')))
			ok = false;
	if (!ok)
		return topo_yaml_fail(c, line, "%s: expected a non-negative integer, got '%s'", key,
				      tmp);
	errno = 0;
	unsigned long long x = strtoull(p, NULL, base);
	if (errno || x < min || x > max)
		return topo_yaml_fail(c, line, "%s: %s is out of range (%" PRIu64 "..%" PRIu64 ")",
				      key, tmp, min, max);
	*out = x;
	return 0;
}

int topo_get_enum(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		  int (*from_name)(const char *), const char *choices, int *out)
{
	char tmp[64];
	if (topo_yaml_scalar(c, v, key, key_line, tmp, sizeof(tmp)))
		return -1;
	int x = from_name(tmp);
	if (x < 0)
		return topo_yaml_fail(c, topo_yaml_line(v, key_line),
				      "%s: unknown value '%s' (expected one of: %s)", key, tmp,
				      choices);
	*out = x;
	return 0;
}

int topo_get_bool(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		  bool *out)
{
	char tmp[16];
	if (topo_yaml_scalar(c, v, key, key_line, tmp, sizeof(tmp)))
		return -1;
	if (!strcmp(tmp, "true") || !strcmp(tmp, "True") || !strcmp(tmp, "TRUE"))
		*out = true;
	else if (!strcmp(tmp, "false") || !strcmp(tmp, "False") || !strcmp(tmp, "FALSE"))
		*out = false;
	else
		return topo_yaml_fail(c, topo_yaml_line(v, key_line),
				      "%s: expected true or false, got '%s'", key, tmp);
	return 0;
}

/* A number in [0, 1], or a percentage "0.5%". */
int topo_get_fraction(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		      double *out)
{
	char tmp[64];
	if (topo_yaml_scalar(c, v, key, key_line, tmp, sizeof(tmp)))
		return -1;
	int line = topo_yaml_line(v, key_line);
	char *end = NULL;
	errno = 0;
	double x = strtod(tmp, &end);
	bool pct = end && *end == '%';
	if (pct)
		end++;
	if (errno || end == tmp || !end || *end != '\0' || !isfinite(x) ||
	    !((tmp[0] >= '0' && tmp[0] <= '9') || tmp[0] == '.' || tmp[0] == '-'))
		return topo_yaml_fail(
			c, line,
			"%s: expected a number between 0 and 1 (or a percentage), got '%s'", key,
			tmp);
	if (pct)
		x /= 100.0;
	if (x < 0.0 || x > 1.0)
		return topo_yaml_fail(c, line, "%s: %s is out of range (0..1, or 0%%..100%%)", key,
				      tmp);
	*out = x;
	return 0;
}

/* Microseconds, as in flowlet_timeout_us: a bare number scaled to ns. */
const struct rl_unit topo_us_units[] = {{"", 1000ull}, {NULL, 0}};

int topo_parse_rate(const char *s, uint64_t *bps)
{
	uint64_t x;
	if (!s || !bps || rl_units_parse(s, topo_rate_units, false, &x) != RL_UNITS_OK || x == 0 ||
	    x > MAX_RATE)
		return -1;
	*bps = x;
	return 0;
}

int topo_parse_duration(const char *s, uint64_t *ns)
{
	uint64_t x;
	if (!s || !ns || rl_units_parse(s, topo_time_units, true, &x) != RL_UNITS_OK || x > MAX_AT)
		return -1;
	*ns = x;
	return 0;
}

/* kind: "rate" / "duration" / "size", hint: what a valid value looks like. */
int topo_get_scaled(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		    const struct rl_unit *units, bool unitless_zero, const char *kind,
		    const char *hint, uint64_t min, uint64_t max, uint64_t *out)
{
	char tmp[64];
	if (topo_yaml_scalar(c, v, key, key_line, tmp, sizeof(tmp)))
		return -1;
	int line = topo_yaml_line(v, key_line);
	uint64_t x = 0;
	switch (rl_units_parse(tmp, units, unitless_zero, &x)) {
	case RL_UNITS_OK:
		break;
	case RL_UNITS_SYNTAX:
		return topo_yaml_fail(c, line, "%s: '%s' is not a valid %s (%s)", key, tmp, kind,
				      hint);
	case RL_UNITS_UNIT:
		return topo_yaml_fail(c, line, "%s: '%s' has a bad or missing unit (%s)", key, tmp,
				      hint);
	case RL_UNITS_FRACTION:
		return topo_yaml_fail(c, line, "%s: '%s' is not a whole number of the base unit",
				      key, tmp);
	case RL_UNITS_RANGE:
		return topo_yaml_fail(c, line, "%s: '%s' is too large", key, tmp);
	}
	if (x < min || x > max) {
		if (x == 0)
			return topo_yaml_fail(c, line, "%s: must not be zero", key);
		return topo_yaml_fail(c, line, "%s: '%s' is out of range", key, tmp);
	}
	*out = x;
	return 0;
}
