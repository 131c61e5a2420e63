/* The executor's frame: a plan becomes a tree of nodes (the one switch on the plan's
 * kinds), and the calls every node goes through, which count its rows and, under
 * `vigil explain --analyze`, time it. The operators are in exec_*.c (exec_node.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "relations/columns.h"
#include "tquel/arena.h"

size_t vgq_row_limit(const struct vgq_session *s, const struct bstmt *b)
{
	if (s->opts.max_bindings)
		return (size_t)s->opts.max_bindings;
	return (size_t)(VGQ_MAX_CELLS / (b->nvars ? b->nvars : 1));
}

void vgq_note_state(struct vgq_session *s, uint64_t n)
{
	/* workers note theirs at once: a maximum kept atomically */
	uint64_t cur = __atomic_load_n(&s->peak_state, __ATOMIC_RELAXED);
	while (n > cur && !__atomic_compare_exchange_n(&s->peak_state, &cur, n, true,
	                                               __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

bool vgq_overflowed(const struct xctx *cx)
{
	/* past the limit on bindings, an integer overflow met, or operator state past the
	 * memory budget: the statement fails */
	return __atomic_load_n(&cx->overflow, __ATOMIC_RELAXED) || vgq_fault_met(&cx->s->fault) ||
	       vgq_mem_refused(cx->s);
}

void vgq_set_overflow(struct xctx *cx)
{
	__atomic_store_n(&cx->overflow, true, __ATOMIC_RELAXED);
}

struct xnode *vgq_node_new(struct vgq_session *s, struct xctx *cx, const struct xops *ops,
                           const struct pnode *p)
{
	struct xnode *n = tquel_alloc(s->arena, sizeof *n);
	memset(n, 0, sizeof *n);
	n->ops = ops;
	n->p = p;
	n->cx = cx;
	return n;
}

struct xnode *vgq_node_build(struct vgq_session *s, struct xctx *cx, const struct pnode *p)
{
	const struct xops *ops = &vgq_product_ops;
	switch (p->kind) {
	case P_SCAN:
		ops = &vgq_scan_ops;
		break;
	case P_SELECT:
		ops = &vgq_select_ops;
		break;
	case P_TSELECT:
		ops = &vgq_tselect_ops;
		break;
	case P_PRODUCT:
		ops = &vgq_product_ops;
		break;
	case P_HASHJOIN:
		ops = &vgq_hashjoin_ops;
		break;
	case P_SWEEPJOIN:
		ops = &vgq_sweepjoin_ops;
		break;
	case P_SEMIJOIN:
		ops = &vgq_semijoin_ops;
		break;
	case P_PROJECT:
		ops = &vgq_project_ops;
		break;
	case P_TPROJECT:
		ops = &vgq_tproject_ops;
		break;
	}
	struct xnode *n = vgq_node_new(s, cx, ops, p);
	if (p->l)
		n->l = vgq_node_build(s, cx, p->l);
	if (p->r)
		n->r = vgq_node_build(s, cx, p->r);
	return n;
}

/* Children first: an operator may hand work to its child when it opens (a selection
 * to its scan). */
void vgq_node_open(struct xnode *n)
{
	if (n->l)
		vgq_node_open(n->l);
	if (n->r)
		vgq_node_open(n->r);
	if (n->ops->open)
		n->ops->open(n);
}

void vgq_node_close(struct xnode *n)
{
	if (n->ops->close)
		n->ops->close(n);
	n->state = NULL;
	if (n->l)
		vgq_node_close(n->l);
	if (n->r)
		vgq_node_close(n->r);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

size_t vgq_node_next(struct xnode *n, uint32_t *rows)
{
	if (vgq_overflowed(n->cx)) /* the statement stops */
		return 0;
	uint64_t t0 = n->cx->timed ? now_ns() : 0;
	size_t k = n->ops->next(n, rows);
	if (n->cx->timed)
		n->ns += now_ns() - t0;
	n->rows += k;
	n->calls += k > 0; /* batches returned */
	return k;
}

uint32_t *vgq_batch_alloc(const struct xctx *cx)
{
	return vgq_xcalloc(VGQ_BATCH * (cx->width ? cx->width : 1), sizeof(uint32_t));
}

bool vgq_node_passes(const struct xnode *n, const uint32_t *row)
{
	const struct pnode *p = n->p;
	struct binding bd = {row, n->cx->b->vars};
	for (size_t i = 0; i < p->nconds; i++)
		if (vgq_truth(p->conds[i], &bd) != T3_TRUE)
			return false;
	for (size_t i = 0; i < p->ntconds; i++)
		if (!vgq_tpred(p->tconds[i], &bd))
			return false;
	return true;
}

bool vgq_node_emit_ok(struct xnode *n)
{
	/* a worker's clone counts its own bindings: no more than the limit either */
	if (n->cx->limit && n->emitted >= n->cx->limit) {
		vgq_set_overflow(n->cx);
		return false;
	}
	n->emitted++;
	return true;
}

void vgq_rows_drain(struct xnode *child, struct xrows *out)
{
	size_t w = child->cx->width;
	out->width = w;
	for (;;) {
		if (!vgq_rows_reserve(out, child->cx->s, child->ops->name, VGQ_BATCH))
			break;
		size_t k = vgq_node_next(child, out->rows + out->n * w);
		if (!k)
			break;
		out->n += k;
	}
}

bool vgq_build_free(struct xrows *right, struct xhash *table, bool borrowed)
{
	if (borrowed)
		return false;
	vgq_rows_free(right);
	if (table)
		vgq_xhash_free(table);
	return true;
}

void vgq_merge_row(size_t width, uint64_t lvars, const uint32_t *x, const uint32_t *y,
                   uint32_t *row)
{
	for (size_t v = 0; v < width; v++)
		row[v] = (lvars >> v) & 1 ? x[v] : y[v];
}
