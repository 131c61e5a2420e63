/* bench: command line, thread pinning, timing and the JSON result line. */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_THREADS 64

struct worker {
	pthread_t thread;
	int index;
	int cpu; /* -1: not pinned */
	uint64_t start_ns, end_ns;
	uint64_t user_ns, sys_ns, minflt; /* of this thread, during the timed loop */
};

static enum bench_mode mode;
static uint64_t events = 10000000, warmup = 10000;
static pthread_barrier_t barrier;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bench_loop_baseline(uint64_t n, uint64_t tag)
{
	for (uint64_t i = 0; i < n; i++) {
		BENCH_KEEP(i);
		BENCH_KEEP(tag);
	}
}

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

static void run_loop(uint64_t n, uint64_t tag)
{
	if (mode == BENCH_BASELINE)
		bench_loop_baseline(n, tag);
	else
		bench_loop(n, tag);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	if (w->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
		if (err)
			fprintf(stderr, "%s-bench: cannot pin thread %d to cpu %d: %s\n",
			        bench_tool, w->index, w->cpu, strerror(err));
	}
	/* Warm-up: the first events of a thread open its buffers (not timed). */
	run_loop(warmup, (uint64_t)w->index);
	pthread_barrier_wait(&barrier);
	struct rusage r0, r1;
	getrusage(RUSAGE_THREAD, &r0);
	w->start_ns = now_ns();
	run_loop(events, (uint64_t)w->index);
	w->end_ns = now_ns();
	getrusage(RUSAGE_THREAD, &r1);
	w->user_ns = tv_ns(r1.ru_utime) - tv_ns(r0.ru_utime);
	w->sys_ns = tv_ns(r1.ru_stime) - tv_ns(r0.ru_stime);
	w->minflt = (uint64_t)(r1.ru_minflt - r0.ru_minflt);
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: %s-bench [--mode enabled|disabled|baseline] [--threads T] [--events N]\n"
	        "       [--warmup W] [--cpus LIST|none]\n"
	        "Writes N events (after W untimed warm-up events) of two int64 fields on each of\n"
	        "T threads, thread i pinned to the i-th cpu of LIST (default 0,1,...), and prints\n"
	        "one JSON line: ns_per_event (mean over threads), events_per_s (all threads).\n",
	        bench_tool);
}

static int parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = s ? strtoull(s, &end, 10) : 0;
	if (!s || errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		fprintf(stderr, "%s-bench: %s wants an integer in %llu..%llu, got '%s'\n",
		        bench_tool, opt, (unsigned long long)min, (unsigned long long)max,
		        s ? s : "");
		return -1;
	}
	*out = v;
	return 0;
}

/* "0,1,3" -> cpus; "none" -> no pinning (n = 0). */
static int parse_cpus(const char *s, int *cpus, int *n)
{
	*n = 0;
	if (!s) {
		fprintf(stderr, "%s-bench: --cpus wants a list like 0,1 or 'none'\n", bench_tool);
		return -1;
	}
	if (!strcmp(s, "none"))
		return 0;
	const char *p = s;
	while (*p) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (errno || end == p || v < 0 || v >= CPU_SETSIZE || *n == MAX_THREADS ||
		    (*end && *end != ',')) {
			fprintf(stderr, "%s-bench: bad --cpus list '%s' (at '%s')\n", bench_tool, s,
			        p);
			return -1;
		}
		cpus[(*n)++] = (int)v;
		p = *end ? end + 1 : end;
	}
	return 0;
}

static const char *mode_name(enum bench_mode m)
{
	return m == BENCH_ENABLED ? "enabled" : m == BENCH_DISABLED ? "disabled" : "baseline";
}

int main(int argc, char **argv)
{
	uint64_t threads = 1;
	int cpus[MAX_THREADS], ncpus = -1;
	for (int i = 1; i < argc; i += 2) { /* every option but --help takes a value */
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--mode")) {
			if (v && !strcmp(v, "enabled"))
				mode = BENCH_ENABLED;
			else if (v && !strcmp(v, "disabled"))
				mode = BENCH_DISABLED;
			else if (v && !strcmp(v, "baseline"))
				mode = BENCH_BASELINE;
			else {
				fprintf(stderr,
				        "%s-bench: --mode wants enabled, disabled or baseline, got "
				        "'%s'\n",
				        bench_tool, v ? v : "");
				return 2;
			}
		} else if (!strcmp(a, "--threads")) {
			if (parse_u64(a, v, 1, MAX_THREADS, &threads))
				return 2;
		} else if (!strcmp(a, "--events")) {
			if (parse_u64(a, v, 1, UINT64_MAX / MAX_THREADS / 2, &events))
				return 2;
		} else if (!strcmp(a, "--warmup")) {
			if (parse_u64(a, v, 0, UINT64_MAX / MAX_THREADS / 2, &warmup))
				return 2;
		} else if (!strcmp(a, "--cpus")) {
			if (parse_cpus(v, cpus, &ncpus))
				return 2;
		} else {
			fprintf(stderr, "%s-bench: unknown argument '%s' (see --help)\n",
			        bench_tool, a);
			return 2;
		}
	}
	if (ncpus < 0)
		for (ncpus = 0; ncpus < (int)threads; ncpus++)
			cpus[ncpus] = ncpus;

	if (mode != BENCH_BASELINE && bench_setup(mode))
		return 1;

	struct worker w[MAX_THREADS];
	/* The main thread passes the barrier too, to read the process's CPU time when the
	 * timed loops start: with the threads' own, it shows the tool's helper threads. */
	pthread_barrier_init(&barrier, NULL, (unsigned)threads + 1);
	for (int i = 0; i < (int)threads; i++) {
		w[i] = (struct worker){.index = i, .cpu = ncpus ? cpus[i % ncpus] : -1};
		int err = pthread_create(&w[i].thread, NULL, work, &w[i]);
		if (err) {
			fprintf(stderr, "%s-bench: cannot start thread %d: %s\n", bench_tool, i,
			        strerror(err));
			return 1;
		}
	}
	struct rusage p0, p1;
	pthread_barrier_wait(&barrier);
	getrusage(RUSAGE_SELF, &p0);
	uint64_t first = UINT64_MAX, last = 0, user = 0, sys = 0, minflt = 0;
	double per_event = 0;
	for (int i = 0; i < (int)threads; i++) {
		pthread_join(w[i].thread, NULL);
		first = w[i].start_ns < first ? w[i].start_ns : first;
		last = w[i].end_ns > last ? w[i].end_ns : last;
		per_event += (double)(w[i].end_ns - w[i].start_ns) / (double)events;
		user += w[i].user_ns;
		sys += w[i].sys_ns;
		minflt += w[i].minflt;
	}
	getrusage(RUSAGE_SELF, &p1);
	uint64_t process =
	    tv_ns(p1.ru_utime) + tv_ns(p1.ru_stime) - tv_ns(p0.ru_utime) - tv_ns(p0.ru_stime);
	double timed = (double)(events * threads);
	per_event /= (double)threads;
	uint64_t wall = last - first;
	printf("{\"tool\":\"%s\",\"mode\":\"%s\",\"threads\":%llu,\"events_per_thread\":%llu,"
	       "\"warmup_per_thread\":%llu,\"events_written\":%llu,\"wall_ns\":%llu,"
	       "\"ns_per_event\":%.4f,\"events_per_s\":%.0f,\"user_ns_per_event\":%.4f,"
	       "\"sys_ns_per_event\":%.4f,\"process_cpu_ns_per_event\":%.4f,"
	       "\"faults_per_kevent\":%.4f,\"discarded\":%lld}\n",
	       bench_tool, mode_name(mode), (unsigned long long)threads, (unsigned long long)events,
	       (unsigned long long)warmup, (unsigned long long)((events + warmup) * threads),
	       (unsigned long long)wall, per_event, wall ? timed * 1e9 / (double)wall : 0.0,
	       (double)user / timed, (double)sys / timed, (double)process / timed,
	       (double)minflt * 1000.0 / timed,
	       mode == BENCH_BASELINE ? 0LL : (long long)bench_discarded());
	fflush(stdout);
	return 0;
}
