/* A subject program for the runtime's end-to-end tests: linked with libvigil, it
 * records events of every field type and per-thread sequences whose progress it
 * publishes in a shared file, so a test can kill it at any moment and check that every
 * completed event is in the trace. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vigil/vigil.h"

static long events_per_thread = 1000;
static int nthreads = 1;
static long sleep_every = 0;        /* sleep 1 ms every N events (to be killed mid-run) */
static volatile uint64_t *progress; /* per thread: events committed */
static vg_sensor *seq_sensor, *all_sensor;

static const vg_field_desc seq_fields[] = {{"thread", VG_UINT32, NULL}, {"seq", VG_UINT64, NULL}};
static const vg_type_desc seq_desc = {
    "test.seq", NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0, seq_fields, 2, -1, -1, -1, VG_OP_ACTIVITY};

static const vg_field_desc all_fields[] = {
    {"i8", VG_INT8, NULL},    {"i16", VG_INT16, NULL},  {"i32", VG_INT32, NULL},
    {"i64", VG_INT64, NULL},  {"u8", VG_UINT8, NULL},   {"u16", VG_UINT16, NULL},
    {"u32", VG_UINT32, NULL}, {"u64", VG_UINT64, NULL}, {"d", VG_DOUBLE, NULL},
    {"s", VG_STRING, NULL},   {"b", VG_BYTES, NULL},    {"w", VG_ENTITY, "Widget"}};
static const vg_type_desc all_desc = {
    "test.all", NULL, VG_KIND_EVENT, VG_FLAG_TARGET, 0, all_fields, 12, -1, -1, 11, VG_OP_ACTIVITY};

/* The inline fast path, as generated sensors will use it. */
static inline void record_seq(uint32_t thread, uint64_t seq)
{
	if (!vg_on(seq_sensor))
		return;
	uint8_t *p = vg_event_begin(seq_sensor, 12);
	if (!p)
		return;
	p = vg_put_u32(p, thread);
	p = vg_put_u64(p, seq);
	vg_event_commit(p);
}

static void record_all(int k, vg_entity *w)
{
	static const char *const strings[] = {"plain", "with \"quotes\" and \\", "tab\there", "",
	                                      "ünïcödé"};
	uint8_t bytes[5] = {0, 1, 0xfe, 0xff, (uint8_t)k};
	vg_value v[12];
	v[0].i = -k;
	v[1].i = -1000 * k;
	v[2].i = -100000 * k;
	v[3].i = -(int64_t)10000000000 * k;
	v[4].u = (uint8_t)(200 + k);
	v[5].u = (uint16_t)(60000 + k);
	v[6].u = 4000000000u + (uint32_t)k;
	v[7].u = UINT64_MAX - (uint64_t)k;
	v[8].d = k + 0.25;
	v[9].s = strings[k % 5];
	v[10].b.data = bytes;
	v[10].b.len = (uint32_t)(k % 6);
	v[11].e = w;
	vg_emit(all_sensor, v);
}

static void *worker(void *arg)
{
	uint32_t index = (uint32_t)(uintptr_t)arg;
	char name[16];
	snprintf(name, sizeof name, "worker-%u", index);
	pthread_setname_np(pthread_self(), name);
	for (long i = 0; i < events_per_thread; i++) {
		record_seq(index, (uint64_t)i);
		if (progress)
			progress[index] = (uint64_t)i + 1;
		if (sleep_every && i % sleep_every == sleep_every - 1) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

/* A type registered from another thread while the others record. */
static pthread_t late_thread;
static void *register_late(void *arg)
{
	(void)arg;
	static const vg_field_desc f[] = {{"note", VG_STRING, NULL}};
	static const vg_type_desc d = {
	    "test.late", NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0, f, 1, -1, -1, -1, VG_OP_ACTIVITY};
	vg_sensor *s = vg_sensor_register(&d);
	vg_value v[1] = {{.s = "registered late"}};
	vg_emit(s, v);
	return NULL;
}

/* A signal handler that records: it may interrupt an event of its own thread, which the
 * runtime must detect (the nested event is discarded and counted, never interleaved). */
static volatile uint64_t handler_seq, handler_dropped;
static void on_alarm(int sig)
{
	(void)sig;
	if (!vg_on(seq_sensor))
		return;
	uint8_t *p = vg_event_begin(seq_sensor, 12);
	if (!p) {
		handler_dropped++;
		return;
	}
	p = vg_put_u32(p, 500);
	p = vg_put_u64(p, handler_seq);
	vg_event_commit(p);
	handler_seq++;
}

/* --escape N: N events of 40 sensors (ids past the compact header's 31), each carrying
 * its own header timestamp (`at`), with the clock moved forward between some of them by
 * gaps on both sides of 2^27 ns and by seconds: a fake long sleep. Readers must give
 * every event the time in its `at`. */
static void clock_jump(uint64_t ns)
{
#if defined(__x86_64__)
	if (!vg__clock.use_tsc) { /* take the clock over: 1 TSC tick counts as 1 ns */
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		vg__clock.base_tsc = ((uint64_t)hi << 32) | lo;
		vg__clock.base_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
		vg__clock.mult = (uint64_t)1 << 32;
		vg__clock.use_tsc = 1;
	}
	vg__clock.base_ns += ns;
#else
	(void)ns;
#endif
}

static void escape_events(long n)
{
	static const vg_field_desc f[] = {{"k", VG_UINT32, NULL}, {"at", VG_UINT64, NULL}};
	enum { NCLASSES = 40 };
	static char names[NCLASSES][32];
	static vg_type_desc d[NCLASSES];
	vg_sensor *s[NCLASSES];
	for (int k = 0; k < NCLASSES; k++) {
		snprintf(names[k], sizeof names[k], "test.class.%d", k);
		d[k] = (vg_type_desc){names[k], NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0, f, 2, -1,
		                      -1,       -1,   VG_OP_ACTIVITY};
		s[k] = vg_sensor_register(&d[k]);
	}
	static const uint64_t gaps[] = {(1u << 27) - 1, 1u << 27, (1u << 27) + 1, 3000000000ull,
	                                1u << 26};
	for (long i = 0; i < n; i++) {
		if (i % 7 == 3)
			clock_jump(gaps[(i / 7) % 5]);
		uint32_t k = (uint32_t)((i * 13) % NCLASSES);
		uint8_t *p = vg_event_begin(s[k], 12);
		if (!p)
			continue;
		p = vg_put_u32(p, k);
		p = vg_put_u64(p, vg_event_time());
		vg_event_commit(p);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: vg_subject [--events N] [--threads T] [--sleep-every N] "
	           "[--progress FILE] [--all K] [--fork] [--exec PROGRAM] [--mute-widget I] "
	           "[--toggle] [--late-type] [--escape N]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"events", required_argument, 0, 'n'},
	                                     {"threads", required_argument, 0, 't'},
	                                     {"sleep-every", required_argument, 0, 'e'},
	                                     {"progress", required_argument, 0, 'p'},
	                                     {"all", required_argument, 0, 'a'},
	                                     {"fork", no_argument, 0, 'f'},
	                                     {"exec", required_argument, 0, 'x'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {"mute-widget", required_argument, 0, 'w'},
	                                     {"late-type", no_argument, 0, 'l'},
	                                     {"toggle", no_argument, 0, 'g'},
	                                     {"signals", no_argument, 0, 'S'},
	                                     {"escape", required_argument, 0, 'E'},
	                                     {0, 0, 0, 0}};
	const char *progress_path = NULL, *exec_path = NULL;
	int nall = 0, do_fork = 0, mute = -1, late = 0, toggle = 0, signals = 0, c;
	long escape = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			events_per_thread = atol(optarg);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		case 'e':
			sleep_every = atol(optarg);
			break;
		case 'p':
			progress_path = optarg;
			break;
		case 'a':
			nall = atoi(optarg);
			break;
		case 'f':
			do_fork = 1;
			break;
		case 'x':
			exec_path = optarg;
			break;
		case 'w':
			mute = atoi(optarg);
			break;
		case 'l':
			late = 1;
			break;
		case 'g':
			toggle = 1;
			break;
		case 'S':
			signals = 1;
			break;
		case 'E':
			escape = atol(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 256) {
		fprintf(stderr, "vg_subject: --threads must be 1..256\n");
		return 2;
	}
	if (progress_path) {
		int fd = open(progress_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || ftruncate(fd, 256 * 8) < 0) {
			perror(progress_path);
			return 1;
		}
		progress = mmap(NULL, 256 * 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (progress == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
	}
	seq_sensor = vg_sensor_register(&seq_desc);
	all_sensor = vg_sensor_register(&all_desc);
	if (escape > 0) {
		escape_events(escape);
		return 0;
	}

	vg_entity widgets[3];
	const char *names[3] = {"W1", "W2", "W3"};
	for (int i = 0; i < 3; i++)
		vg_entity_create(&widgets[i], "Widget", 0x1000 + (uint64_t)i, names[i]);
	if (mute >= 0 && mute < 3) /* the target's flag: its events are not recorded */
		vg_entity_disable(&widgets[mute]);
	for (int k = 0; k < nall; k++)
		record_all(k, &widgets[k % 3]);
	if (mute >= 0 && mute < 3)
		vg_entity_enable(&widgets[mute]);
	if (toggle) { /* counters: two disables need two enables */
		vg_sensor_disable(seq_sensor);
		vg_sensor_disable(seq_sensor);
		record_seq(999, 0); /* not recorded */
		vg_sensor_enable(seq_sensor);
		record_seq(999, 1); /* not recorded: still below one */
		vg_sensor_enable(seq_sensor);
		record_seq(999, 2); /* recorded */
	}
	vg_entity_reclaim(&widgets[0]);
	vg_entity_create(&widgets[0], "Widget", 0x1000, "W1-again"); /* same id, next gen */
	record_all(nall, &widgets[0]);

	pid_t kid = -1;
	if (do_fork) {
		kid = fork();
		if (kid == 0) {
			record_seq(1000, 0);
			if (exec_path) {
				execl(exec_path, exec_path, "--events", "3", (char *)NULL);
				_exit(127);
			}
			_exit(0);
		}
	}
	if (late)
		pthread_create(&late_thread, NULL, register_late, NULL);
	if (signals) {
		struct sigaction sa = {0};
		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		struct itimerval it = {{0, 50}, {0, 50}};
		setitimer(ITIMER_REAL, &it, NULL);
	}
	pthread_t th[256];
	for (int i = 1; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	worker((void *)0);
	for (int i = 1; i < nthreads; i++)
		pthread_join(th[i], NULL);
	if (late)
		pthread_join(late_thread, NULL);
	if (signals) {
		struct itimerval off = {{0, 0}, {0, 0}};
		setitimer(ITIMER_REAL, &off, NULL);
		printf("handler recorded %llu, dropped %llu\n", (unsigned long long)handler_seq,
		       (unsigned long long)handler_dropped);
	}
	if (kid > 0)
		waitpid(kid, NULL, 0);
	return 0;
}
