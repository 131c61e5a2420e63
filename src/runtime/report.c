/* Partial reporting: what is reported is narrowed by category, thread and sensor, and
 * suspended process-wide or per thread (docs/consistency.md). The filters only decide
 * what the rules allow to be left out; track.c keeps the rules. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

_Atomic uint32_t vg__report_off;
uint32_t vg__rep_epoch = 1; /* 0 would make a zeroed entity look current */
int vg__tracking;
int vg__listening;

/* Several listeners (listen.c): listener 0's filter is the one above; the others' are
 * set once from VIGIL_LISTENERS. Each listener's VG_CAT_* bits off, read unlocked. */
static _Atomic unsigned listen_off[VG_LISTENERS_MAX];
static unsigned listen_categories[VG_LISTENERS_MAX];
static int listen_suspended[VG_LISTENERS_MAX];
static char *listen_threads[VG_LISTENERS_MAX];
static char *listen_sensors[VG_LISTENERS_MAX];
static uint8_t sensor_listeners[VG_MAX_TYPES + 1]; /* by sensor id: who may report it */
static __thread uint32_t self_unlisted __attribute__((tls_model("initial-exec")));

static unsigned categories = VG_CAT_ENTITY | VG_CAT_ACTIVITY;
static int suspended; /* process-wide suspends, under vg__rt.lock */

/* Threads are filtered by name: each registers where its mute word and name live, so a
 * new filter reaches every thread at once. */
struct reported_thread {
	struct reported_thread *next;
	uint32_t *mute;
	uint32_t *unlisted; /* listeners 1.. whose thread filter leaves it out */
	char name[64];
};
static __thread struct reported_thread self_entry __attribute__((tls_model("initial-exec")));
static __thread int self_listed __attribute__((tls_model("initial-exec")));
static struct reported_thread *threads;
static char *thread_globs;

/* Sensor narrowing remembered for sensors registered later. */
struct sensor_rule {
	struct sensor_rule *next;
	char *globs;
	int on;
};
static struct sensor_rule *sensor_rules, **sensor_rules_tail = &sensor_rules; /* in order */

/* A mask naming one axis only (categories or kinds) means every value of the other. */
static unsigned both_axes(unsigned mask)
{
	unsigned cats = mask & (VG_CAT_ENTITY | VG_CAT_ACTIVITY), kinds = mask & VG_CAT_KINDS;
	if (!cats && !kinds)
		return 0;
	return (cats ? cats : VG_CAT_ENTITY | VG_CAT_ACTIVITY) | (kinds ? kinds : VG_CAT_KINDS);
}

static void publish_off_locked(void)
{
	const unsigned all = VG_CAT_ENTITY | VG_CAT_ACTIVITY | VG_CAT_KINDS;
	unsigned off = suspended ? all : (~categories & all);
	if (vg__listening) { /* every event takes the listeners' path */
		atomic_store_explicit(&listen_off[0], off, memory_order_relaxed);
		for (int i = 1; i < vg__listeners; i++)
			atomic_store_explicit(&listen_off[i],
			                      listen_suspended[i] ? all
			                                          : (~listen_categories[i] & all),
			                      memory_order_relaxed);
		off = ~0u;
	}
	atomic_store_explicit(&vg__report_off, off, memory_order_relaxed);
}

/* As VIGIL_SENSORS: the last match decides; no match is reported unless a positive glob
 * was given (then only what it names is). NULL: everything. */
static int globs_allow(const char *globs, const char *name)
{
	if (!globs)
		return 1;
	int m = vg__glob_list_match(globs, name);
	return m >= 0 ? m : !vg__glob_list_has_positive(globs);
}

static void set_filtered(struct reported_thread *t)
{
	uint32_t *mute = t->mute;
	int on = globs_allow(thread_globs, t->name);
	uint32_t out = 0;
	for (int i = 1; i < vg__listeners; i++)
		out |= globs_allow(listen_threads[i], t->name) ? 0 : 1u << i;
	__atomic_store_n(t->unlisted, out, __ATOMIC_RELAXED);
	uint32_t m = __atomic_load_n(mute, __ATOMIC_RELAXED);
	m = on ? (m & ~VG_MUTE_FILTERED) : (m | VG_MUTE_FILTERED);
	__atomic_store_n(mute, m, __ATOMIC_RELAXED);
}

void vg__report_init(void)
{
	pthread_mutex_lock(&vg__rt.lock);
	categories = both_axes(vg__rt.cfg.report_mask);
	suspended = vg__rt.cfg.report_suspended ? 1 : 0;
	thread_globs = vg__rt.cfg.report_threads;
	vg__tracking = vg__rt.recording && vg__rt.cfg.consistency;
	if (vg__rt.recording)
		vg__listen_init(); /* sets vg__listeners, then vg__report_listener for each */
	if (vg__listeners > 1) {
		vg__listening = 1;
		for (size_t i = 0; i < vg__registry_count(); i++)
			vg__report_sensor_registered_locked(vg__registry_at(i));
	}
	publish_off_locked();
	pthread_mutex_unlock(&vg__rt.lock);
}

void vg__report_listener(int i, unsigned mask, int suspended_at_start, char *threads, char *sensors)
{
	listen_categories[i] = both_axes(mask);
	listen_suspended[i] = suspended_at_start;
	listen_threads[i] = threads;
	listen_sensors[i] = sensors;
}

static unsigned listener_sensor_mask(const vg_sensor *s)
{
	unsigned m = 1; /* listener 0: VIGIL_SENSORS, vg_report_sensors decide */
	for (int i = 1; i < vg__listeners; i++)
		if (!listen_sensors[i] || vg__sensor_pattern_enabled(listen_sensors[i], s->name))
			m |= 1u << i;
	return m;
}

int vg__report_listener_change(int i, const char *what, const char *arg, unsigned mask, long *count)
{
	char *copy = arg ? strdup(arg) : NULL;
	if (arg && !copy)
		return -1;
	pthread_mutex_lock(&vg__rt.lock);
	if (!strcmp(what, "categories")) {
		listen_categories[i] = both_axes(mask);
	} else if (!strcmp(what, "suspend")) {
		listen_suspended[i]++;
	} else if (!strcmp(what, "resume")) {
		if (listen_suspended[i] > 0)
			listen_suspended[i]--;
	} else if (!strcmp(what, "threads")) {
		/* The old list is read by nobody else: every reader holds the lock. */
		free(listen_threads[i]);
		listen_threads[i] = copy;
		copy = NULL;
		for (struct reported_thread *t = threads; t; t = t->next)
			set_filtered(t);
	} else { /* sensors */
		free(listen_sensors[i]);
		listen_sensors[i] = copy;
		copy = NULL;
		long n = 0;
		for (size_t k = 0; k < vg__registry_count(); k++) {
			vg_sensor *s = vg__registry_at(k);
			sensor_listeners[s->id] = (uint8_t)listener_sensor_mask(s);
			n += sensor_listeners[s->id] >> i & 1u;
		}
		*count = n;
	}
	publish_off_locked();
	pthread_mutex_unlock(&vg__rt.lock);
	free(copy);
	return 0;
}

unsigned vg__listen_wanted(const vg_sensor *s)
{
	uint32_t mute = vg__tls.mute;
	unsigned m = 0;
	if (!(mute & VG_MUTE_SUSPENDED)) {
		unsigned out = self_unlisted | ((mute & VG_MUTE_FILTERED) ? 1u : 0u);
		unsigned may = sensor_listeners[s->id] & ~out;
		for (int i = 0; i < vg__listeners; i++)
			if ((may >> i & 1u) &&
			    !(atomic_load_explicit(&listen_off[i], memory_order_relaxed) &
			      s->catbit))
				m |= 1u << i;
	}
	vg__listen_decide(m);
	return m;
}

void vg__report_thread_named(const char *name)
{
	pthread_mutex_lock(&vg__rt.lock);
	struct reported_thread *t = &self_entry;
	snprintf(t->name, sizeof t->name, "%s", name ? name : "");
	t->mute = &vg__tls.mute;
	t->unlisted = &self_unlisted;
	if (!self_listed) {
		t->next = threads;
		threads = t;
		self_listed = 1;
	}
	set_filtered(t);
	pthread_mutex_unlock(&vg__rt.lock);
}

void vg__report_thread_exit(void)
{
	if (!self_listed)
		return;
	pthread_mutex_lock(&vg__rt.lock);
	for (struct reported_thread **p = &threads; *p; p = &(*p)->next)
		if (*p == &self_entry) {
			*p = self_entry.next;
			break;
		}
	self_listed = 0;
	pthread_mutex_unlock(&vg__rt.lock);
}

void vg_report_suspend(void)
{
	pthread_mutex_lock(&vg__rt.lock);
	suspended++;
	publish_off_locked();
	pthread_mutex_unlock(&vg__rt.lock);
}

void vg_report_resume(void)
{
	pthread_mutex_lock(&vg__rt.lock);
	if (suspended > 0)
		suspended--;
	publish_off_locked();
	pthread_mutex_unlock(&vg__rt.lock);
}

/* The calling thread's suspends nest; only its own code changes them. */
static __thread int thread_suspends __attribute__((tls_model("initial-exec")));

void vg_report_thread_suspend(void)
{
	if (thread_suspends++ == 0)
		__atomic_or_fetch(&vg__tls.mute, VG_MUTE_SUSPENDED, __ATOMIC_RELAXED);
}

void vg_report_thread_resume(void)
{
	if (thread_suspends > 0 && --thread_suspends == 0)
		__atomic_and_fetch(&vg__tls.mute, ~VG_MUTE_SUSPENDED, __ATOMIC_RELAXED);
}

void vg_report_categories(unsigned mask)
{
	pthread_mutex_lock(&vg__rt.lock);
	categories = both_axes(mask);
	publish_off_locked();
	pthread_mutex_unlock(&vg__rt.lock);
}

int vg_report_threads(const char *globs)
{
	char *copy = globs && *globs ? strdup(globs) : NULL;
	if (globs && *globs && !copy)
		return -1;
	pthread_mutex_lock(&vg__rt.lock);
	/* The old list may be read by nobody else: every reader holds the lock. */
	if (thread_globs != vg__rt.cfg.report_threads)
		free(thread_globs);
	thread_globs = copy;
	for (struct reported_thread *t = threads; t; t = t->next)
		set_filtered(t);
	pthread_mutex_unlock(&vg__rt.lock);
	return 0;
}

static int apply_rule_locked(vg_sensor *s, const struct sensor_rule *r)
{
	if (vg__glob_list_match(r->globs, s->name) != 1)
		return 0;
	if (r->on)
		vg_sensor_enable(s);
	else
		vg_sensor_disable(s);
	return 1;
}

long vg_report_sensors(const char *globs, int on)
{
	vg__ensure_init();
	if (!globs || !*globs || !vg__rt.recording)
		return 0;
	struct sensor_rule *r = calloc(1, sizeof *r);
	if (!r || !(r->globs = strdup(globs))) {
		free(r);
		return -1;
	}
	r->on = on != 0;
	long n = 0;
	pthread_mutex_lock(&vg__rt.lock);
	for (size_t i = 0; i < vg__registry_count(); i++)
		n += apply_rule_locked(vg__registry_at(i), r);
	*sensor_rules_tail = r;
	sensor_rules_tail = &r->next;
	pthread_mutex_unlock(&vg__rt.lock);
	return n;
}

void vg__report_sensor_registered_locked(vg_sensor *s)
{
	if (vg__listening)
		sensor_listeners[s->id] = (uint8_t)listener_sensor_mask(s);
	for (struct sensor_rule *r = sensor_rules; r; r = r->next) /* as they were given */
		apply_rule_locked(s, r);
}

void vg__report_after_fork(void)
{
	threads = self_listed ? &self_entry : NULL;
	self_entry.next = NULL;
}
