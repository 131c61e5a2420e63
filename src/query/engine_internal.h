/* Internals of the TQuel engine: the temporal relational algebra that statements bound to
 * relations (bound.h) become, the session running them, and their evaluation.
 *
 *   bind.c         AST -> bound statement: variables, attributes, types, suggestions
 *   agg.c          aggregates: contributions -> constant intervals (agg_time.c: TQuel's)
 *   plan.c         bound statement -> algebra (the calculus as written) -> optimized plan
 *   plan_print.c   the expressions of explain lines, and the tree walk
 *   exec.c         plans -> trees of executor nodes (exec_node.h), one operator per
 *                  exec_*.c file, each pulled a batch of bindings at a time
 *   value.c        values, expressions and temporal expressions of one binding
 *   result.c       result tuples -> a set, in order, as a vgq_relation
 *   asof.c         as of: the trace as recorded up to an instant, a database per instant
 */
#ifndef VIGIL_QUERY_ENGINE_INTERNAL_H
#define VIGIL_QUERY_ENGINE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "query/bound.h" /* values, bound statements, struct plan */
#include "query/engine.h"
#include "relations/columns.h" /* vgq_mix */
#include "relations/relation.h"
#include "tquel/ast.h"

/* A value of a temporal expression: nothing, an event at b (= e), or [b, e). */
enum tval_kind { TV_NOTHING, TV_EVENT, TV_INTERVAL };
struct tval {
	enum tval_kind kind;
	int64_t b, e;
};

/* ---- plans ---- */

enum pkind {
	P_SCAN,      /* a variable's relation */
	P_SELECT,    /* σ on explicit attributes (conjuncts in `where`) */
	P_TSELECT,   /* σT on valid times (conjuncts in `when`) */
	P_PRODUCT,   /* × */
	P_HASHJOIN,  /* equality conjuncts: build on the right, probe with the left */
	P_SWEEPJOIN, /* `lt overlap rt`: both in time order, active windows only */
	P_SEMIJOIN,  /* keep left bindings for which some right tuple exists */
	P_PROJECT,   /* π: the target list */
	P_TPROJECT,  /* πT: the valid clause */
};

enum semi_mode {
	SEMI_EXISTS,    /* equality keys only */
	SEMI_MIN_END,   /* rt precede lt: per key, the least end of rt */
	SEMI_MAX_BEGIN, /* lt precede rt: per key, the greatest begin of rt */
};

struct pnode {
	enum pkind kind;
	struct pnode *l, *r;
	int var;           /* P_SCAN */
	struct bx **conds; /* P_SELECT, and residual conditions of joins */
	size_t nconds;
	struct tp **tconds; /* P_TSELECT, and residual temporal conditions of joins */
	size_t ntconds;
	struct bx **lkeys, **rkeys; /* P_HASHJOIN, P_SEMIJOIN */
	size_t nkeys;
	struct tx *lt, *rt; /* P_SWEEPJOIN, P_SEMIJOIN (precede) */
	enum semi_mode semi;
	uint64_t vars; /* variables bound in its output */
};

struct vg_pool; /* common/pool.h */

/* ---- the session: what one run of statements knows ---- */
/* The operators' state of the statement being evaluated, in bytes (exec_memory.c). */
struct vgq_memory {
	size_t held, peak;      /* now, and the most since the statement began (atomic) */
	int claimed;            /* the first refusal claims the fields below */
	bool refused;           /* the statement stops */
	const char *what;       /* the state refused ("the hash join's table") */
	bool rows;              /* what: an operator whose bindings were being materialised */
	size_t need, held_then; /* its bytes, and what was held then */
	size_t spilled;         /* bytes of bindings moved to the spill file (atomic) */
	/* operators spilled to partition files (exec_spill_parts.c): bytes written, the
	 * partitions made (repartitions' included) and the deepest repartition (atomic) */
	uint64_t parts_written;
	uint32_t parts, parts_depth;
};

struct vgq_session {
	struct vgq_database *db; /* NULL: explain without a trace */
	struct vgq_options opts;
	struct tquel_arena *arena;
	/* ranges in effect: variable name -> relation name and clock period */
	struct srange {
		const char *var, *relation;
		uint64_t clock;
		const struct tquel_range *src;
		bool bad; /* its relation is unknown (reported) */
	} * ranges;
	size_t nranges;
	struct vgq_relation **results; /* retrieve into: named results, in order */
	size_t nresults;
	struct vgq_relation **owned; /* every relation made by the session */
	size_t nowned;
	struct vgq_stat *stats;
	size_t nstats;
	uint64_t peak_state;  /* of the statement being evaluated */
	FILE *analyze;        /* explain --analyze: each statement's nodes and figures go here */
	struct vg_pool *pool; /* the workers of parallel execution (NULL: one thread) */
	struct vgq_asof_db {  /* as of: the databases made, one per instant (asof.c) */
		int64_t at;
		struct vgq_database *db;
	} * asof;
	size_t nasof;
	struct vgq_fault fault; /* the statement being evaluated: its first integer overflow */
	struct vgq_memory mem;  /* its operators' state against VIGIL_QUERY_MEMORY */
};

/* ---- bind.c ---- */
/* Binds one retrieve; NULL after reporting its errors (the caller counts them). For
 * explain without a trace, relations are unknown: attribute types are taken as int and
 * every relation as an interval relation, and only names of variables are checked. */
struct bstmt *vgq_bind(struct vgq_session *s, const struct tquel_query *q,
                       const struct tquel_stmt *st, struct vgq_diag *d);
bool vgq_check_range(struct vgq_session *s, const struct tquel_query *q,
                     const struct tquel_range *r, struct vgq_diag *d);
/* The relation named `name` (a trace relation, an earlier result or a clock), or NULL. */
const struct vgq_relation *vgq_session_relation(struct vgq_session *s, const char *name,
                                                uint64_t clock, char *err, size_t errsize);

/* ---- plan.c ---- */
struct plan *vgq_plan(struct vgq_session *s, struct bstmt *b);
/* Is conjunct c an equality between an expression over `side` (a non-empty subset) and
 * one over the variables `v`, of types a hash can key? Then *ls, *rs are its sides. */
bool vgq_join_key(const struct bx *c, uint64_t side, uint64_t v, struct bx **ls, struct bx **rs);

/* ---- value.c ---- */
struct binding {
	const uint32_t *rows; /* per statement variable: its tuple index */
	const struct bvar *vars;
};
struct vx_value vgq_eval(const struct bx *e, const struct binding *b);
enum tv3 vgq_truth(const struct bx *e, const struct binding *b);
struct tval vgq_teval(const struct tx *e, const struct binding *b);
bool vgq_tpred(const struct tp *p, const struct binding *b);
struct tval vgq_var_time(const struct bvar *v, uint32_t row);
bool vgq_tv_overlap(struct tval x, struct tval y);
struct tval vgq_tv_intersect(struct tval x, struct tval y);
/* Notes an integer overflow in f (the first one only: the statement fails with it). */
void vgq_fault_note(struct vgq_fault *f, enum vgq_fault_kind kind, const struct tquel_expr *src,
                    const char *op, const struct vx_value *x, const struct vx_value *y, size_t n);
bool vgq_fault_met(const struct vgq_fault *f);
/* Equality as `=` means it (for hash joins): false with a null. */
bool vgq_value_equal(const struct vx_value *a, const struct vx_value *b);
uint64_t vgq_value_hash(const struct vx_value *a);
int vgq_value_order(const struct vx_value *a, const struct vx_value *b); /* total, for sorting */
struct vx_value vgq_column_value(const struct vgq_relation *r, int attr, uint32_t row);
/* Between column types and value types (a condition is stored as an int). */
enum vx_type vx_type_of(enum vgq_type t);
enum vgq_type vgq_type_of_vx(enum vx_type t);

/* ---- exec.c: the executor's nodes are declared in exec_node.h ---- */
/* The threads evaluating the session's statements (1: the caller alone). */
unsigned vgq_session_threads(const struct vgq_session *s);
/* The limit on the bindings a join of statement b may produce (struct vgq_options). */
size_t vgq_row_limit(const struct vgq_session *s, const struct bstmt *b);
/* Records that an operator holds n tuples now (the statement's peak_state). */
void vgq_note_state(struct vgq_session *s, uint64_t n);

/* ---- exec_memory.c: operator state against the query's memory budget ---- */
/* Takes `bytes` of operator state from the budget before they are allocated. Past it:
 * false, and the statement stops (vgq_overflowed), reported as `what` needing them. */
bool vgq_mem_take(struct vgq_session *s, const char *what, size_t bytes);
/* The same without stopping the statement: the caller has a way that needs no more. */
bool vgq_mem_try(struct vgq_session *s, size_t bytes);
void vgq_mem_give(struct vgq_session *s, size_t bytes);
/* The bytes the budget has left now (operators that can spill size their parts by it). */
size_t vgq_mem_room(const struct vgq_session *s);
/* Stops the statement as vgq_mem_take past the budget would (a spill that cannot go on:
 * its own line first). False. */
bool vgq_mem_refuse(struct vgq_session *s, const char *what, size_t bytes);
bool vgq_mem_refused(const struct vgq_session *s);
/* A statement starts: no refusal, its peak from what is held now. */
void vgq_mem_statement_begin(struct vgq_session *s);
/* "WHAT needs N more with M held, past the query's memory budget (...)" */
void vgq_mem_report(const struct vgq_session *s, FILE *out);
/* An operator spilled to `parts` partitions, repartitioned `depth` deep (--stats). */
void vgq_mem_note_spill(struct vgq_session *s, size_t parts, unsigned depth);

/* ---- result.c ---- */
/* The empty result relation of a bound retrieve (its attributes), made at binding so
 * later statements can be bound against it; filled from the plan's batches
 * (vgq_result_begin/add/end, exec_node.h). */
struct vgq_relation *vgq_result_skeleton(struct vgq_session *s, const struct bstmt *b);

/* ---- asof.c ---- */
/* The session's trace as recorded up to and including instant t (the events recorded
 * then; intervals still open end at the last of them), built on first use and kept
 * until the session ends; NULL with one line in err when the session's database holds
 * no whole trace to read again. */
struct vgq_database *vgq_asof_database(struct vgq_session *s, int64_t t, char *err, size_t errsize);
void vgq_asof_free(struct vgq_session *s);

/* ---- agg_time.c ---- */
/* any, stdev, first, last, rate, avgti, varts of n values begun at b[] (b may be
 * reordered); false when the aggregate has no value. */
double vgq_agg_num(const struct vx_value *v); /* a number as a double */
bool vgq_agg_temporal(enum tquel_aggfn fn, const struct vx_value *v, int64_t *b, size_t n,
                      struct vx_value *out);

void vgq_session_own(struct vgq_session *s, struct vgq_relation *r);

#endif
