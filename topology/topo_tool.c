/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocelab-topo: check a topology file, print its addresses and ECMP routes, or
 * dump the whole resolved topology as JSON (for scripts, e.g. the Mininet
 * module topologies/rocelab_mininet.py). No DPDK.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_version.h"
#include "topo.h"
#include "topo_gen.h"
#include "topo_part.h"
#include "topo_route.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocelab-topo --check FILE     validate; exit 0 (prints a summary) or 2\n"
		"       rocelab-topo --routes FILE    print hosts and every switch's ECMP groups\n"
		"       rocelab-topo --clos S,L,H[,KEY=VALUE...]\n"
		"                                     the same for the generated 2-tier Clos\n"
		"                                     (S spines, L leaves, H hosts per leaf)\n"
		"       rocelab-topo --json FILE      the resolved topology as JSON on stdout: every\n"
		"                                     default applied, derived addresses, ports;\n"
		"                                     rates in bit/s, times in ns, sizes in bytes\n"
		"       rocelab-topo --json-clos S,L,H[,KEY=VALUE...]  the same for the Clos\n"
		"       rocelab-topo --generate SPEC [-o FILE]\n"
		"                                     write a generated fabric as a topology file\n"
		"                                     (stdout, or FILE); exit 2 on a bad SPEC\n"
		"       rocelab-topo --partitions N FILE [--nics-with-leaves]\n"
		"                                     the cut rocelab-dp --workers N makes: each\n"
		"                                     partition's switches and hosts, the links\n"
		"                                     between partitions and the lookahead; emulated\n"
		"                                     NICs in partition 0, or with their leaves (a\n"
		"                                     collective of one size and iteration: lanes)\n"
		"       rocelab-topo --version            the version and the git commit\n"
		"       rocelab-topo --help\n"
		"SPEC is KEY=VALUE pairs separated by commas:\n"
		"  2-tier Clos: spines=S,leaves=L,hosts=H (hosts per leaf)\n"
		"  AI zones:    zones=Z,leaves=L,spines=S,atsw=A,hosts=H (leaves and spines per\n"
		"               zone; every spine linked to each of the A aggregation switches)\n"
		"  and optional: host-rate, leaf-rate, spine-rate (host-leaf, leaf-spine and\n"
		"  spine-ATSW links, e.g. 400G; default 100G), host-delay, leaf-delay,\n"
		"  spine-delay (e.g. 1us), leaf-oversub, spine-oversub (capacity below a\n"
		"  switch over capacity above it, e.g. 7 or 1:7; sets that tier's rate),\n"
		"  attach (veth, vhost, emulated, net_null), host-mtu, profile (5tuple, eecmp,\n"
		"  dqpn, 3tuple), lb (ecmp, resilient, flowlet, pinning), leaf-links (parallel\n"
		"  links per leaf-spine pair, 1..16), name.\n"
		"  Servers of GPUs (instead of leaves and hosts): servers=N (per zone),\n"
		"  gpus=G (per server, default 8), layout=meta (2 servers per leaf, GPU i of a\n"
		"  server on port i or G+i) or rail (GPU i of every server on leaf i); every\n"
		"  GPU an emulated host sK-gI with server: sK, gpu: I.\n"
		"  e.g. --generate servers=4,gpus=8,layout=rail,spines=4,host-rate=400G\n"
		"  e.g. --generate zones=2,leaves=32,spines=8,atsw=4,hosts=16,host-rate=400G,\n"
		"       leaf-rate=400G,spine-oversub=7,attach=emulated -o ai.yaml\n"
		"The file format is described in topologies/README.md.\n");
}

static void print_hosts(const struct topo *t, FILE *out)
{
	char a[48], b[48], m[24], g[24];
	fprintf(out, "%-12s %-8s %-10s %-5s %-14s %-18s %-18s %s\n", "host", "attach", "leaf",
		"port", "ipv4", "ipv6", "mac", "gateway mac");
	for (uint32_t i = 0; i < t->n_hosts; i++) {
		const struct topo_host *h = &t->hosts[i];
		fprintf(out, "%-12s %-8s %-10s %-5u %-14s %-18s %-18s %s\n", h->name,
			topo_attach_name(h->attach), t->switches[h->leaf].name, h->leaf_port,
			topo_ipv4_str(h->ipv4, a, sizeof(a)), topo_ipv6_str(h->ipv6, b, sizeof(b)),
			topo_mac_str(h->mac, m, sizeof(m)), topo_mac_str(h->gw_mac, g, sizeof(g)));
	}
	fputc('\n', out);
}

static int print_routes(struct topo *t)
{
	char sum[256];
	topo_summary(t, sum, sizeof(sum));
	printf("%s\n\n", sum);
	print_hosts(t, stdout);
	struct topo_routes *r = topo_route_create(t);
	if (!r) {
		fprintf(stderr, "rocelab-topo: out of memory computing routes\n");
		return 1;
	}
	topo_route_print(r, stdout);
	topo_route_free(r);
	return 0;
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

/* "key": "value" (value escaped), preceded by ", " unless first. */
static void json_kv(FILE *out, bool first, const char *key, const char *value)
{
	fprintf(out, "%s\"%s\": ", first ? "" : ", ", key);
	json_str(out, value);
}

static void json_switch(const struct topo *t, uint32_t i, FILE *out)
{
	const struct topo_switch *s = &t->switches[i];
	char a[48], m[24];
	fprintf(out, "    {");
	json_kv(out, true, "name", s->name);
	json_kv(out, false, "role", topo_role_name(s->role));
	fprintf(out, ", \"index\": %" PRIu32 ", \"leaf_index\": %d", i, s->leaf_index);
	json_kv(out, false, "buffer", s->buffer);
	json_kv(out, false, "profile", rl_profile_name(s->profile));
	json_kv(out, false, "algo", rl_hash_algo_name(s->algo));
	fprintf(out, ", \"seed\": %" PRIu32, s->seed);
	json_kv(out, false, "lb", topo_lb_name(s->lb));
	fprintf(out, ", \"flowlet_timeout_ns\": %" PRIu64 ", \"resilient_buckets\": %" PRIu32,
		s->flowlet_timeout_ns, s->resilient_buckets);
	json_kv(out, false, "mac", topo_mac_str(s->mac, m, sizeof(m)));
	json_kv(out, false, "loopback4", topo_ipv4_str(s->loopback4, a, sizeof(a)));
	if (s->role == TOPO_ROLE_RTSW) {
		json_kv(out, false, "subnet4", topo_ipv4_str(s->subnet4, a, sizeof(a)));
		fprintf(out, ", \"prefix4\": 24");
		json_kv(out, false, "gateway4", topo_ipv4_str(s->gw_ipv4, a, sizeof(a)));
		json_kv(out, false, "gateway6", topo_ipv6_str(s->gw_ipv6, a, sizeof(a)));
	}
	fprintf(out, ",\n     \"ports\": [");
	for (uint16_t p = 0; p < s->n_ports; p++) {
		const struct topo_port *pt = &s->ports[p];
		fprintf(out, "%s{\"port\": %u", p ? ", " : "", p);
		json_kv(out, false, "link", t->links[pt->link].name);
		json_kv(out, false, "peer", topo_node_name(t, pt->peer));
		json_kv(out, false, "peer_kind", pt->peer.kind == TOPO_NODE_HOST ? "host" : "switch");
		fprintf(out, ", \"peer_port\": %u", pt->peer_port);
		json_kv(out, false, "mac", topo_mac_str(pt->mac, m, sizeof(m)));
		fputc('}', out);
	}
	fprintf(out, "]}");
}

static void json_host(const struct topo *t, uint32_t i, FILE *out)
{
	const struct topo_host *h = &t->hosts[i];
	char a[48], m[24];
	fprintf(out, "    {");
	json_kv(out, true, "name", h->name);
	json_kv(out, false, "attach", topo_attach_name(h->attach));
	json_kv(out, false, "leaf", t->switches[h->leaf].name);
	fprintf(out, ", \"leaf_index\": %d, \"index\": %u, \"leaf_port\": %u",
		t->switches[h->leaf].leaf_index, h->index, h->leaf_port);
	json_kv(out, false, "link", t->links[h->link].name);
	fprintf(out, ", \"mtu\": %" PRIu32, h->mtu);
	json_kv(out, false, "netns", h->netns);
	json_kv(out, false, "ifname", h->ifname);
	json_kv(out, false, "socket", h->socket);
	json_kv(out, false, "pci", h->pci);
	fprintf(out, ",\n     ");
	json_kv(out, true, "ipv4", topo_ipv4_str(h->ipv4, a, sizeof(a)));
	fprintf(out, ", \"prefix4\": 24");
	json_kv(out, false, "gateway4", topo_ipv4_str(h->gw_ipv4, a, sizeof(a)));
	json_kv(out, false, "ipv6", topo_ipv6_str(h->ipv6, a, sizeof(a)));
	fprintf(out, ", \"prefix6\": 64");
	json_kv(out, false, "gateway6", topo_ipv6_str(h->gw_ipv6, a, sizeof(a)));
	json_kv(out, false, "mac", topo_mac_str(h->mac, m, sizeof(m)));
	json_kv(out, false, "gateway_mac", topo_mac_str(h->gw_mac, m, sizeof(m)));
	fputc('}', out);
}

static void json_link(const struct topo *t, uint32_t i, FILE *out)
{
	const struct topo_link *l = &t->links[i];
	fprintf(out, "    {");
	json_kv(out, true, "name", l->name);
	fprintf(out, ", \"ends\": [");
	json_str(out, topo_node_name(t, l->end[0]));
	fprintf(out, ", ");
	json_str(out, topo_node_name(t, l->end[1]));
	fprintf(out, "], \"ports\": [%u, %u], \"rate_bps\": %" PRIu64 ", \"delay_ns\": %" PRIu64
		     ", \"mtu\": %" PRIu32 ", \"loss\": %.17g}",
		l->port[0], l->port[1], l->rate_bps, l->delay_ns, l->mtu, l->loss);
}

static void json_event(const struct topo *t, uint32_t i, FILE *out)
{
	const struct topo_event *e = &t->events[i];
	bool link = e->target == TOPO_EVENT_LINK;
	fprintf(out, "    {\"at_ns\": %" PRIu64, e->at_ns);
	json_kv(out, false, link ? "link" : "switch",
		link ? t->links[e->index].name : t->switches[e->index].name);
	json_kv(out, false, "action", e->up ? "up" : "down");
	fputc('}', out);
}

/* `  "NAME": [` then one element a line (each(t, i, out)), commas between, `  ],`. */
static void json_array(const struct topo *t, const char *name, uint32_t n,
		       void (*each)(const struct topo *t, uint32_t i, FILE *out), FILE *out)
{
	fprintf(out, "  \"%s\": [\n", name);
	for (uint32_t i = 0; i < n; i++) {
		each(t, i, out);
		fprintf(out, "%s\n", i + 1 < n ? "," : "");
	}
	fprintf(out, "  ],\n");
}


static void json_qos(const struct topo_qos *q, FILE *out)
{
	fprintf(out, "  \"qos\": {\n    \"dscp_prio\": [");
	for (int d = 0; d < 64; d++)
		fprintf(out, "%s%u", d ? ", " : "", q->dscp_prio[d]);
	fprintf(out, "],\n    \"lossless\": [");
	bool first = true;
	for (int p = 0; p < TOPO_NUM_PRIO; p++)
		if (q->lossless_mask & (1u << p)) {
			fprintf(out, "%s%d", first ? "" : ", ", p);
			first = false;
		}
	fprintf(out, "], \"control\": %u, \"dwrr\": [", q->control_prio);
	for (int p = 0; p < TOPO_NUM_PRIO; p++)
		fprintf(out, "%s%u", p ? ", " : "", q->dwrr_weight[p]);
	fprintf(out,
		"],\n    \"ecn\": {\"enabled\": %s, \"kmin\": %" PRIu32 ", \"kmax\": %" PRIu32
		", \"pmax\": %.17g}\n  }\n",
		q->ecn ? "true" : "false", q->ecn_kmin, q->ecn_kmax, q->ecn_pmax);
}

/*
 * The resolved topology as one JSON object: every default applied and every
 * derived address filled in, in file order (the indexes the data plane uses):
 *   name, path; switches [{name, role, index, leaf_index (-1 unless rtsw),
 *   buffer, profile, algo, seed, lb, flowlet_timeout_ns, resilient_buckets,
 *   mac, loopback4, (rtsw:) subnet4, prefix4, gateway4, gateway6,
 *   ports [{port, link, peer, peer_kind, peer_port, mac}]}];
 *   hosts [{name, attach, leaf, leaf_index, index, leaf_port, link, mtu,
 *   netns, ifname, socket, pci, ipv4, prefix4, gateway4, ipv6, prefix6,
 *   gateway6, mac, gateway_mac}]; links [{name, ends, ports, rate_bps,
 *   delay_ns, mtu, loss}]; events [{at_ns, link|switch, action}];
 *   qos {dscp_prio[64], lossless, control, dwrr[8], ecn {enabled, kmin, kmax, pmax}}.
 * Rates in bit/s, times in ns, sizes in bytes.
 */
static void print_json(const struct topo *t, FILE *out)
{
	fprintf(out, "{\n  ");
	json_kv(out, true, "name", t->name);
	json_kv(out, false, "path", t->path);
	fprintf(out, ",\n");
	json_array(t, "switches", t->n_switches, json_switch, out);
	json_array(t, "hosts", t->n_hosts, json_host, out);
	json_array(t, "links", t->n_links, json_link, out);
	json_array(t, "events", t->n_events, json_event, out);
	json_qos(&t->qos, out);
	fprintf(out, "}\n");
}

/* The Clos S,L,H (v) with the settings in keys ("KEY=VALUE,..."); NULL after printing why. */
static struct topo *clos_with_keys(const char *opt, const unsigned v[3], const char *keys)
{
	struct topo_gen_params p;
	char err[512];
	topo_gen_init(&p);
	p.spines = v[0];
	p.leaves = v[1];
	p.hosts = v[2];
	if (topo_gen_parse(&p, keys, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocelab-topo: %s: %s\n", opt, err);
		return NULL;
	}
	if (p.zones) {
		fprintf(stderr, "rocelab-topo: %s is the 2-tier Clos: use --generate for zones\n",
			opt);
		return NULL;
	}
	struct topo *t = topo_gen(&p, err, sizeof(err));
	if (!t)
		fprintf(stderr, "rocelab-topo: %s: %s\n", opt, err);
	return t;
}

/*
 * Build the --clos / --json-clos topology from "S,L,H[,KEY=VALUE...]". NULL
 * after printing why, with *rc the exit code: 2 (bad input) for a malformed
 * S,L,H, counts the address scheme cannot hold or a bad KEY=VALUE.
 */
static struct topo *clos_from_arg(const char *opt, const char *arg, int *rc)
{
	unsigned v[3];
	int used = 0;
	char err[512];
	if (sscanf(arg, "%u,%u,%u%n", &v[0], &v[1], &v[2], &used) != 3 ||
	    (arg[used] && arg[used] != ',')) {
		fprintf(stderr, "rocelab-topo: %s takes S,L,H[,KEY=VALUE...] (e.g. 2,2,4)\n", opt);
		*rc = 2;
		return NULL;
	}
	struct topo *t;
	if (arg[used]) {
		t = clos_with_keys(opt, v, arg + used + 1);
	} else { /* the plain Clos, its size checked as before */
		t = topo_clos(v[0], v[1], v[2], err, sizeof(err));
		if (!t)
			fprintf(stderr, "%s\n", err);
	}
	if (!t)
		*rc = 2;
	return t;
}

/* --generate SPEC [-o FILE]: the fabric as YAML; 0, or 2 for a bad SPEC, 1 if it cannot write. */
static int generate(const char *spec, const char *path)
{
	struct topo_gen_params p;
	char err[512], comment[640];
	topo_gen_init(&p);
	if (topo_gen_parse(&p, spec, err, sizeof(err)) < 0 ||
	    topo_gen_resolve(&p, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocelab-topo: --generate: %s\n", err);
		return 2;
	}
	FILE *out = path ? fopen(path, "w") : stdout;
	if (!out) {
		fprintf(stderr, "rocelab-topo: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	snprintf(comment, sizeof(comment), "Generated by rocelab-topo --generate %s", spec);
	int rc = topo_gen_write(&p, comment, out);
	if ((path && fclose(out)) || (!path && fflush(out)) || rc) {
		fprintf(stderr, "rocelab-topo: cannot write %s\n", path ? path : "the output");
		return 1;
	}
	return 0;
}

/*
 * --partitions N FILE [--nics-with-leaves]: print the cut (topo_part.h).
 * Returns 0, 2 on bad input (file, N), 1 out of memory.
 */
static int print_partitions(const char *ns, const char *path, bool nics_with_leaf)
{
	char err[512], *end;
	struct topo *t = NULL;
	unsigned long n = strtoul(ns, &end, 10);

	if (*ns == '\0' || *end != '\0' || n == 0 || n > TOPO_MAX_PARTITIONS) {
		fprintf(stderr, "rocelab-topo: --partitions %s: want a number of partitions 1..%d\n", ns,
			TOPO_MAX_PARTITIONS);
		return 2;
	}
	if (topo_load(path, &t, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	uint32_t *sw = calloc(t->n_switches, sizeof(*sw)), *ho = calloc(t->n_hosts + 1, sizeof(*ho));
	int rc = sw && ho ? 0 : 1;
	if (rc == 0 && topo_partition(t, (uint32_t)n, nics_with_leaf, sw, ho, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocelab-topo: %s\n", err);
		rc = 2;
	}
	for (uint32_t p = 0; rc == 0 && p < n; p++) {
		uint32_t nh = 0, cut = 0;
		printf("partition %u:", p);
		for (uint32_t i = 0; i < t->n_switches; i++)
			if (sw[i] == p)
				printf(" %s", t->switches[i].name);
		for (uint32_t h = 0; h < t->n_hosts; h++)
			nh += ho[h] == p;
		for (uint32_t l = 0; l < t->n_links; l++)
			cut += (topo_part_of(sw, ho, t->links[l].end[0]) == p) !=
			       (topo_part_of(sw, ho, t->links[l].end[1]) == p);
		printf("; %u hosts; %u links to other partitions\n", nh, cut);
	}
	uint64_t la = UINT64_MAX;
	uint32_t ncut = 0;
	for (uint32_t l = 0; rc == 0 && l < t->n_links; l++)
		if (topo_part_of(sw, ho, t->links[l].end[0]) != topo_part_of(sw, ho, t->links[l].end[1])) {
			ncut++;
			if (t->links[l].delay_ns < la)
				la = t->links[l].delay_ns;
		}
	if (rc == 0 && ncut)
		printf("%u links cut; lookahead (smallest delay of a cut link) %" PRIu64 " ns%s\n", ncut, la,
		       la ? "" : ": no lookahead, the virtual clock refuses this cut");
	else if (rc == 0)
		printf("no link cut\n");
	if (rc == 0 && n > 1 && topo_emulated_hosts(t))
		printf("emulated NICs %s\n",
		       nics_with_leaf ? "with their leaves: rocelab-dp's cut when a collective of one size "
					"and iteration runs in lanes"
				      : "in partition 0: rocelab-dp's cut when they must run together "
					"(--nics-with-leaves: in lanes)");
	free(sw);
	free(ho);
	topo_free(t);
	return rc;
}

/*
 * A bad command line: one line saying what is wrong, and a hint to --help (the
 * whole usage would bury the line that matters). Returns 2, the bad-input exit.
 */
__attribute__((format(printf, 1, 2))) static int bad_args(const char *fmt, ...)
{
	va_list ap;
	fputs("rocelab-topo: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("; see --help\n", stderr);
	return 2;
}

/* What each command takes after it, for bad_args; NULL for no such command. */
static const char *command_args(const char *opt)
{
	static const char *const cmds[][2] = {
		{"--check", "FILE"},	       {"--routes", "FILE"},
		{"--json", "FILE"},	       {"--clos", "S,L,H[,KEY=VALUE...]"},
		{"--json-clos", "S,L,H[,KEY=VALUE...]"}, {"--generate", "SPEC [-o FILE]"},
		{"--partitions", "N FILE [--nics-with-leaves]"},
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(opt, cmds[i][0]))
			return cmds[i][1];
	return NULL;
}

/*
 * The command line's shape: 0 when argv is one of the usage's forms, else 2
 * after one line naming what is wrong (an unknown option, a missing or extra
 * argument). Only the commands' own arguments are checked later.
 */
static int check_args(int argc, char **argv)
{
	if (argc < 2)
		return bad_args("no command (e.g. --check FILE)");
	const char *opt = argv[1], *takes = command_args(opt);
	if (!takes)
		return bad_args("unknown option %s", opt);
	int want = 3; /* the command and its one argument */
	if (!strcmp(opt, "--partitions")) {
		want = 4;
		if (argc == 5 && !strcmp(argv[4], "--nics-with-leaves"))
			return 0;
	} else if (!strcmp(opt, "--generate") && argc > 3) {
		if (strcmp(argv[3], "-o"))
			return bad_args("%s %s after --generate SPEC (only -o FILE)",
					argv[3][0] == '-' ? "unknown option" : "extra argument", argv[3]);
		want = 5;
	}
	if (argc < want)
		return bad_args("%s takes %s", opt, takes);
	if (argc > want)
		return bad_args(argv[want][0] == '-' ? "unknown option %s" : "extra argument %s",
				argv[want]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("rocelab-topo %s (commit %s)\n", RL_VERSION, RL_COMMIT);
		return 0;
	}
	if (check_args(argc, argv))
		return 2;
	if (!strcmp(argv[1], "--partitions"))
		return print_partitions(argv[2], argv[3], argc == 5);
	if (!strcmp(argv[1], "--generate"))
		return generate(argv[2], argc == 5 ? argv[4] : NULL);
	char err[512];
	const char *opt = argv[1];
	if (!strcmp(opt, "--check"))
		return topo_check_file(argv[2], stdout, stderr);
	bool json = !strcmp(opt, "--json") || !strcmp(opt, "--json-clos");
	struct topo *t = NULL;
	int rc = 0;
	if (!strcmp(opt, "--routes") || !strcmp(opt, "--json")) {
		if (topo_load(argv[2], &t, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return 2;
		}
	} else { /* --clos or --json-clos (check_args) */
		t = clos_from_arg(opt, argv[2], &rc);
		if (!t)
			return rc;
	}
	if (json)
		print_json(t, stdout);
	else
		rc = print_routes(t);
	topo_free(t);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "rocelab-topo: cannot write the output\n");
		rc = 1;
	}
	return rc;
}
