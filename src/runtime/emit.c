/* The generic emitter: one event from an array of values, checked against the sensor's
 * schema. Slower than a generated or hand-written inline sensor, but needs no code per
 * sensor; vigil's own built-in events use it. */
#define _GNU_SOURCE
#include <string.h>

#include "internal.h"

static uint32_t string_len(const char *s)
{
	return s ? (uint32_t)strnlen(s, vg__rt.cfg.max_string) : 0;
}

size_t vg__payload_size(vg_sensor *s, const vg_value *values)
{
	const vg_type_desc *d = vg__sensor_desc(s);
	size_t size = 0;
	for (unsigned i = 0; i < d->nfields; i++) {
		switch (d->fields[i].type) {
		case VG_INT8:
		case VG_UINT8:
			size += 1;
			break;
		case VG_INT16:
		case VG_UINT16:
			size += 2;
			break;
		case VG_INT32:
		case VG_UINT32:
			size += 4;
			break;
		case VG_INT64:
		case VG_UINT64:
		case VG_DOUBLE:
			size += 8;
			break;
		case VG_STRING:
			size += string_len(values[i].s) + 1;
			break;
		case VG_BYTES:
			size += 4 + (size_t)values[i].b.len;
			break;
		case VG_ENTITY:
			size += 12;
			break;
		}
	}
	return size;
}

static const vg_entity *flag_holder(const vg_type_desc *d, const vg_value *values)
{
	switch (d->placement) {
	case VG_FLAG_PERFORMER:
		return d->performer >= 0 ? values[d->performer].e : vg_self();
	case VG_FLAG_INITIATOR:
		return values[d->initiator].e;
	case VG_FLAG_TARGET:
		return values[d->target].e;
	default:
		return NULL;
	}
}

uint8_t *vg__encode_values(uint8_t *p, const vg_type_desc *d, const vg_value *values)
{
	for (unsigned i = 0; i < d->nfields; i++) {
		const vg_value *v = &values[i];
		switch (d->fields[i].type) {
		case VG_INT8:
		case VG_UINT8:
			p = vg_put_u8(p, (uint8_t)v->u);
			break;
		case VG_INT16:
		case VG_UINT16:
			p = vg_put_u16(p, (uint16_t)v->u);
			break;
		case VG_INT32:
		case VG_UINT32:
			p = vg_put_u32(p, (uint32_t)v->u);
			break;
		case VG_INT64:
		case VG_UINT64:
			p = vg_put_u64(p, v->u);
			break;
		case VG_DOUBLE:
			p = vg_put_f64(p, v->d);
			break;
		case VG_STRING:
			p = vg_put_str(p, v->s, vg__rt.cfg.max_string);
			break;
		case VG_BYTES:
			p = vg_put_bytes(p, v->b.data, v->b.len);
			break;
		case VG_ENTITY:
			p = vg_put_ref(p, v->e);
			break;
		}
	}
	return p;
}

/* Rule 2: may the event name every entity of its values (but field `except`)? */
static int refs_live(const vg_type_desc *d, const vg_value *values, int except)
{
	for (unsigned i = 0; i < d->nfields; i++)
		if ((int)i != except && d->fields[i].type == VG_ENTITY && !vg_live(values[i].e))
			return 0;
	return 1;
}

/* An activity the filters want (`wanted`): rule 2, then, with several listeners, to the
 * listeners that may refer to every entity it names. 0: not reported. */
static unsigned listen_narrow(unsigned wanted, const vg_type_desc *d, const vg_value *values)
{
	if (!wanted || (vg__tracking && !refs_live(d, values, -1)))
		return 0;
	if (vg__listening) {
		wanted &= vg__listen_take_live();
		vg__listen_decide(wanted);
	}
	return wanted;
}

static void fire_triggers(vg_sensor *s, const vg_type_desc *d, const vg_value *values)
{
	if (VG_LIKELY(!atomic_load_explicit(&s->react, memory_order_relaxed)))
		return;
	/* Triggers of the monitor (docs/control.md), as generated sensors apply them. */
	const vg_entity *ents[256];
	unsigned n = 0;
	for (unsigned i = 0; i < d->nfields && n < 256; i++)
		if (d->fields[i].type == VG_ENTITY)
			ents[n++] = values[i].e;
	vg_sensor_fired(s, ents, n);
}

/* Writes the event through `p` from vg__event_start / vg_*_begin; 0, or -1 if p is NULL. */
static int finish(vg_sensor *s, const vg_type_desc *d, const vg_value *values, uint8_t *p)
{
	if (!p)
		return -1;
	vg_event_commit(vg__encode_values(p, d, values));
	fire_triggers(s, d, values);
	return 0;
}

static int payload_fits(vg_sensor *s, const vg_value *values, uint32_t *size)
{
	size_t n = vg__payload_size(s, values);
	if (n > UINT32_MAX - 64) {
		vg__count_discarded(1);
		return 0;
	}
	*size = (uint32_t)n;
	return 1;
}

int vg__emit_decided(vg_sensor *s, const vg_value *values)
{
	const vg_type_desc *d = vg__sensor_desc(s);
	uint32_t size;
	if (!d || !payload_fits(s, values, &size))
		return -1;
	return finish(s, d, values, vg__decided_start(s, size));
}

static int emit_enter(vg_sensor *s, const vg_type_desc *d, const vg_value *values, uint32_t size)
{
	uint8_t *p = vg_enter_begin(s, size);
	if (!p)
		return -1;
	if (vg__tracking && !refs_live(d, values, -1)) {
		vg_enter_commit(s, NULL);
		return -1;
	}
	vg_enter_commit(s, vg__encode_values(p, d, values));
	return 0;
}

int vg_emit(vg_sensor *s, const vg_value *values)
{
	const vg_type_desc *d = vg__sensor_desc(s);
	if (!d || !vg_tracking(s))
		return -1;
	uint32_t size;
	if (!payload_fits(s, values, &size))
		return -1;
	switch (d->op) {
	case VG_OP_ACTIVITY:
	case VG_OP_REFERENCE:
	case VG_OP_MOVE:
		if (!vg_on(s) || !listen_narrow(vg__wanted(s, flag_holder(d, values)), d, values))
			return -1;
		return finish(s, d, values, vg__decided_start(s, size));
	case VG_OP_ENTER:
		return emit_enter(s, d, values, size);
	case VG_OP_LEAVE:
		return finish(s, d, values, vg_leave_begin(s, size));
	default:
		if (d->target < 0)
			return -1;
		/* Activity ops may name other entities: rule 2 holds for those too. */
		return finish(s, d, values,
		              vg__op_begin(s, (vg_entity *)values[d->target].e,
		                           !vg__tracking || refs_live(d, values, d->target), size));
	}
}

int vg__emit_dated(vg_sensor *s, const vg_value *values, void (*date)(uint8_t *, const void *),
                   const void *arg)
{
	const vg_type_desc *d = vg__sensor_desc(s);
	if (!d || d->op != VG_OP_ACTIVITY)
		return vg_emit(s, values);
	uint32_t size;
	if (!vg_tracking(s) || !payload_fits(s, values, &size) || !vg_on(s) ||
	    !listen_narrow(vg__wanted(s, flag_holder(d, values)), d, values))
		return -1;
	uint8_t *p = vg__decided_start(s, size);
	if (p)
		date(p, arg);
	return finish(s, d, values, p);
}

static void emit_thread(int which, uint32_t tid, uint32_t gen, const char *name)
{
	vg_value v[3];
	v[0].u = tid;
	v[1].u = gen;
	v[2].s = name ? name : "";
	vg__emit_decided(vg__builtin(which), v);
}

/* The calling thread's own lifetime: its entity (stream.c) carries what was reported. */
void vg__emit_thread_begin(uint32_t tid, uint32_t gen, const char *name)
{
	vg_entity *self = vg__thread_entity();
	int report = vg__wanted(vg__builtin(VG_B_THREAD_BEGIN), NULL);
	if (self)
		vg__track_created(self, report);
	if (report)
		emit_thread(VG_B_THREAD_BEGIN, tid, gen, name);
}

/* An exec'd image's main thread existed before: its name starts it in this image. */
void vg__emit_thread_continued(uint32_t tid, uint32_t gen, const char *name)
{
	vg_entity *self = vg__thread_entity();
	int report = vg__wanted(vg__builtin(VG_B_THREAD_NAME), NULL);
	if (self)
		vg__track_created(self, report);
	if (report)
		emit_thread(VG_B_THREAD_NAME, tid, gen, name);
}

void vg__emit_thread_name(uint32_t tid, uint32_t gen, const char *name)
{
	vg_entity *self = vg__thread_entity();
	unsigned wanted = vg__wanted(vg__builtin(VG_B_THREAD_NAME), NULL);
	if (self ? vg__track_op(VG_OP_RENAME, self, wanted) : wanted)
		emit_thread(VG_B_THREAD_NAME, tid, gen, name);
}

void vg__emit_thread_end(uint32_t tid, uint32_t gen)
{
	vg_entity *self = vg__thread_entity();
	unsigned wanted = vg__wanted(vg__builtin(VG_B_THREAD_END), NULL);
	if (self ? vg__track_op(VG_OP_RECLAIM, self, wanted) : wanted)
		emit_thread(VG_B_THREAD_END, tid, gen, NULL);
}
