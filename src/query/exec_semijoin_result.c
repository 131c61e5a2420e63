/* The result of a semi-join over a plain scan read straight from columns: when a
 * retrieve's valid time and every target are columns of the scanned variable (the
 * paper's precede: `retrieve (R.conn) valid at end of R` with S existential), the scan's
 * tuples are probed against the semi-join's groups (one lookup and one compare each:
 * exec_semijoin_cols.c) and each kept tuple's result row is a few 64-bit words read from
 * its columns: its times, then its values, encoded so that words compare as unsigned
 * integers in the result's order (valid time, then values), packed into one word when
 * their ranges fit. No binding is made.
 *
 * Two passes over the scanned tuples, in chunks on the workers: the first counts each
 * chunk's kept rows per bucket of their first time (buckets of the relation's time span,
 * clamped at its ends: monotone in the word) and each word's range; the second writes each
 * kept row's packed word at its bucket's place. Each bucket (a few hundred rows, in
 * cache) is then sorted and its duplicates (equal neighbours) dropped by a worker, and
 * the buckets stored into the result's columns from their places. The same relation as
 * result.c builds, at every thread count (the order is total on the words; equal words
 * are one tuple). Other plans and results take result_direct.c's or result.c's path. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "query/exec_semijoin_cols.h"
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
	pk->on = total <= 64;
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

/* The scanned tuples' rows, bucket by bucket. */
struct fused {
	const struct colresult *c;
	const struct vgq_semicols *sc;
	size_t n, chunk, nchunks; /* tuples, per chunk, chunks */
	size_t nb;                /* buckets (a power of two) */
	uint64_t bbase;           /* the first word at the start of bucket 0 */
	unsigned bshift;          /* bucket: the first word's distance from bbase >> bshift */
	size_t *kept;             /* per chunk: the tuples the semi-join keeps */
	size_t *count;            /* per chunk: rows */
	uint64_t *lo, *hi;        /* per chunk: each word's least and greatest (MAX_WORDS) */
	uint32_t *place;          /* per chunk and bucket: its rows, then where they go */
	struct packing pk;
	uint64_t *keys;           /* the packed rows, bucket after bucket */
	size_t *bstart, *bkept;   /* per bucket: its first row; its rows left by the dedup */
	size_t *bto;              /* per bucket: its first tuple of the result */
	struct vgq_relation *rel; /* the result */
};

static inline size_t bucket_of(const struct fused *f, uint64_t first)
{
	if (first <= f->bbase)
		return 0;
	uint64_t b = (first - f->bbase) >> f->bshift;
	return b < f->nb ? b : f->nb - 1;
}

static inline bool kept_by(const struct fused *f, uint32_t t)
{
	const struct vgq_semicols *sc = f->sc;
	return vgq_semicols_keeps(sc, sc->lkey ? sc->lkey[t] : 0, sc->ltime ? sc->ltime[t] : 0);
}

/* First pass over chunks [lo, hi): their rows per bucket, each word's range. */
static void count_chunks(void *p, size_t lo, size_t hi)
{
	struct fused *f = p;
	const struct colresult *c = f->c;
	size_t w = c->words;
	uint64_t k[MAX_WORDS];
	for (size_t ch = lo; ch < hi; ch++) {
		uint64_t *least = f->lo + ch * MAX_WORDS, *most = f->hi + ch * MAX_WORDS;
		uint32_t *place = f->place + ch * f->nb;
		size_t n = 0, kept = 0,
		       end = (ch + 1) * f->chunk < f->n ? (ch + 1) * f->chunk : f->n;
		for (size_t o = 0; o < w; o++) {
			least[o] = UINT64_MAX;
			most[o] = 0;
		}
		for (uint32_t t = (uint32_t)(ch * f->chunk); t < end; t++) {
			if (!kept_by(f, t))
				continue;
			kept++;
			if (!row_of(c, t, k))
				continue;
			n++;
			place[bucket_of(f, k[0])]++;
			for (size_t o = 0; o < w; o++) {
				least[o] = k[o] < least[o] ? k[o] : least[o];
				most[o] = k[o] > most[o] ? k[o] : most[o];
			}
		}
		f->count[ch] = n;
		f->kept[ch] = kept;
	}
}

static inline uint64_t pack(const struct packing *pk, const uint64_t *k, size_t w)
{
	uint64_t x = 0;
	for (size_t o = 0; o < w; o++)
		if (pk->shift[o] < 64) /* (64: a word of one value, no bits) */
			x |= (k[o] - pk->least[o]) << pk->shift[o];
	return x;
}

/* Second pass: each row's packed word at its bucket's next place. */
static void write_chunks(void *p, size_t lo, size_t hi)
{
	struct fused *f = p;
	const struct colresult *c = f->c;
	size_t w = c->words;
	uint64_t k[MAX_WORDS];
	for (size_t ch = lo; ch < hi; ch++) {
		uint32_t *place = f->place + ch * f->nb;
		size_t end = (ch + 1) * f->chunk < f->n ? (ch + 1) * f->chunk : f->n;
		for (uint32_t t = (uint32_t)(ch * f->chunk); t < end; t++)
			if (kept_by(f, t) && row_of(c, t, k))
				f->keys[place[bucket_of(f, k[0])]++] = pack(&f->pk, k, w);
	}
}

/* A bucket's n words sorted: by insertion when few, else an LSD radix sort of 8-bit
 * digits over the bits that vary (through *tmp, grown as needed). */
#define INSERTION_MAX 24

static void sort_bucket(uint64_t *a, size_t n, uint64_t **tmp, size_t *cap)
{
	if (n <= INSERTION_MAX) {
		for (size_t i = 1; i < n; i++) {
			uint64_t x = a[i];
			size_t j = i;
			for (; j && a[j - 1] > x; j--)
				a[j] = a[j - 1];
			a[j] = x;
		}
		return;
	}
	uint64_t vary = 0;
	for (size_t i = 1; i < n; i++)
		vary |= a[i] ^ a[0];
	if (*cap < n) {
		free(*tmp);
		*cap = n;
		*tmp = vgq_xcalloc(n, sizeof **tmp);
	}
	uint64_t *from = a, *to = *tmp;
	for (unsigned shift = 0; shift < 64 && vary >> shift; shift += 8) {
		if (!((vary >> shift) & 0xff))
			continue;
		size_t count[256] = {0};
		for (size_t i = 0; i < n; i++)
			count[(from[i] >> shift) & 0xff]++;
		size_t pos = 0;
		for (size_t d = 0; d < 256; d++) {
			size_t x = count[d];
			count[d] = pos;
			pos += x;
		}
		for (size_t i = 0; i < n; i++)
			to[count[(from[i] >> shift) & 0xff]++] = from[i];
		uint64_t *x = from;
		from = to;
		to = x;
	}
	if (from != a)
		memcpy(a, from, n * sizeof *a);
}

/* Buckets [lo, hi) sorted, the first of each run of equal words kept. */
static void sort_buckets(void *p, size_t lo, size_t hi)
{
	struct fused *f = p;
	uint64_t *tmp = NULL;
	size_t cap = 0;
	for (size_t b = lo; b < hi; b++) {
		uint64_t *a = f->keys + f->bstart[b];
		size_t n = f->bstart[b + 1] - f->bstart[b], m = 0;
		sort_bucket(a, n, &tmp, &cap);
		for (size_t i = 0; i < n; i++)
			if (!m || a[i] != a[m - 1])
				a[m++] = a[i];
		f->bkept[b] = m;
	}
	free(tmp);
}

static void store_buckets(void *p, size_t lo, size_t hi)
{
	struct fused *f = p;
	const struct colresult *c = f->c;
	struct vgq_relation *rel = f->rel;
	size_t w = c->words;
	uint64_t k[MAX_WORDS];
	for (size_t b = lo; b < hi; b++) {
		const uint64_t *a = f->keys + f->bstart[b];
		for (size_t i = 0, t = f->bto[b]; i < f->bkept[b]; i++, t++) {
			unpack_row(&f->pk, a[i], k, w);
			size_t o = 0;
			rel->from[t] = (int64_t)(k[o++] ^ SIGN);
			if (!c->event)
				rel->to[t] = (int64_t)(k[o++] ^ SIGN);
			for (size_t x = 0; x < c->nt; x++, o++)
				rel->cols[x].u[t] = k[o] ^ (c->is_signed[x] ? SIGN : 0);
		}
	}
}

/* Buckets for n tuples over the time span [first, last]: about 256 rows each. */
static void plan_buckets(struct fused *f, int64_t first, int64_t last)
{
	size_t want = f->n / 256;
	f->nb = 1;
	while (f->nb < want && f->nb < ((size_t)1 << 16))
		f->nb <<= 1;
	f->bbase = (uint64_t)first ^ SIGN;
	uint64_t span = last > first ? ((uint64_t)last ^ SIGN) - f->bbase : 0;
	f->bshift = 0;
	while (f->bshift < 63 && (span >> f->bshift) >= f->nb)
		f->bshift++;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The plan's nodes from `root` down to its scan: the figures of a run that made no
 * bindings (explain --analyze): the scan's tuples, the tuples the semi-join keeps. */
static void note_figures(struct xnode *root, struct xnode *semi, const struct fused *f, size_t kept,
                         unsigned threads, uint64_t ns)
{
	for (struct xnode *x = root; x; x = x->l) {
		x->rows = x == semi->l ? f->n : kept;
		x->calls = f->nchunks;
		x->threads = threads;
		x->ns += ns;
		if (x == semi->l)
			break;
	}
}

bool vgq_semijoin_result(struct vgq_session *s, const struct bstmt *b, struct xnode *root)
{
	struct xnode *semi = root;
	while (semi && (semi->ops == &vgq_project_ops || semi->ops == &vgq_tproject_ops))
		semi = semi->l;
	if (!semi || semi->ops != &vgq_semijoin_ops || !semi->l || semi->l->ops != &vgq_scan_ops)
		return false;
	struct colresult c;
	if (!shape_of(b, &c) || c.var != semi->l->p->var)
		return false;
	uint64_t t0 = now_ns();
	const struct vgq_semicols *sc = vgq_semijoin_cols(semi); /* its groups built */
	if (!sc || (sc->lkey && sc->lkvar != c.var) || (sc->ltime && sc->ltvar != c.var))
		return false;
	if (vgq_overflowed(root->cx) || !sc->used)
		return true; /* past the memory budget: the statement stops */
	const struct vgq_relation *from = b->vars[c.var].rel;
	unsigned threads = vgq_session_threads(s);
	struct fused f = {.c = &c, .sc = sc, .n = from->ntuples, .rel = b->out};
	f.nchunks = f.n ? threads * 4 : 0;
	f.chunk = f.nchunks ? (f.n + f.nchunks - 1) / f.nchunks : 1;
	plan_buckets(&f, from->first, from->last);
	size_t place_bytes = f.nchunks * f.nb * sizeof *f.place;
	if (!vgq_mem_take(s, "the result's rows", place_bytes))
		return true;
	f.place = vgq_xcalloc(f.nchunks * f.nb + 1, sizeof *f.place);
	f.kept = vgq_xcalloc(f.nchunks + 1, sizeof *f.kept);
	f.count = vgq_xcalloc(f.nchunks + 1, sizeof *f.count);
	f.lo = vgq_xcalloc((f.nchunks + 1) * MAX_WORDS, sizeof *f.lo);
	f.hi = vgq_xcalloc((f.nchunks + 1) * MAX_WORDS, sizeof *f.hi);
	vgq_parallel_for(s, f.nchunks, 1, count_chunks, &f);
	size_t m = 0, kept = 0, w = c.words;
	uint64_t least[MAX_WORDS], most[MAX_WORDS];
	for (size_t o = 0; o < w; o++) {
		least[o] = UINT64_MAX;
		most[o] = 0;
	}
	for (size_t ch = 0; ch < f.nchunks; ch++) {
		m += f.count[ch];
		kept += f.kept[ch];
		for (size_t o = 0; o < w && f.count[ch]; o++) {
			uint64_t l = f.lo[ch * MAX_WORDS + o], h = f.hi[ch * MAX_WORDS + o];
			least[o] = l < least[o] ? l : least[o];
			most[o] = h > most[o] ? h : most[o];
		}
	}
	pack_plan(&f.pk, least, most, w);
	bool done = false;
	size_t bytes = (m + 1) * sizeof *f.keys + 3 * (f.nb + 1) * sizeof(size_t);
	if (!f.pk.on) { /* the rows do not fit a word: result_direct.c's path */
	} else if (vgq_mem_take(s, "the result's rows", bytes)) {
		/* each chunk's rows of a bucket after the chunk before's */
		f.bstart = vgq_xcalloc(f.nb + 1, sizeof *f.bstart);
		f.bkept = vgq_xcalloc(f.nb + 1, sizeof *f.bkept);
		f.bto = vgq_xcalloc(f.nb + 1, sizeof *f.bto);
		size_t at = 0;
		for (size_t bk = 0; bk < f.nb; bk++) {
			f.bstart[bk] = at;
			for (size_t ch = 0; ch < f.nchunks; ch++) {
				uint32_t n = f.place[ch * f.nb + bk];
				f.place[ch * f.nb + bk] = (uint32_t)at;
				at += n;
			}
		}
		f.bstart[f.nb] = at;
		f.keys = vgq_xcalloc(m + 1, sizeof *f.keys);
		vgq_parallel_for(s, f.nchunks, 1, write_chunks, &f);
		size_t grain = vgq_grain(s, f.nb, 1, 256);
		vgq_parallel_for(s, f.nb, grain, sort_buckets, &f);
		size_t rows = 0;
		for (size_t bk = 0; bk < f.nb; bk++) {
			f.bto[bk] = rows;
			rows += f.bkept[bk];
		}
		struct vgq_relation *rel = b->out;
		vgq_relation_resize_unset(rel, rows);
		vgq_parallel_for(s, f.nb, grain, store_buckets, &f);
		if (rel->nulls) /* a relation stored again: no flags of before (no value is null) */
			for (size_t a = 0; a < c.nt; a++) {
				free(rel->nulls[a]);
				rel->nulls[a] = NULL;
			}
		vgq_relation_finish(rel, s->db ? s->db->last : 0);
		vgq_mem_give(s, bytes);
		free(f.keys);
		free(f.bstart);
		free(f.bkept);
		free(f.bto);
		note_figures(root, semi, &f, kept, threads, now_ns() - t0);
		done = true;
	} else {
		done = true; /* past the budget: the statement stops */
	}
	vgq_mem_give(s, place_bytes);
	free(f.place);
	free(f.kept);
	free(f.count);
	free(f.lo);
	free(f.hi);
	return done;
}
