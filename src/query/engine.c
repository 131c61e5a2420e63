/* A query session: statements are first all bound (so an error anywhere is reported
 * before any work), then each retrieve is evaluated in order: its aggregates, its
 * optimized plan, its result. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "query/engine_internal.h"
#include "relations/internal.h"
#include "tquel/arena.h"

struct vgq_session *vgq_session_new(struct vgq_database *db, const struct vgq_options *o)
{
	struct vgq_session *s = vgq_xcalloc(1, sizeof *s);
	s->db = db;
	s->opts = *o;
	if (s->opts.tick_ns < 1)
		s->opts.tick_ns = 1000000000;

	s->arena = tquel_arena_new();
	return s;
}

void vgq_session_free(struct vgq_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nowned; i++)
		vgq_relation_free(s->owned[i]);
	free(s->owned);
	free(s->results);
	free(s->ranges);
	free(s->stats);
	tquel_arena_free(s->arena);
	free(s);
}

const struct vgq_stat *vgq_session_stats(const struct vgq_session *s, size_t *n)
{
	*n = s->nstats;
	return s->stats;
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

size_t vgq_run(struct vgq_session *s, const struct tquel_query *q, vgq_emit_fn emit, void *ctx,
               FILE *errors)
{
	size_t nplans, nerrors;
	struct plan **plans = vgq_bind_all(s, q, errors, &nplans, &nerrors);
	if (!plans)
		return nerrors;
	for (size_t i = 0; i < nplans; i++) {
		struct bstmt *b = plans[i]->stmt;
		uint64_t t0 = now_ns();
		s->peak_state = 0;
		bool over = false;
		for (size_t k = 0; k < b->naggs && !over; k++)
			over = !vgq_agg_compute(s, &b->aggs[k]);
		struct btable t = {0};
		if (!over) {
			t = vgq_exec(s, plans[i], plans[i]->physical);
			over = t.overflow;
		}
		if (over) {
			free(t.rows);
			fprintf(
			    errors,
			    "%s:%u:%u: error: %s: more than %zu intermediate tuples; relate its "
			    "variables in the where or when clause (see vigil explain)\n",
			    q->source, b->src->loc.line, b->src->loc.col, b->label,
			    vgq_row_limit(s, b));
			free(plans);
			return 1;
		}
		vgq_result(s, b, &t);
		free(t.rows);
		s->stats = vgq_xrealloc(s->stats, s->nstats + 1, sizeof *s->stats);
		s->stats[s->nstats++] = (struct vgq_stat){
		    b->src->loc.line, b->label, b->out->ntuples, now_ns() - t0, s->peak_state};
		if (emit && emit(ctx, b->out) != 0)
			break;
	}
	free(plans);
	return 0;
}

size_t vgq_explain(struct vgq_session *s, const struct tquel_query *q, FILE *out, FILE *errors)
{
	size_t nplans, nerrors;
	struct plan **plans = vgq_bind_all(s, q, errors, &nplans, &nerrors);
	if (!plans)
		return nerrors;
	for (size_t i = 0; i < nplans; i++) {
		const struct bstmt *b = plans[i]->stmt;
		if (i)
			fputc('\n', out);
		fprintf(out, "%s (line %u)\n", b->label, b->src->loc.line);
		fputs("before optimization:\n", out);
		bool counts = !(s->db && s->db->from_model); /* a .vgl's relations have none */
		vgq_plan_print(plans[i], false, counts, out);
		fputs("after optimization:\n", out);
		vgq_plan_print(plans[i], true, counts, out);
	}
	free(plans);
	return 0;
}
