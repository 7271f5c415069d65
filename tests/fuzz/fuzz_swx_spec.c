/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for rocelab-p4's input: any bytes as a DPDK SWX .spec
 * (swx_spec_parse, the parser and its checks; no DPDK). A refusal names its
 * FILE:LINE; an accepted program keeps every name and instruction within
 * DPDK's sizes and every table has its default among its actions, and its
 * rl_meta header (swx_meta.h), if any, is checked with FILE:LINE too.
 * Built with -Dfuzz=true under clang; run by scripts/fuzz.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "swx_meta.h"
#include "swx_spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_accepted(const struct swx_spec *s)
{
	if (s->n_apply == 0)
		abort();
	for (uint32_t i = 0; i < s->n_apply; i++)
		if (s->apply[i].text[0] == '\0' || strlen(s->apply[i].text) >= SWX_INSTR_MAX)
			abort();
	for (uint32_t i = 0; i < s->n_tables; i++) {
		const struct swx_table *t = &s->tables[i];
		int found = 0;

		for (uint32_t j = 0; j < t->n_actions; j++)
			found |= strcmp(t->actions[j].name, t->default_action) == 0;
		if (!found)
			abort();
	}
	for (uint32_t i = 0; i < s->n_structs; i++)
		for (uint32_t j = 0; j < s->structs[i].n_fields; j++)
			if (s->structs[i].fields[j].n_bits == 0 || s->structs[i].fields[j].n_bits % 8)
				abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct swx_spec s;
	char err[SWX_ERR_MAX];

	if (swx_spec_parse((const char *)data, size, "f.spec", &s, err, sizeof(err)) == 0) {
		bool meta;

		check_accepted(&s);
		if (swx_meta_check(&s, &meta, err, sizeof(err)) != 0 && strncmp(err, "f.spec:", 7) != 0)
			abort();
		swx_spec_free(&s);
	} else if (strncmp(err, "f.spec:", 7) != 0) {
		abort(); /* every refusal names the file and line */
	}
	return 0;
}
