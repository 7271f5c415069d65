/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * swx_spec_check: what a .spec must satisfy across lines before DPDK sees it,
 * so that a refusal names its FILE:LINE (DPDK's configuration calls answer
 * only -EINVAL). The limits are DPDK 22.11's, each cited where it is checked.
 */
#include "swx_spec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* RTE_ACL_MAX_FIELDS, DPDK 22.11 rte_acl.h: LPM and wildcard tables are ACLs. */
#define SWX_ACL_FIELDS_MAX 64

struct chk {
	const struct swx_spec *s;
	char *err;
	size_t errlen;
};

/* Where a field reference points: the struct, its bit offset and width, and the owner's name. */
struct fref {
	const struct swx_struct *st;
	uint32_t offset;
	uint32_t n_bits;
	int varbit;
	char owner[SWX_NAME_MAX + 16]; /* "header ipv4", "metadata", "action args" */
};

__attribute__((format(printf, 3, 4)))
static int fail(const struct chk *c, uint32_t line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	swx_spec_vfail(c->err, c->errlen, c->s->file, line, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const struct swx_header *header_find(const struct swx_spec *s, const char *name, size_t len)
{
	for (uint32_t i = 0; i < s->n_headers; i++)
		if (strlen(s->headers[i].name) == len && strncmp(s->headers[i].name, name, len) == 0)
			return &s->headers[i];
	return NULL;
}

static int field_in(const struct swx_struct *st, const char *name, struct fref *r)
{
	uint32_t off = 0;

	for (uint32_t i = 0; st && i < st->n_fields; i++) {
		if (strcmp(st->fields[i].name, name) == 0) {
			r->st = st;
			r->offset = off;
			r->n_bits = st->fields[i].n_bits;
			r->varbit = st->varbit && i == st->n_fields - 1;
			return 0;
		}
		off += st->fields[i].n_bits;
	}
	return -1;
}

/*
 * Resolves h.HEADER.FIELD, m.FIELD or (args is the action's struct) t.FIELD.
 * Returns 0, or -1 when the reference names nothing.
 */
static int field_ref(const struct swx_spec *s, const struct swx_struct *args, const char *ref,
		     struct fref *r)
{
	if (strncmp(ref, "m.", 2) == 0) {
		snprintf(r->owner, sizeof(r->owner), "metadata");
		return field_in(swx_spec_struct(s, s->metadata), ref + 2, r);
	}
	if (strncmp(ref, "t.", 2) == 0) {
		snprintf(r->owner, sizeof(r->owner), "action args");
		return field_in(args, ref + 2, r);
	}
	const char *dot = strncmp(ref, "h.", 2) == 0 ? strchr(ref + 2, '.') : NULL;
	const struct swx_header *h = dot ? header_find(s, ref + 2, (size_t)(dot - ref - 2)) : NULL;

	if (h == NULL)
		return -1;
	snprintf(r->owner, sizeof(r->owner), "header %s", h->name);
	return field_in(swx_spec_struct(s, h->struct_name), dot + 1, r);
}

static int check_structs(const struct chk *c)
{
	const struct swx_spec *s = c->s;

	for (uint32_t i = 0; i < s->n_structs; i++) {
		if (s->structs[i].n_fields == 0)
			return fail(c, s->structs[i].line, "struct %s has no fields", s->structs[i].name);
		for (uint32_t j = 0; j < i; j++)
			if (strcmp(s->structs[i].name, s->structs[j].name) == 0)
				return fail(c, s->structs[i].line, "struct %s defined twice (line %u)",
					    s->structs[i].name, s->structs[j].line);
	}
	for (uint32_t i = 0; i < s->n_headers; i++)
		if (swx_spec_struct(s, s->headers[i].struct_name) == NULL)
			return fail(c, s->headers[i].line, "header %s: no struct %s",
				    s->headers[i].name, s->headers[i].struct_name);
	if (s->metadata[0] && swx_spec_struct(s, s->metadata) == NULL)
		return fail(c, s->metadata_line, "metadata: no struct %s", s->metadata);
	for (uint32_t i = 0; i < s->n_actions; i++)
		if (s->actions[i].args_struct[0] &&
		    swx_spec_struct(s, s->actions[i].args_struct) == NULL)
			return fail(c, s->actions[i].line, "action %s: no struct %s",
				    s->actions[i].name, s->actions[i].args_struct);
	return 0;
}

/*
 * hash FUNC DST FIRST LAST hashes the bytes from FIRST to LAST of one struct
 * (DPDK 22.11 rte_swx_pipeline.c, instr_hash_translate: both ends in one
 * struct, the range contiguous).
 */
static int check_hash(const struct chk *c, const struct swx_instr *in,
		      const struct swx_struct *args)
{
	char op[SWX_NAME_MAX], fn[SWX_NAME_MAX], dst[SWX_NAME_MAX], a[SWX_NAME_MAX], b[SWX_NAME_MAX];
	char extra[2];
	struct fref fa, fb;
	const char *t = strstr(in->text, " : ") ? strstr(in->text, " : ") + 3 : in->text;

	if (sscanf(t, "%63s %63s %63s %63s %63s %1s", op, fn, dst, a, b, extra) != 5)
		return fail(c, in->line, "hash takes FUNCTION DST FIRST LAST");
	if (strcmp(fn, "jhash") != 0 && strcmp(fn, "crc32") != 0 && strcmp(fn, "rl_hash") != 0)
		return fail(c, in->line, "hash: no hash function '%s' (DPDK 22.11 has jhash and "
			    "crc32, rocelab adds rl_hash)", fn);
	if (field_ref(c->s, args, a, &fa) != 0 || field_ref(c->s, args, b, &fb) != 0)
		return fail(c, in->line, "hash: no field %s", field_ref(c->s, args, a, &fa) ? a : b);
	if (fa.st != fb.st || strcmp(fa.owner, fb.owner) != 0)
		return fail(c, in->line, "hash over two structs: %s is in %s, %s in %s; DPDK hashes "
			    "one contiguous range of one struct (copy the fields into metadata "
			    "side by side)", a, fa.owner, b, fb.owner);
	if (fb.offset < fa.offset)
		return fail(c, in->line, "hash: %s comes before %s in %s", b, a, fa.owner);
	return 0;
}

static int check_instrs(const struct chk *c, const struct swx_instr *v, uint32_t n,
			const struct swx_struct *args)
{
	for (uint32_t i = 0; i < n; i++) {
		const char *t = strstr(v[i].text, " : ") ? strstr(v[i].text, " : ") + 3 : v[i].text;

		if (strncmp(t, "hash ", 5) == 0 || strcmp(t, "hash") == 0) {
			int rc = check_hash(c, &v[i], args);

			if (rc)
				return rc;
		}
	}
	return 0;
}

/*
 * A table whose key is not all exact fields side by side is an ACL (DPDK
 * 22.11 lib/table/rte_swx_table_wm.c, acl_table_cfg_get): over the key's
 * bytes, its first ACL field takes 1 byte and each later one 4, bytes outside
 * every key field are skipped; more than RTE_ACL_MAX_FIELDS fields fail.
 */
static uint32_t acl_fields(const uint8_t *mask, uint32_t n_bytes)
{
	uint32_t n = 0;

	for (uint32_t b = 0; b < n_bytes;) {
		if (!mask[b]) {
			b++;
			continue;
		}
		b += n ? 4 : 1;
		n++;
	}
	return n;
}

static int check_key_width(const struct chk *c, const struct swx_table *t, const struct fref *r)
{
	uint32_t lo = UINT32_MAX, hi = 0, bits = 0;
	int exact = 1;

	for (uint32_t i = 0; i < t->n_keys; i++) {
		lo = r[i].offset < lo ? r[i].offset : lo;
		hi = r[i].offset + r[i].n_bits > hi ? r[i].offset + r[i].n_bits : hi;
		bits += r[i].n_bits;
		exact &= t->keys[i].match == SWX_MATCH_EXACT;
	}
	if (exact && bits == hi - lo)
		return 0; /* an exact-match hash table: DPDK 22.11 sets no key limit */
	uint8_t *mask = calloc(1, (hi - lo) / 8);

	if (mask == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->n_keys; i++)
		memset(mask + (r[i].offset - lo) / 8, 1, r[i].n_bits / 8);
	uint32_t n = acl_fields(mask, (hi - lo) / 8);

	free(mask);
	if (n > SWX_ACL_FIELDS_MAX)
		return fail(c, t->line, "table %s: key of %u bytes is too wide: it needs %u ACL fields "
			    "and DPDK's LPM/wildcard table takes at most %d (RTE_ACL_MAX_FIELDS)",
			    t->name, (hi - lo) / 8, n, SWX_ACL_FIELDS_MAX);
	return 0;
}

static int check_keys(const struct chk *c, const struct swx_table *t)
{
	struct fref *r = calloc(t->n_keys ? t->n_keys : 1, sizeof(*r));
	uint32_t n_lpm = 0;
	int rc = 0;

	if (r == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->n_keys && rc == 0; i++) {
		const struct swx_key *k = &t->keys[i];

		if (strncmp(k->field, "t.", 2) == 0 || field_ref(c->s, NULL, k->field, &r[i]) != 0)
			rc = fail(c, k->line, "table %s: no field %s", t->name, k->field);
		else if (r[i].varbit)
			rc = fail(c, k->line, "table %s: key field %s is varbit", t->name, k->field);
		else if (i && strcmp(r[i].owner, r[0].owner) != 0)
			rc = fail(c, k->line, "table %s: key fields in two structs (%s and %s): DPDK "
				  "takes a key from one header or the metadata", t->name, r[0].owner,
				  r[i].owner);
		n_lpm += k->match == SWX_MATCH_LPM;
	}
	/* DPDK 22.11 table_match_type_resolve: one LPM field at most, the others exact */
	if (rc == 0 && n_lpm > 1)
		rc = fail(c, t->line, "table %s: more than one lpm field", t->name);
	for (uint32_t i = 0; rc == 0 && n_lpm && i < t->n_keys; i++)
		if (t->keys[i].match == SWX_MATCH_WILDCARD)
			rc = fail(c, t->keys[i].line, "table %s: an lpm key takes exact fields besides, "
				  "not wildcard", t->name);
	if (rc == 0 && t->n_keys)
		rc = check_key_width(c, t, r);
	free(r);
	return rc;
}

static const struct swx_action *action_find(const struct swx_spec *s, const char *name)
{
	for (uint32_t i = 0; i < s->n_actions; i++)
		if (strcmp(s->actions[i].name, name) == 0)
			return &s->actions[i];
	return NULL;
}

static int check_table(const struct chk *c, const struct swx_table *t)
{
	int dflt = 0;

	if (t->n_actions == 0)
		return fail(c, t->line, "table %s has no actions", t->name);
	for (uint32_t i = 0; i < t->n_actions; i++) {
		if (action_find(c->s, t->actions[i].name) == NULL)
			return fail(c, t->line, "table %s: no action %s", t->name, t->actions[i].name);
		dflt |= strcmp(t->actions[i].name, t->default_action) == 0;
	}
	if (!dflt)
		return fail(c, t->line, "table %s: the default_action must be one of its actions",
			    t->name);
	/* DPDK 22.11 sizes a table's memory by it (rte_swx_table_params.n_keys_max != 0) */
	if (t->n_keys && t->size == 0)
		return fail(c, t->line, "table %s: no size statement (or size 0)", t->name);
	return check_keys(c, t);
}

int swx_spec_check(const struct swx_spec *s, char *err, size_t errlen)
{
	const struct chk c = {.s = s, .err = err, .errlen = errlen};
	int rc = check_structs(&c);

	for (uint32_t i = 0; rc == 0 && i < s->n_tables; i++)
		rc = check_table(&c, &s->tables[i]);
	for (uint32_t i = 0; rc == 0 && i < s->n_actions; i++)
		rc = check_instrs(&c, s->actions[i].instrs, s->actions[i].n_instrs,
				  swx_spec_struct(s, s->actions[i].args_struct));
	if (rc == 0)
		rc = check_instrs(&c, s->apply, s->n_apply, NULL);
	if (rc == 0 && s->n_apply == 0)
		rc = fail(&c, s->apply_line ? s->apply_line : 1, "no apply block, or an empty one");
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", s->file);
	return rc;
}
