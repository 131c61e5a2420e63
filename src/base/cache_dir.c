/* The cache directory's rule (cache_dir.h). */
#include "base/cache_dir.h"

#include <stdio.h>
#include <stdlib.h>

bool vgb_cache_dir(char *out, size_t n)
{
	const char *env = getenv("VIGIL_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (env && *env)
		return snprintf(out, n, "%s", env) < (int)n;
	if (xdg && *xdg)
		return snprintf(out, n, "%s/vigil", xdg) < (int)n;
	if (home && *home)
		return snprintf(out, n, "%s/.cache/vigil", home) < (int)n;
	return false;
}
