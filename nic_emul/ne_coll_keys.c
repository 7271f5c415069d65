/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll_config_set(): one parameter from key=value text, with NCCL's
 * environment names for the nccl model (see ne_coll.h for the list). Each
 * key has one setter that checks the value before it writes anything.
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nc_tune.h"
#include "rl_suggest.h"
#include "rl_units.h"

#define PROXY_COST_MAX_NS 1000000000ull
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
	struct ne_coll_spec *spec; /* NULL: ne_coll_config_set (no spec-only keys) */
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

/* Bytes in the one size grammar (common/rl_units.h): 512K, 512KiB, 4M, 64KB. */
static int get_size(const struct key_ctx *k, uint64_t hi, uint64_t *out)
{
	uint64_t x;
	enum rl_units_err e = rl_units_parse(k->val, rl_size_units(), false, &x);

	if (e != RL_UNITS_OK)
		return bad(k, "%s (%s)", rl_units_why(e), RL_SIZE_HINT);
	if (x > hi)
		return bad(k, "at most %llu bytes", (unsigned long long)hi);
	*out = x;
	return 0;
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

/* Time in the one grammar (common/rl_units.h): "0" or 250ns, 1.5us; whole ns, at most 1 s. */
static int get_time(const struct key_ctx *k, uint32_t *ns)
{
	uint64_t x;
	enum rl_units_err e = rl_units_parse(k->val, rl_time_units(), true, &x);

	if (e != RL_UNITS_OK)
		return bad(k, "%s (%s)", rl_units_why(e), RL_TIME_HINT);
	if (x > PROXY_COST_MAX_NS)
		return bad(k, "at most 1 s");
	*ns = (uint32_t)x;
	return 0;
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

/* "KEY=VALUE: must be a, b or c (did you mean b?)" for a word not among words. */
static int bad_word(const struct key_ctx *k, const char *const *words, size_t n)
{
	char list[160];
	size_t o = 0;
	const char *near = rl_suggest(k->val, words, n);

	list[0] = '\0';
	for (size_t i = 0; i < n && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
				      words[i]);
	if (near)
		return bad(k, "must be %s (did you mean %s?)", list, near);
	return bad(k, "must be %s", list);
}

/* ------------------------------------------------------------------ */
/* Setters */

static int set_model(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	if (!strcmp(k->val, "rocelab")) {
		cfg->model = NE_COLL_MODEL_ROCELAB;
		return 0;
	}
	if (strcmp(k->val, "nccl")) {
		static const char *const models[] = {"rocelab", "nccl"};
		return bad_word(k, models, sizeof(models) / sizeof(models[0]));
	}
	/* NCCL's defaults (2.20.3 on: round-robin) */
	cfg->model = NE_COLL_MODEL_NCCL;
	cfg->qps_per_conn = 1;
	cfg->qp_mode = NE_COLL_QP_RR;
	cfg->nccl_buffsize = NE_COLL_NCCL_BUFFSIZE_DEFAULT;
	cfg->nccl_p2p_chunk = NE_COLL_NCCL_P2P_CHUNK_DEFAULT;
	return 0;
}

/* launch=off|nccl|TIME (NE_COLL_LAUNCH_NCCL: resolved at create) */
static int set_launch(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	if (!strcmp(k->val, "off")) {
		cfg->launch_ns = 0;
		return 0;
	}
	if (!strcmp(k->val, "nccl")) {
		cfg->launch_ns = NE_COLL_LAUNCH_NCCL;
		return 0;
	}
	if (k->val[0] < '0' || k->val[0] > '9')
		return bad(k, "must be off, nccl or a time such as 8.4us");
	return get_time(k, &cfg->launch_ns); /* (at most 1 s: never NE_COLL_LAUNCH_NCCL) */
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
	static const char *const modes[] = {"split", "rr", "ctran"};
	return bad_word(k, modes, sizeof(modes) / sizeof(modes[0]));
}

static int set_op(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	for (int op = NE_COLL_ALLREDUCE; op <= NE_COLL_SENDRECV; op++)
		if (!strcmp(k->val, ne_coll_op_name((enum ne_coll_op)op))) {
			cfg->op = (enum ne_coll_op)op;
			return 0;
		}
	static const char *const ops[] = {"allreduce", "allgather", "reducescatter", "alltoall",
					  "incast", "broadcast", "reduce", "sendrecv"};
	return bad_word(k, ops, sizeof(ops) / sizeof(ops[0]));
}

static int set_algo(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	static const char *const algos[] = {"ring", "tree", "auto"};

	for (uint32_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++)
		if (!strcmp(k->val, algos[a])) {
			cfg->algo = (enum ne_coll_algo)a;
			return 0;
		}
	return bad_word(k, algos, sizeof(algos) / sizeof(algos[0]));
}

/* NCCL_ALGO=LIST / NCCL_PROTO=LIST read by nc_tune's parser (NCCL's
 * parseList: names, '^' negates); its message without its "VAR: " prefix. */
static int tune_list(const struct key_ctx *k, bool algo, bool *on)
{
	struct nc_tune_params p;
	char err[256];
	const char *why;

	nc_tune_params_h100(&p, 2, 8);
	if ((algo ? nc_tune_set_algo : nc_tune_set_proto)(&p, k->val, err, sizeof(err)) == 0) {
		for (uint32_t i = 0; i < (algo ? NC_ALGO_COUNT : NC_PROTO_COUNT); i++)
			on[i] = algo ? p.algo_on[i] : p.proto_on[i];
		return 0;
	}
	why = strstr(err, ": ");
	return bad(k, "%s", why ? why + 2 : err);
}

/* NCCL_ALGO: Tree alone is algo=tree, Ring alone algo=ring, both auto
 * (the tuning picks). */
static int set_nccl_algo(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	bool on[NC_ALGO_COUNT];
	int rc = tune_list(k, true, on);

	if (rc)
		return rc;
	cfg->nccl_algo_off = 0;
	for (uint32_t a = 0; a < NC_ALGO_COUNT; a++)
		cfg->nccl_algo_off |= on[a] ? 0 : (uint8_t)(1u << a);
	cfg->algo = !on[NC_ALGO_RING]  ? NE_COLL_ALGO_TREE
		    : !on[NC_ALGO_TREE] ? NE_COLL_ALGO_RING
					: NE_COLL_ALGO_AUTO;
	return 0;
}

/* NCCL_PROTO: the tuning's choices, or the protocol run (ne_coll_proto_resolve);
 * LL and LL128 run only in the nccl model (given before this key). */
static int set_nccl_proto(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	bool on[NC_PROTO_COUNT];
	int rc = tune_list(k, false, on);

	if (rc)
		return rc;
	if (!on[NC_PROTO_SIMPLE] && cfg->model != NE_COLL_MODEL_NCCL)
		return bad(k, "LL and LL128 are modelled with model=nccl only (give it first): "
			      "keep Simple in the list");
	cfg->nccl_proto_off = 0;
	for (uint32_t pr = 0; pr < NC_PROTO_COUNT; pr++)
		cfg->nccl_proto_off |= on[pr] ? 0 : (uint8_t)(1u << pr);
	return 0;
}

/* release: the NCCL release whose tuning formulas the tuning and
 * launch=nccl follow (nc_tune_set_release); its message without "release: ". */
static int set_release(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	enum nc_release r;
	char err[256];
	const char *why;

	if (nc_tune_set_release(&r, k->val, err, sizeof(err)) == 0) {
		cfg->nccl_release = (uint8_t)r;
		return 0;
	}
	why = strstr(err, ": ");
	return bad(k, "%s", why ? why + 2 : err);
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

/* NCCL_IB_TIMEOUT: the QPs' IB timeout code, kept by the driver (ne_coll_config.timeout_given). */
static int set_ib_timeout(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	uint64_t v;
	int rc = get_uint(k, 0, 31, &v);

	if (!rc) {
		cfg->timeout = (uint8_t)v;
		cfg->timeout_given = true;
	}
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
	uint64_t v = 0; /* (set when get_size returns 0; -O2 cannot see that bad() returns < 0) */
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


/* UDP source ports of the collective's QPs (mlx5 computes them as rxe does). */
static int set_sport(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	static const char *const words[] = {"rxe", "mlx5", "fixed", "hash"};
	static const enum ne_coll_sport policy[] = {NE_COLL_SPORT_RXE, NE_COLL_SPORT_RXE,
						    NE_COLL_SPORT_FIXED, NE_COLL_SPORT_HASH};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(k->val, words[i])) {
			cfg->sport = policy[i];
			return 0;
		}
	return bad_word(k, words, sizeof(words) / sizeof(words[0]));
}

/* The rocelab model's transfer size: a multiple of 4 bytes (a float), 4 B .. 1 GiB. */
static int set_chunk(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	uint64_t v = 0; /* (as in set_bytes) */
	int rc = get_size(k, CHUNK_MAX, &v);

	if (!rc && (v < sizeof(float) || v % sizeof(float)))
		rc = bad(k, "must be a non-zero multiple of 4 bytes (a float)");
	if (!rc)
		cfg->chunk_bytes = (uint32_t)v;
	return rc;
}

/* sizes=MIN[:MAX]: one size, or a sweep doubling from MIN to MAX (nccl-tests' -b/-e/-f 2). */
static int set_sizes(struct ne_coll_spec *s, const struct key_ctx *k)
{
	char lo[32];
	const char *colon = strchr(k->val, ':');
	size_t n = colon ? (size_t)(colon - k->val) : strlen(k->val);
	uint64_t a, b;

	if (n >= sizeof(lo))
		return bad(k, "not a size or a sweep MIN:MAX (64K, 1M:16M)");
	memcpy(lo, k->val, n);
	lo[n] = '\0';
	char why[160];
	struct key_ctx ka = {k->key, lo, why, sizeof(why), k->spec};
	struct key_ctx kb = {k->key, colon ? colon + 1 : lo, why, sizeof(why), k->spec};
	int rc = get_size(&ka, UINT64_MAX >> 10, &a);
	if (!rc)
		rc = get_size(&kb, UINT64_MAX >> 10, &b);
	if (rc) /* (why names the part: say the whole pair, then why) */
		return bad(k, "%s", strstr(why, ": ") ? strstr(why, ": ") + 2 : why);
	if (a < sizeof(float) || b < a)
		return bad(k, "needs 4 <= MIN <= MAX bytes");
	s->size_min = a;
	s->size_max = b;
	return 0;
}

/* hosts=all, or names joined by '+' (the caller knows the hosts: kept as text). */
static int set_hosts(struct ne_coll_spec *s, const struct key_ctx *k)
{
	char *h = NULL;

	if (!k->val[0] || k->val[0] == '+' || strstr(k->val, "++") || k->val[strlen(k->val) - 1] == '+')
		return bad(k, "want all or hosts joined by '+' (h0+h4+h8)");
	if (strcmp(k->val, "all") && (h = strdup(k->val)) == NULL)
		return bad(k, "out of memory");
	free(s->hosts);
	s->hosts = h;
	return 0;
}

/* order=hosts|nccl: the ranks as hosts= gives them, or NCCL's ring order
 * through each server (the caller knows the servers: a flag). */
static int set_order(struct ne_coll_spec *s, const struct key_ctx *k)
{
	if (strcmp(k->val, "hosts") && strcmp(k->val, "nccl"))
		return bad(k, "must be hosts or nccl");
	s->order_nccl = !strcmp(k->val, "nccl");
	return 0;
}

/* inplace=on|off: each size's in-place pass after its out-of-place one, as nccl-tests runs both. */
static int set_in_place(struct ne_coll_spec *s, const struct key_ctx *k)
{
	bool b = false;
	int rc = get_bool(k, &b);

	if (rc == 0)
		s->in_place = b;
	return rc;
}

/* pairs=S>D+S>D...: op sendrecv's one-way transfers. The ranks are checked
 * against the rank count once it is known (ne_coll_p2p_check). */
static int set_pairs(struct ne_coll_config *cfg, const struct key_ctx *k)
{
	const char *v = k->val;
	uint16_t pairs[NE_COLL_MAX_PAIRS][2]; /* (cfg is written once all are read) */
	uint32_t n = 0;

	for (;;) {
		uint64_t s, d;
		const char *e = digits(v, NE_COLL_MAX_RANKS - 1, &s);

		if (!e || *e != '>' || !(e = digits(e + 1, NE_COLL_MAX_RANKS - 1, &d)) ||
		    (*e && *e != '+'))
			return bad(k, "want SENDER>RECEIVER joined by '+' (0>1+2>3), ranks 0..%u",
				   NE_COLL_MAX_RANKS - 1);
		if (s == d)
			return bad(k, "rank %llu sends to itself", (unsigned long long)s);
		if (n == NE_COLL_MAX_PAIRS)
			return bad(k, "at most %u pairs", NE_COLL_MAX_PAIRS);
		for (uint32_t p = 0; p < n; p++)
			if (pairs[p][0] == s && pairs[p][1] == d)
				return bad(k, "%llu>%llu given twice", (unsigned long long)s,
					   (unsigned long long)d);
		pairs[n][0] = (uint16_t)s;
		pairs[n][1] = (uint16_t)d;
		n++;
		if (!*e)
			break;
		v = e + 1;
	}
	memcpy(cfg->pairs, pairs, n * sizeof(pairs[0]));
	cfg->npairs = n;
	return 0;
}

/* How a key's value is read and where it goes. */
enum key_kind {
	KEY_U32,     /* decimal in [lo, hi] into a uint32_t field */
	KEY_SIZE,    /* bytes, a multiple of 128, into a uint32_t field (lo: 0 allowed) */
	KEY_TIME,    /* ns into a uint32_t field */
	KEY_BOOL,    /* 0/1 (or off/on) into a bool field */
	KEY_FN,      /* its own setter */
	KEY_SPEC,    /* its own setter, on the --coll spec (not in ne_coll_config_set) */
};

#define U32(f) offsetof(struct ne_coll_config, f)

/*
 * The --coll language, one row per key: how it is read, its bounds, the
 * --coll default (as text; NULL: none to show) and what it means. The
 * command line, traffic and experiment files and ne_coll_config_set() all
 * read keys through this table; ne_coll_keys_help() prints it.
 */
static const struct key_def {
	const char *key;
	enum key_kind kind;
	size_t off;
	uint32_t lo, hi;
	int (*set)(struct ne_coll_config *cfg, const struct key_ctx *k);
	int (*set_spec)(struct ne_coll_spec *s, const struct key_ctx *k);
	bool ctran; /* also selects qp_mode ctran */
	const char *values, *dflt, *help;
	bool lib; /* ne_coll_config_set only: a --coll spec says it another way */
} keys[] = {
	{"op", KEY_FN, 0, 0, 0, set_op, NULL, false,
	 "allreduce|allgather|reducescatter|alltoall|incast|broadcast|reduce|sendrecv",
	 "allreduce",
	 "the collective", false},
	{"hosts", KEY_SPEC, 0, 0, 0, NULL, set_hosts, false,
	 "all | H1+H2+...", "all", "its ranks in order: every emulated host, or these", false},
	{"root", KEY_U32, U32(root), 0, NE_COLL_MAX_RANKS - 1, NULL, NULL, false, "0..1023", "0",
	 "the root rank of incast, broadcast and reduce (below the rank count)", false},
	{"shift", KEY_U32, U32(shift), 1, NE_COLL_MAX_RANKS - 1, NULL, NULL, false, "1..1023", "1",
	 "sendrecv: rank r sends to (r + shift) mod n (below the rank count)", false},
	{"pairs", KEY_FN, 0, 0, 0, set_pairs, NULL, false, "S>D+S>D...", NULL,
	 "sendrecv: these one-way transfers instead of the shift (ranks below the rank count)",
	 false},
	{"algo", KEY_FN, 0, 0, 0, set_algo, NULL, false, "ring|tree|auto", "ring",
	 "AllReduce's algorithm: the ring, NCCL's double binary tree, or NCCL's tuning's pick "
	 "per size (auto also tunes AllGather's and ReduceScatter's protocol)", false},
	{"order", KEY_SPEC, 0, 0, 0, NULL, set_order, false, "hosts|nccl", "hosts",
	 "the ring's rank order: as hosts= lists them, or NCCL's through each server "
	 "(GPU 0, G-1, ..., 1; servers in order of their first GPU in hosts=), "
	 "each channel its own ring and NIC (PXN)", false},
	{"sizes", KEY_SPEC, 0, 0, 0, NULL, set_sizes, false,
	 "SIZE | MIN:MAX", "1M", "bytes per rank (nccl-tests' size); a sweep doubles MIN to MAX", false},
	{"size", KEY_SPEC, 0, 0, 0, NULL, set_sizes, false, "SIZE | MIN:MAX", NULL, "same as sizes", false},
	{"model", KEY_FN, 0, 0, 0, set_model, NULL, false, "rocelab|nccl", "rocelab",
	 "nccl: NCCL's ring, pipeline and FIFO, and NCCL's defaults (give it first)", false},
	{"qps", KEY_U32, U32(qps_per_conn), 1, NE_COLL_NCCL_MAX_QPS, NULL, NULL, false, "1..128",
	 "1", "data QPs per connection (model rocelab: at most 64)", false},
	{"mode", KEY_FN, 0, 0, 0, set_qp_mode, NULL, false, "split|rr|ctran", "rr",
	 "how a message uses the QPs: split over all, whole messages round-robin, CTRAN's "
	 "fixed-size WQEs (model nccl)", false},
	{"qp_mode", KEY_FN, 0, 0, 0, set_qp_mode, NULL, false, "split|rr|ctran", NULL, "same as mode", false},
	{"channels", KEY_U32, U32(channels), 1, NE_COLL_MAX_CHANNELS, NULL, NULL, false, "1..64",
	 "1", "parallel rings (connections per peer)", false},
	{"chunk", KEY_FN, 0, 0, 0, set_chunk, NULL, false, "SIZE, multiple of 4", "512K",
	 "bytes per transfer (model rocelab)", false},
	{"window", KEY_U32, U32(window), 1, MAX_WINDOW, NULL, NULL, false, "1..1024", "4",
	 "chunks in flight per channel (model rocelab)", false},
	{"cts", KEY_BOOL, offsetof(struct ne_coll_config, cts), 0, 0, NULL, NULL, false,
	 "on|off", "on", "receiver-driven clear-to-send", false},
	{"sport", KEY_FN, 0, 0, 0, set_sport, NULL, false, "rxe|mlx5|fixed|hash", "rxe",
	 "UDP source ports of the QPs (mlx5 computes them as rxe)", false},
	{"iters", KEY_U32, U32(iters), 1, MAX_ITERS, NULL, NULL, false, "1..1000000", "1",
	 "measured iterations per size", false},
	{"warmup", KEY_U32, U32(warmup_iters), 0, MAX_ITERS, NULL, NULL, false, "0..1000000", "0",
	 "warm-up iterations per size", false},
	{"warmup_iters", KEY_U32, U32(warmup_iters), 0, MAX_ITERS, NULL, NULL, false, "0..1000000",
	 NULL, "same as warmup", false},
	{"inplace", KEY_SPEC, 0, 0, 0, NULL, set_in_place, false, "on|off", "off",
	 "also run each size's in-place pass, as nccl-tests does: the same transfers again, "
	 "after the out-of-place pass, on the fabric as it left it (off: its columns say N/A)",
	 false},
	{"data", KEY_BOOL, offsetof(struct ne_coll_config, data), 0, 0, NULL, NULL, false, "on|off",
	 "on", "move and check real data (off: the same wire, O(chunk) memory)", false},
	{"proxy_post_wqe", KEY_TIME, U32(proxy_post_ns), 0, 0, NULL, NULL, false, "TIME", "0",
	 "time each WQE post takes on the rank's one proxy thread (0: off)", false},
	{"proxy_poll_cqe", KEY_TIME, U32(proxy_poll_ns), 0, 0, NULL, NULL, false, "TIME", "0",
	 "time each CQE poll takes on the rank's one proxy thread (0: off)", false},
	{"launch", KEY_FN, 0, 0, 0, set_launch, NULL, false, "off|nccl|TIME", "off",
	 "fixed cost of each collective launch on every rank, before it sends: nccl = NCCL "
	 "2.21.5's latency model (or the release key's) of the algorithm and protocol run, "
	 "baseLat once (ring Simple 8.4us, LL 6.6us) and hwLat on each step (ring Simple: NVLink 3.4us, network 14us; "
	 "LL: 0.6us, 2.7us)", false},
	{"release", KEY_FN, 0, 0, 0, set_release, NULL, false, "2.21|2.23", "2.21",
	 "the NCCL release whose tuning formulas (src/graph/tuning.cc) algo=auto and launch=nccl "
	 "follow: 2.21 (v2.21.5-1, v2.22.3-1) or 2.23 (v2.23.4-1 to v2.30.7-1: one GPU per "
	 "server takes the Tree's network hwLat, an AllReduce ring 2 x (nodes - 1) network steps)",
	 false},
	{"series", KEY_FN, 0, 0, 0, set_series, NULL, false, "TIME", NULL,
	 "row interval of --coll-series (100ns..1s; 10us when not given)", false},
	{"NCCL_IB_QPS_PER_CONNECTION", KEY_U32, U32(qps_per_conn), 1, NE_COLL_NCCL_MAX_QPS, NULL,
	 NULL, false, "1..128", NULL, "NCCL's name for qps", false},
	{"NCCL_IB_SPLIT_DATA_ON_QPS", KEY_FN, 0, 0, 0, set_split, NULL, false, "0|1", NULL,
	 "1: mode=split, 0: mode=rr", false},
	{"NCCL_BUFFSIZE", KEY_FN, 0, 0, 0, set_buffsize, NULL, false, "SIZE, multiple of 1K", "4M",
	 "NCCL's buffer per connection (a step is 1/8)", false},
	{"NCCL_P2P_NET_CHUNKSIZE", KEY_SIZE, U32(nccl_p2p_chunk), 1, 0, NULL, NULL, false,
	 "SIZE, multiple of 128", "128K", "AllToAll, incast and sendrecv messages (model nccl)", false},
	{"NCCL_MIN_NCHANNELS", KEY_U32, U32(nccl_min_channels), 1, NE_COLL_MAX_CHANNELS, NULL, NULL,
	 false, "1..64", "1", "channels at least this (model nccl)", false},
	{"NCCL_MAX_NCHANNELS", KEY_U32, U32(nccl_max_channels), 1, NE_COLL_MAX_CHANNELS, NULL, NULL,
	 false, "1..64", "64", "channels at most this (model nccl)", false},
	{"NCCL_IB_TC", KEY_FN, 0, 0, 0, set_ib_tc, NULL, false, "0..255", "104",
	 "traffic class of the data QPs (DSCP = tc >> 2)", false},
	{"NCCL_IB_TIMEOUT", KEY_FN, 0, 0, 0, set_ib_timeout, NULL, false, "0..31", NULL,
	 "the QPs' retransmit timeout, 4.096us x 2^t (NCCL 2.21.5's default 18, net_ib.cc; "
	 "not given: rocelab-dp's 10 on the virtual clock, 14 live)", false},
	{"NCCL_IB_FIFO_TC", KEY_FN, 0, 0, 0, set_fifo_tc, NULL, false, "0..255", NULL,
	 "traffic class of the FIFO (CTS) writes; default: the data's", false},
	{"NCCL_ALGO", KEY_FN, 0, 0, 0, set_nccl_algo, NULL, false, "LIST of Tree,Ring (^: not)",
	 NULL, "Tree: algo=tree, Ring: algo=ring, both: algo=auto (NVLS, CollNet not modelled)",
	 false},
	{"NCCL_PROTO", KEY_FN, 0, 0, 0, set_nccl_proto, NULL, false,
	 "LIST of LL,LL128,Simple (^: not)", NULL,
	 "protocols the tuning may pick (model nccl: the one run; else Simple must stay on)", false},
	{"NCCL_CTRAN_IB_MAX_QPS", KEY_U32, U32(qps_per_conn), 1, NE_COLL_NCCL_MAX_QPS, NULL, NULL,
	 true, "1..128", NULL, "QPs per connection, and mode=ctran", false},
	{"NCCL_CTRAN_IB_QP_SCALING_THRESHOLD", KEY_SIZE, U32(ctran_wqe_bytes), 0, 0, NULL, NULL,
	 false, "SIZE, multiple of 128", "512K", "CTRAN's WQE size (0: split)", false},
	{"NCCL_CTRAN_IB_QP_MAX_MSGS", KEY_U32, U32(ctran_max_msgs), 1, UINT16_MAX, NULL, NULL, false,
	 "1..65535", "128", "CTRAN's outstanding WQEs per QP", false},
	{"nranks", KEY_U32, U32(nranks), 2, NE_COLL_MAX_RANKS, NULL, NULL, false, "2..1024", NULL,
	 "a spec says hosts=", true},
	{"bytes", KEY_FN, 0, 0, 0, set_bytes, NULL, false, "SIZE", NULL, "a spec says sizes=", true},
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

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
	case KEY_SPEC:
		return k->spec ? d->set_spec(k->spec, k) : bad(k, "only in a --coll spec");
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

/*
 * "KEY=VALUE: unknown key (did you mean K?); keys: op, hosts, ..., NCCL_*"
 * (NCCL's names summed up: the list must fit a message).
 */
static int bad_key(const struct key_ctx *k)
{
	const char *names[N_KEYS];
	char list[320];
	size_t n = 0, o = 0;

	list[0] = '\0';
	for (size_t i = 0; i < N_KEYS; i++) {
		if ((keys[i].kind == KEY_SPEC && !k->spec) || (keys[i].lib && k->spec))
			continue;
		names[n++] = keys[i].key;
		if (strncmp(keys[i].key, "NCCL_", 5) && o < sizeof(list))
			o += (size_t)snprintf(list + o, sizeof(list) - o, "%s, ", keys[i].key);
	}
	const char *near = rl_suggest(k->key, names, n);
	char hint[96] = "";
	if (near)
		snprintf(hint, sizeof(hint), " (did you mean %s?)", near);
	if (k->msg && k->cap)
		snprintf(k->msg, k->cap, "%s=%s: unknown key%s; keys: %sNCCL_*%s", k->key, k->val, hint,
			 list, k->spec ? " (rocelab-dp --coll help)" : "");
	return -EINVAL;
}

int ne_coll_key_set(struct ne_coll_config *cfg, struct ne_coll_spec *spec, const char *key,
		    const char *value, char *msg, size_t cap)
{
	struct key_ctx k = {key ? key : "(null)", value ? value : "(null)", msg, cap, spec};

	if (msg && cap)
		msg[0] = '\0';
	if (!cfg || !key || !value)
		return bad(&k, "missing config, key or value");
	for (size_t i = 0; i < N_KEYS; i++) {
		if (strcmp(key, keys[i].key))
			continue;
		if (keys[i].lib && spec)
			return bad(&k, "not a --coll key (%s)", keys[i].help);
		return apply(cfg, &keys[i], &k);
	}
	return bad_key(&k);
}

int ne_coll_config_set_msg(struct ne_coll_config *cfg, const char *key, const char *value,
			   char *msg, size_t cap)
{
	return ne_coll_key_set(cfg, NULL, key, value, msg, cap);
}

int ne_coll_config_set(struct ne_coll_config *cfg, const char *key, const char *value)
{
	return ne_coll_config_set_msg(cfg, key, value, NULL, 0);
}

void ne_coll_keys_help(FILE *out)
{
	fprintf(out, "--coll KEY=VALUE,... (the same keys in traffic and experiment files):\n");
	for (size_t i = 0; i < N_KEYS; i++) {
		if (keys[i].lib)
			continue;
		char dflt[48] = "";
		if (keys[i].dflt)
			snprintf(dflt, sizeof(dflt), " [%s]", keys[i].dflt);
		fprintf(out, "  %-34s %s%s\n  %-34s   %s\n", keys[i].key, keys[i].values, dflt, "",
			keys[i].help);
	}
	fprintf(out, "SIZE: bytes with K, M, G (binary, as nccl-tests: 1K = 1024) or KiB, MiB, GiB;\n"
		     "      KB, MB, GB are decimal (1KB = 1000).\n"
		     "TIME: 0, or a number with ns, us, ms or s.\n");
}
