/* Where a first query's time goes: the steps of the relations build and of the cache
 * write, timed on the thread that runs them (it waits for its helpers), summed per
 * process; `vigil query --stats` prints them as "phases" (docs/query.md; the cache
 * write is its own "cache_write_ns"). */
#ifndef VIGIL_RELATIONS_BUILD_PHASES_H
#define VIGIL_RELATIONS_BUILD_PHASES_H

#include <stdint.h>
#include <stdio.h>

enum vgq_phase {
	VGQ_PHASE_OPEN,   /* the trace's schema, bounds and summaries, before any event */
	VGQ_PHASE_READ,   /* reading and decoding the events into relations (or pieces) */
	VGQ_PHASE_MERGE,  /* the pieces' merged order and their columns gathered */
	VGQ_PHASE_PAIR,   /* intervals paired, states closed across pieces */
	VGQ_PHASE_ASIDE,  /* the events that need the merged order, fed in it */
	VGQ_PHASE_FINISH, /* relations finished, memory returned */
	VGQ_NPHASES
};

/* A monotonic clock reading (ns). */
uint64_t vgq_phase_clock(void);
/* Adds the time since *since to the phase, and sets *since to now. */
void vgq_phase_lap(enum vgq_phase p, uint64_t *since);
/* The last stream-by-stream build read this many units (pieces: streams, or parts of
 * their ranges, build_streams.c) and ranges (a stream read whole counts one); 0: none,
 * or it went back to the merged pass. */
void vgq_phase_units(size_t units, size_t ranges);
uint64_t vgq_phase_units_read(void);
uint64_t vgq_phase_ranges_read(void);
/* The phases so far as JSON members: `"phases":{"open_ns":N,...,"units":U,"ranges":R}`. */
void vgq_phases_json(FILE *f);

#endif
