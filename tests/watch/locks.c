/* A subject for vigil watch's live WaitFor (tests/watch/waits_test.py): THREADS threads
 * take LOCKS real mutexes in turn for ROUNDS rounds, holding each a little while; a
 * thread that finds its mutex busy records that it waits (sensors of locks.vgl). Two
 * phases of ROUNDS rounds: between them the subject waits until the file GO exists, so
 * the test can see answers printed while the subject still runs.
 *
 * usage: watch_locks THREADS LOCKS ROUNDS GO */
#define _GNU_SOURCE /* pthread_setname_np; strnlen in the generated header */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "lk_sensors.h"

#define MAX_LOCKS 8

struct lock {
	pthread_mutex_t m;
	vg_entity e;
};

static struct lock locks[MAX_LOCKS];
static int nlocks, rounds;
static pthread_barrier_t phase;

static void pause_us(long us)
{
	struct timespec ts = {0, us * 1000};
	nanosleep(&ts, NULL);
}

static void take(struct lock *l)
{
	if (pthread_mutex_trylock(&l->m) != 0) {
		lk_Waiting_begin(&l->e); /* before blocking: the holder has it now */
		pthread_mutex_lock(&l->m);
		lk_Waiting_end(&l->e);
	}
	lk_Held_begin(&l->e);
}

static void give(struct lock *l)
{
	lk_Held_end(&l->e); /* before unlocking: no one holds it after this */
	pthread_mutex_unlock(&l->m);
}

static void *worker(void *arg)
{
	long id = (long)arg;
	char name[16];
	snprintf(name, sizeof name, "locker-%ld", id);
	pthread_setname_np(pthread_self(), name);
	for (int half = 0; half < 2; half++) {
		for (int r = 0; r < rounds; r++) {
			struct lock *l = &locks[(id + r) % nlocks];
			take(l);
			pause_us(200);
			give(l);
			pause_us(50);
		}
		pthread_barrier_wait(&phase); /* main waits for GO in between */
		pthread_barrier_wait(&phase);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: watch_locks THREADS LOCKS ROUNDS GO\n");
		return 2;
	}
	int nthreads = atoi(argv[1]);
	nlocks = atoi(argv[2]);
	rounds = atoi(argv[3]);
	if (nthreads < 1 || nthreads > 64 || nlocks < 1 || nlocks > MAX_LOCKS || rounds < 1) {
		fprintf(stderr, "watch_locks: bad arguments\n");
		return 2;
	}
	lk_sensors_register();
	for (int i = 0; i < nlocks; i++) {
		char name[16];
		snprintf(name, sizeof name, "m%d", i);
		pthread_mutex_init(&locks[i].m, NULL);
		vg_entity_create(&locks[i].e, LK_KIND_Lock, (uint64_t)(i + 1), name);
	}
	pthread_barrier_init(&phase, NULL, (unsigned)nthreads + 1);
	pthread_t th[64];
	for (long i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int half = 0; half < 2; half++) {
		pthread_barrier_wait(&phase);
		while (half == 0 && access(argv[4], F_OK) != 0)
			pause_us(10000);
		pthread_barrier_wait(&phase);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < nlocks; i++)
		vg_entity_reclaim(&locks[i].e);
	return 0;
}
