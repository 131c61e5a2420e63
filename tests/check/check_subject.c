/* A subject for check.record: one thread doing, with reporting suspended and resumed
 * around them, what naive filtering gets wrong (docs/consistency.md). Run with
 * VIGIL_CONSISTENCY=off it writes exactly one violation of each rule, in this order:
 *   1 obj.free of an object whose creation was not reported
 *   2 obj.use of an object whose creation was not reported
 *   3 obj.new of a reused address whose reclamation was not reported
 *   4 call.enter at depth 3 whose parent (depth 2) was not reported
 *   5 lock.release of an acquire that was not reported
 * and with consistency on (the default) a trace that `vigil check` accepts. */
#include <stdio.h>

#include "vigil/vigil.h"

static const vg_field_desc obj_fields[] = {{"o", VG_ENTITY, "Buffer"}};
static const vg_field_desc use_fields[] = {{"o", VG_ENTITY, "Buffer"}, {"n", VG_UINT32, NULL}};
static const vg_field_desc call_fields[] = {{"fn", VG_UINT32, NULL}};
static const vg_field_desc lock_fields[] = {{"l", VG_ENTITY, "Lock"}};

#define DESC(name, rel, kind, fields, n, target, op)                                               \
	{                                                                                          \
		name, rel, kind, VG_FLAG_SENSOR, 0, fields, n, -1, -1, target, op                  \
	}
static const vg_type_desc descs[] = {
    DESC("obj.new", NULL, VG_KIND_CREATE, obj_fields, 1, 0, VG_OP_CREATE),
    DESC("obj.free", NULL, VG_KIND_RECLAIM, obj_fields, 1, 0, VG_OP_RECLAIM),
    DESC("obj.use", NULL, VG_KIND_EVENT, use_fields, 2, -1, VG_OP_ACTIVITY),
    DESC("call.enter", "call", VG_KIND_BEGIN, call_fields, 1, -1, VG_OP_ENTER),
    DESC("call.leave", "call", VG_KIND_END, call_fields, 1, -1, VG_OP_LEAVE),
    DESC("lock.acquire", NULL, VG_KIND_EVENT, lock_fields, 1, 0, VG_OP_ACQUIRE),
    DESC("lock.release", NULL, VG_KIND_EVENT, lock_fields, 1, 0, VG_OP_RELEASE),
};
enum { NEW, FREE, USE, ENTER, LEAVE, ACQUIRE, RELEASE, NSENSORS };
static vg_sensor *sensors[NSENSORS];

static void on_entity(int which, vg_entity *e)
{
	vg_value v[2] = {{.e = e}, {.u = 7}};
	vg_emit(sensors[which], v);
}

static void call(int which, uint32_t fn)
{
	vg_value v[1] = {{.u = fn}};
	vg_emit(sensors[which], v);
}

int main(void)
{
	for (int i = 0; i < NSENSORS; i++) {
		sensors[i] = vg_sensor_register(&descs[i]);
		vg_sensor_enable(sensors[i]);
	}
	static vg_entity a, b, c, lock;
	/* 1: created while suspended, reclaimed after. */
	vg_report_suspend();
	on_entity(NEW, &a);
	vg_report_resume();
	on_entity(FREE, &a);
	/* 2: created while suspended, used after. */
	vg_report_suspend();
	on_entity(NEW, &b);
	vg_report_resume();
	on_entity(USE, &b);
	/* 3: reclaimed while suspended, its address reused after. */
	on_entity(NEW, &c);
	vg_report_suspend();
	on_entity(FREE, &c);
	vg_report_resume();
	on_entity(NEW, &c);
	on_entity(USE, &c);
	/* 4: the middle invocation entered while this thread's reporting was suspended. */
	call(ENTER, 1);
	vg_report_thread_suspend();
	call(ENTER, 2);
	vg_report_thread_resume();
	call(ENTER, 3);
	call(LEAVE, 3);
	call(LEAVE, 2);
	call(LEAVE, 1);
	/* 5: acquired while suspended, released after. */
	vg_entity_create(&lock, "Lock", 0x1234, "mutex");
	vg_report_suspend();
	on_entity(ACQUIRE, &lock);
	vg_report_resume();
	on_entity(RELEASE, &lock);
	vg_entity_reclaim(&lock);
	printf("done\n");
	return 0;
}
