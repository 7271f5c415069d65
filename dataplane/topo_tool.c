/* SPDX-License-Identifier: BSD-3-Clause */
/* rocelab-topo: check a topology file, print its addresses and ECMP routes. No DPDK. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routes.h"
#include "topology.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocelab-topo --check FILE     validate; exit 0 (prints a summary) or 2\n"
		"       rocelab-topo --routes FILE    print hosts and every switch's ECMP groups\n"
		"       rocelab-topo --clos S,L,H     the same for the built-in 2-tier Clos\n"
		"                                     (S spines, L leaves, H hosts per leaf)\n"
		"       rocelab-topo --help\n"
		"The file format is described in topologies/README.md.\n");
}

static void print_hosts(const struct rl_topo *t, FILE *out)
{
	char a[48], b[48], m[24], g[24];
	fprintf(out, "%-12s %-8s %-10s %-5s %-14s %-18s %-18s %s\n", "host", "attach", "leaf",
		"port", "ipv4", "ipv6", "mac", "gateway mac");
	for (uint32_t i = 0; i < t->n_hosts; i++) {
		const struct rl_host *h = &t->hosts[i];
		fprintf(out, "%-12s %-8s %-10s %-5u %-14s %-18s %-18s %s\n", h->name,
			rl_attach_name(h->attach), t->switches[h->leaf].name, h->leaf_port,
			rl_topo_ipv4_str(h->ipv4, a, sizeof(a)), rl_topo_ipv6_str(h->ipv6, b, sizeof(b)),
			rl_topo_mac_str(h->mac, m, sizeof(m)), rl_topo_mac_str(h->gw_mac, g, sizeof(g)));
	}
	fputc('\n', out);
}

static int print_routes(struct rl_topo *t)
{
	char sum[256];
	rl_topo_summary(t, sum, sizeof(sum));
	printf("%s\n\n", sum);
	print_hosts(t, stdout);
	struct rl_routes *r = rl_route_create(t);
	if (!r) {
		fprintf(stderr, "rocelab-topo: out of memory computing routes\n");
		return 1;
	}
	rl_route_print(r, stdout);
	rl_route_free(r);
	return 0;
}

static int parse_clos(const char *arg, unsigned v[3])
{
	char tail;
	if (sscanf(arg, "%u,%u,%u%c", &v[0], &v[1], &v[2], &tail) != 3)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc != 3) {
		usage(stderr);
		return 1;
	}
	char err[512];
	if (!strcmp(argv[1], "--check"))
		return rl_topo_check_file(argv[2], stdout, stderr);
	if (!strcmp(argv[1], "--routes")) {
		struct rl_topo *t = NULL;
		if (rl_topo_load(argv[2], &t, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return 2;
		}
		int rc = print_routes(t);
		rl_topo_free(t);
		return rc;
	}
	if (!strcmp(argv[1], "--clos")) {
		unsigned v[3];
		if (parse_clos(argv[2], v)) {
			fprintf(stderr, "rocelab-topo: --clos takes S,L,H (e.g. 2,2,4)\n");
			return 1;
		}
		struct rl_topo *t = rl_topo_clos(v[0], v[1], v[2], err, sizeof(err));
		if (!t) {
			fprintf(stderr, "%s\n", err);
			return 2;
		}
		int rc = print_routes(t);
		rl_topo_free(t);
		return rc;
	}
	usage(stderr);
	return 1;
}
