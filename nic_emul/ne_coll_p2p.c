/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ne_coll Send/Recv (op sendrecv): one-way transfers between pairs of ranks
 * over NCCL's p2p path, as nccl-tests' sendrecv_perf runs them.
 *
 * nccl-tests src/sendrecv.cu: SendRecvRunColl posts, in one group,
 * ncclSend(sendbuff, count) to (rank + 1) mod nRanks and ncclRecv(recvbuff,
 * count) from (rank - 1 + nRanks) mod nRanks, so every rank sends and
 * receives count elements at once; SendRecvGetCollByteCount makes the size
 * count x type size, and SendRecvGetBw's busbw factor is 1.
 * rocelab adds:
 * - shift=K: rank r sends to (r + K) mod n (K = 1 is nccl-tests');
 * - pairs=S>D+...: explicit one-way transfers, as pipeline parallelism sends
 *   activations from one stage to the next. A rank that receives from
 *   several senders keeps each block apart, in the order of the pairs.
 * Each pair is one connection per channel, as AllToAll's p2p transfers:
 * the block is cut over the channels and each channel's part is sent in
 * messages of NCCL_P2P_NET_CHUNKSIZE (model nccl) or chunk (model rocelab)
 * (ne_coll_plan_block). A pair inside one server is an NVLink connection
 * (ne_coll_nvl_setup), across servers it goes through the two NICs.
 */
#include "ne_coll_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

uint32_t ne_coll_p2p_npairs(const struct ne_coll_config *cfg)
{
	return cfg->npairs ? cfg->npairs : cfg->nranks;
}

void ne_coll_p2p_pair(const struct ne_coll_config *cfg, uint32_t p, uint32_t *s, uint32_t *d)
{
	if (cfg->npairs) {
		*s = cfg->pairs[p][0];
		*d = cfg->pairs[p][1];
		return;
	}
	*s = p;
	*d = (p + cfg->shift) % cfg->nranks;
}

/* Where pair p's block lands in its receiver's buffer: how many pairs
 * before it have the same receiver (0 for the shift). */
static uint32_t recv_slot(const struct ne_coll_config *cfg, uint32_t p)
{
	uint32_t s, d, a, b, slot = 0;

	ne_coll_p2p_pair(cfg, p, &s, &d);
	for (uint32_t q = 0; q < p; q++) {
		ne_coll_p2p_pair(cfg, q, &a, &b);
		slot += b == d;
	}
	return slot;
}

void ne_coll_p2p_degree(const struct ne_coll_config *cfg, uint32_t rank, uint32_t *out, uint32_t *in)
{
	*out = *in = 0;
	for (uint32_t p = 0; p < ne_coll_p2p_npairs(cfg); p++) {
		uint32_t s, d;

		ne_coll_p2p_pair(cfg, p, &s, &d);
		*out += s == rank;
		*in += d == rank;
	}
}

int ne_coll_p2p_check(const struct ne_coll_config *cfg, char *msg, size_t cap)
{
	uint32_t n = cfg->nranks;
	char none[1];

	if (!msg || !cap) {
		msg = none;
		cap = sizeof(none);
	}
	if (cfg->op != NE_COLL_SENDRECV)
		return 0;
	if (cfg->npairs > NE_COLL_MAX_PAIRS) {
		snprintf(msg, cap, "pairs: at most %u", NE_COLL_MAX_PAIRS);
		return -EINVAL;
	}
	if (!cfg->npairs && (cfg->shift == 0 || cfg->shift >= n)) {
		snprintf(msg, cap, "shift=%u: must be 1..%u with %u ranks", cfg->shift, n - 1, n);
		return -EINVAL;
	}
	for (uint32_t p = 0; p < cfg->npairs; p++) {
		uint32_t s = cfg->pairs[p][0], d = cfg->pairs[p][1];
		uint32_t bad = s >= n ? s : d;

		if (s >= n || d >= n) {
			snprintf(msg, cap, "pairs=%u>%u: rank %u is outside the %u ranks (0..%u)", s, d,
				 bad, n, n - 1);
			return -EINVAL;
		}
		if (s == d) {
			snprintf(msg, cap, "pairs=%u>%u: rank %u sends to itself", s, d, s);
			return -EINVAL;
		}
	}
	return 0;
}

/* The connections: pair p on channel ch is conns[ch * npairs + p]. */
int ne_coll_plan_p2p(struct ne_coll *c)
{
	uint32_t np = ne_coll_p2p_npairs(&c->cfg), nch = c->nchannels;
	int rc = 0;

	c->nconns = nch * np;
	c->conns = calloc(c->nconns, sizeof(*c->conns));
	if (!c->conns)
		return -ENOMEM;
	for (uint32_t ch = 0; ch < nch; ch++)
		for (uint32_t p = 0; p < np; p++) {
			struct coll_conn *k = &c->conns[ch * np + p];

			ne_coll_p2p_pair(&c->cfg, p, &k->src, &k->dst);
			k->channel = ch;
			for (uint32_t j = 0; j < COLL_MAX_DEPS; j++)
				k->downstream[j] = -1;
			/* as the other ops: nccl a FIFO per connection, rocelab
			 * a CTS budget per receiver and channel */
			k->group = coll_nccl(c) ? ch * np + p : k->dst * nch + ch;
		}
	for (uint32_t p = 0; p < np && !rc; p++)
		rc = ne_coll_plan_block(c, p, np, 0, (uint64_t)recv_slot(&c->cfg, p) * c->rank_elems,
					c->rank_elems);
	return rc;
}

long ne_coll_p2p_wrong(const struct ne_coll *c, uint32_t rank)
{
	const struct coll_rank *r = &c->ranks[rank];
	long wrong = 0;

	for (uint32_t p = 0; p < ne_coll_p2p_npairs(&c->cfg); p++) {
		uint32_t s, d;
		const float *want, *got;

		ne_coll_p2p_pair(&c->cfg, p, &s, &d);
		if (d != rank)
			continue;
		want = c->ranks[s].in;
		got = r->work + (size_t)recv_slot(&c->cfg, p) * c->rank_elems;
		for (uint64_t e = 0; e < c->rank_elems; e++)
			wrong += got[e] != want[e]; /* a copy: exact */
	}
	return wrong;
}
