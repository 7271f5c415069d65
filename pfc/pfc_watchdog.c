/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pfc_watchdog.h"

#define MS 1000000ull

void pfc_watchdog_config_default(struct pfc_watchdog_config *cfg)
{
	cfg->detect_ns = 200 * MS;
	cfg->restore_ns = 200 * MS;
	cfg->poll_ns = 100 * MS;
	cfg->action = PFC_WD_DROP;
	cfg->prio_mask = (1u << 3) | (1u << 4);
}

int pfc_watchdog_init(struct pfc_watchdog *wd, const struct pfc_watchdog_config *cfg,
		      uint64_t start_ns, char *err, size_t errlen)
{
	struct pfc_watchdog_config def;
	if (!cfg) {
		pfc_watchdog_config_default(&def);
		cfg = &def;
	}
	memset(wd, 0, sizeof(*wd));
	const char *why = NULL;
	if (cfg->detect_ns == 0 || cfg->restore_ns == 0 || cfg->poll_ns == 0)
		why = "detection, restoration and polling times must be > 0";
	else if (cfg->detect_ns < cfg->poll_ns)
		why = "the detection time is shorter than the polling interval";
	else if (cfg->action != PFC_WD_DROP && cfg->action != PFC_WD_FORWARD)
		why = "unknown action";
	if (why) {
		if (err && errlen)
			snprintf(err, errlen, "pfc_watchdog: %s", why);
		return -EINVAL;
	}
	wd->cfg = *cfg;
	wd->next_poll_ns = start_ns;
	return 0;
}

static void end_storm(struct pfc_wd_queue *q, uint64_t now_ns)
{
	q->storm = false;
	q->restored_ns = now_ns;
	q->restores++;
	q->storm_ns += now_ns - q->storm_since_ns;
}

uint8_t pfc_watchdog_poll(struct pfc_watchdog *wd, const struct pfc_pause *ps,
			  uint8_t nonempty_mask, const uint64_t *tx_pkts, uint64_t now_ns)
{
	uint8_t changed = 0;
	for (unsigned p = 0; p < PFC_NUM_PRIO; p++) {
		if (!((wd->cfg.prio_mask >> p) & 1))
			continue;
		struct pfc_wd_queue *q = &wd->q[p];
		bool paused = !pfc_pause_may_send(ps, p, now_ns);
		if (q->storm) {
			uint64_t end = pfc_pause_expiry_ns(ps, p);
			if (!paused && now_ns - end >= wd->cfg.restore_ns) {
				end_storm(q, now_ns);
				changed |= (uint8_t)(1u << p);
			}
		} else {
			bool progress = tx_pkts && tx_pkts[p] != q->last_tx;
			bool stalled = paused && ((nonempty_mask >> p) & 1) && !progress;
			if (!stalled) {
				q->stalled = false;
			} else if (!q->stalled) {
				q->stalled = true;
				q->stall_since_ns = now_ns;
			}
			if (q->stalled && now_ns - q->stall_since_ns >= wd->cfg.detect_ns) {
				q->storm = true;
				q->stalled = false;
				q->storm_since_ns = now_ns;
				q->storms++;
				changed |= (uint8_t)(1u << p);
			}
		}
		if (tx_pkts)
			q->last_tx = tx_pkts[p];
	}
	wd->next_poll_ns = now_ns + wd->cfg.poll_ns;
	return changed;
}

uint64_t pfc_watchdog_next_poll_ns(const struct pfc_watchdog *wd)
{
	return wd->next_poll_ns;
}

bool pfc_watchdog_in_storm(const struct pfc_watchdog *wd, unsigned prio)
{
	return prio < PFC_NUM_PRIO && wd->q[prio].storm;
}

bool pfc_watchdog_may_send(const struct pfc_watchdog *wd, const struct pfc_pause *ps,
			   unsigned prio, uint64_t now_ns)
{
	if (pfc_watchdog_in_storm(wd, prio))
		return wd->cfg.action == PFC_WD_FORWARD;
	return pfc_pause_may_send(ps, prio, now_ns);
}

bool pfc_watchdog_drops(const struct pfc_watchdog *wd, unsigned prio)
{
	return pfc_watchdog_in_storm(wd, prio) && wd->cfg.action == PFC_WD_DROP;
}

void pfc_watchdog_count_drop(struct pfc_watchdog *wd, unsigned prio, uint64_t pkts)
{
	if (prio < PFC_NUM_PRIO)
		wd->q[prio].dropped_pkts += pkts;
}

uint64_t pfc_watchdog_storm_ns(const struct pfc_watchdog *wd, unsigned prio, uint64_t now_ns)
{
	if (prio >= PFC_NUM_PRIO)
		return 0;
	const struct pfc_wd_queue *q = &wd->q[prio];
	uint64_t t = q->storm_ns;
	if (q->storm && now_ns > q->storm_since_ns)
		t += now_ns - q->storm_since_ns;
	return t;
}
