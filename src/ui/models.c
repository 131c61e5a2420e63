/* The model workbench of vigil ui (docs/ui.md, "Model workbench"): two inputs of
 * `vigil model`, each made into one model, and the routes the page reads:
 *
 *   /api/model/info   both models' paths and sizes, the diff's default options (also
 *                     /api/view, which the analysis page asks first)
 *   /api/model/diff   `vigil diff --format json` of the two (vgm_diff, vgm_diff_json: the
 *                     same code), every row, each with its node or edge of the graph
 *   /api/model/graph  the union of both models' events (nodes) and transitions (edges),
 *                     counts and P(E2|E1) = count / out(E1) in each run
 *   /api/model/cdf    one edge's time sketches in each run as step CDFs, with quantiles
 *   /api/model/path   `vigil cdf` from one node to another in each run (vgm_cdf)
 *   /api/model/where  ?edge=K|node=K&run=R: where run R's trace first has it (its
 *                     timeline, models_timeline.c; runs given as traces only)
 *
 * Events are matched across the models by (site, format), as vigil diff matches them. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/sketch_index.h"
#include "model/cdf.h"
#include "model/diff.h"
#include "model/inputs.h"
#include "ui/ui.h"

struct vgu_edge {
	uint32_t from, to; /* nodes */
	long t[2];         /* the transition in each model, or -1 */
};

struct vgu_models {
	const char *path[2];
	struct vgm_model *m[2];
	size_t nnodes;
	long *ev[2];          /* per node: the event in each model, or -1 */
	uint32_t *node_of[2]; /* per event of each model: its node */
	size_t nedges;
	struct vgu_edge *edges;
	uint32_t *edge_of[2]; /* per transition of each model: its edge */
};

/* A model file is read as `vigil diff` reads it. Any other input is made into a model as
 * `vigil model INPUT -o F` makes it, then read back from those bytes as `vigil diff F`
 * reads F: ids, order and ties are the same as theirs. */
static struct vgm_model *load_one(const char *path)
{
	char err[1024];
	struct stat sb;
	if (!stat(path, &sb) && S_ISREG(sb.st_mode)) {
		struct vgm_model *m = vgm_model_new();
		if (m && vgm_read_file(m, path, err, sizeof err)) {
			fprintf(stderr, "vigil ui: %s\n", err);
			vgm_model_free(m);
			return NULL;
		}
		if (!m)
			fprintf(stderr, "vigil ui: out of memory\n");
		return m;
	}
	struct vgm_model *m = vgm_model_new(), *back = NULL;
	struct vgm_symbolizer *sym = vgm_symbolizer_new();
	struct vgm_input_stats st = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = NULL;
	if (!m || !sym) {
		fprintf(stderr, "vigil ui: out of memory\n");
		goto out;
	}
	if (vgm_load_input(m, path, false, sym, &st, err, sizeof err)) {
		fprintf(stderr, "vigil ui: %s\n", err);
		goto out;
	}
	f = open_memstream(&buf, &len);
	if (!f || vgm_write(m, f) || fclose(f)) {
		f = NULL;
		fprintf(stderr, "vigil ui: %s: cannot write its model (out of memory)\n", path);
		goto out;
	}
	f = NULL;
	back = vgm_model_new();
	if (back && vgm_read_buffer(back, path, buf, len, err, sizeof err)) {
		fprintf(stderr, "vigil ui: %s\n", err);
		vgm_model_free(back);
		back = NULL;
	}
out:
	if (f)
		fclose(f);
	free(buf);
	vgm_symbolizer_free(sym);
	vgm_model_free(m);
	return back;
}

static int build_union(struct vgu_models *x)
{
	const struct vgm_model *a = x->m[0], *b = x->m[1];
	size_t cap = a->nevents + b->nevents + 1;
	x->ev[0] = malloc(cap * sizeof(long));
	x->ev[1] = malloc(cap * sizeof(long));
	x->node_of[0] = malloc((a->nevents + 1) * sizeof(uint32_t));
	x->node_of[1] = malloc((b->nevents + 1) * sizeof(uint32_t));
	size_t tcap = a->ntrans + b->ntrans + 1;
	x->edges = malloc(tcap * sizeof *x->edges);
	x->edge_of[0] = malloc((a->ntrans + 1) * sizeof(uint32_t));
	x->edge_of[1] = malloc((b->ntrans + 1) * sizeof(uint32_t));
	if (!x->ev[0] || !x->ev[1] || !x->node_of[0] || !x->node_of[1] || !x->edges ||
	    !x->edge_of[0] || !x->edge_of[1])
		return -1;
	for (size_t i = 0; i < a->nevents; i++) {
		x->ev[0][x->nnodes] = (long)i;
		x->ev[1][x->nnodes] = -1;
		x->node_of[0][i] = (uint32_t)x->nnodes++;
	}
	for (size_t i = 0; i < b->nevents; i++) {
		long k = vgm_event_find(a, b->events[i].site, b->events[i].fmt);
		if (k >= 0) {
			x->node_of[1][i] = x->node_of[0][k];
			x->ev[1][x->node_of[0][k]] = (long)i;
			continue;
		}
		x->ev[0][x->nnodes] = -1;
		x->ev[1][x->nnodes] = (long)i;
		x->node_of[1][i] = (uint32_t)x->nnodes++;
	}
	for (size_t t = 0; t < a->ntrans; t++) {
		struct vgu_edge *e = &x->edges[x->nedges];
		e->from = x->node_of[0][a->trans[t].from];
		e->to = x->node_of[0][a->trans[t].to];
		e->t[0] = (long)t;
		e->t[1] = -1;
		x->edge_of[0][t] = (uint32_t)x->nedges++;
	}
	for (size_t t = 0; t < b->ntrans; t++) {
		uint32_t from = x->node_of[1][b->trans[t].from], to = x->node_of[1][b->trans[t].to];
		long fa = x->ev[0][from], ta = x->ev[0][to];
		const struct vgm_trans *tr =
		    fa >= 0 && ta >= 0 ? vgm_trans_find(a, (uint32_t)fa, (uint32_t)ta) : NULL;
		if (tr) {
			uint32_t e = x->edge_of[0][tr - a->trans];
			x->edges[e].t[1] = (long)t;
			x->edge_of[1][t] = e;
			continue;
		}
		x->edges[x->nedges] = (struct vgu_edge){from, to, {-1, (long)t}};
		x->edge_of[1][t] = (uint32_t)x->nedges++;
	}
	return 0;
}

int vgu_models_open(struct vgu_app *a, const char *base, const char *other)
{
	struct vgu_models *x = calloc(1, sizeof *x);
	if (!x) {
		fprintf(stderr, "vigil ui: out of memory\n");
		return -1;
	}
	a->models = x;
	x->path[0] = base;
	x->path[1] = other;
	for (int i = 0; i < 2; i++)
		if (!(x->m[i] = load_one(x->path[i]))) {
			vgu_models_close(a);
			return -1;
		}
	if (build_union(x) < 0) {
		fprintf(stderr, "vigil ui: out of memory\n");
		vgu_models_close(a);
		return -1;
	}
	vgu_models_open_timelines(a, x->path);
	return 0;
}

void vgu_models_close(struct vgu_app *a)
{
	struct vgu_models *x = a->models;
	if (!x)
		return;
	vgu_models_close_timelines(a);
	for (int i = 0; i < 2; i++) {
		vgm_model_free(x->m[i]);
		free(x->ev[i]);
		free(x->node_of[i]);
		free(x->edge_of[i]);
	}
	free(x->edges);
	free(x);
	a->models = NULL;
}

static const struct vgm_event *node_event(const struct vgu_models *x, size_t n)
{
	return x->ev[0][n] >= 0 ? &x->m[0]->events[x->ev[0][n]] : &x->m[1]->events[x->ev[1][n]];
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static void api_info(struct vgu_app *a, struct vgu_models *x, struct vgu_reply *r)
{
	json_t *runs = json_array();
	for (int i = 0; i < 2; i++)
		json_array_append_new(
		    runs, json_pack("{s:s,s:I,s:I,s:I,s:I,s:b}", "path", x->path[i], "types",
		                    (json_int_t)x->m[i]->nevents, "transitions",
		                    (json_int_t)x->m[i]->ntrans, "events",
		                    (json_int_t)vgm_total_events(x->m[i]), "transitions_total",
		                    (json_int_t)vgm_total_transitions(x->m[i]), "timeline",
		                    a->run_timeline[i] != NULL));
	vgu_reply_json(r, 200,
	               json_pack("{s:s,s:o,s:I,s:I,s:I,s:f}", "view", "models", "runs", runs,
	                         "nodes", (json_int_t)x->nnodes, "edges", (json_int_t)x->nedges,
	                         "min_support", (json_int_t)VGM_DIFF_MIN_SUPPORT, "alpha",
	                         VGM_DIFF_ALPHA));
}

/* The edge of a diff row (its transition in either model). */
static json_int_t row_edge(const struct vgu_models *x, long af, long at, long bf, long bt)
{
	if (af >= 0 && at >= 0) {
		const struct vgm_trans *t = vgm_trans_find(x->m[0], (uint32_t)af, (uint32_t)at);
		if (t)
			return x->edge_of[0][t - x->m[0]->trans];
	}
	if (bf >= 0 && bt >= 0) {
		const struct vgm_trans *t = vgm_trans_find(x->m[1], (uint32_t)bf, (uint32_t)bt);
		if (t)
			return x->edge_of[1][t - x->m[1]->trans];
	}
	return -1;
}

static void api_diff(struct vgu_models *x, vgu_arg_fn arg, void *ctx, struct vgu_reply *r)
{
	int64_t k = VGM_DIFF_MIN_SUPPORT;
	if (!vgu_int_arg(arg, ctx, "min_support", &k, false, r))
		return;
	if (k < 0)
		return vgu_reply_error(r, 400, "'min_support' must not be negative");
	struct vgm_diff_opts o = {(uint64_t)k, VGM_DIFF_ALPHA, VGM_EVENTS_BY_SHARE};
	const char *by = arg(ctx, "events_by"); /* as vigil diff --events-by */
	if (by && !strcmp(by, "chi2"))
		o.events_by = VGM_EVENTS_BY_CHI2;
	else if (by && strcmp(by, "share"))
		return vgu_reply_error(r, 400, "'events_by': '%.40s' is not share or chi2", by);
	const char *al = arg(ctx, "alpha");
	if (al) {
		char *end;
		o.alpha = strtod(al, &end);
		if (*end || !*al || !(o.alpha > 0) || !isfinite(o.alpha))
			return vgu_reply_error(r, 400, "'alpha': '%.40s' is not a positive number",
			                       al);
	}
	struct vgm_diff d = {0};
	int rc = vgm_diff(x->m[0], x->m[1], &o, &d);
	if (rc < 0)
		return vgu_reply_error(r, 500, "out of memory");
	if (rc > 0) {
		vgm_diff_free(&d);
		return vgu_reply_error(r, 422,
		                       "%s and %s have no event in common: nothing to compare",
		                       x->path[0], x->path[1]);
	}
	json_t *doc = vgm_diff_json(x->m[0], x->path[0], x->m[1], x->path[1], &d, 0, &o);
	/* each row's place in the graph, for brushing and linking */
	json_t *rows = json_object_get(doc, "events");
	for (size_t i = 0; i < d.nevents; i++) {
		const struct vgm_event_row *e = &d.events[i];
		uint32_t n = e->a >= 0 ? x->node_of[0][e->a] : x->node_of[1][e->b];
		json_object_set_new(json_array_get(rows, i), "node", json_integer(n));
	}
	rows = json_object_get(doc, "transitions");
	for (size_t i = 0; i < d.ntrans; i++) {
		const struct vgm_trans_row *t = &d.trans[i];
		json_object_set_new(
		    json_array_get(rows, i), "edge",
		    json_integer(row_edge(x, t->a_from, t->a_to, t->b_from, t->b_to)));
	}
	rows = json_object_get(doc, "times");
	for (size_t i = 0; i < d.ntimes; i++) {
		const struct vgm_time_row *t = &d.times[i];
		json_object_set_new(
		    json_array_get(rows, i), "edge",
		    json_integer(row_edge(x, t->a_from, t->a_to, t->b_from, t->b_to)));
	}
	vgm_diff_free(&d);
	vgu_reply_json(r, 200, doc);
}

static void api_graph(struct vgu_models *x, struct vgu_reply *r)
{
	char label[200];
	json_t *nodes = json_array(), *edges = json_array();
	for (size_t n = 0; n < x->nnodes; n++) {
		const struct vgm_event *e = node_event(x, n);
		json_t *c = json_array();
		for (int i = 0; i < 2; i++)
			json_array_append_new(
			    c, json_integer(x->ev[i][n] >= 0
			                        ? (json_int_t)x->m[i]->events[x->ev[i][n]].count
			                        : 0));
		json_array_append_new(
		    nodes, json_pack("{s:I,s:s,s:s,s:s,s:o,s:o}", "id", (json_int_t)n, "label",
		                     vgm_event_label(e, label, sizeof label), "site", e->site,
		                     "fmt", e->fmt, "name",
		                     e->name ? json_string(e->name) : json_null(), "count", c));
	}
	for (size_t k = 0; k < x->nedges; k++) {
		const struct vgu_edge *e = &x->edges[k];
		json_t *c = json_array(), *p = json_array(), *tm = json_array();
		for (int i = 0; i < 2; i++) {
			const struct vgm_trans *t = e->t[i] >= 0 ? &x->m[i]->trans[e->t[i]] : NULL;
			json_array_append_new(c, json_integer(t ? (json_int_t)t->count : 0));
			double out = t ? (double)x->m[i]->events[t->from].out : 0;
			json_array_append_new(p, t && out > 0 ? json_real((double)t->count / out)
			                                      : json_real(0));
			json_array_append_new(tm, json_integer(t ? (json_int_t)t->sk.total : 0));
		}
		json_array_append_new(edges, json_pack("{s:I,s:I,s:I,s:o,s:o,s:o}", "id",
		                                       (json_int_t)k, "from", (json_int_t)e->from,
		                                       "to", (json_int_t)e->to, "count", c, "p", p,
		                                       "timed", tm));
	}
	vgu_reply_json(r, 200, json_pack("{s:o,s:o}", "nodes", nodes, "edges", edges));
}

/* A sketch as the steps of its CDF: [value of the bucket, fraction of values <= it]. */
static json_t *sketch_json(const struct vgm_trans *t)
{
	if (!t)
		return json_null();
	const struct vgm_sketch *s = &t->sk;
	json_t *pts = json_array();
	uint64_t cum = 0;
	for (size_t i = 0; i < s->len; i++) {
		cum += s->v[i].n;
		json_array_append_new(pts, json_pack("[f,f]", vg_sketch_bucket_value(s->v[i].b),
		                                     (double)cum / (double)s->total));
	}
	return json_pack("{s:I,s:I,s:o,s:o,s:o,s:o,s:o}", "count", (json_int_t)t->count, "timed",
	                 (json_int_t)s->total, "points", pts, "p50",
	                 jnum(vgm_sketch_quantile(s, 0.5)), "p90",
	                 jnum(vgm_sketch_quantile(s, 0.9)), "p99",
	                 jnum(vgm_sketch_quantile(s, 0.99)), "mean", jnum(vgm_sketch_mean(s)));
}

static void api_cdf(struct vgu_models *x, vgu_arg_fn arg, void *ctx, struct vgu_reply *r)
{
	int64_t k;
	if (!vgu_int_arg(arg, ctx, "edge", &k, true, r))
		return;
	if (k < 0 || (size_t)k >= x->nedges)
		return vgu_reply_error(r, 404, "no edge %" PRId64, k);
	const struct vgu_edge *e = &x->edges[k];
	const struct vgm_trans *t[2];
	json_t *runs = json_array();
	for (int i = 0; i < 2; i++) {
		t[i] = e->t[i] >= 0 ? &x->m[i]->trans[e->t[i]] : NULL;
		json_array_append_new(runs, sketch_json(t[i]));
	}
	double emd = t[0] && t[1] ? vgm_sketch_emd(&t[0]->sk, &t[1]->sk) : NAN;
	vgu_reply_json(r, 200,
	               json_pack("{s:I,s:I,s:I,s:o,s:o}", "edge", (json_int_t)k, "from",
	                         (json_int_t)e->from, "to", (json_int_t)e->to, "runs", runs,
	                         "emd_ns", jnum(emd)));
}

/* vigil cdf --from A --to B (its defaults) in each run where both events exist. */
static void api_path(struct vgu_models *x, vgu_arg_fn arg, void *ctx, struct vgu_reply *r)
{
	int64_t from, to;
	if (!vgu_int_arg(arg, ctx, "from", &from, true, r) ||
	    !vgu_int_arg(arg, ctx, "to", &to, true, r))
		return;
	if (from < 0 || (size_t)from >= x->nnodes || to < 0 || (size_t)to >= x->nnodes)
		return vgu_reply_error(r, 404, "no such node");
	json_t *runs = json_array();
	for (int i = 0; i < 2; i++) {
		long s = x->ev[i][from], t = x->ev[i][to];
		if (s < 0 || t < 0) {
			json_array_append_new(
			    runs, json_pack("{s:s}", "missing",
			                    s < 0 ? "the start event" : "the end event"));
			continue;
		}
		uint32_t term = (uint32_t)t;
		struct vgm_cdf_opts o = {(uint32_t)s,    &term,         1, VGM_CDF_DEPTH,
		                         VGM_CDF_CUTOFF, VGM_CDF_WALKS, 1};
		struct vgm_cdf_result res = {0};
		int rc = vgm_cdf(x->m[i], &o, &res);
		if (rc < 0) {
			json_decref(runs);
			return vgu_reply_error(r, 500, "out of memory");
		}
		json_t *run = json_pack(
		    "{s:I,s:I,s:I,s:f,s:I,s:I,s:I}", "walks", (json_int_t)VGM_CDF_WALKS,
		    "walks_reached", (json_int_t)res.nsamples, "walks_abandoned",
		    (json_int_t)res.abandoned, "mass", res.mass, "paths", (json_int_t)res.paths,
		    "transitions", (json_int_t)res.edges, "untimed", (json_int_t)res.untimed);
		if (res.nsamples) {
			/* at most 200 steps of the sorted samples (nearest rank), to draw */
			json_t *pts = json_array();
			size_t steps = res.nsamples < 200 ? res.nsamples : 200;
			for (size_t k = 1; k <= steps; k++) {
				double q = (double)k / (double)steps;
				json_array_append_new(
				    pts, json_pack("[f,f]", vgm_cdf_quantile(&res, q), q));
			}
			json_object_set_new(run, "points", pts);
			json_object_set_new(run, "percentiles_ns",
			                    json_pack("{s:f,s:f,s:f,s:f}", "p50",
			                              vgm_cdf_quantile(&res, 0.5), "p90",
			                              vgm_cdf_quantile(&res, 0.9), "p99",
			                              vgm_cdf_quantile(&res, 0.99), "p99.9",
			                              vgm_cdf_quantile(&res, 0.999)));
		}
		json_array_append_new(runs, run);
		vgm_cdf_free(&res);
	}
	vgu_reply_json(r, 200,
	               json_pack("{s:I,s:I,s:o}", "from", (json_int_t)from, "to", (json_int_t)to,
	                         "runs", runs));
}

/* Where run R's trace first has edge K (its two events in a row of one thread) or node K. */
static void api_where(struct vgu_app *a, struct vgu_models *x, vgu_arg_fn arg, void *ctx,
                      struct vgu_reply *r)
{
	int64_t run, k = -1;
	bool edge = arg(ctx, "edge") != NULL;
	if (!vgu_int_arg(arg, ctx, "run", &run, true, r) ||
	    !vgu_int_arg(arg, ctx, edge ? "edge" : "node", &k, true, r))
		return;
	if (run != 0 && run != 1)
		return vgu_reply_error(r, 400, "'run' is 0 (baseline) or 1 (other)");
	if (k < 0 || (size_t)k >= (edge ? x->nedges : x->nnodes))
		return vgu_reply_error(r, 404, "no such %s", edge ? "edge" : "node");
	uint32_t from = edge ? x->edges[k].from : (uint32_t)k, to = edge ? x->edges[k].to : 0;
	if (edge ? x->edges[k].t[run] < 0 : x->ev[run][from] < 0)
		return vgu_reply_error(r, 404, "not in run %d", (int)run);
	const struct vgm_event *ev = x->m[run]->events;
	vgu_models_where(a, (int)run, ev[x->ev[run][from]].site,
	                 edge ? ev[x->ev[run][to]].site : NULL, r);
}

void vgu_api_models(struct vgu_app *a, const char *path, vgu_arg_fn arg, void *ctx,
                    struct vgu_reply *r)
{
	struct vgu_models *x = a->models;
	if (!strcmp(path, "/api/view") || !strcmp(path, "/api/model/info"))
		return api_info(a, x, r);
	if (!strcmp(path, "/api/model/where"))
		return api_where(a, x, arg, ctx, r);
	if (!strcmp(path, "/api/model/diff"))
		return api_diff(x, arg, ctx, r);
	if (!strcmp(path, "/api/model/graph"))
		return api_graph(x, r);
	if (!strcmp(path, "/api/model/cdf"))
		return api_cdf(x, arg, ctx, r);
	if (!strcmp(path, "/api/model/path"))
		return api_path(x, arg, ctx, r);
	vgu_reply_error(r, 404, "no API route %.100s (this is the model workbench)", path);
}
