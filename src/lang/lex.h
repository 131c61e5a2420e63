/* The lexer of .vgl files: identifiers, literals, punctuation; comments and white space
 * skipped. Private to src/lang. */
#ifndef VIGIL_LANG_LEX_H
#define VIGIL_LANG_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lang/diag.h"

enum vgl_tok {
	TOK_EOF,
	TOK_IDENT,
	TOK_INT,
	TOK_FLOAT,
	TOK_STRING,
	TOK_SEMI,   /* ; */
	TOK_LBRACE, /* { */
	TOK_RBRACE, /* } */
	TOK_COLON,  /* : */
	TOK_COMMA,  /* , */
	TOK_EQUALS, /* = */
	TOK_DOT,    /* . */
};

#define VGL_MAX_NAME 255 /* longest identifier */

struct vgl_token {
	enum vgl_tok kind;
	const char *start; /* in the source text */
	size_t len;
	struct vgl_loc loc, end; /* first byte; just after the last */
	/* TOK_INT: magnitude and sign (a '-' directly before the digits is part of it). */
	uint64_t u;
	bool neg;
	double d;      /* TOK_FLOAT */
	const char *s; /* TOK_STRING: unescaped, in the arena */
	size_t slen;
};

struct vgl_lexer {
	const struct vgl_source *src;
	const char *p, *end;
	int line;
	const char *line_start;
	struct vgl_diag *diag;
	struct vgb_arena *arena;
};

void vgl_lex_init(struct vgl_lexer *lx, const struct vgl_source *src, struct vgl_diag *diag,
                  struct vgb_arena *arena);
/* The next token; errors (bad characters, literals, unterminated comments and strings)
 * are reported and skipped. */
void vgl_lex_next(struct vgl_lexer *lx, struct vgl_token *t);
const char *vgl_tok_name(enum vgl_tok kind);

#endif
