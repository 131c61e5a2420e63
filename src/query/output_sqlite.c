/* Relations written as tables of an SQLite database (vigil query --into FILE.db). */
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/out_file.h"
#include "query/output_internal.h"

struct vgq_sqlite {
	sqlite3 *db;
	char *path;
};

static void fail(char *err, size_t errsize, const char *fmt, ...)
{
	if (!errsize)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
	for (char *p = err; *p; p++) /* one line */
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

struct vgq_sqlite *vgq_sqlite_open(const char *path, char *err, size_t errsize)
{
	sqlite3 *db = NULL;
	/* SQLite writes a journal beside the file: /dev/null would get /dev/null-journal. */
	if (vg_out_check_regular(path, err, errsize) < 0)
		return NULL;
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	/* A file that is not a database opens fine; reading its schema tells. */
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		int sys = db ? sqlite3_system_errno(db) : 0; /* why the OS refused, if it did */
		fail(err, errsize, "%s: %s%s%s%s", path,
		     db ? sqlite3_errmsg(db) : sqlite3_errstr(rc), sys ? " (" : "",
		     sys ? strerror(sys) : "", sys ? ")" : "");
		sqlite3_close(db);
		return NULL;
	}
	if (sqlite3_db_readonly(db, "main") == 1) {
		fail(err, errsize, "%s: the database is read-only", path);
		sqlite3_close(db);
		return NULL;
	}
	struct vgq_sqlite *s = malloc(sizeof *s);
	char *copy = strdup(path);
	if (!s || !copy) {
		fputs("vigil: out of memory\n", stderr);
		abort();
	}
	*s = (struct vgq_sqlite){db, copy};
	return s;
}

/* "name" with its double quotes doubled: an SQL identifier. */
static void ident(struct vgq_text *q, const char *name)
{
	vgq_text_putc(q, '"');
	for (const char *p = name; *p; p++) {
		if (*p == '"')
			vgq_text_putc(q, '"');
		vgq_text_putc(q, *p);
	}
	vgq_text_putc(q, '"');
}

static const char *const SQL_TYPE[] = {
    [VGQ_INT] = "INTEGER", [VGQ_UINT] = "INTEGER", [VGQ_DOUBLE] = "REAL",
    [VGQ_STRING] = "TEXT", [VGQ_BYTES] = "BLOB",   [VGQ_ENTITY] = "TEXT",
};

static int bind(sqlite3_stmt *st, int i, const struct vgq_relation *r, size_t a, size_t t)
{
	const union vgq_column *c = &r->cols[a];
	if (r->nulls && r->nulls[a] && r->nulls[a][t])
		return sqlite3_bind_null(st, i);
	switch (r->attrs[a].type) {
	case VGQ_INT:
		return sqlite3_bind_int64(st, i, c->i[t]);
	case VGQ_UINT:
		if (c->u[t] > INT64_MAX)
			return sqlite3_bind_double(st, i, (double)c->u[t]);
		return sqlite3_bind_int64(st, i, (sqlite3_int64)c->u[t]);
	case VGQ_DOUBLE:
		return sqlite3_bind_double(st, i, c->d[t]); /* NaN becomes NULL */
	case VGQ_STRING:
		if (!c->s[t])
			return sqlite3_bind_null(st, i);
		return sqlite3_bind_text(st, i, c->s[t], -1, SQLITE_STATIC);
	case VGQ_BYTES:
		if (!c->b[t].len) /* a NULL pointer would bind NULL */
			return sqlite3_bind_zeroblob(st, i, 0);
		return sqlite3_bind_blob64(st, i, c->b[t].ptr, c->b[t].len, SQLITE_STATIC);
	case VGQ_ENTITY:
		if (!c->r[t].name)
			return sqlite3_bind_null(st, i);
		return sqlite3_bind_text(st, i, c->r[t].name, -1, SQLITE_STATIC);
	}
	return SQLITE_MISUSE;
}

static int insert_all(sqlite3_stmt *st, const struct vgq_relation *r, bool event)
{
	for (size_t t = 0; t < r->ntuples; t++) {
		int rc = SQLITE_OK;
		int i = 1;
		for (size_t a = 0; a < r->nattrs && rc == SQLITE_OK; a++)
			rc = bind(st, i++, r, a, t);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int64(st, i++, r->from[t]);
		if (rc == SQLITE_OK && !event)
			rc = sqlite3_bind_int64(st, i++, r->to[t]);
		if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_DONE)
			rc = SQLITE_OK;
		sqlite3_reset(st);
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

int vgq_sqlite_write(struct vgq_sqlite *s, const struct vgq_relation *r, char *err, size_t errsize)
{
	bool event = vgq_output_is_event(r);
	struct vgq_text drop = {0}, create = {0}, insert = {0};
	vgq_text_put(&drop, "DROP TABLE IF EXISTS ", 21);
	ident(&drop, r->name);
	vgq_text_put(&create, "CREATE TABLE ", 13);
	ident(&create, r->name);
	vgq_text_put(&create, " (", 2);
	vgq_text_put(&insert, "INSERT INTO ", 12);
	ident(&insert, r->name);
	vgq_text_put(&insert, " VALUES (", 9);
	for (size_t a = 0; a < r->nattrs; a++) {
		ident(&create, r->attrs[a].name);
		vgq_text_putc(&create, ' ');
		const char *type = SQL_TYPE[r->attrs[a].type];
		vgq_text_put(&create, type, strlen(type));
		vgq_text_put(&create, ", ", 2);
		vgq_text_put(&insert, "?, ", 3);
	}
	const char *times = event ? "valid_at INTEGER)" : "valid_from INTEGER, valid_to INTEGER)";
	vgq_text_put(&create, times, strlen(times));
	vgq_text_put(&insert, event ? "?)" : "?, ?)", event ? 2 : 5);

	sqlite3_stmt *st = NULL;
	int rc = sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(s->db, drop.ptr, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(s->db, create.ptr, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db, insert.ptr, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = insert_all(st, r, event);
	sqlite3_finalize(st);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		fail(err, errsize, "%s: table %s: %s", s->path, r->name, sqlite3_errmsg(s->db));
		if (!sqlite3_get_autocommit(s->db))
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	}
	vgq_text_free(&drop);
	vgq_text_free(&create);
	vgq_text_free(&insert);
	return rc == SQLITE_OK ? 0 : -1;
}

int vgq_sqlite_close(struct vgq_sqlite *s, char *err, size_t errsize)
{
	if (!s)
		return 0;
	int rc = sqlite3_close(s->db);
	if (rc != SQLITE_OK)
		fail(err, errsize, "%s: %s", s->path, sqlite3_errstr(rc));
	free(s->path);
	free(s);
	return rc == SQLITE_OK ? 0 : -1;
}
