/* Reading TQuel statements given with -e TEXT or -f FILE (vigil query, explain, watch). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_io.h"
#include "cli/statements.h"

/* The statements' text: -e, or the file. NULL after printing the error. */
static char *read_statements(const char *cmd, const char *text_arg, const char *file, size_t *len)
{
	if (text_arg) {
		*len = strlen(text_arg);
		return strdup(text_arg);
	}
	char *buf = vgb_read_file(file, 64u << 20, 0, len);
	if (!buf) {
		if (errno == EFBIG)
			fprintf(stderr, "vigil %s: %s: larger than 64 MiB\n", cmd, file);
		else
			fprintf(stderr, "vigil %s: %s: %s\n", cmd, file, strerror(errno));
	}
	return buf;
}

struct tquel_query *vg_cli_statements(const char *cmd, const char *text_arg, const char *file)
{
	size_t len;
	char *text = read_statements(cmd, text_arg, file, &len);
	if (!text)
		return NULL;
	struct tquel_query *q = tquel_parse(file ? file : "<command line>", text, len);
	free(text);
	if (q->nerrors) {
		tquel_print_errors(q, stderr);
		tquel_free(q);
		return NULL;
	}
	size_t retrieves = 0;
	for (size_t i = 0; i < q->nstmts; i++)
		retrieves += q->stmts[i].kind == TQ_RETRIEVE;
	if (!retrieves) {
		fprintf(stderr,
		        "vigil %s: %s: no retrieve statement, nothing to answer (see "
		        "docs/tquel.md)\n",
		        cmd, q->source);
		tquel_free(q);
		return NULL;
	}
	return q;
}
