/* The sensor operator α (Snodgrass 1988, §8.3) and the transformations that make a query
 * enable as few sensors as it can (§8.6).
 *
 * Every tuple variable of a query that ranges over a primitive relation fed by sensors
 * becomes α[v](E): the sensors of v's relation, enabled on the entities that E names.
 * E starts as the entity source of the flag's entity kind (every entity: the query could
 * ask about any of them); the optimizer narrows it:
 *
 *   O2+O4  `v.A = "K"` where A holds the flag's entity: enable on the entity named K only
 *          (the subject applies the rule when the entity is created or renamed);
 *   O3     `v.A = u.B` and `u precede end of v`, v traced on its target A, u an event
 *          variable: enable v on each entity u names, from u's event on (a trigger in the
 *          subject: u's sensor enables the entity the moment it records) — and when the
 *          query never reads v's begin, only v's end sensor;
 *   O5     E ∩ entity source = E (no rule for the source is sent);
 *
 * A sensor declared `traced once` is Snodgrass's disable-traced variant (D:P, D:I, D:T):
 * it lowers its flag with each event it records, so each raise lets one event through;
 * an entity source or a name rule raises each entity once per lifetime (as a recording
 * with flags on does), so the first event of each lifetime is recorded. O2/O4 keep that;
 * O3 would raise once per event of u and is not applied to such sensors.
 *   O6     `C overlap v`, C over Clock[n], v a sampled interval placed on an entity: the
 *          clock moves into the sensor operator, α[v](E, Clock[n]): the subject samples
 *          only at Clock[n]'s instants, recording just the intervals that hold at one
 *          of them (as translated, a sampled sensor reports every change).
 *
 * Selections stay where the query put them: the answer is still computed by the same
 * plan (vgq_run), over relations that now hold only the packets the α operators asked
 * for. That is safe because every transformation keeps every tuple that can take part in
 * an answer (statements with aggregates, which are not monotone, are never narrowed).
 *
 * The same plan drives three things: the control commands sent to a live subject
 * (vga_commands), `vigil explain`'s sensor section (vga_print) and the filter that keeps
 * exactly the packets the plan asked for (vga_filter: on a live trace it drops what an
 * entity flag shared by several sensors let through; on a full recording it replays what
 * the plan would have recorded). */
#ifndef VIGIL_LIVE_ALPHA_H
#define VIGIL_LIVE_ALPHA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "query/engine.h"
#include "trace/trace.h"

struct vgl_model;

/* ---- sensor specifications: which event types feed which relation, flags where ---- */

enum vga_ekind { VGA_EVENT, VGA_BEGIN, VGA_END, VGA_STATE };
enum vga_place { VGA_ON_SENSOR, VGA_ON_PERFORMER, VGA_ON_INITIATOR, VGA_ON_TARGET };

struct vga_sensor {
	const char *event;    /* event type name: "mailbox.Waiting.end" */
	const char *relation; /* the primitive relation it feeds: "Waiting" */
	enum vga_ekind kind;
	enum vga_place place;
	bool sampled;
	bool samplable;         /* a sampled interval placed on an entity, plain ops: O6 applies */
	bool once;              /* traced once (D:P, D:I, D:T): each raise of the flag, one event */
	const char *flag_field; /* the field holding the flag's entity; NULL: on the sensor */
	const char *flag_kind;  /* that entity's kind */
	bool lock_op;           /* acquire, release, wait_begin or wait_end: feeds WaitFor */
};

struct vga_sensors {
	struct vga_sensor *v;
	size_t n;
	bool owns_events; /* the event names were made here (from a model) */
};

/* From the event types of a trace (user sensors only: vg.* are entity sources, always
 * on), or of a sensor description. Strings live as long as the trace or model. */
void vga_sensors_from_trace(const struct vgt_trace *t, struct vga_sensors *out);
void vga_sensors_from_model(const struct vgl_model *m, struct vga_sensors *out);
void vga_sensors_free(struct vga_sensors *s);

/* ---- the plan ---- */

enum vga_source {
	VGA_SRC_SENSOR,  /* the flag is on the sensor: no entity argument */
	VGA_SRC_ALL,     /* the entity source: every entity of the kind */
	VGA_SRC_NAMED,   /* σ name = K (entity source): the entity named K */
	VGA_SRC_TRIGGER, /* π B (α[u]): each entity u's field B names, from that event on */
};

#define VGA_MAX_TYPES 4

struct vga_alpha {
	const char *stmt;                                /* the retrieve's label */
	unsigned line;                                   /* of the retrieve */
	const char *var;                                 /* the tuple variable */
	const char *relation;                            /* its primitive relation */
	const struct vga_sensor *sensors[VGA_MAX_TYPES]; /* the event types it enables */
	size_t nsensors;
	const struct vga_sensor *spec; /* the relation's first sensor: placement, kind */
	enum vga_source source;
	const char *name;       /* VGA_SRC_NAMED */
	size_t trigger;         /* VGA_SRC_TRIGGER: index of u's α in the plan */
	const char *trigger_by; /* VGA_SRC_TRIGGER: u's field */
	bool end_only;          /* v's begin is never read: only its end sensor */
	uint64_t sample_every;  /* O6: sampled at the ticks of Clock[n]; 0: every change */
	const char *why;        /* transformations applied, e.g. "O2, O4"; NULL: none */
};

struct vga_plan {
	struct vga_alpha *alphas;
	size_t n;
	bool optimized;
	/* Relations that need no sensor: entity relations (always recorded), Clock, earlier
	 * results. */
};

/* Binds q (errors to `errors`, as vgq_run reports them) and plans the α operators of
 * every retrieve. NULL after errors. `optimize` false gives the plan as translated
 * (every α on its entity source). */
struct vga_plan *vga_plan_new(struct vgq_session *s, const struct tquel_query *q,
                              const struct vga_sensors *sensors, bool optimize, FILE *errors,
                              size_t *nerrors);
void vga_plan_free(struct vga_plan *p);

/* Appends the α of a whole relation as translated: every sensor of it, on the entity
 * source (what a display showing the relation needs; `label` and `line` name what asked
 * for it). false when no sensor feeds the relation (an entity relation, a result). */
bool vga_plan_add_relation(struct vga_plan *p, const struct vga_sensors *sensors,
                           const char *relation, const char *label, unsigned line);
/* Appends src's α to dst (triggers renumbered): the union of what both enable. dst then
 * points into what src's strings point into (src's session and query): keep them. */
void vga_plan_append(struct vga_plan *dst, const struct vga_plan *src);

/* The plan as text: one α per line with what it enables (vigil explain). */
void vga_print(const struct vga_plan *p, FILE *out);

/* The control commands (docs/control.md) that set the plan up in a subject, one line
 * each without newline, in an order that is safe to send before `go`. Returns the number
 * of lines; *lines is an array of malloc'd strings (vga_commands_free). */
size_t vga_commands(const struct vga_plan *p, char ***lines);
/* The same with the sampling requests of O6 (`sample`, docs/control.md): their clock
 * ticks every tick_ns * n from `origin`, a value of the subject's clock (vg_now()). */
size_t vga_commands_at(const struct vga_plan *p, int64_t tick_ns, uint64_t origin, char ***lines);
/* Does any α sample (O6)? Then its commands need vga_commands_at. */
bool vga_plan_samples(const struct vga_plan *p);
void vga_commands_free(char **lines, size_t n);

/* Does any α enable only the end of its interval relation? (Then relations are built
 * with ends that closed nothing kept: vgq_build_options.ends_without_begin.) */
bool vga_plan_end_only(const struct vga_plan *p);

/* ---- the filter: exactly the packets the plan asked for ---- */

struct vga_filter;
struct vga_filter *vga_filter_new(const struct vga_plan *p);
void vga_filter_free(struct vga_filter *f);
/* For vgq_build_options.keep: events must come in merged (time) order. vg.* events (the
 * entity sources) are always kept. */
bool vga_filter_keep(void *filter, const struct vgt_event *ev);

struct vga_counts {
	uint64_t kept;       /* user-sensor packets the plan asked for */
	uint64_t extraneous; /* user-sensor packets it did not ask for */
	uint64_t sources;    /* vg.* packets (entity sources, processes, threads) */
	uint64_t earlier;    /* user-sensor packets before vga_filter_since's time */
};
/* User-sensor packets whose raw clock value is below `clock` are not the plan's (an
 * attached monitor answers from its attach on; others may have asked for them): dropped
 * and counted as `earlier`. Entity sources are always kept. */
void vga_filter_since(struct vga_filter *f, uint64_t clock);
/* The clock of sampled α (O6): ticks every tick_ns * n from `origin` (absolute ns, as
 * event times are); INT64_MIN: from the first event the filter sees (a recording's
 * Clock starts at its first event). Set before the first event. */
void vga_filter_clock(struct vga_filter *f, int64_t tick_ns, int64_t origin);
/* For vgq_build_options.end_since: the begin time of the sampled interval whose end was
 * the last event kept, or INT64_MIN. */
int64_t vga_filter_end_since(void *filter, const struct vgt_event *ev);
struct vga_counts vga_filter_counts(const struct vga_filter *f);
/* Packets kept per α (the order of p->alphas); a packet several α want counts for each. */
const uint64_t *vga_filter_per_alpha(const struct vga_filter *f);

#endif
