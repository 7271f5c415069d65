/* SPDX-License-Identifier: BSD-3-Clause */
/* dp_units: numbers with units and key=value lists on the command line, and wire time of a frame. */
#ifndef DP_UNITS_H
#define DP_UNITS_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfc_mmu.h"
#include "rl_units.h"
#include "topo.h"

/* "10G", "25Gbps", "100M": bit/s, as the topology format reads rates. Returns 0 or -1. */
static inline int dp_parse_rate(const char *s, uint64_t *bps)
{
	return topo_parse_rate(s, bps);
}

/* "2ms", "500us", "1s": nanoseconds, as the topology format reads durations. Returns 0 or -1. */
static inline int dp_parse_time(const char *s, uint64_t *ns)
{
	return topo_parse_duration(s, ns);
}

/* A whole number, decimal or 0x hex, nothing after it. Returns 0 or -1. */
static inline int dp_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	if (s[0] == '-' || s[0] == '\0')
		return -1;
	*v = strtoull(s, &end, 0);
	return errno || *end != '\0' ? -1 : 0;
}

/* Bytes in the one size grammar (common/rl_units.h): "4096", "64K", "1M", "64KB". 0 or -1. */
static inline int dp_parse_bytes(const char *s, uint64_t *v)
{
	return rl_units_parse(s, rl_size_units(), false, v) == RL_UNITS_OK ? 0 : -1;
}

/*
 * The one SRC>DST parser (--gen and --rdma specs, and the traffic files'
 * entries, which become such specs): "SRC>DST[:key=value,...]" split in place
 * in buf, a copy of spec. Sets *src and *dst to two different hosts of t and
 * *opts to the key=value text (NULL: none). Returns 0, or -EINVAL with
 * "WHAT 'SPEC': why" in err.
 */
static inline int dp_parse_pair(const struct topo *t, char *buf, const char *what,
				const char *spec, int *src, int *dst, char **opts, char *err,
				size_t errlen)
{
	char *gt;

	*opts = strchr(buf, ':');
	if (*opts)
		*(*opts)++ = '\0';
	gt = strchr(buf, '>');
	if (gt == NULL) {
		snprintf(err, errlen, "%s '%s': want SRC>DST[:key=value,...]", what, spec);
		return -EINVAL;
	}
	*gt = '\0';
	*src = topo_host_by_name(t, buf);
	*dst = topo_host_by_name(t, gt + 1);
	if (*src < 0 || *dst < 0 || *src == *dst) {
		snprintf(err, errlen, "%s '%s': %s", what, spec,
			 *src < 0 ? "unknown source host" : *dst < 0 ? "unknown destination host"
			 : "source and destination are the same host");
		return -EINVAL;
	}
	return 0;
}

/* One key=value of a list: 0 when taken, -1 when the key or value is bad. */
typedef int (*dp_kv_fn)(void *ctx, const char *key, const char *value);

/*
 * Walk a "key=value,key=value,..." list (split in place) and hand each pair
 * to fn. Returns 0, or -1 with *bad at the first token that has no '=' or
 * that fn refused (restored to "key=value" for the message).
 */
static inline int dp_kv_each(char *list, dp_kv_fn fn, void *ctx, const char **bad)
{
	char *save = NULL;

	for (char *tok = list ? strtok_r(list, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (eq == NULL) {
			*bad = tok;
			return -1;
		}
		*eq = '\0';
		if (fn(ctx, tok, eq + 1) < 0) {
			*eq = '=';
			*bad = tok;
			return -1;
		}
	}
	return 0;
}

/* Nanoseconds a frame of len bytes (no FCS) holds a link of rate_bps, with FCS, preamble and gap. */
static inline uint64_t dp_ser_ns(uint32_t len, uint64_t rate_bps)
{
	uint64_t bits = (uint64_t)(len + PFC_WIRE_OVERHEAD) * 8;

	return (bits * 1000000000ull + rate_bps - 1) / rate_bps;
}

#endif /* DP_UNITS_H */
