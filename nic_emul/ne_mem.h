/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zeroed memory for large tables that are mostly never touched: a NIC's QP
 * table sized for a connection to every peer, an incast root's staging area
 * (16 GiB of addresses at 1,024 ranks, with data=off never written). The
 * kernel supplies each page when it is first written, whatever
 * MALLOC_PERTURB_ says (with it set, glibc's calloc writes every byte of
 * the block, and a 16 GiB calloc then fills memory). Not reserved against
 * the commit limit (MAP_NORESERVE): only what is written is used.
 * And a growing array of uint32_t (ne_u32_push).
 */
#ifndef NE_MEM_H
#define NE_MEM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

/* len zeroed bytes (len > 0), or NULL. Free with ne_lazy_free(p, len). */
static inline void *ne_lazy_zalloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Free what ne_lazy_zalloc(len) gave (p may be NULL). */
static inline void ne_lazy_free(void *p, size_t len)
{
	if (p != NULL)
		munmap(p, len);
}

/* Append v to the array *a of *n elements with room for *cap (doubled when
 * full, from 4). 0, or -ENOMEM with *a as it was. */
static inline int ne_u32_push(uint32_t **a, uint32_t *n, uint32_t *cap, uint32_t v)
{
	if (*n == *cap) {
		uint32_t nc = *cap ? 2 * *cap : 4;
		uint32_t *p = realloc(*a, nc * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*a = p;
		*cap = nc;
	}
	(*a)[(*n)++] = v;
	return 0;
}

#endif /* NE_MEM_H */
