/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_flowshare: the one flow fabric of a rocelab-dp --fabric flow run
 * (dp_flowrun_priv.h). Every collective size that runs joins it; flows of
 * collectives that run at once share its links by max-min fairness. It moves
 * with the run's virtual clock: one dp_engine timer slot, armed at its next
 * event (a flow's start or end or delivery, a collective's timer, NVLink end
 * or iteration start). At each such instant it runs flow/ to it, hands each
 * collective its delivered flows, then lets each that has something due take
 * its next steps, in the order the collectives joined: those a flow's
 * sending or delivery touched, and those whose own next time is due (a heap
 * of their next times, so an instant costs what acts, not every collective
 * running). A size that ends gets its times, the link table's counters and
 * its counters line (dp_flowrun_done_fn).
 */
#include "dp_flowrun_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_coll.h"
#include "dp_coll_priv.h"
#include "dp_fabric.h"
#include "fl_fabric.h"
#include "ne_coll.h"

/* ------------------------------------------------------------------ */
/* Flow cookies: flow/'s cookie of a flow is its slot here */

/* Room for twice the slots; 0 or -ENOMEM. */
static int slots_grow(struct fs_shared *sh)
{
	uint32_t cap = sh->cap ? 2 * sh->cap : 1024;
	struct fr **own = realloc(sh->own, cap * sizeof(*own));
	uint64_t *ck = own ? realloc(sh->ck, cap * sizeof(*ck)) : NULL;
	uint32_t *fr = ck ? realloc(sh->free_ids, cap * sizeof(*fr)) : NULL;

	if (own) /* (each kept before any return: realloc may have moved it) */
		sh->own = own;
	if (ck)
		sh->ck = ck;
	if (!fr)
		return -ENOMEM;
	sh->free_ids = fr;
	for (uint32_t id = cap; id-- > sh->cap;) /* lowest id on top */
		sh->free_ids[sh->n_free++] = id;
	sh->cap = cap;
	return 0;
}

int fs_flow_start(struct fs_shared *sh, struct fr *r, const uint32_t *hop, unsigned n, uint64_t bytes,
		  uint32_t w, uint64_t ck)
{
	uint32_t slot, id;
	int e;

	if (!sh->n_free && slots_grow(sh))
		return -ENOMEM;
	slot = sh->free_ids[sh->n_free - 1];
	e = fl_flow_start_weighted(sh->fl, hop, n, bytes, w, fl_now(sh->fl), slot, &id);
	if (e < 0)
		return e;
	sh->n_free--;
	sh->own[slot] = r;
	sh->ck[slot] = ck;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Which collectives act at an instant */

/* Member hid has something to do at the current instant. */
static void touch_hid(struct fs_shared *sh, uint32_t hid)
{
	if (!sh->queued[hid]) {
		sh->queued[hid] = 1;
		sh->touched[sh->n_touched++] = hid;
	}
}

/* r has something to do at the current instant: a flow of it was sent or delivered. */
static void touch(struct fs_shared *sh, const struct fr *r)
{
	touch_hid(sh, fr_hid(r));
}

static int due_cmp(const void *a, const void *b)
{
	const struct fs_due *x = a, *y = b;

	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The members that act at t into sh->work, in the order they joined (the
 * order every collective acted in when all were asked): those a flow event
 * touched and those whose own next time is due. Their count; the touched
 * list is empty again. */
static uint32_t due_take(struct fs_shared *sh, uint64_t t)
{
	uint32_t n = 0;

	while (!fl_heap_empty(&sh->due) && fl_heap_top(&sh->due).key <= t) {
		uint32_t hid = fl_heap_top(&sh->due).id;

		fl_heap_del(&sh->due, hid);
		touch_hid(sh, hid);
	}
	for (uint32_t i = 0; i < sh->n_touched; i++) {
		uint32_t hid = sh->touched[i];

		sh->queued[hid] = 0;
		sh->work[n++] = (struct fs_due){.seq = sh->hseq[hid], .hid = hid};
	}
	sh->n_touched = 0;
	qsort(sh->work, n, sizeof(*sh->work), due_cmp);
	return n;
}

/* A hid for r, joining now (its place in the order collectives act in). 0 or -ENOMEM. */
static int hid_take(struct fs_shared *sh, struct fr *r)
{
	uint32_t hid = 0;

	while (hid < sh->cap_h && sh->hfr[hid])
		hid++;
	if (hid == sh->cap_h) {
		uint32_t cap = sh->cap_h ? 2 * sh->cap_h : 64;
		struct fr **hfr = realloc(sh->hfr, cap * sizeof(*hfr));
		uint64_t *seq = hfr ? realloc(sh->hseq, cap * sizeof(*seq)) : NULL;
		uint8_t *q = seq ? realloc(sh->queued, cap) : NULL;
		uint32_t *t = q ? realloc(sh->touched, cap * sizeof(*t)) : NULL;
		struct fs_due *w = t ? realloc(sh->work, cap * sizeof(*w)) : NULL;

		if (hfr) /* (each kept before any return: realloc may have moved it) */
			sh->hfr = hfr;
		if (seq)
			sh->hseq = seq;
		if (q)
			sh->queued = q;
		if (t)
			sh->touched = t;
		if (w)
			sh->work = w;
		if (!w || fl_heap_grow(&sh->due, cap) < 0)
			return -ENOMEM;
		memset(sh->hfr + sh->cap_h, 0, (cap - sh->cap_h) * sizeof(*sh->hfr));
		memset(sh->queued + sh->cap_h, 0, cap - sh->cap_h);
		sh->cap_h = cap;
	}
	sh->hfr[hid] = r;
	sh->hseq[hid] = sh->next_seq++;
	fr_set_hid(r, hid);
	return 0;
}

/* r's next time into the due heap (out of it when it has none). */
static void due_update(struct fs_shared *sh, const struct fr *r)
{
	uint64_t t = fr_next_ns(r);

	if (t == FL_TIME_INF)
		fl_heap_del(&sh->due, fr_hid(r));
	else
		(void)fl_heap_set(&sh->due, fr_hid(r), t); /* (hid < the heap's ids: hid_take) */
}

/* r leaves: its hid is free again. */
static void hid_drop(struct fs_shared *sh, const struct fr *r)
{
	uint32_t hid = fr_hid(r);

	fl_heap_del(&sh->due, hid);
	sh->hfr[hid] = NULL;
}

/* fl_config.sent: a flow's last byte went; its collective acts after flow/'s call. */
static void slot_sent(void *ctx, uint64_t slot)
{
	struct fs_shared *sh = ctx;

	if (sh->own[slot]) {
		fr_sent(sh->own[slot], sh->ck[slot]);
		touch(sh, sh->own[slot]);
	}
}

/* ------------------------------------------------------------------ */
/* The shared fabric */

/* The run's timer slot for its flow fabric: one for the run, taken the first
 * time, since the engine cannot free a slot and the fabric comes and goes with
 * its collectives. The slot (> 0), or a negative errno. */
static int sh_slot(struct dp_nics *ns)
{
	if (ns->flow_slot == 0) {
		int s = dp_timer_slot_new(nics_eng(ns));

		if (s < 0)
			return s;
		ns->flow_slot = (uint32_t)s;
	}
	return (int)ns->flow_slot;
}

static struct fs_shared *sh_create(struct dp_nics *ns, uint32_t mtu)
{
	struct fs_shared *sh = calloc(1, sizeof(*sh));
	struct fl_config fc = {.mtu_bytes = mtu, .sent = slot_sent, .sent_ctx = sh,
			       .refill_ns = ns->flow_refill_ns};

	if (!sh)
		return NULL;
	*sh = (struct fs_shared){.f = ns->fab, .eng = nics_eng(ns), .home = &ns->flow_ctx, .mtu = mtu,
				   .fl_refill_ns = ns->flow_refill_ns};
	sh->fl = fl_create(&fc);
	sh->slot = sh_slot(ns);
	sh->chan_slot = calloc(sh->f->n_chans + 1, sizeof(*sh->chan_slot));
	if (fl_heap_init(&sh->due, 64) < 0) {
		free(sh->chan_slot);
		sh->chan_slot = NULL; /* (refused below) */
	}
	for (uint32_t i = 0; sh->fl && i < sh->f->n_chans; i++) {
		const struct dp_chan *ch = &sh->f->chans[i];
		uint64_t bps = ch->rate_bps < FL_BPS_MIN ? FL_BPS_MIN : ch->rate_bps;
		uint64_t nic = ch->from.kind == TOPO_NODE_HOST ? topo_host_nic_rate_bps(sh->f->topo, ch->from.index) : 0;
		uint32_t id;

		/* a host's NIC sends no faster than its GPU's PCIe allows (dp_nic.c's
		 * line rate), its frames at the link's rate (ne_sched.c) */
		if (fl_link_add(sh->fl, bps, ch->delay_ns, &id) < 0 ||
		    (nic >= FL_BPS_MIN && nic < bps && fl_link_pace(sh->fl, id, nic) < 0)) {
			fl_destroy(sh->fl);
			sh->fl = NULL;
		}
	}
	if (!sh->fl || sh->slot < 0 || !sh->chan_slot) {
		fl_destroy(sh->fl);
		free(sh->chan_slot);
		fl_heap_free(&sh->due);
		free(sh);
		return NULL;
	}
	*sh->home = sh;
	return sh;
}

/* Frees sh (no collective left on it) and clears the run's pointer to it. */
static void sh_destroy(struct fs_shared *sh)
{
	dp_timer_slot_cancel(sh->eng, (uint32_t)sh->slot);
	*sh->home = NULL;
	fl_destroy(sh->fl);
	free(sh->own);
	free(sh->ck);
	free(sh->free_ids);
	free(sh->act);
	free(sh->chan_slot);
	fl_heap_free(&sh->due);
	free(sh->hfr);
	free(sh->hseq);
	free(sh->queued);
	free(sh->touched);
	free(sh->work);
	free(sh);
}

static void audit_bytes(struct fs_shared *sh);

void dp_flowrun_audit(struct dp_nics *ns)
{
	struct fs_shared *sh = ns->flow_ctx;

	if (sh && sh->n_act) /* (a run stopped with collectives on it: else the last one's end checked) */
		audit_bytes(sh);
}

void dp_flowrun_free(struct dp_nics *ns)
{
	struct fs_shared *sh = ns->flow_ctx;

	if (sh == NULL)
		return;
	for (uint32_t i = 0; i < sh->n_act; i++)
		fr_destroy(sh->act[i].r);
	sh->n_act = 0;
	sh_destroy(sh);
}

/* The next instant anything on sh happens, FL_TIME_INF if nothing will. */
static uint64_t sh_next(const struct fs_shared *sh)
{
	uint64_t t = fl_next_event_ns(sh->fl);

	if (!fl_heap_empty(&sh->due) && fl_heap_top(&sh->due).key < t)
		t = fl_heap_top(&sh->due).key;
	return t;
}

/* ------------------------------------------------------------------ */
/* A size's end: its times, the link table, the audit, its counters line */

/* The replay's packets and payload into the link table (headers not
 * counted), and each channel's busy time: the time its rate takes to carry
 * that payload and each packet's FL_PKT_OVERHEAD wire bytes (the packet
 * engine counts a frame's wire time; the link table's util_pct reads it). */
static uint32_t count_chans(struct dp_fabric *f, const struct fr_out *o)
{
	uint32_t crossed = 0;

	for (uint32_t i = 0; i < o->n_chans; i++) {
		struct dp_chan *ch = &f->chans[o->chans[i]];
		uint64_t wire = o->chan_bytes[i] + o->chan_pkts[i] * FL_PKT_OVERHEAD;

		if (o->chan_pkts[i] == 0)
			continue;
		crossed++;
		/* (in the data's class, priority 3 by DSCP 26: grants and ACKs too) */
		ch->q[3].tx_bytes += o->chan_bytes[i];
		ch->q[3].tx_pkts += o->chan_pkts[i];
		ch->flow_pkts += o->chan_pkts[i]; /* (frames' audit: not frames; audit_bytes checks these) */
		if (ch->rate_bps)
			ch->busy_ns += (uint64_t)((double)wire * 8e9 / (double)ch->rate_bps + 0.5);
	}
	return crossed;
}

/*
 * The flow engine's byte conservation (dp_audit.h): per link, bytes sent =
 * bytes of delivered flows + bytes in flight. Checked when the last
 * collective on the fabric ends, and when a run stops with some still on it:
 * the check walks every link and flow slot, so at each size's end it took a
 * tenth of a 24K-GPU mix's time, and anything lost in between is still
 * caught, as the counters are cumulative. A stopped run's check is
 * dp_flowrun_audit's, before the report's verdict. The first mismatch is a line on
 * stderr, counted in the fabric's audit_flow_bad.
 */
static void audit_bytes(struct fs_shared *sh)
{
	struct dp_fabric *f = sh->f;
	struct fl_mismatch m;
	int e = fl_check_bytes(sh->fl, &m);

	if (e == 0)
		return;
	f->audit_flow_bad++;
	if (e < 0) {
		fprintf(stderr, "rocelab-dp: AUDIT: flow engine: the byte check ran out of memory\n");
		return;
	}
	char place[96] = "all links";
	if (m.link != FL_LINK_ALL && m.link < f->n_chans)
		snprintf(place, sizeof(place), "link %s>%s", topo_node_name(f->topo, f->chans[m.link].from),
			 topo_node_name(f->topo, f->chans[m.link].to));
	fprintf(stderr, "rocelab-dp: AUDIT: flow engine, %s: %" PRId64 " byte(s) unaccounted (sent %" PRIu64
		" = delivered %" PRIu64 " + in flight %" PRIu64 ")\n", place,
		(int64_t)(m.sent - m.delivered - m.in_flight), m.sent, m.delivered, m.in_flight);
}

/* The fabric's work counters that a size reports, as fs_member.fs0 keeps them. */
static void engine_counts(const struct fs_shared *sh, uint64_t out[FS_COUNTS])
{
	struct fl_stats fs;

	fl_stats_get(sh->fl, &fs);
	out[0] = fs.events;
	out[1] = fs.recomputes;
	out[2] = fs.flows_touched;
	out[3] = fs.links_touched;
	out[4] = fs.local_fills;
}

/* Member m's size ended: its results, then whoever added it is told. */
static void member_done(struct fs_shared *sh, struct fs_member *m, uint64_t now)
{
	struct fr_out o;
	uint64_t c[FS_COUNTS];
	char line[640] = "";
	int e;

	fr_result(m->r, &o);
	e = ne_coll_set_external_times(fr_run(m->r), o.start_ns, o.iter_ns, o.iters);
	o.st->links_crossed = count_chans(sh->f, &o);
	engine_counts(sh, c);
	o.st->events = c[0] - m->fs0[0];
	o.st->recomputes = c[1] - m->fs0[1];
	o.st->flows_touched = c[2] - m->fs0[2];
	o.st->links_touched = c[3] - m->fs0[3];
	o.st->local_fills = c[4] - m->fs0[4];
	o.st->refill_ns = sh->fl_refill_ns;
	o.st->iter_ns = o.iter_ns[0] - ne_coll_launch_ns(fr_run(m->r));
	if (e)
		snprintf(line, sizeof(line), "the collective took no times (%s)", strerror(-e));
	else
		dp_flowrun_format(o.st, line, sizeof(line));
	m->done(m->obj, e, line, now);
}

/* Member m failed with e: its flows still on the fabric go on without it. */
static void member_failed(struct fs_shared *sh, struct fs_member *m, int e, uint64_t now)
{
	char why[128] = "";

	for (uint32_t s = 0; s < sh->cap; s++)
		if (sh->own[s] == m->r)
			sh->own[s] = NULL;
	fr_why(e, why, sizeof(why));
	m->done(m->obj, e, why, now);
}

/* The members that ended or failed at now leave, in order. */
static void members_reap(struct fs_shared *sh, uint64_t now)
{
	uint32_t kept = 0, n = sh->n_act;

	for (uint32_t i = 0; i < sh->n_act; i++) {
		struct fs_member m = sh->act[i];
		int st = fr_state(m.r);

		if (st == 0) {
			sh->act[kept++] = m;
			continue;
		}
		hid_drop(sh, m.r);
		if (st > 0)
			member_done(sh, &m, now);
		else
			member_failed(sh, &m, st, now);
		fr_destroy(m.r);
	}
	sh->n_act = kept;
	if (kept == 0 && n > 0) /* (the last left: audit_bytes) */
		audit_bytes(sh);
}

/* Every member fails with e at now (nothing on the fabric can move them). */
static void members_fail(struct fs_shared *sh, int e, uint64_t now)
{
	for (uint32_t i = 0; i < sh->n_act; i++) {
		hid_drop(sh, sh->act[i].r);
		member_failed(sh, &sh->act[i], e, now);
		fr_destroy(sh->act[i].r);
	}
	sh->n_act = 0;
	for (uint32_t i = 0; i < sh->n_touched; i++)
		sh->queued[sh->touched[i]] = 0;
	sh->n_touched = 0;
}

/* ------------------------------------------------------------------ */
/* The clock */

/* Everything at instant t: flow/ to t, the flows it delivered to their
 * collectives, then each collective's own steps at t. */
static void sh_step(struct fs_shared *sh, uint64_t t)
{
	struct fl_done done[64];

	if (fl_run_until(sh->fl, t) < 0) { /* (t is never before its clock: sh_next) */
		members_fail(sh, -EDEADLK, t);
		return;
	}
	for (size_t n; (n = fl_done_pop(sh->fl, done, 64)) > 0;)
		for (size_t i = 0; i < n; i++) {
			uint32_t slot = (uint32_t)done[i].cookie;

			if (sh->own[slot]) {
				fr_delivered(sh->own[slot], sh->ck[slot]);
				touch(sh, sh->own[slot]);
			}
			sh->own[slot] = NULL;
			sh->free_ids[sh->n_free++] = slot;
		}
	/* (only the members with something due act: the others' fr_at would change
	 * nothing, and a 24K-GPU mix runs ~1,000 at once) */
	uint32_t n = due_take(sh, t);
	bool ended = false;

	for (uint32_t i = 0; i < n; i++)
		fr_at(sh->hfr[sh->work[i].hid], t);
	for (uint32_t i = 0; i < n; i++) {
		struct fr *r = sh->hfr[sh->work[i].hid];

		if (fr_state(r))
			ended = true;
		else
			due_update(sh, r);
	}
	if (ended) /* (only what acted can have ended) */
		members_reap(sh, t);
}

static void sh_due(void *obj, uint64_t arg, uint64_t now);

/* Runs every instant up to now; then the timer at the next one, or sh goes
 * when no collective is left on it. A collective nothing can move fails. */
static void sh_run(struct fs_shared *sh, uint64_t now)
{
	uint64_t t;

	while (sh->n_act && (t = sh_next(sh)) <= now)
		sh_step(sh, t);
	if (sh->n_act && sh_next(sh) == FL_TIME_INF)
		members_fail(sh, -EDEADLK, now);
	if (sh->n_act && dp_timer_slot_arm(sh->eng, (uint32_t)sh->slot, DP_COLL_LP, sh_next(sh), sh_due, sh, 0) < 0)
		members_fail(sh, -ENOMEM, now);
	if (!sh->n_act)
		sh_destroy(sh);
}

static void sh_due(void *obj, uint64_t arg, uint64_t now)
{
	(void)arg;
	sh_run(obj, now);
}

/* ------------------------------------------------------------------ */
/* The interface */

/* snprintf at buf + *len, as far as cap allows; *len counts what would have
 * been written (snprintf's rule), or becomes -1 on an error. */
static void __attribute__((format(printf, 4, 5))) fmt_at(int *len, char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	size_t at = (size_t)*len < cap ? (size_t)*len : cap;
	int k;

	if (*len < 0)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf ? buf + at : NULL, cap - at, fmt, ap);
	va_end(ap);
	*len = k < 0 ? -1 : *len + k;
}

int dp_flowrun_format(const struct dp_flowrun_stats *st, char *buf, size_t cap)
{
	double ev = st->events ? (double)st->events : 1.0;
	int n = 0;

	fmt_at(&n, buf, cap,
	       "# flow engine: flows %" PRIu64 " (data %" PRIu64 " for %" PRIu64 " parts), header-only timers %" PRIu64
	       ", events %" PRIu64
	       ", rate recomputations %" PRIu64 " (%.3f per event), flows recomputed per event %.2f"
	       ", links visited per event %.2f, links crossed %u, nvlink transfers %" PRIu64,
	       st->flows, st->data_flows, st->parts, st->timers, st->events, st->recomputes, (double)st->recomputes / ev,
	       (double)st->flows_touched / ev, (double)st->links_touched / ev, st->links_crossed,
	       st->nvlink_xfers);
	if (st->pxn_copies)
		fmt_at(&n, buf, cap, ", PXN copies %" PRIu64, st->pxn_copies);
	if (st->refill_ns)
		fmt_at(&n, buf, cap, ", refill every %" PRIu64 " ns (%" PRIu64 " local fills of the changed links' flows)",
		       st->refill_ns, st->local_fills);
	fmt_at(&n, buf, cap, "\n");
	return n;
}

/* Room for one more member; 0 or -ENOMEM. */
static int members_room(struct fs_shared *sh)
{
	if (sh->n_act < sh->cap_act)
		return 0;
	uint32_t cap = sh->cap_act ? 2 * sh->cap_act : 8;
	struct fs_member *a = realloc(sh->act, cap * sizeof(*a));

	if (!a)
		return -ENOMEM;
	sh->act = a;
	sh->cap_act = cap;
	return 0;
}

int dp_flowrun_nics(struct dp_nics *ns, struct ne_coll *run, const struct ne_coll_config *cfg,
		    struct ne_nic *const *nics, const uint32_t *host_of, uint64_t now_ns,
		    dp_flowrun_done_fn done, void *obj, char *why, size_t why_cap)
{
	struct fs_shared *sh = ns->flow_ctx;
	struct fr *r;
	int e = 0;

	if (sh) { /* what is due before this one joins (it may end the others, and the fabric) */
		sh_run(sh, now_ns);
		sh = ns->flow_ctx;
	}
	if (sh && sh->mtu != cfg->path_mtu) {
		snprintf(why, why_cap, "path MTU %u: the collectives running on the flow fabric take %u",
			 cfg->path_mtu, sh->mtu);
		return -EINVAL;
	}
	if (!sh && (sh = sh_create(ns, cfg->path_mtu)) == NULL) {
		snprintf(why, why_cap, "out of memory, or a link rate or delay the flow engine does not take");
		return -ENOMEM;
	}
	r = fr_create(sh, run, cfg, nics, host_of, now_ns, &e, why, why_cap);
	if (r && ((e = members_room(sh)) < 0 || (e = hid_take(sh, r)) < 0)) {
		fr_destroy(r);
		snprintf(why, why_cap, "out of memory");
	}
	if (!r || e) {
		if (!sh->n_act)
			sh_destroy(sh);
		return e;
	}
	sh->act[sh->n_act] = (struct fs_member){.r = r, .done = done, .obj = obj};
	engine_counts(sh, sh->act[sh->n_act++].fs0);
	due_update(sh, r);
	sh_run(sh, now_ns);
	return 0;
}
