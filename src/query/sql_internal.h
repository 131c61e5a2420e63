/* Internals of the TQuel-to-SQL compiler (query/sql.h): one retrieve's tuple variables,
 * its compiled value and temporal expressions. */
#ifndef VIGIL_QUERY_SQL_INTERNAL_H
#define VIGIL_QUERY_SQL_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>

#include "query/sql.h"
#include "tquel/arena.h"

#define VGQ_SQL_MAX_VARS 32

/* A `range of V is R` in force. */
struct sql_range {
	const char *var;
	struct vgq_sql_rel *rel; /* NULL: its relation was reported unknown */
	const char *from;        /* a Clock: the subquery of its ticks; else NULL */
};

/* The value types of the engine (bind.c), a condition included. */
enum sql_type { ST_INT, ST_UINT, ST_DOUBLE, ST_STRING, ST_BYTES, ST_ENTITY, ST_BOOL };

struct sql_value {
	const char *sql;
	enum sql_type type;
	/* ST_ENTITY read from an attribute: its variable's alias and attribute (the
	 * identity columns); NULL for other values */
	const char *alias;
	const struct vgq_sql_attr *attr;
};

/* A temporal expression: it has a value when `cond` holds (NULL: always); then it is an
 * event (shape 1) or an interval (shape 2) from b to e (an event: b = e). shape 0: it
 * depends on the row, given by `kind` (an SQL expression, 1 or 2). */
struct sql_time {
	const char *cond;
	int shape;
	const char *kind;
	const char *b, *e;
	/* a stored relation's own valid time: int8range(from, to), the expression the GiST
	   index of `vigil store --index` is on (overlaps compile to && of these); else NULL */
	const char *range;
};

/* Compiling one retrieve. */
struct sqlc {
	struct vgq_sql_catalog *cat;
	const struct tquel_query *q;
	FILE *err;
	size_t errors;
	struct tquel_arena *a;
	const struct sql_range *ranges;
	size_t nranges;
	/* the statement's tuple variables, in order of first mention */
	size_t nvars;
	struct {
		const char *name, *alias;
		const struct vgq_sql_rel *rel;
		const char *from; /* an aggregate's relation, a Clock: its subquery; else NULL */
		bool agg;         /* an aggregate's relation */
	} vars[VGQ_SQL_MAX_VARS];
	const char *prefix; /* of the aliases: "t" outside aggregates */
	/* the outer statement: its variables outside aggregates (correlated by-items), its
	   conditions an aggregate adds (correlation), aggregates compiled so far */
	struct sqlc *outer;
	const char *outer_names[VGQ_SQL_MAX_VARS];
	size_t nouter;
	const char *agg_conds;
	size_t naggs;
	/* the variables the result's values and valid time read (bit i: vars[i]), marked by
	   sqlc_var while `marking` */
	bool marking;
	uint64_t shown;
};

/* sql_agg.c: an aggregate as a value of the statement: its relation (maximal intervals
 * of constant value per group) joined like a variable. */
bool sqlc_agg(struct sqlc *c, const struct tquel_expr *e, struct sql_value *out);

/* printf into c's arena. */
const char *sqlc_printf(struct sqlc *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "name" quoted as an SQL identifier (inner quotes doubled), in the arena. */
const char *sqlc_ident(struct sqlc *c, const char *name);
/* 'text' as an SQL string literal. */
const char *sqlc_literal(struct sqlc *c, const char *s);
/* Reports an error at loc (SOURCE:LINE:COL and a caret); returns NULL. */
void *sqlc_error(struct sqlc *c, const struct tquel_loc *loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The index of variable `name` in the statement, added from its range; -1 after an
 * error. */
int sqlc_var(struct sqlc *c, const char *name, const struct tquel_loc *loc);

/* The FROM list of c's variables. */
const char *sqlc_from_list(struct sqlc *c);
/* The FROM list of the variables whose bit in `mask` is `set`; NULL if none. */
const char *sqlc_from_some(struct sqlc *c, uint64_t mask, bool set);

/* sql_value.c: a value expression (where clause, targets); false after an error. */
bool sqlc_value(struct sqlc *c, const struct tquel_expr *e, struct sql_value *out);
/* An attribute of a variable as a value. */
struct sql_value sqlc_attr_value(struct sqlc *c, int var, const struct vgq_sql_attr *at);

/* sql_time.c: temporal expressions and predicates (valid and when clauses). */
bool sqlc_time(struct sqlc *c, const struct tquel_expr *e, struct sql_time *out);
/* A when-clause predicate as an SQL condition, NULL after an error. */
const char *sqlc_pred(struct sqlc *c, const struct tquel_expr *e);
/* The valid time of variable v. */
struct sql_time sqlc_var_time(struct sqlc *c, int v);
/* x overlap y (the intersection). */
struct sql_time sqlc_overlap(struct sqlc *c, const struct sql_time *x, const struct sql_time *y);
/* "a AND b", either NULL for true. */
const char *sqlc_and(struct sqlc *c, const char *a, const char *b);

#endif
