/* The network browser of vigil ui (docs/ui.md, "Network browser"): the networks of a
 * folder written by `vigil net split` (net-*.json, index.json), or of traces split here
 * as vigil net split splits them (src/net: session, split, graph). Routes:
 *
 *   /api/nets      every network's figures (vgn_stats_compute: those of vigil net report),
 *                  the response-time percentiles and server sequences of net report, the
 *                  clocks of index.json (or of the split)
 *   /api/view      {"view": "nets", ...}: which page the analysis page shows
 *   /api/net?n=K   network K of that list (0-based): its JSON as in net-*.json
 *
 * The traces the networks come from (--nets TRACE..., or index.json's `traces` when they
 * are found from here) are opened as the timeline too (vgu_nets_open_timeline): every
 * other route is then the timeline's (index.html), where a network's jump lands.
 *
 * Networks are read (or built) once at start for their figures, then again on request:
 * 100,000 of them are not kept in memory. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "net/net.h"
#include "ui/ui.h"

struct vgu_nets {
	const char *source; /* the folder, or the first trace */
	size_t n;
	char **files;          /* folder: per network its file; traces: NULL */
	struct vgn_session ss; /* traces: the analysis, kept to build networks again */
	struct vgn_split sp;
	bool split;
	json_t *list;         /* per network its figures */
	json_t *clock;        /* index.json's clock, or the split's; may be NULL */
	json_t *index_counts; /* from index.json: networks_count, messages */
	json_t *traces;       /* index.json's traces (the strings the timeline's paths are) */
	char **tpaths;        /* the timeline's traces, or NULL */
	size_t ntpaths;
	char *no_timeline; /* why there is no timeline, or NULL */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The q-th percentile by nearest rank, as vigil net report gives it. */
static double pct(const int64_t *v, size_t n, double p)
{
	if (!n)
		return 0;
	size_t k = (size_t)ceil(p / 100 * (double)n);
	return (double)v[k ? k - 1 : 0];
}

/* Appends s to the array unless it holds it already. */
static void add_unique(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v) if (!strcmp(json_string_value(v), s)) return;
	json_array_append_new(arr, json_string(s));
}

/* One network's figures: vigil net report's, with its hosts, programs and input. */
static json_t *figures(const struct vgn_graph *g, const char *file)
{
	struct vgn_stats st;
	if (vgn_stats_compute(g, &st) < 0)
		return NULL;
	json_t *hosts = json_array(), *programs = json_array();
	for (size_t t = 0; t < g->nthreads; t++) {
		add_unique(hosts, g->threads[t].host);
		add_unique(programs, g->threads[t].program);
	}
	const struct vgn_gvertex *in = g->nvertices ? &g->vertices[g->input] : NULL;
	const struct vgn_gthread *ith = in ? &g->threads[in->thread] : NULL;
	json_t *o = json_pack(
	    "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:o,s:o,s:s,s:s,s:s}", "network",
	    (json_int_t)g->id, "start_ns", (json_int_t)st.start, "response_ns",
	    (json_int_t)st.response, "threads", (json_int_t)st.threads, "processes",
	    (json_int_t)st.processes, "machines", (json_int_t)st.machines, "messages",
	    (json_int_t)st.messages, "cross_host_messages", (json_int_t)st.cross_host_messages,
	    "pairs", (json_int_t)st.pairs, "bytes", (json_int_t)st.bytes, "unmatched",
	    (json_int_t)st.unmatched, "vertices", (json_int_t)g->nvertices, "servers",
	    st.servers ? st.servers : "", "hosts", hosts, "programs", programs, "input_kind",
	    in ? vgn_kind_name(in->kind) : "", "input_host", ith ? ith->host : "", "input_program",
	    in && in->program ? in->program
	    : ith             ? ith->program
	                      : "");
	if (o && file)
		json_object_set_new(o, "file", json_string(file));
	vgn_stats_free(&st);
	return o;
}

static int list_files(struct vgu_nets *x, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "vigil ui: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	size_t cap = 0;
	for (struct dirent *de; (de = readdir(d));) {
		size_t l = strlen(de->d_name);
		if (strncmp(de->d_name, "net-", 4) || l < 9 || strcmp(de->d_name + l - 5, ".json"))
			continue;
		if (x->n == cap) {
			cap = cap ? cap * 2 : 64;
			char **f = realloc(x->files, cap * sizeof *f);
			if (!f)
				break;
			x->files = f;
		}
		if (asprintf(&x->files[x->n], "%s/%s", dir, de->d_name) < 0)
			break;
		x->n++;
	}
	closedir(d);
	if (!x->n) {
		fprintf(stderr,
		        "vigil ui: %s: no network (net-*.json) in this folder (vigil net split "
		        "writes them)\n",
		        dir);
		return -1;
	}
	qsort(x->files, x->n, sizeof *x->files, cmp_str);
	return 0;
}

int vgu_nets_open_dir(struct vgu_app *a, const char *dir)
{
	struct vgu_nets *x = calloc(1, sizeof *x);
	if (!x || !(a->nets = x) || !(x->list = json_array())) {
		fprintf(stderr, "vigil ui: out of memory\n");
		return -1;
	}
	x->source = dir;
	if (list_files(x, dir) < 0)
		return vgu_nets_close(a), -1;
	char path[4096], err[1024];
	snprintf(path, sizeof path, "%s/index.json", dir);
	json_error_t je;
	json_t *index = json_load_file(path, 0, &je);
	if (index) {
		x->clock = json_incref(json_object_get(index, "clock"));
		x->index_counts = json_pack("{s:O,s:O}", "networks_count",
		                            json_object_get(index, "networks_count"), "messages",
		                            json_object_get(index, "messages"));
		x->traces = json_incref(json_object_get(index, "traces"));
		json_decref(index);
	}
	for (size_t i = 0; i < x->n; i++) {
		struct vgn_graph *g = vgn_graph_load(x->files[i], err, sizeof err);
		if (!g) {
			fprintf(stderr, "vigil ui: %s\n", err);
			return vgu_nets_close(a), -1;
		}
		const char *base = strrchr(x->files[i], '/');
		json_t *o = figures(g, base ? base + 1 : x->files[i]);
		vgn_graph_free(g);
		if (!o) {
			fprintf(stderr, "vigil ui: out of memory\n");
			return vgu_nets_close(a), -1;
		}
		json_array_append_new(x->list, o);
	}
	return 0;
}

/* Where a trace of index.json is from here: as written (relative to where vigil net split
 * ran, often where vigil ui runs), else beside the networks' folder. NULL if neither. */
static char *find_trace(const char *dir, const char *t)
{
	struct stat st;
	char *p = NULL;
	if (!stat(t, &st) && S_ISDIR(st.st_mode))
		return strdup(t);
	if (t[0] == '/')
		return NULL;
	const char *slash = strrchr(dir, '/');
	if (asprintf(&p, "%.*s%s", slash ? (int)(slash - dir + 1) : 0, dir, t) < 0)
		return NULL;
	if (!stat(p, &st) && S_ISDIR(st.st_mode))
		return p;
	free(p);
	return NULL;
}

int vgu_nets_open_timeline(struct vgu_app *a, const char *const *paths, size_t n)
{
	struct vgu_nets *x = a->nets;
	size_t i;
	json_t *t;
	if (!paths) {
		n = json_array_size(x->traces);
		if (!n && asprintf(&x->no_timeline, "%s/index.json names no trace", x->source) < 0)
			x->no_timeline = NULL;
	}
	x->tpaths = calloc(n + 1, sizeof *x->tpaths);
	if (!x->tpaths)
		return -1;
	if (paths)
		for (i = 0; i < n; i++)
			x->tpaths[x->ntpaths++] = strdup(paths[i]);
	else
		json_array_foreach(x->traces, i, t)
		{
			const char *name = json_string_value(t) ? json_string_value(t) : "?";
			char *p = find_trace(x->source, name);
			if (!p) {
				if (asprintf(&x->no_timeline,
				             "the trace %s (index.json) is not found from here",
				             name) < 0)
					x->no_timeline = NULL;
				return 0;
			}
			x->tpaths[x->ntpaths++] = p;
		}
	if (x->no_timeline || !x->ntpaths)
		return 0;
	fprintf(stderr, "vigil ui: opening the timeline of %s%s\n", x->tpaths[0],
	        x->ntpaths > 1 ? " and the other traces" : "");
	if (vgu_app_open(a, (const char *const *)x->tpaths, x->ntpaths) < 0) {
		fprintf(stderr, "vigil ui: the network browser goes on without the timeline\n");
		if (asprintf(&x->no_timeline, "the traces could not be opened (see vigil ui's "
		                              "messages)") < 0)
			x->no_timeline = NULL;
	}
	return 0;
}

bool vgu_nets_route(const char *path)
{
	return !strcmp(path, "/api/view") || !strcmp(path, "/api/nets") ||
	       !strcmp(path, "/api/net");
}

static void warn(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "vigil ui: warning: %s\n", line);
}

int vgu_nets_open_traces(struct vgu_app *a, const char *const *paths, size_t n)
{
	struct vgu_nets *x = calloc(1, sizeof *x);
	if (!x || !(a->nets = x) || !(x->list = json_array())) {
		fprintf(stderr, "vigil ui: out of memory\n");
		return -1;
	}
	x->source = paths[0];
	x->ss.warn = warn;
	char err[1024];
	if (vgn_session_open(&x->ss, paths, n, NULL, NULL, err, sizeof err) < 0) {
		fprintf(stderr, "vigil ui: %s\n", err);
		return vgu_nets_close(a), -1;
	}
	/* vigil net split's defaults: every kind of input, each client's unit */
	if (vgn_split_run(x->ss.set, VGN_IN_ALL, &x->sp) < 0) {
		fprintf(stderr, "vigil ui: out of memory\n");
		return vgu_nets_close(a), -1;
	}
	x->split = true;
	x->n = x->sp.nnets;
	x->clock = vgn_clock_to_json(x->ss.set, &x->ss.clock);
	for (size_t i = 0; i < x->n; i++) {
		struct vgn_graph *g = vgn_graph_build(x->ss.set, &x->sp, i);
		json_t *o = g ? figures(g, NULL) : NULL;
		vgn_graph_free(g);
		if (!o) {
			fprintf(stderr, "vigil ui: out of memory\n");
			return vgu_nets_close(a), -1;
		}
		json_array_append_new(x->list, o);
	}
	if (!x->n) {
		fprintf(stderr,
		        "vigil ui: %s: no network: no input found in the traces (see "
		        "vigil net split)\n",
		        paths[0]);
		return vgu_nets_close(a), -1;
	}
	return 0;
}

void vgu_nets_close(struct vgu_app *a)
{
	struct vgu_nets *x = a->nets;
	if (!x)
		return;
	for (size_t i = 0; x->files && i < x->n; i++)
		free(x->files[i]);
	free(x->files);
	if (x->split)
		vgn_split_free(&x->sp);
	vgn_session_close(&x->ss);
	json_decref(x->list);
	json_decref(x->clock);
	json_decref(x->index_counts);
	json_decref(x->traces);
	for (size_t i = 0; i < x->ntpaths; i++)
		free(x->tpaths[i]);
	free(x->tpaths);
	free(x->no_timeline);
	free(x);
	a->nets = NULL;
}

/* Whether the timeline is open (index.html), over which traces, or why not. */
static json_t *timeline_json(const struct vgu_nets *x)
{
	json_t *tr = json_array();
	for (size_t i = 0; i < x->ntpaths; i++)
		json_array_append_new(tr, json_string(x->tpaths[i]));
	if (x->no_timeline || !x->ntpaths)
		return json_pack("{s:b,s:s,s:o}", "open", 0, "why",
		                 x->no_timeline ? x->no_timeline : "no trace", "traces", tr);
	return json_pack("{s:b,s:o}", "open", 1, "traces", tr);
}

struct seq {
	const char *servers;
	size_t count;
};

static int by_count(const void *a, const void *b)
{
	const struct seq *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->servers, y->servers);
}

static void api_list(struct vgu_nets *x, struct vgu_reply *r)
{
	size_t n = json_array_size(x->list), nseq = 0;
	int64_t *resp = calloc(n + 1, sizeof *resp);
	struct seq *seqs = calloc(n + 1, sizeof *seqs);
	if (!resp || !seqs) {
		free(resp);
		free(seqs);
		return vgu_reply_error(r, 500, "out of memory");
	}
	double mean = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_array_get(x->list, i);
		resp[i] = json_integer_value(json_object_get(o, "response_ns"));
		mean += (double)resp[i] / (double)n;
		const char *sv = json_string_value(json_object_get(o, "servers"));
		size_t k = 0;
		while (k < nseq && strcmp(seqs[k].servers, sv))
			k++;
		if (k == nseq)
			seqs[nseq++] = (struct seq){sv, 0};
		seqs[k].count++;
	}
	qsort(resp, n, sizeof *resp, cmp_i64);
	qsort(seqs, nseq, sizeof *seqs, by_count);
	json_t *sq = json_array();
	for (size_t i = 0; i < nseq; i++)
		json_array_append_new(sq, json_pack("{s:s,s:I}", "servers", seqs[i].servers,
		                                    "networks", (json_int_t)seqs[i].count));
	json_t *sum =
	    json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:f}", "networks", (json_int_t)n, "min",
	              n ? (double)resp[0] : 0.0, "p50", pct(resp, n, 50), "p90", pct(resp, n, 90),
	              "p99", pct(resp, n, 99), "max", n ? (double)resp[n - 1] : 0.0, "mean", mean);
	free(resp);
	free(seqs);
	json_t *doc = json_pack("{s:s,s:s,s:s,s:O,s:o,s:o}", "view", "nets", "source", x->source,
	                        "from", x->files ? "folder" : "traces", "networks", x->list,
	                        "response_ns", sum, "sequences", sq);
	if (x->clock)
		json_object_set(doc, "clock", x->clock);
	if (x->index_counts)
		json_object_set(doc, "index", x->index_counts);
	json_object_set_new(doc, "timeline", timeline_json(x));
	vgu_reply_json(r, 200, doc);
}

static void api_net(struct vgu_nets *x, vgu_arg_fn arg, void *ctx, struct vgu_reply *r)
{
	int64_t k;
	if (!vgu_int_arg(arg, ctx, "n", &k, true, r))
		return;
	if (k < 0 || (size_t)k >= x->n)
		return vgu_reply_error(r, 404, "no network %" PRId64 " (0..%zu)", k, x->n - 1);
	char err[1024];
	struct vgn_graph *g = x->files ? vgn_graph_load(x->files[k], err, sizeof err)
	                               : vgn_graph_build(x->ss.set, &x->sp, (size_t)k);
	if (!g)
		return x->files ? vgu_reply_error(r, 410, "%s", err)
		                : vgu_reply_error(r, 500, "out of memory");
	json_t *j = vgn_graph_to_json(g);
	vgn_graph_free(g);
	if (x->files) {
		const char *base = strrchr(x->files[k], '/');
		json_object_set_new(j, "file", json_string(base ? base + 1 : x->files[k]));
	}
	vgu_reply_json(r, 200, j);
}

void vgu_api_nets(struct vgu_app *a, const char *path, vgu_arg_fn arg, void *ctx,
                  struct vgu_reply *r)
{
	if (!strcmp(path, "/api/view"))
		return vgu_reply_json(r, 200,
		                      json_pack("{s:s,s:s,s:I,s:o}", "view", "nets", "source",
		                                a->nets->source, "networks", (json_int_t)a->nets->n,
		                                "timeline", timeline_json(a->nets)));
	if (!strcmp(path, "/api/nets"))
		return api_list(a->nets, r);
	if (!strcmp(path, "/api/net"))
		return api_net(a->nets, arg, ctx, r);
	vgu_reply_error(r, 404, "no API route %.100s (this is the network browser)", path);
}
