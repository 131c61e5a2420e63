/* The parser: one source file into its syntax tree. Private to src/lang. */
#ifndef VIGIL_LANG_PARSE_H
#define VIGIL_LANG_PARSE_H

#include "lang/ast.h"
#include "lang/diag.h"

struct vgb_arena;

/* Syntax errors are reported to `diag`; the tree holds what could be parsed. */
struct ast_file *vgl_parse(const struct vgl_source *src, struct vgl_diag *diag,
                           struct vgb_arena *arena);

#endif
