/* Morsel-driven parallel execution (HyPer, DuckDB): a materialising operator's input
 * that is a pipeline (a source and the nodes streaming its bindings up their left
 * input) is run by the session's workers, each on its own clone of the pipeline's nodes
 * over the shared built state, claiming morsels of the source (ranges of a scan's
 * tuples, ranges of a sweep's begin times) from an atomic counter. Each morsel's
 * bindings go to its worker's buffer and are put together in morsel order, so the rows
 * are those of the serial run in the serial order: answers, ties and the summation
 * order of aggregates do not depend on the number of threads. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/pool.h"
#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "query/radix.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The pipeline ending at n, top first: its nodes (at most VGQ_MAX_DEPTH); the last is
 * the source. 0 when n is not one. */
#define VGQ_MAX_DEPTH 64
static size_t pipeline_of(struct xnode *n, struct xnode **path)
{
	size_t d = 0;
	for (; n && d < VGQ_MAX_DEPTH; n = n->l) {
		path[d++] = n;
		if (n->ops->morsels)
			return d;
		if (!n->ops->streams)
			return 0;
	}
	return 0;
}

/* One morsel's bindings: where in which worker's buffer. */
struct segment {
	unsigned worker;
	size_t at, n;
};

struct job {
	struct xnode **path; /* the originals, top first */
	size_t depth, nmorsels;
	struct xnode **clones; /* per worker: depth clones, top first */
	struct xrows *bufs;    /* per worker */
	struct segment *seg;   /* per morsel */
	size_t next;           /* the next morsel to claim (atomic) */
	struct xctx *cx;
	const struct vgq_sink *sink; /* morsels' bindings handed over, not kept (or NULL) */
};

/* Adds a clone's bindings emitted since the last time to its original's; the
 * statement stops once a node's total passes the limit. */
static void flush_emitted(struct xctx *cx, struct xnode *clone, struct xnode *orig)
{
	uint64_t d = clone->emitted - clone->flushed;
	if (!d)
		return;
	clone->flushed = clone->emitted;
	uint64_t total = __atomic_add_fetch(&orig->emitted, d, __ATOMIC_RELAXED);
	if (cx->limit && total > cx->limit)
		vgq_set_overflow(cx);
}

static void work(void *p, unsigned w)
{
	struct job *j = p;
	struct xnode **c = j->clones + (size_t)w * j->depth;
	struct xrows *buf = &j->bufs[w];
	size_t width = j->cx->width;
	buf->width = width;
	for (;;) {
		size_t m = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (m >= j->nmorsels || vgq_overflowed(j->cx))
			break;
		c[j->depth - 1]->ops->seek(c[j->depth - 1], m);
		size_t at = buf->n;
		for (;;) {
			if (!vgq_rows_reserve(buf, j->cx->s, j->path[0]->ops->name, VGQ_BATCH))
				break; /* past the memory budget: the statement stops */
			size_t k = vgq_node_next(c[0], buf->rows + buf->n * width);
			if (!k)
				break;
			buf->n += k;
		}
		for (size_t d = 0; d < j->depth; d++)
			flush_emitted(j->cx, c[d], j->path[d]);
		if (j->sink) { /* handed over while in cache; the buffer is reused */
			if (!vgq_overflowed(j->cx))
				j->sink->morsel(j->sink->ctx, w, m, buf->rows + at * width,
				                buf->n - at);
			buf->n = at;
			continue;
		}
		j->seg[m] = (struct segment){w, at, buf->n - at};
	}
}

/* Worker w's clones of the pipeline, bottom up so each fork finds its clone's input. */
static void fork_pipeline(struct job *j, unsigned w)
{
	struct xnode **c = j->clones + (size_t)w * j->depth;
	for (size_t d = j->depth; d-- > 0;) {
		const struct xnode *o = j->path[d];
		struct xnode *k = vgq_xcalloc(1, sizeof *k);
		k->ops = o->ops;
		k->p = o->p;
		k->agg = o->agg;
		k->cx = o->cx;
		k->l = d + 1 < j->depth ? c[d + 1] : o->l; /* a source's: built */
		k->r = o->r;                               /* built: never pulled by a clone */
		k->state = o->ops->fork ? o->ops->fork(k, o) : NULL;
		c[d] = k;
	}
}

/* The clones' figures into the originals', and the clones freed. */
static void join_pipeline(struct job *j, unsigned threads)
{
	for (size_t d = 0; d < j->depth; d++) {
		struct xnode *o = j->path[d];
		for (unsigned w = 0; w < threads; w++) {
			struct xnode *k = j->clones[(size_t)w * j->depth + d];
			o->rows += k->rows;
			o->calls += k->calls;
			o->ns += k->ns;
			if (k->ops->unfork && k->state)
				k->ops->unfork(k);
			free(k);
		}
		/* the workers it was shared among (how many took a morsel is up to timing) */
		o->threads = threads;
	}
}

static bool run_parallel(struct xnode *top, struct xrows *out, const struct vgq_sink *sink)
{
	struct vgq_session *s = top->cx->s;
	unsigned threads = vg_pool_threads(s->pool);
	if (threads < 2 && !sink)
		return false;
	struct xnode *path[VGQ_MAX_DEPTH];
	size_t depth = pipeline_of(top, path);
	if (!depth)
		return false;
	/* what the workers share, built first (each build side a parallel run of its own) */
	for (size_t d = depth; d-- > 0;)
		if (path[d]->ops->build) {
			uint64_t t0 = path[d]->cx->timed ? now_ns() : 0;
			path[d]->ops->build(path[d]);
			if (path[d]->cx->timed)
				path[d]->ns += now_ns() - t0;
		}
	if (vgq_overflowed(top->cx))
		return true;
	for (size_t d = 0; d < depth; d++)
		if (path[d]->serial) /* built to be read on one thread */
			return false;
	struct xnode *src = path[depth - 1];
	size_t nm = src->ops->morsels(src);
	if (nm < 2)
		return false;
	struct job j = {.path = path, .depth = depth, .nmorsels = nm, .cx = top->cx, .sink = sink};
	j.clones = vgq_xcalloc((size_t)threads * depth, sizeof *j.clones);
	j.bufs = vgq_xcalloc(threads, sizeof *j.bufs);
	j.seg = vgq_xcalloc(nm, sizeof *j.seg);
	for (unsigned w = 0; w < threads; w++)
		fork_pipeline(&j, w);
	if (sink)
		sink->begin(sink->ctx, nm, threads);
	vg_pool_run(s->pool, work, &j);
	join_pipeline(&j, threads);
	size_t total = 0;
	for (size_t m = 0; m < nm; m++)
		total += j.seg[m].n;
	size_t w = top->cx->width;
	out->width = w;
	out->n = 0;
	/* the workers' buffers are held until copied: the budget holds both (a sink kept
	 * nothing) */
	if (sink || vgq_overflowed(top->cx) || !vgq_rows_reserve(out, s, top->ops->name, total))
		nm = 0; /* the statement stops: nothing to copy */
	for (size_t m = 0; m < nm; m++) {
		const struct segment *g = &j.seg[m];
		if (g->n)
			memcpy(out->rows + out->n * w, j.bufs[g->worker].rows + g->at * w,
			       g->n * w * sizeof *out->rows);
		out->n += g->n;
	}
	for (unsigned t = 0; t < threads; t++)
		vgq_rows_free(&j.bufs[t]);
	free(j.bufs);
	free(j.seg);
	free(j.clones);
	return true;
}

void vgq_rows_collect(struct xnode *child, struct xrows *out)
{
	if (!run_parallel(child, out, NULL))
		vgq_rows_drain(child, out);
}

void vgq_rows_stream(struct xnode *child, const struct vgq_sink *sink)
{
	struct xrows all = {0};
	if (run_parallel(child, &all, sink))
		return;
	/* not a pipeline (or one morsel): its bindings as one morsel */
	vgq_rows_drain(child, &all);
	sink->begin(sink->ctx, 1, 1);
	if (!vgq_overflowed(child->cx))
		sink->morsel(sink->ctx, 0, 0, all.rows, all.n);
	vgq_rows_free(&all);
}

/* Set while this thread runs a job of vgq_workers_run: the pool is busy, so the parallel
 * helpers it calls (sorts, loops) run on this thread alone. */
static _Thread_local bool alone;

unsigned vgq_session_threads(const struct vgq_session *s)
{
	return alone ? 1 : vg_pool_threads(s->pool);
}

struct alone_job {
	vg_pool_fn fn;
	void *ctx;
};

static void run_alone(void *p, unsigned w)
{
	const struct alone_job *j = p;
	bool was = alone;
	alone = true;
	j->fn(j->ctx, w);
	alone = was;
}

void vgq_workers_run(struct vgq_session *s, vg_pool_fn fn, void *ctx)
{
	struct alone_job j = {fn, ctx};
	if (alone) /* inside a job already: this thread is the only worker */
		run_alone(&j, 0);
	else
		vg_pool_run(s->pool, run_alone, &j);
}

size_t vgq_grain(const struct vgq_session *s, size_t n, size_t lo, size_t hi)
{
	size_t g = n / (8 * (size_t)vgq_session_threads(s));
	return g < lo ? lo : g > hi ? hi : g;
}

struct range_job {
	size_t n, grain, next;
	void (*fn)(void *ctx, size_t lo, size_t hi);
	void *ctx;
};

static void range_work(void *p, unsigned w)
{
	(void)w;
	struct range_job *j = p;
	for (;;) {
		size_t lo = __atomic_fetch_add(&j->next, j->grain, __ATOMIC_RELAXED);
		if (lo >= j->n)
			break;
		j->fn(j->ctx, lo, lo + j->grain < j->n ? lo + j->grain : j->n);
	}
}

void vgq_parallel_for(struct vgq_session *s, size_t n, size_t grain,
                      void (*fn)(void *ctx, size_t lo, size_t hi), void *ctx)
{
	if (!grain)
		grain = 1;
	if (vgq_session_threads(s) < 2 || n <= grain) {
		if (n)
			fn(ctx, 0, n);
		return;
	}
	struct range_job j = {n, grain, 0, fn, ctx};
	vg_pool_run(s->pool, range_work, &j);
}

/* Parallel sort: runs sorted by the workers, then merged pairwise. */
struct sort_job {
	char *a, *tmp;
	size_t n, size, run; /* run: the sorted runs' length in a merge round */
	int (*cmp)(const void *, const void *);
	void (*sort)(void *base, size_t n);
};

static void sort_runs(void *p, size_t lo, size_t hi)
{
	struct sort_job *j = p;
	for (size_t c = lo; c < hi; c++) {
		size_t a = c * j->run, z = a + j->run < j->n ? a + j->run : j->n;
		if (j->sort)
			j->sort(j->a + a * j->size, z - a);
		else
			qsort(j->a + a * j->size, z - a, j->size, j->cmp);
	}
}

/* One item: fixed sizes inline (a call to memcpy per item would cost more than the
 * comparison). */
static inline void copy_item(char *to, const char *from, size_t size)
{
	switch (size) {
	case 4:
		memcpy(to, from, 4);
		break;
	case 8:
		memcpy(to, from, 8);
		break;
	case 16:
		memcpy(to, from, 16);
		break;
	case 24:
		memcpy(to, from, 24);
		break;
	default:
		memcpy(to, from, size);
	}
}

static void merge_pairs(void *p, size_t lo, size_t hi)
{
	struct sort_job *j = p;
	size_t sz = j->size;
	for (size_t c = lo; c < hi; c++) {
		size_t a = c * 2 * j->run, m = a + j->run, z = m + j->run;
		if (m > j->n)
			m = j->n;
		if (z > j->n)
			z = j->n;
		size_t x = a, y = m, o = a;
		/* ties to the left run: a stable merge */
		while (x < m && y < z) {
			bool right = j->cmp(j->a + y * sz, j->a + x * sz) < 0;
			copy_item(j->tmp + o++ * sz, j->a + (right ? y++ : x++) * sz, sz);
		}
		memcpy(j->tmp + o * sz, j->a + x * sz, (m - x) * sz);
		o += m - x;
		memcpy(j->tmp + o * sz, j->a + y * sz, (z - y) * sz);
	}
}

/* Items i and k of `size` bytes swapped. */
static void swap_items(char *a, size_t i, size_t k, size_t size)
{
	char t[64];
	for (size_t o = 0; o < size; o += sizeof t) {
		size_t len = size - o < sizeof t ? size - o : sizeof t;
		memcpy(t, a + i * size + o, len);
		memcpy(a + i * size + o, a + k * size + o, len);
		memcpy(a + k * size + o, t, len);
	}
}

/* Heapsort (Williams 1964): in place, no scratch; with cmp a total order, the order of
 * any other sort. */
static void heap_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *a = base;
	for (size_t end = n, i = n / 2; end > 1;) {
		if (i > 0) {
			i--; /* building the heap */
		} else {
			swap_items(a, 0, --end, size); /* the greatest to its place */
		}
		for (size_t r = i;;) {
			size_t c = 2 * r + 1;
			if (c >= end)
				break;
			if (c + 1 < end && cmp(a + (c + 1) * size, a + c * size) > 0)
				c++;
			if (cmp(a + c * size, a + r * size) <= 0)
				break;
			swap_items(a, r, c, size);
			r = c;
		}
	}
}

#define SORT_PARALLEL_MIN 64 /* items below which one thread sorts */
/* A radix sort's digit counts, bounded by RADIX_DIGITS rows of RADIX counts per 64-bit
 * word of an item (the sorts given here count one key's digits: more than they take) */
#define SORT_COUNTS_BYTES(size) (((size) + 7) / 8 * RADIX_DIGITS * RADIX * sizeof(size_t))

void vgq_parallel_sort(struct vgq_session *s, void *base, size_t n, size_t size,
                       int (*cmp)(const void *, const void *), void (*sort)(void *base, size_t n))
{
	unsigned threads = vgq_session_threads(s);
	/* A `sort` (the result path's radix sorts: result.c, result_direct.c; the semi-join's
	 * column result sorts its buckets itself) takes scratch as large as the items it
	 * sorts, and digit counts per run: taken from the budget while it runs. */
	size_t runs = threads < 2 || n < SORT_PARALLEL_MIN ? 1 : threads;
	size_t scratch = sort ? n * size + runs * SORT_COUNTS_BYTES(size) : 0;
	if (runs == 1 || !vgq_mem_try(s, n * size + scratch)) {
		/* one thread, or the merge buffer (as large as the items) past the budget: the
		 * items sorted on this thread; past it, by cmp in place, without scratch (the
		 * same order: see above) */
		scratch = sort ? n * size + SORT_COUNTS_BYTES(size) : 0;
		if (sort && vgq_mem_try(s, scratch)) {
			sort(base, n);
			vgq_mem_give(s, scratch);
		} else if (sort) {
			heap_sort(base, n, size, cmp);
		} else if (n > 1) {
			qsort(base, n, size, cmp);
		}
		return;
	}
	/* runs of one length (the last shorter), so each merge round pairs runs of one length */
	size_t run = (n + threads - 1) / threads;
	struct sort_job j = {base, vgq_xcalloc(n, size), n, size, run, cmp, sort};
	vgq_parallel_for(s, (n + run - 1) / run, 1, sort_runs, &j);
	vgq_mem_give(s, scratch);
	for (; j.run < n; j.run *= 2) {
		vgq_parallel_for(s, (n + 2 * j.run - 1) / (2 * j.run), 1, merge_pairs, &j);
		char *t = j.a;
		j.a = j.tmp;
		j.tmp = t;
	}
	if (j.a != base) {
		memcpy(base, j.a, n * size);
		j.tmp = j.a;
	}
	free(j.tmp);
	vgq_mem_give(s, n * size);
}
