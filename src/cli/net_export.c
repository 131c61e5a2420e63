/* vigil net export: interaction networks as OpenTelemetry traces in OTLP/JSON (the JSON
 * mapping of ExportTraceServiceRequest: resourceSpans / scopeSpans / spans; ids in hex,
 * 64-bit integers and times as strings; docs/export.md).
 *
 * One trace per network. Its trace-id is the network's interaction id when the input
 * carried one (a W3C traceparent's trace-id, `iid` in the network file), so the network
 * joins the traces of services instrumented with OpenTelemetry; otherwise one derived from
 * the network (stable across runs of the export). Spans, each in the resource of its
 * process (host.name, process.pid, process.executable.name):
 *   a thread run (INTERNAL): the thread's first to last vertex in the network; the input
 *     thread's is the root, another's parent is the run of the thread its first incoming
 *     message or spawn came from; one link per message received, to the sender's run;
 *   a request/reply pair, as `vigil net report` counts them (per pair of processes, a
 *     message back after the side that spoke first): a CLIENT span from the request's
 *     send to the reply's receive, child of the client thread's run, and a SERVER span
 *     from the request's receive to the reply's send, child of the CLIENT span.
 * Recorded traceparents join the spans of other tracers: a CLIENT span whose request was
 * sent by vg_msg_send has the parent-id that send put in its traceparent as its span id
 * (the server's tracer makes its spans children of it), and a thread whose first vertex
 * is a receive from outside the network (vg_msg_recv of another tracer's traceparent)
 * has that traceparent's parent-id as its run's parent. */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/out_file.h"
#include "export_map.h"
#include "net/net.h"
#include "net_export.h"
#include "vigil/vigil.h"

enum { KIND_INTERNAL = 1, KIND_SERVER = 2, KIND_CLIENT = 3 };

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ull;
	return h;
}

struct net_ctx {
	const struct vgn_graph *g;
	char trace_id[33];
	json_t *resources;    /* array of resourceSpans */
	struct vgx_map procs; /* "host|pid" -> index in resources */
	uint32_t *proc_of;    /* per thread */
	char (*run_id)[17];   /* per thread: its run span */
	bool *msg_used;       /* per vertex: its traceparent's parent-id is a span's id */
	uint64_t spans, links, pairs;
};

static void span_id(const struct net_ctx *c, const char *what, uint64_t a, uint64_t b, char out[17])
{
	uint64_t h = fnv(1469598103934665603ull, c->trace_id, 32);
	h = fnv(h, what, strlen(what));
	h = fnv(h, &a, sizeof a);
	h = fnv(h, &b, sizeof b);
	snprintf(out, 17, "%016" PRIx64, h ? h : 1);
}

static json_t *attr_s(const char *k, const char *v)
{
	return json_pack("{s:s,s:{s:s}}", "key", k, "value", "stringValue", v ? v : "");
}

static json_t *attr_i(const char *k, int64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "%" PRId64, v);
	return json_pack("{s:s,s:{s:s}}", "key", k, "value", "intValue", buf);
}

static json_t *nanos(int64_t ns)
{
	char buf[24];
	snprintf(buf, sizeof buf, "%" PRId64, ns < 0 ? 0 : ns);
	return json_string(buf);
}

/* The spans array of the resource (host, pid, program) of thread t. */
static json_t *spans_of(struct net_ctx *c, uint32_t t)
{
	json_t *res = json_array_get(c->resources, c->proc_of[t]);
	return json_object_get(json_array_get(json_object_get(res, "scopeSpans"), 0), "spans");
}

static json_t *span(struct net_ctx *c, const char *id, const char *parent, const char *name,
                    int kind, int64_t start, int64_t end)
{
	c->spans++;
	return json_pack("{s:s,s:s,s:s,s:s,s:i,s:o,s:o,s:[],s:[],s:{}}", "traceId", c->trace_id,
	                 "spanId", id, "parentSpanId", parent ? parent : "", "name", name, "kind",
	                 kind, "startTimeUnixNano", nanos(start), "endTimeUnixNano",
	                 nanos(end < start ? start : end), "attributes", "links", "status");
}

static void resources(struct net_ctx *c)
{
	const struct vgn_graph *g = c->g;
	for (uint32_t t = 0; t < g->nthreads; t++) {
		const struct vgn_gthread *th = &g->threads[t];
		char key[512];
		snprintf(key, sizeof key, "%s|%" PRId64, th->host ? th->host : "", th->pid);
		size_t *ix = vgx_map_put(&c->procs, key, json_array_size(c->resources));
		if (ix && *ix == json_array_size(c->resources)) {
			json_t *attrs = json_array();
			json_array_append_new(attrs, attr_s("host.name", th->host));
			json_array_append_new(attrs, attr_i("process.pid", th->pid));
			json_array_append_new(attrs,
			                      attr_s("process.executable.name", th->program));
			json_array_append_new(attrs, attr_s("service.name", th->program));
			json_array_append_new(c->resources,
			                      json_pack("{s:{s:o},s:[{s:{s:s,s:s},s:[]}]}",
			                                "resource", "attributes", attrs,
			                                "scopeSpans", "scope", "name", "vigil",
			                                "version", VG_VERSION, "spans"));
		}
		c->proc_of[t] = ix ? (uint32_t)*ix : 0;
	}
}

/* Thread runs: the first and last vertex of each thread; parents; links per message. */
static void runs(struct net_ctx *c)
{
	const struct vgn_graph *g = c->g;
	size_t n = g->nthreads;
	int64_t *first = calloc(n + 1, sizeof *first), *last = calloc(n + 1, sizeof *last);
	int64_t *in_ts = calloc(n + 1, sizeof *in_ts);
	uint32_t *parent = calloc(n + 1, sizeof *parent);
	bool *seen = calloc(n + 1, sizeof *seen);
	json_t **sp = calloc(n + 1, sizeof *sp);
	size_t *first_v = calloc(n + 1, sizeof *first_v);
	if (!first || !last || !in_ts || !parent || !seen || !sp || !first_v)
		goto out;
	for (size_t v = 0; v < g->nvertices; v++) {
		const struct vgn_gvertex *x = &g->vertices[v];
		if (!seen[x->thread] || x->ts < first[x->thread]) {
			first[x->thread] = x->ts;
			first_v[x->thread] = v;
		}
		if (!seen[x->thread] || x->ts > last[x->thread])
			last[x->thread] = x->ts;
		seen[x->thread] = true;
	}
	for (size_t t = 0; t < n; t++) {
		parent[t] = VGN_NONE;
		span_id(c, "run", t, 0, c->run_id[t]);
	}
	uint32_t root = g->input < g->nvertices ? g->vertices[g->input].thread : 0;
	for (size_t e = 0; e < g->nedges; e++) {
		const struct vgn_gedge *x = &g->edges[e];
		if (x->kind == VGN_E_THREAD)
			continue;
		uint32_t from = g->vertices[x->from].thread, to = g->vertices[x->to].thread;
		int64_t ts = g->vertices[x->to].ts;
		if (from != to && to != root && (parent[to] == VGN_NONE || ts < in_ts[to])) {
			parent[to] = from;
			in_ts[to] = ts;
		}
	}
	for (uint32_t t = 0; t < n; t++) {
		const struct vgn_gthread *th = &g->threads[t];
		char name[300];
		snprintf(name, sizeof name, "%s %s", th->program ? th->program : "?",
		         th->name && th->name[0] ? th->name : "thread");
		/* a parent found only through a cycle back to the thread itself stays none */
		const char *pid = t == root || parent[t] == VGN_NONE ? NULL : c->run_id[parent[t]];
		/* none in the network: the span of another tracer whose message started it */
		const struct vgn_gvertex *fv = &g->vertices[first_v[t]];
		char outside[17];
		if (!pid && fv->kind == VGN_RECV && !fv->matched && fv->msg) {
			snprintf(outside, sizeof outside, "%016" PRIx64, fv->msg);
			pid = outside;
		}
		sp[t] = span(c, c->run_id[t], pid, name, KIND_INTERNAL, first[t], last[t]);
		json_t *attrs = json_object_get(sp[t], "attributes");
		json_array_append_new(attrs, attr_i("thread.id", th->tid));
		json_array_append_new(attrs, attr_s("thread.name", th->name));
		json_array_append_new(attrs, attr_i("vigil.network", (int64_t)g->id));
		if (t == root)
			json_array_append_new(attrs,
			                      json_pack("{s:s,s:{s:b}}", "key", "vigil.input",
			                                "value", "boolValue", 1));
	}
	for (size_t e = 0; e < g->nedges; e++) {
		const struct vgn_gedge *x = &g->edges[e];
		if (x->kind != VGN_E_MESSAGE)
			continue;
		uint32_t from = g->vertices[x->from].thread, to = g->vertices[x->to].thread;
		json_t *attrs = json_array();
		json_array_append_new(attrs, attr_i("vigil.bytes", (int64_t)x->bytes));
		json_array_append_new(attrs, attr_i("vigil.sent_ns", g->vertices[x->from].ts));
		json_array_append_new(json_object_get(sp[to], "links"),
		                      json_pack("{s:s,s:s,s:o}", "traceId", c->trace_id, "spanId",
		                                c->run_id[from], "attributes", attrs));
		c->links++;
	}
	for (uint32_t t = 0; t < n; t++)
		json_array_append_new(spans_of(c, t), sp[t]);
out:
	free(first);
	free(last);
	free(in_ts);
	free(parent);
	free(seen);
	free(sp);
	free(first_v);
}

static int by_send(const void *a, const void *b, void *arg)
{
	const struct vgn_graph *g = arg;
	const struct vgn_gedge *x = &g->edges[*(const uint32_t *)a],
	                       *y = &g->edges[*(const uint32_t *)b];
	int64_t p = g->vertices[x->from].ts, q = g->vertices[y->from].ts;
	return p < q ? -1 : p > q;
}

static void pair(struct net_ctx *c, const struct vgn_gedge *req, const struct vgn_gedge *rep)
{
	const struct vgn_graph *g = c->g;
	const struct vgn_gvertex *rs = &g->vertices[req->from], *rr = &g->vertices[req->to];
	const struct vgn_gvertex *ps = &g->vertices[rep->from], *pr = &g->vertices[rep->to];
	char cid[17], sid[17], name[300];
	span_id(c, "client", req->from, rep->to, cid);
	if (rs->msg && !c->msg_used[req->from]) { /* what the server's tracer was told */
		snprintf(cid, sizeof cid, "%016" PRIx64, rs->msg);
		c->msg_used[req->from] = true;
	}
	span_id(c, "server", req->to, rep->from, sid);
	const struct vgn_gthread *server = &g->threads[rr->thread];
	snprintf(name, sizeof name, "request to %s", server->program ? server->program : "?");
	json_t *cs = span(c, cid, c->run_id[rs->thread], name, KIND_CLIENT, rs->ts, pr->ts);
	json_t *a = json_object_get(cs, "attributes");
	json_array_append_new(a, attr_i("vigil.request_bytes", (int64_t)req->bytes));
	json_array_append_new(a, attr_i("vigil.reply_bytes", (int64_t)rep->bytes));
	if (rs->local)
		json_array_append_new(a, attr_s("vigil.local", rs->local));
	if (rs->remote)
		json_array_append_new(a, attr_s("vigil.remote", rs->remote));
	json_array_append_new(spans_of(c, rs->thread), cs);
	snprintf(name, sizeof name, "serve %s", server->program ? server->program : "?");
	json_t *ss = span(c, sid, cid, name, KIND_SERVER, rr->ts, ps->ts);
	json_array_append_new(spans_of(c, rr->thread), ss);
	c->pairs++;
}

/* Request/reply pairs as `vigil net report` counts them (report.c). */
static void pairs(struct net_ctx *c)
{
	const struct vgn_graph *g = c->g;
	uint32_t *msgs = calloc(g->nedges + 1, sizeof *msgs);
	size_t nm = 0;
	if (!msgs)
		return;
	for (uint32_t e = 0; e < g->nedges; e++)
		if (g->edges[e].kind == VGN_E_MESSAGE)
			msgs[nm++] = e;
	qsort_r(msgs, nm, sizeof *msgs, by_send, (void *)g);
	struct vgx_map chan = {0};
	/* per pair of processes: initiator, last sender, first message of the request */
	struct st {
		uint32_t init, last, req;
	} *states = calloc(nm + 1, sizeof *states);
	size_t nstates = 0;
	for (size_t i = 0; states && i < nm; i++) {
		const struct vgn_gedge *x = &g->edges[msgs[i]];
		uint32_t a = c->proc_of[g->vertices[x->from].thread],
		         b = c->proc_of[g->vertices[x->to].thread];
		if (a == b)
			continue;
		char key[32];
		snprintf(key, sizeof key, "%" PRIu32 "|%" PRIu32, a < b ? a : b, a < b ? b : a);
		size_t *ix = vgx_map_put(&chan, key, nstates);
		if (!ix)
			break;
		if (*ix == nstates) {
			states[nstates++] = (struct st){a, a, msgs[i]};
			continue;
		}
		struct st *s = &states[*ix];
		if (a == s->init && s->last != s->init)
			s->req = msgs[i]; /* a new request after a reply */
		else if (a != s->init && s->last == s->init)
			pair(c, &g->edges[s->req], x);
		s->last = a;
	}
	vgx_map_free(&chan);
	free(states);
	free(msgs);
}

static void derive_trace_id(struct net_ctx *c, const char *file)
{
	const struct vgn_graph *g = c->g;
	bool given = strlen(g->iid) == 32 && strspn(g->iid, "0") != 32;
	if (given) {
		memcpy(c->trace_id, g->iid, 33);
		return;
	}
	uint64_t h1 = fnv(1469598103934665603ull, file, strlen(file));
	int64_t ts = g->input < g->nvertices ? g->vertices[g->input].ts : 0;
	h1 = fnv(h1, &ts, sizeof ts);
	h1 = fnv(h1, &g->id, sizeof g->id);
	uint64_t h2 = fnv(h1 ^ 0x9e3779b97f4a7c15ull, &ts, sizeof ts);
	snprintf(c->trace_id, sizeof c->trace_id, "%016" PRIx64 "%016" PRIx64, h1, h2);
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: vigil net export DIR|NET.json --format otlp -o FILE\n\n"
	        "Writes the networks of `vigil net split` as OpenTelemetry traces in OTLP/JSON\n"
	        "(docs/export.md): one trace per network (the W3C trace-id its input carried,\n"
	        "if any), a span per thread run and per request/reply pair (CLIENT and SERVER),\n"
	        "a link per message, resources with host.name, process.pid and\n"
	        "process.executable.name.\n\n"
	        "examples:\n"
	        "  vigil net export nets --format otlp -o nets.otlp.json\n");
}

int vg_net_export(int argc, char **argv)
{
	static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
	                                     {"output", required_argument, NULL, 'o'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {0, 0, 0, 0}};
	const char *format = NULL, *out = NULL;
	optind = 1;
	opterr = 0;
	for (int ch; (ch = getopt_long(argc, argv, ":f:o:h", opts, NULL)) != -1;) {
		if (ch == 'f')
			format = optarg;
		else if (ch == 'o')
			out = optarg;
		else if (ch == 'h') {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "vigil net export: %s %s (see 'vigil net export --help')\n",
			        ch == ':' ? "a value is needed for" : "unknown option",
			        argv[optind - 1]);
			return 2;
		}
	}
	if (!format || strcmp(format, "otlp")) {
		fprintf(stderr, "vigil net export: %s (otlp is the one format)\n",
		        format ? "unknown format" : "--format otlp is needed");
		return 2;
	}
	if (!out || optind != argc - 1) {
		fprintf(stderr, "vigil net export: give one DIR or NET.json and -o FILE\n");
		return 2;
	}
	char err[1024];
	size_t nf;
	char **files = vg_cli_network_files(argv[optind], &nf, err, sizeof err);
	if (!files) {
		fprintf(stderr, "vigil net export: %s\n", err);
		return 2;
	}
	json_t *all = json_array();
	uint64_t spans = 0, links = 0, npairs = 0;
	size_t nets = 0, bad = 0;
	for (size_t i = 0; i < nf; i++) {
		struct vgn_graph *g = vgn_graph_load(files[i], err, sizeof err);
		if (!g) {
			fprintf(stderr, "vigil net export: not exported: %s\n", err);
			bad++;
			continue;
		}
		struct net_ctx c = {.g = g, .resources = json_array()};
		c.proc_of = calloc(g->nthreads + 1, sizeof *c.proc_of);
		c.run_id = calloc(g->nthreads + 1, sizeof *c.run_id);
		c.msg_used = calloc(g->nvertices + 1, sizeof *c.msg_used);
		if (c.proc_of && c.run_id && c.msg_used) {
			derive_trace_id(&c, files[i]);
			resources(&c);
			runs(&c);
			pairs(&c);
			json_array_extend(all, c.resources);
			nets++;
		}
		spans += c.spans;
		links += c.links;
		npairs += c.pairs;
		json_decref(c.resources);
		vgx_map_free(&c.procs);
		free(c.proc_of);
		free(c.run_id);
		free(c.msg_used);
		vgn_graph_free(g);
	}
	for (size_t i = 0; i < nf; i++)
		free(files[i]);
	free(files);
	json_t *doc = json_pack("{s:o}", "resourceSpans", all);
	struct vg_out o;
	int rc = 2;
	if (vg_out_open(&o, out, err, sizeof err) < 0) {
		fprintf(stderr, "vigil net export: %s\n", err);
	} else if (json_dumpf(doc, o.f, JSON_COMPACT) < 0 || fputc('\n', o.f) == EOF) {
		vg_out_abort(&o);
		fprintf(stderr, "vigil net export: %s: write error\n", out);
	} else if (vg_out_commit(&o, err, sizeof err) < 0) {
		fprintf(stderr, "vigil net export: %s\n", err);
	} else {
		fprintf(stderr,
		        "vigil net export: %zu trace%s, %" PRIu64 " spans (%" PRIu64
		        " request/reply pairs), %" PRIu64 " links -> %s\n",
		        nets, nets == 1 ? "" : "s", spans, npairs, links, out);
		rc = bad ? 1 : 0;
	}
	json_decref(doc);
	return rc;
}
