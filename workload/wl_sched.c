/* SPDX-License-Identifier: BSD-3-Clause */
/* The scheduler (wl_sched.h): a topology's servers, racks and zones; placement policies. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"
#include "wl_sched.h"

#define FREE UINT32_MAX

/* ---------------------------------------------------------------- cluster */

static uint32_t uf_find(uint32_t *up, uint32_t x)
{
	while (up[x] != x)
		x = up[x] = up[up[x]];
	return x;
}

/*
 * Zones: switches joined by links that touch no ATSW fall into one set
 * (leaves with their CTSWs); each set holding racks is a zone, numbered in
 * the order of its first rack.
 */
static int find_zones(struct wl_cluster *c, const struct topo *t)
{
	uint32_t *up = malloc(t->n_switches * sizeof(*up));
	uint32_t *zone_of = malloc(t->n_switches * sizeof(*zone_of));
	if (!up || !zone_of) {
		free(up);
		free(zone_of);
		return -1;
	}
	for (uint32_t i = 0; i < t->n_switches; i++) {
		up[i] = i;
		zone_of[i] = FREE;
	}
	for (uint32_t l = 0; l < t->n_links; l++) {
		const struct topo_link *k = &t->links[l];
		if (k->end[0].kind != TOPO_NODE_SWITCH || k->end[1].kind != TOPO_NODE_SWITCH)
			continue;
		uint32_t a = k->end[0].index, b = k->end[1].index;
		if (t->switches[a].role == TOPO_ROLE_ATSW || t->switches[b].role == TOPO_ROLE_ATSW)
			continue;
		up[uf_find(up, a)] = uf_find(up, b);
	}
	for (uint32_t r = 0; r < c->n_racks; r++) {
		uint32_t root = uf_find(up, (uint32_t)topo_switch_by_name(t, c->racks[r].name));
		if (zone_of[root] == FREE)
			zone_of[root] = c->n_zones++;
		c->racks[r].zone = zone_of[root];
	}
	for (uint32_t s = 0; s < c->n_servers; s++)
		c->servers[s].zone = c->racks[c->servers[s].rack].zone;
	free(up);
	free(zone_of);
	return 0;
}

/* Racks: the leaves that hold a server's GPU 0, in leaf order. */
static int find_racks(struct wl_cluster *c, const struct topo *t)
{
	uint32_t *rack_of = malloc((t->n_leaves + 1) * sizeof(*rack_of));
	c->racks = calloc(t->n_leaves + 1, sizeof(*c->racks));
	if (!rack_of || !c->racks) {
		free(rack_of);
		return -1;
	}
	for (uint32_t l = 0; l <= t->n_leaves; l++)
		rack_of[l] = FREE;
	for (uint32_t s = 0; s < c->n_servers; s++) {
		const struct topo_host *h = &t->hosts[c->servers[s].hosts[0]];
		int leaf = t->switches[h->leaf].leaf_index;
		rack_of[leaf] = 0; /* used; numbered below */
	}
	for (uint32_t l = 0; l < t->n_leaves; l++)
		if (rack_of[l] != FREE) {
			rack_of[l] = c->n_racks;
			c->racks[c->n_racks++].name = t->switches[t->leaves[l]].name;
		}
	for (uint32_t s = 0; s < c->n_servers; s++) {
		const struct topo_host *h = &t->hosts[c->servers[s].hosts[0]];
		struct wl_rack *r = &c->racks[rack_of[t->switches[h->leaf].leaf_index]];
		c->servers[s].rack = (uint32_t)(r - c->racks);
		r->n++;
	}
	int rc = 0;
	for (uint32_t r = 0; r < c->n_racks && rc == 0; r++) {
		c->racks[r].servers = malloc(c->racks[r].n * sizeof(uint32_t));
		rc = c->racks[r].servers ? 0 : -1;
		c->racks[r].n = 0;
	}
	for (uint32_t s = 0; s < c->n_servers && rc == 0; s++) {
		struct wl_rack *r = &c->racks[c->servers[s].rack];
		r->servers[r->n++] = s;
	}
	free(rack_of);
	return rc;
}

int wl_cluster_init(struct wl_cluster *c, const struct topo *t, struct wl_err *err)
{
	memset(c, 0, sizeof(*c));
	c->topo = t;
	if (!t || t->n_hosts == 0)
		return wl_err_set(err, "%s: the topology has no hosts to place jobs on",
				  t ? t->path : "?");
	bool servers = topo_servers(t) > 0;
	c->n_servers = servers ? topo_servers(t) : t->n_hosts;
	c->gpus_per_server = servers ? t->server_params.gpus_per_server : 1;
	c->servers = calloc(c->n_servers, sizeof(*c->servers));
	c->host_index = servers ? NULL : malloc(t->n_hosts * sizeof(uint32_t));
	if (!c->servers || (!servers && !c->host_index))
		goto oom;
	for (uint32_t s = 0; s < c->n_servers; s++) {
		struct wl_cserver *v = &c->servers[s];
		if (servers) {
			uint32_t n;
			v->name = t->servers[s].name;
			v->hosts = topo_server_hosts(t, s, &n);
		} else {
			c->host_index[s] = s;
			v->name = t->hosts[s].name;
			v->hosts = &c->host_index[s];
		}
	}
	if (find_racks(c, t) || find_zones(c, t))
		goto oom;
	return 0;
oom:
	wl_cluster_free(c);
	return wl_err_set(err, "%s: out of memory for the cluster", t->path);
}

void wl_cluster_free(struct wl_cluster *c)
{
	for (uint32_t r = 0; c->racks && r < c->n_racks; r++)
		free(c->racks[r].servers);
	free(c->racks);
	free(c->servers);
	free(c->host_index);
	memset(c, 0, sizeof(*c));
}

/* --------------------------------------------------------------- policies */

uint64_t wl_sched_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* What a policy works with: the owners so far, the job, where its servers go. */
struct pick {
	const struct wl_cluster *c;
	uint32_t *owner;
	uint32_t job;  /* index of the place */
	uint32_t need; /* servers */
	struct wl_place *p;
	uint64_t *rng;
};

static void take(struct pick *k, uint32_t s)
{
	k->owner[s] = k->job;
	k->p->servers[k->p->n++] = s;
}

static uint32_t rack_free(const struct pick *k, uint32_t r)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < k->c->racks[r].n; i++)
		n += k->owner[k->c->racks[r].servers[i]] == FREE;
	return n;
}

/* Take up to `left` free servers of rack r in index order; returns how many. */
static uint32_t fill_rack(struct pick *k, uint32_t r, uint32_t left)
{
	uint32_t got = 0;
	for (uint32_t i = 0; i < k->c->racks[r].n && got < left; i++) {
		uint32_t s = k->c->racks[r].servers[i];
		if (k->owner[s] == FREE) {
			take(k, s);
			got++;
		}
	}
	return got;
}

static uint32_t zone_free(const struct pick *k, uint32_t z)
{
	uint32_t n = 0;
	for (uint32_t r = 0; r < k->c->n_racks; r++)
		if (k->c->racks[r].zone == z)
			n += rack_free(k, r);
	return n;
}

/* Racks of zone z by free servers, most first (then index); returns how many. */
static uint32_t racks_by_free(const struct pick *k, uint32_t z, uint32_t *order, uint32_t *nfree)
{
	uint32_t n = 0;
	for (uint32_t r = 0; r < k->c->n_racks; r++) {
		if (k->c->racks[r].zone != z)
			continue;
		uint32_t f = rack_free(k, r), i = n++;
		for (; i > 0 && nfree[i - 1] < f; i--) { /* insertion: stable */
			order[i] = order[i - 1];
			nfree[i] = nfree[i - 1];
		}
		order[i] = r;
		nfree[i] = f;
	}
	return n;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * packed: the zone where the job takes the fewest racks (the freest racks
 * first); those racks in index order, each filled. Returns 0, 1 when no zone holds it, -1 when out of memory.
 */
static int place_packed(struct pick *k)
{
	const struct wl_cluster *c = k->c;
	uint32_t *order = malloc(2 * (c->n_racks + 1) * sizeof(uint32_t)), *nfree;
	uint32_t best = FREE, best_racks = FREE;
	if (!order)
		return -1;
	nfree = order + c->n_racks + 1;
	for (uint32_t z = 0; z < c->n_zones; z++) {
		uint32_t n = racks_by_free(k, z, order, nfree), sum = 0, used = 0;
		while (used < n && sum < k->need)
			sum += nfree[used++];
		if (sum >= k->need && used < best_racks) {
			best = z;
			best_racks = used;
		}
	}
	if (best != FREE) {
		racks_by_free(k, best, order, nfree);
		qsort(order, best_racks, sizeof(*order), cmp_u32);
		for (uint32_t i = 0, left = k->need; i < best_racks; i++)
			left -= fill_rack(k, order[i], left);
	}
	free(order);
	return best == FREE;
}

/* spread: one free server of each rack in turn, from rack 0, until the job has its servers. */
static void place_spread(struct pick *k)
{
	while (k->p->n < k->need)
		for (uint32_t r = 0; r < k->c->n_racks && k->p->n < k->need; r++)
			fill_rack(k, r, 1);
}

/* random: a partial Fisher-Yates shuffle of the free servers; -1 when out of memory. */
static int place_random(struct pick *k)
{
	uint32_t *pool = malloc(k->c->n_servers * sizeof(*pool)), n = 0;
	if (!pool)
		return -1;
	for (uint32_t s = 0; s < k->c->n_servers; s++)
		if (k->owner[s] == FREE)
			pool[n++] = s;
	for (uint32_t i = 0; i < k->need; i++) {
		/* a uniform index in [i, n): Lemire's multiply-shift, no division */
		uint64_t span = n - i;
		uint32_t j = i + (uint32_t)(((unsigned __int128)wl_sched_rand(k->rng) * span) >> 64);
		uint32_t s = pool[j];
		pool[j] = pool[i];
		pool[i] = s;
		take(k, s);
	}
	free(pool);
	return 0;
}

/*
 * topology-aware, after Meta (Gangidi et al., "RDMA over Ethernet for
 * Distributed AI Training at Meta Scale", SIGCOMM'24): the fabric is AI
 * zones of racks, full bisection inside a zone and oversubscribed between
 * zones through the ATSWs, so the paper's scheduler keeps a job inside a
 * zone where it can and assigns ranks in topology order, which keeps a ring's
 * neighbours under one RTSW and its traffic off the ATSW layer (our
 * experiments/FINDINGS.md, e1-order-128: 2 of 128 ring hops leave a zone in
 * that order, against 64 in a random one). Our reading, as a rule: the zone
 * that holds the whole job with the least room left (best fit, so a large
 * free zone stays whole for a large job), its racks filled in order; a job no
 * zone holds takes the freest zones, each filled in rack order, so its ring
 * leaves a zone only where the job does.
 */
static void place_topo_aware(struct pick *k)
{
	const struct wl_cluster *c = k->c;
	uint32_t best = FREE, best_free = FREE;

	for (uint32_t z = 0; z < c->n_zones; z++) {
		uint32_t f = zone_free(k, z);
		if (f >= k->need && f < best_free) {
			best = z;
			best_free = f;
		}
	}
	while (k->p->n < k->need) {
		uint32_t z = best;
		if (z == FREE) { /* no zone holds it: the freest zone left */
			uint32_t most = 0;
			for (uint32_t y = 0; y < c->n_zones; y++) {
				uint32_t f = zone_free(k, y);
				if (f > most) {
					most = f;
					z = y;
				}
			}
			if (z == FREE)
				return; /* not reached: the caller checked the free count */
		}
		for (uint32_t r = 0; r < c->n_racks && k->p->n < k->need; r++)
			if (c->racks[r].zone == z)
				fill_rack(k, r, k->need - k->p->n);
	}
}

/* --------------------------------------------------------------- schedule */

/* Distinct racks and zones, and ring hops between them; -1 when out of memory. */
static int measure(const struct wl_cluster *c, struct wl_place *p)
{
	bool *seen = calloc(c->n_racks + c->n_zones, sizeof(*seen));

	if (!seen)
		return -1;
	for (uint32_t i = 0; i < p->n; i++) {
		const struct wl_cserver *a = &c->servers[p->servers[i]];
		const struct wl_cserver *b = &c->servers[p->servers[(i + 1) % p->n]];
		p->rack_hops += p->n > 1 && a->rack != b->rack;
		p->zone_hops += p->n > 1 && a->zone != b->zone;
		p->racks += !seen[a->rack];
		p->zones += !seen[c->n_racks + a->zone];
		seen[a->rack] = seen[c->n_racks + a->zone] = true;
	}
	free(seen);
	return 0;
}

static uint32_t free_servers(const struct wl_cluster *c, const uint32_t *owner)
{
	uint32_t n = 0;
	for (uint32_t s = 0; s < c->n_servers; s++)
		n += owner[s] == FREE;
	return n;
}

/* Place one job; 0 placed, 1 refused (p->msg), -1 out of memory. */
static int place_job(struct pick *k, const char *file)
{
	const struct wl_cluster *c = k->c;
	const struct wl_job *j = k->p->job;
	uint32_t g = c->gpus_per_server, nfree = free_servers(c, k->owner);

	if (j->gpus % g) {
		snprintf(k->p->msg, sizeof(k->p->msg),
			 "%s:%d: job %s: gpus: %u is not a multiple of a server's %u GPUs", file,
			 j->line, j->name, j->gpus, g);
		return 1;
	}
	k->need = j->gpus / g;
	if (k->need > nfree) {
		snprintf(k->p->msg, sizeof(k->p->msg),
			 "%s:%d: job %s does not fit: it needs %u GPUs, %u are free", file, j->line,
			 j->name, j->gpus, nfree * g);
		return 1;
	}
	k->p->servers = malloc(k->need * sizeof(uint32_t));
	if (!k->p->servers)
		return -1;
	int rc = 0;
	switch (k->p->policy) {
	case WL_POLICY_PACKED:
		rc = place_packed(k);
		if (rc > 0) {
			uint32_t most = 0;
			for (uint32_t z = 0; z < c->n_zones; z++)
				if (zone_free(k, z) > most)
					most = zone_free(k, z);
			snprintf(k->p->msg, sizeof(k->p->msg),
				 "%s:%d: job %s does not fit in one zone (packed): it needs %u GPUs, "
				 "%u are free in the freest zone (%u in all)",
				 file, j->line, j->name, j->gpus, most * g, nfree * g);
			return 1;
		}
		break;
	case WL_POLICY_SPREAD:
		place_spread(k);
		break;
	case WL_POLICY_RANDOM:
		rc = place_random(k);
		break;
	default:
		place_topo_aware(k);
		break;
	}
	if (rc || measure(c, k->p))
		return -1;
	k->p->placed = 1;
	return 0;
}

/* Job indexes by arrival, then file order: an insertion sort, stable. */
static void sort_by_arrival(const struct wl_job *jobs, uint32_t *order, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t x = i, k = i;
		for (; k > 0 && jobs[order[k - 1]].arrival_ns > jobs[x].arrival_ns; k--)
			order[k] = order[k - 1];
		order[k] = x;
	}
}

int wl_sched_place(const struct wl_cluster *c, const struct wl_jobs *js, int policy,
		   uint64_t seed, struct wl_schedule *s, struct wl_err *err)
{
	uint32_t *order = malloc((js->n + 1) * sizeof(*order));
	uint64_t rng = seed;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	s->places = calloc(js->n + 1, sizeof(*s->places));
	s->owner = malloc((c->n_servers + 1) * sizeof(*s->owner));
	if (!order || !s->places || !s->owner) {
		free(order);
		return wl_err_set(err, "%s: out of memory for the schedule", js->file);
	}
	for (uint32_t i = 0; i < c->n_servers; i++)
		s->owner[i] = FREE;
	sort_by_arrival(js->jobs, order, js->n);
	int fallback = policy >= 0 ? policy : js->policy >= 0 ? js->policy : WL_POLICY_TOPO_AWARE;
	for (s->n = 0; s->n < js->n && rc >= 0; s->n++) {
		struct wl_place *p = &s->places[s->n];
		p->job = &js->jobs[order[s->n]];
		p->policy = (enum wl_policy)(p->job->policy >= 0 ? p->job->policy : fallback);
		struct pick k = {.c = c, .owner = s->owner, .job = s->n, .p = p, .rng = &rng};
		int r = place_job(&k, js->file);
		if (r < 0)
			rc = wl_err_set(err, "%s: out of memory placing job %s", js->file, p->job->name);
		else if (r > 0)
			s->refused++;
	}
	free(order);
	return rc < 0 ? -1 : s->refused > 0;
}

void wl_schedule_free(struct wl_schedule *s)
{
	for (uint32_t i = 0; s->places && i < s->n; i++)
		free(s->places[i].servers);
	free(s->places);
	free(s->owner);
	memset(s, 0, sizeof(*s));
}

size_t wl_place_hosts(const struct wl_cluster *c, const struct wl_place *p, char *buf,
		      size_t len)
{
	size_t off = 0;
	for (uint32_t i = 0; i < p->n; i++)
		for (uint32_t g = 0; g < c->gpus_per_server; g++) {
			const char *name = c->topo->hosts[c->servers[p->servers[i]].hosts[g]].name;
			int n = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0, "%s%s",
					 off ? "," : "", name);
			off += n > 0 ? (size_t)n : 0;
		}
	if (len && off == 0)
		buf[0] = '\0';
	return off;
}
