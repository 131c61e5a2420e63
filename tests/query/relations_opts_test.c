/* The build options of the relations layer (vgq_database_build_opts) on a recording of
 * the mailbox example: a `keep` filter dropping one event type, and interval ends
 * without their begin (a monitor that enabled only the end sensor). Also the
 * begin_unknown column through the relation store's growth and resize.
 *
 * usage: test_relations_opts [TRACE]   (without a trace: the store test only) */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "relations/columns.h"
#include "relations/relation.h"

static const char *trace_path;

static struct vgt_trace *open_trace(void)
{
	char err[256];
	const char *paths[] = {trace_path};
	struct vgt_trace *t = vgt_open(paths, 1, err, sizeof err);
	if (!t)
		fail_msg("%s", err);
	return t;
}

static const struct vgq_relation *find(const struct vgq_database *db, const char *name)
{
	const struct vgq_relation *r = vgq_database_find(db, name);
	if (!r)
		fail_msg("no relation %s", name);
	return r;
}

static int same_text(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Tuple i of x and of y hold equal values (strings of two databases compared as text). */
static void assert_same_values(const struct vgq_relation *x, const struct vgq_relation *y, size_t i)
{
	for (size_t a = 0; a < x->nattrs; a++) {
		const union vgq_column *p = &x->cols[a], *q = &y->cols[a];
		switch (x->attrs[a].type) {
		case VGQ_INT:
			assert_int_equal(p->i[i], q->i[i]);
			break;
		case VGQ_UINT:
			assert_int_equal(p->u[i], q->u[i]);
			break;
		case VGQ_DOUBLE:
			assert_true(p->d[i] == q->d[i]);
			break;
		case VGQ_STRING:
			assert_true(same_text(p->s[i], q->s[i]));
			break;
		case VGQ_BYTES:
			assert_int_equal(p->b[i].len, q->b[i].len);
			assert_true(!p->b[i].len || !memcmp(p->b[i].ptr, q->b[i].ptr, p->b[i].len));
			break;
		case VGQ_ENTITY:
			assert_int_equal(p->r[i].id, q->r[i].id);
			assert_int_equal(p->r[i].gen, q->r[i].gen);
			assert_int_equal(p->r[i].image, q->r[i].image);
			assert_true(same_text(p->r[i].name, q->r[i].name));
			break;
		}
	}
}

static void assert_same_relation(const struct vgq_relation *x, const struct vgq_relation *y)
{
	assert_string_equal(x->name, y->name);
	assert_int_equal(x->kind, y->kind);
	assert_int_equal(x->nattrs, y->nattrs);
	assert_int_equal(x->ntuples, y->ntuples);
	assert_int_equal(x->unmatched_ends, y->unmatched_ends);
	assert_int_equal(x->open_at_end, y->open_at_end);
	assert_null(x->begin_unknown);
	assert_null(y->begin_unknown);
	for (size_t i = 0; i < x->ntuples; i++) {
		assert_int_equal(x->from[i], y->from[i]);
		if (x->to) {
			assert_int_equal(x->to[i], y->to[i]);
			assert_int_equal(x->open[i], y->open[i]);
		}
		assert_same_values(x, y, i);
	}
}

/* ---- keep ---- */

static bool drop_type(void *arg, const struct vgt_event *ev)
{
	return strcmp(ev->type->name, (const char *)arg) != 0;
}

static uint64_t count_type(struct vgt_trace *t, const char *name)
{
	uint64_t n = 0;
	struct vgt_merge *m = vgt_merge_open(t);
	const struct vgt_event *ev;
	while ((ev = vgt_merge_next(m)))
		n += !strcmp(ev->type->name, name);
	vgt_merge_close(m);
	return n;
}

static void keep_drops_one_type(void **state)
{
	(void)state;
	struct vgt_trace *t = open_trace();
	struct vgq_database *full = vgq_database_build(t);
	struct vgq_build_options o = {.keep = drop_type, .keep_arg = "mailbox.SendMessage"};
	struct vgq_database *part = vgq_database_build_opts(t, &o);
	uint64_t sends = count_type(t, "mailbox.SendMessage");

	assert_true(sends > 0);
	assert_int_equal(find(full, "SendMessage")->ntuples, sends);
	assert_int_equal(find(part, "SendMessage")->ntuples, 0);
	assert_int_equal(part->events, full->events - sends);
	/* the run neither starts nor ends with a message: the span is the same */
	assert_int_equal(part->first, full->first);
	assert_int_equal(part->last, full->last);
	assert_int_equal(part->nrelations, full->nrelations);
	for (size_t i = 0; i < full->nrelations; i++)
		if (strcmp(full->relations[i]->name, "SendMessage"))
			assert_same_relation(full->relations[i], part->relations[i]);

	/* keeping everything is the plain build */
	struct vgq_build_options all = {0};
	struct vgq_database *same = vgq_database_build_opts(t, &all);
	assert_int_equal(same->events, full->events);
	for (size_t i = 0; i < full->nrelations; i++)
		assert_same_relation(full->relations[i], same->relations[i]);
	vgq_database_free(same);
	vgq_database_free(part);
	vgq_database_free(full);
	vgt_close(t);
}

/* ---- ends without their begin ---- */

struct closed {
	int64_t to;
	uint64_t process, mailbox;
};

static int by_closed(const void *a, const void *b)
{
	const struct closed *x = a, *y = b;
	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	return x->mailbox < y->mailbox ? -1 : x->mailbox > y->mailbox;
}

/* (end time, process, mailbox) of every closed tuple of Waiting, sorted. */
static struct closed *closed_tuples(const struct vgq_relation *r, size_t *n)
{
	int p = vgq_relation_attr(r, "process"), m = vgq_relation_attr(r, "mailbox");
	assert_true(p >= 0 && m >= 0);
	struct closed *c = calloc(r->ntuples + 1, sizeof *c);
	*n = 0;
	for (size_t i = 0; i < r->ntuples; i++)
		if (!r->open[i])
			c[(*n)++] =
			    (struct closed){r->to[i], r->cols[p].r[i].id, r->cols[m].r[i].id};
	qsort(c, *n, sizeof *c, by_closed);
	return c;
}

static void ends_without_begin(void **state)
{
	(void)state;
	struct vgt_trace *t = open_trace();
	struct vgq_database *full = vgq_database_build(t);
	struct vgq_build_options o = {
	    .keep = drop_type, .keep_arg = "mailbox.Waiting.begin", .ends_without_begin = true};
	struct vgq_database *part = vgq_database_build_opts(t, &o);
	const struct vgq_relation *fw = find(full, "Waiting"), *pw = find(part, "Waiting");

	assert_true(fw->ntuples >= 10);
	assert_int_equal(fw->unmatched_ends, 0);
	assert_null(fw->begin_unknown);
	size_t nclosed;
	struct closed *want = closed_tuples(fw, &nclosed);
	assert_int_equal(pw->ntuples, nclosed);
	assert_int_equal(pw->unmatched_ends, nclosed);
	assert_int_equal(pw->open_at_end, 0);
	assert_non_null(pw->begin_unknown);
	for (size_t i = 0; i < pw->ntuples; i++) {
		assert_true(pw->begin_unknown[i]);
		assert_false(pw->open[i]);
		assert_int_equal(pw->from[i], pw->to[i]);
		if (i)
			assert_true(pw->from[i - 1] <= pw->from[i]);
	}
	/* each is the end of one tuple of the full build, with its values */
	size_t n;
	struct closed *got = closed_tuples(pw, &n);
	assert_int_equal(n, nclosed);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(got[i].to, want[i].to);
		assert_int_equal(got[i].process, want[i].process);
		assert_int_equal(got[i].mailbox, want[i].mailbox);
	}
	/* the other relations know nothing of it */
	for (size_t i = 0; i < full->nrelations; i++)
		if (strcmp(full->relations[i]->name, "Waiting"))
			assert_null(part->relations[i]->begin_unknown);
	free(got);
	free(want);

	/* with every begin there, the option changes nothing */
	struct vgq_build_options only = {.ends_without_begin = true};
	struct vgq_database *same = vgq_database_build_opts(t, &only);
	for (size_t i = 0; i < full->nrelations; i++)
		assert_same_relation(full->relations[i], same->relations[i]);
	vgq_database_free(same);
	vgq_database_free(part);
	vgq_database_free(full);
	vgt_close(t);
}

/* ---- the store keeps the column with the others ---- */

static void store_keeps_begin_unknown(void **state)
{
	(void)state;
	struct vgq_relation *r = vgq_relation_new("W", VGQ_REL_INTERVAL);
	vgq_relation_add_attr(r, "x", VGQ_UINT, NULL);
	for (int64_t i = 0; i < 20; i++)
		vgq_relation_append(r, i);
	assert_null(r->begin_unknown);
	vgq_relation_set_begin_unknown(r, 5);
	vgq_relation_set_begin_unknown(r, 19);
	for (int64_t i = 20; i < 100; i++) { /* grows past 32 and 64 */
		size_t t = vgq_relation_append(r, i);
		if (i % 7 == 0)
			vgq_relation_set_begin_unknown(r, t);
	}
	assert_int_equal(r->ntuples, 100);
	for (size_t i = 0; i < 100; i++)
		assert_int_equal(r->begin_unknown[i], i == 5 || i == 19 || (i >= 20 && i % 7 == 0));
	vgq_relation_resize(r, 3); /* all zero again: no tuple has it */
	assert_null(r->begin_unknown);
	vgq_relation_set_begin_unknown(r, 2);
	assert_true(r->begin_unknown[2] && !r->begin_unknown[0]);
	vgq_relation_free(r);
}

int main(int argc, char **argv)
{
	trace_path = argc > 1 ? argv[1] : NULL;
	const struct CMUnitTest store[] = {cmocka_unit_test(store_keeps_begin_unknown)};
	const struct CMUnitTest traced[] = {
	    cmocka_unit_test(store_keeps_begin_unknown),
	    cmocka_unit_test(keep_drops_one_type),
	    cmocka_unit_test(ends_without_begin),
	};
	if (!trace_path)
		return cmocka_run_group_tests(store, NULL, NULL);
	return cmocka_run_group_tests(traced, NULL, NULL);
}
