/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_gen.h"

#define DP_GEN_BURST 64 /* live: packets sent per wake-up at most */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_keys.h"
#include "dp_pool.h"
#include "dp_units.h"
#include "pfc_frame.h"
#include "rl_bytes.h"
#include "rl_icrc.h"
#include "rl_parse.h"

/* A whole number in [lo, hi] from v into *out. 0 or -1. */
static int gen_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t n;

	if (dp_parse_u64(v, &n) < 0 || n < lo || n > hi)
		return -1;
	*out = n;
	return 0;
}

static int set_proto(void *obj, const char *v)
{
	struct dp_gen *g = obj;

	if (strcmp(v, "udp") && strcmp(v, "roce") && strcmp(v, "pfc"))
		return -1;
	g->roce = strcmp(v, "roce") == 0;
	g->pfc = strcmp(v, "pfc") == 0;
	return 0;
}


static int set_sport(void *obj, const char *v)
{
	struct dp_gen *g = obj;
	uint64_t n;

	if (strcmp(v, "vary") == 0)
		g->sport_vary = true;
	else if (gen_u64(v, 0, 65535, &n) == 0)
		g->sport = (uint16_t)n;
	else
		return -1;
	return 0;
}


static int set_rate(void *obj, const char *v)
{
	struct dp_gen *g = obj;
	uint64_t bps;

	if (dp_parse_rate(v, &bps) < 0 || bps == 0)
		return -1;
	g->rate_bps = bps;
	return 0;
}





/* The --gen language: the one table (traffic files' generators take the same keys). */
static const struct dp_key gen_keys[] = {
	{"proto", "udp|roce|pfc", "udp", "UDP datagrams, RoCEv2 WRITEs, or PFC pause frames", .set = set_proto},
	{"flows", "1..1048576", "1", "flows, one source port each (round robin)", NULL, DP_KEY_FIELD(DP_KEY_UINT, struct dp_gen, flows, 1, 1u << 20)},
	{"sport", "0..65535 | vary", "10000 (roce: 0xc000)", "first UDP source port; vary: a new one per packet", .set = set_sport},
	{"size", "64..9216", "1000", "frame bytes (pfc: the pause frame's)", NULL, DP_KEY_FIELD(DP_KEY_UINT, struct dp_gen, size, 64, 9216)},
	{"rate", "RATE", "1G", "bit/s on the wire (100G, 25Gbps)", .set = set_rate},
	{"count", "N", "1000", "frames to send", NULL, DP_KEY_FIELD(DP_KEY_UINT, struct dp_gen, count, 0, UINT64_MAX)},
	{"start", "TIME", "0", "when the first frame leaves", NULL, DP_KEY_FIELD(DP_KEY_TIME, struct dp_gen, start_ns, 0, 0)},
	{"dscp", "0..63", "0", "DSCP of every frame", NULL, DP_KEY_FIELD(DP_KEY_UINT, struct dp_gen, dscp, 0, 63)},
	{"ttl", "1..255", "64", "IP TTL", NULL, DP_KEY_FIELD(DP_KEY_UINT, struct dp_gen, ttl, 1, 255)},
};

void dp_gen_help(FILE *out)
{
	dp_keys_help(gen_keys, sizeof(gen_keys) / sizeof(gen_keys[0]),
		     "--gen SRC>DST[:KEY=VALUE,...] (the same keys in a traffic file's generators):",
		     out);
}

struct gen_parse {
	struct dp_gen *g;
	char *err;
	size_t errlen;
	bool sport_set;
};

static int gen_kv(void *ctx, const char *k, const char *v)
{
	struct gen_parse *gp = ctx;

	gp->sport_set |= strcmp(k, "sport") == 0;
	return dp_keys_set(gen_keys, sizeof(gen_keys) / sizeof(gen_keys[0]), gp->g, "generator", k, v,
			   gp->err, gp->errlen);
}

int dp_gen_parse(struct dp_gen *g, const struct topo *t, const char *spec, char *err,
		 size_t errlen)
{
	char buf[512], *opts;
	int s, d;

	memset(g, 0, sizeof(*g));
	g->flows = 1;
	g->size = 1000;
	g->rate_bps = 1000000000ull;
	g->count = 1000;
	g->ttl = 64;
	snprintf(buf, sizeof(buf), "%s", spec);
	if (dp_parse_pair(t, buf, "generator", spec, &s, &d, &opts, err, errlen) < 0)
		return -EINVAL;
	g->src = (uint32_t)s;
	g->dst = (uint32_t)d;
	struct gen_parse gp = {.g = g, .err = err, .errlen = errlen};
	const char *bad;
	if (dp_kv_each(opts, gen_kv, &gp, &bad) < 0) {
		if (strchr(bad, '=') == NULL) /* else gen_kv said what is wrong */
			snprintf(err, errlen, "generator: '%s' is not key=value", bad);
		return -EINVAL;
	}
	if (!gp.sport_set)
		g->sport = g->roce ? 0xc000 : 10000;
	if (g->pfc)
		g->size = PFC_FRAME_LEN;
	if (!g->pfc && g->size < (g->roce ? 14u + 20 + 8 + 12 + 4 : 14u + 20 + 8)) {
		snprintf(err, errlen, "generator: size %u too small for its headers", g->size);
		return -EINVAL;
	}
	return 0;
}


/* A UDP generator's source port for flow `flow`: one port per flow from its sport up. */
static inline uint16_t udp_sport(const struct dp_gen *g, uint32_t flow)
{
	return (uint16_t)(g->sport + flow);
}

/*
 * Write one frame of flow `flow` into d (g->size bytes). A UDP frame's
 * payload is left unwritten: it stands for zeros, written only where bytes
 * are read (dp_frame_write_zeros; a line-rate generator's memset of 1 KB
 * frames was a twentieth of the ns-3 workload's time).
 */
static void write_frame(struct dp_gen *g, uint8_t *d, uint32_t flow)
{
	const struct topo *t = g->fab->topo;
	const struct topo_host *s = &t->hosts[g->src], *dh = &t->hosts[g->dst];
	uint16_t ip_len = (uint16_t)(g->size - 14);

	if (g->pfc) {
		struct pfc_frame f;
		pfc_frame_init(&f, s->mac);
		for (unsigned p = 0; p < PFC_NUM_PRIO; p++)
			if (t->qos.lossless_mask >> p & 1)
				pfc_frame_set(&f, p, PFC_QUANTA_MAX);
		pfc_frame_encode(&f, d, g->size);
		return;
	}
	memset(d, 0, g->roce ? g->size : 14u + 20 + RL_UDP_HDR_LEN);
	memcpy(d, s->gw_mac, 6);
	memcpy(d + 6, s->mac, 6);
	rl_put_be16(d + 12, RL_ETHERTYPE_IPV4);
	uint8_t *ip = d + 14;
	ip[0] = 0x45;
	ip[1] = (uint8_t)(g->dscp << 2);
	rl_put_be16(ip + 2, ip_len);
	ip[6] = 0x40; /* DF, as rxe sends */
	ip[8] = g->ttl;
	ip[9] = RL_IPPROTO_UDP;
	rl_put_be32(ip + 12, s->ipv4);
	rl_put_be32(ip + 16, dh->ipv4);
	rl_put_be16(ip + 10, rl_ipv4_hdr_csum(ip));
	uint8_t *udp = ip + 20;
	uint16_t sport = g->roce ? (g->sport_vary ? (uint16_t)(0xc000 | (flow & 0x3fff)) : g->sport)
				 : udp_sport(g, flow);
	rl_put_be16(udp, sport);
	rl_put_be16(udp + 2, g->roce ? RL_ROCEV2_PORT : 9);
	rl_put_be16(udp + 4, (uint16_t)(ip_len - 20));
	if (!g->roce)
		return;
	uint8_t *bth = udp + 8;
	bth[0] = RL_OP_WRITE_MIDDLE;
	rl_put_be16(bth + 2, 0xffff);
	rl_put_be32(bth + 4, 0x100 + flow);
	rl_put_be32(bth + 8, g->psn++ & 0xffffff);
	struct rl_pkt p;
	if (rl_parse(d, g->size, &p) == RL_PARSE_OK)
		rl_icrc_store(d, &p);
}

/*
 * Ask, for writing, for the lines of m the generator writes: the mbuf's two
 * (rte_pktmbuf_reset), its private area's first, the frame's header.
 * Without dp_pool_prefetch_frame()'s load of m->pool: these frames are
 * often in another core's cache (with the helper: 2.46 against 2.49 Mpps,
 * one worker, 4 interleaved 3 s runs of bench-parts.sh's live workload).
 */
static inline void prefetch_for_write(const struct rte_mbuf *m, size_t data_off)
{
	const uint8_t *b = (const uint8_t *)m;

	__builtin_prefetch(b, 1);
	__builtin_prefetch(b + RTE_CACHE_LINE_SIZE, 1);
	__builtin_prefetch(rte_mbuf_to_priv((struct rte_mbuf *)(uintptr_t)m), 1);
	__builtin_prefetch(b + data_off, 1);
}

/*
 * A fresh mbuf; live: from the stash, refilled DP_GEN_STASH at a time, its
 * frames' lines asked for DP_GEN_AHEAD frames ahead of their use (frames
 * are freed by the partition that delivers them, so with --workers their
 * lines are in another core's cache; asked for all 32 at once, most of the
 * requests found no free fill buffer). NULL when the pool is empty.
 */
static struct rte_mbuf *gen_mbuf(struct dp_gen *g, bool live)
{
	struct rte_mempool *mp = g->fab->mp;

	if (!live) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		dp_pool_prefetch_next(mp);
		return m;
	}
	size_t data = sizeof(struct rte_mbuf) + rte_pktmbuf_priv_size(mp) + RTE_PKTMBUF_HEADROOM;
	if (g->n_stash == 0) {
		if (rte_mempool_get_bulk(mp, (void **)g->stash, DP_GEN_STASH) != 0)
			return rte_pktmbuf_alloc(mp); /* (fewer left than a stash) */
		g->n_stash = DP_GEN_STASH;
		for (uint32_t i = DP_GEN_STASH - DP_GEN_AHEAD; i < DP_GEN_STASH; i++)
			prefetch_for_write(g->stash[i], data);
	}
	struct rte_mbuf *m = g->stash[--g->n_stash];
	if (g->n_stash >= DP_GEN_AHEAD) /* (taken from the top: the one DP_GEN_AHEAD below is next to ask for) */
		prefetch_for_write(g->stash[g->n_stash - DP_GEN_AHEAD], data);
	rte_pktmbuf_reset(m); /* (what rte_pktmbuf_alloc() does after taking one) */
	return m;
}

/*
 * build() for a UDP generator: every frame's headers are its template's
 * (write_frame() once, at dp_gen_start) but for the source port. One copy
 * of whole words instead of a field at a time: the fabric's parse reads
 * the header back at once, and a load that spans several small stores
 * waits until they reach the cache (perf, bench-parts.sh's live workload:
 * four fifths of rl_parse's samples in the sending partition on its load
 * of the IPv4 total length).
 */
static void build(struct dp_gen *g, uint8_t *d, uint32_t flow)
{
	if (!g->udp_tmpl_ok) {
		write_frame(g, d, flow);
		return;
	}
	memcpy(d, g->udp_tmpl, DP_GEN_UDP_HDRS);
	rl_put_be16(d + DP_GEN_UDP_HDRS - RL_UDP_HDR_LEN, udp_sport(g, flow));
}

void dp_gen_stop(struct dp_gen *g)
{
	if (g->n_stash)
		rte_mempool_put_bulk(g->fab->mp, (void **)g->stash, g->n_stash);
	g->n_stash = 0;
}

/*
 * Send the packet due at now. Returns when the next one is due by the pacing
 * (may be in the past), when to try again if nothing was sent (NIC queue
 * full or pool empty: a wire time later), or UINT64_MAX when the generator is
 * done; *sent says whether a packet went out.
 */
static uint64_t send_one(struct dp_gen *g, uint64_t now, bool *sent)
{
	struct dp_chan *nic = g->fab->host[g->src].tx;
	uint8_t prio = g->fab->topo->qos.dscp_prio[g->dscp];
	uint64_t gap = dp_ser_ns(g->size, g->rate_bps);

	*sent = false;
	/*
	 * Like an RNIC's send queue, the generator waits while its NIC queue is
	 * full (paused by PFC, or slower than the generator): nothing is dropped
	 * at the source, the rate falls instead.
	 */
	if (nic->q[prio].f.bytes + g->size > nic->q_limit_bytes) {
		g->blocked++;
		return now + gap;
	}
	struct rte_mbuf *m = gen_mbuf(g, nic->eng->mode == DP_CLOCK_LIVE);
	uint8_t *d = m ? (uint8_t *)rte_pktmbuf_append(m, (uint16_t)g->size) : NULL;
	if (d == NULL) {
		rte_pktmbuf_free(m);
		if (m != NULL) { /* the frame cannot fit an mbuf: stop (checked at start, so never) */
			g->count = g->sent;
			return UINT64_MAX;
		}
		/* the pool is empty: wait for packets to drain, as for a full queue */
		g->no_mbuf++;
		return now + gap;
	}
	build(g, d, g->next_flow);
	g->next_flow = (g->next_flow + 1) % g->flows;
	dp_fabric_host_send(g->fab, g->src, m, !g->roce && !g->pfc, now);
	g->sent++;
	*sent = true;
	if (g->sent >= g->count) {
		g->done_ns = now;
		return UINT64_MAX;
	}
	/* exact pacing: the n-th packet at start + n x wire time, without rounding drift */
	uint64_t bits = (uint64_t)(g->size + PFC_WIRE_OVERHEAD) * 8;
	return g->start_ns + (uint64_t)((unsigned __int128)g->sent * bits * 1000000000ull / g->rate_bps);
}

static void on_send(void *obj, uint64_t arg, uint64_t now)
{
	struct dp_gen *g = obj;
	struct dp_engine *e = g->fab->host[g->src].eng;

	(void)arg;
	/* live: every packet due by the clock's reading in one go (at most a burst) */
	for (unsigned n = 1;; n++) {
		bool sent;
		uint64_t next = send_one(g, now, &sent);
		if (next == UINT64_MAX)
			return;
		if (sent && e->mode == DP_CLOCK_LIVE && next <= e->now_ns && next < dp_engine_next_ns(e) &&
		    n < DP_GEN_BURST) {
			now = dp_engine_mono(e, next);
			continue;
		}
		if (sent && e->mode == DP_CLOCK_LIVE && next <= e->now_ns) {
			/* a full burst: the rest in the loop's next turn; else another
			 * event is due first: resume right after it, in this turn */
			if (n == DP_GEN_BURST)
				next = e->now_ns + 1;
		} else if (sent && next <= now) /* behind (it waited): no burst, one wire time on */
			next = now + dp_ser_ns(g->size, g->rate_bps);
		dp_timer_add_lp(e, g->fab->host[g->src].lp, next, on_send, g, 0);
		return;
	}
}

int dp_gen_start(struct dp_gen *g, struct dp_fabric *f)
{
	g->fab = f;
	if (g->count == 0)
		return 0;
	if (!g->roce && !g->pfc) { /* (flow 0's headers; build() puts each frame's port) */
		write_frame(g, g->udp_tmpl, 0);
		g->udp_tmpl_ok = true;
	}
	return dp_timer_add_lp(f->host[g->src].eng, f->host[g->src].lp, g->start_ns, on_send, g, 0);
}

bool dp_gen_done(const struct dp_gen *g)
{
	return g->sent >= g->count;
}

double dp_gen_achieved_bps(const struct dp_gen *g, uint64_t end_ns)
{
	uint64_t until = dp_gen_done(g) && g->done_ns < end_ns ? g->done_ns : end_ns;
	uint64_t bits = (uint64_t)(g->size + PFC_WIRE_OVERHEAD) * 8;

	if (until <= g->start_ns || g->sent == 0)
		return 0;
	/* n packets sent at pacing start + k x gap span (n - 1) gaps; count n for a
	 * fair rate when the run ended mid-way, n - 1 once the last one is out */
	uint64_t n = dp_gen_done(g) && g->sent > 1 ? g->sent - 1 : g->sent;
	return (double)n * (double)bits * 1e9 / (double)(until - g->start_ns);
}

void dp_gen_print(const struct dp_gen *g, const char *spec, uint64_t end_ns, bool first, FILE *out)
{
	double got = dp_gen_achieved_bps(g, end_ns);

	fprintf(out,
		"%sgenerator %s: sent %" PRIu64 " of %" PRIu64 ", asked %.3f Gbit/s, achieved %.3f Gbit/s "
		"(%.1f%%), waited %" PRIu64 " times for its NIC queue, %" PRIu64 " for an mbuf\n",
		first ? "\n" : "", spec, g->sent, g->count, (double)g->rate_bps / 1e9, got / 1e9,
		100.0 * got / (double)g->rate_bps, g->blocked, g->no_mbuf);
}
