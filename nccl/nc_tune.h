/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nc_tune: NCCL's choice of algorithm and protocol for an AllReduce,
 * AllGather or ReduceScatter, from its tuning model (NCCL 2.21.5 by
 * default, or 2.23.4 to 2.30.7 with release NC_REL_2_23;
 * src/graph/tuning.cc: ncclTopoTuneModel and ncclTopoGetAlgoTime; read,
 * not copied). Each (algorithm, protocol) gets a
 * latency (us) and a bandwidth (GB/s); a message of B bytes is predicted to
 * take lat + B / (1000 * bw) us (Tree's bw scaled by treeCorrectionFactor
 * for B below 512 MiB; an AllReduce's Ring Simple lat x 1.4 across servers once each
 * rank's share of a channel reaches 64 bytes), and the smallest time wins,
 * first in NCCL's order (Tree before Ring, LL before LL128 before Simple)
 * on a tie.
 *
 * Modelled: Tree and Ring, protocols LL, LL128 and Simple; AllReduce, and
 * AllGather and ReduceScatter (Ring only: NCCL has no Tree for them; their
 * bytes are the total, NCCL's nBytes = count x nRanks, src/include/info.h);
 * one operation per launch (numPipeOps 1); the user's NCCL_ALGO /
 * NCCL_PROTO. Not modelled: CollNetDirect, CollNetChain (no SHARP plugin on
 * RoCE), NVLS and NVLSTree (as NCCL_NVLS_ENABLE=0), Broadcast and Reduce,
 * NCCL's fall back to the ring when NCCL_ALGO leaves an op nothing,
 * NCCL_NTHREADS / thread thresholds, tuner plugins. NCCL computes in float;
 * this in double (results differ in the last float digits at most).
 *
 * The topology enters as NCCL's search graphs would describe it: channels
 * and per-channel bandwidth of the ring and tree graphs. nc_tune_params_h100
 * fills them for rail-matched 8 x H100 servers (NVLink 4 through NVSwitch,
 * one 400G NIC per GPU on PCIe Gen5 x16) and for one such server alone (an
 * NVLink-only graph); the derivations are in nc_tune.c.
 */
#ifndef NC_TUNE_H
#define NC_TUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum nc_algo { NC_ALGO_TREE, NC_ALGO_RING, NC_ALGO_COUNT };             /* NCCL's order */
enum nc_proto { NC_PROTO_LL, NC_PROTO_LL128, NC_PROTO_SIMPLE, NC_PROTO_COUNT };
enum nc_coll { NC_COLL_ALLREDUCE, NC_COLL_ALLGATHER, NC_COLL_REDUCESCATTER, NC_COLL_COUNT };

/*
 * The NCCL release whose src/graph/tuning.cc the model follows: one value
 * per distinct formula of what nc_tune models (nc_tune.c lists each
 * difference). NC_REL_2_21 is 0, so a zeroed params keeps 2.21.
 *  NC_REL_2_21: v2.21.5-1 (and v2.22.3-1: the same formulas).
 *  NC_REL_2_23: v2.23.4-1 to v2.30.7-1 (the same formulas throughout).
 */
enum nc_release { NC_REL_2_21, NC_REL_2_23, NC_REL_COUNT };

struct nc_tune_params {
	uint32_t nodes;                          /* servers, >= 1 */
	uint32_t gpus;                           /* ranks per server, >= 1 */
	enum nc_coll coll;                       /* the collective tuned */
	uint32_t channels;                       /* runtime channels (comm->nChannels) */
	uint32_t graph_channels[NC_ALGO_COUNT];  /* search graph channels, >= 1 */
	double bw_intra[NC_ALGO_COUNT];          /* graph bwIntra, GB/s per channel */
	double bw_inter[NC_ALGO_COUNT];          /* graph bwInter, GB/s per channel */
	bool tree_pattern_tree;                  /* tree graph is NCCL_TOPO_PATTERN_TREE */
	bool cpu_amd;                            /* AMD host CPU (else Intel) */
	double latency_inter_us;                 /* graph latencyInter (net plugin) */
	bool algo_on[NC_ALGO_COUNT];             /* NCCL_ALGO (all on by default) */
	bool proto_on[NC_PROTO_COUNT];           /* NCCL_PROTO (all on by default) */
	enum nc_release release;                 /* NCCL release followed (0: 2.21) */
};

/* The tuning table: bw 0 means disabled. */
struct nc_tune_table {
	double lat_us[NC_ALGO_COUNT][NC_PROTO_COUNT];
	double bw_gbs[NC_ALGO_COUNT][NC_PROTO_COUNT];
};

struct nc_tune_choice {
	enum nc_algo algo;
	enum nc_proto proto;
	double time_us;
};

/* Fills p for an AllReduce on nodes servers of gpus H100, Intel hosts, all
 * algorithms and protocols on, release 2.21. The graph values are those
 * NCCL's search gives: nodes > 1, 8 GPUs with 8 NICs (8 channels of
 * 48 GB/s, NIC-bound); nodes 1, the NVLink-only graph of one server
 * (12 channels of 30 GB/s, 24 runtime channels, a balanced tree). */
void nc_tune_params_h100(struct nc_tune_params *p, uint32_t nodes, uint32_t gpus);

/* Builds the table; 0, or -EINVAL for a bad p (0 nodes, gpus or channels,
 * a single rank, a bandwidth <= 0, coll out of range, nothing left
 * enabled: AllGather and ReduceScatter need Ring). */
int nc_tune_model(const struct nc_tune_params *p, struct nc_tune_table *t);

/* The cap NCCL's tuning puts on the bus bandwidth of (a, pr), GB/s
 * (src/graph/tuning.cc): LL llMaxBws (one node: by GPU generation, Hopper
 * 141; across nodes by CPU vendor, Intel 39 on 2 nodes and 20.4 on more,
 * AMD 22.5 and 19); LL128 graph_channels[a] x perChMaxRingLL128Bws or
 * perChMaxTreeLL128Bws (Hopper 36.7 per channel; Tree 29 on > 2 nodes);
 * Simple 0 (no cap of its own; Tree's perChMaxTreeBws, for every
 * protocol, is left out). -1 for a bad p, a or pr. */
double nc_tune_bus_cap_gbs(const struct nc_tune_params *p, enum nc_algo a, enum nc_proto pr);

/* Predicted time of p's collective of bytes with (a, pr), in us; < 0 when
 * that pair is disabled or the arguments are bad. */
double nc_tune_time_us(const struct nc_tune_params *p, const struct nc_tune_table *t,
		       enum nc_algo a, enum nc_proto pr, uint64_t bytes);

/* NCCL's pick for bytes; 0, or -EINVAL for bad arguments / nothing enabled. */
int nc_tune_pick(const struct nc_tune_params *p, const struct nc_tune_table *t,
		 uint64_t bytes, struct nc_tune_choice *c);

/* Applies an NCCL_ALGO / NCCL_PROTO string to p->algo_on / p->proto_on as
 * NCCL's parseList does: a comma list of names (case-insensitive), all
 * others off; a leading '^' turns the listed ones off and the others on.
 * Returns 0, or -EINVAL with a message in err (the bad name and the valid
 * ones) for an unknown name, a name NCCL has but this model lacks, an
 * empty name, or a list that leaves nothing enabled; p is then unchanged. */
int nc_tune_set_algo(struct nc_tune_params *p, const char *s, char *err, size_t errlen);
int nc_tune_set_proto(struct nc_tune_params *p, const char *s, char *err, size_t errlen);

/* NCCL's base latency of (a, pr) in us under release rel: baseLat, the
 * part of the predicted time that neither the hops nor the bytes give
 * (Ring Simple 8.4; Tree Simple 0 in 2.21, 8.4 from 2.23). -1 when rel, a
 * or pr is out of range. */
double nc_tune_base_lat_us(enum nc_release rel, enum nc_algo a, enum nc_proto pr);

/* NCCL's hardware latency of one step of (a, pr) in us, as
 * ncclTopoTuneModel (src/graph/tuning.cc) adds it to baseLat once per
 * step: net false, a step inside a server, hwLat[NCCL_HW_NVLINK] (a ring
 * across servers, p->nodes > 1: at least getNetOverhead, 1 us Intel or
 * 2 us AMD, x3 for Simple); net true, a step over the network,
 * hwLat[NCCL_HW_NET] plus p->latency_inter_us (twice for Simple: the
 * flush). From release 2.23, with one GPU per server (p->gpus 1, NCCL's
 * ppn == 1) the network step takes the Tree's hwLat[NCCL_HW_NET] whatever
 * a is. 2.21: Ring Simple 3.4 and 14; Tree Simple 28 and 28. 2.23: Tree
 * Simple 4 and 14. Only p's nodes, gpus, cpu_amd, latency_inter_us and
 * release are read. -1 when p is NULL, its release or a or pr out of range. */
double nc_tune_step_lat_us(const struct nc_tune_params *p, enum nc_algo a, enum nc_proto pr,
			   bool net);

/* Bytes protocol pr puts on the wire (network and NVLink) for data bytes
 * (NCCL 2.21.5, src/include/device.h): LL 16-byte lines of 8 data bytes
 * (x 16/8), LL128 128-byte lines of 120 data bytes (x 128/120), whole lines
 * rounded up; Simple the data itself. An out-of-range pr counts as Simple. */
uint64_t nc_tune_wire_bytes(enum nc_proto pr, uint64_t data);

/* Data bytes one step of pr carries, a connection's buffer over NCCL_STEPS
 * 8 (src/init.cc, src/enqueue.cc): LL 32768 (a 64 KiB step, half flags),
 * LL128 576000 (a 614400-byte step, 15/16 data), Simple simple_buffsize / 8
 * (NCCL_BUFFSIZE, 4 MiB by default: 512 KiB). An LL or LL128 ring chunk is
 * one step; Simple's ring chunk is 4 steps. */
uint32_t nc_tune_step_data_bytes(enum nc_proto pr, uint32_t simple_buffsize);

/* NCCL's names ("Tree", "Ring"; "LL", "LL128", "Simple"), "?" out of range. */
const char *nc_tune_algo_name(enum nc_algo a);
const char *nc_tune_proto_name(enum nc_proto p);

/* A release's name for the --coll key ("2.21", "2.23"), "?" out of range. */
const char *nc_tune_release_name(enum nc_release r);

/* Reads a release name ("2.21", "2.23") into *r. 0, or -EINVAL with a
 * message in err naming the value and the valid ones with the NCCL tags
 * each covers; *r is then unchanged. */
int nc_tune_set_release(enum nc_release *r, const char *s, char *err, size_t errlen);

#endif /* NC_TUNE_H */
