/* π and πT: from the final bindings of a retrieve to its result relation. Each binding
 * gets its valid time (the valid clause, or the overlap of all variables) and its target
 * values; identical tuples are kept once (the calculus defines a set), and under retrieve
 * unique value-equivalent intervals that overlap or meet are coalesced; the set is sorted
 * by valid time, then values, and stored column-wise like any relation.
 *
 * Values are materialised late: a row is its valid time and the binding it comes from,
 * and a target's value is evaluated from the binding where it is needed (to order rows
 * of equal times, which are few but for duplicates, and once when a kept row is stored).
 * Rows of 24 bytes instead of 24 + 32 per target: on a join of a million bindings that is
 * tens of megabytes never written, and page faults are much of what a result costs.
 * retrieve unique orders by values first, so it evaluates them once into an array. */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "query/radix.h"
#include "query/result_internal.h"
#include "relations/columns.h"

/* A row's place in the order: its times inline, so most comparisons stay in the array;
 * i: its binding (or, once values are materialised, its row of values). */
struct order_key {
	int64_t b, e;
	uint32_t i;
};

/* Where rows' values come from: the bindings (vals NULL) or materialised values. */
struct source {
	const struct bstmt *b;
	const uint32_t *rows; /* bindings, width per row */
	size_t width;
	const struct vx_value *vals; /* ntargets per row, or NULL */
	const struct direct *direct; /* per target when every one is direct, or NULL */
};

struct direct *vgq_direct_targets(const struct bstmt *b)
{
	struct direct *d = vgq_xcalloc(b->ntargets ? b->ntargets : 1, sizeof *d);
	for (size_t k = 0; k < b->ntargets; k++) {
		const struct bx *x = b->targets[k].value;
		const struct vgq_relation *rel = x->kind == BX_ATTR ? b->vars[x->var].rel : NULL;
		enum vgq_type want = x->type == VX_UINT ? VGQ_UINT : VGQ_INT;
		if (!rel || (x->type != VX_INT && x->type != VX_UINT) ||
		    rel->attrs[x->attr].type != want || (rel->nulls && rel->nulls[x->attr])) {
			free(d);
			return NULL;
		}
		d[k] = (struct direct){&rel->cols[x->attr], x->var, x->type == VX_UINT};
	}
	return d;
}

/* Target k of binding i, as its column holds it (the source's targets are direct). */
static inline uint64_t direct_bits(const struct source *src, uint32_t i, size_t k)
{
	const struct direct *d = &src->direct[k];
	uint32_t t = src->rows[(size_t)i * src->width + d->var];
	return d->u ? d->col->u[t] : (uint64_t)d->col->i[t];
}

static struct vx_value value_of(const struct source *src, uint32_t i, size_t k)
{
	if (src->vals)
		return src->vals[(size_t)i * src->b->ntargets + k];
	struct binding bd = {src->rows + (size_t)i * src->width, src->b->vars};
	return vgq_eval(src->b->targets[k].value, &bd);
}

static int values_order(const struct source *src, uint32_t i, uint32_t j)
{
	if (src->direct && !src->vals) {
		for (size_t k = 0; k < src->b->ntargets; k++) {
			uint64_t x = direct_bits(src, i, k), y = direct_bits(src, j, k);
			if (x != y)
				return src->direct[k].u ? (x < y ? -1 : 1)
				                        : ((int64_t)x < (int64_t)y ? -1 : 1);
		}
		return 0;
	}
	for (size_t k = 0; k < src->b->ntargets; k++) {
		struct vx_value x = value_of(src, i, k), y = value_of(src, j, k);
		int c = vgq_value_order(&x, &y);
		if (c)
			return c;
	}
	return 0;
}

/* The comparators' source: set before a sort (qsort's comparators take no context),
 * read by the sorting workers. */
static const struct source *sorting;

static int by_time_then_values(const void *x, const void *y)
{
	const struct order_key *a = x, *c = y;
	if (a->b != c->b)
		return a->b < c->b ? -1 : 1;
	if (a->e != c->e)
		return a->e < c->e ? -1 : 1;
	int o = values_order(sorting, a->i, c->i);
	return o ? o : (a->i < c->i ? -1 : a->i > c->i);
}

static void store(struct vgq_relation *rel, size_t a, size_t t, const struct vx_value *v)
{
	union vgq_column *c = &rel->cols[a];
	switch (rel->attrs[a].type) {
	case VGQ_INT:
		c->i[t] = v->type == VX_UINT ? (int64_t)v->v.u : v->v.i;
		break;
	case VGQ_UINT:
		c->u[t] = v->v.u;
		break;
	case VGQ_DOUBLE:
		c->d[t] = v->type == VX_DOUBLE ? v->v.d
		          : v->type == VX_UINT ? (double)v->v.u
		                               : (double)v->v.i;
		break;
	case VGQ_STRING:
		c->s[t] = v->v.s;
		break;
	case VGQ_BYTES:
		c->b[t] = v->v.b;
		break;
	case VGQ_ENTITY:
		c->r[t] = v->v.r;
		break;
	}
}

/* A long run of rows with equal times (a constant valid time, say) is ordered by values
 * evaluated once each: per row of the run its values, the comparator's by index. */
static _Thread_local const struct vx_value *run_vals;
static _Thread_local const struct order_key *run_keys;
static _Thread_local size_t run_width;

static int by_run_values(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, c = *(const uint32_t *)y;
	for (size_t k = 0; k < run_width; k++) {
		int o = vgq_value_order(&run_vals[a * run_width + k], &run_vals[c * run_width + k]);
		if (o)
			return o;
	}
	return run_keys[a].i < run_keys[c].i ? -1 : run_keys[a].i > run_keys[c].i;
}

static void sort_run(struct order_key *key, size_t n)
{
	size_t nt = sorting->b->ntargets;
	struct vx_value *vals = vgq_xcalloc(n * (nt ? nt : 1), sizeof *vals);
	uint32_t *idx = vgq_xcalloc(n, sizeof *idx);
	struct order_key *copy = vgq_xcalloc(n, sizeof *copy);
	for (size_t r = 0; r < n; r++) {
		idx[r] = (uint32_t)r;
		copy[r] = key[r];
		for (size_t k = 0; k < nt; k++)
			vals[r * nt + k] = value_of(sorting, key[r].i, k);
	}
	run_vals = vals;
	run_keys = copy;
	run_width = nt;
	qsort(idx, n, sizeof *idx, by_run_values);
	for (size_t r = 0; r < n; r++)
		key[r] = copy[idx[r]];
	free(vals);
	free(idx);
	free(copy);
}

static int by_e(const void *x, const void *y)
{
	const struct order_key *a = x, *c = y;
	return a->e < c->e ? -1 : a->e > c->e;
}

/* Short runs: insertion by the full order. */
static void insertion(struct order_key *key, size_t n)
{
	for (size_t a = 1; a < n; a++)
		for (size_t c = a; c > 0 && by_time_then_values(&key[c - 1], &key[c]) > 0; c--) {
			struct order_key t = key[c];
			key[c] = key[c - 1];
			key[c - 1] = t;
		}
}

static void sort_ties(struct order_key *key, size_t n);

/* Sorts by b with an LSD radix sort of 11-bit digits, every digit's counts taken in one
 * pass; digits that never vary are skipped (times of one trace share their high bits) and
 * the passes go back and forth between two arrays. Then each run of equal b by the full
 * order. */

static uint32_t digit_of(const struct order_key *k, int d)
{
	return (uint32_t)((((uint64_t)k->b ^ (1ull << 63)) >> (d * RADIX_BITS)) & (RADIX - 1));
}

static void sort_keys(struct order_key *key, size_t n)
{
	size_t(*count)[RADIX] = vgq_xcalloc(RADIX_DIGITS, sizeof *count);
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < RADIX_DIGITS; d++)
			count[d][digit_of(&key[i], d)]++;
	struct order_key *tmp = vgq_xcalloc(n ? n : 1, sizeof *tmp), *from = key, *to = tmp;
	for (int d = 0; d < RADIX_DIGITS; d++) {
		if (!vgq_radix_places(count[d], n))
			continue;
		for (size_t i = 0; i < n; i++)
			to[count[d][digit_of(&from[i], d)]++] = from[i];
		struct order_key *x = from;
		from = to;
		to = x;
	}
	if (from != key)
		memcpy(key, from, n * sizeof *key);
	free(tmp);
	free(count);
	sort_ties(key, n);
}

/* Keys in order of b: each run of equal b into the full order. */
static void sort_ties(struct order_key *key, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && key[j].b == key[i].b)
			j++;
		if (j - i > 16) {
			/* by e first (no values needed), then each run of equal e by values */
			qsort(key + i, j - i, sizeof *key, by_e);
			for (size_t a = i; a < j;) {
				size_t c = a + 1;
				while (c < j && key[c].e == key[a].e)
					c++;
				if (c - a > 16)
					sort_run(key + a, c - a);
				else
					insertion(key + a, c - a);
				a = c;
			}
		} else {
			insertion(key + i, j - i);
		}
		i = j;
	}
}

static void sort_keys_of(void *key, size_t n)
{
	sort_keys(key, n);
}

struct store_job {
	struct vgq_relation *rel;
	const struct source *src;
	bool event;
	uint8_t **nulls; /* per target: a flag per tuple, written where the value is null */
	bool *had_null;  /* per target */
};

/* Tuples [lo, hi) of the result from the rows kept[0 ..): their times and values into its
 * columns. */
static void store_rows(const struct store_job *j, const struct order_key *kept, size_t lo,
                       size_t hi)
{
	struct vgq_relation *rel = j->rel;
	size_t nt = j->src->b->ntargets;
	for (size_t t = lo; t < hi; t++) {
		const struct order_key *k = &kept[t - lo];
		rel->from[t] = k->b;
		if (!j->event)
			rel->to[t] = k->e;
		if (j->src->direct && !j->src->vals) {
			for (size_t a = 0; a < nt; a++) /* the same type: the bits */
				rel->cols[a].u[t] = direct_bits(j->src, k->i, a);
			continue;
		}
		for (size_t a = 0; a < nt; a++) {
			struct vx_value v = value_of(j->src, k->i, a);
			if (v.null) {
				static const struct vx_value zero; /* 0, NULL: no value of before */
				store(rel, a, t, &zero);
				j->nulls[a][t] = 1;
				if (!__atomic_load_n(&j->had_null[a], __ATOMIC_RELAXED))
					__atomic_store_n(&j->had_null[a], true, __ATOMIC_RELAXED);
				v = (struct vx_value){.type = v.type}; /* its column holds zero */
			}
			store(rel, a, t, &v);
		}
	}
}

/* The result's order and its set are made chunk by chunk on the session's workers: the
 * rows, sorted by b, are cut where b changes, so rows of equal times (ties, and every
 * duplicate) lie in one chunk. Each chunk orders its ties, keeps the first of each run of
 * identical tuples (from its start on) and stores them from its place in the result. */
struct chunks {
	const struct source *src;
	struct order_key *key;
	size_t n;
	size_t *start; /* chunk c: key[start[c]] .. key[start[c + 1] - 1] */
	size_t nchunks;
	size_t *kept;  /* per chunk: rows kept, moved to the chunk's start */
	size_t *at;    /* per chunk: its first tuple in the result */
	bool ties;     /* order the chunks' runs of equal b (else already in the full order) */
	bool unsorted; /* some key[i].b < key[i - 1].b (set atomically) */
	struct store_job *store;
};

static void check_piece(void *p, size_t lo, size_t hi)
{
	struct chunks *c = p;
	for (size_t i = lo ? lo : 1; i < hi; i++)
		if (c->key[i - 1].b > c->key[i].b) {
			__atomic_store_n(&c->unsorted, true, __ATOMIC_RELAXED);
			return;
		}
}

static bool same_tuple(const struct source *src, const struct order_key *x,
                       const struct order_key *y)
{
	return x->b == y->b && x->e == y->e && !values_order(src, x->i, y->i);
}

static void chunk_set(void *p, size_t lo, size_t hi)
{
	struct chunks *c = p;
	for (size_t h = lo; h < hi; h++) {
		struct order_key *key = c->key + c->start[h];
		size_t n = c->start[h + 1] - c->start[h], m = 0;
		if (c->ties)
			sort_ties(key, n);
		for (size_t j = 0; j < n; j++)
			if (!m || !same_tuple(c->src, &key[j], &key[m - 1]))
				key[m++] = key[j];
		c->kept[h] = m;
	}
}

static void chunk_store(void *p, size_t lo, size_t hi)
{
	struct chunks *c = p;
	for (size_t h = lo; h < hi; h++)
		store_rows(c->store, c->key + c->start[h], c->at[h], c->at[h] + c->kept[h]);
}

/* Chunks of about `size` keys, each edge moved on to the next change of b. */
static void cut_chunks(struct chunks *c, size_t size)
{
	size_t most = c->n / size + 1;
	c->start = vgq_xcalloc(most + 1, sizeof *c->start);
	size_t h = 0;
	for (size_t at = 0; at < c->n; h++) {
		c->start[h] = at;
		size_t to = at + size < c->n ? at + size : c->n;
		while (to < c->n && c->key[to].b == c->key[to - 1].b)
			to++;
		at = to;
	}
	c->start[h] = c->n;
	c->nchunks = h;
	c->kept = vgq_xcalloc(h ? h : 1, sizeof *c->kept);
	c->at = vgq_xcalloc(h ? h : 1, sizeof *c->at);
}

/* The rows (keys over src) sorted, duplicates removed, stored into rel. */
static void build(struct vgq_session *s, struct vgq_relation *rel, const struct source *src,
                  struct order_key *key, size_t nrows)
{
	bool event = rel->kind == VGQ_REL_EVENT;
	sorting = src;
	size_t grain = vgq_grain(s, nrows, 16, 16384);
	struct chunks c = {.src = src, .key = key, .n = nrows};
	/* A sweep join's bindings come in order of their later begin, which is their valid
	 * time's: then only ties need ordering (no radix pass, no copy), chunk by chunk */
	vgq_parallel_for(s, nrows, grain, check_piece, &c);
	c.ties = !c.unsorted;
	if (c.unsorted)
		vgq_parallel_sort(s, key, nrows, sizeof *key, by_time_then_values, sort_keys_of);
	cut_chunks(&c, grain);
	/* a set: identical tuples are neighbours in a chunk now; keep the first of each run */
	vgq_parallel_for(s, c.nchunks, 1, chunk_set, &c);
	size_t n = 0;
	for (size_t h = 0; h < c.nchunks; h++) {
		c.at[h] = n;
		n += c.kept[h];
	}
	sorting = NULL;
	vgq_relation_resize_unset(rel, n);
	size_t nt = src->b->ntargets;
	/* null flags: calloc'd pages are touched only where a value is null */
	uint8_t **nulls = vgq_xcalloc(nt ? nt : 1, sizeof *nulls);
	bool *had_null = vgq_xcalloc(nt ? nt : 1, sizeof *had_null);
	for (size_t k = 0; k < nt; k++)
		nulls[k] = vgq_xcalloc(n > 16 ? n : 16, 1);
	struct store_job j = {rel, src, event, nulls, had_null};
	c.store = &j;
	vgq_parallel_for(s, c.nchunks, 1, chunk_store, &c);
	free(c.start);
	free(c.kept);
	free(c.at);
	for (size_t k = 0; k < nt; k++) {
		if (!had_null[k]) {
			free(nulls[k]);
			if (rel->nulls) { /* a relation stored again: no flags of before */
				free(rel->nulls[k]);
				rel->nulls[k] = NULL;
			}
			continue;
		}
		if (!rel->nulls)
			rel->nulls = vgq_xcalloc(rel->nattrs, sizeof *rel->nulls);
		free(rel->nulls[k]);
		rel->nulls[k] = nulls[k];
	}
	free(nulls);
	free(had_null);
	vgq_relation_finish(rel, s->db ? s->db->last : 0);
}

struct vgq_relation *vgq_result_skeleton(struct vgq_session *s, const struct bstmt *b)
{
	struct vgq_relation *rel =
	    vgq_relation_new(b->label, b->result_event ? VGQ_REL_EVENT : VGQ_REL_INTERVAL);
	for (size_t k = 0; k < b->ntargets; k++) {
		const struct bx *x = b->targets[k].value;
		const char *kind = NULL;
		if (x->type == VX_ENTITY && x->kind == BX_ATTR)
			kind = b->vars[x->var].rel->attrs[x->attr].ref_kind;
		vgq_relation_add_attr(rel, b->targets[k].name, vgq_type_of_vx(x->type), kind);
	}
	vgq_session_own(s, rel);
	return rel;
}

struct tval vgq_valid_time(const struct bstmt *b, const struct binding *bd)
{
	struct tval none = {TV_NOTHING, 0, 0};
	if (b->valid == TQ_VALID_AT) {
		struct tval t = vgq_teval(b->valid_at, bd);
		return t.kind == TV_EVENT ? t : none;
	}
	if (b->valid == TQ_VALID_FROM_TO) {
		struct tval f = vgq_teval(b->valid_from, bd), t = vgq_teval(b->valid_to, bd);
		if (f.kind == TV_NOTHING || t.kind == TV_NOTHING || f.b >= t.e)
			return none;
		struct tval v = {TV_INTERVAL, f.b, t.e};
		return v;
	}
	struct tval v = vgq_var_time(&b->vars[0], bd->rows[0]);
	for (size_t i = 1; i < b->nvars && v.kind != TV_NOTHING; i++)
		v = vgq_tv_intersect(v, vgq_var_time(&b->vars[i], bd->rows[i]));
	if (v.kind == TV_INTERVAL && v.b >= v.e)
		return none;
	return v;
}

static int by_values_then_time(const void *x, const void *y)
{
	const struct order_key *a = x, *c = y;
	int o = values_order(sorting, a->i, c->i);
	if (o)
		return o;
	if (a->b != c->b)
		return a->b < c->b ? -1 : 1;
	if (a->e != c->e)
		return a->e < c->e ? -1 : 1;
	return a->i < c->i ? -1 : a->i > c->i; /* total: the same order at every thread count */
}

struct vgq_result_acc {
	const struct bstmt *b;
	struct order_key *key; /* a row per binding with a valid time; i: the binding */
	size_t n, cap;
	const uint32_t *rows; /* the bindings (the caller's, kept until vgq_result_end) */
	size_t width;
	struct vx_value *vals; /* retrieve unique: materialised, ntargets per row */
	struct vgq_state keys; /* key's memory (exec_memory.c) */
};

struct eval_job {
	const struct source *src;
	const struct order_key *key;
	struct vx_value *vals;
};

static void eval_piece(void *p, size_t lo, size_t hi)
{
	struct eval_job *j = p;
	size_t nt = j->src->b->ntargets;
	for (size_t r = lo; r < hi; r++)
		for (size_t k = 0; k < nt; k++)
			j->vals[r * nt + k] = value_of(j->src, j->key[r].i, k);
}

/* retrieve unique over an interval result: value-equivalent tuples whose valid times
 * overlap or meet become one tuple over their union (the maximal intervals of each value).
 * The values are evaluated once (acc->vals, a row per key), the keys re-pointed at them. */
static void coalesce(struct vgq_session *s, struct vgq_result_acc *acc)
{
	const struct bstmt *b = acc->b;
	size_t nt = b->ntargets, n = acc->n;
	struct source from_bindings = {b, acc->rows, acc->width, NULL, NULL};
	struct vx_value *vals = vgq_xcalloc(n * (nt ? nt : 1) + 1, sizeof *vals);
	struct eval_job ej = {&from_bindings, acc->key, vals};
	vgq_parallel_for(s, n, vgq_grain(s, n, 16, 16384), eval_piece, &ej);
	for (size_t r = 0; r < n; r++)
		acc->key[r].i = (uint32_t)r;
	struct source src = {b, NULL, 0, vals, NULL};
	sorting = &src;
	vgq_parallel_sort(s, acc->key, n, sizeof *acc->key, by_values_then_time, NULL);
	/* the merged rows over their first row's values, written from the front */
	struct vx_value *out = vgq_xcalloc(n * (nt ? nt : 1) + 1, sizeof *out);
	size_t m = 0;
	for (size_t j = 0; j < n;) {
		int64_t e = acc->key[j].e;
		size_t k = j + 1;
		for (; k < n && !values_order(&src, acc->key[k].i, acc->key[j].i) &&
		       acc->key[k].b <= e;
		     k++)
			if (acc->key[k].e > e)
				e = acc->key[k].e;
		memcpy(&out[m * nt], &vals[(size_t)acc->key[j].i * nt], nt * sizeof *out);
		acc->key[m] = (struct order_key){acc->key[j].b, e, (uint32_t)m};
		m++;
		j = k;
	}
	sorting = NULL;
	free(vals);
	acc->vals = out;
	acc->n = m;
}

struct vgq_result_acc *vgq_result_begin(const struct bstmt *b)
{
	struct vgq_result_acc *acc = vgq_xcalloc(1, sizeof *acc);
	acc->b = b;
	return acc;
}

struct add_job {
	struct vgq_result_acc *acc;
	const uint32_t *rows;
	size_t width, base, grain;
	size_t *kept; /* per piece: rows it wrote from its first place on */
};

/* One piece of the bindings: the valid time of each, a row from place base + lo on. */
static void add_piece(void *p, size_t lo, size_t hi)
{
	struct add_job *j = p;
	const struct bstmt *b = j->acc->b;
	struct order_key *key = j->acc->key;
	size_t at = j->base + lo;
	for (size_t i = lo; i < hi; i++) {
		struct binding bd = {j->rows + i * j->width, b->vars};
		struct tval v = vgq_valid_time(b, &bd);
		if (v.kind == TV_NOTHING)
			continue;
		key[at++] = (struct order_key){v.b, v.kind == TV_EVENT ? v.b : v.e, (uint32_t)i};
	}
	j->kept[lo / j->grain] = at - (j->base + lo);
}

/* The bindings stay the caller's until vgq_result_end (values are read from them): one
 * call per result. */
void vgq_result_add_all(struct vgq_session *s, struct vgq_result_acc *acc, const uint32_t *rows,
                        size_t n, size_t width)
{
	acc->rows = rows;
	acc->width = width;
	/* a key per binding, from the memory budget, or past it in the spill file (the sort's
	 * own buffers are not counted) */
	acc->key = vgq_state_alloc(s, "the result's sort keys", n * sizeof *acc->key, &acc->keys);
	if (!acc->key) { /* the statement stops */
		n = 0;
		acc->key = acc->keys.p = vgq_xcalloc(1, sizeof *acc->key);
	}
	acc->cap = n;
	size_t grain = vgq_grain(s, n, 16, 16384); /* bindings per piece */
	size_t pieces = (n + grain - 1) / grain;
	struct add_job j = {acc, rows,  width,
	                    0,   grain, vgq_xcalloc(pieces ? pieces : 1, sizeof *j.kept)};
	vgq_parallel_for(s, n, grain, add_piece, &j);
	/* the pieces' rows close up, in order */
	size_t to = 0;
	for (size_t c = 0; c < pieces; c++) {
		size_t from = c * grain, k = j.kept[c];
		if (from != to && k)
			memmove(&acc->key[to], &acc->key[from], k * sizeof *acc->key);
		to += k;
	}
	acc->n = to;
	free(j.kept);
}

void vgq_result_end(struct vgq_session *s, const struct bstmt *b, struct vgq_result_acc *acc)
{
	if (b->unique && !b->result_event)
		coalesce(s, acc);
	struct direct *direct = vgq_direct_targets(b);
	struct source src = {b, acc->rows, acc->width, acc->vals, direct};
	build(s, b->out, &src, acc->key, acc->n);
	free(direct);
	vgq_state_free(&acc->keys);
	free(acc->vals);
	free(acc);
}

void vgq_session_own(struct vgq_session *s, struct vgq_relation *r)
{
	s->owned = vgq_xrealloc(s->owned, s->nowned + 1, sizeof *s->owned);
	s->owned[s->nowned++] = r;
}
