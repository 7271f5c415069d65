/* SPDX-License-Identifier: BSD-3-Clause */
#include "golden.h"

#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ROCELAB_TESTDATA_DIR
#define ROCELAB_TESTDATA_DIR "tests/testdata"
#endif

const char *golden_path(const char *file)
{
	static char buf[4096];
	const char *dir = getenv("ROCELAB_TESTDATA");

	snprintf(buf, sizeof(buf), "%s/%s", dir ? dir : ROCELAB_TESTDATA_DIR, file);
	return buf;
}

static int load_pcap(struct golden *g)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(golden_path("rxe-rc-ud.pcap"), err);
	struct pcap_pkthdr *h;
	const u_char *d;
	int rc;

	if (p == NULL) {
		fprintf(stderr, "golden: %s\n", err);
		return -1;
	}
	while ((rc = pcap_next_ex(p, &h, &d)) == 1 && g->n_frames < GOLDEN_MAX_FRAMES) {
		struct golden_frame *f = &g->frame[g->n_frames++];
		f->len = h->caplen;
		f->data = malloc(f->len ? f->len : 1);
		memcpy(f->data, d, f->len);
	}
	pcap_close(p);
	return rc == PCAP_ERROR ? -1 : 0;
}

/* Split line at commas in place into cells; returns the count. */
static size_t split(char *line, char **cells, size_t max)
{
	size_t n = 0;
	char *s = line;

	line[strcspn(line, "\r\n")] = '\0';
	while (n < max) {
		cells[n++] = s;
		char *c = strchr(s, ',');
		if (c == NULL)
			break;
		*c = '\0';
		s = c + 1;
	}
	return n;
}

static int load_csv(struct golden *g)
{
	FILE *f = fopen(golden_path("rxe-rc-ud.fields.csv"), "r");
	char line[4096];
	char *cells[GOLDEN_MAX_COLS];

	if (f == NULL) {
		perror("golden: rxe-rc-ud.fields.csv");
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t n = split(line, cells, GOLDEN_MAX_COLS);
		if (g->n_cols == 0) {
			g->n_cols = n;
			for (size_t i = 0; i < n; i++)
				g->col[i] = strdup(cells[i]);
			continue;
		}
		if (g->n_rows == GOLDEN_MAX_FRAMES)
			break;
		for (size_t i = 0; i < g->n_cols; i++)
			g->cell[g->n_rows][i] = strdup(i < n ? cells[i] : "");
		g->n_rows++;
	}
	fclose(f);
	return 0;
}

int golden_load(struct golden *g)
{
	memset(g, 0, sizeof(*g));
	if (load_pcap(g) < 0 || load_csv(g) < 0) {
		golden_free(g);
		return -1;
	}
	return 0;
}

void golden_free(struct golden *g)
{
	for (size_t i = 0; i < g->n_frames; i++)
		free(g->frame[i].data);
	for (size_t r = 0; r < g->n_rows; r++)
		for (size_t c = 0; c < g->n_cols; c++)
			free(g->cell[r][c]);
	for (size_t c = 0; c < g->n_cols; c++)
		free(g->col[c]);
	memset(g, 0, sizeof(*g));
}

const char *golden_cell(const struct golden *g, size_t row, const char *col)
{
	for (size_t c = 0; c < g->n_cols; c++)
		if (strcmp(g->col[c], col) == 0)
			return g->cell[row][c];
	return NULL;
}
