/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fl_check: invariants a caller (a test, a fuzzer, a long run) can assert:
 * bytes are conserved and no link carries more than its capacity.
 */
#include <errno.h>
#include <stdlib.h>

#include "fl_internal.h"

static int mismatch(struct fl_mismatch *m, uint32_t link, uint64_t sent, uint64_t delivered,
		    uint64_t in_flight)
{
	if (sent == delivered + in_flight)
		return 0;
	*m = (struct fl_mismatch){ .link = link, .sent = sent, .delivered = delivered,
		.in_flight = in_flight };
	return 1;
}

int fl_check_bytes(const struct fl_fabric *fab, struct fl_mismatch *m)
{
	uint64_t *fly = calloc(fab->n_links ? fab->n_links : 1, sizeof(*fly)), all = 0;
	int rc = 0;

	if (!fly)
		return -ENOMEM;
	/* in flight, from the flows (as of their last settle, as the counters are) */
	for (uint32_t f = 0; f < fab->cap_flows; f++) {
		const struct fl_flow *fl = &fab->flows[f];

		if (fl->state == FL_FREE)
			continue;
		all += fl->sent;
		for (unsigned h = 0; h < fl->n_hops; h++)
			fly[fl_hop_of(fab, f, h)->link] += fl->sent;
	}
	rc = mismatch(m, FL_LINK_ALL, fab->sent_total, fab->delivered_total, all);
	for (uint32_t l = 0; !rc && l < fab->n_links; l++)
		rc = mismatch(m, l, fab->links[l].sent, fab->links[l].delivered, fly[l]);
	free(fly);
	return rc;
}

int fl_check_rates(const struct fl_fabric *fab, uint32_t *link)
{
	for (uint32_t l = 0; l < fab->n_links; l++) {
		const struct fl_link *lk = &fab->links[l];
		uint64_t sum = 0;

		for (uint32_t n = lk->head; n != FL_NIL; n = fab->hops[n].next)
			sum += fab->flows[n / FL_MAX_HOPS].rate;
		/* (refill_ns: the capacity left must be what the rates leave, or a local fill shares the wrong amount) */
		if (sum > lk->bps || (fab->cfg.refill_ns && lk->resid != lk->bps - sum)) {
			*link = l;
			return 1;
		}
	}
	return 0;
}
