/* SPDX-License-Identifier: BSD-3-Clause */
/* dp_pool: the packet pool, on huge pages where the clock allows (dp_pool.h). */
#include "dp_pool.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#define HUGE_2M ((size_t)2 << 20)

/* One anonymous mapping, as mmap() gave it (the pool's chunk starts at a 2 MiB boundary inside). */
struct pool_mem {
	void *base;
	size_t len;
};

static void unmap_mem(struct pool_mem *pm)
{
	munmap(pm->base, pm->len);
	free(pm);
}

/* The mempool's callback when it frees its one memory chunk. */
static void on_chunk_free(struct rte_mempool_memhdr *memhdr, void *opaque)
{
	(void)memhdr;
	unmap_mem(opaque);
}

/*
 * len bytes of anonymous memory starting at a 2 MiB boundary, advised for
 * huge pages, in *pm; the start, or NULL (errno). (A kernel without
 * transparent huge pages refuses the advice: the memory still serves, on
 * small pages.)
 */
static char *map_huge(size_t len, struct pool_mem *pm)
{
	pm->len = len + HUGE_2M; /* room to move the start to a boundary */
	pm->base = mmap(NULL, pm->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pm->base == MAP_FAILED)
		return NULL;
	char *start = RTE_PTR_ALIGN_CEIL((char *)pm->base, HUGE_2M);

	(void)madvise(start, len, MADV_HUGEPAGE);
	return start;
}

/* The first number in file path (after prefix, on its line), in *v; false when there is none. */
static bool read_number(const char *path, const char *prefix, uint64_t *v)
{
	FILE *f = fopen(path, "r");
	char line[128];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strncmp(line, prefix, strlen(prefix)) == 0 &&
			sscanf(line + strlen(prefix), "%" SCNu64, v) == 1;
	if (f)
		fclose(f);
	return found;
}

/*
 * What this process's memory cgroup still allows, in bytes: its limit less
 * its usage (cgroup v2: memory.max, memory.current; v1: the memory
 * controller's memory.limit_in_bytes, memory.usage_in_bytes); UINT64_MAX
 * without a limit or a cgroup to read.
 */
static uint64_t cgroup_room(void)
{
	static const char *const files[2][2] = {
		{"memory.max", "memory.current"},                    /* v2 */
		{"memory.limit_in_bytes", "memory.usage_in_bytes"}, /* v1 */
	};
	char line[512], path[640];
	uint64_t room = UINT64_MAX, limit, used;
	FILE *f = fopen("/proc/self/cgroup", "r");

	/* lines "0::PATH" (v2) and "N:CONTROLLERS:PATH" (v1; the memory controller's) */
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *ctl = strchr(line, ':'), *cg = ctl ? strchr(ctl + 1, ':') : NULL;
		if (cg == NULL)
			continue;
		*cg++ = '\0';
		bool v2 = strcmp(ctl + 1, "") == 0, v1 = strstr(ctl + 1, "memory") != NULL;
		if (!v1 && !v2)
			continue;
		const char *base = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
		snprintf(path, sizeof(path), "%s%s/%s", base, cg, files[v1][0]);
		bool has_limit = read_number(path, "", &limit); /* (v2 "max": no number, no limit) */
		snprintf(path, sizeof(path), "%s%s/%s", base, cg, files[v1][1]);
		if (has_limit && read_number(path, "", &used))
			room = RTE_MIN(room, limit > used ? limit - used : 0);
	}
	if (f)
		fclose(f);
	return room;
}

/*
 * The memory this process can still take without swapping, in bytes: the
 * kernel's MemAvailable, or less when its cgroup has a limit; UINT64_MAX
 * when neither says.
 */
static uint64_t mem_available(void)
{
	uint64_t kb, avail = UINT64_MAX;

	if (read_number("/proc/meminfo", "MemAvailable:", &kb))
		avail = kb * 1024;
	return RTE_MIN(avail, cgroup_room());
}

/* The pool's frames on anonymous huge-page memory; NULL with a message in err. */
static struct rte_mempool *create_huge(const char *name, uint32_t n, uint16_t priv_size,
				       uint16_t room, unsigned share, char *err, size_t errlen)
{
	struct rte_pktmbuf_pool_private mbp = {.mbuf_data_room_size = room,
					       .mbuf_priv_size = priv_size};
	struct rte_mempool *mp = rte_mempool_create_empty(
		name, n, sizeof(struct rte_mbuf) + priv_size + room, 256,
		sizeof(struct rte_pktmbuf_pool_private), (int)rte_socket_id(),
		RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (mp == NULL) {
		snprintf(err, errlen, "%s", rte_strerror(rte_errno));
		return NULL;
	}
	/* A stack, not a ring, behind the threads' caches: a ring hands out the
	 * frame freed longest ago, so the frames in use cycle through the whole
	 * pool, each a page the TLB no longer holds (on this project's VMs 2 MiB
	 * pages did not help: a pointer chase over 16,000 frames 12 KiB apart
	 * took 89-90 ns a step on either, over 4,000 frames 18-21 ns); a stack
	 * hands back the last freed, and the frames in use stay as few as are
	 * in flight (docs/dev/PERF-HISTORY.md: 0.54-0.92x loop time at 1,024
	 * ranks). Lock-free ("lf_stack"): with more partitions' threads than
	 * cores, a thread preempted inside the locked "stack" would hold up the
	 * others (measured the same speed as "stack" here). Then the locked one,
	 * the ring where DPDK was built without either. */
	int rc = rte_mempool_set_ops_byname(mp, "lf_stack", NULL);
	if (rc < 0)
		rc = rte_mempool_set_ops_byname(mp, "stack", NULL);
	if (rc < 0)
		rc = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL);
	if (rc < 0)
		goto fail;
	rte_pktmbuf_pool_init(mp, &mbp);

	size_t obj = (size_t)mp->header_size + mp->elt_size + mp->trailer_size;
	size_t len = RTE_ALIGN_CEIL(obj * n + RTE_CACHE_LINE_SIZE, HUGE_2M);
	uint64_t avail = mem_available();
	if (avail != UINT64_MAX && share > 1)
		avail /= share;
	if (len > avail) {
		rte_mempool_free(mp);
		snprintf(err, errlen, "needs %zu MiB, %" PRIu64 " MiB are available%s (give --mbufs fewer)",
			 len >> 20, avail >> 20, share > 1 ? " to each rank on this machine" : "");
		return NULL;
	}
	struct pool_mem *pm = malloc(sizeof(*pm));
	char *start = pm ? map_huge(len, pm) : NULL;
	if (start == NULL) {
		free(pm);
		rc = -ENOMEM;
		goto fail;
	}
	rc = rte_mempool_populate_virt(mp, start, len, HUGE_2M, on_chunk_free, pm);
	if (rc <= 0) {
		unmap_mem(pm); /* (a failed populate keeps no chunk) */
		rc = rc ? rc : -ENOMEM;
		goto fail;
	}
	if (mp->populated_size != n) { /* (cannot happen: len holds n objects) */
		rc = -ENOMEM;
		goto fail;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;
fail:
	rte_mempool_free(mp);
	snprintf(err, errlen, "%s (give --mbufs fewer)", rte_strerror(-rc));
	return NULL;
}

struct rte_mempool *dp_pool_create(const char *name, uint32_t n, uint16_t priv_size,
				   uint16_t room, bool huge, unsigned share, char *err, size_t errlen)
{
	if (huge)
		return create_huge(name, n, priv_size, room, share, err, errlen);
	struct rte_mempool *mp = rte_pktmbuf_pool_create(name, n, 256, priv_size, room, (int)rte_socket_id());
	if (mp == NULL)
		snprintf(err, errlen, "%s (give --mem more, or --mbufs fewer)", rte_strerror(rte_errno));
	return mp;
}

/*
 * The data line's offset comes from m->pool, a load of the very line the
 * first prefetch asks for, so the function waits for it. That wait pays:
 * given the pool instead (no load: four prefetches only), the ns-3
 * workload's loop was 1.08-1.10x slower (16 interleaved pairs), and 1.08x
 * with two prefetches only (7 pairs). A demand load completes where a
 * prefetch may not; which of the generator's later loads it saves is not
 * isolated.
 */
void dp_pool_prefetch_frame(const struct rte_mbuf *m)
{
	const uint8_t *b = (const uint8_t *)m;

	__builtin_prefetch(b, 1);
	__builtin_prefetch(b + RTE_CACHE_LINE_SIZE, 1);
	__builtin_prefetch(b + sizeof(struct rte_mbuf), 1); /* (the private area: the fabric's record) */
	__builtin_prefetch(b + sizeof(struct rte_mbuf) + rte_pktmbuf_priv_size(m->pool) + RTE_PKTMBUF_HEADROOM, 1);
}

void dp_pool_prefetch_next(struct rte_mempool *mp)
{
	struct rte_mempool_cache *c = rte_mempool_default_cache(mp, rte_lcore_id());

	if (c != NULL && c->len > 0)
		dp_pool_prefetch_frame(c->objs[c->len - 1]);
}
