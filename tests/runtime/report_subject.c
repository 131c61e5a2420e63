/* Scripted subjects for the consistency rules of the runtime (report_test.py): each
 * scenario drives sensors with ops through suspends and filters; the test compares what
 * was reported with what the rules of docs/consistency.md demand. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vigil/vigil.h"

static const vg_field_desc call_f[] = {{"fn", VG_UINT32, NULL}};
static const vg_field_desc lock_f[] = {{"lock", VG_ENTITY, "Lock"}};
static const vg_field_desc obj_f[] = {{"obj", VG_ENTITY, "Obj"}, {"n", VG_UINT32, NULL}};
static const vg_field_desc ref_f[] = {{"from", VG_ENTITY, "Obj"}, {"to", VG_ENTITY, "Obj"}};
static const vg_field_desc thr_f[] = {{"thread", VG_ENTITY, "thread"}};

#define DESC(n, rel, k, f, nf, tgt, o)                                                             \
	{                                                                                          \
		.name = n, .relation = rel, .kind = k, .fields = f, .nfields = nf,                 \
		.performer = -1, .initiator = -1, .target = tgt, .op = o                           \
	}
static const vg_type_desc d_enter =
    DESC("t.call.begin", "t.call", VG_KIND_BEGIN, call_f, 1, -1, VG_OP_ENTER);
static const vg_type_desc d_leave =
    DESC("t.call.end", "t.call", VG_KIND_END, NULL, 0, -1, VG_OP_LEAVE);
static const vg_type_desc d_acq =
    DESC("t.acquire", NULL, VG_KIND_EVENT, lock_f, 1, 0, VG_OP_ACQUIRE);
static const vg_type_desc d_rel =
    DESC("t.release", NULL, VG_KIND_EVENT, lock_f, 1, 0, VG_OP_RELEASE);
static const vg_type_desc d_wb =
    DESC("t.wait_begin", NULL, VG_KIND_EVENT, lock_f, 1, 0, VG_OP_WAIT_BEGIN);
static const vg_type_desc d_we =
    DESC("t.wait_end", NULL, VG_KIND_EVENT, lock_f, 1, 0, VG_OP_WAIT_END);
static const vg_type_desc d_new = DESC("t.new", NULL, VG_KIND_EVENT, obj_f, 2, 0, VG_OP_CREATE);
static const vg_type_desc d_free = DESC("t.free", NULL, VG_KIND_EVENT, obj_f, 2, 0, VG_OP_RECLAIM);
static const vg_type_desc d_ref = DESC("t.ref", NULL, VG_KIND_EVENT, ref_f, 2, 1, VG_OP_REFERENCE);
static const vg_type_desc d_susp =
    DESC("t.suspend", NULL, VG_KIND_EVENT, thr_f, 1, 0, VG_OP_SUSPEND);
static const vg_type_desc d_resume =
    DESC("t.resume", NULL, VG_KIND_EVENT, thr_f, 1, 0, VG_OP_RESUME);

static vg_sensor *s_enter, *s_leave, *s_acq, *s_rel, *s_wb, *s_we, *s_new, *s_free, *s_ref, *s_susp,
    *s_resume;

static void enter(uint32_t fn)
{
	vg_value v = {.u = fn};
	vg_emit(s_enter, &v);
}
static void leave(void)
{
	vg_emit(s_leave, NULL);
}
static void on_entity(vg_sensor *s, vg_entity *e)
{
	vg_value v = {.e = e};
	vg_emit(s, &v);
}
static void object(vg_sensor *s, vg_entity *e, uint32_t n)
{
	vg_value v[2] = {{.e = e}, {.u = n}};
	vg_emit(s, v);
}
static void ref(vg_entity *a, vg_entity *b)
{
	vg_value v[2] = {{.e = a}, {.e = b}};
	vg_emit(s_ref, v);
}

/* Reporting resumes three calls deep: the two enclosing enters come first. */
static void calls(void)
{
	enter(1);
	vg_report_suspend();
	enter(2);
	enter(3);
	vg_report_resume();
	enter(4);
	vg_report_suspend();
	leave(); /* 4, 3, 2 were reported: their leaves are, whatever the filters say */
	leave();
	leave();
	vg_report_resume();
	leave();
	vg_report_thread_suspend();
	enter(5); /* never reported, nor its leave */
	vg_report_thread_resume();
	leave();
}

/* One address, three lifetimes: only reported creations get reported reclaims. */
static void objects(void)
{
	static vg_entity obj, other;
	vg_report_suspend();
	object(s_new, &obj, 1); /* generation 0, not reported */
	vg_report_resume();
	object(s_new, &other, 9);
	ref(&other, &obj);       /* names an unreported object: not reported */
	object(s_free, &obj, 1); /* its creation was not reported: neither is this */
	object(s_new, &obj, 2);  /* generation 1, reported */
	ref(&other, &obj);
	vg_report_suspend();
	object(s_free, &obj, 2); /* reported although suspended */
	vg_report_resume();
	object(s_free, &other, 9);
}

static void locks(void)
{
	static vg_entity lock;
	vg_entity_create(&lock, "Lock", 7, "L7");
	on_entity(s_acq, &lock);
	on_entity(s_acq, &lock); /* nested */
	vg_report_suspend();
	on_entity(s_rel, &lock); /* both acquires were reported: so are both releases */
	on_entity(s_rel, &lock);
	on_entity(s_wb, &lock); /* not reported */
	vg_report_resume();
	on_entity(s_we, &lock); /* its begin was not: neither is it */
	on_entity(s_acq, &lock);
	vg_report_thread_suspend();
	on_entity(s_rel, &lock);
	on_entity(s_wb, &lock);
	vg_report_thread_resume();
	on_entity(s_we, &lock);
	on_entity(s_rel, &lock); /* nothing held: not reported */
	vg_entity_reclaim(&lock);
}

/* Only entity events are reported: the activity between them is left out. */
static void categories(void)
{
	static vg_entity lock;
	vg_report_categories(VG_CAT_ENTITY);
	vg_entity_create(&lock, "Lock", 8, "L8");
	on_entity(s_acq, &lock);
	vg_report_categories(VG_CAT_ENTITY | VG_CAT_ACTIVITY);
	on_entity(s_rel, &lock); /* its acquire was not reported */
	on_entity(s_acq, &lock);
	vg_report_categories(VG_CAT_ENTITY);
	on_entity(s_rel, &lock); /* reported: its acquire was */
	vg_entity_reclaim(&lock);
	vg_report_categories(VG_CAT_ENTITY | VG_CAT_ACTIVITY);
}

static void *quiet_thread(void *arg)
{
	(void)arg;
	enter(10);
	pthread_setname_np(pthread_self(), "quiet-1"); /* filtered out from here on */
	enter(11);
	leave();
	leave(); /* the leave of 10 is reported: its enter was */
	return NULL;
}

static void threads(void)
{
	pthread_t th;
	pthread_create(&th, NULL, quiet_thread, NULL);
	pthread_join(th, NULL);
}

static void *sleeper(void *arg)
{
	vg_entity **self = arg;
	*self = vg_self();
	return NULL;
}

static void suspend_resume(void)
{
	vg_entity *me = vg_self();
	vg_report_suspend();
	on_entity(s_susp, me);
	vg_report_resume();
	on_entity(s_resume, me); /* its suspend was not reported */
	on_entity(s_susp, me);
	vg_report_suspend();
	on_entity(s_resume, me);
	vg_report_resume();
	(void)sleeper;
}

/* A fork child's trace has none of its parent's frames: they are synthesized there. */
static void forked(void)
{
	enter(20);
	enter(21);
	pid_t pid = fork();
	if (pid == 0) {
		enter(22);
		leave();
		leave();
		leave();
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	leave();
	leave();
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: report_subject SCENARIO\n");
		return 2;
	}
	s_enter = vg_sensor_register(&d_enter);
	s_leave = vg_sensor_register(&d_leave);
	s_acq = vg_sensor_register(&d_acq);
	s_rel = vg_sensor_register(&d_rel);
	s_wb = vg_sensor_register(&d_wb);
	s_we = vg_sensor_register(&d_we);
	s_new = vg_sensor_register(&d_new);
	s_free = vg_sensor_register(&d_free);
	s_ref = vg_sensor_register(&d_ref);
	s_susp = vg_sensor_register(&d_susp);
	s_resume = vg_sensor_register(&d_resume);
	static const struct {
		const char *name;
		void (*run)(void);
	} scenarios[] = {{"calls", calls},     {"objects", objects},
	                 {"locks", locks},     {"categories", categories},
	                 {"threads", threads}, {"suspend_resume", suspend_resume},
	                 {"forked", forked}};
	for (size_t i = 0; i < sizeof scenarios / sizeof *scenarios; i++)
		if (!strcmp(argv[1], scenarios[i].name)) {
			scenarios[i].run();
			return 0;
		}
	fprintf(stderr, "report_subject: unknown scenario '%s'\n", argv[1]);
	return 2;
}
