/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Servers of GPUs (issue 40): a host entry with `server: NAME, gpu: I` is
 * GPU I of that server, an emulated host with its own NIC on its own leaf
 * port (Meta's Grand Teton: 8 H100s per server, each with its own 400G RNIC,
 * docs/explanation/FACTS-NCCL-RNIC.md). The `servers:` section sets the GPUs per server
 * and the NVLink and PCIe parameters nccl/nc_nvlink models; this file parses
 * it, checks the servers after the hosts are built and answers the queries
 * of topo.h.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "nc_nvlink.h"
#include "topo_priv.h"

/* Grand Teton: 8 GPUs per server (docs/explanation/FACTS-NCCL-RNIC.md). */
#define SERVER_DEFAULT_GPUS 8
/* The model's rates are bytes/s; the topology's are bit/s. */
#define BITS_PER_BYTE 8

const char *const topo_servers_keys[] = {
	"gpus_per_server", "nvlink_rate", "nvlink_latency", "pcie_rate", "pcie_latency", NULL,
};

void topo_builtin_servers(struct topo_server_params *p)
{
	/* H100 SXM with NVLink 4 and a PCIe Gen5 x16 NIC: sources in nc_nvlink.h */
	p->gpus_per_server = SERVER_DEFAULT_GPUS;
	p->nvlink_bps = NC_NVLINK_H100_BPS * BITS_PER_BYTE;
	p->nvlink_lat_ns = NC_NVLINK_H100_LAT_NS;
	p->pcie_bps = NC_PCIE_GEN5_X16_BPS * BITS_PER_BYTE;
	p->pcie_lat_ns = 0; /* nc_nvlink: not modelled unless set */
}

int topo_servers_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
		      int kl)
{
	struct spec *s = obj;
	struct topo_server_params *p = &s->servers;

	if (!strcmp(key, "gpus_per_server")) {
		uint64_t g;
		s->gpus_line = topo_yaml_line(v, kl);
		if (topo_get_uint(c, v, key, kl, 1, UINT32_MAX, &g))
			return -1;
		/* a server's GPUs may all sit on one leaf (Meta's layout) */
		if (g > TOPO_MAX_GPUS_PER_SERVER)
			return topo_yaml_fail(c, s->gpus_line,
					      "gpus_per_server: a server of %" PRIu64
					      " GPUs is larger than a leaf's %d host ports",
					      g, TOPO_MAX_HOSTS_PER_LEAF);
		p->gpus_per_server = (uint32_t)g;
		return 0;
	}
	if (!strcmp(key, "nvlink_rate") || !strcmp(key, "pcie_rate"))
		return topo_get_scaled(c, v, key, kl, topo_rate_units, false, "rate", RATE_HINT, 1,
				       MAX_RATE, key[0] == 'n' ? &p->nvlink_bps : &p->pcie_bps);
	return topo_get_scaled(c, v, key, kl, topo_time_units, true, "time", TIME_HINT, 0,
			       MAX_DELAY, key[0] == 'n' ? &p->nvlink_lat_ns : &p->pcie_lat_ns);
}

/* One GPU: the server it names and its host, for grouping by name. */
struct gpu_ref {
	const char *server;
	uint32_t host;
};

static int gpu_ref_cmp(const void *a, const void *b)
{
	const struct gpu_ref *x = a, *y = b;
	int d = strcmp(x->server, y->server);
	if (d)
		return d;
	return x->host < y->host ? -1 : x->host > y->host; /* file order within a server */
}

/* A run of one server's GPUs in the sorted refs: where it starts, its first host. */
struct run {
	uint32_t start, n, first_host;
};

static int run_cmp(const void *a, const void *b)
{
	const struct run *x = a, *y = b;
	return x->first_host < y->first_host ? -1 : x->first_host > y->first_host;
}

/* Host i's server and gpu keys: both or neither, a GPU in range, emulated. */
static int check_gpu_host(struct topo_yaml_ctx *c, const struct spec *s, const struct topo *t,
			  uint32_t i)
{
	const struct host_spec *h = &s->ho[i];
	uint32_t g = s->servers.gpus_per_server;

	if (h->server[0] && h->gpu < 0)
		return topo_yaml_fail(c, h->server_line,
				      "host '%s': 'server' needs 'gpu' (its GPU index, 0..%" PRIu32
				      ")",
				      h->name, g - 1);
	if (!h->server[0])
		return topo_yaml_fail(c, h->gpu_line,
				      "host '%s': 'gpu' needs 'server' (the server it is a GPU of)",
				      h->name);
	if ((uint32_t)h->gpu >= g)
		return topo_yaml_fail(c, h->gpu_line,
				      "host '%s': gpu %d is out of range: a server has %" PRIu32
				      " GPUs (0..%" PRIu32 ", gpus_per_server under servers:)",
				      h->name, h->gpu, g, g - 1);
	if (t->hosts[i].attach != TOPO_ATTACH_EMULATED)
		return topo_yaml_fail(c, h->line,
				      "host '%s': GPU %d of server '%s' is attach: %s; a server's "
				      "GPUs are emulated hosts (attach: emulated, each its own NIC)",
				      h->name, h->gpu, h->server, topo_attach_name(t->hosts[i].attach));
	return 0;
}

/* The GPUs r[0..n) of one server into sv: each GPU index once, none missing. */
static int fill_server(struct topo_yaml_ctx *c, const struct spec *s, struct topo *t,
		       const struct gpu_ref *r, uint32_t n, struct topo_server *sv)
{
	uint32_t g = s->servers.gpus_per_server;
	const struct host_spec *first = &s->ho[r[0].host];

	sv->hosts = malloc(g * sizeof(*sv->hosts));
	if (!sv->hosts)
		return topo_yaml_fail(c, 0, "out of memory");
	for (uint32_t k = 0; k < g; k++)
		sv->hosts[k] = UINT32_MAX;
	memcpy(sv->name, first->server, sizeof(sv->name));
	sv->line = first->line;
	for (uint32_t k = 0; k < n; k++) {
		const struct host_spec *h = &s->ho[r[k].host];
		uint32_t *slot = &sv->hosts[h->gpu];
		if (*slot != UINT32_MAX)
			return topo_yaml_fail(c, h->gpu_line,
					      "host '%s': server '%s' has GPU %d twice (also host "
					      "'%s', line %d)",
					      h->name, h->server, h->gpu, s->ho[*slot].name,
					      s->ho[*slot].line);
		*slot = r[k].host;
		t->hosts[r[k].host].gpu = h->gpu;
	}
	for (uint32_t k = 0; k < g; k++)
		if (sv->hosts[k] == UINT32_MAX)
			return topo_yaml_fail(c, sv->line,
					      "server '%s' has %" PRIu32 " of its %" PRIu32
					      " GPUs: no host is its gpu %" PRIu32
					      " (every GPU of a server is a host)",
					      sv->name, n, g, k);
	return 0;
}

/* The runs of server names in the sorted refs, ordered by their first host. */
static struct run *find_runs(const struct gpu_ref *r, uint32_t n, uint32_t *n_runs)
{
	struct run *runs = calloc(n, sizeof(*runs)); /* at most one per GPU */
	if (!runs)
		return NULL;
	*n_runs = 0;
	for (uint32_t k = 0; k < n;) {
		uint32_t end = k + 1;
		while (end < n && !strcmp(r[end].server, r[k].server))
			end++;
		/* r is sorted by host within a server: r[k] is its first in the file */
		runs[(*n_runs)++] = (struct run){.start = k, .n = end - k, .first_host = r[k].host};
		k = end;
	}
	qsort(runs, *n_runs, sizeof(*runs), run_cmp);
	return runs;
}

/* The sorted GPUs into t->servers, in the order of their first GPU in the file. */
static int group_servers(struct topo_yaml_ctx *c, const struct spec *s, struct topo *t,
			 const struct gpu_ref *r, uint32_t n)
{
	uint32_t n_runs = 0;
	struct run *runs = find_runs(r, n, &n_runs);
	int rc = 0;

	t->servers = runs ? calloc(n_runs, sizeof(*t->servers)) : NULL;
	if (!t->servers) {
		free(runs);
		return topo_yaml_fail(c, 0, "out of memory");
	}
	for (uint32_t i = 0; i < n_runs && rc == 0; i++) {
		/* counted before filling, so that topo_free() frees a partial one */
		struct topo_server *sv = &t->servers[t->n_servers++];
		rc = fill_server(c, s, t, r + runs[i].start, runs[i].n, sv);
		for (uint32_t k = 0; k < runs[i].n && rc == 0; k++)
			t->hosts[r[runs[i].start + k].host].server = (int)i;
	}
	free(runs);
	return rc;
}

int topo_build_servers(struct topo_yaml_ctx *c, const struct spec *s, struct topo *t)
{
	uint32_t n = 0;
	int rc = 0;

	t->server_params = s->servers;
	for (uint32_t i = 0; i < t->n_hosts; i++) {
		t->hosts[i].server = -1;
		t->hosts[i].gpu = -1;
		if (s->ho[i].server[0] || s->ho[i].gpu >= 0) {
			if (check_gpu_host(c, s, t, i))
				return -1;
			n++;
		}
	}
	if (n == 0)
		return 0;
	struct gpu_ref *r = calloc(n, sizeof(*r));
	if (!r)
		return topo_yaml_fail(c, 0, "out of memory");
	for (uint32_t i = 0, k = 0; i < t->n_hosts; i++)
		if (s->ho[i].server[0])
			r[k++] = (struct gpu_ref){.server = s->ho[i].server, .host = i};
	qsort(r, n, sizeof(*r), gpu_ref_cmp);
	rc = group_servers(c, s, t, r, n);
	free(r);
	return rc;
}

/* ---------------------------------------------------------------- queries */

uint32_t topo_servers(const struct topo *t)
{
	return t ? t->n_servers : 0;
}

int topo_host_server(const struct topo *t, uint32_t h)
{
	if (!t || h >= t->n_hosts || t->hosts[h].server < 0 ||
	    (uint32_t)t->hosts[h].server >= t->n_servers)
		return -1;
	return t->hosts[h].server;
}

int topo_host_gpu(const struct topo *t, uint32_t h)
{
	return topo_host_server(t, h) < 0 ? -1 : t->hosts[h].gpu;
}

const uint32_t *topo_server_hosts(const struct topo *t, uint32_t s, uint32_t *n)
{
	if (n)
		*n = 0;
	if (!t || s >= t->n_servers)
		return NULL;
	if (n)
		*n = t->server_params.gpus_per_server;
	return t->servers[s].hosts;
}

int topo_server_by_name(const struct topo *t, const char *name)
{
	if (!t || !name)
		return -1;
	for (uint32_t i = 0; i < t->n_servers; i++)
		if (!strcmp(t->servers[i].name, name))
			return (int)i;
	return -1;
}

uint64_t topo_host_nic_rate_bps(const struct topo *t, uint32_t h)
{
	if (!t || h >= t->n_hosts)
		return 0;
	uint64_t link = t->links[t->hosts[h].link].rate_bps;
	uint64_t pcie = t->server_params.pcie_bps;
	/* (nc_nvlink_gpu_nic_Bps's min, in the topology's bit/s) */
	return topo_host_server(t, h) >= 0 && pcie < link ? pcie : link;
}
