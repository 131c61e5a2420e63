/* The temporal predicates and constructors of TQuel (docs/tquel.md, "What a query means")
 * at their boundaries: equal endpoints, meeting intervals, events at an interval's begin
 * and end, nothing (an empty intersection, an extend that runs backwards), an interval
 * still open at the end of the trace.
 *
 * 1. Directly on the evaluator (vgq_tpred, vgq_teval) with hand-made times.
 * 2. End to end: a trace built byte by byte (tests/unit/reader_tracegen.h) with five jobs
 *    and five marks at chosen instants, queried through the engine (parse, bind, plan,
 *    execute), every answer compared with the set of tuples worked out by hand from the
 *    definitions below, including a semi-join plan (checked with vgq_explain); and the
 *    same through the command, `vigil query --format csv` on the trace directory.
 *
 *   Job (interval): J1 [10,20)  J2 [20,30)  J3 [15,25)  J4 [10,20)  J5 [40,50) open
 *   Mark (event):   M1 @20  M2 @10  M3 @30  M4 @20  M5 @50 (the last event: J5's end)
 *
 *   X precede Y: end of X <= begin of Y; X overlap Y: a shared instant ([b,e) holds b,
 *   not e); X equal Y: same kind, same times; X extend Y: begin of X to end of Y (an
 *   event when they are equal, nothing when it runs backwards). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jobs_fixture.h"
#include "query/engine.h"
#include "query/engine_internal.h"
#include "reader_tracegen.h"
#include "relations/relation.h"
#include "tquel/tquel.h"

/* ---- 1. the evaluator ---- */

static struct tx var(int v, bool event)
{
	struct tx x = {.kind = TX_VAR, .event = event, .var = v};
	return x;
}

static struct tx un(enum tx_kind k, struct tx *a)
{
	struct tx x = {.kind = k, .event = true, .a = a};
	return x;
}

static struct tx bin(enum tx_kind k, struct tx *a, struct tx *b)
{
	struct tx x = {.kind = k, .a = a, .b = b};
	return x;
}

static bool pred(enum tp_kind k, struct tx *x, struct tx *y, const struct binding *b)
{
	struct tp p = {.kind = k, .x = x, .y = y};
	return vgq_tpred(&p, b);
}

static struct tval tv(enum tval_kind k, int64_t b, int64_t e)
{
	struct tval t = {k, b, e};
	return t;
}

static bool same(struct tval a, struct tval b)
{
	return a.kind == b.kind && (a.kind == TV_NOTHING || (a.b == b.b && a.e == b.e));
}

static void test_evaluator(void **state_)
{
	(void)state_;
	int64_t efrom[1], ifrom[1], ito[1];
	struct vgq_relation er = {.kind = VGQ_REL_EVENT, .ntuples = 1, .from = efrom};
	struct vgq_relation ir = {.kind = VGQ_REL_INTERVAL, .ntuples = 1, .from = ifrom, .to = ito};
	struct bvar vars[2] = {{.name = "E", .rel = &er, .event = true}, {.name = "I", .rel = &ir}};
	uint32_t rows[2] = {0, 0};
	struct binding bind = {rows, vars}, *b = &bind;
	struct tx E = var(0, true), I = var(1, false);
	struct tx bI = un(TX_BEGIN, &I), eI = un(TX_END, &I);
	struct tx EextI = bin(TX_EXTEND, &E, &I), IextE = bin(TX_EXTEND, &I, &E);
	struct tx IandE = bin(TX_INTERSECT, &I, &E);

	/* the interval [10,20) against events at 9, 10, 15, 19, 20, 21 */
	ifrom[0] = 10, ito[0] = 20;
	static const struct {
		int64_t t;
		bool e_prec_i, i_prec_e, overlap, eq_begin, eq_end;
	} at[] = {
	    {9, true, false, false, false, false},  {10, true, false, true, true, false},
	    {15, false, false, true, false, false}, {19, false, false, true, false, false},
	    {20, false, true, false, false, true},  {21, false, true, false, false, false},
	};
	for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
		efrom[0] = at[k].t;
		assert_int_equal(pred(TP_PRECEDE, &E, &I, b), at[k].e_prec_i);
		assert_int_equal(pred(TP_PRECEDE, &I, &E, b), at[k].i_prec_e);
		assert_int_equal(pred(TP_OVERLAP, &E, &I, b), at[k].overlap);
		assert_int_equal(pred(TP_OVERLAP, &I, &E, b), at[k].overlap);
		assert_int_equal(pred(TP_EQUAL, &bI, &E, b), at[k].eq_begin);
		assert_int_equal(pred(TP_EQUAL, &eI, &E, b), at[k].eq_end);
		assert_false(pred(TP_EQUAL, &E, &I, b)); /* an event never equals an interval */
		/* an event precedes and follows itself; it overlaps and equals itself */
		assert_true(pred(TP_PRECEDE, &E, &E, b));
		assert_true(pred(TP_OVERLAP, &E, &E, b));
		assert_true(pred(TP_EQUAL, &E, &E, b));
		/* the intersection: the event if inside, else nothing (and then every
		 * predicate on it is false, and its negation true) */
		struct tval x = vgq_teval(&IandE, b);
		assert_true(
		    same(x, at[k].overlap ? tv(TV_EVENT, at[k].t, at[k].t) : tv(TV_NOTHING, 0, 0)));
		assert_int_equal(pred(TP_PRECEDE, &IandE, &E, b), at[k].overlap);
		assert_int_equal(pred(TP_EQUAL, &IandE, &IandE, b), at[k].overlap);
		struct tp inner = {.kind = TP_OVERLAP, .x = &IandE, .y = &I};
		struct tp neg = {.kind = TP_NOT, .a = &inner};
		assert_int_equal(vgq_tpred(&neg, b), !at[k].overlap);
		/* extend: E to I's end, I's begin to E */
		x = vgq_teval(&EextI, b);
		assert_true(same(x, at[k].t < 20    ? tv(TV_INTERVAL, at[k].t, 20)
		                    : at[k].t == 20 ? tv(TV_EVENT, 20, 20)
		                                    : tv(TV_NOTHING, 0, 0)));
		x = vgq_teval(&IextE, b);
		assert_true(same(x, at[k].t > 10    ? tv(TV_INTERVAL, 10, at[k].t)
		                    : at[k].t == 10 ? tv(TV_EVENT, 10, 10)
		                                    : tv(TV_NOTHING, 0, 0)));
	}
	/* an interval precedes the one it meets and overlaps neither its begin nor it;
	 * begin of / end of are events at b and e */
	assert_true(same(vgq_teval(&bI, b), tv(TV_EVENT, 10, 10)));
	assert_true(same(vgq_teval(&eI, b), tv(TV_EVENT, 20, 20)));
	assert_true(pred(TP_PRECEDE, &I, &eI, b));
	assert_true(pred(TP_PRECEDE, &bI, &I, b));
	assert_false(pred(TP_PRECEDE, &I, &bI, b));
	assert_false(pred(TP_PRECEDE, &I, &I, b));
	assert_true(pred(TP_OVERLAP, &I, &bI, b));
	assert_false(pred(TP_OVERLAP, &I, &eI, b));
	assert_true(pred(TP_EQUAL, &I, &I, b));
}

/* Two intervals through the plain intersection and overlap, and the connectives. */
static void test_intervals(void **state_)
{
	(void)state_;
	int64_t from[2], to[2];
	struct vgq_relation r = {.kind = VGQ_REL_INTERVAL, .ntuples = 2, .from = from, .to = to};
	struct bvar vars[2] = {{.name = "A", .rel = &r}, {.name = "B", .rel = &r}};
	uint32_t rows[2] = {0, 1};
	struct binding bind = {rows, vars}, *b = &bind;
	struct tx A = var(0, false), B = var(1, false);
	struct tx AB = bin(TX_INTERSECT, &A, &B), AextB = bin(TX_EXTEND, &A, &B);
	static const struct {
		int64_t ab, ae, bb, be;
		bool prec, overlap, equal;
		struct tval inter, ext;
	} c[] = {
	    /* meeting: A precedes B, no shared instant */
	    {10, 20, 20, 30, true, false, false, {TV_NOTHING, 0, 0}, {TV_INTERVAL, 10, 30}},
	    /* one instant apart the other way: B before A */
	    {20, 30, 10, 20, false, false, false, {TV_NOTHING, 0, 0}, {TV_EVENT, 20, 20}},
	    /* sharing one instant */
	    {10, 21, 20, 30, false, true, false, {TV_INTERVAL, 20, 21}, {TV_INTERVAL, 10, 30}},
	    /* equal */
	    {10, 20, 10, 20, false, true, true, {TV_INTERVAL, 10, 20}, {TV_INTERVAL, 10, 20}},
	    /* same begin, different ends */
	    {10, 20, 10, 25, false, true, false, {TV_INTERVAL, 10, 20}, {TV_INTERVAL, 10, 25}},
	    /* B long before A: extend runs backwards, nothing */
	    {40, 50, 10, 20, false, false, false, {TV_NOTHING, 0, 0}, {TV_NOTHING, 0, 0}},
	};
	for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
		from[0] = c[k].ab, to[0] = c[k].ae, from[1] = c[k].bb, to[1] = c[k].be;
		assert_int_equal(pred(TP_PRECEDE, &A, &B, b), c[k].prec);
		assert_int_equal(pred(TP_OVERLAP, &A, &B, b), c[k].overlap);
		assert_int_equal(pred(TP_OVERLAP, &B, &A, b), c[k].overlap);
		assert_int_equal(pred(TP_EQUAL, &A, &B, b), c[k].equal);
		assert_true(same(vgq_teval(&AB, b), c[k].inter));
		assert_true(same(vgq_teval(&AextB, b), c[k].ext));
		/* nothing is neither before, nor overlapping, nor equal to anything */
		if (c[k].inter.kind == TV_NOTHING) {
			assert_false(pred(TP_PRECEDE, &AB, &A, b));
			assert_false(pred(TP_PRECEDE, &A, &AB, b));
			assert_false(pred(TP_OVERLAP, &AB, &AB, b));
			assert_false(pred(TP_EQUAL, &AB, &AB, b));
		}
		struct tp p1 = {.kind = TP_PRECEDE, .x = &A, .y = &B};
		struct tp p2 = {.kind = TP_OVERLAP, .x = &A, .y = &B};
		struct tp both = {.kind = TP_AND, .a = &p1, .b = &p2};
		struct tp either = {.kind = TP_OR, .a = &p1, .b = &p2};
		assert_int_equal(vgq_tpred(&both, b), c[k].prec && c[k].overlap);
		assert_int_equal(vgq_tpred(&either, b), c[k].prec || c[k].overlap);
	}
}

/* ---- 2. end to end ---- */

static void test_precede(void **state)
{
	struct db *d = *state;
	/* A.e <= B.b: J1 and J4 end at 20 where J2 begins */
	static const char *const jj[] = {"1,2@10", "1,5@10", "2,5@20", "3,5@15",
	                                 "4,2@10", "4,5@10", NULL};
	expect(d, JOBS2 "retrieve (a = A.job, b = B.job) valid at begin of A when A precede B",
	       NULL, jj);
	/* events at the same instant precede each other */
	static const char *const mm[] = {"1,3@20", "1,4@20", "1,5@20", "2,1@10", "2,3@10", "2,4@10",
	                                 "2,5@10", "3,5@30", "4,1@20", "4,3@20", "4,5@20", NULL};
	expect(d, MARKS2 "retrieve (m = M.n, n = N.n) valid at M where M.n != N.n when M precede N",
	       NULL, mm);
	/* an interval precedes an event at its end (J5's, open, included) */
	static const char *const jm[] = {"1,1@20", "4,1@20", "1,3@30", "2,3@30", "3,3@30",
	                                 "4,3@30", "1,4@20", "4,4@20", "1,5@50", "2,5@50",
	                                 "3,5@50", "4,5@50", "5,5@50", NULL};
	expect(d, JM "retrieve (a = A.job, m = M.n) valid at M when A precede M", NULL, jm);
	/* an event precedes an interval beginning at it */
	static const char *const mj[] = {"1,2@20", "1,5@20", "2,1@10", "2,2@10", "2,3@10", "2,4@10",
	                                 "2,5@10", "3,5@30", "4,2@20", "4,5@20", NULL};
	expect(d, JM "retrieve (m = M.n, a = A.job) valid at M when M precede A", NULL, mj);
	/* existential B: the semi-join keeps A if some B ends at or before A's begin */
	static const char *const semi_max[] = {"2@20", "5@40", NULL};
	expect(d, JOBS2 "retrieve (a = A.job) valid at begin of A when B precede A", "semi-join",
	       semi_max);
	/* existential B after A: some B begins at or after A's end */
	static const char *const semi_min[] = {"1@10", "2@20", "3@15", "4@10", NULL};
	expect(d, JOBS2 "retrieve (a = A.job) valid at begin of A when A precede B", "semi-join",
	       semi_min);
	/* keyed, on the columns (exec_semijoin_cols.c) and, with the key an expression, on
	 * the general path: a time equal to the other side's counts (J1, J4 end at 20 where
	 * M1, M4 are; J5's open end is M5's 50) */
	static const char *const key_min[] = {"1@20", "3@30", "4@20", "5@50", NULL};
	expect(d, JM "retrieve (m = M.n) valid at M where A.job = M.n when A precede M",
	       "semi-join", key_min);
	expect(d, JM "retrieve (m = M.n) valid at M where A.job + 0 = M.n when A precede M",
	       "semi-join", key_min);
	static const char *const key_max[] = {"1@10", "3@15", "4@10", "5@40", NULL};
	expect(d, JM "retrieve (a = A.job) valid at begin of A where M.n = A.job when A precede M",
	       "semi-join", key_max);
	expect(d,
	       JM "retrieve (a = A.job) valid at begin of A where M.n = A.job + 0 when A precede M",
	       "semi-join", key_max);
	/* the key alone: every mark has its job */
	static const char *const key_only[] = {"1@20", "2@10", "3@30", "4@20", "5@50", NULL};
	expect(d, JM "retrieve (m = M.n) valid at M where A.job = M.n", "semi-join", key_only);
	/* precede on an intersection: J1 and J2 share nothing; J1 and J3 share [15,20) */
	static const char *const none[] = {NULL};
	expect(d,
	       JOBS2 "range of M is Mark retrieve (m = M.n) valid at M "
	             "where A.job = 1 and B.job = 2 when (A overlap B) precede M",
	       NULL, none);
	static const char *const inter[] = {"1@20", "3@30", "4@20", "5@50", NULL};
	expect(d,
	       JOBS2 "range of M is Mark retrieve (m = M.n) valid at M "
	             "where A.job = 1 and B.job = 3 when (A overlap B) precede M",
	       NULL, inter);
}

/* Does vgq_explain's plan of `text` hold `what`? */
static bool plan_has(struct db *d, const char *text, const char *what)
{
	struct tquel_query *q = tquel_parse("<test>", text, strlen(text));
	struct vgq_options o = {.tick_ns = 1};
	struct vgq_session *s = vgq_session_new(d->db, &o);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(vgq_explain(s, q, f, stderr), 0);
	fclose(f);
	vgq_session_free(s);
	tquel_free(q);
	bool has = strstr(buf, what) != NULL;
	free(buf);
	return has;
}

/* The semi-join's reduction to one time per key (a least end, a greatest begin) and its
 * result made from the probed tuples (exec_semijoin_result.c), at its edges: a key whose
 * only right tuples a selection removes, equal times in both directions, no key, and an
 * overlap, which no one time per key decides: no semi-join. */
static void test_semijoin_reduction(void **state)
{
	struct db *d = *state;
	/* J3's only mark (M3) selected away: A3 has no group; the others as without it */
	static const char *const no_group[] = {"1@10", "4@10", "5@40", NULL};
	expect(d,
	       JM "retrieve (a = A.job) valid at begin of A where M.n = A.job and M.n != 3 "
	          "when A precede M",
	       "greatest begin of M per key", no_group);
	/* least end: M1 and M4 at 20, J1 and J4 ending there (equal times count); M2 at 10
	 * before J2 begins, M3 at 30 after J3; M5's job ends with it (50) */
	static const char *const least[] = {"1@20", "4@20", "5@50", NULL};
	expect(d,
	       JM "retrieve (m = M.n) valid at M where A.job = M.n and A.job != 3 "
	          "when A precede M",
	       "least end of A per key", least);
	/* greatest begin, the other way: M at or before the end of its job (J1's and J4's
	 * at theirs, J5's open end at M5's 50; M3 after J3's 25) */
	static const char *const greatest[] = {"1@20", "2@10", "4@20", "5@50", NULL};
	expect(d, JM "retrieve (m = M.n) valid at M where A.job = M.n when M precede end of A",
	       "greatest begin of end of A per key", greatest);
	/* no key: one group, the least end of every job (20) against each mark */
	static const char *const one_group[] = {"1@20", "3@30", "4@20", "5@50", NULL};
	expect(d, JM "retrieve (m = M.n) valid at M when A precede M", "least end of A", one_group);
	/* overlap: no semi-join; marks inside some job's [begin, end) */
	static const char *const overlap[] = {"1@20", "2@10", "4@20", NULL};
	const char *ov = JM "retrieve (m = M.n) valid at M when M overlap A";
	expect(d, ov, NULL, overlap);
	assert_false(plan_has(d, ov, "semi-join"));
	const char *ov_key = JM "retrieve (m = M.n) valid at M where A.job = M.n when M overlap A";
	static const char *const none[] = {NULL};
	expect(d, ov_key, NULL, none);
	assert_false(plan_has(d, ov_key, "semi-join"));
}

static void test_overlap_equal(void **state)
{
	struct db *d = *state;
	/* an event at b overlaps [b,e), at e does not; M5 at J5's (open) end does not */
	static const char *const mo[] = {"1,2@20", "1,3@20", "2,1@10", "2,4@10",
	                                 "4,2@20", "4,3@20", NULL};
	expect(d, JM "retrieve (m = M.n, a = A.job) valid at M when M overlap A", NULL, mo);
	/* meeting intervals do not overlap: the default valid time is the intersection */
	static const char *const jo[] = {"1,3@15-20", "2,3@20-25", "3,1@15-20",
	                                 "3,2@20-25", "1,4@10-20", "4,1@10-20",
	                                 "3,4@15-20", "4,3@15-20", NULL};
	expect(d, JOBS2 "retrieve (a = A.job, b = B.job) where A.job != B.job when A overlap B",
	       NULL, jo);
	static const char *const je[] = {"1,4@10-20", NULL};
	expect(d, JOBS2 "retrieve (a = A.job, b = B.job) where A.job < B.job when A equal B", NULL,
	       je);
	static const char *const me[] = {"1,4@20", NULL};
	expect(d, MARKS2 "retrieve (m = M.n, n = N.n) valid at M where M.n < N.n when M equal N",
	       NULL, me);
	static const char *const none[] = {NULL};
	expect(d, JM "retrieve (m = M.n) valid at M when M equal A", NULL, none);
}

static void test_begin_end_extend(void **state)
{
	struct db *d = *state;
	static const char *const ends[] = {"1,1@20", "1,4@20", "4,1@20", "4,4@20",
	                                   "2,3@30", "5,5@50", NULL};
	expect(d, JM "retrieve (a = A.job, m = M.n) valid at M when end of A equal M", NULL, ends);
	static const char *const begins[] = {"1,2@10", "4,2@10", "2,1@20", "2,4@20", NULL};
	expect(d, JM "retrieve (a = A.job, m = M.n) valid at M when begin of A equal M", NULL,
	       begins);
	/* an interval holds its begin, not its end */
	static const char *const all[] = {"1@10-20", "2@20-30", "3@15-25",
	                                  "4@10-20", "5@40-50", NULL};
	expect(d, "range of A is Job retrieve (a = A.job) when begin of A overlap A", NULL, all);
	static const char *const none[] = {NULL};
	expect(d, "range of A is Job retrieve (a = A.job) when end of A overlap A", NULL, none);
	/* M extend A is the event at M when A ends there, an interval when later, nothing
	 * when earlier */
	static const char *const ext[] = {"1,1@20", "1,4@20", "4,1@20", "4,4@20",
	                                  "3,2@30", "5,5@50", NULL};
	expect(d, JM "retrieve (m = M.n, a = A.job) valid at M when (M extend A) equal M", NULL,
	       ext);
	/* valid from an extend: J1 extend Jn from 10 to n's end; J5 extend J1..J4 runs
	 * backwards: nothing, no tuple */
	static const char *const span[] = {"1,1@10-20", "1,2@10-30", "1,3@10-25", "1,4@10-20",
	                                   "1,5@10-50", "5,5@40-50", NULL};
	expect(d,
	       JOBS2 "retrieve (a = A.job, b = B.job) valid from begin of (A extend B) "
	             "to end of (A extend B) where A.job = 1 or A.job = 5",
	       NULL, span);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_evaluator),
	    cmocka_unit_test(test_intervals),
	    cmocka_unit_test_setup_teardown(test_precede, setup_db, teardown_db),
	    cmocka_unit_test_setup_teardown(test_semijoin_reduction, setup_db, teardown_db),
	    cmocka_unit_test_setup_teardown(test_overlap_equal, setup_db, teardown_db),
	    cmocka_unit_test_setup_teardown(test_begin_end_extend, setup_db, teardown_db),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
