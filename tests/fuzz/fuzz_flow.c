/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the flow engine (flow/): the input is a script of
 * steps on a fabric that starts with 4 links.
 *   0x00-0x3f  start a flow: (op & 7) + 1 hops (7 and 8 hops make paths a
 *              link may repeat in, some refused), link ids from the next
 *              bytes (unknown ones refused), size from the next 3 bytes
 *              (x 64 B), start (op >> 3) x 1 us from now
 *   0x40-0x7f  advance to the next delivery
 *   0x80-0xbf  run until (op & 0x3f) x 100 ns from now
 *   0xc0-0xff  add a link: capacity from the next 2 bytes (x 100 Mbit/s,
 *              0 refused) and delay (op & 0x3f) x 50 ns
 * After every step bytes are conserved and no link is over capacity; at the
 * end every flow started is delivered, each after its start, the instants
 * never going backwards. Each script runs twice: exact rates, and a refill
 * period of 700 ns (fl_config.refill_ns).
 * Built with -Dfuzz=true under clang; run by scripts/fuzz.sh.
 */
#include <stdlib.h>

#include "fl_fabric.h"

#define MBPS 1000000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
	const uint8_t *d;
	size_t n, i;
};

static unsigned next(struct input *in)
{
	return in->i < in->n ? in->d[in->i++] : 0;
}

static void check(const struct fl_fabric *fab)
{
	struct fl_mismatch m;
	uint32_t link;

	if (fl_check_bytes(fab, &m) == 1 || fl_check_rates(fab, &link))
		abort();
}

static void start(struct fl_fabric *fab, struct input *in, unsigned op, uint32_t *started)
{
	uint32_t path[FL_MAX_HOPS], id;
	unsigned hops = (op & 7) + 1;
	uint64_t bytes;

	for (unsigned h = 0; h < hops; h++)
		path[h] = next(in) % 24;
	bytes = ((uint64_t)next(in) << 16 | next(in) << 8 | next(in)) * 64;
	/* weight 1 (most flows) to 4: fl_flow_start_weighted */
	if (fl_flow_start_weighted(fab, path, hops, bytes, next(in) % 8 < 5 ? 1 : next(in) % 4 + 1,
				   fl_now(fab) + (op >> 3) * 1000, 0, &id) == 0)
		(*started)++;
}

/* Takes the delivered flows off the engine; aborts on one delivered too early or out of order. */
static void drain(struct fl_fabric *fab, uint64_t *last, uint32_t *delivered)
{
	struct fl_done d[16];
	size_t n;

	while ((n = fl_done_pop(fab, d, 16)) > 0)
		for (size_t k = 0; k < n; k++) {
			if (d[k].finish_ns <= d[k].start_ns || d[k].finish_ns < *last)
				abort();
			*last = d[k].finish_ns;
			(*delivered)++;
		}
}

static void step(struct fl_fabric *fab, struct input *in, unsigned op, uint32_t *started)
{
	uint32_t id;

	if (op < 0x40) {
		start(fab, in, op, started);
	} else if (op < 0x80) {
		if (fl_advance(fab, NULL) < 0)
			abort(); /* a handful of flows never stall */
	} else if (op < 0xc0) {
		if (fl_run_until(fab, fl_now(fab) + (op & 0x3f) * 100) < 0)
			abort();
	} else {
		uint64_t bps = ((uint64_t)next(in) << 8 | next(in)) * 100 * MBPS;

		(void)fl_link_add(fab, bps, (op & 0x3f) * 50, &id);
	}
}

/* The script on an engine of refill period refill_ns (0: exact rates). */
static void run(const uint8_t *data, size_t size, uint64_t refill_ns)
{
	struct fl_fabric *fab = fl_create(&(struct fl_config){ .refill_ns = refill_ns });
	struct input in = { .d = data, .n = size };
	uint32_t id, started = 0, delivered = 0;
	uint64_t last = 0;
	int rc;

	if (!fab)
		return;
	for (unsigned l = 0; l < 4; l++)
		if (fl_link_add(fab, (25 + 75 * l) * 1000 * MBPS, 100 * l, &id))
			abort();
	while (in.i < in.n) {
		step(fab, &in, next(&in), &started);
		check(fab);
		drain(fab, &last, &delivered);
	}
	while ((rc = fl_advance(fab, NULL)) > 0) {
		check(fab);
		drain(fab, &last, &delivered);
	}
	if (rc < 0 || delivered != started || fl_live_flows(fab) != 0)
		abort();
	fl_destroy(fab);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	run(data, size, 0);
	run(data, size, 700); /* a refill period: the same invariants */
	return 0;
}
