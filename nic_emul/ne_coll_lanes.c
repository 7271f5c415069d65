/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll lanes: the progress of one collective split by rank, so that
 * threads that each run some ranks' NICs (dataplane partitions) drive it
 * side by side (ne_coll.h, ne_coll_set_lanes). A lane is a struct ne_coll
 * that shares the collective's plan, ranks, connections and groups (each
 * written by one side: a connection's sender fields and flags by its
 * sender's lane, its receiver fields and rflags by its receiver's) and owns
 * what a poll changes: the ready heap, the marked lists, the counters, the
 * statistics and the latency histograms. The end sums them.
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A lane of c for its ranks with lane_of[rank] == l: shares c's plan, owns its progress. */
static int lane_init(struct ne_coll *c, struct ne_coll *ln, uint32_t l)
{
	*ln = *c; /* (the shared arrays: plan, ranks, connections, groups) */
	ln->main = c;
	ln->lane = l;
	ln->lanes = NULL;
	ln->nlanes = 0;
	ln->nvl_heap = NULL; /* (the collective's: its own comes below) */
	ln->dirty_conns = calloc(c->nconns + 1, sizeof(*ln->dirty_conns));
	ln->dirty_groups = calloc((size_t)c->ngroups + 1, sizeof(*ln->dirty_groups));
	ln->ready = calloc(c->nranks, sizeof(*ln->ready));
	ln->lat = calloc(1, sizeof(*ln->lat));
	ln->wait = calloc(1, sizeof(*ln->wait));
	ln->iter_ns = NULL;
	ln->send_total = ln->recv_total = 0;
	/* proxy costs: its ranks' threads on heaps of its own (the threads themselves,
	 * ranks[i].proxy, are each rank's, written by its lane only) */
	ln->due = c->proxy_on ? calloc(c->nranks, sizeof(*ln->due)) : NULL;
	ln->ndue = 0;
	ln->timers = NULL;
	ln->ntimers = ln->timers_cap = 0;
	int rc = ne_coll_series_lane_init(ln, c); /* (its ranks' rows; merged at the end) */
	if (!rc)
		rc = ne_coll_nvl_lane_init(ln); /* (its own NVLink transfers in flight) */
	if (!ln->dirty_conns || !ln->dirty_groups || !ln->ready || !ln->lat || !ln->wait ||
	    (c->proxy_on && !ln->due) || rc)
		return -ENOMEM;
	for (uint32_t k = 0; k < c->nconns; k++) {
		ln->send_total += coll_mine(ln, c->conns[k].src) ? c->conns[k].nxfers : 0;
		ln->recv_total += coll_mine(ln, c->conns[k].dst) ? c->conns[k].nxfers : 0;
	}
	ln->empty = true;
	for (uint32_t i = 0; i < c->nranks; i++)
		ln->empty &= !coll_mine(ln, i);
	ln->done = ln->empty; /* (no rank: nothing to start, nothing to wait for) */
	return 0;
}

static void lane_free(struct ne_coll *ln)
{
	free(ln->dirty_conns);
	free(ln->dirty_groups);
	free(ln->ready);
	free(ln->lat);
	free(ln->wait);
	free(ln->due);
	free(ln->timers);
	ne_coll_series_free(ln);
	ne_coll_nvl_free(ln);
}

void ne_coll_lanes_free(struct ne_coll *c)
{
	for (uint32_t l = 0; c->lanes && l < c->nlanes; l++)
		lane_free(&c->lanes[l]);
	free(c->lanes);
	free(c->lane_of);
	c->lanes = NULL;
	c->lane_of = NULL;
	c->nlanes = 0;
}

int ne_coll_set_lanes(struct ne_coll *c, uint32_t nlanes, const uint32_t *lane_of)
{
	int rc = 0;

	if (!c || !lane_of || nlanes < 1 || c->main || c->lanes || c->running || c->done ||
	    c->iters_total != 1)
		return -EINVAL;
	for (uint32_t i = 0; i < c->nranks; i++)
		if (lane_of[i] >= nlanes)
			return -EINVAL;
	if (ne_coll_nvl_lanes_check(c, lane_of)) /* (a server's NVLink hops in one lane) */
		return -EINVAL;
	c->lanes = calloc(nlanes, sizeof(*c->lanes));
	c->lane_of = malloc(c->nranks * sizeof(*c->lane_of));
	if (!c->lanes || !c->lane_of) {
		free(c->lanes);
		free(c->lane_of);
		c->lanes = NULL;
		c->lane_of = NULL;
		return -ENOMEM;
	}
	memcpy(c->lane_of, lane_of, c->nranks * sizeof(*lane_of));
	c->nlanes = nlanes;
	for (uint32_t l = 0; l < nlanes && !rc; l++)
		rc = lane_init(c, &c->lanes[l], l);
	if (rc) {
		ne_coll_lanes_free(c);
		return rc;
	}
	/* a CQ notification goes to the rank's lane */
	for (uint32_t i = 0; i < c->nranks; i++)
		c->ranks[i].owner = &c->lanes[lane_of[i]];
	return 0;
}

struct ne_coll *ne_coll_lane(struct ne_coll *c, uint32_t l)
{
	if (!c)
		return NULL;
	if (!c->lanes)
		return l == 0 ? c : NULL;
	return l < c->nlanes ? &c->lanes[l] : NULL;
}

int ne_coll_lane_start(struct ne_coll *ln, uint64_t now_ns)
{
	if (!ln || !ln->main)
		return -EINVAL;
	if (ln->running || ln->done)
		return -EBUSY;
	ne_coll_series_start(ln, now_ns);
	ne_coll_begin_iter(ln, now_ns);
	return 0;
}

int ne_coll_lanes_end_recs(struct ne_coll *c, const struct ne_coll_lane_rec *const *rec)
{
	uint64_t start = UINT64_MAX, end = 0;
	bool running = false, failed = false;

	if (!c || !c->lanes || c->done || !rec)
		return -EINVAL;
	for (uint32_t l = 0; l < c->nlanes; l++) {
		if (c->lanes[l].empty) /* (no rank: nothing to wait for, nothing to add) */
			continue;
		if (!rec[l])
			return -EINVAL;
		running |= !rec[l]->done && !rec[l]->failed;
		failed |= rec[l]->failed;
	}
	/* (stopped before the end, or failed: the rows one engine would have written by now) */
	if (running && !failed)
		return c->series && ne_coll_series_lanes_cut(c) < 0 ? -ENOMEM : -EBUSY;
	/* (a lane still running when another failed waits for nothing more:
	 * what it did so far counts, its time does not) */
	c->failed = failed;
	for (uint32_t l = 0; l < c->nlanes; l++) {
		const struct ne_coll_lane_rec *r = rec[l];

		if (c->lanes[l].empty)
			continue;
		if (r->done) {
			start = r->iter_start < start ? r->iter_start : start;
			end = r->done_at > end ? r->done_at : end;
		}
		c->meas_max = r->meas_max > c->meas_max ? r->meas_max : c->meas_max;
		ne_coll_hist_merge(c->lat, &r->lat);
		ne_coll_hist_merge(c->wait, &r->wait);
		ne_coll_stats_add(&c->stats, &r->stats);
	}
	if (c->failed) {
		if (c->series)
			(void)ne_coll_series_lanes_cut(c); /* (-ENOMEM: the run has failed anyway) */
		return -EIO;
	}
	c->iter_start = start;
	c->done_at = end;
	c->iter_ns[c->iters_done++] = end - c->iter_start;
	c->stats.nic_ns += (end - c->iter_start) * c->nranks;
	c->done = true;
	/* (threads: the lanes' rows are here; ranks never split a collective with a series) */
	if (c->series && ne_coll_series_lanes_emit(c, start, end) < 0) {
		c->failed = true;
		return -EIO;
	}
	return 0;
}

int ne_coll_lanes_end(struct ne_coll *c)
{
	struct ne_coll_lane_rec *recs;
	const struct ne_coll_lane_rec **rec;
	int rc;

	if (!c || !c->lanes || c->done)
		return -EINVAL;
	recs = calloc(c->nlanes, sizeof(*recs));
	rec = calloc(c->nlanes, sizeof(*rec));
	rc = recs && rec ? 0 : -ENOMEM;
	for (uint32_t l = 0; rc == 0 && l < c->nlanes; l++) {
		ne_coll_lane_save(&c->lanes[l], &recs[l]);
		rec[l] = &recs[l];
	}
	if (rc == 0)
		rc = ne_coll_lanes_end_recs(c, rec);
	free(recs);
	free(rec);
	return rc;
}

int ne_coll_lane_save(const struct ne_coll *ln, struct ne_coll_lane_rec *rec)
{
	if (!ln || !ln->main || !rec)
		return -EINVAL;
	memset(rec, 0, sizeof(*rec));
	rec->done = ln->done;
	rec->failed = ln->failed;
	rec->meas_max = ln->meas_max;
	rec->iter_start = ln->iter_start;
	rec->done_at = ln->done_at;
	rec->stats = ln->stats;
	rec->lat = *ln->lat;
	rec->wait = *ln->wait;
	for (uint32_t i = 0; ln->proxy_on && i < ln->nranks; i++)
		if (coll_mine(ln, i) && ln->ranks[i].pst.busy_ns > rec->proxy_busy_max_ns)
			rec->proxy_busy_max_ns = ln->ranks[i].pst.busy_ns;
	return 0;
}
