/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topo_gen: generated fabrics, written as the YAML the loader reads
 * (topologies/README.md), so a generated file can be kept, read and edited.
 *
 *   2-tier Clos (zones = 0): `spines` ctsw spine0.., `leaves` rtsw leaf0..,
 *     `hosts` hosts per leaf h0.. (h0..h(H-1) on leaf0); every leaf linked to
 *     every spine. With every other setting left at its default the result
 *     is topo_clos()'s.
 *   AI zones (zones >= 1): per zone z, rtsw zZ-leafL, ctsw zZ-spineS and hosts
 *     zZ-hI (I counts over the zone's leaves), every leaf of a zone linked to
 *     every spine of that zone; `atsw` aggregation switches agg0.. joining
 *     the zones, every spine linked to every ATSW. Between zones the path is
 *     leaf -> spine -> ATSW -> spine -> leaf, an ECMP group at every tier.
 *
 * Link tiers: host (host-leaf), leaf (leaf-spine), spine (spine-ATSW). A tier
 * takes a rate and a delay; the leaf and spine tiers' rate can instead be
 * derived from an oversubscription ratio, the capacity below a switch over
 * its capacity above:
 *   leaf:  hosts x host rate   / (spines x leaf-links x leaf rate)
 *   spine: leaves x leaf rate  / (atsw x spine rate)
 * Meta's AI zones are not oversubscribed within a zone and 1:7 between
 * zones: spine-oversub=7.
 *
 * leaf-links=K puts K parallel links between every leaf and every spine of
 * its zone (the first named "LEAF-SPINE" as any link, the others
 * "LEAF-SPINE-bK"): K x the uplinks and K x the uplink capacity with the same
 * spines, every one a member of the leaf's ECMP group towards other leaves.
 *
 * Servers of GPUs (servers=N, gpus=G, layout=meta|rail): N servers per zone
 * (all of them for a Clos) of G GPUs, each GPU an emulated host sK-gI (zZ-
 * in zones) with `server: sK, gpu: I`, every server's GPUs in a row in the
 * file. The layout sets the leaves and hosts per leaf:
 *   meta: Meta's RTSWs serve 2 Grand Teton servers each (docs/FACTS-NCCL-
 *     RNIC.md): ceil(N/2) leaves; server 2L on leaf L ports 0..G-1 (GPU I on
 *     port I), server 2L+1 on ports G..2G-1 (GPU I on port G+I).
 *   rail: rail-optimised: G leaves, GPU I of every server on leaf I, server K
 *     on port K (its NICs reach each other's rails only through the spines).
 *
 * No DPDK, no clock. Errors are negative errno values with a message in err.
 */
#ifndef TOPO_GEN_H
#define TOPO_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "topo.h"

/* Largest spines per zone (or per Clos) and aggregation switches. */
#define TOPO_GEN_MAX_SPINES 1024
#define TOPO_GEN_MAX_ATSW 1024

/* A link tier's settings; 0 means "not given" (the file default applies). */
struct topo_gen_tier {
	uint64_t rate_bps;
	uint64_t delay_ns;
	bool has_delay; /* a delay of 0 is a value */
	double oversub; /* leaf and spine tiers: derive rate_bps from it; 0: not given */
};

enum topo_gen_tier_id { TOPO_GEN_HOST, TOPO_GEN_LEAF, TOPO_GEN_SPINE, TOPO_GEN_TIERS };

enum topo_gen_layout { TOPO_GEN_LAYOUT_META, TOPO_GEN_LAYOUT_RAIL };

/* Meta's layout: 2 servers (16 GPUs) per RTSW (docs/explanation/FACTS-NCCL-RNIC.md). */
#define TOPO_GEN_SERVERS_PER_LEAF 2
/* GPUs per server unless gpus= says: Grand Teton's 8 H100s. */
#define TOPO_GEN_DEFAULT_GPUS 8

struct topo_gen_params {
	char name[TOPO_NAME_MAX];   /* "" : clos-SxLxH or ai-zZ-lL-sS-aA-hH */
	unsigned zones;             /* 0: a 2-tier Clos; >= 1: AI zones */
	unsigned leaves;            /* per zone (all of them for a Clos) */
	unsigned spines;            /* per zone */
	unsigned atsw;              /* aggregation switches (AI zones only) */
	unsigned hosts;             /* per leaf */
	unsigned leaf_links;        /* parallel links per leaf-spine pair; 0: 1 */
	struct topo_gen_tier tier[TOPO_GEN_TIERS];
	int attach;                 /* enum topo_attach, -1: the default (veth) */
	uint32_t host_mtu;          /* 0: the default */
	int profile;                /* enum rl_hash_profile for every switch, -1: default */
	int lb;                     /* enum topo_lb for every switch, -1: default */
	unsigned servers;           /* servers of GPUs per zone; 0: plain hosts */
	unsigned gpus;              /* GPUs per server; 0: TOPO_GEN_DEFAULT_GPUS */
	int layout;                 /* enum topo_gen_layout, -1: meta */
};

/* Everything unset: no counts, default rates, attach, profile and lb. */
void topo_gen_init(struct topo_gen_params *p);

/*
 * Add "key=value,key=value..." to p. Keys: zones, leaves, spines, atsw,
 * hosts, leaf-links (1..16), host-rate, leaf-rate, spine-rate, host-delay, leaf-delay,
 * spine-delay, leaf-oversub, spine-oversub (a number >= 1, "7", "2.5", or a
 * ratio "7:1" / "1:7", either way round: the larger side is below), attach
 * (veth, vhost, emulated, net_null), host-mtu, profile, lb, name, servers
 * (1..8192), gpus (1..253), layout (meta, rail). Rates and
 * delays as in the topology file. Returns 0, or -EINVAL with
 * "bad key=value 'PAIR': what is wrong" in err.
 */
int topo_gen_parse(struct topo_gen_params *p, const char *spec, char *err, size_t errlen);

/*
 * Check p (counts within the address scheme and port limits, a tier's rate
 * and oversubscription not both given, atsw only with zones; with servers:
 * no leaves or hosts other than the layout's, attach emulated, the servers
 * of a leaf within its 253 host ports) and fill in the derived rates,
 * leaves and hosts and the default name. Calling it again is harmless.
 * Returns 0, or -EINVAL with the reason in err.
 */
int topo_gen_resolve(struct topo_gen_params *p, char *err, size_t errlen);

/*
 * Write p (resolved by topo_gen_resolve()) as a topology file to out; comment
 * is written as the file's first comment line when not NULL. Returns 0, or
 * -EIO when writing fails.
 */
int topo_gen_write(const struct topo_gen_params *p, const char *comment, FILE *out);

/*
 * Resolve p and load the generated topology. Returns it (free with
 * topo_free()), or NULL with err filled ("<NAME>: ..." or the resolve error).
 */
struct topo *topo_gen(struct topo_gen_params *p, char *err, size_t errlen);

#endif /* TOPO_GEN_H */
