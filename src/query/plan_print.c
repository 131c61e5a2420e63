/* The algebra as text, for `vigil explain`: one operator per line, operands indented
 * below it, in the notation of Snodgrass 1988 (π, πT, σ, σT, ×) plus the physical joins. */
#include <inttypes.h>
#include <stdio.h>

#include "query/engine_internal.h"
#include "tquel/tquel.h"

static const struct bstmt *cur;
static bool show_counts; /* scans print their number of tuples */

static void print_bx(const struct bx *e, FILE *out, int prec);

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

static void print_attr(const struct bx *e, FILE *out)
{
	const struct bvar *v = &cur->vars[e->var];
	fprintf(out, "%s.%s", v->name, v->rel->attrs[e->attr].name);
}

static void print_bx(const struct bx *e, FILE *out, int prec)
{
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
		print_attr(e, out);
		break;
	case BX_NEG:
		fputc('-', out);
		print_bx(e->a, out, 7);
		break;
	case BX_NOT:
		fputs("not ", out);
		print_bx(e->a, out, 3);
		break;
	default:
		print_bx(e->a, out, p);
		fprintf(out, " %s ", ops[e->kind]);
		print_bx(e->b, out, p + 1);
	}
	if (paren)
		fputc(')', out);
}

static void print_tx(const struct tx *x, FILE *out, bool nested)
{
	switch (x->kind) {
	case TX_VAR:
		fputs(cur->vars[x->var].name, out);
		break;
	case TX_BEGIN:
	case TX_END:
		fputs(x->kind == TX_BEGIN ? "begin of " : "end of ", out);
		print_tx(x->a, out, true);
		break;
	case TX_CONST:
		tquel_print_expr(x->src, out);
		break;
	default:
		if (nested)
			fputc('(', out);
		print_tx(x->a, out, true);
		fputs(x->kind == TX_INTERSECT ? " overlap " : " extend ", out);
		print_tx(x->b, out, true);
		if (nested)
			fputc(')', out);
	}
}

static void print_tp(const struct tp *p, FILE *out, bool nested)
{
	switch (p->kind) {
	case TP_AND:
	case TP_OR:
		if (nested)
			fputc('(', out);
		print_tp(p->a, out, true);
		fputs(p->kind == TP_AND ? " and " : " or ", out);
		print_tp(p->b, out, true);
		if (nested)
			fputc(')', out);
		break;
	case TP_NOT:
		fputs("not ", out);
		print_tp(p->a, out, true);
		break;
	default:
		print_tx(p->x, out, true);
		fputs(p->kind == TP_PRECEDE   ? " precede "
		      : p->kind == TP_OVERLAP ? " overlap "
		                              : " equal ",
		      out);
		print_tx(p->y, out, true);
	}
}

static void print_conds(const struct pnode *n, FILE *out)
{
	for (size_t i = 0; i < n->nconds; i++) {
		fputs(i ? " and " : "", out);
		print_bx(n->conds[i], out, 2);
	}
	for (size_t i = 0; i < n->ntconds; i++) {
		fputs(i || n->nconds ? " and " : "", out);
		print_tp(n->tconds[i], out, true);
	}
}

static void print_keys(const struct pnode *n, FILE *out)
{
	for (size_t i = 0; i < n->nkeys; i++) {
		fputs(i ? " and " : "", out);
		print_bx(n->lkeys[i], out, 5);
		fputs(" = ", out);
		print_bx(n->rkeys[i], out, 5);
	}
}

static void print_node(const struct pnode *n, int depth, FILE *out)
{
	fprintf(out, "%*s", 2 * depth + 2, "");
	switch (n->kind) {
	case P_SCAN: {
		const struct bvar *v = &cur->vars[n->var];
		fprintf(out, "%s as %s  (%s relation", v->rel->name, v->name,
		        vgq_rkind_name(v->rel->kind));
		if (show_counts && (v->rel->ntuples || v->rel->nattrs))
			fprintf(out, ", %zu tuples", v->rel->ntuples);
		fputs(")\n", out);
		return;
	}
	case P_SELECT:
		if (n->nconds) {
			fputs("σ[", out);
			for (size_t i = 0; i < n->nconds; i++) {
				fputs(i ? " and " : "", out);
				print_bx(n->conds[i], out, 2);
			}
			fputs("]", out);
		}
		if (n->ntconds) {
			fputs(n->nconds ? " σT[" : "σT[", out);
			for (size_t i = 0; i < n->ntconds; i++) {
				fputs(i ? " and " : "", out);
				print_tp(n->tconds[i], out, true);
			}
			fputs("]", out);
		}
		fputc('\n', out);
		break;
	case P_TSELECT:
		fputs("σT[", out);
		for (size_t i = 0; i < n->ntconds; i++) {
			fputs(i ? " and " : "", out);
			print_tp(n->tconds[i], out, n->ntconds > 1);
		}
		fputs("]\n", out);
		break;
	case P_PRODUCT:
		fputs("×", out);
		if (n->nconds || n->ntconds) {
			fputs(" then σ[", out);
			print_conds(n, out);
			fputs("]", out);
		}
		fputc('\n', out);
		break;
	case P_HASHJOIN:
		fputs("hash join[", out);
		print_keys(n, out);
		fputs("]", out);
		if (n->nconds || n->ntconds) {
			fputs(" then σ[", out);
			print_conds(n, out);
			fputs("]", out);
		}
		fputc('\n', out);
		break;
	case P_SWEEPJOIN:
		fputs("sweep join[", out);
		print_tx(n->lt, out, true);
		fputs(" overlap ", out);
		print_tx(n->rt, out, true);
		fputs("]", out);
		if (n->nconds || n->ntconds) {
			fputs(" then σ[", out);
			print_conds(n, out);
			fputs("]", out);
		}
		fputc('\n', out);
		break;
	case P_SEMIJOIN:
		fputs("semi-join[", out);
		print_keys(n, out);
		if (n->semi != SEMI_EXISTS) {
			fputs(n->nkeys ? "; " : "", out);
			if (n->semi == SEMI_MIN_END) {
				print_tx(n->rt, out, true);
				fputs(" precede ", out);
				print_tx(n->lt, out, true);
				fputs(": least end of ", out);
			} else {
				print_tx(n->lt, out, true);
				fputs(" precede ", out);
				print_tx(n->rt, out, true);
				fputs(": greatest begin of ", out);
			}
			print_tx(n->rt, out, true);
			fputs(n->nkeys ? " per key" : "", out);
		}
		fputs("]\n", out);
		break;
	case P_PROJECT:
		fputs("π[", out);
		for (size_t i = 0; i < cur->ntargets; i++) {
			fprintf(out, "%s%s = ", i ? ", " : "", cur->targets[i].name);
			print_bx(cur->targets[i].value, out, 0);
		}
		fputs("]\n", out);
		break;
	case P_TPROJECT:
		fputs("πT[", out);
		if (cur->valid == TQ_VALID_AT) {
			fputs("at ", out);
			print_tx(cur->valid_at, out, false);
		} else if (cur->valid == TQ_VALID_FROM_TO) {
			fputs("from ", out);
			print_tx(cur->valid_from, out, false);
			fputs(" to ", out);
			print_tx(cur->valid_to, out, false);
		} else {
			fputs("overlap of ", out);
			for (size_t i = 0; i < cur->nvars; i++)
				fprintf(out, "%s%s", i ? ", " : "", cur->vars[i].name);
		}
		fprintf(out, "]  -> %s relation %s%s\n", cur->result_event ? "event" : "interval",
		        cur->label,
		        cur->unique && !cur->result_event ? ", coalesced (unique)" : "");
		break;
	}
	if (n->l)
		print_node(n->l, depth + 1, out);
	if (n->r)
		print_node(n->r, depth + 1, out);
}

static void print_aggs(const struct bstmt *b, FILE *out)
{
	for (size_t i = 0; i < b->naggs; i++) {
		const struct bagg *a = &b->aggs[i];
		const struct bstmt *saved = cur;
		cur = a->inner;
		fprintf(out, "  %s = %s%s(", b->vars[a->var].name, tquel_aggfn_names[a->fn],
		        a->unique ? "U" : "");
		print_bx(a->inner->targets[a->nby].value, out, 0);
		if (a->nby) {
			fputs(" by ", out);
			for (size_t k = 0; k < a->nby; k++) {
				fputs(k ? ", " : "", out);
				print_bx(a->inner->targets[k].value, out, 0);
			}
		}
		if (a->window == TQ_SPAN)
			fprintf(out, " for each %s)", a->src->u.agg.span_text);
		else
			fprintf(out, " %s)",
			        a->window == TQ_EVER ? "for ever" : "for each instant");
		if (a->inner->where) {
			fputs(" where ", out);
			print_bx(a->inner->where, out, 0);
		}
		if (a->inner->when) {
			fputs(" when ", out);
			print_tp(a->inner->when, out, false);
		}
		fputs(": constant intervals per group\n", out);
		cur = saved;
	}
}

void vgq_plan_print(const struct plan *p, bool physical, bool counts, FILE *out)
{
	cur = p->stmt;
	show_counts = counts;
	if (physical)
		print_aggs(p->stmt, out);
	print_node(physical ? p->physical : p->logical, 0, out);
	cur = NULL;
}
