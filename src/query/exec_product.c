/* Product: every binding of the left with every binding of the right, then the node's
 * residual conditions. The right input is materialised (it is read once per left
 * binding); the left streams. */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"

struct product {
	struct xrows right;
	bool built;
	uint32_t *lbuf; /* one batch of the left */
	size_t ln, li, rj;
	bool borrowed; /* a worker's: right is the original's */
};

static void product_open(struct xnode *n)
{
	struct product *st = vgq_xcalloc(1, sizeof *st);
	st->lbuf = vgq_batch_alloc(n->cx);
	n->state = st;
}

static void product_build(struct xnode *n)
{
	struct product *st = n->state;
	if (st->built)
		return;
	vgq_rows_collect(n->r, &st->right);
	vgq_note_state(n->cx->s, st->right.n);
	st->built = true;
}

static size_t product_next(struct xnode *n, uint32_t *out)
{
	struct product *st = n->state;
	size_t w = n->cx->width;
	if (!st->built)
		product_build(n);
	uint64_t lvars = n->l->p->vars;
	size_t k = 0;
	while (k < VGQ_BATCH) {
		if (st->li == st->ln) {
			st->ln = vgq_node_next(n->l, st->lbuf);
			st->li = st->rj = 0;
			if (!st->ln)
				break;
		}
		const uint32_t *x = st->lbuf + st->li * w;
		for (; st->rj < st->right.n && k < VGQ_BATCH; st->rj++) {
			uint32_t *row = out + k * w;
			vgq_merge_row(w, lvars, x, st->right.rows + st->rj * w, row);
			if (!vgq_node_passes(n, row))
				continue;
			if (!vgq_node_emit_ok(n))
				return 0;
			k++;
		}
		if (st->rj == st->right.n) {
			st->li++;
			st->rj = 0;
		}
	}
	return k;
}

static void product_close(struct xnode *n)
{
	struct product *st = n->state;
	if (!st)
		return;
	vgq_build_free(&st->right, NULL, st->borrowed);
	free(st->lbuf);
	free(st);
}

static void product_explain(const struct xnode *n, const struct xexplain *e)
{
	fputs("×", e->out);
	vgq_explain_residual(e, n->p);
}

/* A worker pairs its own left batches with the original's right side. */
static void *product_fork(struct xnode *clone, const struct xnode *orig)
{
	const struct product *o = orig->state;
	struct product *st = vgq_xcalloc(1, sizeof *st);
	st->right = o->right;
	st->built = true;
	st->borrowed = true;
	st->lbuf = vgq_batch_alloc(clone->cx);
	return st;
}

const struct xops vgq_product_ops = {.name = "product",
                                     .open = product_open,
                                     .next = product_next,
                                     .close = product_close,
                                     .explain = product_explain,
                                     .streams = true,
                                     .build = product_build,
                                     .fork = product_fork,
                                     .unfork = product_close};
