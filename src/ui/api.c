/* The JSON API (docs/ui.md): every answer is JSON, a bad request 4xx with
 * {"error": "..."}. Arguments are URL query arguments (GET). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui/ui.h"

void vgu_reply_json(struct vgu_reply *r, unsigned status, json_t *body)
{
	r->status = status;
	r->body = json_dumps(body, JSON_COMPACT);
	r->len = r->body ? strlen(r->body) : 0;
	r->type = "application/json";
	json_decref(body);
}

void vgu_reply_error(struct vgu_reply *r, unsigned status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	vgu_reply_json(r, status, json_pack("{s:s}", "error", msg));
}

/* An integer argument; false with a 400 reply when present but not a number. */
static bool int_arg(vgu_arg_fn arg, void *ctx, const char *key, int64_t *v, bool required,
                    struct vgu_reply *r)
{
	const char *s = arg(ctx, key);
	if (!s) {
		if (required)
			vgu_reply_error(r, 400, "missing argument '%s'", key);
		return !required;
	}
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno || end == s || *end) {
		vgu_reply_error(r, 400, "argument '%s': '%.60s' is not an integer", key, s);
		return false;
	}
	*v = x;
	return true;
}

bool vgu_int_arg(vgu_arg_fn arg, void *ctx, const char *key, int64_t *v, bool required,
                 struct vgu_reply *r)
{
	return int_arg(arg, ctx, key, v, required, r);
}

static void api_relations(struct vgu_app *a, struct vgu_reply *r)
{
	json_t *list = json_array();
	for (size_t i = 0; i < a->db->nrelations; i++)
		json_array_append_new(list, vgu_relation_head(a->db->relations[i]));
	json_t *paths = json_array();
	for (size_t i = 0; i < a->npaths; i++)
		json_array_append_new(paths, json_string(a->paths[i]));
	/* first_digits: the page's numbers are doubles, which absolute ns overflow */
	char first[32];
	snprintf(first, sizeof first, "%" PRId64, a->db->first);
	vgu_reply_json(r, 200,
	               json_pack("{s:o,s:o,s:I,s:s,s:I,s:I,s:o,s:b,s:b}", "relations", list,
	                         "traces", paths, "first", (json_int_t)a->db->first, "first_digits",
	                         first, "last", (json_int_t)a->db->last, "events",
	                         (json_int_t)a->db->events, "damage", vgu_damage_json(a), "display",
	                         a->display != NULL, "live", a->live != NULL));
}

static void api_events(struct vgu_app *a, vgu_arg_fn arg, void *ctx, struct vgu_reply *r)
{
	/* times relative to the trace's first event (the page's numbers stay exact) */
	int64_t from = 0, to = a->db->last - a->db->first, px = 1000, row0 = 0,
	        nrows = (int64_t)a->tl.nrows;
	if (!int_arg(arg, ctx, "from", &from, false, r) ||
	    !int_arg(arg, ctx, "to", &to, false, r) || !int_arg(arg, ctx, "px", &px, false, r) ||
	    !int_arg(arg, ctx, "row", &row0, false, r) ||
	    !int_arg(arg, ctx, "rows", &nrows, false, r))
		return;
	if (to < from)
		return vgu_reply_error(r, 400, "'to' (%" PRId64 ") is before 'from' (%" PRId64 ")",
		                       to, from);
	if (px < 1 || px > 10000)
		return vgu_reply_error(r, 400, "'px' must be 1..10000, not %" PRId64, px);
	if (row0 < 0 || nrows < 0)
		return vgu_reply_error(r, 400, "'row' and 'rows' must not be negative");
	if (from < -(INT64_MAX / 4) || to > INT64_MAX / 4)
		return vgu_reply_error(r, 400, "'from' and 'to' are out of range");
	r->status = 200;
	r->type = "application/json";
	r->body = vgu_window_json(a, a->db->first + from, a->db->first + to, (unsigned)px,
	                          (size_t)row0, (size_t)nrows, &r->len);
}

static void api_item(struct vgu_app *a, vgu_arg_fn arg, void *ctx, struct vgu_reply *r)
{
	int64_t row, i;
	if (!int_arg(arg, ctx, "row", &row, true, r) || !int_arg(arg, ctx, "i", &i, true, r))
		return;
	if (row < 0 || (size_t)row >= a->tl.nrows)
		return vgu_reply_error(r, 404, "no row %" PRId64, row);
	const struct vgu_row *w = &a->tl.rows[row];
	if (w->rel) {
		if (i < 0 || (size_t)i >= w->rel->ntuples)
			return vgu_reply_error(r, 404, "no tuple %" PRId64 " in %s", i,
			                       w->rel->name);
		return vgu_reply_json(r, 200, vgu_tuple_json(w->rel, (size_t)i, a->db->first));
	}
	if (i < 0 || (size_t)i >= a->tl.nevents)
		return vgu_reply_error(r, 404, "no event %" PRId64, i);
	json_t *o = vgu_event_json(a, (size_t)i);
	if (!o)
		return vgu_reply_error(r, 410, "event %" PRId64 " is no longer in its stream", i);
	vgu_reply_json(r, 200, o);
}

/* Sensors (event types) and rows whose name holds the text, case-insensitively. */
static void api_search(struct vgu_app *a, vgu_arg_fn arg, void *ctx, struct vgu_reply *r)
{
	const char *q = arg(ctx, "q");
	if (!q || !*q)
		return vgu_reply_error(r, 400, "missing argument 'q'");
	json_t *sensors = json_array(), *rows = json_array();
	for (size_t i = 0; i < a->tl.ntypes; i++) {
		const struct vgt_event_type *t = a->tl.types[i];
		if (!strcasestr(t->name, q) && !(t->relation && strcasestr(t->relation, q)))
			continue;
		/* where it first happens, row by row */
		json_t *where = json_array();
		for (size_t ri = 0; ri < a->tl.nbase; ri++) {
			const struct vgu_row *w = &a->tl.rows[ri];
			if (w->rel)
				continue;
			for (size_t k = 0; k < w->n; k++)
				if (a->tl.events[w->ref[k]].type == i) {
					json_array_append_new(
					    where,
					    json_pack("[I,I,I]", (json_int_t)ri,
					              (json_int_t)(w->from[k] - a->db->first),
					              (json_int_t)w->ref[k]));
					break;
				}
		}
		json_array_append_new(sensors,
		                      json_pack("{s:s,s:I,s:o}", "name", t->name, "count",
		                                (json_int_t)a->tl.type_counts[i], "first", where));
	}
	for (size_t ri = 0; ri < a->tl.nrows; ri++) {
		const struct vgu_row *w = &a->tl.rows[ri];
		if (strcasestr(w->label, q) || strcasestr(w->group, q))
			json_array_append_new(rows, json_integer((json_int_t)ri));
	}
	vgu_reply_json(r, 200, json_pack("{s:o,s:o}", "sensors", sensors, "rows", rows));
}

void vgu_api(struct vgu_app *a, const char *path, vgu_arg_fn arg, void *ctx, struct vgu_reply *r)
{
	/* the analysis views: their own routes (models.c, nets.c); the network browser's
	 * traces, when open, answer the timeline's */
	if (a->models) {
		struct vgu_app *t = vgu_models_timeline(a, arg, ctx); /* ?run=R */
		if (t && strcmp(path, "/api/view") && strncmp(path, "/api/model/", 11))
			return vgu_api(t, path, arg, ctx, r);
		return vgu_api_models(a, path, arg, ctx, r);
	}
	if (a->nets && (vgu_nets_route(path) || !a->trace))
		return vgu_api_nets(a, path, arg, ctx, r);
	if (!strcmp(path, "/api/live")) {
		int64_t from = 0;
		if (!int_arg(arg, ctx, "from", &from, false, r))
			return;
		if (from < 0)
			return vgu_reply_error(r, 400, "'from' must not be negative");
		return vgu_api_live(a, (size_t)from, r);
	}
	if (!strcmp(path, "/api/display")) /* live too: over the trace so far */
		return vgu_api_display(a, arg(ctx, "at"), r);
	if (!strcmp(path, "/api/display/changes"))
		return vgu_api_display_changes(a, arg, ctx, r);
	if (vgu_live_waiting(a)) { /* live, the subject still running: no trace yet */
		if (!strcmp(path, "/api/relations"))
			return vgu_reply_json(r, 200,
			                      json_pack("{s:[],s:[],s:i,s:[],s:b,s:b}", "relations",
			                                "traces", "events", 0, "damage", "display",
			                                a->display != NULL, "live", 1));
		return vgu_reply_error(r, 409,
		                       "the subject still runs: its trace opens when it ends "
		                       "(/api/live has the answers so far)");
	}
	if (!strcmp(path, "/api/relations"))
		return api_relations(a, r);
	if (!strcmp(path, "/api/rows"))
		return vgu_reply_json(r, 200, vgu_rows_json(a));
	if (!strcmp(path, "/api/events"))
		return api_events(a, arg, ctx, r);
	if (!strcmp(path, "/api/item"))
		return api_item(a, arg, ctx, r);
	if (!strcmp(path, "/api/search"))
		return api_search(a, arg, ctx, r);
	if (!strcmp(path, "/api/query") || !strcmp(path, "/api/explain")) {
		const char *q = arg(ctx, "q");
		if (!q)
			return vgu_reply_error(r, 400, "missing argument 'q' (the statements)");
		if (path[5] == 'q')
			return vgu_api_query(a, q, arg(ctx, "format"), r);
		return vgu_api_explain(a, q, r);
	}
	vgu_reply_error(r, 404, "no API route %.100s", path);
}
