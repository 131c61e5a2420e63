/* What a query reads of a trace's relations (query_need.c). */
#ifndef VIGIL_CLI_QUERY_NEED_H
#define VIGIL_CLI_QUERY_NEED_H

#include <stdbool.h>
#include <stddef.h>

#include "relations/relation.h"
#include "tquel/tquel.h"

struct vg_query_need {
	const char **relations; /* ranged over (Clock aside) */
	size_t nrelations;
	const char **attrs; /* written as V.attr */
	size_t nattrs;
	bool all_attrs;                /* some V.all */
	struct vgq_time_bound *bounds; /* the selections' time bounds (query_bounds.c) */
	size_t nbounds;
	struct vgq_key_cond *keys; /* and key selections */
	size_t nkeys;
	struct tquel_arena *arena;
};

void vg_query_need(const struct tquel_query *q, struct vg_query_need *n);
void vg_query_need_free(struct vg_query_need *n);
/* Sets n->bounds (in n's arena): called by vg_query_need. */
void vg_query_bounds(const struct tquel_query *q, struct vg_query_need *n);

#endif
