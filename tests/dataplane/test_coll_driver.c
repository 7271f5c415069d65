/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The collective driver (dataplane/hosts/dp_coll*.c) without DPDK: its sizes,
 * its sweeps, its lanes, on a stub of the NICs' host layer. The stub stands
 * in for dp_nic.c: emulated NICs (nic_emul/) of a one-switch topology on an
 * in-memory wire (every frame reaches the NIC of its destination MAC a fixed
 * delay after it left; the NICs pace themselves at their line rate), each
 * NIC woken by an engine timer at its next event, its service polling the
 * collective before and after it sends, as dp_nic_service does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dp_coll_priv.h"

#define STUB_HOSTS 4
#define WIRE_NS 1000       /* the wire's delay: 1 us, the experiments' links' (clos-2x4x4-emulated.yaml) */
#define STALL_RETRY_NS 100 /* a NIC due with nothing to send looks again then (dp_nic.c's NIC_STALL_RETRY_NS) */
#define FIRST_HOST_LP 2u   /* LPs: global, the NICs' (DP_COLL_LP), then one per host (dp_types.h) */

/* Four emulated NICs on one leaf, 100 Gbit/s links. */
static const char stub_yaml[] = "name: stub4\n"
				"defaults:\n"
				"  host: {attach: emulated, mtu: 9000}\n"
				"  link: {rate: 100G, delay: 1us}\n"
				"switches:\n"
				"  - {name: leaf0, role: rtsw}\n"
				"hosts:\n"
				"  - {name: h0, leaf: leaf0}\n"
				"  - {name: h1, leaf: leaf0}\n"
				"  - {name: h2, leaf: leaf0}\n"
				"  - {name: h3, leaf: leaf0}\n";

/* The NICs' host layer: what dp_nics_create and the fabric would set up. */
struct stub {
	struct topo *topo;
	struct dp_engine eng;
	uint64_t *lp_seq;
	struct dp_nics ns;
	char *out;          /* the collectives' lines (open_memstream) */
	size_t out_len;
	FILE *out_f;
};

/* A frame on the wire, to NIC dst. */
struct stub_frame {
	struct dp_nic_host *dst;
	size_t len;
	uint8_t data[NE_MAX_FRAME];
};

static void stub_service(struct dp_nic_host *nh, uint64_t now);

static void stub_wake(void *obj, uint64_t at, uint64_t now)
{
	struct dp_nic_host *nh = obj;

	(void)at;
	nh->armed_at = 0;
	wake_list_add(nh);
	stub_service(nh, now);
}

/* Wake nh at t (after now), keeping an earlier pending wake-up unless replace. */
static void stub_arm(struct dp_nic_host *nh, uint64_t t, uint64_t now, bool replace)
{
	struct dp_engine *e = nh->owner->eng;

	if (t == UINT64_MAX)
		return;
	t = t > now ? t : now + 1;
	if (nh->armed_at != 0 && (nh->armed_at == t || (nh->armed_at < t && !replace)))
		return;
	if (nh->wake_slot == 0) {
		int slot = dp_timer_slot_new(e);
		assert_true(slot > 0);
		nh->wake_slot = (uint32_t)slot;
	}
	assert_int_equal(dp_timer_slot_arm(e, nh->wake_slot, FIRST_HOST_LP + nh->host, t, stub_wake, nh, t), 0);
	nh->armed_at = t;
}

/* The driver's one call into the NICs' host layer (dp_nic.c's in rocelab-dp). */
void dp_nic_arm(struct dp_nic_host *nh, uint64_t t, uint64_t now)
{
	stub_arm(nh, t, now, false);
}

static void stub_arrive(void *obj, uint64_t arg, uint64_t now)
{
	struct stub_frame *fr = obj;

	(void)arg;
	fr->dst->rx_frames++;
	if (ne_nic_rx(fr->dst->nic, fr->data, fr->len, now) != NE_RX_OK)
		fr->dst->rx_rejected++;
	stub_service(fr->dst, now);
	free(fr);
}

/* The NIC whose MAC is a frame's destination. */
static struct dp_nic_host *stub_by_mac(struct dp_nics *ns, const uint8_t *dmac)
{
	for (uint32_t i = 0; i < ns->n; i++)
		if (memcmp(ns->topo->hosts[ns->h[i].host].mac, dmac, 6) == 0)
			return &ns->h[i];
	return NULL;
}

/* Every frame nh has ready now onto the wire. */
static void stub_send(struct dp_nic_host *nh, uint64_t now)
{
	for (;;) {
		struct stub_frame *fr = malloc(sizeof(*fr));
		assert_non_null(fr);
		if (ne_nic_poll_tx(nh->nic, now, fr->data, sizeof(fr->data), &fr->len) != 1) {
			free(fr);
			return;
		}
		fr->dst = stub_by_mac(nh->owner, fr->data);
		assert_non_null(fr->dst);
		nh->tx_frames++;
		assert_int_equal(dp_timer_add_lp(nh->owner->eng, FIRST_HOST_LP + nh->host, now + WIRE_NS,
						 stub_arrive, fr, 0), 0);
	}
}

/* As dp_nic_service: poll the collective, send, poll again, arm at the next event. */
static void stub_service(struct dp_nic_host *nh, uint64_t now)
{
	nh->arm_deferred = true;
	poll_colls(nh, now);
	nh->arm_deferred = false;
	stub_send(nh, now);
	poll_colls(nh, now);
	uint64_t next = ne_nic_next_event_ns(nh->nic);
	nh->waiting = next <= now;
	if (nh->waiting) {
		nh->stalls++;
		next = now + STALL_RETRY_NS;
		wake_list_add(nh);
	}
	stub_arm(nh, next, now, true);
}

static void stub_nic_changed(void *ctx, struct ne_nic *nic)
{
	(void)nic;
	wake_list_add(ctx);
}

/* One NIC for topology host i, as dp_nics_create makes it (lane: its lane). */
static void stub_add_nic(struct stub *s, uint32_t i, uint32_t lane)
{
	const struct topo_host *hc = &s->topo->hosts[i];
	struct dp_nic_host *nh = &s->ns.h[s->ns.n];
	struct ne_nic_config cfg;

	ne_nic_config_default(&cfg);
	memcpy(cfg.mac, hc->mac, 6);
	cfg.ipv4 = hc->ipv4;
	cfg.line_rate_bps = s->topo->links[hc->link].rate_bps;
	cfg.sport_seed = i + 1;
	nh->nic = ne_nic_create(&cfg);
	assert_non_null(nh->nic);
	nh->owner = &s->ns;
	nh->host = i;
	nh->coll_rank = -1;
	nh->lane = lane;
	ne_nic_set_wake_notify(nh->nic, stub_nic_changed, nh);
	s->ns.by_host[i] = (int32_t)s->ns.n++;
	wake_list_add(nh);
}

/*
 * The stub's NICs, in lanes lanes (host i in lane i * lanes / STUB_HOSTS),
 * every lane on the one engine; lines go to s->out.
 */
static void stub_init(struct stub *s, uint32_t lanes)
{
	char err[512];
	struct dp_nics *ns = &s->ns;

	memset(s, 0, sizeof(*s));
	assert_int_equal(topo_load_string(stub_yaml, strlen(stub_yaml), "stub4", &s->topo, err, sizeof(err)), 0);
	assert_int_equal(s->topo->n_hosts, STUB_HOSTS);
	assert_int_equal(dp_engine_init(&s->eng, DP_CLOCK_VIRTUAL, NULL, NULL), 0);
	s->lp_seq = calloc((FIRST_HOST_LP + STUB_HOSTS) * DP_LP_STRIDE, sizeof(*s->lp_seq));
	assert_non_null(s->lp_seq);
	s->lp_seq[DP_COLL_LP * DP_LP_STRIDE] = 1; /* ((DP_COLL_LP, 0) keys the keyed timers: dp_fabric.c) */
	dp_engine_set_lps(&s->eng, s->lp_seq, FIRST_HOST_LP + STUB_HOSTS);
	ns->topo = s->topo;
	ns->fab_eng = ns->eng = &s->eng;
	ns->n_lanes = lanes;
	ns->by_host = calloc(STUB_HOSTS, sizeof(*ns->by_host));
	ns->h = calloc(STUB_HOSTS, sizeof(*ns->h));
	ns->lane = rl_zalloc_lines(lanes, sizeof(*ns->lane));
	assert_true(ns->by_host && ns->h && ns->lane);
	for (uint32_t l = 0; l < lanes; l++) {
		ns->lane[l].wake = calloc(STUB_HOSTS, sizeof(*ns->lane[l].wake));
		assert_non_null(ns->lane[l].wake);
		ns->lane[l].eng = &s->eng;
	}
	for (uint32_t i = 0; i < STUB_HOSTS; i++)
		stub_add_nic(s, i, i * lanes / STUB_HOSTS);
	s->out_f = open_memstream(&s->out, &s->out_len);
	assert_non_null(s->out_f);
}

static void stub_free(struct stub *s)
{
	for (uint32_t i = 0; i < s->ns.n_colls; i++)
		coll_free(s->ns.colls[i]);
	free(s->ns.colls);
	for (uint32_t i = 0; i < s->ns.n; i++)
		ne_nic_destroy(s->ns.h[i].nic);
	for (uint32_t l = 0; l < s->ns.n_lanes; l++)
		free(s->ns.lane[l].wake);
	free(s->ns.lane);
	free(s->ns.h);
	free(s->ns.by_host);
	dp_engine_free(&s->eng);
	free(s->lp_seq);
	topo_free(s->topo);
	fclose(s->out_f);
	free(s->out);
}

/* Add collective spec at start_ns and set it going (its first size armed). */
static struct dp_coll *stub_coll(struct stub *s, const char *spec, uint64_t start_ns)
{
	char err[512];

	assert_int_equal(dp_nics_add_coll(&s->ns, spec, start_ns, s->out_f, err, sizeof(err)), 0);
	assert_int_equal(dp_nics_colls_begin(&s->ns, err, sizeof(err)), 0);
	return s->ns.colls[s->ns.n_colls - 1];
}

/*
 * Run until no timer is left (a sweep in lanes: each next size scheduled as
 * rocelab-dp's loop does once every lane ended one, dp_nics_sizes_next).
 */
static void stub_run(struct stub *s)
{
	while (dp_engine_step_virtual(&s->eng, UINT64_MAX))
		if (s->ns.n_lanes > 1)
			assert_int_equal(dp_nics_sizes_next(&s->ns, s->eng.now_ns), 0);
	fflush(s->out_f);
}

/* The result lines (those not starting '#') of s's output, in order, into line[max]; their count. */
static int result_lines(const struct stub *s, char line[][160], int max)
{
	int n = 0;

	for (const char *l = s->out; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		if (l[0] != '#' && n < max)
			snprintf(line[n], 160, "%.*s", (int)len, l);
		n += l[0] != '#';
		l += len + (nl != NULL);
	}
	return n;
}

struct nccl_line {
	unsigned long long size, count;
	char type[16], redop[16];
	int root;
	double time_us, algbw, busbw;
	long wrong;
	char ip[4][16]; /* the in-place four, as printed */
};

/* An nccl-tests line: its 13 columns. */
static void scan_line(const char *line, struct nccl_line *r)
{
	assert_int_equal(sscanf(line, "%llu %llu %15s %15s %d %lf %lf %lf %ld %15s %15s %15s %15s", &r->size,
				&r->count, r->type, r->redop, &r->root, &r->time_us, &r->algbw, &r->busbw,
				&r->wrong, r->ip[0], r->ip[1], r->ip[2], r->ip[3]),
			 13);
}

/* An nccl-tests line: its out-of-place columns, and the in-place four "N/A" (not run). */
static void parse_line(const char *line, struct nccl_line *r)
{
	scan_line(line, r);
	for (int i = 0; i < 4; i++)
		assert_string_equal(r->ip[i], "N/A");
}

/* One size: one nccl-tests line, its size and count (float: 4 bytes an element), checked data. */
static void test_one_size(void **state)
{
	struct stub s;
	char line[4][160];
	struct nccl_line r;

	(void)state;
	stub_init(&s, 1);
	struct dp_coll *c = stub_coll(&s, "op=allreduce,sizes=128K,data=on", 0);
	stub_run(&s);
	assert_int_equal(result_lines(&s, line, 4), 1);
	parse_line(line[0], &r);
	assert_int_equal(r.size, 131072);
	assert_int_equal(r.count, 131072 / 4);
	assert_string_equal(r.type, "float");
	assert_string_equal(r.redop, "sum");
	assert_int_equal(r.root, -1);
	assert_int_equal(r.wrong, 0);
	/* algbw = size / time (GB/s, 1e9 B/s); busbw = algbw x 2(n-1)/n = 1.5 at 4 ranks (nccl-tests' PERFORMANCE.md) */
	assert_true(r.time_us > 0);
	assert_float_equal(r.algbw, 131072 / (r.time_us * 1e3), 0.01);
	assert_float_equal(r.busbw, r.algbw * 1.5, 0.01);
	/* nccl-tests' closing lines: no wrong element, the average busbw is the one size's */
	char avg[64];
	snprintf(avg, sizeof(avg), "# Avg bus bandwidth    : %g \n", c->done[0].res.busbw);
	assert_non_null(strstr(s.out, "# Out of bounds values : 0 OK\n"));
	assert_non_null(strstr(s.out, avg));
	assert_float_equal(c->done[0].res.busbw, r.busbw, 0.005);
	/* a ring AllReduce: 2(n-1) steps, each rank receives one slice per step (128K / 4 < chunk) */
	assert_int_equal(c->sum.transfers_done, 2 * 3 * 4);
	assert_true(c->finished);
	assert_false(c->failed);
	assert_int_equal(c->sizes_done, 1);
	stub_free(&s);
}

/*
 * Run s's one collective c, noting when each size started (its run made,
 * coll_start_size) and ended (sizes_done counted it). Returns the sizes seen.
 */
static int run_timed(struct stub *s, const struct dp_coll *c, uint64_t *start, uint64_t *end, int max)
{
	int started = 0;
	uint32_t done = 0;
	bool running = false;

	while (dp_engine_step_virtual(&s->eng, UINT64_MAX)) {
		uint64_t now = s->eng.now_ns;
		if (!running && c->run && !c->run_ended && started < max)
			start[started++] = now;
		if (c->sizes_done > done && done < (uint32_t)max)
			end[done] = now;
		done = c->sizes_done;
		running = c->run && !c->run_ended;
	}
	fflush(s->out_f);
	return started;
}

/* c's totals (coll_print_totals) into buf. */
static void totals(const struct dp_coll *c, char *buf, size_t len)
{
	FILE *f = fmemopen(buf, len, "w");

	assert_non_null(f);
	coll_print_totals(c, f);
	assert_int_equal(fclose(f), 0);
}

/*
 * A sweep 64K:256K: three sizes, doubling, in order, the first at its start
 * time, each next one 10 us (DP_COLL_SIZE_GAP_NS: nccl-tests' host work
 * between sizes) after the one before ended; each line's time is its size's.
 */
static void test_sweep(void **state)
{
	static const unsigned long long size[3] = {65536, 131072, 262144};
	struct stub s;
	char line[4][160], sum[1024];
	uint64_t start[4], end[4];
	struct nccl_line r;

	(void)state;
	stub_init(&s, 1);
	struct dp_coll *c = stub_coll(&s, "op=allreduce,sizes=64K:256K,data=on", 5000);
	assert_int_equal(run_timed(&s, c, start, end, 4), 3);
	assert_int_equal(c->sizes_done, 3);
	assert_true(c->finished);
	assert_false(c->failed);
	assert_int_equal(result_lines(&s, line, 4), 3);
	assert_int_equal(start[0], 5000);
	for (int k = 0; k < 3; k++) {
		parse_line(line[k], &r);
		assert_int_equal(r.size, size[k]);
		assert_int_equal(r.count, size[k] / 4);
		assert_int_equal(r.wrong, 0);
		assert_true(end[k] > start[k]);
		assert_float_equal(r.time_us, (double)(end[k] - start[k]) / 1e3, 0.006);
		if (k > 0)
			assert_int_equal(start[k], end[k - 1] + 10000);
	}
	/* 24 messages a size (test_one_size: every slice under the chunk), 3 sizes */
	totals(c, sum, sizeof(sum));
	assert_non_null(strstr(sum, " messages=72 "));
	assert_int_equal(c->sum.transfers_done, 72);
	stub_free(&s);
}

/*
 * spec run whole (one lane) and split by rank into two lanes (h0, h1 | h2,
 * h3): the same lines (results, active QPs, latency) and the same totals.
 */
static void same_in_lanes(const char *spec, uint32_t sizes)
{
	struct stub one, two;
	char sum1[1024], sum2[1024];

	assert_true(dp_nics_coll_splits(spec));
	stub_init(&one, 1);
	stub_init(&two, 2);
	struct dp_coll *c1 = stub_coll(&one, spec, 0), *c2 = stub_coll(&two, spec, 0);
	assert_false(c1->split);
	assert_true(c2->split);
	stub_run(&one);
	stub_run(&two);
	assert_int_equal(c1->sizes_done, sizes);
	assert_int_equal(c2->sizes_done, sizes);
	assert_true(c2->finished);
	assert_false(c2->failed);
	assert_int_equal(c2->lanes_ended, 2);
	assert_int_equal(result_lines(&two, NULL, 0), (int)sizes);
	assert_string_equal(one.out, two.out);
	totals(c1, sum1, sizeof(sum1));
	totals(c2, sum2, sizeof(sum2));
	assert_string_equal(sum1, sum2);
	stub_free(&one);
	stub_free(&two);
}

static void test_lanes_one_size(void **state)
{
	(void)state;
	same_in_lanes("op=allreduce,sizes=128K,data=on,iters=1,warmup=0", 1);
}

/* A sweep in lanes: each next size a global event once both lanes ended one (dp_nics_sizes_next). */
static void test_lanes_sweep(void **state)
{
	(void)state;
	same_in_lanes("op=allreduce,sizes=64K:256K,data=on,iters=1,warmup=0", 3);
}

/* Lanes with proxy costs (each lane its ranks' proxy threads) and an AllToAll. */
static void test_lanes_proxy_alltoall(void **state)
{
	(void)state;
	same_in_lanes("op=allreduce,sizes=256K,data=off,iters=1,warmup=0,model=nccl,"
		      "NCCL_IB_QPS_PER_CONNECTION=4,NCCL_IB_SPLIT_DATA_ON_QPS=1,"
		      "proxy_post_wqe=200ns,proxy_poll_cqe=100ns", 1);
	same_in_lanes("op=alltoall,sizes=64K,data=on,iters=1,warmup=0,qps=2", 1);
}

/*
 * inplace=on: each size runs twice, out-of-place then in-place, the second
 * 10 us after the first ended, as the next size after it; one line per size
 * with both halves measured (each the time of its own run) and checked; the
 * comment lines after it; the average over the four halves.
 */
static void test_in_place_sweep(void **state)
{
	struct stub s;
	char line[4][160], sum[1024], avg[64];
	uint64_t start[8], end[8];
	struct nccl_line r[2];

	(void)state;
	stub_init(&s, 1);
	struct dp_coll *c = stub_coll(&s, "op=allreduce,sizes=64K:128K,data=on,inplace=on", 5000);
	assert_int_equal(run_timed(&s, c, start, end, 8), 4); /* (2 sizes x 2 passes) */
	assert_int_equal(c->sizes_done, 2);
	assert_true(c->finished);
	assert_false(c->failed);
	assert_int_equal(result_lines(&s, line, 4), 2);
	for (int k = 0; k < 2; k++) {
		scan_line(line[k], &r[k]);
		assert_int_equal(r[k].size, 65536u << k);
		assert_int_equal(r[k].wrong, 0);
		assert_string_equal(r[k].ip[3], "0"); /* (#wrong in place) */
		/* out-of-place: from its start to 10 us before the in-place pass's */
		assert_float_equal(r[k].time_us, (double)(start[2 * k + 1] - 10000 - start[2 * k]) / 1e3, 0.006);
		/* in-place: from its start to the size's end */
		assert_float_equal(strtod(r[k].ip[0], NULL), (double)(end[k] - start[2 * k + 1]) / 1e3, 0.006);
		assert_true(c->done[k].has_in_place);
		assert_float_equal(strtod(r[k].ip[2], NULL), c->done[k].in_place.busbw, 0.005);
	}
	assert_int_equal(start[2], end[0] + 10000);
	/* each line before its own comment lines: none before the first, one between, one after the last */
	const char *l0 = strstr(s.out, line[0]), *l1 = strstr(s.out, line[1]), *a0 = strstr(s.out, "# active QPs");
	assert_true(l0 && l1 && a0 && l0 < a0 && a0 < l1);
	const char *a1 = strstr(a0 + 1, "# active QPs");
	assert_true(a1 && a1 > l1 && strstr(a1 + 1, "# active QPs") == NULL);
	/* nccl-tests' average: over both halves of each size */
	snprintf(avg, sizeof(avg), "# Avg bus bandwidth    : %g \n",
		 (c->done[0].res.busbw + c->done[0].in_place.busbw + c->done[1].res.busbw +
		  c->done[1].in_place.busbw) / 4);
	assert_non_null(strstr(s.out, avg));
	assert_non_null(strstr(s.out, "# Out of bounds values : 0 OK\n"));
	/* both passes' messages: 24 a run */
	totals(c, sum, sizeof(sum));
	assert_int_equal(c->sum.transfers_done, 96);
	stub_free(&s);
}

/* AllToAll in place: run and timed, its #wrong N/A as nccl-tests' (it does not support it). */
static void test_in_place_alltoall(void **state)
{
	struct stub s;
	char line[2][160];
	struct nccl_line r;

	(void)state;
	stub_init(&s, 1);
	struct dp_coll *c = stub_coll(&s, "op=alltoall,sizes=64K,data=on,inplace=on", 0);
	stub_run(&s);
	assert_true(c->finished);
	assert_false(c->failed);
	assert_int_equal(result_lines(&s, line, 2), 1);
	scan_line(line[0], &r);
	assert_int_equal(r.wrong, 0);
	assert_true(strtod(r.ip[0], NULL) > 0);
	assert_string_equal(r.ip[3], "N/A");
	assert_non_null(strstr(s.out, "# Out of bounds values : 0 OK\n"));
	stub_free(&s);
}

/* A run stopped between a size's passes: its line still comes out, the in-place half N/A. */
static void test_in_place_stopped(void **state)
{
	struct stub s;
	char line[2][160];
	struct nccl_line r;

	(void)state;
	stub_init(&s, 1);
	struct dp_coll *c = stub_coll(&s, "op=allreduce,sizes=64K,data=on,inplace=on", 0);
	while (!c->in_place_pass && dp_engine_step_virtual(&s.eng, UINT64_MAX))
		;
	assert_true(c->in_place_pass);
	fflush(s.out_f);
	assert_int_equal(result_lines(&s, line, 2), 0); /* (held) */
	dp_nics_colls_release(&s.ns);
	fflush(s.out_f);
	assert_int_equal(result_lines(&s, line, 2), 1);
	parse_line(line[0], &r);
	assert_int_equal(r.wrong, 0);
	assert_non_null(strstr(s.out, "# active QPs"));
	stub_free(&s);
}

/*
 * The in-place pass runs on its out-of-place pass's QP numbers (NCCL keeps a
 * communicator's QPs; new numbers would hash to other paths); the next size
 * takes new ones.
 */
static void test_in_place_same_qpns(void **state)
{
	struct stub s;
	struct ne_coll_conn_info ci;
	uint32_t qpn[3];

	(void)state;
	stub_init(&s, 1);
	struct dp_coll *c = stub_coll(&s, "op=allreduce,sizes=64K:128K,data=on,inplace=on", 0);
	for (int k = 0; k < 3; k++) {
		bool want_ip = k == 1;
		/* (each run: once it started, its QPs are the ones of conn 0) */
		while (!(c->run && !c->run_ended && c->in_place_pass == want_ip && c->size == (65536u << (k / 2))))
			assert_true(dp_engine_step_virtual(&s.eng, UINT64_MAX));
		assert_int_equal(ne_coll_conn_info(c->run, 0, &ci), 0);
		qpn[k] = ci.src_data_qpn[0];
		while (c->run && !c->run_ended && dp_engine_step_virtual(&s.eng, UINT64_MAX))
			;
	}
	stub_run(&s);
	assert_int_equal(qpn[1], qpn[0]);
	assert_true(qpn[2] != qpn[0]);
	assert_true(c->finished);
	assert_false(c->failed);
	for (uint32_t i = 0; i < s.ns.n; i++) { /* (no frame of a pass matched the other's QPs) */
		struct ne_counters n;
		ne_nic_get_counters(s.ns.h[i].nic, &n);
		assert_int_equal(n.retrans_pkts + n.naks_sent + n.duplicate_request, 0);
	}
	stub_free(&s);
}

/* In lanes: the same lines as on one engine, both passes. */
static void test_lanes_in_place(void **state)
{
	(void)state;
	same_in_lanes("op=allreduce,sizes=64K:128K,data=on,iters=1,warmup=0,inplace=on", 2);
}

/*
 * Two collectives on disjoint hosts: each one's lines tagged with its place
 * ("[c1] ", "# [c1]"), one result line each, both finished.
 */
static void test_two_tagged(void **state)
{
	struct stub s;
	char line[4][160];

	(void)state;
	stub_init(&s, 1);
	dp_nics_tag_colls(&s.ns, true);
	struct dp_coll *a = stub_coll(&s, "op=allreduce,sizes=64K,hosts=h0+h1", 0);
	struct dp_coll *b = stub_coll(&s, "op=alltoall,sizes=32K,hosts=h2+h3", 0);
	stub_run(&s);
	assert_true(a->finished && b->finished);
	assert_false(a->failed || b->failed);
	assert_int_equal(result_lines(&s, line, 4), 2);
	int c1 = 0, c2 = 0;
	for (const char *l = s.out, *nl; *l; l = nl + 1) {
		assert_non_null(nl = strchr(l, '\n')); /* (every line ends in one) */
		bool t1 = strncmp(l, "[c1] ", 5) == 0 || strncmp(l, "# [c1]", 6) == 0;
		bool t2 = strncmp(l, "[c2] ", 5) == 0 || strncmp(l, "# [c2]", 6) == 0;
		assert_true(t1 || t2);
		c1 += strncmp(l, "[c1] ", 5) == 0;
		c2 += strncmp(l, "[c2] ", 5) == 0;
	}
	assert_int_equal(c1, 1);
	assert_int_equal(c2, 1);
	stub_free(&s);
}

/* Bad specs: refused with the key and why, nothing of them left. */
static void test_bad_specs(void **state)
{
	struct stub s;
	char err[512];

	(void)state;
	stub_init(&s, 1);
	assert_int_equal(dp_nics_add_coll(&s.ns, "op=allreduce,hosts=h0+h0", 0, s.out_f, err, sizeof(err)), -1);
	assert_string_equal(err, "--coll: hosts=h0+h0: host 'h0' twice");
	assert_int_equal(dp_nics_add_coll(&s.ns, "op=allreduce,hosts=h0+h9", 0, s.out_f, err, sizeof(err)), -1);
	assert_string_equal(err, "--coll: hosts=h0+h9: no host 'h9' in the topology");
	assert_int_equal(dp_nics_add_coll(&s.ns, "op=allreduce,hosts=h0", 0, s.out_f, err, sizeof(err)), -1);
	assert_string_equal(err, "--coll: needs at least 2 emulated hosts (has 1)");
	assert_int_equal(s.ns.n_colls, 0);
	stub_coll(&s, "op=allreduce,hosts=h0+h1", 0);
	assert_int_equal(dp_nics_add_coll(&s.ns, "op=allreduce,hosts=h1+h2", 0, s.out_f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "host h1 is a rank of collective 1 already"));
	assert_int_equal(s.ns.n_colls, 1);
	assert_int_equal(s.ns.h[2].coll_rank, -1);
	stub_run(&s);
	stub_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_size),
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_lanes_one_size),
		cmocka_unit_test(test_lanes_sweep),
		cmocka_unit_test(test_lanes_proxy_alltoall),
		cmocka_unit_test(test_in_place_sweep),
		cmocka_unit_test(test_in_place_alltoall),
		cmocka_unit_test(test_in_place_stopped),
		cmocka_unit_test(test_in_place_same_qpns),
		cmocka_unit_test(test_lanes_in_place),
		cmocka_unit_test(test_two_tagged),
		cmocka_unit_test(test_bad_specs),
	};


	return cmocka_run_group_tests(tests, NULL, NULL);
}
