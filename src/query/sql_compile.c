/* Statements compiled to SQL: ranges resolved against the store's catalog, each
 * retrieve one SELECT DISTINCT over its variables' tables (a result is a set), with the
 * result's valid time as columns; retrieve unique coalesces value-equivalent intervals
 * that overlap or meet (gaps and islands over window functions); retrieve into makes a
 * table and catalog rows, so that later statements and later runs range over it. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/sql_internal.h"

static const enum vgq_type RESULT_TYPE[] = {
    [ST_INT] = VGQ_INT,       [ST_UINT] = VGQ_UINT,   [ST_DOUBLE] = VGQ_DOUBLE,
    [ST_STRING] = VGQ_STRING, [ST_BYTES] = VGQ_BYTES, [ST_ENTITY] = VGQ_ENTITY,
};

struct target {
	const char *name;
	struct sql_value v;
	const struct tquel_loc *loc;
};

/* The target list, V.all expanded; false after an error. */
static bool targets(struct sqlc *c, const struct tquel_retrieve *r, struct target **out, size_t *n)
{
	size_t cap = r->ntargets + 1;
	struct target *t = tquel_alloc(c->a, cap * sizeof *t);
	*n = 0;
	for (size_t i = 0; i < r->ntargets; i++) {
		const struct tquel_target *tt = &r->targets[i];
		const struct vgq_sql_rel *rel = NULL;
		int v = -1;
		if (tt->all) {
			if ((v = sqlc_var(c, tt->value->u.attr.var, &tt->value->loc)) < 0)
				return false;
			rel = c->vars[v].rel;
		}
		size_t items = rel ? rel->nattrs : 1;
		if (*n + items > cap) {
			struct target *old = t;
			cap = *n + items + cap;
			t = tquel_alloc(c->a, cap * sizeof *t);
			memcpy(t, old, *n * sizeof *t);
		}
		for (size_t k = 0; k < items; k++) {
			const char *name = rel ? rel->attrs[k].name : tt->name;
			for (size_t j = 0; j < *n; j++)
				if (!strcasecmp(t[j].name, name)) {
					sqlc_error(
					    c, &tt->loc, "two result attributes named '%s'%s", name,
					    tt->all ? " (V.all names every attribute of V)" : "");
					return false;
				}
			struct target *x = &t[(*n)++];
			x->name = name;
			x->loc = &tt->loc;
			if (rel)
				x->v = sqlc_attr_value(c, v, &rel->attrs[k]);
			else if (!sqlc_value(c, tt->value, &x->v))
				return false;
			if (x->v.type == ST_BOOL) {
				sqlc_error(c, &tt->value->loc,
				           "'%s' is a condition; a result attribute needs a value",
				           name);
				return false;
			}
		}
	}
	*out = t;
	return true;
}

/* Appends to a growing comma list. */
static const char *list(struct sqlc *c, const char *l, const char *item)
{
	return l ? sqlc_printf(c, "%s, %s", l, item) : item;
}

/* The result's columns (names quoted), in the SELECT's order, values only. */
static const char *value_columns(struct sqlc *c, const struct target *t, size_t n)
{
	const char *l = NULL;
	for (size_t i = 0; i < n; i++) {
		l = list(c, l, sqlc_ident(c, t[i].name));
		if (t[i].v.type == ST_ENTITY)
			for (int k = 0; k < 3; k++)
				l = list(c, l,
				         sqlc_ident(c, sqlc_printf(c, "%s_%s", t[i].name,
				                                   (const char *[]){"id", "gen",
				                                                    "load"}[k])));
	}
	return l;
}

static const char *select_list(struct sqlc *c, const struct target *t, size_t n)
{
	const char *l = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct sql_value *v = &t[i].v;
		l = list(c, l, sqlc_printf(c, "%s AS %s", v->sql, sqlc_ident(c, t[i].name)));
		if (v->type != ST_ENTITY)
			continue;
		const char *cols[3] = {v->attr->id_col, v->attr->gen_col, v->attr->load_col};
		static const char *const sfx[3] = {"id", "gen", "load"};
		for (int k = 0; k < 3; k++)
			l = list(
			    c, l,
			    sqlc_printf(c, "%s.%s AS %s", v->alias, sqlc_ident(c, cols[k]),
			                sqlc_ident(c, sqlc_printf(c, "%s_%s", t[i].name, sfx[k]))));
	}
	return l;
}

/* retrieve unique: per values, the union of the intervals as maximal intervals. A tuple
 * starts an island when it begins after every earlier end of its values. */
static const char *coalesce(struct sqlc *c, const char *inner, const char *vals)
{
	const char *part = vals ? sqlc_printf(c, "PARTITION BY %s ", vals) : "";
	const char *keys = vals ? sqlc_printf(c, "%s, ", vals) : "";
	return sqlc_printf(
	    c,
	    "WITH r AS (%s),\n"
	    "s AS (SELECT *, CASE WHEN valid_from <= max(valid_to) OVER (%sORDER BY valid_from, "
	    "valid_to ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) THEN 0 ELSE 1 END AS "
	    "vg_first FROM r),\n"
	    "g AS (SELECT *, sum(vg_first) OVER (%sORDER BY valid_from, valid_to ROWS UNBOUNDED "
	    "PRECEDING) AS vg_island FROM s)\n"
	    "SELECT %smin(valid_from) AS valid_from, max(valid_to) AS valid_to FROM g GROUP BY "
	    "%svg_island",
	    inner, part, part, keys, keys);
}

const char *sqlc_from_list(struct sqlc *c)
{
	return sqlc_from_some(c, 0, false);
}

const char *sqlc_from_some(struct sqlc *c, uint64_t mask, bool set)
{
	const char *l = NULL;
	for (size_t i = 0; i < c->nvars; i++) {
		if (((mask >> i) & 1) != set)
			continue;
		const char *a = c->vars[i].alias;
		l = list(c, l,
		         c->vars[i].from
		             ? sqlc_printf(c, "(%s) AS %s", c->vars[i].from, a)
		             : sqlc_printf(c, "%s.%s AS %s", sqlc_ident(c, c->cat->schema),
		                           sqlc_ident(c, c->vars[i].rel->table), a));
	}
	return l;
}

/* The retrieve's result name: its into name (checked), or retrieve@LINE. */
static bool result_name(struct sqlc *c, const struct tquel_stmt *st, struct vgq_sql_stmt *out)
{
	const struct tquel_retrieve *r = &st->u.retrieve;
	out->line = st->loc.line;
	if (!r->into) {
		out->name = sqlc_printf(c, "retrieve@%u", st->loc.line);
		return true;
	}
	out->name = out->table = r->into;
	out->into = true;
	if (strlen(r->into) > 63) {
		sqlc_error(c, &r->into_loc, "'%s' is longer than PostgreSQL's 63-byte names",
		           r->into);
		return false;
	}
	const struct vgq_sql_rel *old = vgq_sql_catalog_find(c->cat, r->into);
	if (!old && strcasecmp(r->into, "Clock") && strcasecmp(r->into, "loads"))
		return true;
	if (old && old->derived && !old->fresh) {
		out->replace = true; /* a result of an earlier run: made again */
		out->name = old->name;
		out->table = old->table;
		return true;
	}
	sqlc_error(c, &r->into_loc, "'%s' is already a relation; name the result otherwise",
	           r->into);
	return false;
}

/* With a valid clause, an aggregate's value is the one holding at the event b (at), or
 * at some instant of [b, e). */
static const char *holding(struct sqlc *c, const char *b, const char *e, bool at)
{
	const char *cond = NULL;
	for (size_t i = 0; i < c->nvars; i++) {
		const char *a = c->vars[i].alias;
		if (c->vars[i].agg)
			cond =
			    sqlc_and(c, cond,
			             at ? sqlc_printf(c, "%s.valid_from <= %s AND %s < %s.valid_to",
			                              a, b, b, a)
			                : sqlc_printf(c, "%s.valid_from < %s AND %s < %s.valid_to",
			                              a, e, b, a));
	}
	return cond;
}

/* Compiles the when clause onto *where, keeping its top-level conjuncts (up to 16). */
static bool when_conjuncts(struct sqlc *c, const struct tquel_expr *e, const char **conj, size_t *n,
                           const char **where)
{
	if (e->kind == TQ_AND)
		return when_conjuncts(c, e->u.op.a, conj, n, where) &&
		       when_conjuncts(c, e->u.op.b, conj, n, where);
	const char *p = sqlc_pred(c, e);
	if (!p)
		return false;
	if (*n < 16)
		conj[(*n)++] = p;
	*where = sqlc_and(c, *where, p);
	return true;
}

static bool retrieve(struct sqlc *c, const struct tquel_stmt *st, struct vgq_sql_stmt *out)
{
	const struct tquel_retrieve *r = &st->u.retrieve;
	if (!result_name(c, st, out))
		return false;
	c->nouter = tquel_outer_names(r, c->outer_names, VGQ_SQL_MAX_VARS);
	struct target *t;
	size_t nt;
	c->marking = true; /* the variables the values read */
	if (!targets(c, r, &t, &nt))
		return false;
	c->marking = false;
	const char *where = NULL;
	if (r->where) {
		struct sql_value w;
		if (!sqlc_value(c, r->where, &w))
			return false;
		if (w.type != ST_BOOL) {
			sqlc_error(c, &r->where->loc, "where needs a condition (a comparison)");
			return false;
		}
		where = w.sql;
	}
	/* the when clause's top-level conjuncts, apart: one the default valid time also
	 * needs (`when R overlap L`) is then said once */
	const char *conj[16];
	size_t nconj = 0;
	if (r->when && !when_conjuncts(c, r->when, conj, &nconj, &where))
		return false;
	const char *times;
	c->marking = true; /* the variables the valid time reads */
	if (r->valid.kind == TQ_VALID_AT) {
		struct sql_time at;
		if (!sqlc_time(c, r->valid.at, &at))
			return false;
		if (at.shape != 1) {
			sqlc_error(c, &r->valid.at->loc,
			           "valid at needs an event, and this is an "
			           "interval (use begin of or end of)");
			return false;
		}
		where = sqlc_and(c, sqlc_and(c, where, at.cond), holding(c, at.b, at.b, true));
		out->event = true;
		times = sqlc_printf(c, "%s AS valid_at", at.b);
	} else if (r->valid.kind == TQ_VALID_FROM_TO) {
		struct sql_time f, u;
		if (!sqlc_time(c, r->valid.from, &f) || !sqlc_time(c, r->valid.to, &u))
			return false;
		where = sqlc_and(c, sqlc_and(c, where, sqlc_and(c, f.cond, u.cond)),
		                 sqlc_printf(c, "%s < %s", f.b, u.e));
		where = sqlc_and(c, where, holding(c, f.b, u.e, false));
		times = sqlc_printf(c, "%s AS valid_from, %s AS valid_to", f.b, u.e);
	} else {
		if (!c->nvars) {
			sqlc_error(c, &st->loc, "a retrieve needs a tuple variable");
			return false;
		}
		/* the default valid time: where all the variables' valid times meet */
		struct sql_time d = sqlc_var_time(c, 0);
		for (size_t i = 1; i < c->nvars; i++) {
			struct sql_time v = sqlc_var_time(c, (int)i);
			d = sqlc_overlap(c, &d, &v);
		}
		bool said = false;
		const char *wrapped = d.cond ? sqlc_printf(c, "(%s)", d.cond) : NULL;
		for (size_t i = 0; i < nconj && wrapped && !said; i++)
			said = !strcmp(conj[i], wrapped);
		if (!said)
			where = sqlc_and(c, where, d.cond);
		out->event = d.shape == 1;
		times = out->event ? sqlc_printf(c, "%s AS valid_at", d.b)
		                   : sqlc_printf(c, "%s AS valid_from, %s AS valid_to", d.b, d.e);
	}
	if (!c->nvars) {
		sqlc_error(c, &st->loc, "a retrieve needs a tuple variable");
		return false;
	}
	c->marking = false;
	/* the correlations of every aggregate, those of the valid clause included */
	where = sqlc_and(c, where, c->agg_conds);
	const char *sel = select_list(c, t, nt);
	/* with a valid clause, a variable that neither the values nor the valid time read
	 * only has to exist: EXISTS, a semi-join, instead of a join whose duplicates
	 * DISTINCT removes (the paper's `when S precede end of R` reads S only there) */
	uint64_t hidden = 0;
	for (size_t i = 0; i < c->nvars && r->valid.kind != TQ_VALID_NONE && where; i++)
		if (!((c->shown >> i) & 1) && !c->vars[i].agg)
			hidden |= 1ull << i;
	const char *from = sqlc_from_some(c, hidden, false);
	if (hidden)
		where = sqlc_printf(c, "EXISTS (SELECT 1 FROM %s WHERE %s)",
		                    sqlc_from_some(c, hidden, true), where);
	const char *body = sqlc_printf(
	    c, "SELECT DISTINCT %s%s%s%s%s%s%s", sel ? sel : "", sel ? ", " : "", times,
	    from ? "\nFROM " : "", from ? from : "", where ? "\nWHERE " : "", where ? where : "");
	const char *vals = value_columns(c, t, nt);
	if (r->unique && !out->event)
		body = coalesce(c, body, vals);
	const char *order = out->event ? "valid_at" : "valid_from, valid_to";
	if (vals)
		order = sqlc_printf(c, "%s, %s", order, vals);
	out->select = sqlc_printf(c, "%s\nORDER BY %s", body, order);
	out->nattrs = nt;
	out->attrs = tquel_alloc(c->a, (nt + 1) * sizeof *out->attrs);
	for (size_t i = 0; i < nt; i++) {
		out->attrs[i].name = t[i].name;
		out->attrs[i].type = RESULT_TYPE[t[i].v.type];
		out->attrs[i].ref_kind = t[i].v.attr ? t[i].v.attr->ref_kind : NULL;
	}
	if (!out->into)
		return true;
	/* retrieve into: a table of the schema and its catalog rows */
	const char *schema = sqlc_ident(c, c->cat->schema);
	const char *tab = sqlc_printf(c, "%s.%s", schema, sqlc_ident(c, out->table));
	const char *drop = "";
	if (out->replace)
		drop = sqlc_printf(c,
		                   "DROP TABLE IF EXISTS %s; DELETE FROM %s.vg_attributes WHERE "
		                   "lower(relation) = lower(%s); DELETE FROM %s.vg_relations WHERE "
		                   "lower(relation) = lower(%s); ",
		                   tab, schema, sqlc_literal(c, out->name), schema,
		                   sqlc_literal(c, out->name));
	out->create = sqlc_printf(c, "%sCREATE TABLE %s AS\n%s", drop, tab, body);
	const char *rows = sqlc_printf(
	    c,
	    "INSERT INTO %s.vg_relations (relation, table_name, kind, derived) VALUES (%s, %s, "
	    "'%s', true)",
	    schema, sqlc_literal(c, out->name), sqlc_literal(c, out->table),
	    out->event ? "event" : "interval");
	struct vgq_sql_rel *nr =
	    out->replace ? vgq_sql_catalog_find(c->cat, out->name)
	                 : vgq_sql_catalog_add(c->cat, out->name, out->table, out->event, true);
	nr->nattrs = 0;
	nr->event = out->event;
	nr->fresh = true;
	for (size_t i = 0; i < nt; i++) {
		bool ent = t[i].v.type == ST_ENTITY;
		struct vgq_sql_attr a = {
		    .name = t[i].name,
		    .type = out->attrs[i].type,
		    .ref_kind = out->attrs[i].ref_kind,
		    .col = t[i].name,
		    .id_col = ent ? sqlc_printf(c, "%s_id", t[i].name) : NULL,
		    .gen_col = ent ? sqlc_printf(c, "%s_gen", t[i].name) : NULL,
		    .load_col = ent ? sqlc_printf(c, "%s_load", t[i].name) : NULL,
		};
		vgq_sql_rel_add_attr(c->cat, nr, &a);
		rows = sqlc_printf(
		    c,
		    "%s; INSERT INTO %s.vg_attributes (relation, position, attr, type, ref_kind, "
		    "col, "
		    "id_col, gen_col, load_col) VALUES (%s, %zu, %s, '%s', %s, %s, %s, %s, %s)",
		    rows, schema, sqlc_literal(c, out->name), i, sqlc_literal(c, a.name),
		    vgq_type_name(a.type), a.ref_kind ? sqlc_literal(c, a.ref_kind) : "NULL",
		    sqlc_literal(c, a.col), ent ? sqlc_literal(c, a.id_col) : "NULL",
		    ent ? sqlc_literal(c, a.gen_col) : "NULL",
		    ent ? sqlc_literal(c, a.load_col) : "NULL");
	}
	out->catalog = rows;
	out->from_table = sqlc_printf(c, "SELECT * FROM %s ORDER BY %s", tab, order);
	return true;
}

/* Clock[n] (docs/tquel.md, "Clocks"): an event relation without attributes, a tick
 * every n base ticks from the first event stored up to the last, as the engine makes it
 * over a trace (relation_clock.c), its limit on the number of ticks included: beyond it
 * the statement fails in PostgreSQL with that message, before any tick is made (the
 * message depends on the row, or PostgreSQL would fold it while planning). */
static struct vgq_sql_rel *clock_range(struct sqlc *c, const struct tquel_range *r,
                                       struct sql_range *sr)
{
	static struct vgq_sql_rel clock = {.name = "Clock", .event = true};
	uint64_t tick = c->cat->tick_ns > 0 ? (uint64_t)c->cat->tick_ns : 1000000000u;
	if (tick > INT64_MAX / r->clock_period) {
		sqlc_error(c, &r->relation_loc, "Clock[%llu]: the period overflows 64 bits",
		           (unsigned long long)r->clock_period);
		return NULL;
	}
	long long step = (long long)(tick * r->clock_period);
	const char *name = r->clock_period == 1
	                       ? "Clock"
	                       : sqlc_printf(c, "Clock[%llu]", (unsigned long long)r->clock_period);
	sr->from = sqlc_printf(
	    c,
	    "SELECT generate_series(lo, CASE WHEN (hi - lo) / %lld < %llu THEN hi ELSE "
	    "('%s: more than %llu ticks over the time line stored (use a larger base tick)' "
	    "|| left(hi::text, 0))::int8 END, %lld) AS valid_at FROM (SELECT min(first_ns) AS lo, "
	    "max(last_ns) AS hi "
	    "FROM %s.loads) tl",
	    step, (unsigned long long)VGQ_CLOCK_MAX, name, (unsigned long long)VGQ_CLOCK_MAX, step,
	    sqlc_ident(c, c->cat->schema));
	return &clock;
}

size_t vgq_sql_compile(struct vgq_sql_catalog *cat, const struct tquel_query *q,
                       struct vgq_sql_program *out, FILE *errors)
{
	*out = (struct vgq_sql_program){0};
	out->stmts = calloc(q->nstmts + 1, sizeof *out->stmts);
	if (!out->stmts)
		abort();
	struct sql_range *ranges = calloc(q->nstmts + 1, sizeof *ranges);
	if (!ranges)
		abort();
	size_t nranges = 0, nerr = 0;
	for (size_t i = 0; i < q->nstmts && !nerr; i++) {
		const struct tquel_stmt *st = &q->stmts[i];
		struct sqlc c = {.cat = cat,
		                 .q = q,
		                 .err = errors,
		                 .a = cat->arena,
		                 .ranges = ranges,
		                 .nranges = nranges};
		if (st->kind == TQ_RANGE) {
			const struct tquel_range *r = &st->u.range;
			struct sql_range *sr = &ranges[nranges++];
			sr->var = r->var;
			sr->rel = r->clock_period ? clock_range(&c, r, sr)
			                          : vgq_sql_catalog_find(cat, r->relation);
			if (!sr->rel && !r->clock_period)
				sqlc_error(&c, &r->relation_loc,
				           "no relation '%s' in the store (schema %s; its table "
				           "%s.vg_relations lists those stored)",
				           r->relation, cat->schema, cat->schema);
			nerr += c.errors;
			continue;
		}
		struct vgq_sql_stmt *s = &out->stmts[out->nstmts];
		if (retrieve(&c, st, s) && !c.errors)
			out->nstmts++;
		nerr += c.errors ? c.errors : 0;
	}
	free(ranges);
	return nerr;
}

void vgq_sql_program_free(struct vgq_sql_program *p)
{
	free(p->stmts);
	*p = (struct vgq_sql_program){0};
}
