/* Error reports with the source line and a caret under the column. */
#include "lang/diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/caret.h"
#include "lang/arena.h"

struct vgl_report {
	size_t file; /* index in sources; files not added (cannot open) first */
	int line, col;
	size_t seq;
	char *text;
};

void vgl_diag_add_source(struct vgl_diag *d, const struct vgl_source *src)
{
	const struct vgl_source **slot =
	    vgl_push(d->arena, &d->sources, &d->nsources, &d->capsources, sizeof *slot);
	*slot = src;
}

bool vgl_diag_full(const struct vgl_diag *d)
{
	return d->nerrors > VGL_MAX_ERRORS;
}

static const struct vgl_source *find_source(const struct vgl_diag *d, const char *file)
{
	for (size_t i = 0; i < d->nsources; i++)
		if (d->sources[i]->path == file)
			return d->sources[i];
	return NULL;
}

/* Prints the line `line` of `src` and a caret under byte column `col`. */
static void show_line(FILE *out, const struct vgl_source *src, int line, int col)
{
	const char *p = src->text, *end = src->text + src->len;
	for (int l = 1; l < line && p < end; l++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	const char *eol = memchr(p, '\n', (size_t)(end - p));
	if (!eol)
		eol = end;
	vg_show_caret(out, p, (size_t)(eol - p), col > 0 ? (size_t)col - 1 : 0);
}

static size_t file_index(const struct vgl_diag *d, const char *file)
{
	for (size_t i = 0; i < d->nsources; i++)
		if (d->sources[i]->path == file)
			return i + 1;
	return 0;
}

void vgl_error(struct vgl_diag *d, struct vgl_loc loc, const char *fmt, ...)
{
	d->nerrors++;
	if (d->nerrors > VGL_MAX_ERRORS)
		return;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	if (!out) {
		fprintf(d->out, "vigil: out of memory\n");
		exit(3);
	}
	va_list ap;
	va_start(ap, fmt);
	if (loc.line > 0)
		fprintf(out, "%s:%d:%d: error: ", loc.file, loc.line, loc.col);
	else
		fprintf(out, "%s: error: ", loc.file);
	vfprintf(out, fmt, ap);
	fputc('\n', out);
	va_end(ap);
	const struct vgl_source *src = loc.line > 0 ? find_source(d, loc.file) : NULL;
	if (src)
		show_line(out, src, loc.line, loc.col);
	fclose(out);
	struct vgl_report *r =
	    vgl_push(d->arena, &d->reports, &d->nreports, &d->capreports, sizeof *r);
	r->file = file_index(d, loc.file);
	r->line = loc.line;
	r->col = loc.col;
	r->seq = d->nreports;
	r->text = text;
}

static int by_place(const void *a, const void *b)
{
	const struct vgl_report *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void vgl_diag_flush(struct vgl_diag *d)
{
	if (d->nreports)
		qsort(d->reports, d->nreports, sizeof *d->reports, by_place);
	for (size_t i = 0; i < d->nreports; i++) {
		fputs(d->reports[i].text, d->out);
		free(d->reports[i].text);
	}
	if (d->nerrors > VGL_MAX_ERRORS)
		fprintf(d->out, "vigil: error: too many errors (%d), only the first %d shown\n",
		        d->nerrors, VGL_MAX_ERRORS);
	d->nreports = 0;
}
