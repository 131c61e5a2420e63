/* Statements bound to relations (names resolved, types checked): what the engine plans
 * and runs, and what other rooms read of a query once it is bound (src/live plans its
 * sensor operators α from them). The bound values, the expressions over a statement's
 * tuple variables, the statements themselves, their conjuncts, and binding a whole query.
 * The engine's plans, sessions and evaluation stay in engine_internal.h. */
#ifndef VIGIL_QUERY_BOUND_H
#define VIGIL_QUERY_BOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "query/engine.h"
#include "relations/relation.h"
#include "tquel/ast.h"

/* ---- values ---- */

enum vx_type { VX_INT, VX_UINT, VX_DOUBLE, VX_STRING, VX_BYTES, VX_ENTITY, VX_BOOL };

/* Three-valued truth (SQL's): a comparison with a null is unknown. */
enum tv3 { T3_FALSE = 0, T3_TRUE = 1, T3_UNKNOWN = 2 };

struct vx_value {
	enum vx_type type;
	bool null;
	union {
		int64_t i;
		uint64_t u;
		double d;
		const char *s;
		struct vgq_bytes b;
		struct vgq_ref r;
		enum tv3 t;
	} v;
};

/* ---- integer overflow ---- */

/* The first integer overflow met while evaluating a statement (docs/tquel.md "Values"): the
 * statement fails naming it (engine.c). Written once by whichever thread meets one first
 * (`claimed`), read after the statement's evaluation has ended (its workers joined). */
enum vgq_fault_kind {
	VF_BINARY,   /* x op y past int64 (op: + - * /) */
	VF_NEGATE,   /* -x past int64 */
	VF_UNSIGNED, /* a uint past int64 taken into integer arithmetic */
	VF_SUM,      /* an aggregate's integer sum past int64 */
};
struct vgq_fault {
	int claimed; /* 0 until the first overflow */
	enum vgq_fault_kind kind;
	const struct tquel_expr *src; /* the expression (an aggregate for VF_SUM) */
	const char *op;
	struct vx_value x, y;
	size_t n; /* VF_SUM: the values summed */
};

/* ---- bound expressions ---- */

enum bx_kind {
	BX_CONST,
	BX_ATTR, /* var.attr */
	BX_NEG,
	BX_ADD,
	BX_SUB,
	BX_MUL,
	BX_DIV,
	BX_EQ,
	BX_NE,
	BX_LT,
	BX_LE,
	BX_GT,
	BX_GE,
	BX_AND,
	BX_OR,
	BX_NOT,
};

struct bx {
	enum bx_kind kind;
	enum vx_type type;            /* of the value: VX_BOOL for conditions */
	const struct tquel_expr *src; /* for printing */
	struct vx_value c;            /* BX_CONST */
	int var, attr;                /* BX_ATTR: statement variable index, attribute index */
	struct bx *a, *b;
	uint64_t vars;           /* bit set of the variables it reads */
	struct vgq_fault *fault; /* where an overflow evaluating it is noted (the session's) */
};

/* Temporal expressions: their kind (event or interval) is known statically. */
enum tx_kind { TX_VAR, TX_BEGIN, TX_END, TX_INTERSECT, TX_EXTEND, TX_CONST };

struct tx {
	enum tx_kind kind;
	bool event; /* statically an event */
	int var;    /* TX_VAR */
	int64_t at; /* TX_CONST: the event's instant, resolved when bound */
	struct tx *a, *b;
	const struct tquel_expr *src;
	uint64_t vars;
};

enum tp_kind { TP_PRECEDE, TP_OVERLAP, TP_EQUAL, TP_AND, TP_OR, TP_NOT };

struct tp {
	enum tp_kind kind;
	struct tx *x, *y; /* predicates */
	struct tp *a, *b; /* connectives */
	const struct tquel_expr *src;
	uint64_t vars;
};

#define VGQ_MAX_VARS 64 /* variables per statement (bit sets) */

/* A tuple variable of a statement, as bound. */
struct bvar {
	const char *name; /* as ranged, or "agg#N" for an aggregate's relation */
	const struct vgq_relation *rel;
	bool event;     /* ranges over an event relation */
	uint64_t clock; /* over Clock[n]: n (1 for Clock); 0: not a clock */
};

/* An aggregate, computed before its statement as an auxiliary interval relation
 * (group attributes g0..gn-1, then `value`) over the constant intervals of each group. */
struct bagg {
	const struct tquel_expr *src;
	struct bstmt *inner;  /* its own variables; targets: by-list..., argument */
	int var;              /* the statement's variable over the auxiliary relation */
	struct bx **outer_by; /* per by-item: the same expression over the outer variables,
	                         or NULL when the item is not correlated */
	size_t nby;
	enum tquel_aggfn fn;
	bool unique;
	enum tquel_window window;
	int64_t span_ns;          /* TQ_SPAN: the moving window's length */
	struct vgq_relation *rel; /* made by agg.c */
};

struct btarget {
	const char *name;
	struct bx *value;
};

/* A retrieve, bound. */
struct bstmt {
	const struct tquel_stmt *src;
	const char *into;  /* result name (NULL: unnamed) */
	const char *label; /* into, or "retrieve@LINE" */
	struct bvar vars[VGQ_MAX_VARS];
	size_t nvars;
	struct btarget *targets;
	size_t ntargets;
	struct bx *where; /* NULL: true */
	struct tp *when;  /* NULL: true */
	enum tquel_valid_kind valid;
	struct tx *valid_at, *valid_from, *valid_to;
	bool result_event; /* the result is an event relation */
	struct bagg *aggs;
	size_t naggs;
	/* Implicit temporal predicates: an aggregate's piece overlaps the valid time. */
	struct tp **implicit;
	size_t nimplicit;
	bool unique; /* retrieve unique: value-equivalent tuples coalesced (result.c) */
	struct vgq_relation *out; /* the result */
	/* What its variables range over: the session's database, or under `as of` the
	 * trace as recorded up to that instant (asof.c); "now" is its last event. */
	struct vgq_database *db;
};

/* ---- binding a query ---- */

struct pnode; /* engine_internal.h */

/* A retrieve, bound and planned. */
struct plan {
	struct bstmt *stmt;
	struct pnode *logical;  /* the calculus as algebra, before optimization */
	struct pnode *physical; /* after */
};

/* engine.c: binds every statement (errors to `errors`); the plans of the retrieves, in order
 * (malloc'd array), or NULL with *nerrors set. */
struct plan **vgq_bind_all(struct vgq_session *s, const struct tquel_query *q, FILE *errors,
                           size_t *nplans, size_t *nerrors);

/* plan.c: the conjuncts of a where (when) clause: count them, then fill out[] from *n on. */
size_t vgq_count_where(const struct bx *e);
void vgq_split_where(struct bx *e, struct bx **out, size_t *n);
size_t vgq_count_when(const struct tp *e);
void vgq_split_when(struct tp *e, struct tp **out, size_t *n);

#endif
