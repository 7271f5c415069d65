/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wl_chakra.h"
#include "wl_chakra.pb-c.h"

typedef RocelabWl__WlNode pb_node;
typedef RocelabWl__WlAttr pb_attr;

/* Chakra's NodeType numbers (et_def.proto) */
enum {
	CK_COMP = 4,
	CK_SEND = 5,
	CK_RECV = 6,
	CK_COLL = 7,
	CK_NTYPES = 11,
};

static const char *const ck_type_names[CK_NTYPES] = {
	"INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE",
	"COMP_NODE", "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE",
	"STORAGE_NODE", "BATCH_NODE", "CHECKPOINT_NODE",
};

/* A trace file larger than this is refused rather than read whole. */
#define WL_CHAKRA_MAX_FILE (1ull << 32)

/* One rank's trace being read: where, for messages. */
struct ck_in {
	const char *file;
	uint32_t rank;
	struct wl_graph *g;
	const struct wl_group *groups;
	uint32_t ngroups;
	struct wl_err *err;
};

/* Reads the varint at buf[*pos]; returns 0, or -1 when it is cut off or
 * longer than 10 bytes. */
static int read_varint(const uint8_t *buf, size_t len, size_t *pos, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (*pos >= len)
			return -1;
		*v |= (uint64_t)(buf[*pos] & 0x7f) << (shift < 64 ? shift : 0);
		if ((buf[(*pos)++] & 0x80) == 0)
			return 0;
	}
	return -1;
}

/* Integer attribute name of n: 0 found (in *v), 1 absent, -1 (err set) when
 * it is not a non-negative integer. */
static int attr_uint(const struct ck_in *in, const pb_node *n, const char *name,
		     uint64_t *v)
{
	for (size_t i = 0; i < n->n_attr; i++) {
		const pb_attr *a = n->attr[i];
		int64_t s;

		if (strcmp(a->name, name) != 0)
			continue;
		switch (a->value_case) {
		case ROCELAB_WL__WL_ATTR__VALUE_UINT32_VAL: *v = a->uint32_val; return 0;
		case ROCELAB_WL__WL_ATTR__VALUE_UINT64_VAL: *v = a->uint64_val; return 0;
		case ROCELAB_WL__WL_ATTR__VALUE_INT32_VAL: s = a->int32_val; break;
		case ROCELAB_WL__WL_ATTR__VALUE_SINT32_VAL: s = a->sint32_val; break;
		case ROCELAB_WL__WL_ATTR__VALUE_INT64_VAL: s = a->int64_val; break;
		case ROCELAB_WL__WL_ATTR__VALUE_SINT64_VAL: s = a->sint64_val; break;
		default:
			return wl_err_set(in->err, "%s: node %llu: attribute %s is not an integer",
					  in->file, (unsigned long long)n->id, name);
		}
		if (s < 0)
			return wl_err_set(in->err, "%s: node %llu: attribute %s is negative (%lld)",
					  in->file, (unsigned long long)n->id, name, (long long)s);
		*v = (uint64_t)s;
		return 0;
	}
	return 1;
}

/* As attr_uint(), absence an error too, and at most max. */
static int need_uint(const struct ck_in *in, const pb_node *n, const char *name,
		     uint64_t max, uint64_t *v)
{
	int rc = attr_uint(in, n, name, v);

	if (rc > 0)
		return wl_err_set(in->err, "%s: node %llu: %s without the attribute %s",
				  in->file, (unsigned long long)n->id,
				  ck_type_names[n->type], name);
	if (rc == 0 && *v > max)
		return wl_err_set(in->err, "%s: node %llu: attribute %s is %llu, at most %llu",
				  in->file, (unsigned long long)n->id, name,
				  (unsigned long long)*v, (unsigned long long)max);
	return rc;
}

static const char *attr_str(const pb_node *n, const char *name)
{
	for (size_t i = 0; i < n->n_attr; i++)
		if (strcmp(n->attr[i]->name, name) == 0 &&
		    n->attr[i]->value_case == ROCELAB_WL__WL_ATTR__VALUE_STRING_VAL)
			return n->attr[i]->string_val;
	return NULL;
}

/* The communicator of collective n into w: its process group, or the world. */
static int communicator(const struct ck_in *in, const pb_node *n, struct wl_node *w)
{
	const char *pg = attr_str(n, "pg_name");

	if (pg == NULL) {
		w->nranks = in->g->nranks;
		w->ranks = malloc(w->nranks * sizeof(*w->ranks));
		if (w->ranks == NULL)
			return wl_err_set(in->err, "%s: out of memory", in->file);
		for (uint32_t r = 0; r < w->nranks; r++)
			w->ranks[r] = r;
		return 0;
	}
	for (uint32_t i = 0; i < in->ngroups; i++)
		if (strcmp(in->groups[i].name, pg) == 0) {
			/* wl_graph_add() copies it: borrowed until then */
			w->ranks = (uint32_t *)(uintptr_t)in->groups[i].ranks;
			w->nranks = in->groups[i].nranks;
			return 1;
		}
	return wl_err_set(in->err, "%s: node %llu: pg_name '%.64s' names no process group given (%u known)",
			  in->file, (unsigned long long)n->id, pg, in->ngroups);
}

/* Communication fields of n into w. Returns 0 or -1; *owned when w->ranks
 * was allocated here (the caller frees it after wl_graph_add()). */
static int comm_fields(const struct ck_in *in, const pb_node *n, struct wl_node *w,
		       int *owned)
{
	uint64_t v;
	int rc;

	if (need_uint(in, n, "comm_size", UINT64_MAX, &w->bytes) != 0)
		return -1;
	if (n->type == CK_COLL) {
		if (need_uint(in, n, "comm_type", WL_COLL_COUNT - 1, &v) != 0)
			return -1;
		w->op = (enum wl_coll)v;
		rc = communicator(in, n, w);
		*owned = rc == 0;
		return rc < 0 ? -1 : 0;
	}
	if (need_uint(in, n, n->type == CK_SEND ? "comm_dst" : "comm_src",
		      UINT32_MAX, &v) != 0)
		return -1;
	w->peer = (uint32_t)v;
	rc = attr_uint(in, n, "comm_tag", &w->tag);
	return rc < 0 ? -1 : 0;
}

static int add_node(const struct ck_in *in, const pb_node *n)
{
	struct wl_node w = { .id = n->id };
	size_t ndeps = n->n_data_deps + n->n_ctrl_deps;
	int owned = 0, rc = -1;

	switch (n->type) {
	case CK_COMP:
		w.kind = WL_COMPUTE;
		if (n->duration_micros > UINT64_MAX / 1000)
			return wl_err_set(in->err, "%s: node %llu: duration_micros %llu is too large",
					  in->file, (unsigned long long)n->id,
					  (unsigned long long)n->duration_micros);
		w.duration_ns = n->duration_micros * 1000;
		break;
	case CK_COLL:
	case CK_SEND:
	case CK_RECV:
		w.kind = n->type == CK_COLL ? WL_COLL : n->type == CK_SEND ? WL_SEND : WL_RECV;
		if (comm_fields(in, n, &w, &owned) != 0)
			goto out;
		break;
	default:
		return wl_err_set(in->err, "%s: node %llu: node type %s (%d) is not supported (supported: COMP_NODE, COMM_SEND_NODE, COMM_RECV_NODE, COMM_COLL_NODE)",
				  in->file, (unsigned long long)n->id,
				  n->type >= 0 && n->type < CK_NTYPES ? ck_type_names[n->type] : "unknown",
				  n->type);
	}
	if (ndeps > UINT32_MAX || (w.deps = calloc(ndeps + 1, sizeof(*w.deps))) == NULL) {
		wl_err_set(in->err, "%s: node %llu: out of memory", in->file,
			   (unsigned long long)n->id);
		goto out;
	}
	for (size_t i = 0; i < n->n_data_deps; i++)
		w.deps[w.ndeps++] = (struct wl_dep){ n->data_deps[i], false };
	for (size_t i = 0; i < n->n_ctrl_deps; i++)
		w.deps[w.ndeps++] = (struct wl_dep){ n->ctrl_deps[i], true };
	rc = wl_graph_add(in->g, in->rank, &w, in->err);
out:
	free(w.deps);
	if (owned)
		free(w.ranks);
	return rc;
}

/* The next length-delimited message: its bytes at buf + *pos, *mlen long. */
static int next_msg(const struct ck_in *in, const uint8_t *buf, size_t len,
		    size_t *pos, size_t *mlen, unsigned index)
{
	size_t at = *pos;
	uint64_t v;

	if (read_varint(buf, len, pos, &v) != 0)
		return wl_err_set(in->err, "%s: truncated: message %u at byte %zu: its length is cut off",
				  in->file, index, at);
	if (v > len - *pos)
		return wl_err_set(in->err, "%s: truncated: message %u at byte %zu is %llu bytes long, the file has %zu more",
				  in->file, index, at, (unsigned long long)v, len - *pos);
	if (v == 0)
		return wl_err_set(in->err, "%s: message %u at byte %zu is empty (Chakra's reader would stop there)",
				  in->file, index, at);
	*mlen = (size_t)v;
	return 0;
}

static int read_metadata(const struct ck_in *in, const uint8_t *buf, size_t len,
			 size_t *pos)
{
	RocelabWl__WlGlobalMetadata *md;
	size_t mlen;

	if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b)
		return wl_err_set(in->err, "%s: gzip-compressed: gunzip it first", in->file);
	if (len == 0)
		return wl_err_set(in->err, "%s: empty: a Chakra trace starts with its GlobalMetadata",
				  in->file);
	if (next_msg(in, buf, len, pos, &mlen, 0) != 0)
		return -1;
	md = rocelab_wl__wl_global_metadata__unpack(NULL, mlen, buf + *pos);
	if (md == NULL)
		return wl_err_set(in->err, "%s: not a Chakra trace: the first message is not a GlobalMetadata",
				  in->file);
	rocelab_wl__wl_global_metadata__free_unpacked(md, NULL);
	*pos += mlen;
	return 0;
}

int wl_chakra_parse(struct wl_graph *g, uint32_t rank, const char *file,
		    const uint8_t *buf, size_t len, const struct wl_group *groups,
		    uint32_t ngroups, struct wl_err *err)
{
	struct ck_in in = { file, rank, g, groups, ngroups, err };
	size_t pos = 0, mlen;

	if (read_metadata(&in, buf, len, &pos) != 0)
		return -1;
	for (unsigned index = 1; pos < len; index++) {
		pb_node *n;
		int rc;

		if (next_msg(&in, buf, len, &pos, &mlen, index) != 0)
			return -1;
		n = rocelab_wl__wl_node__unpack(NULL, mlen, buf + pos);
		if (n == NULL)
			return wl_err_set(err, "%s: message %u at byte %zu is not a Chakra Node",
					  file, index, pos);
		rc = add_node(&in, n);
		rocelab_wl__wl_node__free_unpacked(n, NULL);
		if (rc != 0)
			return -1;
		pos += mlen;
	}
	return 0;
}

/* The whole of file into *buf (malloc'd). */
static int slurp(const char *file, uint8_t **buf, size_t *len, struct wl_err *err)
{
	FILE *f = fopen(file, "rb");
	struct stat st;
	int rc = -1;

	*buf = NULL;
	if (f == NULL)
		return wl_err_set(err, "%s: %s", file, strerror(errno));
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
		wl_err_set(err, "%s: not a regular file", file);
	else if ((uint64_t)st.st_size > WL_CHAKRA_MAX_FILE)
		wl_err_set(err, "%s: %lld bytes, more than the %llu a trace may have", file,
			   (long long)st.st_size, (unsigned long long)WL_CHAKRA_MAX_FILE);
	else if ((*buf = malloc((size_t)st.st_size + 1)) == NULL)
		wl_err_set(err, "%s: out of memory", file);
	else if (fread(*buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
		wl_err_set(err, "%s: read error", file);
	else
		rc = 0;
	*len = (size_t)st.st_size;
	fclose(f);
	return rc;
}

static void rank_file(char *name, size_t size, const char *prefix, uint32_t rank)
{
	snprintf(name, size, "%s.%u.et", prefix, rank);
}

/* nranks 0: count the files PREFIX.0.et, PREFIX.1.et, ... */
static uint32_t count_files(const char *prefix)
{
	char name[4096];
	struct stat st;
	uint32_t n = 0;

	for (;;) {
		rank_file(name, sizeof(name), prefix, n);
		if (stat(name, &st) != 0 || n == UINT32_MAX)
			return n;
		n++;
	}
}

int wl_chakra_load(struct wl_graph *g, const char *prefix, uint32_t nranks,
		   const struct wl_group *groups, uint32_t ngroups,
		   struct wl_err *err)
{
	char name[4096];

	if (nranks == 0 && (nranks = count_files(prefix)) == 0) {
		memset(g, 0, sizeof(*g));
		return wl_err_set(err, "%s.0.et: no such trace", prefix);
	}
	if (wl_graph_init(g, nranks, err) != 0)
		return -1;
	for (uint32_t r = 0; r < nranks; r++) {
		uint8_t *buf = NULL;
		size_t len = 0;
		int rc;

		rank_file(name, sizeof(name), prefix, r);
		rc = wl_graph_set_file(g, r, name, err);
		if (rc == 0)
			rc = slurp(name, &buf, &len, err);
		if (rc == 0)
			rc = wl_chakra_parse(g, r, name, buf, len, groups, ngroups, err);
		free(buf);
		if (rc != 0) {
			wl_graph_free(g);
			return -1;
		}
	}
	if (wl_graph_check(g, err) != 0) {
		wl_graph_free(g);
		return -1;
	}
	return 0;
}
