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

#include "fl_fabric.h" /* FL_REFILL_MAX_NS */
#include "rl_mem.h"
#include "rl_version.h"
#include "topo_part.h"
#include "topo_traffic.h"

static void usage(FILE *out);

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

/*
 * The options, one row each: its name, its argument, the function that reads
 * it into struct opts, and its --help text (the only copy). A setter returns
 * 0, or what parse_opts returns (EXIT_BAD_INPUT, having said why).
 */
struct opt_def {
	const char *name;
	int has_arg;
	int (*set)(struct opts *o, const char *arg);
	const char *help;
};

static int set_topology(struct opts *o, const char *arg) { o->topology = arg; return 0; }
static int set_check(struct opts *o, const char *arg) { (void)arg; o->check = true; return 0; }
static int set_list_hosts(struct opts *o, const char *arg) { (void)arg; o->list_hosts = true; return 0; }
static int set_together(struct opts *o, const char *arg) { (void)arg; o->nics_together = true; return 0; }
static int set_traffic(struct opts *o, const char *arg) { o->traffic = arg; return 0; }
static int set_coll_series(struct opts *o, const char *arg) { o->coll_series = arg; return 0; }

/* --workload: its syntax now (bad input before anything starts); the workload itself once the
 * topology is read (setup.c: parse_gens). */
static int set_workload(struct opts *o, const char *arg)
{
	struct dp_job_spec s;
	char err[512];

	if (dp_job_spec_parse(arg, &s, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocelab-dp: %s\n", err);
		return EXIT_BAD_INPUT;
	}
	dp_job_spec_free(&s);
	o->workload = arg;
	return 0;
}
/* --job-coll: its keys now (bad input before anything starts); the job takes the text. */
static int set_job_coll(struct opts *o, const char *arg)
{
	struct ne_coll_spec s;
	char err[512];

	if (dp_job_coll_parse(arg, &s, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocelab-dp: %s\n", err);
		return EXIT_BAD_INPUT;
	}
	ne_coll_spec_free(&s);
	o->job_coll = arg;
	return 0;
}
static int set_jobs(struct opts *o, const char *arg) { o->jobs = arg; return 0; }
static int set_jobs_svg(struct opts *o, const char *arg) { o->jobs_svg = arg; return 0; }
static int set_jobs_mix_only(struct opts *o, const char *arg) { (void)arg; o->jobs_mix_only = true; return 0; }
/* --jobs-alone K: not for users (no help line): jobs_alone.c's run of job K alone. Its
 * outputs are its parent's: none written here, only the job's report on stdout. */
static int set_jobs_alone(struct opts *o, const char *arg)
{
	char *end = NULL;
	long k = strtol(arg, &end, 10);

	if (end == arg || *end || k < 0 || k > INT32_MAX)
		return bad("--jobs-alone takes a job's index, not", arg);
	o->jobs_alone = (int)k;
	return 0;
}
static int set_te(struct opts *o, const char *arg) { (void)arg; o->te = true; return 0; }

/* packet, flow or flow,refill=TIME (at most FL_REFILL_MAX_NS) */
static int set_fabric(struct opts *o, const char *arg)
{
	const char *refill = "flow,refill=";

	o->flow_refill_ns = 0;
	if (strncmp(arg, refill, strlen(refill)) == 0) {
		if (dp_parse_time(arg + strlen(refill), &o->flow_refill_ns) < 0 ||
		    o->flow_refill_ns > FL_REFILL_MAX_NS)
			return bad("bad --fabric flow,refill=TIME (e.g. 100ns, 1us; at most 1s):", arg);
		o->fabric_flow = true;
		return 0;
	}
	if (strcmp(arg, "packet") != 0 && strcmp(arg, "flow") != 0)
		return bad("--fabric: packet, flow or flow,refill=TIME, not", arg);
	o->fabric_flow = strcmp(arg, "flow") == 0;
	return 0;
}
static int set_csv(struct opts *o, const char *arg) { o->csv = arg; return 0; }
static int set_pipeline(struct opts *o, const char *arg) { o->pipeline = arg; return 0; }

static int set_json(struct opts *o, const char *arg) { o->json = arg; return 0; }
static int set_busy_poll(struct opts *o, const char *arg) { (void)arg; o->busy_poll = true; return 0; }
static int set_name(struct opts *o, const char *arg) { o->name = arg; return 0; }
static int set_quiet(struct opts *o, const char *arg) { (void)arg; o->quiet = true; return 0; }

/* A whole number in [lo, hi] into *out, else bad(why, arg). */
static int set_u32(const char *arg, uint64_t lo, uint64_t hi, uint32_t *out, const char *why)
{
	uint64_t v;

	if (dp_parse_u64(arg, &v) < 0 || v < lo || v > hi)
		return bad(why, arg);
	*out = (uint32_t)v;
	return 0;
}

static int set_workers(struct opts *o, const char *arg)
{
	return set_u32(arg, 1, MAX_WORKERS, &o->workers, "bad --workers (1..256):");
}

static int set_mem(struct opts *o, const char *arg)
{
	uint32_t mb;
	int rc = set_u32(arg, 64, 65536, &mb, "bad --mem (64..65536 MB):");

	o->mem_mb = rc ? o->mem_mb : mb;
	return rc;
}

static int set_mbufs(struct opts *o, const char *arg)
{
	return set_u32(arg, 1024, MAX_MBUFS, &o->mbufs, "bad --mbufs (1024..16777215):");
}

static int set_flows(struct opts *o, const char *arg)
{
	return set_u32(arg, 0, 1u << 24, &o->flows, "bad --flows (0..16777216):");
}

static int set_seed(struct opts *o, const char *arg)
{
	return dp_parse_u64(arg, &o->seed) < 0 ? bad("bad --seed:", arg) : 0;
}

static int set_process(struct opts *o, const char *arg)
{
	return dp_peers_parse_process(&o->peers, arg) < 0
		? bad("bad --process, want K/N with K < N, 2 <= N <= 16:", arg) : 0;
}

static int set_peer(struct opts *o, const char *arg)
{
	return dp_peers_add(&o->peers, arg) < 0 ? bad("too many --peer (at most 15):", arg) : 0;
}

static int set_clos(struct opts *o, const char *arg)
{
	return sscanf(arg, "%u,%u,%u", &o->clos[0], &o->clos[1], &o->clos[2]) != 3
		? bad("bad --clos, want S,L,H:", arg) : 0;
}

static int set_clock(struct opts *o, const char *arg)
{
	if (strcmp(arg, "live") == 0)
		o->clock = DP_CLOCK_LIVE;
	else if (strcmp(arg, "virtual") == 0)
		o->clock = DP_CLOCK_VIRTUAL;
	else
		return bad("bad --clock (live or virtual):", arg);
	return 0;
}

static int set_duration(struct opts *o, const char *arg)
{
	return dp_parse_time(arg, &o->duration_ns) < 0 ? bad("bad --duration (e.g. 10s, 250ms):", arg)
						      : 0;
}

/* --X help: the table that owns X's keys, printed; exits 0. */
static void spec_help(void (*help)(FILE *out))
{
	help(stdout);
	exit(0);
}

static int set_gen(struct opts *o, const char *arg)
{
	if (strcmp(arg, "help") == 0)
		spec_help(dp_gen_help);
	return spec_push(&o->gen, arg, NULL) < 0 ? bad("out of memory for --gen", arg) : 0;
}

static int set_rdma(struct opts *o, const char *arg)
{
	if (strcmp(arg, "help") == 0)
		spec_help(dp_rdma_help);
	return spec_push(&o->rdma, arg, NULL) < 0 ? bad("out of memory for --rdma", arg) : 0;
}

static int set_coll(struct opts *o, const char *arg)
{
	if (strcmp(arg, "help") == 0) /* the --coll language, from its one table */
		spec_help(ne_coll_keys_help);
	return spec_push(&o->coll, arg, NULL) < 0 ? bad("out of memory for --coll", arg) : 0;
}

static int set_watchdog(struct opts *o, const char *arg)
{
	o->watchdog = true;
	if (arg && parse_watchdog(arg, &o->wd) < 0)
		return bad("bad --pfc-watchdog (detect=T,restore=T,poll=T,action=drop|forward):", arg);
	return 0;
}

static int set_nic(struct opts *o, const char *arg)
{
	char err[512];

	if (strcmp(arg, "help") == 0)
		spec_help(dp_nic_opts_help);
	if (dp_nic_opts_parse(&o->nic, arg, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocelab-dp: %s (--nic help lists the keys)\n", err);
		return EXIT_BAD_INPUT;
	}
	return 0;
}

static int set_veth(struct opts *o, const char *arg)
{
	if (strcmp(arg, "af_packet") == 0)
		o->veth = DP_VETH_AF_PACKET;
	else if (strcmp(arg, "af_xdp") == 0)
		o->veth = DP_VETH_AF_XDP;
	else
		return bad("bad --veth (af_packet or af_xdp):", arg);
	return 0;
}

static int set_capture(struct opts *o, const char *arg)
{
	if (o->n_capture == MAX_CAPTURES || strchr(arg, '=') == NULL)
		return bad("bad --capture, want LINK=FILE (at most 16):", arg);
	o->capture[o->n_capture++] = arg;
	return 0;
}

static int set_csv_interval(struct opts *o, const char *arg)
{
	if (dp_parse_time(arg, &o->csv_interval_ns) < 0 || o->csv_interval_ns == 0)
		return bad("bad --csv-interval:", arg);
	return 0;
}

static int set_idle_nap(struct opts *o, const char *arg)
{
	if (dp_parse_time(arg, &o->idle_nap_ns) < 0 || o->idle_nap_ns > IDLE_NAP_LIMIT_NS)
		return bad("bad --idle-nap (e.g. 20us, 200us; at most 10ms):", arg);
	return 0;
}

static int set_lag_policy(struct opts *o, const char *arg)
{
	return parse_lag_policy(arg, o) < 0
		? bad("bad --lag-policy (best-effort or stop[=TIME], e.g. stop=50ms):", arg) : 0;
}

static int set_version(struct opts *o, const char *arg)
{
	(void)o, (void)arg;
	printf("rocelab-dp %s (commit %s)\n", RL_VERSION, RL_COMMIT);
	exit(0);
}

static int set_help(struct opts *o, const char *arg)
{
	(void)o, (void)arg;
	usage(stdout);
	exit(0);
}

static const struct opt_def opt_defs[] = {
	{"topology", required_argument, set_topology,
	 "  --topology FILE     YAML topology (see topologies/README.md)\n"},
	{"clos", required_argument, set_clos,
	 "  --clos S,L,H        built-in 2-tier Clos: S spines, L leaves, H hosts per leaf\n"},
	{"check", no_argument, set_check,
	 "  --check             validate the topology, and the --gen, --rdma, --coll and --traffic\n"
	 "                      given with it, and exit (0 valid, 2 invalid); no DPDK, except\n"
	 "                      that each switch's .spec program (--pipeline, pipeline:) is\n"
	 "                      built on DPDK's SWX pipeline and freed; --pipeline needs no\n"
	 "                      topology\n"},
	{"list-hosts", no_argument, set_list_hosts,
	 "  --list-hosts        print NAME ATTACH IFNAME IPV4/24 GW MAC MTU IPV6/64 GW6 per host; no DPDK\n"},
	{"clock", required_argument, set_clock,
	 "  --clock live|virtual  live: real time, hosts on DPDK ports (default);\n"
	 "                      virtual: simulated time, hosts are sinks, traffic from --gen\n"},
	{"duration", required_argument, set_duration,
	 "  --duration TIME     stop after TIME (e.g. 10s, 500ms); virtual default: when idle\n"},
	{"workers", required_argument, set_workers,
	 "  --workers N         virtual clock: cut the fabric into N partitions run on N threads\n"
	 "                      (same output as 1; docs/ARCHITECTURE.md, dataplane/parallel/dp_part.h) [1]\n"
	 "                      Under mpirun -np K: K partitions, one per rank, same output\n"
	 "                      (rank 0 prints and writes files and answers telemetry, at\n"
	 "                      the poll points between windows; virtual clock)\n"
	 "                      Emulated NICs run with their leaves, the collective split by\n"
	 "                      rank, when it can be (one collective of one iteration, no\n"
	 "                      --rdma, under mpirun no --coll-series; a sweep of sizes:\n"
	 "                      cut links shorter than 10 us); else all in partition 0 with the\n"
	 "                      collective (stderr says which)\n"},
	{"nics-together", no_argument, set_together,
	 "  --nics-together     with --workers: every emulated NIC in partition 0 all the same\n"
	 "                      (the cut before NICs ran with their leaves; same output)\n"},
	{"process", required_argument, set_process,
	 "  --process K/N       live clock: run partition K of the N-way cut (the one --workers N\n"
	 "                      makes) as one of N processes; needs a --peer per other process\n"},
	{"peer", required_argument, set_peer,
	 "  --peer DEVARGS      the DPDK port to another process (e.g. net_memif0,role=server,\n"
	 "                      socket=PATH,socket-abstract=no), in process order, skipping this\n"
	 "                      one; links cut between processes share it, a VLAN id per link\n"
	 "                      direction (dataplane/io/dp_peer.h)\n"},
	{"gen", required_argument, set_gen,
	 "  --gen SPEC          in-process traffic SRC>DST[:key=value,...] (repeatable;\n"
	 "                      keys proto,flows,sport,size,rate,count,start,dscp,ttl:\n"
	 "                      --gen help lists them with values and defaults)\n"},
	{"rdma", required_argument, set_rdma,
	 "  --rdma SPEC         RDMA WRITEs between emulated NICs SRC>DST[:key=value,...]\n"
	 "                      (repeatable; keys qps,size,count,depth,mtu,dscp,sport,start:\n"
	 "                      --rdma help;\n"
	 "                      the data is verified; a failed transfer makes the exit status 1)\n"},
	{"coll", required_argument, set_coll,
	 "  --coll SPEC         a collective over emulated NICs, nccl-tests-like lines per size\n"
	 "                      (keys op,hosts,sizes,model,qps,mode,channels,chunk,window,cts,\n"
	 "                      sport,iters,warmup,data, NCCL_*, proxy costs, series:\n"
	 "                      --coll help lists them with values and defaults);\n"
	 "                      repeat it for collectives at once on disjoint hosts (lines\n"
	 "                      tagged [c1], [c2]... in the order given)\n"},
	{"coll-series", required_argument, set_coll_series,
	 "  --coll-series FILE  the --coll's active QPs per NIC over virtual time, CSV, one\n"
	 "                      row per interval of its key series (default 10us; one --coll)\n"},
	{"traffic", required_argument, set_traffic,
	 "  --traffic FILE      generators, rdma transfers and collectives from a YAML file\n"
	 "                      (the keys of --gen, --rdma, --coll; no limit on entries;\n"
	 "                      see topologies/README.md); adds to the flags\n"},
	{"workload", required_argument, set_workload,
	 "  --workload KIND:SOURCE[,iters=N,hosts=A+B+...,cycle_ps=N]\n"
	 "                      run a training job's graph on the emulated NICs (virtual\n"
	 "                      clock): chakra:PREFIX (PREFIX.0.et ...), astra:FILE (ASTRA-sim\n"
	 "                      text, DATA) or llm:SPEC (rocelab-llm's spec); rank i on the\n"
	 "                      i-th emulated host or of hosts=; per iteration its time, the\n"
	 "                      exposed communication and each collective's time and busbw;\n"
	 "                      group=NAME:R+R+... (repeatable): the ranks of a Chakra pg_name\n"},
	{"job-coll", required_argument, set_job_coll,
	 "  --job-coll SPEC     the settings of --workload's or --jobs' collectives, --coll's\n"
	 "                      keys (model=nccl,order=nccl,qps=4,mode=split,...) but those the\n"
	 "                      job decides (op, hosts, sizes, iters...); default --coll's\n"},
	{"jobs", required_argument, set_jobs,
	 "  --jobs FILE         many jobs at once: a job file (rocelab-place's), each job placed\n"
	 "                      by its policy and run as --workload on its hosts from its\n"
	 "                      arrival, and each alone: per job its iteration time alone\n"
	 "                      and in the mix, and the slowdown\n"},
	{"jobs-svg", required_argument, set_jobs_svg,
	 "  --jobs-svg FILE     draw --jobs' placement (which job holds which server) as SVG\n"},
	{"jobs-mix-only", no_argument, set_jobs_mix_only,
	 "  --jobs-mix-only     --jobs runs the mix only, no job alone: each job's iteration\n"
	 "                      in the mix, no slowdown (Meta's scale: 192 runs alone of a\n"
	 "                      24K-GPU fabric would take far longer than its mix)\n"},
	{"jobs-alone", required_argument, set_jobs_alone, ""},
	{"nic", required_argument, set_nic,
	 "  --nic qpc=N,miss=TIME  emulated NICs hold N QP contexts; a miss costs TIME, and\n"
	 "                      the fetched context stays until its QP has sent (hold=on|off:\n"
	 "                      accepted, no longer needed: every miss makes progress);\n"
	 "                      quantum=BYTES: deficit round robin among ready QPs;\n"
	 "                      msgrate=N: at most N messages per second per NIC (--nic help)\n"},
	{"pfc-watchdog", optional_argument, set_watchdog,
	 "  --pfc-watchdog [detect=T,restore=T,poll=T,action=drop|forward]\n"
	 "                      PFC watchdog on switch egress (SONiC defaults 200ms/200ms/100ms, drop)\n"},
	{"fabric", required_argument, set_fabric,
	 "  --fabric packet|flow[,refill=TIME]\n"
	 "                      the collectives' fabric model: packet (default) emulates every\n"
	 "                      frame; flow runs each size as max-min fair flows on the same\n"
	 "                      paths (no PFC, buffers, drops, flowlets; see the man page);\n"
	 "                      refill=TIME: exact max-min rates at most once per TIME;\n"
	 "                      in between only the flows on the links that changed get\n"
	 "                      new rates (approximate, faster on fabric-wide traffic;\n"
	 "                      default exact)\n"},
	{"te", no_argument, set_te,
	 "  --te                traffic engineering: a controller places each connection of\n"
	 "                      the --coll, or of the --workload or --jobs jobs' collectives,\n"
	 "                      on the leaf-spine-leaf path with most capacity left (again\n"
	 "                      after failures); other traffic uses ECMP\n"},
	{"pipeline", required_argument, set_pipeline,
	 "  --pipeline FILE.spec  every switch's IPv4 forwarding decision is this DPDK SWX\n"
	 "                      program (e.g. p4/ecmp.spec; its tables filled from the\n"
	 "                      topology's routes, dataplane/fabric/dp_swx.h); queues, PFC,\n"
	 "                      buffers and rewrites stay rocelab's (docs/howto/p4-pipeline.md)\n"},
	{"veth", required_argument, set_veth,
	 "  --veth af_packet|af_xdp  driver for veth hosts (default af_packet)\n"},
	{"capture", required_argument, set_capture,
	 "  --capture LINK=FILE write LINK's frames (both directions) to FILE (repeatable):\n"
	 "                      FILE.pcapng: pcapng, one interface per link, each frame's\n"
	 "                      direction; several links may share it. Else classic pcap.\n"},
	{"csv", required_argument, set_csv,
	 "  --csv FILE          per-link time series (utilisation, queue, pause, drops)\n"},
	{"csv-interval", required_argument, set_csv_interval,
	 "  --csv-interval TIME sample period of --csv (default 100ms)\n"},
	{"json", required_argument, set_json,
	 "  --json FILE         also write the report's tables and result lines to FILE as\n"
	 "                      one JSON document (schema: docs/reference/rocelab-dp.schema.json)\n"},
	{"busy-poll", no_argument, set_busy_poll,
	 "  --busy-poll         live mode: never sleep (for benchmarks)\n"},
	{"idle-nap", required_argument, set_idle_nap,
	 "  --idle-nap TIME     live mode: longest nap when idle (default 20us; longer naps\n"
	 "                      leave more CPU to endpoints sharing the machine)\n"},
	{"lag-policy", required_argument, set_lag_policy,
	 "  --lag-policy best-effort|stop[=LIMIT]\n"
	 "                      live mode when the fabric falls behind real time (the lag, in\n"
	 "                      the tables and /rocelab/info): best-effort runs on late (default);\n"
	 "                      stop ends the run with exit status 1 once the lag exceeds LIMIT\n"
	 "                      (default 100ms)\n"},
	{"flows", required_argument, set_flows,
	 "  --flows N           record the path of up to N flows (default 65536, 0: off)\n"},
	{"seed", required_argument, set_seed,
	 "  --seed N            seed of link loss, flowlet choices and emulated NICs' QPNs (default 1)\n"},
	{"name", required_argument, set_name,
	 "  --name NAME         DPDK file prefix / telemetry name (default rocelab-PID)\n"},
	{"mem", required_argument, set_mem,
	 "  --mem MB            DPDK memory without hugepages (default 512)\n"},
	{"mbufs", required_argument, set_mbufs,
	 "  --mbufs N           frames the packet pool holds (default 65535; 16383 when a host's\n"
	 "                      MTU is above 1500 or it is an emulated NIC). A frame's room: on\n"
	 "                      the live clock 2048 B, 9280 B in that case; on the virtual one\n"
	 "                      the largest frame a host sends (an emulated NIC's: 4224 B), at\n"
	 "                      least 2048 B. Each takes its room + ~200 B: of --mem on the live\n"
	 "                      clock, of its own huge-page memory on the virtual one. The start\n"
	 "                      line shows the pool. When it runs dry, senders wait and switches\n"
	 "                      drop (no_mbuf): an emulator limit. --fabric flow sends no\n"
	 "                      frame: its pool is 1024 frames whatever N says\n"},
	{"quiet", no_argument, set_quiet,
	 "  --quiet             no tables at exit\n"},
	{"version", no_argument, set_version,
	 "  --version           the version and the git commit it was built from\n"},
	{"help", no_argument, set_help,
	 "  -h, --help          this text\n"},
};

#define N_OPTS (sizeof(opt_defs) / sizeof(opt_defs[0]))

static void usage(FILE *out)
{
	fputs("usage: rocelab-dp (--topology FILE | --clos S,L,H) [options]\n"
	      "       rocelab-dp --check --topology FILE\n"
	      "       rocelab-dp --check --pipeline FILE.spec [--topology FILE]\n"
	      "\n"
	      "Run every switch and link of a topology in one DPDK process.\n"
	      "\n", out);
	for (size_t i = 0; i < N_OPTS; i++)
		fputs(opt_defs[i].help, out);
	fputs("\n"
	      "While it runs: DPDK telemetry under /rocelab/ (dpdk-telemetry.py -f NAME, or\n"
	      "scripts/dashboard.py --name NAME); SIGINT/SIGTERM stop it and print the tables.\n"
	      "At exit it checks that every frame was delivered, dropped with a reason or is\n"
	      "still held; a mismatch is an AUDIT line on stderr naming the place and the count.\n"
	      "ROCELAB_AUDIT=warn (default) | fatal (a mismatch makes the exit status 1) | off.\n"
	      "Exit status: 0 ok, 1 runtime failure, 2 bad input.\n", out);
}

/* What parse_opts starts from: the options' defaults. */
static void opts_default(struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->csv_interval_ns = 100000000ull;
	o->seed = 1;
	o->mem_mb = 512;
	o->jobs_alone = -1;
	o->idle_nap_ns = IDLE_SLEEP_MAX_NS;
	pfc_watchdog_config_default(&o->wd);
	o->flows = 65536;
	o->lag_limit_ns = LAG_LIMIT_DEFAULT_NS;
	o->workers = 1;
}

/* The rules between options, once all are read. 0, or EXIT_BAD_INPUT saying why. */
static int opts_check(const struct opts *o)
{
	if (!o->topology && !o->clos[0] && !(o->check && o->coll.n && !o->rdma.n && !o->gen.n &&
					      !o->traffic && !o->list_hosts) && /* (--check --coll: keys) */
	    !(o->check && o->pipeline && !o->list_hosts)) /* (--check --pipeline: the program) */
		return bad("a topology is needed: --topology FILE or --clos S,L,H", NULL);
	if (o->topology && o->clos[0])
		return bad("give either --topology or --clos, not both", NULL);
	if (dp_peers_on(&o->peers) && (o->workers > 1 || o->clock != DP_CLOCK_LIVE || o->lag_stop))
		return bad("--process runs one partition per process on the live clock: not with --workers, "
			   "--clock virtual or --lag-policy stop", NULL);
	if (o->workload && (o->clock != DP_CLOCK_VIRTUAL || o->workers > 1 || o->coll.n || o->rdma.n ||
			    o->traffic || dp_peers_on(&o->peers)))
		return bad("--workload runs alone on the virtual clock: add --clock virtual; not with "
			   "--workers, --coll, --rdma, --traffic or --process", NULL);
	if (o->job_coll && !o->workload && !o->jobs)
		return bad("--job-coll sets the collectives of a job: give --workload or --jobs", NULL);
	if (o->jobs && (o->workload || o->clock != DP_CLOCK_VIRTUAL || o->workers > 1 || o->coll.n ||
			o->rdma.n || o->traffic || dp_peers_on(&o->peers)))
		return bad("--jobs runs alone on the virtual clock: add --clock virtual; not with "
			   "--workload, --workers, --coll, --rdma, --traffic or --process", NULL);
	if (o->jobs_svg && !o->jobs)
		return bad("--jobs-svg draws the placement of --jobs: give --jobs", NULL);
	if (o->jobs_mix_only && !o->jobs)
		return bad("--jobs-mix-only leaves out the runs alone of --jobs: give --jobs", NULL);
	if (o->workers > 1 && o->clock == DP_CLOCK_LIVE && o->lag_stop)
		return bad("--lag-policy stop works with one worker (partitions of the live clock report "
			   "their lag but do not stop on it)", NULL);
	return 0;
}

int parse_opts(int argc, char **argv, struct opts *o)
{
	struct option lo[N_OPTS + 1];
	int c, rc = 0;

	for (size_t i = 0; i < N_OPTS; i++)
		lo[i] = (struct option){opt_defs[i].name, opt_defs[i].has_arg, NULL, (int)i + 256};
	lo[N_OPTS] = (struct option){NULL, 0, NULL, 0};
	opts_default(o);
	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'h')
			set_help(o, NULL);
		if (c < 256 || c >= 256 + (int)N_OPTS)
			return bad("unknown or incomplete option", argv[optind - 1]);
		rc = opt_defs[c - 256].set(o, optarg);
	}
	if (rc == 0 && optind < argc)
		return bad("unexpected argument", argv[optind]);
	o->argc = argc;
	o->argv = argv;
	if (o->jobs_alone >= 0) { /* (the parent writes these) */
		o->json = o->csv = o->jobs_svg = NULL;
		o->n_capture = 0;
		o->quiet = true;
	}
	return rc ? rc : opts_check(o);
}
