/* The TQuel front end against its example files:
 *  - tquel_good/X.tq parses without error and prints as tquel_good/X.golden, and the
 *    golden text is a fixed point of parse -> print;
 *  - tquel_good/X.tree, written by hand from docs/tquel.md's grammar and precedence (not
 *    by the printer), is the tree of both X.tq and X.golden, dumped here fully
 *    parenthesized: the printer's canonical text means what the source meant;
 *  - tquel_bad/X.tq gives exactly the errors of tquel_bad/X.err (file named X.tq), and
 *    the statements recovered around the errors still print -> parse -> print the same. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tquel/tquel.h"

static char *slurp(const char *dir, const char *name, const char *ext, size_t *len)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

/* The names X of the files X.tq in `dir`, sorted; at least `min` of them. */
static size_t list(const char *dir, char names[][128], size_t max, size_t min)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l > 3 && l < 128 && !strcmp(e->d_name + l - 3, ".tq") && n < max) {
			memcpy(names[n], e->d_name, l - 3);
			names[n++][l - 3] = '\0';
		}
	}
	closedir(d);
	qsort(names, n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
	assert_true(n >= min);
	return n;
}

/* print(parse(printed)) == printed, without errors */
static void assert_fixed_point(const char *printed)
{
	struct tquel_query *q = tquel_parse("printed", printed, strlen(printed));
	char *errors = tquel_errors_string(q);
	if (q->nerrors)
		fail_msg("canonical text does not parse:\n%s\n%s", printed, errors);
	char *again = tquel_print_string(q);
	assert_string_equal(again, printed);
	free(again);
	free(errors);
	tquel_free(q);
}

static void test_good(void **state)
{
	(void)state;
	static char names[256][128];
	size_t n = list(TQUEL_GOOD_DIR, names, 256, 8);
	for (size_t i = 0; i < n; i++) {
		size_t len;
		char *text = slurp(TQUEL_GOOD_DIR, names[i], ".tq", &len);
		char *golden = slurp(TQUEL_GOOD_DIR, names[i], ".golden", NULL);
		struct tquel_query *q = tquel_parse(names[i], text, len);
		char *errors = tquel_errors_string(q);
		if (q->nerrors)
			fail_msg("%s.tq:\n%s", names[i], errors);
		char *printed = tquel_print_string(q);
		if (strcmp(printed, golden))
			fail_msg("%s.tq prints as\n%s\nexpected\n%s", names[i], printed, golden);
		assert_fixed_point(printed);
		free(printed);
		free(errors);
		free(golden);
		free(text);
		tquel_free(q);
	}
}

/* ---- the tree, fully parenthesized (independent of the printer) ---- */

struct out {
	char *buf;
	size_t len;
	FILE *f;
};

static void dump_expr(FILE *f, const struct tquel_expr *e);

static const char *op_name(enum tquel_kind k)
{
	switch (k) {
	case TQ_NEG:
	case TQ_SUB:
		return "-";
	case TQ_ADD:
		return "+";
	case TQ_MUL:
		return "*";
	case TQ_DIV:
		return "/";
	case TQ_EQ:
		return "=";
	case TQ_NE:
		return "!=";
	case TQ_LT:
		return "<";
	case TQ_LE:
		return "<=";
	case TQ_GT:
		return ">";
	case TQ_GE:
		return ">=";
	case TQ_AND:
		return "and";
	case TQ_OR:
		return "or";
	case TQ_NOT:
		return "not";
	case TQ_BEGIN_OF:
		return "begin";
	case TQ_END_OF:
		return "end";
	case TQ_INTERSECT:
		return "inter";
	case TQ_EXTEND:
		return "extend";
	case TQ_PRECEDE:
		return "precede";
	case TQ_OVERLAPS:
		return "overlaps";
	case TQ_EQUAL:
		return "equal";
	default:
		return "?";
	}
}

static void dump_agg(FILE *f, const struct tquel_agg *a)
{
	fprintf(f, "(%s%s ", tquel_aggfn_names[a->fn], a->unique ? "U" : "");
	dump_expr(f, a->arg);
	if (a->nby) {
		fputs(" (by", f);
		for (size_t i = 0; i < a->nby; i++) {
			fputc(' ', f);
			dump_expr(f, a->by[i]);
		}
		fputc(')', f);
	}
	if (a->window == TQ_SPAN)
		fprintf(f, " (each %lld ns)", (long long)a->span_ns);
	else
		fputs(a->window == TQ_EVER ? " ever" : " instant", f);
	if (a->where) {
		fputs(" (where ", f);
		dump_expr(f, a->where);
		fputc(')', f);
	}
	if (a->when) {
		fputs(" (when ", f);
		dump_expr(f, a->when);
		fputc(')', f);
	}
	fputc(')', f);
}

static void dump_expr(FILE *f, const struct tquel_expr *e)
{
	switch (e->kind) {
	case TQ_NUMBER:
		fputs(e->u.number.lexeme, f);
		return;
	case TQ_STRING:
		fputc('"', f);
		for (const char *c = e->u.string.s; *c; c++)
			if (*c == '"' || *c == '\\')
				fprintf(f, "\\%c", *c);
			else if (*c == '\t')
				fputs("\\t", f);
			else if (*c == '\n')
				fputs("\\n", f);
			else
				fputc(*c, f);
		fputc('"', f);
		return;
	case TQ_ATTR:
		fprintf(f, "%s.%s", e->u.attr.var, e->u.attr.name);
		return;
	case TQ_TVAR:
		fputs(e->u.tvar.name, f);
		return;
	case TQ_TCONST: /* the constant it resolved to, then the string */
		if (e->u.tconst.which == TQ_DATE)
			fprintf(f, "(date %lld \"%s\")", (long long)e->u.tconst.ns, e->u.tconst.s);
		else
			fprintf(f, "(%s \"%s\")",
			        e->u.tconst.which == TQ_NOW         ? "now"
			        : e->u.tconst.which == TQ_BEGINNING ? "beginning"
			                                            : "forever",
			        e->u.tconst.s);
		return;
	case TQ_AGG:
		dump_agg(f, &e->u.agg);
		return;
	default:
		fprintf(f, "(%s ", op_name(e->kind));
		dump_expr(f, e->u.op.a);
		if (e->u.op.b) {
			fputc(' ', f);
			dump_expr(f, e->u.op.b);
		}
		fputc(')', f);
	}
}

/* One line per statement. */
static char *dump_tree(const struct tquel_query *q)
{
	struct out o = {0};
	o.f = open_memstream(&o.buf, &o.len);
	FILE *f = o.f;
	for (size_t i = 0; i < q->nstmts; i++) {
		const struct tquel_stmt *s = &q->stmts[i];
		if (s->kind == TQ_RANGE) {
			fprintf(f, "(range %s %s", s->u.range.var, s->u.range.relation);
			if (s->u.range.clock_period)
				fprintf(f, " %llu", (unsigned long long)s->u.range.clock_period);
			fputs(")\n", f);
			continue;
		}
		const struct tquel_retrieve *r = &s->u.retrieve;
		fprintf(f, "(retrieve%s %s", r->unique ? " unique" : "", r->into ? r->into : "-");
		for (size_t t = 0; t < r->ntargets; t++) {
			if (r->targets[t].all) {
				fprintf(f, " (* %s)", r->targets[t].value->u.attr.var);
				continue;
			}
			fprintf(f, " (%s ", r->targets[t].name);
			dump_expr(f, r->targets[t].value);
			fputc(')', f);
		}
		if (r->valid.kind == TQ_VALID_AT) {
			fputs(" (valid at ", f);
			dump_expr(f, r->valid.at);
			fputc(')', f);
		} else if (r->valid.kind == TQ_VALID_FROM_TO) {
			fputs(" (valid from ", f);
			dump_expr(f, r->valid.from);
			fputs(" to ", f);
			dump_expr(f, r->valid.to);
			fputc(')', f);
		}
		if (r->where) {
			fputs(" (where ", f);
			dump_expr(f, r->where);
			fputc(')', f);
		}
		if (r->when) {
			fputs(" (when ", f);
			dump_expr(f, r->when);
			fputc(')', f);
		}
		if (r->asof.at) {
			fputs(" (as of ", f);
			dump_expr(f, r->asof.at);
			if (r->asof.through) {
				fputs(" through ", f);
				dump_expr(f, r->asof.through);
			}
			fputc(')', f);
		}
		fputs(")\n", f);
	}
	fclose(f);
	return o.buf;
}

static void assert_tree(const char *name, const char *what, const char *text, size_t len,
                        const char *want)
{
	struct tquel_query *q = tquel_parse(name, text, len);
	if (q->nerrors)
		fail_msg("%s.%s does not parse", name, what);
	char *tree = dump_tree(q);
	if (strcmp(tree, want))
		fail_msg("%s.%s parses as\n%s\nexpected (%s.tree)\n%s", name, what, tree, name,
		         want);
	free(tree);
	tquel_free(q);
}

static void test_trees(void **state)
{
	(void)state;
	static char names[256][128];
	size_t n = list(TQUEL_GOOD_DIR, names, 256, 8);
	for (size_t i = 0; i < n; i++) {
		size_t len, glen;
		char *text = slurp(TQUEL_GOOD_DIR, names[i], ".tq", &len);
		char *golden = slurp(TQUEL_GOOD_DIR, names[i], ".golden", &glen);
		char *tree = slurp(TQUEL_GOOD_DIR, names[i], ".tree", NULL);
		assert_tree(names[i], "tq", text, len, tree);
		assert_tree(names[i], "golden", golden, glen, tree);
		free(tree);
		free(golden);
		free(text);
	}
}

static void test_bad(void **state)
{
	(void)state;
	static char names[256][128];
	size_t n = list(TQUEL_BAD_DIR, names, 256, 20);
	for (size_t i = 0; i < n; i++) {
		size_t len;
		char *text = slurp(TQUEL_BAD_DIR, names[i], ".tq", &len);
		char *expected = slurp(TQUEL_BAD_DIR, names[i], ".err", NULL);
		char source[160];
		snprintf(source, sizeof source, "%s.tq", names[i]);
		struct tquel_query *q = tquel_parse(source, text, len);
		assert_true(q->nerrors > 0);
		char *errors = tquel_errors_string(q);
		if (strcmp(errors, expected))
			fail_msg("%s gives\n%s\nexpected\n%s", source, errors, expected);
		char *printed = tquel_print_string(q);
		assert_fixed_point(printed);
		free(printed);
		free(errors);
		free(expected);
		free(text);
		tquel_free(q);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good),
	    cmocka_unit_test(test_trees),
	    cmocka_unit_test(test_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
