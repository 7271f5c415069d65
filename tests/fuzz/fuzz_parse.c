/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for hashing/: any byte string goes through the parser,
 * and whatever parses as RoCEv2 through the ICRC and every hash profile.
 * Built with -Dfuzz=true under clang; run by scripts/fuzz.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "rl_hash.h"
#include "rl_icrc.h"
#include "rl_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so AddressSanitizer catches a read one past the end. */
	uint8_t *copy = malloc(size ? size : 1);
	struct rl_pkt p;

	memcpy(copy, data, size);
	int rc = rl_parse(copy, size, &p);
	if (rc == RL_PARSE_OK) {
		if (p.is_roce) {
			(void)rl_icrc_verify(copy, &p);
			if (p.icrc_off + 4u > size || p.payload_off > p.icrc_off)
				abort(); /* offsets must stay inside the frame */
		}
		for (int pr = 0; pr < RL_PROFILE_COUNT; pr++)
			(void)rl_flow_hash((enum rl_hash_profile)pr, RL_HASH_CRC32, 1, &p);
	} else if (rc > 0 || rc < RL_PARSE_BAD_ARG) {
		abort(); /* only the documented statuses */
	}
	free(copy);
	return 0;
}
