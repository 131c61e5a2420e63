/* Error reports: "SOURCE:LINE:COL: error: MESSAGE", the source line, a caret under the
 * column (tabs kept so that it lines up; control bytes shown as '?'; a long line shown
 * as a window around the column). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/caret.h"
#include "tquel/tquel.h"

static void show_line(const struct tquel_query *q, const struct tquel_loc *loc, FILE *out)
{
	const char *text = q->text, *end = q->text + q->len;
	size_t start = loc->off >= loc->col - 1 ? loc->off - (loc->col - 1) : 0;
	if (start > q->len)
		start = q->len;
	const char *p = text + start;
	const char *eol = memchr(p, '\n', (size_t)(end - p));
	if (!eol)
		eol = end;
	vg_show_caret(out, p, (size_t)(eol - p), loc->col - 1);
}

void tquel_print_errors(const struct tquel_query *q, FILE *out)
{
	for (size_t i = 0; i < q->nerrors; i++) {
		const struct tquel_error *e = &q->errors[i];
		fprintf(out, "%s:%u:%u: error: %s\n", q->source, e->loc.line, e->loc.col,
		        e->message);
		show_line(q, &e->loc, out);
	}
	if (q->nerrors >= TQUEL_MAX_ERRORS)
		fprintf(out, "%s: error: too many errors (%d), stopped\n", q->source,
		        TQUEL_MAX_ERRORS);
}

char *tquel_errors_string(const struct tquel_query *q)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	tquel_print_errors(q, f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

void tquel_report(const struct tquel_query *q, const struct tquel_loc *loc, FILE *out,
                  const char *fmt, ...)
{
	fprintf(out, "%s:%u:%u: error: ", q->source, loc->line, loc->col);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
	show_line(q, loc, out);
}
