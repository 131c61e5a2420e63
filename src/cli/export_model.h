/* What `vigil export` writes, built once from a trace and written by each format
 * (export_chrome.c, export_perfetto.c; docs/export.md):
 *
 *   processes and threads, named as in the trace (procname, the latest thread name);
 *   instants   every event of kind event (and foreign events, renames, unmatched ends),
 *              with its fields as arguments, on its thread;
 *   slices     interval relations: a begin and the end that closes it (the oldest open
 *              begin of the same image and relation whose fields equal the end's, as
 *              `vigil relations` pairs them); on the thread when both are on one thread
 *              and the slice nests there, else on the process's async track of the
 *              relation; state relations: one slice per state of an entity, from its
 *              change to the next (async); entity lifetimes: create to reclaim (async);
 *              a slice still open at the end of the trace ends at the last event;
 *   counters   per process, over time: events discarded (at the end of each stream);
 *              sampled sensors' numeric fields, and the count of a sampled interval
 *              relation's intervals open (export_counters.c);
 *   flows      matched messages of interaction networks (vigil net), send to receive.
 *
 * Every trace event stands in exactly one item: an instant (its `event`), or a slice
 * (its begin's `event`, its end's `end_event`); so what the formats write can be
 * counted against `vigil dump`. */
#ifndef VIGIL_CLI_EXPORT_MODEL_H
#define VIGIL_CLI_EXPORT_MODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

struct vgx_proc {
	int64_t pid;  /* as recorded; vgx_proc.xpid is what the formats use */
	int64_t xpid; /* unique in the export (a pid seen on two hosts gets another) */
	const char *host, *name;
	uint64_t gen;
	int64_t first_ts;
};

struct vgx_thread {
	uint32_t proc;
	int64_t tid;
	char *name; /* the latest name (malloc), or NULL */
};

enum vgx_item_kind { VGX_INSTANT, VGX_SLICE };
enum vgx_slice_place { VGX_ON_THREAD, VGX_ASYNC };

struct vgx_item {
	enum vgx_item_kind kind;
	enum vgx_slice_place place; /* slices */
	const char *cat;            /* "event", "interval", "state", "entity", "net" */
	char *name;                 /* malloc */
	uint32_t proc, thread;
	int64_t ts, end;       /* end == ts for instants */
	bool open;             /* a slice still open at the end of the trace */
	const char *event;     /* the trace event it stands for (its begin) */
	const char *end_event; /* a slice's end event, or NULL (open) */
	json_t *args;          /* owned: the fields, as arguments */
	uint64_t id;           /* unique per item, from 1 */
	/* flows: ids of messages that leave (sends) and arrive (receives) here */
	uint64_t *flows_out, *flows_in;
	size_t nflows_out, nflows_in;
};

/* A counter track: the series `key` of counter `name` in a process ("events_discarded"
 * / "discarded"; a sampled relation / a numeric field, or VGX_OPEN_KEY). */
struct vgx_ctrack {
	uint32_t proc;
	char *name, *key; /* malloc */
};

struct vgx_counter_value {
	bool is_double;
	int64_t i;
	double d;
};

/* A sample; the samples of one trace event are adjacent, with the same ts. */
struct vgx_counter {
	uint32_t track;
	int64_t ts;
	struct vgx_counter_value v;
};

struct vgx_model {
	struct vgx_proc *procs;
	size_t nprocs;
	struct vgx_thread *threads;
	size_t nthreads;
	struct vgx_item *items; /* in time order of their start */
	size_t nitems;
	struct vgx_ctrack *ctracks;
	size_t nctracks;
	struct vgx_counter *counters;
	size_t ncounters;
	uint64_t events, damage, discarded, flows;
	int64_t first, last;
	char *net_note; /* why flows are missing, or NULL */
};

/* Builds the model of the trace at paths (already opened as t). Flows come from
 * `vigil net`'s matching of the same paths when the trace holds vg.net events. NULL
 * on no memory. */
struct vgx_model *vgx_build(struct vgt_trace *t, const char *const *paths, size_t npaths);
void vgx_free(struct vgx_model *m);

/* Writers: 0, or -1 with one line in err. */
int vgx_write_chrome(const struct vgx_model *m, FILE *f, char *err, size_t errsize);
int vgx_write_perfetto(const struct vgx_model *m, FILE *f, char *err, size_t errsize);
bool vgx_perfetto_available(void);

#endif
