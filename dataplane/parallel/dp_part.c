/* SPDX-License-Identifier: BSD-3-Clause */
/* Partitions of the fabric on parallel threads, conservative windows (dp_part.h). */
#define _GNU_SOURCE /* pthread_attr_setaffinity_np */
#include "dp_part.h"

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

#define POLL_WINDOWS 4096u  /* windows between two calls of run->between() at most */
#define POLL_WALL_NS 50000000ull /* and at most this much wall time (signals, telemetry, progress) */
#define SPINS_BEFORE_YIELD 2000u /* barrier: spin this long, then give the core away (oversubscribed) */
#define XRING_SLOTS 4096u  /* live: frames in flight from one partition to another per cut link direction */

/* What a partition tells the others at the end of a window (read after the barrier). */
struct dp_part_pub {
	uint64_t next_at, next_key; /* its earliest timer; next_at UINT64_MAX: none */
	uint64_t sent_min;          /* earliest arrival it put in an outbox, not yet handed over */
	uint64_t idle_at;           /* when it last became idle */
	uint64_t now;
	bool idle;
	bool failed;                /* run->failed() said so: every partition stops waiting */
	bool want_poll;             /* partition 0: wall time says between() is due (all read the same) */
	bool serial_due;            /* run->serial_due() said so: run->serial() once every partition does */
};

struct dp_part {
	struct dp_engine eng;
	struct dp_parts *ps;
	uint32_t idx;
	uint32_t *in_cross, n_in_cross; /* cut channels delivering here */
	uint32_t *out_cross, n_out_cross; /* cut channels sending from here */
	uint32_t *tx, n_tx;             /* channels sending from here */
	uint32_t *rx, n_rx;             /* channels delivering here */
	bool idle;                      /* traffic done and its channels empty (ending without a bound) */
	bool failure_seen;              /* a partition published failed (dp_parts_failure_seen) */
	uint64_t idle_at;
	uint64_t crossed;
	uint64_t at_end;                /* of those, arriving exactly at the end of the window they were handed into */
	double cpu_s;                   /* the thread's CPU time in the last run (balance: compare partitions) */
	uint64_t turns, idle_turns;     /* live: loop turns, and those that found nothing to do */
	/* TSC cycles of work and of the whole loop (balance): live, in turns that
	 * had work; virtual, in windows running events (not at barriers) */
	uint64_t busy_tsc, loop_tsc;
	struct dp_part_pub pub[2];      /* by round parity: written for round r + 1 while others read round r */
	pthread_t th;
} __rte_cache_aligned;

/* The agreed next step: every thread computes the same from the same publications. */
/* (STEP_FAILURE: a partition published failed for the first time; every
 * partition notes it and publishes again, running nothing: the next step is
 * then chosen from publications that show it, whatever the wall clock) */
/* (STEP_SERIAL: every partition published serial_due: run->serial(), all stopped) */
enum step_kind { STEP_STOP, STEP_GLOBAL, STEP_WINDOW, STEP_FAILURE, STEP_SERIAL };

struct step {
	enum step_kind kind;
	uint64_t end_at, end_key; /* window: run events below (end_at, end_key) */
	bool early_stop;          /* window: stop at the instant the partition becomes idle */
	bool run_timer;           /* global: run the fabric engine's earliest timer (else: poll only) */
	uint64_t poll_ns;         /* global, poll: the latest time any partition reached */
	uint64_t end_ns;          /* stop: the run's final time */
};

struct dp_parts {
	struct dp_fabric *f;
	enum dp_clock_mode mode;
	uint32_t n;
	struct dp_part *p;        /* [n] */
	/* MPI ranks: this process runs partition me only; frames of cut links
	 * and the publications go through dp_mpi (NULL: threads of one process) */
	const struct dp_mpi *mpi;
	struct dp_bytes xsend;    /* ranks: this window's frames for the others, in rank order */
	size_t *xlen;             /* [3n] bytes of xsend for rank i; then offsets, lengths received */
	uint8_t *xnote;           /* [n + 1] rank_notes: the meeting's Allgather */
	uint8_t *xrecv;
	size_t xrecv_cap;
	unsigned xparity;         /* the outboxes the packed frames came from (the last window's) */
	uint64_t next_after;      /* ranks: the earliest pending event of any rank when the run stopped */
	uint32_t *part_sw, *part_host;
	uint64_t lookahead;
	/* a run */
	const struct dp_part_run *run;
	bool stop_when_idle;
	atomic_uint bar_count, bar_sense;
	atomic_int go;            /* threads wait for it: 1 run, -1 give up (not all threads started) */
	bool stop_flag;           /* set by thread 0 in a global step, read after the barrier */
	uint64_t end_ns;
	uint64_t windows;
	uint64_t last_poll_wall;  /* CLOCK_MONOTONIC_COARSE of the last between() (thread 0 writes) */
	/* live */
	const struct dp_part_live *live;
	atomic_uint epoch;        /* odd: partition 0 asks every other to stop at the top of its loop */
	atomic_uint paused, exited;
	uint64_t stops;           /* live: times partition 0 stopped the others (global work) */
	atomic_bool live_stop;
	/* one process of several (MPI ranks on the virtual clock, dp_peer.h's
	 * processes on the live one): the one partition run here, on the
	 * caller's thread; UINT32_MAX: every partition, one thread each */
	uint32_t only;
};

/* The partition this process's first thread runs: the only one, or 0 of all. */
static uint32_t self(const struct dp_parts *ps)
{
	return ps->only == UINT32_MAX ? 0 : ps->only;
}

/* ---- the cut ---- */

static uint32_t node_part(const struct dp_parts *ps, struct topo_node_ref n)
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
		struct dp_part *from = &ps->p[node_part(ps, c->from)], *to = &ps->p[node_part(ps, c->to)];
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

/* Ranks: what a rank tells every other at a meeting: its publication, the frame bytes for each. */
struct rank_note {
	struct dp_part_pub pub;
	uint64_t bytes_to[]; /* [n] */
};

static size_t rank_note_size(const struct dp_parts *ps)
{
	return sizeof(struct rank_note) + ps->n * sizeof(uint64_t);
}

static int by_receiver(const void *a, const void *b, void *ctx)
{
	const struct dp_parts *ps = ctx;
	uint32_t ca = *(const uint32_t *)a, cb = *(const uint32_t *)b;
	uint32_t x = node_part(ps, ps->f->chans[ca].to), y = node_part(ps, ps->f->chans[cb].to);

	if (x != y)
		return x < y ? -1 : 1;
	return ca < cb ? -1 : ca > cb;
}

/* p's cut channels by receiving partition (then channel): packed in that order, per rank contiguous. */
static void sort_by_receiver(struct dp_parts *ps, struct dp_part *p)
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
		sort_by_receiver(ps, &ps->p[i]);
	ps->xlen = calloc((size_t)ps->n * 3, sizeof(*ps->xlen));
	ps->xnote = malloc(rank_note_size(ps) * (ps->n + 1));
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

/* ---- the threads' meeting point ---- */

/*
 * Sense-reversing barrier: the last to arrive flips the sense. Waiters spin
 * (windows are microseconds of work), then yield the core, which is what
 * keeps more workers than cores (oversubscribed) moving.
 */
static void barrier(struct dp_parts *ps, unsigned *sense)
{
	unsigned s = !*sense;

	*sense = s;
	if (atomic_fetch_add_explicit(&ps->bar_count, 1, memory_order_acq_rel) + 1 == ps->n) {
		atomic_store_explicit(&ps->bar_count, 0, memory_order_relaxed);
		atomic_store_explicit(&ps->bar_sense, s, memory_order_release);
		return;
	}
	for (unsigned spins = 0; atomic_load_explicit(&ps->bar_sense, memory_order_acquire) != s;)
		if (++spins < SPINS_BEFORE_YIELD)
			rte_pause();
		else
			sched_yield();
}

static void rank_failed(struct dp_parts *ps, const char *what, int rc)
{
	fprintf(stderr, "rocelab-dp: rank %u: %s: %s\n", self(ps), what, strerror(-rc));
	dp_mpi_abort(ps->mpi, 1); /* (the others would wait for this rank forever) */
	exit(1);
}

/*
 * Ranks, after window w: the frames this rank's partition put in the
 * outboxes of links into other ranks' are packed for them (sent at the
 * next meeting).
 */
static void pack_frames(struct dp_parts *ps, struct dp_part *p, uint64_t w)
{
	unsigned parity = (unsigned)(w & 1);

	ps->xparity = parity;
	for (uint32_t i = 0; i < p->n_out_cross; i++) { /* (in receiver order: sort_by_receiver) */
		struct dp_chan *c = &ps->f->chans[p->out_cross[i]];
		size_t before = ps->xsend.len;
		int rc = dp_gather_pack_outbox(c, parity, &ps->xsend);
		if (rc < 0)
			rank_failed(ps, "frames between ranks", rc);
		ps->xlen[node_part(ps, c->to)] += ps->xsend.len - before;
	}
}

/*
 * Ranks: the meeting is one Allgather of every rank's publication of this
 * round and how many frame bytes it has for each other rank; when any has
 * some, one Alltoallv moves them, into this rank's copy of the same
 * outboxes, for the next window's start.
 */
static void rank_meet(struct dp_parts *ps, struct dp_part *p, unsigned slot)
{
	size_t note = rank_note_size(ps), total = 0;
	uint8_t *buf = ps->xnote;
	struct rank_note *mine = (struct rank_note *)(buf + note * ps->n);

	mine->pub = p->pub[slot];
	for (uint32_t i = 0; i < ps->n; i++)
		mine->bytes_to[i] = ps->xlen[i];
	int rc = dp_mpi_allgather(ps->mpi, mine, buf, note);
	if (rc < 0)
		rank_failed(ps, "meeting", rc);
	size_t *roff = ps->xlen + ps->n, *rlen = ps->xlen + 2 * ps->n;
	for (uint32_t i = 0; i < ps->n; i++) {
		const struct rank_note *ni = (const struct rank_note *)(buf + note * i);
		ps->p[i].pub[slot] = ni->pub;
		for (uint32_t j = 0; j < ps->n; j++)
			total += ni->bytes_to[j];
		rlen[i] = ni->bytes_to[self(ps)];
	}
	if (total == 0) /* (every rank saw the same total: all call the Alltoallv, or none) */
		return;
	rc = dp_mpi_alltoallv(ps->mpi, ps->xsend.b, ps->xlen, &ps->xrecv, &ps->xrecv_cap, roff, rlen);
	for (uint32_t i = 0; rc >= 0 && i < ps->n; i++)
		if (rlen[i]) {
			int n = dp_gather_unpack_frames(ps->f, ps->xparity, ps->xrecv + roff[i], rlen[i],
							ps->f->mp);
			rc = n == -ENOBUFS ? 0 : n; /* (a dry pool is counted as drops, as anywhere) */
		}
	if (rc < 0)
		rank_failed(ps, "frames between ranks", rc);
	ps->xsend.len = 0;
	memset(ps->xlen, 0, ps->n * sizeof(*ps->xlen));
}

/* Every partition has published this round: threads meet at the barrier, ranks exchange. */
static void meet(struct dp_parts *ps, struct dp_part *p, unsigned *sense, unsigned slot)
{
	if (ps->mpi)
		rank_meet(ps, p, slot);
	else
		barrier(ps, sense);
}

/* ---- one partition's side ---- */

/* Its traffic is done and its channels hold nothing: nothing queued or sending, nothing on a wire into it. */
static bool local_idle(struct dp_part *p)
{
	const struct dp_part_run *run = p->ps->run;
	struct dp_fabric *f = p->ps->f;

	if (run->traffic_left && run->traffic_left(run->ctx, p->idx))
		return false;
	for (uint32_t i = 0; i < p->n_tx; i++) {
		const struct dp_chan *c = &f->chans[p->tx[i]];
		if (c->tx_busy || dp_chan_queued_bytes(c))
			return false;
	}
	for (uint32_t i = 0; i < p->n_rx; i++)
		if (f->chans[p->rx[i]].wire.n)
			return false;
	return true;
}

/* After a step at now: note a change of idleness. Returns the idleness. */
static bool note_idle(struct dp_part *p, uint64_t now)
{
	bool idle = local_idle(p);

	if (idle && !p->idle)
		p->idle_at = now;
	p->idle = idle;
	return idle;
}

static void publish(struct dp_part *p, unsigned slot)
{
	struct dp_part_pub *pub = &p->pub[slot];

	if (!dp_engine_peek(&p->eng, &pub->next_at, &pub->next_key))
		pub->next_at = pub->next_key = UINT64_MAX;
	pub->sent_min = p->eng.xfer_min_ns;
	pub->idle = p->idle;
	pub->idle_at = p->idle_at;
	pub->failed = p->ps->run->failed && p->ps->run->failed(p->ps->run->ctx, p->idx);
	pub->serial_due = p->ps->run->serial_due && p->ps->run->serial_due(p->ps->run->ctx, p->idx);
	pub->now = p->eng.now_ns;
	if (p->idx == 0) { /* (a wall-clock reading, published: every thread agrees on it) */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
		uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		pub->want_poll = t - p->ps->last_poll_wall >= POLL_WALL_NS;
	}
}

/* Window number w: take what the last window sent here, then run the events below the end. */
static void run_window(struct dp_part *p, const struct step *st, uint64_t w)
{
	bool track = p->ps->stop_when_idle;

	p->eng.xfer_parity = (unsigned)(w & 1);
	p->eng.xfer_min_ns = UINT64_MAX;
	if (w > 0) {
		uint32_t at_end = 0;
		for (uint32_t i = 0; i < p->n_in_cross; i++) {
			struct dp_chan *c = &p->ps->f->chans[p->in_cross[i]];
			uint32_t n = dp_chan_take_cross(c, (unsigned)((w - 1) & 1),
							st->end_key ? UINT64_MAX : st->end_at, &at_end);
			p->crossed += n;
			if (n)
				p->idle = false;
		}
		p->at_end += at_end;
	}
	while (dp_engine_step_below(&p->eng, st->end_at, st->end_key))
		if (track && note_idle(p, p->eng.now_ns) && st->early_stop)
			break;
}

/* ---- agreeing on the next step ---- */

struct agree {
	uint64_t last_poll_w;     /* window of the last poll */
	uint64_t first_ns;        /* the run's first instant (an event's time) */
	bool first_known;
	bool failure_seen;        /* a STEP_FAILURE was taken */
};

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static bool key_below(uint64_t at, uint64_t key, uint64_t end_at, uint64_t end_key)
{
	return at < end_at || (at == end_at && key < end_key);
}

static void decide(struct dp_parts *ps, unsigned slot, uint64_t w, struct agree *ag, struct step *st)
{
	uint64_t min_at = UINT64_MAX, min_key = UINT64_MAX, sent_min = UINT64_MAX, idle_at = 0, now = 0;
	uint64_t g_at = UINT64_MAX, g_key = UINT64_MAX, until = ps->run->until_ns;
	bool all_idle = true, all_serial = ps->run->serial != NULL;

	for (uint32_t i = 0; i < ps->n; i++) {
		const struct dp_part_pub *pub = &ps->p[i].pub[slot];
		if (key_below(pub->next_at, pub->next_key, min_at, min_key)) {
			min_at = pub->next_at;
			min_key = pub->next_key;
		}
		sent_min = RTE_MIN(sent_min, pub->sent_min);
		all_idle &= pub->idle;
		all_serial &= pub->serial_due;
		idle_at = RTE_MAX(idle_at, pub->idle_at);
		now = RTE_MAX(now, pub->now);
	}
	bool has_g = dp_engine_peek(ps->f->eng, &g_at, &g_key);
	uint64_t first = RTE_MIN(RTE_MIN(min_at, sent_min), g_at);
	if (!ag->first_known) {
		ag->first_known = true;
		ag->first_ns = first;
	}
	memset(st, 0, sizeof(*st));
	for (uint32_t i = 0; i < ps->n && !ag->failure_seen; i++)
		if (ps->p[i].pub[slot].failed) {
			ag->failure_seen = true;
			st->kind = STEP_FAILURE;
			return;
		}
	if (all_serial) { /* (before anything runs on: what it adds is at or after the windows' end) */
		st->kind = STEP_SERIAL;
		st->poll_ns = RTE_MAX(now, ps->f->eng->now_ns);
		return;
	}
	if ((w - ag->last_poll_w >= POLL_WINDOWS || ps->p[0].pub[slot].want_poll) && ps->run->between) {
		ag->last_poll_w = w;
		st->kind = STEP_GLOBAL;
		st->poll_ns = RTE_MAX(now, ps->f->eng->now_ns);
		return;
	}
	if (first == UINT64_MAX || (until != UINT64_MAX && first > until)) {
		st->kind = STEP_STOP; /* nothing left, or nothing left by the bound */
		if (ps->mpi)
			ps->next_after = first;
		st->end_ns = until != UINT64_MAX ? until : RTE_MAX(now, ps->f->eng->now_ns);
		return;
	}
	if (ps->stop_when_idle && all_idle && sent_min == UINT64_MAX) {
		/* the single engine ends after the first instant all is idle: the
		 * last partition's idle instant (not before the run's first step);
		 * what the others still have up to it runs first */
		uint64_t end = RTE_MAX(idle_at, ag->first_ns);
		if (has_g && g_at <= end) {
			st->kind = STEP_GLOBAL;
			st->run_timer = true;
		} else if (min_at <= end) {
			st->kind = STEP_WINDOW;
			st->end_at = end + 1;
		} else {
			st->kind = STEP_STOP;
			st->end_ns = end;
			if (ps->mpi)
				ps->next_after = first;
		}
		return;
	}
	if (has_g && key_below(g_at, g_key, min_at, min_key) && g_at <= sent_min) {
		st->kind = STEP_GLOBAL; /* (an arrival at g_at is keyed after every global event) */
		st->run_timer = true;
		return;
	}
	st->kind = STEP_WINDOW;
	st->early_stop = ps->stop_when_idle;
	st->end_at = add_sat(RTE_MIN(min_at, sent_min), ps->lookahead);
	if (has_g && key_below(g_at, g_key, st->end_at, st->end_key)) {
		st->end_at = g_at;
		st->end_key = g_key;
	}
	if (until != UINT64_MAX && !key_below(st->end_at, st->end_key, until + 1, 0)) {
		st->end_at = until + 1;
		st->end_key = 0;
	}
}

/*
 * Thread 0, every partition stopped: the earliest global event, or telemetry
 * and progress. Ranks: every rank runs the global event on its copy of the
 * fabric; rank 0 alone polls, and tells the others whether to stop.
 */
static void run_global(struct dp_parts *ps, const struct step *st)
{
	struct dp_engine *g = ps->f->eng;
	uint64_t at, key;

	if (st->run_timer && dp_engine_peek(g, &at, &key)) {
		dp_engine_step_below(g, at, key + 1);
		return;
	}
	if (ps->mpi && ps->run->collect)
		ps->run->collect(ps->run->ctx, st->poll_ns);
	if (ps->mpi && self(ps) != 0)
		goto tell;
	uint64_t events = g->fired, now = g->now_ns;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	ps->last_poll_wall = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	for (uint32_t i = 0; i < ps->n; i++) {
		events += ps->p[i].eng.fired;
		now = RTE_MAX(now, ps->p[i].eng.now_ns);
	}
	if (!ps->run->between(ps->run->ctx, now, events))
		ps->stop_flag = true;
tell:
	if (ps->mpi && dp_mpi_bcast(ps->mpi, &ps->stop_flag, sizeof(ps->stop_flag), 0) < 0)
		ps->stop_flag = true;
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run_partition(struct dp_part *p)
{
	struct dp_parts *ps = p->ps;
	struct agree ag = {0};
	unsigned sense = 0;
	uint64_t round = 0, w = 0;
	struct step st;

	bool lead = p->idx == self(ps); /* the thread that writes the run's totals */

	p->failure_seen = false;
	p->idle = ps->stop_when_idle && local_idle(p);
	p->idle_at = 0;
	publish(p, 0);
	for (;;) {
		meet(ps, p, &sense, (unsigned)(round & 1));
		decide(ps, (unsigned)(round & 1), w, &ag, &st);
		if (st.kind == STEP_STOP) {
			if (lead)
				ps->end_ns = st.end_ns;
			return;
		}
		if (st.kind == STEP_GLOBAL) {
			if (ps->mpi == NULL)
				barrier(ps, &sense); /* everyone has read the fabric engine in decide() */
			if (p->idx == 0 || ps->mpi)
				run_global(ps, &st);
			if (ps->mpi == NULL)
				barrier(ps, &sense);
			if (ps->stop_flag) {
				if (lead)
					ps->end_ns = RTE_MAX(ps->f->eng->now_ns, p->eng.now_ns);
				return;
			}
			if (ps->stop_when_idle && st.run_timer)
				note_idle(p, ps->f->eng->now_ns); /* a topology change may have emptied queues */
		} else if (st.kind == STEP_SERIAL) {
			if (ps->mpi == NULL)
				barrier(ps, &sense); /* everyone has read the fabric engine in decide() */
			if (p->idx == 0 || ps->mpi)
				ps->run->serial(ps->run->ctx, st.poll_ns);
			if (ps->mpi == NULL)
				barrier(ps, &sense);
		} else if (st.kind == STEP_FAILURE) {
			/* (its traffic may be waiting on the failed one: idle from now on,
			 * at the same round on every partition) */
			p->failure_seen = true;
			if (ps->stop_when_idle)
				note_idle(p, p->eng.now_ns);
		} else {
			uint64_t tsc = rte_rdtsc();
			run_window(p, &st, w);
			p->busy_tsc += rte_rdtsc() - tsc;
			if (ps->mpi)
				pack_frames(ps, p, w);
			w++;
			if (lead)
				ps->windows = w;
		}
		round++;
		publish(p, (unsigned)(round & 1));
	}
}

/* ---- the live clock ---- */

/* Partition 0: stop every other partition at the top of its loop. */
static void stop_world(struct dp_parts *ps)
{
	atomic_fetch_add_explicit(&ps->epoch, 1, memory_order_acq_rel);
	for (unsigned spins = 0;
	     atomic_load_explicit(&ps->paused, memory_order_acquire) +
		     atomic_load_explicit(&ps->exited, memory_order_acquire) < ps->n - 1;)
		if (++spins < SPINS_BEFORE_YIELD)
			rte_pause();
		else
			sched_yield();
}

static void resume_world(struct dp_parts *ps)
{
	atomic_store_explicit(&ps->paused, 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&ps->epoch, 1, memory_order_acq_rel);
}

/* The partition that runs the fabric engine's timers and between(): 0, or the only one run here. */
static bool live_leader(const struct dp_part *p)
{
	return p->idx == self(p->ps);
}

/* Other partitions run on threads of this process (they are stopped for global work). */
static bool live_threads(const struct dp_parts *ps)
{
	return ps->only == UINT32_MAX && ps->n > 1;
}

/* Events every engine has run (the others' read racily when they are not stopped: a display). */
static uint64_t live_events(const struct dp_parts *ps)
{
	uint64_t events = ps->f->eng->fired;

	for (uint32_t i = 0; i < ps->n; i++)
		events += ps->p[i].eng.fired;
	return events;
}

/* The leader, the world stopped: the fabric engine's due timers, then between(). */
static void live_global(struct dp_parts *ps, uint64_t now)
{
	dp_engine_run_due(ps->f->eng, now);
	if (!ps->live->between(ps->live->ctx, now, live_events(ps)))
		atomic_store(&ps->live_stop, true);
}

/* One turn's nap when it found nothing to do: until the next timer, at most nap_ns. */
static void live_nap(struct dp_part *p, uint64_t now)
{
	uint64_t next = dp_engine_next_ns(&p->eng), nap = next > now ? next - now : 0;

	if (nap > p->ps->live->nap_ns)
		nap = p->ps->live->nap_ns;
	if (nap > 2000) {
		struct timespec ts = {0, (long)nap};
		nanosleep(&ts, NULL);
	}
}

static void live_partition(struct dp_part *p)
{
	struct dp_parts *ps = p->ps;
	const struct dp_part_live *run = ps->live;
	struct dp_fabric *f = ps->f;
	unsigned seen = 0;
	uint64_t last_between = dp_engine_now(&p->eng);
	uint64_t tsc;

	for (;;) {
		unsigned ep = atomic_load_explicit(&ps->epoch, memory_order_acquire);
		if ((ep & 1) && ep != seen) { /* (only other partitions see an odd epoch here) */
			seen = ep;
			atomic_fetch_add_explicit(&ps->paused, 1, memory_order_acq_rel);
			for (unsigned spins = 0; atomic_load_explicit(&ps->epoch, memory_order_acquire) == ep;)
				if (++spins < SPINS_BEFORE_YIELD)
					rte_pause();
				else
					sched_yield();
			/* then at least one turn of its own before the next stop */
		}
		tsc = rte_rdtsc(); /* (a turn's busy time starts here: not the nap or the pause before it) */
		if (atomic_load_explicit(&ps->live_stop, memory_order_acquire))
			break;
		uint64_t now = dp_engine_now(&p->eng);
		if (now >= run->end_ns) {
			atomic_store(&ps->live_stop, true);
			break;
		}
		uint32_t work = 0;
		/* (one process of several: what crosses into it comes through run->poll, dp_peer.h) */
		for (uint32_t i = 0; live_threads(ps) && i < p->n_in_cross; i++) {
			uint32_t n = dp_chan_take_ring(&f->chans[p->in_cross[i]]);
			p->crossed += n;
			work += n;
		}
		for (uint32_t i = 0; live_threads(ps) && i < p->n_out_cross; i++)
			dp_chan_return_ring(&f->chans[p->out_cross[i]]);
		work += dp_engine_run_budget(&p->eng, now, run->budget);
		/* behind: what the ports bring enters at the oldest timer left (as one engine's loop) */
		uint64_t lag = dp_engine_note_lag(&p->eng, now);
		uint64_t t = dp_engine_mono(&p->eng, now - lag);
		work += run->poll(run->ctx, p->idx, t);
		for (uint32_t i = 0; i < p->n_out_cross; i++)
			dp_chan_flush_ring(&f->chans[p->out_cross[i]]);
		run->flush(run->ctx, p->idx);
		bool due = live_leader(p) && dp_engine_next_ns(f->eng) <= now;
		if (due || (live_leader(p) && now - last_between >= run->between_ns)) {
			if (due || run->needs_world == NULL || run->needs_world(run->ctx)) {
				if (live_threads(ps)) {
					stop_world(ps);
					ps->stops++;
				}
				live_global(ps, now);
				if (live_threads(ps))
					resume_world(ps);
			} else if (run->tick && !run->tick(run->ctx, now, live_events(ps))) {
				atomic_store(&ps->live_stop, true);
			}
			last_between = dp_engine_now(&p->eng); /* (the stop may have taken a while) */
			work++;
		}
		p->turns++;
		p->idle_turns += work == 0;
		p->busy_tsc += work ? rte_rdtsc() - tsc : 0;
		if (work == 0 && run->nap_ns)
			live_nap(p, now);
	}
	atomic_fetch_add_explicit(&ps->exited, 1, memory_order_acq_rel);
}

/* Partition p's loop, for either clock, with its CPU time and its loop's TSC cycles (balance). */
static void run_one(struct dp_part *p)
{
	double t0 = thread_cpu_s();
	uint64_t tsc0 = rte_rdtsc();

	p->busy_tsc = 0;
	if (p->ps->live)
		live_partition(p);
	else
		run_partition(p);
	p->loop_tsc = rte_rdtsc() - tsc0;
	p->cpu_s = thread_cpu_s() - t0;
}

static void *thread_main(void *arg)
{
	struct dp_part *p = arg;
	int go;

	while ((go = atomic_load_explicit(&p->ps->go, memory_order_acquire)) == 0)
		sched_yield();
	if (go <= 0)
		return NULL;
	/* an lcore id gives the thread its own mempool cache: without one every
	 * frame allocated or freed goes through the pool's shared stack (or ring) */
	bool registered = rte_thread_register() == 0;
	run_one(p);
	if (registered)
		rte_thread_unregister();
	return NULL;
}

/* Every online CPU. EAL pins the main thread to its one lcore (-l0), and
 * threads inherit that: a partition's thread may run anywhere instead. */
static void all_cpus(cpu_set_t *all)
{
	CPU_ZERO(all);
	for (long c = 0, n = sysconf(_SC_NPROCESSORS_ONLN); c < n && c < CPU_SETSIZE; c++)
		CPU_SET((int)c, all);
}

/*
 * Partition p on the calling (main) thread, free to run on every CPU: the
 * processes of one fabric each have EAL's main lcore 0, and pinned there
 * they would share one core (each waiting a time slice for the other's
 * frames); so would partition 0 of a live run with every other DPDK process
 * on the machine (all have lcore 0), while the other partitions' threads run
 * anywhere. The thread's own affinity is restored afterwards.
 */
static void run_unpinned(struct dp_part *p)
{
	cpu_set_t was, all;
	bool saved = pthread_getaffinity_np(pthread_self(), sizeof(was), &was) == 0;

	all_cpus(&all);
	pthread_setaffinity_np(pthread_self(), sizeof(all), &all); /* (if refused: pinned, slower) */
	run_one(p);
	if (saved)
		pthread_setaffinity_np(pthread_self(), sizeof(was), &was);
}

/*
 * Start partitions 1..n-1 on threads, run partition 0 here, join. The
 * threads meet at barriers that count on all of them: unless every thread
 * started, none runs. Returns 0 or -errno.
 */
static int run_threads(struct dp_parts *ps)
{
	uint32_t started = 1;
	int rc = 0;

	pthread_attr_t attr;
	cpu_set_t all;

	all_cpus(&all);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(all), &all);
	atomic_store(&ps->go, 0);
	for (; started < ps->n; started++) {
		rc = -pthread_create(&ps->p[started].th, &attr, thread_main, &ps->p[started]);
		if (rc < 0)
			break;
	}
	pthread_attr_destroy(&attr);
	atomic_store_explicit(&ps->go, rc < 0 ? -1 : 1, memory_order_release);
	if (rc == 0 && ps->live)
		run_unpinned(&ps->p[0]);
	else if (rc == 0)
		run_one(&ps->p[0]);
	for (uint32_t i = 1; i < started; i++)
		pthread_join(ps->p[i].th, NULL);
	if (rc < 0)
		fprintf(stderr, "rocelab-dp: cannot start worker thread %u: %s\n", started, strerror(-rc));
	return rc;
}

/* After a run: the partitions' events, failed timers and lag into the fabric engine. */
static void sum_into(struct dp_parts *ps, struct dp_engine *g)
{
	for (uint32_t i = 0; i < ps->n; i++) {
		struct dp_engine *e = &ps->p[i].eng;
		g->fired += e->fired;
		g->timer_fail += e->timer_fail;
		g->lag_max_ns = RTE_MAX(g->lag_max_ns, e->lag_max_ns);
		g->lag_ns = RTE_MAX(g->lag_ns, e->lag_ns);
	}
}

int dp_parts_run(struct dp_parts *ps, const struct dp_part_run *run)
{
	ps->run = run;
	ps->live = NULL;
	ps->stop_when_idle = run->until_ns == UINT64_MAX;
	ps->stop_flag = false;
	atomic_store(&ps->bar_count, 0);
	atomic_store(&ps->bar_sense, 0);
	if (ps->mpi) { /* one partition per rank, on this thread */
		run_one(&ps->p[self(ps)]);
		ps->f->eng->now_ns = ps->end_ns;
		sum_into(ps, ps->f->eng);
		return 0;
	}
	int rc = run_threads(ps);
	if (rc < 0)
		return rc;
	ps->f->eng->now_ns = ps->end_ns;
	sum_into(ps, ps->f->eng);
	return 0;
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
	struct dp_part *me = &ps->p[self(ps)];
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
	const struct dp_engine *own = m->rank == 0 ? f->eng : &ps->p[self(ps)].eng;
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

int dp_parts_run_live(struct dp_parts *ps, const struct dp_part_live *run)
{
	ps->live = run;
	atomic_store(&ps->epoch, 0);
	atomic_store(&ps->paused, 0);
	atomic_store(&ps->exited, 0);
	atomic_store(&ps->live_stop, false);
	ps->stops = 0;
	for (uint32_t i = 0; i < ps->n; i++)
		ps->p[i].turns = ps->p[i].idle_turns = 0;
	int rc = 0;
	if (ps->only != UINT32_MAX) /* one process of several: its one partition, here */
		run_unpinned(&ps->p[ps->only]);
	else
		rc = run_threads(ps);
	ps->live = NULL;
	if (rc < 0)
		return rc;
	sum_into(ps, ps->f->eng);
	return 0;
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
