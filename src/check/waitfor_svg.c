/* The wait-for graph at an instant as SVG (docs/consistency.md, "The graph at an
 * instant"): threads (circles) and locks (squares) on a circle, the nodes of each standing
 * cycle first and in its order, so a cycle is drawn as a polygon; a thread's wait is an
 * arrow to its lock (dashed, "waits since t=..."), a hold an arrow from the lock to its
 * holder ("held since t=..."); the nodes and arrows of standing cycles in red. Elements
 * carry classes and data- attributes (thread id, lock name) for scripts and tests. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check/waitfor.h"
#include "common/xml_text.h"

#define RED "#d62728"
#define GREY "#555555"

struct node {
	bool lock;
	size_t index;
	bool in_cycle;
	double x, y;
};

struct layout {
	struct node *nodes;
	size_t n;
	long *at_thread, *at_lock; /* node of each thread / lock, or -1 */
};

static void add(struct layout *l, bool lock, size_t index)
{
	long *at = lock ? &l->at_lock[index] : &l->at_thread[index];
	if (*at >= 0)
		return;
	*at = (long)l->n;
	l->nodes[l->n++] = (struct node){lock, index, false, 0, 0};
}

static const char *label(const struct vgc_wf_node *n)
{
	return n->name && *n->name ? n->name : n->text;
}

static void node_svg(FILE *f, const struct vgc_wf *w, const struct node *nd)
{
	const struct vgc_wf_node *n =
	    nd->lock ? vgc_wf_lock(w, nd->index) : vgc_wf_thread(w, nd->index);
	const char *stroke = nd->in_cycle ? RED : GREY;
	fprintf(f,
	        "<g class=\"%s%s\" id=\"%c%zu\" data-id=\"%" PRIu64 "\" data-gen=\"%" PRIu64
	        "\" data-name=\"",
	        nd->lock ? "lock" : "thread", nd->in_cycle ? " cycle" : "", nd->lock ? 'l' : 't',
	        nd->index, n->id, n->gen);
	vg_xml_text(f, n->name ? n->name : "", 200);
	fputs("\">\n<title>", f);
	vg_xml_text(f, n->text, 300);
	fputs("</title>\n", f);
	if (nd->lock)
		fprintf(f,
		        "<rect x=\"%.1f\" y=\"%.1f\" width=\"44\" height=\"44\" fill=\"#fff3d6\" "
		        "stroke=\"%s\" stroke-width=\"%d\"/>\n",
		        nd->x - 22, nd->y - 22, stroke, nd->in_cycle ? 3 : 1);
	else
		fprintf(f,
		        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"24\" fill=\"#e3eefa\" stroke=\"%s\" "
		        "stroke-width=\"%d\"/>\n",
		        nd->x, nd->y, stroke, nd->in_cycle ? 3 : 1);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\">", nd->x,
	        nd->y + 4);
	vg_xml_text(f, label(n), 16);
	fprintf(f,
	        "</text>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\" "
	        "fill=\"#666\">",
	        nd->x, nd->y + 40);
	if (nd->lock) {
		vg_xml_text(f, n->kind, 24);
		fprintf(f, " 0x%" PRIx64, n->id);
	} else {
		fprintf(f, "tid %" PRIu64, n->id);
	}
	fputs("</text>\n</g>\n", f);
}

/* An arrow between two nodes, shortened to their borders, labelled at its middle. */
static void edge_svg(FILE *f, const struct node *a, const struct node *b, const char *cls,
                     bool cycle, const char *text, double since)
{
	double dx = b->x - a->x, dy = b->y - a->y, len = sqrt(dx * dx + dy * dy);
	if (len < 1)
		len = 1;
	double ux = dx / len, uy = dy / len, r = 30;
	fprintf(f,
	        "<g class=\"%s%s\" data-from=\"%c%zu\" data-to=\"%c%zu\">\n"
	        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
	        "stroke-width=\"%d\"%s marker-end=\"url(#%s)\"/>\n"
	        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\" fill=\"%s\">"
	        "%s t=%.9f</text>\n</g>\n",
	        cls, cycle ? " cycle" : "", a->lock ? 'l' : 't', a->index, b->lock ? 'l' : 't',
	        b->index, a->x + ux * r, a->y + uy * r, b->x - ux * r, b->y - uy * r,
	        cycle ? RED : GREY, cycle ? 3 : 1,
	        strcmp(cls, "wait") ? "" : " stroke-dasharray=\"6 4\"",
	        cycle ? "arrow-cycle" : "arrow", (a->x + b->x) / 2 - uy * 12,
	        (a->y + b->y) / 2 + ux * 12, cycle ? RED : "#333", text, since);
}

/* Is thread t's wait for lock l (or l's hold by t) an edge of a standing cycle? */
static bool cycle_edge(const struct vgc_wf_cycle *cy, size_t ncy, size_t t, size_t l, bool hold)
{
	for (size_t c = 0; c < ncy; c++) {
		if (!cy[c].standing)
			continue;
		for (size_t i = 0; i < cy[c].nsteps; i++) {
			size_t holder = cy[c].steps[(i + 1) % cy[c].nsteps].thread_index;
			if (cy[c].steps[i].lock_index == l &&
			    (hold ? holder == t : cy[c].steps[i].thread_index == t))
				return true;
		}
	}
	return false;
}

static void place(struct layout *l, double cx, double cy, double r)
{
	for (size_t k = 0; k < l->n; k++) {
		double a = -M_PI / 2 + 2 * M_PI * (double)k / (double)l->n;
		l->nodes[k].x = cx + (l->n > 1 ? r * cos(a) : 0);
		l->nodes[k].y = cy + (l->n > 1 ? r * sin(a) : 0);
	}
}

int vgc_wf_svg(struct vgc_wf *w, int64_t at_ts, double at_t, FILE *f)
{
	const struct vgc_wf_cycle *cy;
	size_t ncy = vgc_wf_cycles(w, &cy), nt = vgc_wf_nthreads(w), nl = vgc_wf_nlocks(w);
	const struct vgc_wf_hold *holds;
	size_t nh = vgc_wf_holds(w, &holds);
	struct layout l = {calloc(nt + nl + 1, sizeof *l.nodes), 0, malloc((nt + 1) * sizeof(long)),
	                   malloc((nl + 1) * sizeof(long))};
	if (!l.nodes || !l.at_thread || !l.at_lock) {
		free(l.nodes);
		free(l.at_thread);
		free(l.at_lock);
		return -1;
	}
	memset(l.at_thread, 0xff, (nt + 1) * sizeof(long));
	memset(l.at_lock, 0xff, (nl + 1) * sizeof(long));
	size_t standing = 0;
	for (size_t c = 0; c < ncy; c++) /* cycles first, in their order */
		if (cy[c].standing) {
			standing++;
			for (size_t i = 0; i < cy[c].nsteps; i++) {
				add(&l, false, cy[c].steps[i].thread_index);
				add(&l, true, cy[c].steps[i].lock_index);
				l.nodes[l.at_thread[cy[c].steps[i].thread_index]].in_cycle = true;
				l.nodes[l.at_lock[cy[c].steps[i].lock_index]].in_cycle = true;
			}
		}
	for (size_t t = 0; t < nt; t++) {
		int64_t since;
		long wl = vgc_wf_waits_for(w, t, &since);
		if (wl >= 0) {
			add(&l, false, t);
			add(&l, true, (size_t)wl);
		}
	}
	for (size_t h = 0; h < nh; h++) {
		add(&l, false, holds[h].thread);
		add(&l, true, holds[h].lock);
	}
	double r = l.n > 2 ? 60 + 22.0 * (double)l.n : 110, width = 2 * r + 260,
	       height = 2 * r + 170;
	place(&l, width / 2, height / 2 + 20, r);
	fprintf(f,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
	        "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" data-at=\"%" PRId64
	        "\" data-cycles=\"%zu\">\n"
	        "<defs>\n"
	        "<marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
	        "markerWidth=\"8\" markerHeight=\"8\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 "
	        "z\" fill=\"" GREY "\"/></marker>\n"
	        "<marker id=\"arrow-cycle\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
	        "markerWidth=\"8\" markerHeight=\"8\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 "
	        "z\" fill=\"" RED "\"/></marker>\n"
	        "</defs>\n"
	        "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
	        "<text x=\"12\" y=\"22\" font-size=\"14\">wait-for graph at t=%.9f s: %zu "
	        "threads and locks, %zu deadlock%s</text>\n",
	        width, height, width, height, at_ts, standing, at_t, l.n, standing,
	        standing == 1 ? "" : "s");
	if (!l.n)
		fputs(
		    "<text x=\"12\" y=\"44\" font-size=\"12\">no thread holds or waits for a lock "
		    "at this instant</text>\n",
		    f);
	for (size_t t = 0; t < nt; t++) {
		int64_t since;
		long wl = vgc_wf_waits_for(w, t, &since);
		if (wl >= 0)
			edge_svg(f, &l.nodes[l.at_thread[t]], &l.nodes[l.at_lock[wl]], "wait",
			         cycle_edge(cy, ncy, t, (size_t)wl, false), "waits since",
			         at_t - (double)(at_ts - since) / 1e9);
	}
	for (size_t h = 0; h < nh; h++)
		edge_svg(f, &l.nodes[l.at_lock[holds[h].lock]],
		         &l.nodes[l.at_thread[holds[h].thread]], "hold",
		         cycle_edge(cy, ncy, holds[h].thread, holds[h].lock, true), "held since",
		         at_t - (double)(at_ts - holds[h].since) / 1e9);
	for (size_t k = 0; k < l.n; k++)
		node_svg(f, w, &l.nodes[k]);
	fputs("</svg>\n", f);
	free(l.nodes);
	free(l.at_thread);
	free(l.at_lock);
	return ferror(f) ? -1 : 0;
}
