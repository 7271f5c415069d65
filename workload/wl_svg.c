/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_sched_svg() (wl_sched.h): which job holds which server, as SVG. Each
 * zone is a band; its racks are columns (wrapped after RACKS_PER_ROW), a
 * rack's servers cells from the top, coloured by job (free: grey). Every
 * cell is a <rect class="server"> with a <title> for a tooltip; the legend
 * lists the jobs placed.
 */
#include <stdlib.h>

#include "wl_sched.h"

#define CELL 14          /* a server's square, px */
#define GAP 3            /* between cells and racks */
#define RACKS_PER_ROW 48 /* a wide zone wraps */
#define MARGIN 10
#define LABEL 16         /* a zone's or a row's title line */
#define LEGEND_ROW 18
#define LEGEND_WIDTH 360 /* room for a job's line */
#define FREE_FILL "#e4e4e4"

/* Text as XML character data; names are plain, but a topology's may hold '&' */
static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
}

/* Job i's colour: hues a golden angle apart, so neighbours in the list differ. */
static void job_fill(FILE *f, uint32_t i)
{
	fprintf(f, "hsl(%u,65%%,%u%%)", (unsigned)((i * 137.508) + 0.5) % 360, 45 + (i % 3) * 10);
}

/* The tallest rack, in servers. */
static uint32_t rack_height(const struct wl_cluster *c)
{
	uint32_t h = 1;
	for (uint32_t r = 0; r < c->n_racks; r++)
		h = c->racks[r].n > h ? c->racks[r].n : h;
	return h;
}

/* One rack's column at x, y: its label and its servers' cells. */
static void rack_cells(FILE *f, const struct wl_cluster *c, const struct wl_schedule *s,
		       uint32_t r, unsigned x, unsigned y)
{
	const struct wl_rack *rk = &c->racks[r];

	fprintf(f, "<g><title>");
	xml_text(f, rk->name);
	fprintf(f, "</title>\n");
	for (uint32_t i = 0; i < rk->n; i++) {
		uint32_t sv = rk->servers[i], o = s->owner ? s->owner[sv] : UINT32_MAX;
		fprintf(f, "<rect class=\"server\" x=\"%u\" y=\"%u\" width=\"%d\" height=\"%d\" fill=\"",
			x, y + i * (CELL + GAP), CELL, CELL);
		if (o == UINT32_MAX)
			fputs(FREE_FILL, f);
		else
			job_fill(f, o);
		fputs("\" stroke=\"#888\"><title>", f);
		xml_text(f, c->servers[sv].name);
		fputs(": ", f);
		xml_text(f, o == UINT32_MAX ? "free" : s->places[o].job->name);
		fputs("</title></rect>\n", f);
	}
	fputs("</g>\n", f);
}

int wl_sched_svg(const struct wl_cluster *c, const struct wl_schedule *s, FILE *f)
{
	uint32_t *nracks = calloc(c->n_zones + 1, sizeof(*nracks));
	uint32_t widest = 1, rows = 0, h = rack_height(c);
	if (!nracks)
		return -1;
	for (uint32_t r = 0; r < c->n_racks; r++)
		nracks[c->racks[r].zone]++;
	for (uint32_t z = 0; z < c->n_zones; z++) {
		rows += (nracks[z] + RACKS_PER_ROW - 1) / RACKS_PER_ROW;
		uint32_t w = nracks[z] > RACKS_PER_ROW ? RACKS_PER_ROW : nracks[z];
		widest = w > widest ? w : widest;
	}
	unsigned row_h = LABEL + h * (CELL + GAP) + GAP;
	unsigned width = 2 * MARGIN + widest * (CELL + GAP);
	width = width < LEGEND_WIDTH ? LEGEND_WIDTH : width;
	unsigned zones_h = MARGIN + rows * row_h + c->n_zones * GAP;
	unsigned height = zones_h + MARGIN + (s->n - s->refused + 2) * LEGEND_ROW;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
		   "font-family=\"sans-serif\" font-size=\"11\">\n", width, height);
	unsigned y = MARGIN;
	for (uint32_t z = 0; z < c->n_zones; z++) {
		uint32_t col = 0;
		for (uint32_t r = 0; r < c->n_racks; r++) {
			if (c->racks[r].zone != z)
				continue;
			if (col % RACKS_PER_ROW == 0) {
				if (col)
					y += row_h;
				fprintf(f, "<text x=\"%d\" y=\"%u\">zone %u, racks from ", MARGIN,
					y + LABEL - 4, z);
				xml_text(f, c->racks[r].name);
				fputs("</text>\n", f);
			}
			rack_cells(f, c, s, r, MARGIN + (col % RACKS_PER_ROW) * (CELL + GAP),
				   y + LABEL);
			col++;
		}
		y += row_h + GAP;
	}
	y += MARGIN;
	fprintf(f, "<text x=\"%d\" y=\"%u\">jobs (cells are servers; grey: free)</text>\n", MARGIN, y);
	for (uint32_t i = 0; i < s->n; i++) {
		if (!s->places[i].placed)
			continue;
		y += LEGEND_ROW;
		fprintf(f, "<rect class=\"legend\" x=\"%d\" y=\"%u\" width=\"%d\" height=\"%d\" fill=\"",
			MARGIN, y - CELL + 2, CELL, CELL);
		job_fill(f, i);
		fprintf(f, "\"/><text x=\"%d\" y=\"%u\">", MARGIN + CELL + 6, y);
		xml_text(f, s->places[i].job->name);
		fprintf(f, " (%u GPUs, %s)</text>\n", s->places[i].job->gpus,
			wl_policy_name(s->places[i].policy));
	}
	fputs("</svg>\n", f);
	free(nracks);
	return ferror(f) ? -1 : 0;
}
