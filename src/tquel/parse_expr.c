/* Value expressions of the target list and the where clause, and aggregates:
 *   or > and > not > comparison (no chains) > + - > * / > unary - > primary. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tquel/parser.h"

static struct tquel_expr *parse_or(struct parser *p);

static struct tquel_expr *binary(struct parser *p, enum tquel_kind k, struct tquel_expr *a,
                                 struct tquel_expr *b)
{
	struct tquel_expr *e = tq_node(p, k, a->loc);
	e->u.op.a = a;
	e->u.op.b = b;
	e->loc = tq_span(p, a->loc);
	return tq_below(p, tq_below(p, e, a, b ? b->loc : e->loc), b, b ? b->loc : e->loc);
}

static struct tquel_expr *number(struct parser *p)
{
	struct tquel_token *t = advance(p);
	struct tquel_expr *e = tq_node(p, TQ_NUMBER, t->loc);
	const char *lex = tq_name(p, t);
	e->u.number.lexeme = lex;
	e->u.number.is_int = !strchr(lex, '.');
	errno = 0;
	if (e->u.number.is_int) {
		e->u.number.i = strtoll(lex, NULL, 10);
		e->u.number.d = (double)e->u.number.i;
	} else {
		e->u.number.d = strtod(lex, NULL);
	}
	if (errno == ERANGE) {
		tq_error(p, t->loc, "number %s is out of range%s",
		         tq_excerpt(p, t->loc.off, t->loc.end),
		         e->u.number.is_int ? " (integers are 64-bit)" : "");
		return NULL;
	}
	return e;
}

const char *const tquel_aggfn_names[TQ_AGGFN_COUNT] = {
    [TQ_COUNT] = "count", [TQ_SUM] = "sum",   [TQ_AVG] = "avg",     [TQ_MIN] = "min",
    [TQ_MAX] = "max",     [TQ_ANY] = "any",   [TQ_STDEV] = "stdev", [TQ_FIRST] = "first",
    [TQ_LAST] = "last",   [TQ_RATE] = "rate", [TQ_AVGTI] = "avgti", [TQ_VARTS] = "varts",
};

/* The aggregate function a word before '(' names: a keyword (count ... max) or one of
 * the names after them; -1 for none. */
static int aggregate_fn(struct parser *p, const struct tquel_token *t)
{
	if (t->kind != TT_WORD || peek2(p)->kind != TT_LPAREN)
		return t->kind == TT_WORD && t->kw >= KW_COUNT && t->kw <= KW_MAX ? 0 : -1;
	if (t->kw >= KW_COUNT && t->kw <= KW_MAX)
		return 0;
	for (int f = TQ_ANY; f < TQ_AGGFN_COUNT; f++)
		if (strlen(tquel_aggfn_names[f]) == t->len &&
		    !strncasecmp(tquel_aggfn_names[f], t->start, t->len))
			return f;
	return -1;
}

bool tq_at_aggregate(struct parser *p)
{
	return aggregate_fn(p, peek(p)) >= 0;
}

/* TQuel's `for each week`: a calendar-free unit, as long as its name says */
static bool parse_named_span(struct parser *p, struct tquel_agg *g)
{
	static const struct {
		const char *name;
		int64_t ns;
	} named[] = {{"second", 1000000000},
	             {"minute", 60000000000},
	             {"hour", 3600000000000},
	             {"day", 86400000000000},
	             {"week", 7 * 86400000000000}};
	const struct tquel_token *w = peek(p);
	for (size_t i = 0; w->kind == TT_WORD && i < sizeof named / sizeof named[0]; i++)
		if (strlen(named[i].name) == w->len &&
		    !strncasecmp(named[i].name, w->start, w->len)) {
			advance(p);
			g->window = TQ_SPAN;
			g->span_ns = named[i].ns;
			g->span_text = named[i].name;
			return true;
		}
	return false;
}

/* for each NUMBER UNIT: the window's length in nanoseconds */
static bool parse_span(struct parser *p, struct tquel_agg *g, size_t ctx)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"ns", 1},     {"us", 1e3},   {"ms", 1e6},   {"s", 1e9},
	             {"min", 60e9}, {"h", 3600e9}, {"d", 86400e9}};
	struct tquel_token *n = advance(p);
	struct tquel_token *u = peek(p);
	int k = -1;
	for (int i = 0; u->kind == TT_WORD && i < (int)(sizeof units / sizeof units[0]); i++)
		if (strlen(units[i].unit) == u->len && !strncmp(units[i].unit, u->start, u->len))
			k = i;
	if (k < 0)
		return tq_expected_hint(p, ctx, "a unit of time", "ns, us, ms, s, min, h or d"),
		       false;
	advance(p);
	double ns = strtod(tq_name(p, n), NULL) * units[k].ns;
	if (!(ns >= 1) || ns > 9.2e18) {
		tq_error(p, n->loc, "a moving window lasts from 1 ns to 292 years, not %.*s %s",
		         (int)n->len, n->start, units[k].unit);
		return false;
	}
	g->window = TQ_SPAN;
	g->span_ns = (int64_t)ns;
	char text[300];
	snprintf(text, sizeof text, "%.*s %s", (int)n->len, n->start, units[k].unit);
	g->span_text = tquel_strndup(p->a, text, strlen(text));
	return true;
}

static struct tquel_expr *aggregate(struct parser *p)
{
	int named = aggregate_fn(p, peek(p));
	struct tquel_token *fn = advance(p);
	static const enum tquel_aggfn fns[] = {
	    [KW_COUNT] = TQ_COUNT, [KW_COUNTU] = TQ_COUNT, [KW_SUM] = TQ_SUM, [KW_SUMU] = TQ_SUM,
	    [KW_AVG] = TQ_AVG,     [KW_AVGU] = TQ_AVG,     [KW_MIN] = TQ_MIN, [KW_MAX] = TQ_MAX,
	};
	struct tquel_expr *e = tq_node(p, TQ_AGG, fn->loc);
	struct tquel_agg *g = &e->u.agg;
	g->fn = named > 0 ? (enum tquel_aggfn)named : fns[fn->kw];
	g->unique = fn->kw == KW_COUNTU || fn->kw == KW_SUMU || fn->kw == KW_AVGU;
	if (!at(p, TT_LPAREN))
		return tq_expected(p, fn->loc.off, "'('"), NULL;
	struct tquel_loc open = advance(p)->loc;
	if (!(g->arg = parse_or(p)))
		return NULL;
	if (at_kw(p, KW_BY)) {
		size_t cap = 0;
		do {
			advance(p);
			struct tquel_expr *b = parse_or(p);
			if (!b)
				return NULL;
			if (g->nby == cap) {
				cap = cap ? cap * 2 : 4;
				struct tquel_expr **v = tquel_alloc(p->a, cap * sizeof *v);
				if (g->nby)
					memcpy(v, g->by, g->nby * sizeof *v);
				g->by = v;
			}
			g->by[g->nby++] = b;
		} while (at(p, TT_COMMA));
	}
	bool windowed = at_kw(p, KW_FOR);
	if (windowed) {
		size_t ctx = advance(p)->loc.off;
		if (at_kw(p, KW_EVER)) {
			g->window = TQ_EVER;
		} else if (at_kw(p, KW_EACH)) {
			advance(p);
			if (at(p, TT_NUMBER)) {
				if (!parse_span(p, g, ctx))
					return NULL;
			} else if (parse_named_span(p, g)) {
				/* for each hour */
			} else if (!at_kw(p, KW_INSTANT)) {
				return tq_expected_hint(
				           p, ctx, "'instant' or a span",
				           "a moving window: for each 10 ms, for each hour"),
				       NULL;
			} else {
				g->window = TQ_INSTANT;
			}
		} else {
			return tq_expected(p, ctx, "'each instant', 'each SPAN' or 'ever'"), NULL;
		}
		if (g->window != TQ_SPAN)
			advance(p);
	}
	if (at_kw(p, KW_WHERE)) {
		advance(p);
		if (!(g->where = parse_or(p)))
			return NULL;
	}
	if (at_kw(p, KW_WHEN)) {
		advance(p);
		if (!(g->when = tq_parse_when(p)))
			return NULL;
	}
	if (!at(p, TT_RPAREN)) {
		char hint[64];
		snprintf(hint, sizeof hint, "to close '%s%s(' at %u:%u", tquel_aggfn_names[g->fn],
		         g->unique ? "U" : "", open.line, open.col);
		const char *what = g->when    ? "')'"
		                   : g->where ? "'when' or ')'"
		                   : windowed ? "'where', 'when' or ')'"
		                   : g->nby   ? "',', 'for', 'where', 'when' or ')'"
		                              : "'by', 'for', 'where', 'when' or ')'";
		return tq_expected_hint(p, fn->loc.off, what, hint), NULL;
	}
	advance(p);
	e->loc = tq_span(p, e->loc);
	bool fits = tq_below(p, e, g->arg, e->loc);
	for (size_t i = 0; fits && i < g->nby; i++)
		fits = tq_below(p, e, g->by[i], e->loc);
	fits = fits && tq_below(p, e, g->where, e->loc);
	return fits ? tq_below(p, e, g->when, e->loc) : NULL;
}

struct tquel_expr *tq_parse_aggregate(struct parser *p)
{
	if (!tq_enter(p))
		return NULL;
	struct tquel_expr *e = aggregate(p);
	p->depth--;
	return e;
}

static struct tquel_expr *primary(struct parser *p)
{
	struct tquel_token *t = peek(p);
	if (t->kind == TT_NUMBER)
		return number(p);
	if (t->kind == TT_STRING) {
		struct tquel_expr *e = tq_node(p, TQ_STRING, t->loc);
		e->u.string.s = advance(p)->str;
		return e;
	}
	if (t->kind == TT_LPAREN)
		return tq_parenthesized(p, parse_or);
	if (tq_at_aggregate(p))
		return tq_parse_aggregate(p);
	if (t->kind == TT_WORD && t->kw == KW_NONE) {
		if (peek2(p)->kind != TT_DOT) {
			const char *w = tq_name(p, t);
			tq_error(p, t->loc,
			         "'%s' is not a value: write V.attribute for an attribute of tuple "
			         "variable V, or \"%s\" for a string",
			         w, w);
			return NULL;
		}
		struct tquel_expr *e = tq_node(p, TQ_ATTR, t->loc);
		e->u.attr.var = tq_name(p, advance(p));
		advance(p);
		if (peek(p)->kind != TT_WORD)
			return tq_expected(p, t->loc.off, "an attribute name"), NULL;
		e->u.attr.name = tq_name(p, advance(p)); /* any word, keywords included */
		e->loc = tq_span(p, e->loc);
		return e;
	}
	/* == and <> written together */
	enum tquel_tok prev =
	    p->i && p->t[p->i - 1].loc.end == t->loc.off ? p->t[p->i - 1].kind : TT_EOF;
	const char *hint = prev == TT_EQ && t->kind == TT_EQ   ? "equality is '='"
	                   : prev == TT_LT && t->kind == TT_GT ? "not-equal is '!='"
	                                                       : NULL;
	tq_expected_hint(p, p->i ? p->t[p->i - 1].loc.off : 0, "an expression", hint);
	return NULL;
}

static struct tquel_expr *unary(struct parser *p)
{
	if (!at(p, TT_MINUS))
		return primary(p);
	struct tquel_loc loc = advance(p)->loc;
	if (!tq_enter(p))
		return NULL;
	struct tquel_expr *a = unary(p);
	p->depth--;
	if (!a)
		return NULL;
	struct tquel_expr *e = tq_node(p, TQ_NEG, loc);
	e->u.op.a = a;
	e->loc = tq_span(p, loc);
	return tq_below(p, e, a, loc);
}

static struct tquel_expr *mul(struct parser *p)
{
	struct tquel_expr *a = unary(p);
	while (a && (at(p, TT_STAR) || at(p, TT_SLASH))) {
		enum tquel_kind k = advance(p)->kind == TT_STAR ? TQ_MUL : TQ_DIV;
		struct tquel_expr *b = unary(p);
		a = b ? binary(p, k, a, b) : NULL;
	}
	return a;
}

static struct tquel_expr *add(struct parser *p)
{
	struct tquel_expr *a = mul(p);
	while (a && (at(p, TT_PLUS) || at(p, TT_MINUS))) {
		enum tquel_kind k = advance(p)->kind == TT_PLUS ? TQ_ADD : TQ_SUB;
		struct tquel_expr *b = mul(p);
		a = b ? binary(p, k, a, b) : NULL;
	}
	return a;
}

static bool comparison(enum tquel_tok t, enum tquel_kind *k)
{
	static const enum tquel_kind ks[] = {[TT_EQ] = TQ_EQ, [TT_NE] = TQ_NE, [TT_LT] = TQ_LT,
	                                     [TT_LE] = TQ_LE, [TT_GT] = TQ_GT, [TT_GE] = TQ_GE};
	if (t < TT_EQ || t > TT_GE)
		return false;
	*k = ks[t];
	return true;
}

static struct tquel_expr *compare(struct parser *p)
{
	struct tquel_expr *a = add(p);
	enum tquel_kind k;
	if (!a || !comparison(peek(p)->kind, &k))
		return a;
	advance(p);
	struct tquel_expr *b = add(p);
	if (!b)
		return NULL;
	a = binary(p, k, a, b);
	if (comparison(peek(p)->kind, &k)) {
		tq_error(p, peek(p)->loc, "comparisons do not chain: join them with 'and'");
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
	struct tquel_expr *a = parse_not(p);
	p->depth--;
	if (!a)
		return NULL;
	struct tquel_expr *e = tq_node(p, TQ_NOT, loc);
	e->u.op.a = a;
	e->loc = tq_span(p, loc);
	return tq_below(p, e, a, loc);
}

static struct tquel_expr *parse_and(struct parser *p)
{
	struct tquel_expr *a = parse_not(p);
	while (a && at_kw(p, KW_AND)) {
		advance(p);
		struct tquel_expr *b = parse_not(p);
		a = b ? binary(p, TQ_AND, a, b) : NULL;
	}
	return a;
}

static struct tquel_expr *parse_or(struct parser *p)
{
	struct tquel_expr *a = parse_and(p);
	while (a && at_kw(p, KW_OR)) {
		advance(p);
		struct tquel_expr *b = parse_and(p);
		a = b ? binary(p, TQ_OR, a, b) : NULL;
	}
	return a;
}

struct tquel_expr *tq_parse_value(struct parser *p)
{
	return parse_or(p);
}
