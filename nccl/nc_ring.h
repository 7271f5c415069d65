/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nc_ring: NCCL's ring order over servers of G GPUs, one RNIC per GPU
 * (rail-matched: GPU g and NIC g share a PCIe switch), GPUs joined by an
 * NVSwitch. Ranks are numbered server-major: rank = server * G + gpu.
 *
 * The rule (NCCL 2.21.5, read from src/graph/search.cc, paths.cc,
 * connect.cc; nothing copied), for the search channel k = channel mod G:
 *  - ncclTopoSearchRecNet starts search channel k at NIC (k mod nNets)
 *    (nets[(nChannels + i) % netCount], i = 0 first), and from a NIC tries
 *    the GPU closest to it first: GPU k.
 *  - ncclTopoSearchNextGpuSort on an NVSwitch system offers only the two
 *    neighbours of GPU a, and for the ring pattern puts the previous one
 *    (a - 1) first, so the ring inside a server is k, k-1, ..., k+1 (mod G).
 *  - The last GPU (k+1) returns to the network. No GPU path to another GPU's
 *    NIC is PIX, so the search relaxes typeInter up to PATH_PXN before it
 *    tries crossNic (ncclTopoCompute's order), and the way out is NIC k
 *    through GPU k: PXN (paths.cc, "PXN = PCI + NVLink"): GPU k+1 writes
 *    the data over NVLink to GPU k, whose proxy sends it on NIC k.
 *  - connect.cc connectRings joins servers in server order: the last GPU
 *    of server s sends to the first GPU of server s+1 (mod S). The
 *    channel enters and leaves every server through NIC k: it stays on
 *    rail k (ncclTopoGetNetDev: inter[2k] in, inter[2k+1] out, both NIC k).
 *  - The search finds G channels (one per NIC: a 48 GB/s channel leaves
 *    no room on a 50 GB/s NIC for a second one) and ncclTopoPostset
 *    duplicates them: runtime channel c uses search channel c mod G
 *    (16 channels on 8 x H100, 2 per NIC: NVIDIA/nccl issue #1453).
 * With one server (S = 1) the ring closes over NVLink (k+1 -> k); NCCL's
 * own single-server search (PCI order first) is not modelled.
 *
 * No DPDK, no clock, no allocation.
 */
#ifndef NC_RING_H
#define NC_RING_H

#include <stdint.h>

#define NC_RING_MAX_GPUS 64u      /* GPUs per server (NCCL_TOPO_MAX_NODES) */
#define NC_RING_MAX_CHANNELS 64u  /* MAXCHANNELS in NCCL 2.21 */

struct nc_ring_cfg {
	uint32_t servers;  /* >= 1 */
	uint32_t gpus;     /* GPUs (and NICs) per server, 1..NC_RING_MAX_GPUS */
	uint32_t channels; /* runtime channels, 1..NC_RING_MAX_CHANNELS */
};

/* One network hop of a channel: from server src_server to the next. */
struct nc_ring_hop {
	uint32_t src_server;
	uint32_t src_gpu;     /* last GPU of the ring in src_server (sender) */
	uint32_t out_nic_gpu; /* GPU whose NIC sends (PXN proxy when != src_gpu) */
	uint32_t dst_server;
	uint32_t dst_gpu;     /* first GPU of the ring in dst_server (receiver) */
	uint32_t in_nic_gpu;  /* GPU whose NIC receives (== dst_gpu) */
};

/* 0 when cfg is valid, -EINVAL otherwise. */
int nc_ring_check(const struct nc_ring_cfg *cfg);

/* The NIC (index = its GPU in the server) channel uses to leave and to
 * enter every server; -EINVAL for a bad cfg or channel. */
int nc_ring_nic(const struct nc_ring_cfg *cfg, uint32_t channel);

/* The GPU at position pos (0 = first, entered from the network) of the
 * channel's order inside a server; -EINVAL for bad arguments. */
int nc_ring_gpu_at(const struct nc_ring_cfg *cfg, uint32_t channel, uint32_t pos);

/* The rank after / before rank on channel's ring; -EINVAL for a bad cfg,
 * channel or rank (rank >= servers * gpus). */
int nc_ring_next(const struct nc_ring_cfg *cfg, uint32_t channel, uint32_t rank);
int nc_ring_prev(const struct nc_ring_cfg *cfg, uint32_t channel, uint32_t rank);

/* The network hop of channel that leaves server into *hop; 0, or -EINVAL
 * for bad arguments or a single server (no network hop). */
int nc_ring_net_hop(const struct nc_ring_cfg *cfg, uint32_t channel, uint32_t server,
		    struct nc_ring_hop *hop);

#endif /* NC_RING_H */
