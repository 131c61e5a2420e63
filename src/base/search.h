/* Binary searches of a sorted array of times (or any int64_t), written once: a time
 * index's first entry at or after an instant, or after it. */
#ifndef VIGIL_BASE_SEARCH_H
#define VIGIL_BASE_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/* The first index of the ascending v[0..n) whose value is >= t (n if none). */
static inline size_t vgb_first_at_least(const int64_t *v, size_t n, int64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first index of the ascending v[0..n) whose value is > t (n if none). */
static inline size_t vgb_first_after(const int64_t *v, size_t n, int64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
