/* The TQuel front end against its example files:
 *  - tquel_good/X.tq parses without error and prints as tquel_good/X.golden, and the
 *    golden text is a fixed point of parse -> print;
 *  - tquel_bad/X.tq gives exactly the errors of tquel_bad/X.err (file named X.tq), and
 *    the statements recovered around the errors still print -> parse -> print the same. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "query/tquel.h"

static char *slurp(const char *dir, const char *name, const char *ext, size_t *len)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

/* The names X of the files X.tq in `dir`, sorted; at least `min` of them. */
static size_t list(const char *dir, char names[][128], size_t max, size_t min)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l > 3 && l < 128 && !strcmp(e->d_name + l - 3, ".tq") && n < max) {
			memcpy(names[n], e->d_name, l - 3);
			names[n++][l - 3] = '\0';
		}
	}
	closedir(d);
	qsort(names, n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
	assert_true(n >= min);
	return n;
}

/* print(parse(printed)) == printed, without errors */
static void assert_fixed_point(const char *printed)
{
	struct tquel_query *q = tquel_parse("printed", printed, strlen(printed));
	char *errors = tquel_errors_string(q);
	if (q->nerrors)
		fail_msg("canonical text does not parse:\n%s\n%s", printed, errors);
	char *again = tquel_print_string(q);
	assert_string_equal(again, printed);
	free(again);
	free(errors);
	tquel_free(q);
}

static void test_good(void **state)
{
	(void)state;
	static char names[256][128];
	size_t n = list(TQUEL_GOOD_DIR, names, 256, 8);
	for (size_t i = 0; i < n; i++) {
		size_t len;
		char *text = slurp(TQUEL_GOOD_DIR, names[i], ".tq", &len);
		char *golden = slurp(TQUEL_GOOD_DIR, names[i], ".golden", NULL);
		struct tquel_query *q = tquel_parse(names[i], text, len);
		char *errors = tquel_errors_string(q);
		if (q->nerrors)
			fail_msg("%s.tq:\n%s", names[i], errors);
		char *printed = tquel_print_string(q);
		if (strcmp(printed, golden))
			fail_msg("%s.tq prints as\n%s\nexpected\n%s", names[i], printed, golden);
		assert_fixed_point(printed);
		free(printed);
		free(errors);
		free(golden);
		free(text);
		tquel_free(q);
	}
}

static void test_bad(void **state)
{
	(void)state;
	static char names[256][128];
	size_t n = list(TQUEL_BAD_DIR, names, 256, 20);
	for (size_t i = 0; i < n; i++) {
		size_t len;
		char *text = slurp(TQUEL_BAD_DIR, names[i], ".tq", &len);
		char *expected = slurp(TQUEL_BAD_DIR, names[i], ".err", NULL);
		char source[160];
		snprintf(source, sizeof source, "%s.tq", names[i]);
		struct tquel_query *q = tquel_parse(source, text, len);
		assert_true(q->nerrors > 0);
		char *errors = tquel_errors_string(q);
		if (strcmp(errors, expected))
			fail_msg("%s gives\n%s\nexpected\n%s", source, errors, expected);
		char *printed = tquel_print_string(q);
		assert_fixed_point(printed);
		free(printed);
		free(errors);
		free(expected);
		free(text);
		tquel_free(q);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good),
	    cmocka_unit_test(test_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
