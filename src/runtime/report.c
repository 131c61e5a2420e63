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

static unsigned categories = VG_CAT_ENTITY | VG_CAT_ACTIVITY;
static int suspended; /* process-wide suspends, under vg__rt.lock */

/* Threads are filtered by name: each registers where its mute word and name live, so a
 * new filter reaches every thread at once. */
struct reported_thread {
	struct reported_thread *next;
	uint32_t *mute;
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
	atomic_store_explicit(&vg__report_off, off, memory_order_relaxed);
}

static void set_filtered(uint32_t *mute, const char *name)
{
	/* As VIGIL_SENSORS: the last match decides; no match is reported unless a positive
	 * glob was given (then only what it names is). */
	int on = 1;
	if (thread_globs) {
		int m = vg__glob_list_match(thread_globs, name);
		on = m >= 0 ? m : !vg__glob_list_has_positive(thread_globs);
	}
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
	publish_off_locked();
	vg__tracking = vg__rt.recording && vg__rt.cfg.consistency;
	pthread_mutex_unlock(&vg__rt.lock);
}

void vg__report_thread_named(const char *name)
{
	pthread_mutex_lock(&vg__rt.lock);
	struct reported_thread *t = &self_entry;
	snprintf(t->name, sizeof t->name, "%s", name ? name : "");
	t->mute = &vg__tls.mute;
	if (!self_listed) {
		t->next = threads;
		threads = t;
		self_listed = 1;
	}
	set_filtered(t->mute, t->name);
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
		set_filtered(t->mute, t->name);
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
	for (struct sensor_rule *r = sensor_rules; r; r = r->next) /* as they were given */
		apply_rule_locked(s, r);
}

void vg__report_after_fork(void)
{
	threads = self_listed ? &self_entry : NULL;
	self_entry.next = NULL;
}
