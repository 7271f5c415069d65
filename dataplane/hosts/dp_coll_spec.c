/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_coll_spec: a --coll SPEC read into a collective: the keys this layer
 * owns (hosts, sizes, ...), the others handed to ne_coll_config_set, the
 * questions rocelab-dp asks of a spec before the fabric exists.
 */
#define _GNU_SOURCE /* qsort_r */
#include "dp_nic_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dp_pool.h"
#include "dp_units.h"
#include "rl_mem.h"

/* True for the keys --coll parses itself; the rest go to ne_coll_config_set(). */
static bool coll_key_own(const struct dp_coll *c, const char *k)
{
	static const char *const own[] = {"op", "mode", "cts", "data", "sport", "hosts", "sizes",
					   "size", "chunk", "channels", "window", "iters", "warmup"};

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strcmp(k, own[i]) == 0)
			return true;
	/* qps up to NE_COLL_MAX_QPS in model rocelab; model nccl takes up to 128 */
	return strcmp(k, "qps") == 0 && c->cfg.model != NE_COLL_MODEL_NCCL;
}

/*
 * One key=value of --coll. Keys of ne_coll_config_set() (model, NCCL_*,
 * proxy_post_wqe, proxy_poll_cqe, ...) pass through; its message naming the
 * pair and what is wrong lands in why. Returns 0 or -1.
 */
static int coll_kv(struct dp_nics *ns, struct dp_coll *c, const char *k, const char *v, char *why,
		   size_t whylen)
{
	uint64_t n;

	if (!coll_key_own(c, k))
		return ne_coll_config_set_msg(&c->cfg, k, v, why, whylen) == 0 ? 0 : -1;

	if (strcmp(k, "op") == 0) {
		for (int op = NE_COLL_ALLREDUCE; op <= NE_COLL_INCAST; op++)
			if (strcmp(v, ne_coll_op_name((enum ne_coll_op)op)) == 0) {
				c->cfg.op = (enum ne_coll_op)op;
				return 0;
			}
		return -1;
	}
	if (strcmp(k, "mode") == 0) {
		if (strcmp(v, "split") == 0)
			c->cfg.qp_mode = NE_COLL_QP_SPLIT;
		else if (strcmp(v, "rr") == 0)
			c->cfg.qp_mode = NE_COLL_QP_RR;
		else if (strcmp(v, "ctran") == 0 && c->cfg.model == NE_COLL_MODEL_NCCL)
			c->cfg.qp_mode = NE_COLL_QP_CTRAN;
		else
			return -1;
		return 0;
	}
	if (strcmp(k, "cts") == 0 || strcmp(k, "data") == 0) {
		bool on = strcmp(v, "on") == 0;
		if (!on && strcmp(v, "off") != 0)
			return -1;
		if (k[0] == 'c')
			c->cfg.cts = on;
		else
			c->cfg.data = on;
		return 0;
	}
	if (strcmp(k, "sport") == 0) {
		if (strcmp(v, "rxe") == 0 || strcmp(v, "mlx5") == 0)
			c->cfg.sport = NE_COLL_SPORT_RXE; /* mlx5 computes it as rxe does */
		else if (strcmp(v, "fixed") == 0)
			c->cfg.sport = NE_COLL_SPORT_FIXED;
		else if (strcmp(v, "hash") == 0)
			c->cfg.sport = NE_COLL_SPORT_HASH;
		else
			return -1;
		return 0;
	}
	if (strcmp(k, "hosts") == 0) {
		const struct topo *t = ns->fab->topo;
		c->cfg.nranks = 0;
		if (strcmp(v, "all") == 0) {
			for (uint32_t i = 0; i < ns->n && i < NE_COLL_MAX_RANKS; i++)
				c->rank_nic[c->cfg.nranks++] = i;
			return 0;
		}
		char *buf = strdup(v), *save = NULL; /* (a list of a thousand hosts is long) */
		int rc = buf ? 0 : -1;
		for (char *h = buf ? strtok_r(buf, "+", &save) : NULL; h && rc == 0;
		     h = strtok_r(NULL, "+", &save)) {
			int hi = topo_host_by_name(t, h);
			if (hi < 0 || !dp_nics_owns(ns, (uint32_t)hi) || c->cfg.nranks == ns->n) {
				rc = -1;
				break;
			}
			for (uint32_t r = 0; r < c->cfg.nranks && rc == 0; r++)
				if (c->rank_nic[r] == (uint32_t)ns->by_host[hi])
					rc = -1; /* a host at most once */
			if (rc == 0)
				c->rank_nic[c->cfg.nranks++] = (uint32_t)ns->by_host[hi];
		}
		free(buf);
		return rc;
	}
	if (strcmp(k, "sizes") == 0 || strcmp(k, "size") == 0) {
		char buf[64], *colon;
		snprintf(buf, sizeof(buf), "%s", v);
		colon = strchr(buf, ':');
		if (colon)
			*colon++ = '\0';
		if (dp_parse_bytes(buf, &c->size_min) < 0 || c->size_min == 0 ||
		    dp_parse_bytes(colon ? colon : buf, &c->size_max) < 0 || c->size_max < c->size_min)
			return -1;
		return 0;
	}
	if (strcmp(k, "chunk") == 0) {
		if (dp_parse_bytes(v, &n) < 0 || n < 4 || n > (64u << 20) || n % 4)
			return -1;
		c->cfg.chunk_bytes = (uint32_t)n;
		return 0;
	}
	if (dp_parse_u64(v, &n) < 0)
		return -1;
	if (strcmp(k, "qps") == 0 && n >= 1 && n <= NE_COLL_MAX_QPS)
		c->cfg.qps_per_conn = (uint32_t)n;
	else if (strcmp(k, "channels") == 0 && n >= 1 && n <= NE_COLL_MAX_CHANNELS)
		c->cfg.channels = (uint32_t)n;
	else if (strcmp(k, "window") == 0 && n >= 1 && n <= 64)
		c->cfg.window = (uint32_t)n;
	else if (strcmp(k, "iters") == 0 && n >= 1 && n <= 1000)
		c->cfg.iters = (uint32_t)n;
	else if (strcmp(k, "warmup") == 0 && n <= 1000)
		c->cfg.warmup_iters = (uint32_t)n;
	else
		return -1;
	return 0;
}

struct coll_parse {
	struct dp_nics *ns;
	struct dp_coll *c;
	char why[192]; /* ne_coll's message for a key it refused */
};

static int coll_kv_cb(void *ctx, const char *k, const char *v)
{
	struct coll_parse *cp = ctx;

	return coll_kv(cp->ns, cp->c, k, v, cp->why, sizeof(cp->why));
}

void coll_free(struct dp_coll *c)
{
	if (c == NULL)
		return;
	ne_coll_destroy(c->run);
	if (c->series)
		fclose(c->series);
	free(c->rank_nic);
	free(c->nics);
	free(c->lane);
	free(c->lane_run);
	free(c->lane_of);
	free(c->lane_left);
	free(c->pwake);
	free(c);
}

void dp_nics_tag_colls(struct dp_nics *ns, bool on)
{
	ns->coll_tags = on;
}

/*
 * The hosts of a parsed collective c become its ranks, unless one already
 * is a rank of another collective. Returns 0, or -1 with a message.
 */
int coll_take_ranks(struct dp_nics *ns, struct dp_coll *c, char *err, size_t errlen)
{
	for (uint32_t r = 0; r < c->cfg.nranks; r++) {
		const struct dp_nic_host *nh = &ns->h[c->rank_nic[r]];
		if (nh->coll != NULL) {
			snprintf(err, errlen, "--coll: host %s is a rank of collective %u already "
				 "(collectives run on disjoint hosts: give each its hosts=)",
				 ns->fab->topo->hosts[nh->host].name, nh->coll->id);
			return -1;
		}
	}
	for (uint32_t r = 0; r < c->cfg.nranks; r++) {
		struct dp_nic_host *nh = &ns->h[c->rank_nic[r]];
		c->nics[r] = nh->nic;
		nh->coll_rank = (int32_t)r;
		nh->coll = c;
	}
	return 0;
}

/* --coll's defaults where they are not ne_coll's. */
static void coll_defaults(struct dp_coll *c, uint8_t timeout)
{
	ne_coll_config_default(&c->cfg);
	c->cfg.qp_mode = NE_COLL_QP_RR;
	c->cfg.chunk_bytes = 512u << 10;
	c->cfg.window = 4;
	c->cfg.sport = NE_COLL_SPORT_RXE;
	c->cfg.timeout = timeout;
	c->size_min = c->size_max = 1u << 20;
}

/* dp_nics_coll_splits: every key but hosts= (which needs the NICs), errors left to the real parse. */
static int splits_kv(void *ctx, const char *k, const char *v)
{
	char why[8];

	if (strcmp(k, "hosts") != 0)
		coll_kv(NULL, ctx, k, v, why, sizeof(why));
	return 0;
}

/* spec's keys read into *c (hosts= aside), errors left to the real parse; false when out of memory. */
static bool coll_peek(const char *spec, struct dp_coll *c)
{
	char *buf = spec ? strdup(spec) : NULL;
	const char *bad;

	if (buf == NULL)
		return false;
	coll_defaults(c, 10);
	dp_kv_each(buf, splits_kv, c, &bad);
	free(buf);
	return true;
}

bool dp_nics_coll_splits(const char *spec)
{
	struct dp_coll *c = calloc(1, sizeof(*c));
	bool ok = c && coll_peek(spec, c) && c->cfg.iters == 1 && c->cfg.warmup_iters == 0;

	free(c);
	return ok;
}

bool dp_nics_coll_sweeps(const char *spec)
{
	struct dp_coll *c = calloc(1, sizeof(*c));
	bool sweeps = c && coll_peek(spec, c) && c->size_min < c->size_max;

	free(c);
	return sweeps;
}

/* dp_nics_add_coll's parse and checks of spec into c. Returns 0, or -1 with a message. */
int coll_parse_spec(struct dp_nics *ns, struct dp_coll *c, const char *spec, char *err,
			   size_t errlen)
{
	char *buf = NULL;

	snprintf(c->spec, sizeof(c->spec), "%s", spec);
	c->rank_nic = calloc(ns->n + 1, sizeof(*c->rank_nic));
	c->nics = calloc(ns->n + 1, sizeof(*c->nics));
	if (!c->rank_nic || !c->nics) {
		snprintf(err, errlen, "--coll: out of memory");
		return -1;
	}
	coll_defaults(c, dp_nics_rc_timeout(ns));
	struct coll_parse cp = {.ns = ns, .c = c};
	coll_kv(ns, c, "hosts", "all", cp.why, sizeof(cp.why));
	buf = strdup(spec);
	if (buf == NULL) {
		snprintf(err, errlen, "--coll: out of memory");
		return -1;
	}
	const char *bad;
	cp.why[0] = '\0';
	int kv = dp_kv_each(buf, coll_kv_cb, &cp, &bad);
	if (kv < 0) {
		if (cp.why[0])
			snprintf(err, errlen, "--coll: bad %s", cp.why); /* names the pair */
		else
			snprintf(err, errlen, "--coll: bad '%.200s'", bad);
	}
	free(buf);
	if (kv < 0)
		return -1;
	if (c->cfg.nranks < 2) {
		snprintf(err, errlen, "--coll: needs at least 2 emulated hosts (has %u)", c->cfg.nranks);
		return -1;
	}
	c->cfg.bytes = c->size_max;
	if (ne_coll_config_check(&c->cfg) != 0) {
		snprintf(err, errlen, "--coll '%s': inconsistent settings", spec);
		return -1;
	}
	return 0;
}

struct coll_size {
	uint32_t qps, channels;
	uint32_t ranks;  /* hosts= named, 0: all */
	bool all_peers; /* alltoall / incast: a NIC talks to every other rank */
};

/* The keys that size a NIC; the rest (and bad values) are --coll's own parse's business. */
static int coll_size_kv(void *ctx, const char *k, const char *v)
{
	struct coll_size *cs = ctx;
	uint64_t n;

	bool qps = strcmp(k, "qps") == 0 || strcmp(k, "NCCL_IB_QPS_PER_CONNECTION") == 0 ||
		   strcmp(k, "NCCL_CTRAN_IB_MAX_QPS") == 0;
	bool chans = strcmp(k, "channels") == 0 || strcmp(k, "NCCL_MIN_NCHANNELS") == 0;

	if (qps && dp_parse_u64(v, &n) == 0 && n >= 1 && n <= 1024)
		cs->qps = (uint32_t)n;
	else if (chans && dp_parse_u64(v, &n) == 0 && n >= 1 && n <= 64)
		cs->channels = n > cs->channels ? (uint32_t)n : cs->channels; /* the larger */
	else if (strcmp(k, "op") == 0)
		cs->all_peers = strcmp(v, "alltoall") == 0 || strcmp(v, "incast") == 0;
	else if (strcmp(k, "hosts") == 0) {
		cs->ranks = strcmp(v, "all") != 0;
		for (const char *c = v; cs->ranks && *c; c++)
			cs->ranks += *c == '+';
	}
	return 0;
}

/* QPs a NIC needs for the --coll spec (read before the NICs exist); 0 without --coll. */
uint32_t dp_nics_coll_qps(const char *spec, uint32_t n_emulated)
{
	struct coll_size cs = {.qps = 1, .channels = 1};
	const char *bad;
	char *buf = spec ? strdup(spec) : NULL;

	if (buf == NULL)
		return 0; /* (no --coll; out of memory: dp_nics_add_coll will say so) */
	dp_kv_each(buf, coll_size_kv, &cs, &bad); /* never refuses a key */
	free(buf);
	/* per peer connection and channel: data QPs + 1 control QP, both directions;
	 * a ring has 2 peers, an AllToAll or incast up to every other rank (at
	 * least 64: room for --rdma transfers beside it; an incast's root at
	 * 1,024 ranks needs 2,046: the table is allocated whole, touched as used) */
	uint32_t ranks = cs.ranks ? cs.ranks : n_emulated;
	uint32_t peers = cs.all_peers ? RTE_MAX(ranks, 65u) - 1 : 2;
	return 2 * (cs.qps + 1) * cs.channels * peers + 16;
}
