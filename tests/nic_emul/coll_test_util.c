/* SPDX-License-Identifier: BSD-3-Clause */
#include "coll_test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rl_parse.h"

/* Distinct small integers per rank and element: sums are exact in float. */
float coll_val(uint32_t rank, uint64_t e)
{
	return (float)((rank + 1) * 1000u + (uint32_t)(e % 997u));
}

void coll_fill_inputs(struct ne_coll *c, uint32_t n)
{
	for (uint32_t r = 0; r < n; r++) {
		size_t nf;
		float *in = ne_coll_input(c, r, &nf);

		for (size_t e = 0; e < nf; e++)
			in[e] = coll_val(r, e);
	}
}

/* Run one collective on a fresh fabric; the caller frees. */
void coll_run(struct fab *f, const struct ne_coll_config *cfg)
{
	fab_init(f, cfg, RATE, DELAY);
	assert_non_null(fab_coll(f, cfg));
	coll_fill_inputs(f->coll, cfg->nranks);
	assert_int_equal(ne_coll_start(f->coll, 0), 0);
	assert_true(fab_run(f, UNTIL));
	assert_true(ne_coll_done(f->coll));
	assert_int_equal(f->bad_frames, 0);
}

bool coll_is_data(const struct fab *f, const struct fab_rec *r)
{
	return r->dscp == f->data_dscp && r->opcode <= RL_OP_WRITE_ONLY_IMM;
}

uint64_t coll_wire_data_bytes(const struct fab *f)
{
	uint64_t b = 0;

	for (size_t i = 0; i < f->nlog; i++)
		if (coll_is_data(f, &f->log[i]))
			b += f->log[i].payload_len;
	return b;
}

/* Check outputs against sums computed here. Returns wrong elements. */
long coll_verify(struct ne_coll *c, const struct ne_coll_config *cfg)
{
	uint32_t n = cfg->nranks;
	uint64_t pc = cfg->bytes / 4 / n, cnt = cfg->bytes / 4;
	long wrong = 0;

	for (uint32_t r = 0; r < n; r++) {
		size_t nf;
		const float *o = ne_coll_output(c, r, &nf);

		switch (cfg->op) {
		case NE_COLL_ALLREDUCE:
			assert_int_equal(nf, cnt);
			for (uint64_t e = 0; e < cnt; e++) {
				float want = 0;

				for (uint32_t s = 0; s < n; s++)
					want += coll_val(s, e);
				wrong += o[e] != want;
			}
			break;
		case NE_COLL_ALLGATHER:
			assert_int_equal(nf, n * pc);
			for (uint32_t s = 0; s < n; s++)
				for (uint64_t e = 0; e < pc; e++)
					wrong += o[s * pc + e] != coll_val(s, e);
			break;
		case NE_COLL_REDUCESCATTER:
			assert_int_equal(nf, pc);
			for (uint64_t e = 0; e < pc; e++) {
				float want = 0;

				for (uint32_t s = 0; s < n; s++)
					want += coll_val(s, r * pc + e);
				wrong += o[e] != want;
			}
			break;
		case NE_COLL_ALLTOALL:
			assert_int_equal(nf, n * pc);
			for (uint32_t s = 0; s < n; s++)
				for (uint64_t e = 0; e < pc; e++)
					wrong += o[s * pc + e] != (s == r ? coll_val(r, r * pc + e)
									  : coll_val(s, r * pc + e));
			break;
		case NE_COLL_BROADCAST: /* every rank: the root's input */
			assert_int_equal(nf, cnt);
			for (uint64_t e = 0; e < cnt; e++)
				wrong += o[e] != coll_val(cfg->root, e);
			break;
		case NE_COLL_REDUCE: /* the root: the sum (the others hold partial sums) */
			assert_int_equal(nf, cnt);
			for (uint64_t e = 0; r == cfg->root && e < cnt; e++) {
				float want = 0;

				for (uint32_t s = 0; s < n; s++)
					want += coll_val(s, e);
				wrong += o[e] != want;
			}
			break;
		case NE_COLL_SENDRECV: { /* a block per pair into r, in the pairs' order */
			uint64_t slot = 0;

			for (uint32_t p = 0; p < (cfg->npairs ? cfg->npairs : n); p++) {
				uint32_t s = cfg->npairs ? cfg->pairs[p][0] : p;
				uint32_t d = cfg->npairs ? cfg->pairs[p][1] : (p + cfg->shift) % n;

				if (d != r)
					continue;
				assert_true(nf >= (slot + 1) * cnt);
				for (uint64_t e = 0; e < cnt; e++)
					wrong += o[slot * cnt + e] != coll_val(s, e);
				slot++;
			}
			assert_int_equal(nf, slot * cnt);
			break;
		}
		case NE_COLL_INCAST:
			if (r != cfg->root) {
				assert_null(o);
				break;
			}
			assert_int_equal(nf, n * cnt);
			for (uint32_t s = 0; s < n; s++)
				for (uint64_t e = 0; e < cnt; e++)
					wrong += o[s * cnt + e] != (s == r ? 0.0f : coll_val(s, e));
			break;
		}
	}
	return wrong;
}

/* Payload bytes the algorithm implies on the wire for one iteration. */
uint64_t coll_implied_bytes(const struct ne_coll_config *cfg)
{
	uint64_t n = cfg->nranks, pc = cfg->bytes / 4 / n, cnt = cfg->bytes / 4;

	switch (cfg->op) {
	case NE_COLL_ALLREDUCE:
		return 2 * (n - 1) * cnt * 4;
	case NE_COLL_ALLGATHER:
	case NE_COLL_REDUCESCATTER:
		return (n - 1) * n * pc * 4;
	case NE_COLL_ALLTOALL:
		return n * (n - 1) * pc * 4;
	case NE_COLL_SENDRECV: /* the whole buffer once per pair */
		return (cfg->npairs ? cfg->npairs : n) * cnt * 4;
	case NE_COLL_INCAST:
	case NE_COLL_BROADCAST: /* n - 1 hops of the whole buffer */
	case NE_COLL_REDUCE:
		return (n - 1) * cnt * 4;
	}
	return 0;
}
