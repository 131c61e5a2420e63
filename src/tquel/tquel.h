/* TQuel front end: parse a query text into statements (tquel/ast.h), report its
 * syntax errors, print statements back as canonical TQuel. See docs/tquel.md. */
#ifndef VIGIL_TQUEL_TQUEL_H
#define VIGIL_TQUEL_TQUEL_H

#include <stddef.h>
#include <stdio.h>

#include "tquel/ast.h"

#define TQUEL_MAX_ERRORS 100 /* then parsing stops */
#define TQUEL_MAX_DEPTH 200  /* nesting of expressions */
/* Height of one expression tree, chains included (`a or b or ...` is a tree as high as it
 * is long): every pass after the parser walks trees recursively, so this bounds their
 * stacks. */
#define TQUEL_MAX_HEIGHT 10000

/* Parses `len` bytes of `text` (NUL bytes included are errors). `source` names the text
 * in error messages (a file path, or "<command line>"); it is copied. Never NULL: the
 * result holds every statement parsed without error and every syntax error found,
 * recovering at the next `range` or `retrieve`. */
struct tquel_query *tquel_parse(const char *source, const char *text, size_t len);
void tquel_free(struct tquel_query *q);

/* Each error as "SOURCE:LINE:COL: error: MESSAGE", the source line, a caret. */
void tquel_print_errors(const struct tquel_query *q, FILE *out);
/* One more error at `loc`, in the same form (for checks after parsing). */
void tquel_report(const struct tquel_query *q, const struct tquel_loc *loc, FILE *out,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The statements as canonical TQuel: lower-case keywords, one clause per line, minimal
 * parentheses. Parsing the output gives the same statements again. */
void tquel_print(const struct tquel_query *q, FILE *out);
void tquel_print_stmt(const struct tquel_stmt *s, FILE *out);
void tquel_print_expr(const struct tquel_expr *e, FILE *out);
/* The text of a binary or unary operator kind: "+", "<=", "and", "overlap", ... */
const char *tquel_op_text(enum tquel_kind k);
/* The same into a malloc'd string (NULL when out of memory). */
char *tquel_print_string(const struct tquel_query *q);
char *tquel_errors_string(const struct tquel_query *q);

#endif
