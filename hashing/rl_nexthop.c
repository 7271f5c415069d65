/* SPDX-License-Identifier: BSD-3-Clause */
#include "rl_nexthop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int rl_ecmp_modulo(uint32_t hash, unsigned n_members)
{
	return n_members ? (int)(hash % n_members) : -EINVAL;
}

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

int rl_resilient_init(struct rl_resilient *rs, uint32_t n_buckets, unsigned n_members)
{
	memset(rs, 0, sizeof(*rs));
	if (!is_pow2(n_buckets) || n_buckets < 2 || n_buckets > 65536 || n_members == 0 ||
	    n_members > RL_NH_MAX_MEMBERS)
		return -EINVAL;
	rs->bucket = calloc(n_buckets, sizeof(*rs->bucket));
	if (rs->bucket == NULL)
		return -ENOMEM;
	rs->n_buckets = n_buckets;
	for (uint32_t b = 0; b < n_buckets; b++) {
		rs->bucket[b] = (uint16_t)(b % n_members);
		rs->load[b % n_members]++;
	}
	rs->members = n_members == 64 ? ~0ull : (1ull << n_members) - 1;
	return 0;
}

void rl_resilient_free(struct rl_resilient *rs)
{
	free(rs->bucket);
	memset(rs, 0, sizeof(*rs));
}

int rl_resilient_select(const struct rl_resilient *rs, uint32_t hash)
{
	if (rs->members == 0)
		return -ENOENT;
	return rs->bucket[hash & (rs->n_buckets - 1)];
}

/* The member of the group with the smallest (or largest) load; lowest index on ties. */
static int extreme_member(const struct rl_resilient *rs, bool largest)
{
	int best = -1;

	for (unsigned i = 0; i < RL_NH_MAX_MEMBERS; i++) {
		if (!(rs->members >> i & 1))
			continue;
		if (best < 0 || (largest ? rs->load[i] > rs->load[best] : rs->load[i] < rs->load[best]))
			best = (int)i;
	}
	return best;
}

int rl_resilient_remove(struct rl_resilient *rs, unsigned m)
{
	if (m >= RL_NH_MAX_MEMBERS)
		return -EINVAL;
	if (!(rs->members >> m & 1))
		return -ENOENT;
	rs->members &= ~(1ull << m);
	int moved = 0;

	for (uint32_t b = 0; b < rs->n_buckets && rs->members; b++) {
		if (rs->bucket[b] != m)
			continue;
		int to = extreme_member(rs, false);
		rs->bucket[b] = (uint16_t)to;
		rs->load[to]++;
		moved++;
	}
	/* An emptied group keeps its buckets pointing at m; select() returns -ENOENT then. */
	if (rs->members)
		rs->load[m] = 0;
	return moved;
}

int rl_resilient_add(struct rl_resilient *rs, unsigned m)
{
	if (m >= RL_NH_MAX_MEMBERS)
		return -EINVAL;
	if (rs->members >> m & 1)
		return -EEXIST;
	if (rs->members == 0) { /* the group was empty: m takes every bucket */
		for (uint32_t b = 0; b < rs->n_buckets; b++)
			rs->bucket[b] = (uint16_t)m;
		rs->members = 1ull << m;
		rs->load[m] = rs->n_buckets;
		return (int)rs->n_buckets;
	}
	rs->members |= 1ull << m;
	rs->load[m] = 0;
	int moved = 0;
	uint32_t scan = 0;

	for (;;) {
		int from = extreme_member(rs, true);
		if (rs->load[from] <= rs->load[m] + 1)
			break;
		/* next bucket of `from`, continuing the scan so buckets are taken evenly */
		while (rs->bucket[scan % rs->n_buckets] != from)
			scan++;
		rs->bucket[scan % rs->n_buckets] = (uint16_t)m;
		rs->load[from]--;
		rs->load[m]++;
		moved++;
	}
	return moved;
}

int rl_flowlet_init(struct rl_flowlet *fl, uint32_t n_entries, uint64_t timeout_ns, uint64_t seed)
{
	memset(fl, 0, sizeof(*fl));
	if (!is_pow2(n_entries) || n_entries > (1u << 24))
		return -EINVAL;
	fl->e = calloc(n_entries, sizeof(*fl->e));
	if (fl->e == NULL)
		return -ENOMEM;
	fl->n_entries = n_entries;
	fl->timeout_ns = timeout_ns;
	fl->rng = seed ? seed : 0x9e3779b97f4a7c15ull; /* xorshift must not start at 0 */
	return 0;
}

void rl_flowlet_free(struct rl_flowlet *fl)
{
	free(fl->e);
	memset(fl, 0, sizeof(*fl));
}

static uint64_t usable_mask(unsigned n_members, uint64_t up_mask)
{
	uint64_t all = n_members >= 64 ? ~0ull : (1ull << n_members) - 1;

	return up_mask & all;
}

int rl_flowlet_select(struct rl_flowlet *fl, uint32_t hash, uint64_t now_ns, unsigned n_members,
		      uint64_t up_mask)
{
	uint64_t usable = usable_mask(n_members, up_mask);
	struct rl_flowlet_entry *e = &fl->e[hash & (fl->n_entries - 1)];

	fl->packets++;
	if (usable == 0)
		return -ENOENT;
	if (e->valid && now_ns - e->last_ns <= fl->timeout_ns && (usable >> e->member & 1)) {
		e->last_ns = now_ns;
		return e->member;
	}
	/* A new flowlet: any usable member, chosen at random. */
	unsigned k = (unsigned)__builtin_popcountll(usable);
	unsigned r = (unsigned)(rl_xorshift64(&fl->rng) % k);
	uint64_t m = usable;

	while (r--)
		m &= m - 1;
	unsigned member = (unsigned)__builtin_ctzll(m);

	fl->flowlets++;
	if (e->valid && e->member != member)
		fl->switches++;
	e->valid = 1;
	e->member = (uint16_t)member;
	e->last_ns = now_ns;
	return (int)member;
}

int rl_pin_select(uint32_t dst_host_index, unsigned n_uplinks, uint64_t up_mask)
{
	uint64_t usable = usable_mask(n_uplinks, up_mask);

	if (usable == 0)
		return -ENOENT;
	unsigned first = dst_host_index % n_uplinks;

	for (unsigned i = 0; i < n_uplinks; i++) {
		unsigned c = (first + i) % n_uplinks;
		if (usable >> c & 1)
			return (int)c;
	}
	return -ENOENT; /* not reached: usable is non-zero */
}
