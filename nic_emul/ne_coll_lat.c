/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll per-message latency: when each data message (transfer) became
 * ready at its sender, when its first WQE was posted, when the sender
 * handled the completion of its last WQE; two log-scale histograms (latency
 * = done - post, wait = post - ready). See ne_coll_get_latency() in ne_coll.h.
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_BELOW (2u * NE_COLL_HIST_SUB) /* values with a bin each */
#define SUB_BITS 4u                         /* log2(NE_COLL_HIST_SUB) */
#define FIRST_EXP 5u                        /* log2(EXACT_BELOW) */
#define UNSET UINT64_MAX

/* Bin of v: exact below 32; else 16 bins per power of two. */
static uint32_t bin_of(uint64_t v)
{
	uint32_t e;

	if (v < EXACT_BELOW)
		return (uint32_t)v;
	e = 63u - (uint32_t)__builtin_clzll(v);
	return EXACT_BELOW + (e - FIRST_EXP) * NE_COLL_HIST_SUB +
	       (uint32_t)((v >> (e - SUB_BITS)) & (NE_COLL_HIST_SUB - 1));
}

/* Middle of bin i (its value when the bin is exact). */
static uint64_t bin_mid(uint32_t i)
{
	uint32_t e, m;
	uint64_t lo, width;

	if (i < EXACT_BELOW)
		return i;
	e = (i - EXACT_BELOW) / NE_COLL_HIST_SUB + FIRST_EXP;
	m = (i - EXACT_BELOW) % NE_COLL_HIST_SUB;
	width = 1ull << (e - SUB_BITS);
	lo = (NE_COLL_HIST_SUB + m) * width;
	return lo + width / 2;
}

void ne_coll_hist_add(struct ne_coll_hist *h, uint64_t v)
{
	h->n++;
	h->sum_ns += v;
	if (v > h->max_ns)
		h->max_ns = v;
	h->bin[bin_of(v)]++;
}

void ne_coll_hist_merge(struct ne_coll_hist *dst, const struct ne_coll_hist *src)
{
	dst->n += src->n;
	dst->sum_ns += src->sum_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	for (uint32_t i = 0; i < NE_COLL_HIST_BINS; i++)
		dst->bin[i] += src->bin[i];
}

uint64_t ne_coll_hist_quantile(const struct ne_coll_hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (!h || !h->n)
		return 0;
	rank = (uint64_t)ceil(q * (double)h->n);
	rank = rank ? rank : 1;
	if (rank >= h->n)
		return h->max_ns; /* the largest value is known exactly */
	for (uint32_t i = 0; i < NE_COLL_HIST_BINS; i++) {
		seen += h->bin[i];
		if (seen >= rank) {
			uint64_t mid = bin_mid(i);

			return mid < h->max_ns ? mid : h->max_ns;
		}
	}
	return h->max_ns;
}

double ne_coll_hist_mean(const struct ne_coll_hist *h)
{
	return h && h->n ? (double)h->sum_ns / (double)h->n : 0.0;
}

int ne_coll_lat_setup(struct ne_coll *c)
{
	c->lat = calloc(1, sizeof(*c->lat));
	c->wait = calloc(1, sizeof(*c->wait));
	if (!c->lat || !c->wait)
		return -ENOMEM;
	for (uint32_t k = 0; k < c->nconns; k++) {
		struct coll_conn *cn = &c->conns[k];
		size_t n = cn->nxfers ? cn->nxfers : 1;

		if (cn->away) /* (its sender's process records them) */
			continue;
		cn->lat_ready = malloc(n * sizeof(*cn->lat_ready));
		cn->lat_post = malloc(n * sizeof(*cn->lat_post));
		if (!cn->lat_ready || !cn->lat_post)
			return -ENOMEM;
	}
	return 0;
}

void ne_coll_lat_iter_start(struct ne_coll *c)
{
	for (uint32_t k = 0; k < c->nconns; k++) {
		struct coll_conn *cn = &c->conns[k];

		if (!coll_mine(c, cn->src))
			continue;
		memset(cn->lat_ready, 0xFF, cn->nxfers * sizeof(*cn->lat_ready));
		memset(cn->lat_post, 0xFF, cn->nxfers * sizeof(*cn->lat_post));
	}
}

void ne_coll_lat_ready(struct ne_coll *c, struct coll_conn *cn, uint32_t s, uint64_t now)
{
	(void)c;
	if (cn->lat_ready[s] == UNSET)
		cn->lat_ready[s] = now;
}

void ne_coll_lat_post(struct ne_coll *c, struct coll_conn *cn, uint32_t s, uint64_t now)
{
	ne_coll_lat_ready(c, cn, s, now); /* (posted means ready) */
	if (cn->lat_post[s] == UNSET)
		cn->lat_post[s] = now;
}

void ne_coll_lat_done(struct ne_coll *c, const struct coll_conn *cn, uint32_t s, uint64_t now)
{
	uint64_t post = cn->lat_post[s];

	if (post == UNSET || now < post)
		return; /* (not reached: a message completes after its post) */
	ne_coll_hist_add(c->lat, now - post);
	ne_coll_hist_add(c->wait, post - cn->lat_ready[s]);
}

int ne_coll_get_latency(const struct ne_coll *c, struct ne_coll_hist *lat, struct ne_coll_hist *wait)
{
	if (!c)
		return -EINVAL;
	if (lat)
		*lat = *c->lat;
	if (wait)
		*wait = *c->wait;
	return 0;
}

int ne_coll_format_latency(const struct ne_coll_hist *lat, const struct ne_coll_hist *wait,
			   char *buf, size_t cap)
{
	const double us = 1000.0;

	return snprintf(buf, cap,
			"# latency: msgs=%llu lat_mean_us=%.3f lat_p50_us=%.3f lat_p99_us=%.3f "
			"lat_max_us=%.3f wait_mean_us=%.3f wait_p50_us=%.3f wait_p99_us=%.3f "
			"wait_max_us=%.3f\n",
			(unsigned long long)lat->n, ne_coll_hist_mean(lat) / us,
			(double)ne_coll_hist_quantile(lat, 0.5) / us,
			(double)ne_coll_hist_quantile(lat, 0.99) / us, (double)lat->max_ns / us,
			ne_coll_hist_mean(wait) / us, (double)ne_coll_hist_quantile(wait, 0.5) / us,
			(double)ne_coll_hist_quantile(wait, 0.99) / us, (double)wait->max_ns / us);
}
