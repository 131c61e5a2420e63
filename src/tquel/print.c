/* Canonical TQuel: lower-case keywords, one clause per line, parentheses only where
 * precedence needs them, so that parse(print(q)) prints as print(q). */
#include <stdio.h>
#include <stdlib.h>

#include "tquel/tquel.h"

enum { P_OR = 1, P_AND, P_NOT, P_CMP, P_ADD, P_MUL, P_NEG, P_ATOM };
/* temporal: predicates at P_CMP, constructors at P_ADD, begin of / end of at P_NEG */

static int prec(const struct tquel_expr *e)
{
	switch (e->kind) {
	case TQ_OR:
		return P_OR;
	case TQ_AND:
		return P_AND;
	case TQ_NOT:
		return P_NOT;
	case TQ_EQ:
	case TQ_NE:
	case TQ_LT:
	case TQ_LE:
	case TQ_GT:
	case TQ_GE:
	case TQ_PRECEDE:
	case TQ_EQUAL:
	case TQ_OVERLAPS:
		return P_CMP;
	case TQ_ADD:
	case TQ_SUB:
	case TQ_INTERSECT:
	case TQ_EXTEND:
		return P_ADD;
	case TQ_MUL:
	case TQ_DIV:
		return P_MUL;
	case TQ_NEG:
	case TQ_BEGIN_OF:
	case TQ_END_OF:
		return P_NEG;
	default:
		return P_ATOM;
	}
}

const char *tquel_op_text(enum tquel_kind k)
{
	switch (k) {
	case TQ_ADD:
		return "+";
	case TQ_SUB:
		return "-";
	case TQ_MUL:
		return "*";
	case TQ_DIV:
		return "/";
	case TQ_EQ:
		return "=";
	case TQ_NE:
		return "!=";
	case TQ_LT:
		return "<";
	case TQ_LE:
		return "<=";
	case TQ_GT:
		return ">";
	case TQ_GE:
		return ">=";
	case TQ_AND:
		return "and";
	case TQ_OR:
		return "or";
	case TQ_INTERSECT:
	case TQ_OVERLAPS:
		return "overlap";
	case TQ_EXTEND:
		return "extend";
	case TQ_PRECEDE:
		return "precede";
	case TQ_EQUAL:
		return "equal";
	case TQ_NOT:
		return "not";
	default:
		return "?";
	}
}

static void print_sub(const struct tquel_expr *e, bool parens, FILE *out)
{
	if (parens)
		fputc('(', out);
	tquel_print_expr(e, out);
	if (parens)
		fputc(')', out);
}

static void print_string(const char *s, FILE *out)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else if (*s == '\t')
			fputs("\\t", out);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static void print_agg(const struct tquel_expr *e, FILE *out)
{
	const struct tquel_agg *g = &e->u.agg;
	fprintf(out, "%s%s(", tquel_aggfn_names[g->fn], g->unique ? "U" : "");
	tquel_print_expr(g->arg, out);
	for (size_t i = 0; i < g->nby; i++) {
		fputs(i ? ", " : " by ", out);
		tquel_print_expr(g->by[i], out);
	}
	if (g->window == TQ_EVER)
		fputs(" for ever", out);
	else if (g->window == TQ_SPAN)
		fprintf(out, " for each %s", g->span_text);
	if (g->where) {
		fputs(" where ", out);
		tquel_print_expr(g->where, out);
	}
	if (g->when) {
		fputs(" when ", out);
		tquel_print_expr(g->when, out);
	}
	fputc(')', out);
}

void tquel_print_expr(const struct tquel_expr *e, FILE *out)
{
	int p = prec(e);
	switch (e->kind) {
	case TQ_NUMBER:
		fputs(e->u.number.lexeme, out);
		return;
	case TQ_STRING:
		print_string(e->u.string.s, out);
		return;
	case TQ_ATTR:
		fprintf(out, "%s.%s", e->u.attr.var, e->u.attr.name);
		return;
	case TQ_TVAR:
		fputs(e->u.tvar.name, out);
		return;
	case TQ_TCONST:
		print_string(e->u.tconst.s, out);
		return;
	case TQ_AGG:
		print_agg(e, out);
		return;
	case TQ_NEG:
		fputc('-', out); /* "--" would read as well, but looks like a typo */
		print_sub(e->u.op.a, prec(e->u.op.a) < p || e->u.op.a->kind == TQ_NEG, out);
		return;
	case TQ_NOT:
		fputs("not ", out);
		print_sub(e->u.op.a, prec(e->u.op.a) < p, out);
		return;
	case TQ_BEGIN_OF:
	case TQ_END_OF:
		fputs(e->kind == TQ_BEGIN_OF ? "begin of " : "end of ", out);
		print_sub(e->u.op.a, prec(e->u.op.a) < p, out);
		return;
	default:
		break;
	}
	/* binary, left-associative; comparisons do not chain. The overlap predicate is
	 * parsed as the constructor, so its operands are placed as the constructor's. */
	int q = e->kind == TQ_OVERLAPS ? P_ADD : p;
	int la = prec(e->u.op.a), lb = prec(e->u.op.b);
	print_sub(e->u.op.a, p == P_CMP && e->kind != TQ_OVERLAPS ? la <= q : la < q, out);
	fprintf(out, " %s ", tquel_op_text(e->kind));
	print_sub(e->u.op.b, lb <= q, out);
}

static void print_range(const struct tquel_range *r, FILE *out)
{
	fprintf(out, "range of %s is %s", r->var, r->relation);
	if (r->clock_period > 1)
		fprintf(out, "[%llu]", (unsigned long long)r->clock_period);
	fputc('\n', out);
}

static void print_retrieve(const struct tquel_retrieve *r, FILE *out)
{
	fputs("retrieve ", out);
	if (r->unique)
		fputs("unique ", out);
	if (r->into)
		fprintf(out, "into %s ", r->into);
	fputc('(', out);
	for (size_t i = 0; i < r->ntargets; i++) {
		const struct tquel_target *t = &r->targets[i];
		if (i)
			fputs(", ", out);
		if (t->renamed)
			fprintf(out, "%s = ", t->name);
		tquel_print_expr(t->value, out);
	}
	fputs(")\n", out);
	if (r->valid.kind == TQ_VALID_AT) {
		fputs("  valid at ", out);
		tquel_print_expr(r->valid.at, out);
		fputc('\n', out);
	} else if (r->valid.kind == TQ_VALID_FROM_TO) {
		fputs("  valid from ", out);
		tquel_print_expr(r->valid.from, out);
		fputs(" to ", out);
		tquel_print_expr(r->valid.to, out);
		fputc('\n', out);
	}
	if (r->where) {
		fputs("  where ", out);
		tquel_print_expr(r->where, out);
		fputc('\n', out);
	}
	if (r->when) {
		fputs("  when ", out);
		tquel_print_expr(r->when, out);
		fputc('\n', out);
	}
	if (r->asof.at) {
		fputs("  as of ", out);
		tquel_print_expr(r->asof.at, out);
		if (r->asof.through) {
			fputs(" through ", out);
			tquel_print_expr(r->asof.through, out);
		}
		fputc('\n', out);
	}
}

void tquel_print_stmt(const struct tquel_stmt *s, FILE *out)
{
	if (s->kind == TQ_RANGE)
		print_range(&s->u.range, out);
	else
		print_retrieve(&s->u.retrieve, out);
}

void tquel_print(const struct tquel_query *q, FILE *out)
{
	for (size_t i = 0; i < q->nstmts; i++)
		tquel_print_stmt(&q->stmts[i], out);
}

char *tquel_print_string(const struct tquel_query *q)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	tquel_print(q, f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
