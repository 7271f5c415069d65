/* SPDX-License-Identifier: BSD-3-Clause */
/* NVLink and GPU-to-NIC PCIe transfer times: size / bandwidth + latency, rounded up. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "nc_nvlink.h"

static uint64_t xfer(const struct nc_nvlink_params *p, uint64_t bytes)
{
	uint64_t ns = 0;

	assert_int_equal(nc_nvlink_xfer_ns(p, bytes, &ns), 0);
	return ns;
}

/* 450 GB/s: 450 bytes a ns; plus 600 ns. */
static void test_nvlink_two_gpus(void **state)
{
	(void)state;
	struct nc_nvlink_params p;

	nc_nvlink_params_h100(&p);
	assert_int_equal(xfer(&p, 0), 600);
	assert_int_equal(xfer(&p, 450), 601);           /* exactly 1 ns */
	assert_int_equal(xfer(&p, 451), 602);           /* 1.002 ns -> 2 */
	assert_int_equal(xfer(&p, 450000000), 1000600); /* 450 MB: 1 ms */
	/* 1 MiB: 1048576 / 450 = 2330.17 ns -> 2331 */
	assert_int_equal(xfer(&p, 1048576), 2931);
	/* 256 MiB: 268435456 / 450 = 596523.24 -> 596524 */
	assert_int_equal(xfer(&p, 268435456), 597124);
}

/* Another link: 100 GB/s, 1 us. */
static void test_nvlink_params(void **state)
{
	(void)state;
	struct nc_nvlink_params p = { .nvlink_Bps = 100000000000ull, .nvlink_lat_ns = 1000 };

	assert_int_equal(xfer(&p, 1000), 1010);
	assert_int_equal(xfer(&p, 1001), 1011); /* 10.01 -> 11 */
}

/* PCIe Gen5 x16 (63.0 GB/s) against a 400G NIC (50 GB/s): the NIC limits;
 * with NCCL's 48 GB/s for the PCIe link, PCIe does. */
static void test_pcie_limit(void **state)
{
	(void)state;
	struct nc_nvlink_params p;
	uint64_t ns = 0;

	nc_nvlink_params_h100(&p);
	assert_int_equal(nc_nvlink_gpu_nic_Bps(&p, 50000000000ull), 50000000000ull);
	/* 1 MiB at 50 GB/s: 20971.52 -> 20972 */
	assert_int_equal(nc_nvlink_pcie_ns(&p, 50000000000ull, 1048576, &ns), 0);
	assert_int_equal(ns, 20972);
	/* 800G NIC: PCIe limits, 1 MiB x 1e9 / 63015384615 = 16640.0000001 -> 16641 */
	assert_int_equal(nc_nvlink_gpu_nic_Bps(&p, 100000000000ull), 63015384615ull);
	assert_int_equal(nc_nvlink_pcie_ns(&p, 100000000000ull, 1048576, &ns), 0);
	assert_int_equal(ns, 16641);
	p.pcie_Bps = 48000000000ull;
	p.pcie_lat_ns = 100;
	/* 1 MiB / 48 = 21845.33 -> 21846, + 100 */
	assert_int_equal(nc_nvlink_pcie_ns(&p, 50000000000ull, 1048576, &ns), 0);
	assert_int_equal(ns, 21946);
}

static void test_nvlink_bad_input(void **state)
{
	(void)state;
	struct nc_nvlink_params p = { .nvlink_Bps = 0 };
	uint64_t ns;

	assert_int_equal(nc_nvlink_xfer_ns(&p, 1, &ns), -EINVAL);
	assert_int_equal(nc_nvlink_xfer_ns(NULL, 1, &ns), -EINVAL);
	nc_nvlink_params_h100(&p);
	assert_int_equal(nc_nvlink_xfer_ns(&p, 1, NULL), -EINVAL);
	assert_int_equal(nc_nvlink_pcie_ns(&p, 0, 1, &ns), -EINVAL);
	assert_int_equal(nc_nvlink_gpu_nic_Bps(NULL, 1), 0);
	/* UINT64_MAX bytes at 1 B/s: 1.8e28 ns does not fit */
	p.nvlink_Bps = 1;
	assert_int_equal(nc_nvlink_xfer_ns(&p, UINT64_MAX, &ns), -ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvlink_two_gpus),
		cmocka_unit_test(test_nvlink_params),
		cmocka_unit_test(test_pcie_limit),
		cmocka_unit_test(test_nvlink_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
