/* One interaction network in memory: built from a split, written as JSON, read back (for
 * report and render). Vertices are structural events; edges are runs of one thread
 * between two of its events, messages (one per matched send/receive overlap) and the
 * creation of a thread or process (from its creator's last event before it). */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"

static struct vgn_graph *graph_new(void)
{
	struct vgn_graph *g = vgb_xcalloc(1, sizeof *g);
	g->pool = vgb_intern_new();
	return g;
}

void vgn_graph_free(struct vgn_graph *g)
{
	if (!g)
		return;
	for (size_t t = 0; t < g->nthreads; t++)
		free(g->threads[t].states);
	free(g->threads);
	free(g->vertices);
	free(g->edges);
	vgb_intern_free(g->pool);
	free(g);
}

static const char *str(struct vgn_graph *g, const char *s)
{
	return vgb_intern_str(g->pool, s);
}

struct vgn_graph *vgn_graph_build(const struct vgn_set *s, const struct vgn_split *sp, size_t n)
{
	struct vgn_graph *g = graph_new();
	if (!g)
		return NULL;
	g->id = n + 1;
	uint32_t a = sp->first[n], b = sp->first[n + 1];
	size_t nv = b - a, cap_t = 0, cap_e = 0;
	g->vertices = vgb_xcalloc(nv + 1, sizeof *g->vertices);
	struct vgn_tmap vmap, tmap;
	vgn_tmap_init(&vmap);
	vgn_tmap_init(&tmap);
	const struct vgn_event *in = &s->events[sp->inputs[n]];
	if (in->iid_hi || in->iid_lo)
		snprintf(g->iid, sizeof g->iid, "%016" PRIx64 "%016" PRIx64, in->iid_hi,
		         in->iid_lo);
	uint32_t prev = VGN_NONE;
	uint32_t *set_thread = NULL; /* graph thread -> the set's */
	for (uint32_t k = a; k < b; k++) {
		uint32_t ev = sp->events[k];
		const struct vgn_event *e = &s->events[ev];
		uint32_t gt = vgn_tmap_get(&tmap, e->thread, 0, 0);
		if (gt == VGN_NONE) {
			const struct vgn_thread *th = &s->threads[e->thread];
			const struct vgn_proc *pr = &s->procs[th->proc];
			VGN_GROW(g->threads, cap_t, g->nthreads + 1);
			set_thread = vgb_xrealloc(set_thread, cap_t, sizeof *set_thread);
			set_thread[g->nthreads] = e->thread;
			g->threads[g->nthreads] =
			    (struct vgn_gthread){str(g, s->hosts[pr->host].name),
			                         str(g, e->program),
			                         str(g, e->name ? e->name : th->name),
			                         pr->pid,
			                         th->tid,
			                         NULL,
			                         0};
			gt = (uint32_t)g->nthreads++;
			vgn_tmap_put(&tmap, e->thread, 0, 0, gt);
			prev = VGN_NONE;
		}
		uint32_t v = (uint32_t)g->nvertices++;
		const struct vgn_conn *cn = vgn_event_conn(s, ev);
		bool io = e->kind == VGN_SEND || e->kind == VGN_RECV;
		g->vertices[v] = (struct vgn_gvertex){gt,
		                                      e->kind,
		                                      e->cts,
		                                      e->ts,
		                                      io ? e->off : 0,
		                                      io ? e->len : 0,
		                                      s->nmatch[ev] > 0,
		                                      ev == sp->inputs[n],
		                                      str(g, e->text),
		                                      cn ? str(g, cn->local) : NULL,
		                                      cn ? str(g, cn->remote) : NULL,
		                                      str(g, e->program),
		                                      str(g, e->name),
		                                      io ? e->msg : 0};
		if (ev == sp->inputs[n])
			g->input = v;
		vgn_tmap_put(&vmap, ev, 0, 0, v);
		/* the thread ran from its previous event here if it stayed in this network */
		if (prev != VGN_NONE && sp->segment[sp->events[k - 1]] == sp->segment[ev]) {
			VGN_GROW(g->edges, cap_e, g->nedges + 1);
			g->edges[g->nedges++] =
			    (struct vgn_gedge){VGN_E_THREAD, prev, v, 0, false, 0, 0};
		}
		prev = v;
	}
	/* messages, from their sends */
	for (uint32_t k = a; k < b; k++) {
		uint32_t ev = sp->events[k];
		if (s->events[ev].kind != VGN_SEND)
			continue;
		for (uint32_t m = sp->msg_first[ev]; m < sp->msg_first[ev + 1]; m++) {
			const struct vgn_msg *msg = &s->msgs[sp->pair[m]];
			uint32_t to = vgn_tmap_get(&vmap, msg->recv, 0, 0);
			if (to == VGN_NONE)
				continue;
			VGN_GROW(g->edges, cap_e, g->nedges + 1);
			g->edges[g->nedges++] = (struct vgn_gedge){
			    VGN_E_MESSAGE,
			    vgn_tmap_get(&vmap, ev, 0, 0),
			    to,
			    msg->bytes,
			    vgn_event_host(s, ev) != vgn_event_host(s, msg->recv),
			    s->events[ev].off + msg->send_at,
			    s->events[msg->recv].off + msg->recv_at};
		}
	}
	/* creations: a thread that began in this network, from its creator's last vertex
	 * at or before its beginning (vertices are thread by thread, in time order) */
	uint32_t *vfirst = vgb_xcalloc(g->nthreads + 1, sizeof *vfirst);
	uint32_t *vend = vgb_xcalloc(g->nthreads + 1, sizeof *vend);
	for (uint32_t v = (uint32_t)g->nvertices; v-- > 0;)
		vfirst[g->vertices[v].thread] = v;
	for (uint32_t v = 0; v < g->nvertices; v++)
		vend[g->vertices[v].thread] = v + 1;
	for (uint32_t gt = 0; gt < g->nthreads; gt++) {
		uint32_t ev = sp->events[a + vfirst[gt]];
		uint32_t th = s->events[ev].thread, c = sp->creator[th];
		if (c == VGN_NONE || sp->thread_first[th] != ev)
			continue;
		uint32_t gc = vgn_tmap_get(&tmap, c, 0, 0);
		if (gc == VGN_NONE)
			continue;
		uint32_t lo = vfirst[gc], hi = vend[gc]; /* last vertex with ts <= */
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (g->vertices[mid].ts <= g->vertices[vfirst[gt]].ts)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == vfirst[gc])
			continue;
		VGN_GROW(g->edges, cap_e, g->nedges + 1);
		g->edges[g->nedges++] =
		    (struct vgn_gedge){VGN_E_SPAWN, lo - 1, vfirst[gt], 0, false, 0, 0};
	}
	/* user-defined states of each thread, clipped to its first .. last vertex here */
	for (uint32_t gt = 0; gt < g->nthreads; gt++) {
		const struct vgn_thread *th = &s->threads[set_thread[gt]];
		int64_t lo = g->vertices[vfirst[gt]].ts, hi = g->vertices[vend[gt] - 1].ts;
		size_t cap = 0;
		for (uint32_t i = th->state_first; i < th->state_first + th->state_n; i++) {
			int64_t from = s->states[i].cts;
			int64_t to = i + 1 < th->state_first + th->state_n ? s->states[i + 1].cts
			                                                   : INT64_MAX;
			from = from < lo ? lo : from;
			to = to > hi ? hi : to;
			if (to <= from)
				continue;
			struct vgn_gthread *x = &g->threads[gt];
			VGN_GROW(x->states, cap, x->nstates + 1);
			x->states[x->nstates++] =
			    (struct vgn_gstate){str(g, s->states[i].label), from, to};
		}
	}
	free(set_thread);
	free(vfirst);
	free(vend);
	vgn_tmap_free(&vmap);
	vgn_tmap_free(&tmap);
	return g;
}

static const char *const edge_names[] = {"thread", "message", "spawn"};

/* Strings from a trace may hold bytes that are not UTF-8: jansson refuses them. */
json_t *vgn_json_text(const char *s)
{
	json_t *j = json_string(s ? s : "");
	if (j)
		return j;
	size_t n = strlen(s);
	char *clean = vgb_xcalloc(n + 1, 1);
	for (size_t i = 0; i < n; i++)
		clean[i] = (unsigned char)s[i] < 0x80 && s[i] ? s[i] : '?';
	j = json_string(clean);
	free(clean);
	return j ? j : json_string("");
}

json_t *vgn_graph_to_json(const struct vgn_graph *g)
{
	int64_t start = g->nvertices ? g->vertices[g->input].ts : 0, end = start;
	for (size_t v = 0; v < g->nvertices; v++)
		if (g->vertices[v].ts > end)
			end = g->vertices[v].ts;
	json_t *threads = json_array(), *verts = json_array(), *edges = json_array(),
	       *unmatched = json_array();
	for (size_t t = 0; t < g->nthreads; t++) {
		const struct vgn_gthread *th = &g->threads[t];
		json_t *o = json_pack("{s:I,s:o,s:I,s:I,s:o,s:o}", "id", (json_int_t)t, "host",
		                      vgn_json_text(th->host), "pid", (json_int_t)th->pid, "tid",
		                      (json_int_t)th->tid, "program", vgn_json_text(th->program),
		                      "name", vgn_json_text(th->name));
		if (th->nstates) {
			json_t *states = json_array();
			for (size_t i = 0; i < th->nstates; i++)
				json_array_append_new(
				    states, json_pack("{s:o,s:I,s:I}", "state",
				                      vgn_json_text(th->states[i].label), "from",
				                      (json_int_t)th->states[i].from, "to",
				                      (json_int_t)th->states[i].to));
			json_object_set_new(o, "states", states);
		}
		json_array_append_new(threads, o);
	}
	for (size_t v = 0; v < g->nvertices; v++) {
		const struct vgn_gvertex *x = &g->vertices[v];
		const struct vgn_gthread *th = &g->threads[x->thread];
		json_t *o = json_pack("{s:I,s:s,s:I,s:o,s:I,s:I,s:o,s:I}", "id", (json_int_t)v,
		                      "kind", vgn_kind_name(x->kind), "thread",
		                      (json_int_t)x->thread, "host", vgn_json_text(th->host), "pid",
		                      (json_int_t)th->pid, "tid", (json_int_t)th->tid, "program",
		                      vgn_json_text(x->program ? x->program : th->program), "ts",
		                      (json_int_t)x->ts);
		if (x->name && *x->name)
			json_object_set_new(o, "name", vgn_json_text(x->name));
		if (x->rts != x->ts)
			json_object_set_new(o, "recorded_ts", json_integer((json_int_t)x->rts));
		if (x->kind == VGN_SEND || x->kind == VGN_RECV) {
			if (x->off != VGN_NO_OFF)
				json_object_set_new(o, "off", json_integer((json_int_t)x->off));
			json_object_set_new(o, "len", json_integer((json_int_t)x->len));
			json_object_set_new(o, "matched", json_boolean(x->matched));
			if (!x->matched)
				json_array_append_new(unmatched, json_integer((json_int_t)v));
			if (x->msg) {
				char hex[17];
				snprintf(hex, sizeof hex, "%016" PRIx64, x->msg);
				json_object_set_new(o, "msg", json_string(hex));
			}
		}
		if (x->input)
			json_object_set_new(o, "input", json_true());
		if (x->text && *x->text)
			json_object_set_new(o, "text", vgn_json_text(x->text));
		if (x->local) {
			json_object_set_new(o, "local", vgn_json_text(x->local));
			json_object_set_new(o, "remote", vgn_json_text(x->remote));
		}
		json_array_append_new(verts, o);
	}
	for (size_t e = 0; e < g->nedges; e++) {
		const struct vgn_gedge *x = &g->edges[e];
		json_t *o = json_pack("{s:s,s:I,s:I}", "kind", edge_names[x->kind], "from",
		                      (json_int_t)x->from, "to", (json_int_t)x->to);
		if (x->kind == VGN_E_MESSAGE) {
			json_object_set_new(o, "bytes", json_integer((json_int_t)x->bytes));
			json_object_set_new(o, "cross_host", json_boolean(x->cross_host));
			if (x->send_off != VGN_NO_OFF)
				json_object_set_new(o, "send_off",
				                    json_integer((json_int_t)x->send_off));
			if (x->recv_off != VGN_NO_OFF)
				json_object_set_new(o, "recv_off",
				                    json_integer((json_int_t)x->recv_off));
		}
		json_array_append_new(edges, o);
	}
	json_t *j =
	    json_pack("{s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:o,s:o}", "network", (json_int_t)g->id,
	              "input", (json_int_t)g->input, "start_ns", (json_int_t)start, "end_ns",
	              (json_int_t)end, "response_ns", (json_int_t)(end - start), "threads", threads,
	              "vertices", verts, "edges", edges, "unmatched", unmatched);
	if (g->iid[0])
		json_object_set_new(j, "iid", json_string(g->iid));
	return j;
}

/* ---- reading back ---- */

static int bad(char *err, size_t errsize, const char *path, const char *what, size_t i)
{
	snprintf(err, errsize, "%s: %s %zu is malformed (not a 'vigil net split' network?)", path,
	         what, i);
	return -1;
}

static const char *jstr(struct vgn_graph *g, const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? str(g, v) : NULL;
}

/* An offset of a file's, or VGN_NO_OFF when it has none (written before offsets were). */
static uint64_t opt_u64(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_integer(v) && json_integer_value(v) >= 0 ? (uint64_t)json_integer_value(v)
	                                                        : VGN_NO_OFF;
}

struct vgn_graph *vgn_graph_from_json(const json_t *j, const char *path, char *err, size_t errsize)
{
	const json_t *threads = json_object_get(j, "threads"),
	             *verts = json_object_get(j, "vertices"), *edges = json_object_get(j, "edges");
	if (!json_is_object(j) || !json_is_array(threads) || !json_is_array(verts) ||
	    !json_is_array(edges)) {
		snprintf(err, errsize,
		         "%s: not an interaction network (no threads, vertices, edges; a file "
		         "written by 'vigil net split' is expected)",
		         path);
		return NULL;
	}
	struct vgn_graph *g = graph_new();
	if (!g) {
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	g->id = (uint64_t)json_integer_value(json_object_get(j, "network"));
	const char *iid = json_string_value(json_object_get(j, "iid"));
	if (iid)
		snprintf(g->iid, sizeof g->iid, "%s", iid);
	g->nthreads = json_array_size(threads);
	g->nvertices = json_array_size(verts);
	g->nedges = json_array_size(edges);
	g->threads = vgb_xcalloc(g->nthreads + 1, sizeof *g->threads);
	g->vertices = vgb_xcalloc(g->nvertices + 1, sizeof *g->vertices);
	g->edges = vgb_xcalloc(g->nedges + 1, sizeof *g->edges);
	size_t i;
	const json_t *o;
	json_array_foreach(threads, i, o)
	{
		struct vgn_gthread *t = &g->threads[i];
		t->host = jstr(g, o, "host");
		t->program = jstr(g, o, "program");
		t->name = jstr(g, o, "name");
		if (!t->host || !t->program || !json_is_integer(json_object_get(o, "pid")) ||
		    !json_is_integer(json_object_get(o, "tid"))) {
			bad(err, errsize, path, "thread", i);
			goto fail;
		}
		if (!t->name)
			t->name = "";
		t->pid = json_integer_value(json_object_get(o, "pid"));
		t->tid = json_integer_value(json_object_get(o, "tid"));
		const json_t *states = json_object_get(o, "states"), *x;
		size_t k;
		t->states = vgb_xcalloc(json_array_size(states) + 1, sizeof *t->states);
		json_array_foreach(states, k, x)
		{
			struct vgn_gstate *st = &t->states[t->nstates++];
			st->label = jstr(g, x, "state");
			st->from = json_integer_value(json_object_get(x, "from"));
			st->to = json_integer_value(json_object_get(x, "to"));
			if (!st->label || !json_is_integer(json_object_get(x, "from")) ||
			    !json_is_integer(json_object_get(x, "to")) || st->to < st->from ||
			    (t->nstates > 1 && st->from < st[-1].to)) { /* in order, apart */
				bad(err, errsize, path, "thread state of thread", i);
				goto fail;
			}
		}
	}
	json_array_foreach(verts, i, o)
	{
		struct vgn_gvertex *v = &g->vertices[i];
		const char *kind = json_string_value(json_object_get(o, "kind"));
		json_int_t th = json_integer_value(json_object_get(o, "thread"));
		if (!kind || vgn_kind_parse(kind) < 0 ||
		    !json_is_integer(json_object_get(o, "ts")) || th < 0 ||
		    (size_t)th >= g->nthreads) {
			bad(err, errsize, path, "vertex", i);
			goto fail;
		}
		const json_t *msg = json_object_get(o, "msg"); /* 16 hex digits, or absent */
		const char *mh = json_string_value(msg);
		if (msg && (!mh || strlen(mh) != 16 || strspn(mh, "0123456789abcdef") != 16)) {
			bad(err, errsize, path, "msg of vertex", i);
			goto fail;
		}
		v->msg = mh ? strtoull(mh, NULL, 16) : 0;
		v->kind = vgn_kind_parse(kind);
		v->thread = (uint32_t)th;
		v->ts = json_integer_value(json_object_get(o, "ts"));
		v->rts = json_is_integer(json_object_get(o, "recorded_ts"))
		             ? json_integer_value(json_object_get(o, "recorded_ts"))
		             : v->ts;
		v->off = opt_u64(o, "off");
		v->len = (uint64_t)json_integer_value(json_object_get(o, "len"));
		v->matched = json_is_true(json_object_get(o, "matched"));
		v->input = json_is_true(json_object_get(o, "input"));
		v->text = jstr(g, o, "text");
		v->local = jstr(g, o, "local");
		v->remote = jstr(g, o, "remote");
		v->program = jstr(g, o, "program");
		if (!v->program)
			v->program = g->threads[th].program;
		v->name = jstr(g, o, "name");
		if (!v->name)
			v->name = "";
	}
	json_array_foreach(edges, i, o)
	{
		struct vgn_gedge *e = &g->edges[i];
		const char *kind = json_string_value(json_object_get(o, "kind"));
		json_int_t from = json_integer_value(json_object_get(o, "from"));
		json_int_t to = json_integer_value(json_object_get(o, "to"));
		int k = -1;
		for (int x = 0; kind && x < 3; x++)
			if (!strcmp(kind, edge_names[x]))
				k = x;
		if (k < 0 || from < 0 || to < 0 || (size_t)from >= g->nvertices ||
		    (size_t)to >= g->nvertices) {
			bad(err, errsize, path, "edge", i);
			goto fail;
		}
		*e = (struct vgn_gedge){k,
		                        (uint32_t)from,
		                        (uint32_t)to,
		                        (uint64_t)json_integer_value(json_object_get(o, "bytes")),
		                        json_is_true(json_object_get(o, "cross_host")),
		                        opt_u64(o, "send_off"),
		                        opt_u64(o, "recv_off")};
	}
	/* Reports and pictures subtract times: a network spans at most 2^62 ns (146 years),
	 * so every difference of two of its times fits (a damaged or forged file would
	 * otherwise overflow). */
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t k = 0; k < g->nvertices; k++) {
		lo = g->vertices[k].ts < lo ? g->vertices[k].ts : lo;
		hi = g->vertices[k].ts > hi ? g->vertices[k].ts : hi;
	}
	if (g->nvertices && (uint64_t)hi - (uint64_t)lo > (UINT64_C(1) << 62)) {
		snprintf(err, errsize,
		         "%s: vertex times from %" PRId64 " to %" PRId64
		         " ns span more than 146 years: not a network 'vigil net split' wrote",
		         path, lo, hi);
		goto fail;
	}
	json_int_t in = json_integer_value(json_object_get(j, "input"));
	g->input = in >= 0 && (size_t)in < g->nvertices ? (uint32_t)in : 0;
	return g;
fail:
	vgn_graph_free(g);
	return NULL;
}

struct vgn_graph *vgn_graph_load(const char *path, char *err, size_t errsize)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	if (!j) {
		if (je.line > 0)
			snprintf(err, errsize, "%s:%d:%d: %s", path, je.line, je.column, je.text);
		else
			snprintf(err, errsize, "%s: %s", path, je.text);
		return NULL;
	}
	struct vgn_graph *g = vgn_graph_from_json(j, path, err, errsize);
	json_decref(j);
	return g;
}
