/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for rocelab-nic's out-of-band exchange: any bytes as the
 * peer's "LID:QPN:PSN:GID" message (ne_peer_parse). A message it accepts has
 * its fields in range and formats back to a message that parses to the same.
 * Built with -Dfuzz=true under clang; run by scripts/fuzz.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "ne_peer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *msg = malloc(size ? size : 1);
	char out[NE_PEER_MSG_LEN];
	struct ne_peer_dest d, again;

	memcpy(msg, data, size);
	if (ne_peer_parse(msg, size, &d) == 0) {
		if (d.lid > 0xFFFF || d.qpn > 0xFFFFFF || d.psn > 0xFFFFFF)
			abort();
		ne_peer_format(&d, out);
		if (out[NE_PEER_MSG_LEN - 1] != '\0' || ne_peer_parse(out, sizeof(out), &again) != 0 ||
		    memcmp(&d, &again, sizeof(d)) != 0)
			abort(); /* the round trip keeps every field */
	}
	free(msg);
	return 0;
}
