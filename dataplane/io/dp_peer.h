/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_peer: one fabric over several rocelab-dp processes, live clock
 * (rocelab-dp --process K/N --peer DEVARGS ...).
 *
 * The cut is the one --workers N uses (topo_part.h: the topology's
 * `partition:` keys, or the default cut); process K runs partition K and
 * only its hosts' ports. The nodes of the other partitions exist in memory
 * (the same fabric everywhere: routes, link states, channel numbers) but
 * never run there.
 *
 * Each other process is reached over one DPDK port (--peer DEVARGS, given in
 * the order of the processes, skipping this one): a net_memif on one
 * machine; between servers a physical port would take its place. All the
 * fabric links cut between two processes share their port: each frame
 * carries an 802.1Q tag whose VID names the link direction, the channel
 * index + 1 (channel 2l is link l from its first end to its second, 2l + 1
 * back; VIDs 1..4094, so channels 0..4093 can cross; a cut channel beyond is
 * refused before DPDK starts).
 *
 * Sending: the channel's transmitter paces the frame as on any link and, at
 * the moment it goes onto the wire, puts it in the channel's ring (the live
 * clock's hand-over on a cut link, dp_chan.c); dp_peers_flush() tags it and
 * sends it on the peer port. Frames the port does not take wait, in order,
 * and nothing more is taken from the rings until they are gone: a full port
 * fills the rings, which holds the transmitters back (their queues, the
 * switch buffer, PFC): no loss at the cut.
 *
 * Receiving: dp_peers_poll() takes the tag off, finds the channel and puts
 * the frame on its wire arriving at this process's clock + the link's delay
 * (the processes' clocks need not agree; the serialization happened at the
 * sender, and the port's own latency comes on top, as any live work is
 * late). Dropped and counted per peer: frames without a tag (untagged),
 * with a VID that names no channel cut from that peer into this process
 * (unknown_vid), in segments that cannot be joined (segmented); frames that
 * cannot be tagged on the way out (tag_failed).
 *
 * Topology changes are per process: a link_set command must go to every
 * process (scripts/fabric.sh tel-all does), and each process's routes then
 * move traffic off the link, as in one process.
 */
#ifndef DP_PEER_H
#define DP_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "topo.h"

#define DP_PEERS_MAX 16        /* processes of one fabric at most */
#define DP_PEER_VID_MAX 4094   /* 802.1Q: 0 and 4095 are reserved */
#define DP_PEER_BURST 32

struct dp_fabric;
struct rte_mbuf;
struct rte_mempool;

/* One other process, seen from this one. */
struct dp_peer {
	const char *devargs;        /* --peer, as given */
	uint16_t port_id;
	bool started;
	uint32_t *chan, n_chan;     /* cut channels from this process to it (their rings feed the port) */
	uint32_t rr;                /* the channel to drain first next time (fairness) */
	struct rte_mbuf *held[DP_PEER_BURST]; /* tagged, not yet taken by the port */
	uint32_t held_off, n_held;
	uint64_t rx, tx;            /* frames */
	uint64_t tx_full;           /* times the port took fewer frames than offered (back-pressure, no loss) */
	uint64_t untagged, unknown_vid, segmented, tag_failed; /* drops */
};

struct dp_peers {
	uint32_t self, n;           /* this process runs partition self of n; n 0: one process */
	uint32_t n_given;           /* --peer options seen */
	struct dp_peer peer[DP_PEERS_MAX]; /* [process]; peer[self] unused */
	uint32_t *part_sw, *part_host; /* the cut */
	bool *remote_host;          /* [host] true: another process runs it */
	struct dp_fabric *f;
};

/* --process K/N: 2 <= N <= DP_PEERS_MAX, K < N. Returns 0, -EINVAL. */
int dp_peers_parse_process(struct dp_peers *p, const char *arg);

/* One --peer DEVARGS (kept by reference). Returns 0, -E2BIG beyond DP_PEERS_MAX - 1. */
int dp_peers_add(struct dp_peers *p, const char *devargs);

/* True when --process was given. */
static inline bool dp_peers_on(const struct dp_peers *p)
{
	return p->n > 0;
}

/*
 * Before DPDK starts: check the options (a --peer per other process, none
 * without --process), cut t as --workers n would, and check that every
 * channel cut between two processes has a VID (index + 1 <= 4094). Nothing
 * to do without --process and --peer. Returns 0, or -EINVAL with a message
 * (bad input), -ENOMEM.
 */
int dp_peers_plan(struct dp_peers *p, const struct topo *t, char *err, size_t errlen);

/* The partition of channel i's sending end (to false) or receiving end (to true); after dp_peers_plan(). */
uint32_t dp_peers_chan_part(const struct dp_peers *p, const struct topo *t, uint32_t i, bool to);

/* [host] true for hosts another process runs (no port here); NULL with one process. */
const bool *dp_peers_remote_hosts(const struct dp_peers *p);

/* Partition of host h (0 with one process). */
uint32_t dp_peers_part_of_host(const struct dp_peers *p, uint32_t h);

/* Append the EAL arguments that create the peer ports ("--vdev=DEVARGS", allocated). Returns 0, -E2BIG. */
int dp_peers_eal_args(const struct dp_peers *p, char **argv, int *argc, int argv_cap);

/*
 * rte_eal_init() failed with eal_errno and dp_port_eal_failed() found no
 * host's devargs to blame (rc, its result): when it is ENODEV (EAL has no
 * driver for a --vdev) and there are --peer devargs, the message names them
 * and the result is -EINVAL (bad input); otherwise rc and err are kept.
 */
int dp_peers_eal_failed(const struct dp_peers *p, int eal_errno, int rc, char *err, size_t errlen);

/*
 * After dp_parts_create() with the same n (the cut channels have rings):
 * find and start each peer port with mbufs from mp, then wait up to
 * wait_s seconds for every port's link (a memif is up once the other
 * process has connected). Returns 0, or with a message: -EINVAL when DPDK
 * made no port of a --peer's devargs (bad input), -EIO when a port does not
 * start, -ETIMEDOUT when a link stayed down, -ENOMEM.
 */
int dp_peers_start(struct dp_peers *p, struct dp_fabric *f, struct rte_mempool *mp,
		   unsigned wait_s, char *err, size_t errlen);

/* Receive from every peer port onto the cut channels' wires at now_ns. Returns frames received. */
uint32_t dp_peers_poll(struct dp_peers *p, uint64_t now_ns);

/* Send what waits (held frames first, then the cut channels' rings). Returns frames sent. */
uint32_t dp_peers_flush(struct dp_peers *p);

/* Frames dropped at the peer ports (all reasons, all peers). */
uint64_t dp_peers_drops(const struct dp_peers *p);

/* One line per peer port: process, device, rx, tx, held, port full, and each drop counter. Nothing with one process. */
void dp_peers_print(const struct dp_peers *p, FILE *out);

/* One row of dp_peers_print's table: the frames exchanged with one other process. */
struct dp_peer_row {
	uint32_t process;
	char name[TOPO_DEVNAME_MAX];
	uint64_t rx, tx, port_full, untagged, unknown_vid, segmented, tag_failed;
	uint32_t held;
};

/*
 * Peer k's row into row. Returns 0; 1 for this process's own slot (no row);
 * -1 when k is past the last process.
 */
int dp_peer_row(const struct dp_peers *p, uint32_t k, struct dp_peer_row *row);

/* Stop and close the ports, free what is held, then dp_peers_plan_free(). Safe on a struct that never started. */
void dp_peers_close(struct dp_peers *p);

/* Free what dp_peers_plan() allocated (the cut); safe to call again. */
void dp_peers_plan_free(struct dp_peers *p);

#endif /* DP_PEER_H */
