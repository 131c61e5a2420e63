/* The trace of tests/query/temporal_unit.c, built byte by byte, and how its tests run a
 * query: through the engine (parse, bind, plan, execute) and through `vigil query --format
 * csv`, both compared with answers worked out by hand. Included by one test program each
 * (static functions).
 *
 *   Job (interval): J1 [10,20)  J2 [20,30)  J3 [15,25)  J4 [10,20)  J5 [40,50) open
 *   Mark (event):   M1 @20  M2 @10  M3 @30  M4 @20  M5 @50 (the last event: J5's end) */
#ifndef VIGIL_TESTS_QUERY_JOBS_FIXTURE_H
#define VIGIL_TESTS_QUERY_JOBS_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "job_trace.h"
#include "query/engine.h"
#include "query/output.h"
#include "relations/relation.h"
#include "tquel/tquel.h"

#define BASE 1700000000000000000ll /* the generator's clock offset, in ns */

struct db {
	char *root;
	struct vgt_trace *trace;
	struct vgq_database *db;
};

static void job(struct tg_stream *s, uint16_t id, uint64_t ts, uint32_t n)
{
	tg_event(s, id, ts);
	tg_u32(s, n);
}

static int setup_db(void **state)
{
	struct db *d = calloc(1, sizeof *d);
	struct tg_image *img = jt_image(&d->root, "uint32_t job;", "uint32_t job;", "uint32_t n;");
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 10);
	job(s, JOB_BEGIN, 10, 1);
	job(s, JOB_BEGIN, 10, 4);
	job(s, MARK, 10, 2);
	job(s, JOB_BEGIN, 15, 3);
	job(s, JOB_END, 20, 1);
	job(s, JOB_END, 20, 4);
	job(s, JOB_BEGIN, 20, 2);
	job(s, MARK, 20, 1);
	job(s, MARK, 20, 4);
	job(s, JOB_END, 25, 3);
	job(s, JOB_END, 30, 2);
	job(s, MARK, 30, 3);
	job(s, JOB_BEGIN, 40, 5); /* never ended: open at the end of the trace, 50 */
	job(s, MARK, 50, 5);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	tg_image_free(img);
	char err[256];
	const char *paths[] = {d->root};
	d->trace = vgt_open(paths, 1, err, sizeof err);
	assert_non_null(d->trace);
	d->db = vgq_database_build(d->trace);
	assert_non_null(d->db);
	/* the relations are as drawn above */
	const struct vgq_relation *j = vgq_database_find(d->db, "Job");
	assert_non_null(j);
	assert_int_equal(j->ntuples, 5);
	for (size_t i = 0; i < j->ntuples; i++) {
		static const int64_t b[] = {10, 20, 15, 10, 40}, e[] = {20, 30, 25, 20, 50};
		uint64_t n = j->cols[0].u[i];
		assert_true(n >= 1 && n <= 5);
		assert_int_equal(j->from[i] - BASE, b[n - 1]);
		assert_int_equal(j->to[i] - BASE, e[n - 1]);
		assert_int_equal(j->open[i], n == 5);
	}
	*state = d;
	return 0;
}

static int teardown_db(void **state)
{
	struct db *d = *state;
	vgq_database_free(d->db);
	vgt_close(d->trace);
	tg_rmtree(d->root);
	free(d->root);
	free(d);
	return 0;
}

/* The last retrieve's tuples as sorted text lines "v1,v2,...@from" (events) or
 * "v1,...@from-to" (intervals), times relative to the trace's clock offset. */
struct answer {
	char lines[64][96];
	size_t n;
};

static int collect(void *ctx, const struct vgq_relation *r)
{
	struct answer *a = ctx;
	a->n = 0;
	for (size_t t = 0; t < r->ntuples; t++) {
		assert_true(a->n < 64);
		char *p = a->lines[a->n++];
		size_t left = sizeof a->lines[0], k;
		p[0] = 0;
		for (size_t i = 0; i < r->nattrs; i++) {
			k = strlen(p);
			if (r->attrs[i].type == VGQ_INT)
				snprintf(p + k, left - k, "%s%lld", i ? "," : "",
				         (long long)r->cols[i].i[t]);
			else if (r->attrs[i].type == VGQ_UINT)
				snprintf(p + k, left - k, "%s%llu", i ? "," : "",
				         (unsigned long long)r->cols[i].u[t]);
			else if (r->attrs[i].type == VGQ_DOUBLE) { /* as vigil query prints it */
				char d[VGQ_DOUBLE_TEXT_SIZE];
				vgq_double_text(d, r->cols[i].d[t]);
				snprintf(p + k, left - k, "%s%s", i ? "," : "", d);
			} else
				fail_msg("unexpected attribute type %d", r->attrs[i].type);
		}
		k = strlen(p);
		if (r->kind == VGQ_REL_EVENT)
			snprintf(p + k, left - k, "@%lld", (long long)(r->from[t] - BASE));
		else
			snprintf(p + k, left - k, "@%lld-%lld", (long long)(r->from[t] - BASE),
			         (long long)(r->to[t] - BASE));
	}
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The same statements through the command: `vigil query ROOT --format csv -e TEXT`, its
 * last result's rows as the lines above (values, then @at or @from-to). */
static size_t cli_answer(const struct db *d, const char *text, struct answer *a)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "'%s' query '%s' --format csv -e '%s'", VIGIL_BIN, d->root, text);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[512];
	bool header = true, event = false;
	a->n = 0;
	while (fgets(line, sizeof line, p)) {
		line[strcspn(line, "\r\n")] = 0; /* CSV lines end with CRLF */
		if (!line[0]) {                  /* between results: keep the last one's */
			header = true;
			a->n = 0;
			continue;
		}
		char *last = strrchr(line, ',');
		assert_non_null(last);
		if (header) {
			event = !strcmp(last + 1, "at");
			header = false;
			continue;
		}
		assert_true(a->n < 64);
		long long t2 = strtoll(last + 1, NULL, 10) - BASE;
		*last = 0;
		char *out = a->lines[a->n++];
		long long t1 = t2;
		if (!event) {
			char *mid = strrchr(line, ',');
			assert_non_null(mid);
			t1 = strtoll(mid + 1, NULL, 10) - BASE;
			*mid = 0;
		}
		assert_true(strlen(line) <= 40); /* the values: a few numbers */
		if (event)
			snprintf(out, 96, "%.40s@%lld", line, t2);
		else
			snprintf(out, 96, "%.40s@%lld-%lld", line, t1, t2);
	}
	assert_int_equal(pclose(p), 0);
	return a->n;
}

/* Sorts a's lines and compares them with want's (sorted here); fails with both. */
static void same_lines(const char *how, const char *text, struct answer *a, const char *const *want)
{
	size_t nw = 0;
	while (want[nw])
		nw++;
	qsort(a->lines, a->n, sizeof a->lines[0], cmp_line);
	char sorted[64][96];
	for (size_t i = 0; i < nw; i++)
		snprintf(sorted[i], sizeof sorted[i], "%s", want[i]);
	qsort(sorted, nw, sizeof sorted[0], cmp_line);
	bool ok = a->n == nw;
	for (size_t i = 0; ok && i < nw; i++)
		ok = !strcmp(a->lines[i], sorted[i]);
	if (!ok) {
		fprintf(stderr, "%s: %s\ngot %zu:", how, text, a->n);
		for (size_t i = 0; i < a->n; i++)
			fprintf(stderr, " %s", a->lines[i]);
		fprintf(stderr, "\nwant %zu:", nw);
		for (size_t i = 0; i < nw; i++)
			fprintf(stderr, " %s", sorted[i]);
		fprintf(stderr, "\n");
		fail_msg("answers differ");
	}
}

/* Runs `text` and compares its last retrieve's answer with `want` (NULL-terminated),
 * as sets. `plan`: a string vgq_explain must print for it (or NULL). */
static void expect(struct db *d, const char *text, const char *plan, const char *const *want)
{
	struct tquel_query *q = tquel_parse("<test>", text, strlen(text));
	if (q->nerrors) {
		tquel_print_errors(q, stderr);
		fail_msg("parse errors in %s", text);
	}
	struct vgq_options o = {.tick_ns = 1};
	struct vgq_session *s = vgq_session_new(d->db, &o);
	static struct answer a;
	a.n = 0;
	assert_int_equal(vgq_run(s, q, collect, &a, stderr), 0);
	vgq_session_free(s);
	if (plan) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		s = vgq_session_new(d->db, &o);
		assert_int_equal(vgq_explain(s, q, f, stderr), 0);
		vgq_session_free(s);
		fclose(f);
		if (!strstr(buf, plan))
			fail_msg("%s: the plan has no %s:\n%s", text, plan, buf);
		free(buf);
	}
	tquel_free(q);
	same_lines("engine", text, &a, want);
	static struct answer c;
	cli_answer(d, text, &c);
	same_lines("vigil query", text, &c, want);
}

#define JOBS2 "range of A is Job range of B is Job "
#define MARKS2 "range of M is Mark range of N is Mark "
#define JM "range of A is Job range of M is Mark "

#endif
