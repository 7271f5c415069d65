/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_count: the fabric's counters read from its state (dp_types.h): sums over
 * a link direction's queues and a switch's drop reasons, and the reasons'
 * names. No DPDK: the DPDK-free tests and the tables use them alike.
 */
#ifndef DP_COUNT_H
#define DP_COUNT_H

#include <stdint.h>

#include "dp_types.h"

/* The short name of a drop reason ("buffer", "ttl", ...), "unknown" out of range. */
const char *dp_count_drop_name(enum dp_drop d);

/* Frames each priority's queue of c has sent, into tx[DP_NUM_PRIO] (the PFC watchdog's input). */
void dp_count_chan_q_tx_pkts(const struct dp_chan *c, uint64_t *tx);

/* Frames / bytes c has sent: its priority queues' and its control queue's. */
uint64_t dp_count_chan_tx_pkts(const struct dp_chan *c);
uint64_t dp_count_chan_tx_bytes(const struct dp_chan *c);

/* Bytes queued now in a channel's data queues (all priorities). */
uint64_t dp_count_chan_queued(const struct dp_chan *c);

/* Sum of a link direction's drops of every reason (loss, link down, host queue, ...). */
uint64_t dp_count_chan_drops(const struct dp_chan *c);

/* Sum of a switch's drops of every reason (its MMU's drops are in DP_DROP_MMU). */
uint64_t dp_count_switch_drops(const struct dp_switch *s);

#endif /* DP_COUNT_H */
