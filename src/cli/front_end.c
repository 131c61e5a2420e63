/* The front end's hand-off: vigil-full is found beside the running vigil (the build tree's
 * bin/, or the installed bin folder: both are installed there, so what vigil-full finds
 * relative to itself, libvigil.so, ui's page, is where the front end would find it) and
 * run in vigil's place with the same arguments. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/front_end.h"
#include "relations/cache.h"

char **vg_front_end_argv;

/* The folder of the running program, in exe; NULL if unknown (errno). */
static char *own_folder(char exe[PATH_MAX])
{
	ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX - 1);
	char *slash = n > 0 ? memrchr(exe, '/', (size_t)n) : NULL;
	if (slash)
		*slash = 0;
	return slash ? exe : NULL;
}

void vg_full_share_cache(void)
{
	vgq_cache_key_beside((const char *const[]){"vigil", NULL});
}

int vg_run_full(char **argv)
{
	const char *cmd = argv[1] ? argv[1] : "";
	char exe[PATH_MAX];
	if (!own_folder(exe)) {
		fprintf(stderr, "vigil %s: cannot find vigil's own folder (/proc/self/exe): %s\n",
		        cmd, strerror(errno));
		return 2;
	}
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/vigil-full", exe);
	execv(path, argv);
	fprintf(stderr, "vigil %s: this command is run by vigil-full, beside vigil: %s: %s\n", cmd,
	        path, strerror(errno));
	return 2;
}
