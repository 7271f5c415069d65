/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_port: DPDK ports for the hosts that attach for real.
 *
 *   veth   net_af_xdp on the root-side veth end (fallback net_af_packet with
 *          framecnt=4096: the default 512 drops silently and uncounted)
 *   vhost  net_vhost on a vhost-user socket (qemu connects as the client)
 *   pci    the NIC's own PMD, by PCI address, its MTU set to the host's
 *   dpdk   any virtual device by the user's devargs (net_pcap, net_tap, net_memif)
 *
 * dp_port_eal_args() adds the --vdev/-a arguments EAL needs before
 * rte_eal_init(); dp_port_setup() then configures and starts one port per
 * host after it. Emulated hosts have no port.
 */
#ifndef DP_PORT_H
#define DP_PORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ethdev.h>

#include "dp_fabric.h"

enum dp_veth_driver { DP_VETH_AF_PACKET, DP_VETH_AF_XDP };

#define DP_PORT_BURST 32

struct dp_ports {
	uint32_t n;
	uint32_t *host;                      /* [n] host index */
	uint16_t *port_id;                   /* [n] */
	struct rte_eth_dev_tx_buffer **txb;  /* [n] */
	uint64_t *tx_dropped;                /* [n] frames the port refused */
	int32_t *by_host;                    /* [n_hosts] index into the arrays, -1 */
	/* dp_port_by_part(): the ports of partition k are part_idx[part_at[k] .. part_at[k + 1]) */
	uint32_t *part_idx, *part_at, n_parts;
};

/*
 * Append to argv (capacity argv_cap, count *argc) the EAL arguments that
 * create the ports of t's hosts, but not of those with skip[host] (another
 * rocelab-dp process's, dp_peer.h; skip NULL: none). Strings are allocated (freed at exit).
 * Returns 0; -EINVAL with a message when a dpdk host's device name is one
 * rocelab gives another host's port; -E2BIG when argv is full.
 */
int dp_port_eal_args(const struct topo *t, enum dp_veth_driver drv, const bool *skip, char **argv,
		     int *argc, int argv_cap, char *err, size_t errlen);

/*
 * Explain why rte_eal_init() failed with eal_errno (rte_errno): when it is
 * ENODEV and t has dpdk hosts, one of their devargs names a driver DPDK does
 * not have (EAL's own message names the device): the message names those
 * hosts and devargs, and the result is -EINVAL (bad input). Otherwise the
 * message is EAL's reason and the result -EIO.
 */
int dp_port_eal_failed(const struct topo *t, int eal_errno, char *err, size_t errlen);

/*
 * After rte_eal_init(): find, configure and start each host's port (not
 * those with skip[host], as dp_port_eal_args()) with mbufs from mp, and record port ids in f->host[].port_id. Returns 0, or with
 * a message naming the host: -EINVAL when DPDK refused a dpdk host's devargs
 * (bad input: the message names the devargs), -ENODEV when another host's
 * port is missing, -EIO when a port does not start, -ENOMEM.
 */
int dp_port_setup(struct dp_ports *ps, struct dp_fabric *f, struct rte_mempool *mp,
		  enum dp_veth_driver drv, const bool *skip, char *err, size_t errlen);

/*
 * Configure one RX and one TX queue (1024 descriptors) of port pid with
 * mbufs from mp and start it. mtu 0 keeps the PMD's default; otherwise the
 * port takes that MTU (a physical NIC drops frames above its MTU, 1500 by
 * default). Returns 0, or -EIO with DPDK's reason in err.
 */
int dp_port_start(uint16_t pid, struct rte_mempool *mp, uint32_t mtu, char *err, size_t errlen);

/* Receive a burst from every port into the fabric at now_ns. Returns frames received. */
uint32_t dp_port_poll(struct dp_ports *ps, struct dp_fabric *f, uint64_t now_ns);

/* Host-rx callback for dp_fabric_opts: queue m for the host's port (ctx: struct dp_ports *). */
void dp_port_host_rx(void *ctx, struct dp_host *h, struct rte_mbuf *m, uint64_t now_ns);

/* Send what dp_port_host_rx() buffered. */
void dp_port_flush(struct dp_ports *ps);

/* dp_port_poll() and dp_port_flush() of port i alone (the thread of its host's partition). */
uint32_t dp_port_poll_one(struct dp_ports *ps, struct dp_fabric *f, uint32_t i, uint64_t now_ns);
void dp_port_flush_one(struct dp_ports *ps, uint32_t i);

/*
 * Group the ports by partition (part_of(ctx, host) of each port's host, <
 * n_parts) so that each partition's thread polls its own without looking at
 * the others' on every turn (dp_port_poll_part). Returns 0, -EINVAL (a
 * partition out of range), -ENOMEM.
 */
int dp_port_by_part(struct dp_ports *ps, uint32_t n_parts,
		    uint32_t (*part_of)(const void *ctx, uint32_t host), const void *ctx);

/* dp_port_poll() and dp_port_flush() of partition part's ports (after dp_port_by_part()). */
uint32_t dp_port_poll_part(struct dp_ports *ps, struct dp_fabric *f, uint32_t part, uint64_t now_ns);
void dp_port_flush_part(struct dp_ports *ps, uint32_t part);

/*
 * Print one line per port to out: its DPDK name, host, the PMD's counters
 * (frames received and sent, imissed: the RX ring was full, rx_nombuf,
 * ierrors, oerrors) and "refused": frames the fabric delivered to the host
 * that the port did not take (a full TX ring, a memif without a peer), which
 * the fabric's tables count as delivered. Nothing when there are no ports.
 */
void dp_port_print(const struct dp_ports *ps, const struct topo *t, FILE *out);

/* One row of dp_port_print's table: a port's ethdev counters and the frames refused. */
struct dp_port_row {
	char name[RTE_ETH_NAME_MAX_LEN];
	const char *host;
	uint64_t rx, tx, refused, imissed, rx_nombuf, ierrors, oerrors;
};

/* Port i's row into row (ethdev counters read now). Returns 0, or -1 when i is past the last port. */
int dp_port_row(const struct dp_ports *ps, const struct topo *t, uint32_t i, struct dp_port_row *row);

/* Stop and close the ports, free the arrays. */
void dp_port_close(struct dp_ports *ps);

#endif /* DP_PORT_H */
