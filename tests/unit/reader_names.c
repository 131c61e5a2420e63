/* Entity names learned from the trace over time, and the text forms shared by the
 * commands (times, escaped strings, durations, UTF-8). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reader_tracegen.h"
#include "trace/trace.h"

#define ENTITY_NAME 6
#define PROCESS_BEGIN 7

static void create(struct tg_stream *s, uint16_t id, uint64_t ts, const char *kind, uint64_t raw,
                   uint32_t gen, const char *name)
{
	tg_event(s, id, ts);
	tg_str(s, kind);
	tg_u64(s, raw);
	tg_u32(s, gen);
	tg_str(s, name);
}

static void test_names_over_time(void **state)
{
	(void)state;
	char *root = tg_tempdir();
	struct tg_image *img = tg_image_new(root, "app-42-0", NULL);
	tg_declare_builtin(img, "vg.entity.name", ENTITY_NAME);
	tg_declare_builtin(img, "vg.process.begin", PROCESS_BEGIN);
	tg_write_metadata(img);
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 1);
	create(s, TG_ENTITY_CREATE, 1, "Mailbox", 7, 1, "inbox");
	create(s, TG_ENTITY_CREATE, 2, "mailbox", 7, 2, "outbox"); /* a later lifetime */
	tg_event(s, TG_THREAD_BEGIN, 3);
	tg_u32(s, 43);
	tg_u32(s, 5);
	tg_str(s, "worker");
	tg_event(s, PROCESS_BEGIN, 4);
	tg_u32(s, 42);
	tg_u64(s, 0x100000009ull);
	tg_u32(s, 1);
	tg_str(s, "app");
	tg_str(s, "/bin/app");
	create(s, ENTITY_NAME, 5, "Mailbox", 7, 1, "renamed");
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);

	char err[256];
	const char *paths[] = {root};
	struct vgt_trace *t = vgt_open(paths, 1, err, sizeof err);
	assert_non_null(t);
	struct vgt_names *n = vgt_names_new();
	struct vgt_merge *m = vgt_merge_open(t);
	const struct vgt_event *ev;
	for (int i = 0; i < 4; i++) {
		ev = vgt_merge_next(m);
		assert_non_null(ev);
		vgt_names_observe(n, ev);
	}
	assert_string_equal(vgt_names_lookup(n, "MAILBOX", 7, 1), "inbox");
	assert_string_equal(vgt_names_lookup(n, "Mailbox", 7, 2), "outbox");
	assert_null(vgt_names_lookup(n, "Mailbox", 7, 3));
	assert_null(vgt_names_lookup(n, "Lock", 7, 1));
	assert_null(vgt_names_lookup(n, NULL, 7, 1));
	assert_string_equal(vgt_names_lookup(n, "thread", 43, 5), "worker");
	assert_string_equal(vgt_names_lookup(n, "Process", 42, 9), "app");
	ev = vgt_merge_next(m);
	vgt_names_observe(n, ev);
	assert_string_equal(vgt_names_lookup(n, "mailbox", 7, 1), "renamed");
	assert_null(vgt_merge_next(m));
	vgt_merge_close(m);
	vgt_names_free(n);
	vgt_close(t);
	tg_image_free(img);
	tg_rmtree(root);
	free(root);
}

/* A hand-made type of vg.entity.create events. */
static struct vgt_field create_fields[4] = {{.name = "kind", .type = VGT_STRING},
                                            {.name = "id", .type = VGT_UINT},
                                            {.name = "gen", .type = VGT_UINT},
                                            {.name = "name", .type = VGT_STRING}};
static struct vgt_event_type create_type = {
    .name = "vg.entity.create", .fields = create_fields, .nfields = 4};

/* Observes a hand-made vg.entity.create event of (kind, id, gen 1, name), its texts
 * where the caller keeps them (as in a stream's bytes). */
static void observe_create(struct vgt_names *n, const char *kind, size_t kindlen, uint64_t id,
                           const char *name, size_t namelen)
{
	struct vgt_value v[4] = {{.type = VGT_STRING, .str = {kind, kindlen}},
	                         {.type = VGT_UINT, .u = id},
	                         {.type = VGT_UINT, .u = 1},
	                         {.type = VGT_STRING, .str = {name, namelen}}};
	struct vgt_event ev = {.type = &create_type, .values = v};
	vgt_names_observe(n, &ev);
}

static void test_many_names(void **state)
{
	(void)state;
	/* The table grows: observe through fake events of a hand-made type. */
	struct vgt_names *n = vgt_names_new();
	static char names[5000][16];
	for (int i = 0; i < 5000; i++) {
		snprintf(names[i], sizeof names[i], "obj%d", i);
		observe_create(n, "Obj", 3, (uint64_t)i, names[i], strlen(names[i]));
	}
	for (int i = 0; i < 5000; i += 7)
		assert_string_equal(vgt_names_lookup(n, "obj", (uint64_t)i, 1), names[i]);
	/* A field of the wrong type is ignored, never misread. */
	struct vgt_value bad[4] = {{.type = VGT_UINT, .u = 1},
	                           {.type = VGT_UINT, .u = 99999},
	                           {.type = VGT_UINT, .u = 1},
	                           {.type = VGT_STRING, .str = {"x", 1}}};
	struct vgt_event ev = {.type = &create_type, .values = bad};
	vgt_names_observe(n, &ev);
	assert_null(vgt_names_lookup(n, "obj", 99999, 1));
	vgt_names_free(n);
}

/* A followed trace (trace/follow.c) frees or reuses an event's bytes once its stream is
 * read again into a larger buffer: a name learned from them outlives them. */
static void test_names_outlive_event_bytes(void **state)
{
	(void)state;
	struct vgt_names *n = vgt_names_new();
	char bytes[] = "Mailbox\0M2";
	observe_create(n, bytes, 7, 7, bytes + 8, 2);
	memset(bytes, 'x', sizeof bytes - 1); /* the stream's buffer, reused */
	assert_non_null(vgt_names_lookup(n, "mailbox", 7, 1));
	assert_string_equal(vgt_names_lookup(n, "mailbox", 7, 1), "M2");
	/* a rename replaces the copy */
	char again[] = "Mailbox\0M3";
	observe_create(n, again, 7, 7, again + 8, 2);
	memset(again, 'y', sizeof again - 1);
	assert_string_equal(vgt_names_lookup(n, "Mailbox", 7, 1), "M3");
	vgt_names_free(n);
}

static void test_format_time(void **state)
{
	(void)state;
	char buf[64];
	vgt_format_time(1700000000123456789ll, buf, sizeof buf);
	assert_string_equal(buf, "2023-11-14 22:13:20.123456789");
	vgt_format_time(0, buf, sizeof buf);
	assert_string_equal(buf, "1970-01-01 00:00:00.000000000");
	vgt_format_time(-1, buf, sizeof buf);
	assert_string_equal(buf, "1969-12-31 23:59:59.999999999");
}

static void test_write_cstring(void **state)
{
	(void)state;
	char *out;
	size_t len;
	FILE *f = open_memstream(&out, &len);
	const char s[] = "a\"b\\c\nd\te\x01"
	                 "7\x7f caf\xc3\xa9 \xff\xc3";
	vgt_write_cstring(f, s, sizeof s - 1);
	fclose(f);
	assert_string_equal(out, "\"a\\\"b\\\\c\\nd\\te\\0017\\177 caf\xc3\xa9 \\377\\303\"");
	free(out);
}

static void test_utf8(void **state)
{
	(void)state;
	assert_int_equal(vgt_utf8_char("a", 1), 1);
	assert_int_equal(vgt_utf8_char("\xc3\xa9", 2), 2);
	assert_int_equal(vgt_utf8_char("\xc3\xa9", 1), 0);
	assert_int_equal(vgt_utf8_char("\xe2\x82\xac", 3), 3);
	assert_int_equal(vgt_utf8_char("\xf0\x9f\x98\x80", 4), 4);
	assert_int_equal(vgt_utf8_char("\xc0\x80", 2), 0);     /* overlong */
	assert_int_equal(vgt_utf8_char("\xed\xa0\x80", 3), 0); /* surrogate */
	assert_int_equal(vgt_utf8_char("\xf4\x90\x80\x80", 4), 0);
	assert_int_equal(vgt_utf8_char("\x80", 1), 0);
}

static void test_parse_duration(void **state)
{
	(void)state;
	int64_t ns;
	assert_int_equal(vgt_parse_duration("1.5s", &ns), 0);
	assert_int_equal(ns, 1500000000);
	assert_int_equal(vgt_parse_duration("200ms", &ns), 0);
	assert_int_equal(ns, 200000000);
	assert_int_equal(vgt_parse_duration("30us", &ns), 0);
	assert_int_equal(ns, 30000);
	assert_int_equal(vgt_parse_duration("7ns", &ns), 0);
	assert_int_equal(ns, 7);
	assert_int_equal(vgt_parse_duration("2", &ns), 0);
	assert_int_equal(ns, 2000000000);
	assert_int_equal(vgt_parse_duration(".25", &ns), 0);
	assert_int_equal(ns, 250000000);
	assert_int_equal(vgt_parse_duration("0.000000001s", &ns), 0);
	assert_int_equal(ns, 1);
	assert_int_equal(vgt_parse_duration("1.5ms", &ns), 0);
	assert_int_equal(ns, 1500000);
	assert_int_equal(vgt_parse_duration("", &ns), -1);
	assert_int_equal(vgt_parse_duration("-1s", &ns), -1);
	assert_int_equal(vgt_parse_duration("1h", &ns), -1);
	assert_int_equal(vgt_parse_duration("s", &ns), -1);
	assert_int_equal(vgt_parse_duration("99999999999999999999", &ns), -1);
	assert_int_equal(vgt_parse_duration("9999999999s", &ns), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names_over_time),
	    cmocka_unit_test(test_many_names),
	    cmocka_unit_test(test_names_outlive_event_bytes),
	    cmocka_unit_test(test_format_time),
	    cmocka_unit_test(test_write_cstring),
	    cmocka_unit_test(test_utf8),
	    cmocka_unit_test(test_parse_duration),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
