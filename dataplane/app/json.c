/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json.c: rocelab-dp --json FILE, the run's tables and result lines as one
 * JSON document (docs/reference/rocelab-dp.schema.json), written with
 * jansson. Every number comes from what the text tables print: the link
 * rows from dp_stats_link_row, the switch and host rows from the same
 * counters, the flows, generators, ports and peers from what their tables
 * print (dp_flows_top, dp_gen, dp_port_row, dp_peer_row), the collective's results from dp_nics_coll_view, and the
 * "# totals:" and "# latency:" lines from their own text, read back key by
 * key, so that the two outputs cannot disagree.
 */
#define _GNU_SOURCE /* open_memstream */
#include "app.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "rl_version.h"

/* The schema's name and version: a reader checks it before reading on. */
#define JSON_FORMAT "rocelab-dp/1"

/* A double as JSON: a real, or null for what JSON cannot hold (NaN, infinity). */
static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A counter as json_pack's "I" takes it (counters stay far below 2^63). */
static json_int_t ji(uint64_t v)
{
	return (json_int_t)v;
}

static json_t *u64(uint64_t v)
{
	return json_integer(ji(v));
}

/*
 * "k=v k=v ..." (a "# totals:" or "# latency:" line after its prefix) into
 * o: each value an integer when it is one, else a real, else a string.
 */
static void put_kv(json_t *o, const char *text)
{
	char *dup = strdup(text), *save = NULL;

	for (char *tok = dup ? strtok_r(dup, " \n", &save) : NULL; tok; tok = strtok_r(NULL, " \n", &save)) {
		char *eq = strchr(tok, '='), *end;
		if (eq == NULL)
			continue;
		*eq++ = '\0';
		errno = 0;
		long long i = strtoll(eq, &end, 10);
		if (*end == '\0' && end != eq && errno == 0) {
			json_object_set_new(o, tok, json_integer(i));
			continue;
		}
		double d = strtod(eq, &end);
		json_object_set_new(o, tok, *end == '\0' && end != eq ? num(d) : json_string(eq));
	}
	free(dup);
}

/* The run: its clock, times, events, forwards, stop signal and lag. */
static json_t *run_obj(const struct run *r, uint64_t elapsed, int rc)
{
	uint64_t fwd = 0;

	for (uint32_t s = 0; s < r->topo->n_switches; s++)
		fwd += r->fab->sw[s].fwd_pkts;
	json_t *o = json_object();
	json_object_set_new(o, "clock", json_string(r->o->clock == DP_CLOCK_LIVE ? "live" : "virtual"));
	json_object_set_new(o, "topology", json_string(r->topo->name));
	json_object_set_new(o, "time_s", num((double)elapsed / 1e9));
	json_object_set_new(o, "wall_s", num(r->wall_s));
	json_object_set_new(o, "events", u64(r->eng.fired));
	json_object_set_new(o, "switch_forwards", u64(fwd));
	json_object_set_new(o, "stopped_by", stop_requested ? json_string(stop_requested == SIGINT ? "SIGINT"
											      : "SIGTERM")
							    : json_null());
	if (r->o->clock == DP_CLOCK_LIVE) {
		json_object_set_new(o, "lag_max_ms", num((double)r->eng.lag_max_ns / NS_PER_MS));
		json_object_set_new(o, "lag_end_ms", num((double)r->eng.lag_ns / NS_PER_MS));
	}
	json_object_set_new(o, "exit_status", json_integer(rc));
	return o;
}

/* The link table: one object per direction (dp_stats_link_row, as dp_stats_print). */
static json_t *links_arr(const struct run *r, uint64_t fabric_ns)
{
	json_t *a = json_array();

	for (uint32_t i = 0; i < r->fab->n_chans; i++) {
		struct dp_stats_link row;
		dp_stats_link_row(r->fab, i, fabric_ns, &row);
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:o, s:I, s:I, s:I, s:o}",
			"from", row.from, "to", row.to, "state", row.up ? "up" : "DOWN",
			"rate_bps", ji(row.rate_bps), "packets", ji(row.packets), "bytes", ji(row.bytes),
			"util_pct", num(row.util_pct), "pfc_tx_frames", ji(row.pfc_tx),
			"drops_frames", ji(row.drops), "peak_queue_bytes", ji(row.peak_q_bytes),
			"paused_pct", num(row.paused_pct)));
	}
	return a;
}

/* The switch table, drops by reason included, and the host table. */
static void nodes_put(json_t *root, const struct run *r)
{
	const struct topo *t = r->topo;
	json_t *sws = json_array(), *hosts = json_array();

	for (uint32_t s = 0; s < t->n_switches; s++) {
		const struct dp_switch *sw = &r->fab->sw[s];
		json_t *why = json_object();
		for (int d = 0; d < DP_DROP_COUNT; d++)
			if (sw->drops[d])
				json_object_set_new(why, dp_count_drop_name((enum dp_drop)d),
						    json_integer(ji(sw->drops[d])));
		json_array_append_new(sws, json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
			"name", sw->cfg->name, "role", topo_role_name(sw->cfg->role),
			"rx_packets", ji(sw->rx_pkts), "forwarded_packets", ji(sw->fwd_pkts),
			"arp_nd_replies", ji(sw->arp_replies + sw->nd_replies), "pfc_rx_frames", ji(sw->pfc_rx),
			"ecn_marked_packets", ji(sw->ecn_marked), "drops_packets", ji(dp_count_switch_drops(sw)),
			"drops_by_reason_packets", why));
	}
	for (uint32_t h = 0; h < t->n_hosts; h++) {
		const struct dp_host *ho = &r->fab->host[h];
		json_array_append_new(hosts, json_pack("{s:s, s:I, s:I, s:I, s:I}", "name", ho->cfg->name,
			"sent_packets", ji(ho->tx_pkts), "sent_bytes", ji(ho->tx_bytes),
			"received_packets", ji(ho->rx_pkts), "received_bytes", ji(ho->rx_bytes)));
	}
	json_object_set_new(root, "switches", sws);
	json_object_set_new(root, "hosts", hosts);
}

/* The --rdma lines and the NIC table (dp_nics_rdma_row, dp_nics_row, as dp_nics_report). */
static void nics_put(json_t *root, const struct run *r)
{
	json_t *rd = json_array(), *nics = json_array();
	struct dp_rdma_row x;
	struct dp_nic_row n;

	for (uint32_t i = 0; dp_nics_rdma_row(&r->nics, i, &x) == 0; i++) {
		json_array_append_new(rd, json_pack("{s:s, s:I, s:i, s:i, s:i, s:o, s:o, s:I, s:s}",
			"spec", x.spec, "completed_writes", ji(x.completed), "writes", (int)x.count,
			"write_bytes", (int)x.size, "qps", (int)x.qps, "time_us", num(x.time_us),
			"rate_Gbps", num(x.gbps), "errors", ji(x.errors), "data", x.data));
	}
	for (uint32_t i = 0; dp_nics_row(&r->nics, i, &n) == 0; i++) {
		json_t *why = json_object();
		put_kv(why, n.why);
		json_array_append_new(nics, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
			"name", n.name, "sent_packets", ji(n.sent), "received_packets", ji(n.received),
			"retrans_packets", ji(n.retrans), "timeouts", ji(n.timeouts),
			"naks_tx_packets", ji(n.naks_tx), "naks_rx_packets", ji(n.naks_rx),
			"duplicate_requests_packets", ji(n.dup_req), "rejected_frames", ji(n.rejected),
			"rejected_by_reason_frames", why));
	}
	json_object_set_new(root, "rdma", rd);
	json_object_set_new(root, "nics", nics);
}

/* The flow table (the REPORT_TOP_FLOWS flows with most bytes, as dp_flows_print). */
static json_t *flows_obj(const struct run *r)
{
	const struct dp_flows *fl = &r->fab->flows;
	const struct dp_flow *top[REPORT_TOP_FLOWS];
	uint32_t k = dp_flows_top(fl, top, REPORT_TOP_FLOWS);
	json_t *rows = json_array();

	for (uint32_t i = 0; i < k; i++) {
		char name[96], path[256];
		dp_flow_name(top[i], name, sizeof(name));
		dp_flow_path(top[i], r->topo, path, sizeof(path));
		json_array_append_new(rows, json_pack("{s:s, s:I, s:I, s:I, s:s}", "flow", name,
			"packets", ji(top[i]->pkts), "bytes", ji(top[i]->bytes),
			"path_changes", ji(top[i]->path_changes), "path", path));
	}
	return json_pack("{s:o, s:i, s:I}", "top", rows, "tracked", (int)dp_flows_count(fl),
			 "untracked_packets", ji(fl->untracked));
}

/* The generators' lines (as dp_gen_print), the DPDK ports' and the peers' tables. */
static void traffic_put(json_t *root, const struct run *r, uint64_t elapsed)
{
	json_t *gens = json_array(), *ports = json_array(), *peers = json_array();
	struct dp_port_row pr;
	struct dp_peer_row qr;
	int rc;

	for (unsigned i = 0; i < r->o->gen.n; i++) {
		const struct dp_gen *g = &r->gens[i];
		double got = dp_gen_achieved_bps(g, r->start_ns + elapsed);
		json_array_append_new(gens, json_pack("{s:s, s:I, s:I, s:o, s:o, s:I, s:I}",
			"spec", r->o->gen.spec[i], "sent_frames", ji(g->sent), "frames", ji(g->count),
			"asked_Gbps", num((double)g->rate_bps / 1e9), "achieved_Gbps", num(got / 1e9),
			"waited_queue", ji(g->blocked), "waited_mbuf", ji(g->no_mbuf)));
	}
	for (uint32_t i = 0; dp_port_row(&r->ports, r->topo, i, &pr) == 0; i++)
		json_array_append_new(ports, json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"port", pr.name, "host", pr.host, "rx_packets", ji(pr.rx), "tx_packets", ji(pr.tx),
			"refused_packets", ji(pr.refused), "imissed_packets", ji(pr.imissed),
			"rx_nombuf", ji(pr.rx_nombuf), "ierrors", ji(pr.ierrors), "oerrors", ji(pr.oerrors)));
	for (uint32_t k = 0; (rc = dp_peer_row(&r->o->peers, k, &qr)) >= 0; k++)
		if (rc == 0)
			json_array_append_new(peers, json_pack("{s:i, s:s, s:I, s:I, s:i, s:I, s:I, s:I, s:I, s:I}",
				"process", (int)qr.process, "peer_port", qr.name, "rx_frames", ji(qr.rx),
				"tx_frames", ji(qr.tx), "held_frames", (int)qr.held, "port_full", ji(qr.port_full),
				"untagged", ji(qr.untagged), "unknown_vid", ji(qr.unknown_vid),
				"segmented", ji(qr.segmented), "tag_failed", ji(qr.tag_failed)));
	json_object_set_new(root, "flows", flows_obj(r));
	json_object_set_new(root, "generators", gens);
	json_object_set_new(root, "ports", ports);
	json_object_set_new(root, "peers", peers);
}

/* One size's nccl-tests result (its line's numbers) and its "# latency:" line. */
/* The in-place half of a size's line. */
static json_t *in_place_obj(const struct ne_coll_result *ip)
{
	json_t *o = json_object();

	json_object_set_new(o, "time_us", num(ip->time_us));
	json_object_set_new(o, "algbw_GBps", num(ip->algbw));
	json_object_set_new(o, "busbw_GBps", num(ip->busbw));
	json_object_set_new(o, "wrong_elements", ip->wrong < 0 ? json_null() : json_integer(ip->wrong));
	return o;
}

static json_t *size_obj(const struct dp_coll_size *z)
{
	const struct ne_coll_result *res = &z->res;
	json_t *o = json_object(), *lat = json_object();

	json_object_set_new(o, "size_bytes", u64(res->size));
	json_object_set_new(o, "count_elements", u64(res->count));
	json_object_set_new(o, "type", json_string(res->type ? res->type : "float"));
	json_object_set_new(o, "redop", json_string(res->redop ? res->redop : "none"));
	json_object_set_new(o, "root", json_integer(res->root));
	json_object_set_new(o, "iterations", json_integer(res->iters));
	json_object_set_new(o, "time_us", num(res->time_us));
	json_object_set_new(o, "algbw_GBps", num(res->algbw));
	json_object_set_new(o, "busbw_GBps", num(res->busbw));
	json_object_set_new(o, "wrong_elements", res->wrong < 0 ? json_null() : json_integer(res->wrong));
	/* inplace=on: its pass's four columns; else null, as the text's N/A */
	json_object_set_new(o, "in_place", z->has_in_place ? in_place_obj(&z->in_place) : json_null());
	json_object_set_new(o, "active_qps_mean", num(res->active_qps_mean));
	json_object_set_new(o, "active_qps_busy_mean", num(res->active_qps_busy_mean));
	json_object_set_new(o, "active_qps_max", json_integer(res->active_qps_max));
	const char *kv = strstr(z->latency, "# latency: ");
	if (kv)
		put_kv(lat, kv + strlen("# latency: "));
	json_object_set_new(o, "latency", lat);
	return o;
}

/* The run's collectives: spec, sizes, nccl-tests' closing numbers. */
static json_t *colls_arr(const struct run *r)
{
	json_t *a = json_array();
	struct dp_coll_view v;

	for (uint32_t i = 0; dp_nics_coll_view(&r->nics, i, &v) == 0; i++) {
		json_t *o = json_object(), *sizes = json_array();
		struct ne_coll_sweep_sum t;
		for (uint32_t k = 0; k < v.n_sizes; k++)
			json_array_append_new(sizes, size_obj(&v.sizes[k]));
		dp_coll_sizes_sum(v.sizes, v.n_sizes, &t);
		json_object_set_new(o, "id", json_integer(v.id));
		json_object_set_new(o, "spec", json_string(v.spec));
		json_object_set_new(o, "op", json_string(ne_coll_op_name(v.cfg->op)));
		json_object_set_new(o, "ranks", json_integer(v.cfg->nranks));
		json_object_set_new(o, "finished", json_boolean(v.finished));
		json_object_set_new(o, "failed", json_boolean(v.failed));
		json_object_set_new(o, "sizes", sizes);
		/* as "# Out of bounds values" and "# Avg bus bandwidth" (ne_coll_format_footer) */
		json_object_set_new(o, "out_of_bounds_elements", t.checked ? json_integer(t.wrong) : json_null());
		json_object_set_new(o, "avg_busbw_GBps", t.sizes ? num(t.avg_busbw) : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

/* A job's report (dp_job_report) as data: --workload's, or one job's of --jobs; NULL without. */
static json_t *workload_obj(const struct dp_job *job)
{
	struct dp_job_iter it;
	struct dp_job_row row;

	if (job == NULL)
		return NULL;
	json_t *o = json_object(), *iters = json_array(), *rows = json_array();
	for (uint32_t k = 0; dp_job_iter_get(job, k, &it) == 0; k++) {
		json_array_append_new(iters, json_pack("{s:I, s:o, s:o, s:o}", "iteration", (json_int_t)k + 1,
						       "time_us", num((double)it.time_ns / 1e3),
						       "compute_critical_path_us", num((double)it.compute_ns / 1e3),
						       "exposed_communication_us", num((double)it.exposed_ns / 1e3)));
		for (uint32_t i = 0; dp_job_row_get(job, k, i, &row) == 0; i++)
			json_array_append_new(rows, json_pack("{s:I, s:I, s:s, s:I, s:I, s:o, s:o, s:o, s:I}",
				"iteration", (json_int_t)k + 1, "node", ji(row.node), "op", row.op,
				"ranks", (json_int_t)row.ranks, "size_bytes", ji(row.bytes),
				"start_us", num((double)row.start_ns / 1e3), "time_us", num((double)row.time_ns / 1e3),
				"busbw_GBps", num(row.busbw), "active_qps_max", (json_int_t)row.qps_max));
	}
	json_object_set_new(o, "source", json_string(dp_job_source(job)));
	json_object_set_new(o, "ranks", json_integer(dp_job_ranks(job)));
	json_object_set_new(o, "finished", json_boolean(!dp_job_failed(job)));
	json_object_set_new(o, "iterations", iters);
	json_object_set_new(o, "communication", rows);
	return o;
}

/* ns as us, or null for 0 (not known). */
static json_t *us_or_null(uint64_t ns)
{
	return ns ? num((double)ns / 1e3) : json_null();
}

/* A share in percent of what, or null when what is 0. */
static json_t *pct_or_null(uint64_t part, uint64_t what)
{
	return what ? num(100.0 * (double)part / (double)what) : json_null();
}

/* Job k's busiest links (jobs_links_top), as its "links most used" line. */
static json_t *job_links_arr(struct run *r, uint32_t k, uint64_t fabric_ns)
{
	struct dp_stats_link top[JOBS_TOP_LINKS];
	json_t *a = json_array();

	for (int i = 0, n = jobs_links_top(r, k, fabric_ns, top); i < n; i++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:o}", "from", top[i].from, "to", top[i].to,
						   "util_pct", num(top[i].util_pct), "paused_pct", num(top[i].paused_pct)));
	return a;
}

/* --jobs: each job's "# jobs:" lines and its own report, and the mix's summary line. */
static json_t *jobs_obj(struct run *r, uint64_t fabric_ns)
{
	struct dp_mix_row row;
	struct dp_mix_summary sum;
	json_t *a = json_array();

	for (uint32_t k = 0; dp_mix_row_get(r->mix, k, &row) == 0; k++) {
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(row.name));
		json_object_set_new(o, "gpus", json_integer(row.gpus));
		json_object_set_new(o, "servers", json_integer(row.servers));
		json_object_set_new(o, "policy", json_string(row.policy));
		json_object_set_new(o, "hosts", json_string(row.hosts));
		json_object_set_new(o, "arrival_us", num((double)row.arrival_ns / 1e3));
		json_object_set_new(o, "alone_us", us_or_null(row.alone_ns));
		json_object_set_new(o, "mix_us", us_or_null(row.mix_ns));
		json_object_set_new(o, "slowdown_pct", num(row.slowdown_pct));
		json_object_set_new(o, "exposed_communication_alone_pct", pct_or_null(row.alone_exposed_ns, row.alone_ns));
		json_object_set_new(o, "exposed_communication_mix_pct", pct_or_null(row.mix_exposed_ns, row.mix_ns));
		json_object_set_new(o, "links_most_used", job_links_arr(r, k, fabric_ns));
		json_object_set_new(o, "workload", workload_obj(dp_mix_job(r->mix, k)));
		json_array_append_new(a, o);
	}
	dp_mix_summary_get(r->mix, &sum);
	return json_pack("{s:o, s:i, s:i, s:o, s:o, s:o}", "jobs", a, "count", (int)sum.jobs,
			 "with_slowdown", (int)sum.measured, "slowdown_mean_pct", num(sum.mean_pct),
			 "slowdown_p99_pct", num(sum.p99_pct), "slowdown_max_pct", num(sum.max_pct));
}

/*
 * The totals lines (dp_nics_print_totals) read back: "# totals:" into the
 * root's totals, each "# [cK] totals:" into collective K's. -ENOMEM.
 */
static int totals_put(json_t *root, const struct run *r)
{
	char *text = NULL, *save = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (m == NULL)
		return -ENOMEM;
	dp_nics_print_totals(&r->nics, m);
	if (fclose(m) != 0 || text == NULL) {
		free(text);
		return -ENOMEM;
	}
	json_t *tot = json_object(), *colls = json_object_get(root, "collectives");
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned k;
		int at = 0;
		if (strncmp(l, "# totals: ", 10) == 0) {
			put_kv(tot, l + 10);
		} else if (sscanf(l, "# [c%u] totals:%n", &k, &at) == 1 && at > 0 && k >= 1) {
			json_t *c = json_array_get(colls, k - 1), *ct = json_object();
			put_kv(ct, l + at);
			json_object_set_new(c, "totals", ct); /* (no collective K: c NULL, ct freed) */
		}
	}
	json_object_set_new(root, "totals", tot);
	free(text);
	return 0;
}

/* What each key suffix means (the units are in the key names). */
static json_t *units_obj(void)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
			 "_bytes", "bytes", "_s", "seconds", "_ms", "milliseconds", "_us", "microseconds",
			 "_ns", "nanoseconds", "_GBps", "10^9 bytes per second", "_bps", "bits per second",
			 "_Gbps", "10^9 bits per second", "_pct", "percent of the run's fabric time",
			 "_packets", "packets (a count)", "_frames", "frames (a count)",
			 "_elements", "elements of the collective's type (a count)");
}

int json_open(struct run *r)
{
	r->json = fopen(r->o->json, "w");
	if (r->json == NULL) {
		fprintf(stderr, "rocelab-dp: --json %s: cannot write: %s\n", r->o->json, strerror(errno));
		return EXIT_BAD_INPUT;
	}
	return 0;
}

int json_write(struct run *r, uint64_t elapsed, uint64_t fabric_ns, int rc)
{
	json_t *root = json_object();

	json_object_set_new(root, "format", json_string(JSON_FORMAT));
	json_object_set_new(root, "program", json_string("rocelab-dp"));
	json_object_set_new(root, "version", json_string(RL_VERSION));
	json_object_set_new(root, "commit", json_string(RL_COMMIT));
	json_object_set_new(root, "units", units_obj());
	json_object_set_new(root, "run", run_obj(r, elapsed, rc));
	json_object_set_new(root, "links", links_arr(r, fabric_ns));
	nodes_put(root, r);
	traffic_put(root, r, elapsed);
	nics_put(root, r);
	json_object_set_new(root, "collectives", colls_arr(r));
	if (r->job)
		json_object_set_new(root, "workload", workload_obj(r->job));
	if (r->mix && r->o->jobs_alone < 0)
		json_object_set_new(root, "mix", jobs_obj(r, fabric_ns));
	int err = r->o->coll.n ? totals_put(root, r) : 0; /* (the text prints totals with --coll only) */
	if (err == 0 && json_dumpf(root, r->json, JSON_INDENT(1) | JSON_ENSURE_ASCII) != 0)
		err = -EIO;
	json_decref(root);
	if (fclose(r->json) != 0 && err == 0)
		err = -EIO;
	r->json = NULL;
	if (err)
		fprintf(stderr, "rocelab-dp: --json %s: could not write the document\n", r->o->json);
	return err;
}
