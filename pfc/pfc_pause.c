/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pfc_pause.h"

int pfc_pause_init(struct pfc_pause *ps, uint64_t rate_bps, char *err, size_t errlen)
{
	memset(ps, 0, sizeof(*ps));
	if (rate_bps == 0) {
		if (err && errlen)
			snprintf(err, errlen, "pfc_pause: link rate is 0 bit/s");
		return -EINVAL;
	}
	ps->rate_bps = rate_bps;
	ps->cache_quanta = PFC_QUANTA_MAX;
	ps->cache_ns = pfc_quanta_to_ns(PFC_QUANTA_MAX, rate_bps);
	return 0;
}

void pfc_pause_apply(struct pfc_pause *ps, const struct pfc_frame *f, uint64_t now_ns)
{
	for (unsigned p = 0; p < PFC_NUM_PRIO; p++) {
		if (!(f->enable & (1u << p)))
			continue;
		bool paused = now_ns < ps->until_ns[p];
		if (f->time[p] == 0) {
			ps->xon_rx[p]++;
			if (paused)
				ps->until_ns[p] = now_ns; /* current interval ends now */
			continue;
		}
		ps->xoff_rx[p]++;
		ps->last_xoff_ns[p] = now_ns;
		if (!paused) {
			/* close the previous interval, open a new one at now */
			if (ps->until_ns[p] > ps->start_ns[p])
				ps->paused_ns[p] += ps->until_ns[p] - ps->start_ns[p];
			ps->start_ns[p] = now_ns;
		}
		if (f->time[p] != ps->cache_quanta) {
			ps->cache_quanta = f->time[p];
			ps->cache_ns = pfc_quanta_to_ns(f->time[p], ps->rate_bps);
		}
		ps->until_ns[p] = now_ns + ps->cache_ns;
		if (ps->until_ns[p] > ps->any_until_ns)
			ps->any_until_ns = ps->until_ns[p];
	}
}

enum pfc_frame_err pfc_pause_rx(struct pfc_pause *ps, const uint8_t *buf, size_t len,
				uint64_t now_ns)
{
	struct pfc_frame f;
	enum pfc_frame_err e = pfc_frame_decode(buf, len, &f);
	pfc_frame_stats_count(&ps->rx, e);
	if (e == PFC_FRAME_OK)
		pfc_pause_apply(ps, &f, now_ns);
	return e;
}

bool pfc_pause_may_send(const struct pfc_pause *ps, unsigned prio, uint64_t now_ns)
{
	return prio >= PFC_NUM_PRIO || now_ns >= ps->until_ns[prio];
}

uint8_t pfc_pause_mask(const struct pfc_pause *ps, uint64_t now_ns)
{
	uint8_t m = 0;

	if (now_ns >= ps->any_until_ns) /* the common case: no pause in force (one compare) */
		return 0;
	for (unsigned p = 0; p < PFC_NUM_PRIO; p++)
		if (now_ns < ps->until_ns[p])
			m |= (uint8_t)(1u << p);
	return m;
}

uint64_t pfc_pause_expiry_ns(const struct pfc_pause *ps, unsigned prio)
{
	return prio < PFC_NUM_PRIO ? ps->until_ns[prio] : 0;
}

uint64_t pfc_pause_next_expiry_ns(const struct pfc_pause *ps, uint64_t now_ns)
{
	uint64_t t = UINT64_MAX;

	if (now_ns >= ps->any_until_ns)
		return t;
	for (unsigned p = 0; p < PFC_NUM_PRIO; p++)
		if (now_ns < ps->until_ns[p] && ps->until_ns[p] < t)
			t = ps->until_ns[p];
	return t;
}

uint64_t pfc_pause_paused_ns(const struct pfc_pause *ps, unsigned prio, uint64_t now_ns)
{
	if (prio >= PFC_NUM_PRIO)
		return 0;
	uint64_t total = ps->paused_ns[prio];
	uint64_t end = ps->until_ns[prio] < now_ns ? ps->until_ns[prio] : now_ns;
	if (end > ps->start_ns[prio])
		total += end - ps->start_ns[prio];
	return total;
}
