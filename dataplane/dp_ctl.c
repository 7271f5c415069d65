/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_ctl.h"
#include "dp_ctl_parse.h"
#include "dp_nic.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_rwlock.h>
#include <rte_telemetry.h>

struct dp_ctl {
	struct dp_fabric *fab;
	const struct dp_nics *nics; /* emulated NICs, or NULL */
	struct rte_ring *ring;
	uint64_t applied;
};

/*
 * DPDK telemetry callbacks carry no context: the one registered fabric. They
 * run on the telemetry thread; the lock keeps dp_ctl_destroy() from freeing
 * what a callback is reading.
 */
static struct dp_ctl *the_ctl;
static rte_rwlock_t the_ctl_lock = RTE_RWLOCK_INITIALIZER;

/* A link direction's key: FROM_to_TO. */
static void chan_name(const struct dp_fabric *f, const struct dp_chan *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s_to_%s", topo_node_name(f->topo, c->from),
		 topo_node_name(f->topo, c->to));
	dp_ctl_key_clean(buf);
}

/*
 * DPDK 22.11 telemetry nests only arrays in a dict, so tables are answered as
 * {"columns": [names], ROW: [values], ...}, at most RTE_TEL_MAX_DICT_ENTRIES
 * rows: a parameter (a name prefix) selects rows on large fabrics.
 */
static int add_columns(struct rte_tel_data *d, const char *const *cols, size_t n)
{
	struct rte_tel_data *a = rte_tel_data_alloc();

	if (a == NULL)
		return -ENOMEM;
	rte_tel_data_start_array(a, RTE_TEL_STRING_VAL);
	for (size_t i = 0; i < n; i++)
		rte_tel_data_add_array_string(a, cols[i]);
	return rte_tel_data_add_dict_container(d, "columns", a, 0);
}

static int add_row(struct rte_tel_data *d, const char *name, const uint64_t *v, size_t n)
{
	struct rte_tel_data *a = rte_tel_data_alloc();

	if (a == NULL)
		return -ENOMEM;
	rte_tel_data_start_array(a, RTE_TEL_U64_VAL);
	for (size_t i = 0; i < n; i++)
		rte_tel_data_add_array_u64(a, v[i]);
	if (rte_tel_data_add_dict_container(d, name, a, 0) < 0) {
		rte_tel_data_free(a);
		return -ENOSPC; /* dict full: ask with a name prefix */
	}
	return 0;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int cmd_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct dp_fabric *f = the_ctl->fab;
	char s[256];

	(void)cmd;
	(void)params;
	topo_summary(f->topo, s, sizeof(s));
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "topology", s);
	rte_tel_data_add_dict_string(d, "clock", f->eng->mode == DP_CLOCK_LIVE ? "live" : "virtual");
	rte_tel_data_add_dict_u64(d, "now_ns", f->eng->now_ns);
	rte_tel_data_add_dict_u64(d, "events", f->eng->fired);
	/* live: how far behind real time the fabric is (0 while it keeps up), and the worst so far */
	rte_tel_data_add_dict_u64(d, "lag_ns", f->eng->lag_ns);
	rte_tel_data_add_dict_u64(d, "lag_max_ns", f->eng->lag_max_ns);
	/* mbufs held by the fabric (queues, wires, ports), for leak checks; read racily */
	rte_tel_data_add_dict_u64(d, "mbufs_in_use", rte_mempool_in_use_count(f->mp));
	rte_tel_data_add_dict_u64(d, "mbufs_total", f->mp->size);
	rte_tel_data_add_dict_u64(d, "route_changes", f->route_changes);
	rte_tel_data_add_dict_u64(d, "commands_applied", the_ctl->applied);
	return 0;
}

static int cmd_links(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *const cols[] = {"up", "tx_pkts", "tx_bytes", "busy_ns", "queue_bytes",
					   "pfc_tx", "paused_mask", "drops"};
	const struct dp_fabric *f = the_ctl->fab;

	(void)cmd;
	rte_tel_data_start_dict(d);
	add_columns(d, cols, N(cols));
	for (uint32_t i = 0; i < f->n_chans; i++) {
		const struct dp_chan *c = &f->chans[i];
		char name[80];

		chan_name(f, c, name, sizeof(name));
		if (!dp_ctl_selected(params, name))
			continue;
		uint64_t v[] = {c->up, c->tx_pkts, c->tx_bytes, c->busy_ns, dp_chan_queued_bytes(c),
				c->pfc_tx, pfc_pause_mask(&c->pause, f->eng->now_ns), dp_chan_drops(c)};
		if (add_row(d, name, v, N(v)) < 0)
			break;
	}
	return 0;
}

static int cmd_queues(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *const cols[] = {"bytes", "peak_bytes", "tx_pkts", "tx_bytes", "xoff_rx",
					   "paused"};
	const struct dp_fabric *f = the_ctl->fab;
	int l = params ? topo_link_by_name(f->topo, params) : -1;

	(void)cmd;
	if (l < 0)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	add_columns(d, cols, N(cols));
	for (int dir = 0; dir < 2; dir++) {
		const struct dp_chan *c = &f->chans[2 * l + dir];
		char name[100], cn[80];
		chan_name(f, c, cn, sizeof(cn));
		for (int p = 0; p < DP_NUM_PRIO; p++) {
			uint64_t v[] = {c->q[p].bytes, c->q_peak_bytes[p], c->q_tx_pkts[p], c->q_tx_bytes[p],
					c->pause.xoff_rx[p],
					!pfc_pause_may_send(&c->pause, (unsigned)p, f->eng->now_ns)};
			snprintf(name, sizeof(name), "%s_prio%d", cn, p);
			add_row(d, name, v, N(v));
		}
	}
	return 0;
}

static int cmd_switches(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *const cols[] = {"up", "rx_pkts", "fwd_pkts", "drops", "arp_replies",
					   "nd_replies", "echo_replies", "pfc_rx", "ecn_marked", "buffer_bytes", "buffer_peak_bytes"};
	const struct dp_fabric *f = the_ctl->fab;

	(void)cmd;
	rte_tel_data_start_dict(d);
	add_columns(d, cols, N(cols));
	for (uint32_t s = 0; s < f->topo->n_switches; s++) {
		const struct dp_switch *sw = &f->sw[s];
		const struct pfc_mmu_stats *ms = pfc_mmu_stats(sw->mmu);
		if (!dp_ctl_selected(params, sw->cfg->name))
			continue;
		uint64_t v[] = {sw->up, sw->rx_pkts, sw->fwd_pkts, dp_switch_drops(sw), sw->arp_replies,
				sw->nd_replies, sw->echo_replies, sw->pfc_rx, sw->ecn_marked, ms->bytes, ms->peak_bytes};
		char k[TOPO_NAME_MAX];
		snprintf(k, sizeof(k), "%s", sw->cfg->name);
		dp_ctl_key_clean(k);
		if (add_row(d, k, v, N(v)) < 0)
			break;
	}
	return 0;
}

static int cmd_drops(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct dp_fabric *f = the_ctl->fab;
	const char *cols[DP_DROP_COUNT + PFC_MMU_VERDICT_COUNT];
	char names[PFC_MMU_VERDICT_COUNT][32];
	size_t nc = 0;

	(void)cmd;
	for (int r = 0; r < DP_DROP_COUNT; r++)
		cols[nc++] = dp_drop_name((enum dp_drop)r);
	for (int v = 1; v < PFC_MMU_VERDICT_COUNT; v++) {
		snprintf(names[v], sizeof(names[v]), "buffer_%s",
			 pfc_mmu_verdict_str((enum pfc_mmu_verdict)v));
		cols[nc++] = names[v];
	}
	rte_tel_data_start_dict(d);
	add_columns(d, cols, nc);
	for (uint32_t s = 0; s < f->topo->n_switches; s++) {
		const struct dp_switch *sw = &f->sw[s];
		const struct pfc_mmu_stats *ms = pfc_mmu_stats(sw->mmu);
		uint64_t v[DP_DROP_COUNT + PFC_MMU_VERDICT_COUNT];
		size_t n = 0;
		if (!dp_ctl_selected(params, sw->cfg->name))
			continue;
		for (int r = 0; r < DP_DROP_COUNT; r++)
			v[n++] = sw->drops[r];
		for (int k = 1; k < PFC_MMU_VERDICT_COUNT; k++)
			v[n++] = ms->drops[k];
		char k[TOPO_NAME_MAX];
		snprintf(k, sizeof(k), "%s", sw->cfg->name);
		dp_ctl_key_clean(k);
		if (add_row(d, k, v, n) < 0)
			return 0;
	}
	/* link-level drops (loss, link down, host NIC queues), summed over links */
	uint64_t by[DP_DROP_COUNT + PFC_MMU_VERDICT_COUNT] = {0};
	for (uint32_t i = 0; i < f->n_chans; i++)
		for (int r = 0; r < DP_DROP_COUNT; r++)
			by[r] += f->chans[i].drops[r];
	if (dp_ctl_selected(params, "links"))
		add_row(d, "links", by, nc);
	return 0;
}

static int cmd_pfc(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *const cols[] = {"pfc_frames_sent", "xoff_received", "xon_received",
					   "paused_ns", "paused_mask"};
	const struct dp_fabric *f = the_ctl->fab;

	(void)cmd;
	rte_tel_data_start_dict(d);
	add_columns(d, cols, N(cols));
	for (uint32_t i = 0; i < f->n_chans; i++) {
		const struct dp_chan *c = &f->chans[i];
		char name[80];
		uint64_t xoff = 0, xon = 0, paused = 0;

		chan_name(f, c, name, sizeof(name));
		if (!dp_ctl_selected(params, name))
			continue;
		for (int p = 0; p < DP_NUM_PRIO; p++) {
			xoff += c->pause.xoff_rx[p];
			xon += c->pause.xon_rx[p];
			paused += pfc_pause_paused_ns(&c->pause, (unsigned)p, f->eng->now_ns);
		}
		uint64_t v[] = {c->pfc_tx, xoff, xon, paused, pfc_pause_mask(&c->pause, f->eng->now_ns)};
		if (add_row(d, name, v, N(v)) < 0)
			break;
	}
	return 0;
}

static int cmd_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct dp_fabric *f = the_ctl->fab;
	int s = params ? topo_switch_by_name(f->topo, params) : -1;

	(void)cmd;
	if (s < 0)
		return -EINVAL;
	const struct dp_switch *sw = &f->sw[s];
	rte_tel_data_start_dict(d);
	for (uint16_t p = 0; p < sw->cfg->n_ports; p++) {
		char k[80];
		snprintf(k, sizeof(k), "port%u_%s", p, topo_node_name(f->topo, sw->cfg->ports[p].peer));
		dp_ctl_key_clean(k);
		rte_tel_data_add_dict_u64(d, k, sw->port_tx_pkts[p]);
	}
	return 0;
}

static int cmd_flows(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *const cols[] = {"flow", "packets", "bytes", "path_changes", "path"};
	const struct dp_fabric *f = the_ctl->fab;
	const struct dp_flow *top[200];
	uint32_t n = dp_flows_top(&f->flows, top, 200);

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	add_columns(d, cols, N(cols));
	for (uint32_t i = 0; i < n; i++) {
		struct rte_tel_data *a = rte_tel_data_alloc();
		char k[32], name[96], path[RTE_TEL_MAX_STRING_LEN], num[32];
		if (a == NULL)
			return -ENOMEM;
		rte_tel_data_start_array(a, RTE_TEL_STRING_VAL);
		dp_flow_name(top[i], name, sizeof(name));
		dp_flow_path(top[i], f->topo, path, sizeof(path));
		rte_tel_data_add_array_string(a, name);
		snprintf(num, sizeof(num), "%" PRIu64, top[i]->pkts);
		rte_tel_data_add_array_string(a, num);
		snprintf(num, sizeof(num), "%" PRIu64, top[i]->bytes);
		rte_tel_data_add_array_string(a, num);
		snprintf(num, sizeof(num), "%" PRIu64, top[i]->path_changes);
		rte_tel_data_add_array_string(a, num);
		rte_tel_data_add_array_string(a, path);
		snprintf(k, sizeof(k), "flow%u", i);
		if (rte_tel_data_add_dict_container(d, k, a, 0) < 0) {
			rte_tel_data_free(a);
			break;
		}
	}
	return 0;
}

/*
 * One row per emulated host: its NIC's counters, in the order of
 * ne_counter_names. ne_nic_get_counters() copies 64-bit words the engine
 * thread keeps writing: read racily as the other tables, never torn.
 */
static int cmd_nics(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct dp_nics *ns = the_ctl->nics;
	const struct dp_fabric *f = the_ctl->fab;
	size_t nc = 0;

	(void)cmd;
	while (ne_counter_names[nc] != NULL)
		nc++;
	if (nc != sizeof(struct ne_counters) / sizeof(uint64_t))
		return -EINVAL; /* names and struct out of step (ne_nic.c asserts they are not) */
	rte_tel_data_start_dict(d);
	add_columns(d, ne_counter_names, nc);
	for (uint32_t i = 0; ns != NULL && i < ns->n; i++) {
		const char *host = f->topo->hosts[ns->h[i].host].name;
		struct ne_counters cnt;
		uint64_t v[sizeof(cnt) / sizeof(uint64_t)];
		char k[TOPO_NAME_MAX];

		if (!dp_ctl_selected(params, host))
			continue;
		ne_nic_get_counters(ns->h[i].nic, &cnt);
		memcpy(v, &cnt, sizeof(v)); /* struct ne_counters is nc uint64_t in name order */
		snprintf(k, sizeof(k), "%s", host);
		dp_ctl_key_clean(k);
		if (add_row(d, k, v, nc) < 0)
			break;
	}
	return 0;
}

/* "NAME,up" / "NAME,down" into a queued command (applied by dp_ctl_poll()). */
static int queue_set(const char *params, bool is_switch)
{
	struct dp_ctl_set *c = malloc(sizeof(*c));

	if (c == NULL)
		return -ENOMEM;
	int rc = dp_ctl_parse_set(the_ctl->fab->topo, params, is_switch, c);
	if (rc == 0 && rte_ring_enqueue(the_ctl->ring, c) != 0)
		rc = -ENOSPC;
	if (rc < 0)
		free(c);
	return rc;
}

static int cmd_link_set(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	int rc = queue_set(params, false);
	if (rc == 0)
		rte_tel_data_string(d, "queued");
	return rc;
}

static int cmd_switch_set(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	int rc = queue_set(params, true);
	if (rc == 0)
		rte_tel_data_string(d, "queued");
	return rc;
}

/* Each command runs under the read lock, and not at all once the fabric is gone. */
#define LOCKED(fn)                                                                              \
	static int fn##_locked(const char *cmd, const char *params, struct rte_tel_data *d)    \
	{                                                                                      \
		rte_rwlock_read_lock(&the_ctl_lock);                                           \
		int rc = the_ctl ? fn(cmd, params, d) : -ENODEV;                               \
		rte_rwlock_read_unlock(&the_ctl_lock);                                         \
		return rc;                                                                     \
	}
LOCKED(cmd_info)
LOCKED(cmd_links)
LOCKED(cmd_queues)
LOCKED(cmd_switches)
LOCKED(cmd_drops)
LOCKED(cmd_pfc)
LOCKED(cmd_flows)
LOCKED(cmd_ports)
LOCKED(cmd_nics)
LOCKED(cmd_link_set)
LOCKED(cmd_switch_set)

struct dp_ctl *dp_ctl_create(struct dp_fabric *f, const struct dp_nics *nics, char *err,
			     size_t errlen)
{
	static const struct {
		const char *name;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{"/rocelab/info", cmd_info_locked, "Topology, clock, time and event counts."},
		{"/rocelab/links", cmd_links_locked, "Per link direction (FROM_to_TO): state, packets, bytes, queue, PFC. Parameter: name prefix."},
		{"/rocelab/queues", cmd_queues_locked, "Per priority queues of both directions of a link. Parameter: link name."},
		{"/rocelab/switches", cmd_switches_locked, "Per switch counters. Parameter: name prefix."},
		{"/rocelab/drops", cmd_drops_locked, "Drops by switch and reason, and summed over links. Parameter: name prefix."},
		{"/rocelab/pfc", cmd_pfc_locked, "PFC frames sent and received, pause time, per link direction. Parameter: name prefix."},
		{"/rocelab/flows", cmd_flows_locked, "The 200 largest flows: name, packets, bytes, path changes, path (switch:port)."},
		{"/rocelab/ports", cmd_ports_locked, "Packets forwarded per port of a switch. Parameter: switch."},
		{"/rocelab/nics", cmd_nics_locked, "Per emulated host: its NIC's counters (rxe's names and ours). Parameter: name prefix."},
		{"/rocelab/link_set", cmd_link_set_locked, "Take a link down or up. Parameters: LINK,up|down."},
		{"/rocelab/switch_set", cmd_switch_set_locked, "Take a switch down or up. Parameters: SWITCH,up|down."},
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
	c->nics = nics;
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

unsigned dp_ctl_pending(const struct dp_ctl *c)
{
	return c ? rte_ring_count(c->ring) : 0;
}

uint32_t dp_ctl_poll(struct dp_ctl *c, uint64_t now_ns)
{
	void *p;
	uint32_t n = 0;

	while (rte_ring_dequeue(c->ring, &p) == 0) {
		struct dp_ctl_set *cmd = p;
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
	rte_rwlock_write_lock(&the_ctl_lock);
	the_ctl = NULL;
	rte_rwlock_write_unlock(&the_ctl_lock);
	void *p;
	while (rte_ring_dequeue(c->ring, &p) == 0)
		free(p); /* commands never applied */
	rte_ring_free(c->ring);
	free(c);
}
