/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocelab-nic's private header: the options, the program's state and the
 * calls its three files share. rocelab-nic.c holds main, the interface, the
 * AF_PACKET socket, ARP and the event loop; rn_opts.c the command line;
 * rn_pingpong.c the NIC setup, ibv_rc_pingpong's out-of-band exchange and
 * the ping-pong test itself.
 */
#ifndef RN_NIC_H
#define RN_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ne_nic.h"

#define RN_PROG "rocelab-nic"
#define RN_RX_BUF 16384u

struct rn_opts {
	const char *ifname;
	bool have_mac, have_ip, have_gw;
	uint8_t mac[6];
	uint32_t ip, prefix_mask, gw; /* host order */
	uint16_t port;
	uint32_t size, iters, mtu, rx_depth;
	int gidx;                /* accepted for ibv_rc_pingpong compatibility */
	const char *server;      /* NULL: server role */
	double timeout_s;        /* bound on the whole run */
	double linger_s;         /* keep answering after the last completion */
	uint64_t rate_bps;       /* emulated line rate, 0 = as fast as the socket takes */
	bool check;              /* received payload must be ibv_rc_pingpong's 0x7b bytes */
	bool dcqcn_rp, dcqcn_np;
	bool verbose;
};

/* Everything the program keeps, in one place (no globals). */
struct rn_app {
	struct rn_opts o;
	int pfd;                 /* AF_PACKET socket */
	int ufd;                 /* UDP 4791 sink: keeps the kernel from sending port unreachables */
	int ifindex;
	uint32_t if_mtu;
	uint8_t mac[6];
	uint32_t ip, mask;
	uint64_t deadline;

	struct ne_nic *nic;
	struct ne_cq *cq;
	uint32_t qpn, skey, rkey;
	uint8_t *sbuf, *rbuf;

	/* ARP */
	uint32_t arp_want;
	bool arp_got;
	uint8_t arp_mac[6];

	/* host-side counts */
	uint64_t tx_frames, rx_frames, arp_replies_sent, rx_ignored, tx_errors;
	uint64_t bad_payload;

	uint8_t rx[RN_RX_BUF];
	uint8_t tx[NE_MAX_FRAME + 64];
};

/* Print "rocelab-nic: error: " and the message, with a newline, to stderr. */
__attribute__((format(printf, 1, 2))) void rn_err(const char *fmt, ...);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t rn_mono_ns(void);

/* Format ip (host order) as A.B.C.D into buf; returns buf (NULL if n is too small). */
const char *rn_ip_str(uint32_t ip, char *buf, size_t n);

/* The default gateway of ifname from /proc/net/route (host order); 0: none or unreadable. */
uint32_t rn_route_gw(const char *ifname);

/* Run the NIC for at most max_wait_ns: send what is due, sleep until a frame
 * arrives or the NIC's next event, receive. */
void rn_step(struct rn_app *a, uint64_t max_wait_ns);

/* True once the run's deadline (--timeout) has passed. */
bool rn_timed_out(const struct rn_app *a);

/* Resolve ip by ARP into mac, running the NIC meanwhile; 0, or -1 (message
 * printed) when the deadline passes without a reply. */
int rn_arp_resolve(struct rn_app *a, uint32_t ip, uint8_t mac[6]);

/* Parse the command line into o (defaults first). Prints the usage and exits 0
 * on -h/--help; returns 0, or -1 with a message printed on bad usage. */
int rn_parse_args(int argc, char **argv, struct rn_opts *o);

/* The ping-pong test on a set-up interface and socket: NIC and QP, the
 * out-of-band exchange, the iterations, the result lines. Returns the exit
 * status: 0 done, 1 failed (message printed). */
int rn_pingpong(struct rn_app *a);

#endif /* RN_NIC_H */
