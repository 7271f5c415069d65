/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll_config_set(): one parameter from key=value text, with NCCL's
 * environment names for the nccl model (see ne_coll.h for the list). Each
 * key has one setter that checks the value before it writes anything.
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_US 1000.0
#define NS_PER_MS 1000000.0
#define NS_PER_S 1000000000.0
#define PROXY_COST_MAX_NS 1000000000.0
#define NCCL_TC_MAX 255u
#define DSCP_SHIFT 2 /* traffic class = DSCP << 2 | ECN */
#define MAX_ITERS 1000000u
#define MAX_WINDOW 1024u
#define CHUNK_MAX (1u << 30)
#define SERIES_MIN_NS 100u

struct key_ctx {
	const char *key, *val;
	char *msg;
	size_t cap;
};

/* Write "key=value: why" into the message buffer; returns -EINVAL. */
static int bad(const struct key_ctx *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(const struct key_ctx *k, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	if (!k->msg || !k->cap)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(k->msg, k->cap, "%s=%s: %s", k->key, k->val, why);
	return -EINVAL;
}

/* Decimal digits only, at most max. Returns the end of the digits, or NULL. */
static const char *digits(const char *v, uint64_t max, uint64_t *out)
{
	uint64_t x = 0;

	if (*v < '0' || *v > '9')
		return NULL;
	for (; *v >= '0' && *v <= '9'; v++) {
		if (x > (max - (uint64_t)(*v - '0')) / 10)
			return NULL;
		x = x * 10 + (uint64_t)(*v - '0');
	}
	*out = x;
	return v;
}

static int get_uint(const struct key_ctx *k, uint64_t lo, uint64_t hi, uint64_t *out)
{
	const char *end = digits(k->val, UINT64_MAX, out);

	if (!end || *end)
		return bad(k, "not an unsigned integer");
	if (*out < lo || *out > hi)
		return bad(k, "must be %llu..%llu", (unsigned long long)lo, (unsigned long long)hi);
	return 0;
}

/* Bytes: digits with an optional binary unit B, K, KiB, M, MiB, G, GiB. */
static int get_size(const struct key_ctx *k, uint64_t hi, uint64_t *out)
{
	static const struct {
		const char *unit;
		unsigned shift;
	} units[] = {{"", 0}, {"B", 0}, {"K", 10}, {"KiB", 10}, {"M", 20},
		     {"MiB", 20}, {"G", 30}, {"GiB", 30}};
	uint64_t x;
	const char *end = digits(k->val, UINT32_MAX, &x);

	if (!end)
		return bad(k, "not a size (bytes: 524288, 512K, 512KiB, 4M)");
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		x <<= units[i].shift;
		if (x > hi)
			return bad(k, "at most %llu bytes", (unsigned long long)hi);
		*out = x;
		return 0;
	}
	return bad(k, "bad unit '%s' (B, K, KiB, M, MiB, G, GiB)", end);
}

static int get_size128(const struct key_ctx *k, bool zero_ok, uint64_t *out)
{
	int rc = get_size(k, CHUNK_MAX, out);

	if (rc)
		return rc;
	if (*out % NE_COLL_NCCL_ALIGN || (!zero_ok && *out == 0))
		return bad(k, "must be a %smultiple of %u bytes", zero_ok ? "" : "non-zero ",
			   NE_COLL_NCCL_ALIGN);
	return 0;
}

/* Time: "0", or a number with a unit ns, us, ms, s; at most 1 s; whole ns. */
static int get_time(const struct key_ctx *k, uint32_t *ns)
{
	static const struct {
		const char *unit;
		double mult;
	} units[] = {{"ns", 1.0}, {"us", NS_PER_US}, {"ms", NS_PER_MS}, {"s", NS_PER_S}};
	char *end;
	double x;

	if (!strcmp(k->val, "0")) {
		*ns = 0;
		return 0;
	}
	if ((*k->val < '0' || *k->val > '9') && *k->val != '.')
		return bad(k, "not a time (0, 250ns, 1.5us)");
	x = strtod(k->val, &end);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double v;

		if (strcmp(end, units[i].unit))
			continue;
		v = x * units[i].mult;
		if (!isfinite(v) || v > PROXY_COST_MAX_NS)
			return bad(k, "at most 1 s");
		if (v != floor(v))
			return bad(k, "not a whole number of ns");
		*ns = (uint32_t)v;
		return 0;
	}
	return bad(k, *end ? "bad unit '%s' (ns, us, ms, s)" : "missing unit%s (ns, us, ms, s)",
		   end);
}

static int get_bool(const struct key_ctx *k, bool *out)
{
	if (!strcmp(k->val, "1") || !strcmp(k->val, "on")) {
		*out = true;
		return 0;
	}
	if (!strcmp(k->val, "0") || !strcmp(k->val, "off")) {
		*out = false;
		return 0;
	}
	return bad(k, "must be 0 or 1");
}

/* ------------------------------------------------------------------ */
/* Setters */

static int set_model(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	if (!strcmp(k->val, "rocelab")) {
		cfg->model = NE_COLL_MODEL_ROCELAB;
		return 0;
	}
	if (strcmp(k->val, "nccl"))
		return bad(k, "must be rocelab or nccl");
	/* NCCL's defaults (2.20.3 on: round-robin) */
	cfg->model = NE_COLL_MODEL_NCCL;
	cfg->qps_per_conn = 1;
	cfg->qp_mode = NE_COLL_QP_RR;
	cfg->nccl_buffsize = NE_COLL_NCCL_BUFFSIZE_DEFAULT;
	cfg->nccl_p2p_chunk = NE_COLL_NCCL_P2P_CHUNK_DEFAULT;
	return 0;
}

static int set_split(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	bool v = false; /* get_bool sets it on success; gcc -O3 cannot see that */
	int rc = get_bool(k, &v);

	if (!rc)
		cfg->qp_mode = v ? NE_COLL_QP_SPLIT : NE_COLL_QP_RR;
	return rc;
}

static int set_qp_mode(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	for (int m = NE_COLL_QP_SPLIT; m <= NE_COLL_QP_CTRAN; m++)
		if (!strcmp(k->val, ne_coll_qp_mode_name((enum ne_coll_qp_mode)m))) {
			cfg->qp_mode = (enum ne_coll_qp_mode)m;
			return 0;
		}
	return bad(k, "must be split, rr or ctran");
}

static int set_op(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	for (int op = NE_COLL_ALLREDUCE; op <= NE_COLL_INCAST; op++)
		if (!strcmp(k->val, ne_coll_op_name((enum ne_coll_op)op))) {
			cfg->op = (enum ne_coll_op)op;
			return 0;
		}
	return bad(k, "must be allreduce, allgather, reducescatter, alltoall or incast");
}

static int set_buffsize(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	uint64_t v;
	int rc = get_size128(k, false, &v);

	if (!rc && v % (NE_COLL_NCCL_STEPS * NE_COLL_NCCL_ALIGN))
		rc = bad(k, "must be a multiple of %u bytes (%u steps of 128)",
			 NE_COLL_NCCL_STEPS * NE_COLL_NCCL_ALIGN, NE_COLL_NCCL_STEPS);
	if (!rc)
		cfg->nccl_buffsize = (uint32_t)v;
	return rc;
}

static int set_tc(const struct key_ctx *k, uint64_t *tc)
{
	return get_uint(k, 0, NCCL_TC_MAX, tc);
}

static int set_ib_tc(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	uint64_t v;
	int rc = set_tc(k, &v);

	if (!rc)
		cfg->data_dscp = (uint8_t)(v >> DSCP_SHIFT);
	return rc;
}

static int set_fifo_tc(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	uint64_t v;
	int rc = set_tc(k, &v);

	if (!rc)
		cfg->nccl_fifo_tc = (int16_t)v;
	return rc;
}

static int set_bytes(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	uint64_t v;
	int rc = get_size(k, UINT64_MAX >> 10, &v);

	if (!rc && v < sizeof(float))
		rc = bad(k, "at least one float (4 bytes)");
	if (!rc)
		cfg->bytes = v;
	return rc;
}

/* The active-QP series' interval: 0 (off) or 100 ns .. 1 s. */
static int set_series(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	uint32_t ns = 0; /* (set when get_time() returns 0; -O3 cannot see that bad() returns < 0) */
	int rc = get_time(k, &ns);

	if (rc)
		return rc;
	if (ns && ns < SERIES_MIN_NS)
		return bad(k, "at least 100ns (or 0: off)");
	cfg->series_ns = ns;
	return 0;
}

/* How a key's value is read and where it goes. */
enum key_kind {
	KEY_U32,     /* decimal in [lo, hi] into a uint32_t field */
	KEY_SIZE,    /* bytes, a multiple of 128, into a uint32_t field (lo: 0 allowed) */
	KEY_TIME,    /* ns into a uint32_t field */
	KEY_BOOL,    /* 0/1 into a bool field */
	KEY_FN,      /* its own setter */
};

#define U32(f) offsetof(struct ne_coll_config, f)

static const struct key_def {
	const char *key;
	enum key_kind kind;
	size_t off;
	uint32_t lo, hi;
	int (*set)(struct ne_coll_config *cfg, const struct key_ctx *k);
	bool ctran; /* also selects qp_mode ctran */
} keys[] = {
	{"model", KEY_FN, 0, 0, 0, set_model, false},
	{"NCCL_IB_QPS_PER_CONNECTION", KEY_U32, U32(qps_per_conn), 1, NE_COLL_NCCL_MAX_QPS, NULL, false},
	{"NCCL_IB_SPLIT_DATA_ON_QPS", KEY_FN, 0, 0, 0, set_split, false},
	{"NCCL_BUFFSIZE", KEY_FN, 0, 0, 0, set_buffsize, false},
	{"NCCL_P2P_NET_CHUNKSIZE", KEY_SIZE, U32(nccl_p2p_chunk), 1, 0, NULL, false},
	{"NCCL_MIN_NCHANNELS", KEY_U32, U32(nccl_min_channels), 1, NE_COLL_MAX_CHANNELS, NULL, false},
	{"NCCL_MAX_NCHANNELS", KEY_U32, U32(nccl_max_channels), 1, NE_COLL_MAX_CHANNELS, NULL, false},
	{"NCCL_IB_TC", KEY_FN, 0, 0, 0, set_ib_tc, false},
	{"NCCL_IB_FIFO_TC", KEY_FN, 0, 0, 0, set_fifo_tc, false},
	{"NCCL_CTRAN_IB_MAX_QPS", KEY_U32, U32(qps_per_conn), 1, NE_COLL_NCCL_MAX_QPS, NULL, true},
	{"NCCL_CTRAN_IB_QP_SCALING_THRESHOLD", KEY_SIZE, U32(ctran_wqe_bytes), 0, 0, NULL, false},
	{"NCCL_CTRAN_IB_QP_MAX_MSGS", KEY_U32, U32(ctran_max_msgs), 1, UINT16_MAX, NULL, false},
	{"proxy_post_wqe", KEY_TIME, U32(proxy_post_ns), 0, 0, NULL, false},
	{"proxy_poll_cqe", KEY_TIME, U32(proxy_poll_ns), 0, 0, NULL, false},
	{"series", KEY_FN, 0, 0, 0, set_series, false},
	{"op", KEY_FN, 0, 0, 0, set_op, false},
	{"nranks", KEY_U32, U32(nranks), 2, NE_COLL_MAX_RANKS, NULL, false},
	{"bytes", KEY_FN, 0, 0, 0, set_bytes, false},
	{"channels", KEY_U32, U32(channels), 1, NE_COLL_MAX_CHANNELS, NULL, false},
	{"qps", KEY_U32, U32(qps_per_conn), 1, NE_COLL_NCCL_MAX_QPS, NULL, false},
	{"qp_mode", KEY_FN, 0, 0, 0, set_qp_mode, false},
	{"chunk", KEY_SIZE, U32(chunk_bytes), 1, 0, NULL, false},
	{"window", KEY_U32, U32(window), 1, MAX_WINDOW, NULL, false},
	{"cts", KEY_BOOL, offsetof(struct ne_coll_config, cts), 0, 0, NULL, false},
	{"data", KEY_BOOL, offsetof(struct ne_coll_config, data), 0, 0, NULL, false},
	{"iters", KEY_U32, U32(iters), 1, MAX_ITERS, NULL, false},
	{"warmup_iters", KEY_U32, U32(warmup_iters), 0, MAX_ITERS, NULL, false},
};

static int apply(struct ne_coll_config *cfg, const struct key_def *d, const struct key_ctx *k)
{
	uint8_t *field = (uint8_t *)cfg + d->off;
	uint64_t v = 0;
	uint32_t u = 0;
	bool b = false;
	int rc;

	switch (d->kind) {
	case KEY_U32:
		rc = get_uint(k, d->lo, d->hi, &v);
		u = (uint32_t)v;
		break;
	case KEY_SIZE:
		rc = get_size128(k, d->lo == 0, &v);
		u = (uint32_t)v;
		break;
	case KEY_TIME:
		rc = get_time(k, &u);
		break;
	case KEY_BOOL:
		rc = get_bool(k, &b);
		if (!rc)
			memcpy(field, &b, sizeof(b));
		return rc;
	case KEY_FN:
	default:
		return d->set(cfg, k);
	}
	if (rc)
		return rc;
	memcpy(field, &u, sizeof(u));
	if (d->ctran)
		cfg->qp_mode = NE_COLL_QP_CTRAN;
	return 0;
}

int ne_coll_config_set_msg(struct ne_coll_config *cfg, const char *key, const char *value,
			   char *msg, size_t cap)
{
	struct key_ctx k = {key ? key : "(null)", value ? value : "(null)", msg, cap};

	if (msg && cap)
		msg[0] = '\0';
	if (!cfg || !key || !value)
		return bad(&k, "missing config, key or value");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(key, keys[i].key))
			return apply(cfg, &keys[i], &k);
	return bad(&k, "unknown key");
}

int ne_coll_config_set(struct ne_coll_config *cfg, const char *key, const char *value)
{
	return ne_coll_config_set_msg(cfg, key, value, NULL, 0);
}
