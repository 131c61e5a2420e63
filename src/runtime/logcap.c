/* Log capture: settings, the hot path, and the life of the per-thread tables.
 *
 * Each thread that logs gets its own table (logcap_table.c) in a mapping made on its
 * first call; the hot path counts the event and the transition from the thread's previous
 * event into it, without a lock or an allocation. Transition times are sampled: about one
 * transition in VIGIL_LOG_TIMING (random period, so that no periodic pattern of calls is
 * always or never timed) is timed with the runtime's clock, because one rdtsc costs ~10 ns
 * here. Counts are never sampled. At thread exit a thread's table is added into the
 * process's table under `cap_lock`; a model write adds the process's and every live
 * thread's table into a snapshot and writes it whole: each file of a process holds
 * everything counted so far (docs/model.md reads the last one). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/sketch_index.h"
#include "internal.h"
#include "logcap.h"

#define THREAD_POOL ((size_t)4 << 20)   /* sketches of one thread */
#define PROCESS_POOL ((size_t)64 << 20) /* sketches of the process (address space only) */

struct lc_state vg__lc = {.on = 0, .pass = VG_LOG_DEBUG, .timing_every = 16, .tmpl_cap = 1000};
__thread int vg__lc_guard __attribute__((tls_model("initial-exec")));

struct lc_thread {
	struct lc_table tab;
	uint32_t prev;  /* previous event of the thread, 0: none yet */
	uint32_t armed; /* the time of `prev` is in t0: time the next transition */
	uint32_t countdown;
	uint32_t rng;
	uint32_t busy; /* inside the hot path (a signal handler must not nest) */
	uint64_t t0;
	struct lc_thread *next;
};

enum { TLS_NONE, TLS_ACTIVE, TLS_DONE };
static __thread struct lc_thread *lc_self __attribute__((tls_model("initial-exec")));
static __thread int lc_tls_state __attribute__((tls_model("initial-exec")));

static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lc_thread *threads; /* live tables, under cap_lock */
static struct lc_table proc, snap;
static int proc_ready;
static unsigned nwrites;
static _Atomic uint64_t lost_global; /* calls not counted anywhere (no table) */
static pthread_key_t exit_key;
static int key_ready;
static int enabled = 1; /* VIGIL_LOG */

/* ---- settings ---- */

static const char *const level_names[] = {"emerg",   "alert",  "crit", "err",
                                          "warning", "notice", "info", "debug"};

static int parse_level(const char *v, int *out)
{
	if (!strcmp(v, "none")) {
		*out = -1;
		return 0;
	}
	if (!strcmp(v, "all")) {
		*out = VG_LOG_DEBUG;
		return 0;
	}
	if (!strcmp(v, "error")) {
		*out = VG_LOG_ERR;
		return 0;
	}
	if (!strcmp(v, "warn")) {
		*out = VG_LOG_WARNING;
		return 0;
	}
	for (int i = 0; i < 8; i++)
		if (!strcmp(v, level_names[i]) || (v[0] == '0' + i && !v[1])) {
			*out = i;
			return 0;
		}
	return -1;
}

static void read_settings(void)
{
	const char *v = getenv("VIGIL_LOG");
	if (v && *v) {
		if (!strcmp(v, "off") || !strcmp(v, "0"))
			enabled = 0;
		else if (strcmp(v, "on") && strcmp(v, "1"))
			vg__warn("VIGIL_LOG=%s: expected on or off; using on", v);
	}
	/* While recording, messages are modelled instead of written: only warnings and
	 * more severe ones (and text without a level) are handed on unless told otherwise.
	 * Not recording, VG_LOG is a plain logger that writes everything. */
	int recording = enabled && vg__rt.recording;
	vg__lc.pass = recording ? VG_LOG_WARNING : VG_LOG_DEBUG;
	v = getenv("VIGIL_LOG_PASS");
	if (v && *v) {
		if (parse_level(v, &vg__lc.pass) == 0)
			vg__lc.pass_set = 1;
		else
			vg__warn("VIGIL_LOG_PASS=%s: expected emerg, alert, crit, err, warning, "
			         "notice, info, debug, all or none; using %s",
			         v, recording ? "warning" : "all");
	}
	v = getenv("VIGIL_LOG_TEMPLATES");
	if (v && *v) {
		char *end;
		errno = 0;
		unsigned long n = strtoul(v, &end, 10);
		if (errno || end == v || *end || n < 1 || n > 65535 || v[0] == '-')
			vg__warn("VIGIL_LOG_TEMPLATES=%s: expected a number of templates per call "
			         "site from 1 to 65535; using 1000",
			         v);
		else
			vg__lc.tmpl_cap = (uint32_t)n;
	}
	v = getenv("VIGIL_LOG_TIMING");
	if (v && *v) {
		char *end;
		errno = 0;
		unsigned long n = strtoul(v, &end, 10);
		if (errno || end == v || *end || n < 1 || n > 1000000 || v[0] == '-')
			vg__warn("VIGIL_LOG_TIMING=%s: expected a number from 1 (time every "
			         "transition) to 1000000; using 16",
			         v);
		else
			vg__lc.timing_every = (uint32_t)n;
	}
}

/* ---- per-thread tables ---- */

static uint32_t next_period(struct lc_thread *t)
{
	uint32_t n = vg__lc.timing_every;
	if (n <= 1)
		return 1;
	uint32_t x = t->rng; /* xorshift32 */
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	t->rng = x;
	return 1 + x % (2 * n - 1); /* uniform in 1 .. 2n-1: mean n */
}

static void thread_free(struct lc_thread *t)
{
	vg__lc_table_free(&t->tab);
	munmap(t, sizeof *t);
}

static void thread_exit_destructor(void *arg)
{
	(void)arg;
	vg__logcap_thread_exit();
}

static struct lc_thread *thread_open(void)
{
	lc_tls_state = TLS_DONE; /* until it works */
	void *m = mmap(NULL, sizeof(struct lc_thread), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	struct lc_thread *t = m;
	if (vg__lc_table_init(&t->tab, THREAD_POOL) < 0) {
		munmap(m, sizeof *t);
		return NULL;
	}
	t->rng = (uint32_t)(uintptr_t)t ^ (uint32_t)vg_now() ^ 0x9e3779b9u;
	if (!t->rng)
		t->rng = 1;
	t->countdown = next_period(t);
	pthread_mutex_lock(&cap_lock);
	t->next = threads;
	threads = t;
	pthread_mutex_unlock(&cap_lock);
	if (key_ready)
		pthread_setspecific(exit_key, t);
	lc_self = t;
	lc_tls_state = TLS_ACTIVE;
	return t;
}

/* Calls that have no table of their own (a thread past its exit merge, or whose table
 * could not be made) are counted in the process's table; transitions are not. */
static void hit_untabled(uint32_t id)
{
	pthread_mutex_lock(&cap_lock);
	if (proc_ready)
		vg__lc_bump(&proc.counts[id], 1);
	else
		atomic_fetch_add(&lost_global, 1);
	pthread_mutex_unlock(&cap_lock);
}

void vg__logcap_hit(uint32_t id)
{
	struct lc_thread *t = lc_self;
	if (__builtin_expect(!t, 0)) {
		int saved = errno; /* the call's %m reads it: the hooks leave it as it was */
		if (lc_tls_state == TLS_NONE)
			t = thread_open();
		errno = saved;
		if (!t) {
			hit_untabled(id);
			return;
		}
	}
	if (__builtin_expect(t->busy, 0)) { /* a signal handler interrupted the hot path */
		vg__lc_bump(&t->tab.lost_events, 1);
		return;
	}
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	struct lc_table *tab = &t->tab;
	vg__lc_bump(&tab->counts[id], 1);
	uint64_t now = 0;
	uint32_t prev = t->prev;
	if (__builtin_expect(prev != 0, 1)) {
		struct lc_trans *e = vg__lc_trans_get(tab, prev << 16 | id);
		if (__builtin_expect(e != NULL, 1)) {
			vg__lc_bump(&e->count, 1);
			if (t->armed) {
				now = vg_now();
				uint64_t d = now > t->t0 ? now - t->t0 : 0;
				vg__lc_bump(&e->sum_ns, d);
				vg__lc_time_add(tab, e, vg_sketch_index(d), 1);
			}
		} else {
			vg__lc_bump(&tab->lost_trans, 1);
		}
	}
	t->armed = 0;
	if (__builtin_expect(--t->countdown == 0, 0)) {
		t->t0 = now ? now : vg_now();
		t->armed = 1;
		t->countdown = next_period(t);
	}
	t->prev = id;
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
}

void vg__logcap_lost(uint64_t n)
{
	atomic_fetch_add_explicit(&lost_global, n, memory_order_relaxed);
}

void vg__logcap_thread_exit(void)
{
	struct lc_thread *t = lc_self;
	if (!t)
		return;
	t->busy = 1; /* signal handlers count elsewhere from now on */
	atomic_signal_fence(memory_order_seq_cst);
	lc_self = NULL;
	lc_tls_state = TLS_DONE;
	pthread_mutex_lock(&cap_lock);
	if (proc_ready)
		vg__lc_table_add(&proc, &t->tab);
	for (struct lc_thread **p = &threads; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	pthread_mutex_unlock(&cap_lock);
	thread_free(t);
}

/* ---- model writes ---- */

int vg__logcap_write(void)
{
	if (!vg__lc.on || !proc_ready) {
		errno = ENOTSUP;
		return -1;
	}
	int saved_guard = vg__lc_guard;
	vg__lc_guard = 1; /* nothing the writer does is captured */
	pthread_mutex_lock(&cap_lock);
	vg__lc_table_clear(&snap);
	vg__lc_table_add(&snap, &proc);
	for (struct lc_thread *t = threads; t; t = t->next)
		vg__lc_table_add(&snap, &t->tab);
	vg__lc_bump(&snap.lost_events, atomic_load(&lost_global));
	int rc = 0;
	uint32_t nev = vg__lc_event_count(), id;
	for (id = 1; id <= nev && id < LC_MAX_EVENTS; id++)
		if (atomic_load_explicit(&snap.counts[id], memory_order_relaxed))
			break;
	if (id <= nev && id < LC_MAX_EVENTS) /* a process that never logged writes nothing */
		rc = vg__lc_write_model(&snap, nwrites);
	int err = errno;
	if (rc == 0 && id <= nev && id < LC_MAX_EVENTS)
		nwrites++;
	pthread_mutex_unlock(&cap_lock);
	vg__lc_guard = saved_guard;
	errno = err;
	return rc;
}

void vg__logcap_process_end(void)
{
	if (vg__lc.on && vg__logcap_write() < 0)
		vg__warn("cannot write the log model of this process into %s: %s", vg__rt.dir,
		         strerror(errno));
}

/* ---- start, fork ---- */

static void atfork_prepare(void)
{
	pthread_mutex_lock(&cap_lock);
	vg__lc_sites_lock();
}

static void atfork_parent(void)
{
	vg__lc_sites_unlock();
	pthread_mutex_unlock(&cap_lock);
}

static void atfork_child(void)
{
	vg__lc_sites_after_fork();
	pthread_mutex_init(&cap_lock, NULL);
	/* The parent's counts are the parent's: the other threads do not exist here, and
	 * the forking thread starts a new table on its next call. */
	for (struct lc_thread *t = threads, *n; t; t = n) {
		n = t->next;
		thread_free(t);
	}
	threads = NULL;
	lc_self = NULL;
	lc_tls_state = TLS_NONE;
	if (key_ready)
		pthread_setspecific(exit_key, NULL);
	if (proc_ready) {
		vg__lc_table_clear(&proc);
		vg__lc_table_clear(&snap);
	}
	nwrites = 0;
	atomic_store(&lost_global, 0);
	vg__lc.on = 0; /* until vg__logcap_after_fork knows the child records */
}

void vg__logcap_after_fork(void)
{
	vg__lc.on = enabled && proc_ready && vg__rt.recording;
}

void vg__logcap_init(void)
{
	read_settings();
	vg__lc_files_init();
	if (!enabled || !vg__rt.recording)
		return;
	if (vg__lc_table_init(&proc, PROCESS_POOL) < 0 ||
	    vg__lc_table_init(&snap, PROCESS_POOL) < 0) {
		vg__warn("cannot map the log capture tables: %s; log calls are not captured",
		         strerror(errno));
		vg__lc_table_free(&proc);
		vg__lc_table_free(&snap);
		return;
	}
	proc_ready = 1;
	if (pthread_key_create(&exit_key, thread_exit_destructor) == 0)
		key_ready = 1;
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	vg__lc.on = 1;
}

int vg_log_capturing(void)
{
	return vg__lc.on;
}

int vg_log_model_write(void)
{
	return vg__logcap_write();
}
