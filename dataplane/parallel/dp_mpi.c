/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI ranks as byte-buffer collectives (dp_mpi.h); a stand-in of one rank without Open MPI. */
#include "dp_mpi.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef ROCELAB_MPI
#include <mpi.h>
#endif

bool dp_mpi_launched(void)
{
	/* Open MPI's launcher (mpirun, orterun, prterun) sets these in every rank */
	return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL;
}

#ifdef ROCELAB_MPI

int dp_mpi_start(struct dp_mpi *m, int *argc, char ***argv)
{
	memset(m, 0, sizeof(*m));
	m->size = 1;
	m->local_size = 1;
	if (!dp_mpi_launched())
		return 0;
	if (MPI_Init(argc, argv) != MPI_SUCCESS)
		return -EIO;
	m->active = true;
	MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &m->size);
	MPI_Comm node;
	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
	    MPI_SUCCESS) {
		MPI_Comm_size(node, &m->local_size);
		MPI_Comm_free(&node);
	}
	return 0;
}

void dp_mpi_finish(struct dp_mpi *m)
{
	if (m->active)
		MPI_Finalize();
	m->active = false;
}

void dp_mpi_abort(const struct dp_mpi *m, int code)
{
	if (m->active && m->size > 1)
		MPI_Abort(MPI_COMM_WORLD, code);
}

int dp_mpi_allgather(const struct dp_mpi *m, const void *mine, void *all, size_t len)
{
	if (len > INT_MAX)
		return -E2BIG;
	if (m->size == 1) {
		memmove(all, mine, len);
		return 0;
	}
	return MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, MPI_COMM_WORLD) ==
		       MPI_SUCCESS ? 0 : -EIO;
}

int dp_mpi_bcast(const struct dp_mpi *m, void *buf, size_t len, int root)
{
	if (len > INT_MAX)
		return -E2BIG;
	if (m->size == 1)
		return 0;
	return MPI_Bcast(buf, (int)len, MPI_BYTE, root, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -EIO;
}

/* The counts and displacements MPI wants (int) from sizes; -E2BIG when they do not fit. */
static int to_ints(const size_t *len, int n, int *cnt, int *disp, size_t *total)
{
	size_t off = 0;

	for (int i = 0; i < n; i++) {
		if (len[i] > INT_MAX || off > INT_MAX)
			return -E2BIG;
		cnt[i] = (int)len[i];
		disp[i] = (int)off;
		off += len[i];
	}
	if (off > INT_MAX)
		return -E2BIG;
	*total = off;
	return 0;
}

int dp_mpi_alltoallv(const struct dp_mpi *m, const uint8_t *send, const size_t *send_len,
		     uint8_t **recv, size_t *recv_cap, size_t *recv_off, const size_t *recv_len)
{
	int n = m->size, rc = -ENOMEM;
	int *sc = calloc((size_t)n * 4, sizeof(int));
	size_t stotal = 0, rtotal = 0;

	if (sc == NULL)
		goto out;
	int *sd = sc + n, *rc_ = sc + 2 * n, *rd = sc + 3 * n;
	if ((rc = to_ints(send_len, n, sc, sd, &stotal)) < 0 ||
	    (rc = to_ints(recv_len, n, rc_, rd, &rtotal)) < 0)
		goto out;
	rc = -ENOMEM;
	if (rtotal > *recv_cap) {
		uint8_t *b = realloc(*recv, rtotal);
		if (b == NULL)
			goto out;
		*recv = b;
		*recv_cap = rtotal;
	}
	for (int i = 0; i < n; i++)
		recv_off[i] = (size_t)rd[i];
	rc = MPI_Alltoallv(send, sc, sd, MPI_BYTE, *recv, rc_, rd, MPI_BYTE, MPI_COMM_WORLD) ==
		     MPI_SUCCESS ? 0 : -EIO;
out:
	free(sc);
	return rc;
}

int dp_mpi_reduce_u64(const struct dp_mpi *m, uint64_t *v, size_t n, bool max)
{
	if (n > INT_MAX)
		return -E2BIG;
	if (m->size == 1 || n == 0)
		return 0;
	void *sendbuf = m->rank == 0 ? MPI_IN_PLACE : v;
	return MPI_Reduce(sendbuf, v, (int)n, MPI_UINT64_T, max ? MPI_MAX : MPI_SUM, 0,
			  MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -EIO;
}

int dp_mpi_gather_bytes(const struct dp_mpi *m, const void *mine, size_t len, uint8_t **all,
			size_t *off, size_t *lens)
{
	int n = m->size, rc = -ENOMEM;
	uint64_t mylen = len, *each = NULL;
	int *cnt = NULL, *disp = NULL;
	size_t total = 0;

	*all = NULL;
	if (len > INT_MAX)
		return -E2BIG;
	if (m->rank == 0) {
		each = calloc((size_t)n, sizeof(*each));
		cnt = calloc((size_t)n * 2, sizeof(*cnt));
		if (each == NULL || cnt == NULL)
			goto out; /* (the others then wait: the caller aborts) */
		disp = cnt + n;
	}
	rc = -EIO;
	if (MPI_Gather(&mylen, 1, MPI_UINT64_T, each, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
		goto out;
	if (m->rank == 0) {
		for (int i = 0; i < n; i++)
			lens[i] = each[i];
		if ((rc = to_ints(lens, n, cnt, disp, &total)) < 0)
			goto out;
		for (int i = 0; i < n; i++)
			off[i] = (size_t)disp[i];
		rc = -ENOMEM;
		*all = malloc(total ? total : 1);
		if (*all == NULL)
			goto out;
	}
	rc = MPI_Gatherv(mine, (int)len, MPI_BYTE, *all, cnt, disp, MPI_BYTE, 0, MPI_COMM_WORLD) ==
		     MPI_SUCCESS ? 0 : -EIO;
out:
	free(each);
	free(cnt);
	return rc;
}

#else /* one rank, no MPI */

int dp_mpi_start(struct dp_mpi *m, int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	memset(m, 0, sizeof(*m));
	m->size = 1;
	m->local_size = 1;
	return dp_mpi_launched() ? -ENOTSUP : 0;
}

void dp_mpi_finish(struct dp_mpi *m)
{
	m->active = false;
}

void dp_mpi_abort(const struct dp_mpi *m, int code)
{
	(void)m;
	(void)code;
}

int dp_mpi_allgather(const struct dp_mpi *m, const void *mine, void *all, size_t len)
{
	(void)m;
	memmove(all, mine, len);
	return 0;
}

int dp_mpi_bcast(const struct dp_mpi *m, void *buf, size_t len, int root)
{
	(void)m;
	(void)buf;
	(void)len;
	(void)root;
	return 0;
}

int dp_mpi_alltoallv(const struct dp_mpi *m, const uint8_t *send, const size_t *send_len,
		     uint8_t **recv, size_t *recv_cap, size_t *recv_off, const size_t *recv_len)
{
	(void)m;
	(void)recv_len;
	if (send_len[0] > *recv_cap) {
		uint8_t *b = realloc(*recv, send_len[0]);
		if (b == NULL)
			return -ENOMEM;
		*recv = b;
		*recv_cap = send_len[0];
	}
	if (send_len[0])
		memcpy(*recv, send[0], send_len[0]);
	recv_off[0] = 0;
	return 0;
}

int dp_mpi_reduce_u64(const struct dp_mpi *m, uint64_t *v, size_t n, bool max)
{
	(void)m;
	(void)v;
	(void)n;
	(void)max;
	return 0;
}

int dp_mpi_gather_bytes(const struct dp_mpi *m, const void *mine, size_t len, uint8_t **all,
			size_t *off, size_t *lens)
{
	(void)m;
	*all = malloc(len ? len : 1);
	if (*all == NULL)
		return -ENOMEM;
	memcpy(*all, mine, len);
	off[0] = 0;
	lens[0] = len;
	return 0;
}

#endif
