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

/* Generators: each writes its files into `outdir` (created if missing) and returns 0,
 * or -1 with one line in `err`. */
int vgl_gen_c(const struct vgl_model *m, const char *outdir, char *err, size_t errsize);
int vgl_gen_python(const struct vgl_model *m, const char *outdir, char *err, size_t errsize);
int vgl_gen_java(const struct vgl_model *m, const char *outdir, char *err, size_t errsize);
int vgl_gen_perl(const struct vgl_model *m, const char *outdir, char *err, size_t errsize);

#endif
