/* The store's catalog: per relation table, the relation it holds (its TQuel name and
 * kind) and per attribute its type, entity kind and columns. TQuel compiled to SQL
 * (src/query/sql_*.c, vigil query postgresql://) binds its statements against it;
 * `retrieve into` adds its results to it. */
#include <stdio.h>
#include <string.h>

#include "query/sql.h"
#include "store/internal.h"

void vgs_catalog_ddl(struct vgs_buf *q, const char *schema)
{
	vgs_buf_puts(q, "CREATE TABLE IF NOT EXISTS ");
	vgs_buf_ident(q, schema);
	vgs_buf_puts(q,
	             "." VGQ_SQL_CATALOG_RELATIONS " (relation text PRIMARY KEY, table_name text "
	             "NOT NULL, kind text NOT NULL, derived boolean NOT NULL DEFAULT false); "
	             "CREATE TABLE IF NOT EXISTS ");
	vgs_buf_ident(q, schema);
	vgs_buf_puts(q, "." VGQ_SQL_CATALOG_ATTRIBUTES " (relation text NOT NULL, position int NOT "
	                "NULL, attr text NOT NULL, type text NOT NULL, ref_kind text, col text NOT "
	                "NULL, id_col text, gen_col text, load_col text, PRIMARY KEY (relation, "
	                "attr))");
}

static void lit_or_null(struct vgs_buf *q, const char *s)
{
	if (s)
		vgs_buf_literal(q, s);
	else
		vgs_buf_puts(q, "NULL");
}

int vgs_catalog_note(struct vgs_pg *pg, const struct vgs_table *t, char *err, size_t errsize)
{
	const struct vgq_relation *r = t->rel;
	struct vgs_buf q = {0};
	vgs_buf_puts(&q, "INSERT INTO ");
	vgs_buf_ident(&q, pg->schema);
	vgs_buf_puts(&q, "." VGQ_SQL_CATALOG_RELATIONS " VALUES (");
	vgs_buf_literal(&q, r->name);
	vgs_buf_puts(&q, ", ");
	vgs_buf_literal(&q, t->name);
	vgs_buf_printf(&q, ", '%s', false) ON CONFLICT DO NOTHING", vgq_rkind_name(r->kind));
	for (size_t i = 0; i < r->nattrs; i++) {
		const struct vgq_attr *a = &r->attrs[i];
		const struct vgs_column *c = &t->cols[t->attr_col[i]];
		bool ent = a->type == VGQ_ENTITY;
		vgs_buf_puts(&q, "; INSERT INTO ");
		vgs_buf_ident(&q, pg->schema);
		vgs_buf_puts(&q, "." VGQ_SQL_CATALOG_ATTRIBUTES " VALUES (");
		vgs_buf_literal(&q, r->name);
		vgs_buf_printf(&q, ", %zu, ", i);
		vgs_buf_literal(&q, a->name);
		vgs_buf_printf(&q, ", '%s', ", vgq_type_name(a->type));
		lit_or_null(&q, ent ? a->ref_kind : NULL);
		vgs_buf_puts(&q, ", ");
		vgs_buf_literal(&q, c[0].name);
		vgs_buf_puts(&q, ", ");
		lit_or_null(&q, ent ? c[1].name : NULL);
		vgs_buf_puts(&q, ", ");
		lit_or_null(&q, ent ? c[2].name : NULL);
		vgs_buf_puts(&q, ", ");
		lit_or_null(&q, !ent ? NULL : t->ref_loads ? c[3].name : "vg_load");
		vgs_buf_puts(&q, ") ON CONFLICT DO NOTHING");
	}
	char what[200];
	snprintf(what, sizeof what, "catalog %s." VGQ_SQL_CATALOG_RELATIONS, pg->schema);
	int rc = vgs_exec(pg, q.p, what, err, errsize);
	vgs_buf_free(&q);
	return rc;
}
