/* Writing relations: an aligned table, CSV, JSON lines (vgq_write_relation), or tables of
 * an SQLite database (vgq_sqlite_*). Results of the engine and base relations of a trace
 * are written alike: a relation is an event relation when its kind is VGQ_REL_EVENT (one
 * time, `at`), else an interval relation (`from`, `to`). The
 * formats are described for users in docs/query.md. */
#ifndef VIGIL_QUERY_OUTPUT_H
#define VIGIL_QUERY_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "relations/relation.h"

enum vgq_format { VGQ_FORMAT_TABLE, VGQ_FORMAT_CSV, VGQ_FORMAT_JSON };

struct vgq_output_opts {
	int64_t origin; /* table format: times shown as seconds since this ns instant (the
	                   trace's first event) */
};

/* Writes relation r (name r->name) to out, then flushes out. Returns 0, or -1 on a write
 * error (errno kept). o may be NULL (origin 0). One relation per call: a caller writing several CSV
 * or table relations writes a blank line between them. Out of memory aborts. */
int vgq_write_relation(FILE *out, const struct vgq_relation *r, enum vgq_format f,
                       const struct vgq_output_opts *o);

/* True when the value is missing: a NULL string, or a null flag (relation.h `nulls`). */
bool vgq_value_missing(const struct vgq_relation *r, size_t a, size_t tuple);

/* True for event relations (one time `at`), false for interval relations. */
bool vgq_output_is_event(const struct vgq_relation *r);

/* A growable text buffer, NUL-terminated when ptr is not NULL. Out of memory aborts. */
struct vgq_text {
	char *ptr;
	size_t len, cap;
};
void vgq_text_put(struct vgq_text *t, const void *p, size_t n);
void vgq_text_putc(struct vgq_text *t, char c);
void vgq_text_free(struct vgq_text *t);

/* The value text used by every format, appended to t: int/uint → decimal; double →
 * vgq_double_text; string → its bytes; bytes → lowercase hex; entity → its name, or
 * "Kind#id" (Kind = attrs[a].ref_kind, or "entity" when NULL). Returns false, appending
 * nothing, when the value is missing (a NULL string). */
bool vgq_value_text(struct vgq_text *t, const struct vgq_relation *r, size_t a, size_t tuple);

/* Shortest round-trip text of d, like Python's repr: the shortest of %.15g, %.16g, %.17g
 * that parses back equal, with ".0" added when it would read as an integer ("1.0",
 * "-0.0", "1e+20"); "nan", "inf", "-inf" for the others. Returns the length. */
#define VGQ_DOUBLE_TEXT_SIZE 32
size_t vgq_double_text(char buf[VGQ_DOUBLE_TEXT_SIZE], double d);

/* An open output database. */
struct vgq_sqlite;

/* Opens (or creates) the SQLite database at path for writing. NULL with one line in err
 * if it cannot be opened, is not a database, or is read-only. */
struct vgq_sqlite *vgq_sqlite_open(const char *path, char *err, size_t errsize);

/* Writes r as table r->name (a quoted identifier; a table of that name is replaced), in
 * one transaction through one prepared statement: one column per attribute, named as the
 * attribute, then the valid time: `valid_at INTEGER` (event relation) or
 * `valid_from INTEGER, valid_to INTEGER` (interval relation), absolute ns.
 *   int → INTEGER; uint → INTEGER, or REAL when above INT64_MAX (the nearest double);
 *   double → REAL (NaN is stored as NULL, SQLite has no NaN); string → TEXT (NULL when
 *   missing); bytes → BLOB; entity → TEXT, its name (NULL when it has none).
 * Returns 0, or -1 with one line in err (then nothing of r is written, and a table of
 * that name written before is kept). */
int vgq_sqlite_write(struct vgq_sqlite *db, const struct vgq_relation *r, char *err,
                     size_t errsize);

/* Closes db (NULL is fine). Returns 0, or -1 with one line in err. */
int vgq_sqlite_close(struct vgq_sqlite *db, char *err, size_t errsize);

#endif
