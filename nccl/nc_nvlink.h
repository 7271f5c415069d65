/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nc_nvlink: the intra-server transfer model. A transfer of N bytes
 * between two GPUs of one server takes
 *     ceil(N * 1e9 / nvlink_Bps) + nvlink_lat_ns   (ns, integer)
 * rounded up: the transfer is not over until its last byte is. The GPU's
 * whole NVLink bandwidth serves one peer (NVSwitch: every link goes to the
 * switch, any peer gets all of them). A transfer between a GPU and its NIC
 * over PCIe runs at min(pcie_Bps, nic_Bps) with the same rounding, plus
 * pcie_lat_ns.
 *
 * H100 SXM defaults (nc_nvlink_params_h100):
 *  - NVLink 4: 18 links x 25 GB/s per direction = 450 GB/s per GPU per
 *    direction (NVIDIA H100 Tensor Core GPU Architecture whitepaper, 2022,
 *    "fourth-generation NVLink": 18 links, 900 GB/s total bidirectional;
 *    H100 datasheet: NVLink 900 GB/s).
 *  - NVLink latency 600 ns: the per-hop NVLink latency NCCL's own tuner
 *    assumes for its lowest-latency protocol (NCCL 2.21.5 tuning.cc,
 *    hwLat[NCCL_HW_NVLINK] Ring/Tree LL = 0.6 us). NVIDIA publishes no
 *    hardware figure; this is a software-visible hop.
 *  - PCIe Gen5 x16: 32 GT/s x 16 lanes x 128/130 (128b/130b encoding) / 8
 *    = 63,015,384,615 B/s per direction (PCI-SIG PCI Express Base
 *    Specification 5.0); TLP/DLLP overhead not deducted. NCCL's own model
 *    of that link is 48 GB/s (topo.cc: 16 x 240 / 80); set pcie_Bps to
 *    48e9 to follow NCCL instead.
 *  - PCIe latency 0: not modelled unless set.
 */
#ifndef NC_NVLINK_H
#define NC_NVLINK_H

#include <stdint.h>

struct nc_nvlink_params {
	uint64_t nvlink_Bps;   /* per GPU per direction, bytes/s, > 0 */
	uint64_t nvlink_lat_ns;
	uint64_t pcie_Bps;     /* GPU <-> NIC PCIe, per direction, bytes/s, > 0 */
	uint64_t pcie_lat_ns;
};

#define NC_NVLINK_H100_BPS 450000000000ull  /* 18 x 25 GB/s */
#define NC_NVLINK_H100_LAT_NS 600ull
#define NC_PCIE_GEN5_X16_BPS 63015384615ull  /* floor(32e9 x 16 x 128 / 130 / 8) */

/* Fills p with the H100 defaults above. */
void nc_nvlink_params_h100(struct nc_nvlink_params *p);

/* Time of bytes between two GPUs of one server into *ns; 0, or -EINVAL
 * (p or ns NULL, bandwidth 0) or -ERANGE (the result overflows 64 bits). */
int nc_nvlink_xfer_ns(const struct nc_nvlink_params *p, uint64_t bytes, uint64_t *ns);

/* The rate a GPU feeds its NIC: min(pcie_Bps, nic_Bps); 0 when p is NULL
 * or either rate is 0. */
uint64_t nc_nvlink_gpu_nic_Bps(const struct nc_nvlink_params *p, uint64_t nic_Bps);

/* Time of bytes from a GPU through PCIe to a NIC of nic_Bps into *ns; 0,
 * -EINVAL or -ERANGE as nc_nvlink_xfer_ns. */
int nc_nvlink_pcie_ns(const struct nc_nvlink_params *p, uint64_t nic_Bps, uint64_t bytes,
		      uint64_t *ns);

#endif /* NC_NVLINK_H */
