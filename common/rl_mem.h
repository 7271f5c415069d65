/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rl_mem: zeroed arrays on whole cache lines of their own, for state that one
 * thread writes as it runs (a partition's switches, MMUs, timer arrays,
 * queues): calloc gives 16 bytes, and malloc puts small blocks side by side,
 * so the arrays of two partitions' nodes, allocated at set-up by one thread,
 * could share a line that each thread's writes take from the other core
 * (false sharing; what removing it gained was within the noise:
 * docs/dev/PERF-HISTORY.md). Header only, libc only: pfc/, the data plane and
 * tests built without DPDK all use it.
 */
#ifndef RL_MEM_H
#define RL_MEM_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RL_LINE 64 /* bytes of a cache line (RTE_CACHE_LINE_SIZE on x86; checked against it in dp_types.h) */

/*
 * n zeroed elements of size bytes (n == 0: one), line-aligned, rounded up to
 * whole lines; free with free(). NULL when out of memory or when the size
 * overflows.
 */
static inline void *rl_zalloc_lines(size_t n, size_t size)
{
	if (n == 0)
		n = 1;
	if (size && n > (SIZE_MAX - RL_LINE) / size)
		return NULL; /* (n * size rounded up to whole lines would not fit) */
	size_t bytes = (n * size + RL_LINE - 1) / RL_LINE * RL_LINE; /* (aligned_alloc: whole lines) */
	if (bytes == 0)
		bytes = RL_LINE;
	void *p = aligned_alloc(RL_LINE, bytes);

	if (p)
		memset(p, 0, bytes);
	return p;
}

/*
 * p (old_n elements of size bytes, from rl_zalloc_lines() or NULL) grown to
 * n elements: the first old_n copied, the rest zeroed, on lines of their own;
 * p is freed. NULL when out of memory (p is then kept).
 */
static inline void *rl_grow_lines(void *p, size_t old_n, size_t n, size_t size)
{
	void *q = rl_zalloc_lines(n, size);

	if (q && p)
		memcpy(q, p, (old_n < n ? old_n : n) * size);
	if (q)
		free(p);
	return q;
}

#endif /* RL_MEM_H */
