/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_trace: the path one frame takes through the fabric, decided by each
 * switch's own forwarding decision (dp_pipeline_decide: the routes, ECMP /
 * E-ECMP hash with the switch's seeds, pinning, TE) but not queued nor
 * sent. For the flow engine (--fabric flow), which gives each QP the path
 * its first frame would take on the packet engine.
 */
#ifndef DP_TRACE_H
#define DP_TRACE_H

#include <stddef.h>
#include <stdint.h>

struct dp_fabric;

#define DP_TRACE_MAX_HOPS 16u

/*
 * Trace frame d (len bytes, room bytes of buffer; the decision rewrites TTL
 * and MACs in place) sent by host src at now_ns: the channels it crosses, in
 * order, into chans[] (index into f->chans: link l's direction dir is
 * 2l + dir), *n of them, from the host's link to the one into the
 * destination host. What a switch's MMU charged is given back at once; the
 * switches' counters count the frame as the packet engine would, and the
 * flow table (--flows) records its path as one packet of len bytes.
 * Returns 0, -EHOSTUNREACH (a switch dropped it or answered it; why names
 * the switch and the reason), -ELOOP (more than max channels).
 */
int dp_trace_path(struct dp_fabric *f, uint32_t src, uint8_t *d, uint32_t len, uint32_t room,
		  uint64_t now_ns, uint32_t *chans, unsigned max, unsigned *n, char *why, size_t cap);

#endif /* DP_TRACE_H */
