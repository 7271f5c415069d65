/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll buffers as the caller sees them, the result check, statistics.
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <math.h>

void ne_coll_get_stats(const struct ne_coll *c, struct ne_coll_stats *out)
{
	*out = c->stats;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

void ne_coll_stats_add(struct ne_coll_stats *t, const struct ne_coll_stats *s)
{
	if (s->errors && !t->errors)
		t->first_error_status = s->first_error_status;
	t->data_wrs += s->data_wrs;
	t->data_bytes += s->data_bytes;
	t->cts_sent += s->cts_sent;
	t->transfers_done += s->transfers_done;
	t->max_granted_bytes = max_u64(t->max_granted_bytes, s->max_granted_bytes);
	t->post_busy += s->post_busy;
	t->errors += s->errors;
	t->rank_visits += s->rank_visits;
	t->cq_polls += s->cq_polls;
	t->conn_steps += s->conn_steps;
	t->group_steps += s->group_steps;
	t->zero_len_wrs += s->zero_len_wrs;
	t->rr_mismatch += s->rr_mismatch;
	t->ctran_qp_full += s->ctran_qp_full;
	t->ctran_max_outstanding = max_u64(t->ctran_max_outstanding, s->ctran_max_outstanding);
	t->wqes_posted += s->wqes_posted;
	t->cqes_polled += s->cqes_polled;
	t->proxy_busy_ns += s->proxy_busy_ns;
	t->active_qp_ns += s->active_qp_ns;
	t->active_busy_ns += s->active_busy_ns;
	t->nic_ns += s->nic_ns;
	if (s->active_qps_max > t->active_qps_max)
		t->active_qps_max = s->active_qps_max;
	t->nvlink_xfers += s->nvlink_xfers;
	t->nvlink_bytes += s->nvlink_bytes;
	t->pxn_xfers += s->pxn_xfers;
	for (int g = 0; g < NE_COLL_GATES; g++) {
		t->gate_nvl[g] += s->gate_nvl[g];
		t->gate_net[g] += s->gate_net[g];
	}
}

int ne_coll_rank_proxy(const struct ne_coll *c, uint32_t rank, struct ne_coll_proxy_stats *out)
{
	if (!c || !out || rank >= c->nranks)
		return -EINVAL;
	*out = c->ranks[rank].pst;
	return 0;
}

float *ne_coll_input(struct ne_coll *c, uint32_t rank, size_t *nfloats)
{
	if (!c || rank >= c->nranks || !c->ranks[rank].in) {
		if (nfloats)
			*nfloats = 0;
		return NULL;
	}
	if (nfloats)
		*nfloats = c->ranks[rank].nin;
	return c->ranks[rank].in;
}

const float *ne_coll_output(const struct ne_coll *c, uint32_t rank, size_t *nfloats)
{
	const struct coll_rank *r;

	if (!c || rank >= c->nranks || !c->ranks[rank].work) {
		if (nfloats)
			*nfloats = 0;
		return NULL;
	}
	r = &c->ranks[rank];
	if (c->cfg.op == NE_COLL_REDUCESCATTER) {
		if (nfloats)
			*nfloats = c->block_elems;
		return r->work + (size_t)rank * c->block_elems;
	}
	if (nfloats)
		*nfloats = r->nwork;
	return r->work;
}

static bool close_enough(float got, double want)
{
	double d = fabs((double)got - want);

	return d <= 1e-5 * (fabs(want) > 1.0 ? fabs(want) : 1.0);
}

/* Elements of r's result that are not the sum of every rank's input. */
static long sum_wrong(const struct ne_coll *c, const struct coll_rank *r)
{
	long wrong = 0;

	for (uint64_t e = 0; e < c->rank_elems; e++) {
		double want = 0;

		for (uint32_t s = 0; s < c->nranks; s++)
			want += c->ranks[s].in[e];
		wrong += !close_enough(r->work[e], want);
	}
	return wrong;
}

long ne_coll_check(const struct ne_coll *c)
{
	uint32_t n;
	long wrong = 0;

	if (!c || !c->cfg.data)
		return -EINVAL;
	n = c->nranks;
	for (uint32_t i = 0; i < n; i++) {
		const struct coll_rank *r = &c->ranks[i];

		if (!coll_mine(c, i))
			continue;
		switch (c->cfg.op) {
		case NE_COLL_ALLREDUCE:
			wrong += sum_wrong(c, r);
			break;
		case NE_COLL_ALLGATHER:
			for (uint32_t s = 0; s < n; s++)
				for (uint64_t e = 0; e < c->block_elems; e++)
					wrong += !close_enough(r->work[s * c->block_elems + e], c->ranks[s].in[e]);
			break;
		case NE_COLL_REDUCESCATTER:
			for (uint64_t e = 0; e < c->block_elems; e++) {
				double want = 0;

				for (uint32_t s = 0; s < n; s++)
					want += c->ranks[s].in[i * c->block_elems + e];
				wrong += !close_enough(r->work[i * c->block_elems + e], want);
			}
			break;
		case NE_COLL_ALLTOALL:
			for (uint32_t s = 0; s < n; s++)
				for (uint64_t e = 0; e < c->block_elems; e++)
					wrong += !close_enough(r->work[s * c->block_elems + e],
							       c->ranks[s].in[i * c->block_elems + e]);
			break;
		case NE_COLL_BROADCAST:
			for (uint64_t e = 0; e < c->rank_elems; e++)
				wrong += !close_enough(r->work[e], c->ranks[c->cfg.root].in[e]);
			break;
		case NE_COLL_REDUCE:
			if (i == c->cfg.root)
				wrong += sum_wrong(c, r);
			break;
		case NE_COLL_SENDRECV:
			wrong += ne_coll_p2p_wrong(c, i);
			break;
		case NE_COLL_INCAST:
			if (i != c->cfg.root)
				break;
			for (uint32_t s = 0; s < n; s++)
				for (uint64_t e = 0; e < c->rank_elems; e++)
					wrong += !close_enough(r->work[s * c->rank_elems + e],
							       s == i ? 0.0 : c->ranks[s].in[e]);
			break;
		}
	}
	return wrong;
}
