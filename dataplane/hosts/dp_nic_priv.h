/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_nic_priv.h: what the files of hosts/ that serve the emulated NICs on
 * the fabric share (dp_nic.c, dp_rdma.c), as rxe_loc.h is rxe's: the
 * transfer state and the functions one file calls in the other; the
 * collective driver's, dp_coll_priv.h. Not for use outside hosts/.
 */
#ifndef DP_NIC_PRIV_H
#define DP_NIC_PRIV_H

#include <stdio.h>

#include "dp_coll_priv.h"
#include "dp_nic.h"

struct dp_rdma {
	char spec[160];
	struct dp_nics *ns;
	uint32_t src, dst;          /* indices into ns->h */
	uint32_t qps, size, count, depth, mtu;
	uint8_t dscp;
	enum ne_sport_policy sport;
	uint64_t start_ns;

	uint8_t *sbuf, *dbuf;
	uint32_t skey, dkey;
	struct ne_cq *scq, *dcq;
	uint32_t *sqpn, *dqpn;
	uint32_t *outstanding;
	uint32_t next_qp;
	struct dp_rdma *next_src;   /* the source NIC's next transfer */
	uint64_t posted, completed, errors;
	uint64_t first_post_ns, done_ns;
	bool started, finished, data_ok;
};

/* dp_nic.c */
void dp_nic_service(struct dp_nic_host *nh, uint64_t now);

/* dp_rdma.c */
void dp_rdma_progress(struct dp_rdma *r, uint64_t now);

#endif /* DP_NIC_PRIV_H */
