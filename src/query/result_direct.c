/* A retrieve's result made as its bindings are (issue 31): when every target is an
 * integer attribute without nulls (a join's usual targets) and the result is a plain set
 * (not retrieve unique), each morsel's bindings become rows of their valid time and their
 * targets' bits on the worker that made them, while they are in its cache, kept in the
 * worker's own blocks; rows that come in order of begin (a sweep's) get their ties
 * ordered and their duplicates dropped there too. No binding is kept for the whole
 * statement and none is read twice.
 *
 * Morsels whose rows follow one another in time (a sweep join's ranges of begin times:
 * its pairs come in order of their later begin, the start of their valid time; a scan's
 * ranges of tuples in time order) then hold every run of equal times, so every duplicate,
 * whole: they are stored straight into the result's columns from their places, by the
 * workers. Otherwise the rows are put together, sorted (vgq_parallel_sort: runs
 * radix-sorted by begin, then merged) and cut into chunks where the begin changes, each
 * chunk's duplicates dropped by a worker. Either way the order is (begin, end, values), a
 * total order on distinct tuples: the same result at every thread count as result.c's. */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "query/radix.h"
#include "query/result_internal.h"
#include "relations/columns.h"

/* A row: begin, end, then the targets' values (words per row: 2 + targets), each kept as
 * bits whose unsigned order is its value's order (signed ones with the sign bit flipped,
 * SIGNED): rows then order as words, first to last. */
struct direct_run {
	const struct bstmt *b;
	struct vgq_session *s;
	struct direct *direct;   /* per target */
	size_t nt, words, width; /* targets, words per row, tuple indices per binding */
	struct arena {
		uint64_t *a;   /* the block being filled */
		size_t n, cap; /* its rows */
		size_t bytes;  /* its size (0: no block yet) */
		struct block {
			uint64_t *rows; /* NULL once freed */
			size_t pieces;  /* its pieces not yet stored (atomic in store) */
		} * done;               /* every block */
		size_t ndone;
	} * arena; /* per worker */
	unsigned threads;
	struct piece {
		const uint64_t *rows; /* in a worker's block */
		size_t n;             /* rows */
		size_t to;            /* its first tuple in the result */
		unsigned w;           /* its rows are in block blk of worker w's arena */
		size_t blk;           /* (NO_BLOCK: in no block) */
	} * piece;                    /* per morsel, in order */
	size_t npieces;
	bool intervals; /* the valid time is the variables' intersection, all intervals */
	size_t charged; /* bytes taken from the session's budget */
	bool refused;   /* a worker's arena went past it (set atomically) */
	bool unsorted;  /* a morsel's rows were not in order of begin (set atomically) */
};

#define NO_BLOCK SIZE_MAX

/* The comparator's run (qsort's comparators take no context; set before a sort). */
static const struct direct_run *ordering;

#define SIGNED (1ull << 63)

static inline int row_order(const uint64_t *x, const uint64_t *y, size_t words)
{
	for (size_t k = 0; k < words; k++)
		if (x[k] != y[k])
			return x[k] < y[k] ? -1 : 1;
	return 0;
}

static int by_row(const void *x, const void *y)
{
	return row_order(x, y, ordering->words);
}

/* Room for `more` rows in the worker's block: a new block when they do not fit (blocks
 * are never moved: a morsel's rows stay where it wrote them). False past the memory
 * budget. A worker's first block is 64 KiB of the heap when its first morsel says its
 * rows will fit (a selective query), else two huge pages, as every next one: a few rows
 * per worker then touch a few pages the heap already has, not 4 MiB of fresh ones per
 * worker (their first touch cost 0.5-7.5 ms per worker on the project's VM: issue 31, the
 * 2-thread scan). Small first blocks for every result cost a large one more than that. */
#define BLOCK_MIN ((size_t)64 << 10)
#define BLOCK_BYTES ((size_t)4 << 20) /* two huge pages */

static bool arena_room(struct direct_run *d, struct arena *a, size_t more)
{
	if (a->a && a->n + more <= a->cap)
		return true;
	size_t row = d->words * sizeof *a->a;
	/* the first block small when the first morsel's rows, as many times as this worker
	 * may take morsels, fit it */
	size_t per = (d->npieces + d->threads - 1) / (d->threads ? d->threads : 1);
	size_t want = !a->bytes && more * per * row <= BLOCK_MIN ? BLOCK_MIN : BLOCK_BYTES;
	size_t cap = want / row;
	if (cap < more)
		cap = more;
	bool huge = cap * row >= BLOCK_BYTES;
	size_t bytes =
	    huge ? (cap * row + BLOCK_BYTES - 1) & ~(BLOCK_BYTES - 1) /* whole huge pages */
	         : cap * row;
	cap = bytes / row;
	if (!vgq_mem_take(d->s, "the result's rows", bytes))
		return false;
	__atomic_add_fetch(&d->charged, bytes, __ATOMIC_RELAXED);
	a->a = huge ? vgb_xmalloc_huge(bytes) : vgb_xmalloc(bytes);
	a->bytes = bytes;
	a->done = vgq_xrealloc(a->done, a->ndone + 1, sizeof *a->done);
	a->done[a->ndone++] = (struct block){a->a, 0};
	a->n = 0;
	a->cap = cap;
	return true;
}

/* Rows in order of begin: each run of equal begins into the full order (short runs by
 * insertion, a long one by qsort). */
static void order_ties(uint64_t *r, size_t n, size_t words)
{
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && r[j * words] == r[i * words])
			j++;
		if (j - i > 16)
			qsort(r + i * words, j - i, words * sizeof *r, by_row);
		else /* insertion: each row past the greater ones before it */
			for (size_t a = i + 1; a < j; a++) {
				uint64_t x[words];
				memcpy(x, r + a * words, sizeof x);
				size_t c = a;
				for (; c > i && row_order(r + (c - 1) * words, x, words) > 0; c--)
					memcpy(r + c * words, r + (c - 1) * words, sizeof x);
				if (c != a)
					memcpy(r + c * words, x, sizeof x);
			}
		i = j;
	}
}

/* Ordered rows: the first of each run of identical ones kept, from the front; how many. */
static size_t drop_duplicates(uint64_t *r, size_t n, size_t words)
{
	size_t m = 0;
	for (size_t j = 0; j < n; j++) {
		if (m && !row_order(r + j * words, r + (m - 1) * words, words))
			continue;
		if (m != j)
			memcpy(r + m * words, r + j * words, words * sizeof *r);
		m++;
	}
	return m;
}

static void begin(void *p, size_t nmorsels, unsigned threads)
{
	struct direct_run *d = p;
	d->threads = threads;
	d->arena = vgq_xcalloc(threads, sizeof *d->arena);
	d->npieces = nmorsels;
	d->piece = vgq_xcalloc(nmorsels ? nmorsels : 1, sizeof *d->piece);
}

/* Morsel m's bindings: their rows, ordered and without duplicates, into worker w's arena. */
static void morsel(void *p, unsigned w, size_t m, const uint32_t *rows, size_t n)
{
	struct direct_run *d = p;
	struct arena *a = &d->arena[w];
	d->piece[m] = (struct piece){NULL, 0, 0, 0, NO_BLOCK};
	if (!arena_room(d, a, n)) {
		__atomic_store_n(&d->refused, true, __ATOMIC_RELAXED);
		return;
	}
	const struct bstmt *b = d->b;
	size_t words = d->words, k = 0;
	uint64_t *out = a->a + a->n * words;
	bool sorted = true;
	int64_t last = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		const uint32_t *row = rows + i * d->width;
		struct tval v;
		if (d->intervals) { /* as vgq_valid_time, inline */
			v = (struct tval){TV_INTERVAL, INT64_MIN, INT64_MAX};
			for (size_t x = 0; x < b->nvars; x++) {
				const struct vgq_relation *rel = b->vars[x].rel;
				int64_t vb = rel->from[row[x]], ve = rel->to[row[x]];
				v.b = vb > v.b ? vb : v.b;
				v.e = ve < v.e ? ve : v.e;
			}
			if (v.b >= v.e)
				continue;
		} else {
			struct binding bd = {row, b->vars};
			v = vgq_valid_time(b, &bd);
			if (v.kind == TV_NOTHING)
				continue;
		}
		uint64_t *r = out + k++ * words;
		r[0] = (uint64_t)v.b ^ SIGNED;
		r[1] = (uint64_t)(v.kind == TV_EVENT ? v.b : v.e) ^ SIGNED;
		for (size_t t = 0; t < d->nt; t++) {
			const struct direct *x = &d->direct[t];
			r[2 + t] = x->col->u[row[x->var]] ^ (x->u ? 0 : SIGNED);
		}
		sorted &= v.b >= last;
		last = v.b;
	}
	if (sorted) {
		order_ties(out, k, words);
		k = drop_duplicates(out, k, words);
	} else { /* sorted with every row (sort_all) */
		__atomic_store_n(&d->unsorted, true, __ATOMIC_RELAXED);
	}
	a->done[a->ndone - 1].pieces++;
	d->piece[m] = (struct piece){out, k, 0, w, a->ndone - 1};
	a->n += k;
}

/* A piece's rows are read no more: its block is freed after its last piece, so that the
 * pages written next (the result's columns) are these, not fresh ones: a first touch of
 * a page the process never had costs far more than a write (base/huge.c). */
static void release_piece(struct direct_run *d, const struct piece *g)
{
	if (g->blk == NO_BLOCK)
		return;
	struct block *bk = &d->arena[g->w].done[g->blk];
	if (__atomic_sub_fetch(&bk->pieces, 1, __ATOMIC_ACQ_REL) == 0) {
		free(bk->rows);
		bk->rows = NULL;
	}
}

/* Pieces [lo, hi) into the result's columns from their places. */
struct store_job {
	struct direct_run *d;
	struct vgq_relation *rel;
	bool event;
};

static void store_pieces(void *p, size_t lo, size_t hi)
{
	struct store_job *j = p;
	struct direct_run *d = j->d;
	struct vgq_relation *rel = j->rel;
	for (size_t c = lo; c < hi; c++) {
		const struct piece *g = &d->piece[c];
		for (size_t i = 0; i < g->n; i++) {
			const uint64_t *r = g->rows + i * d->words;
			size_t t = g->to + i;
			rel->from[t] = (int64_t)(r[0] ^ SIGNED);
			if (!j->event)
				rel->to[t] = (int64_t)(r[1] ^ SIGNED);
			for (size_t a = 0; a < d->nt; a++) /* the same type: the bits */
				rel->cols[a].u[t] = r[2 + a] ^ (d->direct[a].u ? 0 : SIGNED);
		}
		release_piece(d, g);
	}
}

/* Do the pieces' rows follow one another (each piece's first begin after the last
 * begin of the piece before)? Then runs of equal times never cross a piece's edge. */
static bool chained(const struct direct_run *d)
{
	if (d->unsorted)
		return false;
	bool any = false;
	uint64_t last = 0;
	for (size_t c = 0; c < d->npieces; c++) {
		const struct piece *g = &d->piece[c];
		if (!g->n)
			continue;
		if (any && g->rows[0] <= last)
			return false;
		last = g->rows[(g->n - 1) * d->words];
		any = true;
	}
	return true;
}

struct gather_job {
	struct direct_run *d;
	uint64_t *all;
};

static void gather_pieces(void *p, size_t lo, size_t hi)
{
	struct gather_job *j = p;
	const struct direct_run *d = j->d;
	for (size_t c = lo; c < hi; c++)
		memcpy(j->all + d->piece[c].to * d->words, d->piece[c].rows,
		       d->piece[c].n * d->words * sizeof *j->all);
}

static void dedup_chunks(void *p, size_t lo, size_t hi)
{
	struct direct_run *d = p;
	for (size_t c = lo; c < hi; c++)
		d->piece[c].n =
		    drop_duplicates((uint64_t *)d->piece[c].rows, d->piece[c].n, d->words);
}

/* Sorts n rows by begin with an LSD radix sort of 11-bit digits (digits that never vary
 * skipped: times of one trace share their high bits; stable), then each run of equal
 * begins into the full order. */

static uint32_t digit_of(const uint64_t *r, int d)
{
	return (uint32_t)((r[0] >> (d * RADIX_BITS)) & (RADIX - 1));
}

static void radix_rows(void *base, size_t n)
{
	size_t words = ordering->words, row = words * sizeof(uint64_t);
	size_t(*count)[RADIX] = vgq_xcalloc(RADIX_DIGITS, sizeof *count);
	uint64_t *from = base, *to = vgb_xmalloc(n ? n * row : 1), *tmp = to;
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < RADIX_DIGITS; d++)
			count[d][digit_of(from + i * words, d)]++;
	for (int d = 0; d < RADIX_DIGITS; d++) {
		if (!vgq_radix_places(count[d], n))
			continue;
		for (size_t i = 0; i < n; i++) {
			const uint64_t *r = from + i * words;
			memcpy(to + count[d][digit_of(r, d)]++ * words, r, row);
		}
		uint64_t *x = from;
		from = to;
		to = x;
	}
	if (from != base)
		memcpy(base, from, n * row);
	free(tmp);
	free(count);
	order_ties(base, n, words);
}

/* The pieces' rows put together and sorted, then cut into pieces of about `size` rows
 * at changes of begin, each piece's duplicates dropped. False past the memory budget.
 * The new pieces' rows are *all (malloc'd). */
static bool sort_all(struct direct_run *d, size_t total, uint64_t **all)
{
	size_t bytes = total * d->words * sizeof **all;
	if (!vgq_mem_take(d->s, "the result's rows", bytes))
		return false;
	d->charged += bytes;
	*all = vgb_xmalloc(bytes);
	struct gather_job g = {d, *all};
	vgq_parallel_for(d->s, d->npieces, 1, gather_pieces, &g);
	for (unsigned w = 0; w < d->threads;
	     w++) /* read no more: the sort's pages (release_piece) */
		for (size_t k = 0; k < d->arena[w].ndone; k++) {
			free(d->arena[w].done[k].rows);
			d->arena[w].done[k].rows = NULL;
		}
	vgq_parallel_sort(d->s, *all, total, d->words * sizeof **all, by_row, radix_rows);
	size_t size = vgq_grain(d->s, total, 16, 16384), words = d->words, np = 0;
	free(d->piece);
	d->piece = vgq_xcalloc(total / size + 2, sizeof *d->piece);
	for (size_t at = 0; at < total; np++) {
		size_t to = at + size < total ? at + size : total;
		while (to < total && (*all)[to * words] == (*all)[(to - 1) * words])
			to++;
		d->piece[np] = (struct piece){*all + at * words, to - at, 0, 0, NO_BLOCK};
		at = to;
	}
	d->npieces = np;
	vgq_parallel_for(d->s, np, 1, dedup_chunks, d);
	return true;
}

static void store(struct direct_run *d, struct vgq_relation *rel)
{
	size_t total = 0;
	for (size_t c = 0; c < d->npieces; c++) {
		d->piece[c].to = total;
		total += d->piece[c].n;
	}
	uint64_t *all = NULL;
	if (!chained(d) && !sort_all(d, total, &all))
		return;
	total = 0;
	for (size_t c = 0; c < d->npieces; c++) {
		d->piece[c].to = total;
		total += d->piece[c].n;
	}
	vgq_relation_resize_unset(rel, total);
	struct store_job j = {d, rel, rel->kind == VGQ_REL_EVENT};
	vgq_parallel_for(d->s, d->npieces, 1, store_pieces, &j);
	free(all);
	if (rel->nulls) /* a relation stored again: no flags of before */
		for (size_t k = 0; k < rel->nattrs; k++) {
			free(rel->nulls[k]);
			rel->nulls[k] = NULL;
		}
	vgq_relation_finish(rel, d->s->db ? d->s->db->last : 0);
}

bool vgq_result_direct(struct vgq_session *s, const struct bstmt *b, struct xnode *root)
{
	if (b->unique)
		return false;
	struct direct *direct = vgq_direct_targets(b);
	if (!direct)
		return false;
	struct direct_run d = {.b = b,
	                       .s = s,
	                       .direct = direct,
	                       .nt = b->ntargets,
	                       .words = 2 + b->ntargets,
	                       .width = root->cx->width,
	                       .intervals = b->valid == TQ_VALID_NONE && b->nvars};
	for (size_t x = 0; x < b->nvars; x++)
		d.intervals &= !b->vars[x].event && b->vars[x].rel->to;
	struct vgq_sink sink = {begin, morsel, &d};
	ordering = &d; /* read by the workers' sorts */
	vgq_rows_stream(root, &sink);
	/* past the budget (d.refused) the session's refusal stops the statement */
	if (!vgq_overflowed(root->cx) && !d.refused && d.arena)
		store(&d, b->out);
	for (unsigned w = 0; w < d.threads; w++) {
		for (size_t k = 0; k < d.arena[w].ndone; k++)
			free(d.arena[w].done[k].rows);
		free(d.arena[w].done);
	}
	free(d.arena);
	free(d.piece);
	ordering = NULL;
	free(direct);
	vgq_mem_give(s, d.charged);
	return true;
}
