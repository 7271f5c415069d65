/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_gather: what the processes of one fabric (MPI ranks, dp_part.h)
 * exchange, as plain bytes and numbers. No MPI here: dp_mpi moves them.
 *
 * Frames of cut links: a rank's outbox of a link whose far end another rank
 * runs becomes records (the link direction, the arrival time, the frame's
 * metadata and bytes); the receiving rank turns them back into frames in
 * its copy of the same outbox.
 *
 * Counters: every rank holds the whole fabric but runs only its nodes, so a
 * counter is zero (or its initial value) in every copy but its owner's. The
 * fabric's counters as two vectors, sums and maxima, reduced into rank 0
 * (sum, max) and put back give rank 0 the counters of the whole run.
 */
#ifndef DP_GATHER_H
#define DP_GATHER_H

#include <stddef.h>
#include <stdint.h>

#include "dp_types.h"

struct rte_mempool;

/* A growable byte buffer. */
struct dp_bytes {
	uint8_t *b;
	size_t len, cap;
};

void dp_bytes_free(struct dp_bytes *x);

/*
 * Move the frames in c's outbox of parity into x (appended), freeing them.
 * Returns the frames moved, or -ENOMEM (what was not moved stays).
 */
int dp_gather_pack_outbox(struct dp_chan *c, unsigned parity, struct dp_bytes *x);

/*
 * Turn len bytes of records (dp_gather_pack_outbox's) back into frames from
 * mp, each into the outbox of parity of its channel in f. A frame gets its
 * sender's metadata except what is the sender's own (its flow-table slot;
 * the parse, which the receiving switch redoes). Returns the frames, or
 * -EINVAL (a malformed record), -ENOBUFS (mp empty: counted as a drop on the
 * channel, the rest delivered).
 */
int dp_gather_unpack_frames(struct dp_fabric *f, unsigned parity, const uint8_t *b, size_t len,
			    struct rte_mempool *mp);

/* Entries of the two counter vectors of f. */
void dp_gather_counters_len(const struct dp_fabric *f, size_t *n_sum, size_t *n_max);

/* f's counters at now into sum[n_sum] and max[n_max]. */
void dp_gather_counters_pack(const struct dp_fabric *f, uint64_t now, uint64_t *sum, uint64_t *max);

/* Put them back into f (after the reduction); pause times become closed intervals. */
void dp_gather_counters_unpack(struct dp_fabric *f, const uint64_t *sum, const uint64_t *max);

#endif /* DP_GATHER_H */
