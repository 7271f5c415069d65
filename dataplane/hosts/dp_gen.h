/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_gen: an in-process packet source, so a topology can be driven without
 * real hosts (the virtual clock's traffic, and benchmarks).
 *
 * A spec: SRC>DST[:key=value,...] with host names, e.g.
 *   h0>h5:proto=roce,flows=16,sport=0xc0a5,size=1078,rate=10G,count=10000
 * keys (defaults in brackets):
 *   proto  udp | roce | pfc [udp]: roce sends RDMA WRITE_MIDDLE packets (BTH,
 *          ICRC); pfc sends 802.1Qbb XOFF frames (quanta 0xFFFF for every
 *          lossless priority) to the host's leaf: a PFC storm (size is 60)
 *   flows  number of flows, packets go round-robin over them [1]; a UDP flow
 *          differs by source port, a RoCE flow by destination QP (0x100 + i)
 *   sport  UDP source port [udp: 10000 + flow; roce: 0xc000]; with
 *          sport=vary a RoCE flow also takes source port 0xc000 + flow
 *   size   frame bytes, 64..9216 [1000]
 *   rate   bit/s with k/M/G suffix [1G]
 *   count  packets in all [1000]
 *   start  first packet time with ns/us/ms/s suffix [0]
 *   dscp   DSCP of the packets [0]
 *   ttl    IP TTL of the packets, 1..255 [64] (each switch takes one off;
 *          a switch drops what arrives with TTL 1 or 0, counted as 'ttl')
 */
#ifndef DP_GEN_H
#define DP_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dp_fabric.h"

#define DP_GEN_STASH 32
#define DP_GEN_UDP_HDRS (14 + 20 + 8) /* Ethernet, IPv4, UDP */
#define DP_GEN_AHEAD 8 /* stash frames whose lines are asked for ahead of use */

struct dp_gen {
	struct dp_fabric *fab;
	uint32_t src, dst;       /* host indices */
	bool roce;
	bool pfc;                /* XOFF frames (max quanta, every lossless priority) */
	uint32_t flows;
	uint16_t sport;
	bool sport_vary;
	uint32_t size;
	uint64_t rate_bps;
	uint64_t count;
	uint64_t start_ns;
	uint8_t dscp;
	uint8_t ttl;

	uint64_t sent;
	uint64_t blocked;        /* times it waited for room in its NIC queue */
	uint64_t no_mbuf;        /* times it waited for a free mbuf */
	uint64_t done_ns;        /* when the last packet was sent */
	uint32_t next_flow;
	uint32_t psn;
	/* live: mbufs taken from the pool ahead, their lines asked for (prefetch)
	 * at once, not one cache miss after another as each frame is built */
	struct rte_mbuf *stash[DP_GEN_STASH];
	uint32_t n_stash;
	/* UDP: the Ethernet, IPv4 and UDP headers every frame starts with (build()) */
	uint8_t udp_tmpl[DP_GEN_UDP_HDRS];
	bool udp_tmpl_ok;
} __rte_cache_aligned; /* (written per frame: generators of two partitions never share a line) */

/* Print the --gen keys: what each takes, its default, what it means (--gen help). */
void dp_gen_help(FILE *out);

/*
 * Parse spec against topology t into g. Returns 0, or -EINVAL with a message
 * naming the bad part.
 */
int dp_gen_parse(struct dp_gen *g, const struct topo *t, const char *spec, char *err,
		 size_t errlen);

/* Give back the mbufs the generator holds ahead (before the pool is freed). */
void dp_gen_stop(struct dp_gen *g);

/* Arm the generator's first packet on the fabric's engine. Returns 0, -ENOMEM/-ENOSPC when no timer can be added. */
int dp_gen_start(struct dp_gen *g, struct dp_fabric *f);

/* True when every packet has been handed to the NIC. */
bool dp_gen_done(const struct dp_gen *g);

/*
 * The rate the generator achieved up to end_ns (bit/s on the wire, like
 * rate=: frame, preamble and gap): what it sent over the time from its start
 * to its last packet, or to end_ns while it was still sending. 0 before its
 * start. On the live clock this is against real time, so a fabric that falls
 * behind shows here.
 */
double dp_gen_achieved_bps(const struct dp_gen *g, uint64_t end_ns);

/*
 * One line: "generator SPEC: sent N of M, asked R, achieved A (P%), waited ..."
 * (a blank line before when first). Achieved as dp_gen_achieved_bps().
 */
void dp_gen_print(const struct dp_gen *g, const char *spec, uint64_t end_ns, bool first, FILE *out);

#endif /* DP_GEN_H */
