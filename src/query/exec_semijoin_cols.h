/* The semi-join's column path (exec_semijoin_cols.c): one integer key attribute per side
 * (or none) and times that are columns; the groups an open-addressing table. */
#ifndef VIGIL_QUERY_EXEC_SEMIJOIN_COLS_H
#define VIGIL_QUERY_EXEC_SEMIJOIN_COLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"

struct vgq_semicols {
	enum semi_mode mode;
	const uint64_t *lkey, *rkey;    /* NULL: no key (one group) */
	const int64_t *ltime, *rtime;   /* NULL under SEMI_EXISTS */
	int lkvar, rkvar, ltvar, rtvar; /* the variables whose tuple indexes them */
	/* the groups: key -> least end (greatest begin) of the right */
	uint64_t *keys;
	int64_t *when;
	uint8_t *used;
	size_t mask, ngroups;
};

/* Can node p take the column path? Then c is set up for it (its table still empty). */
bool vgq_semicols_init(const struct bstmt *b, const struct pnode *p, struct vgq_semicols *c);
/* The groups of the right's bindings. */
void vgq_semicols_build(struct vgq_semicols *c, const struct xrows *r);
/* Keeps the bindings of rows[0, n) (width w) that have a group whose time fits,
 * compacted in place, in order; returns how many. */
size_t vgq_semicols_filter(const struct vgq_semicols *c, uint32_t *rows, size_t n, size_t w);
void vgq_semicols_free(struct vgq_semicols *c);

#endif
