/* vigil_check internals: the checker's state and the concepts it tracks. */
#ifndef VIGIL_CHECK_INTERNAL_H
#define VIGIL_CHECK_INTERNAL_H

#include "check.h"
#include "table.h"
#include "trace/source.h"

/* What an event type does (docs/consistency.md): the reader's `op` of an event type, in
 * the order of vgt_op_names (and of `enum vg_op` in include/vigil/vigil.h). */
enum vgc_op {
	VGC_OP_ACTIVITY,
	VGC_OP_CREATE,
	VGC_OP_LOAD,
	VGC_OP_RECLAIM,
	VGC_OP_RENAME,
	VGC_OP_ENTER,
	VGC_OP_LEAVE,
	VGC_OP_ACQUIRE,
	VGC_OP_RELEASE,
	VGC_OP_WAIT_BEGIN,
	VGC_OP_WAIT_END,
	VGC_OP_SUSPEND,
	VGC_OP_RESUME,
	VGC_OP_REFERENCE,
	VGC_OP_MOVE,
	VGC_OP_COUNT
};
const char *vgc_op_name(enum vgc_op op);

/* ---- kinds: interned entity kinds, compared case-insensitively ----------------------- */

enum { VGC_KIND_PROCESS = 0, VGC_KIND_THREAD = 1 };

struct vgc_kinds {
	struct vgc_table index; /* lowercase text -> number */
	char **display;         /* as first seen */
	size_t n, cap;
};
int vgc_kinds_init(struct vgc_kinds *k);
void vgc_kinds_free(struct vgc_kinds *k);
/* The kind's number (a new one if unseen), or -1 if memory ran out. */
int64_t vgc_kind_intern(struct vgc_kinds *k, const char *text);
const char *vgc_kind_display(const struct vgc_kinds *k, uint32_t kind);

/* ---- identities and their lifetimes ------------------------------------------------ */

/* A time-free identity: scope (the process image, or for threads their process, or 0
 * for processes), kind, raw id. One record per identity keeps its latest generation. */
struct vgc_key {
	uint64_t id;
	uint32_t scope, kind;
};

enum {
	VGC_LIVE = 1,       /* its creation was reported, not its reclamation */
	VGC_DEAD = 2,       /* reclaimed (pos_mark: where) */
	VGC_LOADED = 4,     /* its load was reported (pos_mark: where) */
	VGC_REFD = 8,       /* referred to while not loaded (pos_mark: the first place) */
	VGC_SUSPENDED = 16, /* a thread: suspended, not resumed */
	VGC_LOCK = 32,      /* used as a lock (counted once) */
};

struct vgc_ent {
	struct vgc_key key;
	uint64_t gen;
	uint64_t pos_create, pos_mark; /* positions: see vgc_pos */
	uint32_t state;
	uint32_t unused;
};

struct vgc_ents {
	struct vgc_table t;
};
void vgc_ents_init(struct vgc_ents *e);
static inline struct vgc_ent *vgc_ent_find(struct vgc_ents *e, const struct vgc_key *k)
{
	return vgc_table_find(&e->t, k);
}

/* A place in the trace: stream index and byte offset, in one word. */
static inline uint64_t vgc_pos(size_t stream, uint64_t offset)
{
	return (uint64_t)stream << 40 | (offset & ((1ull << 40) - 1));
}

/* ---- locks: per (thread, lock) reported acquires and waits ------------------------- */

struct vgc_lock_key {
	uint64_t id, gen;
	uint32_t scope, kind;
	uint32_t stream; /* the thread (its stream) */
	uint32_t zero;
};
struct vgc_lock {
	struct vgc_lock_key key;
	uint32_t held;    /* reported acquires not released (acquires nest) */
	uint32_t waiting; /* a reported wait_begin without its wait_end */
	uint64_t pos_wait;
};
enum vgc_lock_problem {
	VGC_LOCK_OK,
	VGC_LOCK_NOT_HELD,      /* release without a reported acquire */
	VGC_LOCK_ACQ_WAITING,   /* acquire while a reported wait is open */
	VGC_LOCK_WAITING_AGAIN, /* wait_begin while a reported wait is open */
	VGC_LOCK_NOT_WAITING,   /* wait_end without a reported wait_begin */
};
void vgc_locks_init(struct vgc_table *t);
/* Applies a lock op (ACQUIRE ... WAIT_END) of the thread `stream` on lock (k, gen) at
 * `pos`: an enum vgc_lock_problem (rule 5; *pos_wait: where the open wait began), or -1
 * if memory ran out. */
int vgc_lock_op(struct vgc_table *t, enum vgc_op op, uint32_t stream, const struct vgc_key *k,
                uint64_t gen, uint64_t pos, uint64_t *pos_wait);

/* ---- threads: per stream (one thread of one image) --------------------------------- */

struct vgc_thread {
	uint32_t depth;    /* reported invocations open */
	bool synth_next;   /* the stream's next event is synthesized */
	int64_t synth_at;  /* its valid time */
	const char *label; /* "image/stream-T-G" */
	uint32_t tid, gen; /* from the stream's first event */
};

/* ---- event types -------------------------------------------------------------------- */

enum vgc_builtin {
	VGC_B_NONE,
	VGC_B_PROCESS_BEGIN,
	VGC_B_PROCESS_END,
	VGC_B_PROCESS_NAME,
	VGC_B_THREAD_BEGIN,
	VGC_B_THREAD_NAME,
	VGC_B_THREAD_END,
	VGC_B_ENTITY_CREATE,
	VGC_B_ENTITY_LOAD,
	VGC_B_ENTITY_NAME,
	VGC_B_ENTITY_RECLAIM,
	VGC_B_SYNTH,
};

struct vgc_ref_field {
	int field;
	uint32_t kind;
};

struct vgc_type {
	const struct vgt_event_type *type;
	uint32_t image, process; /* scopes of its events' identities */
	enum vgc_op op;
	enum vgc_builtin builtin;
	int target; /* op's entity field (user types), or -1 */
	uint32_t target_kind;
	int depth;               /* ENTER: vg_depth's field, or -1 */
	int f_kind, f_id, f_gen; /* built-ins: where kind (or -1), id (pid/tid) and gen are */
	unsigned nrefs;
	struct vgc_ref_field *refs; /* every reference field (target included) */
};

struct vgc_types {
	struct vgc_type *all; /* by class_id (trace/source.h) */
	size_t n;
	uint32_t *proc; /* per image: its process number */
	size_t nimages;
	uint32_t nproc;
};
/* Learns every event type of the trace. Warnings go to the sink. -1: out of memory. */
int vgc_types_build(struct vgc_types *ts, struct vgt_trace *t, struct vgc_kinds *kinds,
                    const struct vgc_sink *sink);
/* Learns the types declared since (a followed trace grows, trace/follow.h). */
int vgc_types_grow(struct vgc_types *ts, struct vgt_trace *t, struct vgc_kinds *kinds,
                   const struct vgc_sink *sink);
void vgc_types_free(struct vgc_types *ts);
const struct vgc_type *vgc_type_of(const struct vgc_types *ts, const struct vgt_event_type *t);

/* ---- the checker ---------------------------------------------------------------------- */

struct vgc {
	struct vgt_trace *trace;
	const struct vgc_sink *sink;
	struct vgc_summary *sum;
	struct vgc_kinds kinds;
	struct vgc_types types;
	struct vgc_ents ents;
	struct vgc_table locks;
	struct vgc_thread *threads; /* per stream */
	size_t nthreads;
	struct vgt_names *names;
	int64_t first_ts;
	bool oom;
	/* The event being checked. */
	const struct vgt_event *ev;
	const struct vgc_type *ty;
	uint64_t pos;
	bool synth;
	int64_t synth_at;
	/* Descriptions of the entities named in the current message. */
	char desc[4][192];
	unsigned ndesc;
	struct vgc_entity_ref ents_involved[2];
	unsigned ninvolved;
	char pos_text[2][160];
	unsigned npos;
};

/* report.c: messages. */
/* "Buffer 0x55d0c0 'buf1' gen 0"; also records the entity as involved (two at most). */
const char *vgc_describe(struct vgc *c, const struct vgc_key *k, uint64_t gen);
/* "image/stream-T-G@OFFSET" of a packed position. */
const char *vgc_pos_text(struct vgc *c, uint64_t pos);
/* Sends one violation of the current event to the sink and counts it. */
void vgc_violate(struct vgc *c, int rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The last two components of a path (a stream file under its image). */
const char *vgc_path_label(const char *path);

#endif
