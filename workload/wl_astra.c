/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wl_astra.h"

#define MAX_LAYERS (1u << 20)
#define MAX_FIELDS 16
#define LINE_MAX_LEN 4096
/* A workload file larger than this is refused rather than read whole. */
#define MAX_FILE (64u << 20)

static const char *const par_names[WL_PAR_COUNT] = {
	"DATA", "MODEL", "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA",
	"HYBRID_TRANSFORMER", "HYBRID_DLRM", "HYBRID_DLRM_ENHANCED",
	"HYBRID_CUSTOMIZED", "MICRO",
};

static const char *const comm_names[WL_AC_COUNT] = {
	"NONE", "ALLREDUCE", "ALLGATHER", "ALLTOALL", "REDUCESCATTER",
	"ALLREDUCEALLTOALL",
};

const char *wl_astra_par_name(enum wl_astra_par par)
{
	return (unsigned)par < WL_PAR_COUNT ? par_names[par] : "?";
}

const char *wl_astra_comm_name(enum wl_astra_comm comm)
{
	return (unsigned)comm < WL_AC_COUNT ? comm_names[comm] : "?";
}

/* The line being read, split into its fields. */
struct line {
	const char *file;
	unsigned no;
	char text[LINE_MAX_LEN];
	char *f[MAX_FIELDS];
	unsigned nf;
	struct wl_err *err;
};

/* The input, consumed line by line. */
struct src {
	const char *p, *end;
	unsigned no;
};

/* Next line that is not blank or a comment into l; 1 at the end, -1 on error. */
static int next_line(struct src *s, struct line *l)
{
	while (s->p < s->end) {
		const char *nl = memchr(s->p, '\n', (size_t)(s->end - s->p));
		size_t n = (size_t)((nl ? nl : s->end) - s->p);
		char *save = NULL;

		l->no = ++s->no;
		if (n >= sizeof(l->text))
			return wl_err_set(l->err, "%s:%u: line longer than %d characters",
					  l->file, l->no, LINE_MAX_LEN - 1);
		memcpy(l->text, s->p, n);
		l->text[n] = '\0';
		s->p = nl ? nl + 1 : s->end;
		if (memchr(l->text, '\0', n) != NULL)
			return wl_err_set(l->err, "%s:%u: a NUL byte: not a text file",
					  l->file, l->no);
		l->nf = 0;
		for (char *t = strtok_r(l->text, " \t\r\v\f", &save); t != NULL;
		     t = strtok_r(NULL, " \t\r\v\f", &save)) {
			if (l->nf == MAX_FIELDS)
				return wl_err_set(l->err, "%s:%u: more than %d fields",
						  l->file, l->no, MAX_FIELDS);
			l->f[l->nf++] = t;
		}
		if (l->nf > 0 && l->f[0][0] != '#')
			return 0;
	}
	return 1;
}

/* Field i of l as a decimal integer in [min, max]. */
static int field_int(const struct line *l, unsigned i, const char *what,
		     long long min, unsigned long long max, long long *v)
{
	const char *t = l->f[i];
	char *end;

	errno = 0;
	if (t[0] == '-' && min < 0)
		*v = strtoll(t, &end, 10);
	else if (t[0] >= '0' && t[0] <= '9')
		*v = (long long)strtoull(t, &end, 10);
	else
		end = (char *)(uintptr_t)t;
	if (end == t || *end != '\0' || errno != 0 || *v < min ||
	    (*v >= 0 && (unsigned long long)*v > max))
		return wl_err_set(l->err, "%s:%u: %s: '%.40s' is not an integer in %lld..%llu",
				  l->file, l->no, what, t, min, max);
	return 0;
}

static int field_par(const struct line *l, unsigned i, enum wl_astra_par *par)
{
	for (unsigned k = 0; k < WL_PAR_COUNT; k++)
		if (strcmp(l->f[i], par_names[k]) == 0) {
			*par = (enum wl_astra_par)k;
			return 0;
		}
	return wl_err_set(l->err, "%s:%u: unknown parallelism '%.40s' (DATA, MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_TRANSFORMER, HYBRID_DLRM, HYBRID_DLRM_ENHANCED, HYBRID_CUSTOMIZED, MICRO)",
			  l->file, l->no, l->f[i]);
}

static int field_comm(const struct line *l, unsigned i, const char *what,
		      enum wl_astra_comm *c)
{
	for (unsigned k = 0; k < WL_AC_COUNT; k++)
		if (strcmp(l->f[i], comm_names[k]) == 0) {
			*c = (enum wl_astra_comm)k;
			return 0;
		}
	return wl_err_set(l->err, "%s:%u: %s: unknown communication type '%.40s' (NONE, ALLREDUCE, ALLGATHER, ALLTOALL, REDUCESCATTER, ALLREDUCEALLTOALL)",
			  l->file, l->no, what, l->f[i]);
}

/* Line 1: the parallelism, DLRM's last bottom layer, model_parallel_NPU_group. */
static int parse_header(struct wl_astra *w, const struct line *l)
{
	unsigned i = 1;
	long long v;

	if (field_par(l, 0, &w->par) != 0)
		return -1;
	if (w->par == WL_PAR_HYBRID_DLRM || w->par == WL_PAR_HYBRID_DLRM_ENHANCED) {
		if (l->nf < 2)
			return wl_err_set(l->err, "%s:%u: %s wants the index of the last bottom-MLP layer after it",
					  l->file, l->no, par_names[w->par]);
		if (field_int(l, i++, "last bottom layer", 0, MAX_LAYERS, &v) != 0)
			return -1;
		w->dlrm_last_bottom = (uint32_t)v;
	}
	if (i < l->nf && strcmp(l->f[i], "model_parallel_NPU_group:") == 0) {
		if (i + 1 >= l->nf)
			return wl_err_set(l->err, "%s:%u: model_parallel_NPU_group: wants a group size after it",
					  l->file, l->no);
		if (field_int(l, i + 1, "model_parallel_NPU_group", 1, UINT32_MAX, &v) != 0)
			return -1;
		w->mp_group = (uint32_t)v;
		i += 2;
	}
	if (i < l->nf)
		return wl_err_set(l->err, "%s:%u: '%.40s' after the parallelism: only \"model_parallel_NPU_group: G\" is understood there",
				  l->file, l->no, l->f[i]);
	return 0;
}

/* Fields first.. of l: one pass's compute, comm type and size. */
static int parse_pass(const struct line *l, unsigned first, const char *what,
		      struct wl_astra_pass *p)
{
	char label[48];
	long long v;

	snprintf(label, sizeof(label), "%s compute", what);
	if (field_int(l, first, label, 0, INT64_MAX, &v) != 0)
		return -1;
	p->compute_cycles = (uint64_t)v;
	snprintf(label, sizeof(label), "%s comm type", what);
	if (field_comm(l, first + 1, label, &p->comm) != 0)
		return -1;
	snprintf(label, sizeof(label), "%s comm size", what);
	if (field_int(l, first + 2, label, 0, INT64_MAX, &v) != 0)
		return -1;
	p->comm_bytes = (uint64_t)v;
	return 0;
}

static int parse_layer(const struct wl_astra *w, const struct line *l,
		       struct wl_astra_layer *ly)
{
	unsigned want = w->par == WL_PAR_HYBRID_CUSTOMIZED ? 13 : 12;
	long long v;

	if (l->nf != want)
		return wl_err_set(l->err, "%s:%u: layer '%.40s': %u fields, a %s layer has %u (name, reserved, then compute, comm type, comm size for forward, input gradient and weight gradient, then the update delay%s)",
				  l->file, l->no, l->f[0], l->nf, par_names[w->par], want,
				  want == 13 ? ", then the layer's parallelism" : "");
	if (strlen(l->f[0]) >= sizeof(ly->name))
		return wl_err_set(l->err, "%s:%u: layer name longer than %d characters",
				  l->file, l->no, WL_ASTRA_NAME_LEN - 1);
	strcpy(ly->name, l->f[0]);
	ly->line = l->no;
	ly->par = w->par;
	if (field_int(l, 1, "reserved", INT64_MIN, INT64_MAX, &v) != 0)
		return -1;
	ly->reserved = v;
	if (parse_pass(l, 2, "forward", &ly->fwd) != 0 ||
	    parse_pass(l, 5, "input gradient", &ly->ig) != 0 ||
	    parse_pass(l, 8, "weight gradient", &ly->wg) != 0)
		return -1;
	if (field_int(l, 11, "update delay", 0, INT64_MAX, &v) != 0)
		return -1;
	ly->update_cycles = (uint64_t)v;
	if (want == 13) {
		if (field_par(l, 12, &ly->par) != 0)
			return -1;
		if (ly->par > WL_PAR_HYBRID_MODEL_DATA)
			return wl_err_set(l->err, "%s:%u: layer '%s': a layer's own parallelism is DATA, MODEL, HYBRID_DATA_MODEL or HYBRID_MODEL_DATA, not %s",
					  l->file, l->no, ly->name, par_names[ly->par]);
	}
	return 0;
}

static int parse_body(struct wl_astra *w, struct src *s, struct line *l)
{
	long long v;
	int rc;

	if ((rc = next_line(s, l)) != 0)
		return rc < 0 ? -1 : wl_err_set(l->err, "%s:%u: the number of layers is missing",
						 l->file, s->no);
	if (l->nf != 1)
		return wl_err_set(l->err, "%s:%u: the second line is the number of layers alone",
				  l->file, l->no);
	if (field_int(l, 0, "number of layers", 1, MAX_LAYERS, &v) != 0)
		return -1;
	w->layers = calloc((size_t)v, sizeof(*w->layers));
	if (w->layers == NULL)
		return wl_err_set(l->err, "%s: out of memory for %lld layers", l->file, v);
	for (w->nlayers = 0; w->nlayers < (uint32_t)v; w->nlayers++) {
		if ((rc = next_line(s, l)) != 0)
			return rc < 0 ? -1 : wl_err_set(l->err, "%s:%u: %u layers, the second line announces %lld",
							 l->file, s->no, w->nlayers, v);
		if (parse_layer(w, l, &w->layers[w->nlayers]) != 0)
			return -1;
	}
	if ((rc = next_line(s, l)) == 0)
		return wl_err_set(l->err, "%s:%u: more layers than the %lld the second line announces",
				  l->file, l->no, v);
	if (w->par == WL_PAR_HYBRID_DLRM || w->par == WL_PAR_HYBRID_DLRM_ENHANCED)
		if (w->dlrm_last_bottom >= w->nlayers)
			return wl_err_set(l->err, "%s:1: last bottom layer %u, but there are %u layers",
					  l->file, w->dlrm_last_bottom, w->nlayers);
	return rc < 0 ? -1 : 0;
}

int wl_astra_parse(struct wl_astra *w, const char *file, const char *buf,
		   size_t len, struct wl_err *err)
{
	struct src s = { buf, buf + len, 0 };
	struct line *l = malloc(sizeof(*l));
	int rc;

	memset(w, 0, sizeof(*w));
	if (l == NULL)
		return wl_err_set(err, "%s: out of memory", file);
	l->file = file;
	l->err = err;
	rc = next_line(&s, l);
	if (rc > 0)
		rc = wl_err_set(err, "%s: empty: the first line is the parallelism", file);
	if (rc == 0)
		rc = parse_header(w, l);
	if (rc == 0)
		rc = parse_body(w, &s, l);
	free(l);
	if (rc != 0)
		wl_astra_free(w);
	return rc;
}

int wl_astra_load(struct wl_astra *w, const char *file, struct wl_err *err)
{
	FILE *f = fopen(file, "rb");
	struct stat st;
	char *buf = NULL;
	int rc = -1;

	memset(w, 0, sizeof(*w));
	if (f == NULL)
		return wl_err_set(err, "%s: %s", file, strerror(errno));
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
		wl_err_set(err, "%s: not a regular file", file);
	else if (st.st_size > MAX_FILE)
		wl_err_set(err, "%s: larger than %u bytes", file, MAX_FILE);
	else if ((buf = malloc((size_t)st.st_size + 1)) == NULL)
		wl_err_set(err, "%s: out of memory", file);
	else if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
		wl_err_set(err, "%s: read error", file);
	else
		rc = wl_astra_parse(w, file, buf, (size_t)st.st_size, err);
	fclose(f);
	free(buf);
	return rc;
}

void wl_astra_free(struct wl_astra *w)
{
	free(w->layers);
	memset(w, 0, sizeof(*w));
}
