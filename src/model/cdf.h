/* The distribution of the time from a start event to terminal events (docs/model.md,
 * "CDFs"; Sentinel's Algorithms 1-2): a depth-first search bounded by depth and by a
 * probability cut-off keeps the transitions on paths that reach a terminal event; their
 * probabilities are renormalised; random walks over them add a time drawn from each
 * transition's sketch. */
#ifndef VIGIL_MODEL_CDF_H
#define VIGIL_MODEL_CDF_H

#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

struct vgm_cdf_opts {
	uint32_t start;
	const uint32_t *terms;
	size_t nterms;
	unsigned depth; /* longest path, in transitions */
	double cutoff;  /* paths less probable than this are pruned (0 < cutoff <= 1) */
	uint64_t walks; /* random walks */
	uint64_t seed;
};

#define VGM_CDF_DEPTH 20
#define VGM_CDF_CUTOFF 0.001
#define VGM_CDF_WALKS 10000

struct vgm_cdf_result {
	double *samples; /* ns from start to terminal of each walk that got there, sorted */
	size_t nsamples;
	uint64_t abandoned; /* walks stopped by the depth or the cut-off before a terminal */
	double mass;        /* probability of the paths found (unnormalised) */
	uint64_t paths;     /* paths found by the search */
	size_t edges;       /* transitions kept */
	size_t untimed;     /* kept transitions without timed values (they count 0 ns) */
};

/* Returns 0; 1 when no path from start reaches a terminal within the bounds (nothing
 * sampled); -1 when out of memory. */
int vgm_cdf(const struct vgm_model *m, const struct vgm_cdf_opts *o, struct vgm_cdf_result *r);
void vgm_cdf_free(struct vgm_cdf_result *r);
/* The q-quantile of the sorted samples (nearest rank). */
double vgm_cdf_quantile(const struct vgm_cdf_result *r, double q);

/* Draws the empirical CDF of the sorted samples as an SVG document: axes, ticks with
 * units, labels, a log-scaled x axis when the samples span two decades or more. */
int vgm_cdf_svg(FILE *f, const double *sorted, size_t n, const char *title, const char *xlabel);

#endif
