/* Setting up a subject's environment: libvigil preloaded, one clock calibration for all
 * its processes (vigil record, vigil watch). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/subject.h"

#include "wire/clock.h"

/* libvigil.so lives beside the vigil binary (build tree), in ../lib, or in the library
 * folder `make install` put it in (VIGIL_LIBDIR_FROM_BIN: relative to the binary's). */
#ifndef VIGIL_LIBDIR_FROM_BIN
#define VIGIL_LIBDIR_FROM_BIN "../lib"
#endif
int vg_cli_find_runtime(const char *cmd, char *out, size_t len)
{
	const char *env = getenv("VIGIL_LIB");
	if (env && *env) {
		if (access(env, R_OK) == 0 && strlen(env) < len) {
			strcpy(out, env);
			return 0;
		}
		fprintf(stderr, "vigil %s: VIGIL_LIB=%s is not readable\n", cmd, env);
		return -1;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	const char *candidates[] = {"%s/libvigil.so", "%s/../lib/libvigil.so",
	                            "%s/" VIGIL_LIBDIR_FROM_BIN "/libvigil.so.0"};
	for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
		snprintf(out, len, candidates[i], exe);
		char real[PATH_MAX];
		if (access(out, R_OK) == 0 && realpath(out, real) && strlen(real) < len) {
			strcpy(out, real);
			return 0;
		}
	}
	fprintf(stderr, "vigil %s: cannot find libvigil.so beside %s (set VIGIL_LIB)\n", cmd, exe);
	return -1;
}

int vg_cli_set_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *value;
	if (old && *old) {
		if (asprintf(&value, "%s:%s", lib, old) < 0)
			return -1;
	} else {
		value = strdup(lib);
		if (!value)
			return -1;
	}
	int rc = setenv("LD_PRELOAD", value, 1);
	free(value);
	return rc;
}

/* One calibration for every process of the subject: their clocks agree exactly. */
void vg_cli_export_clock(void)
{
	vgw_clock_init();
	char clock_text[128];
	if (vgw_clock_export(clock_text, sizeof clock_text) == 0)
		setenv("VIGIL_CLOCK", clock_text, 1);
}
