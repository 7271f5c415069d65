/* SPDX-License-Identifier: BSD-3-Clause */
#include "rl_icrc.h"

#include <errno.h>
#include <string.h>

#include "rl_bytes.h"
#include "rl_crc.h"

/*
 * The register after the eight 0xff bytes that stand for the LRH (RoCEv2 has
 * none): the same for every frame, so computed once before main(), after
 * the CRC tables it goes through.
 */
static uint32_t lrh_crc;

__attribute__((constructor(RL_CRC_CTOR_PRIO + 1))) static void lrh_crc_init(void) /* after the tables */
{
	static const uint8_t lrh_ones[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	lrh_crc = rl_crc32_update(0xffffffffu, lrh_ones, sizeof(lrh_ones));
}

/* CRC register over the masked LRH/IP/UDP/BTH part (everything before the BTH's end). */
static uint32_t icrc_headers(const uint8_t *frame, const struct rl_pkt *pkt)
{
	/* Masked copies of the variant headers: the IP header (IPv4 with options
	 * is the longest: 60 bytes, IPv6 is 40), UDP and BTH. */
	uint8_t hdr[RL_IPV4_HDR_MAX + RL_UDP_HDR_LEN + RL_BTH_LEN];
	_Static_assert(RL_IPV4_HDR_MAX >= RL_IPV6_HDR_LEN, "hdr holds either IP header");

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
	memcpy(hdr + n, frame + pkt->l4_off, RL_UDP_HDR_LEN);
	hdr[n + 6] = hdr[n + 7] = 0xff; /* UDP checksum */
	n += RL_UDP_HDR_LEN;
	memcpy(hdr + n, frame + pkt->bth_off, RL_BTH_LEN);
	hdr[n + RL_BTH_QPN_OFF] = 0xff; /* BTH reserved byte (FECN/BECN live here) */
	n += RL_BTH_LEN;

	return rl_crc32_update(lrh_crc, hdr, n);
}

uint32_t rl_icrc_compute(const uint8_t *frame, const struct rl_pkt *pkt, bool *ok)
{
	if (ok)
		*ok = pkt->is_roce;
	if (!pkt->is_roce)
		return 0;

	uint32_t crc = icrc_headers(frame, pkt);
	uint32_t rest = pkt->bth_off + RL_BTH_LEN;
	crc = rl_crc32_update(crc, frame + rest, pkt->icrc_off - rest);
	return ~crc;
}

int rl_icrc_compute_zeros(const uint8_t *frame, const struct rl_pkt *pkt, size_t zero_off,
			  uint32_t *crc_out)
{
	uint32_t rest = pkt->bth_off + RL_BTH_LEN;

	if (!pkt->is_roce)
		return -EINVAL;
	if (zero_off < rest || zero_off > pkt->icrc_off)
		return -ERANGE;
	uint32_t crc = icrc_headers(frame, pkt);
	crc = rl_crc32_update(crc, frame + rest, zero_off - rest);
	*crc_out = ~rl_crc32_zeros(crc, pkt->icrc_off - zero_off);
	return 0;
}

bool rl_icrc_verify(const uint8_t *frame, const struct rl_pkt *pkt)
{
	bool ok;
	uint32_t crc = rl_icrc_compute(frame, pkt, &ok);

	return ok && crc == rl_pkt_icrc_wire(frame, pkt);
}

int rl_icrc_store(uint8_t *frame, const struct rl_pkt *pkt)
{
	bool ok;
	uint32_t crc = rl_icrc_compute(frame, pkt, &ok);

	if (!ok)
		return -EINVAL;
	rl_put_le32(frame + pkt->icrc_off, crc);
	return 0;
}
