/* Counter tracks of the export model (export_model.h): per process, a named series of
 * values over time. The model's builder feeds them: events discarded, and the samples
 * of sampled sensors (export_counters.c). */
#ifndef VIGIL_CLI_EXPORT_COUNTERS_H
#define VIGIL_CLI_EXPORT_COUNTERS_H

#include <stdbool.h>

#include "export_map.h"
#include "export_model.h"

struct vgx_counting {
	struct vgx_map tracks; /* "proc|name|key" -> index of m->ctracks */
	struct vgx_map opens;  /* "proc|relation" -> index of open */
	int64_t *open;         /* intervals of a sampled relation open in a process */
	size_t nopen, cap_open, cap_tracks, cap_counters;
};

/* One sample of the series `key` of counter `name` in process proc. false on no memory. */
bool vgx_count(struct vgx_model *m, struct vgx_counting *c, uint32_t proc, const char *name,
               const char *key, int64_t ts, struct vgx_counter_value v);

/* The samples of an event of a sampled sensor (ev->type->sampled) in process proc: each
 * numeric field (series: the field's name; a NaN or infinite double is no sample), and for an
 * interval relation the count of its intervals open in the process after the event (series
 * VGX_OPEN_KEY; open_delta: +1 for a begin, -1 for an end that closed one, else 0). false on no
 * memory. */
#define VGX_OPEN_KEY "vigil.open"
bool vgx_count_sampled(struct vgx_model *m, struct vgx_counting *c, uint32_t proc,
                       const struct vgt_event *ev, int open_delta);

void vgx_counting_free(struct vgx_counting *c);

#endif
