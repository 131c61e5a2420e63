/* The parser's helpers: error reports with what was expected and found, excerpts of the
 * source, locations, nesting depth, node allocation. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tquel/parser.h"

#define EXCERPT_MAX 40

void tq_error(struct parser *p, struct tquel_loc loc, const char *fmt, ...)
{
	p->failed = true;
	struct tquel_query *q = p->q;
	if (q->nerrors >= TQUEL_MAX_ERRORS)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (q->nerrors == p->caperrors) {
		size_t cap = p->caperrors ? p->caperrors * 2 : 8;
		struct tquel_error *e = tquel_alloc(p->a, cap * sizeof *e);
		if (q->nerrors)
			memcpy(e, q->errors, q->nerrors * sizeof *e);
		q->errors = e;
		p->caperrors = cap;
	}
	q->errors[q->nerrors].loc = loc;
	q->errors[q->nerrors].message = tquel_strndup(p->a, buf, strlen(buf));
	q->nerrors++;
}

const char *tq_excerpt(struct parser *p, size_t off, size_t end)
{
	const char *text = p->q->text;
	char *buf = tquel_alloc(p->a, end - off + 4);
	size_t n = 0;
	bool space = false;
	for (size_t i = off; i < end; i++) {
		unsigned char c = (unsigned char)text[i];
		if (isspace(c)) {
			space = n > 0;
			continue;
		}
		if (space)
			buf[n++] = ' ';
		space = false;
		buf[n++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	buf[n] = '\0';
	if (n > EXCERPT_MAX) {
		char *s = buf + n - (EXCERPT_MAX - 3);
		memcpy(s - 3, "...", 3);
		return s - 3;
	}
	return buf;
}

size_t tq_prev_end(struct parser *p)
{
	return p->i ? p->t[p->i - 1].loc.end : 0;
}

struct tquel_loc tq_span(struct parser *p, struct tquel_loc from)
{
	size_t end = tq_prev_end(p);
	if (end > from.off)
		from.end = end;
	return from;
}

/* Where an error about the current token points: the token, or just after the previous
 * token when the current one is the end of input or on a later line. */
static struct tquel_loc here(struct parser *p)
{
	struct tquel_token *t = peek(p);
	struct tquel_token *pr = p->i ? &p->t[p->i - 1] : NULL;
	if (pr && (t->kind == TT_EOF || t->loc.line > pr->loc.line)) {
		struct tquel_loc l = pr->loc;
		l.col += (uint32_t)(pr->loc.end - pr->loc.off);
		l.off = l.end = pr->loc.end;
		return l;
	}
	return t->loc;
}

static const char *describe(struct parser *p, const struct tquel_token *t)
{
	switch (t->kind) {
	case TT_EOF:
		return "end of input";
	case TT_STRING:
		return "a string";
	default: {
		const char *x = tq_excerpt(p, t->loc.off, t->loc.end);
		char *s = tquel_alloc(p->a, strlen(x) + 3);
		sprintf(s, "'%s'", x);
		return s;
	}
	}
}

void tq_expected_hint(struct parser *p, size_t ctx, const char *what, const char *hint)
{
	struct tquel_token *t = peek(p);
	if (t->kind == TT_ERROR) {
		tq_error(p, t->loc, "%s", t->error);
		return;
	}
	char after[64] = "";
	size_t end = tq_prev_end(p);
	if (end > ctx)
		snprintf(after, sizeof after, " after '%s'", tq_excerpt(p, ctx, end));
	tq_error(p, here(p), "expected %s%s, found %s%s%s%s", what, after, describe(p, t),
	         hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
}

void tq_expected(struct parser *p, size_t ctx, const char *what)
{
	tq_expected_hint(p, ctx, what, NULL);
}

bool tq_enter(struct parser *p)
{
	if (++p->depth > TQUEL_MAX_DEPTH) {
		tq_error(p, here(p), "expression nested more than %d deep", TQUEL_MAX_DEPTH);
		return false;
	}
	return true;
}

struct tquel_expr *tq_node(struct parser *p, enum tquel_kind kind, struct tquel_loc loc)
{
	struct tquel_expr *e = tquel_alloc(p->a, sizeof *e);
	e->kind = kind;
	e->loc = loc;
	e->height = 1;
	return e;
}

struct tquel_expr *tq_below(struct parser *p, struct tquel_expr *e, const struct tquel_expr *child,
                            struct tquel_loc at)
{
	if (!e || !child)
		return e;
	if (child->height + 1 > e->height)
		e->height = child->height + 1;
	if (e->height > TQUEL_MAX_HEIGHT) {
		tq_error(p, at,
		         "expression more than %d operators deep (a chain of 'and', 'or', '+', "
		         "... counts each link): split the query or use fewer terms",
		         TQUEL_MAX_HEIGHT);
		return NULL;
	}
	return e;
}

const char *tq_name(struct parser *p, const struct tquel_token *t)
{
	return tquel_strndup(p->a, t->start, t->len);
}

struct tquel_expr *tq_parenthesized(struct parser *p, struct tquel_expr *(*inner)(struct parser *p))
{
	struct tquel_loc open = advance(p)->loc;
	if (!tq_enter(p))
		return NULL;
	struct tquel_expr *e = inner(p);
	p->depth--;
	if (!e)
		return NULL;
	if (!at(p, TT_RPAREN)) {
		char hint[64];
		snprintf(hint, sizeof hint, "to close '(' at %u:%u", open.line, open.col);
		tq_expected_hint(p, open.off, "')'", hint);
		return NULL;
	}
	advance(p);
	e->parens = true;
	e->loc = tq_span(p, open); /* the parentheses included */
	return e;
}
