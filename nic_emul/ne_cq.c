/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues (rxe_cq.c's role): a ring per CQ that the completer, the
 * responder and a QP flushed in error push work completions into and the
 * application polls.
 */
#include <errno.h>
#include <stdlib.h>

#include "ne_priv.h"

uint32_t ne_cq_count(const struct ne_cq *cq)
{
	return cq ? cq->count : 0;
}

struct ne_cq *ne_cq_create(struct ne_nic *nic, uint32_t depth)
{
	struct ne_cq *cq;

	if (!nic || depth == 0)
		return NULL;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	cq->ring = calloc(depth, sizeof(*cq->ring));
	if (!cq->ring) {
		free(cq);
		return NULL;
	}
	cq->nic = nic;
	cq->depth = depth;
	cq->next = nic->cqs;
	nic->cqs = cq;
	return cq;
}

int ne_cq_destroy(struct ne_nic *nic, struct ne_cq *cq)
{
	struct ne_cq **pp;

	if (!nic || !cq || cq->nic != nic)
		return -EINVAL;
	if (cq->users)
		return -EBUSY;
	for (pp = &nic->cqs; *pp; pp = &(*pp)->next)
		if (*pp == cq) {
			*pp = cq->next;
			free(cq->ring);
			free(cq);
			return 0;
		}
	return -EINVAL;
}

int ne_cq_poll(struct ne_cq *cq, struct ne_wc *wc, int n)
{
	int got = 0;

	if (!cq || !wc)
		return 0;
	while (got < n && cq->count) {
		wc[got++] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->depth;
		cq->count--;
	}
	return got;
}

void ne_cq_push(struct ne_nic *nic, struct ne_cq *cq, const struct ne_wc *wc)
{
	if (cq->count == cq->depth) {
		nic->cnt.cq_overflow++;
		return;
	}
	cq->ring[(cq->head + cq->count) % cq->depth] = *wc;
	cq->count++;
	if (cq->notify)
		cq->notify(cq->notify_ctx, cq);
}

int ne_cq_set_notify(struct ne_cq *cq, ne_cq_notify_fn fn, void *ctx)
{
	if (!cq)
		return -EINVAL;
	cq->notify = fn;
	cq->notify_ctx = ctx;
	return 0;
}
