/* The lexer of TQuel: words (keywords are matched without regard to case, and only where
 * the grammar wants them), numbers, strings, punctuation; white space and comments
 * skipped. Private to src/tquel. */
#ifndef VIGIL_TQUEL_LEX_H
#define VIGIL_TQUEL_LEX_H

#include <stddef.h>

#include "tquel/arena.h"
#include "tquel/ast.h"

enum tquel_tok {
	TT_EOF,
	TT_WORD,
	TT_NUMBER,
	TT_STRING,
	TT_LPAREN,
	TT_RPAREN,
	TT_LBRACK,
	TT_RBRACK,
	TT_COMMA,
	TT_DOT,
	TT_EQ,
	TT_NE,
	TT_LT,
	TT_LE,
	TT_GT,
	TT_GE,
	TT_PLUS,
	TT_MINUS,
	TT_STAR,
	TT_SLASH,
	TT_ERROR, /* a lexical error: `error` says which */
};

enum tquel_kw {
	KW_NONE,
	KW_RANGE,
	KW_OF,
	KW_IS,
	KW_RETRIEVE,
	KW_INTO,
	KW_VALID,
	KW_AT,
	KW_FROM,
	KW_TO,
	KW_WHERE,
	KW_WHEN,
	KW_AND,
	KW_OR,
	KW_NOT,
	KW_PRECEDE,
	KW_OVERLAP,
	KW_EQUAL,
	KW_BEGIN,
	KW_END,
	KW_EXTEND,
	KW_BY,
	KW_FOR,
	KW_EACH,
	KW_INSTANT,
	KW_EVER,
	KW_COUNT,
	KW_COUNTU,
	KW_SUM,
	KW_SUMU,
	KW_AVG,
	KW_AVGU,
	KW_MIN,
	KW_MAX,
	KW_UNIQUE,
	KW_LAST = KW_UNIQUE,
};

#define TQUEL_MAX_NAME 255 /* longest word */

struct tquel_token {
	enum tquel_tok kind;
	enum tquel_kw kw;  /* TT_WORD: the keyword it spells, or KW_NONE */
	const char *start; /* in the text */
	size_t len;
	struct tquel_loc loc;
	const char *str;   /* TT_STRING: unescaped (arena) */
	const char *error; /* TT_ERROR: the message (arena) */
};

struct tquel_tokens {
	struct tquel_token *v; /* malloc'd; the last is TT_EOF */
	size_t n;
};

void tquel_lex(struct tquel_arena *a, const char *text, size_t len, struct tquel_tokens *out);
void tquel_tokens_free(struct tquel_tokens *t);
/* The spelling of a keyword, lower case ("countu" as "countU"). */
const char *tquel_kw_name(enum tquel_kw kw);

#endif
