/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitions of the fabric on parallel threads, conservative windows (dp_part.h):
 * the cut (which partition runs each switch and host), the MPI ranks' notes,
 * what a run asks of the partitions, and the gathers after it.
 */
#define _GNU_SOURCE /* pthread_attr_setaffinity_np */
#include "dp_part_priv.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_ring.h>
#include <rte_pause.h>

#include "dp_chan.h"
#include "dp_gather.h"
#include "dp_mpi.h"
#include "rl_mem.h"
#include "topo_part.h"

/* The partition this process's first thread runs: the only one, or 0 of all. */
uint32_t part_self(const struct dp_parts *ps)
{
	return ps->only == UINT32_MAX ? 0 : ps->only;
}

/* ---- the cut ---- */

uint32_t part_of_node(const struct dp_parts *ps, struct topo_node_ref n)
{
	return topo_part_of(ps->part_sw, ps->part_host, n);
}

static int list_add(uint32_t **a, uint32_t *n, uint32_t v)
{
	uint32_t *x = realloc(*a, (*n + 1) * sizeof(**a));

	if (x == NULL)
		return -ENOMEM;
	x[(*n)++] = v;
	*a = x;
	return 0;
}

/* Move the nodes and channels onto their partitions' engines; find the cut and the lookahead. */
static int place(struct dp_parts *ps, char *err, size_t errlen)
{
	struct dp_fabric *f = ps->f;
	const struct topo *t = f->topo;

	for (uint32_t i = 0; i < t->n_switches; i++)
		f->sw[i].eng = &ps->p[ps->part_sw[i]].eng;
	for (uint32_t h = 0; h < t->n_hosts; h++)
		f->host[h].eng = &ps->p[ps->part_host[h]].eng;
	ps->lookahead = topo_partition_lookahead(t, ps->part_sw, ps->part_host);
	for (uint32_t i = 0; i < f->n_chans; i++) {
		struct dp_chan *c = &f->chans[i];
		struct dp_part *from = &ps->p[part_of_node(ps, c->from)], *to = &ps->p[part_of_node(ps, c->to)];
		c->eng = &from->eng;
		c->rx_eng = &to->eng;
		c->cross = from != to;
		if (list_add(&from->tx, &from->n_tx, i) < 0 || list_add(&to->rx, &to->n_rx, i) < 0 ||
		    (c->cross && (list_add(&to->in_cross, &to->n_in_cross, i) < 0 ||
				  list_add(&from->out_cross, &from->n_out_cross, i) < 0))) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		if (!c->cross)
			continue;
		if (ps->mode == DP_CLOCK_LIVE) { /* no windows: frames go over a ring, at once */
			char name[RTE_RING_NAMESIZE];
			snprintf(name, sizeof(name), "rl_x%p_%u", (void *)f, i);
			c->xring = rte_ring_create(name, XRING_SLOTS, SOCKET_ID_ANY,
						   RING_F_SP_ENQ | RING_F_SC_DEQ);
			snprintf(name, sizeof(name), "rl_r%p_%u", (void *)f, i);
			c->xret = c->xring ? rte_ring_create(name, XRING_SLOTS, SOCKET_ID_ANY,
							     RING_F_SP_ENQ | RING_F_SC_DEQ) : NULL;
			if (c->xret == NULL) {
				snprintf(err, errlen, "ring for link '%s': %s", t->links[c->link].name,
					 rte_strerror(rte_errno));
				return -ENOMEM;
			}
			continue;
		}
		if (c->delay_ns == 0) {
			snprintf(err, errlen,
				 "link '%s' (line %d) joins partitions %u and %u and has no delay: the virtual "
				 "clock needs a delay on every link between partitions (give it one, or use "
				 "fewer --workers)",
				 t->links[c->link].name, t->links[c->link].line, from->idx, to->idx);
			return -EINVAL;
		}
	}
	return 0;
}

int dp_parts_create(struct dp_parts **out, struct dp_fabric *f, uint32_t workers,
		    bool nics_with_leaf, enum dp_clock_mode mode, uint64_t (*live_now)(void *),
		    char *err, size_t errlen)
{
	const struct topo *t = f->topo;
	int rc;

	*out = NULL;
	if (workers == 0 || workers > t->n_switches) { /* (topo_partition says so too, without the option) */
		snprintf(err, errlen, "--workers %u: want 1..%u (one partition holds at least one switch)",
			 workers, t->n_switches);
		return -EINVAL;
	}
	struct dp_parts *ps = calloc(1, sizeof(*ps));
	if (ps == NULL)
		goto nomem;
	ps->f = f;
	ps->n = workers;
	ps->only = UINT32_MAX;
	ps->mode = mode;
	ps->p = rl_zalloc_lines(workers, sizeof(*ps->p));
	ps->part_sw = calloc(t->n_switches, sizeof(*ps->part_sw));
	ps->part_host = calloc(t->n_hosts ? t->n_hosts : 1, sizeof(*ps->part_host));
	if (ps->p == NULL || ps->part_sw == NULL || ps->part_host == NULL)
		goto nomem;
	uint32_t n_nodes = DP_LP_FIRST_NODE + t->n_switches + t->n_hosts;
	for (uint32_t i = 0; i < workers; i++) {
		struct dp_part *p = &ps->p[i];
		p->ps = ps;
		p->idx = i;
		if (dp_engine_init(&p->eng, mode, live_now, NULL) < 0)
			goto nomem;
		dp_engine_set_lps(&p->eng, f->lp_seq, n_nodes);
		(void)dp_chan_engine_prefetch(&p->eng); /* (-ENOSPC: hints only) */
	}
	*out = ps;
	if (workers == 1) {
		ps->lookahead = UINT64_MAX; /* everything stays on f->eng */
		return 0;
	}
	rc = topo_partition(t, workers, nics_with_leaf, ps->part_sw, ps->part_host, err, errlen);
	if (rc == 0)
		rc = place(ps, err, errlen);
	if (rc < 0) {
		dp_parts_destroy(ps);
		*out = NULL;
		return rc;
	}
	dp_flows_share(&f->flows);
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	dp_parts_destroy(ps);
	return -ENOMEM;
}

size_t part_rank_note_size(const struct dp_parts *ps)
{
	return sizeof(struct rank_note) + ps->n * sizeof(uint64_t);
}

static int by_receiver(const void *a, const void *b, void *ctx)
{
	const struct dp_parts *ps = ctx;
	uint32_t ca = *(const uint32_t *)a, cb = *(const uint32_t *)b;
	uint32_t x = part_of_node(ps, ps->f->chans[ca].to), y = part_of_node(ps, ps->f->chans[cb].to);

	if (x != y)
		return x < y ? -1 : 1;
	return ca < cb ? -1 : ca > cb;
}

/* p's cut channels by receiving partition (then channel): packed in that order, per rank contiguous. */
void part_sort_by_receiver(struct dp_parts *ps, struct dp_part *p)
{
	qsort_r(p->out_cross, p->n_out_cross, sizeof(*p->out_cross), by_receiver, ps);
}

int dp_parts_use_mpi(struct dp_parts *ps, const struct dp_mpi *mpi, char *err, size_t errlen)
{
	if (mpi->size <= 1)
		return 0;
	if (ps->n != (uint32_t)mpi->size) {
		snprintf(err, errlen, "%u partitions on %d MPI ranks: want one partition per rank", ps->n,
			 mpi->size);
		return -EINVAL;
	}
	if (ps->mode != DP_CLOCK_VIRTUAL) {
		snprintf(err, errlen, "MPI ranks run the virtual clock only");
		return -EINVAL;
	}
	/* the outboxes to other ranks in rank order: packed one after the other, they are
	 * the Alltoallv's send buffer as they stand */
	for (uint32_t i = 0; i < ps->n; i++)
		part_sort_by_receiver(ps, &ps->p[i]);
	ps->xlen = calloc((size_t)ps->n * 3, sizeof(*ps->xlen));
	ps->xnote = malloc(part_rank_note_size(ps) * (ps->n + 1));
	if (ps->xlen == NULL || ps->xnote == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ps->mpi = mpi;
	ps->only = (uint32_t)mpi->rank;
	return 0;
}

void dp_parts_destroy(struct dp_parts *ps)
{
	if (ps == NULL)
		return;
	for (uint32_t i = 0; ps->p && i < ps->n; i++) {
		struct dp_part *p = &ps->p[i];
		if (p->eng.heap)
			dp_engine_free(&p->eng);
		free(p->in_cross);
		free(p->out_cross);
		free(p->tx);
		free(p->rx);
	}
	dp_bytes_free(&ps->xsend);
	free(ps->xlen);
	free(ps->xnote);
	free(ps->xrecv);
	free(ps->p);
	free(ps->part_sw);
	free(ps->part_host);
	free(ps);
}

uint32_t dp_parts_count(const struct dp_parts *ps)
{
	return ps->n;
}

uint32_t dp_parts_of_host(const struct dp_parts *ps, uint32_t host)
{
	return ps->n > 1 ? ps->part_host[host] : 0;
}

uint32_t dp_parts_of_node(const struct dp_parts *ps, struct topo_node_ref n)
{
	return ps->n > 1 ? part_of_node(ps, n) : 0;
}

uint64_t dp_parts_lookahead_ns(const struct dp_parts *ps)
{
	return ps->lookahead;
}

uint64_t dp_parts_windows(const struct dp_parts *ps)
{
	return ps->windows;
}

uint64_t dp_parts_crossed(const struct dp_parts *ps)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < ps->n; i++)
		n += ps->p[i].crossed;
	return n;
}

void dp_parts_load(const struct dp_parts *ps, uint32_t i, double *cpu_s, uint64_t *events)
{
	*cpu_s = ps->p[i].cpu_s;
	*events = ps->p[i].eng.fired;
}

bool dp_parts_failure_seen(const struct dp_parts *ps, uint32_t part)
{
	return ps != NULL && part < ps->n && ps->p[part].failure_seen;
}

double dp_parts_busy(const struct dp_parts *ps, uint32_t i)
{
	const struct dp_part *p = &ps->p[i];

	return p->loop_tsc ? (double)p->busy_tsc / (double)p->loop_tsc : 0;
}

uint64_t dp_parts_crossed_at_end(const struct dp_parts *ps)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < ps->n; i++)
		n += ps->p[i].at_end;
	return n;
}

uint64_t dp_parts_next_ns(const struct dp_parts *ps)
{
	if (ps->mpi) /* (the other ranks' engines here never ran) */
		return ps->next_after;
	uint64_t next = dp_engine_next_ns(ps->f->eng);

	for (uint32_t i = 0; ps->n > 1 && i < ps->n; i++) {
		uint64_t t = dp_engine_next_ns(&ps->p[i].eng);
		if (t < next)
			next = t;
	}
	return next;
}

int dp_parts_set_process(struct dp_parts *ps, uint32_t self)
{
	if (ps->mode != DP_CLOCK_LIVE || self >= ps->n || ps->n < 2)
		return -EINVAL;
	ps->only = self;
	return 0;
}

/* Rank 0's flow table gets every rank's flows. Returns 0 or -errno. */
static int gather_flows(struct dp_parts *ps)
{
	const struct dp_mpi *m = ps->mpi;
	struct dp_flow *mine = NULL;
	uint32_t n = 0;
	uint8_t *all = NULL;
	size_t *off = calloc((size_t)m->size * 2, sizeof(*off));
	uint64_t untracked = ps->f->flows.untracked;

	int rc = off ? dp_flows_export(&ps->f->flows, &mine, &n) : -ENOMEM;
	if (rc == 0 && m->rank == 0) /* (rank 0's own stay where they are) */
		n = 0;
	if (rc == 0)
		rc = dp_mpi_gather_bytes(m, mine, (size_t)n * sizeof(*mine), &all, off, off + m->size);
	if (rc == 0)
		rc = dp_mpi_reduce_u64(m, &untracked, 1, false);
	if (rc == 0 && m->rank == 0) {
		ps->f->flows.untracked = untracked; /* every rank's */
		for (int r = 1; r < m->size; r++)
			dp_flows_merge(&ps->f->flows, (const struct dp_flow *)(all + off[r]),
				       (uint32_t)(off[m->size + r] / sizeof(struct dp_flow)), 0);
	}
	free(mine);
	free(all);
	free(off);
	return rc;
}

int dp_parts_gather(struct dp_parts *ps, uint64_t now, uint64_t *extra_sum, size_t n_extra_sum,
		    uint64_t *extra_max, size_t n_extra_max)
{
	if (ps->mpi == NULL)
		return 0;
	const struct dp_mpi *m = ps->mpi;
	struct dp_fabric *f = ps->f;
	size_t ns, nm;

	/* every partition's load (dp_parts_load), from its rank */
	struct dp_part *me = &ps->p[part_self(ps)];
	struct { double cpu_s; uint64_t fired, crossed, at_end, busy_tsc, loop_tsc; }
		load = {me->cpu_s, me->eng.fired, me->crossed, me->at_end, me->busy_tsc, me->loop_tsc},
		*loads = calloc(ps->n, sizeof(*loads));
	int rc = loads ? dp_mpi_allgather(m, &load, loads, sizeof(load)) : -ENOMEM;
	for (uint32_t i = 0; rc == 0 && i < ps->n; i++) {
		ps->p[i].cpu_s = loads[i].cpu_s;
		ps->p[i].busy_tsc = loads[i].busy_tsc; /* (a ratio of one rank's TSC readings) */
		ps->p[i].loop_tsc = loads[i].loop_tsc;
		ps->p[i].eng.fired = loads[i].fired; /* (engines of other ranks never ran here) */
		ps->p[i].crossed = loads[i].crossed;
		ps->p[i].at_end = loads[i].at_end;
	}
	free(loads);
	if (rc < 0)
		return rc;
	dp_gather_counters_len(f, &ns, &nm);
	size_t ts = ns + n_extra_sum + 2, tm = nm + n_extra_max;
	uint64_t *sum = calloc(ts + tm + 1, sizeof(*sum)), *max = sum + ts;
	if (sum == NULL)
		return -ENOMEM;
	dp_gather_counters_pack(f, now, sum, max);
	memcpy(sum + ns, extra_sum, n_extra_sum * sizeof(*sum));
	memcpy(max + nm, extra_max, n_extra_max * sizeof(*max));
	/* every rank ran the global events: rank 0 counts them, the others their partition's */
	const struct dp_engine *own = m->rank == 0 ? f->eng : &ps->p[part_self(ps)].eng;
	sum[ts - 2] = own->fired;
	sum[ts - 1] = own->timer_fail;
	rc = dp_mpi_reduce_u64(m, sum, ts, false);
	if (rc == 0)
		rc = dp_mpi_reduce_u64(m, max, tm, true);
	if (rc == 0 && m->rank == 0) {
		dp_gather_counters_unpack(f, sum, max);
		memcpy(extra_sum, sum + ns, n_extra_sum * sizeof(*sum));
		memcpy(extra_max, max + nm, n_extra_max * sizeof(*max));
		f->eng->fired = sum[ts - 2];
		f->eng->timer_fail = sum[ts - 1];
	}
	free(sum);
	return rc == 0 ? gather_flows(ps) : rc;
}

void dp_parts_live_load(const struct dp_parts *ps, uint32_t i, uint64_t *turns, uint64_t *idle_turns,
			double *busy, uint64_t *ring_full)
{
	const struct dp_part *p = &ps->p[i];

	*turns = p->turns;
	*idle_turns = p->idle_turns;
	*busy = dp_parts_busy(ps, i);
	*ring_full = 0;
	for (uint32_t k = 0; k < p->n_out_cross; k++)
		*ring_full += ps->f->chans[p->out_cross[k]].xring_full;
}

uint64_t dp_parts_stops(const struct dp_parts *ps)
{
	return ps->stops;
}
