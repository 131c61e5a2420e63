/* Scan: a variable's relation, tuple by tuple in its order (start time for a trace's
 * relations), with the selection pushed down onto it. The selection runs
 * column-at-a-time over ranges of at least VGQ_BATCH / 2 tuples: a conjunct
 * `V.attr OP constant` is a tight loop over one column (strings and entity names compare
 * by their interned pointer) refining a vector of tuple indices; other conjuncts are
 * evaluated per tuple that is left. */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "relations/columns.h"

struct scan {
	const struct pnode *sel; /* the pushed-down selection, or NULL */
	bool *done;              /* per conjunct of sel: applied by a kernel */
	uint32_t *idx;           /* the selection vector of one range */
	size_t pos, nrows;       /* the next tuple, the end of the tuples to scan */
	size_t morsel;           /* tuples per morsel of a parallel scan */
};

/* Tuples per morsel of a parallel scan (exec_parallel.c): at most 32 batches. */
#define SCAN_MORSEL_MAX (32 * VGQ_BATCH)

enum cmp { C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE };

static enum cmp flip(enum cmp c)
{
	static const enum cmp f[] = {C_EQ, C_NE, C_GT, C_GE, C_LT, C_LE};
	return f[c];
}

#define KEEP_IF(test)                                                                              \
	do {                                                                                       \
		size_t k = 0;                                                                      \
		if (all) {                                                                         \
			for (uint32_t i = base; i < end; i++) {                                    \
				sel[k] = i;                                                        \
				k += (test);                                                       \
			}                                                                          \
		} else {                                                                           \
			for (size_t j = 0; j < *nsel; j++) {                                       \
				uint32_t i = sel[j];                                               \
				sel[k] = i;                                                        \
				k += (test);                                                       \
			}                                                                          \
		}                                                                                  \
		*nsel = k;                                                                         \
	} while (0)

#define BY_OP(col, c)                                                                              \
	switch (op) {                                                                              \
	case C_EQ:                                                                                 \
		KEEP_IF(col[i] == c);                                                              \
		break;                                                                             \
	case C_NE:                                                                                 \
		KEEP_IF(col[i] != c);                                                              \
		break;                                                                             \
	case C_LT:                                                                                 \
		KEEP_IF(col[i] < c);                                                               \
		break;                                                                             \
	case C_LE:                                                                                 \
		KEEP_IF(col[i] <= c);                                                              \
		break;                                                                             \
	case C_GT:                                                                                 \
		KEEP_IF(col[i] > c);                                                               \
		break;                                                                             \
	case C_GE:                                                                                 \
		KEEP_IF(col[i] >= c);                                                              \
		break;                                                                             \
	}

/* Applies `attr OP constant` to the selection of tuples [base, end); false if this shape
 * has no kernel. `all`: the selection is the whole range (sel is filled from scratch). */
static bool kernel(const struct bstmt *b, const struct bx *c, uint32_t *sel, size_t *nsel,
                   uint32_t base, uint32_t end, bool all)
{
	if (c->kind < BX_EQ || c->kind > BX_GE)
		return false;
	enum cmp op = (enum cmp)(c->kind - BX_EQ);
	const struct bx *a = c->a, *k = c->b;
	if (a->kind == BX_CONST && k->kind == BX_ATTR) {
		a = c->b;
		k = c->a;
		op = flip(op);
	}
	if (a->kind != BX_ATTR || k->kind != BX_CONST || k->c.null)
		return false;
	const struct vgq_relation *r = b->vars[a->var].rel;
	if (r->nulls && r->nulls[a->attr]) /* a result with nulls: per tuple */
		return false;
	const union vgq_column *col = &r->cols[a->attr];
	enum vgq_type t = r->attrs[a->attr].type;
	if (k->c.type == VX_INT && t == VGQ_INT) {
		const int64_t *v = col->i;
		int64_t x = k->c.v.i;
		BY_OP(v, x);
		return true;
	}
	if (k->c.type == VX_INT && t == VGQ_UINT && k->c.v.i >= 0) {
		const uint64_t *v = col->u;
		uint64_t x = (uint64_t)k->c.v.i;
		BY_OP(v, x);
		return true;
	}
	if (k->c.type == VX_DOUBLE && t == VGQ_DOUBLE) {
		const double *v = col->d;
		double x = k->c.v.d;
		BY_OP(v, x);
		return true;
	}
	if (k->c.type == VX_STRING && (op == C_EQ || op == C_NE) &&
	    (t == VGQ_STRING || t == VGQ_ENTITY) && b->db) {
		/* every string of the database is interned: equal text, equal pointer (the
		 * statement's database: as of an instant, its own) */
		const char *x = vgq_database_string(b->db, k->c.v.s);
		bool eq = op == C_EQ;
		if (t == VGQ_STRING) {
			const char **v = col->s;
			if (eq)
				KEEP_IF(v[i] && v[i] == x);
			else
				KEEP_IF(v[i] && v[i] != x);
		} else {
			const struct vgq_ref *v = col->r;
			if (eq)
				KEEP_IF(v[i].name && v[i].name == x);
			else
				KEEP_IF(v[i].name && v[i].name != x);
		}
		return true;
	}
	return false;
}

void vgq_scan_push_selection(struct xnode *scan, const struct pnode *sel)
{
	struct scan *st = scan->state;
	st->sel = sel;
	st->done = vgq_xcalloc(sel->nconds + 1, sizeof *st->done);
}

int vgq_scan_whole(const struct xnode *n)
{
	if (n->ops != &vgq_scan_ops || !n->state)
		return -1;
	const struct scan *st = n->state;
	return st->sel ? -1 : n->p->var;
}

static void scan_open(struct xnode *n)
{
	struct scan *st = vgq_xcalloc(1, sizeof *st);
	st->nrows = n->cx->b->vars[n->p->var].rel->ntuples;
	st->idx = vgq_xcalloc(VGQ_BATCH, sizeof *st->idx);
	n->state = st;
}

/* The tuples of [base, end) that pass the selection, appended to out from row k on. */
static size_t scan_range(struct xnode *n, uint32_t base, uint32_t end, uint32_t *out, size_t k)
{
	struct scan *st = n->state;
	const struct bstmt *b = n->cx->b;
	const struct pnode *sn = st->sel;
	size_t w = n->cx->width;
	int var = n->p->var;
	uint32_t *sel = st->idx;
	size_t nsel = end - base;
	bool all = true;
	for (size_t i = 0; sn && i < sn->nconds; i++) {
		st->done[i] = kernel(b, sn->conds[i], sel, &nsel, base, end, all);
		all = all && !st->done[i];
	}
	if (all)
		for (uint32_t i = base; i < end; i++)
			sel[i - base] = i;
	uint32_t row[VGQ_MAX_VARS] = {0};
	struct binding bd = {row, b->vars};
	/* the rows this range may fill (it has room for them) zeroed at once: a call to
	 * memset per row cost more than the scan */
	memset(out + k * w, 0, nsel * w * sizeof *out);
	for (size_t j = 0; j < nsel; j++) {
		row[var] = sel[j];
		bool ok = true;
		for (size_t i = 0; sn && ok && i < sn->nconds; i++)
			if (!st->done[i])
				ok = vgq_truth(sn->conds[i], &bd) == T3_TRUE;
		for (size_t i = 0; sn && ok && i < sn->ntconds; i++)
			ok = vgq_tpred(sn->tconds[i], &bd);
		if (ok)
			out[k++ * w + (size_t)var] = sel[j];
	}
	return k;
}

static size_t scan_next(struct xnode *n, uint32_t *out)
{
	struct scan *st = n->state;
	size_t k = 0;
	/* ranges no longer than the room left, and stop when half the batch is full */
	while (k < VGQ_BATCH / 2 && st->pos < st->nrows) {
		size_t len = VGQ_BATCH - k;
		if (len > st->nrows - st->pos)
			len = st->nrows - st->pos;
		uint32_t base = (uint32_t)st->pos;
		st->pos += len;
		k = scan_range(n, base, (uint32_t)st->pos, out, k);
	}
	return k;
}

static void scan_close(struct xnode *n)
{
	struct scan *st = n->state;
	if (!st)
		return;
	free(st->done);
	free(st->idx);
	free(st);
}

static void scan_explain(const struct xnode *n, const struct xexplain *e)
{
	const struct bvar *v = &e->b->vars[n->p->var];
	fprintf(e->out, "%s as %s  (%s relation", v->rel->name, v->name,
	        vgq_rkind_name(v->rel->kind));
	if (e->counts && (v->rel->ntuples || v->rel->nattrs))
		fprintf(e->out, ", %zu tuples", v->rel->ntuples);
	fputs(")", e->out);
}

/* A worker's scan: its own selection vector, the original's pushed-down selection. */
static void *scan_fork(struct xnode *clone, const struct xnode *orig)
{
	(void)clone;
	const struct scan *o = orig->state;
	struct scan *st = vgq_xcalloc(1, sizeof *st);
	st->sel = o->sel;
	st->morsel = o->morsel;
	if (o->sel)
		st->done = vgq_xcalloc(o->sel->nconds + 1, sizeof *st->done);
	st->idx = vgq_xcalloc(VGQ_BATCH, sizeof *st->idx);
	return st;
}

static size_t scan_morsels(struct xnode *n)
{
	struct scan *st = n->state;
	st->morsel = vgq_grain(n->cx->s, st->nrows, 16, SCAN_MORSEL_MAX);
	return (st->nrows + st->morsel - 1) / st->morsel;
}

static void scan_seek(struct xnode *clone, size_t m)
{
	struct scan *st = clone->state;
	size_t all = clone->cx->b->vars[clone->p->var].rel->ntuples;
	st->pos = m * st->morsel;
	st->nrows = st->pos + st->morsel < all ? st->pos + st->morsel : all;
}

const struct xops vgq_scan_ops = {.name = "scan",
                                  .open = scan_open,
                                  .next = scan_next,
                                  .close = scan_close,
                                  .explain = scan_explain,
                                  .fork = scan_fork,
                                  .unfork = scan_close,
                                  .morsels = scan_morsels,
                                  .seek = scan_seek};
