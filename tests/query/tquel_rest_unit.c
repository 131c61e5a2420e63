/* The parts of TQuel added after the first engine (docs/tquel.md): retrieve unique,
 * V.all, temporal constants, end to end on the trace of tests/query/jobs_fixture.h, every answer
 * worked out by hand here and checked through the engine and through `vigil query`.
 *
 *   Job (interval): J1 [10,20)  J2 [20,30)  J3 [15,25)  J4 [10,20)  J5 [40,50) open
 *   Mark (event):   M1 @20  M2 @10  M3 @30  M4 @20  M5 @50 */
#define _GNU_SOURCE
#include "jobs_fixture.h"

/* `text` must fail to bind with an error containing `want`. */
static void expect_error(struct db *d, const char *text, const char *want)
{
	struct tquel_query *q = tquel_parse("<test>", text, strlen(text));
	assert_int_equal(q->nerrors, 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct vgq_options o = {.tick_ns = 1};
	struct vgq_session *s = vgq_session_new(d->db, &o);
	static struct answer a;
	assert_int_not_equal(vgq_run(s, q, collect, &a, f), 0);
	vgq_session_free(s);
	fclose(f);
	if (!strstr(buf, want))
		fail_msg("%s: the error has no '%s':\n%s", text, want, buf);
	free(buf);
	tquel_free(q);
}

#define JOB "range of A is Job "

static void test_unique(void **state)
{
	struct db *d = *state;
	/* every job has k = 1: a set keeps J1 and J4 (the same tuple) once, no more */
	static const char *const plain[] = {"1@10-20", "1@15-25", "1@20-30", "1@40-50", NULL};
	expect(d, JOB "retrieve (k = A.job / A.job)", NULL, plain);
	/* unique coalesces: [10,20) [15,25) [20,30) overlap or meet: [10,30); [40,50) alone */
	static const char *const one[] = {"1@10-30", "1@40-50", NULL};
	expect(d, JOB "retrieve unique (k = A.job / A.job)", "coalesced (unique)", one);
	/* per value: k = job / 3 is 0 for J1 J2 ([10,20) [20,30) meet: [10,30)), 1 for J3 J4
	 * J5 ([15,25) and [10,20) overlap: [10,25); [40,50) apart) */
	static const char *const split[] = {"0@10-30", "1@10-25", "1@40-50", NULL};
	expect(d, JOB "retrieve unique into K (k = A.job / 3)", NULL, split);
	/* the coalesced result is a relation like another */
	static const char *const ranged[] = {"0,5@10-30", "1,15@10-25", "1,15@40-50", NULL};
	expect(d,
	       JOB "retrieve unique into K (k = A.job / 3) range of R is K "
	           "retrieve (k = R.k, len = R.k * 10 + 5)",
	       NULL, ranged);
	/* events are not coalesced: value-equivalent events at other instants stay apart */
	static const char *const marks[] = {"1@10", "1@20", "1@30", "1@50", NULL};
	expect(d, "range of M is Mark retrieve unique (k = M.n / M.n) valid at M", NULL, marks);
	/* unique after a valid clause: J1..J4 from their begin to J2's end */
	static const char *const valid[] = {"1@10-30", NULL};
	expect(d,
	       JOB "range of B is Job retrieve unique (k = A.job / A.job) valid from A to B "
	           "where B.job = 2 and A.job != 5",
	       NULL, valid);
}

static void test_all(void **state)
{
	struct db *d = *state;
	/* Job's attributes: job; Mark's: n */
	static const char *const jobs[] = {"1@10-20", "2@20-30", NULL};
	expect(d, JOB "retrieve (A.all) where A.job < 3", NULL, jobs);
	/* in order, next to other targets: M.all then A.all (n, job) */
	static const char *const mo[] = {"1,2,7@20", "1,3,7@20", "2,1,7@10", "2,4,7@10",
	                                 "4,2,7@20", "4,3,7@20", NULL};
	expect(d,
	       "range of M is Mark " JOB
	       "retrieve (M.all, A.all, seven = 7) valid at M when M overlap A",
	       NULL, mo);
	/* the names come from the relation: a later statement ranges over them */
	static const char *const again[] = {"3@15-25", NULL};
	expect(d, JOB "retrieve into J (A.all) range of R is J retrieve (R.job) where R.job = 3",
	       NULL, again);
	expect_error(d, JOB "retrieve (A.all, job = 1)", "two result attributes named 'job'");
	expect_error(d, JOB "range of B is Job retrieve (A.all, B.all)",
	             "V.all names every attribute of V");
	expect_error(d, JOB "retrieve (X.all)", "no tuple variable 'X'");
}

/* BASE is 2023-11-14 22:13:20 UTC; T(20) is the date of BASE + 20 ns */
#define T(ns) "\"2023-11-14 22:13:20.0000000" #ns "\""

static void test_constants(void **state)
{
	struct db *d = *state;
	/* "now" is the trace's last event, 50: J5, open, ends there (valid until now) */
	static const char *const until_now[] = {"5@40-50", NULL};
	expect(d, JOB "retrieve (a = A.job) when end of A equal \"now\"", NULL, until_now);
	/* an open interval ends at now and so does not hold it */
	static const char *const none[] = {NULL};
	expect(d, JOB "retrieve (a = A.job) when A overlap \"Now\"", NULL, none);
	static const char *const at_now[] = {"3@50", NULL};
	expect(d, "range of M is Mark retrieve (m = M.n) valid at \"now\" where M.n = 3", NULL,
	       at_now);
	static const char *const mark_now[] = {"5@50", NULL};
	expect(d, "range of M is Mark retrieve (m = M.n) valid at M when M equal \"now\"", NULL,
	       mark_now);
	/* dates: the jobs holding instant 20 ([20,30) holds it, [10,20) does not) */
	static const char *const at20[] = {"2@20-30", "3@15-25", NULL};
	expect(d, JOB "retrieve (a = A.job) when A overlap " T(20), NULL, at20);
	static const char *const before20[] = {"1@10-20", "4@10-20", NULL};
	expect(d, JOB "retrieve (a = A.job) when A precede " T(20), NULL, before20);
	/* the same date with an offset: 23:13:20 at +01:00 is 22:13:20 UTC */
	expect(d, JOB "retrieve (a = A.job) when A precede \"2023-11-14T23:13:20.000000020+01:00\"",
	       NULL, before20);
	/* valid from a date: from 15 to each job's end, when that is later */
	static const char *const from15[] = {"1@15-20", "2@15-30", "3@15-25",
	                                     "4@15-20", "5@15-50", NULL};
	expect(d, JOB "retrieve (a = A.job) valid from " T(15) " to A", NULL, from15);
	/* "beginning" precedes everything, "forever" follows everything */
	static const char *const all[] = {"1@10-20", "2@20-30", "3@15-25",
	                                  "4@10-20", "5@40-50", NULL};
	expect(d, JOB "retrieve (a = A.job) when \"beginning\" precede A and A precede \"forever\"",
	       NULL, all);
	expect(d, JOB "retrieve (a = A.job) when A precede \"beginning\" or \"forever\" precede A",
	       NULL, none);
	static const char *const forever[] = {"1@10-7523372036854775807", NULL};
	expect(d, JOB "retrieve (a = A.job) valid from A to \"forever\" where A.job = 1", NULL,
	       forever);
}

#define JOBS2 "range of A is Job range of B is Job "

/* Time line 10..50 (the last event), so aggregates hold up to 51. Valid at each instant:
 *   [10,15) J1 J4   [15,20) J1 J3 J4   [20,25) J2 J3   [25,30) J2   [30,40) -   [40,50) J5 */
static void test_aggregates(void **state)
{
	struct db *d = *state;
	static const char *const any[] = {"1@10-30", "0@30-40", "1@40-50", "0@50-51", NULL};
	expect(d, JOB "retrieve (n = any(A.job))", NULL, any);
	/* {1,4}: mean 2.5, deviations 1.5; one job: 0 */
	static const char *const sd[] = {"1.5@10-20", "0.0@20-30", "0.0@40-50", NULL};
	expect(d, JOB "retrieve (s = stdev(A.job where A.job != 3))", NULL, sd);
	/* for ever: J1 and J4 both begin at 10 (first takes the smaller value); last is the
	 * latest begun: J4 (the larger at 10), J3 at 15, J2 at 20, J5 at 40 */
	static const char *const first[] = {"1@10-51", NULL};
	expect(d, JOB "retrieve (f = first(A.job for ever))", NULL, first);
	static const char *const last[] = {"4@10-15", "3@15-20", "2@20-40", "5@40-51", NULL};
	expect(d, JOB "retrieve (l = last(A.job for ever))", NULL, last);
	/* each instant: the first of those valid now */
	static const char *const first_now[] = {"1@10-20", "3@20-25", "2@25-30", "5@40-50", NULL};
	expect(d, JOB "retrieve (f = first(A.job))", NULL, first_now);
	/* rate: (last - first) per second between their beginnings; for ever from 15 on:
	 * J1 (1 at 10) to J3 (3 at 15): 2 / 5 ns = 4e8 per second; J2 (2 at 20): 1 / 10 ns;
	 * J5 (5 at 40): 4 / 30 ns. Before 15 both began at 10: no value */
	static const char *const rate[] = {"400000000.0@15-20", "100000000.0@20-40",
	                                   "133333333.33333334@40-51", NULL};
	expect(d, JOB "retrieve (r = rate(A.job for ever))", NULL, rate);
	/* avgti for ever: begins {10,10} 0; {10,10,15} 5 ns / 2; {10,10,15,20} 10 ns / 3;
	 * with 40: 30 ns / 4 (in seconds) */
	static const char *const avgti[] = {"0.0@10-15", "2.5e-09@15-20",
	                                    "3.3333333333333334e-09@20-40", "7.5e-09@40-51", NULL};
	expect(d, JOB "retrieve (t = avgti(A.job for ever))", NULL, avgti);
	/* varts: spacings {0,5}: mean 2.5, deviation 2.5: 1; {0,5,5}: mean 10/3, deviation
	 * sqrt(50/9): 1/sqrt(2); {0,5,5,20}: mean 7.5, deviation sqrt(225/4) = 7.5: 1; at 10
	 * one spacing of 0: no value */
	static const char *const varts[] = {"1.0@15-20", "0.7071067811865476@20-40", "1.0@40-51",
	                                    NULL};
	expect(d, JOB "retrieve (v = varts(A.job for ever))", NULL, varts);
	/* a moving window of 10 ns: a job counts until 9 ns after its end (e + 9):
	 * J1 J4 [10,29) J3 [15,34) J2 [20,39) J5 [40,59), cut at 51 */
	static const char *const moving[] = {"2@10-15", "3@15-20", "4@20-29", "2@29-34",
	                                     "1@34-39", "0@39-40", "1@40-51", NULL};
	expect(d, JOB "retrieve (n = count(A.job for each 10 ns))", NULL, moving);
	/* for each 1 ns is for each instant */
	static const char *const instant[] = {"2@10-15", "3@15-20", "2@20-25", "1@25-30",
	                                      "0@30-40", "1@40-50", "0@50-51", NULL};
	expect(d, JOB "retrieve (n = count(A.job for each 1 ns))", NULL, instant);
	/* in a where clause: jobs valid while the sum of the jobs valid in the last 5 ns
	 * (until e + 4) is at least 8: J1 J4 J3 on [15,20): 8; with J2 on [20,24): 10; then
	 * J3 J2: 5. The aggregate's pieces cut the default valid time */
	static const char *const where[] = {"1@15-20", "4@15-20", "3@15-20",
	                                    "3@20-24", "2@20-24", NULL};
	expect(d, JOBS2 "retrieve (a = A.job) where sum(B.job for each 5 ns) >= 8", NULL, where);
}

/* An aggregate in a valid or when clause is the valid time of its value: its pieces.
 * first(A.job), each instant: [10,20) 1, [20,25) 3, [25,30) 2, [40,50) 5 (none between) */
static void test_aggregates_in_time(void **state)
{
	struct db *d = *state;
	/* marks at 10 and 20 fall in a piece; 30 and 50 in none */
	static const char *const marks[] = {"1@20", "2@10", "4@20", NULL};
	expect(d,
	       "range of M is Mark " JOB
	       "retrieve (m = M.n) valid at M when M overlap first(A.job)",
	       NULL, marks);
	/* valid from each piece's begin to J2's end (30): the pieces beginning before 30 */
	static const char *const from[] = {"2@10-30", "2@20-30", "2@25-30", NULL};
	expect(d,
	       JOB
	       "retrieve (a = A.job) valid from begin of first(A.job) to end of A where A.job = 2",
	       NULL, from);
	/* correlated: each job's own count (1 over its interval, 0 around it) has a piece
	 * equal to the job's interval */
	static const char *const own[] = {"1@10-20", "2@20-30", "3@15-25",
	                                  "4@10-20", "5@40-50", NULL};
	expect(d, JOB "retrieve (a = A.job) when A equal count(A.job by A.job)", NULL, own);
	/* the piece of count(A.job) ([10,15) 2, [15,20) 3, [20,25) 2, [25,30) 1, [30,40) 0,
	 * [40,50) 1, [50,51) 0) that begins with each job: the default valid time is the
	 * overlap of the job and the pieces */
	static const char *const begins[] = {"1@10-15", "4@10-15", "3@15-20",
	                                     "2@20-25", "5@40-50", NULL};
	expect(d, JOBS2 "retrieve (b = B.job) when begin of count(A.job) equal begin of B", NULL,
	       begins);
	expect_error(
	    d, JOB "range of B is Job retrieve (n = count(A.job when A overlap count(B.job)))",
	    "an aggregate cannot be inside another aggregate");
	expect_error(d, JOB "retrieve (a = A.job) valid at count(A.job)",
	             "valid at needs an event");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_unique, setup_db, teardown_db),
	    cmocka_unit_test_setup_teardown(test_all, setup_db, teardown_db),
	    cmocka_unit_test_setup_teardown(test_constants, setup_db, teardown_db),
	    cmocka_unit_test_setup_teardown(test_aggregates, setup_db, teardown_db),
	    cmocka_unit_test_setup_teardown(test_aggregates_in_time, setup_db, teardown_db),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
