/* The update network (src/live/delta.h) against the engine on a whole trace: a trace
 * built byte by byte (tests/unit/reader_tracegen.h) with 400 jobs (intervals, two
 * threads, so the merge interleaves two streams) and 400 marks (events), each with a
 * group of four; queries of every shape the network takes are answered by vgq_run over
 * the whole database and by the network fed the merged events in updates of 1, 7 and
 * all events. The sets of answer tuples must be equal; an overlap join must keep a
 * bounded state; the shapes it refuses must be refused with a reason. Runs under the
 * sanitizers (label sanitize). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "job_trace.h"
#include "live/delta.h"
#include "query/engine.h"
#include "relations/relation.h"
#include "tquel/tquel.h"

#define JOBS 400

static uint64_t rng = 88172645463325252ull;
static uint32_t next(uint32_t n)
{
	return (uint32_t)(test_xorshift64(&rng) % n);
}

/* A job's number and group, a mark's number and group. */
static void fields(struct tg_stream *s, const struct jt_event *e)
{
	tg_u32(s, e->n);
	if (e->id != JOB_END)
		tg_u32(s, e->grp);
}

/* Two threads: jobs of even ids and marks on thread 1, the rest on thread 2. */
static char *make_trace(void)
{
	char *root;
	struct tg_image *img = jt_image(&root, "uint32_t job; uint32_t grp;", "uint32_t job;",
	                                "uint32_t n; uint32_t grp;");
	struct jt_event *evs[2];
	size_t n[2] = {0, 0};
	evs[0] = calloc(3 * JOBS, sizeof **evs);
	evs[1] = calloc(3 * JOBS, sizeof **evs);
	for (uint32_t j = 0; j < JOBS; j++) {
		uint64_t b = 100 + (uint64_t)j * 10 + next(40), len = 1 + next(60);
		uint32_t g = next(4);
		struct jt_event *e = evs[j % 2];
		e[n[j % 2]++] = (struct jt_event){b, JOB_BEGIN, j, g, 0};
		e[n[j % 2]++] = (struct jt_event){b + len, JOB_END, j, g, 0};
		uint64_t at = 100 + (uint64_t)j * 10 + next(10);
		evs[0][n[0]++] = (struct jt_event){at, MARK, j, next(4), 0};
	}
	for (int t = 0; t < 2; t++) {
		jt_write(img, 42 + (uint32_t)t, evs[t], n[t], fields);
		free(evs[t]);
	}
	tg_image_free(img);
	return root;
}

/* Answer tuples as text lines, "from-to open|v1,v2,...". */
struct lines {
	char **s;
	size_t n, cap;
};

static int collect(void *ctx, const struct vgq_relation *r)
{
	struct lines *l = ctx;
	for (size_t t = 0; t < r->ntuples; t++) {
		char buf[256];
		int k =
		    snprintf(buf, sizeof buf, "%lld-%lld %d|", (long long)r->from[t],
		             (long long)(r->to ? r->to[t] : r->from[t]), r->open ? r->open[t] : 0);
		for (size_t a = 0; a < r->nattrs; a++) {
			assert_true(r->attrs[a].type == VGQ_UINT || r->attrs[a].type == VGQ_INT);
			k += snprintf(buf + k, sizeof buf - (size_t)k, "%lld,",
			              r->attrs[a].type == VGQ_UINT ? (long long)r->cols[a].u[t]
			                                           : (long long)r->cols[a].i[t]);
		}
		if (l->n == l->cap) {
			l->cap = l->cap ? 2 * l->cap : 256;
			l->s = realloc(l->s, l->cap * sizeof *l->s);
		}
		l->s[l->n++] = strdup(buf);
	}
	return 0;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted, each line once (answers are sets). */
static void settle(struct lines *l)
{
	qsort(l->s, l->n, sizeof *l->s, by_text);
	size_t k = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (k && !strcmp(l->s[k - 1], l->s[i])) {
			free(l->s[i]);
			continue;
		}
		l->s[k++] = l->s[i];
	}
	l->n = k;
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->s[i]);
	free(l->s);
}

struct fixture {
	char *root;
	struct vgt_trace *trace;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	f->root = make_trace();
	char err[256];
	const char *paths[] = {f->root};
	f->trace = vgt_open(paths, 1, err, sizeof err);
	assert_non_null(f->trace);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	vgt_close(f->trace);
	tg_rmtree(f->root);
	free(f->root);
	free(f);
	return 0;
}

static struct tquel_query *parse(const char *text)
{
	struct tquel_query *q = tquel_parse("<test>", text, strlen(text));
	assert_non_null(q);
	assert_int_equal(q->nerrors, 0);
	return q;
}

/* The network's answer in updates of `every` events; its stats in *st. */
static void network(struct vgt_trace *t, const struct tquel_query *q, uint64_t every,
                    struct lines *out, struct vgq_delta_stats *st)
{
	struct vgq_options o = {.tick_ns = 1000000000};
	char why[256];
	struct vgq_delta *d = vgq_delta_new(q, t, NULL, &o, why, sizeof why);
	assert_non_null(d);
	struct vgt_merge *m = vgt_merge_open(t);
	const struct vgt_event *ev;
	uint64_t n = 0;
	while ((ev = vgt_merge_next(m))) {
		vgq_delta_feed(d, ev);
		if (++n % every == 0)
			assert_int_equal(vgq_delta_update(d, false, collect, out, stderr), 0);
	}
	assert_int_equal(vgq_delta_update(d, true, collect, out, stderr), 0);
	vgt_merge_close(m);
	vgq_delta_stats(d, st);
	vgq_delta_free(d);
	settle(out);
}

static void same_answers(struct vgt_trace *t, const char *text, bool bounded, size_t least)
{
	struct tquel_query *q = parse(text);
	struct vgq_database *db = vgq_database_build(t);
	struct vgq_options o = {.tick_ns = 1000000000};
	struct vgq_session *s = vgq_session_new(db, &o);
	struct lines full = {0};
	assert_int_equal(vgq_run(s, q, collect, &full, stderr), 0);
	settle(&full);
	if (full.n < least)
		fail_msg("%s\nthe engine's answer has %zu tuples: too few to prove much", text,
		         full.n);
	static const uint64_t sizes[] = {1, 7, UINT64_MAX};
	for (size_t k = 0; k < 3; k++) {
		struct lines got = {0};
		struct vgq_delta_stats st;
		network(t, q, sizes[k], &got, &st);
		if (got.n != full.n)
			fail_msg("%s\nupdates of %llu: %zu tuples, the engine %zu", text,
			         (unsigned long long)sizes[k], got.n, full.n);
		for (size_t i = 0; i < full.n; i++)
			assert_string_equal(got.s[i], full.s[i]);
		if (bounded && sizes[k] == 1) {
			assert_false(st.unbounded);
			if (st.state_peak * 10 > st.deltas)
				fail_msg("%s\nstate peak %llu of %llu tuples", text,
				         (unsigned long long)st.state_peak,
				         (unsigned long long)st.deltas);
		}
		lines_free(&got);
	}
	lines_free(&full);
	vgq_session_free(s);
	vgq_database_free(db);
	tquel_free(q);
}

static void test_selection(void **state)
{
	struct fixture *f = *state;
	same_answers(f->trace, "range of J is Job retrieve (J.job, J.grp) where J.grp = 1", false,
	             50);
	same_answers(f->trace, "range of M is Mark retrieve (M.n) valid at M where M.grp != 2",
	             false, 200);
}

static void test_overlap(void **state)
{
	struct fixture *f = *state;
	same_answers(f->trace,
	             "range of J is Job range of M is Mark retrieve (J.job, M.n) "
	             "where J.grp = M.grp when J overlap M",
	             true, 50);
	/* the default valid time: an implicit overlap */
	same_answers(f->trace,
	             "range of J is Job range of K is Job retrieve (a = J.job, b = K.job) "
	             "where J.grp = K.grp and J.job < K.job",
	             true, 20);
}

static void test_precede(void **state)
{
	struct fixture *f = *state;
	same_answers(
	    f->trace,
	    "range of J is Job range of K is Job retrieve (a = J.job, b = K.job) "
	    "valid at end of J where J.grp = K.grp and K.job > J.job and K.job < J.job + 9 "
	    "when J precede K",
	    false, 20);
	same_answers(f->trace,
	             "range of M is Mark range of J is Job retrieve (J.job) valid at begin of J "
	             "where M.n = J.job when M precede begin of J",
	             false, 20);
}

static void test_three(void **state)
{
	struct fixture *f = *state;
	same_answers(f->trace,
	             "range of J is Job range of M is Mark range of K is Job "
	             "retrieve (a = J.job, m = M.n, b = K.job) valid at M "
	             "where J.grp = M.grp and K.job = J.job + 2 "
	             "when J overlap M and M precede K",
	             false, 5);
}

static void test_refused(void **state)
{
	struct fixture *f = *state;
	static const char *const refused[] = {
	    "range of J is Job retrieve (n = count(J.job for ever))",
	    "range of J is Job retrieve unique (J.grp)",
	    "range of J is Job retrieve (J.job) when J precede \"now\"",
	    "range of C is Clock range of J is Job retrieve (J.job) when C overlap J",
	    "range of J is Job retrieve into A (J.job) range of X is A retrieve (X.job)",
	};
	struct vgq_options o = {.tick_ns = 1000000000};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		struct tquel_query *q = parse(refused[i]);
		char why[256] = "";
		struct vgq_delta *d = vgq_delta_new(q, f->trace, NULL, &o, why, sizeof why);
		if (d)
			fail_msg("taken, though it cannot be: %s", refused[i]);
		assert_true(strlen(why) > 10);
		tquel_free(q);
	}
	/* a result named but not ranged over later is taken */
	struct tquel_query *q = parse("range of J is Job retrieve into A (J.job)");
	char why[256];
	struct vgq_delta *d = vgq_delta_new(q, f->trace, NULL, &o, why, sizeof why);
	assert_non_null(d);
	vgq_delta_free(d);
	tquel_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_selection, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_overlap, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_precede, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_three, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
