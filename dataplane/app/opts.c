/* SPDX-License-Identifier: BSD-3-Clause */
/* opts.c: rocelab-dp's command line: usage, the options, the spec lists. */
#define _GNU_SOURCE /* sched_getaffinity */
#include "app.h"

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

#include "rl_mem.h"
#include "topo_part.h"
#include "topo_traffic.h"

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
		"  --check             validate the topology, and the --gen, --coll and --traffic\n"
		"                      given with it, and exit (0 valid, 2 invalid); no DPDK\n"
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
		"                      (keys op,hosts,sizes,model,qps,mode,channels,chunk,window,cts,\n"
		"                      sport,iters,warmup,data, NCCL_*, proxy costs, series:\n"
		"                      --coll help lists them with values and defaults);\n"
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
int bad(const char *what, const char *arg)
{
	if (arg)
		fprintf(stderr, "rocelab-dp: %s '%s' (see --help)\n", what, arg);
	else
		fprintf(stderr, "rocelab-dp: %s (see --help)\n", what);
	return EXIT_BAD_INPUT;
}

/* Append spec (where: NULL or its FILE:LINE). Returns 0, or -ENOMEM. */
int spec_push(struct spec_list *l, const char *spec, const char *where)
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

void spec_list_free(struct spec_list *l)
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

int parse_opts(int argc, char **argv, struct opts *o)
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
			if (strcmp(optarg, "help") == 0) { /* the --coll language, from its one table */
				ne_coll_keys_help(stdout);
				exit(0);
			}
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
	if (!o->topology && !o->clos[0] && !(o->check && o->coll.n)) /* (--check --coll: keys) */
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
