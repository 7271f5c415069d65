/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_capture.h"
#include "dp_fabric.h"

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

/* The records of one channel, in the order its (one) transmitting thread made them. */
struct recs {
	struct dp_chan *chan;
	struct rec *r;
	uint32_t n, cap;
};

struct dp_capture {
	pcap_t *dead;
	pcap_dumper_t *dump;
	uint64_t frames;
	bool held;          /* partitioned: keep records until dp_capture_flush() */
	struct recs side[2];
	uint64_t lost;      /* records that could not be held (out of memory) */
};

static void write_frame(struct dp_capture *cap, uint64_t at, const void *d, uint32_t caplen,
			uint32_t len)
{
	struct pcap_pkthdr h;

	h.caplen = caplen;
	h.len = len;
	/* with nanosecond precision, tv_usec carries nanoseconds */
	h.ts.tv_sec = (time_t)(at / 1000000000ull);
	h.ts.tv_usec = (suseconds_t)(at % 1000000000ull);
	pcap_dump((u_char *)cap->dump, &h, d);
	cap->frames++;
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

	if (push_rec(&cap->side[cap->side[0].chan == c ? 0 : 1], r, d) < 0)
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
	struct recs *a = &cap->side[0], *b = &cap->side[1];
	uint32_t i = 0, j = 0;

	if (cap == NULL || !cap->held)
		return;
	while (i < a->n || j < b->n) { /* each side is in order: merge */
		struct rec *r = j >= b->n || (i < a->n && rec_before(&a->r[i], &b->r[j])) ? &a->r[i++]
											     : &b->r[j++];
		write_frame(cap, r->at, r->data, r->caplen, r->len);
		free(r->data);
	}
	a->n = b->n = 0;
}

/* A held record between ranks; caplen bytes follow. */
struct wire_rec {
	uint64_t at, key;
	uint32_t sub, len, caplen, side;
};

int dp_capture_export(struct dp_capture *cap, struct dp_bytes *x)
{
	size_t need = x->len;

	for (int s = 0; s < 2; s++)
		for (uint32_t i = 0; i < cap->side[s].n; i++)
			need += sizeof(struct wire_rec) + cap->side[s].r[i].caplen;
	if (need > x->cap) {
		uint8_t *b = realloc(x->b, need);
		if (b == NULL)
			return -ENOMEM;
		x->b = b;
		x->cap = need;
	}
	for (uint32_t s = 0; s < 2; s++) {
		for (uint32_t i = 0; i < cap->side[s].n; i++) {
			struct rec *r = &cap->side[s].r[i];
			struct wire_rec w = {r->at, r->key, r->sub, r->len, r->caplen, s};
			memcpy(x->b + x->len, &w, sizeof(w));
			memcpy(x->b + x->len + sizeof(w), r->data, r->caplen);
			x->len += sizeof(w) + r->caplen;
			free(r->data);
		}
		cap->side[s].n = 0;
	}
	return 0;
}

int dp_capture_import(struct dp_capture *cap, const uint8_t *b, size_t len)
{
	size_t off = 0;

	while (off < len) {
		struct wire_rec w;
		if (len - off < sizeof(w))
			return -EINVAL;
		memcpy(&w, b + off, sizeof(w));
		off += sizeof(w);
		if (w.side > 1 || w.caplen > len - off || w.caplen > w.len)
			return -EINVAL;
		struct rec r = {.at = w.at, .key = w.key, .sub = w.sub, .len = w.len, .caplen = w.caplen};
		if (push_rec(&cap->side[w.side], r, b + off) < 0)
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
		write_frame(cap, now_ns, d, caplen, len);
}

struct dp_capture *dp_capture_open(const char *path, char *err, size_t errlen)
{
	struct dp_capture *cap = calloc(1, sizeof(*cap));

	if (cap == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	cap->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
	cap->dump = cap->dead ? pcap_dump_open(cap->dead, path) : NULL;
	if (cap->dump == NULL) {
		snprintf(err, errlen, "capture %s: %s", path, cap->dead ? pcap_geterr(cap->dead) : "pcap");
		if (cap->dead)
			pcap_close(cap->dead);
		free(cap);
		return NULL;
	}
	return cap;
}

void dp_capture_attach(struct dp_capture *cap, struct dp_chan *c)
{
	if (cap->side[0].chan == NULL)
		cap->side[0].chan = c;
	else
		cap->side[1].chan = c;
	c->capture = on_frame;
	c->capture_ctx = cap;
}

uint64_t dp_capture_count(const struct dp_capture *cap)
{
	return cap->frames;
}

void dp_capture_close(struct dp_capture *cap)
{
	if (cap == NULL)
		return;
	dp_capture_flush(cap);
	if (cap->lost)
		fprintf(stderr, "rocelab-dp: capture: %" PRIu64 " frames could not be held (out of memory) and are missing\n",
			cap->lost);
	free(cap->side[0].r);
	free(cap->side[1].r);
	pcap_dump_close(cap->dump);
	pcap_close(cap->dead);
	free(cap);
}
