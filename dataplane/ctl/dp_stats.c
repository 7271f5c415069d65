/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_stats.h"

#include <errno.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void dp_stats_link_row(const struct dp_fabric *f, uint32_t i, uint64_t elapsed_ns,
		       struct dp_stats_link *row)
{
	const struct dp_chan *c = &f->chans[i];
	uint64_t peak = 0, paused = 0;

	for (int p = 0; p < DP_NUM_PRIO; p++) {
		uint64_t ns = pfc_pause_paused_ns(&c->pause, (unsigned)p, f->eng->now_ns);
		if (c->q[p].peak_bytes > peak)
			peak = c->q[p].peak_bytes;
		if (ns > paused)
			paused = ns;
	}
	*row = (struct dp_stats_link){
		.from = topo_node_name(f->topo, c->from),
		.to = topo_node_name(f->topo, c->to),
		.up = c->up,
		.rate_bps = c->rate_bps,
		.packets = dp_count_chan_tx_pkts(c),
		.bytes = dp_count_chan_tx_bytes(c),
		.util_pct = elapsed_ns ? 100.0 * (double)c->busy_ns / (double)elapsed_ns : 0.0,
		.pfc_tx = c->pfc_tx,
		.drops = dp_count_chan_drops(c),
		.peak_q_bytes = peak,
		.paused_pct = elapsed_ns ? 100.0 * (double)paused / (double)elapsed_ns : 0.0,
	};
}

void dp_stats_print(const struct dp_fabric *f, uint64_t elapsed_ns, FILE *out)
{
	const struct topo *t = f->topo;

	fprintf(out, "%-24s %-10s %12s %14s %6s %8s %8s %10s %8s\n", "link (from>to)", "state", "packets",
		"bytes", "util%", "pfc_tx", "drops", "peak_q_B", "paused%");
	for (uint32_t i = 0; i < f->n_chans; i++) {
		struct dp_stats_link row;
		char name[80];

		dp_stats_link_row(f, i, elapsed_ns, &row);
		snprintf(name, sizeof(name), "%s>%s", row.from, row.to);
		fprintf(out, "%-24s %-10s %12" PRIu64 " %14" PRIu64 " %6.1f %8" PRIu64 " %8" PRIu64
			     " %10" PRIu64 " %8.1f\n",
			name, row.up ? "up" : "DOWN", row.packets, row.bytes, row.util_pct, row.pfc_tx,
			row.drops, row.peak_q_bytes, row.paused_pct);
	}
	fprintf(out, "\n%-10s %-5s %12s %12s %8s %8s %8s %8s  %s\n", "switch", "role", "rx", "forwarded",
		"arp/nd", "pfc_rx", "ecn", "drops", "drops by reason");
	for (uint32_t s = 0; s < t->n_switches; s++) {
		const struct dp_switch *sw = &f->sw[s];
		char why[256] = "";
		size_t o = 0;
		for (int d = 0; d < DP_DROP_COUNT && o < sizeof(why); d++)
			if (sw->drops[d])
				o += (size_t)snprintf(why + o, sizeof(why) - o, "%s=%" PRIu64 " ",
						      dp_count_drop_name((enum dp_drop)d), sw->drops[d]);
		fprintf(out, "%-10s %-5s %12" PRIu64 " %12" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64
			     " %8" PRIu64 "  %s\n",
			sw->cfg->name, topo_role_name(sw->cfg->role), sw->rx_pkts, sw->fwd_pkts,
			sw->arp_replies + sw->nd_replies, sw->pfc_rx, sw->ecn_marked, dp_count_switch_drops(sw), why);
	}
	fprintf(out, "\n%-10s %12s %14s %12s %14s\n", "host", "sent", "sent_bytes", "received",
		"recv_bytes");
	for (uint32_t h = 0; h < t->n_hosts; h++) {
		const struct dp_host *ho = &f->host[h];
		fprintf(out, "%-10s %12" PRIu64 " %14" PRIu64 " %12" PRIu64 " %14" PRIu64 "\n",
			ho->cfg->name, ho->tx_pkts, ho->tx_bytes, ho->rx_pkts, ho->rx_bytes);
	}
	if (f->eng->timer_fail) /* only then: the tables of a sound run stay as they were */
		fprintf(out, "\ntimer_fail %" PRIu64 ": timers the engine could not add; events were lost"
			     " and the figures above may be wrong\n", f->eng->timer_fail);
}

int dp_csv_open(struct dp_csv *c, const struct dp_fabric *f, const char *path,
		uint64_t interval_ns)
{
	memset(c, 0, sizeof(*c));
	c->fp = fopen(path, "w");
	if (c->fp == NULL)
		return -EIO;
	c->interval_ns = interval_ns;
	c->last_busy = calloc(f->n_chans + 1, sizeof(*c->last_busy));
	c->v = calloc((size_t)f->n_chans * DP_CSV_FIELDS + 1, sizeof(*c->v));
	if (c->last_busy == NULL || c->v == NULL) {
		fclose(c->fp);
		free(c->last_busy);
		free(c->v);
		memset(c, 0, sizeof(*c));
		return -ENOMEM;
	}
	fprintf(c->fp, "time_ns,link,from,to,up,util,queue_bytes,paused_mask,tx_pkts,tx_bytes,"
		       "pfc_tx,drops\n");
	return 0;
}

/* Per channel: busy_ns, queued bytes, paused priorities, tx packets, tx bytes, PFC sent, drops. */
void dp_csv_take(const struct dp_fabric *f, uint64_t now_ns, uint64_t *v)
{
	for (uint32_t i = 0; i < f->n_chans; i++, v += DP_CSV_FIELDS) {
		const struct dp_chan *ch = &f->chans[i];
		v[0] = ch->busy_ns;
		v[1] = dp_count_chan_queued(ch);
		v[2] = pfc_pause_mask(&ch->pause, now_ns);
		v[3] = dp_count_chan_tx_pkts(ch);
		v[4] = dp_count_chan_tx_bytes(ch);
		v[5] = ch->pfc_tx;
		v[6] = dp_count_chan_drops(ch);
	}
}

void dp_csv_write(struct dp_csv *c, const struct dp_fabric *f, const uint64_t *v, uint64_t now_ns)
{
	const struct topo *t = f->topo;
	uint64_t span = now_ns > c->last_ns ? now_ns - c->last_ns : 1;

	for (uint32_t i = 0; i < f->n_chans; i++, v += DP_CSV_FIELDS) {
		const struct dp_chan *ch = &f->chans[i];
		double util = (double)(v[0] - c->last_busy[i]) / (double)span;
		c->last_busy[i] = v[0];
		fprintf(c->fp, "%" PRIu64 ",%s,%s,%s,%d,%.4f,%" PRIu64 ",0x%02x,%" PRIu64 ",%" PRIu64
			       ",%" PRIu64 ",%" PRIu64 "\n",
			now_ns, t->links[ch->link].name, topo_node_name(t, ch->from),
			topo_node_name(t, ch->to), ch->up, util > 1.0 ? 1.0 : util, v[1], (unsigned)v[2],
			v[3], v[4], v[5], v[6]);
	}
	c->last_ns = now_ns;
}

void dp_csv_sample(struct dp_csv *c, const struct dp_fabric *f, uint64_t now_ns)
{
	dp_csv_take(f, now_ns, c->v);
	dp_csv_write(c, f, c->v, now_ns);
}

void dp_csv_close(struct dp_csv *c)
{
	if (c->fp)
		fclose(c->fp);
	free(c->last_busy);
	free(c->v);
	memset(c, 0, sizeof(*c));
}
