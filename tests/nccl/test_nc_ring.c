/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL's ring order through 2 servers x 8 GPUs and each channel's NIC. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "nc_ring.h"

/* Channel k inside a server: k, k-1, ..., k+1 (mod 8); the last GPU k+1
 * sends to the next server's GPU k. Worked out by hand. */
static void test_ring_order_channel0(void **state)
{
	(void)state;
	const struct nc_ring_cfg cfg = { .servers = 2, .gpus = 8, .channels = 8 };
	/* ring: 0 7 6 5 4 3 2 1 | 8 15 14 13 12 11 10 9 | back to 0 */
	static const int next[16] = { 7, 8, 1, 2, 3, 4, 5, 6, 15, 0, 9, 10, 11, 12, 13, 14 };
	static const int prev[16] = { 9, 2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8 };

	for (uint32_t r = 0; r < 16; r++) {
		assert_int_equal(nc_ring_next(&cfg, 0, r), next[r]);
		assert_int_equal(nc_ring_prev(&cfg, 0, r), prev[r]);
	}
	static const int order[8] = { 0, 7, 6, 5, 4, 3, 2, 1 };
	for (uint32_t p = 0; p < 8; p++)
		assert_int_equal(nc_ring_gpu_at(&cfg, 0, p), order[p]);
}

static void test_ring_order_channel3(void **state)
{
	(void)state;
	const struct nc_ring_cfg cfg = { .servers = 2, .gpus = 8, .channels = 4 };
	/* ring: 3 2 1 0 7 6 5 4 | 11 10 9 8 15 14 13 12 | back to 3 */
	static const int next[16] = { 7, 0, 1, 2, 11, 4, 5, 6, 15, 8, 9, 10, 3, 12, 13, 14 };
	static const int prev[16] = { 1, 2, 3, 12, 5, 6, 7, 0, 9, 10, 11, 4, 13, 14, 15, 8 };

	for (uint32_t r = 0; r < 16; r++) {
		assert_int_equal(nc_ring_next(&cfg, 3, r), next[r]);
		assert_int_equal(nc_ring_prev(&cfg, 3, r), prev[r]);
	}
}

/* 16 channels (NCCL's runtime count on 8 x H100): channel c on NIC c mod 8,
 * two channels per NIC; 4 channels use NICs 0..3. */
static void test_ring_nic_per_channel(void **state)
{
	(void)state;
	const struct nc_ring_cfg c16 = { .servers = 2, .gpus = 8, .channels = 16 };
	const struct nc_ring_cfg c4 = { .servers = 2, .gpus = 8, .channels = 4 };
	static const int nic16[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7 };

	for (uint32_t c = 0; c < 16; c++)
		assert_int_equal(nc_ring_nic(&c16, c), nic16[c]);
	for (uint32_t c = 0; c < 4; c++)
		assert_int_equal(nc_ring_nic(&c4, c), (int)c);
	/* channel 9 repeats channel 1: 1 0 7 6 5 4 3 2 */
	assert_int_equal(nc_ring_next(&c16, 9, 1), 0);
	assert_int_equal(nc_ring_next(&c16, 9, 2), 9);
}

/* The network hop: sender GPU k+1 hands over NVLink to GPU k's NIC (PXN),
 * received on the next server's NIC k by GPU k. */
static void test_ring_net_hops(void **state)
{
	(void)state;
	const struct nc_ring_cfg cfg = { .servers = 2, .gpus = 8, .channels = 8 };
	struct nc_ring_hop h;

	assert_int_equal(nc_ring_net_hop(&cfg, 0, 0, &h), 0);
	assert_int_equal(h.src_server, 0);
	assert_int_equal(h.src_gpu, 1);
	assert_int_equal(h.out_nic_gpu, 0);
	assert_int_equal(h.dst_server, 1);
	assert_int_equal(h.dst_gpu, 0);
	assert_int_equal(h.in_nic_gpu, 0);

	assert_int_equal(nc_ring_net_hop(&cfg, 7, 1, &h), 0);
	assert_int_equal(h.src_server, 1);
	assert_int_equal(h.src_gpu, 0);      /* 7 + 1 mod 8 */
	assert_int_equal(h.out_nic_gpu, 7);
	assert_int_equal(h.dst_server, 0);
	assert_int_equal(h.dst_gpu, 7);
	assert_int_equal(h.in_nic_gpu, 7);
}

/* 3 servers x 4 GPUs, channel 2: ring 2 1 0 3 | 6 5 4 7 | 10 9 8 11 */
static void test_ring_three_servers(void **state)
{
	(void)state;
	const struct nc_ring_cfg cfg = { .servers = 3, .gpus = 4, .channels = 4 };
	static const int next[12] = { 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 2 };

	for (uint32_t r = 0; r < 12; r++)
		assert_int_equal(nc_ring_next(&cfg, 2, r), next[r]);
}

static void test_ring_bad_input(void **state)
{
	(void)state;
	const struct nc_ring_cfg ok = { .servers = 2, .gpus = 8, .channels = 4 };
	const struct nc_ring_cfg one = { .servers = 1, .gpus = 8, .channels = 4 };
	const struct nc_ring_cfg zero_gpus = { .servers = 2, .gpus = 0, .channels = 4 };
	const struct nc_ring_cfg many_ch = { .servers = 2, .gpus = 8, .channels = 65 };
	struct nc_ring_hop h;

	assert_int_equal(nc_ring_check(NULL), -EINVAL);
	assert_int_equal(nc_ring_check(&zero_gpus), -EINVAL);
	assert_int_equal(nc_ring_check(&many_ch), -EINVAL);
	assert_int_equal(nc_ring_nic(&ok, 4), -EINVAL);
	assert_int_equal(nc_ring_next(&ok, 0, 16), -EINVAL);
	assert_int_equal(nc_ring_prev(&ok, 0, 16), -EINVAL);
	assert_int_equal(nc_ring_gpu_at(&ok, 0, 8), -EINVAL);
	assert_int_equal(nc_ring_net_hop(&ok, 0, 2, &h), -EINVAL);
	assert_int_equal(nc_ring_net_hop(&ok, 0, 0, NULL), -EINVAL);
	/* one server: no network hop; the ring closes over NVLink 1 -> 0 */
	assert_int_equal(nc_ring_net_hop(&one, 0, 0, &h), -EINVAL);
	assert_int_equal(nc_ring_next(&one, 0, 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_order_channel0),
		cmocka_unit_test(test_ring_order_channel3),
		cmocka_unit_test(test_ring_nic_per_channel),
		cmocka_unit_test(test_ring_net_hops),
		cmocka_unit_test(test_ring_three_servers),
		cmocka_unit_test(test_ring_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
