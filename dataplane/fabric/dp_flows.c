/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_flows.h"

#include <errno.h>

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>

#include "rl_mem.h"

int dp_flows_init(struct dp_flows *fl, uint32_t capacity, char *err, size_t errlen)
{
	char name[RTE_HASH_NAMESIZE];

	memset(fl, 0, sizeof(*fl));
	if (capacity == 0)
		return 0;
	snprintf(name, sizeof(name), "rl_flows_%p", (void *)fl); /* unique per process */
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = capacity,
		.key_len = sizeof(struct dp_flow_key),
		.hash_func = rte_jhash,
		.socket_id = SOCKET_ID_ANY,
	};
	fl->h = rte_hash_create(&hp);
	/* line-aligned: a flow's packets and bytes (written by its first hop's
	 * thread) apart from its hops (read by every hop's) */
	fl->flow = rl_zalloc_lines(capacity, sizeof(*fl->flow));
	fl->memo_mask = (uint32_t)rte_align32pow2(RTE_MIN(capacity, (uint32_t)DP_FLOWS_MEMO_MAX)) - 1;
	fl->memo = rl_zalloc_lines((size_t)fl->memo_mask + 1, sizeof(*fl->memo));
	if (fl->h == NULL || fl->flow == NULL || fl->memo == NULL) {
		snprintf(err, errlen, "flow table of %u: %s", capacity,
			 fl->h ? "out of memory" : rte_strerror(rte_errno));
		dp_flows_free(fl);
		return -ENOMEM;
	}
	fl->capacity = capacity;
	return 0;
}

/* fl's arrays freed, its rte_hash too unless leave_hash; fl left disabled. */
static void flows_free(struct dp_flows *fl, bool leave_hash)
{
	if (fl->h && !leave_hash)
		rte_hash_free(fl->h);
	free(fl->flow);
	free(fl->memo);
	memset(fl, 0, sizeof(*fl));
}

void dp_flows_free(struct dp_flows *fl)
{
	flows_free(fl, false);
}

void dp_flows_free_at_exit(struct dp_flows *fl)
{
	flows_free(fl, true);
}

void dp_flows_share(struct dp_flows *fl)
{
	fl->shared = true;
	rte_spinlock_init(&fl->lock);
}

static inline void flows_lock(struct dp_flows *fl)
{
	if (fl->shared)
		rte_spinlock_lock(&fl->lock);
}

static inline void flows_unlock(struct dp_flows *fl)
{
	if (fl->shared)
		rte_spinlock_unlock(&fl->lock);
}

static int32_t find_flow(struct dp_flows *fl, const struct rl_pkt *p);
static void record_slot(struct dp_flows *fl, int32_t slot, uint32_t len, uint32_t sw,
			uint16_t port, int first_hop, struct dp_flow_when when);

int32_t dp_flows_record(struct dp_flows *fl, const struct rl_pkt *p, uint32_t len, uint32_t sw,
			uint16_t port, int first_hop, struct dp_flow_when when)
{
	if (fl->h == NULL)
		return -1;
	int32_t slot = find_flow(fl, p);
	if (slot >= 0)
		record_slot(fl, slot, len, sw, port, first_hop, when);
	return slot;
}

void dp_flows_record_slot(struct dp_flows *fl, int32_t slot, uint32_t len, uint32_t sw,
			  uint16_t port, int first_hop, struct dp_flow_when when)
{
	record_slot(fl, slot, len, sw, port, first_hop, when); /* (locks only to append a hop) */
}

static void flow_key(struct dp_flow_key *k, const struct rl_pkt *p)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->src, p->src, 16);
	memcpy(k->dst, p->dst, 16);
	k->sport = p->sport;
	k->dport = p->dport;
	k->dqpn = p->is_roce ? p->bth.dqpn : 0;
	k->proto = p->proto;
	k->ip_version = p->ip_version;
}

static inline uint64_t key_word(const struct dp_flow_key *k, size_t off)
{
	uint64_t w;

	memcpy(&w, (const uint8_t *)k + off, sizeof(w));
	return w;
}

/* a == b, as words (memcmp() is a call; keys differ mostly in their ports) */
static bool key_eq(const struct dp_flow_key *a, const struct dp_flow_key *b)
{
	uint64_t d = 0;

	_Static_assert(sizeof(*a) == 44, "five words and a half");
	for (size_t off = 0; off < 40; off += 8)
		d |= key_word(a, off) ^ key_word(b, off);
	uint32_t x, y;
	memcpy(&x, (const uint8_t *)a + 40, 4);
	memcpy(&y, (const uint8_t *)b + 40, 4);
	return (d | (x ^ y)) == 0;
}

/*
 * A multiplicative mix of k's words (where flows differ: the addresses'
 * ends, ports, QP): its low bits pick the memo entry, its high half is
 * kept there as a signature, so a flow whose entry another holds is
 * mostly told apart without reading that flow's line.
 */
static uint64_t memo_mix(const struct dp_flow_key *k)
{
	uint64_t x = key_word(k, 0) ^ key_word(k, 8) * 31 ^ key_word(k, 16) * 17 ^ key_word(k, 24) * 7;

	x ^= (key_word(k, 32) + ((uint64_t)k->dqpn << 29)) * 0x9e3779b97f4a7c15ull;
	x *= 0xff51afd7ed558ccdull;
	return x ^ x >> 29;
}

/* k into the hash, its slot's key set when the flow is new. Returns the slot, or < 0 when full. */
static int add_key(struct dp_flows *fl, const struct dp_flow_key *k)
{
	int pos = rte_hash_add_key(fl->h, k);

	if (pos >= 0 && fl->flow[pos].pkts == 0 && fl->flow[pos].n_hops == 0)
		fl->flow[pos].key = *k;
	return pos;
}

#define MEMO_SIG 0xffffffff00000000ull /* an entry's signature half; the slot + 1 is the other */

/*
 * p's flow's slot: from the memo when its entry holds this key, else from
 * the hash, adding the flow (its key set when new; under the lock when
 * shared: the hash is not safe for writers in several threads) and
 * remembering it. Returns the slot, or -1 when full (counted). The memo's
 * entry is published with release after the flow's key is written, and
 * a slot's key never changes, so a thread that reads an entry (acquire)
 * compares against the key that slot holds for good.
 */
static int32_t find_flow(struct dp_flows *fl, const struct rl_pkt *p)
{
	struct dp_flow_key k;

	flow_key(&k, p);
	uint64_t mix = memo_mix(&k), sig = mix & MEMO_SIG;
	uint64_t *me = &fl->memo[mix & fl->memo_mask];
	uint64_t ent = __atomic_load_n(me, __ATOMIC_ACQUIRE);
	int32_t m = (int32_t)(uint32_t)ent - 1;
	if ((ent & MEMO_SIG) == sig && m >= 0 && key_eq(&fl->flow[m].key, &k))
		return m;
	flows_lock(fl);
	fl->memo_misses++;
	int pos = add_key(fl, &k);
	if (pos < 0)
		fl->untracked++;
	flows_unlock(fl);
	if (pos < 0)
		return -1;
	__atomic_store_n(me, sig | (uint32_t)(pos + 1), __ATOMIC_RELEASE);
	return pos;
}

/* The hop of switch sw among f's first n, or -1. */
static int find_hop(const struct dp_flow *f, uint8_t n, uint32_t sw)
{
	for (uint8_t i = 0; i < n; i++)
		if (f->hop_switch[i] == sw)
			return i;
	return -1;
}

/*
 * Shared by partitions' threads without a lock on the common path, a hop
 * already recorded with the same port: it only reads. Who writes what: the
 * source's leaf (the only first hop of a flow) its packets and bytes; a
 * switch (in one partition) its own hop's port; appending a hop takes the
 * lock and publishes it by n_hops (release), which readers load (acquire).
 * Path changes of switches in two partitions may race: an atomic add.
 */
static void record_slot(struct dp_flows *fl, int32_t slot, uint32_t len, uint32_t sw,
			uint16_t port, int first_hop, struct dp_flow_when when)
{
	struct dp_flow *f = &fl->flow[slot];

	if (first_hop) {
		f->pkts++;
		f->bytes += len;
	}
	int i = find_hop(f, __atomic_load_n(&f->n_hops, __ATOMIC_ACQUIRE), sw);
	if (i < 0) {
		flows_lock(fl);
		i = find_hop(f, f->n_hops, sw); /* (another partition may have appended meanwhile) */
		if (i < 0 && f->n_hops < DP_FLOW_MAX_HOPS) {
			uint8_t n = f->n_hops;
			f->hop_switch[n] = sw;
			f->hop_port[n] = port;
			f->hop_at[n] = when.at;
			f->hop_key[n] = when.key;
			__atomic_store_n(&f->n_hops, (uint8_t)(n + 1), __ATOMIC_RELEASE);
		}
		flows_unlock(fl);
		return;
	}
	if (f->hop_port[i] != port) {
		f->hop_port[i] = port;
		__atomic_fetch_add(&f->path_changes, 1, __ATOMIC_RELAXED);
	}
}

int dp_flows_export(const struct dp_flows *fl, struct dp_flow **out, uint32_t *n)
{
	uint32_t k = 0;

	*out = NULL;
	*n = 0;
	if (fl->h == NULL)
		return 0;
	struct dp_flow *a = malloc((size_t)dp_flows_count(fl) * sizeof(*a) + 1);
	if (a == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < fl->capacity; i++)
		if (fl->flow[i].n_hops || fl->flow[i].pkts)
			a[k++] = fl->flow[i];
	*out = a;
	*n = k;
	return 0;
}

static bool hop_before(const struct dp_flow *a, uint8_t i, const struct dp_flow *b, uint8_t j)
{
	return a->hop_at[i] < b->hop_at[j] || (a->hop_at[i] == b->hop_at[j] && a->hop_key[i] < b->hop_key[j]);
}

/* f's hops and in's, each list in the order first recorded, merged in that order into f. */
static void merge_hops(struct dp_flow *f, const struct dp_flow *in)
{
	struct dp_flow m = *f;
	uint8_t i = 0, j = 0, k = 0;

	while (k < DP_FLOW_MAX_HOPS && (i < f->n_hops || j < in->n_hops)) {
		bool mine = j == in->n_hops || (i < f->n_hops && hop_before(f, i, in, j));
		const struct dp_flow *src = mine ? f : in;
		uint8_t s = mine ? i++ : j++;
		m.hop_switch[k] = src->hop_switch[s];
		m.hop_port[k] = src->hop_port[s];
		m.hop_at[k] = src->hop_at[s];
		m.hop_key[k++] = src->hop_key[s];
	}
	m.n_hops = k;
	*f = m;
}

void dp_flows_merge(struct dp_flows *fl, const struct dp_flow *in, uint32_t n, uint64_t untracked)
{
	fl->untracked += untracked;
	if (fl->h == NULL)
		return;
	for (uint32_t i = 0; i < n; i++) {
		int pos = add_key(fl, &in[i].key);
		if (pos < 0) {
			fl->untracked += in[i].pkts;
			continue;
		}
		struct dp_flow *f = &fl->flow[pos];
		f->pkts += in[i].pkts;
		f->bytes += in[i].bytes;
		f->path_changes += in[i].path_changes;
		merge_hops(f, &in[i]);
	}
}

uint32_t dp_flows_count(const struct dp_flows *fl)
{
	return fl->h ? (uint32_t)rte_hash_count(fl->h) : 0;
}

static int by_bytes(const void *a, const void *b)
{
	const struct dp_flow *x = *(const struct dp_flow *const *)a, *y = *(const struct dp_flow *const *)b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	/* equal bytes: by key, not by table slot (slots depend on insertion order) */
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

uint32_t dp_flows_top(const struct dp_flows *fl, const struct dp_flow **out, uint32_t max)
{
	const struct dp_flow **all;
	uint32_t n = 0;

	if (fl->h == NULL || max == 0)
		return 0;
	all = malloc(fl->capacity * sizeof(*all));
	if (all == NULL)
		return 0;
	for (uint32_t i = 0; i < fl->capacity; i++)
		if (fl->flow[i].n_hops)
			all[n++] = &fl->flow[i];
	qsort(all, n, sizeof(*all), by_bytes);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof(*out));
	free(all);
	return n;
}

void dp_flow_name(const struct dp_flow *f, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	int af = f->key.ip_version == 6 ? AF_INET6 : AF_INET;
	const char *proto = f->key.proto == 17 ? "udp" : f->key.proto == 6 ? "tcp" : "ip";

	inet_ntop(af, f->key.src, s, sizeof(s));
	inet_ntop(af, f->key.dst, d, sizeof(d));
	if (f->key.dport == 4791 && f->key.proto == 17)
		snprintf(buf, len, "%s:%u > %s qp %" PRIu32, s, f->key.sport, d, f->key.dqpn);
	else
		snprintf(buf, len, "%s:%u > %s:%u %s", s, f->key.sport, d, f->key.dport, proto);
}

void dp_flow_path(const struct dp_flow *f, const struct topo *t, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (uint8_t i = 0; i < f->n_hops && o < len; i++) {
		const struct topo_switch *sw = &t->switches[f->hop_switch[i]];
		o += (size_t)snprintf(buf + o, len - o, "%s%s:p%u", i ? " > " : "", sw->name,
				      f->hop_port[i]);
	}
}

void dp_flows_print(const struct dp_flows *fl, const struct topo *t, uint32_t n, FILE *out)
{
	const struct dp_flow **top = malloc((n ? n : 1) * sizeof(*top));
	uint32_t k = top ? dp_flows_top(fl, top, n) : 0;

	if (k == 0) {
		free(top);
		return;
	}
	fprintf(out, "\n%-46s %10s %12s %7s  %s\n", "flow (top by bytes)", "packets", "bytes", "changes",
		"path (switch:egress port)");
	for (uint32_t i = 0; i < k; i++) {
		char name[96], path[256];
		dp_flow_name(top[i], name, sizeof(name));
		dp_flow_path(top[i], t, path, sizeof(path));
		fprintf(out, "%-46s %10" PRIu64 " %12" PRIu64 " %7" PRIu64 "  %s\n", name, top[i]->pkts,
			top[i]->bytes, top[i]->path_changes, path);
	}
	if (dp_flows_count(fl) > k || fl->untracked)
		fprintf(out, "(%u flows tracked, %" PRIu64 " packets of untracked flows)\n",
			dp_flows_count(fl), fl->untracked);
	free(top);
}
