/* Text-emitting helpers shared by the Python and Java generators: output files and
 * folders, identifiers, integer ranges and string literals. Model navigation stays in
 * model.h; nothing here knows a language's syntax beyond what its caller passes in. */
#ifndef VIGIL_LANG_GEN_TEXT_H
#define VIGIL_LANG_GEN_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/out_file.h"

#include "lang/model.h"

#define GT_IDENT_MAX 256

/* Writes one line into err (printf style); returns -1 for `return gt_err(...)`. */
int gt_err(char *err, size_t errsize, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Creates `path` and its missing parents. */
int gt_mkdirs(const char *path, char *err, size_t errsize);

/* An output file: opened for writing in dir/name; closed with gt_close, which reports
 * write errors (full disk) and returns -1 on any. */
struct gt_out {
	FILE *f;
	char path[4096];
	struct vg_out out; /* common/out_file.h: renamed into place at gt_close */
};
int gt_open(struct gt_out *o, const char *dir, const char *name, char *err, size_t errsize);
int gt_close(struct gt_out *o, char *err, size_t errsize);
void gt_abort(struct gt_out *o);

/* `name` as an identifier: dots (struct payload paths) become underscores, and a name
 * listed in `reserved` (NULL-terminated) gets a trailing underscore. Returns -1 if it
 * does not fit. */
int gt_ident(char *out, size_t n, const char *name, const char *const *reserved);

/* "int8" .. "entity", as in the language. */
const char *gt_type_name(enum vgl_type t);

/* Integer types: size in bytes, whether signed, and the range (lo is 0 for unsigned). */
bool gt_is_int(enum vgl_type t);
int gt_int_size(enum vgl_type t);
bool gt_is_signed(enum vgl_type t);
int64_t gt_int_lo(enum vgl_type t);
uint64_t gt_int_hi(enum vgl_type t);

/* The next code point of UTF-8 text s[*i..n), advancing *i; an invalid or truncated
 * sequence yields U+FFFD and advances one byte. */
uint32_t gt_utf8_next(const unsigned char *s, size_t n, size_t *i);

/* The default of field `f` (only a field that is a whole property has one), or NULL. */
const struct vgl_literal *gt_field_default(const struct vgl_field *f);

/* The fields of `r` that its own properties contribute (a suffix of r->fields). */
size_t gt_first_own_field(const struct vgl_record *r);

/* The i-th record of m in an order where every parent comes before its children (by
 * depth of inheritance, then declaration). */
const struct vgl_record *gt_record_in_order(const struct vgl_model *m, size_t i);

/* Two fields of `r` with the same identifier after mangling: the error, or 0. */
int gt_check_unique(const struct vgl_record *r, const char *const *reserved, const char *lang,
                    char *err, size_t errsize);

#endif
