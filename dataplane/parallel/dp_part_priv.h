/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_part_priv.h: what the files of the partitions share (parallel/ only):
 *   dp_part.c          the cut, the MPI ranks' notes, queries, gathers
 *   dp_part_window.c   the virtual clock's windows: barrier, publish, decide
 *   dp_part_threads.c  the threads, and the live clock's loop
 */
#ifndef DP_PART_PRIV_H
#define DP_PART_PRIV_H

#include <pthread.h>
#include <stdatomic.h>

#include <rte_ring.h>

#include "dp_part.h"
#include "dp_gather.h"
#include "dp_mpi.h"

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

/* Ranks: what a rank tells every other at a meeting: its publication, the frame bytes for each. */
struct rank_note {
	struct dp_part_pub pub;
	uint64_t bytes_to[]; /* [n] */
};

/* ---- agreeing on the next step ---- */

struct agree {
	uint64_t last_poll_w;     /* window of the last poll */
	uint64_t first_ns;        /* the run's first instant (an event's time) */
	bool first_known;
	bool failure_seen;        /* a STEP_FAILURE was taken */
};

/* dp_part.c */
uint32_t part_self(const struct dp_parts *ps);
uint32_t part_of_node(const struct dp_parts *ps, struct topo_node_ref n);
size_t part_rank_note_size(const struct dp_parts *ps);
void part_sort_by_receiver(struct dp_parts *ps, struct dp_part *p);

/* dp_part_window.c */
void part_meet(struct dp_parts *ps, struct dp_part *p, unsigned *sense, unsigned slot);
double part_thread_cpu_s(void);
void part_run_partition(struct dp_part *p);

#endif /* DP_PART_PRIV_H */
