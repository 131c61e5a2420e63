/* The relations of a program known only by its sensor description: the event types a
 * trace of it would declare are made in memory, as the reader would decode them from
 * the metadata the runtime writes (src/runtime/metadata.c) for the sensors the C
 * generator makes (src/lang/gen_c_sensor.c), and mapped by the builder's own schema
 * step (schema.c). Entity relations, which a recording makes when entities
 * appear, are made for every kind the program can have. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/model.h"
#include "relations/build.h"

/* ---- the runtime's own types (src/runtime/registry.c), registered first ---- */

#define F(n, t, size)                                                                              \
	{                                                                                          \
		n, t, size, 10, NULL, false                                                        \
	}
static const struct vgt_field f_process_begin[] = {F("pid", VGT_UINT, 4), F("gen", VGT_UINT, 8),
                                                   F("ppid", VGT_UINT, 4), F("name", VGT_STRING, 0),
                                                   F("exe", VGT_STRING, 0)};
static const struct vgt_field f_process_exec[] = {F("path", VGT_STRING, 0)};
static const struct vgt_field f_process_end[] = {F("pid", VGT_UINT, 4), F("gen", VGT_UINT, 8),
                                                 F("status", VGT_INT, 4)};
static const struct vgt_field f_thread[] = {F("tid", VGT_UINT, 4), F("gen", VGT_UINT, 4),
                                            F("name", VGT_STRING, 0)};
static const struct vgt_field f_entity[] = {F("kind", VGT_STRING, 0), F("id", VGT_UINT, 8),
                                            F("gen", VGT_UINT, 4), F("name", VGT_STRING, 0)};
static const struct vgt_field f_synth[] = {F("at", VGT_UINT, 8)};
/* vg.net.* (docs/net.md): the interaction id last */
static const struct vgt_field f_net_input[] = {F("what", VGT_STRING, 0), F("iid_hi", VGT_UINT, 8),
                                               F("iid_lo", VGT_UINT, 8)};
static const struct vgt_field f_net_conn[] = {F("fd", VGT_INT, 4),       F("conn", VGT_UINT, 8),
                                              F("kind", VGT_STRING, 0),  F("role", VGT_STRING, 0),
                                              F("local", VGT_STRING, 0), F("remote", VGT_STRING, 0),
                                              F("iid_hi", VGT_UINT, 8),  F("iid_lo", VGT_UINT, 8)};
static const struct vgt_field f_net_io[] = {
    F("fd", VGT_INT, 4),   F("conn", VGT_UINT, 8),   F("off", VGT_UINT, 8),   F("len", VGT_UINT, 8),
    F("msg", VGT_UINT, 8), F("iid_hi", VGT_UINT, 8), F("iid_lo", VGT_UINT, 8)};
static const struct vgt_field f_net_close[] = {F("fd", VGT_INT, 4), F("conn", VGT_UINT, 8),
                                               F("iid_hi", VGT_UINT, 8), F("iid_lo", VGT_UINT, 8)};
static const struct vgt_field f_net_unfollowed[] = {
    F("fd", VGT_INT, 4),     F("conn", VGT_UINT, 8),   F("call", VGT_STRING, 0),
    F("count", VGT_UINT, 8), F("iid_hi", VGT_UINT, 8), F("iid_lo", VGT_UINT, 8)};
#undef F

#define T(n, rel, k, f, nf)                                                                        \
	{                                                                                          \
		.name = n, .fields = f, .nfields = nf, .vigil = true, .relation = rel,             \
		.kind = VGT_KIND_##k, .flag = VGT_FLAG_SENSOR, .performer = -1, .initiator = -1,   \
		.target = -1                                                                       \
	}
static const struct vgt_event_type builtins[] = {
    T("vg.process.begin", "vg.process", CREATE, f_process_begin, 5),
    T("vg.process.exec", "vg.process.exec", EVENT, f_process_exec, 1),
    T("vg.process.end", "vg.process", RECLAIM, f_process_end, 3),
    T("vg.thread.begin", "vg.thread", CREATE, f_thread, 3),
    T("vg.thread.name", "vg.thread", STATE, f_thread, 3),
    T("vg.thread.end", "vg.thread", RECLAIM, f_thread, 2),
    T("vg.entity.create", "vg.entity", CREATE, f_entity, 4),
    T("vg.entity.name", "vg.entity", STATE, f_entity, 4),
    T("vg.entity.reclaim", "vg.entity", RECLAIM, f_entity, 3),
    T("vg.entity.load", "vg.entity.load", EVENT, f_entity, 3),
    T("vg.report.synth", "vg.report.synth", EVENT, f_synth, 1),
    T("vg.net.input", "vg.net.input", EVENT, f_net_input, 3),
    T("vg.net.conn", "vg.net.conn", EVENT, f_net_conn, 8),
    T("vg.net.send", "vg.net.send", EVENT, f_net_io, 7),
    T("vg.net.recv", "vg.net.recv", EVENT, f_net_io, 7),
    T("vg.net.close", "vg.net.close", EVENT, f_net_close, 4),
    T("vg.net.unfollowed", "vg.net.unfollowed", EVENT, f_net_unfollowed, 6),
    T("vg.net.partial", "vg.net.partial", EVENT, f_net_close, 4),
};
#undef T
#define NBUILTINS (sizeof builtins / sizeof *builtins)

/* ---- a sensor's types ---- */

/* What the types made here own (freed once the schema is built). */
struct owned {
	void **p;
	size_t n;
};

static void *own(struct owned *o, void *p)
{
	o->p = vgq_xrealloc(o->p, o->n + 1, sizeof *o->p);
	o->p[o->n++] = p;
	return p;
}

/* The trace field name of a model field, as the C generator writes it (cg_member):
 * every character but letters and digits becomes '_', at most 256 of them. */
static const char *field_name(struct owned *o, const char *prefix, const char *name,
                              const char *suffix)
{
	size_t n = strnlen(name, 256);
	char *s = own(o, vgq_xcalloc(strlen(prefix) + n + strlen(suffix) + 1, 1));
	strcpy(s, prefix);
	char *p = s + strlen(prefix);
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		bool alnum =
		    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		p[i] = alnum ? c : '_';
	}
	strcpy(p + n, suffix);
	return s;
}

/* The trace type of a model type (the runtime's vg_field_type as the generator maps it,
 * then as the reader decodes the TSDL written for it). */
static void field_type(enum vgl_type t, enum vgt_vtype *type, unsigned *size)
{
	static const unsigned sizes[] = {
	    [VGL_INT8] = 1,  [VGL_INT16] = 2,  [VGL_INT32] = 4,  [VGL_INT64] = 8,
	    [VGL_UINT8] = 1, [VGL_UINT16] = 2, [VGL_UINT32] = 4, [VGL_UINT64] = 8,
	    [VGL_BOOL] = 1,  [VGL_STRUCT] = 8, [VGL_FLOAT64] = 8};
	*size = (unsigned)t < sizeof sizes / sizeof *sizes ? sizes[t] : 0;
	switch (t) {
	case VGL_INT8:
	case VGL_INT16:
	case VGL_INT32:
	case VGL_INT64:
		*type = VGT_INT;
		return;
	case VGL_FLOAT64:
		*type = VGT_DOUBLE;
		return;
	case VGL_STRING:
		*type = VGT_STRING;
		return;
	case VGL_BYTES:
		*type = VGT_BYTES;
		return;
	case VGL_ENTITY:
		*type = VGT_REF;
		*size = 12;
		return;
	default: /* unsigned, bool, a struct's id */
		*type = VGT_UINT;
		return;
	}
}

/* The fields of a record as the trace declares them: a bytes field is preceded by its
 * hidden length `_NAME_len`. index[i]: the trace field of the record's field i. */
static struct vgt_field *record_fields(struct owned *o, const struct vgl_record *r, unsigned *n,
                                       int *index)
{
	struct vgt_field *f = own(o, vgq_xcalloc(2 * r->nfields + 1, sizeof *f));
	*n = 0;
	for (size_t i = 0; i < r->nfields; i++) {
		const struct vgl_field *mf = &r->fields[i];
		if (mf->type == VGL_BYTES)
			f[(*n)++] = (struct vgt_field){
			    field_name(o, "_", mf->name, "_len"), VGT_UINT, 4, 10, NULL, true};
		struct vgt_field *tf = &f[*n];
		tf->name = field_name(o, "", mf->name, "");
		tf->base = 10;
		field_type(mf->type, &tf->type, &tf->size);
		if (mf->type == VGL_ENTITY)
			tf->ref_kind = mf->entity ? mf->entity->name : "?";
		index[i] = (int)(*n)++;
	}
	return f;
}

/* The one or two event types of a sensor (NAME.begin and NAME.end for an interval),
 * written at types[*n...]. */
static void sensor_types(struct owned *o, const struct vgl_sensor *s, struct vgt_event_type *types,
                         size_t *n)
{
	const struct vgl_record *r = s->record;
	int *index = own(o, vgq_xcalloc(r->nfields + 1, sizeof *index));
	unsigned nfields;
	const struct vgt_field *fields = record_fields(o, r, &nfields, index);
	int halves = s->relation == VGL_REL_INTERVAL ? 2 : 1;
	for (int h = 0; h < halves; h++) {
		const char *suffix = halves == 1 ? "" : h == 0 ? ".begin" : ".end";
		char *name = own(o, vgq_xcalloc(strlen(s->event_name) + strlen(suffix) + 1, 1));
		sprintf(name, "%s%s", s->event_name, suffix);
		enum vgt_kind kind = s->relation == VGL_REL_STATE   ? VGT_KIND_STATE
		                     : s->relation == VGL_REL_EVENT ? VGT_KIND_EVENT
		                     : h == 0                       ? VGT_KIND_BEGIN
		                                                    : VGT_KIND_END;
		int op = (int)(h == 0 ? s->op : s->end_op);
		/* An enter's payload starts with the runtime's vg_depth (docs/consistency.md). */
		const struct vgt_field *tf = fields;
		unsigned tn = nfields;
		int shift = 0;
		/* ... and a sampled interval's end with its vg_since (docs/watch.md). */
		const char *lead = op == VGT_OP_ENTER                         ? "vg_depth"
		                   : h == 1 && vgl_sensor_sampled_interval(s) ? "vg_since"
		                                                              : NULL;
		if (lead) {
			struct vgt_field *d = own(o, vgq_xcalloc(nfields + 1, sizeof *d));
			d[0] = (struct vgt_field){.name = lead,
			                          .type = VGT_UINT,
			                          .size = op == VGT_OP_ENTER ? 4 : 8,
			                          .base = 10};
			memcpy(d + 1, fields, nfields * sizeof *d);
			tf = d;
			tn = nfields + 1;
			shift = 1;
		}
		types[(*n)++] = (struct vgt_event_type){
		    .name = name,
		    .fields = tf,
		    .nfields = tn,
		    .op = op,
		    .vigil = true,
		    .relation = s->name,
		    .kind = kind,
		    .flag = (enum vgt_flag)s->flag,
		    .sampled = s->sampled,
		    .once = s->once,
		    .performer = s->performer >= 0 ? index[s->performer] + shift : -1,
		    .initiator = s->initiator >= 0 ? index[s->initiator] + shift : -1,
		    .target = s->target >= 0 ? index[s->target] + shift : -1,
		};
	}
}

/* ---- the database ---- */

struct vgq_database *vgq_database_from_model(const struct vgl_model *m)
{
	struct owned o = {0};
	size_t cap = NBUILTINS + 2 * m->nsensors, n = 0;
	struct vgt_event_type *types = own(&o, vgq_xcalloc(cap, sizeof *types));
	const struct vgt_event_type **order = own(&o, vgq_xcalloc(cap, sizeof *order));
	for (size_t i = 0; i < NBUILTINS; i++)
		order[n++] = &builtins[i];
	size_t nsensor_types = 0;
	for (size_t i = 0; i < m->nsensors; i++)
		sensor_types(&o, &m->sensors[i], types, &nsensor_types);
	for (size_t i = 0; i < nsensor_types; i++)
		order[n++] = &types[i];

	struct builder b;
	vgq_build_init(&b, NULL);
	vgq_build_types(&b, order, n);
	/* The entity relations (a sensor relation of the same name keeps it, as when the
	 * builder meets the entity in a trace). */
	vgq_build_relation(&b, "OSProcess", VGQ_REL_ENTITY);
	vgq_build_relation(&b, "OSThread", VGQ_REL_ENTITY);
	for (size_t i = 0; i < m->nentities; i++)
		vgq_build_relation(&b, m->entities[i].name, VGQ_REL_ENTITY);
	/* WaitFor when sensors do lock operations (waits.c): a live query ranges over it */
	vgq_waits_schema(&b, order, n);

	struct vgq_database *db = vgq_xcalloc(1, sizeof *db);
	vgq_build_finish(&b, db);
	db->from_model = true;
	for (size_t i = 0; i < o.n; i++)
		free(o.p[i]);
	free(o.p);
	return db;
}
