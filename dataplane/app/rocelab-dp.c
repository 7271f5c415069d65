/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocelab-dp: a whole Clos fabric (switches, links, buffers, PFC, ECMP) in
 * one DPDK process, with real hosts on DPDK ports and in-process packet
 * sources, on a live or a virtual clock.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
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
#include "dp_part.h"
#include "dp_peer.h"
#include "dp_ctl.h"
#include "dp_eal.h"
#include "dp_engine.h"
#include "dp_fabric.h"
#include "dp_gen.h"
#include "dp_mpi.h"
#include "dp_nic.h"
#include "dp_pool.h"
#include "dp_port.h"
#include "dp_stats.h"
#include "dp_units.h"
#include "rl_mem.h"
#include "topo.h"
#include "topo_part.h"
#include "topo_traffic.h"

#define EXIT_BAD_INPUT 2
#define MAX_CAPTURES 16
#define MAX_WORKERS 256 /* --workers: partitions (threads) */
#define MAX_MBUFS 16777215u /* --mbufs */
#define PEER_WAIT_S 30 /* --process: how long set-up waits for the other processes' ports */
#define LIVE_BETWEEN_NS 1000000ull /* live partitions: telemetry and global events at least every 1 ms */
/*
 * Longest spec of each kind the data plane's parsers read whole: they copy
 * it into fixed buffers (dp_gen.c 512, dp_nic.c 160 for --rdma; --coll has
 * no limit: its host list may name a thousand hosts) and would parse a
 * longer one cut short. A traffic file can hold longer entries, so they are
 * refused at their line instead.
 */
#define GEN_SPEC_MAX 511
#define RDMA_SPEC_MAX 159
#define COLL_SPEC_MAX SIZE_MAX
#define IDLE_SLEEP_MAX_NS 20000 /* live mode: default longest nap when idle (--idle-nap) */
#define IDLE_NAP_LIMIT_NS 10000000ull /* --idle-nap at most 10 ms */
/*
 * live mode: timers run per loop turn at most, before the loop looks at its
 * clock, signals, ports and telemetry again. A timer moves at most a burst
 * of frames (dp_gen, dp_fabric), well under 1 us each, so a turn lasts
 * milliseconds at most: --duration and signals are honoured to within that.
 */
#define LIVE_TURN_BUDGET 512
#define LAG_LIMIT_DEFAULT_NS 100000000ull /* --lag-policy stop: 100 ms, as ns-3's hard limit */
#define NS_PER_MS 1e6
#define LAG_REPORT_NS 1000000ull /* a lag from 1 ms on is reported as falling behind */

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
	struct spec_list coll;  /* --coll and the traffic file's collectives (disjoint hosts) */
	const char *traffic;    /* --traffic FILE */
	const char *coll_series; /* --coll-series FILE */
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
	uint64_t idle_nap_ns; /* live mode: longest nap when idle */
	bool quiet;
	uint32_t flows;
	uint64_t seed;
	const char *name;
	unsigned mem_mb;
	uint32_t mbufs;         /* --mbufs: frames the pool holds; 0: by the MTU (65535 or 16383) */
	uint32_t workers;       /* --workers: partitions on threads (virtual clock) */
	bool nics_together;     /* --nics-together: emulated NICs all in partition 0 */
	bool lag_stop;          /* --lag-policy stop: falling behind by lag_limit_ns ends the run */
	uint64_t lag_limit_ns;
	struct dp_peers peers;  /* --process K/N, --peer DEVARGS (dp_peer.h) */
};

static volatile sig_atomic_t stop_requested;
/* when the first stop signal came (CLOCK_MONOTONIC, read in the handler: async-signal-safe) */
static struct timespec stop_signal_ts;

static void on_signal(int sig)
{
	if (!stop_requested)
		clock_gettime(CLOCK_MONOTONIC, &stop_signal_ts);
	stop_requested = sig;
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
		"  --workers N         virtual clock: cut the fabric into N partitions run on N threads\n"
		"                      (same output as 1; docs/ARCHITECTURE.md, dataplane/dp_part.h) [1]\n"
		"                      Under mpirun -np K: K partitions, one per rank, same output\n"
		"                      (rank 0 prints and writes files and answers telemetry, at\n"
		"                      the poll points between windows; virtual clock)\n"
		"                      Emulated NICs run with their leaves, the collective split by\n"
		"                      rank, when it can be (one collective of one iteration, no\n"
		"                      --rdma, under mpirun no --coll-series; a sweep of sizes:\n"
		"                      cut links shorter than 10 us); else all in partition 0 with the\n"
		"                      collective (stderr says which)\n"
		"  --nics-together     with --workers: every emulated NIC in partition 0 all the same\n"
		"                      (the cut before NICs ran with their leaves; same output)\n"
		"  --process K/N       live clock: run partition K of the N-way cut (the one --workers N\n"
		"                      makes) as one of N processes; needs a --peer per other process\n"
		"  --peer DEVARGS      the DPDK port to another process (e.g. net_memif0,role=server,\n"
		"                      socket=PATH,socket-abstract=no), in process order, skipping this\n"
		"                      one; links cut between processes share it, a VLAN id per link\n"
		"                      direction (dataplane/dp_peer.h)\n"
		"  --gen SPEC          in-process traffic SRC>DST[:key=value,...] (repeatable;\n"
		"                      keys proto,flows,sport,size,rate,count,start,dscp,ttl)\n"
		"  --rdma SPEC         RDMA WRITEs between emulated NICs SRC>DST[:key=value,...]\n"
		"                      (repeatable; keys qps,size,count,depth,mtu,dscp,sport,start;\n"
		"                      the data is verified; a failed transfer makes the exit status 1)\n"
		"  --coll SPEC         a collective over emulated NICs, nccl-tests-like lines per size\n"
		"                      (keys op,hosts,sizes,qps,mode,channels,chunk,window,cts,sport,\n"
		"                      iters,warmup,data; model=nccl, NCCL_*, proxy_post_wqe,\n"
		"                      proxy_poll_cqe, series go to ne_coll; see dataplane/dp_nic.h);\n"
		"                      repeat it for collectives at once on disjoint hosts (lines\n"
		"                      tagged [c1], [c2]... in the order given)\n"
		"  --coll-series FILE  the --coll's active QPs per NIC over virtual time, CSV, one\n"
		"                      row per interval of its key series (default 10us; one --coll)\n"
		"  --traffic FILE      generators, rdma transfers and collectives from a YAML file\n"
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
		"  --idle-nap TIME     live mode: longest nap when idle (default 20us; longer naps\n"
		"                      leave more CPU to endpoints sharing the machine)\n"
		"  --lag-policy best-effort|stop[=LIMIT]\n"
		"                      live mode when the fabric falls behind real time (the lag, in\n"
		"                      the tables and /rocelab/info): best-effort runs on late (default);\n"
		"                      stop ends the run with exit status 1 once the lag exceeds LIMIT\n"
		"                      (default 100ms)\n"
		"  --flows N           record the path of up to N flows (default 65536, 0: off)\n"
		"  --seed N            seed of link loss, flowlet choices and emulated NICs' QPNs (default 1)\n"
		"  --name NAME         DPDK file prefix / telemetry name (default rocelab-PID)\n"
		"  --mem MB            DPDK memory without hugepages (default 512)\n"
		"  --mbufs N           frames the packet pool holds (default 65535; 16383 when a host's\n"
		"                      MTU is above 1500 or it is an emulated NIC). A frame's room: on\n"
		"                      the live clock 2048 B, 9280 B in that case; on the virtual one\n"
		"                      the largest frame a host sends (an emulated NIC's: 4224 B), at\n"
		"                      least 2048 B. Each takes its room + ~200 B: of --mem on the live\n"
		"                      clock, of its own huge-page memory on the virtual one. The start\n"
		"                      line shows the pool. When it runs dry, senders wait and switches\n"
		"                      drop (no_mbuf): an emulator limit\n"
		"  --quiet             no tables at exit\n"
		"  -h, --help          this text\n"
		"\n"
		"While it runs: DPDK telemetry under /rocelab/ (dpdk-telemetry.py -f NAME, or\n"
		"scripts/rocelab-stats NAME); SIGINT/SIGTERM stop it and print the tables.\n"
		"Exit status: 0 ok, 1 runtime failure, 2 bad input.\n");
}

/* Print "rocelab-dp: WHAT 'ARG' (see --help)" (no quotes without arg) and return EXIT_BAD_INPUT. */
static int bad(const char *what, const char *arg)
{
	if (arg)
		fprintf(stderr, "rocelab-dp: %s '%s' (see --help)\n", what, arg);
	else
		fprintf(stderr, "rocelab-dp: %s (see --help)\n", what);
	return EXIT_BAD_INPUT;
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

/* "best-effort", "stop" or "stop=TIME" (TIME > 0). Returns 0, -1 when bad. */
static int parse_lag_policy(const char *arg, struct opts *o)
{
	if (strcmp(arg, "best-effort") == 0) {
		o->lag_stop = false;
		return 0;
	}
	if (strcmp(arg, "stop") == 0) {
		o->lag_stop = true;
		return 0;
	}
	if (strncmp(arg, "stop=", 5) != 0 || dp_parse_time(arg + 5, &o->lag_limit_ns) < 0 ||
	    o->lag_limit_ns == 0)
		return -1;
	o->lag_stop = true;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_TOPO = 256, O_CLOS, O_CHECK, O_LIST, O_CLOCK, O_DUR, O_GEN, O_VETH, O_CAP, O_CSV, O_CSVI,
	       O_BUSY, O_SEED, O_NAME, O_MEM, O_QUIET, O_RDMA, O_FLOWS, O_COLL, O_NIC, O_TE, O_WD, O_LAG,
	       O_NAP, O_TRAFFIC, O_WORKERS, O_MBUFS, O_PROCESS, O_PEER, O_CSERIES, O_TOGETHER };
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
		{"lag-policy", required_argument, NULL, O_LAG},
		{"idle-nap", required_argument, NULL, O_NAP},
		{"traffic", required_argument, NULL, O_TRAFFIC},
		{"coll-series", required_argument, NULL, O_CSERIES},
		{"workers", required_argument, NULL, O_WORKERS},
		{"nics-together", no_argument, NULL, O_TOGETHER},
		{"mbufs", required_argument, NULL, O_MBUFS},
		{"process", required_argument, NULL, O_PROCESS},
		{"peer", required_argument, NULL, O_PEER},
		{NULL, 0, NULL, 0},
	};
	int c;
	uint64_t v;

	memset(o, 0, sizeof(*o));
	o->csv_interval_ns = 100000000ull;
	o->seed = 1;
	o->mem_mb = 512;
	o->idle_nap_ns = IDLE_SLEEP_MAX_NS;
	pfc_watchdog_config_default(&o->wd);
	o->flows = 65536;
	o->lag_limit_ns = LAG_LIMIT_DEFAULT_NS;
	o->workers = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case O_TOPO: o->topology = optarg; break;
		case O_WORKERS:
			if (dp_parse_u64(optarg, &v) < 0 || v == 0 || v > MAX_WORKERS)
				return bad("bad --workers (1..256):", optarg);
			o->workers = (uint32_t)v;
			break;
		case O_TOGETHER: o->nics_together = true; break;
		case O_PROCESS:
			if (dp_peers_parse_process(&o->peers, optarg) < 0)
				return bad("bad --process, want K/N with K < N, 2 <= N <= 16:", optarg);
			break;
		case O_PEER:
			if (dp_peers_add(&o->peers, optarg) < 0)
				return bad("too many --peer (at most 15):", optarg);
			break;
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
		case O_COLL:
			if (spec_push(&o->coll, optarg, NULL) < 0)
				return bad("out of memory for --coll", optarg);
			break;
		case O_TRAFFIC: o->traffic = optarg; break;
		case O_CSERIES: o->coll_series = optarg; break;
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
		case O_NAP:
			if (dp_parse_time(optarg, &o->idle_nap_ns) < 0 || o->idle_nap_ns > IDLE_NAP_LIMIT_NS)
				return bad("bad --idle-nap (e.g. 20us, 200us; at most 10ms):", optarg);
			break;
		case O_LAG:
			if (parse_lag_policy(optarg, o) < 0)
				return bad("bad --lag-policy (best-effort or stop[=TIME], e.g. stop=50ms):", optarg);
			break;
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
		case O_MBUFS:
			if (dp_parse_u64(optarg, &v) < 0 || v < 1024 || v > MAX_MBUFS)
				return bad("bad --mbufs (1024..16777215):", optarg);
			o->mbufs = (uint32_t)v;
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
	if (dp_peers_on(&o->peers) && (o->workers > 1 || o->clock != DP_CLOCK_LIVE || o->lag_stop))
		return bad("--process runs one partition per process on the live clock: not with --workers, "
			   "--clock virtual or --lag-policy stop", NULL);
	if (o->workers > 1 && o->clock == DP_CLOCK_LIVE && o->lag_stop)
		return bad("--lag-policy stop works with one worker (partitions of the live clock report "
			   "their lag but do not stop on it)", NULL);
	return 0;
}

/* b - a in seconds */
static double ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
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
	struct dp_parts *parts;          /* --workers */
	char lanes_why[192];             /* why the emulated NICs do not run in lanes (nics_in_lanes) */
	struct dp_mpi mpi;               /* under mpirun: this rank; else rank 0 of 1 */
	struct dp_te te;
	uint64_t start_ns;
	struct dp_eal eal;
	uint16_t frame_room;    /* bytes an mbuf holds for a frame */
	int run_rc;             /* 0, or 1 when --lag-policy stop ended the run */
	double wall_s;          /* wall time of the run loop */
	double after_signal_s;  /* from a stop signal to the loop's end */
	double progress_at;     /* virtual: monotonic seconds of the run's start or last progress line */
	bool quiet_progress;    /* no progress line (live partitions) */
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
	if (r->mpi.size > 1) { /* a global event: every rank is here; rank 0 writes the sum */
		size_t n = (size_t)r->fab->n_chans * DP_CSV_FIELDS;
		dp_csv_take(r->fab, now, r->csv.v);
		if (dp_mpi_reduce_u64(&r->mpi, r->csv.v, n, false) < 0) {
			fprintf(stderr, "rocelab-dp: rank %d: --csv: gathering a sample failed\n", r->mpi.rank);
			dp_mpi_abort(&r->mpi, 1);
		}
		if (r->mpi.rank == 0)
			dp_csv_write(&r->csv, r->fab, r->csv.v, now);
	} else {
		dp_csv_sample(&r->csv, r->fab, now);
	}
	dp_timer_add(&r->eng, now + r->o->csv_interval_ns, on_csv, r, 0);
}

static int eal_init(struct run *r, char *err, size_t errlen)
{
	struct dp_eal *e = &r->eal;
	char prefix[64], mem[32];

	if (r->o->name && r->mpi.rank > 0) /* (one runtime directory per rank; rank 0's telemetry is NAME's) */
		snprintf(prefix, sizeof(prefix), "%s-r%d", r->o->name, r->mpi.rank);
	else if (r->o->name)
		snprintf(prefix, sizeof(prefix), "%s", r->o->name);
	else
		snprintf(prefix, sizeof(prefix), "rocelab-%d", (int)getpid());
	snprintf(mem, sizeof(mem), "-m%u", r->o->mem_mb);
	const char *fixed[] = {"rocelab-dp", "-l0", "--no-huge", mem, "--log-level=*:warning"};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (dp_eal_add(e, fixed[i]) < 0)
			goto too_many;
	if (dp_eal_set_prefix(e, prefix) < 0)
		goto too_many;
	if (r->o->clock == DP_CLOCK_LIVE) {
		int prc = dp_port_eal_args(r->topo, r->o->veth, dp_peers_remote_hosts(&r->o->peers),
					   e->argv, &e->argc, DP_EAL_ARGS_MAX, err, errlen);
		if (prc < 0)
			return prc; /* -EINVAL: a host's devargs (bad input) */
		if (dp_peers_eal_args(&r->o->peers, e->argv, &e->argc, DP_EAL_ARGS_MAX) < 0)
			goto too_many;
	} else if (dp_eal_add(e, "--no-pci") < 0) {
		goto too_many;
	}
	/* The CPUs the process was given (by mpirun, taskset or nobody). EAL's -l0
	 * pins the main thread to CPU 0: every rank, and every virtual-clock run
	 * on the machine, would share that one core (two experiments or tests at
	 * once ran at half speed each with the other core idle). The virtual
	 * clock gains nothing from a pinned core, so it gets them back; the live
	 * clock stays on its lcore. */
	cpu_set_t cpus;
	bool have_cpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0;
	if (dp_eal_start(e, err, errlen) < 0) { /* name the dpdk hosts' or peers' devargs if any */
		int eno = rte_errno;
		return dp_peers_eal_failed(&r->o->peers, eno, dp_port_eal_failed(r->topo, eno, err, errlen),
					   err, errlen);
	}
	if ((r->mpi.size > 1 || r->o->clock == DP_CLOCK_VIRTUAL) && have_cpus)
		sched_setaffinity(0, sizeof(cpus), &cpus);
	return 0;
too_many:
	snprintf(err, errlen, "EAL arguments: out of memory or too many");
	return -1;
}

static bool gens_active(const struct run *r)
{
	for (unsigned i = 0; i < r->o->gen.n; i++)
		if (!dp_gen_done(&r->gens[i]))
			return true;
	return false;
}

/* dp_part: partition part's generators, and the NICs if it holds them, have work left. */
static bool part_traffic_left(void *ctx, uint32_t part)
{
	struct run *r = ctx;

	for (unsigned i = 0; i < r->o->gen.n; i++)
		if (dp_parts_of_host(r->parts, r->gens[i].src) == part && !dp_gen_done(&r->gens[i]))
			return true;
	if (r->nics.n_lanes > 1) /* (a lane that waits on a failed one waits for nothing) */
		return dp_nics_lane_active(&r->nics, part) && !dp_parts_failure_seen(r->parts, part);
	return r->nics.n && dp_parts_of_host(r->parts, r->nics.h[0].host) == part &&
	       dp_nics_active(&r->nics);
}

/* dp_part: partition part's lane ended a size of a sweep (dp_nics_serial_due). */
static bool part_serial_due(void *ctx, uint32_t part)
{
	const struct run *r = ctx;

	return r->nics.n_lanes > 1 && dp_nics_serial_due(&r->nics, part);
}

/*
 * dp_part, every partition stopped, every lane done with a size of a sweep:
 * under MPI every rank gets every rank's lane record first (each has only
 * its own); then the next size (dp_nics_sizes_next).
 */
static void part_serial(void *ctx, uint64_t now)
{
	struct run *r = ctx;
	size_t len = dp_nics_lane_rec_len(&r->nics);

	if (r->mpi.size > 1) {
		uint8_t *mine = malloc(len + 1), *all = malloc(len * (size_t)r->mpi.size + 1);
		int rc = mine && all ? 0 : -ENOMEM;
		if (rc == 0) {
			dp_nics_lane_save(&r->nics, (uint32_t)r->mpi.rank, mine);
			rc = dp_mpi_allgather(&r->mpi, mine, all, len);
		}
		for (int k = 0; rc == 0 && k < r->mpi.size; k++)
			if (k != r->mpi.rank)
				rc = dp_nics_lane_load(&r->nics, (uint32_t)k, all + len * (size_t)k, len);
		free(mine);
		free(all);
		if (rc < 0) {
			fprintf(stderr, "rocelab-dp: rank %d: lanes of a sweep: %s\n", r->mpi.rank, strerror(-rc));
			dp_mpi_abort(&r->mpi, 1);
		}
	}
	dp_nics_sizes_next(&r->nics, now); /* (-ENOMEM: the collective failed and says so) */
}

/* dp_part: partition part's lane of a collective failed (the others stop waiting for it). */
static bool part_failed(void *ctx, uint32_t part)
{
	const struct run *r = ctx;

	return r->nics.n_lanes > 1 && dp_nics_lane_failed(&r->nics, part);
}

/* Monotonic seconds, coarse (a few ms): read on every virtual step, as cheap as time(). */
static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Virtual clock: a progress line on stderr once a second of wall time, from
 * the first second on (a short run prints none: a line at a wall-clock second's
 * turn landed in tests' combined output). stdout is flushed first so that a
 * log of both keeps the tables' lines whole; "\r" on a terminal, else lines.
 */
static void progress(struct run *r, uint64_t now_ns, uint64_t events)
{
	double t = mono_s();

	if (r->o->quiet || t - r->progress_at < 1.0)
		return;
	r->progress_at = t;
	fflush(stdout);
	fprintf(stderr, "rocelab-dp: virtual time %.6f s, %" PRIu64 " events%s", (double)now_ns / 1e9,
		events, isatty(STDERR_FILENO) ? "\r" : "\n");
}

/* dp_part, between windows (every partition stopped): telemetry, progress, signals. */
static bool part_between(void *ctx, uint64_t now, uint64_t events)
{
	struct run *r = ctx;
	if (r->ctl && r->mpi.size <= 1) { /* (ranks: every rank applies them, part_collect) */
		dp_ctl_note(r->ctl, now, events);
		dp_ctl_poll(r->ctl, now);
	}
	for (unsigned i = 0; i < r->o->n_capture; i++)
		dp_capture_flush(r->cap[i]);
	if (!r->quiet_progress)
		progress(r, now, events);
	return !stop_requested;
}

/*
 * MPI ranks, every rank at once: the records the ranks' captures hold go to
 * rank 0, which writes them merged. Returns 0 or -errno.
 */
static int gather_captures(struct run *r)
{
	struct dp_bytes x = {0};
	size_t *off = calloc((size_t)r->mpi.size * 2, sizeof(*off));
	int rc = off ? 0 : -ENOMEM;

	for (unsigned i = 0; rc == 0 && i < r->o->n_capture; i++) {
		uint8_t *all = NULL;
		x.len = 0;
		if (r->mpi.rank != 0) /* (rank 0's own stay where they are) */
			rc = dp_capture_export(r->cap[i], &x);
		if (rc == 0)
			rc = dp_mpi_gather_bytes(&r->mpi, x.b, x.len, &all, off, off + r->mpi.size);
		for (int k = 1; rc == 0 && r->mpi.rank == 0 && k < r->mpi.size; k++)
			rc = dp_capture_import(r->cap[i], all + off[k], off[r->mpi.size + k]);
		free(all);
	}
	free(off);
	dp_bytes_free(&x);
	return rc;
}

#define CTL_SETS_MAX 64u /* telemetry link / switch changes applied per poll point at most */

/*
 * MPI ranks, every rank at a poll point: rank 0 says what its telemetry
 * holds (changes to apply, read commands waiting); every rank applies the
 * changes at now; when a command waits, the ranks' views are summed into
 * rank 0 (with the events each rank's engines ran), which answers it.
 * Returns 0 or -errno.
 */
static int ranks_telemetry(struct run *r, uint64_t now)
{
	struct {
		uint32_t n_set, n_ask;
		struct dp_ctl_set set[CTL_SETS_MAX];
	} m = {0};

	if (r->mpi.rank == 0 && r->ctl) {
		m.n_set = dp_ctl_take(r->ctl, m.set, CTL_SETS_MAX);
		m.n_ask = dp_ctl_waiting(r->ctl);
	}
	int rc = dp_mpi_bcast(&r->mpi, &m, sizeof(m), 0);
	if (rc < 0)
		return rc;
	dp_ctl_apply(r->fab, m.set, m.n_set, now);
	if (m.n_ask == 0)
		return 0;
	size_t n = dp_ctl_view_len(r->fab, &r->nics);
	uint64_t *v = malloc((n + 1) * sizeof(*v)), events;
	double cpu;
	if (v == NULL)
		return -ENOMEM;
	dp_ctl_view_pack(r->fab, &r->nics, now, v);
	dp_parts_load(r->parts, (uint32_t)r->mpi.rank, &cpu, &events);
	v[n] = events + (r->mpi.rank == 0 ? r->eng.fired : 0); /* (global events: rank 0 counts them) */
	rc = dp_mpi_reduce_u64(&r->mpi, v, n + 1, false);
	if (rc == 0 && r->mpi.rank == 0)
		dp_ctl_serve(r->ctl, v, now, v[n]);
	free(v);
	return rc;
}

/*
 * dp_part, every rank at a poll point: held captures to rank 0 (part_between
 * writes them), telemetry.
 */
static void part_collect(void *ctx, uint64_t now)
{
	struct run *r = ctx;

	if (gather_captures(r) < 0) {
		fprintf(stderr, "rocelab-dp: rank %d: --capture: gathering records failed\n", r->mpi.rank);
		dp_mpi_abort(&r->mpi, 1);
	}
	if (ranks_telemetry(r, now) < 0) {
		fprintf(stderr, "rocelab-dp: rank %d: telemetry: exchange between ranks failed\n", r->mpi.rank);
		dp_mpi_abort(&r->mpi, 1);
	}
}

/*
 * MPI ranks with the emulated NICs in lanes (each rank runs its partition's):
 * rank 0 gets every NIC's counters (summed: a NIC counts only where it ran)
 * and every rank's lane of the collective, which it then ends
 * (dp_nics_lanes_finish). Every rank calls it. Returns 0 or -errno.
 */
static int gather_lanes(struct run *r)
{
	size_t n = dp_nics_counters_len(&r->nics), len = dp_nics_lane_rec_len(&r->nics);
	uint64_t *v = calloc(n + 1, sizeof(*v));
	uint8_t *mine = malloc(len + 1), *all = NULL;
	size_t *off = calloc((size_t)r->mpi.size * 2, sizeof(*off));
	int rc = v && mine && off ? 0 : -ENOMEM;

	if (rc == 0 && r->mpi.rank != 0) /* (rank 0's own stay where they are) */
		dp_nics_counters_pack(&r->nics, v);
	if (rc == 0)
		rc = dp_mpi_reduce_u64(&r->mpi, v, n, false);
	if (rc == 0 && r->mpi.rank == 0)
		dp_nics_counters_add(&r->nics, v);
	if (rc == 0) {
		dp_nics_lane_save(&r->nics, (uint32_t)r->mpi.rank, mine);
		rc = dp_mpi_gather_bytes(&r->mpi, mine, len, &all, off, off + r->mpi.size);
	}
	for (int k = 1; rc == 0 && r->mpi.rank == 0 && k < r->mpi.size; k++)
		rc = dp_nics_lane_load(&r->nics, (uint32_t)k, all + off[k], off[r->mpi.size + k]);
	free(all);
	free(off);
	free(mine);
	free(v);
	return rc;
}

/*
 * MPI ranks: rank 0 gets the whole run's counters, the fabric's (dp_parts_gather)
 * and the generators'. Every rank calls it. Returns 0 or -errno.
 */
static int gather_ranks(struct run *r)
{
	unsigned n = r->o->gen.n;
	uint64_t *sum = calloc((size_t)n * 4 + 1, sizeof(*sum)), *max = sum + 3 * n;

	if (r->mpi.size <= 1 || sum == NULL) {
		free(sum);
		return r->mpi.size <= 1 ? 0 : -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++) {
		sum[3 * i] = r->gens[i].sent;
		sum[3 * i + 1] = r->gens[i].blocked;
		sum[3 * i + 2] = r->gens[i].no_mbuf;
		max[i] = r->gens[i].done_ns;
	}
	int rc = gather_captures(r);
	if (rc == 0)
		rc = dp_parts_gather(r->parts, r->eng.now_ns, sum, 3 * (size_t)n, max, n);
	if (rc == 0 && r->nics.n_lanes > 1)
		rc = gather_lanes(r);
	for (unsigned i = 0; rc == 0 && r->mpi.rank == 0 && i < n; i++) {
		r->gens[i].sent = sum[3 * i];
		r->gens[i].blocked = sum[3 * i + 1];
		r->gens[i].no_mbuf = sum[3 * i + 2];
		r->gens[i].done_ns = max[i];
	}
	free(sum);
	return rc;
}

/* The virtual clock on --workers threads: the same run as run_virtual's, in windows. */
static void run_virtual_parts(struct run *r)
{
	struct dp_part_run pr = {.until_ns = r->o->duration_ns ? r->o->duration_ns : UINT64_MAX,
				 .traffic_left = part_traffic_left, .failed = part_failed,
				 .between = part_between,
				 .collect = r->mpi.size > 1 ? part_collect : NULL,
				 .serial_due = part_serial_due, .serial = part_serial, .ctx = r};

	r->progress_at = mono_s();
	if (dp_parts_run(r->parts, &pr) < 0) {
		r->run_rc = 1;
		return;
	}
	if (gather_ranks(r) < 0) {
		fprintf(stderr, "rocelab-dp: rank %d: gathering the counters failed\n", r->mpi.rank);
		dp_mpi_abort(&r->mpi, 1);
		r->run_rc = 1;
		return;
	}
	if (r->mpi.rank != 0)
		return; /* (rank 0 reports the run) */
	if (r->nics.n_lanes > 1)
		dp_nics_lanes_finish(&r->nics); /* (lanes of other ranks; one that waited on a failed one) */
	/* (no more poll points: what waits, and what comes, is answered from the whole run) */
	if (r->mpi.size > 1)
		dp_ctl_gathered(r->ctl, r->eng.now_ns, r->eng.fired);
	if (!r->o->quiet)
		fprintf(stderr, "rocelab-dp: %u partitions, lookahead %" PRIu64 " ns, %" PRIu64
			" windows, %" PRIu64 " frames crossed partitions (%" PRIu64 " at a window's end)\n",
			dp_parts_count(r->parts), dp_parts_lookahead_ns(r->parts), dp_parts_windows(r->parts),
			dp_parts_crossed(r->parts), dp_parts_crossed_at_end(r->parts));
	if (!r->o->quiet && r->nics.n && r->nics.n_lanes > 1)
		fprintf(stderr, "rocelab-dp: emulated NICs run with their leaves: the collective in %u lanes\n",
			r->nics.n_lanes);
	else if (!r->o->quiet && r->nics.n)
		fprintf(stderr, "rocelab-dp: emulated NICs all in partition 0 (%s)\n",
			r->lanes_why);
	for (uint32_t i = 0; i < dp_parts_count(r->parts) && !r->o->quiet; i++) {
		double cpu;
		uint64_t ev;
		dp_parts_load(r->parts, i, &cpu, &ev);
		fprintf(stderr, "rocelab-dp: partition %u: %" PRIu64 " events, %.3f s CPU, busy %.0f%% of "
			"the loop (running windows, not waiting at barriers)\n", i, ev, cpu,
			100 * dp_parts_busy(r->parts, i));
	}
	if (!stop_requested && dp_parts_next_ns(r->parts) == UINT64_MAX && dp_nics_active(&r->nics))
		printf("# stalled at %.6f s: RDMA work is unfinished and no NIC has anything scheduled\n",
		       (double)r->eng.now_ns / 1e9);
}

static void run_virtual(struct run *r)
{
	if (dp_parts_count(r->parts) > 1) {
		run_virtual_parts(r);
		return;
	}
	/* returns when the duration is reached, traffic is done, or nothing is scheduled */
	uint64_t until = r->o->duration_ns ? r->o->duration_ns : UINT64_MAX;
	r->progress_at = mono_s();
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
		progress(r, r->eng.now_ns, r->eng.fired);
	}
	if (!stop_requested && dp_engine_next_ns(&r->eng) == UINT64_MAX && dp_nics_active(&r->nics))
		printf("# stalled at %.6f s: RDMA work is unfinished and no NIC has anything scheduled\n",
		       (double)r->eng.now_ns / 1e9);
}

/* Live: nap until the next timer when a turn found nothing to do (unless --busy-poll). */
static void live_idle(struct run *r, uint64_t now)
{
	uint64_t next = dp_engine_next_ns(&r->eng);
	uint64_t nap = next > now ? next - now : 0;

	if (nap > r->o->idle_nap_ns)
		nap = r->o->idle_nap_ns;
	if (nap > 2000) {
		struct timespec ts = {0, (long)nap};
		nanosleep(&ts, NULL);
	}
}

/*
 * The live loop. Each turn: at most LIVE_TURN_BUDGET timers of what fell due,
 * in time order; then what the ports received and telemetry commands, at
 * this reading or, when behind, at the oldest timer left (time never runs
 * backwards). Returns 0, or 1 when
 * --lag-policy stop ended the run.
 */
/* dp_part, live: partition part's ports (those of its hosts) receive at now. */
static uint32_t part_poll(void *ctx, uint32_t part, uint64_t now)
{
	struct run *r = ctx;

	return dp_port_poll_part(&r->ports, r->fab, part, now) +
	       dp_peers_poll(&r->o->peers, now); /* (--process: the one partition run here) */
}

static void part_flush(void *ctx, uint32_t part)
{
	struct run *r = ctx;

	dp_port_flush_part(&r->ports, part);
	dp_peers_flush(&r->o->peers);
}

/* dp_part, live: what part_between() would change with partitions running. */
static bool part_needs_world(void *ctx)
{
	struct run *r = ctx;

	return dp_ctl_pending(r->ctl) || r->o->n_capture;
}

static bool part_tick(void *ctx, uint64_t now, uint64_t events)
{
	struct run *r = ctx;

	if (r->ctl)
		dp_ctl_note(r->ctl, now, events);
	return !stop_requested;
}

static uint32_t host_part(const void *parts, uint32_t host)
{
	return dp_parts_of_host(parts, host);
}

/* The live clock on --workers threads: each polls its hosts' ports (dp_parts_run_live). */
static int run_live_parts(struct run *r)
{
	struct dp_part_live pl = {
		.end_ns = r->o->duration_ns ? r->start_ns + r->o->duration_ns : UINT64_MAX,
		.budget = LIVE_TURN_BUDGET, .nap_ns = r->o->busy_poll ? 0 : r->o->idle_nap_ns,
		.poll = part_poll, .flush = part_flush, .between = part_between,
		.between_ns = LIVE_BETWEEN_NS, .needs_world = part_needs_world, .tick = part_tick, .ctx = r};

	r->quiet_progress = true; /* (live: no virtual-time progress line) */
	int prc = dp_port_by_part(&r->ports, dp_parts_count(r->parts), host_part, r->parts);
	if (prc < 0) {
		fprintf(stderr, "rocelab-dp: grouping the ports by partition: %s\n", strerror(-prc));
		return 1;
	}
	if (dp_parts_run_live(r->parts, &pl) < 0)
		return 1;
	if (!r->o->quiet && dp_peers_on(&r->o->peers))
		fprintf(stderr, "rocelab-dp: process %u of %u (live); what crossed to the others is in the "
			"peer table\n", r->o->peers.self, r->o->peers.n);
	else if (!r->o->quiet)
		fprintf(stderr, "rocelab-dp: %u partitions (live), %" PRIu64 " frames crossed partitions, "
			"%" PRIu64 " world stops\n", dp_parts_count(r->parts), dp_parts_crossed(r->parts),
			dp_parts_stops(r->parts));
	for (uint32_t i = 0; i < dp_parts_count(r->parts) && !r->o->quiet && !dp_peers_on(&r->o->peers); i++) {
		double cpu;
		uint64_t ev, turns, idle, full;
		double busy;
		dp_parts_load(r->parts, i, &cpu, &ev);
		dp_parts_live_load(r->parts, i, &turns, &idle, &busy, &full);
		fprintf(stderr, "rocelab-dp: partition %u: %" PRIu64 " events, %.3f s CPU, %" PRIu64
			" turns (%" PRIu64 " idle), busy %.0f%% of the time, %" PRIu64 " waits on a full ring\n",
			i, ev, cpu, turns, idle, 100 * busy, full);
	}
	return 0;
}

static int run_live(struct run *r)
{
	uint64_t end = r->o->duration_ns ? r->start_ns + r->o->duration_ns : UINT64_MAX;

	prctl(PR_SET_TIMERSLACK, 1000UL); /* naps of microseconds, not the default 50 us */
	if (dp_parts_count(r->parts) > 1)
		return run_live_parts(r);
	while (!stop_requested) {
		uint64_t now = dp_engine_now(&r->eng);
		if (now >= end)
			break;
		uint32_t work = dp_engine_run_budget(&r->eng, now, LIVE_TURN_BUDGET);
		/* behind (due timers left): the fabric's present is its oldest due timer,
		 * not the clock; what the ports bring enters there, or the time order
		 * breaks (a late PFC pause would act after frames it should have held) */
		uint64_t lag = dp_engine_note_lag(&r->eng, now);
		uint64_t t = dp_engine_mono(&r->eng, now - lag);
		work += dp_port_poll(&r->ports, r->fab, t);
		dp_port_flush(&r->ports);
		if (r->ctl)
			work += dp_ctl_poll(r->ctl, t);
		if (r->o->lag_stop && lag > r->o->lag_limit_ns) {
			fprintf(stderr, "rocelab-dp: %.1f ms behind real time, over the limit of %.1f ms "
				"(--lag-policy stop): stopping\n", (double)lag / NS_PER_MS,
				(double)r->o->lag_limit_ns / NS_PER_MS);
			return 1;
		}
		if (!work && !r->o->busy_poll)
			live_idle(r, now);
	}
	return 0;
}

/* Open the --capture files. Returns 0, -EINVAL for a bad LINK=FILE, -EIO when a file cannot be written. */
static int setup_captures(struct run *r, char *err, size_t errlen)
{
	for (unsigned i = 0; i < r->o->n_capture; i++) {
		char spec[256];
		if (strlen(r->o->capture[i]) >= sizeof(spec)) {
			snprintf(err, errlen, "--capture: argument too long");
			return -EINVAL;
		}
		snprintf(spec, sizeof(spec), "%s", r->o->capture[i]);
		char *eq = strchr(spec, '=');
		*eq = '\0';
		int l = topo_link_by_name(r->topo, spec);
		if (l < 0) {
			snprintf(err, errlen, "--capture: no link named '%s'", spec);
			return -EINVAL;
		}
		/* (under mpirun rank 0 writes the file; the others hold records for it) */
		r->cap[i] = dp_capture_open(r->mpi.rank == 0 ? eq + 1 : "/dev/null", err, errlen);
		if (r->cap[i] == NULL)
			return -EIO;
		if (dp_parts_count(r->parts) > 1)
			dp_capture_hold(r->cap[i]); /* the two directions may be sent by two threads */
		dp_capture_attach(r->cap[i], &r->fab->chans[2 * l]);
		dp_capture_attach(r->cap[i], &r->fab->chans[2 * l + 1]);
	}
	return 0;
}

/* --topology FILE or --clos S,L,H into r->topo. Returns 0 or EXIT_BAD_INPUT (with a message). */
static int load_topology(struct run *r)
{
	const struct opts *o = r->o;
	char err[512];

	if (o->topology) {
		if (topo_load(o->topology, &r->topo, err, sizeof(err)) < 0) {
			fprintf(stderr, "rocelab-dp: %s\n", err);
			return EXIT_BAD_INPUT;
		}
	} else if ((r->topo = topo_clos(o->clos[0], o->clos[1], o->clos[2], err, sizeof(err))) == NULL) {
		fprintf(stderr, "rocelab-dp: --clos: %s\n", err);
		return EXIT_BAD_INPUT;
	}
	return 0;
}

/* --list-hosts: NAME ATTACH IFNAME IPV4/24 GW MAC MTU IPV6/64 GW6, one host a line. */
static void list_hosts(const struct topo *t)
{
	for (uint32_t h = 0; h < t->n_hosts; h++) {
		const struct topo_host *hc = &t->hosts[h];
		char ip[16], gw[16], mac[18], ip6[48], gw6[48];
		printf("%s %s %s %s/24 %s %s %u %s/64 %s\n", hc->name, topo_attach_name(hc->attach),
		       hc->ifname[0] ? hc->ifname : "-", topo_ipv4_str(hc->ipv4, ip, sizeof(ip)),
		       topo_ipv4_str(hc->gw_ipv4, gw, sizeof(gw)), topo_mac_str(hc->mac, mac, sizeof(mac)),
		       hc->mtu, topo_ipv6_str(hc->ipv6, ip6, sizeof(ip6)),
		       topo_ipv6_str(hc->gw_ipv6, gw6, sizeof(gw6)));
	}
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
 * --traffic FILE: its generators, rdma transfers and collectives join the
 * flags' lists (after them), each with its FILE:LINE. r->traffic keeps the
 * specs. Returns 0, or the exit code after printing why.
 */
static int add_traffic(struct run *r)
{
	struct opts *o = r->o;
	char err[512];

	if (topo_traffic_load(o->traffic, r->topo, &r->traffic, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocelab-dp: %s\n", err);
		return EXIT_BAD_INPUT;
	}
	static const size_t spec_max[TOPO_TRAFFIC_KINDS] = {
		[TOPO_TRAFFIC_GEN] = GEN_SPEC_MAX,
		[TOPO_TRAFFIC_RDMA] = RDMA_SPEC_MAX,
		[TOPO_TRAFFIC_COLL] = COLL_SPEC_MAX,
	};
	for (uint32_t i = 0; i < r->traffic->n; i++) {
		const struct topo_traffic_entry *e = &r->traffic->e[i];
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
		else
			rc = spec_push(&o->coll, e->spec, e->where);
		if (rc < 0) {
			fprintf(stderr, "rocelab-dp: %s: out of memory\n", e->where);
			return 1;
		}
	}
	return 0;
}

/*
 * The traffic file and the generators are checked before anything starts.
 * Returns 0, 1 (out of memory) or EXIT_BAD_INPUT (with a message).
 */
static int parse_gens(struct run *r)
{
	const struct opts *o = r->o;
	char err[512];
	int rc;

	if (o->traffic && (rc = add_traffic(r)) != 0)
		return rc;
	r->gens = rl_zalloc_lines(o->gen.n + 1, sizeof(*r->gens));
	if (!r->gens)
		return 1;
	for (unsigned i = 0; i < o->gen.n; i++)
		if (dp_gen_parse(&r->gens[i], r->topo, o->gen.spec[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "rocelab-dp: %s: %s\n", o->gen.where[i] ? o->gen.where[i] : "--gen",
				err);
			return EXIT_BAD_INPUT;
		}
	return 0;
}

/*
 * --process K/N: the cut and its VLAN ids (dp_peer.h); traffic sources only
 * on this process's hosts. Returns 0, 1 (out of memory) or EXIT_BAD_INPUT.
 */
static int plan_process(struct run *r)
{
	struct dp_peers *p = &r->o->peers;
	char err[512];
	int rc = dp_peers_plan(p, r->topo, err, sizeof(err));

	if (rc < 0) {
		fprintf(stderr, "rocelab-dp: %s\n", err);
		return rc == -ENOMEM ? 1 : EXIT_BAD_INPUT;
	}
	for (unsigned i = 0; dp_peers_on(p) && i < r->o->gen.n; i++)
		if (dp_peers_remote_hosts(p)[r->gens[i].src])
			return bad("--process: this generator's source runs in another process (give it "
				   "to that one):", r->o->gen.spec[i]);
	if (dp_peers_on(p) && p->self != 0 && (r->o->rdma.n || r->o->coll.n))
		return bad("--process: emulated NICs run in process 0; give --rdma and --coll to it", NULL);
	return 0;
}

/* A frame's bytes beyond its IP packet: Ethernet header and two VLAN tags (QinQ). */
#define DP_FRAME_L2_MAX (14u + 8u)

/* The largest frame host h sends: its emulated NIC's (path MTU 4096, whatever its MTU says) or its MTU's. */
static uint32_t host_frame_max(const struct topo_host *h)
{
	uint32_t mtu_frame = h->mtu + DP_FRAME_L2_MAX;

	return h->attach == TOPO_ATTACH_EMULATED ? RTE_MAX(NE_MAX_FRAME, mtu_frame) : mtu_frame;
}

/*
 * The data room (headroom excluded) the pool's frames need, and in *jumbo
 * whether any host's MTU is above 1,500 (or it is an emulated NIC). Live
 * clock: 2,048 B, or 9,280 B with jumbo (a port may hand over any jumbo
 * frame; a PMD adds its own overhead to the MTU). Virtual clock: the
 * largest frame a host sends, in whole lines, and 2,048 B at the least. An
 * emulated NIC sends at most NE_MAX_FRAME; the generators on its host, up
 * to its MTU: with none larger, a pool of its 4 KiB frames takes 4.4 KiB a
 * frame instead of 9.4 (at 1,024 ranks, 131,071 frames: 1.1 GB of peak
 * memory instead of 1.8).
 */
static uint32_t pool_room(const struct run *r, bool *jumbo)
{
	uint32_t frame = 0; /* the largest frame an emulated NIC or a generator sends, or a host's MTU allows */

	*jumbo = false;
	for (uint32_t h = 0; h < r->topo->n_hosts; h++) {
		const struct topo_host *th = &r->topo->hosts[h];
		bool emulated = th->attach == TOPO_ATTACH_EMULATED;
		*jumbo |= emulated || th->mtu > 1500;
		frame = RTE_MAX(frame, emulated ? NE_MAX_FRAME : host_frame_max(th));
	}
	/* (a generator beyond its host's frames is refused at its start) */
	for (unsigned i = 0; i < r->o->gen.n; i++)
		frame = RTE_MAX(frame, RTE_MIN(r->gens[i].size, host_frame_max(&r->topo->hosts[r->gens[i].src])));
	if (r->o->clock != DP_CLOCK_VIRTUAL)
		return *jumbo ? 9216 + 64 : 2048;
	return frame <= 2048 ? 2048 : RTE_ALIGN_CEIL(RTE_MIN(frame, 9216u + 64), RTE_CACHE_LINE_SIZE);
}

/* The mbuf pool, sized for the largest frame a host may send. Returns 0, -1 with err. */
static int setup_pool(struct run *r, char *err, size_t errlen)
{
	bool jumbo;
	uint16_t room = (uint16_t)(RTE_PKTMBUF_HEADROOM + pool_room(r, &jumbo));

	r->frame_room = (uint16_t)(room - RTE_PKTMBUF_HEADROOM);
	uint32_t n = r->o->mbufs ? r->o->mbufs : jumbo ? 16383 : 65535;
	/* virtual clock: no port reads the pool; its frames go on huge pages (dp_pool.h) */
	char why[160];
	r->mp = dp_pool_create("rl_mbuf", n, RTE_ALIGN(sizeof(struct dp_mbuf_priv), RTE_MBUF_PRIV_ALIGN),
			       room, r->o->clock == DP_CLOCK_VIRTUAL, (unsigned)r->mpi.local_size, why, sizeof(why));
	if (r->mp == NULL) {
		snprintf(err, errlen, "mbuf pool of %u frames of %u B: %s", n, room, why);
		return -1;
	}
	return 0;
}

/*
 * The lookahead of the cut with the emulated NICs in their leaves'
 * partitions (topo_part.h); UINT64_MAX when it cannot be cut.
 */
static uint64_t lanes_lookahead(const struct run *r)
{
	const struct topo *t = r->topo;
	uint32_t *part_sw = calloc(t->n_switches + 1, sizeof(*part_sw));
	uint32_t *part_host = calloc(t->n_hosts + 1, sizeof(*part_host));
	uint64_t la = UINT64_MAX;
	char err[256];

	if (part_sw && part_host &&
	    topo_partition(t, r->o->workers, true, part_sw, part_host, err, sizeof(err)) == 0)
		la = topo_partition_lookahead(t, part_sw, part_host);
	free(part_sw);
	free(part_host);
	return la;
}

/*
 * Whether the emulated NICs run in their leaves' partitions, each
 * partition driving its ranks' part of the collective (dp_nics_coll_splits),
 * instead of all in partition 0: partitions on the virtual clock (threads,
 * or MPI ranks: rank 0 gathers the others' lanes at the end, gather_lanes;
 * not --process, whose live clock has no end to gather at), one collective
 * that can be split, no --rdma transfer (driven from one place), no series
 * file; a sweep of sizes with windows shorter than the gap between sizes
 * (its next size starts as a global event: dp_nic.h). When
 * not, why says why (for stderr; "" when there are no partitions).
 */
static bool nics_in_lanes(const struct run *r, char *why, size_t len)
{
	const struct opts *o = r->o;
	uint64_t la;

	why[0] = '\0';
	if (o->clock != DP_CLOCK_VIRTUAL || o->workers <= 1 || dp_peers_on(&o->peers))
		return false;
	if (o->nics_together) {
		snprintf(why, len, "--nics-together");
		return false;
	}
	/* (a series' rows are merged from the lanes at the end: threads share them, ranks do not) */
	if (o->coll.n != 1 || o->rdma.n != 0 || (o->coll_series && r->mpi.size > 1) ||
	    !dp_nics_coll_splits(o->coll.spec[0])) {
		snprintf(why, len, "with their leaves they need one collective of one iteration, "
				   "no --rdma, and under mpirun no --coll-series");
		return false;
	}
	if (!dp_nics_coll_sweeps(o->coll.spec[0]))
		return true;
	if ((la = lanes_lookahead(r)) == UINT64_MAX) {
		snprintf(why, len, "with their leaves, a sweep of sizes needs links between partitions");
		return false;
	}
	if (la >= DP_COLL_SIZE_GAP_NS) {
		snprintf(why, len, "with their leaves, a sweep of sizes needs the links between "
				   "partitions shorter than %llu ns (the gap between sizes), not %" PRIu64,
			 DP_COLL_SIZE_GAP_NS, la);
		return false;
	}
	return true;
}

/*
 * Everything before traffic: EAL, pool, engine, fabric, emulated NICs, ports,
 * captures, CSV, telemetry. Returns 0, 1 (runtime failure) or EXIT_BAD_INPUT,
 * with a message in err.
 */
static int setup(struct run *r, char *err, size_t errlen)
{
	struct opts *o = r->o;

	int prc = eal_init(r, err, errlen);
	if (prc < 0)
		return prc == -EINVAL ? EXIT_BAD_INPUT : 1;
	if (setup_pool(r, err, errlen) < 0)
		return 1;
	if (dp_engine_init(&r->eng, o->clock, tsc_ns, NULL) < 0) {
		snprintf(err, errlen, "engine: out of memory");
		return 1;
	}
	struct dp_fabric_opts fo = {.seed = o->seed, .host_rx = host_rx, .host_rx_ctx = r,
				    .flow_capacity = o->flows, .watchdog = o->watchdog ? &o->wd : NULL};
	r->fab = dp_fabric_create(r->topo, &r->eng, r->mp, &fo, err, errlen);
	if (r->fab == NULL)
		return 1;
	bool multi = dp_peers_on(&o->peers);
	bool lanes = nics_in_lanes(r, r->lanes_why, sizeof(r->lanes_why));
	prc = dp_parts_create(&r->parts, r->fab, multi ? o->peers.n : o->workers, lanes, o->clock,
			      tsc_ns, err, errlen);
	if (prc == 0)
		prc = dp_parts_use_mpi(r->parts, &r->mpi, err, errlen);
	if (prc < 0)
		return prc == -EINVAL ? EXIT_BAD_INPUT : 1;
	if (multi && dp_parts_set_process(r->parts, o->peers.self) < 0)
		return EXIT_BAD_INPUT; /* (not reached: the options were checked) */
	o->nic.max_qps = 0;
	for (unsigned i = 0; i < o->coll.n; i++) /* (the largest; a NIC is in one collective) */
		o->nic.max_qps = RTE_MAX(o->nic.max_qps,
					 dp_nics_coll_qps(o->coll.spec[i], topo_emulated_hosts(r->topo)));
	o->nic.seed = o->seed;
	uint32_t *lane_of = NULL;
	if (lanes) {
		o->nic.lanes = dp_parts_count(r->parts);
		lane_of = calloc(r->topo->n_hosts + 1, sizeof(*lane_of));
		if (lane_of == NULL) {
			snprintf(err, errlen, "out of memory");
			return 1;
		}
		for (uint32_t h = 0; h < r->topo->n_hosts; h++)
			lane_of[h] = dp_parts_of_host(r->parts, h);
		o->nic.lane_of_host = lane_of;
	}
	prc = dp_nics_create(&r->nics, r->fab, &o->nic, err, errlen);
	free(lane_of);
	o->nic.lane_of_host = NULL;
	if (prc < 0)
		return 1;
	if (o->clock == DP_CLOCK_LIVE &&
	    (prc = dp_port_setup(&r->ports, r->fab, r->mp, o->veth, dp_peers_remote_hosts(&o->peers),
				 err, errlen)) < 0)
		return prc == -EINVAL ? EXIT_BAD_INPUT : 1; /* DPDK refused a host's devargs */
	if (multi && (prc = dp_peers_start(&o->peers, r->fab, r->mp, PEER_WAIT_S, err, errlen)) < 0)
		return prc == -EINVAL ? EXIT_BAD_INPUT : 1;
	int rc = setup_captures(r, err, errlen);
	if (rc < 0)
		return rc == -EINVAL ? EXIT_BAD_INPUT : 1;
	/* (under mpirun rank 0 writes the file; the others sample with it) */
	const char *csv_path = r->mpi.rank == 0 ? o->csv : "/dev/null";
	if (o->csv && dp_csv_open(&r->csv, r->fab, csv_path, o->csv_interval_ns) < 0) {
		snprintf(err, errlen, "--csv %s: cannot write", o->csv);
		return 1;
	}
	if (r->mpi.rank != 0)
		return 0; /* (rank 0 answers telemetry, from every rank's counters: part_collect) */
	r->ctl = dp_ctl_create(r->fab, &r->nics, r->mpi.size > 1, err, errlen);
	return r->ctl ? 0 : 1;
}

/* --te: a controller places the --coll's connections. Returns 0 or EXIT_BAD_INPUT with err. */
static int start_te(struct run *r, char *err, size_t errlen)
{
	uint32_t n = r->topo->n_hosts * r->topo->n_hosts;
	uint32_t(*pairs)[2] = malloc(sizeof(*pairs) * (n + 1));
	uint32_t np = pairs ? dp_nics_coll_pairs(&r->nics, pairs, n) : 0;
	int rc = np ? dp_te_create(&r->te, r->fab, (const uint32_t(*)[2])pairs, np, err, errlen) : -1;

	free(pairs);
	if (rc < 0) {
		if (np == 0)
			snprintf(err, errlen, "--te needs a --coll (its traffic matrix)");
		return EXIT_BAD_INPUT;
	}
	r->fab->te = &r->te;
	if (!r->o->quiet)
		dp_te_print(&r->te, stdout);
	return 0;
}

/*
 * The run's time starts: arm the CSV sampler, the generators, RDMA transfers,
 * the collective and TE. Returns 0 or EXIT_BAD_INPUT with err.
 */
static int start_traffic(struct run *r, char *err, size_t errlen)
{
	struct opts *o = r->o;

	/* live: the run's time starts here; what is set up after is armed at start_ns */
	r->start_ns = dp_engine_now(&r->eng);
	if (o->csv) {
		r->csv.last_ns = r->start_ns;
		dp_timer_add(&r->eng, r->start_ns + o->csv_interval_ns, on_csv, r, 0);
	}
	for (unsigned i = 0; i < o->gen.n; i++) {
		const struct topo_host *src = &r->topo->hosts[r->gens[i].src];
		uint32_t host_max = host_frame_max(src), most = RTE_MIN((uint32_t)r->frame_room, host_max);
		if (r->gens[i].size > most) {
			char why[48] = " and the packet pool's frames";
			if (most == host_max)
				snprintf(why, sizeof(why), " + %u", DP_FRAME_L2_MAX);
			snprintf(err, errlen,
				 "%s %s: size %u is larger than the hosts' frames (%s: %u B, MTU %u%s)",
				 o->gen.where[i] ? o->gen.where[i] : "--gen", o->gen.spec[i], r->gens[i].size,
				 src->name, most, src->mtu, why);
			return EXIT_BAD_INPUT;
		}
		r->gens[i].start_ns += r->start_ns;
		dp_gen_start(&r->gens[i], r->fab);
	}
	for (unsigned i = 0; i < o->rdma.n; i++)
		if (dp_nics_add_rdma(&r->nics, o->rdma.spec[i], r->start_ns, err, errlen) < 0) {
			at_where(err, errlen, o->rdma.where[i]);
			return EXIT_BAD_INPUT;
		}
	dp_nics_tag_colls(&r->nics, o->coll.n > 1);
	for (unsigned i = 0; i < o->coll.n; i++)
		if (dp_nics_add_coll(&r->nics, o->coll.spec[i], r->start_ns, stdout, err, errlen) < 0) {
			at_where(err, errlen, o->coll.where[i]);
			return EXIT_BAD_INPUT;
		}
	if (o->coll_series && !o->coll.n) {
		snprintf(err, errlen, "--coll-series needs a --coll");
		return EXIT_BAD_INPUT;
	}
	/* (under mpirun rank 0 writes the file, as --csv) */
	const char *series = o->coll_series && r->mpi.rank != 0 ? "/dev/null" : o->coll_series;
	if (o->coll.n && dp_nics_coll_series(&r->nics, series, err, errlen) < 0)
		return EXIT_BAD_INPUT;
	if (dp_nics_colls_begin(&r->nics, err, errlen) < 0)
		return 1;
	return o->te ? start_te(r, err, errlen) : 0;
}

/* The run loop of the chosen clock, timed. */
static void run(struct run *r)
{
	struct timespec w0, w1;
	char summary[256];

	topo_summary(r->topo, summary, sizeof(summary));
	if (!r->o->quiet)
		printf("rocelab-dp: %s; %s clock; %u host ports; packet pool %u frames of %u B; "
		       "telemetry /rocelab/*\n",
		       summary, r->o->clock == DP_CLOCK_LIVE ? "live" : "virtual", r->ports.n,
		       r->mp->size, (unsigned)r->frame_room);
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &w0);
	if (r->o->clock == DP_CLOCK_VIRTUAL)
		run_virtual(r);
	else
		r->run_rc = run_live(r);
	clock_gettime(CLOCK_MONOTONIC, &w1);
	r->wall_s = ts_diff(&w0, &w1);
	r->after_signal_s = stop_requested ? ts_diff(&stop_signal_ts, &w1) : 0;
}

/* Times the packet pool had no frame to give: senders that waited, frames dropped as no_mbuf. */
static uint64_t pool_ran_dry(const struct run *r)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < r->o->gen.n; i++)
		n += r->gens[i].no_mbuf;
	for (uint32_t s = 0; s < r->topo->n_switches; s++)
		n += r->fab->sw[s].drops[DP_DROP_NO_MBUF];
	for (uint32_t c = 0; c < r->fab->n_chans; c++)
		n += r->fab->chans[c].drops[DP_DROP_NO_MBUF];
	for (uint32_t i = 0; i < r->nics.n; i++)
		n += r->nics.h[i].no_mbuf;
	return n;
}

/* How the run ended: its time, events, forwards, a stop signal, the lag. */
static void report_run(const struct run *r, uint64_t elapsed)
{
	uint64_t fwd = 0;

	for (uint32_t s = 0; s < r->topo->n_switches; s++)
		fwd += r->fab->sw[s].fwd_pkts;
	if (r->o->clock == DP_CLOCK_VIRTUAL)
		fprintf(stderr, "\n");
	printf("\nrocelab-dp: ran %.6f s (%s) in %.3f s of wall time, %" PRIu64 " events, %" PRIu64
	       " switch forwards (%.3f M per wall second)\n\n",
	       (double)elapsed / 1e9, r->o->clock == DP_CLOCK_LIVE ? "live" : "virtual", r->wall_s,
	       r->eng.fired, fwd, r->wall_s > 0 ? (double)fwd / r->wall_s / 1e6 : 0.0);
	if (stop_requested)
		printf("rocelab-dp: stopped by %s, %.3f ms after the signal\n",
		       stop_requested == SIGINT ? "SIGINT" : "SIGTERM", r->after_signal_s * 1e3);
	if (r->o->clock == DP_CLOCK_LIVE)
		printf("rocelab-dp: lag behind real time: max %.3f ms, at the end %.3f ms (%s)\n\n",
		       (double)r->eng.lag_max_ns / NS_PER_MS, (double)r->eng.lag_ns / NS_PER_MS,
		       r->eng.lag_max_ns >= LAG_REPORT_NS
			       ? "it fell behind: link tables cover the fabric's time up to the lag at the "
				 "end, generators' rates are against real time"
			       : "kept up");
}

/* The tables at exit. Returns the exit status: 1 when RDMA failed or the lag policy stopped the run. */
static int report(struct run *r)
{
	uint64_t elapsed = dp_engine_now(&r->eng) - r->start_ns;
	/* live and behind: the fabric has done its work up to `lag` ago; utilisation
	 * and pause shares are of the links over that time, not over work not done */
	uint64_t fabric_ns = elapsed > r->eng.lag_ns ? elapsed - r->eng.lag_ns : 0;

	uint64_t dry = pool_ran_dry(r); /* (said even with --quiet: the figures are not the model's) */
	if (dry)
		fprintf(stderr, "rocelab-dp: the packet pool ran dry %" PRIu64 " times: senders waited and "
			"switches dropped for want of a frame, an emulator limit (give --mbufs%s more)%s\n",
			dry, r->o->clock == DP_CLOCK_LIVE ? " and --mem" : "",
			dp_parts_count(r->parts) > 1 ? "; with --workers above 1 what followed also "
			"depended on the threads' timing: not reproducible" : "");
	if (!r->o->quiet) {
		report_run(r, elapsed);
		dp_stats_print(r->fab, fabric_ns, stdout);
		dp_flows_print(&r->fab->flows, r->topo, 20, stdout);
		dp_port_print(&r->ports, r->topo, stdout);
		dp_peers_print(&r->o->peers, stdout);
		for (unsigned i = 0; i < r->o->gen.n; i++)
			dp_gen_print(&r->gens[i], r->o->gen.spec[i], r->start_ns + elapsed, i == 0, stdout);
		if (r->nics.n) {
			printf("\n");
			dp_nics_report(&r->nics, stdout);
		}
	}
	if (r->o->coll.n)
		dp_nics_print_totals(&r->nics, stdout);
	if (dp_nics_failures(&r->nics)) {
		fprintf(stderr, "rocelab-dp: %u RDMA transfer(s) failed or did not finish\n",
			dp_nics_failures(&r->nics));
		return 1;
	}
	if (r->eng.timer_fail) { /* events were lost (the tables say so): not a sound run */
		fprintf(stderr, "rocelab-dp: %" PRIu64 " timers could not be added (out of memory): "
			"events were lost, the figures may be wrong\n", r->eng.timer_fail);
		return 1;
	}
	return r->run_rc;
}

/* Free what is held before DPDK starts: the topology, traffic specs, generators. */
static void free_early(struct run *r)
{
	free(r->gens);
	topo_traffic_free(r->traffic);
	topo_free(r->topo);
	spec_list_free(&r->o->gen);
	spec_list_free(&r->o->rdma);
	spec_list_free(&r->o->coll);
	dp_peers_close(&r->o->peers);
	r->gens = NULL;
	r->traffic = NULL;
	r->topo = NULL;
}

/* Free everything, in the reverse order of set-up; removes the DPDK runtime directory. */
static void teardown(struct run *r)
{
	if (r->fab)
		r->fab->te = NULL;
	dp_te_free(&r->te);
	dp_ctl_destroy(r->ctl); /* first: its telemetry commands read the NICs */
	dp_nics_destroy(&r->nics);
	for (unsigned i = 0; i < MAX_CAPTURES; i++)
		dp_capture_close(r->cap[i]);
	dp_csv_close(&r->csv);
	dp_port_close(&r->ports);
	dp_peers_close(&r->o->peers); /* (before the pool: its ports hold mbufs) */
	for (unsigned i = 0; r->gens && r->fab && i < r->o->gen.n; i++)
		dp_gen_stop(&r->gens[i]);
	dp_fabric_destroy_at_exit(r->fab); /* (then dp_eal_stop: rte_eal_cleanup) */
	dp_parts_destroy(r->parts);
	dp_engine_free(&r->eng);
	rte_mempool_free(r->mp);
	free_early(r);
	dp_eal_stop(&r->eal); /* also removes the runtime directory */
}

/* rc, or 1 if the tables could not be written to stdout (EPIPE, a full disk): never exit 0 on lost output. */
static int report_written(int rc)
{
	errno = 0;
	bool flushed = fflush(stdout) == 0;
	if (flushed && !ferror(stdout))
		return rc;
	/* (an earlier write's errno is gone: say the flush's, or only that one failed) */
	fprintf(stderr, "rocelab-dp: writing the report to stdout failed: %s\n",
		!flushed && errno ? strerror(errno) : "write error");
	return rc ? rc : 1;
}

/*
 * Under mpirun: what a run of several ranks cannot do yet, and the
 * partitions (one per rank). Rank 0 alone writes stdout. Returns 0 or
 * EXIT_BAD_INPUT (every rank says so: they all have the same options).
 */
static int mpi_opts(struct run *r)
{
	struct opts *o = r->o;
	char np[32];

	if (r->mpi.size <= 1)
		return 0;
	snprintf(np, sizeof(np), "-np %d", r->mpi.size);
	if (o->clock != DP_CLOCK_VIRTUAL)
		return bad("under mpirun the virtual clock only (--clock virtual):", np);
	if (o->workers != 1 && o->workers != (uint32_t)r->mpi.size)
		return bad("under mpirun the partitions are the ranks: --workers 1 or as many as", np);
	o->workers = (uint32_t)r->mpi.size;
	if (r->mpi.rank != 0) {
		r->quiet_progress = true;
		if (freopen("/dev/null", "w", stdout) == NULL)
			return 1;
	}
	return 0;
}

/*
 * Under mpirun, whether every rank set up and started (rc of each): the
 * largest of their statuses, so that all of them stop together, each taking
 * down what it set up (its DPDK runtime directory), when one of them could
 * not start; nothing in set-up waits on another rank, so none is left waiting.
 * (One rank: rc.)
 */
static int ranks_started(struct run *r, int rc)
{
	if (r->mpi.size <= 1)
		return rc;
	int *all = calloc((size_t)r->mpi.size, sizeof(*all));
	if (all == NULL || dp_mpi_allgather(&r->mpi, &rc, all, sizeof(rc)) < 0) {
		free(all);
		dp_mpi_abort(&r->mpi, 1); /* (nothing else tells the others) */
		return 1;
	}
	int worst = 0;
	for (int i = 0; i < r->mpi.size; i++)
		worst = all[i] > worst ? all[i] : worst;
	free(all);
	return worst;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct run r;
	char err[512] = "";

	memset(&r, 0, sizeof(r));
	int rc = dp_mpi_start(&r.mpi, &argc, &argv);
	if (rc < 0) {
		fprintf(stderr, "rocelab-dp: %s\n", rc == -ENOTSUP ? "started by mpirun, but built "
			"without MPI (install libopenmpi-dev and rebuild)" : "MPI did not start");
		return rc == -ENOTSUP ? EXIT_BAD_INPUT : 1;
	}
	/* every rank finds the same fault in the options: rank 0 alone says it */
	int saved_err = r.mpi.rank != 0 ? dup(STDERR_FILENO) : -1;
	if (saved_err >= 0 && freopen("/dev/null", "w", stderr) == NULL)
		return 1;
	rc = parse_opts(argc, argv, &o);
	r.o = &o;
	if (rc == 0)
		rc = mpi_opts(&r);
	if (saved_err >= 0) {
		fflush(stderr);
		dup2(saved_err, STDERR_FILENO);
		close(saved_err);
	}
	if (rc == 0 && o.check)
		rc = o.topology ? topo_check_file(o.topology, stdout, stderr)
				: bad("--check needs --topology FILE", NULL);
	else if (rc == 0 && (rc = load_topology(&r)) == 0) {
		if (o.list_hosts)
			list_hosts(r.topo);
		else if ((rc = parse_gens(&r)) == 0)
			rc = plan_process(&r);
	}
	if (rc || o.check || o.list_hosts) {
		free_early(&r);
		dp_mpi_finish(&r.mpi);
		return rc;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* a reader that went away (a pipe closed by a killed parent) must not kill
	 * the process before teardown removes its DPDK runtime directory: the
	 * write fails instead, and the exit status says so (report_written) */
	signal(SIGPIPE, SIG_IGN);
	rc = setup(&r, err, sizeof(err));
	if (rc == 0)
		rc = start_traffic(&r, err, sizeof(err));
	int any_rc = ranks_started(&r, rc);
	if (any_rc == 0) {
		run(&r);
		rc = r.mpi.rank == 0 ? report(&r) : r.run_rc;
		rc = report_written(rc);
	} else if (rc == EXIT_BAD_INPUT) { /* (every rank finds it: rank 0 says it) */
		if (r.mpi.rank == 0)
			fprintf(stderr, "rocelab-dp: %s\n", err);
	} else if (rc) {
		fprintf(stderr, "rocelab-dp: %s\n", err);
	} else {
		rc = any_rc; /* (another rank said why) */
	}
	teardown(&r);
	dp_mpi_finish(&r.mpi);
	return rc;
}
