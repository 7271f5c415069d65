/* SPDX-License-Identifier: BSD-3-Clause */
#include "rl_icrc.h"

#include <string.h>

#include "rl_bytes.h"
#include "rl_crc.h"

uint32_t rl_icrc_compute(const uint8_t *frame, const struct rl_pkt *pkt, bool *ok)
{
	/* Masked copies of the variant headers: at most 40 (IPv6) + 8 + 12 bytes. */
	uint8_t hdr[40 + 8 + RL_BTH_LEN];
	static const uint8_t lrh_ones[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	if (ok)
		*ok = pkt->is_roce;
	if (!pkt->is_roce)
		return 0;

	size_t n = pkt->l3_len;
	memcpy(hdr, frame + pkt->l3_off, n);
	if (pkt->ip_version == 4) {
		hdr[1] = 0xff;                   /* TOS: DSCP and ECN */
		hdr[8] = 0xff;                   /* TTL */
		hdr[10] = hdr[11] = 0xff;        /* header checksum */
	} else {
		hdr[0] |= 0x0f;                  /* traffic class, high nibble */
		hdr[1] = hdr[2] = hdr[3] = 0xff; /* traffic class low nibble, flow label */
		hdr[7] = 0xff;                   /* hop limit */
	}
	memcpy(hdr + n, frame + pkt->l4_off, 8);
	hdr[n + 6] = hdr[n + 7] = 0xff; /* UDP checksum */
	n += 8;
	memcpy(hdr + n, frame + pkt->bth_off, RL_BTH_LEN);
	hdr[n + 4] = 0xff; /* BTH reserved byte (FECN/BECN live here) */
	n += RL_BTH_LEN;

	uint32_t crc = rl_crc32_update(0xffffffffu, lrh_ones, sizeof(lrh_ones));
	crc = rl_crc32_update(crc, hdr, n);
	uint32_t rest = pkt->bth_off + RL_BTH_LEN;
	crc = rl_crc32_update(crc, frame + rest, pkt->icrc_off - rest);
	return ~crc;
}

bool rl_icrc_verify(const uint8_t *frame, const struct rl_pkt *pkt)
{
	bool ok;
	uint32_t crc = rl_icrc_compute(frame, pkt, &ok);

	return ok && crc == pkt->icrc_wire;
}

int rl_icrc_store(uint8_t *frame, const struct rl_pkt *pkt)
{
	bool ok;
	uint32_t crc = rl_icrc_compute(frame, pkt, &ok);

	if (!ok)
		return -1;
	rl_put_le32(frame + pkt->icrc_off, crc);
	return 0;
}
