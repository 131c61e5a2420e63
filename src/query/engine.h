/* The TQuel engine: evaluates parsed statements (tquel/tquel.h) over the relations of a
 * trace (relations/relation.h). Each retrieve is bound (names resolved, types checked),
 * turned into temporal relational algebra, optimized, and evaluated; its result is a
 * relation that later statements can range over. docs/tquel.md defines the semantics,
 * docs/architecture.md the pipeline. */
#ifndef VIGIL_QUERY_ENGINE_H
#define VIGIL_QUERY_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "relations/relation.h"
#include "tquel/tquel.h"

struct vgq_options {
	int64_t tick_ns; /* the base tick of Clock */
	/* The most tuples an intermediate result may hold (0: VGQ_MAX_CELLS divided by the
	 * statement's number of variables, about 1 GiB of tuple indices): beyond it the
	 * statement stops with an error instead of exhausting memory or time. */
	uint64_t max_bindings;
	/* Threads evaluating each statement (docs/architecture.md, "Execute"); 0 or 1: the
	 * caller alone. Answers are the same at every count. */
	unsigned threads;
};
#define VGQ_MAX_CELLS 268435456ull

/* Errors found while binding: they go to `out` as SOURCE:LINE:COL lines with a caret. */
struct vgq_diag {
	const struct tquel_query *q;
	FILE *out;
	size_t errors;
};

/* What evaluating one retrieve took. */
struct vgq_stat {
	uint32_t line;
	const char *relation;
	uint64_t tuples, exec_ns, peak_state;
	uint64_t exec_cpu_ns;    /* CPU time of the whole process meanwhile (all its threads) */
	uint64_t peak_memory;    /* bytes of operator state at most (against VIGIL_QUERY_MEMORY) */
	uint64_t spilled_memory; /* bytes of bindings moved to the spill file past it */
	/* operators spilled to partition files (Grace hash joins, aggregates): bytes written,
	 * partitions made (repartitions' included), the deepest repartition (0: none) */
	uint64_t spill_written;
	uint32_t spill_partitions, spill_depth;
};

/* The query's memory budget for operator state, in bytes (exec_memory.c):
 * VIGIL_QUERY_MEMORY (read once; not a size: one line, exit status 2), default half the
 * machine's memory. A statement whose operators would pass it stops with one line. */
size_t vgq_query_memory(void);

struct vgq_session;

/* `db` may be NULL for explain: names of relations and attributes are then not checked. */
struct vgq_session *vgq_session_new(struct vgq_database *db, const struct vgq_options *o);
void vgq_session_free(struct vgq_session *s);

/* Evaluates every statement of q in order, calling `emit` with each retrieve's result
 * (valid until the session is freed). Binding errors are reported to d->out; statements
 * with errors and those after them are not evaluated. Returns the number of errors. */
typedef int (*vgq_emit_fn)(void *ctx, const struct vgq_relation *result);
size_t vgq_run(struct vgq_session *s, const struct tquel_query *q, vgq_emit_fn emit, void *ctx,
               FILE *errors);

/* Prints each retrieve's algebra before and after optimization. Returns the number of
 * errors (reported to `errors`). */
size_t vgq_explain(struct vgq_session *s, const struct tquel_query *q, FILE *out, FILE *errors);

/* Makes vgq_run print, after each retrieve, its optimized plan with each operator's
 * rows, batches and time (`vigil explain --analyze`); NULL: not. */
void vgq_session_analyze(struct vgq_session *s, FILE *out);

/* Per retrieve evaluated by vgq_run, in order. */
const struct vgq_stat *vgq_session_stats(const struct vgq_session *s, size_t *n);

#endif
