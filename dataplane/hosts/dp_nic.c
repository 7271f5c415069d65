/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE /* qsort_r */
#include "dp_nic.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dp_pool.h"
#include "dp_units.h"
#include "rl_mem.h"

/* Bytes of the host's NIC queue the emulated NIC may fill before it waits: a
 * few frames, so a PFC pause stops it within a few frames, as a real RNIC. */
#define NIC_QUEUE_ROOM (4u * NE_MAX_FRAME)
#define NIC_STALL_RETRY_NS 100

struct dp_rdma {
	char spec[160];
	struct dp_nics *ns;
	uint32_t src, dst;          /* indices into ns->h */
	uint32_t qps, size, count, depth, mtu;
	uint8_t dscp;
	enum ne_sport_policy sport;
	uint64_t start_ns;

	uint8_t *sbuf, *dbuf;
	uint32_t skey, dkey;
	struct ne_cq *scq, *dcq;
	uint32_t *sqpn, *dqpn;
	uint32_t *outstanding;
	uint32_t next_qp;
	struct dp_rdma *next_src;   /* the source NIC's next transfer */
	uint64_t posted, completed, errors;
	uint64_t first_post_ns, done_ns;
	bool started, finished, data_ok;
};

/*
 * One lane's part of a collective split into lanes, frozen when it ended
 * (its thread may poll the lane again: after a failure, say), or taken at the
 * run's end; plain data: under MPI ranks it travels as it is (to every rank
 * at each size of a sweep, dp_nics_sizes_next; to rank 0 at the run's end).
 * Written by the lane's thread, read by the one that ends the collective
 * after the lanes' count says every lane wrote its own.
 */
struct coll_lane {
	struct ne_coll_lane_rec rec;
	int64_t wrong;              /* data=on: wrong elements of its ranks' outputs */
	uint8_t ended;              /* rec is the lane at its end (done or failed) */
	uint8_t taken;              /* rec holds the lane (ended, or taken at the run's end) */
};

struct dp_coll;

/*
 * A lane's proxy-thread wake-up (proxy costs on): its ranks' threads busy
 * until at, on the lane's engine (without lanes: lane 0, the NICs'
 * partition's).
 */
struct coll_proxy_wake {
	struct dp_coll *c;
	uint32_t lane;
	uint64_t at;                /* pending; 0: none */
};

struct dp_coll {
	struct dp_nics *ns;
	uint32_t id;               /* its place among the run's collectives, from 1 */
	char spec[256];
	struct ne_coll_config cfg;
	uint32_t *rank_nic;        /* [nranks] index into ns->h */
	struct ne_nic **nics;      /* [nranks] */
	uint64_t size_min, size_max, size;
	struct ne_coll *run;       /* the size in progress */
	bool run_ended;            /* not split: run's size ended (its lines out), kept until the next starts */
	bool finished, failed;
	uint32_t sizes_done;
	/* summed over the sizes run, for the totals line */
	struct ne_coll_stats sum;
	uint64_t proxy_busy_max_ns; /* per size, the busiest rank's proxy time */
	struct coll_proxy_wake *pwake; /* [ns->n_lanes] */
	struct ne_coll_hist lat, wait; /* per-message latency, summed over the sizes */
	FILE *series;               /* --coll-series: active-QP rows, CSV; NULL: off */
	const char *series_path;
	/* split into lanes (ns->n_lanes > 1): each size's run is created and
	 * split at its start (the first at set-up, the next ones as global
	 * events) and kept until the next one's; each lane counts itself once
	 * when its part ended (lane[l], its thread's), the last to count ends
	 * the size */
	bool split;
	uint64_t split_start_ns;    /* when its first size starts */
	uint32_t first_lane;        /* the lane whose start counts as the one engine's event; UINT32_MAX none */
	uint32_t *lane_of;          /* [nranks]: each rank's lane */
	uint32_t *lane_left;        /* [n_lanes]: sizes the lane has still to end (its thread's, and
				     * between windows; a lane without a rank ends each as it starts):
				     * while above 0 its partition is not idle */
	bool next_scheduled;        /* the next size's start is on the fabric engine (dp_nics_sizes_next) */
	struct coll_lane *lane;     /* [n_lanes] */
	struct ne_coll **lane_run;  /* [n_lanes]: ne_coll_lane(run, l), looked up once */
	uint32_t lanes_ended;       /* atomic */
};

static void coll_start_size(void *obj, uint64_t arg, uint64_t now);
static void coll_lanes_next_size(void *obj, uint64_t arg, uint64_t now);
static void coll_start_failed(struct dp_coll *c, const char *why);

static void service(struct dp_nic_host *nh, uint64_t now);
static void coll_poll(struct dp_coll *c, uint32_t lane, uint64_t now);

/*
 * After a NIC's event: its collective's poll; for a NIC in none (an --rdma
 * end), every collective's, which arms the NICs listed meanwhile. (Twice per
 * NIC event: inlined, as before lanes.)
 */
static inline __attribute__((always_inline)) void poll_colls(struct dp_nic_host *nh, uint64_t now)
{
	struct dp_nics *ns = nh->owner;

	if (nh->coll) {
		coll_poll(nh->coll, nh->lane, now);
		return;
	}
	for (uint32_t i = 0; i < ns->n_colls; i++)
		coll_poll(ns->colls[i], nh->lane, now);
}

/* Put nh on the list of NICs whose wake-up the next coll_poll looks at. */
static inline __attribute__((always_inline)) void wake_list_add(struct dp_nic_host *nh)
{
	struct dp_nics *ns = nh->owner;
	struct dp_nics_lane *ln = &ns->lane[nh->lane];

	if (nh->listed)
		return;
	nh->listed = true;
	ln->wake[ln->n_wake++] = (uint32_t)(nh - ns->h);
}

/*
 * The engine the NICs' shared work (collective, --rdma transfers) runs on
 * without lanes: their partition's, where every emulated host is (dp_part.h).
 */
static struct dp_engine *nics_eng(const struct dp_nics *ns)
{
	return ns->n ? ns->fab->host[ns->h[0].host].eng : ns->fab->eng;
}

/* ne_nic wake notification: the NIC's next event may have moved. */
static void on_nic_changed(void *ctx, struct ne_nic *nic)
{
	(void)nic;
	wake_list_add(ctx);
}

static void on_wake(void *obj, uint64_t at, uint64_t now)
{
	struct dp_nic_host *nh = obj;

	(void)at; /* (a superseded wake-up is moved in its slot, not left to fire) */
	nh->armed_at = 0;
	if (ne_nic_next_event_ns(nh->nic) > now)
		nh->idle_wakes++;
	wake_list_add(nh); /* not armed: a coll_poll during its service arms it */
	service(nh, now);
}

/*
 * Wake nh at t (not before now + 1 ns, so a busy NIC cannot spin at one
 * instant); UINT64_MAX: no wake-up. A pending earlier wake-up stays (whoever
 * changed the NIC may have made it due then), except with replace_next, at
 * the end of nh's own service: one pending at now + 1 then moves to t, or
 * goes. It was armed by an event of this same instant (a post that made the
 * NIC due) before a frame's arrival served the NIC, and would find nothing to
 * do. An older one stays: mostly a retransmit deadline that the next arm
 * moves earlier anyway; moving it at every service cost more heap work than
 * the wake-ups it saved (1.0% more instructions on the 1,024-rank ring).
 */
static void wake_at(struct dp_nic_host *nh, uint64_t t, uint64_t now, bool replace_next)
{
	struct dp_fabric *f = nh->owner->fab;
	struct dp_engine *e = f->host[nh->host].eng;
	bool stale = replace_next && nh->armed_at == now + 1;

	if (t != UINT64_MAX && t <= now)
		t = now + 1;
	if (nh->armed_at != 0 && (nh->armed_at == t || (nh->armed_at < t && !stale)))
		return;
	if (t == UINT64_MAX) {
		if (stale) {
			dp_timer_slot_cancel(e, nh->wake_slot);
			nh->armed_at = 0;
		}
		return;
	}
	if (nh->wake_slot == 0) {
		int slot = dp_timer_slot_new(e);
		if (slot < 0)
			return; /* (out of memory: as a failed timer, the NIC is not woken) */
		nh->wake_slot = (uint32_t)slot;
	}
	/* one pending wake-up per NIC: re-arming moves it */
	nh->armed_at = dp_timer_slot_arm(e, nh->wake_slot, dp_lp_host(f, nh->host), t, on_wake, nh,
					 t) == 0 ? t : 0;
}

/* Wake nh at t unless it is woken earlier (wake_at). */
static void arm(struct dp_nic_host *nh, uint64_t t, uint64_t now)
{
	wake_at(nh, t, now, false);
}

/* Post and reap the WRITEs of one transfer whose source NIC is running. */
static void rdma_progress(struct dp_rdma *r, uint64_t now)
{
	struct ne_nic *snic = r->ns->h[r->src].nic;
	struct ne_wc wc[32];
	int n;

	if (!r->started || r->finished)
		return;
	while ((n = ne_cq_poll(r->scq, wc, 32)) > 0) {
		for (int i = 0; i < n; i++) {
			r->completed++;
			r->outstanding[wc[i].wr_id]--;
			if (wc[i].status != NE_WC_SUCCESS)
				r->errors++;
		}
	}
	/* round-robin: each whole message on the next QP, waiting for that QP */
	while (r->posted < r->count && !r->errors && r->outstanding[r->next_qp] < r->depth) {
		struct ne_send_wr wr = {
			.wr_id = r->next_qp,
			.opcode = NE_WR_RDMA_WRITE,
			.send_flags = NE_SEND_SIGNALED,
			.local_addr = 0,
			.length = r->size,
			.lkey = r->skey,
			.remote_addr = 0,
			.rkey = r->dkey,
		};
		if (ne_post_send(snic, r->sqpn[r->next_qp], &wr, now) != 0) {
			r->errors++;
			break;
		}
		if (r->posted == 0)
			r->first_post_ns = now;
		r->posted++;
		r->outstanding[r->next_qp]++;
		r->next_qp = (r->next_qp + 1) % r->qps;
	}
	if (r->completed == r->count || (r->errors && r->completed == r->posted)) {
		r->finished = true;
		r->done_ns = now;
		r->data_ok = !r->errors && memcmp(r->sbuf, r->dbuf, r->size) == 0;
	}
}

/*
 * An empty mbuf with room for any frame a NIC sends, kept between calls (most
 * polls send nothing); NULL when the pool is empty or its mbufs are too small.
 */
static struct rte_mbuf *spare_mbuf(struct dp_nics *ns, struct dp_nics_lane *ln)
{
	if (ln->spare == NULL) {
		ln->spare = rte_pktmbuf_alloc(ns->fab->mp);
		if (ln->spare && rte_pktmbuf_tailroom(ln->spare) < NE_MAX_FRAME) {
			rte_pktmbuf_free(ln->spare);
			ln->spare = NULL;
		}
		if (ln->spare) /* (the NIC picks a QP before it writes: time for the lines to come) */
			dp_pool_prefetch_frame(ln->spare);
	}
	return ln->spare;
}

static void service(struct dp_nic_host *nh, uint64_t now)
{
	struct dp_nics *ns = nh->owner;
	struct dp_fabric *f = ns->fab;
	struct dp_host *h = &f->host[nh->host];
	uint8_t buf[NE_MAX_FRAME];
	size_t len;

	for (struct dp_rdma *r = nh->rdma_src; r; r = r->next_src)
		rdma_progress(r, now);
	/* The collective's poll arms the NICs it gave work, but not this one: it
	 * is due now, so it would be armed at now + 1, and that wake-up, earlier
	 * than any this service sets, would fire for nothing after every frame
	 * (227,200 of 394,300 NIC wake-ups of a 128-rank ring at 2 MiB). The
	 * service arms it below. */
	nh->arm_deferred = true;
	poll_colls(nh, now);
	nh->arm_deferred = false;
	for (;;) {
		if (dp_chan_queued_bytes(h->tx) >= NIC_QUEUE_ROOM) {
			/* paused or slower than the NIC: look again after one frame time */
			nh->tx_waits++;
			nh->waiting = true;
			wake_list_add(nh);
			arm(nh, now + dp_ser_ns(NE_MAX_FRAME, h->tx->rate_bps), now);
			return;
		}
		struct rte_mbuf *m = spare_mbuf(ns, &ns->lane[nh->lane]);
		if (m == NULL) {
			/* no mbuf: the frame is lost like a NIC DMA failure; go-back-N recovers it */
			if (ne_nic_poll_tx(nh->nic, now, buf, sizeof(buf), &len) != 1)
				break;
			nh->no_mbuf++;
			continue;
		}
		/* the NIC writes the frame into the mbuf (no copy of 4 KiB frames) */
		if (ne_nic_poll_tx(nh->nic, now, rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m),
				   &len) != 1)
			break; /* (m stays the spare) */
		ns->lane[nh->lane].spare = NULL;
		rte_pktmbuf_append(m, (uint16_t)len);
		nh->tx_frames++;
		dp_fabric_host_send(f, nh->host, m, nh->zero_payload, now);
	}
	for (struct dp_rdma *r = nh->rdma_src; r; r = r->next_src)
		rdma_progress(r, now);
	poll_colls(nh, now);
	uint64_t next = ne_nic_next_event_ns(nh->nic);
	if (next <= now) {
		/* The NIC says it is due but sent nothing: wake it after a short while
		 * instead of every nanosecond (counted: it points at a NIC timer that
		 * poll_tx does not serve). */
		nh->stalls++;
		next = now + NIC_STALL_RETRY_NS;
		nh->waiting = true;
		wake_list_add(nh);
	} else {
		nh->waiting = false;
	}
	wake_at(nh, next, now, true);
}

/* The reasons a NIC refused frames, "  unknown_qpn=3 ..." (nothing when none). */
static void refused_why(const struct dp_nic_host *nh, char *buf, size_t len)
{
	static const char *const name[DP_NIC_RX_SLOTS] = {
		"segmented", "malformed", "not_roce", "wrong_dst", "bad_icrc", "unknown_qpn",
		"bad_state", "bad_opcode", "psn_drop", "protocol", "rnr", "stale_resp",
		"link_down", "inval", "cnp",
	};
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < DP_NIC_RX_SLOTS && o < len; i++)
		if (nh->rx_refused[i])
			o += (size_t)snprintf(buf + o, len - o, "%s%s=%" PRIu64, o ? " " : "  ", name[i],
					      nh->rx_refused[i]);
}

void dp_nics_rx(struct dp_nics *ns, struct dp_host *h, struct rte_mbuf *m, uint64_t now)
{
	struct dp_nic_host *nh = &ns->h[ns->by_host[h->idx]];

	if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) < 0) {
		nh->rx_rejected++;
		nh->rx_refused[0]++;
	} else {
		nh->rx_frames++;
		dp_frame_write_headers(ns->fab, m); /* (owed by the switches it crossed) */
		if (!nh->zero_payload)
			dp_frame_write_zeros(m); /* (a NIC that reads the payload and checks its ICRC) */
		int st = ne_nic_rx(nh->nic, rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), now);
		if (st != NE_RX_OK) {
			nh->rx_rejected++;
			nh->rx_refused[st < 0 && st >= NE_RX_CNP ? -st : 0]++;
		}
	}
	rte_pktmbuf_free(m);
	service(nh, now);
}

static int nic_opts_kv(void *ctx, const char *k, const char *v)
{
	struct dp_nic_opts *o = ctx;
	uint64_t n;

	if (strcmp(k, "qpc") == 0 && dp_parse_u64(v, &n) == 0 && n <= 1u << 20)
		o->qpc_entries = (uint32_t)n;
	else if (strcmp(k, "miss") == 0 && dp_parse_time(v, &o->qpc_miss_ns) == 0)
		;
	else if (strcmp(k, "quantum") == 0 && dp_parse_bytes(v, &n) == 0 && n <= 1u << 30)
		o->tx_quantum = (uint32_t)n;
	else if (strcmp(k, "msgrate") == 0 && dp_parse_u64(v, &n) == 0 && n <= 1000000000000ull)
		o->msg_rate = n;
	else if (strcmp(k, "hold") == 0 && (strcmp(v, "on") == 0 || strcmp(v, "off") == 0))
		o->qpc_hold = strcmp(v, "on") == 0;
	else
		return -1;
	return 0;
}

int dp_nic_opts_parse(struct dp_nic_opts *o, const char *spec)
{
	char buf[128];

	const char *bad;

	if (strlen(spec) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", spec);
	return dp_kv_each(buf, nic_opts_kv, o, &bad);
}

int dp_nics_create(struct dp_nics *ns, struct dp_fabric *f, const struct dp_nic_opts *o,
		   char *err, size_t errlen)
{
	uint32_t max_qps = o->max_qps;
	uint64_t seed = o->seed;

	const struct topo *t = f->topo;

	memset(ns, 0, sizeof(*ns));
	ns->fab = f;
	ns->by_host = malloc((t->n_hosts + 1) * sizeof(*ns->by_host));
	ns->h = calloc(t->n_hosts + 1, sizeof(*ns->h));
	ns->n_lanes = o->lanes > 1 ? o->lanes : 1;
	ns->lane = rl_zalloc_lines(ns->n_lanes, sizeof(*ns->lane));
	bool nomem = !ns->by_host || !ns->h || !ns->lane;
	for (uint32_t l = 0; !nomem && l < ns->n_lanes; l++)
		nomem = (ns->lane[l].wake = calloc(t->n_hosts + 1, sizeof(*ns->lane[l].wake))) == NULL;
	if (nomem) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < t->n_hosts; i++) {
		const struct topo_host *hc = &t->hosts[i];
		struct ne_nic_config cfg;

		ns->by_host[i] = -1;
		if (hc->attach != TOPO_ATTACH_EMULATED)
			continue;
		ne_nic_config_default(&cfg);
		memcpy(cfg.mac, hc->mac, 6);
		cfg.ipv4 = hc->ipv4;
		cfg.line_rate_bps = t->links[hc->link].rate_bps;
		cfg.sport_seed = i + 1;
		/* Seed 1 numbers QPs from 0x11 as rxe does; other seeds start each NIC
		 * elsewhere, as QPN assignment differs from job to job on a real
		 * cluster (QPNs feed E-ECMP and rxe's source ports). */
		if (seed > 1) {
			uint64_t z = seed * 0x9e3779b97f4a7c15ull + i;
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
			cfg.first_qpn = 0x11 + (uint32_t)((z ^ (z >> 31)) % 0xF0000);
		}
		if (max_qps > cfg.max_qps) {
			cfg.max_qps = max_qps;
			cfg.max_mrs = max_qps;
		}
		cfg.qpc_entries = o->qpc_entries;
		cfg.qpc_miss_ns = o->qpc_miss_ns;
		cfg.qpc_hold = o->qpc_hold;
		cfg.tx_quantum = o->tx_quantum;
		cfg.msg_rate = o->msg_rate;
		struct dp_nic_host *nh = &ns->h[ns->n];
		nh->nic = ne_nic_create(&cfg);
		if (nh->nic == NULL) {
			snprintf(err, errlen, "host %s: cannot create its emulated NIC", hc->name);
			return -1;
		}
		nh->owner = ns;
		nh->host = i;
		nh->coll_rank = -1;
		nh->lane = ns->n_lanes > 1 ? o->lane_of_host[i] : 0;
		if (ns->n_lanes > 1 && ns->lane[nh->lane].eng == NULL) /* (its start runs in each) */
			dp_engine_copy_lp(f->host[i].eng, DP_LP_NICS);
		ns->lane[nh->lane].eng = f->host[i].eng;
		ne_nic_set_wake_notify(nh->nic, on_nic_changed, nh);
		ns->by_host[i] = (int32_t)ns->n++;
		wake_list_add(nh); /* not armed yet */
	}
	return 0;
}

static int rdma_kv(void *ctx, const char *k, const char *v)
{
	struct dp_rdma *r = ctx;
	uint64_t n;

	if (strcmp(k, "sport") == 0) {
		if (strcmp(v, "rxe") == 0 || strcmp(v, "mlx5") == 0)
			r->sport = NE_SPORT_RXE; /* mlx5 computes it as rxe does */
		else if (strcmp(v, "fixed") == 0)
			r->sport = NE_SPORT_FIXED;
		else if (strcmp(v, "hash") == 0)
			r->sport = NE_SPORT_HASH;
		else
			return -1;
		return 0;
	}
	if (strcmp(k, "start") == 0)
		return dp_parse_time(v, &r->start_ns);
	if (strcmp(k, "size") == 0) { /* bytes, with K/M/G as --coll's sizes */
		if (dp_parse_bytes(v, &n) < 0 || n < 1 || n > (256u << 20))
			return -1;
		r->size = (uint32_t)n;
		return 0;
	}
	if (dp_parse_u64(v, &n) < 0)
		return -1;
	if (strcmp(k, "qps") == 0 && n >= 1 && n <= 64)
		r->qps = (uint32_t)n;
	else if (strcmp(k, "count") == 0 && n >= 1 && n <= 100000000)
		r->count = (uint32_t)n;
	else if (strcmp(k, "depth") == 0 && n >= 1 && n <= 128)
		r->depth = (uint32_t)n;
	else if (strcmp(k, "mtu") == 0 && (n == 256 || n == 512 || n == 1024 || n == 2048 || n == 4096))
		r->mtu = (uint32_t)n;
	else if (strcmp(k, "dscp") == 0 && n < 64)
		r->dscp = (uint8_t)n;
	else
		return -1;
	return 0;
}

static int parse_rdma(struct dp_nics *ns, struct dp_rdma *r, const char *spec, char *err,
		      size_t errlen)
{
	const struct topo *t = ns->fab->topo;
	char buf[160], *opts, *gt;

	snprintf(r->spec, sizeof(r->spec), "%s", spec);
	snprintf(buf, sizeof(buf), "%s", spec);
	r->qps = 1, r->size = 65536, r->count = 64, r->depth = 4, r->mtu = 4096, r->dscp = 26;
	opts = strchr(buf, ':');
	if (opts)
		*opts++ = '\0';
	gt = strchr(buf, '>');
	if (gt == NULL) {
		snprintf(err, errlen, "--rdma '%s': want SRC>DST[:key=value,...]", spec);
		return -1;
	}
	*gt = '\0';
	int s = topo_host_by_name(t, buf), d = topo_host_by_name(t, gt + 1);
	if (s < 0 || d < 0 || s == d || !dp_nics_owns(ns, (uint32_t)s) || !dp_nics_owns(ns, (uint32_t)d)) {
		snprintf(err, errlen, "--rdma '%s': both ends must be different emulated hosts", spec);
		return -1;
	}
	r->src = (uint32_t)ns->by_host[s];
	r->dst = (uint32_t)ns->by_host[d];
	const char *bad;
	if (dp_kv_each(opts, rdma_kv, r, &bad) < 0) {
		snprintf(err, errlen, "--rdma '%s': bad '%s'", spec, bad);
		return -1;
	}
	return 0;
}

/* Bring a QP pair to RTS, each end pointing at the other through its gateway MAC. */
/*
 * The RC transport's timeout (IB's exponent: 4.096 us x 2^t). Virtual clock:
 * 10, 4.2 ms, far above fabric RTTs, as on real clusters. Live clock: 14, 67
 * ms: the fabric's threads share the machine's cores and can be off the CPU
 * for milliseconds; a timeout that fires on such a delay spends the 7 retries
 * on frames that are only late, and a live collective on a loaded machine
 * failed with "transport retry counter exceeded" (seen under valgrind every
 * time, and beside a busy loop about one run in five).
 */
static uint8_t rc_timeout(const struct dp_nics *ns)
{
	return ns->fab->eng->mode == DP_CLOCK_LIVE ? 14 : 10;
}

static int connect_qp(struct dp_rdma *r, struct ne_nic *nic, const struct topo_host *me,
		      const struct topo_host *peer, uint32_t qpn, uint32_t peer_qpn, uint8_t timeout)
{
	struct ne_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.state = NE_QPS_INIT;
	if (ne_qp_modify(nic, qpn, &a, NE_QP_STATE) != 0)
		return -1;
	a.state = NE_QPS_RTR;
	a.dest_qpn = peer_qpn;
	a.rq_psn = 0;
	a.path_mtu = r->mtu;
	a.dest_ipv4 = peer->ipv4;
	memcpy(a.dest_mac, me->gw_mac, 6);
	a.dscp = r->dscp;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	if (ne_qp_modify(nic, qpn, &a,
			 NE_QP_STATE | NE_QP_AV | NE_QP_PATH_MTU | NE_QP_DEST_QPN | NE_QP_RQ_PSN |
				 NE_QP_MAX_DEST_RD_ATOMIC | NE_QP_MIN_RNR_TIMER) != 0)
		return -1;
	a.state = NE_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ne_qp_modify(nic, qpn, &a,
			    NE_QP_STATE | NE_QP_SQ_PSN | NE_QP_TIMEOUT | NE_QP_RETRY_CNT |
				    NE_QP_RNR_RETRY | NE_QP_MAX_QP_RD_ATOMIC);
}

static void on_rdma_start(void *obj, uint64_t arg, uint64_t now)
{
	struct dp_rdma *r = obj;

	(void)arg;
	r->started = true;
	service(&r->ns->h[r->src], now);
}

int dp_nics_add_rdma(struct dp_nics *ns, const char *spec, uint64_t start_offset_ns, char *err,
		     size_t errlen)
{
	struct dp_rdma *r = calloc(1, sizeof(*r));
	struct dp_rdma **grown = realloc(ns->rdma, (ns->n_rdma + 1) * sizeof(*grown));

	if (r == NULL || grown == NULL) {
		free(r);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ns->rdma = grown;
	ns->rdma[ns->n_rdma++] = r;
	r->ns = ns;
	if (parse_rdma(ns, r, spec, err, errlen) < 0)
		return -1;
	/* the source NIC's service progresses its transfers in flag order */
	struct dp_nic_host *src = &ns->h[r->src];
	if (src->rdma_src_tail)
		src->rdma_src_tail->next_src = r;
	else
		src->rdma_src = r;
	src->rdma_src_tail = r;
	src->rdma_end = ns->h[r->dst].rdma_end = true;

	const struct topo *t = ns->fab->topo;
	struct dp_nic_host *S = &ns->h[r->src], *D = &ns->h[r->dst];
	const struct topo_host *sh = &t->hosts[S->host], *dh = &t->hosts[D->host];
	r->sbuf = malloc(r->size);
	r->dbuf = calloc(1, r->size);
	r->sqpn = calloc(r->qps, sizeof(*r->sqpn));
	r->dqpn = calloc(r->qps, sizeof(*r->dqpn));
	r->outstanding = calloc(r->qps, sizeof(*r->outstanding));
	if (!r->sbuf || !r->dbuf || !r->sqpn || !r->dqpn || !r->outstanding) {
		snprintf(err, errlen, "--rdma '%s': out of memory", spec);
		return -1;
	}
	for (uint32_t i = 0; i < r->size; i++)
		r->sbuf[i] = (uint8_t)(i * 131 + 7 + ns->n_rdma);
	struct ne_mr_attr sm = {.addr = r->sbuf, .len = r->size, .access = NE_ACCESS_LOCAL_WRITE};
	struct ne_mr_attr dm = {.addr = r->dbuf, .len = r->size,
				.access = NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE};
	uint32_t cq_depth = r->qps * r->depth + 16;
	r->scq = ne_cq_create(S->nic, cq_depth);
	r->dcq = ne_cq_create(D->nic, 16);
	if (ne_mr_reg(S->nic, &sm, &r->skey) != 0 || ne_mr_reg(D->nic, &dm, &r->dkey) != 0 ||
	    r->scq == NULL || r->dcq == NULL ||
	    ne_nic_set_sport_policy(S->nic, r->sport, 0xc000, S->host + 1) != 0 ||
	    ne_nic_set_sport_policy(D->nic, r->sport, 0xc000, D->host + 1) != 0) {
		snprintf(err, errlen, "--rdma '%s': NIC resources exhausted", spec);
		return -1;
	}
	for (uint32_t q = 0; q < r->qps; q++) {
		struct ne_qp_init_attr sa = {.send_cq = r->scq, .recv_cq = r->scq,
					     .max_send_wr = r->depth + 1, .max_recv_wr = 1};
		struct ne_qp_init_attr da = {.send_cq = r->dcq, .recv_cq = r->dcq,
					     .max_send_wr = 1, .max_recv_wr = 1};
		if (ne_qp_create(S->nic, &sa, &r->sqpn[q]) != 0 ||
		    ne_qp_create(D->nic, &da, &r->dqpn[q]) != 0) {
			snprintf(err, errlen, "--rdma '%s': cannot create QP %u", spec, q);
			return -1;
		}
	}
	for (uint32_t q = 0; q < r->qps; q++)
		if (connect_qp(r, S->nic, sh, dh, r->sqpn[q], r->dqpn[q], rc_timeout(ns)) != 0 ||
		    connect_qp(r, D->nic, dh, sh, r->dqpn[q], r->sqpn[q], rc_timeout(ns)) != 0) {
			snprintf(err, errlen, "--rdma '%s': cannot connect QP %u", spec, q);
			return -1;
		}
	r->start_ns += start_offset_ns;
	return dp_timer_add_lp(nics_eng(ns), DP_LP_NICS, r->start_ns, on_rdma_start, r, 0);
}

static void coll_start_size(void *obj, uint64_t arg, uint64_t now);

/* A NIC's place in the wake list's order: by collective, then rank; NICs in none first. */
static int64_t wake_key(const struct dp_nic_host *nh)
{
	return nh->coll ? ((int64_t)nh->coll->id << 32) + nh->coll_rank : -1;
}

static int cmp_rank(const void *a, const void *b, void *ctx)
{
	const struct dp_nics *ns = ctx;
	int64_t x = wake_key(&ns->h[*(const uint32_t *)a]), y = wake_key(&ns->h[*(const uint32_t *)b]);

	return (x > y) - (x < y);
}

/*
 * The wake list in rank order (collective by collective). It holds a NIC or two between most polls:
 * those are sorted in place (stable, as qsort_r's merge sort, so the order
 * is the same), longer lists by qsort_r.
 */
static void sort_wake(struct dp_nics *ns, struct dp_nics_lane *ln)
{
	uint32_t *w = ln->wake;

	if (ln->n_wake > 16) {
		qsort_r(w, ln->n_wake, sizeof(*w), cmp_rank, ns);
		return;
	}
	for (uint32_t i = 1; i < ln->n_wake; i++) {
		uint32_t x = w[i], j = i;
		for (; j > 0 && cmp_rank(&w[j - 1], &x, ns) > 0; j--)
			w[j] = w[j - 1];
		w[j] = x;
	}
}

/*
 * Arm the collectives' NICs that may need it, in rank order. Re-arming any
 * other rank would change nothing: its state has not changed since it was
 * armed at its next event (arm() keeps an earlier wake-up), so only the
 * listed ones are looked at: changed, unarmed or waiting. Waiting ones stay
 * listed until their service.
 */
static void coll_arm_listed(struct dp_nics *ns, uint32_t lane, uint64_t now)
{
	struct dp_nics_lane *ln = &ns->lane[lane];
	uint32_t kept = 0;

	sort_wake(ns, ln);
	for (uint32_t i = 0; i < ln->n_wake; i++) {
		struct dp_nic_host *nh = &ns->h[ln->wake[i]];

		if (nh->coll_rank >= 0 && !nh->arm_deferred)
			arm(nh, ne_nic_next_event_ns(nh->nic), now);
		if (nh->waiting)
			ln->wake[kept++] = ln->wake[i];
		else
			nh->listed = false;
	}
	ln->n_wake = kept;
}

/*
 * text (lines, each ending in '\n') into the run's output; when the run has
 * several collectives, each line tagged with c's "[cK] " ("# [cK]" before
 * the rest of a '#' line).
 */
static void coll_put(const struct dp_coll *c, const char *text)
{
	FILE *out = c->ns->coll_out;

	if (!c->ns->coll_tags) {
		fputs(text, out);
		return;
	}
	for (const char *l = text; *l != '\0';) {
		const char *nl = strchr(l, '\n');
		int len = nl ? (int)(nl - l) + 1 : (int)strlen(l);
		if (l[0] == '#')
			fprintf(out, "# [c%u]%.*s", c->id, len - 1, l + 1);
		else
			fprintf(out, "[c%u] %.*s", c->id, len, l);
		l += len;
	}
}

__attribute__((format(printf, 2, 3))) static void coll_printf(const struct dp_coll *c,
								const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	coll_put(c, text);
}

/*
 * Per-message latency of the size that just finished: its histograms, read
 * once, added to the run's; with print, also its "# latency:" line. A copy
 * that cannot be allocated fails the run (totals or a line would be missing).
 */
static void coll_take_latency(struct dp_coll *c, bool print)
{
	struct ne_coll_hist *lat = malloc(sizeof(*lat)), *wait = malloc(sizeof(*wait));
	char line[320];

	if (lat && wait && ne_coll_get_latency(c->run, lat, wait) == 0) {
		if (print) {
			ne_coll_format_latency(lat, wait, line, sizeof(line));
			coll_put(c, line);
		}
		ne_coll_hist_merge(&c->lat, lat);
		ne_coll_hist_merge(&c->wait, wait);
	} else {
		fprintf(stderr, "rocelab-dp: per-message latency: out of memory\n");
		c->failed = true;
	}
	free(lat);
	free(wait);
}

/* Add the finishing size's collective counters to c->sum (with print_latency,
 * print its "# latency:" line), then destroy the run unless keep (a size
 * before the last: its run goes when the next one starts, coll_start_size,
 * at the same moment with lanes or without). */
static void coll_end_run(struct dp_coll *c, bool print_latency, bool keep)
{
	struct ne_coll_stats st;
	struct ne_coll_proxy_stats ps;
	uint64_t busiest = 0;

	ne_coll_get_stats(c->run, &st);
	ne_coll_stats_add(&c->sum, &st);
	coll_take_latency(c, print_latency);
	/* (split: each lane's busiest, frozen in its record; a failed lane's thread may
	 * still poll its ranks) */
	for (uint32_t r = 0; !c->split && r < c->cfg.nranks; r++)
		if (ne_coll_rank_proxy(c->run, r, &ps) == 0 && ps.busy_ns > busiest)
			busiest = ps.busy_ns;
	for (uint32_t l = 0; c->split && l < c->ns->n_lanes; l++)
		if (c->lane[l].rec.proxy_busy_max_ns > busiest)
			busiest = c->lane[l].rec.proxy_busy_max_ns;
	c->proxy_busy_max_ns += busiest;
	if (keep || c->split)
		return; /* (split: the lanes' threads may still poll it: destroyed as the next size
			 * starts, coll_lanes_next_size, the last one with c) */
	ne_coll_destroy(c->run);
	c->run = NULL;
}

/* The engine collective c's lane runs on: the lane's partition's when split, else the NICs'. */
static struct dp_engine *coll_lane_eng(const struct dp_coll *c, uint32_t lane)
{
	return c->split ? c->ns->lane[lane].eng : nics_eng(c->ns);
}

/*
 * A lane's proxy wake-up. It does not count as an event: with lanes each
 * lane has its own, where one engine has one for all (a lane's wake-up at
 * the same instant as another's, or superseded by one, is not one engine's
 * event), and the run's events must not depend on the partitioning.
 */
static void coll_proxy_due(void *obj, uint64_t at, uint64_t now)
{
	struct coll_proxy_wake *pw = obj;
	struct dp_coll *c = pw->c;

	dp_engine_uncount(coll_lane_eng(c, pw->lane));
	if (pw->at == at)
		pw->at = 0;
	coll_poll(c, pw->lane, now);
}

/*
 * With proxy costs a lane has work of its own in the future (a proxy thread
 * busy until then); wake it at that time unless an earlier wake-up is
 * pending. A superseded wake-up still fires and polls for nothing. With one
 * collective it is keyed (DP_LP_NICS, 0): first among its instant's events
 * on any engine, so that the ranks whose threads free then are run at the
 * same place in the order with lanes and without (a NIC event of that
 * instant, keyed by its host, comes after, and finds them run).
 */
static void coll_arm_proxy(struct dp_coll *c, uint32_t lane, const struct ne_coll *run, uint64_t now)
{
	struct coll_proxy_wake *pw = &c->pwake[lane];
	struct dp_nics *ns = c->ns;
	uint64_t at = ne_coll_next_event_ns(run);

	if (at == UINT64_MAX || (pw->at && pw->at <= at && pw->at > now))
		return;
	at = at > now ? at : now + 1;
	struct dp_engine *e = coll_lane_eng(c, lane);
	int rc = ns->n_colls == 1 ? dp_timer_add_keyed(e, DP_LP_NICS, DP_LP_NICS, at, coll_proxy_due, pw, at)
				  : dp_timer_add_lp(e, DP_LP_NICS, at, coll_proxy_due, pw, at);
	if (rc == 0)
		pw->at = at;
}

/* One row of the active-QP series (ne_coll_set_series) as a line of --coll-series. */
static void coll_series_row(void *ctx, const struct ne_coll_series_row *row)
{
	struct dp_coll *c = ctx;

	fprintf(c->series, "%" PRIu64 ",%" PRIu64 ".%03u,%" PRIu64 ".%03u,%" PRIu64 ",%.6f,%u,%u\n",
		c->size, row->t_ns / 1000, (unsigned)(row->t_ns % 1000), row->dt_ns / 1000,
		(unsigned)(row->dt_ns % 1000), row->qp_ns, row->mean, row->max, row->nics);
}

/* The sweep ended: the series file must be complete, or the run fails. */
static void coll_series_flush(struct dp_coll *c)
{
	if (c->series && (fflush(c->series) != 0 || ferror(c->series))) {
		fprintf(stderr, "rocelab-dp: --coll-series %s: write failed\n", c->series_path);
		c->failed = true;
	}
}

/* A work completion of c's run failed: say so and stop the collective. */
static void coll_failed(struct dp_coll *c)
{
	struct ne_coll_stats st;

	ne_coll_get_stats(c->run, &st);
	coll_printf(c, "# %s: size %" PRIu64 ": a work completion failed (%s); stopping\n",
		    c->spec, c->size, ne_wc_status_str((enum ne_wc_status)st.first_error_status));
	c->failed = c->finished = true;
	coll_end_run(c, false, false);
}

/* A split run's data check: the sum of its lanes' (each checked its ranks as it ended). */
static long lanes_wrong(const struct dp_coll *c)
{
	long wrong = 0;

	for (uint32_t l = 0; l < c->ns->n_lanes; l++)
		wrong += c->lane[l].wrong;
	return wrong;
}

/*
 * The size after c's, DP_COLL_SIZE_GAP_NS after it ended (end_ns). Keyed
 * (DP_LP_NICS, 0) whoever schedules it when the run has one collective, so
 * that it takes the same place among that instant's events on one engine
 * as among the partitions'. Split: a global event (coll_lanes_next_size),
 * added with every partition stopped (dp_nics_sizes_next) once every lane
 * ended the size; the gap is longer than a window (rocelab-dp splits a
 * sweep only then), so the event is past every partition's window.
 * 0, or -ENOMEM.
 */
static int coll_next_size(struct dp_coll *c, uint64_t end_ns)
{
	struct dp_nics *ns = c->ns;
	uint64_t at = end_ns + DP_COLL_SIZE_GAP_NS;

	if (c->split)
		return dp_timer_add_keyed(ns->fab->eng, DP_LP_NICS, DP_LP_NICS, at, coll_lanes_next_size, c, 0);
	if (ns->n_colls == 1)
		return dp_timer_add_keyed(nics_eng(ns), DP_LP_NICS, DP_LP_NICS, at, coll_start_size, c, 0);
	return dp_timer_add_lp(nics_eng(ns), DP_LP_NICS, at, coll_start_size, c, 0);
}

/* c's run finished its size at now: its lines; then the next size, or the end. */
static void coll_size_done(struct dp_coll *c, uint64_t now)
{
	struct dp_nics *ns = c->ns;
	struct ne_coll_result res;
	char line[256];
	bool latency = false; /* (the latency line follows the result's lines) */
	bool last = c->size >= c->size_max;
	/* (split: now is the thread's that counted last; the size ended with the latest lane) */
	uint64_t end = c->split ? ne_coll_done_at(c->run) : now;

	if (ne_coll_get_result(c->run, &res) == 0) {
		res.wrong = !c->cfg.data ? -1 : c->split ? lanes_wrong(c) : ne_coll_check(c->run);
		ne_coll_format_result(&res, line, sizeof(line));
		coll_put(c, line);
		ne_coll_format_active(&res, line, sizeof(line));
		coll_put(c, line);
		latency = true;
		if (res.wrong > 0)
			c->failed = true;
	}
	coll_end_run(c, latency, !last);
	c->run_ended = !last && !c->split; /* (a poll meanwhile must not end it again) */
	fflush(ns->coll_out);
	c->sizes_done++;
	if (last) {
		c->finished = true;
		coll_series_flush(c);
		return;
	}
	c->size *= 2;
	if (c->split)
		return; /* (its start: dp_nics_sizes_next, every partition stopped) */
	if (coll_next_size(c, end) < 0)
		coll_start_failed(c, "no timer left");
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
static void coll_lane_check(struct dp_coll *c, uint32_t lane, const struct ne_coll *run,
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

/* Drive collective c's lane at now: its CQs, posts and CTS; wake the NICs it gave work. */
static void coll_poll(struct dp_coll *c, uint32_t lane, uint64_t now)
{
	struct dp_nics *ns = c->ns;
	/* (not split: one lane, 0, and none between sizes; split and no run: it
	 * could not start, or the next size is being made) */
	struct ne_coll *run = !c->split ? (c->run_ended ? NULL : c->run)
					: c->lane_run ? c->lane_run[lane] : NULL;

	if (run == NULL)
		return;
	/* (called twice per NIC event: most find nothing to do but arm the NICs
	 * listed; a quiet run's poll, proxy wake-up and end check are no-ops, and
	 * were a sixth of the NIC path's instructions at 128 ranks, callgrind) */
	if (ne_coll_quiet(run)) {
		if (ns->lane[lane].n_wake)
			coll_arm_listed(ns, lane, now);
		return;
	}
	int rc = ne_coll_poll(run, now);
	if (c->split) {
		coll_arm_listed(ns, lane, now);
		if (rc >= 0 && !ne_coll_done(run))
			coll_arm_proxy(c, lane, run, now);
		coll_lane_check(c, lane, run, rc < 0, now);
		return;
	}
	if (rc < 0) {
		coll_failed(c);
		return;
	}
	coll_arm_listed(ns, lane, now);
	if (!ne_coll_done(run)) {
		coll_arm_proxy(c, lane, run, now);
		return;
	}
	coll_size_done(c, now);
}

/*
 * The run of c's current size: its NICs' payload model, the collective, its
 * series. 0, or a negative errno (c->run may be set: coll_cannot_start).
 */
static int coll_create_run(struct dp_coll *c)
{
	struct dp_nics *ns = c->ns;
	int e = 0;

	/* data=off: the buffers only ever hold zeros, so the NICs need not copy
	 * them nor run the ICRC over them (same wire, O(1) per payload byte),
	 * nor even write them: the frames go out flagged (dp_mbuf_priv's
	 * payload_unwritten) and whoever reads payload bytes zeroes them first */
	for (uint32_t r = 0; r < c->cfg.nranks; r++) {
		struct dp_nic_host *nh = &ns->h[c->rank_nic[r]];
		nh->zero_payload = !c->cfg.data && !nh->rdma_end;
		ne_nic_set_zero_payload(c->nics[r], nh->zero_payload, true);
	}
	c->cfg.bytes = c->size;
	c->run = ne_coll_create(&c->cfg, c->nics, &e);
	if (c->run && c->series)
		e = ne_coll_set_series(c->run, coll_series_row, c);
	return c->run == NULL && e == 0 ? -EINVAL : e;
}

/* c's size could not start, for why: say so; the collective failed. */
static void coll_start_failed(struct dp_coll *c, const char *why)
{
	coll_printf(c, "# %s: size %" PRIu64 ": cannot start (%s)\n", c->spec, c->size, why);
	c->failed = c->finished = true;
}

/* c's size could not start (e: why, a negative errno): say so, and its run goes. */
static void coll_cannot_start(struct dp_coll *c, int e)
{
	coll_start_failed(c, strerror(e ? -e : EINVAL));
	ne_coll_destroy(c->run);
	c->run = NULL;
}

static void coll_start_size(void *obj, uint64_t arg, uint64_t now)
{
	struct dp_coll *c = obj;

	(void)arg;
	ne_coll_destroy(c->run); /* (the size before's, kept until now: coll_end_run) */
	c->run = NULL;
	c->run_ended = false;
	int e = coll_create_run(c);

	if (e == 0 && ne_coll_start(c->run, now) != 0)
		e = -EINVAL;
	if (e != 0) {
		coll_cannot_start(c, e);
		return;
	}
	coll_poll(c, 0, now);
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
static int coll_lanes_begin(struct dp_coll *c, uint64_t start_ns, bool first)
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
		if ((first ? dp_timer_add_lp(ns->lane[l].eng, DP_LP_NICS, start_ns, coll_lane_start, c, l)
			   : dp_timer_add_keyed(ns->lane[l].eng, DP_LP_NICS, DP_LP_NICS, start_ns,
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
static void coll_lanes_next_size(void *obj, uint64_t arg, uint64_t now)
{
	struct dp_coll *c = obj;

	(void)arg;
	coll_lanes_drop_run(c);
	if (coll_lanes_begin(c, now, false) < 0)
		coll_start_failed(c, "no timer left");
}

/* The sizes of c's sweep. */
static uint32_t coll_nsizes(const struct dp_coll *c)
{
	uint32_t n = 1;

	for (uint64_t s = c->size_min; s < c->size_max; s *= 2)
		n++;
	return n;
}

/*
 * NICs in lanes (ns->n_lanes > 1): c's first size is created now and split
 * by the ranks' lanes (coll_lanes_begin), to start at start_ns. Returns 0 (a
 * run that cannot start says so, as at a size's start), or -1 with a
 * message.
 */
static int coll_split(struct dp_coll *c, uint64_t start_ns, char *err, size_t errlen)
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
	for (uint32_t l = 0; l < ns->n_lanes; l++)
		c->lane_left[l] = coll_nsizes(c);
	c->split_start_ns = start_ns; /* (its first size is made by dp_nics_colls_begin, after the series is set) */
	return 0;
}

/* True for the keys --coll parses itself; the rest go to ne_coll_config_set(). */
static bool coll_key_own(const struct dp_coll *c, const char *k)
{
	static const char *const own[] = {"op", "mode", "cts", "data", "sport", "hosts", "sizes",
					   "size", "chunk", "channels", "window", "iters", "warmup"};

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strcmp(k, own[i]) == 0)
			return true;
	/* qps up to NE_COLL_MAX_QPS in model rocelab; model nccl takes up to 128 */
	return strcmp(k, "qps") == 0 && c->cfg.model != NE_COLL_MODEL_NCCL;
}

/*
 * One key=value of --coll. Keys of ne_coll_config_set() (model, NCCL_*,
 * proxy_post_wqe, proxy_poll_cqe, ...) pass through; its message naming the
 * pair and what is wrong lands in why. Returns 0 or -1.
 */
static int coll_kv(struct dp_nics *ns, struct dp_coll *c, const char *k, const char *v, char *why,
		   size_t whylen)
{
	uint64_t n;

	if (!coll_key_own(c, k))
		return ne_coll_config_set_msg(&c->cfg, k, v, why, whylen) == 0 ? 0 : -1;

	if (strcmp(k, "op") == 0) {
		for (int op = NE_COLL_ALLREDUCE; op <= NE_COLL_INCAST; op++)
			if (strcmp(v, ne_coll_op_name((enum ne_coll_op)op)) == 0) {
				c->cfg.op = (enum ne_coll_op)op;
				return 0;
			}
		return -1;
	}
	if (strcmp(k, "mode") == 0) {
		if (strcmp(v, "split") == 0)
			c->cfg.qp_mode = NE_COLL_QP_SPLIT;
		else if (strcmp(v, "rr") == 0)
			c->cfg.qp_mode = NE_COLL_QP_RR;
		else if (strcmp(v, "ctran") == 0 && c->cfg.model == NE_COLL_MODEL_NCCL)
			c->cfg.qp_mode = NE_COLL_QP_CTRAN;
		else
			return -1;
		return 0;
	}
	if (strcmp(k, "cts") == 0 || strcmp(k, "data") == 0) {
		bool on = strcmp(v, "on") == 0;
		if (!on && strcmp(v, "off") != 0)
			return -1;
		if (k[0] == 'c')
			c->cfg.cts = on;
		else
			c->cfg.data = on;
		return 0;
	}
	if (strcmp(k, "sport") == 0) {
		if (strcmp(v, "rxe") == 0 || strcmp(v, "mlx5") == 0)
			c->cfg.sport = NE_COLL_SPORT_RXE; /* mlx5 computes it as rxe does */
		else if (strcmp(v, "fixed") == 0)
			c->cfg.sport = NE_COLL_SPORT_FIXED;
		else if (strcmp(v, "hash") == 0)
			c->cfg.sport = NE_COLL_SPORT_HASH;
		else
			return -1;
		return 0;
	}
	if (strcmp(k, "hosts") == 0) {
		const struct topo *t = ns->fab->topo;
		c->cfg.nranks = 0;
		if (strcmp(v, "all") == 0) {
			for (uint32_t i = 0; i < ns->n && i < NE_COLL_MAX_RANKS; i++)
				c->rank_nic[c->cfg.nranks++] = i;
			return 0;
		}
		char *buf = strdup(v), *save = NULL; /* (a list of a thousand hosts is long) */
		int rc = buf ? 0 : -1;
		for (char *h = buf ? strtok_r(buf, "+", &save) : NULL; h && rc == 0;
		     h = strtok_r(NULL, "+", &save)) {
			int hi = topo_host_by_name(t, h);
			if (hi < 0 || !dp_nics_owns(ns, (uint32_t)hi) || c->cfg.nranks == ns->n) {
				rc = -1;
				break;
			}
			for (uint32_t r = 0; r < c->cfg.nranks && rc == 0; r++)
				if (c->rank_nic[r] == (uint32_t)ns->by_host[hi])
					rc = -1; /* a host at most once */
			if (rc == 0)
				c->rank_nic[c->cfg.nranks++] = (uint32_t)ns->by_host[hi];
		}
		free(buf);
		return rc;
	}
	if (strcmp(k, "sizes") == 0 || strcmp(k, "size") == 0) {
		char buf[64], *colon;
		snprintf(buf, sizeof(buf), "%s", v);
		colon = strchr(buf, ':');
		if (colon)
			*colon++ = '\0';
		if (dp_parse_bytes(buf, &c->size_min) < 0 || c->size_min == 0 ||
		    dp_parse_bytes(colon ? colon : buf, &c->size_max) < 0 || c->size_max < c->size_min)
			return -1;
		return 0;
	}
	if (strcmp(k, "chunk") == 0) {
		if (dp_parse_bytes(v, &n) < 0 || n < 4 || n > (64u << 20) || n % 4)
			return -1;
		c->cfg.chunk_bytes = (uint32_t)n;
		return 0;
	}
	if (dp_parse_u64(v, &n) < 0)
		return -1;
	if (strcmp(k, "qps") == 0 && n >= 1 && n <= NE_COLL_MAX_QPS)
		c->cfg.qps_per_conn = (uint32_t)n;
	else if (strcmp(k, "channels") == 0 && n >= 1 && n <= NE_COLL_MAX_CHANNELS)
		c->cfg.channels = (uint32_t)n;
	else if (strcmp(k, "window") == 0 && n >= 1 && n <= 64)
		c->cfg.window = (uint32_t)n;
	else if (strcmp(k, "iters") == 0 && n >= 1 && n <= 1000)
		c->cfg.iters = (uint32_t)n;
	else if (strcmp(k, "warmup") == 0 && n <= 1000)
		c->cfg.warmup_iters = (uint32_t)n;
	else
		return -1;
	return 0;
}

struct coll_parse {
	struct dp_nics *ns;
	struct dp_coll *c;
	char why[192]; /* ne_coll's message for a key it refused */
};

static int coll_kv_cb(void *ctx, const char *k, const char *v)
{
	struct coll_parse *cp = ctx;

	return coll_kv(cp->ns, cp->c, k, v, cp->why, sizeof(cp->why));
}

static void coll_free(struct dp_coll *c)
{
	if (c == NULL)
		return;
	ne_coll_destroy(c->run);
	if (c->series)
		fclose(c->series);
	free(c->rank_nic);
	free(c->nics);
	free(c->lane);
	free(c->lane_run);
	free(c->lane_of);
	free(c->lane_left);
	free(c->pwake);
	free(c);
}

void dp_nics_tag_colls(struct dp_nics *ns, bool on)
{
	ns->coll_tags = on;
}

/*
 * The hosts of a parsed collective c become its ranks, unless one already
 * is a rank of another collective. Returns 0, or -1 with a message.
 */
static int coll_take_ranks(struct dp_nics *ns, struct dp_coll *c, char *err, size_t errlen)
{
	for (uint32_t r = 0; r < c->cfg.nranks; r++) {
		const struct dp_nic_host *nh = &ns->h[c->rank_nic[r]];
		if (nh->coll != NULL) {
			snprintf(err, errlen, "--coll: host %s is a rank of collective %u already "
				 "(collectives run on disjoint hosts: give each its hosts=)",
				 ns->fab->topo->hosts[nh->host].name, nh->coll->id);
			return -1;
		}
	}
	for (uint32_t r = 0; r < c->cfg.nranks; r++) {
		struct dp_nic_host *nh = &ns->h[c->rank_nic[r]];
		c->nics[r] = nh->nic;
		nh->coll_rank = (int32_t)r;
		nh->coll = c;
	}
	return 0;
}

/* --coll's defaults where they are not ne_coll's. */
static void coll_defaults(struct dp_coll *c, uint8_t timeout)
{
	ne_coll_config_default(&c->cfg);
	c->cfg.qp_mode = NE_COLL_QP_RR;
	c->cfg.chunk_bytes = 512u << 10;
	c->cfg.window = 4;
	c->cfg.sport = NE_COLL_SPORT_RXE;
	c->cfg.timeout = timeout;
	c->size_min = c->size_max = 1u << 20;
}

/* dp_nics_coll_splits: every key but hosts= (which needs the NICs), errors left to the real parse. */
static int splits_kv(void *ctx, const char *k, const char *v)
{
	char why[8];

	if (strcmp(k, "hosts") != 0)
		coll_kv(NULL, ctx, k, v, why, sizeof(why));
	return 0;
}

/* spec's keys read into *c (hosts= aside), errors left to the real parse; false when out of memory. */
static bool coll_peek(const char *spec, struct dp_coll *c)
{
	char *buf = spec ? strdup(spec) : NULL;
	const char *bad;

	if (buf == NULL)
		return false;
	coll_defaults(c, 10);
	dp_kv_each(buf, splits_kv, c, &bad);
	free(buf);
	return true;
}

bool dp_nics_coll_splits(const char *spec)
{
	struct dp_coll *c = calloc(1, sizeof(*c));
	bool ok = c && coll_peek(spec, c) && c->cfg.iters == 1 && c->cfg.warmup_iters == 0;

	free(c);
	return ok;
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

bool dp_nics_coll_sweeps(const char *spec)
{
	struct dp_coll *c = calloc(1, sizeof(*c));
	bool sweeps = c && coll_peek(spec, c) && c->size_min < c->size_max;

	free(c);
	return sweeps;
}

/* dp_nics_add_coll's parse and checks of spec into c. Returns 0, or -1 with a message. */
static int coll_parse_spec(struct dp_nics *ns, struct dp_coll *c, const char *spec, char *err,
			   size_t errlen)
{
	char *buf = NULL;

	snprintf(c->spec, sizeof(c->spec), "%s", spec);
	c->rank_nic = calloc(ns->n + 1, sizeof(*c->rank_nic));
	c->nics = calloc(ns->n + 1, sizeof(*c->nics));
	if (!c->rank_nic || !c->nics) {
		snprintf(err, errlen, "--coll: out of memory");
		return -1;
	}
	coll_defaults(c, rc_timeout(ns));
	struct coll_parse cp = {.ns = ns, .c = c};
	coll_kv(ns, c, "hosts", "all", cp.why, sizeof(cp.why));
	buf = strdup(spec);
	if (buf == NULL) {
		snprintf(err, errlen, "--coll: out of memory");
		return -1;
	}
	const char *bad;
	cp.why[0] = '\0';
	int kv = dp_kv_each(buf, coll_kv_cb, &cp, &bad);
	if (kv < 0) {
		if (cp.why[0])
			snprintf(err, errlen, "--coll: bad %s", cp.why); /* names the pair */
		else
			snprintf(err, errlen, "--coll: bad '%.200s'", bad);
	}
	free(buf);
	if (kv < 0)
		return -1;
	if (c->cfg.nranks < 2) {
		snprintf(err, errlen, "--coll: needs at least 2 emulated hosts (has %u)", c->cfg.nranks);
		return -1;
	}
	c->cfg.bytes = c->size_max;
	if (ne_coll_config_check(&c->cfg) != 0) {
		snprintf(err, errlen, "--coll '%s': inconsistent settings", spec);
		return -1;
	}
	return 0;
}

int dp_nics_add_coll(struct dp_nics *ns, const char *spec, uint64_t start_ns, FILE *out, char *err,
		     size_t errlen)
{
	struct dp_coll *c = calloc(1, sizeof(*c));
	struct dp_coll **cs = realloc(ns->colls, (ns->n_colls + 1) * sizeof(*cs));

	if (cs)
		ns->colls = cs;
	if (c == NULL || cs == NULL) {
		free(c);
		snprintf(err, errlen, "--coll: out of memory");
		return -1;
	}
	c->ns = ns;
	c->id = ns->n_colls + 1;
	c->pwake = calloc(ns->n_lanes, sizeof(*c->pwake));
	if (c->pwake == NULL) {
		coll_free(c);
		snprintf(err, errlen, "--coll: out of memory");
		return -1;
	}
	for (uint32_t l = 0; l < ns->n_lanes; l++)
		c->pwake[l] = (struct coll_proxy_wake){.c = c, .lane = l};
	if (coll_parse_spec(ns, c, spec, err, errlen) < 0 || coll_take_ranks(ns, c, err, errlen) < 0) {
		coll_free(c);
		return -1;
	}
	ns->colls[ns->n_colls++] = c;
	ns->coll_out = out;
	c->size = c->size_min;
	char hdr[512];
	ne_coll_format_header(hdr, sizeof(hdr));
	coll_printf(c, "# %s: %u ranks, %u channel(s), %u QP(s) per connection (%s), chunk %u, window %u, "
		       "CTS %s\n%s",
		    ne_coll_op_name(c->cfg.op), c->cfg.nranks, c->cfg.channels, c->cfg.qps_per_conn,
		    ne_coll_qp_mode_name(c->cfg.qp_mode), c->cfg.chunk_bytes, c->cfg.window,
		    c->cfg.cts ? "on" : "off", hdr);
	ne_coll_format_costs(&c->cfg, hdr, sizeof(hdr)); /* "" without costs */
	coll_put(c, hdr);
	if (ns->n_lanes > 1)
		return coll_split(c, start_ns, err, errlen);
	return dp_timer_add_lp(nics_eng(ns), DP_LP_NICS, start_ns, coll_start_size, c, 0);
}

int dp_nics_coll_series(struct dp_nics *ns, const char *path, char *err, size_t errlen)
{
	for (uint32_t i = 0; path == NULL && i < ns->n_colls; i++)
		if (ns->colls[i]->cfg.series_ns != 0) {
			snprintf(err, errlen, "--coll series=%uns: needs --coll-series FILE",
				 ns->colls[i]->cfg.series_ns);
			return -1;
		}
	if (path == NULL || ns->n_colls == 0)
		return 0;
	if (ns->n_colls > 1) {
		snprintf(err, errlen, "--coll-series %s: one collective per file (this run has %u)", path,
			 ns->n_colls);
		return -1;
	}
	struct dp_coll *c = ns->colls[0];
	if (c->cfg.series_ns == 0)
		c->cfg.series_ns = DP_COLL_SERIES_NS;
	c->series = fopen(path, "w");
	if (c->series == NULL) {
		snprintf(err, errlen, "--coll-series %s: cannot write (%s)", path, strerror(errno));
		return -1;
	}
	c->series_path = path;
	fputs("size,t_us,dt_us,qp_ns,qps_mean,qps_max,nics_active\n", c->series);
	return 0;
}

int dp_nics_colls_begin(struct dp_nics *ns, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < ns->n_colls; i++) {
		struct dp_coll *c = ns->colls[i];
		if (c->split && c->run == NULL && !c->finished && coll_lanes_begin(c, c->split_start_ns, true) < 0) {
			snprintf(err, errlen, "--coll: out of memory");
			return -1;
		}
	}
	return 0;
}

/* Collective c's pairs after the n already in out (dp_nics_coll_pairs). Returns the new n. */
static uint32_t coll_pairs(const struct dp_nics *ns, const struct dp_coll *c, uint32_t (*out)[2],
			   uint32_t n, uint32_t max)
{
	uint32_t nr = c->cfg.nranks;

	for (uint32_t a = 0; a < nr; a++)
		for (uint32_t b = 0; b < nr; b++) {
			bool edge;
			if (a == b)
				continue;
			switch (c->cfg.op) {
			case NE_COLL_ALLTOALL: edge = true; break;
			case NE_COLL_INCAST: edge = b == c->cfg.root; break;
			default: edge = b == (a + 1) % nr; break; /* the ring */
			}
			if (edge && n < max) {
				out[n][0] = ns->h[c->rank_nic[a]].host;
				out[n][1] = ns->h[c->rank_nic[b]].host;
				n++;
			}
		}
	return n;
}

uint32_t dp_nics_coll_pairs(const struct dp_nics *ns, uint32_t (*out)[2], uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < ns->n_colls; i++)
		n = coll_pairs(ns, ns->colls[i], out, n, max);
	return n;
}

struct coll_size {
	uint32_t qps, channels;
	uint32_t ranks;  /* hosts= named, 0: all */
	bool all_peers; /* alltoall / incast: a NIC talks to every other rank */
};

/* The keys that size a NIC; the rest (and bad values) are --coll's own parse's business. */
static int coll_size_kv(void *ctx, const char *k, const char *v)
{
	struct coll_size *cs = ctx;
	uint64_t n;

	bool qps = strcmp(k, "qps") == 0 || strcmp(k, "NCCL_IB_QPS_PER_CONNECTION") == 0 ||
		   strcmp(k, "NCCL_CTRAN_IB_MAX_QPS") == 0;
	bool chans = strcmp(k, "channels") == 0 || strcmp(k, "NCCL_MIN_NCHANNELS") == 0;

	if (qps && dp_parse_u64(v, &n) == 0 && n >= 1 && n <= 1024)
		cs->qps = (uint32_t)n;
	else if (chans && dp_parse_u64(v, &n) == 0 && n >= 1 && n <= 64)
		cs->channels = n > cs->channels ? (uint32_t)n : cs->channels; /* the larger */
	else if (strcmp(k, "op") == 0)
		cs->all_peers = strcmp(v, "alltoall") == 0 || strcmp(v, "incast") == 0;
	else if (strcmp(k, "hosts") == 0) {
		cs->ranks = strcmp(v, "all") != 0;
		for (const char *c = v; cs->ranks && *c; c++)
			cs->ranks += *c == '+';
	}
	return 0;
}

/* QPs a NIC needs for the --coll spec (read before the NICs exist); 0 without --coll. */
uint32_t dp_nics_coll_qps(const char *spec, uint32_t n_emulated)
{
	struct coll_size cs = {.qps = 1, .channels = 1};
	const char *bad;
	char *buf = spec ? strdup(spec) : NULL;

	if (buf == NULL)
		return 0; /* (no --coll; out of memory: dp_nics_add_coll will say so) */
	dp_kv_each(buf, coll_size_kv, &cs, &bad); /* never refuses a key */
	free(buf);
	/* per peer connection and channel: data QPs + 1 control QP, both directions;
	 * a ring has 2 peers, an AllToAll or incast up to every other rank (at
	 * least 64: room for --rdma transfers beside it; an incast's root at
	 * 1,024 ranks needs 2,046: the table is allocated whole, touched as used) */
	uint32_t ranks = cs.ranks ? cs.ranks : n_emulated;
	uint32_t peers = cs.all_peers ? RTE_MAX(ranks, 65u) - 1 : 2;
	return 2 * (cs.qps + 1) * cs.channels * peers + 16;
}

bool dp_nics_active(const struct dp_nics *ns)
{
	for (uint32_t i = 0; i < ns->n_rdma; i++)
		if (!ns->rdma[i]->finished)
			return true;
	for (uint32_t i = 0; i < ns->n_colls; i++)
		if (!ns->colls[i]->finished)
			return true;
	return false;
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

unsigned dp_nics_failures(const struct dp_nics *ns)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < ns->n_rdma; i++)
		n += !ns->rdma[i]->finished || !ns->rdma[i]->data_ok;
	for (uint32_t i = 0; i < ns->n_colls; i++)
		n += !ns->colls[i]->finished || ns->colls[i]->failed;
	return n;
}

void dp_nics_report(const struct dp_nics *ns, FILE *out)
{
	const struct topo *t = ns->fab->topo;

	for (uint32_t i = 0; i < ns->n_rdma; i++) {
		const struct dp_rdma *r = ns->rdma[i];
		double us = r->finished ? (double)(r->done_ns - r->first_post_ns) / 1e3 : 0;
		double gbps = us > 0 ? (double)r->size * (double)r->completed * 8 / (us * 1e3) : 0;
		fprintf(out, "rdma %s: %" PRIu64 " of %u WRITEs of %u B on %u QPs in %.1f us, %.2f Gbit/s, "
			     "%" PRIu64 " errors, data %s\n",
			r->spec, r->completed, r->count, r->size, r->qps, us, gbps, r->errors,
			!r->finished ? "NOT FINISHED" : r->data_ok ? "verified" : "WRONG");
	}
	if (ns->n)
		fprintf(out, "\n%-10s %10s %10s %8s %8s %8s %8s %10s %8s\n", "nic", "sent", "received",
			"retrans", "timeouts", "naks_tx", "naks_rx", "dup_req", "rejected");
	for (uint32_t i = 0; i < ns->n; i++) {
		struct ne_counters c;
		char why[160];
		ne_nic_get_counters(ns->h[i].nic, &c);
		refused_why(&ns->h[i], why, sizeof(why));
		fprintf(out, "%-10s %10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64
			     " %8" PRIu64 " %10" PRIu64 " %8" PRIu64 "%s\n",
			t->hosts[ns->h[i].host].name, c.sent_pkts, c.rcvd_pkts, c.retrans_pkts, c.timeouts,
			c.naks_sent, c.naks_rcvd, c.duplicate_request, ns->h[i].rx_rejected, why);
	}
}

/*
 * Spread of the bytes sent over the switch-to-switch channels that carried
 * any: max / mean and the coefficient of variation (stdev / mean); 0 and 0
 * when none did. How evenly the load balancing used the fabric.
 */
static void fabric_spread(const struct dp_fabric *f, double *max_mean, double *cv)
{
	double sum = 0, sq = 0, max = 0;
	uint32_t n = 0;

	for (uint32_t i = 0; i < f->n_chans; i++) {
		const struct dp_chan *ch = &f->chans[i];
		double b = (double)dp_chan_tx_bytes(ch);
		if (ch->from.kind != TOPO_NODE_SWITCH || ch->to.kind != TOPO_NODE_SWITCH || b == 0)
			continue;
		sum += b;
		sq += b * b;
		max = b > max ? b : max;
		n++;
	}
	*max_mean = *cv = 0;
	if (n == 0)
		return;
	double mean = sum / n, var = sq / n - mean * mean;
	*max_mean = max / mean;
	*cv = var > 0 ? sqrt(var) / mean : 0;
}

/* Active QPs per NIC over the sizes run: time-weighted mean over the
 * collective's time, the same while a NIC had one, the most on one NIC. */
static void print_active_totals(const struct ne_coll_stats *s, FILE *out)
{
	fprintf(out, " active_qps_mean=%.3f active_qps_busy_mean=%.3f active_qps_max=%" PRIu32,
		s->nic_ns ? (double)s->active_qp_ns / (double)s->nic_ns : 0.0,
		s->active_busy_ns ? (double)s->active_qp_ns / (double)s->active_busy_ns : 0.0,
		s->active_qps_max);
}

/* The collective's counters: work requests and completions, the proxy thread. */
static void print_coll_totals(const struct dp_coll *c, FILE *out)
{
	const struct ne_coll_stats *s = &c->sum;

	fprintf(out, " messages=%" PRIu64 " data_wqes=%" PRIu64 " zero_len_wqes=%" PRIu64
		     " cts=%" PRIu64 " wqes_posted=%" PRIu64 " cqes_polled=%" PRIu64
		     " proxy_busy_ns=%" PRIu64 " proxy_busy_max_ns=%" PRIu64 " rr_mismatch=%" PRIu64,
		s->transfers_done, s->data_wrs, s->zero_len_wrs, s->cts_sent, s->wqes_posted,
		s->cqes_polled, s->proxy_busy_ns, c->proxy_busy_max_ns, s->rr_mismatch);
	print_active_totals(s, out);
	fprintf(out, " msg_lat_mean_us=%.3f msg_lat_p50_us=%.3f msg_lat_p99_us=%.3f msg_lat_max_us=%.3f"
		     " msg_wait_mean_us=%.3f msg_wait_p99_us=%.3f",
		ne_coll_hist_mean(&c->lat) / 1e3, (double)ne_coll_hist_quantile(&c->lat, 0.5) / 1e3,
		(double)ne_coll_hist_quantile(&c->lat, 0.99) / 1e3, (double)c->lat.max_ns / 1e3,
		ne_coll_hist_mean(&c->wait) / 1e3, (double)ne_coll_hist_quantile(&c->wait, 0.99) / 1e3);
}

void dp_nics_print_totals(const struct dp_nics *ns, FILE *out)
{
	const struct dp_fabric *f = ns->fab;
	struct ne_counters c, sum;
	uint64_t drops = 0, pfc = 0, ecn = 0, flowlet = 0, qpc_miss = 0;

	memset(&sum, 0, sizeof(sum));
	for (uint32_t i = 0; i < ns->n; i++) {
		ne_nic_get_counters(ns->h[i].nic, &c);
		sum.retrans_pkts += c.retrans_pkts;
		sum.naks_sent += c.naks_sent;
		sum.timeouts += c.timeouts;
		sum.out_of_seq_request += c.out_of_seq_request;
		sum.acks_sent += c.acks_sent;
		qpc_miss += c.qpc_misses;
	}
	for (uint32_t s = 0; s < f->topo->n_switches; s++) {
		drops += dp_switch_drops(&f->sw[s]);
		ecn += f->sw[s].ecn_marked;
		flowlet += f->sw[s].flowlet.switches;
	}
	for (uint32_t i = 0; i < f->n_chans; i++) {
		pfc += f->chans[i].pfc_tx;
		drops += dp_chan_drops(&f->chans[i]);
	}
	uint64_t stalls = 0, idle_wakes = 0;
	for (uint32_t i = 0; i < ns->n; i++) {
		stalls += ns->h[i].stalls;
		idle_wakes += ns->h[i].idle_wakes;
	}
	double max_mean, cv;
	fabric_spread(f, &max_mean, &cv);
	fprintf(out, "# totals: retrans=%" PRIu64 " naks=%" PRIu64 " timeouts=%" PRIu64
		     " out_of_seq=%" PRIu64 " drops=%" PRIu64 " pfc_frames=%" PRIu64 " ecn_marks=%" PRIu64
		     " flowlet_switches=%" PRIu64 " qpc_misses=%" PRIu64 " nic_stalls=%" PRIu64
		     " nic_idle_wakes=%" PRIu64 " acks=%" PRIu64 " link_max_mean=%.3f link_cv=%.3f",
		sum.retrans_pkts, sum.naks_sent, sum.timeouts, sum.out_of_seq_request, drops, pfc, ecn,
		flowlet, qpc_miss, stalls, idle_wakes, sum.acks_sent, max_mean, cv);
	if (ns->n_colls == 1)
		print_coll_totals(ns->colls[0], out);
	fputc('\n', out);
	for (uint32_t i = 0; ns->n_colls > 1 && i < ns->n_colls; i++) {
		fprintf(out, "# [c%u] totals:", ns->colls[i]->id);
		print_coll_totals(ns->colls[i], out);
		fputc('\n', out);
	}
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

/* Words per NIC: ne_nic's counters, then dp_nic's (host_counts). */
#define NIC_WORDS (sizeof(struct ne_counters) / sizeof(uint64_t))
#define HOST_WORDS (7u + DP_NIC_RX_SLOTS)

/* dp_nic's own per-NIC counts, in the order of the vector. */
static void host_fields(struct dp_nic_host *nh, uint64_t *f[HOST_WORDS])
{
	uint64_t *fixed[] = {&nh->tx_frames, &nh->rx_frames, &nh->rx_rejected, &nh->tx_waits,
			     &nh->stalls, &nh->idle_wakes, &nh->no_mbuf};

	_Static_assert(sizeof(fixed) / sizeof(fixed[0]) + DP_NIC_RX_SLOTS == HOST_WORDS, "words");
	memcpy(f, fixed, sizeof(fixed));
	for (uint32_t k = 0; k < DP_NIC_RX_SLOTS; k++)
		f[7 + k] = &nh->rx_refused[k];
}

size_t dp_nics_counters_len(const struct dp_nics *ns)
{
	return (size_t)ns->n * (NIC_WORDS + HOST_WORDS);
}

void dp_nics_counters_pack(const struct dp_nics *ns, uint64_t *v)
{
	for (uint32_t i = 0; i < ns->n; i++, v += NIC_WORDS + HOST_WORDS) {
		struct ne_counters c;
		ne_nic_get_counters(ns->h[i].nic, &c);
		uint64_t *f[HOST_WORDS];
		memcpy(v, &c, sizeof(c));
		host_fields(&ns->h[i], f);
		for (uint32_t k = 0; k < HOST_WORDS; k++)
			v[NIC_WORDS + k] = *f[k];
	}
}

void dp_nics_counters_add(struct dp_nics *ns, const uint64_t *v)
{
	for (uint32_t i = 0; i < ns->n; i++, v += NIC_WORDS + HOST_WORDS) {
		struct ne_counters c;
		memcpy(&c, v, sizeof(c));
		uint64_t *f[HOST_WORDS];
		ne_nic_add_counters(ns->h[i].nic, &c);
		host_fields(&ns->h[i], f);
		for (uint32_t k = 0; k < HOST_WORDS; k++)
			*f[k] += v[NIC_WORDS + k];
	}
}

void dp_nics_destroy(struct dp_nics *ns)
{
	for (uint32_t i = 0; i < ns->n_rdma; i++) {
		struct dp_rdma *r = ns->rdma[i];
		free(r->sbuf);
		free(r->dbuf);
		free(r->sqpn);
		free(r->dqpn);
		free(r->outstanding);
		free(r);
	}
	for (uint32_t i = 0; i < ns->n_colls; i++)
		coll_free(ns->colls[i]);
	free(ns->colls);
	for (uint32_t l = 0; ns->lane && l < ns->n_lanes; l++) {
		rte_pktmbuf_free(ns->lane[l].spare);
		free(ns->lane[l].wake);
	}
	free(ns->lane);
	for (uint32_t i = 0; i < ns->n; i++)
		ne_nic_destroy(ns->h[i].nic); /* frees its QPs, CQs and MRs */
	free(ns->rdma);
	free(ns->h);
	free(ns->by_host);
	memset(ns, 0, sizeof(*ns));
}
