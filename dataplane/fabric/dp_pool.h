/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_pool: the packet pool (the frames of every host, switch and emulated
 * NIC).
 *
 * Live clock: rte_pktmbuf_pool_create() in DPDK's memory, where ports
 * expect their buffers. Virtual clock: no port reads the pool, so its frames
 * live on anonymous memory the kernel may back with 2 MiB pages
 * (MADV_HUGEPAGE; transparent huge pages in their "madvise" setting, Debian's
 * default). rocelab-dp runs DPDK with --no-huge, whose memory is a shared
 * memfd on 4 KiB pages: with thousands of frames in flight spread over
 * hundreds of MB, nearly every frame a switch or NIC touched cost a TLB miss
 * and a page walk, work no cache simulation shows (README, benchmarks).
 * The virtual clock's pool is a stack (DPDK's "lf_stack" mempool driver, or
 * its locked "stack"): the frame freed last is the next handed out, so the
 * frames in use stay few.
 */
#ifndef DP_POOL_H
#define DP_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rte_mbuf;
struct rte_mempool;

/*
 * A pool named name of n frames with priv_size bytes of private area (a
 * multiple of RTE_MBUF_PRIV_ALIGN) and room bytes of data room (headroom
 * included), initialised as rte_pktmbuf_pool_create() does. huge: on
 * anonymous memory advised for huge pages (virtual clock only: the buffers
 * have no IOVA), refused when larger than a share-th of the memory
 * available to the process (the kernel's MemAvailable, within the cgroup's
 * memory.max when it has one; share: the processes that build a pool at
 * once, the MPI ranks on the machine). Every frame's first line is written
 * at set-up, so on huge pages all of the pool is resident: better a clear
 * error than the OOM killer. Returns the pool, or NULL with a message in err
 * (what failed and what to change). rte_mempool_free() frees it, and a huge
 * pool's memory with it.
 */
struct rte_mempool *dp_pool_create(const char *name, uint32_t n, uint16_t priv_size,
				   uint16_t room, bool huge, unsigned share, char *err, size_t errlen);

/*
 * Ask for the lines a fresh frame's first writes touch, for writing: its mbuf
 * header, its private area's first line and the first line of its data.
 */
void dp_pool_prefetch_frame(const struct rte_mbuf *m);

/*
 * Ask for the lines of the frame the next allocation on this lcore will take
 * (the top of its mempool cache, a LIFO), those dp_pool_prefetch_frame()
 * asks for. A hint, nothing taken: called after an allocation, it gives the
 * next one the time of the work in between (a generator builds 128
 * frames in a row when its senders are in step), where each frame's first
 * write otherwise waited for its line. No effect on a thread without a cache.
 */
void dp_pool_prefetch_next(struct rte_mempool *mp);

#endif /* DP_POOL_H */
