/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_coll_lanes: a collective split by rank into lanes, one per partition
 * (dp_coll.h): each lane's start and end, the size's end when the last lane
 * ends, the next size of a sweep, and the lanes' records for MPI ranks.
 */
#define _GNU_SOURCE /* qsort_r */
#include "dp_coll_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>


/* A split run's data check: the sum of its lanes' (each checked its ranks as it ended). */
long coll_lanes_wrong(const struct dp_coll *c)
{
	long wrong = 0;

	for (uint32_t l = 0; l < c->ns->n_lanes; l++)
		wrong += c->lane[l].wrong;
	return wrong;
}

/* A split run ends from its lanes' records (each its lane's, frozen): its lines. */
static void coll_end_lanes(struct dp_coll *c, uint64_t now)
{
	const struct ne_coll_lane_rec **rec = calloc(c->ns->n_lanes, sizeof(*rec));
	int rc = rec ? 0 : -ENOMEM;

	for (uint32_t l = 0; rc == 0 && l < c->ns->n_lanes; l++)
		rec[l] = &c->lane[l].rec;
	if (rc == 0)
		rc = ne_coll_lanes_end_recs(c->run, rec);
	free(rec);
	if (rc == -EBUSY)
		return; /* (the run stopped first: unfinished, dp_nics_failures) */
	if (rc < 0)
		coll_failed(c);
	else
		coll_size_done(c, now);
}

/*
 * A split run: once lane's part has ended (done, or failed), freeze it and
 * count it; the lane that counts last, in whatever order the threads get
 * there, ends the size (the time is the latest lane's end, the sums do not
 * depend on the order), on its thread: its lines (under MPI ranks, where a
 * rank counts only its own lane, dp_nics_sizes_next ends it, and the next
 * size's start is scheduled there in any case). A lane that failed stops the
 * others' waiting a window later, on every partition alike
 * (dp_nics_lane_failed, dp_parts_failure_seen): the collective then ends
 * after the run (dp_nics_lanes_finish).
 */
void coll_lane_check(struct dp_coll *c, uint32_t lane, const struct ne_coll *run,
			    bool failed, uint64_t now)
{
	struct coll_lane *cl = &c->lane[lane];

	if (cl->ended || !(failed || ne_coll_done(run)))
		return;
	ne_coll_lane_save(run, &cl->rec);
	if (!failed && c->cfg.data) /* (its ranks' outputs are final: the lane is done) */
		cl->wrong = ne_coll_check(run);
	cl->ended = cl->taken = true;
	c->lane_left[lane] = failed || c->lane_left[lane] == 0 ? 0 : c->lane_left[lane] - 1;
	if (__atomic_add_fetch(&c->lanes_ended, 1, __ATOMIC_ACQ_REL) == c->ns->n_lanes)
		coll_end_lanes(c, now);
}

/* A split run: lane's ranks start at now, on the lane's engine. */
static void coll_lane_start(void *obj, uint64_t lane, uint64_t now)
{
	struct dp_coll *c = obj;

	if (lane != c->first_lane) /* (one engine starts the collective in one event) */
		dp_engine_uncount(c->ns->lane[lane].eng);
	if (c->run == NULL) /* (its size could not start: coll_lanes_begin) */
		return;
	ne_coll_lane_start(ne_coll_lane(c->run, (uint32_t)lane), now);
	coll_poll(c, (uint32_t)lane, now);
}

/* A split c's run goes, its lanes with it (no lane polls it again). */
static void coll_lanes_drop_run(struct dp_coll *c)
{
	ne_coll_destroy(c->run);
	c->run = NULL;
	memset(c->lane_run, 0, c->ns->n_lanes * sizeof(*c->lane_run));
}

/*
 * c's run of its current size, created and split by the ranks' lanes: each
 * lane with a rank starts at start_ns on its partition's engine. At set-up
 * (first) the first such lane's start counts as the one engine's start
 * event; a later size's starts are keyed as coll_next_size keys the one
 * engine's, and none counts (the global event that called this did).
 * Returns 0 (a run that cannot start says so, as at a size's start), or
 * -ENOMEM.
 */
int coll_lanes_begin(struct dp_coll *c, uint64_t start_ns, bool first)
{
	struct dp_nics *ns = c->ns;
	int e = coll_create_run(c);

	if (e == 0)
		e = ne_coll_set_lanes(c->run, ns->n_lanes, c->lane_of);
	if (e != 0) {
		coll_cannot_start(c, e);
		return 0;
	}
	memset(c->lane, 0, ns->n_lanes * sizeof(*c->lane));
	c->lanes_ended = 0;
	c->first_lane = UINT32_MAX;
	c->next_scheduled = false;
	for (uint32_t l = 0; l < ns->n_lanes; l++) {
		c->lane_run[l] = ne_coll_lane(c->run, l);
		if (ne_coll_done(c->lane_run[l])) { /* (no rank there) */
			c->lane[l].ended = c->lane[l].taken = true;
			c->lane_left[l] -= c->lane_left[l] > 0;
			c->lanes_ended++;
			continue;
		}
		if (first && c->first_lane == UINT32_MAX)
			c->first_lane = l;
		if ((first ? dp_timer_add_lp(ns->lane[l].eng, DP_COLL_LP, start_ns, coll_lane_start, c, l)
			   : dp_timer_add_keyed(ns->lane[l].eng, DP_COLL_LP, DP_COLL_LP, start_ns,
						coll_lane_start, c, l)) < 0) {
			coll_lanes_drop_run(c); /* (the starts added find no run: coll_lane_start) */
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * A split collective's next size (coll_next_size): a global event, every
 * partition stopped. The size before's run goes (its QPs before the next
 * run's come, as on one engine: coll_start_size) and the next one starts
 * in lanes.
 */
void coll_lanes_next_size(void *obj, uint64_t arg, uint64_t now)
{
	struct dp_coll *c = obj;

	(void)arg;
	coll_lanes_drop_run(c);
	if (coll_lanes_begin(c, now, false) < 0)
		coll_start_failed(c, "no timer left");
}

/*
 * NICs in lanes (ns->n_lanes > 1): c's first size is created now and split
 * by the ranks' lanes (coll_lanes_begin), to start at start_ns. Returns 0 (a
 * run that cannot start says so, as at a size's start), or -1 with a
 * message.
 */
int coll_split(struct dp_coll *c, uint64_t start_ns, char *err, size_t errlen)
{
	struct dp_nics *ns = c->ns;

	c->split = true;
	c->lane_of = calloc(c->cfg.nranks, sizeof(*c->lane_of));
	c->lane_left = calloc(ns->n_lanes, sizeof(*c->lane_left));
	c->lane = calloc(ns->n_lanes, sizeof(*c->lane));
	c->lane_run = calloc(ns->n_lanes, sizeof(*c->lane_run));
	if (!c->lane_of || !c->lane_left || !c->lane || !c->lane_run) {
		snprintf(err, errlen, "--coll: out of memory");
		return -1;
	}
	for (uint32_t r = 0; r < c->cfg.nranks; r++)
		c->lane_of[r] = ns->h[c->rank_nic[r]].lane;
	if (coll_servers_split_check(c, err, errlen) < 0)
		return -1;
	for (uint32_t l = 0; l < ns->n_lanes; l++)
		c->lane_left[l] = coll_nruns(c);
	c->split_start_ns = start_ns; /* (its first size is made by dp_nics_colls_begin, after the series is set) */
	return 0;
}

bool dp_nics_serial_due(const struct dp_nics *ns, uint32_t lane)
{
	for (uint32_t i = 0; i < ns->n_colls; i++) {
		const struct dp_coll *c = ns->colls[i];
		/* (a lane that failed has none left: coll_lane_check) */
		if (c->split && c->run && !c->next_scheduled && c->lane[lane].ended &&
		    c->lane_left[lane] > 0)
			return true;
	}
	return false;
}

int dp_nics_sizes_next(struct dp_nics *ns, uint64_t now)
{
	int rc = 0;

	for (uint32_t i = 0; i < ns->n_colls; i++) {
		struct dp_coll *c = ns->colls[i];
		if (!c->split || c->run == NULL || c->next_scheduled)
			continue;
		bool all = true;
		for (uint32_t l = 0; l < ns->n_lanes; l++)
			all &= c->lane[l].ended;
		if (!all)
			continue;
		c->next_scheduled = true; /* (whatever follows: serial_due must turn false) */
		/* the size ends unless it did (threads: the last lane's thread) or
		 * failed; ranks: from the records just loaded */
		if (!c->finished && !ne_coll_done(c->run))
			coll_end_lanes(c, now);
		/* (wrong data goes on to the next size, as on one engine; a failure does not) */
		if (c->finished || !ne_coll_done(c->run))
			continue;
		if (coll_next_size(c, ne_coll_done_at(c->run)) < 0) {
			coll_start_failed(c, "no timer left");
			rc = -ENOMEM;
		}
	}
	return rc;
}

bool dp_nics_lane_active(const struct dp_nics *ns, uint32_t lane)
{
	for (uint32_t i = 0; i < ns->n_colls; i++) {
		const struct dp_coll *c = ns->colls[i];
		if (c->split && c->run && c->lane_left[lane] > 0) /* (between sizes too) */
			return true;
	}
	return false;
}

/* ---- lanes in other processes (MPI ranks), after the run ---- */

bool dp_nics_lane_failed(const struct dp_nics *ns, uint32_t lane)
{
	for (uint32_t i = 0; i < ns->n_colls; i++) {
		const struct dp_coll *c = ns->colls[i];
		if (c->split && c->run && c->lane[lane].ended && c->lane[lane].rec.failed)
			return true;
	}
	return false;
}

/* After the run (its threads stopped): a lane run here that did not end, as it is now. */
static void lane_take(struct dp_coll *c, uint32_t lane)
{
	struct coll_lane *cl = &c->lane[lane];

	if (cl->taken)
		return;
	ne_coll_lane_save(ne_coll_lane(c->run, lane), &cl->rec);
	cl->taken = true;
}

void dp_nics_lanes_finish(struct dp_nics *ns)
{
	for (uint32_t i = 0; i < ns->n_colls; i++) {
		struct dp_coll *c = ns->colls[i];
		if (!c->split || c->finished || c->run == NULL || ne_coll_done(c->run))
			continue; /* (done: stopped between two sizes, the last one's lines are out) */
		for (uint32_t l = 0; l < ns->n_lanes; l++) /* (loaded ones are taken) */
			lane_take(c, l);
		coll_end_lanes(c, nics_eng(ns)->now_ns);
	}
}

size_t dp_nics_lane_rec_len(const struct dp_nics *ns)
{
	size_t n = 0;

	for (uint32_t i = 0; i < ns->n_colls; i++)
		n += ns->colls[i]->split && ns->colls[i]->run;
	return n * sizeof(struct coll_lane);
}

void dp_nics_lane_save(struct dp_nics *ns, uint32_t lane, void *rec)
{
	uint8_t *b = rec;

	for (uint32_t i = 0; i < ns->n_colls && lane < ns->n_lanes; i++) {
		struct dp_coll *c = ns->colls[i];
		if (!c->split || c->run == NULL)
			continue;
		lane_take(c, lane);
		memcpy(b, &c->lane[lane], sizeof(c->lane[lane]));
		b += sizeof(c->lane[lane]);
	}
}

int dp_nics_lane_load(struct dp_nics *ns, uint32_t lane, const void *rec, size_t len)
{
	const uint8_t *b = rec;

	if (len != dp_nics_lane_rec_len(ns) || lane >= ns->n_lanes)
		return -EINVAL;
	for (uint32_t i = 0; i < ns->n_colls; i++) {
		struct dp_coll *c = ns->colls[i];
		if (!c->split || c->run == NULL)
			continue;
		memcpy(&c->lane[lane], b, sizeof(c->lane[lane])); /* (rec: bytes from MPI, any alignment) */
		b += sizeof(c->lane[lane]);
		c->lane[lane].taken = true;
	}
	return 0;
}
