/* SPDX-License-Identifier: BSD-3-Clause */
/* One fabric over several rocelab-dp processes: options, the cut and its VLAN ids (dp_peer.h; no DPDK call). */
#include "dp_peer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo_part.h"

int dp_peers_parse_process(struct dp_peers *p, const char *arg)
{
	unsigned k, n;
	char tail;

	if (sscanf(arg, "%u/%u%c", &k, &n, &tail) != 2 || n < 2 || n > DP_PEERS_MAX || k >= n)
		return -EINVAL;
	p->self = k;
	p->n = n;
	return 0;
}

int dp_peers_add(struct dp_peers *p, const char *devargs)
{
	if (p->n_given >= DP_PEERS_MAX - 1)
		return -E2BIG;
	/* stored in order; dp_peers_plan() moves them to their processes' slots */
	p->peer[p->n_given++].devargs = devargs;
	return 0;
}

uint32_t dp_peers_chan_part(const struct dp_peers *p, const struct topo *t, uint32_t i, bool to)
{
	/* channel i: link i / 2, from its end i % 2 to the other */
	return topo_part_of(p->part_sw, p->part_host, t->links[i / 2].end[(i % 2) ^ (unsigned)to]);
}

/* Every channel cut between two processes needs a VID. Returns 0, -EINVAL with a message. */
static int check_vids(const struct dp_peers *p, const struct topo *t, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < 2 * t->n_links; i++) {
		if (dp_peers_chan_part(p, t, i, false) == dp_peers_chan_part(p, t, i, true) || i + 1 <= DP_PEER_VID_MAX)
			continue;
		const struct topo_link *l = &t->links[i / 2];
		snprintf(err, errlen,
			 "%s:%d: link '%s' is cut between processes %u and %u, but its direction %u "
			 "(channel %u) would need VLAN id %u: a peer port names at most %u link "
			 "directions (802.1Q ids 1..%u); give the link's two ends one partition",
			 t->path, l->line, l->name, dp_peers_chan_part(p, t, i, false), dp_peers_chan_part(p, t, i, true),
			 i % 2, i, i + 1, DP_PEER_VID_MAX, DP_PEER_VID_MAX);
		return -EINVAL;
	}
	return 0;
}

/* The --peer options, in process order skipping self, into their processes' slots. */
static int place_peers(struct dp_peers *p, char *err, size_t errlen)
{
	if (p->n == 0) {
		if (p->n_given == 0)
			return 0;
		snprintf(err, errlen, "--peer needs --process K/N (which part of the fabric this process runs)");
		return -EINVAL;
	}
	if (p->n_given != p->n - 1) {
		snprintf(err, errlen, "--process %u/%u needs %u --peer (one per other process, in their "
			 "order), got %u", p->self, p->n, p->n - 1, p->n_given);
		return -EINVAL;
	}
	for (uint32_t k = p->n - 1; k > p->self; k--) /* peers after self move up one slot */
		p->peer[k].devargs = p->peer[k - 1].devargs;
	p->peer[p->self].devargs = NULL;
	return 0;
}

int dp_peers_plan(struct dp_peers *p, const struct topo *t, char *err, size_t errlen)
{
	int rc = place_peers(p, err, errlen);

	if (rc < 0 || p->n == 0)
		return rc;
	if (p->n > t->n_switches) {
		snprintf(err, errlen, "--process %u/%u: the topology has %u switches; each process "
			 "runs at least one", p->self, p->n, t->n_switches);
		return -EINVAL;
	}
	p->part_sw = calloc(t->n_switches, sizeof(*p->part_sw));
	p->part_host = calloc(t->n_hosts + 1, sizeof(*p->part_host));
	p->remote_host = calloc(t->n_hosts + 1, sizeof(*p->remote_host));
	if (!p->part_sw || !p->part_host || !p->remote_host) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = topo_partition(t, p->n, false, p->part_sw, p->part_host, err, errlen);
	if (rc < 0)
		return rc;
	for (uint32_t h = 0; h < t->n_hosts; h++)
		p->remote_host[h] = p->part_host[h] != p->self;
	return check_vids(p, t, err, errlen);
}

const bool *dp_peers_remote_hosts(const struct dp_peers *p)
{
	return p->n ? p->remote_host : NULL;
}

uint32_t dp_peers_part_of_host(const struct dp_peers *p, uint32_t h)
{
	return p->n ? p->part_host[h] : 0;
}

int dp_peers_eal_args(const struct dp_peers *p, char **argv, int *argc, int argv_cap)
{
	for (uint32_t k = 0; k < p->n; k++) {
		if (k == p->self)
			continue;
		size_t len = strlen(p->peer[k].devargs) + sizeof("--vdev=");
		char *a = malloc(len);
		if (a == NULL || *argc >= argv_cap) {
			free(a);
			return -E2BIG;
		}
		snprintf(a, len, "--vdev=%s", p->peer[k].devargs);
		argv[(*argc)++] = a;
	}
	return 0;
}

void dp_peers_plan_free(struct dp_peers *p)
{
	free(p->part_sw);
	free(p->part_host);
	free(p->remote_host);
	p->part_sw = p->part_host = NULL;
	p->remote_host = NULL;
}

int dp_peers_eal_failed(const struct dp_peers *p, int eal_errno, int rc, char *err, size_t errlen)
{
	size_t off = 0;

	if (rc == -EINVAL || eal_errno != ENODEV || p->n == 0)
		return rc;
	for (uint32_t k = 0; k < p->n && off < errlen; k++) {
		if (k == p->self)
			continue;
		int w = snprintf(err + off, errlen - off, "%s --peer '%s'",
				 off ? " or" : "DPDK has no driver for", p->peer[k].devargs);
		if (w < 0)
			break;
		off += (size_t)w;
	}
	if (off < errlen)
		snprintf(err + off, errlen - off, " (EAL names the device above)");
	return -EINVAL;
}
