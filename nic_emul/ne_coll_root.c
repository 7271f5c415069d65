/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll rooted operations: Broadcast and Reduce as NCCL's ring runs them,
 * a pipeline along the ring from the root (Broadcast) or to it (Reduce).
 *
 * NCCL v2.21.5-1, ring algorithm, Simple protocol:
 * - src/device/broadcast.h (runRing): the root sends each chunk to its next
 *   rank, every other rank receives it, copies it into its output and sends
 *   it on (recvCopySend), except the rank whose next is the root, which only
 *   receives. n - 1 hops, no hop into the root.
 * - src/device/reduce.h (runRing): the rank after the root (prevRank == root)
 *   sends its input, each next rank adds what it receives to its own input
 *   and sends the sum on (recvReduceSend), the root receives the last partial
 *   sum and adds its own (recvReduceCopy). n - 1 hops, none out of the root.
 * - src/enqueue.cc (scheduleCollTasksToPlan, computeCollChunkInfo): the count
 *   is cut into one contiguous part per channel, countPerChannels =
 *   roundup(ceil(count / nChannels), NCCL_SIMPLE_ALIGNMENT / sizeof(T))
 *   (src/include/enqueue.h: 4,096 bytes), and a channel walks its part in
 *   chunks of BROADCAST_CHUNKSTEPS (= REDUCE_CHUNKSTEPS = 1) step of
 *   NCCL_BUFFSIZE / NCCL_STEPS bytes, one slice (one network message) per
 *   chunk (BROADCAST_SLICESTEPS = REDUCE_SLICESTEPS = 1;
 *   src/include/collectives.h).
 * Model rocelab: the same pipeline, channel parts as the ring ops cut them
 * (part_start) and chunks of cfg.chunk_bytes.
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <stdlib.h>

/* NCCL_SIMPLE_ALIGNMENT (src/include/enqueue.h): WARP_SIZE x 8 x 16 bytes. */
#define NCCL_SIMPLE_ALIGN_BYTES 4096u

void ne_coll_root_channel_part(const struct ne_coll *c, uint32_t ch, uint64_t *lo, uint64_t *len)
{
	uint64_t count = c->rank_elems, nch = c->nchannels;

	if (c->cfg.model == NE_COLL_MODEL_NCCL) {
		uint64_t align = NCCL_SIMPLE_ALIGN_BYTES / sizeof(float);
		uint64_t per = ((count + nch - 1) / nch + align - 1) / align * align;
		uint64_t a = (uint64_t)ch * per;

		*lo = a < count ? a : count;
		*len = a < count ? (count - a < per ? count - a : per) : 0;
		return;
	}
	*lo = part_start(count, nch, ch);
	*len = part_start(count, nch, ch + 1) - *lo;
}

uint64_t ne_coll_root_chunk_elems(const struct ne_coll *c)
{
	if (c->cfg.model == NE_COLL_MODEL_NCCL)
		return nc_tune_step_data_bytes((enum nc_proto)c->proto, c->cfg.nccl_buffsize) /
		       sizeof(float); /* (a step a chunk: tree and rooted chains) */
	return c->cfg.chunk_bytes / sizeof(float);
}

/*
 * Hop h (0 .. n-2) of channel ch's chain, in positions p of the channel's
 * ring (the root's: p0): Broadcast from p0 to p0 + 1, ..., p0 - 2 to p0 - 1;
 * Reduce from p0 + 1 to p0 + 2, ..., p0 - 1 to p0. Each chunk's hop h
 * depends on the same chunk's hop h - 1 having arrived at the sender. The
 * ring's connections are the ring ops' (each rank to its next on each
 * channel); the one the chain does not use stays empty.
 */
int ne_coll_plan_root(struct ne_coll *c)
{
	uint32_t n = c->nranks;
	bool reduce = c->cfg.op == NE_COLL_REDUCE;
	uint64_t ce = ne_coll_root_chunk_elems(c);

	for (uint32_t ch = 0; ch < c->nchannels; ch++) {
		uint32_t first = (coll_ring_pos(c, ch, c->cfg.root) + (reduce ? 1 : 0)) % n;
		uint64_t lo, len;

		ne_coll_root_channel_part(c, ch, &lo, &len);
		for (uint64_t o = 0; o < len; o += ce)
			for (uint32_t h = 0; h + 1 < n; h++) {
				uint32_t s = coll_ring_rank(c, ch, (first + h) % n);
				uint32_t k = ch * n + s;
				uint32_t prev = ch * n + coll_ring_rank(c, ch, (first + h + n - 1) % n);
				struct coll_xfer x;
				int rc;

				ne_coll_xfer_init(&x);
				x.src_off = x.dst_off = (lo + o) * sizeof(float);
				x.len = (uint32_t)((len - o < ce ? len - o : ce) * sizeof(float));
				x.kind = reduce ? XFER_REDUCE : XFER_COPY;
				x.dep_conn[0] = h ? (int32_t)prev : -1;
				/* the previous hop's connection just got this chunk's
				 * transfer as its last one */
				x.dep_seq[0] = h ? c->conns[prev].nxfers - 1 : 0;
				if (h)
					ne_coll_plan_link(c, prev, k);
				rc = ne_coll_plan_add_xfer(&c->conns[k], &x);
				if (rc)
					return rc;
			}
	}
	return 0;
}
