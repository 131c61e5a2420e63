/* A relation's table: its name, its columns (unique, at most 63 bytes), and creating it
 * or adding the columns an existing table lacks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/internal.h"
#include "trace/trace.h"

static const char *const CTYPE_SQL[] = {
    [VGS_BIGINT] = "bigint", [VGS_NUMERIC] = "numeric(20,0)", [VGS_DOUBLE] = "double precision",
    [VGS_TEXT] = "text",     [VGS_BYTEA] = "bytea",           [VGS_BOOL] = "boolean",
};

const char *vgs_ctype_sql(enum vgs_ctype t)
{
	return CTYPE_SQL[t];
}

void vgs_ident_fit(char *out, const char *name)
{
	size_t n = strlen(name);
	if (n <= VGS_IDENT_MAX) {
		memcpy(out, name, n + 1);
		return;
	}
	uint32_t h = 2166136261u; /* FNV-1a of the whole name */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	size_t keep = VGS_IDENT_MAX - 9;
	while (keep && ((unsigned char)name[keep] & 0xC0) == 0x80)
		keep--; /* not inside a UTF-8 character */
	memcpy(out, name, keep);
	snprintf(out + keep, VGS_IDENT_MAX + 1 - keep, "_%08x", h);
}

/* Adds a column, renamed with trailing '_' while its name is taken (case-insensitively,
 * so that unquoted SQL can tell them apart). */
static void add(struct vgs_table *t, const char *name, enum vgs_ctype type)
{
	char cand[VGS_IDENT_MAX * 2 + 8];
	snprintf(cand, sizeof cand, "%s", name);
	for (;;) {
		char fit[VGS_IDENT_MAX + 1];
		vgs_ident_fit(fit, cand);
		bool taken = false;
		for (size_t i = 0; i < t->ncols && !taken; i++)
			taken = !strcasecmp(t->cols[i].name, fit);
		if (!taken) {
			memcpy(t->cols[t->ncols].name, fit, sizeof fit);
			t->cols[t->ncols++].type = type;
			return;
		}
		size_t n = strlen(cand);
		if (n + 2 >= sizeof cand) /* cannot happen with 63-byte names; be safe */
			cand[n - 1] = (char)('0' + (t->ncols % 10));
		else
			memcpy(cand + n, "_", 2);
	}
}

static void plan(struct vgs_table *t, const struct vgq_relation *r, bool ref_loads)
{
	static const enum vgs_ctype of[] = {
	    [VGQ_INT] = VGS_BIGINT,  [VGQ_UINT] = VGS_NUMERIC, [VGQ_DOUBLE] = VGS_DOUBLE,
	    [VGQ_STRING] = VGS_TEXT, [VGQ_BYTES] = VGS_BYTEA,  [VGQ_ENTITY] = VGS_TEXT,
	};
	*t = (struct vgs_table){.rel = r, .ref_loads = ref_loads};
	vgs_ident_fit(t->name, r->name);
	t->cols = calloc(VGS_META_COLS + 4 * r->nattrs + 3, sizeof *t->cols);
	t->attr_col = calloc(r->nattrs + 1, sizeof *t->attr_col);
	if (!t->cols || !t->attr_col)
		abort();
	/* Meta and time columns are named first, so that an attribute named like one of
	 * them is the one renamed; the time columns then move to the end. */
	bool event = r->kind == VGQ_REL_EVENT;
	size_t ntime = event ? 1 : 3;
	add(t, "vg_load", VGS_BIGINT);
	add(t, "vg_host", VGS_TEXT);
	add(t, "vg_pid", VGS_BIGINT);
	add(t, event ? "valid_at" : "valid_from", VGS_BIGINT);
	if (!event) {
		add(t, "valid_to", VGS_BIGINT);
		add(t, "vg_open", VGS_BOOL);
	}
	for (size_t i = 0; i < r->nattrs; i++) {
		const struct vgq_attr *at = &r->attrs[i];
		t->attr_col[i] = t->ncols - ntime;
		add(t, at->name, of[at->type]);
		if (at->type == VGQ_ENTITY) {
			char n[VGS_IDENT_MAX * 2 + 8];
			snprintf(n, sizeof n, "%s_id", at->name);
			add(t, n, VGS_NUMERIC);
			snprintf(n, sizeof n, "%s_gen", at->name);
			add(t, n, VGS_BIGINT);
			if (ref_loads) {
				snprintf(n, sizeof n, "%s_load", at->name);
				add(t, n, VGS_BIGINT);
			}
		}
	}
	struct vgs_column times[3];
	memcpy(times, t->cols + VGS_META_COLS, ntime * sizeof *times);
	memmove(t->cols + VGS_META_COLS, t->cols + VGS_META_COLS + ntime,
	        (t->ncols - VGS_META_COLS - ntime) * sizeof *t->cols);
	memcpy(t->cols + t->ncols - ntime, times, ntime * sizeof *times);
}

void vgs_table_plan(struct vgs_table *t, const struct vgq_relation *r)
{
	plan(t, r, false);
}

void vgs_table_plan_derived(struct vgs_table *t, const struct vgq_relation *r)
{
	plan(t, r, true);
}

void vgs_table_free(struct vgs_table *t)
{
	free(t->cols);
	free(t->attr_col);
	*t = (struct vgs_table){0};
}

static void qualified(struct vgs_buf *q, const struct vgs_pg *pg, const char *table)
{
	vgs_buf_ident(q, pg->schema);
	vgs_buf_putc(q, '.');
	vgs_buf_ident(q, table);
}

/* The table's existing columns and their types: a result of (attname, type), or NULL. */
static PGresult *existing(struct vgs_pg *pg, const struct vgs_table *t)
{
	struct vgs_buf q = {0};
	qualified(&q, pg, t->name);
	const char *params[1] = {q.p};
	PGresult *res = PQexecParams(pg->conn,
	                             "SELECT attname, format_type(atttypid, atttypmod) "
	                             "FROM pg_attribute WHERE attrelid = to_regclass($1) "
	                             "AND attnum > 0 AND NOT attisdropped",
	                             1, NULL, params, NULL, NULL, 0);
	vgs_buf_free(&q);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		PQclear(res);
		return NULL;
	}
	return res;
}

int vgs_table_ensure(struct vgs_pg *pg, const struct vgs_table *t, char *err, size_t errsize)
{
	char what[200];
	snprintf(what, sizeof what, "table %s.%s", pg->schema, t->name);
	PGresult *res = existing(pg, t);
	if (!res) {
		char msg[1024];
		vgs_pg_message(pg, msg, sizeof msg);
		return vgs_fail(err, errsize, "%s: %s", what, msg);
	}
	struct vgs_buf q = {0};
	int rc = 0;
	if (PQntuples(res) == 0) {
		vgs_buf_puts(&q, "CREATE TABLE IF NOT EXISTS ");
		qualified(&q, pg, t->name);
		vgs_buf_puts(&q, " (");
		for (size_t i = 0; i < t->ncols; i++) {
			vgs_buf_puts(&q, i ? ", " : "");
			vgs_buf_ident(&q, t->cols[i].name);
			vgs_buf_printf(&q, " %s", vgs_ctype_sql(t->cols[i].type));
			if (i == 0)
				vgs_buf_puts(&q, " NOT NULL");
		}
		vgs_buf_puts(&q, ")");
	}
	for (size_t i = 0; i < t->ncols && rc == 0 && PQntuples(res) > 0; i++) {
		const char *type = NULL;
		for (int k = 0; k < PQntuples(res) && !type; k++)
			if (!strcmp(PQgetvalue(res, k, 0), t->cols[i].name))
				type = PQgetvalue(res, k, 1);
		if (!type) { /* the relation gained an attribute: add its column */
			vgs_buf_puts(&q, q.n ? "; ALTER TABLE " : "ALTER TABLE ");
			qualified(&q, pg, t->name);
			vgs_buf_puts(&q, " ADD COLUMN IF NOT EXISTS ");
			vgs_buf_ident(&q, t->cols[i].name);
			vgs_buf_printf(&q, " %s", vgs_ctype_sql(t->cols[i].type));
		} else if (strcmp(type, vgs_ctype_sql(t->cols[i].type)) != 0) {
			rc = vgs_fail(err, errsize,
			              "%s: column %s is %s, but this trace has %s values for it "
			              "(another program's relation of that name?)",
			              what, t->cols[i].name, type, vgs_ctype_sql(t->cols[i].type));
		}
	}
	PQclear(res);
	if (rc == 0 && q.n) {
		rc = vgs_exec(pg, q.p, what, err, errsize);
		if (rc != 0) /* a concurrent loader created it first: once more */
			rc = vgs_exec(pg, q.p, what, err, errsize);
	}
	vgs_buf_free(&q);
	return rc;
}
