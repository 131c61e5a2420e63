/* Aggregates in SQL (docs/tquel.md, "Aggregates"; docs/tquel-sql.md): an aggregate is a
 * relation holding, per group of its by-list, the maximal intervals over which its value
 * is constant, over the time line from the first event stored to the instant of the
 * last. Computed in PostgreSQL as a range computation:
 *
 *   c    the contributions: the aggregate's own variables' combinations that satisfy its
 *        inner where clause, the argument's value (nulls skipped) over the overlap of
 *        their valid times (an event at t: [t, t+1));
 *   pts  per group, every instant a contribution begins or ends, and the time line's ends;
 *   seg  consecutive points as segments (lead() over the group);
 *   val  per segment the aggregate of the contributions valid there (for each instant:
 *        b <= s < e; for ever: b <= s), a LEFT JOIN so that count is 0 where none is;
 *   isl  segments of equal value merged (lag() starts an island, sum() numbers them).
 *
 * The outer statement ranges over that relation like over a variable: its intervals take
 * part in the default valid time, and a by-item whose variables are all the statement's
 * own is correlated (the outer value of the same expression selects the group). */
#include <string.h>

#include "query/sql_internal.h"

/* A group key's SQL: an entity is its identity (three columns), a value itself. */
static size_t key_parts(struct sqlc *c, const struct sql_value *v, const char *parts[3])
{
	if (v->type != ST_ENTITY || !v->attr) {
		parts[0] = v->sql;
		return 1;
	}
	parts[0] = sqlc_printf(c, "%s.%s", v->alias, sqlc_ident(c, v->attr->id_col));
	parts[1] = sqlc_printf(c, "%s.%s", v->alias, sqlc_ident(c, v->attr->gen_col));
	parts[2] = sqlc_printf(c, "%s.%s", v->alias, sqlc_ident(c, v->attr->load_col));
	return 3;
}

static const char *join(struct sqlc *c, const char *l, const char *sep, const char *x)
{
	return l ? sqlc_printf(c, "%s%s%s", l, sep, x) : x;
}

/* stdev as the engine computes it (agg_time.c), so that the doubles are the same to the
 * last bit: the mean is the sum in ascending order over n, then the squared deviations
 * are summed in ascending order of the values, sqrt of that over n (an aggregate with
 * ORDER BY folds its input in that order; sum of float8 is a plain +). `arr` is the
 * values' array, an aggregate of the segment; `pre` arr `post` the FROM giving them
 * as z.u. With `ratio`, the deviation over the mean, none when the mean is 0 (varts). */
static const char *stdev_of(struct sqlc *c, const char *pre, const char *arr, const char *post,
                            bool ratio)
{
	const char *from = sqlc_printf(c, "%s%s%s", pre, arr, post);
	return sqlc_printf(
	    c,
	    "(WITH z AS (SELECT z.u FROM %s), w AS (SELECT sum(u ORDER BY u) / count(*)::float8 "
	    "AS m FROM z) SELECT %ssqrt(sum((z.u - w.m) * (z.u - w.m) ORDER BY z.u) / "
	    "count(*)::float8)%s FROM z, w GROUP BY w.m)",
	    from, ratio ? "CASE WHEN w.m <> 0 THEN " : "", ratio ? " / w.m END" : "");
}

static const struct vgq_sql_rel AGG_REL = {.name = "aggregate"};

bool sqlc_agg(struct sqlc *c, const struct tquel_expr *e, struct sql_value *out)
{
	const struct tquel_agg *g = &e->u.agg;
	size_t k = c->naggs++;
	struct sqlc in = {.cat = c->cat,
	                  .q = c->q,
	                  .err = c->err,
	                  .a = c->a,
	                  .ranges = c->ranges,
	                  .nranges = c->nranges,
	                  .outer = c,
	                  .prefix = sqlc_printf(c, "a%zu_", k)};
	struct sql_value arg;
	if (!sqlc_value(&in, g->arg, &arg))
		goto fail;
	bool numeric = arg.type == ST_INT || arg.type == ST_UINT || arg.type == ST_DOUBLE;
	if ((g->fn == TQ_SUM || g->fn == TQ_AVG || g->fn == TQ_RATE || g->fn == TQ_STDEV) &&
	    !numeric) {
		sqlc_error(c, &g->arg->loc, "%s needs numbers", tquel_aggfn_names[g->fn]);
		goto fail;
	}
	if ((g->fn == TQ_MIN || g->fn == TQ_MAX || g->fn == TQ_FIRST || g->fn == TQ_LAST) &&
	    !numeric && arg.type != ST_STRING) {
		sqlc_error(c, &g->arg->loc, "%s needs numbers or strings",
		           tquel_aggfn_names[g->fn]);
		goto fail;
	}
	/* the group keys, inner; and the correlation with the outer statement */
	const char *keys = NULL, *names = NULL, *skeys = NULL, *on = NULL, *part = "";
	size_t nkeys = 0;
	for (size_t i = 0; i < g->nby; i++) {
		struct sql_value bv;
		if (!sqlc_value(&in, g->by[i], &bv))
			goto fail;
		const char *parts[3], *outer[3] = {0};
		size_t n = key_parts(&in, &bv, parts);
		if (tquel_only_names(g->by[i], c->outer_names, c->nouter)) {
			struct sql_value ov;
			if (!sqlc_value(c, g->by[i], &ov))
				goto fail;
			key_parts(c, &ov, outer);
		}
		for (size_t j = 0; j < n; j++, nkeys++) {
			const char *kn = sqlc_printf(c, "g%zu", nkeys);
			keys = join(c, keys, ", ", sqlc_printf(c, "%s AS %s", parts[j], kn));
			names = join(c, names, ", ", kn);
			skeys = join(c, skeys, ", ", sqlc_printf(c, "s.%s", kn));
			on = join(c, on, " AND ",
			          sqlc_printf(c, "x.%s IS NOT DISTINCT FROM s.%s", kn, kn));
			if (outer[j])
				c->agg_conds =
				    sqlc_and(c, c->agg_conds,
				             sqlc_printf(c, "a%zu.%s = %s", k, kn, outer[j]));
		}
	}
	if (names)
		part = sqlc_printf(c, "PARTITION BY %s ", names);
	const char *where = NULL;
	if (g->when && !(where = sqlc_pred(&in, g->when)))
		goto fail;
	if (g->where) {
		struct sql_value w;
		if (!sqlc_value(&in, g->where, &w))
			goto fail;
		if (w.type != ST_BOOL) {
			sqlc_error(c, &g->where->loc, "where needs a condition (a comparison)");
			goto fail;
		}
		where = sqlc_and(c, where, w.sql);
	}
	if (!in.nvars) {
		sqlc_error(c, &e->loc, "an aggregate must name a tuple variable");
		goto fail;
	}
	struct sql_time d = sqlc_var_time(&in, 0);
	for (size_t i = 1; i < in.nvars; i++) {
		struct sql_time v = sqlc_var_time(&in, (int)i);
		d = sqlc_overlap(&in, &d, &v);
	}
	/* an entity always has a value (its name may be missing): its identity */
	const char *argv = arg.type == ST_ENTITY && arg.attr
	                       ? sqlc_printf(c, "ROW(%s.%s, %s.%s, %s.%s)", arg.alias,
	                                     sqlc_ident(c, arg.attr->id_col), arg.alias,
	                                     sqlc_ident(c, arg.attr->gen_col), arg.alias,
	                                     sqlc_ident(c, arg.attr->load_col))
	                       : arg.sql;
	where = sqlc_and(c, sqlc_and(c, where, d.cond), sqlc_printf(c, "%s IS NOT NULL", argv));
	/* an event counts at its instant; a moving window of SPAN counts a contribution
	 * until SPAN - 1 after its end */
	const char *end =
	    d.shape == 1 ? sqlc_printf(c, "(LEAST(%s, 9223372036854775806) + 1)", d.b) : d.e;
	if (g->window == TQ_SPAN) /* saturated at "forever", as the engine's (no overflow) */
		end = sqlc_printf(c, "(LEAST(%s, %lld) + %lld)", end,
		                  (long long)(INT64_MAX - (g->span_ns - 1)),
		                  (long long)(g->span_ns - 1));
	const char *v = arg.type == ST_STRING ? "x.v COLLATE \"C\"" : "x.v";
	const char *dist = g->unique ? "DISTINCT " : "";
	const char *fn;
	switch (g->fn) {
	case TQ_COUNT:
		fn = sqlc_printf(c, "count(%sx.v)", dist);
		break;
	case TQ_ANY:
		fn = "CASE WHEN count(x.v) > 0 THEN 1 ELSE 0 END";
		break;
	case TQ_SUM: /* integers exact, or the statement fails (bigint out of range), as in
	              * the engine: sum() of int8 is numeric, cast back */
		fn = arg.type == ST_DOUBLE ? sqlc_printf(c, "sum(%sx.v)", dist)
		                           : sqlc_printf(c, "sum(%sx.v)::int8", dist);
		break;
	case TQ_AVG:
		/* a double sum over a double count, as the engine (numeric avg() rounds
		 * its decimal quotient first) */
		fn = sqlc_printf(c, "(sum(%sx.v)::float8 / NULLIF(count(%sx.v), 0)::float8)", dist,
		                 dist);
		break;
	case TQ_MIN:
	case TQ_MAX:
		fn = sqlc_printf(c, "%s(%s)", g->fn == TQ_MIN ? "min" : "max", v);
		break;
	case TQ_FIRST: /* the contribution that began first, ties to the smallest value */
		fn = sqlc_printf(c, "(array_agg(x.v ORDER BY x.b, %s))[1]", v);
		break;
	case TQ_LAST:
		fn = sqlc_printf(c, "(array_agg(x.v ORDER BY x.b DESC, %s DESC))[1]", v);
		break;
	case TQ_RATE: /* per second between the begins of the first and the last */
		fn = sqlc_printf(c,
		                 "((array_agg(x.v ORDER BY x.b DESC, %s DESC))[1]::float8 - "
		                 "(array_agg(x.v ORDER BY x.b, %s))[1]::float8) / "
		                 "(NULLIF(max(x.b) - min(x.b), 0)::float8 / 1e9::float8)",
		                 v, v);
		break;
	case TQ_STDEV:
		fn = stdev_of(c, "unnest(", "array_agg(x.v::float8) FILTER (WHERE x.b IS NOT NULL)",
		              ") AS z(u)", false);
		break;
	case TQ_VARTS: /* the deviation of the spacings of the sorted begins over their mean */
		fn = stdev_of(c, "(SELECT (u - lag(u) OVER (ORDER BY o))::float8 AS u FROM unnest(",
		              "array_agg(x.b ORDER BY x.b) FILTER (WHERE x.b IS NOT NULL)",
		              ") WITH ORDINALITY AS q(u, o)) z WHERE z.u IS NOT NULL", true);
		break;
	default: /* TQ_AVGTI: the mean spacing of the begins, in seconds */
		fn = "CASE WHEN count(x.v) > 1 THEN (max(x.b) - min(x.b))::float8 / 1e9::float8 / "
		     "(count(x.v) - 1)::float8 END";
		break;
	}
	const char *kc = names ? sqlc_printf(c, "%s, ", names) : "";
	const char *sk = skeys ? sqlc_printf(c, "%s, ", skeys) : "";
	const char *schema = sqlc_ident(c, c->cat->schema);
	/* the groups: those with contributions; without a by-list one, always there */
	const char *grp = names ? sqlc_printf(c, "SELECT DISTINCT %s FROM c", names) : "SELECT 1";
	const char *sql = sqlc_printf(
	    c,
	    "WITH c AS (SELECT %s%s%s AS v, %s AS b, %s AS e FROM %s WHERE %s),\n"
	    "tl AS (SELECT min(first_ns) AS lo, max(last_ns) + 1 AS hi FROM %s.loads),\n"
	    "grp AS (%s),\n"
	    "pts AS (SELECT %sb AS p FROM c UNION SELECT %se FROM c UNION SELECT %slo FROM grp, tl "
	    "UNION SELECT %shi FROM grp, tl),\n"
	    "seg AS (SELECT * FROM (SELECT %sp AS b, lead(p) OVER (%sORDER BY p) AS e FROM pts, "
	    "tl WHERE p >= lo AND p <= hi) z WHERE e IS NOT NULL),\n"
	    "val AS (SELECT %ss.b, s.e, %s AS v FROM seg s LEFT JOIN c x ON %s%sx.b <= s.b%s "
	    "GROUP BY %ss.b, s.e),\n"
	    "isl AS (SELECT *, CASE WHEN v IS NOT DISTINCT FROM lag(v) OVER (%sORDER BY b) AND "
	    "b = lag(e) OVER (%sORDER BY b) THEN 0 ELSE 1 END AS st FROM val),\n"
	    "num AS (SELECT *, sum(st) OVER (%sORDER BY b ROWS UNBOUNDED PRECEDING) AS k FROM "
	    "isl)\n"
	    "SELECT %sv, min(b) AS valid_from, max(e) AS valid_to FROM num WHERE v IS NOT NULL "
	    "GROUP BY %sv, k",
	    keys ? keys : "", keys ? ", " : "", argv, d.b, end, sqlc_from_list(&in), where, schema,
	    grp, kc, kc, kc, kc, kc, part, sk, fn, on ? on : "", on ? " AND " : "",
	    g->window == TQ_EVER ? "" : " AND s.b < x.e", sk, part, part, part, kc, kc);
	c->errors += in.errors;
	if (c->nvars == VGQ_SQL_MAX_VARS) {
		sqlc_error(c, &e->loc, "more than %d tuple variables in one retrieve",
		           VGQ_SQL_MAX_VARS);
		return false;
	}
	size_t i = c->nvars++;
	c->vars[i].name = sqlc_printf(c, " aggregate %zu", k); /* no TQuel name */
	c->vars[i].alias = sqlc_printf(c, "a%zu", k);
	c->vars[i].rel = &AGG_REL;
	c->vars[i].from = sql;
	c->vars[i].agg = true;
	static const enum sql_type result[] = {
	    [TQ_COUNT] = ST_INT,   [TQ_ANY] = ST_INT,      [TQ_AVG] = ST_DOUBLE,
	    [TQ_RATE] = ST_DOUBLE, [TQ_AVGTI] = ST_DOUBLE, [TQ_STDEV] = ST_DOUBLE,
	    [TQ_VARTS] = ST_DOUBLE};
	bool same = g->fn == TQ_MIN || g->fn == TQ_MAX || g->fn == TQ_FIRST || g->fn == TQ_LAST;
	out->type = g->fn == TQ_SUM ? (arg.type == ST_DOUBLE ? ST_DOUBLE : ST_INT)
	            : same          ? arg.type
	                            : result[g->fn];
	out->sql = sqlc_printf(c, "a%zu.v", k);
	return true;
fail:
	c->errors += in.errors;
	return false;
}
