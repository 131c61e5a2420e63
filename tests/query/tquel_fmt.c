/* tquel_fmt FILE...: each file's statements as canonical TQuel on stdout, its syntax
 * errors on stderr; exit status 1 when there were errors. Regenerates the golden files:
 *   tquel_fmt x.tq > x.golden        tquel_fmt x.tq 2> x.err
 * (run from tests/query/tquel_bad so that the errors name the file without a path). */
#include <stdio.h>
#include <stdlib.h>

#include "tquel/tquel.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0, r;
	do {
		if (n == cap) {
			cap = cap ? cap * 2 : 4096;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r);
	fclose(f);
	*len = n;
	return buf;
}

int main(int argc, char **argv)
{
	int status = 0;
	for (int i = 1; i < argc; i++) {
		size_t len;
		char *text = slurp(argv[i], &len);
		if (!text) {
			perror(argv[i]);
			status = 1;
			continue;
		}
		struct tquel_query *q = tquel_parse(argv[i], text, len);
		tquel_print(q, stdout);
		tquel_print_errors(q, stderr);
		if (q->nerrors)
			status = 1;
		tquel_free(q);
		free(text);
	}
	return status;
}
