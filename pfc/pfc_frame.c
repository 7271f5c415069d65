/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "pfc_frame.h"

/* The frame's layout (802.1Qbb annex N.3), byte offsets. */
#define ADDR_LEN 6       /* a MAC address */
#define OFF_SRC 6
#define OFF_ETHERTYPE 12
#define OFF_OPCODE 14    /* MAC Control opcode */
#define OFF_ENABLE 16    /* priority-enable vector: 16 bits, the high byte reserved */
#define OFF_TIME 18      /* PFC_NUM_PRIO pause times of 16 bits */
_Static_assert(OFF_TIME + 2 * PFC_NUM_PRIO <= PFC_FRAME_LEN, "the times fit the frame");

const uint8_t pfc_dst_mac[ADDR_LEN] = { 0x01, 0x80, 0xC2, 0x00, 0x00, 0x01 };

static const char *const err_str[PFC_FRAME_ERR_COUNT] = {
	[PFC_FRAME_OK] = "ok",
	[PFC_FRAME_ERR_SHORT] = "short frame",
	[PFC_FRAME_ERR_ETHERTYPE] = "EtherType is not MAC Control (0x8808)",
	[PFC_FRAME_ERR_OPCODE] = "MAC Control opcode is not PFC (0x0101)",
	[PFC_FRAME_ERR_DST] = "destination is not 01:80:C2:00:00:01",
};

const char *pfc_frame_err_str(enum pfc_frame_err err)
{
	if ((unsigned)err >= PFC_FRAME_ERR_COUNT)
		return "unknown";
	return err_str[err];
}

void pfc_frame_init(struct pfc_frame *f, const uint8_t src[6])
{
	memset(f, 0, sizeof(*f));
	memcpy(f->dst, pfc_dst_mac, ADDR_LEN);
	if (src)
		memcpy(f->src, src, ADDR_LEN);
}

void pfc_frame_set(struct pfc_frame *f, unsigned prio, uint16_t quanta)
{
	if (prio >= PFC_NUM_PRIO)
		return;
	f->enable |= (uint8_t)(1u << prio);
	f->time[prio] = quanta;
}

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

size_t pfc_frame_encode(const struct pfc_frame *f, uint8_t *buf, size_t len)
{
	if (!buf || len < PFC_FRAME_LEN)
		return 0;
	memset(buf, 0, PFC_FRAME_LEN);
	memcpy(buf, pfc_dst_mac, ADDR_LEN);
	memcpy(buf + OFF_SRC, f->src, ADDR_LEN);
	put16(buf + OFF_ETHERTYPE, PFC_ETHERTYPE);
	put16(buf + OFF_OPCODE, PFC_OPCODE);
	put16(buf + OFF_ENABLE, f->enable);
	for (unsigned i = 0; i < PFC_NUM_PRIO; i++)
		put16(buf + OFF_TIME + 2 * i, f->time[i]);
	return PFC_FRAME_LEN;
}

enum pfc_frame_err pfc_frame_decode(const uint8_t *buf, size_t len, struct pfc_frame *out)
{
	if (!buf || len < PFC_FRAME_LEN)
		return PFC_FRAME_ERR_SHORT;
	if (get16(buf + OFF_ETHERTYPE) != PFC_ETHERTYPE)
		return PFC_FRAME_ERR_ETHERTYPE;
	if (get16(buf + OFF_OPCODE) != PFC_OPCODE)
		return PFC_FRAME_ERR_OPCODE;
	if (memcmp(buf, pfc_dst_mac, ADDR_LEN) != 0)
		return PFC_FRAME_ERR_DST;
	if (out) {
		memcpy(out->dst, buf, ADDR_LEN);
		memcpy(out->src, buf + OFF_SRC, ADDR_LEN);
		out->enable = buf[OFF_ENABLE + 1]; /* the high byte is reserved: ignored on receipt */
		for (unsigned i = 0; i < PFC_NUM_PRIO; i++)
			out->time[i] = get16(buf + OFF_TIME + 2 * i);
	}
	return PFC_FRAME_OK;
}

void pfc_frame_stats_count(struct pfc_frame_stats *st, enum pfc_frame_err err)
{
	if (!st)
		return;
	if (err == PFC_FRAME_OK)
		st->ok++;
	else if ((unsigned)err < PFC_FRAME_ERR_COUNT)
		st->err[err]++;
}

uint64_t pfc_quanta_to_ns(uint32_t quanta, uint64_t rate_bps)
{
	if (rate_bps == 0)
		return 0;
	uint64_t bits = (uint64_t)quanta * PFC_QUANTUM_BITS;
	/* Exact for every 16-bit quanta value (bits < 2^25, bits * 1e9 < 2^55);
	 * quanta beyond 36 million would overflow, so those go through double. */
	if (bits <= (UINT64_MAX - rate_bps) / 1000000000ull)
		return (bits * 1000000000ull + rate_bps - 1) / rate_bps;
	return (uint64_t)((double)bits * 1e9 / (double)rate_bps) + 1;
}

uint16_t pfc_ns_to_quanta(uint64_t ns, uint64_t rate_bps)
{
	if (ns == 0 || rate_bps == 0)
		return 0;
	if (ns >= pfc_quanta_to_ns(PFC_QUANTA_MAX, rate_bps))
		return PFC_QUANTA_MAX;
	/* Here ns < 65535 * 512e9 / rate, so ns * rate < 3.4e16: no overflow. */
	uint64_t bits_x1e9 = ns * rate_bps;
	uint64_t den = (uint64_t)PFC_QUANTUM_BITS * 1000000000ull;
	return (uint16_t)((bits_x1e9 + den - 1) / den);
}
