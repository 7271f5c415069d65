/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocelab-lb: which uplink would each RoCE packet of a capture take?
 *
 * Reads a pcap, parses every frame with hashing/, verifies each RoCEv2 ICRC,
 * and hashes each packet as a switch with the chosen profile, algorithm, seed
 * and uplink count would. Prints the flows and the per-uplink load, so one
 * can see ECMP polarize on a fixed UDP source port and E-ECMP spread QPs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_version.h"
#include "rl_hash.h"
#include "rl_icrc.h"
#include "rl_nexthop.h"
#include "rl_parse.h"

#define EXIT_USAGE 2
#define MAX_UPLINKS RL_NH_MAX_MEMBERS

struct opts {
	const char *pcap;
	enum rl_hash_profile profile;
	enum rl_hash_algo algo;
	uint32_t seed;
	unsigned uplinks;
	int fields;
};

/* A RoCE flow as a user names it: addresses, UDP ports, destination QP. */
struct flow {
	uint8_t used;
	uint8_t ip_version;
	uint8_t src[16], dst[16];
	uint16_t sport;
	uint32_t dqpn;
	int uplink;
	uint64_t packets, bytes;
};

struct flow_table {
	size_t cap, n;
	struct flow *f;
};

struct uplink_load {
	uint64_t packets, bytes, flows;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rocelab-lb --pcap FILE [--profile P] [--algo A] [--seed S] [--uplinks N] [--fields]\n"
		"\n"
		"Show which uplink each RoCEv2 packet of a capture would take through an ECMP switch.\n"
		"\n"
		"  --pcap FILE     capture to read (pcap, Ethernet link type)\n"
		"  --profile P     hash fields: 5tuple (default), eecmp (5-tuple + BTH destination QP),\n"
		"                  dqpn (destination QP only), 3tuple (src, dst, proto)\n"
		"  --algo A        hash: crc32 (default), crc16, crc32c, xor, toeplitz\n"
		"  --seed S        per-switch hash seed (decimal or 0x hex; default 0)\n"
		"  --uplinks N     ECMP group size, 1..%d (default 4)\n"
		"  --fields        one CSV line per RoCE packet:\n"
		"                  frame,src,dst,sport,dport,opcode,dqpn,psn,icrc_ok,uplink\n"
		"                  then 'summary: roce=N icrc_ok=K icrc_bad=J'\n"
		"  --version       the version and the git commit it was built from\n"
		"  -h, --help      this text\n"
		"\n"
		"Exit status: 0 on success, 2 on bad arguments or an unreadable capture.\n",
		MAX_UPLINKS);
}

/* Print "rocelab-lb: WHAT 'ARG' (see --help)" and return the usage exit code. */
static int die_usage(const char *what, const char *arg)
{
	if (arg)
		fprintf(stderr, "rocelab-lb: %s '%s' (see --help)\n", what, arg);
	else
		fprintf(stderr, "rocelab-lb: %s (see --help)\n", what);
	return EXIT_USAGE;
}

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;

	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *end != '\0' || v > UINT32_MAX || s[0] == '-')
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"pcap", required_argument, NULL, 'p'},  {"profile", required_argument, NULL, 'P'},
		{"algo", required_argument, NULL, 'a'},  {"seed", required_argument, NULL, 's'},
		{"uplinks", required_argument, NULL, 'u'}, {"fields", no_argument, NULL, 'f'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
	};
	int c, v;
	uint32_t n;

	*o = (struct opts){.profile = RL_PROFILE_5TUPLE, .algo = RL_HASH_CRC32, .uplinks = 4};
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'p': o->pcap = optarg; break;
		case 'V':
			printf("rocelab-lb %s (commit %s)\n", RL_VERSION, RL_COMMIT);
			exit(0);
		case 'P':
			if ((v = rl_profile_from_name(optarg)) < 0)
				return die_usage("unknown profile", optarg);
			o->profile = (enum rl_hash_profile)v;
			break;
		case 'a':
			if ((v = rl_hash_algo_from_name(optarg)) < 0)
				return die_usage("unknown algorithm", optarg);
			o->algo = (enum rl_hash_algo)v;
			break;
		case 's':
			if (parse_u32(optarg, &o->seed) < 0)
				return die_usage("bad seed (want a 32-bit number)", optarg);
			break;
		case 'u':
			if (parse_u32(optarg, &n) < 0 || n < 1 || n > MAX_UPLINKS)
				return die_usage("bad uplink count (want 1..64)", optarg);
			o->uplinks = n;
			break;
		case 'f': o->fields = 1; break;
		case 'h': usage(stdout); exit(0);
		default:
			return die_usage("unknown or incomplete option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return die_usage("unexpected argument", argv[optind]);
	if (o->pcap == NULL)
		return die_usage("--pcap FILE is required", NULL);
	return 0;
}

static size_t flow_slot(const struct flow *f, size_t cap)
{
	uint32_t h = rl_crc32(0, f->src, 32);

	h = rl_crc32(h, &f->sport, sizeof(f->sport));
	h = rl_crc32(h, &f->dqpn, sizeof(f->dqpn));
	return h & (cap - 1);
}

static struct flow *flow_get(struct flow_table *t, const struct rl_pkt *p)
{
	if (t->n * 2 >= t->cap) { /* grow, keep the load factor under 1/2 */
		struct flow_table bigger = {.cap = t->cap ? t->cap * 2 : 256};
		bigger.f = calloc(bigger.cap, sizeof(*bigger.f));
		if (bigger.f == NULL)
			return NULL;
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->f[i].used)
				continue;
			size_t j = flow_slot(&t->f[i], bigger.cap);
			while (bigger.f[j].used)
				j = (j + 1) & (bigger.cap - 1);
			bigger.f[j] = t->f[i];
		}
		bigger.n = t->n;
		free(t->f);
		*t = bigger;
	}
	struct flow key = {.used = 1, .ip_version = p->ip_version, .sport = p->sport,
			   .dqpn = p->bth.dqpn};
	memcpy(key.src, p->src, 16);
	memcpy(key.dst, p->dst, 16);
	size_t j = flow_slot(&key, t->cap);
	for (;; j = (j + 1) & (t->cap - 1)) {
		struct flow *f = &t->f[j];
		if (!f->used) {
			*f = key;
			t->n++;
			return f;
		}
		if (f->ip_version == key.ip_version && f->sport == key.sport && f->dqpn == key.dqpn &&
		    !memcmp(f->src, key.src, 16) && !memcmp(f->dst, key.dst, 16))
			return f;
	}
}

static const char *addr_str(const struct rl_pkt *p, const uint8_t *a, char *buf, size_t n)
{
	return inet_ntop(p->ip_version == 6 ? AF_INET6 : AF_INET, a, buf, (socklen_t)n);
}

static int by_traffic(const void *a, const void *b)
{
	const struct flow *x = a, *y = b;

	if (x->used != y->used)
		return y->used - x->used;
	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

static void print_report(const struct opts *o, struct flow_table *ft, struct uplink_load *ul,
			 uint64_t frames, uint64_t roce, uint64_t icrc_bad, uint64_t other,
			 uint64_t bad)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	uint64_t total = 0, maxb = 0;

	printf("%s: %" PRIu64 " frames: %" PRIu64 " RoCEv2 (ICRC ok %" PRIu64 ", bad %" PRIu64
	       "), %" PRIu64 " other, %" PRIu64 " unparsable\n",
	       o->pcap, frames, roce, roce - icrc_bad, icrc_bad, other, bad);
	printf("switch: profile %s, algorithm %s, seed 0x%" PRIx32 ", %u uplinks\n\n",
	       rl_profile_name(o->profile), rl_hash_algo_name(o->algo), o->seed, o->uplinks);

	qsort(ft->f, ft->cap, sizeof(*ft->f), by_traffic);
	printf("%-4s %-39s %-39s %6s %8s %6s %9s %11s\n", "flow", "src", "dst", "sport", "dqpn",
	       "uplink", "packets", "bytes");
	for (size_t i = 0; i < ft->n; i++) {
		const struct flow *f = &ft->f[i];
		struct rl_pkt as = {.ip_version = f->ip_version};
		printf("%-4zu %-39s %-39s %6u %8" PRIu32 " %6d %9" PRIu64 " %11" PRIu64 "\n", i + 1,
		       addr_str(&as, f->src, s, sizeof(s)), addr_str(&as, f->dst, d, sizeof(d)),
		       f->sport, f->dqpn, f->uplink, f->packets, f->bytes);
	}

	printf("\n%-6s %6s %9s %11s %7s\n", "uplink", "flows", "packets", "bytes", "share");
	for (unsigned u = 0; u < o->uplinks; u++)
		total += ul[u].bytes;
	for (unsigned u = 0; u < o->uplinks; u++) {
		if (ul[u].bytes > maxb)
			maxb = ul[u].bytes;
		printf("%-6u %6" PRIu64 " %9" PRIu64 " %11" PRIu64 " %6.1f%%\n", u, ul[u].flows,
		       ul[u].packets, ul[u].bytes, total ? 100.0 * (double)ul[u].bytes / (double)total : 0.0);
	}
	if (total)
		printf("imbalance (busiest uplink / mean): %.2f\n",
		       (double)maxb * o->uplinks / (double)total);
}

int main(int argc, char **argv)
{
	struct opts o;
	char err[PCAP_ERRBUF_SIZE];
	int rc = parse_opts(argc, argv, &o);

	if (rc)
		return rc;
	pcap_t *pc = pcap_open_offline(o.pcap, err);
	if (pc == NULL) {
		fprintf(stderr, "rocelab-lb: %s: %s\n", o.pcap, err);
		return EXIT_USAGE;
	}
	if (pcap_datalink(pc) != DLT_EN10MB) {
		fprintf(stderr, "rocelab-lb: %s: link type %s, want Ethernet\n", o.pcap,
			pcap_datalink_val_to_name(pcap_datalink(pc)));
		pcap_close(pc);
		return EXIT_USAGE;
	}

	struct flow_table ft = {0};
	struct uplink_load ul[MAX_UPLINKS] = {{0}};
	uint64_t frames = 0, roce = 0, icrc_bad = 0, other = 0, bad = 0;
	struct pcap_pkthdr *h;
	const u_char *data;

	if (o.fields)
		printf("frame,src,dst,sport,dport,opcode,dqpn,psn,icrc_ok,uplink\n");
	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		struct rl_pkt p;
		frames++;
		int st = rl_parse(data, h->caplen, &p);
		if (st != RL_PARSE_OK && st != RL_PARSE_NOT_IP) {
			bad++;
			continue;
		}
		if (st != RL_PARSE_OK || !p.is_roce) {
			other++;
			continue;
		}
		roce++;
		bool ok = h->caplen == h->len && rl_icrc_verify(data, &p);
		icrc_bad += !ok;
		int up = rl_ecmp_modulo(rl_flow_hash(o.profile, o.algo, o.seed, &p), o.uplinks);
		struct flow *f = flow_get(&ft, &p);
		if (f == NULL) {
			fprintf(stderr, "rocelab-lb: out of memory\n");
			return 1;
		}
		if (f->packets == 0) {
			/* every profile hashes a subset of the flow key, so a flow has one uplink */
			f->uplink = up;
			ul[up].flows++;
		}
		f->packets++;
		f->bytes += h->len;
		ul[up].packets++;
		ul[up].bytes += h->len;
		if (o.fields) {
			char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
			printf("%" PRIu64 ",%s,%s,%u,%u,%u,%" PRIu32 ",%" PRIu32 ",%d,%d\n", frames,
			       addr_str(&p, p.src, s, sizeof(s)), addr_str(&p, p.dst, d, sizeof(d)),
			       p.sport, p.dport, p.bth.opcode, p.bth.dqpn, p.bth.psn, ok, up);
		}
	}
	if (rc == PCAP_ERROR) {
		fprintf(stderr, "rocelab-lb: %s: after %" PRIu64 " frames: %s\n", o.pcap, frames,
			pcap_geterr(pc));
		pcap_close(pc);
		free(ft.f);
		return EXIT_USAGE;
	}
	pcap_close(pc);

	if (o.fields)
		printf("summary: roce=%" PRIu64 " icrc_ok=%" PRIu64 " icrc_bad=%" PRIu64 "\n", roce,
		       roce - icrc_bad, icrc_bad);
	else
		print_report(&o, &ft, ul, frames, roce, icrc_bad, other, bad);
	free(ft.f);
	return 0;
}
