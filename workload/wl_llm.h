/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_llm: one training iteration of a transformer language model, as
 * Megatron-LM runs it, as a job graph (wl_graph.h).
 *
 * A job of tp * pp * dp ranks.
 * Rank numbers follow Megatron's default order "tp-cp-ep-dp-pp" (no context
 * parallelism here), TP innermost:
 *   rank = tp_rank + tp * dp_rank + tp * dp * pp_rank,
 *   dp_rank = ep_rank + ep * edp_rank (EP groups are blocks of the DP group).
 * Source: megatron/core/parallel_state.py, initialize_model_parallel(order=
 * "tp-cp-ep-dp-pp") and generate_masked_orthogonal_rank_groups(), NVIDIA/
 * Megatron-LM commit 00caa53af309.
 * So a TP group of 8 is one server of 8 GPUs when ranks fill servers in order.
 *
 * Each rank runs the 1F1B pipeline schedule of its stage over
 * m = gbs / (mb * dp) micro-batches, with inside each forward and backward
 * the TP AllReduces and the EP AllToAlls of its layers, Send/Recv of the
 * activations between stages, and the data-parallel gradient collectives
 * after the last backward. The formulas, each with its source, are in
 * wl_llm.c beside the functions below. bf16: 2 bytes per element.
 * libc only.
 */
#ifndef WL_LLM_H
#define WL_LLM_H

#include <stdbool.h>
#include <stdint.h>

#include "wl_err.h"
#include "wl_graph.h"

/* How the data-parallel gradients are reduced. */
enum wl_llm_dpcoll {
	WL_LLM_DP_RSAG,      /* distributed optimizer: ReduceScatter, then AllGather */
	WL_LLM_DP_ALLREDUCE, /* one AllReduce */
};

struct wl_llm {
	char preset[32];      /* the preset it started from ("" for none) */
	uint32_t layers;      /* transformer layers */
	uint32_t hidden;      /* h */
	uint32_t ffn;         /* FFN hidden size */
	uint32_t heads;       /* attention heads */
	uint32_t kv_heads;    /* key/value heads (grouped-query attention); = heads for MHA */
	uint32_t seq;         /* s, tokens per sample */
	uint32_t vocab;       /* V */
	uint32_t mb;          /* b, micro-batch (samples) */
	uint32_t gbs;         /* global batch (samples per iteration) */
	uint32_t tp, pp, dp, ep;
	uint32_t experts;     /* 0: dense MLP; else MoE experts per layer */
	uint32_t topk;        /* MoE: experts per token */
	bool gated;           /* gated MLP (SwiGLU, 3 matrices) or plain (2 matrices) */
	enum wl_llm_dpcoll dpcoll;
	uint64_t peak_flops;  /* a GPU's peak bf16 FLOP/s */
	double mfu;           /* the share of peak its compute reaches, (0, 1] */
};

/* One step of a stage's pipeline schedule. */
struct wl_llm_step {
	bool backward;        /* false: forward */
	uint32_t micro;       /* micro-batch, 0 .. m-1 */
};

/* The names of the presets, NULL-terminated. */
const char *const *wl_llm_presets(void);

/* The keys a spec takes, NULL-terminated (for help and suggestions). */
const char *const *wl_llm_keys(void);

/* Fills p with the preset name (see wl_llm_presets()), parallelism 1.
 * Returns 0, or -1 with err naming the preset and the nearest one. */
int wl_llm_preset(struct wl_llm *p, const char *name, struct wl_err *err);

/*
 * Parses "preset=llama3-8b,tp=8,pp=4,dp=4,mb=1,gbs=512,seq=8192,mfu=0.4,
 * peak=989T" into p: the preset first wherever it stands (llama3-8b when
 * none is named), then each key in order, then wl_llm_validate().
 * Returns 0, or -1 with err naming the bad key (with the nearest key) or the
 * bad key=value and what it takes.
 */
int wl_llm_parse(struct wl_llm *p, const char *spec, struct wl_err *err);

/* Checks what a graph needs: layers a multiple of pp; heads, kv_heads and
 * ffn multiples of tp; heads of kv_heads; hidden of heads; gbs of mb * dp;
 * dp of ep; ep 1 for a dense model; for an MoE, experts a multiple of ep,
 * seq of tp, topk in 1..experts; at most 1<<20 ranks; micro-batches times
 * layers / pp at most 1<<22 (one rank's nodes). Returns 0, or -1 with
 * err naming the keys and their values. */
int wl_llm_validate(const struct wl_llm *p, struct wl_err *err);

/* tp * pp * dp. */
uint32_t wl_llm_nranks(const struct wl_llm *p);

/* m = gbs / (mb * dp), micro-batches per iteration of each pipeline. */
uint32_t wl_llm_micro(const struct wl_llm *p);

/* Parameters of the whole model. */
uint64_t wl_llm_params(const struct wl_llm *p);

/* Parameters a rank of pipeline stage holds whose gradients are reduced
 * over the DP group (dense) or the expert-DP group (experts). */
uint64_t wl_llm_params_dense(const struct wl_llm *p, uint32_t stage);
uint64_t wl_llm_params_expert(const struct wl_llm *p);

/* Bytes of one TP AllReduce of activations (s * b * h * 2). */
uint64_t wl_llm_tp_bytes(const struct wl_llm *p);

/* Bytes of one PP Send/Recv of activations or their gradients (s * b * h * 2). */
uint64_t wl_llm_pp_bytes(const struct wl_llm *p);

/* Bytes of one EP AllToAll, a rank's whole buffer as nccl-tests sizes it
 * ((s * b / tp) * topk * h * 2); 0 for a dense model. */
uint64_t wl_llm_ep_bytes(const struct wl_llm *p);

/* FLOPs of one layer's forward for one micro-batch, the whole layer (not
 * divided by TP): attention part and MLP part. */
double wl_llm_attn_flops(const struct wl_llm *p);
double wl_llm_mlp_flops(const struct wl_llm *p);

/* FLOPs of the logit layer's forward for one micro-batch (2 * b * s * h * V). */
double wl_llm_logit_flops(const struct wl_llm *p);

/* ns a GPU takes for flops / tp at peak_flops * mfu (rounded to nearest). */
uint64_t wl_llm_ns(const struct wl_llm *p, double flops);

/*
 * The 1F1B schedule of stage (0 .. pp-1) for m micro-batches: warm-up
 * forwards, steady one-forward-one-backward, cool-down backwards
 * (Narayanan et al. 2021, Fig. 4 top). Writes 2 * m steps. Returns 0, or -1
 * when stage >= pp or m == 0.
 */
int wl_llm_schedule(uint32_t pp, uint32_t m, uint32_t stage, struct wl_llm_step *steps);

/* Appends the nodes of one rank to g (a graph of wl_llm_nranks(p) ranks).
 * Returns 0, or -1 with err set (out of memory, rank out of range). */
int wl_llm_rank_graph(const struct wl_llm *p, uint32_t rank, struct wl_graph *g,
		      struct wl_err *err);

/* Initialises g and builds every rank. Returns 0, or -1 with err set (g freed). */
int wl_llm_graph(const struct wl_llm *p, struct wl_graph *g, struct wl_err *err);

#endif
