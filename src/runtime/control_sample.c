/* Sampling requests (docs/control.md `sample`, docs/watch.md "Sampling").
 *
 * A monitor that asks for a sampled interval sensor only at the instants of a clock
 * (origin + k * period) sends `sample <delta> <glob> <origin> <period>`. Each sensor the
 * glob names must be a sampled interval sensor (begin or end) placed on an entity: its
 * enable counter gets the delta (like `sensor`) and, while the sensor's sampling count is
 * positive, its sample_origin/sample_period say when to sample. The generated sensor
 * then remembers when the entity's interval began instead of recording the begin, and
 * records the end (with that begin) only if a sampling instant fell inside.
 *
 * One sensor has one clock at a time: a rule with another origin or period is refused
 * while the first holds (the monitor combines its clocks). Runs under vg__rt.lock. */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_SAMPLE_RULES 4096

struct sample_rule {
	char *glob;
	uint64_t origin, period;
	int32_t delta; /* net */
	int owner;     /* the monitor whose plan it is */
};

/* Per sensor id: what the rules gave it. */
struct sampled {
	int32_t count;
	uint64_t origin, period;
};

static struct sample_rule *rules;
static size_t nrules, caprules;
static struct sampled *by_id;
static size_t nby_id;

static int qualifies(const vg_type_desc *d)
{
	return d && d->sampled && (d->kind == VG_KIND_BEGIN || d->kind == VG_KIND_END) &&
	       d->placement != VG_FLAG_SENSOR;
}

static struct sampled *state_of(const vg_sensor *s)
{
	if (s->id >= nby_id) {
		size_t n = (size_t)s->id + 64;
		struct sampled *p = realloc(by_id, n * sizeof *p);
		if (!p)
			return NULL;
		memset(p + nby_id, 0, (n - nby_id) * sizeof *p);
		by_id = p;
		nby_id = n;
	}
	return &by_id[s->id];
}

/* Would delta with this clock conflict with what the sensor has? */
static int conflicts(const vg_sensor *s, uint64_t origin, uint64_t period)
{
	const struct sampled *st = s->id < nby_id ? &by_id[s->id] : NULL;
	return st && st->count > 0 && (st->origin != origin || st->period != period);
}

static void apply(vg_sensor *s, struct vg_sensor_ctl *c, struct sampled *st, int32_t delta,
                  uint64_t origin, uint64_t period)
{
	atomic_fetch_add(&s->enabled, delta);
	c->raised += delta;
	st->count += delta;
	if (st->count > 0) {
		st->origin = origin;
		st->period = period;
		atomic_store_explicit(&s->sample_origin, origin, memory_order_relaxed);
		atomic_store_explicit(&s->sample_period, period, memory_order_release);
	} else {
		atomic_store_explicit(&s->sample_period, 0, memory_order_release);
	}
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errsize, __VA_ARGS__);                                               \
		pthread_mutex_unlock(&vg__rt.lock);                                                \
		return -1;                                                                         \
	} while (0)

int vg__control_sample_rule(int owner, int32_t delta, const char *glob, uint64_t origin,
                            uint64_t period, long *count, char *err, size_t errsize)
{
	if (!period) {
		snprintf(err, errsize, "sample: the period must be positive");
		return -1;
	}
	pthread_mutex_lock(&vg__rt.lock);
	vg_sensor *s;
	/* Check every sensor first: a refused rule changes nothing. */
	for (size_t i = 0; (s = vg__registry_at(i)); i++) {
		if (!vg__sensor_ctl(s) || fnmatch(glob, s->name, 0) != 0)
			continue;
		if (!qualifies(vg__sensor_desc(s)))
			FAIL("sample: %s is not a sampled interval sensor placed on an entity",
			     s->name);
		if (conflicts(s, origin, period)) /* two monitors' plans cannot share it */
			FAIL("sample: %s is sampled with another clock already (another plan's: "
			     "origin %" PRIu64 " period %" PRIu64 " ns); nothing changed",
			     s->name, by_id[s->id].origin, by_id[s->id].period);
		if (!state_of(s))
			FAIL("out of memory");
	}
	size_t r = 0;
	while (r < nrules && !(rules[r].owner == owner && rules[r].origin == origin &&
	                       rules[r].period == period && !strcmp(rules[r].glob, glob)))
		r++;
	if (r == nrules) {
		if (nrules == MAX_SAMPLE_RULES)
			FAIL("too many sample rules");
		if (nrules == caprules) {
			size_t cap = caprules ? 2 * caprules : 8;
			struct sample_rule *p = realloc(rules, cap * sizeof *p);
			if (!p)
				FAIL("out of memory");
			rules = p;
			caprules = cap;
		}
		if (!(rules[r].glob = strdup(glob)))
			FAIL("out of memory");
		rules[r].origin = origin;
		rules[r].period = period;
		rules[r].delta = 0;
		rules[r].owner = owner;
		nrules++;
	}
	int64_t net = (int64_t)rules[r].delta + delta;
	if (net < -(1 << 24) || net > (1 << 24))
		FAIL("counter out of range");
	rules[r].delta = (int32_t)net;
	long matched = 0;
	for (size_t i = 0; (s = vg__registry_at(i)); i++) {
		struct vg_sensor_ctl *c = vg__sensor_ctl(s);
		if (!c || fnmatch(glob, s->name, 0) != 0)
			continue;
		apply(s, c, state_of(s), delta, origin, period);
		matched++;
	}
	pthread_mutex_unlock(&vg__rt.lock);
	*count = matched;
	return 0;
}

void vg__control_sample_registered_locked(vg_sensor *s, const vg_type_desc *d)
{
	struct vg_sensor_ctl *c = vg__sensor_ctl(s);
	if (!c || !qualifies(d))
		return;
	for (size_t i = 0; i < nrules; i++) {
		const struct sample_rule *r = &rules[i];
		if (!r->delta || fnmatch(r->glob, d->name, 0) != 0 ||
		    conflicts(s, r->origin, r->period))
			continue;
		struct sampled *st = state_of(s);
		if (st)
			apply(s, c, st, r->delta, r->origin, r->period);
	}
}

/* The monitor is gone: no sensor is sampled any more (vg__control_undo lowers the
 * enable counters through the sensors' `raised`). */
void vg__control_sample_undo_locked(void)
{
	vg_sensor *s;
	for (size_t i = 0; (s = vg__registry_at(i)); i++)
		atomic_store_explicit(&s->sample_period, 0, memory_order_release);
	if (by_id)
		memset(by_id, 0, nby_id * sizeof *by_id);
	for (size_t i = 0; i < nrules; i++)
		free(rules[i].glob);
	nrules = 0;
}

/* One monitor leaves: its rules' deltas come off the sensors they were applied to (a
 * sensor with the rule's clock: one with another clock was refused it). */
void vg__control_sample_undo_owner_locked(int owner)
{
	size_t keep = 0;
	for (size_t r = 0; r < nrules; r++) {
		struct sample_rule *ru = &rules[r];
		if (ru->owner != owner) {
			rules[keep++] = *ru;
			continue;
		}
		vg_sensor *s;
		for (size_t i = 0; ru->delta && (s = vg__registry_at(i)); i++) {
			struct vg_sensor_ctl *c = vg__sensor_ctl(s);
			struct sampled *st = s->id < nby_id ? &by_id[s->id] : NULL;
			if (c && st && st->count > 0 && st->origin == ru->origin &&
			    st->period == ru->period && qualifies(vg__sensor_desc(s)) &&
			    fnmatch(ru->glob, s->name, 0) == 0)
				apply(s, c, st, -ru->delta, ru->origin, ru->period);
		}
		free(ru->glob);
	}
	nrules = keep;
}
