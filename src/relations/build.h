/* The state of one database build: relations under construction, the mapping of event
 * types onto them (schema.c) and the pairing of tuples (build.c). */
#ifndef VIGIL_RELATIONS_BUILD_H
#define VIGIL_RELATIONS_BUILD_H

#include "relations/columns.h"
#include "relations/open.h"
#include "trace/source.h"

/* A relation being built; its tuples still open (interval and user entity relations:
 * those an end may close), hashed on the key attributes (`keyed`, those of its begin
 * types that every end met so far matches); and which attributes its begin types give
 * (an end must match those; its other fields only add values). */
struct rslot {
	struct vgq_relation *rel;
	const char *first_type; /* the event type that made it (NULL: an entity kind) */
	bool entity_refused;    /* an entity kind of its name was left out (said once) */
	bool by_need;           /* made by the schema: built only when named (need) */
	struct vgq_openset open;
	bool *keyed;
	size_t nkeyed;
	bool *begun;
	size_t nbegun;
};

enum what {
	T_SKIP,
	T_EVENT,
	T_BEGIN, /* also the create of a user entity relation */
	T_END,
	T_STATE,
	T_ENT_CREATE, /* vg.entity / vg.process / vg.thread */
	T_ENT_RECLAIM,
	T_ENT_NAME,
};

struct tinfo {
	const struct vgt_event_type *type;
	enum what what;
	struct rslot *slot;     /* NULL for built-in entity events (the kind decides) */
	int *col;               /* per field: attribute index, or -1 */
	bool *match;            /* T_END, per field: compared with the open tuples */
	int key;                /* T_STATE: the field naming the entity, or -1 (the thread) */
	const char *fixed_kind; /* "Process", "Thread", or NULL (field `kind`) */
	int f_kind, f_id, f_gen, f_name; /* built-in entity events */
	int since; /* T_END of a sampled interval: the vg_since field, or -1 */
	/* T_EVENT under a query's time bound (vgq_build_options.bounds): only events valid
	 * in [lo, hi] make tuples. */
	bool bounded;
	int64_t lo, hi;
	/* T_EVENT under a query's key selection (vgq_build_options.keys): only events for
	 * which every check of one alternative holds make tuples. */
	const struct vgq_key_check *checks; /* by alternative */
	size_t nchecks;
};

/* A key condition resolved to the field of one event type (build.c). */
struct vgq_key_check {
	unsigned alt;
	int field;
	enum vgq_key_op op;
	const struct vgq_key_cond *cond;
};
/* Do the event's values meet every check of some alternative of ti (build_bounds.c)? */
bool vgq_build_keys_hold(const struct tinfo *ti, const struct vgt_event *ev);

struct builder {
	struct vgq_pool *pool;
	struct rslot **slots;
	size_t nslots;
	struct tinfo **types; /* open addressing on the type pointer */
	size_t ntypes_cap;
	struct tinfo **by_class; /* vgq_build_schema: the same by class_id (trace/source.h) */
	size_t nby_class;
	struct vgq_keymap *keys;
	struct vgt_names *names;
	const struct vgt_trace *trace;
	const struct vgt_image *last_image; /* cache of image_index() */
	uint32_t last_image_index;
	uint32_t last_process_index; /* its process's first image (process_index()) */
	bool ends_without_begin;     /* vgq_build_options */
	bool defer_merge;            /* vgq_build_options */
	int64_t (*end_since)(void *arg, const struct vgt_event *ev);
	void *end_since_arg;
	char **warnings; /* vgq_build_warn; handed to the database */
	size_t nwarnings;
};

/* Notes one warning (printf format) for the database; the same text twice is kept once. */
void vgq_build_warn(struct builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct rslot *vgq_build_relation(struct builder *b, const char *name, enum vgq_rkind kind);
struct tinfo *vgq_build_type(const struct builder *b, const struct vgt_event_type *t);
/* Maps event types onto relations (made as needed): begin types first, then end types,
 * each in the order given; a type met twice is mapped once. */
void vgq_build_types(struct builder *b, const struct vgt_event_type *const *types, size_t n);
/* vgq_build_types over every type of every image of the trace, in image order. */
void vgq_build_schema(struct builder *b, const struct vgt_trace *t);
/* A followed trace (trace/follow.h) has gained event classes since: maps them too. */
void vgq_build_schema_grow(struct builder *b, const struct vgt_trace *t);
void vgq_build_free_types(struct builder *b);
/* A builder with no relations yet (t may be NULL: no trace), and the database holding
 * its relations, sorted by name; the builder is freed. */
void vgq_build_init(struct builder *b, const struct vgt_trace *t);
void vgq_build_finish(struct builder *b, struct vgq_database *db);
/* One event of the trace whose schema vgq_build_schema made. */
void vgq_build_feed(struct builder *b, const struct vgt_event *ev);
int vgq_is_synth_marker(const struct vgt_event_type *t); /* vg.report.synth */
/* Tuple t of ti's interval relation, made already (its begin's values in place, as
 * build_streams.c merges them), opened as a begin of image img opens one: an end fed
 * after may close it. */
void vgq_build_reopen(struct builder *b, const struct tinfo *ti, size_t t,
                      const struct vgt_image *img);

/* The trace's events in merged order as the database keeps them: vg.report.synth markers
 * taken out, the event after one given the time it names (build.c). */
struct vgq_reader {
	struct vgt_source *src;
	const struct vgt_stream *synth_stream;
	int64_t synth_at;
	struct vgt_event synthesized;
	int64_t recorded; /* the last event's time as recorded (a synthesized one's valid time
	                     may be earlier): what `as of` compares */
};
const struct vgt_event *vgq_reader_next(struct vgq_reader *r);
/* Counts an event kept into the database's events, first and last. */
void vgq_build_count(struct vgq_database *db, const struct vgt_event *ev);

/* The whole pass (names, relations, WaitFor) on `threads` builder threads, each building
 * the relations it owns from every event read here in merged order (build_parallel.c):
 * the relations are those of the one-threaded pass. False, having read nothing, when
 * threads < 2 or no thread can start. */
struct vgq_waits;
bool vgq_build_parallel(struct builder *b, struct vgq_reader *rd, struct vgq_waits *waits,
                        struct vgq_database *db, unsigned threads);

/* The same pass stream by stream when every busy relation is an event or interval
 * relation with no entity attribute (build_streams.c): each stream read on a thread into
 * pieces of those relations, merged by time after, the intervals then paired in merged
 * order. False, having built nothing (the pass is
 * then made in merged order), when it does not apply or a stream needs the merged order
 * (times going backwards, a vg.report.synth marker). */
bool vgq_build_streams(struct builder *b, struct vgq_reader *rd, struct vgq_waits *waits,
                       struct vgq_database *db, unsigned threads);

/* The WaitFor relation (waits.c): NULL when the trace has no lock operations;
 * fed every event the database keeps, in merged order; at the end, adds the relation to
 * the builder (before vgq_build_finish) and frees itself. NULL is accepted by both. */
struct vgq_waits;
struct vgq_waits *vgq_waits_new(struct vgt_trace *t);
/* Whether the trace has lock operations: vgq_waits_new would not be NULL. */
bool vgq_waits_possible(const struct vgt_trace *t);
void vgq_waits_feed(struct vgq_waits *q, const struct vgt_event *ev);
/* Whether events of this type may matter to vgq_waits_feed (false for q NULL). */
bool vgq_waits_wants(const struct vgq_waits *q, const struct vgt_event_type *t);
void vgq_waits_finish(struct vgq_waits *q, struct builder *b);
/* The relation's schema, with no tuple, when one of the types is a lock operation and no
 * relation of that name is declared: a sensor description's (relations/model.c). */
void vgq_waits_schema(struct builder *b, const struct vgt_event_type *const *types, size_t n);

/* WaitFor followed live (the update network, src/live): the same walk and graph, fed by
 * vgq_waits_feed as events are read; vgq_waits_sync brings the relation up to date with
 * what was fed (`last`: the latest time fed; `final`: the end, every open edge is a
 * tuple) and returns it: tuples are appended as edges appear and stay open until their
 * edge closes, so the relation is the stored build's once everything was fed (in the
 * order edges appeared rather than by begin). NULL while the trace declares no lock
 * operation, or after memory ran out (vgq_waits_failed). Strings live in b's pool. */
struct vgq_waits *vgq_waits_new_live(struct vgt_trace *t);
struct vgq_relation *vgq_waits_sync(struct vgq_waits *q, struct builder *b, int64_t last,
                                    bool final);
bool vgq_waits_failed(const struct vgq_waits *q);
void vgq_waits_free_live(struct vgq_waits *q);

/* The time bounds and key selections of a build (vgq_build_options.bounds, .keys) put on
 * the builder's event types (build_bounds.c): `windows` for the reader
 * (vgt_source_skip_outside; NULL: none), the checks the types point into. */
struct vgq_waits;
struct vgq_build_bounds {
	struct vgt_class_window *windows;
	struct vgq_key_check *checks;
	size_t nbounded, nkeyed;
	bool summaries; /* the reader keeps and uses packet summaries (vgt_packet_summaries) */
};
void vgq_build_bounds_apply(struct builder *b, const struct vgq_build_options *o,
                            const struct vgq_waits *waits, struct vgq_build_bounds *bb);
/* What the reader passed over, once the trace is read (db->skipped); the events of the
 * packets it passed over whole counted in db->events, first and last as if read. */
void vgq_build_bounds_count(const struct vgt_trace *t, const struct vgq_build_bounds *bb,
                            struct vgq_database *db);
void vgq_build_bounds_free(struct vgq_build_bounds *bb);

#endif
