/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_nic: emulated RDMA NICs (nic_emul/) as hosts of the fabric.
 *
 * Every host with `attach: emulated` gets an ne_nic with the host's MAC and
 * address, paced at its link's rate. Frames the fabric delivers to the host
 * go to ne_nic_rx(); frames the NIC has ready go into the host's NIC queue
 * with dp_fabric_host_send(), but only while that queue has room: a PFC
 * pause of the host link stops the NIC, as it stops a real RNIC, instead of
 * overflowing the queue. An engine timer wakes each NIC at its next event.
 *
 * RDMA traffic between emulated hosts (--rdma): SRC>DST[:key=value,...]
 *   qps    QPs between the two NICs [1]; messages go round-robin over them
 *   size   bytes per RDMA WRITE [65536]
 *   count  messages [64]
 *   depth  outstanding messages per QP [4]
 *   mtu    path MTU 256..4096 [4096]
 *   dscp   DSCP of the QPs [26: priority 3, lossless by default]
 *   sport  UDP source ports: rxe (Linux's fold of the QPN pair), fixed, hash [rxe]
 *   start  time of the first post [0]
 * The destination buffer is checked against the source after the last
 * completion; the result line gives time, goodput and the NICs' retransmit
 * and NAK counters.
 */
#ifndef DP_NIC_H
#define DP_NIC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dp_fabric.h"
#include "ne_nic.h"

struct dp_rdma;

struct dp_nic_host {
	struct dp_nics *owner;
	uint32_t host;
	struct ne_nic *nic;
	uint64_t armed_at;          /* pending wake-up; 0: none */
	uint64_t tx_frames, rx_frames;
	uint64_t rx_rejected;       /* frames ne_nic_rx() refused (counted by reason in the NIC) */
	uint64_t tx_waits;          /* times it waited for room in the host queue */
	uint64_t no_mbuf;
};

struct dp_nics {
	struct dp_fabric *fab;
	uint32_t n;
	struct dp_nic_host *h;      /* [n] */
	int32_t *by_host;           /* [n_hosts]: index into h, or -1 */
	struct dp_rdma **rdma;      /* [n_rdma] */
	uint32_t n_rdma;
};

/*
 * Create a NIC for every emulated host of f's topology. Returns 0, or -1 with
 * a message. A topology without emulated hosts gives n = 0.
 */
int dp_nics_create(struct dp_nics *ns, struct dp_fabric *f, char *err, size_t errlen);
void dp_nics_destroy(struct dp_nics *ns);

/* True when host h is an emulated NIC. */
static inline bool dp_nics_owns(const struct dp_nics *ns, uint32_t host)
{
	return ns->by_host && ns->by_host[host] >= 0;
}

/* A frame the fabric delivered to emulated host h (consumes m). */
void dp_nics_rx(struct dp_nics *ns, struct dp_host *h, struct rte_mbuf *m, uint64_t now_ns);

/* Parse an --rdma SPEC and set it up (QPs, memory, first posts at its start). Returns 0 or -1. */
int dp_nics_add_rdma(struct dp_nics *ns, const char *spec, uint64_t start_offset_ns, char *err,
		     size_t errlen);

/* True while some --rdma transfer has messages not yet completed (and no error). */
bool dp_nics_active(const struct dp_nics *ns);

/* Print the result of every --rdma transfer and each NIC's counters. */
void dp_nics_report(const struct dp_nics *ns, FILE *out);

/* Number of --rdma transfers whose destination data did not match, or that failed. */
unsigned dp_nics_failures(const struct dp_nics *ns);

#endif /* DP_NIC_H */
