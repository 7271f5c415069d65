/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_keys: a module's key=value vocabulary as one table, as a DPDK driver owns
 * its devargs: each row is a key, what it takes, its default, what it means
 * and its setter. The module parses with it and prints its help from it, so
 * the two cannot disagree (--gen, --rdma and --nic each own one; --coll's is
 * nic_emul/ne_coll_keys.c).
 */
#ifndef DP_KEYS_H
#define DP_KEYS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How a row without a setter reads its value into its field. */
enum dp_key_kind {
	DP_KEY_FN,    /* the row's set() reads it */
	DP_KEY_UINT,  /* a whole number in [lo, hi] (dp_parse_u64) */
	DP_KEY_BYTES, /* a size with K, M, G, KB... in [lo, hi] (dp_parse_bytes) */
	DP_KEY_TIME,  /* a time with ns, us, ms, s, in nanoseconds (dp_parse_time) */
};

struct dp_key {
	const char *key;
	const char *values; /* what it takes: "1..64", "udp|roce|pfc", "TIME" */
	const char *dflt;   /* its default as text; NULL: none to show */
	const char *help;   /* what it means */
	int (*set)(void *obj, const char *value); /* 0, or -1 for a bad value (obj unchanged) */
	/* Rows whose value is one number in one unsigned field need no setter: */
	enum dp_key_kind kind;
	size_t off, width; /* the field: offsetof and sizeof */
	uint64_t lo, hi;   /* the values it takes (not for DP_KEY_TIME) */
};

/* A row's field: DP_KEY_FIELD(DP_KEY_UINT, struct dp_gen, flows, 1, 1u << 20). */
#define DP_KEY_FIELD(kind_, type, field, lo_, hi_)                                              \
	.kind = (kind_), .off = offsetof(type, field), .width = sizeof(((type *)0)->field),      \
	.lo = (lo_), .hi = (hi_)

/*
 * key=value through the n rows of tab into obj: the row's setter, or its field. Returns 0, or -EINVAL with
 * "WHAT: bad KEY=VALUE: takes VALUES" or, for a key not in the table,
 * "WHAT: bad KEY=VALUE: unknown key (did you mean K?); keys: a, b, ..." in err.
 */
int dp_keys_set(const struct dp_key *tab, size_t n, void *obj, const char *what, const char *key,
		const char *value, char *err, size_t errlen);

/* Print title, then each row: the key, what it takes, [its default], what it means. */
void dp_keys_help(const struct dp_key *tab, size_t n, const char *title, FILE *out);

#endif /* DP_KEYS_H */
