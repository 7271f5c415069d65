/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * swx_load: one DPDK configuration call per construct of the description, in
 * the order DPDK's own spec loader uses (DPDK 22.11 rte_swx_pipeline_spec.c,
 * pipeline_spec_configure): register arrays, structs, headers, metadata,
 * actions, tables, selectors, then the apply block, then build.
 */
#include "swx_load.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_swx_ctl.h>
#include <rte_swx_pipeline.h>

#include "swx_hash.h"
#include "swx_pipe_int.h"

__attribute__((format(printf, 6, 7)))
static int refused(char *err, size_t errlen, const struct swx_spec *s, uint32_t line, int rc,
		   const char *fmt, ...)
{
	va_list ap;
	int k = snprintf(err, errlen, "%s:%u: DPDK refused ", s->file, line);

	if (k < 0 || (size_t)k >= errlen)
		return rc == -ENOMEM ? -ENOMEM : -EINVAL;
	va_start(ap, fmt);
	int m = vsnprintf(err + k, errlen - (size_t)k, fmt, ap);

	va_end(ap);
	if (m >= 0 && (size_t)(k + m) < errlen)
		snprintf(err + k + m, errlen - (size_t)(k + m), " (%s)", strerror(-rc));
	return rc == -ENOMEM ? -ENOMEM : -EINVAL;
}

/* Instruction texts as DPDK takes them, some rewritten (guard_tx). */
struct texts {
	const char **v;
	char (*buf)[SWX_INSTR_MAX];
	uint32_t n;
};

static void texts_free(struct texts *t)
{
	free(t->v);
	free(t->buf);
}

/*
 * Appends in's text to t, a tx guarded: DPDK 22.11 indexes its output ports
 * with tx's operand unchecked (rte_swx_pipeline_internal.h, __instr_tx_exec:
 * p->out[port_id]), so a table entry's port past the last would read past the
 * array. "[L :] tx m.F" becomes "[L :] jmplt rl_txN m.F PORTS", "drop",
 * "rl_txN : tx m.F": such a frame is dropped, as by a switch without that
 * port. "tx N" past the ports is refused.
 */
static int guard_tx(const struct swx_spec *s, const struct swx_instr *in, uint32_t n_ports,
		    struct texts *t, char *err, size_t errlen)
{
	static uint32_t seq;
	const char *colon = strstr(in->text, " : ");
	const char *body = colon ? colon + 3 : in->text;
	int lab = colon ? (int)(colon - in->text) : 0;
	char op[SWX_NAME_MAX], arg[SWX_NAME_MAX], rest[2], *end;

	if (sscanf(body, "%63s %63s %1s", op, arg, rest) != 2 || strcmp(op, "tx") != 0) {
		t->v[t->n++] = in->text;
		return 0;
	}
	if (strncmp(arg, "m.", 2) != 0) {
		unsigned long long port = strtoull(arg, &end, 0);

		if (*end == '\0' && port >= n_ports) {
			snprintf(err, errlen, "%s:%u: tx to port %s: the pipeline has ports 0 to %u",
				 s->file, in->line, arg, n_ports - 1);
			return -EINVAL;
		}
		t->v[t->n++] = in->text;
		return 0;
	}
	uint32_t id = seq++;

	snprintf(t->buf[t->n], SWX_INSTR_MAX, "%.*s%sjmplt rl_tx%u %s %u", lab, in->text,
		 colon ? " : " : "", id, arg, n_ports);
	snprintf(t->buf[t->n + 1], SWX_INSTR_MAX, "drop");
	snprintf(t->buf[t->n + 2], SWX_INSTR_MAX, "rl_tx%u : tx %s", id, arg);
	for (int i = 0; i < 3; i++, t->n++)
		t->v[t->n] = t->buf[t->n];
	return 0;
}

static int texts_make(const struct swx_spec *s, const struct swx_instr *v, uint32_t n,
		      uint32_t n_ports, struct texts *t, char *err, size_t errlen)
{
	t->n = 0;
	t->v = calloc(3 * (size_t)n + 1, sizeof(*t->v));
	t->buf = calloc(3 * (size_t)n + 1, sizeof(*t->buf));
	if (t->v == NULL || t->buf == NULL) {
		texts_free(t);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		int rc = guard_tx(s, &v[i], n_ports, t, err, errlen);

		if (rc) {
			texts_free(t);
			return rc;
		}
	}
	return 0;
}

static int load_structs(struct rte_swx_pipeline *p, const struct swx_spec *s, char *err,
			size_t errlen)
{
	for (uint32_t i = 0; i < s->n_structs; i++) {
		const struct swx_struct *st = &s->structs[i];
		struct rte_swx_field_params *f = calloc(st->n_fields, sizeof(*f));

		if (f == NULL)
			return -ENOMEM;
		for (uint32_t j = 0; j < st->n_fields; j++)
			f[j] = (struct rte_swx_field_params){st->fields[j].name, st->fields[j].n_bits};
		int rc = rte_swx_pipeline_struct_type_register(p, st->name, f, st->n_fields,
							       st->varbit);

		free(f);
		if (rc)
			return refused(err, errlen, s, st->line, rc, "struct %s", st->name);
	}
	for (uint32_t i = 0; i < s->n_headers; i++) {
		int rc = rte_swx_pipeline_packet_header_register(p, s->headers[i].name,
								 s->headers[i].struct_name);
		if (rc)
			return refused(err, errlen, s, s->headers[i].line, rc, "header %s",
				       s->headers[i].name);
	}
	if (s->metadata[0]) {
		int rc = rte_swx_pipeline_packet_metadata_register(p, s->metadata);

		if (rc)
			return refused(err, errlen, s, s->metadata_line, rc, "metadata %s", s->metadata);
	}
	return 0;
}

static int load_actions(struct rte_swx_pipeline *p, const struct swx_spec *s, uint32_t n_ports,
			char *err, size_t errlen)
{
	for (uint32_t i = 0; i < s->n_actions; i++) {
		const struct swx_action *a = &s->actions[i];
		struct texts t;
		int rc = texts_make(s, a->instrs, a->n_instrs, n_ports, &t, err, errlen);

		if (rc)
			return rc;
		rc = rte_swx_pipeline_action_config(p, a->name, a->args_struct[0] ? a->args_struct : NULL,
						    t.v, t.n);
		texts_free(&t);
		if (rc)
			return refused(err, errlen, s, a->line, rc, "action %s", a->name);
	}
	return 0;
}

static const enum rte_swx_table_match_type match_types[] = {
	[SWX_MATCH_EXACT] = RTE_SWX_TABLE_MATCH_EXACT,
	[SWX_MATCH_LPM] = RTE_SWX_TABLE_MATCH_LPM,
	[SWX_MATCH_WILDCARD] = RTE_SWX_TABLE_MATCH_WILDCARD,
};

/* Arrays of one table's parameters, freed together. */
struct table_arrays {
	struct rte_swx_match_field_params *fields;
	const char **names;
	int *entries;
	int *dflt;
};

static int load_table(struct rte_swx_pipeline *p, const struct swx_spec *s,
		      const struct swx_table *t, char *err, size_t errlen)
{
	struct table_arrays a = {
		calloc(t->n_keys ? t->n_keys : 1, sizeof(*a.fields)),
		calloc(t->n_actions, sizeof(*a.names)), calloc(t->n_actions, sizeof(int)),
		calloc(t->n_actions, sizeof(int)),
	};
	int rc = -ENOMEM;

	if (a.fields && a.names && a.entries && a.dflt) {
		for (uint32_t i = 0; i < t->n_keys; i++)
			a.fields[i] = (struct rte_swx_match_field_params){
				t->keys[i].field, match_types[t->keys[i].match]};
		for (uint32_t i = 0; i < t->n_actions; i++) {
			a.names[i] = t->actions[i].name;
			a.entries[i] = t->actions[i].for_entries;
			a.dflt[i] = t->actions[i].for_default;
		}
		struct rte_swx_pipeline_table_params tp = {
			.fields = t->n_keys ? a.fields : NULL,
			.n_fields = t->n_keys,
			.action_names = a.names,
			.action_is_for_table_entries = a.entries,
			.action_is_for_default_entry = a.dflt,
			.n_actions = t->n_actions,
			.default_action_name = t->default_action,
			.default_action_args = t->default_args,
			.default_action_is_const = t->default_const,
			.hash_func_name = t->hash[0] ? t->hash : NULL,
		};
		rc = rte_swx_pipeline_table_config(p, t->name, &tp, t->type[0] ? t->type : NULL,
						   t->pragma[0] ? t->pragma : NULL, t->size);
	}
	free(a.fields);
	free(a.names);
	free(a.entries);
	free(a.dflt);
	return rc ? refused(err, errlen, s, t->line, rc, "table %s", t->name) : 0;
}

static int load_selector(struct rte_swx_pipeline *p, const struct swx_spec *s,
			 const struct swx_selector *sel, char *err, size_t errlen)
{
	const char **f = calloc(sel->n_fields ? sel->n_fields : 1, sizeof(*f));

	if (f == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < sel->n_fields; i++)
		f[i] = sel->fields[i];
	struct rte_swx_pipeline_selector_params sp = {
		.group_id_field_name = sel->group_id,
		.selector_field_names = f,
		.n_selector_fields = sel->n_fields,
		.member_id_field_name = sel->member_id,
		.n_groups_max = sel->n_groups_max,
		.n_members_per_group_max = sel->n_members_per_group_max,
	};
	int rc = rte_swx_pipeline_selector_config(p, sel->name, &sp);

	free(f);
	return rc ? refused(err, errlen, s, sel->line, rc, "selector %s", sel->name) : 0;
}

static int load_all(struct rte_swx_pipeline *p, const struct swx_spec *s, uint32_t n_ports,
		    char *err, size_t errlen)
{
	struct texts t;
	int rc = 0;

	for (uint32_t i = 0; rc == 0 && i < s->n_regarrays; i++) {
		const struct swx_regarray *r = &s->regarrays[i];

		rc = rte_swx_pipeline_regarray_config(p, r->name, r->size, r->init_val);
		if (rc)
			return refused(err, errlen, s, r->line, rc, "regarray %s", r->name);
	}
	rc = load_structs(p, s, err, errlen);
	if (rc == 0)
		rc = load_actions(p, s, n_ports, err, errlen);
	for (uint32_t i = 0; rc == 0 && i < s->n_tables; i++)
		rc = load_table(p, s, &s->tables[i], err, errlen);
	for (uint32_t i = 0; rc == 0 && i < s->n_selectors; i++)
		rc = load_selector(p, s, &s->selectors[i], err, errlen);
	if (rc)
		return rc;
	rc = texts_make(s, s->apply, s->n_apply, n_ports, &t, err, errlen);
	if (rc)
		return rc;
	rc = rte_swx_pipeline_instructions_config(p, t.v, t.n);
	texts_free(&t);
	if (rc)
		return refused(err, errlen, s, s->apply_line, rc,
			       "the apply block (an instruction's operand, a label or a jump)");
	rc = rte_swx_pipeline_build(p);
	if (rc == -ENODEV || rc == -ENOMEM)
		return refused(err, errlen, s, 1, rc, "to build the pipeline: a table did not fit in "
			       "EAL's memory (the tables' size statements; rocelab-p4 --memory)");
	if (rc)
		return refused(err, errlen, s, 1, rc, "to build the pipeline");
	return 0;
}

int swx_load(const struct swx_spec *s, uint32_t n_ports_out, struct swx_pipe **out,
	     char *err, size_t errlen)
{
	return swx_load_ports(s, 1, n_ports_out, out, err, errlen);
}

int swx_load_ports(const struct swx_spec *s, uint32_t n_ports_in, uint32_t n_ports_out,
		   struct swx_pipe **out, char *err, size_t errlen)
{
	struct swx_pipe *sp = calloc(1, sizeof(*sp));
	uint32_t n_in = 1;
	int rc;

	*out = NULL;
	err[0] = '\0';
	while (n_in < n_ports_in)
		n_in <<= 1;
	if (n_ports_out == 0 || n_ports_out > SWX_PORTS_OUT_MAX || n_ports_in == 0 ||
	    n_in > SWX_PORTS_IN_MAX) {
		free(sp);
		snprintf(err, errlen, "%u input and %u output ports: 1 to %d each", n_ports_in,
			 n_ports_out, SWX_PORTS_OUT_MAX);
		return -EINVAL;
	}
	if (sp == NULL)
		return -ENOMEM;
	/* no name: a named pipeline goes on EAL's shared list (rte_swx_pipeline_find) */
	rc = rte_swx_pipeline_config(&sp->p, NULL, 0);
	if (rc == 0)
		rc = swx_pipe_ports(sp, n_in, n_ports_out);
	if (rc == 0)
		rc = swx_hash_register(sp->p);
	if (rc) {
		snprintf(err, errlen, "%s: DPDK could not make a pipeline, its ports and hash (%s)",
			 s->file, strerror(-rc));
		swx_pipe_free(sp);
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	rc = load_all(sp->p, s, n_ports_out, err, errlen);
	if (rc == -ENOMEM && err[0] == '\0')
		snprintf(err, errlen, "%s: out of memory", s->file);
	if (rc == 0) {
		sp->ctl = rte_swx_ctl_pipeline_create(sp->p);
		if (sp->ctl == NULL) {
			snprintf(err, errlen, "%s: DPDK could not make the pipeline's control", s->file);
			rc = -ENOMEM;
		}
	}
	if (rc) {
		swx_pipe_free(sp);
		return rc;
	}
	*out = sp;
	return 0;
}
