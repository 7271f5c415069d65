/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pfc_pause: the pause state of one egress port, per priority, as a MAC
 * keeps it when it receives PFC frames from its link partner.
 *
 * A received XOFF (enable bit set, time > 0) pauses that priority from the
 * frame's arrival until arrival + time quanta at this link's rate. A later
 * XOFF replaces the timer (802.1Qbb restarts it with the new value, which is
 * how a partner keeps a priority paused: it refreshes before expiry). An XON
 * (enable bit set, time 0) ends the pause at once. A frame that was being
 * sent when the pause arrived is finished by the caller; this module only
 * answers "may a new frame of priority p start at now_ns".
 *
 * One struct per port, owned by the caller; every call takes now_ns.
 * Times are absolute nanoseconds on the caller's clock.
 */
#ifndef PFC_PAUSE_H
#define PFC_PAUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pfc_frame.h"

struct pfc_pause {
	uint64_t rate_bps;                        /* link rate: quanta -> ns */
	uint64_t until_ns[PFC_NUM_PRIO];          /* paused while now < until_ns */
	uint64_t any_until_ns;                    /* >= every until_ns[]: nothing is paused from then on */
	uint64_t start_ns[PFC_NUM_PRIO];          /* start of the current/last pause */
	uint64_t paused_ns[PFC_NUM_PRIO];         /* closed pause intervals, summed */
	uint64_t last_xoff_ns[PFC_NUM_PRIO];      /* arrival of the last XOFF */
	uint64_t xoff_rx[PFC_NUM_PRIO];           /* XOFF (time > 0) received */
	uint64_t xon_rx[PFC_NUM_PRIO];            /* XON (time 0) received */
	struct pfc_frame_stats rx;                /* frames accepted / rejected by reason */
	uint16_t cache_quanta;                    /* last quanta converted ... */
	uint64_t cache_ns;                        /* ... and its duration (saves a division) */
};

/*
 * Reset ps for a link of rate_bps. Returns 0, or -EINVAL with a message in err
 * (when err is non-NULL and errlen > 0) when rate_bps is 0.
 */
int pfc_pause_init(struct pfc_pause *ps, uint64_t rate_bps, char *err, size_t errlen);

/*
 * A frame of len bytes was received at now_ns: decode it, count the result in
 * ps->rx, and apply it when valid. Returns PFC_FRAME_OK or the reason the
 * frame was rejected (the pause state is then unchanged).
 */
enum pfc_frame_err pfc_pause_rx(struct pfc_pause *ps, const uint8_t *buf, size_t len,
				uint64_t now_ns);

/* Apply an already decoded frame received at now_ns (no counting of ps->rx). */
void pfc_pause_apply(struct pfc_pause *ps, const struct pfc_frame *f, uint64_t now_ns);

/* True when priority prio may start a frame at now_ns (not paused). prio > 7: true. */
bool pfc_pause_may_send(const struct pfc_pause *ps, unsigned prio, uint64_t now_ns);

/* Bit n set when priority n is paused at now_ns. */
uint8_t pfc_pause_mask(const struct pfc_pause *ps, uint64_t now_ns);

/*
 * When the pause of prio ends (or ended): the time it may send again. Values
 * <= now_ns mean "not paused". Returns 0 when prio never was paused or prio > 7.
 */
uint64_t pfc_pause_expiry_ns(const struct pfc_pause *ps, unsigned prio);

/* Earliest expiry among priorities paused at now_ns; UINT64_MAX when none is. */
uint64_t pfc_pause_next_expiry_ns(const struct pfc_pause *ps, uint64_t now_ns);

/* Total time prio has been paused up to now_ns (closed and current pauses). */
uint64_t pfc_pause_paused_ns(const struct pfc_pause *ps, unsigned prio, uint64_t now_ns);

#endif /* PFC_PAUSE_H */
