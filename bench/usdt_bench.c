/* The USDT benchmark's subject (bench/usdt_bench.py): a loop calling a function with an
 * SDT probe site. Prints one JSON line: iterations and CPU ns per iteration (and wall).
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
	struct timespec t[3][2];
	static const clockid_t clocks[3] = {CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID,
	                                    CLOCK_THREAD_CPUTIME_ID};
	for (int k = 0; k < 3; k++)
		clock_gettime(clocks[k], &t[k][0]);
	for (long i = 0; i < n; i++)
		hit(i, i * 3);
	for (int k = 2; k >= 0; k--)
		clock_gettime(clocks[k], &t[k][1]);
	double ns[3];
	for (int k = 0; k < 3; k++)
		ns[k] = ((double)(t[k][1].tv_sec - t[k][0].tv_sec) * 1e9 +
		         (double)(t[k][1].tv_nsec - t[k][0].tv_nsec)) /
		        (double)(n ? n : 1);
	/* ns_per_iter: CPU time of the loop's thread, what a hit costs the program where it
	 * runs (on a shared, loaded machine wall time mostly measures waiting for a core);
	 * process: with vigil's threads writing the trace */
	printf("{\"n\":%ld,\"ns_per_iter\":%.3f,\"process_ns_per_iter\":%.3f,"
	       "\"wall_ns_per_iter\":%.3f}\n",
	       n, ns[2], ns[1], ns[0]);
	return 0;
}
