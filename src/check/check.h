/* vigil_check: verifies the sequencing rules of consistent partial reporting
 * (docs/consistency.md) on a trace: the reported stream of all images, merged by time.
 *
 * The walk keeps, per identity (kind, raw id, generation, scoped to its process image or,
 * for threads, to their process), whether it is live; per thread its reported invocation
 * depth; per (thread, lock) the reported acquires and waits; per thread whether it is
 * suspended. Each violation goes to a sink as soon as it is found; all of them are
 * counted. Memory grows with the identities of the trace, never per event. */
#ifndef VIGIL_CHECK_CHECK_H
#define VIGIL_CHECK_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

#define VGC_RULES 5

/* An entity a violation involves. */
struct vgc_entity_ref {
	const char *kind; /* "process", "thread", or a user kind as first seen */
	uint64_t id, gen;
	const char *name; /* from the naming events, or NULL */
};

struct vgc_violation {
	int rule; /* 1..VGC_RULES */
	const struct vgt_event *event;
	const char *file;    /* the stream file relative to the trace ("image/stream-T-G") */
	double t;            /* seconds since the first event of the trace */
	bool synthesized;    /* the event was marked by vg.report.synth */
	int64_t valid_ts;    /* its valid time (`at` when synthesized, else the event's time) */
	const char *message; /* without position and rule; names the entities involved */
	unsigned nentities;
	struct vgc_entity_ref entities[2];
};

struct vgc_summary {
	uint64_t events;      /* every event read, markers included */
	uint64_t entities;    /* lifetimes started (creates, built-in or not) */
	uint64_t invocations; /* enters */
	uint64_t locks;       /* distinct locks acquired or waited for */
	uint64_t synthesized; /* events marked by vg.report.synth */
	uint64_t violations;
	uint64_t per_rule[VGC_RULES + 1]; /* [1..5] */
	uint64_t discarded;               /* events the writers could not record */
	uint64_t damage;                  /* damaged places found by the reader */
	uint32_t max_depth;               /* deepest reported invocation stack */
};

/* A well-formed lock operation of the reported stream (rule 5 held), in stream order: what
 * the wait-for graph (waitfor.h) is built from. */
struct vgc;
enum vgc_lock_kind { VGC_LK_ACQUIRE, VGC_LK_RELEASE, VGC_LK_WAIT_BEGIN, VGC_LK_WAIT_END };
struct vgc_lock_event {
	enum vgc_lock_kind op;
	uint64_t thread, thread_gen; /* the thread (tid) and its generation */
	uint32_t thread_scope;       /* its process image */
	uint64_t lock, lock_gen;     /* the lock entity's id and generation */
	uint32_t lock_scope, lock_kind;
	uint32_t image;      /* the image (vgt_image_at index) of the event */
	int64_t ts;          /* its valid time (absolute ns) */
	int64_t t_ns;        /* ts - the first event's time */
	double t;            /* seconds since the first event of the trace */
	struct vgc *checker; /* for vgc_lock_event_texts */
};

/* What a lock event's thread and lock are called: "thread 42 'w' gen 7", "Lock 0x55..
 * 'm1' gen 0", their names (or NULL) and the lock's kind as the trace first spelled it.
 * A lookup and a format: for the first sight of a thread or lock, not every event. Valid
 * until the next event. */
struct vgc_lock_texts {
	const char *thread_text, *lock_text, *thread_name, *lock_name, *lock_kind;
};
void vgc_lock_event_texts(const struct vgc_lock_event *e, struct vgc_lock_texts *out);

struct vgc_sink {
	void *ctx;
	/* Each well-formed lock operation. May be NULL. */
	void (*lock)(void *ctx, const struct vgc_lock_event *e);
	/* Each violation, in stream order; the pointers are valid during the call only. */
	void (*violation)(void *ctx, const struct vgc_violation *v);
	/* Something about the trace the checker could not use (an unknown op, an enter
	 * without vg_depth...): one line, once per event type. May be NULL. */
	void (*warning)(void *ctx, const char *line);
};

/* Walks the whole trace (every stream read to its end). Returns 0, or -1 with one line in
 * `err` if memory ran out. */
int vgc_check(struct vgt_trace *t, const struct vgc_sink *sink, struct vgc_summary *sum, char *err,
              size_t errsize);

/* The same walk, fed one event at a time (in merged order) by a caller that already reads
 * the trace. first_ts: the time `t` counts from (INT64_MIN: the first event fed). NULL
 * with one line in err if memory ran out. vgc_walk_event returns false once memory ran
 * out (the walk is then useless); vgc_walk_end frees the walker and returns as vgc_check. */
struct vgc_walk;
struct vgc_walk *vgc_walk_new(struct vgt_trace *t, const struct vgc_sink *sink,
                              struct vgc_summary *sum, int64_t first_ts, char *err, size_t errsize);
bool vgc_walk_event(struct vgc_walk *w, const struct vgt_event *ev);
int vgc_walk_end(struct vgc_walk *w, char *err, size_t errsize);

#endif
