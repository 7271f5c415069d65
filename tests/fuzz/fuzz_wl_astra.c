/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for ASTRA-sim text workloads (workload/wl_astra): the
 * input is the file. Accepted: every layer's comm types and parallelism in
 * range, as many layers as announced; a DATA workload's job graph (4 ranks,
 * 2 passes) either refused with a message or accepted by wl_graph_check().
 * Refused: a message, w left empty.
 * Built with -Dfuzz=true under clang; run by scripts/fuzz.sh.
 */
#include <stdlib.h>

#include "wl_astra.h"
#include "wl_graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wl_astra w;
	struct wl_err err;

	err.msg[0] = '\0';
	if (wl_astra_parse(&w, "fuzz.txt", (const char *)data, size, &err) != 0) {
		if (err.msg[0] == '\0' || w.layers != NULL || w.nlayers != 0)
			abort();
		return 0;
	}
	if (w.nlayers == 0 || (unsigned)w.par >= WL_PAR_COUNT)
		abort();
	for (uint32_t i = 0; i < w.nlayers; i++) {
		const struct wl_astra_layer *l = &w.layers[i];

		if ((unsigned)l->fwd.comm >= WL_AC_COUNT || (unsigned)l->ig.comm >= WL_AC_COUNT ||
		    (unsigned)l->wg.comm >= WL_AC_COUNT || (unsigned)l->par >= WL_PAR_COUNT)
			abort();
	}
	if (w.par == WL_PAR_DATA) {
		struct wl_graph g;

		err.msg[0] = '\0';
		if (wl_astra_to_graph(&w, "fuzz.txt", 4, 2, 1000, &g, &err) != 0) {
			if (err.msg[0] == '\0' || g.ranks != NULL)
				abort();
		} else if (wl_graph_check(&g, &err) != 0) {
			abort(); /* the conversion built a graph its own check refuses */
		}
		wl_graph_free(&g);
	}
	wl_astra_free(&w);
	return 0;
}
