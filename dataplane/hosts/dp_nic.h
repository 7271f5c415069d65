/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_nic: emulated RDMA NICs (nic_emul/) as hosts of the fabric.
 *
 * Every host with `attach: emulated` gets an ne_nic with the host's MAC and
 * address, paced at its link's rate. Frames the fabric delivers to the host
 * go to ne_nic_rx(); frames the NIC has ready go into the host's NIC queue
 * with dp_fabric_host_send(), but only while that queue has room: a PFC
 * pause of the host link stops the NIC, as it stops a real RNIC, instead of
 * overflowing the queue. An engine timer wakes each NIC at its next event.
 *
 * RDMA traffic between emulated hosts (--rdma): SRC>DST[:key=value,...], the
 * keys in one table (dp_rdma.c: rdma_keys; `rocelab-dp --rdma help` prints it).
 * The destination buffer is checked against the source after the last
 * completion; the result line gives time, goodput and the NICs' retransmit
 * and NAK counters.
 *
 * Collectives over the emulated NICs (--coll): dp_coll.h.
 */
#ifndef DP_NIC_H
#define DP_NIC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dp_coll.h"
#include "dp_fabric.h"

/*
 * Create a NIC for every emulated host of f's topology, with o's settings
 * (room for QPs, QP context cache model). Seed 1 numbers each NIC's QPs from
 * 0x11, as rxe; another seed starts each NIC at its own pseudo-random QPN. Returns 0, or -1 with a message. A topology
 * without emulated hosts gives n = 0.
 */
/* NIC model settings every emulated NIC gets (--nic). */
struct dp_nic_opts {
	uint32_t max_qps;      /* room for QPs; 0: the NIC's default */
	uint64_t seed;         /* 1: QPNs from 0x11 as rxe; else a per-NIC start */
	uint32_t qpc_entries;  /* QP context cache entries; 0: no cache model */
	uint64_t qpc_miss_ns;  /* cost of a context miss */
	bool qpc_hold;         /* hold a fetched context until its QP has sent (ne_nic_config) */
	uint32_t tx_quantum;   /* TX arbitration: 0 round robin, else DRR quantum in bytes */
	uint64_t msg_rate;     /* message-rate ceiling, messages/s; 0 none */
	/* lanes > 1: the NICs run in lanes, host h's in lane_of_host[h] (its
	 * partition), and a collective's progress is split by rank likewise
	 * (ne_coll_set_lanes); only for runs dp_nics_coll_splits accepts */
	uint32_t lanes;
	const uint32_t *lane_of_host;
	/* lanes > 1 on MPI ranks: this process runs lane lane_self alone (its
	 * partition), and a split collective keeps the other lanes' connections
	 * as counts only (ne_coll_config.here_lane_of); false: every lane here */
	bool lane_alone;
	uint32_t lane_self;
};

/*
 * Parse --nic "qpc=N,miss=TIME,quantum=BYTES,msgrate=N,hold=on|off" into o (the
 * keys: dp_nic.c's nic_keys). Returns 0, or -1 with "--nic: bad KEY=VALUE:
 * why" in err.
 */
int dp_nic_opts_parse(struct dp_nic_opts *o, const char *spec, char *err, size_t errlen);

/* Print the --nic keys: what each takes, its default, what it means (--nic help). */
void dp_nic_opts_help(FILE *out);

int dp_nics_create(struct dp_nics *ns, struct dp_fabric *f, const struct dp_nic_opts *o,
		   char *err, size_t errlen);

/*
 * Sums over the emulated NICs and the fabric, for one line of totals:
 * retransmits, NAKs, timeouts, drops, PFC frames, ECN marks, flowlet switches,
 * QP context misses, ACKs sent, the spread of bytes over the switch-to-switch
 * links that carried any (link_max_mean: max / mean, link_cv: stdev / mean),
 * and with --coll: messages (transfers received), data_wqes (incl. zero-length),
 * cts, wqes_posted, cqes_polled, proxy_busy_ns (all ranks), proxy_busy_max_ns
 * (per size the busiest rank, summed), rr_mismatch, the active QPs per NIC,
 * and the per-message latency over the sweep (ne_coll_get_latency):
 * msg_lat_mean_us, msg_lat_p50_us, msg_lat_p99_us, msg_lat_max_us,
 * msg_wait_mean_us, msg_wait_p99_us. Each size also prints a "# latency" line.
 * With several collectives the fabric's sums are a line of their own and
 * each collective's counters follow, one "# [cK] totals:" line each.
 */
void dp_nics_print_totals(const struct dp_nics *ns, FILE *out);
void dp_nics_destroy(struct dp_nics *ns);

/* True when host h is an emulated NIC. */
static inline bool dp_nics_owns(const struct dp_nics *ns, uint32_t host)
{
	return ns->by_host && ns->by_host[host] >= 0;
}

/* A frame the fabric delivered to emulated host h (consumes m). */
void dp_nics_rx(struct dp_nics *ns, struct dp_host *h, struct rte_mbuf *m, uint64_t now_ns);

/* Print the --rdma keys: what each takes, its default, what it means (--rdma help). */
void dp_rdma_help(FILE *out);

/*
 * Check an --rdma SPEC against topology t before anything runs: two different
 * emulated hosts and its keys. Returns 0, or -1 with a message in err.
 */
int dp_rdma_check(const struct topo *t, const char *spec, char *err, size_t errlen);

/* Parse an --rdma SPEC and set it up (QPs, memory, first posts at its start). Returns 0 or -1. */
int dp_nics_add_rdma(struct dp_nics *ns, const char *spec, uint64_t start_offset_ns, char *err,
		     size_t errlen);

/* True while some --rdma transfer or collective's sweep is not finished. */
bool dp_nics_active(const struct dp_nics *ns);


/*
 * The NICs' counters (ne_nic's, and what dp_nic counts per NIC: frames,
 * refusals, waits) as dp_nics_counters_len() words: pack them, sum every
 * other process's vector (a NIC counts only where it ran) and add the sum
 * to this copy's NICs.
 */
size_t dp_nics_counters_len(const struct dp_nics *ns);
void dp_nics_counters_pack(const struct dp_nics *ns, uint64_t *v);
void dp_nics_counters_add(struct dp_nics *ns, const uint64_t *v);

/* Print the result of every --rdma transfer and each NIC's counters. */
void dp_nics_report(const struct dp_nics *ns, FILE *out);

/* One "rdma SPEC: ..." line of dp_nics_report: its numbers. */
struct dp_rdma_row {
	const char *spec;
	uint64_t completed;          /* WRITEs completed */
	uint32_t count, size, qps;   /* WRITEs asked for, bytes each, QPs */
	double time_us;              /* first post to last completion; 0 when not finished */
	double gbps;                 /* Gbit/s (10^9) of the completed WRITEs over time_us */
	uint64_t errors;
	const char *data;            /* "verified", "WRONG" or "NOT FINISHED" */
};
/* One row of dp_nics_report's NIC table: a NIC's counters (packets, frames). */
struct dp_nic_row {
	const char *name;            /* its host's */
	uint64_t sent, received, retrans, timeouts, naks_tx, naks_rx, dup_req, rejected;
	char why[160];               /* the rejected frames by reason, "  reason=N ..." ("" none) */
};
/* --rdma transfer i, or NIC i (in the order of ns), into row as dp_nics_report
 * prints it. Return 0, or -ENOENT when there is no i. */
int dp_nics_rdma_row(const struct dp_nics *ns, uint32_t i, struct dp_rdma_row *row);
int dp_nics_row(const struct dp_nics *ns, uint32_t i, struct dp_nic_row *row);

/* Number of --rdma transfers whose destination data did not match, or that failed. */
unsigned dp_nics_failures(const struct dp_nics *ns);

#endif /* DP_NIC_H */