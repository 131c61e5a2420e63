/* Following a trace while it is written (trace/follow.h): a trace grown between polls
 * the way vigil's runtime grows one. A stream's last packet is read up to its
 * content_size as that grows (the bytes past it not written yet), a stream and an image
 * that appear mid-run are taken up, a declaration appended to the metadata is read
 * before the event that needs it, events come out in time order up to the watermark and
 * none is late, and nothing is damage while the run goes on; at its end, a stream cut
 * inside an event is damage (counted), and so is a doubt that lasts 2 s. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "reader_tracegen.h"
#include "trace/follow.h"
#include "trace/source.h"

#define BASE ((int64_t)1700000000 * 1000000000) /* the images' clock offset */
#define EXTRA_ID 9

/* What the follower hands out up to `until` (ns after the clock's offset, or
 * VGT_FOLLOW_END): names and times appended to the lists. */
struct seen {
	char names[64][32];
	int64_t ts[64];
	size_t n;
};

static size_t take(struct vgt_follow *f, int64_t until, struct seen *out)
{
	size_t classes = vgt_follow_poll(f, until == VGT_FOLLOW_END ? until : BASE + until);
	const struct vgt_event *ev;
	while ((ev = vgt_follow_next(f))) {
		assert_true(out->n < 64);
		snprintf(out->names[out->n], sizeof out->names[0], "%s", ev->type->name);
		out->ts[out->n++] = ev->ts - BASE;
	}
	return classes;
}

/* A stream file as its writer leaves it part-way: the packet's bytes up to `written`,
 * zeros after them up to the packet's end (its space is allocated), content_size
 * `content` bytes from the packet start. */
static void write_partial(const char *path, const uint8_t *bytes, size_t len, size_t written,
                          size_t content)
{
	uint8_t *copy = calloc(1, len);
	memcpy(copy, bytes, written);
	tg_put64(copy + 40, content * 8);
	tg_write_file(path, copy, len);
	free(copy);
}

static void stream_len(struct tg_stream *s, size_t *len)
{
	tg_stream_bytes(s, len);
}

static void test_growing_trace(void **state)
{
	(void)state;
	char err[512] = "";
	struct vgt_follow *f = vgt_follow_open(tg_root, err, sizeof err);
	if (!f)
		fail_msg("vgt_follow_open: %s", err);
	struct seen seen = {0};
	take(f, 1000000, &seen);
	assert_int_equal(seen.n, 0); /* nothing yet: no image */
	assert_int_equal(vgt_image_count(vgt_follow_trace(f)), 0);

	/* Image A, one stream whose packet grows: ticks at 1000, 2000, 3000, then an event
	 * of a type declared later. */
	struct tg_image *a = tg_image_new(tg_root, "app-42-0", NULL);
	struct tg_stream *s1 = tg_stream_new(a, 1, 0);
	size_t after[5];
	tg_packet_begin(s1, 1000);
	stream_len(s1, &after[0]);
	tg_tick(s1, 1000, 1);
	stream_len(s1, &after[1]);
	tg_tick(s1, 2000, 2);
	stream_len(s1, &after[2]);
	tg_tick(s1, 3000, 3);
	stream_len(s1, &after[3]);
	tg_event(s1, EXTRA_ID, 3500);
	tg_u32(s1, 35);
	stream_len(s1, &after[4]);
	tg_packet_end(s1, 256, 0);
	size_t len;
	const uint8_t *b1 = tg_stream_bytes(s1, &len);
	uint8_t *bytes1 = malloc(len);
	memcpy(bytes1, b1, len);
	char *path1 = NULL;
	if (asprintf(&path1, "%s/stream-1-0", tg_image_dir(a)) < 0)
		fail();
	/* two events committed, the third half-written past content_size */
	write_partial(path1, bytes1, len, after[2] + 3, after[2]);
	take(f, 1000000, &seen);
	assert_int_equal(seen.n, 2);
	assert_string_equal(seen.names[0], "tick");
	assert_int_equal(seen.ts[1], 2000);
	assert_int_equal(vgt_damage_total(vgt_follow_trace(f)), 0);

	/* The third committed; a second stream and a second image appear. The watermark
	 * holds back what is later than 3200. */
	write_partial(path1, bytes1, len, after[3], after[3]);
	struct tg_stream *s2 = tg_stream_new(a, 2, 0);
	tg_packet_begin(s2, 2500);
	tg_tick(s2, 2500, 25);
	tg_tick(s2, 4000, 40);
	tg_packet_end(s2, 0, 0);
	tg_stream_write(s2);
	struct tg_image_opts bo = {.procname = "other", .pid = 43};
	struct tg_image *bimg = tg_image_new(tg_root, "other-43-0", &bo);
	struct tg_stream *s3 = tg_stream_new(bimg, 7, 0);
	tg_packet_begin(s3, 2600);
	tg_tick(s3, 2600, 26);
	tg_packet_end(s3, 0, 0);
	tg_stream_write(s3);
	size_t classes = vgt_follow_trace(f) ? vgt_class_count(vgt_follow_trace(f)) : 0;
	size_t added = take(f, 3200, &seen);
	assert_true(added > 0); /* the second image's classes */
	assert_int_equal(vgt_class_count(vgt_follow_trace(f)), classes + added);
	assert_int_equal(vgt_image_count(vgt_follow_trace(f)), 2);
	assert_int_equal(seen.n, 5);
	assert_int_equal(seen.ts[2], 2500);
	assert_int_equal(seen.ts[3], 2600);
	assert_int_equal(seen.ts[4], 3000);

	/* An event whose type is declared after the image was opened: the metadata grows
	 * (as the runtime appends a declaration when a sensor registers), then the event is
	 * committed. */
	tg_declare(a, "extra", EXTRA_ID, "vigil:kind=event;flag=sensor;traced", "uint32_t n;");
	tg_write_metadata(a);
	write_partial(path1, bytes1, len, after[4], after[4]);
	added = take(f, 1000000, &seen);
	assert_int_equal(added, 1);
	assert_int_equal(seen.n, 7);
	assert_string_equal(seen.names[5], "extra");
	assert_int_equal(seen.ts[5], 3500);
	assert_int_equal(seen.ts[6], 4000);
	struct vgt_trace *t = vgt_follow_trace(f);
	assert_string_equal(vgt_class_at(t, vgt_class_count(t) - 1)->name, "extra");

	/* A stream cut inside an event (its writer killed): waited for while the run goes
	 * on, damage at its end. */
	struct tg_stream *s4 = tg_stream_new(a, 3, 0);
	tg_packet_begin(s4, 5000);
	tg_tick(s4, 5000, 50);
	tg_tick(s4, 6000, 60);
	tg_packet_end(s4, 0, 0);
	const uint8_t *b4 = tg_stream_bytes(s4, &len);
	char *path4 = NULL;
	if (asprintf(&path4, "%s/stream-3-0", tg_image_dir(a)) < 0)
		fail();
	tg_write_file(path4, b4, len - 2);
	take(f, 1000000, &seen);
	assert_int_equal(seen.n, 8); /* 5000; 6000 is cut */
	assert_int_equal(vgt_damage_total(vgt_follow_trace(f)), 0);
	take(f, VGT_FOLLOW_END, &seen);
	assert_int_equal(seen.n, 8);
	assert_true(vgt_damage_total(vgt_follow_trace(f)) >= 1);

	struct vgt_follow_stats st;
	vgt_follow_stats(f, &st);
	assert_int_equal(st.late, 0);
	assert_int_equal(st.events, 8);
	assert_int_equal(st.streams, 4);
	for (size_t i = 1; i < seen.n; i++)
		assert_true(seen.ts[i - 1] <= seen.ts[i]);

	vgt_follow_close(f);
	tg_stream_write(s1);
	tg_stream_write(s4);
	free(bytes1);
	free(path1);
	free(path4);
	tg_image_free(a);
	tg_image_free(bimg);
}

/* One stream of two packets whose second header is half-written (the magic and part of
 * the uuid), the rest of the file allocated: a writer preempted, or killed, inside it. */
struct half_written {
	struct tg_image *img;
	struct tg_stream *s;
	const uint8_t *bytes; /* the whole stream */
	size_t len;
	char *path;
	struct vgt_follow *f;
};

/* Opens the stream half-written and follows it: the first packet's event is handed out
 * (into *seen), no damage. */
static void half_written_open(struct half_written *h, struct seen *seen)
{
	h->img = tg_image_new(tg_root, "app-42-0", NULL);
	h->s = tg_stream_new(h->img, 1, 0);
	tg_packet_begin(h->s, 1000);
	tg_tick(h->s, 1000, 1);
	tg_packet_end(h->s, 0, 0);
	size_t first;
	tg_stream_bytes(h->s, &first);
	tg_packet_begin(h->s, 2000);
	tg_tick(h->s, 2000, 2);
	tg_packet_end(h->s, 64, 0);
	h->bytes = tg_stream_bytes(h->s, &h->len);
	if (asprintf(&h->path, "%s/stream-1-0", tg_image_dir(h->img)) < 0)
		fail();
	uint8_t *copy = calloc(1, h->len);
	memcpy(copy, h->bytes, first + 10);
	tg_write_file(h->path, copy, h->len);
	free(copy);
	char err[512];
	h->f = vgt_follow_open(tg_root, err, sizeof err);
	assert_non_null(h->f);
	take(h->f, 1000000, seen);
	assert_int_equal(seen->n, 1);
	assert_int_equal(vgt_damage_total(vgt_follow_trace(h->f)), 0);
}

static void half_written_close(struct half_written *h)
{
	vgt_follow_close(h->f);
	free(h->path);
	tg_stream_write(h->s);
	tg_image_free(h->img);
}

/* A packet header half-written at the end of a stream (its writer preempted inside it)
 * is waited for, not damage; the whole trace read at the end equals vgt_open's. */
static void test_half_written_header(void **state)
{
	(void)state;
	struct half_written h;
	struct seen seen = {0};
	half_written_open(&h, &seen);
	tg_write_file(h.path, h.bytes, h.len);
	take(h.f, VGT_FOLLOW_END, &seen);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.ts[1], 2000);
	assert_int_equal(vgt_damage_total(vgt_follow_trace(h.f)), 0);
	half_written_close(&h);
}

/* A header that stays half-written (its writer killed inside it) is taken as written
 * once the doubt has lasted 2 s: damage reported while the run goes on, and the stream's
 * events before it were handed out. */
static void test_doubt_becomes_damage(void **state)
{
	(void)state;
	struct half_written h;
	struct seen seen = {0};
	half_written_open(&h, &seen);
	struct timespec pause = {2, 200000000}; /* past the 2 s a doubt lasts */
	nanosleep(&pause, NULL);
	take(h.f, 1000000, &seen);
	take(h.f, 1000000, &seen);
	assert_true(vgt_damage_total(vgt_follow_trace(h.f)) >= 1);
	assert_int_equal(seen.n, 1);
	half_written_close(&h);
}

/* Damage entries of one kind in the trace's streams. */
static size_t damage_of_kind(const struct vgt_trace *t, enum vgt_damage_kind kind)
{
	size_t n = 0;
	for (size_t i = 0; i < vgt_stream_count(t); i++) {
		const struct vgt_stream *s = vgt_stream_at(t, i);
		for (size_t k = 0; k < s->ndamage; k++)
			n += s->damage[k].kind == kind;
	}
	return n;
}

/* A packet whose packet_size runs past the end of its file (its writer killed before
 * its space was allocated), first seen while following: waited for while the run goes
 * on, packet-past-eof at its end as when the trace is read at once. */
static void test_packet_past_eof(void **state)
{
	(void)state;
	struct tg_image *img = tg_image_new(tg_root, "app-42-0", NULL);
	struct tg_stream *s = tg_stream_new(img, 1, 0);
	tg_packet_begin(s, 1000);
	tg_tick(s, 1000, 1);
	tg_tick(s, 2000, 2);
	tg_packet_end(s, 256, 0);
	size_t len;
	tg_stream_bytes(s, &len);
	tg_stream_truncate(s, len - 256); /* the file ends where the content does */
	tg_stream_write(s);
	char err[512];
	struct vgt_follow *f = vgt_follow_open(tg_root, err, sizeof err);
	assert_non_null(f);
	struct seen seen = {0};
	take(f, 1000000, &seen);
	assert_int_equal(seen.n, 2);
	assert_int_equal(vgt_damage_total(vgt_follow_trace(f)), 0);
	take(f, VGT_FOLLOW_END, &seen);
	assert_int_equal(seen.n, 2);
	const struct vgt_trace *t = vgt_follow_trace(f);
	assert_int_equal(damage_of_kind(t, VGT_DMG_PACKET_PAST_EOF), 1);

	const char *paths[1] = {tg_root};
	struct vgt_trace *whole = vgt_open(paths, 1, err, sizeof err);
	assert_non_null(whole);
	struct vgt_cursor *c = vgt_cursor_open(whole, 0); /* read: its damage is known */
	size_t events = 0;
	while (vgt_cursor_next(c))
		events++;
	vgt_cursor_close(c);
	assert_int_equal(events, 2);
	assert_int_equal(damage_of_kind(whole, VGT_DMG_PACKET_PAST_EOF), 1);
	assert_int_equal(vgt_damage_total(t), vgt_damage_total(whole));
	vgt_close(whole);
	vgt_follow_close(f);
	tg_image_free(img);
}

static void test_refusals(void **state)
{
	(void)state;
	char err[512] = "";
	char *file = NULL;
	if (asprintf(&file, "%s/plain", tg_root) < 0)
		fail();
	tg_write_file(file, "x", 1);
	assert_null(vgt_follow_open(file, err, sizeof err));
	assert_non_null(strstr(err, "not a directory"));
	free(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_growing_trace, tg_setup, tg_teardown),
	    cmocka_unit_test_setup_teardown(test_half_written_header, tg_setup, tg_teardown),
	    cmocka_unit_test_setup_teardown(test_doubt_becomes_damage, tg_setup, tg_teardown),
	    cmocka_unit_test_setup_teardown(test_packet_past_eof, tg_setup, tg_teardown),
	    cmocka_unit_test_setup_teardown(test_refusals, tg_setup, tg_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
