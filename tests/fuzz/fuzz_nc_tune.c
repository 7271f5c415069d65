/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: NCCL_ALGO / NCCL_PROTO strings (from the environment,
 * so from outside) through nc_tune_set_algo / nc_tune_set_proto, then the
 * model and a pick. Input: "<algo>\n<proto>\n<8 bytes of size>"; missing
 * parts are left at the defaults.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nc_tune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[512], err[256];
	struct nc_tune_params p;
	struct nc_tune_table t;
	struct nc_tune_choice c;
	uint64_t bytes = 0;

	if (size >= sizeof(buf))
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	nc_tune_params_h100(&p, 1 + (size % 17), 8);
	p.coll = (enum nc_coll)((size / 17) % NC_COLL_COUNT);
	char *proto = strchr(buf, '\n');
	if (proto != NULL) {
		*proto++ = '\0';
		char *tail = strchr(proto, '\n');
		if (tail != NULL) {
			*tail++ = '\0';
			memcpy(&bytes, tail, strnlen(tail, sizeof(bytes)));
		}
		if (nc_tune_set_proto(&p, proto, err, sizeof(err)) != 0 && strlen(err) == 0)
			abort(); /* a refusal always says why */
	}
	if (nc_tune_set_algo(&p, buf, err, sizeof(err)) != 0 && strlen(err) == 0)
		abort();
	if (nc_tune_model(&p, &t) != 0) {
		/* the setters never leave nothing enabled; AllGather and
		 * ReduceScatter have no Tree, so NCCL_ALGO=Tree leaves them none */
		if (p.coll == NC_COLL_ALLREDUCE || p.algo_on[NC_ALGO_RING])
			abort();
		return 0;
	}
	if (nc_tune_pick(&p, &t, bytes, &c) != 0 || !(c.time_us >= 0.0))
		abort();
	return 0;
}
