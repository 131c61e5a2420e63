/* vigil watch's output. Each snapshot of the live trace answers the whole query again;
 * a tuple is printed the first time it appears once its valid time is over (an interval
 * still open, or anything at the very end of the snapshot, may still change), and never
 * again: the set of printed tuples is kept by their JSON text. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cli/watch_print.h"
#include "query/output.h"

struct watch_printer {
	FILE *out;
	enum watch_format format;
	int64_t origin;
	bool origin_set;
	char **seen; /* open addressing on the tuple's JSON text */
	size_t cap, n;
	const char **csv_headers; /* relations whose CSV header was printed */
	size_t ncsv;
	uint64_t printed;
};

static uint64_t hash_text(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Adds s; false if it was there. Takes ownership either way. */
static bool seen_add(struct watch_printer *p, char *s)
{
	if ((p->n + 1) * 2 > p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 1024;
		char **t = calloc(cap, sizeof *t);
		if (!t)
			abort();
		for (size_t i = 0; i < p->cap; i++)
			if (p->seen[i]) {
				size_t j = hash_text(p->seen[i]) & (cap - 1);
				while (t[j])
					j = (j + 1) & (cap - 1);
				t[j] = p->seen[i];
			}
		free(p->seen);
		p->seen = t;
		p->cap = cap;
	}
	size_t j = hash_text(s) & (p->cap - 1);
	for (; p->seen[j]; j = (j + 1) & (p->cap - 1))
		if (!strcmp(p->seen[j], s)) {
			free(s);
			return false;
		}
	p->seen[j] = s;
	p->n++;
	return true;
}

struct watch_printer *watch_printer_new(FILE *out, enum watch_format f, int64_t origin)
{
	struct watch_printer *p = calloc(1, sizeof *p);
	if (!p)
		abort();
	p->out = out;
	p->format = f;
	p->origin = origin;
	return p;
}

void watch_printer_free(struct watch_printer *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->cap; i++)
		free(p->seen[i]);
	free(p->seen);
	free(p->csv_headers);
	free(p);
}

void watch_printer_origin(struct watch_printer *p, int64_t origin)
{
	if (!p->origin_set) {
		p->origin = origin;
		p->origin_set = true;
	}
}

uint64_t watch_printed(const struct watch_printer *p)
{
	return p->printed;
}

/* Tuple k of r as a relation of one tuple (pointers into r's columns). */
static void one_tuple(const struct vgq_relation *r, size_t k, struct vgq_relation *v,
                      union vgq_column *cols, uint8_t **nulls)
{
	*v = *r;
	v->ntuples = 1;
	v->from = r->from + k;
	v->to = r->to ? r->to + k : NULL;
	v->open = r->open ? r->open + k : NULL;
	v->begin_unknown = NULL;
	for (size_t a = 0; a < r->nattrs; a++) {
		switch (r->attrs[a].type) {
		case VGQ_INT:
			cols[a].i = r->cols[a].i + k;
			break;
		case VGQ_UINT:
			cols[a].u = r->cols[a].u + k;
			break;
		case VGQ_DOUBLE:
			cols[a].d = r->cols[a].d + k;
			break;
		case VGQ_STRING:
			cols[a].s = r->cols[a].s + k;
			break;
		case VGQ_BYTES:
			cols[a].b = r->cols[a].b + k;
			break;
		case VGQ_ENTITY:
			cols[a].r = r->cols[a].r + k;
			break;
		}
		nulls[a] = r->nulls && r->nulls[a] ? r->nulls[a] + k : NULL;
	}
	v->cols = cols;
	v->nulls = r->nulls ? nulls : NULL;
}

static char *render(const struct vgq_relation *v, enum vgq_format f, int64_t origin)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		abort();
	struct vgq_output_opts o = {.origin = origin};
	vgq_write_relation(m, v, f, &o);
	fclose(m);
	return buf;
}

/* One line: RELATION  at|from-to  attr=value ... (times in seconds since the origin). */
static void text_line(struct watch_printer *p, const struct vgq_relation *v)
{
	fprintf(p->out, "%s", v->name);
	if (vgq_output_is_event(v))
		fprintf(p->out, "  at %.9f", (double)(v->from[0] - p->origin) / 1e9);
	else
		fprintf(p->out, "  from %.9f to %.9f", (double)(v->from[0] - p->origin) / 1e9,
		        (double)(v->to[0] - p->origin) / 1e9);
	for (size_t a = 0; a < v->nattrs; a++) {
		struct vgq_text t = {0};
		bool has = vgq_value_text(&t, v, a, 0);
		fprintf(p->out, "  %s=%s", v->attrs[a].name, has ? t.ptr : "null");
		vgq_text_free(&t);
	}
	fputc('\n', p->out);
}

static void csv_line(struct watch_printer *p, const struct vgq_relation *v)
{
	char *text = render(v, VGQ_FORMAT_CSV, p->origin);
	bool header_done = false;
	for (size_t i = 0; i < p->ncsv; i++)
		header_done |= p->csv_headers[i] == v->name;
	size_t skip = 0;
	if (header_done) {
		skip = strcspn(text, "\n");
		if (text[skip])
			skip++;
	} else {
		const char **h = realloc(p->csv_headers, (p->ncsv + 1) * sizeof *h);
		if (!h)
			abort();
		p->csv_headers = h;
		p->csv_headers[p->ncsv++] = v->name;
	}
	fputs(text + skip, p->out);
	free(text);
}

long watch_print(struct watch_printer *p, const struct vgq_relation *r, bool final, int64_t horizon)
{
	long printed = 0;
	union vgq_column *cols = calloc(r->nattrs + 1, sizeof *cols);
	uint8_t **nulls = calloc(r->nattrs + 1, sizeof *nulls);
	if (!cols || !nulls)
		abort();
	for (size_t k = 0; k < r->ntuples; k++) {
		int64_t end = r->to ? r->to[k] : r->from[k];
		if (!final && (end >= horizon || (r->open && r->open[k])))
			continue;
		struct vgq_relation v;
		one_tuple(r, k, &v, cols, nulls);
		char *json = render(&v, VGQ_FORMAT_JSON, p->origin);
		if (!seen_add(p, json)) /* printed before (json is freed) */
			continue;
		if (p->format == WATCH_JSON) /* json now lives in the set */
			fputs(json, p->out);
		else if (p->format == WATCH_CSV)
			csv_line(p, &v);
		else
			text_line(p, &v);
		printed++;
		p->printed++;
		/* One write per tuple: a subject sharing our stdout (vigil watch -- COMMAND)
		 * then cannot land its own output in the middle of a tuple's line. */
		if (fflush(p->out) == EOF)
			break;
	}
	free(cols);
	free(nulls);
	if (fflush(p->out) == EOF || ferror(p->out))
		return -1;
	return printed;
}
