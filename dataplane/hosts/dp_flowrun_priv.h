/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_flowrun_priv.h: between the two halves of rocelab-dp --fabric flow.
 *   - dp_flowrun.c replays one collective size's plan (struct fr): its
 *     grants, sends, QP queues, ACK timers and NVLink ends.
 *   - dp_flowshare.c holds the one flow fabric every running collective
 *     shares (struct fs_shared), moves it with the run's virtual clock
 *     (a dp_engine timer slot) and hands each collective its flows' events.
 * Not a public interface: dp_flowrun.h is.
 */
#ifndef DP_FLOWRUN_PRIV_H
#define DP_FLOWRUN_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp_flowrun.h"
#include "fl_heap.h"

struct dp_engine;
struct dp_fabric;
struct fl_fabric;
struct fr;

/* The fabric's counters a member's size reports (engine_counts). */
#define FS_COUNTS 5

/* A collective on the shared fabric: its replay, whom to tell at its end. */
struct fs_member {
	struct fr *r;
	dp_flowrun_done_fn done;
	void *obj;
	uint64_t fs0[FS_COUNTS];      /* the fabric's events, recomputes, flows and links touched, local fills at its start */
};

/* A member due at an instant (fs_shared.work): its join order and hid. */
struct fs_due {
	uint64_t seq;
	uint32_t hid;
};

/* The flow fabric shared by the collectives that run at once. */
struct fs_shared {
	struct dp_fabric *f;
	struct dp_engine *eng;        /* the run's clock: the collectives' engine */
	void **home;                  /* where the run keeps it (cleared when it goes) */
	struct fl_fabric *fl;         /* a link per fabric channel, in channel order */
	uint32_t mtu;                 /* its first-packet payload: the collectives' path MTU */
	uint64_t fl_refill_ns;        /* its fl_config.refill_ns */
	int slot;                     /* the engine's timer slot of its next event */
	/* flow cookies: flow/'s cookie is a slot here, naming the collective and its own cookie */
	struct fr **own;              /* [cap] NULL: free, or its collective failed */
	uint64_t *ck;                 /* [cap] */
	uint32_t *free_ids, n_free, cap;
	struct fs_member *act;        /* [n_act] the collectives running, in the order added */
	uint32_t *chan_slot;          /* [f->n_chans] scratch of fr's chans_setup, all 0 between uses */
	/* Which collectives have something to do at an instant, without asking
	 * each (a 24K-GPU mix runs ~1,000 at once): a heap of their own next
	 * times (fr_next_ns), and a list of those a flow event touched. */
	struct fl_heap due;           /* id: a member's hid, key: its fr_next_ns (absent: none) */
	struct fr **hfr;              /* [cap_h] the replay of each hid; NULL: free */
	uint64_t *hseq;               /* [cap_h] its join order (the order collectives act in) */
	uint8_t *queued;              /* [cap_h] on the touched list */
	uint32_t *touched, n_touched; /* [cap_h] hids a flow's sending or delivery touched */
	struct fs_due *work;          /* [cap_h] the members acting at an instant (sh_step) */
	uint32_t cap_h;
	uint64_t next_seq;
	uint32_t n_act, cap_act;
};

/* Starts a flow of weight w x bytes for r on path hop[0 .. n - 1] at the
 * shared fabric's time, cookie ck (r's own). 0, or flow/'s negative errno. */
int fs_flow_start(struct fs_shared *sh, struct fr *r, const uint32_t *hop, unsigned n, uint64_t bytes,
		  uint32_t w, uint64_t ck);

/* The replay's side (dp_flowrun.c). */

/* What a finished replay hands back (fr_result). */
struct fr_out {
	uint64_t *iter_ns;            /* [iters] each iteration's time, launch included */
	uint32_t iters;
	uint64_t start_ns;            /* the size's start */
	const uint32_t *chans;        /* [n_chans] the fabric's channels its paths cross */
	uint32_t n_chans;
	const uint64_t *chan_bytes, *chan_pkts; /* [n_chans] payload and packets on each, every iteration */
	struct dp_flowrun_stats *st;  /* its counters (the engine's are filled by dp_flowshare.c) */
};

/*
 * A replay of run (created, never started; cfg its config) over nics on
 * fabric hosts host_of, on sh from now_ns: paths traced at now_ns; its first
 * iteration starts launch later. NULL with *err (dp_flowrun.h's errors) and why.
 */
struct fr *fr_create(struct fs_shared *sh, struct ne_coll *run, const struct ne_coll_config *cfg,
		     struct ne_nic *const *nics, const uint32_t *host_of, uint64_t now_ns, int *err,
		     char *why, size_t cap);
void fr_destroy(struct fr *r);
/* flow/'s "last byte sent" for one of r's flows (acted on in fr_at). */
void fr_sent(struct fr *r, uint64_t ck);
/* One of r's flows was delivered at the shared fabric's time. */
void fr_delivered(struct fr *r, uint64_t ck);
/* Everything of r's due at t, after the flows delivered at t: its timers, QP
 * queues, NVLink ends, an iteration's start, the grants and sends they allow. */
void fr_at(struct fr *r, uint64_t t);
/* r's hid in its fabric's due heap (dp_flowshare.c's), set once when it joins. */
void fr_set_hid(struct fr *r, uint32_t hid);
uint32_t fr_hid(const struct fr *r);
/* r's next own event (a timer, an NVLink end, an iteration's start), FL_TIME_INF if none. */
uint64_t fr_next_ns(const struct fr *r);
/* 0 while r runs, 1 once its last iteration ended, a negative errno once it failed. */
int fr_state(const struct fr *r);
/* A finished replay's results (valid until fr_destroy). */
void fr_result(struct fr *r, struct fr_out *out);
/* The reason for error e into why, unless why already says one. */
void fr_why(int e, char *why, size_t cap);
/* The collective that r replays. */
struct ne_coll *fr_run(const struct fr *r);

#endif /* DP_FLOWRUN_PRIV_H */
