/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * swx_spec: a parser of DPDK's SWX pipeline specification language (the .spec
 * text that p4c-dpdk emits) into an in-memory description, libc only.
 *
 * DPDK 22.11 (Debian 12) loads a .spec only through generated C that needs
 * headers Debian does not install; swx_load.h hands this description to the
 * public configuration API instead. The grammar is DPDK 22.11's
 * (lib/pipeline/rte_swx_pipeline_spec.c, read for facts): one statement a
 * line, tokens split on blanks, '#', ';' or '//' start a comment, blocks
 * opened by '{' at a line's end and closed by a '}' line of its own.
 *
 * Supported: struct, header, metadata, action, table, selector, regarray,
 * apply. Refused, each with FILE:LINE and the construct's name: learner tables
 * and the learn/rearm/forget/entryid instructions (they read the TSC, not
 * rocelab's virtual clock), metarray and meter/metprefetch (meters read the
 * TSC), extobj and extern (rocelab registers no extern types), movh (DPDK
 * 24.03+), unknown instructions, a hash over fields of two structs, a table
 * key DPDK's table types cannot hold, a file that ends inside a block.
 */
#ifndef SWX_SPEC_H
#define SWX_SPEC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define SWX_NAME_MAX 64    /* RTE_SWX_NAME_SIZE, DPDK 22.11 rte_swx_pipeline.h (with the NUL) */
#define SWX_INSTR_MAX 256  /* RTE_SWX_INSTRUCTION_SIZE, same header (with the NUL) */
#define SWX_INSTR_TOKENS 16 /* RTE_SWX_INSTRUCTION_TOKENS_MAX, same header */
#define SWX_LINE_MAX 2048  /* MAX_LINE_LENGTH of DPDK's own spec parser */
#define SWX_FIELD_BITS_MAX 64 /* rte_swx_field_params: a struct field is at most 64 bits */
#define SWX_ERR_MAX 512    /* room for an error message: FILE:LINE: what */

enum swx_match { SWX_MATCH_EXACT, SWX_MATCH_LPM, SWX_MATCH_WILDCARD };

struct swx_field {
	char name[SWX_NAME_MAX];
	uint32_t n_bits;
};

struct swx_struct {
	char name[SWX_NAME_MAX];
	struct swx_field *fields;
	uint32_t n_fields;
	int varbit;     /* the last field is varbit<N> */
	uint32_t line;
};

struct swx_header {
	char name[SWX_NAME_MAX];
	char struct_name[SWX_NAME_MAX];
	uint32_t line;
};

struct swx_instr {
	char text[SWX_INSTR_MAX]; /* the tokens joined by one space */
	uint32_t line;
};

struct swx_action {
	char name[SWX_NAME_MAX];
	char args_struct[SWX_NAME_MAX]; /* "" for args none */
	struct swx_instr *instrs;
	uint32_t n_instrs;
	uint32_t line;
};

struct swx_key {
	char field[SWX_NAME_MAX]; /* h.HEADER.FIELD or m.FIELD */
	enum swx_match match;
	uint32_t line;
};

struct swx_table_action {
	char name[SWX_NAME_MAX];
	int for_entries;  /* 0 with @defaultonly */
	int for_default;  /* 0 with @tableonly */
};

struct swx_table {
	char name[SWX_NAME_MAX];
	struct swx_key *keys;
	uint32_t n_keys;
	struct swx_table_action *actions;
	uint32_t n_actions;
	char default_action[SWX_NAME_MAX];
	char *default_args;  /* "ARG VALUE ..." or NULL for args none */
	int default_const;
	char hash[SWX_NAME_MAX];  /* "" unless a hash statement */
	char type[SWX_NAME_MAX];  /* "" unless an instanceof statement */
	char pragma[SWX_NAME_MAX];
	uint32_t size;
	uint32_t line;
};

struct swx_selector {
	char name[SWX_NAME_MAX];
	char group_id[SWX_NAME_MAX];
	char member_id[SWX_NAME_MAX];
	char (*fields)[SWX_NAME_MAX];
	uint32_t n_fields;
	uint32_t n_groups_max;
	uint32_t n_members_per_group_max;
	uint32_t line;
};

struct swx_regarray {
	char name[SWX_NAME_MAX];
	uint32_t size;
	uint64_t init_val;
	uint32_t line;
};

struct swx_spec {
	char file[SWX_NAME_MAX * 4]; /* for messages */
	struct swx_struct *structs;
	uint32_t n_structs;
	struct swx_header *headers;
	uint32_t n_headers;
	char metadata[SWX_NAME_MAX]; /* the metadata's struct type, "" if none */
	uint32_t metadata_line;
	struct swx_action *actions;
	uint32_t n_actions;
	struct swx_table *tables;
	uint32_t n_tables;
	struct swx_selector *selectors;
	uint32_t n_selectors;
	struct swx_regarray *regarrays;
	uint32_t n_regarrays;
	struct swx_instr *apply;
	uint32_t n_apply;
	uint32_t apply_line;
};

/*
 * Parses len bytes of spec text (need not end in a NUL) into *s, which it
 * zeroes first; file names the text in messages. Checks the grammar, then the
 * description as a whole (swx_spec_check). Returns 0, -EINVAL with
 * "FILE:LINE: what is wrong" in err (bad input), or -ENOMEM. On error *s is
 * freed.
 */
int swx_spec_parse(const char *text, size_t len, const char *file, struct swx_spec *s,
		   char *err, size_t errlen);

/* swx_spec_parse over a file's contents; -EIO with "FILE: reason" when it cannot be read. */
int swx_spec_parse_file(const char *path, struct swx_spec *s, char *err, size_t errlen);

/*
 * The checks of a parsed description that need more than one line: names that
 * refer to a struct, header or field exist, hash ranges lie in one struct,
 * table keys fit DPDK's table types, jumps name labels that exist. Returns 0 or
 * -EINVAL with "FILE:LINE: what" in err. (swx_spec_check.c)
 */
int swx_spec_check(const struct swx_spec *s, char *err, size_t errlen);

/*
 * Writes "FILE:LINE: " and fmt's text into err; returns -EINVAL. The parser's
 * and the checks' one way to refuse.
 */
int swx_spec_vfail(char *err, size_t errlen, const char *file, uint32_t line, const char *fmt,
		   va_list ap) __attribute__((format(printf, 5, 0)));

/* Frees what *s holds and zeroes it; a zeroed *s is fine. */
void swx_spec_free(struct swx_spec *s);

/* The struct named name, or NULL. */
const struct swx_struct *swx_spec_struct(const struct swx_spec *s, const char *name);

#endif /* SWX_SPEC_H */
