/* Following a trace while it is written (docs/architecture.md "Following a growing
 * trace"), in the manner of babeltrace2's lttng-live source or `tail -f`: the trace
 * object grows as process images, their stream files and their metadata's declarations
 * appear, and events come out merged in time order up to a watermark the caller gives.
 *
 * What a writer has not finished is waited for, never reported: a stream's last packet
 * is read up to its content_size as it grows (vigil's runtime advances it after each
 * event), a packet header half-written or a file that ends in preallocated zeros is read
 * again at the next poll, an event id the metadata does not declare yet makes the image's
 * metadata be read again. At the end of the run (VGT_FOLLOW_END) every stream is read to
 * its end as vgt_open reads it: whatever is still incomplete is damage.
 *
 * The watermark: an event is handed out once its time is at most `until`. Writers take an
 * event's time before they commit it, so an event may become visible after later ones of
 * other streams; the caller chooses `until` = now − the lateness it allows. An event that
 * comes after the watermark passed its time is still handed out, and counted (`late`). */
#ifndef VIGIL_TRACE_FOLLOW_H
#define VIGIL_TRACE_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

#define VGT_FOLLOW_END INT64_MAX

struct vgt_follow;

/* Follows the trace under `path`: an image directory (its metadata, its streams), or a
 * directory whose sub-directories are images, now or later (vigil record's layout). A
 * shared-layout folder (one for every process) gives one image per writer, as vgt_open
 * splits it, each made when its first stream's first packet is readable. NULL with one
 * line in `err` when the path is not a directory. */
struct vgt_follow *vgt_follow_open(const char *path, char *err, size_t errsize);
void vgt_follow_close(struct vgt_follow *f);

/* The trace read so far: images, streams and event classes are appended (class_id dense
 * as in vgt_open), never removed or renumbered; damage is the latest read's. */
struct vgt_trace *vgt_follow_trace(struct vgt_follow *f);

/* Reads what was written since the last poll and lets vgt_follow_next hand out events up
 * to time `until` (absolute ns; VGT_FOLLOW_END: the run is over, everything is read).
 * The event last handed out is no longer valid. Returns the number of event classes
 * that appeared (readers that index by class_id grow their tables). */
size_t vgt_follow_poll(struct vgt_follow *f, int64_t until);

/* The next event in time order whose time is at most the poll's `until`, or NULL until
 * the next poll. Valid until the next call or poll. */
const struct vgt_event *vgt_follow_next(struct vgt_follow *f);

/* The present on the trace's clock (CLOCK_MONOTONIC with the first image's offset), or
 * INT64_MIN while no image is known. */
int64_t vgt_follow_now(const struct vgt_follow *f);

struct vgt_follow_stats {
	uint64_t polls;
	uint64_t bytes_read; /* stream bytes read (a growing packet is read again) */
	uint64_t events;     /* handed out */
	uint64_t late;       /* handed out after the watermark had passed their time */
	size_t images, streams;
};
void vgt_follow_stats(const struct vgt_follow *f, struct vgt_follow_stats *out);

#endif
