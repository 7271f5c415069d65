/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_mem: zeroed arrays on a cache-line boundary, for structs laid out by
 * line (channels, partitions, flow records): calloc gives 16 bytes.
 */
#ifndef DP_MEM_H
#define DP_MEM_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

/* n zeroed elements of size bytes, line-aligned (free with free()); NULL when out of memory. */
static inline void *dp_zalloc_lines(size_t n, size_t size)
{
	if (n == 0)
		n = 1;
	if (size && n > SIZE_MAX / size)
		return NULL;
	size_t bytes = RTE_ALIGN_CEIL(n * size, (size_t)RTE_CACHE_LINE_SIZE); /* (aligned_alloc: whole lines) */
	void *p = aligned_alloc(RTE_CACHE_LINE_SIZE, bytes);

	if (p)
		memset(p, 0, bytes);
	return p;
}

#endif /* DP_MEM_H */
