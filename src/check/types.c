/* What each event type of the trace does: its op (from `model.emf.uri`, or by name for
 * vigil's built-in events), the entity it acts on, and the entities it refers to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

_Static_assert(VGC_OP_COUNT == VGT_OP_COUNT && VGC_OP_ENTER == VGT_OP_ENTER &&
                   VGC_OP_LEAVE == VGT_OP_LEAVE,
               "enum vgc_op follows the reader's vgt_op_names");

const char *vgc_op_name(enum vgc_op op)
{
	return op < VGC_OP_COUNT ? vgt_op_names[op] : "?";
}

static const struct {
	const char *name;
	enum vgc_builtin b;
	enum vgc_op op;
} builtins[] = {
    {"vg.process.begin", VGC_B_PROCESS_BEGIN, VGC_OP_CREATE},
    {"vg.process.end", VGC_B_PROCESS_END, VGC_OP_RECLAIM},
    {"vg.process.name", VGC_B_PROCESS_NAME, VGC_OP_RENAME},
    {"vg.thread.begin", VGC_B_THREAD_BEGIN, VGC_OP_CREATE},
    {"vg.thread.name", VGC_B_THREAD_NAME, VGC_OP_RENAME},
    {"vg.thread.end", VGC_B_THREAD_END, VGC_OP_RECLAIM},
    {"vg.entity.create", VGC_B_ENTITY_CREATE, VGC_OP_CREATE},
    {"vg.entity.load", VGC_B_ENTITY_LOAD, VGC_OP_LOAD},
    {"vg.entity.name", VGC_B_ENTITY_NAME, VGC_OP_RENAME},
    {"vg.entity.reclaim", VGC_B_ENTITY_RECLAIM, VGC_OP_RECLAIM},
    {"vg.report.synth", VGC_B_SYNTH, VGC_OP_ACTIVITY},
};

static void warn(const struct vgc_sink *sink, const char *fmt, const char *a, const char *b)
{
	if (!sink->warning)
		return;
	char line[512];
	snprintf(line, sizeof line, fmt, a, b);
	sink->warning(sink->ctx, line);
}

static bool is_int(const struct vgt_event_type *t, int f)
{
	return f >= 0 && (t->fields[f].type == VGT_UINT || t->fields[f].type == VGT_INT);
}

/* Built-ins: find their identity fields; false if the declaration lacks them. */
static bool builtin_fields(struct vgc_type *ty)
{
	const struct vgt_event_type *t = ty->type;
	ty->f_kind = ty->f_id = ty->f_gen = -1;
	switch (ty->builtin) {
	case VGC_B_NONE:
		return true;
	case VGC_B_SYNTH:
		ty->f_id = vgt_type_field(t, "at");
		return is_int(t, ty->f_id);
	case VGC_B_PROCESS_BEGIN:
	case VGC_B_PROCESS_END:
	case VGC_B_PROCESS_NAME:
		ty->f_id = vgt_type_field(t, "pid");
		break;
	case VGC_B_THREAD_BEGIN:
	case VGC_B_THREAD_NAME:
	case VGC_B_THREAD_END:
		ty->f_id = vgt_type_field(t, "tid");
		break;
	default:
		ty->f_id = vgt_type_field(t, "id");
		ty->f_kind = vgt_type_field(t, "kind");
		if (ty->f_kind < 0 || t->fields[ty->f_kind].type != VGT_STRING)
			return false;
	}
	ty->f_gen = vgt_type_field(t, "gen");
	return is_int(t, ty->f_id) && is_int(t, ty->f_gen);
}

static int learn(struct vgc_type *ty, struct vgc_kinds *kinds, const struct vgc_sink *sink)
{
	const struct vgt_event_type *t = ty->type;
	ty->op = VGC_OP_ACTIVITY;
	ty->builtin = VGC_B_NONE;
	ty->target = ty->depth = -1;
	for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
		if (!strcmp(t->name, builtins[i].name)) {
			ty->builtin = builtins[i].b;
			ty->op = builtins[i].op;
		}
	if (!builtin_fields(ty)) {
		warn(sink, "event type %s lacks its identity fields: its events are not checked",
		     t->name, NULL);
		ty->builtin = VGC_B_NONE;
		ty->op = VGC_OP_COUNT;
	}
	for (unsigned f = 0; f < t->nfields; f++)
		if (t->fields[f].type == VGT_REF && t->fields[f].ref_kind)
			ty->nrefs++;
	if (ty->nrefs) {
		ty->refs = calloc(ty->nrefs, sizeof *ty->refs);
		if (!ty->refs)
			return -1;
		unsigned n = 0;
		for (unsigned f = 0; f < t->nfields; f++) {
			if (t->fields[f].type != VGT_REF || !t->fields[f].ref_kind)
				continue;
			int64_t k = vgc_kind_intern(kinds, t->fields[f].ref_kind);
			if (k < 0)
				return -1;
			ty->refs[n].field = (int)f;
			ty->refs[n++].kind = (uint32_t)k;
		}
	}
	if (ty->builtin != VGC_B_NONE || ty->op == VGC_OP_COUNT)
		return 0;
	/* The reader parsed `op=NAME` (an unknown name is metadata damage: 0, activity). */
	enum vgc_op op = t->op > 0 && t->op < VGC_OP_COUNT ? (enum vgc_op)t->op : VGC_OP_ACTIVITY;
	ty->op = op;
	if (op == VGC_OP_ENTER) {
		ty->depth = vgt_type_field(t, "vg_depth");
		if (!is_int(t, ty->depth)) {
			ty->depth = -1;
			warn(sink,
			     "event type %s (op=enter) has no vg_depth field: its parents are "
			     "not checked",
			     t->name, NULL);
		}
	}
	bool needs_target = op != VGC_OP_ACTIVITY && op != VGC_OP_ENTER && op != VGC_OP_LEAVE &&
	                    op != VGC_OP_REFERENCE && op != VGC_OP_MOVE;
	if (!needs_target)
		return 0;
	ty->target = t->target;
	if (ty->target < 0 || t->fields[ty->target].type != VGT_REF ||
	    !t->fields[ty->target].ref_kind) {
		warn(sink,
		     "event type %s (op=%s) has no target entity field: its events are not "
		     "checked",
		     t->name, vgc_op_name(op));
		ty->op = VGC_OP_COUNT;
		ty->target = -1;
		return 0;
	}
	int64_t k = vgc_kind_intern(kinds, t->fields[ty->target].ref_kind);
	if (k < 0)
		return -1;
	ty->target_kind = (uint32_t)k;
	return 0;
}

/* The process number of image i: images of one (pid, process_gen, host) share one. */
static uint32_t process_of(struct vgc_types *ts, const struct vgt_trace *t, size_t i)
{
	const struct vgt_image *img = vgt_image_at(t, i);
	for (size_t j = 0; j < i; j++) {
		const struct vgt_image *o = vgt_image_at(t, j);
		if (o->pid == img->pid && o->process_gen == img->process_gen &&
		    !strcmp(o->hostname ? o->hostname : "", img->hostname ? img->hostname : ""))
			return ts->proc[j];
	}
	return ts->nproc++;
}

int vgc_types_build(struct vgc_types *ts, struct vgt_trace *t, struct vgc_kinds *kinds,
                    const struct vgc_sink *sink)
{
	memset(ts, 0, sizeof *ts);
	return vgc_types_grow(ts, t, kinds, sink);
}

int vgc_types_grow(struct vgc_types *ts, struct vgt_trace *t, struct vgc_kinds *kinds,
                   const struct vgc_sink *sink)
{
	size_t total = vgt_class_count(t), nimg = vgt_image_count(t);
	if (total > ts->n || !ts->all) {
		struct vgc_type *all = realloc(ts->all, (total ? total : 1) * sizeof *all);
		if (!all)
			return -1;
		memset(all + ts->n, 0, ((total ? total : 1) - ts->n) * sizeof *all);
		ts->all = all;
		ts->n = total;
	}
	if (nimg > ts->nimages) {
		uint32_t *proc = realloc(ts->proc, nimg * sizeof *proc);
		if (!proc)
			return -1;
		ts->proc = proc;
		for (size_t i = ts->nimages; i < nimg; i++)
			ts->proc[i] = process_of(ts, t, i);
		ts->nimages = nimg;
	}
	/* Each image's types at their class ids (in image order on a stored trace; a
	 * followed one also declares classes later, trace/follow.h). */
	for (size_t i = 0; i < nimg; i++) {
		const struct vgt_image *img = vgt_image_at(t, i);
		for (size_t j = 0; j < img->ntypes; j++) {
			uint32_t id = img->types[j]->class_id;
			if (id >= ts->n || ts->all[id].type)
				continue;
			struct vgc_type *ty = &ts->all[id];
			ty->type = img->types[j];
			ty->image = (uint32_t)i;
			ty->process = ts->proc[i];
			if (learn(ty, kinds, sink) < 0)
				return -1;
		}
	}
	return 0;
}

void vgc_types_free(struct vgc_types *ts)
{
	for (size_t i = 0; ts->all && i < ts->n; i++)
		free(ts->all[i].refs);
	free(ts->all);
	free(ts->proc);
}

const struct vgc_type *vgc_type_of(const struct vgc_types *ts, const struct vgt_event_type *t)
{
	return t->class_id < ts->n && ts->all[t->class_id].type == t ? &ts->all[t->class_id] : NULL;
}
