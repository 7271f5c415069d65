/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topo_yaml: what the topology loader and the traffic-file reader share over
 * libfyaml's document API: one document from a file or a string, the first
 * error as "FILE:LINE: what is wrong", a node's line, scalars, and mappings
 * checked against the keys they may hold.
 *
 * libfyaml 0.7.12 has no fy_node_get_start_mark(): a node's line comes from
 * its scalar token, or for a collection from its first scalar, or else from
 * the key that names it (topo_yaml_line()).
 *
 * Functions that check return 0, or -1 after topo_yaml_fail() recorded the
 * error (only the first error of a context is kept).
 */
#ifndef TOPO_YAML_H
#define TOPO_YAML_H

#include <stdbool.h>
#include <stddef.h>

#include <libfyaml.h>

/* Largest file read, bytes. */
#define TOPO_YAML_MAX_FILE_BYTES (16u << 20)

/* Where messages go: the file name they start with and the caller's buffer. */
struct topo_yaml_ctx {
	const char *file;
	char *err;
	size_t errlen;
	bool failed;
	char diag_text[256]; /* libfyaml's printed diagnostics, a fallback message */
};

/* Record the first error as "FILE:LINE: msg" ("FILE: msg" for line 0); returns -1. */
int topo_yaml_fail(struct topo_yaml_ctx *c, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A loaded document; root is never NULL after topo_yaml_open() succeeded. */
struct topo_yaml_doc {
	struct fy_diag *diag;
	struct fy_parser *fyp;
	struct fy_document *doc;
	struct fy_node *root;
};

/*
 * Read the file c->file into *buf (NUL-terminated, free() it) and *len.
 * Errors: "FILE: cannot read: reason".
 */
int topo_yaml_read_file(struct topo_yaml_ctx *c, char **buf, size_t *len);

/*
 * Parse exactly one non-empty YAML document from yaml[0..len). `what` names
 * the content in messages ("empty topology: ..."). Free d with
 * topo_yaml_close() whatever the result.
 */
int topo_yaml_open(struct topo_yaml_ctx *c, const char *yaml, size_t len, const char *what,
		   struct topo_yaml_doc *d);
void topo_yaml_close(struct topo_yaml_doc *d);

/* 1-based line of a node, or fallback when it has no token (empty collection). */
int topo_yaml_line(struct fy_node *n, int fallback);

/* "a scalar", "a mapping", "a list" or "nothing", for messages. */
const char *topo_yaml_type_word(struct fy_node *n);

/* A scalar with no text, or a plain ~ / null: YAML's null (and NULL). */
bool topo_yaml_is_null(struct fy_node *n);

/*
 * Copy a scalar value into buf as a C string. `key` names the value in
 * messages; key_line is used when the value has no position (null value).
 */
int topo_yaml_scalar(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		     char *buf, size_t len);

/* Called for each pair of a mapping; returns 0 or -1 (error recorded). */
typedef int (*topo_yaml_pair_fn)(struct topo_yaml_ctx *c, void *obj, const char *key,
				 struct fy_node *val, int key_line);

/*
 * Walk a mapping: check it is one, that keys are plain scalars from `keys`
 * (a NULL-terminated list; NULL: any plain scalar, for a vocabulary another
 * module owns), and call fn for each pair. `what` names the object in
 * messages.
 */
int topo_yaml_walk_map(struct topo_yaml_ctx *c, struct fy_node *map, int line, const char *what,
		       const char *const *keys, topo_yaml_pair_fn fn, void *obj);

/* The value of key in a mapping, or NULL when absent or map is not a mapping. */
struct fy_node *topo_yaml_map_get(struct fy_node *map, const char *key);

/* v is a list (a YAML sequence), not null or an alias. */
int topo_yaml_check_list(struct topo_yaml_ctx *c, struct fy_node *v, const char *key,
			 int key_line);

#endif /* TOPO_YAML_H */
