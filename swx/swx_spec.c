/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * swx_spec: the .spec grammar, line by line (see swx_spec.h). A statement at
 * the top opens a block or stands alone; inside a block each line is that
 * block's statement. Checks that need the whole file are in swx_spec_check.c.
 */
#include "swx_spec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SWX_TOKENS_MAX 256 /* MAX_TOKENS of DPDK's own spec parser */

enum swx_block {
	B_TOP, B_STRUCT, B_ACTION, B_TABLE, B_TABLE_KEY, B_TABLE_ACTIONS, B_SELECTOR,
	B_SELECTOR_FIELDS, B_APPLY,
};

static const char *const block_names[] = {
	[B_TOP] = "top", [B_STRUCT] = "struct", [B_ACTION] = "action", [B_TABLE] = "table",
	[B_TABLE_KEY] = "table key", [B_TABLE_ACTIONS] = "table actions",
	[B_SELECTOR] = "selector", [B_SELECTOR_FIELDS] = "selector's selector", [B_APPLY] = "apply",
};

struct ctx {
	struct swx_spec *s;
	uint32_t line;
	enum swx_block block;
	uint32_t block_line;   /* where the outer open block began */
	uint32_t inner_line;   /* where a block inside it (table key/actions, selector's) began */
	char *err;
	size_t errlen;
	char *tok[SWX_TOKENS_MAX];
	uint32_t n;
};

int swx_spec_vfail(char *err, size_t errlen, const char *file, uint32_t line, const char *fmt,
		   va_list ap)
{
	int k = snprintf(err, errlen, "%s:%u: ", file, line);

	if (k >= 0 && (size_t)k < errlen)
		vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
	return -EINVAL;
}

__attribute__((format(printf, 2, 3)))
static int fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	swx_spec_vfail(c->err, c->errlen, c->s->file, c->line, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* *arr (n elements of elem bytes) grown by one zeroed element. */
static int grow(void **arr, uint32_t n, size_t elem)
{
	void *q = realloc(*arr, ((size_t)n + 1) * elem);

	if (q == NULL)
		return -ENOMEM;
	memset((char *)q + (size_t)n * elem, 0, elem);
	*arr = q;
	return 0;
}
#define GROW(arr, n) grow((void **)&(arr), (n), sizeof(*(arr)))

/* Tokens are shorter than SWX_NAME_MAX (checked when split), so they fit. */
static void set_name(char *dst, const char *tok)
{
	snprintf(dst, SWX_NAME_MAX, "%s", tok);
}

static int parse_u64(const char *tok, uint64_t max, uint64_t *v)
{
	char *end;

	if (tok[0] == '-' || tok[0] == '\0')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(tok, &end, 0);

	if (errno || *end || x > max)
		return -1;
	*v = x;
	return 0;
}

static int parse_u32(struct ctx *c, const char *tok, const char *what, uint32_t *v)
{
	uint64_t x;

	if (parse_u64(tok, UINT32_MAX, &x) != 0)
		return fail(c, "%s: '%s' is not a number from 0 to %u", what, tok, UINT32_MAX);
	*v = (uint32_t)x;
	return 0;
}

/* Why rocelab refuses an instruction: NULL when it is supported, "" when unknown. */
static const char *instr_refusal(const char *op)
{
	static const char *const ok[] = {
		"rx", "tx", "drop", "mirror", "recirculate", "recircid", "extract", "lookahead",
		"emit", "validate", "invalidate", "mov", "add", "sub", "ckadd", "cksub", "and", "or",
		"xor", "shl", "shr", "regprefetch", "regrd", "regwr", "regadd", "table", "hash",
		"jmp", "jmpv", "jmpnv", "jmph", "jmpnh", "jmpa", "jmpna", "jmpeq", "jmpneq",
		"jmplt", "jmpgt", "return",
	};
	static const struct { const char *op, *why; } refused[] = {
		{"learn", "learner tables age entries by the TSC, not rocelab's virtual clock"},
		{"rearm", "learner tables age entries by the TSC, not rocelab's virtual clock"},
		{"forget", "learner tables age entries by the TSC, not rocelab's virtual clock"},
		{"entryid", "it reads a learner table's entry, and learner tables are not supported"},
		{"meter", "meters (RFC 2698 trTCM) read the TSC, not rocelab's virtual clock"},
		{"metprefetch", "meters (RFC 2698 trTCM) read the TSC, not rocelab's virtual clock"},
		{"extern", "rocelab registers no extern objects or functions"},
		{"movh", "it moves 128-bit (IPv6) fields, which needs DPDK 24.03 or later"},
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(op, ok[i]) == 0)
			return NULL;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (strcmp(op, refused[i].op) == 0)
			return refused[i].why;
	return "";
}

/* The line's tokens as one instruction, appended to *v. */
static int instr_add(struct ctx *c, struct swx_instr **v, uint32_t *n)
{
	uint32_t op = c->n >= 2 && strcmp(c->tok[1], ":") == 0 ? 2 : 0; /* LABEL : instr */

	if (op >= c->n)
		return fail(c, "label '%s' without an instruction", c->tok[0]);
	const char *why = instr_refusal(c->tok[op]);

	if (why && why[0] == '\0')
		return fail(c, "unknown instruction '%s'", c->tok[op]);
	if (why)
		return fail(c, "instruction '%s' is not supported: %s", c->tok[op], why);
	if (c->n > SWX_INSTR_TOKENS)
		return fail(c, "instruction '%s' has %u tokens, DPDK takes at most %d", c->tok[op],
			    c->n, SWX_INSTR_TOKENS);
	if (GROW(*v, *n) != 0)
		return -ENOMEM;
	struct swx_instr *in = &(*v)[*n];
	size_t k = 0;

	for (uint32_t i = 0; i < c->n; i++) {
		size_t l = strlen(c->tok[i]);

		if (k + l + 1 >= SWX_INSTR_MAX)
			return fail(c, "instruction '%s' is longer than %d characters", c->tok[op],
				    SWX_INSTR_MAX - 1);
		if (i)
			in->text[k++] = ' ';
		memcpy(in->text + k, c->tok[i], l + 1);
		k += l;
	}
	in->line = c->line;
	(*n)++;
	return 0;
}

static int struct_field(struct ctx *c)
{
	struct swx_struct *st = &c->s->structs[c->s->n_structs - 1];
	const char *t = c->tok[0];
	int varbit = strncmp(t, "varbit<", 7) == 0;
	const char *num = varbit ? t + 7 : strncmp(t, "bit<", 4) == 0 ? t + 4 : NULL;
	size_t l = strlen(t);
	char digits[SWX_NAME_MAX];
	uint64_t bits;

	if (c->n != 2 || num == NULL || t[l - 1] != '>')
		return fail(c, "struct %s: a field is 'bit<N> NAME' or 'varbit<N> NAME'", st->name);
	snprintf(digits, sizeof(digits), "%.*s", (int)(t + l - 1 - num), num);
	if (parse_u64(digits, varbit ? 65535 * 8 : SWX_FIELD_BITS_MAX, &bits) != 0 || bits == 0 ||
	    bits % 8)
		return fail(c, "struct %s: field %s: size '%s' is not a multiple of 8 from 8 to %d bits",
			    st->name, c->tok[1], digits, varbit ? 65535 * 8 : SWX_FIELD_BITS_MAX);
	if (st->varbit)
		return fail(c, "struct %s: field %s follows a varbit field, which must be last",
			    st->name, c->tok[1]);
	for (uint32_t i = 0; i < st->n_fields; i++)
		if (strcmp(st->fields[i].name, c->tok[1]) == 0)
			return fail(c, "struct %s: field %s defined twice", st->name, c->tok[1]);
	if (GROW(st->fields, st->n_fields) != 0)
		return -ENOMEM;
	set_name(st->fields[st->n_fields].name, c->tok[1]);
	st->fields[st->n_fields++].n_bits = (uint32_t)bits;
	st->varbit = varbit;
	return 0;
}

static int table_key(struct ctx *c)
{
	struct swx_table *t = &c->s->tables[c->s->n_tables - 1];
	static const char *const kinds[] = {
		[SWX_MATCH_EXACT] = "exact", [SWX_MATCH_LPM] = "lpm", [SWX_MATCH_WILDCARD] = "wildcard",
	};

	for (int m = 0; c->n == 2 && m < 3; m++) {
		if (strcmp(c->tok[1], kinds[m]) != 0)
			continue;
		if (GROW(t->keys, t->n_keys) != 0)
			return -ENOMEM;
		set_name(t->keys[t->n_keys].field, c->tok[0]);
		t->keys[t->n_keys].match = (enum swx_match)m;
		t->keys[t->n_keys++].line = c->line;
		return 0;
	}
	return fail(c, "table %s: a key field is 'FIELD exact|lpm|wildcard'", t->name);
}

static int table_action(struct ctx *c)
{
	struct swx_table *t = &c->s->tables[c->s->n_tables - 1];
	int entries = 1, dflt = 1;

	if (c->n == 2 && strcmp(c->tok[1], "@tableonly") == 0)
		dflt = 0;
	else if (c->n == 2 && strcmp(c->tok[1], "@defaultonly") == 0)
		entries = 0;
	else if (c->n != 1)
		return fail(c, "table %s: an action is 'NAME [@tableonly|@defaultonly]'", t->name);
	if (GROW(t->actions, t->n_actions) != 0)
		return -ENOMEM;
	set_name(t->actions[t->n_actions].name, c->tok[0]);
	t->actions[t->n_actions].for_entries = entries;
	t->actions[t->n_actions++].for_default = dflt;
	return 0;
}

/* default_action NAME args none [const] | default_action NAME args ARG VALUE ... [const] */
static int table_default(struct ctx *c, struct swx_table *t)
{
	uint32_t n = c->n;

	if (t->default_action[0])
		return fail(c, "table %s: a second default_action", t->name);
	if (n >= 5 && strcmp(c->tok[n - 1], "const") == 0) {
		t->default_const = 1;
		n--;
	}
	if (n < 4 || strcmp(c->tok[2], "args") != 0 ||
	    (strcmp(c->tok[3], "none") == 0 && n != 4) || (strcmp(c->tok[3], "none") && (n - 3) % 2))
		return fail(c, "table %s: default_action is 'NAME args none|ARG VALUE ... [const]'",
			    t->name);
	set_name(t->default_action, c->tok[1]);
	if (strcmp(c->tok[3], "none") == 0)
		return 0;
	size_t len = 0;

	for (uint32_t i = 3; i < n; i++)
		len += strlen(c->tok[i]) + 1;
	t->default_args = calloc(1, len);
	if (t->default_args == NULL)
		return -ENOMEM;
	for (uint32_t i = 3; i < n; i++) {
		if (i > 3)
			strcat(t->default_args, " ");
		strcat(t->default_args, c->tok[i]);
	}
	return 0;
}

/* The one-line statements of a table: NAME ARG. */
static int table_setting(struct ctx *c, struct swx_table *t)
{
	const char *k = c->tok[0];
	char *dst = strcmp(k, "hash") == 0 ? t->hash : strcmp(k, "instanceof") == 0 ? t->type :
		    strcmp(k, "pragma") == 0 ? t->pragma : NULL;

	if (strcmp(k, "size") != 0 && dst == NULL)
		return fail(c, "table %s: unknown statement '%s'", t->name, k);
	if (c->n != 2)
		return fail(c, "table %s: '%s' takes one argument", t->name, k);
	if (dst == NULL)
		return parse_u32(c, c->tok[1], "table size", &t->size);
	if (dst[0])
		return fail(c, "table %s: a second '%s'", t->name, k);
	set_name(dst, c->tok[1]);
	return 0;
}

static int table_line(struct ctx *c)
{
	struct swx_table *t = &c->s->tables[c->s->n_tables - 1];
	const char *k = c->tok[0];

	if ((strcmp(k, "key") == 0 || strcmp(k, "actions") == 0) &&
	    (c->n != 2 || strcmp(c->tok[1], "{") != 0))
		return fail(c, "table %s: '%s {' expected", t->name, k);
	if (strcmp(k, "key") == 0 || strcmp(k, "actions") == 0) {
		c->block = strcmp(k, "key") == 0 ? B_TABLE_KEY : B_TABLE_ACTIONS;
		c->inner_line = c->line;
		return 0;
	}
	if (strcmp(k, "default_action") == 0)
		return table_default(c, t);
	return table_setting(c, t);
}

static int selector_line(struct ctx *c)
{
	struct swx_selector *sel = &c->s->selectors[c->s->n_selectors - 1];
	const char *k = c->tok[0];

	if (strcmp(k, "selector") == 0 && c->n == 2 && strcmp(c->tok[1], "{") == 0) {
		c->block = B_SELECTOR_FIELDS;
		c->inner_line = c->line;
		return 0;
	}
	if (c->n != 2)
		return fail(c, "selector %s: '%s' takes one argument", sel->name, k);
	if (strcmp(k, "group_id") == 0) {
		set_name(sel->group_id, c->tok[1]);
		return 0;
	}
	if (strcmp(k, "member_id") == 0) {
		set_name(sel->member_id, c->tok[1]);
		return 0;
	}
	if (strcmp(k, "n_groups_max") == 0)
		return parse_u32(c, c->tok[1], "n_groups_max", &sel->n_groups_max);
	if (strcmp(k, "n_members_per_group_max") == 0)
		return parse_u32(c, c->tok[1], "n_members_per_group_max",
				 &sel->n_members_per_group_max);
	return fail(c, "selector %s: unknown statement '%s'", sel->name, k);
}

static int selector_field(struct ctx *c)
{
	struct swx_selector *sel = &c->s->selectors[c->s->n_selectors - 1];

	if (c->n != 1)
		return fail(c, "selector %s: one field a line", sel->name);
	if (GROW(sel->fields, sel->n_fields) != 0)
		return -ENOMEM;
	set_name(sel->fields[sel->n_fields++], c->tok[0]);
	return 0;
}

/* A line inside a block: '}' closes it (an inner block returns to its outer one). */
static int block_line(struct ctx *c)
{
	struct swx_spec *s = c->s;

	if (c->n == 1 && strcmp(c->tok[0], "}") == 0) {
		c->block = c->block == B_TABLE_KEY || c->block == B_TABLE_ACTIONS ? B_TABLE :
			   c->block == B_SELECTOR_FIELDS ? B_SELECTOR : B_TOP;
		return 0;
	}
	switch (c->block) {
	case B_STRUCT:
		return struct_field(c);
	case B_ACTION:
		return instr_add(c, &s->actions[s->n_actions - 1].instrs,
				 &s->actions[s->n_actions - 1].n_instrs);
	case B_TABLE:
		return table_line(c);
	case B_TABLE_KEY:
		return table_key(c);
	case B_TABLE_ACTIONS:
		return table_action(c);
	case B_SELECTOR:
		return selector_line(c);
	case B_SELECTOR_FIELDS:
		return selector_field(c);
	case B_APPLY:
		return instr_add(c, &s->apply, &s->n_apply);
	case B_TOP:
		break;
	}
	return -EINVAL;
}

/* A block opener 'KIND NAME {': the name copied to a new element of kind. */
static int open_named(struct ctx *c, enum swx_block b)
{
	struct swx_spec *s = c->s;
	char *name;
	uint32_t *line;

	if (c->n != 3 || strcmp(c->tok[2], "{") != 0)
		return fail(c, "'%s NAME {' expected", c->tok[0]);
	if (b == B_STRUCT) {
		if (GROW(s->structs, s->n_structs) != 0)
			return -ENOMEM;
		name = s->structs[s->n_structs].name;
		line = &s->structs[s->n_structs++].line;
	} else if (b == B_TABLE) {
		if (GROW(s->tables, s->n_tables) != 0)
			return -ENOMEM;
		name = s->tables[s->n_tables].name;
		line = &s->tables[s->n_tables++].line;
	} else {
		if (GROW(s->selectors, s->n_selectors) != 0)
			return -ENOMEM;
		name = s->selectors[s->n_selectors].name;
		line = &s->selectors[s->n_selectors++].line;
	}
	set_name(name, c->tok[1]);
	*line = c->line;
	c->block = b;
	return 0;
}

static int open_action(struct ctx *c)
{
	struct swx_spec *s = c->s;
	int none = c->n == 5 && strcmp(c->tok[3], "none") == 0;
	int inst = c->n == 6 && strcmp(c->tok[3], "instanceof") == 0;

	if ((!none && !inst) || strcmp(c->tok[2], "args") != 0 || strcmp(c->tok[c->n - 1], "{"))
		return fail(c, "'action NAME args none {' or 'action NAME args instanceof STRUCT {' expected");
	if (GROW(s->actions, s->n_actions) != 0)
		return -ENOMEM;
	struct swx_action *a = &s->actions[s->n_actions++];

	set_name(a->name, c->tok[1]);
	if (inst)
		set_name(a->args_struct, c->tok[4]);
	a->line = c->line;
	c->block = B_ACTION;
	return 0;
}

static int one_liner(struct ctx *c)
{
	struct swx_spec *s = c->s;
	const char *k = c->tok[0];

	if (strcmp(k, "header") == 0) {
		if (c->n != 4 || strcmp(c->tok[2], "instanceof") != 0)
			return fail(c, "'header NAME instanceof STRUCT' expected");
		if (GROW(s->headers, s->n_headers) != 0)
			return -ENOMEM;
		set_name(s->headers[s->n_headers].name, c->tok[1]);
		set_name(s->headers[s->n_headers].struct_name, c->tok[3]);
		s->headers[s->n_headers++].line = c->line;
		return 0;
	}
	if (strcmp(k, "metadata") == 0) {
		if (c->n != 3 || strcmp(c->tok[1], "instanceof") != 0)
			return fail(c, "'metadata instanceof STRUCT' expected");
		if (s->metadata[0])
			return fail(c, "a second metadata statement (the first at line %u)",
				    s->metadata_line);
		set_name(s->metadata, c->tok[2]);
		s->metadata_line = c->line;
		return 0;
	}
	/* regarray NAME size N initval V */
	if (c->n != 6 || strcmp(c->tok[2], "size") != 0 || strcmp(c->tok[4], "initval") != 0)
		return fail(c, "'regarray NAME size N initval V' expected");
	if (GROW(s->regarrays, s->n_regarrays) != 0)
		return -ENOMEM;
	struct swx_regarray *r = &s->regarrays[s->n_regarrays];

	set_name(r->name, c->tok[1]);
	r->line = c->line;
	if (parse_u32(c, c->tok[3], "regarray size", &r->size) != 0)
		return -EINVAL;
	if (r->size == 0)
		return fail(c, "regarray %s: size 0", r->name);
	if (parse_u64(c->tok[5], UINT64_MAX, &r->init_val) != 0)
		return fail(c, "regarray %s: initval '%s' is not a 64-bit number", r->name, c->tok[5]);
	s->n_regarrays++;
	return 0;
}

static int top_line(struct ctx *c)
{
	const char *k = c->tok[0];
	const char *name = c->n > 1 ? c->tok[1] : "";

	c->block_line = c->line;
	if (strcmp(k, "struct") == 0)
		return open_named(c, B_STRUCT);
	if (strcmp(k, "table") == 0)
		return open_named(c, B_TABLE);
	if (strcmp(k, "selector") == 0)
		return open_named(c, B_SELECTOR);
	if (strcmp(k, "action") == 0)
		return open_action(c);
	if (strcmp(k, "header") == 0 || strcmp(k, "metadata") == 0 || strcmp(k, "regarray") == 0)
		return one_liner(c);
	if (strcmp(k, "apply") == 0) {
		if (c->n != 2 || strcmp(c->tok[1], "{") != 0)
			return fail(c, "'apply {' expected");
		if (c->s->apply_line)
			return fail(c, "a second apply block (the first at line %u)", c->s->apply_line);
		c->s->apply_line = c->line;
		c->block = B_APPLY;
		return 0;
	}
	if (strcmp(k, "learner") == 0)
		return fail(c, "learner table '%s' is not supported: it ages its entries by the TSC "
			    "(rte_swx_table_learner), not by rocelab's virtual clock", name);
	if (strcmp(k, "metarray") == 0)
		return fail(c, "metarray '%s' is not supported: meters (RFC 2698 trTCM) read the "
			    "TSC, not rocelab's virtual clock", name);
	if (strcmp(k, "extobj") == 0)
		return fail(c, "extobj '%s' is not supported: rocelab registers no extern types", name);
	return fail(c, "unknown statement '%s'", k);
}

/* Splits line (NUL-terminated, writable) into c->tok; a comment ends it. */
static int split(struct ctx *c, char *line)
{
	char *save = NULL;

	c->n = 0;
	for (char *t = strtok_r(line, " \f\r\t\v", &save); t; t = strtok_r(NULL, " \f\r\t\v", &save)) {
		if (t[0] == '#' || t[0] == ';' || (t[0] == '/' && t[1] == '/'))
			break;
		if (c->n == SWX_TOKENS_MAX)
			return fail(c, "more than %d tokens on a line", SWX_TOKENS_MAX);
		if (strlen(t) >= SWX_NAME_MAX)
			return fail(c, "token '%.20s...' is longer than %d characters", t,
				    SWX_NAME_MAX - 1);
		c->tok[c->n++] = t;
	}
	return 0;
}

static int parse_lines(struct ctx *c, const char *text, size_t len)
{
	char buf[SWX_LINE_MAX];
	size_t pos = 0;

	for (c->line = 1; pos < len; c->line++) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - (text + pos)) : len - pos;

		if (l >= sizeof(buf))
			return fail(c, "line longer than %zu characters", sizeof(buf) - 1);
		if (memchr(text + pos, '\0', l))
			return fail(c, "a NUL byte");
		memcpy(buf, text + pos, l);
		buf[l] = '\0';
		pos += l + 1;
		int rc = split(c, buf);

		if (rc == 0 && c->n)
			rc = c->block == B_TOP ? top_line(c) : block_line(c);
		if (rc)
			return rc;
	}
	if (c->block != B_TOP) {
		int inner = c->block == B_TABLE_KEY || c->block == B_TABLE_ACTIONS ||
			    c->block == B_SELECTOR_FIELDS;

		c->line--;
		return fail(c, "the file ends inside the %s block begun at line %u (truncated?)",
			    block_names[c->block], inner ? c->inner_line : c->block_line);
	}
	return 0;
}

int swx_spec_parse(const char *text, size_t len, const char *file, struct swx_spec *s,
		   char *err, size_t errlen)
{
	struct ctx c = {.s = s, .err = err, .errlen = errlen};

	memset(s, 0, sizeof(*s));
	snprintf(s->file, sizeof(s->file), "%s", file);
	int rc = parse_lines(&c, text, len);

	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s:%u: out of memory", s->file, c.line);
	if (rc == 0)
		rc = swx_spec_check(s, err, errlen);
	if (rc)
		swx_spec_free(s);
	return rc;
}

int swx_spec_parse_file(const char *path, struct swx_spec *s, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	size_t len = 0, cap = 0, got;

	memset(s, 0, sizeof(*s));
	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -EIO;
	}
	do {
		if (len + 4096 > cap) {
			char *q = realloc(text, cap = len + 65536);

			if (q == NULL) {
				free(text);
				fclose(f);
				snprintf(err, errlen, "%s: out of memory", path);
				return -ENOMEM;
			}
			text = q;
		}
		got = fread(text + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	int bad = ferror(f);

	fclose(f);
	if (bad) {
		free(text);
		snprintf(err, errlen, "%s: read error", path);
		return -EIO;
	}
	int rc = swx_spec_parse(text, len, path, s, err, errlen);

	free(text);
	return rc;
}

static void instrs_free(struct swx_instr **v, uint32_t *n)
{
	free(*v);
	*v = NULL;
	*n = 0;
}

void swx_spec_free(struct swx_spec *s)
{
	for (uint32_t i = 0; i < s->n_structs; i++)
		free(s->structs[i].fields);
	for (uint32_t i = 0; i < s->n_actions; i++)
		instrs_free(&s->actions[i].instrs, &s->actions[i].n_instrs);
	for (uint32_t i = 0; i < s->n_tables; i++) {
		free(s->tables[i].keys);
		free(s->tables[i].actions);
		free(s->tables[i].default_args);
	}
	for (uint32_t i = 0; i < s->n_selectors; i++)
		free(s->selectors[i].fields);
	free(s->structs);
	free(s->headers);
	free(s->actions);
	free(s->tables);
	free(s->selectors);
	free(s->regarrays);
	instrs_free(&s->apply, &s->n_apply);
	memset(s, 0, sizeof(*s));
}

const struct swx_struct *swx_spec_struct(const struct swx_spec *s, const char *name)
{
	for (uint32_t i = 0; i < s->n_structs; i++)
		if (strcmp(s->structs[i].name, name) == 0)
			return &s->structs[i];
	return NULL;
}
