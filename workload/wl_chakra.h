/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_chakra: MLCommons Chakra execution traces into a wl_graph.
 *
 * One file per rank, PREFIX.0.et, PREFIX.1.et, ...; each is a stream of
 * messages, each preceded by its length as a varint (Chakra's protolib
 * encodeMessage): one GlobalMetadata, then the Nodes. Supported node types:
 * COMP_NODE (duration_micros), COMM_COLL_NODE (attributes comm_type,
 * comm_size, optional pg_name), COMM_SEND_NODE (comm_dst, comm_size,
 * optional comm_tag), COMM_RECV_NODE (comm_src, comm_size, optional
 * comm_tag). Any other node type is refused, naming it. A collective's
 * communicator is the process group its pg_name names in the table the
 * caller gives; without pg_name, every rank of the job.
 */
#ifndef WL_CHAKRA_H
#define WL_CHAKRA_H

#include <stddef.h>
#include <stdint.h>

#include "wl_graph.h"

/* A process group: the ranks a pg_name stands for. */
struct wl_group {
	const char *name;
	const uint32_t *ranks;
	uint32_t nranks;
};

/* Appends the nodes of one rank's trace (buf, len bytes, read from file: the
 * name is for messages only) to rank of g. Returns 0, or -1 with err
 * "FILE: ..." (truncated, not Chakra, gzip-compressed) or
 * "FILE: node ID: ..." (unsupported type, missing or bad attribute, unknown
 * process group). Does not run wl_graph_check(). */
int wl_chakra_parse(struct wl_graph *g, uint32_t rank, const char *file,
		    const uint8_t *buf, size_t len, const struct wl_group *groups,
		    uint32_t ngroups, struct wl_err *err);

/* Reads PREFIX.0.et .. PREFIX.(nranks-1).et into g (initialised here; nranks
 * 0: as many as there are consecutive files from PREFIX.0.et), then checks
 * it with wl_graph_check(). Returns 0, or -1 with err set and g freed. */
int wl_chakra_load(struct wl_graph *g, const char *prefix, uint32_t nranks,
		   const struct wl_group *groups, uint32_t ngroups,
		   struct wl_err *err);

#endif
