/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocelab-dp: a whole Clos fabric (switches, links, buffers, PFC, ECMP) in
 * one DPDK process, with real hosts on DPDK ports and in-process packet
 * sources, on a live or a virtual clock.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "dp_capture.h"
#include "dp_ctl.h"
#include "dp_engine.h"
#include "dp_fabric.h"
#include "dp_gen.h"
#include "dp_nic.h"
#include "dp_port.h"
#include "dp_stats.h"
#include "dp_units.h"
#include "topo.h"
#include "topo_traffic.h"

#define EXIT_BAD_INPUT 2
#define MAX_CAPTURES 16
/*
 * Longest spec of each kind the data plane's parsers read whole: they copy
 * it into fixed buffers (dp_gen.c 512, dp_nic.c 160 for --rdma, 2048 for
 * --coll) and would parse a longer one cut short. A traffic file can hold
 * longer entries (e.g. a collective naming hundreds of hosts), so they are
 * refused at their line instead.
 */
#define GEN_SPEC_MAX 511
#define RDMA_SPEC_MAX 159
#define COLL_SPEC_MAX 2047
#define EAL_ARGS_MAX 256
#define IDLE_SLEEP_MAX_NS 20000 /* live mode: longest nap when idle (docs/DESIGN.md: tens of us) */

/* Traffic specs in the --gen/--rdma language; no fixed limit. */
struct spec_list {
	const char **spec;
	const char **where; /* NULL: from a flag; else FILE:LINE in the traffic file */
	unsigned n, cap;
};

struct opts {
	const char *topology;
	unsigned clos[3];
	bool check;
	bool list_hosts;
	enum dp_clock_mode clock;
	uint64_t duration_ns;
	struct spec_list gen;   /* --gen and the traffic file's generators */
	struct spec_list rdma;  /* --rdma and the traffic file's rdma transfers */
	const char *coll;
	const char *coll_where; /* NULL: --coll; else its FILE:LINE in the traffic file */
	const char *traffic;    /* --traffic FILE */
	struct dp_nic_opts nic;
	bool te;
	bool watchdog;
	struct pfc_watchdog_config wd;
	const char *capture[MAX_CAPTURES];
	unsigned n_capture;
	enum dp_veth_driver veth;
	const char *csv;
	uint64_t csv_interval_ns;
	bool busy_poll;
	bool quiet;
	uint32_t flows;
	uint64_t seed;
	const char *name;
	unsigned mem_mb;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rocelab-dp (--topology FILE | --clos S,L,H) [options]\n"
		"       rocelab-dp --check --topology FILE\n"
		"\n"
		"Run every switch and link of a topology in one DPDK process.\n"
		"\n"
		"  --topology FILE     YAML topology (see topologies/README.md)\n"
		"  --clos S,L,H        built-in 2-tier Clos: S spines, L leaves, H hosts per leaf\n"
		"  --check             validate the topology and exit (0 valid, 2 invalid); no DPDK\n"
		"  --list-hosts        print NAME ATTACH IFNAME IPV4/24 GW MAC MTU IPV6/64 GW6 per host; no DPDK\n"
		"  --clock live|virtual  live: real time, hosts on DPDK ports (default);\n"
		"                      virtual: simulated time, hosts are sinks, traffic from --gen\n"
		"  --duration TIME     stop after TIME (e.g. 10s, 500ms); virtual default: when idle\n"
		"  --gen SPEC          in-process traffic SRC>DST[:key=value,...] (repeatable;\n"
		"                      keys proto,flows,sport,size,rate,count,start,dscp,ttl)\n"
		"  --rdma SPEC         RDMA WRITEs between emulated NICs SRC>DST[:key=value,...]\n"
		"                      (repeatable; keys qps,size,count,depth,mtu,dscp,sport,start;\n"
		"                      the data is verified; a failed transfer makes the exit status 1)\n"
		"  --coll SPEC         a collective over emulated NICs, nccl-tests-like lines per size\n"
		"                      (keys op,hosts,sizes,qps,mode,channels,chunk,window,cts,sport,\n"
		"                      iters,warmup,data; model=nccl, NCCL_*, proxy_post_wqe,\n"
		"                      proxy_poll_cqe go to ne_coll; see dataplane/dp_nic.h)\n"
		"  --traffic FILE      generators, rdma transfers and a collective from a YAML file\n"
		"                      (the keys of --gen, --rdma, --coll; no limit on entries;\n"
		"                      see topologies/README.md); adds to the flags\n"
		"  --nic qpc=N,miss=TIME[,hold=on]  emulated NICs hold N QP contexts; a miss costs\n"
		"                      TIME; hold=on keeps a fetched context until its QP has sent;\n"
		"                      quantum=BYTES: deficit round robin among ready QPs;\n"
		"                      msgrate=N: at most N messages per second per NIC\n"
		"  --pfc-watchdog [detect=T,restore=T,poll=T,action=drop|forward]\n"
		"                      PFC watchdog on switch egress (SONiC defaults 200ms/200ms/100ms, drop)\n"
		"  --te                traffic engineering: a controller places each connection of\n"
		"                      the --coll on the leaf-spine-leaf path with most capacity left\n"
		"                      (again after failures); other traffic uses ECMP\n"
		"  --veth af_packet|af_xdp  driver for veth hosts (default af_packet)\n"
		"  --capture LINK=FILE write LINK's frames (both directions) to a pcap (repeatable)\n"
		"  --csv FILE          per-link time series (utilisation, queue, pause, drops)\n"
		"  --csv-interval TIME sample period of --csv (default 100ms)\n"
		"  --busy-poll         live mode: never sleep (for benchmarks)\n"
		"  --flows N           record the path of up to N flows (default 65536, 0: off)\n"
		"  --seed N            seed of link loss, flowlet choices and emulated NICs' QPNs (default 1)\n"
		"  --name NAME         DPDK file prefix / telemetry name (default rocelab-PID)\n"
		"  --mem MB            DPDK memory without hugepages (default 512)\n"
		"  --quiet             no tables at exit\n"
		"  -h, --help          this text\n"
		"\n"
		"While it runs: DPDK telemetry under /rocelab/ (dpdk-telemetry.py -f NAME, or\n"
		"scripts/rocelab-stats NAME); SIGINT/SIGTERM stop it and print the tables.\n"
		"Exit status: 0 ok, 1 runtime failure, 2 bad input.\n");
}

/* Append spec (where: NULL or its FILE:LINE). Returns 0, or -ENOMEM. */
static int spec_push(struct spec_list *l, const char *spec, const char *where)
{
	if (l->n == l->cap) {
		unsigned cap = l->cap ? 2 * l->cap : 16;
		const char **s = realloc(l->spec, cap * sizeof(*s));
		if (s)
			l->spec = s;
		const char **w = s ? realloc(l->where, cap * sizeof(*w)) : NULL;
		if (!w)
			return -ENOMEM;
		l->where = w;
		l->cap = cap;
	}
	l->spec[l->n] = spec;
	l->where[l->n++] = where;
	return 0;
}

static void spec_list_free(struct spec_list *l)
{
	free(l->spec);
	free(l->where);
	memset(l, 0, sizeof(*l));
}

static int bad(const char *what, const char *arg)
{
	fprintf(stderr, "rocelab-dp: %s '%s' (see --help)\n", what, arg ? arg : "");
	return EXIT_BAD_INPUT;
}

static int watchdog_kv(void *ctx, const char *k, const char *v)
{
	struct pfc_watchdog_config *w = ctx;

	if (strcmp(k, "detect") == 0)
		return dp_parse_time(v, &w->detect_ns);
	if (strcmp(k, "restore") == 0)
		return dp_parse_time(v, &w->restore_ns);
	if (strcmp(k, "poll") == 0)
		return dp_parse_time(v, &w->poll_ns);
	if (strcmp(k, "action") == 0 && strcmp(v, "drop") == 0)
		return w->action = PFC_WD_DROP, 0;
	if (strcmp(k, "action") == 0 && strcmp(v, "forward") == 0)
		return w->action = PFC_WD_FORWARD, 0;
	return -1;
}

/* "detect=200ms,restore=200ms,poll=100ms,action=drop" over the defaults in w. */
static int parse_watchdog(const char *spec, struct pfc_watchdog_config *w)
{
	char buf[128];
	const char *bad;

	if (strlen(spec) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", spec);
	return dp_kv_each(buf, watchdog_kv, w, &bad);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_TOPO = 256, O_CLOS, O_CHECK, O_LIST, O_CLOCK, O_DUR, O_GEN, O_VETH, O_CAP, O_CSV, O_CSVI,
	       O_BUSY, O_SEED, O_NAME, O_MEM, O_QUIET, O_RDMA, O_FLOWS, O_COLL, O_NIC, O_TE, O_WD,
	       O_TRAFFIC };
	static const struct option lo[] = {
		{"topology", required_argument, NULL, O_TOPO}, {"clos", required_argument, NULL, O_CLOS},
		{"check", no_argument, NULL, O_CHECK},         {"list-hosts", no_argument, NULL, O_LIST},         {"clock", required_argument, NULL, O_CLOCK},
		{"duration", required_argument, NULL, O_DUR},  {"gen", required_argument, NULL, O_GEN},
		{"veth", required_argument, NULL, O_VETH},     {"capture", required_argument, NULL, O_CAP},
		{"csv", required_argument, NULL, O_CSV},       {"csv-interval", required_argument, NULL, O_CSVI},
		{"busy-poll", no_argument, NULL, O_BUSY},      {"seed", required_argument, NULL, O_SEED},
		{"name", required_argument, NULL, O_NAME},     {"mem", required_argument, NULL, O_MEM},
		{"quiet", no_argument, NULL, O_QUIET},         {"help", no_argument, NULL, 'h'},
		{"rdma", required_argument, NULL, O_RDMA},     {"flows", required_argument, NULL, O_FLOWS},
		{"coll", required_argument, NULL, O_COLL},     {"nic", required_argument, NULL, O_NIC},
		{"te", no_argument, NULL, O_TE},               {"pfc-watchdog", optional_argument, NULL, O_WD},
		{"traffic", required_argument, NULL, O_TRAFFIC},
		{NULL, 0, NULL, 0},
	};
	int c;
	uint64_t v;

	memset(o, 0, sizeof(*o));
	o->csv_interval_ns = 100000000ull;
	o->seed = 1;
	o->mem_mb = 512;
	pfc_watchdog_config_default(&o->wd);
	o->flows = 65536;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case O_TOPO: o->topology = optarg; break;
		case O_CLOS:
			if (sscanf(optarg, "%u,%u,%u", &o->clos[0], &o->clos[1], &o->clos[2]) != 3)
				return bad("bad --clos, want S,L,H:", optarg);
			break;
		case O_CHECK: o->check = true; break;
		case O_LIST: o->list_hosts = true; break;
		case O_CLOCK:
			if (strcmp(optarg, "live") == 0)
				o->clock = DP_CLOCK_LIVE;
			else if (strcmp(optarg, "virtual") == 0)
				o->clock = DP_CLOCK_VIRTUAL;
			else
				return bad("bad --clock (live or virtual):", optarg);
			break;
		case O_DUR:
			if (dp_parse_time(optarg, &o->duration_ns) < 0)
				return bad("bad --duration (e.g. 10s, 250ms):", optarg);
			break;
		case O_GEN:
			if (spec_push(&o->gen, optarg, NULL) < 0)
				return bad("out of memory for --gen", optarg);
			break;
		case O_RDMA:
			if (spec_push(&o->rdma, optarg, NULL) < 0)
				return bad("out of memory for --rdma", optarg);
			break;
		case O_COLL: o->coll = optarg; break;
		case O_TRAFFIC: o->traffic = optarg; break;
		case O_TE: o->te = true; break;
		case O_WD:
			o->watchdog = true;
			if (optarg && parse_watchdog(optarg, &o->wd) < 0)
				return bad("bad --pfc-watchdog (detect=T,restore=T,poll=T,action=drop|forward):",
					   optarg);
			break;
		case O_NIC:
			if (dp_nic_opts_parse(&o->nic, optarg) < 0)
				return bad("bad --nic (qpc=N,miss=TIME,hold=on|off,quantum=BYTES,msgrate=N):", optarg);
			break;
		case O_VETH:
			if (strcmp(optarg, "af_packet") == 0)
				o->veth = DP_VETH_AF_PACKET;
			else if (strcmp(optarg, "af_xdp") == 0)
				o->veth = DP_VETH_AF_XDP;
			else
				return bad("bad --veth (af_packet or af_xdp):", optarg);
			break;
		case O_CAP:
			if (o->n_capture == MAX_CAPTURES || strchr(optarg, '=') == NULL)
				return bad("bad --capture, want LINK=FILE (at most 16):", optarg);
			o->capture[o->n_capture++] = optarg;
			break;
		case O_CSV: o->csv = optarg; break;
		case O_CSVI:
			if (dp_parse_time(optarg, &o->csv_interval_ns) < 0 || o->csv_interval_ns == 0)
				return bad("bad --csv-interval:", optarg);
			break;
		case O_BUSY: o->busy_poll = true; break;
		case O_SEED:
			if (dp_parse_u64(optarg, &o->seed) < 0)
				return bad("bad --seed:", optarg);
			break;
		case O_NAME: o->name = optarg; break;
		case O_MEM:
			if (dp_parse_u64(optarg, &v) < 0 || v < 64 || v > 65536)
				return bad("bad --mem (64..65536 MB):", optarg);
			o->mem_mb = (unsigned)v;
			break;
		case O_QUIET: o->quiet = true; break;
		case O_FLOWS:
			if (dp_parse_u64(optarg, &v) < 0 || v > (1u << 24))
				return bad("bad --flows (0..16777216):", optarg);
			o->flows = (uint32_t)v;
			break;
		case 'h': usage(stdout); exit(0);
		default: return bad("unknown or incomplete option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bad("unexpected argument", argv[optind]);
	if (!o->topology && !o->clos[0])
		return bad("a topology is needed: --topology FILE or --clos S,L,H", NULL);
	if (o->topology && o->clos[0])
		return bad("give either --topology or --clos, not both", NULL);
	return 0;
}

static uint64_t tsc_ns(void *ctx)
{
	static __thread uint64_t hz;

	(void)ctx;
	if (hz == 0)
		hz = rte_get_tsc_hz();
	uint64_t c = rte_rdtsc();
	return (uint64_t)((__uint128_t)c * 1000000000u / hz);
}

struct run {
	struct opts *o;
	struct topo *topo;
	struct dp_engine eng;
	struct rte_mempool *mp;
	struct dp_fabric *fab;
	struct dp_ports ports;
	struct dp_gen *gens;             /* [o->gen.n] */
	struct topo_traffic *traffic;    /* --traffic: owns the file's specs */
	struct dp_capture *cap[MAX_CAPTURES];
	struct dp_csv csv;
	struct dp_ctl *ctl;
	struct dp_nics nics;
	struct dp_te te;
	uint64_t start_ns;
	char *eal_argv[EAL_ARGS_MAX]; /* the strings, freed after rte_eal_cleanup() */
	char *eal_perm[EAL_ARGS_MAX]; /* the array handed to EAL, which permutes it */
	int eal_argc;
};

/*
 * What reaches a host: an emulated NIC takes it, a DPDK port sends it, and
 * otherwise (virtual clock) it was counted by the fabric and is dropped here.
 */
static void host_rx(void *ctx, struct dp_host *h, struct rte_mbuf *m, uint64_t now_ns)
{
	struct run *r = ctx;

	if (dp_nics_owns(&r->nics, h->idx))
		dp_nics_rx(&r->nics, h, m, now_ns);
	else if (r->o->clock == DP_CLOCK_LIVE)
		dp_port_host_rx(&r->ports, h, m, now_ns);
	else
		rte_pktmbuf_free(m);
}

static void on_csv(void *obj, uint64_t arg, uint64_t now)
{
	struct run *r = obj;

	(void)arg;
	dp_csv_sample(&r->csv, r->fab, now);
	dp_timer_add(&r->eng, now + r->o->csv_interval_ns, on_csv, r, 0);
}

static int eal_init(struct run *r, char *err, size_t errlen)
{
	char **argv = r->eal_argv;
	int argc = 0;
	char prefix[64], mem[32];

	if (r->o->name)
		snprintf(prefix, sizeof(prefix), "--file-prefix=%s", r->o->name);
	else
		snprintf(prefix, sizeof(prefix), "--file-prefix=rocelab-%d", (int)getpid());
	snprintf(mem, sizeof(mem), "-m%u", r->o->mem_mb);
	char *fixed[] = {"rocelab-dp", "-l0", "--no-huge", mem, prefix, "--log-level=*:warning"};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		argv[argc++] = strdup(fixed[i]);
	int prc = r->o->clock == DP_CLOCK_LIVE
			  ? dp_port_eal_args(r->topo, r->o->veth, argv, &argc, EAL_ARGS_MAX, err, errlen)
			  : 0;
	if (r->o->clock == DP_CLOCK_VIRTUAL && argc < EAL_ARGS_MAX)
		argv[argc++] = strdup("--no-pci");
	r->eal_argc = argc;
	if (prc < 0)
		return -1;
	/* rte_eal_init() permutes argv: hand it a copy of the array, keep ours to free */
	memcpy(r->eal_perm, argv, (size_t)argc * sizeof(*argv));
	int rc = rte_eal_init(argc, r->eal_perm);
	if (rc < 0) {
		snprintf(err, errlen, "EAL init failed: %s", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

static bool gens_active(const struct run *r)
{
	for (unsigned i = 0; i < r->o->gen.n; i++)
		if (!dp_gen_done(&r->gens[i]))
			return true;
	return false;
}

static void run_virtual(struct run *r)
{
	/* returns when the duration is reached, traffic is done, or nothing is scheduled */
	uint64_t until = r->o->duration_ns ? r->o->duration_ns : UINT64_MAX;
	time_t last_progress = time(NULL);

	while (!stop_requested && dp_engine_step_virtual(&r->eng, until)) {
		if (r->ctl)
			dp_ctl_poll(r->ctl, r->eng.now_ns); /* telemetry link_set/switch_set */
		/* without --duration, stop when traffic is done and the fabric drained */
		if (!r->o->duration_ns && !gens_active(r) && !dp_nics_active(&r->nics)) {
			bool busy = false;
			for (uint32_t i = 0; i < r->fab->n_chans && !busy; i++)
				busy = r->fab->chans[i].tx_busy || r->fab->chans[i].wire.n ||
				       dp_chan_queued_bytes(&r->fab->chans[i]);
			if (!busy)
				break;
		}
		time_t t = time(NULL);
		if (t != last_progress && !r->o->quiet) {
			last_progress = t;
			fprintf(stderr, "rocelab-dp: virtual time %.6f s, %" PRIu64 " events\r",
				(double)r->eng.now_ns / 1e9, r->eng.fired);
		}
	}
	if (!stop_requested && dp_engine_next_ns(&r->eng) == UINT64_MAX && dp_nics_active(&r->nics))
		printf("# stalled at %.6f s: RDMA work is unfinished and no NIC has anything scheduled\n",
		       (double)r->eng.now_ns / 1e9);
}

static void run_live(struct run *r)
{
	uint64_t end = r->o->duration_ns ? r->start_ns + r->o->duration_ns : UINT64_MAX;

	prctl(PR_SET_TIMERSLACK, 1000UL); /* naps of microseconds, not the default 50 us */
	while (!stop_requested) {
		uint64_t now = dp_engine_now(&r->eng);
		if (now >= end)
			break;
		/* first what fell due since the last turn, in time order; then what the
		 * ports received, at this reading: time never runs backwards */
		uint32_t work = dp_engine_run_due(&r->eng, now);
		work += dp_port_poll(&r->ports, r->fab, dp_engine_mono(&r->eng, now));
		dp_port_flush(&r->ports);
		if (r->ctl)
			work += dp_ctl_poll(r->ctl, dp_engine_mono(&r->eng, now));
		if (work || r->o->busy_poll)
			continue;
		uint64_t next = dp_engine_next_ns(&r->eng);
		uint64_t nap = next > now ? next - now : 0;
		if (nap > IDLE_SLEEP_MAX_NS)
			nap = IDLE_SLEEP_MAX_NS;
		if (nap > 2000) {
			struct timespec ts = {0, (long)nap};
			nanosleep(&ts, NULL);
		}
	}
}

static int setup_captures(struct run *r, char *err, size_t errlen)
{
	for (unsigned i = 0; i < r->o->n_capture; i++) {
		char spec[256];
		if (strlen(r->o->capture[i]) >= sizeof(spec)) {
			snprintf(err, errlen, "--capture: argument too long");
			return -1;
		}
		snprintf(spec, sizeof(spec), "%s", r->o->capture[i]);
		char *eq = strchr(spec, '=');
		*eq = '\0';
		int l = topo_link_by_name(r->topo, spec);
		if (l < 0) {
			snprintf(err, errlen, "--capture: no link named '%s'", spec);
			return -1;
		}
		r->cap[i] = dp_capture_open(eq + 1, err, errlen);
		if (r->cap[i] == NULL)
			return -1;
		dp_capture_attach(r->cap[i], &r->fab->chans[2 * l]);
		dp_capture_attach(r->cap[i], &r->fab->chans[2 * l + 1]);
	}
	return 0;
}

/* "WHERE: err" for what came from the traffic file (where != NULL). */
static void at_where(char *err, size_t errlen, const char *where)
{
	if (!where)
		return;
	char msg[512];
	snprintf(msg, sizeof(msg), "%s", err);
	if (snprintf(err, errlen, "%s: %s", where, msg) >= (int)errlen)
		return; /* cut, as any message longer than err */
}

/*
 * --traffic FILE: its generators and rdma transfers join the flags' lists,
 * its collective takes the --coll slot (one collective per run: dp_nic.c
 * runs one), each with its FILE:LINE. *out keeps the specs. Returns 0, or
 * the exit code after printing why.
 */
static int add_traffic(struct opts *o, const struct topo *t, struct topo_traffic **out)
{
	char err[512];
	if (topo_traffic_load(o->traffic, t, out, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocelab-dp: %s\n", err);
		return EXIT_BAD_INPUT;
	}
	static const size_t spec_max[TOPO_TRAFFIC_KINDS] = {
		[TOPO_TRAFFIC_GEN] = GEN_SPEC_MAX,
		[TOPO_TRAFFIC_RDMA] = RDMA_SPEC_MAX,
		[TOPO_TRAFFIC_COLL] = COLL_SPEC_MAX,
	};
	for (uint32_t i = 0; i < (*out)->n; i++) {
		const struct topo_traffic_entry *e = &(*out)->e[i];
		int rc = 0;
		if (strlen(e->spec) > spec_max[e->kind]) {
			fprintf(stderr, "rocelab-dp: %s: this entry is %zu characters as a spec, the data "
				"plane reads at most %zu%s\n", e->where, strlen(e->spec), spec_max[e->kind],
				e->kind == TOPO_TRAFFIC_COLL ? " (name fewer hosts, or hosts: all)" : "");
			return EXIT_BAD_INPUT;
		}
		if (e->kind == TOPO_TRAFFIC_GEN)
			rc = spec_push(&o->gen, e->spec, e->where);
		else if (e->kind == TOPO_TRAFFIC_RDMA)
			rc = spec_push(&o->rdma, e->spec, e->where);
		else if (o->coll) {
			fprintf(stderr, "rocelab-dp: %s: one collective per run (dataplane/dp_nic.c runs "
				"one); the first is %s\n", e->where,
				o->coll_where ? o->coll_where : "the --coll flag");
			return EXIT_BAD_INPUT;
		} else {
			o->coll = e->spec;
			o->coll_where = e->where;
		}
		if (rc < 0) {
			fprintf(stderr, "rocelab-dp: %s: out of memory\n", e->where);
			return 1;
		}
	}
	return 0;
}

/* Free what main() holds before DPDK starts; returns rc. */
static int free_early(struct opts *o, struct run *r, int rc)
{
	free(r->gens);
	topo_traffic_free(r->traffic);
	topo_free(r->topo);
	spec_list_free(&o->gen);
	spec_list_free(&o->rdma);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct run r;
	char err[512];
	int rc = parse_opts(argc, argv, &o);

	memset(&r, 0, sizeof(r));
	r.o = &o;
	if (rc)
		return free_early(&o, &r, rc);
	if (o.check) {
		if (!o.topology)
			return free_early(&o, &r, bad("--check needs --topology FILE", NULL));
		return free_early(&o, &r, topo_check_file(o.topology, stdout, stderr));
	}
	if (o.topology) {
		if (topo_load(o.topology, &r.topo, err, sizeof(err)) < 0) {
			fprintf(stderr, "rocelab-dp: %s\n", err);
			return free_early(&o, &r, EXIT_BAD_INPUT);
		}
	} else if ((r.topo = topo_clos(o.clos[0], o.clos[1], o.clos[2], err, sizeof(err))) == NULL) {
		fprintf(stderr, "rocelab-dp: --clos: %s\n", err);
		return free_early(&o, &r, EXIT_BAD_INPUT);
	}
	if (o.list_hosts) {
		for (uint32_t h = 0; h < r.topo->n_hosts; h++) {
			const struct topo_host *hc = &r.topo->hosts[h];
			char ip[16], gw[16], mac[18], ip6[48], gw6[48];
			printf("%s %s %s %s/24 %s %s %u %s/64 %s\n", hc->name, topo_attach_name(hc->attach),
			       hc->ifname[0] ? hc->ifname : "-", topo_ipv4_str(hc->ipv4, ip, sizeof(ip)),
			       topo_ipv4_str(hc->gw_ipv4, gw, sizeof(gw)),
			       topo_mac_str(hc->mac, mac, sizeof(mac)), hc->mtu,
			       topo_ipv6_str(hc->ipv6, ip6, sizeof(ip6)),
			       topo_ipv6_str(hc->gw_ipv6, gw6, sizeof(gw6)));
		}
		return free_early(&o, &r, 0);
	}
	/* the traffic file and the generators are checked before anything starts */
	if (o.traffic && (rc = add_traffic(&o, r.topo, &r.traffic)) != 0)
		return free_early(&o, &r, rc);
	r.gens = calloc(o.gen.n + 1, sizeof(*r.gens));
	if (!r.gens)
		return free_early(&o, &r, 1);
	for (unsigned i = 0; i < o.gen.n; i++)
		if (dp_gen_parse(&r.gens[i], r.topo, o.gen.spec[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "rocelab-dp: %s: %s\n", o.gen.where[i] ? o.gen.where[i] : "--gen",
				err);
			return free_early(&o, &r, EXIT_BAD_INPUT);
		}

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (eal_init(&r, err, sizeof(err)) < 0)
		goto fail;
	/* Frames are never larger than the hosts' MTU (switches do not grow them). */
	uint32_t max_mtu = 1500;
	for (uint32_t h = 0; h < r.topo->n_hosts; h++) {
		if (r.topo->hosts[h].mtu > max_mtu)
			max_mtu = r.topo->hosts[h].mtu;
		if (r.topo->hosts[h].attach == TOPO_ATTACH_EMULATED && max_mtu < NE_MAX_FRAME)
			max_mtu = NE_MAX_FRAME; /* RoCE path MTU 4096 whatever the host MTU says */
	}
	uint16_t room = (uint16_t)(RTE_PKTMBUF_HEADROOM + (max_mtu > 1500 ? 9216 + 64 : 2048));
	r.mp = rte_pktmbuf_pool_create("rl_mbuf", max_mtu > 1500 ? 16383 : 65535, 256,
				       RTE_ALIGN(sizeof(struct dp_mbuf_priv), RTE_MBUF_PRIV_ALIGN), room,
				       (int)rte_socket_id());
	if (r.mp == NULL) {
		snprintf(err, sizeof(err), "mbuf pool: %s", rte_strerror(rte_errno));
		goto fail;
	}
	if (dp_engine_init(&r.eng, o.clock, tsc_ns, NULL) < 0) {
		snprintf(err, sizeof(err), "engine: out of memory");
		goto fail;
	}
	struct dp_fabric_opts fo = {.seed = o.seed, .host_rx = host_rx, .host_rx_ctx = &r,
				    .flow_capacity = o.flows, .watchdog = o.watchdog ? &o.wd : NULL};
	r.fab = dp_fabric_create(r.topo, &r.eng, r.mp, &fo, err, sizeof(err));
	if (r.fab == NULL)
		goto fail;
	o.nic.max_qps = dp_nics_coll_qps(o.coll);
	o.nic.seed = o.seed;
	if (dp_nics_create(&r.nics, r.fab, &o.nic, err, sizeof(err)) < 0)
		goto fail;
	if (o.clock == DP_CLOCK_LIVE &&
	    dp_port_setup(&r.ports, r.fab, r.mp, o.veth, err, sizeof(err)) < 0)
		goto fail;
	if (setup_captures(&r, err, sizeof(err)) < 0)
		goto fail;
	r.start_ns = dp_engine_now(&r.eng);
	if (o.csv) {
		if (dp_csv_open(&r.csv, r.fab, o.csv, o.csv_interval_ns) < 0) {
			snprintf(err, sizeof(err), "--csv %s: cannot write", o.csv);
			goto fail;
		}
		r.csv.last_ns = r.start_ns;
		dp_timer_add(&r.eng, r.start_ns + o.csv_interval_ns, on_csv, &r, 0);
	}
	for (unsigned i = 0; i < o.gen.n; i++) {
		if (r.gens[i].size > (uint32_t)(room - RTE_PKTMBUF_HEADROOM)) {
			snprintf(err, sizeof(err), "%s %s: size %u is larger than the hosts' frames (%u)",
				 o.gen.where[i] ? o.gen.where[i] : "--gen", o.gen.spec[i], r.gens[i].size,
				 (unsigned)(room - RTE_PKTMBUF_HEADROOM));
			rc = EXIT_BAD_INPUT;
			goto fail_rc;
		}
		r.gens[i].start_ns += r.start_ns;
		dp_gen_start(&r.gens[i], r.fab);
	}
	for (unsigned i = 0; i < o.rdma.n; i++)
		if (dp_nics_add_rdma(&r.nics, o.rdma.spec[i], r.start_ns, err, sizeof(err)) < 0) {
			at_where(err, sizeof(err), o.rdma.where[i]);
			rc = EXIT_BAD_INPUT;
			goto fail_rc;
		}
	if (o.coll && dp_nics_add_coll(&r.nics, o.coll, r.start_ns, stdout, err, sizeof(err)) < 0) {
		at_where(err, sizeof(err), o.coll_where);
		rc = EXIT_BAD_INPUT;
		goto fail_rc;
	}
	if (o.te) {
		uint32_t(*pairs)[2] = malloc(sizeof(*pairs) * (r.topo->n_hosts * r.topo->n_hosts + 1));
		uint32_t np = pairs ? dp_nics_coll_pairs(&r.nics, pairs, r.topo->n_hosts * r.topo->n_hosts) : 0;
		int terc = np ? dp_te_create(&r.te, r.fab, (const uint32_t(*)[2])pairs, np, err, sizeof(err)) : -1;
		free(pairs);
		if (terc < 0) {
			if (np == 0)
				snprintf(err, sizeof(err), "--te needs a --coll (its traffic matrix)");
			rc = EXIT_BAD_INPUT;
			goto fail_rc;
		}
		r.fab->te = &r.te;
		if (!o.quiet)
			dp_te_print(&r.te, stdout);
	}
	r.ctl = dp_ctl_create(r.fab, err, sizeof(err));
	if (r.ctl == NULL)
		goto fail;

	char summary[256];
	topo_summary(r.topo, summary, sizeof(summary));
	if (!o.quiet)
		printf("rocelab-dp: %s; %s clock; %u host ports; telemetry /rocelab/*\n", summary,
		       o.clock == DP_CLOCK_LIVE ? "live" : "virtual", r.ports.n);
	fflush(stdout);

	struct timespec w0, w1;
	clock_gettime(CLOCK_MONOTONIC, &w0);
	if (o.clock == DP_CLOCK_VIRTUAL)
		run_virtual(&r);
	else
		run_live(&r);
	clock_gettime(CLOCK_MONOTONIC, &w1);

	uint64_t elapsed = dp_engine_now(&r.eng) - r.start_ns;
	double wall = (double)(w1.tv_sec - w0.tv_sec) + (double)(w1.tv_nsec - w0.tv_nsec) / 1e9;
	uint64_t fwd = 0;
	for (uint32_t s = 0; s < r.topo->n_switches; s++)
		fwd += r.fab->sw[s].fwd_pkts;
	if (!o.quiet) {
		if (o.clock == DP_CLOCK_VIRTUAL)
			fprintf(stderr, "\n");
		printf("\nrocelab-dp: ran %.6f s (%s) in %.3f s of wall time, %" PRIu64
		       " events, %" PRIu64 " switch forwards (%.3f M per wall second)\n\n",
		       (double)elapsed / 1e9, o.clock == DP_CLOCK_LIVE ? "live" : "virtual", wall,
		       r.eng.fired, fwd, wall > 0 ? (double)fwd / wall / 1e6 : 0.0);
		dp_stats_print(r.fab, elapsed, stdout);
		dp_flows_print(&r.fab->flows, r.topo, 20, stdout);
		for (unsigned i = 0; i < o.gen.n; i++)
			printf("%sgenerator %s: sent %" PRIu64 " of %" PRIu64 ", waited %" PRIu64
			       " times for its NIC queue, %" PRIu64 " for an mbuf\n",
			       i ? "" : "\n", o.gen.spec[i], r.gens[i].sent, r.gens[i].count,
			       r.gens[i].blocked, r.gens[i].no_mbuf);
		if (r.nics.n) {
			printf("\n");
			dp_nics_report(&r.nics, stdout);
		}
	}
	if (o.coll)
		dp_nics_print_totals(&r.nics, stdout);
	rc = 0;
	if (dp_nics_failures(&r.nics)) {
		fprintf(stderr, "rocelab-dp: %u RDMA transfer(s) failed or did not finish\n",
			dp_nics_failures(&r.nics));
		rc = 1;
	}
	goto out;
fail:
	rc = 1;
fail_rc:
	fprintf(stderr, "rocelab-dp: %s\n", err);
out:
	if (r.fab)
		r.fab->te = NULL;
	dp_te_free(&r.te);
	dp_nics_destroy(&r.nics);
	dp_ctl_destroy(r.ctl);
	for (unsigned i = 0; i < MAX_CAPTURES; i++)
		dp_capture_close(r.cap[i]);
	dp_csv_close(&r.csv);
	dp_port_close(&r.ports);
	dp_fabric_destroy(r.fab);
	dp_engine_free(&r.eng);
	rte_mempool_free(r.mp);
	topo_free(r.topo);
	free(r.gens);
	topo_traffic_free(r.traffic);
	spec_list_free(&o.gen);
	spec_list_free(&o.rdma);
	rte_eal_cleanup();
	for (int i = 0; i < r.eal_argc; i++)
		free(r.eal_argv[i]);
	return rc;
}
