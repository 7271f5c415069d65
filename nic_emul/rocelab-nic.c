/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocelab-nic: one emulated RoCEv2 NIC (nic_emul) over a Linux network
 * interface, driven by the real clock (CLOCK_MONOTONIC).
 *
 * Frames go in and out through an AF_PACKET raw socket bound to the
 * interface (no DPDK). The NIC owns an IPv4 address and a MAC (by default
 * the interface's), answers ARP for its address and resolves its peer (or
 * the gateway) by ARP. The out-of-band exchange of the `pingpong` mode is
 * the one of rdma-core's ibv_rc_pingpong: a TCP connection (port 18515),
 * client and server each send "LID:QPN:PSN:GID" as "%04x:%06x:%06x:%s"
 * (GID as 32 hex digits in wire order) in a 52-byte NUL-terminated
 * message, the client ends with "done". The TCP connection uses the
 * kernel's stack and address, so the interface needs an IPv4 address.
 *
 * The event loop: hand every due frame from ne_nic_poll_tx() to the socket,
 * then sleep in ppoll() until a frame arrives or ne_nic_next_event_ns().
 *
 * This file: main, the interface, the socket, ARP and the event loop; the
 * command line is in rn_opts.c, the ping-pong test in rn_pingpong.c.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rl_bytes.h"
#include "ne_nic.h"
#include "rn_nic.h"

void rn_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, RN_PROG ": error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

uint64_t rn_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *rn_ip_str(uint32_t ip, char *buf, size_t n)
{
	struct in_addr a = {.s_addr = htonl(ip)};

	return inet_ntop(AF_INET, &a, buf, (socklen_t)n);
}

/* ------------------------------------------------------------------ */
/* Interface */

static int if_setup(struct rn_app *a)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	if (s < 0) {
		rn_err("socket: %s", strerror(errno));
		return -1;
	}
	a->ifindex = (int)if_nametoindex(a->o.ifname);
	if (!a->ifindex) {
		rn_err("no interface %s in this network namespace", a->o.ifname);
		close(s);
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", a->o.ifname);
	if (ioctl(s, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(a->mac, ifr.ifr_hwaddr.sa_data, 6);
	a->if_mtu = 1500;
	if (ioctl(s, SIOCGIFMTU, &ifr) == 0)
		a->if_mtu = (uint32_t)ifr.ifr_mtu;
	if (ioctl(s, SIOCGIFADDR, &ifr) == 0)
		a->ip = ntohl(((struct sockaddr_in *)(void *)&ifr.ifr_addr)->sin_addr.s_addr);
	if (ioctl(s, SIOCGIFNETMASK, &ifr) == 0)
		a->mask = ntohl(((struct sockaddr_in *)(void *)&ifr.ifr_netmask)->sin_addr.s_addr);
	close(s);
	if (a->o.have_mac)
		memcpy(a->mac, a->o.mac, 6);
	if (a->o.have_ip) {
		a->ip = a->o.ip;
		a->mask = a->o.prefix_mask;
	}
	if (!a->ip) {
		rn_err("%s has no IPv4 address; give --ip A.B.C.D/P", a->o.ifname);
		return -1;
	}
	return 0;
}

/* The default gateway of the interface from /proc/net/route (0: none). */
uint32_t rn_route_gw(const char *ifname)
{
	FILE *f = fopen("/proc/net/route", "r");
	char line[256], name[64];
	unsigned int dst, gw, flags;
	uint32_t found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %x %x %x", name, &dst, &gw, &flags) == 4 &&
		    strcmp(name, ifname) == 0 && dst == 0 && gw != 0) {
			found = ntohl(gw); /* the file prints the address as a native integer */
			break;
		}
	fclose(f);
	return found;
}

static int sock_setup(struct rn_app *a)
{
	struct sockaddr_ll sll;
	struct sockaddr_in sin;
	int one = 1;

	a->pfd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
	if (a->pfd < 0) {
		rn_err("AF_PACKET socket: %s (needs CAP_NET_RAW)", strerror(errno));
		return -1;
	}
#ifdef PACKET_IGNORE_OUTGOING
	setsockopt(a->pfd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
#endif
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = a->ifindex;
	if (bind(a->pfd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		rn_err("bind AF_PACKET to %s: %s", a->o.ifname, strerror(errno));
		return -1;
	}
	/* Frames to UDP 4791 also reach the kernel (same address): a bound socket
	 * that we drain makes it drop them instead of answering port unreachable. */
	a->ufd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	if (a->ufd >= 0) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons(4791);
		setsockopt(a->ufd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(a->ufd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
			if (a->o.verbose)
				fprintf(stderr, RN_PROG ": note: UDP 4791 not bound (%s)\n", strerror(errno));
			close(a->ufd);
			a->ufd = -1;
		}
	}
	return 0;
}

static void send_frame(struct rn_app *a, const uint8_t *f, size_t len)
{
	if (send(a->pfd, f, len, 0) == (ssize_t)len)
		a->tx_frames++;
	else
		a->tx_errors++;
}

/* ------------------------------------------------------------------ */
/* ARP */

static void arp_send(struct rn_app *a, uint16_t oper, const uint8_t *dmac, uint32_t tip)
{
	uint8_t f[60];
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t zero[6] = {0};

	memset(f, 0, sizeof(f));
	memcpy(f, dmac ? dmac : bcast, 6);
	memcpy(f + 6, a->mac, 6);
	rl_put_be16(f + 12, ETHERTYPE_ARP);
	rl_put_be16(f + 14, 1);       /* Ethernet */
	rl_put_be16(f + 16, 0x0800);  /* IPv4 */
	f[18] = 6;
	f[19] = 4;
	rl_put_be16(f + 20, oper);
	memcpy(f + 22, a->mac, 6);
	rl_put_be32(f + 28, a->ip);
	memcpy(f + 32, dmac ? dmac : zero, 6);
	rl_put_be32(f + 38, tip);
	send_frame(a, f, sizeof(f));
}

static void arp_rx(struct rn_app *a, const uint8_t *f, size_t len)
{
	uint16_t oper;
	uint32_t sip, tip;

	if (len < 42 || f[14] != 0 || f[15] != 1 || f[16] != 8 || f[17] != 0 || f[18] != 6 ||
	    f[19] != 4)
		return;
	oper = (uint16_t)(f[20] << 8 | f[21]);
	sip = rl_get_be32(f + 28);
	tip = rl_get_be32(f + 38);
	if (a->arp_want && sip == a->arp_want && (oper == 1 || oper == 2)) {
		memcpy(a->arp_mac, f + 22, 6);
		a->arp_got = true;
	}
	if (oper == 1 && tip == a->ip && sip != a->ip) {
		arp_send(a, 2, f + 22, sip);
		a->arp_replies_sent++;
	}
}

/* ------------------------------------------------------------------ */
/* The event loop */

static void rx_drain(struct rn_app *a)
{
	for (;;) {
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(a->pfd, a->rx, sizeof(a->rx), MSG_TRUNC, (struct sockaddr *)&from,
				     &fl);
		uint16_t et;

		if (n < 0)
			break;
		if (from.sll_pkttype == PACKET_OUTGOING)
			continue;
		if ((size_t)n > sizeof(a->rx) || n < 14) {
			a->rx_ignored++;
			continue;
		}
		a->rx_frames++;
		et = (uint16_t)(a->rx[12] << 8 | a->rx[13]);
		if (et == ETHERTYPE_ARP)
			arp_rx(a, a->rx, (size_t)n);
		else if (a->nic && et == ETHERTYPE_IP)
			ne_nic_rx(a->nic, a->rx, (size_t)n, rn_mono_ns()); /* the NIC counts its drops */
		else
			a->rx_ignored++;
	}
	if (a->ufd >= 0)
		while (recv(a->ufd, a->rx, sizeof(a->rx), 0) >= 0)
			;
}

static void tx_all(struct rn_app *a)
{
	size_t len;

	if (!a->nic)
		return;
	while (ne_nic_poll_tx(a->nic, rn_mono_ns(), a->tx, sizeof(a->tx), &len) == 1)
		send_frame(a, a->tx, len);
}

/* Run the NIC for at most max_wait_ns: send what is due, sleep until a frame
 * arrives or the NIC's next event, receive. */
void rn_step(struct rn_app *a, uint64_t max_wait_ns)
{
	struct pollfd p[2];
	struct timespec ts;
	uint64_t now, next, wait;
	int n = 1;

	tx_all(a);
	now = rn_mono_ns();
	next = a->nic ? ne_nic_next_event_ns(a->nic) : UINT64_MAX;
	wait = next > now ? next - now : 0;
	if (wait > max_wait_ns)
		wait = max_wait_ns;
	ts.tv_sec = (time_t)(wait / 1000000000ull);
	ts.tv_nsec = (long)(wait % 1000000000ull);
	p[0].fd = a->pfd;
	p[0].events = POLLIN;
	if (a->ufd >= 0) {
		p[1].fd = a->ufd;
		p[1].events = POLLIN;
		n = 2;
	}
	if (ppoll(p, (nfds_t)n, &ts, NULL) > 0)
		rx_drain(a);
	tx_all(a);
}

bool rn_timed_out(const struct rn_app *a)
{
	return rn_mono_ns() >= a->deadline;
}

/* Resolve ip by ARP (requests every 250 ms). */
int rn_arp_resolve(struct rn_app *a, uint32_t ip, uint8_t mac[6])
{
	uint64_t last = 0;
	char s[INET_ADDRSTRLEN];

	a->arp_want = ip;
	a->arp_got = false;
	while (!a->arp_got) {
		if (rn_timed_out(a)) {
			rn_err("no ARP reply from %s", rn_ip_str(ip, s, sizeof(s)));
			return -1;
		}
		if (rn_mono_ns() - last >= 250000000ull) {
			arp_send(a, 1, NULL, ip);
			last = rn_mono_ns();
		}
		rn_step(a, 50000000ull);
	}
	memcpy(mac, a->arp_mac, 6);
	a->arp_want = 0;
	if (a->o.verbose)
		printf("  ARP: %s is at %02x:%02x:%02x:%02x:%02x:%02x\n", rn_ip_str(ip, s, sizeof(s)),
		       mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	return 0;
}

int main(int argc, char **argv)
{
	struct rn_app *a = calloc(1, sizeof(*a));
	int rc;

	if (!a) {
		rn_err("out of memory");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	a->pfd = a->ufd = -1;
	if (rn_parse_args(argc, argv, &a->o) < 0) {
		free(a);
		return 2;
	}
	srand48((long)(getpid() ^ (long)rn_mono_ns()));
	a->deadline = rn_mono_ns() + (uint64_t)(a->o.timeout_s * 1e9);
	if (if_setup(a) < 0 || sock_setup(a) < 0) {
		rc = 1;
	} else {
		char s[INET_ADDRSTRLEN];

		if (a->o.mtu + 42 + 28 + 4 > a->if_mtu + 14)
			fprintf(stderr, RN_PROG ": warning: path MTU %u does not fit %s's MTU %u\n",
				a->o.mtu, a->o.ifname, a->if_mtu);
		printf("  " RN_PROG " on %s: %s %02x:%02x:%02x:%02x:%02x:%02x, %s, path MTU %u, "
		       "%u B x %u, DCQCN %s\n",
		       a->o.ifname, rn_ip_str(a->ip, s, sizeof(s)), a->mac[0], a->mac[1], a->mac[2],
		       a->mac[3], a->mac[4], a->mac[5], a->o.server ? "client" : "server", a->o.mtu,
		       a->o.size, a->o.iters, a->o.dcqcn_rp ? "on" : "off");
		rc = rn_pingpong(a);
	}
	if (a->pfd >= 0)
		close(a->pfd);
	if (a->ufd >= 0)
		close(a->ufd);
	ne_nic_destroy(a->nic);
	free(a->sbuf);
	free(a->rbuf);
	free(a);
	return rc;
}
