/* vigil watch --replay: the plan against a full recording, read in updates of
 * --update-events events (hidden; default 65536), as a live monitor would take them.
 * The update network (query/delta.h) takes each event once and prints each answer when
 * it becomes final; a query it cannot take, or VIGIL_WATCH_REEVALUATE=1, answers the
 * whole query again over the prefix read at each update, as live snapshots do. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/watch.h"
#include "live/delta.h"
#include "trace/follow.h"
#include "trace/source.h"

#define DEFAULT_UPDATE_EVENTS 65536

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void watch_timing_start(struct watch_timings *t)
{
	t->wall0 = clock_ns(CLOCK_MONOTONIC);
	t->cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

void watch_timing_add(struct watch_timings *t)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->ns = realloc(t->ns, t->cap * sizeof *t->ns);
		t->cpu_ns = realloc(t->cpu_ns, t->cap * sizeof *t->cpu_ns);
		t->taken = realloc(t->taken, t->cap * sizeof *t->taken);
		if (!t->ns || !t->cpu_ns || !t->taken)
			abort();
	}
	t->taken[t->n] = t->taking;
	t->taking = 0;
	t->ns[t->n] = clock_ns(CLOCK_MONOTONIC) - t->wall0;
	t->cpu_ns[t->n++] = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - t->cpu0;
	watch_timing_start(t);
}

void watch_stats_extra(char **out, const char *how, uint64_t every, const struct watch_timings *t,
                       const struct vgq_delta_stats *ds, const struct vgt_follow_stats *fs)
{
	size_t len = 0;
	FILE *f = open_memstream(out, &len);
	if (!f)
		abort();
	fprintf(f, ",\"evaluation\":\"%s\",\"update_events\":%" PRIu64 ",\"update_ns\":[", how,
	        every);
	for (size_t i = 0; i < t->n; i++)
		fprintf(f, "%s%" PRId64, i ? "," : "", t->ns[i]);
	fprintf(f, "],\"update_cpu_ns\":[");
	for (size_t i = 0; i < t->n; i++)
		fprintf(f, "%s%" PRId64, i ? "," : "", t->cpu_ns[i]);
	fprintf(f, "],\"update_taken\":[");
	for (size_t i = 0; i < t->n; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", t->taken[i]);
	fprintf(f, "]");
	if (ds)
		fprintf(f,
		        ",\"state\":{\"kept\":%" PRIu64 ",\"peak\":%" PRIu64 ",\"dropped\":%" PRIu64
		        ",\"deltas\":%" PRIu64 ",\"events\":%" PRIu64 ",\"unbounded\":%s}",
		        ds->state, ds->state_peak, ds->dropped, ds->deltas, ds->events,
		        ds->unbounded ? "true" : "false");
	if (fs)
		fprintf(f,
		        ",\"follow\":{\"polls\":%" PRIu64 ",\"bytes_read\":%" PRIu64
		        ",\"events\":%" PRIu64 ",\"late\":%" PRIu64
		        ",\"images\":%zu,\"streams\":%zu}",
		        fs->polls, fs->bytes_read, fs->events, fs->late, fs->images, fs->streams);
	fclose(f);
}

struct emit_ctx {
	struct watch_printer *pr;
	bool failed;
};

static int emit_final(void *p, const struct vgq_relation *r)
{
	struct emit_ctx *c = p;
	if (watch_print(c->pr, r, true, 0) < 0) {
		fprintf(stderr, "vigil watch: writing the result: %s\n", strerror(errno));
		c->failed = true;
		return -1;
	}
	return 0;
}

static uint64_t count_events(struct vgt_trace *tr)
{
	struct vgt_merge *m = vgt_merge_open(tr);
	uint64_t n = 0;
	while (vgt_merge_next(m))
		n++;
	vgt_merge_close(m);
	return n;
}

/* The update network over the recording; 1 when the query's shape needs re-evaluation
 * (said on stderr), else the exit code. */
static int incremental(const struct watch_args *a, struct vgt_trace *tr,
                       const struct tquel_query *q, const struct vga_plan *plan,
                       const struct vgq_options *o, uint64_t every)
{
	struct vga_filter *f = vga_filter_new(plan);
	vga_filter_since(f, 0);
	vga_filter_clock(f, o->tick_ns > 0 ? o->tick_ns : 1000000000, INT64_MIN);
	struct vgq_build_options bo = {.keep = vga_filter_keep,
	                               .keep_arg = f,
	                               .ends_without_begin = vga_plan_end_only(plan),
	                               .end_since = vga_filter_end_since};
	char why[256];
	struct vgq_delta *d = vgq_delta_new(q, tr, &bo, o, why, sizeof why);
	if (!d) {
		if (!a->quiet)
			fprintf(stderr,
			        "vigil watch: answering by re-evaluation at each update: %s\n",
			        why);
		vga_filter_free(f);
		return -1;
	}
	struct watch_printer *pr = watch_printer_new(stdout, a->format, 0);
	struct emit_ctx ctx = {pr, false};
	struct watch_timings t = {0};
	size_t errors = 0;
	struct vgt_merge *m = vgt_merge_open(tr);
	const struct vgt_event *ev;
	uint64_t n = 0;
	watch_timing_start(&t);
	bool more = true;
	while (more && !ctx.failed && !errors) {
		more = (ev = vgt_merge_next(m)) != NULL;
		if (more) {
			vgq_delta_feed(d, ev);
			t.taking++;
			if (++n % every)
				continue;
		}
		struct vgq_delta_stats ds;
		vgq_delta_stats(d, &ds);
		if (ds.events)
			watch_printer_origin(pr, ds.first);
		errors += vgq_delta_update(d, !more, emit_final, &ctx, stderr);
		watch_timing_add(&t);
	}
	vgt_merge_close(m);
	vgq_delta_print_warnings(d, "vigil watch", stderr);
	if (errors)
		fprintf(stderr, "vigil watch: the recording lacks what the query needs\n");
	struct vgq_delta_stats ds;
	vgq_delta_stats(d, &ds);
	int rc = ctx.failed || errors ? 2 : vgt_damage_total(tr) ? 1 : 0;
	if (rc != 2 && a->stats) {
		struct watch_answer ans = {.counts = vga_filter_counts(f)};
		ans.per_alpha = (uint64_t *)vga_filter_per_alpha(f);
		char *extra = NULL;
		watch_stats_extra(&extra, "incremental", every, &t, &ds, NULL);
		watch_print_stats("replay", plan, &ans, watch_printed(pr), extra);
		free(extra);
	}
	free(t.ns);
	free(t.cpu_ns);
	free(t.taken);
	watch_printer_free(pr);
	vgq_delta_free(d);
	vga_filter_free(f);
	return rc;
}

/* Today's way, kept for comparison and for the shapes the network cannot take: the
 * whole query answered again over the prefix read at each update. */
static int reevaluate(const struct watch_args *a, struct vgt_trace *tr, const struct tquel_query *q,
                      const struct vga_plan *plan, const struct vgq_options *o, uint64_t every)
{
	struct watch_printer *pr = watch_printer_new(stdout, a->format, 0);
	struct watch_answer ans = {0};
	struct watch_timings t = {0};
	/* Without --update-events: one answer over the whole recording, as before. */
	uint64_t total = a->update_events ? count_events(tr) : 0;
	int rc = 0;
	for (uint64_t upto = every; rc == 0 && upto < total; upto += every) {
		watch_timing_start(&t);
		ans.max_events = upto;
		rc = watch_answer(a->replay, q, plan, o, pr, false, &ans);
		if (rc == 1)
			rc = 0; /* nothing readable or needed yet */
		watch_timing_add(&t);
	}
	if (rc == 0) {
		watch_timing_start(&t);
		ans.max_events = 0;
		rc = watch_answer(a->replay, q, plan, o, pr, true, &ans);
		watch_timing_add(&t);
	}
	if (rc == 0 && a->stats) {
		char *extra = NULL;
		watch_stats_extra(&extra, "re-evaluation", a->update_events ? every : 0, &t, NULL,
		                  NULL);
		watch_print_stats("replay", plan, &ans, watch_printed(pr), extra);
		free(extra);
	}
	watch_printer_free(pr);
	free(ans.per_alpha);
	free(t.ns);
	free(t.cpu_ns);
	free(t.taken);
	if (rc)
		return 2;
	return ans.partial ? 1 : 0;
}

int watch_replay(const struct watch_args *a, const struct tquel_query *q,
                 const struct vga_plan *plan, const struct vgq_options *o)
{
	char err[512];
	const char *path = a->replay;
	struct vgt_trace *tr = vgt_open_readable(&path, 1, err, sizeof err);
	if (!tr) {
		fprintf(stderr, "vigil watch: %s\n", err);
		return 2;
	}
	uint64_t every = a->update_events ? a->update_events : DEFAULT_UPDATE_EVENTS;
	const char *env = getenv("VIGIL_WATCH_REEVALUATE");
	int rc = -1;
	if (!(env && !strcmp(env, "1")))
		rc = incremental(a, tr, q, plan, o, every);
	if (rc < 0)
		rc = reevaluate(a, tr, q, plan, o, every);
	vgt_close(tr);
	return rc;
}
