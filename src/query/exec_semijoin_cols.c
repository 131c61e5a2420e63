/* The semi-join over columns: when its key is one integer attribute on each side (or
 * there is none) and each side's time is a variable's own valid time, its begin or its
 * end, the groups are an open-addressing table from the key's 64 bits to the one time
 * per key (exec_semijoin.c), filled and probed by reading the columns directly: no
 * expression is evaluated per tuple. The right's bindings are reduced as the workers make
 * them, each into its own table (no binding kept), the tables merged after. Other shapes
 * take the general path. */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "query/exec_semijoin_cols.h"
#include "relations/columns.h" /* vgq_mix */

/* The 64 bits of an integer attribute without nulls, or NULL: int and uint columns are
 * both arrays of 64-bit words, equal values equal words within one type. */
static const uint64_t *key_column(const struct bstmt *b, const struct bx *x, enum vgq_type *type,
                                  int *var)
{
	if (x->kind != BX_ATTR)
		return NULL;
	const struct vgq_relation *r = b->vars[x->var].rel;
	enum vgq_type t = r->attrs[x->attr].type;
	if ((t != VGQ_INT && t != VGQ_UINT) || (r->nulls && r->nulls[x->attr]))
		return NULL;
	*type = t;
	*var = x->var;
	return r->cols[x->attr].u;
}

/* The column holding x's begin (end: its end), for x a variable's own valid time or its
 * begin or end (these are never nothing), or NULL. */
static const int64_t *time_column(const struct bstmt *b, const struct tx *x, bool end, int *var)
{
	const struct tx *v = x->kind == TX_BEGIN || x->kind == TX_END ? x->a : x;
	if (v->kind != TX_VAR)
		return NULL;
	const struct bvar *bv = &b->vars[v->var];
	bool to = x->kind == TX_END || (x->kind == TX_VAR && end);
	*var = v->var;
	if (to && !bv->event)
		return bv->rel->to;
	return bv->rel->from;
}

bool vgq_semicols_init(const struct bstmt *b, const struct pnode *p, struct vgq_semicols *c)
{
	memset(c, 0, sizeof *c);
	c->mode = p->semi;
	if (p->nkeys > 1)
		return false;
	if (p->nkeys) {
		enum vgq_type lt = 0, rt = 0; /* set whenever key_column gives a column */
		c->lkey = key_column(b, p->lkeys[0], &lt, &c->lkvar);
		c->rkey = key_column(b, p->rkeys[0], &rt, &c->rkvar);
		if (!c->lkey || !c->rkey || lt != rt)
			return false;
	}
	if (p->semi != SEMI_EXISTS) {
		/* least end of the right against the left's begin; greatest begin of the right
		 * against the left's end */
		bool min_end = p->semi == SEMI_MIN_END;
		c->rtime = time_column(b, p->rt, min_end, &c->rtvar);
		c->ltime = time_column(b, p->lt, !min_end, &c->ltvar);
		if (!c->rtime || !c->ltime)
			return false;
	}
	return true;
}

static uint64_t slot_of(const struct vgq_semicols *c, uint64_t key)
{
	return vgq_mix(key) & c->mask;
}

/* The slot of key: its own, or the empty one where it goes. */
static size_t find(const struct vgq_semicols *c, uint64_t key)
{
	size_t i = slot_of(c, key);
	while (c->used[i] && c->keys[i] != key)
		i = (i + 1) & c->mask;
	return i;
}

/* Bytes of a table of `size` slots: key, time and used flag each. */
#define SLOT_BYTES (sizeof(uint64_t) + sizeof(int64_t) + sizeof(uint8_t))

/* Takes `bytes` more of the table from the query's memory budget; past it the statement
 * stops (the caller builds no further). */
static bool charge(struct vgq_semicols *c, size_t bytes)
{
	if (!vgq_mem_take(c->mem, "the semi-join's table", bytes))
		return false;
	c->charged += bytes;
	return true;
}

static void grow(struct vgq_semicols *c)
{
	struct vgq_semicols old = *c;
	size_t size = (old.mask + 1) * 2;
	c->mask = size - 1;
	c->keys = vgq_xcalloc(size, sizeof *c->keys);
	c->when = vgq_xcalloc(size, sizeof *c->when);
	c->used = vgq_xcalloc(size, sizeof *c->used);
	for (size_t i = 0; i <= old.mask; i++)
		if (old.used[i]) {
			size_t j = find(c, old.keys[i]);
			c->used[j] = 1;
			c->keys[j] = old.keys[i];
			c->when[j] = old.when[i];
		}
	free(old.keys);
	free(old.when);
	free(old.used);
}

/* An empty table of 64 slots for c's session; false past the memory budget. */
static bool table_init(struct vgq_semicols *c, struct vgq_session *s)
{
	size_t size = 64;
	c->mem = s;
	if (!charge(c, size * SLOT_BYTES))
		return false;
	c->mask = size - 1;
	c->keys = vgq_xcalloc(size, sizeof *c->keys);
	c->when = vgq_xcalloc(size, sizeof *c->when);
	c->used = vgq_xcalloc(size, sizeof *c->used);
	return true;
}

/* Key's group takes time t: the least (greatest) of its times. False past the budget. */
static bool add(struct vgq_semicols *c, uint64_t key, int64_t t)
{
	size_t i = find(c, key);
	if (c->used[i]) {
		if (c->mode == SEMI_MIN_END ? t < c->when[i] : t > c->when[i])
			c->when[i] = t;
		return true;
	}
	c->used[i] = 1;
	c->keys[i] = key;
	c->when[i] = t;
	/* the old table and the new one are both held while it grows */
	if (++c->ngroups * 2 > c->mask) {
		if (!charge(c, (c->mask + 1) * 2 * SLOT_BYTES))
			return false;
		grow(c);
		vgq_mem_give(c->mem, (c->mask + 1) / 2 * SLOT_BYTES);
		c->charged -= (c->mask + 1) / 2 * SLOT_BYTES;
	}
	return true;
}

/* The right's bindings reduced as they are made: each worker's morsels into its own
 * table (a min or max per key needs no order), the tables merged after. */
struct reduce {
	struct vgq_semicols *c;
	struct vgq_session *s;
	struct vgq_semicols *part; /* per worker */
	unsigned threads;
	bool refused; /* a table went past the budget (set atomically) */
};

static void reduce_begin(void *p, size_t nmorsels, unsigned threads)
{
	(void)nmorsels;
	struct reduce *r = p;
	r->threads = threads;
	r->part = vgq_xcalloc(threads, sizeof *r->part);
	for (unsigned w = 0; w < threads; w++) {
		r->part[w] = *r->c;
		r->part[w].charged = 0;
		if (!table_init(&r->part[w], r->s))
			r->refused = true;
	}
}

static void reduce_morsel(void *p, unsigned w, size_t m, const uint32_t *rows, size_t n)
{
	(void)m;
	struct reduce *r = p;
	struct vgq_semicols *c = &r->part[w];
	size_t width = c->width;
	if (__atomic_load_n(&r->refused, __ATOMIC_RELAXED) || !c->used)
		return;
	for (size_t j = 0; j < n; j++) {
		const uint32_t *y = rows + j * width;
		if (!add(c, c->rkey ? c->rkey[y[c->rkvar]] : 0,
		         c->rtime ? c->rtime[y[c->rtvar]] : 0)) {
			__atomic_store_n(&r->refused, true, __ATOMIC_RELAXED);
			return;
		}
	}
}

static void table_free(struct vgq_semicols *c)
{
	if (c->mem)
		vgq_mem_give(c->mem, c->charged);
	c->charged = 0;
	free(c->keys);
	free(c->when);
	free(c->used);
	c->keys = NULL;
	c->when = NULL;
	c->used = NULL;
}

void vgq_semicols_build(struct vgq_semicols *c, struct vgq_session *s, struct xnode *right)
{
	c->width = right->cx->width;
	struct reduce r = {.c = c, .s = s};
	struct vgq_sink sink = {reduce_begin, reduce_morsel, &r};
	vgq_rows_stream(right, &sink);
	c->mem = s;
	if (!r.part || r.refused) { /* past the budget: the statement stops, no table */
		for (unsigned w = 0; w < r.threads; w++)
			table_free(&r.part[w]);
		free(r.part);
		return;
	}
	/* the first worker's table is the groups; the others' folded into it */
	struct vgq_semicols *first = &r.part[0];
	c->keys = first->keys;
	c->when = first->when;
	c->used = first->used;
	c->mask = first->mask;
	c->ngroups = first->ngroups;
	c->charged = first->charged;
	for (unsigned w = 1; w < r.threads; w++) {
		const struct vgq_semicols *o = &r.part[w];
		for (size_t i = 0; i <= o->mask && c->used; i++)
			if (o->used[i] && !add(c, o->keys[i], o->when[i])) {
				table_free(c); /* the statement stops */
				break;
			}
		table_free(&r.part[w]);
	}
	free(r.part);
}

size_t vgq_semicols_filter(const struct vgq_semicols *c, uint32_t *rows, size_t n, size_t w)
{
	size_t k = 0;
	if (!c->used)
		return 0; /* no table: past the memory budget, the statement stops */
	for (size_t j = 0; j < n; j++) {
		const uint32_t *x = rows + j * w;
		uint64_t key = c->lkey ? c->lkey[x[c->lkvar]] : 0;
		int64_t t = c->ltime ? c->ltime[x[c->ltvar]] : 0;
		if (vgq_semicols_keeps(c, key, t)) {
			if (k != j)
				memcpy(rows + k * w, x, w * sizeof *x);
			k++;
		}
	}
	return k;
}

void vgq_semicols_free(struct vgq_semicols *c)
{
	table_free(c);
}
