/* SPDX-License-Identifier: BSD-3-Clause */
/* dp_trace: a frame's path through the switches' decisions, without queueing (dp_trace.h). */
#include "dp_trace.h"

#include <errno.h>
#include <stdio.h>

#include "dp_fabric.h"
#include "dp_pipeline.h"
#include "pfc_mmu.h"
#include "rl_parse.h"

int dp_trace_path(struct dp_fabric *f, uint32_t src, uint8_t *d, uint32_t len, uint32_t room,
		  uint64_t now_ns, uint32_t *chans, unsigned max, unsigned *n, char *why, size_t cap)
{
	struct dp_frame fr = {.d = d, .len = len, .room = room};
	struct rl_pkt p;
	int st = rl_parse(d, len, &p);
	const struct dp_chan *c = f->host[src].tx;
	int32_t slot = -1;

	*n = 0;
	for (;;) {
		struct dp_verdict v;
		struct dp_switch *s;

		if (*n == max) {
			snprintf(why, cap, "more than %u hops from host %u", max, src);
			return -ELOOP;
		}
		chans[(*n)++] = (uint32_t)(c - f->chans);
		if (c->to.kind == TOPO_NODE_HOST)
			return 0;
		s = &f->sw[c->to.index];
		if (!s->up) {
			snprintf(why, cap, "switch %s is down", s->cfg->name);
			return -EHOSTUNREACH;
		}
		if (dp_pipeline_decide(s, c->to_port, &fr, &p, st, now_ns, &v) != DP_VERDICT_FORWARD) {
			snprintf(why, cap, "switch %s does not forward it (verdict %d, drop reason %d)",
				 s->cfg->name, (int)v.kind, (int)v.drop);
			return -EHOSTUNREACH;
		}
		/* the flow table (--flows) records the path, as the switch does a frame's */
		struct dp_flow_when when = {now_ns, 0};
		if (slot >= 0)
			dp_flows_record_slot(&f->flows, slot, v.len, s->idx, v.out_port, *n == 1, when);
		else if (f->flows.h)
			slot = dp_flows_record(&f->flows, &p, v.len, s->idx, v.out_port, *n == 1, when);
		/* (not queued: the bytes the MMU charged go back at once) */
		struct pfc_mmu_pkt mp = {.len = v.len, .in_port = c->to_port, .out_port = v.out_port,
					 .prio = v.prio, .ect = v.ect};
		pfc_mmu_dequeue(s->mmu, &mp, now_ns);
		c = s->out[v.out_port];
	}
}
