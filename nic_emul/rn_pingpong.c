/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocelab-nic's ping-pong test, ibv_rc_pingpong's (rdma-core
 * libibverbs/examples/rc_pingpong.c) on the emulated NIC: the NIC and its
 * QP, the out-of-band TCP exchange of addresses, the iterations (each side
 * answers a receive with a send), the result lines and the counters.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rl_bytes.h"
#include "ne_nic.h"
#include "ne_peer.h"
#include "rn_nic.h"

#define EXCH_MSG_LEN NE_PEER_MSG_LEN
#define WRID_RECV 1u
#define WRID_SEND 2u

/* ------------------------------------------------------------------ */
/* ibv_rc_pingpong's out-of-band exchange */

/* Wait for fd to be readable (events POLLIN) or writable, running the NIC. */
static bool wait_fd(struct rn_app *a, int fd, short events)
{
	while (!rn_timed_out(a)) {
		struct pollfd p = {.fd = fd, .events = events};

		if (poll(&p, 1, 0) > 0)
			return true;
		rn_step(a, 20000000ull);
	}
	return false;
}

static bool read_full(struct rn_app *a, int fd, char *buf, size_t n)
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

static int tcp_connect(struct rn_app *a, const char *host, uint16_t port)
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
		rn_err("%s for %s:%u", gai_strerror(rc), host, port);
		return -1;
	}
	/* the server may not listen yet: retry until the deadline */
	while (fd < 0 && !rn_timed_out(a)) {
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
			rn_step(a, 200000000ull);
	}
	freeaddrinfo(res);
	if (fd < 0)
		rn_err("couldn't connect to %s:%u", host, port);
	return fd;
}

static int tcp_accept(struct rn_app *a, uint16_t port)
{
	struct sockaddr_in sin;
	int one = 1, ls, fd;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0) {
		rn_err("socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	if (bind(ls, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(ls, 1) < 0) {
		rn_err("couldn't listen to port %u: %s", port, strerror(errno));
		close(ls);
		return -1;
	}
	printf("  waiting for an ibv_rc_pingpong client on TCP port %u\n", port);
	fflush(stdout);
	if (!wait_fd(a, ls, POLLIN)) {
		rn_err("no client connected to port %u within the timeout", port);
		close(ls);
		return -1;
	}
	fd = accept(ls, NULL, NULL);
	close(ls);
	if (fd < 0)
		rn_err("accept: %s", strerror(errno));
	return fd;
}

/* ------------------------------------------------------------------ */
/* The NIC and the QP */

static int nic_setup(struct rn_app *a)
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
		rn_err("out of memory");
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
		rn_err("NIC setup failed (%d)", rc);
		return -1;
	}
	return 0;
}

static int post_recv(struct rn_app *a)
{
	struct ne_recv_wr wr = {.wr_id = WRID_RECV, .addr = 0x100000000ull,
				.length = a->o.size, .lkey = a->rkey};

	return ne_post_recv(a->nic, a->qpn, &wr);
}

static int post_send(struct rn_app *a)
{
	struct ne_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = WRID_SEND;
	wr.opcode = NE_WR_SEND;
	wr.send_flags = NE_SEND_SIGNALED;
	wr.local_addr = 0x10000;
	wr.length = a->o.size;
	wr.lkey = a->skey;
	return ne_post_send(a->nic, a->qpn, &wr, rn_mono_ns());
}

static bool gid_is_v4(const uint8_t g[16])
{
	static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(g, pre, 12) == 0;
}

/* Bring the QP to RTS towards rem (ibv_rc_pingpong's pp_connect_ctx values). */
static int qp_connect(struct rn_app *a, const struct ne_peer_dest *my, const struct ne_peer_dest *rem)
{
	struct ne_qp_attr qa;
	uint32_t rip, hop;
	char s[INET_ADDRSTRLEN], g[INET6_ADDRSTRLEN];
	int rc;

	if (!gid_is_v4(rem->gid)) {
		inet_ntop(AF_INET6, rem->gid, g, sizeof(g));
		rn_err("the peer's GID %s is not an IPv4-mapped RoCEv2 GID (run ibv_rc_pingpong "
		    "with -g <index of its ::ffff:a.b.c.d GID>)", g);
		return -1;
	}
	rip = rl_get_be32(rem->gid + 12);
	hop = rip;
	if ((rip & a->mask) != (a->ip & a->mask)) {
		hop = a->o.have_gw ? a->o.gw : rn_route_gw(a->o.ifname);
		if (!hop) {
			rn_err("peer %s is not on %s's subnet and there is no gateway (give --gw)",
			    rn_ip_str(rip, s, sizeof(s)), a->o.ifname);
			return -1;
		}
	}
	memset(&qa, 0, sizeof(qa));
	if (rn_arp_resolve(a, hop, qa.dest_mac) < 0)
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
		rn_err("couldn't move the QP to RTR/RTS (%d)", rc);
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

static void print_counters(const struct rn_app *a)
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

/* The local side: the NIC and the QP, rx_depth receives posted, our address
 * (GID ::ffff:<our IPv4>, a random PSN) printed. */
static int pp_local(struct rn_app *a, struct ne_peer_dest *my)
{
	if (nic_setup(a) < 0)
		return -1;
	for (uint32_t i = 0; i < a->o.rx_depth; i++)
		if (post_recv(a)) {
			rn_err("couldn't post receive %u", i);
			return -1;
		}
	memset(my, 0, sizeof(*my));
	my->qpn = a->qpn;
	my->psn = (uint32_t)lrand48() & 0xFFFFFFu;
	my->gid[10] = my->gid[11] = 0xff;
	rl_put_be32(my->gid + 12, a->ip);
	print_dest("local address: ", my);
	fflush(stdout);
	return 0;
}

/* Client: send our address, read the server's, answer "done", connect the QP. */
static int pp_exchange_client(struct rn_app *a, const struct ne_peer_dest *my,
			      struct ne_peer_dest *rem)
{
	char msg[EXCH_MSG_LEN];
	int fd;

	fd = tcp_connect(a, a->o.server, a->o.port);
	if (fd < 0)
		return -1;
	ne_peer_format(my, msg);
	if (write(fd, msg, EXCH_MSG_LEN) != (ssize_t)EXCH_MSG_LEN ||
	    !read_full(a, fd, msg, EXCH_MSG_LEN) || write(fd, "done", 5) != 5) {
		rn_err("couldn't exchange addresses with %s:%u", a->o.server, a->o.port);
		close(fd);
		return -1;
	}
	close(fd);
	msg[EXCH_MSG_LEN - 1] = 0;
	if (ne_peer_parse(msg, EXCH_MSG_LEN, rem) < 0) {
		rn_err("bad address message from the server: '%s'", msg);
		return -1;
	}
	print_dest("remote address:", rem);
	if (qp_connect(a, my, rem) < 0)
		return -1;
	return 0;
}

/* The client answers "done"; its absence is not fatal (it may have closed). */
static void pp_wait_done(const struct rn_app *a, int fd)
{
	char done[EXCH_MSG_LEN];
	struct pollfd p = {.fd = fd, .events = POLLIN};

	if (poll(&p, 1, 2000) > 0 && read(fd, done, sizeof(done)) <= 0 && a->o.verbose)
		fprintf(stderr, RN_PROG ": note: no \"done\" from the client\n");
}

/* Server: read the client's address, connect the QP, send ours, wait for "done". */
static int pp_exchange_server(struct rn_app *a, const struct ne_peer_dest *my,
			      struct ne_peer_dest *rem)
{
	char msg[EXCH_MSG_LEN];
	int fd;

	fd = tcp_accept(a, a->o.port);
	if (fd < 0)
		return -1;
	if (!read_full(a, fd, msg, EXCH_MSG_LEN)) {
		rn_err("couldn't read the client's address message");
		close(fd);
		return -1;
	}
	msg[EXCH_MSG_LEN - 1] = 0;
	if (ne_peer_parse(msg, EXCH_MSG_LEN, rem) < 0) {
		rn_err("bad address message from the client: '%s'", msg);
		close(fd);
		return -1;
	}
	print_dest("remote address:", rem);
	/* like ibv_rc_pingpong: connect before answering, the client sends at once */
	if (qp_connect(a, my, rem) < 0) {
		close(fd);
		return -1;
	}
	ne_peer_format(my, msg);
	if (write(fd, msg, EXCH_MSG_LEN) != (ssize_t)EXCH_MSG_LEN) {
		rn_err("couldn't send our address message");
		close(fd);
		return -1;
	}
	pp_wait_done(a, fd);
	close(fd);
	return 0;
}

/* Completions counted so far, and the work requests still outstanding. */
struct pp_count {
	uint32_t scnt, rcnt;
	uint32_t pending; /* WRID_RECV | WRID_SEND bits */
};

/* A received message counts as bad unless it has the size, and with --check
 * ibv_rc_pingpong's 0x7b bytes. */
static void pp_check_recv(struct rn_app *a, const struct ne_wc *wc)
{
	if (wc->byte_len != a->o.size)
		a->bad_payload++;
	else if (a->o.check)
		for (uint32_t k = 0; k < a->o.size; k++)
			if (a->rbuf[k] != 0x7b) {
				a->bad_payload++;
				break;
			}
}

/* One completion: count it, repost a receive, and send again once both the
 * last send and a receive have completed. */
static int pp_complete(struct rn_app *a, const struct ne_wc *wc, struct pp_count *c)
{
	if (wc->status != NE_WC_SUCCESS) {
		rn_err("failed status %s (%d) for wr_id %d", ne_wc_status_str(wc->status),
		       (int)wc->status, (int)wc->wr_id);
		print_counters(a);
		return -1;
	}
	if (wc->wr_id == WRID_SEND) {
		c->scnt++;
	} else if (wc->wr_id == WRID_RECV) {
		c->rcnt++;
		pp_check_recv(a, wc);
		if (post_recv(a)) {
			rn_err("couldn't post receive");
			return -1;
		}
	} else {
		rn_err("completion for unknown wr_id %d", (int)wc->wr_id);
		return -1;
	}
	c->pending &= ~(uint32_t)wc->wr_id;
	if (c->scnt < a->o.iters && !c->pending) {
		if (post_send(a)) {
			rn_err("couldn't post send");
			return -1;
		}
		c->pending = WRID_RECV | WRID_SEND;
	}
	return 0;
}

/* Run the NIC until iters sends and iters receives have completed. */
static int pp_iterate(struct rn_app *a, struct pp_count *c)
{
	while (c->rcnt < a->o.iters || c->scnt < a->o.iters) {
		struct ne_wc wc[4];
		int n;

		if (rn_timed_out(a)) {
			rn_err("timed out after %u of %u iterations (sent %u, received %u)",
			       c->scnt < c->rcnt ? c->scnt : c->rcnt, a->o.iters, c->scnt, c->rcnt);
			print_counters(a);
			return -1;
		}
		rn_step(a, 10000000ull);
		n = ne_cq_poll(a->cq, wc, 4);
		for (int i = 0; i < n; i++)
			if (pp_complete(a, &wc[i], c) < 0)
				return -1;
	}
	return 0;
}

/* ibv_rc_pingpong's two result lines for the iterations between t0 and t1. */
static void pp_report(const struct rn_app *a, uint64_t t0, uint64_t t1)
{
	double usec = (double)(t1 - t0) / 1e3;
	long long bytes = (long long)a->o.size * a->o.iters * 2;

	printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, usec / 1e6,
	       (double)bytes * 8. / usec);
	printf("%u iters in %.2f seconds = %.2f usec/iter\n", a->o.iters, usec / 1e6,
	       usec / a->o.iters);
	fflush(stdout);
}

int rn_pingpong(struct rn_app *a)
{
	struct ne_peer_dest my, rem;
	struct pp_count c = {.pending = WRID_RECV};
	uint64_t t0, t1, end;

	if (pp_local(a, &my) < 0)
		return 1;
	if (a->o.server ? pp_exchange_client(a, &my, &rem) < 0
			: pp_exchange_server(a, &my, &rem) < 0)
		return 1;
	fflush(stdout);
	if (a->o.server) {
		if (post_send(a)) {
			rn_err("couldn't post send");
			return 1;
		}
		c.pending |= WRID_SEND;
	}
	t0 = rn_mono_ns();
	if (pp_iterate(a, &c) < 0)
		return 1;
	t1 = rn_mono_ns();
	pp_report(a, t0, t1);
	/* our last ACK may be lost or still queued: keep answering for a while */
	end = rn_mono_ns() + (uint64_t)(a->o.linger_s * 1e9);
	while (rn_mono_ns() < end)
		rn_step(a, 10000000ull);
	print_counters(a);
	if (a->bad_payload) {
		rn_err("%" PRIu64 " received messages had the wrong length%s", a->bad_payload,
		       a->o.check ? " or bytes other than 0x7b" : "");
		return 1;
	}
	return 0;
}
