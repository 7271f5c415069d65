/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small deterministic fabric for collective tests: n emulated NICs on one
 * output-queued switch. Each host link has a rate and a propagation delay;
 * each switch egress port has two FIFOs (strict priority: DSCP == hi_dscp
 * first), unbounded (lossless), and serializes at the port rate. Time is
 * simulated: the loop jumps to the next event (frame arrival, port free, NIC
 * event). Every frame a NIC emits is parsed, ICRC-checked and logged with
 * its departure and delivery time; a hook may drop it.
 */
#ifndef NE_FAB_H
#define NE_FAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ne_coll.h"
#include "ne_nic.h"

struct fab_rec {
	uint64_t t_tx;        /* left the sender NIC */
	uint64_t t_rx;        /* handed to the receiver NIC (0: dropped or in flight) */
	uint32_t src, dst;    /* ranks */
	uint8_t opcode, dscp;
	bool has_imm;
	bool dropped;
	uint16_t sport;
	uint32_t dqpn, psn, imm;
	uint32_t payload_len;
	uint32_t len;
	int rx_status;        /* ne_nic_rx() result */
};

struct fab;
/* Return true to drop the frame (record index i of f->log). */
typedef bool (*fab_drop_fn)(struct fab *f, size_t i, void *arg);

struct fab_ev {
	uint64_t t, seq;
	uint32_t type, id;
};

struct fab_frame {
	uint8_t *data;
	uint32_t len;
	uint32_t dst;
	uint32_t data_payload;
	size_t rec;
};

struct fab_fifo {
	uint32_t *v;
	size_t head, n, cap;
};

struct fab_port {
	struct fab_fifo q[2]; /* 0 high, 1 low */
	bool busy;
};

struct fab {
	uint32_t n;
	struct ne_nic **nic;
	struct ne_coll *coll;
	uint32_t nlanes;      /* 0: the collective polled whole; else its lanes, in turn */
	uint64_t rate_bps, delay_ns, now;
	uint8_t hi_dscp, data_dscp;
	struct fab_port *port;
	struct fab_ev *heap;
	size_t nheap, capheap;
	uint64_t seq;
	struct fab_frame *fr;
	uint32_t *free_fr;
	size_t nfr, capfr, nfree;
	struct fab_rec *log;
	size_t nlog, caplog;
	bool keep_log;        /* default true; false: records are not kept (benchmarks) */
	bool verify_icrc;     /* default true: every frame checked with hashing/rl_icrc */
	fab_drop_fn drop;
	void *drop_arg;
	int bad_frames;
	uint64_t frames, loops;
	/* polls made while ne_coll_quiet() said there was nothing to do, and
	 * those of them that did something all the same (handled completions or
	 * moved a counter): what test_poll_work checks */
	uint64_t quiet_polls, quiet_busy;
	/* data payload bytes (DSCP data_dscp) sent towards a rank, not yet delivered */
	int64_t *inflight, *max_inflight;
};

/* n NICs configured by ne_coll_nic_config(cfg, rank, rate) (addresses, QPs). */
void fab_init(struct fab *f, const struct ne_coll_config *cfg, uint64_t rate_bps, uint64_t delay_ns);
void fab_free(struct fab *f);
/* Create the collective over the fabric's NICs; NULL on failure. */
struct ne_coll *fab_coll(struct fab *f, const struct ne_coll_config *cfg);
/* Run until the collective is done (true), fails, the fabric is idle, or
 * `until` passes (false). */
bool fab_run(struct fab *f, uint64_t until);

#endif
