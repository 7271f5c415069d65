/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pfc_watchdog: PFC storm detection and mitigation for the egress queues of
 * one port, as SONiC's PFC watchdog and Junos' pfc-watchdog do.
 *
 * Detection: at every poll (every poll_ns), a lossless queue is "stalled" when
 * it is paused by the link partner (pfc_pause says it may not send), holds
 * packets, and has sent nothing since the previous poll (when the caller
 * passes transmit counters). A storm is declared at the first poll at which
 * the queue has been seen stalled, without interruption, for at least
 * detect_ns since the first stalled poll. So a stall that starts at time S is
 * declared in [S + detect_ns, S + detect_ns + poll_ns]; a stall shorter than
 * detect_ns - poll_ns is never declared.
 *
 * Mitigation while in storm: the queue ignores pause (PFC_WD_FORWARD: the
 * caller transmits as if not paused) or drops (PFC_WD_DROP: the caller
 * discards what the queue holds and drops new arrivals for it). Both are
 * offered through pfc_watchdog_may_send() / pfc_watchdog_drops().
 *
 * Restoration (SONiC's rule): the storm is over when the partner has not
 * paused the queue for restore_ns: at the first poll at which the pause ended
 * (expired or XON) at least restore_ns ago. A storm whose last pause ends at
 * E is restored in [E + restore_ns, E + restore_ns + poll_ns]. While the
 * partner keeps sending XOFF the queue stays in storm.
 *
 * Defaults (pfc_watchdog_config_default): detection 200 ms, restoration
 * 200 ms, polling 100 ms, action drop: SONiC's defaults; Junos' are polling
 * 100 ms, detection 2 polls (200 ms), recovery 200 ms.
 *
 * One struct per port, owned by the caller; every call takes now_ns.
 */
#ifndef PFC_WATCHDOG_H
#define PFC_WATCHDOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pfc_frame.h"
#include "pfc_pause.h"

enum pfc_wd_action {
	PFC_WD_DROP,    /* drop the queue's packets and its new arrivals */
	PFC_WD_FORWARD, /* ignore pause: transmit as if not paused */
};

struct pfc_watchdog_config {
	uint64_t detect_ns;  /* > 0, >= poll_ns */
	uint64_t restore_ns; /* > 0 */
	uint64_t poll_ns;    /* > 0 */
	enum pfc_wd_action action;
	uint8_t prio_mask;   /* queues watched (the lossless priorities) */
};

struct pfc_wd_queue {
	bool storm;
	bool stalled;             /* seen stalled at the last poll */
	uint64_t stall_since_ns;  /* first poll of the current stall */
	uint64_t storm_since_ns;  /* when the current / last storm was declared */
	uint64_t restored_ns;     /* when the last storm was restored */
	uint64_t last_tx;         /* transmit counter at the last poll */
	uint64_t storms;          /* storms declared */
	uint64_t restores;        /* storms restored */
	uint64_t storm_ns;        /* time in storm, closed storms */
	uint64_t dropped_pkts;    /* counted by pfc_watchdog_count_drop() */
};

struct pfc_watchdog {
	struct pfc_watchdog_config cfg;
	uint64_t next_poll_ns;
	struct pfc_wd_queue q[PFC_NUM_PRIO];
};

/* Fill cfg with the defaults above, watching priorities 3 and 4. */
void pfc_watchdog_config_default(struct pfc_watchdog_config *cfg);

/*
 * Reset wd with cfg (NULL: defaults); the first poll is due at start_ns.
 * Returns 0, or -EINVAL with a message in err (when err is non-NULL and
 * errlen > 0) when a time is 0 or detect_ns is shorter than poll_ns or the
 * action is unknown.
 */
int pfc_watchdog_init(struct pfc_watchdog *wd, const struct pfc_watchdog_config *cfg,
		      uint64_t start_ns, char *err, size_t errlen);

/*
 * Poll at now_ns. ps is the port's egress pause state; nonempty_mask has bit
 * n set when queue n holds packets; tx_pkts (may be NULL: progress not
 * checked) holds each queue's transmitted-packet counter. Returns a mask of
 * the priorities whose state changed (storm declared or restored) at this
 * poll, and sets the next poll time to now_ns + poll_ns. Call it when
 * pfc_watchdog_next_poll_ns() is due; calling it more often is harmless.
 */
uint8_t pfc_watchdog_poll(struct pfc_watchdog *wd, const struct pfc_pause *ps,
			  uint8_t nonempty_mask, const uint64_t *tx_pkts, uint64_t now_ns);

/* When the next poll is due. */
uint64_t pfc_watchdog_next_poll_ns(const struct pfc_watchdog *wd);

/* True when queue prio is in storm (false for prio > 7). */
bool pfc_watchdog_in_storm(const struct pfc_watchdog *wd, unsigned prio);

/*
 * May queue prio start a frame at now_ns: not paused, or in storm with the
 * forward action. (In storm with the drop action: false; see drops.)
 */
bool pfc_watchdog_may_send(const struct pfc_watchdog *wd, const struct pfc_pause *ps,
			   unsigned prio, uint64_t now_ns);

/* True when queue prio is in storm with the drop action: discard and drop. */
bool pfc_watchdog_drops(const struct pfc_watchdog *wd, unsigned prio);

/* Count pkts packets the caller dropped for queue prio because of the watchdog. */
void pfc_watchdog_count_drop(struct pfc_watchdog *wd, unsigned prio, uint64_t pkts);

/* Time queue prio has spent in storm up to now_ns, the current storm included. */
uint64_t pfc_watchdog_storm_ns(const struct pfc_watchdog *wd, unsigned prio, uint64_t now_ns);

#endif /* PFC_WATCHDOG_H */
