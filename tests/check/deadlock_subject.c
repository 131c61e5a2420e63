/* A subject for check.deadlocks: two threads (named dlw-0 and dlw-1), two mutexes, each
 * lock reported by sensors (wait begin before pthread_mutex_lock, wait end and acquire
 * after, release before the unlock), written to $VIGIL_OUT.
 *   deadlock_subject deadlock READY  each thread takes its own mutex, both meet at a
 *                                    barrier, then each takes the other's: a real
 *                                    deadlock. Once both have reported their second wait,
 *                                    the main thread records `subject.ready` (so the trace
 *                                    goes on after the waits), READY gets "TID0 TID1"
 *                                    (written, then renamed); the test kills the process.
 *   deadlock_subject ordered         first dlw-1 reports its wait for m0 while dlw-0 holds
 *                                    it (one wait-for edge for certain), then both take
 *                                    the mutexes in the same order, 1000 times; exits 0
 *                                    with "done".
 *   deadlock_subject partial         no deadlock, but dlw-0 releases m0 while its
 *                                    reporting is suspended (vg_report_thread_suspend),
 *                                    then dlw-1, holding m1, reports a wait for m0 that
 *                                    is still open when dlw-0 reports its wait for m1.
 *                                    Consistent reporting reports the release (its
 *                                    acquire was reported): no cycle. Naive filtering
 *                                    (VIGIL_CONSISTENCY=off) drops it: a false cycle.
 *   deadlock_subject partial filter  the same, dlw-0 left out by the thread filter
 *                                    (vg_report_threads("-dlw-0")) instead of suspended. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "vigil/vigil.h"

static const vg_field_desc lock_fields[] = {{"l", VG_ENTITY, "Lock"}};
enum { WAIT, GOT, ACQUIRE, RELEASE, NSENSORS };
static const enum vg_op ops[NSENSORS] = {VG_OP_WAIT_BEGIN, VG_OP_WAIT_END, VG_OP_ACQUIRE,
                                         VG_OP_RELEASE};
static const char *const names[NSENSORS] = {"lock.wait", "lock.got", "lock.acquire",
                                            "lock.release"};
static vg_sensor *sensors[NSENSORS];
static vg_entity lock_ent[2];
static pthread_mutex_t mutex[2] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};
static pthread_barrier_t both_hold;
static atomic_int waiting;
static atomic_long tids[2];
static atomic_int step; /* ordered and partial: the handshake between the two threads */
static enum { DEADLOCK, ORDERED, PARTIAL } mode;
static int filter_threads; /* partial: leave the thread out by name instead of suspending */

static void emit(int which, int l)
{
	vg_value v[1] = {{.e = &lock_ent[l]}};
	vg_emit(sensors[which], v);
}

static void take(int l)
{
	emit(WAIT, l);
	pthread_mutex_lock(&mutex[l]);
	emit(GOT, l);
	emit(ACQUIRE, l);
}

static void give(int l)
{
	emit(RELEASE, l);
	pthread_mutex_unlock(&mutex[l]);
}

static void wait_step(int n)
{
	struct timespec tick = {0, 100000};
	while (atomic_load(&step) < n)
		nanosleep(&tick, NULL);
}

/* dlw-0: holds m0 while dlw-1 reports its wait for it, then releases. */
static void handoff(int k)
{
	if (k == 0) {
		take(0);
		atomic_store(&step, 1);
		wait_step(2);
		give(0);
	} else {
		wait_step(1);
		emit(WAIT, 0);
		atomic_store(&step, 2);
		pthread_mutex_lock(&mutex[0]);
		emit(GOT, 0);
		emit(ACQUIRE, 0);
		give(0);
	}
}

/* The partial scenario, in steps: 0 takes m0, releases it unreported (suspended); 1 takes
 * m1 and reports a wait for m0; 0 reports a wait for m1; 1 gets m0, releases both; 0
 * gets m1. */
static void partial(int k)
{
	if (k == 0) {
		take(0);
		if (filter_threads)
			vg_report_threads("-dlw-0");
		else
			vg_report_thread_suspend();
		give(0);
		if (filter_threads)
			vg_report_threads(NULL);
		else
			vg_report_thread_resume();
		atomic_store(&step, 1);
		wait_step(2);
		emit(WAIT, 1);
		atomic_store(&step, 3);
		pthread_mutex_lock(&mutex[1]);
		emit(GOT, 1);
		emit(ACQUIRE, 1);
		give(1);
	} else {
		wait_step(1);
		take(1);
		emit(WAIT, 0);
		atomic_store(&step, 2);
		wait_step(3);
		pthread_mutex_lock(&mutex[0]);
		emit(GOT, 0);
		emit(ACQUIRE, 0);
		give(0);
		give(1);
	}
}

static void *worker(void *arg)
{
	int k = (int)(long)arg;
	atomic_store(&tids[k], (long)syscall(SYS_gettid));
	char name[16];
	snprintf(name, sizeof name, "dlw-%d", k);
	pthread_setname_np(pthread_self(), name);
	if (mode == PARTIAL) {
		partial(k);
		return NULL;
	}
	if (mode == DEADLOCK) {
		take(k);
		pthread_barrier_wait(&both_hold);
		emit(WAIT, 1 - k);
		atomic_fetch_add(&waiting, 1);     /* its wait is reported (committed) */
		pthread_mutex_lock(&mutex[1 - k]); /* never returns */
		emit(GOT, 1 - k);
		emit(ACQUIRE, 1 - k);
		give(1 - k);
		give(k);
		return NULL;
	}
	handoff(k);
	for (int i = 0; i < 1000; i++) {
		take(0);
		take(1);
		give(1);
		give(0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "deadlock"))
		mode = DEADLOCK;
	else if (argc == 2 && !strcmp(argv[1], "ordered"))
		mode = ORDERED;
	else if (argc >= 2 && argc <= 3 && !strcmp(argv[1], "partial") &&
	         (argc == 2 || !strcmp(argv[2], "filter"))) {
		mode = PARTIAL;
		filter_threads = argc == 3;
	} else {
		fprintf(stderr,
		        "usage: deadlock_subject ordered | partial [filter] | deadlock READY\n");
		return 2;
	}
	for (int i = 0; i < NSENSORS; i++) {
		vg_type_desc d = {.name = names[i],
		                  .kind = VG_KIND_EVENT,
		                  .placement = VG_FLAG_SENSOR,
		                  .fields = lock_fields,
		                  .nfields = 1,
		                  .performer = -1,
		                  .initiator = -1,
		                  .target = 0,
		                  .op = ops[i]};
		sensors[i] = vg_sensor_register(&d);
		vg_sensor_enable(sensors[i]);
	}
	vg_entity_create(&lock_ent[0], "Lock", 0x1000, "m0");
	vg_entity_create(&lock_ent[1], "Lock", 0x2000, "m1");
	pthread_barrier_init(&both_hold, NULL, 2);
	pthread_t th[2];
	for (long k = 0; k < 2; k++)
		if (pthread_create(&th[k], NULL, worker, (void *)k)) {
			fprintf(stderr, "deadlock_subject: pthread_create failed\n");
			return 1;
		}
	if (mode == DEADLOCK) {
		/* Both counted themselves once their wait was reported: say so. */
		struct timespec tick = {0, 1000000};
		while (atomic_load(&waiting) < 2)
			nanosleep(&tick, NULL);
		static const vg_type_desc ready = {.name = "subject.ready",
		                                   .kind = VG_KIND_EVENT,
		                                   .placement = VG_FLAG_SENSOR,
		                                   .performer = -1,
		                                   .initiator = -1,
		                                   .target = -1};
		vg_sensor *r = vg_sensor_register(&ready);
		vg_sensor_enable(r);
		vg_emit(r, NULL);
		char tmp[4096];
		snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
		FILE *f = fopen(tmp, "w");
		if (!f ||
		    fprintf(f, "%ld %ld\n", atomic_load(&tids[0]), atomic_load(&tids[1])) < 0 ||
		    fclose(f) || rename(tmp, argv[2])) {
			perror(argv[2]);
			return 1;
		}
	}
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	vg_entity_reclaim(&lock_ent[0]);
	vg_entity_reclaim(&lock_ent[1]);
	printf("done\n");
	return 0;
}
