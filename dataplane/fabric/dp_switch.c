/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A switch's ingress on mbufs: the frame's way in (switch state, segments,
 * parse once), the forwarding decision (dp_pipeline.c), then what the
 * verdict asks for: free it, queue the answer, apply the PFC frame, or
 * record the flow and queue it on its egress port. Also the PFC frames the
 * switch's buffer owes upstream.
 */
#include "dp_switch.h"

#include <string.h>

#include "dp_chan.h"
#include "pfc_frame.h"

/*
 * The decision (DPDK-free: the unit test builds dp_pipeline.c alone) is
 * compiled into this file, and dp_switch_rx() flattened, so the stages
 * inline into the per-packet path as switch_rx() did when it was one
 * function: called across files, the decision cost 76 more instructions per
 * switch hop (callgrind, scripts/bench-dataplane.sh).
 */
#include "dp_pipeline.c"

static void sw_drop(struct dp_switch *s, struct rte_mbuf *m, enum dp_drop why)
{
	s->drops[why]++;
	rte_pktmbuf_free(m);
}

static void on_pfc_refresh(void *obj, uint64_t port, uint64_t now)
{
	struct dp_switch *s = obj;

	uint64_t at = s->pfc_timer_at[port];

	if (at == 0 || at > now)
		return; /* superseded (live mode hands out late times, so no equality test) */
	s->pfc_timer_at[port] = 0;
	dp_switch_send_pfc(s, (uint16_t)port, now);
}

/* Send the PFC frame the MMU owes on port (if any), and arm its next refresh. */
void dp_switch_send_pfc(struct dp_switch *s, uint16_t port, uint64_t now)
{
	struct dp_chan *c = s->out[port];
	struct pfc_frame fr;

	if (!c->up)
		return; /* nobody to pause on a dead link */
	if (pfc_mmu_pfc_frame(s->mmu, port, now, &fr) > 0) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(c->fab->mp);
		if (m == NULL) {
			s->drops[DP_DROP_NO_MBUF]++;
			s->pfc_no_mbuf++;
		} else {
			memcpy(fr.src, c->src_mac, sizeof(fr.src));
			uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, PFC_FRAME_LEN);
			pfc_frame_encode(&fr, d, PFC_FRAME_LEN);
			memset(dp_priv(m), 0, DP_PRIV_HEAD_LEN);
			c->pfc_tx++;
			dp_chan_enqueue(c, m, DP_NUM_PRIO, now);
		}
	}
	uint64_t next = pfc_mmu_pfc_next_ns(s->mmu, port);
	if (next != UINT64_MAX && (s->pfc_timer_at[port] == 0 || next < s->pfc_timer_at[port])) {
		if (next <= now)
			next = now + 1;
		s->pfc_timer_at[port] = next;
		if (dp_timer_add_lp(s->eng, s->lp, next, on_pfc_refresh, s, port) < 0)
			s->pfc_timer_at[port] = 0; /* counted in timer_fail; the next send_pfc tries again */
	}
}

/*
 * Ingress. Reads: the switch's state, the mbuf's segments, the parse the
 * frame carries. Sets: rx counters, a linear frame, its parse (frames the
 * fabric made, or that came in segments, are parsed here). Next: the
 * decision, or drop link_down (switch down) / segmented.
 */
static bool sw_ingress(struct dp_switch *s, struct rte_mbuf *m)
{
	struct dp_mbuf_priv *pv = dp_priv(m);

	s->rx_pkts++;
	s->rx_bytes += rte_pktmbuf_pkt_len(m);
	if (!s->up) {
		sw_drop(s, m, DP_DROP_LINK_DOWN);
		return false;
	}
	if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) < 0) {
		sw_drop(s, m, DP_DROP_SEGMENTED);
		return false;
	}
	if (!pv->parsed) {
		pv->parse_st = (int8_t)rl_parse(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m),
						&pv->pkt);
		pv->parsed = 1;
	}
	return true;
}

/*
 * Reply. Reads: the answer's length. Sets: the mbuf's length, a fresh
 * per-packet state. Next: in_port's control queue.
 */
static void sw_reply(struct dp_switch *s, uint16_t in_port, struct rte_mbuf *m, uint32_t len,
		     uint64_t now)
{
	uint32_t have = rte_pktmbuf_data_len(m);

	if (have > len)
		rte_pktmbuf_trim(m, (uint16_t)(have - len));
	else if (have < len && rte_pktmbuf_append(m, (uint16_t)(len - have)) == NULL) {
		sw_drop(s, m, DP_DROP_NO_MBUF); /* not reached: the decision checked the room */
		return;
	}
	memset(dp_priv(m), 0, DP_PRIV_HEAD_LEN);
	dp_chan_enqueue(s->out[in_port], m, DP_NUM_PRIO, now);
}

/*
 * Consume a PFC frame: it paused the channel in_port sends on. Next: free
 * it; that channel's watchdog watches, its transmitter picks again.
 */
static void sw_consume_pfc(struct dp_switch *s, uint16_t in_port, struct rte_mbuf *m, uint64_t now)
{
	struct dp_chan *c = s->out[in_port];

	rte_pktmbuf_free(m);
	dp_chan_watchdog_arm(c, now);
	dp_chan_kick(c, now);
}

/*
 * Flow record. Reads: the verdict, the flow slot the frame carries. Sets:
 * the flow's path and counters (dp_flows), the slot for the next hops.
 * Next: enqueue.
 */
static void sw_flow_record(struct dp_switch *s, uint16_t in_port, struct dp_mbuf_priv *pv,
			   const struct dp_verdict *v)
{
	struct dp_fabric *f = s->out[in_port]->fab;
	int first_hop = s->out[in_port]->to.kind == TOPO_NODE_HOST;
	struct dp_flow_when when = {s->eng->now_ns, s->eng->cur_key};

	if (pv->flow_slot)
		dp_flows_record_slot(&f->flows, (int32_t)pv->flow_slot - 1, v->len, s->idx,
				     v->out_port, first_hop, when);
	else if (f->flows.h)
		pv->flow_slot = (uint32_t)(dp_flows_record(&f->flows, &pv->pkt, v->len, s->idx,
							   v->out_port, first_hop, when) + 1);
}

/*
 * Enqueue. Reads: the verdict. Sets: what the MMU charged (given back when
 * the frame leaves), forward counters. Next: the egress queue of out_port.
 */
static void sw_forward(struct dp_switch *s, uint16_t in_port, struct rte_mbuf *m,
		       const struct dp_verdict *v, uint64_t now)
{
	struct dp_mbuf_priv *pv = dp_priv(m);

	sw_flow_record(s, in_port, pv, v);
	pv->len = v->len;
	pv->in_port = in_port;
	pv->out_port = v->out_port;
	pv->prio = v->prio;
	pv->ect = v->ect;
	pv->admitted = 1;
	s->fwd_pkts++;
	s->port_tx_pkts[v->out_port]++;
	dp_chan_enqueue(s->out[v->out_port], m, v->prio, now);
}

__attribute__((flatten)) void dp_switch_rx(struct dp_switch *s, uint16_t in_port, struct rte_mbuf *m,
					  uint64_t now)
{
	if (!sw_ingress(s, m))
		return;
	struct dp_mbuf_priv *pv = dp_priv(m);
	if (pv->flow_slot) /* (sw_flow_record's line, while the pipeline decides) */
		dp_flows_prefetch_slot(&s->out[in_port]->fab->flows, (int32_t)pv->flow_slot - 1);
	struct dp_frame fr = {.d = rte_pktmbuf_mtod(m, uint8_t *), .len = rte_pktmbuf_data_len(m),
			      .room = (uint32_t)rte_pktmbuf_data_len(m) + rte_pktmbuf_tailroom(m),
			      .ttl_owed = &pv->ttl_owed, .mac_chan_owed = &pv->mac_chan};
	struct dp_verdict v;

	pipeline_decide(s, in_port, &fr, &pv->pkt, pv->parse_st, now, &v);
	if (v.mmu_flags & PFC_MMU_F_XOFF) /* the buffer asks in_port's peer to pause */
		dp_switch_send_pfc(s, in_port, now);
	switch (v.kind) {
	case DP_VERDICT_FORWARD:
		sw_forward(s, in_port, m, &v, now);
		break;
	case DP_VERDICT_REPLY:
		sw_reply(s, in_port, m, v.len, now);
		break;
	case DP_VERDICT_CONSUME:
		sw_consume_pfc(s, in_port, m, now);
		break;
	case DP_VERDICT_DROP:
		rte_pktmbuf_free(m); /* counted by the decision */
		break;
	}
}
