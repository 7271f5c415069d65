/* SPDX-License-Identifier: BSD-3-Clause */
/* nc_nvlink: NVLink and GPU-to-NIC PCIe transfer times (see nc_nvlink.h). */
#include "nc_nvlink.h"

#include <errno.h>
#include <stddef.h>

void nc_nvlink_params_h100(struct nc_nvlink_params *p)
{
	p->nvlink_Bps = NC_NVLINK_H100_BPS;
	p->nvlink_lat_ns = NC_NVLINK_H100_LAT_NS;
	p->pcie_Bps = NC_PCIE_GEN5_X16_BPS;
	p->pcie_lat_ns = 0;
}

/* ceil(bytes * 1e9 / Bps) + lat_ns, in 128 bits so that no size overflows
 * before the final check. */
static int xfer(uint64_t Bps, uint64_t lat_ns, uint64_t bytes, uint64_t *ns)
{
	if (Bps == 0 || ns == NULL)
		return -EINVAL;
	unsigned __int128 num = (unsigned __int128)bytes * 1000000000u;
	unsigned __int128 t = (num + Bps - 1) / Bps + lat_ns;
	if (t > UINT64_MAX)
		return -ERANGE;
	*ns = (uint64_t)t;
	return 0;
}

int nc_nvlink_xfer_ns(const struct nc_nvlink_params *p, uint64_t bytes, uint64_t *ns)
{
	if (p == NULL)
		return -EINVAL;
	return xfer(p->nvlink_Bps, p->nvlink_lat_ns, bytes, ns);
}

uint64_t nc_nvlink_gpu_nic_Bps(const struct nc_nvlink_params *p, uint64_t nic_Bps)
{
	if (p == NULL)
		return 0;
	return p->pcie_Bps < nic_Bps ? p->pcie_Bps : nic_Bps;
}

int nc_nvlink_pcie_ns(const struct nc_nvlink_params *p, uint64_t nic_Bps, uint64_t bytes,
		      uint64_t *ns)
{
	if (p == NULL)
		return -EINVAL;
	return xfer(nc_nvlink_gpu_nic_Bps(p, nic_Bps), p->pcie_lat_ns, bytes, ns);
}
