/* SPDX-License-Identifier: BSD-3-Clause */
/* Counters of the fabric's state (dp_count.h): sums and names, no DPDK. */
#include "dp_count.h"

uint64_t dp_count_chan_queued(const struct dp_chan *c)
{
	uint64_t b = 0;

	/* only the queues that hold frames: an emulated NIC asks before every
	 * frame, and the eight queues are eight lines (nonempty is exact: a
	 * queue's bit is set by its one push site and cleared when it empties) */
	for (unsigned ne = c->nonempty; ne; ne &= ne - 1)
		b += c->q[__builtin_ctz(ne)].f.bytes;
	return b;
}

void dp_count_chan_q_tx_pkts(const struct dp_chan *c, uint64_t *tx)
{
	for (int p = 0; p < DP_NUM_PRIO; p++)
		tx[p] = c->q[p].tx_pkts;
}

uint64_t dp_count_chan_tx_pkts(const struct dp_chan *c)
{
	uint64_t n = c->ctrl_tx;

	for (int p = 0; p < DP_NUM_PRIO; p++)
		n += c->q[p].tx_pkts;
	return n;
}

uint64_t dp_count_chan_tx_bytes(const struct dp_chan *c)
{
	uint64_t n = c->ctrl_tx_bytes;

	for (int p = 0; p < DP_NUM_PRIO; p++)
		n += c->q[p].tx_bytes;
	return n;
}

uint64_t dp_count_chan_drops(const struct dp_chan *c)
{
	uint64_t n = 0;

	for (int d = 0; d < DP_DROP_COUNT; d++)
		n += c->drops[d];
	return n;
}

static const char *const drop_names[DP_DROP_COUNT] = {
	[DP_DROP_PARSE] = "parse",         [DP_DROP_NOT_IP] = "not_ip",
	[DP_DROP_IPV6_CTL] = "ipv6_ctl",   [DP_DROP_TTL] = "ttl",
	[DP_DROP_NO_ROUTE] = "no_route",   [DP_DROP_MMU] = "buffer",
	[DP_DROP_LINK_DOWN] = "link_down", [DP_DROP_LOSS] = "loss",
	[DP_DROP_QUEUE] = "host_queue",    [DP_DROP_NO_MBUF] = "no_mbuf",
	[DP_DROP_SEGMENTED] = "segmented", [DP_DROP_PFC_BAD] = "pfc_bad",
	[DP_DROP_PFC_STORM] = "pfc_storm", [DP_DROP_PROG] = "p4",
};

const char *dp_count_drop_name(enum dp_drop d)
{
	return (unsigned)d < DP_DROP_COUNT ? drop_names[d] : "unknown";
}

uint64_t dp_count_switch_drops(const struct dp_switch *s)
{
	uint64_t n = 0;

	for (int d = 0; d < DP_DROP_COUNT; d++)
		n += s->drops[d];
	return n;
}
