/* A sparse quantile sketch of durations (docs/model.md, "Sketches"): counts per bucket of
 * src/common/sketch_index.h, kept as a list sorted by bucket. Quantiles are read as the
 * middle of the bucket that holds the rank, so they are within 0.78% of the exact value;
 * sketches merge by adding counts, and compare by earth mover's distance. */
#ifndef VIGIL_MODEL_SKETCH_H
#define VIGIL_MODEL_SKETCH_H

#include <stddef.h>
#include <stdint.h>

struct vgm_bucket {
	uint32_t b; /* bucket index (sketch_index.h) */
	uint64_t n; /* values in it, >= 1 */
};

struct vgm_sketch {
	struct vgm_bucket *v; /* ascending b */
	size_t len, cap;
	uint64_t total; /* sum of n */
};

void vgm_sketch_free(struct vgm_sketch *s);
/* Adds n values of duration ns (or to bucket b). Returns 0, or -1 when out of memory. */
int vgm_sketch_add(struct vgm_sketch *s, uint64_t ns, uint64_t n);
int vgm_sketch_add_bucket(struct vgm_sketch *s, uint32_t b, uint64_t n);
/* dst += src. */
int vgm_sketch_merge(struct vgm_sketch *dst, const struct vgm_sketch *src);
/* The q-quantile (0 <= q <= 1) by nearest rank: the value of the bucket holding the
 * ceil(q * total)-th smallest value (the smallest for q = 0). NAN when empty. */
double vgm_sketch_quantile(const struct vgm_sketch *s, double q);
/* Mean of the bucket values (NAN when empty). */
double vgm_sketch_mean(const struct vgm_sketch *s);
/* Earth mover's distance in ns between the two distributions, each normalised by its
 * count: the integral of |F_a(x) - F_b(x)| over x, with every value at its bucket's value.
 * NAN when either is empty. */
double vgm_sketch_emd(const struct vgm_sketch *a, const struct vgm_sketch *b);
/* The value of the bucket holding the r-th smallest value, 0 <= r < total. */
double vgm_sketch_at_rank(const struct vgm_sketch *s, uint64_t r);

#endif
