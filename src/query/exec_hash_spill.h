/* The hash join past the query's memory budget: partitioned (Grace) into spill files,
 * joined partition by partition, merged back into the in-memory join's order
 * (exec_hash_spill.c). */
#ifndef VIGIL_QUERY_EXEC_HASH_SPILL_H
#define VIGIL_QUERY_EXEC_HASH_SPILL_H

#include <stddef.h>
#include <stdint.h>

#include "query/exec_node.h"

struct vgq_hash_spill;
/* Joins hash join n whose build rows (`right`, freed here) have a table past the room the
 * budget has left: drains n's probe side, and returns the joined rows to read with
 * vgq_hash_spill_next. When the statement stops (refused, a failed write, the limit on
 * bindings) the state reads as empty. */
struct vgq_hash_spill *vgq_hash_spill_run(struct xnode *n, struct xrows *right);
/* The next batch of joined bindings (at most VGQ_BATCH), 0 at the end. */
size_t vgq_hash_spill_next(struct vgq_hash_spill *sp, size_t width, uint32_t *out);
void vgq_hash_spill_free(struct vgq_hash_spill *sp);

#endif
