/* Sensor specifications for the α planner: which event types feed which relation and
 * where their enable flags are, read from a trace's metadata or a sensor description. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/model.h"
#include "live/alpha.h"
#include "relations/columns.h"

static bool known(const struct vga_sensors *s, const char *event)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].event, event))
			return true;
	return false;
}

/* An op of the wait-for graph (relations/waits.c): its events feed WaitFor. */
static bool is_lock_op(int op)
{
	static const char *const lock_ops[] = {"acquire", "release", "wait_begin", "wait_end"};
	for (size_t k = 0; k < 4 && op > 0 && op < VGT_OP_COUNT; k++)
		if (!strcmp(vgt_op_names[op], lock_ops[k]))
			return true;
	return false;
}

static struct vga_sensor *add(struct vga_sensors *s)
{
	s->v = vgq_xrealloc(s->v, s->n + 1, sizeof *s->v);
	struct vga_sensor *x = &s->v[s->n++];
	memset(x, 0, sizeof *x);
	return x;
}

void vga_sensors_from_trace(const struct vgt_trace *t, struct vga_sensors *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < vgt_image_count(t); i++) {
		const struct vgt_image *img = vgt_image_at(t, i);
		for (size_t k = 0; k < img->ntypes; k++) {
			const struct vgt_event_type *et = img->types[k];
			if (!et->vigil || !strncmp(et->name, "vg.", 3) ||
			    et->kind == VGT_KIND_CREATE || et->kind == VGT_KIND_RECLAIM ||
			    known(out, et->name))
				continue;
			struct vga_sensor *x = add(out);
			x->event = et->name;
			x->relation = et->relation ? et->relation : et->name;
			x->kind = et->kind == VGT_KIND_BEGIN   ? VGA_BEGIN
			          : et->kind == VGT_KIND_END   ? VGA_END
			          : et->kind == VGT_KIND_STATE ? VGA_STATE
			                                       : VGA_EVENT;
			x->place = (enum vga_place)et->flag;
			x->sampled = et->sampled;
			x->once = et->once;
			x->lock_op = is_lock_op(et->op);
			x->samplable =
			    et->sampled && (x->kind == VGA_BEGIN || x->kind == VGA_END) &&
			    et->flag != VGT_FLAG_SENSOR &&
			    (et->op == 0 || et->op == VGT_OP_REFERENCE || et->op == VGT_OP_MOVE);
			int role = et->flag == VGT_FLAG_PERFORMER   ? et->performer
			           : et->flag == VGT_FLAG_INITIATOR ? et->initiator
			           : et->flag == VGT_FLAG_TARGET    ? et->target
			                                            : -1;
			if (role >= 0 && (unsigned)role < et->nfields) {
				x->flag_field = et->fields[role].name;
				x->flag_kind = et->fields[role].ref_kind;
			}
		}
	}
}

void vga_sensors_from_model(const struct vgl_model *m, struct vga_sensors *out)
{
	static const char *const suffix[] = {"", ".begin", ".end"};
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < m->nsensors; i++) {
		const struct vgl_sensor *s = &m->sensors[i];
		int first = s->relation == VGL_REL_INTERVAL ? 1 : 0;
		int last = s->relation == VGL_REL_INTERVAL ? 2 : 0;
		for (int half = first; half <= last; half++) {
			struct vga_sensor *x = add(out);
			size_t len = strlen(s->event_name) + strlen(suffix[half]) + 1;
			char *name = vgq_xcalloc(len, 1);
			snprintf(name, len, "%s%s", s->event_name, suffix[half]);
			x->event = name;
			x->relation = s->name;
			x->kind = s->relation == VGL_REL_STATE ? VGA_STATE
			          : half == 1                  ? VGA_BEGIN
			          : half == 2                  ? VGA_END
			                                       : VGA_EVENT;
			x->place = (enum vga_place)s->flag;
			x->sampled = s->sampled;
			x->once = s->once;
			x->lock_op = is_lock_op((int)(half == 2 ? s->end_op : s->op));
			x->samplable = half > 0 && vgl_sensor_sampled_interval(s);
			int role = s->flag == VGL_FLAG_PERFORMER   ? s->performer
			           : s->flag == VGL_FLAG_INITIATOR ? s->initiator
			           : s->flag == VGL_FLAG_TARGET    ? s->target
			                                           : -1;
			if (role >= 0 && (size_t)role < s->record->nfields) {
				const struct vgl_field *f = &s->record->fields[role];
				x->flag_field = f->name;
				x->flag_kind = f->entity ? f->entity->name : NULL;
			}
		}
	}
	out->owns_events = true;
}

void vga_sensors_free(struct vga_sensors *s)
{
	if (s->owns_events)
		for (size_t i = 0; i < s->n; i++)
			free((char *)s->v[i].event);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}
