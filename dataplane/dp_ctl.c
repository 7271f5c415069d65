/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_ctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

struct ctl_cmd {
	bool is_switch;
	bool up;
	uint32_t index;
};

struct dp_ctl {
	struct dp_fabric *fab;
	struct rte_ring *ring;
	uint64_t applied;
};

/* DPDK telemetry callbacks carry no context: the one registered fabric. */
static struct dp_ctl *the_ctl;

static void chan_name(const struct dp_fabric *f, const struct dp_chan *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s>%s", rl_topo_node_name(f->topo, c->from),
		 rl_topo_node_name(f->topo, c->to));
}

static int cmd_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	if (the_ctl == NULL)
		return -ENODEV; /* shutting down */
	const struct dp_fabric *f = the_ctl->fab;
	char s[256];

	(void)cmd;
	(void)params;
	rl_topo_summary(f->topo, s, sizeof(s));
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "topology", s);
	rte_tel_data_add_dict_string(d, "clock", f->eng->mode == DP_CLOCK_LIVE ? "live" : "virtual");
	rte_tel_data_add_dict_u64(d, "now_ns", f->eng->now_ns);
	rte_tel_data_add_dict_u64(d, "events", f->eng->fired);
	rte_tel_data_add_dict_u64(d, "route_changes", f->route_changes);
	rte_tel_data_add_dict_u64(d, "commands_applied", the_ctl->applied);
	return 0;
}

static int cmd_links(const char *cmd, const char *params, struct rte_tel_data *d)
{
	if (the_ctl == NULL)
		return -ENODEV; /* shutting down */
	const struct dp_fabric *f = the_ctl->fab;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (uint32_t i = 0; i < f->n_chans; i++) {
		const struct dp_chan *c = &f->chans[i];
		struct rte_tel_data *x = rte_tel_data_alloc();
		char name[80];
		uint64_t drops = 0;

		if (x == NULL)
			return -ENOMEM;
		for (int k = 0; k < DP_DROP_COUNT; k++)
			drops += c->drops[k];
		rte_tel_data_start_dict(x);
		rte_tel_data_add_dict_string(x, "link", f->topo->links[c->link].name);
		rte_tel_data_add_dict_string(x, "state", c->up ? "up" : "down");
		rte_tel_data_add_dict_u64(x, "tx_pkts", c->tx_pkts);
		rte_tel_data_add_dict_u64(x, "tx_bytes", c->tx_bytes);
		rte_tel_data_add_dict_u64(x, "busy_ns", c->busy_ns);
		rte_tel_data_add_dict_u64(x, "queue_bytes", dp_chan_queued_bytes(c));
		rte_tel_data_add_dict_u64(x, "pfc_tx", c->pfc_tx);
		rte_tel_data_add_dict_u64(x, "paused_mask", pfc_pause_mask(&c->pause, f->eng->now_ns));
		rte_tel_data_add_dict_u64(x, "drops", drops);
		chan_name(f, c, name, sizeof(name));
		rte_tel_data_add_dict_container(d, name, x, 0);
	}
	return 0;
}

static int cmd_queues(const char *cmd, const char *params, struct rte_tel_data *d)
{
	if (the_ctl == NULL)
		return -ENODEV; /* shutting down */
	const struct dp_fabric *f = the_ctl->fab;
	int l = params ? rl_topo_link_by_name(f->topo, params) : -1;

	(void)cmd;
	if (l < 0)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (int dir = 0; dir < 2; dir++) {
		const struct dp_chan *c = &f->chans[2 * l + dir];
		char name[80];
		struct rte_tel_data *x = rte_tel_data_alloc();
		if (x == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(x);
		for (int p = 0; p < DP_NUM_PRIO; p++) {
			char k[32];
			snprintf(k, sizeof(k), "prio%d_bytes", p);
			rte_tel_data_add_dict_u64(x, k, c->q[p].bytes);
			snprintf(k, sizeof(k), "prio%d_peak_bytes", p);
			rte_tel_data_add_dict_u64(x, k, c->q_peak_bytes[p]);
			snprintf(k, sizeof(k), "prio%d_tx_pkts", p);
			rte_tel_data_add_dict_u64(x, k, c->q_tx_pkts[p]);
			snprintf(k, sizeof(k), "prio%d_xoff_rx", p);
			rte_tel_data_add_dict_u64(x, k, c->pause.xoff_rx[p]);
		}
		chan_name(f, c, name, sizeof(name));
		rte_tel_data_add_dict_container(d, name, x, 0);
	}
	return 0;
}

static int cmd_switches(const char *cmd, const char *params, struct rte_tel_data *d)
{
	if (the_ctl == NULL)
		return -ENODEV; /* shutting down */
	const struct dp_fabric *f = the_ctl->fab;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (uint32_t s = 0; s < f->topo->n_switches; s++) {
		const struct dp_switch *sw = &f->sw[s];
		struct rte_tel_data *x = rte_tel_data_alloc();
		if (x == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(x);
		rte_tel_data_add_dict_string(x, "role", rl_role_name(sw->cfg->role));
		rte_tel_data_add_dict_string(x, "state", sw->up ? "up" : "down");
		rte_tel_data_add_dict_u64(x, "rx_pkts", sw->rx_pkts);
		rte_tel_data_add_dict_u64(x, "fwd_pkts", sw->fwd_pkts);
		rte_tel_data_add_dict_u64(x, "drops", dp_switch_drops(sw));
		rte_tel_data_add_dict_u64(x, "arp_replies", sw->arp_replies);
		rte_tel_data_add_dict_u64(x, "pfc_rx", sw->pfc_rx);
		rte_tel_data_add_dict_u64(x, "ecn_marked", sw->ecn_marked);
		rte_tel_data_add_dict_u64(x, "buffer_bytes", pfc_mmu_stats(sw->mmu)->bytes);
		rte_tel_data_add_dict_u64(x, "buffer_peak_bytes", pfc_mmu_stats(sw->mmu)->peak_bytes);
		rte_tel_data_add_dict_container(d, sw->cfg->name, x, 0);
	}
	return 0;
}

static int cmd_drops(const char *cmd, const char *params, struct rte_tel_data *d)
{
	if (the_ctl == NULL)
		return -ENODEV; /* shutting down */
	const struct dp_fabric *f = the_ctl->fab;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (uint32_t s = 0; s < f->topo->n_switches; s++) {
		const struct dp_switch *sw = &f->sw[s];
		const struct pfc_mmu_stats *ms = pfc_mmu_stats(sw->mmu);
		struct rte_tel_data *x = rte_tel_data_alloc();
		char k[48];
		if (x == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(x);
		for (int r = 0; r < DP_DROP_COUNT; r++)
			rte_tel_data_add_dict_u64(x, dp_drop_name((enum dp_drop)r), sw->drops[r]);
		for (int v = 1; v < PFC_MMU_VERDICT_COUNT; v++) {
			snprintf(k, sizeof(k), "buffer_%s", pfc_mmu_verdict_str((enum pfc_mmu_verdict)v));
			rte_tel_data_add_dict_u64(x, k, ms->drops[v]);
		}
		rte_tel_data_add_dict_container(d, sw->cfg->name, x, 0);
	}
	/* link-level drops (loss, link down, host NIC queues) */
	uint64_t by[DP_DROP_COUNT] = {0};
	for (uint32_t i = 0; i < f->n_chans; i++)
		for (int r = 0; r < DP_DROP_COUNT; r++)
			by[r] += f->chans[i].drops[r];
	struct rte_tel_data *x = rte_tel_data_alloc();
	if (x == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(x);
	for (int r = 0; r < DP_DROP_COUNT; r++)
		rte_tel_data_add_dict_u64(x, dp_drop_name((enum dp_drop)r), by[r]);
	rte_tel_data_add_dict_container(d, "links", x, 0);
	return 0;
}

static int cmd_pfc(const char *cmd, const char *params, struct rte_tel_data *d)
{
	if (the_ctl == NULL)
		return -ENODEV; /* shutting down */
	const struct dp_fabric *f = the_ctl->fab;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (uint32_t i = 0; i < f->n_chans; i++) {
		const struct dp_chan *c = &f->chans[i];
		struct rte_tel_data *x = rte_tel_data_alloc();
		char name[80];
		uint64_t xoff = 0, xon = 0, paused = 0;
		if (x == NULL)
			return -ENOMEM;
		for (int p = 0; p < DP_NUM_PRIO; p++) {
			xoff += c->pause.xoff_rx[p];
			xon += c->pause.xon_rx[p];
			paused += pfc_pause_paused_ns(&c->pause, (unsigned)p, f->eng->now_ns);
		}
		rte_tel_data_start_dict(x);
		rte_tel_data_add_dict_u64(x, "pfc_frames_sent", c->pfc_tx);
		rte_tel_data_add_dict_u64(x, "xoff_received", xoff);
		rte_tel_data_add_dict_u64(x, "xon_received", xon);
		rte_tel_data_add_dict_u64(x, "paused_ns", paused);
		rte_tel_data_add_dict_u64(x, "paused_mask", pfc_pause_mask(&c->pause, f->eng->now_ns));
		chan_name(f, c, name, sizeof(name));
		rte_tel_data_add_dict_container(d, name, x, 0);
	}
	return 0;
}

static int cmd_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	if (the_ctl == NULL)
		return -ENODEV; /* shutting down */
	const struct dp_fabric *f = the_ctl->fab;
	int s = params ? rl_topo_switch_by_name(f->topo, params) : -1;

	(void)cmd;
	if (s < 0)
		return -EINVAL;
	const struct dp_switch *sw = &f->sw[s];
	rte_tel_data_start_dict(d);
	for (uint16_t p = 0; p < sw->cfg->n_ports; p++) {
		char k[80];
		snprintf(k, sizeof(k), "%u:%s", p,
			 rl_topo_node_name(f->topo, sw->cfg->ports[p].peer));
		rte_tel_data_add_dict_u64(d, k, sw->port_tx_pkts[p]);
	}
	return 0;
}

/* "NAME,up" / "NAME,down" into a queued command. */
static int queue_set(const char *params, bool is_switch)
{
	char name[96];
	const char *comma = params ? strchr(params, ',') : NULL;
	struct ctl_cmd *c;

	if (comma == NULL || (size_t)(comma - params) >= sizeof(name))
		return -EINVAL;
	memcpy(name, params, (size_t)(comma - params));
	name[comma - params] = '\0';
	int idx = is_switch ? rl_topo_switch_by_name(the_ctl->fab->topo, name)
			    : rl_topo_link_by_name(the_ctl->fab->topo, name);
	if (idx < 0 || (strcmp(comma + 1, "up") && strcmp(comma + 1, "down")))
		return -EINVAL;
	c = malloc(sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->is_switch = is_switch;
	c->up = strcmp(comma + 1, "up") == 0;
	c->index = (uint32_t)idx;
	if (rte_ring_enqueue(the_ctl->ring, c) != 0) {
		free(c);
		return -ENOSPC;
	}
	return 0;
}

static int cmd_link_set(const char *cmd, const char *params, struct rte_tel_data *d)
{
	if (the_ctl == NULL)
		return -ENODEV; /* shutting down */
	(void)cmd;
	int rc = queue_set(params, false);
	if (rc == 0)
		rte_tel_data_string(d, "queued");
	return rc;
}

static int cmd_switch_set(const char *cmd, const char *params, struct rte_tel_data *d)
{
	if (the_ctl == NULL)
		return -ENODEV; /* shutting down */
	(void)cmd;
	int rc = queue_set(params, true);
	if (rc == 0)
		rte_tel_data_string(d, "queued");
	return rc;
}

struct dp_ctl *dp_ctl_create(struct dp_fabric *f, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{"/rocelab/info", cmd_info, "Topology, clock, time and event counts."},
		{"/rocelab/links", cmd_links, "Per link direction: state, packets, bytes, queue, PFC."},
		{"/rocelab/queues", cmd_queues, "Per priority queues of a link. Parameter: link name."},
		{"/rocelab/switches", cmd_switches, "Per switch counters."},
		{"/rocelab/drops", cmd_drops, "Drops by switch and reason, and on links."},
		{"/rocelab/pfc", cmd_pfc, "PFC frames sent and received, pause time, per link direction."},
		{"/rocelab/ports", cmd_ports, "Packets forwarded per port of a switch. Parameter: switch."},
		{"/rocelab/link_set", cmd_link_set, "Take a link down or up. Parameters: LINK,up|down."},
		{"/rocelab/switch_set", cmd_switch_set, "Take a switch down or up. Parameters: SWITCH,up|down."},
	};
	struct dp_ctl *c;

	if (the_ctl != NULL) {
		snprintf(err, errlen, "telemetry: one fabric per process");
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->fab = f;
	c->ring = rte_ring_create("rl_ctl", 64, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (c->ring == NULL) {
		snprintf(err, errlen, "telemetry: command ring: %s", rte_strerror(rte_errno));
		free(c);
		return NULL;
	}
	the_ctl = c;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		rte_telemetry_register_cmd(cmds[i].name, cmds[i].fn, cmds[i].help);
	return c;
}

uint32_t dp_ctl_poll(struct dp_ctl *c, uint64_t now_ns)
{
	void *p;
	uint32_t n = 0;

	while (rte_ring_dequeue(c->ring, &p) == 0) {
		struct ctl_cmd *cmd = p;
		if (cmd->is_switch)
			dp_fabric_set_switch(c->fab, cmd->index, cmd->up, now_ns);
		else
			dp_fabric_set_link(c->fab, cmd->index, cmd->up, now_ns);
		free(cmd);
		c->applied++;
		n++;
	}
	return n;
}

void dp_ctl_destroy(struct dp_ctl *c)
{
	if (c == NULL)
		return;
	/* telemetry may still call in: leave the_ctl pointing at a fabric that is going away
	 * only until the process exits; commands registered cannot be unregistered in 22.11 */
	rte_ring_free(c->ring);
	c->ring = NULL;
	free(c);
	the_ctl = NULL;
}
