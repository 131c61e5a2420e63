/* The selections a query's statements put on the relations they range over, read from
 * the statements as parsed (selections.c): every front end of the engine hands them to
 * the build (vgq_build_options.bounds and .keys, or vgq_cache_request's), so that
 * decoding passes over what no answer can use (docs/query.md "How selections reach
 * decoding"). */
#ifndef VIGIL_QUERY_SELECTIONS_H
#define VIGIL_QUERY_SELECTIONS_H

#include <stddef.h>

#include "relations/relation.h"
#include "tquel/tquel.h"

struct tquel_arena;

struct vgq_selections {
	struct vgq_time_bound *bounds; /* at most one per relation */
	size_t nbounds;
	struct vgq_key_cond *keys; /* alternatives per relation (vgq_key_cond.alt) */
	size_t nkeys;
};

/* Fills s, its arrays allocated in `arena` (they live as long as it). Every bound is a
 * superset of what the statements can use: none when unsure. */
void vgq_query_selections(const struct tquel_query *q, struct tquel_arena *arena,
                          struct vgq_selections *s);

#endif
