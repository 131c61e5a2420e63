/* The store's relations as the SQL compiler sees them, and the compiler's small helpers
 * (text in the arena, quoting, error reports). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/sql_internal.h"

struct vgq_sql_catalog *vgq_sql_catalog_new(const char *schema)
{
	struct vgq_sql_catalog *c = calloc(1, sizeof *c);
	if (!c)
		abort();
	c->arena = tquel_arena_new();
	c->schema = tquel_strndup(c->arena, schema, strlen(schema));
	return c;
}

void vgq_sql_catalog_free(struct vgq_sql_catalog *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nrels; i++) {
		free(c->rels[i]->attrs);
		free(c->rels[i]);
	}
	free(c->rels);
	tquel_arena_free(c->arena);
	free(c);
}

static const char *dup(struct vgq_sql_catalog *c, const char *s)
{
	return s ? tquel_strndup(c->arena, s, strlen(s)) : NULL;
}

struct vgq_sql_rel *vgq_sql_catalog_add(struct vgq_sql_catalog *c, const char *name,
                                        const char *table, bool event, bool derived)
{
	if (c->nrels == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->rels = realloc(c->rels, c->cap * sizeof *c->rels);
		if (!c->rels)
			abort();
	}
	struct vgq_sql_rel *r = calloc(1, sizeof *r);
	if (!r)
		abort();
	c->rels[c->nrels++] = r;
	*r = (struct vgq_sql_rel){
	    .name = dup(c, name), .table = dup(c, table), .event = event, .derived = derived};
	return r;
}

void vgq_sql_rel_add_attr(struct vgq_sql_catalog *c, struct vgq_sql_rel *r,
                          const struct vgq_sql_attr *a)
{
	r->attrs = realloc(r->attrs, (r->nattrs + 1) * sizeof *r->attrs);
	if (!r->attrs)
		abort();
	r->attrs[r->nattrs++] = (struct vgq_sql_attr){.name = dup(c, a->name),
	                                              .type = a->type,
	                                              .ref_kind = dup(c, a->ref_kind),
	                                              .col = dup(c, a->col),
	                                              .id_col = dup(c, a->id_col),
	                                              .gen_col = dup(c, a->gen_col),
	                                              .load_col = dup(c, a->load_col)};
}

struct vgq_sql_rel *vgq_sql_catalog_find(const struct vgq_sql_catalog *c, const char *name)
{
	for (size_t i = 0; i < c->nrels; i++)
		if (!strcasecmp(c->rels[i]->name, name))
			return c->rels[i];
	return NULL;
}

const char *sqlc_printf(struct sqlc *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = tquel_alloc(c->a, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static const char *quoted(struct sqlc *c, const char *s, char q)
{
	size_t n = 2;
	for (const char *p = s; *p; p++)
		n += *p == q ? 2 : 1;
	char *out = tquel_alloc(c->a, n + 1), *o = out;
	*o++ = q;
	for (const char *p = s; *p; p++) {
		if (*p == q)
			*o++ = q;
		*o++ = *p;
	}
	*o++ = q;
	*o = 0;
	return out;
}

const char *sqlc_ident(struct sqlc *c, const char *name)
{
	return quoted(c, name, '"');
}

const char *sqlc_literal(struct sqlc *c, const char *s)
{
	return quoted(c, s, '\'');
}

void *sqlc_error(struct sqlc *c, const struct tquel_loc *loc, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	tquel_report(c->q, loc, c->err, "%s", msg);
	c->errors++;
	return NULL;
}

int sqlc_var(struct sqlc *c, const char *name, const struct tquel_loc *loc)
{
	for (size_t i = 0; i < c->nvars; i++)
		if (!strcmp(c->vars[i].name, name)) {
			if (c->marking)
				c->shown |= 1ull << i;
			return (int)i;
		}
	const struct sql_range *r = NULL;
	for (size_t i = c->nranges; i-- > 0 && !r;)
		if (!strcmp(c->ranges[i].var, name))
			r = &c->ranges[i];
	if (!r) {
		sqlc_error(c, loc,
		           "no tuple variable '%s' (declare it with 'range of %s is RELATION')",
		           name, name);
		return -1;
	}
	if (!r->rel) { /* its range was reported */
		c->errors++;
		return -1;
	}
	if (c->nvars == VGQ_SQL_MAX_VARS) {
		sqlc_error(c, loc, "more than %d tuple variables in one retrieve",
		           VGQ_SQL_MAX_VARS);
		return -1;
	}
	size_t i = c->nvars++;
	c->vars[i].name = name;
	c->vars[i].rel = r->rel;
	c->vars[i].from = r->from;
	if (c->marking)
		c->shown |= 1ull << i;
	c->vars[i].alias = sqlc_printf(c, "%s%zu", c->prefix ? c->prefix : "t", i);
	return (int)i;
}
