/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for Chakra execution traces (workload/wl_chakra): the
 * input is the trace of both ranks of a 2-rank job with one process group
 * "pair" = {0, 1} (the same trace for both, so that its collectives can
 * match); what parses is then checked with wl_graph_check(). Either step may
 * refuse, but always with a message and never a crash or a leak.
 * Built with -Dfuzz=true under clang; run by scripts/fuzz.sh.
 */
#include <stdlib.h>

#include "wl_chakra.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t pair[] = { 0, 1 };
	static const struct wl_group groups[] = { { "pair", pair, 2 } };
	struct wl_graph g;
	struct wl_err err;

	if (wl_graph_init(&g, 2, &err) != 0)
		abort();
	err.msg[0] = '\0';
	if (wl_chakra_parse(&g, 0, "fuzz.0.et", data, size, groups, 1, &err) != 0 ||
	    wl_chakra_parse(&g, 1, "fuzz.1.et", data, size, groups, 1, &err) != 0 ||
	    wl_graph_check(&g, &err) != 0) {
		if (err.msg[0] == '\0')
			abort(); /* a refusal must say why */
	}
	wl_graph_free(&g);
	return 0;
}
