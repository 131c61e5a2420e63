/* The bucket of a duration in vigil's quantile sketches (docs/model.md, "Sketches").
 *
 * A log-linear mapping: durations under 64 ns have a bucket each; above, every power of
 * two is split into 64 equal buckets. A bucket's middle is within 1/128 (0.78%) of every
 * value in it, so quantiles read from merged bucket counts have at most 0.78% relative
 * error, and sketches merge by adding counts. Integer arithmetic only: the runtime
 * (libc only, a few ns per call) and the analysis code compute the same buckets.
 */
#ifndef VIGIL_COMMON_SKETCH_INDEX_H
#define VIGIL_COMMON_SKETCH_INDEX_H

#include <stdint.h>

enum {
	VG_SKETCH_SUB_BITS = 6, /* 64 buckets per power of two */
	VG_SKETCH_SUB = 1 << VG_SKETCH_SUB_BITS,
	/* Highest bucket + 1: 2^63..2^64-1 ns is the last octave. */
	VG_SKETCH_BUCKETS = (64 - VG_SKETCH_SUB_BITS + 1) * VG_SKETCH_SUB,
};

/* The bucket of a duration of ns nanoseconds: 0 .. VG_SKETCH_BUCKETS-1. */
static inline uint32_t vg_sketch_index(uint64_t ns)
{
	if (ns < VG_SKETCH_SUB)
		return (uint32_t)ns;
	unsigned octave = 63u - (unsigned)__builtin_clzll(ns); /* >= 6 */
	unsigned shift = octave - VG_SKETCH_SUB_BITS;
	return (uint32_t)((octave - VG_SKETCH_SUB_BITS + 1) * VG_SKETCH_SUB +
	                  ((ns >> shift) & (VG_SKETCH_SUB - 1)));
}

/* The smallest duration in bucket b, and the bucket's width (both in ns). */
static inline uint64_t vg_sketch_bucket_low(uint32_t b)
{
	if (b < VG_SKETCH_SUB)
		return b;
	unsigned shift = b / VG_SKETCH_SUB - 1;
	return (uint64_t)(VG_SKETCH_SUB + b % VG_SKETCH_SUB) << shift;
}

static inline uint64_t vg_sketch_bucket_width(uint32_t b)
{
	return b < VG_SKETCH_SUB ? 1 : (uint64_t)1 << (b / VG_SKETCH_SUB - 1);
}

/* The value a bucket stands for: its middle (exact for buckets of width 1). */
static inline double vg_sketch_bucket_value(uint32_t b)
{
	uint64_t w = vg_sketch_bucket_width(b);
	return (double)vg_sketch_bucket_low(b) + (w > 1 ? (double)w / 2.0 : 0.0);
}

#endif
