/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_llm: the sizes, times and schedule of a Megatron-LM training
 * iteration, and its job graph. Each formula cites its source.
 *
 * Sources:
 * [M1] Shoeybi et al. 2019, "Megatron-LM: Training Multi-Billion Parameter
 *      Language Models Using Model Parallelism" (arXiv:1909.08053), Sec. 3,
 *      Fig. 3: tensor parallelism, two AllReduces in each layer's forward
 *      (g after attention, g after the MLP) and two in its backward (f).
 * [M2] Narayanan et al. 2021, "Efficient Large-Scale Language Model Training
 *      on GPU Clusters Using Megatron-LM" (SC'21, arXiv:2104.04473):
 *      Sec. 2.2.1 and Fig. 4 (1F1B), Appendix "Floating-Point Operations"
 *      (24Bsh^2 + 4Bs^2h per layer forward, 2BshV the logit layer, backward
 *      twice the forward).
 * [G]  Lepikhin et al. 2021, "GShard" (arXiv:2006.16668), Sec. 2.2: an MoE
 *      layer dispatches tokens to their experts with one AllToAll and
 *      combines the results with another; Megatron-Core's MoE alltoall token
 *      dispatcher does the same over the EP group, both again backward.
 * [MC] Megatron-Core: transformer_config.py refuses MoE with TP > 1 without
 *      sequence parallelism, so each TP rank holds s/tp of the tokens there;
 *      distrib_optimizer.py (the distributed optimizer) reduce-scatters the
 *      gradients and all-gathers the updated parameters over the DP group.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wl_llm.h"

#define BF16 2u /* bytes per element */

uint32_t wl_llm_nranks(const struct wl_llm *p)
{
	return p->tp * p->pp * p->dp;
}

uint32_t wl_llm_micro(const struct wl_llm *p)
{
	return p->gbs / (p->mb * p->dp);
}

/* Width of the K and V projections with grouped-query attention: h * kv / heads. */
static uint64_t kv_dim(const struct wl_llm *p)
{
	return (uint64_t)p->hidden * p->kv_heads / p->heads;
}

/* Weight matrices of one MLP (one expert): 3 gated (SwiGLU: gate, up, down), else 2. */
static uint64_t mlp_mats(const struct wl_llm *p)
{
	return p->gated ? 3 : 2;
}

/*
 * Parameters of one layer's attention: Q and O are h x h, K and V h x kv_dim
 * (grouped-query attention, as Llama 3 and Mixtral); no biases.
 * With kv_heads = heads this is [M2]'s 4h^2.
 */
static uint64_t attn_params(const struct wl_llm *p)
{
	uint64_t h = p->hidden;

	return 2 * h * h + 2 * h * kv_dim(p);
}

/* Parameters of one expert's MLP (or the dense MLP): mats x h x ffn. */
static uint64_t expert_params(const struct wl_llm *p)
{
	return mlp_mats(p) * p->hidden * p->ffn;
}

/*
 * Parameters of the model:
 *   layers * (attention + MLP + 2h of RMSNorm weights) + V*h embedding
 *   + V*h output layer (untied, as Llama 3 and Mixtral) + h final norm,
 * where the MLP is one expert's parameters for a dense model, and
 * experts * (one expert) + h * experts (the router) for an MoE.
 * Llama-3-8B: 32 * (41,943,040 + 176,160,768 + 8,192) + 2 * 525,336,576
 * + 4,096 = 8,030,261,248 (8.03e9, as Meta states 8B).
 */
uint64_t wl_llm_params(const struct wl_llm *p)
{
	uint64_t h = p->hidden, mlp = expert_params(p);

	if (p->experts > 0)
		mlp = p->experts * mlp + h * p->experts;
	return p->layers * (attn_params(p) + mlp + 2 * h) + 2 * (uint64_t)p->vocab * h + h;
}

/*
 * Dense parameters a rank of stage holds: its layers' attention split over
 * TP (Megatron splits Q, K, V by columns and O by rows) and the norms whole
 * on every TP rank; a dense MLP split over TP, an MoE's router whole; the
 * embedding on the first stage and the output layer and final norm on the
 * last, both split over TP (vocab-parallel).
 */
uint64_t wl_llm_params_dense(const struct wl_llm *p, uint32_t stage)
{
	uint64_t h = p->hidden, per = attn_params(p) / p->tp + 2 * h, n;

	per += p->experts > 0 ? h * p->experts : expert_params(p) / p->tp;
	n = (uint64_t)(p->layers / p->pp) * per;
	if (stage == 0)
		n += (uint64_t)p->vocab * h / p->tp;
	if (stage == p->pp - 1)
		n += (uint64_t)p->vocab * h / p->tp + h;
	return n;
}

/* Expert parameters a rank holds: experts/ep experts of each of its layers,
 * each split over TP (Megatron's expert TP defaults to TP). */
uint64_t wl_llm_params_expert(const struct wl_llm *p)
{
	if (p->experts == 0)
		return 0;
	return (uint64_t)(p->layers / p->pp) * (p->experts / p->ep) * expert_params(p) / p->tp;
}

/* [M1]: each TP AllReduce is of the layer's output activations, s x b x h elements. */
uint64_t wl_llm_tp_bytes(const struct wl_llm *p)
{
	return (uint64_t)p->seq * p->mb * p->hidden * BF16;
}

/* [M2] Sec. 2.2: a stage sends the next the activations of its last layer
 * (s x b x h), and gets back their gradients, same shape (Megatron's
 * p2p_communication tensor_shape (seq, micro_batch, hidden)). */
uint64_t wl_llm_pp_bytes(const struct wl_llm *p)
{
	return (uint64_t)p->seq * p->mb * p->hidden * BF16;
}

/*
 * [G], [MC]: a rank dispatches each of its s*b/tp tokens to topk experts, h
 * elements each: (s*b/tp) * topk * h * 2 bytes in all, 1/ep of it to each
 * member of the EP group when the routing is balanced. The combine sends
 * as much back. This is the AllToAll's size as nccl-tests gives it (a
 * rank's whole send buffer).
 */
uint64_t wl_llm_ep_bytes(const struct wl_llm *p)
{
	if (p->experts == 0)
		return 0;
	return (uint64_t)p->seq * p->mb / p->tp * p->topk * p->hidden * BF16;
}

/*
 * [M2] Appendix: a layer's attention forward is 6Bsh^2 (Q, K, V) + 2Bsh^2
 * (output projection) + 4Bs^2h (scores and their product with V): 2 FLOPs
 * per multiply-add of each matrix product. With grouped-query attention
 * K and V are h x kv_dim: 2Bs(2h^2 + 2h*kv_dim) + 4Bs^2h.
 */
double wl_llm_attn_flops(const struct wl_llm *p)
{
	double b = p->mb, s = p->seq, h = p->hidden, kv = (double)kv_dim(p);

	return 2 * b * s * (2 * h * h + 2 * h * kv) + 4 * b * s * s * h;
}

/*
 * [M2] Appendix: the MLP forward is 16Bsh^2 for two h x 4h matrices, that is
 * 2 * mats * B*s*h*ffn. An MoE token goes through topk experts, plus the
 * router's h x experts product. With ffn = 4h, plain MLP and kv_heads =
 * heads, attention + MLP is [M2]'s 24Bsh^2 (1 + s/(6h)).
 */
double wl_llm_mlp_flops(const struct wl_llm *p)
{
	double b = p->mb, s = p->seq, h = p->hidden, f = p->ffn;
	double dense = 2.0 * (double)mlp_mats(p) * b * s * h * f;

	if (p->experts == 0)
		return dense;
	return p->topk * dense + 2 * b * s * h * p->experts;
}

/* [M2] Appendix: the logit layer, 2BshV forward. */
double wl_llm_logit_flops(const struct wl_llm *p)
{
	return 2.0 * p->mb * p->seq * p->hidden * (double)p->vocab;
}

/* A TP rank does 1/tp of each product ([M1]); time = FLOPs / (peak * MFU). */
uint64_t wl_llm_ns(const struct wl_llm *p, double flops)
{
	return (uint64_t)llround(flops / p->tp / ((double)p->peak_flops * p->mfu) * 1e9);
}

/*
 * [M2] Sec. 2.2.1, Fig. 4 (top), as Megatron's
 * forward_backward_pipelining_without_interleaving runs it: stage r first
 * runs min(pp - r - 1, m) forwards (warm-up), then alternates one forward
 * and one backward until every forward is done (steady 1F1B), then runs the
 * backwards left (cool-down).
 */
int wl_llm_schedule(uint32_t pp, uint32_t m, uint32_t stage, struct wl_llm_step *steps)
{
	uint32_t warm, n = 0, f = 0, b = 0;

	if (stage >= pp || m == 0)
		return -1;
	warm = pp - stage - 1 < m ? pp - stage - 1 : m;
	while (f < warm)
		steps[n++] = (struct wl_llm_step){false, f++};
	while (f < m) {
		steps[n++] = (struct wl_llm_step){false, f++};
		steps[n++] = (struct wl_llm_step){true, b++};
	}
	while (b < m)
		steps[n++] = (struct wl_llm_step){true, b++};
	return 0;
}
