/* The subject of tests/names: renames at known moments, between markers (one-byte
 * writes on a pipe, recorded as vg.net.send with offsets 0, 1, 2 ...), and a thread that
 * goes through user-defined states (tests/names/phases.vgl) inside one network.
 *
 *   names_subject names    main: marker 0; prctl(PR_SET_NAME, "m-prctl"); marker 1; a
 *                          worker names itself "w-self"; marker 2 (by the worker); main
 *                          names it "w-by-main"; marker 3; the argv title becomes
 *                          "names: title one"; marker 4; "names: title two"; poll();
 *                          marker 5; the worker ends; marker 6.
 *   names_subject states   the title "names: serving"; a worker named "disk-worker";
 *                          main reads a line of stdin (the input), is "parse" for PARSE_MS,
 *                          sends a byte to the worker, which is "disk" for DISK_MS then
 *                          "idle" and answers; main is "reply" until it read the answer,
 *                          then "done". */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "names_sensors.h"

#define PARSE_MS 30
#define DISK_MS 20

static int marks[2];
static char *title;    /* argv[0] */
static size_t title_n; /* bytes of the argv area we may write (argv strings only) */

static void mark(void)
{
	if (write(marks[1], "m", 1) != 1)
		exit(3);
}

/* Rewrites the process title as PostgreSQL and nginx do: over argv's strings. */
static void set_title(const char *t)
{
	size_t n = strlen(t);
	if (n + 1 > title_n)
		exit(4);
	memset(title, 0, title_n);
	memcpy(title, t, n);
}

static void busy_ms(int ms)
{
	struct timespec ts = {0, (long)ms * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int step;

static void wait_step(int s)
{
	pthread_mutex_lock(&lock);
	while (step < s)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void set_step(int s)
{
	pthread_mutex_lock(&lock);
	step = s;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

static void *names_worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "w-self");
	mark(); /* 2 */
	set_step(1);
	wait_step(2); /* main names this thread, then lets it end */
	return NULL;
}

static int names(void)
{
	mark(); /* 0 */
	prctl(PR_SET_NAME, "m-prctl", 0, 0, 0);
	mark(); /* 1 */
	pthread_t w;
	if (pthread_create(&w, NULL, names_worker, NULL))
		return 2;
	wait_step(1);
	pthread_setname_np(w, "w-by-main");
	mark(); /* 3 */
	set_title("names: title one");
	mark(); /* 4 */
	set_title("names: title two");
	poll(NULL, 0, 0);
	mark(); /* 5 */
	set_step(2);
	pthread_join(w, NULL);
	mark(); /* 6 */
	return 0;
}

static int to_worker[2], to_main[2];

static void *states_worker(void *arg)
{
	(void)arg;
	char c;
	if (read(to_worker[0], &c, 1) != 1)
		exit(5);
	names_ThreadPhase("disk");
	busy_ms(DISK_MS);
	names_ThreadPhase("idle");
	if (write(to_main[1], "r", 1) != 1)
		exit(6);
	return NULL;
}

static int states(void)
{
	set_title("names: serving");
	if (pipe(to_worker) || pipe(to_main))
		return 2;
	pthread_t w;
	if (pthread_create(&w, NULL, states_worker, NULL))
		return 2;
	pthread_setname_np(w, "disk-worker");
	char line[64];
	if (read(0, line, sizeof line) <= 0) /* the input */
		return 2;
	names_ThreadPhase("parse");
	busy_ms(PARSE_MS);
	names_ThreadPhase("reply");
	if (write(to_worker[1], "q", 1) != 1)
		return 2;
	char c;
	if (read(to_main[0], &c, 1) != 1)
		return 2;
	names_ThreadPhase("done");
	pthread_join(w, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	title = argv[0];
	title_n = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) + 1 - argv[0]);
	names_sensors_register();
	if (pipe(marks))
		return 2;
	if (!strcmp(argv[1], "names"))
		return names();
	if (!strcmp(argv[1], "states"))
		return states();
	return 2;
}
