/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_astra: ASTRA-sim's text workload format (ASTRA-sim 1.0:
 * inputs/workload/ text files, read by Workload::initialize_workload).
 *
 *   line 1   the parallelism: DATA, MODEL, HYBRID_DATA_MODEL,
 *            HYBRID_MODEL_DATA, HYBRID_TRANSFORMER, HYBRID_DLRM N,
 *            HYBRID_DLRM_ENHANCED N (N: the last bottom-MLP layer),
 *            HYBRID_CUSTOMIZED, MICRO; optionally followed by
 *            "model_parallel_NPU_group: G" (the model-parallel group size)
 *   line 2   the number of layers
 *   then     one line per layer, 12 fields separated by blanks:
 *            name, reserved (-1), forward compute, forward comm type,
 *            forward comm size, input-gradient compute, its comm type and
 *            size, weight-gradient compute, its comm type and size, the
 *            update delay after the weight collective; HYBRID_CUSTOMIZED adds
 *            a 13th, the layer's own parallelism (DATA, MODEL,
 *            HYBRID_DATA_MODEL, HYBRID_MODEL_DATA).
 * Compute times and the delay are in cycles of ASTRA-sim's clock, sizes in
 * bytes (inputs/workload/ASTRA-sim-1.0/README.md). Comm types: NONE,
 * ALLREDUCE, ALLGATHER, ALLTOALL, REDUCESCATTER, ALLREDUCEALLTOALL.
 * Blank lines and lines starting with '#' are skipped.
 */
#ifndef WL_ASTRA_H
#define WL_ASTRA_H

#include <stddef.h>
#include <stdint.h>

#include "wl_err.h"

enum wl_astra_par {
	WL_PAR_DATA,
	WL_PAR_MODEL,
	WL_PAR_HYBRID_DATA_MODEL,
	WL_PAR_HYBRID_MODEL_DATA,
	WL_PAR_HYBRID_TRANSFORMER,
	WL_PAR_HYBRID_DLRM,
	WL_PAR_HYBRID_DLRM_ENHANCED,
	WL_PAR_HYBRID_CUSTOMIZED,
	WL_PAR_MICRO,
	WL_PAR_COUNT,
};

enum wl_astra_comm {
	WL_AC_NONE,
	WL_AC_ALLREDUCE,
	WL_AC_ALLGATHER,
	WL_AC_ALLTOALL,
	WL_AC_REDUCESCATTER,
	WL_AC_ALLREDUCE_ALLTOALL,
	WL_AC_COUNT,
};

/* One of a layer's three passes: compute, then its collective. */
struct wl_astra_pass {
	uint64_t compute_cycles;
	enum wl_astra_comm comm;
	uint64_t comm_bytes;
};

#define WL_ASTRA_NAME_LEN 64

struct wl_astra_layer {
	char name[WL_ASTRA_NAME_LEN];
	int64_t reserved;
	struct wl_astra_pass fwd, ig, wg;  /* forward, input gradient, weight gradient */
	uint64_t update_cycles;
	enum wl_astra_par par;             /* HYBRID_CUSTOMIZED: the layer's; else the file's */
	unsigned line;                     /* where it is in the file */
};

struct wl_astra {
	enum wl_astra_par par;
	uint32_t mp_group;                 /* model_parallel_NPU_group, 0 when not given */
	uint32_t dlrm_last_bottom;         /* HYBRID_DLRM*: the last bottom layer */
	uint32_t nlayers;
	struct wl_astra_layer *layers;
};

/* Names as the format spells them; "?" when out of range. */
const char *wl_astra_par_name(enum wl_astra_par par);
const char *wl_astra_comm_name(enum wl_astra_comm comm);

/* Parses the workload text (buf, len bytes; no NUL needed) read from file
 * (for messages) into w. Returns 0, or -1 with err "FILE:LINE: what is wrong"
 * and w empty. */
int wl_astra_parse(struct wl_astra *w, const char *file, const char *buf,
		   size_t len, struct wl_err *err);

/* Reads and parses file. Returns 0, or -1 with err set. */
int wl_astra_load(struct wl_astra *w, const char *file, struct wl_err *err);

struct wl_graph;

/* The job graph of passes training iterations of w on nranks ranks, into g
 * (initialised here). Node ids count from 1 in program order, the same on
 * every rank; cycles become ns at cycle_ps picoseconds per cycle (the
 * caller's clock: the file does not say). file names the source in messages.
 *
 * DATA, as ASTRA-sim 1.0's Workload::iterate_data_parallel: per pass, the
 * forward computes from the first layer to the last (a layer's forward also
 * waits for its weight-gradient collective of the pass before), then from the
 * last layer back the weight-gradient compute, its collective over all ranks
 * (not waited for) and the input-gradient compute (none for the first
 * layer). DATA ignores the forward and input-gradient communication.
 *
 * MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, as
 * Workload::iterate_model_parallel and iterate_hybrid_parallel_data_model
 * and _model_data (the same loop): forward, per layer, the compute (after
 * the layer's weight-gradient collective of the pass before), then its
 * forward collective, waited for; then from the last layer back the
 * input-gradient compute and its collective (none for the first layer), the
 * weight-gradient compute and its collective (neither collective waited
 * for), the next layer's input gradient waiting for this layer's
 * input-gradient collective. HYBRID_TRANSFORMER, as
 * iterate_hybrid_parallel_Transformer: the same, but each layer's
 * input-gradient collective, the first layer's included, is waited for
 * before its weight-gradient compute. The groups,
 * as Workload::decode_involved_dimensions: MODEL's forward and input
 * gradient over every rank, no weight-gradient collective; the hybrids'
 * forward and input gradient over the model group, the weight gradient over
 * the data group. ASTRA-sim takes a group's size from its logical topology's
 * dimensions; here from "model_parallel_NPU_group: G" on line 1 (required,
 * G dividing nranks): model groups are blocks of G consecutive ranks, data
 * groups the ranks G apart (HYBRID_MODEL_DATA, data dimension first: data
 * groups are blocks of nranks / G, model groups the ranks nranks / G apart).
 * A collective over one rank is left out.
 *
 * Returns 0, or -1 with err set ("FILE:1: ..." for another parallelism or a
 * missing or non-dividing group, "FILE:LINE: ..." for ALLREDUCEALLTOALL,
 * two collectives over groups the file does not give) and g freed. */
int wl_astra_to_graph(const struct wl_astra *w, const char *file, uint32_t nranks,
		      uint32_t passes, uint64_t cycle_ps, struct wl_graph *g,
		      struct wl_err *err);

/* Frees what w holds. */
void wl_astra_free(struct wl_astra *w);

#endif
