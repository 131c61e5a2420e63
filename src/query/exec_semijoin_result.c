/* The result of a semi-join's shape read straight from columns: when a retrieve's valid
 * time and every target are columns of one variable (the paper's precede: `retrieve
 * (R.conn) valid at end of R` with S existential), each binding's result row is a few
 * 64-bit words read from that variable's tuple: its times, then its values, encoded so that
 * words compare as unsigned integers in the result's order (valid time, then values).
 * The rows are made by the workers piece by piece, sorted by an LSD radix sort over the
 * words (runs on the workers, merged), the duplicates (equal neighbours) dropped and the
 * columns stored: no expression evaluated per binding, no indirection through the
 * bindings while sorting. The same relation as result.c builds, at every thread count
 * (the order is total on the words; equal words are one tuple). Other results take
 * result.c's path. */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "query/exec_semijoin_cols.h"
#include "query/radix.h"
#include "relations/columns.h"

#define MAX_WORDS 6 /* times (1 or 2) and targets (up to 4) */
#define SIGN (1ull << 63)

struct colresult {
	const int64_t *from, *to; /* the valid time's columns (to NULL: an event result) */
	int var;                  /* the variable whose tuple indexes them */
	bool event;
	size_t nt, words;
	const uint64_t *val[MAX_WORDS];
	bool is_signed[MAX_WORDS]; /* per target: an int column (else uint) */
};

/* A variable's time as a column: x its own valid time, its begin or its end; `end` for
 * the end of x's interval. NULL when x is not one. */
static const int64_t *time_col(const struct bstmt *b, const struct tx *x, bool end, int *var)
{
	const struct tx *v = x->kind == TX_BEGIN || x->kind == TX_END ? x->a : x;
	if (v->kind != TX_VAR)
		return NULL;
	const struct bvar *bv = &b->vars[v->var];
	*var = v->var;
	bool to = x->kind == TX_END || (x->kind == TX_VAR && end);
	return to && !bv->event ? bv->rel->to : bv->rel->from;
}

/* Does b's result read one variable's columns only? Then c is set up for it. */
static bool shape_of(const struct bstmt *b, struct colresult *c)
{
	memset(c, 0, sizeof *c);
	if (b->unique && !b->result_event)
		return false; /* coalesced: result.c */
	if (b->ntargets + 2 > MAX_WORDS)
		return false;
	int v1 = -1, v2 = -1;
	if (b->valid == TQ_VALID_AT) {
		const struct tx *x = b->valid_at;
		/* an event: begin or end of a variable, or an event variable */
		if (x->kind == TX_VAR && !b->vars[x->var].event)
			return false;
		c->from = time_col(b, x, false, &v1);
		c->event = true;
		v2 = v1;
	} else if (b->valid == TQ_VALID_FROM_TO) {
		c->from = time_col(b, b->valid_from, false, &v1);
		c->to = time_col(b, b->valid_to, true, &v2);
		if (!c->to)
			return false;
	} else {
		return false;
	}
	if (!c->from || v1 != v2 || c->event != b->result_event)
		return false;
	c->var = v1;
	const struct vgq_relation *rel = b->vars[c->var].rel;
	for (size_t k = 0; k < b->ntargets; k++) {
		const struct bx *x = b->targets[k].value;
		if (x->kind != BX_ATTR || x->var != c->var)
			return false;
		enum vgq_type t = rel->attrs[x->attr].type;
		enum vgq_type want = x->type == VX_UINT ? VGQ_UINT : VGQ_INT;
		if ((x->type != VX_INT && x->type != VX_UINT) || t != want ||
		    (rel->nulls && rel->nulls[x->attr]))
			return false;
		c->val[k] = rel->cols[x->attr].u;
		c->is_signed[k] = t == VGQ_INT;
	}
	c->nt = b->ntargets;
	c->words = (c->event ? 1 : 2) + c->nt;
	return true;
}

/* Rows packed into one word when their words' ranges fit in 64 bits together: word o
 * as its distance from the least, in bits[o] bits, the first word highest (the order of
 * the packed words is the rows'). */
struct packing {
	bool on;
	uint64_t least[MAX_WORDS];
	unsigned shift[MAX_WORDS];
};

static unsigned bits_of(uint64_t x)
{
	return x ? 64u - (unsigned)__builtin_clzll(x) : 0;
}

static void pack_plan(struct packing *pk, const uint64_t *least, const uint64_t *most, size_t w)
{
	unsigned total = 0, bits[MAX_WORDS];
	for (size_t o = 0; o < w; o++) {
		pk->least[o] = least[o];
		bits[o] = most[o] >= least[o] ? bits_of(most[o] - least[o]) : 0;
		total += bits[o];
	}
	pk->on = total <= 64 && w > 1;
	for (size_t o = w; o-- > 0;) {
		pk->shift[o] = o + 1 < w ? pk->shift[o + 1] + bits[o + 1] : 0;
	}
}

static void unpack_row(const struct packing *pk, uint64_t x, uint64_t *row, size_t w)
{
	for (size_t o = 0; o < w; o++) {
		if (pk->shift[o] >= 64) {
			row[o] = pk->least[o];
			continue;
		}
		unsigned width = (o ? pk->shift[o - 1] : 64) - pk->shift[o];
		uint64_t mask = width >= 64 ? UINT64_MAX : (1ull << width) - 1;
		row[o] = ((x >> pk->shift[o]) & mask) + pk->least[o];
	}
}

/* Binding i's row: its words into k; false when it has no valid time. */
static inline bool row_of(const struct colresult *c, uint32_t t, uint64_t *k)
{
	int64_t b = c->from[t];
	k[0] = (uint64_t)b ^ SIGN;
	size_t o = 1;
	if (!c->event) {
		int64_t e = c->to[t];
		if (b >= e)
			return false;
		k[o++] = (uint64_t)e ^ SIGN;
	}
	for (size_t a = 0; a < c->nt; a++)
		k[o++] = c->val[a][t] ^ (c->is_signed[a] ? SIGN : 0);
	return true;
}

struct make_job {
	const struct colresult *c;
	const uint32_t *rows;
	size_t width, grain;
	size_t *kept;      /* per piece: its rows; then where they start */
	uint64_t *lo, *hi; /* per piece: each word's least and greatest (MAX_WORDS each) */
	const struct packing *pk;
	uint64_t *keys;
};

/* First pass, one piece of the bindings: how many rows, each word's range. */
static void range_piece(void *p, size_t lo, size_t hi)
{
	struct make_job *j = p;
	const struct colresult *c = j->c;
	size_t w = c->words, piece = lo / j->grain, n = 0;
	uint64_t *least = j->lo + piece * MAX_WORDS, *most = j->hi + piece * MAX_WORDS,
	         k[MAX_WORDS];
	for (size_t o = 0; o < w; o++) {
		least[o] = UINT64_MAX;
		most[o] = 0;
	}
	for (size_t i = lo; i < hi; i++) {
		if (!row_of(c, j->rows[i * j->width + c->var], k))
			continue;
		n++;
		for (size_t o = 0; o < w; o++) {
			least[o] = k[o] < least[o] ? k[o] : least[o];
			most[o] = k[o] > most[o] ? k[o] : most[o];
		}
	}
	j->kept[piece] = n;
}

/* Second pass: the piece's rows from their place on, packed into a word each or not. */
static void write_piece(void *p, size_t lo, size_t hi)
{
	struct make_job *j = p;
	const struct colresult *c = j->c;
	const struct packing *pk = j->pk;
	size_t w = c->words, at = j->kept[lo / j->grain];
	uint64_t k[MAX_WORDS];
	for (size_t i = lo; i < hi; i++) {
		if (!row_of(c, j->rows[i * j->width + c->var], k))
			continue;
		if (!pk->on) {
			memcpy(j->keys + at++ * w, k, w * sizeof *k);
			continue;
		}
		uint64_t x = 0;
		for (size_t o = 0; o < w; o++)
			if (pk->shift[o] < 64) /* (64: a word of one value, no bits) */
				x |= (k[o] - pk->least[o]) << pk->shift[o];
		j->keys[at++] = x;
	}
}

/* The sort's item size in words (qsort-style comparators take no context; one statement
 * is evaluated at a time). */
static size_t sort_words;

static int by_words(const void *x, const void *y)
{
	const uint64_t *a = x, *c = y;
	for (size_t i = 0; i < sort_words; i++)
		if (a[i] != c[i])
			return a[i] < c[i] ? -1 : 1;
	return 0;
}

/* One row of w words: fixed sizes inline (a call to memcpy per row costs more than the
 * row). */
static inline void copy_row(uint64_t *to, const uint64_t *from, size_t w)
{
	switch (w) {
	case 1:
		*to = *from;
		break;
	case 2:
		memcpy(to, from, 2 * sizeof *to);
		break;
	case 3:
		memcpy(to, from, 3 * sizeof *to);
		break;
	case 4:
		memcpy(to, from, 4 * sizeof *to);
		break;
	default:
		for (size_t i = 0; i < w; i++)
			to[i] = from[i];
	}
}

/* LSD radix sort of n rows of sort_words words: the last word's digits first; every
 * digit counted in one pass, digits that never vary skipped. */
static void radix_rows(void *base, size_t n)
{
	size_t w = sort_words, nd = w * RADIX_DIGITS;
	uint64_t *from = base;
	size_t(*count)[RADIX] = vgq_xcalloc(nd, sizeof *count);
	for (size_t i = 0; i < n; i++)
		for (size_t d = 0; d < nd; d++)
			count[d]
			     [(from[i * w + d / RADIX_DIGITS] >> (d % RADIX_DIGITS * RADIX_BITS)) &
			      (RADIX - 1)]++;
	uint64_t *tmp = vgq_xcalloc(n * w + 1, sizeof *tmp), *to = tmp;
	for (size_t pass = 0; pass < nd; pass++) { /* the last word first, low digits first */
		size_t word = w - 1 - pass / RADIX_DIGITS,
		       d = word * RADIX_DIGITS + pass % RADIX_DIGITS;
		size_t shift = pass % RADIX_DIGITS * RADIX_BITS;
		if (!vgq_radix_places(count[d], n))
			continue;
		for (size_t i = 0; i < n; i++) {
			const uint64_t *r = from + i * w;
			size_t at = count[d][(r[word] >> shift) & (RADIX - 1)]++;
			copy_row(to + at * w, r, w);
		}
		uint64_t *x = from;
		from = to;
		to = x;
	}
	if (from != base)
		memcpy(base, from, n * w * sizeof *from);
	free(tmp);
	free(count);
}

struct store_job {
	const struct colresult *c;
	const uint64_t *keys;
	struct vgq_relation *rel;
	const struct packing *pk;
};

static void store_piece(void *p, size_t lo, size_t hi)
{
	struct store_job *j = p;
	const struct colresult *c = j->c;
	size_t w = c->words;
	uint64_t row[MAX_WORDS];
	for (size_t t = lo; t < hi; t++) {
		const uint64_t *k = j->keys + t * w;
		if (j->pk->on) {
			unpack_row(j->pk, j->keys[t], row, w);
			k = row;
		}
		size_t o = 0;
		j->rel->from[t] = (int64_t)(k[o++] ^ SIGN);
		if (!c->event)
			j->rel->to[t] = (int64_t)(k[o++] ^ SIGN);
		for (size_t a = 0; a < c->nt; a++, o++)
			j->rel->cols[a].u[t] = k[o] ^ (c->is_signed[a] ? SIGN : 0);
	}
}

bool vgq_semicols_result(struct vgq_session *s, const struct bstmt *b, const uint32_t *rows,
                         size_t n, size_t width)
{
	struct colresult c;
	if (!shape_of(b, &c))
		return false;
	size_t w = c.words, grain = vgq_grain(s, n, 16, 16384), pieces = (n + grain - 1) / grain;
	struct packing pk = {0};
	struct make_job j = {&c,
	                     rows,
	                     width,
	                     grain,
	                     vgq_xcalloc(pieces + 1, sizeof *j.kept),
	                     vgq_xcalloc((pieces + 1) * MAX_WORDS, sizeof *j.lo),
	                     vgq_xcalloc((pieces + 1) * MAX_WORDS, sizeof *j.hi),
	                     &pk,
	                     NULL};
	vgq_parallel_for(s, n, grain, range_piece, &j);
	size_t m = 0; /* the rows, and where each piece's start */
	uint64_t least[MAX_WORDS], most[MAX_WORDS];
	for (size_t o = 0; o < w; o++) {
		least[o] = UINT64_MAX;
		most[o] = 0;
	}
	for (size_t p = 0; p < pieces; p++) {
		size_t k = j.kept[p];
		j.kept[p] = m;
		m += k;
		for (size_t o = 0; o < w && k; o++) {
			least[o] =
			    j.lo[p * MAX_WORDS + o] < least[o] ? j.lo[p * MAX_WORDS + o] : least[o];
			most[o] =
			    j.hi[p * MAX_WORDS + o] > most[o] ? j.hi[p * MAX_WORDS + o] : most[o];
		}
	}
	free(j.lo);
	free(j.hi);
	/* one word a row when they fit: half the memory or less to write and sort */
	pack_plan(&pk, least, most, w);
	size_t kw = pk.on ? 1 : w, bytes = m * kw * sizeof(uint64_t);
	/* the rows and the sort's second array; past the budget the statement stops */
	if (!vgq_mem_take(s, "the column result's array", 2 * bytes)) {
		free(j.kept);
		return true; /* (nothing emitted: vgq_overflowed) */
	}
	uint64_t *keys = vgq_xcalloc(m * kw + 1, sizeof *keys);
	j.keys = keys;
	vgq_parallel_for(s, n, grain, write_piece, &j);
	free(j.kept);
	sort_words = kw;
	vgq_parallel_sort(s, keys, m, kw * sizeof *keys, by_words, radix_rows);
	/* a set: equal rows are neighbours; the first of each run kept */
	size_t kept = 0;
	for (size_t i = 0; i < m; i++) {
		if (kept && !memcmp(keys + i * kw, keys + (kept - 1) * kw, kw * sizeof *keys))
			continue;
		if (kept != i)
			copy_row(keys + kept * kw, keys + i * kw, kw);
		kept++;
	}
	struct vgq_relation *rel = b->out;
	vgq_relation_resize_unset(rel, kept);
	struct store_job sj = {&c, keys, rel, &pk};
	vgq_parallel_for(s, kept, vgq_grain(s, kept, 16, 16384), store_piece, &sj);
	if (rel->nulls) /* a relation stored again: no flags of before (no value is null) */
		for (size_t a = 0; a < c.nt; a++) {
			free(rel->nulls[a]);
			rel->nulls[a] = NULL;
		}
	vgq_relation_finish(rel, s->db ? s->db->last : 0);
	free(keys);
	vgq_mem_give(s, 2 * bytes);
	return true;
}
