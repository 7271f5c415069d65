/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_capture.h"
#include "dp_fabric.h"
#include "dp_pcapng.h"

#include <errno.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A frame held back (partitioned runs): its place in the event order, its bytes. */
struct rec {
	uint64_t at, key;   /* the event that sent it: time, key (dp_engine.h) */
	uint32_t sub;       /* its place among the records of that event */
	uint32_t len, caplen;
	uint8_t *data;
};

/*
 * One captured channel (a link direction): its interface in a pcapng file,
 * its direction there, and its records, in the order its (one) transmitting
 * thread made them.
 */
struct recs {
	struct dp_chan *chan;
	uint32_t ifid;
	enum dp_pcapng_dir dir;
	struct rec *r;
	uint32_t n, cap, next; /* next: dp_capture_flush's merge */
};

struct dp_capture {
	enum dp_capture_fmt fmt;
	pcap_t *dead;       /* DP_CAPTURE_PCAP: libpcap's dumper */
	pcap_dumper_t *dump;
	struct dp_pcapng *ng; /* DP_CAPTURE_PCAPNG */
	uint64_t frames;
	bool held;          /* partitioned: keep records until dp_capture_flush() */
	uint32_t n_chan;
	struct recs chan[2 * DP_CAPTURE_LINKS_MAX];
	uint64_t lost;      /* records that could not be held (out of memory) */
};

static void write_frame(struct dp_capture *cap, const struct recs *rs, uint64_t at, const void *d,
			uint32_t caplen, uint32_t len)
{
	struct pcap_pkthdr h;

	cap->frames++;
	if (cap->fmt == DP_CAPTURE_PCAPNG) {
		dp_pcapng_write(cap->ng, rs->ifid, at, d, caplen, len, rs->dir); /* (errors: at close) */
		return;
	}
	h.caplen = caplen;
	h.len = len;
	/* with nanosecond precision, tv_usec carries nanoseconds */
	h.ts.tv_sec = (time_t)(at / 1000000000ull);
	h.ts.tv_usec = (suseconds_t)(at % 1000000000ull);
	pcap_dump((u_char *)cap->dump, &h, d);
}

/* The captured channel c (attached, so it is there). */
static struct recs *recs_of(struct dp_capture *cap, const struct dp_chan *c)
{
	uint32_t i = 0;

	while (i + 1 < cap->n_chan && cap->chan[i].chan != c)
		i++;
	return &cap->chan[i];
}

/*
 * Hold a record of c's frame with its place in the event order: the event
 * running now (the fabric's engine when a global event runs, else c's
 * partition's) and how many records that event made before.
 */
/* Append r with a copy of its caplen bytes at d. Returns 0 or -ENOMEM. */
static int push_rec(struct recs *rs, struct rec r, const void *d)
{
	if (rs->n == rs->cap) {
		uint32_t ncap = rs->cap ? 2 * rs->cap : 256;
		struct rec *a = realloc(rs->r, ncap * sizeof(*a));
		if (a == NULL)
			return -ENOMEM;
		rs->r = a;
		rs->cap = ncap;
	}
	r.data = malloc(r.caplen ? r.caplen : 1);
	if (r.data == NULL)
		return -ENOMEM;
	memcpy(r.data, d, r.caplen);
	rs->r[rs->n++] = r;
	return 0;
}

static void hold(struct dp_capture *cap, struct dp_chan *c, uint64_t at, const void *d,
		 uint32_t caplen, uint32_t len)
{
	struct dp_engine *e = c->fab->eng->dispatching ? c->fab->eng : c->eng;
	struct rec r = {.at = at, .key = e->cur_key, .sub = e->cur_sub++, .len = len, .caplen = caplen};

	if (push_rec(recs_of(cap, c), r, d) < 0)
		cap->lost++;
}

static bool rec_before(const struct rec *a, const struct rec *b)
{
	if (a->at != b->at)
		return a->at < b->at;
	if (a->key != b->key)
		return a->key < b->key;
	return a->sub < b->sub;
}

void dp_capture_flush(struct dp_capture *cap)
{
	if (cap == NULL || !cap->held)
		return;
	for (;;) { /* each channel's records are in order: merge (a few channels: scan them) */
		struct recs *first = NULL;
		for (uint32_t k = 0; k < cap->n_chan; k++) {
			struct recs *rs = &cap->chan[k];
			if (rs->next < rs->n &&
			    (first == NULL || rec_before(&rs->r[rs->next], &first->r[first->next])))
				first = rs;
		}
		if (first == NULL)
			break;
		struct rec *r = &first->r[first->next++];
		write_frame(cap, first, r->at, r->data, r->caplen, r->len);
		free(r->data);
	}
	for (uint32_t k = 0; k < cap->n_chan; k++)
		cap->chan[k].n = cap->chan[k].next = 0;
}

/* A held record between ranks; caplen bytes follow. side: its channel's index. */
struct wire_rec {
	uint64_t at, key;
	uint32_t sub, len, caplen, side;
};

int dp_capture_export(struct dp_capture *cap, struct dp_bytes *x)
{
	size_t need = x->len;

	if (cap == NULL)
		return 0;
	for (uint32_t s = 0; s < cap->n_chan; s++)
		for (uint32_t i = 0; i < cap->chan[s].n; i++)
			need += sizeof(struct wire_rec) + cap->chan[s].r[i].caplen;
	if (need > x->cap) {
		uint8_t *b = realloc(x->b, need);
		if (b == NULL)
			return -ENOMEM;
		x->b = b;
		x->cap = need;
	}
	for (uint32_t s = 0; s < cap->n_chan; s++) {
		for (uint32_t i = 0; i < cap->chan[s].n; i++) {
			struct rec *r = &cap->chan[s].r[i];
			struct wire_rec w = {r->at, r->key, r->sub, r->len, r->caplen, s};
			memcpy(x->b + x->len, &w, sizeof(w));
			memcpy(x->b + x->len + sizeof(w), r->data, r->caplen);
			x->len += sizeof(w) + r->caplen;
			free(r->data);
		}
		cap->chan[s].n = 0;
	}
	return 0;
}

int dp_capture_import(struct dp_capture *cap, const uint8_t *b, size_t len)
{
	size_t off = 0;

	if (cap == NULL)
		return len ? -EINVAL : 0;
	while (off < len) {
		struct wire_rec w;
		if (len - off < sizeof(w))
			return -EINVAL;
		memcpy(&w, b + off, sizeof(w));
		off += sizeof(w);
		if (w.side >= cap->n_chan || w.caplen > len - off || w.caplen > w.len)
			return -EINVAL;
		struct rec r = {.at = w.at, .key = w.key, .sub = w.sub, .len = w.len, .caplen = w.caplen};
		if (push_rec(&cap->chan[w.side], r, b + off) < 0)
			return -ENOMEM;
		off += w.caplen;
	}
	return 0;
}

void dp_capture_hold(struct dp_capture *cap)
{
	cap->held = true;
}

static void on_frame(void *ctx, struct dp_chan *c, struct rte_mbuf *m, uint64_t now_ns)
{
	struct dp_capture *cap = ctx;
	uint8_t buf[RTE_MBUF_DEFAULT_BUF_SIZE * 8];
	uint32_t len = rte_pktmbuf_pkt_len(m), caplen = len < sizeof(buf) ? len : (uint32_t)sizeof(buf);

	dp_frame_settle(c->fab, m); /* (header rewrites owed, a payload left unwritten) */
	const void *d = rte_pktmbuf_read(m, 0, caplen, buf);

	if (cap->held)
		hold(cap, c, now_ns, d, caplen, len);
	else
		write_frame(cap, recs_of(cap, c), now_ns, d, caplen, len);
}

enum dp_capture_fmt dp_capture_fmt_of(const char *file)
{
	size_t n = strlen(file), k = strlen(".pcapng");

	return n >= k && strcmp(file + n - k, ".pcapng") == 0 ? DP_CAPTURE_PCAPNG : DP_CAPTURE_PCAP;
}

struct dp_capture *dp_capture_open(const char *path, enum dp_capture_fmt fmt, char *err,
				   size_t errlen)
{
	struct dp_capture *cap = calloc(1, sizeof(*cap));

	if (cap == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	cap->fmt = fmt;
	if (fmt == DP_CAPTURE_PCAPNG) {
		char why[300];
		cap->ng = dp_pcapng_open(path, "rocelab-dp", why, sizeof(why));
		if (cap->ng == NULL) {
			snprintf(err, errlen, "--capture %s", why);
			free(cap);
			return NULL;
		}
		return cap;
	}
	cap->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
	cap->dump = cap->dead ? pcap_dump_open(cap->dead, path) : NULL;
	if (cap->dump == NULL) {
		/* (libpcap's message names the file) */
		snprintf(err, errlen, "--capture %s", cap->dead ? pcap_geterr(cap->dead) : path);
		if (cap->dead)
			pcap_close(cap->dead);
		free(cap);
		return NULL;
	}
	return cap;
}

/* Capture channel c on interface ifid, direction dir. */
static void attach(struct dp_capture *cap, struct dp_chan *c, uint32_t ifid, enum dp_pcapng_dir dir)
{
	struct recs *rs = &cap->chan[cap->n_chan++];

	rs->chan = c;
	rs->ifid = ifid;
	rs->dir = dir;
	c->capture = on_frame;
	c->capture_ctx = cap;
}

int dp_capture_add_link(struct dp_capture *cap, const char *ifname, const char *descr,
			struct dp_chan *out, struct dp_chan *in)
{
	int ifid = 0;

	if (cap->n_chan + 2 > 2 * DP_CAPTURE_LINKS_MAX ||
	    (cap->fmt == DP_CAPTURE_PCAP && cap->n_chan > 0))
		return -ENOSPC;
	if (cap->fmt == DP_CAPTURE_PCAPNG &&
	    (ifid = dp_pcapng_add_interface(cap->ng, ifname, descr, 65535)) < 0)
		return ifid;
	attach(cap, out, (uint32_t)ifid, DP_PCAPNG_DIR_OUT);
	attach(cap, in, (uint32_t)ifid, DP_PCAPNG_DIR_IN);
	return 0;
}

uint64_t dp_capture_count(const struct dp_capture *cap)
{
	return cap->frames;
}

int dp_capture_close(struct dp_capture *cap)
{
	int rc = 0;

	if (cap == NULL)
		return 0;
	dp_capture_flush(cap);
	if (cap->lost)
		fprintf(stderr, "rocelab-dp: capture: %" PRIu64 " frames could not be held (out of memory) and are missing\n",
			cap->lost);
	for (uint32_t k = 0; k < cap->n_chan; k++)
		free(cap->chan[k].r);
	if (cap->fmt == DP_CAPTURE_PCAPNG) {
		rc = dp_pcapng_close(cap->ng);
	} else {
		/* (a failed write mid-run leaves only the stream's error flag) */
		if (pcap_dump_flush(cap->dump) < 0 || ferror(pcap_dump_file(cap->dump)))
			rc = -EIO;
		pcap_dump_close(cap->dump);
		pcap_close(cap->dead);
	}
	free(cap);
	return rc;
}
