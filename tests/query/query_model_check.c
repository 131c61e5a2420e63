/* Checks vgq_database_from_model() on one sensor description: the database has no tuples,
 * every relation can be ranged over by a query, and, given a recording of a program with
 * these sensors, its relations have the recording's names, kinds and attributes (name,
 * type, entity kind, order).
 *
 * usage: query_model_check FILE.vgl [TRACE [--subset]]
 *   without --subset the two sets of relations must be equal; with it, the recording's
 *   must all be in the model's, and the model may have more entity relations only (kinds
 *   the run never created an entity of).
 * Prints the model's relations; exit 0 if all checks pass, 1 otherwise. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang.h"
#include "query/engine.h"
#include "relations/relation.h"

static int failures;

static void fail(const char *fmt, const char *a, const char *b)
{
	printf("FAIL: ");
	printf(fmt, a, b ? b : "");
	printf("\n");
	failures++;
}

static void print_db(const struct vgq_database *db)
{
	for (size_t i = 0; i < db->nrelations; i++) {
		const struct vgq_relation *r = db->relations[i];
		printf("%s %s (", r->name, vgq_rkind_name(r->kind));
		for (size_t a = 0; a < r->nattrs; a++)
			printf("%s%s %s%s%s", a ? ", " : "", r->attrs[a].name,
			       vgq_type_name(r->attrs[a].type), r->attrs[a].ref_kind ? " " : "",
			       r->attrs[a].ref_kind ? r->attrs[a].ref_kind : "");
		printf(")\n");
	}
}

static bool same_text(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static void compare_relation(const struct vgq_relation *m, const struct vgq_relation *t)
{
	if (strcmp(m->name, t->name))
		fail("relation %s: named %s in the recording", m->name, t->name);
	if (m->kind != t->kind)
		fail("relation %s: kind differs (recording: %s)", m->name, vgq_rkind_name(t->kind));
	if (m->nattrs != t->nattrs) {
		fail("relation %s: attribute count differs%s", m->name, NULL);
		return;
	}
	for (size_t a = 0; a < m->nattrs; a++) {
		const struct vgq_attr *x = &m->attrs[a], *y = &t->attrs[a];
		if (strcmp(x->name, y->name) || x->type != y->type ||
		    !same_text(x->ref_kind, y->ref_kind))
			fail("relation %s: attribute %s differs from the recording's", m->name,
			     x->name);
	}
}

static void compare(const struct vgq_database *model, const struct vgq_database *trace, bool subset)
{
	for (size_t i = 0; i < trace->nrelations; i++) {
		const struct vgq_relation *t = trace->relations[i];
		const struct vgq_relation *m = vgq_database_find(model, t->name);
		if (!m)
			fail("relation %s of the recording is not in the model's database%s",
			     t->name, NULL);
		else
			compare_relation(m, t);
	}
	for (size_t i = 0; i < model->nrelations; i++) {
		const struct vgq_relation *m = model->relations[i];
		if (vgq_database_find(trace, m->name))
			continue;
		if (!subset || m->kind != VGQ_REL_ENTITY)
			fail("relation %s of the model is not in the recording%s", m->name, NULL);
	}
}

static int emit(void *ctx, const struct vgq_relation *result)
{
	(void)ctx;
	if (result->ntuples)
		fail("a query over the model's database gave tuples%s%s", "", NULL);
	return 0;
}

/* Every relation is known to the binder: one retrieve of all its attributes each. */
static void bind_all(struct vgq_database *db)
{
	for (size_t i = 0; i < db->nrelations; i++) {
		const struct vgq_relation *r = db->relations[i];
		if (strchr(r->name, '.') || !r->nattrs) /* vg.process.exec: not a TQuel name */
			continue;
		char text[4096];
		int n = snprintf(text, sizeof text, "range of x is %s\nretrieve (", r->name);
		for (size_t a = 0; a < r->nattrs && n < 3000; a++)
			n += snprintf(text + n, sizeof text - (size_t)n, "%sa%zu = x.%s",
			              a ? ", " : "", a, r->attrs[a].name);
		snprintf(text + n, sizeof text - (size_t)n, ")\n");
		struct tquel_query *q = tquel_parse("model", text, strlen(text));
		struct vgq_options o = {.tick_ns = 1000000};
		struct vgq_session *s = vgq_session_new(db, &o);
		if (vgq_run(s, q, emit, NULL, stdout))
			fail("query over relation %s does not bind:\n%s", r->name, text);
		vgq_session_free(s);
		tquel_free(q);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: query_model_check FILE.vgl [TRACE [--subset]]\n");
		return 2;
	}
	int nerrors = 0;
	struct vgl_model *m = vgl_load(argv[1], stderr, &nerrors);
	if (!m) {
		fprintf(stderr, "query_model_check: %s: %d error(s)\n", argv[1], nerrors);
		return 2;
	}
	struct vgq_database *model = vgq_database_from_model(m);
	vgl_free(m); /* the database keeps nothing of the model */
	print_db(model);
	if (model->events || model->nrelations < 3)
		fail("the model's database has events or too few relations%s%s", "", NULL);
	for (size_t i = 0; i < model->nrelations; i++)
		if (model->relations[i]->ntuples)
			fail("relation %s of the model has tuples%s", model->relations[i]->name,
			     NULL);
	for (const char *k = "OSProcess"; k; k = strcmp(k, "OSProcess") ? NULL : "OSThread") {
		const struct vgq_relation *r = vgq_database_find(model, k);
		if (!r || r->kind != VGQ_REL_ENTITY || r->nattrs < 3)
			fail("no entity relation %s%s", k, NULL);
	}
	bind_all(model);

	if (argc >= 3) {
		char err[256];
		const char *paths[] = {argv[2]};
		struct vgt_trace *t = vgt_open(paths, 1, err, sizeof err);
		if (!t) {
			fprintf(stderr, "query_model_check: %s\n", err);
			return 2;
		}
		struct vgq_database *trace = vgq_database_build(t);
		printf("-- the recording:\n");
		print_db(trace);
		compare(model, trace, argc == 4 && !strcmp(argv[3], "--subset"));
		vgq_database_free(trace);
		vgt_close(t);
	}
	vgq_database_free(model);
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
