/* What `vigil model` reads: model files, recordings holding the runtime's raw log models
 * (`<dir>/logmodel-<image>-<n>.vgm`), and CTF traces whose events become a model
 * (from_trace.c). */
#ifndef VIGIL_MODEL_INPUTS_H
#define VIGIL_MODEL_INPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "model/symbolize.h"
#include "trace/trace.h"

struct vgm_input_stats {
	size_t files;     /* model files read */
	size_t traces;    /* CTF traces turned into models */
	uint64_t damaged; /* damaged places found in those traces */
	size_t stale;     /* older snapshots of a process skipped */
	/* A recording read for its log models whose trace also declares sensors of its own
	 * (not vg.*: USDT probes, a program's sensors), which those models do not hold: how
	 * many, one of them, and the recording (the first such; `vigil model` hints at
	 * --from-trace, docs/model.md). */
	size_t unmodelled_sensors;
	char unmodelled_example[128], unmodelled_path[256];
};

/* Adds one input to m, raw sites symbolized through sym. A directory gives its log models
 * (the latest snapshot of each process image) or, when it has none or `from_trace`, the
 * model of its trace's events. Returns 0, or -1 with one line in err. */
int vgm_load_input(struct vgm_model *m, const char *path, bool from_trace,
                   struct vgm_symbolizer *sym, struct vgm_input_stats *st, char *err,
                   size_t errsize);

/* The model of a CTF trace: each event's name is an event type (site `sensor:NAME`,
 * format NAME), transitions are consecutive events of one stream (thread), their times
 * the differences of the timestamps. *damaged counts the damaged places read past. */
int vgm_from_trace(struct vgm_model *m, const char *path, uint64_t *damaged, char *err,
                   size_t errsize);

/* The walk vgm_from_trace makes, over a trace already open (read from its start): each
 * event in time order with the previous event of its thread (`prev` its type, NULL for
 * a thread's first event; a thread goes on across its process's execs). A non-zero
 * return of `step` stops the walk: -1 then. The LogEvent and Transition relations
 * (src/derived) are this walk too. */
typedef int (*vgm_step_fn)(void *ctx, const struct vgt_event *ev, const struct vgt_event_type *prev,
                           int64_t prev_ts);
int vgm_trace_steps(struct vgt_trace *t, vgm_step_fn step, void *ctx);

#endif
