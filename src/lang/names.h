/* Which names a .vgl file may declare. Private to src/lang. */
#ifndef VIGIL_LANG_NAMES_H
#define VIGIL_LANG_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "lang/model.h"

/* NULL if `name` may name a declaration, a property or a member; otherwise why not
 * (e.g. "a reserved word", "reserved in Java"). */
const char *vgl_name_problem(const char *name);
/* A primitive type's name: sets *type and returns true. */
bool vgl_primitive_type(const char *name, enum vgl_type *type);
const char *vgl_type_name(enum vgl_type type);
/* An op's name as vigil writes it in a trace ("create", "wait_begin"; "activity"). */
const char *vgl_op_name(enum vgl_op op);
/* Is it an entity event's op (create ... leave), rather than an activity's? */
bool vgl_op_is_entity(enum vgl_op op);

#endif
