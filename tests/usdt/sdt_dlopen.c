/* Loads libsdtlib.so by its bare name with dlopen, found through this program's RUNPATH
 * ($ORIGIN/lib, which glibc resolves from the caller's address: vigil must not interpose
 * dlopen), and calls its probe N times. With "wait", prints "ready" after the calls and
 * waits for a line on stdin before unloading (a test looks at the armed sites meanwhile).
 * usage: sdt_dlopen N [wait] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	setvbuf(stdout, NULL, _IOLBF, 0);
	void *h = dlopen("libsdtlib.so", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "sdt_dlopen: %s\n", dlerror());
		return 1;
	}
	long (*call)(long) = (long (*)(long))dlsym(h, "vl_call");
	for (int i = 0; i < n; i++)
		call(i - 1);
	if (argc > 2 && !strcmp(argv[2], "wait")) {
		char line[16];
		printf("ready\n");
		if (!fgets(line, sizeof line, stdin))
			return 1;
	}
	dlclose(h);
	return 0;
}
