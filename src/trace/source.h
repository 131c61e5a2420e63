/* One event source for every reader of traces (docs/architecture.md "One event source"),
 * in the manner of babeltrace2's message iterators: a reader opens its traces here, gets
 * the damage reported in one format, reads events in time order (or a stream alone),
 * finds the fields it needs by name once per event class and then reads them by slot,
 * converting values with the helpers below instead of switching on vgt_vtype itself.
 *
 * Every event type of an opened trace is an event class with a number (`class_id`,
 * dense from 0 in image order): a reader keeps what it learnt about a class in an array
 * indexed by that number, with no table of its own. */
#ifndef VIGIL_TRACE_SOURCE_H
#define VIGIL_TRACE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/trace.h"

/* ---- opening ------------------------------------------------------------------ */

enum {
	/* Return a source whose images all have unusable metadata too (to report its
	 * damage): test vgt_source_readable(). Without it such a trace fails the open. */
	VGT_SOURCE_UNREADABLE_OK = 1,
};

struct vgt_source;

/* Opens every process image under the paths. NULL with one line in `err` when a path
 * cannot be read or holds no image (vgt_open's line) or, unless the flags allow it, when
 * no image has readable metadata: "PATH: no process image has readable metadata (see
 * vigil dump)", PATH the first one given. */
struct vgt_source *vgt_source_open(const char *const *paths, size_t npaths, unsigned flags,
                                   char *err, size_t errsize);
/* The same check for a reader that keeps the trace itself (closed by vgt_close). */
struct vgt_trace *vgt_open_readable(const char *const *paths, size_t npaths, char *err,
                                    size_t errsize);
/* For a reader that reports the damage of an unreadable trace before giving up: false,
 * with the one line of vgt_source_open in `err` (PATH the first path given), when no
 * image of t has readable metadata. */
bool vgt_readable_or_say(const struct vgt_trace *t, const char *path, char *err, size_t errsize);
/* A source over a trace opened elsewhere; vgt_source_close() leaves the trace open. */
struct vgt_source *vgt_source_of(struct vgt_trace *t);
void vgt_source_close(struct vgt_source *s);
struct vgt_trace *vgt_source_trace(const struct vgt_source *s);
bool vgt_source_readable(const struct vgt_source *s);

/* ---- events --------------------------------------------------------------------- */

/* The next event of all streams merged by time (equal times keep stream order), or NULL
 * at the end. Valid until the next call. For one stream alone: vgt_cursor_open(). */
const struct vgt_event *vgt_source_next(struct vgt_source *s);
/* As vgt_merge_first_ts and vgt_merge_window, before the first vgt_source_next. */
int64_t vgt_source_first_ts(struct vgt_source *s);
void vgt_source_window(struct vgt_source *s, int64_t from, int64_t to);
/* Before the first read: its streams are read on `threads` threads instead of
 * vgt_decode_threads() (a reader that keeps other threads busy with the events). */
void vgt_source_decode_threads(struct vgt_source *s, unsigned threads);
/* Before the first read: events of the classes flagged (by class_id; the array must
 * outlive the source) come with values NULL, their payloads not decoded
 * (vgt_merge_open_skipping). */
void vgt_source_skip_payloads(struct vgt_source *s, const bool *by_class);
/* Before the first read: events outside their class's time window come with values NULL
 * as well (vgt_merge_open_windows; the array must outlive the source). */
void vgt_source_skip_outside(struct vgt_source *s, const struct vgt_class_window *by_class);

/* One stream alone, in file order, with the payloads and windows set above: for a reader
 * that reads streams on threads of its own and merges what it made of them by (time,
 * stream index), as vgt_source_next orders events. Before the first vgt_source_next;
 * closed by vgt_cursor_close before vgt_source_close; NULL past the last stream. */
size_t vgt_source_stream_count(const struct vgt_source *s);
struct vgt_cursor *vgt_source_stream(struct vgt_source *s, size_t i);

/* Stream i cut into up to `parts` ranges of its packets, for threads to read at once
 * (trace/stream_split.c): each range's cursor gives the events that a read of the
 * stream alone gives between its packets, in file order. NULL when the stream is to be
 * read whole (vgt_source_stream): no packet summary of the same file (the first whole
 * read makes one: vgt_packet_summaries), a packet its summary says was damaged, too
 * few packets. Before the first vgt_source_next; the payloads and windows set above.
 * vgt_split_join when every range was read (or given up): true when none met damage,
 * and the stream's counts are then those of one read; false: read it whole. */
struct vgt_split;
struct vgt_split *vgt_source_split(struct vgt_source *s, size_t i, size_t parts);
size_t vgt_split_count(const struct vgt_split *sp);
uint64_t vgt_split_bytes(const struct vgt_split *sp, size_t k);
/* Range k's cursor (read by one thread; closed by vgt_split_join, not vgt_cursor_close). */
struct vgt_cursor *vgt_split_cursor(struct vgt_split *sp, size_t k);
bool vgt_split_join(struct vgt_split *sp);

/* ---- event classes ------------------------------------------------------------------ */

size_t vgt_class_count(const struct vgt_trace *t);
/* The event type numbered i (its class_id is i), or NULL. */
const struct vgt_event_type *vgt_class_at(const struct vgt_trace *t, size_t i);

/* A reader's field names resolved once per event class to slots (indexes into an
 * event's values, -1 where the class has no field of that name). */
struct vgt_fields;
struct vgt_fields *vgt_fields_new(const struct vgt_trace *t, const char *const *names,
                                  size_t nnames);
void vgt_fields_free(struct vgt_fields *f);
/* The slots of the class, one per name given, in the order given (a class the trace
 * gained since vgt_fields_new, as a followed trace does, is resolved when first met). */
const int *vgt_fields_slots(struct vgt_fields *f, const struct vgt_event_type *type);
/* The same resolved for one class alone, into slots[0..nnames): for a reader that meets
 * classes as their events come (it has no trace at hand, or the trace grows new ones). */
void vgt_class_slots(const struct vgt_event_type *type, const char *const *names, size_t nnames,
                     int *slots);

/* ---- values ---------------------------------------------------------------------- */

/* An integer as unsigned (a signed one as its two's complement), an entity reference
 * as its id; 0 for other types. (There is no enumeration value: the TSDL parser
 * refuses enum declarations, their events are damage.) */
static inline uint64_t vgt_value_u64(const struct vgt_value *v)
{
	switch (v->type) {
	case VGT_UINT:
		return v->u;
	case VGT_INT:
		return (uint64_t)v->i;
	case VGT_REF:
		return v->ref.id;
	default:
		return 0;
	}
}

static inline int64_t vgt_value_i64(const struct vgt_value *v)
{
	return v->type == VGT_INT ? v->i : (int64_t)vgt_value_u64(v);
}

/* A number as a double (integers converted); 0 for other types. */
static inline double vgt_value_double(const struct vgt_value *v)
{
	switch (v->type) {
	case VGT_DOUBLE:
		return v->d;
	case VGT_INT:
		return (double)v->i;
	case VGT_UINT:
		return (double)v->u;
	default:
		return 0;
	}
}

/* A string's text, NULL for other types (vgt_value_text: ""). */
static inline const char *vgt_value_string(const struct vgt_value *v)
{
	return v->type == VGT_STRING ? v->str.ptr : NULL;
}

/* A string's text, "" for other types. */
static inline const char *vgt_value_text(const struct vgt_value *v)
{
	const char *s = vgt_value_string(v);
	return s ? s : "";
}

/* An entity reference: true with its id and generation. */
static inline bool vgt_value_ref(const struct vgt_value *v, uint64_t *id, uint32_t *gen)
{
	if (v->type != VGT_REF)
		return false;
	*id = v->ref.id;
	*gen = v->ref.gen;
	return true;
}

/* The same by slot: a slot of -1 (no such field) reads as 0, "" or no reference. */
static inline uint64_t vgt_slot_u64(const struct vgt_event *ev, int slot)
{
	return slot < 0 ? 0 : vgt_value_u64(&ev->values[slot]);
}

static inline const char *vgt_slot_text(const struct vgt_event *ev, int slot)
{
	return slot < 0 ? "" : vgt_value_text(&ev->values[slot]);
}

static inline bool vgt_slot_ref(const struct vgt_event *ev, int slot, uint64_t *id, uint32_t *gen)
{
	return slot >= 0 && vgt_value_ref(&ev->values[slot], id, gen);
}

/* ---- damage ------------------------------------------------------------------------ */

/* Calls `line` with each stored damage entry formatted by vgt_damage_format, image by
 * image: the image's metadata damage, then each of its streams'. */
void vgt_damage_each(const struct vgt_trace *t, void (*line)(void *ctx, const char *text),
                     void *ctx);
/* The damage report of a command on `f`: each entry's line, "WHO: N more damaged places
 * in FILE not listed" after a file with more than were stored, then for each stream that
 * lost events "WHO: N events discarded in FILE" followed by `discarded_note` (e.g. ":
 * violations near them may come from the loss"). */
void vgt_damage_report(const struct vgt_trace *t, const char *who, const char *discarded_note,
                       FILE *f);

#endif
