/* The checker: syntax trees of a file and its imports into the checked model.
 * Private to src/lang. */
#ifndef VIGIL_LANG_CHECK_H
#define VIGIL_LANG_CHECK_H

#include <stdbool.h>

#include "lang/ast.h"
#include "lang/diag.h"
#include "lang/symtab.h"

struct vgb_arena;

/* Fills `m` (package and files already set) from the declarations of `files`, in that
 * order. Errors go to `diag`. */
void vgl_check(struct vgl_model *m, struct ast_file *const *files, size_t nfiles,
               struct vgl_diag *diag, struct vgb_arena *arena);

/* Shared by check.c and check_record.c. */
struct checker {
	struct vgl_diag *diag;
	struct vgb_arena *arena;
	struct vgl_symtab types; /* const, entity, struct, record name -> struct ast_decl */
	struct vgl_model *m;
	/* Inherited properties and fields are copied into every record that extends: how
	 * many copies are left before a model is refused as too large. */
	size_t copies_left;
};

/* Does the literal `v` fit `type` (strings: at most `max` bytes, 0: any)? If not, says
 * why in `why`. On success stores the value converted to the type in *out. */
bool vgl_literal_fits(enum vgl_type type, uint32_t max, const struct ast_value *v,
                      struct vgl_literal *out, char *why, size_t whysize);
/* Resolves a type name: primitive, entity or struct (records and consts are errors,
 * reported as in "unknown type"). False if it was reported. */
bool vgl_resolve_type(struct checker *c, const char *name, struct vgl_loc loc, enum vgl_type *type,
                      const struct vgl_entity **entity, const struct vgl_struct **st);
/* Builds every record of `decls` (n of them) into `out`, parents first. */
void vgl_check_records(struct checker *c, struct ast_decl **decls, size_t n,
                       struct vgl_record *out);
uint64_t vgl_field_size(enum vgl_type type, uint32_t max);
/* Builds sensor `s` from its declaration (check_sensor.c). */
void vgl_check_sensor(struct checker *c, const struct ast_decl *d, struct vgl_sensor *s);
/* "a record", "an entity": a declaration's kind with its article, for messages. */
const char *vgl_kind_word(enum ast_kind k);
/* "a uint8", "an entity reference": a type's name with its article, for messages. */
const char *vgl_a_type(enum vgl_type t);

#endif
