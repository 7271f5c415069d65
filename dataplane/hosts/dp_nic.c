/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_nic: the emulated NICs as hosts of the fabric: each NIC's wake-up timer,
 * its service (send while the host queue has room, then poll its traffic), the
 * frames the fabric delivers, --nic, the per-NIC report and counters, the
 * totals line (the fabric's sums; each collective's counters: dp_coll.c).
 */
#define _GNU_SOURCE /* qsort_r */
#include "dp_nic_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dp_flowrun.h"
#include "dp_pool.h"
#include "dp_keys.h"
#include "dp_units.h"
#include "rl_mem.h"

/* Bytes of the host's NIC queue the emulated NIC may fill before it waits: a
 * few frames, so a PFC pause stops it within a few frames, as a real RNIC. */
#define NIC_QUEUE_ROOM (4u * NE_MAX_FRAME)

#define NIC_STALL_RETRY_NS 100

_Static_assert(DP_COLL_LP == DP_LP_NICS, "the collective driver's LP is the NICs'");

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
	dp_nic_service(nh, now);
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
void dp_nic_arm(struct dp_nic_host *nh, uint64_t t, uint64_t now)
{
	wake_at(nh, t, now, false);
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

void dp_nic_service(struct dp_nic_host *nh, uint64_t now)
{
	struct dp_nics *ns = nh->owner;
	struct dp_fabric *f = ns->fab;
	struct dp_host *h = &f->host[nh->host];
	uint8_t buf[NE_MAX_FRAME];
	size_t len;

	for (struct dp_rdma *r = nh->rdma_src; r; r = r->next_src)
		dp_rdma_progress(r, now);
	/* The collective's poll arms the NICs it gave work, but not this one: it
	 * is due now, so it would be armed at now + 1, and that wake-up, earlier
	 * than any this service sets, would fire for nothing after every frame
	 * (227,200 of 394,300 NIC wake-ups of a 128-rank ring at 2 MiB). The
	 * service arms it below. */
	nh->arm_deferred = true;
	poll_colls(nh, now);
	nh->arm_deferred = false;
	for (;;) {
		if (dp_count_chan_queued(h->tx) >= NIC_QUEUE_ROOM) {
			/* paused or slower than the NIC: look again after one frame time */
			nh->tx_waits++;
			nh->waiting = true;
			wake_list_add(nh);
			dp_nic_arm(nh, now + dp_ser_ns(NE_MAX_FRAME, h->tx->rate_bps), now);
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
		dp_rdma_progress(r, now);
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
	dp_nic_service(nh, now);
}





static int set_hold(void *obj, const char *v)
{
	if (strcmp(v, "on") && strcmp(v, "off"))
		return -1;
	((struct dp_nic_opts *)obj)->qpc_hold = strcmp(v, "on") == 0;
	return 0;
}

/* The --nic language: every emulated NIC's model settings, one table. */
static const struct dp_key nic_keys[] = {
	{"qpc", "0..1048576", "0", "QP contexts the NIC holds (0: no cache model)", NULL, DP_KEY_FIELD(DP_KEY_UINT, struct dp_nic_opts, qpc_entries, 0, 1u << 20)},
	{"miss", "TIME", "0", "what a QP context miss costs", NULL, DP_KEY_FIELD(DP_KEY_TIME, struct dp_nic_opts, qpc_miss_ns, 0, 0)},
	{"quantum", "SIZE, at most 1G", "0", "TX arbitration: deficit round robin quantum (0: round robin)", NULL, DP_KEY_FIELD(DP_KEY_BYTES, struct dp_nic_opts, tx_quantum, 0, 1u << 30)},
	{"msgrate", "0..1000000000000", "0", "messages per second per NIC at most (0: no limit)", NULL, DP_KEY_FIELD(DP_KEY_UINT, struct dp_nic_opts, msg_rate, 0, 1000000000000ull)},
	{"hold", "on|off", NULL, "accepted, no longer needed: a fetched context always stays until its QP sends", .set = set_hold},
};

#define N_NIC_KEYS (sizeof(nic_keys) / sizeof(nic_keys[0]))

void dp_nic_opts_help(FILE *out)
{
	dp_keys_help(nic_keys, N_NIC_KEYS, "--nic KEY=VALUE,... (every emulated NIC):", out);
}

struct nic_parse {
	struct dp_nic_opts *o;
	char *err;
	size_t errlen;
};

static int nic_opts_kv(void *ctx, const char *k, const char *v)
{
	struct nic_parse *np = ctx;

	return dp_keys_set(nic_keys, N_NIC_KEYS, np->o, "--nic", k, v, np->err, np->errlen);
}

int dp_nic_opts_parse(struct dp_nic_opts *o, const char *spec, char *err, size_t errlen)
{
	char buf[128];
	struct nic_parse np = {.o = o, .err = err, .errlen = errlen};
	const char *bad;

	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "--nic: '%.40s...' longer than %zu characters", spec, sizeof(buf) - 1);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	if (dp_kv_each(buf, nic_opts_kv, &np, &bad) < 0) {
		if (strchr(bad, '=') == NULL) /* (else dp_keys_set said what is wrong) */
			snprintf(err, errlen, "--nic: '%s' is not key=value", bad);
		return -1;
	}
	return 0;
}

int dp_nics_create(struct dp_nics *ns, struct dp_fabric *f, const struct dp_nic_opts *o,
		   char *err, size_t errlen)
{
	uint32_t max_qps = o->max_qps;
	uint64_t seed = o->seed;

	const struct topo *t = f->topo;

	memset(ns, 0, sizeof(*ns));
	ns->fab = f;
	ns->topo = t;
	ns->fab_eng = ns->eng = f->eng;
	ns->by_host = malloc((t->n_hosts + 1) * sizeof(*ns->by_host));
	ns->h = calloc(t->n_hosts + 1, sizeof(*ns->h));
	ns->n_lanes = o->lanes > 1 ? o->lanes : 1;
	ns->lane_alone = ns->n_lanes > 1 && o->lane_alone;
	ns->lane_self = o->lane_self;
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
		cfg.line_rate_bps = topo_host_nic_rate_bps(t, i); /* (a GPU's: PCIe may bind) */
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
	if (ns->n) /* (without lanes every emulated host is in one partition: dp_part.h) */
		ns->eng = f->host[ns->h[0].host].eng;
	return 0;
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

unsigned dp_nics_failures(const struct dp_nics *ns)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < ns->n_rdma; i++)
		n += !ns->rdma[i]->finished || !ns->rdma[i]->data_ok;
	for (uint32_t i = 0; i < ns->n_colls; i++)
		n += !ns->colls[i]->finished || ns->colls[i]->failed;
	return n;
}

int dp_nics_rdma_row(const struct dp_nics *ns, uint32_t i, struct dp_rdma_row *row)
{
	if (i >= ns->n_rdma)
		return -ENOENT;
	const struct dp_rdma *r = ns->rdma[i];
	double us = r->finished ? (double)(r->done_ns - r->first_post_ns) / 1e3 : 0;
	*row = (struct dp_rdma_row){
		.spec = r->spec, .completed = r->completed, .count = r->count, .size = r->size,
		.qps = r->qps, .time_us = us,
		.gbps = us > 0 ? (double)r->size * (double)r->completed * 8 / (us * 1e3) : 0,
		.errors = r->errors,
		.data = !r->finished ? "NOT FINISHED" : r->data_ok ? "verified" : "WRONG",
	};
	return 0;
}

int dp_nics_row(const struct dp_nics *ns, uint32_t i, struct dp_nic_row *row)
{
	struct ne_counters c;

	if (i >= ns->n)
		return -ENOENT;
	ne_nic_get_counters(ns->h[i].nic, &c);
	*row = (struct dp_nic_row){
		.name = ns->fab->topo->hosts[ns->h[i].host].name, .sent = c.sent_pkts,
		.received = c.rcvd_pkts, .retrans = c.retrans_pkts, .timeouts = c.timeouts,
		.naks_tx = c.naks_sent, .naks_rx = c.naks_rcvd, .dup_req = c.duplicate_request,
		.rejected = ns->h[i].rx_rejected,
	};
	refused_why(&ns->h[i], row->why, sizeof(row->why));
	return 0;
}

void dp_nics_report(const struct dp_nics *ns, FILE *out)
{
	struct dp_rdma_row r;
	struct dp_nic_row n;

	for (uint32_t i = 0; dp_nics_rdma_row(ns, i, &r) == 0; i++)
		fprintf(out, "rdma %s: %" PRIu64 " of %u WRITEs of %u B on %u QPs in %.1f us, %.2f Gbit/s, "
			     "%" PRIu64 " errors, data %s\n",
			r.spec, r.completed, r.count, r.size, r.qps, r.time_us, r.gbps, r.errors, r.data);
	if (ns->n)
		fprintf(out, "\n%-10s %10s %10s %8s %8s %8s %8s %10s %8s\n", "nic", "sent", "received",
			"retrans", "timeouts", "naks_tx", "naks_rx", "dup_req", "rejected");
	for (uint32_t i = 0; dp_nics_row(ns, i, &n) == 0; i++)
		fprintf(out, "%-10s %10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64
			     " %8" PRIu64 " %10" PRIu64 " %8" PRIu64 "%s\n",
			n.name, n.sent, n.received, n.retrans, n.timeouts, n.naks_tx, n.naks_rx, n.dup_req,
			n.rejected, n.why);
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
		double b = (double)dp_count_chan_tx_bytes(ch);
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
		drops += dp_count_switch_drops(&f->sw[s]);
		ecn += f->sw[s].ecn_marked;
		flowlet += f->sw[s].flowlet.switches;
	}
	for (uint32_t i = 0; i < f->n_chans; i++) {
		pfc += f->chans[i].pfc_tx;
		drops += dp_count_chan_drops(&f->chans[i]);
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
		coll_print_totals(ns->colls[0], out);
	fputc('\n', out);
	for (uint32_t i = 0; ns->n_colls > 1 && i < ns->n_colls; i++) {
		fprintf(out, "# [c%u] totals:", ns->colls[i]->id);
		coll_print_totals(ns->colls[i], out);
		fputc('\n', out);
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
	dp_flowrun_free(ns); /* (its replays point at the collectives) */
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
