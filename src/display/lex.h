/* Tokens of a `.vgd` file. Private to src/display. */
#ifndef VIGIL_DISPLAY_LEX_H
#define VIGIL_DISPLAY_LEX_H

#include "display/ast.h"

enum vgd_tok {
	VGD_TK_EOF,
	VGD_TK_NAME,   /* a name or keyword: letters, digits, '_' and '.' */
	VGD_TK_NUMBER, /* digits, maybe a fraction, maybe a unit stuck to it: 20ms */
	VGD_TK_STRING, /* "..." with \" and \\ */
	VGD_TK_PUNCT,  /* one of : , ( ) = + { } % */
};

struct vgd_token {
	enum vgd_tok kind;
	struct vgd_loc loc;
	const char *p; /* the token's text in the source (a string: without its quotes) */
	size_t len;
	char punct;
};

struct vgd_lexer {
	struct vgd_file *f;
	size_t pos;
	uint32_t line;
	size_t line_start;
};

void vgd_lex_init(struct vgd_lexer *lx, struct vgd_file *f);
/* The next token; lexical errors are reported to lx->f and skipped. */
struct vgd_token vgd_lex_next(struct vgd_lexer *lx);
/* The location of byte offset `off` (for text the lexer skipped over). */
struct vgd_loc vgd_lex_loc(const struct vgd_lexer *lx);

#endif
