/* Which retrieves the update network takes, and what their when clauses let it drop.
 *
 * A retrieve's answer for a combination of final tuples depends on those tuples only,
 * except with aggregates (over every tuple valid at an instant), `retrieve unique`
 * (coalescing across combinations), "now" (moves with each read), Clock (ticks between
 * the first and the last event) and results of earlier statements: those are refused,
 * and answered by re-evaluation. WaitFor is followed edge by edge (relations/waits.c),
 * Message message by message (derived/net_live.c); the other analyses' derived relations
 * (Network, Violation...) need the whole trace and are refused (docs/tquel.md "Derived
 * relations"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "live/delta_internal.h"
#include "relations/columns.h"
#include "relations/derived.h"

struct walk {
	struct delta_retrieve *r;
	const struct tquel_query *q;
	size_t upto; /* the retrieve's statement index: ranges before it count */
	char *why;
	size_t whysize;
	bool refused;
};

static void refuse(struct walk *w, const char *what)
{
	if (!w->refused)
		snprintf(w->why, w->whysize, "%s", what);
	w->refused = true;
}

static int var_index(struct walk *w, const char *name)
{
	for (size_t i = 0; i < w->r->nvars; i++)
		if (!strcmp(w->r->vars[i].name, name))
			return (int)i;
	const struct tquel_range *rg = NULL;
	for (size_t i = w->upto; i-- > 0;)
		if (w->q->stmts[i].kind == TQ_RANGE && !strcmp(w->q->stmts[i].u.range.var, name)) {
			rg = &w->q->stmts[i].u.range;
			break;
		}
	if (!rg)
		return -1; /* the engine reports it */
	if (rg->clock_period || !strcasecmp(rg->relation, "Clock")) {
		refuse(w, "it ranges over Clock (ticks from the first to the last event)");
		return -1;
	}
	if (vgq_derived_source(rg->relation) && !vgq_derived_live_of(rg->relation)) {
		/* Network, Violation...: docs/tquel.md; Message is followed (derived.h) */
		refuse(w, "it ranges over a relation an analysis derives from the whole trace");
		return -1;
	}
	if (w->r->nvars == DELTA_MAX_VARS) {
		refuse(w, "it has more tuple variables than the network takes");
		return -1;
	}
	struct delta_var *v = &w->r->vars[w->r->nvars];
	v->name = name;
	v->relation = rg->relation;
	return (int)w->r->nvars++;
}

static void walk_expr(struct walk *w, const struct tquel_expr *e)
{
	if (!e)
		return;
	switch (e->kind) {
	case TQ_AGG:
		refuse(w, "it has an aggregate (its value at an instant is over every tuple "
		          "valid then)");
		return;
	case TQ_ATTR:
		var_index(w, e->u.attr.var);
		return;
	case TQ_TVAR:
		var_index(w, e->u.tvar.name);
		return;
	case TQ_TCONST:
		if (e->u.tconst.which == TQ_NOW)
			refuse(w, "it uses \"now\" (the last event read, which moves)");
		return;
	case TQ_NUMBER:
	case TQ_STRING:
		return;
	default:
		walk_expr(w, e->u.op.a);
		walk_expr(w, e->u.op.b);
		return;
	}
}

/* The variable whose valid time (or begin or end) a temporal operand is, or -1. */
static int point_var(struct walk *w, const struct tquel_expr *e)
{
	while (e && (e->kind == TQ_BEGIN_OF || e->kind == TQ_END_OF))
		e = e->u.op.a;
	return e && e->kind == TQ_TVAR ? var_index(w, e->u.tvar.name) : -1;
}

/* Top-level conjuncts of the when clause. A tuple x whose end is before the start of
 * every tuple of y still to come cannot overlap one (nor equal it, nor follow one: any
 * instant of x is before any instant of y), so `x overlap y` lets either side be
 * dropped, `y precede x` the later side x. */
static void conjuncts(struct walk *w, const struct tquel_expr *e)
{
	if (!e)
		return;
	if (e->kind == TQ_AND) {
		conjuncts(w, e->u.op.a);
		conjuncts(w, e->u.op.b);
		return;
	}
	if (e->kind != TQ_OVERLAPS && e->kind != TQ_PRECEDE && e->kind != TQ_EQUAL)
		return;
	int a = point_var(w, e->u.op.a), b = point_var(w, e->u.op.b);
	if (a < 0 || b < 0 || a == b)
		return;
	w->r->vars[b].drops_against[a] = true;
	if (e->kind != TQ_PRECEDE)
		w->r->vars[a].drops_against[b] = true;
}

static int take_retrieve(const struct tquel_query *q, size_t at, struct delta_retrieve *r,
                         char *why, size_t whysize)
{
	const struct tquel_retrieve *rt = &q->stmts[at].u.retrieve;
	struct walk w = {r, q, at, why, whysize, false};
	if (rt->unique)
		refuse(&w, "it is a retrieve unique (coalescing across tuples)");
	for (size_t i = at + 1; rt->into && i < q->nstmts; i++)
		if (q->stmts[i].kind == TQ_RANGE &&
		    !strcasecmp(q->stmts[i].u.range.relation, rt->into))
			refuse(&w, "a later statement ranges over an earlier one's result");
	for (size_t i = 0; i < rt->ntargets; i++)
		walk_expr(&w, rt->targets[i].value);
	walk_expr(&w, rt->where);
	walk_expr(&w, rt->when);
	walk_expr(&w, rt->valid.at);
	walk_expr(&w, rt->valid.from);
	walk_expr(&w, rt->valid.to);
	if (w.refused)
		return -1;
	conjuncts(&w, rt->when);
	if (rt->valid.kind == TQ_VALID_NONE) /* the default valid time: their overlap */
		for (size_t i = 0; i < r->nvars; i++)
			for (size_t j = 0; j < r->nvars; j++)
				r->vars[i].drops_against[j] |= i != j;
	/* The retrieve alone over aliases: "V@relation" names no relation of a trace. */
	struct tquel_stmt *stmts = calloc(r->nvars + 1, sizeof *stmts);
	if (!stmts)
		abort();
	for (size_t i = 0; i < r->nvars; i++) {
		struct delta_var *v = &r->vars[i];
		size_t len = strlen(v->name) + strlen(v->relation) + 2;
		v->alias = malloc(len);
		if (!v->alias)
			abort();
		snprintf(v->alias, len, "%s@%s", v->name, v->relation);
		stmts[i].kind = TQ_RANGE;
		stmts[i].loc = q->stmts[at].loc;
		stmts[i].u.range.var = v->name;
		stmts[i].u.range.relation = v->alias;
		if (r->nvars > 1) {
			bool drops = true;
			for (size_t j = 0; j < r->nvars; j++)
				drops &= j == i || v->drops_against[j];
			r->unbounded |= !drops;
		}
	}
	stmts[r->nvars] = q->stmts[at];
	r->sub = *q;
	r->sub.stmts = stmts;
	r->sub.nstmts = r->nvars + 1;
	return 0;
}

int vgq_delta_shape(const struct tquel_query *q, struct delta_retrieve **out, size_t *n, char *why,
                    size_t whysize)
{
	size_t count = 0;
	for (size_t i = 0; i < q->nstmts; i++)
		count += q->stmts[i].kind == TQ_RETRIEVE;
	struct delta_retrieve *r = calloc(count ? count : 1, sizeof *r);
	if (!r)
		abort();
	size_t k = 0;
	for (size_t i = 0; i < q->nstmts; i++) {
		if (q->stmts[i].kind != TQ_RETRIEVE)
			continue;
		if (take_retrieve(q, i, &r[k], why, whysize) < 0) {
			k++; /* its aliases are freed with the rest */
			vgq_delta_shape_free(r, k);
			return -1;
		}
		k++;
	}
	*out = r;
	*n = k;
	return 0;
}

void vgq_delta_shape_free(struct delta_retrieve *r, size_t n)
{
	if (!r)
		return;
	for (size_t i = 0; i < n; i++) {
		for (size_t v = 0; v < r[i].nvars; v++) {
			free(r[i].vars[v].alias);
			vgq_relation_free(r[i].vars[v].state);
		}
		free(r[i].sub.stmts);
	}
	free(r);
}

bool vgq_delta_takes(const struct tquel_query *q, char *why, size_t whysize)
{
	struct delta_retrieve *r;
	size_t n;
	if (vgq_delta_shape(q, &r, &n, why, whysize) < 0)
		return false;
	vgq_delta_shape_free(r, n);
	return true;
}
