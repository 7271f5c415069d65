/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the collective tests (cmocka): inputs with a known
 * pattern, a run on a fresh ne_fab, and the expected results computed here
 * from the inputs, not by the library.
 */
#ifndef COLL_TEST_UTIL_H
#define COLL_TEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "ne_coll.h"
#include "ne_fab.h"

#define RATE 100000000000ull /* 100 Gbit/s */
#define DELAY 1000ull        /* 1 us per link */
#define UNTIL 10000000000ull /* 10 s simulated */

/* Distinct small integers per rank and element: sums are exact in float. */
float coll_val(uint32_t rank, uint64_t e);
/* Write coll_val() into every input of the collective. */
void coll_fill_inputs(struct ne_coll *c, uint32_t n);
/* Run one collective on a fresh fabric (asserts it completes); the caller frees. */
void coll_run(struct fab *f, const struct ne_coll_config *cfg);
/* A data packet (DSCP data_dscp, a WRITE opcode). */
bool coll_is_data(const struct fab *f, const struct fab_rec *r);
/* Payload bytes of the data packets in the fabric's log. */
uint64_t coll_wire_data_bytes(const struct fab *f);
/* Outputs against results computed from coll_val(); wrong elements. */
long coll_verify(struct ne_coll *c, const struct ne_coll_config *cfg);
/* Payload bytes the algorithm implies on the wire for one iteration. */
uint64_t coll_implied_bytes(const struct ne_coll_config *cfg);

#endif
