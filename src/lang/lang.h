/* The sensor description language: loading a .vgl file into a checked model, and the
 * generators. See model.h for the model, docs/language.md for the language. */
#ifndef VIGIL_LANG_LANG_H
#define VIGIL_LANG_LANG_H

#include <stdio.h>

#include "lang/model.h"

/* Parses and checks `path` and its imports. Every error is written to `errors` as
 *   FILE:LINE:COL: error: MESSAGE
 *   <the source line>
 *   <spaces>^
 * and all errors of the run are reported, not only the first. Returns the model, or
 * NULL if there was any error (*nerrors says how many). */
struct vgl_model *vgl_load(const char *path, FILE *errors, int *nerrors);
void vgl_free(struct vgl_model *m);

/* As vgl_load, from files in memory (a description embedded in a program: vigil gen -l c,
 * src/cli/embedded.c): files[0] is the main file; an import is looked up by its name as
 * resolved from the importing file's name, never read from disk. Names and texts are
 * copied. */
struct vgl_text {
	const char *name, *text;
	size_t len;
};
struct vgl_model *vgl_load_texts(const struct vgl_text *files, size_t n, FILE *errors,
                                 int *nerrors);

/* Generators: each writes its files into `outdir` (created if missing) and returns 0,
 * or -1 with one line in `err`. */
int vgl_gen_c(const struct vgl_model *m, const char *outdir, char *err, size_t errsize);
int vgl_gen_python(const struct vgl_model *m, const char *outdir, char *err, size_t errsize);
int vgl_gen_java(const struct vgl_model *m, const char *outdir, char *err, size_t errsize);
int vgl_gen_perl(const struct vgl_model *m, const char *outdir, char *err, size_t errsize);

#endif
