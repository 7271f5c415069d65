/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll_spec: a --coll spec, "key=value,...", read once through the key
 * table (ne_coll_keys.c): its defaults, the whole text, the rules between
 * keys, and the NIC room it needs. rocelab-dp's command line, its traffic
 * files and the experiment runner all come here (ne_coll.h).
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_CHUNK_DEFAULT (512u << 10)
#define SPEC_WINDOW_DEFAULT 4u
#define SPEC_SIZE_DEFAULT (1u << 20)
#define SPEC_TIMEOUT_DEFAULT 10 /* the virtual clock's RC timeout: rocelab-dp sets its own */
#define SPEC_PEERS_MIN 65u      /* room for 64 peers: --rdma transfers beside a ring */
#define SPEC_QPS_SPARE 16u

void ne_coll_spec_default(struct ne_coll_spec *s)
{
	memset(s, 0, sizeof(*s));
	ne_coll_config_default(&s->cfg);
	s->cfg.qp_mode = NE_COLL_QP_RR;
	s->cfg.chunk_bytes = SPEC_CHUNK_DEFAULT;
	s->cfg.window = SPEC_WINDOW_DEFAULT;
	s->cfg.sport = NE_COLL_SPORT_RXE;
	s->cfg.timeout = SPEC_TIMEOUT_DEFAULT;
	s->size_min = s->size_max = SPEC_SIZE_DEFAULT;
}

int ne_coll_spec_set(struct ne_coll_spec *s, const char *key, const char *value, char *msg,
		     size_t cap)
{
	return ne_coll_key_set(&s->cfg, s, key, value, msg, cap);
}

/* True when the pair (len bytes) sets model=: it goes first (below). */
static bool is_model(const char *pair, size_t len)
{
	return len > 6 && strncmp(pair, "model=", 6) == 0;
}

/* One "key=value" of text (len bytes, not terminated) into s. */
static int spec_pair(struct ne_coll_spec *s, const char *pair, size_t len, char *msg, size_t cap)
{
	char *kv = strndup(pair, len);
	char *eq = kv ? strchr(kv, '=') : NULL;
	int rc;

	if (kv == NULL) {
		snprintf(msg, cap, "out of memory");
		return -ENOMEM;
	}
	if (eq == NULL || eq == kv) {
		snprintf(msg, cap, "'%.80s': want key=value", kv);
		free(kv);
		return -EINVAL;
	}
	*eq = '\0';
	rc = ne_coll_spec_set(s, kv, eq + 1, msg, cap);
	free(kv);
	return rc;
}

int ne_coll_spec_parse(struct ne_coll_spec *s, const char *text, char *msg, size_t cap)
{
	const char *p = text ? text : "";

	if (msg && cap)
		msg[0] = '\0';
	/* model= first wherever it stands: it resets what NCCL's defaults cover
	 * (qps, mode, buffers), and a key given before it must not be lost
	 * (a traffic file's mapping has no order a user would think of) */
	for (int pass = 0; pass < 2; pass++) {
		for (p = text ? text : ""; *p;) {
			size_t len = strcspn(p, ",");
			int rc = len && is_model(p, len) == (pass == 0) ? spec_pair(s, p, len, msg, cap) : 0;
			if (rc)
				return rc;
			p += len + (p[len] == ',');
		}
	}
	return ne_coll_spec_check(s, msg, cap);
}

int ne_coll_spec_check(const struct ne_coll_spec *s, char *msg, size_t cap)
{
	const struct ne_coll_config *c = &s->cfg;
	const char *model = ne_coll_model_name(c->model);

	if (c->model == NE_COLL_MODEL_ROCELAB && c->qps_per_conn > NE_COLL_MAX_QPS) {
		snprintf(msg, cap, "qps=%u: model %s takes at most %u QPs per connection (model=nccl: %u)",
			 c->qps_per_conn, model, NE_COLL_MAX_QPS, NE_COLL_NCCL_MAX_QPS);
		return -EINVAL;
	}
	if (c->model == NE_COLL_MODEL_ROCELAB && c->qp_mode == NE_COLL_QP_CTRAN) {
		snprintf(msg, cap, "mode=ctran: CTRAN is NCCL's (give model=nccl first)");
		return -EINVAL;
	}
	if (c->op != NE_COLL_SENDRECV && (c->npairs || c->shift != 1)) {
		snprintf(msg, cap, "%s: only op=sendrecv takes it (op=%s)",
			 c->npairs ? "pairs" : "shift", ne_coll_op_name(c->op));
		return -EINVAL;
	}
	if (c->npairs && c->shift != 1) {
		snprintf(msg, cap, "shift=%u: pairs= gives the transfers, not the shift", c->shift);
		return -EINVAL;
	}
	if (c->algo == NE_COLL_ALGO_TREE && c->op != NE_COLL_ALLREDUCE) {
		snprintf(msg, cap, "algo=tree: the tree runs AllReduce only (op=%s)",
			 ne_coll_op_name(c->op));
		return -EINVAL;
	}
	if (c->model == NE_COLL_MODEL_NCCL && c->nccl_min_channels > c->nccl_max_channels) {
		snprintf(msg, cap, "NCCL_MIN_NCHANNELS=%u is above NCCL_MAX_NCHANNELS=%u",
			 c->nccl_min_channels, c->nccl_max_channels);
		return -EINVAL;
	}
	return 0;
}

void ne_coll_spec_free(struct ne_coll_spec *s)
{
	free(s->hosts);
	s->hosts = NULL;
}

uint32_t ne_coll_spec_qps_room(const struct ne_coll_spec *s, uint32_t nranks)
{
	struct ne_coll_config c = s->cfg;
	bool all_peers = c.op == NE_COLL_ALLTOALL || c.op == NE_COLL_INCAST;

	c.nranks = all_peers && nranks < SPEC_PEERS_MIN ? SPEC_PEERS_MIN : nranks;
	c.root = 0; /* (the incast root needs the most) */
	uint32_t need = ne_coll_qps_needed(&c, 0);
	/* sendrecv's pairs: the rank with the most (rank 0 may have none) */
	for (uint32_t r = 1; c.op == NE_COLL_SENDRECV && r < c.nranks; r++)
		if (ne_coll_qps_needed(&c, r) > need)
			need = ne_coll_qps_needed(&c, r);
	/* order=nccl: the channel rings' PXN connections (ne_coll_qps_needed
	 * with gpu_of, which the spec does not have yet) */
	if (s->order_nccl && !all_peers)
		need = need / 2 * 3;
	/* a ring's two peers: as many again for --rdma transfers beside it (the
	 * room rocelab-dp gave before this table owned the --coll keys) */
	return (all_peers ? need : 2 * need) + SPEC_QPS_SPARE;
}
