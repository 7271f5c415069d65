/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll active-QP time series. The active QPs of every NIC are piecewise
 * constant: they change only in ne_coll_active_posted/completed. So the
 * series keeps the totals over NICs (sum, NICs with any, the largest count,
 * the latter from a count of NICs per value) and, for the open row, the
 * integral since the row's start, its max and the NICs seen. A change at
 * now first completes every row that ended at or before now (their state
 * is the one before the change), then adds the change. No timer, no scan
 * over ranks; without a series nothing here runs.
 *
 * Lanes: each lane has a series of its own over its ranks, whose rows it
 * keeps; the collective's end merges them (NICs are disjoint between lanes:
 * a row's QP-time and NICs seen add up, its most active NIC is the largest
 * of the lanes'), cut at the last lane's end, which is the one engine's row
 * for row: a lane's NICs hold no WQE once its part ended.
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NEVER UINT64_MAX

struct coll_series {
	ne_coll_series_fn fn;
	void *ctx;
	uint64_t interval, start;
	uint64_t row_start, last; /* open row; time of the last change of sum */
	uint64_t sum;             /* active QPs over all NICs now */
	uint32_t busy;            /* NICs with an active QP now */
	uint32_t cur_max;         /* most active QPs on one NIC now */
	uint32_t *count;          /* count[v]: NICs with v active QPs, v <= cap */
	uint32_t cap;
	uint64_t row_qp_ns;
	uint32_t row_max, row_nics;
	bool on;                  /* between ne_coll_start and the last iteration's end */
	/* a lane's: its rows, kept for the collective's end (fn is keep_row) */
	struct ne_coll_series_row *rows;
	uint32_t nrows, rows_cap;
	bool kept_failed;         /* a row could not be kept: the merge fails the collective */
	bool cut;                 /* the collective's (split): its lanes' rows went out */
};

/* Most data QPs one rank sends on: the bound of a NIC's active QPs. */
static uint32_t max_sender_qps(const struct ne_coll *c)
{
	uint32_t *per = calloc(c->nranks, sizeof(*per)), m = 0;

	if (!per)
		return UINT32_MAX;
	for (uint32_t k = 0; k < c->nconns; k++)
		per[c->conns[k].src_nic] += c->nqps;
	for (uint32_t r = 0; r < c->nranks; r++)
		m = per[r] > m ? per[r] : m;
	free(per);
	return m;
}

int ne_coll_set_series(struct ne_coll *c, ne_coll_series_fn fn, void *ctx)
{
	struct coll_series *s;
	uint32_t cap;

	if (!c || !fn || !c->cfg.series_ns)
		return -EINVAL;
	if (c->running)
		return -EBUSY;
	cap = max_sender_qps(c);
	if (cap == UINT32_MAX)
		return -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->count = calloc((size_t)cap + 1, sizeof(*s->count)))) {
		free(s);
		return -ENOMEM;
	}
	s->fn = fn;
	s->ctx = ctx;
	s->interval = c->cfg.series_ns;
	s->cap = cap;
	ne_coll_series_free(c);
	c->series = s;
	return 0;
}

void ne_coll_series_free(struct ne_coll *c)
{
	if (c->series) {
		free(c->series->count);
		free(c->series->rows);
	}
	free(c->series);
	c->series = NULL;
}

/* row's mean active QPs per NIC over its span (0 for a row of no length). */
static void set_mean(struct ne_coll_series_row *row, uint32_t nranks)
{
	row->mean = row->dt_ns ? (double)row->qp_ns / ((double)row->dt_ns * nranks) : 0;
}

/* A lane's row, kept for the merge at the collective's end. */
static void keep_row(void *ctx, const struct ne_coll_series_row *row)
{
	struct coll_series *s = ctx;

	if (s->nrows == s->rows_cap) {
		uint32_t nc = s->rows_cap ? 2 * s->rows_cap : 64;
		struct ne_coll_series_row *r = realloc(s->rows, nc * sizeof(*r));
		if (r == NULL) {
			s->kept_failed = true;
			return;
		}
		s->rows = r;
		s->rows_cap = nc;
	}
	s->rows[s->nrows++] = *row;
}

int ne_coll_series_lane_init(struct ne_coll *ln, const struct ne_coll *c)
{
	const struct coll_series *m = c->series;
	struct coll_series *s;

	ln->series = NULL;
	if (m == NULL)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->count = calloc((size_t)m->cap + 1, sizeof(*s->count)))) {
		free(s);
		return -ENOMEM;
	}
	s->fn = keep_row;
	s->ctx = s;
	s->interval = m->interval;
	s->cap = m->cap;
	ln->series = s;
	return 0;
}

/*
 * Rows 0 .. nrows - 1 of c's lanes merged, the span from the start span ns
 * long (the last row cut there), through c's row function. 0, or -ENOMEM
 * when a lane could not keep a row.
 */
static int emit_merged(struct ne_coll *c, uint64_t nrows, uint64_t span)
{
	const struct coll_series *m = c->series;

	for (uint32_t l = 0; l < c->nlanes; l++)
		if (c->lanes[l].series && c->lanes[l].series->kept_failed)
			return -ENOMEM;
	for (uint64_t k = 0; k < nrows; k++) {
		uint64_t t = k * m->interval;
		struct ne_coll_series_row row = {.t_ns = t, .dt_ns = span - t < m->interval ? span - t : m->interval};

		for (uint32_t l = 0; l < c->nlanes; l++) {
			const struct coll_series *s = c->lanes[l].series;
			if (s == NULL || k >= s->nrows) /* (no rank, or its part ended before: zeros) */
				continue;
			row.qp_ns += s->rows[k].qp_ns;
			row.max = s->rows[k].max > row.max ? s->rows[k].max : row.max;
			row.nics += s->rows[k].nics;
		}
		set_mean(&row, c->nranks);
		m->fn(m->ctx, &row);
	}
	return 0;
}

int ne_coll_series_lanes_emit(struct ne_coll *c, uint64_t start, uint64_t end)
{
	uint64_t span = end > start ? end - start : 0;

	c->series->cut = true;
	return emit_merged(c, (span + c->series->interval - 1) / c->series->interval, span);
}

void ne_coll_series_start(struct ne_coll *c, uint64_t now)
{
	struct coll_series *s = c->series;

	if (!s)
		return;
	memset(s->count, 0, ((size_t)s->cap + 1) * sizeof(*s->count));
	s->count[0] = c->nranks; /* a run starts with no WQE on any NIC */
	s->sum = s->busy = s->cur_max = 0;
	s->start = s->row_start = s->last = now;
	s->row_qp_ns = 0;
	s->row_max = s->row_nics = 0;
	s->on = true;
	for (uint32_t r = 0; r < c->nranks; r++)
		if (coll_mine(c, r)) /* (a lane: its own ranks only; other threads run the rest) */
			c->ranks[r].series_off = NEVER;
}

static void emit(struct ne_coll *c, uint64_t end)
{
	struct coll_series *s = c->series;
	struct ne_coll_series_row row = {
		.t_ns = s->row_start - s->start,
		.dt_ns = end - s->row_start,
		.qp_ns = s->row_qp_ns,
		.max = s->row_max,
		.nics = s->row_nics,
	};

	set_mean(&row, c->nranks);
	s->fn(s->ctx, &row);
}

/* Complete every row that ended at or before now; the open row is then the one holding now. */
static void advance(struct ne_coll *c, uint64_t now)
{
	struct coll_series *s = c->series;

	while (s->row_start + s->interval <= now) {
		uint64_t end = s->row_start + s->interval;

		s->row_qp_ns += s->sum * (end - s->last);
		s->last = end;
		emit(c, end);
		s->row_start = end;
		s->row_qp_ns = 0;
		s->row_max = s->cur_max; /* the state the NICs enter the row with */
		s->row_nics = s->busy;
	}
	s->row_qp_ns += s->sum * (now - s->last);
	s->last = now;
}

void ne_coll_series_move(struct ne_coll *c, uint32_t rank, uint32_t old, uint32_t new_qps,
			 uint64_t now)
{
	struct coll_series *s = c->series;
	struct coll_rank *r = &c->ranks[rank];

	if (!s || !s->on || old > s->cap || new_qps > s->cap)
		return;
	advance(c, now);
	s->sum = s->sum + new_qps - old;
	s->count[old]--;
	s->count[new_qps]++;
	if (new_qps > s->cur_max)
		s->cur_max = new_qps;
	while (s->cur_max && !s->count[s->cur_max])
		s->cur_max--;
	if (s->cur_max > s->row_max)
		s->row_max = s->cur_max;
	if (old == 0 && new_qps > 0) {
		s->busy++;
		/* seen in this row already when it had a QP at its start or since */
		if (r->series_off == NEVER || r->series_off < s->row_start)
			s->row_nics++;
	} else if (old > 0 && new_qps == 0) {
		s->busy--;
		r->series_off = now;
	}
}

void ne_coll_series_end(struct ne_coll *c, uint64_t now)
{
	struct coll_series *s = c->series;

	if (!s || !s->on)
		return;
	advance(c, now);
	/* (a lane that ends on a row's first instant keeps that row: its NICs
	 * entered it busy, which the merged row counts; the merge cuts it) */
	if (now > s->row_start || (c->main && (s->row_nics || s->row_max)))
		emit(c, now);
	s->on = false;
}

int ne_coll_series_lanes_cut(struct ne_coll *c)
{
	struct coll_series *m = c->series;
	uint64_t last = 0, start = UINT64_MAX;

	if (m == NULL || m->cut)
		return 0;
	m->cut = true;
	for (uint32_t l = 0; l < c->nlanes; l++) {
		const struct coll_series *s = c->lanes[l].series;
		if (s && (s->on || s->nrows)) { /* (started) */
			last = s->last > last ? s->last : last;
			start = s->start < start ? s->start : start;
		}
	}
	if (start == UINT64_MAX)
		return 0;
	/* one engine completed the rows that ended by its last change, the latest
	 * of the lanes': every lane still on completes them too (its state held) */
	for (uint32_t l = 0; l < c->nlanes; l++)
		if (c->lanes[l].series && c->lanes[l].series->on)
			advance(&c->lanes[l], last);
	uint64_t nrows = (last - start) / m->interval;
	return emit_merged(c, nrows, nrows * m->interval); /* (-ENOMEM: a lane could not keep a row) */
}
