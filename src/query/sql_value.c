/* Value expressions in SQL, with the engine's types and meanings (docs/tquel.md,
 * "Values"): integer arithmetic truncates, a division by zero has no value (NULL),
 * integers are exact or the statement fails (PostgreSQL's bigint out of range: int8
 * arithmetic, an unsigned value past 2^63 - 1 cast to int8), strings
 * compare by bytes (COLLATE "C"), an entity compared with a string compares its name,
 * two entities are equal when they are the same entity (id, generation, image). */
#include <inttypes.h>
#include <string.h>

#include "query/sql_internal.h"

static const char *const TYPE_NAMES[] = {"int",   "uint",   "double",   "string",
                                         "bytes", "entity", "condition"};

static bool numeric(enum sql_type t)
{
	return t == ST_INT || t == ST_UINT || t == ST_DOUBLE;
}

static enum sql_type of_vgq(enum vgq_type t)
{
	static const enum sql_type map[] = {
	    [VGQ_INT] = ST_INT,       [VGQ_UINT] = ST_UINT,   [VGQ_DOUBLE] = ST_DOUBLE,
	    [VGQ_STRING] = ST_STRING, [VGQ_BYTES] = ST_BYTES, [VGQ_ENTITY] = ST_ENTITY};
	return map[t];
}

struct sql_value sqlc_attr_value(struct sqlc *c, int var, const struct vgq_sql_attr *at)
{
	const char *alias = c->vars[var].alias;
	struct sql_value v = {.sql = sqlc_printf(c, "%s.%s", alias, sqlc_ident(c, at->col)),
	                      .type = of_vgq(at->type)};
	if (v.type == ST_ENTITY) {
		v.alias = alias;
		v.attr = at;
	}
	return v;
}

/* An operand of arithmetic: a uint as int8, which PostgreSQL refuses past 2^63 - 1 (bigint
 * out of range), as the engine fails the statement. */
static const char *arith(struct sqlc *c, const struct sql_value *v)
{
	if (v->type != ST_UINT)
		return v->sql;
	return sqlc_printf(c, "(%s)::int8", v->sql);
}

static const char *identity(struct sqlc *c, const struct sql_value *v)
{
	return sqlc_printf(c, "(%s.%s, %s.%s, %s.%s)", v->alias, sqlc_ident(c, v->attr->id_col),
	                   v->alias, sqlc_ident(c, v->attr->gen_col), v->alias,
	                   sqlc_ident(c, v->attr->load_col));
}

static bool compare(struct sqlc *c, const struct tquel_expr *e, const struct sql_value *x,
                    const struct sql_value *y, struct sql_value *out)
{
	static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">="};
	bool eq = e->kind == TQ_EQ || e->kind == TQ_NE;
	const char *op = ops[e->kind - TQ_EQ];
	enum sql_type a = x->type, b = y->type;
	out->type = ST_BOOL;
	if (a == ST_UINT && b == ST_UINT && eq) { /* in the form the keyed GiST index holds */
		out->sql = sqlc_printf(c, "(" VGQ_SQL_UINT_KEY " %s " VGQ_SQL_UINT_KEY ")", x->sql,
		                       op, y->sql);
		return true;
	}
	if (numeric(a) && numeric(b)) {
		out->sql = sqlc_printf(c, "(%s %s %s)", x->sql, op, y->sql);
		return true;
	}
	bool texts = (a == ST_STRING || a == ST_ENTITY) && (b == ST_STRING || b == ST_ENTITY);
	if (a == ST_ENTITY && b == ST_ENTITY) {
		if (!eq) {
			sqlc_error(c, &e->loc,
			           "cannot compare entity with entity by order (only '=' "
			           "and '!=')");
			return false;
		}
		const char *ka = x->attr->ref_kind, *kb = y->attr->ref_kind;
		if (ka && kb && strcmp(ka, kb)) {
			sqlc_error(
			    c, &e->loc,
			    "cannot compare a %s entity with a %s entity: an entity equals only "
			    "itself, so entities of two kinds are never equal",
			    ka, kb);
			return false;
		}
		out->sql = sqlc_printf(c, "(%s %s %s)", identity(c, x), op, identity(c, y));
		return true;
	}
	if (texts) { /* bytes order, as the engine's memcmp */
		out->sql = sqlc_printf(c, "(%s %s %s COLLATE \"C\")", x->sql, op, y->sql);
		return true;
	}
	if (a == ST_BYTES && b == ST_BYTES && eq) {
		out->sql = sqlc_printf(c, "(%s %s %s)", x->sql, op, y->sql);
		return true;
	}
	bool order = a != ST_BOOL && b != ST_BOOL && a == b;
	sqlc_error(c, &e->loc, "cannot compare %s with %s%s", TYPE_NAMES[a], TYPE_NAMES[b],
	           order ? " by order (only '=' and '!=')" : "");
	return false;
}

bool sqlc_value(struct sqlc *c, const struct tquel_expr *e, struct sql_value *out)
{
	*out = (struct sql_value){0};
	switch (e->kind) {
	case TQ_NUMBER:
		if (e->u.number.is_int) {
			out->type = ST_INT;
			out->sql = sqlc_printf(c, "%" PRId64 "::int8", e->u.number.i);
		} else {
			out->type = ST_DOUBLE;
			out->sql = sqlc_printf(c, "'%.17g'::float8", e->u.number.d);
		}
		return true;
	case TQ_STRING:
		out->type = ST_STRING;
		out->sql = sqlc_literal(c, e->u.string.s);
		return true;
	case TQ_ATTR: {
		int v = sqlc_var(c, e->u.attr.var, &e->loc);
		if (v < 0)
			return false;
		const struct vgq_sql_rel *r = c->vars[v].rel;
		for (size_t i = 0; i < r->nattrs; i++)
			if (!strcmp(r->attrs[i].name, e->u.attr.name)) {
				*out = sqlc_attr_value(c, v, &r->attrs[i]);
				return true;
			}
		sqlc_error(c, &e->loc, "relation %s (tuple variable %s) has no attribute '%s'",
		           r->name, e->u.attr.var, e->u.attr.name);
		return false;
	}
	case TQ_AGG:
		if (c->outer) {
			sqlc_error(c, &e->loc, "an aggregate cannot be inside another aggregate");
			return false;
		}
		return sqlc_agg(c, e, out);
	default:
		break;
	}
	if (tquel_is_temporal_expr(e->kind) || e->kind == TQ_PRECEDE || e->kind == TQ_OVERLAPS ||
	    e->kind == TQ_EQUAL) {
		sqlc_error(c, &e->loc, "a temporal expression is not a value here");
		return false;
	}
	struct sql_value x, y = {0};
	if (!sqlc_value(c, e->u.op.a, &x))
		return false;
	if (e->kind != TQ_NEG && e->kind != TQ_NOT && !sqlc_value(c, e->u.op.b, &y))
		return false;
	switch (e->kind) {
	case TQ_NEG:
		if (!numeric(x.type)) {
			sqlc_error(c, &e->loc, "'-' needs a number, not %s", TYPE_NAMES[x.type]);
			return false;
		}
		out->type = x.type == ST_DOUBLE ? ST_DOUBLE : ST_INT;
		out->sql = sqlc_printf(c, "(-%s)", arith(c, &x));
		return true;
	case TQ_ADD:
	case TQ_SUB:
	case TQ_MUL:
	case TQ_DIV: {
		if (!numeric(x.type) || !numeric(y.type)) {
			sqlc_error(c, &e->loc, "'%s' needs numbers, not %s and %s",
			           tquel_op_text(e->kind), TYPE_NAMES[x.type], TYPE_NAMES[y.type]);
			return false;
		}
		out->type = x.type == ST_DOUBLE || y.type == ST_DOUBLE ? ST_DOUBLE : ST_INT;
		const char *a = arith(c, &x), *b = arith(c, &y);
		if (e->kind == TQ_DIV) /* no value when dividing by zero */
			out->sql = sqlc_printf(c, "(%s / NULLIF(%s, 0))", a, b);
		else
			out->sql = sqlc_printf(c, "(%s %s %s)", a, tquel_op_text(e->kind), b);
		return true;
	}
	case TQ_EQ:
	case TQ_NE:
	case TQ_LT:
	case TQ_LE:
	case TQ_GT:
	case TQ_GE:
		if (x.type == ST_BOOL || y.type == ST_BOOL) {
			sqlc_error(c, &e->loc, "cannot compare %s with %s", TYPE_NAMES[x.type],
			           TYPE_NAMES[y.type]);
			return false;
		}
		return compare(c, e, &x, &y, out);
	case TQ_AND:
	case TQ_OR:
	case TQ_NOT: {
		const struct tquel_expr *bad = x.type != ST_BOOL                        ? e->u.op.a
		                               : e->kind != TQ_NOT && y.type != ST_BOOL ? e->u.op.b
		                                                                        : NULL;
		if (bad) {
			sqlc_error(c, &bad->loc, "'%s' needs conditions (comparisons)",
			           tquel_op_text(e->kind));
			return false;
		}
		out->type = ST_BOOL;
		out->sql = e->kind == TQ_NOT ? sqlc_printf(c, "(NOT %s)", x.sql)
		                             : sqlc_printf(c, "(%s %s %s)", x.sql,
		                                           e->kind == TQ_AND ? "AND" : "OR", y.sql);
		return true;
	}
	default:
		sqlc_error(c, &e->loc, "unexpected expression");
		return false;
	}
}
