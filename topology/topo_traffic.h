/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topo_traffic: a workload as a file (`rocelab-dp --traffic FILE`), checked
 * against the topology it runs on. No DPDK.
 *
 *   generators:    # in-process packet sources, the keys of --gen (dataplane/hosts/dp_gen.h)
 *     - {src: h0, dst: h5, proto: roce, rate: 10G, size: 1078, count: 10000, start: 1ms}
 *   rdma:          # RDMA WRITEs between emulated NICs, the keys of --rdma (dataplane/hosts/dp_nic.h)
 *     - {src: e0, dst: e1, qps: 4, size: 65536, count: 64}
 *   collectives:   # the keys of --coll; hosts: a list of host names, or all
 *     - {op: allreduce, hosts: [e0, e1, e2, e3], sizes: 1M:8M, qps: 4}
 *
 * Every entry becomes a spec in the language of the shorthand flags
 * ("SRC>DST:key=value,..." for generators and rdma, "key=value,..." for a
 * collective, hosts joined by '+'), so the data plane's parsers of --gen,
 * --rdma and --coll read both; each entry keeps "FILE:LINE" for their
 * messages. Checked here: the keys of each kind (unknown keys, missing src
 * or dst), hosts that exist (and are emulated NICs for rdma and
 * collectives), source and destination not the same host, rates, sizes and
 * counts that are numbers above zero, durations, a collective over at least
 * two hosts each named once. The value ranges of each key are left to the
 * spec parsers. No limit on the number of entries.
 */
#ifndef TOPO_TRAFFIC_H
#define TOPO_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

#include "topo.h"

enum topo_traffic_kind {
	TOPO_TRAFFIC_GEN,  /* generators: the --gen language */
	TOPO_TRAFFIC_RDMA, /* rdma: the --rdma language */
	TOPO_TRAFFIC_COLL, /* collectives: the --coll language */
	TOPO_TRAFFIC_KINDS,
};

struct topo_traffic_entry {
	enum topo_traffic_kind kind;
	int line;    /* of the entry in the file, 1-based */
	char *where; /* "FILE:LINE", for messages */
	char *spec;  /* the shorthand spec */
};

struct topo_traffic {
	struct topo_traffic_entry *e; /* in file order within each kind, kinds in file order */
	uint32_t n, cap;
	uint32_t count[TOPO_TRAFFIC_KINDS];
};

/*
 * Read and check a traffic file against topology t. Returns 0 and sets *out
 * (free with topo_traffic_free()), or a negative errno value with *out =
 * NULL and err filled with "FILE:LINE: what is wrong" ("FILE: ..." without a
 * line): -EIO the file cannot be read, -ENOMEM no memory for the result,
 * -EINVAL bad arguments or content (memory running out while checking the
 * content also gives -EINVAL, with "out of memory" in err).
 */
int topo_traffic_load(const char *path, const struct topo *t, struct topo_traffic **out,
		      char *err, size_t errlen);

/* Same on YAML text in memory; display_name stands for the file in messages. */
int topo_traffic_load_string(const char *yaml, size_t len, const char *display_name,
			     const struct topo *t, struct topo_traffic **out, char *err,
			     size_t errlen);

/* The section name of a kind ("generators", "rdma", "collectives"); NULL when out of range. */
const char *topo_traffic_kind_name(enum topo_traffic_kind kind);

/* Free; NULL is fine. */
void topo_traffic_free(struct topo_traffic *tr);

#endif /* TOPO_TRAFFIC_H */
