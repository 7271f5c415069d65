/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN: the reaction point (per-QP rate limiter driven by CNPs) and the
 * notification point (CNPs for ECN CE-marked requests). The algorithm and
 * the constants are documented at struct ne_dcqcn_config in ne_nic.h.
 *
 * Integer arithmetic only (rates in bit/s, alpha in 1/2^20), so a run is
 * bit-for-bit reproducible. Timers are not NIC events: a QP's alpha and rate
 * timers are replayed in time order up to `now` whenever the QP is about to
 * send or is queried, which gives the same rates as firing them on time
 * (the rate only matters when a packet leaves).
 */
#include <errno.h>
#include <string.h>

#include "ne_priv.h"

void ne_dcqcn_config_default(struct ne_dcqcn_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->rate_min_bps = 1000000ull;
	cfg->g_inv = 256;
	cfg->alpha_timer_ns = 55000;
	cfg->rate_timer_ns = 55000;
	cfg->byte_counter = 10000000ull;
	cfg->fast_recovery = 5;
	cfg->ai_rate_bps = 40000000ull;
	cfg->hai_rate_bps = 400000000ull;
	cfg->cnp_interval_ns = 50000;
	cfg->cnp_dscp = 48;
}

void ne_dcqcn_resolve(struct ne_nic_config *cfg)
{
	struct ne_dcqcn_config d, *c = &cfg->dcqcn;

	if (!c->rp_enable && !c->np_enable)
		return; /* off: the config stays exactly as given */
	ne_dcqcn_config_default(&d);
	if (!c->rate_max_bps)
		c->rate_max_bps = cfg->line_rate_bps ? cfg->line_rate_bps : 100000000000ull;
	if (!c->rate_min_bps)
		c->rate_min_bps = d.rate_min_bps;
	if (c->rate_min_bps > c->rate_max_bps)
		c->rate_min_bps = c->rate_max_bps;
	if (!c->g_inv)
		c->g_inv = d.g_inv;
	if (!c->alpha_timer_ns)
		c->alpha_timer_ns = d.alpha_timer_ns;
	if (!c->rate_timer_ns)
		c->rate_timer_ns = d.rate_timer_ns;
	if (!c->byte_counter)
		c->byte_counter = d.byte_counter;
	if (!c->fast_recovery)
		c->fast_recovery = d.fast_recovery;
	if (!c->ai_rate_bps)
		c->ai_rate_bps = d.ai_rate_bps;
	if (!c->hai_rate_bps)
		c->hai_rate_bps = d.hai_rate_bps;
	if (!c->cnp_interval_ns)
		c->cnp_interval_ns = d.cnp_interval_ns;
	if (!c->cnp_dscp || c->cnp_dscp > NE_DSCP_MAX)
		c->cnp_dscp = d.cnp_dscp;
}

/* One rate increase event (timer when by_timer, else byte counter). */
static void rate_increase(const struct ne_dcqcn_config *c, struct ne_dcqcn_qp *d, bool by_timer)
{
	uint32_t f = c->fast_recovery;

	if (by_timer)
		d->t_cnt++;
	else
		d->bc_cnt++;
	if (d->t_cnt > f && d->bc_cnt > f) {
		uint32_t i = (d->t_cnt < d->bc_cnt ? d->t_cnt : d->bc_cnt) - f;

		d->rt += (uint64_t)i * c->hai_rate_bps;
	} else if (d->t_cnt > f || d->bc_cnt > f) {
		d->rt += c->ai_rate_bps;
	}
	if (d->rt > c->rate_max_bps)
		d->rt = c->rate_max_bps;
	d->rc = (d->rt + d->rc + 1) / 2;
	if (d->rc >= c->rate_max_bps) {
		/* recovered: no pacing, rate timer and byte counter stop */
		d->rc = d->rt = c->rate_max_bps;
		d->limited = false;
	}
}

static void alpha_decay(const struct ne_dcqcn_config *c, struct ne_dcqcn_qp *d)
{
	d->alpha -= d->alpha / c->g_inv;
}

void ne_dcqcn_advance(struct ne_nic *nic, struct ne_qp *qp, uint64_t now_ns)
{
	const struct ne_dcqcn_config *c = &nic->cfg.dcqcn;
	struct ne_dcqcn_qp *d = &qp->dc;

	if (!d->active)
		return;
	for (;;) {
		bool alpha_due = d->next_alpha_ns <= now_ns;
		bool rate_due = d->limited && d->next_rate_ns <= now_ns;

		/* alpha stops changing once alpha / g_inv rounds to 0: stop replaying */
		if (alpha_due && d->alpha / c->g_inv == 0) {
			uint64_t n = (now_ns - d->next_alpha_ns) / c->alpha_timer_ns + 1;

			d->next_alpha_ns += n * c->alpha_timer_ns;
			alpha_due = false;
		}
		if (!alpha_due && !rate_due)
			break;
		if (alpha_due && (!rate_due || d->next_alpha_ns <= d->next_rate_ns)) {
			alpha_decay(c, d);
			d->next_alpha_ns += c->alpha_timer_ns;
		} else {
			rate_increase(c, d, true);
			d->next_rate_ns += c->rate_timer_ns;
		}
	}
}

uint64_t ne_dcqcn_next_timer_ns(const struct ne_nic *nic, const struct ne_qp *qp)
{
	const struct ne_dcqcn_qp *d = &qp->dc;
	uint64_t t = NE_NO_TIME;

	if (!d->active)
		return NE_NO_TIME;
	/* once alpha / g_inv rounds to 0 its decay changes nothing (see advance) */
	if (d->alpha / nic->cfg.dcqcn.g_inv != 0)
		t = d->next_alpha_ns;
	if (d->limited && d->next_rate_ns < t)
		t = d->next_rate_ns;
	return t;
}

void ne_dcqcn_cnp(struct ne_nic *nic, struct ne_qp *qp, uint64_t now_ns)
{
	const struct ne_dcqcn_config *c = &nic->cfg.dcqcn;
	struct ne_dcqcn_qp *d = &qp->dc;
	uint64_t cut;

	ne_dcqcn_advance(nic, qp, now_ns);
	if (!d->active) {
		d->active = true;
		d->alpha = NE_DCQCN_ALPHA_ONE; /* the paper's initial alpha */
	}
	if (!d->limited) {
		d->rc = c->rate_max_bps;
		d->next_tx_ns = now_ns;
	}
	d->rt = d->rc;
	/* RC x alpha / 2 with alpha in 1/2^20: RC < 2^43 for rates below 8 Tbit/s */
	cut = (d->rc * (uint64_t)d->alpha) >> (NE_DCQCN_ALPHA_SHIFT + 1);
	d->rc = d->rc - cut;
	if (d->rc < c->rate_min_bps)
		d->rc = c->rate_min_bps;
	d->alpha = d->alpha - d->alpha / c->g_inv + NE_DCQCN_ALPHA_ONE / c->g_inv;
	if (d->alpha > NE_DCQCN_ALPHA_ONE)
		d->alpha = NE_DCQCN_ALPHA_ONE;
	d->limited = d->rc < c->rate_max_bps;
	d->t_cnt = d->bc_cnt = 0;
	d->bytes = 0;
	d->next_alpha_ns = now_ns + c->alpha_timer_ns;
	d->next_rate_ns = now_ns + c->rate_timer_ns;
	d->cuts++;
	nic->cnt.cnp_rate_cuts++;
	ne_qp_touch(nic, qp);
}

void ne_dcqcn_sent(struct ne_nic *nic, struct ne_qp *qp, uint64_t now_ns, size_t flen)
{
	const struct ne_dcqcn_config *c = &nic->cfg.dcqcn;
	struct ne_dcqcn_qp *d = &qp->dc;

	if (!d->limited)
		return;
	d->bytes += flen;
	while (d->limited && d->bytes >= c->byte_counter) {
		d->bytes -= c->byte_counter;
		rate_increase(c, d, false);
	}
	if (!d->limited)
		return;
	/* the gap this frame takes at RC, wire overhead included, rounded up */
	d->next_tx_ns = now_ns + ne_wire_ns(flen, d->rc);
}

void ne_dcqcn_np_ce(struct ne_nic *nic, struct ne_qp *qp, uint64_t now_ns)
{
	struct ne_dcqcn_qp *d = &qp->dc;

	nic->cnt.ecn_ce_rcvd++;
	if (d->np_pending)
		return;
	if (d->np_sent && now_ns - d->np_last_ns < nic->cfg.dcqcn.cnp_interval_ns)
		return;
	d->np_pending = true;
	d->np_sent = true;
	d->np_last_ns = now_ns;
}

int ne_dcqcn_build_cnp(struct ne_nic *nic, struct ne_qp *qp, uint8_t *buf, size_t *len)
{
	struct ne_bth_fields bth;
	struct ne_qp tmp;
	size_t pos;

	if (!qp->dc.np_pending)
		return 0;
	qp->dc.np_pending = false;
	/* CNPs carry their own DSCP (the control class), not the QP's */
	tmp = *qp;
	tmp.attr.dscp = nic->cfg.dcqcn.cnp_dscp;
	memset(&bth, 0, sizeof(bth));
	bth.opcode = RL_OP_CNP;
	bth.dqpn = qp->attr.dest_qpn;
	bth.psn = 0;
	pos = ne_build_hdrs(nic, &tmp, buf, RL_BTH_LEN + RL_CNP_PAD_LEN + RL_ICRC_LEN, &bth);
	buf[pos + RL_BTH_QPN_OFF] |= RL_BTH_BECN;
	memset(buf + pos + RL_BTH_LEN, 0, RL_CNP_PAD_LEN + RL_ICRC_LEN);
	*len = pos + RL_BTH_LEN + RL_CNP_PAD_LEN + RL_ICRC_LEN;
	nic->cnt.cnp_sent++;
	return 1;
}

int ne_qp_dcqcn_query(struct ne_nic *nic, uint32_t qpn, uint64_t now_ns, struct ne_dcqcn_state *out)
{
	struct ne_qp *qp;
	const struct ne_dcqcn_qp *d;

	if (!nic || !out)
		return -EINVAL;
	qp = ne_qp_lookup(nic, qpn);
	if (!qp)
		return -ENOENT;
	ne_dcqcn_advance(nic, qp, now_ns);
	ne_sched_mark(nic, qp);
	d = &qp->dc;
	memset(out, 0, sizeof(*out));
	out->limited = d->limited;
	out->rate_bps = d->limited ? d->rc : nic->cfg.dcqcn.rate_max_bps;
	out->target_bps = d->limited ? d->rt : nic->cfg.dcqcn.rate_max_bps;
	out->alpha = d->active ? (double)d->alpha / NE_DCQCN_ALPHA_ONE : 1.0;
	out->timer_events = d->t_cnt;
	out->byte_events = d->bc_cnt;
	out->cuts = d->cuts;
	return 0;
}
