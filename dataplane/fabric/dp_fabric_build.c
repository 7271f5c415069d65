/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Construction of the fabric's state without DPDK (dp_fabric_build.h):
 * channels (link side), switches (buffers, groups, flowlet tables), hosts,
 * routes.
 */
#include "dp_fabric_build.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_mem.h"

#define DWRR_QUANTUM 2048u                  /* bytes per unit of weight and round */
#define HOST_QUEUE_DEFAULT (512u * 1024)    /* bytes per priority of a host NIC */
#define RNG_GOLDEN 0x9e3779b97f4a7c15ull    /* 2^64 / golden ratio: spreads the links' loss seeds */
#define VLAN_TAG_LEN 4
#define ETH_HDR_LEN 14
#define FLOWLET_TABLE_SLOTS 4096
#define MMU_ERR_LEN 200

struct dp_chan *dp_fabric_chan_from(struct dp_fabric *f, uint32_t link, struct topo_node_ref from)
{
	if (link >= f->topo->n_links)
		return NULL;
	for (int d = 0; d < 2; d++) {
		struct dp_chan *c = &f->chans[2 * link + d];
		if (c->from.kind == from.kind && c->from.index == from.index)
			return c;
	}
	return NULL;
}

/* ---- construction ---- */

static const uint8_t *node_port_mac(const struct topo *t, struct topo_node_ref n, uint16_t port)
{
	if (n.kind == TOPO_NODE_HOST)
		return t->hosts[n.index].mac;
	return t->switches[n.index].ports[port].mac;
}

static int init_chan(struct dp_fabric *f, struct dp_chan *c, uint32_t l, int dir, char *err,
		     size_t errlen)
{
	const struct topo *t = f->topo;
	const struct topo_link *lk = &t->links[l];

	c->fab = f;
	c->link = l;
	c->dir = (uint8_t)dir;
	c->from = lk->end[dir];
	c->to = lk->end[!dir];
	c->from_port = lk->port[dir];
	c->to_port = lk->port[!dir];
	memcpy(c->src_mac, node_port_mac(t, c->from, c->from_port), 6);
	memcpy(c->dst_mac, node_port_mac(t, c->to, c->to_port), 6);
	c->rate_bps = lk->rate_bps;
	c->delay_ns = lk->delay_ns;
	c->loss = lk->loss;
	c->up = true;
	c->q_limit_bytes = f->opt.host_queue_bytes ? f->opt.host_queue_bytes : HOST_QUEUE_DEFAULT;
	c->rng = (f->opt.seed ? f->opt.seed : 1) * RNG_GOLDEN + 2 * l + (uint64_t)dir + 1;
	for (int p = 0; p < DP_NUM_PRIO; p++)
		c->q[p].quantum = DWRR_QUANTUM * (t->qos.dwrr_weight[p] ? t->qos.dwrr_weight[p] : 1);
	if (f->opt.watchdog && c->from.kind == TOPO_NODE_SWITCH) {
		struct pfc_watchdog_config wc = *f->opt.watchdog;
		wc.prio_mask = t->qos.lossless_mask;
		if (pfc_watchdog_init(&c->wd, &wc, 0, err, errlen) < 0)
			return -EINVAL;
		c->wd_on = true;
	}
	return pfc_pause_init(&c->pause, lk->rate_bps, err, errlen) < 0 ? -EINVAL : 0;
}

static int init_switch(struct dp_fabric *f, uint32_t si, char *err, size_t errlen)
{
	const struct topo *t = f->topo;
	const struct topo_switch *cfg = &t->switches[si];
	struct dp_switch *s = &f->sw[si];
	struct pfc_mmu_config mc;
	struct pfc_mmu_port_config *pc = calloc(cfg->n_ports ? cfg->n_ports : 1, sizeof(*pc));

	s->idx = si;
	s->cfg = cfg;
	s->up = true;
	/* (on lines of their own: switches of two partitions never share one) */
	s->out = rl_zalloc_lines(cfg->n_ports, sizeof(*s->out));
	s->pfc_timer_at = rl_zalloc_lines(cfg->n_ports, sizeof(*s->pfc_timer_at));
	s->port_tx_pkts = rl_zalloc_lines(cfg->n_ports, sizeof(*s->port_tx_pkts));
	s->group = rl_zalloc_lines(t->n_leaves, sizeof(*s->group));
	if (!pc || !s->out || !s->pfc_timer_at || !s->port_tx_pkts || !s->group) {
		free(pc);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (uint16_t p = 0; p < cfg->n_ports; p++) {
		const struct topo_link *lk = &t->links[cfg->ports[p].link];
		struct topo_node_ref me = {TOPO_NODE_SWITCH, si};
		s->out[p] = dp_fabric_chan_from(f, cfg->ports[p].link, me);
		/* largest frame: IP MTU + Ethernet header + one 802.1Q tag */
		pfc_mmu_port_config_init(&pc[p], lk->rate_bps, lk->delay_ns, lk->mtu + ETH_HDR_LEN + VLAN_TAG_LEN);
	}
	pfc_mmu_config_init(&mc, cfg->buffer_profile, cfg->n_ports, &pc[0]);
	mc.ports = pc;
	mc.lossless_mask = t->qos.lossless_mask;
	mc.seed = (f->opt.seed ? f->opt.seed : 1) + si;
	for (int p = 0; p < DP_NUM_PRIO; p++) {
		mc.ecn[p].enabled = t->qos.ecn;
		mc.ecn[p].kmin_bytes = t->qos.ecn_kmin;
		mc.ecn[p].kmax_bytes = t->qos.ecn_kmax;
		mc.ecn[p].pmax = t->qos.ecn_pmax;
	}
	char merr[MMU_ERR_LEN];
	s->mmu = pfc_mmu_create(&mc, merr, sizeof(merr));
	free(pc);
	if (s->mmu == NULL) {
		snprintf(err, errlen, "switch %s: buffer: %s", cfg->name, merr);
		return -EINVAL;
	}
	if (cfg->lb == TOPO_LB_FLOWLET &&
	    rl_flowlet_init(&s->flowlet, FLOWLET_TABLE_SLOTS, cfg->flowlet_timeout_ns, mc.seed) < 0) {
		snprintf(err, errlen, "switch %s: flowlet table: out of memory", cfg->name);
		return -ENOMEM;
	}
	return 0;
}


void dp_fabric_sync_groups(struct dp_fabric *f, bool first)
{
	const struct topo *t = f->topo;

	for (uint32_t si = 0; si < t->n_switches; si++) {
		struct dp_switch *s = &f->sw[si];
		for (uint32_t L = 0; L < t->n_leaves; L++) {
			struct dp_group *g = &s->group[L];
			unsigned n;
			const uint16_t *ports = topo_route_group(f->routes, si, L, &n);
			uint64_t want = 0;

			for (unsigned i = 0; i < n; i++) {
				int k = -1;
				for (unsigned j = 0; j < g->n; j++)
					if (g->port[j] == ports[i])
						k = (int)j;
				if (k < 0 && g->n < RL_NH_MAX_MEMBERS) {
					k = g->n;
					g->port[g->n++] = ports[i];
				}
				if (k >= 0)
					want |= 1ull << k;
			}
			if (s->cfg->lb == TOPO_LB_RESILIENT && g->n > 0) {
				if (first || g->rs.bucket == NULL) {
					rl_resilient_free(&g->rs);
					/* out of memory: the table stays empty and its packets are
					 * dropped as no_route (counted), never sent to a wrong port */
					if (rl_resilient_init(&g->rs, s->cfg->resilient_buckets, g->n) == 0)
						for (unsigned j = 0; j < g->n; j++)
							if (!(want >> j & 1))
								rl_resilient_remove(&g->rs, j);
				} else {
					for (unsigned j = 0; j < g->n; j++) {
						bool was = g->rs.members >> j & 1, is = want >> j & 1;
						if (was && !is)
							rl_resilient_remove(&g->rs, j);
						else if (!was && is)
							rl_resilient_add(&g->rs, j);
					}
				}
			}
			if (!first && g->up_mask != want)
				f->route_changes++;
			g->up_mask = want;
		}
	}
}

/* The address scheme's host for an IPv4 address (the fabric replaces it with its rte_lpm). */
static int host_by_scheme(const struct dp_fabric *f, uint32_t addr)
{
	return topo_route_host_by_ipv4(f->routes, addr);
}

static void init_host(struct dp_fabric *f, uint32_t hi)
{
	const struct topo *t = f->topo;
	struct dp_host *h = &f->host[hi];
	struct topo_node_ref me = {TOPO_NODE_HOST, hi};

	h->idx = hi;
	h->cfg = &t->hosts[hi];
	h->port_id = -1;
	h->tx = dp_fabric_chan_from(f, t->hosts[hi].link, me);
	h->rx = &f->chans[(h->tx - f->chans) ^ 1];
}

int dp_fabric_build(struct dp_fabric *f, char *err, size_t errlen)
{
	const struct topo *t = f->topo;
	int rc;

	f->n_chans = 2 * t->n_links;
	f->chans = rl_zalloc_lines(f->n_chans, sizeof(*f->chans));
	f->sw = rl_zalloc_lines(t->n_switches, sizeof(*f->sw));
	f->host = rl_zalloc_lines(t->n_hosts, sizeof(*f->host));
	f->routes = topo_route_create(t);
	if (!f->chans || !f->sw || !f->host || !f->routes) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	f->host_of_ipv4 = host_by_scheme;
	for (uint32_t l = 0; l < t->n_links; l++)
		for (int d = 0; d < 2; d++)
			if ((rc = init_chan(f, &f->chans[2 * l + d], l, d, err, errlen)) < 0)
				return rc;
	for (uint32_t si = 0; si < t->n_switches; si++)
		if ((rc = init_switch(f, si, err, errlen)) < 0)
			return rc;
	for (uint32_t hi = 0; hi < t->n_hosts; hi++)
		init_host(f, hi);
	if (topo_route_compute(f->routes) < 0) {
		snprintf(err, errlen, "route computation failed");
		return -EINVAL;
	}
	dp_fabric_sync_groups(f, true);
	return 0;
}

void dp_fabric_build_free(struct dp_fabric *f)
{
	for (uint32_t si = 0; f->sw && si < f->topo->n_switches; si++) {
		struct dp_switch *s = &f->sw[si];
		pfc_mmu_destroy(s->mmu);
		for (uint32_t L = 0; s->group && L < f->topo->n_leaves; L++)
			rl_resilient_free(&s->group[L].rs);
		rl_flowlet_free(&s->flowlet);
		free(s->out);
		free(s->pfc_timer_at);
		free(s->port_tx_pkts);
		free(s->group);
	}
	topo_route_free(f->routes);
	free(f->chans);
	free(f->sw);
	free(f->host);
	f->routes = NULL;
	f->chans = NULL;
	f->sw = NULL;
	f->host = NULL;
}
