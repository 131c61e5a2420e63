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

/* Closed [b, last]: an interval [b, e) is [b, e - 1], an event at t is [t, t] (its
 * [t, t + 1) would overflow at "forever"). */
struct item {
	int64_t b, last;
	uint64_t key; /* the hash of its side's join keys (0 without keys) */
	uint32_t row;
};

static int by_begin(const void *x, const void *y)
{
	const struct item *a = x, *c = y;
	if (a->b != c->b)
		return a->b < c->b ? -1 : 1;
	return a->row < c->row ? -1 : a->row > c->row;
}

/* One input's items in begin order: made (it), or read straight from the columns of a
 * whole scan of a relation already in begin order whose every tuple has an item (a
 * variable's own time, no empty interval, an exact key without nulls, or no key): item
 * k is then tuple k, and nothing is written per tuple. */
struct side {
	struct item *it;          /* the items, or NULL: from the columns below */
	const int64_t *from, *to; /* the variable's time (to NULL: an event relation) */
	const uint64_t *key;      /* the exact key's column (the bits), or NULL: keys 0 */
	size_t n;
};

static inline int64_t side_begin(const struct side *s, size_t k)
{
	return s->it ? s->it[k].b : s->from[k];
}

static inline struct item side_item(const struct side *s, size_t k)
{
	if (s->it)
		return s->it[k];
	int64_t b = s->from[k];
	return (struct item){b, s->to ? s->to[k] - 1 : b, s->key ? s->key[k] : 0, (uint32_t)k};
}

/* Equalities between the two sides among the residual conditions: their keys' hashes
 * tell most non-matching pairs apart before a pair is made and the conditions (which
 * still decide) are evaluated. */
struct sweep_keys {
	struct bx **l, **r;
	size_t n;
};

struct items_job {
	const struct bstmt *b;
	const struct tx *x;
	const struct xrows *t;
	struct item *it;
	bool *some;             /* per binding: it has an item */
	struct bx *const *keys; /* this side's, or NULL */
	size_t nkeys;
	const struct bx *exact; /* the one key read from its column (exact_l, exact_r) */
	int whole;              /* a whole scan's variable (t holds no rows), or -1 */
	size_t width;
};

/* The key of row `row` of the relation `exact` reads; false when it is null. */
static bool exact_key_of(const struct bstmt *b, const struct bx *exact, const uint32_t *row,
                         uint64_t *key)
{
	const struct vgq_relation *rel = b->vars[exact->var].rel;
	uint32_t t = row[exact->var];
	if (rel->nulls && rel->nulls[exact->attr] && rel->nulls[exact->attr][t])
		return false;
	const union vgq_column *c = &rel->cols[exact->attr];
	*key = exact->type == VX_UINT ? c->u[t] : (uint64_t)c->i[t];
	return true;
}

static void items_piece(void *p, size_t lo, size_t hi)
{
	struct items_job *j = p;
	const struct bvar *var = j->x->kind == TX_VAR ? &j->b->vars[j->x->var] : NULL;
	uint32_t own[j->width]; /* a whole scan's binding: its variable's place only */
	memset(own, 0, sizeof own);
	for (size_t i = lo; i < hi; i++) {
		const uint32_t *row = own;
		if (j->whole >= 0)
			own[j->whole] = (uint32_t)i;
		else
			row = j->t->rows + i * j->t->width;
		struct binding bd = {row, j->b->vars};
		/* a variable's own time (the usual operand) read from its columns */
		struct tval v = var ? vgq_var_time(var, row[j->x->var]) : vgq_teval(j->x, &bd);
		j->some[i] = !(v.kind == TV_NOTHING || (v.kind == TV_INTERVAL && v.b >= v.e));
		j->it[i].b = v.b;
		j->it[i].last = j->some[i] && v.kind != TV_EVENT ? v.e - 1 : v.b;
		j->it[i].row = (uint32_t)i;
		j->it[i].key = 0;
		/* a null key matches nothing (the equality is a conjunct that is then not
		 * true): such a binding has no item */
		if (j->exact) {
			if (!exact_key_of(j->b, j->exact, row, &j->it[i].key))
				j->some[i] = false;
		} else if (j->nkeys) {
			struct vx_value kv[j->nkeys];
			if (!vgq_keys_of(j->b, j->keys, j->nkeys, bd.rows, kv, &j->it[i].key))
				j->some[i] = false;
		}
	}
}

/* Checks that a relation's tuples are their own items: begins in order, no empty
 * interval, no null key (evaluated by the session's workers). */
struct direct_job {
	const int64_t *from, *to;
	const uint8_t *nulls;
	bool bad; /* set atomically */
};

static void direct_piece(void *p, size_t lo, size_t hi)
{
	struct direct_job *j = p;
	bool bad = false;
	for (size_t i = lo ? lo : 1; i < hi; i++)
		bad |= j->from[i - 1] > j->from[i];
	for (size_t i = lo; j->to && i < hi; i++)
		bad |= j->from[i] >= j->to[i];
	for (size_t i = lo; j->nulls && i < hi; i++)
		bad |= j->nulls[i] != 0;
	if (bad)
		__atomic_store_n(&j->bad, true, __ATOMIC_RELAXED);
}

/* A side read straight from its relation's columns (struct side), when it may be. */
static bool direct_side(struct vgq_session *s, const struct bstmt *b, const struct tx *x,
                        size_t nkeys, const struct bx *exact, int whole, struct side *out)
{
	if (whole < 0 || x->kind != TX_VAR || x->var != whole || (nkeys && !exact) ||
	    (exact && exact->var != whole))
		return false;
	const struct bvar *var = &b->vars[whole];
	const struct vgq_relation *rel = var->rel;
	if (rel->ntuples > UINT32_MAX)
		return false;
	struct direct_job j = {rel->from, var->event ? NULL : rel->to,
	                       exact && rel->nulls ? rel->nulls[exact->attr] : NULL, false};
	size_t n = rel->ntuples;
	vgq_parallel_for(s, n, vgq_grain(s, n, 16, 65536), direct_piece, &j);
	if (j.bad)
		return false;
	*out = (struct side){NULL, j.from, j.to, exact ? rel->cols[exact->attr].u : NULL, n};
	return true;
}

/* The items of the bindings whose temporal expression is not nothing (nor an empty
 * interval), ordered by begin (evaluated by the session's workers). */
static struct item *items_of(struct vgq_session *s, const struct bstmt *b, const struct tx *x,
                             const struct xrows *t, struct bx *const *keys, size_t nkeys,
                             const struct bx *exact, int whole, size_t *n, struct vgq_state *mem)
{
	size_t nb = whole >= 0 ? b->vars[whole].rel->ntuples : t->n; /* bindings */
	/* from the memory budget, or past it in the spill file (exec_memory.c) */
	struct item *it = vgq_state_alloc(s, "the sweep join's items", nb * sizeof *it, mem);
	if (!it) { /* the statement stops */
		*n = 0;
		return mem->p = vgq_xcalloc(1, sizeof *it);
	}
	struct items_job j = {b,    x,     t,     it,    vgq_xcalloc(nb ? nb : 1, sizeof *j.some),
	                      keys, nkeys, exact, whole, b->nvars ? b->nvars : 1};
	vgq_parallel_for(s, nb, vgq_grain(s, nb, 16, 16384), items_piece, &j);
	size_t k = 0;
	for (size_t i = 0; i < nb; i++)
		if (j.some[i])
			it[k++] = it[i];
	free(j.some);
	bool sorted = true;
	for (size_t i = 1; i < k && sorted; i++)
		sorted = by_begin(&it[i - 1], &it[i]) <= 0;
	if (!sorted) /* a total order: the same at every thread count */
		vgq_parallel_sort(s, it, k, sizeof *it, by_begin, NULL);
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

struct sweep {
	struct xrows l, r;
	struct side ls, rs;
	size_t i, j;
	size_t iend, jend; /* the merge stops there (a morsel's end; ls.n, rs.n) */
	bool built;
	bool borrowed; /* a worker's: inputs and items are the original's */
	struct sweep_keys keys;
	/* The residual conditions are decided without the evaluator: there are none
	 * (`plain`), or only one equality of integer attributes whose values are then the
	 * items' keys (`exact`, its two sides; a null key has no item). */
	bool plain;
	const struct bx *exact_l, *exact_r;
	/* A side that is a whole scan is not collected: an item's row is its variable's
	 * tuple (the variable, or -1: the side's rows are l, r). */
	int whole_l, whole_r;
	/* Parallel: morsels are ranges of begin times, [bound[m - 1], bound[m]); a morsel
	 * finds each side's items still open at its start among those begun at most `near`
	 * before it and the side's few longer ones (struct reach). */
	int64_t *bound;
	size_t nbounds;
	struct reach {
		uint64_t near; /* unsigned: an item open to "forever" is longer than INT64_MAX */
		uint32_t *far; /* the items longer than near, in order */
		size_t nfar;
	} reach_l, reach_r;
	struct window wl, wr;
	/* the arriving item being paired with the other window, from other->a[k] on; the
	 * window's items still open are moved to its first `kept` places as they are read */
	struct item cur;
	bool has_cur, cur_left;
	size_t k, kept;
	struct vgq_state lmem, rmem; /* ls's and rs's items' memory (exec_memory.c) */
};

/* An attribute of integers: its values are its keys exactly. */
static bool exact_side(const struct xnode *n, const struct bx *k)
{
	if (k->kind != BX_ATTR || (k->type != VX_INT && k->type != VX_UINT))
		return false;
	const struct vgq_relation *rel = n->cx ? n->cx->b->vars[k->var].rel : NULL;
	return rel && rel->attrs[k->attr].type == (k->type == VX_UINT ? VGQ_UINT : VGQ_INT);
}

static void sweep_open(struct xnode *n)
{
	struct sweep *st = vgq_xcalloc(1, sizeof *st);
	const struct pnode *p = n->p;
	st->keys.l = vgq_xcalloc(p->nconds + 1, sizeof *st->keys.l);
	st->keys.r = vgq_xcalloc(p->nconds + 1, sizeof *st->keys.r);
	for (size_t i = 0; i < p->nconds; i++)
		if (vgq_join_key(p->conds[i], n->l->p->vars, n->r->p->vars, &st->keys.l[st->keys.n],
		                 &st->keys.r[st->keys.n]))
			st->keys.n++;
	st->plain = !p->nconds && !p->ntconds;
	if (p->nconds == 1 && !p->ntconds && st->keys.n == 1 && exact_side(n, st->keys.l[0]) &&
	    exact_side(n, st->keys.r[0]) && st->keys.l[0]->type == st->keys.r[0]->type) {
		st->exact_l = st->keys.l[0];
		st->exact_r = st->keys.r[0];
	}
	n->state = st;
}

static void build(struct xnode *n, struct sweep *st)
{
	const struct bstmt *b = n->cx->b;
	st->whole_l = vgq_scan_whole(n->l);
	st->whole_r = vgq_scan_whole(n->r);
	if (st->whole_l < 0)
		vgq_rows_collect(n->l, &st->l);
	if (st->whole_r < 0)
		vgq_rows_collect(n->r, &st->r);
	struct vgq_session *s = n->cx->s;
	if (!direct_side(s, b, n->p->lt, st->keys.n, st->exact_l, st->whole_l, &st->ls))
		st->ls.it = items_of(s, b, n->p->lt, &st->l, st->keys.l, st->keys.n, st->exact_l,
		                     st->whole_l, &st->ls.n, &st->lmem);
	if (!direct_side(s, b, n->p->rt, st->keys.n, st->exact_r, st->whole_r, &st->rs))
		st->rs.it = items_of(s, b, n->p->rt, &st->r, st->keys.r, st->keys.n, st->exact_r,
		                     st->whole_r, &st->rs.n, &st->rmem);
	st->iend = st->ls.n;
	st->jend = st->rs.n;
	st->built = true;
}

static size_t sweep_next(struct xnode *n, uint32_t *out)
{
	struct sweep *st = n->state;
	size_t w = n->cx->width;
	if (!st->built)
		build(n, st);
	uint64_t lvars = n->l->p->vars;
	/* without conditions for the evaluator, a pair is its merged binding */
	bool decided = st->plain || st->exact_l;
	size_t limit = n->cx->limit;
	size_t k = 0;
	while (k < VGQ_BATCH) {
		if (!st->has_cur) {
			if (st->i == st->iend && st->j == st->jend)
				break;
			bool left = st->j == st->jend ||
			            (st->i < st->iend &&
			             side_begin(&st->ls, st->i) <= side_begin(&st->rs, st->j));
			st->cur = left ? side_item(&st->ls, st->i++) : side_item(&st->rs, st->j++);
			st->has_cur = true;
			st->cur_left = left;
			st->k = st->kept = 0;
		}
		bool left = st->cur_left;
		struct window *other = left ? &st->wr : &st->wl;
		int64_t at = st->cur.b;
		uint64_t key = st->cur.key;
		int cw = left ? st->whole_l : st->whole_r, ow = left ? st->whole_r : st->whole_l;
		const uint32_t *cur =
		    cw >= 0 ? NULL : (left ? st->l.rows : st->r.rows) + (size_t)st->cur.row * w;
		const uint32_t *orows = left ? st->r.rows : st->l.rows;
		/* the arriving side's variables from cur, the other's from each item's row */
		uint64_t cvars = left ? lvars : ~lvars;
		for (; st->k < other->n && k < VGQ_BATCH; st->k++) {
			/* the items that end before the arrival leave the window as it is read */
			if (other->a[st->k].last < at)
				continue;
			if (st->kept != st->k)
				other->a[st->kept] = other->a[st->k];
			const struct item *o = &other->a[st->kept++];
			if (o->key != key) /* unequal keys (all 0 without keys) */
				continue;
			uint32_t *row = out + k * w;
			if (ow >= 0)
				row[ow] = o->row;
			else
				for (size_t v = 0; v < w; v++)
					if (!((cvars >> v) & 1))
						row[v] = orows[(size_t)o->row * w + v];
			if (cw >= 0)
				row[cw] = st->cur.row;
			else
				for (size_t v = 0; v < w; v++)
					if ((cvars >> v) & 1)
						row[v] = cur[v];
			if (decided) {
				if (limit && n->emitted >= limit) { /* as vgq_node_emit_ok */
					vgq_set_overflow(n->cx);
					return 0;
				}
				n->emitted++;
			} else {
				if (!vgq_node_passes(n, row))
					continue;
				if (!vgq_node_emit_ok(n))
					return 0;
			}
			k++;
		}
		if (st->k == other->n) {
			other->n = st->kept;
			window_add(left ? &st->wl : &st->wr, &st->cur);
			vgq_note_state(n->cx->s, st->wl.n + st->wr.n);
			st->has_cur = false;
		}
	}
	return k;
}

static void sweep_close(struct xnode *n)
{
	struct sweep *st = n->state;
	if (!st)
		return;
	if (!st->borrowed) {
		vgq_rows_free(&st->l);
		vgq_rows_free(&st->r);
		vgq_state_free(&st->lmem);
		vgq_state_free(&st->rmem);
		free(st->bound);
		free(st->reach_l.far);
		free(st->reach_r.far);
		free(st->keys.l);
		free(st->keys.r);
	}
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

static void sweep_build(struct xnode *n)
{
	struct sweep *st = n->state;
	if (!st->built)
		build(n, st);
}

/* The first item beginning at or after t. */
static size_t first_from(const struct side *sd, int64_t t)
{
	size_t lo = 0, hi = sd->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (side_begin(sd, mid) < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* b - a for a <= b, exact in unsigned arithmetic (as int64_t it may overflow). */
static uint64_t span(int64_t a, int64_t b)
{
	return (uint64_t)b - (uint64_t)a;
}

/* A side's reach: `near` the least 2^b - 1 that at most a 256th of its items (or 16)
 * are longer than, those items listed. A few long items (a thread preempted while a
 * request is open) then do not make every morsel look back as far as the longest. */
static inline uint64_t item_span(const struct side *sd, size_t i)
{
	if (sd->it)
		return span(sd->it[i].b, sd->it[i].last);
	return sd->to ? (uint64_t)sd->to[i] - 1 - (uint64_t)sd->from[i] : 0;
}

static struct reach reach_of(const struct side *sd)
{
	if (!sd->it && !sd->to) /* events read from their column: every item an instant */
		return (struct reach){0, NULL, 0};
	size_t count[65] = {0}; /* items by the bit length of their span */
	for (size_t i = 0; i < sd->n; i++) {
		uint64_t len = item_span(sd, i);
		count[len ? 64 - __builtin_clzll(len) : 0]++;
	}
	size_t allowed = sd->n / 256 > 16 ? sd->n / 256 : 16, over = 0;
	int bits = 64;
	while (bits > 0 && over + count[bits] <= allowed)
		over += count[bits--];
	struct reach r = {bits == 64 ? UINT64_MAX : (1ull << bits) - 1, NULL, 0};
	r.far = vgq_xcalloc(over ? over : 1, sizeof *r.far);
	for (size_t i = 0; i < sd->n && r.nfar < over; i++)
		if (item_span(sd, i) > r.near)
			r.far[r.nfar++] = (uint32_t)i;
	return r;
}

/* Morsels are ranges of begin times cut at the begins of evenly spaced items of the
 * larger side. The merge takes items in begin order, so a range's arrivals are a
 * contiguous stretch of the serial merge, and every pair is emitted once: by the range
 * of its later-arriving item, against the other side's items still open there. */
static size_t sweep_morsels(struct xnode *n)
{
	struct sweep *st = n->state;
	size_t total = st->ls.n + st->rs.n;
	size_t m = total / vgq_grain(n->cx->s, total, 16, 16384);
	if (m > 1024)
		m = 1024;
	if (m < 2)
		return 1;
	const struct side *big = st->ls.n >= st->rs.n ? &st->ls : &st->rs;
	st->bound = vgq_xcalloc(m, sizeof *st->bound);
	st->nbounds = m - 1;
	for (size_t k = 1; k < m; k++)
		st->bound[k - 1] = side_begin(big, k * big->n / m);
	st->reach_l = reach_of(&st->ls);
	st->reach_r = reach_of(&st->rs);
	return m;
}

/* The items of one side begun before position `end` that are still open at t, in
 * arrival order: the window the serial merge has there (less what it would expire). */
static void window_at(struct window *w, const struct side *sd, size_t end, int64_t t,
                      const struct reach *r)
{
	w->n = 0;
	/* the items before end begin before t; those from `lo` on begin at most r->near
	 * before it; one before lo still open at t is longer than r->near, so listed in
	 * r->far (t - b is exact: b < t) */
	size_t lo = end;
	while (lo > 0 && span(side_begin(sd, lo - 1), t) <= r->near)
		lo--;
	for (size_t f = 0; f < r->nfar && r->far[f] < lo; f++) {
		struct item x = side_item(sd, r->far[f]);
		if (x.last >= t)
			window_add(w, &x);
	}
	for (size_t k = lo; k < end; k++) {
		struct item x = side_item(sd, k);
		if (x.last >= t)
			window_add(w, &x);
	}
}

static void sweep_seek(struct xnode *clone, size_t m)
{
	struct sweep *st = clone->state;
	bool first = m == 0, last = m == st->nbounds;
	int64_t from = first ? INT64_MIN : st->bound[m - 1];
	st->i = first ? 0 : first_from(&st->ls, from);
	st->j = first ? 0 : first_from(&st->rs, from);
	st->iend = last ? st->ls.n : first_from(&st->ls, st->bound[m]);
	st->jend = last ? st->rs.n : first_from(&st->rs, st->bound[m]);
	st->has_cur = false;
	window_at(&st->wl, &st->ls, st->i, from, &st->reach_l);
	window_at(&st->wr, &st->rs, st->j, from, &st->reach_r);
}

/* A worker merges morsels of the original's items with its own windows. */
static void *sweep_fork(struct xnode *clone, const struct xnode *orig)
{
	(void)clone;
	const struct sweep *o = orig->state;
	struct sweep *st = vgq_xcalloc(1, sizeof *st);
	*st = *o;
	st->borrowed = true;
	st->wl = st->wr = (struct window){0};
	st->has_cur = false;
	return st;
}

const struct xops vgq_sweepjoin_ops = {.name = "sweep join",
                                       .open = sweep_open,
                                       .next = sweep_next,
                                       .close = sweep_close,
                                       .explain = sweep_explain,
                                       .build = sweep_build,
                                       .fork = sweep_fork,
                                       .unfork = sweep_close,
                                       .morsels = sweep_morsels,
                                       .seek = sweep_seek};
