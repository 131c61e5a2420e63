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

int vg_emit(vg_sensor *s, const vg_value *values)
{
	const vg_type_desc *d = vg__sensor_desc(s);
	if (!d || !vg_on(s))
		return -1;
	if (d->placement != VG_FLAG_SENSOR && !vg_on_entity(s, flag_holder(d, values)))
		return -1;
	size_t size = vg__payload_size(s, values);
	if (size > UINT32_MAX - 64) {
		vg__count_discarded(1);
		return -1;
	}
	uint8_t *p = vg_event_begin(s, (uint32_t)size);
	if (!p)
		return -1;
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
	vg_event_commit(p);
	if (VG_UNLIKELY(atomic_load_explicit(&s->react, memory_order_relaxed))) {
		/* Triggers of the monitor (docs/control.md), as generated sensors apply them. */
		const vg_entity *ents[256];
		unsigned n = 0;
		for (unsigned i = 0; i < d->nfields && n < 256; i++)
			if (d->fields[i].type == VG_ENTITY)
				ents[n++] = values[i].e;
		vg_sensor_fired(s, ents, n);
	}
	return 0;
}

static void emit_thread(int which, uint32_t tid, uint32_t gen, const char *name)
{
	vg_value v[3];
	v[0].u = tid;
	v[1].u = gen;
	v[2].s = name ? name : "";
	vg_emit(vg__builtin(which), v);
}

void vg__emit_thread_begin(uint32_t tid, uint32_t gen, const char *name)
{
	emit_thread(VG_B_THREAD_BEGIN, tid, gen, name);
}

void vg__emit_thread_name(uint32_t tid, uint32_t gen, const char *name)
{
	emit_thread(VG_B_THREAD_NAME, tid, gen, name);
}

void vg__emit_thread_end(uint32_t tid, uint32_t gen)
{
	emit_thread(VG_B_THREAD_END, tid, gen, NULL);
}
