/* SPDX-License-Identifier: BSD-3-Clause */
/* dp_keys: a module's key=value table: set a key, print the help (dp_keys.h). */
#include "dp_keys.h"

#include <errno.h>
#include <string.h>

#include "dp_units.h"
#include "rl_suggest.h"

#define KEYS_MAX 32u /* rows a table may have (the nearest-key search keeps their names) */

/* "WHAT: bad KEY=VALUE: unknown key (did you mean K?); keys: a, b, c" */
static int unknown_key(const struct dp_key *tab, size_t n, const char *what, const char *key,
		       const char *value, char *err, size_t errlen)
{
	const char *names[KEYS_MAX];
	char list[256] = "";
	size_t o = 0;

	for (size_t i = 0; i < n && i < KEYS_MAX; i++) {
		names[i] = tab[i].key;
		if (o < sizeof(list))
			o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "",
					      tab[i].key);
	}
	const char *near = rl_suggest(key, names, n < KEYS_MAX ? n : KEYS_MAX);
	snprintf(err, errlen, "%s: bad %s=%s: unknown key%s%s%s; keys: %s", what, key, value,
		 near ? " (did you mean " : "", near ? near : "", near ? "?)" : "", list);
	return -EINVAL;
}

/* A field row's value into obj's field: 0, or -1 for a bad value (obj unchanged). */
static int set_field(const struct dp_key *k, void *obj, const char *value)
{
	unsigned char *f = (unsigned char *)obj + k->off;
	uint64_t n;
	int rc;

	if (k->kind == DP_KEY_TIME)
		rc = dp_parse_time(value, &n);
	else if (k->kind == DP_KEY_BYTES)
		rc = dp_parse_bytes(value, &n);
	else
		rc = dp_parse_u64(value, &n);
	if (rc < 0 || (k->kind != DP_KEY_TIME && (n < k->lo || n > k->hi)))
		return -1;
	switch (k->width) {
	case 1: *(uint8_t *)f = (uint8_t)n; return 0;
	case 2: *(uint16_t *)f = (uint16_t)n; return 0;
	case 4: *(uint32_t *)f = (uint32_t)n; return 0;
	case 8: *(uint64_t *)f = n; return 0;
	}
	return -1; /* a table's mistake: no such unsigned field */
}

int dp_keys_set(const struct dp_key *tab, size_t n, void *obj, const char *what, const char *key,
		const char *value, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(tab[i].key, key))
			continue;
		if ((tab[i].set ? tab[i].set(obj, value) : set_field(&tab[i], obj, value)) == 0)
			return 0;
		snprintf(err, errlen, "%s: bad %s=%s: takes %s", what, key, value, tab[i].values);
		return -EINVAL;
	}
	return unknown_key(tab, n, what, key, value, err, errlen);
}

void dp_keys_help(const struct dp_key *tab, size_t n, const char *title, FILE *out)
{
	fprintf(out, "%s\n", title);
	for (size_t i = 0; i < n; i++) {
		char dflt[48] = "";
		if (tab[i].dflt)
			snprintf(dflt, sizeof(dflt), " [%s]", tab[i].dflt);
		fprintf(out, "  %-10s %s%s\n  %-10s   %s\n", tab[i].key, tab[i].values, dflt, "",
			tab[i].help);
	}
}
