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
#include <stdio.h>

struct dp_key {
	const char *key;
	const char *values; /* what it takes: "1..64", "udp|roce|pfc", "TIME" */
	const char *dflt;   /* its default as text; NULL: none to show */
	const char *help;   /* what it means */
	int (*set)(void *obj, const char *value); /* 0, or -1 for a bad value (obj unchanged) */
};

/*
 * key=value through the n rows of tab into obj. Returns 0, or -EINVAL with
 * "WHAT: bad KEY=VALUE: takes VALUES" or, for a key not in the table,
 * "WHAT: bad KEY=VALUE: unknown key (did you mean K?); keys: a, b, ..." in err.
 */
int dp_keys_set(const struct dp_key *tab, size_t n, void *obj, const char *what, const char *key,
		const char *value, char *err, size_t errlen);

/* Print title, then each row: the key, what it takes, [its default], what it means. */
void dp_keys_help(const struct dp_key *tab, size_t n, const char *title, FILE *out);

#endif /* DP_KEYS_H */
