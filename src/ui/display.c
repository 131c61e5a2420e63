/* The Display tab's server side (docs/ui.md): vigil ui --display D.vgd loads the display
 * specification (src/display) against the trace's database once, at start. When it does
 * not load, its errors are printed on stderr as vigil display prints them and kept, so
 * that the page shows the same text; the timeline is served all the same. Routes:
 *   /api/display?at=T       the scene at T (ns since the trace's first event)
 *   /api/display/changes    the span and the instants at which the display changes, in a
 *                           window (from, to, limit), or the errors of a display that did
 *                           not load (200, as a query's errors are; /api/display: 422)
 * Live (vigil ui --watch --display): while the subject runs, the display is loaded again
 * over the trace recorded so far (a snapshot, at most every VGU_SNAPSHOT_NS), as vigil
 * watch reads it; once the subject has ended, over its whole trace. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/search.h"
#include "display/display.h"
#include "lang/lang.h"
#include "trace/source.h"
#include "ui/ui.h"

#define VGU_SNAPSHOT_NS 250000000 /* live: the display is rebuilt at most this often */

/* Live: the display over the trace recorded so far. */
struct vgu_snapshot {
	struct vgt_trace *trace;
	struct vgq_database *db;
	struct vgd_display *vgd;
	int64_t built; /* monotonic ns */
};

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void snapshot_free(struct vgu_snapshot *s)
{
	if (!s)
		return;
	vgd_free(s->vgd);
	vgq_database_free(s->db);
	if (s->trace)
		vgt_close(s->trace);
	free(s);
}

/* Keeps a's errors (printed on stderr first) when text is not a display's. */
static void keep_errors(struct vgu_app *a, char *text)
{
	if (text)
		fputs(text, stderr);
	if (!a->exporting)
		fprintf(stderr,
		        "vigil ui: %s: not displayed (errors above); the timeline is served, the "
		        "Display tab shows the errors\n",
		        a->display);
	a->display_errors = text ? text : strdup("the display could not be loaded");
}

bool vgu_display_check_model(struct vgu_app *a, const char *sensors)
{
	if (!a->display)
		return false;
	int nerr = 0;
	struct vgl_model *m = vgl_load(sensors, stderr, &nerr);
	if (!m) /* vigil watch reports it again, and runs nothing */
		return false;
	struct vgq_database *schema = vgq_database_from_model(m);
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	struct vgd_display *d = schema ? vgd_load(a->display, schema, mem ? mem : stderr) : NULL;
	if (mem)
		fclose(mem);
	bool ok = d != NULL;
	vgd_free(d);
	vgq_database_free(schema);
	vgl_free(m);
	if (ok)
		free(text);
	else
		keep_errors(a, text);
	return ok;
}

/* Live, the subject running: the display over what it has recorded so far, rebuilt when
 * the last one is older than VGU_SNAPSHOT_NS; NULL while nothing it shows is recorded. */
static const struct vgd_display *snapshot(struct vgu_app *a)
{
	struct vgu_snapshot *s = a->snapshot;
	int64_t now = mono_ns();
	if (s && now - s->built < VGU_SNAPSHOT_NS)
		return s->vgd;
	const char *path = vgu_live_dir(a);
	char err[512];
	struct vgt_trace *tr = vgt_open_readable(&path, 1, err, sizeof err);
	if (!tr)
		return s ? s->vgd : NULL;
	struct vgu_snapshot *n = calloc(1, sizeof *n);
	if (!n) {
		vgt_close(tr);
		return s ? s->vgd : NULL;
	}
	n->trace = tr;
	struct vgq_build_options o = {.ends_without_begin = true};
	n->db = vgq_database_build_opts(tr, &o);
	/* before the subject registered its sensors a relation may be missing: not yet */
	FILE *devnull = fopen("/dev/null", "w");
	n->vgd = n->db && devnull ? vgd_load(a->display, n->db, devnull) : NULL;
	if (devnull)
		fclose(devnull);
	n->built = now;
	if (!n->vgd && s) { /* keep the last good one, try again later */
		snapshot_free(n);
		s->built = now;
		return s->vgd;
	}
	snapshot_free(s);
	a->snapshot = n;
	return n->vgd;
}

void vgu_display_open(struct vgu_app *a)
{
	snapshot_free(a->snapshot);
	a->snapshot = NULL;
	if (!a->display || a->display_errors)
		return;
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	a->vgd = vgd_load(a->display, a->db, mem ? mem : stderr);
	if (mem)
		fclose(mem);
	if (!a->vgd)
		return keep_errors(a, text);
	free(text);
}

void vgu_display_close(struct vgu_app *a)
{
	snapshot_free(a->snapshot);
	a->snapshot = NULL;
	vgd_free(a->vgd);
	a->vgd = NULL;
	free(a->display_errors);
	a->display_errors = NULL;
}

/* "FILE:LINE:COL: error: MESSAGE" (or "FILE: error: WHY") and the lines under it (the
 * source line and its caret), as vgd_load printed them: one object per error. */
static json_t *errors_json(const char *text)
{
	json_t *list = json_array();
	json_t *cur = NULL;
	for (const char *p = text; p && *p;) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		const char *mark = memmem(p, n, ": error: ", 9);
		if (mark && *p != ' ' && *p != '\t') {
			/* the place: FILE, then :LINE:COL when there */
			size_t flen = (size_t)(mark - p);
			unsigned line = 0, col = 0;
			const char *c2 = memrchr(p, ':', flen);
			const char *c1 = c2 ? memrchr(p, ':', (size_t)(c2 - p)) : NULL;
			if (c1 && sscanf(c1, ":%u:%u", &line, &col) == 2 && line && col)
				flen = (size_t)(c1 - p);
			else
				line = col = 0;
			cur = json_pack("{s:s%,s:i,s:i,s:s%,s:s%}", "file", p, flen, "line",
			                (int)line, "col", (int)col, "message", mark + 9,
			                n - (size_t)(mark + 9 - p), "text", p, n);
			if (cur)
				json_array_append_new(list, cur);
		} else if (cur) {
			const char *t = json_string_value(json_object_get(cur, "text"));
			char *joined;
			if (asprintf(&joined, "%s\n%.*s", t, (int)n, p) >= 0) {
				json_object_set_new(cur, "text", json_string(joined));
				free(joined);
			}
		}
		p = eol ? eol + 1 : NULL;
	}
	return list;
}

/* The display's errors: {"error", "file", "errors": [{file, line, col, message, text}]}. */
static json_t *errors_body(const struct vgu_app *a)
{
	json_t *errors = errors_json(a->display_errors);
	char msg[512];
	snprintf(msg, sizeof msg, "%s: not displayed (%zu error%s)", a->display,
	         json_array_size(errors), json_array_size(errors) == 1 ? "" : "s");
	json_t *body =
	    json_pack("{s:s,s:s,s:o}", "error", msg, "file", a->display, "errors", errors);
	/* a name that is not UTF-8 */
	return body ? body
	            : json_pack("{s:s,s:[]}", "error",
	                        "the display specification has errors (on vigil ui's stderr)",
	                        "errors");
}

/* No display: false with a 404 reply. */
static bool given(struct vgu_app *a, struct vgu_reply *r)
{
	if (!a->display)
		vgu_reply_error(r, 404,
		                "no display specification (vigil ui TRACE --display D.vgd)");
	return a->display != NULL;
}

/* The display to answer from: the loaded one, or live the snapshot (*live set). */
static const struct vgd_display *current(struct vgu_app *a, bool *live)
{
	*live = vgu_live_waiting(a);
	return *live ? snapshot(a) : a->vgd;
}

/* An optional integer argument; false with a 400 reply when it is not one. */
static bool int_arg(vgu_arg_fn arg, void *ctx, const char *key, long long *v, struct vgu_reply *r)
{
	const char *text = arg(ctx, key);
	if (!text)
		return true;
	char *end;
	errno = 0;
	long long x = strtoll(text, &end, 10);
	if (errno || end == text || *end) {
		vgu_reply_error(r, 400, "argument '%s': '%.60s' is not an integer", key, text);
		return false;
	}
	*v = x;
	return true;
}

void vgu_api_display(struct vgu_app *a, const char *at_text, struct vgu_reply *r)
{
	if (!given(a, r))
		return;
	if (a->display_errors) /* no scene to give */
		return vgu_reply_json(r, 422, errors_body(a));
	bool live;
	const struct vgd_display *d = current(a, &live);
	if (!d)
		return vgu_reply_error(r, 409,
		                       "the subject has not recorded what the display shows "
		                       "yet (/api/display/changes says when it has)");
	int64_t first, last;
	vgd_span(d, &first, &last);
	if (!at_text)
		return vgu_reply_error(r, 400, "missing argument 'at' (ns since the first event)");
	char *end;
	errno = 0;
	long long at = strtoll(at_text, &end, 10);
	if (errno || end == at_text || *end)
		return vgu_reply_error(r, 400, "argument 'at': '%.60s' is not an integer", at_text);
	if (at < 0 || at > last - first)
		return vgu_reply_error(r, 400,
		                       "'at' must be within the trace: 0..%" PRId64
		                       " ns since its first event, not %lld",
		                       last - first, at);
	char *scene = vgd_scene_json(d, first + at);
	if (!scene)
		return vgu_reply_error(r, 503, "out of memory");
	r->status = 200;
	r->type = "application/json";
	r->body = scene;
	r->len = strlen(scene);
}

void vgu_api_display_changes(struct vgu_app *a, vgu_arg_fn arg, void *ctx, struct vgu_reply *r)
{
	if (!given(a, r))
		return;
	if (a->display_errors) /* what the page asks first: the errors are an answer, as a
	                        * query's are */
		return vgu_reply_json(r, 200, errors_body(a));
	long long from = 0, to = INT64_MAX / 4, limit = VGU_CHANGES_LIMIT;
	if (!int_arg(arg, ctx, "from", &from, r) || !int_arg(arg, ctx, "to", &to, r) ||
	    !int_arg(arg, ctx, "limit", &limit, r))
		return;
	const char *take = arg(ctx, "take");
	if (take && strcmp(take, "first") && strcmp(take, "last"))
		return vgu_reply_error(r, 400, "'take' is first or last, not '%.40s'", take);
	bool tail = take && !strcmp(take, "last");
	if (limit < 0 || limit > VGU_CHANGES_MAX)
		return vgu_reply_error(r, 400, "'limit' must be 0..%d, not %lld", VGU_CHANGES_MAX,
		                       limit);
	if (from < -(INT64_MAX / 4) || to > INT64_MAX / 4)
		return vgu_reply_error(r, 400, "'from' and 'to' are out of range");
	if (to < from)
		return vgu_reply_error(r, 400, "'to' (%lld) is before 'from' (%lld)", to, from);
	bool live;
	const struct vgd_display *d = current(a, &live);
	if (!d) /* live, nothing shown recorded yet (or ever, when the run's trace is bad) */
		return vgu_reply_json(r, 200,
		                      json_pack("{s:s,s:b,s:b,s:i,s:i,s:i,s:[],s:b}", "file",
		                                a->display, "live", !vgu_live_failed(a), "waiting",
		                                1, "span", 0, "count", 0, "index", 0, "changes",
		                                "truncated", 0));
	int64_t first, last;
	vgd_span(d, &first, &last);
	size_t n;
	const int64_t *t = vgd_changes(d, &n);
	/* the window [from, to], relative to the first event, by binary search */
	size_t lo = vgb_first_at_least(t, n, first + from);
	size_t hi = to >= INT64_MAX / 4 ? n : vgb_first_at_least(t, n, first + to + 1);
	if (hi < lo)
		hi = lo;
	size_t k = hi - lo > (size_t)limit ? (size_t)limit : hi - lo;
	size_t b = tail ? hi - k : lo; /* the first one answered */
	json_t *list = json_array();
	for (size_t i = b; i < b + k; i++)
		json_array_append_new(list, json_integer((json_int_t)(t[i] - first)));
	json_t *o = json_pack(
	    "{s:s,s:I,s:I,s:I,s:I,s:I,s:o,s:b,s:b}", "file", a->display, "first", (json_int_t)first,
	    "last", (json_int_t)last, "span", (json_int_t)(last - first), "count", (json_int_t)n,
	    "index", (json_int_t)b, "changes", list, "truncated", k < hi - lo, "live", live);
	if (k < hi - lo) /* where the next window starts (tail: ends) */
		json_object_set_new(
		    o, tail ? "prev" : "next",
		    json_integer((json_int_t)((tail ? t[hi - k - 1] : t[lo + k]) - first)));
	vgu_reply_json(r, 200, o);
}
