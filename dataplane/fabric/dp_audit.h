/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_audit: frame conservation, checked at exit from the counters the fabric
 * keeps anyway. Every frame is delivered, dropped with a counted reason, or
 * still held (a queue, a wire, an outbox between partitions, a ring between
 * threads). Four balances, each named by its place:
 *
 *   link A>B          frames sent = delivered + in flight + dropped after sending
 *   host H (queues)   frames H sent = sent on H's link + queued + dropped before sending
 *   switch S (in)     frames received = forwarded + replies + PFC consumed + dropped
 *   switch S (out)    forwarded + replies + PFC made = its links' sent + queued + dropped before sending
 *
 * The flow engine (--fabric flow, dp_flowrun.c) checks its bytes the same
 * way per link at each collective size's end (flow/'s fl_check_bytes): a
 * mismatch there is said at once and counted in the fabric's audit_flow_bad.
 *
 * Under MPI the ranks' counters and held frames are summed at rank 0 first
 * (dp_gather.h); with --workers every partition's are in the one fabric.
 *
 * The packet pool is checked last, at teardown, once the ports, peers,
 * generators and NICs gave back the mbufs they kept: what DPDK counts in use
 * must be what the fabric still holds (dp_audit_pool). Each process (MPI
 * rank) checks its own pool.
 */
#ifndef DP_AUDIT_H
#define DP_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dp_types.h"

/* Frames waiting in c's queues (eight priorities and control). */
uint64_t dp_audit_chan_queued(const struct dp_chan *c);

/* Frames c has sent that have not arrived: its wire, its outboxes, its ring and gathered burst (live). */
uint64_t dp_audit_chan_flight(const struct dp_chan *c);

/* A link direction the audit leaves out (its two ends counted in two processes), or not. */
typedef bool (*dp_audit_skip_fn)(void *ctx, const struct dp_chan *c);

/*
 * Check every balance of f; each one that does not hold is a line on out:
 * "rocelab-dp: AUDIT: PLACE: N frame(s) unaccounted (...)" (N negative when
 * more is accounted for than came in). skip (NULL: none) leaves links out of
 * the link balance. Returns the number of places that do not balance.
 */
unsigned dp_audit_fabric(const struct dp_fabric *f, dp_audit_skip_fn skip, void *ctx, FILE *out);

/*
 * Test only: the next frame delivered over the link direction named FROM>TO
 * (as the link table names it) vanishes without a count; under --fabric flow
 * the next flow delivered over it leaves its bytes out of the link's count
 * (flow/'s fl_test_steal), for the flow engine's byte check to name.
 * Returns 0, or -EINVAL with a message in err when no link direction has
 * that name.
 */
int dp_audit_steal(struct dp_fabric *f, const char *name, char *err, size_t errlen);

/*
 * The packet pool f->mp against the frames f holds, for the teardown: call it
 * when nothing but the fabric holds mbufs (the ports closed, the generators'
 * stashes and the NICs' spare frames given back). DPDK's in-use count
 * (rte_mempool_in_use_count: mbufs taken less mbufs freed; those in the
 * threads' caches count as free) must equal the frames held in every link
 * direction's queues and in flight (dp_audit_chan_queued and
 * dp_audit_chan_flight, this process's own) plus those on their way back to
 * a sending thread (the live clock's return rings). A mismatch is a line on
 * out: "rocelab-dp: AUDIT: packet pool{who}: N mbuf(s) unaccounted (in use X
 * = held in the fabric Y)", N negative when the fabric holds more than is in
 * use. who: "" or " (rank R)". Returns 1 on a mismatch, else 0.
 */
unsigned dp_audit_pool(const struct dp_fabric *f, const char *who, FILE *out);

/*
 * Test only: take n mbufs from f's pool and forget them, a leak the pool
 * check (dp_audit_pool) must name. s is ROCELAB_AUDIT_LEAK's value, a count
 * from 1 to 1000. Returns 0, or -EINVAL with a message in err (a bad count,
 * or a pool with fewer free mbufs).
 */
int dp_audit_leak(struct dp_fabric *f, const char *s, char *err, size_t errlen);

/* What to do about a mismatch (the environment's ROCELAB_AUDIT). */
enum dp_audit_mode {
	DP_AUDIT_WARN,  /* unset or "warn": a loud warning, the exit status as it was */
	DP_AUDIT_FATAL, /* "fatal": the warning, and exit status 1 (the tests' setting) */
	DP_AUDIT_OFF,   /* "off": no check */
};

/* The mode named by s (NULL: DP_AUDIT_WARN), or -EINVAL. */
int dp_audit_mode_parse(const char *s);

#endif /* DP_AUDIT_H */
