/* Incremental evaluation of live queries: an update network in the manner of the
 * relational-monitoring paper's §8. Events are fed once each, in merged order, to a
 * relation builder that is never finished; at each update the tuples that became final
 * since the last one (closed intervals and states, events) are the deltas. Each retrieve
 * is evaluated by the ordinary engine over small databases only: a retrieve over k tuple
 * variables is run k times per update, the i-th run giving variable i its delta,
 * the earlier variables their kept state and the later ones state plus delta
 * (semi-naive evaluation), so every combination of final tuples is met exactly once.
 * Kept state is dropped when the when clause proves it can no longer join: docs/watch.md
 * "Incremental answers" lists the shapes and what state each keeps. */
#ifndef VIGIL_LIVE_DELTA_H
#define VIGIL_LIVE_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "query/engine.h"
#include "relations/relation.h"
#include "tquel/tquel.h"

struct vgq_delta;

/* A network for q over the events of t (the schema is t's), built with bo (its keep
 * filter and pairing options; may be NULL). NULL, with one sentence in `why`, when q
 * has a shape the network cannot take (the caller answers by re-evaluation). */
struct vgq_delta *vgq_delta_new(const struct tquel_query *q, struct vgt_trace *t,
                                const struct vgq_build_options *bo, const struct vgq_options *o,
                                char *why, size_t whysize);
void vgq_delta_free(struct vgq_delta *d);
/* Whether vgq_delta_new can take q's shape (no trace needed); false with one sentence in
 * `why`, as vgq_delta_new gives it. */
bool vgq_delta_takes(const struct tquel_query *q, char *why, size_t whysize);

/* One event of the merged reading, in order (the keep filter applies here). */
void vgq_delta_feed(struct vgq_delta *d, const struct vgt_event *ev);

/* Evaluates what became final since the last update (with `final`, also every tuple
 * still open: they end at the last event, as in a stored trace) and calls emit with
 * each result; the result tuples are final. Returns the number of errors (to errors). */
size_t vgq_delta_update(struct vgq_delta *d, bool final, vgq_emit_fn emit, void *ctx, FILE *errors);

struct vgq_delta_stats {
	uint64_t events;         /* kept events fed */
	int64_t first, last;     /* their time span (0 if none) */
	uint64_t state;          /* tuples kept for joins after the last update */
	uint64_t state_peak;     /* the most kept at once */
	uint64_t dropped;        /* kept tuples dropped as unable to join again */
	uint64_t deltas;         /* final tuples taken by the operators */
	bool unbounded;          /* some variable's state is never dropped (see delta.h) */
	uint64_t derived_errors; /* errors that were a followed analysis's (derived.h) */
};
void vgq_delta_stats(const struct vgq_delta *d, struct vgq_delta_stats *out);
/* The relation builder's warnings, as vgq_database_print_warnings prints them. */
void vgq_delta_print_warnings(const struct vgq_delta *d, const char *who, FILE *f);

#endif
