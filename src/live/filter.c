/* The packets an α plan asks for (alpha.h): which events its sensors would record, given
 * the entity flags its rules and triggers set, in time order. The same decisions the
 * subject's runtime makes (docs/control.md), made again on the trace: on a live trace they
 * drop what a shared entity flag let through; on a full recording they replay the plan. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "live/alpha.h"
#include "relations/columns.h"
#include "trace/source.h"

/* The fields the filter reads, found by name once per event class through the event
 * source (trace/source.h) and then read by slot: these, then the α's flag and trigger
 * fields (vga_filter.names). */
enum { F_SINCE, F_KIND, F_ID, F_GEN, F_NAME, F_FIXED };
static const char *const fixed_names[F_FIXED] = {"vg_since", "kind", "id", "gen", "name"};

/* What one event class means to the plan. */
struct ftype {
	const struct vgt_event_type *type;
	bool source;     /* vg.*: entity sources, always kept */
	size_t *alphas;  /* the α that enable it */
	int *flag_field; /* per α: the slot of its flag's entity, or -1 */
	size_t nalphas;
	size_t *targets;   /* triggers: the α enabled by this class's events */
	int *target_field; /* per trigger: the slot naming the entity */
	size_t ntargets;
	/* vg.entity.create / .name: slots */
	bool naming;
	int f_kind, f_id, f_gen, f_name;
	int f_since; /* a sampled interval's end: its vg_since slot, or -1 */
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
	int64_t last_since; /* of the last end kept for a sampled α */
	const char **names; /* the field names it reads: F_*, then the α's */
	size_t nnames;
	int *flag_name;    /* per α: its flag's field in names, or -1 (on the sensor) */
	int *trigger_name; /* per α: u's field naming the entity in names (triggers), or -1 */
	struct ftype **by_class; /* what each event class means, by class_id, met so far */
	size_t nclasses;
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

/* The index of the field called `name` in f->names (added when new); -1 for NULL. */
static int name_index(struct vga_filter *f, const char *name)
{
	if (!name)
		return -1;
	size_t i = 0;
	while (i < f->nnames && strcmp(f->names[i], name))
		i++;
	if (i == f->nnames)
		f->names[f->nnames++] = name;
	return (int)i;
}

struct vga_filter *vga_filter_new(const struct vga_plan *p)
{
	struct vga_filter *f = vgq_xcalloc(1, sizeof *f);
	f->plan = p;
	f->tick = 1000000000;
	f->origin_first = true;
	f->last_since = INT64_MIN;
	f->per_alpha = vgq_xcalloc(p->n + 1, sizeof *f->per_alpha);
	f->names = vgq_xcalloc(F_FIXED + 2 * p->n, sizeof *f->names);
	for (size_t k = 0; k < F_FIXED; k++)
		f->names[f->nnames++] = fixed_names[k];
	f->flag_name = vgq_xcalloc(p->n + 1, sizeof *f->flag_name);
	f->trigger_name = vgq_xcalloc(p->n + 1, sizeof *f->trigger_name);
	for (size_t i = 0; i < p->n; i++) {
		const struct vga_alpha *a = &p->alphas[i];
		f->flag_name[i] = name_index(f, a->spec->flag_field);
		f->trigger_name[i] =
		    a->source == VGA_SRC_TRIGGER ? name_index(f, a->trigger_by) : -1;
	}
	return f;
}

static void ftype_free(struct ftype *t)
{
	if (!t)
		return;
	free(t->alphas);
	free(t->flag_field);
	free(t->targets);
	free(t->target_field);
	free(t);
}

void vga_filter_free(struct vga_filter *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nclasses; i++)
		ftype_free(f->by_class[i]);
	free(f->by_class);
	free(f->names);
	free(f->flag_name);
	free(f->trigger_name);
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
	int *slot = vgq_xcalloc(f->nnames, sizeof *slot);
	vgt_class_slots(et, f->names, f->nnames, slot);
	t->type = et;
	t->f_since = et->kind == VGT_KIND_END ? slot[F_SINCE] : -1;
	if (!strncmp(et->name, "vg.", 3)) {
		t->source = true;
		t->naming =
		    !strcmp(et->name, "vg.entity.create") || !strcmp(et->name, "vg.entity.name");
		t->f_kind = slot[F_KIND];
		t->f_id = slot[F_ID];
		t->f_gen = slot[F_GEN];
		t->f_name = slot[F_NAME];
		if (t->f_kind < 0 || t->f_id < 0 || t->f_gen < 0 || t->f_name < 0)
			t->naming = false;
		free(slot);
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
			    f->flag_name[i] >= 0 ? slot[f->flag_name[i]] : -1;
			t->nalphas++;
		}
		if (a->source == VGA_SRC_TRIGGER &&
		    !strcmp(p->alphas[a->trigger].sensors[0]->event, et->name)) {
			int field = f->trigger_name[i] >= 0 ? slot[f->trigger_name[i]] : -1;
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
	free(slot);
	return t;
}

/* What the event's class means to the plan, described on its first event (a followed
 * trace may number new classes as it grows). */
static struct ftype *type_of(struct vga_filter *f, const struct vgt_event_type *et)
{
	size_t c = et->class_id;
	if (c >= f->nclasses) {
		size_t n = f->nclasses ? f->nclasses : 64;
		while (n <= c)
			n *= 2;
		f->by_class = vgq_xrealloc(f->by_class, n, sizeof *f->by_class);
		memset(f->by_class + f->nclasses, 0, (n - f->nclasses) * sizeof *f->by_class);
		f->nclasses = n;
	}
	if (!f->by_class[c] || f->by_class[c]->type != et) {
		ftype_free(f->by_class[c]);
		f->by_class[c] = describe(f, et);
	}
	return f->by_class[c];
}

/* vg.entity.create / .name: an entity getting the name a NAMED α waits for is enabled
 * for the rest of its lifetime (the subject's rule does the same). */
static void observe_name(struct vga_filter *f, const struct ftype *t, const struct vgt_event *ev)
{
	const char *kind = vgt_value_string(&ev->values[t->f_kind]);
	const char *name = vgt_value_string(&ev->values[t->f_name]);
	if (!kind || !name)
		return;
	for (size_t i = 0; i < f->plan->n; i++) {
		const struct vga_alpha *a = &f->plan->alphas[i];
		const char *k = a->spec->flag_kind ? a->spec->flag_kind : "thread";
		if (a->source != VGA_SRC_NAMED || strcasecmp(k, kind) || strcmp(a->name, name))
			continue;
		struct fkey key = {ev->image, vgt_slot_u64(ev, t->f_id),
		                   (uint32_t)vgt_slot_u64(ev, t->f_gen), (uint32_t)i + 1};
		key_add(f, &key);
	}
}

static bool wants(struct vga_filter *f, const struct ftype *t, size_t k, const struct vgt_event *ev)
{
	const struct vga_alpha *a = &f->plan->alphas[t->alphas[k]];
	if (a->source == VGA_SRC_SENSOR || a->source == VGA_SRC_ALL)
		return true;
	struct fkey key = {ev->image, 0, 0, (uint32_t)t->alphas[k] + 1};
	if (!vgt_slot_ref(ev, t->flag_field[k], &key.id, &key.gen))
		return false;
	return key_has(f, &key);
}

/* The key of the flag's entity (or the thread) of α k: per entity state of O6 and once. */
static struct fkey entity_key(const struct ftype *t, size_t k, const struct vgt_event *ev)
{
	struct fkey key = {ev->image, ((uint64_t)ev->tid << 1) | 1, ev->thread_gen,
	                   (uint32_t)t->alphas[k] + 1};
	uint64_t id;
	uint32_t gen;
	if (vgt_slot_ref(ev, t->flag_field[k], &id, &gen)) {
		key.id = id << 1;
		key.gen = gen;
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
	uint64_t since_clock = vgt_slot_u64(ev, t->f_since);
	if (since_clock)
		since = ev->ts - (int64_t)(ev->clock_value - since_clock);
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
		struct fkey key = {ev->image, 0, 0, (uint32_t)t->targets[k] + 1};
		if (vgt_slot_ref(ev, t->target_field[k], &key.id, &key.gen))
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
