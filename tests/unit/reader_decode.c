/* Decoding: every field type through a whole trace (directory, image, stream file),
 * and what an event tells about its image, thread and time. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "reader_tracegen.h"
#include "trace/trace.h"

static struct vgt_trace *open_root(void)
{
	char err[256] = "";
	const char *paths[] = {tg_root};
	struct vgt_trace *t = vgt_open(paths, 1, err, sizeof err);
	if (!t)
		fail_msg("vgt_open: %s", err);
	return t;
}

static void write_all_types(struct tg_stream *s, uint64_t ts)
{
	tg_event(s, TG_ALL_TYPES, ts);
	tg_u8(s, 0x80);                   /* i8 -128 */
	tg_u16(s, 0xffff);                /* i16 -1 */
	tg_u32(s, 0x80000000u);           /* i32 min */
	tg_u64(s, 0x8000000000000000ull); /* i64 min */
	tg_u8(s, 255);
	tg_u16(s, 65535);
	tg_u32(s, 4294967295u);
	tg_u64(s, 18446744073709551615ull);
	tg_f64(s, -0.1);
	tg_str(s, "tab\there \xe2\x82\xac");
	tg_bytes(s, "\x00\x01\x02\xff", 4);
	tg_ref(s, 0xdeadbeefcafeull, 7);
}

static void test_values(void **state)
{
	(void)state;
	struct tg_image *img = tg_image_new(tg_root, "app-42-0",
	                                    &(struct tg_image_opts){.procname = "app",
	                                                            .pid = 42,
	                                                            .hostname = "box",
	                                                            .process_gen = 99,
	                                                            .offset_s = 100,
	                                                            .offset = 5});
	struct tg_stream *s = tg_stream_new(img, 43, 2);
	tg_packet_begin(s, 1000);
	write_all_types(s, 1000);
	tg_event(s, TG_EMPTY, 2000);
	tg_event(s, TG_ALL_TYPES, 3000);
	tg_u8(s, 1);
	tg_u16(s, 2);
	tg_u32(s, 3);
	tg_u64(s, 4);
	tg_u8(s, 5);
	tg_u16(s, 6);
	tg_u32(s, 7);
	tg_u64(s, 8);
	tg_f64(s, 1e300);
	tg_str(s, "");
	tg_bytes(s, "", 0);
	tg_ref(s, 0, 0);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);

	struct vgt_trace *t = open_root();
	assert_int_equal(vgt_image_count(t), 1);
	const struct vgt_image *im = vgt_image_at(t, 0);
	assert_true(im->readable);
	assert_string_equal(im->procname, "app");
	assert_string_equal(im->hostname, "box");
	assert_int_equal(im->pid, 42);
	assert_int_equal(im->ppid, 1);
	assert_int_equal(im->process_gen, 99);
	assert_string_equal(vgt_image_env(im, "domain"), "vigil");
	assert_non_null(vgt_image_type(im, "all_types"));
	assert_int_equal(vgt_stream_count(t), 1);

	struct vgt_cursor *c = vgt_cursor_open(t, 0);
	const struct vgt_event *ev = vgt_cursor_next(c);
	assert_non_null(ev);
	assert_string_equal(ev->type->name, "all_types");
	assert_ptr_equal(ev->image, im);
	assert_int_equal(ev->tid, 43);
	assert_int_equal(ev->thread_gen, 2);
	assert_int_equal(ev->clock_value, 1000);
	assert_int_equal(ev->ts, 100 * 1000000000ll + 5 + 1000);
	assert_int_equal(ev->offset, TG_HEADER_SIZE);
	const struct vgt_value *v = ev->values;
	assert_int_equal(v[0].type, VGT_INT);
	assert_int_equal(v[0].i, -128);
	assert_int_equal(v[1].i, -1);
	assert_int_equal(v[2].i, INT32_MIN);
	assert_true(v[3].i == INT64_MIN);
	assert_int_equal(v[4].type, VGT_UINT);
	assert_int_equal(v[4].u, 255);
	assert_int_equal(v[5].u, 65535);
	assert_int_equal(v[6].u, 4294967295u);
	assert_true(v[7].u == UINT64_MAX);
	assert_int_equal(v[8].type, VGT_DOUBLE);
	assert_true(v[8].d == -0.1);
	assert_int_equal(v[9].type, VGT_STRING);
	assert_string_equal(v[9].str.ptr, "tab\there \xe2\x82\xac");
	assert_int_equal(v[9].str.len, 12);
	assert_int_equal(v[10].u, 4); /* the hidden length */
	assert_int_equal(v[11].type, VGT_BYTES);
	assert_int_equal(v[11].bytes.len, 4);
	assert_memory_equal(v[11].bytes.ptr, "\x00\x01\x02\xff", 4);
	assert_int_equal(v[12].type, VGT_REF);
	assert_true(v[12].ref.id == 0xdeadbeefcafeull);
	assert_int_equal(v[12].ref.gen, 7);

	ev = vgt_cursor_next(c);
	assert_non_null(ev);
	assert_string_equal(ev->type->name, "empty");
	assert_int_equal(ev->type->nfields, 0);
	assert_int_equal(ev->clock_value, 2000);

	ev = vgt_cursor_next(c);
	assert_non_null(ev);
	v = ev->values;
	assert_int_equal(v[0].i, 1);
	assert_int_equal(v[3].i, 4);
	assert_int_equal(v[7].u, 8);
	assert_true(v[8].d == 1e300);
	assert_int_equal(v[9].str.len, 0);
	assert_string_equal(v[9].str.ptr, "");
	assert_int_equal(v[11].bytes.len, 0);
	assert_int_equal(v[12].ref.id, 0);

	assert_null(vgt_cursor_next(c));
	assert_null(vgt_cursor_next(c)); /* stays at the end */
	const struct vgt_stream *st = vgt_stream_at(t, 0);
	assert_int_equal(st->stats.events, 3);
	assert_int_equal(st->stats.packets, 1);
	assert_int_equal(st->ndamage_total, 0);
	assert_int_equal(st->stats.first_ts, 100 * 1000000000ll + 5 + 1000);
	assert_int_equal(st->stats.last_ts, 100 * 1000000000ll + 5 + 3000);
	assert_int_equal(vgt_damage_total(t), 0);
	vgt_cursor_close(c);
	vgt_close(t);
	tg_image_free(img);
}

static void test_many_packets_and_slack(void **state)
{
	(void)state;
	struct tg_image *img = tg_image_new(tg_root, "app-42-0", NULL);
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	uint32_t n = 0;
	for (int p = 0; p < 50; p++) {
		tg_packet_begin(s, 10 * n);
		for (int e = 0; e < p; e++, n++)
			tg_tick(s, 10 * n, n);
		tg_packet_end(s, (size_t)p * 3, 0); /* unused zero bytes after the content */
	}
	tg_stream_write(s);
	struct vgt_trace *t = open_root();
	struct vgt_cursor *c = vgt_cursor_open(t, 0);
	uint32_t seen = 0;
	for (const struct vgt_event *ev; (ev = vgt_cursor_next(c)); seen++) {
		assert_int_equal(ev->values[0].u, seen);
		assert_int_equal(ev->clock_value, 10 * seen);
	}
	assert_int_equal(seen, n);
	assert_int_equal(vgt_stream_at(t, 0)->stats.packets, 50);
	assert_int_equal(vgt_damage_total(t), 0);
	vgt_cursor_close(c);
	vgt_close(t);
	tg_image_free(img);
}

static void test_image_found_at_any_depth(void **state)
{
	(void)state;
	char *a, *deep;
	assert_true(asprintf(&a, "%s/a", tg_root) > 0);
	assert_true(asprintf(&deep, "%s/a/b", tg_root) > 0);
	assert_int_equal(mkdir(a, 0777), 0);
	assert_int_equal(mkdir(deep, 0777), 0);
	struct tg_image *x = tg_image_new(deep, "x-1-0", &(struct tg_image_opts){.pid = 1});
	struct tg_image *y = tg_image_new(tg_root, "y-2-0", &(struct tg_image_opts){.pid = 2});
	struct vgt_trace *t = open_root();
	assert_int_equal(vgt_image_count(t), 2);
	/* Children by name: a/b/x-1-0 before y-2-0. */
	assert_int_equal(vgt_image_at(t, 0)->pid, 1);
	assert_int_equal(vgt_image_at(t, 1)->pid, 2);
	vgt_close(t);

	/* The same image named twice is opened once. */
	char err[256];
	const char *paths[] = {tg_root, tg_image_dir(x)};
	t = vgt_open(paths, 2, err, sizeof err);
	assert_non_null(t);
	assert_int_equal(vgt_image_count(t), 2);
	vgt_close(t);
	tg_image_free(x);
	tg_image_free(y);
	free(a);
	free(deep);
}

static void test_open_errors(void **state)
{
	(void)state;
	char err[256];
	const char *missing[] = {"/nonexistent/trace"};
	assert_null(vgt_open(missing, 1, err, sizeof err));
	assert_string_equal(err, "cannot open '/nonexistent/trace': No such file or directory");
	const char *empty[] = {tg_root};
	assert_null(vgt_open(empty, 1, err, sizeof err));
	assert_true(strstr(err, "is not a vigil trace: no metadata file in it") != NULL);
	const char *file[] = {"/etc/hostname"};
	assert_null(vgt_open(file, 1, err, sizeof err));
	assert_string_equal(err, "'/etc/hostname' is not a directory (a trace is a directory)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_values, tg_setup, tg_teardown),
	    cmocka_unit_test_setup_teardown(test_many_packets_and_slack, tg_setup, tg_teardown),
	    cmocka_unit_test_setup_teardown(test_image_found_at_any_depth, tg_setup, tg_teardown),
	    cmocka_unit_test_setup_teardown(test_open_errors, tg_setup, tg_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
