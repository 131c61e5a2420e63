/* What a query reads of a trace's relations (query_need.c). */
#ifndef VIGIL_CLI_QUERY_NEED_H
#define VIGIL_CLI_QUERY_NEED_H

#include <stdbool.h>
#include <stddef.h>

#include "query/selections.h"
#include "relations/cache.h"
#include "relations/relation.h"
#include "tquel/tquel.h"

struct vg_query_need {
	const char **relations; /* ranged over (Clock aside) */
	size_t nrelations;
	const char **attrs; /* written as V.attr */
	size_t nattrs;
	bool all_attrs;            /* some V.all */
	struct vgq_selections sel; /* time bounds and key selections (query/selections.h) */
	struct tquel_arena *arena;
};

void vg_query_need(const struct tquel_query *q, struct vg_query_need *n);
/* The relations cache request for it (pointing into n) over the trace at `path`; `who`
 * prefixes what is said of a damaged cache ("vigil query"). */
void vg_query_need_request(const struct vg_query_need *n, const char *path, const char *who,
                           struct vgq_cache_request *rq);
void vg_query_need_free(struct vg_query_need *n);

#endif
