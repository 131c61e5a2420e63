/* π and πT: from the final bindings of a retrieve to its result relation. Each binding
 * gets its valid time (the valid clause, or the overlap of all variables) and its target
 * values; identical tuples are kept once (the calculus defines a set), and under retrieve
 * unique value-equivalent intervals that overlap or meet are coalesced; the set is sorted
 * by valid time, then values, and stored column-wise like any relation. */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "relations/columns.h"

struct rows {
	size_t n, cap, width; /* width: targets */
	int64_t *b, *e;
	struct vx_value *vals;
};

static void add_row(struct rows *r, int64_t b, int64_t e, const struct vx_value *v)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 256;
		r->b = vgq_xrealloc(r->b, r->cap, sizeof *r->b);
		r->e = vgq_xrealloc(r->e, r->cap, sizeof *r->e);
		r->vals =
		    vgq_xrealloc(r->vals, r->cap * (r->width ? r->width : 1), sizeof *r->vals);
	}
	r->b[r->n] = b;
	r->e[r->n] = e;
	memcpy(&r->vals[r->n * r->width], v, r->width * sizeof *v);
	r->n++;
}

static const struct rows *sorting;

/* A row's place in the order: the times inline, so most comparisons stay in the array. */
struct order_key {
	int64_t b, e;
	uint32_t i;
};

static int values_order(const struct rows *r, size_t i, size_t j)
{
	for (size_t k = 0; k < r->width; k++) {
		int c = vgq_value_order(&r->vals[i * r->width + k], &r->vals[j * r->width + k]);
		if (c)
			return c;
	}
	return 0;
}

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
	if (v->null) {
		if (!rel->nulls)
			rel->nulls = vgq_xcalloc(rel->nattrs, sizeof *rel->nulls);
		if (!rel->nulls[a])
			rel->nulls[a] = vgq_xcalloc(rel->ntuples > 16 ? rel->ntuples : 16, 1);
		rel->nulls[a][t] = 1;
		return;
	}
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

/* Sorts by b with an LSD radix sort (bytes that never vary are skipped: times of one
 * trace share their high bytes), then each run of equal b by the full order. */
static void sort_keys(struct order_key *key, size_t n)
{
	struct order_key *tmp = vgq_xcalloc(n ? n : 1, sizeof *tmp);
	for (int shift = 0; shift < 64; shift += 8) {
		size_t count[256] = {0};
		for (size_t i = 0; i < n; i++)
			count[((uint64_t)key[i].b ^ (1ull << 63)) >> shift & 255]++;
		bool same = false;
		for (int d = 0; d < 256 && !same; d++)
			same = count[d] == n;
		if (same)
			continue;
		size_t pos = 0;
		for (int d = 0; d < 256; d++) {
			size_t c = count[d];
			count[d] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[((uint64_t)key[i].b ^ (1ull << 63)) >> shift & 255]++] = key[i];
		struct order_key *x = key;
		memcpy(x, tmp, n * sizeof *x);
	}
	free(tmp);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && key[j].b == key[i].b)
			j++;
		if (j - i > 16)
			qsort(key + i, j - i, sizeof *key, by_time_then_values);
		else
			for (size_t a = i + 1; a < j; a++) /* short runs: insertion */
				for (size_t c = a;
				     c > i && by_time_then_values(&key[c - 1], &key[c]) > 0; c--) {
					struct order_key t = key[c];
					key[c] = key[c - 1];
					key[c - 1] = t;
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
	const struct bstmt *b;
	const struct rows *r;
	const uint32_t *order; /* the rows kept, in the result's order */
	bool event;
};

/* Tuples [lo, hi) of the result: their times and values into its columns. */
static void store_piece(void *p, size_t lo, size_t hi)
{
	struct store_job *j = p;
	struct vgq_relation *rel = j->rel;
	const struct rows *r = j->r;
	for (size_t t = lo; t < hi; t++) {
		size_t i = j->order[t];
		rel->from[t] = r->b[i];
		if (!j->event)
			rel->to[t] = r->e[i];
		for (size_t k = 0; k < j->b->ntargets; k++)
			store(rel, k, t, &r->vals[i * r->width + k]);
	}
}

static void build(struct vgq_session *s, struct vgq_relation *rel, const struct bstmt *b,
                  struct rows *r)
{
	bool event = rel->kind == VGQ_REL_EVENT;
	struct order_key *key = vgq_xcalloc(r->n ? r->n : 1, sizeof *key);
	for (size_t i = 0; i < r->n; i++)
		key[i] = (struct order_key){r->b[i], r->e[i], (uint32_t)i};
	sorting = r;
	vgq_parallel_sort(s, key, r->n, sizeof *key, by_time_then_values, sort_keys_of);
	sorting = NULL;
	/* a set: identical tuples are neighbours now; keep the first of each run */
	uint32_t *order = vgq_xcalloc(r->n ? r->n : 1, sizeof *order);
	size_t n = 0;
	for (size_t j = 0; j < r->n; j++) {
		if (n && key[j].b == key[j - 1].b && key[j].e == key[j - 1].e &&
		    !values_order(r, key[j].i, key[j - 1].i))
			continue;
		order[n++] = key[j].i;
	}
	free(key);
	vgq_relation_resize(rel, n);
	/* values after all tuples exist, so null flags are sized once, before the workers
	 * store the tuples (each its own places) */
	for (size_t k = 0; k < b->ntargets; k++)
		for (size_t j = 0; j < n; j++)
			if (r->vals[order[j] * r->width + k].null) {
				store(rel, k, j, &r->vals[order[j] * r->width + k]);
				break;
			}
	struct store_job j = {rel, b, r, order, event};
	vgq_parallel_for(s, n, vgq_grain(s, n, 16, 16384), store_piece, &j);
	vgq_relation_finish(rel, s->db ? s->db->last : 0);
	free(order);
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

/* The valid time of one binding; TV_NOTHING when it has none. */
static struct tval valid_time(const struct bstmt *b, const struct binding *bd)
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

/* retrieve unique over an interval result: value-equivalent tuples whose valid times
 * overlap or meet become one tuple over their union (the maximal intervals of each value). */
static void coalesce(struct vgq_session *s, struct rows *r)
{
	struct order_key *key = vgq_xcalloc(r->n ? r->n : 1, sizeof *key);
	for (size_t i = 0; i < r->n; i++)
		key[i] = (struct order_key){r->b[i], r->e[i], (uint32_t)i};
	sorting = r;
	vgq_parallel_sort(s, key, r->n, sizeof *key, by_values_then_time, NULL);
	struct rows out = {.width = r->width};
	for (size_t j = 0; j < r->n;) {
		int64_t b = key[j].b, e = key[j].e;
		size_t k = j + 1;
		for (; k < r->n && !values_order(r, key[k].i, key[j].i) && key[k].b <= e; k++)
			if (key[k].e > e)
				e = key[k].e;
		add_row(&out, b, e, &r->vals[key[j].i * r->width]);
		j = k;
	}
	sorting = NULL;
	free(key);
	free(r->b);
	free(r->e);
	free(r->vals);
	*r = out;
}

struct vgq_result_acc {
	const struct bstmt *b;
	struct rows r;
};

struct vgq_result_acc *vgq_result_begin(const struct bstmt *b)
{
	struct vgq_result_acc *acc = vgq_xcalloc(1, sizeof *acc);
	acc->b = b;
	acc->r.width = b->ntargets;
	return acc;
}

struct add_job {
	struct vgq_result_acc *acc;
	const uint32_t *rows;
	size_t width, base, grain;
	size_t *kept; /* per piece: rows it wrote from its first place on */
};

/* One piece of the bindings into the rows from place base + lo on. */
static void add_piece(void *p, size_t lo, size_t hi)
{
	struct add_job *j = p;
	const struct bstmt *b = j->acc->b;
	struct rows *r = &j->acc->r;
	size_t at = j->base + lo;
	for (size_t i = lo; i < hi; i++) {
		struct binding bd = {j->rows + i * j->width, b->vars};
		struct tval v = valid_time(b, &bd);
		if (v.kind == TV_NOTHING)
			continue;
		struct vx_value *vals = &r->vals[at * r->width];
		for (size_t k = 0; k < b->ntargets; k++)
			vals[k] = vgq_eval(b->targets[k].value, &bd);
		r->b[at] = v.b;
		r->e[at] = v.kind == TV_EVENT ? v.b : v.e;
		at++;
	}
	j->kept[lo / j->grain] = at - (j->base + lo);
}

void vgq_result_add_all(struct vgq_session *s, struct vgq_result_acc *acc, const uint32_t *rows,
                        size_t n, size_t width)
{
	struct rows *r = &acc->r;
	if (r->cap < r->n + n) {
		r->cap = r->n + n;
		r->b = vgq_xrealloc(r->b, r->cap, sizeof *r->b);
		r->e = vgq_xrealloc(r->e, r->cap, sizeof *r->e);
		r->vals =
		    vgq_xrealloc(r->vals, r->cap * (r->width ? r->width : 1), sizeof *r->vals);
	}
	size_t grain = vgq_grain(s, n, 16, 16384); /* bindings per piece */
	size_t pieces = (n + grain - 1) / grain;
	struct add_job j = {acc,  rows,  width,
	                    r->n, grain, vgq_xcalloc(pieces ? pieces : 1, sizeof *j.kept)};
	vgq_parallel_for(s, n, grain, add_piece, &j);
	/* the pieces' rows close up, in order */
	size_t to = r->n;
	for (size_t c = 0; c < pieces; c++) {
		size_t from = j.base + c * grain, k = j.kept[c];
		if (from != to && k) {
			memmove(&r->b[to], &r->b[from], k * sizeof *r->b);
			memmove(&r->e[to], &r->e[from], k * sizeof *r->e);
			memmove(&r->vals[to * r->width], &r->vals[from * r->width],
			        k * r->width * sizeof *r->vals);
		}
		to += k;
	}
	r->n = to;
	free(j.kept);
}

void vgq_result_end(struct vgq_session *s, const struct bstmt *b, struct vgq_result_acc *acc)
{
	if (b->unique && !b->result_event)
		coalesce(s, &acc->r);
	build(s, b->out, b, &acc->r);
	free(acc->r.b);
	free(acc->r.e);
	free(acc->r.vals);
	free(acc);
}

void vgq_session_own(struct vgq_session *s, struct vgq_relation *r)
{
	s->owned = vgq_xrealloc(s->owned, s->nowned + 1, sizeof *s->owned);
	s->owned[s->nowned++] = r;
}
