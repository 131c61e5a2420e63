/* The monitor's rules (docs/control.md) and the table of live entities they act on.
 *
 * Everything here but vg_sensor_fired runs under vg__rt.lock: on the control thread
 * (commands) or in vg_sensor_register / vg_entity_* (hooks). Rules with the same key are
 * merged by summing their deltas, so a monitor toggling a sensor a million times keeps
 * one rule. A sensor's trigger deltas live in a per-sensor array of atomics, one per
 * entity field, allocated once and never freed: vg_sensor_fired reads it without a lock
 * and the control thread changes it with atomic adds (no publication of new arrays, so
 * nothing has to wait for readers before being freed). */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#define MAX_RULES 4096 /* distinct keys of each kind of rule */

int vg__control_on;

/* Every rule belongs to one monitor (`owner`, docs/control.md "Several monitors"): the
 * same key from two monitors is two rules, and a monitor's rules leave with it. */
struct sensor_rule {
	char *glob;
	int32_t delta; /* net, over every command with this glob */
	int owner;
};
struct entity_rule {
	char *kind, *name; /* name NULL: every entity of the kind */
	int32_t delta;
	int owner;
};
struct trigger_rule {
	char *sensor, *field;
	int32_t delta;
	int owner;
};
static struct sensor_rule *srules;
static struct entity_rule *erules;
static struct trigger_rule *trules;
static size_t nsrules, nerules, ntrules;

/* A live entity: what the monitor can name it by, and what each rule gave it. */
struct applied {
	uint32_t rule; /* index into erules, or ONE_OFF(owner): its `entity` commands */
	int32_t amount;
};
#define ONE_OFF(owner) (0xffff0000u | (uint32_t)(owner))
struct live {
	vg_entity *e;
	const char *kind; /* the entity's own kind string */
	uint64_t id;
	uint32_t gen;
	char *name; /* current name, or NULL */
	struct applied *ap;
	uint32_t nap, capap;
};
/* Dense array (iterated by `entities`) and an open-addressing index over it keyed by
 * (kind, id, gen): slot value = position + 1, 0 = empty. */
static struct live *lv;
static size_t nlv, caplv;
static uint32_t *ix;
static size_t nix; /* power of two */

/* ---- helpers ---- */

static int clamp_ok(int64_t v)
{
	return v >= -(1 << 24) && v <= (1 << 24);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static size_t key_hash(const char *kind, uint64_t id, uint32_t gen)
{
	uint64_t h = 1469598103934665603ull;
	for (const unsigned char *p = (const unsigned char *)kind; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	h ^= id * 0x9E3779B97F4A7C15ull;
	h ^= (uint64_t)gen << 17;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (size_t)h;
}

static int key_eq(const struct live *l, const char *kind, uint64_t id, uint32_t gen)
{
	return l->id == id && l->gen == gen && !strcmp(l->kind, kind);
}

/* Slot of (kind, id, gen) in the index, or of the empty slot where it would go. */
static size_t find_slot(const char *kind, uint64_t id, uint32_t gen)
{
	size_t j = key_hash(kind, id, gen) & (nix - 1);
	while (ix[j] && !key_eq(&lv[ix[j] - 1], kind, id, gen))
		j = (j + 1) & (nix - 1);
	return j;
}

static int rebuild_index(size_t n)
{
	uint32_t *x = calloc(n, sizeof *x);
	if (!x)
		return -1;
	free(ix);
	ix = x;
	nix = n;
	for (size_t i = 0; i < nlv; i++)
		ix[find_slot(lv[i].kind, lv[i].id, lv[i].gen)] = (uint32_t)(i + 1);
	return 0;
}

static struct live *live_find(const char *kind, uint64_t id, uint32_t gen)
{
	if (!nix)
		return NULL;
	size_t j = find_slot(kind, id, gen);
	return ix[j] ? &lv[ix[j] - 1] : NULL;
}

/* Removes index slot j, shifting back the entries of its probe run. */
static void index_delete(size_t j)
{
	ix[j] = 0;
	for (size_t k = (j + 1) & (nix - 1); ix[k]; k = (k + 1) & (nix - 1)) {
		uint32_t v = ix[k];
		struct live *l = &lv[v - 1];
		ix[k] = 0;
		ix[find_slot(l->kind, l->id, l->gen)] = v;
	}
}

static void live_free(struct live *l)
{
	free(l->name);
	free(l->ap);
}

static int32_t *applied_of(struct live *l, uint32_t rule)
{
	for (uint32_t i = 0; i < l->nap; i++)
		if (l->ap[i].rule == rule)
			return &l->ap[i].amount;
	if (l->nap == l->capap) {
		uint32_t cap = l->capap ? l->capap * 2 : 4;
		struct applied *p = realloc(l->ap, cap * sizeof *p);
		if (!p)
			return NULL;
		l->ap = p;
		l->capap = cap;
	}
	l->ap[l->nap] = (struct applied){rule, 0};
	return &l->ap[l->nap++].amount;
}

static int erule_matches(const struct entity_rule *r, const struct live *l)
{
	return !strcmp(r->kind, l->kind) && (!r->name || (l->name && !strcmp(r->name, l->name)));
}

/* Brings the share of rule i in the entity's flag to the rule's delta (used when an
 * entity starts matching: at creation, or renamed into the rule's name). */
static void sync_rule(struct live *l, uint32_t i)
{
	int32_t *a = applied_of(l, i);
	if (!a || *a == erules[i].delta)
		return;
	atomic_fetch_add(&l->e->flag, erules[i].delta - *a);
	*a = erules[i].delta;
}

/* ---- the live-entity table (hooks from entity.c) ---- */

void vg__control_entity_live_locked(vg_entity *e, const char *name)
{
	struct live *l = live_find(e->kind, e->id, e->gen);
	if (l) { /* created again without a reclaim: the new object replaces the old */
		live_free(l);
	} else {
		if ((nlv + 1) * 2 > nix && rebuild_index(nix ? nix * 2 : 256) < 0)
			return;
		if (nlv == caplv) {
			size_t cap = caplv ? caplv * 2 : 256;
			struct live *p = realloc(lv, cap * sizeof *p);
			if (!p)
				return;
			lv = p;
			caplv = cap;
		}
		l = &lv[nlv++];
		ix[find_slot(e->kind, e->id, e->gen)] = (uint32_t)nlv;
	}
	*l = (struct live){.e = e, .kind = e->kind, .id = e->id, .gen = e->gen};
	l->name = dup_or_null(name);
	for (uint32_t i = 0; i < nerules; i++)
		if (erules[i].delta && erule_matches(&erules[i], l))
			sync_rule(l, i);
}

void vg__control_entity_renamed_locked(vg_entity *e, const char *name)
{
	struct live *l = live_find(e->kind, e->id, e->gen);
	if (!l)
		return;
	free(l->name);
	l->name = dup_or_null(name);
	for (uint32_t i = 0; i < nerules; i++)
		if (erules[i].name && erule_matches(&erules[i], l))
			sync_rule(l, i);
}

void vg__control_entity_dead_locked(vg_entity *e)
{
	if (!nix)
		return;
	size_t j = find_slot(e->kind, e->id, e->gen);
	if (!ix[j])
		return;
	size_t pos = ix[j] - 1;
	live_free(&lv[pos]);
	index_delete(j);
	if (pos != nlv - 1) { /* the last entry takes the freed place */
		lv[pos] = lv[nlv - 1];
		ix[find_slot(lv[pos].kind, lv[pos].id, lv[pos].gen)] = (uint32_t)(pos + 1);
	}
	nlv--;
}

/* ---- sensors ---- */

static void sensor_add(vg_sensor *s, struct vg_sensor_ctl *c, int32_t delta)
{
	atomic_fetch_add(&s->enabled, delta);
	c->raised += delta;
}

/* Index among the entity fields of field `name`, or -1. */
static int entity_field(const vg_type_desc *d, const char *name)
{
	int k = 0;
	for (unsigned i = 0; i < d->nfields; i++) {
		if (d->fields[i].type != VG_ENTITY)
			continue;
		if (!strcmp(d->fields[i].name, name))
			return k;
		k++;
	}
	return -1;
}

static void update_react(vg_sensor *s, struct vg_sensor_ctl *c)
{
	_Atomic int32_t *t = atomic_load(&c->trig);
	uint32_t any = 0;
	for (unsigned k = 0; t && k < c->nent; k++)
		any |= atomic_load(&t[k]) != 0;
	atomic_store_explicit(&s->react, any, memory_order_relaxed);
}

static int trigger_add(vg_sensor *s, struct vg_sensor_ctl *c, int k, int32_t delta)
{
	_Atomic int32_t *t = atomic_load(&c->trig);
	if (!t) {
		t = calloc(c->nent, sizeof *t);
		if (!t)
			return -1;
		atomic_store_explicit(&c->trig, t, memory_order_release);
	}
	atomic_fetch_add(&t[k], delta);
	update_react(s, c);
	return 0;
}

void vg__control_sensor_registered_locked(vg_sensor *s, const vg_type_desc *d)
{
	struct vg_sensor_ctl *c = vg__sensor_ctl(s);
	if (!c)
		return;
	vg__control_probes_registered_locked(s); /* first: it reads the configured value */
	for (size_t i = 0; i < nsrules; i++)
		if (srules[i].delta && fnmatch(srules[i].glob, d->name, 0) == 0)
			sensor_add(s, c, srules[i].delta);
	vg__control_sample_registered_locked(s, d);
	for (size_t i = 0; i < ntrules; i++) {
		if (!trules[i].delta || strcmp(trules[i].sensor, d->name))
			continue;
		int k = entity_field(d, trules[i].field);
		if (k >= 0) /* a field it lacks: the rule does nothing for it */
			trigger_add(s, c, k, trules[i].delta);
	}
}

/* Applies the trigger rules of a sensor that recorded. No lock, no allocation: the
 * array is published before react is set and never freed. The entities are the
 * program's (passed const to the sensor), but their flag belongs to the monitor:
 * changing it through a cast is what the rule asks for. */
void vg_sensor_fired(vg_sensor *s, const vg_entity *const *ents, unsigned n)
{
	struct vg_sensor_ctl *c = vg__sensor_ctl(s);
	if (!c || !ents)
		return;
	_Atomic int32_t *t = atomic_load_explicit(&c->trig, memory_order_acquire);
	if (!t)
		return;
	if (n > c->nent)
		n = c->nent;
	for (unsigned k = 0; k < n; k++) {
		int32_t d = atomic_load_explicit(&t[k], memory_order_relaxed);
		if (d && ents[k])
			atomic_fetch_add_explicit(&((vg_entity *)ents[k])->flag, d,
			                          memory_order_relaxed);
	}
}

/* ---- commands (control thread) ---- */

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errsize, __VA_ARGS__);                                               \
		pthread_mutex_unlock(&vg__rt.lock);                                                \
		return -1;                                                                         \
	} while (0)

/* Grows a rule array by one; NULL when full. */
static void *grow_rules(void **arr, size_t n, size_t size)
{
	if (n >= MAX_RULES)
		return NULL;
	if ((n & (n - 1)) == 0) { /* 0, 1, 2, 4, ...: double */
		void *p = realloc(*arr, (n ? 2 * n : 1) * size);
		if (!p)
			return NULL;
		*arr = p;
	}
	return (char *)*arr + n * size;
}

int vg__control_sensor_rule(int owner, int32_t delta, const char *glob, long *count, char *err,
                            size_t errsize)
{
	pthread_mutex_lock(&vg__rt.lock);
	size_t r = 0;
	while (r < nsrules && (srules[r].owner != owner || strcmp(srules[r].glob, glob)))
		r++;
	if (r == nsrules) {
		struct sensor_rule *n = grow_rules((void **)&srules, nsrules, sizeof *srules);
		if (!n || !(n->glob = strdup(glob)))
			FAIL("too many sensor rules");
		n->delta = 0;
		n->owner = owner;
		nsrules++;
	}
	if (!clamp_ok((int64_t)srules[r].delta + delta))
		FAIL("counter out of range");
	srules[r].delta += delta;
	long matched = 0;
	vg_sensor *s;
	for (size_t i = 0; (s = vg__registry_at(i)); i++) {
		struct vg_sensor_ctl *c = vg__sensor_ctl(s);
		if (c && fnmatch(glob, s->name, 0) == 0) {
			sensor_add(s, c, delta);
			matched++;
		}
	}
	pthread_mutex_unlock(&vg__rt.lock);
	*count = matched;
	return 0;
}

int vg__control_entities_rule(int owner, int32_t delta, const char *kind, const char *name,
                              long *count, char *err, size_t errsize)
{
	pthread_mutex_lock(&vg__rt.lock);
	size_t r = 0;
	while (r < nerules && !(erules[r].owner == owner && !strcmp(erules[r].kind, kind) &&
	                        (erules[r].name && name ? !strcmp(erules[r].name, name)
	                                                : !erules[r].name && !name)))
		r++;
	if (r == nerules) {
		struct entity_rule *n = grow_rules((void **)&erules, nerules, sizeof *erules);
		if (!n)
			FAIL("too many entity rules");
		n->kind = strdup(kind);
		n->name = dup_or_null(name);
		n->delta = 0;
		n->owner = owner;
		if (!n->kind || (name && !n->name)) {
			free(n->kind);
			free(n->name);
			FAIL("out of memory");
		}
		nerules++;
	}
	if (!clamp_ok((int64_t)erules[r].delta + delta))
		FAIL("counter out of range");
	erules[r].delta += delta;
	long matched = 0;
	for (size_t i = 0; i < nlv; i++) {
		if (!erule_matches(&erules[r], &lv[i]))
			continue;
		int32_t *a = applied_of(&lv[i], (uint32_t)r);
		if (!a)
			continue;
		atomic_fetch_add(&lv[i].e->flag, delta);
		*a += delta;
		matched++;
	}
	pthread_mutex_unlock(&vg__rt.lock);
	*count = matched;
	return 0;
}

int vg__control_entity_one(int owner, int32_t delta, const char *kind, uint64_t id, uint32_t gen,
                           char *err, size_t errsize)
{
	pthread_mutex_lock(&vg__rt.lock);
	struct live *l = live_find(kind, id, gen);
	if (!l)
		FAIL("not live");
	int32_t *a = applied_of(l, ONE_OFF(owner)); /* so that it leaves with its monitor */
	if (!a)
		FAIL("out of memory");
	*a += delta;
	atomic_fetch_add(&l->e->flag, delta);
	pthread_mutex_unlock(&vg__rt.lock);
	return 0;
}

int vg__control_trigger_rule(int owner, int32_t delta, const char *sensor, const char *field,
                             long *count, char *err, size_t errsize)
{
	pthread_mutex_lock(&vg__rt.lock);
	vg_sensor *s = NULL, *x;
	for (size_t i = 0; (x = vg__registry_at(i)); i++)
		if (!strcmp(x->name, sensor))
			s = x;
	struct vg_sensor_ctl *c = s ? vg__sensor_ctl(s) : NULL;
	int k = -1;
	if (c) {
		k = entity_field(vg__sensor_desc(s), field);
		if (k < 0)
			FAIL("sensor %s has no entity field %s", sensor, field);
	}
	size_t r = 0;
	while (r < ntrules && (trules[r].owner != owner || strcmp(trules[r].sensor, sensor) ||
	                       strcmp(trules[r].field, field)))
		r++;
	if (r == ntrules) {
		struct trigger_rule *n = grow_rules((void **)&trules, ntrules, sizeof *trules);
		if (!n)
			FAIL("too many trigger rules");
		n->sensor = strdup(sensor);
		n->field = strdup(field);
		n->delta = 0;
		n->owner = owner;
		if (!n->sensor || !n->field) {
			free(n->sensor);
			free(n->field);
			FAIL("out of memory");
		}
		ntrules++;
	}
	if (!clamp_ok((int64_t)trules[r].delta + delta))
		FAIL("counter out of range");
	if (c && trigger_add(s, c, k, delta) < 0)
		FAIL("out of memory");
	trules[r].delta += delta;
	pthread_mutex_unlock(&vg__rt.lock);
	*count = c ? 1 : 0;
	return 0;
}

/* ---- the monitor is gone (or a fork child starts afresh) ---- */

void vg__control_undo(int builtins_off, int settle)
{
	pthread_mutex_lock(&vg__rt.lock);
	vg_sensor *s;
	for (size_t i = 0; (s = vg__registry_at(i)); i++) {
		struct vg_sensor_ctl *c = vg__sensor_ctl(s);
		if (!c)
			continue;
		if (c->raised)
			atomic_fetch_sub(&s->enabled, c->raised);
		c->raised = 0;
		_Atomic int32_t *t = atomic_load(&c->trig);
		for (unsigned k = 0; t && k < c->nent; k++)
			atomic_store(&t[k], 0);
		atomic_store(&s->react, 0);
	}
	pthread_mutex_unlock(&vg__rt.lock);
	/* A recording thread may be inside vg_sensor_fired with a trigger delta it read
	 * before the reset above; let it finish before the flags are reset below. */
	if (settle)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	pthread_mutex_lock(&vg__rt.lock);
	for (int b = 0; b < VG_B_COUNT; b++) {
		vg_sensor *bs = vg__builtin(b);
		/* With the monitor gone only the process's end is still written: its begin
		 * is in the trace, and a trace with both ends reads as complete. */
		int keep = builtins_off ? b == VG_B_PROCESS_END : 1;
		int on = keep && vg__rt.recording &&
		         vg__sensor_pattern_enabled(vg__rt.cfg.sensors, bs->name);
		/* A probe switch (vigil probes) is not the monitor's: it stays. */
		atomic_store(&bs->enabled, on + vg__control_probe_share_locked(bs));
	}
	vg__control_sample_undo_locked();
	for (size_t i = 0; i < nsrules; i++)
		free(srules[i].glob);
	for (size_t i = 0; i < nerules; i++) {
		free(erules[i].kind);
		free(erules[i].name);
	}
	for (size_t i = 0; i < ntrules; i++) {
		free(trules[i].sensor);
		free(trules[i].field);
	}
	free(srules);
	free(erules);
	free(trules);
	srules = NULL;
	erules = NULL;
	trules = NULL;
	nsrules = nerules = ntrules = 0;
	/* Only the configuration and the monitor set entity flags: what rules, `entity`
	 * commands and triggers added goes, whoever added it. */
	for (size_t i = 0; i < nlv; i++) {
		lv[i].nap = 0;
		atomic_store(&lv[i].e->flag, vg__rt.cfg.entity_default);
	}
	pthread_mutex_unlock(&vg__rt.lock);
}

/* ---- one monitor leaves while others stay ---- */

/* The registered sensor named `name`, or NULL. */
static vg_sensor *sensor_named(const char *name)
{
	vg_sensor *s, *found = NULL;
	for (size_t i = 0; (s = vg__registry_at(i)); i++)
		if (!strcmp(s->name, name))
			found = s;
	return found;
}

static void undo_sensor_rules_locked(int owner)
{
	size_t keep = 0;
	for (size_t r = 0; r < nsrules; r++) {
		if (srules[r].owner != owner) {
			srules[keep++] = srules[r];
			continue;
		}
		/* Every registered sensor the glob matches carries exactly the rule's delta. */
		vg_sensor *s;
		for (size_t i = 0; srules[r].delta && (s = vg__registry_at(i)); i++) {
			struct vg_sensor_ctl *c = vg__sensor_ctl(s);
			if (c && fnmatch(srules[r].glob, s->name, 0) == 0)
				sensor_add(s, c, -srules[r].delta);
		}
		free(srules[r].glob);
	}
	nsrules = keep;
}

static void undo_trigger_rules_locked(int owner)
{
	size_t keep = 0;
	for (size_t r = 0; r < ntrules; r++) {
		if (trules[r].owner != owner) {
			trules[keep++] = trules[r];
			continue;
		}
		vg_sensor *s = trules[r].delta ? sensor_named(trules[r].sensor) : NULL;
		struct vg_sensor_ctl *c = s ? vg__sensor_ctl(s) : NULL;
		int k = c ? entity_field(vg__sensor_desc(s), trules[r].field) : -1;
		if (k >= 0)
			trigger_add(s, c, k, -trules[r].delta);
		free(trules[r].sensor);
		free(trules[r].field);
	}
	ntrules = keep;
}

/* Takes the owner's shares out of every live entity's flag, forgets its entity rules,
 * and renumbers the shares of the rules that stay. */
static void undo_entity_rules_locked(int owner)
{
	uint32_t *moved = malloc((nerules ? nerules : 1) * sizeof *moved);
	if (!moved) /* its rules stay until the last monitor leaves: only more is recorded */
		return;
	uint32_t keep = 0;
	for (size_t r = 0; r < nerules; r++) {
		if (erules[r].owner == owner) {
			moved[r] = UINT32_MAX;
			free(erules[r].kind);
			free(erules[r].name);
			continue;
		}
		moved[r] = keep;
		erules[keep++] = erules[r];
	}
	for (size_t i = 0; i < nlv; i++) {
		struct live *l = &lv[i];
		uint32_t kept = 0;
		for (uint32_t j = 0; j < l->nap; j++) {
			struct applied a = l->ap[j];
			int mine = a.rule == ONE_OFF(owner) ||
			           (a.rule < nerules && moved[a.rule] == UINT32_MAX);
			if (mine) {
				atomic_fetch_sub(&l->e->flag, a.amount);
				continue;
			}
			if (a.rule < nerules)
				a.rule = moved[a.rule];
			l->ap[kept++] = a;
		}
		l->nap = kept;
	}
	nerules = keep;
	free(moved);
}

void vg__control_undo_owner(int owner)
{
	if (owner == 0 || vg__control_monitors_attached() <= 1) {
		vg__control_undo(0, 1); /* the only monitor: everything, as when it leaves */
		return;
	}
	pthread_mutex_lock(&vg__rt.lock);
	undo_trigger_rules_locked(owner);
	undo_sensor_rules_locked(owner);
	vg__control_sample_undo_owner_locked(owner);
	undo_entity_rules_locked(owner);
	pthread_mutex_unlock(&vg__rt.lock);
}
