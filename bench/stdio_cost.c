/* What following stdio costs per call (bench/README.md, "I/O following"): a pipe
 * written through stdio in a loop and drained by a thread that reads with the raw system
 * call (so that only the writer's calls are followed). Run plain and under `vigil record`
 * by bench/nginx_bench.py, which prints the ratios.
 *
 *   flushed:  fputs of a 64-byte line then fflush, per call: a write(2) and, recorded,
 *             one vg.net.send each
 *   buffered: fprintf("%d\n") into the 4096-byte buffer: a flush every ~600 calls;
 *             recorded, the call is locked and its buffer pointers read
 *   read:     fgets of the 64-byte lines a second pipe holds, refilled every 64 calls
 *
 * Prints one JSON object: ns per call of each loop. usage: stdio-cost [N] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int drain_fd;

static void *drain(void *arg)
{
	(void)arg;
	char buf[65536];
	while (syscall(SYS_read, drain_fd, buf, sizeof buf) > 0)
		;
	return NULL;
}

static int feed_fd;
static long feed_lines;

static void *feed(void *arg)
{
	(void)arg;
	char line[64];
	memset(line, 'r', sizeof line);
	line[63] = '\n';
	for (long i = 0; i < feed_lines; i++)
		if (syscall(SYS_write, feed_fd, line, sizeof line) != (long)sizeof line)
			break;
	close(feed_fd);
	return NULL;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	int p[2], q[2];
	if (pipe(p) || pipe(q))
		return 2;
	drain_fd = p[0];
	pthread_t t;
	pthread_create(&t, NULL, drain, NULL);
	FILE *w = fdopen(p[1], "w");
	char line[65];
	memset(line, 'x', 63);
	line[63] = '\n';
	line[64] = 0;
	for (int i = 0; i < 1000; i++) /* warm-up: the thread's buffers, the fd's entry */
		fputs(line, w), fflush(w);
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		fputs(line, w);
		fflush(w);
	}
	double t1 = now_ns();
	for (long i = 0; i < n; i++)
		fprintf(w, "%ld\n", i);
	fflush(w);
	double t2 = now_ns();
	fclose(w);
	pthread_join(t, NULL);

	feed_fd = q[1];
	feed_lines = n;
	pthread_create(&t, NULL, feed, NULL);
	FILE *r = fdopen(q[0], "r");
	char buf[128];
	long got = 0;
	double t3 = now_ns();
	while (fgets(buf, sizeof buf, r))
		got++;
	double t4 = now_ns();
	pthread_join(t, NULL);
	fclose(r);
	printf("{\"calls\": %ld, \"flushed_ns\": %.1f, \"buffered_ns\": %.1f, \"read_ns\": %.1f, "
	       "\"lines_read\": %ld}\n",
	       n, (t1 - t0) / n, (t2 - t1) / n, (t4 - t3) / (got ? got : 1), got);
	return 0;
}
