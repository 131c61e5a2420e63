/* The timeline's rows and their level-of-detail answers.
 *
 * Rows of the trace: one per thread of each process (events as marks, found again by
 * stream and offset when clicked), then one per key of each interval, state and entity
 * relation (the entity's name, or the first attribute: RunningOn by process), as bars.
 * A window [t0, t1] at px buckets answers each row with its items when it has at most px
 * of them there, else with per-bucket count, first and last time, found by binary search
 * on the sorted starts (O(px log n) per row, whatever the trace's size). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/search.h"
#include "query/output.h"
#include "ui/ui.h"

#define MAX_KEYS 64 /* rows per relation; the rest share one "(other)" row */

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	p = realloc(p, c * size);
	if (!p) {
		fputs("vigil ui: out of memory\n", stderr);
		abort();
	}
	*cap = c;
	return p;
}

static struct vgu_row *new_row(struct vgu_timeline *tl, char *group, char *label, const char *kind)
{
	tl->rows = grow(tl->rows, &tl->caprows, tl->nrows + 1, sizeof *tl->rows);
	struct vgu_row *r = &tl->rows[tl->nrows++];
	memset(r, 0, sizeof *r);
	r->group = group;
	r->label = label;
	r->kind = strdup(kind);
	return r;
}

static void row_push(struct vgu_row *r, int64_t from, const int64_t *to, uint64_t ref, int cls)
{
	size_t cap = r->cap;
	if (r->n + 1 > cap) {
		size_t c = cap;
		if (cls >= 0) {
			c = cap;
			r->cls = grow(r->cls, &c, r->n + 1, sizeof *r->cls);
		}
		c = cap;
		r->from = grow(r->from, &c, r->n + 1, sizeof *r->from);
		if (to) {
			c = cap;
			r->to = grow(r->to, &c, r->n + 1, sizeof *r->to);
			c = cap;
			r->maxto = grow(r->maxto, &c, r->n + 1, sizeof *r->maxto);
		}
		r->ref = grow(r->ref, &cap, r->n + 1, sizeof *r->ref);
		r->cap = cap;
	}
	r->from[r->n] = from;
	if (to) {
		r->to[r->n] = *to;
		int64_t prev = r->n ? r->maxto[r->n - 1] : INT64_MIN;
		r->maxto[r->n] = *to > prev ? *to : prev;
	}
	if (cls >= 0)
		r->cls[r->n] = (uint8_t)cls;
	r->ref[r->n++] = ref;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s;
	if (vasprintf(&s, fmt, ap) < 0) {
		fputs("vigil ui: out of memory\n", stderr);
		abort();
	}
	va_end(ap);
	return s;
}

static uint32_t type_index(struct vgu_timeline *tl, const struct vgt_event_type *t)
{
	/* Types are few; the last one found is usually the next one asked. */
	static size_t last;
	if (last < tl->ntypes && tl->types[last] == t)
		return (uint32_t)last;
	for (size_t i = 0; i < tl->ntypes; i++)
		if (tl->types[i] == t)
			return (uint32_t)(last = i);
	size_t cap = tl->captypes;
	tl->types = grow(tl->types, &tl->captypes, tl->ntypes + 1, sizeof *tl->types);
	tl->type_counts = grow(tl->type_counts, &cap, tl->ntypes + 1, sizeof *tl->type_counts);
	tl->types[tl->ntypes] = t;
	tl->type_counts[tl->ntypes] = 0;
	return (uint32_t)(last = tl->ntypes++);
}

static int cmp_thread_rows(const void *pa, const void *pb)
{
	const struct vgu_row *a = pa, *b = pb;
	int c = strcmp(a->image->hostname ? a->image->hostname : "",
	               b->image->hostname ? b->image->hostname : "");
	if (c)
		return c;
	if (a->image->pid != b->image->pid)
		return a->image->pid < b->image->pid ? -1 : 1;
	if (a->image->process_gen != b->image->process_gen)
		return a->image->process_gen < b->image->process_gen ? -1 : 1;
	if (a->tid != b->tid) /* the main thread (tid = pid) first, then by tid */
		return (int64_t)a->tid == a->image->pid   ? -1
		       : (int64_t)b->tid == b->image->pid ? 1
		       : a->tid < b->tid                  ? -1
		                                          : 1;
	return a->thread_gen < b->thread_gen ? -1 : a->thread_gen > b->thread_gen;
}

/* Each event, in merged order, as the relations are built from it (the database's own
 * pass: vgq_build_options.keep): its thread's row and where it is in its stream. */
bool vgu_timeline_feed(void *arg, const struct vgt_event *ev)
{
	struct vgu_app *a = arg;
	struct vgu_timeline *tl = &a->tl;
	vgt_names_observe(a->names, ev);
	size_t si = ev->stream->index;
	if (si >= tl->nrow_of) {
		size_t n = vgt_stream_count(a->trace) > si ? vgt_stream_count(a->trace) : si + 1;
		size_t *p = realloc(tl->row_of, n * sizeof *p);
		if (!p) {
			fputs("vigil ui: out of memory\n", stderr);
			abort();
		}
		for (size_t i = tl->nrow_of; i < n; i++)
			p[i] = SIZE_MAX;
		tl->row_of = p;
		tl->nrow_of = n;
	}
	size_t ri = tl->row_of[si];
	if (ri == SIZE_MAX) {
		for (ri = 0; ri < tl->nrows; ri++) {
			struct vgu_row *r = &tl->rows[ri];
			if (r->tid == ev->tid && r->thread_gen == ev->thread_gen &&
			    (r->image == ev->image || vgt_image_same_process(r->image, ev->image)))
				break;
		}
		if (ri == tl->nrows) {
			struct vgu_row *r = new_row(tl, NULL, NULL, "thread");
			r->image = ev->image;
			r->tid = ev->tid;
			r->thread_gen = ev->thread_gen;
		}
		tl->row_of[si] = ri;
	}
	tl->events = grow(tl->events, &tl->capevents, tl->nevents + 1, sizeof *tl->events);
	uint32_t ti = type_index(tl, ev->type);
	tl->type_counts[ti]++;
	tl->events[tl->nevents] =
	    (struct vgu_event){.stream = (uint32_t)si, .type = ti, .offset = ev->offset};
	row_push(&tl->rows[ri], ev->ts, NULL, tl->nevents++, -1);
	return true;
}

/* The thread rows in order (host, process, main thread first), named. */
static void thread_rows(struct vgu_app *a)
{
	struct vgu_timeline *tl = &a->tl;
	free(tl->row_of);
	tl->row_of = NULL;
	tl->nrow_of = 0;
	qsort(tl->rows, tl->nrows, sizeof *tl->rows, cmp_thread_rows);
	for (size_t i = 0; i < tl->nrows; i++) {
		struct vgu_row *r = &tl->rows[i];
		const struct vgt_image *img = r->image;
		const char *host = img->hostname ? img->hostname : "?";
		const char *proc = vgt_names_lookup(a->names, "process", (uint64_t)img->pid,
		                                    (uint32_t)img->process_gen);
		if (!proc)
			proc = img->procname ? img->procname : "?";
		r->group = xasprintf("%s / %s [%lld]", host, proc, (long long)img->pid);
		const char *name = vgt_names_lookup(a->names, "thread", r->tid, r->thread_gen);
		r->label = name ? xasprintf("%s [%u]", name, r->tid) : xasprintf("[%u]", r->tid);
	}
}

/* The attribute a relation's rows are keyed by: an entity's name, else the first. */
static int key_attr(const struct vgq_relation *r)
{
	if (r->kind == VGQ_REL_ENTITY) {
		int k = vgq_relation_attr(r, "name");
		if (k >= 0)
			return k;
	}
	return r->nattrs ? 0 : -1;
}

void vgu_timeline_add_relation(struct vgu_timeline *tl, const struct vgq_relation *r,
                               const char *group, const char *kind)
{
	if (!r->ntuples)
		return;
	int ka = key_attr(r);
	/* colour by the other attribute's value (10 classes, the first values seen) */
	int va = -1;
	if (r->kind != VGQ_REL_ENTITY)
		for (size_t i = 0; i < r->nattrs && va < 0; i++)
			if ((int)i != ka)
				va = (int)i;
	char *vals[10];
	size_t nvals = 0;
	struct vgq_text vt = {0};
	size_t first = tl->nrows, nkeys = 0, other = SIZE_MAX;
	char *keys[MAX_KEYS];
	struct vgq_text t = {0};
	bool event = vgq_output_is_event(r);
	for (size_t i = 0; i < r->ntuples; i++) {
		t.len = 0;
		const char *key = "";
		if (ka >= 0 && vgq_value_text(&t, r, (size_t)ka, i))
			key = t.ptr ? t.ptr : "";
		else if (ka >= 0)
			key = "(none)";
		size_t k;
		for (k = 0; k < nkeys && strcmp(keys[k], key); k++)
			;
		size_t ri;
		if (k < nkeys) {
			ri = first + k;
		} else if (nkeys < MAX_KEYS) {
			keys[nkeys++] = strdup(key);
			new_row(tl, strdup(group), strdup(ka >= 0 ? key : r->name), kind)->rel = r;
			ri = tl->nrows - 1;
		} else {
			if (other == SIZE_MAX) {
				new_row(tl, strdup(group), strdup("(other)"), kind)->rel = r;
				other = tl->nrows - 1;
			}
			ri = other;
		}
		int cls = -1;
		if (va >= 0 && !event) {
			vt.len = 0;
			const char *v =
			    vgq_value_text(&vt, r, (size_t)va, i) && vt.ptr ? vt.ptr : "";
			size_t c;
			for (c = 0; c < nvals && strcmp(vals[c], v); c++)
				;
			if (c == nvals && nvals < 10)
				vals[nvals++] = strdup(v);
			cls = c < 10 ? (int)c : 9;
		}
		row_push(&tl->rows[ri], r->from[i], event ? NULL : &r->to[i], i, cls);
	}
	for (size_t k = 0; k < nkeys; k++)
		free(keys[k]);
	for (size_t k = 0; k < nvals; k++)
		free(vals[k]);
	vgq_text_free(&vt);
	vgq_text_free(&t);
}

int vgu_timeline_build(struct vgu_app *a)
{
	thread_rows(a);
	for (size_t i = 0; i < a->db->nrelations; i++) {
		const struct vgq_relation *r = a->db->relations[i];
		if (r->kind == VGQ_REL_EVENT)
			continue; /* its events are the threads' marks */
		vgu_timeline_add_relation(&a->tl, r, r->name, vgq_rkind_name(r->kind));
	}
	a->tl.nbase = a->tl.nrows;
	return 0;
}

static void row_free(struct vgu_row *r)
{
	free(r->group);
	free(r->label);
	free(r->kind);
	free(r->from);
	free(r->to);
	free(r->maxto);
	free(r->ref);
	free(r->cls);
}

void vgu_timeline_truncate(struct vgu_timeline *tl, size_t nrows)
{
	while (tl->nrows > nrows)
		row_free(&tl->rows[--tl->nrows]);
}

void vgu_timeline_free(struct vgu_timeline *tl)
{
	vgu_timeline_truncate(tl, 0);
	free(tl->rows);
	free(tl->events);
	free(tl->types);
	free(tl->type_counts);
	free(tl->row_of);
	memset(tl, 0, sizeof *tl);
}

json_t *vgu_rows_json(const struct vgu_app *a)
{
	const struct vgu_timeline *tl = &a->tl;
	json_t *rows = json_array();
	for (size_t i = 0; i < tl->nrows; i++) {
		const struct vgu_row *r = &tl->rows[i];
		json_t *o =
		    json_pack("{s:i,s:s,s:s,s:s,s:I}", "row", (json_int_t)i, "group", r->group,
		              "label", r->label, "kind", r->kind, "items", (json_int_t)r->n);
		if (r->n) {
			json_object_set_new(o, "first", json_integer(r->from[0]));
			json_object_set_new(
			    o, "last",
			    json_integer(r->to ? r->maxto[r->n - 1] : r->from[r->n - 1]));
		}
		if (r->rel)
			json_object_set_new(o, "relation", json_string(r->rel->name));
		if (r->image) {
			json_object_set_new(o, "pid", json_integer(r->image->pid));
			json_object_set_new(o, "tid", json_integer(r->tid));
			json_object_set_new(
			    o, "host", json_string(r->image->hostname ? r->image->hostname : "?"));
		}
		json_array_append_new(rows, o);
	}
	json_t *types = json_array();
	for (size_t i = 0; i < tl->ntypes; i++)
		json_array_append_new(
		    types,
		    json_pack("{s:s,s:s,s:I}", "name", tl->types[i]->name, "relation",
		              tl->types[i]->relation ? tl->types[i]->relation : tl->types[i]->name,
		              "count", (json_int_t)tl->type_counts[i]));
	char t0[64];
	vgt_format_time(a->db->first, t0, sizeof t0);
	return json_pack("{s:o,s:o,s:s,s:I,s:I,s:b}", "rows", rows, "types", types, "origin", t0,
	                 "span", (json_int_t)(a->db->last - a->db->first), "events",
	                 (json_int_t)a->db->events, "partial", a->db->partial);
}

/* Window answers are written by hand: at full view a busy trace answers with a bucket per
 * pixel per row, and building that many JSON values one by one would cost more than
 * finding them. */
static size_t i64_text(char *p, int64_t v)
{
	char tmp[24];
	size_t n = 0, k = 0;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	do
		tmp[n++] = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		p[k++] = '-';
	while (n)
		p[k++] = tmp[--n];
	return k;
}

static void put_i64s(struct vgq_text *o, const int64_t *v, size_t n)
{
	char buf[24 * 4 + 8];
	size_t len = 0;
	buf[len++] = '[';
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf[len++] = ',';
		len += i64_text(buf + len, v[i]);
	}
	buf[len++] = ']';
	vgq_text_put(o, buf, len);
}

/* First index in [lo, hi) whose start is >= t, searched outwards from lo (buckets are
 * visited in order: the answer is usually near). */
static size_t gallop(const int64_t *v, size_t lo, size_t hi, int64_t t)
{
	size_t step = 1, a = lo;
	while (a + step < hi && v[a + step] < t) {
		a += step;
		step *= 2;
	}
	size_t b = a + step < hi ? a + step + 1 : hi;
	return a + vgb_first_at_least(v + a, b - a, t);
}

/* Items [back, i1) of a row; those before i0 (begun before t0) only if they reach t0. */
static void row_items(struct vgq_text *o, const struct vgu_app *a, const struct vgu_row *r,
                      size_t back, size_t i0, size_t i1, int64_t t0)
{
	int64_t org = a->db->first;
	bool first = true;
	vgq_text_put(o, "\"items\":[", 9);
	for (size_t i = back; i < i1; i++) {
		if (i < i0 && r->to[i] < t0)
			continue;
		if (!first)
			vgq_text_putc(o, ',');
		first = false;
		if (r->to)
			put_i64s(o,
			         (int64_t[]){r->from[i] - org, r->to[i] - org, (int64_t)r->ref[i],
			                     r->cls ? r->cls[i] : 0},
			         4);
		else if (r->rel)
			put_i64s(o, (int64_t[]){r->from[i] - org, (int64_t)r->ref[i]}, 2);
		else
			put_i64s(o,
			         (int64_t[]){r->from[i] - org, (int64_t)r->ref[i],
			                     (int64_t)a->tl.events[r->ref[i]].type},
			         3);
	}
	vgq_text_putc(o, ']');
}

char *vgu_window_json(const struct vgu_app *a, int64_t t0, int64_t t1, unsigned px,
                      size_t first_row, size_t nrows, size_t *len)
{
	const struct vgu_timeline *tl = &a->tl;
	struct vgq_text o = {0};
	char buf[128];
	int64_t org = a->db->first;
	vgq_text_put(&o, buf,
	             (size_t)snprintf(buf, sizeof buf,
	                              "{\"from\":%lld,\"to\":%lld,\"px\":%u,\"rows\":[",
	                              (long long)(t0 - org), (long long)(t1 - org), px));
	if (first_row > tl->nrows)
		first_row = tl->nrows;
	if (nrows > tl->nrows - first_row)
		nrows = tl->nrows - first_row;
	for (size_t ri = first_row; ri < first_row + nrows; ri++) {
		const struct vgu_row *r = &tl->rows[ri];
		/* Intervals begun before t0 that reach into the window: the earliest such
		 * start, found by walking back while the prefix maximum of ends says some
		 * earlier tuple still covers t0 (bounded: beyond it, buckets). */
		size_t i0 = vgb_first_at_least(r->from, r->n, t0),
		       i1 = vgb_first_at_least(r->from, r->n, t1 + 1);
		size_t back = i0;
		if (r->to)
			while (back > 0 && r->maxto[back - 1] > t0 && i0 - back < px)
				back--;
		vgq_text_put(&o, buf,
		             (size_t)snprintf(buf, sizeof buf, "%s{\"row\":%zu,",
		                              ri > first_row ? "," : "", ri));
		if (i1 - back <= px) {
			row_items(&o, a, r, back, i0, i1, t0);
		} else {
			/* per bucket: [bucket, count, first start, last end] */
			vgq_text_put(&o, "\"buckets\":[", 11);
			long double w = ((long double)t1 - (long double)t0 + 1) / px;
			size_t lo = back;
			bool first = true;
			for (unsigned k = 0; k < px && lo < i1; k++) {
				int64_t end = k + 1 == px ? t1 + 1 : t0 + (int64_t)(w * (k + 1));
				size_t hi = gallop(r->from, lo, i1, end);
				if (hi > lo) {
					int64_t last = r->to ? r->maxto[hi - 1] : r->from[hi - 1];
					if (!first)
						vgq_text_putc(&o, ',');
					first = false;
					put_i64s(&o,
					         (int64_t[]){k, (int64_t)(hi - lo),
					                     r->from[lo] - org, last - org},
					         4);
				}
				lo = hi;
			}
			vgq_text_put(
			    &o, buf,
			    (size_t)snprintf(buf, sizeof buf, "],\"count\":%zu", i1 - back));
		}
		vgq_text_putc(&o, '}');
	}
	vgq_text_put(&o, "]}", 2);
	*len = o.len;
	return o.ptr;
}
