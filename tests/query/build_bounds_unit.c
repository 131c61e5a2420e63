/* A build under a query's time bound (vgq_build_options.bounds, relations/build.c) gives
 * the same relations as the whole build, the bounded event relation cut to its bound:
 * a trace built byte by byte (tests/unit/reader_tracegen.h) of two streams of many
 * packets, intervals begun in packets wholly before the bound and ended inside it (and
 * begun inside, ended after), an event relation bounded, a vg.report.synth marker ending
 * a packet after the bound whose next event (first of the next packet) is valid inside
 * it, and, in the damaged variant, a packet after the bound whose bounded event's text
 * runs past the packet. At 1, 2 and 3 threads: the interval relation byte for byte, the
 * event relation the whole one's tuples within the bound, the database's events, first,
 * last and damage the whole trace's; packets and events were passed over (some packets
 * whole, by the summaries the first build wrote: vgt_packet_summaries); and with
 * VIGIL_SKIP=off nothing is. Once more with a key selection of two alternatives on the
 * bounded relation (vgq_build_options.keys): its tuples are those selected. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interleaved_trace.h"
#include "job_trace.h"
#include "reader_tracegen.h"
#include "relations/relation.h"
#include "trace/trace.h"

#define SYNTH 13
#define PER_STREAM 6000
#define PER_PACKET 200
#define CLOCK_LO 20000 /* the bound on Mark, clock values */
#define CLOCK_HI 30000
#define SYNTH_AT 25003 /* the synthesized Mark's valid time */

static int failures;

static void fail(const char *what)
{
	fprintf(stderr, "query.build_bounds: %s\n", what);
	failures++;
}

/* Stream 0 begins jobs and marks; stream 1 ends each job 50 begins later (some 2,000
 * clock values: across packets and across the bound's edges) and marks. */
static void make_trace(const char *root, bool damaged)
{
	struct tg_image *img = tg_image_new(root, "app-42-0", NULL);
	jt_declare(img, "uint32_t job; string kind;", "uint32_t job; uint32_t status;",
	           "uint32_t n; string label;");
	tg_declare_builtin(img, "vg.report.synth", SYNTH);
	tg_write_metadata(img);
	for (unsigned st = 0; st < 2; st++) {
		struct tg_stream *s = tg_stream_new(img, 42 + st, 0);
		for (unsigned k = 0; k < PER_STREAM; k++) {
			uint64_t t = clock_of(st, k);
			if (k % PER_PACKET == 0)
				tg_packet_begin(s, t);
			bool synth_next = st == 0 && k == 4 * PER_PACKET; /* first of a packet */
			if (synth_next) { /* valid inside the bound, recorded after it */
				tg_event(s, MARK, t);
				tg_u32(s, 999999);
				tg_str(s, "synthesized");
			} else if (st == 0 && k == 4 * PER_PACKET - 1) {
				tg_event(s, SYNTH, t); /* ends its packet */
				tg_u64(s, SYNTH_AT);
			} else if (k % 4 == 0 && st == 0) {
				tg_event(s, JOB_BEGIN, t);
				tg_u32(s, k / 4);
				tg_str(s, k % 8 ? "GET" : "PUT");
			} else if (k % 4 == 0 && k / 4 >= 50) {
				tg_event(s, JOB_END, t);
				tg_u32(s, k / 4 - 50);
				tg_u32(s, k);
			} else {
				tg_event(s, MARK, t);
				tg_u32(s, k * 2 + st);
				tg_str(s, k % 3 ? "a" : "bb");
			}
			if (k % PER_PACKET == PER_PACKET - 1)
				tg_packet_end(s, 0, 0);
		}
		if (damaged && st == 1) { /* after the bound: its payload is only walked */
			tg_packet_begin(s, clock_of(st, PER_STREAM));
			tg_event(s, MARK, clock_of(st, PER_STREAM));
			tg_u32(s, 1);
			tg_raw(s, "unterminated", 12);
			tg_packet_end(s, 0, 0);
		}
		tg_stream_write(s);
	}
	tg_image_free(img);
}

/* The key selection of the keyed builds: n > 5002, or label "bb" and n <= 4500 (both met by marks
 * of the trace, so that a check off by one fails). */
static const struct vgq_key_cond KEYS[] = {
    {.relation = "Mark", .alt = 0, .attr = "n", .op = VGQ_KEY_GT, .i = 5002},
    {.relation = "Mark", .alt = 1, .attr = "label", .op = VGQ_KEY_EQ, .is_string = true, .s = "bb"},
    {.relation = "Mark", .alt = 1, .attr = "N", .op = VGQ_KEY_LE, .i = 4500},
};
static bool keyed; /* dump() keeps only the tuples KEYS selects */

static bool selected(const struct vgq_relation *r, size_t t)
{
	uint64_t n = r->cols[0].u[t];
	return !keyed || n > 5002 || (!strcmp(r->cols[1].s[t], "bb") && n <= 4500);
}

/* The tuples of r, one line each; of an event relation only those from lo to hi (and
 * selected). */
static char *dump(const struct vgq_relation *r, int64_t lo, int64_t hi, size_t *count)
{
	char *p = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&p, &len);
	*count = 0;
	for (size_t t = 0; r && t < r->ntuples; t++) {
		if (!r->to && (r->from[t] < lo || r->from[t] > hi || !selected(r, t)))
			continue;
		++*count;
		it_tuple_line(f, r, t);
	}
	fclose(f);
	return p;
}

static struct vgq_database *build(struct vgt_trace *t, unsigned threads, bool bounded)
{
	static const char *const need[] = {"Mark", "Job"};
	static const struct vgq_time_bound bound = {
	    "mark", OFFSET_NS + CLOCK_LO, OFFSET_NS + CLOCK_HI}; /* names match in any case */
	vgt_set_decode_threads(threads);
	struct vgq_build_options o = {.need = need,
	                              .nneed = 2,
	                              .bounds = bounded ? &bound : NULL,
	                              .nbounds = bounded,
	                              .keys = bounded && keyed ? KEYS : NULL,
	                              .nkeys = bounded && keyed ? 3 : 0};
	return vgq_database_build_opts(t, &o);
}

static void compare(bool damaged)
{
	char *root = tg_tempdir();
	make_trace(root, damaged);
	char err[256];
	const char *paths[] = {root};
	struct vgt_trace *t = vgt_open(paths, 1, err, sizeof err);
	if (!t) {
		fail(err);
		return;
	}
	struct vgq_database *whole = build(t, 1, false);
	size_t njobs, nmarks, nall;
	char *jobs = dump(vgq_database_find(whole, "Job"), 0, 0, &njobs);
	char *marks = dump(vgq_database_find(whole, "Mark"), OFFSET_NS + CLOCK_LO,
	                   OFFSET_NS + CLOCK_HI, &nmarks);
	free(dump(vgq_database_find(whole, "Mark"), INT64_MIN, INT64_MAX, &nall));
	if (!strstr(marks, " 999999 synthesized") || nmarks >= nall / 4 || njobs < 1000 ||
	    !!whole->damage != damaged)
		fail("the trace is not the one the test means (synthesized mark in the bound, "
		     "most marks outside it, many jobs, damage only when damaged)");
	for (unsigned th = 1; th <= 3; th++)
		for (int off = 0; off < 2; off++) {
			if (off)
				setenv("VIGIL_SKIP", "off", 1);
			struct vgq_database *part = build(t, th, true);
			unsetenv("VIGIL_SKIP");
			size_t n1, n2;
			char *j = dump(vgq_database_find(part, "Job"), 0, 0, &n1);
			const struct vgq_relation *m = vgq_database_find(part, "Mark");
			char *k = dump(m, OFFSET_NS + CLOCK_LO, OFFSET_NS + CLOCK_HI, &n2);
			const struct vgq_skip_stats *sk = &part->skipped;
			char msg[500];
			snprintf(
			    msg, sizeof msg,
			    "%s%s trace, %u threads%s: Job %s (%zu/%zu), Mark within the bound "
			    "%s (%zu/%zu), Mark has %zu tuples (whole: %zu), events %" PRIu64
			    "/%" PRIu64 ", first %" PRId64 "/%" PRId64 ", last %" PRId64 "/%" PRId64
			    ", damage %" PRIu64 "/%" PRIu64 ", passed over %" PRIu64
			    " packets of %" PRIu64 ", %" PRIu64 " events (and %" PRIu64
			    " in packets passed over whole)",
			    keyed ? "keyed, " : "", damaged ? "damaged" : "clean", th,
			    off ? ", VIGIL_SKIP=off" : "", strcmp(j, jobs) ? "differs" : "same", n1,
			    njobs, strcmp(k, marks) ? "differs" : "same", n2, nmarks,
			    m ? m->ntuples : 0, nall, part->events, whole->events, part->first,
			    whole->first, part->last, whole->last, part->damage, whole->damage,
			    sk->packets, sk->packets_read, sk->events, sk->events_skipped);
			size_t every = vgq_database_find(whole, "Mark")->ntuples;
			bool passed =
			    off ? !sk->packets && !sk->events && !sk->nbounded && !sk->nkeyed &&
			              m && m->ntuples == every
			        : sk->nbounded == 1 && sk->nkeyed == keyed && sk->packets >= 30 &&
			              sk->events + sk->events_skipped >= nall - nmarks - 10 && m &&
			              m->ntuples == nmarks;
			if (strcmp(j, jobs) || strcmp(k, marks) || part->events != whole->events ||
			    part->first != whole->first || part->last != whole->last ||
			    part->damage != whole->damage || !passed)
				fail(msg);
			else if (th == 1)
				printf("query.build_bounds: %s\n", msg);
			free(j);
			free(k);
			vgq_database_free(part);
		}
	free(jobs);
	free(marks);
	vgq_database_free(whole);
	vgt_close(t);
	tg_rmtree(root);
	free(root);
}

int main(void)
{
	compare(false);
	compare(true);
	keyed = true; /* and a key selection of two alternatives */
	compare(false);
	vgt_set_decode_threads(1);
	return failures ? 1 : 0;
}
