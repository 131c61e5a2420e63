/* vigil store --index: the indexes TQuel compiled to SQL uses (docs/tquel-sql.md,
 * "Indexes"), per relation of the catalog: B-trees on the valid time (an event's
 * valid_at; an interval's valid_from with valid_to, and valid_to alone: an event in an
 * interval, precede) and a GiST index on int8range(valid_from, valid_to) (the compiled
 * overlap of two stored intervals is && of these ranges; an expression index, so that
 * the tables keep their columns and `vigil store` its writing), B-trees on each
 * entity's identity (id, gen, image: joins of entities) and on each string and entity
 * name in byte order (COLLATE "C", as the compiled comparisons are); with the extension
 * btree_gist, a GiST index on (N, int8range(valid_from, valid_to)) per number attribute N
 * of an interval relation (an overlap join with an equality on N probes it instead of
 * hashing on N and filtering every pair of a key: about 1e9 pairs at 10M events); then
 * ANALYZE, so that the planner knows the tables. Idempotent: IF NOT EXISTS. */
#include <stdio.h>
#include <string.h>

#include "query/sql.h"
#include "store/internal.h"

/* CREATE INDEX IF NOT EXISTS on table (cols as SQL; a B-tree unless `using` names the
 * method), named from the table and a tag. */
static void index_on(struct vgs_buf *q, const char *schema, const char *table, const char *tag,
                     const char *using, const char *cols)
{
	char name[2 * VGS_IDENT_MAX + 32], fit[VGS_IDENT_MAX + 1];
	snprintf(name, sizeof name, "vg_ix_%s_%s", table, tag);
	vgs_ident_fit(fit, name);
	vgs_buf_puts(q, "CREATE INDEX IF NOT EXISTS ");
	vgs_buf_ident(q, fit);
	vgs_buf_puts(q, " ON ");
	vgs_buf_ident(q, schema);
	vgs_buf_putc(q, '.');
	vgs_buf_ident(q, table);
	if (using)
		vgs_buf_printf(q, " USING %s", using);
	vgs_buf_printf(q, " (%s); ", cols);
}

static const char *ident(struct vgs_buf *b, const char *s)
{
	b->n = 0;
	vgs_buf_ident(b, s);
	return b->p;
}

/* btree_gist gives GiST the B-tree types (Debian's postgresql-contrib has it; trusted
 * since PostgreSQL 13, so a database owner may create it). Without it the keyed
 * overlap indexes are left out, said in one line: the store works as before. */
static bool btree_gist(struct vgs_pg *pg, bool quiet)
{
	char err[512];
	if (vgs_exec(pg, "CREATE EXTENSION IF NOT EXISTS btree_gist", "btree_gist", err,
	             sizeof err) == 0)
		return true;
	if (!quiet)
		fprintf(stderr,
		        "vigil store: no GiST index on (key, valid time): %s (an overlap join "
		        "with an equal key hashes on the key instead)\n",
		        err);
	return false;
}

int vgs_pg_index(struct vgs_pg *pg, bool quiet, uint64_t *made, char *err, size_t errsize)
{
	struct vgq_sql_catalog *cat = vgs_pg_catalog(pg, err, errsize);
	if (!cat)
		return -1;
	bool keyed = btree_gist(pg, quiet);
	int rc = 0;
	struct vgs_buf q = {0}, id = {0}, cols = {0};
	for (size_t i = 0; i < cat->nrels && rc == 0; i++) {
		const struct vgq_sql_rel *r = cat->rels[i];
		q.n = 0;
		if (r->event) {
			index_on(&q, pg->schema, r->table, "at", NULL, "valid_at");
		} else {
			index_on(&q, pg->schema, r->table, "from", NULL, "valid_from, valid_to");
			index_on(&q, pg->schema, r->table, "to", NULL, "valid_to");
			/* the overlap of two intervals compiles to && of these ranges */
			index_on(&q, pg->schema, r->table, "range", "gist",
			         "int8range(valid_from, valid_to)");
		}
		*made += r->event ? 1 : 3;
		for (size_t k = 0; keyed && !r->event && k < r->nattrs; k++) {
			const struct vgq_sql_attr *a = &r->attrs[k];
			if (a->type != VGQ_INT && a->type != VGQ_UINT)
				continue;
			/* a uint as the int8 the compiled equality compares */
			cols.n = 0;
			if (a->type == VGQ_UINT)
				vgs_buf_printf(&cols, VGQ_SQL_UINT_KEY, ident(&id, a->col));
			else
				vgs_buf_puts(&cols, ident(&id, a->col));
			vgs_buf_puts(&cols, ", int8range(valid_from, valid_to)");
			id.n = 0;
			vgs_buf_printf(&id, "%s_range", a->col);
			char tag[VGS_IDENT_MAX + 8];
			snprintf(tag, sizeof tag, "%s", id.p);
			index_on(&q, pg->schema, r->table, tag, "gist", cols.p);
			++*made;
		}
		for (size_t k = 0; k < r->nattrs; k++) {
			const struct vgq_sql_attr *a = &r->attrs[k];
			if (a->type != VGQ_STRING && a->type != VGQ_ENTITY)
				continue;
			cols.n = 0;
			vgs_buf_printf(&cols, "%s COLLATE \"C\"", ident(&id, a->col));
			index_on(&q, pg->schema, r->table, a->col, NULL, cols.p);
			++*made;
			if (a->type != VGQ_ENTITY)
				continue;
			cols.n = 0;
			vgs_buf_printf(&cols, "%s, ", ident(&id, a->id_col));
			vgs_buf_printf(&cols, "%s, ", ident(&id, a->gen_col));
			vgs_buf_puts(&cols, ident(&id, a->load_col));
			index_on(&q, pg->schema, r->table, a->id_col, NULL, cols.p);
			++*made;
		}
		vgs_buf_puts(&q, "ANALYZE ");
		vgs_buf_ident(&q, pg->schema);
		vgs_buf_putc(&q, '.');
		vgs_buf_ident(&q, r->table);
		char what[200];
		snprintf(what, sizeof what, "index %s.%s", pg->schema, r->table);
		rc = vgs_exec(pg, q.p, what, err, errsize);
	}
	vgs_buf_free(&q);
	vgs_buf_free(&id);
	vgs_buf_free(&cols);
	vgq_sql_catalog_free(cat);
	return rc;
}
