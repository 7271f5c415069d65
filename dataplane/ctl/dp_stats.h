/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_stats: what a user reads of a running or finished fabric: the per-link
 * table, switch counters and drops, and a periodic CSV time series.
 */
#ifndef DP_STATS_H
#define DP_STATS_H

#include <stdio.h>

#include "dp_fabric.h"

/*
 * Print the per-link and per-switch tables (utilisation, and the share of
 * the run its most-paused priority was paused, over elapsed_ns), and a
 * timer_fail line when the engine failed to add timers.
 */
void dp_stats_print(const struct dp_fabric *f, uint64_t elapsed_ns, FILE *out);

/* One row of the link table: one direction of a link, its numbers over elapsed_ns. */
struct dp_stats_link {
	const char *from, *to;  /* node names (the topology's) */
	bool up;
	uint64_t rate_bps;       /* its rate now (bit/s; not a column of the text table) */
	uint64_t packets, bytes; /* sent in this direction */
	double util_pct;         /* % of elapsed_ns the direction was sending */
	uint64_t pfc_tx;         /* PFC frames from sent to to */
	uint64_t drops;          /* frames dropped in this direction */
	uint64_t peak_q_bytes;   /* the largest queue of any priority */
	double paused_pct;       /* % of elapsed_ns its most-paused priority was paused */
};
/* Fill row with channel i's row of the link table (i < f->n_chans), as dp_stats_print prints it. */
void dp_stats_link_row(const struct dp_fabric *f, uint32_t i, uint64_t elapsed_ns,
		       struct dp_stats_link *row);

/* CSV time series: one row per channel per sample, of DP_CSV_FIELDS numbers (dp_csv_take). */
#define DP_CSV_FIELDS 7
struct dp_csv {
	FILE *fp;
	uint64_t interval_ns;
	uint64_t *last_busy;  /* [n_chans] busy_ns at the previous sample */
	uint64_t *v;          /* [n_chans * DP_CSV_FIELDS] a sample's numbers (dp_csv_take) */
	uint64_t last_ns;
};

/*
 * Open path and write the header. Returns 0, or -EIO (errno says why) / -ENOMEM. Samples
 * are taken by dp_csv_sample() (the data plane arms a timer every interval).
 */
int dp_csv_open(struct dp_csv *c, const struct dp_fabric *f, const char *path,
		uint64_t interval_ns);
/* Write one row per channel for the interval ending at now_ns. */
void dp_csv_sample(struct dp_csv *c, const struct dp_fabric *f, uint64_t now_ns);

/*
 * A sample in two steps, for a fabric whose counters are spread over MPI
 * ranks (dp_part.h): each rank takes its numbers (DP_CSV_FIELDS per channel,
 * zero for a channel it does not run), rank 0 writes their sum.
 */
void dp_csv_take(const struct dp_fabric *f, uint64_t now_ns, uint64_t *v);
void dp_csv_write(struct dp_csv *c, const struct dp_fabric *f, const uint64_t *v, uint64_t now_ns);
void dp_csv_close(struct dp_csv *c);

#endif /* DP_STATS_H */
