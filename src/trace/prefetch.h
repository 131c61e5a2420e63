/* Streams decoded ahead on worker threads for the merge (prefetch.c). */
#ifndef VIGIL_TRACE_PREFETCH_H
#define VIGIL_TRACE_PREFETCH_H

#include <stdbool.h>
#include <stddef.h>

#include "trace.h"

struct vgt_cursor;
struct vgt_prefetch;

/* Starts threads - 1 workers (at most one per stream) reading the n initialized cursors;
 * NULL when threads < 2 or a thread cannot start (the caller reads them itself). */
struct vgt_prefetch *vgt__prefetch_start(struct vgt_cursor *cursors, size_t n, unsigned threads);
/* The next event of stream i, false at its end. Its values stay valid until the next call
 * for stream i (a chunk is handed back only when its stream moves past it). */
bool vgt__prefetch_next(struct vgt_prefetch *p, size_t i, struct vgt_event *ev);
/* Stops and joins the workers; the cursors are the caller's again. */
void vgt__prefetch_stop(struct vgt_prefetch *p);

#endif
