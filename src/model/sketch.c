/* The sparse sketch: a sorted list of (bucket, count). Insertions of a new bucket shift
 * the tail; a transition rarely has more than a few hundred buckets (3776 at most). */
#include "model/sketch.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/sketch_index.h"

void vgm_sketch_free(struct vgm_sketch *s)
{
	free(s->v);
	memset(s, 0, sizeof *s);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Index of the first bucket >= b. */
static size_t lower_bound(const struct vgm_sketch *s, uint32_t b)
{
	size_t lo = 0, hi = s->len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid].b < b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int vgm_sketch_add_bucket(struct vgm_sketch *s, uint32_t b, uint64_t n)
{
	if (!n)
		return 0;
	size_t i = s->len && s->v[s->len - 1].b < b ? s->len : lower_bound(s, b);
	if (i == s->len || s->v[i].b != b) {
		if (s->len == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 8;
			struct vgm_bucket *v = realloc(s->v, cap * sizeof *v);
			if (!v)
				return -1;
			s->v = v;
			s->cap = cap;
		}
		memmove(s->v + i + 1, s->v + i, (s->len - i) * sizeof *s->v);
		s->v[i] = (struct vgm_bucket){b, 0};
		s->len++;
	}
	s->v[i].n = sat_add(s->v[i].n, n);
	s->total = sat_add(s->total, n);
	return 0;
}

int vgm_sketch_add(struct vgm_sketch *s, uint64_t ns, uint64_t n)
{
	return vgm_sketch_add_bucket(s, vg_sketch_index(ns), n);
}

int vgm_sketch_merge(struct vgm_sketch *dst, const struct vgm_sketch *src)
{
	if (!src->len)
		return 0;
	/* Merge the two sorted lists into a new one. */
	size_t cap = dst->len + src->len;
	struct vgm_bucket *v = malloc(cap * sizeof *v);
	if (!v)
		return -1;
	size_t i = 0, j = 0, k = 0;
	while (i < dst->len || j < src->len) {
		if (j == src->len || (i < dst->len && dst->v[i].b < src->v[j].b))
			v[k++] = dst->v[i++];
		else if (i == dst->len || src->v[j].b < dst->v[i].b)
			v[k++] = src->v[j++];
		else {
			v[k] = dst->v[i++];
			v[k].n = sat_add(v[k].n, src->v[j++].n);
			k++;
		}
	}
	free(dst->v);
	dst->v = v;
	dst->len = k;
	dst->cap = cap;
	dst->total = sat_add(dst->total, src->total);
	return 0;
}

double vgm_sketch_at_rank(const struct vgm_sketch *s, uint64_t r)
{
	uint64_t seen = 0;
	for (size_t i = 0; i < s->len; i++) {
		seen += s->v[i].n;
		if (r < seen)
			return vg_sketch_bucket_value(s->v[i].b);
	}
	return s->len ? vg_sketch_bucket_value(s->v[s->len - 1].b) : NAN;
}

double vgm_sketch_quantile(const struct vgm_sketch *s, double q)
{
	if (!s->total)
		return NAN;
	if (q <= 0)
		return vg_sketch_bucket_value(s->v[0].b);
	double rank = ceil(q * (double)s->total); /* 1-based */
	if (rank < 1)
		rank = 1;
	if (rank > (double)s->total)
		rank = (double)s->total;
	return vgm_sketch_at_rank(s, (uint64_t)rank - 1);
}

double vgm_sketch_mean(const struct vgm_sketch *s)
{
	if (!s->total)
		return NAN;
	long double sum = 0;
	for (size_t i = 0; i < s->len; i++)
		sum += (long double)vg_sketch_bucket_value(s->v[i].b) * (long double)s->v[i].n;
	return (double)(sum / (long double)s->total);
}

double vgm_sketch_emd(const struct vgm_sketch *a, const struct vgm_sketch *b)
{
	if (!a->total || !b->total)
		return NAN;
	/* Walk both lists in ascending value; between consecutive values the CDFs are flat. */
	size_t i = 0, j = 0;
	double fa = 0, fb = 0, emd = 0, prev = 0;
	bool first = true;
	while (i < a->len || j < b->len) {
		uint32_t bi = i < a->len ? a->v[i].b : UINT32_MAX;
		uint32_t bj = j < b->len ? b->v[j].b : UINT32_MAX;
		uint32_t bk = bi < bj ? bi : bj;
		double x = vg_sketch_bucket_value(bk);
		if (!first)
			emd += fabs(fa - fb) * (x - prev);
		first = false;
		if (bi == bk)
			fa += (double)a->v[i++].n / (double)a->total;
		if (bj == bk)
			fb += (double)b->v[j++].n / (double)b->total;
		prev = x;
	}
	return emd;
}
