/* consistency_fuzz: randomized subject behaviour for consistent partial reporting
 * (docs/consistency.md), recorded by tests/consistency/consistency_test.py.
 *
 *   consistency_fuzz SEED full|partial OPS THREADS MAPFILE
 *
 * Real pthreads take turns with a baton: the thread holding it performs a burst of
 * operations and hands it to the next one, both chosen by one seeded generator, so two runs
 * with the same seed perform the same global sequence of operations. The operations:
 * types (created, loaded, reclaimed, their raw ids reused), objects on a small pool of
 * addresses (created and reclaimed through CREATE/RECLAIM sensors, so each reuse is a new
 * generation), references between objects and uses of types, nested invocations (naming an
 * object now and then), locks with contention (acquires nest; a lock held by another thread
 * is waited for: WAIT_BEGIN, and once it is free WAIT_END then ACQUIRE; locks are
 * reclaimed and created again when idle), and suspend/resume of other threads.
 * Interleaved with them, a random reporting schedule (process-wide and per-thread
 * suspend/resume, categories, thread-name filters, sensor groups) that only `partial`
 * applies: the generator is drawn the same in both modes, so the operations are identical.
 *
 * MAPFILE gets what the checker needs to compare two runs: each worker's tid, the
 * object pool's address, and how many events were generated. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_sensors.h"

#define NOBJ 16
#define NTYPES 4
#define NLOCKS 5
#define MAXT 8
#define MAXDEPTH 14
#define MAXNEST 3

struct obj {
	vg_entity e; /* identity = its address: the pool's slots are reused */
	int live;
};

struct worker {
	pthread_t pt;
	int idx;
	pid_t tid;
	vg_entity *self;
	pthread_cond_t cv;
	int depth;
	int waiting; /* lock index waited for, or -1 */
	int done;
	long ops_left;
	int tsusp;   /* its own vg_report_thread_suspend nesting */
	int stopped; /* a SUSPEND op named it last (suspend/resume alternate) */
};

static struct obj objs[NOBJ];
static vg_entity types[NTYPES];
static int type_state[NTYPES]; /* 0 none, 1 created, 2 loaded */
static vg_entity locks[NLOCKS];
static int lock_live[NLOCKS], lock_owner[NLOCKS], lock_depth[NLOCKS], lock_waiters[NLOCKS];
static struct worker workers[MAXT];
static int nworkers, partial;
static uint32_t seq;
static long schedule_ops;

/* The reporting schedule's model: what to undo and toggle. */
static int global_susp;
static const char *const sensor_groups[] = {"fz.call.*", "fz.lock.*",   "fz.obj.*",   "fz.ref",
                                            "fz.touch",  "fz.thread.*", "vg.entity.*"};
#define NGROUPS (int)(sizeof sensor_groups / sizeof sensor_groups[0])
static int group_off[NGROUPS];
static const char *const thread_filters[] = {"",     "-fz-1", "*,-fz-0,-fz-2", "-fz-3,-fz-1",
                                             "fz-2", "*"};

static pthread_mutex_t baton = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_done_cv = PTHREAD_COND_INITIALIZER;
static int turn = -1, ready, finished;

static uint64_t rng;
static uint32_t rnd(uint32_t n)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545F4914F6CDD1Dull) >> 33) % n;
}

static int held_max(int me)
{
	int m = -1;
	for (int l = 0; l < NLOCKS; l++)
		if (lock_owner[l] == me)
			m = l;
	return m;
}

/* ---- the reporting schedule (applied in partial runs only) ---- */

static void schedule_op(struct worker *w)
{
	uint32_t r = rnd(16), a = rnd(64);
	schedule_ops++;
	if (!partial)
		return;
	switch (r) {
	case 0:
	case 1:
		if (global_susp < 2) {
			global_susp++;
			vg_report_suspend();
		}
		break;
	case 2:
	case 3:
	case 4:
		if (global_susp > 0) {
			global_susp--;
			vg_report_resume();
		}
		break;
	case 5:
		if (w->tsusp < 2) {
			w->tsusp++;
			vg_report_thread_suspend();
		}
		break;
	case 6:
	case 7:
		if (w->tsusp > 0) {
			w->tsusp--;
			vg_report_thread_resume();
		}
		break;
	case 8: {
		/* A category and, beside it, one of the four kinds, two, or all (no kind bit). */
		static const unsigned kinds[6] = {VG_CAT_TYPE,
		                                  VG_CAT_OBJECT,
		                                  VG_CAT_EXECUTION,
		                                  VG_CAT_SYNC,
		                                  VG_CAT_OBJECT | VG_CAT_SYNC,
		                                  0};
		unsigned cats = a % 5 == 0   ? 0
		                : a % 5 == 1 ? VG_CAT_ENTITY
		                : a % 5 == 2 ? VG_CAT_ACTIVITY
		                             : VG_CAT_ENTITY | VG_CAT_ACTIVITY;
		vg_report_categories(cats ? cats | kinds[(a / 5) % 6] : 0);
		break;
	}
	case 9:
		vg_report_threads(thread_filters[a % 6]);
		break;
	case 10:
	case 11: {
		/* vg_report_sensors counts: each group is switched only when it changes. */
		int g = (int)(a % NGROUPS);
		group_off[g] = !group_off[g];
		vg_report_sensors(sensor_groups[g], !group_off[g]);
		break;
	}
	default: /* everything back on, so that some windows report all */
		while (global_susp > 0) {
			global_susp--;
			vg_report_resume();
		}
		vg_report_categories(VG_CAT_ENTITY | VG_CAT_ACTIVITY);
		vg_report_threads("");
		for (int g = 0; g < NGROUPS; g++)
			if (group_off[g]) {
				group_off[g] = 0;
				vg_report_sensors(sensor_groups[g], 1);
			}
		break;
	}
}

/* ---- the subject's operations ---- */

static void op_obj(int inl)
{
	struct obj *o = &objs[rnd(NOBJ)];
	fz_obj_op(inl, o->live ? FZ_OBJ_FREE : FZ_OBJ_NEW, &o->e, seq++);
	o->live = !o->live;
}

static struct obj *live_obj(void)
{
	int start = (int)rnd(NOBJ);
	for (int i = 0; i < NOBJ; i++)
		if (objs[(start + i) % NOBJ].live)
			return &objs[(start + i) % NOBJ];
	return NULL;
}

static void op_type(void)
{
	int t = (int)rnd(NTYPES);
	char name[16];
	switch (type_state[t]) {
	case 0:
		snprintf(name, sizeof name, "T%d", t);
		vg_entity_create(&types[t], "Type", 100 + (uint64_t)t, name);
		break;
	case 1:
		vg_entity_load(&types[t]);
		break;
	default:
		vg_entity_reclaim(&types[t]);
		break;
	}
	type_state[t] = (type_state[t] + 1) % 3;
	seq++;
}

static void op_lock_life(void)
{
	int l = (int)rnd(NLOCKS);
	char name[16];
	if (!lock_live[l]) {
		snprintf(name, sizeof name, "L%d", l);
		vg_entity_create(&locks[l], "Lock", 1 + (uint64_t)l, name);
		lock_live[l] = 1;
	} else if (lock_owner[l] < 0 && !lock_waiters[l]) {
		vg_entity_reclaim(&locks[l]);
		lock_live[l] = 0;
	}
	seq++;
}

/* Acquires in index order (nesting the same lock is fine): no deadlock. */
static int op_acquire(struct worker *w, int inl)
{
	int l = (int)rnd(NLOCKS), m = held_max(w->idx);
	if (!lock_live[l] || (l < m) || (lock_owner[l] == w->idx && lock_depth[l] >= MAXNEST))
		return 0;
	if (lock_owner[l] < 0 || lock_owner[l] == w->idx) {
		fz_target_op(inl, FZ_ACQ, &locks[l], seq++);
		lock_owner[l] = w->idx;
		lock_depth[l]++;
		return 0;
	}
	fz_target_op(inl, FZ_WAIT, &locks[l], seq++);
	w->waiting = l;
	lock_waiters[l]++;
	return 1; /* blocked: the baton goes on */
}

static int op_release(struct worker *w, int inl)
{
	int start = (int)rnd(NLOCKS);
	for (int i = 0; i < NLOCKS; i++) {
		int l = (start + i) % NLOCKS;
		if (lock_owner[l] != w->idx)
			continue;
		fz_target_op(inl, FZ_REL, &locks[l], seq++);
		if (--lock_depth[l] == 0)
			lock_owner[l] = -1;
		return 1;
	}
	return 0;
}

static void op_thread(struct worker *w, int inl)
{
	struct worker *o = &workers[rnd((uint32_t)nworkers)];
	if (o == w || o->done)
		return;
	fz_target_op(inl, o->stopped ? FZ_GO : FZ_STOP, o->self, seq++);
	o->stopped = !o->stopped;
}

/* One operation of `w`; returns 1 when `w` has to give the baton away (blocked, done). */
static int step(struct worker *w)
{
	int inl = (int)rnd(4) != 0; /* mostly the inline API, as generated code */
	if (w->waiting >= 0) {      /* the scheduler only picks it once the lock is free */
		int l = w->waiting;
		fz_target_op(inl, FZ_GOT, &locks[l], seq++);
		fz_target_op(inl, FZ_ACQ, &locks[l], seq++);
		lock_waiters[l]--;
		lock_owner[l] = w->idx;
		lock_depth[l] = 1;
		w->waiting = -1;
		return 0;
	}
	if (w->ops_left <= 0) { /* unwind, then done */
		if (w->depth > 0) {
			fz_ret(inl, seq++);
			w->depth--;
			return 0;
		}
		if (op_release(w, inl))
			return 0;
		w->done = 1;
		return 1;
	}
	w->ops_left--;
	uint32_t r = rnd(100);
	struct obj *a, *b;
	if (r < 18 && w->depth < MAXDEPTH) {
		a = rnd(3) == 0 ? live_obj() : NULL;
		fz_call(inl, rnd(1000), a ? &a->e : NULL, seq++);
		w->depth++;
	} else if (r < 34) {
		if (w->depth > 0) {
			fz_ret(inl, seq++);
			w->depth--;
		}
	} else if (r < 44) {
		op_obj(inl);
	} else if (r < 54) {
		if ((a = live_obj()) && (b = live_obj()))
			fz_ref(inl, &a->e, &b->e, seq++);
	} else if (r < 60) {
		int t = (int)rnd(NTYPES);
		if ((a = live_obj()) && type_state[t] == 2)
			fz_touch(inl, &a->e, &types[t], seq++);
	} else if (r < 64) {
		op_type();
	} else if (r < 76) {
		return op_acquire(w, inl);
	} else if (r < 88) {
		op_release(w, inl);
	} else if (r < 90) {
		op_lock_life();
	} else if (r < 96) {
		op_thread(w, inl);
	} else if (rnd(4) == 0) { /* about one operation in a hundred */
		schedule_op(w);
	}
	return 0;
}

/* ---- the baton ---- */

static int runnable(const struct worker *w)
{
	return !w->done && (w->waiting < 0 || lock_owner[w->waiting] < 0);
}

/* Called with the baton's mutex held by its holder. */
static void pass_baton(void)
{
	int cand[MAXT], n = 0;
	for (int i = 0; i < nworkers; i++)
		if (runnable(&workers[i]))
			cand[n++] = i;
	if (!n) {
		for (int i = 0; i < nworkers; i++)
			if (!workers[i].done) {
				fprintf(stderr,
				        "consistency_fuzz: deadlock in the model (a bug)\n");
				abort();
			}
		return;
	}
	turn = cand[rnd((uint32_t)n)];
	pthread_cond_signal(&workers[turn].cv);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[16];
	snprintf(name, sizeof name, "fz-%d", w->idx);
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&baton);
	w->tid = gettid();
	w->self = vg_self();
	ready++;
	pthread_cond_broadcast(&all_done_cv);
	for (;;) {
		while (turn != w->idx)
			pthread_cond_wait(&w->cv, &baton);
		/* The holder's operations run without the mutex: other threads only wait. */
		pthread_mutex_unlock(&baton);
		uint32_t burst = 1 + rnd(24);
		int give = 0;
		for (uint32_t i = 0; i < burst && !give; i++)
			give = step(w);
		pthread_mutex_lock(&baton);
		if (w->done) {
			finished++;
			pass_baton();
			break;
		}
		pass_baton();
	}
	/* Stay alive until every worker is done: the others may still name this thread. */
	pthread_cond_broadcast(&all_done_cv);
	while (finished < nworkers)
		pthread_cond_wait(&all_done_cv, &baton);
	pthread_mutex_unlock(&baton);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 6 || (strcmp(argv[2], "full") && strcmp(argv[2], "partial"))) {
		fprintf(stderr, "usage: consistency_fuzz SEED full|partial OPS THREADS MAPFILE\n");
		return 2;
	}
	uint64_t seed = strtoull(argv[1], NULL, 10);
	partial = !strcmp(argv[2], "partial");
	long ops = strtol(argv[3], NULL, 10);
	nworkers = atoi(argv[4]);
	if (ops <= 0 || nworkers < 1 || nworkers > MAXT) {
		fprintf(stderr, "consistency_fuzz: OPS must be > 0 and THREADS 1..%d\n", MAXT);
		return 2;
	}
	rng = seed * 0x9E3779B97F4A7C15ull + 0x1234567ull;
	if (!rng)
		rng = 1;
	fz_sensors_register();
	for (int l = 0; l < NLOCKS; l++) {
		char name[16];
		snprintf(name, sizeof name, "L%d", l);
		vg_entity_create(&locks[l], "Lock", 1 + (uint64_t)l, name);
		lock_live[l] = 1;
		lock_owner[l] = -1;
	}
	for (int i = 0; i < nworkers; i++) {
		struct worker *w = &workers[i];
		w->idx = i;
		w->waiting = -1;
		w->ops_left = ops / nworkers;
		pthread_cond_init(&w->cv, NULL);
		if (pthread_create(&w->pt, NULL, worker_main, w)) {
			fprintf(stderr, "consistency_fuzz: pthread_create: %s\n", strerror(errno));
			return 1;
		}
	}
	/* Every worker has named itself before the first operation: the schedule's thread
	 * filters then see the same names in both runs. */
	pthread_mutex_lock(&baton);
	while (ready < nworkers)
		pthread_cond_wait(&all_done_cv, &baton);
	turn = 0;
	pthread_cond_signal(&workers[0].cv);
	pthread_mutex_unlock(&baton);
	for (int i = 0; i < nworkers; i++)
		pthread_join(workers[i].pt, NULL);
	FILE *f = fopen(argv[5], "w");
	if (!f) {
		fprintf(stderr, "consistency_fuzz: %s: %s\n", argv[5], strerror(errno));
		return 1;
	}
	fprintf(f, "main %d\n", (int)getpid());
	for (int i = 0; i < nworkers; i++)
		fprintf(f, "thread %d %d\n", i, (int)workers[i].tid);
	fprintf(f, "objbase %llu %zu\n", (unsigned long long)(uintptr_t)&objs[0].e,
	        sizeof(struct obj));
	fprintf(f, "events %u\nschedule %ld\n", seq, schedule_ops);
	fclose(f);
	return 0;
}
