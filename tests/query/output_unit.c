/* The writers of query results (src/query/output*.c) on hand-built relations: every
 * attribute type, missing values, named and unnamed entities, escaping. JSON lines are
 * read back with jansson, CSV with a small RFC 4180 reader, SQLite through sqlite3. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "../test_rand.h"
#include "../unit/reader_tracegen.h"
#include "query/output.h"

/* A string with every kind of trouble: comma, quotes, CR LF, a control byte, a byte that
 * is not UTF-8, and a well-formed two-byte sequence. */
#define TRICKY "a,\"b\"\r\n\x01\xff \xc3\xa9\\"
/* TRICKY as JSON gives it back: \xff read as Latin-1 (U+00FF). */
#define TRICKY_DECODED "a,\"b\"\r\n\x01\xc3\xbf \xc3\xa9\\"

static const struct vgq_attr ATTRS[] = {
    {"i", VGQ_INT, NULL},    {"u", VGQ_UINT, NULL},  {"d", VGQ_DOUBLE, NULL},
    {"s", VGQ_STRING, NULL}, {"b", VGQ_BYTES, NULL}, {"p", VGQ_ENTITY, "Process"},
    {"x", VGQ_ENTITY, NULL},
};
enum { NATTRS = sizeof ATTRS / sizeof ATTRS[0], NT = 4 };

static const uint8_t BYTES[] = {0x00, 0xab, 0xff};

/* Column storage of the fixture, filled by fixture(). */
static int64_t col_i[NT] = {-5, 0, INT64_MIN, 42};
static uint64_t col_u[NT] = {18, INT64_MAX, 0, 7};
static double col_d[NT];
static const char *col_s[NT] = {"plain", NULL, TRICKY, ""};
static struct vgq_bytes col_b[NT] = {{BYTES, 3}, {NULL, 0}, {BYTES + 2, 1}, {BYTES, 1}};
static struct vgq_ref col_p[NT] = {
    {1, 1, 0, "P1"}, {7, 1, 0, NULL}, {2, 1, 0, " P2 "}, {3, 1, 0, "P3"}};
static struct vgq_ref col_x[NT] = {
    {9, 1, 0, NULL}, {10, 2, 0, "m,1"}, {11, 1, 0, NULL}, {12, 1, 0, NULL}};
static int64_t col_from[NT] = {1000, 2000, 3000, 4000};
static int64_t col_to[NT] = {1500, 2000 + 1000000000ll, 3001, 5000};
static union vgq_column cols[NATTRS];

/* Interval relation "R" with 4 tuples over every type. */
static struct vgq_relation fixture(void)
{
	col_d[0] = 0.1;
	col_d[1] = 1.0;
	col_d[2] = -0.0;
	col_d[3] = NAN;
	cols[0].i = col_i;
	cols[1].u = col_u;
	cols[2].d = col_d;
	cols[3].s = col_s;
	cols[4].b = col_b;
	cols[5].r = col_p;
	cols[6].r = col_x;
	return (struct vgq_relation){.name = "R",
	                             .kind = VGQ_REL_INTERVAL,
	                             .nattrs = NATTRS,
	                             .attrs = ATTRS,
	                             .ntuples = NT,
	                             .from = col_from,
	                             .to = col_to,
	                             .cols = cols,
	                             .first = 1000,
	                             .last = col_to[1]};
}

/* The output of one relation in one format, as a NUL-terminated string. */
static char *written(const struct vgq_relation *r, enum vgq_format f, int64_t origin)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	assert_non_null(out);
	struct vgq_output_opts o = {origin};
	assert_int_equal(vgq_write_relation(out, r, f, &o), 0);
	assert_int_equal(fclose(out), 0);
	return buf;
}

/* ---- value texts ---- */

static void check_double(double d, const char *want)
{
	char buf[VGQ_DOUBLE_TEXT_SIZE];
	size_t n = vgq_double_text(buf, d);
	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));
}

static void test_double_text(void **state)
{
	(void)state;
	check_double(0.1, "0.1");
	check_double(1.0, "1.0");
	check_double(-0.0, "-0.0");
	check_double(1.0 / 3, "0.3333333333333333");
	check_double(2.0 / 3, "0.6666666666666666");
	check_double(0.1 + 0.2, "0.30000000000000004");
	check_double(1e300, "1e+300");
	check_double(-2.5e-7, "-2.5e-07");
	check_double(123456.0, "123456.0");
	check_double(-3.0, "-3.0");
	check_double(999999999999999.0, "999999999999999.0");
	check_double(1e15, "1e+15");
	check_double(1e16, "1e+16");
	check_double(NAN, "nan");
	check_double(INFINITY, "inf");
	check_double(-INFINITY, "-inf");
	/* Every text reads back as the same double. */
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int k = 0; k < 100000; k++) {
		uint64_t bits = test_xorshift64(&x);
		double d;
		memcpy(&d, &bits, sizeof d);
		if (!isfinite(d))
			continue;
		char buf[VGQ_DOUBLE_TEXT_SIZE];
		vgq_double_text(buf, d);
		assert_true(strtod(buf, NULL) == d);
		assert_true(strlen(buf) <= 24);
	}
}

static void test_value_text(void **state)
{
	(void)state;
	struct vgq_relation r = fixture();
	static const char *const want[NT][NATTRS] = {
	    {"-5", "18", "0.1", "plain", "00abff", "P1", "entity#9"},
	    {"0", "9223372036854775807", "1.0", NULL, "", "Process#7", "m,1"},
	    {"-9223372036854775808", "0", "-0.0", TRICKY, "ff", " P2 ", "entity#11"},
	    {"42", "7", "nan", "", "00", "P3", "entity#12"},
	};
	struct vgq_text t = {0};
	for (size_t i = 0; i < NT; i++)
		for (size_t a = 0; a < NATTRS; a++) {
			t.len = 0;
			bool some = vgq_value_text(&t, &r, a, i);
			assert_int_equal(some, want[i][a] != NULL);
			if (want[i][a])
				assert_string_equal(t.ptr, want[i][a]);
		}
	col_u[0] = UINT64_MAX;
	t.len = 0;
	vgq_value_text(&t, &r, 1, 0);
	assert_string_equal(t.ptr, "18446744073709551615");
	col_u[0] = 18;
	vgq_text_free(&t);
}

/* ---- JSON lines ---- */

static void check_json_values(json_t *v, size_t i)
{
	assert_int_equal(json_object_size(v), NATTRS);
	assert_int_equal(json_integer_value(json_object_get(v, "i")), col_i[i]);
	assert_true(json_is_integer(json_object_get(v, "u")));
	assert_int_equal(json_integer_value(json_object_get(v, "u")), (json_int_t)col_u[i]);
	json_t *d = json_object_get(v, "d");
	if (isnan(col_d[i])) {
		assert_true(json_is_null(d));
	} else {
		assert_true(json_is_real(d)); /* 1.0 is not read as an integer */
		assert_true(json_real_value(d) == col_d[i]);
		assert_int_equal(!!signbit(json_real_value(d)), !!signbit(col_d[i]));
	}
	json_t *s = json_object_get(v, "s");
	static const char *const strings[NT] = {"plain", NULL, TRICKY_DECODED, ""};
	if (strings[i])
		assert_string_equal(json_string_value(s), strings[i]);
	else
		assert_true(json_is_null(s));
	static const char *const bytes[NT] = {"00abff", "", "ff", "00"};
	assert_string_equal(json_string_value(json_object_get(v, "b")), bytes[i]);
	static const char *const p[NT] = {"P1", "Process#7", " P2 ", "P3"};
	assert_string_equal(json_string_value(json_object_get(v, "p")), p[i]);
	static const char *const x[NT] = {"entity#9", "m,1", "entity#11", "entity#12"};
	assert_string_equal(json_string_value(json_object_get(v, "x")), x[i]);
}

static void test_json_interval(void **state)
{
	(void)state;
	struct vgq_relation r = fixture();
	r.name = "Odd \"name\"\n";
	char *out = written(&r, VGQ_FORMAT_JSON, 0);
	/* The escapes themselves. */
	assert_non_null(strstr(out, "\\u0001\\u00ff \xc3\xa9\\\\\""));
	assert_non_null(strstr(out, "\"relation\":\"Odd \\\"name\\\"\\u000a\""));
	size_t i = 0;
	char *save = NULL;
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_error_t e;
		json_t *o = json_loads(line, 0, &e);
		if (!o)
			fail_msg("line %zu: %s: %s", i, e.text, line);
		assert_true(i < NT);
		assert_int_equal(json_object_size(o), 5);
		assert_string_equal(json_string_value(json_object_get(o, "relation")), r.name);
		assert_string_equal(json_string_value(json_object_get(o, "kind")), "interval");
		assert_int_equal(json_integer_value(json_object_get(o, "from")), col_from[i]);
		assert_int_equal(json_integer_value(json_object_get(o, "to")), col_to[i]);
		check_json_values(json_object_get(o, "values"), i);
		json_decref(o);
		i++;
	}
	assert_int_equal(i, NT);
	free(out);
}

static void test_json_event(void **state)
{
	(void)state;
	struct vgq_relation r = fixture();
	r.kind = VGQ_REL_EVENT;
	r.to = NULL;
	r.name = "ResumedbyP1";
	char *out = written(&r, VGQ_FORMAT_JSON, 0);
	static const char first[] =
	    "{\"relation\":\"ResumedbyP1\",\"kind\":\"event\",\"at\":1000,\"values\":{\"i\":-5,"
	    "\"u\":18,\"d\":0.1,\"s\":\"plain\",\"b\":\"00abff\",\"p\":\"P1\",\"x\":\"entity#9\"}}"
	    "\n";
	assert_memory_equal(out, first, sizeof first - 1);
	size_t i = 0;
	char *save = NULL;
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *o = json_loads(line, 0, NULL);
		assert_non_null(o);
		assert_int_equal(json_object_size(o), 4);
		assert_string_equal(json_string_value(json_object_get(o, "kind")), "event");
		assert_int_equal(json_integer_value(json_object_get(o, "at")), col_from[i]);
		check_json_values(json_object_get(o, "values"), i);
		json_decref(o);
		i++;
	}
	assert_int_equal(i, NT);
	free(out);

	/* Without attributes, and without tuples. */
	struct vgq_relation clock = {
	    .name = "Clock", .kind = VGQ_REL_EVENT, .ntuples = 2, .from = col_from};
	out = written(&clock, VGQ_FORMAT_JSON, 0);
	assert_string_equal(out, "{\"relation\":\"Clock\",\"kind\":\"event\",\"at\":1000,"
	                         "\"values\":{}}\n{\"relation\":\"Clock\",\"kind\":\"event\","
	                         "\"at\":2000,\"values\":{}}\n");
	free(out);
	clock.ntuples = 0;
	out = written(&clock, VGQ_FORMAT_JSON, 0);
	assert_string_equal(out, "");
	free(out);

	/* A uint above INT64_MAX is still a JSON integer (jansson cannot read it). */
	r.ntuples = 1;
	col_u[0] = UINT64_MAX;
	out = written(&r, VGQ_FORMAT_JSON, 0);
	col_u[0] = 18;
	assert_non_null(strstr(out, "\"u\":18446744073709551615,"));
	free(out);
}

/* ---- CSV ---- */

struct csv_field {
	char *text;
	bool quoted;
};

/* Reads one RFC 4180 record at *p (CRLF ends it); NULL at the end of the input. */
static struct csv_field *csv_record(const char **p, size_t *nfields)
{
	if (!**p)
		return NULL;
	struct csv_field *f = NULL;
	size_t n = 0;
	for (;;) {
		f = realloc(f, (n + 1) * sizeof *f);
		struct vgq_text t = {0};
		vgq_text_put(&t, "", 0);
		f[n].quoted = **p == '"';
		if (f[n].quoted) {
			for ((*p)++;; (*p)++) {
				assert_true(**p != '\0');
				if (**p == '"' && (*p)[1] == '"')
					vgq_text_putc(&t, *(*p)++);
				else if (**p == '"')
					break;
				else
					vgq_text_putc(&t, **p);
			}
			(*p)++;
		} else {
			for (; **p && **p != ',' && **p != '\r'; (*p)++) {
				assert_true(**p != '"' && **p != '\n');
				vgq_text_putc(&t, **p);
			}
		}
		f[n++].text = t.ptr;
		if (**p == ',') {
			(*p)++;
			continue;
		}
		assert_true((*p)[0] == '\r' && (*p)[1] == '\n');
		*p += 2;
		*nfields = n;
		return f;
	}
}

static void csv_free(struct csv_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(f[i].text);
	free(f);
}

static void test_csv(void **state)
{
	(void)state;
	struct vgq_relation r = fixture();
	char *out = written(&r, VGQ_FORMAT_CSV, 0);
	const char *p = out;
	size_t n;
	struct csv_field *f = csv_record(&p, &n);
	static const char *const header[] = {"i", "u", "d", "s", "b", "p", "x", "from", "to"};
	assert_int_equal(n, 9);
	for (size_t k = 0; k < n; k++)
		assert_string_equal(f[k].text, header[k]);
	csv_free(f, n);
	static const char *const want[NT][9] = {
	    {"-5", "18", "0.1", "plain", "00abff", "P1", "entity#9", "1000", "1500"},
	    {"0", "9223372036854775807", "1.0", "", "", "Process#7", "m,1", "2000", "1000002000"},
	    {"-9223372036854775808", "0", "-0.0", TRICKY, "ff", " P2 ", "entity#11", "3000",
	     "3001"},
	    {"42", "7", "nan", "", "00", "P3", "entity#12", "4000", "5000"},
	};
	for (size_t i = 0; i < NT; i++) {
		f = csv_record(&p, &n);
		assert_non_null(f);
		assert_int_equal(n, 9);
		for (size_t k = 0; k < n; k++)
			assert_string_equal(f[k].text, want[i][k]);
		/* A missing string is an empty field, an empty string or bytes value is "". */
		assert_int_equal(f[3].quoted, i == 2 || i == 3);
		assert_int_equal(f[4].quoted, i == 1);
		assert_int_equal(f[5].quoted, i == 2); /* " P2 ": spaces kept */
		assert_int_equal(f[6].quoted, i == 1); /* "m,1" */
		assert_false(f[0].quoted);
		csv_free(f, n);
	}
	assert_null(csv_record(&p, &n));
	free(out);

	/* Event relation: the time is `at`; a header name that needs quotes. */
	static const struct vgq_attr odd[] = {{"a b,c", VGQ_INT, NULL}};
	struct vgq_relation e = {.name = "E",
	                         .kind = VGQ_REL_EVENT,
	                         .nattrs = 1,
	                         .attrs = odd,
	                         .ntuples = 2,
	                         .from = col_from,
	                         .cols = cols};
	out = written(&e, VGQ_FORMAT_CSV, 0);
	assert_string_equal(out, "\"a b,c\",at\r\n-5,1000\r\n0,2000\r\n");
	free(out);
	e.ntuples = 0;
	out = written(&e, VGQ_FORMAT_CSV, 0);
	assert_string_equal(out, "\"a b,c\",at\r\n");
	free(out);
}

/* ---- table ---- */

static void test_table(void **state)
{
	(void)state;
	static const struct vgq_attr attrs[] = {
	    {"Process", VGQ_ENTITY, "Process"}, {"n", VGQ_INT, NULL}, {"note", VGQ_STRING, NULL}};
	static struct vgq_ref procs[] = {{1, 1, 0, "P2"}, {3, 1, 0, NULL}, {4, 1, 0, "P4"}};
	static int64_t ns[] = {12, -1, 123456};
	static const char *notes[] = {"two\nlines\t\x7f", NULL,
	                              "\xff\xc3\xa9 0123456789012345678901234567890123456789"};
	static int64_t at[] = {1001234567, 999999999, 1000000000};
	union vgq_column c[] = {{.r = procs}, {.i = ns}, {.s = notes}};
	struct vgq_relation r = {.name = "ResumedbyP1",
	                         .kind = VGQ_REL_EVENT,
	                         .nattrs = 3,
	                         .attrs = attrs,
	                         .ntuples = 3,
	                         .from = at,
	                         .cols = c};
	char *out = written(&r, VGQ_FORMAT_TABLE, 1000000000);
	assert_string_equal(out, "ResumedbyP1 (event relation, 3 tuples)\n"
	                         "Process         n  note                                     "
	                         "           at\n"
	                         "P2             12  two\\nlines\\t\\x7f                        "
	                         "   0.001234567\n"
	                         "Process#3      -1  -                                        "
	                         " -0.000000001\n"
	                         "P4         123456  \\xff\xc3\xa9 "
	                         "012345678901234567890123456789012\xe2\x80\xa6   0.000000000\n");
	free(out);

	/* An interval relation without tuples: the title and the header. */
	struct vgq_relation empty = {.name = "Waiting",
	                             .kind = VGQ_REL_INTERVAL,
	                             .nattrs = 3,
	                             .attrs = attrs,
	                             .from = at,
	                             .to = at,
	                             .cols = c};
	out = written(&empty, VGQ_FORMAT_TABLE, 0);
	assert_string_equal(out, "Waiting (interval relation, 0 tuples)\n"
	                         "Process  n  note  from  to\n");
	free(out);

	/* One tuple; every type; an interval before and after the origin. */
	struct vgq_relation f = fixture();
	f.ntuples = 1;
	out = written(&f, VGQ_FORMAT_TABLE, 1200);
	assert_string_equal(
	    out, "R (interval relation, 1 tuple)\n"
	         " i   u    d  s      b       p   x                 from           to\n"
	         "-5  18  0.1  plain  00abff  P1  entity#9  -0.000000200  0.000000300\n");
	free(out);
}

/* ---- SQLite ---- */

static char *tmpdir; /* tg_tempdir: under $TMPDIR, removed by teardown */

static char *tmp_path(const char *name)
{
	char *p;
	assert_true(asprintf(&p, "%s/%s", tmpdir, name) > 0);
	return p;
}

static sqlite3_stmt *query(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	return st;
}

static void check_one_line(const char *err)
{
	assert_true(err[0] != '\0');
	assert_null(strchr(err, '\n'));
}

static void test_sqlite(void **state)
{
	(void)state;
	char err[256];
	char *path = tmp_path("out.db");
	struct vgq_sqlite *out = vgq_sqlite_open(path, err, sizeof err);
	if (!out)
		fail_msg("%s", err);
	struct vgq_relation r = fixture();
	assert_int_equal(vgq_sqlite_write(out, &r, err, sizeof err), 0);
	struct vgq_relation e = fixture();
	e.kind = VGQ_REL_EVENT;
	e.to = NULL;
	e.name = "we \"ird\" name";
	e.ntuples = 2;
	assert_int_equal(vgq_sqlite_write(out, &e, err, sizeof err), 0);
	/* Replaced: the second R has one tuple. */
	r.ntuples = 1;
	assert_int_equal(vgq_sqlite_write(out, &r, err, sizeof err), 0);
	/* An attribute named like the time column fails, and R stays as it was. */
	static const struct vgq_attr clash[] = {{"valid_at", VGQ_INT, NULL}};
	struct vgq_relation bad = {.name = "R",
	                           .kind = VGQ_REL_EVENT,
	                           .nattrs = 1,
	                           .attrs = clash,
	                           .ntuples = 1,
	                           .from = col_from,
	                           .cols = cols};
	assert_int_equal(vgq_sqlite_write(out, &bad, err, sizeof err), -1);
	check_one_line(err);
	assert_int_equal(vgq_sqlite_close(out, err, sizeof err), 0);

	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	/* Columns and their declared types. */
	sqlite3_stmt *st = query(db, "SELECT name, type FROM pragma_table_info('R') ORDER BY cid");
	static const char *const cols_r[][2] = {
	    {"i", "INTEGER"},       {"u", "INTEGER"}, {"d", "REAL"}, {"s", "TEXT"},
	    {"b", "BLOB"},          {"p", "TEXT"},    {"x", "TEXT"}, {"valid_from", "INTEGER"},
	    {"valid_to", "INTEGER"}};
	for (size_t k = 0; k < 9; k++) {
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(st, 0), cols_r[k][0]);
		assert_string_equal((const char *)sqlite3_column_text(st, 1), cols_r[k][1]);
	}
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);

	st = query(db, "SELECT count(*), typeof(i), i, typeof(u), u, typeof(d), d, s, hex(b), "
	               "p, typeof(x), valid_from, valid_to FROM R");
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int64(st, 0), 1);
	assert_string_equal((const char *)sqlite3_column_text(st, 1), "integer");
	assert_int_equal(sqlite3_column_int64(st, 2), -5);
	assert_string_equal((const char *)sqlite3_column_text(st, 3), "integer");
	assert_int_equal(sqlite3_column_int64(st, 4), 18);
	assert_string_equal((const char *)sqlite3_column_text(st, 5), "real");
	assert_true(sqlite3_column_double(st, 6) == 0.1);
	assert_string_equal((const char *)sqlite3_column_text(st, 7), "plain");
	assert_string_equal((const char *)sqlite3_column_text(st, 8), "00ABFF");
	assert_string_equal((const char *)sqlite3_column_text(st, 9), "P1");
	assert_string_equal((const char *)sqlite3_column_text(st, 10), "null"); /* no name */
	assert_int_equal(sqlite3_column_int64(st, 11), 1000);
	assert_int_equal(sqlite3_column_int64(st, 12), 1500);
	sqlite3_finalize(st);

	/* The event relation: valid_at, NULLs, exact bytes of the tricky string. */
	st = query(db, "SELECT i, typeof(s), typeof(b), length(b), p, x, valid_at "
	               "FROM \"we \"\"ird\"\" name\" ORDER BY valid_at");
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int64(st, 6), 1000);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int64(st, 0), 0);
	assert_string_equal((const char *)sqlite3_column_text(st, 1), "null");
	assert_string_equal((const char *)sqlite3_column_text(st, 2), "blob"); /* empty bytes */
	assert_int_equal(sqlite3_column_int64(st, 3), 0);
	assert_int_equal(sqlite3_column_type(st, 4), SQLITE_NULL); /* Process#7: no name */
	assert_string_equal((const char *)sqlite3_column_text(st, 5), "m,1");
	assert_int_equal(sqlite3_column_int64(st, 6), 2000);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(db);

	/* All the tuples of the fixture: the tricky string, INT64_MIN, NaN and a huge uint. */
	out = vgq_sqlite_open(path, err, sizeof err);
	assert_non_null(out);
	r.ntuples = NT;
	col_u[3] = UINT64_MAX;
	assert_int_equal(vgq_sqlite_write(out, &r, err, sizeof err), 0);
	col_u[3] = 7;
	assert_int_equal(vgq_sqlite_close(out, err, sizeof err), 0);
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	st = query(db, "SELECT i, s, typeof(d), typeof(u), u FROM R ORDER BY valid_from");
	for (size_t i = 0; i < NT; i++) {
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int64(st, 0), col_i[i]);
		if (col_s[i]) {
			assert_int_equal(sqlite3_column_bytes(st, 1), strlen(col_s[i]));
			assert_memory_equal(sqlite3_column_blob(st, 1), col_s[i], strlen(col_s[i]));
		} else {
			assert_int_equal(sqlite3_column_type(st, 1), SQLITE_NULL);
		}
		assert_string_equal((const char *)sqlite3_column_text(st, 2),
		                    isnan(col_d[i]) ? "null" : "real");
		assert_string_equal((const char *)sqlite3_column_text(st, 3),
		                    i == 3 ? "real" : "integer");
		if (i == 3)
			assert_true(sqlite3_column_double(st, 4) == 18446744073709551616.0);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	unlink(path);
	free(path);
}

static void test_sqlite_bad_paths(void **state)
{
	(void)state;
	char err[256];
	err[0] = '\0';
	assert_null(vgq_sqlite_open("/nonexistent-vigil-dir/sub/out.db", err, sizeof err));
	check_one_line(err);
	assert_non_null(strstr(err, "/nonexistent-vigil-dir/sub/out.db"));
	err[0] = '\0';
	assert_null(vgq_sqlite_open(tmpdir, err, sizeof err)); /* a directory */
	check_one_line(err);
	char *path = tmp_path("not-a-db.db");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 200; i++)
		fputs("this is not an SQLite database\n", f);
	fclose(f);
	err[0] = '\0';
	assert_null(vgq_sqlite_open(path, err, sizeof err));
	check_one_line(err);
	unlink(path);
	free(path);
	assert_int_equal(vgq_sqlite_close(NULL, err, sizeof err), 0);
}

/* ---- write errors ---- */

static void test_full_device(void **state)
{
	(void)state;
	struct vgq_relation r = fixture();
	static const enum vgq_format formats[] = {VGQ_FORMAT_TABLE, VGQ_FORMAT_CSV,
	                                          VGQ_FORMAT_JSON};
	for (size_t k = 0; k < 3; k++) {
		/* Linux always has /dev/full: its absence is a broken test machine, not a skip. */
		FILE *out = fopen("/dev/full", "w");
		if (!out)
			fail_msg("/dev/full: %s", strerror(errno));
		struct vgq_output_opts o = {0};
		errno = 0;
		assert_int_equal(vgq_write_relation(out, &r, formats[k], &o), -1);
		assert_int_equal(errno, ENOSPC);
		fclose(out);
	}
	/* Large enough to fill the sink's buffer several times before the end. */
	enum { BIG = 20000 };
	int64_t *t = calloc(BIG, sizeof *t);
	struct vgq_relation big = {.name = "Big", .kind = VGQ_REL_EVENT, .ntuples = BIG, .from = t};
	FILE *out = fopen("/dev/full", "w");
	assert_non_null(out);
	errno = 0;
	assert_int_equal(vgq_write_relation(out, &big, VGQ_FORMAT_JSON, NULL), -1);
	assert_int_equal(errno, ENOSPC);
	fclose(out);
	free(t);
}

static int setup(void **state)
{
	(void)state;
	tmpdir = tg_tempdir();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tg_rmtree(tmpdir);
	free(tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_double_text),   cmocka_unit_test(test_value_text),
	    cmocka_unit_test(test_json_interval), cmocka_unit_test(test_json_event),
	    cmocka_unit_test(test_csv),           cmocka_unit_test(test_table),
	    cmocka_unit_test(test_sqlite),        cmocka_unit_test(test_sqlite_bad_paths),
	    cmocka_unit_test(test_full_device),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
