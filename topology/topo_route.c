/* SPDX-License-Identifier: BSD-3-Clause */
/* Shortest-path ECMP groups: one BFS per destination leaf over live switches. */
#include "topo_route.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void topo_route_free(struct topo_routes *r)
{
	if (!r)
		return;
	free(r->link_up);
	free(r->switch_up);
	free(r->dist);
	free(r->grp_off);
	free(r->grp_n);
	free(r->changed);
	free(r->ports);
	free(r->leaf_first);
	free(r->leaf_host);
	free(r->queue);
	free(r->bfs_dist);
	free(r);
}

struct topo_routes *topo_route_create(const struct topo *t)
{
	if (!t || !t->n_switches || !t->n_leaves)
		return NULL;
	struct topo_routes *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->topo = t;
	r->n_switches = t->n_switches;
	r->n_leaves = t->n_leaves;
	r->n_links = t->n_links;
	size_t ng = (size_t)t->n_switches * t->n_leaves;
	/* a group holds switch-facing ports only: room for those per (switch, leaf) */
	size_t pool = 0;
	for (uint32_t s = 0; s < t->n_switches; s++)
		for (uint16_t p = 0; p < t->switches[s].n_ports; p++)
			pool += t->switches[s].ports[p].peer.kind == TOPO_NODE_SWITCH ? t->n_leaves : 0;
	r->link_up = malloc((t->n_links ? t->n_links : 1) * sizeof(bool));
	r->switch_up = malloc(t->n_switches * sizeof(bool));
	r->dist = calloc(ng, sizeof(*r->dist));
	r->grp_off = calloc(ng, sizeof(*r->grp_off));
	r->grp_n = calloc(ng, sizeof(*r->grp_n));
	r->changed = calloc(ng, sizeof(*r->changed));
	r->ports = calloc(pool ? pool : 1, sizeof(*r->ports));
	r->leaf_first = calloc(t->n_leaves + 1, sizeof(*r->leaf_first));
	r->leaf_host = calloc(t->n_hosts ? t->n_hosts : 1, sizeof(*r->leaf_host));
	r->queue = calloc(t->n_switches, sizeof(*r->queue));
	r->bfs_dist = calloc(t->n_switches, sizeof(*r->bfs_dist));
	if (!r->link_up || !r->switch_up || !r->dist || !r->grp_off || !r->grp_n || !r->changed ||
	    !r->ports || !r->leaf_first || !r->leaf_host || !r->queue || !r->bfs_dist) {
		topo_route_free(r);
		return NULL;
	}
	if (pool > UINT32_MAX) {
		topo_route_free(r);
		return NULL;
	}
	for (uint32_t i = 0; i < t->n_links; i++)
		r->link_up[i] = true;
	for (uint32_t s = 0; s < t->n_switches; s++)
		r->switch_up[s] = true;
	uint32_t off = 0;
	for (uint32_t s = 0; s < t->n_switches; s++) {
		uint32_t fabric = 0;
		for (uint16_t p = 0; p < t->switches[s].n_ports; p++)
			fabric += t->switches[s].ports[p].peer.kind == TOPO_NODE_SWITCH;
		for (uint32_t L = 0; L < t->n_leaves; L++) {
			r->grp_off[(size_t)s * t->n_leaves + L] = off;
			off += fabric;
		}
	}
	/* hosts by leaf, then by index under the leaf */
	for (uint32_t L = 0; L < t->n_leaves; L++)
		r->leaf_first[L + 1] = r->leaf_first[L] + t->switches[t->leaves[L]].n_hosts;
	for (uint32_t h = 0; h < t->n_hosts; h++) {
		const struct topo_host *ho = &t->hosts[h];
		int L = t->switches[ho->leaf].leaf_index;
		if (L >= 0)
			r->leaf_host[r->leaf_first[L] + ho->index] = h;
	}
	topo_route_compute(r);
	memset(r->changed, 0, ng);
	return r;
}

int topo_route_compute(struct topo_routes *r)
{
	if (!r)
		return -1;
	const struct topo *t = r->topo;
	int n_changed = 0;
	for (uint32_t L = 0; L < r->n_leaves; L++) {
		uint32_t leaf = t->leaves[L];
		for (uint32_t s = 0; s < r->n_switches; s++)
			r->bfs_dist[s] = TOPO_ROUTE_UNREACHABLE;
		uint32_t head = 0, tail = 0;
		if (r->switch_up[leaf]) {
			r->bfs_dist[leaf] = 0;
			r->queue[tail++] = leaf;
		}
		while (head < tail) {
			uint32_t s = r->queue[head++];
			const struct topo_switch *sw = &t->switches[s];
			for (uint16_t p = 0; p < sw->n_ports; p++) {
				const struct topo_port *po = &sw->ports[p];
				if (po->peer.kind != TOPO_NODE_SWITCH || !r->link_up[po->link] ||
				    !r->switch_up[po->peer.index] ||
				    r->bfs_dist[po->peer.index] != TOPO_ROUTE_UNREACHABLE)
					continue;
				r->bfs_dist[po->peer.index] = r->bfs_dist[s] + 1;
				r->queue[tail++] = po->peer.index;
			}
		}
		for (uint32_t s = 0; s < r->n_switches; s++) {
			size_t g = (size_t)s * r->n_leaves + L;
			const struct topo_switch *sw = &t->switches[s];
			uint16_t *ports = r->ports + r->grp_off[g];
			uint16_t old_n = r->grp_n[g];
			uint16_t n = 0;
			uint32_t d = r->bfs_dist[s];
			bool diff = false;
			if (d != TOPO_ROUTE_UNREACHABLE && d > 0) {
				for (uint16_t p = 0; p < sw->n_ports; p++) {
					const struct topo_port *po = &sw->ports[p];
					if (po->peer.kind != TOPO_NODE_SWITCH || !r->link_up[po->link] ||
					    r->bfs_dist[po->peer.index] != d - 1)
						continue;
					if (n >= old_n || ports[n] != p)
						diff = true;
					ports[n++] = p;
				}
			}
			if (n != old_n)
				diff = true;
			r->grp_n[g] = n;
			r->dist[g] = d;
			r->changed[g] = diff;
			n_changed += diff;
		}
	}
	return n_changed;
}

int topo_route_set_link(struct topo_routes *r, uint32_t link, bool up)
{
	if (!r || link >= r->n_links)
		return -1;
	if (r->link_up[link] == up) {
		memset(r->changed, 0, (size_t)r->n_switches * r->n_leaves);
		return 0;
	}
	r->link_up[link] = up;
	return topo_route_compute(r);
}

int topo_route_set_switch(struct topo_routes *r, uint32_t sw, bool up)
{
	if (!r || sw >= r->n_switches)
		return -1;
	if (r->switch_up[sw] == up) {
		memset(r->changed, 0, (size_t)r->n_switches * r->n_leaves);
		return 0;
	}
	r->switch_up[sw] = up;
	return topo_route_compute(r);
}

int topo_route_apply_event(struct topo_routes *r, const struct topo_event *ev)
{
	if (!r || !ev)
		return -1;
	return ev->target == TOPO_EVENT_LINK ? topo_route_set_link(r, ev->index, ev->up)
					   : topo_route_set_switch(r, ev->index, ev->up);
}

const uint16_t *topo_route_group(const struct topo_routes *r, uint32_t sw, uint32_t leaf, unsigned *n)
{
	*n = 0;
	if (!r || sw >= r->n_switches || leaf >= r->n_leaves)
		return NULL;
	size_t g = (size_t)sw * r->n_leaves + leaf;
	*n = r->grp_n[g];
	return r->ports + r->grp_off[g];
}

/* Whether host is reachable at all: its leaf and its link are up. */
static bool host_live(const struct topo_routes *r, const struct topo_host *h)
{
	return r->switch_up[h->leaf] && r->link_up[h->link];
}

const uint16_t *topo_route_ports(const struct topo_routes *r, uint32_t sw, uint32_t host, unsigned *n)
{
	*n = 0;
	if (!r || sw >= r->n_switches || host >= r->topo->n_hosts)
		return NULL;
	const struct topo_host *h = &r->topo->hosts[host];
	if (sw == h->leaf) {
		if (host_live(r, h))
			*n = 1;
		return &h->leaf_port;
	}
	int L = r->topo->switches[h->leaf].leaf_index;
	const uint16_t *p = topo_route_group(r, sw, (uint32_t)L, n);
	if (!host_live(r, h) || !r->switch_up[sw])
		*n = 0;
	return p;
}

uint32_t topo_route_dist(const struct topo_routes *r, uint32_t sw, uint32_t host)
{
	if (!r || sw >= r->n_switches || host >= r->topo->n_hosts)
		return TOPO_ROUTE_UNREACHABLE;
	const struct topo_host *h = &r->topo->hosts[host];
	if (!host_live(r, h) || !r->switch_up[sw])
		return TOPO_ROUTE_UNREACHABLE;
	int L = r->topo->switches[h->leaf].leaf_index;
	uint32_t d = r->dist[(size_t)sw * r->n_leaves + (uint32_t)L];
	return d == TOPO_ROUTE_UNREACHABLE ? d : d + 1;
}

static int host_at(const struct topo_routes *r, uint32_t L, uint32_t last)
{
	/* host index i has address ...(i+1) */
	if (L >= r->n_leaves || last < 1)
		return -1;
	uint32_t i = last - 1;
	if (i >= r->leaf_first[L + 1] - r->leaf_first[L])
		return -1;
	return (int)r->leaf_host[r->leaf_first[L] + i];
}

int topo_route_host_by_ipv4(const struct topo_routes *r, uint32_t ipv4)
{
	if (!r || (ipv4 >> 24) != 10)
		return -1;
	return host_at(r, (ipv4 >> 8) & 0xffff, ipv4 & 0xff);
}

int topo_route_host_by_ipv6(const struct topo_routes *r, const uint8_t a[16])
{
	static const uint8_t zero[8];
	if (!r || !a || a[0] != 0xfd || a[1] || a[2] || a[3] || a[4] || a[5] ||
	    memcmp(a + 8, zero, 6) != 0)
		return -1;
	uint32_t L = (uint32_t)a[6] << 8 | a[7];
	uint32_t last = (uint32_t)a[14] << 8 | a[15];
	return host_at(r, L, last);
}

static void print_ports(const struct topo_routes *r, const struct topo_switch *sw, const uint16_t *p,
			unsigned n, FILE *out)
{
	if (n == 0) {
		fprintf(out, "unreachable");
		return;
	}
	for (unsigned k = 0; k < n; k++)
		fprintf(out, "%sp%u->%s", k ? " " : "", p[k],
			topo_node_name(r->topo, sw->ports[p[k]].peer));
}

void topo_route_print(const struct topo_routes *r, FILE *out)
{
	if (!r || !out)
		return;
	const struct topo *t = r->topo;
	char a[48], b[48];
	for (uint32_t s = 0; s < r->n_switches; s++) {
		const struct topo_switch *sw = &t->switches[s];
		fprintf(out, "%s (%s, %u ports%s)\n", sw->name, topo_role_name(sw->role), sw->n_ports,
			r->switch_up[s] ? "" : ", DOWN");
		fprintf(out, "  %-24s %-18s %5s  %s\n", "destination", "prefix", "hops", "egress ports");
		for (uint32_t L = 0; L < r->n_leaves; L++) {
			const struct topo_switch *leaf = &t->switches[t->leaves[L]];
			if (t->leaves[L] == s) {
				/* own hosts: one port each */
				for (uint32_t k = r->leaf_first[L]; k < r->leaf_first[L + 1]; k++) {
					uint32_t h = r->leaf_host[k];
					unsigned n;
					const uint16_t *p = topo_route_ports(r, s, h, &n);
					uint32_t d = topo_route_dist(r, s, h);
					snprintf(b, sizeof(b), "%s/32",
						 topo_ipv4_str(t->hosts[h].ipv4, a, sizeof(a)));
					fprintf(out, "  %-24s %-18s ", t->hosts[h].name, b);
					if (d == TOPO_ROUTE_UNREACHABLE)
						fprintf(out, "%5s  ", "-");
					else
						fprintf(out, "%5" PRIu32 "  ", d);
					print_ports(r, sw, p, n, out);
					fputc('\n', out);
				}
				continue;
			}
			unsigned n;
			const uint16_t *p = topo_route_group(r, s, L, &n);
			uint32_t d = r->dist[(size_t)s * r->n_leaves + L];
			char dest[64];
			snprintf(dest, sizeof(dest), "%s (%u hosts)", leaf->name, leaf->n_hosts);
			snprintf(b, sizeof(b), "%s/24", topo_ipv4_str(leaf->subnet4, a, sizeof(a)));
			fprintf(out, "  %-24s %-18s ", dest, b);
			if (d == TOPO_ROUTE_UNREACHABLE || !r->switch_up[s])
				fprintf(out, "%5s  ", "-");
			else
				fprintf(out, "%5" PRIu32 "  ", d + 1);
			print_ports(r, sw, p, r->switch_up[s] ? n : 0, out);
			fputc('\n', out);
		}
	}
}
