/* Sweep join for `lt overlap rt`: both inputs ordered by the start of their temporal
 * expression (materialised and sorted; scans of a trace's relations come in start order
 * already, so the sort is skipped) and merged; each side keeps the bindings still open at
 * the sweep position (its active window), and a binding arriving is paired with the
 * other side's window. State beyond the inputs: the overlap windows. The merge resumes
 * where a full batch left it, so the output is the same whatever the batch size. */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"

struct item {
	int64_t b, e; /* [b, e): an event at t is [t, t + 1) */
	uint32_t row;
};

static int by_begin(const void *x, const void *y)
{
	const struct item *a = x, *c = y;
	if (a->b != c->b)
		return a->b < c->b ? -1 : 1;
	return a->row < c->row ? -1 : a->row > c->row;
}

/* The items of the bindings whose temporal expression is not nothing (nor an empty
 * interval), ordered by begin. */
static struct item *items_of(const struct bstmt *b, const struct tx *x, const struct xrows *t,
                             size_t *n)
{
	struct item *it = vgq_xcalloc(t->n ? t->n : 1, sizeof *it);
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct binding bd = {t->rows + i * t->width, b->vars};
		struct tval v = vgq_teval(x, &bd);
		if (v.kind == TV_NOTHING || (v.kind == TV_INTERVAL && v.b >= v.e))
			continue;
		it[k].b = v.b;
		it[k].e = v.kind == TV_EVENT ? v.b + 1 : v.e;
		it[k].row = (uint32_t)i;
		k++;
	}
	bool sorted = true;
	for (size_t i = 1; i < k && sorted; i++)
		sorted = by_begin(&it[i - 1], &it[i]) <= 0;
	if (!sorted)
		qsort(it, k, sizeof *it, by_begin);
	*n = k;
	return it;
}

struct window {
	struct item *a;
	size_t n, cap;
};

static void window_add(struct window *w, const struct item *it)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 64;
		w->a = vgq_xrealloc(w->a, w->cap, sizeof *w->a);
	}
	w->a[w->n++] = *it;
}

/* Drops the items that end at or before `t`. */
static void window_expire(struct window *w, int64_t t)
{
	size_t k = 0;
	for (size_t i = 0; i < w->n; i++)
		if (w->a[i].e > t)
			w->a[k++] = w->a[i];
	w->n = k;
}

struct sweep {
	struct xrows l, r;
	struct item *li, *ri;
	size_t nl, nr, i, j;
	bool built;
	struct window wl, wr;
	/* the arriving item being paired with the other window, from other->a[k] on */
	const struct item *cur;
	bool cur_left;
	size_t k;
	uint64_t emitted;
};

static void sweep_open(struct xnode *n)
{
	n->state = vgq_xcalloc(1, sizeof(struct sweep));
}

static void build(struct xnode *n, struct sweep *st)
{
	const struct bstmt *b = n->cx->b;
	vgq_rows_drain(n->l, &st->l);
	vgq_rows_drain(n->r, &st->r);
	st->li = items_of(b, n->p->lt, &st->l, &st->nl);
	st->ri = items_of(b, n->p->rt, &st->r, &st->nr);
	st->built = true;
}

static size_t sweep_next(struct xnode *n, uint32_t *out)
{
	struct sweep *st = n->state;
	size_t w = n->cx->width;
	if (!st->built)
		build(n, st);
	uint64_t lvars = n->l->p->vars;
	size_t k = 0;
	while (k < VGQ_BATCH) {
		if (!st->cur) {
			if (st->i == st->nl && st->j == st->nr)
				break;
			bool left = st->j == st->nr ||
			            (st->i < st->nl && st->li[st->i].b <= st->ri[st->j].b);
			st->cur = left ? &st->li[st->i++] : &st->ri[st->j++];
			st->cur_left = left;
			st->k = 0;
			window_expire(left ? &st->wr : &st->wl, st->cur->b);
		}
		bool left = st->cur_left;
		const struct window *other = left ? &st->wr : &st->wl;
		for (; st->k < other->n && k < VGQ_BATCH; st->k++) {
			const struct item *o = &other->a[st->k];
			const uint32_t *x = st->l.rows + (size_t)(left ? st->cur->row : o->row) * w;
			const uint32_t *y = st->r.rows + (size_t)(left ? o->row : st->cur->row) * w;
			uint32_t *row = out + k * w;
			vgq_merge_row(w, lvars, x, y, row);
			if (!vgq_node_passes(n, row))
				continue;
			if (!vgq_node_emit_ok(n, &st->emitted))
				return 0;
			k++;
		}
		if (st->k == other->n) {
			window_add(left ? &st->wl : &st->wr, st->cur);
			vgq_note_state(n->cx->s, st->wl.n + st->wr.n);
			st->cur = NULL;
		}
	}
	return k;
}

static void sweep_close(struct xnode *n)
{
	struct sweep *st = n->state;
	if (!st)
		return;
	vgq_rows_free(&st->l);
	vgq_rows_free(&st->r);
	free(st->li);
	free(st->ri);
	free(st->wl.a);
	free(st->wr.a);
	free(st);
}

static void sweep_explain(const struct xnode *n, const struct xexplain *e)
{
	fputs("sweep join[", e->out);
	vgq_explain_tx(e, n->p->lt, true);
	fputs(" overlap ", e->out);
	vgq_explain_tx(e, n->p->rt, true);
	fputs("]", e->out);
	vgq_explain_residual(e, n->p);
}

const struct xops vgq_sweepjoin_ops = {"sweep join", sweep_open, sweep_next, sweep_close,
                                       sweep_explain};
