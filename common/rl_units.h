/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rl_units: the one grammar of sizes, rates and times, for every input
 * (command lines, topology, traffic and experiment files). Header-only,
 * libc only; exact integer arithmetic, no floating point.
 *
 * A value is digits, an optional fraction (.digits) and a unit from a table:
 *   SIZE  bytes. Binary: K, M, G, T and KiB, MiB, GiB, TiB (1K = 1KiB =
 *         1,024 bytes, as nccl-tests reads -b and -e: every collective size
 *         in rocelab is an nccl-tests size). Decimal: KB, MB, GB, TB (SI:
 *         1KB = 1,000 bytes, as switch buffer sizes are written). B or none:
 *         bytes. 'k' is neither, and refused.
 *   RATE  bit/s, always decimal: k, K, M, G, T, each with an optional bps.
 *   TIME  ns, us, ms, s; only 0 may omit the unit.
 * A fraction must come to a whole number of the base unit (1.5K = 1,536 B;
 * 0.5ns is refused).
 */
#ifndef RL_UNITS_H
#define RL_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct rl_unit {
	const char *name;
	uint64_t mult;
};

#define RL_KIB 1024ull
#define RL_MIB (1024ull * RL_KIB)
#define RL_GIB (1024ull * RL_MIB)
#define RL_TIB (1024ull * RL_GIB)

/* The tables (functions, so that a file using one table does not carry the others unused). */
static inline const struct rl_unit *rl_size_units(void)
{
	static const struct rl_unit t[] = {
		{"", 1},         {"B", 1},
		{"K", RL_KIB},   {"KiB", RL_KIB}, {"KB", 1000ull},
		{"M", RL_MIB},   {"MiB", RL_MIB}, {"MB", 1000000ull},
		{"G", RL_GIB},   {"GiB", RL_GIB}, {"GB", 1000000000ull},
		{"T", RL_TIB},   {"TiB", RL_TIB}, {"TB", 1000000000000ull},
		{NULL, 0},
	};
	return t;
}

static inline const struct rl_unit *rl_rate_units(void)
{
	static const struct rl_unit t[] = {
		{"", 1}, {"bps", 1},
		{"k", 1000ull}, {"K", 1000ull}, {"kbps", 1000ull}, {"Kbps", 1000ull},
		{"M", 1000000ull}, {"Mbps", 1000000ull},
		{"G", 1000000000ull}, {"Gbps", 1000000000ull},
		{"T", 1000000000000ull}, {"Tbps", 1000000000000ull},
		{NULL, 0},
	};
	return t;
}

static inline const struct rl_unit *rl_time_units(void)
{
	static const struct rl_unit t[] = {
		{"ns", 1}, {"us", 1000ull}, {"ms", 1000000ull}, {"s", 1000000000ull}, {NULL, 0},
	};
	return t;
}

/* What each grammar looks like, for messages. */
#define RL_SIZE_HINT "bytes: 4096, 64K or 64KiB (65,536), 64KB (64,000), 1.5M, 2G"
#define RL_RATE_HINT "bit/s: 100G, 25Gbps, 2.5G"
#define RL_TIME_HINT "0, 500ns, 1.5us, 2ms, 1s"

enum rl_units_err {
	RL_UNITS_OK,
	RL_UNITS_SYNTAX,   /* not digits[.digits] */
	RL_UNITS_UNIT,     /* a unit the table does not have (or none where one is needed) */
	RL_UNITS_FRACTION, /* not a whole number of the base unit */
	RL_UNITS_RANGE,    /* above 2^64 - 1 */
};

/* The digits of "12.5" into ip, frac and scale (10^digits after the point); p past them. */
static inline enum rl_units_err rl_units_number(const char **p, uint64_t *ip, uint64_t *frac,
						uint64_t *scale)
{
	const char *s = *p;

	*ip = 0, *frac = 0, *scale = 1;
	if (!(*s >= '0' && *s <= '9'))
		return RL_UNITS_SYNTAX;
	for (; *s >= '0' && *s <= '9'; s++)
		if (__builtin_mul_overflow(*ip, 10, ip) || __builtin_add_overflow(*ip, *s - '0', ip))
			return RL_UNITS_RANGE;
	if (*s == '.') {
		s++;
		if (!(*s >= '0' && *s <= '9'))
			return RL_UNITS_SYNTAX;
		for (int nd = 0; *s >= '0' && *s <= '9'; s++, nd++) {
			if (nd >= 18)
				return RL_UNITS_SYNTAX;
			*frac = *frac * 10 + (uint64_t)(*s - '0');
			*scale *= 10;
		}
	}
	*p = s;
	return RL_UNITS_OK;
}

/*
 * s in the grammar of units (rl_size_units(), rl_rate_units(), rl_time_units(),
 * or a table of the caller's) into *out, in the table's base unit. A unitless
 * 0 is taken where unitless_zero. Returns RL_UNITS_OK or what is wrong
 * (*out unchanged then).
 */
static inline enum rl_units_err rl_units_parse(const char *s, const struct rl_unit *units,
					       bool unitless_zero, uint64_t *out)
{
	uint64_t ip, frac, scale, whole, part;
	const char *p = s;
	enum rl_units_err e = rl_units_number(&p, &ip, &frac, &scale);

	if (e != RL_UNITS_OK)
		return e;
	while (*p == ' ')
		p++;
	const struct rl_unit *u = NULL;
	for (const struct rl_unit *q = units; q->name; q++)
		if (strcmp(q->name, p) == 0)
			u = q;
	if (!u) {
		if (*p == '\0' && unitless_zero && ip == 0 && frac == 0) {
			*out = 0;
			return RL_UNITS_OK;
		}
		return RL_UNITS_UNIT;
	}
	if (__builtin_mul_overflow(ip, u->mult, &whole) || __builtin_mul_overflow(frac, u->mult, &part))
		return RL_UNITS_RANGE;
	if (part % scale)
		return RL_UNITS_FRACTION;
	if (__builtin_add_overflow(whole, part / scale, &whole))
		return RL_UNITS_RANGE;
	*out = whole;
	return RL_UNITS_OK;
}

/* What err says about a value, for a message ("bad unit", ...). */
static inline const char *rl_units_why(enum rl_units_err err)
{
	switch (err) {
	case RL_UNITS_SYNTAX: return "not a number";
	case RL_UNITS_UNIT: return "bad or missing unit";
	case RL_UNITS_FRACTION: return "not a whole number of the base unit";
	case RL_UNITS_RANGE: return "too large";
	default: return "fine";
	}
}

#endif /* RL_UNITS_H */
