/* The packets an α plan asks for (alpha.h): which events its sensors would record, given
 * the entity flags its rules and triggers set, in time order. The same decisions the
 * subject's runtime makes (docs/control.md), made again on the trace: on a live trace they
 * drop what a shared entity flag let through; on a full recording they replay the plan. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "live/alpha.h"
#include "relations/columns.h"

/* What one event type means to the plan. */
struct ftype {
	const struct vgt_event_type *type;
	bool source;     /* vg.*: entity sources, always kept */
	size_t *alphas;  /* the α that enable it */
	int *flag_field; /* per α: the field holding its flag's entity, or -1 */
	size_t nalphas;
	size_t *targets;   /* triggers: the α enabled by this type's events */
	int *target_field; /* per trigger: the field naming the entity */
	size_t ntargets;
	/* vg.entity.create / .name: fields */
	bool naming;
	int f_kind, f_id, f_gen, f_name;
	int f_since; /* a sampled interval's end: its vg_since field, or -1 */
};

/* An enabled (α, entity) pair: the entity is scoped to its process image. */
struct fkey {
	const struct vgt_image *image;
	uint64_t id;
	uint32_t gen;
	uint32_t alpha; /* + 1; 0 = empty slot */
};

/* A map from (α, entity) to a time: the enabled pairs (no time), and O6's begins (when
 * the open interval of a sampled α on an entity began; INT64_MIN: none). Open
 * addressing, never deleted. */
struct fslot {
	struct fkey key;
	int64_t at;
};
struct fmap {
	struct fslot *v;
	size_t cap, n;
};

struct vga_filter {
	const struct vga_plan *plan;
	struct fmap begins;   /* O6 */
	struct fmap fired;    /* traced once: (α, entity) pairs whose one event was seen */
	int64_t tick, origin; /* the sampled α's clock */
	bool origin_first;    /* origin: the first event seen */
	bool seen_any;
	int64_t last_since;   /* of the last end kept for a sampled α */
	struct ftype **types; /* open addressing on the type pointer */
	size_t ntypes_cap, ntypes;
	struct fmap enabled; /* (α, entity) pairs the plan's rules enabled */
	struct vga_counts counts;
	uint64_t *per_alpha;
	uint64_t since; /* raw clock value; earlier user-sensor packets are dropped */
};

static uint64_t key_hash(const struct fkey *k)
{
	return vgq_mix((uint64_t)(uintptr_t)k->image ^ vgq_mix(k->id ^ ((uint64_t)k->gen << 40)) ^
	               ((uint64_t)k->alpha << 20));
}

static bool key_eq(const struct fkey *a, const struct fkey *b)
{
	return a->alpha == b->alpha && a->image == b->image && a->id == b->id && a->gen == b->gen;
}

/* The slot of k, or NULL if it has none and !create (a new slot's time: INT64_MIN). */
static struct fslot *fmap_get(struct fmap *m, const struct fkey *k, bool create)
{
	if (create && (m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		struct fslot *v = vgq_xcalloc(cap, sizeof *v);
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->v[i].key.alpha)
				continue;
			size_t j = key_hash(&m->v[i].key) & (cap - 1);
			while (v[j].key.alpha)
				j = (j + 1) & (cap - 1);
			v[j] = m->v[i];
		}
		free(m->v);
		m->v = v;
		m->cap = cap;
	}
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1;
	size_t j = key_hash(k) & mask;
	for (; m->v[j].key.alpha; j = (j + 1) & mask)
		if (key_eq(&m->v[j].key, k))
			return &m->v[j];
	if (!create)
		return NULL;
	m->v[j].key = *k;
	m->v[j].at = INT64_MIN;
	m->n++;
	return &m->v[j];
}

static bool key_has(struct vga_filter *f, const struct fkey *k)
{
	return fmap_get(&f->enabled, k, false) != NULL;
}

static void key_add(struct vga_filter *f, const struct fkey *k)
{
	fmap_get(&f->enabled, k, true);
}

/* Is there a tick of Clock[every] in [since, until)? The ticks: origin + k * every *
 * tick for k >= 0, as vgq_database_clock makes them. */
static bool tick_inside(const struct vga_filter *f, uint64_t every, int64_t since, int64_t until)
{
	int64_t period = f->tick * (int64_t)every;
	if (period <= 0 || until <= f->origin)
		return false;
	int64_t first = f->origin;
	if (since > f->origin)
		first = f->origin + (since - f->origin + period - 1) / period * period;
	return first >= since && first < until;
}

struct vga_filter *vga_filter_new(const struct vga_plan *p)
{
	struct vga_filter *f = vgq_xcalloc(1, sizeof *f);
	f->plan = p;
	f->tick = 1000000000;
	f->origin_first = true;
	f->last_since = INT64_MIN;
	f->per_alpha = vgq_xcalloc(p->n + 1, sizeof *f->per_alpha);
	return f;
}

void vga_filter_free(struct vga_filter *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->ntypes_cap; i++) {
		struct ftype *t = f->types[i];
		if (!t)
			continue;
		free(t->alphas);
		free(t->flag_field);
		free(t->targets);
		free(t->target_field);
		free(t);
	}
	free(f->types);
	free(f->enabled.v);
	free(f->begins.v);
	free(f->fired.v);
	free(f->per_alpha);
	free(f);
}

static struct ftype *describe(const struct vga_filter *f, const struct vgt_event_type *et)
{
	const struct vga_plan *p = f->plan;
	struct ftype *t = vgq_xcalloc(1, sizeof *t);
	t->type = et;
	t->f_since = et->kind == VGT_KIND_END ? vgt_type_field(et, "vg_since") : -1;
	if (!strncmp(et->name, "vg.", 3)) {
		t->source = true;
		t->naming =
		    !strcmp(et->name, "vg.entity.create") || !strcmp(et->name, "vg.entity.name");
		t->f_kind = vgt_type_field(et, "kind");
		t->f_id = vgt_type_field(et, "id");
		t->f_gen = vgt_type_field(et, "gen");
		t->f_name = vgt_type_field(et, "name");
		if (t->f_kind < 0 || t->f_id < 0 || t->f_gen < 0 || t->f_name < 0)
			t->naming = false;
		return t;
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct vga_alpha *a = &p->alphas[i];
		for (size_t k = 0; k < a->nsensors; k++) {
			if (strcmp(a->sensors[k]->event, et->name))
				continue;
			t->alphas = vgq_xrealloc(t->alphas, t->nalphas + 1, sizeof *t->alphas);
			t->flag_field =
			    vgq_xrealloc(t->flag_field, t->nalphas + 1, sizeof *t->flag_field);
			t->alphas[t->nalphas] = i;
			t->flag_field[t->nalphas] =
			    a->spec->flag_field ? vgt_type_field(et, a->spec->flag_field) : -1;
			t->nalphas++;
		}
		if (a->source == VGA_SRC_TRIGGER &&
		    !strcmp(p->alphas[a->trigger].sensors[0]->event, et->name)) {
			int field = vgt_type_field(et, a->trigger_by);
			if (field < 0)
				continue;
			t->targets = vgq_xrealloc(t->targets, t->ntargets + 1, sizeof *t->targets);
			t->target_field =
			    vgq_xrealloc(t->target_field, t->ntargets + 1, sizeof *t->target_field);
			t->targets[t->ntargets] = i;
			t->target_field[t->ntargets] = field;
			t->ntargets++;
		}
	}
	return t;
}

static struct ftype *type_of(struct vga_filter *f, const struct vgt_event_type *et)
{
	if ((f->ntypes + 1) * 2 > f->ntypes_cap) {
		size_t cap = f->ntypes_cap ? f->ntypes_cap * 2 : 64;
		struct ftype **types = vgq_xcalloc(cap, sizeof *types);
		for (size_t i = 0; i < f->ntypes_cap; i++) {
			if (!f->types[i])
				continue;
			size_t j = vgq_mix((uintptr_t)f->types[i]->type) & (cap - 1);
			while (types[j])
				j = (j + 1) & (cap - 1);
			types[j] = f->types[i];
		}
		free(f->types);
		f->types = types;
		f->ntypes_cap = cap;
	}
	size_t mask = f->ntypes_cap - 1;
	size_t j = vgq_mix((uintptr_t)et) & mask;
	for (; f->types[j]; j = (j + 1) & mask)
		if (f->types[j]->type == et)
			return f->types[j];
	f->types[j] = describe(f, et);
	f->ntypes++;
	return f->types[j];
}

/* vg.entity.create / .name: an entity getting the name a NAMED α waits for is enabled
 * for the rest of its lifetime (the subject's rule does the same). */
static void observe_name(struct vga_filter *f, const struct ftype *t, const struct vgt_event *ev)
{
	const struct vgt_value *kind = &ev->values[t->f_kind], *name = &ev->values[t->f_name];
	if (kind->type != VGT_STRING || name->type != VGT_STRING)
		return;
	for (size_t i = 0; i < f->plan->n; i++) {
		const struct vga_alpha *a = &f->plan->alphas[i];
		const char *k = a->spec->flag_kind ? a->spec->flag_kind : "thread";
		if (a->source != VGA_SRC_NAMED || strcasecmp(k, kind->str.ptr) ||
		    strcmp(a->name, name->str.ptr))
			continue;
		struct fkey key = {ev->image, ev->values[t->f_id].u,
		                   (uint32_t)ev->values[t->f_gen].u, (uint32_t)i + 1};
		key_add(f, &key);
	}
}

static bool wants(struct vga_filter *f, const struct ftype *t, size_t k, const struct vgt_event *ev)
{
	const struct vga_alpha *a = &f->plan->alphas[t->alphas[k]];
	if (a->source == VGA_SRC_SENSOR || a->source == VGA_SRC_ALL)
		return true;
	int field = t->flag_field[k];
	if (field < 0 || ev->values[field].type != VGT_REF)
		return false;
	struct fkey key = {ev->image, ev->values[field].ref.id, ev->values[field].ref.gen,
	                   (uint32_t)t->alphas[k] + 1};
	return key_has(f, &key);
}

/* The key of the flag's entity (or the thread) of α k: per entity state of O6 and once. */
static struct fkey entity_key(const struct ftype *t, size_t k, const struct vgt_event *ev)
{
	int field = t->flag_field[k];
	struct fkey key = {ev->image, ((uint64_t)ev->tid << 1) | 1, ev->thread_gen,
	                   (uint32_t)t->alphas[k] + 1};
	if (field >= 0 && ev->values[field].type == VGT_REF) {
		key.id = ev->values[field].ref.id << 1;
		key.gen = ev->values[field].ref.gen;
	}
	return key;
}

/* O6: a sampled α wants the end of an interval that holds at one of its clock's ticks;
 * never a begin (the subject only remembers when it was). */
static bool sampled_wants(struct vga_filter *f, const struct ftype *t, size_t k,
                          const struct vgt_event *ev)
{
	const struct vga_alpha *a = &f->plan->alphas[t->alphas[k]];
	struct fkey key = entity_key(t, k, ev);
	if (ev->type->kind == VGT_KIND_BEGIN) {
		fmap_get(&f->begins, &key, true)->at = ev->ts;
		return false;
	}
	if (ev->type->kind != VGT_KIND_END)
		return false;
	int64_t since = INT64_MIN;
	if (t->f_since >= 0 && ev->values[t->f_since].u)
		since = ev->ts - (int64_t)(ev->clock_value - ev->values[t->f_since].u);
	else {
		struct fslot *b = fmap_get(&f->begins, &key, true);
		since = b->at;
		b->at = INT64_MIN;
	}
	if (since == INT64_MIN || !tick_inside(f, a->sample_every, since, ev->ts) ||
	    !wants(f, t, k, ev))
		return false;
	f->last_since = since;
	return true;
}

/* Traced once: the α's rules raised the entity's flag once per lifetime, so only the
 * first event of each lifetime is the α's. */
static bool once_wants(struct vga_filter *f, const struct ftype *t, size_t k,
                       const struct vgt_event *ev)
{
	if (!wants(f, t, k, ev))
		return false;
	struct fkey key = entity_key(t, k, ev);
	struct fslot *s = fmap_get(&f->fired, &key, true);
	if (s->at != INT64_MIN)
		return false;
	s->at = ev->ts;
	return true;
}

bool vga_filter_keep(void *filter, const struct vgt_event *ev)
{
	struct vga_filter *f = filter;
	struct ftype *t = type_of(f, ev->type);
	if (!f->seen_any) {
		f->seen_any = true;
		if (f->origin_first)
			f->origin = ev->ts;
	}
	f->last_since = INT64_MIN;
	if (t->source) {
		if (t->naming)
			observe_name(f, t, ev);
		f->counts.sources++;
		return true;
	}
	if (ev->clock_value < f->since) {
		f->counts.earlier++;
		return false;
	}
	bool keep = false;
	for (size_t k = 0; k < t->nalphas; k++)
		if (f->plan->alphas[t->alphas[k]].sample_every ? sampled_wants(f, t, k, ev)
		    : f->plan->alphas[t->alphas[k]].spec->once ? once_wants(f, t, k, ev)
		                                               : wants(f, t, k, ev)) {
			keep = true;
			f->per_alpha[t->alphas[k]]++;
		}
	if (!keep) {
		f->counts.extraneous++;
		return false;
	}
	f->counts.kept++;
	for (size_t k = 0; k < t->ntargets; k++) {
		const struct vgt_value *v = &ev->values[t->target_field[k]];
		if (v->type != VGT_REF)
			continue;
		struct fkey key = {ev->image, v->ref.id, v->ref.gen, (uint32_t)t->targets[k] + 1};
		key_add(f, &key);
	}
	return true;
}

void vga_filter_since(struct vga_filter *f, uint64_t clock)
{
	f->since = clock;
}

void vga_filter_clock(struct vga_filter *f, int64_t tick_ns, int64_t origin)
{
	f->tick = tick_ns;
	f->origin_first = origin == INT64_MIN;
	f->origin = origin;
}

int64_t vga_filter_end_since(void *filter, const struct vgt_event *ev)
{
	(void)ev;
	return ((const struct vga_filter *)filter)->last_since;
}

struct vga_counts vga_filter_counts(const struct vga_filter *f)
{
	return f->counts;
}

const uint64_t *vga_filter_per_alpha(const struct vga_filter *f)
{
	return f->per_alpha;
}
