/* The aggregates of TQuel beyond Quel's (Snodgrass, Gomez and McKenzie 1993): any,
 * stdev, and those that read when each contribution began: first, last, rate, avgti,
 * varts (docs/tquel.md, "Aggregates"). Values are summed in ascending order so that the
 * result does not depend on the order contributions arrived in. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "relations/columns.h"

double vgq_agg_num(const struct vx_value *v)
{
	return v->type == VX_DOUBLE ? v->v.d : v->type == VX_UINT ? (double)v->v.u : (double)v->v.i;
}

static int by_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static int by_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

/* b - a for a <= b, exact (as int64 it may overflow: from "beginning" to "forever"). */
static uint64_t span(int64_t a, int64_t b)
{
	return (uint64_t)b - (uint64_t)a;
}

/* Population standard deviation of d[0..n) (sorted here); its mean in *mean. */
static double stdev(double *d, size_t n, double *mean)
{
	qsort(d, n, sizeof *d, by_double);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += d[i];
	double m = sum / (double)n, sq = 0;
	for (size_t i = 0; i < n; i++)
		sq += (d[i] - m) * (d[i] - m);
	*mean = m;
	return sqrt(sq / (double)n);
}

/* The contribution that began first (last): the earliest (latest) begin, ties to the
 * smallest (largest) value. */
static size_t extreme(const struct vx_value *v, const int64_t *b, size_t n, bool latest)
{
	size_t k = 0;
	for (size_t i = 1; i < n; i++) {
		int o = b[i] != b[k] ? (b[i] < b[k] ? -1 : 1) : vgq_value_order(&v[i], &v[k]);
		if (latest ? o > 0 : o < 0)
			k = i;
	}
	return k;
}

bool vgq_agg_temporal(enum tquel_aggfn fn, const struct vx_value *v, int64_t *b, size_t n,
                      struct vx_value *out)
{
	if (fn == TQ_ANY) {
		out->v.i = n > 0;
		return true;
	}
	if (n == 0)
		return false;
	switch (fn) {
	case TQ_STDEV: {
		double *d = vgq_xcalloc(n, sizeof *d), m;
		for (size_t i = 0; i < n; i++)
			d[i] = vgq_agg_num(&v[i]);
		out->v.d = stdev(d, n, &m);
		free(d);
		return true;
	}
	case TQ_FIRST:
	case TQ_LAST:
		*out = v[extreme(v, b, n, fn == TQ_LAST)];
		return true;
	case TQ_RATE: {
		size_t f = extreme(v, b, n, false), l = extreme(v, b, n, true);
		if (b[l] == b[f])
			return false;
		out->v.d =
		    (vgq_agg_num(&v[l]) - vgq_agg_num(&v[f])) / ((double)span(b[f], b[l]) / 1e9);
		return true;
	}
	case TQ_AVGTI:
	case TQ_VARTS: {
		if (n < 2)
			return false;
		qsort(b, n, sizeof *b, by_i64);
		if (fn == TQ_AVGTI) {
			out->v.d = (double)span(b[0], b[n - 1]) / 1e9 / (double)(n - 1);
			return true;
		}
		double *d = vgq_xcalloc(n - 1, sizeof *d), m;
		for (size_t i = 0; i + 1 < n; i++)
			d[i] = (double)span(b[i], b[i + 1]);
		double sd = stdev(d, n - 1, &m);
		free(d);
		if (m == 0)
			return false;
		out->v.d = sd / m;
		return true;
	}
	default:
		return false;
	}
}
