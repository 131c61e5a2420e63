/* A query session: statements are first all bound (so an error anywhere is reported
 * before any work), then each retrieve is evaluated in order: its aggregates' nodes, its
 * optimized plan's nodes (exec_node.h), pulled batch by batch into its result. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/pool.h"
#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "query/exec_semijoin_cols.h"
#include "relations/columns.h"
#include "tquel/arena.h"
#include "tquel/tquel.h"

struct vgq_session *vgq_session_new(struct vgq_database *db, const struct vgq_options *o)
{
	struct vgq_session *s = vgq_xcalloc(1, sizeof *s);
	s->db = db;
	s->opts = *o;
	if (s->opts.tick_ns < 1)
		s->opts.tick_ns = 1000000000;

	s->arena = tquel_arena_new();
	s->pool = vg_pool_new(s->opts.threads);
	return s;
}

void vgq_session_free(struct vgq_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nowned; i++)
		vgq_relation_free(s->owned[i]);
	free(s->owned);
	vgq_asof_free(s); /* after the relations, whose strings may be its */
	free(s->results);
	free(s->ranges);
	free(s->stats);
	vg_pool_free(s->pool);
	tquel_arena_free(s->arena);
	free(s);
}

const struct vgq_stat *vgq_session_stats(const struct vgq_session *s, size_t *n)
{
	*n = s->nstats;
	return s->stats;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct plan **vgq_bind_all(struct vgq_session *s, const struct tquel_query *q, FILE *errors,
                           size_t *nplans, size_t *nerrors)
{
	struct vgq_diag d = {q, errors, 0};
	struct plan **plans = vgq_xcalloc(q->nstmts + 1, sizeof *plans);
	*nplans = 0;
	for (size_t i = 0; i < q->nstmts; i++) {
		const struct tquel_stmt *st = &q->stmts[i];
		if (st->kind == TQ_RANGE) {
			const struct tquel_range *r = &st->u.range;
			bool ok = vgq_check_range(s, q, r, &d);
			s->ranges = vgq_xrealloc(s->ranges, s->nranges + 1, sizeof *s->ranges);
			s->ranges[s->nranges++] =
			    (struct srange){r->var, r->relation, r->clock_period, r, !ok};
			continue;
		}
		struct bstmt *b = vgq_bind(s, q, st, &d);
		if (b)
			plans[(*nplans)++] = vgq_plan(s, b);
	}
	*nerrors = d.errors;
	if (d.errors) {
		free(plans);
		return NULL;
	}
	return plans;
}

/* The aggregates' nodes of statement b (run before its plan). */
static struct xnode **aggregate_nodes(struct vgq_session *s, struct xctx *cx, struct bstmt *b)
{
	struct xnode **n = tquel_alloc(s->arena, (b->naggs + 1) * sizeof *n);
	for (size_t k = 0; k < b->naggs; k++) {
		n[k] = vgq_node_new(s, cx, &vgq_aggregate_ops, NULL);
		n[k]->agg = &b->aggs[k];
	}
	return n;
}

static void print_analyzed(struct vgq_session *s, const struct plan *p, struct xnode **aggs,
                           const struct xnode *root, bool first)
{
	const struct bstmt *b = p->stmt;
	struct xexplain e = {b, s->analyze, true, true};
	if (!first)
		fputc('\n', e.out);
	fprintf(e.out, "%s (line %u)\n", b->label, b->src->loc.line);
	for (size_t k = 0; k < b->naggs; k++)
		vgq_explain_tree(&e, aggs[k], 0);
	vgq_explain_tree(&e, root, 0);
}

/* Evaluates one retrieve: its aggregates, then its plan, batch by batch into its result.
 * False when it went beyond the limit on intermediate tuples. */
static bool evaluate(struct vgq_session *s, const struct plan *p, bool first)
{
	struct bstmt *b = p->stmt;
	struct xctx cx = {.s = s,
	                  .b = b,
	                  .width = b->nvars,
	                  .limit = vgq_row_limit(s, b),
	                  .timed = s->analyze != NULL};
	struct xnode **aggs = aggregate_nodes(s, &cx, b);
	for (size_t k = 0; k < b->naggs && !vgq_overflowed(&cx); k++) {
		vgq_node_open(aggs[k]);
		vgq_node_next(aggs[k], NULL);
		vgq_node_close(aggs[k]);
	}
	if (vgq_overflowed(&cx))
		return false;
	struct xnode *root = vgq_node_build(s, &cx, p->physical);
	vgq_node_open(root);
	/* A semi-join over a scan whose result is the scanned variable's columns: rows made
	 * from the probed tuples, no bindings (exec_semijoin_result.c). Targets read from
	 * columns: rows (times and values) made from each morsel's
	 * bindings as they are made (result_direct.c). Else the final bindings are kept (a
	 * tuple index per variable) until the statement is known to stay within its limit,
	 * and only then evaluated into result rows, which are several times larger: a
	 * statement that fails costs no more than its bindings. */
	if (vgq_semijoin_result(s, b, root) || vgq_result_direct(s, b, root)) {
		vgq_node_close(root);
	} else {
		struct xrows all = {0};
		vgq_rows_collect(root, &all);
		vgq_node_close(root);
		if (!vgq_overflowed(&cx)) {
			struct vgq_result_acc *acc = vgq_result_begin(b);
			vgq_result_add_all(s, acc, all.rows, all.n, cx.width);
			vgq_result_end(s, b, acc); /* not emitted if a target overflowed */
		}
		vgq_rows_free(&all);
	}
	bool ok = !vgq_overflowed(&cx);
	if (ok && s->analyze)
		print_analyzed(s, p, aggs, root, first);
	return ok;
}

static void print_number(FILE *out, const struct vx_value *v)
{
	if (v->type == VX_UINT)
		fprintf(out, "%" PRIu64, v->v.u);
	else
		fprintf(out, "%" PRId64, v->v.i);
}

/* The statement's integer overflow: one line naming the expression and the values, and the
 * source line with a caret under it. */
static void report_fault(const struct tquel_query *q, const struct bstmt *b,
                         const struct vgq_fault *f, FILE *errors)
{
	char *expr = NULL, *what = NULL;
	size_t len;
	FILE *m = open_memstream(&expr, &len);
	if (m) {
		tquel_print_expr(f->src, m);
		fclose(m);
	}
	FILE *w = open_memstream(&what, &len);
	if (w) {
		switch (f->kind) {
		case VF_BINARY:
			print_number(w, &f->x);
			fprintf(w, " %s ", f->op);
			print_number(w, &f->y);
			fputs(" is past the 64-bit integers", w);
			break;
		case VF_NEGATE:
			fputs("-(", w);
			print_number(w, &f->x);
			fputs(") is past the 64-bit integers", w);
			break;
		case VF_UNSIGNED:
			fputs("the uint ", w);
			print_number(w, &f->x);
			fputs(" is past the 64-bit signed integers that arithmetic is in", w);
			break;
		case VF_SUM:
			fprintf(w, "the sum of %zu value%s is past the 64-bit integers", f->n,
			        f->n == 1 ? "" : "s");
			break;
		}
		fclose(w);
	}
	tquel_report(q, &f->src->loc, errors, "%s: integer overflow in %s: %s", b->label,
	             expr ? expr : "an expression", what ? what : "a value past int64");
	free(expr);
	free(what);
}

size_t vgq_run(struct vgq_session *s, const struct tquel_query *q, vgq_emit_fn emit, void *ctx,
               FILE *errors)
{
	size_t nplans, nerrors;
	struct plan **plans = vgq_bind_all(s, q, errors, &nplans, &nerrors);
	if (!plans)
		return nerrors;
	for (size_t i = 0; i < nplans; i++) {
		struct bstmt *b = plans[i]->stmt;
		uint64_t t0 = now_ns(), c0 = cpu_ns();
		s->peak_state = 0;
		memset(&s->fault, 0, sizeof s->fault);
		vgq_mem_statement_begin(s);
		if (!evaluate(s, plans[i], i == 0)) {
			if (vgq_fault_met(&s->fault)) {
				report_fault(q, b, &s->fault, errors);
				free(plans);
				return 1;
			}
			if (vgq_mem_refused(s)) {
				fprintf(errors, "%s:%u:%u: error: %s: ", q->source,
				        b->src->loc.line, b->src->loc.col, b->label);
				vgq_mem_report(s, errors);
				fputs("; raise it, or select more (see vigil explain)\n", errors);
				free(plans);
				return 1;
			}
			fprintf(
			    errors,
			    "%s:%u:%u: error: %s: more than %zu intermediate tuples; relate its "
			    "variables in the where or when clause (see vigil explain)\n",
			    q->source, b->src->loc.line, b->src->loc.col, b->label,
			    vgq_row_limit(s, b));
			free(plans);
			return 1;
		}
		s->stats = vgq_xrealloc(s->stats, s->nstats + 1, sizeof *s->stats);
		s->stats[s->nstats++] = (struct vgq_stat){
		    b->src->loc.line,     b->label,      b->out->ntuples,   now_ns() - t0,
		    s->peak_state,        cpu_ns() - c0, s->mem.peak,       s->mem.spilled,
		    s->mem.parts_written, s->mem.parts,  s->mem.parts_depth};
		if (emit && emit(ctx, b->out) != 0)
			break;
	}
	free(plans);
	return 0;
}

void vgq_session_analyze(struct vgq_session *s, FILE *out)
{
	s->analyze = out;
}

size_t vgq_explain(struct vgq_session *s, const struct tquel_query *q, FILE *out, FILE *errors)
{
	size_t nplans, nerrors;
	struct plan **plans = vgq_bind_all(s, q, errors, &nplans, &nerrors);
	if (!plans)
		return nerrors;
	for (size_t i = 0; i < nplans; i++) {
		struct bstmt *b = plans[i]->stmt;
		if (i)
			fputc('\n', out);
		fprintf(out, "%s (line %u)", b->label, b->src->loc.line);
		if (b->db && b->db != s->db) /* as of: the trace as recorded up to its now */
			fprintf(out,
			        ", as of the trace recorded up to %" PRId64 " ns (%" PRIu64
			        " events)",
			        b->db->last, b->db->events);
		fputc('\n', out);
		/* a .vgl's relations have no tuples to count */
		struct xexplain e = {b, out, !(s->db && s->db->from_model), false};
		fputs("before optimization:\n", out);
		vgq_explain_tree(&e, vgq_node_build(s, NULL, plans[i]->logical), 0);
		fputs("after optimization:\n", out);
		struct xnode **aggs = aggregate_nodes(s, NULL, b);
		for (size_t k = 0; k < b->naggs; k++)
			vgq_explain_tree(&e, aggs[k], 0);
		vgq_explain_tree(&e, vgq_node_build(s, NULL, plans[i]->physical), 0);
	}
	free(plans);
	return 0;
}
