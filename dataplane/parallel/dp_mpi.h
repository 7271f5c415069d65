/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_mpi: the MPI ranks rocelab-dp runs as under mpirun (partitions as
 * ranks, dp_part.h), as a few collectives over byte buffers.
 *
 * Built with Open MPI (meson option mpi, on when libopenmpi-dev is found),
 * a process started by mpirun starts MPI; otherwise, or without Open MPI,
 * the process is rank 0 of 1 and nothing here talks to anyone. Every
 * collective must be called by every rank in the same order (MPI's rule).
 */
#ifndef DP_MPI_H
#define DP_MPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dp_mpi {
	int rank, size;
	int local_size; /* the ranks on this machine (they share its memory), this one included */
	bool active; /* MPI was started (under mpirun): dp_mpi_finish() ends it */
};

/* True when mpirun (Open MPI's launcher) started this process, whatever the build. */
bool dp_mpi_launched(void);

/*
 * Start MPI when mpirun started the process; m gets rank, size and
 * local_size (0 of 1, 1, otherwise). Returns 0, or -ENOTSUP (launched by mpirun, built without
 * MPI), -EIO (MPI did not start).
 */
int dp_mpi_start(struct dp_mpi *m, int *argc, char ***argv);

/* End MPI (MPI_Finalize) when it was started; a no-op otherwise. */
void dp_mpi_finish(struct dp_mpi *m);

/* A rank cannot go on alone (the others would wait forever): end every rank with code. */
void dp_mpi_abort(const struct dp_mpi *m, int code);

/* all[i * len .. ) gets rank i's mine[0 .. len). Returns 0 or -EIO. */
int dp_mpi_allgather(const struct dp_mpi *m, const void *mine, void *all, size_t len);

/* Rank root's buf[0 .. len) to every rank. Returns 0 or -EIO. */
int dp_mpi_bcast(const struct dp_mpi *m, void *buf, size_t len, int root);

/*
 * Every rank sends rank i send_len[i] bytes of send, which holds them in rank
 * order (rank 0's first), and gets rank i's recv_len[i] bytes for it (each
 * rank knows them already) in *recv (malloc'ed, grown as needed, *recv_cap
 * its size), at offset recv_off[i]. Returns 0, -ENOMEM, -E2BIG (more than
 * MPI's int counts), -EIO.
 */
int dp_mpi_alltoallv(const struct dp_mpi *m, const uint8_t *send, const size_t *send_len,
		     uint8_t **recv, size_t *recv_cap, size_t *recv_off, const size_t *recv_len);

/* Rank 0's v[0 .. n) becomes the sum (or the maximum) of every rank's. Returns 0, -E2BIG, -EIO. */
int dp_mpi_reduce_u64(const struct dp_mpi *m, uint64_t *v, size_t n, bool max);

/*
 * Rank 0 gets every rank's bytes: *all (malloc'ed; free it) holds rank i's
 * at off[i], len[i] bytes (off, len: arrays of size entries, rank 0 only).
 * Returns 0, -ENOMEM, -E2BIG, -EIO.
 */
int dp_mpi_gather_bytes(const struct dp_mpi *m, const void *mine, size_t len, uint8_t **all,
			size_t *off, size_t *lens);

#endif /* DP_MPI_H */
