/* The USDT benchmark's subject (bench/usdt_bench.py): a loop calling a function with an
 * SDT probe site. Prints one JSON line: iterations and ns per iteration.
 *
 * usage: usdt-bench N */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <time.h>

static volatile long sink;

__attribute__((noinline)) static void hit(long i, long x)
{
	DTRACE_PROBE2(bench, hit, i, x);
	sink += x;
}

/* Never called in the loop: armed to make the run "recorded with a site armed elsewhere". */
__attribute__((noinline)) void bench_cold(long i)
{
	DTRACE_PROBE1(bench, cold, i);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		hit(i, i * 3);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	printf("{\"n\":%ld,\"ns_per_iter\":%.3f}\n", n, n ? ns / (double)n : 0.0);
	return 0;
}
