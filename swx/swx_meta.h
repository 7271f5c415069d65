/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * swx_meta: what rocelab hands a switch program besides the frame (issue 43):
 * the virtual time, the ingress port, the switch's hash settings, the size of
 * the destination's ECMP group, the flowlet timeout and a random number.
 *
 * DPDK 22.11 lets the caller set none of a program's metadata (the pipeline
 * zeroes it per packet), and its extern functions take no context, so the
 * values travel in front of the frame as a header. A program that declares
 *
 *   header rl_meta instanceof rl_meta_h
 *
 * gets SWX_META_LEN bytes before the Ethernet header and extracts them first
 * ("extract h.rl_meta"); it must not emit them. A program without that header
 * gets the frame alone. rl_meta_h must be, field by field, in this order
 * (network byte order, as every header):
 *
 *   bit<64> now_ns              the virtual time of the frame's arrival, ns
 *   bit<64> flowlet_timeout_ns  the switch's flowlet_timeout (topology)
 *   bit<32> port_in             the ingress port (as "rx m.FIELD" gives it)
 *   bit<32> seed                the switch's hash seed (its salt)
 *   bit<32> n_members           uplinks up towards the destination's leaf:
 *                               its ECMP group's size; 0 for a host of this
 *                               leaf or an unknown destination
 *   bit<32> rand                a pseudo-random number: the switch's own
 *                               xorshift64, seeded from the fabric's seed, one
 *                               draw per frame (runs repeat exactly)
 *   bit<8>  algo                the switch's hash algorithm (enum rl_hash_algo)
 *   bit<8>  eecmp               1 for the E-ECMP profile, else 0
 */
#ifndef SWX_META_H
#define SWX_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "swx_spec.h"

#define SWX_META_HEADER "rl_meta" /* the header's name in a program */
#define SWX_META_LEN 34           /* its bytes in front of the frame */

struct swx_meta {
	uint64_t now_ns;
	uint64_t flowlet_timeout_ns;
	uint32_t port_in;
	uint32_t seed;
	uint32_t n_members;
	uint32_t rand;
	uint8_t algo;
	uint8_t eecmp;
};

/*
 * Whether s declares the header rl_meta (*has), and whether its struct is the
 * layout above. Returns 0, or -EINVAL with "FILE:LINE: what differs" in err.
 */
int swx_meta_check(const struct swx_spec *s, bool *has, char *err, size_t errlen);

/* Writes m into out[0..SWX_META_LEN-1] in the layout above. */
void swx_meta_put(uint8_t out[SWX_META_LEN], const struct swx_meta *m);

#endif /* SWX_META_H */
