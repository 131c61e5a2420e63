/* consistency-example: worker threads handle requests (nested invocations) on heap items
 * (malloc'd and freed, so addresses are reused) under real pthread mutexes, and pass some
 * items to each other through a shared queue; meanwhile a controller thread narrows,
 * suspends and resumes reporting at random moments. Recorded with `vigil record`, the
 * trace passes `vigil check` (docs/consistency.md); with VIGIL_CONSISTENCY=off it does not.
 * See README.md in this folder. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sensors.h"

#define NACCOUNTS 3

static struct account accounts[NACCOUNTS];
static struct item *queue; /* items handed from one worker to another */
static pthread_mutex_t queue_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int workers_left;
static long rounds = 20000, toggles_min = 40;
static int nthreads = 4;

struct worker {
	pthread_t pt;
	int idx;
	unsigned seed;
};

static void deposit(struct item *it, struct account *a)
{
	ex_call("deposit", it);
	ex_lock(a);
	for (int i = 0; i < 200; i++) /* some work under the lock: contention */
		a->balance += it->value & 1;
	a->balance += it->value;
	ex_item_use(it, a);
	ex_unlock(a);
	ex_return();
}

/* Moves an item's value between two accounts, locked in address order: a nested
 * invocation holding two locks at once. */
static void transfer(struct item *it, struct account *from, struct account *to)
{
	ex_call("transfer", it);
	struct account *first = from < to ? from : to, *second = from < to ? to : from;
	ex_lock(first);
	if (second != first)
		ex_lock(second);
	ex_call("move", it);
	from->balance -= it->value;
	to->balance += it->value;
	ex_item_use(it, from);
	ex_item_use(it, to);
	ex_return();
	if (second != first)
		ex_unlock(second);
	ex_unlock(first);
	ex_return();
}

static void handle(struct worker *w)
{
	ex_call("handle", NULL);
	struct item *it = malloc(sizeof *it);
	if (!it)
		abort();
	it->value = (uint64_t)(rand_r(&w->seed) % 100);
	ex_item_new(it);
	struct account *a = &accounts[rand_r(&w->seed) % NACCOUNTS];
	deposit(it, a);
	if (rand_r(&w->seed) % 3 == 0)
		transfer(it, a, &accounts[rand_r(&w->seed) % NACCOUNTS]);
	if (rand_r(&w->seed) % 4 == 0) {
		/* Hand it over: another worker frees it. */
		pthread_mutex_lock(&queue_mu);
		it->next = queue;
		queue = it;
		pthread_mutex_unlock(&queue_mu);
	} else {
		ex_item_free(it);
		free(it);
	}
	pthread_mutex_lock(&queue_mu);
	struct item *got = queue;
	if (got)
		queue = got->next;
	pthread_mutex_unlock(&queue_mu);
	if (got) {
		ex_call("consume", got);
		ex_item_free(got);
		free(got);
		ex_return();
	}
	ex_return();
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[16];
	snprintf(name, sizeof name, "worker-%d", w->idx);
	pthread_setname_np(pthread_self(), name);
	ex_call("worker", NULL);
	/* Batches of requests: long invocations, so that reporting often resumes inside one
	 * (the batch is then reported first, synthesized, with its original time). */
	for (long r = 0; r < rounds; r++) {
		if (r % 100 == 0) {
			if (r)
				ex_return();
			ex_call("batch", NULL);
		}
		handle(w);
	}
	if (rounds)
		ex_return();
	ex_return();
	atomic_fetch_sub(&workers_left, 1);
	return NULL;
}

/* Narrows and suspends reporting at random moments while the workers run. */
static void *controller_main(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	pthread_setname_np(pthread_self(), "controller");
	long n = 0;
	int suspended = 0;
	while (atomic_load(&workers_left) > 0 || n < toggles_min) {
		struct timespec ts = {0, 50000 + (long)(rand_r(&seed) % 200000)};
		nanosleep(&ts, NULL);
		switch (rand_r(&seed) % 6) {
		case 0:
		case 1:
			if (suspended)
				vg_report_resume();
			else
				vg_report_suspend();
			suspended = !suspended;
			break;
		case 2:
			vg_report_categories(VG_CAT_ACTIVITY);
			break;
		case 3:
			vg_report_categories(VG_CAT_ENTITY);
			break;
		case 4:
			vg_report_categories(VG_CAT_ENTITY | VG_CAT_ACTIVITY);
			break;
		default:
			vg_report_threads(rand_r(&seed) % 2 ? "-worker-1" : "");
			break;
		}
		n++;
	}
	if (suspended)
		vg_report_resume();
	vg_report_categories(VG_CAT_ENTITY | VG_CAT_ACTIVITY);
	vg_report_threads("");
	fprintf(stderr, "consistency-example: %ld reporting changes\n", n);
	return NULL;
}

static long arg_long(const char *opt, const char *v, long lo, long hi)
{
	char *end;
	errno = 0;
	long x = strtol(v ? v : "", &end, 10);
	if (!v || errno || *end || x < lo || x > hi) {
		fprintf(stderr, "consistency-example: %s expects a number in %ld..%ld\n", opt, lo,
		        hi);
		exit(2);
	}
	return x;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads"))
			nthreads = (int)arg_long(argv[i], argv[i + 1], 1, 64), i++;
		else if (!strcmp(argv[i], "--rounds"))
			rounds = arg_long(argv[i], argv[i + 1], 1, 100000000), i++;
		else if (!strcmp(argv[i], "--toggles"))
			toggles_min = arg_long(argv[i], argv[i + 1], 0, 1000000), i++;
		else {
			int help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
			fprintf(
			    help ? stdout : stderr,
			    "usage: consistency-example [--threads N] [--rounds N] [--toggles N]\n"
			    "  N workers (4) each handle N requests (20000) while a controller\n"
			    "  thread changes what is reported at least N times (40).\n"
			    "example: vigil record -o run -- consistency-example && vigil check "
			    "run\n");
			return help ? 0 : 2;
		}
	}
	ex_sensors_register();
	for (int i = 0; i < NACCOUNTS; i++) {
		char name[16];
		snprintf(name, sizeof name, "account-%d", i);
		pthread_mutex_init(&accounts[i].mu, NULL);
		vg_entity_create(&accounts[i].ent, "Account", (uintptr_t)&accounts[i].mu, name);
	}
	struct worker *w = calloc((size_t)nthreads, sizeof *w);
	if (!w)
		return 1;
	atomic_store(&workers_left, nthreads);
	pthread_t ctl;
	pthread_create(&ctl, NULL, controller_main, (void *)(uintptr_t)12345u);
	for (int i = 0; i < nthreads; i++) {
		w[i].idx = i;
		w[i].seed = 1000u + (unsigned)i;
		if (pthread_create(&w[i].pt, NULL, worker_main, &w[i])) {
			fprintf(stderr, "consistency-example: pthread_create failed\n");
			return 1;
		}
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(w[i].pt, NULL);
	pthread_join(ctl, NULL);
	while (queue) { /* what nobody consumed */
		struct item *it = queue;
		queue = it->next;
		ex_item_free(it);
		free(it);
	}
	uint64_t total = 0;
	for (int i = 0; i < NACCOUNTS; i++) {
		total += accounts[i].balance;
		vg_entity_reclaim(&accounts[i].ent);
		pthread_mutex_destroy(&accounts[i].mu);
	}
	printf("consistency-example: %d workers, %ld requests each, total balance %llu\n", nthreads,
	       rounds, (unsigned long long)total);
	free(w);
	return 0;
}
