/* Executor nodes: every operator of a plan behind one interface, in the manner of
 * PostgreSQL's executor (ExecInitNode / ExecProcNode / ExecEndNode / EXPLAIN).
 *
 * A plan (struct pnode, plan.c) becomes a tree of nodes (vgq_node_build: the one place
 * that looks at the plan's kind). Each node's operator (struct xops) can
 *   open     set up its state (materialising only what it needs: a hash join its build
 *            side, a sweep join its sorted inputs, an aggregate its contributions),
 *   next     fill the caller's buffer with the next batch of at most VGQ_BATCH bindings
 *            (rows of `width` tuple indices, one per statement variable), 0 at the end,
 *   close    free its state,
 *   explain  print its line of `vigil explain` (the same for a plan that never runs).
 * Bindings flow up in batches through buffers allocated once per node at open: no
 * per-tuple allocation on the way. vgq_node_next counts each node's rows and, under
 * `vigil explain --analyze`, the time spent inside it (docs/architecture.md, "Executor").
 *
 * One operator per file: exec_scan.c (scan, with its pushed-down selection as column
 * kernels), exec_select.c (σ, σT), exec_product.c (×), exec_hashjoin.c,
 * exec_sweepjoin.c (the overlap sweep), exec_semijoin.c (existential keys and precede),
 * exec_project.c (π, πT), exec_aggregate.c (aggregates, their own plan below them). */
#ifndef VIGIL_QUERY_EXEC_NODE_H
#define VIGIL_QUERY_EXEC_NODE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/pool.h"
#include "query/engine_internal.h"
#include "relations/spill.h"

#define VGQ_BATCH 1024 /* bindings per batch */

/* What every node of one statement's evaluation shares. */
struct xctx {
	struct vgq_session *s;
	const struct bstmt *b;
	size_t width;  /* b->nvars: tuple indices per binding */
	size_t limit;  /* the most bindings a join may produce (vgq_row_limit) */
	bool overflow; /* a join went beyond the limit: the statement stops with an error
	                  (set and read atomically: workers share it) */
	bool timed;    /* explain --analyze: time each node */
};

/* What explain prints with (plan_print.c). */
struct xexplain {
	const struct bstmt *b;
	FILE *out;
	bool counts;  /* scans show their relation's number of tuples */
	bool analyze; /* each node shows its rows and time */
};

struct xnode;

struct xops {
	const char *name; /* for docs and debugging: "scan", "hash join", ... */
	void (*open)(struct xnode *n);
	size_t (*next)(struct xnode *n, uint32_t *rows); /* rows: VGQ_BATCH * width */
	void (*close)(struct xnode *n);
	/* Prints the node's line without indentation or newline. */
	void (*explain)(const struct xnode *n, const struct xexplain *e);
	/* Parallel execution (exec_parallel.c). A pipeline is a source (a node with
	 * `morsels`) and the nodes that stream its bindings up their left input (`streams`);
	 * each worker runs its own clone of the pipeline, morsel by morsel. */
	bool streams; /* passes its left input's batches up (select, joins' probes, π) */
	/* Materialises what the workers share (a build side), before they start. */
	void (*build)(struct xnode *n);
	/* A worker's state for clone, over orig's built state (NULL: the op has none). */
	void *(*fork)(struct xnode *clone, const struct xnode *orig);
	void (*unfork)(struct xnode *clone); /* frees what fork made */
	/* Sources: the number of morsels (after build), and a clone set to morsel m. */
	size_t (*morsels)(struct xnode *n);
	void (*seek)(struct xnode *clone, size_t m);
};

struct xnode {
	const struct xops *ops;
	const struct pnode *p; /* NULL for an aggregate */
	struct bagg *agg;      /* an aggregate's */
	struct xctx *cx;       /* NULL for a plan that is only explained */
	struct xnode *l, *r;
	void *state; /* the operator's, between open and close */
	/* Figures of the run (explain --analyze): bindings returned, batches returned,
	 * nanoseconds inside next (children included, summed over threads; only when
	 * cx->timed), the threads it ran on. A worker's clone counts its own, added to the
	 * original's when the pipeline ends. */
	uint64_t rows, calls, ns;
	unsigned threads;
	/* Bindings a join emitted (its limit): a clone adds its own to the original's after
	 * each morsel (`flushed`: what it has added). */
	uint64_t emitted, flushed;
	/* Its build made it a one-thread operator (a hash join spilled to partitions): its
	 * pipeline is drained serially (exec_parallel.c). */
	bool serial;
	/* The partitions its state went to past the memory budget, and how deep a partition
	 * was split again (explain --analyze). */
	uint32_t spilled_parts, spilled_depth;
};

/* exec.c: the tree of a plan (nodes in the session's arena); cx may be NULL (explain). */
struct xnode *vgq_node_build(struct vgq_session *s, struct xctx *cx, const struct pnode *p);
struct xnode *vgq_node_new(struct vgq_session *s, struct xctx *cx, const struct xops *ops,
                           const struct pnode *p);
void vgq_node_open(struct xnode *n);  /* the node and its children */
void vgq_node_close(struct xnode *n); /* likewise */
size_t vgq_node_next(struct xnode *n, uint32_t *rows);
/* A buffer of one batch of the context's width (malloc'd). */
uint32_t *vgq_batch_alloc(const struct xctx *cx);
/* Does binding `row` pass the plan node's residual conditions? */
bool vgq_node_passes(const struct xnode *n, const uint32_t *row);
/* Counts one binding a join emits; false (and cx->overflow) beyond the limit. */
bool vgq_node_emit_ok(struct xnode *n);
bool vgq_overflowed(const struct xctx *cx);
void vgq_set_overflow(struct xctx *cx);

/* A materialised input: every binding of a child, in order. */
struct xrows {
	uint32_t *rows;
	size_t n, cap, width;
	struct vgq_session *mem; /* the budget `charged` bytes were taken from (exec_memory.c) */
	size_t charged;
	struct vgq_colmem *spill; /* rows moved to the spill file past the budget, or NULL */
};
/* exec_memory.c: room for `more` bindings (width set) of the operator named `op`, taken
 * from the session's budget, or past it in the spill file; false when neither can be
 * (the statement stops, r unchanged). vgq_rows_free gives it back. */
bool vgq_rows_reserve(struct xrows *r, struct vgq_session *s, const char *op, size_t more);
void vgq_rows_drain(struct xnode *child, struct xrows *out);
void vgq_rows_free(struct xrows *r);
/* An operator's array (sort keys, a sweep's items): `bytes` of zeros from the budget on the
 * heap, or past it in the spill file (mapped: it reads as before; counted as spilled);
 * NULL when neither can be (the statement stops, refused as `what`). vgq_state_free
 * gives it back. */
struct vgq_state {
	void *p;
	struct vgq_session *mem;
	size_t charged;
	struct vgq_colmem *spill;
};
void *vgq_state_alloc(struct vgq_session *s, const char *what, size_t bytes, struct vgq_state *st);
void vgq_state_free(struct vgq_state *st);
/* Moves bindings held on the heap to the spill file, their bytes given back to the budget
 * (an operator about to spill its own state makes room first); false when they cannot. */
bool vgq_rows_spill(struct xrows *r);
/* exec_parallel.c: the same rows in the same order as vgq_rows_drain, computed by the
 * session's workers when the child is a pipeline over enough morsels. Materialising
 * operators and the statement's driver call it. */
void vgq_rows_collect(struct xnode *child, struct xrows *out);
/* Bindings handed over morsel by morsel instead of collected (vgq_rows_stream). */
struct vgq_sink {
	/* before the first morsel: how many there are (0 .. nmorsels - 1, the serial order)
	 * and the workers (0 .. threads - 1) they are handed to */
	void (*begin)(void *ctx, size_t nmorsels, unsigned threads);
	/* morsel m's bindings, on worker w, while they are in its cache (each morsel once) */
	void (*morsel)(void *ctx, unsigned w, size_t m, const uint32_t *rows, size_t n);
	void *ctx;
};
/* The child's bindings to sink, on the session's workers (a child that is no pipeline,
 * or of one morsel: all of them as morsel 0 of 1). Nothing is handed over once the
 * statement has stopped (vgq_overflowed). */
void vgq_rows_stream(struct xnode *child, const struct vgq_sink *sink);
/* Runs fn(ctx, lo, hi) over [0, n) in pieces of at least `grain`, on the session's
 * workers (the caller alone when there is one). */
/* The size of the pieces of n items shared out among the session's workers: about
 * eight per worker, from lo to hi items (small inputs go parallel too, so the tests'
 * small traces take the parallel paths). */
size_t vgq_grain(const struct vgq_session *s, size_t n, size_t lo, size_t hi);
void vgq_parallel_for(struct vgq_session *s, size_t n, size_t grain,
                      void (*fn)(void *ctx, size_t lo, size_t hi), void *ctx);
/* Runs fn(ctx, w) on the session's workers as vg_pool_run does (w 0: the caller), each
 * worker taking its own pieces; inside it vgq_session_threads is 1 on every worker, so
 * the parallel helpers fn calls (vgq_parallel_for, vgq_parallel_sort) run on that worker
 * alone (jobs do not nest). */
void vgq_workers_run(struct vgq_session *s, vg_pool_fn fn, void *ctx);
/* Sorts n items of `size` bytes: runs sorted by the workers with `sort` (qsort by cmp when
 * NULL), then merged pairwise by cmp, ties to the earlier run. With a total order, or
 * stable sorts, the result is the serial sort's at every thread count. */
void vgq_parallel_sort(struct vgq_session *s, void *base, size_t n, size_t size,
                       int (*cmp)(const void *, const void *), void (*sort)(void *base, size_t n));

/* The operators. */
extern const struct xops vgq_scan_ops, vgq_select_ops, vgq_tselect_ops, vgq_product_ops,
    vgq_hashjoin_ops, vgq_sweepjoin_ops, vgq_semijoin_ops, vgq_project_ops, vgq_tproject_ops,
    vgq_aggregate_ops;

/* exec_scan.c: the selection node above a scan hands its conjuncts to the scan, which
 * applies them column-at-a-time. */
void vgq_scan_push_selection(struct xnode *scan, const struct pnode *sel);
/* The variable of a scan (opened) with no selection pushed onto it: its bindings are
 * every tuple of its relation in order, the tuple index in the variable's place (-1 when
 * n is no such scan). */
int vgq_scan_whole(const struct xnode *n);

/* exec_hashjoin.c: hash tables on key expressions, shared with the semi-join. */
struct xhash {
	uint32_t *head; /* bucket -> first entry + 1 (0: empty) */
	uint32_t *next; /* entry -> next entry + 1 */
	uint64_t *hash;
	size_t mask;
	struct vgq_session *mem; /* the budget `charged` bytes were taken from */
	size_t charged;
};
/* A table for n entries, its bytes (and its build's: hashes, partitions) taken from s's
 * memory budget as `what`. Past the budget: false, a table of no entries, and the
 * statement stops (the caller builds nothing). */
bool vgq_xhash_init(struct xhash *t, size_t n, struct vgq_session *s, const char *what);
/* The bytes vgq_xhash_init takes for n entries. */
size_t vgq_xhash_bytes(size_t n);
void vgq_xhash_add(struct xhash *t, uint32_t entry, uint64_t h);
void vgq_xhash_free(struct xhash *t);
/* exec.c: what a join built for its workers to share, freed by the node that built it:
 * the right side's rows and the hash table on them (NULL: none). A worker's clone (fork)
 * borrows the original's and frees neither: false then, else true. */
bool vgq_build_free(struct xrows *right, struct xhash *table, bool borrowed);
/* exec_hashbuild.c: the entries i < n with keep[i], grouped by the range of t's buckets
 * (partition) their hash falls in, each partition's in entry order: each partition can be
 * filled by one worker and every chain comes out as the serial build's (one partition
 * at one thread). */
struct vgq_hash_parts {
	uint32_t *entry; /* partition p: entry[start[p]] .. entry[start[p + 1] - 1] */
	size_t *start;
	size_t nparts;
};
void vgq_hash_partition(struct vgq_session *s, const struct xhash *t, const uint64_t *hash,
                        const bool *keep, size_t n, struct vgq_hash_parts *out);
void vgq_hash_parts_free(struct vgq_hash_parts *p);
/* The key values of one binding; false if one is null (it matches nothing). */
bool vgq_keys_of(const struct bstmt *b, struct bx *const *keys, size_t nkeys, const uint32_t *row,
                 struct vx_value *out, uint64_t *hash);
bool vgq_keys_equal(const struct vx_value *a, const struct vx_value *c, size_t n);
/* The binding of a join: left's variables from x, the others from y. */
void vgq_merge_row(size_t width, uint64_t lvars, const uint32_t *x, const uint32_t *y,
                   uint32_t *row);

/* plan_print.c: the pieces of explain lines. */
void vgq_explain_bx(const struct xexplain *e, const struct bx *x, int prec);
void vgq_explain_tx(const struct xexplain *e, const struct tx *x, bool nested);
void vgq_explain_tp(const struct xexplain *e, const struct tp *p, bool nested);
/* " then σ[...]" when the node has residual conditions */
void vgq_explain_residual(const struct xexplain *e, const struct pnode *n);
void vgq_explain_keys(const struct xexplain *e, const struct pnode *n);
/* The tree below and including n, one line per node, indented by depth. */
void vgq_explain_tree(const struct xexplain *e, const struct xnode *n, int depth);

/* agg.c: an aggregate's relation from the contributions its node collected. */
struct vgq_contrib {
	int64_t b, e;
	struct vx_value *key; /* nby values */
	struct vx_value arg;
};
void vgq_agg_finish(struct vgq_session *s, struct bagg *a, struct vgq_contrib *c, size_t n);
/* The same in parts (a spilled aggregate's partitions, each holding whole groups): each
 * part's groups appended to the relation (by_hash: in the order of vgq_agg_group_hash,
 * then key; else of key), then the relation finished (vgq_agg_end). */
void vgq_agg_add(struct vgq_session *s, struct bagg *a, struct vgq_contrib *c, size_t n,
                 bool by_hash);
/* The hash of a group's nby key values (equal keys, equal hashes): a spilled aggregate's
 * partitions are ranges of it. */
uint64_t vgq_agg_group_hash(const struct vx_value *keys, size_t nby);
void vgq_agg_end(struct bagg *a);
/* The bytes vgq_agg_add takes from the budget for n contributions (its sort and groups). */
size_t vgq_agg_work_bytes(size_t n);
/* Where a group's constant intervals go instead of the relation: a spilled aggregate's
 * workers keep each partition's apart (exec_agg_spill.c), appended in partition order. */
struct vgq_agg_sink {
	void (*put)(void *ctx, int64_t b, int64_t e, const struct vx_value *key,
	            const struct vx_value *v);
	void *ctx;
};
/* vgq_agg_add's work, its vgq_agg_work_bytes(n) taken by the caller: the groups'
 * intervals to `to` (NULL: the relation), in the order vgq_agg_add appends them. */
void vgq_agg_groups(struct vgq_session *s, struct bagg *a, struct vgq_contrib *c, size_t n,
                    bool by_hash, const struct vgq_agg_sink *to);
/* One interval [b, e) of group `key` (a->nby values) with value v appended to a's
 * relation. */
void vgq_agg_put(struct bagg *a, int64_t b, int64_t e, const struct vx_value *key,
                 const struct vx_value *v);
/* exec_aggregate.c: the contribution of one binding of a's own plan (and its group's
 * key values, nby), false when it makes none (no valid time, a null argument). */
bool vgq_contrib_of(const struct bagg *a, const uint32_t *row, struct vgq_contrib *c,
                    struct vx_value *keys);
/* exec_agg_spill.c: the aggregate of the bindings `in` whose contributions are past the
 * room the budget has left (freed here): contributions partitioned by their group's hash
 * into spill files, the partitions' groups aggregated by the session's workers, whole
 * partitions each, and appended in partition order (the statement is refused, one line,
 * when one partition of whole groups is past the budget). The partitions used, and in
 * *workers the threads they were shared among. */
size_t vgq_agg_spill(struct vgq_session *s, struct bagg *a, struct xrows *in, unsigned *workers);

/* result.c: a retrieve's result from the batches of its plan. */
struct vgq_result_acc;
struct vgq_result_acc *vgq_result_begin(const struct bstmt *b);
/* The result rows of n bindings, in order (their valid times computed by the session's
 * workers); once per result. The bindings are read until vgq_result_end (values are
 * evaluated from them late), so the caller frees them after. */
void vgq_result_add_all(struct vgq_session *s, struct vgq_result_acc *acc, const uint32_t *rows,
                        size_t n, size_t width);
/* Builds b->out and frees acc. */
void vgq_result_end(struct vgq_session *s, const struct bstmt *b, struct vgq_result_acc *acc);
/* result_direct.c: when every target of b is an integer attribute without nulls and b is
 * no retrieve unique, b->out made from root's bindings morsel by morsel as they are made
 * (unless the statement stops): true; else false and nothing done. */
bool vgq_result_direct(struct vgq_session *s, const struct bstmt *b, struct xnode *root);

#endif
