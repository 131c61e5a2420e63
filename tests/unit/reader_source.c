/* The event source (trace/source.h): the open's readable check and its one error line,
 * merged reading, class numbers across images, field slots resolved by name and read by
 * slot, value conversion, and the damage report's lines. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reader_tracegen.h"
#include "trace/source.h"

static struct vgt_source *open_root(unsigned flags)
{
	char err[512] = "";
	const char *paths[] = {tg_root};
	struct vgt_source *s = vgt_source_open(paths, 1, flags, err, sizeof err);
	if (!s)
		fail_msg("vgt_source_open: %s", err);
	return s;
}

static void all_types(struct tg_stream *s, uint64_t ts, int8_t i8, uint64_t u64, double d,
                      const char *text, uint64_t who)
{
	tg_event(s, TG_ALL_TYPES, ts);
	tg_u8(s, (uint8_t)i8);
	tg_u16(s, 0);
	tg_u32(s, 0);
	tg_u64(s, 0);
	tg_u8(s, 0);
	tg_u16(s, 0);
	tg_u32(s, 0);
	tg_u64(s, u64);
	tg_f64(s, d);
	tg_str(s, text);
	tg_bytes(s, "", 0);
	tg_ref(s, who, 3);
}

/* Two images, one stream each: classes numbered across both, events merged by time,
 * fields found by name in each image's own declaration. */
static void test_classes_slots_and_values(void **state)
{
	(void)state;
	struct tg_image *a = tg_image_new(tg_root, "a-1-0", &(struct tg_image_opts){.pid = 1});
	struct tg_image *b = tg_image_new(tg_root, "b-2-0", &(struct tg_image_opts){.pid = 2});
	struct tg_stream *sa = tg_stream_new(a, 10, 0);
	tg_packet_begin(sa, 100);
	all_types(sa, 100, -5, 7, 2.5, "first", 41);
	tg_tick(sa, 300, 9);
	tg_packet_end(sa, 0, 0);
	tg_stream_write(sa);
	struct tg_stream *sb = tg_stream_new(b, 11, 0);
	tg_packet_begin(sb, 200);
	all_types(sb, 200, 6, 18446744073709551615ull, -1.0, "second", 42);
	tg_packet_end(sb, 0, 0);
	tg_stream_write(sb);

	struct vgt_source *src = open_root(0);
	struct vgt_trace *t = vgt_source_trace(src);
	size_t per_image = vgt_image_at(t, 0)->ntypes;
	assert_true(per_image >= 5);
	assert_int_equal(vgt_class_count(t), per_image + vgt_image_at(t, 1)->ntypes);
	for (size_t i = 0; i < vgt_class_count(t); i++)
		assert_int_equal(vgt_class_at(t, i)->class_id, i);
	assert_null(vgt_class_at(t, vgt_class_count(t)));
	/* the same name in two images: two classes */
	const struct vgt_event_type *ta = vgt_image_type(vgt_image_at(t, 0), "all_types");
	const struct vgt_event_type *tb = vgt_image_type(vgt_image_at(t, 1), "all_types");
	assert_int_not_equal(ta->class_id, tb->class_id);

	static const char *const names[] = {"i8", "u64", "d", "s", "who", "nothere", "n"};
	struct vgt_fields *f = vgt_fields_new(t, names, 7);
	const int *slots = vgt_fields_slots(f, ta);
	assert_int_equal(slots[0], vgt_type_field(ta, "i8"));
	assert_int_equal(slots[4], vgt_type_field(ta, "who"));
	assert_int_equal(slots[5], -1);
	assert_int_equal(slots[6], -1);
	/* one class alone: the same slots */
	int one[7];
	vgt_class_slots(tb, names, 7, one);
	for (size_t k = 0; k < 7; k++)
		assert_int_equal(one[k], vgt_fields_slots(f, tb)[k]);

	const struct vgt_event *ev = vgt_source_next(src);
	assert_non_null(ev);
	assert_ptr_equal(ev->type, ta);
	slots = vgt_fields_slots(f, ev->type);
	assert_int_equal(vgt_value_i64(&ev->values[slots[0]]), -5);
	assert_int_equal(vgt_slot_u64(ev, slots[1]), 7);
	assert_true(vgt_value_double(&ev->values[slots[2]]) == 2.5);
	assert_true(vgt_value_double(&ev->values[slots[1]]) == 7.0);
	assert_string_equal(vgt_slot_text(ev, slots[3]), "first");
	assert_string_equal(vgt_slot_text(ev, slots[1]), ""); /* not a string */
	assert_string_equal(vgt_slot_text(ev, slots[5]), ""); /* no such field */
	assert_int_equal(vgt_slot_u64(ev, slots[5]), 0);
	uint64_t id = 0;
	uint32_t gen = 0;
	assert_true(vgt_value_ref(&ev->values[slots[4]], &id, &gen));
	assert_int_equal(id, 41);
	assert_int_equal(gen, 3);
	assert_int_equal(vgt_slot_u64(ev, slots[4]), 41);
	assert_false(vgt_value_ref(&ev->values[slots[3]], &id, &gen));
	id = gen = 0;
	assert_true(vgt_slot_ref(ev, slots[4], &id, &gen));
	assert_int_equal(id, 41);
	assert_int_equal(gen, 3);
	assert_false(vgt_slot_ref(ev, slots[1], &id, &gen)); /* not a reference */
	assert_false(vgt_slot_ref(ev, slots[5], &id, &gen)); /* no such field */
	assert_string_equal(vgt_value_string(&ev->values[slots[3]]), "first");
	assert_null(vgt_value_string(&ev->values[slots[1]])); /* not a string */

	ev = vgt_source_next(src); /* ts 200: the other image's declaration */
	assert_non_null(ev);
	assert_ptr_equal(ev->type, tb);
	slots = vgt_fields_slots(f, ev->type);
	assert_int_equal(vgt_slot_u64(ev, slots[1]), 18446744073709551615ull);
	assert_int_equal(vgt_value_i64(&ev->values[slots[0]]), 6);
	assert_string_equal(vgt_slot_text(ev, slots[3]), "second");

	ev = vgt_source_next(src); /* ts 300: a tick, its one field `n` */
	assert_non_null(ev);
	slots = vgt_fields_slots(f, ev->type);
	assert_int_equal(slots[0], -1);
	assert_int_equal(vgt_slot_u64(ev, slots[6]), 9);
	assert_null(vgt_source_next(src));
	vgt_fields_free(f);
	vgt_source_close(src);
	tg_image_free(a);
	tg_image_free(b);
}

/* No image with usable metadata: the open fails with one line naming the path, unless
 * asked for the source (to report the damage). */
static void test_unreadable(void **state)
{
	(void)state;
	struct tg_image *img = tg_image_new(tg_root, "bad-1-0", NULL);
	char md[4200];
	snprintf(md, sizeof md, "%s/metadata", tg_image_dir(img));
	tg_write_file(md, "garbage\n", 8);
	char err[512] = "";
	const char *paths[] = {tg_root};
	assert_null(vgt_source_open(paths, 1, 0, err, sizeof err));
	char want[4200];
	snprintf(want, sizeof want, "%s: no process image has readable metadata (see vigil dump)",
	         tg_root);
	assert_string_equal(err, want);
	err[0] = 0;
	assert_null(vgt_open_readable(paths, 1, err, sizeof err));
	assert_string_equal(err, want);
	struct vgt_source *s = vgt_source_open(paths, 1, VGT_SOURCE_UNREADABLE_OK, err, sizeof err);
	assert_non_null(s);
	assert_false(vgt_source_readable(s));
	assert_null(vgt_source_next(s));
	/* the report names the metadata file, as vgt_damage_format does */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	vgt_damage_report(vgt_source_trace(s), "vigil test", "", f);
	fclose(f);
	assert_non_null(strstr(text, md));
	assert_int_equal(text[len - 1], '\n');
	free(text);
	vgt_source_close(s);
	/* a path that is no trace: vgt_open's own line */
	const char *none[] = {"/nonexistent-vigil-source"};
	assert_null(vgt_source_open(none, 1, 0, err, sizeof err));
	assert_non_null(strstr(err, "/nonexistent-vigil-source"));
	tg_image_free(img);
}

static void count_line(void *ctx, const char *text)
{
	(void)text;
	(*(size_t *)ctx)++;
}

/* A truncated stream and one that lost events: the entries, then the discarded line. */
static void test_damage_report(void **state)
{
	(void)state;
	struct tg_image *img = tg_image_new(tg_root, "d-3-0", NULL);
	struct tg_stream *s = tg_stream_new(img, 5, 0);
	tg_packet_begin(s, 10);
	tg_tick(s, 10, 1);
	tg_packet_end(s, 0, 12);
	tg_packet_begin(s, 20);
	tg_tick(s, 20, 2);
	tg_packet_end(s, 0, 12);
	size_t len;
	tg_stream_bytes(s, &len);
	tg_stream_truncate(s, len - 3);
	const char *path = tg_stream_write(s);
	char spath[4200];
	snprintf(spath, sizeof spath, "%s", path);
	struct vgt_source *src = open_root(0);
	while (vgt_source_next(src))
		;
	struct vgt_trace *t = vgt_source_trace(src);
	size_t n = 0;
	vgt_damage_each(t, count_line, &n);
	assert_true(n >= 1);
	assert_int_equal(n, vgt_damage_total(t));
	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	vgt_damage_report(t, "vigil test", " (a note)", f);
	fclose(f);
	char want[4400];
	snprintf(want, sizeof want, "vigil test: 12 events discarded in %s (a note)\n", spath);
	assert_non_null(strstr(text, want));
	assert_non_null(strstr(text, spath));
	free(text);
	vgt_source_close(src);
	tg_image_free(img);
}

/* A source over a trace opened elsewhere leaves it open; its window bounds the events. */
static void test_source_of_and_window(void **state)
{
	(void)state;
	struct tg_image *img = tg_image_new(tg_root, "w-4-0", NULL);
	struct tg_stream *s = tg_stream_new(img, 5, 0);
	tg_packet_begin(s, 10);
	for (uint32_t i = 1; i <= 5; i++)
		tg_tick(s, 10 * i, i);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	char err[256];
	const char *paths[] = {tg_root};
	struct vgt_trace *t = vgt_open(paths, 1, err, sizeof err);
	assert_non_null(t);
	struct vgt_source *src = vgt_source_of(t);
	int64_t first = vgt_source_first_ts(src);
	vgt_source_window(src, first + 10, first + 30);
	uint32_t got[8];
	size_t n = 0;
	for (const struct vgt_event *ev; (ev = vgt_source_next(src));)
		got[n++] = (uint32_t)ev->values[0].u;
	assert_int_equal(n, 3);
	assert_int_equal(got[0], 2);
	assert_int_equal(got[2], 4);
	vgt_source_close(src);
	assert_int_equal(vgt_stream_count(t), 1); /* still open */
	vgt_close(t);
	tg_image_free(img);
}

/* What this process holds of the mapping of `path` (/proc/self/smaps), in kB; *size_kb
 * its size. */
static size_t resident_kb(const char *path, size_t *size_kb)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[4400];
	size_t rss = 0, kb;
	bool in = false;
	*size_kb = 0;
	while (f && fgets(line, sizeof line, f)) {
		const char *space = strchr(line, ' '), *dash = strchr(line, '-');
		if (dash && space && dash < space) { /* a mapping's first line */
			const char *p = strchr(line, '/');
			in = p && !strncmp(p, path, strlen(path)) && p[strlen(path)] == '\n';
		} else if (in && sscanf(line, "Size: %zu kB", &kb) == 1) {
			*size_kb += kb;
		} else if (in && sscanf(line, "Rss: %zu kB", &kb) == 1) {
			rss += kb;
		}
	}
	if (f)
		fclose(f);
	return rss;
}

/* A stream read to its end leaves no page of its file in the process (trace/image.c,
 * vgt_stream_drop_rest): a file smaller than the megabyte a cursor drops behind it at a
 * time, and a split stream's ranges, would otherwise stay mapped in until closed. */
static void test_read_pages_leave(void **state)
{
	(void)state;
	struct tg_image *img = tg_image_new(tg_root, "p-5-0", NULL);
	struct tg_stream *s = tg_stream_new(img, 5, 0);
	uint64_t ts = 10;
	for (int p = 0; p < 400; p++) {
		tg_packet_begin(s, ts);
		for (int i = 0; i < 20; i++, ts += 10)
			tg_tick(s, ts, (uint32_t)i);
		tg_packet_end(s, 0, 0);
	}
	char path[4200];
	snprintf(path, sizeof path, "%s", tg_stream_write(s));
	struct vgt_source *src = open_root(0);
	struct vgt_cursor *c = vgt_source_stream(src, 0);
	size_t size_kb, n = 0;
	while (vgt_cursor_next(c)) {
		if (++n == 4000) /* halfway: its pages are in */
			assert_true(resident_kb(path, &size_kb) > 0);
	}
	assert_int_equal(n, 8000);
	size_t rss = resident_kb(path, &size_kb);
	assert_true(size_kb >= 64);
	if (rss)
		fail_msg("%zu of %zu kB of a stream read to its end are still in", rss, size_kb);
	vgt_cursor_close(c);
	vgt_source_close(src);
	tg_image_free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_classes_slots_and_values, tg_setup, tg_teardown),
	    cmocka_unit_test_setup_teardown(test_unreadable, tg_setup, tg_teardown),
	    cmocka_unit_test_setup_teardown(test_damage_report, tg_setup, tg_teardown),
	    cmocka_unit_test_setup_teardown(test_source_of_and_window, tg_setup, tg_teardown),
	    cmocka_unit_test_setup_teardown(test_read_pages_leave, tg_setup, tg_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
