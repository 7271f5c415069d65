/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocelab-nic's command line. One table lists the options, with their
 * argument, their help line and the function that takes them: the usage
 * text and the getopt_long parser both come from it. The options are
 * ibv_rc_pingpong's where it has them (rdma-core
 * libibverbs/examples/rc_pingpong.c), with its defaults.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_version.h"
#include "rn_nic.h"

/* ------------------------------------------------------------------ */
/* Parsing helpers */

static bool parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool parse_rate(const char *s, uint64_t *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return false;
	switch (*end) {
	case 'k': case 'K': v *= 1e3; end++; break;
	case 'm': case 'M': v *= 1e6; end++; break;
	case 'g': case 'G': v *= 1e9; end++; break;
	default: break;
	}
	if (*end || v > 1e13)
		return false;
	*out = (uint64_t)v;
	return true;
}

static bool parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
		return false;
	for (int i = 0; i < 6; i++) {
		if (b[i] > 255)
			return false;
		mac[i] = (uint8_t)b[i];
	}
	return true;
}

static bool parse_ipv4(const char *s, uint32_t *ip)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return false;
	*ip = ntohl(a.s_addr);
	return true;
}

static bool parse_cidr(const char *s, uint32_t *ip, uint32_t *mask)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	uint32_t p = 32;

	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	if (slash) {
		buf[slash - s] = 0;
		if (!parse_u32(slash + 1, 32, &p))
			return false;
	}
	if (!parse_ipv4(buf, ip))
		return false;
	*mask = p ? 0xFFFFFFFFu << (32 - p) : 0;
	return true;
}

/* ------------------------------------------------------------------ */
/* The options: one setter each, 0 or -1 with a message printed */

static int set_if(struct rn_opts *o, const char *arg)
{
	o->ifname = arg;
	return 0;
}

static int set_port(struct rn_opts *o, const char *arg)
{
	uint32_t v;

	if (!parse_u32(arg, 65535, &v) || !v) {
		rn_err("--port: 1..65535");
		return -1;
	}
	o->port = (uint16_t)v;
	return 0;
}

static int set_size(struct rn_opts *o, const char *arg)
{
	if (!parse_u32(arg, 1u << 30, &o->size)) {
		rn_err("--size: bytes, at most 1 GiB");
		return -1;
	}
	return 0;
}

static int set_iters(struct rn_opts *o, const char *arg)
{
	if (!parse_u32(arg, UINT32_MAX, &o->iters) || !o->iters) {
		rn_err("--iters: a positive number");
		return -1;
	}
	return 0;
}

static int set_mtu(struct rn_opts *o, const char *arg)
{
	if (!parse_u32(arg, 4096, &o->mtu) ||
	    (o->mtu != 256 && o->mtu != 512 && o->mtu != 1024 && o->mtu != 2048 && o->mtu != 4096)) {
		rn_err("--mtu: 256, 512, 1024, 2048 or 4096");
		return -1;
	}
	return 0;
}

static int set_rx_depth(struct rn_opts *o, const char *arg)
{
	if (!parse_u32(arg, 65536, &o->rx_depth) || o->rx_depth < 2) {
		rn_err("--rx-depth: 2..65536");
		return -1;
	}
	return 0;
}

static int set_gid_idx(struct rn_opts *o, const char *arg)
{
	uint32_t v;

	if (!parse_u32(arg, 255, &v)) {
		rn_err("--gid-idx: 0..255");
		return -1;
	}
	o->gidx = (int)v;
	return 0;
}

static int set_ib_port(struct rn_opts *o, const char *arg)
{
	uint32_t v;

	(void)o;
	if (!parse_u32(arg, 1, &v) || v != 1) {
		rn_err("--ib-port: the emulated NIC has port 1 only");
		return -1;
	}
	return 0;
}

static int set_mac(struct rn_opts *o, const char *arg)
{
	if (!parse_mac(arg, o->mac)) {
		rn_err("--mac: xx:xx:xx:xx:xx:xx");
		return -1;
	}
	o->have_mac = true;
	return 0;
}

static int set_ip(struct rn_opts *o, const char *arg)
{
	if (!parse_cidr(arg, &o->ip, &o->prefix_mask)) {
		rn_err("--ip: A.B.C.D or A.B.C.D/P");
		return -1;
	}
	o->have_ip = true;
	return 0;
}

static int set_gw(struct rn_opts *o, const char *arg)
{
	if (!parse_ipv4(arg, &o->gw)) {
		rn_err("--gw: A.B.C.D");
		return -1;
	}
	o->have_gw = true;
	return 0;
}

static int set_rate(struct rn_opts *o, const char *arg)
{
	if (!parse_rate(arg, &o->rate_bps)) {
		rn_err("--rate: bit/s, e.g. 10G");
		return -1;
	}
	return 0;
}

/* Seconds, 0..1e6 (0 only when zero_ok). */
static bool parse_seconds(const char *arg, bool zero_ok, double *out)
{
	char *end;
	double d = strtod(arg, &end);

	if (*end || end == arg || d < 0 || d > 1e6 || (!zero_ok && d <= 0))
		return false;
	*out = d;
	return true;
}

static int set_timeout(struct rn_opts *o, const char *arg)
{
	if (!parse_seconds(arg, false, &o->timeout_s)) {
		rn_err("--timeout: seconds");
		return -1;
	}
	return 0;
}

static int set_linger(struct rn_opts *o, const char *arg)
{
	if (!parse_seconds(arg, true, &o->linger_s)) {
		rn_err("--linger: seconds");
		return -1;
	}
	return 0;
}

static int set_check(struct rn_opts *o, const char *arg)
{
	(void)arg;
	o->check = true;
	return 0;
}

static int set_dcqcn(struct rn_opts *o, const char *arg)
{
	(void)arg;
	o->dcqcn_rp = o->dcqcn_np = true;
	return 0;
}

static int set_verbose(struct rn_opts *o, const char *arg)
{
	(void)arg;
	o->verbose = true;
	return 0;
}

static int set_version(struct rn_opts *o, const char *arg)
{
	(void)o, (void)arg;
	printf("rocelab-nic %s (commit %s)\n", RL_VERSION, RL_COMMIT);
	exit(0);
}

struct opt_def {
	const char *name;  /* long name */
	char letter;       /* short name, 0: none */
	const char *arg;   /* the argument's name in the help, NULL: takes none */
	const char *help;  /* help text, its lines after the first indented; NULL: not listed */
	int (*set)(struct rn_opts *o, const char *arg); /* NULL: refused (-h is seen earlier) */
};

/* getopt_long's value for a long-only option: past every char. */
#define OPT_LONG_ONLY 256

static const struct opt_def opt_defs[] = {
	{"if", 'I', "IFNAME", "the interface (required; -d IFNAME is an alias)", set_if},
	{"port", 'p', "N", "TCP port of the out-of-band exchange (default 18515)", set_port},
	{"size", 's', "N", "message size in bytes (default 4096)", set_size},
	{"iters", 'n', "N", "number of exchanges (default 1000)", set_iters},
	{"mtu", 'm', "N", "path MTU: 256, 512, 1024, 2048, 4096 (default 1024)", set_mtu},
	{"rx-depth", 'r', "N", "receives posted at a time (default 500)", set_rx_depth},
	{"gid-idx", 'g', "N", "accepted and ignored: our GID is always ::ffff:<our IPv4>",
	 set_gid_idx},
	{"ib-port", 'i', "N", "accepted, must be 1", set_ib_port},
	{"ib-dev", 'd', "IFNAME", NULL, set_if},
	{"mac", 0, "MAC", "the NIC's MAC (default: the interface's)", set_mac},
	{"ip", 0, "A.B.C.D[/P]", "the NIC's IPv4 and prefix (default: the interface's)", set_ip},
	{"gw", 0, "A.B.C.D", "next hop for peers off our subnet (default: the interface's\n"
	 "default route from /proc/net/route)", set_gw},
	{"rate", 0, "R", "emulated line rate, bit/s with k/M/G suffix (default: none)", set_rate},
	{"timeout", 0, "S", "give up after S seconds (default 60)", set_timeout},
	{"linger", 0, "S", "keep answering the peer S seconds after the last completion\n"
	 "(its last ACK may be lost; default 1)", set_linger},
	{"check", 0, NULL, "fail unless every received byte is 0x7b (ibv_rc_pingpong's fill)",
	 set_check},
	{"dcqcn", 0, NULL, "DCQCN reaction point (rate cut on CNP) and notification point\n"
	 "(CNP on ECN CE) on; off by default", set_dcqcn},
	{"verbose", 'v', NULL, "print ARP and setup details", set_verbose},
	{"version", 0, NULL, "the version and the git commit it was built from", set_version},
	{"help", 'h', NULL, "", NULL},
};

#define OPT_N (sizeof(opt_defs) / sizeof(opt_defs[0]))

/* The value getopt_long returns for opt_defs[i]. */
static int opt_val(size_t i)
{
	return opt_defs[i].letter ? opt_defs[i].letter : OPT_LONG_ONLY + (int)i;
}

/* ------------------------------------------------------------------ */
/* The usage text */

/* "  -I, --if IFNAME      the interface...": the help starts at column 23. */
#define HELP_COL 23

static void usage_opt(FILE *f, const struct opt_def *d)
{
	char left[32];

	snprintf(left, sizeof(left), "--%s%s%s", d->name, d->arg ? " " : "", d->arg ? d->arg : "");
	if (d->letter)
		fprintf(f, "  -%c, ", d->letter);
	else
		fputs("      ", f);
	if (!*d->help) {
		fprintf(f, "%s\n", left);
		return;
	}
	fprintf(f, "%-*s ", HELP_COL - 7, left); /* 6 for "  -I, ", 1 space */
	for (const char *p = d->help; *p; p++)
		if (*p == '\n')
			fprintf(f, "\n%*s", HELP_COL, "");
		else
			fputc(*p, f);
	fputc('\n', f);
}

static void usage(FILE *f)
{
	fprintf(f,
		"One emulated RoCEv2 RC NIC (nic_emul) over a Linux network interface (AF_PACKET),\n"
		"on the real clock. Interoperates with rdma-core's ibv_rc_pingpong.\n"
		"\n"
		"  " RN_PROG " pingpong -I IFNAME [options] [SERVER]\n"
		"\n"
		"Without SERVER it waits for an ibv_rc_pingpong client; with SERVER it connects to an\n"
		"ibv_rc_pingpong server there. Options (ibv_rc_pingpong's where they exist):\n");
	for (size_t i = 0; i < OPT_N; i++)
		if (opt_defs[i].help)
			usage_opt(f, &opt_defs[i]);
	fprintf(f,
		"\n"
		"Prints ibv_rc_pingpong's result lines (bytes in seconds = Mbit/sec, iters in seconds\n"
		"= usec/iter) and the NIC's counters. Needs CAP_NET_RAW (root).\n"
		"Exit status: 0 done, 1 runtime failure (network, peer, timeout, error completion),\n"
		"2 bad usage.\n");
}

/* ------------------------------------------------------------------ */
/* The parser */

static void opts_default(struct rn_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port = 18515;
	o->size = 4096;
	o->iters = 1000;
	o->mtu = 1024;
	o->rx_depth = 500;
	o->gidx = -1;
	o->timeout_s = 60;
	o->linger_s = 1;
}

/* getopt_long's tables from opt_defs: short (like "I:d:vh") and long. */
static void opt_tables(char *shortopts, struct option *lo)
{
	char *s = shortopts;

	for (size_t i = 0; i < OPT_N; i++) {
		if (opt_defs[i].letter) {
			*s++ = opt_defs[i].letter;
			if (opt_defs[i].arg)
				*s++ = ':';
		}
		lo[i].name = opt_defs[i].name;
		lo[i].has_arg = opt_defs[i].arg ? required_argument : no_argument;
		lo[i].flag = NULL;
		lo[i].val = opt_val(i);
	}
	*s = 0;
	memset(&lo[OPT_N], 0, sizeof(lo[OPT_N]));
}

/* Apply the option getopt_long returned as c; -1 (message printed) when bad. */
static int opt_apply(struct rn_opts *o, int c, const char *arg)
{
	for (size_t i = 0; i < OPT_N; i++)
		if (opt_val(i) == c && opt_defs[i].set)
			return opt_defs[i].set(o, arg);
	rn_err("bad arguments (see --help)");
	return -1;
}

int rn_parse_args(int argc, char **argv, struct rn_opts *o)
{
	char shortopts[2 * OPT_N + 1];
	struct option lo[OPT_N + 1];
	int c;

	opts_default(o);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			exit(0);
		}
		if (!strcmp(argv[i], "--version"))
			set_version(o, NULL);
	}
	if (argc < 2 || strcmp(argv[1], "pingpong") != 0) {
		rn_err(argc < 2 ? "no mode given (see --help)" : "unknown mode '%s' (see --help)",
		       argc < 2 ? "" : argv[1]);
		return -1;
	}
	opt_tables(shortopts, lo);
	optind = 2;
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1)
		if (opt_apply(o, c, optarg) < 0)
			return -1;
	if (optind == argc - 1)
		o->server = argv[optind];
	else if (optind < argc) {
		rn_err("more than one SERVER given");
		return -1;
	}
	if (!o->ifname) {
		rn_err("-I IFNAME is required");
		return -1;
	}
	return 0;
}
