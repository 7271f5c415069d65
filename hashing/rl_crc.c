/* SPDX-License-Identifier: BSD-3-Clause */
#include "rl_crc.h"

#include <isa-l/crc.h>
#include <stdbool.h>

#define CRC32_POLY 0xEDB88320u   /* reflected IEEE 802.3 */
#define CRC32C_POLY 0x82F63B78u  /* reflected Castagnoli */
#define CRC32_ONE 0x80000000u    /* the polynomial 1 in reflected bit order */
#define CRC32_X8 0x00800000u     /* x^8 in reflected bit order */
#define CRC32_LOG_TERMS 64       /* x^(2^k) for every bit of a size_t */

/*
 * The tables are constant after load: a constructor fills them once before
 * main(), so lookups need no lazy-init check on the fast path and are safe
 * from any thread. It runs first (priority RL_CRC_CTOR_PRIO): other
 * constructors, such as rl_icrc.c's, may compute CRCs through the tables.
 */
static uint32_t crc32_table[8][256]; /* slice-by-8: [k][b] = CRC of b followed by k zero bytes */
static uint32_t crc32c_table[256];
static uint16_t crc16_table[256];
/* x^(8n) mod P for n = 0..RL_CRC32_ZEROS_TABLE, and x^(2^k) mod P */
static uint32_t crc32_zeros_pow[RL_CRC32_ZEROS_TABLE + 1];
static uint32_t crc32_x2k[CRC32_LOG_TERMS];

/* a x b modulo the CRC-32 polynomial, both in reflected bit order. */
static uint32_t crc32_mulmod(uint32_t a, uint32_t b)
{
	uint32_t p = 0;

	for (uint32_t m = CRC32_ONE; m; m >>= 1) {
		if (a & m)
			p ^= b;
		b = (b & 1) ? (b >> 1) ^ CRC32_POLY : b >> 1;
	}
	return p;
}

static void crc32_zeros_init(void)
{
	crc32_x2k[0] = CRC32_ONE >> 1; /* x^1 */
	for (int k = 1; k < CRC32_LOG_TERMS; k++)
		crc32_x2k[k] = crc32_mulmod(crc32_x2k[k - 1], crc32_x2k[k - 1]);
	crc32_zeros_pow[0] = CRC32_ONE;
	for (uint32_t n = 1; n <= RL_CRC32_ZEROS_TABLE; n++)
		crc32_zeros_pow[n] = crc32_mulmod(crc32_zeros_pow[n - 1], CRC32_X8);
}

__attribute__((constructor(RL_CRC_CTOR_PRIO))) static void rl_crc_tables_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t a = i, c = i;
		uint16_t s = (uint16_t)(i << 8);

		for (int k = 0; k < 8; k++) {
			a = (a & 1) ? (a >> 1) ^ CRC32_POLY : a >> 1;
			c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
			s = (s & 0x8000) ? (uint16_t)((s << 1) ^ 0x1021u) : (uint16_t)(s << 1);
		}
		crc32_table[0][i] = a;
		crc32c_table[i] = c;
		crc16_table[i] = s;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			crc32_table[k][i] = (crc32_table[k - 1][i] >> 8) ^
					    crc32_table[0][crc32_table[k - 1][i] & 0xff];
	crc32_zeros_init();
}

/*
 * ISA-L's crc32_gzip_refl is zlib's crc32(): it inverts the register on entry
 * and exit. Inverting around it gives the raw register update.
 */
uint32_t rl_crc32_update_isal(uint32_t crc, const void *data, size_t len)
{
	return ~crc32_gzip_refl(~crc, data, len);
}

/*
 * Below RL_CRC32_SHORT bytes (an ECMP hash's 13-byte IPv4 5-tuple) the
 * tables win: ISA-L's call through its dispatcher and its folding set-up
 * cost more than two table steps (the ns-3 workload's loop 0.972x, 7
 * interleaved pairs). The ICRC's kilobytes go through the library.
 */
uint32_t rl_crc32_update(uint32_t crc, const void *data, size_t len)
{
	if (len < RL_CRC32_SHORT)
		return rl_crc32_update_sw(crc, data, len);
	return rl_crc32_update_isal(crc, data, len);
}

/*
 * Multiplying by a fixed x^(8n) is linear in crc: four byte tables make it
 * four lookups instead of crc32_mulmod's 32 steps. The same n comes back
 * packet after packet (every full-MTU payload), so a thread keeps the tables
 * of one n, built (1,024 products) once it has seen that n ZEROS_MAP_AFTER
 * times in a row: a mix of lengths never pays for building.
 */
#define ZEROS_MAP_AFTER 64u
static _Thread_local struct {
	size_t n;          /* the length whose tables t holds, if built */
	bool built;
	size_t cand;       /* the length seen last and how many times in a row */
	uint32_t cand_runs;
	uint32_t t[4][256];
} zeros_map;

static void zeros_map_build(size_t n)
{
	for (uint32_t k = 0; k < 4; k++)
		for (uint32_t b = 0; b < 256; b++)
			zeros_map.t[k][b] = crc32_mulmod(b << (8 * k), crc32_zeros_pow[n]);
	zeros_map.n = n;
	zeros_map.built = true;
}

/* crc x x^(8n) for n <= RL_CRC32_ZEROS_TABLE. */
static uint32_t zeros_short(uint32_t crc, size_t n)
{
	if (n == 0)
		return crc;
	if (!(zeros_map.built && zeros_map.n == n)) {
		if (zeros_map.cand != n) {
			zeros_map.cand = n;
			zeros_map.cand_runs = 0;
		}
		if (++zeros_map.cand_runs < ZEROS_MAP_AFTER)
			return crc32_mulmod(crc32_zeros_pow[n], crc);
		zeros_map_build(n);
	}
	return zeros_map.t[0][crc & 0xff] ^ zeros_map.t[1][(crc >> 8) & 0xff] ^
	       zeros_map.t[2][(crc >> 16) & 0xff] ^ zeros_map.t[3][crc >> 24];
}

uint32_t rl_crc32_zeros(uint32_t crc, size_t n)
{
	uint32_t pow = CRC32_ONE;

	if (n <= RL_CRC32_ZEROS_TABLE)
		return zeros_short(crc, n);
	/* x^(8n) = product of x^(2^k) over the set bits k of 8n */
	for (int k = 3; n && k < CRC32_LOG_TERMS; k++, n >>= 1)
		if (n & 1)
			pow = crc32_mulmod(pow, crc32_x2k[k]);
	return crc32_mulmod(pow, crc);
}

/*
 * Slice-by-8: eight bytes per step through eight tables, about 5x the
 * byte-at-a-time speed on the payloads the ICRC covers (KBs per packet).
 */
uint32_t rl_crc32_update_sw(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;
	const uint32_t (*t)[256] = crc32_table;

	while (len >= 8) {
		uint32_t a = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				    (uint32_t)p[3] << 24);
		uint32_t b = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
			     (uint32_t)p[7] << 24;

		crc = t[7][a & 0xff] ^ t[6][(a >> 8) & 0xff] ^ t[5][(a >> 16) & 0xff] ^ t[4][a >> 24] ^
		      t[3][b & 0xff] ^ t[2][(b >> 8) & 0xff] ^ t[1][(b >> 16) & 0xff] ^ t[0][b >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
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
