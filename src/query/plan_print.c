/* The algebra as text, for `vigil explain`: one operator per line, operands indented
 * below it, in the notation of Snodgrass 1988 (π, πT, σ, σT, ×) plus the physical joins.
 * Each node prints its own line (struct xops.explain, in its operator's file); this file
 * walks the tree and prints the expressions they share. */
#include <inttypes.h>
#include <stdio.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "tquel/tquel.h"

static int bx_prec(enum bx_kind k)
{
	switch (k) {
	case BX_OR:
		return 1;
	case BX_AND:
		return 2;
	case BX_NOT:
		return 3;
	case BX_EQ:
	case BX_NE:
	case BX_LT:
	case BX_LE:
	case BX_GT:
	case BX_GE:
		return 4;
	case BX_ADD:
	case BX_SUB:
		return 5;
	case BX_MUL:
	case BX_DIV:
		return 6;
	default:
		return 7;
	}
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

static void print_attr(const struct xexplain *x, const struct bx *e, FILE *out)
{
	const struct bvar *v = &x->b->vars[e->var];
	fprintf(out, "%s.%s", v->name, v->rel->attrs[e->attr].name);
}

void vgq_explain_bx(const struct xexplain *x, const struct bx *e, int prec)
{
	FILE *out = x->out;
	static const char *const ops[] = {
	    [BX_ADD] = "+", [BX_SUB] = "-", [BX_MUL] = "*",   [BX_DIV] = "/",
	    [BX_EQ] = "=",  [BX_NE] = "!=", [BX_LT] = "<",    [BX_LE] = "<=",
	    [BX_GT] = ">",  [BX_GE] = ">=", [BX_AND] = "and", [BX_OR] = "or"};
	int p = bx_prec(e->kind);
	bool paren = p < prec;
	if (paren)
		fputc('(', out);
	switch (e->kind) {
	case BX_CONST:
		if (e->c.type == VX_STRING)
			print_string(e->c.v.s, out);
		else if (e->c.type == VX_DOUBLE)
			fprintf(out, "%.17g", e->c.v.d);
		else
			fprintf(out, "%" PRId64, e->c.v.i);
		break;
	case BX_ATTR:
		print_attr(x, e, out);
		break;
	case BX_NEG:
		fputc('-', out);
		vgq_explain_bx(x, e->a, 7);
		break;
	case BX_NOT:
		fputs("not ", out);
		vgq_explain_bx(x, e->a, 3);
		break;
	default:
		vgq_explain_bx(x, e->a, p);
		fprintf(out, " %s ", ops[e->kind]);
		vgq_explain_bx(x, e->b, p + 1);
	}
	if (paren)
		fputc(')', out);
}

void vgq_explain_tx(const struct xexplain *e, const struct tx *x, bool nested)
{
	FILE *out = e->out;
	switch (x->kind) {
	case TX_VAR:
		fputs(e->b->vars[x->var].name, out);
		break;
	case TX_BEGIN:
	case TX_END:
		fputs(x->kind == TX_BEGIN ? "begin of " : "end of ", out);
		vgq_explain_tx(e, x->a, true);
		break;
	case TX_CONST:
		tquel_print_expr(x->src, out);
		break;
	default:
		if (nested)
			fputc('(', out);
		vgq_explain_tx(e, x->a, true);
		fputs(x->kind == TX_INTERSECT ? " overlap " : " extend ", out);
		vgq_explain_tx(e, x->b, true);
		if (nested)
			fputc(')', out);
	}
}

void vgq_explain_tp(const struct xexplain *e, const struct tp *p, bool nested)
{
	FILE *out = e->out;
	switch (p->kind) {
	case TP_AND:
	case TP_OR:
		if (nested)
			fputc('(', out);
		vgq_explain_tp(e, p->a, true);
		fputs(p->kind == TP_AND ? " and " : " or ", out);
		vgq_explain_tp(e, p->b, true);
		if (nested)
			fputc(')', out);
		break;
	case TP_NOT:
		fputs("not ", out);
		vgq_explain_tp(e, p->a, true);
		break;
	default:
		vgq_explain_tx(e, p->x, true);
		fputs(p->kind == TP_PRECEDE   ? " precede "
		      : p->kind == TP_OVERLAP ? " overlap "
		                              : " equal ",
		      out);
		vgq_explain_tx(e, p->y, true);
	}
}

static void print_conds(const struct xexplain *e, const struct pnode *n)
{
	for (size_t i = 0; i < n->nconds; i++) {
		fputs(i ? " and " : "", e->out);
		vgq_explain_bx(e, n->conds[i], 2);
	}
	for (size_t i = 0; i < n->ntconds; i++) {
		fputs(i || n->nconds ? " and " : "", e->out);
		vgq_explain_tp(e, n->tconds[i], true);
	}
}

void vgq_explain_residual(const struct xexplain *e, const struct pnode *n)
{
	if (!n->nconds && !n->ntconds)
		return;
	fputs(" then σ[", e->out);
	print_conds(e, n);
	fputs("]", e->out);
}

void vgq_explain_keys(const struct xexplain *e, const struct pnode *n)
{
	for (size_t i = 0; i < n->nkeys; i++) {
		fputs(i ? " and " : "", e->out);
		vgq_explain_bx(e, n->lkeys[i], 5);
		fputs(" = ", e->out);
		vgq_explain_bx(e, n->rkeys[i], 5);
	}
}

void vgq_explain_tree(const struct xexplain *e, const struct xnode *n, int depth)
{
	fprintf(e->out, "%*s", 2 * depth + 2, "");
	n->ops->explain(n, e);
	if (e->analyze) /* inclusive time, as PostgreSQL's "actual time" */
		fprintf(e->out,
		        "  (actual rows=%" PRIu64 " batches=%" PRIu64 " time=%.3f ms threads=%u)",
		        n->rows, n->calls, (double)n->ns / 1e6, n->threads ? n->threads : 1);
	if (e->analyze && n->spilled_parts) { /* past VIGIL_QUERY_MEMORY: exec_hash_spill.c */
		fprintf(e->out, "  (spilled to %u partitions", n->spilled_parts);
		if (n->spilled_depth) /* some split again, that many levels */
			fprintf(e->out, ", repartitioned %u deep", n->spilled_depth);
		fputc(')', e->out);
	}
	fputc('\n', e->out);
	if (n->l)
		vgq_explain_tree(e, n->l, depth + 1);
	if (n->r)
		vgq_explain_tree(e, n->r, depth + 1);
}
