/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * swx_load: a parsed .spec (swx_spec.h) into DPDK 22.11's public SWX pipeline
 * configuration API (rte_swx_pipeline_*_config, rte_swx_pipeline_build), and
 * packets pushed through the built pipeline one at a time.
 *
 * DPDK's tables, ACLs and register arrays take their memory from rte_malloc,
 * so a pipeline needs EAL: swx_eal_init starts it once per process without
 * hugepages, PCI or shared files. The pipeline has one input port and
 * n_ports_out output ports of rocelab's own (in memory: a pushed frame goes
 * in, the frame the program transmits is copied out with its port).
 */
#ifndef SWX_LOAD_H
#define SWX_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "swx_spec.h"

#define SWX_FRAME_MAX 9216     /* a jumbo frame: the largest frame pushed or received */
#define SWX_PORTS_OUT_MAX 256
#define SWX_PORTS_IN_MAX 256   /* a power of two: DPDK polls the input ports in turn */
#define SWX_RUN_STEPS_MAX 100000 /* instructions one frame may take before the program is called stuck */

struct swx_pipe;

/* What became of one pushed frame. */
struct swx_result {
	int sent;            /* 1: transmitted on port; 0: dropped */
	uint32_t port;
	uint32_t len;
	uint8_t frame[SWX_FRAME_MAX];
};

#define SWX_EAL_MB 512 /* EAL's memory by default: DPDK's fib.spec (a 1M-route LPM table) needs ~190 MB */

/*
 * Starts EAL once for this process (later calls return 0): one lcore, no
 * hugepages (--no-huge: mem_mb of malloc'd memory, 0 for SWX_EAL_MB; tables
 * take theirs from it), no PCI, no shared files (--no-shconf), a --file-prefix
 * of its own. Returns 0, or -EIO with the reason in err.
 */
int swx_eal_init(uint32_t mem_mb, char *err, size_t errlen);

/* Stops EAL (rte_eal_cleanup) and removes its runtime directory; no-op if not started. */
void swx_eal_fini(void);

/*
 * Builds s into a pipeline with n_ports_out (1..SWX_PORTS_OUT_MAX) output
 * ports; needs swx_eal_init. Each "tx m.FIELD" is guarded: a frame whose port
 * is n_ports_out or more is dropped (DPDK 22.11 would index past its port
 * array); "tx N" with N past the ports is refused. Returns 0 and *out, or
 * -EINVAL with "FILE:LINE: ..." in err (the line of the construct DPDK
 * refused), or -ENOMEM.
 */
int swx_load(const struct swx_spec *s, uint32_t n_ports_out, struct swx_pipe **out,
	     char *err, size_t errlen);

/*
 * swx_load with n_ports_in (1..SWX_PORTS_IN_MAX) input ports: the program's
 * "rx m.FIELD" writes the port a frame arrived on (swx_pipe_push_port).
 * DPDK wants a power of two: n_ports_in is rounded up to one.
 */
int swx_load_ports(const struct swx_spec *s, uint32_t n_ports_in, uint32_t n_ports_out,
		   struct swx_pipe **out, char *err, size_t errlen);

/*
 * Adds one entry to table, in DPDK's entry syntax ("match VALUE[/MASK] ...
 * [priority N] action NAME [ARG VALUE ...]"; an existing key's entry is
 * replaced), or with "default action NAME [ARG VALUE ...]" sets the table's
 * default action (one not declared const), and commits it. Returns 0, or
 * -EINVAL with what is wrong in err.
 */
int swx_pipe_entry(struct swx_pipe *p, const char *table, const char *entry, char *err,
		   size_t errlen);

/*
 * swx_pipe_entry without the commit: the entry joins the table's pending
 * transaction (rte_swx_ctl), which swx_pipe_commit applies, so a table of
 * many entries is rebuilt once. Returns 0, or -EINVAL with what is wrong in
 * err (what was added before stays pending).
 */
int swx_pipe_entry_add(struct swx_pipe *p, const char *table, const char *entry, char *err,
		       size_t errlen);

/*
 * Applies the pending entries of every table (swx_pipe_entry_add) in one
 * transaction. Returns 0, or -EINVAL with DPDK's reason in err (the
 * transaction is aborted: the tables keep what they had).
 */
int swx_pipe_commit(struct swx_pipe *p, char *err, size_t errlen);

/*
 * Pushes one frame (1..SWX_FRAME_MAX bytes) through the program and runs it
 * until the frame has been transmitted or dropped. Returns 0 with *r filled,
 * or -EINVAL (bad length), -ENOMEM (no mbuf), -ELOOP (the frame neither left
 * nor was dropped within SWX_RUN_STEPS_MAX instructions: a loop in the
 * program; the pipeline is unusable afterwards).
 */
int swx_pipe_push(struct swx_pipe *p, const uint8_t *frame, uint32_t len, struct swx_result *r);

/* swx_pipe_push of a frame arriving on input port in_port (-EINVAL: no such port). */
int swx_pipe_push_port(struct swx_pipe *p, uint32_t in_port, const uint8_t *frame, uint32_t len,
		       struct swx_result *r);

/* Frees the pipeline and its pool; NULL is fine. */
void swx_pipe_free(struct swx_pipe *p);

#endif /* SWX_LOAD_H */
