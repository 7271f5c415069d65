/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_switch: a switch's ingress pipeline on mbufs (the DPDK side of
 * dp_pipeline.h) and the PFC frames its buffer owes upstream.
 */
#ifndef DP_SWITCH_H
#define DP_SWITCH_H

#include <stdint.h>

#include "dp_fabric.h"

/* Frame m arrived on s's in_port at now_ns: forward, answer, consume or drop it (s owns m). */
void dp_switch_rx(struct dp_switch *s, uint16_t in_port, struct rte_mbuf *m, uint64_t now_ns);

/* Send the PFC frame s's buffer owes on port (if any), and arm its next refresh. */
void dp_switch_send_pfc(struct dp_switch *s, uint16_t port, uint64_t now_ns);

#endif /* DP_SWITCH_H */
