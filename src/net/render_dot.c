/* A network for Graphviz: one cluster per thread, its vertices in time order; messages
 * between clusters (black across machines). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"

static void dot_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < 0x20)
			fputc(' ', f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

int vgn_render_dot(const struct vgn_graph *g, FILE *f)
{
	static const char *const palette[] = {"#2ca02c", "#1f77b4", "#d62728", "#9467bd",
	                                      "#7f7f7f", "#ff7f0e", "#17becf", "#8c564b"};
	const char **hosts = vgb_xcalloc(g->nthreads + 1, sizeof *hosts);
	uint32_t *hcol = vgb_xcalloc(g->nthreads + 1, sizeof *hcol);
	size_t nh = 0;
	for (size_t t = 0; t < g->nthreads; t++) {
		size_t h = 0;
		while (h < nh && strcmp(hosts[h], g->threads[t].host))
			h++;
		if (h == nh)
			hosts[nh++] = g->threads[t].host;
		hcol[t] = (uint32_t)h;
	}
	int64_t t0 = g->nvertices ? g->vertices[g->input].ts : 0;
	fprintf(f,
	        "digraph network_%" PRIu64 " {\n  rankdir=TB;\n  node [shape=point, width=0.1];\n",
	        g->id);
	for (size_t t = 0; t < g->nthreads; t++) {
		const struct vgn_gthread *th = &g->threads[t];
		char label[512];
		snprintf(label, sizeof label, "%s/%" PRId64 "/%" PRId64 "\n%s%s%s%s", th->host,
		         th->pid, th->tid, th->program, *th->name ? " (" : "", th->name,
		         *th->name ? ")" : "");
		fprintf(f, "  subgraph cluster_%zu {\n    label=", t);
		dot_str(f, label);
		fprintf(f, ";\n    color=\"%s\";\n", palette[hcol[t] % 8]);
		for (size_t v = 0; v < g->nvertices; v++) {
			const struct vgn_gvertex *x = &g->vertices[v];
			if (x->thread != t)
				continue;
			char vl[256];
			int n = snprintf(vl, sizeof vl, "%s %.3f ms", vgn_kind_name(x->kind),
			                 (double)(x->ts - t0) / 1e6);
			/* renamed since the thread's previous vertex (or its label) */
			const char *was_p = th->program, *was_n = th->name;
			for (size_t u = v; u-- > 0;)
				if (g->vertices[u].thread == t) {
					was_p = g->vertices[u].program;
					was_n = g->vertices[u].name;
					break;
				}
			if (n > 0 && (size_t)n < sizeof vl &&
			    (strcmp(x->program, was_p) || strcmp(x->name, was_n)))
				snprintf(vl + n, sizeof vl - (size_t)n, "\nnow %s%s%s%s",
				         x->program, *x->name ? " (" : "", x->name,
				         *x->name ? ")" : "");
			fprintf(f, "    v%zu [color=\"%s\", xlabel=", v, palette[hcol[t] % 8]);
			dot_str(f, vl);
			fprintf(f, "%s];\n", x->input ? ", shape=doublecircle, width=0.2" : "");
		}
		fprintf(f, "  }\n");
	}
	for (size_t e = 0; e < g->nedges; e++) {
		const struct vgn_gedge *x = &g->edges[e];
		const char *colour = x->kind == VGN_E_MESSAGE && x->cross_host
		                         ? "black"
		                         : palette[hcol[g->vertices[x->from].thread] % 8];
		fprintf(f, "  v%u -> v%u [color=\"%s\"", x->from, x->to, colour);
		if (x->kind == VGN_E_THREAD)
			fprintf(f, ", arrowhead=none, penwidth=2");
		else if (x->kind == VGN_E_SPAWN)
			fprintf(f, ", style=dashed");
		else
			fprintf(f, ", label=\"%" PRIu64 " B\", constraint=false", x->bytes);
		fprintf(f, "];\n");
	}
	fprintf(f, "}\n");
	free(hosts);
	free(hcol);
	return ferror(f) ? -1 : 0;
}
