/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * setup.c: from options to a running fabric: the EAL, the topology, the
 * traffic file, the packet pool, the fabric, the emulated NICs and their lanes,
 * captures, TE and the traffic's start.
 */
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

#include "dp_swx.h"
#include "rl_mem.h"
#include "topo_part.h"
#include "topo_traffic.h"

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

/* The --capture spec i's FILE (after its '='). */
static const char *capture_file(const struct run *r, unsigned i)
{
	return strchr(r->o->capture[i], '=') + 1;
}

/* Name link l's pcapng interface after its first end's port and its peer: "leaf0:p3->spine0". */
static void capture_ifname(const struct topo *t, int l, char *buf, size_t len)
{
	const struct topo_link *k = &t->links[l];
	char port[16] = "";

	if (k->port[0])
		snprintf(port, sizeof(port), ":p%u", (unsigned)k->port[0]);
	snprintf(buf, len, "%s%s->%s", topo_node_name(t, k->end[0]), port, topo_node_name(t, k->end[1]));
}

/*
 * Open the --capture files: the specs that name one FILE share it (a
 * pcapng holds several links; r->cap[i] is NULL for all but the first).
 * Returns 0, or -EINVAL with err for a bad LINK=FILE or a file that cannot
 * be written (bad input: exit 2).
 */
static int setup_captures(struct run *r, char *err, size_t errlen)
{
	for (unsigned i = 0; i < r->o->n_capture; i++) {
		char spec[256], ifname[300], descr[sizeof(spec) + 8];
		const char *file = capture_file(r, i);
		if (strlen(r->o->capture[i]) >= sizeof(spec)) {
			snprintf(err, errlen, "--capture: argument too long");
			return -EINVAL;
		}
		snprintf(spec, sizeof(spec), "%s", r->o->capture[i]);
		*strchr(spec, '=') = '\0';
		int l = topo_link_by_name(r->topo, spec);
		if (l < 0 || r->fab->chans[2 * l].capture) {
			snprintf(err, errlen, l < 0 ? "--capture: no link named '%s'" : "--capture: link '%s' named twice",
				 spec);
			return -EINVAL;
		}
		unsigned j = 0;
		while (j < i && strcmp(capture_file(r, j), file) != 0)
			j++;
		if (j == i) {
			/* (under mpirun rank 0 writes the file; the others hold records for it) */
			r->cap[i] = dp_capture_open(r->mpi.rank == 0 ? file : "/dev/null",
						    dp_capture_fmt_of(file), err, errlen);
			if (r->cap[i] == NULL)
				return -EINVAL;
			if (dp_parts_count(r->parts) > 1)
				dp_capture_hold(r->cap[i]); /* the links' directions may be sent by several threads */
		}
		capture_ifname(r->topo, l, ifname, sizeof(ifname));
		snprintf(descr, sizeof(descr), "link %s", spec);
		int rc = dp_capture_add_link(r->cap[j], ifname, descr, &r->fab->chans[2 * l],
					     &r->fab->chans[2 * l + 1]);
		if (rc == -ENOSPC) {
			snprintf(err, errlen, "--capture %s: a .pcap file holds one link; name it FILE.pcapng to hold several",
				 r->o->capture[i]);
			return -EINVAL;
		}
		if (rc < 0) {
			snprintf(err, errlen, "--capture %s: write failed", file);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * The switch that runs a program (--pipeline, pipeline:), or NULL. --te
 * places paths in the C next-hop stage, which a program replaces: the two
 * together are refused rather than TE printed and not applied.
 */
static const char *program_switch(const struct topo *t, const char *all)
{
	for (uint32_t i = 0; i < t->n_switches; i++)
		if (all || t->switches[i].pipeline[0])
			return t->switches[i].name;
	return NULL;
}

/* --topology FILE or --clos S,L,H into r->topo. Returns 0 or EXIT_BAD_INPUT (with a message). */
int load_topology(struct run *r)
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
	/* the switches' programs (--pipeline, pipeline:), before DPDK starts: FILE:LINE at once */
	int rc = dp_swx_check(r->topo, o->pipeline, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "rocelab-dp: %s\n", err);
		return rc == -ENOMEM ? 1 : EXIT_BAD_INPUT;
	}
	const char *ps = o->te ? program_switch(r->topo, o->pipeline) : NULL;
	if (ps) {
		fprintf(stderr, "rocelab-dp: --te: switch %s runs a program (--pipeline, pipeline:), which "
				"replaces the next-hop stage where TE places paths; run TE on the C pipeline\n", ps);
		return EXIT_BAD_INPUT;
	}
	return 0;
}

/*
 * --check: every switch's program (--pipeline, the topology's pipeline:
 * keys), or --pipeline alone without a topology (--check refuses --clos), built as a run builds it
 * and freed (dp_swx_check_build). 0, EXIT_BAD_INPUT with FILE:LINE, or 1.
 */
int check_programs(const struct opts *o)
{
	char err[512];
	struct topo *t = NULL;

	if (o->topology && topo_load(o->topology, &t, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocelab-dp: %s\n", err); /* (topo_check_file said it first: not reached) */
		return EXIT_BAD_INPUT;
	}
	int rc = t || o->pipeline ? dp_swx_check_build(t, o->pipeline, stdout, err, sizeof(err)) : 0;

	topo_free(t);
	if (rc < 0)
		fprintf(stderr, "rocelab-dp: %s\n", err);
	return rc == -EINVAL ? EXIT_BAD_INPUT : rc < 0 ? 1 : 0;
}

/* --list-hosts: NAME ATTACH IFNAME IPV4/24 GW MAC MTU IPV6/64 GW6, one host a line. */
void list_hosts(const struct topo *t)
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
	char msg[384]; /* (a message cut to leave room for WHERE) */
	snprintf(msg, sizeof(msg), "%.383s", err);
	snprintf(err, errlen, "%s: %s", where, msg); /* (cut, as any message longer than err) */
}

/*
 * --check --coll SPEC without a topology: each spec's keys and the rules
 * between them (not its hosts). Returns 0, or EXIT_BAD_INPUT saying why.
 */
int coll_specs_check(const struct opts *o)
{
	char why[448];

	for (unsigned i = 0; i < o->coll.n; i++) {
		struct ne_coll_spec s;
		ne_coll_spec_default(&s);
		int rc = ne_coll_spec_parse(&s, o->coll.spec[i], why, sizeof(why));
		ne_coll_spec_free(&s);
		if (rc) {
			fprintf(stderr, "rocelab-dp: --coll: %s\n", why);
			return EXIT_BAD_INPUT;
		}
	}
	return 0;
}

int check_coll_keys(const struct opts *o)
{
	int rc = coll_specs_check(o);

	if (rc)
		return rc;
	printf("--coll: %u spec%s OK (keys only: no topology)\n", o->coll.n, o->coll.n == 1 ? "" : "s");
	return 0;
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

/* --workload: read, checked and placed before any DPDK. 0, 1 (out of memory) or EXIT_BAD_INPUT. */
static int load_workload(struct run *r)
{
	struct dp_job_spec s;
	char err[768];

	if (dp_job_spec_parse(r->o->workload, &s, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocelab-dp: %s\n", err);
		return EXIT_BAD_INPUT;
	}
	s.coll = r->o->job_coll;
	r->job = dp_job_load(&s, r->topo, err, sizeof(err));
	dp_job_spec_free(&s);
	if (r->job == NULL) {
		fprintf(stderr, "rocelab-dp: %s\n", err);
		return strstr(err, "out of memory") ? 1 : EXIT_BAD_INPUT;
	}
	if (r->o->te && dp_job_te_check(r->job, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocelab-dp: %s\n", err);
		return EXIT_BAD_INPUT;
	}
	return 0;
}

/*
 * The traffic file and the generators are checked before anything starts.
 * Returns 0, 1 (out of memory) or EXIT_BAD_INPUT (with a message).
 */
int parse_gens(struct run *r)
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
	for (unsigned i = 0; i < o->rdma.n; i++) /* (before any DPDK, as the collectives below) */
		if (dp_rdma_check(r->topo, o->rdma.spec[i], err, sizeof(err)) < 0) {
			at_where(err, sizeof(err), o->rdma.where[i]);
			fprintf(stderr, "rocelab-dp: %s\n", err);
			return EXIT_BAD_INPUT;
		}
	for (unsigned i = 0; i < o->coll.n; i++) /* (before any DPDK: the run would fail later) */
		if (dp_coll_spec_check(r->topo, o->coll.spec[i], err, sizeof(err)) < 0) {
			at_where(err, sizeof(err), o->coll.where[i]);
			fprintf(stderr, "rocelab-dp: %s\n", err);
			return EXIT_BAD_INPUT;
		}
	if (o->jobs) {
		r->mix = dp_mix_load(o->jobs, r->topo, o->job_coll, o->jobs_svg, o->jobs_alone, err,
				     sizeof(err));
		if (r->mix == NULL) {
			fprintf(stderr, "rocelab-dp: %s\n", err);
			return strncmp(err, "out of memory", 13) == 0 ? 1 : EXIT_BAD_INPUT;
		}
		if (o->te && dp_mix_te_check(r->mix, err, sizeof(err)) < 0) {
			fprintf(stderr, "rocelab-dp: %s\n", err);
			return EXIT_BAD_INPUT;
		}
		/* (before any DPDK: each job alone in a process of its own) */
		if (!o->check && !o->jobs_mix_only && o->jobs_alone < 0 &&
		    jobs_alone(r, err, sizeof(err)) < 0) {
			fprintf(stderr, "rocelab-dp: %s\n", err);
			return 1;
		}
	}
	return o->workload ? load_workload(r) : 0;
}

/*
 * --process K/N: the cut and its VLAN ids (dp_peer.h); traffic sources only
 * on this process's hosts. Returns 0, 1 (out of memory) or EXIT_BAD_INPUT.
 */
int plan_process(struct run *r)
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
/* --fabric flow's packet pool: the smallest --mbufs takes (no frame is sent; the audit's
 * --test-leak-mbufs takes up to 1000) */
#define FLOW_POOL_FRAMES 1024u

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

static bool nics_in_lanes(const struct run *r, char *why, size_t len);

/*
 * The mbuf pool, sized for the largest frame a host may send. Under mpirun
 * a rank's pool is its partition's share (dp_parts_pool_share; lanes: the
 * emulated NICs run with their leaves). Returns 0, -1 with err.
 */
static int setup_pool(struct run *r, bool lanes, char *err, size_t errlen)
{
	bool jumbo;
	uint16_t room = (uint16_t)(RTE_PKTMBUF_HEADROOM + pool_room(r, &jumbo));

	r->frame_room = (uint16_t)(room - RTE_PKTMBUF_HEADROOM);
	r->pool_frames = r->o->mbufs ? r->o->mbufs : jumbo ? 16383 : 65535;
	/* --fabric flow sends no frame: a pool of --mbufs' size would only be pages
	 * zeroed at set-up (1.3 GB at 131071 jumbo frames, 17% of a 1,024-GPU E1
	 * run). The live clock and mpirun keep theirs: fabric_flow.c refuses them
	 * later, with the reason, and their ports and ranks need it until then. */
	if (r->o->fabric_flow && r->o->clock == DP_CLOCK_VIRTUAL && r->mpi.size <= 1)
		r->pool_frames = FLOW_POOL_FRAMES;
	uint32_t n = r->pool_frames;
	if (r->mpi.size > 1)
		n = dp_parts_pool_share(r->topo, (uint32_t)r->mpi.size, lanes, (uint32_t)r->mpi.rank, n);
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
 * (its next size starts as a global event: dp_coll.h). When
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
int setup(struct run *r, char *err, size_t errlen)
{
	struct opts *o = r->o;

	int prc = eal_init(r, err, errlen);
	if (prc < 0)
		return prc == -EINVAL ? EXIT_BAD_INPUT : 1;
	bool lanes = nics_in_lanes(r, r->lanes_why, sizeof(r->lanes_why));
	if (setup_pool(r, lanes, err, errlen) < 0)
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
	if ((prc = dp_swx_attach(r->fab, o->pipeline, err, errlen)) < 0)
		return prc == -EINVAL ? EXIT_BAD_INPUT : 1;
	bool multi = dp_peers_on(&o->peers);
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
	o->nic.max_qps = RTE_MAX(o->nic.max_qps, dp_job_qps(r->job));
	o->nic.max_qps = RTE_MAX(o->nic.max_qps, dp_mix_qps(r->mix));
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
		o->nic.lane_alone = r->mpi.size > 1; /* (a rank runs partition mpi.rank alone: dp_parts_use_mpi) */
		o->nic.lane_self = (uint32_t)r->mpi.rank;
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
	if (setup_captures(r, err, errlen) < 0)
		return EXIT_BAD_INPUT;
	if ((prc = audit_setup(r, err, errlen)) != 0)
		return prc;
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

/*
 * --te's traffic matrix into *p: the --coll's connections, or the
 * connections of the --workload or --jobs jobs (dp_job_te_pairs), each
 * once. 0, or EXIT_BAD_INPUT with err.
 */
static int te_pairs(struct run *r, struct dp_job_pairs *p, char *err, size_t errlen)
{
	if (r->job || r->mix) {
		if (dp_job_te_pairs(r->job, p, err, errlen) < 0 || dp_mix_te_pairs(r->mix, p, err, errlen) < 0)
			return EXIT_BAD_INPUT;
		if (dp_job_pairs_unique(p) < 0)
			return snprintf(err, errlen, "--te: out of memory"), EXIT_BAD_INPUT;
		/* (a job inside one server is no mistake: TE has nothing of it to place) */
		if (p->n == 0 && !r->o->quiet)
			printf("te: no connection of the jobs crosses the fabric: nothing to place\n");
		return 0;
	}
	if (dp_nics_coll_tree(&r->nics)) {
		snprintf(err, errlen, "--te places a ring's connections; --coll algo=tree and algo=auto "
				      "(NCCL's tree) are not supported with it");
		return EXIT_BAD_INPUT;
	}
	uint32_t n = dp_nics_coll_pairs(&r->nics, NULL, 0); /* (not n_hosts^2: 4.8 GB at 24K hosts) */
	p->pair = malloc(sizeof(*p->pair) * ((size_t)n + 1));
	p->cap = p->pair ? n : 0;
	p->n = p->pair ? dp_nics_coll_pairs(&r->nics, p->pair, n) : 0;
	if (p->n == 0)
		return snprintf(err, errlen, "--te needs a --coll (its traffic matrix)"), EXIT_BAD_INPUT;
	return 0;
}

/* --te: a controller places the traffic matrix's connections (te_pairs). Returns 0 or
 * EXIT_BAD_INPUT with err. */
static int start_te(struct run *r, char *err, size_t errlen)
{
	struct dp_job_pairs p = {0};
	int rc = te_pairs(r, &p, err, errlen);

	/* (the jobs' pairs with their demands; --coll's each at its NIC's line rate: demand NULL) */
	if (rc == 0 && dp_te_create_demand(&r->te, r->fab, (const uint32_t(*)[2])p.pair, p.demand,
					   p.n, err, errlen) < 0)
		rc = EXIT_BAD_INPUT;
	free(p.pair);
	free(p.demand);
	if (rc)
		return rc;
	r->fab->te = &r->te;
	if (!r->o->quiet)
		dp_te_print(&r->te, stdout);
	return 0;
}

/*
 * The run's time starts: arm the CSV sampler, the generators, RDMA transfers,
 * the collective and TE. Returns 0 or EXIT_BAD_INPUT with err.
 */
int start_traffic(struct run *r, char *err, size_t errlen)
{
	struct opts *o = r->o;

	/* live: the run's time starts here; what is set up after is armed at start_ns */
	r->start_ns = dp_engine_now(&r->eng);
	dp_ctl_start(r->ctl, r->start_ns); /* /rocelab/info's elapsed_ns */
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
	if (o->fabric_flow) {
		int frc = fabric_flow_start(r, err, errlen);
		if (frc)
			return frc;
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
	if (r->job && dp_job_start(r->job, &r->nics, r->start_ns, err, errlen) < 0)
		return 1;
	if (r->mix && dp_mix_start(r->mix, &r->nics, r->start_ns, err, errlen) < 0)
		return 1;
	return o->te ? start_te(r, err, errlen) : 0;
}
