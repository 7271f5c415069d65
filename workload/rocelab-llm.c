/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocelab-llm: what the LLM training generator (workload/wl_llm.h) makes of
 * a spec, without running it: the job's shape, the sizes its formulas give,
 * and per rank the nodes by kind, the bytes by operation and the compute
 * time of one iteration; optionally the graph as a text listing.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_version.h"
#include "wl_llm.h"

#define EXIT_USAGE 2
#define MAX_SHOWN 64

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rocelab-llm [--rank N]... [--all] [--check] [--list FILE] SPEC\n"
		"       rocelab-llm --presets\n"
		"\n"
		"Show one training iteration of a transformer as Megatron-LM runs it (TP, PP with\n"
		"1F1B, DP, EP), as the job graph rocelab would run, without running it.\n"
		"\n"
		"  SPEC            key=value,...: preset=NAME first, then any of its keys:\n"
		"                  layers hidden ffn heads kv_heads seq vocab mb gbs tp pp dp ep\n"
		"                  experts topk gated (0|1) dpcoll (rs-ag|allreduce)\n"
		"                  peak (FLOP/s: 989T) mfu (0..1)\n"
		"                  e.g. preset=llama3-8b,tp=8,pp=4,dp=4,gbs=512,mfu=0.4,peak=989T\n"
		"                  (docs/reference/rocelab-llm.md)\n"
		"  --presets       the presets and their shapes\n"
		"  --rank N        show rank N (repeatable; default: the first rank of each stage)\n"
		"  --all           show every rank (at most %d)\n"
		"  --check         build every rank and check the whole graph (wl_graph_check)\n"
		"  --list FILE     write the shown ranks' nodes, one a line, to FILE ('-': stdout)\n"
		"  --version       the version and the git commit it was built from\n"
		"  -h, --help      this text\n"
		"\n"
		"Exit status: 0 on success, 1 when the graph fails its check or a file cannot be\n"
		"written, 2 on bad arguments or a bad spec.\n",
		MAX_SHOWN);
}

static int bad_usage(const char *what, const char *arg)
{
	fprintf(stderr, "rocelab-llm: %s '%s' (see --help)\n", what, arg);
	return EXIT_USAGE;
}

static void print_presets(void)
{
	for (const char *const *n = wl_llm_presets(); *n; n++) {
		struct wl_llm p;

		wl_llm_preset(&p, *n, NULL);
		printf("%-13s layers=%u hidden=%u ffn=%u heads=%u kv_heads=%u seq=%u vocab=%u "
		       "experts=%u topk=%u params=%.3e\n", *n, p.layers, p.hidden, p.ffn, p.heads,
		       p.kv_heads, p.seq, p.vocab, p.experts, p.topk, (double)wl_llm_params(&p));
	}
}

static void print_job(const struct wl_llm *p)
{
	printf("job: preset=%s layers=%u hidden=%u ffn=%u heads=%u kv_heads=%u seq=%u vocab=%u "
	       "mb=%u gbs=%u tp=%u pp=%u dp=%u ep=%u experts=%u topk=%u gated=%d dpcoll=%s "
	       "peak=%.4gT mfu=%g\n", p->preset, p->layers, p->hidden, p->ffn, p->heads,
	       p->kv_heads, p->seq, p->vocab, p->mb, p->gbs, p->tp, p->pp, p->dp, p->ep,
	       p->experts, p->topk, p->gated, p->dpcoll == WL_LLM_DP_RSAG ? "rs-ag" : "allreduce",
	       (double)p->peak_flops / 1e12, p->mfu);
	printf("ranks: %u = tp %u (innermost) x dp %u (ep %u inside it) x pp %u; "
	       "micro-batches: %u per pipeline\n", wl_llm_nranks(p), p->tp, p->dp, p->ep, p->pp,
	       wl_llm_micro(p));
	printf("params: %" PRIu64 " (%.3e); per rank: dense %" PRIu64 " (stage 0) .. %" PRIu64
	       " (stage %u), experts %" PRIu64 "\n", wl_llm_params(p), (double)wl_llm_params(p),
	       wl_llm_params_dense(p, 0), wl_llm_params_dense(p, p->pp - 1), p->pp - 1,
	       wl_llm_params_expert(p));
	printf("sizes: tp_allreduce=%" PRIu64 " pp_sendrecv=%" PRIu64 " ep_alltoall=%" PRIu64
	       " dp_grads=%" PRIu64 " (stage 0) bytes\n", wl_llm_tp_bytes(p), wl_llm_pp_bytes(p),
	       wl_llm_ep_bytes(p), wl_llm_params_dense(p, 0) * 2);
	printf("compute per layer and micro-batch, forward: attention %.3f us, mlp %.3f us; "
	       "logit %.3f us; backward x2\n", wl_llm_ns(p, wl_llm_attn_flops(p)) / 1e3,
	       wl_llm_ns(p, wl_llm_mlp_flops(p)) / 1e3, wl_llm_ns(p, wl_llm_logit_flops(p)) / 1e3);
}

/* "rank R stage S: nodes ...; bytes ...; compute T ms" */
static void print_rank(const struct wl_llm *p, const struct wl_rank *rk, uint32_t r)
{
	uint64_t colls[WL_COLL_COUNT] = {0}, cbytes[WL_COLL_COUNT] = {0};
	uint64_t ncomp = 0, nsend = 0, nrecv = 0, sbytes = 0, rbytes = 0, ns = 0;

	for (uint32_t i = 0; i < rk->nnodes; i++) {
		const struct wl_node *n = &rk->nodes[i];

		if (n->kind == WL_COMPUTE)
			ncomp++, ns += n->duration_ns;
		else if (n->kind == WL_SEND)
			nsend++, sbytes += n->bytes;
		else if (n->kind == WL_RECV)
			nrecv++, rbytes += n->bytes;
		else
			colls[n->op]++, cbytes[n->op] += n->bytes;
	}
	printf("rank %u stage %u: nodes compute=%" PRIu64, r, r / (p->tp * p->dp), ncomp);
	for (int op = 0; op < WL_COLL_COUNT; op++)
		if (colls[op])
			printf(" %s=%" PRIu64, wl_coll_name(op), colls[op]);
	printf(" SEND=%" PRIu64 " RECV=%" PRIu64 "; bytes", nsend, nrecv);
	for (int op = 0; op < WL_COLL_COUNT; op++)
		if (colls[op])
			printf(" %s=%" PRIu64, wl_coll_name(op), cbytes[op]);
	printf(" SEND=%" PRIu64 " RECV=%" PRIu64 "; compute %.3f ms\n", sbytes, rbytes, ns / 1e6);
}

/* One line a node: "RANK ID KIND ... deps A,B". */
static void list_rank(FILE *f, const struct wl_rank *rk, uint32_t r)
{
	for (uint32_t i = 0; i < rk->nnodes; i++) {
		const struct wl_node *n = &rk->nodes[i];

		fprintf(f, "%u %" PRIu64 " ", r, n->id);
		if (n->kind == WL_COMPUTE) {
			fprintf(f, "COMPUTE %" PRIu64 "ns", n->duration_ns);
		} else if (n->kind == WL_COLL) {
			fprintf(f, "%s %" PRIu64 "B ranks ", wl_coll_name(n->op), n->bytes);
			for (uint32_t k = 0; k < n->nranks; k++)
				fprintf(f, "%s%u", k ? "," : "", n->ranks[k]);
		} else {
			fprintf(f, "%s %" PRIu64 "B peer %u tag %" PRIu64,
				n->kind == WL_SEND ? "SEND" : "RECV", n->bytes, n->peer, n->tag);
		}
		fprintf(f, " deps ");
		for (uint32_t k = 0; k < n->ndeps; k++)
			fprintf(f, "%s%" PRIu64, k ? "," : "", n->deps[k].id);
		fprintf(f, n->ndeps ? "\n" : "-\n");
	}
}

struct opts {
	uint32_t ranks[MAX_SHOWN], nranks;
	bool all, check;
	const char *list, *spec;
};

/* Builds the ranks shown (all of them with --check), prints, lists, checks. */
static int run(const struct wl_llm *p, struct opts *o)
{
	struct wl_graph g;
	struct wl_err err = {""};
	FILE *f = NULL;
	int rc = 0;

	if (wl_graph_init(&g, wl_llm_nranks(p), &err) != 0)
		return fprintf(stderr, "rocelab-llm: %s\n", err.msg), 1;
	for (uint32_t r = 0; r < g.nranks && rc == 0; r++) {
		bool shown = o->all;

		for (uint32_t i = 0; i < o->nranks; i++)
			shown |= o->ranks[i] == r;
		if ((shown || o->check) && wl_llm_rank_graph(p, r, &g, &err) != 0)
			rc = 1;
	}
	if (rc == 0 && o->check && wl_graph_check(&g, &err) != 0)
		rc = 1;
	if (rc != 0) {
		fprintf(stderr, "rocelab-llm: %s\n", err.msg);
		wl_graph_free(&g);
		return 1;
	}
	print_job(p);
	if (o->list)
		f = strcmp(o->list, "-") == 0 ? stdout : fopen(o->list, "w");
	if (o->list && f == NULL) {
		fprintf(stderr, "rocelab-llm: --list %s: %s\n", o->list, strerror(errno));
		rc = 1;
	}
	for (uint32_t r = 0; r < g.nranks; r++) {
		bool shown = o->all;

		for (uint32_t i = 0; i < o->nranks; i++)
			shown |= o->ranks[i] == r;
		if (!shown)
			continue;
		print_rank(p, &g.ranks[r], r);
		if (f)
			list_rank(f, &g.ranks[r], r);
	}
	if (o->check) {
		uint64_t nodes = 0;

		for (uint32_t r = 0; r < g.nranks; r++)
			nodes += g.ranks[r].nnodes;
		printf("check: %u ranks, %" PRIu64 " nodes: the graph passes wl_graph_check\n",
		       g.nranks, nodes);
	}
	if (f && f != stdout && fclose(f) != 0) {
		fprintf(stderr, "rocelab-llm: --list %s: %s\n", o->list, strerror(errno));
		rc = 1;
	}
	wl_graph_free(&g);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"rank", required_argument, NULL, 'r'}, {"all", no_argument, NULL, 'a'},
		{"check", no_argument, NULL, 'c'},      {"list", required_argument, NULL, 'l'},
		{"presets", no_argument, NULL, 'P'},    {"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
	};
	struct opts o = {.nranks = 0};
	struct wl_llm p;
	struct wl_err err = {""};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		char *end;
		unsigned long v;

		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("rocelab-llm %s (commit %s)\n", RL_VERSION, RL_COMMIT);
			return 0;
		case 'P':
			print_presets();
			return 0;
		case 'r':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || errno || v > UINT32_MAX)
				return bad_usage("--rank takes a rank number, not", optarg);
			if (o.nranks == MAX_SHOWN)
				return bad_usage("--rank: at most 64 of them; one more is", optarg);
			o.ranks[o.nranks++] = (uint32_t)v;
			break;
		case 'a': o.all = true; break;
		case 'c': o.check = true; break;
		case 'l': o.list = optarg; break;
		default:
			return bad_usage("unknown option", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return bad_usage("takes one SPEC; got", optind < argc ? argv[argc - 1] : "none");
	o.spec = argv[optind];
	if (wl_llm_parse(&p, o.spec, &err) != 0) {
		fprintf(stderr, "rocelab-llm: %s\n", err.msg);
		return EXIT_USAGE;
	}
	for (uint32_t i = 0; i < o.nranks; i++)
		if (o.ranks[i] >= wl_llm_nranks(&p))
			return fprintf(stderr, "rocelab-llm: --rank %u: the job has ranks 0..%u\n",
				       o.ranks[i], wl_llm_nranks(&p) - 1), EXIT_USAGE;
	if (o.all && wl_llm_nranks(&p) > MAX_SHOWN)
		return fprintf(stderr, "rocelab-llm: --all: the job has %u ranks, more than %d "
			       "(use --rank)\n", wl_llm_nranks(&p), MAX_SHOWN), EXIT_USAGE;
	if (o.nranks == 0 && !o.all)
		for (uint32_t s = 0; s < p.pp && o.nranks < MAX_SHOWN; s++)
			o.ranks[o.nranks++] = s * p.tp * p.dp;
	return run(&p, &o);
}
