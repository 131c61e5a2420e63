/* The sensor registry: event types with their schemas, registered from any thread at
 * any time. Each registration is checked, given the next id, and its TSDL declaration is
 * appended to the trace's metadata before the sensor can fire. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct vg_type {
	vg_sensor sensor; /* first: the public handle points here */
	vg_type_desc desc;
	struct vg_sensor_ctl ctl; /* the monitor's rules on it (control_rules.c) */
};

static struct vg_type **types;
static size_t ntypes, cap_types;
static char *types_text; /* every type's TSDL, for rewriting the metadata in a fork child */
static size_t types_text_len, types_text_cap;
static vg_sensor dead_sensor = {.id = 0xFFFF, .name = "(unregistered)", .catbit = VG_CAT_ACTIVITY};
static vg_sensor *builtins[VG_B_COUNT];
static size_t nbuiltins_registered;
static const vg_type_desc builtin_descs[VG_B_COUNT];

static const char *const tsdl_keywords[] = {
    "align",   "callsite", "const",          "char",   "clock",   "double",   "enum",
    "env",     "event",    "floating_point", "float",  "integer", "int",      "long",
    "short",   "signed",   "stream",         "string", "struct",  "trace",    "typealias",
    "typedef", "unsigned", "variant",        "void",   "_Bool",   "_Complex", "_Imaginary"};

static int is_identifier(const char *s)
{
	if (!s || !(isalpha((unsigned char)s[0])))
		return 0;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return 0;
	if (strlen(s) > 128)
		return 0;
	for (size_t i = 0; i < sizeof tsdl_keywords / sizeof *tsdl_keywords; i++)
		if (!strcmp(s, tsdl_keywords[i]))
			return 0;
	return 1;
}

static int is_event_name(const char *s)
{
	if (!s || !*s || strlen(s) > 200)
		return 0;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.:-", *p))
			return 0;
	return 1;
}

/* Returns NULL if the schema is acceptable, else why not. */
static const char *schema_problem(const vg_type_desc *d, int builtin, char *why, size_t len)
{
	if (!is_event_name(d->name))
		return "name must be 1-200 characters of [A-Za-z0-9_.:-]";
	if (!builtin && !strncmp(d->name, "vg.", 3))
		return "names starting with 'vg.' are reserved for vigil's own sensors";
	if (d->relation && !is_event_name(d->relation))
		return "relation must be 1-200 characters of [A-Za-z0-9_.:-]";
	if ((unsigned)d->kind > VG_KIND_RECLAIM)
		return "unknown temporal kind";
	if ((unsigned)d->placement > VG_FLAG_TARGET)
		return "unknown flag placement";
	if ((unsigned)d->op >= VG_OP_COUNT)
		return "unknown op";
	if (d->op != VG_OP_ACTIVITY && d->op != VG_OP_REFERENCE && d->op != VG_OP_MOVE &&
	    d->op != VG_OP_ENTER && d->op != VG_OP_LEAVE && d->target < 0 && !builtin)
		return "this op needs a target entity field";
	if (d->nfields > 256 || (d->nfields && !d->fields))
		return "at most 256 fields, and fields must be given";
	for (unsigned i = 0; i < d->nfields; i++) {
		const vg_field_desc *f = &d->fields[i];
		if (!is_identifier(f->name)) {
			snprintf(why, len,
			         "field %u: name must be an identifier [A-Za-z][A-Za-z0-9_]* that "
			         "is not a TSDL keyword",
			         i);
			return why;
		}
		if ((unsigned)f->type > VG_ENTITY) {
			snprintf(why, len, "field '%s': unknown type", f->name);
			return why;
		}
		if (f->type == VG_ENTITY && !is_event_name(f->entity_kind)) {
			snprintf(why, len, "field '%s': an entity reference needs an entity kind",
			         f->name);
			return why;
		}
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(d->fields[j].name, f->name)) {
				snprintf(why, len, "field '%s' is declared twice", f->name);
				return why;
			}
	}
	const int roles[3] = {d->performer, d->initiator, d->target};
	const char *role_names[3] = {"performer", "initiator", "target"};
	for (int r = 0; r < 3; r++) {
		if (roles[r] == -1)
			continue;
		if (roles[r] < -1 || roles[r] >= (int)d->nfields ||
		    d->fields[roles[r]].type != VG_ENTITY) {
			snprintf(why, len, "%s must be -1 or the index of an entity field",
			         role_names[r]);
			return why;
		}
	}
	if (d->placement == VG_FLAG_INITIATOR && d->initiator < 0)
		return "flag placed on the initiator, but no initiator field";
	if (d->placement == VG_FLAG_TARGET && d->target < 0)
		return "flag placed on the target, but no target field";
	return NULL;
}

static int same_schema(const vg_type_desc *a, const vg_type_desc *b)
{
	if (a->kind != b->kind || a->nfields != b->nfields || a->placement != b->placement ||
	    a->op != b->op)
		return 0;
	for (unsigned i = 0; i < a->nfields; i++)
		if (strcmp(a->fields[i].name, b->fields[i].name) ||
		    a->fields[i].type != b->fields[i].type)
			return 0;
	return 1;
}

static vg_type_desc copy_desc(const vg_type_desc *d)
{
	vg_type_desc c = *d;
	c.name = strdup(d->name);
	c.relation = d->relation ? strdup(d->relation) : NULL;
	vg_field_desc *f = calloc(d->nfields ? d->nfields : 1, sizeof *f);
	for (unsigned i = 0; f && i < d->nfields; i++) {
		f[i].name = strdup(d->fields[i].name);
		f[i].type = d->fields[i].type;
		f[i].entity_kind =
		    d->fields[i].entity_kind ? strdup(d->fields[i].entity_kind) : NULL;
	}
	c.fields = f;
	return c;
}

static int append_text(const char *text, size_t len)
{
	if (types_text_len + len + 1 > types_text_cap) {
		size_t cap = types_text_cap ? types_text_cap * 2 : 8192;
		while (cap < types_text_len + len + 1)
			cap *= 2;
		char *p = realloc(types_text, cap);
		if (!p)
			return -1;
		types_text = p;
		types_text_cap = cap;
	}
	memcpy(types_text + types_text_len, text, len);
	types_text_len += len;
	types_text[types_text_len] = 0;
	return 0;
}

static vg_sensor *find_locked(const char *name)
{
	for (size_t i = 0; i < ntypes; i++)
		if (!strcmp(types[i]->desc.name, name))
			return &types[i]->sensor;
	return NULL;
}

/* vigil's built-in events that may come often (a network subject's I/O, a program's
 * entities): they take the first compact ids. */
static const int frequent_builtins[] = {VG_B_NET_SEND, VG_B_NET_RECV, VG_B_ENTITY_CREATE,
                                        VG_B_ENTITY_RECLAIM};
#define NFREQUENT (sizeof frequent_builtins / sizeof *frequent_builtins)

/* The event id of built-in `which`, or (which < 0) of the k-th other sensor. Ids below
 * VG_COMPACT_IDS get the 4-byte event header (docs/trace-format.md "Events"): the
 * frequent built-ins take the first, sensors the rest in order of registration, then
 * come the other built-ins, then the later sensors. */
static size_t event_id(int which, size_t k)
{
	const size_t nrare = VG_B_COUNT - NFREQUENT;
	if (which < 0)
		return NFREQUENT + k < VG_COMPACT_IDS ? NFREQUENT + k : nrare + NFREQUENT + k;
	size_t rare = 0;
	for (int b = 0; b < which; b++) {
		size_t f = 0;
		while (f < NFREQUENT && frequent_builtins[f] != b)
			f++;
		rare += f == NFREQUENT;
	}
	for (size_t f = 0; f < NFREQUENT; f++)
		if (frequent_builtins[f] == which)
			return f;
	return VG_COMPACT_IDS + rare;
}

static vg_sensor *register_locked(const vg_type_desc *d, int builtin)
{
	char why[256];
	const char *problem = schema_problem(d, builtin, why, sizeof why);
	if (problem) {
		vg__warn("cannot register sensor '%s': %s", d->name ? d->name : "(null)", problem);
		return &dead_sensor;
	}
	vg_sensor *existing = find_locked(d->name);
	if (existing) {
		struct vg_type *t = (struct vg_type *)existing;
		if (same_schema(&t->desc, d))
			return existing;
		vg__warn("cannot register sensor '%s' again with a different schema", d->name);
		return &dead_sensor;
	}
	if (event_id(-1, ntypes - nbuiltins_registered) >= VG_MAX_TYPES) {
		vg__warn("cannot register sensor '%s': more than %d types", d->name, VG_MAX_TYPES);
		return &dead_sensor;
	}
	if (ntypes == cap_types) {
		size_t cap = cap_types ? cap_types * 2 : 64;
		struct vg_type **p = realloc(types, cap * sizeof *p);
		if (!p)
			return &dead_sensor;
		types = p;
		cap_types = cap;
	}
	struct vg_type *t = calloc(1, sizeof *t);
	if (!t)
		return &dead_sensor;
	t->desc = copy_desc(d);
	if (!t->desc.name || !t->desc.fields) {
		vg__warn("cannot register sensor '%s': out of memory", d->name);
		return &dead_sensor;
	}
	t->sensor.id = (uint16_t)event_id(builtin ? (int)(d - builtin_descs) : -1,
	                                  ntypes - nbuiltins_registered);
	t->sensor.placement = (uint16_t)d->placement;
	t->sensor.name = t->desc.name;
	t->sensor.op = (uint16_t)d->op;
	/* vigil's own activity events (exec, synthesized-event marks, network) belong to
	 * no kind: only a load (a type) among them is narrowed by kind. */
	unsigned kind = vg_op_kind(d->op);
	if (!strncmp(d->name, "vg.", 3) && d->op != VG_OP_LOAD)
		kind = 0;
	t->sensor.catbit = (uint16_t)(vg_op_category(d->op) | kind);
	for (unsigned i = 0; i < d->nfields; i++)
		t->ctl.nent += d->fields[i].type == VG_ENTITY;

	/* Shared layout: the id every image of the recording gives this declaration. */
	int declared = 1;
	if (vg__rt.shared && vg__rt.recording && vg__shared_declare(&t->desc, &t->sensor.id) < 0) {
		vg__warn("cannot declare sensor '%s' in the shared metadata; it stays off",
		         d->name);
		t->sensor.id = 0xFFFF; /* no id of the trace's: recording it is refused */
		declared = 0;
	}
	char *text = NULL;
	size_t len = 0;
	if (vg__metadata_type_text(&t->desc, t->sensor.id, &text, &len) < 0 ||
	    append_text(text, len) < 0) {
		free(text);
		vg__warn("cannot register sensor '%s': out of memory", d->name);
		return &dead_sensor;
	}
	/* The declaration is in the metadata before the sensor can fire. */
	if (vg__rt.recording && vg__metadata_append_type(text, len) < 0)
		vg__warn("cannot append sensor '%s' to the metadata; its events will be unreadable",
		         d->name);
	free(text);
	types[ntypes++] = t;
	nbuiltins_registered += builtin != 0;
	int on =
	    declared && vg__rt.recording && vg__sensor_pattern_enabled(vg__rt.cfg.sensors, d->name);
	atomic_store(&t->sensor.enabled, on ? 1 : 0);
	/* The monitor's remembered rules apply before the sensor can fire. */
	if (vg__control_on)
		vg__control_sensor_registered_locked(&t->sensor, &t->desc);
	if (vg__rt.recording)
		vg__report_sensor_registered_locked(&t->sensor);
	return &t->sensor;
}

vg_sensor *vg_sensor_register(const vg_type_desc *desc)
{
	if (!desc) {
		vg__warn("cannot register a sensor: no description");
		return &dead_sensor;
	}
	vg__ensure_init();
	return vg__sensor_register_inited(desc);
}

vg_sensor *vg__sensor_register_inited(const vg_type_desc *desc)
{
	pthread_mutex_lock(&vg__rt.lock);
	vg_sensor *s = register_locked(desc, 0);
	pthread_mutex_unlock(&vg__rt.lock);
	return s;
}

void vg_sensor_enable(vg_sensor *s)
{
	if (s && s != &dead_sensor)
		atomic_fetch_add(&s->enabled, 1);
}

void vg_sensor_disable(vg_sensor *s)
{
	if (s && s != &dead_sensor)
		atomic_fetch_sub(&s->enabled, 1);
}

/* ---- the schema of a registered sensor, for the generic emitter ---- */

const vg_type_desc *vg__sensor_desc(const vg_sensor *s)
{
	if (!s || s == &dead_sensor)
		return NULL;
	return &((const struct vg_type *)s)->desc;
}

size_t vg__registry_count(void)
{
	return ntypes;
}

vg_sensor *vg__registry_at(size_t i)
{
	return i < ntypes ? &types[i]->sensor : NULL;
}

struct vg_sensor_ctl *vg__sensor_ctl(vg_sensor *s)
{
	if (!s || s == &dead_sensor || s->id == 0xFFFF)
		return NULL;
	return &((struct vg_type *)s)->ctl;
}

const char *vg__registry_text(size_t *len)
{
	*len = types_text_len;
	return types_text ? types_text : "";
}

vg_sensor *vg__builtin(int which)
{
	return builtins[which];
}

/* ---- built-in sensors: processes, threads, entities ---- */

#define F(n, t)                                                                                    \
	{                                                                                          \
		n, t, NULL                                                                         \
	}
static const vg_field_desc f_process_begin[] = {F("pid", VG_UINT32), F("gen", VG_UINT64),
                                                F("ppid", VG_UINT32), F("name", VG_STRING),
                                                F("exe", VG_STRING)};
static const vg_field_desc f_process_exec[] = {F("path", VG_STRING)};
static const vg_field_desc f_process_name[] = {F("pid", VG_UINT32), F("gen", VG_UINT64),
                                               F("name", VG_STRING)};
static const vg_field_desc f_process_end[] = {F("pid", VG_UINT32), F("gen", VG_UINT64),
                                              F("status", VG_INT32)};
static const vg_field_desc f_thread[] = {F("tid", VG_UINT32), F("gen", VG_UINT32),
                                         F("name", VG_STRING)};
static const vg_field_desc f_entity[] = {F("kind", VG_STRING), F("id", VG_UINT64),
                                         F("gen", VG_UINT32), F("name", VG_STRING)};
static const vg_field_desc f_synth[] = {F("at", VG_UINT64)};
/* docs/net.md: every vg.net.* event ends with the thread's interaction after it. */
static const vg_field_desc f_net_input[] = {F("what", VG_STRING), F("iid_hi", VG_UINT64),
                                            F("iid_lo", VG_UINT64)};
static const vg_field_desc f_net_conn[] = {
    F("fd", VG_INT32),     F("conn", VG_UINT64),   F("kind", VG_STRING),   F("role", VG_STRING),
    F("local", VG_STRING), F("remote", VG_STRING), F("iid_hi", VG_UINT64), F("iid_lo", VG_UINT64)};
static const vg_field_desc f_net_io[] = {
    F("fd", VG_INT32),   F("conn", VG_UINT64),   F("off", VG_UINT64),   F("len", VG_UINT64),
    F("msg", VG_UINT64), F("iid_hi", VG_UINT64), F("iid_lo", VG_UINT64)};
static const vg_field_desc f_net_close[] = {F("fd", VG_INT32), F("conn", VG_UINT64),
                                            F("iid_hi", VG_UINT64), F("iid_lo", VG_UINT64)};
static const vg_field_desc f_net_unfollowed[] = {F("fd", VG_INT32),      F("conn", VG_UINT64),
                                                 F("call", VG_STRING),   F("count", VG_UINT64),
                                                 F("iid_hi", VG_UINT64), F("iid_lo", VG_UINT64)};
#undef F

static const vg_type_desc builtin_descs[VG_B_COUNT] = {
    [VG_B_PROCESS_BEGIN] = {"vg.process.begin", "vg.process", VG_KIND_CREATE, VG_FLAG_SENSOR, 0,
                            f_process_begin, 5, -1, -1, -1, VG_OP_CREATE},
    [VG_B_PROCESS_EXEC] = {"vg.process.exec", NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0,
                           f_process_exec, 1, -1, -1, -1, VG_OP_ACTIVITY},
    [VG_B_PROCESS_END] = {"vg.process.end", "vg.process", VG_KIND_RECLAIM, VG_FLAG_SENSOR, 0,
                          f_process_end, 3, -1, -1, -1, VG_OP_RECLAIM},
    [VG_B_THREAD_BEGIN] = {"vg.thread.begin", "vg.thread", VG_KIND_CREATE, VG_FLAG_SENSOR, 0,
                           f_thread, 3, -1, -1, -1, VG_OP_CREATE},
    [VG_B_THREAD_NAME] = {"vg.thread.name", "vg.thread", VG_KIND_STATE, VG_FLAG_SENSOR, 0, f_thread,
                          3, -1, -1, -1, VG_OP_RENAME},
    [VG_B_THREAD_END] = {"vg.thread.end", "vg.thread", VG_KIND_RECLAIM, VG_FLAG_SENSOR, 0, f_thread,
                         2, -1, -1, -1, VG_OP_RECLAIM},
    [VG_B_ENTITY_CREATE] = {"vg.entity.create", "vg.entity", VG_KIND_CREATE, VG_FLAG_SENSOR, 0,
                            f_entity, 4, -1, -1, -1, VG_OP_CREATE},
    [VG_B_ENTITY_NAME] = {"vg.entity.name", "vg.entity", VG_KIND_STATE, VG_FLAG_SENSOR, 0, f_entity,
                          4, -1, -1, -1, VG_OP_RENAME},
    [VG_B_ENTITY_RECLAIM] = {"vg.entity.reclaim", "vg.entity", VG_KIND_RECLAIM, VG_FLAG_SENSOR, 0,
                             f_entity, 3, -1, -1, -1, VG_OP_RECLAIM},
    [VG_B_ENTITY_LOAD] = {"vg.entity.load", NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0, f_entity, 3, -1,
                          -1, -1, VG_OP_LOAD},
    [VG_B_REPORT_SYNTH] = {"vg.report.synth", NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0, f_synth, 1,
                           -1, -1, -1, VG_OP_ACTIVITY},
    [VG_B_NET_INPUT] = {"vg.net.input", NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0, f_net_input, 3, -1,
                        -1, -1, VG_OP_ACTIVITY},
    [VG_B_NET_CONN] = {"vg.net.conn", NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0, f_net_conn, 8, -1, -1,
                       -1, VG_OP_ACTIVITY},
    [VG_B_NET_SEND] = {"vg.net.send", NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0, f_net_io, 7, -1, -1,
                       -1, VG_OP_ACTIVITY},
    [VG_B_NET_RECV] = {"vg.net.recv", NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0, f_net_io, 7, -1, -1,
                       -1, VG_OP_ACTIVITY},
    [VG_B_NET_CLOSE] = {"vg.net.close", NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0, f_net_close, 4, -1,
                        -1, -1, VG_OP_ACTIVITY},
    [VG_B_NET_UNFOLLOWED] = {"vg.net.unfollowed", NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0,
                             f_net_unfollowed, 6, -1, -1, -1, VG_OP_ACTIVITY},
    [VG_B_NET_PARTIAL] = {"vg.net.partial", NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0, f_net_close, 4,
                          -1, -1, -1, VG_OP_ACTIVITY},
    [VG_B_PROCESS_NAME] = {"vg.process.name", "vg.process", VG_KIND_STATE, VG_FLAG_SENSOR, 0,
                           f_process_name, 3, -1, -1, -1, VG_OP_RENAME},
};

/* Called once at start, before any other registration, with the lock free. */
void vg__registry_init(void)
{
	pthread_mutex_lock(&vg__rt.lock);
	for (int i = 0; i < VG_B_COUNT; i++)
		builtins[i] = register_locked(&builtin_descs[i], 1);
	pthread_mutex_unlock(&vg__rt.lock);
}

/* Shared layout: the types registered before the image started (the built-in ones)
 * take the ids the shared metadata gives them; no event has been written yet. */
void vg__registry_redeclare(void)
{
	pthread_mutex_lock(&vg__rt.lock);
	for (size_t i = 0; i < ntypes; i++)
		if (vg__shared_declare(&types[i]->desc, &types[i]->sensor.id) < 0) {
			vg__warn("cannot declare sensor '%s' in the shared metadata; it stays off",
			         types[i]->desc.name);
			types[i]->sensor.id = 0xFFFF;
			atomic_store(&types[i]->sensor.enabled, 0);
		}
	pthread_mutex_unlock(&vg__rt.lock);
}

/* In a fork child: recording state may have changed (e.g. the child's directory could
 * not be made), so every sensor's initial flag is decided again. */
void vg__registry_reset_after_fork(void)
{
	for (size_t i = 0; i < ntypes; i++) {
		int on = vg__rt.recording &&
		         vg__sensor_pattern_enabled(vg__rt.cfg.sensors, types[i]->desc.name);
		if (!on)
			atomic_store(&types[i]->sensor.enabled, 0);
	}
}
