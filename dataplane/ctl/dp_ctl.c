/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_ctl.h"
#include "dp_ctl_parse.h"
#include "dp_nic.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_rwlock.h>
#include <rte_telemetry.h>

struct dp_ask;

struct dp_ctl {
	struct dp_fabric *fab;
	const struct dp_nics *nics; /* emulated NICs, or NULL */
	struct rte_ring *ring;
	uint64_t applied;
	/* deferred (under mpirun): read commands wait here for dp_ctl_serve() */
	bool deferred;
	pthread_mutex_t mu;
	pthread_cond_t served;
	struct dp_ask *asks; /* waiting, newest first */
	unsigned n_asks;
	bool closing;        /* dp_ctl_destroy(): nothing waits any more */
	/* partitions: the time and events dp_ctl_note() saw last (f->eng runs only the global events) */
	bool noted;
	uint64_t noted_now, noted_events;
	/* the run's start on the fabric's clock (dp_ctl_start), for elapsed_ns */
	bool started;
	uint64_t start_ns;
};

/*
 * DPDK telemetry callbacks carry no context: the one registered fabric. They
 * run on the telemetry thread; the lock keeps dp_ctl_destroy() from freeing
 * what a callback is reading.
 */
static struct dp_ctl *the_ctl;
static rte_rwlock_t the_ctl_lock = RTE_RWLOCK_INITIALIZER;

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the tables' rows: one computation for the live fabric and for the view ---- */

static const char *const link_cols[] = {"up", "tx_pkts", "tx_bytes", "busy_ns", "queue_bytes",
					"pfc_tx", "paused_mask", "drops"};
static const char *const pfc_cols[] = {"pfc_frames_sent", "xoff_received", "xon_received",
				       "paused_ns", "paused_mask"};
static const char *const queue_cols[] = {"bytes", "peak_bytes", "tx_pkts", "tx_bytes", "xoff_rx",
					 "paused"};
static const char *const switch_cols[] = {"up", "rx_pkts", "fwd_pkts", "drops", "arp_replies",
					  "nd_replies", "echo_replies", "pfc_rx", "ecn_marked",
					  "buffer_bytes", "buffer_peak_bytes"};

/*
 * The view (dp_ctl_view_pack) holds every row of every table, per channel:
 * link, pfc, a queue row per priority, drops by reason; then per switch:
 * switch, drops (by reason, then the MMU's verdicts), packets per port.
 */
enum {
	LINK_W = N(link_cols),
	PFC_W = N(pfc_cols),
	QUEUE_W = N(queue_cols),
	SWITCH_W = N(switch_cols),
	DROPS_W = DP_DROP_COUNT + PFC_MMU_VERDICT_COUNT - 1,
	OFF_PFC = LINK_W,
	OFF_QUEUE = OFF_PFC + PFC_W,
	OFF_CHAN_DROPS = OFF_QUEUE + QUEUE_W * DP_NUM_PRIO,
	CHAN_W = OFF_CHAN_DROPS + DP_DROP_COUNT,
};

static void link_row(const struct dp_chan *c, uint64_t now, uint64_t *v)
{
	uint64_t r[] = {c->up, dp_count_chan_tx_pkts(c), dp_count_chan_tx_bytes(c), c->busy_ns, dp_count_chan_queued(c),
			c->pfc_tx, pfc_pause_mask(&c->pause, now), dp_count_chan_drops(c)};
	memcpy(v, r, sizeof(r));
}

static void pfc_row(const struct dp_chan *c, uint64_t now, uint64_t *v)
{
	uint64_t xoff = 0, xon = 0, paused = 0;

	for (int p = 0; p < DP_NUM_PRIO; p++) {
		xoff += c->pause.xoff_rx[p];
		xon += c->pause.xon_rx[p];
		paused += pfc_pause_paused_ns(&c->pause, (unsigned)p, now);
	}
	uint64_t r[] = {c->pfc_tx, xoff, xon, paused, pfc_pause_mask(&c->pause, now)};
	memcpy(v, r, sizeof(r));
}

static void queue_row(const struct dp_chan *c, int p, uint64_t now, uint64_t *v)
{
	uint64_t r[] = {c->q[p].f.bytes, c->q[p].peak_bytes, c->q[p].tx_pkts, c->q[p].tx_bytes,
			c->pause.xoff_rx[p], !pfc_pause_may_send(&c->pause, (unsigned)p, now)};
	memcpy(v, r, sizeof(r));
}

static void switch_row(const struct dp_switch *sw, uint64_t *v)
{
	const struct pfc_mmu_stats *ms = pfc_mmu_stats(sw->mmu);
	uint64_t r[] = {sw->up, sw->rx_pkts, sw->fwd_pkts, dp_count_switch_drops(sw), sw->arp_replies,
			sw->nd_replies, sw->echo_replies, sw->pfc_rx, sw->ecn_marked, ms->bytes,
			ms->peak_bytes};
	memcpy(v, r, sizeof(r));
}

static void drops_row(const struct dp_switch *sw, uint64_t *v)
{
	const struct pfc_mmu_stats *ms = pfc_mmu_stats(sw->mmu);
	size_t n = 0;

	for (int r = 0; r < DP_DROP_COUNT; r++)
		v[n++] = sw->drops[r];
	for (int k = 1; k < PFC_MMU_VERDICT_COUNT; k++)
		v[n++] = ms->drops[k];
}

/* Where switch s's rows start in the view (every switch before it has its ports' width). */
static size_t sw_view_off(const struct dp_fabric *f, uint32_t s)
{
	size_t off = (size_t)f->n_chans * CHAN_W;

	for (uint32_t k = 0; k < s; k++)
		off += SWITCH_W + DROPS_W + f->sw[k].cfg->n_ports;
	return off;
}

/* Words of one NIC's row (struct ne_counters: every field a uint64_t count). */
#define NIC_W (sizeof(struct ne_counters) / sizeof(uint64_t))

/* Where the NICs' rows start in the view: after every switch's. */
static size_t nics_view_off(const struct dp_fabric *f)
{
	return sw_view_off(f, f->topo->n_switches);
}

size_t dp_ctl_view_len(const struct dp_fabric *f, const struct dp_nics *ns)
{
	return nics_view_off(f) + (ns ? (size_t)ns->n * NIC_W : 0);
}

void dp_ctl_view_pack(const struct dp_fabric *f, const struct dp_nics *ns, uint64_t now, uint64_t *v)
{
	for (uint32_t i = 0; ns && i < ns->n; i++) {
		struct ne_counters cnt;
		ne_nic_get_counters(ns->h[i].nic, &cnt);
		memcpy(v + nics_view_off(f) + (size_t)i * NIC_W, &cnt, sizeof(cnt));
	}
	for (uint32_t i = 0; i < f->n_chans; i++, v += CHAN_W) {
		const struct dp_chan *c = &f->chans[i];
		link_row(c, now, v);
		pfc_row(c, now, v + OFF_PFC);
		for (int p = 0; p < DP_NUM_PRIO; p++)
			queue_row(c, p, now, v + OFF_QUEUE + p * QUEUE_W);
		memcpy(v + OFF_CHAN_DROPS, c->drops, sizeof(c->drops));
	}
	for (uint32_t s = 0; s < f->topo->n_switches; s++) {
		const struct dp_switch *sw = &f->sw[s];
		switch_row(sw, v);
		drops_row(sw, v + SWITCH_W);
		memcpy(v + SWITCH_W + DROPS_W, sw->port_tx_pkts, sw->cfg->n_ports * sizeof(uint64_t));
		v += SWITCH_W + DROPS_W + sw->cfg->n_ports;
	}
}

/*
 * What a command reads: the fabric itself (one process), or the view summed
 * over the ranks (deferred), where only the up columns come from f (every
 * rank applies the same link and switch changes; the sum would count them
 * once per rank).
 */
struct src {
	const struct dp_fabric *f;
	const uint64_t *view; /* NULL: read f */
	uint64_t now, events;
};

static const uint64_t *get_link(const struct src *s, uint32_t i, uint64_t *tmp)
{
	if (s->view == NULL) {
		link_row(&s->f->chans[i], s->now, tmp);
		return tmp;
	}
	memcpy(tmp, s->view + (size_t)i * CHAN_W, LINK_W * sizeof(*tmp));
	tmp[0] = s->f->chans[i].up;
	return tmp;
}

static const uint64_t *get_pfc(const struct src *s, uint32_t i, uint64_t *tmp)
{
	if (s->view)
		return s->view + (size_t)i * CHAN_W + OFF_PFC;
	pfc_row(&s->f->chans[i], s->now, tmp);
	return tmp;
}

static const uint64_t *get_queue(const struct src *s, uint32_t i, int p, uint64_t *tmp)
{
	if (s->view)
		return s->view + (size_t)i * CHAN_W + OFF_QUEUE + p * QUEUE_W;
	queue_row(&s->f->chans[i], p, s->now, tmp);
	return tmp;
}

static const uint64_t *get_chan_drops(const struct src *s, uint32_t i)
{
	return s->view ? s->view + (size_t)i * CHAN_W + OFF_CHAN_DROPS : s->f->chans[i].drops;
}

static const uint64_t *get_switch(const struct src *s, uint32_t k, uint64_t *tmp)
{
	if (s->view == NULL) {
		switch_row(&s->f->sw[k], tmp);
		return tmp;
	}
	memcpy(tmp, s->view + sw_view_off(s->f, k), SWITCH_W * sizeof(*tmp));
	tmp[0] = s->f->sw[k].up;
	return tmp;
}

static const uint64_t *get_drops(const struct src *s, uint32_t k, uint64_t *tmp)
{
	if (s->view)
		return s->view + sw_view_off(s->f, k) + SWITCH_W;
	drops_row(&s->f->sw[k], tmp);
	return tmp;
}

static const uint64_t *get_ports(const struct src *s, uint32_t k)
{
	return s->view ? s->view + sw_view_off(s->f, k) + SWITCH_W + DROPS_W : s->f->sw[k].port_tx_pkts;
}

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

/*
 * The run's elapsed time at now (0 before dp_ctl_start). Live: real time
 * since the start, read here, since the engine's now_ns stands still between
 * events and falls behind with the lag; virtual: the fabric's time since it.
 */
static uint64_t run_elapsed(const struct dp_ctl *c, uint64_t now)
{
	const struct dp_engine *e = c->fab->eng;

	if (!c->started)
		return 0;
	if (e->mode == DP_CLOCK_LIVE && e->live_now)
		now = e->live_now(e->live_ctx); /* (tsc_ns: safe on any thread) */
	return now > c->start_ns ? now - c->start_ns : 0;
}

static int cmd_info(const struct src *s, const char *params, struct rte_tel_data *d)
{
	const struct dp_fabric *f = s->f;
	char t[256];

	(void)params;
	topo_summary(f->topo, t, sizeof(t));
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "topology", t);
	rte_tel_data_add_dict_string(d, "clock", f->eng->mode == DP_CLOCK_LIVE ? "live" : "virtual");
	rte_tel_data_add_dict_u64(d, "now_ns", s->now);
	rte_tel_data_add_dict_u64(d, "events", s->events);
	/* the run's own time: now_ns is an absolute clock on the live one (the TSC) */
	rte_tel_data_add_dict_u64(d, "start_ns", the_ctl->started ? the_ctl->start_ns : 0);
	rte_tel_data_add_dict_u64(d, "elapsed_ns", run_elapsed(the_ctl, s->now));
	/* live: how far behind real time the fabric is (0 while it keeps up), and the worst so far */
	rte_tel_data_add_dict_u64(d, "lag_ns", f->eng->lag_ns);
	rte_tel_data_add_dict_u64(d, "lag_max_ns", f->eng->lag_max_ns);
	/* mbufs held by the fabric (queues, wires, ports), for leak checks; read racily
	 * (under mpirun: rank 0's pool) */
	rte_tel_data_add_dict_u64(d, "mbufs_in_use", rte_mempool_in_use_count(f->mp));
	rte_tel_data_add_dict_u64(d, "mbufs_total", f->mp->size);
	rte_tel_data_add_dict_u64(d, "route_changes", f->route_changes);
	rte_tel_data_add_dict_u64(d, "commands_applied", the_ctl->applied);
	return 0;
}

/* A table row's values for node i (a channel or a switch); tmp has room for the row. */
typedef const uint64_t *(*row_fn)(const struct src *s, uint32_t i, uint64_t *tmp);

/*
 * One row per channel (FROM_to_TO) selected by params, of w values from
 * get. Returns false when the reply filled up before the last row.
 */
static bool chan_rows(const struct src *s, const char *params, struct rte_tel_data *d, size_t w,
		      row_fn get)
{
	const struct dp_fabric *f = s->f;
	uint64_t v[LINK_W > PFC_W ? LINK_W : PFC_W];

	for (uint32_t i = 0; i < f->n_chans; i++) {
		char name[80];
		chan_name(f, &f->chans[i], name, sizeof(name));
		if (dp_ctl_selected(params, name) && add_row(d, name, get(s, i, v), w) < 0)
			return false;
	}
	return true;
}

/* One row per switch selected by params, as chan_rows. */
static bool switch_rows(const struct src *s, const char *params, struct rte_tel_data *d, size_t w,
			row_fn get)
{
	const struct dp_fabric *f = s->f;
	uint64_t v[DROPS_W > SWITCH_W ? DROPS_W : SWITCH_W];

	for (uint32_t k = 0; k < f->topo->n_switches; k++) {
		char name[TOPO_NAME_MAX];
		if (!dp_ctl_selected(params, f->sw[k].cfg->name))
			continue;
		snprintf(name, sizeof(name), "%s", f->sw[k].cfg->name);
		dp_ctl_key_clean(name);
		if (add_row(d, name, get(s, k, v), w) < 0)
			return false;
	}
	return true;
}

static int cmd_links(const struct src *s, const char *params, struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	add_columns(d, link_cols, LINK_W);
	chan_rows(s, params, d, LINK_W, get_link);
	return 0;
}

static int cmd_queues(const struct src *s, const char *params, struct rte_tel_data *d)
{
	const struct dp_fabric *f = s->f;
	int l = params ? topo_link_by_name(f->topo, params) : -1;

	if (l < 0)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	add_columns(d, queue_cols, QUEUE_W);
	for (int dir = 0; dir < 2; dir++) {
		uint32_t i = 2 * (uint32_t)l + (uint32_t)dir;
		char name[100], cn[80];
		chan_name(f, &f->chans[i], cn, sizeof(cn));
		for (int p = 0; p < DP_NUM_PRIO; p++) {
			uint64_t v[QUEUE_W];
			snprintf(name, sizeof(name), "%s_prio%d", cn, p);
			add_row(d, name, get_queue(s, i, p, v), QUEUE_W);
		}
	}
	return 0;
}

static int cmd_switches(const struct src *s, const char *params, struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	add_columns(d, switch_cols, SWITCH_W);
	switch_rows(s, params, d, SWITCH_W, get_switch);
	return 0;
}

static int cmd_drops(const struct src *s, const char *params, struct rte_tel_data *d)
{
	const struct dp_fabric *f = s->f;
	const char *cols[DROPS_W];
	char names[PFC_MMU_VERDICT_COUNT][32];
	size_t nc = 0;

	for (int r = 0; r < DP_DROP_COUNT; r++)
		cols[nc++] = dp_count_drop_name((enum dp_drop)r);
	for (int v = 1; v < PFC_MMU_VERDICT_COUNT; v++) {
		snprintf(names[v], sizeof(names[v]), "buffer_%s",
			 pfc_mmu_verdict_str((enum pfc_mmu_verdict)v));
		cols[nc++] = names[v];
	}
	rte_tel_data_start_dict(d);
	add_columns(d, cols, nc);
	if (!switch_rows(s, params, d, DROPS_W, get_drops))
		return 0;
	/* link-level drops (loss, link down, host NIC queues), summed over links */
	uint64_t by[DROPS_W] = {0};
	for (uint32_t i = 0; i < f->n_chans; i++) {
		const uint64_t *cd = get_chan_drops(s, i);
		for (int r = 0; r < DP_DROP_COUNT; r++)
			by[r] += cd[r];
	}
	if (dp_ctl_selected(params, "links"))
		add_row(d, "links", by, nc);
	return 0;
}

static int cmd_pfc(const struct src *s, const char *params, struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	add_columns(d, pfc_cols, PFC_W);
	chan_rows(s, params, d, PFC_W, get_pfc);
	return 0;
}

static int cmd_ports(const struct src *s, const char *params, struct rte_tel_data *d)
{
	const struct dp_fabric *f = s->f;
	int k = params ? topo_switch_by_name(f->topo, params) : -1;

	if (k < 0)
		return -EINVAL;
	const struct topo_switch *cfg = f->sw[k].cfg;
	const uint64_t *tx = get_ports(s, (uint32_t)k);
	rte_tel_data_start_dict(d);
	for (uint16_t p = 0; p < cfg->n_ports; p++) {
		char name[80];
		snprintf(name, sizeof(name), "port%u_%s", p, topo_node_name(f->topo, cfg->ports[p].peer));
		dp_ctl_key_clean(name);
		rte_tel_data_add_dict_u64(d, name, tx[p]);
	}
	return 0;
}

/* The flow tables are merged at the end of a run under mpirun: not while it runs. */
static int cmd_flows(const struct src *s, const char *params, struct rte_tel_data *d)
{
	static const char *const cols[] = {"flow", "packets", "bytes", "path_changes", "path"};
	const struct dp_fabric *f = s->f;
	const struct dp_flow *top[200];

	(void)params;
	if (s->view)
		return -ENOTSUP;
	uint32_t n = dp_flows_top(&f->flows, top, 200);
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
 * thread keeps writing: read racily as the other tables, never torn. (Under
 * mpirun the emulated NICs run on rank 0, or, with a collective in lanes,
 * each on its leaf's rank: the rows come from the view summed over the
 * ranks, and after the run from rank 0's NICs, which then hold every
 * rank's counts.)
 */
static int cmd_nics(const struct src *s, const char *params, struct rte_tel_data *d)
{
	const struct dp_nics *ns = the_ctl->nics;
	const struct dp_fabric *f = s->f;
	size_t nc = 0;

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
		if (s->view) { /* (summed over the ranks: a NIC counts where it runs) */
			memcpy(v, s->view + nics_view_off(f) + (size_t)i * NIC_W, sizeof(v));
		} else {
			ne_nic_get_counters(ns->h[i].nic, &cnt);
			memcpy(v, &cnt, sizeof(v)); /* struct ne_counters is nc uint64_t in name order */
		}
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
	struct dp_ctl_set *c = calloc(1, sizeof(*c)); /* (whole bytes: under mpirun they are broadcast) */

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

typedef int (*table_fn)(const struct src *s, const char *params, struct rte_tel_data *d);

/* A read command waiting for dp_ctl_serve() (on its caller's stack). */
struct dp_ask {
	table_fn fn;
	const char *params;
	struct rte_tel_data *d;
	int rc;
	bool done;
	struct dp_ask *next;
};

/* Commands read c's fabric itself, at the time and events dp_ctl_note() gave, else its engine's. */
static struct src fabric_src(const struct dp_ctl *c)
{
	return (struct src){.f = c->fab, .now = c->noted ? c->noted_now : c->fab->eng->now_ns,
			    .events = c->noted ? c->noted_events : c->fab->eng->fired};
}

/* Deferred: wait until the engine's thread has answered at a poll point. */
static int ask_and_wait(struct dp_ctl *c, table_fn fn, const char *params, struct rte_tel_data *d)
{
	struct dp_ask a = {.fn = fn, .params = params, .d = d, .rc = -ENODEV};

	pthread_mutex_lock(&c->mu);
	if (!c->deferred) { /* (gathered since answer() looked: the fabric holds the whole run) */
		pthread_mutex_unlock(&c->mu);
		struct src s = fabric_src(c);
		return fn(&s, params, d);
	}
	if (!c->closing) {
		a.next = c->asks;
		c->asks = &a;
		c->n_asks++;
		while (!a.done)
			pthread_cond_wait(&c->served, &c->mu);
	}
	pthread_mutex_unlock(&c->mu);
	return a.rc;
}

/*
 * Each command runs under the read lock, and not at all once the fabric is
 * gone: at once from the fabric, or (deferred) from the view at the next
 * poll point.
 */
static int answer(table_fn fn, const char *params, struct rte_tel_data *d)
{
	rte_rwlock_read_lock(&the_ctl_lock);
	struct dp_ctl *c = the_ctl;
	int rc = -ENODEV;
	bool deferred = c && __atomic_load_n(&c->deferred, __ATOMIC_ACQUIRE);
	if (deferred && fn == cmd_flows) {
		rc = -ENOTSUP; /* (no ranks' rows to wait for; merged at the end: dp_ctl_gathered) */
	} else if (deferred) {
		rc = ask_and_wait(c, fn, params, d);
	} else if (c) {
		struct src s = fabric_src(c);
		rc = fn(&s, params, d);
	}
	rte_rwlock_read_unlock(&the_ctl_lock);
	return rc;
}

#define TABLE(fn)                                                                               \
	static int fn##_cb(const char *cmd, const char *params, struct rte_tel_data *d)        \
	{                                                                                      \
		(void)cmd;                                                                     \
		return answer(fn, params, d);                                                  \
	}
TABLE(cmd_info)
TABLE(cmd_links)
TABLE(cmd_queues)
TABLE(cmd_switches)
TABLE(cmd_drops)
TABLE(cmd_pfc)
TABLE(cmd_flows)
TABLE(cmd_ports)
TABLE(cmd_nics)

/* The set commands only queue (dp_ctl_poll or dp_ctl_take applies): never deferred. */
#define LOCKED(fn)                                                                              \
	static int fn##_cb(const char *cmd, const char *params, struct rte_tel_data *d)        \
	{                                                                                      \
		rte_rwlock_read_lock(&the_ctl_lock);                                           \
		int rc = the_ctl ? fn(cmd, params, d) : -ENODEV;                               \
		rte_rwlock_read_unlock(&the_ctl_lock);                                         \
		return rc;                                                                     \
	}
LOCKED(cmd_link_set)
LOCKED(cmd_switch_set)

struct dp_ctl *dp_ctl_create(struct dp_fabric *f, const struct dp_nics *nics, bool deferred,
			     char *err, size_t errlen)
{
	static const struct {
		const char *name;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{"/rocelab/info", cmd_info_cb, "Topology, clock, time, the run's elapsed time, lag, packet pool, event counts."},
		{"/rocelab/links", cmd_links_cb, "Per link direction (FROM_to_TO): state, packets, bytes, queue, PFC. Parameter: name prefix."},
		{"/rocelab/queues", cmd_queues_cb, "Per priority queues of both directions of a link. Parameter: link name."},
		{"/rocelab/switches", cmd_switches_cb, "Per switch counters. Parameter: name prefix."},
		{"/rocelab/drops", cmd_drops_cb, "Drops by switch and reason, and summed over links. Parameter: name prefix."},
		{"/rocelab/pfc", cmd_pfc_cb, "PFC frames sent and received, pause time, per link direction. Parameter: name prefix."},
		{"/rocelab/flows", cmd_flows_cb, "The 200 largest flows: name, packets, bytes, path changes, path (switch:port)."},
		{"/rocelab/ports", cmd_ports_cb, "Packets forwarded per port of a switch. Parameter: switch."},
		{"/rocelab/nics", cmd_nics_cb, "Per emulated host: its NIC's counters (rxe's names and ours). Parameter: name prefix."},
		{"/rocelab/link_set", cmd_link_set_cb, "Take a link down or up. Parameters: LINK,up|down."},
		{"/rocelab/switch_set", cmd_switch_set_cb, "Take a switch down or up. Parameters: SWITCH,up|down."},
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
	c->deferred = deferred;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->served, NULL);
	c->ring = rte_ring_create("rl_ctl", 64, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (c->ring == NULL) {
		snprintf(err, errlen, "telemetry: command ring: %s", rte_strerror(rte_errno));
		pthread_cond_destroy(&c->served);
		pthread_mutex_destroy(&c->mu);
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

uint32_t dp_ctl_take(struct dp_ctl *c, struct dp_ctl_set *out, uint32_t max)
{
	void *p;
	uint32_t n = 0;

	while (n < max && rte_ring_dequeue(c->ring, &p) == 0) {
		out[n++] = *(struct dp_ctl_set *)p;
		free(p);
	}
	c->applied += n;
	return n;
}

void dp_ctl_apply(struct dp_fabric *f, const struct dp_ctl_set *cmds, uint32_t n, uint64_t now_ns)
{
	for (uint32_t i = 0; i < n; i++) {
		if (cmds[i].is_switch)
			dp_fabric_set_switch(f, cmds[i].index, cmds[i].up, now_ns);
		else
			dp_fabric_set_link(f, cmds[i].index, cmds[i].up, now_ns);
	}
}

uint32_t dp_ctl_poll(struct dp_ctl *c, uint64_t now_ns)
{
	struct dp_ctl_set cmds[16];
	uint32_t n, all = 0;

	while ((n = dp_ctl_take(c, cmds, 16)) > 0) {
		dp_ctl_apply(c->fab, cmds, n, now_ns);
		all += n;
	}
	return all;
}

void dp_ctl_start(struct dp_ctl *c, uint64_t start_ns)
{
	if (c == NULL)
		return;
	c->start_ns = start_ns; /* (before started: a reader that sees started sees it) */
	__atomic_store_n(&c->started, true, __ATOMIC_RELEASE);
}

void dp_ctl_note(struct dp_ctl *c, uint64_t now_ns, uint64_t events)
{
	c->noted_now = now_ns; /* (read racily, as the counters: never torn on x86-64) */
	c->noted_events = events;
	c->noted = true;
}

unsigned dp_ctl_waiting(struct dp_ctl *c)
{
	pthread_mutex_lock(&c->mu);
	unsigned n = c->n_asks;
	pthread_mutex_unlock(&c->mu);
	return n;
}

/*
 * Answer (rc) every waiting ask, from s, or with rc when s is NULL; with
 * undefer, deferring ends under the same lock that queues asks: an ask
 * queued before is answered here, one after sees it (ask_and_wait) and
 * reads the fabric itself.
 */
static void answer_asks(struct dp_ctl *c, const struct src *s, int rc, bool undefer)
{
	pthread_mutex_lock(&c->mu);
	if (undefer)
		__atomic_store_n(&c->deferred, false, __ATOMIC_RELEASE);
	for (struct dp_ask *a = c->asks; a; a = a->next) {
		a->rc = s ? a->fn(s, a->params, a->d) : rc;
		a->done = true;
	}
	c->asks = NULL;
	c->n_asks = 0;
	pthread_cond_broadcast(&c->served);
	pthread_mutex_unlock(&c->mu);
}

void dp_ctl_serve(struct dp_ctl *c, const uint64_t *view, uint64_t now_ns, uint64_t events)
{
	struct src s = {.f = c->fab, .view = view, .now = now_ns, .events = events};

	answer_asks(c, &s, 0, false);
}

void dp_ctl_gathered(struct dp_ctl *c, uint64_t now_ns, uint64_t events)
{
	if (c == NULL || !c->deferred)
		return;
	dp_ctl_note(c, now_ns, events);
	struct src s = fabric_src(c);
	answer_asks(c, &s, 0, true);
}

void dp_ctl_destroy(struct dp_ctl *c)
{
	if (c == NULL)
		return;
	/* first the waiting asks (they hold the read lock), then nobody reads */
	pthread_mutex_lock(&c->mu);
	c->closing = true;
	pthread_mutex_unlock(&c->mu);
	answer_asks(c, NULL, -ENODEV, false);
	rte_rwlock_write_lock(&the_ctl_lock);
	the_ctl = NULL;
	rte_rwlock_write_unlock(&the_ctl_lock);
	void *p;
	while (rte_ring_dequeue(c->ring, &p) == 0)
		free(p); /* commands never applied */
	rte_ring_free(c->ring);
	pthread_cond_destroy(&c->served);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
