/* Probes (docs/control.md "Probes", docs/protocol.md "Probes"): `vigil probes` switches
 * sensors on and off by id, and leaves patterns behind for sensors registered later.
 *
 * A sensor's probe state replaces what the configuration (VIGIL_SENSORS) decided for it:
 * `enabled` carries `probe - base` on top of the configured value, where base is that
 * configured value (0 or 1). Monitor rules (`sensor`, `sample`) add their own share
 * (`raised`) on top, so `vigil watch` and `vigil probes` compose. The probe share is not
 * the attached monitor's: detaching, a monitor gone and `reset` leave it (a one-shot
 * `vigil probes --pid` must outlive its connection); only `pattern reset` clears it.
 *
 * String matching happens here only when a sensor registers (each remembered pattern,
 * once), never on a probe path and never on `probe`/`list`: the monitor matches the
 * patterns against the table it reads with `list` and pushes ids. Everything runs under
 * vg__rt.lock. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "wire/probe_pattern.h"

#define MAX_PATTERNS 4096

static struct vgw_probe_rule *pats;
static size_t npats, cappats;
static uint64_t nmatches; /* pattern evaluations done (the tests count them) */

/* Gives the sensor its probe bookkeeping the first time it is needed: base is what the
 * configuration (and the program's own vg_sensor_enable calls) put in `enabled`. */
static void probe_init(vg_sensor *s, struct vg_sensor_ctl *c)
{
	if (c->probe_set)
		return;
	int32_t configured = atomic_load(&s->enabled) - c->raised;
	c->probe_base = configured > 0;
	c->probe = c->probe_base;
	c->probe_set = 1;
}

/* Sets the probe state; 1 if it changed. A sensor the probe switched on (its
 * configuration had it off) records on every entity: its enable flag may sit on an
 * entity, and entity flags are raised only for the entities a monitor's query names
 * (`vigil record --listen`, `vigil watch` start them off). So `vigil probes enable`
 * makes it record as a sensor flagged on itself would, while the sensors a `vigil
 * watch` raises keep to the entities it chose. */
static int probe_set(vg_sensor *s, struct vg_sensor_ctl *c, int on)
{
	probe_init(s, c);
	if (c->probe == on)
		return 0;
	int every = on && !c->probe_base;
	if (every) /* before the counter: the first event it lets through sees it */
		atomic_store(&s->every_entity, 1);
	atomic_fetch_add(&s->enabled, on ? 1 : -1);
	if (!every)
		atomic_store(&s->every_entity, 0);
	c->probe = (int8_t)on;
	return 1;
}

int32_t vg__control_probe_share_locked(vg_sensor *s)
{
	struct vg_sensor_ctl *c = vg__sensor_ctl(s);
	return c && c->probe_set ? c->probe - c->probe_base : 0;
}

static int pattern_matches(struct vgw_probe_rule *p, const char *name)
{
	nmatches++;
	return vgw_probe_pattern_match(&p->p, name);
}

void vg__control_probes_registered_locked(vg_sensor *s)
{
	struct vg_sensor_ctl *c = vg__sensor_ctl(s);
	if (!c)
		return;
	probe_init(s, c); /* `enabled` is still the configured value here */
	int state = -1;   /* in order: the last pattern that matches decides */
	for (size_t i = 0; i < npats; i++)
		if (pattern_matches(&pats[i], s->name))
			state = pats[i].enable;
	if (state >= 0)
		probe_set(s, c, state);
}

int vg__control_list(uint64_t from, char *ans, size_t anssize, size_t maxline)
{
	if (maxline + 2 > anssize)
		maxline = anssize - 2;
	pthread_mutex_lock(&vg__rt.lock);
	size_t total = vg__registry_count();
	int n = snprintf(ans, anssize, "ok %" PRIu64 " %zu", vg_now(), total);
	size_t len = (size_t)n;
	vg_sensor *s;
	for (uint64_t i = from; i < total && (s = vg__registry_at((size_t)i)); i++) {
		struct vg_sensor_ctl *c = vg__sensor_ctl(s);
		if (!c)
			continue;
		probe_init(s, c);
		char entry[256];
		int m = snprintf(entry, sizeof entry, " %" PRIu64 ":%s:%d", i, s->name, c->probe);
		if (m < 0 || (size_t)m >= sizeof entry || len + (size_t)m > maxline)
			break;
		memcpy(ans + len, entry, (size_t)m);
		len += (size_t)m;
	}
	pthread_mutex_unlock(&vg__rt.lock);
	ans[len++] = '\n';
	ans[len] = 0;
	return 0;
}

int vg__control_probe(uint64_t id, int on, long *count, char *err, size_t errsize)
{
	pthread_mutex_lock(&vg__rt.lock);
	vg_sensor *s = id < vg__registry_count() ? vg__registry_at((size_t)id) : NULL;
	struct vg_sensor_ctl *c = s ? vg__sensor_ctl(s) : NULL;
	if (!c) {
		pthread_mutex_unlock(&vg__rt.lock);
		snprintf(err, errsize, "probe: no sensor with id %" PRIu64 " (%zu registered)", id,
		         vg__registry_count());
		return -1;
	}
	*count = probe_set(s, c, on);
	pthread_mutex_unlock(&vg__rt.lock);
	return 0;
}

/* `pattern enable|disable PATTERN`: remembered for sensors registered later (the
 * monitor switches the registered ones by id). The same pattern again replaces the
 * earlier one and moves to the end: the latest word on it wins. count = patterns kept. */
static int pattern_add(int enable, const char *text, long *count, char *err, size_t errsize)
{
	struct vgw_probe_rule p = {.enable = enable};
	char why[300];
	if (vgw_probe_pattern_compile(&p.p, text, why, sizeof why) < 0) {
		snprintf(err, errsize, "pattern: %s", why);
		return -1;
	}
	pthread_mutex_lock(&vg__rt.lock);
	size_t i = 0;
	while (i < npats && strcmp(pats[i].p.text, text))
		i++;
	if (i < npats) { /* replaced: drop the old one, keep the order of the others */
		vgw_probe_pattern_free(&pats[i].p);
		memmove(&pats[i], &pats[i + 1], (npats - i - 1) * sizeof *pats);
		npats--;
	}
	if (npats == MAX_PATTERNS) {
		pthread_mutex_unlock(&vg__rt.lock);
		vgw_probe_pattern_free(&p.p);
		snprintf(err, errsize, "pattern: too many patterns (%d)", MAX_PATTERNS);
		return -1;
	}
	if (npats == cappats) {
		size_t cap = cappats ? cappats * 2 : 16;
		struct vgw_probe_rule *q = realloc(pats, cap * sizeof *q);
		if (!q) {
			pthread_mutex_unlock(&vg__rt.lock);
			vgw_probe_pattern_free(&p.p);
			snprintf(err, errsize, "out of memory");
			return -1;
		}
		pats = q;
		cappats = cap;
	}
	pats[npats++] = p;
	*count = (long)npats;
	pthread_mutex_unlock(&vg__rt.lock);
	return 0;
}

/* `pattern reset`: patterns forgotten, every sensor back to its configured state.
 * count = sensors switched back. */
static long probes_reset(void)
{
	pthread_mutex_lock(&vg__rt.lock);
	for (size_t i = 0; i < npats; i++)
		vgw_probe_pattern_free(&pats[i].p);
	npats = 0;
	long changed = 0;
	vg_sensor *s;
	for (size_t i = 0; (s = vg__registry_at(i)); i++) {
		struct vg_sensor_ctl *c = vg__sensor_ctl(s);
		if (c && c->probe_set)
			changed += probe_set(s, c, c->probe_base);
	}
	pthread_mutex_unlock(&vg__rt.lock);
	return changed;
}

long vg__control_probes_replace(struct vgw_probe_rule *rules, size_t n)
{
	pthread_mutex_lock(&vg__rt.lock);
	long changed = 0;
	vg_sensor *s;
	for (size_t i = 0; (s = vg__registry_at(i)); i++) {
		struct vg_sensor_ctl *c = vg__sensor_ctl(s);
		if (!c)
			continue;
		probe_init(s, c);
		int state = c->probe_base; /* in order: the last rule that matches decides */
		for (size_t k = 0; k < n; k++)
			if (pattern_matches(&rules[k], s->name))
				state = rules[k].enable;
		changed += probe_set(s, c, state);
	}
	for (size_t i = 0; i < npats; i++)
		vgw_probe_pattern_free(&pats[i].p);
	free(pats);
	pats = rules;
	npats = cappats = n;
	pthread_mutex_unlock(&vg__rt.lock);
	return changed;
}

int vg__control_pattern(const char *verb, const char *text, long *count, char *err, size_t errsize)
{
	if (!text && !strcmp(verb, "reset")) {
		*count = probes_reset();
		return 0;
	}
	if (!text && !strcmp(verb, "matches")) {
		pthread_mutex_lock(&vg__rt.lock);
		*count = (long)nmatches;
		pthread_mutex_unlock(&vg__rt.lock);
		return 0;
	}
	if (text && (!strcmp(verb, "enable") || !strcmp(verb, "disable")))
		return pattern_add(verb[0] == 'e', text, count, err, errsize);
	snprintf(err, errsize,
	         "usage: pattern enable|disable PATTERN, pattern reset, "
	         "pattern matches");
	return -1;
}
