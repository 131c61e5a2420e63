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
	struct vgq_session *mem; /* the budget `charged` bytes of the table were taken from */
	size_t charged;
};

/* Can node p take the column path? Then c is set up for it (its table still empty). */
bool vgq_semicols_init(const struct bstmt *b, const struct pnode *p, struct vgq_semicols *c);
/* The groups of the right's bindings, the table's bytes taken from s's memory budget (past
 * it the statement stops: vgq_overflowed). */
void vgq_semicols_build(struct vgq_semicols *c, struct vgq_session *s, const struct xrows *r);
/* Keeps the bindings of rows[0, n) (width w) that have a group whose time fits,
 * compacted in place, in order; returns how many. */
size_t vgq_semicols_filter(const struct vgq_semicols *c, uint32_t *rows, size_t n, size_t w);
void vgq_semicols_free(struct vgq_semicols *c);
/* exec_semijoin_result.c: b's result relation from its n final bindings when its valid
 * time and every target are integer columns of one variable (without nulls) and it is
 * not coalesced (past the memory budget: nothing, and the statement stops); false
 * (nothing done) for another result. */
bool vgq_semicols_result(struct vgq_session *s, const struct bstmt *b, const uint32_t *rows,
                         size_t n, size_t width);

#endif
