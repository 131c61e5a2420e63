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

struct contrib_job {
	const struct bagg *a;
	const struct xrows *in;
	struct vgq_contrib *c;
	struct vx_value *keys; /* nby per contribution */
	size_t *kept;          /* per piece: the contributions it made from its first place on */
	size_t grain;          /* bindings per piece */
};

bool vgq_contrib_of(const struct bagg *a, const uint32_t *row, struct vgq_contrib *c,
                    struct vx_value *keys)
{
	const struct bstmt *in = a->inner;
	struct binding bd = {row, in->vars};
	struct tval v = vgq_var_time(&in->vars[0], bd.rows[0]);
	for (size_t x = 1; x < in->nvars && v.kind != TV_NOTHING; x++)
		v = vgq_tv_intersect(v, vgq_var_time(&in->vars[x], bd.rows[x]));
	if (v.kind == TV_NOTHING || (v.kind == TV_INTERVAL && v.b >= v.e))
		return false;
	struct vx_value arg = vgq_eval(in->targets[a->nby].value, &bd);
	if (arg.null)
		return false;
	c->b = v.b;
	/* an event at t over [t, t + 1); at "forever" over nothing (past every time line),
	 * not wrapped to the beginning */
	c->e = v.kind == TV_EVENT ? (v.b == INT64_MAX ? v.b : v.b + 1) : v.e;
	c->arg = arg;
	for (size_t x = 0; x < a->nby; x++)
		keys[x] = vgq_eval(in->targets[x].value, &bd);
	return true;
}

/* The contributions of bindings [lo, hi), from place lo on. */
static void contrib_piece(void *p, size_t lo, size_t hi)
{
	struct contrib_job *j = p;
	size_t nby = j->a->nby, w = j->in->width, k = lo;
	for (size_t i = lo; i < hi; i++)
		k += vgq_contrib_of(j->a, j->in->rows + i * w, &j->c[k], &j->keys[k * nby]);
	j->kept[lo / j->grain] = k - lo;
}

static size_t aggregate_next(struct xnode *n, uint32_t *out)
{
	(void)out;
	struct aggregate *st = n->state;
	struct bagg *a = n->agg;
	size_t nby = a->nby;
	struct xrows in = {0};
	vgq_rows_collect(st->plan, &in);
	/* a contribution and its group's key values per binding, at most */
	size_t bytes =
	    (in.n + 1) * sizeof(struct vgq_contrib) + (in.n * nby + 1) * sizeof(struct vx_value);
	size_t room = vgq_mem_room(n->cx->s); /* the bindings are freed before the sweep */
	if (!vgq_overflowed(&st->inner) &&
	    (bytes > room || bytes + vgq_agg_work_bytes(in.n) > room + in.charged)) {
		/* past the budget: by groups' partitions in spill files (exec_agg_spill.c) */
		unsigned workers;
		n->spilled_parts = (uint32_t)vgq_agg_spill(n->cx->s, a, &in, &workers);
		n->threads = workers; /* the partitions' (explain --analyze) */
		vgq_rows_free(&in);
		if (vgq_overflowed(&st->inner))
			vgq_set_overflow(n->cx);
		else if (!vgq_mem_refused(n->cx->s))
			n->rows = a->rel->ntuples;
		return 0;
	}
	if (vgq_overflowed(&st->inner) ||
	    !vgq_mem_take(n->cx->s, "the aggregate's contributions", bytes)) {
		in.n = 0; /* the statement stops (past the memory budget: reported as that) */
		bytes = 0;
	}
	size_t grain = vgq_grain(n->cx->s, in.n, 16, 16384);
	size_t pieces = (in.n + grain - 1) / grain;
	struct contrib_job j = {a,
	                        &in,
	                        vgq_xcalloc(in.n + 1, sizeof *j.c),
	                        vgq_xcalloc(in.n * nby + 1, sizeof *j.keys),
	                        vgq_xcalloc(pieces + 1, sizeof *j.kept),
	                        grain};
	if (!vgq_overflowed(&st->inner))
		vgq_parallel_for(n->cx->s, in.n, grain, contrib_piece, &j);
	vgq_rows_free(&in);
	/* the pieces' contributions close up, in the order of the bindings */
	size_t ncon = 0;
	for (size_t p = 0; p < pieces; p++) {
		size_t from = p * grain, k = j.kept[p];
		if (from != ncon && k) {
			memmove(&j.c[ncon], &j.c[from], k * sizeof *j.c);
			memmove(&j.keys[ncon * nby], &j.keys[from * nby], k * nby * sizeof *j.keys);
		}
		ncon += k;
	}
	if (vgq_overflowed(&st->inner)) {
		vgq_set_overflow(n->cx);
	} else {
		for (size_t i = 0; i < ncon; i++)
			j.c[i].key = &j.keys[i * nby];
		vgq_agg_finish(n->cx->s, a, j.c, ncon);
		n->rows = a->rel->ntuples;
	}
	free(j.c);
	free(j.keys);
	free(j.kept);
	if (bytes)
		vgq_mem_give(n->cx->s, bytes);
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

const struct xops vgq_aggregate_ops = {.name = "aggregate",
                                       .open = aggregate_open,
                                       .next = aggregate_next,
                                       .close = aggregate_close,
                                       .explain = aggregate_explain};
