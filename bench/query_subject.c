/* query-subject: the program recorded for the query benchmark (bench/query.sh).
 *
 * A server in miniature: each thread keeps up to QS_SLOTS requests open at once; while
 * they are open it sends messages for them and takes and releases locks for them. It
 * fires the sensors generated from bench/query.vgl, which give the relations
 *
 *   Request  interval  conn 0..999, kind GET|PUT|POST|DELETE, nbytes
 *   Lock     interval  lock 0..63, conn (of an open request of the same thread)
 *   Send     event     conn, mailbox 0..99, process "P1".."P20", size 0..65535
 *   Audit    event     conn 0..999, level 0..15: about one event in 1,000, a rare relation
 *                      interleaved with the others (its own generator: the other values
 *                      are those of the seed whether or not it fires)
 *
 * Intervals are short (a few open per thread) so that the overlap joins stay bounded.
 * Exactly --events events are written in total (the vg.* events of the runtime aside),
 * split over --threads threads; every interval is closed before a thread ends. The run
 * is deterministic in its values for a given --seed (the interleaving is not).
 *
 * usage: query-subject [--events N] [--threads T] [--seed S]; one JSON line on stdout.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qbench_sensors.h"

#define QS_SLOTS 4
#define QS_MAX_THREADS 64

static const char *const kinds[] = {"GET", "PUT", "POST", "DELETE"};
static const char *const processes[] = {"P1",  "P2",  "P3",  "P4",  "P5",  "P6",  "P7",
                                        "P8",  "P9",  "P10", "P11", "P12", "P13", "P14",
                                        "P15", "P16", "P17", "P18", "P19", "P20"};

struct slot {
	bool open;
	uint32_t conn, nbytes;
	const char *kind;
	int64_t lock; /* -1: no lock held for this request */
};

struct worker {
	pthread_t thread;
	uint64_t quota, seed;
	uint64_t emitted, requests, locks, sends, audits;
};

static pthread_barrier_t start_line;

/* splitmix64: small, fast, and good enough to pick values. */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static uint32_t below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(next(s) % n);
}

/* A random slot whose state is `open` (and, when `locked` >= 0, whose lock state is
 * `locked`), or -1. */
static int pick(uint64_t *s, const struct slot *sl, bool open, int locked)
{
	int k = (int)below(s, QS_SLOTS);
	for (int i = 0; i < QS_SLOTS; i++) {
		const struct slot *c = &sl[(k + i) % QS_SLOTS];
		if (c->open == open && (locked < 0 || (c->lock >= 0) == (locked > 0)))
			return (k + i) % QS_SLOTS;
	}
	return -1;
}

static void unlock(struct worker *w, struct slot *c)
{
	qbench_Lock_end((uint32_t)c->lock, c->conn);
	c->lock = -1;
	w->emitted++;
}

static void end_request(struct worker *w, struct slot *c)
{
	if (c->lock >= 0)
		unlock(w, c);
	qbench_Request_end(c->conn, c->kind, c->nbytes);
	c->open = false;
	w->emitted++;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	uint64_t s = w->seed, audit = w->seed ^ 0x5a5a5a5a5a5a5a5au;
	struct slot sl[QS_SLOTS] = {0};
	uint64_t pending = 0; /* end events owed for the intervals still open */
	pthread_barrier_wait(&start_line);
	while (w->emitted + pending < w->quota) {
		/* Opening an interval costs two events (begin now, end later). */
		bool room = w->emitted + pending + 2 <= w->quota;
		if (below(&audit, 1000) == 0 && w->emitted + pending + 1 <= w->quota) {
			qbench_Audit(below(&audit, 1000), below(&audit, 16));
			w->emitted++, w->audits++;
			continue;
		}
		uint32_t r = below(&s, 100);
		int k;
		if (r >= 48 && r < 80) {
			/* Requests: begin in a free slot (48..63) or end one (64..79). */
			int free = pick(&s, sl, false, -1), used = pick(&s, sl, true, -1);
			bool want_begin = r < 64 ? free >= 0 : used < 0;
			if (want_begin && free >= 0 && room) {
				struct slot *c = &sl[free];
				*c = (struct slot){true, below(&s, 1000), below(&s, 1u << 20),
				                   kinds[below(&s, 4)], -1};
				qbench_Request_begin(c->conn, c->kind, c->nbytes);
				w->emitted++, pending++, w->requests++;
				continue;
			}
			if (used >= 0) {
				pending -= 1 + (sl[used].lock >= 0);
				end_request(w, &sl[used]);
				continue;
			}
		} else if (r >= 80 && r < 90 && room && (k = pick(&s, sl, true, 0)) >= 0) {
			sl[k].lock = below(&s, 64);
			qbench_Lock_begin((uint32_t)sl[k].lock, sl[k].conn);
			w->emitted++, pending++, w->locks++;
			continue;
		} else if (r >= 90 && (k = pick(&s, sl, true, 1)) >= 0) {
			pending--;
			unlock(w, &sl[k]);
			continue;
		}
		/* Send, for an open request when there is one (else any connection). */
		k = pick(&s, sl, true, -1);
		uint32_t conn = k >= 0 ? sl[k].conn : below(&s, 1000);
		uint32_t mailbox = below(&s, 100);
		const char *process = processes[below(&s, 20)];
		qbench_Send(conn, mailbox, process, below(&s, 65536));
		w->emitted++, w->sends++;
	}
	for (int i = 0; i < QS_SLOTS; i++)
		if (sl[i].open)
			end_request(w, &sl[i]);
	return NULL;
}

static uint64_t number(const char *opt, const char *v, uint64_t max)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || end == v || *end || *v == '-' || n < 1 || n > max) {
		fprintf(stderr, "query-subject: %s wants an integer in 1..%" PRIu64 ", not '%s'\n",
		        opt, max, v);
		exit(2);
	}
	return n;
}

int main(int argc, char **argv)
{
	uint64_t events = 10000000, threads = 2, seed = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (i + 1 >= argc ||
		    (strcmp(a, "--events") && strcmp(a, "--threads") && strcmp(a, "--seed"))) {
			fprintf(stderr,
			        "usage: query-subject [--events N] [--threads T] [--seed S]\n");
			return 2;
		}
		const char *v = argv[++i];
		if (!strcmp(a, "--events"))
			events = number(a, v, UINT64_MAX / 2);
		else if (!strcmp(a, "--threads"))
			threads = number(a, v, QS_MAX_THREADS);
		else
			seed = number(a, v, UINT64_MAX);
	}
	qbench_sensors_register();

	struct worker w[QS_MAX_THREADS] = {0};
	pthread_barrier_init(&start_line, NULL, (unsigned)threads);
	for (uint64_t t = 0; t < threads; t++) {
		w[t].quota = events / threads + (t == 0 ? events % threads : 0);
		w[t].seed = seed * 1000003u + t;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t t = 0; t < threads; t++)
		if (pthread_create(&w[t].thread, NULL, run, &w[t])) {
			fprintf(stderr, "query-subject: cannot start thread %" PRIu64 "\n", t);
			return 1;
		}
	uint64_t emitted = 0, requests = 0, locks = 0, sends = 0, audits = 0;
	for (uint64_t t = 0; t < threads; t++) {
		pthread_join(w[t].thread, NULL);
		emitted += w[t].emitted, requests += w[t].requests;
		locks += w[t].locks, sends += w[t].sends, audits += w[t].audits;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_barrier_destroy(&start_line);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("{\"events\":%" PRIu64 ",\"Request\":%" PRIu64 ",\"Lock\":%" PRIu64
	       ",\"Send\":%" PRIu64 ",\"Audit\":%" PRIu64 ",\"threads\":%" PRIu64
	       ",\"seconds\":%.3f,\"recording\":%d,"
	       "\"discarded\":%" PRIu64 "}\n",
	       emitted, requests, locks, sends, audits, threads, s, vg_recording(),
	       (uint64_t)vg_events_discarded());
	return emitted == events ? 0 : 1;
}
