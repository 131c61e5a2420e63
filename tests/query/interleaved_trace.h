/* What the build tests over a two-stream trace built byte by byte share
 * (tests/unit/reader_tracegen.h; packet_summary_unit.c, build_bounds_unit.c): the streams'
 * clocks interleaved, event k of stream s at clock 1000 + 10 k + 5 s, made nanoseconds by
 * tg_image_new's default offset; and a relation's tuples written one line each, to compare
 * one build's with another's. Static functions: included by one test program each. */
#ifndef VIGIL_TESTS_QUERY_INTERLEAVED_TRACE_H
#define VIGIL_TESTS_QUERY_INTERLEAVED_TRACE_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "relations/relation.h"

#define OFFSET_NS 1700000000000000000ll /* tg_image_new's default clock offset */

static inline uint64_t clock_of(unsigned stream, unsigned k)
{
	return 1000 + 10 * (uint64_t)k + 5 * stream;
}

/* Tuple t of r as a line: its valid time (an interval's end and open flag after it), then
 * its values. */
static inline void it_tuple_line(FILE *f, const struct vgq_relation *r, size_t t)
{
	fprintf(f, "%" PRId64, r->from[t]);
	if (r->to)
		fprintf(f, " %" PRId64 " %d", r->to[t], r->open[t]);
	for (size_t a = 0; a < r->nattrs; a++)
		if (r->attrs[a].type == VGQ_STRING)
			fprintf(f, " %s", r->cols[a].s[t] ? r->cols[a].s[t] : "null");
		else
			fprintf(f, " %" PRIu64, r->cols[a].u[t]);
	fputc('\n', f);
}

#endif
