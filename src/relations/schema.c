/* The schema step of building a database: every event type of every image is mapped to
 * the relation it feeds (by its `relation=` name, case-insensitively) and each of its
 * fields to an attribute of that relation. Entity relations are made on first use. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "relations/build.h"

static enum vgq_type attr_type(enum vgt_vtype t)
{
	switch (t) {
	case VGT_INT:
		return VGQ_INT;
	case VGT_UINT:
		return VGQ_UINT;
	case VGT_DOUBLE:
		return VGQ_DOUBLE;
	case VGT_STRING:
		return VGQ_STRING;
	case VGT_BYTES:
		return VGQ_BYTES;
	case VGT_REF:
		return VGQ_ENTITY;
	}
	return VGQ_BYTES;
}

static struct rslot *find_slot(const struct builder *b, const char *name)
{
	for (size_t i = 0; i < b->nslots; i++)
		if (!strcasecmp(b->slots[i]->rel->name, name))
			return b->slots[i];
	return NULL;
}

struct rslot *vgq_build_relation(struct builder *b, const char *name, enum vgq_rkind kind)
{
	struct rslot *s = find_slot(b, name);
	if (s)
		return s;
	s = vgq_xcalloc(1, sizeof *s);
	s->rel = vgq_relation_new(vgq_pool_intern(b->pool, name, strlen(name)), kind);
	if (kind == VGQ_REL_ENTITY) {
		vgq_relation_add_attr(s->rel, "name", VGQ_STRING, NULL);
		vgq_relation_add_attr(s->rel, "id", VGQ_UINT, NULL);
		vgq_relation_add_attr(s->rel, "gen", VGQ_UINT, NULL);
	}
	b->slots = vgq_xrealloc(b->slots, b->nslots + 1, sizeof *b->slots);
	b->slots[b->nslots++] = s;
	return s;
}

/* ---- the table from event types to their mapping ---- */

static size_t type_hash(const struct vgt_event_type *t, size_t mask)
{
	uint64_t h = (uint64_t)(uintptr_t)t * 0x9E3779B97F4A7C15ull;
	return (size_t)(h ^ (h >> 32)) & mask;
}

struct tinfo *vgq_build_type(const struct builder *b, const struct vgt_event_type *t)
{
	size_t mask = b->ntypes_cap - 1;
	for (size_t i = type_hash(t, mask);; i = (i + 1) & mask)
		if (!b->types[i] || b->types[i]->type == t)
			return b->types[i];
}

static void insert_type(struct builder *b, struct tinfo *ti)
{
	size_t mask = b->ntypes_cap - 1;
	size_t i = type_hash(ti->type, mask);
	while (b->types[i])
		i = (i + 1) & mask;
	b->types[i] = ti;
}

/* Maps the type's fields onto the relation's attributes, adding those it lacks. A field
 * whose type differs from the attribute of the same name is left out (col -1). An end
 * type's fields that no begin type has become attributes set when the end closes a
 * tuple (e.g. an exit status). */
static void map_fields(struct builder *b, struct tinfo *ti)
{
	const struct vgt_event_type *t = ti->type;
	struct vgq_relation *r = ti->slot->rel;
	ti->col = vgq_xcalloc(t->nfields ? t->nfields : 1, sizeof *ti->col);
	ti->match = vgq_xcalloc(t->nfields ? t->nfields : 1, sizeof *ti->match);
	for (unsigned f = 0; f < t->nfields; f++) {
		const struct vgt_field *fd = &t->fields[f];
		ti->col[f] = -1;
		if (fd->hidden)
			continue;
		/* The runtime's begin time of a sampled interval: the tuple's time, not an
		 * attribute (docs/watch.md "Sampling"). */
		if (ti->what == T_END && !strcmp(fd->name, "vg_since") && fd->type == VGT_UINT) {
			ti->since = (int)f;
			continue;
		}
		enum vgq_type type = attr_type(fd->type);
		int a = vgq_relation_attr(r, fd->name);
		if (a < 0) {
			const char *kind = fd->ref_kind ? vgq_pool_intern(b->pool, fd->ref_kind,
			                                                  strlen(fd->ref_kind))
			                                : NULL;
			a = vgq_relation_add_attr(
			    r, vgq_pool_intern(b->pool, fd->name, strlen(fd->name)), type, kind);
		}
		if (r->attrs[a].type != type)
			continue;
		ti->col[f] = a;
		struct rslot *s = ti->slot;
		if (ti->what == T_END) {
			ti->match[f] = (size_t)a < s->nbegun && s->begun[a];
		} else {
			if ((size_t)a >= s->nbegun) {
				s->begun = vgq_xrealloc(s->begun, (size_t)a + 1, sizeof *s->begun);
				memset(s->begun + s->nbegun, 0,
				       ((size_t)a + 1 - s->nbegun) * sizeof *s->begun);
				s->nbegun = (size_t)a + 1;
			}
			s->begun[a] = true;
		}
	}
}

/* The field naming the entity whose state a state sensor records: its target, else its
 * performer, else its first entity reference; -1: the performing thread. */
static int state_key(const struct vgt_event_type *t)
{
	if (t->target >= 0)
		return t->target;
	if (t->performer >= 0)
		return t->performer;
	for (unsigned f = 0; f < t->nfields; f++)
		if (t->fields[f].type == VGT_REF)
			return (int)f;
	return -1;
}

/* The built-in entity events, known by name (as the reader's names table knows them):
 * vg.entity.*, vg.process.begin/.name/.end and vg.thread.*. */
static bool builtin_entity(const struct vgt_event_type *t, const char **fixed_kind)
{
	if (!strncmp(t->name, "vg.entity.", 10))
		*fixed_kind = NULL;
	else if (!strcmp(t->name, "vg.process.begin") || !strcmp(t->name, "vg.process.end") ||
	         !strcmp(t->name, "vg.process.name"))
		*fixed_kind = "OSProcess";
	else if (!strncmp(t->name, "vg.thread.", 10))
		*fixed_kind = "OSThread";
	else
		return false;
	return true;
}

/* The relation event type t feeds: `rel` (its relation= name). Names are one namespace,
 * whatever the kind: when `rel` is a relation of another kind already (two sensors of
 * different kinds declaring one relation= in the metadata, or an entity kind), t is not
 * merged into it but feeds `rel.KIND` (begin and end types of one interval stay
 * together there), and a warning says so; if that name is taken by yet another kind,
 * t's events are left out (NULL), said too. */
static struct rslot *type_slot(struct builder *b, const struct vgt_event_type *t, const char *rel,
                               enum vgq_rkind kind)
{
	struct rslot *s = find_slot(b, rel);
	if (!s || s->rel->kind == kind) {
		s = vgq_build_relation(b, rel, kind);
		if (!s->first_type)
			s->first_type = vgq_pool_intern(b->pool, t->name, strlen(t->name));
		return s;
	}
	char other[300];
	snprintf(other, sizeof other, "%s.%s", rel, vgq_rkind_name(kind));
	struct rslot *o = find_slot(b, other);
	const char *by = s->first_type ? s->first_type : "an entity kind";
	if (o && o->rel->kind != kind) {
		vgq_build_warn(
		    b,
		    "event type '%s' declares relation '%s' (%s), but '%s' is a relation "
		    "of kind %s (from %s) and '%s' of another kind too: its events are left "
		    "out",
		    t->name, rel, vgq_rkind_name(kind), s->rel->name, vgq_rkind_name(s->rel->kind),
		    by, other);
		return NULL;
	}
	vgq_build_warn(b,
	               "event type '%s' declares relation '%s' (%s), but '%s' is a relation of "
	               "kind %s (from %s): its events are in relation '%s' instead",
	               t->name, rel, vgq_rkind_name(kind), s->rel->name,
	               vgq_rkind_name(s->rel->kind), by, other);
	s = vgq_build_relation(b, other, kind);
	if (!s->first_type)
		s->first_type = vgq_pool_intern(b->pool, t->name, strlen(t->name));
	return s;
}

static struct tinfo *describe(struct builder *b, const struct vgt_event_type *t)
{
	struct tinfo *ti = vgq_xcalloc(1, sizeof *ti);
	ti->type = t;
	ti->key = -1;
	ti->since = -1;
	const char *rel = t->relation ? t->relation : t->name;
	if (vgq_is_synth_marker(t)) { /* not a relation: it times the next event */
		ti->what = T_SKIP;
		return ti;
	}
	if (builtin_entity(t, &ti->fixed_kind)) {
		bool process = ti->fixed_kind && !strcmp(ti->fixed_kind, "OSProcess");
		bool thread = ti->fixed_kind && !strcmp(ti->fixed_kind, "OSThread");
		ti->f_kind = vgt_type_field(t, "kind");
		ti->f_id = vgt_type_field(t, process ? "pid" : thread ? "tid" : "id");
		ti->f_gen = vgt_type_field(t, "gen");
		ti->f_name = vgt_type_field(t, "name");
		const char *op = strrchr(t->name, '.') + 1;
		ti->what = !strcmp(op, "create") || !strcmp(op, "begin")  ? T_ENT_CREATE
		           : !strcmp(op, "reclaim") || !strcmp(op, "end") ? T_ENT_RECLAIM
		           : !strcmp(op, "name")                          ? T_ENT_NAME
		                                                          : T_SKIP;
		if (ti->f_id < 0 || ti->f_gen < 0 || (!ti->fixed_kind && ti->f_kind < 0))
			ti->what = T_SKIP;
		return ti;
	}
	enum vgq_rkind kind = VGQ_REL_EVENT;
	ti->what = T_EVENT;
	if (t->vigil) {
		switch (t->kind) {
		case VGT_KIND_EVENT:
			break;
		case VGT_KIND_BEGIN:
		case VGT_KIND_END:
			kind = VGQ_REL_INTERVAL;
			ti->what = t->kind == VGT_KIND_BEGIN ? T_BEGIN : T_END;
			break;
		case VGT_KIND_STATE:
			kind = VGQ_REL_STATE;
			ti->what = T_STATE;
			ti->key = state_key(t);
			break;
		case VGT_KIND_CREATE:
		case VGT_KIND_RECLAIM:
			kind = VGQ_REL_ENTITY;
			ti->what = t->kind == VGT_KIND_CREATE ? T_BEGIN : T_END;
			break;
		}
	}
	ti->slot = type_slot(b, t, rel, kind);
	if (!ti->slot)
		ti->what = T_SKIP;
	return ti;
}

/* Maps the types not met before into the table (room for them made by the caller). */
static void map_types(struct builder *b, const struct vgt_event_type *const *types, size_t n)
{
	/* Begin types before end types, so that an interval relation takes the begin's
	 * attribute order. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			const struct vgt_event_type *et = types[i];
			bool end =
			    et->vigil && (et->kind == VGT_KIND_END || et->kind == VGT_KIND_RECLAIM);
			if (end != (pass == 1) || vgq_build_type(b, et))
				continue;
			struct tinfo *ti = describe(b, et);
			if (ti->slot)
				map_fields(b, ti);
			insert_type(b, ti);
		}
}

void vgq_build_types(struct builder *b, const struct vgt_event_type *const *types, size_t n)
{
	b->ntypes_cap = 16;
	while (b->ntypes_cap < 2 * n)
		b->ntypes_cap *= 2;
	b->types = vgq_xcalloc(b->ntypes_cap, sizeof *b->types);
	map_types(b, types, n);
}

void vgq_build_schema(struct builder *b, const struct vgt_trace *t)
{
	size_t n = vgt_class_count(t);
	const struct vgt_event_type **types = vgq_xcalloc(n ? n : 1, sizeof *types);
	for (size_t i = 0; i < n; i++)
		types[i] = vgt_class_at(t, i);
	vgq_build_types(b, types, n);
	free(types);
	/* what the pass looks up for each event: its class's mapping, by class number */
	b->by_class = vgq_xcalloc(n ? n : 1, sizeof *b->by_class);
	for (size_t i = 0; i < n; i++)
		b->by_class[i] = vgq_build_type(b, vgt_class_at(t, i));
	b->nby_class = n;
}

void vgq_build_schema_grow(struct builder *b, const struct vgt_trace *t)
{
	size_t from = b->nby_class, n = vgt_class_count(t);
	if (n <= from)
		return;
	/* the table of types grown to hold the new ones, then they are mapped as at first */
	size_t cap = b->ntypes_cap;
	while (cap < 2 * n)
		cap *= 2;
	if (cap != b->ntypes_cap) {
		struct tinfo **old = b->types;
		size_t oldcap = b->ntypes_cap;
		b->ntypes_cap = cap;
		b->types = vgq_xcalloc(cap, sizeof *b->types);
		for (size_t i = 0; i < oldcap; i++)
			if (old[i])
				insert_type(b, old[i]);
		free(old);
	}
	const struct vgt_event_type **types = vgq_xcalloc(n - from, sizeof *types);
	for (size_t i = from; i < n; i++)
		types[i - from] = vgt_class_at(t, i);
	map_types(b, types, n - from);
	free(types);
	b->by_class = vgq_xrealloc(b->by_class, n, sizeof *b->by_class);
	for (size_t i = from; i < n; i++)
		b->by_class[i] = vgq_build_type(b, vgt_class_at(t, i));
	b->nby_class = n;
}

void vgq_build_free_types(struct builder *b)
{
	for (size_t i = 0; i < b->ntypes_cap; i++)
		if (b->types[i]) {
			free(b->types[i]->col);
			free(b->types[i]->match);
			free(b->types[i]);
		}
	free(b->types);
	free(b->by_class);
}

void vgq_build_warn(struct builder *b, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < b->nwarnings; i++)
		if (!strcmp(b->warnings[i], line))
			return;
	b->warnings = vgq_xrealloc(b->warnings, b->nwarnings + 1, sizeof *b->warnings);
	size_t len = strlen(line);
	b->warnings[b->nwarnings] = memcpy(vgq_xcalloc(len + 1, 1), line, len);
	b->nwarnings++;
}

int vgq_is_synth_marker(const struct vgt_event_type *t)
{
	return t->nfields == 1 && !strcmp(t->name, "vg.report.synth");
}
