/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_capture.h"

#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>

struct dp_capture {
	pcap_t *dead;
	pcap_dumper_t *dump;
	uint64_t frames;
};

static void on_frame(void *ctx, struct dp_chan *c, struct rte_mbuf *m, uint64_t now_ns)
{
	struct dp_capture *cap = ctx;
	uint8_t buf[RTE_MBUF_DEFAULT_BUF_SIZE * 8];
	struct pcap_pkthdr h;
	const void *d;

	(void)c;
	h.caplen = h.len = rte_pktmbuf_pkt_len(m);
	if (h.caplen > sizeof(buf))
		h.caplen = sizeof(buf);
	d = rte_pktmbuf_read(m, 0, h.caplen, buf);
	/* with nanosecond precision, tv_usec carries nanoseconds */
	h.ts.tv_sec = (time_t)(now_ns / 1000000000ull);
	h.ts.tv_usec = (suseconds_t)(now_ns % 1000000000ull);
	pcap_dump((u_char *)cap->dump, &h, d);
	cap->frames++;
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
	pcap_dump_close(cap->dump);
	pcap_close(cap->dead);
	free(cap);
}
