/* An event relation built in pieces (build_streams.c) whose merge is left to whoever
 * reads its columns first: the relations cache's writer gathers them straight into the
 * file (cache_write.c), a part at a time, so the merged columns never take memory of
 * their own (the query then maps the file); a relation the cache does not take is
 * gathered into its own columns by vgq_database_settle.
 *
 * The relation holds its tuple count and schema; its columns are NULL and
 * `r->unmerged` says where each tuple's values are: the pieces (one per unit of
 * reading, each in its unit's order) and the merged order, a bit a tuple while the
 * tuples are of at most two streams (set: the second stream's), else a unit a tuple. */
#ifndef VIGIL_RELATIONS_UNMERGED_H
#define VIGIL_RELATIONS_UNMERGED_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "relations/relation.h"

struct vgq_unmerged;

/* The merged order of n tuples over `nunits` pieces (taken: freed with the relation);
 * the pieces of the units of at most two streams with `bits` (the units of the first
 * stream [a0, a1), of the second [b0, b1)), else with `order`. */
struct vgq_unmerged_from {
	size_t n, nunits;
	struct vgq_relation **piece; /* by unit */
	uint64_t *bits;
	size_t a0, a1, b0, b1;
	uint32_t *order;
};

/* Leaves r unmerged: its count n, its columns none (freed), its values in the pieces. */
void vgq_unmerged_attach(struct vgq_relation *r, const struct vgq_unmerged_from *from);
void vgq_unmerged_free(struct vgq_unmerged *u);

/* Tuples [t0, t1) of column c (-1: from) of r: its own array's, or, r unmerged, gathered
 * into buf (room for t1 - t0 values of the column's size). Safe on threads at once. */
const void *vgq_column_values(const struct vgq_relation *r, long c, size_t t0, size_t t1,
                              void *buf);

/* The smallest and largest `from` of an unmerged relation (vgq_relation_finish). */
void vgq_unmerged_span(const struct vgq_unmerged *u, int64_t *first, int64_t *last);

/* Column c of every piece freed (the cache's writer has written the column whole): its
 * memory taken again by the file's next columns, so that a query that writes the cache
 * touches the pieces and little more. The relation can then no longer be settled. Safe on
 * threads at once. */
void vgq_unmerged_release(const struct vgq_relation *r, long c);
/* Some column of db's unmerged relations was released. */
bool vgq_database_released(const struct vgq_database *db);

/* Every unmerged relation of db gathered into columns of its own, on `threads` threads;
 * false if one could not be (a column released: the database is to be built again). */
bool vgq_database_settle(struct vgq_database *db, unsigned threads);

/* Tuples [t0, t1) of column c (values of `size` bytes) gathered into out in the merged
 * order `order` (the unit of each tuple), each unit's piece read from pos[u] on: the
 * gather of more than two streams' pieces, here and in build_streams.c's merge. */
void vgq_gather_units(struct vgq_relation *const *piece, size_t nunits, long c, size_t size,
                      const uint32_t *order, size_t t0, size_t t1, const size_t *pos, void *out);
#endif
