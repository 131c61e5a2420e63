/* The consistency fuzzer's sensors, recorded the two ways a subject can: the inline API
 * as `vigil gen` emits it (tests/lang_c ops sensors are the model) and vg_emit. */
#include "fuzz_sensors.h"

#include <stddef.h>

vg_sensor *fz_sensors[FZ_NSENSORS];

static const vg_field_desc obj_f[] = {{"obj", VG_ENTITY, "Obj"}, {"seq", VG_UINT32, NULL}};
static const vg_field_desc ref_f[] = {
    {"from", VG_ENTITY, "Obj"}, {"to", VG_ENTITY, "Obj"}, {"seq", VG_UINT32, NULL}};
static const vg_field_desc touch_f[] = {
    {"obj", VG_ENTITY, "Obj"}, {"type", VG_ENTITY, "Type"}, {"seq", VG_UINT32, NULL}};
static const vg_field_desc call_f[] = {
    {"fn", VG_UINT32, NULL}, {"obj", VG_ENTITY, "Obj"}, {"seq", VG_UINT32, NULL}};
static const vg_field_desc ret_f[] = {{"seq", VG_UINT32, NULL}};
static const vg_field_desc lock_f[] = {{"lock", VG_ENTITY, "Lock"}, {"seq", VG_UINT32, NULL}};
static const vg_field_desc thr_f[] = {{"thread", VG_ENTITY, "thread"}, {"seq", VG_UINT32, NULL}};

#define DESC(nm, rel, k, f, ini, tgt, o)                                                           \
	{                                                                                          \
		.name = nm, .relation = rel, .kind = k, .placement = VG_FLAG_SENSOR, .fields = f,  \
		.nfields = sizeof f / sizeof f[0], .performer = -1, .initiator = ini,              \
		.target = tgt, .op = o                                                             \
	}

static const vg_type_desc descs[FZ_NSENSORS] = {
    [FZ_OBJ_NEW] = DESC("fz.obj.new", NULL, VG_KIND_EVENT, obj_f, -1, 0, VG_OP_CREATE),
    [FZ_OBJ_FREE] = DESC("fz.obj.free", NULL, VG_KIND_EVENT, obj_f, -1, 0, VG_OP_RECLAIM),
    [FZ_REF] = DESC("fz.ref", NULL, VG_KIND_EVENT, ref_f, 0, 1, VG_OP_REFERENCE),
    [FZ_TOUCH] = DESC("fz.touch", NULL, VG_KIND_EVENT, touch_f, -1, -1, VG_OP_ACTIVITY),
    [FZ_CALL] = DESC("fz.call.begin", "fz.call", VG_KIND_BEGIN, call_f, -1, -1, VG_OP_ENTER),
    [FZ_RET] = DESC("fz.call.end", "fz.call", VG_KIND_END, ret_f, -1, -1, VG_OP_LEAVE),
    [FZ_ACQ] = DESC("fz.lock.acquire", NULL, VG_KIND_EVENT, lock_f, -1, 0, VG_OP_ACQUIRE),
    [FZ_REL] = DESC("fz.lock.release", NULL, VG_KIND_EVENT, lock_f, -1, 0, VG_OP_RELEASE),
    [FZ_WAIT] = DESC("fz.lock.wait", NULL, VG_KIND_EVENT, lock_f, -1, 0, VG_OP_WAIT_BEGIN),
    [FZ_GOT] = DESC("fz.lock.got", NULL, VG_KIND_EVENT, lock_f, -1, 0, VG_OP_WAIT_END),
    [FZ_STOP] = DESC("fz.thread.stop", NULL, VG_KIND_EVENT, thr_f, -1, 0, VG_OP_SUSPEND),
    [FZ_GO] = DESC("fz.thread.go", NULL, VG_KIND_EVENT, thr_f, -1, 0, VG_OP_RESUME),
};

void fz_sensors_register(void)
{
	for (int i = 0; i < FZ_NSENSORS; i++)
		fz_sensors[i] = vg_sensor_register(&descs[i]);
}

/* An op on a target and a seq: create, reclaim, lock and thread ops. */
static void target_op(int inl, enum fz_sensor which, vg_entity *target, uint32_t seq)
{
	vg_sensor *s = fz_sensors[which];
	if (!inl) {
		vg_value v[2] = {{.e = target}, {.u = seq}};
		vg_emit(s, v);
		return;
	}
	if (!vg_tracking(s))
		return;
	uint8_t *p = vg_op_begin(s, target, 16);
	if (p) {
		p = vg_put_ref(p, target);
		p = vg_put_u32(p, seq);
		vg_event_commit(p);
	}
}

void fz_obj_op(int inl, enum fz_sensor which, vg_entity *obj, uint32_t seq)
{
	target_op(inl, which, obj, seq);
}

void fz_target_op(int inl, enum fz_sensor which, vg_entity *target, uint32_t seq)
{
	target_op(inl, which, target, seq);
}

/* A plain activity naming two entities (fields 0 and 1) and a seq. */
static void activity2(int inl, vg_sensor *s, const vg_entity *a, const vg_entity *b, uint32_t seq)
{
	if (!inl) {
		vg_value v[3] = {{.e = a}, {.e = b}, {.u = seq}};
		vg_emit(s, v);
		return;
	}
	if (!vg_on(s))
		return;
	if (vg__tracking && !(vg_live(a) && vg_live(b)))
		return; /* rule 2 */
	uint8_t *p = vg_event_begin(s, 28);
	if (!p)
		return;
	p = vg_put_ref(p, a);
	p = vg_put_ref(p, b);
	p = vg_put_u32(p, seq);
	vg_event_commit(p);
}

void fz_ref(int inl, const vg_entity *from, const vg_entity *to, uint32_t seq)
{
	activity2(inl, fz_sensors[FZ_REF], from, to, seq);
}

void fz_touch(int inl, const vg_entity *obj, const vg_entity *type, uint32_t seq)
{
	activity2(inl, fz_sensors[FZ_TOUCH], obj, type, seq);
}

void fz_call(int inl, uint32_t fn, const vg_entity *obj, uint32_t seq)
{
	vg_sensor *s = fz_sensors[FZ_CALL];
	if (!inl) {
		vg_value v[3] = {{.u = fn}, {.e = obj}, {.u = seq}};
		vg_emit(s, v);
		return;
	}
	if (!vg_tracking(s))
		return;
	uint8_t *p = vg_enter_begin(s, 20);
	if (!p)
		return;
	if (vg__tracking && !vg_live(obj)) {
		vg_enter_commit(s, NULL); /* rule 2: never reported */
		return;
	}
	p = vg_put_u32(p, fn);
	p = vg_put_ref(p, obj);
	p = vg_put_u32(p, seq);
	vg_enter_commit(s, p);
}

void fz_ret(int inl, uint32_t seq)
{
	vg_sensor *s = fz_sensors[FZ_RET];
	if (!inl) {
		vg_value v[1] = {{.u = seq}};
		vg_emit(s, v);
		return;
	}
	if (!vg_tracking(s))
		return;
	uint8_t *p = vg_leave_begin(s, 4);
	if (p)
		vg_event_commit(vg_put_u32(p, seq));
}
