/* The relations layer on traces built byte by byte (tests/unit/reader_tracegen.h):
 * begin/end pairing, state chains, entity lifetimes, open tuples, damage. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reader_tracegen.h"
#include "relations/relation.h"

#define BASE 1700000000000000000ll /* the generator's clock offset, in ns */
#define W_BEGIN 10
#define W_END 11
#define STATE 12
#define MODE 13
#define RECLAIM 14
#define ENTITY_NAME 15
#define JOB_BEGIN 16
#define JOB_END 17

static const char *const REFS = "struct vg_ref process; struct vg_ref mailbox;";

static struct tg_image *image(const char *root)
{
	struct tg_image *img = tg_image_new(root, "app-42-0", NULL);
	tg_declare(img, "w.begin", W_BEGIN,
	           "vigil:kind=begin;flag=sensor;traced;relation=Waiting;initiator=process;"
	           "ref.process=Process;ref.mailbox=Mailbox",
	           REFS);
	tg_declare(img, "w.end", W_END,
	           "vigil:kind=end;flag=sensor;traced;relation=Waiting;initiator=process;"
	           "ref.process=Process;ref.mailbox=Mailbox",
	           REFS);
	tg_declare(img, "st", STATE,
	           "vigil:kind=state;flag=sensor;traced;relation=ProcessState;target=process;"
	           "ref.process=Process",
	           "struct vg_ref process; string state;");
	tg_declare(img, "mode", MODE, "vigil:kind=state;flag=sensor;traced", "uint32_t level;");
	tg_declare_builtin(img, "vg.entity.reclaim", RECLAIM);
	tg_declare_builtin(img, "vg.entity.name", ENTITY_NAME);
	tg_declare(img, "job.begin", JOB_BEGIN, "vigil:kind=begin;flag=sensor;traced;relation=Job",
	           "uint32_t job;");
	tg_declare(img, "job.end", JOB_END, "vigil:kind=end;flag=sensor;traced;relation=Job",
	           "uint32_t job; int32_t status;");
	tg_write_metadata(img);
	return img;
}

static void create(struct tg_stream *s, uint64_t ts, const char *kind, uint64_t id, uint32_t gen,
                   const char *name)
{
	tg_event(s, TG_ENTITY_CREATE, ts);
	tg_str(s, kind);
	tg_u64(s, id);
	tg_u32(s, gen);
	tg_str(s, name);
}

static void wait_event(struct tg_stream *s, uint16_t id, uint64_t ts, uint64_t proc, uint64_t mbox,
                       uint32_t mbox_gen)
{
	tg_event(s, id, ts);
	tg_ref(s, proc, 1);
	tg_ref(s, mbox, mbox_gen);
}

static void state(struct tg_stream *s, uint64_t ts, uint64_t proc, const char *st)
{
	tg_event(s, STATE, ts);
	tg_ref(s, proc, 1);
	tg_str(s, st);
}

struct fixture {
	char *root;
	struct vgt_trace *trace;
	struct vgq_database *db;
};

static void open_db(struct fixture *f)
{
	char err[256];
	const char *paths[] = {f->root};
	f->trace = vgt_open(paths, 1, err, sizeof err);
	assert_non_null(f->trace);
	f->db = vgq_database_build(f->trace);
	assert_non_null(f->db);
}

static void close_db(struct fixture *f)
{
	vgq_database_free(f->db);
	vgt_close(f->trace);
	tg_rmtree(f->root);
	free(f->root);
}

static const struct vgq_relation *rel(const struct fixture *f, const char *name)
{
	const struct vgq_relation *r = vgq_database_find(f->db, name);
	assert_non_null(r);
	return r;
}

static const char *ref_name(const struct vgq_relation *r, const char *attr, size_t t)
{
	int a = vgq_relation_attr(r, attr);
	assert_true(a >= 0);
	assert_int_equal(r->attrs[a].type, VGQ_ENTITY);
	assert_non_null(r->cols[a].r[t].name);
	return r->cols[a].r[t].name;
}

static void test_begin_end_pairing(void **state_)
{
	(void)state_;
	struct fixture f = {.root = tg_tempdir()};
	struct tg_image *img = image(f.root);
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 10);
	create(s, 10, "Process", 1, 1, "P1");
	create(s, 10, "Process", 2, 1, "P2");
	create(s, 10, "Mailbox", 7, 1, "M1");
	wait_event(s, W_BEGIN, 20, 1, 7, 1);
	wait_event(s, W_BEGIN, 30, 2, 7, 1);
	wait_event(s, W_BEGIN, 40, 1, 7, 1);
	wait_event(s, W_END, 50, 1, 7, 1); /* closes the oldest equal begin: 20 */
	wait_event(s, W_END, 60, 2, 7, 2); /* another mailbox lifetime: closes nothing */
	wait_event(s, W_END, 70, 1, 7, 1); /* closes 40 */
	tg_tick(s, 80, 1);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	tg_image_free(img);
	open_db(&f);

	assert_false(f.db->partial);
	assert_int_equal(f.db->first - BASE, 10);
	assert_int_equal(f.db->last - BASE, 80);
	const struct vgq_relation *w = rel(&f, "waiting"); /* names: case-insensitive */
	assert_string_equal(w->name, "Waiting");
	assert_int_equal(w->kind, VGQ_REL_INTERVAL);
	assert_int_equal(w->nattrs, 2);
	assert_int_equal(vgq_relation_attr(w, "PROCESS"), 0);
	assert_int_equal(vgq_relation_attr(w, "Mailbox"), 1);
	assert_int_equal(vgq_relation_attr(w, "at"), -1);
	assert_string_equal(w->attrs[1].ref_kind, "Mailbox");
	assert_int_equal(w->ntuples, 3);
	const int64_t from[] = {20, 30, 40}, to[] = {50, 80, 70};
	const bool open[] = {false, true, false};
	const char *const procs[] = {"P1", "P2", "P1"};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(w->from[i] - BASE, from[i]);
		assert_int_equal(w->to[i] - BASE, to[i]);
		assert_int_equal(w->open[i], open[i]);
		assert_string_equal(ref_name(w, "process", i), procs[i]);
		assert_string_equal(ref_name(w, "mailbox", i), "M1");
		assert_int_equal(w->cols[1].r[i].gen, 1);
	}
	assert_int_equal(w->unmatched_ends, 1);
	assert_int_equal(w->open_at_end, 1);
	assert_ptr_equal(vgq_database_string(f.db, "P2"), w->cols[0].r[1].name);
	assert_ptr_equal(vgq_database_string(f.db, "M1"), w->cols[1].r[0].name);
	assert_null(vgq_database_string(f.db, "P3"));
	assert_int_equal(w->first - BASE, 20);
	assert_int_equal(w->last - BASE, 80);

	const struct vgq_relation *tick = rel(&f, "tick");
	assert_int_equal(tick->kind, VGQ_REL_EVENT);
	assert_int_equal(tick->ntuples, 1);
	assert_null(tick->to);
	assert_int_equal(tick->from[0] - BASE, 80);
	assert_int_equal(tick->cols[0].u[0], 1);
	assert_int_equal(rel(&f, "all_types")->ntuples, 0);
	assert_null(vgq_database_find(f.db, "w.begin"));

	const struct vgq_relation *p = rel(&f, "PROCESS");
	assert_int_equal(p->kind, VGQ_REL_ENTITY);
	assert_int_equal(p->ntuples, 2);
	assert_string_equal(p->cols[0].s[1], "P2");
	assert_int_equal(p->cols[1].u[1], 2);
	assert_true(p->open[0] && p->open[1]);
	assert_int_equal(p->to[0] - BASE, 80);
	close_db(&f);
}

static void job(struct tg_stream *s, uint16_t id, uint64_t ts, uint32_t n, int32_t status)
{
	tg_event(s, id, ts);
	tg_u32(s, n);
	if (id == JOB_END)
		tg_u32(s, (uint32_t)status);
}

/* An end's fields that its begin lacks do not take part in the matching: they are
 * values of the closed tuple. */
static void test_end_adds_values(void **state_)
{
	(void)state_;
	struct fixture f = {.root = tg_tempdir()};
	struct tg_image *img = image(f.root);
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 10);
	job(s, JOB_BEGIN, 10, 1, 0);
	job(s, JOB_BEGIN, 20, 2, 0);
	job(s, JOB_BEGIN, 25, 3, 0);
	job(s, JOB_END, 30, 2, 7);
	job(s, JOB_END, 40, 1, -1);
	job(s, JOB_END, 45, 4, 0); /* no such job */
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	tg_image_free(img);
	open_db(&f);
	const struct vgq_relation *j = rel(&f, "Job");
	assert_int_equal(j->nattrs, 2);
	int status = vgq_relation_attr(j, "status");
	assert_int_equal(j->attrs[status].type, VGQ_INT);
	assert_int_equal(j->ntuples, 3);
	const int64_t to[] = {40, 30, 45};
	const int64_t st[] = {-1, 7, 0};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(j->cols[0].u[i], i + 1);
		assert_int_equal(j->to[i] - BASE, to[i]);
		assert_int_equal(j->cols[status].i[i], st[i]);
		assert_int_equal(j->open[i], i == 2);
	}
	assert_int_equal(j->unmatched_ends, 1);
	close_db(&f);
}

static void test_state_chains(void **state_)
{
	(void)state_;
	struct fixture f = {.root = tg_tempdir()};
	struct tg_image *img = image(f.root);
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 5);
	create(s, 5, "Process", 1, 1, "P1");
	create(s, 5, "Process", 2, 1, "P2");
	state(s, 10, 1, "Ready");
	state(s, 11, 2, "Ready");
	tg_event(s, MODE, 12); /* no role: the chain is the thread's */
	tg_u32(s, 1);
	state(s, 20, 1, "Running");
	state(s, 30, 1, "Blocked");
	tg_event(s, MODE, 32);
	tg_u32(s, 2);
	state(s, 35, 2, "Running");
	state(s, 40, 1, "Done");
	tg_tick(s, 50, 1);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	s = tg_stream_new(img, 43, 0);
	tg_packet_begin(s, 15);
	tg_event(s, MODE, 15);
	tg_u32(s, 9);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	tg_image_free(img);
	open_db(&f);

	const struct vgq_relation *ps = rel(&f, "ProcessState");
	assert_int_equal(ps->kind, VGQ_REL_STATE);
	assert_int_equal(ps->ntuples, 6);
	const int64_t from[] = {10, 11, 20, 30, 35, 40}, to[] = {20, 35, 30, 40, 50, 50};
	const char *const procs[] = {"P1", "P2", "P1", "P1", "P2", "P1"};
	const char *const states[] = {"Ready", "Ready", "Running", "Blocked", "Running", "Done"};
	int st = vgq_relation_attr(ps, "State");
	assert_int_equal(ps->attrs[st].type, VGQ_STRING);
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(ps->from[i] - BASE, from[i]);
		assert_int_equal(ps->to[i] - BASE, to[i]);
		assert_int_equal(ps->open[i], i >= 4);
		assert_string_equal(ref_name(ps, "process", i), procs[i]);
		assert_string_equal(ps->cols[st].s[i], states[i]);
	}
	assert_ptr_equal(ps->cols[st].s[0], ps->cols[st].s[1]); /* interned */
	assert_int_equal(ps->open_at_end, 2);

	const struct vgq_relation *mode = rel(&f, "mode");
	assert_int_equal(mode->ntuples, 3);
	const int64_t mfrom[] = {12, 15, 32}, mto[] = {32, 50, 50};
	const uint64_t level[] = {1, 9, 2};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(mode->from[i] - BASE, mfrom[i]);
		assert_int_equal(mode->to[i] - BASE, mto[i]);
		assert_int_equal(mode->cols[0].u[i], level[i]);
	}
	close_db(&f);
}

static void reclaim(struct tg_stream *s, uint64_t ts, const char *kind, uint64_t id, uint32_t gen)
{
	tg_event(s, RECLAIM, ts);
	tg_str(s, kind);
	tg_u64(s, id);
	tg_u32(s, gen);
}

static void test_entity_lifetimes(void **state_)
{
	(void)state_;
	struct fixture f = {.root = tg_tempdir()};
	struct tg_image *img = image(f.root);
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 5);
	tg_event(s, TG_THREAD_BEGIN, 5);
	tg_u32(s, 43);
	tg_u32(s, 0);
	tg_str(s, "worker");
	create(s, 10, "Lock", 5, 1, "L");
	reclaim(s, 20, "lock", 5, 1);
	create(s, 30, "Lock", 5, 2, "L2"); /* the identity reused: a new lifetime */
	reclaim(s, 40, "Lock", 9, 1);      /* never created */
	tg_event(s, ENTITY_NAME, 45);
	tg_str(s, "Lock");
	tg_u64(s, 5);
	tg_u32(s, 2);
	tg_str(s, "L2b");
	tg_tick(s, 50, 1);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	tg_image_free(img);
	open_db(&f);

	const struct vgq_relation *l = rel(&f, "lock");
	assert_string_equal(l->name, "Lock");
	assert_int_equal(l->kind, VGQ_REL_ENTITY);
	assert_int_equal(l->ntuples, 3); /* the second lifetime renamed at 45: two tuples */
	assert_int_equal(l->from[0] - BASE, 10);
	assert_int_equal(l->to[0] - BASE, 20);
	assert_false(l->open[0]);
	assert_string_equal(l->cols[0].s[0], "L");
	assert_int_equal(l->from[1] - BASE, 30);
	assert_int_equal(l->to[1] - BASE, 45);
	assert_false(l->open[1]);
	assert_string_equal(l->cols[0].s[1], "L2");
	assert_int_equal(l->cols[2].u[1], 2);
	assert_int_equal(l->from[2] - BASE, 45);
	assert_int_equal(l->to[2] - BASE, 50);
	assert_true(l->open[2]);
	assert_string_equal(l->cols[0].s[2], "L2b");
	assert_int_equal(l->cols[1].u[2], 5);
	assert_int_equal(l->cols[2].u[2], 2);
	assert_int_equal(l->unmatched_ends, 1);
	assert_int_equal(l->open_at_end, 1);

	const struct vgq_relation *t = rel(&f, "OSThread");
	assert_int_equal(t->ntuples, 1);
	assert_string_equal(t->cols[0].s[0], "worker");
	assert_int_equal(t->cols[1].u[0], 43);
	close_db(&f);
}

static void test_damage_is_carried(void **state_)
{
	(void)state_;
	struct fixture f = {.root = tg_tempdir()};
	struct tg_image *img = image(f.root);
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 10);
	tg_tick(s, 10, 1);
	tg_tick(s, 20, 2);
	tg_tick(s, 30, 3);
	tg_packet_end(s, 0, 0);
	size_t len;
	tg_stream_bytes(s, &len);
	tg_stream_truncate(s, len - 2); /* inside the last tick */
	tg_stream_write(s);
	tg_image_free(img);
	open_db(&f);
	assert_true(f.db->partial);
	assert_true(f.db->damage > 0);
	const struct vgq_relation *tick = rel(&f, "tick");
	assert_int_equal(tick->ntuples, 2);
	assert_int_equal(tick->cols[0].u[1], 2);
	close_db(&f);
}

static void test_clock(void **state_)
{
	(void)state_;
	struct fixture f = {.root = tg_tempdir()};
	struct tg_image *img = image(f.root);
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 10);
	tg_tick(s, 10, 1);
	tg_tick(s, 85, 2);
	tg_tick(s, 2000000010, 3);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	tg_image_free(img);
	open_db(&f);
	char err[256];
	const struct vgq_relation *c = vgq_database_clock(f.db, 1000000000, 1, err, sizeof err);
	assert_non_null(c);
	assert_string_equal(c->name, "Clock");
	assert_int_equal(c->kind, VGQ_REL_EVENT);
	assert_int_equal(c->nattrs, 0);
	assert_int_equal(c->ntuples, 3); /* 10 ns, 1 s + 10 ns, 2 s + 10 ns */
	assert_int_equal(c->from[2] - BASE, 2000000010);
	const struct vgq_relation *c3 = vgq_database_clock(f.db, 300000000, 3, err, sizeof err);
	assert_non_null(c3);
	assert_string_equal(c3->name, "Clock[3]");
	assert_int_equal(c3->ntuples, 3); /* every 0.9 s: 0, 0.9, 1.8 */
	assert_int_equal(c3->from[1] - c3->from[0], 900000000);
	assert_ptr_equal(vgq_database_clock(f.db, 300000000, 3, err, sizeof err), c3);
	assert_ptr_not_equal(vgq_database_clock(f.db, 100000000, 3, err, sizeof err), c3);
	assert_null(vgq_database_clock(f.db, 0, 1, err, sizeof err));
	assert_null(vgq_database_clock(f.db, 1, 1, err, sizeof err)); /* 2e9 ticks */
	assert_non_null(strstr(err, "larger base tick"));
	assert_null(vgq_database_find(f.db, "Clock")); /* not a recorded relation */
	close_db(&f);
}

/* Two kinds under one relation= name (metadata a writer got wrong, or forged): the later
 * type is never merged into the other kind's relation. It feeds NAME.KIND, or is left
 * out when that name is taken too; an entity kind named like a relation of another kind
 * is left out; each said once in db->warnings. */
#define CLASH_EV 20
#define CLASH_UEV 21
#define CLASH_ST 22
static void test_relation_clash(void **state_)
{
	(void)state_;
	struct fixture f = {.root = tg_tempdir()};
	struct tg_image *img = tg_image_new(f.root, "app-42-0", NULL);
	tg_declare(img, "w.begin", W_BEGIN, "vigil:kind=begin;flag=sensor;traced;relation=Waiting",
	           "uint32_t box;");
	tg_declare(img, "w.end", W_END, "vigil:kind=end;flag=sensor;traced;relation=Waiting",
	           "uint32_t box;");
	tg_declare(img, "s.ev", CLASH_EV, "vigil:kind=event;flag=sensor;traced;relation=Waiting",
	           "uint32_t n;");
	tg_declare(img, "u.ev", CLASH_UEV,
	           "vigil:kind=event;flag=sensor;traced;relation=Waiting.state", "uint32_t n;");
	tg_declare(img, "t.st", CLASH_ST, "vigil:kind=state;flag=sensor;traced;relation=waiting",
	           "string state;");
	tg_write_metadata(img);
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 5);
	tg_event(s, W_BEGIN, 10);
	tg_u32(s, 1);
	for (uint32_t i = 0; i < 3; i++) {
		tg_event(s, CLASH_EV, 11 + i);
		tg_u32(s, i);
		tg_event(s, CLASH_ST, 15 + i);
		tg_str(s, "busy");
		create(s, 18 + i, "WAITING", 7, i, "w");
	}
	tg_event(s, CLASH_UEV, 21);
	tg_u32(s, 9);
	tg_event(s, W_END, 30);
	tg_u32(s, 1);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	tg_image_free(img);
	open_db(&f);

	const struct vgq_relation *w = rel(&f, "Waiting");
	assert_int_equal(w->kind, VGQ_REL_INTERVAL);
	assert_int_equal(w->ntuples, 1); /* the begin and end only */
	assert_int_equal(w->nattrs, 1);
	assert_int_equal(w->unmatched_ends, 0);
	assert_int_equal(w->from[0] - BASE, 10);
	assert_int_equal(w->to[0] - BASE, 30);
	const struct vgq_relation *e = rel(&f, "Waiting.event");
	assert_int_equal(e->kind, VGQ_REL_EVENT);
	assert_int_equal(e->ntuples, 3);
	assert_int_equal(e->cols[0].u[2], 2);
	const struct vgq_relation *u = rel(&f, "Waiting.state");
	assert_int_equal(u->kind, VGQ_REL_EVENT);
	assert_int_equal(u->ntuples, 1); /* t.st's three states are not in it */
	assert_int_equal(f.db->nwarnings, 3);
	assert_non_null(strstr(f.db->warnings[0], "'s.ev' declares relation 'Waiting' (event)"));
	assert_non_null(strstr(f.db->warnings[0], "in relation 'Waiting.event' instead"));
	assert_non_null(strstr(f.db->warnings[1], "'t.st' declares relation 'waiting' (state)"));
	assert_non_null(strstr(f.db->warnings[1], "left out"));
	assert_non_null(strstr(f.db->warnings[2], "entities of kind 'WAITING' are left out"));
	close_db(&f);
}

/* The OS's processes and threads are OSProcess and OSThread: a trace that declares its
 * own Process and Thread entity kinds (the mailbox example's Process) keeps them apart. */
#define PROC_BEGIN 23
static void test_own_process_kind(void **state_)
{
	(void)state_;
	struct fixture f = {.root = tg_tempdir()};
	struct tg_image *img = tg_image_new(f.root, "app-42-0", NULL);
	tg_declare_builtin(img, "vg.process.begin", PROC_BEGIN);
	tg_write_metadata(img);
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 5);
	tg_event(s, PROC_BEGIN, 5);
	tg_u32(s, 42);
	tg_u64(s, 0);
	tg_u32(s, 1);
	tg_str(s, "app");
	tg_str(s, "/bin/app");
	tg_event(s, TG_THREAD_BEGIN, 6);
	tg_u32(s, 42);
	tg_u32(s, 0);
	tg_str(s, "app");
	create(s, 10, "Process", 1, 0, "P1");
	create(s, 11, "Process", 2, 0, "P2");
	create(s, 12, "Thread", 3, 0, "T3");
	tg_tick(s, 20, 1);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	tg_image_free(img);
	open_db(&f);
	const struct vgq_relation *os = rel(&f, "OSProcess");
	assert_int_equal(os->kind, VGQ_REL_ENTITY);
	assert_int_equal(os->ntuples, 1);
	assert_string_equal(os->cols[0].s[0], "app");
	assert_int_equal(os->cols[1].u[0], 42);
	const struct vgq_relation *p = rel(&f, "Process");
	assert_int_equal(p->kind, VGQ_REL_ENTITY);
	assert_int_equal(p->ntuples, 2);
	assert_string_equal(p->cols[0].s[0], "P1");
	assert_string_equal(p->cols[0].s[1], "P2");
	assert_int_equal(rel(&f, "OSThread")->ntuples, 1);
	const struct vgq_relation *t = rel(&f, "thread");
	assert_string_equal(t->name, "Thread");
	assert_int_equal(t->ntuples, 1);
	assert_string_equal(t->cols[0].s[0], "T3");
	assert_int_equal(f.db->nwarnings, 0);
	close_db(&f);
}

/* An end whose type lacks a begun attribute matches on the others (here fn only): with
 * many tuples open (more than the index's first buckets), a leave still closes the
 * innermost open enter of its fn, an fn never entered closes nothing. */
#define CALL_ENTER 30
#define CALL_LEAVE 31
static void test_leave_matches_fewer_attributes(void **state_)
{
	(void)state_;
	struct fixture f = {.root = tg_tempdir()};
	struct tg_image *img = tg_image_new(f.root, "app-42-0", NULL);
	tg_declare(img, "call.enter", CALL_ENTER,
	           "vigil:kind=begin;flag=sensor;traced;relation=call;op=enter",
	           "uint32_t depth; uint32_t fn;");
	tg_declare(img, "call.leave", CALL_LEAVE,
	           "vigil:kind=end;flag=sensor;traced;relation=call;op=leave", "uint32_t fn;");
	tg_write_metadata(img);
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 10);
	enum { N = 300 };
	for (uint32_t i = 0; i < N; i++) {
		tg_event(s, CALL_ENTER, 100 + i);
		tg_u32(s, i);
		tg_u32(s, i % 3);
	}
	const uint32_t leaves[] = {1, 1, 5, 0};
	for (uint64_t k = 0; k < 4; k++) {
		tg_event(s, CALL_LEAVE, 1000 + k);
		tg_u32(s, leaves[k]);
	}
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	tg_image_free(img);
	open_db(&f);
	const struct vgq_relation *c = rel(&f, "call");
	assert_int_equal(c->ntuples, N);
	assert_int_equal(c->unmatched_ends, 1);
	for (size_t i = 0; i < N; i++) {
		/* closed: 298 and 295 (fn 1, innermost first), 297 (fn 0) */
		int64_t to = i == 298 ? 1000 : i == 295 ? 1001 : i == 297 ? 1003 : -1;
		assert_int_equal(c->cols[0].u[i], i);
		assert_int_equal(c->open[i], to < 0);
		if (to >= 0)
			assert_int_equal(c->to[i] - BASE, to);
	}
	close_db(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_begin_end_pairing),
	    cmocka_unit_test(test_end_adds_values),
	    cmocka_unit_test(test_state_chains),
	    cmocka_unit_test(test_entity_lifetimes),
	    cmocka_unit_test(test_damage_is_carried),
	    cmocka_unit_test(test_clock),
	    cmocka_unit_test(test_relation_clash),
	    cmocka_unit_test(test_own_process_kind),
	    cmocka_unit_test(test_leave_matches_fewer_attributes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
