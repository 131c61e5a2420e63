/* The event source (trace/source.h): opening with the readable check, merged reading,
 * event classes and the readers' field slots. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "source.h"

struct vgt_source {
	struct vgt_trace *trace;
	bool owned;                             /* opened here: closed with the source */
	struct vgt_merge *merge;                /* opened at the first read */
	unsigned threads;                       /* 0: vgt_decode_threads() */
	const bool *skip;                       /* vgt_source_skip_payloads */
	const struct vgt_class_window *windows; /* vgt_source_skip_outside */
};

struct vgt_trace *vgt_open_readable(const char *const *paths, size_t npaths, char *err,
                                    size_t errsize)
{
	struct vgt_trace *t = vgt_open(paths, npaths, err, errsize);
	if (t && !vgt_readable_or_say(t, paths[0], err, errsize)) {
		vgt_close(t);
		return NULL;
	}
	return t;
}

bool vgt_readable_or_say(const struct vgt_trace *t, const char *path, char *err, size_t errsize)
{
	if (vgt_any_readable(t))
		return true;
	snprintf(err, errsize, "%s: no process image has readable metadata (see vigil dump)", path);
	return false;
}

struct vgt_source *vgt_source_open(const char *const *paths, size_t npaths, unsigned flags,
                                   char *err, size_t errsize)
{
	struct vgt_trace *t = flags & VGT_SOURCE_UNREADABLE_OK
	                          ? vgt_open(paths, npaths, err, errsize)
	                          : vgt_open_readable(paths, npaths, err, errsize);
	if (!t)
		return NULL;
	struct vgt_source *s = vgt_source_of(t);
	s->owned = true;
	return s;
}

struct vgt_source *vgt_source_of(struct vgt_trace *t)
{
	struct vgt_source *s = vgt__xcalloc(1, sizeof *s);
	s->trace = t;
	return s;
}

void vgt_source_close(struct vgt_source *s)
{
	if (!s)
		return;
	if (s->merge)
		vgt_merge_close(s->merge);
	if (s->owned)
		vgt_close(s->trace);
	free(s);
}

struct vgt_trace *vgt_source_trace(const struct vgt_source *s)
{
	return s->trace;
}

bool vgt_source_readable(const struct vgt_source *s)
{
	return vgt_any_readable(s->trace);
}

static struct vgt_merge *merge(struct vgt_source *s)
{
	if (!s->merge)
		s->merge = vgt_merge_open_windows(
		    s->trace, s->threads ? s->threads : vgt_decode_threads(), s->skip, s->windows);
	return s->merge;
}

const struct vgt_event *vgt_source_next(struct vgt_source *s)
{
	return vgt_merge_next(merge(s));
}

int64_t vgt_source_first_ts(struct vgt_source *s)
{
	return vgt_merge_first_ts(merge(s));
}

void vgt_source_window(struct vgt_source *s, int64_t from, int64_t to)
{
	vgt_merge_window(merge(s), from, to);
}

void vgt_source_decode_threads(struct vgt_source *s, unsigned threads)
{
	s->threads = threads ? threads : 1;
}

void vgt_source_skip_payloads(struct vgt_source *s, const bool *by_class)
{
	s->skip = by_class;
}

void vgt_source_skip_outside(struct vgt_source *s, const struct vgt_class_window *by_class)
{
	s->windows = by_class;
}

size_t vgt_source_stream_count(const struct vgt_source *s)
{
	return s->trace->nstreams;
}

struct vgt_cursor *vgt_source_stream(struct vgt_source *s, size_t i)
{
	struct vgt_cursor *c = vgt_cursor_open(s->trace, i);
	if (!c)
		return NULL;
	c->skip = s->skip;
	if (s->windows)
		vgt_cursor_windows(c, s->windows, s->trace->nclasses);
	return c;
}

struct vgt_split *vgt_source_split(struct vgt_source *s, size_t i, size_t parts)
{
	struct vgt_split *sp = vgt__split_open(s->trace, i, parts);
	if (sp)
		vgt__split_windows(sp, s->skip, s->windows, s->trace->nclasses);
	return sp;
}

/* ---- classes and slots ---- */

size_t vgt_class_count(const struct vgt_trace *t)
{
	return t->nclasses;
}

const struct vgt_event_type *vgt_class_at(const struct vgt_trace *t, size_t i)
{
	return i < t->nclasses ? t->classes[i] : NULL;
}

struct vgt_fields {
	const struct vgt_trace *t;
	char **names;
	size_t nnames;
	size_t nclasses; /* rows resolved */
	int *slots;      /* nclasses rows of nnames */
};

/* Rows for the trace's classes from f->nclasses on (a followed trace gains classes). */
static void resolve_rows(struct vgt_fields *f)
{
	size_t from = f->nclasses, n = f->t->nclasses;
	f->slots = vgt__xrealloc(f->slots, n * f->nnames + 1, sizeof *f->slots);
	for (size_t c = from; c < n; c++)
		vgt_class_slots(f->t->classes[c], (const char *const *)f->names, f->nnames,
		                &f->slots[c * f->nnames]);
	f->nclasses = n;
}

struct vgt_fields *vgt_fields_new(const struct vgt_trace *t, const char *const *names,
                                  size_t nnames)
{
	struct vgt_fields *f = vgt__xcalloc(1, sizeof *f);
	f->t = t;
	f->nnames = nnames;
	f->names = vgt__xcalloc(nnames + 1, sizeof *f->names);
	for (size_t k = 0; k < nnames; k++)
		f->names[k] = vgt__xstrdup(names[k]);
	resolve_rows(f);
	return f;
}

void vgt_class_slots(const struct vgt_event_type *type, const char *const *names, size_t nnames,
                     int *slots)
{
	for (size_t k = 0; k < nnames; k++)
		slots[k] = vgt_type_field(type, names[k]);
}

void vgt_fields_free(struct vgt_fields *f)
{
	if (!f)
		return;
	free(f->slots);
	for (size_t k = 0; k < f->nnames; k++)
		free(f->names[k]);
	free(f->names);
	free(f);
}

const int *vgt_fields_slots(struct vgt_fields *f, const struct vgt_event_type *type)
{
	if (type->class_id >= f->nclasses) /* a class the followed trace gained since */
		resolve_rows(f);
	if (type->class_id >= f->nclasses) { /* not a class of f's trace: a caller's bug */
		fprintf(stderr,
		        "vigil: internal error: event class %" PRIu32
		        " is not one of the trace's %zu\n",
		        type->class_id, f->nclasses);
		abort();
	}
	return &f->slots[(size_t)type->class_id * f->nnames];
}
