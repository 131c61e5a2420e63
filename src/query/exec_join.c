/* The joins of the optimized plan.
 *
 * hash join   builds a table of the right input on its key expressions and probes it
 *             with each left binding; null keys match nothing.
 * sweep join  `lt overlap rt`: both inputs ordered by the start of their temporal
 *             expression and merged; each side keeps the tuples still open at the sweep
 *             position (its active window), and a tuple arriving is paired with the other
 *             side's window. State: the overlap window, not the inputs.
 * semi-join   an existential right variable: per distinct key, only the one time that can
 *             still satisfy the `precede` (least end, or greatest begin) is kept. */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "relations/internal.h"

static void merge_row(const struct bstmt *b, uint64_t lvars, const uint32_t *x, const uint32_t *y,
                      uint32_t *row)
{
	for (size_t v = 0; v < b->nvars; v++)
		row[v] = (lvars >> v) & 1 ? x[v] : y[v];
}

/* The key values of one row; false if one is null (it matches nothing). */
static bool keys_of(const struct bstmt *b, struct bx *const *keys, size_t nkeys,
                    const uint32_t *row, struct vx_value *out, uint64_t *hash)
{
	struct binding bd = {row, b->vars};
	uint64_t h = 0x12345;
	for (size_t k = 0; k < nkeys; k++) {
		out[k] = vgq_eval(keys[k], &bd);
		if (out[k].null)
			return false;
		h = (h ^ vgq_value_hash(&out[k])) * 0x100000001b3ull;
	}
	*hash = vgq_mix(h);
	return true;
}

static bool keys_equal(const struct vx_value *a, const struct vx_value *c, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (!vgq_value_equal(&a[k], &c[k]))
			return false;
	return true;
}

struct table {
	uint32_t *head; /* bucket -> first entry + 1 (0: empty) */
	uint32_t *next; /* entry -> next entry + 1 */
	uint64_t *hash;
	size_t mask;
};

static void table_init(struct table *t, size_t n)
{
	size_t size = 16;
	while (size < 2 * n)
		size *= 2;
	t->head = vgq_xcalloc(size, sizeof *t->head);
	t->next = vgq_xcalloc(n ? n : 1, sizeof *t->next);
	t->hash = vgq_xcalloc(n ? n : 1, sizeof *t->hash);
	t->mask = size - 1;
}

static void table_add(struct table *t, uint32_t entry, uint64_t h)
{
	size_t bkt = h & t->mask;
	t->hash[entry] = h;
	t->next[entry] = t->head[bkt];
	t->head[bkt] = entry + 1;
}

static void table_free(struct table *t)
{
	free(t->head);
	free(t->next);
	free(t->hash);
}

struct btable vgq_hashjoin(struct vgq_session *s, const struct bstmt *b, const struct pnode *n,
                           struct btable *l, struct btable *r)
{
	struct btable out = {.width = b->nvars, .limit = vgq_row_limit(s, b)};
	struct table t;
	table_init(&t, r->n);
	struct vx_value kv[VGQ_MAX_VARS], kr[VGQ_MAX_VARS];
	size_t built = 0;
	for (size_t j = 0; j < r->n; j++) {
		uint64_t h;
		if (keys_of(b, n->rkeys, n->nkeys, r->rows + j * r->width, kr, &h)) {
			table_add(&t, (uint32_t)j, h);
			built++;
		}
	}
	vgq_note_state(s, built);
	uint32_t row[VGQ_MAX_VARS];
	for (size_t i = 0; i < l->n && !out.overflow; i++) {
		const uint32_t *x = l->rows + i * l->width;
		uint64_t h;
		if (!keys_of(b, n->lkeys, n->nkeys, x, kv, &h))
			continue;
		for (uint32_t e = t.head[h & t.mask]; e; e = t.next[e - 1]) {
			if (t.hash[e - 1] != h)
				continue;
			const uint32_t *y = r->rows + (size_t)(e - 1) * r->width;
			uint64_t hy;
			keys_of(b, n->rkeys, n->nkeys, y, kr, &hy);
			if (!keys_equal(kv, kr, n->nkeys))
				continue;
			merge_row(b, n->l->vars, x, y, row);
			if (vgq_passes(b, n, row))
				vgq_btable_push(&out, row);
		}
	}
	table_free(&t);
	return out;
}

/* ---- sweep join ---- */

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

/* The items of a table whose temporal expression is not nothing (nor an empty interval),
 * ordered by begin. */
static struct item *items_of(const struct bstmt *b, const struct tx *x, const struct btable *t,
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
	bool sorted = true; /* scans of base relations come in start order already */
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

struct btable vgq_sweepjoin(struct vgq_session *s, const struct bstmt *b, const struct pnode *n,
                            struct btable *l, struct btable *r)
{
	struct btable out = {.width = b->nvars, .limit = vgq_row_limit(s, b)};
	size_t nl, nr;
	struct item *li = items_of(b, n->lt, l, &nl), *ri = items_of(b, n->rt, r, &nr);
	struct window wl = {0}, wr = {0};
	uint32_t row[VGQ_MAX_VARS];
	size_t i = 0, j = 0;
	while ((i < nl || j < nr) && !out.overflow) {
		bool left = j == nr || (i < nl && li[i].b <= ri[j].b);
		const struct item *it = left ? &li[i++] : &ri[j++];
		struct window *other = left ? &wr : &wl;
		window_expire(other, it->b);
		for (size_t k = 0; k < other->n; k++) {
			const struct item *o = &other->a[k];
			const uint32_t *x = l->rows + (size_t)(left ? it->row : o->row) * l->width;
			const uint32_t *y = r->rows + (size_t)(left ? o->row : it->row) * r->width;
			merge_row(b, n->l->vars, x, y, row);
			if (vgq_passes(b, n, row))
				vgq_btable_push(&out, row);
		}
		window_add(left ? &wl : &wr, it);
		vgq_note_state(s, wl.n + wr.n);
	}
	free(li);
	free(ri);
	free(wl.a);
	free(wr.a);
	return out;
}

/* ---- semi-join ---- */

struct btable vgq_semijoin(struct vgq_session *s, const struct bstmt *b, const struct pnode *n,
                           struct btable *l, struct btable *r)
{
	/* groups: one representative row of the right per distinct key, and its time */
	struct table t;
	table_init(&t, r->n);
	uint32_t *rep = vgq_xcalloc(r->n ? r->n : 1, sizeof *rep);
	int64_t *when = vgq_xcalloc(r->n ? r->n : 1, sizeof *when);
	size_t ngroups = 0;
	struct vx_value kv[VGQ_MAX_VARS], kg[VGQ_MAX_VARS];
	for (size_t j = 0; j < r->n; j++) {
		const uint32_t *y = r->rows + j * r->width;
		uint64_t h;
		if (!keys_of(b, n->rkeys, n->nkeys, y, kv, &h))
			continue;
		int64_t tm = 0;
		if (n->semi != SEMI_EXISTS) {
			struct binding bd = {y, b->vars};
			struct tval v = vgq_teval(n->rt, &bd);
			if (v.kind == TV_NOTHING)
				continue;
			tm = n->semi == SEMI_MIN_END ? v.e : v.b;
		}
		uint32_t g = 0;
		for (uint32_t e = t.head[h & t.mask]; e && !g; e = t.next[e - 1]) {
			uint64_t hg;
			if (t.hash[e - 1] != h)
				continue;
			keys_of(b, n->rkeys, n->nkeys, r->rows + (size_t)rep[e - 1] * r->width, kg,
			        &hg);
			if (keys_equal(kv, kg, n->nkeys))
				g = e;
		}
		if (!g) {
			rep[ngroups] = (uint32_t)j;
			when[ngroups] = tm;
			table_add(&t, (uint32_t)ngroups, h);
			ngroups++;
		} else if (n->semi == SEMI_MIN_END ? tm < when[g - 1] : tm > when[g - 1]) {
			when[g - 1] = tm;
		}
	}
	vgq_note_state(s, ngroups);
	size_t k = 0;
	for (size_t i = 0; i < l->n; i++) {
		const uint32_t *x = l->rows + i * l->width;
		uint64_t h;
		if (!keys_of(b, n->lkeys, n->nkeys, x, kv, &h))
			continue;
		bool keep = false;
		for (uint32_t e = t.head[h & t.mask]; e && !keep; e = t.next[e - 1]) {
			uint64_t hg;
			if (t.hash[e - 1] != h)
				continue;
			keys_of(b, n->rkeys, n->nkeys, r->rows + (size_t)rep[e - 1] * r->width, kg,
			        &hg);
			if (!keys_equal(kv, kg, n->nkeys))
				continue;
			if (n->semi == SEMI_EXISTS) {
				keep = true;
				break;
			}
			struct binding bd = {x, b->vars};
			struct tval v = vgq_teval(n->lt, &bd);
			if (v.kind == TV_NOTHING)
				break;
			keep = n->semi == SEMI_MIN_END ? when[e - 1] <= v.b : v.e <= when[e - 1];
			break;
		}
		if (keep) {
			if (k != i)
				memmove(l->rows + k * l->width, x, l->width * sizeof *x);
			k++;
		}
	}
	l->n = k;
	table_free(&t);
	free(rep);
	free(when);
	struct btable out = *l; /* the left table, filtered in place */
	return out;
}
