/* Internals of the PostgreSQL store: the connection, a growing text buffer, a relation's
 * table (names and columns), and the COPY encoder. */
#ifndef VIGIL_STORE_INTERNAL_H
#define VIGIL_STORE_INTERNAL_H

#include <libpq-fe.h>
#include <stdarg.h>

#include "relations/relation.h"
#include "store/store.h"

/* PostgreSQL truncates longer identifiers (NAMEDATALEN - 1). */
#define VGS_IDENT_MAX 63

struct vgs_pg {
	PGconn *conn;
	char schema[VGS_IDENT_MAX + 1];
	char shown[512]; /* the URL with its password redacted, for messages */
	struct vgs_options opts;
};

/* ---- text: buf.c ---- */
struct vgs_buf {
	char *p;
	size_t n, cap;
};
void vgs_buf_put(struct vgs_buf *b, const void *s, size_t n);
void vgs_buf_putc(struct vgs_buf *b, char c);
void vgs_buf_puts(struct vgs_buf *b, const char *s);
void vgs_buf_printf(struct vgs_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "name" quoted as an SQL identifier (inner quotes doubled). */
void vgs_buf_ident(struct vgs_buf *b, const char *name);
/* 'text' quoted as an SQL string literal (standard_conforming_strings). */
void vgs_buf_literal(struct vgs_buf *b, const char *s);
void vgs_buf_free(struct vgs_buf *b);
/* Formats one line into err (newlines of libpq's messages become "; "). Returns -1. */
int vgs_fail(char *err, size_t errsize, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- connection: pg.c ---- */
/* Runs one statement; -1 with "WHAT: server message" in err. */
int vgs_exec(struct vgs_pg *pg, const char *sql, const char *what, char *err, size_t errsize);
/* The server's last error, flattened to one line, into out. */
void vgs_pg_message(struct vgs_pg *pg, char *out, size_t size);

/* ---- tables: table.c ---- */
enum vgs_ctype { VGS_BIGINT, VGS_NUMERIC, VGS_DOUBLE, VGS_TEXT, VGS_BYTEA, VGS_BOOL };
struct vgs_column {
	char name[VGS_IDENT_MAX + 1];
	enum vgs_ctype type;
};
/* A relation's table: meta columns (vg_load, vg_host, vg_pid), then per attribute one
 * column (an entity reference: three, NAME, NAME_id, NAME_gen), then the valid time. */
struct vgs_table {
	char name[VGS_IDENT_MAX + 1];
	const struct vgq_relation *rel; /* what it holds: its catalog rows */
	struct vgs_column *cols;
	size_t ncols;
	size_t *attr_col; /* first column of each attribute */
	/* A derived relation's table (derived.c): each entity reference has a fourth
	 * column, NAME_load, the load of the image scoping it (its thread's process),
	 * image_loads[ref.image]; the rows' own vg_load is the analysis's load. */
	bool ref_loads;
	const int64_t *image_loads;
	size_t nimage_loads;
};
#define VGS_META_COLS 3
void vgs_table_plan(struct vgs_table *t, const struct vgq_relation *r);
/* The same with a NAME_load column after each entity reference's NAME_gen. */
void vgs_table_plan_derived(struct vgs_table *t, const struct vgq_relation *r);
void vgs_table_free(struct vgs_table *t);
/* An identifier of at most VGS_IDENT_MAX bytes: longer names keep their start and get
 * a hash of the whole name, so distinct names stay distinct. */
void vgs_ident_fit(char *out, const char *name);
/* Creates the table if missing, adds the columns it lacks; -1 if a column exists with
 * another type. */
int vgs_table_ensure(struct vgs_pg *pg, const struct vgs_table *t, char *err, size_t errsize);
const char *vgs_ctype_sql(enum vgs_ctype t);
/* The relation's rows in the catalog (vg_relations, vg_attributes: how TQuel compiled to
 * SQL finds its tables, columns and types), added if missing. */
int vgs_catalog_note(struct vgs_pg *pg, const struct vgs_table *t, char *err, size_t errsize);
/* The catalog tables' DDL for the schema, appended to q. */
void vgs_catalog_ddl(struct vgs_buf *q, const char *schema);

/* ---- loading images: load.c ---- */
/* The image's identity across reloads (the loads table's image_key). */
struct vgt_image;
void vgs_image_key(const struct vgt_image *img, char *out, size_t size);
/* Runs a statement with text parameters: its rows, or NULL (the message in the
 * connection). */
PGresult *vgs_query(struct vgs_pg *pg, const char *sql, int n, const char *const *params);
/* "WHAT: the server's message" into err; returns -1. */
int vgs_server_error(struct vgs_pg *pg, const char *what, char *err, size_t errsize);
int64_t vgs_now_ns(void);

/* ---- derived relations: derived.c ---- */
/* Stores the derived relations of the whole trace under `paths` (docs/store.md,
 * "Derived relations"), after its images were loaded: one load keyed by the images'
 * keys, replacing an earlier analysis of some of the same images. */
int vgs_load_derived(struct vgs_pg *pg, const char *const *paths, size_t npaths,
                     struct vgs_stats *st, char *err, size_t errsize);

/* ---- rows: copy.c ---- */
/* COPYs every tuple of r into its table, tagged with load id, host and pid (NULL when
 * negative). Adds to *rows and *bytes. */
int vgs_copy_relation(struct vgs_pg *pg, const struct vgs_table *t, const struct vgq_relation *r,
                      int64_t load, const char *host, int64_t pid, uint64_t *rows, uint64_t *bytes,
                      char *err, size_t errsize);
/* COPY text of s (UTF-8 sanitized, backslash, tab, newline, CR escaped) onto b. */
void vgs_buf_copytext(struct vgs_buf *b, const char *s);
/* COPYs rows (COPY text lines) into table (columns `cols`, already quoted) of the schema,
 * in batches. Adds to *bytes. */
int vgs_copy_rows(struct vgs_pg *pg, const char *table, const char *cols,
                  const struct vgs_buf *rows, uint64_t *bytes, char *err, size_t errsize);

#endif
