/* vigil ui: a local web application over the engine the CLI uses (docs/ui.md).
 *
 *   app.c       the trace, its relations (relations/relation.h) and the timeline, opened once
 *   timeline.c  rows (threads of processes, keys of interval/state/entity relations) and
 *               their level-of-detail answers: single items, or per-pixel buckets
 *   api.c       the JSON API routes (/api/...): relations, rows, events, one event, tuple
 *   api_query.c query and explain (same text, same messages as vigil query/explain),
 *               results as JSON, CSV or an SQLite file
 *   http.c      the libmicrohttpd server: routing, static files, refusals, Ctrl-C
 *   export.c    vigil ui --export DIR: the page and its data, opened from disk
 *   live.c      vigil ui --watch: vigil watch as a child, its answers while it runs
 *   display.c   vigil ui --display D.vgd: the display loaded once, its scenes and changes
 *   models.c    vigil ui BASE.vgm OTHER.vgm: the model workbench (vigil diff's reports,
 *               both transition graphs, sketches as CDFs, vigil cdf's path CDFs)
 *   models_timeline.c  the workbench's runs given as traces as timelines too, where a
 *               transition or event first happens in each
 *   nets.c      vigil ui NETS_DIR (or --nets TRACE...): the network browser; its traces
 *               as the timeline too
 *
 * Everything runs in the server's one thread (MHD internal polling): the database and the
 * last query's results are never touched by two requests at once (live.c's reader thread
 * only appends vigil watch's output to a buffer under its mutex). */
#ifndef VIGIL_UI_UI_H
#define VIGIL_UI_UI_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "query/engine.h"
#include "relations/relation.h"
#include "trace/trace.h"

struct vgd_display;
struct vgu_models;
struct vgu_nets;

/* One timeline row: items sorted by `from` (events: from = to). */
struct vgu_row {
	char *group; /* "host / proc[pid]" for threads; "relation NAME" for relations */
	char *label; /* thread name [tid], or the key of the relation row */
	char *kind;  /* "thread", "interval", "state", "entity", "result" */
	size_t n, cap;
	int64_t *from;  /* the item's start (events: its time) */
	int64_t *to;    /* NULL for event rows */
	int64_t *maxto; /* prefix maximum of to (interval rows): what covers an instant */
	uint64_t *ref;  /* event rows: index into the timeline's events; others: tuple index */
	uint8_t *cls;   /* NULL, or per item a colour class (0..9): the value of the relation's
	                 * other attribute (ProcessState's state, RunningOn's processor) */
	const struct vgq_relation *rel; /* relation rows: the relation */
	/* event rows: the process image and thread the row is */
	const struct vgt_image *image;
	uint32_t tid, thread_gen;
};

/* One event of the trace, as far as the timeline needs it to find it again. */
struct vgu_event {
	uint32_t stream;
	uint32_t type; /* index into vgu_timeline.types */
	uint64_t offset;
};

struct vgu_timeline {
	size_t nrows, caprows;
	struct vgu_row *rows;
	size_t nbase; /* rows of the trace; rows past it are the last query's results */
	size_t nevents, capevents;
	struct vgu_event *events;
	size_t ntypes, captypes;
	const struct vgt_event_type **types;
	uint64_t *type_counts;
	size_t *row_of, nrow_of; /* while building: stream index -> row */
};

struct vgu_app {
	const char *const *paths;
	size_t npaths;
	struct vgt_trace *trace;
	struct vgq_database *db;
	struct vgt_names *names;
	struct vgu_timeline tl;
	int64_t tick_ns;
	/* the last query's session (its results live in it) */
	struct vgq_session *session;
	struct tquel_query *query;
	size_t nresults;
	const struct vgq_relation **results;
	struct vgu_live *live; /* vigil ui --watch: the subject's run (live.c) */
	/* build interval tuples [end, end] from ends that close nothing: the trace of a
	 * vigil watch run records only the ends a plan asks for (docs/watch.md) */
	bool ends_without_begin;
	const char *assets;            /* folder of the built page */
	const char *display;           /* --display D.vgd, or NULL */
	bool exporting;                /* --export: a display with errors stops it */
	struct vgd_display *vgd;       /* the display loaded (display.c), or NULL */
	char *display_errors;          /* its errors as printed on stderr when it did not load */
	struct vgu_snapshot *snapshot; /* live: the display over the trace so far (display.c) */
	/* the analysis views (analysis.html): instead of a trace, two models or networks */
	struct vgu_models *models;
	struct vgu_nets *nets;
	/* the workbench's runs given as traces, each opened as a timeline (models_timeline.c) */
	struct vgu_app *run_timeline[2];
};

/* Opens the traces and builds everything; -1 after printing one line on stderr. */
int vgu_app_open(struct vgu_app *a, const char *const *paths, size_t npaths);
void vgu_app_close(struct vgu_app *a);
/* Drops the last query's results and their rows. */
void vgu_app_forget_results(struct vgu_app *a);

/* Timeline: each event fed while the database is built (a vgq_build_options.keep that
 * keeps everything), then the rows of the relations added. */
bool vgu_timeline_feed(void *app, const struct vgt_event *ev);
int vgu_timeline_build(struct vgu_app *a);
void vgu_timeline_free(struct vgu_timeline *tl);
/* Rows for relation r (one per key; appended). */
void vgu_timeline_add_relation(struct vgu_timeline *tl, const struct vgq_relation *r,
                               const char *group, const char *kind);
void vgu_timeline_truncate(struct vgu_timeline *tl, size_t nrows);
/* {"rows":[...]} as the page reads them. */
json_t *vgu_rows_json(const struct vgu_app *a);
/* Items of every row in [t0, t1] at `px` buckets: single items when a row has at most
 * `px` of them in the window, else per-bucket count, min and max (docs/ui.md). */
char *vgu_window_json(const struct vgu_app *a, int64_t t0, int64_t t1, unsigned px,
                      size_t first_row, size_t nrows, size_t *len);

/* A JSON value of a relation's attribute (as vigil query --format json writes it). */
json_t *vgu_value_json(const struct vgq_relation *r, size_t attr, size_t tuple);
/* {"relation","kind","attrs":[{name,type}]} of r. */
json_t *vgu_relation_head(const struct vgq_relation *r);
/* One tuple: {"relation","kind","from","to"|"at","open","values":{...}} */
json_t *vgu_tuple_json(const struct vgq_relation *r, size_t tuple, int64_t origin);
/* One event found again in its stream: every field, time, stream and offset. NULL if it
 * is no longer there. */
json_t *vgu_event_json(const struct vgu_app *a, size_t event_index);
/* The trace's damage, one line each. */
json_t *vgu_damage_json(const struct vgu_app *a);

/* API: status code and a JSON body (or a raw body for downloads). */
struct vgu_reply {
	unsigned status;
	char *body;
	size_t len;
	const char *type;        /* content type */
	const char *disposition; /* Content-Disposition, or NULL */
};
/* Looks up the request's query arguments. */
typedef const char *(*vgu_arg_fn)(void *ctx, const char *key);
void vgu_api(struct vgu_app *a, const char *path, vgu_arg_fn arg, void *ctx, struct vgu_reply *r);
void vgu_reply_json(struct vgu_reply *r, unsigned status, json_t *body);
void vgu_reply_error(struct vgu_reply *r, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Query and explain. */
void vgu_api_query(struct vgu_app *a, const char *text, const char *format, struct vgu_reply *r);
void vgu_api_explain(struct vgu_app *a, const char *text, struct vgu_reply *r);
/* The query's statements parsed; on syntax errors NULL and *errors the error list. */
struct tquel_query *vgu_parse(const char *text, json_t **errors);
/* Error reports of the engine (SOURCE:LINE:COL: error: MSG + line + caret) as a list. */
json_t *vgu_errors_from_text(const char *text);

/* Live (vigil ui --watch): vigil watch run as a child with the query and sensors, its
 * answers served by /api/live while it runs, its kept trace opened when it has ended.
 * SIGINT and SIGTERM must be blocked by the caller (the reader thread must not take
 * them). */
int vgu_live_start(struct vgu_app *a, const char *sensors, const char *qfile, const char *qtext,
                   const char *every, const char *display, char **command);
/* The subject has ended and its trace could not be opened. */
bool vgu_live_failed(const struct vgu_app *a);
/* The folder vigil watch records the subject's trace into. */
const char *vgu_live_dir(const struct vgu_app *a);
void vgu_live_stop(struct vgu_app *a);
bool vgu_live_waiting(const struct vgu_app *a);
void vgu_api_live(struct vgu_app *a, size_t from, struct vgu_reply *r);

/* Display (--display): loaded after vgu_app_open; when it does not load, its errors are
 * printed on stderr and kept for the page (the timeline is served all the same). */
void vgu_display_open(struct vgu_app *a);
void vgu_display_close(struct vgu_app *a);
/* Live: checks a->display against the sensor description before anything runs; false
 * (its errors printed and kept for the page) when vigil watch should not be given it. */
bool vgu_display_check_model(struct vgu_app *a, const char *sensors);
/* /api/display?at=T (ns since the first event) and
 * /api/display/changes?from=&to=&limit=&take=first|last (a window of the changes). */
void vgu_api_display(struct vgu_app *a, const char *at, struct vgu_reply *r);
void vgu_api_display_changes(struct vgu_app *a, vgu_arg_fn arg, void *ctx, struct vgu_reply *r);
#define VGU_CHANGES_LIMIT 100000 /* changes answered when no limit is given */
#define VGU_CHANGES_MAX 1000000

/* The model workbench (models.c): two inputs of `vigil model` (model files, recordings,
 * traces), each made into one model as vigil model would. -1 after one line on stderr. */
int vgu_models_open(struct vgu_app *a, const char *base, const char *other);
void vgu_models_close(struct vgu_app *a);
/* /api/model/... */
void vgu_api_models(struct vgu_app *a, const char *path, vgu_arg_fn arg, void *ctx,
                    struct vgu_reply *r);

/* The workbench's runs given as traces, opened as timelines too (models_timeline.c): the
 * timeline of ?run=R (or NULL), and where run R's trace first has an event of from_site
 * followed by one of to_site in a thread (to_site NULL: the event alone). */
void vgu_models_open_timelines(struct vgu_app *a, const char *const path[2]);
void vgu_models_close_timelines(struct vgu_app *a);
struct vgu_app *vgu_models_timeline(struct vgu_app *a, vgu_arg_fn arg, void *ctx);
void vgu_models_where(struct vgu_app *a, int run, const char *from_site, const char *to_site,
                      struct vgu_reply *r);

/* The network browser (nets.c): a folder written by `vigil net split`, or traces split
 * here as vigil net split does. -1 after one line on stderr. */
int vgu_nets_open_dir(struct vgu_app *a, const char *dir);
int vgu_nets_open_traces(struct vgu_app *a, const char *const *paths, size_t n);
void vgu_nets_close(struct vgu_app *a);
/* The traces as the timeline too (vgu_app_open): paths, or NULL for index.json's traces
 * found from here. No timeline is no error (the page says why); -1: out of memory. */
int vgu_nets_open_timeline(struct vgu_app *a, const char *const *paths, size_t n);
/* The network browser's own routes; the others are the timeline's when it is open. */
bool vgu_nets_route(const char *path);
/* /api/nets, /api/net?n= */
void vgu_api_nets(struct vgu_app *a, const char *path, vgu_arg_fn arg, void *ctx,
                  struct vgu_reply *r);

/* An integer argument (api.c); false with a 400 reply when present but not a number. */
bool vgu_int_arg(vgu_arg_fn arg, void *ctx, const char *key, int64_t *v, bool required,
                 struct vgu_reply *r);

/* Server: serves until SIGINT/SIGTERM. bind NULL: 127.0.0.1. Returns the exit status. */
int vgu_serve(struct vgu_app *a, const char *bind, unsigned port);
/* Writes the page and the trace's data into dir. Returns the exit status. */
int vgu_export(struct vgu_app *a, const char *dir, const char *const *queries, size_t nq);

#define VGU_QUERY_SOURCE "<query>"
#define VGU_MAX_RESULT_TUPLES 100000

#endif
