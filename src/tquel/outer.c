/* The outer variables of a retrieve (tquel/ast.h): those its own clauses mention outside
 * aggregates. An aggregate's by-item over them alone is correlated with the statement;
 * the engine's binder and the SQL compiler ask the same question of the same tree. */
#include <string.h>

#include "tquel/ast.h"

static bool is_named(const char *name, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* Adds the names e mentions (outside aggregates) that names[0..*n) lacks, up to max. */
static void collect(const struct tquel_expr *e, const char **names, size_t *n, size_t max)
{
	if (!e || e->kind == TQ_AGG || e->kind == TQ_NUMBER || e->kind == TQ_STRING ||
	    e->kind == TQ_TCONST)
		return;
	const char *name = e->kind == TQ_ATTR   ? e->u.attr.var
	                   : e->kind == TQ_TVAR ? e->u.tvar.name
	                                        : NULL;
	if (name) {
		if (!is_named(name, names, *n) && *n < max)
			names[(*n)++] = name;
		return;
	}
	collect(e->u.op.a, names, n, max);
	if (e->kind != TQ_NEG && e->kind != TQ_NOT && e->kind != TQ_BEGIN_OF &&
	    e->kind != TQ_END_OF)
		collect(e->u.op.b, names, n, max);
}

size_t tquel_outer_names(const struct tquel_retrieve *r, const char **names, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < r->ntargets; i++)
		collect(r->targets[i].value, names, &n, max);
	collect(r->where, names, &n, max);
	collect(r->when, names, &n, max);
	collect(r->valid.at, names, &n, max);
	collect(r->valid.from, names, &n, max);
	collect(r->valid.to, names, &n, max);
	return n;
}

bool tquel_only_names(const struct tquel_expr *e, const char *const *names, size_t n)
{
	if (!e || e->kind == TQ_NUMBER || e->kind == TQ_STRING)
		return true;
	if (e->kind == TQ_AGG)
		return false;
	if (e->kind == TQ_ATTR)
		return is_named(e->u.attr.var, names, n);
	return tquel_only_names(e->u.op.a, names, n) &&
	       (e->kind == TQ_NEG || e->kind == TQ_NOT || tquel_only_names(e->u.op.b, names, n));
}
