/* The valid-time bounds a query's selections put on the relations it ranges over
 * (relations/relation.h, struct vgq_time_bound), read from the statements as parsed: a
 * retrieve's when clause compares a variable with temporal constants (`when S overlap
 * ("2026-11-27 03:20" extend "2026-11-27 03:21")`, `when "2026-11-27" precede S`), so
 * no tuple of S valid outside some span can be in its answer. The build then passes
 * over those tuples' events (docs/query.md "How selections reach decoding").
 *
 * Every bound is a superset of what the statement can use: a relation is bounded only
 * when every retrieve mentioning it bounds each of its variables over it, outside
 * aggregates (an aggregate ranges over its variables on its own), and then by the span
 * of all those bounds, widened by a nanosecond on each side. What is not understood
 * (`not`, "now", two variables in one predicate, a predicate over an intersection) bounds
 * nothing. The build applies bounds to event relations only: a tuple of an interval
 * relation is made of two events, and its begin may lie before the bound. */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "cli/query_need.h"
#include "tquel/arena.h"

struct span {
	int64_t lo, hi; /* lo > hi: no instant */
};

static const struct span every = {INT64_MIN, INT64_MAX};

static int64_t sat_add(int64_t a, int64_t d)
{
	if (d > 0 && a > INT64_MAX - d)
		return INT64_MAX;
	if (d < 0 && a < INT64_MIN - d)
		return INT64_MIN;
	return a + d;
}

/* The instants a constant temporal expression may cover (a superset); false when it is
 * no constant. "now" is the trace's last event, not known before it is read: any. */
static bool constant_span(const struct tquel_expr *e, struct span *s)
{
	struct span a, b;
	switch (e->kind) {
	case TQ_TCONST:
		*s = e->u.tconst.which == TQ_DATE ? (struct span){e->u.tconst.ns, e->u.tconst.ns}
		     : e->u.tconst.which == TQ_BEGINNING ? (struct span){INT64_MIN, INT64_MIN}
		     : e->u.tconst.which == TQ_FOREVER   ? (struct span){INT64_MAX, INT64_MAX}
		                                         : every;
		return true;
	case TQ_BEGIN_OF:
	case TQ_END_OF:
		return constant_span(e->u.op.a, s);
	case TQ_EXTEND:
	case TQ_INTERSECT:
		if (!constant_span(e->u.op.a, &a) || !constant_span(e->u.op.b, &b))
			return false;
		s->lo = a.lo < b.lo ? a.lo : b.lo;
		s->hi = a.hi > b.hi ? a.hi : b.hi;
		return true;
	default:
		return false;
	}
}

/* Is e the valid time of `var`, or the begin or end of it (one instant for an event)? */
static bool is_var(const struct tquel_expr *e, const char *var)
{
	if (e->kind == TQ_BEGIN_OF || e->kind == TQ_END_OF)
		return is_var(e->u.op.a, var);
	return e->kind == TQ_TVAR && !strcmp(e->u.tvar.name, var);
}

/* The instants of an event of `var` for which the when clause e can be true. */
static struct span bound(const struct tquel_expr *e, const char *var)
{
	struct span a, b, c;
	switch (e->kind) {
	case TQ_AND:
		a = bound(e->u.op.a, var);
		b = bound(e->u.op.b, var);
		return (struct span){a.lo > b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi};
	case TQ_OR:
		a = bound(e->u.op.a, var);
		b = bound(e->u.op.b, var);
		if (a.lo > a.hi)
			return b;
		if (b.lo > b.hi)
			return a;
		return (struct span){a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
	case TQ_OVERLAPS:
	case TQ_EQUAL:
	case TQ_PRECEDE: {
		bool left = is_var(e->u.op.a, var) && constant_span(e->u.op.b, &c);
		bool right = !left && is_var(e->u.op.b, var) && constant_span(e->u.op.a, &c);
		if (!left && !right)
			return every;
		if (e->kind != TQ_PRECEDE) /* shares an instant with c, or is it */
			return (struct span){sat_add(c.lo, -1), sat_add(c.hi, 1)};
		if (left) /* end of it <= begin of c */
			return (struct span){INT64_MIN, sat_add(c.hi, 1)};
		return (struct span){sat_add(c.lo, -1), INT64_MAX}; /* end of c <= it */
	}
	default:
		return every;
	}
}

/* Adds the names of variables e mentions inside aggregates (all of them once inside). */
static void agg_names(const struct tquel_expr *e, bool inside, const char **names, size_t *n,
                      size_t max)
{
	if (!e || e->kind == TQ_NUMBER || e->kind == TQ_STRING || e->kind == TQ_TCONST)
		return;
	const char *name = e->kind == TQ_ATTR   ? e->u.attr.var
	                   : e->kind == TQ_TVAR ? e->u.tvar.name
	                                        : NULL;
	if (name) {
		if (inside && *n < max)
			names[(*n)++] = name;
		return;
	}
	if (e->kind == TQ_AGG) {
		const struct tquel_agg *g = &e->u.agg;
		agg_names(g->arg, true, names, n, max);
		for (size_t i = 0; i < g->nby; i++)
			agg_names(g->by[i], true, names, n, max);
		agg_names(g->where, true, names, n, max);
		agg_names(g->when, true, names, n, max);
		return;
	}
	agg_names(e->u.op.a, inside, names, n, max);
	if (e->kind != TQ_NEG && e->kind != TQ_NOT && e->kind != TQ_BEGIN_OF &&
	    e->kind != TQ_END_OF)
		agg_names(e->u.op.b, inside, names, n, max);
}

/* What the statements so far say of one relation. */
struct use {
	const char *relation;
	bool unbounded;
	struct span span;
};

static struct use *use_of(struct use *uses, size_t *n, const char *relation)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcasecmp(uses[i].relation, relation))
			return &uses[i];
	uses[*n] = (struct use){.relation = relation, .span = {INT64_MAX, INT64_MIN}};
	return &uses[(*n)++];
}

static void use(struct use *u, struct span s)
{
	if (s.lo == INT64_MIN && s.hi == INT64_MAX)
		u->unbounded = true;
	if (s.lo > s.hi)
		return; /* no tuple of it can be in this answer */
	u->span.lo = s.lo < u->span.lo ? s.lo : u->span.lo;
	u->span.hi = s.hi > u->span.hi ? s.hi : u->span.hi;
}

/* The relation variable v ranges over at statement i (its latest range before it). */
static const char *relation_of(const struct tquel_query *q, size_t i, const char *v)
{
	while (i-- > 0)
		if (q->stmts[i].kind == TQ_RANGE && !strcmp(q->stmts[i].u.range.var, v))
			return q->stmts[i].u.range.relation;
	return NULL;
}

static void retrieve_uses(const struct tquel_query *q, size_t i, struct use *uses, size_t *nuses,
                          const char **names, size_t max)
{
	const struct tquel_retrieve *r = &q->stmts[i].u.retrieve;
	if (r->into) /* a relation made by the query is never the trace's */
		use_of(uses, nuses, r->into)->unbounded = true;
	size_t nout = tquel_outer_names(r, names, max);
	for (size_t k = 0; k < nout; k++) {
		const char *rel = relation_of(q, i, names[k]);
		if (rel)
			use(use_of(uses, nuses, rel), r->when ? bound(r->when, names[k]) : every);
	}
	size_t nin = 0;
	const char **inner = names + nout;
	for (size_t t = 0; t < r->ntargets; t++)
		agg_names(r->targets[t].value, false, inner, &nin, max - nout);
	agg_names(r->where, false, inner, &nin, max - nout);
	agg_names(r->when, false, inner, &nin, max - nout);
	agg_names(r->valid.at, false, inner, &nin, max - nout);
	agg_names(r->valid.from, false, inner, &nin, max - nout);
	agg_names(r->valid.to, false, inner, &nin, max - nout);
	for (size_t k = 0; k < nin; k++) {
		const char *rel = relation_of(q, i, inner[k]);
		if (rel)
			use_of(uses, nuses, rel)->unbounded = true;
	}
}

void vg_query_bounds(const struct tquel_query *q, struct vg_query_need *n)
{
	/* Each statement names at most as many variables as its text has bytes. */
	size_t max = q->len + 1;
	const char **names = tquel_alloc(n->arena, max * sizeof *names);
	/* one relation per range statement or retrieve into at most */
	struct use *uses = tquel_alloc(n->arena, (q->nstmts + 1) * sizeof *uses);
	size_t nuses = 0;
	for (size_t i = 0; i < q->nstmts; i++)
		if (q->stmts[i].kind == TQ_RETRIEVE)
			retrieve_uses(q, i, uses, &nuses, names, max);
	n->bounds = tquel_alloc(n->arena, (nuses + 1) * sizeof *n->bounds);
	for (size_t i = 0; i < nuses; i++)
		if (!uses[i].unbounded)
			n->bounds[n->nbounds++] =
			    (struct vgq_time_bound){.relation = uses[i].relation,
			                            .lo = uses[i].span.lo,
			                            .hi = uses[i].span.hi};
}
