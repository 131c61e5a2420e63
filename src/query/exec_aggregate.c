/* Aggregate: runs the aggregate's own plan (its variables, where and when) below it and
 * turns the bindings into contributions (the argument over the overlap of the
 * variables' valid times, per group of the by-list); agg.c and agg_time.c make the
 * auxiliary interval relation of constant values from them. The node yields no bindings:
 * its product is that relation, which the statement's plan scans like any other. It runs
 * before the statement's plan (engine.c), as PostgreSQL runs an InitPlan. */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "tquel/tquel.h"

struct aggregate {
	struct xctx inner; /* the aggregate's own statement */
	struct xnode *plan;
};

static void aggregate_open(struct xnode *n)
{
	struct aggregate *st = vgq_xcalloc(1, sizeof *st);
	struct vgq_session *s = n->cx->s;
	struct bstmt *in = n->agg->inner;
	struct plan *p = vgq_plan(s, in);
	st->inner = (struct xctx){.s = s,
	                          .b = in,
	                          .width = in->nvars,
	                          .limit = vgq_row_limit(s, in),
	                          .timed = n->cx->timed};
	st->plan = vgq_node_build(s, &st->inner, p->physical);
	vgq_node_open(st->plan);
	n->state = st;
}

static size_t aggregate_next(struct xnode *n, uint32_t *out)
{
	(void)out;
	struct aggregate *st = n->state;
	struct bagg *a = n->agg;
	const struct bstmt *in = a->inner;
	size_t nby = a->nby, w = st->inner.width, cap = 0, ncon = 0;
	struct vgq_contrib *c = NULL;
	struct vx_value *keys = NULL;
	uint32_t *buf = vgq_batch_alloc(&st->inner);
	size_t got;
	while ((got = vgq_node_next(st->plan, buf))) {
		if (cap - ncon < got) {
			cap = cap ? 2 * cap : 4 * VGQ_BATCH;
			c = vgq_xrealloc(c, cap, sizeof *c);
			keys = vgq_xrealloc(keys, cap * nby + 1, sizeof *keys);
		}
		for (size_t i = 0; i < got; i++) {
			struct binding bd = {buf + i * w, in->vars};
			struct tval v = vgq_var_time(&in->vars[0], bd.rows[0]);
			for (size_t k = 1; k < in->nvars && v.kind != TV_NOTHING; k++)
				v = vgq_tv_intersect(v, vgq_var_time(&in->vars[k], bd.rows[k]));
			if (v.kind == TV_NOTHING || (v.kind == TV_INTERVAL && v.b >= v.e))
				continue;
			struct vx_value arg = vgq_eval(in->targets[nby].value, &bd);
			if (arg.null)
				continue;
			c[ncon].b = v.b;
			c[ncon].e = v.kind == TV_EVENT ? v.b + 1 : v.e;
			c[ncon].arg = arg;
			for (size_t k = 0; k < nby; k++)
				keys[ncon * nby + k] = vgq_eval(in->targets[k].value, &bd);
			ncon++;
		}
	}
	free(buf);
	if (st->inner.overflow) {
		n->cx->overflow = true;
	} else {
		for (size_t i = 0; i < ncon; i++) /* the keys array has moved while growing */
			c[i].key = &keys[i * nby];
		vgq_agg_finish(n->cx->s, a, c, ncon);
		n->rows = a->rel->ntuples;
	}
	free(c);
	free(keys);
	return 0;
}

static void aggregate_close(struct xnode *n)
{
	struct aggregate *st = n->state;
	if (!st)
		return;
	vgq_node_close(st->plan);
	free(st);
}

static void aggregate_explain(const struct xnode *n, const struct xexplain *outer)
{
	const struct bagg *a = n->agg;
	struct xexplain ex = *outer;
	ex.b = a->inner;
	const struct xexplain *e = &ex;
	FILE *out = e->out;
	fprintf(out, "%s = %s%s(", outer->b->vars[a->var].name, tquel_aggfn_names[a->fn],
	        a->unique ? "U" : "");
	vgq_explain_bx(e, a->inner->targets[a->nby].value, 0);
	if (a->nby) {
		fputs(" by ", out);
		for (size_t k = 0; k < a->nby; k++) {
			fputs(k ? ", " : "", out);
			vgq_explain_bx(e, a->inner->targets[k].value, 0);
		}
	}
	if (a->window == TQ_SPAN)
		fprintf(out, " for each %s)", a->src->u.agg.span_text);
	else
		fprintf(out, " %s)", a->window == TQ_EVER ? "for ever" : "for each instant");
	if (a->inner->where) {
		fputs(" where ", out);
		vgq_explain_bx(e, a->inner->where, 0);
	}
	if (a->inner->when) {
		fputs(" when ", out);
		vgq_explain_tp(e, a->inner->when, false);
	}
	fputs(": constant intervals per group", out);
}

const struct xops vgq_aggregate_ops = {"aggregate", aggregate_open, aggregate_next, aggregate_close,
                                       aggregate_explain};
