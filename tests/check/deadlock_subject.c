/* A subject for check.deadlocks: two threads, two mutexes, each lock reported by sensors
 * (wait begin before pthread_mutex_lock, wait end and acquire after, release before the
 * unlock), written to $VIGIL_OUT.
 *   deadlock_subject deadlock READY  each thread takes its own mutex, both meet at a
 *                                    barrier, then each takes the other's: a real
 *                                    deadlock. Once both have reported their second wait,
 *                                    READY gets "TID0 TID1" (written, then renamed); the
 *                                    test kills the process.
 *   deadlock_subject ordered         both take the mutexes in the same order, 1000 times;
 *                                    exits 0 with "done". */
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
static int deadlock;

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

static void *worker(void *arg)
{
	int k = (int)(long)arg;
	atomic_store(&tids[k], (long)syscall(SYS_gettid));
	if (deadlock) {
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
	if (argc < 2 || (strcmp(argv[1], "ordered") && (strcmp(argv[1], "deadlock") || argc < 3))) {
		fprintf(stderr, "usage: deadlock_subject ordered | deadlock READY\n");
		return 2;
	}
	deadlock = !strcmp(argv[1], "deadlock");
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
	if (deadlock) {
		/* Both counted themselves once their wait was reported: say so. */
		struct timespec tick = {0, 1000000};
		while (atomic_load(&waiting) < 2)
			nanosleep(&tick, NULL);
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
