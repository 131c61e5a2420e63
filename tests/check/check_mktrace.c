/* check_mktrace DIR SCENARIO [EVENTS SEED]: writes a trace with known violations of the
 * sequencing rules (docs/consistency.md) for tests/check/check_test.py, built byte by byte
 * (tests/unit/reader_tracegen.c) so that it does not depend on the runtime's enforcement.
 * Prints what `vigil check` must find, one line each:
 *   expect IMAGE/STREAM@OFFSET RULE [synth]
 *   summary KEY VALUE
 * Scenarios: consistent, rule1 ... rule5, damaged (consistent + a bad packet), big
 * (EVENTS random consistent events from SEED over 4 threads, with violations injected). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../test_rand.h"
#include "reader_tracegen.h"

enum {
	OBJ_NEW = 10,
	OBJ_FREE,
	OBJ_USE,
	OBJ_NAME,
	TYPE_LOAD,
	TYPE_USE,
	CALL_ENTER,
	CALL_LEAVE,
	LOCK_ACQ,
	LOCK_REL,
	LOCK_WAIT,
	LOCK_WAITED,
	TH_SUSPEND,
	TH_RESUME,
	ENT_RECLAIM,
	ENT_LOAD,
	ENT_NAME,
	THREAD_END,
	PROC_BEGIN,
	PROC_END,
	SYNTH,
	OBJ_MOVE,
	TYPE_NEW,
	BAD_OP,
};

static void declare_all(struct tg_image *img, int bad)
{
#define U(op, rest) "vigil:kind=event;flag=sensor;traced;op=" op rest
	tg_declare(img, "obj.new", OBJ_NEW, U("create", ";target=o;ref.o=Buffer"),
	           "struct vg_ref o;");
	tg_declare(img, "obj.free", OBJ_FREE, U("reclaim", ";target=o;ref.o=Buffer"),
	           "struct vg_ref o;");
	tg_declare(img, "obj.use", OBJ_USE, "vigil:kind=event;flag=sensor;traced;ref.o=Buffer",
	           "struct vg_ref o; uint32_t n;");
	tg_declare(img, "obj.name", OBJ_NAME, U("rename", ";target=o;ref.o=Buffer"),
	           "struct vg_ref o;");
	tg_declare(img, "type.load", TYPE_LOAD, U("load", ";target=t;ref.t=Type"),
	           "struct vg_ref t;");
	tg_declare(
	    img, "type.use", TYPE_USE,
	    "vigil:kind=event;flag=sensor;traced;op=reference;initiator=o;target=t;ref.t=Type;"
	    "ref.o=Buffer",
	    "struct vg_ref t; struct vg_ref o;");
	tg_declare(img, "call.enter", CALL_ENTER,
	           "vigil:kind=begin;flag=sensor;traced;relation=call;op=enter",
	           "uint32_t vg_depth; uint32_t fn;");
	tg_declare(img, "call.leave", CALL_LEAVE,
	           "vigil:kind=end;flag=sensor;traced;relation=call;op=leave", "uint32_t fn;");
	tg_declare(img, "lock.acquire", LOCK_ACQ, U("acquire", ";target=l;ref.l=Lock"),
	           "struct vg_ref l;");
	tg_declare(img, "lock.release", LOCK_REL, U("release", ";target=l;ref.l=Lock"),
	           "struct vg_ref l;");
	tg_declare(img, "lock.wait", LOCK_WAIT, U("wait_begin", ";target=l;ref.l=Lock"),
	           "struct vg_ref l;");
	tg_declare(img, "lock.waited", LOCK_WAITED, U("wait_end", ";target=l;ref.l=Lock"),
	           "struct vg_ref l;");
	tg_declare(img, "th.suspend", TH_SUSPEND, U("suspend", ";target=t;ref.t=thread"),
	           "struct vg_ref t;");
	tg_declare(img, "th.resume", TH_RESUME, U("resume", ";target=t;ref.t=thread"),
	           "struct vg_ref t;");
	tg_declare_builtin(img, "vg.entity.reclaim", ENT_RECLAIM);
	tg_declare_builtin(img, "vg.entity.load", ENT_LOAD);
	tg_declare_builtin(img, "vg.entity.name", ENT_NAME);
	tg_declare_builtin(img, "vg.thread.end", THREAD_END);
	tg_declare_builtin(img, "vg.process.begin", PROC_BEGIN);
	tg_declare_builtin(img, "vg.process.end", PROC_END);
	tg_declare_builtin(img, "vg.report.synth", SYNTH);
	tg_declare(img, "obj.move", OBJ_MOVE, U("move", ";target=o;ref.o=Buffer"),
	           "struct vg_ref o;");
	tg_declare(img, "type.new", TYPE_NEW, U("create", ";target=t;ref.t=Type"),
	           "struct vg_ref t;");
	if (bad) /* an op the reader does not know: damage */
		tg_declare(img, "bad.op", BAD_OP, U("frobnicate", ""), "uint32_t n;");
#undef U
	tg_write_metadata(img);
}

/* ---- a small writer: streams by number, one clock for all -------------------------- */

#define MAXS 8
struct gen {
	struct tg_image *img[2];
	struct tg_stream *s[MAXS];
	const char *label[MAXS];
	char labels[MAXS][64];
	size_t packet_events[MAXS];
	int ns;
	uint64_t now;
	int hold; /* the next event takes the same time (after a synth marker) */
	uint64_t events, synthesized, expected[6];
};

static int add_stream(struct gen *g, int img, const char *imgname, uint32_t tid, uint32_t gen)
{
	int i = g->ns++;
	g->s[i] = tg_stream_new(g->img[img], tid, gen);
	snprintf(g->labels[i], sizeof g->labels[i], "%s/stream-%u-%u", imgname, tid, gen);
	tg_packet_begin(g->s[i], 1000000000ull);
	return i;
}

/* Starts an event on stream i; returns its byte offset. */
static size_t ev(struct gen *g, int i, uint16_t id)
{
	size_t off;
	if (g->packet_events[i] >= 50000) { /* packets of a realistic size */
		tg_packet_end(g->s[i], 0, 0);
		tg_packet_begin(g->s[i], g->now);
		g->packet_events[i] = 0;
	}
	g->packet_events[i]++;
	tg_stream_bytes(g->s[i], &off);
	if (!g->hold)
		g->now += 10;
	g->hold = 0;
	tg_event(g->s[i], id, 1000000000ull + g->now);
	g->events++;
	return off;
}

static void expect(struct gen *g, int i, size_t off, int rule)
{
	printf("expect %s@%zu %d\n", g->labels[i], off, rule);
	g->expected[rule]++;
}

static size_t ref_ev(struct gen *g, int i, uint16_t id, uint64_t rid, uint32_t rgen)
{
	size_t off = ev(g, i, id);
	tg_ref(g->s[i], rid, rgen);
	if (id == OBJ_USE)
		tg_u32(g->s[i], 7);
	return off;
}

static size_t builtin_ent(struct gen *g, int i, uint16_t id, const char *kind, uint64_t rid,
                          uint32_t rgen, const char *name)
{
	size_t off = ev(g, i, id);
	tg_str(g->s[i], kind);
	tg_u64(g->s[i], rid);
	tg_u32(g->s[i], rgen);
	if (id == TG_ENTITY_CREATE || id == ENT_NAME)
		tg_str(g->s[i], name ? name : "");
	return off;
}

static size_t thread_ev(struct gen *g, int i, uint16_t id, uint32_t tid, uint32_t tgen)
{
	size_t off = ev(g, i, id);
	tg_u32(g->s[i], tid);
	tg_u32(g->s[i], tgen);
	if (id == TG_THREAD_BEGIN)
		tg_str(g->s[i], "t");
	return off;
}

static size_t enter(struct gen *g, int i, uint32_t depth)
{
	size_t off = ev(g, i, CALL_ENTER);
	tg_u32(g->s[i], depth);
	tg_u32(g->s[i], depth * 3);
	return off;
}

static size_t leave(struct gen *g, int i)
{
	size_t off = ev(g, i, CALL_LEAVE);
	tg_u32(g->s[i], 1);
	return off;
}

/* Marks the next event of stream i as synthesized, valid `ago` ns earlier. */
static void synth(struct gen *g, int i, uint64_t ago)
{
	ev(g, i, SYNTH);
	tg_u64(g->s[i], 1000000000ull + g->now - ago);
	g->hold = 1;
	g->synthesized++;
}

static void proc_ev(struct gen *g, int i, uint16_t id, uint32_t pid, uint64_t pgen)
{
	ev(g, i, id);
	tg_u32(g->s[i], pid);
	tg_u64(g->s[i], pgen);
	if (id == PROC_BEGIN) {
		tg_u32(g->s[i], 1);
		tg_str(g->s[i], "app");
		tg_str(g->s[i], "/bin/app");
	} else {
		tg_u32(g->s[i], 0);
	}
}

static void finish(struct gen *g)
{
	for (int i = 0; i < g->ns; i++) {
		tg_packet_end(g->s[i], 0, 0);
		tg_stream_write(g->s[i]);
	}
	for (int k = 0; k < 2; k++)
		if (g->img[k])
			tg_image_free(g->img[k]);
	printf("summary events %" PRIu64 "\nsummary synthesized %" PRIu64 "\n", g->events,
	       g->synthesized);
	for (int r = 1; r <= 5; r++)
		printf("summary rule%d %" PRIu64 "\n", r, g->expected[r]);
}

/* Two images: app (pid 42; threads 42 and 43) and srv (pid 7; thread 7). */
static void open_images(struct gen *g, const char *root, int bad)
{
	g->img[0] =
	    tg_image_new(root, "app-42-0",
	                 &(struct tg_image_opts){.procname = "app", .pid = 42, .process_gen = 9});
	g->img[1] =
	    tg_image_new(root, "srv-7-0",
	                 &(struct tg_image_opts){.procname = "srv", .pid = 7, .process_gen = 3});
	declare_all(g->img[0], bad);
	declare_all(g->img[1], 0);
	add_stream(g, 0, "app-42-0", 42, 0); /* 0: main */
	add_stream(g, 0, "app-42-0", 43, 0); /* 1: worker */
	add_stream(g, 1, "srv-7-0", 7, 0);   /* 2: srv main */
	proc_ev(g, 0, PROC_BEGIN, 42, 9);
	thread_ev(g, 0, TG_THREAD_BEGIN, 42, 0);
	thread_ev(g, 1, TG_THREAD_BEGIN, 43, 0);
	proc_ev(g, 2, PROC_BEGIN, 7, 3);
	thread_ev(g, 2, TG_THREAD_BEGIN, 7, 0);
}

static void close_images(struct gen *g)
{
	thread_ev(g, 1, THREAD_END, 43, 0);
	thread_ev(g, 0, THREAD_END, 42, 0);
	proc_ev(g, 0, PROC_END, 42, 9);
	thread_ev(g, 2, THREAD_END, 7, 0);
	proc_ev(g, 2, PROC_END, 7, 3);
}

static void consistent(struct gen *g)
{
	ref_ev(g, 0, OBJ_NEW, 0x10, 0);
	ref_ev(g, 0, OBJ_USE, 0x10, 0);
	ref_ev(g, 0, OBJ_NAME, 0x10, 0);
	ref_ev(g, 1, OBJ_MOVE, 0x10, 0);
	ref_ev(g, 0, OBJ_FREE, 0x10, 0);
	ref_ev(g, 0, OBJ_NEW, 0x10, 1); /* the address reused: a new generation */
	ref_ev(g, 1, OBJ_USE, 0x10, 1);
	builtin_ent(g, 0, TG_ENTITY_CREATE, "Lock", 0x20, 0, "mutex");
	ref_ev(g, 0, TYPE_NEW, 0x30, 0);
	ref_ev(g, 0, TYPE_LOAD, 0x30, 0);
	ev(g, 0, TYPE_USE);
	tg_ref(g->s[0], 0x30, 0);
	tg_ref(g->s[0], 0x10, 1);
	ev(g, 0, TYPE_USE);
	tg_ref(g->s[0], 0x30, 0);
	tg_ref(g->s[0], 0, 0); /* no entity */
	/* Locks: a wait, nested acquires, then the worker. */
	ref_ev(g, 0, LOCK_WAIT, 0x20, 0);
	ref_ev(g, 0, LOCK_WAITED, 0x20, 0);
	ref_ev(g, 0, LOCK_ACQ, 0x20, 0);
	ref_ev(g, 0, LOCK_ACQ, 0x20, 0);
	ref_ev(g, 0, LOCK_REL, 0x20, 0);
	ref_ev(g, 0, LOCK_REL, 0x20, 0);
	ref_ev(g, 1, LOCK_ACQ, 0x20, 0);
	ref_ev(g, 1, LOCK_REL, 0x20, 0);
	/* Invocations: main plainly; the worker resumes inside two synthesized frames. */
	enter(g, 0, 1);
	enter(g, 0, 2);
	synth(g, 1, 500);
	enter(g, 1, 1);
	synth(g, 1, 300);
	enter(g, 1, 2);
	enter(g, 1, 3);
	leave(g, 0);
	leave(g, 0);
	leave(g, 1);
	leave(g, 1);
	leave(g, 1);
	ref_ev(g, 0, TH_SUSPEND, 43, 0);
	ref_ev(g, 0, TH_RESUME, 43, 0);
	builtin_ent(g, 0, ENT_NAME, "Lock", 0x20, 0, "m2");
	builtin_ent(g, 0, ENT_RECLAIM, "Lock", 0x20, 0, NULL);
	/* A type through the built-ins, its kind spelled in lowercase. */
	builtin_ent(g, 1, TG_ENTITY_CREATE, "type", 0x40, 0, "Klass");
	builtin_ent(g, 1, ENT_LOAD, "type", 0x40, 0, NULL);
	ev(g, 1, TYPE_USE);
	tg_ref(g->s[1], 0x40, 0);
	tg_ref(g->s[1], 0x10, 1);
	/* srv: the same raw id is another entity in another image. */
	ref_ev(g, 2, OBJ_NEW, 0x10, 0);
	ref_ev(g, 2, OBJ_USE, 0x10, 0);
	printf("summary invocations 5\nsummary locks 1\nsummary entities 11\n");
}

static void rule1(struct gen *g)
{
	expect(g, 0, ref_ev(g, 0, OBJ_FREE, 0x10, 0), 1); /* never created */
	ref_ev(g, 0, OBJ_NEW, 0x11, 0);
	ref_ev(g, 0, OBJ_FREE, 0x11, 0);
	expect(g, 0, ref_ev(g, 0, OBJ_FREE, 0x11, 0), 1); /* reclaimed twice */
	expect(g, 0, builtin_ent(g, 0, ENT_LOAD, "Type", 0x30, 0, NULL), 1);
	expect(g, 1, ref_ev(g, 1, OBJ_NAME, 0x12, 0), 1);
	expect(g, 0, builtin_ent(g, 0, ENT_NAME, "Lock", 0x20, 0, "x"), 1);
	ref_ev(g, 0, OBJ_NEW, 0x13, 0);
	expect(g, 0, ref_ev(g, 0, OBJ_NEW, 0x13, 0), 1); /* created while live */
	expect(g, 0, thread_ev(g, 0, THREAD_END, 99, 0), 1);
	ref_ev(g, 0, TYPE_NEW, 0x31, 0);
	ref_ev(g, 0, TYPE_LOAD, 0x31, 0);
	expect(g, 0, ref_ev(g, 0, TYPE_LOAD, 0x31, 0), 1); /* loaded twice */
	ref_ev(g, 0, OBJ_NEW, 0x14, 2);
	expect(g, 0, ref_ev(g, 0, OBJ_NEW, 0x14, 1), 1); /* an older generation after a newer */
	ref_ev(g, 2, OBJ_NEW, 0x15, 0);
	expect(g, 0, ref_ev(g, 0, OBJ_FREE, 0x15, 0), 1); /* created in the other image */
}

static void rule2(struct gen *g)
{
	expect(g, 0, ref_ev(g, 0, OBJ_USE, 0x10, 0), 2); /* never created */
	ref_ev(g, 0, OBJ_NEW, 0x11, 0);
	ref_ev(g, 0, OBJ_FREE, 0x11, 0);
	expect(g, 1, ref_ev(g, 1, OBJ_USE, 0x11, 0), 2); /* after its reclamation */
	ref_ev(g, 0, OBJ_NEW, 0x12, 1);
	expect(g, 0, ref_ev(g, 0, OBJ_USE, 0x12, 0), 2); /* another generation */
	ref_ev(g, 0, TYPE_NEW, 0x30, 0);
	ev(g, 0, TYPE_USE); /* before the load: found at the load */
	tg_ref(g->s[0], 0x30, 0);
	tg_ref(g->s[0], 0, 0);
	expect(g, 0, ref_ev(g, 0, TYPE_LOAD, 0x30, 0), 2);
	expect(g, 0, ref_ev(g, 0, LOCK_ACQ, 0x20, 0), 2); /* a lock never created */
	expect(g, 0, ref_ev(g, 0, LOCK_REL, 0x20, 0), 2);
	expect(g, 0, ref_ev(g, 0, TH_SUSPEND, 77, 0), 2); /* a thread never begun */
	expect(g, 0, ref_ev(g, 0, TH_SUSPEND, 7, 0), 2);  /* thread 7 is srv's, not app's */
	size_t off = ev(g, 1, TYPE_USE);
	tg_ref(g->s[1], 0x31, 0); /* never created */
	tg_ref(g->s[1], 0x12, 1); /* live */
	expect(g, 1, off, 2);
	ref_ev(g, 0, OBJ_MOVE, 0x12, 1);
	expect(g, 0, ref_ev(g, 0, OBJ_MOVE, 0x12, 2), 2);
}

static void rule3(struct gen *g)
{
	ref_ev(g, 0, OBJ_NEW, 0x10, 0);
	expect(g, 0, ref_ev(g, 0, OBJ_NEW, 0x10, 1), 3);
	ref_ev(g, 0, OBJ_USE, 0x10, 1);
	builtin_ent(g, 1, TG_ENTITY_CREATE, "Lock", 0x20, 3, "a");
	expect(g, 1, builtin_ent(g, 1, TG_ENTITY_CREATE, "Lock", 0x20, 5, "b"), 3);
	int s50 = add_stream(g, 0, "app-42-0", 50, 0);
	thread_ev(g, s50, TG_THREAD_BEGIN, 50, 0);
	int s51 = add_stream(g, 0, "app-42-0", 50, 1);
	expect(g, s51, thread_ev(g, s51, TG_THREAD_BEGIN, 50, 1), 3);
	thread_ev(g, s51, THREAD_END, 50, 1);
}

static void rule4(struct gen *g)
{
	expect(g, 0, enter(g, 0, 3), 4); /* two parents missing */
	leave(g, 0);
	leave(g, 0);
	leave(g, 0);
	expect(g, 0, leave(g, 0), 4); /* nothing open */
	enter(g, 0, 1);
	expect(g, 0, enter(g, 0, 1), 4); /* a leave missing */
	leave(g, 0);
	enter(g, 1, 1); /* the worker's stack is its own */
	leave(g, 1);
	synth(g, 0, 100);
	size_t off = enter(g, 0, 2); /* a synthesized frame without its parent */
	printf("expect %s@%zu 4 synth\n", g->labels[0], off);
	g->expected[4]++;
	leave(g, 0);
	leave(g, 0);
	expect(g, 0, enter(g, 0, 0), 4); /* a depth of 0 */
	leave(g, 0);
}

static void rule5(struct gen *g)
{
	builtin_ent(g, 0, TG_ENTITY_CREATE, "Lock", 0x20, 0, "mutex");
	expect(g, 0, ref_ev(g, 0, LOCK_REL, 0x20, 0), 5);    /* never acquired */
	expect(g, 0, ref_ev(g, 0, LOCK_WAITED, 0x20, 0), 5); /* no wait begun */
	ref_ev(g, 0, LOCK_WAIT, 0x20, 0);
	expect(g, 0, ref_ev(g, 0, LOCK_WAIT, 0x20, 0), 5); /* waiting already */
	expect(g, 0, ref_ev(g, 0, LOCK_ACQ, 0x20, 0), 5);  /* acquired while waiting */
	ref_ev(g, 0, LOCK_WAITED, 0x20, 0);
	ref_ev(g, 0, LOCK_REL, 0x20, 0);
	ref_ev(g, 1, LOCK_ACQ, 0x20, 0);
	expect(g, 0, ref_ev(g, 0, LOCK_REL, 0x20, 0), 5); /* held by the worker, not main */
	ref_ev(g, 1, LOCK_REL, 0x20, 0);
	ref_ev(g, 0, LOCK_ACQ, 0x20, 0);
	ref_ev(g, 0, LOCK_ACQ, 0x20, 0);
	ref_ev(g, 0, LOCK_REL, 0x20, 0);
	ref_ev(g, 0, LOCK_REL, 0x20, 0);
	expect(g, 0, ref_ev(g, 0, LOCK_REL, 0x20, 0), 5); /* one release too many */
	ref_ev(g, 0, TH_SUSPEND, 43, 0);
	expect(g, 0, ref_ev(g, 0, TH_SUSPEND, 43, 0), 5);
	ref_ev(g, 0, TH_RESUME, 43, 0);
	expect(g, 0, ref_ev(g, 0, TH_RESUME, 43, 0), 5);
}

/* ---- big: a random consistent workload with injected violations --------------------- */

struct rng {
	uint64_t s;
};
static uint64_t rnd(struct rng *r, uint64_t n)
{
	return test_xorshift64(&r->s) % n;
}

#define NOBJ 4096
#define NLOCK 64
#define NTHR 4

/* The kinds of violation the random workload injects: every sub-case of every rule. */
static const struct {
	const char *name;
	int rule;
} kinds[] = {
    {"free_unborn", 1},        {"use_dead", 2},        {"move_dead", 2},
    {"new_live", 3},           {"skip_parent", 4},     {"leave_empty", 4},
    {"leave_missing", 4},      {"release_unheld", 5},  {"wait_again", 5},
    {"acquire_waiting", 5},    {"waited_unwaited", 5}, {"suspend_again", 5},
    {"resume_unsuspended", 5},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* Injects one violation of kinds[k] at stream s (thread t) on object o / lock l, keeping
 * the generator's view of the state equal to the checker's; 0 if the state does not
 * allow it here. Prints `inject NAME` for the test's count per kind. */
static int inject(struct gen *g, struct rng *r, unsigned k, int t, int s, uint64_t o, unsigned l,
                  uint32_t *gen_of, uint8_t *live, uint32_t *depth, uint32_t held[][NLOCK],
                  uint8_t waiting[][NLOCK], uint8_t *suspended, const uint32_t *tids)
{
	uint64_t obj = 0x100000 + o, lid = 0x9000 + l;
	int v = (int)rnd(r, NTHR);
	size_t off;
	switch (k) {
	case 0: /* reclaimed, never created */
		if (live[o])
			return 0;
		off = ref_ev(g, s, OBJ_FREE, obj, gen_of[o]);
		break;
	case 1: /* used outside its lifetime */
	case 2:
		if (live[o])
			return 0;
		off = ref_ev(g, s, k == 1 ? OBJ_USE : OBJ_MOVE, obj, gen_of[o]);
		break;
	case 3: /* created again without a reported reclamation */
		if (!live[o])
			return 0;
		off = ref_ev(g, s, OBJ_NEW, obj, ++gen_of[o]);
		break;
	case 4: /* a parent missing */
		off = enter(g, s, depth[t] + 2);
		depth[t] += 2;
		break;
	case 5: /* a leave with nothing open */
		if (depth[t])
			return 0;
		off = leave(g, s);
		break;
	case 6: /* an enter at the open frame's depth: a leave missing */
		if (!depth[t])
			return 0;
		off = enter(g, s, depth[t]);
		break;
	case 7: /* a release of a lock not held */
		if (held[t][l])
			return 0;
		off = ref_ev(g, s, LOCK_REL, lid, 0);
		break;
	case 8: /* a wait begun while already waiting */
		if (!waiting[t][l])
			return 0;
		off = ref_ev(g, s, LOCK_WAIT, lid, 0);
		break;
	case 9: /* an acquire while waiting (the wait stays open) */
		if (!waiting[t][l])
			return 0;
		off = ref_ev(g, s, LOCK_ACQ, lid, 0);
		held[t][l]++;
		break;
	case 10: /* a wait ended that was not begun */
		if (waiting[t][l])
			return 0;
		off = ref_ev(g, s, LOCK_WAITED, lid, 0);
		break;
	case 11: /* suspended twice */
		if (!suspended[v])
			return 0;
		off = ref_ev(g, s, TH_SUSPEND, tids[v], 0);
		break;
	default: /* resumed, not suspended */
		if (suspended[v])
			return 0;
		off = ref_ev(g, s, TH_RESUME, tids[v], 0);
		break;
	}
	expect(g, s, off, kinds[k].rule);
	printf("inject %s\n", kinds[k].name);
	return 1;
}

static void big(struct gen *g, uint64_t n, uint64_t seed)
{
	struct rng r = {seed * 2654435761u + 88172645463325252ull};
	static uint32_t gen_of[NOBJ];
	static uint8_t live[NOBJ];
	static uint32_t held[NTHR][NLOCK];
	static uint8_t waiting[NTHR][NLOCK];
	uint32_t depth[NTHR] = {0};
	uint8_t suspended[NTHR] = {0};
	int st[NTHR] = {0, 1, 3, 4};
	add_stream(g, 0, "app-42-0", 44, 0); /* 3 */
	add_stream(g, 0, "app-42-0", 45, 0); /* 4 */
	thread_ev(g, 3, TG_THREAD_BEGIN, 44, 0);
	thread_ev(g, 4, TG_THREAD_BEGIN, 45, 0);
	uint32_t tids[NTHR] = {42, 43, 44, 45};
	for (int l = 0; l < NLOCK; l++)
		builtin_ent(g, 0, TG_ENTITY_CREATE, "Lock", 0x9000 + (uint64_t)l, 0, "lock");
	unsigned kind = 0;
	uint64_t next = 15000 + rnd(&r, 10000);
	while (g->events < n) {
		int t = (int)rnd(&r, NTHR), s = st[t];
		unsigned a = (unsigned)rnd(&r, 100);
		uint64_t o = rnd(&r, NOBJ);
		unsigned l = (unsigned)rnd(&r, NLOCK);
		/* One violation every 20000 events or so, each kind of each rule in turn (the
		 * list in tests/check/check_test.py): when one cannot be made here (its object,
		 * lock or thread is in the wrong state) the next event tries again, so every run
		 * injects about n / 20000 of them, every kind several times. */
		if (g->events >= next) {
			next = g->events + 15000 + rnd(&r, 10000);
			if (inject(g, &r, kind, t, s, o, l, gen_of, live, depth, held, waiting,
			           suspended, tids)) {
				kind = (kind + 1) % NKINDS;
				continue;
			}
			next = g->events; /* not made: try again at the next event */
		}
		if (a < 15) {
			if (!live[o]) {
				if (gen_of[o] || rnd(&r, 2))
					gen_of[o]++;
				ref_ev(g, s, OBJ_NEW, 0x100000 + o, gen_of[o]);
				live[o] = 1;
			} else {
				ref_ev(g, s, OBJ_FREE, 0x100000 + o, gen_of[o]);
				live[o] = 0;
			}
		} else if (a < 45) {
			if (live[o])
				ref_ev(g, s, a < 40 ? OBJ_USE : OBJ_MOVE, 0x100000 + o, gen_of[o]);
			else
				ev(g, s, OBJ_USE), tg_ref(g->s[s], 0, 0), tg_u32(g->s[s], 0);
		} else if (a < 70) {
			if (depth[t] < 30 && (depth[t] == 0 || rnd(&r, 2))) {
				/* a marker and the enter are two events: not past n (the test
				 * counts exactly n) */
				if (rnd(&r, 8) == 0 && g->events + 2 <= n)
					synth(g, s, 5);
				enter(g, s, ++depth[t]);
			} else if (depth[t]) {
				leave(g, s);
				depth[t]--;
			}
		} else if (a < 90) {
			uint64_t lid = 0x9000 + l;
			if (waiting[t][l]) {
				ref_ev(g, s, LOCK_WAITED, lid, 0);
				waiting[t][l] = 0;
			} else if (held[t][l] && rnd(&r, 3)) {
				ref_ev(g, s, LOCK_REL, lid, 0);
				held[t][l]--;
			} else if (rnd(&r, 4) == 0) {
				ref_ev(g, s, LOCK_WAIT, lid, 0);
				waiting[t][l] = 1;
			} else if (held[t][l] < 3) {
				ref_ev(g, s, LOCK_ACQ, lid, 0);
				held[t][l]++;
			}
		} else {
			int v = (int)rnd(&r, NTHR);
			ref_ev(g, s, suspended[v] ? TH_RESUME : TH_SUSPEND, tids[v], 0);
			suspended[v] ^= 1;
		}
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: check_mktrace DIR SCENARIO [EVENTS SEED]\n");
		return 2;
	}
	mkdir(argv[1], 0777);
	struct gen g = {0};
	const char *sc = argv[2];
	open_images(&g, argv[1], !strcmp(sc, "damaged"));
	if (!strcmp(sc, "consistent") || !strcmp(sc, "damaged"))
		consistent(&g);
	else if (!strcmp(sc, "rule1"))
		rule1(&g);
	else if (!strcmp(sc, "rule2"))
		rule2(&g);
	else if (!strcmp(sc, "rule3"))
		rule3(&g);
	else if (!strcmp(sc, "rule4"))
		rule4(&g);
	else if (!strcmp(sc, "rule5"))
		rule5(&g);
	else if (!strcmp(sc, "big") && argc == 5)
		big(&g, strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10));
	else {
		fprintf(stderr, "check_mktrace: unknown scenario '%s'\n", sc);
		return 2;
	}
	if (strcmp(sc, "big"))
		close_images(&g);
	if (!strcmp(sc, "damaged")) { /* bad.op, and a packet of garbage after the worker's last */
		ev(&g, 0, BAD_OP);
		tg_u32(g.s[0], 1);
		size_t len;
		tg_stream_bytes(g.s[1], &len);
		tg_packet_end(g.s[1], 0, 0);
		static const uint8_t junk[200] = {0xab, 0xcd};
		tg_packet_begin(g.s[1], 1000000000ull + g.now);
		tg_raw(g.s[1], junk, sizeof junk);
		uint8_t *b = tg_stream_bytes(g.s[1], &len);
		memset(b + len - sizeof junk - 80, 0xee, 4); /* its magic */
	}
	finish(&g);
	return 0;
}
