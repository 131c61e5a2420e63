/* Internals shared by the files of the trace reader (not part of its API). */
#ifndef VIGIL_TRACE_INTERNAL_H
#define VIGIL_TRACE_INTERNAL_H

#include <stdarg.h>

#include "trace.h"
#include "wire/tsdl_header.h"

#define VGT_CTF_MAGIC VGW_CTF_MAGIC

/* Out of memory: one line on stderr, exit status 2. Analysis code has no better option. */
/* Checked allocation: the base room's (src/base/alloc.h). */
#include "base/alloc.h"
#define vgt__oom vgb_oom
#define vgt__xmalloc vgb_xmalloc
#define vgt__xcalloc vgb_xcalloc
#define vgt__xrealloc vgb_xrealloc
#define vgt__xstrdup vgb_xstrdup
#define vgt__xprintf vgb_xprintf

/* ---- arena: all allocations of one metadata, freed at once ---------------------- */

struct arena_chunk;
struct arena {
	struct arena_chunk *head;
};
void *vgt_arena_alloc(struct arena *a, size_t size); /* zeroed */
char *vgt_arena_strndup(struct arena *a, const char *s, size_t n);
char *vgt_arena_strdup(struct arena *a, const char *s);
/* Grows an array of `*cap` elements of `size` bytes to hold one more. */
void *vgt_arena_grow(struct arena *a, void *array, size_t n, size_t *cap, size_t size);
/* The same for an array grown only by this function, whose capacity (8, 16, 32, ...) is
 * implied by n: for arrays that keep no capacity of their own. Growing one by hand-made
 * capacities (cap = n) would copy it at every element: memory quadratic in n. */
void *vgt_arena_push(struct arena *a, void *array, size_t n, size_t size);
void vgt_arena_free(struct arena *a);

/* ---- damage lists --------------------------------------------------------------- */

struct damage_list {
	struct vgt_damage *items;
	size_t n, cap;
	uint64_t total;
};

/* Records a damage; returns its index, or -1 if past VGT_DAMAGE_KEPT (only counted). */
long vgt_damage_add(struct damage_list *l, enum vgt_damage_kind kind, const char *file,
                    uint64_t offset, unsigned line, unsigned col, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* Appends text to the message of entry `idx` (no-op for -1). */
void vgt_damage_append(struct damage_list *l, long idx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void vgt_damage_clear(struct damage_list *l);

/* ---- decoding of compiled structures --------------------------------------------- */

enum op_kind {
	OP_ALIGN,  /* only aligns */
	OP_INT,    /* integer of `size` bytes */
	OP_FLOAT,  /* float (4) or double (8) */
	OP_STRING, /* NUL-terminated */
	OP_BYTES,  /* `len` bytes */
	OP_SEQ,    /* as many bytes as the integer in slot `len_field` says */
	OP_REF,    /* uint64 id, uint32 gen */
	/* Only in layouts with bit fields or variants (`general`): */
	OP_BITS,    /* integer of `size` bits at the current bit position */
	OP_VARIANT, /* goes on at the option that the tag in slot `len_field` selects */
	OP_JUMP,    /* goes on at op `len` (the end of a variant's option) */
};

struct op {
	uint8_t kind;
	uint8_t size;  /* bytes (OP_BITS: bits) */
	uint8_t align; /* bytes, a power of two */
	bool is_signed, big_endian;
	int field;     /* value slot written, -1 for OP_ALIGN */
	uint32_t len;  /* OP_BYTES; OP_VARIANT: index in `variants`; OP_JUMP: the next op */
	int len_field; /* OP_SEQ; OP_VARIANT: the tag */
};

/* A variant's options: the op each starts at, and the tag values that select it. The
 * number of the option taken (1 + its index, 0: none) goes to field slot `slot`. */
struct variant_map {
	struct variant_range {
		uint64_t lo, hi; /* compared as int64 when is_signed */
		unsigned option;
	} * ranges;
	unsigned nranges, noptions;
	uint32_t *start;
	int slot;
	bool is_signed;
};

/* Where a field lies: inside option `option` (1-based) of the variant whose number is
 * in slot `variant_slot` (its innermost), or always decoded (-1). `bits`: the width of an
 * integer. */
struct field_place {
	int variant_slot;
	unsigned option;
	uint8_t bits;
};

/* A compiled structure: the ops that decode it and the fields they yield. */
struct layout {
	struct op *ops;
	unsigned nops;
	struct vgt_field *fields;
	unsigned nfields;
	const char **clock;        /* per field: clock name of `map = clock.X.value`, or NULL */
	struct field_place *place; /* per field */
	struct variant_map *variants;
	unsigned nvariants;
	bool general; /* bit fields or variants: decoded by the general loop */
};

enum decode_status { DEC_OK, DEC_OVERRUN, DEC_UNTERMINATED, DEC_BAD_TAG };

/* Decodes `l` at `*pos` (alignment is relative to `base`, the packet start) reading no
 * byte at or after `end`. On success advances `*pos`; on failure sets `*pos` to where
 * the failing field starts. `offsets` (may be NULL) receives each field's offset. */
enum decode_status vgt_layout_decode(const struct layout *l, const uint8_t *base, size_t *pos,
                                     size_t end, struct vgt_value *out, size_t *offsets);
/* The same checks, the values not kept (vgt_cursor_skip_payloads). */
enum decode_status vgt_layout_skip(const struct layout *l, const uint8_t *base, size_t *pos,
                                   size_t end, struct vgt_value *scratch);
/* Field index by name, or -1. */
int vgt_layout_field(const struct layout *l, const char *name);

/* ---- metadata model ---------------------------------------------------------------- */

struct clock_class {
	const char *name;
	uint8_t uuid[16];
	bool has_uuid;
	uint64_t freq;
	int64_t offset_s, offset; /* offset in cycles */
};

struct event_class;

struct stream_class {
	uint64_t id;
	struct layout event_header, packet_context;
	int ev_id, ev_ts; /* in event_header (a plain one: no variant, one id, one timestamp) */
	unsigned ts_bits; /* size of the narrowest event timestamp (wraps when under 64) */
	/* A header with variants (CTF 1.8's compact header: a small id and a short timestamp,
	 * or an escape to the full ones): its id and clock fields in decode order; the last
	 * id decoded wins, each timestamp decoded updates the clock. NULL for a plain one. */
	struct header_role {
		int slot;
		bool is_ts;
	} * roles;
	unsigned nroles;
	/* The compact header as vigil and LTTng-UST declare it, recognized among headers with
	 * variants and read without the layout: one little-endian 32-bit word, an id in its
	 * low `compact_id_bits` bits and the clock's low bits above them; or, when those id
	 * bits are all ones, an id of `compact_ext_id_size` bytes and the uint64 clock after
	 * the first byte. 0: another header. */
	unsigned compact_id_bits, compact_ext_id_size;
	/* In packet_context, -1 when absent. */
	int ts_begin, ts_end, content_size, packet_size, seq_num, discarded, tid, thread_gen;
	const struct clock_class *clock;
	struct event_class **by_id; /* index: event id, when ids are small */
	size_t by_id_len;
	struct event_class **sorted; /* by id, for large ids */
	size_t nsorted;
};

struct event_class {
	struct vgt_event_type pub; /* first: a vgt_event_type* is an event_class* */
	struct layout payload;
	struct stream_class *sc;
	bool usable; /* false: its declaration was rejected (reported) */
};

struct env_entry {
	const char *key, *text;
};

struct metadata {
	struct arena arena;
	bool big_endian;
	uint8_t uuid[16];
	bool has_uuid;
	struct layout packet_header;
	int magic, uuid_field, stream_id; /* in packet_header, -1 when absent */
	struct stream_class **streams;
	size_t nstreams;
	struct event_class **events;
	size_t nevents;
	struct clock_class **clocks;
	size_t nclocks;
	struct env_entry *env;
	size_t nenv;
	size_t complete_len; /* bytes of text up to the end of its last complete declaration */
	bool cut;            /* the text ends inside a declaration */
	unsigned max_fields; /* largest nfields of any layout: size of a value buffer */
	size_t total_fields; /* of all layouts: bounded */
};

/* Parses and checks metadata text. Returns NULL if it is unusable, with the reason in
 * `diag`; problems that leave it usable (a cut end, a rejected declaration) are added
 * to `diag` too. */
struct metadata *vgt_metadata_parse(const char *text, size_t len, const char *path,
                                    struct damage_list *diag);
void vgt_metadata_free(struct metadata *m);
const char *vgt_metadata_env(const struct metadata *m, const char *key);
struct event_class *vgt_stream_class_event(const struct stream_class *sc, uint64_t id);
struct stream_class *vgt_metadata_stream(const struct metadata *m, uint64_t id);

/* Parses a model.emf.uri into the vigil semantics of an event type. Problems go to
 * `problem` (empty when none). */
void vgt_model_uri_apply(struct arena *a, struct vgt_event_type *t, const char *uri, char *problem,
                         size_t problem_size);

/* ---- images, streams, traces ----------------------------------------------------------- */

struct image {
	struct vgt_image pub;
	char *path, *metadata_path;
	struct metadata *md; /* NULL if unreadable */
	struct damage_list damage;
	struct stream **streams;
	char **odd_paths; /* entries that are not stream files, named in damage */
	size_t nodd;
	int64_t own_offset_ns;   /* offset its own clock declares */
	uint64_t ns_num, ns_den; /* clock value -> ns: value * num / den */
	const struct clock_class *clock;
	char procname[17]; /* shared layout: from its packets (shared.c) */
	/* Followed (follow.c): the metadata's bytes when last parsed, and the earlier
	 * parses, kept because their event classes are still the image's. */
	size_t metadata_len;
	struct metadata **old_md;
	size_t nold_md;
};

struct stream {
	struct vgt_stream pub;
	char *path;
	struct image *img;
	const uint8_t *data; /* the whole file (mapped, or read when mapping fails) */
	size_t size;
	size_t data_end; /* past it the file is one hole: zeros, never read (sparse tails) */
	bool mapped, borrowed;
	char *open_error; /* reported by each read */
	struct damage_list damage;
	/* A pool file of the shared layout holds the streams of several writers one after
	 * the other (shared.c): each is a stream reading [start, size) of the file's memory,
	 * which `file` owns (kept until its last reader is freed). */
	size_t start;
	uint64_t discarded_base; /* events_discarded of the file before this writer */
	struct stream *file;
	size_t readers; /* of a file: the streams reading its memory */
	/* data[0] is the file's byte at this offset: 0, but for a followed pool part, whose
	 * buffer holds its own bytes only (from its start), not the writers' before it */
	size_t held_from;
};

/* The stream's bytes at file offset off (at least s->held_from). */
static inline const uint8_t *vgt_stream_bytes_at(const struct stream *s, size_t off)
{
	return s->data + (off - s->held_from);
}

struct vgt_trace {
	struct image **images;
	size_t nimages;
	struct stream **streams;
	size_t nstreams;
	const struct vgt_event_type **classes; /* every image's types, by class_id */
	size_t nclasses;
	bool summaries; /* vgt_packet_summaries */
};

/* Image i takes the clock offset of the first earlier image of the same clock (same
 * uuid: processes of one boot), so that their events merge exactly. */
void vgt_trace_share_clock(struct vgt_trace *t, size_t i);

/* Opens one image directory (metadata + streams). Never fails: problems are damage. */
struct image *vgt_image_open(const char *dir);
/* The same for an image still written (follow.c): its streams opened empty. */
struct image *vgt_image_open_growing(const char *dir);
/* Followed: parses the image's metadata again when it has grown (declarations are
 * appended as sensors register); the classes read before stay the same objects.
 * Returns how many event types were added (appended to img->pub.types). */
size_t vgt_image_grow_metadata(struct image *img);
/* The images of a directory: one, or one per writer of a shared-layout directory
 * (shared.c). Returns their number, *out malloc'd. */
size_t vgt_image_open_all(const char *dir, const char *only, struct image ***out);
void vgt_image_describe(struct image *img); /* identity, types and clock from its metadata */
bool vgt_image_is_shared(const struct image *img);
/* `only`: the one writer image wanted (its name in the directory), or NULL for all. */
size_t vgt_image_split_shared(struct image *dir, const char *text, size_t len, const char *only,
                              struct image ***out);
/* The thread that wrote a packet of a pool file (shared.c). */
struct pool_writer {
	int64_t pid, ppid;
	uint64_t gen, parent_gen, image, tid, thread_gen;
	char name[17];
};
/* A walk over a pool file's packets, cutting it where the writing thread changes. */
struct pool_walk {
	size_t off;                /* a packet start: where the walk is */
	struct pool_writer writer; /* the thread of the packets walked (have: known) */
	bool have;
	uint64_t discarded; /* the last packet walked's events_discarded */
};
/* Walks the packets at w->off as long as w->writer wrote them (!w->have: the first
 * packet's thread, taken). True when a packet of another thread starts at w->off (clear
 * w->have to walk that writer's); false where the whole packets read end. `growing`
 * (the file still written): a last packet whose header names its thread is compared
 * too, and a packet is passed only once another starts after it (its writer closes
 * its last packet smaller than it had allocated, and cuts the file there). */
bool vgt_pool_walk(const struct metadata *md, const struct stream *s, bool growing,
                   struct pool_walk *w);
/* Followed (follow.c): gives stream s of the shared directory `dir` to its writer's image,
 * one of `writers` or a new one (*added), as vgt_image_split_shared does; NULL while the
 * stream has no readable first packet. */
struct image *vgt_image_shared_adopt(struct image *dir, struct stream *s, struct image **writers,
                                     size_t n, bool *added);
void vgt_image_free(struct image *img);
/* Absolute ns of a raw clock value of this image. */
int64_t vgt_image_abs_ns(const struct image *img, uint64_t clock_value);

/* Opens a stream file, or a memory buffer when `data` is given (fuzzing, tests). */
struct stream *vgt_stream_open(struct image *img, const char *path, const uint8_t *data,
                               size_t size);
void vgt_stream_free(struct stream *s);
/* A stream file still written, opened empty: follow.c reads its bytes as they come. */
struct stream *vgt_stream_growing(struct image *img, const char *path);
/* A cursor has read a mapped stream up to `off`: the file's pages before it (from
 * *dropped on) leave the process's memory once they are a megabyte, so that reading a
 * trace larger than memory holds a few pages of each stream, not the files (the page
 * cache keeps them; a page read again comes back from it). */
void vgt_stream_drop_behind(const struct stream *s, size_t *dropped, size_t off);
/* At a cursor's end: the rest of what it read (a range of a split stream is a part of the
 * file, and its last packet would otherwise stay mapped in until the file is closed). */
void vgt_stream_drop_rest(const struct stream *s, size_t *dropped);
/* Adds the image folder's stream files (growing: only those not met before, opened
 * empty); how many were added. */
size_t vgt_image_scan_streams(struct image *img, bool growing);

/* What a cursor knows about the packet it is in (recover reads it). */
struct packet_info {
	size_t start;             /* offset of the packet */
	size_t header_end;        /* offset of its first event */
	uint64_t claimed_end;     /* start + packet_size / 8, may lie past the file */
	uint64_t claimed_content; /* start + content_size / 8, may lie past the file */
	size_t end, content_end;  /* the same, bounded by the file */
	size_t last_event_end;    /* end of its last completely decoded event */
	size_t packet_size_at, content_size_at; /* offsets of those fields, or SIZE_MAX */
	uint8_t size_field_len;                 /* bytes of the packet_size/content_size integers */
	bool big_endian;
	bool past_said; /* its packet_size past the end of the file is reported */
};

/* The packets of a stream as one whole read found them (summary.c): per packet, entry
 * words [start, end, events, first_ts, last_ts, last clock, flags, first position byte]
 * then `words` bitmap words of the event ids it holds. Written beside the stream (a dot
 * file, which readers pass over) or in the cache directory; read back only when it was
 * made of the same file (size, modification time, inode) and its checksum holds.
 * Positions (summary_positions.c), the third format: after the entries, npos bytes (zero
 * bytes after them to a whole word), per packet that has any a block of groups, one per
 * event id positioned, in increasing id order: varints id, count, length in bytes, then
 * count records of two varints, the event's offset from the packet's start less the one
 * before it (the first: from 0) and its clock less the one before it (the first: from 0;
 * zigzag-signed). A packet's block runs from its entry's SUM_POS byte to the next
 * entry's (the last: to npos). The second format (16-byte records, before the third) is
 * still read, its positions never used: made again. */
enum {
	SUM_START,
	SUM_END,
	SUM_EVENTS,
	SUM_FIRST,
	SUM_LAST,
	SUM_CLOCK,
	SUM_FLAGS,
	SUM_POS,
	SUM_FIXED = 8
};
#define SUM_CLEAN 1u     /* no damage was met while the packet was read */
#define SUM_MAX_WORDS 64 /* event ids up to 4095 */
struct stream_summary {
	uint64_t *v; /* n entries of SUM_FIXED + words */
	size_t n, cap, words;
	/* the positions' bytes (NULL in the first format), in v's block when read from a
	 * file, else their own; the format read (1 to 3; 0: made) */
	uint8_t *pos;
	size_t npos, poscap;
	unsigned format;
	bool positions, pos_own;
	/* while one is made: the packet's events (offset word, clock), counts by id */
	uint64_t *scratch;
	size_t nscratch, capscratch;
	uint32_t *counts;
	char *from;  /* the file it was read from (removed when its positions lie) */
	void *block; /* the file mapped, v and pos in it (unmapped with it) */
	size_t block_len;
	/* the file it was made of */
	uint64_t file_size, ino;
	int64_t mtime_ns;
};
/* Parses a summary file's bytes (8-byte aligned): 1 (sum filled, its entries and
 * positions in buf, which the caller keeps while it is used: unmapped with it when set
 * as its block), 0 when it was made of another file than `of` says (stale: made again), -1
 * when the bytes cannot be one (why says what). */
int vgt_summary_parse(const uint8_t *buf, size_t len, const struct stream_summary *of,
                      struct stream_summary *sum, char *why, size_t whylen);
/* The bytes of a summary file (malloc'd), *len set. */
uint8_t *vgt_summary_bytes(const struct stream_summary *sum, size_t *len);
void vgt_summary_free(struct stream_summary *sum);
struct vgt_cursor;
/* Before its first packet (vgt_merge_open_windows, vgt_cursor_open, when the trace's
 * vgt_packet_summaries is on): the cursor takes its stream's summary when one fits (and
 * then may pass over whole packets, vgt_summary_skip, as its skip and windows say), else
 * makes one as it reads. */
void vgt_summary_attach(struct vgt_cursor *c);
/* A packet just opened: passed over whole (true: its events counted as read) when the
 * summary says it holds only events the cursor passes over; else recorded. */
bool vgt_summary_skip(struct vgt_cursor *c);
/* An event read (recorded), a packet read to its content end, the stream's end (the
 * summary written), the cursor closed. */
void vgt_summary_event(struct vgt_cursor *c, uint64_t id, int64_t ts, size_t at);
void vgt_summary_packet_end(struct vgt_cursor *c);
void vgt_summary_stream_end(struct vgt_cursor *c);
void vgt_summary_detach(struct vgt_cursor *c);
/* Frees the cursor's positions buffers (a packet's positions to visit: about 1 MB for a
 * relation of one event in 7), at its end or detach: a stream read in ranges keeps every
 * range's cursor until the ranges are joined. */
void vgt_positions_release(struct vgt_cursor *c);
/* Would every event of class id in a packet whose events lie from first to last be
 * passed over by the cursor (its class skipped, or outside its window)? NULL class: no. */
bool vgt_summary_passed_over(const struct vgt_cursor *c, uint64_t id, int64_t first, int64_t last);

/* Positions (summary_positions.c). Making: each event of the packet read, then at its
 * end the block of its rarest ids (together at most one event in 4) appended and its entry's
 * SUM_POS set; a packet not kept forgets its events. */
void vgt_positions_event(struct stream_summary *r, uint64_t id, size_t off, uint64_t clock);
void vgt_positions_packet_end(struct stream_summary *r, uint64_t *entry);
void vgt_positions_forget(struct stream_summary *r);
/* Reading: the groups of entry i's block one by one (*at: 0 first, then as left),
 * false after the last; and a group's records decoded into out (count pairs of offset
 * and clock, offsets increasing and below the packet's size), false when they are not
 * count whole records filling its length. */
struct vgt_pos_group {
	uint64_t id, count;
	const uint8_t *rec;
	size_t len;
};
bool vgt_positions_group(const struct stream_summary *sum, size_t i, size_t *at,
                         struct vgt_pos_group *g);
bool vgt_positions_decode(const struct vgt_pos_group *g, uint64_t size, uint64_t *out);
/* What in the positions of a summary just read cannot be (NULL: nothing), into why. */
const char *vgt_positions_check(const struct stream_summary *sum, char *why, size_t whylen);
/* The packet just opened, entry i of the cursor's summary e: read by its positions (true)
 * when every id it holds is passed over or positioned, some are passed over, and every
 * position to visit holds the event header it says (else a warning, the summary given up);
 * its events not visited then counted as read. */
bool vgt_positions_plan(struct vgt_cursor *c, size_t i, const uint64_t *e);
/* Reading by positions: the cursor put at the next event to visit (true), or the packet
 * done (false: its counts and clock as its entry says, in_packet false). */
bool vgt_positions_next(struct vgt_cursor *c);
/* The id and clock of the event header at byte `at` of the packet the cursor is in, with
 * `clock` the one before it (cursor.c); false when none decodes there. */
bool vgt_cursor_header_at(struct vgt_cursor *c, size_t at, uint64_t clock, uint64_t *id,
                          uint64_t *out_clock);

struct vgt_cursor {
	struct stream *s;
	const struct metadata *md;
	struct packet_info pkt;
	bool in_packet, have_packet, done;
	size_t pos;         /* where the next event of the packet starts */
	size_t next;        /* where the next packet starts (or resync starts, see `resync`) */
	bool resync;        /* `next` is only a place to search from */
	long resync_damage; /* damage entry to complete with where reading resumed */
	const struct stream_class *sc;
	uint64_t clock; /* last full clock value (for timestamps narrower than 64 bits) */
	int64_t last_ts;
	bool have_ts;
	bool have_seq;
	uint64_t seq;
	bool have_context; /* a previous packet's context: */
	uint64_t prev_discarded;
	uint32_t prev_tid, prev_thread_gen;
	uint32_t tid, thread_gen;
	struct vgt_value *header_values, *values;
	size_t *header_offsets;
	struct vgt_event ev;
	/* Following a stream still written (follow.c): at the end of what is there, or at
	 * what is half-written there, the cursor holds (`paused`, at byte `held_at`) instead
	 * of stopping or reporting damage; `wants_metadata` when it met an event id its
	 * image's metadata does not declare (yet). */
	bool follow, paused, wants_metadata;
	bool held_clean; /* held at the end of what was written, not at something doubtful */
	size_t held_at;
	const bool *skip; /* by class_id: the payload is passed over, ev.values NULL */
	/* By class_id or NULL (vgt_merge_open_windows); the span covering every active one
	 * (win_lo > win_hi: none); the last event returned was a marker keeping the next. */
	const struct vgt_class_window *windows;
	int64_t win_lo, win_hi;
	bool keep_next;
	size_t dropped; /* the stream's pages before it are out of memory (drop_behind) */
	/* Packet summaries (summary.c): `use`, when one fits, to pass over whole packets;
	 * else `rec`, made as the stream is read; the entry of the packet being read (the
	 * damage count when it was opened). */
	struct stream_summary *sum_use, *sum_rec;
	bool sum_quiet; /* a summary file that is none: not said (the reader that reads says it) */
	size_t sum_at;
	bool sum_in;
	uint64_t sum_damage;
	/* Reading a packet by its positions (summary_positions.c): its entry, its records,
	 * the indices of those to visit and the next one. */
	bool jumping;
	const uint64_t *jump_entry;
	uint64_t *jump_at, *jump_tmp; /* (offset, clock) pairs: to visit, decoded */
	size_t jump_n, jump_i, jump_cap;
};
/* Sets the cursor's class windows (n classes), before its first event. */
void vgt_cursor_windows(struct vgt_cursor *c, const struct vgt_class_window *w, size_t n);

/* Initializes a cursor over a stream from its start (resets its stats and damage). */
void vgt_cursor_init(struct vgt_cursor *c, struct stream *s);
void vgt_cursor_fini(struct vgt_cursor *c);
/* A cursor made to read from packet start `at` in the state a read from its stream's
 * start would have reached there: the packet before it (at `prev`, ending at `at`)
 * opened for its context (sequence number, discarded count, thread), then the clock and
 * time of that read's last event before `at` (stream_split.c). False when that packet
 * does not open cleanly where said. */
bool vgt_cursor_resume(struct vgt_cursor *c, size_t prev, size_t at, uint64_t clock,
                       int64_t last_ts);
/* stream_split.c: the split of stream i of t (source.h vgt_source_split), and its
 * cursors' payload skips and windows. */
struct vgt_split;
struct vgt_split *vgt__split_open(struct vgt_trace *t, size_t i, size_t parts);
void vgt__split_windows(struct vgt_split *sp, const bool *skip,
                        const struct vgt_class_window *windows, size_t nclasses);
/* Fills c->ev with the next event; false at the end of the stream (or, following,
 * held: c->paused). */
bool vgt_cursor_advance(struct vgt_cursor *c);
/* Following: takes a held cursor up again after its stream's bytes were read again (the
 * packet it is in may have grown, or been closed by its writer). */
void vgt_cursor_refresh(struct vgt_cursor *c);
/* Following no more (the run's end, or a writer that let its file go): the packet the
 * cursor is in, opened while it could still grow, judged as a packet read at once is
 * judged: a packet_size past the end of the file is damage (packet-past-eof). */
void vgt_cursor_settle(struct vgt_cursor *c);
/* The packet whose header starts at byte `off` of the cursor's stream, as far as it has
 * been read: where it ends and where its content ends (absolute offsets). False when no
 * sound packet header is there (yet). */
bool vgt_cursor_packet_at(const struct vgt_cursor *c, size_t off, uint64_t *end,
                          uint64_t *content_end);

#endif
