/* The valid-time bounds and key selections a query's selections put on the relations it
 * ranges over (query/selections.h) (relations/relation.h, struct vgq_time_bound and vgq_key_cond),
 * read from the statements as parsed. Key selections: a retrieve's where clause compares an
 * attribute of a variable with a constant (`where S.mailbox = 7 and S.size > 60000`),
 * top-level conjuncts only; a relation's selection is the alternatives of its uses (one
 * per variable over it), none when some use has no such conjunct. Time bounds: a
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

#include "query/selections.h"
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
	bool unbounded, unkeyed;
	struct span span;
	unsigned nalts; /* alternatives of key conditions (unkeyed: some use has none) */
};

/* The key conditions found so far (every comparison node of the text at most). */
struct keys {
	struct vgq_key_cond *v;
	size_t n, max;
};

/* `var.attr OP constant` (or the constant first): the condition, or false. */
static bool key_cond(const struct tquel_expr *e, const char *var, struct vgq_key_cond *k)
{
	static const enum tquel_kind ops[] = {TQ_EQ, TQ_NE, TQ_LT, TQ_LE, TQ_GT, TQ_GE};
	static const enum vgq_key_op flipped[] = {VGQ_KEY_EQ, VGQ_KEY_NE, VGQ_KEY_GT,
	                                          VGQ_KEY_GE, VGQ_KEY_LT, VGQ_KEY_LE};
	size_t op = 0;
	while (op < 6 && ops[op] != e->kind)
		op++;
	if (op == 6)
		return false;
	const struct tquel_expr *a = e->u.op.a, *c = e->u.op.b;
	bool flip = a->kind != TQ_ATTR;
	if (flip) {
		a = e->u.op.b;
		c = e->u.op.a;
	}
	if (a->kind != TQ_ATTR || strcmp(a->u.attr.var, var))
		return false;
	bool neg = c->kind == TQ_NEG;
	const struct tquel_expr *num = neg ? c->u.op.a : c;
	*k = (struct vgq_key_cond){.attr = a->u.attr.name,
	                           .op = flip ? flipped[op] : (enum vgq_key_op)op};
	if (num->kind == TQ_NUMBER && num->u.number.is_int && num->u.number.i >= 0) {
		k->i = neg ? -num->u.number.i : num->u.number.i;
		return true;
	}
	if (!neg && c->kind == TQ_STRING) {
		k->is_string = true;
		k->s = c->u.string.s;
		return true;
	}
	return false;
}

/* Adds the key conditions on `var` among the top-level conjuncts of a where clause. */
static void key_conds(const struct tquel_expr *e, const char *var, const char *relation,
                      unsigned alt, struct keys *ks)
{
	if (!e)
		return;
	if (e->kind == TQ_AND) {
		key_conds(e->u.op.a, var, relation, alt, ks);
		key_conds(e->u.op.b, var, relation, alt, ks);
		return;
	}
	struct vgq_key_cond k;
	if (ks->n < ks->max && key_cond(e, var, &k)) {
		k.relation = relation;
		k.alt = alt;
		ks->v[ks->n++] = k;
	}
}

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
                          const char **names, size_t max, struct keys *ks)
{
	const struct tquel_retrieve *r = &q->stmts[i].u.retrieve;
	if (r->into) { /* a relation made by the query is never the trace's */
		struct use *u = use_of(uses, nuses, r->into);
		u->unbounded = u->unkeyed = true;
	}
	size_t nout = tquel_outer_names(r, names, max);
	for (size_t k = 0; k < nout; k++) {
		const char *rel = relation_of(q, i, names[k]);
		if (!rel)
			continue;
		struct use *u = use_of(uses, nuses, rel);
		use(u, r->when ? bound(r->when, names[k]) : every);
		size_t before = ks->n;
		key_conds(r->where, names[k], u->relation, u->nalts, ks);
		if (ks->n > before)
			u->nalts++;
		else
			u->unkeyed = true;
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
		if (rel) {
			struct use *u = use_of(uses, nuses, rel);
			u->unbounded = u->unkeyed = true;
		}
	}
}

void vgq_query_selections(const struct tquel_query *q, struct tquel_arena *arena,
                          struct vgq_selections *n)
{
	*n = (struct vgq_selections){0};
	/* Each statement names at most as many variables as its text has bytes. */
	size_t max = q->len + 1;
	const char **names = tquel_alloc(arena, max * sizeof *names);
	/* one relation per range statement or retrieve into at most */
	struct use *uses = tquel_alloc(arena, (q->nstmts + 1) * sizeof *uses);
	size_t nuses = 0;
	struct keys ks = {tquel_alloc(arena, max * sizeof *ks.v), 0, max};
	for (size_t i = 0; i < q->nstmts; i++)
		if (q->stmts[i].kind == TQ_RETRIEVE)
			retrieve_uses(q, i, uses, &nuses, names, max, &ks);
	n->bounds = tquel_alloc(arena, (nuses + 1) * sizeof *n->bounds);
	for (size_t i = 0; i < nuses; i++)
		if (!uses[i].unbounded)
			n->bounds[n->nbounds++] =
			    (struct vgq_time_bound){.relation = uses[i].relation,
			                            .lo = uses[i].span.lo,
			                            .hi = uses[i].span.hi};
	n->keys = tquel_alloc(arena, (ks.n + 1) * sizeof *n->keys);
	for (size_t k = 0; k < ks.n; k++)
		if (!use_of(uses, &nuses, ks.v[k].relation)->unkeyed)
			n->keys[n->nkeys++] = ks.v[k];
}
