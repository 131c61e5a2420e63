/* The base room (src/base): UTF-8 validation case by case (RFC 3629's edges), arenas
 * (zeroed, aligned, large blocks beside small ones, freed and reused), whole-file reads
 * (a regular file, an empty one, a limit, a directory, a FIFO refused without blocking, a
 * pipe read to its end) and writes through a pipe; large blocks advised for huge pages, and
 * blocks of their own (base/huge.h) aligned, advised, grown with their contents; the
 * binary searches of sorted times (base/search.h) against a linear scan, runs of equal
 * values and the ends included. Files only in a mkdtemp folder. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/file_io.h"
#include "base/huge.h"
#include "base/search.h"
#include "base/utf8.h"
#include "reader_tracegen.h"

static void utf8_edges(void **state)
{
	(void)state;
	uint32_t cp = 0;
	assert_int_equal(vgb_utf8_decode("a", 1, &cp), 1);
	assert_int_equal(cp, 'a');
	assert_int_equal(vgb_utf8_decode("\xc3\xa9", 2, &cp), 2);
	assert_int_equal(cp, 0xe9);
	assert_int_equal(vgb_utf8_len("\xc3\xa9", 1), 0); /* cut short */
	assert_int_equal(vgb_utf8_decode("\xe2\x82\xac", 3, &cp), 3);
	assert_int_equal(cp, 0x20ac);
	assert_int_equal(vgb_utf8_decode("\xf0\x9f\x98\x80", 4, &cp), 4);
	assert_int_equal(cp, 0x1f600);
	assert_int_equal(vgb_utf8_decode("\xf4\x8f\xbf\xbf", 4, &cp), 4); /* U+10FFFF */
	assert_int_equal(cp, 0x10ffff);
	assert_int_equal(vgb_utf8_len("\xf4\x90\x80\x80", 4), 0); /* past U+10FFFF */
	assert_int_equal(vgb_utf8_len("\xc0\x80", 2), 0);         /* overlong */
	assert_int_equal(vgb_utf8_len("\xc1\xbf", 2), 0);         /* overlong */
	assert_int_equal(vgb_utf8_len("\xe0\x9f\xbf", 3), 0);     /* overlong */
	assert_int_equal(vgb_utf8_len("\xf0\x8f\xbf\xbf", 4), 0); /* overlong */
	assert_int_equal(vgb_utf8_len("\xed\xa0\x80", 3), 0);     /* surrogate */
	assert_int_equal(vgb_utf8_len("\xed\x9f\xbf", 3), 3);     /* U+D7FF */
	assert_int_equal(vgb_utf8_len("\x80", 1), 0);             /* continuation */
	assert_int_equal(vgb_utf8_len("\xc3\x28", 2), 0);         /* bad continuation */
	assert_int_equal(vgb_utf8_len("\xff", 1), 0);
	assert_int_equal(vgb_utf8_len("", 0), 0);
}

static void arena_blocks(void **state)
{
	(void)state;
	struct vgb_arena a = {0};
	unsigned char *small[200];
	for (int i = 0; i < 200; i++) {
		small[i] = vgb_arena_alloc(&a, (size_t)i + 1);
		assert_int_equal((uintptr_t)small[i] % 16, 0);
		for (int k = 0; k <= i; k++)
			assert_int_equal(small[i][k], 0);
		memset(small[i], i, (size_t)i + 1);
	}
	/* A block larger than any chunk, then more small ones: none overlaps another. */
	unsigned char *big = vgb_arena_alloc(&a, 1u << 20);
	assert_int_equal(big[0] | big[(1u << 20) - 1], 0);
	memset(big, 0xee, 1u << 20);
	unsigned char *after = vgb_arena_alloc(&a, 32);
	assert_int_equal(after[0] | after[31], 0);
	for (int i = 0; i < 200; i++)
		for (int k = 0; k <= i; k++)
			assert_int_equal(small[i][k], i);
	char *s = vgb_arena_strndup(&a, "hello, world", 5);
	assert_string_equal(s, "hello");
	assert_string_equal(vgb_arena_strdup(&a, "x"), "x");
	int *arr = vgb_arena_array(&a, 1000, sizeof *arr);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(arr[i], 0);
	vgb_arena_free(&a);
	assert_null(a.head);
	assert_non_null(vgb_arena_alloc(&a, 0)); /* usable again */
	vgb_arena_free(&a);
}

static void checked_alloc(void **state)
{
	(void)state;
	int *p = vgb_xcalloc(4, sizeof *p);
	assert_int_equal(p[0] | p[3], 0);
	p = vgb_xrealloc(p, 1000, sizeof *p);
	p[999] = 7;
	free(p);
	char *d = vgb_xstrndup("abcdef", 3);
	assert_string_equal(d, "abc");
	free(d);
	char *f = vgb_xprintf("%d-%s", 42, "x");
	assert_string_equal(f, "42-x");
	free(f);
	free(vgb_xmalloc(0));
}

static char *dir; /* tg_tempdir: under $TMPDIR, removed at the end */

/* Is the mapping holding address a advised for huge pages ("hg" among its VmFlags in
 * /proc/self/smaps)? */
static bool advised_huge(const void *a)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return false;
	char line[512];
	bool in = false, hg = false;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) /* a mapping's first line */
			in = (uintptr_t)a >= lo && (uintptr_t)a < hi;
		else if (in && !strncmp(line, "VmFlags:", 8)) {
			hg = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return hg;
}

/* Does this kernel give huge pages where advised? */
static bool thp_advisable(void)
{
	char mode[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f) {
		if (!fgets(mode, sizeof mode, f))
			mode[0] = 0;
		fclose(f);
	}
	return strstr(mode, "[madvise]") || strstr(mode, "[always]");
}

/* Large blocks ask for transparent huge pages (their first touches are 2 MiB faults, not
 * 4 KiB ones): calloc'd, malloc'd and grown by realloc. */
static void huge_blocks(void **state)
{
	(void)state;
	if (!thp_advisable())
		skip(); /* no huge pages on this kernel: nothing to advise */
	size_t big = 8u << 20;
	char *c = vgb_xcalloc(big, 1), *m = vgb_xmalloc(big), *r = vgb_xrealloc(NULL, 4096, 1);
	r = vgb_xrealloc(r, big, 1);
	uintptr_t mid = 4u << 20; /* a whole 2 MiB page lies within 2 MiB of the middle */
	assert_true(advised_huge(c + mid));
	assert_true(advised_huge(m + mid));
	assert_true(advised_huge(r + mid));
	free(c);
	free(m);
	free(r);
}

/* A block of its own: zeroed, aligned to a huge page and a whole number of them, advised;
 * grown (moved, not copied) with its bytes kept and the new ones zeroed; unmapped. */
static void huge_mapping(void **state)
{
	(void)state;
	struct vgb_huge_block b;
	assert_true(vgb_huge_map(&b, VGB_HUGE_PAGE + 4096));
	assert_int_equal((uintptr_t)b.base % VGB_HUGE_PAGE, 0);
	assert_int_equal(b.len, 2 * VGB_HUGE_PAGE);
	for (size_t i = 0; i < b.len; i += 4096)
		assert_int_equal(b.base[i], 0);
	memset(b.base, 7, b.len);
	size_t old = b.len;
	assert_true(vgb_huge_grow(&b, 4 * VGB_HUGE_PAGE + 1));
	assert_int_equal((uintptr_t)b.base % VGB_HUGE_PAGE, 0);
	assert_int_equal(b.len, 5 * VGB_HUGE_PAGE);
	for (size_t i = 0; i < old; i += 4096)
		assert_int_equal(b.base[i], 7);
	for (size_t i = old; i < b.len; i += 4096)
		assert_int_equal(b.base[i], 0);
	b.base[b.len - 1] = 1; /* writable to its end */
	if (thp_advisable())
		assert_true(advised_huge(b.base + b.len - 1));
	assert_true(vgb_huge_grow(&b, 1)); /* never shrinks */
	assert_int_equal(b.len, 5 * VGB_HUGE_PAGE);
	vgb_huge_unmap(&b);
	assert_null(b.base);
}

static void path_in(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
}

static void read_files(void **state)
{
	(void)state;
	char p[128];
	path_in(p, sizeof p, "f");
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	static char text[200000];
	for (size_t i = 0; i < sizeof text; i++)
		text[i] = (char)('a' + i % 26);
	assert_int_equal(vgb_write_all(fd, text, sizeof text), 0);
	close(fd);
	size_t len = 0;
	char *got = vgb_read_file(p, sizeof text, VGB_READ_REGULAR, &len);
	assert_non_null(got);
	assert_int_equal(len, sizeof text);
	assert_memory_equal(got, text, len);
	assert_int_equal(got[len], 0);
	free(got);
	errno = 0;
	assert_null(vgb_read_file(p, sizeof text - 1, 0, &len));
	assert_int_equal(errno, EFBIG);
	assert_null(vgb_read_file(dir, 100, 0, &len));
	assert_int_equal(errno, EISDIR);
	path_in(p, sizeof p, "missing");
	assert_null(vgb_read_file(p, 100, 0, &len));
	assert_int_equal(errno, ENOENT);

	path_in(p, sizeof p, "empty");
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	close(fd);
	got = vgb_read_file(p, 100, VGB_READ_REGULAR, &len);
	assert_non_null(got);
	assert_int_equal(len, 0);
	assert_int_equal(got[0], 0);
	free(got);

	/* A FIFO without a writer: refused at once, never waited on. */
	path_in(p, sizeof p, "fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_null(vgb_read_file(p, 100, VGB_READ_REGULAR, &len));
	assert_int_equal(errno, EINVAL);

	char l[128];
	path_in(l, sizeof l, "link");
	path_in(p, sizeof p, "f");
	assert_int_equal(symlink(p, l), 0);
	assert_null(vgb_read_file(l, sizeof text, VGB_READ_NOFOLLOW, &len));
	assert_int_equal(errno, ELOOP);
	got = vgb_read_file(l, sizeof text, 0, &len);
	assert_non_null(got);
	free(got);
}

static void pipe_both_ways(void **state)
{
	(void)state;
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static char big[300000]; /* more than a pipe holds: short writes */
		memset(big, 'z', sizeof big);
		close(pfd[0]);
		_exit(vgb_write_all(pfd[1], big, sizeof big) == 0 ? 0 : 1);
	}
	close(pfd[1]);
	size_t len = 0;
	char *got = vgb_read_fd(pfd[0], 1u << 20, &len);
	close(pfd[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(got);
	assert_int_equal(len, 300000);
	assert_int_equal(got[0], 'z');
	assert_int_equal(got[len - 1], 'z');
	free(got);
}

static void sorted_searches(void **state)
{
	(void)state;
	const int64_t v[] = {-5, -5, 0, 3, 3, 3, 9, INT64_MAX};
	size_t n = sizeof v / sizeof *v;
	const int64_t probes[] = {INT64_MIN, -6, -5, -4, 0, 2, 3, 4, 9, 10, INT64_MAX};
	for (size_t k = 0; k <= n; k++) /* every prefix, the empty one too */
		for (size_t p = 0; p < sizeof probes / sizeof *probes; p++) {
			size_t at_least = k, after = k;
			for (size_t i = k; i-- > 0;) {
				if (v[i] >= probes[p])
					at_least = i;
				if (v[i] > probes[p])
					after = i;
			}
			assert_int_equal(vgb_first_at_least(v, k, probes[p]), at_least);
			assert_int_equal(vgb_first_after(v, k, probes[p]), after);
		}
}

int main(void)
{
	dir = tg_tempdir();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(utf8_edges),     cmocka_unit_test(arena_blocks),
	    cmocka_unit_test(checked_alloc),  cmocka_unit_test(read_files),
	    cmocka_unit_test(pipe_both_ways), cmocka_unit_test(huge_blocks),
	    cmocka_unit_test(huge_mapping),   cmocka_unit_test(sorted_searches),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	tg_rmtree(dir);
	free(dir);
	return rc;
}
