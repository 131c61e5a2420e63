/* Temporal expressions and predicates in SQL (docs/tquel.md, "What a query means"):
 * an expression is an event, an interval [b, e), or nothing; a condition says when it
 * is something. Shapes known when compiling (a variable's relation says it) give plain
 * comparisons of the time columns, which B-tree indexes serve; only `extend` makes a
 * shape that depends on the row. */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "query/sql_internal.h"

const char *sqlc_and(struct sqlc *c, const char *a, const char *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return sqlc_printf(c, "%s AND %s", a, b);
}

struct sql_time sqlc_var_time(struct sqlc *c, int v)
{
	const char *t = c->vars[v].alias;
	if (c->vars[v].rel->event) {
		const char *at = sqlc_printf(c, "%s.valid_at", t);
		return (struct sql_time){.shape = 1, .b = at, .e = at};
	}
	struct sql_time r = {.shape = 2,
	                     .b = sqlc_printf(c, "%s.valid_from", t),
	                     .e = sqlc_printf(c, "%s.valid_to", t)};
	if (!c->vars[v].from) /* a table (an aggregate's subquery has no index) */
		r.range = sqlc_printf(c, "int8range(%s, %s)", r.b, r.e);
	return r;
}

/* The shape as an SQL expression (1 event, 2 interval). */
static const char *kind_sql(struct sqlc *c, const struct sql_time *x)
{
	return x->shape ? sqlc_printf(c, "%d", x->shape) : x->kind;
}

struct sql_time sqlc_overlap(struct sqlc *c, const struct sql_time *x, const struct sql_time *y)
{
	struct sql_time r = {.cond = sqlc_and(c, x->cond, y->cond)};
	const char *bx = x->b, *ex = x->e, *by = y->b, *ey = y->e;
	const char *meet;
	if (x->range && y->range) {
		/* [b1, e1) and [b2, e2) with b <= e (a stored interval; b = e is empty and
		 * overlaps nothing, as in the engine) overlap exactly when int8range's
		 * half-open ranges do; && is what a GiST index on the ranges serves.
		 * Ordered, so that the same overlap said twice (a when clause and the
		 * default valid time) is the same text */
		const char *r1 = x->range, *r2 = y->range;
		if (strcmp(r1, r2) > 0)
			r1 = y->range, r2 = x->range;
		meet = sqlc_printf(c, "%s && %s", r1, r2);
	} else if (x->shape == 2 && y->shape == 2) {
		/* the first two conjuncts are implied by the third; said plainly, the
		 * planner can use indexes on the time columns */
		meet = sqlc_printf(c, "%s < %s AND %s < %s AND GREATEST(%s, %s) < LEAST(%s, %s)",
		                   bx, ey, by, ex, bx, by, ex, ey);
	} else if (x->shape == 1 && y->shape == 1) {
		meet = sqlc_printf(c, "%s = %s", bx, by);
	} else if (x->shape == 1 && y->shape == 2) {
		meet = sqlc_printf(c, "%s <= %s AND %s < %s", by, bx, bx, ey);
	} else if (x->shape == 2 && y->shape == 1) {
		meet = sqlc_printf(c, "%s <= %s AND %s < %s", bx, by, by, ex);
	} else {
		const char *kx = kind_sql(c, x), *ky = kind_sql(c, y);
		meet = sqlc_printf(
		    c,
		    "(CASE WHEN %s = 2 AND %s = 2 THEN GREATEST(%s, %s) < LEAST(%s, %s) "
		    "WHEN %s = 1 AND %s = 1 THEN %s = %s "
		    "WHEN %s = 1 THEN %s <= %s AND %s < %s "
		    "ELSE %s <= %s AND %s < %s END)",
		    kx, ky, bx, by, ex, ey, kx, ky, bx, by, kx, by, bx, bx, ey, bx, by, by, ex);
	}
	r.cond = sqlc_and(c, r.cond, meet);
	if (x->shape == 1 || y->shape == 1) { /* an event: the event's time */
		r.shape = 1;
		r.b = r.e = x->shape == 1 ? bx : by;
	} else {
		r.shape = x->shape == 2 && y->shape == 2 ? 2 : 0;
		if (!r.shape)
			r.kind = sqlc_printf(c, "LEAST(%s, %s)", kind_sql(c, x), kind_sql(c, y));
		r.b = sqlc_printf(c, "GREATEST(%s, %s)", bx, by);
		r.e = sqlc_printf(c, "LEAST(%s, %s)", ex, ey);
	}
	return r;
}

static const char *constant(struct sqlc *c, const struct tquel_expr *e)
{
	switch (e->u.tconst.which) {
	case TQ_NOW: /* the end of what was recorded: the last event stored */
		return sqlc_printf(c, "(SELECT max(last_ns) FROM %s.loads)",
		                   sqlc_ident(c, c->cat->schema));
	case TQ_BEGINNING:
		return "(-9223372036854775807 - 1)";
	case TQ_FOREVER:
		return "9223372036854775807";
	case TQ_DATE:
		break;
	}
	return sqlc_printf(c, "%" PRId64, e->u.tconst.ns);
}

bool sqlc_time(struct sqlc *c, const struct tquel_expr *e, struct sql_time *out)
{
	struct sql_time x, y;
	switch (e->kind) {
	case TQ_TVAR: {
		int v = sqlc_var(c, e->u.tvar.name, &e->loc);
		if (v < 0)
			return false;
		*out = sqlc_var_time(c, v);
		return true;
	}
	case TQ_TCONST:
		*out = (struct sql_time){.shape = 1};
		out->b = out->e = constant(c, e);
		return true;
	case TQ_BEGIN_OF:
	case TQ_END_OF:
		if (!sqlc_time(c, e->u.op.a, &x))
			return false;
		*out = (struct sql_time){.cond = x.cond, .shape = 1};
		out->b = out->e = e->kind == TQ_BEGIN_OF ? x.b : x.e;
		return true;
	case TQ_INTERSECT:
	case TQ_EXTEND:
		if (!sqlc_time(c, e->u.op.a, &x) || !sqlc_time(c, e->u.op.b, &y))
			return false;
		if (e->kind == TQ_INTERSECT) {
			*out = sqlc_overlap(c, &x, &y);
			return true;
		}
		/* from the start of x to the end of y: an interval, an event when they
		 * coincide, nothing when y ends before x starts */
		*out = (struct sql_time){.b = x.b, .e = y.e};
		out->cond =
		    sqlc_and(c, sqlc_and(c, x.cond, y.cond), sqlc_printf(c, "%s <= %s", x.b, y.e));
		out->kind = sqlc_printf(c, "(CASE WHEN %s < %s THEN 2 ELSE 1 END)", x.b, y.e);
		return true;
	case TQ_AGG: {
		/* the valid time of its value: the aggregate is a variable of the statement
		 * (its own, for each occurrence), an interval over which the value is
		 * constant */
		struct sql_value v;
		if (c->outer) {
			sqlc_error(c, &e->loc, "an aggregate cannot be inside another aggregate");
			return false;
		}
		if (!sqlc_agg(c, e, &v))
			return false;
		*out = sqlc_var_time(c, (int)c->nvars - 1);
		return true;
	}
	default:
		sqlc_error(c, &e->loc,
		           "expected a temporal expression (a tuple variable, begin of, "
		           "end of, overlap, extend, a time constant)");
		return false;
	}
}

const char *sqlc_pred(struct sqlc *c, const struct tquel_expr *e)
{
	struct sql_time x, y;
	switch (e->kind) {
	case TQ_AND:
	case TQ_OR: {
		const char *a = sqlc_pred(c, e->u.op.a);
		const char *b = a ? sqlc_pred(c, e->u.op.b) : NULL;
		return b ? sqlc_printf(c, "(%s %s %s)", a, e->kind == TQ_AND ? "AND" : "OR", b)
		         : NULL;
	}
	case TQ_NOT: {
		const char *a = sqlc_pred(c, e->u.op.a);
		return a ? sqlc_printf(c, "(NOT %s)", a) : NULL;
	}
	case TQ_PRECEDE:
	case TQ_OVERLAPS:
	case TQ_EQUAL:
		break;
	default:
		return sqlc_error(c, &e->loc,
		                  "expected a temporal predicate (precede, overlap, "
		                  "equal)");
	}
	if (!sqlc_time(c, e->u.op.a, &x) || !sqlc_time(c, e->u.op.b, &y))
		return NULL;
	const char *cond;
	if (e->kind == TQ_OVERLAPS) {
		cond = sqlc_overlap(c, &x, &y).cond;
	} else if (e->kind == TQ_PRECEDE) {
		cond =
		    sqlc_and(c, sqlc_and(c, x.cond, y.cond), sqlc_printf(c, "%s <= %s", x.e, y.b));
	} else {
		const char *same = x.shape && y.shape ? (x.shape == y.shape ? NULL : "false")
		                                      : sqlc_printf(c, "%s = %s", kind_sql(c, &x),
		                                                    kind_sql(c, &y));
		cond = sqlc_and(
		    c, sqlc_and(c, x.cond, y.cond),
		    sqlc_and(c, same, sqlc_printf(c, "%s = %s AND %s = %s", x.b, y.b, x.e, y.e)));
	}
	return sqlc_printf(c, "(%s)", cond ? cond : "true");
}
