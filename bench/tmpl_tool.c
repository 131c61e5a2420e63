/* bench/tmpl_tool.c: the runtime's message templates (src/runtime/logcap_tmpl.c) of each
 * line of stdin, for bench/templates_quality.py: prints "LEVEL<TAB>TEMPLATE" per line
 * (LEVEL -1: no level word). The same function the capture runs, on text a program wrote. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/logcap.h"

int main(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	char out[LC_TMPL_MAX + 4];
	while ((n = getline(&line, &cap, stdin)) > 0) {
		vg__lc_template(line, (size_t)n, out, sizeof out);
		printf("%d\t%s\n", vg__lc_level_word(line, (size_t)n), out);
	}
	free(line);
	return 0;
}
