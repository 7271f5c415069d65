/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_rdma: --rdma transfers between two emulated NICs (the key table: rdma_keys):
 * QPs brought to RTS, WRITEs posted round-robin, the destination checked.
 */
#define _GNU_SOURCE /* qsort_r */
#include "dp_nic_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dp_keys.h"
#include "dp_pool.h"
#include "dp_units.h"
#include "rl_mem.h"

/* Post and reap the WRITEs of one transfer whose source NIC is running. */
void dp_rdma_progress(struct dp_rdma *r, uint64_t now)
{
	struct ne_nic *snic = r->ns->h[r->src].nic;
	struct ne_wc wc[32];
	int n;

	if (!r->started || r->finished)
		return;
	while ((n = ne_cq_poll(r->scq, wc, 32)) > 0) {
		for (int i = 0; i < n; i++) {
			r->completed++;
			r->outstanding[wc[i].wr_id]--;
			if (wc[i].status != NE_WC_SUCCESS)
				r->errors++;
		}
	}
	/* round-robin: each whole message on the next QP, waiting for that QP */
	while (r->posted < r->count && !r->errors && r->outstanding[r->next_qp] < r->depth) {
		struct ne_send_wr wr = {
			.wr_id = r->next_qp,
			.opcode = NE_WR_RDMA_WRITE,
			.send_flags = NE_SEND_SIGNALED,
			.local_addr = 0,
			.length = r->size,
			.lkey = r->skey,
			.remote_addr = 0,
			.rkey = r->dkey,
		};
		if (ne_post_send(snic, r->sqpn[r->next_qp], &wr, now) != 0) {
			r->errors++;
			break;
		}
		if (r->posted == 0)
			r->first_post_ns = now;
		r->posted++;
		r->outstanding[r->next_qp]++;
		r->next_qp = (r->next_qp + 1) % r->qps;
	}
	if (r->completed == r->count || (r->errors && r->completed == r->posted)) {
		r->finished = true;
		r->done_ns = now;
		r->data_ok = !r->errors && memcmp(r->sbuf, r->dbuf, r->size) == 0;
	}
}

/* A whole number in [lo, hi] from v into *out (32 bits). 0 or -1. */
static int rdma_u32(const char *v, uint64_t lo, uint64_t hi, uint32_t *out)
{
	uint64_t n;

	if (dp_parse_u64(v, &n) < 0 || n < lo || n > hi)
		return -1;
	*out = (uint32_t)n;
	return 0;
}




static int set_mtu(void *obj, const char *v)
{
	uint32_t m;

	if (rdma_u32(v, 256, 4096, &m) < 0 || (m & (m - 1)))
		return -1; /* 256, 512, 1024, 2048 or 4096 */
	((struct dp_rdma *)obj)->mtu = m;
	return 0;
}




static int set_sport(void *obj, const char *v)
{
	struct dp_rdma *r = obj;

	if (strcmp(v, "rxe") == 0 || strcmp(v, "mlx5") == 0)
		r->sport = NE_SPORT_RXE; /* mlx5 computes it as rxe does */
	else if (strcmp(v, "fixed") == 0)
		r->sport = NE_SPORT_FIXED;
	else if (strcmp(v, "hash") == 0)
		r->sport = NE_SPORT_HASH;
	else
		return -1;
	return 0;
}

/* The --rdma language: the one table (traffic files' rdma entries take the same keys). */
static const struct dp_key rdma_keys[] = {
	{"qps", "1..64", "1", "QPs between the two NICs; messages go round-robin over them", NULL, DP_KEY_FIELD(DP_KEY_UINT, struct dp_rdma, qps, 1, 64)},
	{"size", "SIZE, 1..256M", "65536", "bytes per RDMA WRITE", NULL, DP_KEY_FIELD(DP_KEY_BYTES, struct dp_rdma, size, 1, 256u << 20)},
	{"count", "1..100000000", "64", "messages", NULL, DP_KEY_FIELD(DP_KEY_UINT, struct dp_rdma, count, 1, 100000000)},
	{"depth", "1..128", "4", "outstanding messages per QP", NULL, DP_KEY_FIELD(DP_KEY_UINT, struct dp_rdma, depth, 1, 128)},
	{"mtu", "256|512|1024|2048|4096", "4096", "path MTU", .set = set_mtu},
	{"dscp", "0..63", "26", "DSCP of the QPs (26: priority 3, lossless by default)", NULL, DP_KEY_FIELD(DP_KEY_UINT, struct dp_rdma, dscp, 0, 63)},
	{"sport", "rxe|mlx5|fixed|hash", "rxe", "UDP source ports (mlx5 computes them as rxe)", .set = set_sport},
	{"start", "TIME", "0", "time of the first post", NULL, DP_KEY_FIELD(DP_KEY_TIME, struct dp_rdma, start_ns, 0, 0)},
};

#define N_RDMA_KEYS (sizeof(rdma_keys) / sizeof(rdma_keys[0]))

void dp_rdma_help(FILE *out)
{
	dp_keys_help(rdma_keys, N_RDMA_KEYS,
		     "--rdma SRC>DST[:KEY=VALUE,...] between emulated NICs (the same keys in a traffic "
		     "file's rdma entries):", out);
}

struct rdma_parse {
	struct dp_rdma *r;
	char what[192]; /* "--rdma 'SPEC'" */
	char *err;
	size_t errlen;
};

static int rdma_kv(void *ctx, const char *k, const char *v)
{
	struct rdma_parse *rp = ctx;

	return dp_keys_set(rdma_keys, N_RDMA_KEYS, rp->r, rp->what, k, v, rp->err, rp->errlen);
}

/*
 * spec read against topology t into r (its settings; src and dst are t's
 * host indices): two emulated hosts and the keys. 0, or -1 with a message.
 */
static int rdma_read(const struct topo *t, struct dp_rdma *r, const char *spec, char *err,
		     size_t errlen)
{
	char buf[160], *opts;
	int s, d;
	struct rdma_parse rp = {.r = r, .err = err, .errlen = errlen};
	const char *bad;

	snprintf(r->spec, sizeof(r->spec), "%s", spec);
	snprintf(buf, sizeof(buf), "%s", spec);
	snprintf(rp.what, sizeof(rp.what), "--rdma '%.160s'", spec);
	r->qps = 1, r->size = 65536, r->count = 64, r->depth = 4, r->mtu = 4096, r->dscp = 26;
	if (dp_parse_pair(t, buf, "--rdma", spec, &s, &d, &opts, err, errlen) < 0)
		return -1;
	if (t->hosts[s].attach != TOPO_ATTACH_EMULATED || t->hosts[d].attach != TOPO_ATTACH_EMULATED) {
		snprintf(err, errlen, "--rdma '%s': both ends must be different emulated hosts", spec);
		return -1;
	}
	r->src = (uint32_t)s;
	r->dst = (uint32_t)d;
	return dp_kv_each(opts, rdma_kv, &rp, &bad) < 0 ? -1 : 0;
}

int dp_rdma_check(const struct topo *t, const char *spec, char *err, size_t errlen)
{
	struct dp_rdma r;

	memset(&r, 0, sizeof(r));
	return rdma_read(t, &r, spec, err, errlen);
}

static int parse_rdma(struct dp_nics *ns, struct dp_rdma *r, const char *spec, char *err,
		      size_t errlen)
{
	if (rdma_read(ns->topo, r, spec, err, errlen) < 0)
		return -1;
	r->src = (uint32_t)ns->by_host[r->src]; /* host -> NIC */
	r->dst = (uint32_t)ns->by_host[r->dst];
	return 0;
}

/* Bring a QP pair to RTS, each end pointing at the other through its gateway MAC. */
static int connect_qp(struct dp_rdma *r, struct ne_nic *nic, const struct topo_host *me,
		      const struct topo_host *peer, uint32_t qpn, uint32_t peer_qpn, uint8_t timeout)
{
	struct ne_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.state = NE_QPS_INIT;
	if (ne_qp_modify(nic, qpn, &a, NE_QP_STATE) != 0)
		return -1;
	a.state = NE_QPS_RTR;
	a.dest_qpn = peer_qpn;
	a.rq_psn = 0;
	a.path_mtu = r->mtu;
	a.dest_ipv4 = peer->ipv4;
	memcpy(a.dest_mac, me->gw_mac, 6);
	a.dscp = r->dscp;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	if (ne_qp_modify(nic, qpn, &a,
			 NE_QP_STATE | NE_QP_AV | NE_QP_PATH_MTU | NE_QP_DEST_QPN | NE_QP_RQ_PSN |
				 NE_QP_MAX_DEST_RD_ATOMIC | NE_QP_MIN_RNR_TIMER) != 0)
		return -1;
	a.state = NE_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ne_qp_modify(nic, qpn, &a,
			    NE_QP_STATE | NE_QP_SQ_PSN | NE_QP_TIMEOUT | NE_QP_RETRY_CNT |
				    NE_QP_RNR_RETRY | NE_QP_MAX_QP_RD_ATOMIC);
}

static void on_rdma_start(void *obj, uint64_t arg, uint64_t now)
{
	struct dp_rdma *r = obj;

	(void)arg;
	r->started = true;
	dp_nic_service(&r->ns->h[r->src], now);
}

int dp_nics_add_rdma(struct dp_nics *ns, const char *spec, uint64_t start_offset_ns, char *err,
		     size_t errlen)
{
	struct dp_rdma *r = calloc(1, sizeof(*r));
	struct dp_rdma **grown = realloc(ns->rdma, (ns->n_rdma + 1) * sizeof(*grown));

	if (r == NULL || grown == NULL) {
		free(r);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ns->rdma = grown;
	ns->rdma[ns->n_rdma++] = r;
	r->ns = ns;
	if (parse_rdma(ns, r, spec, err, errlen) < 0)
		return -1;
	/* the source NIC's service progresses its transfers in flag order */
	struct dp_nic_host *src = &ns->h[r->src];
	if (src->rdma_src_tail)
		src->rdma_src_tail->next_src = r;
	else
		src->rdma_src = r;
	src->rdma_src_tail = r;
	src->rdma_end = ns->h[r->dst].rdma_end = true;

	const struct topo *t = ns->fab->topo;
	struct dp_nic_host *S = &ns->h[r->src], *D = &ns->h[r->dst];
	const struct topo_host *sh = &t->hosts[S->host], *dh = &t->hosts[D->host];
	r->sbuf = malloc(r->size);
	r->dbuf = calloc(1, r->size);
	r->sqpn = calloc(r->qps, sizeof(*r->sqpn));
	r->dqpn = calloc(r->qps, sizeof(*r->dqpn));
	r->outstanding = calloc(r->qps, sizeof(*r->outstanding));
	if (!r->sbuf || !r->dbuf || !r->sqpn || !r->dqpn || !r->outstanding) {
		snprintf(err, errlen, "--rdma '%s': out of memory", spec);
		return -1;
	}
	for (uint32_t i = 0; i < r->size; i++)
		r->sbuf[i] = (uint8_t)(i * 131 + 7 + ns->n_rdma);
	struct ne_mr_attr sm = {.addr = r->sbuf, .len = r->size, .access = NE_ACCESS_LOCAL_WRITE};
	struct ne_mr_attr dm = {.addr = r->dbuf, .len = r->size,
				.access = NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE};
	uint32_t cq_depth = r->qps * r->depth + 16;
	r->scq = ne_cq_create(S->nic, cq_depth);
	r->dcq = ne_cq_create(D->nic, 16);
	if (ne_mr_reg(S->nic, &sm, &r->skey) != 0 || ne_mr_reg(D->nic, &dm, &r->dkey) != 0 ||
	    r->scq == NULL || r->dcq == NULL ||
	    ne_nic_set_sport_policy(S->nic, r->sport, 0xc000, S->host + 1) != 0 ||
	    ne_nic_set_sport_policy(D->nic, r->sport, 0xc000, D->host + 1) != 0) {
		snprintf(err, errlen, "--rdma '%s': NIC resources exhausted", spec);
		return -1;
	}
	for (uint32_t q = 0; q < r->qps; q++) {
		struct ne_qp_init_attr sa = {.send_cq = r->scq, .recv_cq = r->scq,
					     .max_send_wr = r->depth + 1, .max_recv_wr = 1};
		struct ne_qp_init_attr da = {.send_cq = r->dcq, .recv_cq = r->dcq,
					     .max_send_wr = 1, .max_recv_wr = 1};
		if (ne_qp_create(S->nic, &sa, &r->sqpn[q]) != 0 ||
		    ne_qp_create(D->nic, &da, &r->dqpn[q]) != 0) {
			snprintf(err, errlen, "--rdma '%s': cannot create QP %u", spec, q);
			return -1;
		}
	}
	for (uint32_t q = 0; q < r->qps; q++)
		if (connect_qp(r, S->nic, sh, dh, r->sqpn[q], r->dqpn[q], dp_nics_rc_timeout(ns)) != 0 ||
		    connect_qp(r, D->nic, dh, sh, r->dqpn[q], r->sqpn[q], dp_nics_rc_timeout(ns)) != 0) {
			snprintf(err, errlen, "--rdma '%s': cannot connect QP %u", spec, q);
			return -1;
		}
	r->start_ns += start_offset_ns;
	return dp_timer_add_lp(nics_eng(ns), DP_LP_NICS, r->start_ns, on_rdma_start, r, 0);
}
