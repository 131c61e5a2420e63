/* Loads Debian's libpython (a library of the distribution with SDT probes:
 * python:function__entry, ...) with dlopen after start, and has map() call a Python function f (a
 * call from C, which enters the interpreter loop anew), defined on line 7777 of its source, N
 * times: python:function__entry's third argument (the line) is 7777 exactly N times. With "wait",
 * prints "ready" after the calls and waits for a line on stdin before unloading (so a test can look
 * at the armed sites). usage: sdt_pyload LIBPYTHON N [wait] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: sdt_pyload LIBPYTHON N [wait]\n");
		return 2;
	}
	int n = atoi(argv[2]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "sdt_pyload: %s\n", dlerror());
		return 1;
	}
	void (*init)(void) = (void (*)(void))dlsym(h, "Py_InitializeEx");
	int (*run)(const char *) = (int (*)(const char *))dlsym(h, "PyRun_SimpleString");
	int (*fini)(void) = (int (*)(void))dlsym(h, "Py_FinalizeEx");
	if (!init || !run || !fini) {
		fprintf(stderr, "sdt_pyload: %s lacks the embedding API\n", argv[1]);
		return 1;
	}
	((void (*)(int))(void *)init)(0); /* no signal handlers of Python's */
	static char code[16384];
	size_t len = 0;
	for (int line = 1; line < 7777; line++)
		code[len++] = '\n';
	snprintf(code + len, sizeof code - len,
	         "def f(k):\n    return k\nlist(map(f, range(%d)))\nprint('calls', %d)\n", n, n);
	if (run(code) != 0)
		return 1;
	if (argc > 3 && !strcmp(argv[3], "wait")) {
		char line[16];
		printf("ready\n");
		if (!fgets(line, sizeof line, stdin))
			return 1;
	}
	return fini() == 0 ? 0 : 1;
}
