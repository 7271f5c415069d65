/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NCCL's arithmetic for the nccl model (facts: docs/explanation/FACTS-NCCL-RNIC.md;
 * NCCL's Simple protocol, ring algorithm, IB transport). Pure functions.
 */
#include "ne_coll_priv.h"

/* Slice rounding of prims_simple: ceil(nelem / (16 x slices per chunk)) x 16
 * elements, and a floor of a 32nd of the slice's steps. */
#define NCCL_SLICE_ROUND_ELEMS 16u
#define NCCL_SLICE_FLOOR_DIV 32u

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static uint64_t step_elems(uint32_t buffsize, uint32_t elem_bytes)
{
	return (uint64_t)buffsize / NE_COLL_NCCL_STEPS / elem_bytes;
}

uint64_t ne_coll_proto_chunk_elems(const struct ne_coll *c)
{
	uint64_t step = nc_tune_step_data_bytes((enum nc_proto)c->proto, c->cfg.nccl_buffsize) /
			sizeof(float);

	/* src/enqueue.cc: chunkSteps is NCCL_CHUNKSTEPS for Ring Simple, 1
	 * for LL and LL128 */
	return c->proto == NC_PROTO_SIMPLE ? step * NE_COLL_NCCL_CHUNKSTEPS : step;
}

uint64_t ne_coll_nccl_chunk_elems(uint64_t count, uint64_t offset, uint32_t nchannels,
				  uint32_t nranks, uint64_t chunk)
{
	uint64_t share;

	if (!count || !nchannels || !nranks || !chunk || offset >= count)
		return 0;
	share = div_up(count - offset, (uint64_t)nchannels * nranks);
	return share < chunk ? share : chunk;
}

uint32_t ne_coll_nccl_slices(uint64_t nelem, uint32_t buffsize, uint32_t elem_bytes,
			     uint64_t slice[2])
{
	const uint32_t per_chunk = NE_COLL_NCCL_CHUNKSTEPS / NE_COLL_NCCL_SLICESTEPS;
	uint64_t size, floor_el, off = 0;
	uint32_t n = 0;

	if (!nelem || !buffsize || !elem_bytes)
		return 0;
	size = div_up(nelem, (uint64_t)NCCL_SLICE_ROUND_ELEMS * per_chunk) * NCCL_SLICE_ROUND_ELEMS;
	floor_el = step_elems(buffsize, elem_bytes) * NE_COLL_NCCL_SLICESTEPS / NCCL_SLICE_FLOOR_DIV;
	if (size < floor_el)
		size = floor_el;
	while (n < per_chunk && off < nelem) {
		slice[n++] = nelem - off < size ? nelem - off : size;
		off += size;
	}
	return n;
}

uint32_t ne_coll_split_piece(uint32_t len, uint32_t nqps, uint32_t q, uint32_t *off)
{
	uint64_t piece, start;

	if (!nqps) {
		*off = 0;
		return 0;
	}
	piece = div_up(div_up(len, nqps), NE_COLL_NCCL_ALIGN) * NE_COLL_NCCL_ALIGN;
	start = piece * q;
	if (start >= len) {
		*off = len;
		return 0;
	}
	*off = (uint32_t)start;
	return (uint32_t)(len - start < piece ? len - start : piece);
}

uint32_t ne_coll_ctran_wqes(uint32_t len, uint32_t wqe_bytes, uint32_t nqps)
{
	if (wqe_bytes == 0)
		return nqps;
	return len ? (uint32_t)div_up(len, wqe_bytes) : 1;
}
