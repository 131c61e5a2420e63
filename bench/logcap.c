/* bench/logcap.c: the per-call cost of log capture (docs/logcapture.md) next to writing
 * the same messages through common disk loggers, in one run; and the error of the
 * transition-time quantiles the capture keeps, timing sampled or not.
 *
 *   logcap-bench [--calls N] [--reps R] [--transitions N] [--json FILE]
 *
 * VIGIL_BENCH_SMOKE=1 makes the defaults tiny (bench/README.md, "Smoke run"). Exit status 1
 * when a measurement fails or the model read back does not count every transition.
 *
 * The program runs itself once per configuration (capture off; capture with the default
 * timing sample; capture timing every transition) with the settings in the environment,
 * since the runtime reads them at start. Each child times loops over 4 call sites:
 *   vg_log        VG_LOG(DEBUG, ...) at 4 sites (C API), not written (VIGIL_LOG_PASS=none)
 *   syslog        syslog(LOG_DEBUG, ...) at 4 sites: intercepted (libvigil interposes libc's
 *                 syslog, as in the preload), modelled, not handed on
 *   fprintf-stderr  fprintf(stderr, ...) at 4 sites: intercepted, modelled, not written
 *   syslog-tmpl   syslog(LOG_DEBUG, "[%ld-%d] %s", ...) of 4 PostgreSQL-like messages at
 *                 4 sites: each message's template is the event (docs/logcapture.md)
 *   write-stderr  write(2) of 4 PostgreSQL-like stderr lines: templated likewise
 *   disk-fprintf  fprintf to a file, fully buffered (the cheapest common disk logger)
 *   disk-write    snprintf + write(2) of each line to an O_APPEND file (unbuffered logger)
 * and prints ns of the thread's CPU time per call (median of R repetitions; CPU time,
 * not elapsed time, so that other work on a shared machine does not count). Then a last
 * child measures quantile errors: two sites separated by a random busy wait of 20-60 us, the exact
 * durations measured beside the capture's own, the model written on demand and read back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "../src/common/sketch_index.h"
#include "sentinel_tracer.h"
#include <vigil/log.h>

#define KEEP(x) __asm__ __volatile__("" : : "r"(x) : "memory")

static long calls = 2000000;
static int reps = 5;
static long transitions = 200000;
static char tmp[] = "/tmp/vigil-logcap-bench.XXXXXX";

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of the calling thread: the loops are timed by it, so that time the thread
 * spends preempted by other work on a shared machine does not count as the call's. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the loops: 4 call sites each, `n` iterations ---- */

static void loop_empty(long n)
{
	for (long i = 0; i < n; i++) {
		KEEP(i);
		KEEP(i + 1);
		KEEP(i + 2);
		KEEP(i + 3);
	}
}

static void loop_vg_log(long n)
{
	for (long i = 0; i < n; i++) {
		VG_LOG(VG_LOG_DEBUG, "lookup %ld", i);
		VG_LOG(VG_LOG_DEBUG, "hit %ld", i);
		VG_LOG(VG_LOG_DEBUG, "pin %ld", i);
		VG_LOG(VG_LOG_DEBUG, "unpin %ld", i);
	}
}

static void loop_syslog(long n)
{
	for (long i = 0; i < n; i++) {
		syslog(LOG_DEBUG, "lookup %ld", i);
		syslog(LOG_DEBUG, "hit %ld", i);
		syslog(LOG_DEBUG, "pin %ld", i);
		syslog(LOG_DEBUG, "unpin %ld", i);
	}
}

/* Sites that do not identify the statement: PostgreSQL's syslog("[%lu-%d] %s") and its
 * write(2) of a whole line to stderr; the event is each message's template. */
static void loop_syslog_tmpl(long n)
{
	for (long i = 0; i < n; i++) {
		syslog(LOG_DEBUG, "[%ld-%d] %s", i, 1,
		       "DEBUG:  StartTransaction(1) name: unnamed; blockState: DEFAULT; state: "
		       "INPROGRESS, xid/subid/cid: 0/1/0");
		syslog(LOG_DEBUG, "[%ld-%d] %s", i, 1, "DEBUG:  ProcessQuery");
		syslog(LOG_DEBUG, "[%ld-%d] %s", i, 1,
		       "DEBUG:  CommitTransaction(1) name: unnamed; blockState: END; state: "
		       "INPROGRESS, xid/subid/cid: 731/1/0");
		syslog(LOG_DEBUG, "[%ld-%d] %s", i, 1,
		       "LOG:  checkpoint complete: wrote 3 buffers (0.0%); 0 WAL file(s) added");
	}
}

static void loop_write_stderr(long n)
{
	static const char l1[] = "2026-11-26 16:35:23.123 UTC [81234] DEBUG:  StartTransaction(1)"
	                         " name: unnamed; blockState: DEFAULT; state: INPROGRESS\n";
	static const char l2[] = "2026-11-26 16:35:23.123 UTC [81234] DEBUG:  ProcessQuery\n";
	static const char l3[] = "2026-11-26 16:35:23.124 UTC [81234] DEBUG:  CommitTransaction(1)"
	                         " name: unnamed; blockState: END; state: INPROGRESS\n";
	static const char l4[] = "2026-11-26 16:35:23.125 UTC [81234] LOG:  checkpoint complete: "
	                         "wrote 3 buffers (0.0%); 0 WAL file(s) added\n";
	for (long i = 0; i < n; i++) {
		KEEP(write(2, l1, sizeof l1 - 1));
		KEEP(write(2, l2, sizeof l2 - 1));
		KEEP(write(2, l3, sizeof l3 - 1));
		KEEP(write(2, l4, sizeof l4 - 1));
	}
}

static void loop_fprintf_stderr(long n)
{
	for (long i = 0; i < n; i++) {
		fprintf(stderr, "lookup %ld\n", i);
		fprintf(stderr, "hit %ld\n", i);
		fprintf(stderr, "pin %ld\n", i);
		fprintf(stderr, "unpin %ld\n", i);
	}
}

/* The peer: an in-memory tracer as Sentinel's paper describes it (sentinel_tracer.h). */
static void loop_sentinel(long n)
{
	for (long i = 0; i < n; i++) {
		SENTINEL_LOG("lookup %ld", i);
		SENTINEL_LOG("hit %ld", i);
		SENTINEL_LOG("pin %ld", i);
		SENTINEL_LOG("unpin %ld", i);
	}
}

static FILE *disk;
static int disk_fd;

static void loop_disk_fprintf(long n)
{
	for (long i = 0; i < n; i++) {
		fprintf(disk, "lookup %ld\n", i);
		fprintf(disk, "hit %ld\n", i);
		fprintf(disk, "pin %ld\n", i);
		fprintf(disk, "unpin %ld\n", i);
	}
	fflush(disk);
}

static void write_line(const char *fmt, long i)
{
	char buf[128];
	int len = snprintf(buf, sizeof buf, fmt, i);
	if (write(disk_fd, buf, (size_t)len) < 0)
		abort();
}

static void loop_disk_write(long n)
{
	for (long i = 0; i < n; i++) {
		write_line("lookup %ld\n", i);
		write_line("hit %ld\n", i);
		write_line("pin %ld\n", i);
		write_line("unpin %ld\n", i);
	}
}

/* An error line from a child: straight to fd 2 with write(2), because the child's own
 * fprintf(stderr) is captured and, with VIGIL_LOG_PASS=none, never written. */
__attribute__((format(printf, 1, 2))) static void child_error(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0 && write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1) < 0)
		return;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* ns of CPU per call: median over the repetitions of the thread's CPU time / (4 n). */
static double time_loop(void (*fn)(long), long n)
{
	double v[32];
	fn(n / 20 + 1); /* warm up: first calls register the sites */
	for (int r = 0; r < reps; r++) {
		uint64_t t0 = cpu_ns();
		fn(n);
		v[r] = (double)(cpu_ns() - t0) / (4.0 * (double)n);
	}
	qsort(v, (size_t)reps, sizeof v[0], cmp_double);
	return v[reps / 2];
}

static int child_costs(const char *config)
{
	char path[sizeof tmp + 32];
	snprintf(path, sizeof path, "%s/disk-%s.log", tmp, config);
	disk = fopen(path, "w");
	snprintf(path, sizeof path, "%s/disk-%s.raw", tmp, config);
	disk_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
	if (!disk || disk_fd < 0) {
		child_error("logcap-bench: disk log: %s\n", strerror(errno));
		return 1;
	}
	/* Capture off, syslog and stderr calls really go out (stderr to /dev/null here):
	 * fewer of them. */
	long io_calls = vg_log_capturing() ? calls : calls / 100;
	int saved_err = dup(2), null = open("/dev/null", O_WRONLY);
	dup2(null, 2);
	double e = time_loop(loop_empty, calls);
	double a = time_loop(loop_vg_log, calls);
	double s = time_loop(loop_syslog, io_calls);
	double f = time_loop(loop_fprintf_stderr, io_calls);
	/* Templating costs about a microsecond: fewer calls in every configuration. */
	long tmpl_calls = calls / 100 > 0 ? calls / 100 : 1;
	double stm = time_loop(loop_syslog_tmpl, tmpl_calls);
	double wtm = time_loop(loop_write_stderr, tmpl_calls);
	dup2(saved_err, 2);
	close(null);
	close(saved_err);
	double st = time_loop(loop_sentinel, calls);
	/* The peer must have counted every call it was given (warm-up included). */
	uint64_t want = 4 * (uint64_t)((calls / 20 + 1) + (long)reps * calls);
	if (sentinel_events() != want || sentinel_transitions() != want - 1) {
		child_error("logcap-bench: the Sentinel-style tracer counted %llu events, %llu "
		            "transitions of %llu calls\n",
		            (unsigned long long)sentinel_events(),
		            (unsigned long long)sentinel_transitions(), (unsigned long long)want);
		return 1;
	}
	double df = time_loop(loop_disk_fprintf, calls);
	double dw = time_loop(loop_disk_write, calls / 10);
	printf("{\"config\":\"%s\",\"capturing\":%d,\"empty\":%.2f,\"vg_log\":%.2f,\"syslog\":%.2f,"
	       "\"fprintf_stderr\":%.2f,\"syslog_tmpl\":%.2f,\"write_stderr\":%.2f,"
	       "\"sentinel\":%.2f,\"disk_fprintf\":%.2f,\"disk_write\":%.2f}\n",
	       config, vg_log_capturing(), e, a, s, f, stm, wtm, st, df, dw);
	fclose(disk);
	close(disk_fd);
	return 0;
}

/* ---- quantile error ---- */

static void spin_until(uint64_t t)
{
	while (now_ns() < t)
		;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The model file the runtime wrote last into the trace `dir`: the highest n of
 * <dir>/logmodel-<image>-<n>.vgm (each write holds everything counted so far; this
 * process is the trace's only image). docs/logcapture.md, "Model files". */
static int latest_model(const char *dir, char *path, size_t len)
{
	char pat[PATH_MAX];
	snprintf(pat, sizeof pat, "%s/logmodel-*.vgm", dir);
	glob_t g;
	if (glob(pat, 0, NULL, &g) != 0) {
		child_error("logcap-bench: no model file %s\n", pat);
		return -1;
	}
	long best = -1;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *dash = strrchr(g.gl_pathv[i], '-');
		long n = dash ? strtol(dash + 1, NULL, 10) : -1;
		if (n > best) {
			best = n;
			snprintf(path, len, "%s", g.gl_pathv[i]);
		}
	}
	globfree(&g);
	return best < 0 ? -1 : 0;
}

/* The bucket counts of transition from -> to in the latest model file of `dir`. */
static int read_model(const char *dir, uint32_t from, uint32_t to, uint64_t *buckets,
                      uint64_t *count)
{
	char path[PATH_MAX];
	if (latest_model(dir, path, sizeof path) < 0)
		return -1;
	FILE *p = fopen(path, "r");
	if (!p) {
		child_error("logcap-bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, p) > 0) {
		unsigned a, b;
		unsigned long long c, sum;
		int off;
		if (sscanf(line, "transition %u %u %llu %llu%n", &a, &b, &c, &sum, &off) != 4 ||
		    a != from || b != to)
			continue;
		*count += c;
		for (char *q = line + off; *q == ' ';) {
			unsigned bk;
			unsigned long long n;
			int used;
			if (sscanf(q, " %u:%llu%n", &bk, &n, &used) != 2 || bk >= VG_SKETCH_BUCKETS)
				break;
			buckets[bk] += n;
			q += used;
		}
	}
	free(line);
	fclose(p);
	return 0;
}

static double sketch_quantile(const uint64_t *b, uint64_t total, double q)
{
	uint64_t rank = (uint64_t)(q * (double)(total - 1)), seen = 0;
	for (uint32_t i = 0; i < VG_SKETCH_BUCKETS; i++) {
		seen += b[i];
		if (seen > rank)
			return vg_sketch_bucket_value(i);
	}
	return 0;
}

static int child_quantiles(const char *config, long n)
{
	static vg_log_site start = {0, VG_LOG_DEBUG, __FILE__, __LINE__, "start %ld", NULL};
	static vg_log_site end = {0, VG_LOG_DEBUG, __FILE__, __LINE__, "end %ld", NULL};
	uint64_t *exact = malloc((size_t)n * sizeof *exact);
	uint64_t *buckets = calloc(VG_SKETCH_BUCKETS, sizeof *buckets);
	if (!exact || !buckets)
		return 1;
	uint32_t x = 12345;
	for (long i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		uint64_t wait = 20000 + x % 40000; /* 20-60 us */
		vg_log_hit(&start);
		uint64_t t1 = now_ns();
		spin_until(t1 + wait);
		uint64_t t2 = now_ns();
		vg_log_hit(&end);
		exact[i] = t2 - t1;
	}
	if (vg_log_model_write() != 0) {
		child_error("logcap-bench: vg_log_model_write: %s\n", strerror(errno));
		return 1;
	}
	uint64_t count = 0;
	const char *dir = getenv("VIGIL_OUT");
	if (read_model(dir, atomic_load(&start.id), atomic_load(&end.id), buckets, &count) < 0)
		return 1;
	uint64_t timed = 0;
	for (uint32_t i = 0; i < VG_SKETCH_BUCKETS; i++)
		timed += buckets[i];
	/* Counts are never sampled: the model must hold every transition, and timing every
	 * transition must time each one. */
	int every = !strcmp(config, "q-every");
	if (count != (uint64_t)n || timed == 0 || (every && timed != (uint64_t)n)) {
		child_error("logcap-bench: %s: the model counts %llu transitions (%llu timed), the "
		            "program made %ld\n",
		            config, (unsigned long long)count, (unsigned long long)timed, n);
		return 1;
	}
	qsort(exact, (size_t)n, sizeof *exact, cmp_u64);
	static const double qs[] = {0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99};
	double worst = 0;
	printf(
	    "{\"config\":\"%s\",\"transitions\":%ld,\"counted\":%llu,\"timed\":%llu,\"errors\":{",
	    config, n, (unsigned long long)count, (unsigned long long)timed);
	for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
		double ex = (double)exact[(size_t)(qs[i] * (double)(n - 1))];
		double est = timed ? sketch_quantile(buckets, timed, qs[i]) : 0;
		double err = fabs(est - ex) / ex;
		worst = err > worst ? err : worst;
		printf("%s\"p%g\":%.5f", i ? "," : "", qs[i] * 100, err);
	}
	printf("},\"worst\":%.5f}\n", worst);
	free(exact);
	free(buckets);
	return 0;
}

/* ---- the parent: one child per configuration ---- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

struct config {
	const char *name, *out, *timing;
};

static int run_child(const struct config *c, const char *what, char *line, size_t len)
{
	int fds[2];
	if (pipe(fds) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char out[sizeof tmp + 32];
		snprintf(out, sizeof out, "%s/%s", tmp, c->name);
		if (c->out)
			setenv("VIGIL_OUT", out, 1);
		else
			unsetenv("VIGIL_OUT");
		setenv("VIGIL_LOG_PASS", "none", 1);
		setenv("VIGIL_LOG_TIMING", c->timing, 1);
		dup2(fds[1], 1);
		close(fds[0]);
		char n[32];
		snprintf(n, sizeof n, "%ld", calls);
		char r[16];
		snprintf(r, sizeof r, "%d", reps);
		char t[32];
		snprintf(t, sizeof t, "%ld", transitions);
		execl("/proc/self/exe", "logcap-bench", "--child", what, c->name, n, r, tmp, t,
		      (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	ssize_t got = 0, k;
	while ((k = read(fds[0], line + got, len - 1 - (size_t)got)) > 0)
		got += k;
	line[got > 0 ? got : 0] = 0;
	close(fds[0]);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 && got > 0 ? 0 : -1;
}

static double field(const char *json, const char *name)
{
	char key[64];
	snprintf(key, sizeof key, "\"%s\":", name);
	const char *p = strstr(json, key);
	return p ? strtod(p + strlen(key), NULL) : NAN;
}

int main(int argc, char **argv)
{
	if (argc == 8 && !strcmp(argv[1], "--child")) {
		calls = atol(argv[4]);
		reps = atoi(argv[5]);
		strcpy(tmp, argv[6]);
		transitions = atol(argv[7]);
		if (!strcmp(argv[2], "costs"))
			return child_costs(argv[3]);
		return child_quantiles(argv[3], transitions);
	}
	const char *smoke = getenv("VIGIL_BENCH_SMOKE");
	if (smoke && !strcmp(smoke, "1"))
		calls = 20000, reps = 1, transitions = 2000;
	const char *json = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			calls = atol(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--transitions") && i + 1 < argc)
			transitions = atol(argv[++i]);
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else {
			fprintf(
			    stderr,
			    "usage: logcap-bench [--calls N] [--reps R] [--transitions N] [--json "
			    "FILE]\n"
			    "  e.g. logcap-bench --calls 1000000 --reps 7 --json logcap.json\n");
			return !strcmp(argv[i], "--help") ? 0 : 2;
		}
	}
	if (calls < 1000 || reps < 1 || reps > 31 || transitions < 100) {
		fprintf(stderr, "logcap-bench: --calls must be >= 1000, --reps 1..31 and "
		                "--transitions >= 100\n");
		return 2;
	}
	if (!mkdtemp(tmp)) {
		perror("logcap-bench: mkdtemp");
		return 1;
	}
	static const struct config configs[] = {
	    {"off", NULL, "16"}, {"sampled", "x", "16"}, {"every", "x", "1"}};
	char res[3][1024], q[2][1024];
	int rc = 0;
	for (int i = 0; i < 3 && !rc; i++)
		if (run_child(&configs[i], "costs", res[i], sizeof res[i]) < 0)
			rc = 1;
	for (int i = 0; i < 2 && !rc; i++) {
		const struct config *c = &configs[i + 1];
		struct config qc = {i ? "q-every" : "q-sampled", "x", c->timing};
		if (run_child(&qc, "quantiles", q[i], sizeof q[i]) < 0)
			rc = 1;
	}
	nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (rc) {
		fprintf(stderr, "logcap-bench: a measurement failed\n");
		return 1;
	}
	if (json) {
		FILE *f = fopen(json, "w");
		if (!f) {
			fprintf(stderr, "logcap-bench: %s: %s\n", json, strerror(errno));
			return 1;
		}
		for (int i = 0; i < 3; i++)
			fputs(res[i], f);
		fputs(q[0], f);
		fputs(q[1], f);
		fclose(f);
	}
	printf(
	    "\n## log capture: ns of CPU per call (median of %d x %ld iterations of 4 sites)\n\n",
	    reps, calls);
	printf("| form | capture off | capture, timing 1/16 | capture, timing every |\n");
	printf("|---|---|---|---|\n");
	static const char *rows[][2] = {
	    {"empty loop", "empty"},
	    {"VG_LOG (C API), not written", "vg_log"},
	    {"syslog(LOG_DEBUG), intercepted, not handed on (off: real syslog)", "syslog"},
	    {"fprintf(stderr), intercepted, not written (off: to /dev/null)", "fprintf_stderr"},
	    {"syslog(\"[%lu-%d] %s\"), templated, not handed on (off: real syslog)", "syslog_tmpl"},
	    {"write(2) of a line to fd 2, templated, not written (off: to /dev/null)",
	     "write_stderr"},
	    {"peer: Sentinel-style in-memory tracer", "sentinel"},
	    {"disk logger: fprintf to a buffered file", "disk_fprintf"},
	    {"disk logger: snprintf + write(2) per line", "disk_write"}};
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
		printf("| %s | %.1f | %.1f | %.1f |\n", rows[r][0], field(res[0], rows[r][1]),
		       field(res[1], rows[r][1]), field(res[2], rows[r][1]));
	double cap = field(res[1], "vg_log"), sys = field(res[1], "syslog");
	double sen = field(res[1], "sentinel");
	printf(
	    "\nCapture (timing 1/16) vs disk loggers, same run: buffered fprintf %.1fx, write(2) "
	    "%.1fx slower than VG_LOG capture; %.1fx, %.1fx than intercepted syslog.\n",
	    field(res[1], "disk_fprintf") / cap, field(res[1], "disk_write") / cap,
	    field(res[1], "disk_fprintf") / sys, field(res[1], "disk_write") / sys);
	double stm = field(res[1], "syslog_tmpl"), wtm = field(res[1], "write_stderr");
	printf("\nTemplating, same run: syslog(\"[%%lu-%%d] %%s\") %.1f ns, %.1fx the intercepted "
	       "syslog with a format that identifies the statement (%.1f ns; templating adds "
	       "%.1f ns), %.1fx the Sentinel-style tracer; write(2) of a line to fd 2 %.1f ns, vs "
	       "the real write to /dev/null %.1f ns; buffered fprintf to a disk file %.1f ns\n",
	       stm, stm / sys, sys, stm - sys, stm / sen, wtm, field(res[0], "write_stderr"),
	       field(res[1], "disk_fprintf"));
	printf("\nBudget: a captured call at most half of the Sentinel-style tracer's (%.1f ns), "
	       "same run: VG_LOG %.1f ns (%.2f) %s, intercepted syslog %.1f ns (%.2f) %s\n",
	       sen, cap, cap / sen, cap <= sen / 2 ? "PASS" : "MISS", sys, sys / sen,
	       sys <= sen / 2 ? "PASS" : "MISS");
	printf("\nTransition-time quantiles vs exact (%ld transitions of 20-60 us): worst "
	       "relative error %.3f%% (timing 1/16: %.0f timed), %.3f%% (timing every)\n",
	       transitions, field(q[0], "worst") * 100, field(q[0], "timed"),
	       field(q[1], "worst") * 100);
	return 0;
}
