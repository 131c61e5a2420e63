/* The state of the recursive-descent parser and the helpers its files share
 * (statements: parse.c, value expressions: parse_expr.c, temporal
 * expressions and predicates: parse_time.c, helpers: parse_util.c).
 * Private to src/tquel. */
#ifndef VIGIL_TQUEL_PARSER_H
#define VIGIL_TQUEL_PARSER_H

#include <stdbool.h>

#include "tquel/lex.h"
#include "tquel/tquel.h"

struct parser {
	struct tquel_query *q;
	struct tquel_arena *a;
	struct tquel_token *t; /* the tokens, the last TT_EOF */
	size_t i;              /* the current token */
	bool failed;           /* an error in the current statement: unwind to recovery */
	int depth;             /* nesting of the expression being parsed */
	size_t caperrors;
};

static inline struct tquel_token *peek(struct parser *p)
{
	return &p->t[p->i];
}

static inline struct tquel_token *peek2(struct parser *p)
{
	return p->t[p->i].kind == TT_EOF ? &p->t[p->i] : &p->t[p->i + 1];
}

static inline struct tquel_token *advance(struct parser *p)
{
	struct tquel_token *t = &p->t[p->i];
	if (t->kind != TT_EOF)
		p->i++;
	return t;
}

static inline bool at_kw(struct parser *p, enum tquel_kw kw)
{
	return peek(p)->kind == TT_WORD && peek(p)->kw == kw;
}

static inline bool at(struct parser *p, enum tquel_tok kind)
{
	return peek(p)->kind == kind;
}

/* A word that is not a keyword: a variable, relation or result name. */
static inline bool at_name(struct parser *p)
{
	return peek(p)->kind == TT_WORD && peek(p)->kw == KW_NONE;
}

/* Records an error at `loc` and marks the statement failed. */
void tq_error(struct parser *p, struct tquel_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "expected WHAT after 'CONTEXT', found TOKEN" at the current token, where CONTEXT is
 * the source text from byte `ctx` to the end of the previous token (shortened). A lexical
 * error at the current token is reported instead, as it is the cause. */
void tq_expected(struct parser *p, size_t ctx, const char *what);
/* The same with a hint in parentheses after it. */
void tq_expected_hint(struct parser *p, size_t ctx, const char *what, const char *hint);
/* The source text from `off` to `end`, white space collapsed, at most `max` bytes (the
 * end kept), in a static buffer. */
const char *tq_excerpt(struct parser *p, size_t off, size_t end);
/* The end offset of the previous token (0 at the start). */
size_t tq_prev_end(struct parser *p);
/* The location from the start of `from` to the end of the previous token. */
struct tquel_loc tq_span(struct parser *p, struct tquel_loc from);
/* Enters one level of nesting; false (reported) beyond TQUEL_MAX_DEPTH. */
bool tq_enter(struct parser *p);
/* At '(': parses `inner` up to the matching ')', which must follow; the node's location
 * then covers the parentheses. NULL after an error. */
struct tquel_expr *tq_parenthesized(struct parser *p,
                                    struct tquel_expr *(*inner)(struct parser *p));

struct tquel_expr *tq_node(struct parser *p, enum tquel_kind kind, struct tquel_loc loc);
/* `child` hangs below `e`: e's height grows to fit it. e, or NULL (reported at `at`, the
 * term that made it too high) when the tree would be higher than TQUEL_MAX_HEIGHT. */
struct tquel_expr *tq_below(struct parser *p, struct tquel_expr *e, const struct tquel_expr *child,
                            struct tquel_loc at);
const char *tq_name(struct parser *p, const struct tquel_token *t);

/* where clause, target list values, aggregate arguments */
struct tquel_expr *tq_parse_value(struct parser *p);
/* when clause and aggregate inner when: a predicate */
struct tquel_expr *tq_parse_when(struct parser *p);
/* An aggregate starts here (count(, first(, ...); parse it. In a valid or when clause
 * an aggregate is a temporal expression: the valid time of its value. */
bool tq_at_aggregate(struct parser *p);
struct tquel_expr *tq_parse_aggregate(struct parser *p);
/* valid clause: a temporal expression */
struct tquel_expr *tq_parse_time(struct parser *p);
/* The temporal constant a string spells (time_const.c): "now", "beginning",
 * "forever" (any case) or a date; false with the reason in `why`. */
bool tquel_time_constant(const char *s, enum tquel_tconst *which, int64_t *ns, char *why,
                         size_t whysize);

#endif
