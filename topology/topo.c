/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Topology loader and validator over libfyaml's document API.
 *
 * Loading is two passes: parse every YAML object into a "vals" struct that
 * records which fields the object set (and on which line), then merge
 * built-in defaults < defaults: section < the object's own keys, resolve
 * names, number ports, check the graph and derive addresses. Only the first
 * error is reported, as "FILE:LINE: what is wrong".
 *
 * libfyaml 0.7.12 has no fy_node_get_start_mark(): a node's line comes from
 * its scalar token, or for a collection from its first scalar, or else from
 * the key that names it (topo_yaml_line()).
 *
 * The loader's files, in the order a load runs through them: topo.c (the
 * entry points, and the queries over a loaded topology), topo_value.c (names
 * and scalar values), topo_vals.c (an object's settings and their layers),
 * topo_parse.c (the document into a spec), topo_build.c (the spec into a
 * topology); what they share is in topo_priv.h.
 */
#include "topo.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_priv.h"

/* ----------------------------------------------------------- entry points */

static void default_name(char out[TOPO_NAME_MAX], const char *display)
{
	const char *base = strrchr(display, '/');
	base = base ? base + 1 : display;
	size_t n = strcspn(base, ".");
	if (n == 0) {
		snprintf(out, TOPO_NAME_MAX, "topology");
		return;
	}
	if (n >= TOPO_NAME_MAX)
		n = TOPO_NAME_MAX - 1;
	memcpy(out, base, n);
	out[n] = '\0';
}

int topo_load_string(const char *yaml, size_t len, const char *display_name,
		     struct topo **out, char *err, size_t errlen)
{
	struct topo_yaml_ctx c = {
		.file = display_name ? display_name : "<string>", .err = err, .errlen = errlen};
	struct spec s;
	struct topo_yaml_doc d = {0};
	struct topo *t = NULL;
	int rc = -1;

	memset(&s, 0, sizeof(s));
	if (err && errlen)
		err[0] = '\0';
	if (out)
		*out = NULL;
	if (!out || (!yaml && len))
		return topo_yaml_fail(&c, 0, "bad arguments");
	if (topo_yaml_open(&c, yaml, len, "topology", &d))
		goto done;
	s.root_line = topo_yaml_line(d.root, 1);
	topo_builtin_qos(&s.qos);
	topo_builtin_servers(&s.servers);
	if (topo_yaml_walk_map(&c, d.root, 1, "the topology", topo_root_keys, topo_root_pair, &s))
		goto done;
	if (!s.named)
		default_name(s.name, c.file);
	t = calloc(1, sizeof(*t));
	if (!t) {
		topo_yaml_fail(&c, 0, "out of memory");
		goto done;
	}
	memcpy(t->name, s.name, sizeof(t->name));
	snprintf(t->path, sizeof(t->path), "%s", c.file);
	if (topo_build(&c, &s, t))
		goto done;
	*out = t;
	t = NULL;
	rc = 0;
done:
	topo_free(t);
	topo_spec_free(&s);
	topo_yaml_close(&d);
	return rc;
}

int topo_load(const char *path, struct topo **out, char *err, size_t errlen)
{
	struct topo_yaml_ctx c = {.file = path ? path : "(null)", .err = err, .errlen = errlen};
	if (err && errlen)
		err[0] = '\0';
	if (out)
		*out = NULL;
	if (!path || !out)
		return topo_yaml_fail(&c, 0, "bad arguments");
	char *buf = NULL;
	size_t len = 0;
	if (topo_yaml_read_file(&c, &buf, &len))
		return -1;
	int rc = topo_load_string(buf, len, path, out, err, errlen);
	free(buf);
	return rc;
}

void topo_free(struct topo *t)
{
	if (!t)
		return;
	if (t->switches)
		for (uint32_t i = 0; i < t->n_switches; i++)
			free(t->switches[i].ports);
	free(t->switches);
	free(t->hosts);
	free(t->links);
	free(t->events);
	free(t->leaves);
	for (uint32_t i = 0; t->servers && i < t->n_servers; i++)
		free(t->servers[i].hosts);
	free(t->servers);
	free(t);
}

/* ------------------------------------------------------------------ clos */

int topo_switch_by_name(const struct topo *t, const char *name)
{
	if (!t || !name)
		return -1;
	for (uint32_t i = 0; i < t->n_switches; i++)
		if (!strcmp(t->switches[i].name, name))
			return (int)i;
	return -1;
}

int topo_host_by_name(const struct topo *t, const char *name)
{
	if (!t || !name)
		return -1;
	for (uint32_t i = 0; i < t->n_hosts; i++)
		if (!strcmp(t->hosts[i].name, name))
			return (int)i;
	return -1;
}

uint32_t topo_emulated_hosts(const struct topo *t)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < t->n_hosts; i++)
		n += t->hosts[i].attach == TOPO_ATTACH_EMULATED;
	return n;
}

int topo_link_by_name(const struct topo *t, const char *name)
{
	if (!t || !name)
		return -1;
	for (uint32_t i = 0; i < t->n_links; i++)
		if (!strcmp(t->links[i].name, name))
			return (int)i;
	return -1;
}

const char *topo_node_name(const struct topo *t, struct topo_node_ref ref)
{
	if (!t)
		return "?";
	if (ref.kind == TOPO_NODE_SWITCH && ref.index < t->n_switches)
		return t->switches[ref.index].name;
	if (ref.kind == TOPO_NODE_HOST && ref.index < t->n_hosts)
		return t->hosts[ref.index].name;
	return "?";
}

char *topo_ipv4_str(uint32_t ipv4, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u.%u", ipv4 >> 24, (ipv4 >> 16) & 255, (ipv4 >> 8) & 255,
		 ipv4 & 255);
	return buf;
}

char *topo_ipv6_str(const uint8_t a[16], char *buf, size_t len)
{
	uint16_t w[8];
	for (int i = 0; i < 8; i++)
		w[i] = (uint16_t)(a[2 * i] << 8 | a[2 * i + 1]);
	/* RFC 5952: compress the longest run (>= 2) of zero groups */
	int best = -1, best_len = 0;
	for (int i = 0; i < 8;) {
		if (w[i]) {
			i++;
			continue;
		}
		int j = i;
		while (j < 8 && !w[j])
			j++;
		if (j - i > best_len && j - i >= 2) {
			best = i;
			best_len = j - i;
		}
		i = j;
	}
	size_t off = 0;
	buf[0] = '\0';
	for (int i = 0; i < 8 && off < len; i++) {
		int n;
		if (i == best) {
			n = snprintf(buf + off, len - off, "::");
			i += best_len - 1;
		} else {
			bool sep = i > 0 && i != best + best_len;
			n = snprintf(buf + off, len - off, "%s%x", sep ? ":" : "", w[i]);
		}
		if (n < 0)
			break;
		off += (size_t)n;
	}
	return buf;
}

char *topo_mac_str(const uint8_t m[6], char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

int topo_summary(const struct topo *t, char *buf, size_t len)
{
	unsigned n[TOPO_ROLE_COUNT] = {0};
	for (uint32_t i = 0; i < t->n_switches; i++)
		n[t->switches[i].role]++;
	int w = snprintf(buf, len,
			 "%s: %" PRIu32 " switches (%u rtsw, %u ctsw, %u atsw), %" PRIu32
			 " hosts, %" PRIu32 " links, %" PRIu32 " events",
			 t->name, t->n_switches, n[TOPO_ROLE_RTSW], n[TOPO_ROLE_CTSW],
			 n[TOPO_ROLE_ATSW], t->n_hosts, t->n_links, t->n_events);
	if (w < 0 || !t->n_servers)
		return w;
	int x = snprintf((size_t)w < len ? buf + w : NULL, (size_t)w < len ? len - (size_t)w : 0,
			 ", %" PRIu32 " servers x %" PRIu32 " GPUs", t->n_servers,
			 t->server_params.gpus_per_server);
	return x < 0 ? x : w + x;
}

int topo_check_file(const char *path, FILE *out, FILE *errout)
{
	char err[512];
	struct topo *t = NULL;
	if (topo_load(path, &t, err, sizeof(err))) {
		if (errout)
			fprintf(errout, "%s\n", err);
		return 2;
	}
	char sum[256];
	topo_summary(t, sum, sizeof(sum));
	if (out)
		fprintf(out, "%s: OK\n", sum);
	topo_free(t);
	return 0;
}
