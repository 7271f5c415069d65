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

const struct unit topo_rate_units[] = {
	{"", 1}, {"bps", 1},
	{"k", 1000ull}, {"K", 1000ull}, {"kbps", 1000ull}, {"Kbps", 1000ull},
	{"M", 1000000ull}, {"Mbps", 1000000ull},
	{"G", 1000000000ull}, {"Gbps", 1000000000ull},
	{"T", 1000000000000ull}, {"Tbps", 1000000000000ull},
	{NULL, 0},
};

const struct unit topo_time_units[] = {
	{"ns", 1}, {"us", 1000ull}, {"ms", 1000000ull}, {"s", 1000000000ull}, {NULL, 0},
};

const struct unit topo_size_units[] = {
	{"", 1}, {"B", 1},
	{"KB", 1000ull}, {"KiB", 1024ull}, {"MB", 1000000ull}, {"MiB", 1048576ull},
	{NULL, 0},
};

/* Microseconds, as in flowlet_timeout_us: a bare number scaled to ns. */
const struct unit topo_us_units[] = {{"", 1000ull}, {NULL, 0}};

enum scaled_err { SC_OK, SC_SYNTAX, SC_UNIT, SC_FRACTION, SC_RANGE };

/* "12.5G" with the unit table: exact integer arithmetic, no floating point. */
static enum scaled_err parse_scaled(const char *s, const struct unit *units, bool unitless_zero,
				    uint64_t *out)
{
	uint64_t ip = 0, frac = 0, scale = 1;
	const char *p = s;
	if (!(*p >= '0' && *p <= '9'))
		return SC_SYNTAX;
	for (; *p >= '0' && *p <= '9'; p++)
		if (__builtin_mul_overflow(ip, 10, &ip) || __builtin_add_overflow(ip, *p - '0', &ip))
			return SC_RANGE;
	if (*p == '.') {
		p++;
		if (!(*p >= '0' && *p <= '9'))
			return SC_SYNTAX;
		for (int nd = 0; *p >= '0' && *p <= '9'; p++, nd++) {
			if (nd >= 18)
				return SC_SYNTAX;
			frac = frac * 10 + (uint64_t)(*p - '0');
			scale *= 10;
		}
	}
	while (*p == ' ')
		p++;
	const struct unit *u = NULL;
	for (const struct unit *q = units; q->name; q++)
		if (strcmp(q->name, p) == 0)
			u = q;
	if (!u) {
		if (*p == '\0' && unitless_zero && ip == 0 && frac == 0) {
			*out = 0;
			return SC_OK;
		}
		return SC_UNIT;
	}
	uint64_t whole, part;
	if (__builtin_mul_overflow(ip, u->mult, &whole))
		return SC_RANGE;
	if (__builtin_mul_overflow(frac, u->mult, &part))
		return SC_RANGE;
	if (part % scale)
		return SC_FRACTION;
	if (__builtin_add_overflow(whole, part / scale, &whole))
		return SC_RANGE;
	*out = whole;
	return SC_OK;
}

int topo_parse_rate(const char *s, uint64_t *bps)
{
	uint64_t x;
	if (!s || !bps || parse_scaled(s, topo_rate_units, false, &x) != SC_OK || x == 0 ||
	    x > MAX_RATE)
		return -1;
	*bps = x;
	return 0;
}

int topo_parse_duration(const char *s, uint64_t *ns)
{
	uint64_t x;
	if (!s || !ns || parse_scaled(s, topo_time_units, true, &x) != SC_OK || x > MAX_AT)
		return -1;
	*ns = x;
	return 0;
}

/* kind: "rate" / "duration" / "size", hint: what a valid value looks like. */
int topo_get_scaled(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		    const struct unit *units, bool unitless_zero, const char *kind,
		    const char *hint, uint64_t min, uint64_t max, uint64_t *out)
{
	char tmp[64];
	if (topo_yaml_scalar(c, v, key, key_line, tmp, sizeof(tmp)))
		return -1;
	int line = topo_yaml_line(v, key_line);
	uint64_t x = 0;
	switch (parse_scaled(tmp, units, unitless_zero, &x)) {
	case SC_OK:
		break;
	case SC_SYNTAX:
		return topo_yaml_fail(c, line, "%s: '%s' is not a valid %s (%s)", key, tmp, kind,
				      hint);
	case SC_UNIT:
		return topo_yaml_fail(c, line, "%s: '%s' has a bad or missing unit (%s)", key, tmp,
				      hint);
	case SC_FRACTION:
		return topo_yaml_fail(c, line, "%s: '%s' is not a whole number of the base unit",
				      key, tmp);
	case SC_RANGE:
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
