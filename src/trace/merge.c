/* K-way merge of all streams by absolute time, with a binary min-heap of cursors.
 * Equal times come out in stream order (stream index), so the merge is stable. */
#include <stdlib.h>

#include "internal.h"
#include "prefetch.h"

struct vgt_merge {
	struct vgt_cursor *cursors;
	size_t n;
	size_t *heap; /* cursor indices */
	size_t nheap;
	bool top_returned; /* the top's event was handed out: advance it first */
	bool window;
	int64_t from, to;
	int64_t first;                 /* time of the first event, INT64_MIN if none */
	struct vgt_prefetch *prefetch; /* streams decoded ahead (vgt_set_decode_threads) */
	struct vgt_event *ahead;       /* with prefetch: each stream's current event (the
	                                * cursors belong to the workers) */
	const struct vgt_event **cur;  /* each stream's current event */
};

/* The next event of cursor i into its `ev`. */
static bool advance(struct vgt_merge *m, size_t i)
{
	if (m->prefetch)
		return vgt__prefetch_next(m->prefetch, i, &m->ahead[i]);
	return vgt_cursor_advance(&m->cursors[i]);
}

static bool before(const struct vgt_merge *m, size_t a, size_t b)
{
	const struct vgt_event *x = m->cur[a], *y = m->cur[b];
	return x->ts < y->ts || (x->ts == y->ts && a < b);
}

static void sift_down(struct vgt_merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, min = i;
		if (l < m->nheap && before(m, m->heap[l], m->heap[min]))
			min = l;
		if (r < m->nheap && before(m, m->heap[r], m->heap[min]))
			min = r;
		if (min == i)
			return;
		size_t tmp = m->heap[i];
		m->heap[i] = m->heap[min];
		m->heap[min] = tmp;
		i = min;
	}
}

static void sift_up(struct vgt_merge *m, size_t i)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!before(m, m->heap[i], m->heap[parent]))
			return;
		size_t tmp = m->heap[i];
		m->heap[i] = m->heap[parent];
		m->heap[parent] = tmp;
		i = parent;
	}
}

struct vgt_merge *vgt_merge_open(struct vgt_trace *t)
{
	return vgt_merge_open_threads(t, vgt_decode_threads());
}

struct vgt_merge *vgt_merge_open_threads(struct vgt_trace *t, unsigned threads)
{
	return vgt_merge_open_skipping(t, threads, NULL);
}

struct vgt_merge *vgt_merge_open_skipping(struct vgt_trace *t, unsigned threads, const bool *skip)
{
	return vgt_merge_open_windows(t, threads, skip, NULL);
}

struct vgt_merge *vgt_merge_open_windows(struct vgt_trace *t, unsigned threads, const bool *skip,
                                         const struct vgt_class_window *windows)
{
	struct vgt_merge *m = vgt__xcalloc(1, sizeof *m);
	m->n = t->nstreams;
	m->cursors = vgt__xcalloc(m->n + 1, sizeof *m->cursors);
	m->heap = vgt__xcalloc(m->n + 1, sizeof *m->heap);
	for (size_t i = 0; i < m->n; i++) {
		vgt_cursor_init(&m->cursors[i], t->streams[i]);
		m->cursors[i].skip = skip;
		if (windows)
			vgt_cursor_windows(&m->cursors[i], windows, t->nclasses);
		if (t->summaries)
			vgt_summary_attach(&m->cursors[i]);
	}
	m->prefetch = vgt__prefetch_start(m->cursors, m->n, threads);
	m->cur = vgt__xcalloc(m->n + 1, sizeof *m->cur);
	if (m->prefetch)
		m->ahead = vgt__xcalloc(m->n + 1, sizeof *m->ahead);
	for (size_t i = 0; i < m->n; i++)
		m->cur[i] = m->prefetch ? &m->ahead[i] : &m->cursors[i].ev;
	for (size_t i = 0; i < m->n; i++) {
		if (advance(m, i)) {
			m->heap[m->nheap] = i;
			sift_up(m, m->nheap++);
		}
	}
	m->first = m->nheap ? m->cur[m->heap[0]]->ts : INT64_MIN;
	return m;
}

int64_t vgt_merge_first_ts(struct vgt_merge *m)
{
	return m->first;
}

void vgt_merge_window(struct vgt_merge *m, int64_t from, int64_t to)
{
	m->window = true;
	m->from = from;
	m->to = to;
}

const struct vgt_event *vgt_merge_next(struct vgt_merge *m)
{
	for (;;) {
		if (m->top_returned) {
			m->top_returned = false;
			if (advance(m, m->heap[0])) {
				sift_down(m, 0);
			} else {
				m->heap[0] = m->heap[--m->nheap];
				sift_down(m, 0);
			}
		}
		if (!m->nheap)
			return NULL;
		m->top_returned = true;
		const struct vgt_event *ev = m->cur[m->heap[0]];
		if (!m->window || (ev->ts >= m->from && ev->ts <= m->to))
			return ev;
	}
}

void vgt_merge_close(struct vgt_merge *m)
{
	if (!m)
		return;
	vgt__prefetch_stop(m->prefetch);
	for (size_t i = 0; i < m->n; i++)
		vgt_cursor_fini(&m->cursors[i]);
	free(m->cursors);
	free(m->heap);
	free(m->cur);
	free(m->ahead);
	free(m);
}
