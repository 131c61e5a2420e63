/* What noticing process titles costs (docs/net.md "Process names"): the runtime compares
 * the argv title before every vg.net.* event and before each wait. Two loops, in one
 * thread, run under the libvigil given to bench/title_bench.sh (with and without the
 * comparison, or unrecorded):
 *
 *   pair:  write 64 bytes on a pipe, read them back (recorded: two vg.net.* events)
 *   poll:  poll(NULL, 0, 0) (a wait that returns at once: the comparison and the call)
 *
 * Prints one JSON object: ns per pair and per poll. usage: title-cost [N] */
#define _GNU_SOURCE
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	int p[2];
	char buf[64] = {0};
	if (n <= 0 || pipe(p))
		return 2;
	for (long i = 0; i < n / 10; i++) /* warm-up: the fd table, the first packets */
		if (write(p[1], buf, sizeof buf) != (ssize_t)sizeof buf ||
		    read(p[0], buf, sizeof buf) != (ssize_t)sizeof buf)
			return 3;
	double t0 = now_ns();
	for (long i = 0; i < n; i++)
		if (write(p[1], buf, sizeof buf) != (ssize_t)sizeof buf ||
		    read(p[0], buf, sizeof buf) != (ssize_t)sizeof buf)
			return 3;
	double t1 = now_ns();
	for (long i = 0; i < n; i++)
		poll(NULL, 0, 0);
	double t2 = now_ns();
	printf("{\"pair_ns\": %.1f, \"poll_ns\": %.1f}\n", (t1 - t0) / n, (t2 - t1) / n);
	return 0;
}
