/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_peer: the address message of ibv_rc_pingpong's out-of-band TCP exchange
 * (rdma-core libibverbs/examples/pingpong), as rocelab-nic sends and reads it.
 *
 * Each side sends one fixed-size message "LID:QPN:PSN:GID" formatted as
 * "%04x:%06x:%06x:%s" with the GID as 32 hex digits, NUL-padded to
 * NE_PEER_MSG_LEN bytes. What arrives comes from the network: the parser
 * takes a byte buffer that may lack the NUL and rejects values that do not
 * fit their fields (a 16-bit LID, 24-bit QPN and PSN), so a message it
 * accepts formats back to the same fields.
 */
#ifndef NE_PEER_H
#define NE_PEER_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of one message on the wire, the terminating NUL included. */
#define NE_PEER_MSG_LEN sizeof("0000:000000:000000:00000000000000000000000000000000")

/* One side's address. */
struct ne_peer_dest {
	uint32_t lid;     /* 0..0xFFFF */
	uint32_t qpn;     /* 0..0xFFFFFF */
	uint32_t psn;     /* 0..0xFFFFFF */
	uint8_t gid[16];
};

/* Write d as a message (NUL-padded to NE_PEER_MSG_LEN bytes) into msg. */
void ne_peer_format(const struct ne_peer_dest *d, char msg[NE_PEER_MSG_LEN]);

/*
 * Parse len bytes of msg (a NUL ends it early; bytes after NE_PEER_MSG_LEN - 1
 * are ignored) into *d. Returns 0, or -EINVAL when it is not
 * "LID:QPN:PSN:GID" with hex numbers in range and a 32-hex-digit GID
 * (*d is then unspecified).
 */
int ne_peer_parse(const char *msg, size_t len, struct ne_peer_dest *d);

#endif /* NE_PEER_H */
