/* What result.c and result_direct.c share: the targets read straight from their columns
 * and a binding's valid time. */
#ifndef VIGIL_QUERY_RESULT_INTERNAL_H
#define VIGIL_QUERY_RESULT_INTERNAL_H
#include <stdbool.h>

#include "query/engine_internal.h"

/* A target that is an integer attribute without nulls, read straight from its column
 * (the usual target of a join's result: no evaluator call per comparison or store). */
struct direct {
	const union vgq_column *col;
	int var;
	bool u; /* uint, else int */
};

/* The targets' direct columns (ntargets of them, malloc'd), or NULL if one is not. */
struct direct *vgq_direct_targets(const struct bstmt *b);
/* The valid time of one binding; TV_NOTHING when it has none. */
struct tval vgq_valid_time(const struct bstmt *b, const struct binding *bd);
#endif
