/* Errors of a `.vgd` file: "SOURCE:LINE:COL: error: MESSAGE", the source line and a caret
 * (common/caret.h, as for .vgl and TQuel), in order of position. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/caret.h"
#include "display/ast.h"

void vgd_error(struct vgd_file *f, struct vgd_loc loc, const char *fmt, ...)
{
	if (f->nerrors >= VGD_MAX_ERRORS)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	struct vgd_error *n = realloc(f->errors, (f->nerrors + 1) * sizeof *n);
	char *m = strdup(buf);
	if (!n || !m)
		abort();
	f->errors = n;
	f->errors[f->nerrors++] = (struct vgd_error){loc, m};
}

static int by_position(const void *a, const void *b)
{
	const struct vgd_error *x = a, *y = b;
	if (x->loc.off != y->loc.off)
		return x->loc.off < y->loc.off ? -1 : 1;
	return x < y ? -1 : x > y; /* qsort is not stable: keep the order of reports */
}

void vgd_print_errors(const struct vgd_file *f, FILE *out)
{
	/* sorted in place: errors are only ever added, then printed */
	if (f->nerrors)
		qsort(f->errors, f->nerrors, sizeof *f->errors, by_position);
	for (size_t i = 0; i < f->nerrors; i++) {
		const struct vgd_error *e = &f->errors[i];
		fprintf(out, "%s:%u:%u: error: %s\n", f->source, e->loc.line, e->loc.col,
		        e->message);
		size_t start = e->loc.off - (e->loc.col - 1);
		const char *p = f->text + start;
		const char *eol = memchr(p, '\n', f->len - start);
		vg_show_caret(out, p, eol ? (size_t)(eol - p) : f->len - start, e->loc.col - 1);
	}
	if (f->nerrors >= VGD_MAX_ERRORS)
		fprintf(out, "%s: error: too many errors (%d), stopped\n", f->source,
		        VGD_MAX_ERRORS);
}

const char *vgd_shape_name(enum vgd_shape s)
{
	static const char *const n[] = {"point",  "line", "pointer",   "curve", "polygon",
	                                "circle", "oval", "rectangle", "text"};
	return n[s];
}

const char *vgd_aspect_name(enum vgd_aspect_kind k)
{
	static const char *const n[] = {"x",         "y",      "size",     "label",
	                                "intensity", "colour", "rotation", "scale"};
	return n[k];
}

const char *vgd_place_name(int place)
{
	static const char *const n[] = {"center",    "top",         "bottom",
	                                "left",      "right",       "top left",
	                                "top right", "bottom left", "bottom right"};
	return place >= 0 && place <= VGD_BOTTOM_RIGHT ? n[place] : "center";
}
