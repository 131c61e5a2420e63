/* The C generator's sensors: one static inline function per event type in the header,
 * the schemas and <package>_sensors_register() in the source.
 *
 * A sensor function checks its flag (vg_on, or vg_on_entity on the entity its placement
 * names), then computes the payload size (strings and bytes cut at their max), reserves it
 * with vg_event_begin, writes each field with a vg_put_* writer and commits; then, if a
 * monitor has trigger rules on the sensor, it passes the entities to vg_sensor_fired. A struct
 * payload is read through the pointer passed: each selected member is copied, a NULL on
 * the way gives zeros and empty strings, an unselected struct is recorded as its address. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lang/gen_c_internal.h"
#include "lang/names.h"

static const char *const kind_suffix[] = {"", ".begin", ".end"};
static const char *const fn_suffix[] = {"", "_begin", "_end"};

/* A local pointer to a struct reached from a property's parameter along a path. */
struct container {
	const struct vgl_property *prop;
	const struct vgl_member *const *path;
	size_t n;
};

struct fn {
	struct cgen *g;
	const struct vgl_record *r;
	struct container *conts;
	size_t nconts, capconts;
};

/* Name of the pointer to the container at (prop, path[0..n-1]): the parameter itself when
 * n is 0, else a local, declared (with its parents) the first time it is needed. */
static void container_name(struct fn *x, const struct vgl_property *prop,
                           const struct vgl_member *const *path, size_t n, char *out, size_t size)
{
	if (n == 0) {
		snprintf(out, size, "%s", cg_id(prop->name));
		return;
	}
	for (size_t k = 0; k < x->nconts; k++) {
		const struct container *c = &x->conts[k];
		if (c->prop == prop && c->n == n && !memcmp(c->path, path, n * sizeof *path)) {
			snprintf(out, size, "vg__c%zu", k);
			return;
		}
	}
	char parent[160];
	container_name(x, prop, path, n - 1, parent, sizeof parent);
	if (x->nconts == x->capconts) {
		x->capconts = x->capconts ? 2 * x->capconts : 16;
		x->conts = realloc(x->conts, x->capconts * sizeof *x->conts);
		if (!x->conts)
			abort();
	}
	size_t k = x->nconts++;
	x->conts[k] = (struct container){prop, path, n};
	const struct vgl_member *m = path[n - 1];
	const char *st = m->st ? m->st->name : "?";
	fprintf(x->g->h, "\tconst struct %s *vg__c%zu = %s ? %s__ADDR(struct %s, %s->%s) : NULL;\n",
	        st, k, parent, x->g->PKG, st, parent, cg_member(m->name));
	snprintf(out, size, "vg__c%zu", k);
}

/* For field i of a struct payload: its container and member. */
static const char *member_of(struct fn *x, const struct vgl_field *f, char *cont, size_t size)
{
	container_name(x, f->prop, f->path, f->npath - 1, cont, size);
	return cg_member(f->path[f->npath - 1]->name);
}

/* The cut length of string `v` of field i: at most max bytes, all of them if max is 0. */
static void string_length(FILE *h, size_t i, const char *v, uint32_t max)
{
	if (max)
		fprintf(h, "\tsize_t vg__n%zu = %s ? strnlen(%s, %u) : 0;\n", i, v, v, max);
	else
		fprintf(h, "\tsize_t vg__n%zu = %s ? strlen(%s) : 0;\n", i, v, v);
}

/* The cut length of bytes `v` (`len` of them) of field i. */
static void bytes_length(FILE *h, size_t i, const char *v, const char *len, uint32_t max)
{
	if (max)
		fprintf(h, "\tuint32_t vg__n%zu = %s ? (%s < %uu ? %s : %uu) : 0;\n", i, v, len,
		        max, len, max);
	else
		fprintf(h, "\tuint32_t vg__n%zu = %s ? %s : 0;\n", i, v, len);
}

/* Declares what field i needs before the size is known: its value as a local when it
 * comes from a struct, the cut length of a string or bytes. Adds its size to *fixed or
 * to the variable part. */
static void prepare_field(struct fn *x, size_t i, unsigned long long *fixed)
{
	FILE *h = x->g->h;
	const struct vgl_field *f = &x->r->fields[i];
	const char *PKG = x->g->PKG;
	char cont[160];
	*fixed += cg_fixed_size(f->type);
	if (f->npath == 0) {
		const char *n = cg_id(f->prop->name);
		char len[160];
		snprintf(len, sizeof len, "%s_len", n);
		if (f->type == VGL_STRING)
			string_length(h, i, n, f->max);
		else if (f->type == VGL_BYTES)
			bytes_length(h, i, n, len, f->max);
		return;
	}
	const char *m;
	char v[32], len[32];
	switch (f->type) {
	case VGL_STRING:
		m = member_of(x, f, cont, sizeof cont);
		fprintf(h, "\tconst char *vg__v%zu = %s ? %s->%s : NULL;\n", i, cont, cont, m);
		snprintf(v, sizeof v, "vg__v%zu", i);
		string_length(h, i, v, f->max);
		break;
	case VGL_BYTES:
		m = member_of(x, f, cont, sizeof cont);
		fprintf(h, "\tconst void *vg__v%zu = %s ? %s->%s : NULL;\n", i, cont, cont, m);
		fprintf(h, "\tuint32_t vg__l%zu = %s ? %s->%s_len : 0;\n", i, cont, cont, m);
		snprintf(v, sizeof v, "vg__v%zu", i);
		snprintf(len, sizeof len, "vg__l%zu", i);
		bytes_length(h, i, v, len, f->max);
		break;
	case VGL_ENTITY:
		m = member_of(x, f, cont, sizeof cont);
		fprintf(h,
		        "\tconst vg_entity *vg__v%zu = %s ? %s__ADDR(vg_entity, %s->%s) : NULL;\n",
		        i, cont, PKG, cont, m);
		break;
	default:
		if (f->is_struct_id) {
			const struct vgl_member *mm = f->path[f->npath - 1];
			const char *st = mm->st ? mm->st->name : "?";
			m = member_of(x, f, cont, sizeof cont);
			fprintf(
			    h,
			    "\tuint64_t vg__v%zu = %s ? (uint64_t)(uintptr_t)%s__ADDR(struct %s, "
			    "%s->%s) : 0;\n",
			    i, cont, PKG, st, cont, m);
		} else {
			m = member_of(x, f, cont, sizeof cont);
			fprintf(h, "\t%s vg__v%zu = %s ? (%s)%s->%s : 0;\n", cg_ctype(f->type), i,
			        cont, cg_ctype(f->type), cont, m);
		}
	}
}

/* The expression of field i's value (after prepare_field). */
static void value_of(struct fn *x, size_t i, char *out, size_t size)
{
	const struct vgl_field *f = &x->r->fields[i];
	if (f->npath > 0)
		snprintf(out, size, "vg__v%zu", i);
	else if (f->is_struct_id)
		snprintf(out, size, "(uintptr_t)%s", cg_id(f->prop->name)); /* put as uint64 */
	else
		snprintf(out, size, "%s", cg_id(f->prop->name));
}

static void put_field(struct fn *x, size_t i)
{
	FILE *h = x->g->h;
	const struct vgl_field *f = &x->r->fields[i];
	char v[160];
	value_of(x, i, v, sizeof v);
	switch (f->type) {
	case VGL_INT8:
	case VGL_UINT8:
		fprintf(h, "\tvg__p = vg_put_u8(vg__p, (uint8_t)%s);\n", v);
		break;
	case VGL_BOOL:
		fprintf(h, "\tvg__p = vg_put_u8(vg__p, %s ? 1 : 0);\n", v);
		break;
	case VGL_INT16:
	case VGL_UINT16:
		fprintf(h, "\tvg__p = vg_put_u16(vg__p, (uint16_t)%s);\n", v);
		break;
	case VGL_INT32:
	case VGL_UINT32:
		fprintf(h, "\tvg__p = vg_put_u32(vg__p, (uint32_t)%s);\n", v);
		break;
	case VGL_INT64:
	case VGL_UINT64:
	case VGL_STRUCT:
		fprintf(h, "\tvg__p = vg_put_u64(vg__p, (uint64_t)%s);\n", v);
		break;
	case VGL_FLOAT64:
		fprintf(h, "\tvg__p = vg_put_f64(vg__p, %s);\n", v);
		break;
	case VGL_STRING:
		fprintf(h, "\tvg__p = %s__put_str(vg__p, %s, vg__n%zu);\n", x->g->pkg, v, i);
		break;
	case VGL_BYTES:
		fprintf(h, "\tvg__p = vg_put_bytes(vg__p, %s, vg__n%zu);\n", v, i);
		break;
	case VGL_ENTITY:
		fprintf(h, "\tvg__p = vg_put_ref(vg__p, %s);\n", v);
		break;
	}
}

/* After the commit: when the monitor has trigger rules on the sensor (docs/control.md),
 * hand the runtime the event's entities, in field order. Nothing for a record without
 * entity fields. `cond`: a C condition that must also hold ("" for none). */
static void fired_call(struct fn *x, const char *cond)
{
	FILE *h = x->g->h;
	const struct vgl_record *r = x->r;
	size_t n = 0;
	for (size_t i = 0; i < r->nfields; i++)
		n += r->fields[i].type == VGL_ENTITY;
	if (!n)
		return;
	fprintf(
	    h,
	    "\tif (%s%sVG_UNLIKELY(atomic_load_explicit(&vg__s->react, memory_order_relaxed)))\n"
	    "\t\tvg_sensor_fired(vg__s, (const vg_entity *const[]){",
	    cond, *cond ? " && " : "");
	size_t k = 0;
	for (size_t i = 0; i < r->nfields; i++) {
		if (r->fields[i].type != VGL_ENTITY)
			continue;
		char v[160];
		value_of(x, i, v, sizeof v);
		fprintf(h, "%s%s", k++ ? ", " : "", v);
	}
	fprintf(h, "}, %zu);\n", n);
}

/* The parameters, one per property, wrapped before column 100; `col`: where they start. */
static void write_params(struct cgen *g, const struct vgl_record *r, int col)
{
	FILE *h = g->h;
	if (!r->nall)
		fprintf(h, "void");
	for (size_t i = 0; i < r->nall; i++) {
		const struct vgl_property *p = r->all[i];
		const char *n = cg_id(p->name);
		char param[400];
		if (p->type == VGL_STRUCT)
			snprintf(param, sizeof param, "const struct %s *%s",
			         p->st ? p->st->name : "?", n);
		else if (p->type == VGL_BYTES)
			snprintf(param, sizeof param, "const void *%s, uint32_t %s_len", n, n);
		else if (p->type == VGL_STRING || p->type == VGL_ENTITY)
			snprintf(param, sizeof param, "%s%s", cg_ctype(p->type), n); /* "T *" */
		else
			snprintf(param, sizeof param, "%s %s", cg_ctype(p->type), n);
		int len = (int)strlen(param) + (i + 1 < r->nall ? 1 : 2); /* "," or ")" */
		if (i && col + 1 + len > 100) {
			fprintf(h, ",\n\t");
			col = 8;
		} else if (i) {
			fprintf(h, ", ");
			col += 2;
		}
		fprintf(h, "%s", param);
		col += (int)strlen(param);
	}
}

static const char *const place_names[] = {"sensor", "performer", "initiator", "target"};
static const char *const relation_names[] = {"event", "interval", "state"};

static int role_of(const struct vgl_sensor *s)
{
	switch (s->flag) {
	case VGL_FLAG_PERFORMER:
		return s->performer;
	case VGL_FLAG_INITIATOR:
		return s->initiator;
	case VGL_FLAG_TARGET:
		return s->target;
	default:
		return -1;
	}
}

/* The op of event type `half` (0 event/state, 1 begin, 2 end). */
static enum vgl_op op_of(const struct vgl_sensor *s, int half)
{
	return half == 2 ? s->end_op : s->op;
}

/* Does the runtime track the op (docs/consistency.md)? The others are plain activities. */
static bool tracked(enum vgl_op op)
{
	return op != VGL_OP_ACTIVITY && op != VGL_OP_REFERENCE && op != VGL_OP_MOVE;
}

/* Does the op end what an earlier event started? Then the runtime alone decides whether
 * it is reported (exactly when its start was): no flag may hold it back. */
static bool ending(enum vgl_op op)
{
	return op == VGL_OP_LEAVE || op == VGL_OP_RECLAIM || op == VGL_OP_RELEASE ||
	       op == VGL_OP_WAIT_END || op == VGL_OP_RESUME;
}

/* The payload size into `vg__size`; when it might not fit a uint32 (strings or bytes
 * without a max) it is `size_t`. */
static bool size_decl(struct fn *x, unsigned long long fixed)
{
	FILE *h = x->g->h;
	const struct vgl_record *r = x->r;
	bool huge = cg_worst_size(r) > UINT32_MAX - 64;
	fprintf(h, "\t%s = %lluu", huge ? "size_t vg__size" : "uint32_t vg__size", fixed);
	for (size_t i = 0; i < r->nfields; i++)
		if (r->fields[i].type == VGL_STRING || r->fields[i].type == VGL_BYTES)
			fprintf(h, " + %svg__n%zu", huge ? "" : "(uint32_t)", i);
	fprintf(h, ";\n");
	return huge;
}

/* "vg_live(a) && vg_live(vg__v3)": every entity field but field `skip` (-1: none) may be
 * referred to (rule 2). False: the record has no such field. */
static bool live_expr(struct fn *x, int skip, char *out, size_t size)
{
	const struct vgl_record *r = x->r;
	size_t n = 0, len = 0;
	out[0] = 0;
	for (size_t i = 0; i < r->nfields; i++) {
		if (r->fields[i].type != VGL_ENTITY || (int)i == skip)
			continue;
		char v[160];
		value_of(x, i, v, sizeof v);
		int k = snprintf(out + len, size - len, "%svg_live(%s)", n++ ? " && " : "", v);
		if (k < 0 || (size_t)k >= size - len)
			abort(); /* field expressions are short: cannot happen */
		len += (size_t)k;
	}
	return n > 0;
}

/* Every entity the event names may be referred to: else it is skipped, not counted.
 * Only while the runtime tracks (with consistency off nothing is checked). */
static void live_check(struct fn *x)
{
	char live[4096];
	if (live_expr(x, -1, live, sizeof live))
		fprintf(x->g->h, "\tif (vg__tracking && !(%s))\n\t\treturn; /* rule 2 */\n", live);
}

/* A plain activity (ACTIVITY, REFERENCE, MOVE): the flag, then the live check, then the
 * record written with vg_event_begin. `half`: 1 begin, 2 end of an interval.
 *
 * A sampled interval sensor (vgl_sensor_sampled_interval), while a monitor samples it:
 * the begin only remembers its time in the flag's entity; the end is recorded, with that
 * time as its leading `vg_since`, only if a sampling instant fell in between
 * (docs/watch.md "Sampling"). Its end always carries vg_since (0: the begin was
 * recorded). */
static void plain_body(struct fn *x, const struct vgl_sensor *s, int role,
                       const struct vgl_field *rf, int half)
{
	FILE *h = x->g->h;
	const struct vgl_record *r = x->r;
	unsigned long long fixed = 0;
	bool role_ready = false;
	char ent[160] = "";
	if (s->flag == VGL_FLAG_SENSOR) {
		fprintf(h, "\tif (!vg_on(vg__s))\n\t\treturn;\n");
	} else if (rf && rf->npath == 0) {
		snprintf(ent, sizeof ent, "%s", cg_id(rf->prop->name));
		fprintf(h, "\tif (!vg_on_entity(vg__s, %s))\n\t\treturn;\n", ent);
	} else {
		/* The flag's entity is the thread, or lies inside a struct payload: reach it
		 * once the sensor is known to be on, before the other fields. */
		fprintf(h, "\tif (!vg_on(vg__s))\n\t\treturn;\n");
		snprintf(ent, sizeof ent, "vg_self()");
		if (rf) {
			prepare_field(x, (size_t)role, &fixed);
			value_of(x, (size_t)role, ent, sizeof ent);
			role_ready = true;
		}
		fprintf(h, "\tif (!vg_on_entity(vg__s, %s))\n\t\treturn;\n", ent);
	}
	bool sampled = vgl_sensor_sampled_interval(s) && half > 0;
	if (sampled && half == 1)
		fprintf(h,
		        "\tif (vg_sampling(vg__s)) { /* remember when; the end decides */\n"
		        "\t\t((vg_entity *)%s)->sampled_since = vg_now();\n"
		        "\t\treturn;\n\t}\n",
		        ent);
	if (sampled && half == 2) {
		fprintf(h,
		        "\tuint64_t vg__since = 0;\n"
		        "\tif (vg_sampling(vg__s)) {\n"
		        "\t\tvg__since = %s->sampled_since;\n"
		        "\t\t((vg_entity *)%s)->sampled_since = 0;\n"
		        "\t\tif (!vg__since)\n\t\t\treturn; /* began before the sampling */\n"
		        "\t}\n",
		        ent, ent);
		fixed += 8;
	}
	for (size_t i = 0; i < r->nfields; i++)
		if (!(role_ready && i == (size_t)role))
			prepare_field(x, i, &fixed);
	live_check(x);
	/* An event too large to be recorded is dropped before anything is reserved. */
	if (size_decl(x, fixed))
		fprintf(h, "\tif (vg__size > UINT32_MAX - 64)\n\t\treturn;\n");
	if (s->once) /* traced once: take the raise this event uses */
		fprintf(h, "\tif (!vg_once_take(vg__s, %s))\n\t\treturn;\n", ent);
	fprintf(h, "\tuint8_t *vg__p = vg_event_begin(vg__s, (uint32_t)vg__size);\n"
	           "\tif (!vg__p)\n\t\treturn;\n");
	if (sampled && half == 2)
		fprintf(h,
		        "\tif (vg__since && !vg_sample_hit(vg__s, vg__since, vg_event_time())) {\n"
		        "\t\tvg_event_abort(); /* no sampling instant inside */\n"
		        "\t\treturn;\n\t}\n"
		        "\tvg__p = vg_put_u64(vg__p, vg__since);\n");
	for (size_t i = 0; i < r->nfields; i++)
		put_field(x, i);
	fprintf(h, "\tvg_event_commit(vg__p);\n");
	fired_call(x, "");
}

/* An op the runtime tracks (vigil.h): called whenever vg_tracking() holds, on or off,
 * never skipped for a flag (an enter skipped would unbalance the thread's stack); the
 * runtime decides what is reported.
 *
 * What the runtime cannot know is said by suspending the thread's reporting around the
 * call ("quiet": tracked, not reported): a flag on the performer or initiator entity
 * that is down (the target's flag the runtime checks itself, once a created entity has
 * its identity), or, for an op that starts something, another entity the event names
 * that may not be referred to (rule 2). An enter naming such an entity is committed
 * without payload: never reported, nor anything it encloses. Ending ops (leave, reclaim,
 * release, wait_end, resume) are reported exactly when their start was. */
static void tracked_body(struct fn *x, const struct vgl_sensor *s, enum vgl_op op, int role,
                         const struct vgl_field *rf)
{
	FILE *h = x->g->h;
	const struct vgl_record *r = x->r;
	unsigned long long fixed = 0;
	bool enter = op == VGL_OP_ENTER, leave = op == VGL_OP_LEAVE;
	fprintf(h, "\tif (!vg_tracking(vg__s))\n\t\treturn;\n");
	for (size_t i = 0; i < r->nfields; i++)
		prepare_field(x, i, &fixed);
	/* Too large to be recorded: still tracked, the runtime counts it as discarded. */
	bool huge = size_decl(x, fixed);
	const char *size =
	    huge ? "vg__size > UINT32_MAX - 64 ? UINT32_MAX : (uint32_t)vg__size" : "vg__size";
	char target[160] = "NULL";
	if (!enter && !leave) {
		value_of(x, (size_t)s->target, target, sizeof target);
		fprintf(h, "\tif (!%s)\n\t\treturn; /* no entity to act on */\n", target);
	}
	/* Why the event may be quiet. */
	char flag[200] = "", live[4096] = "";
	bool flag_quiet =
	    !ending(op) && (s->flag == VGL_FLAG_PERFORMER || s->flag == VGL_FLAG_INITIATOR ||
	                    (enter && s->flag == VGL_FLAG_TARGET));
	if (flag_quiet) {
		char v[160] = "vg_self()";
		if (rf)
			value_of(x, (size_t)role, v, sizeof v);
		snprintf(flag, sizeof flag, "!vg_on_entity(vg__s, %s)", v);
	}
	bool live_quiet = !ending(op) && !enter && live_expr(x, s->target, live, sizeof live);
	bool quiet = flag_quiet || live_quiet;
	if (quiet) {
		fprintf(h, "\tint vg__quiet = ");
		if (flag_quiet)
			fprintf(h, "%s%s", flag, live_quiet ? " ||\n\t                " : ";\n");
		if (live_quiet)
			fprintf(h, "(vg__tracking && !(%s));\n", live);
		fprintf(h, "\tif (vg__quiet)\n\t\tvg_report_thread_suspend();\n");
	}
	if (enter)
		fprintf(h, "\tuint8_t *vg__p = vg_enter_begin(vg__s, %s);\n", size);
	else if (leave)
		fprintf(h, "\tuint8_t *vg__p = vg_leave_begin(vg__s, %s);\n", size);
	else
		fprintf(h, "\tuint8_t *vg__p = vg_op_begin(vg__s, (vg_entity *)%s, %s);\n", target,
		        size);
	fprintf(h, "\tif (vg__p) {\n");
	const char *ind = "\t";
	if (enter && live_expr(x, -1, live, sizeof live)) {
		fprintf(h,
		        "\t\tif (vg__tracking && !(%s)) {\n"
		        "\t\t\tvg_enter_commit(vg__s, NULL); /* rule 2: never reported */\n"
		        "\t\t\tvg__p = NULL;\n"
		        "\t\t} else {\n",
		        live);
		ind = "\t\t";
	}
	for (size_t i = 0; i < r->nfields; i++) {
		fprintf(h, "%s", ind);
		put_field(x, i);
	}
	if (enter)
		fprintf(h, "%s\tvg_enter_commit(vg__s, vg__p);\n", ind);
	else
		fprintf(h, "\t\tvg_event_commit(vg__p);\n");
	if (ind[1])
		fprintf(h, "\t\t}\n");
	fprintf(h, "\t}\n");
	if (quiet)
		fprintf(h,
		        "\tif (vg__quiet) {\n\t\tvg_report_thread_resume();\n\t\treturn;\n\t}\n");
	/* An enter's frame is returned whether or not it is reported: fire when on. */
	fired_call(x, enter ? "vg__p && vg_on(vg__s)" : "vg__p");
}

/* One event type's inline function: `half` 0 event/state, 1 begin, 2 end. */
static void sensor_function(struct cgen *g, const struct vgl_sensor *s, int half)
{
	FILE *h = g->h;
	const struct vgl_record *r = s->record;
	struct fn x = {.g = g, .r = r};
	int role = role_of(s);
	const struct vgl_field *rf = role >= 0 ? &r->fields[role] : NULL;
	enum vgl_op op = op_of(s, half);

	/* A counter flag needs nothing more here: the runtime's flags all count (enable adds
	 * one, disable removes one) and the check is the same. */
	fprintf(h, "/* %s%s: sensor %s (%s, %s, %s), flag on the %s%s%s%s%s. */\n", s->event_name,
	        kind_suffix[half], s->name, relation_names[s->relation],
	        s->once      ? "traced once"
	        : s->sampled ? "sampled"
	                     : "traced",
	        vgl_op_name(op), place_names[s->flag], rf ? " (" : "", rf ? rf->name : "",
	        rf ? ")" : "", s->counter ? ", a counter" : "");
	int col = fprintf(h, "static inline void %s_%s%s(", g->pkg, s->name, fn_suffix[half]);
	write_params(g, r, col);
	fprintf(h, ")\n{\n\tvg_sensor *vg__s = %s__%s%s;\n", g->pkg, s->name, fn_suffix[half]);
	for (size_t i = 0; i < r->nall; i++) {
		bool used = false;
		for (size_t j = 0; j < r->nfields; j++)
			used = used || r->fields[j].prop == r->all[i];
		if (!used) /* a struct of which nothing is recorded */
			fprintf(h, "\t(void)%s;\n", cg_id(r->all[i]->name));
	}
	if (tracked(op))
		tracked_body(&x, s, op, role, rf);
	else
		plain_body(&x, s, role, rf, half);
	fprintf(h, "}\n\n");
	free(x.conts);
}

static const char *const vg_types[] = {
    [VGL_INT8] = "VG_INT8",     [VGL_INT16] = "VG_INT16",   [VGL_INT32] = "VG_INT32",
    [VGL_INT64] = "VG_INT64",   [VGL_UINT8] = "VG_UINT8",   [VGL_UINT16] = "VG_UINT16",
    [VGL_UINT32] = "VG_UINT32", [VGL_UINT64] = "VG_UINT64", [VGL_FLOAT64] = "VG_DOUBLE",
    [VGL_BOOL] = "VG_UINT8",    [VGL_STRING] = "VG_STRING", [VGL_BYTES] = "VG_BYTES",
    [VGL_ENTITY] = "VG_ENTITY", [VGL_STRUCT] = "VG_UINT64",
};

/* The schema of a record's fields, once per record that a sensor emits (`since`: the
 * variant led by vg_since, for the ends of sampled interval sensors). */
static void field_descs(struct cgen *g, const struct vgl_record *r, bool since)
{
	FILE *c = g->c;
	if (!r->nfields && !since)
		return;
	fprintf(c, "static const vg_field_desc %s__%s_%sfields[] = {\n", g->pkg, r->name,
	        since ? "s" : "");
	if (since)
		fprintf(c, "    {\"vg_since\", VG_UINT64, NULL},\n");
	for (size_t i = 0; i < r->nfields; i++) {
		const struct vgl_field *f = &r->fields[i];
		fprintf(c, "    {\"%s\", %s, ", cg_member(f->name), vg_types[f->type]);
		if (f->type == VGL_ENTITY)
			fprintf(c, "\"%s\"},\n", f->entity ? f->entity->name : "?");
		else
			fprintf(c, "NULL},\n");
	}
	fprintf(c, "};\n");
}

static void type_desc(struct cgen *g, const struct vgl_sensor *s, int half)
{
	static const char *const kinds[] = {"VG_KIND_EVENT", "VG_KIND_BEGIN", "VG_KIND_END"};
	static const char *const places[] = {"VG_FLAG_SENSOR", "VG_FLAG_PERFORMER",
	                                     "VG_FLAG_INITIATOR", "VG_FLAG_TARGET"};
	FILE *c = g->c;
	const struct vgl_record *r = s->record;
	fprintf(c, "static const vg_type_desc %s__%s%s_desc = {\n", g->pkg, s->name,
	        fn_suffix[half]);
	fprintf(c, "    .name = \"%s%s\",\n    .relation = \"%s\",\n", s->event_name,
	        kind_suffix[half], s->name);
	fprintf(c, "    .kind = %s,\n    .placement = %s,\n    .sampled = %d,\n",
	        s->relation == VGL_REL_STATE ? "VG_KIND_STATE" : kinds[half], places[s->flag],
	        s->once      ? 2
	        : s->sampled ? 1
	                     : 0);
	int shift = 0;
	if (half == 2 && vgl_sensor_sampled_interval(s)) { /* vg_since, then the record's fields */
		shift = 1;
		fprintf(c, "    .fields = %s__%s_sfields,\n    .nfields = %zu,\n", g->pkg, r->name,
		        r->nfields + 1);
	} else if (r->nfields) {
		fprintf(c, "    .fields = %s__%s_fields,\n    .nfields = %zu,\n", g->pkg, r->name,
		        r->nfields);
	}
	fprintf(c, "    .performer = %d,\n    .initiator = %d,\n    .target = %d,\n",
	        s->performer >= 0 ? s->performer + shift : -1,
	        s->initiator >= 0 ? s->initiator + shift : -1,
	        s->target >= 0 ? s->target + shift : -1);
	char op[32];
	snprintf(op, sizeof op, "%s", vgl_op_name(op_of(s, half)));
	for (char *o = op; *o; o++)
		*o = (char)toupper((unsigned char)*o);
	fprintf(c, "    .op = VG_OP_%s,\n};\n", op);
}

/* Event types of a sensor: 1..2 for an interval, 0 otherwise. */
static int first_half(const struct vgl_sensor *s)
{
	return s->relation == VGL_REL_INTERVAL ? 1 : 0;
}
static int last_half(const struct vgl_sensor *s)
{
	return s->relation == VGL_REL_INTERVAL ? 2 : 0;
}

void cg_sensors(struct cgen *g)
{
	const struct vgl_model *m = g->m;
	FILE *h = g->h, *c = g->c;
	fprintf(h,
	        "/* ---- sensors ---- */\n\n"
	        "/* Registers every sensor's schema with the runtime. Call it once at start,\n"
	        " * before other threads fire these sensors (it sets the pointers below). */\n"
	        "void %s_sensors_register(void);\n\n",
	        g->pkg);
	fprintf(h, "/* What the functions below use: each starts as a disabled dummy. */\n");
	for (size_t i = 0; i < m->nsensors; i++)
		for (int k = first_half(&m->sensors[i]); k <= last_half(&m->sensors[i]); k++)
			fprintf(h, "extern vg_sensor *%s__%s%s;\n", g->pkg, m->sensors[i].name,
			        fn_suffix[k]);
	fprintf(h,
	        "\nstatic inline uint8_t *%s__put_str(uint8_t *p, const char *s, size_t n)\n"
	        "{\n\tif (n)\n\t\tmemcpy(p, s, n);\n\tp[n] = 0;\n\treturn p + n + 1;\n}\n\n",
	        g->pkg);
	for (size_t i = 0; i < m->nsensors; i++)
		for (int k = first_half(&m->sensors[i]); k <= last_half(&m->sensors[i]); k++)
			sensor_function(g, &m->sensors[i], k);

	fprintf(c, "/* ---- sensors ---- */\n\n");
	if (m->nsensors)
		fprintf(c,
		        "static vg_sensor %s__unregistered = {.id = 0xFFFF, .name = "
		        "\"(unregistered)\", .catbit = 1};\n",
		        g->pkg);
	for (size_t i = 0; i < m->nsensors; i++)
		for (int k = first_half(&m->sensors[i]); k <= last_half(&m->sensors[i]); k++)
			fprintf(c, "vg_sensor *%s__%s%s = &%s__unregistered;\n", g->pkg,
			        m->sensors[i].name, fn_suffix[k], g->pkg);
	fprintf(c, "\n");
	for (size_t i = 0; i < m->nrecords; i++) {
		bool used = false, since = false;
		for (size_t j = 0; j < m->nsensors; j++) {
			used = used || m->sensors[j].record == &m->records[i];
			since = since || (m->sensors[j].record == &m->records[i] &&
			                  vgl_sensor_sampled_interval(&m->sensors[j]));
		}
		if (used)
			field_descs(g, &m->records[i], false);
		if (since)
			field_descs(g, &m->records[i], true);
	}
	for (size_t i = 0; i < m->nsensors; i++)
		for (int k = first_half(&m->sensors[i]); k <= last_half(&m->sensors[i]); k++)
			type_desc(g, &m->sensors[i], k);
	fprintf(c, "\nvoid %s_sensors_register(void)\n{\n", g->pkg);
	for (size_t i = 0; i < m->nsensors; i++)
		for (int k = first_half(&m->sensors[i]); k <= last_half(&m->sensors[i]); k++)
			fprintf(c, "\t%s__%s%s = vg_sensor_register(&%s__%s%s_desc);\n", g->pkg,
			        m->sensors[i].name, fn_suffix[k], g->pkg, m->sensors[i].name,
			        fn_suffix[k]);
	fprintf(c, "}\n");
}
