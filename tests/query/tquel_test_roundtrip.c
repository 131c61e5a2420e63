/* Round trip as a property: random statements (every node kind, nested at random, with
 * names that are keywords where the grammar allows them) are printed, parsed back and
 * compared node by node with the original; the printed text is a fixed point. Then
 * robustness: every prefix and thousands of mutations of the example queries parse
 * without crashing, each error has a location inside the text, and whatever parses
 * round-trips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../test_rand.h"
#include "tquel/arena.h"
#include "tquel/tquel.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

static unsigned rnd(unsigned n)
{
	return (unsigned)(test_xorshift64(&rng) % n);
}

static const char *pick(const char *const *v, size_t n)
{
	return v[rnd((unsigned)n)];
}
#define PICK(v) pick(v, sizeof v / sizeof v[0])

static const char *const vars[] = {"S", "W", "RO", "C", "x_1"};
static const char *const attrs[] = {"Process", "Mailbox", "end", "count", "from", "at", "a", "all"};
static const char *const numbers[] = {"0", "7", "42", "2.5", "9223372036854775807", "0.125"};
static const char *const strings[] = {"P1",
                                      "",
                                      "a \"quoted\" word",
                                      "back\\slash",
                                      "tab\there",
                                      "line\nbreak",
                                      "/* not a comment */"};

static struct tquel_expr *node(struct tquel_arena *a, enum tquel_kind k)
{
	struct tquel_expr *e = tquel_alloc(a, sizeof *e);
	e->kind = k;
	return e;
}

static struct tquel_expr *gen_time(struct tquel_arena *a, int depth);
static struct tquel_expr *gen_value(struct tquel_arena *a, int depth);

static struct tquel_expr *gen_pred(struct tquel_arena *a, int depth)
{
	static const enum tquel_kind leaf[] = {TQ_PRECEDE, TQ_EQUAL, TQ_OVERLAPS};
	static const enum tquel_kind inner[] = {TQ_AND, TQ_OR, TQ_NOT};
	struct tquel_expr *e;
	if (depth <= 0 || rnd(3) == 0) {
		e = node(a, leaf[rnd(3)]);
		e->u.op.a = gen_time(a, depth - 1);
		e->u.op.b = gen_time(a, depth - 1);
		return e;
	}
	e = node(a, inner[rnd(3)]);
	e->u.op.a = gen_pred(a, depth - 1);
	if (e->kind != TQ_NOT)
		e->u.op.b = gen_pred(a, depth - 1);
	return e;
}

static struct tquel_expr *gen_time(struct tquel_arena *a, int depth)
{
	static const enum tquel_kind inner[] = {TQ_BEGIN_OF, TQ_END_OF, TQ_INTERSECT, TQ_EXTEND};
	if (depth <= 0 || rnd(3) == 0) {
		if (rnd(6) == 0) { /* a temporal constant */
			static const struct {
				const char *s;
				enum tquel_tconst which;
				int64_t ns;
			} c[] = {
			    {"now", TQ_NOW, 0},
			    {"Beginning", TQ_BEGINNING, 0},
			    {"FOREVER", TQ_FOREVER, 0},
			    {"1970-01-01", TQ_DATE, 0},
			    {"2026-11-27 03:20:05.25", TQ_DATE, 1795749605250000000},
			    {"2000-02-29T23:59:59.999999999+01:00", TQ_DATE, 951865199999999999}};
			struct tquel_expr *e = node(a, TQ_TCONST);
			unsigned k = rnd(sizeof c / sizeof c[0]);
			e->u.tconst.s = c[k].s;
			e->u.tconst.which = c[k].which;
			e->u.tconst.ns = c[k].ns;
			return e;
		}
		if (rnd(8) == 0) { /* an aggregate: the valid time of its value */
			struct tquel_expr *g;
			do
				g = gen_value(a, 2);
			while (g->kind != TQ_AGG);
			return g;
		}
		struct tquel_expr *e = node(a, TQ_TVAR);
		e->u.tvar.name = PICK(vars);
		return e;
	}
	struct tquel_expr *e = node(a, inner[rnd(4)]);
	e->u.op.a = gen_time(a, depth - 1);
	if (e->kind == TQ_INTERSECT || e->kind == TQ_EXTEND)
		e->u.op.b = gen_time(a, depth - 1);
	return e;
}

static struct tquel_expr *gen_value(struct tquel_arena *a, int depth)
{
	if (depth <= 0 || rnd(4) == 0) {
		struct tquel_expr *e;
		switch (rnd(3)) {
		case 0:
			e = node(a, TQ_NUMBER);
			e->u.number.lexeme = PICK(numbers);
			break;
		case 1:
			e = node(a, TQ_STRING);
			e->u.string.s = PICK(strings);
			break;
		default:
			e = node(a, TQ_ATTR);
			e->u.attr.var = PICK(vars);
			e->u.attr.name = PICK(attrs);
		}
		return e;
	}
	enum tquel_kind k = (enum tquel_kind)(TQ_NEG + rnd(TQ_AGG - TQ_NEG + 1));
	struct tquel_expr *e = node(a, k);
	if (k == TQ_AGG) {
		struct tquel_agg *g = &e->u.agg;
		g->fn = (enum tquel_aggfn)rnd(TQ_AGGFN_COUNT);
		g->unique = g->fn <= TQ_AVG && rnd(2);
		g->arg = gen_value(a, depth - 1);
		g->nby = rnd(3);
		g->by = tquel_alloc(a, 3 * sizeof *g->by);
		for (size_t i = 0; i < g->nby; i++)
			g->by[i] = gen_value(a, depth - 1);
		g->window = (enum tquel_window)rnd(3);
		if (g->window == TQ_SPAN) { /* as the parser keeps it: number, space, unit */
			static const struct {
				const char *text;
				int64_t ns;
			} spans[] = {{"1 s", 1000000000},
			             {"2.5 ms", 2500000},
			             {"10 us", 10000},
			             {"1 ns", 1},
			             {"0.5 min", 30000000000}};
			unsigned k = rnd(sizeof spans / sizeof spans[0]);
			g->span_text = spans[k].text;
			g->span_ns = spans[k].ns;
		}
		g->where = rnd(2) ? gen_value(a, depth - 1) : NULL;
		g->when = rnd(2) ? gen_pred(a, depth - 1) : NULL;
		return e;
	}
	e->u.op.a = gen_value(a, depth - 1);
	if (k != TQ_NEG && k != TQ_NOT)
		e->u.op.b = gen_value(a, depth - 1);
	return e;
}

static void gen_retrieve(struct tquel_arena *a, struct tquel_stmt *s)
{
	s->kind = TQ_RETRIEVE;
	struct tquel_retrieve *r = &s->u.retrieve;
	r->unique = rnd(3) == 0;
	r->into = rnd(2) ? "Result" : NULL;
	r->ntargets = 1 + rnd(3);
	r->targets = tquel_alloc(a, r->ntargets * sizeof *r->targets);
	for (size_t i = 0; i < r->ntargets; i++) {
		struct tquel_target *t = &r->targets[i];
		if (rnd(3) == 0) {
			t->value = gen_value(a, 0);
			if (t->value->kind == TQ_ATTR) {
				t->name = t->value->u.attr.name;
				t->all = !strcmp(t->name, "all"); /* V.all */
				continue;
			}
		}
		t->renamed = true;
		t->name = PICK(attrs);
		t->value = t->value ? t->value : gen_value(a, 4);
	}
	r->valid.kind = (enum tquel_valid_kind)rnd(3);
	r->valid.at = gen_time(a, 3);
	r->valid.from = gen_time(a, 3);
	r->valid.to = gen_time(a, 3);
	r->where = rnd(3) ? gen_value(a, 5) : NULL;
	r->when = rnd(3) ? gen_pred(a, 5) : NULL;
	r->asof.at = rnd(4) == 0 ? gen_time(a, 3) : NULL; /* as of E [through E2] */
	r->asof.through = r->asof.at && rnd(2) ? gen_time(a, 3) : NULL;
}

static void assert_expr_equal(const struct tquel_expr *x, const struct tquel_expr *y);

static void assert_opt_equal(const struct tquel_expr *x, const struct tquel_expr *y)
{
	assert_true(!x == !y);
	if (x)
		assert_expr_equal(x, y);
}

static void assert_expr_equal(const struct tquel_expr *x, const struct tquel_expr *y)
{
	assert_int_equal(x->kind, y->kind);
	switch (x->kind) {
	case TQ_NUMBER:
		assert_string_equal(x->u.number.lexeme, y->u.number.lexeme);
		return;
	case TQ_STRING:
		assert_string_equal(x->u.string.s, y->u.string.s);
		return;
	case TQ_ATTR:
		assert_string_equal(x->u.attr.var, y->u.attr.var);
		assert_string_equal(x->u.attr.name, y->u.attr.name);
		return;
	case TQ_TVAR:
		assert_string_equal(x->u.tvar.name, y->u.tvar.name);
		return;
	case TQ_TCONST:
		assert_string_equal(x->u.tconst.s, y->u.tconst.s);
		assert_int_equal(x->u.tconst.which, y->u.tconst.which);
		assert_int_equal(x->u.tconst.ns, y->u.tconst.ns);
		return;
	case TQ_AGG: {
		const struct tquel_agg *g = &x->u.agg, *h = &y->u.agg;
		assert_int_equal(g->fn, h->fn);
		assert_int_equal(g->unique, h->unique);
		assert_int_equal(g->window, h->window);
		assert_int_equal(g->span_ns, h->span_ns);
		if (g->window == TQ_SPAN)
			assert_string_equal(g->span_text, h->span_text);
		assert_int_equal(g->nby, h->nby);
		assert_expr_equal(g->arg, h->arg);
		for (size_t i = 0; i < g->nby; i++)
			assert_expr_equal(g->by[i], h->by[i]);
		assert_opt_equal(g->where, h->where);
		assert_opt_equal(g->when, h->when);
		return;
	}
	default:
		assert_expr_equal(x->u.op.a, y->u.op.a);
		assert_opt_equal(x->u.op.b, y->u.op.b);
	}
}

static void assert_retrieve_equal(const struct tquel_retrieve *x, const struct tquel_retrieve *y)
{
	assert_int_equal(x->unique, y->unique);
	assert_true(!x->into == !y->into);
	if (x->into)
		assert_string_equal(x->into, y->into);
	assert_int_equal(x->ntargets, y->ntargets);
	for (size_t i = 0; i < x->ntargets; i++) {
		assert_string_equal(x->targets[i].name, y->targets[i].name);
		assert_int_equal(x->targets[i].renamed, y->targets[i].renamed);
		assert_int_equal(x->targets[i].all, y->targets[i].all);
		assert_expr_equal(x->targets[i].value, y->targets[i].value);
	}
	assert_int_equal(x->valid.kind, y->valid.kind);
	if (x->valid.kind == TQ_VALID_AT)
		assert_expr_equal(x->valid.at, y->valid.at);
	if (x->valid.kind == TQ_VALID_FROM_TO) {
		assert_expr_equal(x->valid.from, y->valid.from);
		assert_expr_equal(x->valid.to, y->valid.to);
	}
	assert_opt_equal(x->where, y->where);
	assert_opt_equal(x->when, y->when);
	assert_opt_equal(x->asof.at, y->asof.at);
	assert_opt_equal(x->asof.through, y->asof.through);
}

static void test_random_statements(void **state)
{
	(void)state;
	for (int i = 0; i < 3000; i++) {
		struct tquel_arena *a = tquel_arena_new();
		struct tquel_stmt s;
		memset(&s, 0, sizeof s);
		gen_retrieve(a, &s);
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		tquel_print_stmt(&s, f);
		fclose(f);
		struct tquel_query *q = tquel_parse("random", text, len);
		if (q->nerrors || q->nstmts != 1)
			fail_msg("printed statement does not parse back:\n%s\n%s", text,
			         tquel_errors_string(q));
		assert_retrieve_equal(&s.u.retrieve, &q->stmts[0].u.retrieve);
		char *again = tquel_print_string(q);
		assert_string_equal(again, text);
		free(again);
		free(text);
		tquel_free(q);
		tquel_arena_free(a);
	}
}

static const char *const examples[] = {
    "range of S is SendMessage\nrange of W is Waiting\n"
    "retrieve ResumedbyP1 (Process = W.Process)\nvalid at end of W\n"
    "where S.Mailbox = W.Mailbox and S.Process = \"P1\"\nwhen S precede end of W\n",
    "range of RO is RunningOn\nrange of C is Clock[10]\n"
    "retrieve RunningOnEvery10 (Process = RO.Process, Processor = RO.Processor)\n"
    "when C overlap RO\n",
    "range of W is Waiting\nretrieve unique into U (W.all, n = W.all + 1) where W.all > 0\n",
    "retrieve into T (n = countU(W.P by W.M for ever where W.x > -1.5 when W overlap C), "
    "m = (W.a + 2) * 3 / W.b) valid from begin of (A overlap B) to end of A extend B\n"
    "/* comment */ where not (W.a != \"x\\\"y\" or W.b <= 3) when not A equal B or C "
    "precede D\n",
};

/* Parses text[0..len); errors must point inside the text; what parses must round-trip. */
static void check_any(const char *text, size_t len)
{
	struct tquel_query *q = tquel_parse("m", text, len);
	assert_true(q->nerrors <= TQUEL_MAX_ERRORS);
	for (size_t i = 0; i < q->nerrors; i++) {
		const struct tquel_error *e = &q->errors[i];
		assert_true(e->loc.line >= 1 && e->loc.col >= 1);
		assert_true(e->loc.off <= len);
		assert_true(e->message[0]);
	}
	char *errors = tquel_errors_string(q);
	assert_non_null(errors);
	assert_true(!q->nerrors == !errors[0]);
	free(errors);
	char *printed = tquel_print_string(q);
	struct tquel_query *q2 = tquel_parse("p", printed, strlen(printed));
	if (q2->nerrors || q2->nstmts != q->nstmts)
		fail_msg("%s\ndoes not parse back", printed);
	char *again = tquel_print_string(q2);
	assert_string_equal(again, printed);
	free(again);
	free(printed);
	tquel_free(q2);
	tquel_free(q);
}

static void test_prefixes(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof examples / sizeof examples[0]; k++)
		for (size_t n = 0; n <= strlen(examples[k]); n++)
			check_any(examples[k], n);
}

static void test_mutations(void **state)
{
	(void)state;
	static const char junk[] = "()[],.=<>!+-*/\"\\ \n\t\0@x1_";
	static const char *const words[] = {
	    "range",    "of",    "is",   "retrieve", "into",  "valid",  "at",      "from",
	    "to",       "where", "when", "and",      "or",    "not",    "precede", "overlap",
	    "equal",    "begin", "end",  "extend",   "count", "by",     "for",     "ever",
	    "Clock[3]", "(",     ")",    "\"s\"",    "1.5",   "unique", "all"};
	char buf[2048];
	for (int i = 0; i < 20000; i++) {
		const char *src = examples[rnd(sizeof examples / sizeof examples[0])];
		size_t len = strlen(src);
		memcpy(buf, src, len);
		for (unsigned m = 1 + rnd(4); m--;) {
			size_t at = rnd((unsigned)len + 1);
			switch (rnd(3)) {
			case 0: /* overwrite a byte */
				if (at < len)
					buf[at] = junk[rnd(sizeof junk)];
				break;
			case 1: /* delete a run */
				if (at < len) {
					size_t n = 1 + rnd(8);
					n = n > len - at ? len - at : n;
					memmove(buf + at, buf + at + n, len - at - n);
					len -= n;
				}
				break;
			default: { /* insert a word */
				const char *w = PICK(words);
				size_t n = strlen(w) + 1;
				if (len + n < sizeof buf) {
					memmove(buf + at + n, buf + at, len - at);
					memcpy(buf + at, w, n - 1);
					buf[at + n - 1] = ' ';
					len += n;
				}
			}
			}
		}
		check_any(buf, len);
	}
}

static void test_limits(void **state)
{
	(void)state;
	/* deep nesting is an error, not a stack overflow */
	size_t n = 100000;
	char *deep = malloc(1 << 20);
	assert_non_null(deep);
	const char *shapes[] = {"(", "-", "not ", "begin of "};
	for (size_t s = 0; s < 4; s++) {
		size_t len =
		    (size_t)sprintf(deep, s == 3 ? "retrieve (a.b) when " : "retrieve (x = ");
		for (size_t i = 0; i < n / strlen(shapes[s]); i++)
			len += (size_t)sprintf(deep + len, "%s", shapes[s]);
		struct tquel_query *q = tquel_parse("deep", deep, len);
		assert_int_equal(q->nerrors, 1);
		assert_non_null(strstr(q->errors[0].message, "nested more than"));
		tquel_free(q);
	}
	/* a long chain is not nesting: it parses, up to TQUEL_MAX_HEIGHT operators, and
	 * beyond is one error, since every later pass walks the tree recursively */
	size_t len = 0;
	struct tquel_query *q;
	for (int over = 0; over < 2; over++) {
		size_t links = over ? 3 * TQUEL_MAX_HEIGHT : TQUEL_MAX_HEIGHT / 2 - 2;
		len = (size_t)sprintf(deep, "retrieve (x = 1");
		for (size_t i = 0; i < 2 * links; i++)
			len += (size_t)sprintf(deep + len, " + 1");
		len += (size_t)sprintf(deep + len, ") when A");
		for (size_t i = 0; i < links; i++)
			len += (size_t)sprintf(deep + len, " extend A overlap B");
		q = tquel_parse("long", deep, len);
		if (over) {
			assert_int_equal(q->nerrors, 1); /* the when clause follows the error */
			assert_non_null(strstr(q->errors[0].message, "operators deep"));
		} else {
			assert_int_equal(q->nerrors, 0);
			assert_int_equal(q->stmts[0].u.retrieve.when->kind, TQ_OVERLAPS);
		}
		tquel_free(q);
	}
	/* errors stop at TQUEL_MAX_ERRORS */
	len = 0;
	for (size_t i = 0; i < 1000; i++)
		len += (size_t)sprintf(deep + len, "range of\n");
	q = tquel_parse("many", deep, len);
	assert_int_equal(q->nerrors, TQUEL_MAX_ERRORS);
	char *errors = tquel_errors_string(q);
	assert_non_null(strstr(errors, "many: error: too many errors (100), stopped\n"));
	free(errors);
	tquel_free(q);
	free(deep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_random_statements),
	    cmocka_unit_test(test_prefixes),
	    cmocka_unit_test(test_mutations),
	    cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
