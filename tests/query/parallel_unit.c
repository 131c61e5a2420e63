/* Parallel execution (docs/query.md, "Threads"): the same statements evaluated at 1, 2, 3
 * and 4 threads give the same result relations, tuple for tuple in the same order, and
 * the same errors. The trace is built byte by byte (tests/unit/reader_tracegen.h) with
 * enough tuples that every operator's input is cut into many morsels: Job intervals
 * (short ones, and a few long ones that stay open across many morsels of a sweep), Mark
 * events with a key and a double. The statements cover a selective scan, a hash join, a
 * sweep join with and without keys, a semi-join (precede), a product, aggregates (a
 * double summed: the summation order must not change; one large group whose sweep is
 * cut into time ranges), retrieve unique, semi-joins (a precede's least end and greatest
 * begin, an existential key), a sweep over an input out of time order (sorted in
 * pieces), and a statement over the limit on intermediate tuples.
 *
 * With `--spill BYTES` (VIGIL_QUERY_MEMORY, read once: a process of its own) the
 * statements of spill_statements run past the budget instead: hash joins and aggregates
 * partitioned into spill files, their partitions shared among the workers; at 2 to 4
 * threads the same results as at 1, and the same aggregates' relations tuple for tuple
 * (a spilled aggregate's groups lie in them partition by partition: appended in any
 * other order, they differ), spilled at every thread count, and at 2 to 4 on more than
 * one worker (explain --analyze's threads=).
 *
 * Built twice: against vigil_query (under ASan in the sanitize build), and as
 * test_query_parallel_tsan with the executor's files compiled under ThreadSanitizer. */
#define _GNU_SOURCE /* open_memstream */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_trace.h"
#include "query/engine.h"
#include "query/engine_internal.h" /* the session's relations: the aggregates' */
#include "query/output.h"
#include "relations/relation.h"
#include "tquel/tquel.h"

/* Fewer under ThreadSanitizer (ten times slower): still hundreds of morsels. */
#ifndef PARALLEL_SCALE
#define PARALLEL_SCALE 3
#endif
#define JOBS (2000 * PARALLEL_SCALE)
#define MARKS (3000 * PARALLEL_SCALE)
#define SPILL_SCALE 3 /* --spill: so that each operator's state passes one budget */

static int failures;

static void fail(const char *what)
{
	fprintf(stderr, "query.parallel: %s\n", what);
	failures++;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
	return test_xorshift64(&rng);
}

/* A job's number; a mark's key and weight. */
static void fields(struct tg_stream *s, const struct jt_event *e)
{
	tg_u32(s, e->n);
	if (e->id == MARK)
		tg_f64(s, e->w);
}

/* Jobs of 1..200 ticks (every 97th: 20,000; every 89th from the 5th: none, an empty
 * interval), marks keyed 0..499 with a weight. */
static char *make_trace(size_t jobs, size_t marks)
{
	char *root;
	struct tg_image *img =
	    jt_image(&root, "uint32_t job;", "uint32_t job;", "uint32_t n; double w;");
	size_t n = 2 * jobs + marks, k = 0;
	struct jt_event *ev = calloc(n, sizeof *ev);
	for (uint32_t j = 0; j < jobs; j++) {
		uint64_t b = 1000 + next_rand() % 100000;
		uint64_t len = j % 97 == 0 ? 20000 : j % 89 == 5 ? 0 : 1 + next_rand() % 200;
		ev[k++] = (struct jt_event){b, JOB_BEGIN, j, 0, 0};
		ev[k++] = (struct jt_event){b + len, JOB_END, j, 0, 0};
	}
	for (uint32_t m = 0; m < marks; m++)
		ev[k++] = (struct jt_event){1000 + next_rand() % 120000, MARK,
		                            (uint32_t)(next_rand() % 500), 0,
		                            (double)(next_rand() % 1000000) / 7.0 + 1e-9 * m};
	jt_write(img, 42, ev, n, fields);
	tg_image_free(img);
	free(ev);
	return root;
}

/* Every result of a run, kept to compare (the session owns the relations). */
struct results {
	const struct vgq_relation *r[16];
	size_t n;
};

static int keep(void *ctx, const struct vgq_relation *r)
{
	struct results *x = ctx;
	if (x->n < 16)
		x->r[x->n++] = r;
	return 0;
}

/* A relation as `vigil query --format csv` writes it (doubles as the shortest text that
 * reads back as the same number): malloc'd. */
static char *as_csv(const struct vgq_relation *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct vgq_output_opts o = {0};
	if (!f || vgq_write_relation(f, r, VGQ_FORMAT_CSV, &o) < 0)
		fail("cannot write a relation as CSV");
	if (f)
		fclose(f);
	return text;
}

/* Tuple for tuple, in order: times and every value. */
static bool same_relation(const struct vgq_relation *a, const struct vgq_relation *b)
{
	char *x = as_csv(a), *y = as_csv(b);
	bool same = x && y && !strcmp(x, y);
	free(x);
	free(y);
	return same;
}

static const char *const statements[] = {
    /* a selective scan */
    "range of M is Mark retrieve (M.n, M.w) where M.n = 7 or M.n > 480",
    /* a hash join on keys, with a residual condition */
    "range of M is Mark range of N is Mark retrieve (a = M.w, b = N.w) "
    "where M.n = N.n and M.w < N.w",
    /* sweep joins: keys and plain overlap, long jobs open across morsels */
    "range of J is Job range of M is Mark retrieve (J.job, M.n) when J overlap M",
    "range of J is Job range of K is Job retrieve (a = J.job, b = K.job) "
    "where J.job < K.job when J overlap K",
    /* a side open to "forever": a morsel's look back for the items still open (b plus
     * the longest item's length) must not overflow */
    "range of J is Job range of M is Mark retrieve (J.job, M.n) where J.job < 20 and "
    "M.n < 40 when (J extend \"forever\") overlap M",
    /* a semi-join on a precede (the paper's shape) */
    "range of J is Job range of M is Mark retrieve (J.job) valid at end of J "
    "where M.n = J.job when M precede end of J",
    /* a product with a small side */
    "range of J is Job range of M is Mark retrieve (J.job, M.n) "
    "where J.job < 40 and M.n < 3 and J.job + M.n = 41",
    /* aggregates: doubles summed, by groups, per instant and for ever */
    "range of M is Mark retrieve (M.n, s = sum(M.w by M.n for ever), c = count(M.n by M.n))",
    "range of J is Job retrieve (n = count(J.job), a = avg(J.job))",
    /* retrieve unique coalesces intervals */
    "range of J is Job range of M is Mark retrieve unique (M.n) when J overlap M",
    /* one large group swept in time ranges: moving windows, doubles summed (the order of
     * summation is the contributions', wherever a range starts), for ever */
    "range of M is Mark retrieve (s = sum(M.w for each 2 us), a = avg(M.w for each 4 us), "
    "x = max(M.w for each 1 us), c = count(M.n for each 3 us))",
    "range of J is Job retrieve (s = sum(J.job), u = countU(J.job))",
    /* semi-joins: an existential key, the greatest begin of a precede */
    "range of J is Job range of M is Mark retrieve (J.job) where M.n = J.job",
    "range of J is Job range of M is Mark retrieve (J.job) where M.n = J.job when J precede M",
    /* a sweep whose input is not in time order (sorted by the workers) */
    "range of J is Job range of M is Mark retrieve (J.job, M.n) when end of J overlap M",
    /* a long run of rows at one valid time: ordered by values evaluated once per row
     * (result.c's sort_run at one thread, the comparator's merges at more) */
    "range of J is Job range of M is Mark retrieve (M.w, M.n) valid at end of J "
    "where J.job = 5 and M.n < 300",
    /* a sweep join keyed by an equality among its conditions (a hash per item) */
    "range of J is Job range of M is Mark retrieve (J.job, M.n, M.w) where M.n = J.job "
    "when J overlap M",
    /* sweeps over an empty side: plain, and keyed by integer attributes */
    "range of J is Job range of M is Mark retrieve (J.job, M.n) where J.job > 4000000000 "
    "when J overlap M",
    "range of J is Job range of M is Mark retrieve (J.job, M.n) where M.n > 4000000000 "
    "and M.n = J.job when J overlap M",
};

/* Statements that mean the same, the first through a sweep join over events at
 * "forever" (the end of an interval extended to it: an item's end one past it would
 * overflow), the second its plain form; the default valid time (J and K's intersection)
 * keeps only the pairs that overlap. */
static const char *const same_pairs[][2] = {
    {"range of J is Job range of K is Job retrieve (a = J.job, b = K.job) "
     "where J.job < K.job and K.job < 300 "
     "when (end of (J extend \"forever\")) overlap (end of (K extend \"forever\"))",
     "range of J is Job range of K is Job retrieve (a = J.job, b = K.job) "
     "where J.job < K.job and K.job < 300 when J overlap K"},
    /* the keyed sweep (pairs of unequal key hashes skipped) against the same condition
     * in a form that is no key (every pair evaluated) */
    {"range of J is Job range of M is Mark retrieve (J.job, M.n, M.w) where M.n = J.job "
     "when J overlap M",
     "range of J is Job range of M is Mark retrieve (J.job, M.n, M.w) "
     "where not (M.n != J.job) when J overlap M"},
    /* the plain sweep (pairs made without the evaluator) against a condition always
     * true that the evaluator decides per pair */
    {"range of J is Job range of M is Mark retrieve (J.job, M.n) when J overlap M",
     "range of J is Job range of M is Mark retrieve (J.job, M.n) where J.job + M.n >= 0 "
     "when J overlap M"},
    /* intervals that meet (J's end is K's begin) do not overlap; equal ends do */
    {"range of J is Job range of K is Job retrieve (a = J.job, b = K.job) "
     "where J.job < K.job and K.job < 400 when J overlap K",
     "range of J is Job range of K is Job retrieve (a = J.job, b = K.job) "
     "where J.job < K.job and K.job < 400 "
     "when not (J precede K) and not (K precede J)"},
    /* keys read from integer columns (the items' keys their values) with nulls (a
     * division by zero in results ranged over): a null key matches nothing */
    {"range of J is Job retrieve into H (k = J.job / (J.job - J.job / 3 * 3)) "
     "retrieve into G (k = J.job / (J.job - J.job / 5 * 5)) "
     "range of H is H range of G is G retrieve (a = H.k, b = G.k) where H.k = G.k "
     "when H overlap G",
     "range of J is Job retrieve into H (k = J.job / (J.job - J.job / 3 * 3)) "
     "retrieve into G (k = J.job / (J.job - J.job / 5 * 5)) "
     "range of H is H range of G is G retrieve (a = H.k, b = G.k) "
     "where not (H.k != G.k) when H overlap G"},
    /* results made as the bindings are (result_direct.c: targets read from integer
     * columns) against the same targets evaluated (result.c): a sweep's pairs in order of
     * valid time with many equal begins (ties, ordered by end then values); duplicates
     * (one mark's time and number from every job it overlaps); rows out of time order
     * (valid at the end of J: sorted, runs of equal times across morsels); an event
     * result; a keyed sweep */
    {"range of J is Job range of M is Mark retrieve (a = J.job, b = M.n) when J overlap M",
     "range of J is Job range of M is Mark retrieve (a = J.job + 0, b = M.n + 0) "
     "when J overlap M"},
    {"range of J is Job range of M is Mark retrieve (n = M.n) when J overlap M",
     "range of J is Job range of M is Mark retrieve (n = M.n + 0) when J overlap M"},
    {"range of J is Job range of K is Job retrieve (a = K.job) valid from begin of J to end "
     "of K where J.job < 500 when J overlap K",
     "range of J is Job range of K is Job retrieve (a = K.job + 0) valid from begin of J to "
     "end of K where J.job < 500 when J overlap K"},
    {"range of J is Job range of M is Mark retrieve (a = J.job / 50, b = M.n / 100) "
     "valid at end of J when J overlap M",
     "range of J is Job range of M is Mark retrieve (a = J.job / 50 + 0, b = M.n / 100 + 0) "
     "valid at end of J when J overlap M"},
    {"range of J is Job range of M is Mark retrieve into D (a = J.job / 50, b = M.n / 100) "
     "valid at end of J when J overlap M "
     "range of D is D retrieve (D.a, D.b) valid at begin of D",
     "range of J is Job range of M is Mark retrieve into D (a = J.job / 50, b = M.n / 100) "
     "valid at end of J when J overlap M "
     "range of D is D retrieve (a = D.a + 0, b = D.b + 0) valid at begin of D"},
    {"range of J is Job range of M is Mark retrieve (a = J.job, b = M.n) where M.n = J.job "
     "when J overlap M",
     "range of J is Job range of M is Mark retrieve (a = J.job + 0, b = M.n + 0) "
     "where M.n = J.job when J overlap M"},
    /* a sweep's side read straight from its relation's columns (a whole scan in begin
     * order, every tuple an item: exec_sweepjoin.c's direct_side) against the same side's
     * items (a selection makes them): D, Job without its empty intervals, and Mark
     * (events), plain and keyed */
    {"range of J is Job retrieve into D (job = J.job) "
     "range of D is D range of M is Mark retrieve (D.job, M.n) when D overlap M",
     "range of J is Job retrieve into D (job = J.job) "
     "range of J is Job range of M is Mark retrieve (J.job, M.n) where J.job >= 0 and "
     "M.n >= 0 when J overlap M"},
    {"range of J is Job retrieve into D (job = J.job) "
     "range of D is D range of M is Mark retrieve (D.job, M.n) where M.n = D.job "
     "when D overlap M",
     "range of J is Job retrieve into D (job = J.job) "
     "range of J is Job range of M is Mark retrieve (J.job, M.n) where M.n = J.job and "
     "J.job >= 0 and M.n >= 0 when J overlap M"},
    /* Job has empty intervals: overlapping nothing, they have no items, so J is not read
     * from its columns (an empty J would otherwise pair with a K open at its begin) */
    {"range of J is Job range of K is Job retrieve (a = J.job + 0, b = K.job) valid at begin of J "
     "where K.job < 300 when J overlap K",
     "range of J is Job range of K is Job retrieve (a = J.job + 0, b = K.job) valid at begin of J "
     "where J.job >= 0 and K.job < 300 when J overlap K"},
};

/* Runs one statement at `threads`; its results into x (the session kept in *s, the
 * statements in *qp: the results' names are theirs). */
static size_t run(struct vgq_database *db, const char *text, unsigned threads, uint64_t limit,
                  struct vgq_session **s, struct tquel_query **qp, struct results *x)
{
	struct vgq_options o = {.tick_ns = 1000, .max_bindings = limit, .threads = threads};
	*s = vgq_session_new(db, &o);
	struct tquel_query *q = tquel_parse("parallel.tq", text, strlen(text));
	size_t rc = 1;
	if (q->nerrors) {
		fail("a statement does not parse:");
		tquel_print_errors(q, stderr);
	} else {
		/* errors to stderr: none are expected, but beyond the limit (one, kept aside) */
		FILE *errors = limit ? tmpfile() : stderr;
		rc = vgq_run(*s, q, keep, x, errors ? errors : stderr);
		if (limit && errors)
			fclose(errors);
	}
	*qp = q;
	return rc;
}

/* One valid time, so the order is the first attribute's (a double here), and more than
 * a short run of it. */
static bool ordered_by_first(const struct vgq_relation *r)
{
	if (r->ntuples <= 16 || r->nattrs < 1 || r->attrs[0].type != VGQ_DOUBLE)
		return false;
	for (size_t t = 1; t < r->ntuples; t++)
		if (r->from[t] != r->from[0] || r->cols[0].d[t - 1] > r->cols[0].d[t])
			return false;
	return true;
}

/* Past the budget (--spill): aggregates of many groups (doubles summed: the order of
 * adding is the contributions'), of a few large groups, and a hash join. */
static const char *const spill_statements[] = {
    "range of M is Mark retrieve (M.n, s = sum(M.w by M.n for ever), c = count(M.n by M.n))",
    "range of J is Job retrieve (J.job, a = avg(J.job by J.job / 7), x = max(J.job by J.job "
    "/ 300))",
    "range of J is Job range of K is Job retrieve (a = J.job + 0, b = K.job) valid at begin of J "
    "where J.job / 8 = K.job / 8",
    "range of M is Mark range of N is Mark retrieve (a = M.w + 0, b = N.n) valid at M "
    "where M.n = N.n",
};

/* The aggregates' relations of session s ("agg#N"), CSV one after another: malloc'd. */
static char *aggregates_csv(const struct vgq_session *s)
{
	char *all = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&all, &len);
	for (size_t i = 0; f && i < s->nowned; i++)
		if (!strncmp(s->owned[i]->name, "agg#", 4)) {
			char *one = as_csv(s->owned[i]);
			fprintf(f, "%s:\n%s", s->owned[i]->name, one ? one : "");
			free(one);
		}
	if (f)
		fclose(f);
	return all;
}

/* The most workers a spilled operator's partitions were shared among ("threads=N)  (spilled
 * to" in explain --analyze's lines). */
static unsigned spilled_workers(const char *analyzed)
{
	unsigned most = 0;
	for (const char *p = analyzed; p && (p = strstr(p, "threads=")); p++) {
		unsigned n;
		char tail[16];
		if (sscanf(p, "threads=%u)  (spille%15s", &n, tail) == 2 && n > most)
			most = n;
	}
	return most;
}

/* Each spill statement at 1 to 4 threads: the same result as at 1; where it spilled
 * there too, the same aggregates' relations (an aggregate that fits keeps its groups in
 * key order, a spilled one in its groups' hash order). The budget must spill two of them
 * at 1 thread and, at each of 2 to 4, share some spilled operator's partitions among
 * workers. */
static int spill_checks(struct vgq_database *db)
{
	size_t ns = sizeof spill_statements / sizeof *spill_statements, nspilled = 0;
	unsigned shared[5] = {0};
	for (size_t i = 0; i < ns; i++) {
		const char *text = spill_statements[i];
		char *ref = NULL, *aggs1 = NULL;
		uint32_t parts[5] = {0};
		unsigned workers[5] = {0};
		for (unsigned t = 1; t <= 4; t++) {
			struct results x = {0};
			char *analyzed = NULL;
			size_t alen = 0, nst = 0;
			FILE *an = open_memstream(&analyzed, &alen);
			struct vgq_options o = {.tick_ns = 1000, .threads = t};
			struct vgq_session *s = vgq_session_new(db, &o);
			vgq_session_analyze(s, an);
			struct tquel_query *q = tquel_parse("spill.tq", text, strlen(text));
			size_t rc = q->nerrors ? 1 : vgq_run(s, q, keep, &x, stderr);
			fclose(an);
			const struct vgq_stat *st = vgq_session_stats(s, &nst);
			parts[t] = nst ? st[nst - 1].spill_partitions : 0;
			workers[t] = parts[t] > 1 ? spilled_workers(analyzed) : 0;
			shared[t] += workers[t] > 1;
			char *aggs = aggregates_csv(s), *csv = x.n == 1 ? as_csv(x.r[0]) : NULL;
			if (rc || x.n != 1 || !csv || !x.r[0]->ntuples) {
				fprintf(stderr,
				        "query.parallel: at %u threads, under the budget:\n%s\n", t,
				        text);
				fail("a statement under the budget fails or is empty");
			} else if (t == 1) {
				ref = csv;
				aggs1 = aggs;
				csv = aggs = NULL;
			} else if (!ref || strcmp(ref, csv) ||
			           (parts[1] > 1 && parts[t] > 1 && strcmp(aggs1, aggs))) {
				fprintf(stderr, "query.parallel: at %u threads (%s):\n%s\n", t,
				        ref && !strcmp(ref, csv) ? "an aggregate's relation"
				                                 : "the result",
				        text);
				fail("the answers under the budget differ");
			}
			free(csv);
			free(aggs);
			free(analyzed);
			vgq_session_free(s);
			tquel_free(q);
		}
		nspilled += parts[1] > 1;
		printf("query.parallel: the same answers at 1-4 threads, spilled to %u/%u/%u/%u "
		       "partitions on %u/%u/%u/%u workers: %s\n",
		       parts[1], parts[2], parts[3], parts[4], workers[1] ? 1 : 0, workers[2],
		       workers[3], workers[4], text);
		free(ref);
		free(aggs1);
	}
	if (nspilled < 2)
		fail("fewer than two statements spilled at 1 thread (lower --spill)");
	for (unsigned t = 2; t <= 4; t++)
		if (!shared[t]) {
			fprintf(stderr, "query.parallel: at %u threads:\n", t);
			fail("no spilled operator's partitions were shared among workers");
		}
	return failures != 0;
}

int main(int argc, char **argv)
{
	bool spill = argc == 3 && !strcmp(argv[1], "--spill");
	if (spill) /* before the first statement reads it */
		setenv("VIGIL_QUERY_MEMORY", argv[2], 1);
	char *root =
	    spill ? make_trace(2000 * SPILL_SCALE, 3000 * SPILL_SCALE) : make_trace(JOBS, MARKS);
	char err[256];
	const char *paths[] = {root};
	struct vgt_trace *tr = vgt_open(paths, 1, err, sizeof err);
	if (!tr) {
		fprintf(stderr, "query.parallel: %s\n", err);
		return 1;
	}
	struct vgq_database *db = vgq_database_build(tr);
	if (spill) {
		int rc = spill_checks(db);
		vgq_database_free(db);
		vgt_close(tr);
		tg_rmtree(root);
		free(root);
		return rc;
	}
	size_t ns = sizeof statements / sizeof *statements, tuples = 0;
	for (size_t i = 0; i < ns; i++) {
		struct vgq_session *one;
		struct tquel_query *q1;
		struct results x1 = {0};
		if (run(db, statements[i], 1, 0, &one, &q1, &x1) || x1.n != 1) {
			fail("a statement fails at one thread:");
			fprintf(stderr, "%s\n", statements[i]);
			vgq_session_free(one);
			tquel_free(q1);
			continue;
		}
		tuples += x1.r[0]->ntuples;
		if (strstr(statements[i], "valid at end of J where J.job = 5") &&
		    !ordered_by_first(x1.r[0]))
			fail("a long run of rows at one valid time is not ordered by its values");
		for (unsigned t = 2; t <= 4; t++) {
			struct vgq_session *s;
			struct tquel_query *q;
			struct results x = {0};
			size_t rc = run(db, statements[i], t, 0, &s, &q, &x);
			if (rc || x.n != 1 || !same_relation(x1.r[0], x.r[0])) {
				fprintf(
				    stderr,
				    "query.parallel: at %u threads (%zu tuples, %zu at 1):\n%s\n",
				    t, x.n ? x.r[0]->ntuples : 0, x1.r[0]->ntuples, statements[i]);
				fail("the answers differ");
			}
			vgq_session_free(s);
			tquel_free(q);
		}
		vgq_session_free(one);
		tquel_free(q1);
	}
	for (size_t i = 0; i < sizeof same_pairs / sizeof *same_pairs; i++) {
		struct vgq_session *s0;
		struct tquel_query *q0;
		struct results x0 = {0};
		/* a pair's statements may first retrieve into relations: their last results */
		if (run(db, same_pairs[i][1], 1, 0, &s0, &q0, &x0) || !x0.n ||
		    !x0.r[x0.n - 1]->ntuples)
			fail("a plain statement fails or is empty at one thread");
		for (unsigned t = 1; t <= 4 && x0.n; t++) {
			struct vgq_session *s;
			struct tquel_query *q;
			struct results x = {0};
			if (run(db, same_pairs[i][0], t, 0, &s, &q, &x) || x.n != x0.n ||
			    !same_relation(x0.r[x0.n - 1], x.r[x.n - 1])) {
				fprintf(stderr,
				        "query.parallel: at %u threads (%zu tuples, %zu):\n%s\n", t,
				        x.n ? x.r[x.n - 1]->ntuples : 0, x0.r[x0.n - 1]->ntuples,
				        same_pairs[i][0]);
				fail("the answer differs from its plain form's");
			}
			vgq_session_free(s);
			tquel_free(q);
		}
		vgq_session_free(s0);
		tquel_free(q0);
	}
	/* beyond the limit at every thread count (the join emits thousands of bindings) */
	for (unsigned t = 1; t <= 4; t++) {
		struct vgq_session *s;
		struct tquel_query *q;
		struct results x = {0};
		if (run(db, statements[3], t, 1000, &s, &q, &x) == 0 || x.n != 0)
			fail("a statement beyond --max-tuples did not stop");
		vgq_session_free(s);
		tquel_free(q);
		/* the sweeps that make pairs without the evaluator: plain, and keyed */
		const size_t fast[] = {2, ns - 3};
		for (size_t k = 0; k < 2; k++) {
			/* the limit one below the sweep's own count: under TSan's smaller trace a
			 * fixed limit can be above it */
			struct results all = {0}, y = {0};
			if (run(db, statements[fast[k]], t, 0, &s, &q, &all) || !all.n ||
			    all.r[all.n - 1]->ntuples < 2)
				fail("a sweep to stop makes fewer than two tuples");
			size_t limit = all.n ? all.r[all.n - 1]->ntuples - 1 : 1;
			vgq_session_free(s);
			tquel_free(q);
			if (run(db, statements[fast[k]], t, limit, &s, &q, &y) == 0 || y.n != 0)
				fail("a sweep beyond --max-tuples did not stop");
			vgq_session_free(s);
			tquel_free(q);
		}
	}
	vgq_database_free(db);
	vgt_close(tr);
	tg_rmtree(root);
	free(root);
	if (!failures)
		printf("query.parallel: %zu statements, %zu tuples, the same at 1 to 4 threads\n",
		       ns, tuples);
	return failures != 0;
}
