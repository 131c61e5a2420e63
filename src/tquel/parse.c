/* Statements: range and retrieve, their clauses, error recovery at the next statement. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tquel/parser.h"

/* A relation name: any word but the two that start statements (a sensor type may be
 * called Count or End). */
static bool at_relation(struct parser *p)
{
	return peek(p)->kind == TT_WORD && peek(p)->kw != KW_RANGE && peek(p)->kw != KW_RETRIEVE;
}

/* After a complete statement: the next statement or the end of the text. */
static void end_statement(struct parser *p, size_t ctx, const char *clauses)
{
	if (at(p, TT_EOF) || at_kw(p, KW_RANGE) || at_kw(p, KW_RETRIEVE))
		return;
	char what[160];
	snprintf(what, sizeof what, "%s'range', 'retrieve' or end of input", clauses);
	tq_expected(p, ctx, what);
}

/* range of V is R, R a name (dotted: a.b.c) or Clock[n] */
static bool parse_range(struct parser *p, struct tquel_stmt *s)
{
	size_t ctx = peek(p)->loc.off;
	advance(p);
	if (!at_kw(p, KW_OF))
		return tq_expected(p, ctx, "'of'"), false;
	advance(p);
	if (!at_name(p))
		return tq_expected(p, ctx, "a tuple variable name"), false;
	struct tquel_range *r = &s->u.range;
	r->var_loc = peek(p)->loc;
	r->var = tq_name(p, advance(p));
	if (!at_kw(p, KW_IS))
		return tq_expected(p, ctx, "'is'"), false;
	advance(p);
	if (!at_relation(p))
		return tq_expected(p, ctx, "a relation name"), false;
	struct tquel_token *rel = advance(p), *last = rel;
	r->relation_loc = rel->loc;
	/* Sensors registered without a .vgl are named like `app.request`: a dotted name
	 * written without spaces is one relation name. */
	while (at(p, TT_DOT) && peek(p)->start == last->start + last->len &&
	       peek2(p)->kind == TT_WORD && peek2(p)->start == peek(p)->start + 1) {
		advance(p);
		last = advance(p);
	}
	r->relation =
	    tquel_strndup(p->a, rel->start, (size_t)(last->start + last->len - rel->start));
	if (at(p, TT_DOT)) {
		tq_error(p, peek(p)->loc,
		         "a relation name with dots is written without spaces, as in app.request");
		return false;
	}
	if (!strcmp(r->relation, "Clock"))
		r->clock_period = 1;
	if (at(p, TT_LBRACK)) {
		if (!r->clock_period) {
			tq_error(p, peek(p)->loc,
			         "'[n]' follows only the relation Clock (a clock ticking every n "
			         "ticks), not '%s'",
			         r->relation);
			return false;
		}
		advance(p);
		struct tquel_token *n = peek(p);
		if (n->kind != TT_NUMBER)
			return tq_expected(p, ctx, "a whole number of ticks"), false;
		char *end;
		const char *lex = tq_name(p, n);
		unsigned long long v = strtoull(lex, &end, 10);
		if (*end || v == 0 || v > INT64_MAX) {
			tq_error(p, n->loc,
			         "the period of Clock[n] is a whole number from 1 to %lld, "
			         "not %s",
			         (long long)INT64_MAX, lex);
			return false;
		}
		r->clock_period = v;
		advance(p);
		if (!at(p, TT_RBRACK))
			return tq_expected(p, ctx, "']'"), false;
		advance(p);
	}
	r->relation_loc = tq_span(p, r->relation_loc);
	end_statement(p, ctx, "");
	return !p->failed;
}

static bool is_operator(enum tquel_tok k)
{
	return k >= TT_EQ && k <= TT_SLASH;
}

static bool parse_target(struct parser *p, struct tquel_target *t)
{
	struct tquel_token *w = peek(p);
	t->loc = w->loc;
	if (w->kind == TT_WORD && peek2(p)->kind == TT_EQ) {
		t->name = tq_name(p, w);
		t->renamed = true;
		advance(p);
		advance(p);
		t->value = tq_parse_value(p);
		if (!t->value)
			return false;
	} else if (w->kind == TT_WORD && w->kw == KW_NONE && peek2(p)->kind == TT_DOT) {
		t->value = tq_parse_value(p);
		if (!t->value)
			return false;
		if (t->value->kind != TQ_ATTR) {
			tq_error(p, t->value->loc,
			         "a computed target needs a name: write 'name = %s'",
			         tq_excerpt(p, t->value->loc.off, t->value->loc.end));
			return false;
		}
		t->name = t->value->u.attr.name;
		/* Quel's V.all: every attribute of V, expanded when bound */
		t->all = !strcasecmp(t->name, "all");
	} else {
		tq_expected(p, peek(p)->loc.off, "a target ('name = expression' or 'V.attribute')");
		return false;
	}
	t->loc = tq_span(p, t->loc);
	return true;
}

static bool parse_targets(struct parser *p, struct tquel_retrieve *r, size_t ctx)
{
	if (!at(p, TT_LPAREN))
		return tq_expected_hint(p, ctx, "'(' and a target list",
		                        at(p, TT_DOT) ? "the target list is in parentheses: "
		                                        "retrieve (V.attribute)"
		                                      : NULL),
		       false;
	struct tquel_loc open = advance(p)->loc;
	size_t cap = 0;
	for (;;) {
		if (r->ntargets == cap) {
			cap = cap ? cap * 2 : 4;
			struct tquel_target *v = tquel_alloc(p->a, cap * sizeof *v);
			if (r->ntargets)
				memcpy(v, r->targets, r->ntargets * sizeof *v);
			r->targets = v;
		}
		struct tquel_target *t = &r->targets[r->ntargets];
		if (!parse_target(p, t))
			return false;
		r->ntargets++;
		if (at(p, TT_COMMA)) {
			advance(p);
			continue;
		}
		if (at(p, TT_RPAREN)) {
			advance(p);
			return true;
		}
		char hint[64];
		snprintf(hint, sizeof hint, "the target list opens at %u:%u", open.line, open.col);
		tq_expected_hint(p, t->loc.off, "',' or ')'", hint);
		return false;
	}
}

static bool parse_valid(struct parser *p, struct tquel_valid *v)
{
	size_t ctx = v->loc.off;
	if (at_kw(p, KW_AT)) {
		advance(p);
		v->kind = TQ_VALID_AT;
		v->at = tq_parse_time(p);
		return v->at != NULL;
	}
	if (!at_kw(p, KW_FROM))
		return tq_expected(p, ctx, "'at' or 'from'"), false;
	advance(p);
	v->kind = TQ_VALID_FROM_TO;
	v->from = tq_parse_time(p);
	if (!v->from)
		return false;
	if (!at_kw(p, KW_TO))
		return tq_expected(p, ctx, "'to'"), false;
	advance(p);
	v->to = tq_parse_time(p);
	return v->to != NULL;
}

/* A word spelled `w` (any case), keyword or not: `as` and `through` are words only
 * there, so that they still name variables and attributes. */
static bool at_word(const struct tquel_token *t, const char *w)
{
	size_t n = strlen(w);
	return t->kind == TT_WORD && t->len == n && !strncasecmp(t->start, w, n);
}

/* as of E [through E2] (after 'as of') */
static bool parse_asof(struct parser *p, struct tquel_asof *a)
{
	if (!(a->at = tq_parse_time(p)))
		return false;
	if (at_word(peek(p), "through")) {
		advance(p);
		if (!(a->through = tq_parse_time(p)))
			return false;
	}
	return true;
}

/* retrieve [into] [NAME] (targets) {valid | where | when | as of}, each clause at most
 * once */
static bool parse_retrieve(struct parser *p, struct tquel_stmt *s)
{
	struct tquel_retrieve *r = &s->u.retrieve;
	size_t ctx = peek(p)->loc.off;
	advance(p);
	if (at_kw(p, KW_UNIQUE)) {
		advance(p);
		r->unique = true;
	}
	bool into = at_kw(p, KW_INTO);
	if (into) {
		advance(p);
		if (!at_relation(p))
			return tq_expected(p, ctx, "a result relation name"), false;
	}
	if (into || at_name(p) || (at_relation(p) && peek2(p)->kind == TT_LPAREN)) {
		r->into_loc = peek(p)->loc;
		r->into = tq_name(p, advance(p));
	}
	if (!parse_targets(p, r, ctx))
		return false;
	struct tquel_loc seen[4] = {{0}};
	size_t clause = ctx; /* where the last clause starts */
	for (;;) {
		bool asof = at_word(peek(p), "as") && peek2(p)->kw == KW_OF;
		int which = at_kw(p, KW_VALID)   ? 0
		            : at_kw(p, KW_WHERE) ? 1
		            : at_kw(p, KW_WHEN)  ? 2
		            : asof               ? 3
		                                 : -1;
		if (which < 0)
			break;
		struct tquel_token *kw = advance(p);
		if (seen[which].line) {
			tq_error(p, kw->loc, "a second '%s' clause (the first is at %u:%u)%s",
			         asof ? "as of" : tquel_kw_name(kw->kw), seen[which].line,
			         seen[which].col, asof ? "" : "; join conditions with 'and'");
			return false;
		}
		seen[which] = kw->loc;
		clause = kw->loc.off;
		if (which == 0) {
			r->valid.loc = kw->loc;
			if (!parse_valid(p, &r->valid))
				return false;
			r->valid.loc = tq_span(p, r->valid.loc);
		} else if (which == 1) {
			if (!(r->where = tq_parse_value(p)))
				return false;
		} else if (which == 3) {
			advance(p); /* of */
			r->asof.loc = kw->loc;
			if (!parse_asof(p, &r->asof))
				return false;
			r->asof.loc = tq_span(p, r->asof.loc);
		} else {
			if (!(r->when = tq_parse_when(p)))
				return false;
		}
	}
	struct tquel_token *t = peek(p);
	if (t->kind != TT_EOF && !at_kw(p, KW_RANGE) && !at_kw(p, KW_RETRIEVE) &&
	    (is_operator(t->kind) || t->kind == TT_WORD)) {
		/* the clause before ended early: say what could have continued it */
		tq_expected(p, clause,
		            "an operator, 'valid', 'where', 'when', 'as of', 'range', 'retrieve' "
		            "or end of input");
		return false;
	}
	end_statement(p, ctx, "'valid', 'where', 'when', 'as of', ");
	return !p->failed;
}

static void push_stmt(struct parser *p, const struct tquel_stmt *s, size_t *cap)
{
	struct tquel_query *q = p->q;
	if (q->nstmts == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		struct tquel_stmt *v = tquel_alloc(p->a, *cap * sizeof *v);
		if (q->nstmts)
			memcpy(v, q->stmts, q->nstmts * sizeof *v);
		q->stmts = v;
	}
	q->stmts[q->nstmts++] = *s;
}

/* Skips to the next `range` or `retrieve` (not an attribute name after '.'), reporting
 * the lexical errors passed over on later lines than the last error (one line, one
 * error: `'P1'` is one mistake, not two). */
static void recover(struct parser *p, size_t start)
{
	size_t failed_at = p->i; /* a lexical error there is reported already */
	if (p->i == start)
		advance(p);
	while (!at(p, TT_EOF) && p->q->nerrors < TQUEL_MAX_ERRORS) {
		bool after_dot = p->i && p->t[p->i - 1].kind == TT_DOT;
		if ((at_kw(p, KW_RANGE) || at_kw(p, KW_RETRIEVE)) && !after_dot)
			break;
		uint32_t last = p->q->nerrors ? p->q->errors[p->q->nerrors - 1].loc.line : 0;
		if (at(p, TT_ERROR) && p->i != failed_at && peek(p)->loc.line > last)
			tq_error(p, peek(p)->loc, "%s", peek(p)->error);
		advance(p);
	}
	p->failed = false;
}

struct tquel_query *tquel_parse(const char *source, const char *text, size_t len)
{
	struct tquel_arena *a = tquel_arena_new();
	struct tquel_query *q = tquel_alloc(a, sizeof *q);
	q->arena = a;
	q->source =
	    tquel_strndup(a, source ? source : "<query>", strlen(source ? source : "<query>"));
	q->text = tquel_strndup(a, text ? text : "", text ? len : 0);
	q->len = text ? len : 0;
	struct tquel_tokens toks;
	tquel_lex(a, q->text, q->len, &toks);
	struct parser p = {.q = q, .a = a, .t = toks.v};
	size_t cap = 0;
	while (!at(&p, TT_EOF) && q->nerrors < TQUEL_MAX_ERRORS) {
		size_t start = p.i;
		struct tquel_stmt s;
		memset(&s, 0, sizeof s);
		s.loc = peek(&p)->loc;
		bool ok;
		p.depth = 0;
		if (at_kw(&p, KW_RANGE)) {
			s.kind = TQ_RANGE;
			ok = parse_range(&p, &s);
		} else if (at_kw(&p, KW_RETRIEVE)) {
			s.kind = TQ_RETRIEVE;
			ok = parse_retrieve(&p, &s);
		} else {
			tq_expected(&p, peek(&p)->loc.off,
			            "'range' or 'retrieve' to start a statement");
			ok = false;
		}
		if (ok && !p.failed) {
			s.loc = tq_span(&p, s.loc);
			push_stmt(&p, &s, &cap);
		} else {
			recover(&p, start);
		}
	}
	tquel_tokens_free(&toks);
	return q;
}

void tquel_free(struct tquel_query *q)
{
	if (q)
		tquel_arena_free(q->arena);
}
