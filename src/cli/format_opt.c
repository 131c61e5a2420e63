/* --format text|json (format_opt.h). */
#include "format_opt.h"

#include <stdio.h>
#include <string.h>

int vg_cli_format(const char *cmd, const char *arg, bool *json)
{
	if (!strcmp(arg, "json") || !strcmp(arg, "text")) {
		*json = !strcmp(arg, "json");
		return 0;
	}
	fprintf(stderr, "vigil %s: --format '%s': text or json\n", cmd, arg);
	return 2;
}
