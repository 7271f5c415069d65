/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll results: nccl-tests numbers (time, algbw, busbw) and lines, and the
 * active QPs per NIC (data QPs with a send WQE on the NIC) over time.
 */
#include "ne_coll_priv.h"
#include "nc_tune.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Active QPs: a rank's data QPs with a send WQE on its NIC */

/* Data QP index of connection k whose sender-side QPN is qpn; nqps if none. */
static uint32_t data_qp_index(const struct ne_coll *c, const struct coll_conn *cn, uint32_t qpn,
			      uint64_t wr_id)
{
	uint32_t q = c->nqps;

	if (c->cfg.qp_mode == NE_COLL_QP_CTRAN)
		q = (uint32_t)(wr_id >> WR_QP_SHIFT) & 0xFFu;
	else if (coll_nccl(c) && c->cfg.qp_mode == NE_COLL_QP_RR)
		q = (uint32_t)wr_id % c->nqps;
	if (q < c->nqps && cn->src_qpn[q] == qpn)
		return q;
	for (q = 0; q < c->nqps; q++) /* split, rocelab rr: at most nqps compares */
		if (cn->src_qpn[q] == qpn)
			return q;
	return c->nqps;
}

/* Close rank's interval at now (add it to the integrals) and move its count by d. */
static void active_move(struct ne_coll *c, struct coll_rank *r, int d, uint64_t now)
{
	uint64_t dt = now > r->active_since ? now - r->active_since : 0;

	ne_coll_series_move(c, r->idx, r->active_qps, (uint32_t)((int64_t)r->active_qps + d), now);
	c->stats.active_qp_ns += (uint64_t)r->active_qps * dt;
	if (r->active_qps)
		c->stats.active_busy_ns += dt;
	r->active_since = now;
	r->active_qps = (uint32_t)((int64_t)r->active_qps + d);
	if (r->active_qps > c->stats.active_qps_max)
		c->stats.active_qps_max = r->active_qps;
	if (r->active_qps > c->meas_max)
		c->meas_max = r->active_qps;
}

/* The data connection and QP a send WQE of rank names, or NULL. */
static struct coll_conn *data_conn(struct ne_coll *c, uint32_t rank, uint64_t wr_id)
{
	uint32_t k = (uint32_t)(wr_id >> WR_CONN_SHIFT) & WR_CONN_MASK;

	if ((uint32_t)(wr_id >> WR_KIND_SHIFT) != WR_DATA_SEND || k >= c->nconns ||
	    c->conns[k].src_nic != rank)
		return NULL;
	return &c->conns[k];
}

void ne_coll_active_posted(struct ne_coll *c, uint32_t rank, uint32_t qpn, uint64_t wr_id,
			   uint64_t now)
{
	struct coll_conn *cn = data_conn(c, rank, wr_id);
	uint32_t q = cn ? data_qp_index(c, cn, qpn, wr_id) : c->nqps;

	if (q < c->nqps && cn->sq_wqes[q]++ == 0)
		active_move(c, &c->ranks[rank], 1, now);
}

void ne_coll_active_completed(struct ne_coll *c, uint32_t rank, const struct ne_wc *wc,
			      uint64_t now)
{
	struct coll_conn *cn = data_conn(c, rank, wc->wr_id);
	uint32_t q = cn ? data_qp_index(c, cn, wc->qpn, wc->wr_id) : c->nqps;

	if (q < c->nqps && cn->sq_wqes[q] && --cn->sq_wqes[q] == 0)
		active_move(c, &c->ranks[rank], -1, now);
}

void ne_coll_active_iter_start(struct ne_coll *c)
{
	/* every data WQE of the iteration before has completed (send_done), so
	 * no rank has an open interval: the integrals are exact here */
	if (c->iters_done != c->cfg.warmup_iters)
		return;
	c->meas_qp_ns = c->stats.active_qp_ns;
	c->meas_busy_ns = c->stats.active_busy_ns;
	c->meas_nic_ns = c->stats.nic_ns;
	c->meas_max = 0;
}

uint32_t ne_coll_active_qps(const struct ne_coll *c, uint32_t rank)
{
	return c && rank < c->nranks ? c->ranks[rank].active_qps : 0;
}

/* The measured iterations' active QPs into r (after they finished). */
static void active_result(const struct ne_coll *c, struct ne_coll_result *r)
{
	uint64_t qp_ns = c->stats.active_qp_ns - c->meas_qp_ns;
	uint64_t busy = c->stats.active_busy_ns - c->meas_busy_ns;
	uint64_t nic = c->stats.nic_ns - c->meas_nic_ns;

	r->active_qps_mean = nic ? (double)qp_ns / (double)nic : 0;
	r->active_qps_busy_mean = busy ? (double)qp_ns / (double)busy : 0;
	r->active_qps_max = c->meas_max;
}

/* The launch line of cfg into buf ("" without one); what snprintf returns. */
static int format_launch(const struct ne_coll_config *cfg, char *buf, size_t cap)
{
	/* release=2.23 (the one release besides the default) */
	if (cfg->launch_ns == NE_COLL_LAUNCH_NCCL && cfg->nccl_release != NC_REL_2_21)
		return snprintf(buf, cap,
				"# launch: NCCL 2.23.4's latency model (release=2.23: v2.23.4-1 to "
				"v2.30.7-1) of the algorithm and protocol run (src/graph/tuning.cc): "
				"baseLat once, hwLat per step (Ring Simple: 8.4, NVLink 3.4, network "
				"14 us; Ring LL: 6.6, 0.6, 2.7 us; one rank per server: the network "
				"step takes the Tree's, LL 5.0 us)\n");
	if (cfg->launch_ns == NE_COLL_LAUNCH_NCCL)
		return snprintf(buf, cap,
				"# launch: NCCL 2.21.5's latency model of the algorithm and protocol "
				"run (src/graph/tuning.cc): baseLat once, hwLat per step (Ring Simple: "
				"8.4, NVLink 3.4, network 14 us; Ring LL: 6.6, 0.6, 2.7 us)\n");
	if (cfg->launch_ns)
		return snprintf(buf, cap, "# launch: %uns before each collective on every rank\n",
				cfg->launch_ns);
	if (cap)
		buf[0] = '\0';
	return 0;
}

int ne_coll_format_costs(const struct ne_coll_config *cfg, char *buf, size_t cap)
{
	int n = 0;

	if (cfg->proxy_post_ns || cfg->proxy_poll_ns)
		n = snprintf(buf, cap,
			     "# host costs: proxy_post_wqe=%uns proxy_poll_cqe=%uns per WQE post / CQE "
			     "poll on each rank's proxy thread: assumptions, not measurements (no public "
			     "figure)\n",
			     cfg->proxy_post_ns, cfg->proxy_poll_ns);
	if (n < 0 || (size_t)n >= cap)
		return n;
	return n + format_launch(cfg, buf + n, cap - (size_t)n);
}

int ne_coll_format_algo(const struct ne_coll *c, char *buf, size_t cap)
{
	const char *name = c->cfg.algo == NE_COLL_ALGO_TREE ? "tree" : "ring";

	if (c->tuned) {
		const char *proto = nc_tune_proto_name((enum nc_proto)c->tune_proto);
		bool ran = c->proto == c->tune_proto;

		/* (the rocelab model runs every pick as Simple) */
		return snprintf(buf, cap,
				"# algo: %s (NCCL's tuning picks %s/%s for %" PRIu64 " B, %.1f us "
				"predicted%s%s)\n",
				name, nc_tune_algo_name((enum nc_algo)c->tune_algo), proto,
				c->cfg.bytes, c->tune_us, ran ? "" : "; runs as Simple, not ",
				ran ? "" : proto);
	}
	if (c->algo_asked == NE_COLL_ALGO_RING || c->cfg.op != NE_COLL_ALLREDUCE) {
		if (cap)
			buf[0] = '\0';
		return 0;
	}
	return snprintf(buf, cap, "# algo: %s (algo=%s)\n", name, name);
}

int ne_coll_format_active(const struct ne_coll_result *r, char *buf, size_t cap)
{
	return snprintf(buf, cap,
			"# active QPs per NIC: mean %.2f, while sending %.2f, max %u (data QPs "
			"with a send WQE on the NIC, time-weighted over %u iteration(s))\n",
			r->active_qps_mean, r->active_qps_busy_mean, r->active_qps_max, r->iters);
}

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
	case NE_COLL_BROADCAST:
	case NE_COLL_REDUCE:
		/* nccl-tests doc/PERFORMANCE.md: busbw = algbw for both */
		return 1.0;
	case NE_COLL_SENDRECV:
		/* nccl-tests src/sendrecv.cu, SendRecvGetBw: factor 1 */
		return 1.0;
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
	r->redop = (c->cfg.op == NE_COLL_ALLREDUCE || c->cfg.op == NE_COLL_REDUCESCATTER ||
		    c->cfg.op == NE_COLL_REDUCE) ? "sum" : "none";
	r->root = coll_op_rooted(c->cfg.op) ? (int)c->cfg.root : -1;
	if (c->cfg.op == NE_COLL_ALLREDUCE || coll_op_rooted(c->cfg.op) ||
	    c->cfg.op == NE_COLL_SENDRECV) {
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
	active_result(c, r);
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
	case NE_COLL_BROADCAST: return "broadcast";
	case NE_COLL_REDUCE: return "reduce";
	case NE_COLL_SENDRECV: return "sendrecv";
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

/*
 * nccl-tests' three header lines: the out-of-place and in-place groups over
 * their four columns each, the names, the units.
 */
int ne_coll_format_header(char *buf, size_t cap)
{
	return snprintf(buf, cap,
			"#%60s%-33s%s\n"
			"# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n"
			"# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n",
			"", "out-of-place", "in-place", "size", "count", "type", "redop", "root",
			"time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", "(B)",
			"(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
			"(GB/s)", "");
}

/* One half of a line: time (nccl-tests' rounding), algbw, busbw, #wrong;
 * NULL: not run, four "N/A". Returns what snprintf returns. */
static int format_half(const struct ne_coll_result *r, char *buf, size_t cap)
{
	char t[32], w[24];

	if (r == NULL)
		return snprintf(buf, cap, "  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
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
	return snprintf(buf, cap, "  %7s  %6.2f  %6.2f  %6s", t, r->algbw, r->busbw, w);
}

int ne_coll_format_result(const struct ne_coll_result *r, const struct ne_coll_result *in_place,
			  char *buf, size_t cap)
{
	char oop[80], ip[80];

	format_half(r, oop, sizeof(oop));
	format_half(in_place, ip, sizeof(ip));
	return snprintf(buf, cap, "%12llu  %12llu  %8s  %6s  %6d%s%s\n", (unsigned long long)r->size,
			(unsigned long long)r->count, r->type ? r->type : "float",
			r->redop ? r->redop : "none", r->root, oop, ip);
}

bool ne_coll_in_place_checked(enum ne_coll_op op)
{
	/* nccl-tests' alltoall.cu and sendrecv.cu: "We don't support in-place" */
	return op != NE_COLL_ALLTOALL && op != NE_COLL_SENDRECV && op != NE_COLL_INCAST;
}

void ne_coll_sweep_add(struct ne_coll_sweep_sum *t, const struct ne_coll_result *r,
		       const struct ne_coll_result *in_place)
{
	t->busbw_sum += r->busbw;
	t->halves++;
	if (r->wrong < 0)
		t->unchecked++;
	else
		t->wrong += r->wrong;
	if (in_place) { /* (NULL, not run: nccl-tests counts the halves run) */
		t->busbw_sum += in_place->busbw;
		t->halves++;
		if (in_place->wrong > 0) /* (-1: not checked, as nccl-tests' N/A) */
			t->wrong += in_place->wrong;
	}
	t->sizes++;
	t->avg_busbw = t->busbw_sum / t->halves;
	t->checked = t->unchecked == 0;
}

int ne_coll_format_footer(const struct ne_coll_sweep_sum *t, char *buf, size_t cap)
{
	if (t->sizes == 0)
		return snprintf(buf, cap, "# Out of bounds values : N/A (no size measured)\n"
				"# Avg bus bandwidth    : N/A (no size measured)\n#\n");
	if (!t->checked)
		return snprintf(buf, cap, "# Out of bounds values : N/A (data=off: not checked)\n"
				"# Avg bus bandwidth    : %g \n#\n", t->avg_busbw);
	return snprintf(buf, cap, "# Out of bounds values : %ld %s\n# Avg bus bandwidth    : %g \n#\n",
			t->wrong, t->wrong ? "FAILED" : "OK", t->avg_busbw);
}
