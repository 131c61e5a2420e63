/* Evaluating an optimized plan bottom-up. Intermediate results are binding tables: per
 * row, one tuple index for every variable of the statement. A selection over a scan runs
 * column-at-a-time: a conjunct `V.attr OP constant` is a tight loop over one column
 * (strings and entity names compare by their interned pointer), refining a vector of row
 * indices; other conjuncts are evaluated per row. */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "relations/internal.h"

void vgq_btable_push(struct btable *t, const uint32_t *row)
{
	if (t->limit && t->n >= t->limit) {
		t->overflow = true;
		return;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->rows = vgq_xrealloc(t->rows, t->cap, t->width * sizeof *t->rows);
	}
	memcpy(t->rows + t->n * t->width, row, t->width * sizeof *row);
	t->n++;
}

size_t vgq_row_limit(const struct vgq_session *s, const struct bstmt *b)
{
	if (s->opts.max_bindings)
		return (size_t)s->opts.max_bindings;
	return (size_t)(VGQ_MAX_CELLS / (b->nvars ? b->nvars : 1));
}

bool vgq_passes(const struct bstmt *b, const struct pnode *n, const uint32_t *row)
{
	struct binding bd = {row, b->vars};
	for (size_t i = 0; i < n->nconds; i++)
		if (vgq_truth(n->conds[i], &bd) != T3_TRUE)
			return false;
	for (size_t i = 0; i < n->ntconds; i++)
		if (!vgq_tpred(n->tconds[i], &bd))
			return false;
	return true;
}

void vgq_filter(const struct bstmt *b, const struct pnode *n, struct btable *t)
{
	if (!n->nconds && !n->ntconds)
		return;
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++) {
		const uint32_t *row = t->rows + i * t->width;
		if (vgq_passes(b, n, row)) {
			if (k != i)
				memmove(t->rows + k * t->width, row, t->width * sizeof *row);
			k++;
		}
	}
	t->n = k;
}

/* ---- column kernels ---- */

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
			for (uint32_t i = 0; i < (uint32_t)nrows; i++) {                           \
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

/* Applies `attr OP constant` to the selection; false if this shape has no kernel. `all`:
 * the selection is every row (sel is filled from scratch). */
static bool kernel(struct vgq_session *s, const struct bstmt *b, const struct bx *c, uint32_t *sel,
                   size_t *nsel, size_t nrows, bool all)
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
	if (r->nulls && r->nulls[a->attr]) /* a result with nulls: per row */
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
	    (t == VGQ_STRING || t == VGQ_ENTITY) && s->db) {
		/* every string of the database is interned: equal text, equal pointer */
		const char *x = vgq_database_string(s->db, k->c.v.s);
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

/* A scan of variable n->l->var, filtered by n's conjuncts. */
static struct btable scan_select(struct vgq_session *s, const struct bstmt *b,
                                 const struct pnode *sel_node, int var)
{
	const struct vgq_relation *r = b->vars[var].rel;
	size_t nrows = r->ntuples;
	uint32_t *sel = vgq_xcalloc(nrows ? nrows : 1, sizeof *sel);
	size_t nsel = nrows;
	bool all = true;
	bool *done = vgq_xcalloc(sel_node ? sel_node->nconds + 1 : 1, 1);
	for (size_t i = 0; sel_node && i < sel_node->nconds; i++)
		if (kernel(s, b, sel_node->conds[i], sel, &nsel, nrows, all)) {
			done[i] = true;
			all = false;
		}
	if (all)
		for (uint32_t i = 0; i < (uint32_t)nrows; i++)
			sel[i] = i;
	struct btable t = {.width = b->nvars};
	t.cap = nsel ? nsel : 1;
	t.rows = vgq_xcalloc(t.cap, t.width * sizeof *t.rows);
	uint32_t row[VGQ_MAX_VARS] = {0};
	struct binding bd = {row, b->vars};
	for (size_t j = 0; j < nsel; j++) {
		row[var] = sel[j];
		bool ok = true;
		for (size_t i = 0; sel_node && ok && i < sel_node->nconds; i++)
			if (!done[i])
				ok = vgq_truth(sel_node->conds[i], &bd) == T3_TRUE;
		for (size_t i = 0; sel_node && ok && i < sel_node->ntconds; i++)
			ok = vgq_tpred(sel_node->tconds[i], &bd);
		if (ok)
			t.rows[t.n++ * t.width + (size_t)var] = sel[j];
	}
	free(sel);
	free(done);
	return t;
}

void vgq_note_state(struct vgq_session *s, uint64_t n)
{
	if (n > s->peak_state)
		s->peak_state = n;
}

static struct btable product(struct vgq_session *s, const struct bstmt *b, const struct pnode *n,
                             struct btable *l, struct btable *r)
{
	struct btable t = {.width = b->nvars, .limit = vgq_row_limit(s, b)};
	uint32_t row[VGQ_MAX_VARS];
	vgq_note_state(s, r->n);
	for (size_t i = 0; i < l->n && !t.overflow; i++)
		for (size_t j = 0; j < r->n && !t.overflow; j++) {
			const uint32_t *x = l->rows + i * l->width, *y = r->rows + j * r->width;
			for (size_t v = 0; v < b->nvars; v++)
				row[v] = (n->l->vars >> v) & 1 ? x[v] : y[v];
			if (vgq_passes(b, n, row))
				vgq_btable_push(&t, row);
		}
	return t;
}

struct btable vgq_exec(struct vgq_session *s, const struct plan *p, const struct pnode *n)
{
	const struct bstmt *b = p->stmt;
	switch (n->kind) {
	case P_SCAN:
		return scan_select(s, b, NULL, n->var);
	case P_SELECT:
	case P_TSELECT:
		if (n->l->kind == P_SCAN)
			return scan_select(s, b, n, n->l->var);
		else {
			struct btable t = vgq_exec(s, p, n->l);
			vgq_filter(b, n, &t);
			return t;
		}
	case P_PROJECT:
	case P_TPROJECT:
		return vgq_exec(s, p, n->l);
	default:
		break;
	}
	struct btable l = vgq_exec(s, p, n->l);
	struct btable r = vgq_exec(s, p, n->r);
	struct btable t;
	switch (n->kind) {
	case P_HASHJOIN:
		t = vgq_hashjoin(s, b, n, &l, &r);
		break;
	case P_SWEEPJOIN:
		t = vgq_sweepjoin(s, b, n, &l, &r);
		break;
	case P_SEMIJOIN:
		t = vgq_semijoin(s, b, n, &l, &r);
		break;
	default:
		t = product(s, b, n, &l, &r);
	}
	t.overflow |= l.overflow || r.overflow;
	if (t.rows != l.rows)
		free(l.rows);
	free(r.rows);
	return t;
}
