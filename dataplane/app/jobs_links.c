/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --jobs: the links that slowed each job. A job's links are those its
 * traffic crossed in the mix: for each flow the fabric tracked (dp_flows)
 * from one of the job's hosts, the host's own link out and each switch
 * hop's egress link. Of those, the 3 busiest over the run (the mix: the
 * jobs alone ran in processes of their own), by utilisation, then pause.
 */
#include "app.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dp_fabric_build.h"
#include "dp_stats.h"
#include "topo_route.h"


/* The host whose IPv4 address is the flow's source, or -1: the address
 * scheme's host at once, else (a host with an ipv4: of its own) a search. */
static int flow_host(const struct dp_fabric *f, const struct dp_flow *fl)
{
	const struct topo *t = f->topo;
	uint32_t ip = (uint32_t)fl->key.src[0] << 24 | (uint32_t)fl->key.src[1] << 16 |
		      (uint32_t)fl->key.src[2] << 8 | fl->key.src[3];
	int at = fl->key.ip_version == 4 ? topo_route_host_by_ipv4(f->routes, ip) : -1;

	if (at >= 0 && (uint32_t)at < t->n_hosts && t->hosts[at].ipv4 == ip)
		return at;
	for (uint32_t h = 0; fl->key.ip_version == 4 && h < t->n_hosts; h++)
		if (t->hosts[h].ipv4 == ip)
			return (int)h;
	return -1;
}

/* Mark in used[] the channels flow fl crossed, from host h. */
static void flow_chans(struct dp_fabric *f, const struct dp_flow *fl, uint32_t h, bool *used)
{
	const struct topo *t = f->topo;
	struct dp_chan *c = dp_fabric_chan_from(f, t->hosts[h].link,
						(struct topo_node_ref){TOPO_NODE_HOST, h});

	if (c)
		used[c - f->chans] = true;
	for (uint8_t i = 0; i < fl->n_hops && i < DP_FLOW_MAX_HOPS; i++) {
		const struct topo_switch *sw = &t->switches[fl->hop_switch[i]];
		if (fl->hop_port[i] >= sw->n_ports)
			continue;
		c = dp_fabric_chan_from(f, sw->ports[fl->hop_port[i]].link,
					(struct topo_node_ref){TOPO_NODE_SWITCH, fl->hop_switch[i]});
		if (c)
			used[c - f->chans] = true;
	}
}

/* The JOBS_TOP_LINKS busiest of used[] into top, by utilisation, then pause; their count. */
static uint32_t links_top(struct dp_fabric *f, const bool *used, uint64_t elapsed_ns, struct dp_stats_link *top)
{
	struct dp_stats_link row;
	uint32_t n = 0;

	for (uint32_t i = 0; i < f->n_chans; i++) {
		if (!used[i])
			continue;
		dp_stats_link_row(f, i, elapsed_ns, &row);
		uint32_t at = n < JOBS_TOP_LINKS ? n++ : JOBS_TOP_LINKS;
		while (at > 0 && (row.util_pct > top[at - 1].util_pct ||
				  (row.util_pct == top[at - 1].util_pct && row.paused_pct > top[at - 1].paused_pct))) {
			if (at < JOBS_TOP_LINKS)
				top[at] = top[at - 1];
			at--;
		}
		if (at < JOBS_TOP_LINKS)
			top[at] = row;
	}
	return n;
}

/*
 * Every job's busiest links into jt[dp_mix_jobs], from one export of the flow
 * table (the text and the JSON report ask for each job: an export per job
 * and report copied the table 2 x jobs times) and one look-up of each flow's
 * host. 0, or -1 out of memory.
 */
static int all_top(struct run *r, uint64_t elapsed_ns, struct jobs_top *jt)
{
	struct dp_fabric *f = r->fab;
	struct dp_flow *fl = NULL;
	uint32_t nfl = 0, nj = dp_mix_jobs(r->mix);

	if (f->flows.capacity != 0 && dp_flows_export(&f->flows, &fl, &nfl) != 0)
		return -1;
	int *src = calloc(nfl + 1, sizeof(*src)); /* each flow's host */
	bool *used = calloc(f->n_chans + 1, sizeof(*used));
	bool *mine = calloc(r->topo->n_hosts + 1, sizeof(*mine)); /* the job's hosts */
	bool ok = src && used && mine;
	for (uint32_t i = 0; ok && i < nfl; i++)
		src[i] = flow_host(f, &fl[i]);
	for (uint32_t k = 0; ok && k < nj; k++) {
		const struct dp_job *j = dp_mix_job(r->mix, k);
		memset(used, 0, (f->n_chans + 1) * sizeof(*used));
		memset(mine, 0, (r->topo->n_hosts + 1) * sizeof(*mine));
		for (uint32_t q = 0; q < dp_job_ranks(j); q++)
			mine[dp_job_host(j, q)] = true;
		for (uint32_t i = 0; i < nfl; i++)
			if (src[i] >= 0 && mine[src[i]])
				flow_chans(f, &fl[i], (uint32_t)src[i], used);
		jt[k].n = (int)links_top(f, used, elapsed_ns, jt[k].top);
	}
	free(fl);
	free(src);
	free(mine);
	free(used);
	return ok ? 0 : -1;
}

int jobs_links_top(struct run *r, uint32_t k, uint64_t elapsed_ns, struct dp_stats_link *top)
{
	if (r->jobs_top == NULL || r->jobs_top_ns != elapsed_ns) { /* (made once for the report) */
		free(r->jobs_top);
		r->jobs_top = calloc(dp_mix_jobs(r->mix) + 1, sizeof(*r->jobs_top));
		if (r->jobs_top == NULL || all_top(r, elapsed_ns, r->jobs_top) < 0) {
			free(r->jobs_top);
			r->jobs_top = NULL;
			return -1;
		}
		r->jobs_top_ns = elapsed_ns;
	}
	memcpy(top, r->jobs_top[k].top, (size_t)r->jobs_top[k].n * sizeof(*top));
	return r->jobs_top[k].n;
}

void jobs_links_print(struct run *r, uint64_t elapsed_ns, FILE *out)
{
	struct dp_stats_link top[JOBS_TOP_LINKS];

	for (uint32_t k = 0; k < dp_mix_jobs(r->mix); k++) {
		int n = jobs_links_top(r, k, elapsed_ns, top);
		if (n < 0) {
			fprintf(stderr, "rocelab-dp: --jobs: the links of each job: out of memory\n");
			return;
		}
		fprintf(out, "# jobs: %s: links most used in the mix:", dp_mix_name(r->mix, k));
		for (int i = 0; i < n; i++)
			fprintf(out, "%s %s>%s util %.1f %% paused %.1f %%", i ? "," : "", top[i].from, top[i].to,
				top[i].util_pct, top[i].paused_pct);
		fprintf(out, "%s\n", n ? "" : " none tracked (--flows 0, or the table was full)");
	}
}
