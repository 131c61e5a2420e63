/* Temporal expressions (valid clause) and predicates (when clause):
 *   or > and > not > precede, equal > overlap, extend > begin of, end of > primary.
 * `overlap` is both a constructor (the intersection) and a predicate (they share an
 * instant): it is parsed as the constructor and becomes the predicate where a predicate
 * is needed, so `S overlap W` in a when clause is the predicate, and
 * `(S overlap W) precede X` compares the intersection. In a chain of constructors used
 * as a predicate, the last `overlap` is the predicate: `A overlap B extend C` asks
 * whether A overlaps B extend C. */
#include <string.h>

#include "tquel/parser.h"

static struct tquel_expr *parse_or(struct parser *p);

bool tquel_is_temporal_expr(enum tquel_kind k)
{
	return k == TQ_TVAR || k == TQ_BEGIN_OF || k == TQ_END_OF || k == TQ_INTERSECT ||
	       k == TQ_EXTEND || k == TQ_TCONST;
}

bool tquel_is_temporal_pred(enum tquel_kind k)
{
	return k == TQ_PRECEDE || k == TQ_OVERLAPS || k == TQ_EQUAL || k == TQ_AND || k == TQ_OR ||
	       k == TQ_NOT;
}

/* A chain of constructors x0 op1 x1 ... opn xn (left-deep; parentheses around an operand
 * hide its operators, parentheses around the whole chain do not) used as a predicate:
 * its last `overlap`, opk, is the predicate, between x0 op1 ... x(k-1) and xk op(k+1)
 * ... xn. Rebuilds the right side in place (no recursion: chains may be
 * long) and returns the predicate, or NULL when the chain has no `overlap`. */
static struct tquel_expr *split_at_overlap(struct tquel_expr *e)
{
	struct tquel_expr *m = e;
	while (m->kind == TQ_EXTEND) {
		struct tquel_expr *a = m->u.op.a;
		if (a->parens || (a->kind != TQ_EXTEND && a->kind != TQ_INTERSECT))
			return NULL;
		m = a;
	}
	if (m->kind != TQ_INTERSECT)
		return NULL;
	if (m == e) {
		e->kind = TQ_OVERLAPS;
		return e;
	}
	struct tquel_loc whole = e->loc; /* the whole chain, its parentheses included */
	bool parens = e->parens;
	/* reverse the spine from e down to m's parent, then relink it upwards over m's
	 * right operand: xk op(k+1) x(k+1) ... */
	struct tquel_expr *prev = NULL, *cur = e;
	while (cur != m) {
		struct tquel_expr *next = cur->u.op.a;
		cur->u.op.a = prev;
		prev = cur;
		cur = next;
	}
	struct tquel_expr *r = m->u.op.b;
	struct tquel_loc start = r->loc;
	for (struct tquel_expr *n = prev, *up; n; n = up) {
		up = n->u.op.a;
		n->u.op.a = r;
		n->loc.line = start.line;
		n->loc.col = start.col;
		n->loc.off = start.off;
		r = n;
	}
	m->u.op.b = r;
	m->kind = TQ_OVERLAPS;
	m->loc = whole;
	m->parens = parens;
	e->parens = false;
	e->loc.end = e->u.op.b->loc.end;
	return m;
}

/* The operand of and, or, not, or a whole when clause. */
static struct tquel_expr *need_pred(struct parser *p, struct tquel_expr *e)
{
	if (!e)
		return NULL;
	if (e->kind == TQ_INTERSECT || e->kind == TQ_EXTEND) {
		struct tquel_expr *s = split_at_overlap(e);
		if (s)
			return s;
	}
	if (tquel_is_temporal_pred(e->kind))
		return e;
	tq_expected(p, e->loc.off, "'precede', 'overlap' or 'equal'");
	return NULL;
}

/* The operand of a constructor or a predicate, or a valid clause. */
static struct tquel_expr *need_time(struct parser *p, struct tquel_expr *e)
{
	if (!e || tquel_is_temporal_expr(e->kind) || e->kind == TQ_AGG)
		return e;
	tq_error(p, e->loc, "expected a temporal expression, found the predicate '%s'",
	         tq_excerpt(p, e->loc.off, e->loc.end));
	return NULL;
}

static struct tquel_expr *op(struct parser *p, enum tquel_kind k, struct tquel_loc loc,
                             struct tquel_expr *a, struct tquel_expr *b)
{
	struct tquel_expr *e = tq_node(p, k, loc);
	e->u.op.a = a;
	e->u.op.b = b;
	e->loc = tq_span(p, loc);
	return tq_below(p, tq_below(p, e, a, b ? b->loc : e->loc), b, b ? b->loc : e->loc);
}

static struct tquel_expr *unary(struct parser *p)
{
	struct tquel_token *t = peek(p);
	if (t->kind == TT_WORD && (t->kw == KW_BEGIN || t->kw == KW_END)) {
		advance(p);
		if (!at_kw(p, KW_OF))
			return tq_expected(p, t->loc.off, "'of'"), NULL;
		advance(p);
		if (!tq_enter(p))
			return NULL;
		struct tquel_expr *a = need_time(p, unary(p));
		p->depth--;
		if (!a)
			return NULL;
		return op(p, t->kw == KW_BEGIN ? TQ_BEGIN_OF : TQ_END_OF, t->loc, a, NULL);
	}
	if (tq_at_aggregate(p)) /* the valid time of its value */
		return tq_parse_aggregate(p);
	if (t->kind == TT_WORD && t->kw == KW_NONE) {
		if (peek2(p)->kind == TT_DOT) {
			const char *v = tq_name(p, t);
			tq_error(
			    p, t->loc,
			    "an attribute has no time: write %s, begin of %s or end of %s here, "
			    "and compare attributes in the where clause",
			    v, v, v);
			return NULL;
		}
		struct tquel_expr *e = tq_node(p, TQ_TVAR, t->loc);
		e->u.tvar.name = tq_name(p, advance(p));
		return e;
	}
	if (t->kind == TT_STRING) {
		struct tquel_expr *e = tq_node(p, TQ_TCONST, t->loc);
		char why[160];
		e->u.tconst.s = t->str;
		if (!tquel_time_constant(t->str, &e->u.tconst.which, &e->u.tconst.ns, why,
		                         sizeof why)) {
			tq_error(p, t->loc, "%s", why);
			return NULL;
		}
		advance(p);
		return e;
	}
	if (t->kind == TT_LPAREN)
		return tq_parenthesized(p, parse_or);
	tq_expected(p, p->i ? p->t[p->i - 1].loc.off : 0,
	            "a tuple variable, a temporal constant (\"now\", a date), 'begin of', 'end "
	            "of' or '('");
	return NULL;
}

static struct tquel_expr *construct(struct parser *p)
{
	struct tquel_expr *a = unary(p);
	while (a && (at_kw(p, KW_OVERLAP) || at_kw(p, KW_EXTEND))) {
		enum tquel_kind k = advance(p)->kw == KW_OVERLAP ? TQ_INTERSECT : TQ_EXTEND;
		if (!need_time(p, a))
			return NULL;
		struct tquel_expr *b = need_time(p, unary(p));
		a = b ? op(p, k, a->loc, a, b) : NULL;
	}
	return a;
}

static struct tquel_expr *compare(struct parser *p)
{
	struct tquel_expr *a = construct(p);
	if (!a || !(at_kw(p, KW_PRECEDE) || at_kw(p, KW_EQUAL)))
		return a;
	enum tquel_kind k = advance(p)->kw == KW_PRECEDE ? TQ_PRECEDE : TQ_EQUAL;
	if (!need_time(p, a))
		return NULL;
	struct tquel_expr *b = need_time(p, construct(p));
	if (!b)
		return NULL;
	a = op(p, k, a->loc, a, b);
	if (at_kw(p, KW_PRECEDE) || at_kw(p, KW_EQUAL) || at_kw(p, KW_OVERLAP)) {
		tq_error(p, peek(p)->loc, "temporal predicates do not chain: join them with 'and'");
		return NULL;
	}
	return a;
}

static struct tquel_expr *parse_not(struct parser *p)
{
	if (!at_kw(p, KW_NOT))
		return compare(p);
	struct tquel_loc loc = advance(p)->loc;
	if (!tq_enter(p))
		return NULL;
	struct tquel_expr *a = need_pred(p, parse_not(p));
	p->depth--;
	return a ? op(p, TQ_NOT, loc, a, NULL) : NULL;
}

static struct tquel_expr *parse_and(struct parser *p)
{
	struct tquel_expr *a = parse_not(p);
	while (a && at_kw(p, KW_AND)) {
		if (!(a = need_pred(p, a)))
			return NULL;
		advance(p);
		struct tquel_expr *b = need_pred(p, parse_not(p));
		a = b ? op(p, TQ_AND, a->loc, a, b) : NULL;
	}
	return a;
}

static struct tquel_expr *parse_or(struct parser *p)
{
	struct tquel_expr *a = parse_and(p);
	while (a && at_kw(p, KW_OR)) {
		if (!(a = need_pred(p, a)))
			return NULL;
		advance(p);
		struct tquel_expr *b = need_pred(p, parse_and(p));
		a = b ? op(p, TQ_OR, a->loc, a, b) : NULL;
	}
	return a;
}

struct tquel_expr *tq_parse_when(struct parser *p)
{
	return need_pred(p, parse_or(p));
}

struct tquel_expr *tq_parse_time(struct parser *p)
{
	return need_time(p, parse_or(p));
}
