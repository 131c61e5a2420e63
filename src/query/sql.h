/* TQuel compiled to SQL for the PostgreSQL store (docs/tquel-sql.md): each retrieve is
 * bound against the store's catalog (its relations, their valid-time columns and
 * attribute types, as `vigil store` wrote them) and turned into one SELECT that
 * PostgreSQL evaluates whole: the where clause as SQL predicates, valid and when clauses
 * as expressions over the time columns, retrieve unique as a window computation,
 * aggregates as range computations (sql_agg.c), Clock[n] as a series over the time line
 * of what is stored. Errors are reported at their place in the text before anything
 * runs: nothing is computed on the client.
 *
 * This file knows no libpq: src/store reads the catalog and runs the statements. */
#ifndef VIGIL_QUERY_SQL_H
#define VIGIL_QUERY_SQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "relations/relation.h"
#include "tquel/tquel.h"

/* One attribute of a stored relation and the columns holding it (SQL identifiers,
 * unquoted). An entity has its name in `col`, its identity in id_col, gen_col and
 * load_col (the image: entity ids are scoped to one process image). */
struct vgq_sql_attr {
	const char *name;
	enum vgq_type type;
	const char *ref_kind; /* VGQ_ENTITY: the entity kind (for Kind#id), or NULL */
	const char *col, *id_col, *gen_col, *load_col;
};

/* A relation of the store: event relations have one time column (valid_at), the others
 * an interval [valid_from, valid_to). */
struct vgq_sql_rel {
	const char *name;  /* the relation's name, as TQuel ranges over it */
	const char *table; /* its table in the schema */
	bool event;
	bool derived; /* made by a retrieve into: may be replaced by another */
	bool fresh;   /* made by the statements being compiled: not replaced */
	size_t nattrs;
	struct vgq_sql_attr *attrs;
};

struct vgq_sql_catalog {
	const char *schema;
	size_t nrels, cap;
	struct vgq_sql_rel **rels; /* grows as retrieve into adds results */
	struct tquel_arena *arena;
	int64_t tick_ns; /* the base tick of Clock (vigil query --tick); 0: 1 s */
};

/* One compiled retrieve. Its SELECT yields, per result attribute, one column (an entity:
 * four, its name, id, gen and image), then the valid time: one column `valid_at` for an
 * event result, `valid_from` and `valid_to` for an interval result. */
struct vgq_sql_stmt {
	const char *name; /* the result's name: the into name, or retrieve@LINE */
	unsigned line;
	bool event;
	bool into;    /* retrieve into: the SELECT's rows become table `table` */
	bool replace; /* a derived table of that name exists: dropped first */
	const char *table;
	size_t nattrs;
	struct vgq_attr *attrs;
	const char *select;     /* the whole query, ordered by time then values */
	const char *create;     /* into: CREATE TABLE ... AS the SELECT (unordered) */
	const char *catalog;    /* into: the catalog rows of the new relation */
	const char *from_table; /* into: SELECT of the stored result, ordered */
};

struct vgq_sql_program {
	size_t nstmts;
	struct vgq_sql_stmt *stmts;
};

/* An unsigned column (numeric(20,0)) as the int8 that keeps its order and equality:
 * minus 2^63. Two unsigned values compare equal in this form, which the GiST index of
 * `vigil store --index` on (key, valid time) holds. printf format of the column's SQL. */
#define VGQ_SQL_UINT_KEY "((%s - 9223372036854775808)::int8)"

/* A catalog with no relations; relations are added with vgq_sql_catalog_add. */
struct vgq_sql_catalog *vgq_sql_catalog_new(const char *schema);
void vgq_sql_catalog_free(struct vgq_sql_catalog *c);
/* Adds a relation (copied), NULL-terminated name strings copied; returns it. */
struct vgq_sql_rel *vgq_sql_catalog_add(struct vgq_sql_catalog *c, const char *name,
                                        const char *table, bool event, bool derived);
void vgq_sql_rel_add_attr(struct vgq_sql_catalog *c, struct vgq_sql_rel *r,
                          const struct vgq_sql_attr *a);
/* Case-insensitive, like the engine's lookups; NULL if none. */
struct vgq_sql_rel *vgq_sql_catalog_find(const struct vgq_sql_catalog *c, const char *name);

/* The catalog tables' DDL (created by vigil store in the schema). */
#define VGQ_SQL_CATALOG_RELATIONS "vg_relations"
#define VGQ_SQL_CATALOG_ATTRIBUTES "vg_attributes"

/* Compiles every statement of q against c (retrieve into adds its result to c, so that
 * later statements range over it). Errors go to `errors` as SOURCE:LINE:COL lines with
 * a caret; returns their number (0: *out holds the program, its strings in c's arena). */
size_t vgq_sql_compile(struct vgq_sql_catalog *c, const struct tquel_query *q,
                       struct vgq_sql_program *out, FILE *errors);
void vgq_sql_program_free(struct vgq_sql_program *p);

#endif
