/* Error reports of the front end: FILE:LINE:COL: error: MESSAGE, the source line, a
 * caret. Private to src/lang. */
#ifndef VIGIL_LANG_DIAG_H
#define VIGIL_LANG_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "lang/model.h"

#define VGL_MAX_ERRORS 100 /* then one "too many errors" line, and the run stops */

struct vgl_source {
	const char *path; /* the same pointer as every vgl_loc.file in it */
	const char *text;
	size_t len;
};

struct vgl_diag {
	FILE *out;
	int nerrors;
	const struct vgl_source **sources;
	size_t nsources, capsources;
	struct vgb_arena *arena;
	struct vgl_report *reports; /* held until vgl_diag_flush, which sorts them */
	size_t nreports, capreports;
};

void vgl_diag_add_source(struct vgl_diag *d, const struct vgl_source *src);
/* One error. A location with line 0 prints only "FILE: error: MESSAGE". */
void vgl_error(struct vgl_diag *d, struct vgl_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Writes the errors held, by file (in the order added), line and column. */
void vgl_diag_flush(struct vgl_diag *d);
/* The run has reported more errors than anyone reads: stop early. */
bool vgl_diag_full(const struct vgl_diag *d);

#endif
