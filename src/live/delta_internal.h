/* Internals of the update network (delta.h): the retrieves it can take, analysed
 * (delta_shape.c), and the relation copies its operators hold (delta_copy.c). */
#ifndef VIGIL_LIVE_DELTA_INTERNAL_H
#define VIGIL_LIVE_DELTA_INTERNAL_H

#include "live/delta.h"
#include "tquel/ast.h"

#define DELTA_MAX_VARS 8

struct delta_var {
	const char *name;     /* the tuple variable */
	const char *relation; /* the relation of its latest range */
	char *alias;          /* the name its tuples go by in the small databases */
	/* Per other variable: the when clause (or the default valid time, an overlap)
	 * proves that no tuple of that variable starting after this one's end can join it. */
	bool drops_against[DELTA_MAX_VARS];
	/* Its final tuples: kept for later deltas (2+ variables), this update's delta at
	 * the end; with one variable, only this update's. */
	struct vgq_relation *state;
};

/* One retrieve alone: its range statements rewritten to the aliases, then itself. */
struct delta_retrieve {
	struct tquel_query sub;
	struct delta_var vars[DELTA_MAX_VARS];
	size_t nvars;
	bool unbounded; /* some variable's state is never dropped */
};

/* The retrieves of q, or -1 with one sentence in `why` when q has a shape the network
 * cannot take. */
int vgq_delta_shape(const struct tquel_query *q, struct delta_retrieve **out, size_t *n, char *why,
                    size_t whysize);
void vgq_delta_shape_free(struct delta_retrieve *r, size_t n);

/* An empty relation with the attributes of src, named `name`. */
struct vgq_relation *vgq_delta_rel_like(const struct vgq_relation *src, const char *name);
/* Appends tuple i of src (same attributes) to dst. */
void vgq_delta_rel_push(struct vgq_relation *dst, const struct vgq_relation *src, size_t i);
/* Column a of r from tuple lo on, sharing r's values. */
void vgq_delta_column_view(union vgq_column *view, const struct vgq_relation *r, size_t a,
                           size_t lo);
/* Keeps the tuples for which keep[i] is true, in order. */
void vgq_delta_rel_filter(struct vgq_relation *r, const bool *keep);
/* Computes first/last as a finished relation has them (no tuple is open any more). */
void vgq_delta_rel_span(struct vgq_relation *r);

#endif
