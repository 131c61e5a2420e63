/* vigil: the runtime face that subject programs include.
 *
 * A subject declares event types (sensors) with a schema, then records events through
 * the inline fast path below: a disabled sensor costs one load and one branch; an
 * enabled one writes its record straight into the calling thread's CTF packet.
 * Recording is on only when VIGIL_OUT names a trace directory (`vigil record` sets it).
 */
#ifndef VIGIL_VIGIL_H
#define VIGIL_VIGIL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VG_VERSION "0.1.0"

/* The ABI of the inline fast path below (the event header it writes, the writer state it
 * shares with libvigil). A change to either bumps it, and with it the name of the
 * thread-local symbol every inline begin references: a program or module compiled
 * against an older vigil.h then fails to load against this libvigil with the dynamic
 * linker's "undefined symbol: vg__tls" (ABI 0: 6-byte headers, listeners' commit)
 * instead of writing events that the trace's declaration misreads (docs/trace-format.md
 * "ABI"). Bump both together. */
#define VG_ABI 1
#define vg__tls vg__tls_abi1

/* What libvigil exports; everything else in it is hidden. */
#define VG_API __attribute__((visibility("default")))

#define VG_LIKELY(x) __builtin_expect(!!(x), 1)
#define VG_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Internal state the inline functions below read (docs/consistency.md). */
/* VG_CAT_* bits whose reporting is off process-wide (narrowed or suspended). */
extern VG_API _Atomic uint32_t vg__report_off;
/* Entities whose `rep` carries another epoch were reported in another image (before a
 * fork): this image may not refer to them. */
extern VG_API uint32_t vg__rep_epoch;
/* Non-zero while the runtime tracks entities, invocations and locks (recording, with
 * consistency on): sensors with an op then call the runtime even when they are off. */
extern VG_API int vg__tracking;
/* Non-zero while several listeners (VIGIL_LISTENERS) each get their own consistent
 * stream: vg__report_off is then all ones, and the runtime decides per listener. */
extern VG_API int vg__listening;

/* ---- schemas ------------------------------------------------------------------ */

enum vg_field_type {
	VG_INT8,
	VG_INT16,
	VG_INT32,
	VG_INT64,
	VG_UINT8,
	VG_UINT16,
	VG_UINT32,
	VG_UINT64,
	VG_DOUBLE,
	VG_STRING,
	VG_BYTES,
	VG_ENTITY, /* reference to an entity: (id, generation) */
};

/* Temporal kind: which relation the events feed and how. */
enum vg_kind {
	VG_KIND_EVENT,
	VG_KIND_BEGIN, /* interval begin */
	VG_KIND_END,   /* interval end */
	VG_KIND_STATE, /* state change: ends one interval tuple, starts the next */
	VG_KIND_CREATE,
	VG_KIND_RECLAIM,
};

/* Consistent partial reporting (docs/consistency.md). Every event type is an *entity
 * event* (it starts or ends an entity's existence, or renames it) or an *activity
 * event* (it refers to existing entities). `op` says which, and what the event does, so
 * that the runtime keeps whatever subset it reports consistent. */
enum vg_op {
	VG_OP_ACTIVITY = 0, /* activity: refers to live entities only (the default) */
	VG_OP_CREATE,       /* entity: starts the target's lifetime (identity = its address) */
	VG_OP_LOAD,         /* entity: defines the target (a type) between create and reclaim */
	VG_OP_RECLAIM,      /* entity: ends the target's lifetime */
	VG_OP_RENAME,       /* entity: names the target */
	VG_OP_ENTER,        /* entity: an invocation starts on the calling thread */
	VG_OP_LEAVE,        /* entity: the calling thread's innermost invocation ends */
	VG_OP_ACQUIRE,      /* activity: the calling thread acquires the target lock */
	VG_OP_RELEASE,      /* activity: ... releases it (nested acquires count) */
	VG_OP_WAIT_BEGIN,   /* activity: ... starts waiting for it */
	VG_OP_WAIT_END,     /* activity: ... stops waiting */
	VG_OP_SUSPEND,      /* activity: the target thread is suspended */
	VG_OP_RESUME,       /* activity: ... and resumed */
	VG_OP_REFERENCE,    /* activity: the initiator refers to the target */
	VG_OP_MOVE,         /* activity: the target moved */
	VG_OP_COUNT
};
/* Categories, as bits for vg_report_categories. */
#define VG_CAT_ACTIVITY 1u
#define VG_CAT_ENTITY 2u
static inline unsigned vg_op_category(enum vg_op op)
{
	return op >= VG_OP_CREATE && op <= VG_OP_LEAVE ? VG_CAT_ENTITY : VG_CAT_ACTIVITY;
}
/* The four kinds of events of consistent partial monitoring (docs/consistency.md
 * "Kinds"), also bits for vg_report_categories: a second axis beside entity/activity.
 * Lifetimes (create, reclaim, rename) have no kind: every kind's events need them. */
#define VG_CAT_TYPE 4u       /* load: a type's definition */
#define VG_CAT_OBJECT 8u     /* reference, move and plain activity events on objects */
#define VG_CAT_EXECUTION 16u /* enter, leave, suspend, resume */
#define VG_CAT_SYNC 32u      /* acquire, release, wait_begin, wait_end */
#define VG_CAT_KINDS (VG_CAT_TYPE | VG_CAT_OBJECT | VG_CAT_EXECUTION | VG_CAT_SYNC)
static inline unsigned vg_op_kind(enum vg_op op)
{
	switch (op) {
	case VG_OP_CREATE:
	case VG_OP_RECLAIM:
	case VG_OP_RENAME:
		return 0;
	case VG_OP_LOAD:
		return VG_CAT_TYPE;
	case VG_OP_ENTER:
	case VG_OP_LEAVE:
	case VG_OP_SUSPEND:
	case VG_OP_RESUME:
		return VG_CAT_EXECUTION;
	case VG_OP_ACQUIRE:
	case VG_OP_RELEASE:
	case VG_OP_WAIT_BEGIN:
	case VG_OP_WAIT_END:
		return VG_CAT_SYNC;
	default:
		return VG_CAT_OBJECT;
	}
}

/* Where a sensor's enable flag lives. */
enum vg_placement {
	VG_FLAG_SENSOR,
	VG_FLAG_PERFORMER,
	VG_FLAG_INITIATOR,
	VG_FLAG_TARGET,
};

typedef struct vg_field_desc {
	const char *name;
	enum vg_field_type type;
	const char *entity_kind; /* for VG_ENTITY: the kind referred to, e.g. "Mailbox" */
} vg_field_desc;

typedef struct vg_type_desc {
	const char *name;     /* event name, e.g. "mailbox.SendMessage" */
	const char *relation; /* relation fed; NULL: the name (begin/end pairs share one) */
	enum vg_kind kind;
	enum vg_placement placement;
	/* 0: traced (emitted when it happens), 1: sampled, 2: traced once (the sensor lowers
	 * its entity flag by one with each event it records: vg_once_claim) */
	int sampled;
	const vg_field_desc *fields;
	unsigned nfields;
	/* Field index of each role, or -1 (performer -1: the recording thread). */
	int performer, initiator, target;
	/* Category and effect (zero: a plain activity). The ops that change an entity need
	 * a `target` entity field; ENTER and LEAVE sensors are begin/end of an interval. */
	enum vg_op op;
} vg_type_desc;

/* A registered sensor. `enabled` is a counter: enable adds one, disable removes one,
 * the sensor records while it is positive. It is the first member so that the disabled
 * check is a single load. `react` is non-zero while a monitor's trigger rules watch the
 * sensor (docs/control.md): each recorded event then calls vg_sensor_fired.
 * `sample_period` is non-zero while a monitor samples the sensor (a sampled interval
 * sensor placed on an entity, docs/watch.md "Sampling"): the sampling instants are
 * sample_origin + k * sample_period on vg_now()'s clock, and only the intervals that
 * hold at one of them are recorded. */
typedef struct vg_sensor {
	_Atomic int32_t enabled;
	uint16_t id;
	uint16_t placement;
	const char *name;
	_Atomic uint32_t react;
	uint16_t op;     /* enum vg_op of its schema */
	uint16_t catbit; /* VG_CAT_ENTITY or VG_CAT_ACTIVITY, | its kind (vg_op_kind) */
	_Atomic uint64_t sample_period; /* ns; 0: not sampled (every interval recorded) */
	_Atomic uint64_t sample_origin; /* ns, set before the period */
	/* Non-zero while `vigil probes` has switched the sensor on (docs/control.md
	 * "Probes"): placed on an entity, it then records on every entity, whatever their
	 * flags say. Last, so that code built against an older header still fits. */
	_Atomic uint32_t every_entity;
} vg_sensor;

/* Registers an event type; safe from any thread at any time. Never returns NULL: on
 * error (bad schema, too many types) it reports one line on stderr and returns a sensor
 * that stays disabled. Registering the same name twice returns the first sensor. */
VG_API vg_sensor *vg_sensor_register(const vg_type_desc *desc);
VG_API void vg_sensor_enable(vg_sensor *s);
VG_API void vg_sensor_disable(vg_sensor *s);

/* ---- entities ----------------------------------------------------------------- */

/* An entity with a time-scoped identity. Embed it in the object it describes: its
 * `flag` is the enable flag of sensors placed on the performer, initiator or target.
 * Reclaim an entity before freeing its memory: a monitor (VIGIL_CONTROL) may change the
 * flag of any entity that is live, i.e. created and not yet reclaimed. */
typedef struct vg_entity {
	_Atomic int32_t flag;
	uint32_t gen;
	uint64_t id;
	const char *kind;
	/* What the consistent reporting knows of it (VG_REP_* bits, docs/consistency.md);
	 * the high half holds the listeners' masks (VG_REP_LISTENED). */
	_Atomic uint64_t rep;
	/* While a sampled interval sensor placed on this entity is sampled: when its open
	 * interval began (0: none known). The entity's state has one such interval. */
	uint64_t sampled_since;
} vg_entity;

#define VG_REP_TRACKED 1u    /* created while recording: the runtime follows it */
#define VG_REP_REPORTED 2u   /* its creation was reported: it may be referred to */
#define VG_REP_LOADED 4u     /* its load happened ... */
#define VG_REP_LOAD_REP 8u   /* ... and was reported */
#define VG_REP_SUSPENDED 16u /* a thread: its suspension was reported, not yet its resume */
#define VG_REP_LISTENED 32u  /* tracked per listener: bits 32.. say to whom (listen_track.c) */
#define VG_REP_EPOCH_SHIFT 8 /* the bits above: the image epoch the bits belong to */

typedef struct vg_ref {
	uint64_t id;
	uint32_t gen;
} vg_ref;

/* Starts an entity's lifetime: assigns the generation of (kind, raw_id), sets its flag
 * (on when recording), records vg.entity.create. `kind` must outlive the entity. */
VG_API void vg_entity_create(vg_entity *e, const char *kind, uint64_t raw_id, const char *name);
VG_API void vg_entity_rename(vg_entity *e, const char *name);
/* Ends its lifetime: records vg.entity.reclaim; the raw id may then be reused. */
VG_API void vg_entity_reclaim(vg_entity *e);
VG_API void vg_entity_enable(vg_entity *e);
VG_API void vg_entity_disable(vg_entity *e);
static inline vg_ref vg_ref_of(const vg_entity *e)
{
	vg_ref r = {e ? e->id : 0, e ? e->gen : 0};
	return r;
}

/* Defines a created entity (a type): its references are consistent only after its load.
 * Records vg.entity.load. */
VG_API void vg_entity_load(vg_entity *e);

/* May an activity event refer to `e` now? NULL (no entity) may always be referred to;
 * otherwise its creation must have been reported and, if it was loaded, its load. */
VG_API int vg__live_listen(const vg_entity *e);
static inline int vg_live(const vg_entity *e)
{
	if (!e)
		return 1;
	uint32_t r = (uint32_t)atomic_load_explicit(&e->rep, memory_order_relaxed);
	if (VG_LIKELY((r & VG_REP_REPORTED) &&
	              (r & (VG_REP_LOADED | VG_REP_LOAD_REP)) != VG_REP_LOADED &&
	              (r >> VG_REP_EPOCH_SHIFT) == vg__rep_epoch))
		return 1;
	/* Several listeners: may any refer to it? (it notes which, for the event to come) */
	return VG_UNLIKELY(r & VG_REP_LISTENED) ? vg__live_listen(e) : 0;
}

/* The calling thread as an entity (kind "thread", id = tid). */
VG_API vg_entity *vg_self(void);

/* Tells the runtime that `s` has just recorded an event whose entity fields (the fields
 * of type VG_ENTITY, in schema order) held `ents[0..n-1]` (NULL allowed). It applies the
 * monitor's trigger rules of `s` to those entities' flags. Call it only when `s->react`
 * is non-zero (generated sensors do); it takes no lock and allocates nothing. */
VG_API void vg_sensor_fired(vg_sensor *s, const vg_entity *const *ents, unsigned n);

/* ---- recording: the inline fast path -------------------------------------------- */

/* The event header (docs/trace-format.md, CTF 1.8's compact header as LTTng-UST writes
 * it): one little-endian 32-bit word, the sensor id in its low 5 bits and the low 27 bits
 * of the timestamp above them, when the id is below 31 and the event comes less than
 * 2^27 ns (134 ms) after the stream's previous one (a reader carries the high bits from
 * it: the CTF clock-value update). Otherwise the extended header: a byte holding 31, the
 * uint16 id and the whole uint64 timestamp. */
#define VG_COMPACT_ID_BITS 5
#define VG_COMPACT_TS_BITS 27
#define VG_COMPACT_IDS 31 /* ids 0..30 fit; 31 says "extended" */
#define VG_EVENT_HEADER_COMPACT 4
#define VG_EVENT_HEADER_EXTENDED 11
#define VG_EVENT_HEADER_MAX VG_EVENT_HEADER_EXTENDED

/* Per-thread writer state. Internal: only the inline functions below touch it. */
struct vg_packet_ctx;
struct vg_thread {
	uint8_t *pos;              /* next free byte of the current packet */
	uint8_t *end;              /* end of the current packet */
	uint8_t *base;             /* start of the current packet */
	struct vg_packet_ctx *ctx; /* its context, inside the mapping */
	uint64_t last_ts;
	uint32_t busy; /* an event is being written (a signal handler must not nest) */
	uint32_t state;
	uint32_t mute; /* this thread's reporting is off (suspended or filtered out) */
	uint32_t fan;  /* several listeners: to whom the event being decided goes (listen.c) */
};
extern VG_API __thread struct vg_thread vg__tls __attribute__((tls_model("initial-exec")));

struct vg_clock {
	int use_tsc;
	uint64_t base_tsc, base_ns;
	uint64_t mult; /* ns = base_ns + ((tsc - base_tsc) * mult) >> 32 */
};
extern VG_API struct vg_clock vg__clock;
VG_API uint64_t vg__clock_fallback(void);

/* Nanoseconds of the host's CLOCK_MONOTONIC, through the TSC when it is invariant. */
static inline uint64_t vg_now(void)
{
#if defined(__x86_64__)
	if (VG_LIKELY(vg__clock.use_tsc)) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		uint64_t d = (((uint64_t)hi << 32) | lo) - vg__clock.base_tsc;
		return vg__clock.base_ns +
		       (uint64_t)(((unsigned __int128)d * vg__clock.mult) >> 32);
	}
#endif
	return vg__clock_fallback();
}

/* Called with the thread's `busy` claimed; releases it when it returns NULL. */
VG_API uint8_t *vg__event_begin_slow(vg_sensor *s, uint32_t payload);
/* An event started while another of the same thread was being written: counted, NULL. */
VG_API uint8_t *vg__event_nested(vg_sensor *s);
/* Several listeners: vg_event_begin decided per listener (the event is copied to the
 * other listeners at the thread's next event or flush, never in the commit). Cold: else
 * the compiler shares the payload writer's entry with this call's result, one instruction
 * more per event on the path without listeners (60.1 against 61.1, bench/run.sh). */
VG_API uint8_t *vg__listen_event_begin(vg_sensor *s, uint32_t payload) __attribute__((cold));

/* Is the sensor on? For entity placement pass the entity holding the flag. */
static inline int vg_on(const vg_sensor *s)
{
	return VG_UNLIKELY(atomic_load_explicit(&s->enabled, memory_order_relaxed) > 0);
}
/* The entity's flag is up, or a probe switched the sensor on for every entity (only
 * read when the flag is down: an enabled sensor on a raised entity pays nothing more). */
static inline int vg_entity_up(const vg_sensor *s, const vg_entity *e)
{
	return atomic_load_explicit(&e->flag, memory_order_relaxed) > 0 ||
	       atomic_load_explicit(&s->every_entity, memory_order_relaxed);
}
static inline int vg_on_entity(const vg_sensor *s, const vg_entity *e)
{
	return vg_on(s) && e && vg_entity_up(s, e);
}

/* Writes the header of an event of sensor `id` at p, `ts` coming `ts - prev` after the
 * stream's previous event (or packet start); returns where its payload goes. Internal. */
static inline uint8_t *vg__header_put(uint8_t *p, uint16_t id, uint64_t ts, uint64_t prev)
{
	if (VG_LIKELY((id < VG_COMPACT_IDS) & !((ts - prev) >> VG_COMPACT_TS_BITS))) {
		uint32_t w = (uint32_t)id | (uint32_t)ts << VG_COMPACT_ID_BITS;
		memcpy(p, &w, 4);
		return p + VG_EVENT_HEADER_COMPACT;
	}
	p[0] = VG_COMPACT_IDS;
	memcpy(p + 1, &id, 2);
	memcpy(p + 3, &ts, 8);
	return p + VG_EVENT_HEADER_EXTENDED;
}

/* Writes the event header at the thread's position (room was checked); internal. */
static inline uint8_t *vg__event_header(struct vg_thread *t, const vg_sensor *s, uint64_t ts)
{
	uint64_t prev = t->last_ts;
	t->last_ts = ts;
	return vg__header_put(t->pos, s->id, ts, prev);
}

/* Starts an event of `payload` bytes (an upper bound is fine): returns where to write
 * the payload, or NULL if it is not to be reported (this thread's reporting or the
 * sensor's category is off) or cannot be recorded (then it was counted as discarded).
 * Must be followed by vg_event_commit(p_end) with the end of what was written.
 *
 * `busy` is claimed before the thread's buffer is looked at: a signal handler that
 * interrupts this thread afterwards and records an event finds it set and drops (and
 * counts) its event instead of writing into the middle of ours; one that interrupts
 * before finishes its whole event first. */
static inline uint8_t *vg__event_start_claimed(struct vg_thread *t, vg_sensor *s, uint32_t payload)
{
	uint64_t ts = vg_now();
	/* No room, or a clock read earlier than the last event's (another cpu's TSC): the
	 * slow path switches packets or keeps time from going backwards in the stream. */
	if (VG_UNLIKELY(((size_t)(t->end - t->pos) < VG_EVENT_HEADER_MAX + payload) |
	                ((int64_t)(ts - t->last_ts) < 0)))
		return vg__event_begin_slow(s, payload);
	return vg__event_header(t, s, ts);
}
static inline uint8_t *vg__event_start(vg_sensor *s, uint32_t payload)
{
	struct vg_thread *t = &vg__tls;
	if (VG_UNLIKELY(t->busy))
		return vg__event_nested(s);
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	return vg__event_start_claimed(t, s, payload);
}

/* Is reporting off for `s` on this thread (thread muted, or its category narrowed away or
 * suspended process-wide)? */
static inline int vg__reporting_off(const vg_sensor *s)
{
	return VG_UNLIKELY(
	    vg__tls.mute |
	    (atomic_load_explicit(&vg__report_off, memory_order_relaxed) & s->catbit));
}

static inline uint8_t *vg_event_begin(vg_sensor *s, uint32_t payload)
{
	if (vg__reporting_off(s))
		return VG_UNLIKELY(vg__listening) ? vg__listen_event_begin(s, payload) : NULL;
	return vg__event_start(s, payload);
}

struct vg_packet_ctx {
	uint64_t timestamp_begin, timestamp_end, content_size, packet_size, packet_seq_num,
	    events_discarded;
	uint32_t tid, thread_gen;
};

/* Ends the event started last: its bytes up to `end` join the packet. The same few stores
 * with or without several listeners: their copies are made at the thread's next event
 * (listen.c), so the commit pays nothing for them. */
static inline void vg__event_commit_main(struct vg_thread *t, uint8_t *end)
{
	t->pos = end;
	/* The event's bytes must be in memory before the packet claims them. */
	atomic_signal_fence(memory_order_release);
	t->ctx->timestamp_end = t->last_ts;
	t->ctx->content_size = (uint64_t)(end - t->base) * 8;
	atomic_signal_fence(memory_order_release);
	t->busy = 0;
}

static inline void vg_event_commit(uint8_t *end)
{
	vg__event_commit_main(&vg__tls, end);
}

/* The timestamp of the event started last on this thread (after vg_event_begin). */
static inline uint64_t vg_event_time(void)
{
	return vg__tls.last_ts;
}

/* Gives up an event started with vg_event_begin: nothing of it is recorded. The next
 * header counts its time from the last event written (the packet's timestamp_end), as
 * readers do. */
static inline void vg_event_abort(void)
{
	vg__tls.last_ts = vg__tls.ctx->timestamp_end;
	atomic_signal_fence(memory_order_release);
	vg__tls.fan = 0;
	vg__tls.busy = 0;
}

/* A sensor traced once takes one raise of its entity's flag for each event it records
 * (Snodgrass's "disable traced"): 1 if a raise was there to take. */
static inline int vg_once_claim(const vg_entity *e)
{
	vg_entity *m = (vg_entity *)e; /* the flag is the monitor's to change */
	int32_t f = atomic_load_explicit(&m->flag, memory_order_relaxed);
	while (f > 0)
		if (atomic_compare_exchange_weak_explicit(&m->flag, &f, f - 1, memory_order_relaxed,
		                                          memory_order_relaxed))
			return 1;
	return 0;
}
/* The same for sensor `s`: a sensor `vigil probes` switched on records every event
 * and takes no raise (the raises are a monitor's, for the events its query needs). */
static inline int vg_once_take(const vg_sensor *s, const vg_entity *e)
{
	return atomic_load_explicit(&s->every_entity, memory_order_relaxed) || vg_once_claim(e);
}

/* ---- sampling (docs/watch.md "Sampling") ---- */

/* Is a monitor sampling the sensor? */
static inline int vg_sampling(const vg_sensor *s)
{
	return VG_UNLIKELY(atomic_load_explicit(&s->sample_period, memory_order_acquire) != 0);
}

/* Is there a sampling instant of s in [since, until)? */
static inline int vg_sample_hit(const vg_sensor *s, uint64_t since, uint64_t until)
{
	uint64_t period = atomic_load_explicit(&s->sample_period, memory_order_acquire);
	uint64_t origin = atomic_load_explicit(&s->sample_origin, memory_order_relaxed);
	if (!period || until <= origin)
		return 0;
	uint64_t first = origin;
	if (since > origin)
		first = origin + (since - origin + period - 1) / period * period;
	return first >= since && first < until;
}

/* Field writers: each returns the position after the field. */
static inline uint8_t *vg_put_u8(uint8_t *p, uint8_t v)
{
	*p = v;
	return p + 1;
}
static inline uint8_t *vg_put_u16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
	return p + 2;
}
static inline uint8_t *vg_put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return p + 4;
}
static inline uint8_t *vg_put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
	return p + 8;
}
static inline uint8_t *vg_put_f64(uint8_t *p, double v)
{
	memcpy(p, &v, 8);
	return p + 8;
}
static inline uint8_t *vg_put_ref(uint8_t *p, const vg_entity *e)
{
	vg_ref r = vg_ref_of(e);
	memcpy(p, &r.id, 8);
	memcpy(p + 8, &r.gen, 4);
	return p + 12;
}
/* Strings are truncated to `max` bytes (reserve max + 1 in vg_event_begin). */
static inline uint8_t *vg_put_str(uint8_t *p, const char *s, uint32_t max)
{
	size_t n = 0; /* strnlen is POSIX, not C11: this header must compile under -std=c11 */
	while (s && n < max && s[n])
		n++;
	memcpy(p, s ? s : "", n);
	p[n] = 0;
	return p + n + 1;
}
static inline uint8_t *vg_put_bytes(uint8_t *p, const void *b, uint32_t n)
{
	p = vg_put_u32(p, n);
	if (n)
		memcpy(p, b, n);
	return p + n;
}

/* ---- sensors with an op: tracked even while they are not reported ---------------- */

/* A sensor whose op is not VG_OP_ACTIVITY (or VG_OP_REFERENCE / VG_OP_MOVE, which are
 * plain activities) must go through these whenever vg_tracking(s) is true, on or off:
 * they keep the thread's invocation stack, lock states and entity lifetimes, and decide
 * whether the event is reported so that the rules of docs/consistency.md hold. */
static inline int vg_tracking(const vg_sensor *s)
{
	return VG_UNLIKELY(vg__tracking |
	                   (atomic_load_explicit(&s->enabled, memory_order_relaxed) > 0));
}

/* ENTER: pushes a frame on the calling thread's invocation stack and returns where to
 * write the payload (at most `payload` bytes) into it; NULL: not tracked (stack full,
 * counted). Then vg_enter_commit(s, end) decides whether to report it. */
VG_API uint8_t *vg_enter_begin(vg_sensor *s, uint32_t payload);
VG_API void vg_enter_commit(vg_sensor *s, uint8_t *end);
/* LEAVE: pops the innermost frame; returns where to write the payload into the thread's
 * packet when its enter was reported (then vg_event_commit), else NULL. */
VG_API uint8_t *vg_leave_begin(vg_sensor *s, uint32_t payload);
/* Every other op (CREATE ... RESUME) on `target` (a lock, a thread, an object): tracks
 * it and returns where to write the payload when the event is reported (then
 * vg_event_commit), else NULL. For CREATE the target gets its identity here: kind from
 * the schema's target field, raw id = its address. */
VG_API uint8_t *vg_op_begin(vg_sensor *s, vg_entity *target, uint32_t payload);

/* ---- partial reporting -------------------------------------------------------------- */

/* Reporting can be narrowed and suspended at any moment; the runtime keeps tracking
 * meanwhile and reports what it must (a reclaim, a release, the enclosing invocations)
 * so that the reported stream stays consistent. Also settable from the environment:
 * VIGIL_REPORT, VIGIL_REPORT_THREADS, VIGIL_REPORT_SUSPENDED (docs/consistency.md). */
VG_API void vg_report_suspend(void); /* process-wide; suspends nest */
VG_API void vg_report_resume(void);
VG_API void vg_report_thread_suspend(void); /* the calling thread; nest */
VG_API void vg_report_thread_resume(void);
/* Which categories are reported (VG_CAT_ENTITY | VG_CAT_ACTIVITY; the default), and
 * which kinds (VG_CAT_TYPE, _OBJECT, _EXECUTION, _SYNC): an event is reported when both
 * its category and its kind are. A mask naming no kind means every kind; one naming
 * kinds but no category, both categories; 0 reports nothing. */
VG_API void vg_report_categories(unsigned mask);
/* Threads reported, by name: comma-separated globs, "-glob" excludes, the last match
 * decides, NULL or "" = all. Applies to every thread, now and when it is renamed. */
VG_API int vg_report_threads(const char *globs);
/* Sensors reported, by name: enables (on = 1) or disables the sensors matching the globs,
 * now and when they are registered later. Returns the number of sensors changed. */
VG_API long vg_report_sensors(const char *globs, int on);

/* ---- the generic (slower) path ---------------------------------------------------- */

typedef union vg_value {
	int64_t i;
	uint64_t u;
	double d;
	const char *s;
	struct {
		const void *data;
		uint32_t len;
	} b;
	const vg_entity *e;
} vg_value;

/* Records one event with one value per field of the sensor's schema. Returns 0 if
 * recorded, -1 if the sensor is off, the event is not reported or was discarded
 * (counted). A sensor with an op is tracked here whether it is on or not: call vg_emit
 * for it unconditionally (an ENTER/LEAVE/CREATE... skipped while off would break the
 * consistency of what is reported later). */
VG_API int vg_emit(vg_sensor *s, const vg_value *values);

/* ---- runtime control and statistics ------------------------------------------- */

/* 1 while a trace is being written (VIGIL_OUT was set and usable). */
VG_API int vg_recording(void);
/* Path of this process image's trace directory, or NULL: not recording, or the directory
 * is not where the trace stays (VIGIL_TO: a spool the collector empties; under `vigil
 * watch` without --keep: the monitor's working copy, removed once it has answered). */
VG_API const char *vg_trace_dir(void);
/* Events this process could not record (size cap, full disk, nested in a signal). */
VG_API uint64_t vg_events_discarded(void);
/* Closes the calling thread's stream now (it reopens on its next event). */
VG_API void vg_thread_flush(void);

#ifdef __cplusplus
}
#endif
#endif
