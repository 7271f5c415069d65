/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocelab-p4: checks a DPDK SWX pipeline program (.spec) the way rocelab
 * loads it, and pushes a capture's frames through it.
 *
 *   rocelab-p4 --check FILE.spec
 *   rocelab-p4 --run FILE.spec --pcap IN [--entries FILE] [--ports N]
 *
 * Exit status: 0 done, 2 bad input (the message names FILE:LINE), 1 a failed
 * run (EAL, memory, a program that never returns to rx).
 */
#include <errno.h>
#include <getopt.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_version.h"
#include "swx_load.h"
#include "swx_meta.h"
#include "swx_spec.h"

#define EXIT_BAD 2

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocelab-p4 --check FILE.spec\n"
		"       rocelab-p4 --run FILE.spec --pcap IN [--entries FILE] [--ports N]\n"
		"  --check FILE   parse FILE and build it as a DPDK SWX pipeline; exit 0 or 2\n"
		"  --run FILE     build FILE, push every frame of --pcap IN through it and\n"
		"                 print each frame's egress port (or 'drop')\n"
		"  --entries FILE table entries, one a line: TABLE match ... action NAME [ARG V ...],\n"
		"                 or a default action: TABLE default action NAME [ARG V ...]\n"
		"  --ports N      output ports 0..N-1 (default 16)\n"
		"  --memory MB    DPDK memory for the tables (default %d)\n"
		"  --version      the version and the git commit it was built from\n"
		"  -h, --help     this text\n"
		"Exit: 0 done, 2 bad input, 1 a failed run.\n", SWX_EAL_MB);
}

/*
 * 0, or -EINVAL with FILE:LINE in err: s's rl_meta header (swx_meta.h) has
 * another layout, or s has one and is to run here (--run hands no metadata).
 */
static int meta_ok(const struct swx_spec *s, int run, char *err, size_t errlen)
{
	bool meta;

	if (swx_meta_check(s, &meta, err, errlen) != 0)
		return -EINVAL;
	for (uint32_t i = 0; meta && run && i < s->n_headers; i++)
		if (strcmp(s->headers[i].name, SWX_META_HEADER) == 0) {
			snprintf(err, errlen, "%s:%u: header rl_meta: --run hands no rocelab metadata "
				 "(the virtual time, ...); run this program with rocelab-dp --pipeline",
				 s->file, (unsigned)s->headers[i].line);
			return -EINVAL;
		}
	return 0;
}

/* Reads FILE's entries (TABLE ENTRY a line; '#' comments) into the pipeline. */
static int load_entries(struct swx_pipe *p, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[SWX_LINE_MAX], table[SWX_NAME_MAX], err[SWX_ERR_MAX];
	unsigned int n = 0;
	int off;

	if (f == NULL) {
		fprintf(stderr, "rocelab-p4: %s: %s\n", path, strerror(errno));
		return EXIT_BAD;
	}
	while (fgets(line, sizeof(line), f)) {
		n++;
		line[strcspn(line, "\r\n")] = '\0';
		if (sscanf(line, " %63s %n", table, &off) != 1 || table[0] == '#')
			continue;
		if (swx_pipe_entry(p, table, line + off, err, sizeof(err)) != 0) {
			fprintf(stderr, "rocelab-p4: %s:%u: %s\n", path, n, err);
			fclose(f);
			return EXIT_BAD;
		}
	}
	fclose(f);
	return 0;
}

static int run_pcap(struct swx_pipe *p, const char *path)
{
	char perr[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, perr);
	struct pcap_pkthdr *h;
	const u_char *data;
	static struct swx_result r;
	unsigned int n = 0;
	int rc = 0;

	if (pc == NULL) {
		fprintf(stderr, "rocelab-p4: %s: %s\n", path, perr);
		return EXIT_BAD;
	}
	while (rc == 0 && pcap_next_ex(pc, &h, &data) == 1) {
		n++;
		if (h->caplen == 0 || h->caplen > SWX_FRAME_MAX) {
			fprintf(stderr, "rocelab-p4: %s: frame %u: %u bytes, 1 to %d taken\n", path, n,
				h->caplen, SWX_FRAME_MAX);
			rc = EXIT_BAD;
			break;
		}
		int e = swx_pipe_push(p, data, h->caplen, &r);

		if (e) {
			fprintf(stderr, "rocelab-p4: frame %u: %s\n", n, e == -ELOOP ?
				"the program neither sent nor dropped it (a loop?)" : strerror(-e));
			rc = EXIT_FAILURE;
		} else if (r.sent) {
			printf("%u port %u len %u\n", n, r.port, r.len);
		} else {
			printf("%u drop\n", n);
		}
	}
	pcap_close(pc);
	return rc;
}

struct opts {
	const char *check, *run, *pcap, *entries;
	unsigned long ports;
	unsigned long memory;
};

/* A number from 1 to max, or 0 after a message. */
static unsigned long number(const char *opt, const char *arg, unsigned long max)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (*end || arg[0] == '-' || v == 0 || v > max) {
		fprintf(stderr, "rocelab-p4: %s '%s': 1 to %lu\n", opt, arg, max);
		return 0;
	}
	return v;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"check", required_argument, NULL, 'c'}, {"run", required_argument, NULL, 'r'},
		{"pcap", required_argument, NULL, 'p'}, {"entries", required_argument, NULL, 'e'},
		{"ports", required_argument, NULL, 'n'}, {"memory", required_argument, NULL, 'm'},
		{"version", no_argument, NULL, 'V'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'c': o->check = optarg; break;
		case 'r': o->run = optarg; break;
		case 'p': o->pcap = optarg; break;
		case 'e': o->entries = optarg; break;
		case 'n':
			if ((o->ports = number("--ports", optarg, SWX_PORTS_OUT_MAX)) == 0)
				return EXIT_BAD;
			break;
		case 'm':
			if ((o->memory = number("--memory", optarg, 65536)) == 0)
				return EXIT_BAD;
			break;
		case 'h': usage(stdout); exit(0);
		case 'V':
			printf("rocelab-p4 %s (commit %s)\n", RL_VERSION, RL_COMMIT);
			exit(0);
		default:
			fprintf(stderr, "rocelab-p4: unknown or incomplete option '%s'\n",
				argv[optind - 1]);
			return EXIT_BAD;
		}
	}
	if (optind < argc || (!o->check == !o->run) || (o->run && !o->pcap)) {
		fprintf(stderr, "rocelab-p4: %s\n", optind < argc ? "unexpected argument" :
			o->run ? "--run needs --pcap IN" : "one of --check FILE or --run FILE");
		usage(stderr);
		return EXIT_BAD;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = {.ports = 16, .memory = SWX_EAL_MB};
	struct swx_spec s;
	struct swx_pipe *p = NULL;
	char err[SWX_ERR_MAX];
	int rc = parse_opts(argc, argv, &o);

	if (rc)
		return rc;
	rc = swx_spec_parse_file(o.check ? o.check : o.run, &s, err, sizeof(err));
	if (rc == 0 && (rc = meta_ok(&s, o.run != NULL, err, sizeof(err))) != 0)
		swx_spec_free(&s);
	if (rc) {
		fprintf(stderr, "rocelab-p4: %s\n", err);
		return rc == -ENOMEM ? EXIT_FAILURE : EXIT_BAD;
	}
	if (swx_eal_init((uint32_t)o.memory, err, sizeof(err)) != 0) {
		fprintf(stderr, "rocelab-p4: %s\n", err);
		swx_spec_free(&s);
		swx_eal_fini();
		return EXIT_FAILURE;
	}
	rc = swx_load(&s, (uint32_t)o.ports, &p, err, sizeof(err));
	swx_spec_free(&s);
	if (rc) {
		fprintf(stderr, "rocelab-p4: %s\n", err);
		swx_eal_fini();
		return rc == -ENOMEM ? EXIT_FAILURE : EXIT_BAD;
	}
	if (o.check)
		printf("%s: builds\n", o.check);
	else if (o.entries)
		rc = load_entries(p, o.entries);
	if (rc == 0 && o.run)
		rc = run_pcap(p, o.pcap);
	swx_pipe_free(p);
	swx_eal_fini();
	return rc;
}
