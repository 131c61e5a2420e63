/* Historical relations of a recorded trace: every sensor type of a trace is a primitive
 * relation with its explicit attributes (the event's fields, named as in the trace) and
 * implicit valid time, all built in one merged pass over the trace (vgt_merge_*).
 *
 *   event     kind=event (and foreign events): one tuple per event, time `at` (stored
 *             in `from`; `to` and `open` are NULL). Named by the type's `relation=`.
 *   interval  kind=begin/end sharing a relation name: an end closes the oldest open
 *             tuple of the same process image whose attribute values equal the end's
 *             fields; an end that closes nothing is counted in `unmatched_ends` (and,
 *             with `ends_without_begin`, also makes a tuple [end, end] flagged in
 *             `begin_unknown`: a monitor that enables only the end sensor).
 *   state     kind=state: a change ends the current tuple of its entity (the field of
 *             the target role, else the performer, else the first entity reference,
 *             else the performing thread; per image) and starts the next.
 *   entity    one relation per entity kind, one tuple per lifetime and name (a rename
 *             ends the tuple and starts one with the new name), attributes name, id,
 *             gen: vg.entity.create/.name/.reclaim by `kind`; vg.process.begin/.name/
 *             .end feed `OSProcess` and vg.thread.* feed `OSThread`: names no
 *             program's entity kind takes (vigil gen refuses them), so a program's own
 *             `Process` or `Thread` entities are a relation of their own.
 *
 * A tuple still open at the end of the trace ends at the trace's last event, with
 * `open` set. Tuples are stored column-wise, in the order they start (equal times: trace
 * order); the implicit `from`/`to` cover [from, to). Everything returned lives until
 * vgq_database_free().
 *
 * vgq_database_build_opts() builds from the events a `keep` filter lets through (a
 * monitor's plan asks for some relations only); vgq_database_from_model() gives the
 * relations a trace of a program with these sensors would have, with no tuples, so that
 * a query can be bound and planned before the program runs. */
#ifndef VIGIL_RELATIONS_RELATION_H
#define VIGIL_RELATIONS_RELATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/trace.h"

enum vgq_rkind { VGQ_REL_EVENT, VGQ_REL_INTERVAL, VGQ_REL_STATE, VGQ_REL_ENTITY };
enum vgq_type { VGQ_INT, VGQ_UINT, VGQ_DOUBLE, VGQ_STRING, VGQ_BYTES, VGQ_ENTITY };

struct vgq_bytes {
	const uint8_t *ptr;
	size_t len;
};

/* A time-scoped entity identity, with the name it had when the tuple started (NULL if
 * the trace never named it). `image` is the index of the process image that emitted it. */
struct vgq_ref {
	uint64_t id;
	uint32_t gen;
	uint32_t image;
	const char *name;
};

struct vgq_attr {
	const char *name; /* as in the trace */
	enum vgq_type type;
	const char *ref_kind; /* VGQ_ENTITY: the entity kind, or NULL if undeclared */
};

/* One attribute's values; the member used follows the attribute's type. Strings are
 * interned: equal strings of one database have equal pointers. */
union vgq_column {
	int64_t *i;
	uint64_t *u;
	double *d;
	const char **s;
	struct vgq_bytes *b;
	struct vgq_ref *r;
};

struct vgq_relation {
	const char *name;
	enum vgq_rkind kind;
	size_t nattrs;
	const struct vgq_attr *attrs;
	size_t ntuples;
	int64_t *from; /* `at` of event relations */
	int64_t *to;   /* NULL for event relations */
	bool *open;    /* NULL for event relations: still open at the end of the trace */
	/* NULL, or one flag per tuple: an interval tuple made by an end that closed no open
	 * tuple (vgq_build_options.ends_without_begin): its `from` is the end's time. */
	bool *begin_unknown;
	union vgq_column *cols; /* one per attribute */
	/* NULL, or per attribute NULL or one flag per tuple: 1 = no value (a result computed
	 * without one, e.g. a division by zero). Strings without a value are NULL pointers. */
	uint8_t **nulls;
	int64_t first, last; /* time span: smallest from, largest to (or at); 0 if empty */
	/* Problems of pairing, counted: ends (or reclaims) without an open begin (or
	 * create), and tuples left open at the end of the trace. */
	uint64_t unmatched_ends, open_at_end;
	/* How store.c holds the columns it grew (heap or spill file: relations/spill.h);
	 * NULL when other code allocated them. A copy of the struct (a view) must not be
	 * freed. */
	struct vgq_colmem *mem;
	/* NULL, or (a relation the cache's writer is to gather: relations/unmerged.h) where
	 * its tuples are while its columns are NULL; never so in a database returned. */
	struct vgq_unmerged *unmerged;
};

/* One condition `attr OP constant` on the tuples of event relation `relation`: a tuple
 * can contribute to a query's answer only if every condition of some alternative `alt`
 * (numbered from 0 per relation) holds. Integers compare with integer attributes,
 * strings (= and != only) with text attributes; a condition on anything else is never
 * made. */
enum vgq_key_op { VGQ_KEY_EQ, VGQ_KEY_NE, VGQ_KEY_LT, VGQ_KEY_LE, VGQ_KEY_GT, VGQ_KEY_GE };
struct vgq_key_cond {
	const char *relation;
	unsigned alt;
	const char *attr;
	enum vgq_key_op op;
	bool is_string;
	int64_t i;
	const char *s;
};

/* What a build with bounds passed over (struct vgq_database.skipped). */
struct vgq_skip_stats {
	size_t nkeyed;         /* event relations under a key selection */
	uint64_t events;       /* events of bounded relations outside their bounds */
	uint64_t packets;      /* packets whose time span lies outside every bound */
	uint64_t packets_read; /* packets read in all */
	size_t nbounded;       /* event relations bounded */
	/* packets passed over whole by their summaries (vgt_packet_summaries); packets read
	 * by their summaries' positions (only the events of classes read decoded); the
	 * events of both never decoded (counted in vgq_database.events) */
	uint64_t packets_skipped, events_skipped, packets_positioned;
};

struct vgq_database {
	size_t nrelations;
	struct vgq_relation *const *relations; /* sorted by name, case-insensitively */
	int64_t first, last;                   /* time of the first and last event */
	uint64_t events;                       /* events read */
	uint64_t damage;                       /* damage entries reported by the reader */
	bool partial;                          /* damage > 0: relations hold what was readable */
	bool from_model; /* relations declared by a sensor description, not read from a trace */
	struct vgq_skip_stats skipped; /* vgq_build_options.bounds */
	/* What the build could not do as the metadata asked (two kinds of relation under one
	 * name: the later type kept apart or left out), one sentence each, said once. */
	size_t nwarnings;
	char **warnings;
	struct vgq_db_internal *internal;
};

/* Builds all relations of the trace in one merged pass (vgt_merge_*). Never fails on a
 * damaged trace: `partial` says so. */
struct vgq_database *vgq_database_build(struct vgt_trace *t);
void vgq_database_free(struct vgq_database *db);
/* Prints each of db->warnings as one line "WHO: warning: ..." on f. */
void vgq_database_print_warnings(const struct vgq_database *db, const char *who, FILE *f);

/* No tuple of event relation `relation` valid outside [lo, hi] (absolute ns, both
 * included) can contribute to a query's answer. */
struct vgq_time_bound {
	const char *relation;
	int64_t lo, hi;
};

/* How to build: vgq_database_build(t) is vgq_database_build_opts(t, NULL). */
struct vgq_build_options {
	/* Called for each event in merged order before it is used; false drops it (it is
	 * then not counted in `events`). NULL keeps everything. */
	bool (*keep)(void *arg, const struct vgt_event *ev);
	void *keep_arg;
	/* An interval end that closes no open tuple makes a tuple [end, end] with
	 * `begin_unknown` set, instead of only counting it in unmatched_ends. */
	bool ends_without_begin;
	/* A sampled interval's end that closes no open tuple and carries no vg_since: its
	 * begin time as the keep filter saw it (absolute ns), or INT64_MIN if unknown (the
	 * filter dropped the begin: vga_filter_since_of). NULL: unknown. */
	int64_t (*end_since)(void *arg, const struct vgt_event *ev);
	/* Stop after this many events read (kept or not): a prefix of the trace, as a live
	 * reader would have seen it (0: all). */
	uint64_t max_events;
	/* Keep only the events recorded at or before `until` (their recording time: a
	 * synthesized event's valid time may be earlier): the trace as it stood then
	 * (TQuel's `as of`). false: all. */
	bool has_until;
	int64_t until;
	/* Only these relations (names compared case-insensitively) are built, besides the
	 * entity relations; the others are left out of the database (NULL: all). */
	const char *const *need;
	size_t nneed;
	/* Valid-time bounds a query's selections put on event relations (vgq_time_bound):
	 * the events of such a relation outside its bound are not built into it (their
	 * payloads are passed over while decoding). The database's events, first, last and
	 * damage stay those of the whole trace. VIGIL_SKIP=off in the environment: unused. */
	const struct vgq_time_bound *bounds;
	size_t nbounds;
	/* Key selections a query's where clauses put on event relations (vgq_key_cond): an
	 * event of such a relation makes a tuple only when all conditions of one of its
	 * alternatives hold (its payload is still decoded: the key is in it). Unused with
	 * VIGIL_SKIP=off too. */
	const struct vgq_key_cond *keys;
	size_t nkeys;
	/* For the relations cache's writer (cache.c): event relations built in pieces on
	 * threads are left unmerged (struct vgq_relation.unmerged), their columns gathered
	 * straight into the cache's file; vgq_database_settle (relations/unmerged.h)
	 * gathers what it does not take. */
	bool defer_merge;
};
struct vgq_database *vgq_database_build_opts(struct vgt_trace *t,
                                             const struct vgq_build_options *o);

/* The relations a trace of a program with these sensors has, without tuples: one per
 * sensor (event, interval, state; attributes as the trace's fields give them), the
 * runtime's own (vg.process.exec), and one entity relation per declared entity kind
 * plus OSProcess and OSThread (name, id, gen). Same names, kinds, attribute names, types,
 * entity kinds and order as vgq_database_build() gives for a recording of a program
 * whose sensors the C generator made from the model (an entity relation of the
 * recording exists only once such an entity was seen). Never NULL. */
struct vgl_model;
struct vgq_database *vgq_database_from_model(const struct vgl_model *m);

/* Lookups by name are case-insensitive: `w.process` finds `Process`. NULL / -1 if none. */
const struct vgq_relation *vgq_database_find(const struct vgq_database *db, const char *name);
int vgq_relation_attr(const struct vgq_relation *r, const char *name);

/* The database's one copy of this text, or NULL if no value of the database is this
 * text: string and entity-name values equal `s` exactly when their pointer is this one
 * (a query compares `S.Process = "P1"` by pointer). */
const char *vgq_database_string(const struct vgq_database *db, const char *s);

/* The Clock relation: an event relation without explicit attributes, ticking every
 * `tick_ns` (the base tick) from the first event of the trace to its last. Clock[n]
 * (every > 1) ticks once every n base ticks: at first + k * n * tick_ns, k = 0, 1, ...
 * Named "Clock" or "Clock[n]"; made on first request and kept by the database (not in
 * `relations`). NULL with one line in `err` if tick_ns < 1, every < 1, or the relation
 * would exceed VGQ_CLOCK_MAX tuples. */
#define VGQ_CLOCK_MAX 100000000ull
const struct vgq_relation *vgq_database_clock(struct vgq_database *db, int64_t tick_ns,
                                              uint64_t every, char *err, size_t errsize);
/* Clocks tick from `origin` (absolute ns) instead of the first event: a live monitor
 * starts them where it asked its subjects to sample (docs/watch.md "Sampling"). Call
 * before the first vgq_database_clock. */
void vgq_database_set_clock_origin(struct vgq_database *db, int64_t origin);

const char *vgq_rkind_name(enum vgq_rkind k); /* "event", "interval", "state", "entity" */
const char *vgq_type_name(enum vgq_type t);   /* "int", ..., "entity" */

#endif
