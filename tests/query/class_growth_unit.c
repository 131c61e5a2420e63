/* Tables indexed by event class over a followed trace (trace/follow.h) that gains a class
 * after they were made: the relation builder's class map (relations/feed.c) and a
 * reader's field slots (vgt_fields_slots) take the new class up when its first event
 * comes, without their reader growing them first, as they would have from the start
 * (before: both read past the end of their arrays; ASan run: sanitize label). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reader_tracegen.h"
#include "relations/build.h"
#include "relations/relation.h"
#include "trace/follow.h"

#define EXTRA_ID 9

/* One event to the builder, as a build does. */
static void feed(struct builder *b, struct vgq_database *db, const struct vgt_event *ev)
{
	vgq_build_count(db, ev);
	vgt_names_observe(b->names, ev);
	vgq_build_feed(b, ev);
}

static void test_class_declared_mid_run(void **state)
{
	(void)state;
	struct tg_image *img = tg_image_new(tg_root, "app-42-0", NULL);
	struct tg_stream *s = tg_stream_new(img, 1, 0);
	tg_packet_begin(s, 1000);
	tg_tick(s, 1000, 1);
	tg_packet_end(s, 0, 0);
	size_t first;
	tg_stream_bytes(s, &first);
	tg_packet_begin(s, 2000);
	tg_event(s, EXTRA_ID, 2000);
	tg_u32(s, 7);
	tg_event(s, EXTRA_ID, 3000);
	tg_u32(s, 8);
	tg_packet_end(s, 0, 0);
	size_t len;
	const uint8_t *bytes = tg_stream_bytes(s, &len);
	char *path = NULL;
	if (asprintf(&path, "%s/stream-1-0", tg_image_dir(img)) < 0)
		fail();
	tg_write_file(path, bytes, first); /* the first packet: a tick */

	char err[512];
	struct vgt_follow *f = vgt_follow_open(tg_root, err, sizeof err);
	assert_non_null(f);
	vgt_follow_poll(f, VGT_FOLLOW_END - 1);
	struct vgt_trace *t = vgt_follow_trace(f);
	size_t before = vgt_class_count(t);
	assert_true(before > 0);

	/* the tables made over the classes known now */
	struct builder b;
	vgq_build_init(&b, t);
	vgq_build_schema(&b, t);
	const char *names[2] = {"n", "absent"};
	struct vgt_fields *fields = vgt_fields_new(t, names, 2);
	struct vgq_database *db = calloc(1, sizeof *db);
	assert_non_null(db);
	const struct vgt_event *ev;
	size_t events = 0;
	while ((ev = vgt_follow_next(f))) {
		feed(&b, db, ev);
		events++;
	}
	assert_int_equal(events, 1);

	/* a class declared mid-run (the metadata grows), then its events */
	tg_declare(img, "extra", EXTRA_ID, "vigil:kind=event;flag=sensor;traced", "uint32_t n;");
	tg_write_metadata(img);
	tg_write_file(path, bytes, len);
	size_t added = vgt_follow_poll(f, VGT_FOLLOW_END);
	assert_int_equal(added, 1);
	assert_int_equal(vgt_class_count(t), before + 1);
	uint32_t extra_n[2];
	while ((ev = vgt_follow_next(f))) {
		if (!strcmp(ev->type->name, "extra")) {
			assert_int_equal(ev->type->class_id, before); /* past both tables' ends */
			const int *slots = vgt_fields_slots(fields, ev->type);
			assert_int_equal(slots[0], vgt_type_field(ev->type, "n"));
			assert_true(slots[0] >= 0);
			assert_int_equal(slots[1], -1);
			extra_n[events - 1] = (uint32_t)ev->values[slots[0]].u;
		}
		feed(&b, db, ev);
		events++;
	}
	assert_int_equal(events, 3);
	assert_int_equal(extra_n[0], 7);
	assert_int_equal(extra_n[1], 8);
	assert_int_equal(b.nby_class, before + 1);

	vgq_build_finish(&b, db);
	const struct vgq_relation *r = vgq_database_find(db, "extra");
	assert_non_null(r);
	assert_int_equal(r->ntuples, 2);
	const struct vgq_relation *tick = vgq_database_find(db, "tick");
	assert_non_null(tick);
	assert_int_equal(tick->ntuples, 1);

	vgq_database_free(db);
	vgt_fields_free(fields);
	vgt_follow_close(f);
	tg_stream_write(s);
	tg_image_free(img);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_class_declared_mid_run, tg_setup, tg_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
