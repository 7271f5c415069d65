/* SPDX-License-Identifier: BSD-3-Clause */
/* dp_keys: a module's key=value table: set a key, print the help (dp_keys.h). */
#include "dp_keys.h"

#include <errno.h>
#include <string.h>

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

int dp_keys_set(const struct dp_key *tab, size_t n, void *obj, const char *what, const char *key,
		const char *value, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(tab[i].key, key))
			continue;
		if (tab[i].set(obj, value) == 0)
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
