/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll results: nccl-tests numbers (time, algbw, busbw) and lines.
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Results */

double ne_coll_busbw_factor(enum ne_coll_op op, uint32_t n)
{
	if (n == 0)
		return 0;
	switch (op) {
	case NE_COLL_ALLREDUCE:
		return 2.0 * (n - 1) / n;
	case NE_COLL_ALLGATHER:
	case NE_COLL_REDUCESCATTER:
	case NE_COLL_ALLTOALL:
		return (double)(n - 1) / n;
	case NE_COLL_INCAST:
		return (double)(n - 1);
	}
	return 0;
}

void ne_coll_result_compute(struct ne_coll_result *r)
{
	r->time_us = (double)r->time_ns / 1000.0;
	r->algbw = r->time_ns ? (double)r->size / (double)r->time_ns : 0.0; /* B/ns = GB/s */
	r->busbw = r->algbw * ne_coll_busbw_factor(r->op, r->nranks);
}

int ne_coll_get_result(const struct ne_coll *c, struct ne_coll_result *r)
{
	uint64_t sum = 0, mn = UINT64_MAX, mx = 0;
	uint32_t cnt = 0;

	if (!c || !r)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	for (uint32_t i = c->cfg.warmup_iters; i < c->iters_done; i++) {
		sum += c->iter_ns[i];
		mn = c->iter_ns[i] < mn ? c->iter_ns[i] : mn;
		mx = c->iter_ns[i] > mx ? c->iter_ns[i] : mx;
		cnt++;
	}
	r->op = c->cfg.op;
	r->nranks = c->nranks;
	r->type = "float";
	r->redop = (c->cfg.op == NE_COLL_ALLREDUCE || c->cfg.op == NE_COLL_REDUCESCATTER) ? "sum"
											   : "none";
	r->root = c->cfg.op == NE_COLL_INCAST ? (int)c->cfg.root : -1;
	if (c->cfg.op == NE_COLL_ALLREDUCE || c->cfg.op == NE_COLL_INCAST) {
		r->count = c->rank_elems;
		r->size = c->rank_elems * 4;
	} else {
		r->count = c->block_elems;
		r->size = c->block_elems * c->nranks * 4;
	}
	r->wrong = -1;
	if (!cnt)
		return -EAGAIN;
	r->iters = cnt;
	r->time_ns = (sum + cnt / 2) / cnt;
	r->min_time_ns = mn;
	r->max_time_ns = mx;
	ne_coll_result_compute(r);
	return 0;
}

const char *ne_coll_op_name(enum ne_coll_op op)
{
	switch (op) {
	case NE_COLL_ALLREDUCE: return "allreduce";
	case NE_COLL_ALLGATHER: return "allgather";
	case NE_COLL_REDUCESCATTER: return "reducescatter";
	case NE_COLL_ALLTOALL: return "alltoall";
	case NE_COLL_INCAST: return "incast";
	}
	return "?";
}

const char *ne_coll_qp_mode_name(enum ne_coll_qp_mode mode)
{
	switch (mode) {
	case NE_COLL_QP_RR: return "rr";
	case NE_COLL_QP_CTRAN: return "ctran";
	case NE_COLL_QP_SPLIT:
	default: return "split";
	}
}

const char *ne_coll_model_name(enum ne_coll_model model)
{
	return model == NE_COLL_MODEL_NCCL ? "nccl" : "rocelab";
}

int ne_coll_format_header(char *buf, size_t cap)
{
	return snprintf(buf, cap, "%s\n%s\n",
			"#       size         count      type   redop    root     time   algbw   busbw  #wrong",
			"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)        ");
}

int ne_coll_format_result(const struct ne_coll_result *r, char *buf, size_t cap)
{
	char t[32], w[24];

	if (r->time_us >= 10000.0)
		snprintf(t, sizeof(t), "%7.0f", r->time_us);
	else if (r->time_us >= 100.0)
		snprintf(t, sizeof(t), "%7.1f", r->time_us);
	else
		snprintf(t, sizeof(t), "%7.2f", r->time_us);
	if (r->wrong < 0)
		snprintf(w, sizeof(w), "%6s", "N/A");
	else
		snprintf(w, sizeof(w), "%6ld", r->wrong);
	return snprintf(buf, cap, "%12llu  %12llu  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %6s\n",
			(unsigned long long)r->size, (unsigned long long)r->count,
			r->type ? r->type : "float", r->redop ? r->redop : "none", r->root, t,
			r->algbw, r->busbw, w);
}
