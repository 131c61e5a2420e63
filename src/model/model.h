/* vigil's behaviour models (docs/model.md): events keyed by (site, format) with counts and
 * optional readable names, and transitions E1 -> E2 (same thread) with counts, the sum of
 * their times and a sketch of the time distribution. Models merge by adding counts; the
 * file format is read by vgm_read_file and written, sorted, by vgm_write_file. */
#ifndef VIGIL_MODEL_MODEL_H
#define VIGIL_MODEL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/sketch.h"

#define VGM_FORMAT_VERSION 1

struct vgm_event {
	char *site;     /* `path/file.c:LINE`, `module+0xHEX`, `/abs/module+0xHEX`, `sensor:NAME` */
	char *fmt;      /* the format string (UTF-8) */
	char *name;     /* readable name (tag), or NULL */
	uint64_t count; /* times it happened */
	uint64_t out;   /* transitions leaving it (sum of their counts) */
	uint64_t id;    /* its id in the file it was read from (0: none) */
};

struct vgm_trans {
	uint32_t from, to;    /* event indices */
	uint64_t count;       /* times it happened */
	uint64_t sum_ns;      /* sum of the timed values (those in the sketch) */
	struct vgm_sketch sk; /* timed values; total <= count when timing was sampled */
};

struct vgm_model {
	struct vgm_event *events;
	size_t nevents, events_cap;
	struct vgm_trans *trans;
	size_t ntrans, trans_cap;
	char **sources; /* `source` records, in order */
	size_t nsources;
	/* open-addressing hash tables of indices + 1 (0: free) */
	uint32_t *ev_slots, *tr_slots;
	size_t ev_nslots, tr_nslots;
};

struct vgm_model *vgm_model_new(void);
void vgm_model_free(struct vgm_model *m);

/* The index of event (site, fmt), created with count 0 if absent; -1 when out of memory. */
long vgm_event_intern(struct vgm_model *m, const char *site, const char *fmt);
/* The index of event (site, fmt), or -1. */
long vgm_event_find(const struct vgm_model *m, const char *site, const char *fmt);
/* Sets (replaces) an event's name. */
int vgm_event_set_name(struct vgm_model *m, size_t e, const char *name);
/* The transition from -> to, created with count 0 if absent; NULL when out of memory.
 * The pointer is valid until the next transition is created. */
struct vgm_trans *vgm_trans_intern(struct vgm_model *m, uint32_t from, uint32_t to);
struct vgm_trans *vgm_trans_find(const struct vgm_model *m, uint32_t from, uint32_t to);
int vgm_add_source(struct vgm_model *m, const char *text);

/* Adds src into dst: events matched by (site, fmt) after mapping src's sites through
 * map_site (NULL: identity; a returned string is the caller's and must live until the
 * call returns), counts and sketches added; names kept from dst, else taken from src;
 * sources appended. Returns 0, or -1 when out of memory. */
typedef const char *(*vgm_site_map)(void *ctx, const char *site);
int vgm_model_merge(struct vgm_model *dst, const struct vgm_model *src, vgm_site_map map_site,
                    void *ctx);

/* Recomputes every event's `out` from the transitions. */
void vgm_model_update_out(struct vgm_model *m);
/* Sum of event counts; sum of transition counts. */
uint64_t vgm_total_events(const struct vgm_model *m);
uint64_t vgm_total_transitions(const struct vgm_model *m);

/* A short label for reports: the name if any, else `site "fmt"` (fmt cut to about 40
 * characters), written into buf. */
const char *vgm_event_label(const struct vgm_event *e, char *buf, size_t size);

/* A duration for people: "840 ns", "12.3 us", "4.56 ms", "1.23 s". */
const char *vgm_format_ns(double ns, char *buf, size_t size);

/* ---- files (model_read.c, model_write.c, docs/model.md) ---- */

/* Reads a model file and merges it into m. Returns 0, or -1 with one line
 * "FILE:LINE: what is wrong" in err (m then holds what came before the error). */
int vgm_read_file(struct vgm_model *m, const char *path, char *err, size_t errsize);
/* The same from memory; `name` stands for the file in messages. */
int vgm_read_buffer(struct vgm_model *m, const char *name, const char *data, size_t size, char *err,
                    size_t errsize);
/* Writes m, sorted: events by (site, fmt) numbered from 1, names, then transitions by
 * (from, to). Returns 0, or -1 with errno set. */
int vgm_write(const struct vgm_model *m, FILE *f);
int vgm_write_file(const struct vgm_model *m, const char *path, char *err, size_t errsize);

#endif
