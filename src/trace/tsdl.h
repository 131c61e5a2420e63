/* TSDL (CTF 1.8 metadata) subset: tokens, and the declarations the parser produces
 * before they are checked and compiled into a `struct metadata`. */
#ifndef VIGIL_TRACE_TSDL_H
#define VIGIL_TRACE_TSDL_H

#include "internal.h"

/* ---- tokens ----------------------------------------------------------------------- */

enum tok_kind { TOK_EOF, TOK_IDENT, TOK_INT, TOK_STRING, TOK_PUNCT };

struct tok {
	enum tok_kind kind;
	const char *text; /* identifier, decoded string, or punctuation ("{", ":=") */
	uint64_t ival;
	unsigned line, col;
	size_t offset, end; /* byte range in the source */
};

struct lexer {
	struct arena *arena;
	const char *src;
	size_t len, pos;
	unsigned line, col;
};

struct tsdl_error {
	unsigned line, col;
	bool at_eof; /* the text ended too early */
	char msg[256];
};

void vgt_lexer_init(struct lexer *lx, struct arena *a, const char *src, size_t len);
/* Next token; -1 with `err` filled on a lexical error. */
int vgt_lexer_next(struct lexer *lx, struct tok *t, struct tsdl_error *err);

/* ---- declarations ------------------------------------------------------------------ */

enum ttype_class { TT_INT, TT_FLOAT, TT_STRING, TT_STRUCT, TT_ARRAY, TT_SEQUENCE };
enum byte_order { BO_NATIVE, BO_LE, BO_BE };

struct tfield;
struct ttype {
	enum ttype_class cls;
	unsigned line, col;
	unsigned size, align; /* bits; align 0: the default */
	bool is_signed;
	enum byte_order byte_order;
	unsigned base;
	bool text_encoding; /* integer `encoding = UTF8/ASCII` */
	const char *map;    /* integer `map = clock.NAME.value`: NAME */
	unsigned exp_dig, mant_dig;
	struct tfield *fields; /* struct */
	size_t nfields;
	uint64_t length;        /* array */
	const char *length_ref; /* sequence: name of the length field */
	struct ttype *elem;     /* array, sequence */
};

struct tfield {
	const char *name;
	struct ttype *type;
	unsigned line, col;
};

enum tvalue_kind { TV_INT, TV_STRING, TV_IDENT, TV_TYPE };

struct tattr {
	const char *key; /* dotted: "packet.header", "model.emf.uri" */
	enum tvalue_kind kind;
	bool negative;
	uint64_t u;         /* magnitude of TV_INT */
	const char *s;      /* TV_STRING, TV_IDENT (dotted) */
	struct ttype *type; /* TV_TYPE (`key := type;`) */
	unsigned line, col;
};

enum tblock_kind { TB_TRACE, TB_ENV, TB_CLOCK, TB_STREAM, TB_EVENT, TB_OTHER };

struct tblock {
	enum tblock_kind kind;
	struct tattr *attrs;
	size_t nattrs;
	unsigned line, col;
};

struct tsdl_doc {
	struct tblock *blocks;
	size_t nblocks, cap;
	size_t complete_len; /* text up to the end of the last complete declaration */
};

/* Parses `text` into `doc`. Returns 0, or -1 with `err` set; when err->at_eof the text
 * was cut inside a declaration and `doc` holds every declaration before it. */
int vgt_tsdl_parse(struct arena *a, const char *text, size_t len, struct tsdl_doc *doc,
                   struct tsdl_error *err);

/* Compiles a struct type into a layout; -1 with a message and position on error. */
int vgt_layout_compile(struct arena *a, const struct ttype *t, bool trace_big_endian,
                       struct layout *out, char *err, size_t errsize, unsigned *line,
                       unsigned *col);

/* Attribute `key` of a block, or NULL. */
const struct tattr *vgt_tblock_attr(const struct tblock *b, const char *key);

#endif
