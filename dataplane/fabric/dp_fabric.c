/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_fabric: the running fabric put together (dp_fabric.h): construction on
 * DPDK (the state itself: dp_fabric_build.c), hosts' sends, link and switch
 * failures. The switch pipeline is dp_switch.c + dp_pipeline.c, the
 * channels dp_chan.c.
 */
#include "dp_fabric.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_lpm.h>

#include "dp_chan.h"
#include "dp_pipeline.h"
#include "dp_swx.h"

#define LPM_HOST_DEPTH 32   /* one /32 per host */
#define LPM_SPARE_RULES 16

void dp_frame_write_headers(const struct dp_fabric *f, struct rte_mbuf *m)
{
	struct dp_mbuf_priv *pv = dp_priv(m);

	dp_frame_settle_owed(f, rte_pktmbuf_mtod(m, uint8_t *), &pv->pkt, &pv->ttl_owed, &pv->mac_chan);
}

void dp_frame_settle(const struct dp_fabric *f, struct rte_mbuf *m)
{
	dp_frame_write_headers(f, m);
	dp_frame_write_zeros(m);
}

/*
 * The payload of a frame of len bytes parsed into p: a RoCE frame's between
 * its headers and its ICRC, a UDP datagram's after its header up to the IP
 * packet's end (not the Ethernet padding after it), as [*off, *off + *n).
 * False when there is none (other protocols; a fragment without its UDP
 * header, where rl_parse leaves l4_off 0).
 */
static bool payload_span(const struct rl_pkt *p, uint32_t len, uint32_t *off, uint32_t *n)
{
	if (p->is_roce) {
		if (p->icrc_off <= p->payload_off || p->icrc_off > len)
			return false;
		*off = p->payload_off;
		*n = p->icrc_off - p->payload_off;
		return true;
	}
	if (p->proto != RL_IPPROTO_UDP || p->l4_off == 0 || p->l4_off < p->l3_off + p->l3_len)
		return false;
	uint32_t start = p->l4_off + (uint32_t)RL_UDP_HDR_LEN;
	uint32_t end = RTE_MIN(len, (uint32_t)p->l3_off + p->ip_total_len);
	if (start >= end)
		return false;
	*off = start;
	*n = end - start;
	return true;
}

bool dp_frame_unwritten_span(struct rte_mbuf *m, uint32_t *off, uint32_t *n)
{
	struct dp_mbuf_priv *pv = dp_priv(m);
	struct rl_pkt fresh;
	const struct rl_pkt *p = &pv->pkt;
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);

	if (!pv->payload_unwritten || m->nb_segs != 1) /* (an emulated NIC's frames are one segment) */
		return false;
	if (!pv->parsed || pv->parse_st != RL_PARSE_OK) {
		if (rl_parse(d, rte_pktmbuf_data_len(m), &fresh) != RL_PARSE_OK)
			return false;
		p = &fresh;
	}
	return payload_span(p, rte_pktmbuf_data_len(m), off, n);
}

void dp_frame_write_zeros(struct rte_mbuf *m)
{
	uint32_t off, n;

	if (dp_frame_unwritten_span(m, &off, &n))
		memset(rte_pktmbuf_mtod(m, uint8_t *) + off, 0, n);
	dp_priv(m)->payload_unwritten = 0;
}

void dp_fabric_host_send(struct dp_fabric *f, uint32_t host, struct rte_mbuf *m,
			 bool payload_unwritten, uint64_t now)
{
	struct dp_host *h = &f->host[host];
	struct dp_chan *c = h->tx;
	uint8_t prio = 0;
	struct dp_mbuf_priv *pv = dp_priv(m);
	struct rl_pkt *p = &pv->pkt;

	h->tx_pkts++;
	h->tx_bytes += rte_pktmbuf_pkt_len(m);
	memset(pv, 0, DP_PRIV_HEAD_LEN);
	pv->payload_unwritten = payload_unwritten;
	if (!c->up) {
		c->drops[DP_DROP_LINK_DOWN]++;
		rte_pktmbuf_free(m);
		return;
	}
	/* The NIC queues by the priority its DSCP maps to, so PFC can pause it;
	 * its own MAC control (PFC) frames go first and are never paused. The
	 * parse travels with the frame (the leaf does not parse again). */
	int st = RL_PARSE_BAD_ARG;
	if (m->nb_segs == 1) {
		st = rl_parse(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m), p);
		pv->parse_st = (int8_t)st;
		pv->parsed = 1;
	}
	if (st == RL_PARSE_OK)
		prio = f->topo->qos.dscp_prio[p->dscp];
	else if (st == RL_PARSE_NOT_IP && p->ethertype == RL_ETHERTYPE_PAUSE) {
		dp_chan_enqueue(c, m, DP_NUM_PRIO, now);
		return;
	}
	if (c->q[prio].f.bytes + rte_pktmbuf_pkt_len(m) > c->q_limit_bytes) {
		c->drops[DP_DROP_QUEUE]++;
		rte_pktmbuf_free(m);
		return;
	}
	dp_chan_enqueue(c, m, prio, now);
}

/* ---- failures: links and switches down and up ---- */

static void reroute(struct dp_fabric *f, uint64_t now)
{
	topo_route_compute(f->routes);
	dp_fabric_sync_groups(f, false);
	if (f->te)
		dp_te_compute(f->te); /* the controller places the flows again */
	/* channels that came back up may hold queued packets */
	for (uint32_t i = 0; i < f->n_chans; i++)
		dp_chan_kick(&f->chans[i], now);
}

int dp_fabric_set_link(struct dp_fabric *f, uint32_t link, bool up, uint64_t now)
{
	if (link >= f->topo->n_links)
		return -EINVAL;
	f->chans[2 * link].up = up;
	f->chans[2 * link + 1].up = up;
	if (!up) {
		dp_chan_flush(&f->chans[2 * link], now);
		dp_chan_flush(&f->chans[2 * link + 1], now);
	}
	topo_route_set_link(f->routes, link, up);
	reroute(f, now);
	return 0;
}

int dp_fabric_set_switch(struct dp_fabric *f, uint32_t sw, bool up, uint64_t now)
{
	if (sw >= f->topo->n_switches)
		return -EINVAL;
	f->sw[sw].up = up;
	topo_route_set_switch(f->routes, sw, up);
	reroute(f, now);
	return 0;
}

static void on_topo_event(void *obj, uint64_t i, uint64_t now)
{
	struct dp_fabric *f = obj;
	const struct topo_event *ev = &f->topo->events[i];

	if (ev->target == TOPO_EVENT_LINK)
		dp_fabric_set_link(f, ev->index, ev->up, now);
	else
		dp_fabric_set_switch(f, ev->index, ev->up, now);
	f->events_applied++;
}


/*
 * Name every node's logical process and put every node on engine f->eng
 * (dp_part_create() moves them to partitions' engines). The LPs' sequence
 * counters are the fabric's: every engine of the run keys by them. Returns
 * 0, or -E2BIG with a message when the fabric has more LPs than keys hold.
 */
static int assign_lps(struct dp_fabric *f, char *err, size_t errlen)
{
	uint32_t n_nodes = DP_LP_FIRST_NODE + f->topo->n_switches + f->topo->n_hosts;

	f->n_lp = dp_lp_arrival(f, f->n_chans);
	if (f->n_lp > DP_LP_MAX) {
		snprintf(err, errlen, "%u switches, hosts and link directions: more than %u", f->n_lp,
			 DP_LP_MAX);
		return -E2BIG;
	}
	f->lp_seq = calloc((size_t)n_nodes * DP_LP_STRIDE, sizeof(*f->lp_seq));
	if (f->lp_seq == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* the NICs' LP schedules from 1: (DP_LP_NICS, 0) is the key of its keyed timers (a
	 * size's start, a lane's proxy wake-up), which no timer it adds may share */
	f->lp_seq[(size_t)DP_LP_NICS * DP_LP_STRIDE] = 1;
	dp_engine_set_lps(f->eng, f->lp_seq, n_nodes);
	for (uint32_t i = 0; i < f->topo->n_switches; i++) {
		f->sw[i].lp = dp_lp_switch(i);
		f->sw[i].eng = f->eng;
	}
	for (uint32_t i = 0; i < f->topo->n_hosts; i++) {
		f->host[i].lp = dp_lp_host(f, i);
		f->host[i].eng = f->eng;
	}
	for (uint32_t i = 0; i < f->n_chans; i++) {
		struct dp_chan *c = &f->chans[i];
		c->lp = dp_lp_node(f, c->from);
		c->rx_lp = dp_lp_node(f, c->to);
		c->arr_key = dp_lp_arrival(f, i);
		c->eng = c->rx_eng = f->eng;
	}
	return 0;
}

/* The fabric's IPv4 lookup: one /32 per host in an rte_lpm. */
static int host_by_lpm(const struct dp_fabric *f, uint32_t addr)
{
	uint32_t nh;

	return rte_lpm_lookup(f->lpm, addr, &nh) == 0 ? (int)nh : -1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/*
 * The tbl8 groups the hosts' /32s take in an rte_lpm: one per /24 holding a
 * host (a rule deeper than 24 bits extends its /24's entry of tbl24 into a
 * group of 256; DPDK 22.11 lib/lpm/rte_lpm.c, add_depth_big). Sized by this,
 * not by the number of hosts: a group is 256 entries of 4 bytes, 1 KiB of
 * DPDK memory, and 24,576 hosts, 16 to a leaf's /24 (topo_build.c), asked
 * for 24 MiB where 1,536 groups serve. At least 1 (a fabric without
 * hosts). Returns the count, or 0 out of memory.
 */
static uint32_t lpm_groups(const struct topo *t)
{
	uint32_t *p = malloc(((size_t)t->n_hosts + 1) * sizeof(*p)), n = 0;

	if (p == NULL)
		return 0;
	for (uint32_t i = 0; i < t->n_hosts; i++)
		p[i] = t->hosts[i].ipv4 >> 8;
	qsort(p, t->n_hosts, sizeof(*p), cmp_u32);
	for (uint32_t i = 0; i < t->n_hosts; i++)
		n += i == 0 || p[i] != p[i - 1];
	free(p);
	return n ? n : 1;
}

/* IPv4 destination -> host: one /32 per host. Returns 0, or -1 with a message in err. */
static int lpm_create(struct dp_fabric *f, char *err, size_t errlen)
{
	const struct topo *t = f->topo;
	char name[RTE_LPM_NAMESIZE];

	snprintf(name, sizeof(name), "rl_lpm_%p", (void *)f); /* unique per process */
	struct rte_lpm_config lc = {.max_rules = t->n_hosts + LPM_SPARE_RULES, .number_tbl8s = lpm_groups(t)};
	if (lc.number_tbl8s == 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	f->lpm = rte_lpm_create(name, SOCKET_ID_ANY, &lc);
	if (f->lpm == NULL) {
		snprintf(err, errlen, "rte_lpm_create: %s", rte_strerror(rte_errno));
		return -ENOMEM;
	}
	for (uint32_t hi = 0; hi < t->n_hosts; hi++)
		if (rte_lpm_add(f->lpm, t->hosts[hi].ipv4, LPM_HOST_DEPTH, hi) < 0) {
			snprintf(err, errlen, "rte_lpm_add: host %s", t->hosts[hi].name);
			return -ENOMEM;
		}
	f->host_of_ipv4 = host_by_lpm;
	return 0;
}

struct dp_fabric *dp_fabric_create(const struct topo *t, struct dp_engine *e,
				   struct rte_mempool *mp, const struct dp_fabric_opts *opt,
				   char *err, size_t errlen)
{
	struct dp_fabric *f = calloc(1, sizeof(*f));

	if (f == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	f->topo = t;
	f->eng = e;
	(void)dp_chan_engine_prefetch(e); /* (-ENOSPC: hints only, the run is the same) */
	f->mp = mp;
	if (opt)
		f->opt = *opt;
	if (rte_pktmbuf_priv_size(mp) < sizeof(struct dp_mbuf_priv)) {
		snprintf(err, errlen, "mbuf pool private area too small (%u < %zu)",
			 rte_pktmbuf_priv_size(mp), sizeof(struct dp_mbuf_priv));
		goto fail;
	}
	if (dp_fabric_build(f, err, errlen) < 0)
		goto fail;
	for (uint32_t i = 0; i < f->n_chans; i++) /* x / rate without a division on every frame */
		f->chans[i].rate_rcp = rte_reciprocal_value_u64(f->chans[i].rate_bps);
	if (assign_lps(f, err, errlen) < 0)
		goto fail;
	if (lpm_create(f, err, errlen) < 0)
		goto fail;
	if (dp_flows_init(&f->flows, f->opt.flow_capacity, err, errlen) < 0)
		goto fail;
	for (uint32_t i = 0; i < t->n_events; i++)
		if (dp_timer_add(e, t->events[i].at_ns, on_topo_event, f, i) < 0) {
			snprintf(err, errlen, "event %u: no timer left (out of memory)", i);
			goto fail;
		}
	return f;
fail:
	dp_fabric_destroy(f);
	return NULL;
}

/* f freed; its tables on DPDK's heap too unless leave_dpdk_heap (dp_fabric_destroy_at_exit). */
static void fabric_free(struct dp_fabric *f, bool leave_dpdk_heap)
{
	if (f == NULL)
		return;
	dp_swx_detach(f);
	for (uint32_t i = 0; f->chans && i < f->n_chans; i++)
		dp_chan_free(&f->chans[i]);
	if (f->lpm && !leave_dpdk_heap)
		rte_lpm_free(f->lpm);
	if (leave_dpdk_heap)
		dp_flows_free_at_exit(&f->flows);
	else
		dp_flows_free(&f->flows);
	dp_fabric_build_free(f);
	free(f->lp_seq);
	free(f);
}

void dp_fabric_destroy(struct dp_fabric *f)
{
	fabric_free(f, false);
}

void dp_fabric_destroy_at_exit(struct dp_fabric *f)
{
	fabric_free(f, true);
}
