/* Unit tests of the checked model (src/lang/model.h): what vgl_load builds from small
 * sources written to a temporary folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../unit/reader_tracegen.h"
#include "lang/lang.h"

static char *dir; /* tg_tempdir: under $TMPDIR, removed at the end */

static const char *write_file(const char *name, const char *text)
{
	static char path[4][256];
	static int k;
	char *p = path[k++ % 4];
	snprintf(p, 256, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

/* Loads `text` as NAME; errors go to a buffer returned in *errors (if not NULL). */
static struct vgl_model *load(const char *name, const char *text, int *nerrors, char **errors)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&buf, &len);
	int n = -1;
	struct vgl_model *m = vgl_load(write_file(name, text), err, &n);
	fclose(err);
	if (nerrors)
		*nerrors = n;
	if (errors)
		*errors = buf;
	else
		free(buf);
	return m;
}

static const struct vgl_record *record(const struct vgl_model *m, const char *name)
{
	for (size_t i = 0; i < m->nrecords; i++)
		if (!strcmp(m->records[i].name, name))
			return &m->records[i];
	fail_msg("no record %s", name);
	return NULL;
}

static const struct vgl_sensor *sensor(const struct vgl_model *m, const char *name)
{
	for (size_t i = 0; i < m->nsensors; i++)
		if (!strcmp(m->sensors[i].name, name))
			return &m->sensors[i];
	fail_msg("no sensor %s", name);
	return NULL;
}

static const char payload_src[] =
    "package net;\n"
    "entity Peer;\n"
    "struct Session from \"server.h\" { uint64 id; string user max 8; Session next; }\n"
    "struct Conn from \"server.h\" { int32 fd; Peer peer; Session session; bytes key max 16; }\n"
    "record Base { uint16 port; }\n"
    "record Req extends Base { Conn conn { fd, session { user, next } }; Conn other; bool ok; }\n";

static void flattening_order(void **state)
{
	(void)state;
	struct vgl_model *m = load("net.vgl", payload_src, NULL, NULL);
	assert_non_null(m);
	const struct vgl_record *r = record(m, "Req");
	static const char *const names[] = {
	    "port", "conn.fd", "conn.session.user", "conn.session.next", "other", "ok"};
	static const enum vgl_type types[] = {VGL_UINT16, VGL_INT32,  VGL_STRING,
	                                      VGL_UINT64, VGL_UINT64, VGL_BOOL};
	static const bool ids[] = {false, false, false, true, true, false};
	static const size_t npath[] = {0, 1, 2, 2, 0, 0};
	assert_int_equal(r->nfields, 6);
	for (size_t i = 0; i < 6; i++) {
		assert_string_equal(r->fields[i].name, names[i]);
		assert_int_equal(r->fields[i].type, types[i]);
		assert_int_equal(r->fields[i].is_struct_id, ids[i]);
		assert_int_equal(r->fields[i].npath, npath[i]);
	}
	/* The path runs from the property's struct down. */
	assert_string_equal(r->fields[2].path[0]->name, "session");
	assert_string_equal(r->fields[2].path[1]->name, "user");
	assert_int_equal(r->fields[2].max, 8);
	assert_string_equal(r->fields[0].prop->name, "port");
	assert_ptr_equal(r->fields[0].prop->owner, record(m, "Base"));
	assert_string_equal(r->fields[1].prop->name, "conn");
	/* The selection as the property holds it. */
	const struct vgl_property *conn = &r->props[0];
	assert_int_equal(conn->type, VGL_STRUCT);
	assert_string_equal(conn->st->name, "Conn");
	assert_string_equal(conn->st->header, "server.h");
	assert_int_equal(conn->nsel, 2);
	assert_string_equal(conn->sel[1].member->name, "session");
	assert_int_equal(conn->sel[1].nsub, 2);
	assert_null(conn->sel[0].sub);
	assert_ptr_equal(conn->sel[1].member->st, conn->sel[1].sub[1].member->st);
	vgl_free(m);
}

static void inherited_properties(void **state)
{
	(void)state;
	struct vgl_model *m = load("inh.vgl",
	                           "record C extends B { uint8 c; }\n"
	                           "record A { uint8 a; uint8 a2; }\n"
	                           "record B extends A max 100 { uint8 b; }\n",
	                           NULL, NULL);
	assert_non_null(m);
	/* Parents come before their children in m->records. */
	assert_string_equal(m->records[0].name, "A");
	assert_string_equal(m->records[1].name, "B");
	assert_string_equal(m->records[2].name, "C");
	const struct vgl_record *c = record(m, "C");
	assert_ptr_equal(c->parent, record(m, "B"));
	assert_int_equal(c->nprops, 1);
	assert_int_equal(c->nall, 4);
	static const char *const names[] = {"a", "a2", "b", "c"};
	static const char *const owners[] = {"A", "A", "B", "C"};
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(c->all[i]->name, names[i]);
		assert_string_equal(c->all[i]->owner->name, owners[i]);
	}
	assert_ptr_equal(c->all[0], &record(m, "A")->props[0]);
	/* The max size is inherited unless declared. */
	assert_int_equal(record(m, "A")->max_size, 0);
	assert_int_equal(record(m, "B")->max_size, 100);
	assert_int_equal(c->max_size, 100);
	vgl_free(m);
}

static void defaults_from_consts(void **state)
{
	(void)state;
	struct vgl_model *m = load(
	    "defs.vgl",
	    "record R {\n"
	    "  uint32 p = LIMIT; int8 n = -128; float64 f = 2; uint64 big = 0xffffffffffffffff;\n"
	    "  string s max 4 = \"a\\tb\"; bool b = true; bytes raw max 3 = \"\\x00\\x01\";\n"
	    "  uint8 none;\n"
	    "}\n"
	    "const uint32 LIMIT = 4096;\n",
	    NULL, NULL);
	assert_non_null(m);
	assert_int_equal(m->nconsts, 1);
	assert_int_equal(m->consts[0].value.u, 4096);
	const struct vgl_property *p = record(m, "R")->props;
	assert_true(p[0].has_default);
	assert_ptr_equal(p[0].def_const, &m->consts[0]);
	assert_int_equal(p[0].def.kind, VGL_LIT_INT);
	assert_int_equal(p[0].def.u, 4096);
	assert_null(p[1].def_const);
	assert_int_equal(p[1].def.i, -128);
	assert_int_equal(p[2].def.kind, VGL_LIT_FLOAT); /* an integer literal for a float64 */
	assert_true(p[2].def.d == 2.0);
	assert_true(p[3].def.u == UINT64_MAX);
	assert_int_equal(p[4].def.slen, 3);
	assert_memory_equal(p[4].def.s, "a\tb", 3);
	assert_true(p[5].def.b);
	assert_int_equal(p[6].def.slen, 2);
	assert_memory_equal(p[6].def.s, "\0\1", 2);
	assert_false(p[7].has_default);
	vgl_free(m);
}

static void worst_size(void **state)
{
	(void)state;
	struct vgl_model *m = load("net.vgl", payload_src, NULL, NULL);
	assert_non_null(m);
	/* port 2, conn.fd 4, conn.session.user 8+1, conn.session.next 8, other 8, ok 1 */
	assert_int_equal(record(m, "Req")->worst_size, 2 + 4 + 9 + 8 + 8 + 1);
	assert_int_equal(record(m, "Base")->worst_size, 2);
	vgl_free(m);
	m = load("sizes.vgl",
	         "entity E;\n"
	         "record S max 37 { E e; bytes b max 10; float64 d; int16 i; bool x; }\n"
	         "record U { string s; }\n",
	         NULL, NULL);
	assert_non_null(m);
	assert_int_equal(record(m, "S")->worst_size, 12 + 14 + 8 + 2 + 1);
	assert_int_equal(record(m, "U")->worst_size, UINT32_MAX); /* unbounded */
	vgl_free(m);
	/* One byte more than the max is refused. */
	int n = 0;
	char *errors;
	m = load("big.vgl", "record S max 32 { bytes b max 29; }\n", &n, &errors);
	assert_null(m);
	assert_int_equal(n, 1);
	assert_non_null(strstr(errors, "big.vgl:1:14: error: record 'S' encodes to up to 33 bytes, "
	                               "more than its max 32"));
	free(errors);
}

static void roles_and_sensors(void **state)
{
	(void)state;
	struct vgl_model *m =
	    load("roles.vgl",
	         "entity Proc; entity Box;\n"
	         "struct Msg { Proc owner; uint32 n; }\n"
	         "record R { uint32 x; Msg msg { n, owner }; Box box; Proc who; }\n"
	         "sensor Send : interval R { sampled; performer msg.owner;\n"
	         "  target box; initiator who; flag target counter; }\n"
	         "sensor Plain : event R { }\n",
	         NULL, NULL);
	assert_non_null(m);
	assert_string_equal(m->package, "roles"); /* the file's base name */
	const struct vgl_sensor *s = sensor(m, "Send");
	assert_string_equal(s->event_name, "roles.Send");
	assert_int_equal(s->relation, VGL_REL_INTERVAL);
	assert_ptr_equal(s->record, record(m, "R"));
	assert_true(s->sampled);
	/* fields: x, msg.n, msg.owner, box, who */
	assert_int_equal(s->performer, 2);
	assert_int_equal(s->target, 3);
	assert_int_equal(s->initiator, 4);
	assert_ptr_equal(s->record->fields[2].entity, &m->entities[0]);
	assert_int_equal(s->flag, VGL_FLAG_TARGET);
	assert_true(s->counter);
	const struct vgl_sensor *p = sensor(m, "Plain");
	assert_false(p->sampled);
	assert_int_equal(p->performer, -1);
	assert_int_equal(p->initiator, -1);
	assert_int_equal(p->target, -1);
	assert_int_equal(p->flag, VGL_FLAG_SENSOR);
	assert_false(p->counter);
	vgl_free(m);
}

static void imports_once(void **state)
{
	(void)state;
	write_file("common.vgl", "package common; entity Proc; const uint8 ONE = 1;\n"
	                         "record Base { Proc p; } sensor Tick : event Base { }\n");
	write_file("mid.vgl",
	           "import \"common.vgl\"; record Mid extends Base { uint8 m = ONE; }\n");
	struct vgl_model *m =
	    load("top.vgl",
	         "package app.top;\nimport \"mid.vgl\";\nimport \"common.vgl\";\n"
	         "record Top extends Mid { }\nsensor Go : event Top { performer p; }\n",
	         NULL, NULL);
	assert_non_null(m);
	assert_string_equal(m->package, "app.top");
	assert_int_equal(m->nfiles, 3);
	assert_non_null(strstr(m->files[0], "top.vgl"));
	assert_non_null(strstr(m->files[1], "mid.vgl"));
	assert_non_null(strstr(m->files[2], "common.vgl"));
	assert_int_equal(m->nentities, 1);
	assert_int_equal(m->nrecords, 3);
	/* A sensor's event name has the package of its own file. */
	assert_string_equal(sensor(m, "Tick")->event_name, "common.Tick");
	assert_string_equal(sensor(m, "Go")->event_name, "app.top.Go");
	assert_int_equal(sensor(m, "Go")->performer, 0);
	vgl_free(m);
}

static void all_errors_reported(void **state)
{
	(void)state;
	int n = 0;
	char *errors;
	struct vgl_model *m = load("errs.vgl",
	                           "record A { Nope x; uint8 y = 256; }\n"
	                           "record B { uint8 z }\n"
	                           "sensor S : event Missing { }\n",
	                           &n, &errors);
	assert_null(m);
	assert_int_equal(n, 4);
	const char *expect[] = {
	    "errs.vgl:1:12: error: unknown type 'Nope'\n",
	    "errs.vgl:1:30: error: default of 'y': 256 is out of range for uint8\n",
	    "errs.vgl:2:19: error: expected ';' after property\n",
	    "errs.vgl:3:18: error: unknown record 'Missing'\n"};
	const char *at = errors;
	for (size_t i = 0; i < 4; i++) {
		const char *hit = strstr(at, expect[i]);
		assert_non_null(hit); /* and in this order */
		at = hit + 1;
	}
	free(errors);
}

/* The mailbox example's sensors, as the hand-written descriptors of examples/mailbox had
 * them before generation (relation, roles, flag placement, sampled). */
static void mailbox_sensors(void **state)
{
	(void)state;
	int n = 0;
	struct vgl_model *m = vgl_load(VGL_GOOD_DIR "/mailbox.vgl", stderr, &n);
	assert_non_null(m);
	assert_string_equal(m->package, "mailbox");
	assert_int_equal(m->nentities, 3);
	const struct vgl_sensor *s = sensor(m, "SendMessage");
	assert_string_equal(s->event_name, "mailbox.SendMessage");
	assert_int_equal(s->relation, VGL_REL_EVENT);
	assert_int_equal(s->initiator, 0);
	assert_int_equal(s->target, 1);
	assert_int_equal(s->performer, -1);
	assert_int_equal(s->flag, VGL_FLAG_INITIATOR);
	assert_false(s->sampled);
	assert_true(s->record->props[3].has_default);
	s = sensor(m, "Waiting");
	assert_int_equal(s->relation, VGL_REL_INTERVAL);
	assert_int_equal(s->flag, VGL_FLAG_TARGET);
	assert_true(s->counter);
	assert_int_equal(s->initiator, 0);
	assert_int_equal(s->target, 1);
	s = sensor(m, "RunningOn");
	assert_true(s->sampled);
	assert_int_equal(s->flag, VGL_FLAG_PERFORMER);
	assert_int_equal(s->performer, 1);
	assert_int_equal(s->target, 0);
	assert_string_equal(s->record->fields[1].entity->name, "Processor");
	s = sensor(m, "State");
	assert_int_equal(s->relation, VGL_REL_STATE);
	assert_int_equal(s->flag, VGL_FLAG_SENSOR);
	assert_int_equal(s->target, 0);
	assert_int_equal(s->record->worst_size, 12 + 16);
	vgl_free(m);
}

static void payload_depth(void **state)
{
	(void)state;
	struct vgl_model *m = vgl_load(VGL_GOOD_DIR "/payload.vgl", stderr, NULL);
	assert_non_null(m);
	const struct vgl_record *r = record(m, "Visit");
	assert_string_equal(r->fields[2].name, "node.left.left.left.owner");
	assert_int_equal(r->fields[2].npath, 4);
	assert_int_equal(r->fields[2].type, VGL_ENTITY);
	assert_string_equal(r->fields[3].name, "node.right");
	assert_true(r->fields[3].is_struct_id);
	assert_int_equal(sensor(m, "Walk")->performer, 2);
	assert_int_equal(r->worst_size, 4 + 4 + 12 + 8 + 8 + 8 + 8 + 8 + 8 + 1 + 1 + 7);
	assert_true(record(m, "Visit")->all[2]->def.i == INT64_MIN);
	vgl_free(m);
}

/* The category clause gives every event type its op (tests/lang/good/ops.vgl). */
static void sensor_ops(void **state)
{
	(void)state;
	struct vgl_model *m = vgl_load(VGL_GOOD_DIR "/ops.vgl", stderr, NULL);
	assert_non_null(m);
	static const struct {
		const char *sensor;
		enum vgl_op op, end_op;
	} want[] = {
	    {"New", VGL_OP_CREATE, VGL_OP_CREATE},
	    {"Free", VGL_OP_RECLAIM, VGL_OP_RECLAIM},
	    {"Name", VGL_OP_RENAME, VGL_OP_RENAME},
	    {"Define", VGL_OP_LOAD, VGL_OP_LOAD},
	    {"Invoke", VGL_OP_ENTER, VGL_OP_LEAVE},
	    {"Run", VGL_OP_ENTER, VGL_OP_LEAVE},
	    {"Unbounded", VGL_OP_CREATE, VGL_OP_CREATE},
	    {"Held", VGL_OP_ACQUIRE, VGL_OP_RELEASE},
	    {"Waiting", VGL_OP_WAIT_BEGIN, VGL_OP_WAIT_END},
	    {"Take", VGL_OP_ACQUIRE, VGL_OP_ACQUIRE},
	    {"Give", VGL_OP_RELEASE, VGL_OP_RELEASE},
	    {"WaitOn", VGL_OP_WAIT_BEGIN, VGL_OP_WAIT_BEGIN},
	    {"WaitOff", VGL_OP_WAIT_END, VGL_OP_WAIT_END},
	    {"Stop", VGL_OP_SUSPEND, VGL_OP_SUSPEND},
	    {"Go", VGL_OP_RESUME, VGL_OP_RESUME},
	    {"Points", VGL_OP_REFERENCE, VGL_OP_REFERENCE},
	    {"Moved", VGL_OP_MOVE, VGL_OP_MOVE},
	    {"Touch", VGL_OP_ACTIVITY, VGL_OP_ACTIVITY},
	    {"Span", VGL_OP_ACTIVITY, VGL_OP_ACTIVITY},
	    {"Status", VGL_OP_ACTIVITY, VGL_OP_ACTIVITY},
	};
	assert_int_equal(m->nsensors, sizeof want / sizeof *want);
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		const struct vgl_sensor *s = sensor(m, want[i].sensor);
		assert_int_equal(s->op, want[i].op);
		assert_int_equal(s->end_op, want[i].end_op);
	}
	assert_int_equal(sensor(m, "Held")->target, 0);
	vgl_free(m);
}

int main(void)
{
	dir = tg_tempdir();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(flattening_order),     cmocka_unit_test(inherited_properties),
	    cmocka_unit_test(defaults_from_consts), cmocka_unit_test(worst_size),
	    cmocka_unit_test(roles_and_sensors),    cmocka_unit_test(imports_once),
	    cmocka_unit_test(all_errors_reported),  cmocka_unit_test(mailbox_sensors),
	    cmocka_unit_test(payload_depth),        cmocka_unit_test(sensor_ops),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	tg_rmtree(dir);
	free(dir);
	return failed;
}
