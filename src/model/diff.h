/* Ranked differences between two models (docs/model.md, "Differences"; Sentinel's
 * difference reports): event proportions, transition probabilities P(E2|E1) and
 * transition-time distributions. Events are matched across the models by (site, fmt). */
#ifndef VIGIL_MODEL_DIFF_H
#define VIGIL_MODEL_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

struct vgm_diff_opts {
	uint64_t min_support; /* K: see vgm_diff */
	double alpha;         /* additive smoothing of P(E2|E1) */
	int events_by;        /* VGM_EVENTS_BY_SHARE or VGM_EVENTS_BY_CHI2 */
};

enum { VGM_EVENTS_BY_SHARE = 0, VGM_EVENTS_BY_CHI2 = 1 };

#define VGM_DIFF_MIN_SUPPORT 10
#define VGM_DIFF_ALPHA 1.0

/* Event indices are per model: a in the baseline, b in the other (-1: absent). */
struct vgm_event_row {
	long a, b;
	uint64_t ca, cb; /* counts */
	double pa, pb;   /* proportions of all events of the run */
	double chi2;     /* Pearson's chi-square of (this event, the others) x (a, b) */
	double score;    /* |pb - pa|, or chi2 (opts.events_by) */
};

struct vgm_trans_row {
	long a_from, a_to, b_from, b_to;
	uint64_t ca, cb;     /* transition counts */
	uint64_t outa, outb; /* transitions leaving E1 in each run */
	double pa, pb;       /* smoothed P(E2|E1) */
	double score;        /* max(pa/pb, pb/pa) */
};

struct vgm_time_row {
	long a_from, a_to, b_from, b_to;
	uint64_t na, nb; /* timed values */
	uint64_t ca, cb; /* transition counts */
	double emd;      /* earth mover's distance, ns */
	double p50a, p50b, p99a, p99b, meana, meanb;
};

struct vgm_diff {
	struct vgm_event_row *events;
	size_t nevents;
	struct vgm_trans_row *trans;
	size_t ntrans;
	struct vgm_time_row *times;
	size_t ntimes;
	size_t common;             /* events in both models */
	uint64_t total_a, total_b; /* all events of each run */
	size_t trans_unsupported;  /* transitions left out by the minimum support */
	size_t times_unsupported;  /* common transitions with fewer than K timed values */
};

/* Ranks the differences, largest first:
 *  - every event of either model by |pb - pa| (pa: its share of all events of the run),
 *    or by the chi-square of its 2x2 table (its count and the other events' count in each
 *    run): a change of a rare event's count outranks a dominant event's small share change;
 *  - every transition E1 -> E2 of either model whose E1 left at least K times in each
 *    run and which happened at least K times in one of them, by max(pa/pb, pb/pa), with
 *    p = (count + alpha) / (out(E1) + alpha * S), S the distinct successors of E1 in
 *    the two models together;
 *  - every transition of both models with at least K timed values in each, by the earth
 *    mover's distance of its two time distributions.
 * Returns 0; 1 when the models have no event in common (nothing is ranked); -1 when out
 * of memory. */
int vgm_diff(const struct vgm_model *a, const struct vgm_model *b, const struct vgm_diff_opts *o,
             struct vgm_diff *d);
void vgm_diff_free(struct vgm_diff *d);

/* The document of `vigil diff --format json` (diff_json.c): both models' totals, the
 * options, and the first `top` rows of each report (0: all). */
struct json_t;
struct json_t *vgm_diff_json(const struct vgm_model *a, const char *path_a,
                             const struct vgm_model *b, const char *path_b,
                             const struct vgm_diff *d, size_t top, const struct vgm_diff_opts *o);

#endif
