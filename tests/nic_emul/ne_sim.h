/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A tiny deterministic wire for NIC tests: two NICs back to back, each
 * direction a FIFO with a fixed propagation delay, a log of every frame put
 * on the wire, and a per-frame hook that may drop, duplicate or hold
 * (reorder) a frame. Time is simulated: the loop jumps to the next event.
 */
#ifndef NE_SIM_H
#define NE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ne_nic.h"
#include "rl_parse.h"

enum sim_action {
	SIM_DELIVER = 0,
	SIM_DROP,
	SIM_DUP,  /* deliver, and deliver a copy dup_gap_ns later */
	SIM_HOLD, /* keep; released right after the next frame in the same direction */
};

struct sim_rec {
	uint64_t t;       /* departure time */
	int from;         /* 0 or 1 */
	uint8_t opcode;
	uint32_t psn;
	uint8_t ackreq;
	uint8_t syndrome; /* AETH, when present */
	uint32_t msn;
	uint64_t reth_va;
	uint32_t reth_len;
	uint32_t payload_len;
	uint32_t len;
	enum sim_action action;
};

struct sim;
typedef enum sim_action (*sim_hook_fn)(struct sim *s, const struct sim_rec *r, void *arg);

struct sim_msg {
	uint64_t at;
	uint64_t seq;
	int to;
	uint32_t len;
	uint8_t *data;
};

struct sim {
	struct ne_nic *nic[2];
	uint64_t now;
	uint64_t delay_ns;
	uint64_t dup_gap_ns;
	sim_hook_fn hook;
	void *hook_arg;
	struct sim_msg *q;
	size_t nq, capq;
	uint64_t seq;
	struct sim_msg held[2];
	bool has_held[2];
	struct sim_rec *log;
	size_t nlog, caplog;
	int bad_frames; /* frames that failed rl_parse or ICRC verification */
	/* Per-frame delay jitter: a delivered frame arrives delay_ns + a
	 * pseudo-random 0..jitter_ns later (seeded by jitter_seed), so frames
	 * of one direction overtake each other. 0 (default): FIFO. */
	uint64_t jitter_ns;
	uint64_t jitter_seed;
	int rx_status_count[16]; /* index -status */
};

/* The config of NIC i (0 or 1) of sim_init: its addresses, rate, IP ids. */
void sim_config(struct ne_nic_config *c, int i, uint64_t rate_bps);

/* Two NICs: 10.0.0.1 / 02:00:00:00:00:01 and 10.0.0.2 / ...:02. */
void sim_init(struct sim *s, uint64_t rate_bps, uint64_t delay_ns);
void sim_init_cfg(struct sim *s, const struct ne_nic_config *c0, const struct ne_nic_config *c1,
		  uint64_t delay_ns);
void sim_free(struct sim *s);

/* Run until pred(s, arg) is true (checked after each event), the wire is
 * idle, or `until` is reached. Returns true when pred became true. */
bool sim_run(struct sim *s, uint64_t until, bool (*pred)(struct sim *s, void *arg), void *arg);

/* Connect one RC QP on each NIC; returns QPNs via q0/q1. */
void sim_connect(struct sim *s, uint32_t *q0, uint32_t *q1, struct ne_cq *cq0, struct ne_cq *cq1,
		 uint32_t mtu, uint32_t psn0, uint32_t psn1, uint8_t timeout, uint8_t retry,
		 uint8_t rnr_retry);

/* Take every completion waiting in cq: adds the successful ones to *ok and
 * returns how many failed. */
uint32_t sim_reap(struct ne_cq *cq, uint64_t *ok);

/* A sim_run() predicate: true once `want` successful completions were
 * reaped from the CQs in cq[] (NULL entries skipped); failed ones counted. */
struct sim_done {
	struct ne_cq *cq[2];
	uint64_t want, got;
	uint32_t failed;
};
bool sim_all_done(struct sim *s, void *arg); /* arg: struct sim_done */

/* Deterministic bytes. */
void sim_fill(uint8_t *p, size_t n, uint32_t seed);

/* Fill a record from a frame (parse must succeed). */
bool sim_decode(const uint8_t *frame, size_t len, struct sim_rec *r);

#endif
