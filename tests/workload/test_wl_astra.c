/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_astra: ASTRA-sim text workloads written here (in the layout of
 * astra-sim's inputs/workload examples), each layer's fields checked against
 * the text; bad files refused with FILE:LINE.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "wl_astra.h"
#include "wl_graph.h"

static void parse_ok(struct wl_astra *w, const char *text)
{
	struct wl_err err = { "" };

	if (wl_astra_parse(w, "w.txt", text, strlen(text), &err) != 0)
		fail_msg("refused: %s", err.msg);
}

static void expect_refused(const char *text, const char *msg)
{
	struct wl_astra w;
	struct wl_err err = { "" };

	assert_int_equal(wl_astra_parse(&w, "w.txt", text, strlen(text), &err), -1);
	assert_string_equal(err.msg, msg);
	assert_null(w.layers);
}

static void expect_pass(const struct wl_astra_pass *p, uint64_t compute,
			enum wl_astra_comm comm, uint64_t bytes)
{
	assert_int_equal(p->compute_cycles, compute);
	assert_int_equal(p->comm, comm);
	assert_int_equal(p->comm_bytes, bytes);
}

static void test_data_parallel(void **state)
{
	struct wl_astra w;

	(void)state;
	parse_ok(&w, "DATA\n"
		     "2\n"
		     "conv1\t-1\t100\tNONE\t0\t200\tNONE\t0\t300\tALLREDUCE\t1048576\t10\n"
		     "fc -1 7 ALLGATHER 64 8 REDUCESCATTER 128 9 ALLTOALL 256 11\n");
	assert_int_equal(w.par, WL_PAR_DATA);
	assert_int_equal(w.mp_group, 0);
	assert_int_equal(w.nlayers, 2);
	assert_string_equal(w.layers[0].name, "conv1");
	assert_int_equal(w.layers[0].reserved, -1);
	expect_pass(&w.layers[0].fwd, 100, WL_AC_NONE, 0);
	expect_pass(&w.layers[0].ig, 200, WL_AC_NONE, 0);
	expect_pass(&w.layers[0].wg, 300, WL_AC_ALLREDUCE, 1048576);
	assert_int_equal(w.layers[0].update_cycles, 10);
	assert_int_equal(w.layers[0].line, 3);
	assert_int_equal(w.layers[0].par, WL_PAR_DATA);
	assert_string_equal(w.layers[1].name, "fc");
	expect_pass(&w.layers[1].fwd, 7, WL_AC_ALLGATHER, 64);
	expect_pass(&w.layers[1].ig, 8, WL_AC_REDUCESCATTER, 128);
	expect_pass(&w.layers[1].wg, 9, WL_AC_ALLTOALL, 256);
	assert_int_equal(w.layers[1].update_cycles, 11);
	assert_int_equal(w.layers[1].line, 4);
	wl_astra_free(&w);
}

/* astra-sim's microAllReduce.txt layout: the group size on the first line. */
static void test_hybrid_transformer(void **state)
{
	struct wl_astra w;

	(void)state;
	parse_ok(&w, "HYBRID_TRANSFORMER\tmodel_parallel_NPU_group: 8\n"
		     "1\n"
		     "conv1 -1 5 ALLREDUCE 1048576 5 NONE 0 5  NONE 0 5\n");
	assert_int_equal(w.par, WL_PAR_HYBRID_TRANSFORMER);
	assert_int_equal(w.mp_group, 8);
	assert_int_equal(w.nlayers, 1);
	expect_pass(&w.layers[0].fwd, 5, WL_AC_ALLREDUCE, 1048576);
	expect_pass(&w.layers[0].ig, 5, WL_AC_NONE, 0);
	expect_pass(&w.layers[0].wg, 5, WL_AC_NONE, 0);
	assert_int_equal(w.layers[0].update_cycles, 5);
	wl_astra_free(&w);
}

/* DLRM: the last bottom layer after the type, as in DLRM_HybridParallel.txt. */
static void test_hybrid_dlrm(void **state)
{
	struct wl_astra w;

	(void)state;
	parse_ok(&w, "HYBRID_DLRM\t1\t\t\n"
		     "2\t\t\n"
		     "Embedding\t-1\t300\tALLTOALL\t98304\t300\tALLTOALL\t98304\t300\tNONE\t0\t98\n"
		     "# a comment line, skipped\n"
		     "\n"
		     "MLP_Bottom_0\t-1\t1280\tNONE\t0\t794\tNONE\t0\t896\tALLREDUCE\t13312\t13\n");
	assert_int_equal(w.par, WL_PAR_HYBRID_DLRM);
	assert_int_equal(w.dlrm_last_bottom, 1);
	assert_int_equal(w.nlayers, 2);
	expect_pass(&w.layers[0].fwd, 300, WL_AC_ALLTOALL, 98304);
	expect_pass(&w.layers[0].ig, 300, WL_AC_ALLTOALL, 98304);
	expect_pass(&w.layers[0].wg, 300, WL_AC_NONE, 0);
	assert_int_equal(w.layers[0].update_cycles, 98);
	assert_string_equal(w.layers[1].name, "MLP_Bottom_0");
	expect_pass(&w.layers[1].fwd, 1280, WL_AC_NONE, 0);
	expect_pass(&w.layers[1].ig, 794, WL_AC_NONE, 0);
	expect_pass(&w.layers[1].wg, 896, WL_AC_ALLREDUCE, 13312);
	assert_int_equal(w.layers[1].update_cycles, 13);
	assert_int_equal(w.layers[1].line, 6);
	wl_astra_free(&w);
}

/* HYBRID_CUSTOMIZED: each layer names its own parallelism last. */
static void test_hybrid_customized(void **state)
{
	struct wl_astra w;

	(void)state;
	parse_ok(&w, "HYBRID_CUSTOMIZED\n"
		     "2\n"
		     "mlp0\t-1\t32291\tALLGATHER\t37632\t32291\tREDUCESCATTER\t37632\t32291\tALLREDUCE\t37632\t3229 HYBRID_DATA_MODEL\n"
		     "mlp3\t-1\t14144\tALLGATHER\t147456\t14144\tREDUCESCATTER\t\t147456\t14144\tNONE\t\t0\t\t1414 MODEL\n");
	assert_int_equal(w.par, WL_PAR_HYBRID_CUSTOMIZED);
	assert_int_equal(w.layers[0].par, WL_PAR_HYBRID_DATA_MODEL);
	expect_pass(&w.layers[0].fwd, 32291, WL_AC_ALLGATHER, 37632);
	expect_pass(&w.layers[0].ig, 32291, WL_AC_REDUCESCATTER, 37632);
	expect_pass(&w.layers[0].wg, 32291, WL_AC_ALLREDUCE, 37632);
	assert_int_equal(w.layers[0].update_cycles, 3229);
	assert_int_equal(w.layers[1].par, WL_PAR_MODEL);
	expect_pass(&w.layers[1].ig, 14144, WL_AC_REDUCESCATTER, 147456);
	expect_pass(&w.layers[1].wg, 14144, WL_AC_NONE, 0);
	assert_int_equal(w.layers[1].update_cycles, 1414);
	wl_astra_free(&w);
}

static void test_refused(void **state)
{
	(void)state;
	expect_refused("", "w.txt: empty: the first line is the parallelism");
	expect_refused("PIPELINE\n1\n",
		       "w.txt:1: unknown parallelism 'PIPELINE' (DATA, MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_TRANSFORMER, HYBRID_DLRM, HYBRID_DLRM_ENHANCED, HYBRID_CUSTOMIZED, MICRO)");
	expect_refused("DATA checkpoints: 2\n1\n",
		       "w.txt:1: 'checkpoints:' after the parallelism: only \"model_parallel_NPU_group: G\" is understood there");
	expect_refused("HYBRID_DLRM\n1\n",
		       "w.txt:1: HYBRID_DLRM wants the index of the last bottom-MLP layer after it");
	expect_refused("DATA\n\n", "w.txt:2: the number of layers is missing");
	expect_refused("DATA\nten\n",
		       "w.txt:2: number of layers: 'ten' is not an integer in 1..1048576");
	expect_refused("DATA\n2\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n",
		       "w.txt:3: 1 layers, the second line announces 2");
	expect_refused("DATA\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\nm -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n",
		       "w.txt:4: more layers than the 1 the second line announces");
	expect_refused("DATA\n1\nl -1 1 NONE 0 1 BROADCAST 0 1 ALLREDUCE 8 1\n",
		       "w.txt:3: input gradient comm type: unknown communication type 'BROADCAST' (NONE, ALLREDUCE, ALLGATHER, ALLTOALL, REDUCESCATTER, ALLREDUCEALLTOALL)");
	expect_refused("DATA\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8\n",
		       "w.txt:3: layer 'l': 11 fields, a DATA layer has 12 (name, reserved, then compute, comm type, comm size for forward, input gradient and weight gradient, then the update delay)");
	expect_refused("DATA\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE -8 1\n",
		       "w.txt:3: weight gradient comm size: '-8' is not an integer in 0..9223372036854775807");
	expect_refused("HYBRID_DLRM 1\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n",
		       "w.txt:1: last bottom layer 1, but there are 1 layers");
	expect_refused("HYBRID_CUSTOMIZED\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1 MICRO\n",
		       "w.txt:3: layer 'l': a layer's own parallelism is DATA, MODEL, HYBRID_DATA_MODEL or HYBRID_MODEL_DATA, not MICRO");
}

/* Through a file: the message names it. */
static void test_load_file(void **state)
{
	char path[] = "/tmp/wl-astra-XXXXXX";
	int fd = mkstemp(path);
	static const char text[] = "MODEL\n1\nl -1 1 ALLGATHER 0 1 NONE 0 1 NONE 0 x\n";
	struct wl_astra w;
	struct wl_err err;
	char want[WL_ERR_LEN];

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	assert_int_equal(wl_astra_load(&w, path, &err), -1);
	snprintf(want, sizeof(want), "%s:3: update delay: 'x' is not an integer in 0..9223372036854775807", path);
	assert_string_equal(err.msg, want);
	unlink(path);
	assert_int_equal(wl_astra_load(&w, path, &err), -1);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	assert_string_equal(err.msg, want);
}

static const char two_layers[] =
	"DATA\n2\n"
	"conv1 -1 100 NONE 0 200 NONE 0 300 ALLREDUCE 1048576 10\n"
	"fc -1 7 ALLGATHER 64 8 NONE 0 9 ALLTOALL 256 11\n";

static void expect_node(const struct wl_graph *g, uint32_t rank, uint64_t id,
			enum wl_kind kind, uint64_t ns_or_bytes, uint64_t dep0, uint64_t dep1)
{
	const struct wl_node *n = wl_graph_find(g, rank, id);

	assert_non_null(n);
	assert_int_equal(n->kind, kind);
	assert_int_equal(kind == WL_COMPUTE ? n->duration_ns : n->bytes, ns_or_bytes);
	assert_int_equal(n->ndeps, (dep0 != 0) + (dep1 != 0));
	if (dep0 != 0)
		assert_int_equal(n->deps[0].id, dep0);
	if (dep1 != 0)
		assert_int_equal(n->deps[1].id, dep1);
}

/* ASTRA-sim's data-parallel order, at 500 ps a cycle: F0 F1, then W1 C1 I1,
 * W0 C0 (no input gradient for the first layer); the second pass's forward
 * of a layer also waits for that layer's collective: F0' after W0 and C0,
 * F1' after F0' and C1. The forward all-gather of fc is not in DATA. */
static void test_data_to_graph(void **state)
{
	struct wl_astra w;
	struct wl_graph g;
	struct wl_err err;
	const struct wl_node *c;

	(void)state;
	parse_ok(&w, two_layers);
	assert_int_equal(wl_astra_to_graph(&w, "w.txt", 4, 2, 500, &g, &err), 0);
	assert_int_equal(wl_graph_check(&g, &err), 0);
	for (uint32_t r = 0; r < 4; r++) {
		assert_int_equal(g.ranks[r].nnodes, 14);
		expect_node(&g, r, 1, WL_COMPUTE, 50, 0, 0);     /* F0: 100 cycles */
		expect_node(&g, r, 2, WL_COMPUTE, 3, 1, 0);      /* F1: 7 cycles, 3.5 ns */
		expect_node(&g, r, 3, WL_COMPUTE, 4, 2, 0);      /* W1: 9 cycles */
		expect_node(&g, r, 4, WL_COLL, 256, 3, 0);       /* C1 */
		expect_node(&g, r, 5, WL_COMPUTE, 4, 3, 0);      /* I1: 8 cycles */
		expect_node(&g, r, 6, WL_COMPUTE, 150, 5, 0);    /* W0: 300 cycles */
		expect_node(&g, r, 7, WL_COLL, 1048576, 6, 0);   /* C0 */
		expect_node(&g, r, 8, WL_COMPUTE, 50, 6, 7);     /* F0' */
		expect_node(&g, r, 9, WL_COMPUTE, 3, 8, 4);      /* F1' */
	}
	c = wl_graph_find(&g, 2, 4);
	assert_int_equal(c->op, WL_ALLTOALL);
	assert_int_equal(c->nranks, 4);
	assert_int_equal(c->ranks[3], 3);
	assert_int_equal(wl_graph_find(&g, 2, 7)->op, WL_ALLREDUCE);
	/* one copy of the world's members for every rank and collective (not nranks^2) */
	for (uint32_t r = 0; r < 4; r++)
		for (uint64_t id = 4; id <= 7; id += 3) {
			assert_true(wl_graph_find(&g, r, id)->ranks_shared);
			assert_ptr_equal(wl_graph_find(&g, r, id)->ranks, c->ranks);
		}
	assert_int_equal(g.nshared, 1);
	wl_graph_free(&g);
	wl_astra_free(&w);
}

/* The members of node id's communicator on rank r, as "0,1". */
static void expect_group(const struct wl_graph *g, uint32_t r, uint64_t id, enum wl_coll op, const char *want)
{
	const struct wl_node *n = wl_graph_find(g, r, id);
	char got[64] = "";

	assert_non_null(n);
	assert_int_equal(n->kind, WL_COLL);
	assert_int_equal(n->op, op);
	for (uint32_t i = 0; i < n->nranks; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%u", i ? "," : "", n->ranks[i]);
	assert_string_equal(got, want);
}

/*
 * Two layers, model_parallel_NPU_group 2, on 4 ranks, at 1 ns a cycle.
 * HYBRID_DATA_MODEL, ASTRA-sim's iterate_hybrid_parallel_data_model order:
 * Fa Ca (forward collective, waited for) Fb Cb; then Ib, its input-gradient
 * collective Gb (not waited for), Wb after Ib, its weight-gradient
 * collective Wcb; Ia after Wb and Gb (the input gradient's wait); no
 * input-gradient collective for the first layer; Wa, Wca.
 * HYBRID_TRANSFORMER (iterate_hybrid_parallel_Transformer) waits for each
 * input-gradient collective, the first layer's too: Ib Gb Wb(after Gb) Wcb
 * Ia(after Wb) Ga Wa(after Ga) Wca. Forward and input gradient over the
 * model group (blocks of 2 ranks), weight gradient over the data group
 * (ranks 2 apart), as decode_involved_dimensions.
 */
static const char hybrid_layers[] =
	"a -1 100 ALLREDUCE 64 200 ALLREDUCE 128 300 ALLREDUCE 1024 10\n"
	"b -1 10 ALLGATHER 32 20 REDUCESCATTER 16 30 ALLREDUCE 2048 10\n";

static void hybrid_graph(struct wl_astra *w, struct wl_graph *g, const char *head)
{
	char text[512];
	struct wl_err err;

	snprintf(text, sizeof(text), "%s model_parallel_NPU_group: 2\n2\n%s", head, hybrid_layers);
	parse_ok(w, text);
	assert_int_equal(wl_astra_to_graph(w, "h.txt", 4, 1, 1000, g, &err), 0);
	assert_int_equal(wl_graph_check(g, &err), 0);
	for (uint32_t r = 0; r < 4; r++) {
		expect_node(g, r, 1, WL_COMPUTE, 100, 0, 0);  /* Fa */
		expect_node(g, r, 2, WL_COLL, 64, 1, 0);      /* Ca */
		expect_node(g, r, 3, WL_COMPUTE, 10, 2, 0);   /* Fb after Ca */
		expect_node(g, r, 4, WL_COLL, 32, 3, 0);      /* Cb */
		expect_node(g, r, 5, WL_COMPUTE, 20, 4, 0);   /* Ib */
		expect_node(g, r, 6, WL_COLL, 16, 5, 0);      /* Gb */
		expect_node(g, r, 8, WL_COLL, 2048, 7, 0);    /* Wcb */
	}
	expect_group(g, 0, 2, WL_ALLREDUCE, "0,1");
	expect_group(g, 3, 4, WL_ALLGATHER, "2,3");
	expect_group(g, 2, 6, WL_REDUCESCATTER, "2,3");
	expect_group(g, 0, 8, WL_ALLREDUCE, "0,2");
	expect_group(g, 3, 8, WL_ALLREDUCE, "1,3");
	/* the members of a group: one copy, shared by its ranks (the world, 2 blocks, 2 strided groups) */
	assert_ptr_equal(wl_graph_find(g, 0, 2)->ranks, wl_graph_find(g, 1, 2)->ranks);
	assert_ptr_equal(wl_graph_find(g, 1, 8)->ranks, wl_graph_find(g, 3, 8)->ranks);
	assert_true(wl_graph_find(g, 0, 2)->ranks != wl_graph_find(g, 2, 2)->ranks);
	assert_int_equal(g->nshared, 5);
}

static void test_hybrid_to_graph(void **state)
{
	struct wl_astra w;
	struct wl_graph g;
	struct wl_err err;

	(void)state;
	hybrid_graph(&w, &g, "HYBRID_DATA_MODEL");
	for (uint32_t r = 0; r < 4; r++) {
		assert_int_equal(g.ranks[r].nnodes, 11);
		expect_node(&g, r, 7, WL_COMPUTE, 30, 5, 0);   /* Wb after Ib */
		expect_node(&g, r, 9, WL_COMPUTE, 200, 7, 6);  /* Ia after Wb and Gb */
		expect_node(&g, r, 10, WL_COMPUTE, 300, 9, 0); /* Wa */
		expect_node(&g, r, 11, WL_COLL, 1024, 10, 0);  /* Wca */
	}
	expect_group(&g, 3, 11, WL_ALLREDUCE, "1,3");
	wl_graph_free(&g);
	wl_astra_free(&w);
	hybrid_graph(&w, &g, "HYBRID_TRANSFORMER");
	for (uint32_t r = 0; r < 4; r++) {
		assert_int_equal(g.ranks[r].nnodes, 12);
		expect_node(&g, r, 7, WL_COMPUTE, 30, 6, 0);   /* Wb after Gb */
		expect_node(&g, r, 9, WL_COMPUTE, 200, 7, 0);  /* Ia after Wb */
		expect_node(&g, r, 10, WL_COLL, 128, 9, 0);    /* Ga */
		expect_node(&g, r, 11, WL_COMPUTE, 300, 10, 0); /* Wa after Ga */
		expect_node(&g, r, 12, WL_COLL, 1024, 11, 0);  /* Wca */
	}
	expect_group(&g, 1, 10, WL_ALLREDUCE, "0,1");
	expect_group(&g, 3, 12, WL_ALLREDUCE, "1,3");
	wl_graph_free(&g);
	wl_astra_free(&w);
	/* HYBRID_MODEL_DATA: the data dimension first, so data groups are blocks of 4 / 2 */
	parse_ok(&w, "HYBRID_MODEL_DATA model_parallel_NPU_group: 2\n1\nl -1 1 ALLREDUCE 8 1 NONE 0 1 ALLREDUCE 16 1\n");
	assert_int_equal(wl_astra_to_graph(&w, "h.txt", 4, 1, 1000, &g, &err), 0);
	assert_int_equal(wl_graph_check(&g, &err), 0);
	expect_group(&g, 1, 2, WL_ALLREDUCE, "1,3");   /* forward: model, ranks 2 apart */
	expect_group(&g, 1, 5, WL_ALLREDUCE, "0,1");   /* weight gradient: data, a block */
	wl_graph_free(&g);
	wl_astra_free(&w);
	/* MODEL: forward and input gradient over every rank, no weight-gradient collective */
	parse_ok(&w, "MODEL\n1\nl -1 1 ALLREDUCE 8 1 NONE 0 1 ALLREDUCE 16 1\n");
	assert_int_equal(wl_astra_to_graph(&w, "h.txt", 4, 1, 1000, &g, &err), 0);
	assert_int_equal(g.ranks[2].nnodes, 4);        /* F, C, I, W */
	expect_group(&g, 2, 2, WL_ALLREDUCE, "0,1,2,3");
	assert_int_equal(wl_graph_find(&g, 2, 4)->kind, WL_COMPUTE);
	wl_graph_free(&g);
	wl_astra_free(&w);
}

static void test_to_graph_refused(void **state)
{
	struct wl_astra w;
	struct wl_graph g;
	struct wl_err err;

	(void)state;
	parse_ok(&w, "MICRO\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n");
	assert_int_equal(wl_astra_to_graph(&w, "w.txt", 4, 1, 1000, &g, &err), -1);
	assert_string_equal(err.msg, "w.txt:1: MICRO: not turned into a job graph yet (DATA, MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA and HYBRID_TRANSFORMER are)");
	wl_astra_free(&w);
	parse_ok(&w, "HYBRID_DATA_MODEL\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n");
	assert_int_equal(wl_astra_to_graph(&w, "w.txt", 4, 1, 1000, &g, &err), -1);
	assert_non_null(strstr(err.msg, "w.txt:1: HYBRID_DATA_MODEL wants \"model_parallel_NPU_group: G\" after it, G dividing the job's 4 ranks (none given)"));
	wl_astra_free(&w);
	parse_ok(&w, "HYBRID_TRANSFORMER model_parallel_NPU_group: 3\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n");
	assert_int_equal(wl_astra_to_graph(&w, "w.txt", 4, 1, 1000, &g, &err), -1);
	assert_non_null(strstr(err.msg, "(it does not)"));
	wl_astra_free(&w);
	parse_ok(&w, "DATA\n2\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n\nm -1 1 NONE 0 1 NONE 0 1 ALLREDUCEALLTOALL 8 1\n");
	assert_int_equal(wl_astra_to_graph(&w, "w.txt", 4, 1, 1000, &g, &err), -1);
	assert_string_equal(err.msg, "w.txt:5: layer 'm': weight gradient ALLREDUCEALLTOALL is two collectives over groups the file does not give");
	assert_null(g.ranks);
	wl_astra_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_parallel),
		cmocka_unit_test(test_hybrid_transformer),
		cmocka_unit_test(test_hybrid_dlrm),
		cmocka_unit_test(test_hybrid_customized),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_data_to_graph),
		cmocka_unit_test(test_hybrid_to_graph),
		cmocka_unit_test(test_to_graph_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
