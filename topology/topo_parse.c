/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Topology loader, part 3: the YAML document into a spec (struct spec): the
 * objects of the switches:, hosts:, links: and events: lists, the defaults:
 * and qos: sections. Names are not resolved yet: topo_build.c does that.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_priv.h"

void topo_spec_free(struct spec *s)
{
	free(s->sw);
	free(s->ho);
	free(s->li);
	free(s->ev);
}

static const char *const switch_keys[] = {
	"name", "role", "buffer", "profile", "algo", "seed", "lb", "flowlet_timeout_us",
	"resilient_buckets", "pipeline", "partition", NULL,
};

/* -------------------------------------------------------- parse: objects */

/* A small index 0..max into *out, the value's line into *line. */
static int get_index(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int kl,
		     uint64_t max, int *out, int *line)
{
	uint64_t x;
	*line = topo_yaml_line(v, kl);
	if (topo_get_uint(c, v, key, kl, 0, max, &x))
		return -1;
	*out = (int)x;
	return 0;
}

static int switch_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
		       int kl)
{
	struct sw_spec *s = obj;
	if (!strcmp(key, "name")) {
		s->name_line = topo_yaml_line(v, kl);
		return topo_get_name(c, v, key, kl, s->name);
	}
	if (!strcmp(key, "role")) {
		s->role_line = topo_yaml_line(v, kl);
		return topo_get_enum(c, v, key, kl, topo_role_from_name, "rtsw, ctsw, atsw",
				     &s->role);
	}
	if (!strcmp(key, "partition")) /* rocelab-dp --workers: which partition runs it */
		return get_index(c, v, key, kl, TOPO_MAX_PARTITIONS - 1, &s->partition,
				 &s->partition_line);
	return topo_sw_val_pair(c, &s->v, key, v, kl);
}

static int sw_vals_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
			int kl)
{
	return topo_sw_val_pair(c, obj, key, v, kl);
}

static int host_vals_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
			  int kl)
{
	return topo_host_val_pair(c, obj, key, v, kl);
}

static int link_vals_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
			  int kl)
{
	return topo_link_val_pair(c, obj, key, v, kl);
}

static const char *const link_keys[] = {"name", "ends", "rate", "delay", "mtu", "loss", NULL};
static const char *const host_link_keys[] = {"name", "rate", "delay", "mtu", "loss", NULL};

static int link_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v, int kl)
{
	struct link_spec *l = obj;
	if (!strcmp(key, "name")) {
		char tmp[256];
		if (topo_yaml_scalar(c, v, key, kl, tmp, sizeof(tmp)))
			return -1;
		if (strlen(tmp) >= TOPO_LINK_NAME_MAX || !topo_valid_name(tmp) ||
		    strlen(tmp) >= TOPO_NAME_MAX)
			return topo_yaml_fail(
				c, topo_yaml_line(v, kl),
				"name: invalid link name '%s' (1-%d characters: letters, digits, "
				"'_', '-', '.')",
				tmp, TOPO_NAME_MAX - 1);
		memcpy(l->name, tmp, strlen(tmp) + 1);
		l->named = true;
		l->name_line = topo_yaml_line(v, kl);
		return 0;
	}
	if (!strcmp(key, "ends")) {
		if (topo_yaml_check_list(c, v, key, kl))
			return -1;
		if (fy_node_sequence_item_count(v) != 2)
			return topo_yaml_fail(c, topo_yaml_line(v, kl),
					      "ends: a link has exactly 2 ends, got %d",
					      fy_node_sequence_item_count(v));
		for (int i = 0; i < 2; i++)
			if (topo_get_name(c, fy_node_sequence_get_by_index(v, i), "ends",
					  topo_yaml_line(v, kl), l->end[i]))
				return -1;
		return 0;
	}
	return topo_link_val_pair(c, &l->v, key, v, kl);
}

static int host_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v, int kl)
{
	struct host_spec *h = obj;
	if (!strcmp(key, "name")) {
		h->name_line = topo_yaml_line(v, kl);
		return topo_get_name(c, v, key, kl, h->name);
	}
	if (!strcmp(key, "leaf")) {
		h->has_leaf = true;
		h->leaf_line = topo_yaml_line(v, kl);
		return topo_get_name(c, v, key, kl, h->link.end[1]);
	}
	if (!strcmp(key, "link"))
		return topo_yaml_walk_map(c, v, kl, "host link", host_link_keys, link_pair,
					  &h->link);
	if (!strcmp(key, "server")) { /* this host is a GPU of that server */
		h->server_line = topo_yaml_line(v, kl);
		return topo_get_name(c, v, key, kl, h->server);
	}
	if (!strcmp(key, "gpu")) /* checked against gpus_per_server in topo_server.c */
		return get_index(c, v, key, kl, TOPO_MAX_GPUS_PER_SERVER - 1, &h->gpu, &h->gpu_line);
	return topo_host_val_pair(c, &h->v, key, v, kl);
}

static const char *const host_keys[] = {
	"name",   "attach",  "leaf", "mtu", "netns", "ifname", "socket",
	"pci",    "devargs", "ipv4", "mac", "link", "server", "gpu", NULL,
};

static const char *const event_keys[] = {"at", "link", "switch", "action", NULL};

static int action_from_name(const char *s)
{
	if (!strcmp(s, "down"))
		return 0;
	if (!strcmp(s, "up"))
		return 1;
	return -1;
}

static int event_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
		      int kl)
{
	struct ev_spec *e = obj;
	if (!strcmp(key, "at"))
		return topo_get_scaled(c, v, key, kl, topo_time_units, true, "time", TIME_HINT, 0,
				       MAX_AT, &e->at);
	if (!strcmp(key, "action"))
		return topo_get_enum(c, v, key, kl, action_from_name, "down, up", &e->action);
	/* link or switch */
	if (e->target >= 0)
		return topo_yaml_fail(c, kl, "event: give either 'link' or 'switch', not both");
	e->target = !strcmp(key, "link") ? TOPO_EVENT_LINK : TOPO_EVENT_SWITCH;
	e->name_line = topo_yaml_line(v, kl);
	char tmp[256];
	if (topo_yaml_scalar(c, v, key, kl, tmp, sizeof(tmp)))
		return -1;
	if (strlen(tmp) >= sizeof(e->name))
		return topo_yaml_fail(c, e->name_line, "%s: unknown %s '%s'", key, key, tmp);
	memcpy(e->name, tmp, strlen(tmp) + 1);
	return 0;
}

/* ------------------------------------------------------------ parse: qos */

static int get_prio(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int kl,
		    uint8_t *out)
{
	uint64_t x;
	if (topo_get_uint(c, v, key, kl, 0, TOPO_NUM_PRIO - 1, &x))
		return -1;
	*out = (uint8_t)x;
	return 0;
}

struct dscp_entry {
	bool have_dscp, have_prio;
	unsigned lo, hi;
	uint8_t prio;
};

static int dscp_entry_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
			   int kl)
{
	struct dscp_entry *e = obj;
	if (!strcmp(key, "prio")) {
		e->have_prio = true;
		return get_prio(c, v, key, kl, &e->prio);
	}
	char tmp[32];
	if (topo_yaml_scalar(c, v, key, kl, tmp, sizeof(tmp)))
		return -1;
	unsigned lo, hi;
	int n = 0;
	if (sscanf(tmp, "%2u-%2u%n", &lo, &hi, &n) == 2 && (size_t)n == strlen(tmp) &&
	    strspn(tmp, "0123456789-") == strlen(tmp)) {
		/* a range */
	} else if (sscanf(tmp, "%2u%n", &lo, &n) == 1 && (size_t)n == strlen(tmp) &&
		   strspn(tmp, "0123456789") == strlen(tmp)) {
		hi = lo;
	} else {
		return topo_yaml_fail(
			c, topo_yaml_line(v, kl),
			"dscp: expected a DSCP value 0-63 or a range like 24-31, got '%s'", tmp);
	}
	if (lo > 63 || hi > 63 || lo > hi)
		return topo_yaml_fail(c, topo_yaml_line(v, kl),
				      "dscp: '%s' is out of range (0-63, low-high)", tmp);
	e->have_dscp = true;
	e->lo = lo;
	e->hi = hi;
	return 0;
}

static const char *const dscp_entry_keys[] = {"dscp", "prio", NULL};

static int parse_dscp_map(struct topo_yaml_ctx *c, struct topo_qos *q, struct fy_node *v, int kl)
{
	if (topo_yaml_check_list(c, v, "dscp_map", kl))
		return -1;
	int n = fy_node_sequence_item_count(v);
	struct fy_node *first = fy_node_sequence_get_by_index(v, 0);
	if (first && fy_node_get_type(first) == FYNT_SCALAR && !topo_yaml_is_null(first)) {
		/* 64 priorities, one per DSCP */
		if (n != 64)
			return topo_yaml_fail(
				c, topo_yaml_line(v, kl),
				"dscp_map: a list of priorities needs 64 entries (one per DSCP), "
				"got %d",
				n);
		for (int i = 0; i < 64; i++)
			if (get_prio(c, fy_node_sequence_get_by_index(v, i), "dscp_map",
				     topo_yaml_line(v, kl), &q->dscp_prio[i]))
				return -1;
		return 0;
	}
	/* ranges over the default map; a DSCP may be named once */
	int seen[64] = {0};
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(v, &it))) {
		int line = topo_yaml_line(item, kl);
		struct dscp_entry e = {0};
		if (topo_yaml_walk_map(c, item, line, "dscp_map entry", dscp_entry_keys,
				       dscp_entry_pair, &e))
			return -1;
		if (!e.have_dscp || !e.have_prio)
			return topo_yaml_fail(c, line,
					      "dscp_map entry: needs both 'dscp' and 'prio'");
		for (unsigned d = e.lo; d <= e.hi; d++) {
			if (seen[d])
				return topo_yaml_fail(
					c, line,
					"dscp_map: DSCP %u is mapped twice (also on line %d)", d,
					seen[d]);
			seen[d] = line;
			q->dscp_prio[d] = e.prio;
		}
	}
	return 0;
}

static const char *const ecn_keys[] = {"enabled", "kmin", "kmax", "pmax", NULL};

struct ecn_parse {
	struct topo_qos *q;
	int kmax_line;
};

static int ecn_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v, int kl)
{
	struct ecn_parse *e = obj;
	uint64_t x;
	if (!strcmp(key, "enabled"))
		return topo_get_bool(c, v, key, kl, &e->q->ecn);
	if (!strcmp(key, "pmax"))
		return topo_get_fraction(c, v, key, kl, &e->q->ecn_pmax);
	if (topo_get_scaled(c, v, key, kl, topo_size_units, false, "size", SIZE_HINT, 0, UINT32_MAX,
			    &x))
		return -1;
	if (!strcmp(key, "kmin")) {
		e->q->ecn_kmin = (uint32_t)x;
	} else {
		e->q->ecn_kmax = (uint32_t)x;
		e->kmax_line = topo_yaml_line(v, kl);
	}
	return 0;
}

static const char *const qos_keys[] = {"dscp_map", "lossless", "control", "dwrr", "ecn", NULL};

static int qos_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v, int kl)
{
	struct spec *s = obj;
	struct topo_qos *q = &s->qos;
	if (!strcmp(key, "dscp_map"))
		return parse_dscp_map(c, q, v, kl);
	if (!strcmp(key, "control"))
		return get_prio(c, v, key, kl, &q->control_prio);
	if (!strcmp(key, "lossless")) {
		q->lossless_mask = 0;
		if (!topo_yaml_is_null(v) && fy_node_get_type(v) == FYNT_SCALAR &&
		    !fy_node_is_alias(v)) {
			uint8_t p;
			if (get_prio(c, v, key, kl, &p))
				return -1;
			q->lossless_mask = (uint8_t)(1u << p);
			return 0;
		}
		if (topo_yaml_check_list(c, v, key, kl))
			return -1;
		void *it = NULL;
		struct fy_node *item;
		while ((item = fy_node_sequence_iterate(v, &it))) {
			uint8_t p;
			if (get_prio(c, item, key, topo_yaml_line(v, kl), &p))
				return -1;
			if (q->lossless_mask & (1u << p))
				return topo_yaml_fail(c, topo_yaml_line(item, kl),
						      "lossless: priority %u listed twice", p);
			q->lossless_mask |= (uint8_t)(1u << p);
		}
		return 0;
	}
	if (!strcmp(key, "dwrr")) {
		if (topo_yaml_check_list(c, v, key, kl))
			return -1;
		int n = fy_node_sequence_item_count(v);
		if (n != TOPO_NUM_PRIO)
			return topo_yaml_fail(
				c, topo_yaml_line(v, kl),
				"dwrr: expected %d weights (one per priority), got %d",
				TOPO_NUM_PRIO, n);
		for (int i = 0; i < TOPO_NUM_PRIO; i++) {
			uint64_t x;
			if (topo_get_uint(c, fy_node_sequence_get_by_index(v, i), "dwrr",
					  topo_yaml_line(v, kl), 0, 1000, &x))
				return -1;
			q->dwrr_weight[i] = (uint16_t)x;
		}
		s->dwrr_set = true;
		s->dwrr_line = topo_yaml_line(v, kl);
		return 0;
	}
	/* ecn */
	struct ecn_parse e = {.q = q, .kmax_line = topo_yaml_line(v, kl)};
	if (topo_yaml_walk_map(c, v, kl, "qos.ecn", ecn_keys, ecn_pair, &e))
		return -1;
	if (q->ecn_kmin > q->ecn_kmax)
		return topo_yaml_fail(c, e.kmax_line,
				      "ecn: kmax (%" PRIu32 " bytes) is below kmin (%" PRIu32
				      " bytes)",
				      q->ecn_kmax, q->ecn_kmin);
	return 0;
}

/* ------------------------------------------------------- parse: sections */

static const char *const defaults_keys[] = {
	"switch", "rtsw", "ctsw", "atsw", "host", "link", "host_link", NULL,
};

static int defaults_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
			 int kl)
{
	struct spec *s = obj;
	char what[32];
	snprintf(what, sizeof(what), "defaults.%s", key);
	if (!strcmp(key, "switch"))
		return topo_yaml_walk_map(c, v, kl, what, topo_switch_val_keys, sw_vals_pair,
					  &s->d_switch);
	int r = topo_role_from_name(key);
	if (r >= 0)
		return topo_yaml_walk_map(c, v, kl, what, topo_switch_val_keys, sw_vals_pair,
					  &s->d_role[r]);
	if (!strcmp(key, "host"))
		return topo_yaml_walk_map(c, v, kl, what, topo_host_val_keys, host_vals_pair,
					  &s->d_host);
	if (!strcmp(key, "link"))
		return topo_yaml_walk_map(c, v, kl, what, topo_link_val_keys, link_vals_pair,
					  &s->d_link);
	return topo_yaml_walk_map(c, v, kl, what, topo_link_val_keys, link_vals_pair,
				  &s->d_host_link);
}

/* Allocate n zeroed items for a list section; -1 with a message when too many. */
static void *alloc_list(struct topo_yaml_ctx *c, size_t n, size_t size, uint32_t max,
			const char *key, int line)
{
	if (n > max) {
		topo_yaml_fail(c, line, "%s: too many entries (%zu, at most %" PRIu32 ")", key, n,
			       max);
		return NULL;
	}
	void *p = calloc(n ? n : 1, size);
	if (!p)
		topo_yaml_fail(c, line, "%s: out of memory", key);
	return p;
}

static int parse_switches(struct topo_yaml_ctx *c, struct spec *s, struct fy_node *v, int kl)
{
	if (topo_yaml_check_list(c, v, "switches", kl))
		return -1;
	size_t n = (size_t)fy_node_sequence_item_count(v);
	if (!(s->sw = alloc_list(c, n, sizeof(*s->sw), TOPO_MAX_SWITCHES, "switches", kl)))
		return -1;
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(v, &it))) {
		struct sw_spec *w = &s->sw[s->n_sw++];
		w->role = -1;
		w->partition = -1;
		w->line = topo_yaml_line(item, kl);
		if (topo_yaml_walk_map(c, item, w->line, "switch", switch_keys, switch_pair, w))
			return -1;
		if (!w->name[0])
			return topo_yaml_fail(c, w->line, "switch: missing required key 'name'");
		if (w->role < 0)
			return topo_yaml_fail(
				c, w->line,
				"switch '%s': missing required key 'role' (rtsw, ctsw or atsw)",
				w->name);
	}
	return 0;
}

static int parse_hosts(struct topo_yaml_ctx *c, struct spec *s, struct fy_node *v, int kl)
{
	if (topo_yaml_check_list(c, v, "hosts", kl))
		return -1;
	size_t n = (size_t)fy_node_sequence_item_count(v);
	if (!(s->ho = alloc_list(c, n, sizeof(*s->ho), TOPO_MAX_HOSTS, "hosts", kl)))
		return -1;
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(v, &it))) {
		struct host_spec *h = &s->ho[s->n_ho++];
		h->line = topo_yaml_line(item, kl);
		h->link.host = -1;
		h->gpu = -1;
		if (topo_yaml_walk_map(c, item, h->line, "host", host_keys, host_pair, h))
			return -1;
		if (!h->name[0])
			return topo_yaml_fail(c, h->line, "host: missing required key 'name'");
		struct fy_node *lk = topo_yaml_map_get(item, "link");
		if (lk && !h->has_leaf)
			return topo_yaml_fail(
				c, topo_yaml_line(lk, h->line),
				"host '%s': 'link' settings need 'leaf' (they describe the link to it)",
				h->name);
	}
	return 0;
}

static int parse_links(struct topo_yaml_ctx *c, struct spec *s, struct fy_node *v, int kl)
{
	if (topo_yaml_check_list(c, v, "links", kl))
		return -1;
	size_t n = (size_t)fy_node_sequence_item_count(v);
	if (!(s->li = alloc_list(c, n, sizeof(*s->li), TOPO_MAX_HOSTS + 4 * TOPO_MAX_SWITCHES,
				 "links", kl)))
		return -1;
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(v, &it))) {
		struct link_spec *l = &s->li[s->n_li++];
		l->line = topo_yaml_line(item, kl);
		l->host = -1;
		if (!topo_yaml_is_null(item) && !fy_node_is_alias(item) &&
		    fy_node_get_type(item) == FYNT_SEQUENCE) {
			/* short form: [a, b] */
			if (fy_node_sequence_item_count(item) != 2)
				return topo_yaml_fail(c, l->line,
						      "link: a link has exactly 2 ends, got %d",
						      fy_node_sequence_item_count(item));
			for (int i = 0; i < 2; i++)
				if (topo_get_name(c, fy_node_sequence_get_by_index(item, i),
						  "link end", l->line, l->end[i]))
					return -1;
			continue;
		}
		if (topo_yaml_walk_map(c, item, l->line, "link", link_keys, link_pair, l))
			return -1;
		if (!l->end[0][0])
			return topo_yaml_fail(
				c, l->line,
				"link: missing required key 'ends' (e.g. ends: [leaf0, spine0])");
	}
	return 0;
}

static int parse_events(struct topo_yaml_ctx *c, struct spec *s, struct fy_node *v, int kl)
{
	if (topo_yaml_check_list(c, v, "events", kl))
		return -1;
	size_t n = (size_t)fy_node_sequence_item_count(v);
	if (!(s->ev = alloc_list(c, n, sizeof(*s->ev), 1u << 20, "events", kl)))
		return -1;
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(v, &it))) {
		struct ev_spec *e = &s->ev[s->n_ev++];
		e->line = topo_yaml_line(item, kl);
		e->target = -1;
		e->action = -1;
		e->at = UINT64_MAX;
		if (topo_yaml_walk_map(c, item, e->line, "event", event_keys, event_pair, e))
			return -1;
		if (e->at == UINT64_MAX)
			return topo_yaml_fail(c, e->line,
					      "event: missing required key 'at' (e.g. at: 2s)");
		if (e->target < 0)
			return topo_yaml_fail(c, e->line, "event: needs 'link' or 'switch'");
		if (e->action < 0)
			return topo_yaml_fail(c, e->line,
					      "event: missing required key 'action' (down or up)");
	}
	return 0;
}

const char *const topo_root_keys[] = {
	"name", "defaults", "switches", "hosts", "links", "events", "qos", "servers", NULL,
};

int topo_root_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v, int kl)
{
	struct spec *s = obj;
	if (!strcmp(key, "name")) {
		s->named = true;
		return topo_get_name(c, v, key, kl, s->name);
	}
	if (!strcmp(key, "defaults"))
		return topo_yaml_walk_map(c, v, kl, "defaults", defaults_keys, defaults_pair, s);
	if (!strcmp(key, "switches"))
		return parse_switches(c, s, v, kl);
	if (!strcmp(key, "hosts"))
		return parse_hosts(c, s, v, kl);
	if (!strcmp(key, "links"))
		return parse_links(c, s, v, kl);
	if (!strcmp(key, "events"))
		return parse_events(c, s, v, kl);
	if (!strcmp(key, "servers")) {
		s->servers_line = kl;
		return topo_yaml_walk_map(c, v, kl, "servers", topo_servers_keys,
					  topo_servers_pair, s);
	}
	s->qos_line = kl;
	return topo_yaml_walk_map(c, v, kl, "qos", qos_keys, qos_pair, s);
}
