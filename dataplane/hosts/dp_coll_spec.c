/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_coll_spec: a --coll SPEC read into a collective. nic_emul's one key table
 * (ne_coll_spec_parse) reads every key; this layer turns hosts= into ranks on
 * the topology, checks the settings together, and answers the questions
 * rocelab-dp asks of a spec before the fabric exists.
 */
#include "dp_coll_priv.h"
#include "nc_ring.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/*
 * The ranks of a --coll's hosts= text (NULL: every emulated host, at most
 * NE_COLL_MAX_RANKS) as topology host indices into out (room for
 * t->n_hosts). Returns the count, or -1 with "hosts=...: why" in msg.
 */
static int coll_rank_hosts(const struct topo *t, const char *hosts, uint32_t *out, char *msg,
			   size_t cap)
{
	uint32_t n = 0;

	if (hosts == NULL) {
		for (uint32_t i = 0; i < t->n_hosts && n < NE_COLL_MAX_RANKS; i++)
			if (t->hosts[i].attach == TOPO_ATTACH_EMULATED)
				out[n++] = i;
		return (int)n;
	}
	char *buf = strdup(hosts), *save = NULL; /* (a list of a thousand hosts is long) */
	int rc = buf ? 0 : -1;
	if (buf == NULL)
		snprintf(msg, cap, "out of memory");
	for (char *h = buf ? strtok_r(buf, "+", &save) : NULL; h && rc == 0;
	     h = strtok_r(NULL, "+", &save)) {
		int hi = topo_host_by_name(t, h);
		if (hi < 0 || t->hosts[hi].attach != TOPO_ATTACH_EMULATED) {
			snprintf(msg, cap, "hosts=%.*s: %s '%s' %s", 40, hosts,
				 hi < 0 ? "no host" : "host", h,
				 hi < 0 ? "in the topology" : "is not an emulated NIC (attach: emulated)");
			rc = -1;
		}
		for (uint32_t r = 0; r < n && rc == 0; r++)
			if (out[r] == (uint32_t)hi) {
				snprintf(msg, cap, "hosts=%.*s: host '%s' twice", 40, hosts, h);
				rc = -1; /* a host at most once */
			}
		if (rc == 0 && n == NE_COLL_MAX_RANKS) {
			snprintf(msg, cap, "hosts=: more than %u ranks", NE_COLL_MAX_RANKS);
			rc = -1;
		}
		if (rc == 0)
			out[n++] = (uint32_t)hi;
	}
	free(buf);
	return rc < 0 ? -1 : (int)n;
}

/*
 * order=nccl: the n ranks' hosts (host[], in hosts= order) dealt again in
 * NCCL's ring order (nccl/nc_ring.h): servers in the order their first GPU
 * comes in host[], and inside each the GPUs of search channel 0's ring,
 * GPU 0, G-1, ..., 1, those of them that are ranks. The ring then enters and
 * leaves each server once. Every rank must be a GPU of a server. Returns 0,
 * or -1 with "order=nccl: why" in msg.
 */
int coll_order_nccl(const struct topo *t, uint32_t *host, uint32_t n, char *msg, size_t cap)
{
	struct nc_ring_cfg ring = {.servers = 1, .gpus = t->server_params.gpus_per_server, .channels = 1};
	uint32_t *out = calloc(n + 1, sizeof(*out)), m = 0;
	bool *rank = calloc(t->n_hosts + 1, sizeof(*rank)), *seen = calloc(topo_servers(t) + 1, sizeof(*seen));
	int rc = out && rank && seen ? 0 : -1;

	if (rc)
		snprintf(msg, cap, "out of memory");
	for (uint32_t r = 0; rc == 0 && r < n; r++) {
		rank[host[r]] = true;
		if (topo_host_server(t, host[r]) < 0) {
			snprintf(msg, cap, "order=nccl: host '%s' is not a GPU of a server (no servers: "
				 "leave order=hosts)", t->hosts[host[r]].name);
			rc = -1;
		}
	}
	for (uint32_t r = 0; rc == 0 && r < n; r++) {
		uint32_t s = (uint32_t)topo_host_server(t, host[r]), g_n = 0;
		const uint32_t *gpu = topo_server_hosts(t, s, &g_n);
		if (seen[s])
			continue;
		seen[s] = true;
		for (uint32_t pos = 0; pos < g_n; pos++) {
			int g = nc_ring_gpu_at(&ring, 0, pos);
			if (g >= 0 && (uint32_t)g < g_n && rank[gpu[g]])
				out[m++] = gpu[g];
		}
	}
	if (rc == 0)
		memcpy(host, out, n * sizeof(*host));
	free(out);
	free(rank);
	free(seen);
	return rc;
}

/*
 * A --coll SPEC read and checked against topology t: the keys, the ranks,
 * the settings together; ranks (room t->n_hosts, or NULL) gets the ranks'
 * hosts. Returns the rank count, or -1 with "--coll: why" in err.
 */
static int coll_read(const struct topo *t, const char *spec, struct ne_coll_spec *s,
		     uint32_t *ranks, char *err, size_t errlen)
{
	char why[448];
	uint32_t *own = ranks ? NULL : calloc(t->n_hosts + 1, sizeof(*own));
	int n = -1;

	ne_coll_spec_default(s);
	if (!ranks && !own)
		snprintf(why, sizeof(why), "out of memory");
	else if (ne_coll_spec_parse(s, spec, why, sizeof(why)) == 0 &&
		 (n = coll_rank_hosts(t, s->hosts, ranks ? ranks : own, why, sizeof(why))) >= 0) {
		if (s->order_nccl &&
		    coll_order_nccl(t, ranks ? ranks : own, (uint32_t)n, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "--coll: %s", why);
			free(own);
			return -1;
		}
		s->cfg.nranks = (uint32_t)n;
		s->cfg.bytes = s->size_max;
		if (n < 2)
			snprintf(why, sizeof(why), "needs at least 2 emulated hosts (has %d)", n);
		else if (s->cfg.root >= (uint32_t)n)
			snprintf(why, sizeof(why), "root=%u: outside the %d ranks (0..%d)",
				 s->cfg.root, n, n - 1);
		else if (ne_coll_p2p_check(&s->cfg, why, sizeof(why)) != 0)
			; /* (why says which pair or shift) */
		else if (ne_coll_config_check(&s->cfg) != 0)
			snprintf(why, sizeof(why), "'%.160s': inconsistent settings", spec);
		else
			why[0] = '\0';
		n = why[0] ? -1 : n;
	}
	free(own);
	if (n < 0)
		snprintf(err, errlen, "--coll: %s", why);
	return n;
}

int dp_coll_spec_check(const struct topo *t, const char *spec, char *err, size_t errlen)
{
	struct ne_coll_spec s;
	int n = coll_read(t, spec, &s, NULL, err, errlen);

	ne_coll_spec_free(&s);
	return n < 0 ? -1 : 0;
}

void coll_free(struct dp_coll *c)
{
	if (c == NULL)
		return;
	ne_coll_destroy(c->run);
	if (c->series)
		fclose(c->series);
	free(c->rank_nic);
	free(c->server_of);
	free(c->gpu_of);
	free(c->nics);
	free(c->lane);
	free(c->lane_run);
	free(c->lane_of);
	free(c->lane_left);
	free(c->pwake);
	free(c->done);
	free(c->held);
	free(c->first_qpn);
	free(c);
}

int dp_nics_coll_view(const struct dp_nics *ns, uint32_t i, struct dp_coll_view *out)
{
	if (i >= ns->n_colls)
		return -ENOENT;
	const struct dp_coll *c = ns->colls[i];
	*out = (struct dp_coll_view){.id = c->id, .spec = c->spec, .cfg = &c->cfg, .sizes = c->done,
				     .n_sizes = c->n_done, .finished = c->finished, .failed = c->failed};
	return 0;
}

void dp_nics_tag_colls(struct dp_nics *ns, bool on)
{
	ns->coll_tags = on;
}

/*
 * The hosts of a parsed collective c become its ranks, unless one already
 * is a rank of another collective. Returns 0, or -1 with a message.
 */
int coll_take_ranks(struct dp_nics *ns, struct dp_coll *c, char *err, size_t errlen)
{
	for (uint32_t r = 0; r < c->cfg.nranks; r++) {
		const struct dp_nic_host *nh = &ns->h[c->rank_nic[r]];
		if (nh->coll != NULL) {
			snprintf(err, errlen, "--coll: host %s is a rank of collective %u already "
				 "(collectives run on disjoint hosts: give each its hosts=)",
				 ns->topo->hosts[nh->host].name, nh->coll->id);
			return -1;
		}
	}
	for (uint32_t r = 0; r < c->cfg.nranks; r++) {
		struct dp_nic_host *nh = &ns->h[c->rank_nic[r]];
		c->nics[r] = nh->nic;
		nh->coll_rank = (int32_t)r;
		nh->coll = c;
	}
	return 0;
}

/*
 * spec's keys read into s (hosts= as text; free it with ne_coll_spec_free),
 * errors left to the real parse: false when it has one.
 */
static bool coll_peek(const char *spec, struct ne_coll_spec *s)
{
	char why[8];

	ne_coll_spec_default(s);
	return spec && ne_coll_spec_parse(s, spec, why, sizeof(why)) == 0;
}

bool dp_nics_coll_splits(const char *spec)
{
	struct ne_coll_spec s;
	bool ok = coll_peek(spec, &s) && s.cfg.iters == 1 && s.cfg.warmup_iters == 0;

	ne_coll_spec_free(&s);
	return ok;
}

bool dp_nics_coll_sweeps(const char *spec)
{
	struct ne_coll_spec s;
	bool sweeps = coll_peek(spec, &s) && s.size_min < s.size_max;

	ne_coll_spec_free(&s);
	return sweeps;
}

/*
 * The servers of c's ranks (hosts host[0..nranks-1]) into c->cfg, when the
 * topology has servers: a GPU's rank gets its server's index, a rank that is
 * no GPU of a server a server of its own (n_servers + rank), so that only
 * GPUs of one server talk over NVLink (ne_coll.h). The NVLink rate and
 * latency are the topology's (its bit/s / 8). With order=nccl (every rank a
 * GPU: coll_order_nccl checked it) each rank's GPU too, so that every
 * channel takes NCCL's ring of its own (ne_coll.h, "Channel rings").
 * 0, or -1 (out of memory).
 */
int coll_servers(const struct topo *t, struct dp_coll *c, const uint32_t *host, bool order_nccl)
{
	if (topo_servers(t) == 0)
		return 0; /* (no server: the run is as before servers existed) */
	c->server_of = calloc(c->cfg.nranks, sizeof(*c->server_of));
	if (c->server_of == NULL)
		return -1;
	for (uint32_t r = 0; r < c->cfg.nranks; r++) {
		int s = topo_host_server(t, host[r]);
		c->server_of[r] = s >= 0 ? (uint32_t)s : topo_servers(t) + r;
	}
	c->cfg.server_of = c->server_of;
	if (order_nccl) {
		c->gpu_of = calloc(c->cfg.nranks, sizeof(*c->gpu_of));
		if (c->gpu_of == NULL)
			return -1;
		for (uint32_t r = 0; r < c->cfg.nranks; r++)
			c->gpu_of[r] = (uint32_t)topo_host_gpu(t, host[r]);
		c->cfg.gpu_of = c->gpu_of;
	}
	c->cfg.nvlink_Bps = t->server_params.nvlink_bps / 8;
	c->cfg.nvlink_lat_ns = t->server_params.nvlink_lat_ns;
	return 0;
}

int coll_servers_split_check(const struct dp_coll *c, char *err, size_t errlen)
{
	const struct topo *t = c->ns->topo;

	for (uint32_t a = 0; c->server_of && a < c->cfg.nranks; a++)
		for (uint32_t b = a + 1; b < c->cfg.nranks; b++) {
			const struct dp_nic_host *ha = &c->ns->h[c->rank_nic[a]], *hb = &c->ns->h[c->rank_nic[b]];
			if (c->server_of[a] != c->server_of[b] || ha->lane == hb->lane)
				continue;
			snprintf(err, errlen, "--coll: server %s spans partitions %u (host %s) and %u "
				 "(host %s): its NVLink hops need its GPUs in one partition "
				 "(fewer --workers, or the server's GPUs on one leaf)",
				 t->servers[c->server_of[a]].name, ha->lane, t->hosts[ha->host].name,
				 hb->lane, t->hosts[hb->host].name);
			return -1;
		}
	return 0;
}

/* dp_nics_add_coll's parse and checks of spec into c. Returns 0, or -1 with a message. */
int coll_parse_spec(struct dp_nics *ns, struct dp_coll *c, const char *spec, char *err,
			   size_t errlen)
{
	const struct topo *t = ns->topo;
	uint32_t *host = calloc(t->n_hosts + 1, sizeof(*host));
	struct ne_coll_spec s;

	snprintf(c->spec, sizeof(c->spec), "%s", spec);
	c->rank_nic = calloc(ns->n + 1, sizeof(*c->rank_nic));
	c->nics = calloc(ns->n + 1, sizeof(*c->nics));
	if (!c->rank_nic || !c->nics || !host) {
		free(host);
		snprintf(err, errlen, "--coll: out of memory");
		return -1;
	}
	int n = coll_read(t, spec, &s, host, err, errlen);
	ne_coll_spec_free(&s);
	for (int r = 0; r < n; r++)
		c->rank_nic[r] = (uint32_t)ns->by_host[host[r]];
	if (n >= 0) {
		c->cfg = s.cfg;
		if (coll_servers(t, c, host, s.order_nccl) < 0) {
			snprintf(err, errlen, "--coll: out of memory");
			n = -1;
		} else if (c->cfg.algo == NE_COLL_ALGO_TREE && ne_coll_config_check(&c->cfg) != 0) {
			/* (the keys passed alone: the servers are what is wrong) */
			snprintf(err, errlen, "--coll: algo=tree: the ranks' servers have different "
					      "GPU counts; NCCL's tree needs the same count in each");
			n = -1;
		}
	}
	free(host);
	if (n < 0)
		return -1;
	if (!c->cfg.timeout_given)
		c->cfg.timeout = dp_nics_rc_timeout(ns);
	c->size_min = s.size_min;
	c->size_max = s.size_max;
	c->in_place = s.in_place;
	if (c->in_place && !(c->first_qpn = calloc(c->cfg.nranks, sizeof(*c->first_qpn)))) {
		snprintf(err, errlen, "--coll: out of memory");
		return -1;
	}
	return 0;
}

/* QPs a NIC needs for the --coll spec (read before the NICs exist); 0 without --coll. */
uint32_t dp_nics_coll_qps(const char *spec, uint32_t n_emulated)
{
	struct ne_coll_spec s;
	uint32_t ranks = n_emulated, room = 0;

	if (coll_peek(spec, &s)) { /* (no --coll, or a bad one: dp_nics_add_coll will say so) */
		if (s.hosts) { /* ranks named: one more than the '+' between them */
			ranks = 1;
			for (const char *c = s.hosts; *c; c++)
				ranks += *c == '+';
		}
		room = ne_coll_spec_qps_room(&s, ranks);
	}
	ne_coll_spec_free(&s);
	return room;
}
