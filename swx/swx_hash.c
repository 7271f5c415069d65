/* SPDX-License-Identifier: BSD-3-Clause */
#include "swx_hash.h"

#include <rte_swx_pipeline.h>

#include "rl_bytes.h"
#include "rl_hash.h"

uint32_t swx_hash_rl(const void *key, uint32_t length, uint32_t seed)
{
	const uint8_t *k = key;

	if (length < SWX_HASH_PARAMS_LEN || k[0] >= RL_HASH_ALGO_COUNT)
		return 0;
	return rl_hash((enum rl_hash_algo)k[0], rl_get_be32(k + 1) ^ seed, k + SWX_HASH_PARAMS_LEN,
		       length - SWX_HASH_PARAMS_LEN);
}

int swx_hash_register(struct rte_swx_pipeline *p)
{
	return rte_swx_pipeline_hash_func_register(p, SWX_HASH_NAME, swx_hash_rl);
}
