/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rl_nexthop: choosing one member of an ECMP group for a packet.
 *
 *  - modulo ECMP: member = hash mod n (what most ASICs do by default);
 *  - resilient ECMP: hash -> bucket -> member, with a table of buckets, so
 *    that removing a member moves only the flows that were on it;
 *  - flowlet switching: a flow keeps its member while its packets come closer
 *    together than a timeout; after a longer gap it may take a new one;
 *  - path pinning: the uplink is a function of the destination host's index
 *    under its leaf (Meta's destination-slice scheme).
 *
 * All state lives in the caller's structures; nothing here reads a clock.
 * Members are numbered 0..n-1 by the caller (uplink ports of one switch).
 */
#ifndef RL_NEXTHOP_H
#define RL_NEXTHOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RL_NH_MAX_MEMBERS 64

/* xorshift64: the small deterministic generator behind flowlet choices (state must not be 0). */
static inline uint64_t rl_xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* Modulo ECMP: hash mod n_members; returns -EINVAL when n_members is 0. */
int rl_ecmp_modulo(uint32_t hash, unsigned n_members);

/* Resilient ECMP table. */
struct rl_resilient {
	uint32_t n_buckets;        /* power of two */
	uint64_t members;          /* bit i set: member i is in the group */
	uint16_t *bucket;          /* bucket -> member */
	uint32_t load[RL_NH_MAX_MEMBERS]; /* buckets per member */
};

/*
 * Create a table of n_buckets (a power of two, 2..65536) spread evenly over
 * n_members (1..RL_NH_MAX_MEMBERS) members. Returns 0, -EINVAL on a bad
 * argument or -ENOMEM when memory runs out (rs is then left empty and safe
 * to free).
 */
int rl_resilient_init(struct rl_resilient *rs, uint32_t n_buckets, unsigned n_members);
void rl_resilient_free(struct rl_resilient *rs);
/* Member for a hash; -ENOENT when the group is empty. */
int rl_resilient_select(const struct rl_resilient *rs, uint32_t hash);
/*
 * Take member m out: only its buckets move, spread over the remaining members
 * so their loads stay within one bucket of each other. Returns the number of
 * buckets moved, -EINVAL when m >= RL_NH_MAX_MEMBERS, or -ENOENT when m
 * is not a member.
 */
int rl_resilient_remove(struct rl_resilient *rs, unsigned m);
/*
 * Put member m (back) in: it takes buckets from the most loaded members until
 * loads are balanced; no bucket moves between two other members. Returns the
 * number of buckets moved, -EINVAL when m >= RL_NH_MAX_MEMBERS, or -EEXIST
 * when m is already a member.
 */
int rl_resilient_add(struct rl_resilient *rs, unsigned m);

/* Flowlet table: per-flow last-seen time and member, indexed by flow hash. */
struct rl_flowlet_entry {
	uint64_t last_ns;
	uint16_t member;
	uint8_t valid;
};

struct rl_flowlet {
	uint32_t n_entries; /* power of two */
	uint64_t timeout_ns;
	uint64_t rng;       /* xorshift state for the member of a new flowlet */
	struct rl_flowlet_entry *e;
	/* counters */
	uint64_t packets;
	uint64_t flowlets;  /* new flowlets started (first packet or after a gap) */
	uint64_t switches;  /* new flowlets that took a different member than before */
};

/*
 * Create a table of n_entries (a power of two, 1..2^24) with the gap timeout
 * and a seed for the choice of member of a new flowlet. Returns 0, -EINVAL
 * on a bad argument or -ENOMEM when memory runs out.
 */
int rl_flowlet_init(struct rl_flowlet *fl, uint32_t n_entries, uint64_t timeout_ns, uint64_t seed);
void rl_flowlet_free(struct rl_flowlet *fl);
/*
 * Member for a packet of flow `hash` seen at now_ns among n_members members
 * whose bit is set in up_mask (bit i: member i usable). A packet within
 * timeout_ns of its flow's previous one keeps that flow's member while it is
 * usable; otherwise a new flowlet picks a usable member at random. Returns
 * -ENOENT when no member is usable.
 */
int rl_flowlet_select(struct rl_flowlet *fl, uint32_t hash, uint64_t now_ns, unsigned n_members,
		      uint64_t up_mask);

/*
 * Path pinning by destination slice: uplink = dst_host_index mod n_uplinks,
 * and if that uplink is down (bit clear in up_mask), the next usable one.
 * Returns -ENOENT when no uplink is usable.
 */
int rl_pin_select(uint32_t dst_host_index, unsigned n_uplinks, uint64_t up_mask);

#endif /* RL_NEXTHOP_H */
