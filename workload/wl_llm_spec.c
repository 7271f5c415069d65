/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_llm_spec: the presets and the key=value spec of the LLM generator.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_suggest.h"
#include "rl_units.h"
#include "wl_llm.h"

#define WL_LLM_MAX_RANKS (1u << 20)
#define WL_LLM_MAX_PASSES (1u << 22) /* micro-batches x layers of a stage */

/*
 * Public shapes.
 * Llama 3: "The Llama 3 Herd of Models", Dubey et al. 2024 (arXiv:2407.21783),
 * Table 3: layers, model dimension, FFN dimension, attention heads, 8
 * key/value heads, SwiGLU; vocabulary 128,256 as in the models' config.json
 * (vocab_size) on Hugging Face (meta-llama/Llama-3.1-8B, -70B, -405B).
 * Mixtral: "Mixtral of Experts", Jiang et al. 2024 (arXiv:2401.04088),
 * Table 1: dim 4096, 32 layers, hidden_dim 14336, 32 heads, 8 kv heads,
 * vocab 32000, 8 experts, top-2; SwiGLU experts.
 * The rest are this generator's defaults, not the models':
 * - seq 8192 (Llama 3's pre-training length), 4096 for Mixtral;
 * - mb 1, gbs 8, no parallelism;
 * - peak 989T: an H100 SXM's dense bf16 rate (NVIDIA's H100 datasheet);
 * - mfu 0.4: Llama 3 reports 38-43% bf16 MFU on H100s (Table 4).
 */
struct preset {
	const char *name;
	uint32_t layers, hidden, ffn, heads, kv_heads, seq, vocab, experts, topk;
};

static const struct preset presets[] = {
	{"llama3-8b", 32, 4096, 14336, 32, 8, 8192, 128256, 0, 0},
	{"llama3-70b", 80, 8192, 28672, 64, 8, 8192, 128256, 0, 0},
	{"llama3-405b", 126, 16384, 53248, 128, 8, 8192, 128256, 0, 0},
	{"mixtral-8x7b", 32, 4096, 14336, 32, 8, 4096, 32000, 8, 2},
};
#define NPRESETS (sizeof(presets) / sizeof(presets[0]))

const char *const *wl_llm_presets(void)
{
	static const char *names[NPRESETS + 1];

	for (size_t i = 0; i < NPRESETS; i++)
		names[i] = presets[i].name;
	return names;
}

int wl_llm_preset(struct wl_llm *p, const char *name, struct wl_err *err)
{
	for (size_t i = 0; i < NPRESETS; i++) {
		const struct preset *q = &presets[i];

		if (strcmp(q->name, name) != 0)
			continue;
		*p = (struct wl_llm){
			.layers = q->layers, .hidden = q->hidden, .ffn = q->ffn,
			.heads = q->heads, .kv_heads = q->kv_heads, .seq = q->seq,
			.vocab = q->vocab, .experts = q->experts, .topk = q->topk,
			.mb = 1, .gbs = 8, .tp = 1, .pp = 1, .dp = 1, .ep = 1,
			.gated = true, .dpcoll = WL_LLM_DP_RSAG,
			.peak_flops = 989000000000000ull, .mfu = 0.4,
		};
		snprintf(p->preset, sizeof(p->preset), "%s", q->name);
		return 0;
	}
	const char *near = rl_suggest(name, wl_llm_presets(), NPRESETS);
	return wl_err_set(err, "llm spec: bad preset=%s: unknown%s%s%s; presets: llama3-8b, "
			  "llama3-70b, llama3-405b, mixtral-8x7b", name,
			  near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
}

enum key_kind { K_PRESET, K_U32, K_PEAK, K_MFU, K_BOOL, K_DPCOLL };

struct key {
	const char *name;
	enum key_kind kind;
	size_t off;           /* K_U32: the field */
	uint32_t min, max;    /* K_U32 */
};

#define U32(n, f, lo, hi) {n, K_U32, offsetof(struct wl_llm, f), lo, hi}
static const struct key keys[] = {
	{"preset", K_PRESET, 0, 0, 0},
	U32("layers", layers, 1, 4096),
	U32("hidden", hidden, 1, 1u << 20),
	U32("ffn", ffn, 1, 1u << 22),
	U32("heads", heads, 1, 4096),
	U32("kv_heads", kv_heads, 1, 4096),
	U32("seq", seq, 1, 1u << 24),
	U32("vocab", vocab, 1, 1u << 24),
	U32("mb", mb, 1, 1u << 16),
	U32("gbs", gbs, 1, 1u << 24),
	U32("tp", tp, 1, 1024),
	U32("pp", pp, 1, 1024),
	U32("dp", dp, 1, 1u << 20),
	U32("ep", ep, 1, 1024),
	U32("experts", experts, 0, 1024),
	U32("topk", topk, 0, 1024),
	{"gated", K_BOOL, 0, 0, 0},
	{"dpcoll", K_DPCOLL, 0, 0, 0},
	{"peak", K_PEAK, 0, 0, 0},
	{"mfu", K_MFU, 0, 0, 0},
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

const char *const *wl_llm_keys(void)
{
	static const char *names[NKEYS + 1];

	for (size_t i = 0; i < NKEYS; i++)
		names[i] = keys[i].name;
	return names;
}

/* Decimal FLOP/s multipliers: 989T, 1.979P, 312e12 is not taken. */
static const struct rl_unit flops_units[] = {
	{"", 1}, {"K", 1000ull}, {"M", 1000000ull}, {"G", 1000000000ull},
	{"T", 1000000000000ull}, {"P", 1000000000000000ull}, {NULL, 0},
};

/* One key=value into p. Returns 0 or -1 with err naming both. */
static int set_key(struct wl_llm *p, const struct key *k, const char *v, struct wl_err *err)
{
	char *end;

	switch (k->kind) {
	case K_PRESET:
		return 0; /* applied before every other key */
	case K_U32: {
		unsigned long long x;

		errno = 0;
		x = strtoull(v, &end, 10);
		if (*v < '0' || *v > '9' || *end != '\0' || errno != 0 || x < k->min || x > k->max)
			return wl_err_set(err, "llm spec: bad %s=%s: takes %u..%u", k->name, v,
					  k->min, k->max);
		*(uint32_t *)((char *)p + k->off) = (uint32_t)x;
		return 0;
	}
	case K_PEAK:
		if (rl_units_parse(v, flops_units, false, &p->peak_flops) != RL_UNITS_OK ||
		    p->peak_flops == 0)
			return wl_err_set(err, "llm spec: bad peak=%s: takes FLOP/s above 0 with "
					  "K, M, G, T or P (989T, 1.979P)", v);
		return 0;
	case K_MFU:
		errno = 0;
		p->mfu = strtod(v, &end);
		if (end == v || *end != '\0' || errno != 0 || !(p->mfu > 0.0 && p->mfu <= 1.0))
			return wl_err_set(err, "llm spec: bad mfu=%s: takes a share of peak in "
					  "(0, 1], e.g. 0.4", v);
		return 0;
	case K_BOOL:
		if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
			return wl_err_set(err, "llm spec: bad %s=%s: takes 0 or 1", k->name, v);
		p->gated = v[0] == '1';
		return 0;
	case K_DPCOLL:
		if (strcmp(v, "rs-ag") == 0)
			p->dpcoll = WL_LLM_DP_RSAG;
		else if (strcmp(v, "allreduce") == 0)
			p->dpcoll = WL_LLM_DP_ALLREDUCE;
		else
			return wl_err_set(err, "llm spec: bad dpcoll=%s: takes rs-ag or allreduce", v);
		return 0;
	}
	return wl_err_set(err, "llm spec: %s: internal error", k->name);
}

static const struct key *find_key(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

/* The key=value items of spec into p: the preset alone, or every other key.
 * The first error stops. */
static int each_item(struct wl_llm *p, const char *spec, bool preset_only, struct wl_err *err)
{
	char buf[1024], *save = NULL;

	if (strlen(spec) >= sizeof(buf))
		return wl_err_set(err, "llm spec: longer than %zu characters", sizeof(buf) - 1);
	strcpy(buf, spec);
	for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(it, '=');

		if (eq == NULL || eq == it || eq[1] == '\0')
			return wl_err_set(err, "llm spec: '%s': not key=value", it);
		*eq = '\0';
		const struct key *k = find_key(it);
		if (k == NULL) {
			const char *near = rl_suggest(it, wl_llm_keys(), NKEYS);

			return wl_err_set(err, "llm spec: unknown key '%s'%s%s%s; keys: preset, layers, "
					  "hidden, ffn, heads, kv_heads, seq, vocab, mb, gbs, tp, pp, "
					  "dp, ep, experts, topk, gated, dpcoll, peak, mfu", it,
					  near ? " (did you mean " : "", near ? near : "",
					  near ? "?)" : "");
		}
		if (preset_only != (k->kind == K_PRESET))
			continue;
		if (preset_only ? wl_llm_preset(p, eq + 1, err) : set_key(p, k, eq + 1, err))
			return -1;
	}
	return 0;
}

int wl_llm_parse(struct wl_llm *p, const char *spec, struct wl_err *err)
{
	if (wl_llm_preset(p, "llama3-8b", err) != 0)
		return -1;
	/* the preset first wherever it stands, so that tp=8,preset=... keeps tp=8 */
	if (each_item(p, spec, true, err) != 0 || each_item(p, spec, false, err) != 0)
		return -1;
	return wl_llm_validate(p, err);
}

/* err "llm spec: KA=A is not a multiple of KB=B" unless it is. */
static int need_multiple(uint32_t a, uint32_t b, const char *ka, const char *kb,
			 struct wl_err *err)
{
	if (b != 0 && a % b == 0)
		return 0;
	return wl_err_set(err, "llm spec: %s=%u is not a multiple of %s=%u", ka, a, kb, b);
}

int wl_llm_validate(const struct wl_llm *p, struct wl_err *err)
{
	uint64_t n = (uint64_t)p->tp * p->pp * p->dp;

	if (n > WL_LLM_MAX_RANKS)
		return wl_err_set(err, "llm spec: bad tp*pp*dp=%llu: a job has at most %u ranks",
				  (unsigned long long)n, WL_LLM_MAX_RANKS);
	if (need_multiple(p->layers, p->pp, "layers", "pp", err) ||
	    need_multiple(p->heads, p->tp, "heads", "tp", err) ||
	    need_multiple(p->heads, p->kv_heads, "heads", "kv_heads", err) ||
	    need_multiple(p->kv_heads, p->tp, "kv_heads", "tp", err) ||
	    need_multiple(p->ffn, p->tp, "ffn", "tp", err) ||
	    need_multiple(p->hidden, p->heads, "hidden", "heads", err) ||
	    need_multiple(p->dp, p->ep, "dp", "ep", err))
		return -1;
	if (p->gbs % ((uint64_t)p->mb * p->dp) != 0)
		return wl_err_set(err, "llm spec: gbs=%u is not a multiple of mb*dp=%llu", p->gbs,
				  (unsigned long long)p->mb * p->dp);
	/* a bound on one rank's nodes (about 6 a layer pass), so that a typo in
	 * gbs is refused rather than eating the memory of the machine */
	uint64_t passes = (uint64_t)(p->gbs / (p->mb * p->dp)) * (p->layers / p->pp);
	if (passes > WL_LLM_MAX_PASSES)
		return wl_err_set(err, "llm spec: gbs=%u gives %u micro-batches of %u layers a "
				  "rank, %llu layer passes; at most %u", p->gbs,
				  p->gbs / (p->mb * p->dp), p->layers / p->pp,
				  (unsigned long long)passes, WL_LLM_MAX_PASSES);
	if (p->experts == 0 && p->ep > 1)
		return wl_err_set(err, "llm spec: bad ep=%u: a dense model (experts=0) has no "
				  "experts to spread", p->ep);
	/* MoE with TP runs sequence-parallel: each TP rank dispatches seq/tp tokens */
	if (p->experts > 0 && (need_multiple(p->experts, p->ep, "experts", "ep", err) != 0 ||
			       need_multiple(p->seq, p->tp, "seq", "tp", err) != 0))
		return -1;
	if (p->experts > 0 && (p->topk == 0 || p->topk > p->experts))
		return wl_err_set(err, "llm spec: bad topk=%u: takes 1..experts=%u", p->topk,
				  p->experts);
	return 0;
}
