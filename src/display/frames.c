/* The instants at which a scene's contents can change, for a static copy of a movie
 * (vigil ui --export --display): between two consecutive ones only the fading of the past
 * (opacity, age) and the clock move, so the scene at each one stands for the time up to
 * the next. */
#include <stdlib.h>

#include "display/internal.h"

static int cmp_time(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

struct list {
	int64_t *v;
	size_t n, cap;
	int64_t first, last;
};

static void add(struct list *l, int64_t t)
{
	if (t < l->first || t > l->last)
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		int64_t *p = realloc(l->v, l->cap * sizeof *p);
		if (!p)
			abort();
		l->v = p;
	}
	l->v[l->n++] = t;
}

int64_t *vgd_frames(const struct vgd_display *d, size_t *n)
{
	struct list l = {.first = d->first, .last = d->last};
	add(&l, d->first);
	bool trace = d->f->time == VGD_T_TRACE;
	for (size_t i = 0; i < d->f->nshows; i++) {
		const struct vgq_relation *r = d->f->shows[i].r;
		bool again = false;
		for (size_t j = 0; j < i; j++)
			again |= d->f->shows[j].r == r;
		if (!r || again)
			continue;
		for (size_t k = 0; k < r->ntuples; k++) {
			add(&l, r->from[k]);
			if (r->to && r->open[k])
				continue;
			/* where it stops being present (scene.c, presence), then leaves the past */
			int64_t end = r->to ? r->to[k] : r->from[k] + d->hold;
			add(&l, end);
			if (trace)
				add(&l, end + d->window);
		}
	}
	qsort(l.v, l.n, sizeof *l.v, cmp_time);
	size_t m = 0;
	for (size_t i = 0; i < l.n; i++)
		if (!m || l.v[m - 1] != l.v[i])
			l.v[m++] = l.v[i];
	*n = m;
	return l.v;
}
