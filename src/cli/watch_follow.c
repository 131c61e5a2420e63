/* vigil watch, live and incremental: the subject's trace followed while it is written
 * (trace/follow.h) feeds the update network (live/delta.h) through the plan's filter,
 * each event once; at each update the answers that became final are printed. Used by
 * `vigil watch -- CMD` and `vigil watch --pid` when the query's shape allows (else they
 * answer by re-evaluating snapshots, watch_answer). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/watch.h"
#include "live/delta.h"
#include "trace/follow.h"
#include "trace/source.h"

struct watch_follow {
	struct vgt_follow *follow;
	struct vga_filter *filter;
	struct vgq_delta *delta;
	struct watch_printer *pr;
	const struct vgq_options *o;
	const struct vga_plan *plan;
	uint64_t clock_origin;
	bool clock_set;
	int64_t lateness;
	bool failed;
	size_t errors;
	struct watch_timings timings;
};

static int emit_final(void *p, const struct vgq_relation *r)
{
	struct watch_follow *w = p;
	if (watch_print(w->pr, r, true, 0) < 0) {
		fprintf(stderr, "vigil watch: writing the result: %s\n", strerror(errno));
		w->failed = true;
		return -1;
	}
	return 0;
}

struct watch_follow *watch_follow_new(const char *path, const struct tquel_query *q,
                                      const struct vga_plan *plan, const struct vgq_options *o,
                                      const struct watch_answer *ans, int64_t lateness,
                                      struct watch_printer *pr, char *why, size_t whysize)
{
	const char *env = getenv("VIGIL_WATCH_REEVALUATE");
	if (env && !strcmp(env, "1")) {
		snprintf(why, whysize, "VIGIL_WATCH_REEVALUATE=1");
		return NULL;
	}
	struct vgt_follow *follow = vgt_follow_open(path, why, whysize);
	if (!follow)
		return NULL;
	struct vga_filter *f = vga_filter_new(plan);
	vga_filter_since(f, ans->since);
	struct vgq_build_options bo = {.keep = vga_filter_keep,
	                               .keep_arg = f,
	                               .ends_without_begin = vga_plan_end_only(plan),
	                               .end_since = vga_filter_end_since};
	struct vgq_delta *d = vgq_delta_new(q, vgt_follow_trace(follow), &bo, o, why, whysize);
	if (!d) {
		vga_filter_free(f);
		vgt_follow_close(follow);
		return NULL;
	}
	struct watch_follow *w = calloc(1, sizeof *w);
	if (!w)
		abort();
	*w = (struct watch_follow){.follow = follow,
	                           .filter = f,
	                           .delta = d,
	                           .pr = pr,
	                           .o = o,
	                           .plan = plan,
	                           .clock_origin = ans->clock_origin,
	                           .lateness = lateness};
	return w;
}

/* The plan's clocks tick where the subjects were told to sample (as watch_answer sets
 * them): known once the first image is. */
static void set_clock(struct watch_follow *w)
{
	struct vgt_trace *t = vgt_follow_trace(w->follow);
	if (w->clock_set || !vgt_image_count(t))
		return;
	int64_t origin = INT64_MIN;
	if (w->clock_origin)
		origin = vgt_image_at(t, 0)->clock_offset_ns + (int64_t)w->clock_origin;
	vga_filter_clock(w->filter, w->o->tick_ns > 0 ? w->o->tick_ns : 1000000000, origin);
	w->clock_set = true;
}

int watch_follow_step(struct watch_follow *w, bool final)
{
	watch_timing_start(&w->timings);
	int64_t now = vgt_follow_now(w->follow);
	int64_t until = final ? VGT_FOLLOW_END : now == INT64_MIN ? INT64_MIN : now - w->lateness;
	vgt_follow_poll(w->follow, until);
	set_clock(w);
	const struct vgt_event *ev;
	while ((ev = vgt_follow_next(w->follow))) {
		vgq_delta_feed(w->delta, ev);
		w->timings.taking++;
	}
	struct vgq_delta_stats ds;
	vgq_delta_stats(w->delta, &ds);
	if (ds.events)
		watch_printer_origin(w->pr, ds.first);
	/* A relation the subject has not registered yet is no error before the end. */
	w->errors += vgq_delta_update(w->delta, final, emit_final, w, stderr);
	watch_timing_add(&w->timings);
	return w->failed ? -1 : 0;
}

int watch_follow_end(struct watch_follow *w, struct watch_answer *ans, char **stats_extra)
{
	vgq_delta_print_warnings(w->delta, "vigil watch", stderr);
	struct vgt_trace *t = vgt_follow_trace(w->follow);
	if (vgt_damage_total(t))
		vgt_damage_report(t, "vigil watch", "", stderr);
	struct vgq_delta_stats ds;
	vgq_delta_stats(w->delta, &ds);
	if (w->errors > ds.derived_errors) /* an analysis's error said why already */
		fprintf(stderr, "vigil watch: the subject's trace lacks what the query needs (its "
		                "sensors were never registered?)\n");
	ans->counts = vga_filter_counts(w->filter);
	const struct vga_plan *plan = w->plan;
	free(ans->per_alpha);
	ans->per_alpha = calloc(plan->n + 1, sizeof *ans->per_alpha);
	if (ans->per_alpha)
		memcpy(ans->per_alpha, vga_filter_per_alpha(w->filter),
		       plan->n * sizeof *ans->per_alpha);
	ans->events = ds.events;
	ans->first = ds.first;
	ans->last = ds.last;
	if (stats_extra) {
		struct vgt_follow_stats fs;
		vgt_follow_stats(w->follow, &fs);
		watch_stats_extra(stats_extra, "incremental", 0, &w->timings, &ds, &fs);
	}
	return w->failed || w->errors ? -1 : 0;
}

void watch_follow_free(struct watch_follow *w)
{
	if (!w)
		return;
	vgq_delta_free(w->delta);
	vga_filter_free(w->filter);
	vgt_follow_close(w->follow);
	free(w->timings.ns);
	free(w->timings.cpu_ns);
	free(w->timings.taken);
	free(w);
}
