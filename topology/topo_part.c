/* SPDX-License-Identifier: BSD-3-Clause */
/* Cutting a fabric into partitions (topo_part.h). */
#include "topo_part.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

/*
 * The topology file's cut (switch key partition): every switch has one,
 * below the number of workers, and every partition holds a switch. Returns
 * 0 (also when the file gives none), or -EINVAL with a message.
 */
static int check_file_cut(const struct topo *t, uint32_t n, char *err, size_t errlen)
{
	uint32_t given = 0;
	bool used[TOPO_MAX_PARTITIONS] = {false};

	for (uint32_t i = 0; i < t->n_switches; i++)
		given += t->switches[i].partition >= 0;
	if (given == 0)
		return 0;
	for (uint32_t i = 0; i < t->n_switches; i++) {
		const struct topo_switch *sw = &t->switches[i];
		if (sw->partition < 0) {
			snprintf(err, errlen, "%s:%d: switch '%s' has no partition (give every switch one, or none)",
				 t->path, sw->line, sw->name);
			return -EINVAL;
		}
		if ((uint32_t)sw->partition >= n) {
			snprintf(err, errlen, "%s:%d: switch '%s' is in partition %d, but there are %u (0..%u)",
				 t->path, sw->line, sw->name, sw->partition, n, n - 1);
			return -EINVAL;
		}
		used[sw->partition] = true;
	}
	for (uint32_t p = 0; p < n; p++)
		if (!used[p]) {
			snprintf(err, errlen, "%s: no switch is in partition %u of %u", t->path, p, n);
			return -EINVAL;
		}
	return 0;
}

static bool host_emulated(const struct topo *t, uint32_t h)
{
	return t->hosts[h].attach == TOPO_ATTACH_EMULATED;
}

/* The cut (topo_part.h): the file's, or the default. */
static void plan(const struct topo *t, uint32_t nparts, bool nics_with_leaf, uint32_t *part_sw,
		 uint32_t *part_host)
{
	uint32_t n_leaves = 0, n_emulated = 0;

	for (uint32_t i = 0; i < t->n_switches; i++)
		n_leaves += t->switches[i].role == TOPO_ROLE_RTSW;
	for (uint32_t h = 0; h < t->n_hosts && !nics_with_leaf; h++)
		n_emulated += host_emulated(t, h);
	if (t->switches[0].partition >= 0) { /* the file's cut (check_file_cut() passed) */
		for (uint32_t i = 0; i < t->n_switches; i++)
			part_sw[i] = (uint32_t)t->switches[i].partition;
		for (uint32_t h = 0; h < t->n_hosts; h++)
			part_host[h] = host_emulated(t, h) && !nics_with_leaf ? 0 : part_sw[t->hosts[h].leaf];
		return;
	}
	uint32_t first = n_emulated && nparts > 1 ? 1 : 0; /* partitions of switches: first..n-1 */
	uint32_t m = nparts - first, leaf = 0, other = 0;
	for (uint32_t i = 0; i < t->n_switches; i++) {
		if (t->switches[i].role == TOPO_ROLE_RTSW)
			part_sw[i] = first + (uint32_t)((uint64_t)leaf++ * m / n_leaves);
		else
			part_sw[i] = first + other++ % m;
	}
	for (uint32_t h = 0; h < t->n_hosts; h++)
		part_host[h] = host_emulated(t, h) && first ? 0 : part_sw[t->hosts[h].leaf];
}

int topo_partition(const struct topo *t, uint32_t n, bool nics_with_leaf, uint32_t *part_sw,
		   uint32_t *part_host, char *err, size_t errlen)
{
	if (n == 0 || n > t->n_switches) {
		snprintf(err, errlen, "%u partitions: want 1..%u (one partition holds at least one switch)",
			 n, t->n_switches);
		return -EINVAL;
	}
	int rc = check_file_cut(t, n, err, errlen);
	if (rc < 0)
		return rc;
	plan(t, n, nics_with_leaf, part_sw, part_host);
	return 0;
}

uint64_t topo_partition_lookahead(const struct topo *t, const uint32_t *part_sw,
				  const uint32_t *part_host)
{
	uint64_t min = UINT64_MAX;

	for (uint32_t i = 0; i < t->n_links; i++) {
		const struct topo_link *l = &t->links[i];
		if (topo_part_of(part_sw, part_host, l->end[0]) !=
			    topo_part_of(part_sw, part_host, l->end[1]) &&
		    l->delay_ns < min)
			min = l->delay_ns;
	}
	return min;
}
