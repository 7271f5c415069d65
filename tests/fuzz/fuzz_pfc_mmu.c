/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for PFC frames into the switch buffer model (pfc/): the
 * input is a script of steps on a 4-port MMU with a pause state per port.
 *   0x00-0x3f  a received frame: the next 64 bytes (or what is left) go to
 *              pfc_pause_rx() of port (op & 3); its pause state must stay
 *              consistent (no priority paused past its expiry)
 *   0x40-0x7f  admit a packet: length, ports and priority from the next 4 bytes
 *   0x80-0xbf  dequeue the oldest admitted packet
 *   0xc0-0xff  time moves on (op & 0x3f) us, and port (op & 3) builds its
 *              PFC frame, which must encode and decode back to itself
 * At the end every admitted packet leaves: the buffer holds nothing and no
 * release exceeded what was held.
 * Built with -Dfuzz=true under clang; run by scripts/fuzz.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "pfc_frame.h"
#include "pfc_mmu.h"
#include "pfc_pause.h"

#define PORTS 4
#define MAX_HELD 4096
#define RATE_BPS 100000000000ull
#define FRAME_BYTES 64
#define NS_PER_US 1000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct state {
	struct pfc_mmu *mmu;
	struct pfc_pause pause[PORTS];
	struct pfc_mmu_pkt held[MAX_HELD];
	size_t head, n;
	uint64_t now;
};

static void rx_frame(struct state *s, unsigned port, const uint8_t *d, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1); /* exact size: ASan sees an overread */

	memcpy(copy, d, len);
	(void)pfc_pause_rx(&s->pause[port], copy, len, s->now);
	free(copy);
	for (unsigned p = 0; p < PFC_NUM_PRIO; p++)
		if (!pfc_pause_may_send(&s->pause[port], p, s->now) &&
		    pfc_pause_expiry_ns(&s->pause[port], p) <= s->now)
			abort(); /* paused, yet its pause is over */
}

static void admit(struct state *s, const uint8_t b[4])
{
	struct pfc_mmu_pkt pkt = {.len = 64u + (uint32_t)b[0] * 36u, .in_port = b[1] % PORTS,
				  .out_port = b[2] % PORTS, .prio = b[3] % PFC_NUM_PRIO,
				  .ect = (b[3] & 0x80) != 0};
	unsigned flags;

	if (s->n == MAX_HELD)
		return;
	if (pfc_mmu_admit(s->mmu, &pkt, s->now, &flags) == PFC_MMU_ADMIT)
		s->held[(s->head + s->n++) % MAX_HELD] = pkt;
}

static void dequeue(struct state *s)
{
	if (s->n == 0)
		return;
	(void)pfc_mmu_dequeue(s->mmu, &s->held[s->head], s->now);
	s->head = (s->head + 1) % MAX_HELD;
	s->n--;
}

static void pfc_out(struct state *s, unsigned port)
{
	struct pfc_frame f, back;
	uint8_t buf[PFC_FRAME_LEN];

	if (pfc_mmu_pfc_frame(s->mmu, port, s->now, &f) == 0)
		return;
	if (pfc_frame_encode(&f, buf, sizeof(buf)) != PFC_FRAME_LEN ||
	    pfc_frame_decode(buf, sizeof(buf), &back) != PFC_FRAME_OK || back.enable != f.enable ||
	    memcmp(back.time, f.time, sizeof(f.time)) != 0)
		abort(); /* what the MMU sends is a frame a peer reads back */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct state s;
	struct pfc_mmu_config cfg;
	char err[256];
	size_t i = 0;

	memset(&s, 0, sizeof(s));
	pfc_mmu_config_init(&cfg, NULL, PORTS, NULL);
	if ((s.mmu = pfc_mmu_create(&cfg, err, sizeof(err))) == NULL)
		abort();
	for (unsigned p = 0; p < PORTS; p++)
		if (pfc_pause_init(&s.pause[p], RATE_BPS, err, sizeof(err)) < 0)
			abort();
	while (i < size) {
		uint8_t op = data[i++];
		size_t left = size - i;
		if (op < 0x40) {
			size_t n = left < FRAME_BYTES ? left : FRAME_BYTES;
			rx_frame(&s, op & 3, data + i, n);
			i += n;
		} else if (op < 0x80) {
			if (left < 4)
				break;
			admit(&s, data + i);
			i += 4;
		} else if (op < 0xc0) {
			dequeue(&s);
		} else {
			s.now += (uint64_t)(op & 0x3f) * NS_PER_US;
			pfc_out(&s, op & 3);
		}
	}
	while (s.n)
		dequeue(&s);
	const struct pfc_mmu_stats *st = pfc_mmu_stats(s.mmu);
	if (st->bytes != 0 || st->underflows != 0)
		abort(); /* every byte admitted was released, none twice */
	pfc_mmu_destroy(s.mmu);
	return 0;
}
