/* Unit tests of message templates and level words (src/runtime/logcap_tmpl.c,
 * docs/logcapture.md "Templates"): exact templates of real messages of PostgreSQL, nginx
 * and redis, stability (two messages of one statement give one template), bounds (long,
 * binary and non-UTF-8 input), and the level words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/logcap.h"

static const char *tmpl(const char *msg)
{
	static char out[LC_TMPL_MAX + 4];
	size_t n = vg__lc_template(msg, strlen(msg), out, sizeof out);
	assert_int_equal(n, strlen(out));
	return out;
}

static void postgres_messages(void **state)
{
	(void)state;
	assert_string_equal(
	    tmpl("[12-1] LOG:  checkpoint complete: wrote 3 buffers (0.0%); 0 WAL file(s) "
	         "added, 0 removed, 1 recycled; write=0.002 s, sync=0.001 s, total=0.010 s; "
	         "sync files=2, longest=0.001 s, average=0.001 s; distance=16384 kB, "
	         "estimate=16384 kB"),
	    "[<n>] LOG:  checkpoint complete: wrote <n> buffers (<n>%); <n> WAL file(s) added, "
	    "<n> removed, <n> recycled; write=<n> s, sync=<n> s, total=<n> s; sync files=<n>, "
	    "longest=<n> s, average=<n> s; distance=<n> kB, estimate=<n> kB");
	assert_string_equal(tmpl("[7-1] DEBUG:  autovacuum: processing database \"postgres\""),
	                    "[<n>] DEBUG:  autovacuum: processing database \"<s>\"");
	assert_string_equal(
	    tmpl("[3-1] DEBUG:  CommitTransaction(1) name: unnamed; blockState: STARTED; "
	         "state: INPROGRESS, xid/subid/cid: 731/1/0"),
	    "[<n>] DEBUG:  CommitTransaction(<n>) name: unnamed; blockState: STARTED; state: "
	    "INPROGRESS, xid/subid/cid: <n>");
	/* stderr with the default log_line_prefix '%m [%p] ' */
	assert_string_equal(tmpl("2026-11-26 16:35:23.123 UTC [81234] DEBUG:  snapshot of 0+0 "
	                         "running transaction ids (lsn 0/1A2B3C48 oldest xid 735)\n"),
	                    "<n> <n> UTC [<n>] DEBUG:  snapshot of <n>+<n> running transaction "
	                    "ids (lsn <n> oldest xid <n>)");
	assert_string_equal(
	    tmpl("LOG:  recycled write-ahead log file \"000000010000000000000002\""),
	    "LOG:  recycled write-ahead log file \"<s>\"");
	/* WAL segment names: hex, with or without a letter */
	assert_string_equal(tmpl("older than log file 000000010000000000000003"),
	                    "older than log file <hex>");
	assert_string_equal(tmpl("older than log file 00000001000000000000000A"),
	                    "older than log file <hex>");
	assert_string_equal(tmpl("DEBUG:  removing file base/5/16397_fsm"),
	                    "DEBUG:  removing file base/<n>_fsm");
}

static void nginx_redis_messages(void **state)
{
	(void)state;
	assert_string_equal(tmpl("2026/11/26 16:35:23 [debug] 4711#0: *12 http cleanup add: "
	                         "00005610A3C0F1B8"),
	                    "<n> <n> [debug] <n>#<n>: *<n> http cleanup add: <hex>");
	assert_string_equal(tmpl("2026/11/26 16:35:23 [error] 4711#0: *3 open() "
	                         "\"/usr/share/nginx/html/x\" failed (2: No such file or "
	                         "directory), client: 127.0.0.1, server: localhost"),
	                    "<n> <n> [error] <n>#<n>: *<n> open() \"<s>\" failed (<n>: No such "
	                    "file or directory), client: <n>, server: localhost");
	assert_string_equal(tmpl("81234:M 26 Nov 2026 16:35:23.123 - Accepted 127.0.0.1:51234"),
	                    "<n>:M <n> Nov <n> <n> - Accepted <n>");
	assert_string_equal(tmpl("reading /var/lib/app/data.db: 0x7f3a2c001000"),
	                    "reading <path>: <hex>");
	assert_string_equal(tmpl("id 550e8400-e29b-41d4-a716-446655440000 took 12ms"),
	                    "id <hex> took <n>ms");
	assert_string_equal(tmpl("DEBUG5 it's 'quoted' here"), "DEBUG5 it's '<s>' here");
}

static void stable_and_bounded(void **state)
{
	(void)state;
	char a[LC_TMPL_MAX + 4];
	strcpy(a, tmpl("[101-1] LOG:  connection received: host=[local] pid=4242"));
	assert_string_equal(a, tmpl("[7-1] LOG:  connection received: host=[local] pid=77"));
	/* binary and bytes that are not UTF-8 become '?', valid UTF-8 stays */
	assert_string_equal(tmpl("caf\xc3\xa9 \xff\xfe\x01\x02 ok"), "caf\xc3\xa9 ???? ok");
	/* overlong, surrogate, past U+10FFFF, cut: '?' per byte */
	assert_string_equal(tmpl("a\xc0\xaf b\xed\xa0\x80 c\xf4\x90\x80\x80 d\xe2\x82"),
	                    "a?? b??? c???? d??");
	/* 1 MB without a newline: cut, "..." appended, bounded */
	size_t n = 1 << 20;
	char *big = malloc(n + 1);
	assert_non_null(big);
	for (size_t i = 0; i < n; i++)
		big[i] = "abc def "[i % 8];
	big[n] = 0;
	const char *t = tmpl(big);
	assert_true(strlen(t) <= LC_TMPL_MAX + 3);
	assert_string_equal(t + strlen(t) - 3, "...");
	free(big);
	/* a buffer too small gets nothing, never an overrun */
	char small[4];
	assert_int_equal(vg__lc_template("abc", 3, small, sizeof small), 0);
}

static void level_words(void **state)
{
	(void)state;
	const char *m[] = {"[3-1] DEBUG:  x",
	                   "[3-1] DEBUG5:  x",
	                   "LOG:  x",
	                   "INFO:  x",
	                   "NOTICE:  x",
	                   "WARNING:  x",
	                   "ERROR:  x",
	                   "FATAL:  x",
	                   "PANIC:  x",
	                   "2026/11/26 [warn] 12#0: x",
	                   "error: x",
	                   "<crit> x",
	                   "2026-11-26 16:35:23.123 UTC [81234] LOG:  x",
	                   "no level here",
	                   "an error occurred",
	                   "value: 3",
	                   "[alert] x",
	                   "emerg: x"};
	int want[] = {7, 7, 6, 6, 5, 4, 3, 2, 0, 4, 3, 2, 6, -1, -1, -1, 1, 0};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		int got = vg__lc_level_word(m[i], strlen(m[i]));
		if (got != want[i])
			fail_msg("%s: level %d, expected %d", m[i], got, want[i]);
	}
}

static void templated_formats(void **state)
{
	(void)state;
	assert_true(vg__lc_fmt_templated("%s"));
	assert_true(vg__lc_fmt_templated("[%lu-%d] %s"));
	assert_true(vg__lc_fmt_templated("%s: %s\n"));
	assert_true(vg__lc_fmt_templated("LOG: %.*s"));
	assert_false(vg__lc_fmt_templated("lookup %s in %d buckets"));
	assert_false(vg__lc_fmt_templated("wrote %d"));
	assert_false(vg__lc_fmt_templated("[%lu-%d]"));
	assert_false(vg__lc_fmt_templated("100%% %d"));
}

/* vg__lc_format against vsnprintf: the same text, or -1 (then vsnprintf is used). */
static int fmt_both(char *mine, char *libc, size_t cap, const char *fmt, ...)
{
	va_list ap, aq;
	va_start(ap, fmt);
	va_copy(aq, ap);
	int n = vg__lc_format(mine, cap, fmt, ap);
	int want = vsnprintf(libc, cap, fmt, aq);
	va_end(aq);
	va_end(ap);
	if (n >= 0) {
		assert_string_equal(mine, libc);
		assert_int_equal(n, (size_t)want < cap ? want : (int)cap - 1);
	}
	return n;
}

static int fmt_mine(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vg__lc_format(out, cap, fmt, ap);
	va_end(ap);
	return n;
}

static void plain_formats(void **state)
{
	(void)state;
	char a[64], b[64];
	assert_true(fmt_both(a, b, sizeof a, "[%lu-%d] %s", 18446744073709551615ul, -2147483647 - 1,
	                     "LOG:  x") > 0);
	assert_true(fmt_both(a, b, sizeof a, "%s|%c|%i|%u|%x|%lx|%lld|%llu|%zu|%zd|%%",
	                     (char *)NULL, 'q', 0, 4294967295u, 0xbeefu, 0xdeadbeefcafeul,
	                     -9223372036854775807ll - 1, 18446744073709551615ull, (size_t)7,
	                     (ptrdiff_t)-7) > 0);
	/* cut at cap - 1, as vsnprintf */
	assert_true(fmt_both(a, b, 8, "abc %s def", "0123456789") == 7);
	assert_true(fmt_both(a, b, 1, "%d", 12345) == 0);
	/* vsnprintf's: flags, widths, precisions, %m, floating point, %p, wide; nothing of
	 * the arguments read (a string conversion of 1 would crash) */
	const char *theirs[] = {"%5d", "%-d", "%.3s", "%*d",  "%m",   "%f",
	                        "%p",  "%ls", "%hd",  "%08x", "x %l%"};
	for (size_t i = 0; i < sizeof theirs / sizeof theirs[0]; i++)
		assert_int_equal(fmt_mine(a, sizeof a, theirs[i], 1, 2, 3), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(postgres_messages),  cmocka_unit_test(nginx_redis_messages),
	    cmocka_unit_test(stable_and_bounded), cmocka_unit_test(level_words),
	    cmocka_unit_test(templated_formats),  cmocka_unit_test(plain_formats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
