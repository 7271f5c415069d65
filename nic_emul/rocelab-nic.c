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
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netdb.h>
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
#include "ne_peer.h"

#define PROG "rocelab-nic"
#define EXCH_MSG_LEN NE_PEER_MSG_LEN
#define RX_BUF 16384u
#define WRID_RECV 1u
#define WRID_SEND 2u

struct opts {
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
struct app {
	struct opts o;
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

	uint8_t rx[RX_BUF];
	uint8_t tx[NE_MAX_FRAME + 64];
};

static __attribute__((format(printf, 1, 2))) void err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"One emulated RoCEv2 RC NIC (nic_emul) over a Linux network interface (AF_PACKET),\n"
		"on the real clock. Interoperates with rdma-core's ibv_rc_pingpong.\n"
		"\n"
		"  " PROG " pingpong -I IFNAME [options] [SERVER]\n"
		"\n"
		"Without SERVER it waits for an ibv_rc_pingpong client; with SERVER it connects to an\n"
		"ibv_rc_pingpong server there. Options (ibv_rc_pingpong's where they exist):\n"
		"  -I, --if IFNAME      the interface (required; -d IFNAME is an alias)\n"
		"  -p, --port N         TCP port of the out-of-band exchange (default 18515)\n"
		"  -s, --size N         message size in bytes (default 4096)\n"
		"  -n, --iters N        number of exchanges (default 1000)\n"
		"  -m, --mtu N          path MTU: 256, 512, 1024, 2048, 4096 (default 1024)\n"
		"  -r, --rx-depth N     receives posted at a time (default 500)\n"
		"  -g, --gid-idx N      accepted and ignored: our GID is always ::ffff:<our IPv4>\n"
		"  -i, --ib-port N      accepted, must be 1\n"
		"      --mac MAC        the NIC's MAC (default: the interface's)\n"
		"      --ip A.B.C.D[/P] the NIC's IPv4 and prefix (default: the interface's)\n"
		"      --gw A.B.C.D     next hop for peers off our subnet (default: the interface's\n"
		"                       default route from /proc/net/route)\n"
		"      --rate R         emulated line rate, bit/s with k/M/G suffix (default: none)\n"
		"      --timeout S      give up after S seconds (default 60)\n"
		"      --linger S       keep answering the peer S seconds after the last completion\n"
		"                       (its last ACK may be lost; default 1)\n"
		"      --check          fail unless every received byte is 0x7b (ibv_rc_pingpong's fill)\n"
		"      --dcqcn          DCQCN reaction point (rate cut on CNP) and notification point\n"
		"                       (CNP on ECN CE) on; off by default\n"
		"  -v, --verbose        print ARP and setup details\n"
		"  -h, --help\n"
		"\n"
		"Prints ibv_rc_pingpong's result lines (bytes in seconds = Mbit/sec, iters in seconds\n"
		"= usec/iter) and the NIC's counters. Needs CAP_NET_RAW (root).\n"
		"Exit status: 0 done, 1 runtime failure (network, peer, timeout, error completion),\n"
		"2 bad usage.\n");
}

/* ------------------------------------------------------------------ */
/* Parsing helpers */

static bool parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool parse_rate(const char *s, uint64_t *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return false;
	switch (*end) {
	case 'k': case 'K': v *= 1e3; end++; break;
	case 'm': case 'M': v *= 1e6; end++; break;
	case 'g': case 'G': v *= 1e9; end++; break;
	default: break;
	}
	if (*end || v > 1e13)
		return false;
	*out = (uint64_t)v;
	return true;
}

static bool parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
		return false;
	for (int i = 0; i < 6; i++) {
		if (b[i] > 255)
			return false;
		mac[i] = (uint8_t)b[i];
	}
	return true;
}

static bool parse_ipv4(const char *s, uint32_t *ip)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return false;
	*ip = ntohl(a.s_addr);
	return true;
}

static bool parse_cidr(const char *s, uint32_t *ip, uint32_t *mask)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	uint32_t p = 32;

	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	if (slash) {
		buf[slash - s] = 0;
		if (!parse_u32(slash + 1, 32, &p))
			return false;
	}
	if (!parse_ipv4(buf, ip))
		return false;
	*mask = p ? 0xFFFFFFFFu << (32 - p) : 0;
	return true;
}

static const char *ip_str(uint32_t ip, char *buf, size_t n)
{
	struct in_addr a = {.s_addr = htonl(ip)};

	return inet_ntop(AF_INET, &a, buf, (socklen_t)n);
}

/* ------------------------------------------------------------------ */
/* Interface */

static int if_setup(struct app *a)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	if (s < 0) {
		err("socket: %s", strerror(errno));
		return -1;
	}
	a->ifindex = (int)if_nametoindex(a->o.ifname);
	if (!a->ifindex) {
		err("no interface %s in this network namespace", a->o.ifname);
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
		err("%s has no IPv4 address; give --ip A.B.C.D/P", a->o.ifname);
		return -1;
	}
	return 0;
}

/* The default gateway of the interface from /proc/net/route (0: none). */
static uint32_t route_gw(const char *ifname)
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

static int sock_setup(struct app *a)
{
	struct sockaddr_ll sll;
	struct sockaddr_in sin;
	int one = 1;

	a->pfd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
	if (a->pfd < 0) {
		err("AF_PACKET socket: %s (needs CAP_NET_RAW)", strerror(errno));
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
		err("bind AF_PACKET to %s: %s", a->o.ifname, strerror(errno));
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
				fprintf(stderr, PROG ": note: UDP 4791 not bound (%s)\n", strerror(errno));
			close(a->ufd);
			a->ufd = -1;
		}
	}
	return 0;
}

static void send_frame(struct app *a, const uint8_t *f, size_t len)
{
	if (send(a->pfd, f, len, 0) == (ssize_t)len)
		a->tx_frames++;
	else
		a->tx_errors++;
}

/* ------------------------------------------------------------------ */
/* ARP */


static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void arp_send(struct app *a, uint16_t oper, const uint8_t *dmac, uint32_t tip)
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

static void arp_rx(struct app *a, const uint8_t *f, size_t len)
{
	uint16_t oper;
	uint32_t sip, tip;

	if (len < 42 || f[14] != 0 || f[15] != 1 || f[16] != 8 || f[17] != 0 || f[18] != 6 ||
	    f[19] != 4)
		return;
	oper = (uint16_t)(f[20] << 8 | f[21]);
	sip = get32(f + 28);
	tip = get32(f + 38);
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

static void rx_drain(struct app *a)
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
			ne_nic_rx(a->nic, a->rx, (size_t)n, mono_ns()); /* the NIC counts its drops */
		else
			a->rx_ignored++;
	}
	if (a->ufd >= 0)
		while (recv(a->ufd, a->rx, sizeof(a->rx), 0) >= 0)
			;
}

static void tx_all(struct app *a)
{
	size_t len;

	if (!a->nic)
		return;
	while (ne_nic_poll_tx(a->nic, mono_ns(), a->tx, sizeof(a->tx), &len) == 1)
		send_frame(a, a->tx, len);
}

/* Run the NIC for at most max_wait_ns: send what is due, sleep until a frame
 * arrives or the NIC's next event, receive. */
static void step(struct app *a, uint64_t max_wait_ns)
{
	struct pollfd p[2];
	struct timespec ts;
	uint64_t now, next, wait;
	int n = 1;

	tx_all(a);
	now = mono_ns();
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

static bool timed_out(const struct app *a)
{
	return mono_ns() >= a->deadline;
}

/* Resolve ip by ARP (requests every 250 ms). */
static int arp_resolve(struct app *a, uint32_t ip, uint8_t mac[6])
{
	uint64_t last = 0;
	char s[INET_ADDRSTRLEN];

	a->arp_want = ip;
	a->arp_got = false;
	while (!a->arp_got) {
		if (timed_out(a)) {
			err("no ARP reply from %s", ip_str(ip, s, sizeof(s)));
			return -1;
		}
		if (mono_ns() - last >= 250000000ull) {
			arp_send(a, 1, NULL, ip);
			last = mono_ns();
		}
		step(a, 50000000ull);
	}
	memcpy(mac, a->arp_mac, 6);
	a->arp_want = 0;
	if (a->o.verbose)
		printf("  ARP: %s is at %02x:%02x:%02x:%02x:%02x:%02x\n", ip_str(ip, s, sizeof(s)),
		       mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	return 0;
}

/* ------------------------------------------------------------------ */
/* ibv_rc_pingpong's out-of-band exchange */

/* Wait for fd to be readable (events POLLIN) or writable, running the NIC. */
static bool wait_fd(struct app *a, int fd, short events)
{
	while (!timed_out(a)) {
		struct pollfd p = {.fd = fd, .events = events};

		if (poll(&p, 1, 0) > 0)
			return true;
		step(a, 20000000ull);
	}
	return false;
}

static bool read_full(struct app *a, int fd, char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r;

		if (!wait_fd(a, fd, POLLIN))
			return false;
		r = read(fd, buf + got, n - got);
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

static int tcp_connect(struct app *a, const char *host, uint16_t port)
{
	struct addrinfo hints, *res = NULL, *t;
	char svc[8];
	int fd = -1, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(svc, sizeof(svc), "%u", port);
	rc = getaddrinfo(host, svc, &hints, &res);
	if (rc) {
		err("%s for %s:%u", gai_strerror(rc), host, port);
		return -1;
	}
	/* the server may not listen yet: retry until the deadline */
	while (fd < 0 && !timed_out(a)) {
		for (t = res; t; t = t->ai_next) {
			fd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
			if (fd < 0)
				continue;
			if (connect(fd, t->ai_addr, t->ai_addrlen) == 0)
				break;
			close(fd);
			fd = -1;
		}
		if (fd < 0)
			step(a, 200000000ull);
	}
	freeaddrinfo(res);
	if (fd < 0)
		err("couldn't connect to %s:%u", host, port);
	return fd;
}

static int tcp_accept(struct app *a, uint16_t port)
{
	struct sockaddr_in sin;
	int one = 1, ls, fd;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0) {
		err("socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	if (bind(ls, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(ls, 1) < 0) {
		err("couldn't listen to port %u: %s", port, strerror(errno));
		close(ls);
		return -1;
	}
	printf("  waiting for an ibv_rc_pingpong client on TCP port %u\n", port);
	fflush(stdout);
	if (!wait_fd(a, ls, POLLIN)) {
		err("no client connected to port %u within the timeout", port);
		close(ls);
		return -1;
	}
	fd = accept(ls, NULL, NULL);
	close(ls);
	if (fd < 0)
		err("accept: %s", strerror(errno));
	return fd;
}

/* ------------------------------------------------------------------ */
/* The NIC and the QP */

static int nic_setup(struct app *a)
{
	struct ne_nic_config cfg;
	struct ne_qp_init_attr ia;
	struct ne_qp_attr qa;
	struct ne_mr_attr mr;
	int rc;

	ne_nic_config_default(&cfg);
	memcpy(cfg.mac, a->mac, 6);
	cfg.ipv4 = a->ip;
	cfg.line_rate_bps = a->o.rate_bps;
	cfg.max_qps = 4;
	cfg.max_mrs = 4;
	cfg.ip_id = (uint16_t)lrand48();
	cfg.dcqcn.rp_enable = a->o.dcqcn_rp;
	cfg.dcqcn.np_enable = a->o.dcqcn_np;
	a->nic = ne_nic_create(&cfg);
	a->sbuf = malloc(a->o.size ? a->o.size : 1);
	a->rbuf = malloc(a->o.size ? a->o.size : 1);
	if (!a->nic || !a->sbuf || !a->rbuf) {
		err("out of memory");
		return -1;
	}
	memset(a->sbuf, 0x7b, a->o.size ? a->o.size : 1); /* ibv_rc_pingpong's fill */
	a->cq = ne_cq_create(a->nic, a->o.rx_depth + 2);
	memset(&mr, 0, sizeof(mr));
	mr.addr = a->sbuf;
	mr.len = a->o.size ? a->o.size : 1;
	mr.iova = 0x10000;
	mr.access = NE_ACCESS_LOCAL_WRITE;
	rc = ne_mr_reg(a->nic, &mr, &a->skey);
	mr.addr = a->rbuf;
	mr.iova = 0x100000000ull;
	if (!rc)
		rc = ne_mr_reg(a->nic, &mr, &a->rkey);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = a->cq;
	ia.max_send_wr = 1;
	ia.max_recv_wr = a->o.rx_depth;
	if (!rc && a->cq)
		rc = ne_qp_create(a->nic, &ia, &a->qpn);
	memset(&qa, 0, sizeof(qa));
	qa.state = NE_QPS_INIT;
	if (!rc)
		rc = ne_qp_modify(a->nic, a->qpn, &qa, NE_QP_STATE);
	if (rc || !a->cq) {
		err("NIC setup failed (%d)", rc);
		return -1;
	}
	return 0;
}

static int post_recv(struct app *a)
{
	struct ne_recv_wr wr = {.wr_id = WRID_RECV, .addr = 0x100000000ull,
				.length = a->o.size, .lkey = a->rkey};

	return ne_post_recv(a->nic, a->qpn, &wr);
}

static int post_send(struct app *a)
{
	struct ne_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = WRID_SEND;
	wr.opcode = NE_WR_SEND;
	wr.send_flags = NE_SEND_SIGNALED;
	wr.local_addr = 0x10000;
	wr.length = a->o.size;
	wr.lkey = a->skey;
	return ne_post_send(a->nic, a->qpn, &wr, mono_ns());
}

static bool gid_is_v4(const uint8_t g[16])
{
	static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(g, pre, 12) == 0;
}

/* Bring the QP to RTS towards rem (ibv_rc_pingpong's pp_connect_ctx values). */
static int qp_connect(struct app *a, const struct ne_peer_dest *my, const struct ne_peer_dest *rem)
{
	struct ne_qp_attr qa;
	uint32_t rip, hop;
	char s[INET_ADDRSTRLEN], g[INET6_ADDRSTRLEN];
	int rc;

	if (!gid_is_v4(rem->gid)) {
		inet_ntop(AF_INET6, rem->gid, g, sizeof(g));
		err("the peer's GID %s is not an IPv4-mapped RoCEv2 GID (run ibv_rc_pingpong "
		    "with -g <index of its ::ffff:a.b.c.d GID>)", g);
		return -1;
	}
	rip = get32(rem->gid + 12);
	hop = rip;
	if ((rip & a->mask) != (a->ip & a->mask)) {
		hop = a->o.have_gw ? a->o.gw : route_gw(a->o.ifname);
		if (!hop) {
			err("peer %s is not on %s's subnet and there is no gateway (give --gw)",
			    ip_str(rip, s, sizeof(s)), a->o.ifname);
			return -1;
		}
	}
	memset(&qa, 0, sizeof(qa));
	if (arp_resolve(a, hop, qa.dest_mac) < 0)
		return -1;
	qa.state = NE_QPS_RTR;
	qa.path_mtu = a->o.mtu;
	qa.dest_qpn = rem->qpn;
	qa.rq_psn = rem->psn;
	qa.dest_ipv4 = rip;
	qa.max_dest_rd_atomic = 1;
	qa.min_rnr_timer = 12;
	rc = ne_qp_modify(a->nic, a->qpn, &qa,
			  NE_QP_STATE | NE_QP_AV | NE_QP_PATH_MTU | NE_QP_DEST_QPN | NE_QP_RQ_PSN |
				  NE_QP_MAX_DEST_RD_ATOMIC | NE_QP_MIN_RNR_TIMER);
	qa.state = NE_QPS_RTS;
	qa.timeout = 14;
	qa.retry_cnt = 7;
	qa.rnr_retry = 7;
	qa.sq_psn = my->psn;
	qa.max_rd_atomic = 1;
	if (!rc)
		rc = ne_qp_modify(a->nic, a->qpn, &qa,
				  NE_QP_STATE | NE_QP_TIMEOUT | NE_QP_RETRY_CNT | NE_QP_RNR_RETRY |
					  NE_QP_SQ_PSN | NE_QP_MAX_QP_RD_ATOMIC);
	if (rc) {
		err("couldn't move the QP to RTR/RTS (%d)", rc);
		return -1;
	}
	return 0;
}

static void print_dest(const char *what, const struct ne_peer_dest *d)
{
	char g[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, d->gid, g, sizeof(g));
	printf("  %s LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", what, d->lid, d->qpn, d->psn, g);
}

static void print_counters(const struct app *a)
{
	struct ne_counters c;
	const uint64_t *v = (const uint64_t *)(const void *)&c;

	ne_nic_get_counters(a->nic, &c);
	printf("NIC counters (non-zero):");
	for (int i = 0; ne_counter_names[i]; i++)
		if (v[i])
			printf(" %s=%" PRIu64, ne_counter_names[i], v[i]);
	printf("\nhost: frames_tx=%" PRIu64 " frames_rx=%" PRIu64 " arp_replies=%" PRIu64
	       " rx_ignored=%" PRIu64 " tx_errors=%" PRIu64 "\n",
	       a->tx_frames, a->rx_frames, a->arp_replies_sent, a->rx_ignored, a->tx_errors);
}

static int pingpong(struct app *a)
{
	struct ne_peer_dest my, rem;
	char msg[EXCH_MSG_LEN];
	uint32_t scnt = 0, rcnt = 0, pending;
	uint64_t t0, t1;
	int fd;

	if (nic_setup(a) < 0)
		return 1;
	for (uint32_t i = 0; i < a->o.rx_depth; i++)
		if (post_recv(a)) {
			err("couldn't post receive %u", i);
			return 1;
		}
	memset(&my, 0, sizeof(my));
	my.qpn = a->qpn;
	my.psn = (uint32_t)lrand48() & 0xFFFFFFu;
	my.gid[10] = my.gid[11] = 0xff;
	rl_put_be32(my.gid + 12, a->ip);
	print_dest("local address: ", &my);
	fflush(stdout);

	if (a->o.server) {
		fd = tcp_connect(a, a->o.server, a->o.port);
		if (fd < 0)
			return 1;
		ne_peer_format(&my, msg);
		if (write(fd, msg, EXCH_MSG_LEN) != (ssize_t)EXCH_MSG_LEN ||
		    !read_full(a, fd, msg, EXCH_MSG_LEN) || write(fd, "done", 5) != 5) {
			err("couldn't exchange addresses with %s:%u", a->o.server, a->o.port);
			close(fd);
			return 1;
		}
		close(fd);
		msg[EXCH_MSG_LEN - 1] = 0;
		if (ne_peer_parse(msg, EXCH_MSG_LEN, &rem) < 0) {
			err("bad address message from the server: '%s'", msg);
			return 1;
		}
		print_dest("remote address:", &rem);
		if (qp_connect(a, &my, &rem) < 0)
			return 1;
	} else {
		fd = tcp_accept(a, a->o.port);
		if (fd < 0)
			return 1;
		if (!read_full(a, fd, msg, EXCH_MSG_LEN)) {
			err("couldn't read the client's address message");
			close(fd);
			return 1;
		}
		msg[EXCH_MSG_LEN - 1] = 0;
		if (ne_peer_parse(msg, EXCH_MSG_LEN, &rem) < 0) {
			err("bad address message from the client: '%s'", msg);
			close(fd);
			return 1;
		}
		print_dest("remote address:", &rem);
		/* like ibv_rc_pingpong: connect before answering, the client sends at once */
		if (qp_connect(a, &my, &rem) < 0) {
			close(fd);
			return 1;
		}
		ne_peer_format(&my, msg);
		if (write(fd, msg, EXCH_MSG_LEN) != (ssize_t)EXCH_MSG_LEN) {
			err("couldn't send our address message");
			close(fd);
			return 1;
		}
		/* the client answers "done"; its absence is not fatal (it may have closed) */
		{
			char done[EXCH_MSG_LEN];
			struct pollfd p = {.fd = fd, .events = POLLIN};

			if (poll(&p, 1, 2000) > 0 && read(fd, done, sizeof(done)) <= 0 && a->o.verbose)
				fprintf(stderr, PROG ": note: no \"done\" from the client\n");
		}
		close(fd);
	}
	fflush(stdout);

	pending = WRID_RECV;
	if (a->o.server) {
		if (post_send(a)) {
			err("couldn't post send");
			return 1;
		}
		pending |= WRID_SEND;
	}
	t0 = mono_ns();
	while (rcnt < a->o.iters || scnt < a->o.iters) {
		struct ne_wc wc[4];
		int n;

		if (timed_out(a)) {
			err("timed out after %u of %u iterations (sent %u, received %u)",
			    scnt < rcnt ? scnt : rcnt, a->o.iters, scnt, rcnt);
			print_counters(a);
			return 1;
		}
		step(a, 10000000ull);
		n = ne_cq_poll(a->cq, wc, 4);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != NE_WC_SUCCESS) {
				err("failed status %s (%d) for wr_id %d", ne_wc_status_str(wc[i].status),
				    (int)wc[i].status, (int)wc[i].wr_id);
				print_counters(a);
				return 1;
			}
			if (wc[i].wr_id == WRID_SEND) {
				scnt++;
			} else if (wc[i].wr_id == WRID_RECV) {
				rcnt++;
				if (wc[i].byte_len != a->o.size)
					a->bad_payload++;
				else if (a->o.check)
					for (uint32_t k = 0; k < a->o.size; k++)
						if (a->rbuf[k] != 0x7b) {
							a->bad_payload++;
							break;
						}
				if (post_recv(a)) {
					err("couldn't post receive");
					return 1;
				}
			} else {
				err("completion for unknown wr_id %d", (int)wc[i].wr_id);
				return 1;
			}
			pending &= ~(uint32_t)wc[i].wr_id;
			if (scnt < a->o.iters && !pending) {
				if (post_send(a)) {
					err("couldn't post send");
					return 1;
				}
				pending = WRID_RECV | WRID_SEND;
			}
		}
	}
	t1 = mono_ns();
	{
		double usec = (double)(t1 - t0) / 1e3;
		long long bytes = (long long)a->o.size * a->o.iters * 2;

		printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, usec / 1e6,
		       (double)bytes * 8. / usec);
		printf("%u iters in %.2f seconds = %.2f usec/iter\n", a->o.iters, usec / 1e6,
		       usec / a->o.iters);
	}
	fflush(stdout);
	/* our last ACK may be lost or still queued: keep answering for a while */
	{
		uint64_t end = mono_ns() + (uint64_t)(a->o.linger_s * 1e9);

		while (mono_ns() < end)
			step(a, 10000000ull);
	}
	print_counters(a);
	if (a->bad_payload) {
		err("%" PRIu64 " received messages had the wrong length%s", a->bad_payload,
		    a->o.check ? " or bytes other than 0x7b" : "");
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */

enum { OPT_MAC = 256, OPT_IP, OPT_GW, OPT_RATE, OPT_TIMEOUT, OPT_LINGER, OPT_CHECK, OPT_DCQCN };

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"if", required_argument, NULL, 'I'},
		{"port", required_argument, NULL, 'p'},
		{"size", required_argument, NULL, 's'},
		{"iters", required_argument, NULL, 'n'},
		{"mtu", required_argument, NULL, 'm'},
		{"rx-depth", required_argument, NULL, 'r'},
		{"gid-idx", required_argument, NULL, 'g'},
		{"ib-port", required_argument, NULL, 'i'},
		{"ib-dev", required_argument, NULL, 'd'},
		{"mac", required_argument, NULL, OPT_MAC},
		{"ip", required_argument, NULL, OPT_IP},
		{"gw", required_argument, NULL, OPT_GW},
		{"rate", required_argument, NULL, OPT_RATE},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"linger", required_argument, NULL, OPT_LINGER},
		{"check", no_argument, NULL, OPT_CHECK},
		{"dcqcn", no_argument, NULL, OPT_DCQCN},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint32_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = 18515;
	o->size = 4096;
	o->iters = 1000;
	o->mtu = 1024;
	o->rx_depth = 500;
	o->gidx = -1;
	o->timeout_s = 60;
	o->linger_s = 1;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			exit(0);
		}
	if (argc < 2 || strcmp(argv[1], "pingpong") != 0) {
		err(argc < 2 ? "no mode given (see --help)" : "unknown mode '%s' (see --help)",
		    argc < 2 ? "" : argv[1]);
		return -1;
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "I:d:p:s:n:m:r:g:i:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'I':
		case 'd':
			o->ifname = optarg;
			break;
		case 'p':
			if (!parse_u32(optarg, 65535, &v) || !v) {
				err("--port: 1..65535");
				return -1;
			}
			o->port = (uint16_t)v;
			break;
		case 's':
			if (!parse_u32(optarg, 1u << 30, &o->size)) {
				err("--size: bytes, at most 1 GiB");
				return -1;
			}
			break;
		case 'n':
			if (!parse_u32(optarg, UINT32_MAX, &o->iters) || !o->iters) {
				err("--iters: a positive number");
				return -1;
			}
			break;
		case 'm':
			if (!parse_u32(optarg, 4096, &o->mtu) ||
			    (o->mtu != 256 && o->mtu != 512 && o->mtu != 1024 && o->mtu != 2048 &&
			     o->mtu != 4096)) {
				err("--mtu: 256, 512, 1024, 2048 or 4096");
				return -1;
			}
			break;
		case 'r':
			if (!parse_u32(optarg, 65536, &o->rx_depth) || o->rx_depth < 2) {
				err("--rx-depth: 2..65536");
				return -1;
			}
			break;
		case 'g':
			if (!parse_u32(optarg, 255, &v)) {
				err("--gid-idx: 0..255");
				return -1;
			}
			o->gidx = (int)v;
			break;
		case 'i':
			if (!parse_u32(optarg, 1, &v) || v != 1) {
				err("--ib-port: the emulated NIC has port 1 only");
				return -1;
			}
			break;
		case OPT_MAC:
			if (!parse_mac(optarg, o->mac)) {
				err("--mac: xx:xx:xx:xx:xx:xx");
				return -1;
			}
			o->have_mac = true;
			break;
		case OPT_IP:
			if (!parse_cidr(optarg, &o->ip, &o->prefix_mask)) {
				err("--ip: A.B.C.D or A.B.C.D/P");
				return -1;
			}
			o->have_ip = true;
			break;
		case OPT_GW:
			if (!parse_ipv4(optarg, &o->gw)) {
				err("--gw: A.B.C.D");
				return -1;
			}
			o->have_gw = true;
			break;
		case OPT_RATE:
			if (!parse_rate(optarg, &o->rate_bps)) {
				err("--rate: bit/s, e.g. 10G");
				return -1;
			}
			break;
		case OPT_TIMEOUT:
		case OPT_LINGER: {
			char *end;
			double d = strtod(optarg, &end);

			if (*end || end == optarg || d < 0 || d > 1e6 || (c == OPT_TIMEOUT && d <= 0)) {
				err("--%s: seconds", c == OPT_TIMEOUT ? "timeout" : "linger");
				return -1;
			}
			if (c == OPT_TIMEOUT)
				o->timeout_s = d;
			else
				o->linger_s = d;
			break;
		}
		case OPT_CHECK:
			o->check = true;
			break;
		case OPT_DCQCN:
			o->dcqcn_rp = o->dcqcn_np = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		default:
			err("bad arguments (see --help)");
			return -1;
		}
	}
	if (optind == argc - 1)
		o->server = argv[optind];
	else if (optind < argc) {
		err("more than one SERVER given");
		return -1;
	}
	if (!o->ifname) {
		err("-I IFNAME is required");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct app *a = calloc(1, sizeof(*a));
	int rc;

	if (!a) {
		err("out of memory");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	a->pfd = a->ufd = -1;
	if (parse_args(argc, argv, &a->o) < 0) {
		free(a);
		return 2;
	}
	srand48((long)(getpid() ^ (long)mono_ns()));
	a->deadline = mono_ns() + (uint64_t)(a->o.timeout_s * 1e9);
	if (if_setup(a) < 0 || sock_setup(a) < 0) {
		rc = 1;
	} else {
		char s[INET_ADDRSTRLEN];

		if (a->o.mtu + 42 + 28 + 4 > a->if_mtu + 14)
			fprintf(stderr, PROG ": warning: path MTU %u does not fit %s's MTU %u\n",
				a->o.mtu, a->o.ifname, a->if_mtu);
		printf("  " PROG " on %s: %s %02x:%02x:%02x:%02x:%02x:%02x, %s, path MTU %u, "
		       "%u B x %u, DCQCN %s\n",
		       a->o.ifname, ip_str(a->ip, s, sizeof(s)), a->mac[0], a->mac[1], a->mac[2],
		       a->mac[3], a->mac[4], a->mac[5], a->o.server ? "client" : "server", a->o.mtu,
		       a->o.size, a->o.iters, a->o.dcqcn_rp ? "on" : "off");
		rc = pingpong(a);
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
