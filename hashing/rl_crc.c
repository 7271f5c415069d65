/* SPDX-License-Identifier: BSD-3-Clause */
#include "rl_crc.h"

/*
 * The tables are constant after load: a constructor fills them once before
 * main(), so lookups need no lazy-init check on the fast path and are safe
 * from any thread.
 */
static uint32_t crc32_table[256];
static uint32_t crc32c_table[256];
static uint16_t crc16_table[256];

__attribute__((constructor)) static void rl_crc_tables_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t a = i, c = i;
		uint16_t s = (uint16_t)(i << 8);

		for (int k = 0; k < 8; k++) {
			a = (a & 1) ? (a >> 1) ^ 0xEDB88320u : a >> 1;
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
			s = (s & 0x8000) ? (uint16_t)((s << 1) ^ 0x1021u) : (uint16_t)(s << 1);
		}
		crc32_table[i] = a;
		crc32c_table[i] = c;
		crc16_table[i] = s;
	}
}

uint32_t rl_crc32_update(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len--)
		crc = crc32_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

uint32_t rl_crc32c_update(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len--)
		crc = crc32c_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

uint16_t rl_crc16_ccitt_update(uint16_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len--)
		crc = (uint16_t)((crc << 8) ^ crc16_table[((crc >> 8) ^ *p++) & 0xff]);
	return crc;
}
