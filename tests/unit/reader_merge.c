/* Merge: all streams of all images in absolute time order, ties in stream order, the
 * time window, and clocks shared by processes of one boot. */
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

static struct vgt_trace *open_root(void)
{
	char err[256] = "";
	const char *paths[] = {tg_root};
	struct vgt_trace *t = vgt_open(paths, 1, err, sizeof err);
	if (!t)
		fail_msg("vgt_open: %s", err);
	return t;
}

/* One stream of ticks: n[i] at clock value ts[i]. */
static void ticks(struct tg_image *img, uint32_t tid, const uint64_t *ts, const uint32_t *n,
                  size_t count, size_t per_packet)
{
	struct tg_stream *s = tg_stream_new(img, tid, 0);
	for (size_t i = 0; i < count; i++) {
		if (i % per_packet == 0)
			tg_packet_begin(s, ts[i]);
		tg_tick(s, ts[i], n[i]);
		if (i % per_packet == per_packet - 1 || i == count - 1)
			tg_packet_end(s, 0, 0);
	}
	tg_stream_write(s);
}

/* The tick numbers in merged order. */
static size_t merged(struct vgt_merge *m, uint32_t *out, size_t max)
{
	size_t n = 0;
	for (const struct vgt_event *ev; (ev = vgt_merge_next(m));) {
		assert_true(n < max);
		out[n++] = (uint32_t)ev->values[0].u;
	}
	return n;
}

static void test_order_across_streams_and_images(void **state)
{
	(void)state;
	/* Same clock (same uuid and offset): the raw values order everything. */
	struct tg_image *a = tg_image_new(tg_root, "a-1-0", &(struct tg_image_opts){.pid = 1});
	struct tg_image *b = tg_image_new(tg_root, "b-2-0", &(struct tg_image_opts){.pid = 2});
	ticks(a, 10, (uint64_t[]){5, 20, 21, 40, 90}, (uint32_t[]){1, 4, 5, 8, 13}, 5, 2);
	ticks(a, 11, (uint64_t[]){10, 30, 50}, (uint32_t[]){2, 6, 9}, 3, 1);
	ticks(b, 12, (uint64_t[]){15, 35, 60, 70, 80}, (uint32_t[]){3, 7, 10, 11, 12}, 5, 4);
	struct vgt_trace *t = open_root();
	assert_int_equal(vgt_stream_count(t), 3);
	struct vgt_merge *m = vgt_merge_open(t);
	assert_int_equal(vgt_merge_first_ts(m), 1700000000ll * 1000000000 + 5);
	uint32_t got[32];
	size_t n = merged(m, got, 32);
	assert_int_equal(n, 13);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(got[i], i + 1);
	vgt_merge_close(m);
	vgt_close(t);
	tg_image_free(a);
	tg_image_free(b);
}

static void test_ties_keep_stream_order(void **state)
{
	(void)state;
	struct tg_image *a = tg_image_new(tg_root, "a-1-0", &(struct tg_image_opts){.pid = 1});
	struct tg_image *b = tg_image_new(tg_root, "b-2-0", &(struct tg_image_opts){.pid = 2});
	/* Every stream has events at 100 and 200; streams are ordered a/10, a/11, b/9. */
	ticks(b, 9, (uint64_t[]){100, 100, 200}, (uint32_t[]){5, 6, 9}, 3, 8);
	ticks(a, 11, (uint64_t[]){100, 200}, (uint32_t[]){4, 8}, 2, 8);
	ticks(a, 10, (uint64_t[]){100, 100, 100, 200}, (uint32_t[]){1, 2, 3, 7}, 4, 1);
	struct vgt_trace *t = open_root();
	assert_string_equal(strrchr(vgt_stream_at(t, 0)->path, '/'), "/stream-10-0");
	assert_string_equal(strrchr(vgt_stream_at(t, 2)->path, '/'), "/stream-9-0");
	struct vgt_merge *m = vgt_merge_open(t);
	uint32_t got[16];
	size_t n = merged(m, got, 16);
	assert_int_equal(n, 9);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(got[i], i + 1);
	vgt_merge_close(m);
	vgt_close(t);
	tg_image_free(a);
	tg_image_free(b);
}

static void test_clock_offsets(void **state)
{
	(void)state;
	/* Different boots (clock uuids): each image's own offset applies. b's clock starts
	 * one second later, so its value 0 comes after a's value 500 ms. */
	struct tg_image *a = tg_image_new(
	    tg_root, "a-1-0",
	    &(struct tg_image_opts){
	        .pid = 1, .offset_s = 10, .clock_uuid = "11111111-1111-1111-1111-111111111111"});
	struct tg_image *b = tg_image_new(
	    tg_root, "b-2-0",
	    &(struct tg_image_opts){
	        .pid = 2, .offset_s = 11, .clock_uuid = "22222222-2222-2222-2222-222222222222"});
	ticks(a, 1, (uint64_t[]){0, 500000000, 1500000000}, (uint32_t[]){1, 2, 4}, 3, 8);
	ticks(b, 2, (uint64_t[]){0, 1000000000}, (uint32_t[]){3, 5}, 2, 8);
	struct vgt_trace *t = open_root();
	assert_int_equal(vgt_image_at(t, 1)->clock_offset_ns, 11000000000ll);
	struct vgt_merge *m = vgt_merge_open(t);
	uint32_t got[8];
	size_t n = merged(m, got, 8);
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(got[i], i + 1);
	vgt_merge_close(m);
	vgt_close(t);
	tg_image_free(a);
	tg_image_free(b);
}

static void test_one_boot_one_offset(void **state)
{
	(void)state;
	/* Same clock uuid, offsets measured 3 us apart: the first image's offset is used
	 * for both, so raw clock values decide the order. */
	struct tg_image *a = tg_image_new(
	    tg_root, "a-1-0", &(struct tg_image_opts){.pid = 1, .offset_s = 10, .offset = 1000});
	struct tg_image *b = tg_image_new(
	    tg_root, "b-2-0", &(struct tg_image_opts){.pid = 2, .offset_s = 10, .offset = 4000});
	ticks(a, 1, (uint64_t[]){100, 2100}, (uint32_t[]){1, 3}, 2, 8);
	ticks(b, 2, (uint64_t[]){2000}, (uint32_t[]){2}, 1, 8);
	struct vgt_trace *t = open_root();
	assert_int_equal(vgt_image_at(t, 1)->clock_offset_ns, 10000001000ll);
	struct vgt_merge *m = vgt_merge_open(t);
	uint32_t got[8];
	assert_int_equal(merged(m, got, 8), 3);
	assert_int_equal(got[0], 1);
	assert_int_equal(got[1], 2);
	assert_int_equal(got[2], 3);
	vgt_merge_close(m);
	vgt_close(t);
	tg_image_free(a);
	tg_image_free(b);
}

static void test_window(void **state)
{
	(void)state;
	struct tg_image *a = tg_image_new(tg_root, "a-1-0", &(struct tg_image_opts){.pid = 1});
	uint64_t ts[10];
	uint32_t n[10];
	for (int i = 0; i < 10; i++) {
		ts[i] = 1000 + 100 * (uint64_t)i;
		n[i] = (uint32_t)i;
	}
	ticks(a, 1, ts, n, 10, 3);
	ticks(a, 2, (uint64_t[]){1150, 1950}, (uint32_t[]){100, 101}, 2, 3);
	struct vgt_trace *t = open_root();
	struct vgt_merge *m = vgt_merge_open(t);
	int64_t first = vgt_merge_first_ts(m);
	/* [first + 200, first + 500]: both ends included. */
	vgt_merge_window(m, first + 200, first + 500);
	uint32_t got[16];
	size_t k = merged(m, got, 16);
	assert_int_equal(k, 4);
	assert_int_equal(got[0], 2);
	assert_int_equal(got[1], 3);
	assert_int_equal(got[2], 4);
	assert_int_equal(got[3], 5);
	/* Streams were still read to their ends. */
	assert_int_equal(vgt_stream_at(t, 0)->stats.events, 10);
	assert_int_equal(vgt_stream_at(t, 1)->stats.events, 2);
	vgt_merge_close(m);

	m = vgt_merge_open(t);
	vgt_merge_window(m, first + 100, first + 150);
	k = merged(m, got, 16);
	assert_int_equal(k, 2);
	assert_int_equal(got[0], 1);
	assert_int_equal(got[1], 100);
	vgt_merge_close(m);
	vgt_close(t);
	tg_image_free(a);
}

static void test_empty_streams(void **state)
{
	(void)state;
	struct tg_image *a = tg_image_new(tg_root, "a-1-0", &(struct tg_image_opts){.pid = 1});
	struct tg_stream *s = tg_stream_new(a, 5, 0);
	tg_stream_write(s); /* an empty file */
	s = tg_stream_new(a, 6, 0);
	tg_packet_begin(s, 5);
	tg_packet_end(s, 16, 0); /* a packet without events */
	tg_stream_write(s);
	struct vgt_trace *t = open_root();
	struct vgt_merge *m = vgt_merge_open(t);
	assert_true(vgt_merge_first_ts(m) == INT64_MIN);
	assert_null(vgt_merge_next(m));
	assert_int_equal(vgt_damage_total(t), 0);
	assert_int_equal(vgt_stream_at(t, 1)->stats.packets, 1);
	vgt_merge_close(m);
	vgt_close(t);
	tg_image_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_order_across_streams_and_images, tg_setup,
	                                    tg_teardown),
	    cmocka_unit_test_setup_teardown(test_ties_keep_stream_order, tg_setup, tg_teardown),
	    cmocka_unit_test_setup_teardown(test_clock_offsets, tg_setup, tg_teardown),
	    cmocka_unit_test_setup_teardown(test_one_boot_one_offset, tg_setup, tg_teardown),
	    cmocka_unit_test_setup_teardown(test_window, tg_setup, tg_teardown),
	    cmocka_unit_test_setup_teardown(test_empty_streams, tg_setup, tg_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
