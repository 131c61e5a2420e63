/* The trees the TQuel parser builds: kinds, names, locations; `overlap` as predicate and
 * as constructor; Clock periods; keywords in any case; aggregates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tquel/tquel.h"

static struct tquel_query *parse_ok(const char *text)
{
	struct tquel_query *q = tquel_parse("t.tq", text, strlen(text));
	if (q->nerrors) {
		char *e = tquel_errors_string(q);
		fail_msg("%s", e);
	}
	return q;
}

static void assert_loc(struct tquel_loc l, unsigned line, unsigned col, const char *text,
                       const char *spelled)
{
	assert_int_equal(l.line, line);
	assert_int_equal(l.col, col);
	assert_int_equal(l.end - l.off, strlen(spelled));
	assert_memory_equal(text + l.off, spelled, strlen(spelled));
}

static const char paper[] = "range of S is SendMessage\n"
                            "range of W is Waiting\n"
                            "retrieve ResumedbyP1 (Process = W.Process)\n"
                            "valid at end of W\n"
                            "where S.Mailbox = W.Mailbox and S.Process = \"P1\"\n"
                            "when S precede end of W\n";

static void test_paper_query(void **state)
{
	(void)state;
	struct tquel_query *q = parse_ok(paper);
	assert_int_equal(q->nstmts, 3);
	const struct tquel_range *s = &q->stmts[0].u.range;
	assert_int_equal(q->stmts[0].kind, TQ_RANGE);
	assert_string_equal(s->var, "S");
	assert_string_equal(s->relation, "SendMessage");
	assert_int_equal(s->clock_period, 0);
	assert_loc(q->stmts[0].loc, 1, 1, paper, "range of S is SendMessage");
	assert_loc(s->relation_loc, 1, 15, paper, "SendMessage");

	assert_int_equal(q->stmts[2].kind, TQ_RETRIEVE);
	const struct tquel_retrieve *r = &q->stmts[2].u.retrieve;
	assert_string_equal(r->into, "ResumedbyP1");
	assert_int_equal(r->ntargets, 1);
	assert_string_equal(r->targets[0].name, "Process");
	assert_true(r->targets[0].renamed);
	assert_int_equal(r->targets[0].value->kind, TQ_ATTR);
	assert_string_equal(r->targets[0].value->u.attr.var, "W");
	assert_string_equal(r->targets[0].value->u.attr.name, "Process");
	assert_loc(r->targets[0].loc, 3, 23, paper, "Process = W.Process");

	assert_int_equal(r->valid.kind, TQ_VALID_AT);
	assert_int_equal(r->valid.at->kind, TQ_END_OF);
	assert_int_equal(r->valid.at->u.op.a->kind, TQ_TVAR);
	assert_string_equal(r->valid.at->u.op.a->u.tvar.name, "W");
	assert_loc(r->valid.at->loc, 4, 10, paper, "end of W");
	assert_loc(r->valid.loc, 4, 1, paper, "valid at end of W");

	const struct tquel_expr *w = r->where;
	assert_int_equal(w->kind, TQ_AND);
	assert_loc(w->loc, 5, 7, paper, "S.Mailbox = W.Mailbox and S.Process = \"P1\"");
	assert_int_equal(w->u.op.a->kind, TQ_EQ);
	assert_int_equal(w->u.op.b->kind, TQ_EQ);
	assert_int_equal(w->u.op.b->u.op.b->kind, TQ_STRING);
	assert_string_equal(w->u.op.b->u.op.b->u.string.s, "P1");
	assert_loc(w->u.op.b->u.op.b->loc, 5, 45, paper, "\"P1\"");

	const struct tquel_expr *t = r->when;
	assert_int_equal(t->kind, TQ_PRECEDE);
	assert_int_equal(t->u.op.a->kind, TQ_TVAR);
	assert_int_equal(t->u.op.b->kind, TQ_END_OF);
	assert_loc(t->loc, 6, 6, paper, "S precede end of W");
	assert_int_equal(q->stmts[2].loc.line, 3);
	assert_int_equal(q->stmts[2].loc.off,
	                 strlen("range of S is SendMessage\nrange of W is Waiting\n"));
	assert_int_equal(q->stmts[2].loc.end, strlen(paper) - 1);
	tquel_free(q);
}

static void test_clock(void **state)
{
	(void)state;
	struct tquel_query *q =
	    parse_ok("range of C is Clock[10] range of D is Clock range of E is Clock[1]\n"
	             "range of K is clock");
	assert_int_equal(q->nstmts, 4);
	assert_int_equal(q->stmts[0].u.range.clock_period, 10);
	assert_loc(q->stmts[0].u.range.relation_loc, 1, 15, q->text, "Clock[10]");
	assert_int_equal(q->stmts[1].u.range.clock_period, 1);
	assert_int_equal(q->stmts[2].u.range.clock_period, 1);
	/* relation names keep their case: `clock` is some other relation */
	assert_int_equal(q->stmts[3].u.range.clock_period, 0);
	assert_string_equal(q->stmts[3].u.range.relation, "clock");
	tquel_free(q);
}

static void test_overlap_two_roles(void **state)
{
	(void)state;
	struct tquel_query *q = parse_ok("retrieve (A.x) valid at A overlap B\n"
	                                 "  when A overlap B and (A overlap B) precede C\n");
	const struct tquel_retrieve *r = &q->stmts[0].u.retrieve;
	assert_int_equal(r->valid.at->kind, TQ_INTERSECT);
	assert_int_equal(r->when->kind, TQ_AND);
	assert_int_equal(r->when->u.op.a->kind, TQ_OVERLAPS);
	assert_int_equal(r->when->u.op.b->kind, TQ_PRECEDE);
	assert_int_equal(r->when->u.op.b->u.op.a->kind, TQ_INTERSECT);
	assert_true(tquel_is_temporal_pred(TQ_OVERLAPS));
	assert_false(tquel_is_temporal_pred(TQ_INTERSECT));
	assert_true(tquel_is_temporal_expr(TQ_INTERSECT));
	tquel_free(q);

	/* the last overlap of a chain is the predicate: (A overlap B) overlap (C extend D) */
	q = parse_ok("retrieve (A.x) when A overlap B overlap C extend D");
	const struct tquel_expr *w = q->stmts[0].u.retrieve.when;
	assert_int_equal(w->kind, TQ_OVERLAPS);
	assert_loc(w->loc, 1, 21, q->text, "A overlap B overlap C extend D");
	assert_int_equal(w->u.op.a->kind, TQ_INTERSECT);
	assert_loc(w->u.op.a->loc, 1, 21, q->text, "A overlap B");
	assert_int_equal(w->u.op.b->kind, TQ_EXTEND);
	assert_loc(w->u.op.b->loc, 1, 41, q->text, "C extend D");
	tquel_free(q);

	/* A extend B extend C overlap D extend E extend F */
	q = parse_ok("retrieve (A.x) when A extend B extend C overlap D extend E extend F");
	w = q->stmts[0].u.retrieve.when;
	assert_int_equal(w->kind, TQ_OVERLAPS);
	assert_loc(w->u.op.a->loc, 1, 21, q->text, "A extend B extend C");
	assert_loc(w->u.op.b->loc, 1, 49, q->text, "D extend E extend F");
	assert_int_equal(w->u.op.b->kind, TQ_EXTEND);
	assert_int_equal(w->u.op.b->u.op.a->kind, TQ_EXTEND);
	assert_loc(w->u.op.b->u.op.a->loc, 1, 49, q->text, "D extend E");
	assert_string_equal(w->u.op.b->u.op.b->u.tvar.name, "F");
	tquel_free(q);

	/* parentheses around the whole chain do not hide its overlap */
	q = parse_ok("retrieve (A.x) when not (A extend B overlap C extend D)");
	w = q->stmts[0].u.retrieve.when;
	assert_int_equal(w->kind, TQ_NOT);
	w = w->u.op.a;
	assert_int_equal(w->kind, TQ_OVERLAPS);
	assert_true(w->parens);
	assert_loc(w->loc, 1, 25, q->text, "(A extend B overlap C extend D)");
	assert_loc(w->u.op.a->loc, 1, 26, q->text, "A extend B");
	assert_loc(w->u.op.b->loc, 1, 45, q->text, "C extend D");
	assert_false(w->u.op.b->parens);
	tquel_free(q);

	/* parentheses hide an overlap: (A overlap B) extend C is no predicate */
	q = tquel_parse("t.tq", "retrieve (A.x) when (A overlap B) extend C", 42);
	assert_int_equal(q->nerrors, 1);
	assert_string_equal(q->errors[0].message, "expected 'precede', 'overlap' or 'equal' "
	                                          "after '(A overlap B) extend C', found end "
	                                          "of input");
	tquel_free(q);
}

static void test_keywords_and_names(void **state)
{
	(void)state;
	struct tquel_query *q = parse_ok("RANGE Of Wait IS Waiting\n"
	                                 "ReTrIeVe InTo Out (Wait.END, at = Wait.From, count = "
	                                 "Wait.count) WHEN Begin OF Wait PRECEDE eNd oF Wait");
	assert_string_equal(q->stmts[0].u.range.var, "Wait");
	const struct tquel_retrieve *r = &q->stmts[1].u.retrieve;
	assert_string_equal(r->into, "Out");
	assert_int_equal(r->ntargets, 3);
	assert_false(r->targets[0].renamed);
	assert_string_equal(r->targets[0].name, "END");
	assert_string_equal(r->targets[1].name, "at");
	assert_string_equal(r->targets[1].value->u.attr.name, "From");
	assert_string_equal(r->targets[2].name, "count");
	assert_int_equal(r->when->kind, TQ_PRECEDE);
	assert_int_equal(r->when->u.op.a->kind, TQ_BEGIN_OF);
	tquel_free(q);
}

static void test_aggregates(void **state)
{
	(void)state;
	struct tquel_query *q =
	    parse_ok("retrieve (n = countU(W.P by W.M, W.K for ever where W.x > 1 when W "
	             "overlap C), m = avg(W.P), k = max(W.P for each instant) + 1)");
	const struct tquel_retrieve *r = &q->stmts[0].u.retrieve;
	const struct tquel_agg *g = &r->targets[0].value->u.agg;
	assert_int_equal(r->targets[0].value->kind, TQ_AGG);
	assert_int_equal(g->fn, TQ_COUNT);
	assert_true(g->unique);
	assert_int_equal(g->nby, 2);
	assert_string_equal(g->by[1]->u.attr.name, "K");
	assert_int_equal(g->window, TQ_EVER);
	assert_int_equal(g->where->kind, TQ_GT);
	assert_int_equal(g->when->kind, TQ_OVERLAPS);
	g = &r->targets[1].value->u.agg;
	assert_int_equal(g->fn, TQ_AVG);
	assert_false(g->unique);
	assert_int_equal(g->window, TQ_INSTANT);
	assert_null(g->where);
	const struct tquel_expr *k = r->targets[2].value;
	assert_int_equal(k->kind, TQ_ADD);
	assert_int_equal(k->u.op.a->u.agg.fn, TQ_MAX);
	tquel_free(q);
}

static void test_numbers_and_strings(void **state)
{
	(void)state;
	struct tquel_query *q = parse_ok("retrieve (a = 9223372036854775807, b = 2.50, "
	                                 "c = \"q\\\"\\\\\\n\\tz\", d = 1 - 2 - 3, e = -1 * 2)");
	const struct tquel_target *t = q->stmts[0].u.retrieve.targets;
	assert_true(t[0].value->u.number.is_int);
	assert_int_equal(t[0].value->u.number.i, INT64_MAX);
	assert_false(t[1].value->u.number.is_int);
	assert_true(t[1].value->u.number.d == 2.5);
	assert_string_equal(t[1].value->u.number.lexeme, "2.50");
	assert_string_equal(t[2].value->u.string.s, "q\"\\\n\tz");
	/* left-associative: (1 - 2) - 3 */
	assert_int_equal(t[3].value->kind, TQ_SUB);
	assert_int_equal(t[3].value->u.op.a->kind, TQ_SUB);
	/* unary minus binds tighter than * */
	assert_int_equal(t[4].value->kind, TQ_MUL);
	assert_int_equal(t[4].value->u.op.a->kind, TQ_NEG);
	tquel_free(q);
}

static void test_empty_texts(void **state)
{
	(void)state;
	const char *texts[] = {"", "  \n\t ", "/* only a comment */", "/**/\n/* * / */"};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		struct tquel_query *q = tquel_parse("t.tq", texts[i], strlen(texts[i]));
		assert_int_equal(q->nstmts, 0);
		assert_int_equal(q->nerrors, 0);
		tquel_free(q);
	}
	struct tquel_query *q = tquel_parse(NULL, NULL, 0);
	assert_int_equal(q->nstmts + q->nerrors, 0);
	tquel_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_paper_query),       cmocka_unit_test(test_clock),
	    cmocka_unit_test(test_overlap_two_roles), cmocka_unit_test(test_keywords_and_names),
	    cmocka_unit_test(test_aggregates),        cmocka_unit_test(test_numbers_and_strings),
	    cmocka_unit_test(test_empty_texts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
