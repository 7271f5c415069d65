/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_llm: every formula against a case worked out by hand (in the comment
 * beside it), the 1F1B order of each stage of pp=4 with 8 micro-batches
 * written out from Narayanan et al. 2021 Fig. 4, the communicators of
 * Megatron's rank order, the generated graphs through wl_graph_check, and
 * bad specs refused with the key named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "wl_llm.h"

static struct wl_llm parse_ok(const char *spec)
{
	struct wl_llm p;
	struct wl_err err = {""};

	if (wl_llm_parse(&p, spec, &err) != 0)
		fail_msg("%s: %s", spec, err.msg);
	return p;
}

static void expect_refused(const char *spec, const char *msg)
{
	struct wl_llm p;
	struct wl_err err = {""};

	assert_int_equal(wl_llm_parse(&p, spec, &err), -1);
	assert_string_equal(err.msg, msg);
}

/* TP AllReduce: s*b*h*2 = 4096 * 2 * 4096 * 2 = 67,108,864 bytes. */
static void test_tp_bytes(void **state)
{
	struct wl_llm p = parse_ok("preset=llama3-8b,seq=4096,mb=2,tp=8");

	(void)state;
	assert_int_equal(wl_llm_tp_bytes(&p), 67108864);
}

/* PP Send/Recv: s*b*h*2 = 2048 * 4 * 8192 * 2 = 134,217,728 bytes. */
static void test_pp_bytes(void **state)
{
	struct wl_llm p = parse_ok("preset=llama3-70b,seq=2048,mb=4,pp=4,gbs=16");

	(void)state;
	assert_int_equal(wl_llm_pp_bytes(&p), 134217728);
}

/* EP AllToAll: (s*b/tp)*topk*h*2 = (4096 * 1 / 2) * 2 * 4096 * 2 = 33,554,432. */
static void test_ep_bytes(void **state)
{
	struct wl_llm p = parse_ok("preset=mixtral-8x7b,seq=4096,tp=2,dp=8,ep=4");

	(void)state;
	assert_int_equal(wl_llm_ep_bytes(&p), 33554432);
	p = parse_ok("preset=llama3-8b");
	assert_int_equal(wl_llm_ep_bytes(&p), 0);
}

/*
 * A toy model, by hand: layers 2, h 8, ffn 32, 2 heads, 2 kv heads, V 100,
 * plain MLP, tp 2, pp 2. A layer: attention 2*64 + 2*8*8 = 256, MLP
 * 2*8*32 = 512, norms 16. Total 2 * 784 + 2 * 800 + 8 = 3,176.
 * A rank of stage 0: 256/2 + 512/2 + 16 = 400 for its one layer, + 800/2
 * embedding = 800 parameters, 1,600 bytes of gradients; stage 1: 400 + 400
 * output layer + 8 final norm = 808, 1,616 bytes.
 */
static const char toy[] = "layers=2,hidden=8,ffn=32,heads=2,kv_heads=2,vocab=100,gated=0,"
			  "seq=4,tp=2,pp=2,dp=2,gbs=4";

static void test_dp_bytes(void **state)
{
	struct wl_llm p = parse_ok(toy);
	struct wl_graph g;
	struct wl_err err = {""};
	const struct wl_rank *rk;
	const struct wl_node *rs;

	(void)state;
	assert_int_equal(wl_llm_params(&p), 3176);
	assert_int_equal(wl_llm_params_dense(&p, 0), 800);
	assert_int_equal(wl_llm_params_dense(&p, 1), 808);
	assert_int_equal(wl_llm_graph(&p, &g, &err), 0);
	/* the last two nodes of rank 0: ReduceScatter then AllGather of 1,600 bytes
	 * over its DP group {0, 2} (tp innermost: rank = tp_r + 2 dp_r + 4 stage) */
	rk = &g.ranks[0];
	rs = &rk->nodes[rk->nnodes - 2];
	assert_int_equal(rs->kind, WL_COLL);
	assert_int_equal(rs->op, WL_REDUCESCATTER);
	assert_int_equal(rs->bytes, 1600);
	assert_int_equal(rs->nranks, 2);
	assert_int_equal(rs->ranks[0], 0);
	assert_int_equal(rs->ranks[1], 2);
	assert_int_equal(rk->nodes[rk->nnodes - 1].op, WL_ALLGATHER);
	assert_int_equal(rk->nodes[rk->nnodes - 1].deps[0].id, rs->id);
	/* rank 5 is stage 1, tp rank 1: 1,616 bytes over {5, 7} */
	rk = &g.ranks[5];
	rs = &rk->nodes[rk->nnodes - 2];
	assert_int_equal(rs->op, WL_REDUCESCATTER);
	assert_int_equal(rs->bytes, 1616);
	assert_int_equal(rs->ranks[0], 5);
	assert_int_equal(rs->ranks[1], 7);
	assert_int_equal(wl_graph_check(&g, &err), 0);
	wl_graph_free(&g);
	/* dpcoll=allreduce: one AllReduce of the same bytes instead */
	p.dpcoll = WL_LLM_DP_ALLREDUCE;
	assert_int_equal(wl_llm_graph(&p, &g, &err), 0);
	rk = &g.ranks[0];
	assert_int_equal(rk->nodes[rk->nnodes - 1].op, WL_ALLREDUCE);
	assert_int_equal(rk->nodes[rk->nnodes - 1].bytes, 1600);
	assert_int_equal(rk->nodes[rk->nnodes - 1].ranks[1], 2);
	/* before it, the last backward's TP AllReduce over {0, 1}: no ReduceScatter */
	assert_int_equal(rk->nodes[rk->nnodes - 2].op, WL_ALLREDUCE);
	assert_int_equal(rk->nodes[rk->nnodes - 2].ranks[1], 1);
	wl_graph_free(&g);
}

/* The parameters of the presets against what their makers state: Llama 3 8B,
 * 70B and 405B by their names, Mixtral 8x7B 46.7e9 (Mistral AI's
 * announcement, "46.7B total parameters"). */
static void test_params(void **state)
{
	static const struct { const char *spec; double stated; } c[] = {
		{"preset=llama3-8b", 8.0e9}, {"preset=llama3-70b", 70e9},
		{"preset=llama3-405b", 405e9}, {"preset=mixtral-8x7b", 46.7e9},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct wl_llm p = parse_ok(c[i].spec);
		double n = (double)wl_llm_params(&p);

		if (n < 0.99 * c[i].stated || n > 1.01 * c[i].stated)
			fail_msg("%s: %.4e parameters, not within 1%% of %.4e", c[i].spec, n,
				 c[i].stated);
	}
	struct wl_llm p = parse_ok("preset=llama3-8b");
	assert_int_equal(wl_llm_params(&p), 8030261248ull); /* the sum in wl_llm.c */
}

/*
 * Narayanan et al.'s case: ffn 4h, plain MLP, kv_heads = heads, h 1024,
 * s 1024, b 1: 24*b*s*h^2*(1 + s/(6h)) = 24 * 2^30 * 7/6 = 28 * 2^30 =
 * 30,064,771,072 FLOPs a layer forward. At peak 100T x mfu 0.5 = 5e13 FLOP/s:
 * 601,295.42 ns, 601,295; over tp 2, 300,648.
 * Its parts: attention 8bsh^2 + 4bs^2h = 12 * 2^30 -> 257,698 ns; MLP
 * 16bsh^2 = 16 * 2^30 -> 343,597 ns; logit (V 1000) 2bshV = 2,097,152,000
 * -> 41,943 ns. A one-layer, one-stage forward is 643,238 ns, its backward
 * twice that, 1,286,476 ns.
 */
static void test_compute(void **state)
{
	struct wl_llm p = parse_ok("layers=1,hidden=1024,ffn=4096,heads=16,kv_heads=16,seq=1024,"
				   "vocab=1000,gated=0,gbs=1,peak=100T,mfu=0.5");
	struct wl_graph g;
	struct wl_err err = {""};

	(void)state;
	assert_int_equal(wl_llm_ns(&p, wl_llm_attn_flops(&p) + wl_llm_mlp_flops(&p)), 601295);
	assert_int_equal(wl_llm_ns(&p, wl_llm_attn_flops(&p)), 257698);
	assert_int_equal(wl_llm_ns(&p, wl_llm_mlp_flops(&p)), 343597);
	assert_int_equal(wl_llm_ns(&p, wl_llm_logit_flops(&p)), 41943);
	assert_int_equal(wl_llm_graph(&p, &g, &err), 0);
	assert_int_equal(g.ranks[0].nnodes, 2);
	assert_int_equal(g.ranks[0].nodes[0].duration_ns, 643238);
	assert_int_equal(g.ranks[0].nodes[1].duration_ns, 1286476);
	wl_graph_free(&g);
	p.tp = 2;
	assert_int_equal(wl_llm_ns(&p, wl_llm_attn_flops(&p) + wl_llm_mlp_flops(&p)), 300648);
}

/* Narayanan et al. 2021 Fig. 4 (top), pp 4, m 8: warm-up pp-1-stage forwards,
 * then one forward one backward, then the backwards left. */
static void test_schedule(void **state)
{
	static const char *const want[4] = {
		"F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7",
		"F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7",
		"F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7",
		"F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7",
	};
	struct wl_llm_step st[16];

	(void)state;
	for (uint32_t s = 0; s < 4; s++) {
		char got[128] = "";

		assert_int_equal(wl_llm_schedule(4, 8, s, st), 0);
		for (int i = 0; i < 16; i++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%c%u",
				 i ? " " : "", st[i].backward ? 'B' : 'F', st[i].micro);
		assert_string_equal(got, want[s]);
	}
	assert_int_equal(wl_llm_schedule(4, 8, 4, st), -1);
}

/* A rank's nodes as "F", "B" (a compute of the first compute's length, or
 * twice it), "sf3@2" (send forward of micro-batch 3 to rank 2), "rb0@1"... */
static void render(const struct wl_rank *rk, char *out, size_t len)
{
	uint64_t f = 0;

	out[0] = '\0';
	for (uint32_t i = 0; i < rk->nnodes; i++) {
		const struct wl_node *n = &rk->nodes[i];
		char tok[32];

		if (n->kind == WL_COMPUTE) {
			f = f ? f : n->duration_ns;
			snprintf(tok, sizeof(tok), "%s", n->duration_ns == f ? "F" :
				 n->duration_ns == 2 * f ? "B" : "C?");
		} else if (n->kind == WL_COLL) {
			snprintf(tok, sizeof(tok), "%s", wl_coll_name(n->op));
		} else {
			snprintf(tok, sizeof(tok), "%c%c%llu@%u", n->kind == WL_SEND ? 's' : 'r',
				 n->tag % 2 ? 'b' : 'f', (unsigned long long)n->tag / 2, n->peer);
		}
		snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? " " : "", tok);
	}
}

/* The graph of pp 4, m 8 (one layer a stage, tp 1, dp 1): each stage's
 * computes and Send/Recv in 1F1B order, written out by hand. */
static void test_1f1b_graph(void **state)
{
	static const char *const want[4] = {
		"F sf0@1 F sf1@1 F sf2@1 F sf3@1 rb0@1 B F sf4@1 rb1@1 B F sf5@1 rb2@1 B "
		"F sf6@1 rb3@1 B F sf7@1 rb4@1 B rb5@1 B rb6@1 B rb7@1 B",
		"rf0@0 F sf0@2 rf1@0 F sf1@2 rf2@0 F sf2@2 rb0@2 B sb0@0 rf3@0 F sf3@2 rb1@2 B "
		"sb1@0 rf4@0 F sf4@2 rb2@2 B sb2@0 rf5@0 F sf5@2 rb3@2 B sb3@0 rf6@0 F sf6@2 "
		"rb4@2 B sb4@0 rf7@0 F sf7@2 rb5@2 B sb5@0 rb6@2 B sb6@0 rb7@2 B sb7@0",
		"rf0@1 F sf0@3 rf1@1 F sf1@3 rb0@3 B sb0@1 rf2@1 F sf2@3 rb1@3 B sb1@1 rf3@1 F "
		"sf3@3 rb2@3 B sb2@1 rf4@1 F sf4@3 rb3@3 B sb3@1 rf5@1 F sf5@3 rb4@3 B sb4@1 "
		"rf6@1 F sf6@3 rb5@3 B sb5@1 rf7@1 F sf7@3 rb6@3 B sb6@1 rb7@3 B sb7@1",
		"rf0@2 F B sb0@2 rf1@2 F B sb1@2 rf2@2 F B sb2@2 rf3@2 F B sb3@2 rf4@2 F B "
		"sb4@2 rf5@2 F B sb5@2 rf6@2 F B sb6@2 rf7@2 F B sb7@2",
	};
	struct wl_llm p = parse_ok("preset=llama3-8b,layers=4,seq=512,pp=4,gbs=8");
	struct wl_graph g;
	struct wl_err err = {""};
	char got[1024];

	(void)state;
	assert_int_equal(wl_llm_micro(&p), 8);
	assert_int_equal(wl_llm_graph(&p, &g, &err), 0);
	for (uint32_t s = 0; s < 4; s++) {
		render(&g.ranks[s], got, sizeof(got));
		assert_string_equal(got, want[s]);
	}
	/* nothing waits for a send: on stage 1 the receive after sf0 (node 4)
	 * follows the compute before it (node 2) */
	assert_int_equal(g.ranks[1].nodes[3].kind, WL_RECV);
	assert_int_equal(g.ranks[1].nodes[3].deps[0].id, g.ranks[1].nodes[1].id);
	assert_int_equal(g.ranks[1].nodes[2].bytes, 512 * 4096 * 2);
	assert_int_equal(wl_graph_check(&g, &err), 0);
	wl_graph_free(&g);
}

/* TP 2, one stage, 2 layers, m 3: per micro-batch and layer attention,
 * AllReduce, MLP, AllReduce forward and MLP, AllReduce, attention, AllReduce
 * backward: 4 * 2 * 3 = 24 AllReduces of s*b*h*2 over {0, 1}. The first
 * micro-batch: 2 layers forward (compute and AllReduce by turns), the logit
 * layer, then its backward merged with the last layer's MLP backward. */
static void test_tp_graph(void **state)
{
	struct wl_llm p = parse_ok("preset=llama3-8b,layers=2,seq=256,tp=2,gbs=3");
	struct wl_graph g;
	struct wl_err err = {""};
	const struct wl_node *n;
	uint64_t attn = wl_llm_ns(&p, wl_llm_attn_flops(&p)), mlp = wl_llm_ns(&p, wl_llm_mlp_flops(&p));
	uint64_t logit = wl_llm_ns(&p, wl_llm_logit_flops(&p));
	uint32_t ars = 0;

	(void)state;
	assert_int_equal(wl_llm_graph(&p, &g, &err), 0);
	for (uint32_t i = 0; i < g.ranks[1].nnodes; i++) {
		n = &g.ranks[1].nodes[i];
		if (n->kind != WL_COLL)
			continue;
		ars++;
		assert_int_equal(n->op, WL_ALLREDUCE);
		assert_int_equal(n->bytes, 256 * 4096 * 2);
		assert_int_equal(n->nranks, 2);
		assert_int_equal(n->ranks[0], 0);
		assert_int_equal(n->ranks[1], 1);
	}
	assert_int_equal(ars, 24);
	n = g.ranks[0].nodes;
	for (int i = 0; i < 8; i++)
		assert_int_equal(n[i].kind, i % 2 ? WL_COLL : WL_COMPUTE);
	assert_int_equal(n[0].duration_ns, attn);
	assert_int_equal(n[2].duration_ns, mlp);
	assert_int_equal(n[8].duration_ns, logit);
	assert_int_equal(n[9].duration_ns, 2 * logit + 2 * mlp);
	assert_int_equal(n[10].kind, WL_COLL);
	assert_int_equal(n[11].duration_ns, 2 * attn);
	assert_int_equal(wl_graph_check(&g, &err), 0);
	wl_graph_free(&g);
}

/*
 * MoE, tp 2, dp 8, ep 4, pp 1 (16 ranks): rank = tp_r + 2 dp_r, the EP groups
 * blocks of 4 DP ranks: rank 3 (tp_r 1, dp_r 1) runs its AllToAlls over
 * {1, 3, 5, 7}, rank 11 (dp_r 5) over {9, 11, 13, 15}; its expert gradients
 * go over the expert-DP group {3, 11}, its dense ones over all 8 DP ranks.
 * 4 AllToAlls a layer and micro-batch: 4 * 2 layers * 2 = 16.
 */
static void test_ep_graph(void **state)
{
	struct wl_llm p = parse_ok("preset=mixtral-8x7b,layers=2,seq=256,tp=2,dp=8,ep=4,gbs=16");
	struct wl_graph g;
	struct wl_err err = {""};
	uint32_t a2a = 0, rs = 0, rs_n[2] = {0, 0};
	uint64_t rs_bytes[2] = {0, 0};
	const uint32_t *rs_ranks = NULL;

	(void)state;
	assert_int_equal(wl_llm_graph(&p, &g, &err), 0);
	for (uint32_t i = 0; i < g.ranks[3].nnodes; i++) {
		const struct wl_node *n = &g.ranks[3].nodes[i];

		if (n->kind == WL_COLL && n->op == WL_ALLTOALL) {
			a2a++;
			assert_int_equal(n->bytes, 256 / 2 * 2 * 4096 * 2);
			assert_int_equal(n->nranks, 4);
			assert_int_equal(n->ranks[0], 1);
			assert_int_equal(n->ranks[3], 7);
		}
		if (n->kind == WL_COLL && n->op == WL_REDUCESCATTER && rs < 2) {
			rs_n[rs] = n->nranks;
			rs_bytes[rs] = n->bytes;
			rs_ranks = n->ranks;
			rs++;
		}
	}
	assert_int_equal(a2a, 16);
	assert_int_equal(rs, 2);
	/* dense gradients first, over the 8 DP ranks; then the experts' over {3, 11} */
	assert_int_equal(rs_n[0], 8);
	assert_int_equal(rs_bytes[0], wl_llm_params_dense(&p, 0) * 2);
	assert_int_equal(rs_n[1], 2);
	assert_int_equal(rs_ranks[0], 3);
	assert_int_equal(rs_ranks[1], 11);
	assert_int_equal(rs_bytes[1], wl_llm_params_expert(&p) * 2);
	/* experts/ep = 2 experts a rank, each 3 * 4096 * 14336 / tp 2, 2 layers */
	assert_int_equal(wl_llm_params_expert(&p), 2ull * 2 * 3 * 4096 * 14336 / 2);
	assert_int_equal(g.ranks[11].nodes[2].ranks[0], 9);
	assert_int_equal(wl_graph_check(&g, &err), 0);
	wl_graph_free(&g);
}

/* Every preset, parallel in every dimension, passes wl_graph_check. */
static void test_graphs_check(void **state)
{
	static const char *const specs[] = {
		"preset=llama3-8b,seq=512,tp=2,pp=2,dp=2,gbs=8",
		"preset=llama3-70b,seq=256,tp=2,pp=4,dp=2,gbs=8,dpcoll=allreduce",
		"preset=llama3-405b,seq=256,tp=2,pp=2,dp=1,gbs=4",
		"preset=mixtral-8x7b,seq=256,tp=2,pp=2,dp=4,ep=2,gbs=8",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct wl_llm p = parse_ok(specs[i]);
		struct wl_graph g;
		struct wl_err err = {""};

		if (wl_llm_graph(&p, &g, &err) != 0 || wl_graph_check(&g, &err) != 0)
			fail_msg("%s: %s", specs[i], err.msg);
		wl_graph_free(&g);
	}
}

/* The preset first wherever it stands; the other keys override it. */
static void test_spec_order(void **state)
{
	struct wl_llm p = parse_ok("tp=8,preset=llama3-70b,peak=1.979P,mfu=0.38");

	(void)state;
	assert_string_equal(p.preset, "llama3-70b");
	assert_int_equal(p.tp, 8);
	assert_int_equal(p.hidden, 8192);
	assert_int_equal(p.peak_flops, 1979000000000000ull);
	assert_true(p.mfu == 0.38);
	p = parse_ok("");
	assert_string_equal(p.preset, "llama3-8b");
}

static void test_bad_specs(void **state)
{
	(void)state;
	expect_refused("tpp=2", "llm spec: unknown key 'tpp' (did you mean tp?); keys: preset, "
		       "layers, hidden, ffn, heads, kv_heads, seq, vocab, mb, gbs, tp, pp, dp, ep, "
		       "experts, topk, gated, dpcoll, peak, mfu");
	expect_refused("preset=llama3-8bb", "llm spec: bad preset=llama3-8bb: unknown (did you "
		       "mean llama3-8b?); presets: llama3-8b, llama3-70b, llama3-405b, mixtral-8x7b");
	expect_refused("tp=0", "llm spec: bad tp=0: takes 1..1024");
	expect_refused("layers=2x", "llm spec: bad layers=2x: takes 1..4096");
	expect_refused("mb=-1", "llm spec: bad mb=-1: takes 1..65536");
	expect_refused("mfu=1.5", "llm spec: bad mfu=1.5: takes a share of peak in (0, 1], e.g. 0.4");
	expect_refused("peak=fast", "llm spec: bad peak=fast: takes FLOP/s above 0 with K, M, G, "
		       "T or P (989T, 1.979P)");
	expect_refused("gated=yes", "llm spec: bad gated=yes: takes 0 or 1");
	expect_refused("dpcoll=ring", "llm spec: bad dpcoll=ring: takes rs-ag or allreduce");
	expect_refused("tp", "llm spec: 'tp': not key=value");
	expect_refused("tp=", "llm spec: 'tp=': not key=value");
	expect_refused("tp=3", "llm spec: heads=32 is not a multiple of tp=3");
	expect_refused("pp=3", "llm spec: layers=32 is not a multiple of pp=3");
	expect_refused("dp=4,gbs=10", "llm spec: gbs=10 is not a multiple of mb*dp=4");
	expect_refused("ep=2,dp=2", "llm spec: bad ep=2: a dense model (experts=0) has no "
		       "experts to spread");
	expect_refused("preset=mixtral-8x7b,topk=9", "llm spec: bad topk=9: takes 1..experts=8");
	expect_refused("preset=mixtral-8x7b,ep=3,dp=3,gbs=9",
		       "llm spec: experts=8 is not a multiple of ep=3");
	/* 2^22 micro-batches x 32 layers: 2^27 layer passes */
	expect_refused("gbs=4194304", "llm spec: gbs=4194304 gives 4194304 micro-batches of 32 "
		       "layers a rank, 134217728 layer passes; at most 4194304");
	expect_refused("tp=1024,pp=32,dp=64,layers=64,heads=1024,kv_heads=1024,hidden=1024,"
		       "ffn=1024,gbs=64", "llm spec: bad tp*pp*dp=2097152: a job has at most "
		       "1048576 ranks");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tp_bytes),
		cmocka_unit_test(test_pp_bytes),
		cmocka_unit_test(test_ep_bytes),
		cmocka_unit_test(test_dp_bytes),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_compute),
		cmocka_unit_test(test_schedule),
		cmocka_unit_test(test_1f1b_graph),
		cmocka_unit_test(test_tp_graph),
		cmocka_unit_test(test_ep_graph),
		cmocka_unit_test(test_graphs_check),
		cmocka_unit_test(test_spec_order),
		cmocka_unit_test(test_bad_specs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
