/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_mem: zeroed arrays on whole cache lines of their own, for structs laid
 * out by line (channels, partitions, flow records) and for anything a
 * partition's thread writes as it runs (timer arrays, queues): calloc gives
 * 16 bytes, and malloc puts small blocks side by side, so the arrays of two
 * partitions' nodes, allocated at set-up by one thread, could share a line
 * that each thread's writes take from the other core (false sharing; what
 * removing it gained was within the noise: docs/PERF-HISTORY.md).
 */
#ifndef DP_MEM_H
#define DP_MEM_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DP_LINE 64 /* bytes of a cache line (RTE_CACHE_LINE_SIZE on x86; no DPDK here: the engine's tests build without it) */

/* n zeroed elements of size bytes, line-aligned (free with free()); NULL when out of memory. */
static inline void *dp_zalloc_lines(size_t n, size_t size)
{
	if (n == 0)
		n = 1;
	if (size && n > (SIZE_MAX - DP_LINE) / size)
		return NULL; /* (n * size rounded up to whole lines would not fit) */
	size_t bytes = (n * size + DP_LINE - 1) / DP_LINE * DP_LINE; /* (aligned_alloc: whole lines) */
	void *p = aligned_alloc(DP_LINE, bytes);

	if (p)
		memset(p, 0, bytes);
	return p;
}

/*
 * p (old_n elements of size bytes, from dp_zalloc_lines() or NULL) grown to
 * n elements: the first old_n copied, the rest zeroed, on lines of their own;
 * p is freed. NULL when out of memory (p is then kept).
 */
static inline void *dp_grow_lines(void *p, size_t old_n, size_t n, size_t size)
{
	void *q = dp_zalloc_lines(n, size);

	if (q && p)
		memcpy(q, p, (old_n < n ? old_n : n) * size);
	if (q)
		free(p);
	return q;
}

#endif /* DP_MEM_H */
