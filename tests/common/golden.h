/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * golden: the real soft-RoCE capture in tests/testdata (rxe-rc-ud.pcap) and
 * the fields Wireshark read from each frame (rxe-rc-ud.fields.csv), loaded for
 * tests. The directory comes from the ROCELAB_TESTDATA environment variable
 * (meson sets it) or the compiled-in default.
 */
#ifndef ROCELAB_TEST_GOLDEN_H
#define ROCELAB_TEST_GOLDEN_H

#include <stddef.h>
#include <stdint.h>

#define GOLDEN_MAX_FRAMES 256
#define GOLDEN_MAX_COLS 32

struct golden_frame {
	uint8_t *data;
	size_t len;
};

struct golden {
	size_t n_frames;
	struct golden_frame frame[GOLDEN_MAX_FRAMES];
	/* CSV: header names and one row of strings per frame (empty string: no value) */
	size_t n_cols;
	char *col[GOLDEN_MAX_COLS];
	size_t n_rows;
	char *cell[GOLDEN_MAX_FRAMES][GOLDEN_MAX_COLS];
};

/* Path of a file in the test data directory (static buffer, valid until the next call). */
const char *golden_path(const char *file);

/* Load the capture and the CSV. Returns 0, or -1 with a message on stderr. */
int golden_load(struct golden *g);
void golden_free(struct golden *g);

/* The CSV cell of a row by column name, or NULL when the column does not exist. */
const char *golden_cell(const struct golden *g, size_t row, const char *col);

#endif
