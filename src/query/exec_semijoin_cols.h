/* The semi-join's column path (exec_semijoin_cols.c): one integer key attribute per side
 * (or none) and times that are columns; the groups an open-addressing table. */
#ifndef VIGIL_QUERY_EXEC_SEMIJOIN_COLS_H
#define VIGIL_QUERY_EXEC_SEMIJOIN_COLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "relations/columns.h" /* vgq_mix */

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
	size_t width;            /* tuple indices per binding of the right */
	struct vgq_session *mem; /* the budget `charged` bytes of the table were taken from */
	size_t charged;
};

/* Can node p take the column path? Then c is set up for it (its table still empty). */
bool vgq_semicols_init(const struct bstmt *b, const struct pnode *p, struct vgq_semicols *c);
/* The groups of the bindings of `right`, reduced on the workers as they are made (no
 * binding kept), the tables' bytes taken from s's memory budget (past it the statement
 * stops: vgq_overflowed, and c has no table). */
void vgq_semicols_build(struct vgq_semicols *c, struct vgq_session *s, struct xnode *right);
/* Keeps the bindings of rows[0, n) (width w) that have a group whose time fits,
 * compacted in place, in order; returns how many. */
size_t vgq_semicols_filter(const struct vgq_semicols *c, uint32_t *rows, size_t n, size_t w);
void vgq_semicols_free(struct vgq_semicols *c);
/* Does the left tuple with key `key` and time `t` have a group whose time fits? (The
 * probe of one binding: vgq_semicols_filter's, and the fused result's.) */
static inline bool vgq_semicols_keeps(const struct vgq_semicols *c, uint64_t key, int64_t t)
{
	for (size_t i = vgq_mix(key) & c->mask; c->used[i]; i = (i + 1) & c->mask) {
		if (c->keys[i] != key)
			continue;
		if (c->mode == SEMI_MIN_END)
			return c->when[i] <= t;
		return c->mode == SEMI_EXISTS || t <= c->when[i];
	}
	return false;
}
/* exec_semijoin.c: semi-join node n's column path (its groups built first), or NULL when
 * n takes the general path. */
const struct vgq_semicols *vgq_semijoin_cols(struct xnode *n);
/* exec_semijoin_result.c: b's result relation straight from the plan `root` when it is a
 * semi-join over a plain scan by columns (projections above it) and b's valid time and
 * every target are integer columns of the scanned variable (without nulls), not
 * coalesced: the scan's tuples probed and their rows made, sorted and stored without
 * bindings (past the memory budget: nothing, and the statement stops); false (nothing
 * done but the semi-join's groups built) for another plan or result. */
bool vgq_semijoin_result(struct vgq_session *s, const struct bstmt *b, struct xnode *root);

#endif
