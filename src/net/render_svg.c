/* The classic interaction network display (Ashton's browser): one column per thread in
 * order of first appearance, labelled host/pid/tid and program; time runs downwards with
 * each vertex's height proportional to its time; vertical edges are thread execution,
 * slanted edges messages (dashed: a thread or process made); one colour per machine and
 * black for messages between machines. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/xml_text.h"
#include "net/internal.h"
#include "trace/trace.h"

static const char *const palette[] = {"#2ca02c", "#1f77b4", "#d62728", "#9467bd", "#7f7f7f",
                                      "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#bcbd22"};
#define NPAL (sizeof palette / sizeof *palette)

static const int64_t *sort_first;
/* Columns by first appearance; equal times keep the threads' order. */
static int by_first(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (sort_first[x] != sort_first[y])
		return sort_first[x] < sort_first[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static double nice_step(double span)
{
	double raw = span / 10, p = 1;
	while (p * 10 <= raw)
		p *= 10;
	while (p > raw && p > 1)
		p /= 10;
	return raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
}

int vgn_render_svg(const struct vgn_graph *g, FILE *f)
{
	size_t nt = g->nthreads;
	/* hosts in order of appearance: their colours */
	const char **hosts = vgb_xcalloc(nt + 1, sizeof *hosts);
	size_t nh = 0;
	uint32_t *hcol = vgb_xcalloc(nt + 1, sizeof *hcol);
	for (size_t t = 0; t < nt; t++) {
		size_t h = 0;
		while (h < nh && strcmp(hosts[h], g->threads[t].host))
			h++;
		if (h == nh)
			hosts[nh++] = g->threads[t].host;
		hcol[t] = (uint32_t)h;
	}
	/* columns by first vertex time */
	int64_t *first = vgb_xcalloc(nt + 1, sizeof *first);
	uint32_t *col = vgb_xcalloc(nt + 1, sizeof *col),
	         *order = vgb_xcalloc(nt + 1, sizeof *order);
	for (size_t t = 0; t < nt; t++)
		first[t] = INT64_MAX;
	int64_t t0 = INT64_MAX, t1 = INT64_MIN;
	for (size_t v = 0; v < g->nvertices; v++) {
		const struct vgn_gvertex *x = &g->vertices[v];
		if (x->ts < first[x->thread])
			first[x->thread] = x->ts;
		t0 = x->ts < t0 ? x->ts : t0;
		t1 = x->ts > t1 ? x->ts : t1;
	}
	if (!g->nvertices)
		t0 = t1 = 0;
	for (size_t t = 0; t < nt; t++)
		order[t] = (uint32_t)t;
	sort_first = first;
	qsort(order, nt, sizeof *order, by_first);
	for (size_t i = 0; i < nt; i++)
		col[order[i]] = (uint32_t)i;
	const double colw = 96, left = 90, top = 90, bottom = 40;
	double height = (double)g->nvertices * 14;
	height = height < 400 ? 400 : height > 6000 ? 6000 : height;
	double span = t1 > t0 ? (double)(t1 - t0) : 1;
	double width = left + colw * (double)(nt ? nt : 1) + 20;
	width = width < 640 ? 640 : width;
	double total_h = top + height + bottom + 18 * (double)((nh + 3) / 4);
#define X(t) (left + colw * col[t] + colw / 2)
#define Y(ts) (top + ((double)((ts)-t0)) / span * height)
	fprintf(f,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
	        "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"10\">\n"
	        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
	        "markerWidth=\"6\" markerHeight=\"6\" orient=\"auto-start-reverse\">"
	        "<path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"context-stroke\"/></marker></defs>\n"
	        "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
	        width, total_h, width, total_h);
	fprintf(f,
	        "<text x=\"10\" y=\"18\" font-size=\"13\">interaction network %" PRIu64
	        ": response %.3f ms, %zu thread%s, %zu machine%s",
	        g->id, (double)(t1 - t0) / 1e6, nt, nt == 1 ? "" : "s", nh, nh == 1 ? "" : "s");
	if (g->iid[0])
		fprintf(f, ", interaction %s", g->iid);
	fprintf(f, "</text>\n");
	/* time axis */
	double step = nice_step(span);
	fprintf(f, "<g class=\"axis\" stroke=\"#ccc\">\n");
	for (double t = 0; t <= span + step / 2; t += step)
		fprintf(f,
		        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
		        "<text x=\"4\" y=\"%.1f\" stroke=\"none\" fill=\"#555\">%.3f ms</text>\n",
		        left - 10, top + t / span * height, width - 10, top + t / span * height,
		        top + t / span * height + 3, t / 1e6);
	fprintf(f, "</g>\n");
	/* column labels */
	for (size_t t = 0; t < nt; t++) {
		const struct vgn_gthread *th = &g->threads[t];
		fprintf(f, "<g class=\"thread\" fill=\"%s\"><title>", palette[hcol[t] % NPAL]);
		vg_xml_text(f, th->host, 200);
		fprintf(f, "/%" PRId64 "/%" PRId64 " ", th->pid, th->tid);
		vg_xml_text(f, th->program, 200);
		if (th->name[0]) {
			fputs(" (", f);
			vg_xml_text(f, th->name, 200);
			fputs(")", f);
		}
		fprintf(f, "</title><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", X(t),
		        top - 34);
		vg_xml_text(f, th->host, 14);
		fprintf(f,
		        "</text><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%" PRId64
		        "/%" PRId64 "</text><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
		        "font-weight=\"bold\">",
		        X(t), top - 22, th->pid, th->tid, X(t), top - 10);
		vg_xml_text(f, th->program, 14);
		fprintf(f, "</text></g>\n");
	}
	/* user-defined states: a thin band left of the column, the state as its tooltip */
	for (size_t t = 0; t < nt; t++)
		for (size_t i = 0; i < g->threads[t].nstates; i++) {
			const struct vgn_gstate *x = &g->threads[t].states[i];
			fprintf(f,
			        "<rect class=\"state\" x=\"%.1f\" y=\"%.2f\" width=\"4\" "
			        "height=\"%.2f\" fill=\"%s\" opacity=\"0.5\"><title>",
			        X(t) - 9, Y(x->from), Y(x->to) - Y(x->from),
			        palette[(i + 3) % NPAL]);
			vg_xml_text(f, x->label, 120);
			fprintf(f, " %.3f ms</title></rect>\n", (double)(x->to - x->from) / 1e6);
		}
	/* edges */
	for (size_t e = 0; e < g->nedges; e++) {
		const struct vgn_gedge *x = &g->edges[e];
		const struct vgn_gvertex *a = &g->vertices[x->from], *b = &g->vertices[x->to];
		const char *colour = x->kind == VGN_E_MESSAGE && x->cross_host
		                         ? "black"
		                         : palette[hcol[a->thread] % NPAL];
		fprintf(f,
		        "<line class=\"%s\" x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" "
		        "stroke=\"%s\" stroke-width=\"%s\"%s%s>",
		        x->kind == VGN_E_THREAD    ? "run"
		        : x->kind == VGN_E_MESSAGE ? "msg"
		                                   : "spawn",
		        X(a->thread), Y(a->ts), X(b->thread), Y(b->ts), colour,
		        x->kind == VGN_E_THREAD ? "2" : "1.2",
		        x->kind == VGN_E_SPAWN ? " stroke-dasharray=\"4 3\"" : "",
		        x->kind != VGN_E_THREAD ? " marker-end=\"url(#arrow)\"" : "");
		if (x->kind == VGN_E_MESSAGE)
			fprintf(f, "<title>%" PRIu64 " bytes, %.3f ms</title>", x->bytes,
			        (double)(b->ts - a->ts) / 1e6);
		fprintf(f, "</line>\n");
	}
	/* vertices */
	for (size_t v = 0; v < g->nvertices; v++) {
		const struct vgn_gvertex *x = &g->vertices[v];
		const char *colour = palette[hcol[x->thread] % NPAL];
		bool unmatched = (x->kind == VGN_SEND || x->kind == VGN_RECV) && !x->matched;
		fprintf(
		    f,
		    "<circle cx=\"%.1f\" cy=\"%.2f\" r=\"%s\" fill=\"%s\" stroke=\"%s\"><title>%s",
		    X(x->thread), Y(x->ts), x->input ? "6" : "3", unmatched ? "white" : colour,
		    colour, vgn_kind_name(x->kind));
		if (x->kind == VGN_SEND || x->kind == VGN_RECV)
			fprintf(f, " %" PRIu64 " bytes%s", x->len, unmatched ? " (unmatched)" : "");
		if (x->text && *x->text) {
			fputc(' ', f);
			vg_xml_text(f, x->text, 80);
		}
		fprintf(f, " at %.6f ms</title></circle>\n", (double)(x->ts - t0) / 1e6);
		/* a rename since the thread's previous vertex: the new names beside it */
		const struct vgn_gthread *th = &g->threads[x->thread];
		const char *was_p = th->program, *was_n = th->name;
		for (size_t u = v; u-- > 0;)
			if (g->vertices[u].thread == x->thread) {
				was_p = g->vertices[u].program;
				was_n = g->vertices[u].name;
				break;
			}
		if ((x->program && strcmp(x->program, was_p)) ||
		    (x->name && strcmp(x->name, was_n))) {
			fprintf(f, "<text class=\"rename\" x=\"%.1f\" y=\"%.2f\" font-size=\"8\">",
			        X(x->thread) + 6, Y(x->ts) + 3);
			vg_xml_text(f, x->program, 20);
			if (x->name && *x->name) {
				fputs(" (", f);
				vg_xml_text(f, x->name, 16);
				fputs(")", f);
			}
			fprintf(f, "</text>\n");
		}
	}
	/* legend: machines */
	for (size_t h = 0; h < nh; h++) {
		double lx = 10 + 200 * (double)(h % 4),
		       ly = top + height + bottom + 18 * (double)(h / 4);
		fprintf(f,
		        "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
		        "<text x=\"%.0f\" y=\"%.0f\">",
		        lx, ly - 10, palette[h % NPAL], lx + 16, ly);
		vg_xml_text(f, hosts[h], 30);
		fprintf(f, "</text>\n");
	}
	fprintf(f, "</svg>\n");
#undef X
#undef Y
	free(hosts);
	free(hcol);
	free(first);
	free(col);
	free(order);
	return ferror(f) ? -1 : 0;
}
