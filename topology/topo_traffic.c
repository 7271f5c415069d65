/* SPDX-License-Identifier: BSD-3-Clause */
/* Traffic files: generators, RDMA transfers and collectives as shorthand specs (topo_traffic.h). */
#include "topo_traffic.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_yaml.h"

/* Longest scalar value (host names are shorter: TOPO_NAME_MAX). */
#define VALUE_MAX 64
/* Characters a value may hold: nothing that separates the shorthand's pairs. */
#define VALUE_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"
/* Room for ":LINE" after the file name in an entry's `where`. */
#define WHERE_LINE_ROOM 16

enum val_type {
	V_HOST,   /* a host of the topology (src, dst) */
	V_HOSTS,  /* a list of distinct hosts, at least two, or `all` */
	V_SPEC,   /* any other value: its owner checks it (rocelab-dp --gen|--rdma|--coll help) */
};

struct kind_def {
	const char *section;        /* key at the top of the file */
	const char *what;           /* one entry, in messages */
	bool pair;                  /* SRC>DST spec: src and dst required */
	bool emulated;              /* hosts must be emulated NICs */
};

/*
 * Each kind's keys have one owner, the table of the module that reads them
 * (generators: dataplane/hosts/dp_gen.c; rdma: dp_rdma.c; collectives:
 * nic_emul/ne_coll_keys.c; `rocelab-dp --gen|--rdma|--coll help` prints
 * each), and rocelab-dp checks every entry with it at the entry's FILE:LINE.
 * Here only what the topology knows: src, dst and hosts (its hosts), and
 * values that cannot break the shorthand.
 */
static const struct kind_def kinds[TOPO_TRAFFIC_KINDS] = {
	[TOPO_TRAFFIC_GEN] = {"generators", "generator", true, false},
	[TOPO_TRAFFIC_RDMA] = {"rdma", "rdma transfer", true, true},
	[TOPO_TRAFFIC_COLL] = {"collectives", "collective", false, true},
};

static const char *const root_keys[] = {"generators", "rdma", "collectives", NULL};

const char *topo_traffic_kind_name(enum topo_traffic_kind kind)
{
	return (unsigned)kind < TOPO_TRAFFIC_KINDS ? kinds[kind].section : NULL;
}

/* ---------------------------------------------------------------- values */

/* A value that cannot break the shorthand (no ',' '=' or space), or what it should be.
 * ('+' and '>': a collective's pairs, 0>1+2>3.) */
static const char *check_value(const char *v)
{
	return strspn(v, VALUE_CHARS ":+>") == strlen(v) ? NULL
							   : "a word of letters, digits, _ . - : + >";
}

/* ----------------------------------------------------------------- entries */

struct entry {
	const struct kind_def *k;
	const struct topo *t;
	FILE *kv;          /* the key=value pairs, in file order */
	char *kv_text;
	size_t kv_len;
	int host[2];       /* src, dst (-1: not given) */
	bool has_hosts;    /* collectives: a hosts key */
};

/* Host index of name, checked for its kind (emulated for rdma and collectives). */
static int find_host(struct topo_yaml_ctx *c, const struct entry *e, const char *key,
		     const char *name, int line)
{
	int h = topo_host_by_name(e->t, name);
	if (h < 0)
		return topo_yaml_fail(c, line, "%s: unknown host '%s' (not in topology %s)", key,
				      name, e->t->name);
	if (e->k->emulated && e->t->hosts[h].attach != TOPO_ATTACH_EMULATED)
		return topo_yaml_fail(c, line,
				      "%s: host '%s' is attach: %s; %s run between emulated NICs "
				      "(attach: emulated)",
				      key, name, topo_attach_name(e->t->hosts[h].attach),
				      e->k->section);
	return h;
}

/* hosts: all (at least two emulated hosts in the topology) */
static int hosts_all(struct topo_yaml_ctx *c, struct entry *e, int line)
{
	uint32_t n = topo_emulated_hosts(e->t);
	if (n < 2)
		return topo_yaml_fail(c, line,
				      "hosts: all is %u emulated host%s in topology %s: a collective "
				      "needs at least 2",
				      n, n == 1 ? "" : "s", e->t->name);
	fprintf(e->kv, "%shosts=all", ftell(e->kv) ? "," : "");
	return 0;
}

/* hosts: [a, b, ...]: distinct emulated hosts, at least two, joined by '+'. */
static int hosts_list(struct topo_yaml_ctx *c, struct entry *e, struct fy_node *v, int kl)
{
	e->has_hosts = true;
	if (fy_node_get_type(v) == FYNT_SCALAR) {
		char word[VALUE_MAX];
		if (topo_yaml_scalar(c, v, "hosts", kl, word, sizeof(word)))
			return -1;
		if (strcmp(word, "all") == 0)
			return hosts_all(c, e, kl);
		return topo_yaml_fail(c, topo_yaml_line(v, kl),
				      "hosts: expected a list of hosts or all, got '%s'", word);
	}
	if (topo_yaml_check_list(c, v, "hosts", kl))
		return -1;
	uint8_t *seen = calloc(e->t->n_hosts, 1);
	if (!seen)
		return topo_yaml_fail(c, 0, "out of memory");
	void *it = NULL;
	struct fy_node *item;
	int n = 0, rc = 0;
	fprintf(e->kv, "%shosts=", ftell(e->kv) ? "," : "");
	while (rc == 0 && (item = fy_node_sequence_iterate(v, &it))) {
		char name[TOPO_NAME_MAX + 1];
		int line = topo_yaml_line(item, kl);
		int h = topo_yaml_scalar(c, item, "hosts", line, name, sizeof(name)) ? -1
			: find_host(c, e, "hosts", name, line);
		if (h >= 0 && seen[h])
			h = topo_yaml_fail(c, line, "hosts: '%s' is listed twice", name);
		if (h < 0) {
			rc = -1;
			break;
		}
		seen[h] = 1;
		fprintf(e->kv, "%s%s", n++ ? "+" : "", name);
	}
	free(seen);
	if (rc == 0 && n < 2)
		rc = topo_yaml_fail(c, kl, "hosts: a collective over %d host%s: needs at least 2", n,
				    n == 1 ? "" : "s");
	return rc;
}

static int entry_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
		      int kl)
{
	struct entry *e = obj;
	enum val_type ty = V_SPEC;
	if (e->k->pair && (!strcmp(key, "src") || !strcmp(key, "dst")))
		ty = V_HOST;
	else if (!e->k->pair && !strcmp(key, "hosts"))
		ty = V_HOSTS;
	if (ty == V_HOSTS)
		return hosts_list(c, e, v, kl);
	char val[VALUE_MAX];
	if (topo_yaml_scalar(c, v, key, kl, val, sizeof(val)))
		return -1;
	int line = topo_yaml_line(v, kl);
	if (ty == V_HOST) {
		int h = find_host(c, e, key, val, line);
		if (h < 0)
			return -1;
		e->host[key[0] == 'd'] = h; /* src or dst */
		return 0;
	}
	const char *want = check_value(val);
	if (want)
		return topo_yaml_fail(c, line, "%s: '%s' is not %s", key, val, want);
	fprintf(e->kv, "%s%s=%s", ftell(e->kv) ? "," : "", key, val);
	return 0;
}

/* "FILE:LINE" of an entry, malloc'ed. */
static char *where_of(const char *file, int line)
{
	size_t n = strlen(file) + WHERE_LINE_ROOM;
	char *w = malloc(n);
	if (w)
		snprintf(w, n, "%s:%d", file, line);
	return w;
}

/* Room for one more entry. */
static int grow(struct topo_traffic *tr)
{
	if (tr->n < tr->cap)
		return 0;
	uint32_t cap = tr->cap ? 2 * tr->cap : 16;
	struct topo_traffic_entry *e = realloc(tr->e, cap * sizeof(*e));
	if (!e)
		return -1;
	tr->e = e;
	tr->cap = cap;
	return 0;
}

/* The shorthand spec of a checked entry: SRC>DST[:pairs] or the pairs. */
static char *entry_spec(const struct entry *e)
{
	if (!e->k->pair)
		return strdup(e->kv_text);
	const char *src = e->t->hosts[e->host[0]].name, *dst = e->t->hosts[e->host[1]].name;
	size_t n = strlen(src) + strlen(dst) + e->kv_len + 3;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s>%s%s%s", src, dst, e->kv_len ? ":" : "", e->kv_text);
	return s;
}

/* After all keys: src and dst given and different; a collective has its hosts. */
static int entry_check(struct topo_yaml_ctx *c, struct entry *e, int line)
{
	if (e->k->pair && (e->host[0] < 0 || e->host[1] < 0))
		return topo_yaml_fail(c, line, "%s: needs 'src' and 'dst' (missing '%s')",
				      e->k->what, e->host[0] < 0 ? "src" : "dst");
	if (e->k->pair && e->host[0] == e->host[1])
		return topo_yaml_fail(c, line, "%s: src and dst are the same host '%s'", e->k->what,
				      e->t->hosts[e->host[0]].name);
	if (!e->k->pair && !e->has_hosts) /* the --coll default: every emulated host */
		return hosts_all(c, e, line);
	return 0;
}

/* One entry of a section into tr. */
static int load_entry(struct topo_yaml_ctx *c, const struct kind_def *k,
		      enum topo_traffic_kind kind, const struct topo *t, struct fy_node *item,
		      int section_line, struct topo_traffic *tr)
{
	int line = topo_yaml_line(item, section_line);
	struct entry e = {.k = k, .t = t, .host = {-1, -1}};
	e.kv = open_memstream(&e.kv_text, &e.kv_len);
	if (!e.kv)
		return topo_yaml_fail(c, 0, "out of memory");
	int rc = topo_yaml_walk_map(c, item, line, k->what, NULL, entry_pair, &e);
	if (rc == 0)
		rc = entry_check(c, &e, line);
	if (fclose(e.kv) && rc == 0)
		rc = topo_yaml_fail(c, 0, "out of memory");
	if (rc == 0 && grow(tr))
		rc = topo_yaml_fail(c, 0, "out of memory");
	if (rc == 0) {
		struct topo_traffic_entry *te = &tr->e[tr->n];
		te->kind = kind;
		te->line = line;
		te->where = where_of(c->file, line);
		te->spec = entry_spec(&e);
		tr->n++;
		tr->count[kind]++;
		if (!te->where || !te->spec)
			rc = topo_yaml_fail(c, 0, "out of memory");
	}
	free(e.kv_text);
	return rc;
}

struct load {
	const struct topo *t;
	struct topo_traffic *tr;
};

static int section_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
			int kl)
{
	struct load *ld = obj;
	enum topo_traffic_kind kind = TOPO_TRAFFIC_GEN;
	while (strcmp(kinds[kind].section, key))
		kind++; /* a known key */
	if (topo_yaml_check_list(c, v, key, kl))
		return -1;
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(v, &it)))
		if (load_entry(c, &kinds[kind], kind, ld->t, item, kl, ld->tr))
			return -1;
	return 0;
}

/* ------------------------------------------------------------ entry points */

void topo_traffic_free(struct topo_traffic *tr)
{
	if (!tr)
		return;
	for (uint32_t i = 0; i < tr->n; i++) {
		free(tr->e[i].where);
		free(tr->e[i].spec);
	}
	free(tr->e);
	free(tr);
}

int topo_traffic_load_string(const char *yaml, size_t len, const char *display_name,
			     const struct topo *t, struct topo_traffic **out, char *err,
			     size_t errlen)
{
	struct topo_yaml_ctx c = {.file = display_name ? display_name : "<string>", .err = err,
				  .errlen = errlen};
	struct topo_yaml_doc d = {0};
	if (err && errlen)
		err[0] = '\0';
	if (out)
		*out = NULL;
	if (!out || !t || (!yaml && len)) {
		topo_yaml_fail(&c, 0, "bad arguments");
		return -EINVAL;
	}
	struct topo_traffic *tr = calloc(1, sizeof(*tr));
	if (!tr) {
		topo_yaml_fail(&c, 0, "out of memory");
		return -ENOMEM;
	}
	struct load ld = {.t = t, .tr = tr};
	int rc = topo_yaml_open(&c, yaml, len, "traffic file", &d);
	if (rc == 0)
		rc = topo_yaml_walk_map(&c, d.root, 1, "the traffic file", root_keys, section_pair,
					&ld);
	topo_yaml_close(&d);
	if (rc) {
		topo_traffic_free(tr);
		return -EINVAL;
	}
	*out = tr;
	return 0;
}

int topo_traffic_load(const char *path, const struct topo *t, struct topo_traffic **out,
		      char *err, size_t errlen)
{
	struct topo_yaml_ctx c = {.file = path ? path : "(null)", .err = err, .errlen = errlen};
	if (out)
		*out = NULL;
	if (!path || !out) {
		topo_yaml_fail(&c, 0, "bad arguments");
		return -EINVAL;
	}
	char *buf = NULL;
	size_t len = 0;
	if (topo_yaml_read_file(&c, &buf, &len))
		return -EIO;
	int rc = topo_traffic_load_string(buf, len, path, t, out, err, errlen);
	free(buf);
	return rc;
}
