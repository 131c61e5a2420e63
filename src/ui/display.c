/* The Display tab's server side (docs/ui.md): vigil ui --display D.vgd loads the display
 * specification (src/display) against the trace's database once, at start. When it does
 * not load, its errors are printed on stderr as vigil display prints them and kept, so
 * that the page shows the same text; the timeline is served all the same. Routes:
 *   /api/display?at=T       the scene at T (ns since the trace's first event)
 *   /api/display/changes    the span and the instants at which the display changes, or
 *                           the errors of a display that did not load (200, as a query's
 *                           errors are; /api/display answers them 422) */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "display/display.h"
#include "ui/ui.h"

void vgu_display_open(struct vgu_app *a)
{
	if (!a->display)
		return;
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	a->vgd = vgd_load(a->display, a->db, mem ? mem : stderr);
	if (mem)
		fclose(mem);
	if (!a->vgd) {
		if (text)
			fputs(text, stderr);
		fprintf(stderr,
		        "vigil ui: %s: not displayed (errors above); the timeline is served, the "
		        "Display tab shows the errors\n",
		        a->display);
		a->display_errors = text ? text : strdup("the display could not be loaded");
		return;
	}
	free(text);
}

void vgu_display_close(struct vgu_app *a)
{
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

void vgu_api_display(struct vgu_app *a, const char *at_text, struct vgu_reply *r)
{
	if (!given(a, r))
		return;
	if (!a->vgd) /* no scene to give */
		return vgu_reply_json(r, 422, errors_body(a));
	int64_t first, last;
	vgd_span(a->vgd, &first, &last);
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
	char *scene = vgd_scene_json(a->vgd, first + at);
	if (!scene)
		return vgu_reply_error(r, 503, "out of memory");
	r->status = 200;
	r->type = "application/json";
	r->body = scene;
	r->len = strlen(scene);
}

void vgu_api_display_changes(struct vgu_app *a, struct vgu_reply *r)
{
	if (!given(a, r))
		return;
	if (!a->vgd) /* what the page asks first: the errors are an answer, as a query's are */
		return vgu_reply_json(r, 200, errors_body(a));
	int64_t first, last;
	vgd_span(a->vgd, &first, &last);
	size_t n;
	const int64_t *t = vgd_changes(a->vgd, &n);
	json_t *list = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, json_integer((json_int_t)(t[i] - first)));
	vgu_reply_json(r, 200,
	               json_pack("{s:s,s:I,s:I,s:I,s:o}", "file", a->display, "first",
	                         (json_int_t)first, "last", (json_int_t)last, "span",
	                         (json_int_t)(last - first), "changes", list));
}
