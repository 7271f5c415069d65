/* SPDX-License-Identifier: BSD-3-Clause */
/* nc_tune: NCCL's tuning model, 2.21.5 or 2.23.4-2.30.7 (see nc_tune.h). */
#include "nc_tune.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/*
 * All values below are NCCL 2.21.5's, src/graph/tuning.cc unless said:
 * latencies in us, bandwidths in GB/s. Indices [algo][proto] in
 * nc_algo / nc_proto order, which is NCCL's.
 *
 * What release NC_REL_2_23 changes (git diff v2.21.5-1 v2.23.4-1 --
 * src/graph/tuning.cc; v2.22.3-1 has none of it, and v2.24.3-1 to
 * v2.30.7-1 keep all of it: v2.30.7-1 lines ~148-175 and ~325-412):
 *  - baseLat Tree Simple 0 -> 8.4; hwLat Tree Simple NVLink 28 -> 4.0,
 *    network 28 -> 14 (the tables below, one row per release);
 *  - interLat: with ppn == 1 (one GPU per server) the network step takes
 *    hwLat[NET][Tree][p] whatever the algorithm (step_lat);
 *  - the ring's network steps of an AllReduce: 2 x (nNodes - 1), was
 *    2 x nNodes (model_lat);
 *  - Ring LL128's bus bandwidth x .92 whatever ppn; 2.21 had x .7 for
 *    ppn < 2 (model_bw).
 * Alike in every release: llMaxBws, the Hopper per-channel caps,
 * treeCorrectionFactor (its first 23 entries), the ring's 1.4 plateau,
 * getNetOverhead, the latencyInter flush, nsteps. Not modelled, from
 * 2.23.4: PAT, NCCL's AllGather and ReduceScatter algorithm with one GPU
 * per server (Simple only); the Blackwell rows (from 2.24.3); the LL128
 * default-enable rules (nc_tune takes every protocol as on).
 */
static const double base_lat[NC_REL_COUNT][NC_ALGO_COUNT][NC_PROTO_COUNT] = {
	{ { 6.8, 14.0, 0.0 }, { 6.6, 14.0, 8.4 } }, /* 2.21: Tree, Ring (baseLat) */
	{ { 6.8, 14.0, 8.4 }, { 6.6, 14.0, 8.4 } }, /* 2.23 */
};
/* hwLat[NCCL_HW_NVLINK]: the intra-server hop (typeIntra NVL) */
static const double nvl_lat[NC_REL_COUNT][NC_ALGO_COUNT][NC_PROTO_COUNT] = {
	{ { 0.6, 1.25, 28.0 }, { 0.6, 1.9, 3.4 } },
	{ { 0.6, 1.25, 4.0 }, { 0.6, 1.9, 3.4 } },
};
/* hwLat[NCCL_HW_NET]: the network hop */
static const double net_lat[NC_REL_COUNT][NC_ALGO_COUNT][NC_PROTO_COUNT] = {
	{ { 5.0, 8.5, 28.0 }, { 2.7, 4.0, 14.0 } },
	{ { 5.0, 8.5, 14.0 }, { 2.7, 4.0, 14.0 } },
};
/* llMaxBws: [Volta-N1/Intel][Ampere-N1/AMD][Hopper-N1/AMD] x [1 node, 2, more] */
static const double ll_max_bw[3][3] = {
	{ 39.0, 39.0, 20.4 },
	{ 87.7, 22.5, 19.0 },
	{ 141.0, 45.0, 35.0 },
};
/* Hopper rows of perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws */
static const double ring_ll128_ch_bw[3] = { 36.7, 36.7, 36.7 };
static const double tree_ll128_ch_bw[3] = { 36.7, 36.7, 29.0 };
static const double tree_ch_bw[3] = { 38.7, 41.4, 36.0 };
/* treeCorrectionFactor: per protocol, for log2(bytes / 64) = 0..22 */
#define NC_TREE_CORR_N 23
static const double tree_corr[NC_PROTO_COUNT][NC_TREE_CORR_N] = {
	{ 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9,
	  1.0, 1.0, 1.0, 1.0 },
	{ 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9,
	  .9, .9, 1.0, 1.0 },
	{ .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7,
	  .8, .9, .9 },
};
#define HOPPER_IDX 2  /* compCapIndex for sm90 */

static const char *const algo_names[NC_ALGO_COUNT] = { "Tree", "Ring" };
static const char *const proto_names[NC_PROTO_COUNT] = { "LL", "LL128", "Simple" };
static const char *const release_names[NC_REL_COUNT] = { "2.21", "2.23" };
/* NCCL 2.21's other algorithm names (ncclAlgoStr), refused as not modelled */
static const char *const algo_unmodelled[] = { "CollNetDirect", "CollNetChain", "NVLS",
					       "NVLSTree" };

/* floor(log2(n)), 0 for n <= 1 (NCCL's log2i) */
static unsigned int log2i(uint64_t n)
{
	unsigned int l = 0;

	while (n >>= 1)
		l++;
	return l;
}

/* Ring and tree graphs alike: nch channels of bw GB/s, runtime channels. */
static void set_graphs(struct nc_tune_params *p, uint32_t nch, double bw, uint32_t runtime,
		       bool pattern_tree)
{
	for (int a = 0; a < NC_ALGO_COUNT; a++) {
		p->graph_channels[a] = nch;
		p->bw_intra[a] = bw;
		p->bw_inter[a] = bw;
	}
	p->channels = runtime;
	p->tree_pattern_tree = pattern_tree;
}

/* The search graphs of one server of H100 (no NIC), ring and tree alike. */
static void graph_one_server(struct nc_tune_params *p)
{
	/*
	 * NCCL 2.21.5, src/graph/search.cc ncclTopoCompute with no NET:
	 * sm90SpeedArrayIntra (60, 50, 40, 30, ...), maxBw = totalBw = the
	 * GPU's NVLink to the NVSwitch, 18 x 20.6 = 370.8 (topo.h
	 * SM90_NVLINK_BW). The ring search (init.cc: minChannels 1,
	 * maxChannels MAXCHANNELS / 2 = 16) fits 6 channels of 60 (360 <=
	 * 370.8); slower speeds give no more than 360 (ncclTopoCompareGraphs
	 * keeps the first of equal nChannels x bw). ncclTopoDupChannels
	 * doubles it (bwIntra 60 >= 50): 12 channels of 30. Pass 2 cannot
	 * raise the speed with 12 channels (12 x 40 > 370.8). The tree search
	 * has minChannels = maxChannels = 12 (init.cc) and totalBw x 8/7; it
	 * starts at 30 (12 x 40 > 423.8) and keeps its first pattern,
	 * NCCL_TOPO_PATTERN_BALANCED_TREE (with no NIC the simpler tree adds
	 * no bandwidth). Runtime channels: ncclTopoPostset doubles to 24
	 * (NCCL's "24 coll channels" on one 8 x H100 server).
	 * Inferred by hand from the search: not printed by a run here.
	 */
	set_graphs(p, 12, 30.0, 24, false);
}

/* The search graphs of 8 GPUs with 8 NICs across servers. */
static void graph_servers(struct nc_tune_params *p)
{
	/*
	 * Ring and tree graphs: 8 channels of 48 GB/s. PCIe Gen5 x16 is
	 * 16 x 240 / 80 = 48 GB/s in NCCL (topo.cc ncclTopoAddPci,
	 * kvDictPciGen "32.0 GT/s PCIe" = 240), a 400G NIC 400000 / 8000 =
	 * 50 GB/s (topo.cc); ncclTopoCompute starts at the first
	 * sm90SpeedArrayInter entry <= maxBw (48), one channel fits a NIC
	 * (50 - 48 < 48), and 8 x 48 = 384 >= totalBw = 18 links x 20.6
	 * (SM90_NVLINK_BW) ends the ring search; ncclTopoDupChannels keeps 8
	 * (ccMin > 80, bw < 50, > 4 channels). The tree graph is the sm90
	 * fallback NCCL_TOPO_PATTERN_TREE (search.cc "Try a simpler tree").
	 * Runtime channels: ncclTopoPostset doubles to 16 (issue #1453).
	 */
	set_graphs(p, 8, 48.0, 16, true);
}

void nc_tune_params_h100(struct nc_tune_params *p, uint32_t nodes, uint32_t gpus)
{
	memset(p, 0, sizeof(*p));
	p->nodes = nodes;
	p->gpus = gpus;
	p->coll = NC_COLL_ALLREDUCE;
	if (nodes == 1)
		graph_one_server(p);
	else
		graph_servers(p);
	for (int a = 0; a < NC_ALGO_COUNT; a++)
		p->algo_on[a] = true;
	p->cpu_amd = false;        /* Meta's Grand Teton: Intel Xeon hosts */
	p->latency_inter_us = 0.0; /* net_ib reports no latency to the graph */
	for (int i = 0; i < NC_PROTO_COUNT; i++)
		p->proto_on[i] = true;
}

double nc_tune_base_lat_us(enum nc_release rel, enum nc_algo a, enum nc_proto pr)
{
	if ((unsigned int)rel >= NC_REL_COUNT || (unsigned int)a >= NC_ALGO_COUNT ||
	    (unsigned int)pr >= NC_PROTO_COUNT)
		return -1.0;
	return base_lat[rel][a][pr];
}

static int params_ok(const struct nc_tune_params *p)
{
	/* one rank: ncclTopoTuneModel returns before it models anything */
	if (p == NULL || p->nodes == 0 || p->gpus == 0 || p->channels == 0 ||
	    (uint64_t)p->nodes * p->gpus < 2 || (unsigned int)p->coll >= NC_COLL_COUNT ||
	    (unsigned int)p->release >= NC_REL_COUNT)
		return 0;
	for (int a = 0; a < NC_ALGO_COUNT; a++)
		if (p->graph_channels[a] == 0 || !(p->bw_intra[a] > 0.0) ||
		    !(p->bw_inter[a] > 0.0))
			return 0;
	return 1;
}

static double dmin(double x, double y)
{
	return x < y ? x : y;
}

/* Indices of NCCL's per-generation tables: [index1][index2] of llMaxBws
 * (tuning.cc: one node the GPU's generation, else the CPU's vendor). */
static unsigned int idx_nodes(const struct nc_tune_params *p)
{
	return p->nodes <= 2 ? p->nodes - 1 : 2;
}

static unsigned int idx_ll(const struct nc_tune_params *p)
{
	return p->nodes == 1 ? HOPPER_IDX : (p->cpu_amd ? 1 : 0);
}

/* Ring steps of the collective: AllReduce 2 (n - 1), AllGather and
 * ReduceScatter n - 1 (tuning.cc nsteps). */
static double ring_steps(const struct nc_tune_params *p)
{
	uint64_t nranks = (uint64_t)p->nodes * p->gpus;

	return (double)(nranks - 1) * (p->coll == NC_COLL_ALLREDUCE ? 2.0 : 1.0);
}

double nc_tune_bus_cap_gbs(const struct nc_tune_params *p, enum nc_algo a, enum nc_proto pr)
{
	if (!params_ok(p) || (unsigned int)a >= NC_ALGO_COUNT || (unsigned int)pr >= NC_PROTO_COUNT)
		return -1.0;
	if (pr == NC_PROTO_LL)
		return ll_max_bw[idx_ll(p)][idx_nodes(p)];
	if (pr == NC_PROTO_LL128)
		return p->graph_channels[a] * (a == NC_ALGO_RING ? ring_ll128_ch_bw : tree_ll128_ch_bw)[idx_nodes(p)];
	return 0.0;
}

/* Algorithm bandwidth of (a, pr) for p's collective, before enables. */
static double model_bw(const struct nc_tune_params *p, enum nc_algo a, enum nc_proto pr)
{
	unsigned int i2 = idx_nodes(p);
	double n_ch = p->graph_channels[a];
	double bus = n_ch * (p->nodes <= 2 ? p->bw_intra[a] : p->bw_inter[a]);
	double cap = nc_tune_bus_cap_gbs(p, a, pr);
	uint64_t nranks = (uint64_t)p->nodes * p->gpus;

	if (a == NC_ALGO_RING) {
		if (pr == NC_PROTO_LL)
			bus = dmin(cap, bus * .5);
		else if (pr == NC_PROTO_LL128)  /* 2.21: x .7 for ppn < 2 */
			bus = dmin(bus * (p->gpus < 2 && p->release == NC_REL_2_21 ? 0.7 : 0.92),
				   cap);
		/* bus to algorithm bandwidth: nRanks / nsteps */
		return bus * (double)nranks / ring_steps(p);
	}
	bus = dmin(bus * .92, n_ch * tree_ch_bw[i2]);
	if (pr == NC_PROTO_LL)
		bus = dmin(bus / 3.8, cap);
	else if (pr == NC_PROTO_LL128)
		bus = dmin(bus * (p->nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), cap);
	if (p->tree_pattern_tree)
		bus *= .85;
	return bus * .5;
}

/* One step's latency (see nc_tune_step_lat_us), arguments checked. */
static double step_lat(const struct nc_tune_params *p, enum nc_algo a, enum nc_proto pr,
		       bool net)
{
	if (net) {
		/* 2.23: "With ppn=1 latencies are fully exposed, use the Tree
		 * network latency" */
		enum nc_algo an = p->release != NC_REL_2_21 && p->gpus == 1 ? NC_ALGO_TREE : a;
		double inter = net_lat[p->release][an][pr] + p->latency_inter_us;
		if (pr == NC_PROTO_SIMPLE)
			inter += p->latency_inter_us; /* the flush */
		return inter;
	}
	double intra = nvl_lat[p->release][a][pr];
	if (a == NC_ALGO_RING && p->nodes > 1) {
		/* "Inter-node rings still have to launch nsteps * net overhead":
		 * getNetOverhead, 1 us Intel, 2 us AMD; x3 for Simple */
		double ovh = p->cpu_amd ? 2.0 : 1.0;
		if (pr == NC_PROTO_SIMPLE)
			ovh *= 3;
		if (intra < ovh)
			intra = ovh;
	}
	return intra;
}

double nc_tune_step_lat_us(const struct nc_tune_params *p, enum nc_algo a, enum nc_proto pr,
			   bool net)
{
	if (p == NULL || (unsigned int)p->release >= NC_REL_COUNT ||
	    (unsigned int)a >= NC_ALGO_COUNT || (unsigned int)pr >= NC_PROTO_COUNT)
		return -1.0;
	return step_lat(p, a, pr, net);
}

/* Latency of (a, pr) for p's collective, us. */
static double model_lat(const struct nc_tune_params *p, enum nc_algo a, enum nc_proto pr)
{
	double intra = step_lat(p, a, pr, false), inter = step_lat(p, a, pr, true);
	double ninter;

	double base = base_lat[p->release][a][pr];

	if (a == NC_ALGO_TREE)
		return base + 2.0 * ((p->gpus - 1) * intra + log2i(p->nodes) * inter);
	/* tuning.cc nInterSteps: AllReduce across servers 2 x nodes (2.21)
	 * or 2 x (nodes - 1) (2.23), 0 on one; AllGather and ReduceScatter
	 * nodes - 1 */
	if (p->coll == NC_COLL_ALLREDUCE && p->nodes == 1)
		ninter = 0.0;
	else if (p->coll == NC_COLL_ALLREDUCE)
		ninter = 2.0 * (p->release == NC_REL_2_21 ? p->nodes : p->nodes - 1.0);
	else
		ninter = p->nodes - 1.0;
	return base + (ring_steps(p) - ninter) * intra + ninter * inter;
}

int nc_tune_model(const struct nc_tune_params *p, struct nc_tune_table *t)
{
	int any = 0;

	if (!params_ok(p) || t == NULL)
		return -EINVAL;
	for (int a = 0; a < NC_ALGO_COUNT; a++) {
		for (int pr = 0; pr < NC_PROTO_COUNT; pr++) {
			t->lat_us[a][pr] = model_lat(p, a, pr);
			/* AllGather and ReduceScatter have no Tree (tuning.cc) */
			bool on = p->algo_on[a] && p->proto_on[pr] &&
				  (a == NC_ALGO_RING || p->coll == NC_COLL_ALLREDUCE);
			t->bw_gbs[a][pr] = on ? model_bw(p, a, pr) : 0.0;
			any |= t->bw_gbs[a][pr] > 0.0;
		}
	}
	return any ? 0 : -EINVAL;
}

double nc_tune_time_us(const struct nc_tune_params *p, const struct nc_tune_table *t,
		       enum nc_algo a, enum nc_proto pr, uint64_t bytes)
{
	if (!params_ok(p) || t == NULL || (unsigned int)a >= NC_ALGO_COUNT ||
	    (unsigned int)pr >= NC_PROTO_COUNT)
		return -1.0;
	double bw = t->bw_gbs[a][pr], lat = t->lat_us[a][pr];
	if (!(bw > 0.0))
		return -1.0;
	unsigned int ls = log2i(bytes >> 6);
	if (a == NC_ALGO_TREE && ls < NC_TREE_CORR_N)
		bw *= tree_corr[pr][ls];
	uint64_t nranks = (uint64_t)p->nodes * p->gpus;
	/* the ring's plateau (sm80 and later: 1.4), AllReduce only */
	if (a == NC_ALGO_RING && pr == NC_PROTO_SIMPLE && p->nodes > 1 &&
	    p->coll == NC_COLL_ALLREDUCE &&
	    bytes / ((uint64_t)p->channels * nranks) >= 64)
		lat *= 1.4;
	return lat + (double)bytes / (1000.0 * bw);
}

int nc_tune_pick(const struct nc_tune_params *p, const struct nc_tune_table *t,
		 uint64_t bytes, struct nc_tune_choice *c)
{
	int found = 0;

	if (c == NULL)
		return -EINVAL;
	for (int a = 0; a < NC_ALGO_COUNT; a++) {
		for (int pr = 0; pr < NC_PROTO_COUNT; pr++) {
			double us = nc_tune_time_us(p, t, a, pr, bytes);
			/* strictly less: the first in NCCL's order keeps a tie */
			if (us >= 0.0 && (!found || us < c->time_us)) {
				c->algo = a;
				c->proto = pr;
				c->time_us = us;
				found = 1;
			}
		}
	}
	return found ? 0 : -EINVAL;
}

const char *nc_tune_algo_name(enum nc_algo a)
{
	return (unsigned int)a < NC_ALGO_COUNT ? algo_names[a] : "?";
}

const char *nc_tune_proto_name(enum nc_proto p)
{
	return (unsigned int)p < NC_PROTO_COUNT ? proto_names[p] : "?";
}

const char *nc_tune_release_name(enum nc_release r)
{
	return (unsigned int)r < NC_REL_COUNT ? release_names[r] : "?";
}

int nc_tune_set_release(enum nc_release *r, const char *s, char *err, size_t errlen)
{
	for (int i = 0; s != NULL && i < NC_REL_COUNT; i++)
		if (strcmp(s, release_names[i]) == 0) {
			*r = (enum nc_release)i;
			return 0;
		}
	snprintf(err, errlen,
		 "release: unknown release '%s' (valid: 2.21 for NCCL v2.21.5-1 and v2.22.3-1, "
		 "2.23 for v2.23.4-1 to v2.30.7-1)",
		 s ? s : "");
	return -EINVAL;
}

/* Valid names as "A, B, C" into buf. */
static void list_names(const char *const *names, int n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
		if (w < 0)
			return;
		used += (size_t)w;
	}
}

static int is_unmodelled(const char *tok, size_t n)
{
	for (size_t i = 0; i < sizeof(algo_unmodelled) / sizeof(algo_unmodelled[0]); i++)
		if (strlen(algo_unmodelled[i]) == n && strncasecmp(tok, algo_unmodelled[i], n) == 0)
			return 1;
	return 0;
}

/* NCCL's parseList over names[n] into on[] (see nc_tune_set_algo). */
static int parse_list(const char *var, const char *s, const char *const *names, int n,
		      bool *on, int check_unmodelled, char *err, size_t errlen)
{
	char valid[128];
	bool out[NC_PROTO_COUNT];
	bool neg = s != NULL && s[0] == '^';
	int any = 0;

	list_names(names, n, valid, sizeof(valid));
	if (s == NULL) {
		snprintf(err, errlen, "%s: no value (valid: %s)", var, valid);
		return -EINVAL;
	}
	const char *tok = s + (neg ? 1 : 0);
	for (int i = 0; i < n; i++)
		out[i] = neg;
	for (;;) {
		size_t len = strcspn(tok, ",");
		int idx = -1;
		for (int i = 0; i < n; i++)
			if (strlen(names[i]) == len && strncasecmp(tok, names[i], len) == 0)
				idx = i;
		if (idx < 0) {
			const char *why = len == 0 ? "empty name" :
					  check_unmodelled && is_unmodelled(tok, len) ?
					  "not modelled" : "unknown name";
			snprintf(err, errlen, "%s: %s '%.*s' in '%s' (valid: %s)", var, why,
				 (int)len, tok, s, valid);
			return -EINVAL;
		}
		out[idx] = !neg;
		if (tok[len] == '\0')
			break;
		tok += len + 1;
	}
	for (int i = 0; i < n; i++)
		any |= out[i];
	if (!any) {
		snprintf(err, errlen, "%s: '%s' leaves nothing enabled (valid: %s)", var, s, valid);
		return -EINVAL;
	}
	memcpy(on, out, (size_t)n * sizeof(bool));
	return 0;
}

int nc_tune_set_algo(struct nc_tune_params *p, const char *s, char *err, size_t errlen)
{
	if (p == NULL)
		return -EINVAL;
	return parse_list("NCCL_ALGO", s, algo_names, NC_ALGO_COUNT, p->algo_on, 1, err,
			  errlen);
}

int nc_tune_set_proto(struct nc_tune_params *p, const char *s, char *err, size_t errlen)
{
	if (p == NULL)
		return -EINVAL;
	return parse_list("NCCL_PROTO", s, proto_names, NC_PROTO_COUNT, p->proto_on, 0, err,
			  errlen);
}

/* What each protocol puts on the wire (NCCL 2.21.5, src/include/device.h):
 * LL, union ncclLLFifoLine: 16-byte lines of 8 data bytes (two 4-byte data
 * words, each with a 4-byte flag); LL128: NCCL_LL128_LINESIZE 128-byte
 * lines of NCCL_LL128_DATAELEMS 15 x 8 = 120 data bytes. */
#define NC_LL_LINE 16u
#define NC_LL_LINE_DATA 8u
#define NC_LL128_LINE 128u
#define NC_LL128_LINE_DATA 120u
/* Buffer of a connection per protocol (src/init.cc): DEFAULT_LL_BUFFSIZE
 * = NCCL_LL_LINES_PER_THREAD 8 x NCCL_LL_MAX_NTHREADS 512 x NCCL_STEPS 8
 * x 16 bytes; DEFAULT_LL128_BUFFSIZE = NCCL_LL128_ELEMS_PER_THREAD 120 x
 * NCCL_LL128_MAX_NTHREADS 640 x NCCL_STEPS 8 x 8 bytes. */
#define NC_STEPS 8u
#define NC_LL_BUFFSIZE (8u * 512u * NC_STEPS * NC_LL_LINE)
#define NC_LL128_BUFFSIZE (120u * 640u * NC_STEPS * 8u)

uint64_t nc_tune_wire_bytes(enum nc_proto pr, uint64_t data)
{
	switch (pr) {
	case NC_PROTO_LL:
		return (data + NC_LL_LINE_DATA - 1) / NC_LL_LINE_DATA * NC_LL_LINE;
	case NC_PROTO_LL128:
		return (data + NC_LL128_LINE_DATA - 1) / NC_LL128_LINE_DATA * NC_LL128_LINE;
	default:
		return data;
	}
}

uint32_t nc_tune_step_data_bytes(enum nc_proto pr, uint32_t simple_buffsize)
{
	/* stepSize = buffSizes[proto] / NCCL_STEPS; a chunk of LL carries half
	 * its step in data, of LL128 15/16 (src/enqueue.cc, computeColl) */
	switch (pr) {
	case NC_PROTO_LL:
		return NC_LL_BUFFSIZE / NC_STEPS / 2;
	case NC_PROTO_LL128:
		return NC_LL128_BUFFSIZE / NC_STEPS / 16 * 15;
	default:
		return simple_buffsize / NC_STEPS;
	}
}
