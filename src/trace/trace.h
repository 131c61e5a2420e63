/* vigil trace reader: opens vigil's CTF 1.8 traces (docs/trace-format.md), decodes their
 * events into typed values and merges all streams of all process images by time.
 *
 * Damage is never fatal and never silent: every problem found in a metadata or stream
 * file is recorded as a `vgt_damage` (file, place, what) and reading goes on after it.
 *
 * Lifetime: everything returned (types, strings, byte values) lives until vgt_close().
 * An event returned by vgt_merge_next()/vgt_cursor_next() is valid until the next call.
 */
#ifndef VIGIL_TRACE_TRACE_H
#define VIGIL_TRACE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- values ------------------------------------------------------------------- */

enum vgt_vtype {
	VGT_INT,    /* signed integer of 1..8 bytes */
	VGT_UINT,   /* unsigned integer of 1..8 bytes */
	VGT_DOUBLE, /* 32- or 64-bit floating point */
	VGT_STRING, /* NUL-terminated text */
	VGT_BYTES,  /* a sequence or array of bytes */
	VGT_REF,    /* entity reference: struct vg_ref { uint64 id; uint32 gen; } */
};

struct vgt_value {
	enum vgt_vtype type;
	union {
		int64_t i;
		uint64_t u;
		double d;
		struct {
			const char *ptr; /* NUL-terminated; len excludes the NUL */
			size_t len;
		} str;
		struct {
			const uint8_t *ptr;
			size_t len;
		} bytes;
		struct {
			uint64_t id;
			uint32_t gen;
		} ref;
	};
};

/* ---- event types (from the metadata) -------------------------------------------- */

enum vgt_kind {
	VGT_KIND_EVENT,
	VGT_KIND_BEGIN,
	VGT_KIND_END,
	VGT_KIND_STATE,
	VGT_KIND_CREATE,
	VGT_KIND_RECLAIM
};
enum vgt_flag { VGT_FLAG_SENSOR, VGT_FLAG_PERFORMER, VGT_FLAG_INITIATOR, VGT_FLAG_TARGET };

struct vgt_field {
	const char *name; /* nested structs are flattened: "outer.inner" */
	enum vgt_vtype type;
	unsigned size;        /* bytes of an integer or double; length of a fixed byte array */
	unsigned base;        /* display base of an integer: 2, 8, 10 or 16 */
	const char *ref_kind; /* VGT_REF: entity kind from `ref.F=KIND`, or NULL */
	bool hidden;          /* the length of a later byte sequence (`_x_len`) */
};

struct vgt_event_type {
	const char *name;
	uint64_t id, stream_id;
	const struct vgt_field *fields;
	unsigned nfields;
	/* vigil semantics from `model.emf.uri`; `vigil` is false for foreign events. */
	bool vigil;
	const char *relation; /* the primitive relation fed (default: the name) */
	enum vgt_kind kind;
	enum vgt_flag flag;
	bool sampled;
	bool once; /* traced once: the sensor lowers its entity flag with each event */
	int performer, initiator, target; /* field index, or -1 */
	const char *model_uri;            /* as written, or NULL */
	/* Consistency op (docs/consistency.md): an index of vgt_op_names, 0 = activity. */
	int op;
	/* Its number among all event types of the trace, dense from 0 in image order
	 * (trace/source.h: readers index what they learn about a class by it). */
	uint32_t class_id;
};

/* The ops of `op=NAME`, in the runtime's enum vg_op order. */
extern const char *const vgt_op_names[];
#define VGT_OP_COUNT 15
#define VGT_OP_ENTER 5
#define VGT_OP_LEAVE 6
#define VGT_OP_REFERENCE 13
#define VGT_OP_MOVE 14

/* Index of the field called `name`, or -1. */
int vgt_type_field(const struct vgt_event_type *t, const char *name);

/* ---- damage ------------------------------------------------------------------- */

enum vgt_damage_kind {
	VGT_DMG_METADATA,        /* metadata unreadable: the image's streams are skipped */
	VGT_DMG_METADATA_CUT,    /* metadata ends inside a declaration: the rest is used */
	VGT_DMG_METADATA_TYPE,   /* one declaration is unusable: its events are not decoded */
	VGT_DMG_IO,              /* a file cannot be opened or read */
	VGT_DMG_BAD_MAGIC,       /* a packet does not start with 0xC1FC1FC1 */
	VGT_DMG_UUID_MISMATCH,   /* a packet's uuid is not the trace's */
	VGT_DMG_UNKNOWN_STREAM,  /* a packet's stream_id is not declared */
	VGT_DMG_BAD_PACKET_SIZE, /* packet_size smaller than its header or not whole bytes */
	VGT_DMG_PACKET_PAST_EOF, /* packet_size runs past the end of the file */
	VGT_DMG_CONTENT_SIZE,    /* content_size > packet_size or < the header */
	VGT_DMG_TRUNCATED,       /* the file ends inside a packet header or event */
	VGT_DMG_TRAILING_ZEROS,  /* zero-filled space after the last packet */
	VGT_DMG_UNKNOWN_EVENT,   /* an event id that the metadata does not declare */
	VGT_DMG_FIELD_OVERRUN,   /* an event runs past its packet's content */
	VGT_DMG_UNTERMINATED_STRING,
	VGT_DMG_PACKETS_MISSING, /* packet_seq_num skips */
	VGT_DMG_TIME_BACKWARDS,  /* an event is older than the previous one of its stream */
	VGT_DMG_PACKET_CONTEXT,  /* a packet contradicts itself or its stream: timestamp_end
	                          * before timestamp_begin, events_discarded decreasing, the
	                          * thread changing within a stream */
	VGT_DMG_NOT_A_STREAM,    /* an entry of an image folder that cannot be a stream file
	                          * (a FIFO, a folder, a link, a device): not read */
};

struct vgt_damage {
	enum vgt_damage_kind kind;
	const char *file;
	uint64_t offset;     /* byte offset in `file` */
	unsigned line, col;  /* metadata damage: position (1-based); 0 otherwise */
	const char *message; /* what, and where reading resumed */
};

/* One line, without newline: "FILE:LINE:COL: MSG" or "FILE: byte N: MSG". */
void vgt_damage_format(const struct vgt_damage *d, char *buf, size_t size);
const char *vgt_damage_kind_name(enum vgt_damage_kind k);

/* ---- images and streams -------------------------------------------------------- */

struct vgt_stream_stats {
	uint64_t events;           /* events decoded */
	uint64_t packets;          /* packets opened */
	uint64_t events_discarded; /* the writer's count of events it could not record */
	int64_t first_ts, last_ts; /* absolute ns of the first and last event (0 if none) */
	/* With class windows (vgt_merge_open_windows): events passed over for lying outside
	 * their class's window, and packets whose context's time span lies wholly outside
	 * every window (all their windowed events passed over; their headers still read). */
	uint64_t events_outside, packets_outside;
	/* With packet summaries (vgt_packet_summaries): packets passed over whole, their
	 * events counted in `events` (and first_ts, last_ts) but not decoded; packets read
	 * by their summary's positions (only the events of the classes read decoded, the
	 * others counted in events_skipped too). */
	uint64_t packets_skipped, events_skipped, packets_positioned;
};

struct vgt_stream;

/* One process image: a directory holding `metadata` and its stream files. */
struct vgt_image {
	const char *path;
	bool readable; /* false: the metadata could not be used (see damage) */
	const char *hostname, *procname;
	int64_t pid, ppid;
	uint64_t process_gen; /* with pid, the process's time-scoped identity */
	uint64_t exec_index;  /* vigil_image: 0, then one more per exec */
	uint8_t uuid[16];
	bool has_uuid;
	int64_t clock_offset_ns; /* wall-clock time of clock value 0 used for this image */
	size_t nstreams;
	struct vgt_stream *const *streams;
	size_t ntypes;
	const struct vgt_event_type *const *types;
	size_t ndamage; /* metadata damage (stored entries) */
	const struct vgt_damage *damage;
};

/* The clock of a metadata text alone (vigild reads it from METADATA frames): the
 * wall-clock time of clock value 0 (offset_s and offset, as readers use them) and the
 * clock's frequency in Hz. 0, or -1 when the text does not parse or has no clock. */
int vgt_metadata_clock(const char *text, size_t len, int64_t *offset_ns, uint64_t *freq);

/* Are the two images of one process (host, pid and start time), before and after an
 * exec? */
bool vgt_image_same_process(const struct vgt_image *a, const struct vgt_image *b);

/* A value of the image's env block as text ("42", "host"), or NULL. */
const char *vgt_image_env(const struct vgt_image *img, const char *key);
const struct vgt_event_type *vgt_image_type(const struct vgt_image *img, const char *name);

/* One stream file. Statistics and damage are those of the latest read of the stream
 * (reading again starts them over). */
struct vgt_stream {
	const char *path;
	const struct vgt_image *image;
	size_t index;       /* position among all streams of the trace: the merge's tie-breaker */
	uint64_t size;      /* its bytes: the whole file, or one writer's part of a pool file */
	uint64_t file_size; /* the file's, when it was opened */
	struct vgt_stream_stats stats;
	size_t ndamage;         /* stored entries (at most VGT_DAMAGE_KEPT) */
	uint64_t ndamage_total; /* including entries not stored */
	const struct vgt_damage *damage;
};

#define VGT_DAMAGE_KEPT 1000

/* ---- events ------------------------------------------------------------------- */

struct vgt_event {
	const struct vgt_event_type *type;
	const struct vgt_image *image;
	const struct vgt_stream *stream;
	uint32_t tid, thread_gen;
	int64_t ts;                     /* absolute: ns since the Unix epoch */
	uint64_t clock_value;           /* raw clock value */
	uint64_t offset;                /* byte offset of the event in its stream file */
	const struct vgt_value *values; /* one per type->fields */
};

/* ---- a trace ------------------------------------------------------------------ */

struct vgt_trace;

/* Opens every process image (every directory holding `metadata`) under each path.
 * Returns NULL with one line in `err` if a path cannot be read or holds no image. A
 * damaged image does not fail the open: it is reported through its damage list. */
struct vgt_trace *vgt_open(const char *const *paths, size_t npaths, char *err, size_t errsize);
void vgt_close(struct vgt_trace *t);
/* The trace's images as one trace each, each as vgt_open of that image's path alone
 * gives it (its own clock offset, classes and streams numbered from 0), the shared-layout
 * folders cut once for all of them (vigil store loads a recording image by image).
 * Takes t (closed); returns the number of traces, *out malloc'd, each closed alone. */
size_t vgt_split_images(struct vgt_trace *t, struct vgt_trace ***out);
/* The directory the recording's images were written into (`vigil record -o DIR`, where
 * its log models lie): the parent of the first image's directory, or of its
 * shared-layout folder (a writer's image there is no directory of its own). NULL when
 * the trace has no image; malloc'd. */
char *vgt_recording_dir(const struct vgt_trace *t);
/* Whether traces opened from now on are read into memory instead of mapped (default
 * false). A trace still being recorded must be: its runtime shrinks a stream file when it
 * closes a packet, and a mapped page past the new end would raise SIGBUS in the reader.
 * vigil watch and vigil ui's live mode set it. */
void vgt_set_copy_streams(bool copy);

/* Threads that read a merge's streams (vgt_merge_*, vgt_source_*) from now on: with n >=
 * 2, n - 1 workers decode the streams ahead while the caller takes events in time order
 * (default 1: the caller decodes). Statistics and damage of a stream are complete once
 * the merge has reached its end or is closed. */
void vgt_set_decode_threads(unsigned n);
unsigned vgt_decode_threads(void);

size_t vgt_image_count(const struct vgt_trace *t);
const struct vgt_image *vgt_image_at(const struct vgt_trace *t, size_t i);
/* Has some process image of the trace readable metadata? (Else nothing can be read.) */
bool vgt_any_readable(const struct vgt_trace *t);
size_t vgt_stream_count(const struct vgt_trace *t);
const struct vgt_stream *vgt_stream_at(const struct vgt_trace *t, size_t i);
/* Damage entries stored so far over all images and streams, and their total count. */
uint64_t vgt_damage_total(const struct vgt_trace *t);

/* Reads one stream in file order. */
struct vgt_cursor;
struct vgt_cursor *vgt_cursor_open(struct vgt_trace *t, size_t stream_index);
/* The next event, or NULL at the end of the stream. */
const struct vgt_event *vgt_cursor_next(struct vgt_cursor *c);
void vgt_cursor_close(struct vgt_cursor *c);

/* The event header at packet[off] (an image's stream 0, whatever header its metadata
 * declares): sets *id and *next (where the payload starts). -1 if it does not decode
 * before `end`. For code that walks a packet in memory (vigild counting the events of a
 * packet it cannot store). */
int vgt_event_header_at(const struct vgt_image *img, const uint8_t *packet, size_t end, size_t off,
                        uint64_t *id, size_t *next);

/* Reads all streams merged by absolute time; equal times keep stream order. */
struct vgt_merge;
struct vgt_merge *vgt_merge_open(struct vgt_trace *t);
/* The same, its streams read on `threads` threads (as vgt_set_decode_threads says). */
struct vgt_merge *vgt_merge_open_threads(struct vgt_trace *t, unsigned threads);
/* And events of the classes flagged in skip (by class_id, NULL: none; it must outlive the
 * merge) come with values NULL: their payloads are passed over, not decoded (damage in
 * them is still found and reported as when decoding). */
struct vgt_merge *vgt_merge_open_skipping(struct vgt_trace *t, unsigned threads, const bool *skip);
/* A time window of an event class: its events recorded outside [lo, hi] (absolute ns)
 * come with values NULL, their payloads passed over as skipped classes' are (the header
 * is still decoded, so times, counts and damage stay those of the whole trace). A class
 * with `keeps_next` (a vg.report.synth marker: the next event's valid time is the
 * marker's) makes its stream's next event be decoded whatever its window. */
struct vgt_class_window {
	int64_t lo, hi;
	bool active;
	bool keeps_next;
};
/* Readers of t made after this (merges, vgt_cursor_open; until it is turned off: the
 * relations build turns it on for its own readers only) keep a summary of each stream's packets
 * (which event ids each holds, its times and count) beside the stream file, or in the cache
 * directory when it cannot be written there, made the first time a stream is read whole; with one
 * that fits, a packet holding only events passed over (skipped classes, or windows its
 * times lie outside) is passed over whole (docs/query.md "How selections reach
 * decoding"). Not for streams still written, nor shared-layout pools. */
void vgt_packet_summaries(struct vgt_trace *t, bool on);

/* vgt_merge_open_skipping with windows too (by class_id, NULL: none; it must outlive the
 * merge). */
struct vgt_merge *vgt_merge_open_windows(struct vgt_trace *t, unsigned threads, const bool *skip,
                                         const struct vgt_class_window *windows);
/* Time of the first event of the trace (ns), or INT64_MIN if it has none. */
int64_t vgt_merge_first_ts(struct vgt_merge *m);
/* Restricts vgt_merge_next to events with from <= ts <= to. Streams are still read to
 * their end, so that statistics and damage are complete. */
void vgt_merge_window(struct vgt_merge *m, int64_t from, int64_t to);
const struct vgt_event *vgt_merge_next(struct vgt_merge *m);
void vgt_merge_close(struct vgt_merge *m);

/* ---- entity names ----------------------------------------------------------------- */

/* Learns entity names from vg.entity.create/.name, vg.thread.begin/.name and
 * vg.process.begin events fed in time order; a lookup gives the name at that time. */
struct vgt_names;
struct vgt_names *vgt_names_new(void);
void vgt_names_free(struct vgt_names *n);
void vgt_names_observe(struct vgt_names *n, const struct vgt_event *ev);
/* Kinds compare case-insensitively. NULL if unknown. */
const char *vgt_names_lookup(const struct vgt_names *n, const char *kind, uint64_t id,
                             uint32_t gen);

/* ---- formatting --------------------------------------------------------------- */

/* "YYYY-MM-DD HH:MM:SS.nnnnnnnnn" (UTC); buf needs 32 bytes. */
void vgt_format_time(int64_t ns, char *buf, size_t size);
/* Length (1..4) of the valid UTF-8 character at s, or 0 if it is not one. */
size_t vgt_utf8_char(const char *s, size_t len);
/* Writes a C string literal with escapes, quotes included (valid UTF-8 kept as is). */
void vgt_write_cstring(FILE *f, const char *s, size_t len);
/* Parses a duration "1.5s", "200ms", "30us", "7ns" or "2" (seconds) into ns. */
int vgt_parse_duration(const char *text, int64_t *ns);

/* ---- recovery ------------------------------------------------------------------- */

struct vgt_recover_result {
	unsigned images, streams;
	unsigned changes;    /* repairs made (or that would be made, when dry) */
	unsigned unrepaired; /* problems left as they are */
};

/* Makes a trace whose subject was killed readable by strict CTF readers: trims
 * zero-filled space after a stream's last packet, shrinks a last packet that claims
 * bytes past the end of its file, and cuts a metadata file after its last complete
 * declaration. Never removes a completed event. Each action (or, when dry, each action
 * it would take) and each problem left is reported as one line through `report` (may be
 * NULL). Returns 0, or -1 with one line in `err` if the trace cannot be opened. */
int vgt_recover_dir(const char *path, bool dry_run, void (*report)(void *ctx, const char *line),
                    void *ctx, struct vgt_recover_result *res, char *err, size_t errsize);

#endif
