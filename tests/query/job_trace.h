/* The Job and Mark trace of the query tests, built byte by byte (tests/unit/reader_tracegen.h):
 * an image app-42-0 whose job.begin and job.end events make the interval relation Job and
 * whose mark events make the event relation Mark, each test declaring the fields it needs
 * and making up its own events. Static functions: included by one test program each
 * (tests/query/delta_unit.c, parallel_unit.c, jobs_fixture.h, build_bounds_unit.c,
 * build_parallel_unit.c). */
#ifndef VIGIL_TESTS_QUERY_JOB_TRACE_H
#define VIGIL_TESTS_QUERY_JOB_TRACE_H

#include <stdint.h>
#include <stdlib.h>

#include "../test_rand.h"
#include "reader_tracegen.h"

#define JOB_BEGIN 10
#define JOB_END 11
#define MARK 12

/* One event: its time and type, and the values its fields take (a test writes those its
 * declaration has, jt_write's `fields`). */
struct jt_event {
	uint64_t ts;
	uint16_t id;
	uint32_t n, grp;
	double w;
};

/* Declares job.begin, job.end and mark in img with the bodies of their fields structs. */
static inline void jt_declare(struct tg_image *img, const char *begin_fields,
                              const char *end_fields, const char *mark_fields)
{
	tg_declare(img, "job.begin", JOB_BEGIN, "vigil:kind=begin;flag=sensor;traced;relation=Job",
	           begin_fields);
	tg_declare(img, "job.end", JOB_END, "vigil:kind=end;flag=sensor;traced;relation=Job",
	           end_fields);
	tg_declare(img, "mark", MARK, "vigil:kind=event;flag=sensor;traced;relation=Mark",
	           mark_fields);
}

/* The image in a new temporary directory (*root, malloc'd), its metadata written:
 * job.begin, job.end and mark (jt_declare). */
static inline struct tg_image *jt_image(char **root, const char *begin_fields,
                                        const char *end_fields, const char *mark_fields)
{
	*root = tg_tempdir();
	struct tg_image *img = tg_image_new(*root, "app-42-0", NULL);
	jt_declare(img, begin_fields, end_fields, mark_fields);
	tg_write_metadata(img);
	return img;
}

static inline int jt_by_ts(const void *x, const void *y)
{
	const struct jt_event *a = x, *b = y;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* Sorts the n events by time and writes them as thread tid's stream of one packet, each
 * event's fields by `fields`. */
static inline void jt_write(struct tg_image *img, uint32_t tid, struct jt_event *ev, size_t n,
                            void (*fields)(struct tg_stream *s, const struct jt_event *e))
{
	qsort(ev, n, sizeof *ev, jt_by_ts);
	struct tg_stream *s = tg_stream_new(img, tid, 0);
	tg_packet_begin(s, ev[0].ts);
	for (size_t i = 0; i < n; i++) {
		tg_event(s, ev[i].id, ev[i].ts);
		fields(s, &ev[i]);
	}
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
}

#endif
