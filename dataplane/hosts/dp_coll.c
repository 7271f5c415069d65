/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_coll: the collective driver: a --coll's sizes one after the other on the
 * emulated NICs, its proxy threads' wake-ups, its active-QP series, its
 * nccl-tests lines and its counters for the totals line, its traffic matrix
 * for TE. No DPDK, no fabric (dp_coll.h): the one call out of the driver is
 * dp_nic_arm (dp_nic.c; a stub's in tests/dataplane/test_coll_driver.c).
 */
#define _GNU_SOURCE /* qsort_r */
#include "dp_coll_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>


/* A NIC's place in the wake list's order: by collective, then rank; NICs in none first. */
static int64_t wake_key(const struct dp_nic_host *nh)
{
	return nh->coll ? ((int64_t)nh->coll->id << 32) + nh->coll_rank : -1;
}

static int cmp_rank(const void *a, const void *b, void *ctx)
{
	const struct dp_nics *ns = ctx;
	int64_t x = wake_key(&ns->h[*(const uint32_t *)a]), y = wake_key(&ns->h[*(const uint32_t *)b]);

	return (x > y) - (x < y);
}

/*
 * The wake list in rank order (collective by collective). It holds a NIC or two between most polls:
 * those are sorted in place (stable, as qsort_r's merge sort, so the order
 * is the same), longer lists by qsort_r.
 */
static void sort_wake(struct dp_nics *ns, struct dp_nics_lane *ln)
{
	uint32_t *w = ln->wake;

	if (ln->n_wake > 16) {
		qsort_r(w, ln->n_wake, sizeof(*w), cmp_rank, ns);
		return;
	}
	for (uint32_t i = 1; i < ln->n_wake; i++) {
		uint32_t x = w[i], j = i;
		for (; j > 0 && cmp_rank(&w[j - 1], &x, ns) > 0; j--)
			w[j] = w[j - 1];
		w[j] = x;
	}
}

/*
 * Arm the collectives' NICs that may need it, in rank order. Re-arming any
 * other rank would change nothing: its state has not changed since it was
 * armed at its next event (dp_nic_arm() keeps an earlier wake-up), so only the
 * listed ones are looked at: changed, unarmed or waiting. Waiting ones stay
 * listed until their service.
 */
static void coll_arm_listed(struct dp_nics *ns, uint32_t lane, uint64_t now)
{
	struct dp_nics_lane *ln = &ns->lane[lane];
	uint32_t kept = 0;

	sort_wake(ns, ln);
	for (uint32_t i = 0; i < ln->n_wake; i++) {
		struct dp_nic_host *nh = &ns->h[ln->wake[i]];

		if (nh->coll_rank >= 0 && !nh->arm_deferred)
			dp_nic_arm(nh, ne_nic_next_event_ns(nh->nic), now);
		if (nh->waiting)
			ln->wake[kept++] = ln->wake[i];
		else
			nh->listed = false;
	}
	ln->n_wake = kept;
}

/*
 * text (lines, each ending in '\n') into the run's output; when the run has
 * several collectives, each line tagged with c's "[cK] " ("# [cK]" before
 * the rest of a '#' line). coll_put is the one to call: it holds lines.
 */
static void coll_write(const struct dp_coll *c, const char *text)
{
	FILE *out = c->ns->coll_out;

	if (!c->ns->coll_tags) {
		fputs(text, out);
		return;
	}
	for (const char *l = text; *l != '\0';) {
		const char *nl = strchr(l, '\n');
		int len = nl ? (int)(nl - l) + 1 : (int)strlen(l);
		if (l[0] == '#')
			fprintf(out, "# [c%u]%.*s", c->id, len - 1, l + 1);
		else
			fprintf(out, "[c%u] %.*s", c->id, len, l);
		l += len;
	}
}

/* Append text to c's held lines; an in-place pass's comment lines read
 * "# in-place: ...". Out of memory: written at once (out of order, not lost). */
static void coll_hold(struct dp_coll *c, const char *text)
{
	size_t len = strlen(text), lines = 1;

	for (const char *p = text; (p = strchr(p, '\n')) != NULL; p++)
		lines++;
	/* (room for "# in-place: " on each line of an in-place pass) */
	char *h = realloc(c->held, c->held_len + len + (c->in_place_pass ? 12 * lines : 0) + 1);

	if (h == NULL) {
		coll_write(c, text);
		return;
	}
	c->held = h;
	for (const char *l = text; *l != '\0';) {
		size_t n = strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n');
		bool tag = c->in_place_pass && l[0] == '#' && l[1] == ' ';
		c->held_len += (size_t)sprintf(h + c->held_len, "%s%.*s", tag ? "# in-place: " : "",
					       (int)(n - (tag ? 2 : 0)), l + (tag ? 2 : 0));
		l += n;
	}
}

/* The lines held so far, out now. */
static void coll_release(struct dp_coll *c)
{
	if (c->held_len)
		coll_write(c, c->held);
	free(c->held);
	c->held = NULL;
	c->held_len = 0;
	c->holding = false;
}

/* text to c's output; with inplace=on, held until the size's result line. */
static void coll_put(struct dp_coll *c, const char *text)
{
	if (c->holding)
		coll_hold(c, text);
	else
		coll_write(c, text);
}

__attribute__((format(printf, 2, 3))) static void coll_printf(struct dp_coll *c,
								const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	coll_put(c, text);
}

/*
 * Per-message latency of the size that just finished: its histograms, read
 * once, added to the run's; with print, also its "# latency:" line. A copy
 * that cannot be allocated fails the run (totals or a line would be missing).
 */
static void coll_take_latency(struct dp_coll *c, bool print)
{
	struct ne_coll_hist *lat = malloc(sizeof(*lat)), *wait = malloc(sizeof(*wait));
	char line[320];

	if (lat && wait && ne_coll_get_latency(c->run, lat, wait) == 0) {
		if (print) {
			ne_coll_format_latency(lat, wait, line, sizeof(line));
			coll_put(c, line);
			if (c->cur >= 0) /* (the size coll_keep_result kept) */
				snprintf(c->done[c->cur].latency, sizeof(c->done[0].latency), "%s", line);
		}
		ne_coll_hist_merge(&c->lat, lat);
		ne_coll_hist_merge(&c->wait, wait);
	} else {
		fprintf(stderr, "rocelab-dp: per-message latency: out of memory\n");
		c->failed = true;
	}
	free(lat);
	free(wait);
}

/* Add the finishing size's collective counters to c->sum (with print_latency,
 * print its "# latency:" line), then destroy the run unless keep (a size
 * before the last: its run goes when the next one starts, coll_start_size,
 * at the same moment with lanes or without). */
static void coll_end_run(struct dp_coll *c, bool print_latency, bool keep)
{
	struct ne_coll_stats st;
	struct ne_coll_proxy_stats ps;
	uint64_t busiest = 0;

	ne_coll_get_stats(c->run, &st);
	ne_coll_stats_add(&c->sum, &st);
	coll_take_latency(c, print_latency);
	/* (split: each lane's busiest, frozen in its record; a failed lane's thread may
	 * still poll its ranks) */
	for (uint32_t r = 0; !c->split && r < c->cfg.nranks; r++)
		if (ne_coll_rank_proxy(c->run, r, &ps) == 0 && ps.busy_ns > busiest)
			busiest = ps.busy_ns;
	for (uint32_t l = 0; c->split && l < c->ns->n_lanes; l++)
		if (c->lane[l].rec.proxy_busy_max_ns > busiest)
			busiest = c->lane[l].rec.proxy_busy_max_ns;
	c->proxy_busy_max_ns += busiest;
	if (keep || c->split)
		return; /* (split: the lanes' threads may still poll it: destroyed as the next size
			 * starts, coll_lanes_next_size, the last one with c) */
	ne_coll_destroy(c->run);
	c->run = NULL;
}

/* The engine collective c's lane runs on: the lane's partition's when split, else the NICs'. */
static struct dp_engine *coll_lane_eng(const struct dp_coll *c, uint32_t lane)
{
	return c->split ? c->ns->lane[lane].eng : nics_eng(c->ns);
}

/*
 * A lane's proxy wake-up. It does not count as an event: with lanes each
 * lane has its own, where one engine has one for all (a lane's wake-up at
 * the same instant as another's, or superseded by one, is not one engine's
 * event), and the run's events must not depend on the partitioning.
 */
static void coll_proxy_due(void *obj, uint64_t at, uint64_t now)
{
	struct coll_proxy_wake *pw = obj;
	struct dp_coll *c = pw->c;

	dp_engine_uncount(coll_lane_eng(c, pw->lane));
	if (pw->at == at)
		pw->at = 0;
	coll_poll(c, pw->lane, now);
}

/*
 * With proxy costs a lane has work of its own in the future (a proxy thread
 * busy until then); wake it at that time unless an earlier wake-up is
 * pending. A superseded wake-up still fires and polls for nothing. With one
 * collective it is keyed (DP_COLL_LP, 0): first among its instant's events
 * on any engine, so that the ranks whose threads free then are run at the
 * same place in the order with lanes and without (a NIC event of that
 * instant, keyed by its host, comes after, and finds them run).
 */
static void coll_arm_proxy(struct dp_coll *c, uint32_t lane, const struct ne_coll *run, uint64_t now)
{
	struct coll_proxy_wake *pw = &c->pwake[lane];
	struct dp_nics *ns = c->ns;
	uint64_t at = ne_coll_next_event_ns(run);

	if (at == UINT64_MAX || (pw->at && pw->at <= at && pw->at > now))
		return;
	at = at > now ? at : now + 1;
	struct dp_engine *e = coll_lane_eng(c, lane);
	int rc = ns->n_colls == 1 ? dp_timer_add_keyed(e, DP_COLL_LP, DP_COLL_LP, at, coll_proxy_due, pw, at)
				  : dp_timer_add_lp(e, DP_COLL_LP, at, coll_proxy_due, pw, at);
	if (rc == 0)
		pw->at = at;
}

/* One row of the active-QP series (ne_coll_set_series) as a line of --coll-series. */
static void coll_series_row(void *ctx, const struct ne_coll_series_row *row)
{
	struct dp_coll *c = ctx;

	fprintf(c->series, "%" PRIu64 ",%" PRIu64 ".%03u,%" PRIu64 ".%03u,%" PRIu64 ",%.6f,%u,%u\n",
		c->size, row->t_ns / 1000, (unsigned)(row->t_ns % 1000), row->dt_ns / 1000,
		(unsigned)(row->dt_ns % 1000), row->qp_ns, row->mean, row->max, row->nics);
}

/* The sweep ended: the series file must be complete, or the run fails. */
static void coll_series_flush(struct dp_coll *c)
{
	if (c->series && (fflush(c->series) != 0 || ferror(c->series))) {
		fprintf(stderr, "rocelab-dp: --coll-series %s: write failed\n", c->series_path);
		c->failed = true;
	}
}

/* A work completion of c's run failed: say so and stop the collective. */
void coll_failed(struct dp_coll *c)
{
	struct ne_coll_stats st;

	ne_coll_get_stats(c->run, &st);
	coll_release_held(c);
	coll_printf(c, "# %s: size %" PRIu64 ": a work completion failed (%s); stopping\n",
		    c->spec, c->size, ne_wc_status_str((enum ne_wc_status)st.first_error_status));
	c->failed = c->finished = true;
	coll_end_run(c, false, false);
}

/*
 * The size after c's, DP_COLL_SIZE_GAP_NS after it ended (end_ns). Keyed
 * (DP_COLL_LP, 0) whoever schedules it when the run has one collective, so
 * that it takes the same place among that instant's events on one engine
 * as among the partitions'. Split: a global event (coll_lanes_next_size),
 * added with every partition stopped (dp_nics_sizes_next) once every lane
 * ended the size; the gap is longer than a window (rocelab-dp splits a
 * sweep only then), so the event is past every partition's window.
 * 0, or -ENOMEM.
 */
int coll_next_size(struct dp_coll *c, uint64_t end_ns)
{
	struct dp_nics *ns = c->ns;
	uint64_t at = end_ns + DP_COLL_SIZE_GAP_NS;

	if (c->split)
		return dp_timer_add_keyed(ns->fab_eng, DP_COLL_LP, DP_COLL_LP, at, coll_lanes_next_size, c, 0);
	if (ns->n_colls == 1)
		return dp_timer_add_keyed(nics_eng(ns), DP_COLL_LP, DP_COLL_LP, at, coll_start_size, c, 0);
	return dp_timer_add_lp(nics_eng(ns), DP_COLL_LP, at, coll_start_size, c, 0);
}

/* Keep res for dp_nics_coll_view and the closing lines, as the size's entry
 * (c->cur); out of memory fails the run (a size would be missing from them). */
static void coll_keep_result(struct dp_coll *c, const struct ne_coll_result *res)
{
	struct dp_coll_size *d = realloc(c->done, (c->n_done + 1) * sizeof(*d));

	if (d == NULL) {
		fprintf(stderr, "rocelab-dp: collective results: out of memory\n");
		c->failed = true;
		return;
	}
	c->done = d;
	memset(&d[c->n_done], 0, sizeof(*d));
	d[c->n_done].res = *res;
	c->cur = (int32_t)c->n_done++;
}

void dp_coll_sizes_sum(const struct dp_coll_size *z, uint32_t n, struct ne_coll_sweep_sum *t)
{
	*t = (struct ne_coll_sweep_sum){0};
	for (uint32_t i = 0; i < n; i++)
		ne_coll_sweep_add(t, &z[i].res, z[i].has_in_place ? &z[i].in_place : NULL);
}

/* nccl-tests' closing lines over the sizes kept: out-of-bounds values and the average busbw. */
static void coll_print_footer(struct dp_coll *c)
{
	struct ne_coll_sweep_sum t;
	char text[256];

	dp_coll_sizes_sum(c->done, c->n_done, &t);
	ne_coll_format_footer(&t, text, sizeof(text));
	coll_put(c, text);
}

/*
 * The NVLink table of the size that ended, when some ranks share a server:
 * "# nvlink: transfers N, bytes B, connections K of M" (transfers timed by
 * the intra-server model, which never entered the fabric), then "# gates:"
 * with what the NVLink transfers and the network messages waited for last
 * (ne_coll_stats.gate_nvl, gate_net). Nothing without.
 */
static void coll_put_nvlink(struct dp_coll *c)
{
	static const char *const gate_names[NE_COLL_GATES] = {"data", "cts", "slot", "pxn", "write",
								    "queue"};
	struct ne_coll_stats st;
	char text[320];
	int len;

	if (ne_coll_nvlink_conns(c->run) == 0)
		return;
	ne_coll_get_stats(c->run, &st);
	coll_printf(c, "# nvlink: transfers %" PRIu64 ", bytes %" PRIu64 ", connections %u of %u\n",
		    st.nvlink_xfers, st.nvlink_bytes, ne_coll_nvlink_conns(c->run),
		    ne_coll_num_conns(c->run));
	len = snprintf(text, sizeof(text), "# gates: nvlink");
	for (int g = 0; g < NE_COLL_GATES; g++)
		len += snprintf(text + len, sizeof(text) - len, " %s=%" PRIu64, gate_names[g], st.gate_nvl[g]);
	len += snprintf(text + len, sizeof(text) - len, "; network");
	for (int g = 0; g < NE_COLL_GATES; g++)
		len += snprintf(text + len, sizeof(text) - len, " %s=%" PRIu64, gate_names[g], st.gate_net[g]);
	coll_printf(c, "%s\n", text);
}

/* c finished or failed at now: whoever asked is told (dp_job.c). */
static void coll_notify_end(struct dp_coll *c, uint64_t now)
{
	if (c->on_end)
		c->on_end(c->on_end_ctx, c, now);
}

/*
 * The result line of c's size with its in-place half or N/A (its entry
 * c->cur; unkept, when not NULL, where none could be kept), then the lines
 * held meanwhile (inplace=on).
 */
static void coll_put_result(struct dp_coll *c, const struct ne_coll_result *unkept)
{
	const struct dp_coll_size *d = c->cur >= 0 ? &c->done[c->cur] : NULL;
	const struct ne_coll_result *r = d ? &d->res : unkept;
	char line[256];

	if (r) {
		ne_coll_format_result(r, d && d->has_in_place ? &d->in_place : NULL, line, sizeof(line));
		coll_write(c, line);
	}
	coll_release(c);
}

void coll_release_held(struct dp_coll *c)
{
	if (c->in_place_pass)
		coll_put_result(c, NULL); /* (its out-of-place half ran; the in-place one N/A unless it ended) */
	else
		coll_release(c);
	c->in_place_pass = false;
}

/* c's run of its size ended with res: kept, its lines out (or held for the in-place pass). */
static bool coll_take_result(struct dp_coll *c, struct ne_coll_result *res)
{
	char line[256];

	if (c->in_place_pass) {
		if (!ne_coll_in_place_checked(c->cfg.op))
			res->wrong = -1; /* (nccl-tests: N/A) */
		if (c->cur >= 0) {
			c->done[c->cur].in_place = *res;
			c->done[c->cur].has_in_place = true;
		}
		return false; /* (its comment lines: the out-of-place pass's stand for both) */
	}
	coll_keep_result(c, res);
	if (!c->in_place)
		coll_put_result(c, res); /* (res: the line even if it could not be kept) */
	ne_coll_format_active(res, line, sizeof(line));
	coll_put(c, line);
	if (ne_coll_format_algo(c->run, line, sizeof(line)) > 0) /* ("" for the ring asked) */
		coll_put(c, line);
	coll_put_nvlink(c);
	return true;
}

/* c's run finished its size (or its size's pass) at now: its lines; then the
 * in-place pass, the next size, or the end. */
void coll_size_done(struct dp_coll *c, uint64_t now)
{
	struct dp_nics *ns = c->ns;
	struct ne_coll_result res;
	bool latency = false; /* (the latency line follows the result's lines) */
	bool ip_next = c->in_place && !c->in_place_pass;
	bool last = c->size >= c->size_max && !ip_next;
	/* (split: now is the thread's that counted last; the size ended with the latest lane) */
	uint64_t end = c->split ? ne_coll_done_at(c->run) : now;

	if (!c->in_place_pass)
		c->cur = -1; /* (a new size: coll_keep_result sets it) */

	if (ne_coll_get_result(c->run, &res) == 0) {
		res.wrong = !c->cfg.data ? -1 : c->split ? coll_lanes_wrong(c) : ne_coll_check(c->run);
		latency = coll_take_result(c, &res);
		if (res.wrong > 0)
			c->failed = true;
	}
	coll_end_run(c, latency, !last);
	if (c->in_place_pass || !ip_next)
		coll_release_held(c); /* (the size's line, whole) */
	c->run_ended = !last && !c->split; /* (a poll meanwhile must not end it again) */
	fflush(ns->coll_out);
	c->sizes_done += !ip_next; /* (a size is done with its last pass) */
	if (last) {
		c->finished = true;
		coll_print_footer(c);
		coll_series_flush(c);
		coll_notify_end(c, end);
		return;
	}
	c->in_place_pass = ip_next;
	if (!ip_next)
		c->size *= 2;
	if (c->split)
		return; /* (its start: dp_nics_sizes_next, every partition stopped) */
	if (coll_next_size(c, end) < 0)
		coll_start_failed(c, "no timer left");
}

void dp_nics_colls_release(struct dp_nics *ns)
{
	for (uint32_t i = 0; i < ns->n_colls; i++)
		if (!ns->colls[i]->finished)
			coll_release_held(ns->colls[i]);
}

/* Drive collective c's lane at now: its CQs, posts and CTS; wake the NICs it gave work. */
void coll_poll(struct dp_coll *c, uint32_t lane, uint64_t now)
{
	struct dp_nics *ns = c->ns;
	/* (not split: one lane, 0, and none between sizes; split and no run: it
	 * could not start, or the next size is being made) */
	struct ne_coll *run = !c->split ? (c->run_ended ? NULL : c->run)
					: c->lane_run ? c->lane_run[lane] : NULL;

	if (run == NULL)
		return;
	/* (called twice per NIC event: most find nothing to do but arm the NICs
	 * listed; a quiet run's poll, proxy wake-up and end check are no-ops, and
	 * were a sixth of the NIC path's instructions at 128 ranks, callgrind) */
	if (ne_coll_quiet(run)) {
		if (ns->lane[lane].n_wake)
			coll_arm_listed(ns, lane, now);
		return;
	}
	int rc = ne_coll_poll(run, now);
	if (c->split) {
		coll_arm_listed(ns, lane, now);
		if (rc >= 0 && !ne_coll_done(run))
			coll_arm_proxy(c, lane, run, now);
		coll_lane_check(c, lane, run, rc < 0, now);
		return;
	}
	if (rc < 0) {
		coll_failed(c);
		coll_notify_end(c, now);
		return;
	}
	coll_arm_listed(ns, lane, now);
	if (!ne_coll_done(run)) {
		coll_arm_proxy(c, lane, run, now);
		return;
	}
	coll_size_done(c, now);
}

/*
 * inplace=on: the in-place pass's QPs take its out-of-place pass's numbers,
 * as NCCL runs both on a communicator's QPs (new numbers would take other
 * paths: rxe's UDP ports and E-ECMP's hash come from them); their first PSNs
 * half the PSN space away, so that no frame of the pass before can match.
 */
static void coll_keep_qpns(struct dp_coll *c)
{
	c->cfg.psn_offset = c->in_place_pass ? 1u << 23 : 0;
	for (uint32_t r = 0; c->in_place && r < c->cfg.nranks; r++) {
		if (!c->in_place_pass)
			c->first_qpn[r] = ne_nic_next_qpn(c->nics[r]);
		else
			ne_nic_set_next_qpn(c->nics[r], c->first_qpn[r]); /* (always in range: read from it) */
	}
}

/*
 * The run of c's current size: its NICs' payload model, the collective, its
 * series. 0, or a negative errno (c->run may be set: coll_cannot_start).
 */
int coll_create_run(struct dp_coll *c)
{
	struct dp_nics *ns = c->ns;
	int e = 0;

	/* data=off: the buffers only ever hold zeros, so the NICs need not copy
	 * them nor run the ICRC over them (same wire, O(1) per payload byte),
	 * nor even write them: the frames go out flagged (dp_mbuf_priv's
	 * payload_unwritten) and whoever reads payload bytes zeroes them first */
	for (uint32_t r = 0; r < c->cfg.nranks; r++) {
		struct dp_nic_host *nh = &ns->h[c->rank_nic[r]];
		nh->zero_payload = !c->cfg.data && !nh->rdma_end;
		ne_nic_set_zero_payload(c->nics[r], nh->zero_payload, true);
	}
	c->cfg.bytes = c->size;
	c->holding = c->in_place;
	coll_keep_qpns(c);
	/* (split on an MPI rank: the other partitions' connections as counts only) */
	c->cfg.here_lane_of = c->split && ns->lane_alone ? c->lane_of : NULL;
	c->cfg.here_lane = ns->lane_self;
	c->run = ne_coll_create(&c->cfg, c->nics, &e);
	if (c->run && c->series && !c->in_place_pass) /* (a row per size: its out-of-place pass) */
		e = ne_coll_set_series(c->run, coll_series_row, c);
	return c->run == NULL && e == 0 ? -EINVAL : e;
}

/* c's size could not start, for why: say so; the collective failed. */
void coll_start_failed(struct dp_coll *c, const char *why)
{
	coll_release_held(c);
	coll_printf(c, "# %s: size %" PRIu64 ": cannot start (%s)\n", c->spec, c->size, why);
	c->failed = c->finished = true;
}

/* c's size could not start (e: why, a negative errno): say so, and its run goes. */
void coll_cannot_start(struct dp_coll *c, int e)
{
	coll_start_failed(c, strerror(e ? -e : EINVAL));
	ne_coll_destroy(c->run);
	c->run = NULL;
}

/* --fabric flow: the size ended at now (arg 0), or failed (arg 1). */
static void coll_flow_end(void *obj, uint64_t arg, uint64_t now)
{
	if (arg)
		coll_notify_end(obj, now);
	else
		coll_size_done(obj, now);
}

/* --fabric flow: the size ended at now (its counters line first), or failed
 * (why); what follows runs from a timer at now, outside the flow engine's step. */
static void coll_flow_done(void *obj, int err, const char *text, uint64_t now)
{
	struct dp_coll *c = obj;

	if (err) {
		coll_start_failed(c, text);
		ne_coll_destroy(c->run);
		c->run = NULL;
	} else {
		coll_put(c, text);
	}
	if (dp_timer_add_lp(nics_eng(c->ns), DP_COLL_LP, now, coll_flow_end, c, err != 0) < 0 && !err)
		coll_start_failed(c, "no timer left");
}

/*
 * --fabric flow: c's size (its run created, not started) on the flow engine
 * from now, sharing its fabric with the collectives running then; its lines
 * at its end (coll_flow_done), the flow engine's counters first.
 */
static void coll_flow_size(struct dp_coll *c, uint64_t now)
{
	uint32_t *host_of = calloc(c->cfg.nranks, sizeof(*host_of));
	char why[256] = "out of memory";
	int e = host_of ? 0 : -ENOMEM;

	for (uint32_t r = 0; host_of && r < c->cfg.nranks; r++)
		host_of[r] = c->ns->h[c->rank_nic[r]].host;
	if (!e)
		e = c->ns->flow_run(c->ns, c->run, &c->cfg, c->nics, host_of, now, coll_flow_done, c,
				    why, sizeof(why));
	free(host_of);
	if (e) {
		coll_start_failed(c, why);
		ne_coll_destroy(c->run);
		c->run = NULL;
		coll_notify_end(c, now);
	}
}

void coll_start_size(void *obj, uint64_t arg, uint64_t now)
{
	struct dp_coll *c = obj;

	(void)arg;
	ne_coll_destroy(c->run); /* (the size before's, kept until now: coll_end_run) */
	c->run = NULL;
	c->run_ended = false;
	int e = coll_create_run(c);

	if (e == 0 && c->ns->flow_run) {
		coll_flow_size(c, now);
		return;
	}
	if (e == 0 && ne_coll_start(c->run, now) != 0)
		e = -EINVAL;
	if (e != 0) {
		coll_cannot_start(c, e);
		coll_notify_end(c, now);
		return;
	}
	coll_poll(c, 0, now);
}

uint32_t coll_nruns(const struct dp_coll *c)
{
	uint32_t n = 1;

	for (uint64_t s = c->size_min; s < c->size_max; s *= 2)
		n++;
	return c->in_place ? 2 * n : n;
}

int dp_nics_add_coll(struct dp_nics *ns, const char *spec, uint64_t start_ns, FILE *out, char *err,
		     size_t errlen)
{
	struct dp_coll *c = calloc(1, sizeof(*c));
	struct dp_coll **cs = realloc(ns->colls, (ns->n_colls + 1) * sizeof(*cs));

	if (cs)
		ns->colls = cs;
	if (c == NULL || cs == NULL) {
		free(c);
		snprintf(err, errlen, "--coll: out of memory");
		return -1;
	}
	c->ns = ns;
	c->id = ns->n_colls + 1;
	c->pwake = calloc(ns->n_lanes, sizeof(*c->pwake));
	if (c->pwake == NULL) {
		coll_free(c);
		snprintf(err, errlen, "--coll: out of memory");
		return -1;
	}
	for (uint32_t l = 0; l < ns->n_lanes; l++)
		c->pwake[l] = (struct coll_proxy_wake){.c = c, .lane = l};
	if (coll_parse_spec(ns, c, spec, err, errlen) < 0 || coll_take_ranks(ns, c, err, errlen) < 0) {
		coll_free(c);
		return -1;
	}
	ns->colls[ns->n_colls++] = c;
	ns->coll_out = out;
	c->size = c->size_min;
	c->cur = -1;
	char hdr[512];
	ne_coll_format_header(hdr, sizeof(hdr));
	coll_printf(c, "# %s: %u ranks, %u channel(s), %u QP(s) per connection (%s), chunk %u, window %u, "
		       "CTS %s\n%s",
		    ne_coll_op_name(c->cfg.op), c->cfg.nranks, c->cfg.channels, c->cfg.qps_per_conn,
		    ne_coll_qp_mode_name(c->cfg.qp_mode), c->cfg.chunk_bytes, c->cfg.window,
		    c->cfg.cts ? "on" : "off", hdr);
	ne_coll_format_costs(&c->cfg, hdr, sizeof(hdr)); /* "" without costs */
	coll_put(c, hdr);
	if (ns->n_lanes > 1)
		return coll_split(c, start_ns, err, errlen);
	return dp_timer_add_lp(nics_eng(ns), DP_COLL_LP, start_ns, coll_start_size, c, 0);
}

int dp_nics_coll_series(struct dp_nics *ns, const char *path, char *err, size_t errlen)
{
	for (uint32_t i = 0; path == NULL && i < ns->n_colls; i++)
		if (ns->colls[i]->cfg.series_ns != 0) {
			snprintf(err, errlen, "--coll series=%uns: needs --coll-series FILE",
				 ns->colls[i]->cfg.series_ns);
			return -1;
		}
	if (path == NULL || ns->n_colls == 0)
		return 0;
	if (ns->n_colls > 1) {
		snprintf(err, errlen, "--coll-series %s: one collective per file (this run has %u)", path,
			 ns->n_colls);
		return -1;
	}
	struct dp_coll *c = ns->colls[0];
	if (c->cfg.series_ns == 0)
		c->cfg.series_ns = DP_COLL_SERIES_NS;
	c->series = fopen(path, "w");
	if (c->series == NULL) {
		snprintf(err, errlen, "--coll-series %s: cannot write (%s)", path, strerror(errno));
		return -1;
	}
	c->series_path = path;
	fputs("size,t_us,dt_us,qp_ns,qps_mean,qps_max,nics_active\n", c->series);
	return 0;
}

int dp_nics_colls_begin(struct dp_nics *ns, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < ns->n_colls; i++) {
		struct dp_coll *c = ns->colls[i];
		if (c->split && c->run == NULL && !c->finished && coll_lanes_begin(c, c->split_start_ns, true) < 0) {
			snprintf(err, errlen, "--coll: out of memory");
			return -1;
		}
	}
	return 0;
}

/* Append host pair (rank a's, rank b's) to out when there is room (out NULL:
 * only count it). Returns the new n. */
static uint32_t pair_add(const struct dp_nics *ns, const struct dp_coll *c, uint32_t a, uint32_t b,
			 uint32_t (*out)[2], uint32_t n, uint32_t max)
{
	if (out == NULL)
		return n + 1;
	if (n >= max)
		return n;
	out[n][0] = ns->h[c->rank_nic[a]].host;
	out[n][1] = ns->h[c->rank_nic[b]].host;
	return n + 1;
}

/* Collective c's pairs after the n already in out (dp_nics_coll_pairs). Returns the new n. */
static uint32_t coll_pairs(const struct dp_nics *ns, const struct dp_coll *c, uint32_t (*out)[2],
			   uint32_t n, uint32_t max)
{
	uint32_t nr = c->cfg.nranks;

	if (c->cfg.op == NE_COLL_SENDRECV) { /* its own pairs: O(pairs), not O(nranks^2 x pairs) */
		for (uint32_t p = 0; p < ne_coll_p2p_npairs(&c->cfg); p++) {
			uint32_t a, b;

			ne_coll_p2p_pair(&c->cfg, p, &a, &b);
			n = pair_add(ns, c, a, b, out, n, max);
		}
		return n;
	}
	for (uint32_t a = 0; a < nr; a++)
		for (uint32_t b = 0; b < nr; b++) {
			bool edge;
			if (a == b)
				continue;
			switch (c->cfg.op) {
			case NE_COLL_ALLTOALL: edge = true; break;
			case NE_COLL_INCAST: edge = b == c->cfg.root; break;
			default: edge = b == (a + 1) % nr; break; /* the ring */
			}
			if (edge)
				n = pair_add(ns, c, a, b, out, n, max);
		}
	return n;
}

bool dp_nics_coll_tree(const struct dp_nics *ns)
{
	for (uint32_t i = 0; i < ns->n_colls; i++)
		if (ns->colls[i]->cfg.op == NE_COLL_ALLREDUCE && ns->colls[i]->cfg.algo != NE_COLL_ALGO_RING)
			return true;
	return false;
}

uint32_t dp_nics_coll_pairs(const struct dp_nics *ns, uint32_t (*out)[2], uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < ns->n_colls; i++)
		n = coll_pairs(ns, ns->colls[i], out, n, max);
	return n;
}

/* Active QPs per NIC over the sizes run: time-weighted mean over the
 * collective's time, the same while a NIC had one, the most on one NIC. */
static void print_active_totals(const struct ne_coll_stats *s, FILE *out)
{
	fprintf(out, " active_qps_mean=%.3f active_qps_busy_mean=%.3f active_qps_max=%" PRIu32,
		s->nic_ns ? (double)s->active_qp_ns / (double)s->nic_ns : 0.0,
		s->active_busy_ns ? (double)s->active_qp_ns / (double)s->active_busy_ns : 0.0,
		s->active_qps_max);
}

/* The collective's counters: work requests and completions, the proxy thread, latency. */
void coll_print_totals(const struct dp_coll *c, FILE *out)
{
	const struct ne_coll_stats *s = &c->sum;

	fprintf(out, " messages=%" PRIu64 " data_wqes=%" PRIu64 " zero_len_wqes=%" PRIu64
		     " cts=%" PRIu64 " wqes_posted=%" PRIu64 " cqes_polled=%" PRIu64
		     " proxy_busy_ns=%" PRIu64 " proxy_busy_max_ns=%" PRIu64 " rr_mismatch=%" PRIu64,
		s->transfers_done, s->data_wrs, s->zero_len_wrs, s->cts_sent, s->wqes_posted,
		s->cqes_polled, s->proxy_busy_ns, c->proxy_busy_max_ns, s->rr_mismatch);
	print_active_totals(s, out);
	fprintf(out, " msg_lat_mean_us=%.3f msg_lat_p50_us=%.3f msg_lat_p99_us=%.3f msg_lat_max_us=%.3f"
		     " msg_wait_mean_us=%.3f msg_wait_p99_us=%.3f",
		ne_coll_hist_mean(&c->lat) / 1e3, (double)ne_coll_hist_quantile(&c->lat, 0.5) / 1e3,
		(double)ne_coll_hist_quantile(&c->lat, 0.99) / 1e3, (double)c->lat.max_ns / 1e3,
		ne_coll_hist_mean(&c->wait) / 1e3, (double)ne_coll_hist_quantile(&c->wait, 0.99) / 1e3);
}
