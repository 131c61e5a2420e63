/* The subject of tests/model/record_test.py: a few threads that each sleep a few times
 * (so the recording has several streams and lifecycle events), and one call site whose
 * return address it prints as a raw site (`/abs/module+0xHEX`) with its line, to check
 * that `vigil model` symbolizes it to this file's line. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static __attribute__((noinline)) void *where(void)
{
	return __builtin_return_address(0);
}

static void *worker(void *arg)
{
	int n = (int)(intptr_t)arg;
	for (int i = 0; i < n; i++)
		usleep(1000);
	return NULL;
}

/* `subject log N`: N messages through stderr from one call site, for the runtime's log
 * capture (tests/model/record_test.py checks the model has them at this line). */
static int log_mode(int n)
{
	printf("LOG %d\n", __LINE__ + 2);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "tick %d\n", i);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "log"))
		return log_mode(atoi(argv[2]));
	int threads = argc > 1 ? atoi(argv[1]) : 3;
	pthread_t t[16];
	if (threads > 16)
		threads = 16;
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)(i + 1));
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	int line = __LINE__ + 1;
	void *ret = where();
	Dl_info info;
	char exe[PATH_MAX];
	if (!dladdr(ret, &info) || !realpath("/proc/self/exe", exe))
		return 1;
	printf("SITE %s+0x%lx %d\n", exe,
	       (unsigned long)((uintptr_t)ret - (uintptr_t)info.dli_fbase), line);
	return 0;
}
