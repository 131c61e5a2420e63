/* Selection: σ on explicit attributes (conjuncts of `where`) and σT on valid times
 * (conjuncts of `when`). Over a scan it hands its conjuncts to the scan, which applies
 * them column-at-a-time (exec_scan.c); elsewhere it keeps the bindings of each batch that
 * pass, compacting the batch in place. */
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"

static void select_open(struct xnode *n)
{
	if (n->l->ops == &vgq_scan_ops) {
		vgq_scan_push_selection(n->l, n->p);
		n->state = n->l; /* fused: the scan's batches pass through */
	}
}

static size_t select_next(struct xnode *n, uint32_t *out)
{
	size_t w = n->cx->width;
	for (;;) {
		size_t got = vgq_node_next(n->l, out);
		if (n->state || !got)
			return got;
		size_t k = 0;
		for (size_t i = 0; i < got; i++) {
			const uint32_t *row = out + i * w;
			if (vgq_node_passes(n, row)) {
				if (k != i)
					memcpy(out + k * w, row, w * sizeof *row);
				k++;
			}
		}
		if (k)
			return k;
	}
}

static void select_explain(const struct xnode *n, const struct xexplain *e)
{
	const struct pnode *p = n->p;
	if (p->nconds) {
		fputs("σ[", e->out);
		for (size_t i = 0; i < p->nconds; i++) {
			fputs(i ? " and " : "", e->out);
			vgq_explain_bx(e, p->conds[i], 2);
		}
		fputs("]", e->out);
	}
	if (p->ntconds) {
		fputs(p->nconds ? " σT[" : "σT[", e->out);
		for (size_t i = 0; i < p->ntconds; i++) {
			fputs(i ? " and " : "", e->out);
			vgq_explain_tp(e, p->tconds[i], true);
		}
		fputs("]", e->out);
	}
}

/* σT of the calculus as written: its conjuncts parenthesised only when there are several */
static void tselect_explain(const struct xnode *n, const struct xexplain *e)
{
	const struct pnode *p = n->p;
	fputs("σT[", e->out);
	for (size_t i = 0; i < p->ntconds; i++) {
		fputs(i ? " and " : "", e->out);
		vgq_explain_tp(e, p->tconds[i], p->ntconds > 1);
	}
	fputs("]", e->out);
}

/* A worker's selection fused with its scan passes its own scan's batches through. */
static void *select_fork(struct xnode *clone, const struct xnode *orig)
{
	return orig->state ? clone->l : NULL;
}

const struct xops vgq_select_ops = {.name = "select",
                                    .open = select_open,
                                    .next = select_next,
                                    .explain = select_explain,
                                    .streams = true,
                                    .fork = select_fork};
const struct xops vgq_tselect_ops = {.name = "temporal select",
                                     .open = select_open,
                                     .next = select_next,
                                     .explain = tselect_explain,
                                     .streams = true,
                                     .fork = select_fork};
