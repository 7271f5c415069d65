/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_engine: the event loop's timers and clock.
 *
 * Timers are ordered by (time, key), so events due at the same nanosecond
 * run in a fixed order and a run is deterministic. The key is (LP,
 * sequence): the logical process (a switch, a host, the global events, ...)
 * whose event scheduled the timer and how many that LP had scheduled before.
 * An LP's events run in the same order however the fabric is cut into
 * partitions (dp_part.h), so the keys, and with them the order of every
 * event, do not depend on the partitioning: one engine and N engines run the
 * same events in the same order. An engine that never names LPs has one
 * (LP 0): then the key is the insertion order. Keys are unique, so the order
 * is total and does not depend on how the timers are stored.
 *
 * Storage: a wheel of DP_WHEEL_SLOTS one-nanosecond buckets for the timers
 * due within that many nanoseconds of the last one run (nearly all of them:
 * a frame's serialisation, a link's delay, a generator's next packet), and a
 * binary min-heap for the rest (retransmission timers, past deadlines of a
 * late live loop). A bucket holds the timers of one nanosecond, sorted by
 * key (a list, and an inbox of timers added out of order, sorted into the
 * list when the bucket is reached); a two-level bitmap finds the next bucket
 * in use. The next timer is the
 * earlier of the wheel's first and the heap's root. Why not the heap alone:
 * at 128 ranks a few thousand timers are pending, and a pop walked a dozen
 * dependent levels of the heap, a fifth of the event loop. Nanosecond
 * buckets matter: a 64-byte frame lasts 6.7 ns at 100 Gbit/s, so a coarse
 * wheel would reorder a link's packets.
 *
 * Two clocks, one code path:
 *   live     now = a monotonic source (the data plane passes the TSC);
 *   virtual  now only moves when the loop jumps to the next deadline.
 *
 * Live mode batches: the loop reads the clock once, then runs every timer
 * due by then, and the fabric moves every packet whose time has come (a
 * transmitter sends back to back, a wire delivers all that arrived) in one
 * callback. Work done late must not make time run backwards for the state
 * machines (flowlet gaps, pause timers, MMU), so in live mode callbacks get
 * dp_engine_mono(): never earlier than any time handed out before. Link
 * timing stays exact whatever the loop's lateness: a transmitter starts a
 * frame at max(link free, frame queued), not at the time it noticed.
 *
 * Live mode under overload: when the fabric cannot keep up with real time,
 * every timer a turn runs schedules more that are already due, so "run all
 * that is due" would never return. The live loop therefore runs at most a
 * budget of timers per turn (dp_engine_run_budget()) and then checks its
 * clock, signals and telemetry; the timers left over are late. How late the
 * oldest one is after a turn is the lag (dp_engine_note_lag()): 0 while the
 * fabric keeps up, growing while it falls behind real time.
 *
 * A plain timer is never cancelled: an owner that changes its mind keeps the
 * deadline it expects and ignores stale callbacks (see dp_fabric.c). An owner
 * that moves its deadline all the time (an emulated NIC's wake-up) keeps it
 * in a timer slot instead, which holds one pending timer and replaces it when
 * re-armed (dp_timer_slot_arm), so superseded deadlines do not pile up.
 */
#ifndef DP_ENGINE_H
#define DP_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

enum dp_clock_mode { DP_CLOCK_LIVE, DP_CLOCK_VIRTUAL };

typedef void (*dp_timer_fn)(void *obj, uint64_t arg, uint64_t now_ns);

/*
 * Asks for the cache lines a timer's callback will read (rte_prefetch0), a
 * timer ahead of its run (dp_engine_set_prefetch); reads nothing that may not
 * be in cache, changes nothing. obj and arg are the timer's.
 */
typedef void (*dp_timer_prefetch_fn)(const void *obj, uint64_t arg);

#define DP_PREFETCHERS 4 /* callbacks with a prefetcher of their own, per engine */

/* Logical processes: 0 runs the global events (topology changes, sampling) and set-up. */
#define DP_LP_GLOBAL 0u
#define DP_LP_SEQ_BITS 40  /* a key: LP in the top 24 bits, that LP's sequence in the low 40 */
#define DP_LP_MAX ((1u << (64 - DP_LP_SEQ_BITS)) - 1)
#define DP_LP_STRIDE 8     /* uint64_t per LP counter: one cache line, no false sharing between partitions */

#define DP_WHEEL_BITS 12
#define DP_WHEEL_SLOTS (1u << DP_WHEEL_BITS) /* ns the wheel spans (<= 4096: one summary word) */

/* A timer in the overflow heap: what orders it and its node. */
struct dp_timer {
	uint64_t at_ns;
	uint64_t key;      /* (scheduling LP << DP_LP_SEQ_BITS) | its sequence */
	uint32_t node;     /* index into dp_engine.nodes */
};

/* A pending timer (one cache line); its index does not change while it is pending. */
struct dp_timer_node {
	uint64_t at_ns;
	uint64_t key;
	dp_timer_fn fn;
	void *obj;
	uint64_t arg;
	uint32_t lp;       /* the LP the callback runs as (what it schedules is keyed by it) */
	uint32_t slot;     /* its timer slot (dp_timer_slot_new), 0: a plain timer */
	uint32_t next;     /* in a bucket's list: the next node (index + 1; circular); in its inbox: the older one, 0: none */
	uint32_t prev;     /* in a list: the previous one (index + 1; the first's is the last); in an inbox: the newer one, 0: none */
	uint32_t hpos;     /* in the heap: its index there + 1; 0: in a bucket's list; UINT32_MAX: in its inbox */
} __attribute__((aligned(64)));

struct dp_engine {
	enum dp_clock_mode mode;
	uint64_t now_ns;            /* virtual: current time; live: last reading */
	uint64_t (*live_now)(void *ctx); /* live: monotonic ns source */
	void *live_ctx;
	uint32_t n, cap;            /* pending timers, room for them */
	struct dp_timer_node *nodes; /* [cap] */
	uint32_t *node_free;        /* [cap]: unused indices of nodes, a stack of n_free... */
	uint32_t n_free;            /* ...so n + n_free == cap */
	struct dp_timer *heap;      /* [cap]: the timers outside the wheel's span */
	uint32_t hn;                /* timers in the heap */
	uint32_t *wheel;            /* [DP_WHEEL_SLOTS]: a bucket's sorted list, its first node (index + 1), 0: empty */
	uint32_t *wheel_in;         /* [DP_WHEEL_SLOTS]: a bucket's timers not yet sorted in, newest first; 0: none */
	uint32_t *wheel_tail;       /* [DP_WHEEL_SLOTS]: the sorted list's last node (index + 1) when not empty */
	uint64_t *wheel_tail_key;   /* [DP_WHEEL_SLOTS]: its key */
	uint64_t *wheel_bits;       /* [DP_WHEEL_SLOTS / 64]: buckets in use */
	uint64_t wheel_sum;         /* bit w: wheel_bits[w] != 0 */
	uint64_t wheel_lo;          /* every wheel timer is due in [wheel_lo, wheel_lo + DP_WHEEL_SLOTS) */
	uint32_t wheel_n;           /* timers in the wheel */
	uint32_t cur_lp;            /* the LP of the running callback (DP_LP_GLOBAL outside one) */
	bool dispatching;           /* a callback runs (then cur_key is its key) */
	uint64_t cur_key;
	uint32_t cur_sub;           /* a counter the running callback's observers share (captures) */
	uint64_t *lp_seq;           /* [lp * DP_LP_STRIDE]: timers each LP scheduled (maybe shared) */
	uint32_t n_lp;
	uint64_t own_seq[DP_LP_STRIDE]; /* lp_seq of an engine with one LP */
	uint32_t copy_lp;           /* an LP with a copy on this engine (dp_engine_copy_lp); UINT32_MAX none */
	uint64_t copy_seq;          /* its sequence here */
	uint32_t *slot_pos;         /* [slot]: node index + 1 of the slot's pending timer, 0: none */
	uint32_t n_slots, slot_cap; /* slots handed out (slot 0 is never one), room in slot_pos */
	uint64_t fired;             /* timers run so far */
	uint64_t mono_ns;           /* live: the latest time handed out (dp_engine_mono) */
	uint32_t limit;             /* pending timers allowed; 0: as many as memory holds (dp_engine_set_limit) */
	uint32_t room;              /* min(cap, limit): dp_timer_add() beyond it takes the slow path */
	uint64_t timer_fail;        /* dp_timer_add() calls that failed: events the model lost */
	uint64_t lag_ns;            /* live: how late the oldest due timer was at the last note */
	uint64_t lag_max_ns;        /* live: the largest lag noted */
	/* a partition's engine (dp_part.h): frames for other partitions */
	unsigned xfer_parity;       /* the outbox this window fills (window number & 1) */
	uint64_t xfer_min_ns;       /* earliest arrival put in an outbox this window; UINT64_MAX: none */
	/* look-ahead (dp_engine_set_prefetch): the callbacks whose timers' lines are asked for ahead */
	struct {
		dp_timer_fn fn;
		dp_timer_prefetch_fn pf;
	} pf[DP_PREFETCHERS];
	uint32_t n_pf;
};

/*
 * Set up an engine. Live mode needs live_now (ns, monotonic). Returns 0, or
 * -EINVAL when live mode has no clock source, -ENOMEM when memory runs out.
 */
int dp_engine_init(struct dp_engine *e, enum dp_clock_mode mode, uint64_t (*live_now)(void *),
		   void *live_ctx);
void dp_engine_free(struct dp_engine *e);

/*
 * Timers that run fn have pf ask for the lines fn will read while the timer
 * before them runs (the next timer in time order, looked up as each one is
 * dispatched). A fabric of
 * thousands of links and frames in flight does not stay in cache, and a
 * callback's reads depend on one another (the channel, its wire, the frame):
 * without it each misses in turn. Timers of other callbacks have their obj's
 * first line asked for. Returns 0, -ENOSPC when DP_PREFETCHERS are set.
 */
int dp_engine_set_prefetch(struct dp_engine *e, dp_timer_fn fn, dp_timer_prefetch_fn pf);

/*
 * Use seq (n_lp counters, DP_LP_STRIDE uint64_t apart, zeroed by the caller)
 * as the LP sequence counters: engines of one partitioned run share one
 * array, each LP's counter written only by the engine that runs that LP.
 */
void dp_engine_set_lps(struct dp_engine *e, uint64_t *seq, uint32_t n_lp);

/*
 * LP lp runs on this engine and on others at the same time, a copy on each
 * (the emulated NICs' LP when a collective runs in lanes, one per partition:
 * dp_coll.h): the timers its callbacks schedule here take their sequence from
 * a counter of this engine's, from the shared one's value now, so that no
 * two threads write one counter. Keys keep the order in which this engine
 * scheduled them, which is what orders one LP's events. One LP per engine.
 */
void dp_engine_copy_lp(struct dp_engine *e, uint32_t lp);

/* Allow at most limit pending timers (0: no limit), so tests can make dp_timer_add() fail. */
void dp_engine_set_limit(struct dp_engine *e, uint32_t limit);

/* The current time: live reads the source (and remembers it), virtual returns now_ns. */
uint64_t dp_engine_now(struct dp_engine *e);

/*
 * Live: max(t, every time handed out before), remembered; virtual: t (the
 * virtual clock never goes back). What a batch of live work uses as its time.
 */
static inline uint64_t dp_engine_mono(struct dp_engine *e, uint64_t t)
{
	if (e->mode != DP_CLOCK_LIVE)
		return t;
	if (t < e->mono_ns)
		return e->mono_ns;
	e->mono_ns = t;
	return t;
}

/*
 * Run fn(obj, arg, now) at at_ns (past deadlines run at the next dispatch).
 * Returns 0, or -ENOMEM (no memory for another timer) / -ENOSPC (limit pending
 * timers already): then the timer is not added and timer_fail counts it, so
 * a caller must not wait for its callback.
 */
int dp_timer_add(struct dp_engine *e, uint64_t at_ns, dp_timer_fn fn, void *obj, uint64_t arg);

/*
 * dp_timer_add() for a callback that runs as LP lp (what the callback
 * schedules is keyed by lp). The key is the running LP's next sequence.
 * Same returns.
 */
int dp_timer_add_lp(struct dp_engine *e, uint32_t lp, uint64_t at_ns, dp_timer_fn fn, void *obj,
		    uint64_t arg);

/*
 * A timer whose key is (key_lp, 0) whoever schedules it: for a callback of
 * which at most one is pending per key_lp (a wire's next arrival), so that
 * its place among events at the same time does not depend on which engine
 * armed it, or when. Runs as LP lp. Same returns.
 */
int dp_timer_add_keyed(struct dp_engine *e, uint32_t lp, uint32_t key_lp, uint64_t at_ns,
		       dp_timer_fn fn, void *obj, uint64_t arg);

/*
 * Timer slots: an owner that keeps moving one wake-up (an emulated NIC whose
 * next event changes with every frame) re-arms its slot instead of adding a
 * timer each time, so the superseded deadlines do not pile up
 * (they used to: hundreds of thousands of stale wake-ups, each costing every
 * pop a level of the heap). A slot holds at most one pending timer.
 *
 * dp_timer_slot_new: a new slot with no timer. Returns its id (> 0), or
 * -ENOMEM.
 */
int dp_timer_slot_new(struct dp_engine *e);

/*
 * Arm slot's timer at at_ns: the pending one, if any, is removed, and the new
 * one is added exactly as dp_timer_add_lp() adds a timer (same key), so the
 * order of the events that do run is the one of adding a timer per wake-up
 * and ignoring the stale callbacks. Returns 0, or dp_timer_add_lp()'s errors
 * (then the slot has no pending timer).
 */
int dp_timer_slot_arm(struct dp_engine *e, uint32_t slot, uint32_t lp, uint64_t at_ns,
		      dp_timer_fn fn, void *obj, uint64_t arg);

/* Remove slot's pending timer, if any (it will not run); the slot stays the owner's. */
void dp_timer_slot_cancel(struct dp_engine *e, uint32_t slot);

/*
 * The running callback is a copy, on this engine, of an event the single
 * engine runs once (run on several partitions' engines, counted on one):
 * it does not count in fired.
 */
static inline void dp_engine_uncount(struct dp_engine *e)
{
	e->fired--; /* (fired += the batch after it: modular) */
}

/* True when slot has a pending timer (the callback of a fired one runs with none). */
bool dp_timer_slot_pending(const struct dp_engine *e, uint32_t slot);

/* (deadline, key) of the earliest timer; false when there is none. */
bool dp_engine_peek(const struct dp_engine *e, uint64_t *at_ns, uint64_t *key);

/* Deadline of the earliest timer, or UINT64_MAX when there is none. */
uint64_t dp_engine_next_ns(const struct dp_engine *e);

/*
 * Run every timer due at or before now_ns, including those they schedule for
 * <= now_ns. A callback gets its deadline as time (live: dp_engine_mono()
 * of it). Returns the number run.
 */
uint32_t dp_engine_run_due(struct dp_engine *e, uint64_t now_ns);

/*
 * Like dp_engine_run_due() but runs at most max timers (the oldest first),
 * so a live loop gets back to its checks however far behind it is. Returns
 * the number run; when it is max, timers due by now_ns may be left.
 */
uint32_t dp_engine_run_budget(struct dp_engine *e, uint64_t now_ns, uint32_t max);

/*
 * Record the lag at now_ns: now_ns minus the deadline of the earliest timer
 * when that is in the past, else 0; keeps the maximum. Returns the lag.
 */
uint64_t dp_engine_note_lag(struct dp_engine *e, uint64_t now_ns);

/*
 * Virtual clock: jump to the next deadline (if it is <= until_ns) and run
 * what is due there. Returns false when no timer is due by until_ns (the
 * clock then stands at until_ns).
 */
bool dp_engine_step_virtual(struct dp_engine *e, uint64_t until_ns);

/*
 * Virtual clock, bounded by a key: jump to the next deadline t and run the
 * timers due at t whose (time, key) is below (end_at, end_key), including
 * those they schedule. Returns false (the clock unmoved) when the earliest
 * timer is not below the bound. A partition's window (dp_part.h) is a run of
 * such steps.
 */
bool dp_engine_step_below(struct dp_engine *e, uint64_t end_at, uint64_t end_key);

#endif /* DP_ENGINE_H */
