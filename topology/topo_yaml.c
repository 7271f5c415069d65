/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared YAML helpers of the topology loader and the traffic-file reader (topo_yaml.h). */
#include "topo_yaml.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- errors */

/* Record the first error as "FILE:LINE: msg"; always returns -1. */
int topo_yaml_fail(struct topo_yaml_ctx *c, int line, const char *fmt, ...)
{
	if (c->failed)
		return -1;
	c->failed = true;
	if (!c->err || c->errlen == 0)
		return -1;
	int n;
	if (line > 0)
		n = snprintf(c->err, c->errlen, "%s:%d: ", c->file, line);
	else
		n = snprintf(c->err, c->errlen, "%s: ", c->file);
	if (n < 0 || (size_t)n >= c->errlen)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* ------------------------------------------------------------ YAML nodes */

/* 1-based line of a node, or fallback when it has no token (empty collection). */
int topo_yaml_line(struct fy_node *n, int fallback)
{
	if (!n)
		return fallback;
	switch (fy_node_get_type(n)) {
	case FYNT_SCALAR: {
		struct fy_token *t = fy_node_get_scalar_token(n);
		const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
		return m ? m->line + 1 : fallback;
	}
	case FYNT_MAPPING: {
		void *it = NULL;
		struct fy_node_pair *p = fy_node_mapping_iterate(n, &it);
		return p ? topo_yaml_line(fy_node_pair_key(p), fallback) : fallback;
	}
	case FYNT_SEQUENCE: {
		void *it = NULL;
		struct fy_node *item = fy_node_sequence_iterate(n, &it);
		return item ? topo_yaml_line(item, fallback) : fallback;
	}
	}
	return fallback;
}

const char *topo_yaml_type_word(struct fy_node *n)
{
	if (!n)
		return "nothing";
	switch (fy_node_get_type(n)) {
	case FYNT_SCALAR:
		return "a scalar";
	case FYNT_MAPPING:
		return "a mapping";
	case FYNT_SEQUENCE:
		return "a list";
	}
	return "?";
}

/* A scalar with no text, or a plain ~ / null: YAML's null. */
bool topo_yaml_is_null(struct fy_node *n)
{
	if (!n)
		return true;
	if (fy_node_get_type(n) != FYNT_SCALAR || fy_node_is_alias(n))
		return false;
	size_t len = 0;
	const char *s = fy_node_get_scalar(n, &len);
	if (!s || len == 0)
		return fy_node_get_style(n) == FYNS_PLAIN;
	if (fy_node_get_style(n) != FYNS_PLAIN)
		return false;
	return (len == 1 && s[0] == '~') || (len == 4 && memcmp(s, "null", 4) == 0);
}

/*
 * Copy a scalar value into buf as a C string. `key` names the value in
 * messages; key_line is used when the value has no position (null value).
 */
int topo_yaml_scalar(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		     char *buf, size_t len)
{
	int line = topo_yaml_line(v, key_line);
	if (topo_yaml_is_null(v))
		return topo_yaml_fail(c, key_line, "%s: missing value", key);
	if (fy_node_is_alias(v))
		return topo_yaml_fail(c, line, "%s: YAML aliases are not supported", key);
	if (fy_node_get_type(v) != FYNT_SCALAR)
		return topo_yaml_fail(c, line, "%s: expected a scalar value, got %s", key,
				      topo_yaml_type_word(v));
	size_t n = 0;
	const char *s = fy_node_get_scalar(v, &n);
	if (!s)
		return topo_yaml_fail(c, line, "%s: unreadable value", key);
	if (n >= len)
		return topo_yaml_fail(c, line, "%s: value too long (at most %zu characters)", key,
				      len - 1);
	if (memchr(s, '\0', n))
		return topo_yaml_fail(c, line, "%s: value contains a NUL character", key);
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

/* -------------------------------------------------------------- mappings */

int topo_yaml_walk_map(struct topo_yaml_ctx *c, struct fy_node *map, int line, const char *what,
		       const char *const *keys, topo_yaml_pair_fn fn, void *obj)
{
	if (topo_yaml_is_null(map))
		return topo_yaml_fail(c, line, "%s: expected a mapping, got nothing", what);
	if (fy_node_is_alias(map))
		return topo_yaml_fail(c, topo_yaml_line(map, line),
				      "%s: YAML aliases are not supported", what);
	if (fy_node_get_type(map) != FYNT_MAPPING)
		return topo_yaml_fail(c, topo_yaml_line(map, line),
				      "%s: expected a mapping (key: value), got %s", what,
				      topo_yaml_type_word(map));
	void *it = NULL;
	struct fy_node_pair *p;
	while ((p = fy_node_mapping_iterate(map, &it))) {
		struct fy_node *k = fy_node_pair_key(p);
		struct fy_node *v = fy_node_pair_value(p);
		int kl = topo_yaml_line(k, topo_yaml_line(v, line));
		char key[64];
		if (!k || fy_node_get_type(k) != FYNT_SCALAR || fy_node_is_alias(k))
			return topo_yaml_fail(c, kl, "%s: keys must be plain words", what);
		if (topo_yaml_scalar(c, k, what, kl, key, sizeof(key)))
			return -1;
		bool known = keys == NULL; /* (any key: its owner checks it) */
		for (const char *const *q = keys; q && *q; q++)
			if (strcmp(*q, key) == 0)
				known = true;
		if (!known) {
			char list[512];
			size_t off = 0;
			list[0] = '\0';
			for (const char *const *q = keys; *q && off < sizeof(list); q++) {
				int n = snprintf(list + off, sizeof(list) - off, "%s%s",
						 q == keys ? "" : ", ", *q);
				if (n < 0)
					break;
				off += (size_t)n;
			}
			return topo_yaml_fail(c, kl, "unknown key '%s' in %s (expected: %s)", key,
					      what, list);
		}
		if (fn(c, obj, key, v, kl))
			return -1;
	}
	return 0;
}

struct fy_node *topo_yaml_map_get(struct fy_node *map, const char *key)
{
	if (!map || fy_node_get_type(map) != FYNT_MAPPING)
		return NULL;
	return fy_node_mapping_lookup_by_string(map, key, strlen(key));
}

int topo_yaml_check_list(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line)
{
	if (topo_yaml_is_null(v))
		return topo_yaml_fail(c, key_line, "%s: missing value (expected a list)", key);
	if (fy_node_is_alias(v))
		return topo_yaml_fail(c, topo_yaml_line(v, key_line),
				      "%s: YAML aliases are not supported", key);
	if (fy_node_get_type(v) != FYNT_SEQUENCE)
		return topo_yaml_fail(c, topo_yaml_line(v, key_line), "%s: expected a list, got %s",
				      key, topo_yaml_type_word(v));
	return 0;
}

/* ------------------------------------------------------------- documents */

static void diag_output(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
	(void)diag;
	struct topo_yaml_ctx *c = user;
	size_t have = strlen(c->diag_text);
	if (have + 1 >= sizeof(c->diag_text))
		return;
	size_t n = len < sizeof(c->diag_text) - have - 1 ? len : sizeof(c->diag_text) - have - 1;
	memcpy(c->diag_text + have, buf, n);
	c->diag_text[have + n] = '\0';
}

/* Report the first YAML error libfyaml collected, as FILE:LINE. */
static int yaml_error(struct topo_yaml_ctx *c, struct fy_diag *diag)
{
	void *it = NULL;
	struct fy_diag_error *e = fy_diag_errors_iterate(diag, &it);
	if (e && e->msg) {
		/* collected positions are 1-based already */
		int line = e->line > 0 ? e->line : 1;
		return topo_yaml_fail(c, line, "YAML syntax error: %s (column %d)", e->msg,
				      e->column > 0 ? e->column : 1);
	}
	/* no position: use libfyaml's text, stripped to its first line */
	char *nl = strchr(c->diag_text, '\n');
	if (nl)
		*nl = '\0';
	return topo_yaml_fail(c, 1, "YAML syntax error%s%s", c->diag_text[0] ? ": " : "",
			      c->diag_text);
}

/*
 * Offset of the first byte of s[0..len) that is not part of well-formed
 * UTF-8 (RFC 3629: no overlong forms, surrogates or values past U+10FFFF),
 * or len when all is. YAML is Unicode text, and libfyaml 0.7.12 loops forever
 * on some malformed input (a '%' then the byte 0xf6), so it gets none.
 */
static size_t utf8_bad_offset(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char b = s[i];
		size_t n = b < 0x80 ? 1 : (b & 0xe0) == 0xc0 ? 2 : (b & 0xf0) == 0xe0 ? 3 : (b & 0xf8) == 0xf0 ? 4 : 0;
		if (n == 0 || b == 0xc0 || b == 0xc1 || b > 0xf4 || i + n > len)
			return i;
		for (size_t k = 1; k < n; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return i;
		unsigned char b1 = n > 1 ? s[i + 1] : 0;
		if ((b == 0xe0 && b1 < 0xa0) || (b == 0xed && b1 > 0x9f) || (b == 0xf0 && b1 < 0x90) ||
		    (b == 0xf4 && b1 > 0x8f))
			return i; /* overlong, surrogate, or above U+10FFFF */
		i += n;
	}
	return len;
}

/* 1-based line of offset off in s. */
static int line_of(const char *s, size_t off)
{
	int line = 1;

	for (size_t i = 0; i < off; i++)
		line += s[i] == '\n';
	return line;
}

/*
 * Offset of the first ':' that libfyaml 0.7.12 (Debian 12) crashes on, or len
 * when there is none. Its fy_fetch_value() (src/lib/fy-parse.c, v0.7.12) recycles
 * the simple key of a ':' (line 2787), then fails in fy_ws_indentation_check()
 * (line 2794) when a complex key ('?') is pending and the blanks after the ':'
 * hold a tab followed by ?, :, |, >, a NUL byte, or '-' and a blank or the end;
 * its error path recycles the key again (line 2836). The recycled list loops on
 * itself and fy_parser_destroy() crashes. Upstream fixed it in 0bb4406 (v0.8).
 * This test is wider than the crash: any '?' before, any such ':'.
 */
static size_t fyaml_crash_offset(const char *s, size_t len)
{
	const char *q = memchr(s, '?', len);

	for (size_t i = q ? (size_t)(q - s) : len; i < len; i++) {
		if (s[i] != ':')
			continue;
		size_t j = i + 1;
		bool tab = false;
		while (j < len && (s[j] == ' ' || s[j] == '\t'))
			tab |= s[j++] == '\t';
		if (!tab || j == len)
			continue;
		bool graphic_next = j + 1 < len && s[j + 1] > ' ' && s[j + 1] < 0x7f;
		if (memchr("?:|>", s[j], 5) || (s[j] == '-' && !graphic_next))
			return i; /* (memchr's 5 bytes include the NUL) */
	}
	return len;
}

/* Refuse what libfyaml must not see: text that is not UTF-8, and its crash above. */
static int yaml_precheck(struct topo_yaml_ctx *c, const char *yaml, size_t len)
{
	size_t bad = utf8_bad_offset((const unsigned char *)yaml, len);
	if (bad < len)
		return topo_yaml_fail(c, line_of(yaml, bad), "not UTF-8 text (byte 0x%02x)",
				      (unsigned char)yaml[bad]);
	bad = fyaml_crash_offset(yaml, len);
	if (bad < len)
		return topo_yaml_fail(c, line_of(yaml, bad),
				      "a tab after ':' before an indicator (?:|>-) in a file that "
				      "uses '?' crashes libfyaml 0.7.12; use spaces there");
	return 0;
}

int topo_yaml_open(struct topo_yaml_ctx *c, const char *yaml, size_t len, const char *what,
		   struct topo_yaml_doc *d)
{
	memset(d, 0, sizeof(*d));
	if (yaml && yaml_precheck(c, yaml, len))
		return -1;
	struct fy_diag_cfg dcfg;
	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.output_fn = diag_output;
	dcfg.user = c;
	dcfg.level = FYET_ERROR;
	dcfg.colorize = false;
	dcfg.show_source = false;
	d->diag = fy_diag_create(&dcfg);
	if (!d->diag)
		return topo_yaml_fail(c, 0, "cannot create the YAML diagnostics");
	fy_diag_set_collect_errors(d->diag, true);
	struct fy_parse_cfg pcfg = {.flags = FYPCF_QUIET | FYPCF_DISABLE_MMAP_OPT, .diag = d->diag};
	d->fyp = fy_parser_create(&pcfg);
	if (!d->fyp || fy_parser_set_string(d->fyp, yaml ? yaml : "", len))
		return topo_yaml_fail(c, 0, "cannot create the YAML parser");
	d->doc = fy_parse_load_document(d->fyp);
	if (!d->doc || fy_diag_got_error(d->diag)) {
		if (fy_diag_got_error(d->diag))
			return yaml_error(c, d->diag);
		return topo_yaml_fail(c, 1, "empty %s: no YAML document", what);
	}
	d->root = fy_document_root(d->doc);
	if (!d->root || topo_yaml_is_null(d->root))
		return topo_yaml_fail(c, 1, "empty %s: the document has no content", what);
	struct fy_document *extra = fy_parse_load_document(d->fyp);
	if (extra) {
		int line = topo_yaml_line(fy_document_root(extra), 0);
		fy_parse_document_destroy(d->fyp, extra);
		return topo_yaml_fail(c, line,
				      "only one YAML document is allowed (found a second one)");
	}
	if (fy_diag_got_error(d->diag))
		return yaml_error(c, d->diag);
	return 0;
}

void topo_yaml_close(struct topo_yaml_doc *d)
{
	if (d->doc)
		fy_parse_document_destroy(d->fyp, d->doc);
	if (d->fyp)
		fy_parser_destroy(d->fyp);
	if (d->diag)
		fy_diag_destroy(d->diag);
	memset(d, 0, sizeof(*d));
}

int topo_yaml_read_file(struct topo_yaml_ctx *c, char **out, size_t *out_len)
{
	FILE *f = fopen(c->file, "rb");
	if (!f)
		return topo_yaml_fail(c, 0, "cannot read: %s", strerror(errno));
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc = 0;
	for (;;) {
		if (len == cap) {
			if (cap >= TOPO_YAML_MAX_FILE_BYTES) {
				rc = topo_yaml_fail(c, 0, "cannot read: larger than %u bytes",
						    TOPO_YAML_MAX_FILE_BYTES);
				break;
			}
			cap = cap ? 2 * cap : 65536;
			char *nb = realloc(buf, cap + 1);
			if (!nb) {
				rc = topo_yaml_fail(c, 0, "cannot read: out of memory");
				break;
			}
			buf = nb;
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0) {
			if (ferror(f))
				rc = topo_yaml_fail(c, 0, "cannot read: %s",
						    strerror(errno ? errno : EIO));
			break;
		}
	}
	fclose(f);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}
