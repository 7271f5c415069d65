/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rl_suggest: the nearest of a list of words to a misspelt one, for error
 * messages ("op=all_reduce: ... (did you mean allreduce?)"). Header-only,
 * libc only.
 */
#ifndef RL_SUGGEST_H
#define RL_SUGGEST_H

#include <stddef.h>
#include <string.h>

#define RL_SUGGEST_WORD_MAX 64u /* longer words are never suggested */

/*
 * Edit distance (insertions, deletions, substitutions; case-insensitive, '_'
 * and '-' count as nothing) between a and b, or RL_SUGGEST_WORD_MAX when
 * either is longer than that.
 */
static inline size_t rl_edit_distance(const char *a, const char *b)
{
	char x[RL_SUGGEST_WORD_MAX], y[RL_SUGGEST_WORD_MAX];
	size_t row[RL_SUGGEST_WORD_MAX + 1], n = 0, m = 0;

	for (; *a; a++)
		if (*a != '_' && *a != '-') {
			if (n == RL_SUGGEST_WORD_MAX)
				return RL_SUGGEST_WORD_MAX;
			x[n++] = (char)(*a | 0x20);
		}
	for (; *b; b++)
		if (*b != '_' && *b != '-') {
			if (m == RL_SUGGEST_WORD_MAX)
				return RL_SUGGEST_WORD_MAX;
			y[m++] = (char)(*b | 0x20);
		}
	for (size_t j = 0; j <= m; j++)
		row[j] = j;
	for (size_t i = 1; i <= n; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t up = row[j], best = diag + (x[i - 1] != y[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[m];
}

/*
 * The word of cands[0..n) nearest to word, if it is near enough to be a
 * likely typo (at most a third of its length, and at least 1, edits away);
 * NULL when none is.
 */
static inline const char *rl_suggest(const char *word, const char *const *cands, size_t n)
{
	size_t len = strlen(word), limit = len / 3 > 1 ? len / 3 : 1, best = limit + 1;
	const char *pick = NULL;

	for (size_t i = 0; i < n; i++) {
		size_t d = rl_edit_distance(word, cands[i]);
		if (d < best && d < RL_SUGGEST_WORD_MAX) { /* (too long to compare: never a typo) */
			best = d;
			pick = cands[i];
		}
	}
	return pick;
}

#endif /* RL_SUGGEST_H */
