/* SPDX-License-Identifier: BSD-3-Clause */
/* swx_meta: rocelab's metadata in front of a program's frame (swx_meta.h). */
#include "swx_meta.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* rl_meta_h's fields in order (swx_meta.h); their widths sum to SWX_META_LEN * 8. */
static const struct swx_field meta_fields[] = {
	{"now_ns", 64}, {"flowlet_timeout_ns", 64}, {"port_in", 32}, {"seed", 32},
	{"n_members", 32}, {"rand", 32}, {"algo", 8}, {"eecmp", 8},
};
#define N_META_FIELDS (sizeof(meta_fields) / sizeof(meta_fields[0]))

static int meta_fail(char *err, size_t errlen, const struct swx_spec *s, uint32_t line,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int meta_fail(char *err, size_t errlen, const struct swx_spec *s, uint32_t line,
		     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int rc = swx_spec_vfail(err, errlen, s->file, line, fmt, ap);
	va_end(ap);
	return rc;
}

int swx_meta_check(const struct swx_spec *s, bool *has, char *err, size_t errlen)
{
	const struct swx_header *h = NULL;

	for (uint32_t i = 0; i < s->n_headers && h == NULL; i++)
		if (strcmp(s->headers[i].name, SWX_META_HEADER) == 0)
			h = &s->headers[i];
	*has = h != NULL;
	if (h == NULL)
		return 0;
	const struct swx_struct *st = swx_spec_struct(s, h->struct_name);

	if (st == NULL) /* (swx_spec_check refuses this first) */
		return meta_fail(err, errlen, s, h->line, "header rl_meta: no struct %s", h->struct_name);
	for (uint32_t i = 0; i < N_META_FIELDS; i++) {
		const struct swx_field *want = &meta_fields[i];

		if (i >= st->n_fields || strcmp(st->fields[i].name, want->name) != 0 ||
		    st->fields[i].n_bits != want->n_bits)
			return meta_fail(err, errlen, s, st->line,
					 "header rl_meta: struct %s's field %u must be bit<%u> %s "
					 "(rocelab's metadata layout, docs/reference/rocelab-p4.md)",
					 st->name, i + 1, want->n_bits, want->name);
	}
	if (st->n_fields != N_META_FIELDS || st->varbit)
		return meta_fail(err, errlen, s, st->line,
				 "header rl_meta: struct %s has fields past rocelab's %zu", st->name,
				 N_META_FIELDS);
	return 0;
}

/* Writes the n_bytes low bytes of v big-endian at *p and advances it. */
static void put_be(uint8_t **p, uint64_t v, unsigned n_bytes)
{
	for (unsigned i = 0; i < n_bytes; i++)
		(*p)[i] = (uint8_t)(v >> (8 * (n_bytes - 1 - i)));
	*p += n_bytes;
}

void swx_meta_put(uint8_t out[SWX_META_LEN], const struct swx_meta *m)
{
	uint8_t *p = out;

	put_be(&p, m->now_ns, 8);
	put_be(&p, m->flowlet_timeout_ns, 8);
	put_be(&p, m->port_in, 4);
	put_be(&p, m->seed, 4);
	put_be(&p, m->n_members, 4);
	put_be(&p, m->rand, 4);
	put_be(&p, m->algo, 1);
	put_be(&p, m->eecmp, 1);
}
